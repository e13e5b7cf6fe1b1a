// SPDX-License-Identifier: MIT
/*
 * engine/kernel/wait.c - tasks, sleeping and wait queues: what the kernel does in
 * kernel/sched/core.c (schedule, try_to_wake_up, wake_up_process),
 * kernel/time/timer.c (schedule_timeout, process_timeout) and
 * kernel/sched/wait.c (prepare_to_wait, finish_wait, __wake_up).
 *
 * The sleep handshake (see sched.h): a task's state is the condition it
 * sleeps on.  schedule() blocks on the task's condition variable while the
 * state is not TASK_RUNNING; a waker sets TASK_RUNNING under the task's
 * pi_lock and signals.  Because the waker changes the state whether or not
 * the task is asleep yet, a wakeup between set_current_state() and
 * schedule() turns that schedule() into a no-op instead of being lost.
 *
 * schedule_timeout() is built as in the kernel on the virtual clock: an
 * on-stack timer whose callback wakes the task, so a timeout is just a
 * timer there and uf_clock_advance() fires it.  On the real clock the task
 * waits for its own deadline instead (a timed wait on its condition): a
 * timer meant waking the uf-timer thread twice (re-armed, then expired) for
 * each wakeup of the sleeper, three context switches for every periodic
 * flusher pass of an idle cache where the kernel's timer interrupt costs
 * none.  A switch of clock wakes such a sleeper to wait again on the new
 * one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernel/printk.h"
#include "kernel/sched.h"
#include "lib/slab.h"
#include "kernel/timer.h"
#include "kernel/wait.h"

/* ---- tasks ---- */

static __thread struct task_struct *current_task;
static pthread_key_t task_key;
static pthread_once_t task_key_once = PTHREAD_ONCE_INIT;

/* Thread exit: drop the thread's reference to its task. */
static void task_key_destroy(void *data)
{
	current_task = NULL;
	put_task_struct(data);
}

static void task_key_init(void)
{
	if (pthread_key_create(&task_key, task_key_destroy))
		abort();
}

struct task_struct *uf_task_alloc(const char *comm)
{
	struct task_struct *p = kzalloc(sizeof(*p));
	pthread_condattr_t attr;

	if (!p)
		return NULL;
	p->usage = 1;
	p->__state = TASK_RUNNING;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	pthread_mutex_init(&p->pi_lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->sleep_cond, &attr);
	pthread_condattr_destroy(&attr);
	return p;
}

void put_task_struct(struct task_struct *p)
{
	if (__atomic_sub_fetch(&p->usage, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_cond_destroy(&p->sleep_cond);
	pthread_mutex_destroy(&p->pi_lock);
	kfree(p);
}

void uf_task_bind(struct task_struct *p)
{
	pid_t vpid = uf_in_sim() ? uf_sim_bind(p) : 0;

	pthread_once(&task_key_once, task_key_init);
	p->pid = vpid ? vpid : gettid();
	current_task = p;
	pthread_setspecific(task_key, p);
}

struct task_struct *get_current(void)
{
	char name[TASK_COMM_LEN];
	struct task_struct *p = current_task;

	if (__builtin_expect(p != NULL, 1))
		return p;
	if (uf_in_sim() && uf_sim_self_name())
		snprintf(name, sizeof(name), "%s", uf_sim_self_name());
	else if (pthread_getname_np(pthread_self(), name, sizeof(name)))
		snprintf(name, sizeof(name), "uf-%d", (int)gettid());
	p = uf_task_alloc(name);
	if (!p) {
		pr_err("out of memory for a task_struct");
		abort();
	}
	uf_task_bind(p);
	return p;
}

/* ---- sleeping and waking ---- */

void schedule(void)
{
	struct task_struct *p;

	if (uf_in_sim()) {
		uf_sim_schedule();
		return;
	}
	p = current;
	pthread_mutex_lock(&p->pi_lock);
	if (!task_is_running(p)) {
		uf_clock_sleep_begin(p);
		while (p->sleeping)
			pthread_cond_wait(&p->sleep_cond, &p->pi_lock);
	}
	pthread_mutex_unlock(&p->pi_lock);
}

/* try_to_wake_up() with p->pi_lock held: 1 if @p was in @state. */
static int wake_up_state_locked(struct task_struct *p, unsigned int state)
{
	int old;
	int woke = 0;

	old = __atomic_load_n(&p->__state, __ATOMIC_SEQ_CST);
	while ((unsigned int)old & state) {
		if (__atomic_compare_exchange_n(&p->__state, &old, TASK_RUNNING,
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
			woke = 1;
			break;
		}
	}
	if (woke && uf_in_sim()) {
		uf_sim_wake(p);
	} else if (woke && p->sleeping) {
		uf_clock_sleep_end(p);
		pthread_cond_signal(&p->sleep_cond);
	}
	return woke;
}

int wake_up_state(struct task_struct *p, unsigned int state)
{
	int woke;

	pthread_mutex_lock(&p->pi_lock);
	woke = wake_up_state_locked(p, state);
	pthread_mutex_unlock(&p->pi_lock);
	return woke;
}

int wake_up_process(struct task_struct *p)
{
	return wake_up_state(p, TASK_NORMAL);
}

struct process_timer {
	struct timer_list timer;
	struct task_struct *task;
};

static void process_timeout(struct timer_list *t)
{
	struct process_timer *timeout = from_timer(timeout, t, timer);

	wake_up_process(timeout->task);
}

/* A real-clock schedule_timeout() in progress, on its stack. */
struct timed_sleeper {
	struct list_head list;		/* timed_sleepers_lock */
	struct task_struct *task;
};

static pthread_mutex_t timed_sleepers_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(timed_sleepers);

/* The clock switched: every real-clock sleeper waits again on the new one. */
void uf_timed_sleepers_clock_changed(void)
{
	struct timed_sleeper *ts;
	struct task_struct *p;

	pthread_mutex_lock(&timed_sleepers_lock);
	list_for_each_entry(ts, &timed_sleepers, list) {
		p = ts->task;
		pthread_mutex_lock(&p->pi_lock);
		p->clock_changed = true;
		pthread_cond_signal(&p->sleep_cond);
		pthread_mutex_unlock(&p->pi_lock);
	}
	pthread_mutex_unlock(&timed_sleepers_lock);
}

/*
 * schedule() with a deadline on the real clock, the timer's work done by
 * the sleeper: past @expires it wakes itself, as process_timeout() would.
 * False if the clock switched meanwhile (the task then still sleeps, in
 * its state, and must wait again).
 */
static bool schedule_real_deadline(struct task_struct *p,
				   unsigned long expires)
{
	struct timed_sleeper me = { .task = p };
	struct timespec ts;
	bool done = true;

	pthread_mutex_lock(&timed_sleepers_lock);
	list_add(&me.list, &timed_sleepers);
	pthread_mutex_unlock(&timed_sleepers_lock);
	pthread_mutex_lock(&p->pi_lock);
	if (!task_is_running(p)) {
		uf_clock_sleep_begin(p);
		while (p->sleeping) {
			if (p->clock_changed) {
				uf_clock_sleep_end(p);
				done = false;
				break;
			}
			/* past it: process_timeout()'s wake_up_process();
			 * a state it cannot wake sleeps on, as schedule() */
			if (uf_clock_real_deadline(expires, &ts))
				pthread_cond_timedwait(&p->sleep_cond,
						       &p->pi_lock, &ts);
			else if (!wake_up_state_locked(p, TASK_NORMAL))
				pthread_cond_wait(&p->sleep_cond,
						  &p->pi_lock);
		}
	}
	p->clock_changed = false;
	pthread_mutex_unlock(&p->pi_lock);
	pthread_mutex_lock(&timed_sleepers_lock);
	list_del(&me.list);
	pthread_mutex_unlock(&timed_sleepers_lock);
	return done;
}

long schedule_timeout(long timeout)
{
	struct process_timer timer;
	unsigned long start, expires;
	long elapsed;

	if (timeout == MAX_SCHEDULE_TIMEOUT) {
		schedule();
		return timeout;
	}
	if (timeout < 0) {
		pr_err("schedule_timeout: wrong timeout value %ld", timeout);
		__set_current_state(TASK_RUNNING);
		return 0;
	}
	start = jiffies;
	expires = start + (timeout < MAX_JIFFY_OFFSET ? timeout :
			   MAX_JIFFY_OFFSET);
	/* the on-stack timer would fire at its bucket's expiry (4.8+) */
	while (!task_is_running(current) && !uf_clock_is_virtual())
		if (schedule_real_deadline(current, timer_bucket_expiry(
				expires, current->timer_flags)))
			break;
	/* Running: schedule() would return at once, as would we (but for
	 * giving way if the tick is used up: the kernel's schedule()). */
	if (!task_is_running(current)) {
		timer.task = current;
		timer_setup(&timer.timer, process_timeout,
			    current->timer_flags);
		mod_timer(&timer.timer, expires);
		schedule();
		del_timer_sync(&timer.timer);
	} else {
		cond_resched();
	}
	elapsed = (long)(jiffies - start);
	return elapsed >= timeout ? 0 : timeout - elapsed;
}

long schedule_timeout_interruptible(long timeout)
{
	__set_current_state(TASK_INTERRUPTIBLE);
	return schedule_timeout(timeout);
}

long schedule_timeout_uninterruptible(long timeout)
{
	__set_current_state(TASK_UNINTERRUPTIBLE);
	return schedule_timeout(timeout);
}

long schedule_timeout_killable(long timeout)
{
	__set_current_state(TASK_KILLABLE);
	return schedule_timeout(timeout);
}

/* ---- wait queues ---- */

void init_waitqueue_head(struct wait_queue_head *wq_head)
{
	spin_lock_init(&wq_head->lock);
	INIT_LIST_HEAD(&wq_head->head);
}

int default_wake_function(struct wait_queue_entry *wq_entry,
			  unsigned int mode, int flags, void *key)
{
	(void)flags;
	(void)key;
	return wake_up_state(wq_entry->private, mode);
}

int autoremove_wake_function(struct wait_queue_entry *wq_entry,
			     unsigned int mode, int flags, void *key)
{
	int ret = default_wake_function(wq_entry, mode, flags, key);

	if (ret)
		list_del_init(&wq_entry->entry);
	return ret;
}

/*
 * The kernel sets WQ_FLAG_EXCLUSIVE before taking the queue's lock.  An
 * entry that is still queued (a __lock_page() sleeper preparing again
 * without having been woken) is then written while a waker of another key
 * in the same bucket reads its flags in __wake_up_common(): harmless on
 * the kernel's memory model, a data race in C11.  Here the flag changes
 * under the lock; the order of entries and wakeups is the kernel's.
 */
void add_wait_queue(struct wait_queue_head *wq_head,
		    struct wait_queue_entry *wq_entry)
{
	spin_lock(&wq_head->lock);
	wq_entry->flags &= ~WQ_FLAG_EXCLUSIVE;
	__add_wait_queue(wq_head, wq_entry);
	spin_unlock(&wq_head->lock);
}

void add_wait_queue_exclusive(struct wait_queue_head *wq_head,
			      struct wait_queue_entry *wq_entry)
{
	spin_lock(&wq_head->lock);
	wq_entry->flags |= WQ_FLAG_EXCLUSIVE;
	__add_wait_queue_entry_tail(wq_head, wq_entry);
	spin_unlock(&wq_head->lock);
}

void remove_wait_queue(struct wait_queue_head *wq_head,
		       struct wait_queue_entry *wq_entry)
{
	spin_lock(&wq_head->lock);
	__remove_wait_queue(wq_head, wq_entry);
	spin_unlock(&wq_head->lock);
}

void prepare_to_wait(struct wait_queue_head *wq_head,
		     struct wait_queue_entry *wq_entry, int state)
{
	spin_lock(&wq_head->lock);
	wq_entry->flags &= ~WQ_FLAG_EXCLUSIVE;
	if (list_empty(&wq_entry->entry))
		__add_wait_queue(wq_head, wq_entry);
	set_current_state(state);
	spin_unlock(&wq_head->lock);
}

void prepare_to_wait_exclusive(struct wait_queue_head *wq_head,
			       struct wait_queue_entry *wq_entry, int state)
{
	spin_lock(&wq_head->lock);
	wq_entry->flags |= WQ_FLAG_EXCLUSIVE;
	if (list_empty(&wq_entry->entry))
		__add_wait_queue_entry_tail(wq_head, wq_entry);
	set_current_state(state);
	spin_unlock(&wq_head->lock);
}

void finish_wait(struct wait_queue_head *wq_head,
		 struct wait_queue_entry *wq_entry)
{
	__set_current_state(TASK_RUNNING);
	spin_lock(&wq_head->lock);
	if (!list_empty(&wq_entry->entry))
		list_del_init(&wq_entry->entry);
	spin_unlock(&wq_head->lock);
}

/*
 * Walk the queue waking entries; count only exclusive entries that were
 * really woken, so an exclusive waiter that is already running does not
 * use up the wakeup.
 */
static void __wake_up_common(struct wait_queue_head *wq_head,
			     unsigned int mode, int nr_exclusive, void *key)
{
	struct wait_queue_entry *curr, *next;

	list_for_each_entry_safe(curr, next, &wq_head->head, entry) {
		unsigned int flags = curr->flags;
		int ret = curr->func(curr, mode, 0, key);

		if (ret < 0)
			break;
		if (ret && (flags & WQ_FLAG_EXCLUSIVE) && !--nr_exclusive)
			break;
	}
}

void __wake_up(struct wait_queue_head *wq_head, unsigned int mode,
	       int nr_exclusive, void *key)
{
	spin_lock(&wq_head->lock);
	__wake_up_common(wq_head, mode, nr_exclusive, key);
	spin_unlock(&wq_head->lock);
}

void __wake_up_locked(struct wait_queue_head *wq_head, unsigned int mode,
		      int nr_exclusive)
{
	__wake_up_common(wq_head, mode, nr_exclusive, NULL);
}

bool waitqueue_active(struct wait_queue_head *wq_head)
{
	bool active;

	spin_lock(&wq_head->lock);
	active = !list_empty(&wq_head->head);
	spin_unlock(&wq_head->lock);
	return active;
}
