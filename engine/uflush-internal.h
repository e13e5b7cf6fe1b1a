/* SPDX-License-Identifier: MIT */
/*
 * engine/uflush-internal.h - what the tests and benchmarks in this tree
 * may use beyond include/uflush.h: the kernel objects behind the handles,
 * and a device without a flusher thread.  Not installed.
 */
#ifndef UF_UFLUSH_INTERNAL_H
#define UF_UFLUSH_INTERNAL_H

#include "uflush.h"

struct backing_dev_info;
struct inode;

/*
 * uf_dev_config.flags: register the device without its flusher thread, so
 * a unit test can call wb_writeback() and friends itself with nothing
 * running behind its back.  Works queued with bdi_queue_work() then wait
 * until the test runs wb_do_writeback().
 */
#define UF_DEV_NO_FLUSHER	(1u << 30)

struct backing_dev_info *uf_dev_bdi(struct uf_dev *dev);
struct inode *uf_file_inode(struct uf_file *file);

#endif /* UF_UFLUSH_INTERNAL_H */
