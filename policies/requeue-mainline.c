// SPDX-License-Identifier: MIT
/*
 * policies/requeue-mainline.c - requeue=mainline: today's requeue_inode()
 * (Jan Kara, "writeback: Separate inode requeueing after writeback",
 * Linux 3.5; fs/fs-writeback.c:requeue_inode):
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
	if (wbc->pages_skipped)
		requeue_dirty_or_clean(inode, wb, redirty_tail);
	else
		requeue_after_sync(inode, wb, wbc, redirty_tail, redirty_tail);
}

DEFINE_WB_VARIANT(requeue_mainline, "requeue", "mainline",
		  "mainline requeue_inode()",
		  requeue, requeue_mainline);
