// SPDX-License-Identifier: MIT
/*
 * policies/base.c - the writeback decisions of the tree the seed-000 series
 * applies to (Linux 3.1/3.2, before "writeback: Improve busyloop
 * prevention").  spec/seed-000-busyloop-requeue.md tags these [base]; the
 * removed lines of the series show them (seed 000 L73-86, L3985-4092).
 */
#include "backing-dev.h"
#include "fs.h"
#include "jiffies.h"
#include "policy.h"
#include "trace.h"
#include "writeback.h"

/*
 * B0: nothing written and b_more_io non-empty: wait for I_SYNC on the
 * oldest b_more_io inode (seed 000 L73-86).  If that inode is not under
 * writeback the wait returns at once and the loop goes round again: the
 * busy loop the series set out to remove (B1).
 */
static bool no_progress_b0(struct bdi_writeback *wb,
			   struct wb_writeback_work *work,
			   struct wb_loop_state *st)
{
	struct inode *inode;

	(void)st;
	trace_writeback_wait(wb->bdi, work);
	inode = list_last_entry(&wb->b_more_io, struct inode, i_wb_list);
	spin_lock(&inode->i_lock);
	inode_wait_for_writeback(inode, wb);
	spin_unlock(&inode->i_lock);
	return false;
}

/*
 * Cutoff before bg-all: only kupdate moves its cutoff (to now minus the
 * expire interval); background and every other work keep the work's start
 * time (seed 000 L749-767 context).
 */
static void cutoff_fixed(struct bdi_writeback *wb,
			 struct wb_writeback_work *work,
			 struct wb_loop_state *st)
{
	struct uf_cache *c = wb->bdi->cache;

	if (work->for_kupdate)
		st->oldest_jif = jiffies -
			msecs_to_jiffies(c->vm.dirty_expire_interval * 10);
}

/*
 * Base requeue after writeback_single_inode (seed 000 §2.2, "Base"):
 * a still-dirty inode under sync or tagged writeback gets dirtied_when =
 * now (sync livelock prevention), then: pages left and slice used up →
 * requeue_io; pages left otherwise → redirty_tail; inode dirty → redirty_tail;
 * clean → off the lists.
 */
static void requeue_base(struct inode *inode, struct bdi_writeback *wb,
			 struct writeback_control *wbc, bool inode_written)
{
	(void)inode_written;
	if ((inode->i_state & I_DIRTY) &&
	    (wbc->sync_mode == WB_SYNC_ALL || wbc->tagged_writepages))
		inode->dirtied_when = jiffies;

	if (mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY)) {
		/* not all pages written: the fs bailed, or the slice ended */
		inode->i_state |= I_DIRTY_PAGES;
		if (wbc->nr_to_write <= 0)
			requeue_io(inode, wb);
		else
			redirty_tail(inode, wb);	/* blocked: back off */
	} else if (inode->i_state & I_DIRTY) {
		/* redirtied during writeback, or write_inode failed */
		redirty_tail(inode, wb);
	} else {
		list_del_init(&inode->i_wb_list);
	}
}

/* "writeback is not making progress due to locked buffers" */
static void pages_skipped_redirty(struct inode *inode,
				  struct bdi_writeback *wb)
{
	redirty_tail(inode, wb);
}

/* "Don't use requeue_io() to avoid busy retrying the inode/sb." */
static void super_busy_redirty(struct inode *inode, struct bdi_writeback *wb)
{
	redirty_tail(inode, wb);
}

const struct wb_policy wb_policy_base = {
	.name = "base",
	.no_progress = no_progress_b0,
	.cutoff = cutoff_fixed,
	.requeue = requeue_base,
	.pages_skipped = pages_skipped_redirty,
	.super_busy = super_busy_redirty,
	.return_total_progress = false,
	.kupdate_early = false,
};
