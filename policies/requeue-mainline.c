// SPDX-License-Identifier: MIT
/*
 * policies/requeue-mainline.c - requeue=mainline: today's requeue_inode()
 * (Jan Kara, "Separate inode requeueing after writeback", v3.5;
 * spec/kernel-mainline.md §1.2 table):
 *
 *   still dirty under sync/tagged → dirtied_when = now, then on
 *   pages skipped                 → redirty_tail (if dirty) or off
 *   pages left, slice used up     → requeue_io
 *   pages left otherwise          → redirty_tail
 *   inode dirty                   → redirty_tail
 *   clean                         → off the lists
 *
 * The pages_skipped row lives here, so presets using it set skipped=removed.
 */
#include "policies/requeue.h"

static void requeue_mainline(struct inode *inode, struct bdi_writeback *wb,
			     struct writeback_control *wbc, bool inode_written)
{
	(void)inode_written;
	requeue_sync_stamp(inode, wbc);

	/* __writeback_single_inode() re-sets I_DIRTY_PAGES first */
	if (mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY))
		inode->i_state |= I_DIRTY_PAGES;
	if (wbc->pages_skipped) {
		if (inode->i_state & I_DIRTY)
			redirty_tail(inode, wb);
		else
			list_del_init(&inode->i_wb_list);
		return;
	}
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
	pol->requeue = requeue_mainline;
}

const struct wb_variant wb_variant_requeue_mainline = {
	.knob = "requeue", .value = "mainline",
	.source = "mainline requeue_inode()",
	.apply = apply,
};
