// SPDX-License-Identifier: MIT
/*
 * engine/mm/vmscan.c - direct reclaim of page cache pages: mm/vmscan.c (3.2)
 * for uflush.
 *
 * What is kept from the kernel, by name: do_try_to_free_pages() walks the
 * priorities from DEF_PRIORITY down to 0, scanning size >> priority pages
 * of each list per pass; shrink_inactive_list() isolates a batch from the
 * inactive tail and hands it to shrink_page_list(), which frees what is
 * clean, unlocked, not under writeback and used by nobody but the page
 * cache (__remove_mapping() freezes the count at 2 under tree_lock so no
 * lookup can take a new reference meanwhile); shrink_active_list() ages
 * active pages back to the inactive list when that is the smaller one.
 * Direct reclaim never writes pages itself (3.2 gave that up for file
 * pages): a dirty page gets PG_reclaim, so that end_page_writeback() moves
 * it to the inactive tail, and when a scan meets enough dirty pages the
 * flushers are woken (wakeup_flusher_threads, reason try_to_free_pages).
 *
 * Simplified: one "zone" per cache, file pages only, no memcg, no kswapd,
 * no lumpy reclaim, no mapped pages (so page_referenced() reduces to
 * PG_referenced).  This is the minimal reclaim that lets a cache smaller
 * than its data work.  A later issue replaces the handling of dirty and
 * writeback pages with seed 003's pageout works, PG_reclaim accounting
 * and reclaim_wait(); the names here are the ones that work extends.
 */
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "fs/writeback.h"

#define DEF_PRIORITY	12

struct scan_control {
	unsigned long nr_to_reclaim;
	unsigned long nr_reclaimed;
	unsigned long nr_scanned;	/* pages looked at, all lists */
	unsigned long nr_dirty;		/* dirty pages met */
	unsigned long nr_writeback;	/* pages under writeback met */
	int priority;
};

static struct page *lru_to_page(struct list_head *head)
{
	return list_entry(head->prev, struct page, lru);
}

/* get_page_unless_zero(): a page at count 0 is being freed; leave it. */
static bool get_page_unless_zero(struct page *page)
{
	int count = __atomic_load_n(&page->_count, __ATOMIC_RELAXED);

	do {
		if (!count)
			return false;
	} while (!__atomic_compare_exchange_n(&page->_count, &count, count + 1,
					      true, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}

/* page_freeze_refs(): count == @count -> 0, atomically. */
static bool page_freeze_refs(struct page *page, int count)
{
	return __atomic_compare_exchange_n(&page->_count, &count, 0, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static void page_unfreeze_refs(struct page *page, int count)
{
	__atomic_store_n(&page->_count, count, __ATOMIC_RELEASE);
}

/*
 * isolate_lru_pages(): move up to @nr_to_scan pages from the tail of @src
 * to @dst, each with a reference and PG_lru cleared, so that they can be
 * worked on without lru_lock.  Returns the number taken.
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
 * cache (1) and us (1) holds it.  Freezing the count to 0 under tree_lock
 * excludes find_get_page(), which takes its reference under the same lock;
 * a page redirtied meanwhile is kept.
 */
static bool __remove_mapping(struct address_space *mapping, struct page *page)
{
	spin_lock(&mapping->tree_lock);
	if (!page_freeze_refs(page, 2))
		goto cannot_free;
	if (PageDirty(page) || PageWriteback(page)) {
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

/*
 * shrink_page_list(): try to free each isolated page; the ones kept stay on
 * @page_list.  Returns the number freed.
 */
static unsigned long shrink_page_list(struct uf_cache *c,
				      struct list_head *page_list,
				      struct scan_control *sc)
{
	LIST_HEAD(ret_pages);
	unsigned long nr_reclaimed = 0;
	struct address_space *mapping;
	struct page *page;

	while (!list_empty(page_list)) {
		page = lru_to_page(page_list);
		list_del(&page->lru);

		if (!trylock_page(page))
			goto keep;
		if (PageWriteback(page)) {
			/* 3.2 async reclaim: skip it, don't wait */
			sc->nr_writeback++;
			goto keep_locked;
		}
		/* page_check_references() for an unmapped file page: one
		 * recent access does not save a clean page */
		ClearPageReferenced(page);
		if (PageDirty(page)) {
			/* no pageout from direct reclaim: have the flusher
			 * write it and end_page_writeback() rotate it */
			sc->nr_dirty++;
			SetPageReclaim(page);
			goto keep_locked;
		}
		mapping = page->mapping;
		if (!mapping || !__remove_mapping(mapping, page))
			goto keep_locked;
		/* count is 0 and the page is off the cache: nobody else can
		 * see the lock bit, so no unlock_page() wakeup is due */
		ClearPageLocked(page);
		page_pool_free(c, page);
		nr_reclaimed++;
		continue;

keep_locked:
		unlock_page(page);
keep:
		list_add(&page->lru, &ret_pages);
	}
	list_splice(&ret_pages, page_list);
	return nr_reclaimed;
}

/* shrink_inactive_list(): one batch from the inactive tail. */
static unsigned long shrink_inactive_list(struct uf_cache *c,
					  unsigned long nr_to_scan,
					  struct scan_control *sc)
{
	struct page_pool *pool = &c->pool;
	LIST_HEAD(page_list);
	unsigned long nr_scanned, nr_taken, nr_reclaimed;

	spin_lock(&pool->lru_lock);
	nr_taken = isolate_lru_pages(c, nr_to_scan, &pool->inactive_file,
				     &page_list, &nr_scanned);
	spin_unlock(&pool->lru_lock);
	sc->nr_scanned += nr_scanned;
	if (!nr_taken)
		return 0;
	nr_reclaimed = shrink_page_list(c, &page_list, sc);
	putback_lru_pages(c, &page_list);
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

/* shrink_zone(): one pass at sc->priority. */
static void shrink_zone(struct uf_cache *c, struct scan_control *sc)
{
	struct page_pool *pool = &c->pool;
	unsigned long nr_to_scan, nr;

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
		sc->nr_reclaimed += shrink_inactive_list(c, nr, sc);
		if (sc->nr_reclaimed >= sc->nr_to_reclaim)
			return;
	}
	if (inactive_file_is_low(pool))
		shrink_active_list(c, scan_count(lru_count(pool, true),
						 sc->priority), sc);
}

/*
 * do_try_to_free_pages(): shrink at increasing pressure until enough was
 * freed.  Once more than 1.5 batches were scanned and some of what was met
 * is dirty, wake the flushers for that many pages: reclaim cannot clean
 * pages itself, and the sooner they are written the sooner they are free.
 */
static unsigned long do_try_to_free_pages(struct uf_cache *c,
					  struct scan_control *sc)
{
	unsigned long writeback_threshold;
	bool woke_flushers = false;

	for (sc->priority = DEF_PRIORITY; sc->priority >= 0; sc->priority--) {
		shrink_zone(c, sc);
		if (sc->nr_reclaimed >= sc->nr_to_reclaim)
			break;
		writeback_threshold = sc->nr_to_reclaim +
				      sc->nr_to_reclaim / 2;
		if (!woke_flushers && sc->nr_dirty &&
		    sc->nr_scanned > writeback_threshold) {
			wakeup_flusher_threads(c, (long)sc->nr_scanned,
					       WB_REASON_TRY_TO_FREE_PAGES);
			woke_flushers = true;
		}
	}
	return sc->nr_reclaimed;
}

unsigned long try_to_free_pages(struct uf_cache *c,
				unsigned long nr_to_reclaim)
{
	struct scan_control sc = {
		.nr_to_reclaim = nr_to_reclaim ? nr_to_reclaim : 1,
	};

	return do_try_to_free_pages(c, &sc);
}
