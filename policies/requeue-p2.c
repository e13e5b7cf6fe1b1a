// SPDX-License-Identifier: MIT
/*
 * policies/requeue-p2.c - requeue=p2-v3, requeue4, p2-v4: Jan Kara's
 * "Replace some redirty_tail() calls with requeue_io()" and Wu's reduction
 * of it (seed 000 §2.2 table).
 *
 *   p2-v3    (L4590-4650): a still-dirty inode under sync is redirty_tail'ed
 *            (with dirtied_when = now) and nothing else; pages left →
 *            requeue_io whether or not the slice was used up — the hunk
 *            behind btrfs −80 % (B2); inode dirty → inode_written ?
 *            redirty_tail : requeue_io.
 *   requeue4 (L5893-5935): keeps the base sync handling and the base split
 *            on nr_to_write; only the inode_written rule is new.
 *   p2-v4    (L4000-4060, = P2-v3.1 L6610-6670): p2-v3's sync branch, the
 *            base split on nr_to_write ("Writeback blocked by something.
 *            Put inode back to dirty list to prevent livelocking"), and the
 *            inode_written rule.
 */
#include "policies/requeue.h"

/* The inode_written rule: "inode_written ? redirty_tail : requeue_io". */
static requeue_fn written_rule(bool inode_written)
{
	return inode_written ? redirty_tail : requeue_io;
}

static void requeue_p2_v3(struct inode *inode, struct bdi_writeback *wb,
			  struct writeback_control *wbc, bool inode_written,
			  unsigned long dirtied_before)
{
	(void)dirtied_before;
	if (requeue_sync_redirty(inode, wb, wbc))
		return;
	if (mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY)) {
		inode->i_state |= I_DIRTY_PAGES;
		requeue_io(inode, wb);
		return;
	}
	requeue_dirty_or_clean(inode, wb, written_rule(inode_written));
}

static void requeue_requeue4(struct inode *inode, struct bdi_writeback *wb,
			     struct writeback_control *wbc, bool inode_written,
			     unsigned long dirtied_before)
{
	(void)dirtied_before;
	requeue_sync_stamp(inode, wbc);
	requeue_after_sync(inode, wb, wbc, redirty_tail,
			   written_rule(inode_written));
}

static void requeue_p2_v4(struct inode *inode, struct bdi_writeback *wb,
			  struct writeback_control *wbc, bool inode_written,
			  unsigned long dirtied_before)
{
	(void)dirtied_before;
	if (requeue_sync_redirty(inode, wb, wbc))
		return;
	requeue_after_sync(inode, wb, wbc, redirty_tail,
			   written_rule(inode_written));
}

DEFINE_WB_VARIANT(requeue_p2_v3, "requeue", "p2-v3",
		  "seed 000 L4590-4650: P2-v3, pages left always requeue_io",
		  requeue, requeue_p2_v3);

DEFINE_WB_VARIANT(requeue_requeue4, "requeue", "requeue4",
		  "seed 000 L5893-5935: Wu's reduced P2",
		  requeue, requeue_requeue4);

DEFINE_WB_VARIANT(requeue_p2_v4, "requeue", "p2-v4",
		  "seed 000 L4000-4060 (= P2-v3.1 L6610-6670)",
		  requeue, requeue_p2_v4);
