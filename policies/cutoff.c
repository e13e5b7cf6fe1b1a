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

static void apply_fixed(struct wb_policy *pol)
{
	pol->cutoff = cutoff_fixed;
}

static void apply_v42(struct wb_policy *pol)
{
	pol->cutoff = cutoff_v42;
}

static void apply_bg_all(struct wb_policy *pol)
{
	pol->cutoff = cutoff_bg_all;
}

const struct wb_variant wb_variant_cutoff_fixed = {
	.knob = "cutoff", .value = "fixed",
	.source = "3.1 wb_writeback: only kupdate moves older_than_this",
	.apply = apply_fixed,
};

const struct wb_variant wb_variant_cutoff_v42 = {
	.knob = "cutoff", .value = "v4.2",
	.source = "seed 000 L755-769: refresh when pause > 1",
	.apply = apply_v42,
};

const struct wb_variant wb_variant_cutoff_bg_all = {
	.knob = "cutoff", .value = "bg-all",
	.source = "seed 000 L1223-1271: background includes all dirty inodes",
	.apply = apply_bg_all,
};
