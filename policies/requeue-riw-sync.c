// SPDX-License-Identifier: MIT
/*
 * policies/requeue-riw-sync.c - requeue=riw-sync: Wu's requeue_io_wait
 * (requeue=riw) with P2-v4's sync branch in front, as the seed-000 digest
 * advises for anyone building RIW (spec §7 [ours]): a still-dirty inode
 * under WB_SYNC_ALL or tagged writeback gets dirtied_when = now and goes to
 * b_dirty, so a sync work cannot be livelocked through b_more_io_wait.
 * Not in the thread; offered beside the faithful riw.
 */
#include "policies/requeue.h"

static void requeue_riw_sync(struct inode *inode, struct bdi_writeback *wb,
			     struct writeback_control *wbc, bool inode_written,
			     unsigned long dirtied_before)
{
	(void)dirtied_before;
	(void)inode_written;
	if (requeue_sync_redirty(inode, wb, wbc))
		return;
	requeue_after_sync(inode, wb, wbc, requeue_io_wait, requeue_io_wait);
}

DEFINE_WB_VARIANT(requeue_riw_sync, "requeue", "riw-sync",
		  "riw + P2-v4 sync branch (spec §7 advice; not in the thread)",
		  requeue, requeue_riw_sync);
