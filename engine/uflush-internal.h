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

/* The objects behind open handles; valid while the handle stays open
 * (handles are not pointers: see "Handle values" in api/handle.h). */
struct uf_cache *uf_cache_obj(struct uf_cache *cache);
struct backing_dev_info *uf_dev_bdi(struct uf_dev *dev);
struct inode *uf_file_inode(struct uf_file *file);

/*
 * Handle generations, for tests.  A handle carries its slot's generation
 * (40 bits); a slot that reaches UF_HANDLE_GEN_MAX is retired, never reused.
 * uf_handle_slot(): the slot index a cache, device, file or page handle
 * names (-EBADF if none); uf_handle_gen(): its generation;
 * uf_handle_age(): give the free slot of a closed cache, device or file
 * handle generation gen for its next open, to reach the end without 2^40
 * opens (-EBUSY if the slot is in use).
 */
#define UF_HANDLE_GEN_MAX	((1ull << 40) - 1)
long uf_handle_slot(const void *handle);
uint64_t uf_handle_gen(const void *handle);
int uf_handle_age(const void *closed, uint64_t gen);

#endif /* UF_UFLUSH_INTERNAL_H */
