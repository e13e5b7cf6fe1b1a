// SPDX-License-Identifier: MIT
/*
 * engine/mm/swap.c - the file LRU lists: mm/swap.c for uflush.
 *
 * Two lists per cache, as the kernel's zone has for file pages: inactive
 * (new pages, reclaimed from the tail) and active (pages accessed twice).
 * New pages enter at the head of the inactive list; reclaim isolates from
 * the tail; a page that finishes writeback with PG_reclaim set is moved to
 * the inactive tail so the next reclaim pass frees it first.
 *
 * Simplified: the kernel batches these moves in per-cpu pagevecs (14
 * pages) to amortise zone->lru_lock; uflush moves each page at once under
 * pool.lru_lock, which is cheap in userspace and keeps the list order exact
 * for the tests.  Consequently the reclaim wakeup that follows a rotation
 * is per page rather than per batch of 14.
 *
 * Lock: pool.lru_lock protects both lists, their counts and PG_lru /
 * PG_active of pages on them.  It nests inside nothing of ours and no other
 * lock is taken under it.  Never sleeps: rotate_reclaimable_page() runs on
 * the I/O completion thread.
 */
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "kernel/wait.h"

/* add_page_to_lru_list(): under lru_lock. */
static void add_page_to_lru_list(struct page_pool *pool, struct page *page,
				 bool active)
{
	list_add(&page->lru, active ? &pool->active_file
				    : &pool->inactive_file);
	lru_count_mod(pool, active, 1);
}

/* del_page_from_lru_list(): under lru_lock, PG_active says which list. */
static void del_page_from_lru_list(struct page_pool *pool, struct page *page)
{
	list_del_init(&page->lru);
	lru_count_mod(pool, PageActive(page), -1);
}

void lru_cache_add(struct uf_cache *c, struct page *page)
{
	struct page_pool *pool = &c->pool;

	WARN_ON_ONCE(PageLRU(page));
	spin_lock(&pool->lru_lock);
	SetPageLRU(page);
	add_page_to_lru_list(pool, page, PageActive(page));
	spin_unlock(&pool->lru_lock);
}

void activate_page(struct uf_cache *c, struct page *page)
{
	struct page_pool *pool = &c->pool;

	spin_lock(&pool->lru_lock);
	if (PageLRU(page) && !PageActive(page)) {
		del_page_from_lru_list(pool, page);
		SetPageActive(page);
		add_page_to_lru_list(pool, page, true);
	}
	spin_unlock(&pool->lru_lock);
}

/*
 * mark_page_accessed(): inactive,unreferenced -> inactive,referenced ->
 * active,unreferenced.  One access is not enough to be promoted: a page
 * read once by a streaming reader stays on the inactive list and is
 * reclaimed before pages that are used again.
 */
void mark_page_accessed(struct uf_cache *c, struct page *page)
{
	if (!PageActive(page) && PageReferenced(page) && PageLRU(page)) {
		activate_page(c, page);
		ClearPageReferenced(page);
	} else if (!PageReferenced(page)) {
		SetPageReferenced(page);
	}
}

/*
 * rotate_reclaimable_page(): reclaim met this page dirty or under
 * writeback and set PG_reclaim; its writeback is now done, so move it to
 * the inactive tail where the next scan frees it, and wake allocators
 * waiting for a frame (the kernel's reclaim wakeup after a rotation).
 * A page that was redirtied, activated or is locked is left where it is.
 */
void rotate_reclaimable_page(struct uf_cache *c, struct page *page)
{
	struct page_pool *pool = &c->pool;
	bool moved = false;

	if (PageLocked(page) || PageDirty(page) || PageActive(page))
		return;
	spin_lock(&pool->lru_lock);
	if (PageLRU(page) && !PageActive(page)) {
		list_move_tail(&page->lru, &pool->inactive_file);
		moved = true;
	}
	spin_unlock(&pool->lru_lock);
	if (moved)
		pool_reclaim_event(pool);
}

/*
 * __page_cache_release(): the last reference is gone; nobody can isolate
 * the page any more (isolation needs a reference), so take it off its list.
 */
void __page_cache_release(struct uf_cache *c, struct page *page)
{
	struct page_pool *pool = &c->pool;

	if (!PageLRU(page))
		return;
	spin_lock(&pool->lru_lock);
	if (TestClearPageLRU(page))
		del_page_from_lru_list(pool, page);
	spin_unlock(&pool->lru_lock);
	ClearPageActive(page);
}
