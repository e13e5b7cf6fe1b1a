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
 * 3.2, range_cyclic wrap and writeback_index rules included),
 * do_writepages, global_dirty_limits, bdi_dirty_limit, bdi_set_min/max_
 * ratio, __bdi_update_bandwidth / bdi_update_write_bandwidth,
 * update_dirty_limit and writeback_chunk_size (which 3.2 keeps in
 * fs/fs-writeback.c).
 *
 * Simplified, and why:
 *  - "memory" is a struct uf_cache; dirtyable memory is its free plus file
 *    pages (no highmem, no reserves);
 *  - no PF_LESS_THROTTLE / real-time boost of the limits (no such tasks);
 *  - balance_dirty_pages is the simple pre-IO-less throttle (kick the
 *    flusher, sleep until under the limit); the IO-less one with
 *    pos_ratio and dirty_ratelimit is a policy of its own, to come;
 *  - the filesystem is one ->writepages: mpage-style, each run of
 *    contiguous dirty pages (up to bdi->max_io_pages) becomes one
 *    asynchronous write request; there is no per-page ->writepage;
 *  - the per-device proportions count events with an aged denominator
 *    (engine/lib/proportions.h says how that differs from lib/proportions.c).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "mm/backing-dev.h"
#include "kernel/bug.h"
#include "fs/fs.h"
#include "io/io.h"
#include "kernel/jiffies.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "kernel/printk.h"
#include "lib/proportions.h"
#include "lib/radix-tree.h"
#include "kernel/sched.h"
#include "lib/slab.h"
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
/* tag_pages_for_writeback() drops the tree lock every this many pages. */
#define WRITEBACK_TAG_BATCH	4096
/* The most buffers one vectored write takes (UIO_MAXIOV). */
#define WB_MAX_IOV		1024U
/* printk_ratelimit(): at most this many write-error messages per 5 s. */
#define WB_ERR_BURST		10

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)

static inline unsigned long min_ul(unsigned long a, unsigned long b)
{
	return a < b ? a : b;
}

static inline unsigned long max_ul(unsigned long a, unsigned long b)
{
	return a > b ? a : b;
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
};

struct bdi_share {
	struct bdi_share *next;
	const struct backing_dev_info *bdi;
	struct wb_domain *dom;
	struct prop_local_single completions;
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
	s->max_ratio = 100;
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
}

/* 3.2 resets the smoothed limit to the threshold when a sysctl changes. */
void writeback_set_ratelimit(struct uf_cache *c)
{
	struct wb_domain *dom = cache_domain(c);
	unsigned long background_thresh, dirty_thresh;

	if (!dom)
		return;
	__global_dirty_limits(c, &background_thresh, &dirty_thresh);
	spin_lock(&dom->lock);
	dom->dirty_limit = dirty_thresh;
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
	if (!limit) {
		/* page_writeback_init() not run yet: the threshold itself */
		__global_dirty_limits(c, &background_thresh, &dirty_thresh);
		limit = dirty_thresh;
	}
	return limit;
}

void bdi_writeout_inc(struct backing_dev_info *bdi)
{
	struct bdi_share *s = bdi_share(bdi);

	inc_bdi_stat(bdi, BDI_WRITTEN);
	if (s)
		prop_inc_single_max(&s->dom->completions, &s->completions, 1,
				    READ_ONCE(s->max_ratio));
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
 * device, max_ratio caps it.
 */
unsigned long bdi_dirty_limit(struct backing_dev_info *bdi,
			      unsigned long dirty)
{
	struct bdi_share *s = bdi_share(bdi);
	unsigned int min_ratio = 0, max_ratio = 100, sum_min = 0;
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

	bdi_dirty = (uint64_t)dirty * (100 - sum_min) / 100;
	bdi_dirty *= (uint64_t)numerator;
	bdi_dirty /= (uint64_t)denominator;

	bdi_dirty += (uint64_t)dirty * min_ratio / 100;
	if (bdi_dirty > (uint64_t)dirty * max_ratio / 100)
		bdi_dirty = (uint64_t)dirty * max_ratio / 100;
	return (unsigned long)bdi_dirty;
}

int bdi_set_min_ratio(struct backing_dev_info *bdi, unsigned int min_ratio)
{
	struct bdi_share *s = bdi_share(bdi);
	int ret = 0;

	if (!s)
		return -ENOMEM;
	spin_lock(&s->dom->lock);
	if (min_ratio > s->max_ratio) {
		ret = -EINVAL;
	} else {
		/* the reserves of all devices must leave some to share */
		unsigned int others = s->dom->bdi_min_ratio - s->min_ratio;

		if (others + min_ratio < 100) {
			s->dom->bdi_min_ratio = others + min_ratio;
			s->min_ratio = min_ratio;
		} else {
			ret = -EINVAL;
		}
	}
	spin_unlock(&s->dom->lock);
	return ret;
}

int bdi_set_max_ratio(struct backing_dev_info *bdi, unsigned int max_ratio)
{
	struct bdi_share *s = bdi_share(bdi);
	int ret = 0;

	if (!s)
		return -ENOMEM;
	if (max_ratio > 100)
		return -EINVAL;
	spin_lock(&s->dom->lock);
	if (s->min_ratio > max_ratio)
		ret = -EINVAL;
	else
		__atomic_store_n(&s->max_ratio, max_ratio, __ATOMIC_RELAXED);
	spin_unlock(&s->dom->lock);
	return ret;
}

/**
 * over_bground_thresh - should background writeback (start or) go on?
 * @bdi: the device whose flusher asks
 *
 * The global test: dirty (not yet written) pages of the whole cache over
 * the background threshold.  Pages under writeback do not count: the
 * question is whether to put more under writeback.
 */
bool over_bground_thresh(struct backing_dev_info *bdi)
{
	struct uf_cache *c = bdi->cache;
	unsigned long background_thresh, dirty_thresh;

	global_dirty_limits(c, &background_thresh, &dirty_thresh);

	if (global_page_state(c, NR_FILE_DIRTY) +
	    global_page_state(c, NR_UNSTABLE_NFS) > background_thresh)
		return true;

	/*
	 * Per-device background threshold (seed 001, merged in 3.2; 3.1 had
	 * only the test above).  When the policy switch for it lands, add:
	 *
	 *	if (bdi_stat(bdi, BDI_RECLAIMABLE) >
	 *	    bdi_dirty_limit(bdi, background_thresh))
	 *		return true;
	 *
	 * so that a device whose own dirty backlog exceeds its share of the
	 * background threshold keeps writing while the global count is low.
	 */
	return false;
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
	bdi->avg_write_bandwidth = avg;
}

/*
 * 3.2's __bdi_update_bandwidth() without the dirty-ratelimit half (that
 * belongs to the IO-less throttle).  @thresh != 0 also moves the smoothed
 * global dirty limit.  Serialised by wb->list_lock.
 */
static void __bdi_update_bandwidth(struct backing_dev_info *bdi,
				   unsigned long thresh, unsigned long dirty,
				   unsigned long start_time)
{
	unsigned long now = jiffies;
	unsigned long elapsed = now - bdi->bw_time_stamp;
	unsigned long written;

	if (elapsed < BANDWIDTH_INTERVAL)
		return;

	written = bdi_stat(bdi, BDI_WRITTEN);

	/*
	 * Skip a quiet time when the device was under-used (the flusher idle
	 * for over a second): it would drag the estimate down for nothing.
	 */
	if (elapsed > (unsigned long)HZ &&
	    time_before(bdi->bw_time_stamp, start_time))
		goto snapshot;

	if (thresh)
		global_update_bandwidth(bdi->cache, thresh, dirty, now);
	bdi_update_write_bandwidth(bdi, elapsed, written);

snapshot:
	bdi->written_stamp = written;
	__atomic_store_n(&bdi->bw_time_stamp, now, __ATOMIC_RELAXED);
}

/**
 * bdi_update_bandwidth - refresh the device's write bandwidth estimate
 * @bdi: the device
 * @start_time: when the caller's writeback work started (jiffies)
 *
 * 3.2's wb_update_bandwidth(): called by wb_writeback() after each pass,
 * with wb->list_lock held (which serialises the estimate).  At most one
 * update per BANDWIDTH_INTERVAL.
 */
void bdi_update_bandwidth(struct backing_dev_info *bdi,
			  unsigned long start_time)
{
	assert_spin_locked(&bdi->wb.list_lock);
	__bdi_update_bandwidth(bdi, 0, 0, start_time);
}

/* From the throttle, which does not hold list_lock. */
static void bdi_update_bandwidth_thresh(struct backing_dev_info *bdi,
					unsigned long thresh,
					unsigned long dirty,
					unsigned long start_time)
{
	/* the kernel's unlocked fast path; the stamp is read atomically */
	if (time_is_after_eq_jiffies(__atomic_load_n(&bdi->bw_time_stamp,
						     __ATOMIC_RELAXED) +
				     BANDWIDTH_INTERVAL))
		return;
	spin_lock(&bdi->wb.list_lock);
	__bdi_update_bandwidth(bdi, thresh, dirty, start_time);
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
 * 4 MiB-aligned so that large files are written in big extents.  (Before
 * 3.2 it was min(MAX_WRITEBACK_PAGES = 1024, nr_pages).)
 */
long writeback_chunk_size(struct backing_dev_info *bdi,
			  struct wb_writeback_work *work)
{
	long pages;

	if (work->sync_mode == WB_SYNC_ALL || work->tagged_writepages)
		return LONG_MAX;

	pages = (long)min_ul(bdi->avg_write_bandwidth / 2,
			     global_dirty_limit(bdi->cache) / DIRTY_SCOPE);
	if (pages > work->nr_pages)
		pages = work->nr_pages;
	pages = (long)(((unsigned long)pages + MIN_WRITEBACK_PAGES) &
		       ~(MIN_WRITEBACK_PAGES - 1));
	return pages;
}

/* ------------------------------------------------------------------ */
/* Dirty throttling                                                    */

static bool dirty_exceeded(struct uf_cache *c, unsigned long *pbackground,
			   unsigned long *pdirty, unsigned long *pnr_dirty)
{
	unsigned long nr_reclaimable;

	__global_dirty_limits(c, pbackground, pdirty);
	nr_reclaimable = global_page_state(c, NR_FILE_DIRTY) +
			 global_page_state(c, NR_UNSTABLE_NFS);
	*pnr_dirty = nr_reclaimable + global_page_state(c, NR_WRITEBACK);
	return nr_reclaimable > *pbackground;
}

/*
 * Kick background writeback once the cache is over the background
 * threshold; over the dirty threshold, also sleep on cache->dirty_wait
 * (writeback completions wake it) until back under it.  The sleep is timed
 * (HZ/10) so that a missed wakeup or a limit raised meanwhile costs at
 * most one period.
 */
static void balance_dirty_pages(struct backing_dev_info *bdi)
{
	struct uf_cache *c = bdi->cache;
	unsigned long background_thresh, dirty_thresh, nr_dirty;
	unsigned long start_time = jiffies;
	long pause = (long)max_ul((unsigned long)HZ / 10, 1);
	bool traced = false;
	DEFINE_WAIT(wait);

	for (;;) {
		bool over_bg = dirty_exceeded(c, &background_thresh,
					      &dirty_thresh, &nr_dirty);

		if (over_bg && !writeback_in_progress(bdi))
			bdi_start_background_writeback(bdi);
		if (nr_dirty <= dirty_thresh || READ_ONCE(c->closing))
			break;

		if (!traced) {
			trace_global_dirty_state(c, background_thresh,
						 dirty_thresh);
			traced = true;
		}
		/* the flusher may be between works: make sure it runs */
		bdi_start_background_writeback(bdi);
		bdi_update_bandwidth_thresh(bdi, dirty_thresh, nr_dirty,
					    start_time);

		prepare_to_wait(&c->dirty_wait, &wait, TASK_UNINTERRUPTIBLE);
		/* re-check once queued: a completion may have just woken */
		dirty_exceeded(c, &background_thresh, &dirty_thresh,
			       &nr_dirty);
		if (nr_dirty > dirty_thresh && !READ_ONCE(c->closing))
			io_schedule_timeout(pause);
		finish_wait(&c->dirty_wait, &wait);
	}
}

/**
 * balance_dirty_pages_ratelimited - after dirtying a page of @mapping
 * @mapping: the mapping just dirtied
 *
 * Called by writers after each page they dirty.  Never throttles a kernel
 * thread of uflush (the flushers): they are what makes room.
 */
void balance_dirty_pages_ratelimited(struct address_space *mapping)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;

	if (!bdi)
		return;
	if (current->flags & PF_KTHREAD)
		return;
	balance_dirty_pages(bdi);
}

/* ------------------------------------------------------------------ */
/* Dirty and writeback accounting                                      */

/* The kernel's bdi_cap_account_dirty(): devices without a bdi don't. */
static inline bool mapping_cap_account_dirty(struct address_space *mapping)
{
	return mapping->backing_dev_info != NULL;
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
	struct uf_cache *c;
	int ret;

	if (!mapping)
		return TestClearPageWriteback(page);

	c = mapping_cache(mapping);
	spin_lock(&mapping->tree_lock);
	ret = TestClearPageWriteback(page);
	if (ret) {
		radix_tree_tag_clear(&mapping->page_tree, page->index,
				     PAGECACHE_TAG_WRITEBACK);
		if (mapping_cap_account_dirty(mapping)) {
			dec_bdi_stat(mapping->backing_dev_info, BDI_WRITEBACK);
			bdi_writeout_inc(mapping->backing_dev_info);
		}
	}
	spin_unlock(&mapping->tree_lock);
	if (ret) {
		dec_vm_state(c, NR_WRITEBACK);
		inc_vm_state(c, NR_WRITTEN);
	}
	return ret;
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
	struct page **pages;		/* after iov[max_pages] */
	struct iovec iov[];
};

/* The state of one writepages call: the request being filled. */
struct mpage_data {
	struct address_space *mapping;
	struct backing_dev_info *bdi;
	struct uf_cache *cache;
	struct wb_request *wr;
	unsigned int max_pages;
};

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
	wr->pages = (struct page **)(void *)&wr->iov[max_pages];
}

static void wb_request_add(struct wb_request *wr, struct page *page,
			   struct uf_cache *c)
{
	unsigned int i = wr->nr_pages++;

	wr->pages[i] = page;
	wr->iov[i].iov_base = page_address(c, page);
	wr->iov[i].iov_len = PAGE_SIZE;
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
	unsigned int i;

	if (res < 0)
		wb_request_error(wr, res);
	for (i = 0; i < wr->nr_pages; i++) {
		struct page *page = wr->pages[i];

		if (res < 0)
			SetPageError(page);
		page->private = NULL;
		end_page_writeback(page);
	}
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

	wr->req.op = UF_IO_WRITE;
	wr->req.offset = inode->dev_offset +
			 ((uint64_t)wr->first_index << PAGE_SHIFT);
	wr->req.iov = wr->iov;
	wr->req.nr_iov = wr->nr_pages;
	wr->req.end_io = end_wb_request;
	wr->req.private = wr;
}

/* Submit the request being filled, if any (the kernel's mpage_bio_submit;
 * also called before sleeping, as schedule() flushes a block plug). */
static void mpage_flush(struct mpage_data *mpd)
{
	struct wb_request *wr = mpd->wr;
	struct uf_io_req *req;
	int ret = -ENODEV;

	if (!wr)
		return;
	mpd->wr = NULL;
	wb_request_prep(wr);
	req = &wr->req;
	if (mpd->bdi->bdev)
		ret = uf_bdev_submit(mpd->bdi->bdev, &req, 1);
	/* refused outright: it failed as if the device had said so */
	if (ret)
		end_wb_request(req, ret);
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
	if (wr)
		wb_request_init(wr, mpd->mapping, index, max);
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
	mpage_flush(&mpd);
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
	if (wr && page->index != wr->first_index + wr->nr_pages)
		mpage_flush(mpd);
	if (!mpd->wr) {
		mpd->wr = wb_request_start(mpd, page->index);
		if (!mpd->wr) {
			mpage_write_one_sync(mpd, page);
			return 0;
		}
	}
	wr = mpd->wr;
	if (test_set_page_writeback(page))
		WARN_ON_ONCE(1);	/* the caller checked under the lock */
	wb_request_add(wr, page, mpd->cache);
	unlock_page(page);
	if (wr->nr_pages == wr->max_pages)
		mpage_flush(mpd);
	return 0;
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
	unsigned long index, end, done_index;
	unsigned int nr_pages, i;
	int ret = 0, done = 0, cycled, range_whole = 0, tag;

	if (wbc->range_cyclic) {
		/* a hint shared by the flusher and fsync: read it once */
		writeback_index = __atomic_load_n(&mapping->writeback_index,
						  __ATOMIC_RELAXED);
		index = writeback_index;
		cycled = index == 0;
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

			/*
			 * A page the embedder holds for writing (uf_page_get
			 * with UF_PAGE_WRITE) is uflush's "locked buffer":
			 * non-integrity writeback skips it and says so in
			 * pages_skipped, as block_write_full_page() does with
			 * redirty_page_for_writepage() when it cannot lock a
			 * buffer.  Integrity writeback waits for it below.
			 */
			if (wbc->sync_mode == WB_SYNC_NONE &&
			    PageOwnerPriv1(page)) {
				wbc->pages_skipped++;
				continue;
			}

			/* submit our pending request before we may sleep:
			 * its pages' waiters may hold this lock */
			if (!trylock_page(page)) {
				mpage_flush(mpd);
				lock_page(page);
			}

			/* truncated, or written by someone else: skip it,
			 * even for integrity writeback (it is not ours now) */
			if (page->mapping != mapping || !PageDirty(page)) {
				unlock_page(page);
				continue;
			}

			if (PageWriteback(page)) {
				if (wbc->sync_mode == WB_SYNC_NONE) {
					unlock_page(page);
					continue;
				}
				mpage_flush(mpd);
				wait_on_page_writeback(page);
			}

			BUG_ON(PageWriteback(page));
			if (!clear_page_dirty_for_io(page)) {
				unlock_page(page);
				continue;
			}

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
	if (wbc->range_cyclic || (range_whole && wbc->nr_to_write > 0))
		__atomic_store_n(&mapping->writeback_index, done_index,
				 __ATOMIC_RELAXED);

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
	ret = __write_cache_pages(mapping, wbc, &mpd);
	mpage_flush(&mpd);
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
	if (!inode || !inode->ops || !inode->ops->writepages_veto)
		return false;
	return inode->ops->writepages_veto((struct uf_file *)inode,
					   inode->priv, wbc_to_kind(wbc)) != 0;
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
	if (wbc->nr_to_write <= 0)
		return 0;
	if (writepages_vetoed(mapping->host, wbc))
		return wbc->sync_mode == WB_SYNC_ALL ? -EAGAIN : 0;
	return write_cache_pages(mapping, wbc);
}
