/* SPDX-License-Identifier: MIT */
/*
 * engine/fs/fs.h - struct inode and struct super_block (include/linux/fs.h),
 * as much of them as writeback reads.
 *
 * An inode is a struct uf_file: a byte range of one device, with its
 * mapping.  There is one super_block per device; its s_umount is what
 * grab_super_passive() try-locks, and the embedder can hold it
 * (uf_dev_hold_umount) to make that fail, as an unmount in progress would.
 */
#ifndef UF_FS_H
#define UF_FS_H

#include <stdint.h>
#include <sys/types.h>

#include "uflush.h"
#include "lib/list.h"
#include "mm/mm.h"
#include "kernel/spinlock.h"
#include "kernel/wait_bit.h"

/* i_state bits, with the 3.2-era values (include/linux/fs.h). */
#define I_DIRTY_SYNC		(1UL << 0)
#define I_DIRTY_DATASYNC	(1UL << 1)
#define I_DIRTY_PAGES		(1UL << 2)
#define __I_NEW			3
#define I_NEW			(1UL << __I_NEW)
#define I_WILL_FREE		(1UL << 4)
#define I_FREEING		(1UL << 5)
#define I_CLEAR			(1UL << 6)
#define __I_SYNC		7
#define I_SYNC			(1UL << __I_SYNC)
#define I_REFERENCED		(1UL << 8)
/*
 * 6.18's I_SYNC_QUEUED (its value there): the inode is on b_io or
 * b_more_io, so __mark_inode_dirty() leaves its list to the flusher.
 * Set and tested under requeue=mainline only.
 */
#define I_SYNC_QUEUED		(1UL << 17)

#define I_DIRTY (I_DIRTY_SYNC | I_DIRTY_DATASYNC | I_DIRTY_PAGES)

_Static_assert(I_DIRTY_SYNC == UF_I_DIRTY_SYNC, "public i_state bits");
_Static_assert(I_DIRTY_DATASYNC == UF_I_DIRTY_DATASYNC, "public i_state bits");

struct super_block;
struct writeback_control;

struct inode {
	unsigned long i_ino;
	unsigned long i_state;		/* under i_lock */
	spinlock_t i_lock;
	unsigned long dirtied_when;	/* jiffies of first dirtying */
	struct list_head i_wb_list;	/* b_dirty / b_io / b_more_io... */
	struct list_head i_sb_list;	/* sb->s_inodes */
	struct super_block *i_sb;
	struct address_space *i_mapping;
	struct address_space i_data;
	loff_t i_size;			/* the file's length, fixed at open */
	uint64_t dev_offset;		/* where byte 0 lives on the device */
	int i_count;	/* waiters: inode_sync_waitqueue() */

	/* the embedder's side (struct uf_file) */
	struct uf_file *handle;		/* what ops get: the handle, not a pointer */
	const struct uf_file_ops *ops;
	void *priv;
	errseq_t f_wb_err;		/* what this opener has seen */
};

/*
 * The __I_SYNC waiters (and uflush's evict() waits for i_count) sleep on the
 * hashed bit queue of i_state, as the kernel's inode_bit_waitqueue(): the
 * queue outlives the inode, whose slot a new open may reuse while a waiter
 * that held no reference is still leaving finish_wait().
 */
static inline wait_queue_head_t *inode_sync_waitqueue(struct inode *inode)
{
	return bit_waitqueue(&inode->i_state, __I_SYNC);
}

static inline void inode_wake_up_sync(struct inode *inode)
{
	wake_up_bit(&inode->i_state, __I_SYNC);
}

struct super_block {
	dev_t s_dev;
	struct backing_dev_info *s_bdi;
	struct rw_semaphore s_umount;
	spinlock_t s_inode_list_lock;
	struct list_head s_inodes;
	struct uf_cache *s_cache;
	unsigned long s_nr_inodes;
};

static inline struct uf_cache *inode_cache(const struct inode *inode)
{
	return inode->i_sb->s_cache;
}

/* ---- engine/fs/fs-writeback.c ---- */
void __mark_inode_dirty(struct inode *inode, int flags);
static inline void mark_inode_dirty(struct inode *inode)
{
	__mark_inode_dirty(inode, I_DIRTY);
}
int write_inode_now(struct inode *inode, int sync);
int sync_inode(struct inode *inode, struct writeback_control *wbc);
int sync_inode_metadata(struct inode *inode, int wait);
void inode_wait_for_writeback_sync(struct inode *inode);

/* Try to pin a superblock against unmount; false if s_umount is held. */
bool grab_super_passive(struct super_block *sb);
void drop_super(struct super_block *sb);

/*
 * Around a call into the embedder's uf_file_ops: which inode's callback
 * the thread is in (task_struct.in_file_op), so that a close it makes of
 * that file from there is refused instead of waiting for itself.
 */
static inline struct inode *file_op_enter(struct inode *inode)
{
	struct task_struct *tsk = current;
	struct inode *old = tsk->in_file_op;

	tsk->in_file_op = inode;
	return old;
}

static inline void file_op_exit(struct inode *old)
{
	current->in_file_op = old;
}

#endif /* UF_FS_H */
