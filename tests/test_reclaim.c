// SPDX-License-Identifier: MIT
/*
 * tests/test_reclaim.c - the LRU pagevecs, rotations and reclaim's
 * decision points on hand-built caches (no device, no threads but the
 * test's): per-thread batching of LRU additions and rotations (14 pages)
 * and their drains, reclaim_wait() (entered, timed out, woken early by a
 * rotation), seed 003's wait test for every priority (RC-4, RC-5, RC-6),
 * the variants' handling of dirty and writeback pages, and the policy
 * knob.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs/fs.h"
#include "fs/writeback.h"
#include "kernel/jiffies.h"
#include "mm/backing-dev.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "policies/policy.h"
#include "fixture.h"
#include "testutil.h"
#include "uflush-internal.h"
#include "uflush.h"

/* A page added through the LRU path, clean and unlocked; with batching
 * on, it may wait in this thread's pagevec (count 2). */
static struct page *add_page(struct hand *h, unsigned long index)
{
	struct page *page = page_pool_alloc(&h->c);

	cr_assert(page);
	cr_assert_eq(add_to_page_cache_lru(page, hmap(h), index), 0);
	SetPageUptodate(page);
	unlock_page(page);
	put_page(&h->c, page);
	return page;
}

static void start_writeback(struct page *page)
{
	lock_page(page);
	cr_assert_eq(test_set_page_writeback(page), 0);
	unlock_page(page);
}

static struct page *lru_tail(struct hand *h)
{
	return list_entry(h->c.pool.inactive_file.prev, struct page, lru);
}

/* A hand-built cache running reclaim variant @rp, with a bdi that can
 * queue works (no flusher: the test runs or frees them). */
static struct wb_policy hpol;

static struct hand *hand_with(unsigned long nr, unsigned long nr_file,
			      const struct reclaim_policy *rp)
{
	struct hand *h = hand_new(nr, nr_file);

	memset(&hpol, 0, sizeof(hpol));
	hpol.reclaim = rp;
	h->c.policy = &hpol;
	h->c.vm.vm_dirty_ratio = 20;
	hand_queueing(h);
	return h;
}

/* Drop the queued pageout works unrun; returns how many there were. */
static unsigned int drop_works(struct hand *h)
{
	struct wb_writeback_work *work, *next;
	unsigned int n = 0;

	list_for_each_entry_safe(work, next, &h->bdi.work_list, list) {
		list_del(&work->list);
		if (work->inode)
			iput(work->inode);
		wb_work_free(work);
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Pagevecs                                                            */

Test(reclaim, lru_additions_are_batched_by_14_and_drained)
{
	struct hand *h = hand_new(32, 32);
	struct page *p[16];
	unsigned int i;

	h->c.pool.lru_batch = true;
	for (i = 0; i < PAGEVEC_SIZE - 1; i++) {
		p[i] = add_page(h, i);
		cr_assert_not(PageLRU(p[i]), "page %u on the LRU before the "
			      "pagevec is full", i);
		cr_assert_eq(page_count(p[i]), 2, "the pagevec holds a reference");
	}
	cr_assert_eq(h->c.pool.nr_inactive, 0);
	p[13] = add_page(h, 13);
	cr_assert_eq(h->c.pool.nr_inactive, PAGEVEC_SIZE, "a full pagevec "
		     "goes to the LRU at once");
	for (i = 0; i < PAGEVEC_SIZE; i++) {
		cr_assert(PageLRU(p[i]));
		cr_assert_eq(page_count(p[i]), 1);
	}
	p[14] = add_page(h, 14);
	cr_assert_not(PageLRU(p[14]));
	lru_add_drain();
	cr_assert(PageLRU(p[14]), "lru_add_drain() empties the pagevec");
	p[15] = add_page(h, 15);
	lru_add_drain_all(&h->c);
	cr_assert(PageLRU(p[15]), "lru_add_drain_all() too");
	cr_assert_eq(h->c.pool.nr_inactive, 16);
	hand_free(h);
}

/* RC-3: rotations move in batches of 14 (or on a drain), each batch one
 * PGROTATED count per page and one reclaim_rotated(). */
Test(reclaim, rotations_are_batched_by_14)
{
	struct hand *h = hand_new(32, 32);
	struct page *p[20];
	unsigned int i;

	h->c.pool.lru_batch = true;
	for (i = 0; i < 20; i++)
		p[i] = add_page(h, i);
	lru_add_drain();
	for (i = 0; i < 15; i++) {
		start_writeback(p[i]);
		SetPageReclaim(p[i]);
	}
	/* newest at the head: 19 ... 0; rotating 0..12 keeps the order */
	for (i = 0; i < PAGEVEC_SIZE - 1; i++)
		end_page_writeback(p[i]);
	cr_assert_eq(h->c.pool.rstat.nr_rotated, 0, "rotated before the "
		     "pagevec was full");
	cr_assert_eq(lru_tail(h), p[0]);
	end_page_writeback(p[13]);
	cr_assert_eq(h->c.pool.rstat.nr_rotated, PAGEVEC_SIZE);
	cr_assert_eq(lru_tail(h), p[13], "the batch goes to the tail in order");
	end_page_writeback(p[14]);
	cr_assert_eq(h->c.pool.rstat.nr_rotated, PAGEVEC_SIZE);
	lru_add_drain();
	cr_assert_eq(h->c.pool.rstat.nr_rotated, PAGEVEC_SIZE + 1);
	cr_assert_eq(lru_tail(h), p[14], "drained: rotated");
	for (i = 0; i < 15; i++)
		cr_assert_not(PageReclaim(p[i]));
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* reclaim_wait                                                        */

struct waiter {
	struct hand *h;
	long timeout, ret;
	bool done;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->ret = reclaim_wait(&w->h->c, w->timeout);
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* RC-7: a full wait takes its timeout and is counted as one. */
Test(reclaim, reclaim_wait_times_out_without_rotations)
{
	struct hand *h = hand_new(8, 8);
	double t0 = now();

	cr_assert_eq(reclaim_wait(&h->c, HZ / 10), 0);
	cr_assert_geq(now() - t0, 0.09);
	cr_assert_eq(h->c.pool.rstat.nr_reclaim_wait, 1);
	cr_assert_eq(h->c.pool.rstat.reclaim_wait_timeouts, 1);
	cr_assert_geq(h->c.pool.rstat.reclaim_wait_us, 90000);
	hand_free(h);
}

/* RC-7: a rotation wakes the waiter long before its timeout. */
Test(reclaim, reclaim_wait_returns_early_on_a_rotation, .timeout = 30)
{
	struct hand *h = hand_new(8, 8);
	struct waiter w = { .h = h, .timeout = 20 * HZ };
	struct page *page = add_page(h, 0);
	pthread_t t;
	double t0;
	int i;

	start_writeback(page);
	SetPageReclaim(page);
	cr_assert_eq(pthread_create(&t, NULL, waiter_fn, &w), 0);
	for (i = 0; i < 2000 && !waitqueue_active(&h->c.pool.reclaim_wqh); i++)
		usleep(1000);
	cr_assert(waitqueue_active(&h->c.pool.reclaim_wqh), "never waited");
	t0 = now();
	end_page_writeback(page);	/* unbatched: rotates at once */
	pthread_join(t, NULL);
	cr_assert(w.done);
	cr_assert_gt(w.ret, 0, "woken, not timed out");
	cr_assert_lt(now() - t0, 5.0, "the rotation did not wake it");
	cr_assert_eq(h->c.pool.rstat.reclaim_wait_timeouts, 0);
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* The seed 003 wait test (S003:L571-573)                              */

/* RC-4, RC-5, RC-6: every priority from 12 to 6 with a full batch. */
Test(reclaim, pageout_wait_threshold_per_priority)
{
	struct hand *h = hand_with(8, 8, &reclaim_pageout);
	struct scan_control sc = { 0 };
	struct reclaim_batch rb = { .nr_taken = SWAP_CLUSTER_MAX };
	static const unsigned long need[] = {	/* priority 12 .. 6 */
		32, 16, 8, 4, 2, 1, 1,
	};
	unsigned int i;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		sc.priority = DEF_PRIORITY - (int)i;
		/* a domain: no zone_dirty_ok gate (RC-6) */
		sc.global = false;
		rb.nr_pgreclaim = need[i];
		cr_assert(pageout_should_wait(&h->c, &sc, &rb),
			  "priority %d, %lu PG_reclaim: must wait", sc.priority,
			  need[i]);
		rb.nr_pgreclaim = need[i] - 1;
		cr_assert_not(pageout_should_wait(&h->c, &sc, &rb),
			      "priority %d, %lu PG_reclaim: must not wait",
			      sc.priority, need[i] - 1);
		/* global reclaim with the zone under its dirty limit: never
		 * (RC-5), however many */
		sc.global = true;
		rb.nr_pgreclaim = SWAP_CLUSTER_MAX;
		cr_assert(zone_dirty_ok(&h->c));
		cr_assert_not(pageout_should_wait(&h->c, &sc, &rb));
	}
	/* over the zone's dirty limit, global reclaim waits too */
	mod_vm_state(&h->c, NR_FILE_DIRTY, 8);
	cr_assert_not(zone_dirty_ok(&h->c));
	sc.priority = DEF_PRIORITY;
	cr_assert(pageout_should_wait(&h->c, &sc, &rb));
	mod_vm_state(&h->c, NR_FILE_DIRTY, -8);
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* The variants in shrink_page_list                                    */

/* RC-1, RC-2 and PO-11: dirty pages get one pageout work and PG_reclaim;
 * met again they count as nr_pgreclaim and reclaim waits; no flusher is
 * woken. */
Test(reclaim, pageout_variant_queues_works_and_waits_on_pg_reclaim,
     .timeout = 30)
{
	struct hand *h = hand_with(8, 64, &reclaim_pageout);
	struct wb_writeback_work *work;
	struct page *p[8];
	unsigned int i;

	for (i = 0; i < 8; i++) {
		p[i] = cache_page(h, 40 + i);
		SetPageDirty(p[i]);	/* flag only: nothing writes here */
	}
	mod_vm_state(&h->c, NR_FILE_DIRTY, 8);	/* over the zone's limit */
	cr_assert_eq(try_to_free_pages(&h->c, 8), 0);
	for (i = 0; i < 8; i++)
		cr_assert(PageReclaim(p[i]), "page %u has no PG_reclaim", i);
	cr_assert_eq(h->c.pool.rstat.nr_pageout_works, 1, "%lu works",
		     h->c.pool.rstat.nr_pageout_works);
	work = list_first_entry(&h->bdi.work_list, struct wb_writeback_work,
				list);
	cr_assert_eq(work->inode, &h->inode);
	cr_assert_eq(work->offset, 32, "W = 16: page 40's unit starts at 32");
	cr_assert_eq(work->nr_pages, 16);
	cr_assert_eq(work->reason, WB_REASON_PAGEOUT);
	cr_assert_eq(h->inode.i_count, 2, "the work holds the inode");
	cr_assert_geq(h->c.pool.rstat.nr_reclaim_wait, 1,
		      "PG_reclaim pages met again: no reclaim_wait");
	cr_assert_eq(h->c.pool.rstat.nr_flusher_wakeups, 0);
	cr_assert_eq(drop_works(h), 1);
	cr_assert_eq(h->inode.i_count, 1);
	for (i = 0; i < 8; i++) {
		ClearPageDirty(p[i]);
		ClearPageReclaim(p[i]);
	}
	mod_vm_state(&h->c, NR_FILE_DIRTY, -8);
	hand_free(h);
}

/* 3.2: dirty pages get PG_reclaim and no work; the flushers are woken
 * (here: no device, so only counted) and nothing waits. */
Test(reclaim, variant_32_marks_and_queues_nothing)
{
	struct hand *h = hand_with(8, 64, &reclaim_32);
	struct page *p[8];
	unsigned int i;

	for (i = 0; i < 8; i++) {
		p[i] = cache_page(h, i);
		SetPageDirty(p[i]);
	}
	cr_assert_eq(try_to_free_pages(&h->c, 8), 0);
	for (i = 0; i < 8; i++)
		cr_assert(PageReclaim(p[i]));
	cr_assert(list_empty(&h->bdi.work_list), "3.2 queued a work");
	cr_assert_eq(h->c.pool.rstat.nr_reclaim_wait, 0);
	cr_assert_gt(h->c.pool.rstat.nr_immediate, 0);
	for (i = 0; i < 8; i++) {
		ClearPageDirty(p[i]);
		ClearPageReclaim(p[i]);
	}
	hand_free(h);
}

/* Writeback pages: pageout sets PG_reclaim on first sight and counts
 * nr_pgreclaim on the second (RC-1); 3.2 leaves them alone. */
Test(reclaim, writeback_pages_per_variant)
{
	struct hand *h = hand_with(8, 8, &reclaim_pageout);
	struct scan_control sc = { .priority = DEF_PRIORITY };
	struct reclaim_batch rb = { 0 };
	struct page *page = cache_page(h, 0);

	start_writeback(page);
	cr_assert_not(reclaim_pageout.writeback_page(&h->c, page, &sc, &rb));
	cr_assert(PageReclaim(page));
	cr_assert_eq(rb.nr_pgreclaim, 0);
	cr_assert_not(reclaim_pageout.writeback_page(&h->c, page, &sc, &rb));
	cr_assert_eq(rb.nr_pgreclaim, 1);
	ClearPageReclaim(page);
	cr_assert_not(reclaim_32.writeback_page(&h->c, page, &sc, &rb));
	cr_assert_not(PageReclaim(page));
	end_page_writeback(page);
	hand_free(h);
}

/*
 * 6.18 shrink_folio_list:1238-1270, the three writeback cases: case 1
 * (kswapd, PG_reclaim, PGDAT_WRITEBACK) counts nr_immediate, case 2
 * (global reclaim, or not yet PG_reclaim) sets PG_reclaim and counts
 * nr_writeback; both activate.  Case 3 (a cgroup v1 domain meeting a
 * PG_reclaim page) waits.
 */
Test(reclaim, mainline_writeback_cases_as_6_18)
{
	struct hand *h = hand_with(8, 8, &reclaim_mainline);
	struct scan_control sc = { .priority = DEF_PRIORITY, .global = true };
	struct reclaim_batch rb = { 0 };
	struct page *page = cache_page(h, 0);

	start_writeback(page);
	cr_assert_not(reclaim_mainline.writeback_page(&h->c, page, &sc, &rb));
	cr_assert(PageReclaim(page), "case 2 sets PG_reclaim");
	cr_assert(PageActive(page), "case 2 activates");
	cr_assert_eq(rb.nr_writeback, 1);
	cr_assert_eq(rb.nr_activate, 1);
	ClearPageActive(page);
	cr_assert_not(reclaim_mainline.writeback_page(&h->c, page, &sc, &rb),
		      "global reclaim never waits on writeback");
	cr_assert_eq(rb.nr_writeback, 2, "global reclaim: case 2 again");
	ClearPageActive(page);
	sc.kswapd = true;
	cr_assert_not(reclaim_mainline.writeback_page(&h->c, page, &sc, &rb));
	cr_assert_eq(rb.nr_immediate, 0,
		     "case 1 without PGDAT_WRITEBACK: 3.x-era mainline");
	cr_assert_eq(rb.nr_writeback, 3);
	ClearPageActive(page);
	set_bit(PGDAT_WRITEBACK, &h->c.pool.zone_flags);
	cr_assert_not(reclaim_mainline.writeback_page(&h->c, page, &sc, &rb));
	cr_assert_eq(rb.nr_immediate, 1, "case 1: kswapd counts it");
	cr_assert(PageActive(page), "case 1 activates");
	cr_assert_eq(rb.nr_activate, 4);
	ClearPageActive(page);
	sc.kswapd = false;
	sc.global = false;
	cr_assert(reclaim_mainline.writeback_page(&h->c, page, &sc, &rb),
		  "case 3: memcg v1 waits for a PG_reclaim page");
	cr_assert_not(PageActive(page));
	clear_bit(PGDAT_WRITEBACK, &h->c.pool.zone_flags);
	end_page_writeback(page);
	ClearPageReclaim(page);
	hand_free(h);
}

/*
 * 6.18 shrink_folio_list:1433-1447: a dirty file page gets PG_reclaim and
 * is activated; only kswapd meeting it again with PG_reclaim on a
 * PGDAT_DIRTY node goes on to pageout().
 */
Test(reclaim, mainline_dirty_page_activated_as_6_18)
{
	struct hand *h = hand_with(8, 8, &reclaim_mainline);
	struct scan_control sc = { .priority = DEF_PRIORITY, .global = true,
				   .kswapd = true };
	struct reclaim_batch rb = { 0 };
	struct page *page = cache_page(h, 0);

	SetPageDirty(page);
	cr_assert_eq(reclaim_mainline.dirty_page(&h->c, page, &sc, &rb),
		     RECLAIM_ACTIVATE);
	cr_assert(PageReclaim(page));
	cr_assert_eq(h->c.pool.rstat.nr_immediate, 1, "NR_VMSCAN_IMMEDIATE");
	cr_assert_eq(reclaim_mainline.dirty_page(&h->c, page, &sc, &rb),
		     RECLAIM_ACTIVATE, "kswapd, PG_reclaim, no PGDAT_DIRTY");
	set_bit(PGDAT_DIRTY, &h->c.pool.zone_flags);
	cr_assert_eq(reclaim_mainline.dirty_page(&h->c, page, &sc, &rb),
		     RECLAIM_PAGEOUT, "kswapd, PG_reclaim, PGDAT_DIRTY");
	sc.kswapd = false;
	cr_assert_eq(reclaim_mainline.dirty_page(&h->c, page, &sc, &rb),
		     RECLAIM_ACTIVATE, "direct reclaim never pages out");
	clear_bit(PGDAT_DIRTY, &h->c.pool.zone_flags);
	ClearPageDirty(page);
	ClearPageReclaim(page);
	hand_free(h);
}

/*
 * Direct reclaim of 8 dirty pages (4 of them under writeback) at the
 * inactive tail and 56 clean ones: the clean ones are freed, the 8 end on
 * the active list (6.18 activates them; 3.x-era mainline kept them on the
 * inactive list), none written.
 */
Test(reclaim, mainline_direct_reclaim_activates_dirty_and_writeback,
     .timeout = 60)
{
	struct hand *h = hand_with(64, 64, &reclaim_mainline);
	struct page *p[8];
	unsigned int i;

	for (i = 0; i < 64; i++) {
		struct page *page = cache_page(h, i);

		if (i < 8)
			p[i] = page;
	}
	for (i = 0; i < 8; i++) {
		SetPageDirty(p[i]);
		if (i & 1)
			start_writeback(p[i]);
	}
	/* priority 12 frees 24 of the first 32, priority 11 the next 32
	 * and stops (before any aging of the active list) */
	cr_assert_eq(try_to_free_pages(&h->c, 32), 56);
	cr_assert_eq(lru_count(&h->c.pool, true), 8, "%lu active pages",
		     lru_count(&h->c.pool, true));
	for (i = 0; i < 8; i++) {
		cr_assert(PageActive(p[i]), "page %u not activated", i);
		cr_assert(PageReclaim(p[i]));
	}
	cr_assert_eq(h->c.pool.rstat.nr_pageout, 0);
	cr_assert_eq(h->c.pool.nr_isolated, 0, "NR_ISOLATED_FILE left %ld",
		     h->c.pool.nr_isolated);
	for (i = 0; i < 8; i++) {
		if (i & 1)
			end_page_writeback(p[i]);
		ClearPageDirty(p[i]);
		ClearPageReclaim(p[i]);
	}
	hand_free(h);
}

/*
 * 6.18 folio_check_dirty_writeback: "unqueued dirty" is dirty and not
 * under writeback, whatever PG_reclaim says.  A batch of dirty pages
 * already marked PG_reclaim (met before, not yet queued) is all unqueued
 * dirty and wakes the flushers (WB_REASON_VMSCAN); counted by PG_reclaim
 * (3.2's nr_unqueued_dirty) it would wake none.
 */
Test(reclaim, mainline_unqueued_dirty_is_dirty_not_writeback,
     .timeout = 60)
{
	struct hand *h = hand_with(8, 64, &reclaim_mainline);
	struct page *p[8];
	unsigned int i;

	for (i = 0; i < 8; i++) {
		p[i] = cache_page(h, i);
		SetPageDirty(p[i]);
		SetPageReclaim(p[i]);
	}
	cr_assert_eq(try_to_free_pages(&h->c, 8), 0);
	cr_assert_gt(h->c.pool.rstat.nr_flusher_wakeups, 0,
		     "no WB_REASON_VMSCAN wakeup for PG_reclaim dirty pages");
	for (i = 0; i < 8; i++) {
		ClearPageDirty(p[i]);
		ClearPageReclaim(p[i]);
	}
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* The knob                                                            */

Test(reclaim, knob_and_presets)
{
	struct wb_policy pol;

	cr_assert_eq(wb_policy_resolve("linux-3.2,reclaim=pageout", &pol), 0);
	cr_assert_eq(pol.reclaim, &reclaim_pageout);
	cr_assert_not_null(strstr(pol.spec, "reclaim=pageout"));
	wb_policy_release(&pol);
	cr_assert_eq(wb_policy_resolve("linux-3.1", &pol), 0);
	cr_assert_eq(pol.reclaim, &reclaim_legacy);
	wb_policy_release(&pol);
	cr_assert_eq(wb_policy_resolve("linux-3.2", &pol), 0);
	cr_assert_eq(pol.reclaim, &reclaim_32);
	wb_policy_release(&pol);
	cr_assert_eq(wb_policy_resolve("mainline", &pol), 0);
	cr_assert_eq(pol.reclaim, &reclaim_mainline);
	wb_policy_release(&pol);
	cr_assert_eq(wb_policy_resolve("linux-3.2,reclaim=3.3", &pol),
		     -EINVAL);
}

/* ------------------------------------------------------------------ */
/* kswapd                                                              */

/*
 * A cache of 1024 frames (watermarks 32/40/48 free frames) read through
 * more than once: allocations that leave fewer than the low mark free
 * wake kswapd, which frees clean pages up to the high mark.
 */
Test(reclaim, kswapd_reclaims_to_the_high_watermark, .timeout = 60,
     .fini = tu_fini)
{
	const char *path = tu_dev(TU_FILE, 8ull << 20);
	struct uf_cache_config cfg;
	struct uf_cache_stats st;
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_dev *dev;
	char *buf = tu_alloc(1 << 20);
	unsigned int i;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 1024;
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	cr_assert_eq(uf_dev_open(cache, path, NULL, &dev), 0);
	cr_assert_eq(uf_file_open(dev, 1, 0, 8u << 20, NULL, NULL, &file), 0);
	for (i = 0; i < 8; i++)
		cr_assert_eq(uf_pread(file, buf, 1 << 20, (uint64_t)i << 20),
			     1 << 20);
	for (i = 0; i < 200; i++) {
		cr_assert_eq(uf_cache_stats(cache, &st), 0);
		if (st.nr_kswapd_runs && st.nr_free >= 48)
			break;
		usleep(10000);
	}
	cr_assert_gt(st.nr_kswapd_runs, 0, "kswapd never ran");
	cr_assert_geq(st.nr_free, 48, "kswapd stopped at %lu free", st.nr_free);
	cr_assert_eq(st.nr_oom, 0);
	free(buf);
	cr_assert_eq(uf_file_close(file), 0);
	cr_assert_eq(uf_dev_close(dev), 0);
	cr_assert_eq(uf_cache_close(cache), 0);
}

/* ------------------------------------------------------------------ */
/* PAGEREF_RECLAIM_CLEAN                                               */

/*
 * reclaim=legacy (3.1: every dirty page goes to pageout()), no flusher.
 * Eight pages written (so referenced: block_write_end marks them
 * accessed) and one page read after them (clean, referenced).  A reclaim
 * of one page takes all nine in one batch: the clean page is freed, and
 * the referenced dirty ones are kept for a round (3.1 vmscan.c:868,
 * page_check_references cleared their PG_referenced), not written.  The
 * next reclaim finds them unreferenced and writes them from reclaim.
 */
Test(reclaim, referenced_dirty_page_kept_a_round, .timeout = 60,
     .fini = tu_fini)
{
	const char *path = tu_dev(TU_FILE, 8ull << 20);
	struct uf_cache_config cfg;
	struct uf_cache_stats st;
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_dev *dev;
	struct uf_cache *c;
	char buf[PAGE_SIZE];
	unsigned long n;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 1024;
	cfg.policy = "linux-3.1";
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	c = uf_cache_obj(cache);
	cr_assert_eq(cache_reclaim_policy(c), &reclaim_legacy);
	dev = tu_cache_dev(cache, path, UF_DEV_NO_FLUSHER);
	file = tu_file_open(dev, 1, 0, 1 << 20, NULL, NULL);
	for (int i = 0; i < 8; i++) {
		tu_fill(buf, sizeof(buf), (uint64_t)i * PAGE_SIZE, 5);
		cr_assert_eq(uf_pwrite(file, buf, sizeof(buf),
				       (uint64_t)i * PAGE_SIZE),
			     (ssize_t)sizeof(buf));
	}
	cr_assert_eq(uf_pread(file, buf, sizeof(buf), 8 * PAGE_SIZE),
		     (ssize_t)sizeof(buf));

	lru_add_drain();	/* pages in a pagevec are not counted */
	cr_assert_eq(lru_count(&c->pool, false), 9);
	n = try_to_free_pages(c, 1);
	cr_assert_eq(n, 1, "freed %lu, not the clean page", n);
	cr_assert_eq(uf_cache_stats(cache, &st), 0);
	cr_assert_eq(st.nr_pageout, 0,
		     "%lu referenced dirty pages written on first sight",
		     st.nr_pageout);
	cr_assert_eq(st.nr_dirty, 8);

	try_to_free_pages(c, 1);
	cr_assert_eq(uf_cache_stats(cache, &st), 0);
	cr_assert_eq(st.nr_pageout, 8, "second round: %lu written",
		     st.nr_pageout);
	cr_assert_eq(uf_fsync(file), 0);
	tu_raw_expect(path, 0, 8 * PAGE_SIZE, 5, "written by reclaim");
	cr_assert_eq(uf_file_close(file), 0);
	cr_assert_eq(uf_dev_close(dev), 0);
	cr_assert_eq(uf_cache_close(cache), 0);
}

/* ------------------------------------------------------------------ */
/* The allocator's flusher wakeup                                      */

struct freer {
	struct hand *h;
	struct page *page;
};

/* Once the stalled allocator has been through two rounds of reclaim at
 * least (a round scans 13 x 8 pages here), one page turns clean (as if
 * written). */
static void *freer_fn(void *arg)
{
	struct freer *f = arg;
	unsigned long *scanned = &f->h->c.pool.rstat.nr_scanned;
	int i;

	for (i = 0; i < 3000; i++) {
		if (__atomic_load_n(scanned, __ATOMIC_RELAXED) > 2 * 13 * 8)
			break;
		usleep(10000);
	}
	lock_page(f->page);
	ClearPageDirty(f->page);
	ClearPageReclaim(f->page);
	unlock_page(f->page);
	mod_vm_state(&f->h->c, NR_FILE_DIRTY, -1);
	pool_reclaim_event(&f->h->c.pool);
	return NULL;
}

/*
 * Every frame of the pool is a dirty page of an inode on its device's
 * b_dirty; an allocation stalls until a page turns clean.  Counts the
 * flusher works reason try_to_free_pages queued meanwhile (@min_nr: the
 * smallest nr_pages among them), then drops every work.
 */
static unsigned int alloc_stall_works(const struct reclaim_policy *rp,
				      long *min_nr)
{
	struct hand *h = hand_with(8, 64, rp);
	struct wb_writeback_work *work, *next;
	struct freer f = { .h = h };
	struct page *p[8], *page;
	unsigned int i, n = 0;
	pthread_t t;

	INIT_LIST_HEAD(&h->bdi.wb.b_dirty);
	INIT_LIST_HEAD(&h->bdi.wb.b_io);
	INIT_LIST_HEAD(&h->bdi.wb.b_more_io);
	INIT_LIST_HEAD(&h->bdi.wb.b_more_io_wait);
	list_add(&h->inode.i_wb_list, &h->bdi.wb.b_dirty);
	list_add(&h->bdi.bdi_list, &h->c.bdi_list);
	for (i = 0; i < 8; i++) {
		p[i] = cache_page(h, i);
		SetPageDirty(p[i]);
	}
	mod_vm_state(&h->c, NR_FILE_DIRTY, 8);
	f.page = p[3];
	cr_assert_eq(pthread_create(&t, NULL, freer_fn, &f), 0);
	page = alloc_page(&h->c);
	cr_assert_not_null(page);
	pthread_join(t, NULL);
	put_page(&h->c, page);

	*min_nr = LONG_MAX;
	list_for_each_entry_safe(work, next, &h->bdi.work_list, list) {
		list_del(&work->list);
		if (work->reason == WB_REASON_TRY_TO_FREE_PAGES) {
			n++;
			if (work->nr_pages < *min_nr)
				*min_nr = work->nr_pages;
		}
		if (work->inode)
			iput(work->inode);
		wb_work_free(work);
	}
	list_del(&h->inode.i_wb_list);
	list_del(&h->bdi.bdi_list);
	for (i = 0; i < 8; i++) {
		if (i == 3)
			continue;
		ClearPageDirty(p[i]);
		ClearPageReclaim(p[i]);
	}
	mod_vm_state(&h->c, NR_FILE_DIRTY, -7);
	hand_free(h);
	return n;
}

/* Seed 003 removes do_try_to_free_pages' flusher wakeup (S003:L579-586),
 * and the allocator has none of its own: no try_to_free_pages work. */
Test(reclaim, pageout_stall_wakes_no_flusher, .timeout = 60)
{
	long min_nr;
	unsigned int n = alloc_stall_works(&reclaim_pageout, &min_nr);

	cr_assert_eq(n, 0, "%u try_to_free_pages works (smallest %ld pages)",
		     n, min_nr);
}

/* 3.2.41 do_try_to_free_pages:2341: only past total_scanned > 1.5 x
 * nr_to_reclaim (48), for total_scanned pages: never a 32-page work. */
Test(reclaim, v32_stall_wakes_flushers_as_do_try_to_free_pages, .timeout = 60)
{
	long min_nr;
	unsigned int n = alloc_stall_works(&reclaim_32, &min_nr);

	cr_assert_gt(n, 0, "3.2 reclaim woke no flusher");
	cr_assert_gt(min_nr, 48, "a %ld-page work: not 3.2's wakeup", min_nr);
}

/* ------------------------------------------------------------------ */
/* kswapd: balance_pgdat per variant                                   */

/*
 * @n pages, all under writeback (nothing reclaim can free), and 8 free
 * frames: above the min mark (4), below the high one (24).  The inode is
 * on b_dirty so that a flusher wakeup would queue a work.
 */
static struct hand *stuck_hand(const struct reclaim_policy *rp,
			       struct page **p, unsigned int n)
{
	struct hand *h = hand_with(n + 8, 64, rp);
	unsigned int i;

	INIT_LIST_HEAD(&h->bdi.wb.b_dirty);
	INIT_LIST_HEAD(&h->bdi.wb.b_io);
	INIT_LIST_HEAD(&h->bdi.wb.b_more_io);
	INIT_LIST_HEAD(&h->bdi.wb.b_more_io_wait);
	list_add(&h->inode.i_wb_list, &h->bdi.wb.b_dirty);
	list_add(&h->bdi.bdi_list, &h->c.bdi_list);
	for (i = 0; i < n; i++) {
		p[i] = cache_page(h, i);
		start_writeback(p[i]);
	}
	h->c.pool.wmark_min = 4;
	h->c.pool.wmark_low = 5;
	h->c.pool.wmark_high = 24;
	return h;
}

static void stuck_free(struct hand *h, struct page **p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		end_page_writeback(p[i]);
	drop_works(h);
	list_del(&h->inode.i_wb_list);
	list_del(&h->bdi.bdi_list);
	hand_free(h);
}

static unsigned int works_for(struct hand *h, enum wb_reason reason)
{
	struct wb_writeback_work *work;
	unsigned int n = 0;

	list_for_each_entry(work, &h->bdi.work_list, list)
		n += work->reason == reason;
	return n;
}

/*
 * 3.2.41 balance_pgdat: 16 pages scanned per priority (12, 11, ...), the
 * zone all_unreclaimable once 96 (6 x 16) were scanned, i.e. after
 * priority 7 (:2730), which ends the run as balanced; in between, the
 * priorities below DEF_PRIORITY - 2 (9 and 8) nap in congestion_wait
 * (:2786-2791), congested or not.  No flusher wakeup: that is
 * do_try_to_free_pages', which kswapd does not call (it would, past 48
 * scanned, at priority 9).
 */
Test(reclaim, kswapd_32_naps_and_wakes_no_flusher, .timeout = 60)
{
	struct page *p[16];
	struct hand *h = stuck_hand(&reclaim_32, p, 16);

	balance_pgdat(&h->c);
	cr_assert_eq(h->c.pool.rstat.nr_kswapd_runs, 1, "PAGEOUTRUN %lu",
		     h->c.pool.rstat.nr_kswapd_runs);
	cr_assert(h->c.pool.all_unreclaimable);
	cr_assert_eq(h->c.pool.rstat.nr_congestion_wait, 2,
		     "%lu congestion_wait naps, not 2 (priorities 9 and 8)",
		     h->c.pool.rstat.nr_congestion_wait);
	cr_assert_eq(works_for(h, WB_REASON_TRY_TO_FREE_PAGES), 0,
		     "kswapd woke the flushers as direct reclaim does");
	cr_assert_eq(h->c.pool.rstat.nr_flusher_wakeups, 0);
	stuck_free(h, p, 16);
}

/*
 * 6.18 balance_pgdat + shrink_node on 16 pages under writeback: priority
 * 12 marks them PG_reclaim (case 2) and, all taken being writeback, sets
 * PGDAT_WRITEBACK; priorities 11..1 meet them as case 1 (nr_immediate):
 * LRUVEC_NODE_CONGESTED and a WRITEBACK throttle each; the cache trim
 * mode (16 inactive pages >> 4 on) failed, so the run starts again once
 * (12 more throttles), then counts a kswapd failure.  No nap, no flusher
 * wakeup.  Direct reclaim then stalls on the congested node once per
 * priority (13, CONGESTED) and once at priority 1 for no progress; with
 * kswapd given up (MAX_RECLAIM_RETRIES failures) neither stall happens.
 */
Test(reclaim, kswapd_mainline_priorities_and_failures, .timeout = 60)
{
	struct page *p[16];
	struct hand *h = stuck_hand(&reclaim_mainline, p, 16);
	const unsigned long *tr = h->c.pool.rstat.nr_throttle_reason;

	balance_pgdat(&h->c);
	cr_assert_eq(h->c.pool.rstat.nr_congestion_wait, 0);
	cr_assert_eq(h->c.pool.kswapd_failures, 1);
	cr_assert(test_bit(PGDAT_WRITEBACK, &h->c.pool.zone_flags));
	cr_assert(test_bit(LRUVEC_NODE_CONGESTED, &h->c.pool.zone_flags));
	cr_assert_not(test_bit(PGDAT_DIRTY, &h->c.pool.zone_flags));
	cr_assert_eq(tr[VMSCAN_THROTTLE_WRITEBACK], 23, "%lu throttles",
		     tr[VMSCAN_THROTTLE_WRITEBACK]);
	cr_assert_eq(h->c.pool.rstat.nr_throttle, 23);
	cr_assert_eq(works_for(h, WB_REASON_TRY_TO_FREE_PAGES), 0);
	cr_assert_eq(works_for(h, WB_REASON_VMSCAN), 0,
		     "no page was dirty: no vmscan wakeup");

	cr_assert_eq(try_to_free_pages(&h->c, 32), 0);
	cr_assert_eq(tr[VMSCAN_THROTTLE_CONGESTED], 13, "%lu CONGESTED",
		     tr[VMSCAN_THROTTLE_CONGESTED]);
	cr_assert_eq(tr[VMSCAN_THROTTLE_NOPROGRESS], 1, "%lu NOPROGRESS",
		     tr[VMSCAN_THROTTLE_NOPROGRESS]);
	cr_assert_eq(tr[VMSCAN_THROTTLE_WRITEBACK], 23,
		     "direct reclaim has no case 1");

	h->c.pool.kswapd_failures = MAX_RECLAIM_RETRIES;
	cr_assert_eq(try_to_free_pages(&h->c, 32), 0);
	cr_assert_eq(tr[VMSCAN_THROTTLE_CONGESTED], 13,
		     "skip_throttle_noprogress: kswapd gave up");
	cr_assert_eq(tr[VMSCAN_THROTTLE_NOPROGRESS], 1);
	stuck_free(h, p, 16);
}

/*
 * 6.18 on 16 dirty pages, none under writeback: kswapd's priority 12
 * marks them PG_reclaim, activates them and, every file page taken being
 * unqueued dirty, sets PGDAT_DIRTY and wakes the flushers (vmscan);
 * later priorities take them to pageout(), which writes no file folio
 * (->writepage is gone): nothing written, every page still dirty.
 */
Test(reclaim, kswapd_mainline_writes_no_file_page, .timeout = 60)
{
	struct hand *h = hand_with(24, 64, &reclaim_mainline);
	struct page *p[16];
	unsigned int i;

	INIT_LIST_HEAD(&h->bdi.wb.b_dirty);
	INIT_LIST_HEAD(&h->bdi.wb.b_io);
	INIT_LIST_HEAD(&h->bdi.wb.b_more_io);
	INIT_LIST_HEAD(&h->bdi.wb.b_more_io_wait);
	list_add(&h->inode.i_wb_list, &h->bdi.wb.b_dirty);
	list_add(&h->bdi.bdi_list, &h->c.bdi_list);
	for (i = 0; i < 16; i++) {
		p[i] = cache_page(h, i);
		SetPageDirty(p[i]);
	}
	h->c.pool.wmark_min = 4;
	h->c.pool.wmark_low = 5;
	h->c.pool.wmark_high = 24;
	balance_pgdat(&h->c);
	cr_assert(test_bit(PGDAT_DIRTY, &h->c.pool.zone_flags));
	cr_assert_eq(h->c.pool.rstat.nr_pageout, 0, "%lu pages written",
		     h->c.pool.rstat.nr_pageout);
	cr_assert_gt(works_for(h, WB_REASON_VMSCAN), 0);
	for (i = 0; i < 16; i++) {
		cr_assert(PageDirty(p[i]) && !PageWriteback(p[i]),
			  "page %u written by kswapd", i);
		ClearPageDirty(p[i]);
		ClearPageReclaim(p[i]);
	}
	drop_works(h);
	list_del(&h->inode.i_wb_list);
	list_del(&h->bdi.bdi_list);
	hand_free(h);
}

/*
 * 6.18 too_many_isolated / VMSCAN_THROTTLE_ISOLATED: with more pages
 * isolated (by others) than an eighth of the inactive list, global
 * direct reclaim waits once per batch (HZ/50) and gives the batch up;
 * kswapd never waits there.
 */
Test(reclaim, mainline_isolated_throttle, .timeout = 60)
{
	struct hand *h = hand_with(64, 64, &reclaim_mainline);
	const unsigned long *tr = h->c.pool.rstat.nr_throttle_reason;
	unsigned int i;

	for (i = 0; i < 64; i++)
		cache_page(h, i);
	h->c.pool.nr_isolated = 9;	/* 64 >> 3 = 8 */
	cr_assert_eq(try_to_free_pages(&h->c, 8), 0);
	/* a batch per priority 12..1, two at priority 0 (64 pages) */
	cr_assert_eq(tr[VMSCAN_THROTTLE_ISOLATED], 14, "%lu ISOLATED waits",
		     tr[VMSCAN_THROTTLE_ISOLATED]);
	h->c.pool.wmark_min = 4;
	h->c.pool.wmark_low = 5;
	h->c.pool.wmark_high = 24;
	balance_pgdat(&h->c);
	cr_assert_eq(tr[VMSCAN_THROTTLE_ISOLATED], 14, "kswapd waited");
	cr_assert_gt(h->c.pool.rstat.nr_reclaimed, 0);
	/* not more than an eighth: no wait */
	h->c.pool.nr_isolated = (long)(lru_count(&h->c.pool, false) >> 3);
	cr_assert_geq(try_to_free_pages(&h->c, 8), 8);
	cr_assert_eq(tr[VMSCAN_THROTTLE_ISOLATED], 14);
	h->c.pool.nr_isolated = 0;
	hand_free(h);
}

/* 3.2.41 vmscan.c:2109: shrink_zone's early stop only below DEF_PRIORITY;
 * mainline shrink_lruvec: at every priority but for global direct
 * reclaim at DEF_PRIORITY (proportional_reclaim). */
Test(reclaim, shrink_zone_early_stop_per_variant)
{
	struct hand *h = hand_with(8, 8, &reclaim_32);
	struct scan_control sc = { .nr_to_reclaim = 32, .global = true };

	sc.priority = DEF_PRIORITY;
	cr_assert_not(shrink_zone_done(&h->c, &sc, 32));
	sc.kswapd = true;
	cr_assert_not(shrink_zone_done(&h->c, &sc, 32));
	sc.priority = DEF_PRIORITY - 1;
	cr_assert(shrink_zone_done(&h->c, &sc, 32));
	cr_assert_not(shrink_zone_done(&h->c, &sc, 31));

	hpol.reclaim = &reclaim_mainline;
	sc.priority = DEF_PRIORITY;
	cr_assert(shrink_zone_done(&h->c, &sc, 32), "kswapd stops");
	sc.kswapd = false;
	cr_assert_not(shrink_zone_done(&h->c, &sc, 32), "proportional");
	sc.global = false;
	cr_assert(shrink_zone_done(&h->c, &sc, 32), "memcg stops");
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* 3.2's bdi congestion                                                */

/* 3.2 blk_queue_congestion_threshold(): on at nr - nr/8 + 1, off at
 * nr - nr/8 - nr/16 - 1. */
Test(reclaim, congestion_thresholds_as_blk_core)
{
	struct backing_dev_info bdi = { .nr_requests = 128 };

	cr_assert_eq(queue_congestion_on_threshold(&bdi), 113);
	cr_assert_eq(queue_congestion_off_threshold(&bdi), 103);
	bdi.nr_requests = 0;	/* the default queue depth, 64 */
	cr_assert_eq(queue_congestion_on_threshold(&bdi), 57);
	cr_assert_eq(queue_congestion_off_threshold(&bdi), 51);
	bdi.nr_requests = 4;
	cr_assert_eq(queue_congestion_on_threshold(&bdi), 4);	/* capped */
	cr_assert_eq(queue_congestion_off_threshold(&bdi), 3);
	bdi.nr_requests = 1;
	cr_assert_eq(queue_congestion_off_threshold(&bdi), 1);	/* floor */
}

struct cwaiter {
	struct hand *h;
	long ret;
	bool iff;
	bool done;
};

static void *cwaiter_fn(void *arg)
{
	struct cwaiter *w = arg;

	if (w->iff)
		w->ret = wait_iff_congested(&w->h->c, BLK_RW_ASYNC, 20 * HZ);
	else
		w->ret = congestion_wait(&w->h->c, BLK_RW_ASYNC, 20 * HZ);
	__atomic_store_n(&w->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Write requests in flight, as wb_request_prep/_done count them. */
static void set_writeback_requests(struct backing_dev_info *bdi, long n)
{
	__atomic_store_n(&bdi->nr_async_requests, n, __ATOMIC_SEQ_CST);
}

/*
 * Congested at 57 requests in flight (of 64, the default depth), still
 * at 51 (hysteresis), clear below; the clear (clear_bdi_congested) wakes
 * a congestion_wait() sleeper long before its timeout, and with nothing
 * congested a write's completion does (end_page_writeback ->
 * __freed_request's wake_up below the off mark).
 */
Test(reclaim, congestion_set_clear_and_wakeup, .timeout = 60)
{
	struct hand *h = hand_with(8, 8, &reclaim_32);
	struct cwaiter w = { .h = h };
	struct page *page = add_page(h, 0);
	pthread_t t;
	double t0;

	h->bdi.max_io_pages = 1;
	list_add(&h->bdi.bdi_list, &h->c.bdi_list);
	set_writeback_requests(&h->bdi, 55);
	cr_assert_not(bdi_update_congested(&h->bdi));
	set_writeback_requests(&h->bdi, 56);
	cr_assert(bdi_update_congested(&h->bdi));
	cr_assert(bdi_any_congested(BLK_RW_ASYNC));
	set_writeback_requests(&h->bdi, 51);
	cr_assert(bdi_update_congested(&h->bdi), "cleared above the off mark");

	cr_assert_eq(pthread_create(&t, NULL, cwaiter_fn, &w), 0);
	usleep(200000);
	cr_assert_not(__atomic_load_n(&w.done, __ATOMIC_SEQ_CST));
	t0 = now();
	set_writeback_requests(&h->bdi, 50);
	cr_assert_not(bdi_update_congested(&h->bdi));	/* 50 < 51 */
	pthread_join(t, NULL);
	cr_assert_gt(w.ret, 0, "timed out: the clear woke nobody");
	cr_assert_lt(now() - t0, 5.0);
	cr_assert_not(bdi_any_congested(BLK_RW_ASYNC));

	/* nothing congested: the next write's completion wakes it */
	w.done = false;
	cr_assert_eq(pthread_create(&t, NULL, cwaiter_fn, &w), 0);
	usleep(200000);
	cr_assert_not(__atomic_load_n(&w.done, __ATOMIC_SEQ_CST));
	t0 = now();
	start_writeback(page);
	end_page_writeback(page);
	pthread_join(t, NULL);
	cr_assert_gt(w.ret, 0, "timed out: the completion woke nobody");
	cr_assert_lt(now() - t0, 5.0);
	set_writeback_requests(&h->bdi, 0);
	list_del(&h->bdi.bdi_list);
	hand_free(h);
}

/* 3.2 wait_iff_congested(): no sleep unless a bdi is congested AND the
 * zone is (ZONE_CONGESTED); then woken by the clear. */
Test(reclaim, wait_iff_congested_needs_zone_congested, .timeout = 60)
{
	struct hand *h = hand_with(8, 8, &reclaim_32);
	struct cwaiter w = { .h = h, .iff = true };
	pthread_t t;

	h->bdi.max_io_pages = 1;
	list_add(&h->bdi.bdi_list, &h->c.bdi_list);
	set_writeback_requests(&h->bdi, 64);
	cr_assert(bdi_update_congested(&h->bdi));
	/* no sleep: the timeout less the jiffies its cond_resched() took
	 * (a tick or two on a loaded machine); a sleep would leave ~0 */
	cr_assert_gt(wait_iff_congested(&h->c, BLK_RW_ASYNC, HZ), HZ / 2,
		     "slept without ZONE_CONGESTED");
	set_bit(ZONE_CONGESTED, &h->c.pool.zone_flags);
	cr_assert_eq(pthread_create(&t, NULL, cwaiter_fn, &w), 0);
	usleep(200000);
	cr_assert_not(__atomic_load_n(&w.done, __ATOMIC_SEQ_CST),
		      "did not sleep with both congested");
	set_writeback_requests(&h->bdi, 0);
	bdi_writeback_done_congestion(&h->c);
	pthread_join(t, NULL);
	cr_assert_gt(w.ret, 0);
	cr_assert_eq(h->c.pool.rstat.nr_congestion_wait, 1);
	list_del(&h->bdi.bdi_list);
	hand_free(h);
}

/* The device of the cache's first (only) bdi. */
static struct backing_dev_info *first_bdi(struct uf_cache *c)
{
	cr_assert_not(list_empty(&c->bdi_list));
	return list_first_entry(&c->bdi_list, struct backing_dev_info,
				bdi_list);
}

/*
 * 3.2.41 may_write_to_queue (vmscan.c:386): direct reclaim leaves a
 * congested bdi alone (pageout() -> PAGE_KEEP, nr_congested) unless it
 * is the bdi the thread is writing to (current->backing_dev_info, :392);
 * a batch whose dirty pages all met it sets ZONE_CONGESTED.
 * reclaim=legacy (3.1), no flusher.
 */
Test(reclaim, may_write_to_queue_congested_unless_own_bdi, .timeout = 60,
     .fini = tu_fini)
{
	const char *path = tu_dev(TU_FILE, 8ull << 20);
	struct backing_dev_info *bdi;
	struct uf_cache_config cfg;
	struct uf_cache_stats st;
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_dev *dev;
	struct uf_cache *c;
	char buf[PAGE_SIZE];

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 1024;
	cfg.policy = "linux-3.1";
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	c = uf_cache_obj(cache);
	dev = tu_cache_dev(cache, path, UF_DEV_NO_FLUSHER);
	file = tu_file_open(dev, 1, 0, 1 << 20, NULL, NULL);
	for (int i = 0; i < 8; i++) {
		tu_fill(buf, sizeof(buf), (uint64_t)i * PAGE_SIZE, 6);
		cr_assert_eq(uf_pwrite(file, buf, sizeof(buf),
				       (uint64_t)i * PAGE_SIZE),
			     (ssize_t)sizeof(buf));
	}
	lru_add_drain();
	bdi = first_bdi(c);
	/* 200 requests in flight: congested (on at 7/8 of the depth) */
	__atomic_add_fetch(&bdi->nr_async_requests, 200,
			   __ATOMIC_SEQ_CST);
	/* every priority: the first pass clears PG_referenced, the
	 * others find the queue congested */
	try_to_free_pages(c, 1);
	cr_assert_eq(uf_cache_stats(cache, &st), 0);
	cr_assert(bdi_write_congested(bdi));
	cr_assert_eq(st.nr_pageout, 0, "%lu written to a congested queue",
		     st.nr_pageout);
	/* 3.2.41 vmscan.c:1016: every dirty page met a congested bdi */
	cr_assert(test_bit(ZONE_CONGESTED, &c->pool.zone_flags));

	set_current_backing_dev_info(bdi);
	try_to_free_pages(c, 1);
	set_current_backing_dev_info(NULL);
	cr_assert_eq(uf_cache_stats(cache, &st), 0);
	cr_assert_eq(st.nr_pageout, 8, "own bdi: %lu written", st.nr_pageout);

	__atomic_sub_fetch(&bdi->nr_async_requests, 200,
			   __ATOMIC_SEQ_CST);
	cr_assert(bdi_write_congested(bdi), "cleared with no write done");
	/* the next write's completion clears it (__freed_request) */
	cr_assert_eq(uf_pwrite(file, buf, sizeof(buf), 8 * PAGE_SIZE),
		     (ssize_t)sizeof(buf));
	cr_assert_eq(uf_fsync(file), 0);
	cr_assert_not(bdi_write_congested(bdi), "not cleared by a write");
	tu_raw_expect(path, 0, 8 * PAGE_SIZE, 6, "written by reclaim");
	cr_assert_eq(uf_file_close(file), 0);
	cr_assert_eq(uf_dev_close(dev), 0);
	cr_assert_eq(uf_cache_close(cache), 0);
}
