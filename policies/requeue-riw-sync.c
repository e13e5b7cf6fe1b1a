// SPDX-License-Identifier: MIT
/*
 * policies/requeue-riw-sync.c - requeue=riw-sync: Wu's requeue_io_wait
 * (requeue=riw) with P2-v4's sync branch in front, as the seed-000 digest
 * advises for anyone building RIW (spec §7 [ours]): a still-dirty inode
 * under WB_SYNC_ALL or tagged writeback gets dirtied_when = now and goes to
 * b_dirty, so a sync work cannot be livelocked through b_more_io_wait.
 * Not in the thread; offered beside the faithful riw.
 */
#include "fs.h"
#include "jiffies.h"
#include "policy.h"
#include "writeback.h"

static void requeue_riw_sync(struct inode *inode, struct bdi_writeback *wb,
			     struct writeback_control *wbc, bool inode_written)
{
	(void)inode_written;
	if ((inode->i_state & I_DIRTY) &&
	    (wbc->sync_mode == WB_SYNC_ALL || wbc->tagged_writepages)) {
		inode->dirtied_when = jiffies;
		redirty_tail(inode, wb);
		return;
	}
	if (mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY)) {
		inode->i_state |= I_DIRTY_PAGES;
		if (wbc->nr_to_write <= 0)
			requeue_io(inode, wb);
		else
			requeue_io_wait(inode, wb);
	} else if (inode->i_state & I_DIRTY) {
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
