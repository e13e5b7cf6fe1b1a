// SPDX-License-Identifier: MIT
/*
 * policies/requeue-base.c - requeue=base: where writeback_single_inode()
 * put an inode before the series (seed 000 §2.2 "Base", the context and
 * removed lines of L3985-4060):
 *
 *   still dirty under WB_SYNC_ALL/tagged → dirtied_when = now, then on:
 *   pages left, slice used up            → requeue_io
 *   pages left, slice not used up        → redirty_tail ("blocked")
 *   inode dirty (redirtied or write_inode failed) → redirty_tail
 *   clean                                → off the lists
 *
 * The redirty_tail of an inode whose write_inode failed pushes its
 * dirtied_when forward: XFS's i_size could then wait "for a really long
 * time" (B10, L3956-3964).
 */
#include "policies/requeue.h"

static void requeue_base(struct inode *inode, struct bdi_writeback *wb,
			 struct writeback_control *wbc, bool inode_written)
{
	(void)inode_written;
	requeue_sync_stamp(inode, wbc);
	if (requeue_pages_left(inode, wb, wbc, redirty_tail))
		return;
	if (inode->i_state & I_DIRTY) {
		redirty_tail(inode, wb);
	} else {
		list_del_init(&inode->i_wb_list);
	}
}

static void apply(struct wb_policy *pol)
{
	pol->requeue = requeue_base;
}

const struct wb_variant wb_variant_requeue_base = {
	.knob = "requeue", .value = "base",
	.source = "seed 000 §2.2 Base (3.1 writeback_single_inode)",
	.apply = apply,
};
