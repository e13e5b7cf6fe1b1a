/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/jiffies.h - HZ, jiffies and the time_after() family: the kernel's
 * include/linux/jiffies.h and the conversions of kernel/time/time.c
 * (msecs_to_jiffies, jiffies_to_msecs, ...), over two clocks.
 *
 * The writeback algorithms measure everything in jiffies (dirtied_when,
 * pause, max_pause, HZ/10 slices), so uflush keeps the unit rather than
 * converting to milliseconds, and every timestamp, timeout and timer goes
 * through here.  That single point is what lets the same code run on:
 *
 *  - the real clock (default): CLOCK_MONOTONIC scaled to HZ, starting at
 *    INITIAL_JIFFIES on first use, i.e. five minutes before jiffies passes
 *    2^32, as the kernel does so that code mishandling the wrap breaks early;
 *  - the virtual clock: jiffies stands still until uf_clock_advance() moves
 *    it.  Advancing fires the due timers in expiry order, and with them the
 *    timeouts of tasks in schedule_timeout(), so tests decide exactly when
 *    each sleeper wakes.
 *
 * HZ is a variable (default 1000) so that tests can run at HZ=100 or 250.
 * Like the kernel's HZ it is an int; compare it with an unsigned long only
 * through a cast.  Set it with uf_set_hz() before the engine starts.
 *
 * `jiffies` is a macro that reads the clock: do not use the word as an
 * identifier in files that include this header.
 */
#ifndef UF_JIFFIES_H
#define UF_JIFFIES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

extern int uf_hz;

#define HZ		(uf_hz)
#define MSEC_PER_SEC	1000UL
#define USEC_PER_SEC	1000000UL
#define NSEC_PER_SEC	1000000000UL

/* 2^32 - 300 s worth of ticks: the 32-bit wrap comes 5 minutes after boot. */
#define INITIAL_JIFFIES	\
	((unsigned long)(UINT_MAX - 300U * (unsigned int)HZ + 1U))

/* The longest timeout that time_after() can still order. */
#define MAX_JIFFY_OFFSET	((LONG_MAX >> 1) - 1)

unsigned long uf_jiffies(void);
#define jiffies		uf_jiffies()

/*
 * Wrap-safe comparisons: valid while the two times are less than LONG_MAX
 * ticks apart, whatever their absolute values.
 */
static inline bool time_after(unsigned long a, unsigned long b)
{
	return (long)(b - a) < 0;
}

static inline bool time_before(unsigned long a, unsigned long b)
{
	return time_after(b, a);
}

static inline bool time_after_eq(unsigned long a, unsigned long b)
{
	return (long)(a - b) >= 0;
}

static inline bool time_before_eq(unsigned long a, unsigned long b)
{
	return time_after_eq(b, a);
}

/* a in [b, c] */
static inline bool time_in_range(unsigned long a, unsigned long b,
				 unsigned long c)
{
	return time_after_eq(a, b) && time_before_eq(a, c);
}

#define time_is_before_jiffies(a)	time_after(jiffies, a)
#define time_is_after_jiffies(a)	time_before(jiffies, a)
#define time_is_before_eq_jiffies(a)	time_after_eq(jiffies, a)
#define time_is_after_eq_jiffies(a)	time_before_eq(jiffies, a)

/*
 * Conversions round a duration up to whole ticks, as the kernel does, so
 * that a timeout never ends early: msecs_to_jiffies(1) is 1 at any HZ.
 * An argument that is negative as an int gives MAX_JIFFY_OFFSET.
 */
unsigned long msecs_to_jiffies(unsigned int m);
unsigned long usecs_to_jiffies(unsigned int u);
unsigned int jiffies_to_msecs(unsigned long j);
unsigned int jiffies_to_usecs(unsigned long j);

/*
 * Set HZ (1..100000).  Restarts the real clock at INITIAL_JIFFIES for the
 * new HZ.  -EINVAL for a bad value, -EBUSY while a timer is pending or a
 * task sleeps.  Call it before anything reads jiffies; HZ is not meant to
 * change under running threads.
 */
int uf_set_hz(int hz);

/* ---- clock control, for tests and simulations ---- */

/* Switch to the virtual clock, standing at @start. */
void uf_clock_set_virtual(unsigned long start);

/* Switch (back) to the real clock; jiffies continues from its value. */
void uf_clock_set_real(void);

bool uf_clock_is_virtual(void);

/*
 * Move the virtual clock forward by @delta ticks.  Due timers fire in
 * expiry order, in the calling thread, each with jiffies equal to its
 * expiry; sleepers whose timeout has passed are woken (made runnable: they
 * may not have run yet when this returns).  Timers armed by the callbacks
 * fire too if they are due by the end.  -EINVAL on the real clock or if
 * @delta > MAX_JIFFY_OFFSET.  Not to be called from a timer callback.
 */
int uf_clock_advance(unsigned long delta);

/* Expiry of the earliest pending timer (schedule_timeout() sleeps
 * included); -ENOENT if none.  With uf_clock_advance() this steps a
 * simulation from one event to the next. */
int uf_clock_next_expiry(unsigned long *expires);

/*
 * Tasks blocked in schedule() (and so in schedule_timeout(), wait_event(),
 * wait_for_completion() ...).  A wakeup takes its task off the count at
 * once, before the task runs.
 */
int uf_clock_nr_sleeping(void);

/* Block until at least @n tasks sleep; 0, or -ETIMEDOUT after
 * @real_timeout_ms of real time. */
int uf_clock_wait_sleepers(int n, unsigned int real_timeout_ms);

/* ---- engine-internal (wait.c, timer.c) ---- */

struct task_struct;

/* Account @p as blocked / no longer blocked; caller holds p->pi_lock. */
void uf_clock_sleep_begin(struct task_struct *p);
void uf_clock_sleep_end(struct task_struct *p);

/* Virtual clock: move jiffies forward to @when if it is behind. */
void uf_clock_step(unsigned long when);

/*
 * Real clock: the CLOCK_MONOTONIC time at which jiffies reaches @expires,
 * in *ts; false if it already has.  Far expiries are capped (the caller
 * re-checks when it wakes).
 */
bool uf_clock_real_deadline(unsigned long expires, struct timespec *ts);

/* @ms from now on @clockid, as an absolute timespec. */
void uf_timespec_after_ms(struct timespec *ts, clockid_t clockid,
			  unsigned int ms);

#endif /* UF_JIFFIES_H */
