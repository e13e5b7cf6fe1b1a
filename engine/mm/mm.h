/* SPDX-License-Identifier: MIT */
/*
 * engine/mm/mm.h - struct page, struct address_space, the frame pool and the
 * memory-wide counters: the parts of include/linux/mm_types.h, mm.h,
 * page-flags.h, pagemap.h and vmstat.h that uflush mirrors.
 *
 * "Memory" is a struct uf_cache: one pool of page frames allocated up front,
 * one set of vm counters (global_page_state) and one set of /proc/sys/vm
 * tunables, shared by the cache's devices.  Functions that the kernel finds
 * through globals find the cache through page->mapping->host->i_sb or
 * bdi->cache.
 *
 * Who implements what:
 *   engine/mm/page_alloc.c   the pool: alloc_page/__free_page, page_address
 *   engine/mm/filemap.c      page cache lookup/insert/delete, lock_page,
 *                         end_page_writeback, wait_on_page_writeback, read
 *                         and write paths
 *   engine/mm/page-writeback.c  set_page_dirty accounting, dirty limits,
 *                         write_cache_pages / do_writepages, throttling
 *   engine/mm/vmscan.c, swap.c  LRU, pagevecs, reclaim, kswapd (vmscan.h)
 */
#ifndef UF_MM_H
#define UF_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/bitops.h"
#include "kernel/bug.h"
#include "lib/errseq.h"
#include "lib/list.h"
#include "lib/radix-tree.h"
#include "kernel/spinlock.h"
#include "kernel/wait.h"

#define PAGE_SHIFT		12
#define PAGE_SIZE		(1UL << PAGE_SHIFT)
#define PAGE_MASK		(~(PAGE_SIZE - 1))
#define PAGE_CACHE_SHIFT	PAGE_SHIFT
#define PAGE_CACHE_SIZE		PAGE_SIZE
#define PAGEVEC_SIZE		14

struct uf_cache;
struct inode;
struct backing_dev_info;

/* page->flags bits (include/linux/page-flags.h order, the ones we use). */
enum pageflags {
	PG_locked,
	PG_error,
	PG_referenced,
	PG_uptodate,
	PG_dirty,
	PG_lru,
	PG_active,
	PG_writeback,
	PG_reclaim,
	PG_owner_priv_1,	/* uflush: locked by uf_page_get(UF_PAGE_WRITE) */
	PG_pin_orphan,		/* uflush: freed while pinned (page_pin.c) */
};

/*
 * One descriptor per frame, in an array parallel to the frames, so that
 * page_address() is arithmetic.  At most 64 bytes (checked at build time in
 * page_alloc.c).  _count: the page cache holds one reference while the page
 * is in a mapping; users (uf_page_get, readers, writeback) take more.  A
 * read-only uf_page_get pins the frame in its thread's pin table instead
 * (page_pin.c), which every path that frees a frame consults.
 */
struct page {
	unsigned long flags;
	int _count;
	unsigned int uf_users;	/* references held through uf_page_get (not
				 * its pins: page_pinned()) */
	struct address_space *mapping;
	unsigned long index;
	struct list_head lru;
	void *private;		/* the write request while under writeback */
	unsigned int page_seq;	/* what the frame holds: page_seq_*() */
	/* the order of the 6.18 folio this page was written as part of
	 * (bdp=mainline; 0 otherwise): the folio is the naturally aligned
	 * 1 << folio_order pages around it (filemap.c, write_begin_folio) */
	unsigned char folio_order;
};

#define PAGEFLAG_FNS(uname, lname)					\
static inline bool Page##uname(const struct page *p)			\
{ return test_bit(PG_##lname, &p->flags); }				\
static inline void SetPage##uname(struct page *p)			\
{ set_bit(PG_##lname, &p->flags); }					\
static inline void ClearPage##uname(struct page *p)			\
{ clear_bit(PG_##lname, &p->flags); }					\
static inline bool TestSetPage##uname(struct page *p)			\
{ return test_and_set_bit(PG_##lname, &p->flags); }			\
static inline bool TestClearPage##uname(struct page *p)			\
{ return test_and_clear_bit(PG_##lname, &p->flags); }

PAGEFLAG_FNS(Locked, locked)
PAGEFLAG_FNS(Error, error)
PAGEFLAG_FNS(Referenced, referenced)
/*
 * PG_uptodate by hand: the kernel orders a page's data before the bit
 * (SetPageUptodate's smp_wmb, PageUptodate's smp_rmb), since a reader that
 * finds the page without its lock (the lockless lookup) reads the data
 * once it sees the bit.  test_bit is an acquire load; this store pairs.
 */
static inline bool PageUptodate(const struct page *p)
{
	return test_bit(PG_uptodate, &p->flags);
}

static inline void SetPageUptodate(struct page *p)
{
	__atomic_fetch_or(&p->flags, BIT(PG_uptodate), __ATOMIC_RELEASE);
}

static inline void ClearPageUptodate(struct page *p)
{
	clear_bit(PG_uptodate, &p->flags);
}
PAGEFLAG_FNS(Dirty, dirty)
PAGEFLAG_FNS(LRU, lru)
PAGEFLAG_FNS(Active, active)
PAGEFLAG_FNS(Writeback, writeback)
PAGEFLAG_FNS(Reclaim, reclaim)
PAGEFLAG_FNS(OwnerPriv1, owner_priv_1)

/*
 * page_seq: a seqcount over what the frame holds, for the reads that copy
 * a cached page without a reference (filemap.c, filemap_read_hit; DESIGN.md
 * section 3).  Odd while the frame's bytes change under the page lock (a
 * writer's copy, truncate's zeroing, a UF_PAGE_WRITE handle's whole life);
 * moved by two when the page leaves its mapping (__delete_from_page_cache:
 * reclaim and truncate), which comes before any reuse of the frame.  A copy
 * that read an even count before and the same count after saw the file's
 * bytes.  Every writer holds PG_locked, so writers never race each other.
 */
static inline unsigned int page_seq_begin(const struct page *p)
{
	return __atomic_load_n(&p->page_seq, __ATOMIC_ACQUIRE);
}

/* True: the frame changed since page_seq_begin() gave @start.  TSan has no
 * fences: an RMW there, as read_seqcount_retry(). */
static inline bool page_seq_retry(const struct page *p, unsigned int start)
{
#if defined(__SANITIZE_THREAD__)
	return __atomic_fetch_add((unsigned int *)&p->page_seq, 0,
				  __ATOMIC_ACQ_REL) != start;
#else
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&p->page_seq, __ATOMIC_RELAXED) != start;
#endif
}

/* Page locked.  The acquire half keeps the frame's stores below it. */
static inline void page_seq_write_begin(struct page *p)
{
	__atomic_fetch_add(&p->page_seq, 1, __ATOMIC_ACQ_REL);
}

static inline void page_seq_write_end(struct page *p)
{
	__atomic_fetch_add(&p->page_seq, 1, __ATOMIC_RELEASE);
}

/* mapping->flags */
enum mapping_flags {
	AS_EIO,
	AS_ENOSPC,
};

/* One per file: the pages of the inode and their writeback state. */
struct address_space {
	struct inode *host;
	struct radix_tree_root page_tree;
	spinlock_t tree_lock;
	seqcount_t tree_seq;		/* page_tree's slots: lockless lookup */
	unsigned long nrpages;
	unsigned long writeback_index;	/* range_cyclic resumes here */
	unsigned long flags;		/* AS_* */
	errseq_t wb_err;		/* write errors, reported by fsync */
	struct backing_dev_info *backing_dev_info;
	unsigned long nr_written;	/* pages whose writeback completed
					 * (uf_file_stats; under tree_lock) */
};

/* The memory-wide counters (enum zone_stat_item / node_stat_item). */
enum vm_stat_item {
	NR_FREE_PAGES,
	NR_FILE_PAGES,
	NR_FILE_DIRTY,
	NR_WRITEBACK,
	NR_UNSTABLE_NFS,	/* always 0: kept so formulas read as the kernel's */
	NR_DIRTIED,
	NR_WRITTEN,
	NR_VM_STAT_ITEMS,
};

/* /proc/sys/vm, per cache. */
struct vm_tunables {
	unsigned long dirty_background_ratio;
	unsigned long dirty_background_bytes;
	unsigned long vm_dirty_ratio;
	unsigned long vm_dirty_bytes;
	unsigned long dirty_writeback_interval;	/* centisecs */
	unsigned long dirty_expire_interval;	/* centisecs */
};

/*
 * Reclaim's event counters (vmstat's pgscan, pgsteal, pgrotated, ...),
 * each atomic; uf_cache_stats() reports them.
 */
struct reclaim_stat {
	unsigned long nr_scanned;
	unsigned long nr_reclaimed;
	unsigned long nr_rotated;		/* PGROTATED */
	unsigned long nr_immediate;		/* NR_VMSCAN_IMMEDIATE */
	unsigned long nr_pageout;		/* pageout() of one page */
	unsigned long nr_pageout_works;		/* seed 003: works queued */
	unsigned long nr_pageout_merged;	/* ... and pages merged */
	unsigned long nr_pageout_nomem;		/* ... reserve empty */
	unsigned long nr_reclaim_wait;		/* seed 003 reclaim_wait() */
	unsigned long reclaim_wait_us;		/* ... total usec_delayed */
	unsigned long reclaim_wait_timeouts;	/* ... full HZ/10 */
	unsigned long nr_congestion_wait;	/* wait_iff_congested slept */
	unsigned long nr_throttle;		/* reclaim_throttle() */
	/* ... per reason (enum vmscan_throttle_state order) */
	unsigned long nr_throttle_reason[4];
	unsigned long nr_flusher_wakeups;	/* wakeup_flusher_threads */
	unsigned long nr_kswapd_runs;
	unsigned long nr_alloc_stall;		/* direct reclaim entered */
	unsigned long nr_oom;			/* allocations failed -ENOMEM */
};

struct task_struct;

/* page_pool.zone_flags bits (3.2 include/linux/mmzone.h zone_flags_t) */
enum zone_flags {
	ZONE_CONGESTED,		/* reclaim met only congested dirty pages */
	/* mainline (6.18 include/linux/mmzone.h): pgdat->flags and the
	 * root lruvec's LRUVEC_NODE_CONGESTED, set by kswapd's shrink_node
	 * and cleared when kswapd goes to sleep balanced */
	PGDAT_DIRTY,		/* the LRU tail is unqueued dirty folios */
	PGDAT_WRITEBACK,	/* the LRU tail is folios under writeback */
	LRUVEC_NODE_CONGESTED,	/* every dirty folio met was PG_reclaim */
};

/* The frame pool: mm/page_alloc.c's free list and the LRU of file pages. */
struct page_pool {
	struct page *pages;		/* descriptors */
	unsigned char *frames;		/* nr * PAGE_SIZE, 2 MiB aligned */
	unsigned long nr;
	/* bit i: frame i follows frame i - 1 in physical memory (NULL: none
	 * known to); page_alloc.c */
	unsigned long *phys_contig;
	bool no_data;			/* frames alias: page_pool_init_nodata */
	spinlock_t lock;		/* free_list */
	struct list_head free_list;
	spinlock_t lru_lock;		/* lru lists (zone->lru_lock) */
	struct list_head inactive_file;
	struct list_head active_file;
	unsigned long nr_inactive, nr_active;
	/*
	 * Allocators that found no free frame, oldest first (under lock).
	 * page_pool_free() hands a frame to the first of them rather than
	 * to the free list, so the frames a waiter's reclaim frees are not
	 * taken by whoever comes along: the free list is empty while
	 * anyone waits.  See page_alloc.c.
	 */
	struct list_head alloc_waiters;
	unsigned long nr_alloc_waiters;	/* atomic: hot paths peek at it */
	unsigned long reclaim_seq;	/* atomic: bumped by pool_reclaim_event */
	wait_queue_head_t free_wait;	/* allocators waiting for a frame */

	/* ---- reclaim (engine/mm/vmscan.c, swap.c) ---- */
	bool lru_batch;			/* per-thread pagevecs (uf_cache_open) */
	/*
	 * A memory domain (memcg): the pool's frames are the domain's limit,
	 * and nr_outside more frames of "the machine" are counted free in
	 * NR_FREE_PAGES (so dirty limits are the machine's, as memcg had no
	 * dirty accounting in 3.2/3.3) but never handed out.
	 */
	unsigned long nr_outside;
	unsigned long wmark_min, wmark_low, wmark_high;	/* free frames */
	struct task_struct *kswapd;
	wait_queue_head_t kswapd_wait;
	bool kswapd_wanted;		/* atomic: wakeup_kswapd() was called */
	wait_queue_head_t reclaim_wqh;	/* seed 003: reclaim_wait() */
	wait_queue_head_t congestion_wqh; /* wait_iff_congested() */
	wait_queue_head_t throttle_wqh;	/* mainline reclaim_throttle() */
	/* zone->flags (ZONE_CONGESTED) and the all_unreclaimable test of
	 * 3.2's balance_pgdat: pages scanned since reclaim last freed one */
	unsigned long zone_flags;
	unsigned long pages_scanned;	/* atomic */
	bool all_unreclaimable;	/* atomic: every reclaimer clears it */
	int kswapd_failures;	/* mainline: balance_pgdat runs freeing none */
	long nr_throttled;		/* atomic: sleepers on throttle_wqh */
	/* mainline reclaim_throttle()'s other reasons (6.18
	 * pgdat->reclaim_wait[]: ISOLATED, NOPROGRESS, CONGESTED) */
	wait_queue_head_t throttle_isolated_wqh;
	wait_queue_head_t throttle_noprogress_wqh;
	wait_queue_head_t throttle_congested_wqh;
	long nr_isolated;		/* atomic: NR_ISOLATED_FILE */
	unsigned long nr_throttled_written; /* atomic: written since first */
	struct reclaim_stat rstat;
};

struct uf_trace;
struct wb_policy;

/* "Memory": see the top of this file. */
struct uf_cache {
	struct page_pool pool;
	long vm_stat[NR_VM_STAT_ITEMS];	/* atomic: global_page_state() */
	struct vm_tunables vm;
	unsigned int max_io_pages;
	spinlock_t bdi_lock;
	struct list_head bdi_list;
	struct wb_policy *policy;	/* resolved at open, policies/ */
	struct uf_trace *trace;
	long write_errors;
	bool closing;
	/* tests (test_batch.c): the per-page paths, not the batches
	 * (end_pages_writeback ...), to show they decide alike */
	bool page_batch_off;
	/* tests: called before (ret NULL) and after each throttle call */
	void (*bdp_probe)(struct address_space *mapping, unsigned long nr_new,
			  unsigned int flags, const int *ret, long pause);
};

static inline void inc_vm_state(struct uf_cache *c, enum vm_stat_item i)
{
	__atomic_add_fetch(&c->vm_stat[i], 1, __ATOMIC_RELAXED);
}

static inline void dec_vm_state(struct uf_cache *c, enum vm_stat_item i)
{
	__atomic_sub_fetch(&c->vm_stat[i], 1, __ATOMIC_RELAXED);
}

static inline void mod_vm_state(struct uf_cache *c, enum vm_stat_item i,
				long delta)
{
	__atomic_add_fetch(&c->vm_stat[i], delta, __ATOMIC_RELAXED);
}

/* Never negative, as the kernel clamps its per-cpu sums. */
static inline unsigned long global_page_state(struct uf_cache *c,
					      enum vm_stat_item i)
{
	long v = __atomic_load_n(&c->vm_stat[i], __ATOMIC_RELAXED);

	return v < 0 ? 0 : (unsigned long)v;
}

/* ---- engine/mm/page_alloc.c ---- */
int page_pool_init(struct page_pool *pool, unsigned long nr);
/* Frames that hold no data (every 2 MiB aliases one shared 2 MiB), for
 * devices that discard it: uf_cache_config.frames = "none". */
int page_pool_init_nodata(struct page_pool *pool, unsigned long nr);
void page_pool_exit(struct page_pool *pool);
/* A memory domain: see page_pool.nr_outside.  -EINVAL if smaller. */
int page_pool_set_machine(struct page_pool *pool, unsigned long machine_pages);
/* A free frame, or NULL if none (the caller reclaims and retries). */
struct page *page_pool_alloc(struct uf_cache *c);
void page_pool_free(struct uf_cache *c, struct page *page);
void page_pool_free_list(struct uf_cache *c, struct list_head *list);

static inline void *page_address(struct uf_cache *c, const struct page *p)
{
	return c->pool.frames + (size_t)(p - c->pool.pages) * PAGE_SIZE;
}

/* @p's frame continues @prev's in physical memory: one bio segment. */
static inline bool page_phys_follows(struct uf_cache *c,
				     const struct page *prev,
				     const struct page *p)
{
	size_t i = (size_t)(p - c->pool.pages);

	return c->pool.phys_contig && p == prev + 1 &&
	       test_bit((int)(i % BITS_PER_LONG),
			&c->pool.phys_contig[i / BITS_PER_LONG]);
}

/*
 * Start fetching a frame the caller is about to copy: its address is
 * arithmetic, so the fetch overlaps the miss on the page descriptor that
 * get_page() takes next instead of following it (a hit on a page not in
 * the CPU cache pays two misses in a row otherwise).
 */
static inline void prefetch_frame(struct uf_cache *c, const struct page *p)
{
	const char *f = page_address(c, p);

	__builtin_prefetch(f);
	__builtin_prefetch(f + 64);
}

/*
 * Per-thread page pins (page_pin.c; DESIGN.md section 7): a read-only
 * uf_page_get publishes the page in its thread's pin table, a line no
 * other thread writes, rather than adding to _count, the line every
 * reader of the page writes.  No frame is freed while a pin names it:
 * reclaim (__remove_mapping) keeps a frozen page that is pinned, and a
 * page whose count falls to 0 while pinned is left to its last pin
 * (page_pin_handoff).  Dekker's pattern, all sequentially consistent:
 * the pinner publishes, then reads _count; a freer drops _count to 0,
 * then scans the pins.
 */
#define PIN_SLOTS		8	/* one line: pages held at once */

#define PIN_TABLES		256	/* threads pinning at once */

struct pin_table {
	struct page *slot[PIN_SLOTS];	/* atomic: owner fills, any clears */
} __attribute__((aligned(64)));

/* A free slot of this thread's table, or NULL: take a reference. */
struct page **page_pin_slot(void);
/* Some pin table names @page (a scan of the tables in use). */
bool page_pinned(const struct page *page);
/* Pin @page, found in its mapping at page_seq @pseq (even): false if it
 * left the mapping, was frozen or changed meanwhile (not pinned). */
bool page_pin(struct uf_cache *c, struct page *page, struct page **slot,
	      unsigned int pseq);
void page_unpin(struct uf_cache *c, struct page **slot, struct page *page);
/* @page's count reached 0: true if pins hold it (its last pin frees it). */
bool page_pin_handoff(struct page *page);
/* mm/filemap.c: the cached, uptodate page at @index pinned in @slot, or
 * NULL (not cached as such: look it up the referenced way; @accessed:
 * that way would mark_page_accessed() it). */
struct page *find_pin_page(struct address_space *mapping,
			   unsigned long index, struct page **slot,
			   bool accessed);

static inline void get_page(struct page *p)
{
	__atomic_add_fetch(&p->_count, 1, __ATOMIC_RELAXED);
}

/* get_page_unless_zero(): a page at count 0 is being freed, or frozen by
 * reclaim (__remove_mapping); leave it. */
static inline bool get_page_unless_zero(struct page *page)
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

static inline int page_count(const struct page *p)
{
	return __atomic_load_n(&p->_count, __ATOMIC_RELAXED);
}

/* Drop a reference; a page whose count reaches 0 goes back to the pool. */
void put_page(struct uf_cache *c, struct page *page);

/*
 * Something may have become reclaimable: a page's count fell to the page
 * cache's own reference, a page was unlocked, its writeback ended.  Wakes
 * the allocators waiting in alloc_page() so that they reclaim again; a
 * relaxed peek when nobody waits.
 */
void pool_reclaim_event(struct page_pool *pool);

/* Clean, unlocked, not under writeback: with a count of 1 (the page
 * cache's), reclaim can free it. */
static inline bool page_reclaimable_flags(const struct page *p)
{
	const unsigned long busy = BIT(PG_locked) | BIT(PG_dirty) |
				   BIT(PG_writeback);

	return !(__atomic_load_n(&p->flags, __ATOMIC_RELAXED) & busy);
}

/*
 * Every frame is held through uf_page_get (page->uf_users): reclaim can
 * free none and nothing but their holders will release one.
 */
bool page_pool_all_pinned(struct page_pool *pool);

#endif /* UF_MM_H */
