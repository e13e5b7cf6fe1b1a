/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/kthread.h - kernel threads, as in the kernel's
 * include/linux/kthread.h and kernel/kthread.c: kthread_create(),
 * kthread_run(), kthread_should_stop(), kthread_stop().
 *
 * The flusher of each device is one, and its main loop is the kernel's:
 * "while (!kthread_should_stop()) { ...; set_current_state(); ...;
 * schedule_timeout(); }".  A kthread is a pthread with a task_struct made
 * before it starts, so the creator can wake it and stop it by pointer.
 *
 * Errors come back ERR_PTR-style, as in the kernel: test the result with
 * IS_ERR() and get the negative errno with PTR_ERR().  Never NULL.
 */
#ifndef UF_KTHREAD_H
#define UF_KTHREAD_H

#include <pthread.h>
#include <stdbool.h>

#include "kernel/sched.h"
#include "kernel/sim.h"

#ifndef UF_ERR_PTR
#define UF_ERR_PTR
/* include/linux/err.h: a pointer in the top 4095 bytes is an errno. */
#define MAX_ERRNO	4095

static inline void *ERR_PTR(long error)
{
	return (void *)error;
}

static inline long PTR_ERR(const void *ptr)
{
	return (long)ptr;
}

static inline bool IS_ERR(const void *ptr)
{
	return (unsigned long)ptr >= (unsigned long)-MAX_ERRNO;
}

static inline bool IS_ERR_OR_NULL(const void *ptr)
{
	return !ptr || IS_ERR(ptr);
}
#endif /* UF_ERR_PTR */

/*
 * A thread that will run @threadfn(@data), named from @namefmt (the task's
 * comm and the thread's name, cut at 15 characters).  It does not start
 * until the first wake_up_process(); if kthread_stop() comes first,
 * @threadfn never runs.  Returns the task, or ERR_PTR(-ENOMEM / -EAGAIN).
 * Every kthread must be reaped with kthread_stop(), even one whose
 * function has returned (like an unjoined pthread, it lingers otherwise).
 */
__attribute__((format(printf, 3, 4)))
struct task_struct *kthread_create(int (*threadfn)(void *data), void *data,
				   const char *namefmt, ...);

/* kthread_create() and start it. */
#define kthread_run(threadfn, data, namefmt, ...) ({			\
	struct task_struct *__k =					\
		kthread_create(threadfn, data, namefmt, ##__VA_ARGS__);	\
	if (!IS_ERR(__k))						\
		wake_up_process(__k);					\
	__k;								\
})

/* In a kthread: has kthread_stop() been called on us?  False elsewhere. */
bool kthread_should_stop(void);

/*
 * Tell @k to stop (kthread_should_stop() becomes true), wake it, wait for
 * it to exit and release it.  Returns @threadfn's result, or -EINTR if it
 * never ran: never woken, or, as in the kernel, stopped right after
 * kthread_run() before it got to run.  @k must not be used afterwards.
 */
int kthread_stop(struct task_struct *k);

/* ---- engine-internal ---- */

/* pthread_create with every signal blocked in the new thread (signals are
 * the application's), named @name.  0 or a positive errno. */
int uf_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg,
		     const char *name);
/* The same, never a world task (the world's own threads). */
int uf_thread_create_raw(pthread_t *thread, void *(*fn)(void *), void *arg,
			 const char *name);

/* pthread_join(); from a world's task, a world block until it exits. */
static inline int uf_thread_join(pthread_t thread)
{
	if (uf_in_sim() && uf_sim_self())
		return uf_sim_thread_join(thread);
	return pthread_join(thread, NULL);
}

#endif /* UF_KTHREAD_H */
