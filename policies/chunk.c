// SPDX-License-Identifier: MIT
/*
 * policies/chunk.c - chunk=fixed, bandwidth: how many pages
 * writeback_sb_inodes() gives each inode (wbc.nr_to_write) under
 * WB_SYNC_NONE.  Integrity and tagged writeback take LONG_MAX in both.
 *
 *   fixed      MAX_WRITEBACK_PAGES = 1024 (4 MiB), at most the work's
 *              pages: the chunk of 3.0 and before.  3.0 handed the 1024
 *              to a whole pass over b_io; in the per-inode structure
 *              that 3.1 brought (and this engine has) the fixed form
 *              was min(MAX_WRITEBACK_PAGES, work->nr_pages), replaced
 *              in the same merge window.  No preset uses it.
 *   bandwidth  Wu's "scale IO chunk size up to half device bandwidth":
 *              min(avg_write_bandwidth / 2, dirty_limit / DIRTY_SCOPE,
 *              work->nr_pages) rounded up past a 4 MiB multiple.
 *              Checked against writeback_chunk_size() of 3.1.10, 3.2.41,
 *              3.3 and mainline fs/fs-writeback.c: the same formula in
 *              all four (mainline reads wb and global_wb_domain).
 */
#include "policies/policy.h"

DEFINE_WB_VARIANT(chunk_fixed, "chunk", "fixed",
		  "3.0: MAX_WRITEBACK_PAGES (1024) per inode",
		  chunk_fixed, true);

DEFINE_WB_VARIANT(chunk_bandwidth, "chunk", "bandwidth",
		  "3.1+ writeback_chunk_size(): half the device bandwidth",
		  chunk_fixed, false);
