// SPDX-License-Identifier: MIT
/*
 * policies/nowait-mainline.c - nowait=mainline: today's wb_writeback
 * (torvalds/linux 2025, fs/fs-writeback.c:wb_writeback): nothing written and b_more_io not empty,
 * sleep once until the oldest b_more_io inode's I_SYNC clears
 * (inode_sleep_on_writeback); if it is not under writeback, go on at once.
 * Mainline never requeue_io()s an inode that made no progress, so its
 * b_more_io holds only inodes under writeback or with their slice used up.
 */
#include "kernel/sched.h"
#include "policies/nowait.h"

/* Called with i_lock held; drops it. */
static void inode_sleep_on_writeback(struct inode *inode)
{
	DEFINE_WAIT(wait);
	bool sleep;

	prepare_to_wait(&inode->i_sync_wait, &wait, TASK_UNINTERRUPTIBLE);
	sleep = inode->i_state & I_SYNC;
	spin_unlock(&inode->i_lock);
	if (sleep)
		schedule();
	finish_wait(&inode->i_sync_wait, &wait);
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

DEFINE_WB_VARIANT(nowait_mainline, "nowait", "mainline",
		  "mainline wb_writeback + inode_sleep_on_writeback()",
		  no_progress, no_progress_mainline);
