// SPDX-License-Identifier: MIT
/*
 * Description: strict policy-spec parsing (policies/registry.c, rules in
 * policies/policy.h).  Every malformed form (empty item, whitespace,
 * "knob=", "=value", a knob given twice, unknown names) is refused with
 * -EINVAL by wb_policy_resolve() and uf_cache_open(), and the logged
 * message names the item and its position; accepted forms resolve to the
 * same spec string as before the parser was made strict.  plugin=PATH:
 * a missing file is -ENOENT, a file that is not a loadable shared object
 * or lacks uf_policy_plugin_init() is -ENOEXEC with dlerror()'s text
 * logged, one without the ABI symbol -ENOEXEC and one of another ABI
 * -EPROTO (its init never runs), and an init that fails passes its errno
 * on.  The shared objects
 * are built here from tiny sources with the system C compiler, in /tmp.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uflush.h"
#include "policies/policy.h"

/* ---- what uflush logged during the test ---- */

static char logbuf[16384];
static size_t loglen;

static void capture(void *priv, int level, const char *msg)
{
	(void)priv;
	(void)level;
	if (loglen < sizeof(logbuf))
		loglen += (size_t)snprintf(logbuf + loglen,
					   sizeof(logbuf) - loglen, "%s\n",
					   msg);
}

static void log_clear(void)
{
	loglen = 0;
	logbuf[0] = '\0';
}

/* ---- scratch files in /tmp, removed whatever happened ---- */

static char tmpdir[64];

static void spec_init(void)
{
	log_clear();
	uf_set_log_fn(capture, NULL);
}

static void spec_fini(void)
{
	char cmd[128];

	uf_set_log_fn(NULL, NULL);
	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmpdir);
		tmpdir[0] = '\0';
	}
}

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/uflush-policy-spec-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* The source tree: the test binary is in build/ (or build-asan/, ...). */
static void source_dir(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	snprintf(buf, len, "%s", dirname(dirname(exe)));
}

/*
 * Build tmpdir/NAME.so from @src with $CC (or cc) into @so; it may include
 * "policies/policy.h".  No compiler: the test is skipped (after removing
 * tmpdir: a skip runs no .fini).
 */
static void build_so(const char *name, const char *src, char *so, size_t len)
{
	const char *cc = getenv("CC");
	char c[128], src_dir[PATH_MAX], cmd[PATH_MAX + 512];

	snprintf(c, sizeof(c), "%s/%s.c", tmpdir, name);
	snprintf(so, len, "%s/%s.so", tmpdir, name);
	write_file(c, src);
	source_dir(src_dir, sizeof(src_dir));
	snprintf(cmd, sizeof(cmd),
		 "%s -shared -fPIC -iquote '%s' -o '%s' '%s' 2>&1",
		 cc && *cc ? cc : "cc", src_dir, so, c);
	if (system(cmd) || access(so, R_OK)) {
		spec_fini();
		cr_skip_test("cannot build a test shared object with \"%s\"",
			     cmd);
	}
}

/* What UF_POLICY_PLUGIN_ABI defines, for the tiny plugins built here. */
#define STR_(x)	#x
#define STR(x)	STR_(x)
#define ABI_LINE(n)	"const unsigned int uf_policy_abi_version = " n ";\n"
#define ABI_OK		ABI_LINE(STR(UF_POLICY_ABI_VERSION))

/* Resolve @spec; return what it returned, the log in logbuf. */
static int resolve(const char *spec)
{
	struct wb_policy pol;
	int ret;

	log_clear();
	ret = wb_policy_resolve(spec, &pol);
	if (!ret)
		wb_policy_release(&pol);
	return ret;
}

/* ---- rejected forms ---- */

/*
 * Each reason with the specs that must be refused for it.  '|' is not
 * part of the spec: it marks where the item the message must name (with
 * its position) starts.
 */
static const struct {
	const char *why;
	const char *specs[7];
} bad[] = {
	{ "empty item", { "linux-3.2,|", "linux-3.2,|,nowait=v4",
			  "|,linux-3.2", "|", "|,", "kara-v4.2,nowait=v4,|" } },
	{ "nowait already given by item 2",
	  { "linux-3.2,nowait=v4,|nowait=v3b",
	    "linux-3.2,nowait=v4,|nowait=v4" } },
	{ "cutoff already given by item 2",
	  { "linux-3.2,cutoff=bg-all,requeue=riw,|cutoff=bg-all" } },
	{ "plugin already given by item 2",
	  { "linux-3.2,plugin=a.so,|plugin=b.so" } },
	{ "no value after '='", { "linux-3.2,|nowait=", "linux-3.2,|plugin=" } },
	{ "no knob before '='", { "linux-3.2,|=v4", "linux-3.2,|=" } },
	{ "whitespace", { "| linux-3.2", "|linux-3.2 ",
			  "linux-3.2,| nowait=v4", "linux-3.2,|nowait =v4",
			  "linux-3.2,|nowait=v4\t",
			  "linux-3.2,nowait=v4,|requeue=p2-v4\n" } },
	{ "unknown preset", { "|linux-9.9", "|nowait=v4" } },
	{ "unknown nowait value", { "linux-3.2,|nowait=v9" } },
	{ "unknown knob", { "linux-3.2,|bogus=1" } },
	{ "not knob=value", { "linux-3.2,|nowait" } },
};

#define NR_BAD (sizeof(bad) / sizeof(bad[0]))
#define NR_SPECS (sizeof(bad[0].specs) / sizeof(bad[0].specs[0]))

struct bad_spec {
	char spec[128];		/* without the '|' */
	int pos;		/* 1-based */
	char item[64];
};

/* Split a marked spec of bad[] into the spec, the item and its position. */
static void unmark(const char *marked, struct bad_spec *b)
{
	const char *bar = strchr(marked, '|'), *p;

	cr_assert_not_null(bar, "no '|' in \"%s\"", marked);
	snprintf(b->spec, sizeof(b->spec), "%.*s%s", (int)(bar - marked),
		 marked, bar + 1);
	b->pos = 1;
	for (p = marked; p < bar; p++)
		b->pos += *p == ',';
	snprintf(b->item, sizeof(b->item), "%.*s",
		 (int)strcspn(bar + 1, ","), bar + 1);
}

Test(policy_spec, malformed_forms_are_einval_naming_the_item,
     .init = spec_init, .fini = spec_fini)
{
	struct bad_spec b;
	char want[128];
	size_t i, j;
	int ret;

	for (i = 0; i < NR_BAD; i++) {
		for (j = 0; j < NR_SPECS && bad[i].specs[j]; j++) {
			unmark(bad[i].specs[j], &b);
			ret = resolve(b.spec);
			cr_assert_eq(ret, -EINVAL, "\"%s\" gave %d",
				     b.spec, ret);
			snprintf(want, sizeof(want), "item %d \"%s\": %s",
				 b.pos, b.item, bad[i].why);
			cr_assert_not_null(strstr(logbuf, want),
					   "\"%s\": the log does not say %s: %s",
					   b.spec, want, logbuf);
		}
	}
}

/* The message says which earlier item set the knob. */
Test(policy_spec, a_repeat_names_the_first_item, .init = spec_init,
     .fini = spec_fini)
{
	cr_assert_eq(resolve("kara-v4.2,requeue=riw,cutoff=fixed,"
			     "requeue=base"), -EINVAL);
	cr_assert_not_null(strstr(logbuf, "item 4 \"requeue=base\""),
			   "%s", logbuf);
	cr_assert_not_null(strstr(logbuf, "given by item 2"), "%s", logbuf);
}

Test(policy_spec, cache_open_refuses_malformed_forms, .init = spec_init,
     .fini = spec_fini)
{
	struct uf_cache_config cfg;
	struct uf_cache *c;
	struct bad_spec b;
	size_t i, j;
	int ret;

	for (i = 0; i < NR_BAD; i++) {
		for (j = 0; j < NR_SPECS && bad[i].specs[j]; j++) {
			unmark(bad[i].specs[j], &b);
			uf_cache_config_init(&cfg);
			cfg.nr_pages = 64;
			cfg.policy = b.spec;
			c = NULL;
			ret = uf_cache_open(&cfg, &c);
			cr_assert_eq(ret, -EINVAL,
				     "uf_cache_open(\"%s\") = %d", b.spec, ret);
			cr_assert_null(c);
		}
	}
}

/* ---- accepted forms: the strings they resolved to before ---- */

Test(policy_spec, accepted_forms_resolve_as_before, .init = spec_init,
     .fini = spec_fini)
{
	static const struct {
		const char *spec, *want;
	} ok[] = {
		{ NULL, "mainline: nowait=mainline requeue=mainline "
		  "skipped=removed sbbusy=redirty cutoff=bg-all "
		  "kupdate=fixed progress=pages"
		  " bgthresh=bdi chunk=bandwidth skipcount=mainline wcpcap=cap bdp=mainline reclaim=mainline timer=wheel" },
		{ "linux-3.3", "linux-3.3: nowait=b0 requeue=base "
		  "skipped=redirty sbbusy=redirty cutoff=bg-all "
		  "kupdate=fixed progress=pages"
		  " bgthresh=bdi chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.3 reclaim=3.2 timer=cascade" },
		/* the preset's own value: not a repeat */
		{ "linux-3.3,cutoff=bg-all", "linux-3.3: nowait=b0 "
		  "requeue=base skipped=redirty sbbusy=redirty "
		  "cutoff=bg-all kupdate=fixed progress=pages"
		  " bgthresh=bdi chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.3 reclaim=3.2 timer=cascade" },
		{ "linux-3.1,nowait=v3b,requeue=p2-v3", "linux-3.1: "
		  "nowait=v3b requeue=p2-v3 skipped=redirty sbbusy=redirty "
		  "cutoff=fixed kupdate=fixed progress=pages"
		  " bgthresh=global chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.1 reclaim=legacy timer=cascade" },
		{ "kara-v4.2,nowait=v4", "kara-v4.2: nowait=v4 "
		  "requeue=p2-v4 skipped=removed sbbusy=requeue cutoff=v4.2 "
		  "kupdate=fixed progress=pages"
		  " bgthresh=global chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade" },
		{ "wu-riw,nowait=v4.2,requeue=riw-sync,progress=pages",
		  "wu-riw: nowait=v4.2 requeue=riw-sync "
		  "skipped=requeue-wait sbbusy=requeue-wait cutoff=bg-all "
		  "kupdate=early progress=pages"
		  " bgthresh=bdi chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade" },
		{ "mainline,skipped=redirty,sbbusy=requeue-wait,cutoff=v4.2,"
		  "kupdate=early", "mainline: nowait=mainline "
		  "requeue=mainline skipped=redirty sbbusy=requeue-wait "
		  "cutoff=v4.2 kupdate=early progress=pages"
		  " bgthresh=bdi chunk=bandwidth skipcount=mainline wcpcap=cap bdp=mainline reclaim=mainline timer=wheel" },
	};
	struct wb_policy pol;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		log_clear();
		ret = wb_policy_resolve(ok[i].spec, &pol);
		cr_assert_eq(ret, 0, "\"%s\": %d, log: %s",
			     ok[i].spec ? ok[i].spec : "(null)", ret, logbuf);
		cr_assert_str_eq(pol.spec, ok[i].want);
		cr_assert_eq(loglen, 0, "resolving logged: %s", logbuf);
		wb_policy_release(&pol);
	}
}

/* ---- plugin=PATH errors ---- */

Test(policy_spec, plugin_missing_file_is_enoent, .init = spec_init,
     .fini = spec_fini)
{
	char spec[256];

	make_tmpdir();
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s/none.so", tmpdir);
	cr_assert_eq(resolve(spec), -ENOENT, "log: %s", logbuf);
	cr_assert_not_null(strstr(logbuf, "none.so"), "%s", logbuf);
	/* a bare name is searched in the library path: not there either */
	cr_assert_eq(resolve("linux-3.2,plugin=uflush-no-such-plugin.so"),
		     -ENOENT, "log: %s", logbuf);
}

Test(policy_spec, plugin_text_file_is_enoexec, .init = spec_init,
     .fini = spec_fini)
{
	char path[128], spec[256];

	make_tmpdir();
	snprintf(path, sizeof(path), "%s/notes.so", tmpdir);
	/* longer than an ELF header, so dlopen() reads it and says why */
	write_file(path, "This is a text file, not a shared object: it has "
		   "no ELF header, so dlopen() must refuse it.\n");
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", path);
	cr_assert_eq(resolve(spec), -ENOEXEC, "log: %s", logbuf);
	/* dlerror() names the file and why */
	cr_assert_not_null(strstr(logbuf, "cannot be loaded"), "%s", logbuf);
	cr_assert_not_null(strstr(logbuf, "ELF"), "%s", logbuf);

	/* a directory exists too, and is no plugin either */
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", tmpdir);
	cr_assert_eq(resolve(spec), -ENOEXEC, "log: %s", logbuf);
}

Test(policy_spec, plugin_without_init_symbol_is_enoexec, .init = spec_init,
     .fini = spec_fini)
{
	char so[128], spec[256];

	make_tmpdir();
	build_so("nosym", ABI_OK
		 "int uflush_test_not_the_init(void) { return 0; }\n",
		 so, sizeof(so));
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", so);
	cr_assert_eq(resolve(spec), -ENOEXEC, "log: %s", logbuf);
	cr_assert_not_null(strstr(logbuf, "has no " UF_POLICY_PLUGIN_SYMBOL),
			   "%s", logbuf);
	/* dlerror()'s text follows */
	cr_assert_not_null(strstr(logbuf, "(): "), "%s", logbuf);
}

Test(policy_spec, plugin_init_error_passes_through, .init = spec_init,
     .fini = spec_fini)
{
	char so[128], spec[256];

	make_tmpdir();
	build_so("eperm", ABI_OK "int uf_policy_plugin_init(void *pol)\n"
		 "{ (void)pol; return -1; /* -EPERM */ }\n", so, sizeof(so));
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", so);
	cr_assert_eq(resolve(spec), -EPERM, "log: %s", logbuf);
	cr_assert_not_null(strstr(logbuf, "failed"), "%s", logbuf);

	/* not a negative errno: refused as -EINVAL, not returned as is */
	build_so("positive", ABI_OK "int uf_policy_plugin_init(void *pol)\n"
		 "{ (void)pol; return 3; }\n", so, sizeof(so));
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", so);
	cr_assert_eq(resolve(spec), -EINVAL, "log: %s", logbuf);
}

/* The same plugin that fails loads when its init succeeds: the path works. */
Test(policy_spec, plugin_that_succeeds_loads, .init = spec_init,
     .fini = spec_fini)
{
	char so[128], spec[256], want[256];
	struct wb_policy pol;

	make_tmpdir();
	build_so("ok", ABI_OK "int uf_policy_plugin_init(void *pol)\n"
		 "{ (void)pol; return 0; }\n", so, sizeof(so));
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", so);
	cr_assert_eq(wb_policy_resolve(spec, &pol), 0, "log: %s", logbuf);
	/* it changed nothing, and the resolved spec says so */
	snprintf(want, sizeof(want), " plugin=%s(none)", so);
	cr_assert_not_null(strstr(pol.spec, want), "%s", pol.spec);
	cr_assert_not_null(pol.plugin_handle);
	wb_policy_release(&pol);
}

/*
 * The plugin ABI (policy.h): no uf_policy_abi_version is -ENOEXEC, another
 * number -EPROTO, and in both cases the init never runs (it would write
 * into a struct wb_policy of another layout).  The init here would fail
 * with -EPERM, so a run init shows as -EPERM.
 */
#define INIT_EPERM "int uf_policy_plugin_init(void *pol)\n" \
		   "{ (void)pol; return -1; }\n"

Test(policy_spec, plugin_without_abi_is_enoexec, .init = spec_init,
     .fini = spec_fini)
{
	char so[128], spec[256];

	make_tmpdir();
	build_so("noabi", INIT_EPERM, so, sizeof(so));
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", so);
	cr_assert_eq(resolve(spec), -ENOEXEC, "log: %s", logbuf);
	cr_assert_not_null(strstr(logbuf, "has no " UF_POLICY_ABI_SYMBOL),
			   "%s", logbuf);
	cr_assert_not_null(strstr(logbuf, "UF_POLICY_PLUGIN_ABI"), "%s",
			   logbuf);
}

Test(policy_spec, plugin_of_another_abi_is_eproto, .init = spec_init,
     .fini = spec_fini)
{
	char so[128], spec[256], want[128];

	make_tmpdir();
	build_so("abi999", ABI_LINE("999") INIT_EPERM, so, sizeof(so));
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", so);
	cr_assert_eq(resolve(spec), -EPROTO, "log: %s", logbuf);
	/* the message gives both numbers */
	snprintf(want, sizeof(want), "built for policy ABI 999, this uflush has %u",
		 UF_POLICY_ABI_VERSION);
	cr_assert_not_null(strstr(logbuf, want), "%s", logbuf);
	/* one below ours is refused as well: no "newer is fine" */
	build_so("abi0", ABI_LINE("0") INIT_EPERM, so, sizeof(so));
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", so);
	cr_assert_eq(resolve(spec), -EPROTO, "log: %s", logbuf);
}

/* A plugin that replaces two hooks and a flag: each knob says plugin. */
Test(policy_spec, resolved_spec_names_the_replaced_hooks, .init = spec_init,
     .fini = spec_fini)
{
	char so[128], spec[256], want[512];
	struct wb_policy pol;

	make_tmpdir();
	build_so("three", "#include <stdbool.h>\n#include \"policies/policy.h\"\n"
		 "UF_POLICY_PLUGIN_ABI;\n"
		 "static void rq(struct inode *i, struct bdi_writeback *wb,\n"
		 "	struct writeback_control *wbc, bool w, unsigned long d)\n"
		 "{ (void)i; (void)wb; (void)wbc; (void)w; (void)d; }\n"
		 "static void co(struct bdi_writeback *wb,\n"
		 "	struct wb_writeback_work *w, struct wb_loop_state *st)\n"
		 "{ (void)wb; (void)w; (void)st; }\n"
		 "int uf_policy_plugin_init(struct wb_policy *pol)\n"
		 "{ pol->requeue = rq; pol->cutoff = co;\n"
		 "  pol->chunk_fixed = !pol->chunk_fixed; return 0; }\n",
		 so, sizeof(so));
	snprintf(spec, sizeof(spec), "linux-3.2,plugin=%s", so);
	cr_assert_eq(wb_policy_resolve(spec, &pol), 0, "log: %s", logbuf);
	snprintf(want, sizeof(want), "linux-3.2: nowait=b0 requeue=plugin "
		 "skipped=redirty sbbusy=redirty cutoff=plugin kupdate=fixed "
		 "progress=pages bgthresh=bdi chunk=plugin skipcount=3.2 "
		 "wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade plugin=");
	cr_assert_eq(strncmp(pol.spec, want, strlen(want)), 0, "%s", pol.spec);
	snprintf(want, sizeof(want), "plugin=%s(requeue,cutoff,chunk)", so);
	cr_assert_str_eq(strstr(pol.spec, " plugin=") + 1, want);
	wb_policy_release(&pol);
}
