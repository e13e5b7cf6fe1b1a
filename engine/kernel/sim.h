/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/sim.h - the deterministic world's scheduler (issue 19):
 * what kernel/sched/core.c does for one CPU, over pthreads.  The public
 * side is uf_sim_run() and friends in include/uflush.h ("Simulation").
 *
 * Inside a world every engine thread is a task of the world and exactly
 * one of them runs at a time: it holds the baton until it blocks
 * (schedule() in a sleeping state, a condition wait routed here, a join,
 * a virtual sleep) or is preempted at a charge point, and then hands it
 * to a runnable task picked by the world's seeded PRNG.  When none is
 * runnable the virtual clock jumps to the next event (a timer, a timed
 * wait's deadline) and fires it.
 *
 * Off a world, every hook below is one predictable branch on uf_sim_world
 * (uf_in_sim()) and then the real-clock code as before.
 */
#ifndef UF_KERNEL_SIM_H
#define UF_KERNEL_SIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* True from the start of a world to its end (or forever, if it failed). */
extern bool uf_sim_world;

static inline bool uf_in_sim(void)
{
	return __builtin_expect(__atomic_load_n(&uf_sim_world,
						__ATOMIC_RELAXED), 0);
}

struct task_struct;
struct uf_sim_task;

/* schedule() inside a world: block @current if it is not TASK_RUNNING. */
void uf_sim_schedule(void);
/* @p was made TASK_RUNNING: put its world task on the run queue. */
void uf_sim_wake(struct task_struct *p);
/* The calling thread's world task, NULL if it is not one. */
struct uf_sim_task *uf_sim_self(void);
/* uf_task_bind() inside a world: @p is the calling task's task_struct;
 * returns its virtual pid. */
pid_t uf_sim_bind(struct task_struct *p);
/* The name the world gave the calling thread, or NULL. */
const char *uf_sim_self_name(void);

/* A world task found spinlock @m taken: by a task that is not running,
 * unless a thread outside the world lets go soon.  Aborts otherwise. */
void uf_sim_spin_contended(pthread_mutex_t *m);

/* Give up the CPU but stay runnable (sched_yield). */
void uf_sim_yield(void);
/* The same if the task has run its tick (cond_resched). */
void uf_sim_cond_resched(void);

/*
 * A pthread condition wait as a world block: @m is released, the task
 * blocks until uf_sim_cond_wake(@c) or, if @until_ns, until the virtual
 * clock reaches it (ETIMEDOUT).  0 or ETIMEDOUT, as pthread's.
 */
int uf_sim_cond_wait(pthread_cond_t *c, pthread_mutex_t *m,
		     uint64_t until_ns);
void uf_sim_cond_wake(const void *c, bool all);
/* pthread_mutex_lock() as a world block while another task holds @m. */
void uf_sim_mutex_lock(pthread_mutex_t *m);

/* The engine's condition waits, routed through the world inside one. */
static inline int uf_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (uf_in_sim() && uf_sim_self())
		return uf_sim_cond_wait(c, m, 0);
	return pthread_cond_wait(c, m);
}

static inline void uf_cond_signal(pthread_cond_t *c)
{
	if (uf_in_sim())
		uf_sim_cond_wake(c, false);
	pthread_cond_signal(c);
}

static inline void uf_cond_broadcast(pthread_cond_t *c)
{
	if (uf_in_sim())
		uf_sim_cond_wake(c, true);
	pthread_cond_broadcast(c);
}

/*
 * A sleeping lock (the kernel's struct mutex role: held across sleeps,
 * e.g. a device's files_lock across a file's writeback).  In a world a
 * task that finds it taken blocks in the world until it is released;
 * a plain pthread_mutex_lock() would block the thread holding the baton.
 */
static inline void uf_mutex_lock(pthread_mutex_t *m)
{
	if (uf_in_sim() && uf_sim_self())
		uf_sim_mutex_lock(m);
	else
		pthread_mutex_lock(m);
}

static inline void uf_mutex_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	if (uf_in_sim())
		uf_sim_cond_wake(m, false);
}

/* Virtual nanoseconds (uf_now_ns() inside a world). */
uint64_t uf_sim_now_ns(void);

/* uf_thread_create() inside a world: the new thread is a world task,
 * runnable, which runs @fn only when picked.  0 or a positive errno. */
int uf_sim_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg,
			 const char *name);
/* pthread_join() of a world thread from a world task: blocks in the world
 * until it exits.  0 or a positive errno. */
int uf_sim_thread_join(pthread_t thread);

/*
 * A callback at virtual instant @at_ns of the running world (a sim
 * device's power cut, io/sim.c): the clock stops at exactly @at_ns for
 * it, whether it jumps there (nothing runnable) or a task's charged CPU
 * crosses it (uf_sim_charge_cost).  @fn runs without the world's lock,
 * as a timer callback does, and must not block.  Events die with their
 * world.  -EPERM not a task of a running world, -EINVAL NULL fn or
 * @at_ns before now, -ENOSPC 64 pending.
 */
int uf_sim_event_at(uint64_t at_ns, void (*fn)(void *), void *arg);
/* Drop the pending events of (@fn, @arg); anywhere, any time. */
void uf_sim_event_cancel(void (*fn)(void *), void *arg);

/* A trace line, for the world's trace hash. */
void uf_sim_trace_line(const char *line, size_t len);

/*
 * The CPU cost model (include/uflush.h, uf_sim_opts): charge points in the
 * engine's hot paths.  Off a world they cost the uf_in_sim() branch.
 */
enum uf_sim_cost {
	UF_SIM_COST_PAGE_COPY,		/* a page's bytes copied */
	UF_SIM_COST_PAGE_OP,		/* a page-cache lookup/insert/state op */
	UF_SIM_COST_REQUEST,		/* a request submitted */
	UF_SIM_COST_INODE,		/* an inode visited by writeback */
	UF_SIM_COST_PAGE_SCAN,		/* a page reclaim scanned */
	UF_SIM_NR_COSTS,
};

void uf_sim_charge_cost(enum uf_sim_cost kind, uint64_t n);

static inline void uf_sim_charge(enum uf_sim_cost kind, uint64_t n)
{
	if (uf_in_sim())
		uf_sim_charge_cost(kind, n);
}

/*
 * Process-wide state of the layers above (a proportion kept for the whole
 * process, say) that every world must start from as a fresh process has
 * it: its owner registers a reset once, when it first sets the state up,
 * and uf_sim_run() calls each reset before the world's first task, with
 * no task of any world running.  Off a world nothing is called.
 */
void uf_sim_register_reset(void (*reset)(void));
/*
 * The same for a thread's exit work (a key destructor's, say): inside a
 * world it would otherwise run when the thread really exits, after its
 * turn, at a moment of real time while the next task runs.  Each
 * registered hook is called by a world task as it ends, in its turn;
 * what it leaves for the thread's real exit must then be nothing.
 */
void uf_sim_register_exit(void (*exit_fn)(void));

/* The world's seed, mixed into the sim devices' PRNGs (0 off a world). */
uint64_t uf_sim_seed_mix(void);

#endif /* UF_KERNEL_SIM_H */
