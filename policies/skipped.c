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

/* The hook has redirty_tail()'s signature: each variant is the helper. */
DEFINE_WB_VARIANT(skipped_redirty, "skipped", "redirty",
		  "3.1 writeback_sb_inodes pages_skipped block",
		  pages_skipped, redirty_tail);

DEFINE_WB_VARIANT(skipped_requeue, "skipped", "requeue",
		  "seed 000 P2-v3/v3.1: requeue_io",
		  pages_skipped, requeue_io);

DEFINE_WB_VARIANT(skipped_requeue_wait, "skipped", "requeue-wait",
		  "seed 000 L1950-1956: requeue_io_wait",
		  pages_skipped, requeue_io_wait);

/* NULL: writeback_sb_inodes() has no pages_skipped block at all. */
DEFINE_WB_VARIANT(skipped_removed, "skipped", "removed",
		  "seed 000 L4062-4072, L6151-6166: block removed",
		  pages_skipped, NULL);
