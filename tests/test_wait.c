// SPDX-License-Identifier: MIT
/*
 * tests/test_wait.c - engine/kernel/wait.c, kthread.c and completion.c: task
 * states, schedule()/schedule_timeout(), wakeups, wait queues, kthreads
 * and completions, mostly on the virtual clock.
 *
 * These are the primitives under seed 000's busyloop prevention (§2.4,
 * §2.5), and its bugs are bugs of how they are combined, so both the right
 * and the wrong combinations are reproduced here, deterministically:
 *  - B1 (v3a): schedule_timeout() while TASK_RUNNING returns at once;
 *  - B5 (v4): "check, then set_current_state()" loses a wakeup that lands
 *    between the two, and the task sleeps the whole pause;
 *  - v4.1: "set_current_state(), then check" keeps it, and schedule()
 *    returns at once.
 *
 * Handshakes: helper threads post semaphores at the points that matter,
 * and uf_wait_task_sleeping() says when a helper is really asleep; every
 * wait is bounded, so a broken primitive fails a test instead of hanging
 * it.  Assertions stay on the test's own thread.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "kernel/completion.h"
#include "kernel/jiffies.h"
#include "kernel/kthread.h"
#include "kernel/sched.h"
#include "kernel/wait.h"

#define WAIT_MS		5000
#define T0		INITIAL_JIFFIES

static bool sem_posted(sem_t *sem)
{
	return sem_trywait(sem) == 0;
}

/*
 * A helper thread running fn(h).  h->task is its task (a reference is
 * held until helper_join), valid once helper_start() returns.  fn may use
 * h->mark / h->go to stop at a chosen point, and leaves its result in
 * h->ret; h->done is posted when fn returns.
 */
struct helper {
	pthread_t thread;
	void (*fn)(struct helper *h);
	struct task_struct *task;
	sem_t started, mark, go, done;
	long ret;
	int state_after;
	int sleep_state;	/* sleeper(): the state and the timeout */
	long timeout;
};

static void *helper_main(void *arg)
{
	struct helper *h = arg;

	h->task = current;
	get_task_struct(h->task);
	sem_post(&h->started);
	h->fn(h);
	h->state_after = __atomic_load_n(&current->__state, __ATOMIC_SEQ_CST);
	sem_post(&h->done);
	return NULL;
}

static void helper_init(struct helper *h, void (*fn)(struct helper *h))
{
	memset(h, 0, sizeof(*h));
	h->fn = fn;
	sem_init(&h->started, 0, 0);
	sem_init(&h->mark, 0, 0);
	sem_init(&h->go, 0, 0);
	sem_init(&h->done, 0, 0);
}

static void helper_launch(struct helper *h)
{
	cr_assert_eq(pthread_create(&h->thread, NULL, helper_main, h), 0);
	cr_assert(tu_sem_wait_ms(&h->started, WAIT_MS));
}

static void helper_start(struct helper *h, void (*fn)(struct helper *h))
{
	helper_init(h, fn);
	helper_launch(h);
}

/* On the helper: tell the test it got here, and wait for its go. */
static void stop_at_mark(struct helper *h)
{
	sem_post(&h->mark);
	sem_wait(&h->go);
}

static void expect_sleeping(struct helper *h)
{
	cr_assert_eq(uf_wait_task_sleeping(h->task, WAIT_MS), 0,
		     "the helper did not go to sleep");
	cr_assert(!sem_posted(&h->done), "the helper returned");
}

/* helper_start(), then wait until the helper is asleep. */
static void start_asleep(struct helper *h, void (*fn)(struct helper *h))
{
	helper_start(h, fn);
	expect_sleeping(h);
}

static void sleeper(struct helper *h)
{
	set_current_state(h->sleep_state);
	h->ret = schedule_timeout(h->timeout);
}

/* A helper asleep in schedule_timeout(timeout), set to state before. */
static void start_sleeper(struct helper *h, int state, long timeout)
{
	helper_init(h, sleeper);
	h->sleep_state = state;
	h->timeout = timeout;
	helper_launch(h);
	expect_sleeping(h);
}

static void expect_done(struct helper *h)
{
	cr_assert(tu_sem_wait_ms(&h->done, WAIT_MS),
		  "the helper never returned");
	pthread_join(h->thread, NULL);
	put_task_struct(h->task);
}

static void virtual_clock(void)
{
	uf_clock_set_virtual(T0);
}

TestSuite(wait, .init = virtual_clock, .timeout = 30);
TestSuite(completion, .init = virtual_clock, .timeout = 30);

/* ---- schedule_timeout() on the virtual clock ---- */

/* Move the virtual clock on by ticks; that must end the helper. */
static void advance_until_done(struct helper *h, unsigned long ticks)
{
	cr_assert_eq(uf_clock_advance(ticks), 0);
	expect_done(h);
}

Test(wait, schedule_timeout_returns_0_exactly_when_advanced_by_timeout)
{
	struct helper h;

	start_sleeper(&h, TASK_INTERRUPTIBLE, 100);
	cr_assert_eq(uf_clock_nr_sleeping(), 1);

	cr_assert_eq(uf_clock_advance(99), 0);
	cr_assert_eq(uf_clock_nr_sleeping(), 1, "woke a tick early");
	cr_assert(!sem_posted(&h.done));

	advance_until_done(&h, 1);
	cr_assert_eq(h.ret, 0);
	cr_assert_eq(h.state_after, TASK_RUNNING);
	cr_assert_eq(jiffies, T0 + 100);
	cr_assert_eq(uf_clock_nr_sleeping(), 0);
}

Test(wait, schedule_timeout_woken_early_returns_the_remaining_jiffies)
{
	struct helper h;

	start_sleeper(&h, TASK_INTERRUPTIBLE, 100);
	cr_assert_eq(uf_clock_advance(30), 0);
	cr_assert_eq(uf_clock_nr_sleeping(), 1);
	cr_assert_eq(wake_up_process(h.task), 1);
	cr_assert_eq(uf_clock_nr_sleeping(), 0,
		     "a wakeup takes the task off the count at once");
	expect_done(&h);
	cr_assert_eq(h.ret, 70);
	cr_assert_eq(h.state_after, TASK_RUNNING);
}

/* One advance past several deadlines wakes each sleeper; none early. */
Test(wait, advance_wakes_only_the_expired_sleepers)
{
	struct helper a, b;

	start_sleeper(&a, TASK_UNINTERRUPTIBLE, 40);
	cr_assert_eq(uf_clock_advance(10), 0);
	start_sleeper(&b, TASK_UNINTERRUPTIBLE, 40);	/* deadline T0 + 50 */

	advance_until_done(&a, 35);	/* T0 + 45 */
	cr_assert_eq(a.ret, 0);
	cr_assert_eq(uf_clock_nr_sleeping(), 1);
	cr_assert(!sem_posted(&b.done));

	advance_until_done(&b, 5);
	cr_assert_eq(b.ret, 0);
}

Test(wait, max_schedule_timeout_sleeps_until_woken)
{
	struct helper h;

	start_sleeper(&h, TASK_INTERRUPTIBLE, MAX_SCHEDULE_TIMEOUT);
	cr_assert_eq(uf_clock_advance(MAX_JIFFY_OFFSET), 0);
	cr_assert_eq(uf_clock_nr_sleeping(), 1);
	wake_up_process(h.task);
	expect_done(&h);
	cr_assert_eq(h.ret, MAX_SCHEDULE_TIMEOUT);
}

/*
 * Seed 000 B1: v3a called schedule_timeout(pause) without setting the
 * task state, so it never slept and the "busyloop prevention" spun.  The
 * clock is never advanced here: if one call slept, the helper would not
 * finish.
 */
static void v3a_backoff_loop(struct helper *h)
{
	long pause = 1;
	long wrong = 0;

	for (int i = 0; i < 1000; i++) {
		/* v3a: no set_current_state() before the sleep */
		if (schedule_timeout(pause) != pause)
			wrong++;
		pause = pause * 2 < HZ / 10 ? pause * 2 : HZ / 10;
	}
	h->ret = wrong;
}

Test(wait, v3a_schedule_timeout_in_task_running_returns_immediately)
{
	struct helper h;

	helper_start(&h, v3a_backoff_loop);
	expect_done(&h);
	cr_assert_eq(h.ret, 0, "%ld calls did not return their full timeout",
		     h.ret);
	cr_assert_eq(jiffies, T0);
	cr_assert_eq(uf_clock_nr_sleeping(), 0);
}

/* The v3b fix: __set_current_state(TASK_INTERRUPTIBLE) first, and it
 * really sleeps. */
static void v3b_one_pause(struct helper *h)
{
	__set_current_state(TASK_INTERRUPTIBLE);
	h->ret = schedule_timeout(1);
}

Test(wait, v3b_schedule_timeout_after_setting_the_state_sleeps)
{
	struct helper h;

	start_asleep(&h, v3b_one_pause);
	advance_until_done(&h, 1);
	cr_assert_eq(h.ret, 0);
}

/* ---- the lost wakeup (seed 000 B5, I8) ---- */

static int work_queued;

static bool work_pending(void)
{
	return __atomic_load_n(&work_queued, __ATOMIC_SEQ_CST) != 0;
}

/* A waker's side: queue work, then wake the flusher. */
static int queue_work_and_wake(struct helper *h)
{
	__atomic_store_n(&work_queued, 1, __ATOMIC_SEQ_CST);
	return wake_up_process(h->task);
}

/* v4.1: set the state, check, then sleep; the wakeup lands between the
 * check and the sleep. */
static void v41_flusher(struct helper *h)
{
	set_current_state(TASK_INTERRUPTIBLE);
	if (work_pending()) {
		__set_current_state(TASK_RUNNING);
		h->ret = -1;
		return;
	}
	stop_at_mark(h);		/* checked: nothing queued */
	h->ret = schedule_timeout(100);
}

/*
 * Run fn on a helper until it stops at its mark, do act there (the waker),
 * then let the helper go on.  act's result.
 */
static int act_at_mark(struct helper *h, void (*fn)(struct helper *h),
		       int (*act)(struct helper *h))
{
	int ret;

	helper_start(h, fn);
	cr_assert(tu_sem_wait_ms(&h->mark, WAIT_MS),
		  "the helper never reached its mark");
	ret = act(h);
	sem_post(&h->go);
	return ret;
}

Test(wait, v41_wakeup_between_check_and_sleep_is_not_lost)
{
	struct helper h;

	cr_assert_eq(act_at_mark(&h, v41_flusher, queue_work_and_wake), 1,
		     "the wakeup found the task running");
	/* the clock never moves: only an immediate return finishes */
	expect_done(&h);
	cr_assert_eq(h.ret, 100, "slept %ld jiffies", 100 - h.ret);
	cr_assert_eq(h.state_after, TASK_RUNNING);
}

/* The same with plain schedule(), as the flusher's idle sleep. */
static void idle_flusher(struct helper *h)
{
	set_current_state(TASK_INTERRUPTIBLE);
	stop_at_mark(h);
	schedule();
	h->ret = 1;
}

static int wake_helper(struct helper *h)
{
	return wake_up_process(h->task);
}

Test(wait, wakeup_before_schedule_makes_schedule_return_at_once)
{
	struct helper h;

	cr_assert_eq(act_at_mark(&h, idle_flusher, wake_helper), 1);
	expect_done(&h);
	cr_assert_eq(h.ret, 1);
	cr_assert_eq(uf_clock_nr_sleeping(), 0);
}

/* v4: check, then set the state: the same wakeup is lost. */
static void v4_flusher(struct helper *h)
{
	if (work_pending()) {
		h->ret = -1;
		return;
	}
	stop_at_mark(h);
	set_current_state(TASK_INTERRUPTIBLE);
	h->ret = schedule_timeout(100);
}

Test(wait, v4_check_before_set_state_loses_the_wakeup)
{
	struct helper h;

	cr_assert_eq(act_at_mark(&h, v4_flusher, queue_work_and_wake), 0,
		     "the task was running: nothing to wake");
	/* it sleeps the whole pause despite the queued work */
	expect_sleeping(&h);
	cr_assert_eq(uf_clock_advance(99), 0);
	cr_assert_eq(uf_clock_nr_sleeping(), 1);
	advance_until_done(&h, 1);
	cr_assert_eq(h.ret, 0);
}

/* ---- wait queues ---- */

static DECLARE_WAIT_QUEUE_HEAD(wq);
static int cond_flag;

static bool cond_set(void)
{
	return __atomic_load_n(&cond_flag, __ATOMIC_SEQ_CST) != 0;
}

static void waiter_event(struct helper *h)
{
	wait_event(wq, cond_set());
	h->ret = 1;
}

Test(wait, wake_up_ends_wait_event_once_the_condition_holds)
{
	struct helper h;

	cr_assert(!waitqueue_active(&wq));
	start_asleep(&h, waiter_event);
	cr_assert(waitqueue_active(&wq));

	/* woken with the condition false: it must go back to sleep */
	wake_up(&wq);
	expect_sleeping(&h);
	cr_assert(waitqueue_active(&wq));

	__atomic_store_n(&cond_flag, 1, __ATOMIC_SEQ_CST);
	wake_up(&wq);
	expect_done(&h);
	cr_assert_eq(h.ret, 1);
	cr_assert(!waitqueue_active(&wq), "the entry was left queued");
}

Test(wait, wait_event_with_the_condition_true_does_not_sleep)
{
	long ret;

	__atomic_store_n(&cond_flag, 1, __ATOMIC_SEQ_CST);
	wait_event(wq, cond_set());
	ret = wait_event_timeout(wq, cond_set(), 0);
	cr_assert_eq(ret, 1, "true at timeout 0 gives 1");
	ret = wait_event_timeout(wq, cond_set(), 25);
	cr_assert_eq(ret, 25);
	cr_assert(!waitqueue_active(&wq));
}

static void waiter_timeout_50(struct helper *h)
{
	h->ret = wait_event_timeout(wq, cond_set(), 50);
}

Test(wait, wait_event_timeout_times_out_on_advance)
{
	struct helper h;

	start_asleep(&h, waiter_timeout_50);
	cr_assert_eq(uf_clock_advance(49), 0);
	cr_assert_eq(uf_clock_nr_sleeping(), 1);
	advance_until_done(&h, 1);
	cr_assert_eq(h.ret, 0);
	cr_assert(!waitqueue_active(&wq));
}

Test(wait, wait_event_timeout_returns_the_time_left)
{
	struct helper h;

	start_asleep(&h, waiter_timeout_50);
	cr_assert_eq(uf_clock_advance(20), 0);
	__atomic_store_n(&cond_flag, 1, __ATOMIC_SEQ_CST);
	wake_up_all(&wq);
	expect_done(&h);
	cr_assert_eq(h.ret, 30);
}

static void waiter_uninterruptible(struct helper *h)
{
	DEFINE_WAIT(w);

	prepare_to_wait(&wq, &w, TASK_UNINTERRUPTIBLE);
	schedule();
	finish_wait(&wq, &w);
	h->ret = 1;
}

Test(wait, wake_up_interruptible_skips_uninterruptible_sleepers)
{
	struct helper h;

	start_asleep(&h, waiter_uninterruptible);
	wake_up_interruptible(&wq);
	cr_assert_eq(uf_clock_nr_sleeping(), 1);
	wake_up(&wq);
	expect_done(&h);
	cr_assert(!waitqueue_active(&wq));
}

/* Exclusive waiters: each wake_up() hands out one token to one waiter. */
static int tokens;
static sem_t exited;

static bool take_token(void)
{
	int t = __atomic_load_n(&tokens, __ATOMIC_SEQ_CST);

	while (t > 0)
		if (__atomic_compare_exchange_n(&tokens, &t, t - 1, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return true;
	return false;
}

static void exclusive_waiter(struct helper *h)
{
	DEFINE_WAIT(w);

	for (;;) {
		prepare_to_wait_exclusive(&wq, &w, TASK_UNINTERRUPTIBLE);
		if (take_token())
			break;
		schedule();
	}
	finish_wait(&wq, &w);
	h->ret = 1;
	sem_post(&exited);
}

Test(wait, wake_up_wakes_one_exclusive_waiter_wake_up_all_all)
{
	struct helper h[3];

	sem_init(&exited, 0, 0);
	for (int i = 0; i < 3; i++) {
		start_asleep(&h[i], exclusive_waiter);
	}
	cr_assert_eq(uf_clock_nr_sleeping(), 3);

	__atomic_store_n(&tokens, 1, __ATOMIC_SEQ_CST);
	wake_up(&wq);
	cr_assert_eq(uf_clock_nr_sleeping(), 2, "wake_up woke more than one");
	cr_assert(tu_sem_wait_ms(&exited, WAIT_MS), "the woken one never left");
	cr_assert_eq(uf_clock_nr_sleeping(), 2);

	__atomic_store_n(&tokens, 2, __ATOMIC_SEQ_CST);
	wake_up_all(&wq);
	cr_assert_eq(uf_clock_nr_sleeping(), 0);
	for (int i = 0; i < 3; i++)
		expect_done(&h[i]);
	cr_assert(!waitqueue_active(&wq));
	cr_assert_eq(tokens, 0);
}

/* ---- uf_clock_wait_sleepers() ---- */

static void plain_sleep(struct helper *h)
{
	set_current_state(TASK_INTERRUPTIBLE);
	schedule();
	h->ret = 1;
}

Test(wait, clock_wait_sleepers_counts_blocked_tasks)
{
	struct helper a, b;

	cr_assert_eq(uf_clock_nr_sleeping(), 0);
	cr_assert_eq(uf_clock_wait_sleepers(1, 50), -ETIMEDOUT);
	cr_assert_eq(uf_clock_wait_sleepers(0, 0), 0);

	helper_start(&a, plain_sleep);
	helper_start(&b, plain_sleep);
	cr_assert_eq(uf_clock_wait_sleepers(2, WAIT_MS), 0);
	cr_assert_eq(uf_clock_nr_sleeping(), 2);
	cr_assert_eq(uf_clock_wait_sleepers(3, 50), -ETIMEDOUT);

	cr_assert_eq(wake_up_process(a.task), 1);
	cr_assert_eq(uf_clock_nr_sleeping(), 1);
	cr_assert_eq(wake_up_process(a.task), 0, "woken twice");
	expect_done(&a);
	cr_assert_eq(wake_up_process(b.task), 1);
	cr_assert_eq(uf_clock_nr_sleeping(), 0);
	expect_done(&b);
}

/* ---- the real clock ---- */

Test(wait, real_clock_schedule_timeout_sleeps_its_ticks)
{
	unsigned long start;
	long ret;

	uf_clock_set_real();
	start = jiffies;
	set_current_state(TASK_INTERRUPTIBLE);
	ret = schedule_timeout(20);
	cr_assert_eq(ret, 0);
	cr_assert(time_after_eq(jiffies, start + 20), "slept %lu ticks",
		  jiffies - start);
	cr_assert(task_is_running(current));
}

Test(wait, real_clock_wakeup_ends_a_long_sleep)
{
	struct helper h;

	uf_clock_set_real();
	start_sleeper(&h, TASK_INTERRUPTIBLE, MAX_SCHEDULE_TIMEOUT);
	wake_up_process(h.task);
	expect_done(&h);
}

/* ---- current ---- */

static void whoami(struct helper *h)
{
	h->ret = current == h->task && current->pid == gettid();
}

Test(wait, current_is_per_thread_and_starts_running)
{
	struct helper h;
	struct task_struct *me = current;

	cr_assert_eq(me, current);
	cr_assert_eq(me->pid, gettid());
	cr_assert(task_is_running(me));
	cr_assert_gt(strlen(me->comm), 0);
	helper_start(&h, whoami);
	expect_done(&h);
	cr_assert_eq(h.ret, 1);
	cr_assert_neq(h.task, me);
}

/* ---- kthreads ---- */

struct flusher_data {
	struct task_struct *self;
	int loops;
};

/* The shape of bdi_writeback_thread()'s idle loop. */
static int flusher_fn(void *arg)
{
	struct flusher_data *d = arg;

	d->self = current;
	while (!kthread_should_stop()) {
		d->loops++;
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop()) {
			__set_current_state(TASK_RUNNING);
			break;
		}
		schedule_timeout(1000);
	}
	return 42;
}

static int ran;
static sem_t ran_sem;

static void kthread_init(void)
{
	virtual_clock();
	sem_init(&ran_sem, 0, 0);
}

TestSuite(kthread, .init = kthread_init, .timeout = 30);

Test(kthread, run_sleep_and_stop)
{
	struct flusher_data d = { 0 };
	struct task_struct *k;

	k = kthread_run(flusher_fn, &d, "flush-%d:%d", 7, 0);
	cr_assert(!IS_ERR(k));
	cr_assert_str_eq(k->comm, "flush-7:0");
	cr_assert_gt(k->pid, 0);
	cr_assert_eq(uf_wait_task_sleeping(k, WAIT_MS), 0);
	cr_assert_eq(d.self, k, "current in the thread is the task");
	cr_assert_eq(d.loops, 1);

	/* a timeout pass: it loops once and sleeps again */
	cr_assert_eq(uf_clock_advance(1000), 0);
	cr_assert_eq(uf_wait_task_sleeping(k, WAIT_MS), 0);

	/* stopped in the middle of a timed sleep, clock untouched */
	cr_assert_eq(kthread_stop(k), 42);
	cr_assert_eq(d.loops, 2);
	cr_assert_eq(uf_clock_nr_sleeping(), 0);
}


static int mark_ran(void *arg)
{
	(void)arg;
	__atomic_store_n(&ran, 1, __ATOMIC_SEQ_CST);
	sem_post(&ran_sem);
	return 7;
}

Test(kthread, created_but_never_woken_does_not_run)
{
	struct task_struct *k = kthread_create(mark_ran, NULL, "idle");

	cr_assert(!IS_ERR(k));
	cr_assert_eq(uf_wait_task_sleeping(k, WAIT_MS), 0,
		     "a new kthread waits for its first wakeup");
	cr_assert_eq(kthread_stop(k), -EINTR);
	cr_assert_eq(ran, 0);
}

Test(kthread, function_that_returns_early_is_reaped_by_stop)
{
	struct task_struct *k;

	k = kthread_run(mark_ran, NULL, "short");
	cr_assert(!IS_ERR(k));
	/* as in the kernel, a stop that overtakes the first run wins */
	cr_assert(tu_sem_wait_ms(&ran_sem, WAIT_MS));
	cr_assert_eq(kthread_stop(k), 7);
	cr_assert_eq(ran, 1);
}

Test(kthread, name_is_cut_to_the_comm_length)
{
	struct task_struct *k = kthread_create(mark_ran, NULL, "%s-%d",
					       "a-very-long-thread-name", 12);

	cr_assert(!IS_ERR(k));
	cr_assert_str_eq(k->comm, "a-very-long-thr");
	cr_assert_eq(kthread_stop(k), -EINTR);
}

Test(kthread, should_stop_is_false_outside_kthreads)
{
	cr_assert(!kthread_should_stop());
}

/* ---- completions ---- */

static DECLARE_COMPLETION(comp);

static void comp_waiter(struct helper *h)
{
	wait_for_completion(&comp);
	h->ret = 1;
}

static void comp_waiter_timeout(struct helper *h)
{
	h->ret = (long)wait_for_completion_timeout(&comp, 10);
}

Test(completion, complete_before_wait_returns_at_once)
{
	complete(&comp);
	cr_assert(completion_done(&comp));
	wait_for_completion(&comp);
	cr_assert(!completion_done(&comp));
	cr_assert(!try_wait_for_completion(&comp));
}

Test(completion, counts_each_complete)
{
	for (int i = 0; i < 3; i++)
		complete(&comp);
	for (int i = 0; i < 3; i++)
		cr_assert(try_wait_for_completion(&comp), "#%d", i);
	cr_assert(!try_wait_for_completion(&comp));
}

Test(completion, complete_wakes_one_waiter_complete_all_every_one)
{
	struct helper h[3];

	for (int i = 0; i < 3; i++) {
		start_asleep(&h[i], comp_waiter);
	}
	complete(&comp);
	cr_assert_eq(uf_clock_nr_sleeping(), 2);
	complete_all(&comp);
	cr_assert_eq(uf_clock_nr_sleeping(), 0);
	for (int i = 0; i < 3; i++)
		expect_done(&h[i]);
	/* done stays until reinit */
	wait_for_completion(&comp);
	cr_assert(completion_done(&comp));
	reinit_completion(&comp);
	cr_assert(!completion_done(&comp));
}

Test(completion, wait_timeout_expires_on_advance)
{
	struct helper h;

	start_asleep(&h, comp_waiter_timeout);
	advance_until_done(&h, 10);
	cr_assert_eq(h.ret, 0);
	cr_assert(!waitqueue_active(&comp.wait));
}

Test(completion, wait_timeout_returns_the_time_left)
{
	struct helper h;

	start_asleep(&h, comp_waiter_timeout);
	cr_assert_eq(uf_clock_advance(4), 0);
	complete(&comp);
	expect_done(&h);
	cr_assert_eq(h.ret, 6);
	cr_assert(!completion_done(&comp), "the waiter consumed it");
}
