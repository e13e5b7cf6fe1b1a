// SPDX-License-Identifier: MIT
/*
 * policies/requeue-mainline.c - requeue=mainline: Linux 6.18's
 * requeue_inode() (fs/fs-writeback.c; its shape from Jan Kara's
 * "writeback: Separate inode requeueing after writeback", Linux 3.5):
 *
 *   still dirty under sync/tagged → dirtied_when = now, then on
 *   pages skipped                 → redirty_tail (if dirty) or off
 *   pages left, slice used up,
 *     not dirtied after the pass began → requeue_io
 *   pages left otherwise          → redirty_tail
 *   inode dirty                   → redirty_tail
 *   clean                         → off the lists
 *
 * The pages_skipped row lives here, so presets using it set skipped=removed.
 * The knob also selects 6.18's inode path in fs-writeback.c
 * (wb_policy.inode_wb_mainline): I_DIRTY cleared after do_writepages,
 * requeueing by the flusher only, I_SYNC_QUEUED.
 */
#include "policies/requeue.h"

static void requeue_mainline(struct inode *inode, struct bdi_writeback *wb,
			     struct writeback_control *wbc, bool inode_written,
			     unsigned long dirtied_before)
{
	(void)inode_written;
	requeue_sync_stamp(inode, wbc);

	if (wbc->pages_skipped) {
		requeue_dirty_or_clean(inode, wb, redirty_tail);
		return;
	}
	if (!mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY)) {
		requeue_dirty_or_clean(inode, wb, redirty_tail);
		return;
	}
	/*
	 * A slice used up goes round again only if the inode was not
	 * redirtied (or sync-stamped) after the pass began: 6.18's
	 * inode_dirtied_after(inode, dirtied_before) test.
	 */
	if (wbc->nr_to_write <= 0 &&
	    !time_after(inode->dirtied_when, dirtied_before))
		requeue_io(inode, wb);
	else
		redirty_tail(inode, wb);
}

static void apply_requeue_mainline(struct wb_policy *pol)
{
	pol->requeue = requeue_mainline;
	pol->inode_wb_mainline = true;
}

const struct wb_variant wb_variant_requeue_mainline = {
	.knob = "requeue", .value = "mainline",
	.source = "Linux 6.18 requeue_inode(), __writeback_single_inode(), writeback_single_inode(), I_SYNC_QUEUED",
	.apply = apply_requeue_mainline,
};
