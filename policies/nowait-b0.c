// SPDX-License-Identifier: MIT
/*
 * policies/nowait-b0.c - nowait=b0: the no-progress wait before the series
 * (seed 000 L73-86, the lines v4 removes).  Nothing was written and
 * b_more_io is not empty: wait for I_SYNC on the oldest b_more_io inode.
 * If that inode is not under writeback the wait returns at once and
 * wb_writeback goes round again — the busy loop the series set out to stop.
 * wu-riw keeps this wait (its b_more_io only holds inodes that progressed).
 */
#include "policies/nowait.h"

static bool no_progress_b0(struct bdi_writeback *wb,
			   struct wb_writeback_work *work,
			   struct wb_loop_state *st)
{
	struct inode *inode = nowait_oldest_more_io(wb, work, st);

	inode_wait_for_writeback(inode, wb);
	spin_unlock(&inode->i_lock);
	return false;
}

DEFINE_WB_VARIANT(nowait_b0, "nowait", "b0",
		  "seed 000 L73-86 (removed by v4): wait on oldest b_more_io inode",
		  no_progress, no_progress_b0);
