// SPDX-License-Identifier: MIT
/*
 * tests/test_timer.c - engine/kernel/timer.c, timer_list on the active clock.
 *
 * The flusher's wakeup_timer and every schedule_timeout() are timers, so
 * the virtual clock's tests stand on these properties: a timer fires
 * exactly when jiffies reaches its expiry and not a tick before, timers
 * fire in expiry order (across wraps), a deleted timer never fires, and
 * del_timer_sync() does not return while the callback runs.
 *
 * Threads hand off through semaphores with bounded waits, so a broken
 * timer fails the test instead of hanging it; assertions stay on the
 * test's own thread.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "kernel/jiffies.h"
#include "kernel/sched.h"
#include "kernel/timer.h"

#define WAIT_MS		5000

/* A timer that logs (id, jiffies) into a shared record when it fires. */
struct probe {
	struct timer_list timer;
	int id;
	int rearm;		/* fire again this many times, +10 ticks */
};

static struct {
	int n;
	int id[16];
	unsigned long at[16];
} fired;

static void probe_fn(struct timer_list *t)
{
	struct probe *p = from_timer(p, t, timer);

	if (fired.n < 16) {
		fired.id[fired.n] = p->id;
		fired.at[fired.n] = jiffies;
		fired.n++;
	}
	if (p->rearm > 0) {
		p->rearm--;
		mod_timer(&p->timer, jiffies + 10);
	}
}

static void probe_init(struct probe *p, int id)
{
	p->id = id;
	p->rearm = 0;
	timer_setup(&p->timer, probe_fn, 0);
}

static void expect_fired(const int *ids, const unsigned long *at, int n)
{
	cr_assert_eq(fired.n, n, "%d timers fired, want %d", fired.n, n);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(fired.id[i], ids[i], "#%d fired timer %d, want %d",
			     i, fired.id[i], ids[i]);
		cr_assert_eq(fired.at[i], at[i],
			     "timer %d fired at %lu, want %lu", ids[i],
			     fired.at[i], at[i]);
	}
}

#define B	INITIAL_JIFFIES

static void virtual_clock(void)
{
	uf_clock_set_virtual(B);
}

TestSuite(timer, .init = virtual_clock, .timeout = 30);

Test(timer, fire_in_expiry_order_each_at_its_expiry)
{
	/* armed out of order; ids give the expected firing order */
	const struct {
		int id;
		unsigned long expires;
	} arm[] = {
		{ 4, B + 30 }, { 2, B + 20 }, { 3, B + 20 }, { 1, B + 10 },
		{ 5, B + 30 },
	};
	const int ids[] = { 1, 2, 3, 4, 5 };
	const unsigned long at[] = { B + 10, B + 20, B + 20, B + 30, B + 30 };
	struct probe p[5];

	for (int i = 0; i < 5; i++) {
		probe_init(&p[i], arm[i].id);
		mod_timer(&p[i].timer, arm[i].expires);
	}
	cr_assert_eq(uf_clock_advance(25), 0);
	expect_fired(ids, at, 3);	/* equal expiries: arming order */
	cr_assert_eq(jiffies, B + 25);
	cr_assert(timer_pending(&p[0].timer));

	cr_assert_eq(uf_clock_advance(5), 0);
	expect_fired(ids, at, 5);
	cr_assert(!timer_pending(&p[0].timer));
	cr_assert(!timer_pending(&p[4].timer));
}

Test(timer, fires_exactly_at_expiry_not_before)
{
	struct probe p;

	probe_init(&p, 7);
	mod_timer(&p.timer, B + 100);
	cr_assert_eq(uf_clock_advance(99), 0);
	cr_assert_eq(fired.n, 0, "fired a tick early");
	cr_assert(timer_pending(&p.timer));
	cr_assert_eq(uf_clock_advance(1), 0);
	cr_assert_eq(fired.n, 1);
	cr_assert_eq(fired.at[0], B + 100);
}

Test(timer, deleted_timer_never_fires)
{
	struct probe p;

	probe_init(&p, 1);
	cr_assert_eq(del_timer(&p.timer), 0, "not pending yet");
	mod_timer(&p.timer, B + 10);
	cr_assert(timer_pending(&p.timer));
	cr_assert_eq(del_timer(&p.timer), 1);
	cr_assert(!timer_pending(&p.timer));
	cr_assert_eq(del_timer(&p.timer), 0);
	cr_assert_eq(uf_clock_advance(100), 0);
	cr_assert_eq(fired.n, 0);

	mod_timer(&p.timer, B + 200);
	cr_assert_eq(del_timer_sync(&p.timer), 1);
	cr_assert_eq(uf_clock_advance(200), 0);
	cr_assert_eq(fired.n, 0);
}

Test(timer, mod_timer_moves_a_pending_timer)
{
	struct probe p;

	probe_init(&p, 1);
	cr_assert_eq(mod_timer(&p.timer, B + 10), 0);
	cr_assert_eq(mod_timer(&p.timer, B + 50), 1);
	cr_assert_eq(uf_clock_advance(20), 0);
	cr_assert_eq(fired.n, 0, "fired at the old expiry");
	cr_assert_eq(uf_clock_advance(30), 0);
	cr_assert_eq(fired.n, 1);
	cr_assert_eq(fired.at[0], B + 50);

	/* and forward: an earlier expiry */
	cr_assert_eq(mod_timer(&p.timer, B + 500), 0);
	cr_assert_eq(mod_timer(&p.timer, B + 60), 1);
	cr_assert_eq(uf_clock_advance(10), 0);
	cr_assert_eq(fired.n, 2);
	cr_assert_eq(fired.at[1], B + 60);
}

Test(timer, callback_rearms_itself_within_one_advance)
{
	struct probe p;
	const int ids[] = { 1, 1, 1 };
	const unsigned long at[] = { B + 10, B + 20, B + 30 };

	probe_init(&p, 1);
	p.rearm = 2;
	mod_timer(&p.timer, B + 10);
	cr_assert_eq(uf_clock_advance(100), 0);
	expect_fired(ids, at, 3);
	cr_assert_eq(jiffies, B + 100);
}

Test(timer, add_timer_uses_expires)
{
	struct probe p;

	probe_init(&p, 1);
	p.timer.expires = B + 3;
	add_timer(&p.timer);
	cr_assert_eq(uf_clock_advance(3), 0);
	cr_assert_eq(fired.n, 1);
}

Test(timer, overdue_timer_fires_at_the_next_advance)
{
	struct probe p;

	probe_init(&p, 1);
	mod_timer(&p.timer, B - 5);
	cr_assert_eq(fired.n, 0, "fired outside uf_clock_advance");
	cr_assert_eq(uf_clock_advance(0), 0);
	cr_assert_eq(fired.n, 1);
	cr_assert_eq(fired.at[0], B, "the clock must not go backwards");
}

Test(timer, order_across_the_unsigned_long_wrap)
{
	const unsigned long base = ULONG_MAX - 5;
	const int ids[] = { 0, 1, 2 };
	const unsigned long at[] = { ULONG_MAX - 2, 0, 2 };
	struct probe p[3];

	uf_clock_set_virtual(base);
	for (int i = 0; i < 3; i++)
		probe_init(&p[i], i);
	mod_timer(&p[2].timer, 2);
	mod_timer(&p[0].timer, ULONG_MAX - 2);
	mod_timer(&p[1].timer, 0);
	cr_assert_eq(uf_clock_advance(10), 0);
	expect_fired(ids, at, 3);
}

Test(timer, next_expiry_reports_the_earliest)
{
	struct probe p[2];
	unsigned long when = 0;

	cr_assert_eq(uf_clock_next_expiry(&when), -ENOENT);
	probe_init(&p[0], 0);
	probe_init(&p[1], 1);
	mod_timer(&p[0].timer, B + 40);
	mod_timer(&p[1].timer, B + 15);
	cr_assert_eq(uf_clock_next_expiry(&when), 0);
	cr_assert_eq(when, B + 15);
	cr_assert_eq(uf_clock_advance(when - jiffies), 0);
	cr_assert_eq(fired.n, 1);
	cr_assert_eq(uf_clock_next_expiry(&when), 0);
	cr_assert_eq(when, B + 40);
}

/* ---- del_timer_sync() against a running callback ---- */

static struct {
	struct timer_list timer;
	sem_t entered, release, advanced, del_ready, del_done;
	struct task_struct *deleter;
	int del_ret;
} blk;

static void blocking_fn(struct timer_list *t)
{
	(void)t;
	sem_post(&blk.entered);
	sem_wait(&blk.release);
}

static void *advance_thread(void *arg)
{
	(void)arg;
	uf_clock_advance(10);
	sem_post(&blk.advanced);
	return NULL;
}

static void *deleter_thread(void *arg)
{
	(void)arg;
	blk.deleter = current;
	sem_post(&blk.del_ready);
	blk.del_ret = del_timer_sync(&blk.timer);
	sem_post(&blk.del_done);
	return NULL;
}

Test(timer, del_timer_sync_waits_for_the_running_callback)
{
	pthread_t adv, del;

	sem_init(&blk.entered, 0, 0);
	sem_init(&blk.release, 0, 0);
	sem_init(&blk.advanced, 0, 0);
	sem_init(&blk.del_ready, 0, 0);
	sem_init(&blk.del_done, 0, 0);
	timer_setup(&blk.timer, blocking_fn, 0);
	mod_timer(&blk.timer, B + 10);

	pthread_create(&adv, NULL, advance_thread, NULL);
	cr_assert(tu_sem_wait_ms(&blk.entered, WAIT_MS), "callback never ran");
	cr_assert(!timer_pending(&blk.timer));

	pthread_create(&del, NULL, deleter_thread, NULL);
	cr_assert(tu_sem_wait_ms(&blk.del_ready, WAIT_MS));
	/* the deleter must be asleep, waiting for the callback */
	cr_assert_eq(uf_wait_task_sleeping(blk.deleter, WAIT_MS), 0,
		     "del_timer_sync() did not wait");
	cr_assert_neq(sem_trywait(&blk.del_done), 0,
		      "del_timer_sync() returned while the callback runs");

	sem_post(&blk.release);
	cr_assert(tu_sem_wait_ms(&blk.del_done, WAIT_MS),
		  "del_timer_sync() never returned");
	cr_assert_eq(blk.del_ret, 0, "the timer was not pending");
	cr_assert(tu_sem_wait_ms(&blk.advanced, WAIT_MS));
	pthread_join(adv, NULL);
	pthread_join(del, NULL);
	cr_assert_eq(uf_clock_nr_sleeping(), 0);
}

/* ---- the real clock ---- */

static struct {
	struct timer_list timer;
	sem_t fired;
	unsigned long at;
} rt;

static void real_fn(struct timer_list *t)
{
	(void)t;
	rt.at = jiffies;
	sem_post(&rt.fired);
}

Test(timer, real_clock_timer_thread_fires_at_expiry)
{
	unsigned long expires;

	uf_clock_set_real();
	sem_init(&rt.fired, 0, 0);
	timer_setup(&rt.timer, real_fn, 0);
	expires = jiffies + 20;
	mod_timer(&rt.timer, expires);
	cr_assert(tu_sem_wait_ms(&rt.fired, WAIT_MS), "real timer never fired");
	cr_assert(time_after_eq(rt.at, expires), "fired at %lu < %lu", rt.at,
		  expires);
	cr_assert(!timer_pending(&rt.timer));
}

Test(timer, pending_timers_move_to_the_real_clock)
{
	struct probe p;

	/* armed on the virtual clock, left pending across a switch */
	uf_clock_set_virtual(B);
	sem_init(&rt.fired, 0, 0);
	timer_setup(&rt.timer, real_fn, 0);
	mod_timer(&rt.timer, B + 5);
	probe_init(&p, 1);
	mod_timer(&p.timer, B + 1000000);
	uf_clock_set_real();
	cr_assert(tu_sem_wait_ms(&rt.fired, WAIT_MS),
		  "the timer thread did not take over");
	cr_assert(timer_pending(&p.timer));
	cr_assert_eq(del_timer_sync(&p.timer), 1);
}

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/* A child forked after the timer thread started gets one of its own. */
static int fire_real_timer_once(void)
{
	sem_init(&rt.fired, 0, 0);
	timer_setup(&rt.timer, real_fn, 0);
	mod_timer(&rt.timer, jiffies + 2);
	return tu_sem_wait_ms(&rt.fired, WAIT_MS) ? 0 : 1;
}

Test(timer, real_clock_timers_fire_in_a_forked_child)
{
	int status;
	pid_t pid;

#ifdef UNDER_TSAN
	cr_skip_test("TSan cannot start threads after a multi-threaded fork");
#endif
	uf_clock_set_real();
	cr_assert_eq(fire_real_timer_once(), 0, "parent: no timer thread");
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(fire_real_timer_once());
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child: the timer never fired (status %#x)", status);
}
