// SPDX-License-Identifier: MIT
/*
 * engine/kernel/timer.c - timer_list timers on the active clock, after the
 * kernel's kernel/time/timer.c (mod_timer, del_timer, del_timer_sync; the
 * expiry run of __run_timers).
 *
 * Pending timers sit on one list sorted by expiry (wrap-safe order); there
 * are few of them (one per device plus one per timed sleeper), so a sorted
 * list is simpler than the kernel's wheel and gives a strict firing order,
 * which the virtual clock's tests rely on.
 *
 * Who runs the callbacks: on the real clock, the "uf-timer" thread, which
 * sleeps on CLOCK_MONOTONIC until the earliest expiry; on the virtual
 * clock, uf_clock_advance() via uf_run_next_timer().  Either way one
 * callback runs at a time (running_timer), outside timer_lock, so that
 * del_timer_sync() can wait for it and callbacks can re-arm timers.
 */
#include <errno.h>
#include <pthread.h>

#include "kernel/bug.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "kernel/timer.h"
#include "kernel/wait.h"

static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(timer_queue);			/* pending, by expiry */
static struct timer_list *running_timer;	/* its callback runs */
static pthread_t running_thread;
static pthread_cond_t timer_idle = PTHREAD_COND_INITIALIZER;
static DECLARE_WAIT_QUEUE_HEAD(timer_sync_wq);	/* del_timer_sync() */

/* The real clock's timer thread; timer_kick is on CLOCK_MONOTONIC. */
static pthread_once_t timer_kick_once = PTHREAD_ONCE_INIT;
static pthread_cond_t timer_kick;
static bool timer_thread_up;

void timer_setup(struct timer_list *timer,
		 void (*function)(struct timer_list *timer),
		 unsigned int flags)
{
	INIT_LIST_HEAD(&timer->entry);
	timer->expires = 0;
	timer->function = function;
	timer->flags = flags;
}

static struct timer_list *first_timer(void)
{
	return list_first_entry_or_null(&timer_queue, struct timer_list,
					entry);
}

/* With timer_lock held.  Equal expiries keep arming order. */
static void enqueue_timer(struct timer_list *timer)
{
	struct timer_list *pos;

	list_for_each_entry_reverse(pos, &timer_queue, entry)
		if (time_before_eq(pos->expires, timer->expires))
			break;
	list_add(&timer->entry, &pos->entry);
}

static void *timer_thread_fn(void *unused);

/*
 * fork(): the child has no timer thread, even if the parent had one, nor
 * a callback running; let it start its own on first need.
 */
static void timer_fork_prepare(void)
{
	pthread_mutex_lock(&timer_lock);
}

static void timer_fork_parent(void)
{
	pthread_mutex_unlock(&timer_lock);
}

static void timer_fork_child(void)
{
	timer_thread_up = false;
	running_timer = NULL;
	pthread_mutex_unlock(&timer_lock);
}

static void timer_kick_init(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&timer_kick, &attr);
	pthread_condattr_destroy(&attr);
	pthread_atfork(timer_fork_prepare, timer_fork_parent,
		       timer_fork_child);
}

/* With timer_lock held: on the real clock, have the timer thread look at
 * the queue again, starting it if needed. */
static void kick_timer_thread(void)
{
	pthread_t thread;
	int err;

	if (uf_clock_is_virtual())
		return;
	if (!timer_thread_up) {
		pthread_once(&timer_kick_once, timer_kick_init);
		err = uf_thread_create(&thread, timer_thread_fn, NULL,
				       "uf-timer");
		if (err) {
			pr_err("cannot start the timer thread: error %d",
			       err);
			return;
		}
		pthread_detach(thread);
		timer_thread_up = true;
	}
	pthread_cond_signal(&timer_kick);
}

int mod_timer(struct timer_list *timer, unsigned long expires)
{
	int was_pending;

	pthread_mutex_lock(&timer_lock);
	was_pending = !list_empty(&timer->entry);
	if (was_pending)
		list_del_init(&timer->entry);
	timer->expires = expires;
	enqueue_timer(timer);
	if (first_timer() == timer)
		kick_timer_thread();
	pthread_mutex_unlock(&timer_lock);
	return was_pending;
}

void add_timer(struct timer_list *timer)
{
	WARN_ON(timer_pending(timer));
	mod_timer(timer, timer->expires);
}

int del_timer(struct timer_list *timer)
{
	int was_pending;

	pthread_mutex_lock(&timer_lock);
	was_pending = !list_empty(&timer->entry);
	if (was_pending)
		list_del_init(&timer->entry);
	pthread_mutex_unlock(&timer_lock);
	return was_pending;
}

bool timer_pending(const struct timer_list *timer)
{
	bool pending;

	pthread_mutex_lock(&timer_lock);
	pending = !list_empty(&timer->entry);
	pthread_mutex_unlock(&timer_lock);
	return pending;
}

static bool timer_running(struct timer_list *timer)
{
	bool running;

	pthread_mutex_lock(&timer_lock);
	running = running_timer == timer;
	pthread_mutex_unlock(&timer_lock);
	return running;
}

int del_timer_sync(struct timer_list *timer)
{
	bool own, wait;
	int ret = 0;

	for (;;) {
		pthread_mutex_lock(&timer_lock);
		if (!list_empty(&timer->entry)) {
			list_del_init(&timer->entry);
			ret = 1;
		}
		wait = running_timer == timer;
		own = wait && pthread_equal(running_thread, pthread_self());
		pthread_mutex_unlock(&timer_lock);
		/* from its own callback, waiting would never end */
		if (!wait || WARN_ON(own))
			return ret;
		wait_event(timer_sync_wq, !timer_running(timer));
	}
}

bool uf_run_next_timer(unsigned long now, bool step)
{
	struct timer_list *timer;
	void (*fn)(struct timer_list *timer);

	pthread_mutex_lock(&timer_lock);
	while (running_timer)
		pthread_cond_wait(&timer_idle, &timer_lock);
	timer = first_timer();
	if (!timer || time_after(timer->expires, now)) {
		pthread_mutex_unlock(&timer_lock);
		return false;
	}
	list_del_init(&timer->entry);
	running_timer = timer;
	running_thread = pthread_self();
	fn = timer->function;
	if (step)
		uf_clock_step(timer->expires);
	pthread_mutex_unlock(&timer_lock);

	fn(timer);

	pthread_mutex_lock(&timer_lock);
	running_timer = NULL;
	pthread_cond_broadcast(&timer_idle);
	pthread_mutex_unlock(&timer_lock);
	wake_up_all(&timer_sync_wq);
	return true;
}

static void *timer_thread_fn(void *unused)
{
	struct timer_list *first;
	struct timespec ts;

	(void)unused;
	pthread_mutex_lock(&timer_lock);
	for (;;) {
		first = first_timer();
		if (!first || uf_clock_is_virtual()) {
			pthread_cond_wait(&timer_kick, &timer_lock);
		} else if (uf_clock_real_deadline(first->expires, &ts)) {
			pthread_cond_timedwait(&timer_kick, &timer_lock, &ts);
		} else {
			pthread_mutex_unlock(&timer_lock);
			uf_run_next_timer(jiffies, false);
			pthread_mutex_lock(&timer_lock);
		}
	}
	return NULL;
}

void uf_timers_clock_changed(void)
{
	uf_timed_sleepers_clock_changed();
	pthread_mutex_lock(&timer_lock);
	if (!list_empty(&timer_queue))
		kick_timer_thread();
	pthread_mutex_unlock(&timer_lock);
}

bool uf_timers_pending(void)
{
	bool pending;

	pthread_mutex_lock(&timer_lock);
	pending = !list_empty(&timer_queue);
	pthread_mutex_unlock(&timer_lock);
	return pending;
}

int uf_clock_next_expiry(unsigned long *expires)
{
	struct timer_list *first;
	int ret = -ENOENT;

	pthread_mutex_lock(&timer_lock);
	first = first_timer();
	if (first) {
		*expires = first->expires;
		ret = 0;
	}
	pthread_mutex_unlock(&timer_lock);
	return ret;
}
