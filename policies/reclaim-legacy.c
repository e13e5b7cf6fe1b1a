// SPDX-License-Identifier: MIT
/*
 * policies/reclaim-legacy.c - reclaim=legacy: reclaim writes dirty pages
 * itself, one page at a time through pageout(), direct reclaim and kswapd
 * alike, as before Mel Gorman's 3.2 series ("mm: vmscan: do not
 * writeback filesystem pages in direct reclaim", then "... in kswapd
 * except in high priority", both in 3.2-rc1): the 3.2.41 pageout() and
 * its gates (sc->may_writepage, page count 2, may_write_to_queue) without
 * the kswapd/priority test that 3.2 put in front of them.  No per-batch
 * writeback throttle (3.2 added "throttle reclaim if encountering too
 * many dirty pages under writeback" in the same series); the flusher
 * wakeup and the wait_iff_congested nap of do_try_to_free_pages are
 * 3.1's too.  Checked against Linux 3.1.10 mm/vmscan.c (a public 3.1.10
 * tree): shrink_page_list sends a dirty page straight to pageout() behind
 * only the PAGEREF_RECLAIM_CLEAN, may_enter_fs and sc->may_writepage
 * gates (no kswapd/priority test, no per-batch writeback throttle), and
 * do_try_to_free_pages wakes the flushers past 1.5 x nr_to_reclaim
 * scanned and naps in wait_iff_congested(HZ/10).  Mel Gorman's series
 * ("mm: vmscan: do not writeback filesystem pages in direct reclaim",
 * "... in kswapd except in high priority", July 2011) is what 3.2.41
 * shows merged in front of it.
 */
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "policies/policy.h"

static enum reclaim_dirty_action
legacy_dirty_page(struct uf_cache *c, struct page *page,
		  struct scan_control *sc, struct reclaim_batch *rb)
{
	(void)c; (void)page; (void)sc; (void)rb;
	return RECLAIM_PAGEOUT;
}

static void legacy_throttle(struct uf_cache *c, struct scan_control *sc,
			    struct reclaim_batch *rb)
{
	(void)c; (void)sc; (void)rb;
}

DEFINE_RECLAIM_POLICY(legacy, "legacy", MEM_CGROUP_RECLAIM_RETRIES,
		      reclaim_keep_writeback, legacy_dirty_page,
		      legacy_throttle, reclaim_after_priority_32,
		      "pre-3.2 pageout() from direct reclaim and kswapd (3.2.41 pageout without the 3.2 gate)");
