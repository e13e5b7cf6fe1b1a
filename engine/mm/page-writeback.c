// SPDX-License-Identifier: MIT
/*
 * engine/mm/page-writeback.c - mm/page-writeback.c of the 3.2 kernel: dirty
 * page accounting, the dirty limits, each device's share of them, write
 * bandwidth estimation, the dirty throttle, and the page walk that writes
 * a mapping's dirty pages (write_cache_pages), with the request-merging
 * writepage of fs/mpage.c.
 *
 * Mirrored as in 3.2: set_page_dirty (__set_page_dirty_nobuffers),
 * account_page_dirtied, clear_page_dirty_for_io, test_set/clear_page_
 * writeback, tag_pages_for_writeback, write_cache_pages (the loop as in
 * 3.2, range_cyclic wrap and writeback_index rules included; bdp=mainline
 * has 6.18's writeback_iter rules),
 * do_writepages, global_dirty_limits, bdi_dirty_limit, bdi_set_min/max_
 * ratio, __bdi_update_bandwidth / bdi_update_write_bandwidth,
 * update_dirty_limit and writeback_chunk_size (which 3.2 keeps in
 * fs/fs-writeback.c).  The dirty throttle, balance_dirty_pages(), comes
 * in three versions chosen by the policy's bdp knob (3.1, 3.2, mainline:
 * mm/dirty-throttle.h), each saying what source it was checked against.
 *
 * Simplified, and why:
 *  - "memory" is a struct uf_cache; dirtyable memory is its free plus file
 *    pages (no highmem, no reserves);
 *  - no PF_LESS_THROTTLE / real-time boost of the limits (no such tasks);
 *  - the filesystem is one ->writepages: mpage-style, each run of
 *    contiguous dirty pages (up to bdi->max_io_pages) becomes one
 *    asynchronous write request; there is no per-page ->writepage (a page
 *    the embedder holds is what it would decline); a file with a block
 *    mapper is written as ext4's delalloc writepages did (wcpcap);
 *  - the per-device proportions count events with an aged denominator
 *    (engine/lib/proportions.h says how that differs from lib/proportions.c).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mm/backing-dev.h"
#include "mm/dirty-throttle.h"
#include "kernel/bug.h"
#include "fs/fs.h"
#include "io/io.h"
#include "kernel/jiffies.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "policies/policy.h"
#include "kernel/printk.h"
#include "lib/proportions.h"
#include "lib/radix-tree.h"
#include "kernel/sched.h"
#include "kernel/sim.h"
#include "lib/slab.h"
#include "policies/policy.h"
#include "trace/events/writeback.h"
#include "uflush.h"
#include "kernel/wait.h"
#include "fs/writeback.h"

/* Sample the write bandwidth at most this often (3.2: 200 ms). */
#define BANDWIDTH_INTERVAL	max_ul((unsigned long)HZ / 5, 1)
/* Writeback chunks stay under 1/DIRTY_SCOPE of the dirty limit. */
#define DIRTY_SCOPE		8
/* 4 MiB: the smallest writeback chunk, in pages. */
#define MIN_WRITEBACK_PAGES	(4096UL >> (PAGE_SHIFT - 10))
/* chunk=fixed: the 3.0 chunk (fs/fs-writeback.c), 4 MiB. */
#define MAX_WRITEBACK_PAGES	1024L
/* tag_pages_for_writeback() drops the tree lock every this many pages. */
#define WRITEBACK_TAG_BATCH	4096
/* The most buffers one vectored write takes (UIO_MAXIOV). */
#define WB_MAX_IOV		1024U
/* printk_ratelimit(): at most this many write-error messages per 5 s. */
#define WB_ERR_BURST		10

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/*
 * The cache's policy knob @member, or false for a cache that has no policy
 * (one built by hand in a unit test): what the engine did before the knob
 * (global threshold, bandwidth chunk, 3.2 accounting, stock gathering).
 */
#define POLICY_KNOB(c, member)	((c)->policy && (c)->policy->member)

static inline unsigned long min_ul(unsigned long a, unsigned long b)
{
	return a < b ? a : b;
}

static inline unsigned long max_ul(unsigned long a, unsigned long b)
{
	return a > b ? a : b;
}

static inline long min_l(long a, long b)
{
	return a < b ? a : b;
}

static inline unsigned int ilog2_ul(unsigned long x)
{
	return x ? (unsigned int)(sizeof(long) * CHAR_BIT - 1) -
		   (unsigned int)__builtin_clzl(x) : 0;
}

static inline unsigned long roundup_pow_of_two(unsigned long x)
{
	return x <= 1 ? 1 : 1UL << (ilog2_ul(x - 1) + 1);
}

/* ------------------------------------------------------------------ */
/* Where the state lives                                               */

/*
 * The 3.2 kernel keeps the proportions' whole (vm_completions), the
 * smoothed dirty limit (global_dirty_limit) and the sum of the devices'
 * min_ratio in globals of this file, and each device's part (completions,
 * min_ratio, max_ratio) in struct backing_dev_info.  uflush has several
 * caches ("memories"), so the globals are per cache.  Neither struct
 * uf_cache nor struct backing_dev_info has room for them yet; until they
 * do, they live here, found by the object's address.  Lookups of the
 * completion path go through a per-thread one-entry cache, so that the
 * registry lock is taken only on a miss.
 */
struct wb_domain {
	struct wb_domain *next;
	const struct uf_cache *cache;
	struct prop_descriptor completions;	/* vm_completions */
	spinlock_t lock;		/* the three below */
	unsigned long dirty_limit;	/* global_dirty_limit; 0: not yet */
	unsigned long update_time;	/* global_update_bandwidth()'s */
	unsigned int bdi_min_ratio;	/* sum of the devices' min_ratio */
	unsigned long ratelimit_pages;	/* 3.2's, from the dirty threshold */
};

struct bdi_share {
	struct bdi_share *next;
	const struct backing_dev_info *bdi;
	struct wb_domain *dom;
	struct prop_local_single completions;
	/* in 1/BDI_RATIO_SCALE percent, as mainline keeps them */
	unsigned int min_ratio;		/* guarded by dom->lock */
	unsigned int max_ratio;
};

static pthread_mutex_t wb_state_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wb_domain *wb_domains;
static struct bdi_share *bdi_shares;
static unsigned long wb_state_gen;	/* bumped when an entry is freed */

static __thread const struct backing_dev_info *share_hit_bdi;
static __thread struct bdi_share *share_hit;
static __thread unsigned long share_hit_gen;

static unsigned int calc_period_shift(struct uf_cache *c);
static unsigned long num_online_cpus(void);
static bool cache_bdp_is(struct uf_cache *c, bdp_ratelimited_fn *fn);
static void vm_dirties_change_shift(unsigned int shift);
static bool bdp_is_3x(const struct uf_cache *c);

/* The cache's domain, created on first use; NULL only if out of memory. */
static struct wb_domain *cache_domain(struct uf_cache *c)
{
	struct wb_domain *d;

	pthread_mutex_lock(&wb_state_lock);
	for (d = wb_domains; d; d = d->next)
		if (d->cache == c)
			goto out;
	d = kzalloc(sizeof(*d));
	if (d) {
		d->cache = c;
		prop_descriptor_init(&d->completions, calc_period_shift(c));
		spin_lock_init(&d->lock);
		d->next = wb_domains;
		wb_domains = d;
	}
out:
	pthread_mutex_unlock(&wb_state_lock);
	return d;
}

static struct bdi_share *__bdi_share_lookup(struct backing_dev_info *bdi,
					    struct wb_domain *dom)
{
	struct bdi_share *s;

	for (s = bdi_shares; s; s = s->next)
		if (s->bdi == bdi)
			return s;
	s = kzalloc(sizeof(*s));
	if (!s)
		return NULL;
	s->bdi = bdi;
	s->dom = dom;
	prop_local_init_single(&s->completions);
	s->max_ratio = 100 * BDI_RATIO_SCALE;
	s->next = bdi_shares;
	bdi_shares = s;
	return s;
}

/* @bdi's part, created on first use; NULL only if out of memory. */
static struct bdi_share *bdi_share(struct backing_dev_info *bdi)
{
	unsigned long gen = __atomic_load_n(&wb_state_gen, __ATOMIC_ACQUIRE);
	struct wb_domain *dom;
	struct bdi_share *s;

	if (share_hit_bdi == bdi && share_hit_gen == gen && share_hit)
		return share_hit;
	dom = cache_domain(bdi->cache);
	if (!dom)
		return NULL;
	pthread_mutex_lock(&wb_state_lock);
	s = __bdi_share_lookup(bdi, dom);
	gen = wb_state_gen;
	pthread_mutex_unlock(&wb_state_lock);
	share_hit_bdi = bdi;
	share_hit = s;
	share_hit_gen = gen;
	return s;
}

void bdi_writeout_exit(struct backing_dev_info *bdi)
{
	struct bdi_share **sp, *s;

	pthread_mutex_lock(&wb_state_lock);
	for (sp = &bdi_shares; (s = *sp); sp = &s->next) {
		if (s->bdi != bdi)
			continue;
		*sp = s->next;
		spin_lock(&s->dom->lock);
		s->dom->bdi_min_ratio -= s->min_ratio;
		spin_unlock(&s->dom->lock);
		kfree(s);
		break;
	}
	__atomic_add_fetch(&wb_state_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&wb_state_lock);
}

void page_writeback_exit(struct uf_cache *c)
{
	struct wb_domain **dp, *d;
	struct bdi_share **sp, *s;

	pthread_mutex_lock(&wb_state_lock);
	for (dp = &wb_domains; (d = *dp); dp = &d->next)
		if (d->cache == c)
			break;
	if (d) {
		*dp = d->next;
		for (sp = &bdi_shares; (s = *sp);) {
			if (s->dom == d) {
				*sp = s->next;
				kfree(s);
			} else {
				sp = &s->next;
			}
		}
		kfree(d);
	}
	__atomic_add_fetch(&wb_state_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&wb_state_lock);
}

/* ------------------------------------------------------------------ */
/* Dirty limits                                                        */

/*
 * What may be dirtied: the frames that are free or hold file pages (the
 * kernel's free + reclaimable pages).  Never 0.
 */
static unsigned long determine_dirtyable_memory(struct uf_cache *c)
{
	return global_page_state(c, NR_FREE_PAGES) +
	       global_page_state(c, NR_FILE_PAGES) + 1;
}

/* global_dirty_limits() without the tracepoint, for frequent callers. */
static void __global_dirty_limits(struct uf_cache *c,
				  unsigned long *pbackground,
				  unsigned long *pdirty)
{
	unsigned long dirty_bytes = READ_ONCE(c->vm.vm_dirty_bytes);
	unsigned long bg_bytes = READ_ONCE(c->vm.dirty_background_bytes);
	unsigned long available = 0;
	unsigned long background, dirty;

	if (!dirty_bytes || !bg_bytes)
		available = determine_dirtyable_memory(c);

	/* as with the sysctls, a *_bytes setting wins over its *_ratio */
	if (dirty_bytes)
		dirty = DIV_ROUND_UP(dirty_bytes, PAGE_SIZE);
	else
		dirty = READ_ONCE(c->vm.vm_dirty_ratio) * available / 100;

	if (bg_bytes)
		background = DIV_ROUND_UP(bg_bytes, PAGE_SIZE);
	else
		background = READ_ONCE(c->vm.dirty_background_ratio) *
			     available / 100;

	/* background writeback must start before writers are throttled */
	if (background >= dirty)
		background = dirty / 2;

	*pbackground = background;
	*pdirty = dirty;
}

/**
 * global_dirty_limits - background-writeback and dirty-throttling thresholds
 * @c: the cache ("memory")
 * @pbackground: out: pages above which the flushers write in the background
 * @pdirty: out: pages (dirty + writeback) above which writers are throttled
 */
void global_dirty_limits(struct uf_cache *c, unsigned long *pbackground,
			 unsigned long *pdirty)
{
	__global_dirty_limits(c, pbackground, pdirty);
	trace_global_dirty_state(c, *pbackground, *pdirty);
}

/*
 * The proportions' period follows the dirty limit, as in 3.2: a period is
 * 2^(shift-1) completions, i.e. one to two times the dirty limit, so that
 * a device's share reacts in about the time it takes to write the dirty
 * pool once.
 */
static unsigned int calc_period_shift(struct uf_cache *c)
{
	unsigned long dirty_bytes = READ_ONCE(c->vm.vm_dirty_bytes);
	unsigned long dirty_total;

	if (dirty_bytes)
		dirty_total = dirty_bytes / PAGE_SIZE;
	else
		dirty_total = READ_ONCE(c->vm.vm_dirty_ratio) *
			      determine_dirtyable_memory(c) / 100;
	return 2 + ilog2_ul(max_ul(dirty_total, 2) - 1);
}

void update_completion_period(struct uf_cache *c)
{
	struct wb_domain *dom = cache_domain(c);

	if (dom)
		prop_change_shift(&dom->completions, calc_period_shift(c));
	vm_dirties_change_shift(calc_period_shift(c));
}

/*
 * After a sysctl change: ratelimit_pages (3.2 and mainline), and the
 * smoothed limit reset to the threshold (mainline does this).  3.1-3.3's
 * writeback_set_ratelimit() sets ratelimit_pages only: global_dirty_limit
 * is left to follow the new threshold by itself (update_dirty_limit).
 */
void writeback_set_ratelimit(struct uf_cache *c)
{
	struct wb_domain *dom = cache_domain(c);
	unsigned long background_thresh, dirty_thresh;

	if (!dom)
		return;
	__global_dirty_limits(c, &background_thresh, &dirty_thresh);
	spin_lock(&dom->lock);
	if (!bdp_is_3x(c))
		dom->dirty_limit = dirty_thresh;
	/* each thread (the kernel: CPU) may overshoot by 1/32 at most */
	__atomic_store_n(&dom->ratelimit_pages,
			 max_ul(dirty_thresh / (num_online_cpus() * 32), 16),
			 __ATOMIC_RELAXED);
	spin_unlock(&dom->lock);
}

void page_writeback_init(struct uf_cache *c)
{
	update_completion_period(c);
	writeback_set_ratelimit(c);
}

unsigned long global_dirty_limit(struct uf_cache *c)
{
	struct wb_domain *dom = cache_domain(c);
	unsigned long background_thresh, dirty_thresh, limit = 0;

	if (dom) {
		spin_lock(&dom->lock);
		limit = dom->dirty_limit;
		spin_unlock(&dom->lock);
	}
	/*
	 * 3.1-3.3: a global left 0 until the first throttle past freerun
	 * runs update_dirty_limit(); writeback_chunk_size() and the
	 * tracepoints' limit= see that 0 (3.2.41 fs-writeback.c:509).
	 */
	if (bdp_is_3x(c))
		return limit;
	if (!limit) {
		/* page_writeback_init() not run yet: the threshold itself */
		__global_dirty_limits(c, &background_thresh, &dirty_thresh);
		limit = dirty_thresh;
	}
	return limit;
}

void bdi_writeout_inc(struct backing_dev_info *bdi)
{
	bdi_writeout_add(bdi, 1);
}

void bdi_writeout_add(struct backing_dev_info *bdi, unsigned long nr)
{
	struct bdi_share *s = bdi_share(bdi);

	add_bdi_stat(bdi, BDI_WRITTEN, (long)nr);
	if (s)
		prop_inc_single_max_each(&s->dom->completions,
					 &s->completions, nr,
					 READ_ONCE(s->max_ratio) /
					 BDI_RATIO_SCALE);
}

void bdi_writeout_fraction(struct backing_dev_info *bdi, long *numerator,
			   long *denominator)
{
	struct bdi_share *s = bdi_share(bdi);
	unsigned long num = 1, den = 1;

	if (s)
		prop_fraction_single(&s->dom->completions, &s->completions,
				     &num, &den);
	*numerator = (long)num;
	*denominator = (long)den;
}

/**
 * bdi_dirty_limit - @bdi's share of a dirty threshold
 * @bdi: the device
 * @dirty: a global threshold in pages (dirty or background)
 *
 * Fast devices complete more writeback and so get a larger share, slow
 * ones a smaller one, so that neither starves nor piles up dirty pages it
 * will take long to write.  min_ratio reserves a part of @dirty for the
 * device, max_ratio caps it.  bdi_dirty_share() is the share before the
 * cap (*@pmax), which 6.18's __wb_calc_thresh() floors first.
 */
static uint64_t bdi_dirty_share(struct backing_dev_info *bdi,
				unsigned long dirty, uint64_t *pmax)
{
	struct bdi_share *s = bdi_share(bdi);
	const uint64_t whole = 100 * BDI_RATIO_SCALE;
	unsigned int min_ratio = 0, max_ratio = 100 * BDI_RATIO_SCALE;
	unsigned int sum_min = 0;
	long numerator, denominator;
	uint64_t bdi_dirty;

	bdi_writeout_fraction(bdi, &numerator, &denominator);
	if (s) {
		spin_lock(&s->dom->lock);
		min_ratio = s->min_ratio;
		max_ratio = s->max_ratio;
		sum_min = s->dom->bdi_min_ratio;
		spin_unlock(&s->dom->lock);
	}

	/* ratios in percent (3.2) give the same result in these units */
	bdi_dirty = (uint64_t)dirty * (whole - sum_min) / whole;
	bdi_dirty *= (uint64_t)numerator;
	bdi_dirty /= (uint64_t)denominator;

	bdi_dirty += (uint64_t)dirty * min_ratio / whole;
	*pmax = (uint64_t)dirty * max_ratio / whole;
	return bdi_dirty;
}

unsigned long bdi_dirty_limit(struct backing_dev_info *bdi,
			      unsigned long dirty)
{
	uint64_t max, bdi_dirty = bdi_dirty_share(bdi, dirty, &max);

	return (unsigned long)(bdi_dirty < max ? bdi_dirty : max);
}

/*
 * 3.1-3.3's bdi_writeout_fraction(): lib/proportions.c's
 * prop_fraction_percpu() gives the device's events over half a period
 * plus this period's events, so before the cache's first completion every
 * device, a lone one too, has 0 / 2^(shift-1): no share, where the
 * shared helper (engine/lib/proportions.h) says 1/1.  After that the
 * exact-denominator deviation of proportions.h applies to both.
 */
static void bdi_writeout_fraction_3x(struct backing_dev_info *bdi,
				     long *numerator, long *denominator)
{
	struct bdi_share *s = bdi_share(bdi);
	unsigned long whole = 0;

	if (s) {
		spin_lock(&s->dom->completions.lock);
		whole = s->dom->completions.events;
		spin_unlock(&s->dom->completions.lock);
	}
	if (!whole) {
		*numerator = 0;
		*denominator = 1;
		return;
	}
	bdi_writeout_fraction(bdi, numerator, denominator);
}

/*
 * bdi_dirty_limit() as 3.1-3.3 have it, with their share before any
 * completion (above); a copy, so that the mainline path's helper
 * (__wb_calc_thresh) stays its own.
 */
static unsigned long bdi_dirty_limit_3x(struct backing_dev_info *bdi,
					unsigned long dirty)
{
	struct bdi_share *s = bdi_share(bdi);
	unsigned int min_ratio = 0, max_ratio = 100 * BDI_RATIO_SCALE;
	unsigned int sum_min = 0;
	const uint64_t whole = 100 * BDI_RATIO_SCALE;
	long numerator, denominator;
	uint64_t bdi_dirty;

	bdi_writeout_fraction_3x(bdi, &numerator, &denominator);
	if (s) {
		spin_lock(&s->dom->lock);
		min_ratio = s->min_ratio;
		max_ratio = s->max_ratio;
		sum_min = s->dom->bdi_min_ratio;
		spin_unlock(&s->dom->lock);
	}
	bdi_dirty = (uint64_t)dirty * (whole - sum_min) / whole;
	bdi_dirty = bdi_dirty * (uint64_t)numerator / (uint64_t)denominator;
	bdi_dirty += (uint64_t)dirty * min_ratio / whole;
	if (bdi_dirty > (uint64_t)dirty * max_ratio / whole)
		bdi_dirty = (uint64_t)dirty * max_ratio / whole;
	return (unsigned long)bdi_dirty;
}

/* min_ratio in 1/BDI_RATIO_SCALE percent (mainline's __bdi_set_min_ratio) */
static int __bdi_set_min_ratio(struct backing_dev_info *bdi,
			       unsigned int min_ratio)
{
	struct bdi_share *s = bdi_share(bdi);
	int ret = 0;

	if (!s)
		return -ENOMEM;
	if (min_ratio > 100 * BDI_RATIO_SCALE)
		return -EINVAL;
	spin_lock(&s->dom->lock);
	if (min_ratio > s->max_ratio) {
		ret = -EINVAL;
	} else {
		/* the reserves of all devices must leave some to share */
		unsigned int others = s->dom->bdi_min_ratio - s->min_ratio;

		if (others + min_ratio < 100 * BDI_RATIO_SCALE) {
			s->dom->bdi_min_ratio = others + min_ratio;
			s->min_ratio = min_ratio;
		} else {
			ret = -EINVAL;
		}
	}
	spin_unlock(&s->dom->lock);
	return ret;
}

static int __bdi_set_max_ratio(struct backing_dev_info *bdi,
			       unsigned int max_ratio)
{
	struct bdi_share *s = bdi_share(bdi);
	int ret = 0;

	if (!s)
		return -ENOMEM;
	if (max_ratio > 100 * BDI_RATIO_SCALE)
		return -EINVAL;
	spin_lock(&s->dom->lock);
	if (s->min_ratio > max_ratio)
		ret = -EINVAL;
	else
		__atomic_store_n(&s->max_ratio, max_ratio, __ATOMIC_RELAXED);
	spin_unlock(&s->dom->lock);
	return ret;
}

int bdi_set_min_ratio(struct backing_dev_info *bdi, unsigned int min_ratio)
{
	if (min_ratio > 100)
		return -EINVAL;
	return __bdi_set_min_ratio(bdi, min_ratio * BDI_RATIO_SCALE);
}

int bdi_set_max_ratio(struct backing_dev_info *bdi, unsigned int max_ratio)
{
	if (max_ratio > 100)
		return -EINVAL;
	return __bdi_set_max_ratio(bdi, max_ratio * BDI_RATIO_SCALE);
}

/*
 * mainline (v6.4, Stefan Roesch): the limits as bytes, converted to a
 * ratio of the dirty threshold at the time of the call; more than the
 * dirtyable memory, or a zero threshold, is -EINVAL.
 */
static long bdi_ratio_from_pages(struct uf_cache *c, unsigned long pages)
{
	unsigned long background_thresh, dirty_thresh;

	__global_dirty_limits(c, &background_thresh, &dirty_thresh);
	if (!dirty_thresh)
		return -EINVAL;
	return (long)((uint64_t)pages * 100 * BDI_RATIO_SCALE / dirty_thresh);
}

static uint64_t bdi_get_bytes(struct uf_cache *c, unsigned int ratio)
{
	unsigned long background_thresh, dirty_thresh;

	__global_dirty_limits(c, &background_thresh, &dirty_thresh);
	return (uint64_t)dirty_thresh * PAGE_SIZE * ratio / BDI_RATIO_SCALE /
	       100;
}

static long bdi_bytes_to_ratio(struct backing_dev_info *bdi, uint64_t bytes)
{
	unsigned long pages = (unsigned long)(bytes >> PAGE_SHIFT);

	if (pages > determine_dirtyable_memory(bdi->cache))
		return -EINVAL;
	return bdi_ratio_from_pages(bdi->cache, pages);
}

int bdi_set_min_bytes(struct backing_dev_info *bdi, uint64_t min_bytes)
{
	long ratio = bdi_bytes_to_ratio(bdi, min_bytes);

	if (ratio < 0)
		return (int)ratio;
	return __bdi_set_min_ratio(bdi, (unsigned int)ratio);
}

int bdi_set_max_bytes(struct backing_dev_info *bdi, uint64_t max_bytes)
{
	long ratio = bdi_bytes_to_ratio(bdi, max_bytes);

	if (ratio < 0)
		return (int)ratio;
	return __bdi_set_max_ratio(bdi, (unsigned int)ratio);
}

uint64_t bdi_get_min_bytes(struct backing_dev_info *bdi)
{
	struct bdi_share *s = bdi_share(bdi);

	return s ? bdi_get_bytes(bdi->cache, READ_ONCE(s->min_ratio)) : 0;
}

uint64_t bdi_get_max_bytes(struct backing_dev_info *bdi)
{
	struct bdi_share *s = bdi_share(bdi);

	return bdi_get_bytes(bdi->cache, s ? READ_ONCE(s->max_ratio) :
					     100 * BDI_RATIO_SCALE);
}

unsigned int bdi_get_min_ratio(struct backing_dev_info *bdi)
{
	struct bdi_share *s = bdi_share(bdi);

	return s ? READ_ONCE(s->min_ratio) / BDI_RATIO_SCALE : 0;
}

unsigned int bdi_get_max_ratio(struct backing_dev_info *bdi)
{
	struct bdi_share *s = bdi_share(bdi);

	return s ? READ_ONCE(s->max_ratio) / BDI_RATIO_SCALE : 100;
}

int bdi_set_strict_limit(struct backing_dev_info *bdi,
			 unsigned int strict_limit)
{
	if (strict_limit > 1)
		return -EINVAL;
	if (strict_limit)
		__atomic_or_fetch(&bdi->capabilities, BDI_CAP_STRICTLIMIT,
				  __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&bdi->capabilities, ~BDI_CAP_STRICTLIMIT,
				   __ATOMIC_RELAXED);
	return 0;
}

/* The device's own background test (seed 001, S001:L58-102). */
static bool bdi_over_bground_thresh(struct backing_dev_info *bdi,
				    unsigned long background_thresh,
				    unsigned long dirty_thresh)
{
	struct uf_cache *c = bdi->cache;

	if (cache_bdp_is(c, balance_dirty_pages_ratelimited_mainline)) {
		/* 6.18 wb_bg_dirty_limits(): __wb_calc_thresh of bg_thresh,
		 * floored against the dirty (not writeback) pages */
		struct dirty_throttle_control dtc = {
			.wb = bdi,
			.dirty = global_page_state(c, NR_FILE_DIRTY),
			.thresh = dirty_thresh,
			.bg_thresh = background_thresh,
		};

		return bdi_stat(bdi, BDI_RECLAIMABLE) >
		       __wb_calc_thresh(&dtc, background_thresh);
	}
	return bdi_stat(bdi, BDI_RECLAIMABLE) >
	       bdi_dirty_limit(bdi, background_thresh);
}

/**
 * over_bground_thresh - should background writeback (start or) go on?
 * @bdi: the device whose flusher asks
 *
 * The global test: dirty (not yet written) pages of the whole cache over
 * the background threshold.  Pages under writeback do not count: the
 * question is whether to put more under writeback.  Under bgthresh=bdi
 * (seed 001, 3.2+) also the device's own test: its reclaimable pages
 * over its share of background_thresh, so that a device whose backlog is
 * large keeps writing while the global count is low (a JBOD, where the
 * other devices' pages keep the global count down).  Both strict.
 */
bool over_bground_thresh(struct backing_dev_info *bdi)
{
	struct uf_cache *c = bdi->cache;
	unsigned long background_thresh, dirty_thresh;

	global_dirty_limits(c, &background_thresh, &dirty_thresh);

	if (global_page_state(c, NR_FILE_DIRTY) +
	    global_page_state(c, NR_UNSTABLE_NFS) > background_thresh)
		return true;

	/* the device's test is asked under both variants, so that the A/B
	 * tool can count where they part (nr_bg_bdi_only); reading the
	 * shares has no effect on them */
	if (!bdi_over_bground_thresh(bdi, background_thresh, dirty_thresh))
		return false;
	__atomic_add_fetch(&bdi->nr_bg_bdi_only, 1, __ATOMIC_RELAXED);
	return POLICY_KNOB(c, bgthresh_bdi);
}

/* ------------------------------------------------------------------ */
/* Write bandwidth                                                     */

/*
 * Follow the dirty threshold up at once, and down slowly (1/32 of the gap
 * per update), never below the dirty pages: writeback_chunk_size() and the
 * throttle want a limit that does not jump down when a tunable does.
 */
static void update_dirty_limit(struct wb_domain *dom, unsigned long thresh,
			       unsigned long dirty)
{
	unsigned long limit = dom->dirty_limit;

	if (limit < thresh) {
		dom->dirty_limit = thresh;
		return;
	}
	thresh = max_ul(thresh, dirty);
	if (limit > thresh)
		dom->dirty_limit = limit - ((limit - thresh) >> 5);
}

static void global_update_bandwidth(struct uf_cache *c, unsigned long thresh,
				    unsigned long dirty, unsigned long now)
{
	struct wb_domain *dom = cache_domain(c);

	if (!dom)
		return;
	spin_lock(&dom->lock);
	if (time_after_eq(now, dom->update_time + BANDWIDTH_INTERVAL)) {
		update_dirty_limit(dom, thresh, dirty);
		dom->update_time = now;
	}
	spin_unlock(&dom->lock);
}

/*
 * The estimate is the pages written in the last elapsed jiffies, averaged
 * with the previous estimate over a period of ~3 s:
 *
 *	bw = (written * HZ + write_bandwidth * (period - elapsed)) / period
 *
 * and avg_write_bandwidth follows it by 1/8 steps, only while the previous
 * estimate lies between the two (this filters out spikes).
 */
static void bdi_update_write_bandwidth(struct backing_dev_info *bdi,
				       unsigned long elapsed,
				       unsigned long written)
{
	const unsigned long period = roundup_pow_of_two(3UL * (unsigned)HZ);
	unsigned long avg = bdi->avg_write_bandwidth;
	unsigned long old = bdi->write_bandwidth;
	uint64_t bw;

	bw = (uint64_t)(written - bdi->written_stamp) * (unsigned)HZ;
	if (elapsed > period) {
		bw /= elapsed;
		avg = (unsigned long)bw;
		goto out;
	}
	bw += (uint64_t)bdi->write_bandwidth * (period - elapsed);
	bw >>= ilog2_ul(period);

	if (avg > old && old >= (unsigned long)bw)
		avg -= (avg - old) >> 3;
	if (avg < old && old <= (unsigned long)bw)
		avg += (old - avg) >> 3;
out:
	bdi->write_bandwidth = (unsigned long)bw;
	/* read by the throttles without the lock */
	WRITE_ONCE(bdi->avg_write_bandwidth, avg);
}

/* Which kernel's dirty ratelimit __bdi_update_bandwidth() updates. */
enum bdp_rate_ctl {
	BDP_RATE_NONE,		/* the flusher, and 3.1 (no rate control) */
	BDP_RATE_32,		/* 3.2.41 bdi_update_dirty_ratelimit */
	BDP_RATE_33,		/* 3.3: + balanced <= write_bw */
};

/*
 * 3.2's __bdi_update_bandwidth(): at most once per BANDWIDTH_INTERVAL,
 * the write bandwidth estimate, and, when called from a throttle
 * (@thresh != 0), the smoothed global dirty limit and, for the IO-less
 * throttle (@rate_ctl: 3.2's or 3.3's; 3.1 had no rate control), the dirty
 * ratelimit.  The flusher calls it with @thresh == 0.  Serialised by
 * wb->list_lock.
 */
static void __bdi_update_bandwidth(struct backing_dev_info *bdi,
				   unsigned long thresh,
				   unsigned long bg_thresh,
				   unsigned long dirty,
				   unsigned long bdi_thresh,
				   unsigned long bdi_dirty,
				   unsigned long start_time,
				   enum bdp_rate_ctl rate_ctl)
{
	unsigned long now = jiffies;
	unsigned long elapsed = now - bdi->bw_time_stamp;
	unsigned long dirtied, written;

	if (elapsed < BANDWIDTH_INTERVAL)
		return;

	dirtied = bdi_stat(bdi, BDI_DIRTIED);
	written = bdi_stat(bdi, BDI_WRITTEN);

	/*
	 * Skip a quiet time when the device was under-used (the flusher idle
	 * for over a second): it would drag the estimate down for nothing.
	 */
	if (elapsed > (unsigned long)HZ &&
	    time_before(bdi->bw_time_stamp, start_time))
		goto snapshot;

	if (thresh) {
		global_update_bandwidth(bdi->cache, thresh, dirty, now);
		if (rate_ctl == BDP_RATE_32)
			bdi_update_dirty_ratelimit(bdi, thresh, bg_thresh,
						   dirty, bdi_thresh,
						   bdi_dirty, dirtied,
						   elapsed);
		else if (rate_ctl == BDP_RATE_33)
			bdi_update_dirty_ratelimit_33(bdi, thresh, bg_thresh,
						      dirty, bdi_thresh,
						      bdi_dirty, dirtied,
						      elapsed);
	}
	bdi_update_write_bandwidth(bdi, elapsed, written);

snapshot:
	bdi->dirtied_stamp = dirtied;
	bdi->written_stamp = written;
	__atomic_store_n(&bdi->bw_time_stamp, now, __ATOMIC_RELAXED);
}

/**
 * bdi_bandwidth_per_pass - does the flusher update the estimate per pass?
 * @bdi: the device
 *
 * 3.x's wb_writeback() does, after each pass (bdi_update_bandwidth());
 * 6.18's does not: do_writepages() updates it (wb_update_bandwidth below;
 * Jan Kara's series of v5.15, commits fee468fdf41c "writeback: reliably
 * update bandwidth estimation" and 45a2966fd641 "writeback: fix bandwidth
 * estimate for spiky workload").  So false under bdp=mainline.
 */
bool bdi_bandwidth_per_pass(struct backing_dev_info *bdi)
{
	return !cache_bdp_is(bdi->cache,
			     balance_dirty_pages_ratelimited_mainline);
}

/**
 * bdi_update_bandwidth - refresh the device's write bandwidth estimate
 * @bdi: the device
 * @start_time: when the caller's writeback work started (jiffies)
 *
 * 3.2's wb_update_bandwidth(): called by wb_writeback() after each pass
 * when bdi_bandwidth_per_pass(), with wb->list_lock held (which
 * serialises the estimate).  At most one update per BANDWIDTH_INTERVAL.
 */
void bdi_update_bandwidth(struct backing_dev_info *bdi,
			  unsigned long start_time)
{
	assert_spin_locked(&bdi->wb.list_lock);
	__bdi_update_bandwidth(bdi, 0, 0, 0, 0, 0, start_time, BDP_RATE_NONE);
}

/*
 * 6.18's wb_update_bandwidth() = __wb_update_bandwidth(gdtc, NULL, false)
 * (1489, 1532): the write bandwidth only, elapsed at least 1 jiffy, and no
 * skipping of an idle time (wb_bandwidth_estimate_start() restarts the
 * stamps instead).
 */
static void wb_update_bandwidth(struct backing_dev_info *wb)
{
	unsigned long now = jiffies;
	unsigned long elapsed, written;

	spin_lock(&wb->wb.list_lock);
	elapsed = max_ul(now - wb->bw_time_stamp, 1);
	written = bdi_stat(wb, BDI_WRITTEN);
	bdi_update_write_bandwidth(wb, elapsed,
				   max_ul(written, wb->written_stamp));
	if (!READ_ONCE(wb->avg_write_bandwidth))
		WRITE_ONCE(wb->avg_write_bandwidth, 1);
	wb->dirtied_stamp = bdi_stat(wb, BDI_DIRTIED);
	wb->written_stamp = written;
	__atomic_store_n(&wb->bw_time_stamp, now, __ATOMIC_RELAXED);
	spin_unlock(&wb->wb.list_lock);
}

/*
 * 6.18's wb_bandwidth_estimate_start() (1542), called as do_writepages()
 * starts: after over a second (WB_BANDWIDTH_IDLE_JIF) with no inode under
 * writeback, restart the stamps so that the idle time does not count as
 * slow writing.  "No inode under writeback" (wb->writeback_inodes == 0) is
 * "no page under writeback" here.
 */
static void wb_bandwidth_estimate_start(struct backing_dev_info *wb)
{
	unsigned long now = jiffies;
	unsigned long elapsed = now - READ_ONCE(wb->bw_time_stamp);

	if (elapsed > (unsigned long)HZ && !bdi_stat(wb, BDI_WRITEBACK)) {
		spin_lock(&wb->wb.list_lock);
		wb->dirtied_stamp = bdi_stat(wb, BDI_DIRTIED);
		wb->written_stamp = bdi_stat(wb, BDI_WRITTEN);
		__atomic_store_n(&wb->bw_time_stamp, now, __ATOMIC_RELAXED);
		spin_unlock(&wb->wb.list_lock);
	}
}

/* 3.1/3.2's static bdi_update_bandwidth(): from the throttle, unlocked. */
static void bdi_update_bandwidth_thresh(struct backing_dev_info *bdi,
					unsigned long thresh,
					unsigned long bg_thresh,
					unsigned long dirty,
					unsigned long bdi_thresh,
					unsigned long bdi_dirty,
					unsigned long start_time,
					enum bdp_rate_ctl rate_ctl)
{
	/* the kernel's unlocked fast path; the stamp is read atomically */
	if (time_is_after_eq_jiffies(__atomic_load_n(&bdi->bw_time_stamp,
						     __ATOMIC_RELAXED) +
				     BANDWIDTH_INTERVAL))
		return;
	spin_lock(&bdi->wb.list_lock);
	__bdi_update_bandwidth(bdi, thresh, bg_thresh, dirty, bdi_thresh,
			       bdi_dirty, start_time, rate_ctl);
	spin_unlock(&bdi->wb.list_lock);
}

/**
 * writeback_chunk_size - pages to write from one inode before moving on
 * @bdi: the device
 * @work: the writeback work
 *
 * The rule of Wu Fengguang's "writeback: scale IO chunk size up to half
 * device bandwidth" (commit 1a12d8bd, merged in 3.2): integrity writeback
 * takes each inode in one go (LONG_MAX, with tagging against livelock);
 * otherwise about half a second of the device's bandwidth, at most
 * 1/DIRTY_SCOPE of the dirty limit and at most the work's pages, then
 *
 *	round_down(pages + MIN_WRITEBACK_PAGES, MIN_WRITEBACK_PAGES)
 *
 * i.e. the next multiple of 4 MiB above pages: never less than 4 MiB, and
 * 4 MiB-aligned so that large files are written in big extents.  The
 * rule is 3.1's (3.1.10 has it); chunk=fixed gives the 3.0 chunk,
 * MAX_WRITEBACK_PAGES (policies/chunk.c).
 */
long writeback_chunk_size(struct backing_dev_info *bdi,
			  struct wb_writeback_work *work)
{
	long pages;

	if (work->sync_mode == WB_SYNC_ALL || work->tagged_writepages)
		return LONG_MAX;
	if (POLICY_KNOB(bdi->cache, chunk_fixed))
		return work->nr_pages < MAX_WRITEBACK_PAGES ?
		       work->nr_pages : MAX_WRITEBACK_PAGES;

	pages = (long)min_ul(bdi->avg_write_bandwidth / 2,
			     global_dirty_limit(bdi->cache) / DIRTY_SCOPE);
	if (pages > work->nr_pages)
		pages = work->nr_pages;
	pages = (long)(((unsigned long)pages + MIN_WRITEBACK_PAGES) &
		       ~(MIN_WRITEBACK_PAGES - 1));
	return pages;
}

/* ------------------------------------------------------------------ */
/* Dirty throttling: what the three kernels share                      */

/*
 * A pause below min_pause is not taken (3.3 and mainline): the time is
 * carried in dirty_paused_when to the next period, or, with no period
 * yet, the task dirties more pages before its next check.
 */
static void bdp_skip_short_pause(struct task_struct *t, long pause,
				 long period, unsigned long now,
				 unsigned long pages_dirtied)
{
	if (pause < -HZ) {
		t->dirty_paused_when = now;
		t->nr_dirtied = 0;
	} else if (period) {
		t->dirty_paused_when += (unsigned long)period;
		t->nr_dirtied = 0;
	} else if ((unsigned long)t->nr_dirtied_pause <= pages_dirtied) {
		t->nr_dirtied_pause += (int)pages_dirtied;
	}
}


/*
 * 3.1-3.3 include/linux/backing-dev.h: bdi_stat_error() is nr_cpu_ids *
 * BDI_STAT_BATCH, BDI_STAT_BATCH = 8 * (1 + ilog2(nr_cpu_ids)).  The
 * counters here are exact, but the throttle also uses the figure as a
 * floor ("give the other devices a pipe": stop looping once the device
 * has no more dirty pages than that), so the 3.x bodies take it with
 * nr_cpu_ids = the machine's configured CPUs, as those kernels would on
 * it.  (The 3.x exact-sum branch for bdi_thresh < 2 * error is a no-op:
 * the counts are always exact.)
 */
static unsigned long bdi_stat_error_3x(struct backing_dev_info *bdi)
{
	static long ids;
	unsigned long n;

	(void)bdi;
	if (!__atomic_load_n(&ids, __ATOMIC_RELAXED)) {
		long v = sysconf(_SC_NPROCESSORS_CONF);

		__atomic_store_n(&ids, v > 0 ? v : 1, __ATOMIC_RELAXED);
	}
	n = (unsigned long)__atomic_load_n(&ids, __ATOMIC_RELAXED);
	return n * 8 * (1 + ilog2_ul(n));
}

unsigned long dirty_freerun_ceiling(unsigned long thresh,
				    unsigned long bg_thresh)
{
	return (thresh + bg_thresh) / 2;
}

unsigned long hard_dirty_limit(struct uf_cache *c, unsigned long thresh)
{
	return max_ul(thresh, global_dirty_limit(c));
}

/*
 * 3.2 and mainline: the pages a task may dirty before it looks again, in
 * the freerun area: about the square root of the distance to the limit.
 */
unsigned long dirty_poll_interval(unsigned long dirty, unsigned long thresh)
{
	if (thresh > dirty)
		return 1UL << (ilog2_ul(thresh - dirty) >> 1);
	return 1;
}

static inline unsigned long clamp_ul(unsigned long v, unsigned long lo,
				     unsigned long hi)
{
	return min_ul(max_ul(v, lo), hi);
}

static unsigned long num_online_cpus(void)
{
	static long n;

	if (!n) {
		long v = sysconf(_SC_NPROCESSORS_ONLN);

		__atomic_store_n(&n, v > 0 ? v : 1, __ATOMIC_RELAXED);
	}
	return (unsigned long)n;
}

/* The task as fork() leaves it for the throttle (kernel/fork.c). */
static struct task_struct *bdp_task(void)
{
	struct task_struct *t = current;

	if (!t->bdp_ready) {
		t->nr_dirtied = 0;
		t->nr_dirtied_pause = 128 >> (PAGE_SHIFT - 10);
		t->bdp_ready = true;
	}
	return t;
}

/* Writers that may not sleep here: the cache is going away. */
static inline bool bdp_fatal(struct uf_cache *c)
{
	return READ_ONCE(c->closing);
}

/* 3.2 / mainline ratelimit_pages: dirty_thresh / (cpus * 32), >= 16. */
static unsigned long ratelimit_pages_of(struct backing_dev_info *bdi)
{
	/* per page: through the per-thread lookup cache, no lock */
	struct bdi_share *s = bdi_share(bdi);
	unsigned long n = s ? READ_ONCE(s->dom->ratelimit_pages) : 0;

	return n ? n : 32;	/* the static initial value */
}

/* ------------------------------------------------------------------ */
/* 3.1: the dirtier writes pages itself                                */

/*
 * Checked against Linux 3.1.10 mm/page-writeback.c (and fs/fs-writeback.c
 * writeback_inodes_wb, include/trace/events/writeback.h).
 *
 * Each task's share of recent page dirtyings (vm_dirties, tsk->dirties)
 * lowers its limit by up to 1/8, so that heavy dirtiers are throttled
 * before light ones.  The kernel keeps one vm_dirties for the machine;
 * here it is one per process too (a thread's share is of all caches'
 * dirtyings), its period following the last cache opened.
 */
#define TASK_LIMIT_FRACTION	8

static struct prop_descriptor vm_dirties;
static pthread_once_t vm_dirties_once = PTHREAD_ONCE_INIT;
static __thread struct prop_local_single task_dirties;
static __thread bool task_dirties_ready;

#define VM_DIRTIES_SHIFT	12

/*
 * A world (kernel/sim.c) starts from a fresh process's vm_dirties: the
 * dirtyings of earlier worlds would otherwise sit in the denominator of
 * task_dirty_limit() and move the 3.1 throttle of this one (issue 19).
 */
static void vm_dirties_fresh(void)
{
	prop_descriptor_reset(&vm_dirties, VM_DIRTIES_SHIFT);
}

static void vm_dirties_init(void)
{
	prop_descriptor_init(&vm_dirties, VM_DIRTIES_SHIFT);
	uf_sim_register_reset(vm_dirties_fresh);
}

static struct prop_local_single *task_dirties_of(void)
{
	pthread_once(&vm_dirties_once, vm_dirties_init);
	if (!task_dirties_ready) {
		prop_local_init_single(&task_dirties);
		task_dirties_ready = true;
	}
	return &task_dirties;
}

/* 3.1's task_dirty_inc(current), from account_page_dirtied(). */
static void task_dirty_inc(void)
{
	prop_inc_single_max(&vm_dirties, task_dirties_of(), 1, 100);
}

void task_dirty_reset(void)
{
	task_dirties_ready = false;
}

static void vm_dirties_change_shift(unsigned int shift)
{
	pthread_once(&vm_dirties_once, vm_dirties_init);
	prop_change_shift(&vm_dirties, shift);
}

unsigned long task_dirty_limit(unsigned long bdi_dirty)
{
	unsigned long num, den, dirty = bdi_dirty;
	uint64_t inv = bdi_dirty / TASK_LIMIT_FRACTION;

	prop_fraction_single(&vm_dirties, task_dirties_of(), &num, &den);
	inv *= num;
	inv /= den;
	dirty -= (unsigned long)inv;
	return max_ul(dirty, bdi_dirty / 2);
}

/* The lowest limit any task can have. */
unsigned long task_min_dirty_limit(unsigned long bdi_dirty)
{
	return bdi_dirty - bdi_dirty / TASK_LIMIT_FRACTION;
}

/* 3.1's ratelimit_pages: pool / (cpus * 32), in [16, 4 MiB]. */
static unsigned long ratelimit_pages_31(struct uf_cache *c)
{
	unsigned long n = c->pool.nr / (num_online_cpus() * 32);

	if (n < 16)
		n = 16;
	if (n * PAGE_SIZE > 4096 * 1024)
		n = (4096 * 1024) / PAGE_SIZE;
	return n;
}

/* How many pages a throttled dirtier writes: 1.5 times what it dirtied. */
long sync_writeback_pages(struct uf_cache *c, unsigned long dirtied)
{
	if (dirtied < ratelimit_pages_31(c))
		dirtied = ratelimit_pages_31(c);
	return (long)(dirtied + dirtied / 2);
}

static int balance_dirty_pages_31(struct address_space *mapping,
				  unsigned long write_chunk,
				  unsigned int flags, long *pausep)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct uf_cache *c = bdi->cache;
	unsigned long nr_reclaimable, bdi_nr_reclaimable;
	unsigned long nr_dirty, bdi_dirty;
	unsigned long background_thresh, dirty_thresh, bdi_thresh;
	unsigned long task_bdi_thresh, min_task_bdi_thresh;
	unsigned long pages_written = 0;
	unsigned long pause = 1;
	bool dirty_exceeded = false, clear_dirty_exceeded = true;
	unsigned long start_time = jiffies;
	int ret = 0;

	for (;;) {
		nr_reclaimable = global_page_state(c, NR_FILE_DIRTY) +
				 global_page_state(c, NR_UNSTABLE_NFS);
		nr_dirty = nr_reclaimable + global_page_state(c, NR_WRITEBACK);

		global_dirty_limits(c, &background_thresh, &dirty_thresh);

		/* below the midpoint the flusher is left to catch up */
		if (nr_dirty <= (background_thresh + dirty_thresh) / 2)
			break;

		bdi_thresh = bdi_dirty_limit_3x(bdi, dirty_thresh);
		min_task_bdi_thresh = task_min_dirty_limit(bdi_thresh);
		task_bdi_thresh = task_dirty_limit(bdi_thresh);

		bdi_nr_reclaimable = bdi_stat(bdi, BDI_RECLAIMABLE);
		bdi_dirty = bdi_nr_reclaimable + bdi_stat(bdi, BDI_WRITEBACK);

		dirty_exceeded = bdi_dirty > task_bdi_thresh ||
				 nr_dirty > dirty_thresh;
		clear_dirty_exceeded = bdi_dirty <= min_task_bdi_thresh &&
				       nr_dirty <= dirty_thresh;
		if (!dirty_exceeded)
			break;

		/* uflush: the writeback and sleep below would block */
		if (flags & BDP_ASYNC) {
			*pausep = (long)pause;
			ret = -EAGAIN;
			break;
		}

		if (!READ_ONCE(bdi->dirty_exceeded))
			WRITE_ONCE(bdi->dirty_exceeded, 1);

		bdi_update_bandwidth_thresh(bdi, dirty_thresh, 0, nr_dirty,
					    bdi_thresh, bdi_dirty, start_time,
					    BDP_RATE_NONE);

		trace_balance_dirty_start(bdi);
		/* over its share: write some of the device's pages itself */
		if (bdi_nr_reclaimable > task_bdi_thresh) {
			long wrote = writeback_inodes_wb(&bdi->wb,
							 (long)write_chunk);

			pages_written += (unsigned long)wrote;
			__atomic_add_fetch(&bdi->bdp_written, wrote,
					   __ATOMIC_RELAXED);
			trace_balance_dirty_written(bdi, pages_written);
			if (pages_written >= write_chunk)
				break;	/* done its duty */
		}
		__set_current_state(TASK_UNINTERRUPTIBLE);
		io_schedule_timeout((long)pause);
		trace_balance_dirty_wait(bdi);

		/*
		 * In the max-pause area (under the hard limit and near its
		 * own share) a task need not sleep for more than 200 ms.
		 */
		dirty_thresh = hard_dirty_limit(c, dirty_thresh);
		if (nr_dirty < dirty_thresh &&
		    bdi_dirty < (task_bdi_thresh + bdi_thresh) / 2 &&
		    time_after(jiffies, start_time + MAX_PAUSE))
			break;

		/* 1, 2, 4 ... up to the old 100 ms nap */
		pause <<= 1;
		if (pause > (unsigned long)HZ / 10)
			pause = (unsigned long)HZ / 10;
		if (bdp_fatal(c))
			break;
	}

	if (flags & BDP_PEEK)
		return ret;
	/* only when no task can be over the limit */
	if (clear_dirty_exceeded && READ_ONCE(bdi->dirty_exceeded))
		WRITE_ONCE(bdi->dirty_exceeded, 0);

	if (writeback_in_progress(bdi))
		return ret;
	/* (no laptop mode) start background writeback at its threshold */
	if (nr_reclaimable > background_thresh)
		bdi_start_background_writeback(bdi);
	return ret;
}

/*
 * 3.1's balance_dirty_pages_ratelimited_nr(), one page at a time: the
 * per-CPU bdp_ratelimits counter is per thread here; the limit drops to 8
 * pages while the device is over its limit.
 */
int balance_dirty_pages_ratelimited_31(struct address_space *mapping,
				       unsigned long nr_new,
				       unsigned int flags, long *pause)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct task_struct *t = bdp_task();
	unsigned long ratelimit = ratelimit_pages_31(bdi->cache);
	unsigned long p;

	if (READ_ONCE(bdi->dirty_exceeded))
		ratelimit = 8;

	if (flags & BDP_PEEK) {
		p = (unsigned long)t->bdp_ratelimits + nr_new;
		if (p < ratelimit)
			return 0;
		return balance_dirty_pages_31(mapping,
				(unsigned long)sync_writeback_pages(bdi->cache,
								    p),
				flags, pause);
	}
	p = (unsigned long)++t->bdp_ratelimits;
	if (p >= ratelimit) {
		ratelimit = (unsigned long)sync_writeback_pages(bdi->cache, p);
		t->bdp_ratelimits = 0;
		return balance_dirty_pages_31(mapping, ratelimit, flags, pause);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* 3.2: IO-less throttling, position and rate control                  */

/*
 * Checked against Linux 3.2.41 mm/page-writeback.c (bdi_position_ratio,
 * bdi_update_dirty_ratelimit, __bdi_update_bandwidth, dirty_poll_interval,
 * bdi_max_pause, balance_dirty_pages, balance_dirty_pages_ratelimited_nr)
 * and include/trace/events/writeback.h.  3.2 has no think time
 * (dirty_paused_when), no min_pause and no DIRTY_POLL_THRESH: those are
 * 3.3+.
 *
 * pos_ratio (fixed point, 1.0 == 1024) says how far the dirty pages are
 * from where they should be: the global control line is the cubic
 *
 *	f(dirty) = 1 + ((setpoint - dirty) / (limit - setpoint))^3
 *
 * with setpoint midway between the freerun ceiling and the limit
 * (f = 2 at freerun, 1 at setpoint, 0 at the limit); the device's line
 * scales it by the device's distance from its own setpoint (slope
 * 1 / (8 * write_bw) for a single device, never below 1/4), and the
 * reserve area scales it up when the device is nearly out of dirty pages.
 */
unsigned long bdi_position_ratio(struct backing_dev_info *bdi,
				 unsigned long thresh, unsigned long bg_thresh,
				 unsigned long dirty, unsigned long bdi_thresh,
				 unsigned long bdi_dirty)
{
	unsigned long write_bw = READ_ONCE(bdi->avg_write_bandwidth);
	unsigned long freerun = dirty_freerun_ceiling(thresh, bg_thresh);
	unsigned long limit = hard_dirty_limit(bdi->cache, thresh);
	unsigned long x_intercept, setpoint, bdi_setpoint, span;
	long long pos_ratio;
	long x;

	if (dirty >= limit)
		return 0;

	setpoint = (freerun + limit) / 2;
	/* (setpoint - dirty) wraps when negative; as s64 it is right */
	x = (long)((int64_t)((setpoint - dirty) << RATELIMIT_CALC_SHIFT) /
		   (int32_t)(limit - setpoint + 1));
	pos_ratio = x;
	pos_ratio = pos_ratio * x >> RATELIMIT_CALC_SHIFT;
	pos_ratio = pos_ratio * x >> RATELIMIT_CALC_SHIFT;
	pos_ratio += 1 << RATELIMIT_CALC_SHIFT;

	if (bdi_thresh > thresh)
		bdi_thresh = thresh;
	/* an idle device keeps a workable threshold to ramp up from */
	bdi_thresh = max_ul(bdi_thresh, (limit - dirty) / 8);
	/* bdi_setpoint = setpoint * bdi_thresh / thresh, in 16-bit fixed */
	x = (long)(((uint64_t)bdi_thresh << 16) / (thresh + 1));
	bdi_setpoint = (unsigned long)(setpoint * (uint64_t)x >> 16);
	/* 8 * write_bw for one device, moving to bdi_thresh for JBODs */
	span = (unsigned long)((thresh - bdi_thresh + 8 * write_bw) *
			       (uint64_t)x >> 16);
	x_intercept = bdi_setpoint + span;

	if (bdi_dirty < x_intercept - span / 4)
		pos_ratio = (long long)((uint64_t)pos_ratio *
					(x_intercept - bdi_dirty) /
					(x_intercept - bdi_setpoint + 1));
	else
		pos_ratio /= 4;

	/* reserve area: keep the device from running dry */
	x_intercept = bdi_thresh / 2;
	if (bdi_dirty < x_intercept) {
		if (bdi_dirty > x_intercept / 8)
			pos_ratio = (long long)((uint64_t)pos_ratio *
						x_intercept / bdi_dirty);
		else
			pos_ratio *= 8;
	}
	return (unsigned long)pos_ratio;
}

/*
 * Every 200 ms: the balanced rate is what would have made the device's
 * dirty rate match its write bandwidth,
 *
 *	balanced = task_ratelimit * write_bw / dirty_rate   (~ write_bw / N)
 *
 * and dirty_ratelimit steps towards it only when the position error agrees
 * in direction, by 1/8 of the distance to the nearest of (previous
 * balanced, balanced, task_ratelimit), less when close.
 */
static void __bdi_update_dirty_ratelimit(struct backing_dev_info *bdi,
					 unsigned long thresh,
					 unsigned long bg_thresh,
					 unsigned long dirty,
					 unsigned long bdi_thresh,
					 unsigned long bdi_dirty,
					 unsigned long dirtied,
					 unsigned long elapsed, bool cap)
{
	unsigned long freerun = dirty_freerun_ceiling(thresh, bg_thresh);
	unsigned long limit = hard_dirty_limit(bdi->cache, thresh);
	unsigned long setpoint = (freerun + limit) / 2;
	unsigned long write_bw = READ_ONCE(bdi->avg_write_bandwidth);
	unsigned long dirty_ratelimit = READ_ONCE(bdi->dirty_ratelimit);
	unsigned long dirty_rate, task_ratelimit, balanced_dirty_ratelimit;
	unsigned long pos_ratio, step, x;

	dirty_rate = (dirtied - bdi->dirtied_stamp) * (unsigned long)HZ /
		     elapsed;

	pos_ratio = bdi_position_ratio(bdi, thresh, bg_thresh, dirty,
				       bdi_thresh, bdi_dirty);
	task_ratelimit = (unsigned long)((uint64_t)dirty_ratelimit *
					 pos_ratio >> RATELIMIT_CALC_SHIFT);
	task_ratelimit++;	/* ramps up from tiny values */

	balanced_dirty_ratelimit = (unsigned long)((uint64_t)task_ratelimit *
						   write_bw /
						   (dirty_rate | 1));
	/* 3.3 (not 3.2.41): the balanced rate is about write_bw / N */
	if (cap && balanced_dirty_ratelimit > write_bw)
		balanced_dirty_ratelimit = write_bw;

	step = 0;
	if (dirty < setpoint) {
		x = min_ul(bdi->balanced_dirty_ratelimit,
			   min_ul(balanced_dirty_ratelimit, task_ratelimit));
		if (dirty_ratelimit < x)
			step = x - dirty_ratelimit;
	} else {
		x = max_ul(bdi->balanced_dirty_ratelimit,
			   max_ul(balanced_dirty_ratelimit, task_ratelimit));
		if (dirty_ratelimit > x)
			step = dirty_ratelimit - x;
	}

	/*
	 * Slow down near the target, and never more than 1/8 per step.  A
	 * shift of a word or more is undefined in C; 3.2 on x86-64 shifted
	 * by its low 6 bits, which is what this does (mainline: step = 0).
	 */
	step >>= (dirty_ratelimit / (2 * step + 1)) &
		 (sizeof(long) * CHAR_BIT - 1);
	step = (step + 7) / 8;

	if (dirty_ratelimit < balanced_dirty_ratelimit)
		dirty_ratelimit += step;
	else
		dirty_ratelimit -= step;

	__atomic_store_n(&bdi->dirty_ratelimit, max_ul(dirty_ratelimit, 1),
			 __ATOMIC_RELAXED);
	bdi->balanced_dirty_ratelimit = balanced_dirty_ratelimit;

	trace_bdi_dirty_ratelimit(bdi, dirty_rate, task_ratelimit, false);
}

void bdi_update_dirty_ratelimit(struct backing_dev_info *bdi,
				unsigned long thresh, unsigned long bg_thresh,
				unsigned long dirty, unsigned long bdi_thresh,
				unsigned long bdi_dirty, unsigned long dirtied,
				unsigned long elapsed)
{
	__bdi_update_dirty_ratelimit(bdi, thresh, bg_thresh, dirty,
				     bdi_thresh, bdi_dirty, dirtied, elapsed,
				     false);
}

/* 3.3 bdi_update_dirty_ratelimit(): the balanced rate capped at write_bw. */
void bdi_update_dirty_ratelimit_33(struct backing_dev_info *bdi,
				   unsigned long thresh,
				   unsigned long bg_thresh,
				   unsigned long dirty,
				   unsigned long bdi_thresh,
				   unsigned long bdi_dirty,
				   unsigned long dirtied,
				   unsigned long elapsed)
{
	__bdi_update_dirty_ratelimit(bdi, thresh, bg_thresh, dirty,
				     bdi_thresh, bdi_dirty, dirtied, elapsed,
				     true);
}

/*
 * 3.2's longest pause: 20 ms for one dirtier, N * 20 ms for 2^N, at most
 * what the device's dirty pages last (/8), in [4, MAX_PAUSE] jiffies.
 */
unsigned long bdi_max_pause(struct backing_dev_info *bdi,
			    unsigned long bdi_dirty)
{
	unsigned long bw = READ_ONCE(bdi->avg_write_bandwidth);
	unsigned long hi = ilog2_ul(bw);
	unsigned long lo = ilog2_ul(READ_ONCE(bdi->dirty_ratelimit));
	unsigned long t;

	t = (unsigned long)HZ / 50;
	if (hi > lo)
		t += (hi - lo) * (20 * (unsigned long)HZ) / 1024;
	t = min_ul(t, bdi_dirty * (unsigned long)HZ / (8 * bw + 1));
	return clamp_ul(t, 4, MAX_PAUSE);
}

static int balance_dirty_pages_32(struct address_space *mapping,
				  unsigned long pages_dirtied,
				  unsigned int flags, long *pausep)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct uf_cache *c = bdi->cache;
	struct task_struct *t = bdp_task();
	unsigned long nr_reclaimable, nr_dirty, bdi_dirty, freerun;
	unsigned long background_thresh, dirty_thresh, bdi_thresh;
	long pause = 0, max_pause = 0;
	bool dirty_exceeded = false;
	unsigned long task_ratelimit, dirty_ratelimit = 0, pos_ratio;
	unsigned long start_time = jiffies;
	int ret = 0;

	for (;;) {
		nr_reclaimable = global_page_state(c, NR_FILE_DIRTY) +
				 global_page_state(c, NR_UNSTABLE_NFS);
		nr_dirty = nr_reclaimable + global_page_state(c, NR_WRITEBACK);

		global_dirty_limits(c, &background_thresh, &dirty_thresh);

		/* throttle only when background writeback cannot keep up */
		freerun = dirty_freerun_ceiling(dirty_thresh,
						background_thresh);
		if (nr_dirty <= freerun)
			break;

		if (!writeback_in_progress(bdi))
			bdi_start_background_writeback(bdi);

		/* not a hard limit: bdi_position_ratio() handles excess */
		bdi_thresh = bdi_dirty_limit_3x(bdi, dirty_thresh);
		bdi_dirty = bdi_stat(bdi, BDI_RECLAIMABLE) +
			    bdi_stat(bdi, BDI_WRITEBACK);

		dirty_exceeded = bdi_dirty > bdi_thresh ||
				 nr_dirty > dirty_thresh;
		if (dirty_exceeded && !READ_ONCE(bdi->dirty_exceeded) &&
		    !(flags & BDP_PEEK))
			WRITE_ONCE(bdi->dirty_exceeded, 1);

		bdi_update_bandwidth_thresh(bdi, dirty_thresh,
					    background_thresh, nr_dirty,
					    bdi_thresh, bdi_dirty, start_time,
					    BDP_RATE_32);

		max_pause = (long)bdi_max_pause(bdi, bdi_dirty);

		dirty_ratelimit = READ_ONCE(bdi->dirty_ratelimit);
		pos_ratio = bdi_position_ratio(bdi, dirty_thresh,
					       background_thresh, nr_dirty,
					       bdi_thresh, bdi_dirty);
		task_ratelimit = (unsigned long)((uint64_t)dirty_ratelimit *
						 pos_ratio >>
						 RATELIMIT_CALC_SHIFT);
		if (task_ratelimit == 0) {
			pause = max_pause;
			goto pause;
		}
		pause = (long)((unsigned long)HZ * pages_dirtied /
			       task_ratelimit);
		if (pause <= 0) {
			trace_balance_dirty_pages(bdi, dirty_thresh,
					background_thresh, nr_dirty, bdi_thresh,
					bdi_dirty, dirty_ratelimit,
					task_ratelimit, pages_dirtied, 0, pause,
					start_time, BDP_TRACE_32);
			pause = 1;	/* keep nr_dirtied_pause below */
			break;
		}
		pause = pause < max_pause ? pause : max_pause;

pause:
		trace_balance_dirty_pages(bdi, dirty_thresh, background_thresh,
					  nr_dirty, bdi_thresh, bdi_dirty,
					  dirty_ratelimit, task_ratelimit,
					  pages_dirtied, 0, pause, start_time,
					  BDP_TRACE_32);
		/* uflush: the kernel's BDP_ASYNC (mainline) in 3.2's loop */
		if (flags & BDP_ASYNC) {
			*pausep = pause;
			return -EAGAIN;
		}
		__set_current_state(TASK_KILLABLE);
		io_schedule_timeout(pause);

		/* normally dirty < thresh now; also 1000 dd on a USB stick */
		if (task_ratelimit)
			break;
		/* a stuck device over the limit: let others' writers on */
		if (bdi_dirty <= bdi_stat_error_3x(bdi))
			break;
		if (bdp_fatal(c))
			break;
	}

	if (flags & BDP_PEEK)
		return ret;
	if (!dirty_exceeded && READ_ONCE(bdi->dirty_exceeded))
		WRITE_ONCE(bdi->dirty_exceeded, 0);

	t->nr_dirtied = 0;
	if (pause == 0) {	/* freerun */
		t->nr_dirtied_pause = (int)dirty_poll_interval(nr_dirty,
							       dirty_thresh);
	} else if (pause <= max_pause / 4 &&
		   pages_dirtied >= (unsigned long)t->nr_dirtied_pause) {
		t->nr_dirtied_pause = (int)clamp_ul(
			dirty_ratelimit * (unsigned long)(max_pause / 2) /
				(unsigned long)HZ,
			pages_dirtied + pages_dirtied / 8, pages_dirtied * 4);
	} else if (pause >= max_pause) {
		t->nr_dirtied_pause = 1 | (int)clamp_ul(
			dirty_ratelimit * (unsigned long)(max_pause / 2) /
				(unsigned long)HZ,
			pages_dirtied / 4, pages_dirtied - pages_dirtied / 8);
	}

	if (writeback_in_progress(bdi))
		return ret;
	if (nr_reclaimable > background_thresh)
		bdi_start_background_writeback(bdi);
	return ret;
}

/*
 * 3.2's balance_dirty_pages_ratelimited_nr(): a task calls in after
 * nr_dirtied_pause pages (8 while the device is over its limit); the
 * per-CPU bdp_ratelimits backstop (per thread here) catches many tasks
 * starting at once with a large initial nr_dirtied_pause.
 */
int balance_dirty_pages_ratelimited_32(struct address_space *mapping,
				       unsigned long nr_new,
				       unsigned int flags, long *pause)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct task_struct *t = bdp_task();
	unsigned long rl_pages = ratelimit_pages_of(bdi);
	unsigned long ratelimit = (unsigned long)t->nr_dirtied_pause;
	unsigned long nr;

	if (READ_ONCE(bdi->dirty_exceeded))
		ratelimit = min_ul(ratelimit, 32 >> (PAGE_SHIFT - 10));

	if (flags & BDP_PEEK) {
		nr = (unsigned long)t->nr_dirtied + nr_new;
		if (nr < ratelimit &&
		    (unsigned long)t->bdp_ratelimits + nr_new < rl_pages)
			return 0;
		return balance_dirty_pages_32(mapping, nr, flags, pause);
	}

	/* 3.2.41 balance_dirty_pages_ratelimited_nr:1245 charges every
	 * page written, a rewrite of a dirty page too (later kernels
	 * charge it in account_page_dirtied, as mainline does here) */
	t->nr_dirtied++;
	if ((unsigned long)t->nr_dirtied >= ratelimit) {
		t->bdp_ratelimits = 0;
	} else if ((unsigned long)++t->bdp_ratelimits >= rl_pages) {
		t->bdp_ratelimits = 0;
		ratelimit = 0;
	}
	if ((unsigned long)t->nr_dirtied >= ratelimit)
		return balance_dirty_pages_32(mapping,
					      (unsigned long)t->nr_dirtied,
					      flags, pause);
	return 0;
}

/* ------------------------------------------------------------------ */
/* 3.3: 3.2 plus think time, min pause, dirty_throttle_leaks           */

/*
 * Checked against Linux 3.3.0 mm/page-writeback.c (GitHub
 * SleepyRabbit/arm-linux-3.3 @6378de370416, linux-3.3-fa/; its Makefile
 * says 3.3.0, and beside the vendor's CONFIG_SATA_AHCI_PLATFORM sysctl
 * defaults it has 3.3's known changes: dirty_paused_when, bdi_min_pause,
 * DIRTY_POLL_THRESH, dirty_throttle_leaks, account_page_redirty),
 * kernel/exit.c, kernel/fork.c and include/trace/events/writeback.h.
 * What differs from 3.2.41:
 *  - the balanced rate is capped at write_bw (bdi_update_dirty_ratelimit);
 *  - bdi_max_pause() is "as long as the device's dirty pages last",
 *    bdi_min_pause() sets the next nr_dirtied_pause;
 *  - think time: the time since dirty_paused_when is taken off the pause;
 *  - dirty_exceeded needs both the device and the global count over;
 *  - nr_dirtied is charged in account_page_dirtied, once per page that
 *    turns dirty, and an exiting task leaves its unpaid count in
 *    dirty_throttle_leaks for the next dirtier to pick up;
 *  - the tracepoint has period= and think=.
 */

/* 3.3's bdi_max_pause(): the time the device's dirty pages last, <= 200 ms. */
unsigned long bdi_max_pause_33(struct backing_dev_info *bdi,
			       unsigned long bdi_dirty)
{
	unsigned long bw = READ_ONCE(bdi->avg_write_bandwidth);
	unsigned long t;

	/* 8 is the safety ratio: HZ/8 rounded up to a power of two */
	t = bdi_dirty / (1 + bw / roundup_pow_of_two(1 + (unsigned long)HZ /
						     8));
	t++;
	return min_ul(t, MAX_PAUSE);
}

/*
 * 3.3's bdi_min_pause(): the shortest pause worth sleeping (10 ms for one
 * dirtier, N * 10 ms for 2^N) and, in *nr_dirtied_pause, the pages to
 * dirty before the next call: at least DIRTY_POLL_THRESH unless that would
 * overshoot max_pause.  A copy of the mainline path's wb_min_pause(),
 * so that a change there does not move 3.3.
 */
long bdi_min_pause_33(struct backing_dev_info *bdi, long max_pause,
		      unsigned long task_ratelimit,
		      unsigned long dirty_ratelimit, int *nr_dirtied_pause)
{
	long hi = (long)ilog2_ul(READ_ONCE(bdi->avg_write_bandwidth));
	long lo = (long)ilog2_ul(READ_ONCE(bdi->dirty_ratelimit));
	unsigned long hz_pow2 = roundup_pow_of_two((unsigned long)HZ);
	long t, pause;
	int pages;

	t = max_ul((unsigned long)HZ / 100, 1);
	if (hi > lo)
		t += (hi - lo) * (10 * HZ) / 1024;

	/* keep nr_dirtied_pause as stable as dirty_ratelimit */
	t = min_l(t, 1 + max_pause / 2);
	pages = (int)(dirty_ratelimit * (unsigned long)t / hz_pow2);

	/* tiny nr_dirtied_pause hurts IO (fio-mmap-randwrite-64k) */
	if (pages < DIRTY_POLL_THRESH) {
		t = max_pause;
		pages = (int)(dirty_ratelimit * (unsigned long)t / hz_pow2);
		if (pages > DIRTY_POLL_THRESH) {
			pages = DIRTY_POLL_THRESH;
			t = (long)((unsigned long)HZ * DIRTY_POLL_THRESH /
				   dirty_ratelimit);
		}
	}

	/* the next pause should not exceed max_pause either */
	pause = (long)((unsigned long)HZ * (unsigned long)pages /
		       (task_ratelimit + 1));
	if (pause > max_pause) {
		t = max_pause;
		pages = (int)(task_ratelimit * (unsigned long)t / hz_pow2);
	}

	*nr_dirtied_pause = pages;
	return pages >= DIRTY_POLL_THRESH ? 1 + t / 2 : t;
}

/*
 * 3.3's dirty_throttle_leaks: the pages an exiting task dirtied and was
 * not throttled for (kernel/exit.c do_exit adds tsk->nr_dirtied), picked
 * up by the next dirtier's balance_dirty_pages_ratelimited_nr(), so that
 * many short-lived writers do not escape the throttle.  The kernel's
 * counter is per CPU; here it is one for the process, and "exit" is the
 * thread's end (a pthread key destructor), armed when a thread first
 * dirties under bdp=3.3.
 */
static int dirty_throttle_leaks;
static pthread_key_t leak_key;
static pthread_once_t leak_key_once = PTHREAD_ONCE_INIT;
static bool leak_key_ok;
static __thread bool leak_armed;

static void dirty_throttle_leak(void *data)
{
	struct task_struct *t = data;

	if (t->nr_dirtied)
		__atomic_add_fetch(&dirty_throttle_leaks, t->nr_dirtied,
				   __ATOMIC_RELAXED);
	put_task_struct(t);
}

/*
 * A world (kernel/sim.c) starts with no leaks: what the threads of
 * earlier worlds (all joined by then) or of the real clock leaked would
 * otherwise be picked up by this world's first dirtier (issue 19).
 */
static void dirty_throttle_leaks_fresh(void)
{
	__atomic_store_n(&dirty_throttle_leaks, 0, __ATOMIC_RELAXED);
}

/*
 * In a world, a task's do_exit is at its end in the world: the key's
 * destructor would run after its turn, while the next task may be
 * taking leaks (issue 19).  Its task is kept for the destructor.
 */
static void dirty_throttle_leak_sim_exit(void)
{
	struct task_struct *t;

	if (!leak_armed || !leak_key_ok)
		return;
	t = pthread_getspecific(leak_key);
	if (t && t->nr_dirtied) {
		__atomic_add_fetch(&dirty_throttle_leaks, t->nr_dirtied,
				   __ATOMIC_RELAXED);
		t->nr_dirtied = 0;
	}
}

static void leak_key_init(void)
{
	leak_key_ok = !pthread_key_create(&leak_key, dirty_throttle_leak);
	uf_sim_register_reset(dirty_throttle_leaks_fresh);
	uf_sim_register_exit(dirty_throttle_leak_sim_exit);
}

/* bdp_task(), plus the thread's exit hook of 3.3. */
static struct task_struct *bdp_task_33(void)
{
	struct task_struct *t = bdp_task();

	if (!leak_armed) {
		leak_armed = true;
		pthread_once(&leak_key_once, leak_key_init);
		/* the task may be put by its own key's destructor first */
		get_task_struct(t);
		if (!leak_key_ok || pthread_setspecific(leak_key, t))
			put_task_struct(t);
	}
	return t;
}

/* Take up to @room leaked pages (0 if none). */
static int take_dirty_throttle_leaks(int room)
{
	int old = __atomic_load_n(&dirty_throttle_leaks, __ATOMIC_RELAXED);
	int take;

	do {
		if (old <= 0 || room <= 0)
			return 0;
		take = old < room ? old : room;
	} while (!__atomic_compare_exchange_n(&dirty_throttle_leaks, &old,
					      old - take, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return take;
}

int dirty_throttle_leaks_take_all(void)
{
	return take_dirty_throttle_leaks(INT_MAX);
}

int dirty_throttle_leaks_read(void)
{
	return __atomic_load_n(&dirty_throttle_leaks, __ATOMIC_RELAXED);
}

static void trace_bdp_33(struct backing_dev_info *bdi, unsigned long thresh,
			 unsigned long bg_thresh, unsigned long dirty,
			 unsigned long bdi_thresh, unsigned long bdi_dirty,
			 unsigned long dirty_ratelimit,
			 unsigned long task_ratelimit,
			 unsigned long pages_dirtied, long period, long pause,
			 unsigned long start_time)
{
	trace_balance_dirty_pages(bdi, thresh, bg_thresh, dirty, bdi_thresh,
				  bdi_dirty, dirty_ratelimit, task_ratelimit,
				  pages_dirtied, period, pause, start_time,
				  BDP_TRACE_33);
}

/*
 * 3.3's balance_dirty_pages().  BDP_PEEK and BDP_ASYNC as in the 3.2
 * body: a peek changes no task state, an async caller gets -EAGAIN and
 * the pause where the kernel would sleep.
 */
static int balance_dirty_pages_33(struct address_space *mapping,
				  unsigned long pages_dirtied,
				  unsigned int flags, long *pausep)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct uf_cache *c = bdi->cache;
	struct task_struct *t = bdp_task_33();
	unsigned long nr_reclaimable, nr_dirty, bdi_dirty, freerun;
	unsigned long background_thresh, dirty_thresh, bdi_thresh;
	unsigned long task_ratelimit, dirty_ratelimit, pos_ratio;
	long period, pause, max_pause, min_pause;
	int nr_dirtied_pause;
	bool dirty_exceeded = false;
	bool peek = flags & BDP_PEEK;
	unsigned long start_time = jiffies;

	for (;;) {
		unsigned long now = jiffies;

		nr_reclaimable = global_page_state(c, NR_FILE_DIRTY) +
				 global_page_state(c, NR_UNSTABLE_NFS);
		nr_dirty = nr_reclaimable + global_page_state(c, NR_WRITEBACK);

		global_dirty_limits(c, &background_thresh, &dirty_thresh);

		freerun = dirty_freerun_ceiling(dirty_thresh,
						background_thresh);
		if (nr_dirty <= freerun) {
			if (!peek) {
				t->dirty_paused_when = now;
				t->nr_dirtied = 0;
				t->nr_dirtied_pause = (int)dirty_poll_interval(
						nr_dirty, dirty_thresh);
			}
			break;
		}

		if (!writeback_in_progress(bdi))
			bdi_start_background_writeback(bdi);

		bdi_thresh = bdi_dirty_limit_3x(bdi, dirty_thresh);
		bdi_dirty = bdi_stat(bdi, BDI_RECLAIMABLE) +
			    bdi_stat(bdi, BDI_WRITEBACK);

		/* 3.3: over its share *and* over the global threshold */
		dirty_exceeded = bdi_dirty > bdi_thresh &&
				 nr_dirty > dirty_thresh;
		if (dirty_exceeded && !READ_ONCE(bdi->dirty_exceeded) && !peek)
			WRITE_ONCE(bdi->dirty_exceeded, 1);

		bdi_update_bandwidth_thresh(bdi, dirty_thresh,
					    background_thresh, nr_dirty,
					    bdi_thresh, bdi_dirty, start_time,
					    BDP_RATE_33);

		dirty_ratelimit = READ_ONCE(bdi->dirty_ratelimit);
		pos_ratio = bdi_position_ratio(bdi, dirty_thresh,
					       background_thresh, nr_dirty,
					       bdi_thresh, bdi_dirty);
		task_ratelimit = (unsigned long)((uint64_t)dirty_ratelimit *
						 pos_ratio >>
						 RATELIMIT_CALC_SHIFT);
		max_pause = (long)bdi_max_pause_33(bdi, bdi_dirty);
		min_pause = bdi_min_pause_33(bdi, max_pause, task_ratelimit,
					     dirty_ratelimit,
					     &nr_dirtied_pause);

		if (task_ratelimit == 0) {
			period = max_pause;
			pause = max_pause;
			goto pause;
		}
		period = (long)((unsigned long)HZ * pages_dirtied /
				task_ratelimit);
		pause = period;
		if (t->dirty_paused_when)
			pause -= (long)(now - t->dirty_paused_when);
		/*
		 * Think time under a second (ext3/4 and xfs block dirtiers
		 * that long at times) is paid back in later periods by moving
		 * the virtual time; a longer one resets, as for a light
		 * dirtier.
		 */
		if (pause < min_pause) {
			trace_bdp_33(bdi, dirty_thresh, background_thresh,
				     nr_dirty, bdi_thresh, bdi_dirty,
				     dirty_ratelimit, task_ratelimit,
				     pages_dirtied, period,
				     pause < 0 ? pause : 0, start_time);
			if (peek)
				break;
			bdp_skip_short_pause(t, pause, period, now,
					     pages_dirtied);
			break;
		}
		if (pause > max_pause) {
			/* for an occasional drop of task_ratelimit */
			now += (unsigned long)min_l(pause - max_pause,
						    max_pause);
			pause = max_pause;
		}

pause:
		trace_bdp_33(bdi, dirty_thresh, background_thresh, nr_dirty,
			     bdi_thresh, bdi_dirty, dirty_ratelimit,
			     task_ratelimit, pages_dirtied, period, pause,
			     start_time);
		if (flags & BDP_ASYNC) {
			*pausep = pause;
			return -EAGAIN;
		}
		__set_current_state(TASK_KILLABLE);
		io_schedule_timeout(pause);

		t->dirty_paused_when = now + (unsigned long)pause;
		t->nr_dirtied = 0;
		t->nr_dirtied_pause = nr_dirtied_pause;

		/* normally dirty < thresh now; also 1000 dd on a USB stick */
		if (task_ratelimit)
			break;
		/* a stuck device over the limit: let others' writers on */
		if (bdi_dirty <= bdi_stat_error_3x(bdi))
			break;
		if (bdp_fatal(c))
			break;
	}

	if (peek)
		return 0;
	if (!dirty_exceeded && READ_ONCE(bdi->dirty_exceeded))
		WRITE_ONCE(bdi->dirty_exceeded, 0);

	if (writeback_in_progress(bdi))
		return 0;
	/* (no laptop mode) start background writeback at its threshold */
	if (nr_reclaimable > background_thresh)
		bdi_start_background_writeback(bdi);
	return 0;
}

/*
 * 3.3's balance_dirty_pages_ratelimited_nr(): nr_dirtied and the per-CPU
 * (here per-thread) bdp_ratelimits were charged by account_page_dirtied();
 * here the task may pick up pages leaked by exited tasks before it looks.
 */
int balance_dirty_pages_ratelimited_33(struct address_space *mapping,
				       unsigned long nr_new,
				       unsigned int flags, long *pause)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct task_struct *t = bdp_task_33();
	unsigned long rl_pages = ratelimit_pages_of(bdi);
	int ratelimit = t->nr_dirtied_pause;

	if (READ_ONCE(bdi->dirty_exceeded))
		ratelimit = ratelimit < (32 >> (PAGE_SHIFT - 10)) ?
			    ratelimit : 32 >> (PAGE_SHIFT - 10);

	if (flags & BDP_PEEK) {
		unsigned long nr = (unsigned long)t->nr_dirtied + nr_new;
		int leaks = dirty_throttle_leaks_read();

		/* what the call would pick up, without taking it */
		if (leaks > 0 && nr < (unsigned long)ratelimit)
			nr += min_ul((unsigned long)leaks,
				     (unsigned long)ratelimit - nr);
		if (nr < (unsigned long)ratelimit &&
		    (unsigned long)t->bdp_ratelimits + nr_new < rl_pages)
			return 0;
		return balance_dirty_pages_33(mapping, nr, flags, pause);
	}

	if (t->nr_dirtied >= ratelimit) {
		t->bdp_ratelimits = 0;
	} else if ((unsigned long)t->bdp_ratelimits >= rl_pages) {
		t->bdp_ratelimits = 0;
		ratelimit = 0;
	}
	if (t->nr_dirtied < ratelimit)
		t->nr_dirtied += take_dirty_throttle_leaks(ratelimit -
							   t->nr_dirtied);
	if (t->nr_dirtied >= ratelimit)
		return balance_dirty_pages_33(mapping,
					      (unsigned long)t->nr_dirtied,
					      flags, pause);
	return 0;
}

/* ------------------------------------------------------------------ */
/* mainline: the wb_ form                                              */

/*
 * Checked against torvalds/linux mm/page-writeback.c @8e9d5ead
 * (pos_ratio_polynom, wb_position_ratio, wb_update_dirty_ratelimit,
 * __wb_update_bandwidth, wb_max_pause, wb_min_pause, wb_dirty_limits,
 * balance_dirty_pages, balance_dirty_pages_ratelimited_flags), the
 * min_bytes/max_bytes patches of v6.4 (Stefan Roesch) and
 * include/trace/events/writeback.h @79fe08ee; then line by line against
 * Linux 6.18.35 (GitHub leftymods/linux-6.18.y @40a9e9f43d44, issue 17:
 * docs/linux-6.18.md lists what still differs).  There is one wb per device
 * here (no cgroup writeback, so no memcg domain, no foreign-inode flush and
 * no wb->dirty_sleep), no PF_LOCAL_THROTTLE tasks and no laptop mode;
 * dirty_throttle_leaks are 3.3's (one counter for the process, a thread's
 * end for the task's exit).
 */
long long pos_ratio_polynom(unsigned long setpoint, unsigned long dirty,
			    unsigned long limit)
{
	long long pos_ratio;
	long x;

	x = (long)(((int64_t)setpoint - (int64_t)dirty) *
		   (1 << RATELIMIT_CALC_SHIFT) /
		   (int64_t)((limit - setpoint) | 1));
	pos_ratio = x;
	pos_ratio = pos_ratio * x >> RATELIMIT_CALC_SHIFT;
	pos_ratio = pos_ratio * x >> RATELIMIT_CALC_SHIFT;
	pos_ratio += 1 << RATELIMIT_CALC_SHIFT;

	if (pos_ratio < 0)
		return 0;
	if (pos_ratio > 2LL << RATELIMIT_CALC_SHIFT)
		return 2LL << RATELIMIT_CALC_SHIFT;
	return pos_ratio;
}

/*
 * As 3.2's bdi_position_ratio(), with two changes: pos_ratio_polynom()
 * clamps the global line to [0, 2] and divides by (limit - setpoint) | 1;
 * and a strictlimit device (BDI_CAP_STRICTLIMIT, FUSE's) is throttled on
 * its own counters: a second cubic over [wb_bg_thresh, wb_thresh], the
 * smaller of the two lines winning.  As in 6.18 (wb_position_ratio, 1071):
 * no special case for a strictlimit device with under 8 dirty pages and no
 * (limit - dirty) / 8 floor of wb_thresh here: both went when
 * __wb_calc_thresh() got its floor.  The limit is kept in the dtc for the
 * tracepoint.
 */
void wb_position_ratio(struct dirty_throttle_control *dtc)
{
	struct backing_dev_info *wb = dtc->wb;
	unsigned long write_bw = READ_ONCE(wb->avg_write_bandwidth);
	unsigned long freerun = dirty_freerun_ceiling(dtc->thresh,
						      dtc->bg_thresh);
	unsigned long limit = hard_dirty_limit(wb->cache, dtc->thresh);
	unsigned long wb_thresh = dtc->wb_thresh;
	unsigned long x_intercept, setpoint, wb_setpoint, span;
	long long pos_ratio;
	long x;

	dtc->pos_ratio = 0;
	dtc->limit = limit;
	if (dtc->dirty >= limit)
		return;

	setpoint = (freerun + limit) / 2;
	pos_ratio = pos_ratio_polynom(setpoint, dtc->dirty, limit);

	if (READ_ONCE(wb->capabilities) & BDI_CAP_STRICTLIMIT) {
		long long wb_pos_ratio;

		if (dtc->wb_dirty >= wb_thresh)
			return;
		wb_setpoint = dirty_freerun_ceiling(wb_thresh,
						    dtc->wb_bg_thresh);
		if (wb_setpoint == 0 || wb_setpoint == wb_thresh)
			return;
		wb_pos_ratio = pos_ratio_polynom(wb_setpoint, dtc->wb_dirty,
						 wb_thresh);
		dtc->pos_ratio = (unsigned long)(pos_ratio < wb_pos_ratio ?
						 pos_ratio : wb_pos_ratio);
		return;
	}

	if (wb_thresh > dtc->thresh)
		wb_thresh = dtc->thresh;
	x = (long)(((uint64_t)wb_thresh << 16) / (dtc->thresh | 1));
	wb_setpoint = (unsigned long)(setpoint * (uint64_t)x >> 16);
	span = (unsigned long)((dtc->thresh - wb_thresh + 8 * write_bw) *
			       (uint64_t)x >> 16);
	x_intercept = wb_setpoint + span;

	if (dtc->wb_dirty < x_intercept - span / 4)
		pos_ratio = (long long)((uint64_t)pos_ratio *
					(x_intercept - dtc->wb_dirty) /
					((x_intercept - wb_setpoint) | 1));
	else
		pos_ratio /= 4;

	x_intercept = wb_thresh / 2;
	if (dtc->wb_dirty < x_intercept) {
		if (dtc->wb_dirty > x_intercept / 8)
			pos_ratio = (long long)((uint64_t)pos_ratio *
						x_intercept / dtc->wb_dirty);
		else
			pos_ratio *= 8;
	}
	dtc->pos_ratio = (unsigned long)pos_ratio;
}

/*
 * As 3.2's bdi_update_dirty_ratelimit(), but: the balanced rate is capped
 * at write_bw; a strictlimit device steers by its own dirty pages and
 * setpoint, (wb_thresh + wb_bg_thresh) / 2 whatever its dirty count (6.18,
 * wb_update_dirty_ratelimit 1338: no wb_dirty + 1 setpoint under 8 pages);
 * and the step is DIV_ROUND_UP(step >> shift, 8), 0 when the shift would
 * be a whole word.  pos_ratio comes from the dtc.
 */
void wb_update_dirty_ratelimit(struct dirty_throttle_control *dtc,
			       unsigned long dirtied, unsigned long elapsed)
{
	struct backing_dev_info *wb = dtc->wb;
	unsigned long dirty = dtc->dirty;
	unsigned long freerun = dirty_freerun_ceiling(dtc->thresh,
						      dtc->bg_thresh);
	unsigned long limit = hard_dirty_limit(wb->cache, dtc->thresh);
	unsigned long setpoint = (freerun + limit) / 2;
	unsigned long write_bw = READ_ONCE(wb->avg_write_bandwidth);
	unsigned long dirty_ratelimit = READ_ONCE(wb->dirty_ratelimit);
	unsigned long dirty_rate, task_ratelimit, balanced_dirty_ratelimit;
	unsigned long step, x, shift;

	dirty_rate = (dirtied - wb->dirtied_stamp) * (unsigned long)HZ /
		     elapsed;
	task_ratelimit = (unsigned long)((uint64_t)dirty_ratelimit *
					 dtc->pos_ratio >>
					 RATELIMIT_CALC_SHIFT);
	task_ratelimit++;

	balanced_dirty_ratelimit = (unsigned long)((uint64_t)task_ratelimit *
						   write_bw /
						   (dirty_rate | 1));
	if (balanced_dirty_ratelimit > write_bw)
		balanced_dirty_ratelimit = write_bw;

	step = 0;
	if (READ_ONCE(wb->capabilities) & BDI_CAP_STRICTLIMIT) {
		dirty = dtc->wb_dirty;
		setpoint = (dtc->wb_thresh + dtc->wb_bg_thresh) / 2;
	}

	if (dirty < setpoint) {
		x = min_ul(wb->balanced_dirty_ratelimit,
			   min_ul(balanced_dirty_ratelimit, task_ratelimit));
		if (dirty_ratelimit < x)
			step = x - dirty_ratelimit;
	} else {
		x = max_ul(wb->balanced_dirty_ratelimit,
			   max_ul(balanced_dirty_ratelimit, task_ratelimit));
		if (dirty_ratelimit > x)
			step = dirty_ratelimit - x;
	}

	shift = dirty_ratelimit / (2 * step + 1);
	if (shift < sizeof(long) * CHAR_BIT)
		step = DIV_ROUND_UP(step >> shift, 8);
	else
		step = 0;

	if (dirty_ratelimit < balanced_dirty_ratelimit)
		dirty_ratelimit += step;
	else
		dirty_ratelimit -= step;

	__atomic_store_n(&wb->dirty_ratelimit, max_ul(dirty_ratelimit, 1),
			 __ATOMIC_RELAXED);
	wb->balanced_dirty_ratelimit = balanced_dirty_ratelimit;

	trace_bdi_dirty_ratelimit(wb, dirty_rate, task_ratelimit, true);
}

/* mainline's __wb_update_bandwidth(gdtc, NULL, true), from the throttle. */
static void __wb_update_bandwidth(struct dirty_throttle_control *gdtc)
{
	struct backing_dev_info *wb = gdtc->wb;
	unsigned long now = jiffies;
	unsigned long elapsed, dirtied, written;

	spin_lock(&wb->wb.list_lock);
	/* at least 1: the unlocked check above may race */
	elapsed = max_ul(now - wb->bw_time_stamp, 1);
	dirtied = bdi_stat(wb, BDI_DIRTIED);
	written = bdi_stat(wb, BDI_WRITTEN);

	global_update_bandwidth(wb->cache, gdtc->thresh, gdtc->dirty, now);
	wb_update_dirty_ratelimit(gdtc, dirtied, elapsed);
	/* mainline also clamps written to the stamp and avg to >= 1 */
	bdi_update_write_bandwidth(wb, elapsed,
				   max_ul(written, wb->written_stamp));
	if (!READ_ONCE(wb->avg_write_bandwidth))
		WRITE_ONCE(wb->avg_write_bandwidth, 1);

	wb->dirtied_stamp = dirtied;
	wb->written_stamp = written;
	__atomic_store_n(&wb->bw_time_stamp, now, __ATOMIC_RELAXED);
	spin_unlock(&wb->wb.list_lock);
}

/* Pause at most as long as the device's dirty pages last, <= 200 ms. */
unsigned long wb_max_pause(struct backing_dev_info *wb,
			   unsigned long wb_dirty)
{
	unsigned long bw = READ_ONCE(wb->avg_write_bandwidth);
	unsigned long t;

	t = wb_dirty / (1 + bw / roundup_pow_of_two(1 + (unsigned long)HZ /
						    8));
	t++;
	return min_ul(t, MAX_PAUSE);
}

/*
 * The shortest pause worth sleeping (10 ms for one dirtier, N * 10 ms for
 * 2^N), and the pages to dirty before the next call, at least
 * DIRTY_POLL_THRESH unless that would overshoot max_pause.
 */
long wb_min_pause(struct backing_dev_info *wb, long max_pause,
		  unsigned long task_ratelimit, unsigned long dirty_ratelimit,
		  int *nr_dirtied_pause)
{
	long hi = (long)ilog2_ul(READ_ONCE(wb->avg_write_bandwidth));
	long lo = (long)ilog2_ul(READ_ONCE(wb->dirty_ratelimit));
	long t, pause;
	int pages;

	t = max_ul((unsigned long)HZ / 100, 1);
	if (hi > lo)
		t += (hi - lo) * (10 * HZ) / 1024;

	t = t < 1 + max_pause / 2 ? t : 1 + max_pause / 2;
	pages = (int)(dirty_ratelimit * (unsigned long)t /
		      roundup_pow_of_two((unsigned long)HZ));

	if (pages < DIRTY_POLL_THRESH) {
		t = max_pause;
		pages = (int)(dirty_ratelimit * (unsigned long)t /
			      roundup_pow_of_two((unsigned long)HZ));
		if (pages > DIRTY_POLL_THRESH) {
			pages = DIRTY_POLL_THRESH;
			t = (long)((unsigned long)HZ * DIRTY_POLL_THRESH /
				   dirty_ratelimit);
		}
	}

	pause = (long)((unsigned long)HZ * (unsigned long)pages /
		       (task_ratelimit + 1));
	if (pause > max_pause) {
		t = max_pause;
		pages = (int)(task_ratelimit * (unsigned long)t /
			      roundup_pow_of_two((unsigned long)HZ));
	}

	*nr_dirtied_pause = pages;
	return pages >= DIRTY_POLL_THRESH ? 1 + t / 2 : t;
}

/*
 * 6.18's wb_stat_error() (include/linux/backing-dev.h): what the per-CPU
 * counters may be off by, nr_cpu_ids * WB_STAT_BATCH with WB_STAT_BATCH =
 * 8 * (1 + ilog2(nr_cpu_ids)).  uflush's counters are exact, but 6.18
 * also uses it as a size: a throttled writer whose device has no more
 * dirty pages than this stops pausing (balance_dirty_pages), so mainline
 * keeps the kernel's value.  nr_cpu_ids: the configured CPUs.
 */
unsigned long wb_stat_error(void)
{
	static unsigned long err;

	if (!READ_ONCE(err)) {
		long n = sysconf(_SC_NPROCESSORS_CONF);
		unsigned long cpus = n > 0 ? (unsigned long)n : 1;

		WRITE_ONCE(err, cpus * 8 * (1 + ilog2_ul(cpus)));
	}
	return READ_ONCE(err);
}

/*
 * 6.18's __wb_calc_thresh(dtc, thresh) (900): the device's share of
 * @thresh as bdi_dirty_limit() computes it (BDI_RATIO_SCALE units, the
 * others' min_ratio taken off, its own added), then, below the limit, at
 * least (thresh - dirty) / 8 -- / 100 for a strictlimit device -- so that
 * a device idle for long (share near 0) is not stopped at its first
 * writes, and only then capped by max_ratio.
 */
unsigned long __wb_calc_thresh(struct dirty_throttle_control *dtc,
			       unsigned long thresh)
{
	struct backing_dev_info *wb = dtc->wb;
	uint64_t wb_max, wb_thresh = bdi_dirty_share(wb, thresh, &wb_max);

	if (thresh > dtc->dirty) {
		unsigned long div = READ_ONCE(wb->capabilities) &
				    BDI_CAP_STRICTLIMIT ? 100 : 8;
		uint64_t floor = (thresh - dtc->dirty) / div;

		if (wb_thresh < floor)
			wb_thresh = floor;
	}
	if (wb_thresh > wb_max)
		wb_thresh = wb_max;
	return (unsigned long)wb_thresh;
}

/*
 * 6.18's wb_dirty_limits() (1668).  It sums the per-CPU counters exactly
 * (wb_stat_sum) when wb_thresh < 2 * wb_stat_error(); uflush's counters
 * are exact either way, so both branches read the same.
 */
void wb_dirty_limits(struct dirty_throttle_control *dtc)
{
	struct backing_dev_info *wb = dtc->wb;

	dtc->wb_thresh = __wb_calc_thresh(dtc, dtc->thresh);
	dtc->wb_bg_thresh = dtc->thresh ?
		(unsigned long)((uint64_t)dtc->wb_thresh * dtc->bg_thresh /
				dtc->thresh) : 0;
	dtc->wb_dirty = bdi_stat(wb, BDI_RECLAIMABLE) +
			bdi_stat(wb, BDI_WRITEBACK);
}

/* 6.18 prints the dtc's limit (hard_dirty_limit), not the smoothed one */
static void trace_bdp_mainline(struct dirty_throttle_control *sdtc,
			       unsigned long dirty_ratelimit,
			       unsigned long task_ratelimit,
			       unsigned long pages_dirtied, long period,
			       long pause, unsigned long start_time)
{
	const struct bdp_trace e = {
		.thresh = sdtc->thresh, .bg_thresh = sdtc->bg_thresh,
		.dirty = sdtc->dirty, .bdi_thresh = sdtc->wb_thresh,
		.bdi_dirty = sdtc->wb_dirty,
		.dirty_ratelimit = dirty_ratelimit,
		.task_ratelimit = task_ratelimit, .dirtied = pages_dirtied,
		.period = period, .pause = pause, .start_time = start_time,
		.kind = BDP_TRACE_MAINLINE, .limit = sdtc->limit,
	};

	trace_if(sdtc->wb->cache, __trace_balance_dirty_pages(sdtc->wb, &e));
}

static int balance_dirty_pages_mainline(struct address_space *mapping,
					unsigned long pages_dirtied,
					unsigned int flags, long *pausep)
{
	struct backing_dev_info *wb = mapping->backing_dev_info;
	struct uf_cache *c = wb->cache;
	struct task_struct *t = bdp_task();
	struct dirty_throttle_control gdtc_stor = { .wb = wb };
	struct dirty_throttle_control *const gdtc = &gdtc_stor;
	struct dirty_throttle_control *sdtc;
	unsigned long nr_reclaimable, task_ratelimit, dirty_ratelimit;
	long period, pause, max_pause, min_pause;
	int nr_dirtied_pause;
	bool dirty_exceeded = false;
	bool strictlimit = READ_ONCE(wb->capabilities) & BDI_CAP_STRICTLIMIT;
	bool peek = flags & BDP_PEEK;
	unsigned long start_time = jiffies;
	int ret = 0;

	for (;;) {
		unsigned long now = jiffies;
		unsigned long dirty, thresh, bg_thresh;

		nr_reclaimable = global_page_state(c, NR_FILE_DIRTY);
		gdtc->avail = determine_dirtyable_memory(c);
		gdtc->dirty = nr_reclaimable +
			      global_page_state(c, NR_WRITEBACK);
		global_dirty_limits(c, &gdtc->bg_thresh, &gdtc->thresh);

		if (strictlimit) {
			wb_dirty_limits(gdtc);
			dirty = gdtc->wb_dirty;
			thresh = gdtc->wb_thresh;
			bg_thresh = gdtc->wb_bg_thresh;
		} else {
			dirty = gdtc->dirty;
			thresh = gdtc->thresh;
			bg_thresh = gdtc->bg_thresh;
		}

		/* (no laptop mode) background writeback at its threshold */
		if (nr_reclaimable > gdtc->bg_thresh &&
		    !writeback_in_progress(wb))
			bdi_start_background_writeback(wb);

		/* below freerun (a strictlimit device: its own) go on */
		if (dirty <= dirty_freerun_ceiling(thresh, bg_thresh)) {
			if (!peek) {
				t->dirty_paused_when = now;
				t->nr_dirtied = 0;
				t->nr_dirtied_pause =
					(int)dirty_poll_interval(dirty, thresh);
			}
			break;
		}

		if (!writeback_in_progress(wb))
			bdi_start_background_writeback(wb);

		if (!strictlimit)
			wb_dirty_limits(gdtc);

		dirty_exceeded = gdtc->wb_dirty > gdtc->wb_thresh &&
				 (gdtc->dirty > gdtc->thresh || strictlimit);

		wb_position_ratio(gdtc);
		sdtc = gdtc;

		if (!peek)
			WRITE_ONCE(wb->dirty_exceeded, dirty_exceeded);

		if (time_is_before_jiffies(READ_ONCE(wb->bw_time_stamp) +
					   BANDWIDTH_INTERVAL))
			__wb_update_bandwidth(gdtc);

		dirty_ratelimit = READ_ONCE(wb->dirty_ratelimit);
		task_ratelimit = (unsigned long)((uint64_t)dirty_ratelimit *
						 sdtc->pos_ratio >>
						 RATELIMIT_CALC_SHIFT);
		max_pause = (long)wb_max_pause(wb, sdtc->wb_dirty);
		min_pause = wb_min_pause(wb, max_pause, task_ratelimit,
					 dirty_ratelimit, &nr_dirtied_pause);

		if (task_ratelimit == 0) {
			period = max_pause;
			pause = max_pause;
			goto pause;
		}
		period = (long)((unsigned long)HZ * pages_dirtied /
				task_ratelimit);
		pause = period;
		if (t->dirty_paused_when)
			pause -= (long)(now - t->dirty_paused_when);
		/*
		 * Under min_pause: don't sleep, carry the time over (think
		 * time of less than a second is paid later); a longer think
		 * time resets, as for a light dirtier.
		 */
		if (pause < min_pause) {
			trace_bdp_mainline(sdtc, dirty_ratelimit,
					   task_ratelimit, pages_dirtied,
					   period, pause < 0 ? pause : 0,
					   start_time);
			if (peek)
				break;
			bdp_skip_short_pause(t, pause, period, now,
					     pages_dirtied);
			break;
		}
		if (pause > max_pause) {
			/* for an occasional drop of task_ratelimit */
			now += (unsigned long)min_l(pause - max_pause,
						    max_pause);
			pause = max_pause;
		}

pause:
		trace_bdp_mainline(sdtc, dirty_ratelimit, task_ratelimit,
				   pages_dirtied, period, pause, start_time);
		if (flags & BDP_ASYNC) {
			*pausep = pause;
			ret = -EAGAIN;
			break;
		}
		__set_current_state(TASK_KILLABLE);
		io_schedule_timeout(pause);

		t->dirty_paused_when = now + (unsigned long)pause;
		t->nr_dirtied = 0;
		t->nr_dirtied_pause = nr_dirtied_pause;

		if (task_ratelimit)
			break;
		/* 6.18: the kernel's counter error, not uflush's 0 */
		if (sdtc->wb_dirty <= wb_stat_error())
			break;
		if (bdp_fatal(c))
			break;
	}
	return ret;
}

/*
 * 6.18's balance_dirty_pages_ratelimited_flags() (2046).  The task also
 * picks up dirty_throttle_leaks, the pages exited tasks dirtied unpaid
 * (kernel/exit.c do_exit, 1010), as 3.3's does (bdp_task_33 above).
 */
int balance_dirty_pages_ratelimited_mainline(struct address_space *mapping,
					     unsigned long nr_new,
					     unsigned int flags, long *pause)
{
	struct backing_dev_info *wb = mapping->backing_dev_info;
	struct task_struct *t = bdp_task_33();
	unsigned long rl_pages = ratelimit_pages_of(wb);
	int ratelimit = t->nr_dirtied_pause;

	if (READ_ONCE(wb->dirty_exceeded))
		ratelimit = ratelimit < (32 >> (PAGE_SHIFT - 10)) ?
			    ratelimit : 32 >> (PAGE_SHIFT - 10);

	if (flags & BDP_PEEK) {
		unsigned long nr = (unsigned long)t->nr_dirtied + nr_new;
		int leaks = dirty_throttle_leaks_read();

		/* what the call would pick up, without taking it */
		if (leaks > 0 && nr < (unsigned long)ratelimit)
			nr += min_ul((unsigned long)leaks,
				     (unsigned long)ratelimit - nr);
		if (nr < (unsigned long)ratelimit &&
		    (unsigned long)t->bdp_ratelimits + nr_new < rl_pages)
			return 0;
		return balance_dirty_pages_mainline(mapping, nr, flags,
						    pause);
	}

	/* nr_dirtied and bdp_ratelimits were charged by
	 * account_page_dirtied() when a page turned dirty (mainline
	 * folio_account_dirtied): a rewrite of a dirty page adds nothing */
	if (t->nr_dirtied >= ratelimit) {
		t->bdp_ratelimits = 0;
	} else if ((unsigned long)t->bdp_ratelimits >= rl_pages) {
		t->bdp_ratelimits = 0;
		ratelimit = 0;
	}
	if (t->nr_dirtied < ratelimit)
		t->nr_dirtied += take_dirty_throttle_leaks(ratelimit -
							   t->nr_dirtied);
	if (t->nr_dirtied >= ratelimit)
		return balance_dirty_pages_mainline(mapping,
				(unsigned long)t->nr_dirtied, flags, pause);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The decision point                                                  */

static int bdp_call_policy(struct address_space *mapping,
			   unsigned long nr_new, unsigned int flags,
			   long *pause)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	const struct wb_policy *pol = bdi->cache->policy;
	int ret;

	if (__builtin_expect(bdi->cache->bdp_probe != NULL, 0)) {
		bdi->cache->bdp_probe(mapping, nr_new, flags, NULL, 0);
		ret = pol && pol->balance_dirty_pages ?
		      pol->balance_dirty_pages(mapping, nr_new, flags, pause) :
		      balance_dirty_pages_ratelimited_32(mapping, nr_new,
							 flags, pause);
		bdi->cache->bdp_probe(mapping, nr_new, flags, &ret, *pause);
		return ret;
	}
	if (pol && pol->balance_dirty_pages)
		return pol->balance_dirty_pages(mapping, nr_new, flags, pause);
	return balance_dirty_pages_ratelimited_32(mapping, nr_new, flags,
						  pause);
}

int balance_dirty_pages_ratelimited_flags(struct address_space *mapping,
					  unsigned long nr_new,
					  unsigned int flags, long *pause)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	unsigned int timer_flags;
	long dummy;
	int ret;

	if (!bdi)
		return 0;
	/* the flushers are what makes room: never throttle them */
	if (current->flags & PF_KTHREAD)
		return 0;
	if (!pause)
		pause = &dummy;
	*pause = 0;
	/* the pause sleeps on the timers of this cache's kernel */
	timer_flags = current->timer_flags;
	current->timer_flags = cache_timer_flags(bdi->cache);
	ret = bdp_call_policy(mapping, nr_new, flags, pause);
	current->timer_flags = timer_flags;
	return ret;
}

/**
 * balance_dirty_pages_nowait_begin - may a non-blocking writer go on?
 * @mapping: the mapping it is about to write
 * @nr_new: pages the write spans
 * @pause: out: jiffies to wait before trying again, on -EAGAIN
 *
 * uflush's use of BDP_ASYNC: asked before anything is copied.  -EAGAIN
 * when the throttle would pause the writer after these pages; the caller
 * is then expected to wait *pause (asking sooner gets -EAGAIN and the
 * rest of it), after which the write goes ahead as paid for.  On 0 the
 * write's own throttle calls do not sleep (balance_dirty_pages_nowait_end
 * ends that); what they would have paused for is owed on the next call.
 */
int balance_dirty_pages_nowait_begin(struct address_space *mapping,
				     unsigned long nr_new, long *pause)
{
	struct task_struct *t = bdp_task();
	unsigned long now = jiffies;
	int ret;

	*pause = 0;
	if (t->bdp_owed) {
		if (time_before(now, t->bdp_resume)) {
			*pause = (long)(t->bdp_resume - now);
			return -EAGAIN;
		}
		/* it waited as a sleeping writer would have: paid */
		t->bdp_owed = false;
		t->nr_dirtied = 0;
		t->bdp_ratelimits = 0;
		t->dirty_paused_when = now;
	} else {
		ret = balance_dirty_pages_ratelimited_flags(mapping, nr_new,
				BDP_ASYNC | BDP_PEEK, pause);
		if (ret == -EAGAIN) {
			t->bdp_owed = true;
			t->bdp_resume = now + (unsigned long)*pause;
			return ret;
		}
	}
	t->bdp_flags |= BDP_ASYNC;
	return 0;
}

void balance_dirty_pages_nowait_end(void)
{
	current->bdp_flags &= ~(unsigned int)BDP_ASYNC;
}

/**
 * balance_dirty_pages_ratelimited - after dirtying a page of @mapping
 * @mapping: the mapping just dirtied
 *
 * Called by writers after each page they dirty; the policy's bdp knob
 * says which kernel's throttle runs.  A write on behalf of a non-blocking
 * caller (current->bdp_flags has BDP_ASYNC) never sleeps here.
 */
void balance_dirty_pages_ratelimited(struct address_space *mapping)
{
	balance_dirty_pages_ratelimited_flags(mapping, 0, current->bdp_flags,
					      NULL);
}

/* ------------------------------------------------------------------ */
/* Dirty and writeback accounting                                      */

/* The kernel's bdi_cap_account_dirty(): devices without a bdi don't. */
static inline bool mapping_cap_account_dirty(struct address_space *mapping)
{
	return mapping->backing_dev_info != NULL;
}

/* The cache's throttle is @fn (3.2's when it has none). */
static bool cache_bdp_is(struct uf_cache *c, bdp_ratelimited_fn *fn)
{
	bdp_ratelimited_fn *cur = c->policy && c->policy->balance_dirty_pages ?
				  c->policy->balance_dirty_pages :
				  balance_dirty_pages_ratelimited_32;

	return cur == fn;
}

/*
 * Large folios come with 6.18's write path, so with its throttle: the
 * preset that has one has the other (pagemap.h).  A mapping without a
 * device (no accounting) writes 4 KiB pages.
 */
unsigned int mapping_max_folio_order(const struct address_space *mapping)
{
	const struct backing_dev_info *bdi = mapping->backing_dev_info;

	if (!bdi || !cache_bdp_is(bdi->cache,
				  balance_dirty_pages_ratelimited_mainline))
		return 0;
	return MAX_PAGECACHE_ORDER;
}

/*
 * The cache's policy picks 3.1's, 3.2's or 3.3's throttle, whose
 * global_dirty_limit starts at 0 and is moved by the throttle only.  A
 * cache without a policy (hand-made in a unit test) keeps the engine's
 * older rule, the limit starting at the threshold.
 */
static bool bdp_is_3x(const struct uf_cache *c)
{
	bdp_ratelimited_fn *fn = c->policy ? c->policy->balance_dirty_pages :
					     NULL;

	return fn == balance_dirty_pages_ratelimited_31 ||
	       fn == balance_dirty_pages_ratelimited_32 ||
	       fn == balance_dirty_pages_ratelimited_33;
}

/* A page became dirty: count it.  Caller holds mapping->tree_lock. */
void account_page_dirtied(struct page *page, struct address_space *mapping)
{
	struct uf_cache *c = mapping_cache(mapping);
	struct backing_dev_info *bdi = mapping->backing_dev_info;

	(void)page;
	if (!mapping_cap_account_dirty(mapping))
		return;
	inc_vm_state(c, NR_FILE_DIRTY);
	inc_vm_state(c, NR_DIRTIED);
	inc_bdi_stat(bdi, BDI_RECLAIMABLE);
	inc_bdi_stat(bdi, BDI_DIRTIED);
	/* 3.1's per-task share (task_dirty_limit); only 3.1 reads it */
	if (cache_bdp_is(c, balance_dirty_pages_ratelimited_31))
		task_dirty_inc();
	/*
	 * 3.3 account_page_dirtied() and mainline folio_account_dirtied()
	 * charge the dirtier here, once per clean -> dirty page (since
	 * "writeback: fix dirtied pages accounting on sub-page writes", Wu
	 * Fengguang, 4 Sep 2011, merged in 3.3).  3.1 and 3.2.41 count in
	 * the ratelimited call, per page written (3.2.41
	 * balance_dirty_pages_ratelimited_nr:1245).
	 */
	if (cache_bdp_is(c, balance_dirty_pages_ratelimited_33)) {
		struct task_struct *t = bdp_task_33();

		t->nr_dirtied++;
		t->bdp_ratelimits++;
	} else if (cache_bdp_is(c, balance_dirty_pages_ratelimited_mainline)) {
		struct task_struct *t = bdp_task();

		t->nr_dirtied++;
		t->bdp_ratelimits++;
	}
}

/**
 * set_page_dirty - mark a page dirty, and its inode
 * @page: the page, locked or otherwise kept from truncation by the caller
 *
 * __set_page_dirty_nobuffers(): on the clean -> dirty transition, account
 * the page and tag it DIRTY under the tree lock, then put the inode on its
 * device's b_dirty list (outside the lock: __mark_inode_dirty takes the
 * writeback locks).  Return: 1 if the page was newly dirtied, else 0.
 */
int set_page_dirty(struct page *page)
{
	struct address_space *mapping;

	/* 3.2: a page written again is no longer one that reclaim marked
	 * to be freed as soon as written (a stale PG_reclaim would hide it
	 * from reclaim's unqueued-dirty counts) */
	ClearPageReclaim(page);
	if (TestSetPageDirty(page))
		return 0;
	mapping = READ_ONCE(page->mapping);
	if (!mapping)
		return 1;

	spin_lock(&mapping->tree_lock);
	if (page->mapping) {	/* not truncated meanwhile */
		WARN_ON_ONCE(page->mapping != mapping);
		WARN_ON_ONCE(!PageUptodate(page));
		account_page_dirtied(page, mapping);
		radix_tree_tag_set(&mapping->page_tree, page->index,
				   PAGECACHE_TAG_DIRTY);
	}
	spin_unlock(&mapping->tree_lock);
	if (mapping->host)
		__mark_inode_dirty(mapping->host, I_DIRTY_PAGES);
	return 1;
}

/**
 * clear_page_dirty_for_io - the page is about to be written
 * @page: the locked page
 *
 * Clears PG_dirty and the dirty counts.  The DIRTY tag stays until
 * test_set_page_writeback(), so that the inode still looks dirty to
 * writeback until the page is really on its way.  Return: 1 if the page
 * was dirty (and must now be written), else 0.
 */
int clear_page_dirty_for_io(struct page *page)
{
	struct address_space *mapping = page->mapping;

	BUG_ON(!PageLocked(page));

	if (mapping && mapping_cap_account_dirty(mapping)) {
		if (TestClearPageDirty(page)) {
			dec_vm_state(mapping_cache(mapping), NR_FILE_DIRTY);
			dec_bdi_stat(mapping->backing_dev_info,
				     BDI_RECLAIMABLE);
			return 1;
		}
		return 0;
	}
	return TestClearPageDirty(page);
}

void account_page_writeback(struct page *page)
{
	inc_vm_state(mapping_cache(page->mapping), NR_WRITEBACK);
}

/**
 * test_set_page_writeback - the page goes under writeback
 * @page: the locked page
 *
 * Sets PG_writeback and the WRITEBACK tag; drops the DIRTY tag unless the
 * page was redirtied meanwhile, and the TOWRITE tag (it is being written).
 * Return: true if the page was already under writeback.
 */
int test_set_page_writeback(struct page *page)
{
	struct address_space *mapping = page->mapping;
	int ret;

	if (!mapping)
		return TestSetPageWriteback(page);

	spin_lock(&mapping->tree_lock);
	ret = TestSetPageWriteback(page);
	if (!ret) {
		radix_tree_tag_set(&mapping->page_tree, page->index,
				   PAGECACHE_TAG_WRITEBACK);
		if (mapping_cap_account_dirty(mapping))
			inc_bdi_stat(mapping->backing_dev_info, BDI_WRITEBACK);
	}
	if (!PageDirty(page))
		radix_tree_tag_clear(&mapping->page_tree, page->index,
				     PAGECACHE_TAG_DIRTY);
	radix_tree_tag_clear(&mapping->page_tree, page->index,
			     PAGECACHE_TAG_TOWRITE);
	spin_unlock(&mapping->tree_lock);
	if (!ret)
		account_page_writeback(page);
	return ret;
}

/*
 * test_set_page_writeback() for a request's pages whose PG_writeback
 * mpage_writepage() set already: their tag moves under one tree_lock and
 * the counts added once, before the request goes to the device.  Until
 * then a page is under writeback but still tagged DIRTY (and TOWRITE):
 * a sync walk finds it, clean and under writeback, and waits for it
 * (writeback_untagged), as fdatawait would on its WRITEBACK tag;
 * the flusher moves every tag before its writepages returns, so its own
 * mapping_tagged() checks see them moved.
 */
void test_set_pages_writeback_tags(struct address_space *mapping,
				   struct page **pages, unsigned int nr)
{
	unsigned int i;

	spin_lock(&mapping->tree_lock);
	for (i = 0; i < nr; i++) {
		unsigned long index = pages[i]->index;

		radix_tree_tag_set(&mapping->page_tree, index,
				   PAGECACHE_TAG_WRITEBACK);
		if (!PageDirty(pages[i]))
			radix_tree_tag_clear(&mapping->page_tree, index,
					     PAGECACHE_TAG_DIRTY);
		radix_tree_tag_clear(&mapping->page_tree, index,
				     PAGECACHE_TAG_TOWRITE);
	}
	if (mapping_cap_account_dirty(mapping))
		add_bdi_stat(mapping->backing_dev_info, BDI_WRITEBACK,
			     (long)nr);
	spin_unlock(&mapping->tree_lock);
	mod_vm_state(mapping_cache(mapping), NR_WRITEBACK, (long)nr);
}

/**
 * test_clear_page_writeback - the page's write completed
 * @page: the page (end_page_writeback() calls this on the completion
 *	thread: nothing here sleeps)
 *
 * Clears PG_writeback and the WRITEBACK tag, and counts the completion for
 * the device: BDI_WRITTEN and its share of the dirty limit.
 * Return: true if the page was under writeback.
 */
int test_clear_page_writeback(struct page *page)
{
	struct address_space *mapping = page->mapping;

	if (!mapping)
		return TestClearPageWriteback(page);
	return (int)test_clear_pages_writeback(mapping, &page, 1);
}

/**
 * test_clear_pages_writeback - test_clear_page_writeback() of a request
 * @mapping: the mapping of every page
 * @pages: the request's pages, each under writeback
 * @nr: how many
 *
 * One tree_lock for the request's tag clears and its counts added once
 * (6.18 counts a folio's pages in one step: folio_end_writeback's
 * __folio_end_writeback with nr = folio_nr_pages).  The proportions get
 * one event per page, each checked against the cap as before.  The
 * mapping is not touched after the lock is dropped.
 * Return: the pages that were under writeback.
 */
unsigned int test_clear_pages_writeback(struct address_space *mapping,
					struct page **pages, unsigned int nr)
{
	struct uf_cache *c = mapping_cache(mapping);
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	unsigned int i, done = 0;

	spin_lock(&mapping->tree_lock);
	for (i = 0; i < nr; i++) {
		if (!TestClearPageWriteback(pages[i]))
			continue;
		radix_tree_tag_clear(&mapping->page_tree, pages[i]->index,
				     PAGECACHE_TAG_WRITEBACK);
		done++;
	}
	if (done) {
		__atomic_add_fetch(&mapping->nr_written, done,
				   __ATOMIC_RELAXED);
		if (mapping_cap_account_dirty(mapping)) {
			add_bdi_stat(bdi, BDI_WRITEBACK, -(long)done);
			bdi_writeout_add(bdi, done);
		}
	}
	spin_unlock(&mapping->tree_lock);
	mod_vm_state(c, NR_WRITEBACK, -(long)done);
	mod_vm_state(c, NR_WRITTEN, (long)done);
	return done;
}

/**
 * tag_pages_for_writeback - tag the pages to write before writing them
 * @mapping: the mapping
 * @start: first page index
 * @end: last page index (inclusive)
 *
 * Sets TOWRITE on every DIRTY page of the range, so that an integrity
 * writeback writes what was dirty when it started and cannot be kept going
 * forever by a writer dirtying pages ahead of it.  The tree lock is dropped
 * every WRITEBACK_TAG_BATCH pages so a huge file does not hold it long.
 */
void tag_pages_for_writeback(struct address_space *mapping,
			     unsigned long start, unsigned long end)
{
	unsigned long tagged;

	do {
		spin_lock(&mapping->tree_lock);
		tagged = radix_tree_range_tag_if_tagged(&mapping->page_tree,
				&start, end, WRITEBACK_TAG_BATCH,
				PAGECACHE_TAG_DIRTY, PAGECACHE_TAG_TOWRITE);
		spin_unlock(&mapping->tree_lock);
		WARN_ON_ONCE(tagged > WRITEBACK_TAG_BATCH);
		cond_resched();
		/* start wraps to 0 past ULONG_MAX: the whole range is done */
	} while (tagged >= WRITEBACK_TAG_BATCH && start);
}

/* ------------------------------------------------------------------ */
/* Write requests (fs/mpage.c's bio, in uflush's I/O layer)            */

/*
 * One write request: the frames of a run of contiguous page indices, in
 * one vectored write at the pages' place on the device.  page->private
 * points at it while the page is under writeback.
 */
struct wb_request {
	struct uf_io_req req;
	struct address_space *mapping;
	unsigned long first_index;
	unsigned int nr_pages;
	unsigned int max_pages;
	unsigned int nr_iov;		/* segments: physically contiguous */
	unsigned int max_segments;	/* 0: no limit */
	unsigned int max_segment_pages;	/* 0: no limit */
	bool tags_pending;		/* PG_writeback set, the tags and
					 * counts not yet (mpage_flush) */
	struct page **pages;		/* after iov[max_pages] */
	struct iovec iov[];
};

/*
 * blk_plug: full requests wait here and go to the device together, one
 * submission for up to BLK_MAX_REQUEST_COUNT of them (one io_uring_enter
 * instead of one per request: a random overwrite writes one page a
 * request).  Flushed before anything that may sleep, as schedule() flushes
 * the kernel's plug, and when the writepages call ends (generic_writepages
 * plugs around write_cache_pages).
 */
#define BLK_MAX_REQUEST_COUNT	16

struct blk_plug {
	unsigned int nr;
	struct uf_io_req *reqs[BLK_MAX_REQUEST_COUNT];
};

/* The state of one writepages call: the request being filled. */
struct mpage_data {
	struct address_space *mapping;
	struct backing_dev_info *bdi;
	struct uf_cache *cache;
	struct wb_request *wr;
	struct blk_plug plug;
	unsigned int max_pages;
	long scanned;			/* pages looked at, for wcp_scanned */

	/*
	 * Delayed allocation (uf_file_ops.map_blocks), ext4's mpage_da_data:
	 * the run of contiguous dirty pages being gathered, each locked and
	 * referenced until it is mapped and written or given back.
	 */
	struct inode *da_inode;		/* the file maps at writeback */
	unsigned long cap;		/* wcpcap=cap: run limit; 0: stock */
	struct page **ext;
	unsigned long ext_nr, ext_size;
	bool io_done;			/* this round's run went out */
	bool map_stalled;		/* the mapper mapped none of a run */
	long tail_budget;		/* stock: slice for the pages after it */
	long written;			/* mapped and written, all rounds */
};

/* seed 004: "8 MiB / blocksize", mballoc's largest extent, in pages. */
#define DA_MAX_EXTENT_PAGES	((8UL << 20) >> PAGE_SHIFT)

static unsigned int bdi_max_io_pages(struct backing_dev_info *bdi)
{
	unsigned int n = bdi->max_io_pages;

	if (!n)
		n = bdi->cache->max_io_pages;
	if (!n)
		n = 256;
	return n < WB_MAX_IOV ? n : WB_MAX_IOV;
}

static size_t wb_request_size(unsigned int max_pages)
{
	return sizeof(struct wb_request) +
	       max_pages * (sizeof(struct iovec) + sizeof(struct page *));
}

static void wb_request_init(struct wb_request *wr,
			    struct address_space *mapping,
			    unsigned long index, unsigned int max_pages)
{
	memset(&wr->req, 0, sizeof(wr->req));
	wr->mapping = mapping;
	wr->first_index = index;
	wr->nr_pages = 0;
	wr->max_pages = max_pages;
	wr->nr_iov = 0;
	wr->max_segments = 0;
	wr->max_segment_pages = 0;
	wr->tags_pending = false;
	wr->pages = (struct page **)(void *)&wr->iov[max_pages];
}

/* @page's frame extends the request's last segment (bio_add_page()'s
 * merge into the last bvec, within max_segment_size). */
static bool wb_request_merges(struct wb_request *wr, struct page *page,
			      struct uf_cache *c)
{
	if (!wr->nr_iov ||
	    !page_phys_follows(c, wr->pages[wr->nr_pages - 1], page))
		return false;
	return !wr->max_segment_pages || wr->iov[wr->nr_iov - 1].iov_len <
		(size_t)wr->max_segment_pages * PAGE_SIZE;
}

/* Room for @page: a page, and a segment unless it merges. */
static bool wb_request_fits(struct wb_request *wr, struct page *page,
			    struct uf_cache *c)
{
	if (wr->nr_pages == wr->max_pages)
		return false;
	return !wr->max_segments || wr->nr_iov < wr->max_segments ||
	       wb_request_merges(wr, page, c);
}

static void wb_request_add(struct wb_request *wr, struct page *page,
			   struct uf_cache *c)
{
	unsigned int i = wr->nr_pages;

	if (i && wb_request_merges(wr, page, c)) {
		wr->iov[wr->nr_iov - 1].iov_len += PAGE_SIZE;
	} else {
		wr->iov[wr->nr_iov].iov_base = page_address(c, page);
		wr->iov[wr->nr_iov++].iov_len = PAGE_SIZE;
	}
	wr->pages[i] = page;
	wr->nr_pages++;
	page->private = wr;
}

/* printk_ratelimit(): a failing device must not flood the log. */
static bool wb_error_ratelimit(void)
{
	static spinlock_t lock = __SPIN_LOCK_UNLOCKED;
	static unsigned long begin;
	static unsigned int printed;
	unsigned long now = jiffies;
	bool ok;

	spin_lock(&lock);
	if (!begin || time_after(now, begin + 5UL * (unsigned)HZ)) {
		begin = now;
		printed = 0;
	}
	ok = printed++ < WB_ERR_BURST;
	spin_unlock(&lock);
	return ok;
}

static void wb_request_error(struct wb_request *wr, int res)
{
	struct address_space *mapping = wr->mapping;
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct uf_cache *c = bdi->cache;

	__atomic_add_fetch(&bdi->write_errors, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->write_errors, 1, __ATOMIC_RELAXED);
	/* fsync reports it (-EIO); the pages themselves stay clean */
	mapping_set_error(mapping, res);
	if (wb_error_ratelimit())
		pr_err("%s: lost write of pages %lu-%lu of inode %lu: %s",
		       bdi->name, wr->first_index,
		       wr->first_index + wr->nr_pages - 1,
		       mapping->host ? mapping->host->i_ino : 0,
		       strerror(-res));
}

/*
 * The request finished with @res (bytes or -errno).  Runs on the I/O
 * completion thread: nothing here sleeps.  The mapping is not touched
 * after the last end_page_writeback(): the file may then be closed.
 */
static void wb_request_done(struct wb_request *wr, int res)
{
	struct uf_cache *c = mapping_cache(wr->mapping);
	unsigned int i;

	/* __freed_request(): before the pages' end, whose congestion
	 * check reads the count */
	__atomic_sub_fetch(&mapping_bdi(wr->mapping)->nr_async_requests, 1,
			   __ATOMIC_RELAXED);
	if (res < 0)
		wb_request_error(wr, res);
	for (i = 0; i < wr->nr_pages; i++) {
		struct page *page = wr->pages[i];

		if (res < 0)
			SetPageError(page);
		page->private = NULL;
		if (c->page_batch_off)
			end_page_writeback(page);
	}
	if (!c->page_batch_off)
		end_pages_writeback(wr->mapping, wr->pages, wr->nr_pages);
	lru_add_drain();	/* the rotations of this request, batched */
}

static void end_wb_request(struct uf_io_req *req, int res)
{
	struct wb_request *wr = container_of(req, struct wb_request, req);

	wb_request_done(wr, res);
	kfree(wr);
}

static void wb_request_prep(struct wb_request *wr)
{
	struct inode *inode = wr->mapping->host;

	/* get_request(): a write request exists from here to its end */
	__atomic_add_fetch(&mapping_bdi(wr->mapping)->nr_async_requests, 1,
			   __ATOMIC_RELAXED);

	wr->req.op = UF_IO_WRITE;
	wr->req.offset = inode->dev_offset +
			 ((uint64_t)wr->first_index << PAGE_SHIFT);
	wr->req.iov = wr->iov;
	wr->req.nr_iov = wr->nr_iov;
	wr->req.end_io = end_wb_request;
	wr->req.private = wr;
}

/* Submit one request; refused outright, it fails as if the device had
 * said so. */
static void mpage_submit_one(struct mpage_data *mpd, struct uf_io_req *req)
{
	int ret = -ENODEV;

	if (mpd->bdi->bdev)
		ret = uf_bdev_submit(mpd->bdi->bdev, &req, 1);
	if (ret)
		end_wb_request(req, ret);
}

/* blk_flush_plug_list(): everything plugged, in one submission. */
static void blk_flush_plug(struct mpage_data *mpd)
{
	struct blk_plug *plug = &mpd->plug;
	unsigned int i, nr = plug->nr;
	int ret = -ENODEV;

	if (!nr)
		return;
	plug->nr = 0;
	if (mpd->bdi->bdev)
		ret = uf_bdev_submit(mpd->bdi->bdev, plug->reqs, nr);
	if (!ret)
		return;
	/* the batch was refused before any of it went out (a request the
	 * device cannot take): one by one, so each gets its own answer */
	for (i = 0; i < nr; i++)
		mpage_submit_one(mpd, plug->reqs[i]);
}

/* The request being filled is complete (the kernel's mpage_bio_submit):
 * plug it; a full plug goes to the device. */
static void mpage_flush(struct mpage_data *mpd)
{
	struct wb_request *wr = mpd->wr;

	if (!wr)
		return;
	mpd->wr = NULL;
	if (wr->tags_pending)
		test_set_pages_writeback_tags(wr->mapping, wr->pages,
					      wr->nr_pages);
	wb_request_prep(wr);
	mpd->plug.reqs[mpd->plug.nr++] = &wr->req;
	if (mpd->plug.nr == BLK_MAX_REQUEST_COUNT)
		blk_flush_plug(mpd);
}

/* Before sleeping and at the end of a writepages call: everything goes
 * out, the request being filled included. */
static void mpage_unplug(struct mpage_data *mpd)
{
	mpage_flush(mpd);
	blk_flush_plug(mpd);
}

/* A new request starting at @index; falls back to a one-page request. */
static struct wb_request *wb_request_start(struct mpage_data *mpd,
					   unsigned long index)
{
	unsigned int max = mpd->max_pages;
	struct wb_request *wr;

	wr = kmalloc(wb_request_size(max));
	if (!wr && max > 1) {
		max = 1;
		wr = kmalloc(wb_request_size(max));
	}
	if (wr) {
		wb_request_init(wr, mpd->mapping, index, max);
		wr->max_segments = mpd->bdi->max_segments;
		wr->max_segment_pages = mpd->bdi->max_segment_pages;
	}
	return wr;
}

/*
 * No memory for even a one-page request: write this page synchronously
 * from a request on the stack, so that writeback still makes progress
 * (it may be what frees memory).
 */
static void mpage_write_one_sync(struct mpage_data *mpd, struct page *page)
{
	union {
		struct wb_request wr;
		char buf[sizeof(struct wb_request) + sizeof(struct iovec) +
			 sizeof(struct page *)];
	} u;
	struct wb_request *wr = &u.wr;
	ssize_t res = -ENODEV;

	wb_request_init(wr, mpd->mapping, page->index, 1);
	test_set_page_writeback(page);
	wb_request_add(wr, page, mpd->cache);
	unlock_page(page);
	wb_request_prep(wr);
	if (mpd->bdi->bdev)
		res = uf_bdev_rw(mpd->bdi->bdev, UF_IO_WRITE, wr->req.offset,
				 wr->iov, 1);
	wb_request_done(wr, res < 0 ? (int)res : (int)PAGE_SIZE);
}

/*
 * ->writepage for reclaim's pageout(): the page is locked and its dirty
 * bit was cleared by clear_page_dirty_for_io(); write it alone, as a
 * one-page request (pageout writes single pages).
 */
int reclaim_writepage(struct page *page, struct writeback_control *wbc)
{
	struct address_space *mapping = page->mapping;
	struct mpage_data mpd = {
		.mapping = mapping,
		.bdi = mapping->backing_dev_info,
		.cache = mapping_cache(mapping),
		.wr = NULL,
		.max_pages = 1,
	};

	(void)wbc;
	mpd.wr = wb_request_start(&mpd, page->index);
	if (!mpd.wr) {
		mpage_write_one_sync(&mpd, page);
		return 0;
	}
	if (test_set_page_writeback(page))
		WARN_ON_ONCE(1);
	wb_request_add(mpd.wr, page, mpd.cache);
	unlock_page(page);
	mpage_unplug(&mpd);
	return 0;
}

/*
 * The writepage step: put the (locked, just cleaned) page under writeback,
 * unlock it, and add it to the current request, which is submitted when
 * the page does not follow it or when it is full.
 */
static int mpage_writepage(struct page *page, struct writeback_control *wbc,
			   struct mpage_data *mpd)
{
	struct wb_request *wr = mpd->wr;

	(void)wbc;
	if (wr && (page->index != wr->first_index + wr->nr_pages ||
		   !wb_request_fits(wr, page, mpd->cache)))
		mpage_flush(mpd);
	if (!mpd->wr) {
		mpd->wr = wb_request_start(mpd, page->index);
		if (!mpd->wr) {
			mpage_write_one_sync(mpd, page);
			return 0;
		}
	}
	wr = mpd->wr;
	if (!mpd->cache->page_batch_off) {
		/* PG_writeback now, before the page is unlocked; its tag
		 * moves and counts with the request's (mpage_flush) */
		if (TestSetPageWriteback(page))
			WARN_ON_ONCE(1);
		wr->tags_pending = true;
	} else if (test_set_page_writeback(page)) {
		WARN_ON_ONCE(1);	/* the caller checked under the lock */
	}
	wb_request_add(wr, page, mpd->cache);
	unlock_page(page);
	if (wr->nr_pages == wr->max_pages)
		mpage_flush(mpd);
	return 0;
}

/* Give back the run from @from on: unlocked, still dirty. */
static void mpage_da_release(struct mpage_data *mpd, unsigned long from)
{
	unsigned long i;

	for (i = from; i < mpd->ext_nr; i++) {
		unlock_page(mpd->ext[i]);
		put_page(mpd->cache, mpd->ext[i]);
	}
	mpd->ext_nr = 0;
}

/*
 * Map the run and write what the mapper mapped (ext4's
 * mpage_da_map_and_submit): those pages go under writeback, the others
 * are given back still dirty for the next round.  The round is over
 * (io_done) either way.  Return 0 or the mapper's error.
 */
static int mpage_da_map_and_submit(struct mpage_data *mpd,
				   struct writeback_control *wbc)
{
	struct inode *inode = mpd->da_inode, *old;
	unsigned long i, nr = mpd->ext_nr;
	int mapped;

	if (!nr)
		return 0;
	mpd->io_done = true;
	/* the embedder's mapper may sleep: nothing of ours waits plugged */
	blk_flush_plug(mpd);
	old = file_op_enter(inode);
	mapped = inode->ops->map_blocks(inode->handle, inode->priv,
					mpd->ext[0]->index, nr);
	file_op_exit(old);
	if (mapped < 0) {
		mpage_da_release(mpd, 0);
		return mapped;
	}
	if ((unsigned long)mapped > nr)
		mapped = (int)nr;
	if (!mapped)
		mpd->map_stalled = true;
	for (i = 0; i < (unsigned long)mapped; i++) {
		struct page *page = mpd->ext[i];

		if (clear_page_dirty_for_io(page)) {
			uf_sim_charge(UF_SIM_COST_PAGE_OP, 3);
			mpage_writepage(page, wbc, mpd);	/* unlocks */
			wbc->nr_to_write--;
			mpd->written++;
		} else {
			unlock_page(page);
		}
		put_page(mpd->cache, page);
	}
	mpage_da_release(mpd, (unsigned long)mapped);
	return 0;
}

/* Room for a longer run (stock gathers to the end of the range). */
static int mpage_da_grow(struct mpage_data *mpd)
{
	unsigned long size = mpd->ext_size ? 2 * mpd->ext_size : 256;
	struct page **ext = kmalloc(size * sizeof(*ext));

	if (!ext)
		return -ENOMEM;
	if (mpd->ext_nr)
		memcpy(ext, mpd->ext, mpd->ext_nr * sizeof(*ext));
	kfree(mpd->ext);
	mpd->ext = ext;
	mpd->ext_size = size;
	return 0;
}

/*
 * The writepage step for a file that maps at writeback (ext4's
 * __mpage_da_writepage and mpage_add_bh_to_extent): add the locked,
 * dirty @page to the run.  A page that does not follow the run, or
 * wcpcap=cap's limit reached, sends the run out and ends the round.
 * After that, stock still walks the rest of the range page by page
 * (seed 004's waste; 2.6.33 redirtied each, charging the slice: here a
 * copy of it, tail_budget).  Return <0 an error, 1 to stop the walk.
 */
static int mpage_da_writepage(struct page *page,
			      struct writeback_control *wbc,
			      struct mpage_data *mpd)
{
	int ret;

	if (mpd->io_done) {
		unlock_page(page);
		return --mpd->tail_budget <= 0 &&
		       wbc->sync_mode == WB_SYNC_NONE;
	}
	if (mpd->ext_nr &&
	    (page->index != mpd->ext[0]->index + mpd->ext_nr ||
	     (mpd->ext_nr == mpd->ext_size && mpage_da_grow(mpd)))) {
		/* not part of the run (or no room): it waits a round */
		ret = mpage_da_map_and_submit(mpd, wbc);
		unlock_page(page);
		return ret;
	}
	if (!mpd->ext_size && mpage_da_grow(mpd)) {
		unlock_page(page);
		return -ENOMEM;
	}
	get_page(page);
	mpd->ext[mpd->ext_nr++] = page;
	if (mpd->cap && mpd->ext_nr >= mpd->cap)
		return mpage_da_map_and_submit(mpd, wbc);
	return 0;
}

/*
 * ->writepage declines @page (held by the embedder, so still dirty and
 * tagged: the kernel's clear_page_dirty_for_io + __set_page_dirty_nobuffers
 * pair nets to nothing on NR_FILE_DIRTY here).  What is left of the
 * redirty: pages_skipped, a new dirtying in the counts (3.2's
 * account_page_dirtied; mainline's folio_account_redirty takes it back:
 * skipcount=), and the inode marked I_DIRTY_PAGES again, which
 * writeback_single_inode() cleared before calling writepages.
 * Return: 0 if the page is not dirty (nothing to decline).
 */
static int redirty_page_for_writepage(struct writeback_control *wbc,
				      struct page *page)
{
	struct address_space *mapping = page->mapping;
	struct uf_cache *c = mapping_cache(mapping);

	if (!PageDirty(page))
		return 0;
	wbc->pages_skipped++;
	if (!POLICY_KNOB(c, skipcount_mainline) &&
	    mapping_cap_account_dirty(mapping)) {
		inc_vm_state(c, NR_DIRTIED);
		inc_bdi_stat(mapping->backing_dev_info, BDI_DIRTIED);
	}
	if (mapping->host)
		__mark_inode_dirty(mapping->host, I_DIRTY_PAGES);
	return 1;
}

/*
 * A page another writer cleaned is skipped by integrity writeback, as in
 * the kernel, where its write is then in fdatawait's hands: the kernel
 * tags it WRITEBACK when it sets PG_writeback.  Here a request being filled
 * sets PG_writeback page by page and moves the tags when it is closed
 * (mpage_writepage, mpage_flush), so until then the page is still tagged
 * DIRTY/TOWRITE, which is how this walk found it, and fdatawait's walk of
 * the WRITEBACK tag would not: such a page is waited for (a page tagged
 * already is left to fdatawait, as in the kernel), our own request sent
 * first, as for a dirty page under writeback.  Without this, fsync
 * returned while the flusher was filling a request of the file (the API
 * fuzzer, 1 run in 300).  Page lock held.
 */
static bool writeback_untagged(struct address_space *mapping,
			       struct page *page)
{
	int tagged;

	if (!PageWriteback(page))
		return false;
	spin_lock(&mapping->tree_lock);
	tagged = radix_tree_tag_get(&mapping->page_tree, page->index,
				    PAGECACHE_TAG_WRITEBACK);
	spin_unlock(&mapping->tree_lock);
	return !tagged;		/* tagged: fdatawait will find it */
}

/* pagevec_release() */
static void release_pages(struct uf_cache *c, struct page **pages,
			  unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		put_page(c, pages[i]);
}

/*
 * write_cache_pages() proper, as in 3.2: walk the DIRTY (or, for
 * integrity writeback, TOWRITE) pages of the range in index order,
 * PAGEVEC_SIZE at a time, and write each that is still ours and dirty.
 */
static int __write_cache_pages(struct address_space *mapping,
			       struct writeback_control *wbc,
			       struct mpage_data *mpd)
{
	struct page *pages[PAGEVEC_SIZE];
	unsigned long writeback_index = 0;
	unsigned long index, end, done_index, next_index = 0;
	unsigned int nr_pages, i;
	int ret = 0, done = 0, cycled, range_whole = 0, tag;
	/*
	 * 6.18's writeback_iter() (2504) never wraps a range_cyclic walk back
	 * to index 0: it goes from writeback_index to the end only, as since
	 * Dave Chinner's "mm/page-writeback.c: fix range_cyclic writeback vs
	 * writepages deadlock" (commit 64081362e8ff, v4.20), which made pages
	 * be locked in ascending order only.  The 3.x presets keep the wrap.
	 */
	bool mainline = cache_bdp_is(mpd->cache,
				     balance_dirty_pages_ratelimited_mainline);

	if (wbc->range_cyclic) {
		/* a hint shared by the flusher and fsync: read it once */
		writeback_index = __atomic_load_n(&mapping->writeback_index,
						  __ATOMIC_RELAXED);
		index = writeback_index;
		cycled = index == 0 || mainline;
		end = ULONG_MAX;
	} else {
		index = (unsigned long)(wbc->range_start >> PAGE_SHIFT);
		end = (unsigned long)(wbc->range_end >> PAGE_SHIFT);
		if (wbc->range_start == 0 && wbc->range_end == LLONG_MAX)
			range_whole = 1;
		cycled = 1;	/* no wrap-around */
	}
	if (wbc->sync_mode == WB_SYNC_ALL || wbc->tagged_writepages)
		tag = PAGECACHE_TAG_TOWRITE;
	else
		tag = PAGECACHE_TAG_DIRTY;
retry:
	if (wbc->sync_mode == WB_SYNC_ALL || wbc->tagged_writepages)
		tag_pages_for_writeback(mapping, index, end);
	done_index = index;
	while (!done && index <= end) {
		nr_pages = find_get_pages_tag(mapping, &index, tag,
				(unsigned int)min_ul(end - index,
						     PAGEVEC_SIZE - 1) + 1,
				pages);
		if (nr_pages == 0)
			break;

		for (i = 0; i < nr_pages; i++) {
			struct page *page = pages[i];

			/*
			 * The page may have been truncated meanwhile, but its
			 * index cannot change while we hold a reference.
			 * Past the end only on a bounded range (end is
			 * ULONG_MAX on the first cyclic pass).
			 */
			if (page->index > end) {
				done = 1;
				break;
			}

			done_index = page->index;
			next_index = page->index + 1;

			/*
			 * A page the embedder holds for writing (uf_page_get
			 * with UF_PAGE_WRITE) is uflush's "locked buffer":
			 * non-integrity writeback skips it as
			 * block_write_full_page() does with
			 * redirty_page_for_writepage() when it cannot lock a
			 * buffer.  That happens in ->writepage, so the page
			 * is charged to the slice as a written one (3.2 and
			 * mainline alike).  Its holder has the page lock:
			 * the steps before ->writepage are skipped, not
			 * waited for.  Integrity writeback waits below.
			 */
			if (wbc->sync_mode == WB_SYNC_NONE &&
			    PageOwnerPriv1(page)) {
				if (!redirty_page_for_writepage(wbc, page))
					continue;	/* not dirty: not ours */
				if (--wbc->nr_to_write <= 0) {
					done = 1;
					break;
				}
				continue;
			}

			/* submit our pending request (and run) before we
			 * may sleep: their pages' waiters may hold this lock */
			if (!trylock_page(page)) {
				if (mpd->da_inode && mpd->ext_nr) {
					ret = mpage_da_map_and_submit(mpd,
								      wbc);
					if (ret) {
						done = 1;
						break;
					}
				}
				mpage_unplug(mpd);
				lock_page(page);
			}

			/* truncated, or written by someone else: skip it,
			 * even for integrity writeback (it is not ours now) */
			if (page->mapping != mapping || !PageDirty(page)) {
				/* decided under the lock: once it is dropped,
				 * truncate may take the page from @mapping */
				bool wait = page->mapping == mapping &&
					    wbc->sync_mode != WB_SYNC_NONE &&
					    writeback_untagged(mapping, page);

				unlock_page(page);
				if (wait) {
					mpage_unplug(mpd);
					wait_on_page_writeback(page);
				}
				continue;
			}

			if (PageWriteback(page)) {
				if (wbc->sync_mode == WB_SYNC_NONE) {
					unlock_page(page);
					continue;
				}
				mpage_unplug(mpd);
				wait_on_page_writeback(page);
			}

			BUG_ON(PageWriteback(page));
			mpd->scanned++;
			if (mpd->da_inode) {
				ret = mpage_da_writepage(page, wbc, mpd);
				if (ret < 0) {
					done = 1;
					break;
				}
				/* cap: the round ends with its run (seed 004) */
				if (ret > 0 || (mpd->io_done && mpd->cap) ||
				    (wbc->nr_to_write <= 0 &&
				     wbc->sync_mode == WB_SYNC_NONE)) {
					ret = 0;
					done = 1;
					break;
				}
				continue;
			}

			if (!clear_page_dirty_for_io(page)) {
				unlock_page(page);
				continue;
			}
			/* a world's CPU model: found by tag, locked, cleaned */
			uf_sim_charge(UF_SIM_COST_PAGE_OP, 3);

			ret = mpage_writepage(page, wbc, mpd);
			if (ret) {
				/*
				 * Resume past the failed page so that a bad
				 * block does not stall background writeback
				 * of the whole file.
				 */
				done_index = page->index + 1;
				done = 1;
				break;
			}

			/*
			 * Only non-integrity writeback stops at the slice:
			 * integrity writeback must write every page it
			 * tagged before it started.
			 */
			if (--wbc->nr_to_write <= 0 &&
			    wbc->sync_mode == WB_SYNC_NONE) {
				done = 1;
				break;
			}
		}
		release_pages(mpd->cache, pages, nr_pages);
		cond_resched();
	}
	if (!cycled && !done) {
		/* hit the end with slice left: wrap to the start of the file */
		cycled = 1;
		index = 0;
		end = writeback_index - 1;
		goto retry;
	}
	if (mainline) {
		/*
		 * writeback_iter(): a walk cut short resumes after the page it
		 * stopped at (folio_next_index), one that reached the end
		 * starts the next from 0; only range_cyclic walks move it.
		 */
		if (wbc->range_cyclic)
			__atomic_store_n(&mapping->writeback_index,
					 done ? next_index : 0,
					 __ATOMIC_RELAXED);
	} else if (wbc->range_cyclic ||
		   (range_whole && wbc->nr_to_write > 0)) {
		__atomic_store_n(&mapping->writeback_index, done_index,
				 __ATOMIC_RELAXED);
	}

	return ret;
}

/*
 * A file that maps at writeback (ext4's ext4_da_writepages loop): rounds
 * of gather, map, submit, from the start of the range each time, while
 * the mapper makes progress and (WB_SYNC_NONE) the slice lasts.
 */
static int write_cache_pages_da(struct address_space *mapping,
				struct writeback_control *wbc,
				struct mpage_data *mpd)
{
	const struct uf_file_ops *ops = mapping->host->ops;
	long before;
	int ret;

	mpd->da_inode = mapping->host;
	if (POLICY_KNOB(mpd->cache, wcp_cap))
		mpd->cap = ops->max_extent_pages ? ops->max_extent_pages :
						   DA_MAX_EXTENT_PAGES;
	do {
		mpd->io_done = false;
		mpd->tail_budget = wbc->nr_to_write;
		before = mpd->written;
		ret = __write_cache_pages(mapping, wbc, mpd);
		/* the run that reached the end of the range */
		if (!ret)
			ret = mpage_da_map_and_submit(mpd, wbc);
		else
			mpage_da_release(mpd, 0);
	} while (!ret && mpd->io_done && mpd->written > before &&
		 (wbc->sync_mode == WB_SYNC_ALL || wbc->nr_to_write > 0));
	kfree(mpd->ext);
	/* integrity writeback left pages the mapper would not map: say so */
	if (!ret && mpd->map_stalled && wbc->sync_mode == WB_SYNC_ALL)
		ret = -EAGAIN;
	return ret;
}

/**
 * write_cache_pages - write a mapping's dirty pages
 * @mapping: the mapping
 * @wbc: what to write: range (or range_cyclic), sync_mode, nr_to_write
 *
 * The filesystem's ->writepages (mpage_writepages): the page walk with
 * contiguous pages merged into write requests of up to bdi->max_io_pages
 * pages.  Every request is submitted before returning; their completions
 * come later (filemap_fdatawait waits for them).
 * Return: 0, or the error of a writepage step.
 */
int write_cache_pages(struct address_space *mapping,
		      struct writeback_control *wbc)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct inode *host = mapping->host;
	struct mpage_data mpd = {
		.mapping = mapping,
		.bdi = bdi,
		.cache = mapping_cache(mapping),
		.wr = NULL,
	};
	int ret;

	if (WARN_ON_ONCE(!bdi))
		return -ENODEV;
	mpd.max_pages = bdi_max_io_pages(bdi);
	if (host && host->ops && host->ops->map_blocks)
		ret = write_cache_pages_da(mapping, wbc, &mpd);
	else
		ret = __write_cache_pages(mapping, wbc, &mpd);
	mpage_unplug(&mpd);
	__atomic_add_fetch(&bdi->wcp_scanned, mpd.scanned, __ATOMIC_RELAXED);
	return ret;
}

/* The embedder's view of which writeback asks (uf_file_ops). */
static enum uf_wb_kind wbc_to_kind(const struct writeback_control *wbc)
{
	if (wbc->sync_mode == WB_SYNC_ALL)
		return UF_WB_SYNC;
	if (wbc->for_kupdate)
		return UF_WB_KUPDATE;
	if (wbc->for_background)
		return UF_WB_BACKGROUND;
	return UF_WB_OTHER_NONE;
}

static bool writepages_vetoed(struct inode *inode,
			      struct writeback_control *wbc)
{
	struct inode *old;
	int ret;

	if (!inode || !inode->ops || !inode->ops->writepages_veto)
		return false;
	old = file_op_enter(inode);
	ret = inode->ops->writepages_veto(inode->handle, inode->priv,
					  wbc_to_kind(wbc));
	file_op_exit(old);
	return ret != 0;
}

/**
 * do_writepages - write a mapping's dirty pages, as its filesystem does
 * @mapping: the mapping
 * @wbc: the writeback control
 *
 * The embedder may decline a kind of writeback (uf_file_ops.
 * writepages_veto), as btrfs declined kupdate for its btree inode: nothing
 * is written, the pages stay dirty and nr_to_write is untouched.
 * Return: 0; -EAGAIN if integrity writeback (WB_SYNC_ALL) was declined, so
 * that fsync can say so; or an error of write_cache_pages.
 */
int do_writepages(struct address_space *mapping,
		  struct writeback_control *wbc)
{
	struct backing_dev_info *wb = mapping->backing_dev_info;
	bool mainline;
	int ret;

	if (wbc->nr_to_write <= 0)
		return 0;
	if (writepages_vetoed(mapping->host, wbc))
		return wbc->sync_mode == WB_SYNC_ALL ? -EAGAIN : 0;
	/* 6.18 (2593): the estimate follows the writepages calls */
	mainline = wb && cache_bdp_is(wb->cache,
				      balance_dirty_pages_ratelimited_mainline);
	if (mainline)
		wb_bandwidth_estimate_start(wb);
	ret = write_cache_pages(mapping, wbc);
	if (mainline &&
	    time_is_before_jiffies(READ_ONCE(wb->bw_time_stamp) +
				   BANDWIDTH_INTERVAL))
		wb_update_bandwidth(wb);
	return ret;
}
