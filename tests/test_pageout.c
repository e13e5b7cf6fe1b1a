// SPDX-License-Identifier: MIT
/*
 * tests/test_pageout.c - seed 003's pageout works (digest §2.5, §6.2) and
 * the seed's case end to end:
 *
 *  - the write-around unit from the device's bandwidth (PO-12);
 *  - extend_writeback_range: inside, adjacent and overlapping merges
 *    forwards and backwards, the 8x cap (PO-3..5), and the quirks: Q5
 *    (exactly a unit away is not merged) kept, Q2 (offset underflow)
 *    fixed;
 *  - flush_inode_page: a new work, a covered page, newest-first search,
 *    the depth limit of 100 same-inode works and other inodes' works not
 *    counted (PO-6, Q4 kept), the 1024-work reserve with the inode
 *    reference given back when it is empty (PO-7, Q1 fixed), an inode
 *    being evicted (PO-8).  Q3 (search and queueing not atomic) and Q6
 *    (no tracepoint when a work is extended) are kept and documented in
 *    fs-writeback.c; neither has an observable effect to pin here;
 *  - a memory domain over a slow device, fully dirtied: reclaim=3.2
 *    fails allocations (counted), reclaim=pageout does not, enters
 *    reclaim_wait, and the data read back from the device afterwards is
 *    byte-exact; a pinned page survives the pressure.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs.h"
#include "fs/writeback.h"
#include "mm/backing-dev.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "lib/slab.h"
#include "fixture.h"
#include "testutil.h"
#include "uflush.h"

/* A bdi with a work list and no flusher; the inode can be grabbed. */
static struct hand *po_hand(unsigned long nr_file)
{
	struct hand *h = hand_new(4, nr_file);

	hand_queueing(h);
	return h;
}

static void po_free(struct hand *h)
{
	struct wb_writeback_work *work, *next;

	list_for_each_entry_safe(work, next, &h->bdi.work_list, list) {
		list_del(&work->list);
		if (work->inode)
			iput(work->inode);
		wb_work_free(work);
	}
	cr_assert_eq(h->inode.i_count, 1, "an inode reference leaked");
	cr_assert_eq(wb_work_reserve_free(), WB_WORK_RESERVE,
		     "a reserved work leaked");
	hand_free(h);
}

/* flush_inode_page() for page @index of the hand's file. */
static long flush(struct hand *h, unsigned long index)
{
	struct page page = { .index = index, .mapping = hmap(h) };

	return flush_inode_page(hmap(h), &page, false);
}

static struct wb_writeback_work *newest(struct hand *h)
{
	return list_last_entry(&h->bdi.work_list, struct wb_writeback_work,
			       list);
}

static unsigned int nr_works(struct hand *h)
{
	struct wb_writeback_work *work;
	unsigned int n = 0;

	list_for_each_entry(work, &h->bdi.work_list, list)
		n++;
	return n;
}

/* PO-12: W for every row of the digest's table. */
Test(pageout, unit_from_bandwidth)
{
	static const struct {
		unsigned long bw, unit;
	} rows[] = {
		{ 0, 16 }, { 2560, 32 }, { 25600, 256 }, { 51200, 512 },
		{ 262144, 4096 },
	};
	struct backing_dev_info bdi = { 0 };
	unsigned int i;

	spin_lock_init(&bdi.wb.list_lock);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bdi.avg_write_bandwidth = rows[i].bw;
		cr_assert_eq(pageout_unit(&bdi), rows[i].unit,
			     "bandwidth %lu pages/s: W %lu, want %lu", rows[i].bw,
			     pageout_unit(&bdi), rows[i].unit);
	}
}

/* PO-3, PO-4, PO-5 and Q5 on a work [64, 80) with W = 16. */
Test(pageout, extend_writeback_range_merges)
{
	struct wb_writeback_work w = { .offset = 64, .nr_pages = 16 };
	unsigned int i;

	cr_assert(extend_writeback_range(&w, 70, 16), "inside");
	cr_assert_eq(w.offset, 64);
	cr_assert_eq(w.nr_pages, 16, "a covered page changes nothing");
	cr_assert_not(extend_writeback_range(&w, 96, 16), "end + W (Q5)");
	cr_assert_not(extend_writeback_range(&w, 48, 16), "offset - W (Q5)");
	cr_assert(extend_writeback_range(&w, 80, 16), "adjacent after");
	cr_assert_eq(w.offset, 64);
	cr_assert_eq(w.nr_pages, 32);
	cr_assert(extend_writeback_range(&w, 111, 16), "end + W - 1");
	cr_assert_eq(w.nr_pages, 48);
	cr_assert(extend_writeback_range(&w, 63, 16), "adjacent before");
	cr_assert_eq(w.offset, 48);
	cr_assert_eq(w.nr_pages, 64);
	cr_assert(extend_writeback_range(&w, 33, 16), "offset - W + 1");
	cr_assert_eq(w.offset, 32);
	cr_assert_eq(w.nr_pages, 80);
	/* grow forwards to 8 W, then no more */
	for (i = 0; i < 3; i++)
		cr_assert(extend_writeback_range(&w, 32 + (unsigned long)w.nr_pages,
						 16));
	cr_assert_eq(w.nr_pages, 128, "8 W");
	cr_assert_not(extend_writeback_range(&w, 160, 16), "beyond 8 W");
	cr_assert_not(extend_writeback_range(&w, 31, 16), "beyond 8 W");
	cr_assert(extend_writeback_range(&w, 100, 16), "inside a full work");
	cr_assert_eq(w.nr_pages, 128);
}

/* Q2 fixed: a work at offset 16 when W has become 32 is not moved to
 * offset -16 (the seed's unsigned wrap); the page gets its own work. */
Test(pageout, no_backward_merge_below_offset_zero)
{
	struct wb_writeback_work w = { .offset = 16, .nr_pages = 16 };

	cr_assert_not(extend_writeback_range(&w, 5, 32));
	cr_assert_eq(w.offset, 16);
	cr_assert_eq(w.nr_pages, 16);
}

/* PO-1, PO-2: a new work, then the same unit again. */
Test(pageout, first_page_queues_a_work_then_merges)
{
	struct hand *h = po_hand(1024);
	struct wb_writeback_work *w;

	cr_assert_eq(flush(h, 37), 0, "a new work is 0");
	cr_assert_eq(nr_works(h), 1);
	w = newest(h);
	cr_assert_eq(w->inode, &h->inode);
	cr_assert_eq(w->offset, 32);
	cr_assert_eq(w->nr_pages, 16);
	cr_assert_eq(w->sync_mode, WB_SYNC_NONE);
	cr_assert_eq(w->reason, WB_REASON_PAGEOUT);
	cr_assert_eq(h->inode.i_count, 2, "the work holds the inode");
	cr_assert_eq(flush(h, 40), 1, "covered: the newest work, 1");
	cr_assert_eq(flush(h, 48), 1, "adjacent: extended");
	cr_assert_eq(w->nr_pages, 32);
	cr_assert_eq(flush(h, 200), 0);
	cr_assert_eq(flush(h, 33), 2, "the second newest, 2");
	cr_assert_eq(nr_works(h), 2);
	po_free(h);
}

/* PO-6: after 101 same-inode works that do not match, a page that an
 * older work covers gets a new work. */
Test(pageout, depth_limit_counts_same_inode_works)
{
	struct hand *h = po_hand(1 << 20);
	unsigned int i;

	cr_assert_eq(flush(h, 0), 0);	/* the oldest, covers 0..15 */
	for (i = 1; i <= 101; i++)
		cr_assert_eq(flush(h, 1000UL * i), 0);
	cr_assert_eq(nr_works(h), 102);
	cr_assert_eq(flush(h, 5), 0, "found beyond the depth limit");
	cr_assert_eq(nr_works(h), 103);
	cr_assert_eq(newest(h)->offset, 0);
	po_free(h);
}

/* Q4 kept: other inodes' works are skipped and not counted. */
Test(pageout, other_inodes_works_are_not_counted)
{
	struct hand *h = po_hand(1 << 20);
	struct wb_writeback_work *other;
	struct inode ghost = { 0 };
	unsigned int i;

	cr_assert_eq(flush(h, 0), 0);
	for (i = 0; i < 150; i++) {
		other = kzalloc(sizeof(*other));
		cr_assert(other);
		other->inode = &ghost;
		list_add_tail(&other->list, &h->bdi.work_list);
	}
	cr_assert_eq(flush(h, 5), 1, "150 other works in the way");
	list_for_each_entry(other, &h->bdi.work_list, list)
		if (other->inode == &ghost)
			other->inode = NULL;	/* po_free: no iput */
	po_free(h);
}

/* PO-7 and Q1 fixed: 1024 works at most; the next gets -ENOMEM, queues
 * nothing, and gives the inode reference back. */
Test(pageout, reserve_of_1024_works)
{
	struct hand *h = po_hand(1 << 22);
	unsigned int i;

	for (i = 0; i < WB_WORK_RESERVE; i++)
		cr_assert_eq(flush(h, 1000UL * i), 0, "work %u", i);
	cr_assert_eq(wb_work_reserve_free(), 0);
	cr_assert_eq(h->inode.i_count, 1 + WB_WORK_RESERVE);
	cr_assert_eq(flush(h, 1000UL * WB_WORK_RESERVE), -ENOMEM);
	cr_assert_eq(nr_works(h), WB_WORK_RESERVE);
	cr_assert_eq(h->inode.i_count, 1 + WB_WORK_RESERVE,
		     "the failed queueing kept its inode reference (Q1)");
	cr_assert_eq(h->c.pool.rstat.nr_pageout_nomem, 1);
	po_free(h);
}

/* PO-8: an inode being evicted gets no work. */
Test(pageout, evicted_inode_is_enoent)
{
	struct hand *h = po_hand(64);

	h->inode.i_state |= I_FREEING;
	cr_assert_eq(flush(h, 3), -ENOENT);
	cr_assert_eq(nr_works(h), 0);
	h->inode.i_state &= ~I_FREEING;
	po_free(h);
}

/* ------------------------------------------------------------------ */
/* Seed 003's case, small: a fully dirty memory domain                 */

#define DOM_PAGES	64UL		/* the domain */
#define DOM_MACHINE	4096UL		/* the machine: dirty limits */
#define DOM_FILE	(4UL << 20)	/* bytes written, 16x the domain */
#define DOM_BW		(8UL << 20)	/* the device, shaped */

struct dom {
	struct uf_cache *cache;
	struct uf_dev *dev;
	struct uf_file *file;
	const char *path;
	unsigned long failures;
};

static void dom_open_bw(struct dom *d, const char *reclaim, const char *trace,
			unsigned long bw)
{
	struct uf_dev_config dc = { .flags = UF_DEV_SHAPED };
	struct uf_io_shape shape = { .bw_bytes_per_sec = bw };
	struct uf_cache_config cfg;
	char spec[64];
	int ret;

	memset(d, 0, sizeof(*d));
	d->path = tu_dev(TU_FILE, TU_DEV_SIZE);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = DOM_MACHINE;
	cfg.mem_limit_pages = DOM_PAGES;
	snprintf(spec, sizeof(spec), "linux-3.2,reclaim=%s", reclaim);
	cfg.policy = spec;
	cfg.trace_path = trace;
	cr_assert_eq(uf_cache_open(&cfg, &d->cache), 0);
	ret = uf_dev_open(d->cache, d->path, &dc, &d->dev);
	cr_assert_eq(ret, 0, "uf_dev_open: %s", strerror(-ret));
	cr_assert_eq(uf_dev_set_shape(d->dev, &shape), 0);
	ret = uf_file_open(d->dev, 1, 0, DOM_FILE, NULL, NULL, &d->file);
	cr_assert_eq(ret, 0, "uf_file_open: %s", strerror(-ret));
}

static void dom_open(struct dom *d, const char *reclaim, const char *trace)
{
	dom_open_bw(d, reclaim, trace, DOM_BW);
}

/* The file in 1 KiB writes; a failed or short write is counted and its
 * rest retried (the seed's dd would have been killed). */
static void dom_write_from(struct dom *d, unsigned int seed, size_t start)
{
	unsigned char *buf = tu_alloc(DOM_FILE);
	size_t off, done;
	ssize_t n;

	tu_fill(buf, DOM_FILE, 0, seed);
	for (off = start; off < DOM_FILE; off += 1024) {
		done = 0;
		while (done < 1024) {
			n = uf_pwrite(d->file, buf + off + done, 1024 - done,
				      off + done);
			cr_assert(n == -ENOMEM || n > 0, "uf_pwrite: %zd", n);
			if (n < (ssize_t)(1024 - done))
				d->failures++;
			if (n > 0)
				done += (size_t)n;
		}
	}
	free(buf);
}

static int count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0;

	cr_assert(f, "%s", path);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static int count_lines2(const char *path, const char *a, const char *b)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0;

	cr_assert(f, "%s", path);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) && strstr(line, b);
	fclose(f);
	return n;
}

static void dom_close(struct dom *d)
{
	cr_assert_eq(uf_file_close(d->file), 0);
	cr_assert_eq(uf_dev_close(d->dev), 0);
	cr_assert_eq(uf_cache_close(d->cache), 0);
}

/* RC-10 A/B: the domain OOMs under 3.2, counted in nr_oom. */
Test(pageout, domain_fully_dirty_fails_under_32, .timeout = 120,
     .fini = tu_fini)
{
	struct uf_cache_stats st;
	struct dom d;

	/* slower still: the OOM must not depend on the flusher losing a race */
	dom_open_bw(&d, "3.2", NULL, DOM_BW / 4);
	dom_write_from(&d, 3, 0);
	cr_assert_eq(uf_cache_stats(d.cache, &st), 0);
	cr_assert_eq(st.mem_limit, DOM_PAGES);
	cr_assert_eq(st.nr_pages, DOM_PAGES);
	cr_assert_leq(st.nr_free, DOM_PAGES, "the machine counted as free");
	cr_assert_gt(d.failures, 0, "3.2 never failed an allocation");
	cr_assert_geq(st.nr_oom, d.failures, "failures not counted");
	cr_assert_eq(st.nr_pageout_works, 0);
	cr_assert_eq(uf_fsync(d.file), 0);
	tu_raw_expect(d.path, 0, DOM_FILE, 3, "after the retries");
	dom_close(&d);
}

/*
 * RC-10, RC-11 and the data: under pageout works the same domain never
 * fails, reclaim waits for the I/O, pageout works carry the writes, a
 * pinned page stays, and the device holds exactly what was written.
 */
Test(pageout, domain_fully_dirty_works_under_pageout, .timeout = 120,
     .fini = tu_fini)
{
	char trace[] = "/tmp/uflush-pageout-trace.XXXXXX";
	struct uf_cache_stats st;
	struct uf_page *pg;
	struct dom d;

	int fd = mkstemp(trace);

	cr_assert_geq(fd, 0);
	close(fd);
	dom_open(&d, "pageout", trace);
	/* page 0 pinned (read, clean) through the whole run */
	tu_raw_fill(d.path, 0, PAGE_SIZE, 9);
	cr_assert_eq(uf_page_get(d.file, 0, 0, &pg), 0);
	dom_write_from(&d, 7, PAGE_SIZE);
	cr_assert_eq(uf_cache_stats(d.cache, &st), 0);
	cr_assert_eq(d.failures, 0, "%lu allocations failed", d.failures);
	cr_assert_eq(st.nr_oom, 0);
	cr_assert_gt(st.nr_pageout_works, 0);
	cr_assert_gt(st.nr_reclaim_wait, 0, "reclaim never waited for I/O");
	cr_assert_gt(st.nr_rotated, 0);
	cr_assert_eq(tu_check(uf_page_data(pg), PAGE_SIZE, 0, 9), -1,
		     "the pinned page changed");
	cr_assert_eq(uf_page_put(pg), 0);
	cr_assert_eq(uf_fsync(d.file), 0);
	tu_raw_expect(d.path, PAGE_SIZE, DOM_FILE - PAGE_SIZE, 7,
		      "after heavy reclaim");
	dom_close(&d);
	/* the seed's tracepoints (S003:L826-868) */
	cr_assert_gt(count_lines(trace, "writeback_reclaim_wait: "
				 "usec_timeout=100000 usec_delayed="), 0);
	cr_assert_gt(count_lines(trace, "reason=pageout ino=1 offset="), 0);
	/* Q6 kept: only new works are traced, not extended ones */
	cr_assert_gt(st.nr_pageout_merged, 0);
	cr_assert_eq((unsigned long)count_lines2(trace, "writeback_queue: ",
						 "reason=pageout"),
		     st.nr_pageout_works, "a writeback_queue line per new work");

	cr_assert_gt(count_lines(trace, "mm_vmscan_lru_shrink_inactive: "), 0);
	cr_assert_eq(count_lines(trace, "reason=try_to_free_pages"), 0,
		     "pageout works woke the flushers (PO-11)");
	unlink(trace);
}

/*
 * The other two variants in the same domain: whatever they do with the
 * dirty pages (legacy writes them one by one from reclaim, mainline
 * wakes the flushers and throttles), what reaches the device is exact.
 */
Test(pageout, domain_legacy_and_mainline_write_exact_data, .timeout = 120,
     .fini = tu_fini)
{
	struct uf_cache_stats st;
	struct dom d;

	dom_open(&d, "legacy", NULL);
	dom_write_from(&d, 11, 0);
	cr_assert_eq(uf_cache_stats(d.cache, &st), 0);
	cr_assert_gt(st.nr_pageout, 0, "legacy reclaim wrote no page");
	cr_assert_eq(st.nr_pageout_works, 0);
	cr_assert_eq(uf_fsync(d.file), 0);
	tu_raw_expect(d.path, 0, DOM_FILE, 11, "legacy");
	dom_close(&d);

	dom_open(&d, "mainline", NULL);
	dom_write_from(&d, 12, 0);
	cr_assert_eq(uf_cache_stats(d.cache, &st), 0);
	cr_assert_gt(st.nr_flusher_wakeups, 0, "mainline never woke a flusher");
	cr_assert_gt(st.nr_throttle, 0, "mainline never throttled");
	cr_assert_eq(st.nr_pageout_works, 0);
	cr_assert_eq(uf_fsync(d.file), 0);
	tu_raw_expect(d.path, 0, DOM_FILE, 12, "mainline");
	dom_close(&d);
}

/* A memory limit outside [16, nr_pages] is refused, and claims nothing. */
Test(pageout, domain_limit_bounds)
{
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 256;
	cfg.mem_limit_pages = 257;
	cr_assert_eq(uf_cache_open(&cfg, &c), -EINVAL);
	cr_assert_null(c);
	cfg.mem_limit_pages = 15;
	cr_assert_eq(uf_cache_open(&cfg, &c), -EINVAL);
	cfg.mem_limit_pages = 256;
	cr_assert_eq(uf_cache_open(&cfg, &c), 0);
	cr_assert_eq(uf_cache_close(c), 0);
}

/* ------------------------------------------------------------------ */
/* Executing pageout works (PO-9, PO-10), on the writeback fixture     */

static void fx_fini(void)
{
	fx_teardown(NULL);
}

/*
 * A queued pageout work makes background writeback give way (PO-10);
 * run (wb_flush_inode) it goes through do_writepages over its range only,
 * WB_SYNC_NONE, skipping a page under writeback, drops the inode
 * reference and returns the work to the reserve (PO-9).  The inode keeps
 * its place on b_dirty: a pageout work bypasses the lists (digest §2.6).
 */
Test(pageout, work_runs_its_range_and_background_gives_way,
     .fini = fx_fini, .timeout = 60)
{
	struct wb_writeback_work *w;
	struct address_space *m;
	struct page *page, *busy;
	struct tf *a;
	long ret;

	FX_SETUP(.start = 100000, .policy = "linux-3.2,reclaim=pageout");
	a = tf_open(1, 1024);
	tf_dirty(a, 0, 1024, 5);	/* under the dirty limits: no pause */
	set_bg_thresh_pages(2);		/* background has work to do */
	m = a->inode->i_mapping;
	/* 600 is under writeback already: the work must skip it */
	busy = find_get_page(m, 600);
	cr_assert(busy);
	lock_page(busy);
	cr_assert(clear_page_dirty_for_io(busy));
	cr_assert_eq(test_set_page_writeback(busy), 0);
	unlock_page(busy);

	page = find_get_page(m, 700);
	cr_assert(page);
	cr_assert_eq(flush_inode_page(m, page, false), 0);
	put_page(inode_cache(a->inode), page);
	cr_assert(work_queued());
	spin_lock(&fx.bdi->wb_lock);
	w = list_first_entry(&fx.bdi->work_list, struct wb_writeback_work,
			     list);
	cr_assert_eq(w->inode, a->inode);
	spin_unlock(&fx.bdi->wb_lock);
	cr_assert_eq(w->nr_pages, 256, "W at the initial bandwidth (100 MB/s)");
	cr_assert_eq(w->offset, 512);

	ret = run_kind(W_BACKGROUND);
	cr_assert_eq(ret, 0, "background did not give way: wrote %ld", ret);

	/* what wb_do_writeback does with it (kupdate and background, which
	 * it would run next, are kept out: they would write everything) */
	spin_lock(&fx.bdi->wb_lock);
	list_del_init(&w->list);
	spin_unlock(&fx.bdi->wb_lock);
	ret = wb_flush_inode(fx.wb, w);
	wb_work_free(w);
	cr_assert_eq(ret, 255, "the work wrote %ld pages, want 256 - 1", ret);
	cr_assert_not(work_queued());
	cr_assert_eq(a->inode->i_count, 1, "the work kept the inode");
	cr_assert_eq(wb_work_reserve_free(), WB_WORK_RESERVE);
	expect_on(a, "b_dirty");
	for (unsigned long i = 0; i < 1024; i++) {
		struct page *p = find_get_page(m, i);
		bool in = i >= 512 && i < 768;

		cr_assert(p);
		if (i != 600)
			cr_assert_eq(PageDirty(p), !in, "page %lu %s", i,
				     in ? "still dirty" : "written");
		put_page(inode_cache(a->inode), p);
	}
	cr_assert(PageWriteback(busy) && !PageDirty(busy));
	end_page_writeback(busy);
	put_page(inode_cache(a->inode), busy);
	cr_assert_eq(filemap_fdatawait(m), 0);
	tf_expect_on_dev(a, 512, 88, 5, "before the busy page");
	tf_expect_on_dev(a, 601, 167, 5, "after it");
}
