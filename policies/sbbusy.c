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

static void sbbusy_redirty(struct inode *inode, struct bdi_writeback *wb)
{
	redirty_tail(inode, wb);
}

static void sbbusy_requeue(struct inode *inode, struct bdi_writeback *wb)
{
	requeue_io(inode, wb);
}

static void sbbusy_requeue_wait(struct inode *inode, struct bdi_writeback *wb)
{
	requeue_io_wait(inode, wb);
}

static void apply_redirty(struct wb_policy *pol)
{
	pol->super_busy = sbbusy_redirty;
}

static void apply_requeue(struct wb_policy *pol)
{
	pol->super_busy = sbbusy_requeue;
}

static void apply_requeue_wait(struct wb_policy *pol)
{
	pol->super_busy = sbbusy_requeue_wait;
}

const struct wb_variant wb_variant_sbbusy_redirty = {
	.knob = "sbbusy", .value = "redirty",
	.source = "seed 000 L4080-4086 (base)",
	.apply = apply_redirty,
};

const struct wb_variant wb_variant_sbbusy_requeue = {
	.knob = "sbbusy", .value = "requeue",
	.source = "seed 000 L4079-4087 (P2)",
	.apply = apply_requeue,
};

const struct wb_variant wb_variant_sbbusy_requeue_wait = {
	.knob = "sbbusy", .value = "requeue-wait",
	.source = "seed 000 L1957-1966 (RIW)",
	.apply = apply_requeue_wait,
};
