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

static void apply_fixed(struct wb_policy *pol)
{
	pol->kupdate_early = false;
}

static void apply_early(struct wb_policy *pol)
{
	pol->kupdate_early = true;
}

static void apply_pages(struct wb_policy *pol)
{
	pol->return_total_progress = false;
}

static void apply_total(struct wb_policy *pol)
{
	pol->return_total_progress = true;
}

const struct wb_variant wb_variant_kupdate_fixed = {
	.knob = "kupdate", .value = "fixed",
	.source = "3.1 wb_check_old_data_flush",
	.apply = apply_fixed,
};

const struct wb_variant wb_variant_kupdate_early = {
	.knob = "kupdate", .value = "early",
	.source = "seed 000 L1273-1373: retry kupdate work early",
	.apply = apply_early,
};

const struct wb_variant wb_variant_progress_pages = {
	.knob = "progress", .value = "pages",
	.source = "3.1 wb_writeback: nr_pages - work->nr_pages",
	.apply = apply_pages,
};

const struct wb_variant wb_variant_progress_total = {
	.knob = "progress", .value = "total",
	.source = "seed 000 L1306-1315: total_progress",
	.apply = apply_total,
};
