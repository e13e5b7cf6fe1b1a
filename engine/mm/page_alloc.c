// SPDX-License-Identifier: MIT
/*
 * engine/mm/page_alloc.c - the frame pool: mm/page_alloc.c for uflush.
 *
 * The kernel's buddy allocator hands out power-of-two blocks from zones and
 * keeps per-cpu lists; uflush only ever needs single page frames for the
 * page cache, so the "zone" is one pool of frames mapped up front (the
 * embedder sized it: that is the memory the cache may use) and one free
 * list.  What is kept from the kernel:
 *  - struct page descriptors in an array parallel to the frames, so that
 *    page_address() is arithmetic (the kernel's mem_map / vmemmap);
 *  - the reference count discipline: put_page() frees at zero, taking the
 *    page off its LRU list first (__page_cache_release);
 *  - NR_FREE_PAGES accounting and the "bad page" checks of
 *    free_pages_check() at free time;
 *  - the allocator's slow path: direct reclaim, then a bounded wait for
 *    writeback to make pages freeable, then failure (__alloc_pages_slowpath
 *    and its OOM decision, without an OOM killer: the caller gets -ENOMEM).
 *
 * Frames are LIFO (freed to and taken from the head) for cache warmth, as
 * the kernel's per-cpu hot lists are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mm/mm.h"
#include "mm/pagemap.h"
#include "kernel/sched.h"
#include "kernel/wait.h"

_Static_assert(sizeof(struct page) <= 64, "struct page must stay small");

/*
 * Direct reclaim rounds in a row that freed nothing, with nothing under
 * writeback that could make pages freeable, before the allocator gives up
 * (the kernel's MAX_RECLAIM_RETRIES, should_reclaim_retry()).
 */
#define MAX_RECLAIM_RETRIES	16

static struct uf_cache *pool_cache(struct page_pool *pool)
{
	return container_of(pool, struct uf_cache, pool);
}

int page_pool_init(struct page_pool *pool, unsigned long nr)
{
	unsigned long i;
	void *frames;

	if (!nr || nr > (SIZE_MAX >> PAGE_SHIFT) / 2)
		return -EINVAL;
	/* MAP_POPULATE: the pool is the cache's memory, taken at open so a
	 * shortage shows there rather than as a fault under load. */
	frames = mmap(NULL, nr << PAGE_SHIFT, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (frames == MAP_FAILED)
		return -ENOMEM;
	pool->pages = calloc(nr, sizeof(struct page));
	if (!pool->pages) {
		munmap(frames, nr << PAGE_SHIFT);
		return -ENOMEM;
	}
	pool->frames = frames;
	pool->nr = nr;
	spin_lock_init(&pool->lock);
	spin_lock_init(&pool->lru_lock);
	INIT_LIST_HEAD(&pool->free_list);
	INIT_LIST_HEAD(&pool->inactive_file);
	INIT_LIST_HEAD(&pool->active_file);
	pool->nr_inactive = 0;
	pool->nr_active = 0;
	init_waitqueue_head(&pool->free_wait);
	for (i = 0; i < nr; i++)
		list_add_tail(&pool->pages[i].lru, &pool->free_list);
	mod_vm_state(pool_cache(pool), NR_FREE_PAGES, (long)nr);
	return 0;
}

void page_pool_exit(struct page_pool *pool)
{
	struct uf_cache *c = pool_cache(pool);

	if (!pool->pages)
		return;
	/* Every frame must be back: a leak here is a lost put_page(). */
	WARN_ON(global_page_state(c, NR_FREE_PAGES) != pool->nr);
	mod_vm_state(c, NR_FREE_PAGES, -(long)pool->nr);
	munmap(pool->frames, pool->nr << PAGE_SHIFT);
	free(pool->pages);
	pool->pages = NULL;
	pool->frames = NULL;
	pool->nr = 0;
}

struct page *page_pool_alloc(struct uf_cache *c)
{
	struct page_pool *pool = &c->pool;
	struct page *page;

	spin_lock(&pool->lock);
	if (list_empty(&pool->free_list)) {
		spin_unlock(&pool->lock);
		return NULL;
	}
	page = list_first_entry(&pool->free_list, struct page, lru);
	list_del_init(&page->lru);
	spin_unlock(&pool->lock);
	dec_vm_state(c, NR_FREE_PAGES);
	__atomic_store_n(&page->_count, 1, __ATOMIC_RELAXED);
	return page;
}

/* free_pages_check(): a page still in use somewhere must not be freed. */
static bool free_page_bad(const struct page *page)
{
	const unsigned long busy = BIT(PG_locked) | BIT(PG_dirty) |
				   BIT(PG_lru) | BIT(PG_writeback);

	return WARN_ON(page_count(page) != 0) ||
	       WARN_ON(page->mapping != NULL) ||
	       WARN_ON(__atomic_load_n(&page->flags, __ATOMIC_RELAXED) & busy);
}

void page_pool_free(struct uf_cache *c, struct page *page)
{
	struct page_pool *pool = &c->pool;

	if (free_page_bad(page))
		return;	/* leak it rather than hand it out twice */
	__atomic_store_n(&page->flags, 0, __ATOMIC_RELAXED);
	page->index = 0;
	page->private = NULL;
	spin_lock(&pool->lock);
	list_add(&page->lru, &pool->free_list);
	spin_unlock(&pool->lock);
	inc_vm_state(c, NR_FREE_PAGES);
	wake_up_all(&pool->free_wait);
}

void put_page(struct uf_cache *c, struct page *page)
{
	int count = __atomic_sub_fetch(&page->_count, 1, __ATOMIC_ACQ_REL);

	if (WARN_ON(count < 0))
		return;
	if (count)
		return;
	__page_cache_release(c, page);
	page_pool_free(c, page);
}

/*
 * Sleep until a frame is freed or writeback ends somewhere (both wake
 * pool.free_wait), or @timeout passes: the kernel's congestion_wait() in
 * the allocator's retry loop.  The free count is checked after queueing,
 * so a free between our reclaim attempt and the sleep is not missed.
 */
static void wait_for_free_frame(struct uf_cache *c, long timeout)
{
	DEFINE_WAIT(wait);

	prepare_to_wait(&c->pool.free_wait, &wait, TASK_UNINTERRUPTIBLE);
	if (!global_page_state(c, NR_FREE_PAGES))
		io_schedule_timeout(timeout);
	finish_wait(&c->pool.free_wait, &wait);
}

/* __alloc_pages_direct_reclaim(): reclaim, then try the free list. */
static struct page *__alloc_pages_direct_reclaim(struct uf_cache *c,
						 unsigned long *progress)
{
	*progress = try_to_free_pages(c, SWAP_CLUSTER_MAX);
	return page_pool_alloc(c);
}

/*
 * __alloc_pages_slowpath(): the free list was empty.  Reclaim; if that
 * freed nothing, writeback in flight will make pages clean (and wake us),
 * so wait a tenth of a second and retry.  Give up only after
 * MAX_RECLAIM_RETRIES fruitless rounds in a row with nothing under
 * writeback: then nothing we can wait for would free a frame (every page
 * is pinned, or dirty with flushers that do not write it).
 */
static struct page *__alloc_pages_slowpath(struct uf_cache *c)
{
	long timeout = HZ / 10 ? HZ / 10 : 1;
	unsigned long progress;
	int no_progress_loops = 0;
	struct page *page;

	for (;;) {
		page = __alloc_pages_direct_reclaim(c, &progress);
		if (page)
			return page;
		if (progress || global_page_state(c, NR_WRITEBACK))
			no_progress_loops = 0;
		else if (++no_progress_loops > MAX_RECLAIM_RETRIES)
			return NULL;
		if (!progress)
			wait_for_free_frame(c, timeout);
	}
}

struct page *alloc_page(struct uf_cache *c)
{
	struct page *page = page_pool_alloc(c);

	if (__builtin_expect(page != NULL, 1))
		return page;
	return __alloc_pages_slowpath(c);
}
