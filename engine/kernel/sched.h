/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/sched.h - tasks and sleeping: struct task_struct, current,
 * set_current_state(), schedule(), schedule_timeout() and
 * wake_up_process(), as in the kernel's include/linux/sched.h and
 * kernel/sched/core.c, kernel/time/timer.c (schedule_timeout).
 *
 * The flusher's sleep logic is written in the kernel's idiom:
 *
 *	set_current_state(TASK_INTERRUPTIBLE);
 *	if (work queued || should stop) {
 *		__set_current_state(TASK_RUNNING);
 *		continue;
 *	}
 *	schedule_timeout(pause);
 *
 * and its bugs (seed 000: B1, B5) are bugs of that idiom, so the idiom must
 * behave exactly as in the kernel: the task state is the sleep condition.
 * wake_up_process() makes a task TASK_RUNNING; schedule() sleeps only while
 * the state is not TASK_RUNNING.  A wakeup that lands after
 * set_current_state() but before schedule() is therefore not lost:
 * schedule() returns at once.  And schedule_timeout() called in
 * TASK_RUNNING returns at once without sleeping, which is what made the
 * v3a "busyloop prevention" busy-loop.
 *
 * Every thread that touches the engine gets a task_struct on first use of
 * `current` (name from the thread's name, pid = its tid); kthreads get
 * theirs from kthread_create().  Sleeps block on a per-task mutex and
 * condition variable; timeouts are timers on the active clock (jiffies.h),
 * so on the virtual clock a timed sleep ends only by a wakeup or by
 * uf_clock_advance() passing its deadline.  There are no signals: the
 * INTERRUPTIBLE and UNINTERRUPTIBLE states differ only in which wakeups
 * they accept (wake_up_interruptible() skips UNINTERRUPTIBLE sleepers).
 *
 * `current` is a macro: do not use the word as an identifier in files that
 * include this header.
 */
/*
 * With engine/ on the -I path, this file also answers the C library's own
 * #include <sched.h> (from <pthread.h>, <liburing.h>): pass that through.
 * (clang notes that, reached as "sched.h" from engine/, the search starts
 * over; it then finds this file again, whose include_next finds libc's.)
 */
#ifndef _SCHED_H
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#pragma clang diagnostic ignored "-Winclude-next-absolute-path"
#endif
#include_next <sched.h>
#ifdef __clang__
#pragma clang diagnostic pop
#endif
#endif

#ifndef UF_SCHED_H
#define UF_SCHED_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>		/* pthread types, even from inside pthread.h */

#include "kernel/jiffies.h"
#include "kernel/sim.h"

#define TASK_RUNNING		0x0000
#define TASK_INTERRUPTIBLE	0x0001
#define TASK_UNINTERRUPTIBLE	0x0002
#define TASK_WAKEKILL		0x0100
#define TASK_KILLABLE		(TASK_WAKEKILL | TASK_UNINTERRUPTIBLE)
#define TASK_NORMAL		(TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE)

#define TASK_COMM_LEN		16
#define MAX_SCHEDULE_TIMEOUT	LONG_MAX

#define PF_KTHREAD		0x00200000	/* made by kthread_create() */

struct completion;
struct inode;

struct folio_frames;

struct task_struct {
	int __state;			/* TASK_*; atomic accesses only */
	unsigned int flags;		/* PF_* */
	pid_t pid;			/* the thread's tid, for traces */
	char comm[TASK_COMM_LEN];
	int usage;			/* references (get/put_task_struct) */

	/* the sleep handshake, see schedule() */
	pthread_mutex_t pi_lock;
	pthread_cond_t sleep_cond;	/* on CLOCK_MONOTONIC */
	bool sleeping;			/* in schedule(): pi_lock+clock lock */
	/* schedule_timeout() on the real clock waits for its deadline
	 * itself; clock_changed (pi_lock) says the clock switched under it
	 * and the wait must be redone (engine/kernel/wait.c) */
	bool clock_changed;
	/*
	 * uflush: the timer flags schedule_timeout() gives its on-stack
	 * timer, TIMER_UF_WHEEL while the thread runs code of a cache whose
	 * kernel has 4.8+'s timer wheel (set by the flusher for its life,
	 * by the dirty throttle for its call: cache_timer_flags()).
	 */
	unsigned int timer_flags;
	/*
	 * uflush: the frames of the new folio this thread is writing, which
	 * page_cache_alloc() hands out first (mm/filemap.c write_folio)
	 */
	struct folio_frames *folio_frames;

	/* kthreads only (engine/kernel/kthread.c) */
	pthread_t thread;
	int (*threadfn)(void *data);
	void *data;
	int exit_code;
	bool should_stop;		/* atomic */
	struct completion *started;	/* creator waits for the thread */

	/*
	 * The dirty throttle (mm/page-writeback.c), fields of the kernel's
	 * task_struct: pages dirtied since the last balance_dirty_pages(),
	 * the count at which to call it next (3.2+), and the start of the
	 * current dirty-and-pause period (3.3+, mainline's think time).
	 */
	int nr_dirtied;
	int nr_dirtied_pause;
	unsigned long dirty_paused_when;
	/* uflush: the per-CPU bdp_ratelimits counter, per thread here */
	int bdp_ratelimits;
	bool bdp_ready;			/* fields set as fork() does */
	/*
	 * uflush: BDP_* flags for the throttle calls made on this thread's
	 * behalf by the write in progress (the kernel passes them as an
	 * argument from the kiocb's IOCB_NOWAIT), and when a non-blocking
	 * writer told "-EAGAIN, pause" may write again (0: not told).
	 */
	unsigned int bdp_flags;
	unsigned long bdp_resume;
	bool bdp_owed;			/* bdp_resume is set */
	/*
	 * uflush: the inode whose embedder callback (uf_file_ops) this
	 * thread is running, NULL if none: a close of that file, its device
	 * or its cache from there would wait for itself (-EDEADLK).
	 */
	struct inode *in_file_op;
	/* uflush: its task in a deterministic world (kernel/sim.c) */
	struct uf_sim_task *sim;
};

/* The calling thread's task, created on first use. */
struct task_struct *get_current(void);
#define current		get_current()

static inline bool task_is_running(struct task_struct *p)
{
	return __atomic_load_n(&p->__state, __ATOMIC_SEQ_CST) == TASK_RUNNING;
}

/*
 * Set the state, then a full barrier: the checks that follow cannot be
 * reordered before it, so a waker that changes the condition after the
 * check sees the new state and wakes us.
 */
#define set_current_state(state_value)					\
	__atomic_store_n(&current->__state, (state_value), __ATOMIC_SEQ_CST)

/* Without the barrier: for going back to TASK_RUNNING, or under a lock. */
#define __set_current_state(state_value)				\
	__atomic_store_n(&current->__state, (state_value), __ATOMIC_RELAXED)

/*
 * Sleep until woken if the state is not TASK_RUNNING; return at once if it
 * is.  Returns in TASK_RUNNING.
 */
void schedule(void);

/*
 * As schedule(), but also woken when @timeout jiffies have passed.  Returns
 * 0 if the timeout expired, else the jiffies left.  MAX_SCHEDULE_TIMEOUT
 * sleeps without a timeout (and returns it); a negative timeout is an error
 * (returns 0).  In TASK_RUNNING it does not sleep and returns @timeout
 * minus the ticks that passed (all of it, on the virtual clock).
 */
long schedule_timeout(long timeout);
long schedule_timeout_interruptible(long timeout);
long schedule_timeout_uninterruptible(long timeout);
long schedule_timeout_killable(long timeout);

/* I/O waits: same sleeps (no iowait accounting). */
static inline void io_schedule(void)
{
	schedule();
}

static inline long io_schedule_timeout(long timeout)
{
	return schedule_timeout(timeout);
}

/*
 * Threads are preempted by the OS; nothing to yield voluntarily.  In a
 * world (kernel/sim.c) a task that has used up its tick gives way here.
 */
static inline void cond_resched(void)
{
	if (uf_in_sim())
		uf_sim_cond_resched();
}

/*
 * sched_yield(): inside a world, give the CPU to another runnable task
 * (a spin waiting for another task must let it run).
 */
static inline void uf_sched_yield(void)
{
	if (uf_in_sim())
		uf_sim_yield();
	else
		sched_yield();
}

/*
 * A lock break (cond_resched_lock()'s role): off a world, yield so that
 * a waiter for the lock just dropped gets it (a pthread mutex is not
 * fair); in a world nobody can be spinning on it: a preemption point.
 */
static inline void uf_lock_break(void)
{
	if (uf_in_sim())
		uf_sim_cond_resched();
	else
		sched_yield();
}

/*
 * Make @p TASK_RUNNING if its state is in @state, and end its sleep if it
 * sleeps.  1 if the state changed, 0 if @p was already running (or in a
 * state @state does not cover).
 */
int wake_up_state(struct task_struct *p, unsigned int state);
int wake_up_process(struct task_struct *p);

static inline pid_t task_pid_nr(const struct task_struct *p)
{
	return p->pid;
}

static inline void get_task_struct(struct task_struct *p)
{
	__atomic_add_fetch(&p->usage, 1, __ATOMIC_RELAXED);
}

void put_task_struct(struct task_struct *p);

/*
 * For tests: block until @p sleeps in schedule(); 0, or -ETIMEDOUT after
 * @real_timeout_ms of real time.  With several threads about, this is the
 * precise form of uf_clock_wait_sleepers().
 */
int uf_wait_task_sleeping(struct task_struct *p, unsigned int real_timeout_ms);

/* ---- engine-internal (kthread.c) ---- */

/* A new task named @comm, one reference, not bound to any thread. */
struct task_struct *uf_task_alloc(const char *comm);

/* Make @p the calling thread's current; the thread owns one reference,
 * dropped when it exits. */
void uf_task_bind(struct task_struct *p);

#endif /* UF_SCHED_H */
