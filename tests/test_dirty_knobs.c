// SPDX-License-Identifier: MIT
/*
 * tests/test_dirty_knobs.c - the dirty-control knobs of policies/: the
 * per-device background threshold (bgthresh, seed 001), the writeback
 * chunk (chunk), what a page ->writepage declines costs (skipcount), the
 * write_cache_pages cap of a file that maps at writeback (wcpcap, seed
 * 004), and what tells linux-3.2 from linux-3.3.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

void bdi_writeout_inc(struct backing_dev_info *bdi);

/* A second device on the fixture's cache, for the per-device tests. */
static struct {
	struct uf_testdev td;
	bool have_td;
	struct uf_dev *dev;
	struct backing_dev_info *bdi;
	struct uf_file *f;
} d2;

static void fx_fini(void)
{
	if (d2.f)
		uf_file_close(d2.f);
	if (d2.dev)
		uf_dev_close(d2.dev);
	if (d2.have_td)
		uf_testdev_destroy(&d2.td);
	memset(&d2, 0, sizeof(d2));
	fx_teardown(NULL);
}

/* Pages waiting to be written on @bdi (BDI_RECLAIMABLE). */
static unsigned long reclaimable(struct backing_dev_info *bdi)
{
	return bdi_stat(bdi, BDI_RECLAIMABLE);
}

/* Dirty @nr pages of the second device's file. */
static void d2_dirty(unsigned long nr)
{
	static char buf[PG];
	unsigned long i;

	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < nr; i++)
		cr_assert_eq(uf_pwrite(d2.f, buf, PG, i * PG), (ssize_t)PG);
}

/*
 * Two devices A (the fixture's) and B on one cache, with equal shares of
 * the completions, background_thresh @bg pages and periodic writeback
 * off (so that wb_do_writeback() runs only the background check).
 * Returns A's share of @bg, bdi_dirty_limit(A, bg).  @b_idle: B gets no
 * completions (its share is 0).
 */
static unsigned long two_devices_idle(const char *spec, unsigned long bg,
				      bool b_idle)
{
	struct uf_dev_config dcfg = { .flags = UF_DEV_NO_FLUSHER };
	unsigned long bgt, dt;
	int i, ret;

	FX_SETUP(.start = 31000000, .policy = spec, .set_dwi = true,
		 .dwi = 0);
	ret = uf_testdev_create(FX_DEV_SIZE, UF_TESTDEV_FILE_ONLY, &d2.td);
	if (ret)
		cr_skip_test("no second scratch device: %s", strerror(-ret));
	d2.have_td = true;
	cr_assert_eq(uf_dev_open(fx.cache, d2.td.path, &dcfg, &d2.dev), 0);
	d2.bdi = uf_dev_bdi(d2.dev);
	cr_assert_eq(uf_file_open(d2.dev, 1, 0, 256 * PG, NULL, NULL,
				  &d2.f), 0);
	for (i = 0; i < 1000; i++) {
		bdi_writeout_inc(fx.bdi);
		if (!b_idle)
			bdi_writeout_inc(d2.bdi);
	}
	set_bg_thresh_pages(bg);
	global_dirty_limits(uf_cache_obj(fx.cache), &bgt, &dt);
	cr_assert_eq(bgt, bg);
	return bdi_dirty_limit(fx.bdi, bg);
}

static unsigned long two_devices(const char *spec, unsigned long bg)
{
	return two_devices_idle(spec, bg, false);
}

/* uf_dev_stats' bg_bdi_only of @dev */
static unsigned long bdi_only(struct uf_dev *dev)
{
	struct uf_dev_stats st;

	cr_assert_eq(uf_dev_stats(dev, &st), 0);
	return st.bg_bdi_only;
}

/*
 * BG-2/BG-3: with the global count at or under background_thresh, a
 * device is over exactly when its reclaimable pages are strictly over
 * its share; the other device, under its own, is not.  bgthresh=global
 * sees neither.  Both count the one answer the device's test alone
 * decides (uf_dev_stats bg_bdi_only), whatever the answer.
 */
static void bg_strict_case(const char *spec, bool per_bdi)
{
	unsigned long share = two_devices(spec, 200);
	unsigned long n0, n2;
	struct tf *a;

	cr_assert(share >= 80 && share <= 120,
		  "equal completions: A's share of 200 is %lu", share);
	a = tf_open(1, 256);
	d2_dirty(10);
	tf_dirty(a, 0, share, 1);
	cr_assert_eq(reclaimable(fx.bdi), share);
	cr_assert_leq(global_page_state(uf_cache_obj(fx.cache), NR_FILE_DIRTY), 200);
	n0 = bdi_only(fx.dev);
	n2 = bdi_only(d2.dev);
	cr_assert(!over_bground_thresh(fx.bdi),
		  "%s: A at its share (%lu pages) is not over (strict >)",
		  spec, share);
	cr_assert_eq(bdi_only(fx.dev), n0, "%s: counted at the share", spec);
	tf_dirty(a, share, 1, 1);
	cr_assert_leq(global_page_state(uf_cache_obj(fx.cache), NR_FILE_DIRTY), 200,
		      "the global test alone must say no");
	cr_assert_eq(over_bground_thresh(fx.bdi), per_bdi,
		     "%s: A one page over its share of %lu", spec, share);
	cr_assert_eq(bdi_only(fx.dev), n0 + 1,
		     "%s: one page over, counted once", spec);
	cr_assert(!over_bground_thresh(d2.bdi), "%s: B (10 pages) is over",
		  spec);
	cr_assert_eq(bdi_only(d2.dev), n2, "%s: B counted", spec);
	/* over the global threshold the device's test is not asked */
	tf_dirty(a, share + 1, 200 - share, 1);
	cr_assert(over_bground_thresh(fx.bdi));
	cr_assert_eq(bdi_only(fx.dev), n0 + 1, "%s: counted over global",
		     spec);
}

FX_TEST(dirty_knobs, bgthresh_bdi_strictly_over_the_share, 60,
	bg_strict_case("linux-3.2", true))
FX_TEST(dirty_knobs, bgthresh_global_ignores_the_share, 60,
	bg_strict_case("linux-3.1", false))

/*
 * bgthresh=bdi under bdp=mainline takes the device's share of
 * background_thresh from 6.18's __wb_calc_thresh (wb_bg_dirty_limits,
 * mm/page-writeback.c:2126): a device with no completions (share 0) gets
 * at least (bg_thresh - dirty) / 8 = (200 - 10) / 8 = 23 pages, so its 10
 * dirty pages are not over; under 3.2's bdi_dirty_limit they are (10 > 0).
 */
static void bg_idle_device_case(const char *spec, bool floored)
{
	two_devices_idle(spec, 200, true);
	cr_assert_eq(bdi_dirty_limit(d2.bdi, 200), 0, "B has no share");
	d2_dirty(10);
	cr_assert_eq(reclaimable(d2.bdi), 10);
	cr_assert_eq(over_bground_thresh(d2.bdi), !floored,
		     "%s: an idle device with 10 dirty pages", spec);
}

FX_TEST(dirty_knobs, bgthresh_bdi_floors_an_idle_device_618, 60,
	bg_idle_device_case("mainline", true))
FX_TEST(dirty_knobs, bgthresh_bdi_idle_device_over_v32, 60,
	bg_idle_device_case("linux-3.2", false))

/*
 * BG-5/BG-6: the flusher's background check runs on A, which is over its
 * share, and writes A until it is not; it does nothing on B.  Under
 * bgthresh=global it does nothing on either.
 */
static void bg_flush_case(const char *spec, bool per_bdi)
{
	unsigned long share = two_devices(spec, 200);
	struct tf *a = tf_open(1, 256);
	long wrote_a, wrote_b;

	d2_dirty(20);
	tf_dirty(a, 0, share + 20, 1);
	cr_assert_leq(global_page_state(uf_cache_obj(fx.cache), NR_FILE_DIRTY), 200);

	wrote_a = wb_do_writeback(fx.wb, 0);
	wrote_b = wb_do_writeback(&d2.bdi->wb, 0);
	cr_assert_eq(wrote_b, 0, "%s: background ran on B", spec);
	cr_assert_eq(reclaimable(d2.bdi), 20);
	if (!per_bdi) {
		cr_assert_eq(wrote_a, 0, "%s: background ran on A", spec);
		cr_assert_eq(reclaimable(fx.bdi), share + 20);
		return;
	}
	cr_assert_gt(wrote_a, 0, "%s: no background writeback on A", spec);
	cr_assert_leq(reclaimable(fx.bdi), share,
		      "%s: A stopped with %lu pages over a share of %lu",
		      spec, reclaimable(fx.bdi), share);
	tf_expect_on_dev(a, 0, 1, 1, "A's first page");
}

FX_TEST(dirty_knobs, bgthresh_bdi_background_runs_on_that_device_only, 60,
	bg_flush_case("linux-3.2", true))
FX_TEST(dirty_knobs, bgthresh_global_no_background_under_thresh, 60,
	bg_flush_case("linux-3.1", false))

/* ---- chunk ---- */

/*
 * chunk=fixed gives each inode at most MAX_WRITEBACK_PAGES (and the
 * work's pages); chunk=bandwidth rounds up past a 4 MiB multiple: a work
 * of 100 pages writes 100 of a 300-page inode, or all 300.  The
 * writeback_single_inode trace shows the chunk the inode was given.
 */
static void chunk_case(const char *spec, long want_chunk, long want_wrote)
{
	struct wb_writeback_work w;
	char needle[32];
	long ret;

	FX_SETUP(.start = 32000000, .policy = spec, .trace = true);
	tf_open_dirty(1, 512, 300);
	advance(10);

	w = mkwork(W_NONE);
	w.nr_pages = 100;
	cr_assert_eq(writeback_chunk_size(fx.bdi, &w), want_chunk);
	w.nr_pages = LONG_MAX;
	cr_assert_eq(writeback_chunk_size(fx.bdi, &w),
		     want_chunk == 100 ? 1024 : want_chunk);
	w.sync_mode = WB_SYNC_ALL;
	cr_assert_eq(writeback_chunk_size(fx.bdi, &w), LONG_MAX);

	w = mkwork(W_NONE);
	w.nr_pages = 100;
	ret = run(&w);
	cr_assert_eq(ret, want_wrote, "%s: the work wrote %ld pages", spec,
		     ret);
	snprintf(needle, sizeof(needle), "to_write=%ld ", want_chunk);
	cr_assert_geq(trace_count("writeback_single_inode", needle), 1,
		      "%s: no writeback_single_inode with %s", spec, needle);
}

FX_TEST(dirty_knobs, chunk_fixed_is_max_writeback_pages, 60,
	chunk_case("linux-3.2,chunk=fixed", 100, 100))
FX_TEST(dirty_knobs, chunk_bandwidth_rounds_up_to_4mib, 60,
	chunk_case("linux-3.2", 1024, 300))

/* ---- skipcount ---- */

/*
 * A held page is declined by ->writepage: it is charged to the slice
 * (nr_to_write 1: nothing else is written), counted in pages_skipped,
 * and the inode is I_DIRTY_PAGES again after writeback cleared it.
 * 3.2 counts the redirty as a new dirtying; mainline takes it back.
 */
static void skip_charge_case(const char *spec, long dirtied_delta)
{
	struct writeback_control wbc = {
		.sync_mode = WB_SYNC_NONE,
		.nr_to_write = 1,
		.range_cyclic = 1,
		.range_end = LLONG_MAX,
	};
	unsigned long dirtied;
	struct tf *t;

	FX_SETUP(.start = 33000000, .policy = spec);
	t = tf_open_dirty(1, 8, 4);
	tf_hold_page(t, 0);
	spin_lock(&t->inode->i_lock);
	/* as writeback_single_inode() does before writepages */
	t->inode->i_state &= ~I_DIRTY_PAGES;
	spin_unlock(&t->inode->i_lock);
	dirtied = global_page_state(uf_cache_obj(fx.cache), NR_DIRTIED);

	cr_assert_eq(do_writepages(t->inode->i_mapping, &wbc), 0);
	cr_assert_eq(wbc.nr_to_write, 0, "%s: the held page was not charged",
		     spec);
	cr_assert_eq(wbc.pages_skipped, 1);
	cr_assert(istate(t) & I_DIRTY_PAGES,
		  "%s: the redirty did not mark the inode", spec);
	cr_assert_eq((long)(global_page_state(uf_cache_obj(fx.cache), NR_DIRTIED) - dirtied),
		     dirtied_delta);
	tf_release_page(t);
	tf_expect_unwritten(t, 1, 3, "pages after the declined one");
}

FX_TEST(dirty_knobs, skipcount_32_charges_and_redirties, 60,
	skip_charge_case("linux-3.2", 1))
FX_TEST(dirty_knobs, skipcount_mainline_charges_not_dirtied, 60,
	skip_charge_case("mainline", 0))

/*
 * An inode whose only dirty page is held: 3.2 counts the declined page
 * as progress, so a 10-page work goes round until its pages are used up
 * by the same page; mainline's progress leaves it out and the work ends
 * after one pass.  (skipcount alone: the rest of linux-3.2.)
 */
static void skip_progress_case(const char *spec, long want)
{
	struct wb_writeback_work w;
	struct tf *t;
	long ret;

	FX_SETUP(.start = 34000000, .policy = spec);
	t = tf_open_dirty(1, 8, 1);
	tf_hold_page(t, 0);
	advance(10);
	w = mkwork(W_NONE);
	w.nr_pages = 10;
	ret = run(&w);
	cr_assert_eq(ret, want, "%s: the work used %ld pages, want %ld", spec,
		     ret, want);
	cr_assert_eq(w.nr_pages, 10 - want);
}

FX_TEST(dirty_knobs, skipcount_32_declined_page_is_progress, 60,
	skip_progress_case("linux-3.2", 10))
FX_TEST(dirty_knobs, skipcount_mainline_declined_page_is_not_progress, 60,
	skip_progress_case("linux-3.2,skipcount=mainline", 1))

/* ---- linux-3.2 vs linux-3.3 ---- */

/* The two presets run the same hooks but the background cutoff and the
 * dirty throttle (3.3's balance_dirty_pages). */
Test(dirty_knobs, linux32_and_linux33_differ_in_the_cutoff_and_bdp)
{
	struct wb_policy a, b;
	const char *sa, *sb;

	cr_assert_eq(wb_policy_resolve("linux-3.2", &a), 0);
	cr_assert_eq(wb_policy_resolve("linux-3.3", &b), 0);
	cr_assert_neq((void *)a.cutoff, (void *)b.cutoff);
	cr_assert_neq((void *)a.balance_dirty_pages,
		      (void *)b.balance_dirty_pages);
	cr_assert_eq(wb_policy_resolve("linux-3.2,cutoff=bg-all,bdp=3.3", &a),
		     0);
	memcpy(a.name, b.name, sizeof(a.name));
	memcpy(a.spec, b.spec, sizeof(a.spec));
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0,
		     "linux-3.2,cutoff=bg-all,bdp=3.3 is not linux-3.3");
	/* and the resolved strings differ in those two knobs */
	cr_assert_eq(wb_policy_resolve("linux-3.2", &a), 0);
	sa = strstr(a.spec, "cutoff=");
	sb = strstr(b.spec, "cutoff=");
	cr_assert_str_eq(sa, "cutoff=fixed kupdate=fixed progress=pages "
			 "bgthresh=bdi chunk=bandwidth skipcount=3.2 "
			 "wcpcap=cap bdp=3.2 reclaim=3.2 timer=cascade");
	cr_assert_str_eq(sb, "cutoff=bg-all kupdate=fixed progress=pages "
			 "bgthresh=bdi chunk=bandwidth skipcount=3.2 "
			 "wcpcap=cap bdp=3.3 reclaim=3.2 timer=cascade");
	cr_assert_eq(strncmp(a.spec + 9, b.spec + 9, (size_t)(sa - a.spec) - 9),
		     0, "\"%s\" vs \"%s\"", a.spec, b.spec);
}

/*
 * And in behaviour: an inode dirtied after a background work started is
 * written by that work under 3.3 (cutoff = now each pass), not under 3.2
 * (cutoff fixed at the work's start: seed 000 B4b).
 */
static int dirty_b_once(struct tf *t, int sync)
{
	(void)sync;
	if (t->arg == 2) {
		t->arg = 0;
		advance(1);
		tf_dirty(&fx.tf[2], 0, 4, 2);
	}
	return 0;
}

static void cutoff_scenario(const char *spec, bool written)
{
	struct wb_writeback_work w;
	struct tf *a;

	FX_SETUP(.start = 35000000, .policy = spec);
	set_bg_thresh_pages(1);
	a = tf_open(1, 8);
	tf_open(2, 8);
	tf_dirty(a, 0, 8, 1);
	mark_sync(a);
	a->on_write_inode = dirty_b_once;
	a->arg = 2;
	advance(5);
	w = mkwork(W_BACKGROUND);
	run(&w);
	if (written)
		tf_expect_on_dev(&fx.tf[2], 0, 4, 2, "B (dirtied during)");
	else
		tf_expect_unwritten(&fx.tf[2], 0, 4, "B (dirtied during)");
}

FX_TEST(dirty_knobs, linux33_background_takes_inodes_dirtied_after_start,
	60, cutoff_scenario("linux-3.3", true))
FX_TEST(dirty_knobs, linux32_background_keeps_its_start_cutoff, 60,
	cutoff_scenario("linux-3.2", false))

/* ---- wcpcap ---- */

struct mapper {
	unsigned long extent;		/* most pages mapped per call */
	int calls;
};

static int map_some(struct uf_file *f, void *priv, unsigned long index,
		    unsigned long nr)
{
	struct mapper *m = priv;

	(void)f;
	(void)index;
	__atomic_add_fetch(&m->calls, 1, __ATOMIC_RELAXED);
	return (int)(nr < m->extent ? nr : m->extent);
}

/*
 * fsync of N contiguous dirty pages of a file whose mapper maps 64 pages
 * a call: stock looks at N + (N-64) + ... pages, about N^2/128; cap at N
 * plus a little (WC-3).  Every page reaches the device either way.
 */
static unsigned long wcp_case(const char *spec, unsigned long n)
{
	static struct mapper m;
	static struct uf_file_ops ops;
	struct uf_dev_stats s0, s1;
	struct tf *t;

	FX_SETUP(.start = 36000000, .policy = spec, .nr_pages = 2 * n);
	set_bg_thresh_pages(n);
	m = (struct mapper){ .extent = 64 };
	ops = (struct uf_file_ops){ .map_blocks = map_some,
				    .max_extent_pages = 64 };
	t = tf_open_ops(1, n, &ops, &m);
	tf_dirty(t, 0, n, 7);
	cr_assert_eq(uf_dev_stats(fx.dev, &s0), 0);
	cr_assert_eq(uf_fsync(t->f), 0);
	cr_assert_eq(uf_dev_stats(fx.dev, &s1), 0);
	tf_expect_on_dev(t, 0, n, 7, "the fsynced file");
	cr_assert_eq(m.calls, (int)(n / 64), "%s: %d map_blocks calls", spec,
		     m.calls);
	return s1.wcp_pages_scanned - s0.wcp_pages_scanned;
}

Test(dirty_knobs, wcpcap_cap_scans_each_page_once, .fini = fx_fini,
     .timeout = 60)
{
	unsigned long n = 1024, scanned = wcp_case("linux-3.2", n);

	cr_assert_geq(scanned, n);
	cr_assert_leq(scanned, n + n / 64 + 16,
		      "cap: %lu pages looked at for %lu dirty", scanned, n);
}

Test(dirty_knobs, wcpcap_stock_scans_quadratically, .fini = fx_fini,
     .timeout = 60)
{
	unsigned long n = 1024,
		      scanned = wcp_case("linux-3.2,wcpcap=stock", n);

	/* 1024 + 960 + ... + 64 = 8704 */
	cr_assert_eq(scanned, n / 64 * (n + 64) / 2,
		     "stock: %lu pages looked at for %lu dirty", scanned, n);
}

/* What map_refusing() answers until map_all is set. */
static int map_answer;
static bool map_all;

static int map_refusing(struct uf_file *f, void *priv, unsigned long index,
			unsigned long nr)
{
	(void)f;
	(void)priv;
	(void)index;
	return map_all ? (int)nr : map_answer;
}

/*
 * A mapper that maps nothing (-EAGAIN from the fsync), or fails (its
 * -errno): nothing is written and the pages stay dirty.  Then it maps
 * again and the next fsync writes the file.
 */
static void map_refused_case(int answer, int want)
{
	static const struct uf_file_ops ops = { .map_blocks = map_refusing };
	struct tf *t;

	FX_SETUP(.start = 37000000, .policy = "linux-3.2");
	map_answer = answer;
	map_all = false;
	t = tf_open_ops(1, 64, &ops, NULL);
	tf_dirty(t, 0, 64, 3);
	cr_assert_eq(uf_fsync(t->f), want);
	cr_assert_eq(reclaimable(fx.bdi), 64, "the pages did not stay dirty");
	tf_expect_unwritten(t, 0, 64, "the unmapped file");
	map_all = true;
	cr_assert_eq(uf_fsync(t->f), 0);
	tf_expect_on_dev(t, 0, 64, 3, "the file, mapped at last");
}

FX_TEST(dirty_knobs, map_blocks_nothing_mapped_fsync_eagain, 60,
	map_refused_case(0, -EAGAIN))
FX_TEST(dirty_knobs, map_blocks_error_reaches_fsync, 60,
	map_refused_case(-ENOSPC, -ENOSPC))

/*
 * 3.2's writeback_nothread is a writeback_work_class event: a work queued
 * on a device without a flusher traces the work's fields.
 */
Test(dirty_knobs, writeback_nothread_traces_the_work, .fini = fx_fini,
     .timeout = 60)
{
	FX_SETUP(.start = 38000000, .policy = "linux-3.2", .trace = true);
	bdi_start_writeback(fx.bdi, 77, WB_REASON_FREE_MORE_MEM);
	cr_assert(work_queued());
	wb_do_writeback(fx.wb, 0);	/* runs and frees it */
	cr_assert_eq(trace_count("writeback_nothread",
				 "nr_pages=77 sync_mode=0 kupdate=0 "
				 "range_cyclic=1 background=0 "
				 "reason=free_more_memory"), 1);
}
