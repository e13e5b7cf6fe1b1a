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
 * A timer fires once jiffies >= expires (one armed for the past fires at
 * the next chance).  Callbacks run one at a time, with no timer lock held:
 * they may re-arm their own timer, arm or delete others and wake tasks, but
 * must not sleep for long, call del_timer_sync() on their own timer, or
 * call uf_clock_advance().
 */
#ifndef UF_TIMER_H
#define UF_TIMER_H

#include <stdbool.h>

#include "kernel/jiffies.h"
#include "lib/list.h"

struct timer_list {
	struct list_head entry;		/* on the pending list, by expiry */
	unsigned long expires;
	void (*function)(struct timer_list *timer);
	unsigned int flags;
};

/* Accepted for the kernel's sake; every timer behaves alike here. */
#define TIMER_DEFERRABLE	0x1
#define TIMER_PINNED		0x2
#define TIMER_IRQSAFE		0x4

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
