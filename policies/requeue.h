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

/* Where a row puts the inode: redirty_tail, requeue_io, requeue_io_wait. */
typedef void (*requeue_fn)(struct inode *inode, struct bdi_writeback *wb);

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
				      requeue_fn blocked)
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

/* p2-v3, p2-v4, riw-sync: the sync stamp, then redirty_tail and stop. */
static inline bool requeue_sync_redirty(struct inode *inode,
					struct bdi_writeback *wb,
					struct writeback_control *wbc)
{
	if (!requeue_sync_stamp(inode, wbc))
		return false;
	redirty_tail(inode, wb);
	return true;
}

/* The last rows: inode still dirty → @dirty; clean → off the lists. */
static inline void requeue_dirty_or_clean(struct inode *inode,
					  struct bdi_writeback *wb,
					  requeue_fn dirty)
{
	if (inode->i_state & I_DIRTY) {
		dirty(inode, wb);
	} else {
		/* off b_io/b_more_io (6.18 inode_cgwb_move_to_attached) */
		inode->i_state &= ~I_SYNC_QUEUED;
		list_del_init(&inode->i_wb_list);
	}
}

/* Every row after the sync one, for all but p2-v3 (which never splits). */
static inline void requeue_after_sync(struct inode *inode,
				      struct bdi_writeback *wb,
				      struct writeback_control *wbc,
				      requeue_fn blocked, requeue_fn dirty)
{
	if (!requeue_pages_left(inode, wb, wbc, blocked))
		requeue_dirty_or_clean(inode, wb, dirty);
}

/*
 * base and riw: the sync stamp, then every row after it (a stamped inode
 * goes on through them), with @blocked for pages left in a slice not used
 * up and @dirty for an inode still dirty.
 */
#define DEFINE_REQUEUE_VARIANT(sym, value_, source_, blocked, dirty)	\
	static void sym(struct inode *inode, struct bdi_writeback *wb,	\
			struct writeback_control *wbc, bool inode_written, \
			unsigned long dirtied_before)			\
	{								\
		(void)inode_written;					\
		(void)dirtied_before;					\
		requeue_sync_stamp(inode, wbc);				\
		requeue_after_sync(inode, wb, wbc, blocked, dirty);	\
	}								\
	DEFINE_WB_VARIANT(sym, "requeue", value_, source_, requeue, sym)

#endif /* UF_POLICY_REQUEUE_H */
