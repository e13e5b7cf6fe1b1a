// SPDX-License-Identifier: MIT
/*
 * engine/mm/vmscan.c - page reclaim: mm/vmscan.c (3.2) for uflush.
 *
 * Kept from the kernel, by name: do_try_to_free_pages() walks the
 * priorities from DEF_PRIORITY (12) down to 0; shrink_zone() scans
 * size >> priority pages per pass; shrink_inactive_list() isolates at most
 * SWAP_CLUSTER_MAX (32) pages from the inactive tail and hands them to
 * shrink_page_list(), which frees what is clean, unlocked, not under
 * writeback and used by nobody but the page cache (__remove_mapping()
 * freezes the count at 2 under tree_lock), and counts the dirty, writeback
 * and PG_reclaim pages of the batch; shrink_active_list() ages active
 * pages back when the inactive list is the smaller.  kswapd (a thread per
 * cache) reclaims from when free frames fall below the low watermark until
 * they reach the high one; below that the allocator reclaims itself.
 *
 * What is done with a dirty or writeback page, and how reclaim waits for
 * writeback, is the reclaim variant's (mm/vmscan.h, policies/reclaim-*.c).
 *
 * Simplified: one zone per cache, file pages only, no lumpy reclaim, no
 * mapped pages (page_referenced() reduces to PG_referenced), no slab.
 * A memory domain (pool.nr_outside != 0) is reclaimed as a memcg: direct
 * reclaim only (no kswapd), !global_reclaim(), and (as cgroup v1) without
 * writeback_throttling_sane().
 *
 * reclaim=mainline follows Linux 6.18.35's mm/vmscan.c where it differs
 * from 3.2: folio_check_dirty_writeback()'s counts, activation of dirty
 * and writeback folios, no pageout() of file folios, shrink_node()'s
 * PGDAT_WRITEBACK / PGDAT_DIRTY / LRUVEC_NODE_CONGESTED, the four
 * reclaim_throttle() reasons and balance_pgdat().
 */
#include <errno.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "fs/writeback.h"
#include "kernel/jiffies.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/sim.h"
#include "policies/policy.h"
#include "trace/events/vmscan.h"
#include "uflush.h"

static __thread bool in_kswapd;
static __thread bool in_reclaim;
static __thread struct backing_dev_info *cur_bdi;

void set_current_backing_dev_info(struct backing_dev_info *bdi)
{
	cur_bdi = bdi;
}

struct backing_dev_info *current_backing_dev_info(void)
{
	return cur_bdi;
}

bool current_is_kswapd(void)
{
	return in_kswapd;
}

bool current_in_reclaim(void)
{
	return in_reclaim;
}

const struct reclaim_policy *cache_reclaim_policy(struct uf_cache *c)
{
	if (c->policy && c->policy->reclaim)
		return c->policy->reclaim;
	return &reclaim_32;
}

/* The 3.x variants (legacy, 3.2, pageout) have 3.2's kswapd and bdi
 * congestion; mainline has neither (removed in 5.16-5.18). */
bool reclaim_is_3x(struct uf_cache *c)
{
	return cache_reclaim_policy(c) != &reclaim_mainline;
}

static void rstat_add(unsigned long *ctr, unsigned long n)
{
	__atomic_add_fetch(ctr, n, __ATOMIC_RELAXED);
}

static struct page *lru_to_page(struct list_head *head)
{
	return list_entry(head->prev, struct page, lru);
}

/* page_freeze_refs(): count == @count -> 0, atomically; sequentially
 * consistent, before the scan of the pins (page_pin.c). */
static bool page_freeze_refs(struct page *page, int count)
{
	return __atomic_compare_exchange_n(&page->_count, &count, 0, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

static void page_unfreeze_refs(struct page *page, int count)
{
	__atomic_store_n(&page->_count, count, __ATOMIC_RELEASE);
}

/*
 * isolate_lru_pages(): move up to @nr_to_scan pages from the tail of @src
 * to @dst, each with a reference and PG_lru cleared, so that they can be
 * worked on without lru_lock.  Returns the number taken (<= nr_to_scan).
 */
static unsigned long isolate_lru_pages(struct uf_cache *c,
				       unsigned long nr_to_scan,
				       struct list_head *src,
				       struct list_head *dst,
				       unsigned long *nr_scanned)
{
	struct page_pool *pool = &c->pool;
	unsigned long scan, nr_taken = 0;
	struct page *page;

	assert_spin_locked(&pool->lru_lock);
	for (scan = 0; scan < nr_to_scan && !list_empty(src); scan++) {
		page = lru_to_page(src);
		if (!get_page_unless_zero(page)) {
			/* put_page() is taking it off; don't meet it again */
			list_move(&page->lru, src);
			continue;
		}
		ClearPageLRU(page);
		list_move(&page->lru, dst);
		lru_count_mod(pool, PageActive(page), -1);
		nr_taken++;
	}
	*nr_scanned = scan;
	return nr_taken;
}

/* putback_lru_pages(): kept pages to the head of their list; drop our
 * reference (which may be the last one if the page was truncated). */
static void putback_lru_pages(struct uf_cache *c, struct list_head *pages)
{
	struct page_pool *pool = &c->pool;
	struct page *page;

	while (!list_empty(pages)) {
		page = lru_to_page(pages);
		spin_lock(&pool->lru_lock);
		list_del(&page->lru);
		SetPageLRU(page);
		list_add(&page->lru, PageActive(page) ? &pool->active_file
						      : &pool->inactive_file);
		lru_count_mod(pool, PageActive(page), 1);
		spin_unlock(&pool->lru_lock);
		put_page(c, page);
	}
}

/*
 * __remove_mapping(): detach a locked, clean page if nobody but the page
 * cache (1) and us (1) holds it, and no thread pins it (page_pin.c).
 * Freezing the count to 0 under tree_lock excludes find_get_page(), which
 * takes its reference under the same lock; a page redirtied meanwhile is
 * kept.
 */
static bool __remove_mapping(struct address_space *mapping, struct page *page)
{
	spin_lock(&mapping->tree_lock);
	if (!page_freeze_refs(page, 2))
		goto cannot_free;
	/* a read-only page handle's pin is a reference too */
	if (PageDirty(page) || PageWriteback(page) || page_pinned(page)) {
		page_unfreeze_refs(page, 2);
		goto cannot_free;
	}
	__delete_from_page_cache(page);
	spin_unlock(&mapping->tree_lock);
	return true;

cannot_free:
	spin_unlock(&mapping->tree_lock);
	return false;
}

/* is_page_cache_freeable(): the page cache's reference and ours only. */
static bool is_page_cache_freeable(struct page *page)
{
	return page_count(page) == 2;
}

/*
 * may_write_to_queue() (3.2.41 vmscan.c:386): kswapd (PF_SWAPWRITE), an
 * uncongested bdi, or the bdi this thread is writing to (3.2.41 :392,
 * current->backing_dev_info).  No lumpy reclaim here (sc->order).
 */
static bool may_write_to_queue(struct backing_dev_info *bdi,
			       struct scan_control *sc)
{
	if (sc->kswapd)
		return true;
	if (!bdi || !bdi_update_congested(bdi))
		return true;
	return bdi == cur_bdi;
}

/*
 * pageout() (3.2): write one dirty page from reclaim.  The page is locked;
 * reclaim_writepage() puts it under writeback with PG_reclaim, so that it
 * is rotated to the tail when written, and unlocks it.  In the 3.x
 * variants a congested device is left alone (may_write_to_queue);
 * mainline's pageout() has no such test.
 */
enum pageout_t pageout(struct uf_cache *c, struct page *page,
		       struct scan_control *sc)
{
	struct address_space *mapping = page->mapping;
	struct writeback_control wbc = {
		.sync_mode = WB_SYNC_NONE,
		.nr_to_write = SWAP_CLUSTER_MAX,
		.range_start = 0,
		.range_end = LLONG_MAX,
		.for_reclaim = 1,
	};

	if (!is_page_cache_freeable(page) || !mapping)
		return PAGE_KEEP;
	/* 6.18 pageout() (mm/vmscan.c:719): only shmem and swap cache are
	 * written from reclaim since ->writepage went; a file folio is
	 * activated and left to the flushers */
	if (!reclaim_is_3x(c))
		return PAGE_ACTIVATE;
	if (reclaim_is_3x(c) &&
	    !may_write_to_queue(mapping->backing_dev_info, sc))
		return PAGE_KEEP;
	if (!clear_page_dirty_for_io(page))
		return PAGE_CLEAN;
	SetPageReclaim(page);
	reclaim_writepage(page, &wbc);
	if (!PageWriteback(page))
		ClearPageReclaim(page);
	rstat_add(&c->pool.rstat.nr_pageout, 1);
	trace_mm_vmscan_writepage(c, page);
	return PAGE_SUCCESS;
}

enum page_references { PAGEREF_RECLAIM, PAGEREF_RECLAIM_CLEAN };

/*
 * page_check_references() for an unmapped file page, the only kind here:
 * 3.1 (vmscan.c:734), 3.2.41 (:732), 3.3 (seed 003's base) and mainline
 * folio_check_references() agree once there are no page-table references
 * (no PAGEREF_KEEP or PAGEREF_ACTIVATE, no VM_LOCKED or lumpy case): the
 * PG_referenced bit is tested and cleared, and a referenced page may be
 * freed if clean but is not written by reclaim this round.
 */
static enum page_references page_check_references(struct page *page)
{
	if (TestClearPageReferenced(page))
		return PAGEREF_RECLAIM_CLEAN;
	return PAGEREF_RECLAIM;
}

/*
 * 6.18 folio_check_dirty_writeback() and shrink_folio_list()'s counts
 * (mm/vmscan.c:1176-1190): every page here is an unmapped file page with
 * no ->is_dirty_writeback, so the flags are taken as they are.
 */
static void folio_check_dirty_writeback(struct page *page,
					struct reclaim_batch *rb)
{
	bool dirty = PageDirty(page), writeback = PageWriteback(page);

	if (dirty || writeback)
		rb->nr_dirty++;
	if (dirty && !writeback)
		rb->nr_unqueued_dirty++;
	/* PG_reclaim folios coming round again before their write ended */
	if (writeback && PageReclaim(page))
		rb->nr_congested++;
}

void reclaim_activate(struct page *page, struct reclaim_batch *rb)
{
	SetPageActive(page);
	rb->nr_activate++;
}

/*
 * shrink_page_list(): try to free each isolated page; the ones kept stay on
 * @page_list.  Returns the number freed; @rb gets the batch's counts.
 */
static unsigned long shrink_page_list(struct uf_cache *c,
				      struct list_head *page_list,
				      struct scan_control *sc,
				      struct reclaim_batch *rb)
{
	const struct reclaim_policy *pol = cache_reclaim_policy(c);
	bool v3x = reclaim_is_3x(c);
	LIST_HEAD(ret_pages);
	LIST_HEAD(free_pages);
	unsigned long nr_reclaimed = 0;
	struct address_space *mapping;
	struct page *page;

	while (!list_empty(page_list)) {
		enum page_references references;

		/* 3.2.41 and 6.18 give way here, page by page: in a world,
		 * once the scan has used the task's tick */
		cond_resched();
		page = lru_to_page(page_list);
		list_del(&page->lru);

		if (!trylock_page(page))
			goto keep;
		if (!v3x) {
			/* 6.18 counts sc->nr_scanned here, per folio tried */
			sc->nr_scanned++;
			folio_check_dirty_writeback(page, rb);
		}
		if (PageWriteback(page)) {
			if (v3x)
				rb->nr_writeback++;
			if (!pol->writeback_page(c, page, sc, rb))
				goto keep_locked;
			/* no page lock held while waiting (RC-8) */
			unlock_page(page);
			wait_on_page_writeback(page);
			/* 6.18 list_add_tail(): the same folio again next */
			if (v3x)
				list_add(&page->lru, page_list);
			else
				list_add_tail(&page->lru, page_list);
			continue;
		}
		references = page_check_references(page);
		if (PageDirty(page)) {
			if (v3x) {
				rb->nr_dirty++;
				if (!PageReclaim(page))
					rb->nr_unqueued_dirty++;
			}
			switch (pol->dirty_page(c, page, sc, rb)) {
			case RECLAIM_KEEP:
				goto keep_locked;
			case RECLAIM_ACTIVATE:
				goto activate_locked;
			case RECLAIM_PAGEOUT:
				break;
			}
			/* a referenced dirty page gets a round for the
			 * flusher before reclaim writes it (3.1 vmscan.c:868,
			 * 3.2.41 :888, mainline shrink_folio_list) */
			if (references == PAGEREF_RECLAIM_CLEAN)
				goto keep_locked;
			if (!sc->may_writepage)
				goto keep_locked;
			switch (pageout(c, page, sc)) {
			case PAGE_KEEP:
				if (v3x)	/* may_write_to_queue refused */
					rb->nr_congested++;
				goto keep_locked;
			case PAGE_ACTIVATE:
				goto activate_locked;
			case PAGE_SUCCESS:
				/* written asynchronously: unlocked, kept */
				if (PageWriteback(page) || PageDirty(page) ||
				    !trylock_page(page))
					goto keep;
				if (PageDirty(page) || PageWriteback(page))
					goto keep_locked;
				break;
			case PAGE_CLEAN:
				break;
			}
		}
		mapping = page->mapping;
		if (!mapping || !__remove_mapping(mapping, page))
			goto keep_locked;
		/* count is 0 and the page is off the cache: nobody else can
		 * see the lock bit, so no unlock_page() wakeup is due */
		ClearPageLocked(page);
		if (c->page_batch_off)
			page_pool_free(c, page);
		else	/* freed together at the end, as the kernel does */
			list_add_tail(&page->lru, &free_pages);
		nr_reclaimed++;
		continue;

activate_locked:
		SetPageActive(page);
		rb->nr_activate++;
keep_locked:
		unlock_page(page);
keep:
		list_add(&page->lru, &ret_pages);
	}
	page_pool_free_list(c, &free_pages);
	/* 3.2.41 vmscan.c:1016: every dirty page met was on a congested
	 * bdi: wait_iff_congested() may sleep (global reclaim only) */
	if (rb->nr_dirty && rb->nr_dirty == rb->nr_congested && sc->global &&
	    v3x)
		set_bit(ZONE_CONGESTED, &c->pool.zone_flags);
	if (nr_reclaimed) {
		/* free_pcppages_bulk() resets these on any free; reclaim's
		 * frees are the ones seen here */
		__atomic_store_n(&c->pool.pages_scanned, 0, __ATOMIC_RELAXED);
		/* a plain int in 3.2, read and written unlocked */
		__atomic_store_n(&c->pool.all_unreclaimable, false,
				 __ATOMIC_RELAXED);
		/* mainline shrink_node(): a node reclaim frees from is
		 * kswapd's again */
		__atomic_store_n(&c->pool.kswapd_failures, 0, __ATOMIC_RELAXED);
	}
	list_splice(&ret_pages, page_list);
	return nr_reclaimed;
}

/*
 * 6.18 too_many_isolated() (mm/vmscan.c:1891): global direct reclaim
 * (not kswapd, not a cgroup v1 domain) waits while more pages are
 * isolated than an eighth of the inactive list (a __GFP_IO|__GFP_FS
 * caller); the test that finds it not so wakes the ones waiting.
 */
static bool too_many_isolated(struct uf_cache *c, struct scan_control *sc)
{
	struct page_pool *pool = &c->pool;
	unsigned long inactive = lru_count(pool, false) >> 3;
	long isolated;

	if (sc->kswapd || !sc->global)
		return false;
	isolated = __atomic_load_n(&pool->nr_isolated, __ATOMIC_RELAXED);
	if (isolated > 0 && (unsigned long)isolated > inactive)
		return true;
	if (waitqueue_active(&pool->throttle_isolated_wqh))
		wake_up_all(&pool->throttle_isolated_wqh);
	return false;
}

/* shrink_inactive_list(): one batch from the inactive tail. */
static unsigned long shrink_inactive_list(struct uf_cache *c,
					  unsigned long nr_to_scan,
					  struct scan_control *sc)
{
	const struct reclaim_policy *pol = cache_reclaim_policy(c);
	struct page_pool *pool = &c->pool;
	struct reclaim_batch rb = { 0 };
	LIST_HEAD(page_list);
	unsigned long nr_scanned, nr_reclaimed;
	bool v3x = reclaim_is_3x(c), stalled = false;

	/* 6.18 shrink_inactive_list:2029: one ISOLATED wait, then give up
	 * this batch */
	while (!v3x && too_many_isolated(c, sc)) {
		if (stalled)
			return 0;
		stalled = true;
		reclaim_throttle(c, VMSCAN_THROTTLE_ISOLATED);
	}
	lru_add_drain();
	spin_lock(&pool->lru_lock);
	rb.nr_taken = isolate_lru_pages(c, nr_to_scan, &pool->inactive_file,
					&page_list, &nr_scanned);
	__atomic_add_fetch(&pool->nr_isolated, (long)rb.nr_taken,
			   __ATOMIC_RELAXED);
	spin_unlock(&pool->lru_lock);
	trace_mm_vmscan_lru_isolate(c, nr_to_scan, nr_scanned, rb.nr_taken);
	/* a world's CPU model: all of reclaim's work per page scanned
	 * (pgscan), the active list's aging included */
	uf_sim_charge(UF_SIM_COST_PAGE_SCAN, nr_scanned);
	if (v3x)	/* 6.18: counted per folio in shrink_folio_list */
		sc->nr_scanned += nr_scanned;
	rstat_add(&pool->rstat.nr_scanned, nr_scanned);
	if (sc->global)		/* 3.2: zone->pages_scanned */
		rstat_add(&pool->pages_scanned, nr_scanned);
	if (!rb.nr_taken)
		return 0;
	nr_reclaimed = shrink_page_list(c, &page_list, sc, &rb);
	putback_lru_pages(c, &page_list);
	__atomic_sub_fetch(&pool->nr_isolated, (long)rb.nr_taken,
			   __ATOMIC_RELAXED);
	rstat_add(&pool->rstat.nr_reclaimed, nr_reclaimed);
	/* no page lock held from here: the variant may sleep */
	pol->throttle(c, sc, &rb);
	/* 6.18 sc->nr, for shrink_node()'s tests (file pages only) */
	sc->nr.dirty += rb.nr_dirty;
	sc->nr.congested += rb.nr_congested;
	sc->nr.unqueued_dirty += rb.nr_unqueued_dirty;
	sc->nr.writeback += rb.nr_writeback;
	sc->nr.immediate += rb.nr_immediate;
	sc->nr.taken += rb.nr_taken;
	sc->nr.file_taken += rb.nr_taken;
	/* after the throttle, as 3.2.41 :1612 and mainline trace it */
	trace_mm_vmscan_lru_shrink_inactive(c, nr_scanned, nr_reclaimed, &rb,
					    sc->priority);
	return nr_reclaimed;
}

/*
 * shrink_active_list(): age @nr_to_scan pages from the active tail to the
 * inactive head.  The kernel isolates them to run page_referenced() outside
 * the lock; with no mapped pages there is nothing to check, so the move is
 * done under lru_lock in one go.
 */
static void shrink_active_list(struct uf_cache *c, unsigned long nr_to_scan,
			       struct scan_control *sc)
{
	struct page_pool *pool = &c->pool;
	unsigned long scan;
	struct page *page;

	spin_lock(&pool->lru_lock);
	for (scan = 0; scan < nr_to_scan && !list_empty(&pool->active_file);
	     scan++) {
		page = lru_to_page(&pool->active_file);
		ClearPageActive(page);
		list_move(&page->lru, &pool->inactive_file);
		lru_count_mod(pool, true, -1);
		lru_count_mod(pool, false, 1);
	}
	spin_unlock(&pool->lru_lock);
	/* 6.18's shrink_active_list leaves sc->nr_scanned alone */
	if (reclaim_is_3x(c))
		sc->nr_scanned += scan;
}

/* inactive_file_is_low(): keep the inactive list at least as long as the
 * active one, so active pages get a chance to prove themselves again. */
static bool inactive_file_is_low(struct page_pool *pool)
{
	return lru_count(pool, true) > lru_count(pool, false);
}

/* get_scan_count(): size >> priority, but at least a batch on small lists
 * so that every priority makes some progress (the kernel's force_scan). */
static unsigned long scan_count(unsigned long size, int priority)
{
	unsigned long scan = size >> priority;

	if (scan < SWAP_CLUSTER_MAX)
		scan = size < SWAP_CLUSTER_MAX ? size : SWAP_CLUSTER_MAX;
	return scan;
}

/*
 * shrink_zone()'s early stop once this pass freed nr_to_reclaim: 3.1 and
 * 3.2 (3.2.41 vmscan.c:2109) never at DEF_PRIORITY; mainline
 * (shrink_lruvec) always but for global direct reclaim at DEF_PRIORITY
 * (proportional_reclaim).
 */
bool shrink_zone_done(struct uf_cache *c, struct scan_control *sc,
		      unsigned long nr_reclaimed)
{
	if (nr_reclaimed < sc->nr_to_reclaim)
		return false;
	if (reclaim_is_3x(c))
		return sc->priority < DEF_PRIORITY;
	return !(sc->global && !sc->kswapd && sc->priority == DEF_PRIORITY);
}

/* shrink_zone()'s LRU pass (mainline: shrink_lruvec). */
static void shrink_zone_lru(struct uf_cache *c, struct scan_control *sc)
{
	struct page_pool *pool = &c->pool;
	unsigned long nr_to_scan, nr, nr_reclaimed = 0;

	/*
	 * Last pass and nothing freed: the inactive list may hold only
	 * pinned, dirty or writeback pages while clean ones sit on an
	 * active list no longer than it (so never aged).  Age it all, or
	 * an allocator would wait for pages reclaim refuses to look at.
	 */
	if (!sc->priority && !sc->nr_reclaimed)
		shrink_active_list(c, lru_count(pool, true), sc);
	nr_to_scan = scan_count(lru_count(pool, false), sc->priority);
	while (nr_to_scan) {
		nr = nr_to_scan < SWAP_CLUSTER_MAX ? nr_to_scan
						   : SWAP_CLUSTER_MAX;
		nr_to_scan -= nr;
		nr_reclaimed += shrink_inactive_list(c, nr, sc);
		if (shrink_zone_done(c, sc, nr_reclaimed)) {
			sc->nr_reclaimed += nr_reclaimed;
			return;
		}
	}
	sc->nr_reclaimed += nr_reclaimed;
	if (inactive_file_is_low(pool))
		shrink_active_list(c, scan_count(lru_count(pool, true),
						 sc->priority), sc);
}

/*
 * The tail of 6.18 shrink_node() (mm/vmscan.c:6118-6195) after a pass
 * that freed @nr_node_reclaimed.  kswapd marks the node PGDAT_WRITEBACK
 * when every page taken was under writeback (case 2), PGDAT_DIRTY when
 * every file page taken was dirty and not queued, and throttles when it
 * met PG_reclaim pages still under writeback; every dirty page being
 * such a page marks the root lruvec congested, and global direct reclaim
 * then stalls (CONGESTED).  LRUVEC_CGROUP_CONGESTED needs cgroup v2 (a
 * domain is v1), and a domain's own lruvec is never kswapd's: a domain
 * never stalls here.
 */
static void shrink_node_tail(struct uf_cache *c, struct scan_control *sc,
			     unsigned long nr_node_reclaimed)
{
	unsigned long *flags = &c->pool.zone_flags;

	if (sc->kswapd) {
		if (sc->nr.writeback && sc->nr.writeback == sc->nr.taken)
			set_bit(PGDAT_WRITEBACK, flags);
		if (sc->nr.unqueued_dirty &&
		    sc->nr.unqueued_dirty == sc->nr.file_taken)
			set_bit(PGDAT_DIRTY, flags);
		if (sc->nr.immediate)
			reclaim_throttle(c, VMSCAN_THROTTLE_WRITEBACK);
	}
	if (sc->nr.dirty && sc->nr.dirty == sc->nr.congested && sc->kswapd)
		set_bit(LRUVEC_NODE_CONGESTED, flags);
	if (!sc->kswapd && sc->global && test_bit(LRUVEC_NODE_CONGESTED, flags))
		reclaim_throttle(c, VMSCAN_THROTTLE_CONGESTED);
	/* should_continue_reclaim() is false but for compaction (order 0
	 * here); a pass that freed pages is kswapd's node again (done in
	 * shrink_page_list) */
	if (!nr_node_reclaimed && sc->cache_trim_mode)
		sc->cache_trim_mode_failed = true;
}

/* shrink_zone(): one pass at sc->priority (mainline: shrink_node). */
static void shrink_zone(struct uf_cache *c, struct scan_control *sc)
{
	struct page_pool *pool = &c->pool;
	unsigned long before = sc->nr_reclaimed;

	if (reclaim_is_3x(c)) {
		shrink_zone_lru(c, sc);
		return;
	}
	memset(&sc->nr, 0, sizeof(sc->nr));
	/* 6.18 prepare_scan_control:2415: plenty of inactive file pages
	 * and no need to deactivate (no refaults here: the inactive list
	 * not low) */
	sc->cache_trim_mode = (lru_count(pool, false) >> sc->priority) &&
			      !inactive_file_is_low(pool) &&
			      !sc->no_cache_trim_mode;
	shrink_zone_lru(c, sc);
	shrink_node_tail(c, sc, sc->nr_reclaimed - before);
}

/*
 * 6.18 skip_throttle_noprogress() (mm/vmscan.c:514): no NOPROGRESS or
 * CONGESTED stall once kswapd gave up on the node, nor while the pages
 * waiting for writeback are at most half the reclaimable ones (the code
 * tests that, whatever its comment says).
 */
static bool skip_throttle_noprogress(struct uf_cache *c)
{
	struct page_pool *pool = &c->pool;
	unsigned long reclaimable = lru_count(pool, true) +
				    lru_count(pool, false);
	unsigned long write_pending = global_page_state(c, NR_FILE_DIRTY) +
				      global_page_state(c, NR_WRITEBACK);

	if (__atomic_load_n(&pool->kswapd_failures, __ATOMIC_RELAXED) >=
	    MAX_RECLAIM_RETRIES)
		return true;
	return 2 * write_pending <= reclaimable;
}

/*
 * 6.18 consider_reclaim_throttle() (mm/vmscan.c:6232), after each
 * priority's shrink_zones(): better than 1/8 efficiency wakes the
 * NOPROGRESS sleepers; global direct reclaim that freed nothing by
 * priority 1 sleeps there.
 */
static void consider_reclaim_throttle(struct uf_cache *c,
				      struct scan_control *sc)
{
	struct page_pool *pool = &c->pool;

	if (sc->nr_reclaimed > (sc->nr_scanned >> 3)) {
		if (waitqueue_active(&pool->throttle_noprogress_wqh))
			wake_up(&pool->throttle_noprogress_wqh);
		return;
	}
	if (sc->kswapd || !sc->global)
		return;
	if (sc->priority == 1 && !sc->nr_reclaimed)
		reclaim_throttle(c, VMSCAN_THROTTLE_NOPROGRESS);
}

/*
 * do_try_to_free_pages(): shrink at increasing pressure until enough was
 * freed; after each priority that fell short, the variant's
 * after_priority (3.2: wake the flushers once 1.5 batches were scanned,
 * nap in wait_iff_congested below DEF_PRIORITY - 2).
 */
static unsigned long do_try_to_free_pages(struct uf_cache *c,
					  struct scan_control *sc)
{
	const struct reclaim_policy *pol = cache_reclaim_policy(c);
	bool was_in_reclaim = in_reclaim;

	in_reclaim = true;	/* PF_MEMALLOC */
	for (sc->priority = DEF_PRIORITY; sc->priority >= 0; sc->priority--) {
		sc->nr_scanned = 0;
		shrink_zone(c, sc);
		sc->total_scanned += sc->nr_scanned;
		if (!reclaim_is_3x(c))	/* shrink_zones() */
			consider_reclaim_throttle(c, sc);
		if (sc->nr_reclaimed >= sc->nr_to_reclaim)
			break;
		pol->after_priority(c, sc);
	}
	in_reclaim = was_in_reclaim;
	return sc->nr_reclaimed;
}

unsigned long try_to_free_pages(struct uf_cache *c,
				unsigned long nr_to_reclaim)
{
	struct scan_control sc = {
		.nr_to_reclaim = nr_to_reclaim ? nr_to_reclaim : 1,
		.may_writepage = true,	/* !laptop_mode */
		.kswapd = in_kswapd,
		.global = !c->pool.nr_outside,
	};
	unsigned long ret;

	trace_mm_vmscan_direct_reclaim_begin(c, sc.may_writepage);
	ret = do_try_to_free_pages(c, &sc);
	trace_mm_vmscan_direct_reclaim_end(c, ret);
	return ret;
}

/* ---- dirty and congestion state ---- */

/*
 * zone_dirty_ok() (3.3, Johannes Weiner's zone dirty balancing, which seed
 * 003's gate uses): dirty + unstable + writeback within the zone's dirty
 * limit, vm_dirty_ratio (or vm_dirty_bytes) of its dirtyable memory.  One
 * zone per cache, so the zone is the machine: a domain's outside frames
 * count (they are free), as the zone of a memcg's pages is the machine's.
 */
bool zone_dirty_ok(struct uf_cache *c)
{
	unsigned long dirtyable = global_page_state(c, NR_FREE_PAGES) +
				  global_page_state(c, NR_FILE_PAGES);
	unsigned long limit;

	if (c->vm.vm_dirty_bytes)
		limit = (c->vm.vm_dirty_bytes + PAGE_SIZE - 1) / PAGE_SIZE;
	else
		limit = c->vm.vm_dirty_ratio * dirtyable / 100;
	return global_page_state(c, NR_FILE_DIRTY) +
	       global_page_state(c, NR_UNSTABLE_NFS) +
	       global_page_state(c, NR_WRITEBACK) <= limit;
}

/*
 * Seed 003 (S003:L441-481): one wait queue (per cache: "global" in the
 * kernel is per memory here), woken by reclaim_rotated() after each batch
 * of rotations.  TASK_KILLABLE in the kernel; uflush has no signals.
 */
long reclaim_wait(struct uf_cache *c, long timeout)
{
	struct page_pool *pool = &c->pool;
	unsigned long start = jiffies, delayed;
	long ret;
	DEFINE_WAIT(wait);

	prepare_to_wait(&pool->reclaim_wqh, &wait, TASK_KILLABLE);
	ret = io_schedule_timeout(timeout);
	finish_wait(&pool->reclaim_wqh, &wait);
	delayed = jiffies - start;
	rstat_add(&pool->rstat.nr_reclaim_wait, 1);
	rstat_add(&pool->rstat.reclaim_wait_us, jiffies_to_usecs(delayed));
	if (!ret)
		rstat_add(&pool->rstat.reclaim_wait_timeouts, 1);
	trace_writeback_reclaim_wait(c, jiffies_to_usecs((unsigned long)timeout),
				     jiffies_to_usecs(delayed));
	return ret;
}

void reclaim_rotated(struct uf_cache *c)
{
	if (waitqueue_active(&c->pool.reclaim_wqh))
		wake_up(&c->pool.reclaim_wqh);
}

/*
 * 6.18 reclaim_throttle() (mm/vmscan.c:542), one wait queue per reason.
 * WRITEBACK: HZ/10, ended early once SWAP_CLUSTER_MAX pages per throttled
 * task were written since the first one slept (__acct_reclaim_writeback);
 * CONGESTED and NOPROGRESS: one jiffy, unless skip_throttle_noprogress();
 * ISOLATED: HZ/50.  Only kernel threads other than kswapd are exempt;
 * uflush's flushers never reclaim, so every reclaimer qualifies.
 */
void reclaim_throttle(struct uf_cache *c, enum vmscan_throttle_state reason)
{
	struct page_pool *pool = &c->pool;
	wait_queue_head_t *wqh;
	long timeout, ret;
	DEFINE_WAIT(wait);

	switch (reason) {
	case VMSCAN_THROTTLE_WRITEBACK:
		wqh = &pool->throttle_wqh;
		timeout = HZ / 10 ? HZ / 10 : 1;
		if (__atomic_add_fetch(&pool->nr_throttled, 1,
				       __ATOMIC_SEQ_CST) == 1)
			__atomic_store_n(&pool->nr_throttled_written, 0,
					 __ATOMIC_RELAXED);
		break;
	case VMSCAN_THROTTLE_CONGESTED:
	case VMSCAN_THROTTLE_NOPROGRESS:
		if (skip_throttle_noprogress(c)) {
			cond_resched();
			return;
		}
		wqh = reason == VMSCAN_THROTTLE_CONGESTED ?
		      &pool->throttle_congested_wqh :
		      &pool->throttle_noprogress_wqh;
		timeout = 1;
		break;
	case VMSCAN_THROTTLE_ISOLATED:
		wqh = &pool->throttle_isolated_wqh;
		timeout = HZ / 50 ? HZ / 50 : 1;
		break;
	default:
		return;
	}
	prepare_to_wait(wqh, &wait, TASK_UNINTERRUPTIBLE);
	ret = io_schedule_timeout(timeout);
	finish_wait(wqh, &wait);
	if (reason == VMSCAN_THROTTLE_WRITEBACK)
		__atomic_sub_fetch(&pool->nr_throttled, 1, __ATOMIC_SEQ_CST);
	rstat_add(&pool->rstat.nr_throttle, 1);
	rstat_add(&pool->rstat.nr_throttle_reason[reason], 1);
	trace_mm_vmscan_throttled(c, jiffies_to_usecs((unsigned long)timeout),
				  jiffies_to_usecs((unsigned long)(timeout - ret)),
				  reason);
}

void reclaim_throttle_writeback(struct uf_cache *c)
{
	reclaim_throttle(c, VMSCAN_THROTTLE_WRITEBACK);
}

void acct_reclaim_writeback(struct uf_cache *c, unsigned long nr)
{
	struct page_pool *pool = &c->pool;
	long throttled = __atomic_load_n(&pool->nr_throttled, __ATOMIC_SEQ_CST);
	unsigned long written;

	bdi_writeback_done_congestion(c);	/* 3.x: __freed_request */
	if (throttled <= 0)
		return;
	written = __atomic_add_fetch(&pool->nr_throttled_written, nr,
				     __ATOMIC_RELAXED);
	if (written > SWAP_CLUSTER_MAX * (unsigned long)throttled)
		wake_up(&pool->throttle_wqh);
}

/* ---- kswapd ---- */

static unsigned long nr_free(struct uf_cache *c)
{
	unsigned long f = global_page_state(c, NR_FREE_PAGES);

	return f > c->pool.nr_outside ? f - c->pool.nr_outside : 0;
}

/* zone_watermark_ok(): free frames above @mark. */
static bool zone_watermark_ok(struct uf_cache *c, unsigned long mark)
{
	return nr_free(c) > mark;
}

/*
 * wakeup_kswapd(): free frames fell below the low mark.  Mainline leaves
 * a node kswapd failed on MAX_RECLAIM_RETRIES times to direct reclaim
 * until reclaim frees from it again.
 */
void wakeup_kswapd(struct uf_cache *c)
{
	struct page_pool *pool = &c->pool;

	if (!pool->kswapd || in_kswapd)
		return;
	if (!reclaim_is_3x(c) &&
	    __atomic_load_n(&pool->kswapd_failures, __ATOMIC_RELAXED) >=
	    MAX_RECLAIM_RETRIES)
		return;
	if (__atomic_exchange_n(&pool->kswapd_wanted, true, __ATOMIC_SEQ_CST))
		return;
	trace_mm_vmscan_wakeup_kswapd(c);
	wake_up_process(pool->kswapd);
}

/* zone_reclaimable() (3.2.41 vmscan.c:2245): scanned less than six
 * times what is on the LRU since reclaim last freed a page. */
static bool zone_reclaimable(struct page_pool *pool)
{
	return __atomic_load_n(&pool->pages_scanned, __ATOMIC_RELAXED) <
	       (lru_count(pool, true) + lru_count(pool, false)) * 6;
}

/*
 * 3.1/3.2's balance_pgdat() (3.2.41 vmscan.c:2593-2870) for one zone:
 * nr_to_reclaim = ULONG_MAX (:2612, so shrink_zone never stops early),
 * priorities 12 -> 0 each scanning the zone once unless it is balanced
 * (free above the high mark, :2660, which clears ZONE_CONGESTED) or
 * all_unreclaimable below DEF_PRIORITY (:2651, counted as balanced);
 * the zone goes all_unreclaimable when scanned six times over without a
 * page freed (:2730); below DEF_PRIORITY - 2, having scanned, a nap in
 * congestion_wait(BLK_RW_ASYNC, HZ/10) unless under the min mark
 * (:2786-2791); SWAP_CLUSTER_MAX freed ends the priority loop (:2800),
 * and an unbalanced zone starts it again (loop_again, :2835).  No
 * flusher wakeup and no wait_iff_congested nap: those are
 * do_try_to_free_pages', which kswapd does not call.  The balance gap
 * (:2713) is left out: with one zone the shrink test after a failed
 * high-mark test always passes.
 */
static void balance_pgdat_3x(struct uf_cache *c)
{
	struct page_pool *pool = &c->pool;
	struct scan_control sc = {
		.nr_to_reclaim = ULONG_MAX,
		.kswapd = true,
		.global = true,
	};
	bool balanced = false, under_min;

loop_again:
	sc.total_scanned = 0;
	sc.nr_reclaimed = 0;
	sc.may_writepage = true;	/* !laptop_mode */
	rstat_add(&pool->rstat.nr_kswapd_runs, 1);	/* PAGEOUTRUN */
	for (sc.priority = DEF_PRIORITY; sc.priority >= 0; sc.priority--) {
		if (kthread_should_stop())
			return;
		balanced = true;
		under_min = false;
		if (__atomic_load_n(&pool->all_unreclaimable, __ATOMIC_RELAXED) &&
		    sc.priority != DEF_PRIORITY)
			goto out;
		if (zone_watermark_ok(c, pool->wmark_high)) {
			clear_bit(ZONE_CONGESTED, &pool->zone_flags);
			goto out;
		}
		sc.nr_scanned = 0;
		shrink_zone(c, &sc);
		sc.total_scanned += sc.nr_scanned;
		if (!zone_reclaimable(pool))
			__atomic_store_n(&pool->all_unreclaimable, true,
					 __ATOMIC_RELAXED);
		if (!__atomic_load_n(&pool->all_unreclaimable,
				     __ATOMIC_RELAXED)) {
			if (!zone_watermark_ok(c, pool->wmark_high)) {
				balanced = false;
				under_min = !zone_watermark_ok(c,
							pool->wmark_min);
			} else {
				clear_bit(ZONE_CONGESTED, &pool->zone_flags);
			}
		}
		if (balanced)
			break;
		if (sc.total_scanned && sc.priority < DEF_PRIORITY - 2 &&
		    !under_min)
			congestion_wait(c, BLK_RW_ASYNC, HZ / 10 ? HZ / 10 : 1);
		if (sc.nr_reclaimed >= SWAP_CLUSTER_MAX)
			break;
	}
out:
	if (!balanced && !kthread_should_stop()) {
		cond_resched();
		goto loop_again;
	}
}

/*
 * 6.18 kswapd_shrink_node() (mm/vmscan.c:6933): reclaim max(high mark,
 * SWAP_CLUSTER_MAX); true (keep the priority) when that many pages were
 * scanned or freed.
 */
static bool kswapd_shrink_node(struct uf_cache *c, struct scan_control *sc)
{
	unsigned long before = sc->nr_reclaimed;
	unsigned long high = c->pool.wmark_high;

	sc->nr_to_reclaim = high > SWAP_CLUSTER_MAX ? high : SWAP_CLUSTER_MAX;
	shrink_zone(c, sc);
	return (sc->nr_scanned > sc->nr_reclaimed - before ?
		sc->nr_scanned : sc->nr_reclaimed - before) >=
	       sc->nr_to_reclaim;
}

/*
 * 6.18 balance_pgdat() (mm/vmscan.c:7007) for one zone, order 0, no
 * watermark boost, no laptop_mode: from DEF_PRIORITY down to 1, stop once
 * balanced (free above the high mark); the priority drops unless
 * kswapd_shrink_node() met its target and the pass freed something.  A
 * run through every priority that freed nothing starts again once if the
 * cache trim mode failed, then counts a kswapd failure.  No nap and no
 * flusher wakeup of its own: those are shrink_inactive_list()'s and
 * shrink_node()'s.
 */
static void balance_pgdat_mainline(struct uf_cache *c)
{
	struct page_pool *pool = &c->pool;
	struct scan_control sc = {
		.kswapd = true,
		.global = true,
	};

	rstat_add(&pool->rstat.nr_kswapd_runs, 1);	/* PAGEOUTRUN */
restart:
	sc.priority = DEF_PRIORITY;
	do {
		unsigned long nr_reclaimed = sc.nr_reclaimed;
		bool raise_priority = true;

		if (zone_watermark_ok(c, pool->wmark_high))
			return;		/* out: balanced */
		sc.may_writepage = true;
		sc.nr_scanned = 0;
		if (kswapd_shrink_node(c, &sc))
			raise_priority = false;
		if (kthread_should_stop())
			break;
		nr_reclaimed = sc.nr_reclaimed - nr_reclaimed;
		if (raise_priority || !nr_reclaimed)
			sc.priority--;
	} while (sc.priority >= 1);
	if (!sc.nr_reclaimed && sc.priority < 1 && !sc.no_cache_trim_mode &&
	    sc.cache_trim_mode_failed) {
		sc.no_cache_trim_mode = true;
		goto restart;
	}
	if (!sc.nr_reclaimed)
		__atomic_add_fetch(&pool->kswapd_failures, 1,
				   __ATOMIC_RELAXED);
}

/*
 * 6.18 prepare_kswapd_sleep() (mm/vmscan.c:6895): a node kswapd gave up
 * on is left as it is; a balanced one has its PGDAT_DIRTY,
 * PGDAT_WRITEBACK and congested bits cleared (clear_pgdat_congested).
 */
static void prepare_kswapd_sleep(struct uf_cache *c)
{
	struct page_pool *pool = &c->pool;

	if (__atomic_load_n(&pool->kswapd_failures, __ATOMIC_RELAXED) >=
	    MAX_RECLAIM_RETRIES)
		return;
	if (zone_watermark_ok(c, pool->wmark_high)) {
		clear_bit(LRUVEC_NODE_CONGESTED, &pool->zone_flags);
		clear_bit(PGDAT_DIRTY, &pool->zone_flags);
		clear_bit(PGDAT_WRITEBACK, &pool->zone_flags);
	}
}

void balance_pgdat(struct uf_cache *c)
{
	bool was_in_reclaim = in_reclaim;

	in_reclaim = true;	/* PF_MEMALLOC */
	if (reclaim_is_3x(c))
		balance_pgdat_3x(c);
	else
		balance_pgdat_mainline(c);
	in_reclaim = was_in_reclaim;
}

static int kswapd(void *data)
{
	struct uf_cache *c = data;
	struct page_pool *pool = &c->pool;

	in_kswapd = true;
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!__atomic_load_n(&pool->kswapd_wanted, __ATOMIC_SEQ_CST) &&
		    !kthread_should_stop()) {
			if (!reclaim_is_3x(c))
				prepare_kswapd_sleep(c);
			trace_mm_vmscan_kswapd_sleep(c);
			schedule();
		}
		__set_current_state(TASK_RUNNING);
		if (kthread_should_stop())
			break;
		__atomic_store_n(&pool->kswapd_wanted, false, __ATOMIC_SEQ_CST);
		trace_mm_vmscan_kswapd_wake(c);
		balance_pgdat(c);
		lru_add_drain();
	}
	lru_add_drain();
	return 0;
}

/*
 * Watermarks as init_per_zone_wmark_min() sets them: min_free_kbytes =
 * sqrt(16 * memory in KiB), at least 128 KiB, and here at most 1/32 of
 * the pool (the kernel's smallest machines have more frames than a test
 * pool); low = min * 5/4, high = min * 3/2.
 */
static void setup_watermarks(struct page_pool *pool)
{
	unsigned long kb = pool->nr * (PAGE_SIZE / 1024), min_kb = 0, min;

	while ((min_kb + 1) * (min_kb + 1) <= kb * 16)
		min_kb++;
	if (min_kb < 128)
		min_kb = 128;
	min = min_kb / (PAGE_SIZE / 1024);
	if (min > pool->nr / 32)
		min = pool->nr / 32;
	pool->wmark_min = min;
	pool->wmark_low = min + min / 4;
	pool->wmark_high = min + min / 2;
}

int kswapd_run(struct uf_cache *c)
{
	struct page_pool *pool = &c->pool;
	struct task_struct *t;

	setup_watermarks(pool);
	pool->lru_batch = true;
	if (pool->nr_outside || !pool->wmark_high)
		return 0;	/* a memcg has no kswapd; nor has a tiny pool */
	t = kthread_run(kswapd, c, "kswapd");
	if (IS_ERR(t))
		return (int)PTR_ERR(t);
	pool->kswapd = t;
	return 0;
}

void kswapd_stop(struct uf_cache *c)
{
	if (c->pool.kswapd) {
		kthread_stop(c->pool.kswapd);
		c->pool.kswapd = NULL;
	}
	lru_drain_cache(c);
}

/* uf_cache_stats(): the reclaim counters. */
void reclaim_fill_stats(struct uf_cache *c, struct uf_cache_stats *st)
{
	const struct reclaim_stat *r = &c->pool.rstat;

#define R(f) __atomic_load_n(&r->f, __ATOMIC_RELAXED)
	st->mem_limit = c->pool.nr_outside ? c->pool.nr : 0;
	st->nr_scanned = R(nr_scanned);
	st->nr_reclaimed = R(nr_reclaimed);
	st->nr_rotated = R(nr_rotated);
	st->nr_immediate = R(nr_immediate);
	st->nr_pageout = R(nr_pageout);
	st->nr_pageout_works = R(nr_pageout_works);
	st->nr_pageout_merged = R(nr_pageout_merged);
	st->nr_pageout_nomem = R(nr_pageout_nomem);
	st->nr_reclaim_wait = R(nr_reclaim_wait);
	st->reclaim_wait_us = R(reclaim_wait_us);
	st->reclaim_wait_timeouts = R(reclaim_wait_timeouts);
	st->nr_congestion_wait = R(nr_congestion_wait);
	st->nr_throttle = R(nr_throttle);
	st->nr_flusher_wakeups = R(nr_flusher_wakeups);
	st->nr_kswapd_runs = R(nr_kswapd_runs);
	st->nr_alloc_stall = R(nr_alloc_stall);
	st->nr_oom = R(nr_oom);
#undef R
}
