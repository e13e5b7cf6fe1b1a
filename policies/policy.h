/* SPDX-License-Identifier: MIT */
/*
 * policies/policy.h - the decision points of writeback that a flush policy
 * chooses (DESIGN.md §4).
 *
 * fs-writeback.c keeps the kernel's functions whole and asks the cache's
 * policy at exactly the places where the seeds' variants differ.  Each hook
 * is called with the locks the kernel held at that point (noted per hook),
 * so a variant reads like the hunk of the patch it comes from.
 *
 * This issue ships the pre-series base (the 3.1/3.2 tree the seed-000
 * patches apply to: "base"); the variants of seed 000 and later seeds add
 * more files here and a registry that composes them by name.
 */
#ifndef UF_POLICY_H
#define UF_POLICY_H

#include <stdbool.h>

struct bdi_writeback;
struct inode;
struct wb_writeback_work;
struct writeback_control;

/* wb_writeback()'s loop state that the variants read and write. */
struct wb_loop_state {
	unsigned long oldest_jif;	/* the cutoff (older_than_this) */
	unsigned long pause;		/* no-progress backoff, jiffies */
	unsigned long max_pause;
	long total_progress;
};

struct wb_policy {
	const char *name;

	/*
	 * wb_writeback(): the pass wrote nothing and b_more_io is not empty.
	 * Wait (or not) for something to change.  Return true to end the
	 * work.  Called and returns with wb->list_lock held.
	 */
	bool (*no_progress)(struct bdi_writeback *wb,
			    struct wb_writeback_work *work,
			    struct wb_loop_state *st);

	/*
	 * wb_writeback(): set st->oldest_jif at the top of each iteration,
	 * for kupdate (expiry) and background works; other works keep the
	 * start time (livelock avoidance).
	 */
	void (*cutoff)(struct bdi_writeback *wb, struct wb_writeback_work *work,
		       struct wb_loop_state *st);

	/*
	 * writeback_single_inode(): where the inode goes after writeback,
	 * the inode not being freed.  inode_written: write_inode succeeded
	 * or was not needed.  Called with wb->list_lock and i_lock held.
	 */
	void (*requeue)(struct inode *inode, struct bdi_writeback *wb,
			struct writeback_control *wbc, bool inode_written);

	/*
	 * writeback_sb_inodes(): wbc.pages_skipped != 0 after the inode was
	 * written.  NULL: the block is removed (P2-v4).  list_lock + i_lock.
	 */
	void (*pages_skipped)(struct inode *inode, struct bdi_writeback *wb);

	/*
	 * __writeback_inodes_wb(): grab_super_passive() failed for the
	 * inode's superblock.  list_lock held.
	 */
	void (*super_busy)(struct inode *inode, struct bdi_writeback *wb);

	/* wb_writeback() returns total progress instead of pages. */
	bool return_total_progress;
	/* kupdate runs early while b_more_io_wait is non-empty. */
	bool kupdate_early;
};

/* The built-in default. */
extern const struct wb_policy wb_policy_base;

/* Helpers the variants share (fs-writeback.c). */
void redirty_tail(struct inode *inode, struct bdi_writeback *wb);
void requeue_io(struct inode *inode, struct bdi_writeback *wb);
void requeue_io_wait(struct inode *inode, struct bdi_writeback *wb);
void inode_wait_for_writeback(struct inode *inode, struct bdi_writeback *wb);

#endif /* UF_POLICY_H */
