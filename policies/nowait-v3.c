// SPDX-License-Identifier: MIT
/*
 * policies/nowait-v3.c - nowait=v3a and nowait=v3b: Jan Kara's first
 * "Improve busyloop prevention" (v3), a fixed backoff of 1, 2, 4... jiffies
 * capped near HZ/10, never ending the work.
 *
 * v3a (seed 000 L4472-4541) calls schedule_timeout() without setting the
 * task state, so the task is TASK_RUNNING and the call returns at once: the
 * busy loop prevention busy-loops (B1).  Kept as posted, pinned by a test.
 * v3b (the resend, L4979-5053) sets TASK_INTERRUPTIBLE first and doubles the
 * pause only while it is below HZ/10, so it settles at 128 jiffies at
 * HZ=1000.  With requeue=p2-v3 this retried a btrfs inode for 25 s (B2).
 */
#include "mm/backing-dev.h"
#include "kernel/jiffies.h"
#include "policies/policy.h"
#include "kernel/sched.h"
#include "trace/events/writeback.h"

static bool no_progress_v3a(struct bdi_writeback *wb,
			    struct wb_writeback_work *work,
			    struct wb_loop_state *st)
{
	st->nr_waits++;
	trace_writeback_wait(wb->bdi, work);
	spin_unlock(&wb->list_lock);
	schedule_timeout((long)st->pause);	/* TASK_RUNNING: no sleep */
	st->pause <<= 1;
	if (st->pause > (unsigned long)HZ / 10)
		st->pause = (unsigned long)HZ / 10;
	spin_lock(&wb->list_lock);
	return false;
}

static bool no_progress_v3b(struct bdi_writeback *wb,
			    struct wb_writeback_work *work,
			    struct wb_loop_state *st)
{
	st->nr_waits++;
	trace_writeback_wait(wb->bdi, work);
	spin_unlock(&wb->list_lock);
	__set_current_state(TASK_INTERRUPTIBLE);
	schedule_timeout((long)st->pause);
	if (st->pause < (unsigned long)HZ / 10)
		st->pause <<= 1;
	spin_lock(&wb->list_lock);
	return false;
}

static void apply_v3a(struct wb_policy *pol)
{
	pol->no_progress = no_progress_v3a;
}

static void apply_v3b(struct wb_policy *pol)
{
	pol->no_progress = no_progress_v3b;
}

const struct wb_variant wb_variant_nowait_v3a = {
	.knob = "nowait", .value = "v3a",
	.source = "seed 000 L4472-4541: P1-v3, no task state (busy-loops, B1)",
	.apply = apply_v3a,
};

const struct wb_variant wb_variant_nowait_v3b = {
	.knob = "nowait", .value = "v3b",
	.source = "seed 000 L4979-5053: P1-v3 resend, INTERRUPTIBLE, cap HZ/10",
	.apply = apply_v3b,
};
