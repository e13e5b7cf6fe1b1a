/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/completion.h - completions, as in the kernel's
 * include/linux/completion.h and kernel/sched/completion.c.
 *
 * A completion counts "done" events: complete() adds one and wakes one
 * waiter, wait_for_completion() waits for one and consumes it,
 * complete_all() makes every present and future wait return until
 * reinit_completion().  The writeback code uses them for works whose
 * submitter waits (sync), and kthread_create() for the thread's start.
 * Waits are task sleeps on the active clock (sched.h).
 */
#ifndef UF_COMPLETION_H
#define UF_COMPLETION_H

#include <stdbool.h>

#include "kernel/wait.h"

struct completion {
	unsigned int done;		/* UINT_MAX after complete_all() */
	struct wait_queue_head wait;	/* its lock guards done */
};

#define COMPLETION_INITIALIZER(work)					\
	{ 0, __WAIT_QUEUE_HEAD_INITIALIZER((work).wait) }

#define DECLARE_COMPLETION(work)					\
	struct completion work = COMPLETION_INITIALIZER(work)

#define DECLARE_COMPLETION_ONSTACK(work)	DECLARE_COMPLETION(work)

static inline void init_completion(struct completion *x)
{
	x->done = 0;
	init_waitqueue_head(&x->wait);
}

/* Forget past completions; no one may be waiting. */
static inline void reinit_completion(struct completion *x)
{
	x->done = 0;
}

void complete(struct completion *x);
void complete_all(struct completion *x);

void wait_for_completion(struct completion *x);

/* 0 if @timeout jiffies passed first, else the jiffies left (>= 1). */
unsigned long wait_for_completion_timeout(struct completion *x,
					  unsigned long timeout);

static inline void wait_for_completion_io(struct completion *x)
{
	wait_for_completion(x);
}

static inline unsigned long
wait_for_completion_io_timeout(struct completion *x, unsigned long timeout)
{
	return wait_for_completion_timeout(x, timeout);
}

/* Consume a completion if one is there; never sleeps. */
bool try_wait_for_completion(struct completion *x);

/* Would a wait return at once? */
bool completion_done(struct completion *x);

#endif /* UF_COMPLETION_H */
