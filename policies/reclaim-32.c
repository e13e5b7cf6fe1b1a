// SPDX-License-Identifier: MIT
/*
 * policies/reclaim-32.c - reclaim=3.2: what Linux 3.2 reclaim does with
 * dirty and writeback file pages, from 3.2.41's mm/vmscan.c:
 *
 *  - shrink_page_list(): a writeback page is counted (nr_writeback) and
 *    kept; a dirty file page gets PG_reclaim and NR_VMSCAN_IMMEDIATE and
 *    is kept, unless the reclaimer is kswapd at a priority below
 *    DEF_PRIORITY - 2, which still calls pageout() on it ("Only kswapd
 *    can writeback filesystem pages ... unless under significant
 *    pressure");
 *  - shrink_inactive_list(): nr_writeback >= nr_taken >> (DEF_PRIORITY -
 *    priority) -> wait_iff_congested(BLK_RW_ASYNC, HZ/10);
 *  - do_try_to_free_pages(): once total_scanned > 1.5 * nr_to_reclaim,
 *    wakeup_flusher_threads(total_scanned, WB_REASON_TRY_TO_FREE_PAGES)
 *    after every priority, and below DEF_PRIORITY - 2 a nap in
 *    wait_iff_congested(HZ/10);
 *  - a memcg charge that reclaimed nothing MEM_CGROUP_RECLAIM_RETRIES
 *    times goes OOM (mm/memcontrol.c __mem_cgroup_try_charge): domain_oom.
 */
#include "mm/backing-dev.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "fs/writeback.h"
#include "kernel/jiffies.h"
#include "policies/policy.h"

/* A dirty page left to the flusher: NR_VMSCAN_IMMEDIATE, PG_reclaim (so
 * its end of writeback rotates it), kept. */
enum reclaim_dirty_action reclaim_keep_immediate(struct uf_cache *c,
						  struct page *page)
{
	__atomic_add_fetch(&c->pool.rstat.nr_immediate, 1, __ATOMIC_RELAXED);
	SetPageReclaim(page);
	return RECLAIM_KEEP;
}

/* 3.2 and legacy: a page under writeback is kept (shrink_page_list
 * counted it in nr_writeback). */
bool reclaim_keep_writeback(struct uf_cache *c, struct page *page,
			    struct scan_control *sc, struct reclaim_batch *rb)
{
	(void)c; (void)page; (void)sc; (void)rb;
	return false;
}

static enum reclaim_dirty_action
r32_dirty_page(struct uf_cache *c, struct page *page,
	       struct scan_control *sc, struct reclaim_batch *rb)
{
	(void)rb;
	if (!sc->kswapd || sc->priority >= DEF_PRIORITY - 2)
		return reclaim_keep_immediate(c, page);
	return RECLAIM_PAGEOUT;
}

/* shared with reclaim=pageout, which keeps this test */
void reclaim_throttle_32(struct uf_cache *c, struct scan_control *sc,
			 struct reclaim_batch *rb)
{
	if (rb->nr_writeback &&
	    rb->nr_writeback >= rb->nr_taken >> (DEF_PRIORITY - sc->priority))
		wait_iff_congested(c, BLK_RW_ASYNC, HZ / 10 ? HZ / 10 : 1);
}

void reclaim_nap_32(struct uf_cache *c, struct scan_control *sc)
{
	if (sc->nr_scanned && sc->priority < DEF_PRIORITY - 2)
		wait_iff_congested(c, BLK_RW_ASYNC, HZ / 10 ? HZ / 10 : 1);
}

static void reclaim_wake_flushers_32(struct uf_cache *c,
				     struct scan_control *sc)
{
	if (sc->total_scanned > sc->nr_to_reclaim + sc->nr_to_reclaim / 2) {
		wakeup_flusher_threads(c, (long)sc->total_scanned,
				       WB_REASON_TRY_TO_FREE_PAGES);
		__atomic_add_fetch(&c->pool.rstat.nr_flusher_wakeups, 1,
				   __ATOMIC_RELAXED);
		sc->may_writepage = true;
	}
}

/* 3.2 and legacy (3.1's do_try_to_free_pages did the same) */
void reclaim_after_priority_32(struct uf_cache *c, struct scan_control *sc)
{
	reclaim_wake_flushers_32(c, sc);
	reclaim_nap_32(c, sc);
}

DEFINE_RECLAIM_POLICY(32, "3.2", MEM_CGROUP_RECLAIM_RETRIES,
		      reclaim_keep_writeback, r32_dirty_page,
		      reclaim_throttle_32, reclaim_after_priority_32,
		      "3.2.41 mm/vmscan.c shrink_page_list/shrink_inactive_list/do_try_to_free_pages, backing-dev.c wait_iff_congested");
