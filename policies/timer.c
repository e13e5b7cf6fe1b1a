// SPDX-License-Identifier: MIT
/*
 * policies/timer.c - timer=cascade, wheel: when the kernel's timers fire,
 * which sets when a throttled writer's schedule_timeout() and the
 * flusher's periodic sleep end (engine/kernel/timer.h, TIMER_UF_WHEEL).
 *
 *   cascade  (3.2.41 kernel/timer.c internal_add_timer, cascade,
 *            __run_timers): a timer fires at the tick jiffies reaches
 *            its expires; schedule_timeout(n) sleeps n jiffies.
 *   wheel    (commit 500462a9de65, "timers: Switch to a non-cascading
 *            wheel", Linux 4.8; 6.18.35 kernel/time/timer.c
 *            calc_wheel_index, calc_index): it fires at its bucket's
 *            expiry, rounded up past its level's granularity: n + 1
 *            jiffies for n < 63, and a 5 s delayed flusher wakeup at HZ
 *            250 (1250 jiffies, level 2) on a multiple of 64 jiffies.
 */
#include "policies/policy.h"

DEFINE_WB_VARIANT(timer_cascade, "timer", "cascade",
		  "3.2 internal_add_timer/cascade: fires at expires",
		  timer_wheel, false);

DEFINE_WB_VARIANT(timer_wheel, "timer", "wheel",
		  "4.8+ calc_wheel_index: fires at the bucket's expiry",
		  timer_wheel, true);
