// SPDX-License-Identifier: MIT
/*
 * policies/nowait-v4.c - nowait=v4, v4-r7, v4.1, v4.2: Jan Kara's timed
 * backoff as posted in v4 and its fixes.
 *
 *   v4    (seed 000 L24-108): end the work if other work is queued or, for
 *         a non-background work, background writeback is needed, or once
 *         pause > max_pause; else sleep pause jiffies (1, 2, 4... up to
 *         max_pause = dirty_writeback_interval).  The checks come before
 *         the task state is set, so a wakeup in between is lost (B5).
 *   v4-r7 (Wu's "requeue7", L3938-3950): v4, with BDI_writeback_running
 *         cleared while sleeping, so a throttled dirtier sees the flusher
 *         as idle and kicks it (B4a).
 *   v4.1  (L322-415): the state is set before the checks: no lost wakeup.
 *   v4.2  (L713-834): v4.1 plus the writeback_running clearing of
 *         requeue7 (the oldest_jif refresh of v4.2 is cutoff=v4.2).
 *
 * If max_pause is a power of two, pause stops at max_pause and
 * "pause > max_pause" never holds: the work then ends only on queued work
 * or the background threshold.  That is the posted code's arithmetic
 * (spec §2.4 edge case) and is kept.
 */
#include "kernel/jiffies.h"
#include "kernel/sched.h"
#include "fs/writeback.h"
#include "policies/nowait.h"

void (*wb_nowait_test_hook)(struct bdi_writeback *wb);

/* "If there's some other work to do, proceed with it..." */
static bool v4_should_abort(struct bdi_writeback *wb,
			    struct wb_writeback_work *work)
{
	return wb_work_pending(wb) ||
	       (!work->for_background && over_bground_thresh(wb->bdi));
}

/* The sleep, list_lock dropped around it; set_state as the variant does. */
static void v4_sleep(struct bdi_writeback *wb, struct wb_writeback_work *work,
		     struct wb_loop_state *st, bool set_state, bool clear_running)
{
	nowait_account(wb, work, st);
	spin_unlock(&wb->list_lock);
	if (wb_nowait_test_hook)
		wb_nowait_test_hook(wb);
	if (set_state)
		__set_current_state(TASK_INTERRUPTIBLE);
	if (clear_running)
		clear_bit(BDI_writeback_running, &wb->bdi->state);
	schedule_timeout((long)st->pause);
	if (clear_running)
		set_bit(BDI_writeback_running, &wb->bdi->state);
	if (st->pause < st->max_pause)
		st->pause <<= 1;
	spin_lock(&wb->list_lock);
}

static bool v4_common(struct bdi_writeback *wb, struct wb_writeback_work *work,
		      struct wb_loop_state *st, bool clear_running)
{
	if (v4_should_abort(wb, work))
		return true;
	if (st->pause > st->max_pause)
		return true;
	v4_sleep(wb, work, st, true, clear_running);
	return false;
}

/* v4.1/v4.2: TASK_INTERRUPTIBLE before the checks (L391-411). */
static bool v41_common(struct bdi_writeback *wb,
		       struct wb_writeback_work *work,
		       struct wb_loop_state *st, bool clear_running)
{
	if (st->pause > st->max_pause)
		return true;
	set_current_state(TASK_INTERRUPTIBLE);
	if (v4_should_abort(wb, work)) {
		__set_current_state(TASK_RUNNING);
		return true;
	}
	v4_sleep(wb, work, st, false, clear_running);
	return false;
}

/*
 * no_progress_<name>(): @common, with BDI_writeback_running cleared while
 * sleeping (requeue7) or not.
 */
#define V4_NO_PROGRESS(name, common, clear_running)			\
	static bool no_progress_##name(struct bdi_writeback *wb,	\
				       struct wb_writeback_work *work,	\
				       struct wb_loop_state *st)	\
	{								\
		return common(wb, work, st, clear_running);		\
	}

V4_NO_PROGRESS(v4, v4_common, false)
V4_NO_PROGRESS(v4_r7, v4_common, true)
V4_NO_PROGRESS(v41, v41_common, false)
V4_NO_PROGRESS(v42, v41_common, true)

DEFINE_WB_VARIANT(nowait_v4, "nowait", "v4",
		  "seed 000 L24-108: P1-v4, abort + backoff to max_pause",
		  no_progress, no_progress_v4);

DEFINE_WB_VARIANT(nowait_v4_r7, "nowait", "v4-r7",
		  "seed 000 L3938-3950: v4 + writeback_running cleared in sleep",
		  no_progress, no_progress_v4_r7);

DEFINE_WB_VARIANT(nowait_v41, "nowait", "v4.1",
		  "seed 000 L322-415: state set before the checks",
		  no_progress, no_progress_v41);

DEFINE_WB_VARIANT(nowait_v42, "nowait", "v4.2",
		  "seed 000 L713-834: v4.1 + writeback_running cleared in sleep",
		  no_progress, no_progress_v42);
