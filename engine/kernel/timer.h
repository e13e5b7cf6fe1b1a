/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/timer.h - struct timer_list, as in the kernel's
 * include/linux/timer.h and kernel/time/timer.c: timer_setup(),
 * mod_timer(), del_timer(), del_timer_sync(), timer_pending().
 *
 * The 3.x flusher arms bdi->wb.wakeup_timer to wake itself after
 * dirty_writeback_interval, and schedule_timeout() is a timer whose
 * callback wakes the sleeper; both must follow the active clock (jiffies.h):
 *
 *  - real clock: one thread ("uf-timer", started on first need) sleeps
 *    until the earliest expiry and runs the callbacks;
 *  - virtual clock: uf_clock_advance() runs the due callbacks in its own
 *    thread, in expiry order (equal expiries: in arming order), each with
 *    jiffies set to its expiry.
 *
 * After fork() the child starts a timer thread of its own on first need.
 *
 * When a timer fires depends on the kernel the arming code mirrors
 * (timer->flags):
 *
 *  - 0, Linux 3.x's cascading wheel (3.2.41 kernel/timer.c:
 *    internal_add_timer files a timer by expires - timer_jiffies and
 *    cascade() refiles it into tv1 at its exact slot): it fires once
 *    jiffies >= expires; one armed for the past fires at the next chance;
 *  - TIMER_UF_WHEEL, the non-cascading wheel of 4.8 and later (commit
 *    500462a9de65, "timers: Switch to a non-cascading wheel"; 6.18.35
 *    kernel/time/timer.c calc_wheel_index, calc_index): it fires at its
 *    bucket's expiry, expires rounded up past the granularity of the level
 *    that delta = expires - base clk picks (expires + 1 on level 0, a
 *    multiple of 64 jiffies on level 2); one armed for the past fires at
 *    the base clk.  timer_bucket_expiry() below.
 *
 * Callbacks run one at a time, with no timer lock held:
 * they may re-arm their own timer, arm or delete others and wake tasks, but
 * must not sleep for long, call del_timer_sync() on their own timer, or
 * call uf_clock_advance().
 */
#ifndef UF_TIMER_H
#define UF_TIMER_H

#include <stdbool.h>

#include "kernel/jiffies.h"
#include "lib/list.h"		/* container_of */

/*
 * The pending timers are one pairing heap ordered by (fire, seq): arm and
 * delete are O(1) and O(log n) amortized, with no allocation, and the
 * order is strict, so a run of the virtual clock is deterministic.
 */
struct timer_node {
	struct timer_node *child;	/* first child */
	struct timer_node *next;	/* next sibling */
	struct timer_node *prev;	/* previous sibling, or the parent */
};

struct timer_list {
	struct timer_node entry;	/* in the heap, if pending */
	unsigned long expires;		/* as armed */
	unsigned long fire;		/* the jiffy it fires at */
	unsigned long seq;		/* arming order, among equal fire */
	void (*function)(struct timer_list *timer);
	unsigned int flags;
};

/* Accepted for the kernel's sake; every timer behaves alike here. */
#define TIMER_DEFERRABLE	0x1
#define TIMER_PINNED		0x2
#define TIMER_IRQSAFE		0x4
/*
 * uflush: the timer is on 4.8+'s wheel (bucket expiry), set by whoever
 * arms it from the preset of the cache it works for (cache_timer_flags(),
 * mm/backing-dev.h); without it, 3.x's exact expiry.
 */
#define TIMER_UF_WHEEL		0x100

/* The structure that embeds @timer as its @field, in a callback. */
#define from_timer(var, callback_timer, timer_fieldname)		\
	container_of(callback_timer, __typeof__(*var), timer_fieldname)

void timer_setup(struct timer_list *timer,
		 void (*function)(struct timer_list *timer),
		 unsigned int flags);

/*
 * (Re)arm @timer to fire at jiffies @expires.  1 if it was pending (and is
 * now moved), 0 if it was not.
 */
int mod_timer(struct timer_list *timer, unsigned long expires);

/* Arm at timer->expires; the timer must not be pending. */
void add_timer(struct timer_list *timer);

/* Disarm: 1 if it was pending.  The callback may still be running. */
int del_timer(struct timer_list *timer);

/*
 * Disarm and wait until the callback, if running, has returned (it may
 * have re-armed the timer: that is disarmed too).  Afterwards the timer can
 * be freed.  The wait is a task sleep, so it counts as a sleeper.
 */
int del_timer_sync(struct timer_list *timer);

bool timer_pending(const struct timer_list *timer);

/*
 * When a timer armed now for @expires with @flags would fire: @expires
 * itself, or (TIMER_UF_WHEEL) its bucket's expiry.  schedule_timeout()'s
 * real-clock deadline (engine/kernel/wait.c) is the same jiffy.
 */
unsigned long timer_bucket_expiry(unsigned long expires, unsigned int flags);

#define timer_delete(t)		del_timer(t)
#define timer_delete_sync(t)	del_timer_sync(t)

/* ---- engine-internal (jiffies.c) ---- */

/* Run the earliest timer due at @now, after stepping the virtual clock to
 * its expiry if @step; false if none is due. */
bool uf_run_next_timer(unsigned long now, bool step);

/* The clock changed mode: let the timer thread re-evaluate. */
void uf_timers_clock_changed(void);
/* engine/kernel/wait.c: real-clock schedule_timeout() sleepers wait again */
void uf_timed_sleepers_clock_changed(void);

/* Any timer pending? */
bool uf_timers_pending(void);

#endif /* UF_TIMER_H */
