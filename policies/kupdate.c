// SPDX-License-Identifier: MIT
/*
 * policies/kupdate.c - kupdate=fixed, early and progress=pages, total.
 *
 *   kupdate=early (Jan's "Retry kupdate work early", seed 000 L1273-1373,
 *   part of wu-riw): while b_more_io_wait is non-empty, every flusher
 *   wakeup runs kupdate, and the flusher sleeps 1, 2, 4... jiffies up to
 *   max_pause instead of dirty_writeback_interval.  Its wb_writeback
 *   returns total progress (progress=total, L1306-1315) so that cleaning
 *   only metadata counts as the flusher having done something.
 */
#include "policies/policy.h"

DEFINE_WB_VARIANT(kupdate_fixed, "kupdate", "fixed",
		  "3.1 wb_check_old_data_flush",
		  kupdate_early, false);

DEFINE_WB_VARIANT(kupdate_early, "kupdate", "early",
		  "seed 000 L1273-1373: retry kupdate work early",
		  kupdate_early, true);

DEFINE_WB_VARIANT(progress_pages, "progress", "pages",
		  "3.1 wb_writeback: nr_pages - work->nr_pages",
		  return_total_progress, false);

DEFINE_WB_VARIANT(progress_total, "progress", "total",
		  "seed 000 L1306-1315: total_progress",
		  return_total_progress, true);
