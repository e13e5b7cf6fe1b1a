// SPDX-License-Identifier: MIT
/*
 * engine/kernel/timer.c - timer_list timers on the active clock, after the
 * kernel's kernel/time/timer.c (mod_timer, del_timer, del_timer_sync; the
 * expiry run of __run_timers).
 *
 * Pending timers sit in one pairing heap keyed by (fire, seq): fire is the
 * jiffy the timer's kernel would run it at (timer_bucket_expiry()), seq
 * its arming order.  With a writer task per thread each paused writer has
 * a timer armed, so at 1000 writers a sorted list's linear insert showed
 * (DESIGN.md, simulation); the heap arms in O(1) and deletes in O(log n)
 * amortized, needs no allocation and keeps the strict firing order
 * (equal expiries: arming order) the virtual clock's tests rely on.  The
 * kernel's wheel is O(1) but orders a bucket by arming only.
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
static struct timer_node *timer_root;		/* the heap: pending */
static unsigned long timer_seq;			/* next arming's seq */
static struct timer_list *running_timer;	/* its callback runs */
static pthread_t running_thread;
static pthread_cond_t timer_idle = PTHREAD_COND_INITIALIZER;
static DECLARE_WAIT_QUEUE_HEAD(timer_sync_wq);	/* del_timer_sync() */

/*
 * The wheel's base->clk (TIMER_UF_WHEEL timers), one base for the process
 * where the kernel has one per CPU: jiffies + 1 right after timers ran at
 * jiffies (6.18 __run_timers: "base->clk is set 1 offset ahead of jiffies
 * to avoid endless requeuing"), else forwarded to jiffies when a timer is
 * armed (forward_timer_base).
 */
static unsigned long base_clk;
static bool base_clk_set;	/* since the clock was last set */

/* The real clock's timer thread; timer_kick is on CLOCK_MONOTONIC. */
static pthread_once_t timer_kick_once = PTHREAD_ONCE_INIT;
static pthread_cond_t timer_kick;
static bool timer_thread_up;

void timer_setup(struct timer_list *timer,
		 void (*function)(struct timer_list *timer),
		 unsigned int flags)
{
	timer->entry.child = timer->entry.next = timer->entry.prev = NULL;
	timer->expires = 0;
	timer->fire = 0;
	timer->seq = 0;
	timer->function = function;
	timer->flags = flags;
}

/* ---- the heap (timer_lock held) ---- */

static struct timer_list *node_timer(struct timer_node *n)
{
	return container_of(n, struct timer_list, entry);
}

/* Does @a fire before @b?  Wrap-safe on fire, arming order on ties. */
static bool timer_less(struct timer_node *a, struct timer_node *b)
{
	struct timer_list *ta = node_timer(a), *tb = node_timer(b);

	if (ta->fire != tb->fire)
		return time_before(ta->fire, tb->fire);
	return ta->seq < tb->seq;
}

/* Two heaps' roots into one: the later becomes the first child. */
static struct timer_node *heap_meld(struct timer_node *a, struct timer_node *b)
{
	struct timer_node *t;

	if (timer_less(b, a)) {
		t = a;
		a = b;
		b = t;
	}
	b->prev = a;
	b->next = a->child;
	if (a->child)
		a->child->prev = b;
	a->child = b;
	a->next = a->prev = NULL;
	return a;
}

/* The sibling list from @first into one heap: meld pairs left to right,
 * then the pairs right to left (the two-pass pairing). */
static struct timer_node *heap_merge_pairs(struct timer_node *first)
{
	struct timer_node *pairs = NULL, *a, *b, *rest;

	while (first) {
		a = first;
		b = a->next;
		rest = b ? b->next : NULL;
		a = b ? heap_meld(a, b) : a;
		a->prev = NULL;
		a->next = pairs;	/* a stack, rightmost pair on top */
		pairs = a;
		first = rest;
	}
	if (!pairs)
		return NULL;
	a = pairs;
	pairs = pairs->next;
	a->next = NULL;
	while (pairs) {
		rest = pairs->next;
		a = heap_meld(a, pairs);
		pairs = rest;
	}
	return a;
}

static bool heap_contains(const struct timer_list *timer)
{
	return timer->entry.prev || timer_root == &timer->entry;
}

static void heap_insert(struct timer_list *timer)
{
	struct timer_node *n = &timer->entry;

	n->child = n->next = n->prev = NULL;
	timer->seq = timer_seq++;
	timer_root = timer_root ? heap_meld(timer_root, n) : n;
}

/* Take a pending @timer out, from anywhere in the heap. */
static void heap_remove(struct timer_list *timer)
{
	struct timer_node *n = &timer->entry, *sub;

	sub = heap_merge_pairs(n->child);
	if (n == timer_root) {
		timer_root = sub;
	} else {
		if (n->prev->child == n)
			n->prev->child = n->next;
		else
			n->prev->next = n->next;
		if (n->next)
			n->next->prev = n->prev;
		if (sub)
			timer_root = heap_meld(timer_root, sub);
	}
	n->child = n->next = n->prev = NULL;
}

static struct timer_list *first_timer(void)
{
	return timer_root ? node_timer(timer_root) : NULL;
}

/* ---- the 6.18 wheel's bucket expiry ---- */

/* 6.18.35 kernel/time/timer.c: LVL_CLK_SHIFT, LVL_BITS, LVL_START(n);
 * LVL_DEPTH is 9 above HZ 100, else 8 */
#define LVL_CLK_SHIFT	3
#define LVL_SHIFT(n)	((n) * LVL_CLK_SHIFT)
#define LVL_GRAN(n)	(1UL << LVL_SHIFT(n))
#define LVL_BITS	6
#define LVL_SIZE	(1UL << LVL_BITS)
#define LVL_START(n)	((LVL_SIZE - 1) << (((n) - 1) * LVL_CLK_SHIFT))
#define LVL_DEPTH	(HZ > 100 ? 9U : 8U)
#define WHEEL_TIMEOUT_CUTOFF	(LVL_START(LVL_DEPTH))
#define WHEEL_TIMEOUT_MAX	(WHEEL_TIMEOUT_CUTOFF - LVL_GRAN(LVL_DEPTH - 1))

/* calc_index(): never early, so rounded up past the level's granularity
 * (a level-0 timer too: it may be armed at the end of a tick) */
static unsigned long calc_bucket_expiry(unsigned long expires,
					unsigned int lvl)
{
	return ((expires >> LVL_SHIFT(lvl)) + 1) << LVL_SHIFT(lvl);
}

/* calc_wheel_index()'s level choice, returning the bucket's expiry */
static unsigned long wheel_bucket_expiry(unsigned long expires,
					 unsigned long clk)
{
	unsigned long delta = expires - clk;
	unsigned int lvl;

	if ((long)delta < 0)
		return clk;
	for (lvl = 0; lvl < LVL_DEPTH - 1; lvl++)
		if (delta < LVL_START(lvl + 1))
			return calc_bucket_expiry(expires, lvl);
	if (delta >= WHEEL_TIMEOUT_CUTOFF)
		expires = clk + WHEEL_TIMEOUT_MAX;
	return calc_bucket_expiry(expires, LVL_DEPTH - 1);
}

/* With timer_lock held. */
static unsigned long __timer_bucket_expiry(unsigned long expires,
					   unsigned int flags)
{
	unsigned long clk = jiffies;

	if (!(flags & TIMER_UF_WHEEL))
		return expires;
	/* forward_timer_base() moves clk up to jiffies; it is ahead only
	 * while (right after) that tick's timers run */
	if (base_clk_set && base_clk == clk + 1)
		clk = base_clk;
	return wheel_bucket_expiry(expires, clk);
}

unsigned long timer_bucket_expiry(unsigned long expires, unsigned int flags)
{
	unsigned long fire;

	pthread_mutex_lock(&timer_lock);
	fire = __timer_bucket_expiry(expires, flags);
	pthread_mutex_unlock(&timer_lock);
	return fire;
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
	unsigned long fire;
	int was_pending;

	pthread_mutex_lock(&timer_lock);
	was_pending = heap_contains(timer);
	fire = __timer_bucket_expiry(expires, timer->flags);
	/* __mod_timer(): the same timeout, or the same bucket, keeps the
	 * timer where it is (both kernels) */
	if (was_pending && (expires == timer->expires || fire == timer->fire)) {
		timer->expires = expires;
		pthread_mutex_unlock(&timer_lock);
		return 1;
	}
	if (was_pending)
		heap_remove(timer);
	timer->expires = expires;
	timer->fire = fire;
	heap_insert(timer);
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
	was_pending = heap_contains(timer);
	if (was_pending)
		heap_remove(timer);
	pthread_mutex_unlock(&timer_lock);
	return was_pending;
}

bool timer_pending(const struct timer_list *timer)
{
	bool pending;

	pthread_mutex_lock(&timer_lock);
	pending = heap_contains(timer);
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
		if (heap_contains(timer)) {
			heap_remove(timer);
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
	if (!timer || time_after(timer->fire, now)) {
		pthread_mutex_unlock(&timer_lock);
		return false;
	}
	heap_remove(timer);
	running_timer = timer;
	running_thread = pthread_self();
	fn = timer->function;
	if (step)
		uf_clock_step(timer->fire);
	/* __run_timers() runs a tick's timers with base->clk one ahead */
	base_clk = jiffies + 1;
	base_clk_set = true;
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
		} else if (uf_clock_real_deadline(first->fire, &ts)) {
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
	/* a new clock (or a virtual one set back): the base starts at it */
	base_clk_set = false;
	if (timer_root)
		kick_timer_thread();
	pthread_mutex_unlock(&timer_lock);
}

bool uf_timers_pending(void)
{
	bool pending;

	pthread_mutex_lock(&timer_lock);
	pending = timer_root != NULL;
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
		*expires = first->fire;
		ret = 0;
	}
	pthread_mutex_unlock(&timer_lock);
	return ret;
}
