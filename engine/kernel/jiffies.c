// SPDX-License-Identifier: MIT
/*
 * engine/kernel/jiffies.c - the tick counter and its conversions (the kernel's
 * kernel/time/jiffies.c and the msecs/usecs helpers of kernel/time/time.c),
 * and the two clocks behind it: real (CLOCK_MONOTONIC in ticks) and virtual
 * (moved only by uf_clock_advance()).  See jiffies.h for why.
 *
 * Also the count of tasks blocked in schedule(), which tests use as their
 * handshake: "the flusher is asleep now, advance the clock".
 *
 * Reading jiffies takes no lock.  On the real clock, jiffies is the
 * monotonic time in ticks plus one offset word, chosen when the clock
 * starts or resumes, so a reader needs one atomic load besides the clock.
 * Writers (mode switches, the virtual clock's steps) serialise on clk.lock.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "kernel/jiffies.h"
#include "kernel/sched.h"
#include "kernel/timer.h"

int uf_hz = 1000;

enum { UF_CLOCK_REAL, UF_CLOCK_VIRTUAL };

/* How far ahead the timer thread sleeps at most, in seconds. */
#define REAL_WAIT_CAP_SEC	3600

static struct {
	pthread_mutex_t lock;		/* writers of the fields below */
	pthread_mutex_t advance_lock;	/* one uf_clock_advance() at a time */
	pthread_cond_t sleepers_changed; /* on CLOCK_REALTIME */
	int mode;			/* atomic */
	bool started;			/* atomic: real_offset is set */
	unsigned long real_offset;	/* atomic: jiffies - mono_jiffies() */
	unsigned long virt_now;		/* atomic */
	int nr_sleeping;		/* under lock */
} clk = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.advance_lock = PTHREAD_MUTEX_INITIALIZER,
	.sleepers_changed = PTHREAD_COND_INITIALIZER,
};

/* CLOCK_MONOTONIC in ticks, rounded down. */
static unsigned long mono_jiffies(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long)ts.tv_sec * HZ +
	       (unsigned long)ts.tv_nsec * HZ / NSEC_PER_SEC;
}

/* With clk.lock held: the real clock reads @now from this moment on. */
static void real_clock_set(unsigned long now)
{
	__atomic_store_n(&clk.real_offset, now - mono_jiffies(),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&clk.started, true, __ATOMIC_RELEASE);
}

static void clock_start(void)
{
	pthread_mutex_lock(&clk.lock);
	if (!__atomic_load_n(&clk.started, __ATOMIC_ACQUIRE))
		real_clock_set(INITIAL_JIFFIES);
	pthread_mutex_unlock(&clk.lock);
}

bool uf_clock_is_virtual(void)
{
	return __atomic_load_n(&clk.mode, __ATOMIC_ACQUIRE) ==
	       UF_CLOCK_VIRTUAL;
}

unsigned long uf_jiffies(void)
{
	if (__builtin_expect(!__atomic_load_n(&clk.started, __ATOMIC_ACQUIRE),
			     0))
		clock_start();
	if (uf_clock_is_virtual())
		return __atomic_load_n(&clk.virt_now, __ATOMIC_ACQUIRE);
	return mono_jiffies() +
	       __atomic_load_n(&clk.real_offset, __ATOMIC_ACQUIRE);
}

/* ---- conversions ---- */

unsigned long msecs_to_jiffies(unsigned int m)
{
	if ((int)m < 0)
		return MAX_JIFFY_OFFSET;
	return ((unsigned long)m * HZ + MSEC_PER_SEC - 1) / MSEC_PER_SEC;
}

unsigned long usecs_to_jiffies(unsigned int u)
{
	if ((int)u < 0)
		return MAX_JIFFY_OFFSET;
	return ((unsigned long)u * HZ + USEC_PER_SEC - 1) / USEC_PER_SEC;
}

/* @j ticks in units of 1/@per_sec s, rounded up, without overflowing. */
static unsigned int jiffies_to_units(unsigned long j, unsigned long per_sec)
{
	unsigned long hz = HZ;

	return (unsigned int)(j / hz * per_sec +
			      ((j % hz) * per_sec + hz - 1) / hz);
}

unsigned int jiffies_to_msecs(unsigned long j)
{
	return jiffies_to_units(j, MSEC_PER_SEC);
}

unsigned int jiffies_to_usecs(unsigned long j)
{
	return jiffies_to_units(j, USEC_PER_SEC);
}

/* ---- clock control ---- */

int uf_set_hz(int hz)
{
	if (hz < 1 || hz > 100000)
		return -EINVAL;
	if (uf_timers_pending() || uf_clock_nr_sleeping())
		return -EBUSY;
	pthread_mutex_lock(&clk.lock);
	uf_hz = hz;
	if (!uf_clock_is_virtual())
		real_clock_set(INITIAL_JIFFIES);
	pthread_mutex_unlock(&clk.lock);
	return 0;
}

void uf_clock_set_virtual(unsigned long start)
{
	pthread_mutex_lock(&clk.lock);
	__atomic_store_n(&clk.virt_now, start, __ATOMIC_RELEASE);
	__atomic_store_n(&clk.mode, UF_CLOCK_VIRTUAL, __ATOMIC_RELEASE);
	__atomic_store_n(&clk.started, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&clk.lock);
	uf_timers_clock_changed();
}

void uf_clock_set_real(void)
{
	pthread_mutex_lock(&clk.lock);
	if (uf_clock_is_virtual())
		real_clock_set(__atomic_load_n(&clk.virt_now,
					       __ATOMIC_ACQUIRE));
	else if (!__atomic_load_n(&clk.started, __ATOMIC_ACQUIRE))
		real_clock_set(INITIAL_JIFFIES);
	__atomic_store_n(&clk.mode, UF_CLOCK_REAL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&clk.lock);
	uf_timers_clock_changed();
}

void uf_clock_step(unsigned long when)
{
	pthread_mutex_lock(&clk.lock);
	if (time_after(when, __atomic_load_n(&clk.virt_now, __ATOMIC_ACQUIRE)))
		__atomic_store_n(&clk.virt_now, when, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&clk.lock);
}

int uf_clock_advance(unsigned long delta)
{
	unsigned long target;

	if (!uf_clock_is_virtual() || delta > MAX_JIFFY_OFFSET)
		return -EINVAL;
	pthread_mutex_lock(&clk.advance_lock);
	target = __atomic_load_n(&clk.virt_now, __ATOMIC_ACQUIRE) + delta;
	while (uf_run_next_timer(target, true))
		;
	uf_clock_step(target);
	pthread_mutex_unlock(&clk.advance_lock);
	return 0;
}

bool uf_clock_real_deadline(unsigned long expires, struct timespec *ts)
{
	unsigned long mono = mono_jiffies();
	unsigned long now = mono +
		__atomic_load_n(&clk.real_offset, __ATOMIC_ACQUIRE);
	long left = (long)(expires - now);
	unsigned long target, hz = HZ;

	if (left <= 0)
		return false;
	if ((unsigned long)left > REAL_WAIT_CAP_SEC * hz)
		left = (long)(REAL_WAIT_CAP_SEC * hz);
	/* the first instant at which mono_jiffies() reads mono + left */
	target = mono + (unsigned long)left;
	ts->tv_sec = (time_t)(target / hz);
	ts->tv_nsec = (long)(((target % hz) * NSEC_PER_SEC + hz - 1) / hz);
	return true;
}

void uf_timespec_after_ms(struct timespec *ts, clockid_t clockid,
			  unsigned int ms)
{
	clock_gettime(clockid, ts);
	ts->tv_sec += ms / MSEC_PER_SEC;
	ts->tv_nsec += (long)(ms % MSEC_PER_SEC) * 1000000L;
	if (ts->tv_nsec >= (long)NSEC_PER_SEC) {
		ts->tv_sec++;
		ts->tv_nsec -= (long)NSEC_PER_SEC;
	}
}

/* ---- sleepers ---- */

void uf_clock_sleep_begin(struct task_struct *p)
{
	pthread_mutex_lock(&clk.lock);
	p->sleeping = true;
	clk.nr_sleeping++;
	pthread_cond_broadcast(&clk.sleepers_changed);
	pthread_mutex_unlock(&clk.lock);
}

void uf_clock_sleep_end(struct task_struct *p)
{
	pthread_mutex_lock(&clk.lock);
	p->sleeping = false;
	clk.nr_sleeping--;
	pthread_cond_broadcast(&clk.sleepers_changed);
	pthread_mutex_unlock(&clk.lock);
}

int uf_clock_nr_sleeping(void)
{
	int n;

	pthread_mutex_lock(&clk.lock);
	n = clk.nr_sleeping;
	pthread_mutex_unlock(&clk.lock);
	return n;
}

/* With clk.lock held: @p sleeps, or (@p NULL) at least @n tasks do. */
static bool sleepers_reached(struct task_struct *p, int n)
{
	return p ? p->sleeping : clk.nr_sleeping >= n;
}

static int wait_for_sleepers(struct task_struct *p, int n, unsigned int ms)
{
	struct timespec ts;
	int err = 0;

	uf_timespec_after_ms(&ts, CLOCK_REALTIME, ms);
	pthread_mutex_lock(&clk.lock);
	while (!sleepers_reached(p, n) && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&clk.sleepers_changed, &clk.lock,
					     &ts);
	err = sleepers_reached(p, n) ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&clk.lock);
	return err;
}

int uf_clock_wait_sleepers(int n, unsigned int real_timeout_ms)
{
	return wait_for_sleepers(NULL, n, real_timeout_ms);
}

int uf_wait_task_sleeping(struct task_struct *p,
			  unsigned int real_timeout_ms)
{
	return wait_for_sleepers(p, 0, real_timeout_ms);
}
