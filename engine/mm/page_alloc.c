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
 *  - the allocator's slow path (__alloc_pages_slowpath): direct reclaim,
 *    whose variant has the flushers write dirty pages, and waiting for
 *    writeback to end.
 *    Without an OOM killer, the OOM decision is the caller's -ENOMEM, and
 *    it is taken only when it is certain: every frame is pinned by a page
 *    holder (uf_page_get), so no reclaim or writeback could ever free one.
 *    Until then the allocator waits, however long that takes (the
 *    kernel's page cache allocations do not fail while clean or writeback
 *    pages exist either).
 *
 * Fairness, which the kernel gets from per-cpu lists and its watermarks
 * and uflush, with a few frames shared by many threads, must get itself:
 * allocators that find the free list empty queue on pool.alloc_waiters,
 * and page_pool_free() hands each freed frame to the oldest of them (the
 * kernel's "capture" of a frame freed for a particular allocation, done
 * for the queue).  A thread whose reclaim frees frames that other threads
 * then take would otherwise lose every race, and did: a 54-page write to
 * a 32-page cache came back short after 16 fruitless rounds in under 1 ms.
 *
 * Frames are LIFO (freed to and taken from the head), as the kernel's
 * per-cpu lists are.  That also gives the kernel's write request sizes in
 * both regimes (the block layer merges physically contiguous pages into
 * one segment): frames never used come off the free list in ascending
 * order, so a file's consecutive pages get consecutive frames and large
 * requests, as the kernel's with free memory gets from the buddy
 * allocator's blocks; under reclaim each freed batch comes back reversed,
 * as from the kernel's per-cpu lists in a memory cgroup at its limit,
 * and requests are one frame a segment (512 KiB on a loop device).
 *
 * The frames are the kernel's own 4 KiB pages (no huge pages asked for),
 * so they are as contiguous in physical memory as its page cache's would
 * be; which ones are is read once from /proc/self/pagemap
 * (pool->phys_contig), for the block layer's segment count (one segment
 * per physically contiguous run, bio_add_page()'s merge).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "fs/writeback.h"
#include "kernel/jiffies.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/wait.h"

_Static_assert(sizeof(struct page) <= 64, "struct page must stay small");

static struct uf_cache *pool_cache(struct page_pool *pool)
{
	return container_of(pool, struct uf_cache, pool);
}

#define POOL_HUGE_SIZE	(2ul << 20)	/* alignment and merge boundary */

/* @len bytes of address space at a 2 MiB boundary, with @prot; NULL. */
static void *map_aligned(size_t len, int prot)
{
	size_t span = len + POOL_HUGE_SIZE;
	uintptr_t base, start;
	void *m;

	m = mmap(NULL, span, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	base = (uintptr_t)m;
	start = (base + POOL_HUGE_SIZE - 1) & ~(POOL_HUGE_SIZE - 1);
	if (start > base)
		munmap(m, start - base);
	if (span - (start - base) > len)
		munmap((void *)(start + len), span - (start - base) - len);
	return (void *)start;
}

/*
 * The frames: 2 MiB-aligned (no merged segment crosses such a boundary,
 * nor so one of io_uring's registered buffers), then populated (the pool
 * is the cache's memory, taken at open so a shortage shows there rather
 * than as a fault under load).  NULL if there is no memory.
 */
static void *pool_map(size_t len)
{
	unsigned char *p = map_aligned(len, PROT_READ | PROT_WRITE);
	size_t off;

	if (!p)
		return NULL;
#ifdef MADV_POPULATE_WRITE
	if (!madvise(p, len, MADV_POPULATE_WRITE))
		return p;
	if (errno == ENOMEM) {
		munmap(p, len);
		return NULL;
	}
#endif
	for (off = 0; off < len; off += PAGE_SIZE)	/* before Linux 5.14 */
		p[off] = 0;
	return p;
}

/*
 * Bit i set: frame i follows frame i - 1 in physical memory (and in the
 * same 2 MiB of the pool, so that a merged segment never straddles one of
 * io_uring's registered buffers).  From
 * /proc/self/pagemap, whose frame numbers only CAP_SYS_ADMIN may read;
 * without them nothing is known contiguous and every frame counts as a
 * segment of its own.  Pinned by io_uring's registration, the frames do
 * not move afterwards; otherwise a migration only costs a split request.
 */
static unsigned long *pool_phys_contig(const unsigned char *frames,
				       unsigned long nr)
{
	unsigned long *bits, i, chunk = 4096, j, n;
	uint64_t *pfn, prev = 0;
	ssize_t got;
	bool any = false;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	bits = calloc(BITS_TO_LONGS(nr), sizeof(long));
	pfn = malloc(chunk * sizeof(*pfn));
	for (i = 0; bits && pfn && i < nr; i += n) {
		n = nr - i < chunk ? nr - i : chunk;
		got = pread(fd, pfn, n * sizeof(*pfn),
			    (off_t)(((uintptr_t)frames >> PAGE_SHIFT) + i) * 8);
		if (got != (ssize_t)(n * sizeof(*pfn)))
			break;
		for (j = 0; j < n; j++) {
			uint64_t f = pfn[j] >> 63 ? pfn[j] & ((1ull << 55) - 1)
						  : 0;

			if (f && prev && f == prev + 1 &&
			    ((i + j) << PAGE_SHIFT) % POOL_HUGE_SIZE) {
				set_bit((int)((i + j) % BITS_PER_LONG),
					&bits[(i + j) / BITS_PER_LONG]);
				any = true;
			}
			prev = f;
		}
	}
	close(fd);
	free(pfn);
	if (!any) {
		free(bits);
		return NULL;
	}
	return bits;
}

/*
 * A pool whose frames hold no data (uf_cache_config.frames = "none", for
 * devices that discard it): the span is reserved, then every 2 MiB of it
 * is mapped onto one shared 2 MiB memfd, so a 16 GiB pool costs 2 MiB of
 * memory and its page tables, not 16 GiB.  Every frame of a chunk aliases
 * the same bytes of every other chunk: what a page holds is garbage.
 */
static void *pool_map_nodata(size_t len)
{
	uintptr_t start;
	size_t off, n;
	int fd;
	void *m;

	fd = memfd_create("uflush-frames", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, POOL_HUGE_SIZE))
		goto fail_fd;
	m = map_aligned(len, PROT_NONE);
	if (!m)
		goto fail_fd;
	start = (uintptr_t)m;
	for (off = 0; off < len; off += n) {
		n = len - off < POOL_HUGE_SIZE ? len - off : POOL_HUGE_SIZE;
		if (mmap((void *)(start + off), n, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			munmap((void *)start, len);
			goto fail_fd;
		}
	}
	close(fd);
	return (void *)start;
fail_fd:
	close(fd);
	return NULL;
}

static int pool_init(struct page_pool *pool, unsigned long nr, bool no_data)
{
	struct page *pages;
	unsigned long i;
	void *frames;

	if (!nr || nr > (SIZE_MAX >> PAGE_SHIFT) / 2)
		return -EINVAL;
	frames = no_data ? pool_map_nodata(nr << PAGE_SHIFT) :
			   pool_map(nr << PAGE_SHIFT);
	if (!frames)
		return -ENOMEM;
	pages = calloc(nr, sizeof(struct page));
	if (!pages) {
		munmap(frames, nr << PAGE_SHIFT);
		return -ENOMEM;
	}
	/* counters, watermarks, kswapd and lru_batch start at zero */
	memset(pool, 0, sizeof(*pool));
	spin_lock_init(&pool->lock);
	spin_lock_init(&pool->lru_lock);
	INIT_LIST_HEAD(&pool->free_list);
	INIT_LIST_HEAD(&pool->inactive_file);
	INIT_LIST_HEAD(&pool->active_file);
	INIT_LIST_HEAD(&pool->alloc_waiters);
	init_waitqueue_head(&pool->free_wait);
	init_waitqueue_head(&pool->kswapd_wait);
	init_waitqueue_head(&pool->reclaim_wqh);
	init_waitqueue_head(&pool->congestion_wqh);
	init_waitqueue_head(&pool->throttle_wqh);
	init_waitqueue_head(&pool->throttle_isolated_wqh);
	init_waitqueue_head(&pool->throttle_noprogress_wqh);
	init_waitqueue_head(&pool->throttle_congested_wqh);
	pool->pages = pages;
	pool->frames = frames;
	pool->nr = nr;
	pool->no_data = no_data;
	/* aliased chunks: no physical order worth reading */
	pool->phys_contig = no_data ? NULL : pool_phys_contig(frames, nr);
	for (i = 0; i < nr; i++)
		list_add_tail(&pool->pages[i].lru, &pool->free_list);
	mod_vm_state(pool_cache(pool), NR_FREE_PAGES, (long)nr);
	return 0;
}

int page_pool_init(struct page_pool *pool, unsigned long nr)
{
	return pool_init(pool, nr, false);
}

int page_pool_init_nodata(struct page_pool *pool, unsigned long nr)
{
	return pool_init(pool, nr, true);
}

void page_pool_exit(struct page_pool *pool)
{
	struct uf_cache *c = pool_cache(pool);

	if (!pool->pages)
		return;
	/* Every frame must be back: a leak here is a lost put_page(). */
	WARN_ON(global_page_state(c, NR_FREE_PAGES) !=
		pool->nr + pool->nr_outside);
	mod_vm_state(c, NR_FREE_PAGES, -(long)(pool->nr + pool->nr_outside));
	pool->nr_outside = 0;
	munmap(pool->frames, pool->nr << PAGE_SHIFT);
	free(pool->phys_contig);
	pool->phys_contig = NULL;
	free(pool->pages);
	pool->pages = NULL;
	pool->frames = NULL;
	pool->nr = 0;
}

/*
 * Make the pool a memory domain of a machine of @machine_pages frames:
 * the pool's own frames are the domain's limit; the rest of the machine
 * is free memory the dirty limits see and nobody allocates.
 */
int page_pool_set_machine(struct page_pool *pool, unsigned long machine_pages)
{
	if (machine_pages < pool->nr)
		return -EINVAL;
	pool->nr_outside = machine_pages - pool->nr;
	mod_vm_state(pool_cache(pool), NR_FREE_PAGES, (long)pool->nr_outside);
	return 0;
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
	/* release (so in the other two hand-outs): a stale pin that reads
	 * this count also sees the page_seq its delete moved (page_pin.c) */
	__atomic_store_n(&page->_count, 1, __ATOMIC_RELEASE);
	return page;
}

/*
 * free_pages_check(): a page still in use somewhere must not be freed; a
 * frame freed with page holders left would also falsify the pinned count.
 */
static bool free_page_bad(const struct page *page)
{
	const unsigned long busy = BIT(PG_locked) | BIT(PG_dirty) |
				   BIT(PG_lru) | BIT(PG_writeback);

	return WARN_ON(page_count(page) != 0) ||
	       WARN_ON(page->mapping != NULL) ||
	       WARN_ON(__atomic_load_n(&page->uf_users, __ATOMIC_RELAXED)) ||
	       WARN_ON(__atomic_load_n(&page->flags, __ATOMIC_RELAXED) & busy);
}

/* One allocator queued on pool.alloc_waiters, on its own stack. */
struct alloc_waiter {
	struct list_head list;		/* under pool.lock */
	struct page *page;		/* atomic: the frame handed to it */
};

void page_pool_free(struct uf_cache *c, struct page *page)
{
	struct page_pool *pool = &c->pool;
	struct alloc_waiter *w = NULL;

	if (free_page_bad(page))
		return;	/* leak it rather than hand it out twice */
	__atomic_store_n(&page->flags, 0, __ATOMIC_RELAXED);
	page->index = 0;
	page->private = NULL;
	spin_lock(&pool->lock);
	if (!list_empty(&pool->alloc_waiters)) {
		/* the oldest waiter's: it never passes through the free list */
		w = list_first_entry(&pool->alloc_waiters, struct alloc_waiter,
				     list);
		list_del_init(&w->list);
		__atomic_store_n(&page->_count, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&w->page, page, __ATOMIC_RELEASE);
	} else {
		list_add(&page->lru, &pool->free_list);
	}
	spin_unlock(&pool->lock);
	if (w)
		pool_reclaim_event(pool);	/* w may be gone: no w-> */
	else
		inc_vm_state(c, NR_FREE_PAGES);
}

/*
 * page_pool_free() of every page on @list (linked by page->lru), in list
 * order, under one pool lock: shrink_page_list's free_hot_cold_page_list()
 * (3.2.41) / free_unref_folios() (6.18) at the end of its batch.  Each
 * page goes where page_pool_free() would put it: to the oldest waiting
 * allocator, else onto the free list.
 */
void page_pool_free_list(struct uf_cache *c, struct list_head *list)
{
	struct page_pool *pool = &c->pool;
	struct page *page;
	long nr_free = 0;
	bool handed = false;
	LIST_HEAD(ok);

	while (!list_empty(list)) {
		page = list_first_entry(list, struct page, lru);
		list_del(&page->lru);
		if (free_page_bad(page))
			continue;	/* leaked, as page_pool_free() does */
		__atomic_store_n(&page->flags, 0, __ATOMIC_RELAXED);
		page->index = 0;
		page->private = NULL;
		list_add_tail(&page->lru, &ok);
	}
	spin_lock(&pool->lock);
	while (!list_empty(&ok)) {
		page = list_first_entry(&ok, struct page, lru);
		list_del(&page->lru);
		if (!list_empty(&pool->alloc_waiters)) {
			struct alloc_waiter *w =
				list_first_entry(&pool->alloc_waiters,
						 struct alloc_waiter, list);

			list_del_init(&w->list);
			__atomic_store_n(&page->_count, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&w->page, page, __ATOMIC_RELEASE);
			handed = true;
		} else {
			list_add(&page->lru, &pool->free_list);
			nr_free++;
		}
	}
	spin_unlock(&pool->lock);
	if (nr_free)
		mod_vm_state(c, NR_FREE_PAGES, nr_free);
	if (handed)
		pool_reclaim_event(pool);	/* no w->: it may be gone */
}

/*
 * Either we see the waiter alloc_waiter_enqueue() counted, or its next
 * reclaim pass sees what our caller just changed (count, writeback bit):
 * a full barrier on both sides, as the kernel's smp_mb() before
 * waitqueue_active().  A fence, not a read-modify-write of the counter:
 * put_page() comes here on every cache hit, and an RMW made the pool's
 * line bounce between every pair of CPUs reading the cache.  TSan does not
 * model fences, so its build keeps the RMW (which it does model).
 */
static bool pool_has_alloc_waiters(struct page_pool *pool)
{
#if defined(__SANITIZE_THREAD__)
	return __atomic_fetch_add(&pool->nr_alloc_waiters, 0,
				  __ATOMIC_ACQ_REL);
#else
	smp_mb();
	return __atomic_load_n(&pool->nr_alloc_waiters, __ATOMIC_RELAXED);
#endif
}

void pool_reclaim_event(struct page_pool *pool)
{
	if (!pool_has_alloc_waiters(pool))
		return;
	__atomic_add_fetch(&pool->reclaim_seq, 1, __ATOMIC_SEQ_CST);
	wake_up_all(&pool->free_wait);
}

/* Sequentially consistent: the freer's half of page_pin.c's pattern. */
void put_page(struct uf_cache *c, struct page *page)
{
	int count = __atomic_sub_fetch(&page->_count, 1, __ATOMIC_SEQ_CST);

	if (WARN_ON(count < 0))
		return;
	if (count == 1) {
		/* only the page cache's reference may be left: freeable? */
		if (page_reclaimable_flags(page))
			pool_reclaim_event(&c->pool);
		return;
	}
	if (count)
		return;
	__page_cache_release(c, page);
	if (page_pin_handoff(page))
		return;		/* pinned: its last unpin frees it */
	page_pool_free(c, page);
}

/* Held through uf_page_get: a reference (uf_users) or a pin. */
static bool page_held(const struct page *p)
{
	return __atomic_load_n(&p->uf_users, __ATOMIC_RELAXED) ||
	       page_pinned(p);
}

/* Stops at the first frame not pinned: usually the first one. */
bool page_pool_all_pinned(struct page_pool *pool)
{
	unsigned long i;

	for (i = 0; i < pool->nr; i++)
		if (!page_held(&pool->pages[i]))
			return false;
	return true;
}

/*
 * Join the queue, or take a frame if one was freed meanwhile (the free
 * list is only ever non-empty with nobody queued).
 */
static struct page *alloc_waiter_enqueue(struct uf_cache *c,
					 struct alloc_waiter *w)
{
	struct page_pool *pool = &c->pool;
	struct page *page = NULL;

	w->page = NULL;
	spin_lock(&pool->lock);
	if (list_empty(&pool->free_list)) {
		list_add_tail(&w->list, &pool->alloc_waiters);
		/* pairs with pool_reclaim_event() */
		__atomic_add_fetch(&pool->nr_alloc_waiters, 1,
				   __ATOMIC_ACQ_REL);
		smp_mb__after_atomic();
	} else {
		page = list_first_entry(&pool->free_list, struct page, lru);
		list_del_init(&page->lru);
	}
	spin_unlock(&pool->lock);
	if (page) {
		dec_vm_state(c, NR_FREE_PAGES);
		__atomic_store_n(&page->_count, 1, __ATOMIC_RELEASE);
		return page;
	}
	return NULL;
}

static struct page *alloc_waiter_page(struct alloc_waiter *w)
{
	return __atomic_load_n(&w->page, __ATOMIC_ACQUIRE);
}

/* Leave the queue; a frame handed over meanwhile is still ours. */
static struct page *alloc_waiter_dequeue(struct uf_cache *c,
					 struct alloc_waiter *w)
{
	struct page_pool *pool = &c->pool;
	struct page *page;

	spin_lock(&pool->lock);
	page = alloc_waiter_page(w);
	if (!page)
		list_del_init(&w->list);
	spin_unlock(&pool->lock);
	__atomic_sub_fetch(&pool->nr_alloc_waiters, 1, __ATOMIC_SEQ_CST);
	return page;
}

/*
 * Sleep until a reclaim event (a frame handed to us, a clean page let go
 * of by all but the page cache, a writeback ended) or @timeout.  The
 * timeout is a safety net only: it catches what has no event, a page
 * holder taking the last unpinned frame (so that we see "all pinned"
 * within a tenth of a second) and dirty pages that only another round of
 * reclaim (its variant's flusher wakeup) gets written.  Returns false on
 * timeout.
 */
static bool alloc_wait_event(struct uf_cache *c, struct alloc_waiter *w,
			     unsigned long seq, long timeout)
{
	struct page_pool *pool = &c->pool;
	long left = 1;
	DEFINE_WAIT(wait);

	prepare_to_wait(&pool->free_wait, &wait, TASK_UNINTERRUPTIBLE);
	if (!alloc_waiter_page(w) &&
	    __atomic_load_n(&pool->reclaim_seq, __ATOMIC_SEQ_CST) == seq)
		left = io_schedule_timeout(timeout);
	finish_wait(&pool->free_wait, &wait);
	return left > 0;
}

/* warn_alloc(): say why an allocation failed, at most once a second. */
static void warn_alloc_pinned(struct uf_cache *c)
{
	static unsigned long last;	/* atomic */
	unsigned long now = jiffies, prev;

	prev = __atomic_load_n(&last, __ATOMIC_RELAXED);
	if (prev && time_before(now, prev + (unsigned long)HZ))
		return;
	if (!__atomic_compare_exchange_n(&last, &prev, now ? now : 1, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	pr_warn("page allocation failure: -ENOMEM: all %lu frames of the cache are pinned by page holders (uf_page_get without uf_page_put)",
		c->pool.nr);
}

/* The kernel's "page allocation stalls for %ums" warning, every 10 s. */
static void warn_alloc_stall(unsigned long start, unsigned long *next)
{
	if (time_before(jiffies, *next))
		return;
	pr_warn("page allocation stalls for %ums: waiting for reclaim and writeback",
		jiffies_to_msecs(jiffies - start));
	*next = jiffies + 10UL * (unsigned long)HZ;
}

/* Some page on the LRU is clean, unlocked, unpinned: reclaim could free
 * it once its other users let go, so no OOM. */
static bool pool_has_clean_pages(struct page_pool *pool)
{
	unsigned long i;

	for (i = 0; i < pool->nr; i++) {
		struct page *p = &pool->pages[i];

		if (PageLRU(p) && page_reclaimable_flags(p) && !page_held(p))
			return true;
	}
	return false;
}

enum charge_result { CHARGE_WAIT, CHARGE_RETRY, CHARGE_NOMEM };

/*
 * A reclaim freed nothing.  In a memory domain whose variant mirrors the
 * memcg OOM of its kernel (3.2's __mem_cgroup_try_charge, mainline's
 * try_charge_memcg): retry at once, without sleeping, the variant's
 * domain_oom_retries times, then fail the
 * charge, unless a clean page is there (no variant fails while clean
 * pages can be freed).  Elsewhere, wait for writeback.
 */
static enum charge_result domain_charge_check(struct uf_cache *c,
					      int *no_progress)
{
	int retries = cache_reclaim_policy(c)->domain_oom_retries;

	if (!c->pool.nr_outside || !retries)
		return CHARGE_WAIT;
	if (++*no_progress < retries)
		return CHARGE_RETRY;
	*no_progress = 0;
	if (pool_has_clean_pages(&c->pool))
		return CHARGE_WAIT;
	return CHARGE_NOMEM;
}

/*
 * uflush's OOM kill: the allocation fails, counted and logged.  The
 * kernel's victim dies and its memory comes back; uflush's caller lives
 * on and may retry, so the flushers are told to write what is dirty
 * (reason free_more_memory) for that retry to find clean pages.
 */
static void oom_domain(struct uf_cache *c)
{
	unsigned long n = __atomic_add_fetch(&c->pool.rstat.nr_oom, 1,
					     __ATOMIC_RELAXED);

	if (global_page_state(c, NR_FILE_DIRTY))
		wakeup_flusher_threads(c, 0, WB_REASON_FREE_MORE_MEM);

	if (n == 1 || !(n & (n - 1)))
		pr_warn("memory domain OOM (%lu so far): reclaim=%s freed nothing in %d tries over %lu frames, dirty %lu, writeback %lu; allocation fails with -ENOMEM",
			n, cache_reclaim_policy(c)->name,
			cache_reclaim_policy(c)->domain_oom_retries, c->pool.nr,
			global_page_state(c, NR_FILE_DIRTY),
			global_page_state(c, NR_WRITEBACK));
}

/*
 * __alloc_pages_slowpath(): the free list was empty.  Queue for the next
 * freed frame, and until one comes: reclaim (try_to_free_pages: clean
 * pages are freed, in queue order, to the waiters; the reclaim variant
 * gets dirty pages written), and sleep until something changes.  The
 * only way out without a frame is that every frame is pinned by a page
 * holder: then nothing that reclaim or writeback does can free one, and
 * waiting for the holders is not ours to decide (they may be the caller).
 * A frame held any other way (in-flight reads, writes, writeback, another
 * allocator's fresh frame, lookups) is released by its holder without our
 * help, so we wait for it.
 */
static struct page *__alloc_pages_slowpath(struct uf_cache *c)
{
	long timeout = HZ / 10 ? HZ / 10 : 1;
	unsigned long start = jiffies, stall_warn = start + 10UL * HZ;
	int no_progress = 0;
	struct alloc_waiter w;
	unsigned long seq;
	struct page *page;

	wakeup_kswapd(c);
	page = alloc_waiter_enqueue(c, &w);
	if (page)
		return page;
	__atomic_add_fetch(&c->pool.rstat.nr_alloc_stall, 1, __ATOMIC_RELAXED);
	for (;;) {
		seq = __atomic_load_n(&c->pool.reclaim_seq, __ATOMIC_SEQ_CST);
		if (try_to_free_pages(c, SWAP_CLUSTER_MAX) ||
		    alloc_waiter_page(&w))
			goto retry;	/* served, or served others before us */
		/* pages waiting in pagevecs are invisible to reclaim */
		lru_add_drain_all(c);
		if (page_pool_all_pinned(&c->pool)) {
			page = alloc_waiter_dequeue(c, &w);
			if (!page)
				warn_alloc_pinned(c);
			return page;
		}
		switch (domain_charge_check(c, &no_progress)) {
		case CHARGE_RETRY:
			goto retry;
		case CHARGE_NOMEM:
			page = alloc_waiter_dequeue(c, &w);
			if (!page)
				oom_domain(c);
			return page;
		case CHARGE_WAIT:
			break;
		}
		/*
		 * No flusher wakeup of our own: 3.1's and 3.2.41's
		 * __alloc_pages_slowpath only naps (wait_iff_congested,
		 * HZ/50: 3.1 page_alloc.c:2216, 3.2.41 :2247) before
		 * reclaiming again; the wakeup is the
		 * variant's, under its kernel's conditions (3.1/3.2.41
		 * do_try_to_free_pages: total_scanned > 1.5 x
		 * nr_to_reclaim; mainline shrink_inactive_list: a batch all
		 * unqueued dirty), and seed 003 removes it for pageout works
		 * (S003:L579-586).  The next round reclaims again.
		 */
		alloc_wait_event(c, &w, seq, timeout);
		warn_alloc_stall(start, &stall_warn);
retry:
		if (alloc_waiter_page(&w))
			return alloc_waiter_dequeue(c, &w);
	}
}

struct page *alloc_page_nowait(struct uf_cache *c)
{
	struct page *page = page_pool_alloc(c);

	if (__builtin_expect(page != NULL, 1) &&
	    global_page_state(c, NR_FREE_PAGES) <
	    c->pool.nr_outside + c->pool.wmark_low)
		wakeup_kswapd(c);
	return page;
}

struct page *alloc_page(struct uf_cache *c)
{
	struct page *page = alloc_page_nowait(c);

	if (__builtin_expect(page != NULL, 1))
		return page;
	return __alloc_pages_slowpath(c);
}
