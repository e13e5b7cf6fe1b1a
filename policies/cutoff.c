// SPDX-License-Identifier: MIT
/*
 * policies/cutoff.c - cutoff=fixed, v4.2, bg-all: the older_than_this of
 * each wb_writeback iteration.  kupdate always takes what has expired
 * (now - dirty_expire_interval, seed 000 L763-767); the variants differ
 * for the other works.
 *
 *   fixed  (base): every other work keeps its start time, which also
 *          keeps sync from livelocking (I3).  A background work then never
 *          sees an inode dirtied after it started (B4b).
 *   v4.2   (L755-769): after a no-progress sleep (pause > 1), every
 *          non-kupdate work moves the cutoff to now.  Wu: this breaks sync
 *          livelock prevention (L958-970, B7).
 *   bg-all (L1223-1271, merged Dec 5): background moves it to now on every
 *          iteration; other works stay fixed.
 */
#include "mm/backing-dev.h"
#include "kernel/jiffies.h"
#include "policies/policy.h"
#include "fs/writeback.h"

static bool kupdate_cutoff(struct bdi_writeback *wb,
			   struct wb_writeback_work *work,
			   struct wb_loop_state *st)
{
	struct uf_cache *c = wb->bdi->cache;

	if (!work->for_kupdate)
		return false;
	st->oldest_jif = jiffies -
		msecs_to_jiffies(c->vm.dirty_expire_interval * 10);
	return true;
}

static void cutoff_fixed(struct bdi_writeback *wb,
			 struct wb_writeback_work *work,
			 struct wb_loop_state *st)
{
	kupdate_cutoff(wb, work, st);
}

static void cutoff_v42(struct bdi_writeback *wb,
		       struct wb_writeback_work *work,
		       struct wb_loop_state *st)
{
	if (!kupdate_cutoff(wb, work, st) && st->pause > 1)
		st->oldest_jif = jiffies;
}

static void cutoff_bg_all(struct bdi_writeback *wb,
			  struct wb_writeback_work *work,
			  struct wb_loop_state *st)
{
	if (!kupdate_cutoff(wb, work, st) && work->for_background)
		st->oldest_jif = jiffies;
}

DEFINE_WB_VARIANT(cutoff_fixed, "cutoff", "fixed",
		  "3.1 wb_writeback: only kupdate moves older_than_this",
		  cutoff, cutoff_fixed);

DEFINE_WB_VARIANT(cutoff_v42, "cutoff", "v4.2",
		  "seed 000 L755-769: refresh when pause > 1",
		  cutoff, cutoff_v42);

DEFINE_WB_VARIANT(cutoff_bg_all, "cutoff", "bg-all",
		  "seed 000 L1223-1271: background includes all dirty inodes",
		  cutoff, cutoff_bg_all);
