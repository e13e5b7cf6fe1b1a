// SPDX-License-Identifier: MIT
/*
 * engine/fs/fs-writeback.c - fs/fs-writeback.c of the 3.1/3.2 era: the dirty
 * inode lists of each device, the writeback works, and the flusher's loop.
 *
 * The functions carry the kernel's names and shapes so this file can be read
 * beside the kernel's.  Where the seeds' variants differ, the code asks the
 * cache's flush policy (policies/policy.h): the no-progress wait and the
 * cutoff in wb_writeback(), the requeue after writeback_single_inode(), the
 * pages_skipped block, the grab_super_passive() failure path.
 *
 * Lists (per device, wb->list_lock): b_dirty holds dirty inodes newest at
 * the head; queue_io() moves b_more_io and the expired tail of b_dirty to
 * b_io; writeback works consume b_io from its tail.  Lock order:
 * bdi->wb_lock, wb->list_lock, inode->i_lock, mapping->tree_lock.
 *
 * Differences from the kernel, and why:
 *  - no forker thread: each device's flusher lives as long as the device
 *    (DESIGN.md §5); bdi_queue_work always has a task to wake.
 *  - inode references (__iget/iput) are not needed: an inode cannot be
 *    freed while it is on a wb list (uf_file_close takes it off first,
 *    under I_FREEING, after waiting for I_SYNC).
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <string.h>

#include "mm/backing-dev.h"
#include "fs/fs.h"
#include "kernel/jiffies.h"
#include "kernel/kthread.h"
#include "policies/policy.h"
#include "kernel/sched.h"
#include "lib/slab.h"
#include "trace/events/writeback.h"
#include "fs/writeback.h"

const char *const wb_reason_name[WB_REASON_MAX] = {
	[WB_REASON_BACKGROUND] = "background",
	[WB_REASON_TRY_TO_FREE_PAGES] = "try_to_free_pages",
	[WB_REASON_SYNC] = "sync",
	[WB_REASON_PERIODIC] = "periodic",
	[WB_REASON_LAPTOP_TIMER] = "laptop_timer",
	[WB_REASON_FREE_MORE_MEM] = "free_more_memory",
	[WB_REASON_FS_FREE_SPACE] = "fs_free_space",
	[WB_REASON_FORKER_THREAD] = "forker_thread",
	[WB_REASON_PAGEOUT] = "pageout",
	[WB_REASON_VMSCAN] = "vmscan",
};

static inline struct inode *wb_inode(struct list_head *head)
{
	return list_entry(head, struct inode, i_wb_list);
}

static inline const struct wb_policy *wb_policy(struct bdi_writeback *wb)
{
	return wb->bdi->cache->policy;
}

static inline struct backing_dev_info *inode_to_bdi(struct inode *inode)
{
	return inode->i_sb->s_bdi;
}

/*
 * The kernel peeks at work_list and the b_* lists without their locks and
 * tolerates a stale answer.  Here the peeks take the locks: it costs little
 * and keeps ThreadSanitizer's view of the engine exact.
 */
static bool list_empty_locked(spinlock_t *lock, const struct list_head *head)
{
	bool ret;

	spin_lock(lock);
	ret = list_empty(head);
	spin_unlock(lock);
	return ret;
}

static bool bdi_has_work(struct backing_dev_info *bdi)
{
	return !list_empty_locked(&bdi->wb_lock, &bdi->work_list);
}

/* "Is there some other work to do?" for the policies (list_lock held). */
bool wb_work_pending(struct bdi_writeback *wb)
{
	return bdi_has_work(wb->bdi);
}

static bool wb_has_more_io_wait(struct bdi_writeback *wb)
{
	return !list_empty_locked(&wb->list_lock, &wb->b_more_io_wait);
}

static bool wb_has_dirty_io_locked(struct bdi_writeback *wb)
{
	bool ret;

	spin_lock(&wb->list_lock);
	ret = wb_has_dirty_io(wb);
	spin_unlock(&wb->list_lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Works                                                               */

void bdi_queue_work(struct backing_dev_info *bdi,
		    struct wb_writeback_work *work)
{
	trace_writeback_queue(bdi, work);

	spin_lock(&bdi->wb_lock);
	list_add_tail(&work->list, &bdi->work_list);
	if (bdi->wb.task)
		wake_up_process(bdi->wb.task);
	else
		trace_writeback_nothread(bdi, work);
	spin_unlock(&bdi->wb_lock);
}

static void __bdi_start_writeback(struct backing_dev_info *bdi, long nr_pages,
				  bool range_cyclic, enum wb_reason reason)
{
	struct wb_writeback_work *work;

	/*
	 * The kernel allocates with GFP_ATOMIC and, if that fails, only wakes
	 * the flusher: it will still do kupdate and background writeback.
	 */
	work = kzalloc(sizeof(*work));
	if (!work) {
		if (bdi->wb.task)
			wake_up_process(bdi->wb.task);
		return;
	}
	work->sync_mode = WB_SYNC_NONE;
	work->nr_pages = nr_pages;
	work->range_cyclic = range_cyclic;
	work->reason = reason;
	bdi_queue_work(bdi, work);
}

void bdi_start_writeback(struct backing_dev_info *bdi, long nr_pages,
			 enum wb_reason reason)
{
	__bdi_start_writeback(bdi, nr_pages, true, reason);
}

/*
 * Only wakes the flusher: no work is queued, so a work that is running
 * keeps going and must see the background condition for itself (seed 000
 * §2.6).
 */
void bdi_start_background_writeback(struct backing_dev_info *bdi)
{
	trace_writeback_wake_background(bdi);
	spin_lock(&bdi->wb_lock);
	if (bdi->wb.task)
		wake_up_process(bdi->wb.task);
	spin_unlock(&bdi->wb_lock);
}

void inode_wb_list_del(struct inode *inode)
{
	struct backing_dev_info *bdi = inode_to_bdi(inode);

	spin_lock(&bdi->wb.list_lock);
	spin_lock(&inode->i_lock);
	inode->i_state &= ~I_SYNC_QUEUED;
	list_del_init(&inode->i_wb_list);
	spin_unlock(&inode->i_lock);
	spin_unlock(&bdi->wb.list_lock);
}

/* ------------------------------------------------------------------ */
/* List moves                                                          */

/*
 * Put the inode back on b_dirty as the newest.  If it is older than the
 * current newest, its dirtied_when becomes now to keep b_dirty ordered, which
 * delays its next kupdate by dirty_expire_interval (seed 000 L3956-3964).
 * i_lock held: off b_io, the inode is no longer I_SYNC_QUEUED (6.18
 * redirty_tail_locked; the flag is never set on 3.x).
 */
void redirty_tail(struct inode *inode, struct bdi_writeback *wb)
{
	assert_spin_locked(&wb->list_lock);
	assert_spin_locked(&inode->i_lock);
	__atomic_add_fetch(&wb->bdi->nr_redirty_tail, 1, __ATOMIC_RELAXED);
	inode->i_state &= ~I_SYNC_QUEUED;
	if (!list_empty(&wb->b_dirty)) {
		struct inode *tail = wb_inode(wb->b_dirty.next);

		if (time_before(inode->dirtied_when, tail->dirtied_when))
			inode->dirtied_when = jiffies;
	}
	list_move(&inode->i_wb_list, &wb->b_dirty);
}

/* Retry at the next queue_io(), dirtied_when untouched. */
void requeue_io(struct inode *inode, struct bdi_writeback *wb)
{
	assert_spin_locked(&wb->list_lock);
	__atomic_add_fetch(&wb->bdi->nr_requeue_io, 1, __ATOMIC_RELAXED);
	list_move(&inode->i_wb_list, &wb->b_more_io);
}

/* Wu's opportunistic retry list (seed 000 L1901-1908), RIW policies only. */
void requeue_io_wait(struct inode *inode, struct bdi_writeback *wb)
{
	assert_spin_locked(&wb->list_lock);
	list_move(&inode->i_wb_list, &wb->b_more_io_wait);
}

static void inode_sync_complete(struct inode *inode)
{
	smp_mb();
	inode_wake_up_sync(inode);
}

static bool inode_dirtied_after(struct inode *inode, unsigned long t)
{
	return time_after(inode->dirtied_when, t);
}

/*
 * Move expired inodes from the tail of b_dirty to b_io, oldest first,
 * grouping them by superblock (with one device per cache there is one sb,
 * but the grouping is kept as the kernel's).
 */
static int move_expired_inodes(struct list_head *delaying_queue,
			       struct list_head *dispatch_queue,
			       unsigned long *older_than_this, bool mark_queued)
{
	LIST_HEAD(tmp);
	struct list_head *pos, *node;
	struct super_block *sb = NULL;
	struct inode *inode;
	bool do_sb_sort = false;
	int moved = 0;

	while (!list_empty(delaying_queue)) {
		inode = wb_inode(delaying_queue->prev);
		if (older_than_this &&
		    inode_dirtied_after(inode, *older_than_this))
			break;
		if (sb && sb != inode->i_sb)
			do_sb_sort = true;
		sb = inode->i_sb;
		list_move(&inode->i_wb_list, &tmp);
		moved++;
		if (mark_queued) {
			/* 6.18: the flusher owns its place from now on */
			spin_lock(&inode->i_lock);
			inode->i_state |= I_SYNC_QUEUED;
			spin_unlock(&inode->i_lock);
		}
	}

	if (!do_sb_sort) {
		list_splice(&tmp, dispatch_queue);
		return moved;
	}
	while (!list_empty(&tmp)) {
		sb = wb_inode(tmp.prev)->i_sb;
		for (pos = tmp.prev, node = pos->prev; pos != &tmp;
		     pos = node, node = pos->prev) {
			inode = wb_inode(pos);
			if (inode->i_sb == sb)
				list_move(&inode->i_wb_list, dispatch_queue);
		}
	}
	return moved;
}

/*
 * Refill b_io: first what needs another pass (b_more_io, then the RIW
 * b_more_io_wait, empty under other policies), then the expired part of
 * b_dirty.  b_io is consumed from the tail, so the requeued inodes are
 * served first and newly expired ones oldest first.
 */
static void queue_io(struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	int moved;

	assert_spin_locked(&wb->list_lock);
	list_splice_init(&wb->b_more_io, &wb->b_io);
	list_splice_init(&wb->b_more_io_wait, &wb->b_io);
	moved = move_expired_inodes(&wb->b_dirty, &wb->b_io,
				    work->older_than_this,
				    wb_policy(wb)->inode_wb_mainline);
	trace_writeback_queue_io(wb, work, moved);
}

/* The embedder's write_inode (the filesystem's ->write_inode). */
static int write_inode(struct inode *inode, struct writeback_control *wbc)
{
	struct inode *old;
	int ret;

	if (!inode->ops || !inode->ops->write_inode)
		return 0;
	old = file_op_enter(inode);
	ret = inode->ops->write_inode(inode->handle, inode->priv,
				      wbc->sync_mode == WB_SYNC_ALL);
	file_op_exit(old);
	return ret;
}

/*
 * Wait for I_SYNC to clear.  Called with list_lock and i_lock held; drops
 * and retakes both around the sleep, as the kernel does.
 */
void inode_wait_for_writeback(struct inode *inode, struct bdi_writeback *wb)
{
	DEFINE_WAIT_BIT(wait, &inode->i_state, __I_SYNC);
	wait_queue_head_t *wqh = inode_sync_waitqueue(inode);

	/* __iget(): with no lock held, only this keeps evict() waiting */
	inode->i_count++;
	while (inode->i_state & I_SYNC) {
		prepare_to_wait(wqh, &wait.wq_entry, TASK_UNINTERRUPTIBLE);
		spin_unlock(&inode->i_lock);
		spin_unlock(&wb->list_lock);
		schedule();
		finish_wait(wqh, &wait.wq_entry);
		spin_lock(&wb->list_lock);
		spin_lock(&inode->i_lock);
	}
	inode->i_count--;
	if (inode->i_state & I_FREEING)
		inode_wake_up_sync(inode);
}

/*
 * inode_sync_wait(): wait for I_SYNC without list_lock.  For an inode being
 * evicted (I_FREEING), also for a flusher asleep in
 * inode_wait_for_writeback() to take its locks back (i_count).
 */
void inode_wait_for_writeback_sync(struct inode *inode)
{
	DEFINE_WAIT_BIT(wait, &inode->i_state, __I_SYNC);
	wait_queue_head_t *wqh = inode_sync_waitqueue(inode);

	spin_lock(&inode->i_lock);
	while ((inode->i_state & I_SYNC) ||
	       ((inode->i_state & I_FREEING) && inode->i_count > 1)) {
		prepare_to_wait(wqh, &wait.wq_entry, TASK_UNINTERRUPTIBLE);
		spin_unlock(&inode->i_lock);
		schedule();
		finish_wait(wqh, &wait.wq_entry);
		spin_lock(&inode->i_lock);
	}
	spin_unlock(&inode->i_lock);
}

/* ------------------------------------------------------------------ */
/* One inode                                                           */

/*
 * Write an inode's dirty pages and, if dirty, its metadata.  The caller
 * has set I_SYNC and holds no lock.  3.x clears I_DIRTY_PAGES before the
 * write (the caller does, under i_lock); 6.18 clears every I_DIRTY bit
 * after do_writepages and puts I_DIRTY_PAGES back if pages are still
 * tagged (6.18 __writeback_single_inode), so a page dirtied during the
 * write never leaves a clean inode flagged dirty, nor the reverse.
 * *inode_written: write_inode succeeded or was not needed.
 */
static int __writeback_single_inode(struct inode *inode,
				    struct writeback_control *wbc,
				    bool mainline, bool *inode_written)
{
	struct address_space *mapping = inode->i_mapping;
	long nr_to_write = wbc->nr_to_write;
	unsigned long dirty;
	int ret;

	*inode_written = true;
	ret = do_writepages(mapping, wbc);

	/* data before metadata, for filesystems that update it at I/O end */
	if (wbc->sync_mode == WB_SYNC_ALL) {
		int err = filemap_fdatawait(mapping);

		if (ret == 0)
			ret = err;
	}

	spin_lock(&inode->i_lock);
	dirty = inode->i_state & I_DIRTY;
	if (mainline) {
		inode->i_state &= ~dirty;
		if (mapping_tagged(mapping, PAGECACHE_TAG_DIRTY))
			inode->i_state |= I_DIRTY_PAGES;
	} else {
		/* the metadata flags are cleared right before write_inode() */
		inode->i_state &= ~(I_DIRTY_SYNC | I_DIRTY_DATASYNC);
	}
	spin_unlock(&inode->i_lock);
	if (dirty & (I_DIRTY_SYNC | I_DIRTY_DATASYNC)) {
		int err = write_inode(inode, wbc);

		if (err)
			*inode_written = false;
		if (err == -EAGAIN) {
			/* "a lock is held": still dirty, as XFS redirtied it */
			spin_lock(&inode->i_lock);
			inode->i_state |= dirty & (I_DIRTY_SYNC |
						   I_DIRTY_DATASYNC);
			spin_unlock(&inode->i_lock);
		}
		if (ret == 0)
			ret = err;
	}
	/* 6.18 traces here, I_SYNC still set; 3.x after the requeue */
	if (mainline)
		trace_writeback_single_inode(inode, wbc, nr_to_write);
	return ret;
}

/*
 * 3.x's writeback_single_inode(), for the flusher and sync_inode() alike:
 * an inode under I_SYNC is requeue_io'd (WB_SYNC_NONE) or waited for,
 * then written, then put on the list the policy's requeue chooses.
 * list_lock and i_lock held; dropped around the I/O.
 */
static int writeback_single_inode_3x(struct inode *inode,
				     struct bdi_writeback *wb,
				     struct writeback_control *wbc,
				     unsigned long dirtied_before)
{
	long nr_to_write = wbc->nr_to_write;
	bool inode_written;
	int ret;

	if (inode->i_state & I_SYNC) {
		/*
		 * Someone else writes it: under WB_SYNC_NONE go on with the
		 * other inodes; an integrity sync must wait.
		 */
		if (wbc->sync_mode != WB_SYNC_ALL) {
			requeue_io(inode, wb);
			trace_writeback_single_inode_requeue(inode, wbc,
							     nr_to_write);
			return 0;
		}
		inode_wait_for_writeback(inode, wb);
		/* evicted meanwhile: written by evict(), off the lists soon */
		if (inode->i_state & I_FREEING)
			return 0;
	}
	BUG_ON(inode->i_state & I_SYNC);

	inode->i_state |= I_SYNC;
	inode->i_state &= ~I_DIRTY_PAGES;
	spin_unlock(&inode->i_lock);
	spin_unlock(&wb->list_lock);

	ret = __writeback_single_inode(inode, wbc, false, &inode_written);

	spin_lock(&wb->list_lock);
	spin_lock(&inode->i_lock);
	inode->i_state &= ~I_SYNC;
	if (!(inode->i_state & I_FREEING))
		wb_policy(wb)->requeue(inode, wb, wbc, inode_written,
				       dirtied_before);
	inode_sync_complete(inode);
	trace_writeback_single_inode(inode, wbc, nr_to_write);
	return ret;
}

/*
 * The flusher's write of one inode from b_io (writeback_sb_inodes' loop
 * body, exported for tests).  6.18: the caller has dealt with I_SYNC;
 * write, then requeue_inode() with the pass's dirtied_before.  list_lock
 * and i_lock held; dropped around the I/O.
 */
int writeback_inode_flusher(struct inode *inode, struct bdi_writeback *wb,
			    struct writeback_control *wbc,
			    unsigned long dirtied_before)
{
	bool inode_written;
	int ret;

	assert_spin_locked(&wb->list_lock);
	assert_spin_locked(&inode->i_lock);
	if (!wb_policy(wb)->inode_wb_mainline)
		return writeback_single_inode_3x(inode, wb, wbc,
						 dirtied_before);

	BUG_ON(inode->i_state & I_SYNC);
	inode->i_state |= I_SYNC;
	spin_unlock(&inode->i_lock);
	spin_unlock(&wb->list_lock);

	ret = __writeback_single_inode(inode, wbc, true, &inode_written);

	spin_lock(&wb->list_lock);
	spin_lock(&inode->i_lock);
	if (!(inode->i_state & I_FREEING))
		wb_policy(wb)->requeue(inode, wb, wbc, inode_written,
				       dirtied_before);
	inode->i_state &= ~I_SYNC;
	inode_sync_complete(inode);
	return ret;
}

/*
 * 6.18's writeback_single_inode(): writeback outside the flusher
 * (sync_inode, write_inode_now), which never calls requeue_inode.  A clean
 * inode goes off the lists, a dirty one not I_SYNC_QUEUED to b_dirty
 * (redirty_tail), one the flusher has queued stays where it is.
 */
static int writeback_single_inode_618(struct inode *inode,
				      struct bdi_writeback *wb,
				      struct writeback_control *wbc)
{
	bool inode_written;
	int ret;

	if (inode->i_state & I_SYNC) {
		/* WB_SYNC_NONE: the writeback running is enough */
		if (wbc->sync_mode != WB_SYNC_ALL)
			return 0;
		inode_wait_for_writeback(inode, wb);
		if (inode->i_state & I_FREEING)
			return 0;
	}
	BUG_ON(inode->i_state & I_SYNC);
	/* clean, and (for integrity) no page under writeback: nothing to do */
	if (!(inode->i_state & I_DIRTY) &&
	    (wbc->sync_mode != WB_SYNC_ALL ||
	     !mapping_tagged(inode->i_mapping, PAGECACHE_TAG_WRITEBACK)))
		return 0;

	inode->i_state |= I_SYNC;
	spin_unlock(&inode->i_lock);
	spin_unlock(&wb->list_lock);

	ret = __writeback_single_inode(inode, wbc, true, &inode_written);

	spin_lock(&wb->list_lock);
	spin_lock(&inode->i_lock);
	if (!(inode->i_state & I_FREEING)) {
		if (!(inode->i_state & I_DIRTY)) {
			inode->i_state &= ~I_SYNC_QUEUED;
			list_del_init(&inode->i_wb_list);
		} else if (!(inode->i_state & I_SYNC_QUEUED)) {
			redirty_tail(inode, wb);
		}
	}
	inode->i_state &= ~I_SYNC;
	inode_sync_complete(inode);
	return ret;
}

/*
 * Writeback of one inode outside the flusher's passes.  list_lock and
 * i_lock held; dropped around the I/O.
 */
static int writeback_single_inode(struct inode *inode,
				  struct bdi_writeback *wb,
				  struct writeback_control *wbc)
{
	assert_spin_locked(&wb->list_lock);
	assert_spin_locked(&inode->i_lock);
	if (wb_policy(wb)->inode_wb_mainline)
		return writeback_single_inode_618(inode, wb, wbc);
	return writeback_single_inode_3x(inode, wb, wbc, jiffies);
}

/* ------------------------------------------------------------------ */
/* Passes over b_io                                                    */

/*
 * What one inode's writeback counts as progress.  The pages ->writepage
 * declined used up slice too: 3.2 counts them as written; mainline
 * ("Recalculate 'wrote' according skipped pages") does not, so that an
 * inode whose pages are all held cannot keep wb_writeback looping.
 */
static long sb_inode_wrote(const struct wb_policy *pol, long write_chunk,
			   const struct writeback_control *wbc)
{
	long wrote = write_chunk - wbc->nr_to_write;

	if (pol->skipcount_mainline) {
		wrote -= wbc->pages_skipped;
		if (wrote < 0)
			wrote = 0;
	}
	return wrote;
}

/* Return to wb_writeback often enough to check its stop conditions. */
static bool writeback_should_bail(unsigned long start_time, long wrote,
				  struct wb_writeback_work *work)
{
	if (!wrote)
		return false;
	return time_before(start_time + HZ / 10UL, jiffies) ||
	       work->nr_pages <= 0;
}

/*
 * Write the inodes at the tail of b_io that belong to sb.  Returns the pages
 * written plus the inodes made clean ("wrote" counts both).
 */
static long writeback_sb_inodes(struct super_block *sb,
				struct bdi_writeback *wb,
				struct wb_writeback_work *work)
{
	struct writeback_control wbc = {
		.sync_mode = work->sync_mode,
		.tagged_writepages = work->tagged_writepages,
		.for_kupdate = work->for_kupdate,
		.for_background = work->for_background,
		.range_cyclic = work->range_cyclic,
		.range_start = 0,
		.range_end = LLONG_MAX,
	};
	const struct wb_policy *pol = wb_policy(wb);
	unsigned long start_time = jiffies;
	unsigned long dirtied_before = jiffies;
	long write_chunk, wrote = 0;

	/* what requeue_inode() calls "dirtied after the pass began" (6.18) */
	if (work->for_kupdate)
		dirtied_before = jiffies - msecs_to_jiffies(
			wb->bdi->cache->vm.dirty_expire_interval * 10);

	while (!list_empty(&wb->b_io)) {
		struct inode *inode = wb_inode(wb->b_io.prev);

		uf_sim_charge(UF_SIM_COST_INODE, 1);	/* a world's CPU model */
		if (inode->i_sb != sb) {
			if (work->sb) {
				/* only this sb's data: the rest goes back */
				spin_lock(&inode->i_lock);
				redirty_tail(inode, wb);
				spin_unlock(&inode->i_lock);
				continue;
			}
			break;	/* let the caller pin the other sb */
		}

		spin_lock(&inode->i_lock);
		if (inode->i_state & (I_NEW | I_FREEING | I_WILL_FREE)) {
			redirty_tail(inode, wb);
			spin_unlock(&inode->i_lock);
			continue;
		}
		if (pol->inode_wb_mainline && (inode->i_state & I_SYNC)) {
			/*
			 * 6.18 writeback_sb_inodes: someone else writes it.
			 * WB_SYNC_NONE: retry after this b_io, and no
			 * progress is counted for it; WB_SYNC_ALL: wait, then
			 * start again from the tail of b_io.
			 */
			if (wbc.sync_mode != WB_SYNC_ALL) {
				requeue_io(inode, wb);
				trace_writeback_sb_inodes_requeue(inode);
				spin_unlock(&inode->i_lock);
				continue;
			}
			inode_wait_for_writeback(inode, wb);
			spin_unlock(&inode->i_lock);
			continue;
		}
		write_chunk = writeback_chunk_size(wb->bdi, work);
		wbc.nr_to_write = write_chunk;
		wbc.pages_skipped = 0;

		writeback_inode_flusher(inode, wb, &wbc, dirtied_before);

		work->nr_pages -= write_chunk - wbc.nr_to_write;
		wrote += sb_inode_wrote(pol, write_chunk, &wbc);
		if (!(inode->i_state & I_DIRTY))
			wrote++;
		if (wbc.pages_skipped && pol->pages_skipped)
			pol->pages_skipped(inode, wb);
		spin_unlock(&inode->i_lock);
		/*
		 * iput(); cond_resched(): the kernel lets go of list_lock after
		 * every inode, so that whoever holds I_SYNC on an inode it just
		 * requeued can take the lock and finish.  A pthread mutex is
		 * not fair as a ticket spinlock is: yield so the waiter runs.
		 */
		spin_unlock(&wb->list_lock);
		uf_lock_break();
		spin_lock(&wb->list_lock);

		if (writeback_should_bail(start_time, wrote, work))
			break;
	}
	return wrote;
}

static long __writeback_inodes_wb(struct bdi_writeback *wb,
				  struct wb_writeback_work *work)
{
	unsigned long start_time = jiffies;
	long wrote = 0;

	while (!list_empty(&wb->b_io)) {
		struct inode *inode = wb_inode(wb->b_io.prev);
		struct super_block *sb = inode->i_sb;

		if (!grab_super_passive(sb)) {
			spin_lock(&inode->i_lock);
			wb_policy(wb)->super_busy(inode, wb);
			spin_unlock(&inode->i_lock);
			continue;
		}
		wrote += writeback_sb_inodes(sb, wb, work);
		drop_super(sb);

		if (writeback_should_bail(start_time, wrote, work))
			break;
	}
	/* unwritten inodes stay on b_io */
	return wrote;
}

/* ------------------------------------------------------------------ */
/* The work loop                                                       */

/*
 * The longest no-progress sleep: dirty_writeback_interval, or HZ when
 * periodic writeback is off (seed 000 L51-54).  Shared by wb_writeback's
 * backoff and the kupdate-early flusher sleep.
 */
static unsigned long wb_max_pause(struct uf_cache *c)
{
	unsigned long dwi = c->vm.dirty_writeback_interval;

	return dwi ? msecs_to_jiffies(dwi * 10) : (unsigned long)HZ;
}

/*
 * Run one work.  Stops when its pages are written, when a background or
 * kupdate work sees other work queued, when background writeback is below
 * the threshold, when nothing is left to write, or when the policy's
 * no-progress handling says so.
 */
long wb_writeback(struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	const struct wb_policy *pol = wb_policy(wb);
	struct uf_cache *c = wb->bdi->cache;
	unsigned long wb_start = jiffies;
	long nr_pages = work->nr_pages;
	struct wb_loop_state st = {
		.oldest_jif = jiffies,
		.pause = 1,
	};
	bool queued = false;
	long progress;

	st.max_pause = wb_max_pause(c);
	work->older_than_this = &st.oldest_jif;

	spin_lock(&wb->list_lock);
	for (;;) {
		if (work->nr_pages <= 0)
			break;
		/*
		 * Background and kupdate works could go on forever: give way
		 * to queued works, which also stops sync livelocking behind
		 * them.
		 */
		if ((work->for_background || work->for_kupdate) &&
		    bdi_has_work(wb->bdi))
			break;
		if (work->for_background && !over_bground_thresh(wb->bdi))
			break;

		/* 6.18 takes the cutoff only for a queue_io (2185-2194) */
		if (!pol->wb_loop_mainline)
			pol->cutoff(wb, work, &st);

		trace_writeback_start(wb->bdi, work);
		if (list_empty(&wb->b_io)) {
			if (pol->wb_loop_mainline)
				pol->cutoff(wb, work, &st);
			queue_io(wb, work);
			queued = true;
		}
		if (work->sb)
			progress = writeback_sb_inodes(work->sb, wb, work);
		else
			progress = __writeback_inodes_wb(wb, work);
		trace_writeback_written(wb->bdi, work);
		st.total_progress += progress;

		/* 3.2's per-pass estimate; 6.18's wb_writeback() has none
		 * (do_writepages() updates it: bdp=mainline) */
		if (bdi_bandwidth_per_pass(wb->bdi))
			bdi_update_bandwidth(wb->bdi, wb_start);

		if (progress) {
			st.pause = 1;
			continue;
		}
		/*
		 * 6.18: a pass over what an earlier work left on b_io ends
		 * nothing, as long as no pass of this work has queued.
		 */
		if (pol->wb_loop_mainline && !queued)
			continue;
		/* nothing written and nothing to retry: done */
		if (list_empty(&wb->b_more_io))
			break;
		if (pol->no_progress(wb, work, &st))
			break;
	}
	spin_unlock(&wb->list_lock);
	__atomic_add_fetch(&wb->bdi->works_done, 1, __ATOMIC_RELAXED);

	if (pol->return_total_progress)
		return st.total_progress;
	return nr_pages - work->nr_pages;
}

static struct wb_writeback_work *get_next_work_item(
	struct backing_dev_info *bdi)
{
	struct wb_writeback_work *work = NULL;

	spin_lock(&bdi->wb_lock);
	if (!list_empty(&bdi->work_list)) {
		work = list_first_entry(&bdi->work_list,
					struct wb_writeback_work, list);
		list_del_init(&work->list);
	}
	spin_unlock(&bdi->wb_lock);
	return work;
}

static long get_nr_dirty_inodes(struct uf_cache *cache)
{
	struct backing_dev_info *bdi;
	long nr = 0;

	spin_lock(&cache->bdi_lock);
	list_for_each_entry(bdi, &cache->bdi_list, bdi_list)
		nr += (long)__atomic_load_n(&bdi->sb->s_nr_inodes,
					    __ATOMIC_RELAXED);
	spin_unlock(&cache->bdi_lock);
	return nr;
}

/* What a kupdate or writeback_inodes_sb work aims to write. */
long get_nr_dirty_pages(struct uf_cache *cache)
{
	return (long)(global_page_state(cache, NR_FILE_DIRTY) +
		      global_page_state(cache, NR_UNSTABLE_NFS)) +
	       get_nr_dirty_inodes(cache);
}

/* The flusher's own work: kupdate (WB_REASON_PERIODIC) or background. */
static long wb_flusher_pass(struct bdi_writeback *wb, long nr_pages,
			    enum wb_reason reason)
{
	struct wb_writeback_work work = {
		.nr_pages = nr_pages,
		.sync_mode = WB_SYNC_NONE,
		.for_kupdate = reason == WB_REASON_PERIODIC,
		.for_background = reason == WB_REASON_BACKGROUND,
		.range_cyclic = 1,
		.reason = reason,
	};

	return wb_writeback(wb, &work);
}

/* kupdate: every dirty_writeback_interval, write what has expired. */
static long wb_check_old_data_flush(struct bdi_writeback *wb)
{
	struct uf_cache *c = wb->bdi->cache;
	unsigned long expired;
	long nr_pages;

	if (!c->vm.dirty_writeback_interval)
		return 0;
	expired = wb->last_old_flush +
		msecs_to_jiffies(c->vm.dirty_writeback_interval * 10);
	if (time_before(jiffies, expired) &&
	    !(wb_policy(wb)->kupdate_early && wb_has_more_io_wait(wb)))
		return 0;

	wb->last_old_flush = jiffies;
	nr_pages = get_nr_dirty_pages(c);
	if (nr_pages)
		return wb_flusher_pass(wb, nr_pages, WB_REASON_PERIODIC);
	return 0;
}

static long wb_check_background_flush(struct bdi_writeback *wb)
{
	if (over_bground_thresh(wb->bdi))
		return wb_flusher_pass(wb, LONG_MAX, WB_REASON_BACKGROUND);
	return 0;
}

/*
 * Run the queued works, then kupdate and background writeback.
 * BDI_writeback_running is what writeback_in_progress() reports.
 */
long wb_do_writeback(struct bdi_writeback *wb, int force_wait)
{
	struct backing_dev_info *bdi = wb->bdi;
	struct wb_writeback_work *work;
	long wrote = 0;

	set_bit(BDI_writeback_running, &bdi->state);
	while ((work = get_next_work_item(bdi)) != NULL) {
		/* a flusher that is exiting must finish what it takes */
		if (force_wait)
			work->sync_mode = WB_SYNC_ALL;

		trace_writeback_exec(bdi, work);
		if (work->inode)
			wrote += wb_flush_inode(wb, work);
		else
			wrote += wb_writeback(wb, work);

		if (work->done)
			complete(work->done);
		else
			wb_work_free(work);
	}
	wrote += wb_check_old_data_flush(wb);
	wrote += wb_check_background_flush(wb);
	clear_bit(BDI_writeback_running, &bdi->state);
	return wrote;
}

/*
 * The flusher thread of one device (bdi_writeback_thread).  Sleeps until
 * woken while there is nothing dirty, else wakes every
 * dirty_writeback_interval for kupdate.
 */
int bdi_writeback_thread(void *data)
{
	struct bdi_writeback *wb = data;
	struct backing_dev_info *bdi = wb->bdi;
	struct uf_cache *c = bdi->cache;
	const struct wb_policy *pol = c->policy;
	unsigned long pause = 1, max_pause;
	long pages_written;

	/* its sleeps are 6.18's wb_wakeup_delayed() works, on the wheel */
	current->timer_flags = cache_timer_flags(c);
	wb->last_active = jiffies;
	while (!kthread_should_stop()) {
		/* we are awake: the delayed wakeup is not needed */
		del_timer(&wb->wakeup_timer);

		pages_written = wb_do_writeback(wb, 0);
		trace_writeback_pages_written(c, pages_written);
		if (pages_written) {
			wb->last_active = jiffies;
			pause = 1;
		}

		set_current_state(TASK_INTERRUPTIBLE);
		if (bdi_has_work(bdi) || kthread_should_stop()) {
			__set_current_state(TASK_RUNNING);
			continue;
		}
		max_pause = wb_max_pause(c);
		if (pol->kupdate_early && wb_has_more_io_wait(wb) &&
		    pause < max_pause) {
			/* kupdate-early: retry the parked inodes soon */
			schedule_timeout((long)pause);
			pause <<= 1;
		} else if (wb_has_dirty_io_locked(wb) &&
			   c->vm.dirty_writeback_interval) {
			schedule_timeout((long)max_pause);
		} else {
			schedule();	/* woken by work or new dirty inodes */
		}
	}

	/* works that raced with the stop */
	if (bdi_has_work(bdi))
		wb_do_writeback(wb, 1);
	return 0;
}

/* Start writeback of nr_pages (0: all dirty) on every device with dirty io. */
void wakeup_flusher_threads(struct uf_cache *cache, long nr_pages,
			    enum wb_reason reason)
{
	struct backing_dev_info *bdi;

	if (!nr_pages)
		nr_pages = (long)(global_page_state(cache, NR_FILE_DIRTY) +
				  global_page_state(cache, NR_UNSTABLE_NFS));
	spin_lock(&cache->bdi_lock);
	list_for_each_entry(bdi, &cache->bdi_list, bdi_list) {
		if (!wb_has_dirty_io_locked(&bdi->wb))
			continue;
		__bdi_start_writeback(bdi, nr_pages, false, reason);
	}
	spin_unlock(&cache->bdi_lock);
}

/* ------------------------------------------------------------------ */
/* Pageout works (seed 003, S003:L594-811)                             */

/*
 * The reserve of works reclaim draws from: the seed's wb_work_mempool,
 * mempool_create(1024, ...) with an allocator that refuses PF_MEMALLOC
 * callers, so that reclaim gets reserved elements only and never blocks.
 * uflush gives pageout works nothing but the reserve; other works keep
 * kzalloc (the seed's __bdi_start_writeback change is not needed for
 * that: reclaim queues no other work).  Global, as the seed's is.
 */
static struct wb_writeback_work wb_work_reserve[WB_WORK_RESERVE];
static struct wb_writeback_work *wb_work_free_list[WB_WORK_RESERVE];
static unsigned long wb_work_nr_free = WB_WORK_RESERVE;
static bool wb_work_reserve_ready;
static spinlock_t wb_work_lock = __SPIN_LOCK_UNLOCKED;

static struct wb_writeback_work *wb_work_alloc(void)
{
	struct wb_writeback_work *work = NULL;
	unsigned long i;

	spin_lock(&wb_work_lock);
	if (!wb_work_reserve_ready) {
		for (i = 0; i < WB_WORK_RESERVE; i++)
			wb_work_free_list[i] = &wb_work_reserve[i];
		wb_work_reserve_ready = true;
	}
	if (wb_work_nr_free)
		work = wb_work_free_list[--wb_work_nr_free];
	spin_unlock(&wb_work_lock);
	if (work) {
		memset(work, 0, sizeof(*work));
		work->from_reserve = 1;
	}
	return work;
}

void wb_work_free(struct wb_writeback_work *work)
{
	if (!work->from_reserve) {
		kfree(work);
		return;
	}
	spin_lock(&wb_work_lock);
	wb_work_free_list[wb_work_nr_free++] = work;
	spin_unlock(&wb_work_lock);
}

unsigned long wb_work_reserve_free(void)
{
	unsigned long n;

	spin_lock(&wb_work_lock);
	n = wb_work_reserve_ready ? wb_work_nr_free : WB_WORK_RESERVE;
	spin_unlock(&wb_work_lock);
	return n;
}

/* igrab(): a reference, unless the inode is being evicted. */
bool igrab(struct inode *inode)
{
	bool ok;

	spin_lock(&inode->i_lock);
	ok = !(inode->i_state & (I_FREEING | I_WILL_FREE));
	if (ok)
		inode->i_count++;
	spin_unlock(&inode->i_lock);
	return ok;
}

void iput(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	inode->i_count--;
	spin_unlock(&inode->i_lock);
	inode_wake_up_sync(inode);
}

static bool inode_unreferenced(struct inode *inode)
{
	bool ret;

	spin_lock(&inode->i_lock);
	ret = inode->i_count <= 1;
	spin_unlock(&inode->i_lock);
	return ret;
}

void inode_wait_for_pageout(struct inode *inode)
{
	DEFINE_WAIT_BIT(wait, &inode->i_state, __I_SYNC);
	wait_queue_head_t *wqh = inode_sync_waitqueue(inode);

	for (;;) {
		prepare_to_wait(wqh, &wait.wq_entry, TASK_UNINTERRUPTIBLE);
		if (inode_unreferenced(inode))
			break;
		schedule();
	}
	finish_wait(wqh, &wait.wq_entry);
}

/*
 * The write-around unit W: rounddown_pow_of_two(avg_write_bandwidth +
 * MIN_WRITEBACK_PAGES) >> 6, about 8-15 ms of the device's bandwidth
 * (S003:L738); 16 pages at least.
 */
unsigned long pageout_unit(struct backing_dev_info *bdi)
{
	unsigned long n, p = 1;

	/* the estimate is updated under list_lock (bdi_update_bandwidth) */
	spin_lock(&bdi->wb.list_lock);
	n = bdi->avg_write_bandwidth + (4096UL >> (PAGE_SHIFT - 10));
	spin_unlock(&bdi->wb.list_lock);

	while (p <= n / 2)
		p <<= 1;
	return p >> 6;
}

/*
 * extend_writeback_range() (S003:L648-677), with its unsigned compares:
 * a page inside the work is covered; a work of 8 units or more does not
 * grow; otherwise a page less than a unit before its start grows it
 * backwards by a unit, less than a unit after its end forwards.  Quirk
 * Q5 is kept (exactly a unit away is not merged), Q2 is fixed: a work
 * that starts before one unit does not grow backwards (the seed's
 * work->offset -= W would wrap).
 */
bool extend_writeback_range(struct wb_writeback_work *work,
			    unsigned long offset, unsigned long unit)
{
	unsigned long end = work->offset + (unsigned long)work->nr_pages;

	if (offset >= work->offset && offset < end)
		return true;
	if ((unsigned long)work->nr_pages >= 8 * unit)
		return false;
	if (work->offset - offset < unit && work->offset >= unit) {
		work->nr_pages += (long)unit;
		work->offset -= unit;
		return true;
	}
	if (offset - end < unit) {
		work->nr_pages += (long)unit;
		return true;
	}
	return false;
}

/*
 * bdi_flush_inode_range() (S003:L682-710): a new pageout work from the
 * reserve.  Quirk Q1 fixed: the inode reference taken is dropped when
 * the reserve is empty (the seed leaked it).
 */
static struct wb_writeback_work *
bdi_flush_inode_range(struct backing_dev_info *bdi, struct inode *inode,
		      unsigned long offset, unsigned long len)
{
	struct wb_writeback_work *work;

	if (!igrab(inode))
		return ERR_PTR(-ENOENT);
	work = wb_work_alloc();
	if (!work) {
		iput(inode);
		__atomic_add_fetch(&bdi->cache->pool.rstat.nr_pageout_nomem, 1,
				   __ATOMIC_RELAXED);
		if (trace_on(bdi->cache))
			trace_emit(bdi->cache, "trace_printk",
				   "wb_work_mempool alloc fail");
		return ERR_PTR(-ENOMEM);
	}
	work->sync_mode = WB_SYNC_NONE;
	work->inode = inode;
	work->offset = offset;
	work->nr_pages = (long)len;
	work->reason = WB_REASON_PAGEOUT;
	__atomic_add_fetch(&bdi->cache->pool.rstat.nr_pageout_works, 1,
			   __ATOMIC_RELAXED);
	bdi_queue_work(bdi, work);
	return work;
}

/*
 * flush_inode_page() (S003:L722-765): merge the page into one of the
 * inode's queued works, newest first, giving up after the depth limit of
 * same-inode works (other inodes' works are skipped uncounted, Q4 kept),
 * else queue a new work of one unit at the unit-aligned offset.  Search
 * and queueing are not atomic (Q3 kept: two reclaimers may queue
 * overlapping works; the second writes what is still dirty).  Extending
 * emits no tracepoint (Q6 kept).  @wait is the seed's GFP_NOIO versus
 * GFP_NOWAIT; the reserve never blocks either way.
 */
long flush_inode_page(struct address_space *mapping, struct page *page,
		      bool wait)
{
	struct backing_dev_info *bdi = mapping->backing_dev_info;
	struct inode *inode = mapping->host;
	unsigned long offset = page->index, unit;
	struct wb_writeback_work *work;
	long i = 1, ret = 0;

	(void)wait;
	if (!inode || !bdi)
		return -ENOENT;
	unit = pageout_unit(bdi);
	spin_lock(&bdi->wb_lock);
	list_for_each_entry_reverse(work, &bdi->work_list, list) {
		if (work->inode != inode)
			continue;
		if (extend_writeback_range(work, offset, unit)) {
			ret = i;
			break;
		}
		if (i++ > PAGEOUT_DEPTH_LIMIT)
			break;
	}
	spin_unlock(&bdi->wb_lock);
	if (ret > 0) {
		__atomic_add_fetch(&bdi->cache->pool.rstat.nr_pageout_merged,
				   1, __ATOMIC_RELAXED);
		return ret;
	}
	work = bdi_flush_inode_range(bdi, inode, offset - offset % unit, unit);
	return IS_ERR(work) ? PTR_ERR(work) : 0;
}

/*
 * wb_flush_inode() (S003:L774-789): write the work's range straight
 * through do_writepages, WB_SYNC_NONE (pages under writeback are
 * skipped), and drop the inode reference.  Returns pages written.
 */
long wb_flush_inode(struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	struct writeback_control wbc = {
		.sync_mode = WB_SYNC_NONE,
		.nr_to_write = LONG_MAX,
		.range_start = (loff_t)work->offset << PAGE_CACHE_SHIFT,
		.range_end = (loff_t)(work->offset + (unsigned long)work->nr_pages
				      - 1) << PAGE_CACHE_SHIFT,
	};

	(void)wb;
	do_writepages(work->inode->i_mapping, &wbc);
	iput(work->inode);
	return LONG_MAX - wbc.nr_to_write;
}

/* ------------------------------------------------------------------ */
/* Dirtying                                                            */

/*
 * Mark an inode dirty.  The first dirtying puts it at the head of b_dirty
 * with dirtied_when = now; an inode already dirty keeps its place and its
 * time, or b_dirty would lose its order.  An inode under I_SYNC only gets
 * the flags: writeback_single_inode() requeues it when done.  The first
 * dirty inode of a device arms the flusher's delayed wakeup.
 */
void __mark_inode_dirty(struct inode *inode, int flags)
{
	struct backing_dev_info *bdi;
	unsigned long was_dirty;
	bool wakeup_bdi = false;

	/*
	 * The kernel first checks i_state without the lock (after a barrier)
	 * to skip the lock for an inode already dirty.  That read races with
	 * writers under i_lock by design; here the check is made under the
	 * lock, which keeps the engine race-free for ThreadSanitizer.
	 */
	spin_lock(&inode->i_lock);
	if ((inode->i_state & (unsigned long)flags) == (unsigned long)flags)
		goto out_unlock_inode;
	was_dirty = inode->i_state & I_DIRTY;
	inode->i_state |= (unsigned long)flags;
	/*
	 * 3.x leaves an inode under writeback to writeback_single_inode();
	 * 6.18 only one the flusher has queued (I_SYNC_QUEUED): an inode
	 * written by fsync and redirtied after it went clean goes to b_dirty
	 * now, with a new dirtied_when.
	 */
	if (inode->i_state & (inode_cache(inode)->policy->inode_wb_mainline ?
			      I_SYNC_QUEUED : I_SYNC))
		goto out_unlock_inode;
	if (inode->i_state & I_FREEING || was_dirty)
		goto out_unlock_inode;

	bdi = inode_to_bdi(inode);
	WARN_ON(!test_bit(BDI_registered, &bdi->state));
	spin_unlock(&inode->i_lock);

	spin_lock(&bdi->wb.list_lock);
	if (!wb_has_dirty_io(&bdi->wb))
		wakeup_bdi = true;
	inode->dirtied_when = jiffies;
	list_move(&inode->i_wb_list, &bdi->wb.b_dirty);
	spin_unlock(&bdi->wb.list_lock);

	if (wakeup_bdi)
		bdi_wakeup_thread_delayed(bdi);
	return;

out_unlock_inode:
	spin_unlock(&inode->i_lock);
}

/* ------------------------------------------------------------------ */
/* Superblock-wide writeback and sync                                  */

bool grab_super_passive(struct super_block *sb)
{
	return down_read_trylock(&sb->s_umount);
}

void drop_super(struct super_block *sb)
{
	up_read(&sb->s_umount);
}

/* Wait for the writeback of every inode of sb that has pages. */
static void wait_sb_inodes(struct super_block *sb)
{
	struct inode *inode, *old_inode = NULL;

	spin_lock(&sb->s_inode_list_lock);
	list_for_each_entry(inode, &sb->s_inodes, i_sb_list) {
		spin_lock(&inode->i_lock);
		if (inode->i_state & (I_FREEING | I_WILL_FREE | I_NEW) ||
		    !__atomic_load_n(&inode->i_mapping->nrpages,
				     __ATOMIC_RELAXED)) {
			spin_unlock(&inode->i_lock);
			continue;
		}
		/* __iget(): the reference keeps evict() waiting (i_count),
		 * so the inode stays on s_inodes while the lock is dropped
		 * for the sleep, as the kernel does */
		inode->i_count++;
		spin_unlock(&inode->i_lock);
		spin_unlock(&sb->s_inode_list_lock);
		if (old_inode)
			iput(old_inode);
		old_inode = inode;
		filemap_fdatawait(inode->i_mapping);
		spin_lock(&sb->s_inode_list_lock);
	}
	spin_unlock(&sb->s_inode_list_lock);
	if (old_inode)
		iput(old_inode);
}

/*
 * Queue a work and wait for it.  A device registered without a flusher
 * (unit tests) has nobody to run it, so the caller does, as the 3.2 forker
 * thread ran works for a bdi whose flusher had not started yet.
 */
static void queue_and_wait(struct super_block *sb,
			   struct wb_writeback_work *work)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct backing_dev_info *bdi = sb->s_bdi;
	bool threadless;

	work->done = &done;
	bdi_queue_work(bdi, work);
	spin_lock(&bdi->wb_lock);
	threadless = !bdi->wb.task;
	spin_unlock(&bdi->wb_lock);
	if (threadless)
		wb_do_writeback(&bdi->wb, 0);
	wait_for_completion(&done);
}

/* Start writeback of up to nr pages of sb's inodes and wait for the work. */
void writeback_inodes_sb_nr(struct super_block *sb, unsigned long nr,
			    enum wb_reason reason)
{
	struct wb_writeback_work work = {
		.sb = sb,
		.sync_mode = WB_SYNC_NONE,
		.tagged_writepages = 1,
		.nr_pages = (long)nr,
		.reason = reason,
	};

	queue_and_wait(sb, &work);
}

void writeback_inodes_sb(struct super_block *sb, enum wb_reason reason)
{
	writeback_inodes_sb_nr(sb, (unsigned long)get_nr_dirty_pages(
				       sb->s_cache), reason);
}

/*
 * Data integrity: write every dirty inode of sb that was dirty when the
 * work started (the fixed cutoff and tagging keep redirtiers from
 * livelocking it), then wait for all of sb's writeback.
 */
void sync_inodes_sb(struct super_block *sb)
{
	struct wb_writeback_work work = {
		.sb = sb,
		.sync_mode = WB_SYNC_ALL,
		.nr_pages = LONG_MAX,
		.range_cyclic = 0,
		.reason = WB_REASON_SYNC,
	};

	queue_and_wait(sb, &work);
	wait_sb_inodes(sb);
}

int write_inode_now(struct inode *inode, int sync)
{
	struct bdi_writeback *wb = &inode_to_bdi(inode)->wb;
	struct writeback_control wbc = {
		.nr_to_write = LONG_MAX,
		.sync_mode = sync ? WB_SYNC_ALL : WB_SYNC_NONE,
		.range_start = 0,
		.range_end = LLONG_MAX,
	};
	int ret;

	spin_lock(&wb->list_lock);
	spin_lock(&inode->i_lock);
	ret = writeback_single_inode(inode, wb, &wbc);
	spin_unlock(&inode->i_lock);
	spin_unlock(&wb->list_lock);
	if (sync)
		inode_wait_for_writeback_sync(inode);
	return ret;
}

int sync_inode(struct inode *inode, struct writeback_control *wbc)
{
	struct bdi_writeback *wb = &inode_to_bdi(inode)->wb;
	int ret;

	spin_lock(&wb->list_lock);
	spin_lock(&inode->i_lock);
	ret = writeback_single_inode(inode, wb, wbc);
	spin_unlock(&inode->i_lock);
	spin_unlock(&wb->list_lock);
	return ret;
}

/* Write the inode's metadata only (nr_to_write = 0). */
int sync_inode_metadata(struct inode *inode, int wait)
{
	struct writeback_control wbc = {
		.sync_mode = wait ? WB_SYNC_ALL : WB_SYNC_NONE,
		.nr_to_write = 0,
	};

	return sync_inode(inode, &wbc);
}

/*
 * 3.1/3.2's writeback_inodes_wb(): write up to @nr_pages of @wb's dirty
 * inodes (all of b_dirty is eligible) from the calling thread.  3.1's
 * balance_dirty_pages() has throttled writers write pages this way.
 */
long writeback_inodes_wb(struct bdi_writeback *wb, long nr_pages)
{
	struct wb_writeback_work work = {
		.nr_pages = nr_pages,
		.sync_mode = WB_SYNC_NONE,
		.range_cyclic = 1,
		.reason = WB_REASON_BACKGROUND,
	};

	spin_lock(&wb->list_lock);
	if (list_empty(&wb->b_io))
		queue_io(wb, &work);
	__writeback_inodes_wb(wb, &work);
	spin_unlock(&wb->list_lock);
	return nr_pages - work.nr_pages;
}
