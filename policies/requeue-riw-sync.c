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
			     struct writeback_control *wbc, bool inode_written)
{
	(void)inode_written;
	if (requeue_sync_stamp(inode, wbc)) {
		redirty_tail(inode, wb);
		return;
	}
	if (requeue_pages_left(inode, wb, wbc, requeue_io_wait))
		return;
	if (inode->i_state & I_DIRTY) {
		requeue_io_wait(inode, wb);
	} else {
		list_del_init(&inode->i_wb_list);
	}
}

static void apply(struct wb_policy *pol)
{
	pol->requeue = requeue_riw_sync;
}

const struct wb_variant wb_variant_requeue_riw_sync = {
	.knob = "requeue", .value = "riw-sync",
	.source = "riw + P2-v4 sync branch (spec §7 advice; not in the thread)",
	.apply = apply,
};
