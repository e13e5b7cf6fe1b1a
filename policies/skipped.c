// SPDX-License-Identifier: MIT
/*
 * policies/skipped.c - skipped=redirty, requeue, requeue-wait, removed: the
 * pages_skipped block of writeback_sb_inodes().
 *
 *   redirty      (base): "writeback is not making progress due to locked
 *                buffers. Skip this inode for now." → redirty_tail
 *   requeue      (P2-v3, P2-v3.1): requeue_io
 *   requeue-wait (RIW, L1950-1956): requeue_io_wait
 *   removed      (P2-v4, requeue5; L4062-4072, L6151-6166): the block
 *                could move an inode writeback_single_inode had just
 *                redirty_tail'ed (B3)
 */
#include "policies/policy.h"

static void skipped_redirty(struct inode *inode, struct bdi_writeback *wb)
{
	redirty_tail(inode, wb);
}

static void skipped_requeue(struct inode *inode, struct bdi_writeback *wb)
{
	requeue_io(inode, wb);
}

static void skipped_requeue_wait(struct inode *inode,
				 struct bdi_writeback *wb)
{
	requeue_io_wait(inode, wb);
}

static void apply_redirty(struct wb_policy *pol)
{
	pol->pages_skipped = skipped_redirty;
}

static void apply_requeue(struct wb_policy *pol)
{
	pol->pages_skipped = skipped_requeue;
}

static void apply_requeue_wait(struct wb_policy *pol)
{
	pol->pages_skipped = skipped_requeue_wait;
}

static void apply_removed(struct wb_policy *pol)
{
	pol->pages_skipped = NULL;
}

const struct wb_variant wb_variant_skipped_redirty = {
	.knob = "skipped", .value = "redirty",
	.source = "3.1 writeback_sb_inodes pages_skipped block",
	.apply = apply_redirty,
};

const struct wb_variant wb_variant_skipped_requeue = {
	.knob = "skipped", .value = "requeue",
	.source = "seed 000 P2-v3/v3.1: requeue_io",
	.apply = apply_requeue,
};

const struct wb_variant wb_variant_skipped_requeue_wait = {
	.knob = "skipped", .value = "requeue-wait",
	.source = "seed 000 L1950-1956: requeue_io_wait",
	.apply = apply_requeue_wait,
};

const struct wb_variant wb_variant_skipped_removed = {
	.knob = "skipped", .value = "removed",
	.source = "seed 000 L4062-4072, L6151-6166: block removed",
	.apply = apply_removed,
};
