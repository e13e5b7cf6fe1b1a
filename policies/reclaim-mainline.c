// SPDX-License-Identifier: MIT
/*
 * policies/reclaim-mainline.c - reclaim=mainline (alias of the linux-6.18
 * preset's reclaim): Linux 6.18.35 mm/vmscan.c (GitHub
 * leftymods/linux-6.18.y at 40a9e9f43d44) shrink_folio_list,
 * shrink_inactive_list, shrink_node, reclaim_throttle.  The counts
 * (folio_check_dirty_writeback), shrink_node's PGDAT_* / LRUVEC_* bits,
 * the NOPROGRESS and ISOLATED throttles and balance_pgdat are
 * engine/mm/vmscan.c's, under !reclaim_is_3x():
 *
 *  - a folio under writeback (shrink_folio_list:1238-1270): kswapd meeting
 *    it with PG_reclaim on a PGDAT_WRITEBACK node counts nr_immediate and
 *    activates it (case 1); global reclaim, or one without PG_reclaim yet,
 *    sets PG_reclaim, counts nr_writeback and activates it (case 2); a
 *    cgroup v1 domain meeting it again with PG_reclaim waits for it
 *    (case 3);
 *  - a dirty file folio (:1433-1447): PG_reclaim, NR_VMSCAN_IMMEDIATE,
 *    activated; only kswapd meeting it again with PG_reclaim on a
 *    PGDAT_DIRTY node goes on to pageout(), which no longer writes file
 *    folios (->writepage is gone) and activates it;
 *  - shrink_inactive_list (:2090-2103): every taken page dirty and not
 *    under writeback -> wakeup_flusher_threads(WB_REASON_VMSCAN), and in
 *    a cgroup v1 domain reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK);
 *  - a memcg charge fails after MAX_RECLAIM_RETRIES (16) reclaims that
 *    freed nothing.
 */
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "fs/writeback.h"
#include "policies/policy.h"

static bool ml_writeback_page(struct uf_cache *c, struct page *page,
			      struct scan_control *sc,
			      struct reclaim_batch *rb)
{
	if (sc->kswapd && PageReclaim(page) &&
	    test_bit(PGDAT_WRITEBACK, &c->pool.zone_flags)) {
		rb->nr_immediate++;		/* case 1 */
		reclaim_activate(page, rb);
		return false;
	}
	/* case 2: writeback_throttling_sane() (global reclaim; a domain is
	 * cgroup v1) or not yet marked */
	if (sc->global || !PageReclaim(page)) {
		SetPageReclaim(page);
		rb->nr_writeback++;
		reclaim_activate(page, rb);
		return false;
	}
	return true;			/* case 3: wait for it */
}

static enum reclaim_dirty_action
ml_dirty_page(struct uf_cache *c, struct page *page,
	      struct scan_control *sc, struct reclaim_batch *rb)
{
	(void)rb;
	if (sc->kswapd && PageReclaim(page) &&
	    test_bit(PGDAT_DIRTY, &c->pool.zone_flags))
		return RECLAIM_PAGEOUT;	/* pageout() activates it */
	reclaim_keep_immediate(c, page);	/* NR_VMSCAN_IMMEDIATE */
	return RECLAIM_ACTIVATE;
}

static void ml_throttle(struct uf_cache *c, struct scan_control *sc,
			struct reclaim_batch *rb)
{
	if (rb->nr_unqueued_dirty == rb->nr_taken) {
		wakeup_flusher_threads(c, 0, WB_REASON_VMSCAN);
		__atomic_add_fetch(&c->pool.rstat.nr_flusher_wakeups, 1,
				   __ATOMIC_RELAXED);
		if (!sc->global)
			reclaim_throttle(c, VMSCAN_THROTTLE_WRITEBACK);
	}
}

static void ml_after_priority(struct uf_cache *c, struct scan_control *sc)
{
	(void)c; (void)sc;
}

DEFINE_RECLAIM_POLICY(mainline, "mainline", MAX_RECLAIM_RETRIES,
		      ml_writeback_page, ml_dirty_page, ml_throttle,
		      ml_after_priority,
		      "Linux 6.18.35 mm/vmscan.c: shrink_folio_list, shrink_inactive_list, shrink_node, reclaim_throttle");
