// SPDX-License-Identifier: MIT
/*
 * policies/nowait-mainline.c - nowait=mainline: Linux 6.18's wb_writeback
 * (fs/fs-writeback.c): nothing written and b_more_io not empty, sleep once
 * until the oldest b_more_io inode's I_SYNC clears
 * (inode_sleep_on_writeback); if it is not under writeback, go on at once.
 * Mainline never requeue_io()s an inode that made no progress, so its
 * b_more_io holds only inodes under writeback or with their slice used up.
 *
 * The knob also selects 6.18's loop around it (wb_policy.wb_loop_mainline,
 * fs-writeback.c:wb_writeback): the cutoff is taken only when b_io is
 * empty, right before queue_io, and an empty pass waits (or ends the work)
 * only once a pass of the work has queued.
 */
#include "kernel/sched.h"
#include "policies/nowait.h"

/* Called with i_lock held; drops it. */
static void inode_sleep_on_writeback(struct inode *inode)
{
	DEFINE_WAIT_BIT(wait, &inode->i_state, __I_SYNC);
	wait_queue_head_t *wqh = inode_sync_waitqueue(inode);
	bool sleep;

	/* the hashed queue: nothing pins the inode, which may be evicted
	 * and its slot reused before finish_wait() (as in 6.18) */
	prepare_to_wait(wqh, &wait.wq_entry, TASK_UNINTERRUPTIBLE);
	sleep = inode->i_state & I_SYNC;
	spin_unlock(&inode->i_lock);
	if (sleep)
		schedule();
	finish_wait(wqh, &wait.wq_entry);
}

static bool no_progress_mainline(struct bdi_writeback *wb,
				 struct wb_writeback_work *work,
				 struct wb_loop_state *st)
{
	struct inode *inode = nowait_oldest_more_io(wb, work, st);

	spin_unlock(&wb->list_lock);
	inode_sleep_on_writeback(inode);
	spin_lock(&wb->list_lock);
	return false;
}

static void apply_nowait_mainline(struct wb_policy *pol)
{
	pol->no_progress = no_progress_mainline;
	pol->wb_loop_mainline = true;
}

const struct wb_variant wb_variant_nowait_mainline = {
	.knob = "nowait", .value = "mainline",
	.source = "Linux 6.18 wb_writeback (cutoff at queue_io, wait once queued) + inode_sleep_on_writeback()",
	.apply = apply_nowait_mainline,
};
