// SPDX-License-Identifier: MIT
/*
 * engine/kernel/completion.c - complete() / wait_for_completion(), after the
 * kernel's kernel/sched/completion.c.
 *
 * Waiters queue exclusively on x->wait and are woken one per complete();
 * the count in x->done, guarded by the queue's lock, is what they consume,
 * so a wakeup never gets lost or counted twice.
 */
#include <limits.h>

#include "kernel/completion.h"

void complete(struct completion *x)
{
	spin_lock(&x->wait.lock);
	if (x->done != UINT_MAX)
		x->done++;
	__wake_up_locked(&x->wait, TASK_NORMAL, 1);
	spin_unlock(&x->wait.lock);
}

void complete_all(struct completion *x)
{
	spin_lock(&x->wait.lock);
	x->done = UINT_MAX;
	__wake_up_locked(&x->wait, TASK_NORMAL, 0);
	spin_unlock(&x->wait.lock);
}

/*
 * With x->wait.lock held: sleep until done or @timeout jiffies passed.
 * Returns the jiffies left (0: timed out), having consumed one done if
 * there was one.
 */
static long do_wait_for_common(struct completion *x, long timeout, int state)
{
	struct wait_queue_entry wait;

	if (!x->done) {
		init_waitqueue_entry(&wait, current);
		wait.flags |= WQ_FLAG_EXCLUSIVE;
		__add_wait_queue_entry_tail(&x->wait, &wait);
		do {
			__set_current_state(state);
			spin_unlock(&x->wait.lock);
			timeout = schedule_timeout(timeout);
			spin_lock(&x->wait.lock);
		} while (!x->done && timeout);
		__remove_wait_queue(&x->wait, &wait);
		if (!x->done)
			return timeout;
	}
	if (x->done != UINT_MAX)
		x->done--;
	return timeout ? timeout : 1;
}

static long wait_for_common(struct completion *x, long timeout, int state)
{
	spin_lock(&x->wait.lock);
	timeout = do_wait_for_common(x, timeout, state);
	spin_unlock(&x->wait.lock);
	return timeout;
}

void wait_for_completion(struct completion *x)
{
	wait_for_common(x, MAX_SCHEDULE_TIMEOUT, TASK_UNINTERRUPTIBLE);
}

unsigned long wait_for_completion_timeout(struct completion *x,
					  unsigned long timeout)
{
	long t = timeout > (unsigned long)MAX_SCHEDULE_TIMEOUT ?
		 MAX_SCHEDULE_TIMEOUT : (long)timeout;

	return (unsigned long)wait_for_common(x, t, TASK_UNINTERRUPTIBLE);
}

bool try_wait_for_completion(struct completion *x)
{
	bool ret = false;

	spin_lock(&x->wait.lock);
	if (x->done) {
		if (x->done != UINT_MAX)
			x->done--;
		ret = true;
	}
	spin_unlock(&x->wait.lock);
	return ret;
}

bool completion_done(struct completion *x)
{
	bool done;

	spin_lock(&x->wait.lock);
	done = x->done != 0;
	spin_unlock(&x->wait.lock);
	return done;
}
