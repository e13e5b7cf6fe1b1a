// SPDX-License-Identifier: MIT
/*
 * Description: the policy registry (policies/registry.c): presets resolve
 * to the knob values the seed-000 digest gives them, overrides apply in
 * order, unknown names are refused, the resolved spec names every knob,
 * and a policy plugin built from policies/examples/congestion-wait.c loads
 * from a shared object and really changes the no-progress wait (HZ/10
 * sleeps, on the virtual clock).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static void expect_spec(const char *spec, const char *want)
{
	struct wb_policy pol;
	int ret;

	ret = wb_policy_resolve(spec, &pol);
	cr_assert_eq(ret, 0, "%s: %s", spec, strerror(-ret));
	cr_assert_str_eq(pol.spec, want, "%s resolved to \"%s\"", spec,
			 pol.spec);
	wb_policy_release(&pol);
}

Test(policy, presets_resolve_to_their_knobs)
{
	expect_spec("linux-3.1", "linux-3.1: nowait=b0 requeue=base "
		    "skipped=redirty sbbusy=redirty cutoff=fixed "
		    "kupdate=fixed progress=pages"
		    " bgthresh=global chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.1 reclaim=legacy timer=cascade");
	expect_spec("linux-3.2", "linux-3.2: nowait=b0 requeue=base "
		    "skipped=redirty sbbusy=redirty cutoff=fixed "
		    "kupdate=fixed progress=pages"
		    " bgthresh=bdi chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade");
	expect_spec("linux-3.3", "linux-3.3: nowait=b0 requeue=base "
		    "skipped=redirty sbbusy=redirty cutoff=bg-all "
		    "kupdate=fixed progress=pages"
		    " bgthresh=bdi chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.3 reclaim=3.2 timer=cascade");
	expect_spec("kara-v4.2", "kara-v4.2: nowait=v4.2 requeue=p2-v4 "
		    "skipped=removed sbbusy=requeue cutoff=v4.2 "
		    "kupdate=fixed progress=pages"
		    " bgthresh=global chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade");
	expect_spec("wu-riw", "wu-riw: nowait=b0 requeue=riw "
		    "skipped=requeue-wait sbbusy=requeue-wait cutoff=bg-all "
		    "kupdate=early progress=total"
		    " bgthresh=bdi chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade");
	expect_spec("mainline", "mainline: nowait=mainline "
		    "requeue=mainline skipped=removed sbbusy=redirty "
		    "cutoff=bg-all kupdate=fixed progress=pages"
		    " bgthresh=bdi chunk=bandwidth skipcount=mainline wcpcap=cap bdp=mainline reclaim=mainline timer=wheel");
	/* no policy: today's kernel */
	expect_spec(NULL, "mainline: nowait=mainline "
		    "requeue=mainline skipped=removed sbbusy=redirty "
		    "cutoff=bg-all kupdate=fixed progress=pages"
		    " bgthresh=bdi chunk=bandwidth skipcount=mainline wcpcap=cap bdp=mainline reclaim=mainline timer=wheel");
}

/*
 * mainline is an alias of linux-6.18 (docs/linux-6.18.md): the same knob
 * values, under its own name in the spec, and the default.
 */
Test(policy, mainline_is_an_alias_of_linux_618)
{
	struct wb_policy a, b;

	expect_spec("linux-6.18", "linux-6.18: nowait=mainline "
		    "requeue=mainline skipped=removed sbbusy=redirty "
		    "cutoff=bg-all kupdate=fixed progress=pages"
		    " bgthresh=bdi chunk=bandwidth skipcount=mainline wcpcap=cap bdp=mainline reclaim=mainline timer=wheel");
	cr_assert_eq(wb_policy_resolve("linux-6.18", &a), 0);
	cr_assert_eq(wb_policy_resolve("mainline", &b), 0);
	cr_assert_str_eq(strchr(a.spec, ':'), strchr(b.spec, ':'),
			 "mainline \"%s\" is not linux-6.18 \"%s\"", b.spec,
			 a.spec);
	cr_assert_eq(a.no_progress, b.no_progress);
	cr_assert_eq(a.requeue, b.requeue);
	cr_assert_eq(a.balance_dirty_pages, b.balance_dirty_pages);
	cr_assert_eq(a.reclaim, b.reclaim);
	wb_policy_release(&a);
	wb_policy_release(&b);
}

struct preset_lines {
	char preset[16][64];
	unsigned int nr_presets, nr_checked, nr_commits;
	bool in_presets;
};

static void scan_preset_line(void *priv, const char *line)
{
	struct preset_lines *pl = priv;
	char name[64];

	if (!strcmp(line, "presets:")) {
		pl->in_presets = true;
		return;
	}
	if (!strcmp(line, "knobs:"))
		pl->in_presets = false;
	if (!pl->in_presets)
		return;
	if (!strncmp(line, "             checked against: ", 30)) {
		pl->nr_checked++;
		/* a tree with a commit: "@" and at least 12 hex digits */
		if (strchr(line, '@') &&
		    strspn(strchr(line, '@') + 1, "0123456789abcdef") >= 12)
			pl->nr_commits++;
		return;
	}
	if (line[2] != ' ' && sscanf(line, " %63s", name) == 1 &&
	    pl->nr_presets < 16)
		snprintf(pl->preset[pl->nr_presets++], 64, "%s", name);
}

/* Every preset says what it was checked against; the git trees, a commit. */
Test(policy, every_preset_names_its_source)
{
	struct preset_lines pl = { .nr_presets = 0 };

	wb_policy_list(scan_preset_line, &pl);
	cr_assert_eq(pl.nr_presets, 7, "%u presets listed", pl.nr_presets);
	cr_assert_eq(pl.nr_checked, pl.nr_presets,
		     "%u of %u presets name their source", pl.nr_checked,
		     pl.nr_presets);
	/* 3.2.41, 3.3, 6.18 and its alias name a git commit */
	cr_assert_geq(pl.nr_commits, 4, "%u sources name a commit",
		      pl.nr_commits);
}

Test(policy, overrides_apply_in_order)
{
	expect_spec("linux-3.3,nowait=v3b,requeue=p2-v3",
		    "linux-3.3: nowait=v3b requeue=p2-v3 skipped=redirty "
		    "sbbusy=redirty cutoff=bg-all kupdate=fixed "
		    "progress=pages"
		    " bgthresh=bdi chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.3 reclaim=3.2 timer=cascade");
	expect_spec("kara-v4.2,nowait=v4.1,cutoff=bg-all",
		    "kara-v4.2: nowait=v4.1 requeue=p2-v4 skipped=removed "
		    "sbbusy=requeue cutoff=bg-all kupdate=fixed "
		    "progress=pages"
		    " bgthresh=global chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade");
}

Test(policy, hooks_follow_the_knobs)
{
	struct wb_policy a, b;

	cr_assert_eq(wb_policy_resolve("linux-3.1", &a), 0);
	cr_assert_eq(wb_policy_resolve("linux-3.1,nowait=v4,skipped=removed,"
				       "progress=total,kupdate=early", &b), 0);
	cr_assert_neq(a.no_progress, b.no_progress);
	cr_assert_eq(a.requeue, b.requeue);
	cr_assert_not_null(a.pages_skipped);
	cr_assert_null(b.pages_skipped);
	cr_assert(!a.return_total_progress && b.return_total_progress);
	cr_assert(!a.kupdate_early && b.kupdate_early);
}

Test(policy, unknown_names_are_refused)
{
	static const char *const bad[] = {
		"", "linux-9.9", "linux-3.2,nowait=v9", "linux-3.2,bogus=1",
		"linux-3.2,nowait", "linux-3.2,plugin=/nonexistent.so",
	};
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;
	struct wb_policy pol;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = wb_policy_resolve(bad[i], &pol);

		cr_assert(ret == -EINVAL || ret == -ENOENT,
			  "\"%s\" gave %d", bad[i], ret);
		uf_cache_config_init(&cfg);
		cfg.nr_pages = 64;
		cfg.policy = bad[i];
		cr_assert_lt(uf_cache_open(&cfg, &c), 0, "cache took \"%s\"",
			     bad[i]);
		cr_assert_null(c);
	}
}

Test(policy, cache_records_resolved_policy)
{
	struct uf_cache_config cfg;
	struct uf_cache *c;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 64;
	cfg.policy = "wu-riw,nowait=v4.2";
	cr_assert_eq(uf_cache_open(&cfg, &c), 0);
	cr_assert_str_eq(uf_cache_policy(c), "wu-riw: nowait=v4.2 "
			 "requeue=riw skipped=requeue-wait "
			 "sbbusy=requeue-wait cutoff=bg-all kupdate=early "
			 "progress=total"
			 " bgthresh=bdi chunk=bandwidth skipcount=3.2 wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade");
	cr_assert_eq(uf_cache_close(c), 0);
	cr_assert_null(uf_cache_policy(c));
}

/* build/plugins/congestion-wait.so, beside the test binary. */
static void plugin_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	snprintf(buf, len, "%s/plugins/congestion-wait.so", dirname(exe));
	/* make build always builds it: missing means broken */
	if (access(buf, R_OK))
		cr_assert_fail("plugin not built: %s", buf);
}

Test(policy, plugin_replaces_the_hook)
{
	char path[PATH_MAX], spec[PATH_MAX + 64];
	struct wb_policy base, pol;

	plugin_path(path, sizeof(path));
	snprintf(spec, sizeof(spec), "kara-v4.2,plugin=%s", path);
	cr_assert_eq(wb_policy_resolve("kara-v4.2", &base), 0);
	cr_assert_eq(wb_policy_resolve(spec, &pol), 0);
	cr_assert_neq(pol.no_progress, base.no_progress);
	cr_assert_eq(pol.requeue, base.requeue);
	/* the resolved spec names the hook it replaced, and only that one */
	cr_assert_not_null(strstr(pol.spec, " nowait=plugin "), "%s", pol.spec);
	cr_assert_not_null(strstr(pol.spec, " requeue=p2-v4 "), "%s", pol.spec);
	snprintf(spec, sizeof(spec), " plugin=%s(nowait)", path);
	cr_assert_not_null(strstr(pol.spec, spec), "%s", pol.spec);
	wb_policy_release(&pol);
	cr_assert_null(pol.plugin_handle);
}

static void fx_fini(void)
{
	fx_teardown(NULL);
}

/*
 * The plugin's wait really runs: an inode whose write_inode keeps failing
 * sits on b_more_io (requeue=p2-v4), the work makes no progress and sleeps
 * HZ/10 per round — not 1, 2, 4... as kara-v4.2's own v4.2 would.
 */
static int eagain_write_inode(struct tf *t, int sync)
{
	(void)t;
	(void)sync;
	return -EAGAIN;
}

/* The runner's next sleep: how long its timer has to go. */
static unsigned long next_sleep(void)
{
	unsigned long t;

	cr_assert_eq(wait_asleep(rn.task, &rn.done), 1,
		     "the work did not go to sleep");
	cr_assert_eq(uf_clock_next_expiry(&t), 0);
	return t - jiffies;
}

Test(policy, plugin_wait_runs_on_the_clock, .fini = fx_fini, .timeout = 60)
{
	struct wb_writeback_work work = {
		.nr_pages = 1024, .sync_mode = WB_SYNC_NONE,
		.range_cyclic = 1, .reason = WB_REASON_SYNC,
	};
	char path[PATH_MAX], spec[PATH_MAX + 64];
	struct tf *t;
	int i;

	plugin_path(path, sizeof(path));
	snprintf(spec, sizeof(spec), "kara-v4.2,plugin=%s", path);
	FX_SETUP(.start = 100000, .policy = spec);
	t = tf_open(1, 256);
	t->on_write_inode = eagain_write_inode;
	mark_sync(t);

	runner_start(RUN_WORK, &work);
	/* v4.2 would sleep 1, 2, 4; the plugin sleeps HZ/10 each time */
	for (i = 0; i < 3; i++) {
		unsigned long s = next_sleep();

		cr_assert_eq(s, (unsigned long)HZ / 10,
			     "sleep %d: %lu jiffies", i, s);
		uf_clock_advance(s);
	}
	/* let the inode be written: the work then ends */
	__atomic_store_n(&t->on_write_inode, NULL, __ATOMIC_RELEASE);
	cr_assert(rn_drive(jiffies + 10UL * (unsigned long)HZ),
		  "the work did not end once the inode could be written");
	runner_join();
	cr_assert_eq(fx_teardown(NULL), 0);
}

/*
 * I19 (seed 000 L4063-4065, L1306-1315): progress is pages written plus
 * inodes made clean, so a pass that only writes an inode's metadata counts
 * as progress; wb_writeback returns pages (base, v4: nr_pages - what is
 * left) or total progress (kupdate-early/RIW: progress=total).
 */
static long progress_of(const char *spec, unsigned int data_pages,
			int *nr_write_inode)
{
	struct wb_writeback_work work = {
		.nr_pages = 1024, .sync_mode = WB_SYNC_NONE,
		.range_cyclic = 1, .reason = WB_REASON_SYNC,
	};
	struct tf *meta, *data;
	long ret;

	FX_SETUP(.start = 200000, .policy = spec);
	meta = tf_open(1, 256);
	data = tf_open(2, 256);
	mark_sync(meta);
	if (data_pages)
		tf_dirty(data, 0, data_pages, 0x5a);
	advance(10);
	ret = run(&work);
	cr_assert_eq(fx_teardown(NULL), 0);
	/* its write_inode calls, closing included */
	*nr_write_inode = meta->nr_write_inode;
	return ret;
}

Test(policy, progress_counts_pages_or_total, .fini = fx_fini)
{
	int n = 0;

	/* metadata only: written, but no pages */
	cr_assert_eq(progress_of("linux-3.2", 0, &n), 0);
	cr_assert_eq(n, 1, "write_inode ran %d times", n);
	n = 0;
	cr_assert_eq(progress_of("linux-3.2,progress=total", 0, &n), 1,
		     "the cleaned inode counts as progress");
	cr_assert_eq(n, 1);
	/* 8 pages + two inodes cleaned */
	n = 0;
	cr_assert_eq(progress_of("linux-3.2", 8, &n), 8);
	n = 0;
	cr_assert_eq(progress_of("wu-riw", 8, &n), 10);
}
