/* SPDX-License-Identifier: MIT */
/*
 * engine/mm/backing-dev.h - struct backing_dev_info and struct bdi_writeback
 * (include/linux/backing-dev.h, 3.2 era): one per device, with the dirty
 * inode lists and the flusher thread that works them.
 *
 * Locks, in the kernel's order: bdi->wb_lock (work_list), wb->list_lock (the
 * b_* lists), inode->i_lock.  Implemented in engine/mm/backing-dev.c (setup,
 * flusher thread start/stop, stats, bdi_dirty_limit) and fs-writeback.c.
 */
#ifndef UF_BACKING_DEV_H
#define UF_BACKING_DEV_H

#include <stdbool.h>

#include "io/io.h"
#include "lib/list.h"
#include "mm/mm.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"
#include "kernel/timer.h"
#include "policies/policy.h"

/* bdi->state bits */
enum bdi_state {
	BDI_pending,
	BDI_wb_alloc,
	BDI_async_congested,
	BDI_sync_congested,
	BDI_registered,
	BDI_writeback_running,	/* wb_do_writeback() is running */
};

/* 3.2 include/linux/blkdev.h: the two request lists of a queue */
enum { BLK_RW_ASYNC = 0, BLK_RW_SYNC = 1 };

/*
 * A bdi's nr_requests when none was given: the queue depth uf_bdev_open()
 * uses by default (io/blkdev.c), the number of requests a submitter can
 * have in flight before it sleeps for a slot, as a 3.2 task sleeps in
 * get_request_wait() once nr_requests are allocated.
 */
#define BDI_DEFAULT_NR_REQUESTS	64

/* bdi->capabilities (mainline's): throttle on the device's own counters */
#define BDI_CAP_STRICTLIMIT	0x00000010

enum bdi_stat_item {
	BDI_RECLAIMABLE,	/* dirty pages of this device */
	BDI_WRITEBACK,		/* pages under writeback */
	BDI_DIRTIED,		/* total dirtied */
	BDI_WRITTEN,		/* total written */
	NR_BDI_STAT_ITEMS,
};

struct bdi_writeback {
	struct backing_dev_info *bdi;
	unsigned long last_old_flush;	/* last kupdate run */
	unsigned long last_active;	/* last time the flusher wrote */
	struct task_struct *task;	/* the flusher */
	struct timer_list wakeup_timer;	/* delayed flusher wakeup */
	struct list_head b_dirty;	/* dirty inodes, newest at the head */
	struct list_head b_io;		/* parked for writeback, tail first */
	struct list_head b_more_io;	/* parked for more writeback */
	struct list_head b_more_io_wait; /* opportunistic retry (RIW only) */
	spinlock_t list_lock;
};

struct backing_dev_info {
	struct list_head bdi_list;	/* cache->bdi_list */
	char name[32];			/* "7:0" for loop0, as the kernel names */
	unsigned long state;		/* BDI_* bits */
	long bdi_stat[NR_BDI_STAT_ITEMS];

	/* write bandwidth estimate (pages/s), mm/page-writeback.c */
	unsigned long bw_time_stamp;
	unsigned long dirtied_stamp;
	unsigned long written_stamp;
	unsigned long write_bandwidth;
	unsigned long avg_write_bandwidth;

	/*
	 * The IO-less throttle's base rate (pages/s), re-estimated every
	 * 200 ms; each writer of the device is throttled at about it, and it
	 * tracks balanced_dirty_ratelimit (~ write_bw / N writers) in small
	 * steps.  dirty_exceeded: some writer found the device or the cache
	 * over its limit (the ratelimit front-end then checks more often).
	 */
	unsigned long dirty_ratelimit;
	unsigned long balanced_dirty_ratelimit;
	int dirty_exceeded;
	unsigned int capabilities;	/* BDI_CAP_* */
	long bdp_written;		/* pages written by dirtiers (3.1) */

	struct bdi_writeback wb;
	spinlock_t wb_lock;		/* protects work_list */
	struct list_head work_list;

	struct uf_cache *cache;
	struct uf_bdev *bdev;
	struct super_block *sb;
	unsigned int max_io_pages;	/* cap of one merged write request */
	/* the device queue's segment limits (0: none known), as
	 * bio_add_page() keeps a bio within them: a request is one segment
	 * per physically contiguous run of frames */
	unsigned int max_segments;
	unsigned int max_segment_pages;
	/* the device queue's nr_requests (0: BDI_DEFAULT_NR_REQUESTS):
	 * write-congested past 7/8 of it (bdi_update_congested) */
	unsigned int nr_requests;
	long nr_async_requests;		/* atomic: write requests built and
					 * not completed (rl->count) */
	long write_errors;
	long works_done;
	long wcp_scanned;		/* pages write_cache_pages looked at */
	/* seed 000's decision points, as counts of their tracepoint or
	 * call (the kernel counts them with perf's tracepoint counters) */
	long nr_wb_wait;		/* writeback_wait: no-progress waits */
	long nr_requeue_io;		/* requeue_io() calls */
	long nr_redirty_tail;		/* redirty_tail() calls */
	/* seed 001's decision point: over_bground_thresh() answers where
	 * the device's own test is over and the global one is not, counted
	 * under bgthresh=global too (where it says no): the decisions the
	 * two variants take differently */
	long nr_bg_bdi_only;
	wait_queue_head_t wb_waitq;	/* wb_wait_for_completion-style */
};

static inline void inc_bdi_stat(struct backing_dev_info *bdi,
				enum bdi_stat_item i)
{
	__atomic_add_fetch(&bdi->bdi_stat[i], 1, __ATOMIC_RELAXED);
}

/* __add_bdi_stat(): @nr at once (a request's pages) */
static inline void add_bdi_stat(struct backing_dev_info *bdi,
				enum bdi_stat_item i, long nr)
{
	__atomic_add_fetch(&bdi->bdi_stat[i], nr, __ATOMIC_RELAXED);
}

static inline void dec_bdi_stat(struct backing_dev_info *bdi,
				enum bdi_stat_item i)
{
	__atomic_sub_fetch(&bdi->bdi_stat[i], 1, __ATOMIC_RELAXED);
}

static inline unsigned long bdi_stat(struct backing_dev_info *bdi,
				     enum bdi_stat_item i)
{
	long v = __atomic_load_n(&bdi->bdi_stat[i], __ATOMIC_RELAXED);

	return v < 0 ? 0 : (unsigned long)v;
}

static inline bool wb_has_dirty_io(struct bdi_writeback *wb)
{
	return !list_empty(&wb->b_dirty) || !list_empty(&wb->b_io) ||
	       !list_empty(&wb->b_more_io) || !list_empty(&wb->b_more_io_wait);
}

static inline bool writeback_in_progress(struct backing_dev_info *bdi)
{
	return test_bit(BDI_writeback_running, &bdi->state);
}

/* ---- engine/mm/backing-dev.c ---- */
int bdi_init(struct backing_dev_info *bdi, struct uf_cache *cache,
	     struct uf_bdev *bdev, const char *name);
int bdi_register(struct backing_dev_info *bdi, bool flusher);
void bdi_unregister(struct backing_dev_info *bdi); /* writes back, stops it */
void bdi_destroy(struct backing_dev_info *bdi);
int bdi_writeback_thread(void *data);
void bdi_wakeup_thread_delayed(struct backing_dev_info *bdi);
/*
 * Congestion, as 3.2 keeps it (mm/backing-dev.c, block/blk-core.c): a
 * bdi is write-congested (BDI_async_congested) once its queue's async
 * requests reach queue_congestion_on_threshold() and until they drop
 * below queue_congestion_off_threshold(); every clear wakes
 * congestion_wait() and wait_iff_congested() sleepers.
 */
unsigned int queue_congestion_on_threshold(struct backing_dev_info *bdi);
unsigned int queue_congestion_off_threshold(struct backing_dev_info *bdi);
/* The bdi's write requests in flight, rl->count[BLK_RW_ASYNC]. */
unsigned long bdi_async_requests(struct backing_dev_info *bdi);
/* Set or clear BDI_async_congested from the count, as get_request() and
 * __freed_request() do; returns whether it is congested now. */
bool bdi_update_congested(struct backing_dev_info *bdi);
void set_bdi_congested(struct backing_dev_info *bdi, int sync);
void clear_bdi_congested(struct backing_dev_info *bdi, int sync);
/*
 * uflush: the timer flags of the kernel @c's policy mirrors, for the
 * timers armed on its behalf (timer=wheel: TIMER_UF_WHEEL).  A cache
 * without a policy (a unit test's) keeps exact expiry.
 */
static inline unsigned int cache_timer_flags(const struct uf_cache *c)
{
	return c->policy && c->policy->timer_wheel ? TIMER_UF_WHEEL : 0;
}

static inline bool bdi_write_congested(struct backing_dev_info *bdi)
{
	return test_bit(BDI_async_congested, &bdi->state);
}
/* Some bdi is congested (3.2's nr_bdi_congested[sync] != 0). */
bool bdi_any_congested(int sync);
/* 3.2's congestion_wait(): sleep up to @timeout for a bdi to leave
 * congestion or a write to complete; the jiffies left. */
long congestion_wait(struct uf_cache *c, int sync, long timeout);
/* Every congested bdi of @c re-evaluated (a write completed). */
void bdi_writeback_done_congestion(struct uf_cache *c);

struct uf_dev_stats;
void bdi_fill_stats(struct backing_dev_info *bdi, struct uf_dev_stats *st);

#endif /* UF_BACKING_DEV_H */
