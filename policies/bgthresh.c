// SPDX-License-Identifier: MIT
/*
 * policies/bgthresh.c - bgthresh=global, bdi: when over_bground_thresh()
 * (mm/page-writeback.c here, fs/fs-writeback.c in the kernel) says that
 * background writeback should start (wb_check_background_flush) and go on
 * (wb_writeback's loop check).
 *
 *   global  (3.1 over_bground_thresh(void), checked against 3.1.10's
 *           fs/fs-writeback.c): dirty + unstable pages of the whole cache
 *           over background_thresh.
 *   bdi     (seed 001 L58-102, merged in 3.2: 3.2.41 and 3.3
 *           fs/fs-writeback.c over_bground_thresh(bdi); mainline
 *           wb_over_bg_thresh): the global test, or the device's own
 *           BDI_RECLAIMABLE over bdi_dirty_limit(bdi, background_thresh).
 *           Both tests strict; pages under writeback do not count.
 */
#include "policies/policy.h"

DEFINE_WB_VARIANT(bgthresh_global, "bgthresh", "global",
		  "3.1 over_bground_thresh(void): global dirty count only",
		  bgthresh_bdi, false);

DEFINE_WB_VARIANT(bgthresh_bdi, "bgthresh", "bdi",
		  "seed 001 L58-102 (3.2+): also the device's own share",
		  bgthresh_bdi, true);
