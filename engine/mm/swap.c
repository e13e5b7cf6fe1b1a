// SPDX-License-Identifier: MIT
/*
 * engine/mm/swap.c - the file LRU lists and their pagevecs: mm/swap.c (3.2)
 * for uflush.
 *
 * Two lists per cache, as the kernel's zone has for file pages: inactive
 * (new pages, reclaimed from the tail) and active (pages accessed twice).
 * New pages enter at the head of the inactive list; reclaim isolates from
 * the tail; a page that finishes writeback with PG_reclaim set is moved to
 * the inactive tail so the next reclaim pass frees it first.
 *
 * Batching, as 3.2's per-cpu lru_add_pvecs and lru_rotate_pvecs: each
 * thread collects up to PAGEVEC_SIZE (14) pages to add and 14 to rotate,
 * and moves them under one lru_lock hold (____pagevec_lru_add,
 * pagevec_move_tail).  A page waiting in an add pagevec holds a reference
 * and is not on a list yet (PG_lru clear), as in the kernel.  uflush's
 * "cpus" are threads, which come and go, so every thread's pagevecs are
 * registered: lru_add_drain_all() empties those of one cache (reclaim
 * calls it when a pass freed nothing, the cache at close), and a thread
 * that exits drains its own (a world's task at its end, in its turn).
 * After each batch of rotations the waiters of reclaim_wait() are woken
 * (seed 003's reclaim_rotated()).
 *
 * A cache built by hand (tests) has pool.lru_batch false: every move is
 * done at once, so a test sees exact list order without drains.
 *
 * Locks: a thread's pagevec lock (taken by it, or by a drain from another
 * thread), then pool.lru_lock.  pvec_registry_lock is outermost.  Nothing
 * here sleeps: rotate_reclaimable_page() runs on the I/O completion thread.
 */
#include <pthread.h>
#include <stdlib.h>

#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "kernel/sim.h"
#include "kernel/wait.h"
#include "lib/slab.h"

struct pagevec {
	unsigned int nr;
	struct page *pages[PAGEVEC_SIZE];
};

/* One thread's pagevecs (the kernel's per-cpu lru_add_pvecs and
 * lru_rotate_pvecs).  All pages in them belong to ->cache. */
struct lru_pvecs {
	spinlock_t lock;
	struct uf_cache *cache;
	struct pagevec add;
	struct pagevec rotate;
	struct list_head node;		/* on pvec_registry */
};

static spinlock_t pvec_registry_lock = __SPIN_LOCK_UNLOCKED;
static LIST_HEAD(pvec_registry);
static pthread_key_t pvec_key;
static pthread_once_t pvec_once = PTHREAD_ONCE_INIT;
static __thread struct lru_pvecs *my_pvecs;

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

/* ____pagevec_lru_add(): the pages to the inactive head, then drop the
 * pagevec's references (release_pages). */
static void pagevec_lru_add(struct uf_cache *c, struct pagevec *pvec)
{
	struct page_pool *pool = &c->pool;
	unsigned int i;

	spin_lock(&pool->lru_lock);
	for (i = 0; i < pvec->nr; i++) {
		WARN_ON_ONCE(PageLRU(pvec->pages[i]));
		SetPageLRU(pvec->pages[i]);
		add_page_to_lru_list(pool, pvec->pages[i],
				     PageActive(pvec->pages[i]));
	}
	spin_unlock(&pool->lru_lock);
	for (i = 0; i < pvec->nr; i++)
		put_page(c, pvec->pages[i]);
	pvec->nr = 0;
}

/*
 * pagevec_move_tail(): rotate each page still fit for it to the inactive
 * tail, count PGROTATED, wake reclaim_wait() (seed 003) and the
 * allocators.  The pagevec's references are dropped.
 */
static void pagevec_move_tail(struct uf_cache *c, struct pagevec *pvec)
{
	struct page_pool *pool = &c->pool;
	unsigned long moved = 0;
	struct page *page;
	unsigned int i;

	spin_lock(&pool->lru_lock);
	for (i = 0; i < pvec->nr; i++) {
		page = pvec->pages[i];
		if (PageLRU(page) && !PageActive(page)) {
			list_move_tail(&page->lru, &pool->inactive_file);
			moved++;
		}
	}
	spin_unlock(&pool->lru_lock);
	for (i = 0; i < pvec->nr; i++)
		put_page(c, pvec->pages[i]);
	pvec->nr = 0;
	if (moved) {
		__atomic_add_fetch(&pool->rstat.nr_rotated, moved,
				   __ATOMIC_RELAXED);
		reclaim_rotated(c);
		pool_reclaim_event(pool);
	}
}

/* Empty both pagevecs (lock held). */
static void lru_pvecs_flush(struct lru_pvecs *pv)
{
	if (!pv->cache)
		return;
	if (pv->add.nr)
		pagevec_lru_add(pv->cache, &pv->add);
	if (pv->rotate.nr)
		pagevec_move_tail(pv->cache, &pv->rotate);
	__atomic_store_n(&pv->cache, NULL, __ATOMIC_RELAXED);
}

/* A thread exits: its pages go to their lists, its pagevecs away. */
static void pvec_key_destroy(void *p)
{
	struct lru_pvecs *pv = p;

	spin_lock(&pvec_registry_lock);
	list_del(&pv->node);
	spin_unlock(&pvec_registry_lock);
	spin_lock(&pv->lock);
	lru_pvecs_flush(pv);
	spin_unlock(&pv->lock);
	kfree(pv);
}

/*
 * In a world, a task's exit is its end in its turn (kernel/sim.c): left
 * to the key's destructor, its pages would reach the inactive list at a
 * moment of real time, between two other tasks' steps, and a later
 * reclaim pass would find them there or not by chance (a seed replayed
 * another trace in the second world of a process).  Nothing is left for
 * the thread's real exit.
 */
static void pvec_sim_exit(void)
{
	struct lru_pvecs *pv = my_pvecs;

	if (!pv)
		return;
	my_pvecs = NULL;
	pthread_setspecific(pvec_key, NULL);
	pvec_key_destroy(pv);
}

static void pvec_key_create(void)
{
	BUG_ON(pthread_key_create(&pvec_key, pvec_key_destroy));
	uf_sim_register_exit(pvec_sim_exit);
}

/* This thread's pagevecs, locked, emptied first if they hold another
 * cache's pages.  NULL if none could be allocated (do it unbatched). */
static struct lru_pvecs *get_lru_pvecs(struct uf_cache *c)
{
	struct lru_pvecs *pv = my_pvecs;

	if (!pv) {
		pthread_once(&pvec_once, pvec_key_create);
		pv = kzalloc(sizeof(*pv));
		if (!pv)
			return NULL;
		spin_lock_init(&pv->lock);
		spin_lock(&pvec_registry_lock);
		list_add(&pv->node, &pvec_registry);
		spin_unlock(&pvec_registry_lock);
		pthread_setspecific(pvec_key, pv);
		my_pvecs = pv;
	}
	spin_lock(&pv->lock);
	if (pv->cache != c) {
		lru_pvecs_flush(pv);
		__atomic_store_n(&pv->cache, c, __ATOMIC_RELAXED);
	}
	return pv;
}

void lru_add_drain(void)
{
	struct lru_pvecs *pv = my_pvecs;

	if (!pv)
		return;
	spin_lock(&pv->lock);
	lru_pvecs_flush(pv);
	spin_unlock(&pv->lock);
}

/* lru_add_drain_all(), for one cache's pages. */
void lru_add_drain_all(struct uf_cache *c)
{
	struct lru_pvecs *pv;

	spin_lock(&pvec_registry_lock);
	list_for_each_entry(pv, &pvec_registry, node) {
		if (__atomic_load_n(&pv->cache, __ATOMIC_RELAXED) != c)
			continue;
		spin_lock(&pv->lock);
		if (pv->cache == c)
			lru_pvecs_flush(pv);
		spin_unlock(&pv->lock);
	}
	spin_unlock(&pvec_registry_lock);
}

void lru_drain_cache(struct uf_cache *c)
{
	lru_add_drain_all(c);
}

void lru_cache_add(struct uf_cache *c, struct page *page)
{
	struct page_pool *pool = &c->pool;
	struct lru_pvecs *pv;

	WARN_ON_ONCE(PageLRU(page));
	if (pool->lru_batch && (pv = get_lru_pvecs(c)) != NULL) {
		get_page(page);
		pv->add.pages[pv->add.nr++] = page;
		if (pv->add.nr == PAGEVEC_SIZE)
			pagevec_lru_add(c, &pv->add);
		spin_unlock(&pv->lock);
		return;
	}
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
 * reclaimed before pages that are used again.  A page still in an add
 * pagevec is not on a list and is not promoted (3.2 checks PageLRU).
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
 * the inactive tail where the next scan frees it.  A page that was
 * redirtied, activated or is locked is left where it is.  Batched per
 * thread (14 pages, or the end of the I/O request: lru_add_drain).
 */
void rotate_reclaimable_page(struct uf_cache *c, struct page *page)
{
	struct lru_pvecs *pv;
	struct pagevec one;

	if (PageLocked(page) || PageDirty(page) || PageActive(page) ||
	    !PageLRU(page))
		return;
	get_page(page);
	if (c->pool.lru_batch && (pv = get_lru_pvecs(c)) != NULL) {
		pv->rotate.pages[pv->rotate.nr++] = page;
		if (pv->rotate.nr == PAGEVEC_SIZE)
			pagevec_move_tail(c, &pv->rotate);
		spin_unlock(&pv->lock);
		return;
	}
	one.nr = 1;
	one.pages[0] = page;
	pagevec_move_tail(c, &one);
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
