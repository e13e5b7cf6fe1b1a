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

/* p2-v3/p2-v4 first row: sync livelock prevention, then stop. */
static bool sync_redirty(struct inode *inode, struct bdi_writeback *wb,
			 struct writeback_control *wbc)
{
	if (!requeue_sync_stamp(inode, wbc))
		return false;
	redirty_tail(inode, wb);
	return true;
}

/* "inode_written ? redirty_tail : requeue_io", or clean: off the lists. */
static void dirty_or_clean(struct inode *inode, struct bdi_writeback *wb,
			   bool inode_written)
{
	if (inode->i_state & I_DIRTY) {
		if (inode_written)
			redirty_tail(inode, wb);
		else
			requeue_io(inode, wb);
	} else {
		list_del_init(&inode->i_wb_list);
	}
}

static void requeue_p2_v3(struct inode *inode, struct bdi_writeback *wb,
			  struct writeback_control *wbc, bool inode_written)
{
	if (sync_redirty(inode, wb, wbc))
		return;
	if (mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY)) {
		inode->i_state |= I_DIRTY_PAGES;
		requeue_io(inode, wb);
		return;
	}
	dirty_or_clean(inode, wb, inode_written);
}

static void requeue_requeue4(struct inode *inode, struct bdi_writeback *wb,
			     struct writeback_control *wbc, bool inode_written)
{
	requeue_sync_stamp(inode, wbc);
	if (requeue_pages_left(inode, wb, wbc, redirty_tail))
		return;
	dirty_or_clean(inode, wb, inode_written);
}

static void requeue_p2_v4(struct inode *inode, struct bdi_writeback *wb,
			  struct writeback_control *wbc, bool inode_written)
{
	if (sync_redirty(inode, wb, wbc))
		return;
	if (requeue_pages_left(inode, wb, wbc, redirty_tail))
		return;
	dirty_or_clean(inode, wb, inode_written);
}

static void apply_v3(struct wb_policy *pol)
{
	pol->requeue = requeue_p2_v3;
}

static void apply_4(struct wb_policy *pol)
{
	pol->requeue = requeue_requeue4;
}

static void apply_v4(struct wb_policy *pol)
{
	pol->requeue = requeue_p2_v4;
}

const struct wb_variant wb_variant_requeue_p2_v3 = {
	.knob = "requeue", .value = "p2-v3",
	.source = "seed 000 L4590-4650: P2-v3, pages left always requeue_io",
	.apply = apply_v3,
};

const struct wb_variant wb_variant_requeue_requeue4 = {
	.knob = "requeue", .value = "requeue4",
	.source = "seed 000 L5893-5935: Wu's reduced P2",
	.apply = apply_4,
};

const struct wb_variant wb_variant_requeue_p2_v4 = {
	.knob = "requeue", .value = "p2-v4",
	.source = "seed 000 L4000-4060 (= P2-v3.1 L6610-6670)",
	.apply = apply_v4,
};
