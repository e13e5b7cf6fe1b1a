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
#include "policies/requeue.h"

DEFINE_REQUEUE_VARIANT(requeue_base, "base",
		       "seed 000 §2.2 Base (3.1 writeback_single_inode)",
		       redirty_tail, redirty_tail);
