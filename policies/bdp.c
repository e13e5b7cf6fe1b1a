// SPDX-License-Identifier: MIT
/*
 * policies/bdp.c - the bdp knob: which kernel's balance_dirty_pages()
 * throttles writers.  The bodies live in engine/mm/page-writeback.c, beside
 * the helpers they share; each names the source it was checked against:
 *
 *   3.1       Linux 3.1.10 mm/page-writeback.c: over its share the writer
 *             writes sync_writeback_pages() pages itself
 *             (writeback_inodes_wb) and sleeps 1, 2, 4 ... 100 ms; each
 *             task's limit is lowered by its share of recent dirtyings.
 *   3.2       Linux 3.2.41 mm/page-writeback.c: IO-less; pauses of
 *             pages_dirtied / task_ratelimit, task_ratelimit =
 *             dirty_ratelimit * pos_ratio (bdi_position_ratio,
 *             bdi_update_dirty_ratelimit), up to bdi_max_pause().
 *   3.3       Linux 3.3.0 mm/page-writeback.c: 3.2 + think time
 *             (dirty_paused_when), bdi_min_pause, 3.3's bdi_max_pause,
 *             balanced rate <= write_bw, nr_dirtied charged in
 *             account_page_dirtied, dirty_throttle_leaks.
 *   mainline  torvalds/linux @8e9d5ead, then Linux 6.18.35
 *             (leftymods/linux-6.18.y @40a9e9f43d44): the wb_ form with
 *             dirty_throttle_control, think time (dirty_paused_when),
 *             wb_min_pause, BDI_CAP_STRICTLIMIT, min/max bytes, the
 *             small-share floor of __wb_calc_thresh, the bandwidth
 *             estimate from do_writepages, no range_cyclic wrap.
 */
#include "policies/policy.h"
#include "mm/dirty-throttle.h"

DEFINE_WB_VARIANT(bdp_31, "bdp", "3.1",
		  "3.1.10 balance_dirty_pages: the writer writes pages itself",
		  balance_dirty_pages, balance_dirty_pages_ratelimited_31);
DEFINE_WB_VARIANT(bdp_32, "bdp", "3.2",
		  "3.2.41 IO-less balance_dirty_pages (pos_ratio, dirty_ratelimit)",
		  balance_dirty_pages, balance_dirty_pages_ratelimited_32);
DEFINE_WB_VARIANT(bdp_33, "bdp", "3.3",
		  "3.3 balance_dirty_pages: 3.2 + think time, min pause, leaks",
		  balance_dirty_pages, balance_dirty_pages_ratelimited_33);
DEFINE_WB_VARIANT(bdp_mainline, "bdp", "mainline",
		  "mainline wb_ form: think time, min pause, strictlimit",
		  balance_dirty_pages, balance_dirty_pages_ratelimited_mainline);
