// SPDX-License-Identifier: MIT
/*
 * policies/reclaim-pageout.c - reclaim=pageout: seed 003's pageout works
 * (Wu Fengguang, "writeback: introduce the pageout work", Feb 2012 RFC on
 * 3.3-rc; digest §2.7, S003:L487-586), on top of 3.2's reclaim:
 *
 *  - a writeback page: nr_pgreclaim++ if PG_reclaim is set already (met
 *    again while still under I/O), else PG_reclaim is set (S003:L507-512);
 *  - a dirty file page with PG_reclaim: nr_pgreclaim++, kept, no new work;
 *    without: flush_inode_page(mapping, page, false) >= 0 -> PG_reclaim,
 *    NR_VMSCAN_IMMEDIATE, kept; a failed queueing (reserve empty, inode
 *    going) falls back to pageout() (S003:L516-536), now from any
 *    reclaimer (the kswapd gate is gone, S003:L526-527);
 *  - shrink_inactive_list(): 3.2's wait_iff_congested test, then
 *    reclaim_wait(HZ/10) when nr_pgreclaim >= nr_taken >> (DEF_PRIORITY -
 *    priority) and (domain reclaim || !zone_dirty_ok) (S003:L569-575);
 *  - do_try_to_free_pages(): no wakeup_flusher_threads (S003:L579-586),
 *    may_writepage once 1.5 batches were scanned, 3.2's nap kept.
 */
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "fs/writeback.h"
#include "kernel/jiffies.h"
#include "policies/policy.h"

void reclaim_throttle_32(struct uf_cache *c, struct scan_control *sc,
			 struct reclaim_batch *rb);

static bool po_writeback_page(struct uf_cache *c, struct page *page,
			      struct scan_control *sc,
			      struct reclaim_batch *rb)
{
	(void)c; (void)sc;
	if (PageReclaim(page))
		rb->nr_pgreclaim++;
	else
		SetPageReclaim(page);
	return false;
}

static enum reclaim_dirty_action
po_dirty_page(struct uf_cache *c, struct page *page,
	      struct scan_control *sc, struct reclaim_batch *rb)
{
	(void)sc;
	if (PageReclaim(page)) {
		/* met again: we scan faster than the flusher writes */
		rb->nr_pgreclaim++;
		return RECLAIM_KEEP;
	}
	if (page->mapping && flush_inode_page(page->mapping, page, false) >= 0)
		return reclaim_keep_immediate(c, page);
	return RECLAIM_PAGEOUT;
}

/* The reclaim_wait() test of S003:L571-573, on its own for the tests. */

bool pageout_should_wait(struct uf_cache *c, struct scan_control *sc,
			 struct reclaim_batch *rb)
{
	return rb->nr_pgreclaim &&
	       rb->nr_pgreclaim >= rb->nr_taken >> (DEF_PRIORITY - sc->priority) &&
	       (!sc->global || !zone_dirty_ok(c));
}

static void po_throttle(struct uf_cache *c, struct scan_control *sc,
			struct reclaim_batch *rb)
{
	reclaim_throttle_32(c, sc, rb);
	if (pageout_should_wait(c, sc, rb))
		reclaim_wait(c, HZ / 10 ? HZ / 10 : 1);
}

static void po_after_priority(struct uf_cache *c, struct scan_control *sc)
{
	if (sc->total_scanned > sc->nr_to_reclaim + sc->nr_to_reclaim / 2)
		sc->may_writepage = true;
	reclaim_nap_32(c, sc);
}

DEFINE_RECLAIM_POLICY(pageout, "pageout", MEM_CGROUP_RECLAIM_RETRIES,
		      po_writeback_page, po_dirty_page, po_throttle,
		      po_after_priority,
		      "seed 003 pageout works, PG_reclaim, reclaim_wait (S003:L441-586)");
