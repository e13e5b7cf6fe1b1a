// SPDX-License-Identifier: MIT
/*
 * engine/mm/backing-dev.c - mm/backing-dev.c: setting up a device's
 * backing_dev_info, starting and stopping its flusher thread, the delayed
 * wakeup timer, and the numbers the kernel shows in
 * /sys/kernel/debug/bdi/<dev>/stats.
 *
 * The 3.2 kernel starts flushers lazily from a forker thread and lets idle
 * ones exit; uflush starts one per device at uf_dev_open and keeps it (see
 * DESIGN.md §5), so bdi_queue_work() always has a task to wake.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mm/backing-dev.h"
#include "fs/fs.h"
#include "kernel/jiffies.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "lib/proportions.h"
#include "kernel/sched.h"
#include "trace/events/vmscan.h"
#include "trace/events/writeback.h"
#include "uflush.h"
#include "fs/writeback.h"

/* The delayed wakeup: one dirty_writeback_interval after first dirtying. */
static void wakeup_timer_fn(struct timer_list *t)
{
	struct bdi_writeback *wb = from_timer(wb, t, wakeup_timer);
	struct backing_dev_info *bdi = wb->bdi;

	spin_lock(&bdi->wb_lock);
	if (bdi->wb.task) {
		trace_writeback_wake_thread(bdi);
		wake_up_process(bdi->wb.task);
	} else {
		/* 3.2 woke the forker here; there is none (see fs-writeback.c) */
		trace_writeback_wake_forker_thread(bdi);
	}
	spin_unlock(&bdi->wb_lock);
}

/*
 * Called when a device gets its first dirty inode: wake the flusher after
 * dirty_writeback_interval rather than now, so that writes are batched.
 */
void bdi_wakeup_thread_delayed(struct backing_dev_info *bdi)
{
	unsigned long timeout;

	timeout = msecs_to_jiffies(
		bdi->cache->vm.dirty_writeback_interval * 10);
	mod_timer(&bdi->wb.wakeup_timer, jiffies + timeout);
}

static void bdi_wb_init(struct bdi_writeback *wb,
			struct backing_dev_info *bdi)
{
	memset(wb, 0, sizeof(*wb));
	wb->bdi = bdi;
	wb->last_old_flush = jiffies;
	INIT_LIST_HEAD(&wb->b_dirty);
	INIT_LIST_HEAD(&wb->b_io);
	INIT_LIST_HEAD(&wb->b_more_io);
	INIT_LIST_HEAD(&wb->b_more_io_wait);
	spin_lock_init(&wb->list_lock);
	/* 6.18's wb_wakeup_delayed() is a delayed work: a wheel timer */
	timer_setup(&wb->wakeup_timer, wakeup_timer_fn,
		    cache_timer_flags(bdi->cache));
}

int bdi_init(struct backing_dev_info *bdi, struct uf_cache *cache,
	     struct uf_bdev *bdev, const char *name)
{
	memset(bdi, 0, sizeof(*bdi));
	INIT_LIST_HEAD(&bdi->bdi_list);
	snprintf(bdi->name, sizeof(bdi->name), "%s", name);
	bdi->cache = cache;
	bdi->bdev = bdev;
	bdi->max_io_pages = cache->max_io_pages;
	/* the kernel's initial estimate: 100 MB/s, in pages per second */
	bdi->write_bandwidth = (100 << 20) / PAGE_SIZE;
	bdi->avg_write_bandwidth = bdi->write_bandwidth;
	bdi->dirty_ratelimit = bdi->write_bandwidth;	/* 3.2's INIT_BW */
	bdi->balanced_dirty_ratelimit = bdi->write_bandwidth;
	bdi->bw_time_stamp = jiffies;
	spin_lock_init(&bdi->wb_lock);
	INIT_LIST_HEAD(&bdi->work_list);
	init_waitqueue_head(&bdi->wb_waitq);
	bdi_wb_init(&bdi->wb, bdi);
	return 0;
}

/*
 * Start the flusher ("flush-MAJ:MIN", as the 3.2 kernel names it).  Unit
 * tests register without one (flusher = false) and call the writeback
 * functions themselves, so that nothing runs behind their back.
 */
int bdi_register(struct backing_dev_info *bdi, bool flusher)
{
	struct task_struct *task;

	if (flusher) {
		task = kthread_run(bdi_writeback_thread, &bdi->wb, "flush-%s",
				   bdi->name);
		if (IS_ERR(task))
			return (int)PTR_ERR(task);
		spin_lock(&bdi->wb_lock);
		bdi->wb.task = task;
		spin_unlock(&bdi->wb_lock);
	}
	set_bit(BDI_registered, &bdi->state);

	spin_lock(&bdi->cache->bdi_lock);
	list_add_tail(&bdi->bdi_list, &bdi->cache->bdi_list);
	spin_unlock(&bdi->cache->bdi_lock);
	return 0;
}

/*
 * Stop the flusher.  Queued works are finished by the thread on its way out
 * (wb_do_writeback(wb, 1)); the caller has already written back and waited
 * for the device's data.
 */
void bdi_unregister(struct backing_dev_info *bdi)
{
	struct task_struct *task;

	spin_lock(&bdi->cache->bdi_lock);
	list_del_init(&bdi->bdi_list);
	spin_unlock(&bdi->cache->bdi_lock);

	del_timer_sync(&bdi->wb.wakeup_timer);
	/*
	 * Unpublish the task before stopping it: kthread_stop() frees it, and
	 * a waker under wb_lock (the delayed-wakeup timer armed by a last
	 * requeue, a queued work) must not find it after that.  The kernel
	 * keeps the pointer; its task_struct is freed only after an RCU grace
	 * period, which uflush does not have.
	 */
	spin_lock(&bdi->wb_lock);
	task = bdi->wb.task;
	bdi->wb.task = NULL;
	spin_unlock(&bdi->wb_lock);
	if (task)
		kthread_stop(task);
	/* a timer armed by a last dirtying after the stop */
	del_timer_sync(&bdi->wb.wakeup_timer);
	clear_bit(BDI_registered, &bdi->state);
}

void bdi_destroy(struct backing_dev_info *bdi)
{
	WARN_ON(wb_has_dirty_io(&bdi->wb));
	WARN_ON(!list_empty(&bdi->work_list));
	bdi_writeout_exit(bdi);
}

#define K(pages) ((pages) << (PAGE_SHIFT - 10))

/* What bdi_debug_stats_show() prints. */
void bdi_fill_stats(struct backing_dev_info *bdi, struct uf_dev_stats *st)
{
	struct bdi_writeback *wb = &bdi->wb;
	unsigned long background_thresh, dirty_thresh, bdi_thresh;

	memset(st, 0, sizeof(*st));
	spin_lock(&wb->list_lock);
	st->b_dirty = list_count(&wb->b_dirty);
	st->b_io = list_count(&wb->b_io);
	st->b_more_io = list_count(&wb->b_more_io);
	st->b_more_io_wait = list_count(&wb->b_more_io_wait);
	/* the estimate is updated under list_lock */
	st->bdi_write_bandwidth_kbps = K(bdi->write_bandwidth);
	spin_unlock(&wb->list_lock);

	global_dirty_limits(bdi->cache, &background_thresh, &dirty_thresh);
	bdi_thresh = bdi_dirty_limit(bdi, dirty_thresh);

	st->bdi_writeback_kb = K(bdi_stat(bdi, BDI_WRITEBACK));
	st->bdi_reclaimable_kb = K(bdi_stat(bdi, BDI_RECLAIMABLE));
	st->bdi_dirty_thresh_kb = K(bdi_thresh);
	st->dirty_thresh_kb = K(dirty_thresh);
	st->background_thresh_kb = K(background_thresh);
	st->bdi_dirtied_kb = K(bdi_stat(bdi, BDI_DIRTIED));
	st->bdi_written_kb = K(bdi_stat(bdi, BDI_WRITTEN));
	st->state = __atomic_load_n(&bdi->state, __ATOMIC_RELAXED);
	st->write_errors = (unsigned long)__atomic_load_n(&bdi->write_errors,
							  __ATOMIC_RELAXED);
	st->works_done = (unsigned long)__atomic_load_n(&bdi->works_done,
							__ATOMIC_RELAXED);
	st->wcp_pages_scanned = (unsigned long)__atomic_load_n(
		&bdi->wcp_scanned, __ATOMIC_RELAXED);
	st->wb_waits = (unsigned long)__atomic_load_n(&bdi->nr_wb_wait,
						      __ATOMIC_RELAXED);
	st->requeue_io = (unsigned long)__atomic_load_n(&bdi->nr_requeue_io,
							__ATOMIC_RELAXED);
	st->redirty_tail = (unsigned long)__atomic_load_n(
		&bdi->nr_redirty_tail, __ATOMIC_RELAXED);
	st->bg_bdi_only = (unsigned long)__atomic_load_n(
		&bdi->nr_bg_bdi_only, __ATOMIC_RELAXED);
}

/* ---- congestion (3.2 mm/backing-dev.c, block/blk-core.c) ---- */

/* One pair for the process, as 3.2 has one for the machine. */
static wait_queue_head_t congestion_wqh[2] = {
	__WAIT_QUEUE_HEAD_INITIALIZER(congestion_wqh[0]),
	__WAIT_QUEUE_HEAD_INITIALIZER(congestion_wqh[1]),
};
static long nr_bdi_congested[2];	/* atomic */

static unsigned int bdi_nr_requests(struct backing_dev_info *bdi)
{
	return bdi->nr_requests ? bdi->nr_requests : BDI_DEFAULT_NR_REQUESTS;
}

/* 3.2 blk_queue_congestion_threshold(): on at nr - nr/8 + 1 (at most nr),
 * off at nr - nr/8 - nr/16 - 1 (at least 1). */
unsigned int queue_congestion_on_threshold(struct backing_dev_info *bdi)
{
	unsigned int nr = bdi_nr_requests(bdi), on = nr - nr / 8 + 1;

	return on > nr ? nr : on;
}

unsigned int queue_congestion_off_threshold(struct backing_dev_info *bdi)
{
	unsigned int nr = bdi_nr_requests(bdi);
	int off = (int)nr - (int)(nr / 8) - (int)(nr / 16) - 1;

	return off < 1 ? 1 : (unsigned int)off;
}

/* rl->count[BLK_RW_ASYNC]: the write requests built (wb_request_prep)
 * and not completed (wb_request_done). */
unsigned long bdi_async_requests(struct backing_dev_info *bdi)
{
	long n = __atomic_load_n(&bdi->nr_async_requests, __ATOMIC_RELAXED);

	return n > 0 ? (unsigned long)n : 0;
}

void set_bdi_congested(struct backing_dev_info *bdi, int sync)
{
	int bit = sync ? BDI_sync_congested : BDI_async_congested;

	if (!test_and_set_bit(bit, &bdi->state))
		__atomic_add_fetch(&nr_bdi_congested[sync], 1, __ATOMIC_SEQ_CST);
}

/* Clearing wakes every sleeper, congested or not: a write completed. */
void clear_bdi_congested(struct backing_dev_info *bdi, int sync)
{
	int bit = sync ? BDI_sync_congested : BDI_async_congested;
	wait_queue_head_t *wqh = &congestion_wqh[sync];

	if (test_and_clear_bit(bit, &bdi->state))
		__atomic_sub_fetch(&nr_bdi_congested[sync], 1, __ATOMIC_SEQ_CST);
	if (waitqueue_active(wqh))
		wake_up(wqh);
}

bool bdi_any_congested(int sync)
{
	return __atomic_load_n(&nr_bdi_congested[sync], __ATOMIC_SEQ_CST) > 0;
}

/* get_request() (count + 1 >= on: set) and __freed_request() (count <
 * off: clear), from the count as it is now; in between it stays. */
bool bdi_update_congested(struct backing_dev_info *bdi)
{
	unsigned long nr = bdi_async_requests(bdi);

	if (nr + 1 >= queue_congestion_on_threshold(bdi))
		set_bdi_congested(bdi, BLK_RW_ASYNC);
	else if (nr < queue_congestion_off_threshold(bdi))
		clear_bdi_congested(bdi, BLK_RW_ASYNC);
	return bdi_write_congested(bdi);
}

/* end_page_writeback(): a page of @c was written; the congested bdis are
 * looked at again, and with none congested the sleepers are woken as
 * __freed_request() wakes them below the off threshold. */
void bdi_writeback_done_congestion(struct uf_cache *c)
{
	struct backing_dev_info *bdi;

	if (bdi_any_congested(BLK_RW_ASYNC)) {
		spin_lock(&c->bdi_lock);
		list_for_each_entry(bdi, &c->bdi_list, bdi_list)
			if (bdi_write_congested(bdi))
				bdi_update_congested(bdi);
		spin_unlock(&c->bdi_lock);
		if (bdi_any_congested(BLK_RW_ASYNC))
			return;
	}
	if (waitqueue_active(&congestion_wqh[BLK_RW_ASYNC]))
		wake_up(&congestion_wqh[BLK_RW_ASYNC]);
}

/*
 * 3.2 congestion_wait(): sleep up to @timeout on the congestion queue,
 * congested or not (kswapd's nap in balance_pgdat); traced as 3.2's
 * writeback_congestion_wait.
 */
long congestion_wait(struct uf_cache *c, int sync, long timeout)
{
	wait_queue_head_t *wqh = &congestion_wqh[sync];
	unsigned long start = jiffies;
	long ret;
	DEFINE_WAIT(wait);

	prepare_to_wait(wqh, &wait, TASK_UNINTERRUPTIBLE);
	ret = io_schedule_timeout(timeout);
	finish_wait(wqh, &wait);
	__atomic_add_fetch(&c->pool.rstat.nr_congestion_wait, 1,
			   __ATOMIC_RELAXED);
	trace_writeback_congestion_wait(c,
		jiffies_to_usecs((unsigned long)timeout),
		jiffies_to_usecs(jiffies - start));
	return ret;
}

/*
 * 3.2 wait_iff_congested(): sleep only while some bdi is congested and
 * reclaim of this zone met only congested dirty pages (ZONE_CONGESTED,
 * zone_is_reclaim_congested); else yield and return what is left.
 */
long wait_iff_congested(struct uf_cache *c, int sync, long timeout)
{
	wait_queue_head_t *wqh = &congestion_wqh[sync];
	unsigned long start = jiffies;
	long ret;
	DEFINE_WAIT(wait);

	if (!bdi_any_congested(sync) ||
	    !test_bit(ZONE_CONGESTED, &c->pool.zone_flags)) {
		cond_resched();
		ret = timeout - (long)(jiffies - start);
		if (ret < 0)
			ret = 0;
		goto out;
	}
	__atomic_add_fetch(&c->pool.rstat.nr_congestion_wait, 1,
			   __ATOMIC_RELAXED);
	prepare_to_wait(wqh, &wait, TASK_UNINTERRUPTIBLE);
	ret = io_schedule_timeout(timeout);
	finish_wait(wqh, &wait);
out:
	trace_writeback_wait_iff_congested(c,
		jiffies_to_usecs((unsigned long)timeout),
		jiffies_to_usecs(jiffies - start));
	return ret;
}
