/* SPDX-License-Identifier: MIT */
/*
 * policies/requeue.h - the rows the requeue variants share (seed 000 §2.2
 * table), so each variant file holds only the rows where it differs.
 * Called with wb->list_lock and inode->i_lock held.
 */
#ifndef UF_POLICY_REQUEUE_H
#define UF_POLICY_REQUEUE_H

#include "fs/fs.h"
#include "kernel/jiffies.h"
#include "policies/policy.h"
#include "fs/writeback.h"

/*
 * Sync livelock prevention (L4003-4012): a still-dirty inode under
 * WB_SYNC_ALL or tagged writeback gets dirtied_when = now, so the same
 * sync work does not pick it up again.  True if it applied.
 */
static inline bool requeue_sync_stamp(struct inode *inode,
				      struct writeback_control *wbc)
{
	if (!(inode->i_state & I_DIRTY) ||
	    (wbc->sync_mode != WB_SYNC_ALL && !wbc->tagged_writepages))
		return false;
	inode->dirtied_when = jiffies;
	return true;
}

/*
 * Pages still tagged dirty (the base split): slice used up → requeue_io;
 * otherwise writeback was blocked → @blocked (redirty_tail, or RIW's
 * requeue_io_wait).  True if pages were left.
 */
static inline bool requeue_pages_left(struct inode *inode,
				      struct bdi_writeback *wb,
				      struct writeback_control *wbc,
				      void (*blocked)(struct inode *,
						      struct bdi_writeback *))
{
	if (!mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY))
		return false;
	inode->i_state |= I_DIRTY_PAGES;
	if (wbc->nr_to_write <= 0)
		requeue_io(inode, wb);
	else
		blocked(inode, wb);
	return true;
}

#endif /* UF_POLICY_REQUEUE_H */
