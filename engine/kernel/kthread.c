// SPDX-License-Identifier: MIT
/*
 * engine/kernel/kthread.c - kernel threads on pthreads, after the kernel's
 * kernel/kthread.c (kthread_create_on_node, kthread, kthread_stop).
 *
 * As in the kernel, a new kthread first parks itself in
 * TASK_UNINTERRUPTIBLE and tells its creator it exists; the creator gets
 * the task pointer back and starts the thread with wake_up_process().  A
 * stop request is a flag plus a wakeup, so a thread that tests
 * kthread_should_stop() after set_current_state() cannot miss it.
 *
 * References: the creator holds one (dropped by kthread_stop()), the
 * thread one (dropped when it exits, by the task key's destructor).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "kernel/bug.h"
#include "kernel/completion.h"
#include "kernel/kthread.h"

int uf_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg,
		     const char *name)
{
	/* inside a world, the engine's threads are its tasks */
	if (uf_in_sim() && uf_sim_self())
		return uf_sim_thread_create(thread, fn, arg, name);
	return uf_thread_create_raw(thread, fn, arg, name);
}

int uf_thread_create_raw(pthread_t *thread, void *(*fn)(void *), void *arg,
			 const char *name)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		pthread_setname_np(*thread, name);
	return err;
}

static void *kthread(void *arg)
{
	struct task_struct *self = arg;
	int ret = -EINTR;

	uf_task_bind(self);
	__set_current_state(TASK_UNINTERRUPTIBLE);
	complete(self->started);
	schedule();
	if (!kthread_should_stop())
		ret = self->threadfn(self->data);
	self->exit_code = ret;
	return NULL;
}

struct task_struct *kthread_create(int (*threadfn)(void *data), void *data,
				   const char *namefmt, ...)
{
	DECLARE_COMPLETION_ONSTACK(started);
	char comm[TASK_COMM_LEN];
	struct task_struct *p;
	va_list ap;
	int err;

	va_start(ap, namefmt);
	vsnprintf(comm, sizeof(comm), namefmt, ap);
	va_end(ap);
	p = uf_task_alloc(comm);
	if (!p)
		return ERR_PTR(-ENOMEM);
	p->flags |= PF_KTHREAD;
	p->threadfn = threadfn;
	p->data = data;
	p->started = &started;
	get_task_struct(p);		/* the thread's reference */
	err = uf_thread_create(&p->thread, kthread, p, comm);
	if (err) {
		put_task_struct(p);
		put_task_struct(p);
		return ERR_PTR(-err);
	}
	wait_for_completion(&started);
	p->started = NULL;
	return p;
}

bool kthread_should_stop(void)
{
	struct task_struct *p = current;

	return (p->flags & PF_KTHREAD) &&
	       __atomic_load_n(&p->should_stop, __ATOMIC_SEQ_CST);
}

int kthread_stop(struct task_struct *k)
{
	int ret;

	if (WARN_ON(!(k->flags & PF_KTHREAD)))
		return -EINVAL;
	__atomic_store_n(&k->should_stop, true, __ATOMIC_SEQ_CST);
	wake_up_process(k);
	uf_thread_join(k->thread);
	ret = k->exit_code;
	put_task_struct(k);
	return ret;
}
