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
#include "kernel/jiffies.h"
#include "kernel/sched.h"
#include "policies/nowait.h"

/*
 * Sleep st->pause jiffies with list_lock dropped.  Without set_state the
 * task stays TASK_RUNNING and schedule_timeout() returns at once (v3a).
 */
static void v3_sleep(struct bdi_writeback *wb, struct wb_writeback_work *work,
		     struct wb_loop_state *st, bool set_state)
{
	nowait_account(wb, work, st);
	spin_unlock(&wb->list_lock);
	if (set_state)
		__set_current_state(TASK_INTERRUPTIBLE);
	schedule_timeout((long)st->pause);
	spin_lock(&wb->list_lock);
}

/* v3a: double, then clamp to HZ/10. */
static bool no_progress_v3a(struct bdi_writeback *wb,
			    struct wb_writeback_work *work,
			    struct wb_loop_state *st)
{
	v3_sleep(wb, work, st, false);
	st->pause <<= 1;
	if (st->pause > (unsigned long)HZ / 10)
		st->pause = (unsigned long)HZ / 10;
	return false;
}

/* v3b: double only while below HZ/10, so it may end above it. */
static bool no_progress_v3b(struct bdi_writeback *wb,
			    struct wb_writeback_work *work,
			    struct wb_loop_state *st)
{
	v3_sleep(wb, work, st, true);
	if (st->pause < (unsigned long)HZ / 10)
		st->pause <<= 1;
	return false;
}

DEFINE_WB_VARIANT(nowait_v3a, "nowait", "v3a",
		  "seed 000 L4472-4541: P1-v3, no task state (busy-loops, B1)",
		  no_progress, no_progress_v3a);

DEFINE_WB_VARIANT(nowait_v3b, "nowait", "v3b",
		  "seed 000 L4979-5053: P1-v3 resend, INTERRUPTIBLE, cap HZ/10",
		  no_progress, no_progress_v3b);
