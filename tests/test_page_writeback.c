// SPDX-License-Identifier: MIT
/*
 * tests/test_page_writeback.c - engine/mm/page-writeback.c and proportions.c:
 * dirty limits, per-device shares, chunk sizes, the bandwidth estimate,
 * dirty/writeback accounting and tags, and write_cache_pages() (range,
 * range_cyclic, nr_to_write, tagging, request merging and its cap, bytes
 * on the device, write errors, the embedder's veto, the dirty throttle).
 *
 * Pure functions run on a hand-made cache and bdi.  Everything that needs
 * pages runs on a real cache opened through the public API, on a scratch
 * device (a plain O_DIRECT file: always available) registered without its
 * flusher (UF_DEV_NO_FLUSHER), so that the test is the only writer.
 *
 * Requests are counted by holding the device's completions (a shaped
 * device's stall): while held, each page under writeback points at its
 * request (page->private), which shows how the pages were grouped.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "lib/proportions.h"
#include "mm/dirty-throttle.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "testutil.h"

#define FX_CACHE_PAGES	1024UL
#define FX_FILE_PAGES	64UL
#define FX_FILE_OFF	FX_SLOT		/* ino 1: 8 MiB into the device */
#define STALL_MS	5000U


/* ------------------------------------------------------------------ */
/* A real cache, device and file (tests/fixture.h), on the real clock  */

static struct {
	struct tf *t;			/* the file, ino 1 */
	struct address_space *m;
	const char *policy;		/* for fx_open; NULL: the default */
} pw;

static void fx_fini(void)
{
	fx_teardown(NULL);
	memset(&pw, 0, sizeof(pw));
}

static void fx_open_kind(bool loop, unsigned int max_io_pages,
			 const struct uf_file_ops *ops, void *priv)
{
	FX_SETUP(.real_clock = true, .loop = loop, .shaped = true,
		 .nr_pages = FX_CACHE_PAGES, .max_io_pages = max_io_pages,
		 .set_dwi = true, .dwi = 0,	/* no kupdate */
		 .policy = pw.policy);
	if (ops)
		pw.t = tf_open_ops(1, FX_FILE_PAGES, ops, priv);
	else
		pw.t = tf_open(1, FX_FILE_PAGES);
	pw.m = pw.t->inode->i_mapping;
}

static void fx_open_ops(unsigned int max_io_pages,
			const struct uf_file_ops *ops, void *priv)
{
	fx_open_kind(false, max_io_pages, ops, priv);
}

static void fx_open(unsigned int max_io_pages)
{
	fx_open_ops(max_io_pages, NULL, NULL);
}

/* Write pattern @seed over pages [first, first+nr) of the file. */
static void dirty_pages(unsigned long first, unsigned long nr, uint32_t seed)
{
	tf_dirty(pw.t, first, nr, seed);
}

/* The cached page at @index (the page cache keeps it alive). */
static struct page *page_at(unsigned long index)
{
	struct page *page = find_get_page(pw.m, index);

	cr_assert(page, "page %lu is not cached", index);
	put_page(uf_cache_obj(fx.cache), page);
	return page;
}

static bool tagged(unsigned long index, int tag)
{
	int ret;

	spin_lock(&pw.m->tree_lock);
	ret = radix_tree_tag_get(&pw.m->page_tree, index, (unsigned)tag);
	spin_unlock(&pw.m->tree_lock);
	return ret != 0;
}

static unsigned long vm(enum vm_stat_item i)
{
	return global_page_state(uf_cache_obj(fx.cache), i);
}

static unsigned long bs(enum bdi_stat_item i)
{
	return bdi_stat(fx.bdi, i);
}

/* Dirty pages among [0, FX_FILE_PAGES), as a bitmask (pages < 64). */
static uint64_t dirty_mask(void)
{
	uint64_t mask = 0;
	unsigned long i;

	for (i = 0; i < FX_FILE_PAGES; i++) {
		struct page *page = find_get_page(pw.m, i);

		if (!page)
			continue;
		if (PageDirty(page))
			mask |= 1ULL << i;
		put_page(uf_cache_obj(fx.cache), page);
	}
	return mask;
}

static uint64_t bits(unsigned long first, unsigned long nr)
{
	return (nr >= 64 ? ~0ULL : ((1ULL << nr) - 1)) << first;
}

static struct writeback_control wbc_make(enum writeback_sync_modes mode,
					 long nr_to_write)
{
	struct writeback_control wbc = {
		.nr_to_write = nr_to_write,
		.sync_mode = mode,
		.range_start = 0,
		.range_end = LLONG_MAX,
	};

	return wbc;
}

static void wait_written(void)
{
	int ret = filemap_fdatawait(pw.m);

	cr_assert_eq(ret, 0, "filemap_fdatawait: %s", strerror(-ret));
	cr_assert_eq(vm(NR_WRITEBACK), 0);
	cr_assert_eq(bs(BDI_WRITEBACK), 0);
}

/* ------------------------------------------------------------------ */
/* global_dirty_limits                                                 */

/*
 * One step of a limits scenario: the counters and knobs it sets (0 leaves
 * one as it is), then the background and dirty limits in pages that
 * global_dirty_limits() must give.  Steps run in order on one cache.
 */
struct limits_step {
	unsigned long file_pages, file_dirty;
	unsigned long ratio, bg_ratio, bytes, bg_bytes;
	unsigned long bg, dirty;
	const char *why;
};

static void set_if(unsigned long *knob, unsigned long v)
{
	if (v)
		*knob = v;
}

/* Ends at a step without a why. */
static void run_limits(unsigned long nr_pages, const struct limits_step *st)
{
	struct limits_hand *h = limits_hand_new(nr_pages);
	unsigned long bg, dirty;
	unsigned int i;

	for (i = 0; st->why; i++, st++) {
		if (st->file_pages)
			h->c.vm_stat[NR_FILE_PAGES] = (long)st->file_pages;
		if (st->file_dirty)
			h->c.vm_stat[NR_FILE_DIRTY] = (long)st->file_dirty;
		set_if(&h->c.vm.vm_dirty_ratio, st->ratio);
		set_if(&h->c.vm.dirty_background_ratio, st->bg_ratio);
		set_if(&h->c.vm.vm_dirty_bytes, st->bytes);
		set_if(&h->c.vm.dirty_background_bytes, st->bg_bytes);
		global_dirty_limits(&h->c, &bg, &dirty);
		cr_assert_eq(dirty, st->dirty,
			     "step %u (%s): dirty limit %lu, want %lu", i,
			     st->why, dirty, st->dirty);
		cr_assert_eq(bg, st->bg,
			     "step %u (%s): background limit %lu, want %lu", i,
			     st->why, bg, st->bg);
	}
	limits_hand_free(h);
}

/* The scenarios, each a run of steps on a cache of its own */
static const struct limits_step from_ratios[] = {
	{ .file_pages = 999, .bg = 10 * 2000 / 100, .dirty = 20 * 2000 / 100,
	  .why = "dirtyable = free + file pages (+1, never 0)" },
	{ .file_dirty = 500, .bg = 200, .dirty = 400,
	  .why = "dirty pages are not subtracted: they are file pages" },
	{ .ratio = 50, .bg_ratio = 1, .bg = 20, .dirty = 1000, .why = "50/1" },
	{ 0 }
}, bytes_win[] = {
	{ .bytes = 100 * PAGE_SIZE + 1, .bg = 50, .dirty = 101,
	  .why = "bytes round up; 10% of 10001 is over 101: halved" },
	{ .bg_bytes = 40 * PAGE_SIZE, .bg = 40, .dirty = 101, .why = "bg" },
	{ .ratio = 90, .bg_ratio = 80, .bg = 40, .dirty = 101,
	  .why = "bytes alone: the ratios do not matter any more" },
	{ 0 }
}, bg_halved[] = {
	{ .ratio = 20, .bg_ratio = 20, .bg = 100, .dirty = 200,
	  .why = "equal" },
	{ .bg_ratio = 30, .bg = 100, .dirty = 200, .why = "over: halved" },
	{ .bg_ratio = 19, .bg = 190, .dirty = 200, .why = "under: kept" },
	{ .bytes = 64 * PAGE_SIZE, .bg_bytes = 64 * PAGE_SIZE, .bg = 32,
	  .dirty = 64, .why = "bytes, equal: halved" },
	{ 0 }
};

Test(page_writeback, dirty_limits_from_ratios)
{
	run_limits(1000, from_ratios);
}

Test(page_writeback, dirty_limits_bytes_win_over_ratios)
{
	run_limits(10000, bytes_win);
}

Test(page_writeback, background_at_or_over_dirty_is_halved)
{
	run_limits(999, bg_halved);
}

/* ------------------------------------------------------------------ */
/* Per-device shares                                                   */

static void completions(struct backing_dev_info *bdi, unsigned long nr)
{
	while (nr--)
		bdi_writeout_inc(bdi);
}

Test(page_writeback, share_single_device_is_whole)
{
	struct limits_hand *h = limits_hand_new(100000);

	/* no history at all: the whole limit */
	cr_assert_eq(bdi_dirty_limit(&h->bdi[0], 1000), 1000);
	completions(&h->bdi[0], 12345);
	cr_assert_eq(bdi_dirty_limit(&h->bdi[0], 1000), 1000);
	cr_assert_eq(bdi_stat(&h->bdi[0], BDI_WRITTEN), 12345);
	limits_hand_free(h);
}

Test(page_writeback, share_splits_between_two_devices)
{
	struct limits_hand *h = limits_hand_new(100000);
	struct backing_dev_info *a = &h->bdi[0], *b = &h->bdi[1];
	long num, den;

	completions(a, 300);
	/* b has no completions while a has: b's share is 0 */
	cr_assert_eq(bdi_dirty_limit(b, 1000), 0);
	completions(b, 100);
	bdi_writeout_fraction(a, &num, &den);
	cr_assert_eq(num, 300);
	cr_assert_eq(den, 400);
	cr_assert_eq(bdi_dirty_limit(a, 1000), 750);
	cr_assert_eq(bdi_dirty_limit(b, 1000), 250);

	/* seed 001 BG-4: min_ratio / max_ratio, integer math as the kernel */
	cr_assert_eq(bdi_set_max_ratio(b, 10), 0);
	cr_assert_eq(bdi_dirty_limit(b, 1000), 100);
	cr_assert_eq(bdi_set_max_ratio(b, 100), 0);
	cr_assert_eq(bdi_set_min_ratio(b, 5), 0);
	cr_assert_eq(bdi_dirty_limit(b, 1000), 950 / 4 + 50);	/* 287 */
	/* a pays for b's reserve */
	cr_assert_eq(bdi_dirty_limit(a, 1000), 950 * 3 / 4);
	/* the reserves must leave something to share; min <= max */
	cr_assert_eq(bdi_set_min_ratio(a, 95), -EINVAL);
	cr_assert_eq(bdi_set_min_ratio(a, 94), 0);
	cr_assert_eq(bdi_set_max_ratio(a, 50), -EINVAL);
	cr_assert_eq(bdi_set_max_ratio(a, 101), -EINVAL);
	limits_hand_free(h);
}

Test(page_writeback, share_follows_recent_completions)
{
	struct limits_hand *h = limits_hand_new(100000);
	struct backing_dev_info *a = &h->bdi[0], *b = &h->bdi[1];
	unsigned long prev, now;
	int round;

	completions(a, 50000);
	completions(b, 1);
	prev = bdi_dirty_limit(a, 1000000);
	cr_assert_geq(prev, 999000);
	/* only b completes from now on: a's share decays, period by period */
	for (round = 0; round < 8; round++) {
		completions(b, 20000);
		now = bdi_dirty_limit(a, 1000000);
		cr_assert_lt(now, prev, "round %d: a's share did not fall (%lu)",
			     round, now);
		cr_assert_eq(bdi_dirty_limit(a, 1000000) +
			     bdi_dirty_limit(b, 1000000) <= 1000000, true);
		prev = now;
	}
	cr_assert_lt(prev, 1000000 / 20, "a still holds %lu", prev);
	limits_hand_free(h);
}

/* ------------------------------------------------------------------ */
/* writeback_chunk_size                                                */

Test(page_writeback, chunk_size_rules)
{
	struct limits_hand *h = limits_hand_new(1000000);
	struct backing_dev_info *bdi = &h->bdi[0];
	struct wb_writeback_work work = {
		.nr_pages = LONG_MAX,
		.sync_mode = WB_SYNC_NONE,
	};

	/* dirty limit: 800000 pages, / DIRTY_SCOPE = 100000 */
	h->c.vm.vm_dirty_bytes = 800000 * PAGE_SIZE;
	page_writeback_init(&h->c);
	cr_assert_eq(global_dirty_limit(&h->c), 800000);

	/* half the bandwidth, rounded to the next multiple of 1024 above */
	bdi->avg_write_bandwidth = 5000;
	cr_assert_eq(writeback_chunk_size(bdi, &work), 3072);
	bdi->avg_write_bandwidth = 4096;
	cr_assert_eq(writeback_chunk_size(bdi, &work), 3072);
	/* never under MIN_WRITEBACK_PAGES (4 MiB), even with no bandwidth */
	bdi->avg_write_bandwidth = 0;
	cr_assert_eq(writeback_chunk_size(bdi, &work), 1024);
	/* capped by 1/8 of the dirty limit */
	bdi->avg_write_bandwidth = 1000000;
	cr_assert_eq(writeback_chunk_size(bdi, &work), 100352);
	/* and by the work's pages */
	work.nr_pages = 100;
	cr_assert_eq(writeback_chunk_size(bdi, &work), 1024);
	work.nr_pages = 2048;
	cr_assert_eq(writeback_chunk_size(bdi, &work), 3072);

	/* integrity writeback takes each inode whole */
	work.tagged_writepages = 1;
	cr_assert_eq(writeback_chunk_size(bdi, &work), LONG_MAX);
	work.tagged_writepages = 0;
	work.sync_mode = WB_SYNC_ALL;
	cr_assert_eq(writeback_chunk_size(bdi, &work), LONG_MAX);
	limits_hand_free(h);
}

/* ------------------------------------------------------------------ */
/* Bandwidth estimate (virtual clock)                                  */

/* A real cache, device and file under @policy on the virtual clock. */
static struct backing_dev_info *fx_open_virtual(const char *policy)
{
	FX_SETUP(.start = 1000000, .shaped = true, .nr_pages = FX_CACHE_PAGES,
		 .set_dwi = true, .dwi = 0, .policy = policy);
	pw.t = tf_open(1, FX_FILE_PAGES);
	pw.m = pw.t->inode->i_mapping;
	return pw.m->backing_dev_info;
}

/* what wb_writeback() does after a pass (engine/fs/fs-writeback.c) */
static void bdi_bandwidth_pass(struct backing_dev_info *bdi)
{
	spin_lock(&bdi->wb.list_lock);
	if (bdi_bandwidth_per_pass(bdi))
		bdi_update_bandwidth(bdi, jiffies);
	spin_unlock(&bdi->wb.list_lock);
}

/*
 * 6.18 updates the write bandwidth from do_writepages() (2593-2629): after
 * the walk, when bw_time_stamp is BANDWIDTH_INTERVAL (HZ/5) old; its
 * wb_writeback() no longer does, so under bdp=mainline the flusher's
 * per-pass bdi_update_bandwidth() is a no-op.  Before the walk, after over
 * a second with no page under writeback, wb_bandwidth_estimate_start()
 * restarts the stamps without an estimate.  linux-3.2: the other way round.
 */
static void bandwidth_updated_by(const char *policy, bool mainline)
{
	struct backing_dev_info *bdi = fx_open_virtual(policy);
	struct writeback_control wbc;
	unsigned long stamp = bdi->bw_time_stamp, bw, written;

	dirty_pages(0, 10, 7);
	advance((unsigned long)HZ / 5 + 1);
	bdi_bandwidth_pass(bdi);
	cr_assert_eq(bdi->bw_time_stamp, mainline ? stamp : jiffies,
		     "%s: the flusher's pass", policy);
	stamp = bdi->bw_time_stamp;

	advance((unsigned long)HZ / 5 + 1);
	wbc = wbc_make(WB_SYNC_NONE, LONG_MAX);
	cr_assert_eq(do_writepages(pw.m, &wbc), 0);
	cr_assert_eq(bdi->bw_time_stamp, mainline ? jiffies : stamp,
		     "%s: do_writepages", policy);
	wait_written();

	/* idle over a second, nothing under writeback: a restart only */
	advance(2UL * (unsigned long)HZ);
	bw = bdi->write_bandwidth;
	stamp = bdi->bw_time_stamp;
	dirty_pages(10, 1, 7);
	/* what was written before the restart: the page it submits may
	 * complete (and count) before the checks below */
	written = bs(BDI_WRITTEN);
	wbc = wbc_make(WB_SYNC_NONE, LONG_MAX);
	cr_assert_eq(do_writepages(pw.m, &wbc), 0);
	cr_assert_eq(bdi->bw_time_stamp, mainline ? jiffies : stamp,
		     "%s: the restart", policy);
	cr_assert_eq(bdi->write_bandwidth, bw, "%s: no estimate", policy);
	if (mainline)
		cr_assert_eq(bdi->written_stamp, written);
	wait_written();
}

Test(page_writeback, bandwidth_from_do_writepages_618, .fini = fx_fini)
{
	bandwidth_updated_by("mainline", true);
}

Test(page_writeback, bandwidth_from_the_flusher_pass_v32, .fini = fx_fini)
{
	bandwidth_updated_by("linux-3.2", false);
}

Test(page_writeback, bandwidth_tracks_completions)
{
	struct limits_hand *h = limits_hand_new(1000);
	struct backing_dev_info *bdi = &h->bdi[0];
	unsigned long start, stamp, bw;
	int i;

	uf_clock_set_virtual(1000000);
	start = uf_jiffies();
	bdi->bw_time_stamp = start;
	bdi->write_bandwidth = bdi->avg_write_bandwidth = 25600;

	/* at most one update per BANDWIDTH_INTERVAL (HZ/5) */
	bdi->bdi_stat[BDI_WRITTEN] = 100;
	cr_assert_eq(uf_clock_advance((unsigned long)HZ / 5 - 1), 0);
	spin_lock(&bdi->wb.list_lock);
	bdi_update_bandwidth(bdi, start);
	spin_unlock(&bdi->wb.list_lock);
	cr_assert_eq(bdi->bw_time_stamp, start);
	cr_assert_eq(bdi->write_bandwidth, 25600);
	bdi->bdi_stat[BDI_WRITTEN] = 0;

	/* 1000 pages every 200 ms: 5000 pages/s, over 30 s */
	for (i = 0; i < 150; i++) {
		bdi->bdi_stat[BDI_WRITTEN] += 1000;
		cr_assert_eq(uf_clock_advance((unsigned long)HZ / 5 -
					      (i ? 0 : HZ / 5 - 1)), 0);
		spin_lock(&bdi->wb.list_lock);
		bdi_update_bandwidth(bdi, start);
		spin_unlock(&bdi->wb.list_lock);
	}
	cr_assert(bdi->write_bandwidth > 4900 && bdi->write_bandwidth < 5100,
		  "write_bandwidth %lu", bdi->write_bandwidth);
	cr_assert(bdi->avg_write_bandwidth > 4500 &&
		  bdi->avg_write_bandwidth < 5500,
		  "avg_write_bandwidth %lu", bdi->avg_write_bandwidth);

	/* an idle second before this work started is skipped, not averaged */
	bw = bdi->write_bandwidth;
	cr_assert_eq(uf_clock_advance(3UL * (unsigned long)HZ), 0);
	stamp = uf_jiffies();
	bdi->bdi_stat[BDI_WRITTEN] += 10;
	spin_lock(&bdi->wb.list_lock);
	bdi_update_bandwidth(bdi, stamp);
	spin_unlock(&bdi->wb.list_lock);
	cr_assert_eq(bdi->write_bandwidth, bw);
	cr_assert_eq(bdi->bw_time_stamp, stamp);
	cr_assert_eq(bdi->written_stamp, bdi_stat(bdi, BDI_WRITTEN));
	uf_clock_set_real();
	limits_hand_free(h);
}

/* ------------------------------------------------------------------ */
/* Accounting and tags                                                 */

Test(page_writeback, dirty_and_writeback_accounting, .fini = fx_fini)
{
	struct page *p0, *p1;

	fx_open(256);
	dirty_pages(0, 3, 1);
	cr_assert_eq(vm(NR_FILE_DIRTY), 3);
	cr_assert_eq(vm(NR_DIRTIED), 3);
	cr_assert_eq(bs(BDI_RECLAIMABLE), 3);
	cr_assert_eq(bs(BDI_DIRTIED), 3);
	cr_assert(pw.t->inode->i_state & I_DIRTY_PAGES);
	cr_assert(tagged(0, PAGECACHE_TAG_DIRTY) &&
		  tagged(1, PAGECACHE_TAG_DIRTY) &&
		  tagged(2, PAGECACHE_TAG_DIRTY));

	/* dirtying a dirty page changes nothing */
	p0 = page_at(0);
	cr_assert_eq(set_page_dirty(p0), 0);
	cr_assert_eq(vm(NR_FILE_DIRTY), 3);
	cr_assert_eq(vm(NR_DIRTIED), 3);

	/* clear for I/O: counts drop, the DIRTY tag stays */
	lock_page(p0);
	cr_assert_eq(clear_page_dirty_for_io(p0), 1);
	cr_assert_eq(clear_page_dirty_for_io(p0), 0);
	cr_assert_eq(vm(NR_FILE_DIRTY), 2);
	cr_assert_eq(bs(BDI_RECLAIMABLE), 2);
	cr_assert(tagged(0, PAGECACHE_TAG_DIRTY));

	/* under writeback: WRITEBACK tag, DIRTY and TOWRITE tags gone */
	tag_pages_for_writeback(pw.m, 0, 10);
	cr_assert(tagged(0, PAGECACHE_TAG_TOWRITE));
	cr_assert_eq(test_set_page_writeback(p0), 0);
	unlock_page(p0);
	cr_assert(PageWriteback(p0));
	cr_assert(tagged(0, PAGECACHE_TAG_WRITEBACK));
	cr_assert(!tagged(0, PAGECACHE_TAG_DIRTY));
	cr_assert(!tagged(0, PAGECACHE_TAG_TOWRITE));
	cr_assert_eq(vm(NR_WRITEBACK), 1);
	cr_assert_eq(bs(BDI_WRITEBACK), 1);

	/* completion */
	cr_assert_eq(test_clear_page_writeback(p0), 1);
	cr_assert_eq(test_clear_page_writeback(p0), 0);
	cr_assert(!tagged(0, PAGECACHE_TAG_WRITEBACK));
	cr_assert_eq(vm(NR_WRITEBACK), 0);
	cr_assert_eq(bs(BDI_WRITEBACK), 0);
	cr_assert_eq(vm(NR_WRITTEN), 1);
	cr_assert_eq(bs(BDI_WRITTEN), 1);

	/* redirtied before writeback starts: the DIRTY tag survives it */
	p1 = page_at(1);
	lock_page(p1);
	cr_assert_eq(clear_page_dirty_for_io(p1), 1);
	cr_assert_eq(set_page_dirty(p1), 1);
	cr_assert_eq(test_set_page_writeback(p1), 0);
	unlock_page(p1);
	cr_assert(tagged(1, PAGECACHE_TAG_DIRTY));
	cr_assert(!tagged(1, PAGECACHE_TAG_TOWRITE));
	cr_assert(tagged(1, PAGECACHE_TAG_WRITEBACK));
	cr_assert_eq(test_clear_page_writeback(p1), 1);

	/* write the rest: every counter back to zero, dirtied == written */
	{
		struct writeback_control wbc = wbc_make(WB_SYNC_ALL, LONG_MAX);

		cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	}
	wait_written();
	cr_assert_eq(vm(NR_FILE_DIRTY), 0);
	cr_assert_eq(bs(BDI_RECLAIMABLE), 0);
	cr_assert_eq(vm(NR_DIRTIED), 4);
	cr_assert_eq(vm(NR_WRITTEN), 4);
	cr_assert_eq(bs(BDI_DIRTIED), bs(BDI_WRITTEN));
	cr_assert(!mapping_tagged(pw.m, PAGECACHE_TAG_DIRTY));
	cr_assert(!mapping_tagged(pw.m, PAGECACHE_TAG_TOWRITE));
	cr_assert(!mapping_tagged(pw.m, PAGECACHE_TAG_WRITEBACK));
	cr_assert_eq(uf_bug_count(), 0, "a WARN/BUG fired");
}

Test(page_writeback, tag_pages_for_writeback_in_batches)
{
	static char items[6000];
	struct address_space m;
	unsigned long i, n;
	void *found[64];

	memset(&m, 0, sizeof(m));
	INIT_RADIX_TREE(&m.page_tree);
	spin_lock_init(&m.tree_lock);
	for (i = 0; i < 6000; i++) {
		cr_assert_eq(radix_tree_insert(&m.page_tree, i, &items[i]), 0);
		if (i % 5)	/* 4800 dirty: more than one batch */
			radix_tree_tag_set(&m.page_tree, i,
					   PAGECACHE_TAG_DIRTY);
	}
	tag_pages_for_writeback(&m, 100, ULONG_MAX);
	for (n = 0, i = 0; i < 6000; i++) {
		bool towrite = radix_tree_tag_get(&m.page_tree, i,
						  PAGECACHE_TAG_TOWRITE);

		cr_assert_eq(towrite, i >= 100 && i % 5,
			     "index %lu: TOWRITE %d", i, towrite);
		n += towrite;
	}
	cr_assert_eq(n, 5900 * 4 / 5);
	cr_assert_gt(n, 4096);
	cr_assert_eq(radix_tree_gang_lookup_tag(&m.page_tree, found, 0, 64,
						PAGECACHE_TAG_TOWRITE), 64);
	cr_assert_eq(found[0], &items[101]);
	radix_tree_destroy(&m.page_tree);
}

/* ------------------------------------------------------------------ */
/* write_cache_pages: which pages                                      */

Test(page_writeback, nr_to_write_stops_only_sync_none, .fini = fx_fini)
{
	struct writeback_control wbc;

	fx_open(256);
	dirty_pages(0, 10, 2);

	wbc = wbc_make(WB_SYNC_NONE, 4);
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(wbc.nr_to_write, 0);
	cr_assert_eq(dirty_mask(), bits(4, 6));
	cr_assert_eq(vm(NR_FILE_DIRTY), 6);
	/* not range_cyclic and the slice ran out: writeback_index stays */
	cr_assert_eq(pw.m->writeback_index, 0);

	/* integrity writeback writes everything it tagged, slice or not */
	wbc = wbc_make(WB_SYNC_ALL, 4);
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(wbc.nr_to_write, -2);
	cr_assert_eq(dirty_mask(), 0);
	wait_written();
	cr_assert_eq(vm(NR_WRITTEN), 10);
}

Test(page_writeback, range_limits_the_walk, .fini = fx_fini)
{
	struct writeback_control wbc = wbc_make(WB_SYNC_NONE, LONG_MAX);

	fx_open(256);
	dirty_pages(0, 10, 3);
	wbc.range_start = 2 * PAGE_SIZE + 100;	/* page 2 */
	wbc.range_end = 6 * PAGE_SIZE - 1;	/* page 5 */
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(wbc.nr_to_write, LONG_MAX - 4);
	cr_assert_eq(dirty_mask(), bits(0, 2) | bits(6, 4));
	wait_written();
}

Test(page_writeback, range_cyclic_resumes_and_wraps, .fini = fx_fini)
{
	struct writeback_control wbc;

	pw.policy = "linux-3.2";	/* the wrap is 3.x's */
	fx_open(256);
	dirty_pages(0, 10, 4);

	wbc = wbc_make(WB_SYNC_NONE, 4);
	wbc.range_cyclic = 1;
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(dirty_mask(), bits(4, 6));
	/* 3.2: the index of the last page written */
	cr_assert_eq(pw.m->writeback_index, 3);

	wbc.nr_to_write = 4;
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(dirty_mask(), bits(8, 2));
	cr_assert_eq(pw.m->writeback_index, 7);

	/* a page before the cursor is redirtied: reached by wrapping */
	dirty_pages(1, 1, 5);
	wbc.nr_to_write = 4;
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(dirty_mask(), 0);
	cr_assert_eq(wbc.nr_to_write, 1);
	cr_assert_eq(pw.m->writeback_index, 1);
	wait_written();

	/* the first pass runs from the cursor to the end, the wrap from 0 up
	 * to the cursor; writeback_index ends on the last page written */
	dirty_pages(0, 1, 6);
	dirty_pages(5, 1, 6);
	pw.m->writeback_index = 3;
	wbc.nr_to_write = LONG_MAX;
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(dirty_mask(), 0);
	cr_assert_eq(wbc.nr_to_write, LONG_MAX - 2);
	cr_assert_eq(pw.m->writeback_index, 0);
	wait_written();
}

/*
 * bdp=mainline: 6.18's writeback_iter() (2504-2570) walks a range_cyclic
 * pass from writeback_index to the end of the file and never wraps to
 * index 0 (commit 64081362e8ff, v4.20); a pass cut short by the slice
 * leaves writeback_index on the page after the last one written, a pass
 * that reached the end leaves 0 for the next one.  A non-cyclic pass does
 * not move writeback_index, even over the whole file.
 */
Test(page_writeback, range_cyclic_does_not_wrap_618, .fini = fx_fini)
{
	struct writeback_control wbc;

	unsigned long i;

	pw.policy = "mainline";
	fx_open(256);
	/* page by page: 4 KiB folios, so that rewriting page 1 below dirties
	 * it alone (into a clean 8-page folio it would dirty all 8:
	 * tests/test_folio.c) */
	for (i = 0; i < 10; i++)
		dirty_pages(i, 1, 4);

	wbc = wbc_make(WB_SYNC_NONE, 4);
	wbc.range_cyclic = 1;
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(dirty_mask(), bits(4, 6));
	cr_assert_eq(pw.m->writeback_index, 4);	/* 3.2: 3 */

	/* from 4 to the end; pages before the cursor wait for the next */
	dirty_pages(1, 1, 5);
	wbc.nr_to_write = LONG_MAX;
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(dirty_mask(), bits(1, 1));
	cr_assert_eq(wbc.nr_to_write, LONG_MAX - 6);
	cr_assert_eq(pw.m->writeback_index, 0);

	wbc.nr_to_write = LONG_MAX;
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(dirty_mask(), 0);
	cr_assert_eq(wbc.nr_to_write, LONG_MAX - 1);
	cr_assert_eq(pw.m->writeback_index, 0);
	wait_written();

	/* a whole-file, non-cyclic pass leaves the cursor alone */
	dirty_pages(0, 3, 6);
	pw.m->writeback_index = 5;
	wbc = wbc_make(WB_SYNC_NONE, LONG_MAX);
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(dirty_mask(), 0);
	cr_assert_eq(pw.m->writeback_index, 5);	/* 3.2: 2 */
	wait_written();
}

/*
 * A helper thread that publishes its task, so that the test can wait until
 * exactly that thread sleeps (uf_wait_task_sleeping), holding a reference
 * until joined.  Helper threads never assert: criterion aborts a test by
 * longjmp, which only works on the test's own thread.
 */
struct helper {
	pthread_t thread;
	struct task_struct *task;
	bool done;
};

static void helper_started(struct helper *h)
{
	struct task_struct *me = current;

	get_task_struct(me);
	__atomic_store_n(&h->task, me, __ATOMIC_RELEASE);
}

static void helper_finished(struct helper *h)
{
	__atomic_store_n(&h->done, true, __ATOMIC_RELEASE);
}

static bool helper_done(struct helper *h)
{
	return __atomic_load_n(&h->done, __ATOMIC_ACQUIRE);
}

/* Wait (bounded) until the helper sleeps in schedule(). */
static int helper_wait_sleeping(struct helper *h, unsigned int ms)
{
	uint64_t t0 = uf_now_ns();
	struct task_struct *task;

	while (!(task = __atomic_load_n(&h->task, __ATOMIC_ACQUIRE))) {
		if (tu_ms_since(t0) > ms)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return uf_wait_task_sleeping(task, ms);
}

static void helper_join(struct helper *h)
{
	pthread_join(h->thread, NULL);
	if (h->task)
		put_task_struct(h->task);
	h->task = NULL;
}

/* The walk in another thread, so the test can dirty a page during it. */
struct walker {
	struct helper h;
	struct writeback_control wbc;
	int ret;
};

static void *walker_fn(void *arg)
{
	struct walker *w = arg;

	helper_started(&w->h);
	w->ret = write_cache_pages(pw.m, &w->wbc);
	helper_finished(&w->h);
	return NULL;
}

/*
 * Pages 0-3 dirty; the walk blocks on page 2, which the test holds locked;
 * meanwhile page 6 is dirtied; then page 2 is released.  Returns whether
 * page 6 is still dirty after the walk.
 */
static bool page_dirtied_during_walk_survives(struct writeback_control wbc)
{
	struct walker w = { .wbc = wbc };
	struct page *p2;
	bool survived;

	fx_open(256);
	dirty_pages(0, 4, 7);
	p2 = find_lock_page(pw.m, 2);
	cr_assert(p2);
	cr_assert_eq(pthread_create(&w.h.thread, NULL, walker_fn, &w), 0);
	/* the walker has tagged, written 0-1 and sleeps on page 2's lock */
	cr_assert_eq(helper_wait_sleeping(&w.h, TU_WAIT_MS), 0,
		     "the walker never blocked on the locked page");
	cr_assert(!helper_done(&w.h));
	cr_assert(!PageDirty(page_at(0)) && !PageDirty(page_at(1)));
	dirty_pages(6, 1, 8);
	cr_assert(tagged(6, PAGECACHE_TAG_DIRTY));
	unlock_page(p2);
	put_page(uf_cache_obj(fx.cache), p2);
	helper_join(&w.h);
	cr_assert_eq(w.ret, 0);
	survived = PageDirty(page_at(6));
	cr_assert_eq(dirty_mask() & bits(0, 4), 0);
	wait_written();
	return survived;
}

Test(page_writeback, tagged_writepages_skip_pages_dirtied_after_start,
     .fini = fx_fini)
{
	struct writeback_control wbc = wbc_make(WB_SYNC_NONE, LONG_MAX);

	wbc.tagged_writepages = 1;
	cr_assert(page_dirtied_during_walk_survives(wbc),
		  "tagged writeback wrote a page dirtied after it started");
	cr_assert(!tagged(6, PAGECACHE_TAG_TOWRITE));
}

Test(page_writeback, sync_all_skips_pages_dirtied_after_start,
     .fini = fx_fini)
{
	cr_assert(page_dirtied_during_walk_survives(
			wbc_make(WB_SYNC_ALL, LONG_MAX)),
		  "WB_SYNC_ALL wrote a page dirtied after it started");
}

/* The control: without tagging, the walk does reach the new page. */
Test(page_writeback, untagged_walk_writes_pages_dirtied_during_it,
     .fini = fx_fini)
{
	cr_assert(!page_dirtied_during_walk_survives(
			wbc_make(WB_SYNC_NONE, LONG_MAX)),
		  "the untagged walk missed a page dirtied ahead of it");
}

/* ------------------------------------------------------------------ */
/* write_cache_pages: requests                                         */

/*
 * Write the dirty pages with completions held, and describe the requests
 * as "first+nr" runs in index order, e.g. "0+4 4+4 8+2".
 */
static void write_and_group(char *out, size_t outlen)
{
	struct writeback_control wbc = wbc_make(WB_SYNC_NONE, LONG_MAX);
	void *cur = NULL;
	unsigned long i, first = 0, nr = 0;
	size_t used = 0;

	out[0] = '\0';
	cr_assert_eq(uf_dev_stall(fx.dev, STALL_MS), 0);
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	for (i = 0; i <= FX_FILE_PAGES; i++) {
		struct page *page = i < FX_FILE_PAGES ?
				    find_get_page(pw.m, i) : NULL;
		void *req = NULL;

		if (page) {
			if (PageWriteback(page))
				req = page->private;
			put_page(uf_cache_obj(fx.cache), page);
		}
		if (req && req == cur && i == first + nr) {
			nr++;
			continue;
		}
		if (cur)
			used += (size_t)snprintf(out + used, outlen - used,
						 "%s%lu+%lu", used ? " " : "",
						 first, nr);
		cur = req;
		first = i;
		nr = 1;
	}
	cr_assert_eq(uf_dev_stall(fx.dev, 0), 0);
	wait_written();
}

/* Write the dirty pages; demand the requests @want ("first+nr" ...). */
static void expect_requests(const char *want)
{
	char groups[256];

	write_and_group(groups, sizeof(groups));
	cr_assert_str_eq(groups, want);
}

/* Pages [first, first + nr) dirty, requests of at most @max_io_pages. */
static void one_run(unsigned int max_io_pages, unsigned long first,
		    unsigned long nr, uint32_t seed, const char *want)
{
	fx_open(max_io_pages);
	dirty_pages(first, nr, seed);
	expect_requests(want);
}

Test(page_writeback, contiguous_pages_merge_up_to_the_cap, .fini = fx_fini)
{
	one_run(4, 0, 10, 9, "0+4 4+4 8+2");
}

Test(page_writeback, one_request_for_a_contiguous_run, .fini = fx_fini)
{
	one_run(256, 3, 40, 10, "3+40");
}

Test(page_writeback, a_discontiguity_splits_requests, .fini = fx_fini)
{
	fx_open(4);
	dirty_pages(0, 3, 11);
	dirty_pages(5, 2, 11);
	dirty_pages(9, 6, 11);
	dirty_pages(20, 1, 11);
	expect_requests("0+3 5+2 9+4 13+2 20+1");
}

/*
 * A page dirty and under writeback at once (redirtied while its write is
 * in flight, as an mmap store would): WB_SYNC_NONE skips it, WB_SYNC_ALL
 * waits for the write in flight and then writes it again.
 */
Test(page_writeback, writeback_pages_skipped_or_waited, .fini = fx_fini)
{
	struct writeback_control wbc;
	struct page *p1;

	fx_open(256);
	dirty_pages(0, 4, 12);
	cr_assert_eq(uf_dev_stall(fx.dev, 1000), 0);
	wbc = wbc_make(WB_SYNC_NONE, LONG_MAX);
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	p1 = page_at(1);
	lock_page(p1);
	cr_assert_eq(set_page_dirty(p1), 1);
	unlock_page(p1);
	cr_assert(PageWriteback(p1) && PageDirty(p1));

	wbc = wbc_make(WB_SYNC_NONE, LONG_MAX);
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(wbc.nr_to_write, LONG_MAX, "wrote a page in flight");
	cr_assert(PageDirty(p1));

	wbc = wbc_make(WB_SYNC_ALL, LONG_MAX);
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	cr_assert_eq(wbc.nr_to_write, LONG_MAX - 1);
	/*
	 * It waited: page 1's held request had to complete first.  Its pages
	 * end in index order, so page 0 is done by now (pages 2-3 may not
	 * be yet: the completion thread may still be ending them).
	 */
	cr_assert(!PageWriteback(page_at(0)));
	cr_assert(!PageDirty(p1));
	wait_written();
	cr_assert_eq(vm(NR_WRITTEN), 5);
	tu_raw_expect(fx.td.path, FX_FILE_OFF, 4 * PAGE_SIZE, 12, "pages 0-3");
}

/* ------------------------------------------------------------------ */
/* write_cache_pages: the device                                       */

static void device_bytes_equal_page_bytes(bool loop)
{
	struct writeback_control wbc = wbc_make(WB_SYNC_ALL, LONG_MAX);

	fx_open_kind(loop, 7, NULL, NULL);	/* requests of 7 and a short one */
	tu_raw_fill(fx.td.path, FX_FILE_OFF - PAGE_SIZE,
		    (FX_FILE_PAGES + 2) * PAGE_SIZE, 99);
	dirty_pages(0, 40, 14);
	dirty_pages(45, 3, 15);
	cr_assert_eq(do_writepages(pw.m, &wbc), 0);
	wait_written();
	tu_raw_expect(fx.td.path, FX_FILE_OFF, 40 * PAGE_SIZE, 14, "pages 0-39");
	tu_raw_expect(fx.td.path, FX_FILE_OFF + 45 * PAGE_SIZE,
		      3 * PAGE_SIZE, 15, "pages 45-47");
	/* nothing else touched: around the file and in the hole */
	tu_raw_expect(fx.td.path, FX_FILE_OFF - PAGE_SIZE, PAGE_SIZE, 99,
		      "before the file");
	tu_raw_expect(fx.td.path, FX_FILE_OFF + 40 * PAGE_SIZE,
		      5 * PAGE_SIZE, 99, "the hole");
	tu_raw_expect(fx.td.path, FX_FILE_OFF + FX_FILE_PAGES * PAGE_SIZE,
		      PAGE_SIZE, 99, "after the file");
	cr_assert_eq(fx.bdi->write_errors, 0);
}

Test(page_writeback, device_bytes_equal_page_bytes_file, .fini = fx_fini)
{
	device_bytes_equal_page_bytes(false);
}

Test(page_writeback, device_bytes_equal_page_bytes_loop, .fini = fx_fini)
{
	device_bytes_equal_page_bytes(true);
}

Test(page_writeback, write_error_sets_the_mapping_error, .fini = fx_fini)
{
	struct writeback_control wbc = wbc_make(WB_SYNC_ALL, LONG_MAX);
	struct uf_io_shape shape = {
		.eio_offset = FX_FILE_OFF + 4 * PAGE_SIZE,
		.eio_len = 4 * PAGE_SIZE,
	};
	unsigned long i;
	int ret;

	fx_open(4);
	cr_assert_eq(uf_dev_set_shape(fx.dev, &shape), 0);
	dirty_pages(0, 12, 16);
	cr_assert_eq(write_cache_pages(pw.m, &wbc), 0);
	ret = filemap_fdatawait(pw.m);
	cr_assert_eq(ret, -EIO, "fdatawait: %d", ret);
	cr_assert_eq(vm(NR_WRITEBACK), 0);

	/* one failed request (pages 4-7), counted once per request */
	cr_assert_eq(fx.bdi->write_errors, 1);
	cr_assert_eq(uf_cache_obj(fx.cache)->write_errors, 1);
	for (i = 0; i < 12; i++) {
		struct page *page = page_at(i);
		bool bad = i >= 4 && i < 8;

		cr_assert_eq(PageError(page), bad, "page %lu", i);
		/* the kernel's way: the data is lost, the page stays clean */
		cr_assert(!PageDirty(page) && PageUptodate(page), "page %lu",
			  i);
	}
	cr_assert_eq(vm(NR_FILE_DIRTY), 0);
	tu_raw_expect(fx.td.path, FX_FILE_OFF, 4 * PAGE_SIZE, 16, "pages 0-3");
	tu_raw_expect(fx.td.path, FX_FILE_OFF + 8 * PAGE_SIZE, 4 * PAGE_SIZE,
		      16, "pages 8-11");
	/* fsync reports it, once */
	cr_assert_eq(uf_fsync(pw.t->f), -EIO);
	cr_assert_eq(uf_fsync(pw.t->f), 0);
}

/* ------------------------------------------------------------------ */
/* do_writepages and the embedder's veto                               */

struct veto {
	unsigned int decline;	/* bitmask of 1 << enum uf_wb_kind */
	unsigned int asked;
	bool wrong_file;
};

/* Also called from fx_fini (uf_file_close): records, never asserts. */
static int veto_fn(struct uf_file *file, void *priv, enum uf_wb_kind kind)
{
	struct veto *v = priv;

	if (file != pw.t->f)
		v->wrong_file = true;
	v->asked |= 1u << kind;
	return (v->decline >> kind) & 1;
}

Test(page_writeback, veto_declines_a_kind_of_writeback, .fini = fx_fini)
{
	static const struct uf_file_ops ops = { .writepages_veto = veto_fn };
	static struct veto v;	/* outlives the test: fx_fini closes */
	struct writeback_control wbc;

	v.decline = 1u << UF_WB_KUPDATE | 1u << UF_WB_SYNC;
	fx_open_ops(256, &ops, &v);
	dirty_pages(0, 4, 17);

	wbc = wbc_make(WB_SYNC_NONE, 1024);
	wbc.for_kupdate = 1;
	cr_assert_eq(do_writepages(pw.m, &wbc), 0);
	cr_assert_eq(v.asked, 1u << UF_WB_KUPDATE);
	cr_assert_eq(wbc.nr_to_write, 1024);
	cr_assert_eq(dirty_mask(), bits(0, 4));

	wbc = wbc_make(WB_SYNC_ALL, LONG_MAX);
	cr_assert_eq(do_writepages(pw.m, &wbc), -EAGAIN);
	cr_assert_eq(dirty_mask(), bits(0, 4));

	/* nothing to write: not even asked */
	v.asked = 0;
	wbc = wbc_make(WB_SYNC_NONE, 0);
	cr_assert_eq(do_writepages(pw.m, &wbc), 0);
	cr_assert_eq(v.asked, 0);

	wbc = wbc_make(WB_SYNC_NONE, 1024);
	wbc.for_background = 1;
	cr_assert_eq(do_writepages(pw.m, &wbc), 0);
	cr_assert_eq(v.asked, 1u << UF_WB_BACKGROUND);
	cr_assert_eq(wbc.nr_to_write, 1020);
	cr_assert_eq(dirty_mask(), 0);
	wait_written();

	v.decline = 0;
	dirty_pages(0, 1, 18);
	wbc = wbc_make(WB_SYNC_NONE, 1024);
	cr_assert_eq(do_writepages(pw.m, &wbc), 0);
	cr_assert(v.asked & (1u << UF_WB_OTHER_NONE));
	wait_written();
	cr_assert(!v.wrong_file);
}

/* ------------------------------------------------------------------ */
/* The dirty throttle                                                  */

struct writer {
	struct helper h;
	unsigned long pages;
	ssize_t err;		/* first failed uf_pwrite */
};

static void *writer_fn(void *arg)
{
	struct writer *w = arg;
	char *buf = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	unsigned long i;

	helper_started(&w->h);
	for (i = 0; buf && i < w->pages && !w->err; i++) {
		ssize_t n;

		tu_fill(buf, PAGE_SIZE, FX_FILE_OFF + i * PAGE_SIZE, 19);
		n = uf_pwrite(pw.t->f, buf, PAGE_SIZE, i * PAGE_SIZE);
		if (n != (ssize_t)PAGE_SIZE)
			w->err = n < 0 ? n : -EIO;
	}
	if (!buf)
		w->err = -ENOMEM;
	free(buf);
	helper_finished(&w->h);
	return NULL;
}

/*
 * A writer over a dirty limit of @limit pages sleeps until writeback makes
 * room, held at most @slack pages past it.  @limit must be over the
 * counter error (wb_stat_error(), 3.2's bdi_stat_error()): below it the
 * writer goes on after each max_pause sleep (the test after).
 */
static void writer_over_the_limit(const char *policy, unsigned long limit,
				  unsigned long slack)
{
	struct writer w = {
		.pages = limit + 24 < FX_FILE_PAGES ? limit + 24 : FX_FILE_PAGES,
	};
	unsigned long held;
	uint64_t t0;

	if (w.pages < limit + 8) {
		cr_skip_test("a limit of %lu pages needs a file of %lu",
			     limit, limit + 8);
		return;
	}
	pw.policy = policy;
	fx_open(256);
	cr_assert_eq(uf_cache_set_tunable(fx.cache, "dirty_bytes",
					  limit * PAGE_SIZE), 0);
	cr_assert_eq(pthread_create(&w.h.thread, NULL, writer_fn, &w), 0);
	cr_assert_eq(helper_wait_sleeping(&w.h, TU_WAIT_MS), 0,
		     "the writer was never throttled");
	cr_assert(!helper_done(&w.h));
	/*
	 * The IO-less throttle (3.2's and mainline's) checks at the limit,
	 * where the position ratio is 0, and the writer sleeps there until
	 * writeback makes room (the old simple throttle let one page more
	 * through before it slept).  Mainline's short pauses between the
	 * freerun ceiling and the limit come first (a limit of 48 pages).
	 */
	t0 = uf_now_ns();
	while (vm(NR_FILE_DIRTY) < limit && !helper_done(&w.h) &&
	       tu_ms_since(t0) < (double)TU_WAIT_MS)
		usleep(10 * 1000);
	/* mainline's checks every few pages may overshoot a little */
	held = vm(NR_FILE_DIRTY);
	cr_assert(held >= limit && held <= limit + slack,
		  "dirty %lu, limit %lu", held, limit);
	usleep(300 * 1000);
	cr_assert(!helper_done(&w.h));
	cr_assert_eq(vm(NR_FILE_DIRTY), held);

	/* each round of writeback lets it go on */
	t0 = uf_now_ns();
	while (!helper_done(&w.h)) {
		struct writeback_control wbc = wbc_make(WB_SYNC_NONE,
							LONG_MAX);

		cr_assert_lt(tu_ms_since(t0), (double)TU_WAIT_MS,
			     "the writer never finished");
		write_cache_pages(pw.m, &wbc);
		filemap_fdatawait(pw.m);
		helper_wait_sleeping(&w.h, 50);
	}
	helper_join(&w.h);
	cr_assert_eq(w.err, 0, "uf_pwrite: %zd", w.err);
	/*
	 * 3.2's limit is soft: after a max_pause sleep the writer is checked
	 * again only after nr_dirtied_pause pages, at most the pages it had
	 * dirtied before the sleep (1 | clamp(.., pages_dirtied -
	 * pages_dirtied / 8)), so between checks it may pass the limit by up
	 * to that much (24 here: 15 pages, a short pause, 9 more).
	 */
	cr_assert_leq(vm(NR_FILE_DIRTY) + vm(NR_WRITEBACK), limit + 16);
}

Test(page_writeback, writer_over_the_limit_waits_for_writeback,
     .fini = fx_fini)
{
	/* over bdi_stat_error(): below it 3.2 lets a writer of a stuck
	 * device go on too (balance_dirty_pages_32) */
	writer_over_the_limit("linux-3.2", 16 + wb_stat_error(), 16);
}

Test(page_writeback, writer_over_the_limit_waits_for_writeback_618,
     .fini = fx_fini)
{
	writer_over_the_limit("mainline", 16 + wb_stat_error(), 16);
}

/*
 * 6.18's balance_dirty_pages() (2002): after a max_pause sleep at the
 * limit (task_ratelimit 0) a writer whose device has no more than
 * wb_stat_error() dirty pages goes on ("1000 dd on a slow USB stick"),
 * so with a limit of 16 pages and no writeback at all a writer of
 * wb_stat_error() pages (32 on 2 CPUs) still finishes (3.2 and 3.3 do the
 * same with bdi_stat_error(): test_balance_dirty's stuck_device tests).
 */
Test(page_writeback, writer_at_a_tiny_limit_goes_on_618, .fini = fx_fini)
{
	struct writer w = { .pages = wb_stat_error() };
	uint64_t t0;

	if (w.pages < 16 + 8 || w.pages > FX_FILE_PAGES) {
		cr_skip_test("wb_stat_error() is %lu pages: wants 24 to %lu",
			     w.pages, FX_FILE_PAGES);
		return;
	}
	pw.policy = "mainline";
	fx_open(256);
	cr_assert_eq(uf_cache_set_tunable(fx.cache, "dirty_bytes",
					  16 * PAGE_SIZE), 0);
	cr_assert_eq(pthread_create(&w.h.thread, NULL, writer_fn, &w), 0);
	t0 = uf_now_ns();
	while (!helper_done(&w.h) && tu_ms_since(t0) < (double)TU_WAIT_MS)
		usleep(10 * 1000);
	cr_assert(helper_done(&w.h), "the writer was held at the limit");
	helper_join(&w.h);
	cr_assert_eq(w.err, 0, "uf_pwrite: %zd", w.err);
	cr_assert_eq(vm(NR_FILE_DIRTY), w.pages);
}
