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
#include "fs.h"
#include "jiffies.h"
#include "policy.h"
#include "writeback.h"

static void requeue_base(struct inode *inode, struct bdi_writeback *wb,
			 struct writeback_control *wbc, bool inode_written)
{
	(void)inode_written;
	if ((inode->i_state & I_DIRTY) &&
	    (wbc->sync_mode == WB_SYNC_ALL || wbc->tagged_writepages))
		inode->dirtied_when = jiffies;

	if (mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY)) {
		inode->i_state |= I_DIRTY_PAGES;
		if (wbc->nr_to_write <= 0)
			requeue_io(inode, wb);
		else
			redirty_tail(inode, wb);
	} else if (inode->i_state & I_DIRTY) {
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
