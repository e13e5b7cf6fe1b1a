// SPDX-License-Identifier: MIT
/*
 * policies/reclaim-mainline.c - reclaim=mainline: today's mm/vmscan.c
 * (torvalds/linux 2025, mm/vmscan.c: shrink_folio_list,
 * shrink_inactive_list, shrink_node, reclaim_throttle):
 *
 *  - a folio under writeback: with PG_reclaim already set and reclaimed
 *    by kswapd it counts as nr_immediate (case 1); met again with
 *    PG_reclaim by memcg (cgroup v1) reclaim, it is unlocked and waited
 *    for (case 3, folio_wait_writeback); else PG_reclaim is set (case 2).
 *    It stays on the inactive list here (the kernel activates it, and
 *    rotation clears PG_active: the same place in the end);
 *  - a dirty file folio: PG_reclaim, NR_VMSCAN_IMMEDIATE, kept, except
 *    kswapd meeting it again with PG_reclaim (the PGDAT_DIRTY case),
 *    which calls pageout();
 *  - shrink_inactive_list(): every taken page dirty and unqueued ->
 *    wakeup_flusher_threads(WB_REASON_VMSCAN), and for a memcg without
 *    sane writeback throttling (cgroup v1: a uflush domain)
 *    reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK); kswapd with
 *    nr_immediate throttles too (shrink_node);
 *  - a memcg charge fails after MAX_RECLAIM_RETRIES (16) reclaims that
 *    freed nothing;
 *  - reclaim_throttle(): HZ/10, ended early by __acct_reclaim_writeback
 *    once SWAP_CLUSTER_MAX pages per throttled task were written.
 */
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "fs/writeback.h"
#include "policies/policy.h"

static bool ml_writeback_page(struct uf_cache *c, struct page *page,
			      struct scan_control *sc,
			      struct reclaim_batch *rb)
{
	(void)c;
	if (sc->kswapd && PageReclaim(page)) {
		rb->nr_immediate++;	/* case 1 */
		return false;
	}
	/* case 3: cgroup v1 (no sane writeback throttling) waits for a
	 * page it has already marked */
	if (!sc->global && PageReclaim(page))
		return true;
	SetPageReclaim(page);		/* case 2 */
	return false;
}

static enum reclaim_dirty_action
ml_dirty_page(struct uf_cache *c, struct page *page,
	      struct scan_control *sc, struct reclaim_batch *rb)
{
	(void)rb;
	if (sc->kswapd && PageReclaim(page))
		return RECLAIM_PAGEOUT;
	return reclaim_keep_immediate(c, page);
}

static void ml_throttle(struct uf_cache *c, struct scan_control *sc,
			struct reclaim_batch *rb)
{
	if (rb->nr_unqueued_dirty == rb->nr_taken) {
		wakeup_flusher_threads(c, 0, WB_REASON_VMSCAN);
		__atomic_add_fetch(&c->pool.rstat.nr_flusher_wakeups, 1,
				   __ATOMIC_RELAXED);
		if (!sc->global)
			reclaim_throttle_writeback(c);
	}
	if (sc->kswapd && rb->nr_immediate)
		reclaim_throttle_writeback(c);
}

static void ml_after_priority(struct uf_cache *c, struct scan_control *sc)
{
	(void)c; (void)sc;
}

DEFINE_RECLAIM_POLICY(mainline, "mainline", MAX_RECLAIM_RETRIES,
		      ml_writeback_page, ml_dirty_page, ml_throttle,
		      ml_after_priority,
		      "mainline shrink_folio_list, shrink_inactive_list WB_REASON_VMSCAN, reclaim_throttle");
