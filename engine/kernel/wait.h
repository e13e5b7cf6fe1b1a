/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/wait.h - wait queues, as in the kernel's include/linux/wait.h and
 * kernel/sched/wait.c: wait_queue_head_t, DEFINE_WAIT, prepare_to_wait(),
 * finish_wait(), wake_up(), waitqueue_active() and the wait_event()
 * macros.  Tasks, states and schedule() are in sched.h.
 *
 * Writers in balance_dirty_pages(), reclaimers in reclaim_wait() and sync
 * callers waiting for I_SYNC all sleep on wait queues and are woken by
 * completions, so these follow the kernel's protocol exactly:
 *
 *	DEFINE_WAIT(wait);
 *	for (;;) {
 *		prepare_to_wait(&wq, &wait, TASK_UNINTERRUPTIBLE);
 *		if (condition)
 *			break;
 *		schedule();
 *	}
 *	finish_wait(&wq, &wait);
 *
 * prepare_to_wait() queues the entry and sets the state under the queue's
 * lock, so a waker that sets the condition and then calls wake_up() either
 * ran before (and the check sees the condition) or finds the entry.
 *
 * Differences from the kernel: the queue lock is a spinlock_t, i.e. a
 * mutex (engine/kernel/spinlock.h); waitqueue_active() takes it, so it is exact
 * and needs no barrier from the caller.
 */
#ifndef UF_WAIT_H
#define UF_WAIT_H

#include <stdbool.h>

#include "lib/list.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"

struct wait_queue_entry;

/* Called under the queue lock; returns nonzero if it woke the task. */
typedef int (*wait_queue_func_t)(struct wait_queue_entry *wq_entry,
				 unsigned int mode, int flags, void *key);

#define WQ_FLAG_EXCLUSIVE	0x01

struct wait_queue_entry {
	unsigned int flags;
	void *private;			/* the task */
	wait_queue_func_t func;
	struct list_head entry;
};

struct wait_queue_head {
	spinlock_t lock;
	struct list_head head;
};

typedef struct wait_queue_entry wait_queue_entry_t;
typedef struct wait_queue_head wait_queue_head_t;

int default_wake_function(struct wait_queue_entry *wq_entry,
			  unsigned int mode, int flags, void *key);
/* As default_wake_function, and dequeue the entry if it woke the task. */
int autoremove_wake_function(struct wait_queue_entry *wq_entry,
			     unsigned int mode, int flags, void *key);

#define __WAIT_QUEUE_HEAD_INITIALIZER(name) {				\
	.lock = __SPIN_LOCK_UNLOCKED,					\
	.head = LIST_HEAD_INIT((name).head),				\
}

#define DECLARE_WAIT_QUEUE_HEAD(name)					\
	struct wait_queue_head name = __WAIT_QUEUE_HEAD_INITIALIZER(name)

void init_waitqueue_head(struct wait_queue_head *wq_head);

#define DEFINE_WAIT_FUNC(name, function)				\
	struct wait_queue_entry name = {				\
		.private = current,					\
		.func = function,					\
		.entry = LIST_HEAD_INIT((name).entry),			\
	}

#define DEFINE_WAIT(name)	DEFINE_WAIT_FUNC(name, autoremove_wake_function)

static inline void init_waitqueue_entry(struct wait_queue_entry *wq_entry,
					struct task_struct *p)
{
	wq_entry->flags = 0;
	wq_entry->private = p;
	wq_entry->func = default_wake_function;
	INIT_LIST_HEAD(&wq_entry->entry);
}

static inline void init_wait(struct wait_queue_entry *wq_entry)
{
	init_waitqueue_entry(wq_entry, current);
	wq_entry->func = autoremove_wake_function;
}

/* Queue manipulation with wq_head->lock held. */
static inline void __add_wait_queue(struct wait_queue_head *wq_head,
				    struct wait_queue_entry *wq_entry)
{
	list_add(&wq_entry->entry, &wq_head->head);
}

static inline void
__add_wait_queue_entry_tail(struct wait_queue_head *wq_head,
			    struct wait_queue_entry *wq_entry)
{
	list_add_tail(&wq_entry->entry, &wq_head->head);
}

static inline void __remove_wait_queue(struct wait_queue_head *wq_head,
				       struct wait_queue_entry *wq_entry)
{
	(void)wq_head;
	list_del_init(&wq_entry->entry);
}

/* The same, taking the lock.  Exclusive entries go to the tail, so that
 * wake_up() reaches all non-exclusive waiters before the first one. */
void add_wait_queue(struct wait_queue_head *wq_head,
		    struct wait_queue_entry *wq_entry);
void add_wait_queue_exclusive(struct wait_queue_head *wq_head,
			      struct wait_queue_entry *wq_entry);
void remove_wait_queue(struct wait_queue_head *wq_head,
		       struct wait_queue_entry *wq_entry);

/* Queue @wq_entry (if not queued) and set the task state, atomically with
 * respect to wake_up(). */
void prepare_to_wait(struct wait_queue_head *wq_head,
		     struct wait_queue_entry *wq_entry, int state);
void prepare_to_wait_exclusive(struct wait_queue_head *wq_head,
			       struct wait_queue_entry *wq_entry, int state);
/* Back to TASK_RUNNING, and dequeue @wq_entry if a waker has not. */
void finish_wait(struct wait_queue_head *wq_head,
		 struct wait_queue_entry *wq_entry);

/*
 * Wake the waiters whose state is in @mode: all non-exclusive ones and
 * @nr_exclusive exclusive ones (0 = all).  __wake_up_locked() is for
 * callers that hold wq_head->lock.
 */
void __wake_up(struct wait_queue_head *wq_head, unsigned int mode,
	       int nr_exclusive, void *key);
void __wake_up_locked(struct wait_queue_head *wq_head, unsigned int mode,
		      int nr_exclusive);

#define wake_up(x)			__wake_up(x, TASK_NORMAL, 1, NULL)
#define wake_up_nr(x, nr)		__wake_up(x, TASK_NORMAL, nr, NULL)
#define wake_up_all(x)			__wake_up(x, TASK_NORMAL, 0, NULL)
#define wake_up_interruptible(x)	\
	__wake_up(x, TASK_INTERRUPTIBLE, 1, NULL)
#define wake_up_interruptible_all(x)	\
	__wake_up(x, TASK_INTERRUPTIBLE, 0, NULL)

/* Anyone waiting?  Exact: takes the queue lock. */
bool waitqueue_active(struct wait_queue_head *wq_head);
#define wq_has_sleeper(wq_head)		waitqueue_active(wq_head)

/*
 * The wait_event family.  @condition is evaluated first, and again after
 * every wakeup, each time after the task is queued in @state.  The timeout
 * forms return 0 if @timeout jiffies passed with @condition still false,
 * else the jiffies left (at least 1).  Without signals, the interruptible
 * and killable forms never return -ERESTARTSYS.
 */
#define __uf_wait_event(wq_head, condition, state, timeout) ({		\
	long __uf_ret = (timeout);					\
	bool __uf_cond;							\
	DEFINE_WAIT(__uf_wait);						\
									\
	for (;;) {							\
		prepare_to_wait(&(wq_head), &__uf_wait, (state));	\
		__uf_cond = (condition);				\
		if (__uf_cond || !__uf_ret)				\
			break;						\
		__uf_ret = schedule_timeout(__uf_ret);			\
	}								\
	finish_wait(&(wq_head), &__uf_wait);				\
	if (__uf_cond && !__uf_ret)					\
		__uf_ret = 1;						\
	__uf_ret;							\
})

#define __uf_wait_event_fast(wq_head, condition, state, timeout) ({	\
	long __uf_t = (timeout);					\
	if (condition)							\
		__uf_t = __uf_t ? __uf_t : 1;				\
	else								\
		__uf_t = __uf_wait_event(wq_head, condition, state,	\
					 __uf_t);			\
	__uf_t;								\
})

#define wait_event(wq_head, condition)					\
	((void)__uf_wait_event_fast(wq_head, condition,		\
				    TASK_UNINTERRUPTIBLE,		\
				    MAX_SCHEDULE_TIMEOUT))

#define wait_event_timeout(wq_head, condition, timeout)			\
	__uf_wait_event_fast(wq_head, condition, TASK_UNINTERRUPTIBLE,	\
			     timeout)

/* No signals here: these waits end only on @condition, and return 0. */
#define __uf_wait_event_nosig(wq_head, condition, state) ({		\
	__uf_wait_event_fast(wq_head, condition, state,		\
			     MAX_SCHEDULE_TIMEOUT);			\
	0;								\
})

#define wait_event_interruptible(wq_head, condition)			\
	__uf_wait_event_nosig(wq_head, condition, TASK_INTERRUPTIBLE)

#define wait_event_interruptible_timeout(wq_head, condition, timeout)	\
	__uf_wait_event_fast(wq_head, condition, TASK_INTERRUPTIBLE,	\
			     timeout)

#define wait_event_killable(wq_head, condition)			\
	__uf_wait_event_nosig(wq_head, condition, TASK_KILLABLE)

#endif /* UF_WAIT_H */
