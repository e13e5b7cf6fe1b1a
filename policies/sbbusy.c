// SPDX-License-Identifier: MIT
/*
 * policies/sbbusy.c - sbbusy=redirty, requeue, requeue-wait: what
 * __writeback_inodes_wb() does with an inode whose superblock it cannot
 * pin (grab_super_passive() failed: s_umount held, as by an unmount).
 *
 *   redirty      (base, L4080-4086): "Don't use requeue_io() to avoid busy
 *                retrying the inode/sb." — moves dirtied_when forward
 *   requeue      (P2-v3/v4, L4079-4087): requeue_io, relying on the backoff
 *   requeue-wait (RIW, L1957-1966): "it's not even the current inode being
 *                blocked, but _something_" (Wu L1510-1515)
 */
#include "policies/policy.h"

/* The hook has redirty_tail()'s signature: each variant is the helper. */
DEFINE_WB_VARIANT(sbbusy_redirty, "sbbusy", "redirty",
		  "seed 000 L4080-4086 (base)",
		  super_busy, redirty_tail);

DEFINE_WB_VARIANT(sbbusy_requeue, "sbbusy", "requeue",
		  "seed 000 L4079-4087 (P2)",
		  super_busy, requeue_io);

DEFINE_WB_VARIANT(sbbusy_requeue_wait, "sbbusy", "requeue-wait",
		  "seed 000 L1957-1966 (RIW)",
		  super_busy, requeue_io_wait);
