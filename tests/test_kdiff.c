// SPDX-License-Identifier: MIT
/*
 * Description: the statistics of `uflush-bench kdiff` (bench/ktrace.c)
 * from small trace snippets, recorded from Linux 6.18's tracefs and from
 * uflush's trace of the same workload (lines copied as they were, some
 * numbers changed to make the arithmetic checkable): the time-weighted
 * dirty vs setpoint, the per-device filters, the window, the pause and
 * ratelimit distributions, flusher passes counted exactly from LONG_MAX,
 * and request sizes from block_rq_issue.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "bench/ktrace.h"

static void feed(struct ktrace_stats *st, const char *const *lines)
{
	for (; *lines; lines++)
		ktrace_stats_line(st, *lines);
	ktrace_stats_finish(st);
}

#define NEAR(a, b) cr_assert(fabs((a) - (b)) < 1e-6, "%s = %.9g, want %.9g", \
			     #a, (double)(a), (double)(b))

/*
 * global_dirty_state: dirty = dirty + writeback; setpoint from thresh,
 * bg_thresh and max(limit, thresh); each sample weighted by how long it
 * held, the last one until the window's end.
 */
Test(kdiff, dirty_vs_setpoint_time_weighted)
{
	/* freerun (200 + 100) / 2 = 150; setpoint (200 + 150) / 2 = 175 */
	static const char *const lines[] = {
		"    uflush-bench-2143    [000] .....   10.000000: global_dirty_state: dirty=100 writeback=0 bg_thresh=100 thresh=200 limit=200 dirtied=0 written=0",
		/* limit below thresh: the hard limit is thresh */
		"       flush-7:3-2365  [001]   11.000000: global_dirty_state: dirty=150 writeback=50 bg_thresh=100 thresh=200 limit=150 dirtied=0 written=0",
		"not a trace line",
		"# tracer: nop",
		NULL,
	};
	struct ktrace_filter f = { .t0 = 10, .t1 = 13, .nr_writers = 1 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	feed(&st, lines);
	cr_assert_eq(st.nr_gds, 2);
	/* 100 for 1 s, 200 for 2 s */
	NEAR(st.dirty_mean, (100.0 * 1 + 200.0 * 2) / 3);
	NEAR(st.setpoint_mean, 175);
	NEAR(st.limit_mean, 200);
	NEAR(st.above_setpoint_pct, 100.0 * 2 / 3);
	NEAR(st.wb_share, (0 * 1 + 0.25 * 2) / 3);
	cr_assert(isnan(st.pre_dirty));
	NEAR(st.thresh_min, 200);
	NEAR(st.thresh_max, 200);
	ktrace_stats_free(&st);
}

/* Outside the window nothing counts; the last sample before it is kept. */
Test(kdiff, window)
{
	static const char *const lines[] = {
		"    uflush-bench-2143    [000] .....   9.500000: global_dirty_state: dirty=18772 writeback=28 bg_thresh=12800 thresh=25600 limit=25600 dirtied=772564 written=427298",
		"    uflush-bench-2143    [000] .....   10.500000: global_dirty_state: dirty=1000 writeback=0 bg_thresh=12800 thresh=25600 limit=25600 dirtied=772564 written=427298",
		"    uflush-bench-2143    [000] .N...   10.600000: balance_dirty_pages: bdi 7:0: limit=25600 setpoint=22400 dirty=19305 wb_setpoint=687 wb_dirty=512 dirty_ratelimit=102400 task_ratelimit=199700 dirtied=256 dirtied_pause=64 paused=0 pause=4 period=4 think=0 cgroup_ino=1",
		"    uflush-bench-2143    [000] .N...   12.600000: balance_dirty_pages: bdi 7:0: limit=25600 setpoint=22400 dirty=19305 wb_setpoint=687 wb_dirty=512 dirty_ratelimit=102400 task_ratelimit=199700 dirtied=256 dirtied_pause=64 paused=0 pause=200 period=4 think=0 cgroup_ino=1",
		NULL,
	};
	struct ktrace_filter f = { .t0 = 10, .t1 = 12, .nr_writers = 1 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	feed(&st, lines);
	cr_assert_eq(st.nr_gds, 1);
	NEAR(st.pre_dirty, 18800);
	NEAR(st.thresh_min, 25600);
	NEAR(st.dirty_mean, 1000);
	cr_assert_eq(st.pause.n, 1, "the pause after the window counted");
	NEAR(st.pause.v[0], 4);
	NEAR(ktrace_stats_secs(&st), 2);
	ktrace_stats_free(&st);
}

/*
 * balance_dirty_pages of one bdi only, kernel lines (a flags column)
 * and uflush lines (none); pause, period and think quantiles.
 */
Test(kdiff, pauses_of_one_bdi)
{
	static const char *const lines[] = {
		"    uflush-bench-2143    [000] .N...   804.478724: balance_dirty_pages: bdi 7:1: limit=25600 setpoint=22400 dirty=19305 wb_setpoint=687 wb_dirty=512 dirty_ratelimit=102400 task_ratelimit=199700 dirtied=256 dirtied_pause=64 paused=0 pause=4 period=4 think=0 cgroup_ino=1",
		"    uflush-bench-2143    [000] .....   804.485467: balance_dirty_pages: bdi 7:1: limit=25600 setpoint=22400 dirty=19451 wb_setpoint=5646 wb_dirty=1280 dirty_ratelimit=102400 task_ratelimit=494700 dirtied=256 dirtied_pause=64 paused=0 pause=40 period=50 think=10 cgroup_ino=1",
		/* another device (7:10 must not pass for 7:1) */
		"    dd-999    [001] .....   804.486000: balance_dirty_pages: bdi 7:10: limit=25600 setpoint=22400 dirty=19451 wb_setpoint=5646 wb_dirty=1280 dirty_ratelimit=102400 task_ratelimit=494700 dirtied=256 dirtied_pause=64 paused=0 pause=999 period=999 think=999 cgroup_ino=1",
		"    uflush-bench-2143    [000] .....   804.490000: balance_dirty_pages: bdi 7:1: limit=25600 setpoint=22400 dirty=19451 wb_setpoint=1000 wb_dirty=1500 dirty_ratelimit=102400 task_ratelimit=494700 dirtied=256 dirtied_pause=64 paused=0 pause=20 period=30 think=10 cgroup_ino=1",
		NULL,
	};
	struct ktrace_filter f = { .bdi = "7:1", .nr_writers = 1 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	feed(&st, lines);
	cr_assert_eq(st.pause.n, 3);
	NEAR(kt_quantile(&st.pause, 0.5), 20);
	NEAR(kt_quantile(&st.pause, 0.99), 20);	/* nearest lower rank */
	NEAR(kt_quantile(&st.pause, 1), 40);
	NEAR(kt_quantile(&st.period, 0.5), 30);
	NEAR(kt_mean(&st.think), 20.0 / 3);
	NEAR(kt_quantile(&st.wb_dirty_sp, 1), 1.5);
	ktrace_stats_free(&st);

	/* uflush's own lines: no flags column, no bdi filter */
	static const char *const ulines[] = {
		"    uflush-bench-2366  [001]   811.313869: balance_dirty_pages: bdi 7:3: limit=25600 setpoint=22400 dirty=19232 wb_setpoint=22399 wb_dirty=19232 dirty_ratelimit=102400 task_ratelimit=204600 dirtied=64 dirtied_pause=64 paused=0 pause=12 period=16 think=-1 cgroup_ino=0",
		NULL,
	};
	struct ktrace_filter uf = { .nr_writers = 1 };

	ktrace_stats_init(&st, &uf);
	feed(&st, ulines);
	cr_assert_eq(st.pause.n, 1);
	NEAR(st.pause.v[0], 12);
	NEAR(st.period.v[0], 16);
	NEAR(st.think.v[0], -1);
	ktrace_stats_free(&st);
}

/* dirty_ratelimit against write_bw / N, and the updates counted. */
Test(kdiff, ratelimit_vs_bw_per_writer)
{
	static const char *const lines[] = {
		"    uflush-bench-2143    [000] .N.1.   805.339507: bdi_dirty_ratelimit: bdi 7:0: write_bw=88000 awrite_bw=100860 dirty_rate=93332 dirty_ratelimit=22000 task_ratelimit=161904 balanced_dirty_ratelimit=100860 cgroup_ino=1",
		"    uflush-bench-2366  [001]   805.539507: bdi_dirty_ratelimit: bdi 7:0: write_bw=100000 awrite_bw=102400 dirty_rate=475372 dirty_ratelimit=50000 task_ratelimit=101504 balanced_dirty_ratelimit=21864 cgroup_ino=0",
		/* write_bw 0 (a bdi just made): an update, no ratio */
		"    uflush-bench-2366  [001]   805.739507: bdi_dirty_ratelimit: bdi 7:0: write_bw=0 awrite_bw=0 dirty_rate=0 dirty_ratelimit=25600 task_ratelimit=0 balanced_dirty_ratelimit=0 cgroup_ino=0",
		NULL,
	};
	struct ktrace_filter f = { .bdi = "7:0", .t0 = 805, .t1 = 807,
				   .nr_writers = 4 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	feed(&st, lines);
	cr_assert_eq(st.nr_rate_updates, 3);
	cr_assert_eq(st.rl_ratio.n, 2);
	/* 22000 / (88000 / 4) = 1; 50000 / (100000 / 4) = 2 */
	NEAR(kt_mean(&st.rl_ratio), 1.5);
	NEAR(ktrace_rate_updates_per_s(&st), 1.5);
	ktrace_stats_free(&st);
}

/*
 * A pass is writeback_start .. writeback_written of the bdi: the pages
 * are the drop of nr_pages, exact from LONG_MAX (a double would round
 * to a multiple of 2048 there).
 */
Test(kdiff, flusher_passes)
{
	static const char *const lines[] = {
		/* a written without its start (before the window): no pass */
		"       flush-7:3-2365  [001]   811.302000: writeback_written: bdi 7:3: sb_dev 0:0 nr_pages=9223372036854771711 sync_mode=0 kupdate=0 range_cyclic=1 background=1 reason=background ino=0 offset=0",
		"       flush-7:3-2365  [001]   811.302907: writeback_start: bdi 7:3: sb_dev 0:0 nr_pages=9223372036854775807 sync_mode=0 kupdate=0 range_cyclic=1 background=1 reason=background ino=0 offset=0",
		"       flush-7:3-2365  [001]   811.303964: writeback_written: bdi 7:3: sb_dev 0:0 nr_pages=9223372036854774807 sync_mode=0 kupdate=0 range_cyclic=1 background=1 reason=background ino=0 offset=0",
		"   kworker/u8:14-4457    [000] ...1.   804.477859: writeback_start: bdi 7:3: sb_dev 0:0 nr_pages=63582 sync_mode=0 kupdate=1 range_cyclic=1 background=0 reason=periodic cgroup_ino=1",
		"   kworker/u8:14-4457    [000] ...1.   804.477861: writeback_written: bdi 7:3: sb_dev 0:0 nr_pages=63579 sync_mode=0 kupdate=1 range_cyclic=1 background=0 reason=periodic cgroup_ino=1",
		/* another bdi's pass */
		"   kworker/u8:14-4457    [000] ...1.   804.477900: writeback_start: bdi 253:0: sb_dev 0:0 nr_pages=100 sync_mode=0 kupdate=1 range_cyclic=1 background=0 reason=periodic cgroup_ino=1",
		"   kworker/u8:14-4457    [000] ...1.   804.477901: writeback_written: bdi 253:0: sb_dev 0:0 nr_pages=0 sync_mode=0 kupdate=1 range_cyclic=1 background=0 reason=periodic cgroup_ino=1",
		NULL,
	};
	struct ktrace_filter f = { .bdi = "7:3", .nr_writers = 1 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	feed(&st, lines);
	cr_assert_eq(st.passes, 2);
	NEAR(st.pass_pages.v[0], 1000);
	NEAR(st.pass_pages.v[1], 3);
	ktrace_stats_free(&st);
}

/* Writes with data on our device only, in KiB. */
Test(kdiff, request_sizes)
{
	static const char *const lines[] = {
		"   kworker/u8:14-4457    [000] .....   804.477960: block_rq_issue: 7,0 W 524288 () 0 + 1024 be,0,4 [kworker/u8:14]",
		"        uf-shape-2364    [001] .....   811.319101: block_rq_issue: 7,0 WS 131072 () 1024 + 256 be,0,4 [uf-shape]",
		/* a read, a flush without data, a discard, another device */
		"        uf-shape-2364    [001] .....   811.319102: block_rq_issue: 7,0 RS 4096 () 8 + 8 be,0,4 [uf-shape]",
		"        uf-shape-2364    [001] .....   811.319103: block_rq_issue: 7,0 FWS 0 () 0 + 0 be,0,4 [uf-shape]",
		"        uf-shape-2364    [001] .....   811.319104: block_rq_issue: 7,0 DS 4096 () 0 + 8 be,0,4 [uf-shape]",
		"   kworker/u8:14-4457    [000] .....   804.477960: block_rq_issue: 7,1 W 524288 () 0 + 1024 be,0,4 [kworker/u8:14]",
		NULL,
	};
	struct ktrace_filter f = { .dev = "7,0", .nr_writers = 1 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	feed(&st, lines);
	cr_assert_eq(st.rq_kib.n, 2);
	NEAR(kt_mean(&st.rq_kib), (512 + 128) / 2.0);
	NEAR(kt_quantile(&st.rq_kib, 0.5), 128);
	ktrace_stats_free(&st);
}

/* No events: every statistic says so (NAN), none is a made-up 0. */
Test(kdiff, empty_trace)
{
	struct ktrace_filter f = { .nr_writers = 2 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	ktrace_stats_finish(&st);
	cr_assert(isnan(st.dirty_mean));
	cr_assert(isnan(st.above_setpoint_pct));
	cr_assert(isnan(kt_quantile(&st.pause, 0.5)));
	cr_assert(isnan(kt_mean(&st.rq_kib)));
	cr_assert(isnan(ktrace_passes_per_s(&st)));
	cr_assert_eq(ktrace_stats_file(&st, "/nonexistent/kdiff.trace"),
		     -ENOENT);
	ktrace_stats_free(&st);
}

/* Someone else writes vm.dirty_bytes mid-run: the thresholds' range shows it. */
Test(kdiff, thresholds_changed)
{
	static const char *const lines[] = {
		"    uflush-bench-2143    [000] .....   10.0: global_dirty_state: dirty=10 writeback=0 bg_thresh=12800 thresh=25600 limit=25600 dirtied=0 written=0",
		"    uflush-bench-2143    [000] .....   11.0: global_dirty_state: dirty=10 writeback=0 bg_thresh=6400 thresh=12800 limit=25600 dirtied=0 written=0",
		"    uflush-bench-2143    [000] .....   12.0: global_dirty_state: dirty=10 writeback=0 bg_thresh=12800 thresh=51200 limit=51200 dirtied=0 written=0",
		NULL,
	};
	struct ktrace_filter f = { .nr_writers = 1 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	feed(&st, lines);
	NEAR(st.thresh_min, 12800);
	NEAR(st.thresh_max, 51200);
	ktrace_stats_free(&st);
}

/*
 * The pages each throttle call was charged for, and the rate the device
 * started the window with.  A loop device reused without LOOP_CTL_REMOVE
 * keeps its bdi and the estimates of its last user: Linux 6.18's first
 * event of such a run (below, as recorded before kdiff renewed the
 * device) said dirty_ratelimit=17492 where a new bdi says INIT_BW.
 */
Test(kdiff, first_ratelimit_and_pages_per_call)
{
	static const char *const stale[] = {
		"    uflush-bench-25306   [001] .....   11740.943019: global_dirty_state: dirty=214 writeback=0 bg_thresh=12800 thresh=25600 limit=25600 dirtied=14081517 written=12445159",
		"    uflush-bench-25316   [001] .N.1.   11741.220377: bdi_dirty_ratelimit: bdi 7:0: write_bw=260740 awrite_bw=255736 dirty_rate=145652 dirty_ratelimit=17492 task_ratelimit=30812 balanced_dirty_ratelimit=54096 cgroup_ino=1",
		"    uflush-bench-25316   [001] .....   11741.230000: balance_dirty_pages: bdi 7:0: limit=25600 setpoint=22400 dirty=20771 wb_setpoint=21758 wb_dirty=20736 dirty_ratelimit=19040 task_ratelimit=32608 dirtied=256 dirtied_pause=167 paused=0 pause=24 period=28 think=4 cgroup_ino=1",
		NULL,
	};
	static const char *const fresh[] = {
		/* another device's rate does not count */
		"    dd-999    [001] .....   11949.000000: balance_dirty_pages: bdi 7:9: limit=25600 setpoint=22400 dirty=19444 wb_setpoint=672 wb_dirty=9472 dirty_ratelimit=5000 task_ratelimit=45700 dirtied=32 dirtied_pause=32 paused=0 pause=4 period=4 think=0 cgroup_ino=1",
		"    uflush-bench-1656    [000] .....   11949.029652: balance_dirty_pages: bdi 7:1: limit=25600 setpoint=22400 dirty=19444 wb_setpoint=672 wb_dirty=9472 dirty_ratelimit=102400 task_ratelimit=45700 dirtied=256 dirtied_pause=64 paused=0 pause=0 period=20 think=0 cgroup_ino=1",
		"    uflush-bench-1656    [000] .....   11949.167335: bdi_dirty_ratelimit: bdi 7:1: write_bw=102400 awrite_bw=102400 dirty_rate=329140 dirty_ratelimit=89600 task_ratelimit=116004 balanced_dirty_ratelimit=36088 cgroup_ino=1",
		"    uflush-bench-1656    [000] .....   11949.200000: balance_dirty_pages: bdi 7:1: limit=25600 setpoint=22400 dirty=19444 wb_setpoint=672 wb_dirty=9472 dirty_ratelimit=89600 task_ratelimit=45700 dirtied=8 dirtied_pause=64 paused=0 pause=0 period=20 think=0 cgroup_ino=1",
		"    uflush-bench-1656    [000] .....   11949.300000: balance_dirty_pages: bdi 7:1: limit=25600 setpoint=22400 dirty=19444 wb_setpoint=672 wb_dirty=9472 dirty_ratelimit=89600 task_ratelimit=45700 dirtied=256 dirtied_pause=64 paused=0 pause=0 period=20 think=0 cgroup_ino=1",
		NULL,
	};
	struct ktrace_filter f = { .bdi = "7:0", .nr_writers = 1 };
	struct ktrace_stats st;

	ktrace_stats_init(&st, &f);
	cr_assert(isnan(st.rl_first));
	cr_assert(!ktrace_rate_inherited(&st), "no event: nothing to say");
	feed(&st, stale);
	NEAR(st.rl_first, 17492);
	cr_assert(ktrace_rate_inherited(&st));
	cr_assert_eq(st.dirtied.n, 1);
	NEAR(st.dirtied.v[0], 256);
	ktrace_stats_free(&st);

	snprintf(f.bdi, sizeof(f.bdi), "7:1");
	ktrace_stats_init(&st, &f);
	feed(&st, fresh);
	NEAR(st.rl_first, 102400);
	cr_assert(!ktrace_rate_inherited(&st));
	cr_assert_eq(st.dirtied.n, 3);
	NEAR(kt_quantile(&st.dirtied, 0.5), 256);
	NEAR(kt_quantile(&st.dirtied, 0), 8);
	ktrace_stats_free(&st);

	/* one update down from INIT_BW (7/8 of it) is still a fresh bdi */
	static const char *const stepped[] = {
		"    uflush-bench-1656    [000] .....   11949.167335: bdi_dirty_ratelimit: bdi 7:1: write_bw=102400 awrite_bw=102400 dirty_rate=329140 dirty_ratelimit=89600 task_ratelimit=116004 balanced_dirty_ratelimit=36088 cgroup_ino=1",
		NULL,
	};
	ktrace_stats_init(&st, &f);
	feed(&st, stepped);
	cr_assert(!ktrace_rate_inherited(&st));
	ktrace_stats_free(&st);
}

/* The host's HZ from a measured jiffies rate: the nearest Kconfig value. */
Test(kdiff, host_hz_from_the_tick_rate)
{
	cr_assert_eq(ktrace_hz_nearest(250.0), 250);
	cr_assert_eq(ktrace_hz_nearest(247.5), 250);	/* a tick late */
	cr_assert_eq(ktrace_hz_nearest(290.0), 300);	/* 250 and 300 apart */
	cr_assert_eq(ktrace_hz_nearest(1002.5), 1000);
	cr_assert_eq(ktrace_hz_nearest(99.0), 100);
	/* nothing near a choice: not read as a tick */
	cr_assert_eq(ktrace_hz_nearest(500.0), 0);
	cr_assert_eq(ktrace_hz_nearest(0), 0);
	cr_assert_eq(ktrace_hz_nearest(NAN), 0);
}
