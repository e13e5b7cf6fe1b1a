/* SPDX-License-Identifier: MIT */
/*
 * policies/nowait.h - what the no-progress variants (nowait=...) share.
 * Called with wb->list_lock held.
 */
#ifndef UF_POLICY_NOWAIT_H
#define UF_POLICY_NOWAIT_H

#include "mm/backing-dev.h"
#include "fs/fs.h"
#include "policies/policy.h"
#include "trace/events/writeback.h"

/* Every no-progress wait is counted (benches read nr_waits) and traced. */
static inline void nowait_account(struct bdi_writeback *wb,
				  struct wb_writeback_work *work,
				  struct wb_loop_state *st)
{
	st->nr_waits++;
	__atomic_add_fetch(&wb->bdi->nr_wb_wait, 1, __ATOMIC_RELAXED);
	trace_writeback_wait(wb->bdi, work);
}

/*
 * b0 and mainline wait on the oldest inode of b_more_io: account the wait
 * and return that inode with its i_lock held.
 */
static inline struct inode *nowait_oldest_more_io(struct bdi_writeback *wb,
						  struct wb_writeback_work *work,
						  struct wb_loop_state *st)
{
	struct inode *inode;

	nowait_account(wb, work, st);
	inode = list_last_entry(&wb->b_more_io, struct inode, i_wb_list);
	spin_lock(&inode->i_lock);
	return inode;
}

#endif /* UF_POLICY_NOWAIT_H */
