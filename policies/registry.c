// SPDX-License-Identifier: MIT
/*
 * policies/registry.c - named presets and knob=value overrides resolved
 * into one struct wb_policy (see policy.h for the spec syntax), and
 * policies loaded from shared objects.
 *
 * A spec is resolved left to right: the preset sets every knob, each
 * override replaces one (each knob at most once: policy.h has the
 * rules), a plugin (of this ABI) may then change any hook.  The resolved
 * spec (every knob=value, knob=plugin where the plugin changed it) is
 * kept in pol->spec so that each run can record exactly what it ran.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "policies/policy.h"
#include "kernel/printk.h"

#define V(x) extern const struct wb_variant wb_variant_##x;
V(nowait_b0) V(nowait_v3a) V(nowait_v3b) V(nowait_v4) V(nowait_v4_r7)
V(nowait_v41) V(nowait_v42) V(nowait_mainline)
V(requeue_base) V(requeue_p2_v3) V(requeue_requeue4) V(requeue_p2_v4)
V(requeue_riw) V(requeue_riw_sync) V(requeue_mainline)
V(skipped_redirty) V(skipped_requeue) V(skipped_requeue_wait)
V(skipped_removed)
V(sbbusy_redirty) V(sbbusy_requeue) V(sbbusy_requeue_wait)
V(cutoff_fixed) V(cutoff_v42) V(cutoff_bg_all)
V(kupdate_fixed) V(kupdate_early) V(progress_pages) V(progress_total)
V(bgthresh_global) V(bgthresh_bdi) V(chunk_fixed) V(chunk_bandwidth)
V(skipcount_32) V(skipcount_mainline) V(wcpcap_stock) V(wcpcap_cap)
V(bdp_31) V(bdp_32) V(bdp_33) V(bdp_mainline)
V(reclaim_legacy) V(reclaim_32) V(reclaim_pageout) V(reclaim_mainline)
V(timer_cascade) V(timer_wheel)
#undef V

static const struct wb_variant *const variants[] = {
	&wb_variant_nowait_b0, &wb_variant_nowait_v3a, &wb_variant_nowait_v3b,
	&wb_variant_nowait_v4, &wb_variant_nowait_v4_r7,
	&wb_variant_nowait_v41, &wb_variant_nowait_v42,
	&wb_variant_nowait_mainline,
	&wb_variant_requeue_base, &wb_variant_requeue_p2_v3,
	&wb_variant_requeue_requeue4, &wb_variant_requeue_p2_v4,
	&wb_variant_requeue_riw, &wb_variant_requeue_riw_sync,
	&wb_variant_requeue_mainline,
	&wb_variant_skipped_redirty, &wb_variant_skipped_requeue,
	&wb_variant_skipped_requeue_wait, &wb_variant_skipped_removed,
	&wb_variant_sbbusy_redirty, &wb_variant_sbbusy_requeue,
	&wb_variant_sbbusy_requeue_wait,
	&wb_variant_cutoff_fixed, &wb_variant_cutoff_v42,
	&wb_variant_cutoff_bg_all,
	&wb_variant_kupdate_fixed, &wb_variant_kupdate_early,
	&wb_variant_progress_pages, &wb_variant_progress_total,
	&wb_variant_bgthresh_global, &wb_variant_bgthresh_bdi,
	&wb_variant_chunk_fixed, &wb_variant_chunk_bandwidth,
	&wb_variant_skipcount_32, &wb_variant_skipcount_mainline,
	&wb_variant_wcpcap_stock, &wb_variant_wcpcap_cap,
	&wb_variant_bdp_31, &wb_variant_bdp_32, &wb_variant_bdp_33,
	&wb_variant_bdp_mainline,
	&wb_variant_reclaim_legacy, &wb_variant_reclaim_32,
	&wb_variant_reclaim_pageout, &wb_variant_reclaim_mainline,
	&wb_variant_timer_cascade, &wb_variant_timer_wheel,
};

#define NR_VARIANTS (sizeof(variants) / sizeof(variants[0]))

static const char *const knobs[] = {
	"nowait", "requeue", "skipped", "sbbusy", "cutoff", "kupdate",
	"progress", "bgthresh", "chunk", "skipcount", "wcpcap", "bdp",
	"reclaim", "timer",
};

#define NR_KNOBS (sizeof(knobs) / sizeof(knobs[0]))

struct preset {
	const char *name;
	const char *what;
	const char *knobs;	/* values in the order of knobs[] */
	const char *tree;	/* the source it was checked against */
	const char *alias_of;	/* an alias: that preset's knobs */
};

/*
 * Each kernel preset was checked knob by knob against the source its
 * .tree names: fs/fs-writeback.c (wb_writeback, writeback_sb_inodes,
 * __writeback_inodes_wb, writeback_single_inode / requeue_inode,
 * over_bground_thresh / wb_over_bg_thresh, writeback_chunk_size) and
 * mm/page-writeback.c (write_cache_pages / writeback_iter,
 * redirty_page_for_writepage / folio_redirty_for_writepage).  wcpcap is
 * ext4's (seed 004, 2.6.34): every kernel named here has the cap.
 * The patch-series presets follow the seed lines they cite.
 * reclaim: 3.2.41 mm/vmscan.c (shrink_page_list, shrink_inactive_list,
 * do_try_to_free_pages) for linux-3.2; linux-3.1 is the pageout() path
 * before Mel Gorman's 2011 series (policies/reclaim-legacy.c); linux-3.3
 * and the patch series take 3.2's (not checked against 3.3's source);
 * linux-6.18 per policies/reclaim-mainline.c.  linux-6.18 was checked
 * function by function: docs/linux-6.18.md lists what differs.
 */
#define TREE_31		"Linux 3.1.10 (kernel.org release tarball; no public git tree located)"
#define TREE_32		"Linux 3.2.41: GitHub nydw/linux-3.2 @0c8b528238e2, files under source/"
#define TREE_33		"Linux 3.3.0: GitHub SleepyRabbit/arm-linux-3.3 @6378de370416, files under linux-3.3-fa/"
#define TREE_618	"Linux 6.18.35: GitHub leftymods/linux-6.18.y @40a9e9f43d44 (2026-06-29; mm/ and fs/ as imported in 02ebe6b2e)"

static const struct preset presets[] = {
	/*
	 * 3.1.10: wb_writeback (older_than_this moved for kupdate only; no
	 * progress: inode_wait_for_writeback on the oldest b_more_io),
	 * writeback_single_inode (base), writeback_sb_inodes (pages_skipped
	 * -> redirty_tail), __writeback_inodes_wb (grab_super_passive ->
	 * redirty_tail), over_bground_thresh(void), writeback_chunk_size
	 * (bandwidth); write_cache_pages + redirty_page_for_writepage.
	 */
	{ "linux-3.1", "3.1.10 fs-writeback.c: before seeds 000 and 001",
	  "nowait=b0,requeue=base,skipped=redirty,sbbusy=redirty,"
	  "cutoff=fixed,kupdate=fixed,progress=pages,bgthresh=global,"
	  "chunk=bandwidth,skipcount=3.2,wcpcap=cap,bdp=3.1"
	  ",reclaim=legacy,timer=cascade", TREE_31, NULL },
	/* 3.2.41: the same functions as 3.1.10 but over_bground_thresh(bdi) */
	{ "linux-3.2", "3.2.41 fs-writeback.c: 3.1 + per-bdi background threshold (seed 001)",
	  "nowait=b0,requeue=base,skipped=redirty,sbbusy=redirty,"
	  "cutoff=fixed,kupdate=fixed,progress=pages,bgthresh=bdi,"
	  "chunk=bandwidth,skipcount=3.2,wcpcap=cap,bdp=3.2"
	  ",reclaim=3.2,timer=cascade", TREE_32, NULL },
	/*
	 * 3.3: 3.2.41 but wb_writeback's "else if (for_background)" cutoff;
	 * mm/page-writeback.c's balance_dirty_pages (think time, min pause,
	 * dirty_throttle_leaks, ...: bdp=3.3).
	 */
	{ "linux-3.3", "3.3 fs-writeback.c: 3.2 + bg-all (seed 000 L3715-3736)",
	  "nowait=b0,requeue=base,skipped=redirty,sbbusy=redirty,"
	  "cutoff=bg-all,kupdate=fixed,progress=pages,bgthresh=bdi,"
	  "chunk=bandwidth,skipcount=3.2,wcpcap=cap,bdp=3.3"
	  ",reclaim=3.2,timer=cascade", TREE_33, NULL },
	{ "kara-v4.2", "Jan Kara's latest: P1-v4.2 + P2-v4 (L620-834, L3952-4092)",
	  "nowait=v4.2,requeue=p2-v4,skipped=removed,sbbusy=requeue,"
	  "cutoff=v4.2,kupdate=fixed,progress=pages,bgthresh=global,"
	  "chunk=bandwidth,skipcount=3.2,wcpcap=cap,bdp=3.2"
	  ",reclaim=3.2,timer=cascade", "seed 000 (docs/seeds.md) over Linux 3.2.41", NULL },
	{ "wu-riw", "Wu Fengguang's requeue_io_wait + kupdate-early + bg-all (L1834-2319)",
	  "nowait=b0,requeue=riw,skipped=requeue-wait,sbbusy=requeue-wait,"
	  "cutoff=bg-all,kupdate=early,progress=total,bgthresh=bdi,"
	  "chunk=bandwidth,skipcount=3.2,wcpcap=cap,bdp=3.2"
	  ",reclaim=3.2,timer=cascade", "seed 000 (docs/seeds.md) over Linux 3.2.41", NULL },
	/*
	 * 6.18.35: wb_writeback (bg-all taken at queue_io, wait once
	 * queued, inode_sleep_on_writeback), requeue_inode with
	 * dirtied_before, __writeback_single_inode / writeback_single_inode
	 * and I_SYNC_QUEUED (requeue=mainline), writeback_sb_inodes (I_SYNC
	 * passed over uncounted; no pages_skipped block; wrote less
	 * pages_skipped), super_trylock_shared -> redirty_tail,
	 * wb_over_bg_thresh, writeback_chunk_size, writeback_iter +
	 * folio_redirty_for_writepage.  bdp=mainline and reclaim=mainline
	 * are older than 6.18 in places: docs/linux-6.18.md, "to do".
	 */
	{ "linux-6.18", "6.18.35 requeue_inode, inode_sleep_on_writeback, wb_ throttle (differences: docs/linux-6.18.md)",
	  "nowait=mainline,requeue=mainline,skipped=removed,sbbusy=redirty,"
	  "cutoff=bg-all,kupdate=fixed,progress=pages,bgthresh=bdi,"
	  "chunk=bandwidth,skipcount=mainline,wcpcap=cap,bdp=mainline"
	  ",reclaim=mainline,timer=wheel", TREE_618, NULL },
	/* the newest checked version; a newer one moves the alias */
	{ "mainline", "alias of linux-6.18, the newest kernel checked",
	  NULL, NULL, "linux-6.18" },
};

#define NR_PRESETS (sizeof(presets) / sizeof(presets[0]))

const char *const wb_policy_presets[] = {
	"linux-3.1", "linux-3.2", "linux-3.3", "kara-v4.2", "wu-riw",
	"linux-6.18", "mainline", NULL,
};

static const struct wb_variant *find_variant(const char *knob,
					     const char *value)
{
	size_t i;

	for (i = 0; i < NR_VARIANTS; i++)
		if (!strcmp(variants[i]->knob, knob) &&
		    !strcmp(variants[i]->value, value))
			return variants[i];
	return NULL;
}

static const struct preset *find_preset(const char *name)
{
	size_t i;

	for (i = 0; i < NR_PRESETS; i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}

/* The preset whose knobs @p stands for: itself, or what it is an alias of. */
static const struct preset *preset_target(const struct preset *p)
{
	return p->alias_of ? find_preset(p->alias_of) : p;
}

/* plugin= counts as a knob for the "given twice" rule: slot NR_KNOBS. */
#define KNOB_PLUGIN	((int)NR_KNOBS)

/* Index of the knob named by the first @len chars of @name, or -1. */
static int knob_index(const char *name, size_t len)
{
	size_t i;

	if (len == 6 && !strncmp(name, "plugin", 6))
		return KNOB_PLUGIN;
	for (i = 0; i < NR_KNOBS; i++)
		if (strlen(knobs[i]) == len && !strncmp(knobs[i], name, len))
			return (int)i;
	return -1;
}

static void values_of(const char *knob, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < NR_VARIANTS && n < len; i++)
		if (!strcmp(variants[i]->knob, knob))
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      n ? " " : "", variants[i]->value);
}

/* A spec being resolved: what each knob is, and which item set it. */
struct spec_parse {
	const char *spec;			/* as the caller gave it */
	const char *choice[NR_KNOBS];		/* value per knob */
	int given[NR_KNOBS + 1];		/* item that set it; 0: preset */
	const char *plugin;
};

/*
 * Refuse item @pos (1-based) of the spec: the message names the item, its
 * position and why, then the whole spec.
 */
__attribute__((format(printf, 4, 5)))
static int bad_item(const struct spec_parse *sp, int pos, const char *item,
		    const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pr_err("policy: item %d \"%s\": %s (in \"%s\")", pos, item, why,
	       sp->spec);
	return -EINVAL;
}

/*
 * Before a knob's variant applies: the members it sets beside its hook
 * go back to their 3.x value, so that "mainline,requeue=base" is base's
 * requeue on 3.x's inode path, not half of 6.18's.
 */
static void reset_knob(struct wb_policy *pol, const char *knob)
{
	if (!strcmp(knob, "requeue"))
		pol->inode_wb_mainline = false;
	else if (!strcmp(knob, "nowait"))
		pol->wb_loop_mainline = false;
}

/* The preset's own knob list: trusted, every item known. */
static void apply_preset(struct wb_policy *pol, struct spec_parse *sp,
			 const struct preset *p)
{
	char buf[WB_POLICY_SPEC_LEN], *item, *eq, *save = NULL;
	const struct wb_variant *v;

	/* an alias keeps its own name in the spec: "mainline: ..." */
	snprintf(pol->name, sizeof(pol->name), "%s", p->name);
	snprintf(buf, sizeof(buf), "%s", preset_target(p)->knobs);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		eq = strchr(item, '=');
		*eq = '\0';
		v = find_variant(item, eq + 1);
		reset_knob(pol, v->knob);
		v->apply(pol);
		sp->choice[knob_index(item, strlen(item))] = v->value;
	}
}

/* Item 1: the preset. */
static int parse_preset(struct wb_policy *pol, struct spec_parse *sp,
			const char *item)
{
	const struct preset *p = find_preset(item);

	if (!p)
		return bad_item(sp, 1, item,
				"unknown preset (valid: linux-3.1 linux-3.2 linux-3.3 kara-v4.2 wu-riw linux-6.18 mainline)");
	apply_preset(pol, sp, p);
	return 0;
}

/* Items 2...: knob=value, each knob at most once, plugin= kept for last. */
static int parse_knob(struct wb_policy *pol, struct spec_parse *sp, int pos,
		      const char *item)
{
	const char *eq = strchr(item, '=');
	const struct wb_variant *v;
	char vals[256];
	int k;

	if (!eq)
		return bad_item(sp, pos, item, "not knob=value");
	if (eq == item)
		return bad_item(sp, pos, item, "no knob before '='");
	if (!eq[1])
		return bad_item(sp, pos, item, "no value after '='");
	k = knob_index(item, (size_t)(eq - item));
	if (k < 0)
		return bad_item(sp, pos, item,
				"unknown knob (valid: nowait requeue skipped sbbusy cutoff kupdate progress bgthresh chunk skipcount wcpcap bdp reclaim plugin)");
	if (sp->given[k])
		return bad_item(sp, pos, item, "%.*s already given by item %d",
				(int)(eq - item), item, sp->given[k]);
	sp->given[k] = pos;
	if (k == KNOB_PLUGIN) {
		sp->plugin = eq + 1;
		return 0;
	}
	v = find_variant(knobs[k], eq + 1);
	if (!v) {
		values_of(knobs[k], vals, sizeof(vals));
		return bad_item(sp, pos, item, "unknown %s value (valid: %s)",
				knobs[k], vals);
	}
	reset_knob(pol, v->knob);
	v->apply(pol);
	sp->choice[k] = v->value;
	return 0;
}

static int parse_item(struct wb_policy *pol, struct spec_parse *sp, int pos,
		      const char *item)
{
	if (!*item)
		return bad_item(sp, pos, item, "empty item");
	if (strpbrk(item, " \t\n\v\f\r"))
		return bad_item(sp, pos, item, "whitespace in an item");
	if (pos == 1)
		return parse_preset(pol, sp, item);
	return parse_knob(pol, sp, pos, item);
}

/* Split @buf (a copy of the spec) on every ',': empty items are items. */
static int parse_spec(struct wb_policy *pol, struct spec_parse *sp, char *buf)
{
	char *item = buf, *comma;
	int pos, ret;

	for (pos = 1; item; pos++) {
		comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		ret = parse_item(pol, sp, pos, item);
		if (ret)
			return ret;
		item = comma ? comma + 1 : NULL;
	}
	return 0;
}

/*
 * The plugin's UF_POLICY_ABI_SYMBOL must be this tree's ABI: a plugin
 * built against another layout of struct wb_policy would write hooks
 * into the wrong members.  None: -ENOEXEC; another number: -EPROTO.
 */
static int check_plugin_abi(void *h, const char *path)
{
	const unsigned int *abi;

	dlerror();
	abi = dlsym(h, UF_POLICY_ABI_SYMBOL);
	if (!abi) {
		pr_err("policy: plugin %s has no %s: not built with UF_POLICY_PLUGIN_ABI; rebuild it against this uflush (policy ABI %u)",
		       path, UF_POLICY_ABI_SYMBOL, UF_POLICY_ABI_VERSION);
		return -ENOEXEC;
	}
	if (*abi != UF_POLICY_ABI_VERSION) {
		pr_err("policy: plugin %s was built for policy ABI %u, this uflush has %u: rebuild it against this uflush",
		       path, *abi, UF_POLICY_ABI_VERSION);
		return -EPROTO;
	}
	return 0;
}

/* Run the plugin's init; a positive return is refused as -EINVAL. */
static int run_plugin_init(void *h, const char *path, struct wb_policy *pol)
{
	uf_policy_plugin_init_t init;
	const char *why;
	int ret;

	dlerror();
	*(void **)&init = dlsym(h, UF_POLICY_PLUGIN_SYMBOL);
	if (!init) {
		why = dlerror();
		pr_err("policy: plugin %s has no %s(): %s", path,
		       UF_POLICY_PLUGIN_SYMBOL, why ? why : "symbol is NULL");
		return -ENOEXEC;
	}
	ret = init(pol);
	if (ret > 0) {
		pr_err("policy: plugin %s: %s() returned %d, not a negative errno",
		       path, UF_POLICY_PLUGIN_SYMBOL, ret);
		return -EINVAL;
	}
	if (ret)
		pr_err("policy: plugin %s: %s() failed: %s", path,
		       UF_POLICY_PLUGIN_SYMBOL, strerror(-ret));
	return ret;
}

/*
 * Load a plugin and let it change the policy.  A missing file is
 * -ENOENT; one dlopen() refuses, or without the init symbol or the ABI
 * symbol, -ENOEXEC; another ABI, -EPROTO; the init's own error is passed
 * on.
 */
static int load_plugin(struct wb_policy *pol, const char *path)
{
	struct stat st;
	void *h;
	int ret;

	/* with a '/', dlopen() opens exactly that file: see if it is there */
	if (strchr(path, '/') && stat(path, &st)) {
		ret = -errno;
		pr_err("policy: plugin %s: %s", path, strerror(-ret));
		return ret;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pr_err("policy: plugin %s cannot be loaded: %s", path,
		       dlerror());
		/* without a '/' it was searched for in the library path */
		return strchr(path, '/') ? -ENOEXEC : -ENOENT;
	}
	ret = check_plugin_abi(h, path);
	if (!ret)
		ret = run_plugin_init(h, path, pol);
	if (ret) {
		dlclose(h);
		return ret;
	}
	if (pol->plugin_handle)
		dlclose(pol->plugin_handle);
	pol->plugin_handle = h;
	return 0;
}

/*
 * Which knobs' members differ between @a (before the plugin) and @b:
 * set[k] for knob k.  Each member of struct wb_policy belongs to one knob.
 */
static void knobs_changed(const struct wb_policy *a, const struct wb_policy *b,
			  bool *set)
{
#define DIFF(knob, member)						\
	do {								\
		if (a->member != b->member)				\
			set[knob_index(knob, strlen(knob))] = true;	\
	} while (0)
	DIFF("nowait", no_progress);
	DIFF("nowait", wb_loop_mainline);
	DIFF("requeue", requeue);
	DIFF("requeue", inode_wb_mainline);
	DIFF("skipped", pages_skipped);
	DIFF("sbbusy", super_busy);
	DIFF("cutoff", cutoff);
	DIFF("kupdate", kupdate_early);
	DIFF("progress", return_total_progress);
	DIFF("bgthresh", bgthresh_bdi);
	DIFF("chunk", chunk_fixed);
	DIFF("skipcount", skipcount_mainline);
	DIFF("wcpcap", wcp_cap);
	DIFF("bdp", balance_dirty_pages);
	DIFF("reclaim", reclaim);
	DIFF("timer", timer_wheel);
#undef DIFF
}

/*
 * "preset: knob=value ...", a knob the plugin changed as knob=plugin, and
 * last plugin=PATH(knob,...) naming them ("(none)": it changed nothing).
 */
static void write_spec(struct wb_policy *pol, const char **choice,
		       const char *plugin, const bool *by_plugin)
{
	size_t i, n, nr = 0;

	n = (size_t)snprintf(pol->spec, sizeof(pol->spec), "%s:", pol->name);
	for (i = 0; i < NR_KNOBS && n < sizeof(pol->spec); i++)
		n += (size_t)snprintf(pol->spec + n, sizeof(pol->spec) - n,
				      " %s=%s", knobs[i],
				      by_plugin[i] ? "plugin" : choice[i]);
	if (!plugin || n >= sizeof(pol->spec))
		return;
	n += (size_t)snprintf(pol->spec + n, sizeof(pol->spec) - n,
			      " plugin=%s(", plugin);
	for (i = 0; i < NR_KNOBS && n < sizeof(pol->spec); i++)
		if (by_plugin[i])
			n += (size_t)snprintf(pol->spec + n,
					      sizeof(pol->spec) - n, "%s%s",
					      nr++ ? "," : "", knobs[i]);
	if (n < sizeof(pol->spec))
		snprintf(pol->spec + n, sizeof(pol->spec) - n, "%s)",
			 nr ? "" : "none");
}

int wb_policy_resolve(const char *spec, struct wb_policy *pol)
{
	struct spec_parse sp = { 0 };
	bool by_plugin[NR_KNOBS] = { false };
	char buf[WB_POLICY_SPEC_LEN];
	struct wb_policy before;
	int ret;

	if (!pol)
		return -EINVAL;
	memset(pol, 0, sizeof(*pol));
	sp.spec = spec ? spec : WB_POLICY_DEFAULT;
	if (strlen(sp.spec) >= sizeof(buf)) {
		pr_err("policy: spec longer than %zu characters",
		       sizeof(buf) - 1);
		return -EINVAL;
	}
	strcpy(buf, sp.spec);
	ret = parse_spec(pol, &sp, buf);
	if (!ret && sp.plugin) {
		before = *pol;
		ret = load_plugin(pol, sp.plugin);
		if (!ret)
			knobs_changed(&before, pol, by_plugin);
	}
	if (ret) {
		wb_policy_release(pol);
		return ret;
	}
	write_spec(pol, sp.choice, sp.plugin, by_plugin);
	return 0;
}

void wb_policy_release(struct wb_policy *pol)
{
	if (pol && pol->plugin_handle) {
		dlclose(pol->plugin_handle);
		pol->plugin_handle = NULL;
	}
}

void wb_policy_list(void (*out)(void *priv, const char *line), void *priv)
{
	char line[512];
	size_t i;

	out(priv, "presets:");
	for (i = 0; i < NR_PRESETS; i++) {
		const struct preset *t = preset_target(&presets[i]);

		snprintf(line, sizeof(line), "  %-10s %s", presets[i].name,
			 presets[i].what);
		out(priv, line);
		snprintf(line, sizeof(line), "             %s", t->knobs);
		out(priv, line);
		snprintf(line, sizeof(line), "             checked against: %s",
			 t->tree);
		out(priv, line);
	}
	out(priv, "knobs:");
	for (i = 0; i < NR_VARIANTS; i++) {
		snprintf(line, sizeof(line), "  %s=%-13s %s",
			 variants[i]->knob, variants[i]->value,
			 variants[i]->source);
		out(priv, line);
	}
	out(priv, "  plugin=PATH    a shared object exporting uf_policy_plugin_init() and UF_POLICY_PLUGIN_ABI");
}
