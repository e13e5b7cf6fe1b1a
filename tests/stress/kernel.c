// SPDX-License-Identifier: MIT
/*
 * tests/stress/kernel.c - the engine's kernel layer under threads: the page
 * lock's exclusive sleepers (engine/mm/filemap.c __lock_page over
 * engine/kernel/wait.c), and the queue walk itself.
 *
 * Description: __lock_page() loops on prepare_to_wait_exclusive(), and an
 * entry that was not woken (the lock looked free, but another thread took
 * it first) stays on the hashed wait queue into the next turn, while an
 * unlock_page() of any page in that bucket walks the queue and reads each
 * entry's flags.  kernel_wait_entry_requeued_under_walk makes that
 * interleaving on every turn, so TSan sees any write to a queued entry
 * that is not under the queue's lock (it found one in 6 of 6 runs before
 * wait.c set the exclusive flag under the lock).  The lock_page scenario
 * is the same path as the library takes it, where the window is narrow;
 * its plain counters also catch two holders of one page lock.  No device:
 * bare struct pages, as the criterion unit tests build them.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "fs/writeback.h"
#include "kernel/sched.h"
#include "kernel/wait.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "stress.h"

#define KL_THREADS	4
#define KL_PAGES	513	/* page 0, and 512 that fill every bucket */

/*
 * Threads 0 and 1 fight for page 0, so a sleeper often finds the lock free
 * and loses it again, preparing anew with its entry still queued.  Threads
 * 2 and 3 lock and unlock every other page in turn: 512 pages over the 256
 * buckets, so some of their unlocks walk page 0's bucket.
 */
struct kl_shared {
	struct page pages[KL_PAGES];
	unsigned long held[KL_PAGES];	/* plain: only the lock holder */
	unsigned long count[KL_PAGES];	/* plain: only the lock holder */
	unsigned int rounds;
	struct st_err err;
};

struct kl_worker {
	struct kl_shared *sh;
	unsigned int id;
	pthread_t tid;
};

static unsigned int kl_page_of(const struct kl_worker *w, unsigned int i)
{
	if (w->id < 2)
		return 0;
	return 1 + (i * 2 + w->id - 2) % (KL_PAGES - 1);
}

static void *kl_worker_fn(void *arg)
{
	struct kl_worker *w = arg;
	struct kl_shared *sh = w->sh;
	unsigned int i, p;

	for (i = 0; i < sh->rounds && !st_err_is_set(&sh->err); i++) {
		p = kl_page_of(w, i);
		lock_page(&sh->pages[p]);
		if (sh->held[p])
			st_err_set(&sh->err, "page %u locked by two threads", p);
		sh->held[p] = 1;
		sh->count[p]++;
		/* hold page 0 a while, so its fighters sleep and hand off */
		if (!p && !(i % 8))
			sched_yield();
		sh->held[p] = 0;
		unlock_page(&sh->pages[p]);
	}
	return NULL;
}

static enum st_result kernel_lock_page_exclusive_waiters(struct st_ctx *ctx)
{
	static struct kl_shared sh;
	struct kl_worker w[KL_THREADS];
	unsigned long total = 0;
	unsigned int i;

	memset(&sh, 0, sizeof(sh));
	st_err_init(&sh.err);
	sh.rounds = (unsigned int)(20000 * ctx->scale) + 1;
	for (i = 0; i < KL_THREADS; i++) {
		w[i].sh = &sh;
		w[i].id = i;
		if (pthread_create(&w[i].tid, NULL, kl_worker_fn, &w[i]))
			return st_fail(ctx, "pthread_create");
	}
	for (i = 0; i < KL_THREADS; i++)
		pthread_join(w[i].tid, NULL);
	if (st_err_is_set(&sh.err))
		return st_err_result(&sh.err, ctx);
	for (i = 0; i < KL_PAGES; i++) {
		if (PageLocked(&sh.pages[i]))
			return st_fail(ctx, "page %u left locked", i);
		total += sh.count[i];
	}
	if (total != (unsigned long)KL_THREADS * sh.rounds)
		return st_fail(ctx, "%lu lock/unlock pairs counted, %lu made",
			       total, (unsigned long)KL_THREADS * sh.rounds);
	return ST_PASS;
}

/* ---- one queue, an entry re-prepared while wakers walk past it ---- */

struct kw_shared {
	struct wait_queue_head wq;
	unsigned int rounds;
	int stop;			/* atomic */
	unsigned long walks;		/* atomic */
};

/* A key that is never this entry's: the entry stays queued, as a
 * lock_page() sleeper does while unlock_page() of another page in its
 * bucket walks the queue. */
static int kw_other_key(struct wait_queue_entry *wq_entry, unsigned int mode,
			int flags, void *key)
{
	(void)wq_entry;
	(void)mode;
	(void)flags;
	(void)key;
	return 0;
}

static void *kw_waker_fn(void *arg)
{
	struct kw_shared *sh = arg;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		wake_up(&sh->wq);
		__atomic_fetch_add(&sh->walks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *kw_waiter_fn(void *arg)
{
	struct kw_shared *sh = arg;
	struct wait_queue_entry e;
	unsigned int i;

	init_wait(&e);
	e.func = kw_other_key;
	/* each turn as __lock_page()'s loop: prepare again without having
	 * slept, the entry still on the queue */
	for (i = 0; i < sh->rounds; i++) {
		if (i & 1)
			prepare_to_wait_exclusive(&sh->wq, &e,
						  TASK_UNINTERRUPTIBLE);
		else
			prepare_to_wait(&sh->wq, &e, TASK_UNINTERRUPTIBLE);
		__set_current_state(TASK_RUNNING);
	}
	finish_wait(&sh->wq, &e);
	return NULL;
}

static enum st_result kernel_wait_entry_requeued_under_walk(struct st_ctx *ctx)
{
	static struct kw_shared sh;
	pthread_t waiters[2], waker;
	unsigned int i;

	memset(&sh, 0, sizeof(sh));
	init_waitqueue_head(&sh.wq);
	sh.rounds = (unsigned int)(20000 * ctx->scale) + 1;
	if (pthread_create(&waker, NULL, kw_waker_fn, &sh))
		return st_fail(ctx, "pthread_create");
	for (i = 0; i < 2; i++)
		if (pthread_create(&waiters[i], NULL, kw_waiter_fn, &sh))
			return st_fail(ctx, "pthread_create");
	for (i = 0; i < 2; i++)
		pthread_join(waiters[i], NULL);
	__atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
	pthread_join(waker, NULL);
	if (waitqueue_active(&sh.wq))
		return st_fail(ctx, "an entry left on the queue after finish_wait");
	if (!__atomic_load_n(&sh.walks, __ATOMIC_RELAXED))
		return st_fail(ctx, "the waker never walked the queue");
	return ST_PASS;
}

const struct st_scenario st_kernel_scenarios[] = {
	{ "kernel_wait_entry_requeued_under_walk",
	  "an entry re-prepared (exclusive and not) while wakers walk it",
	  kernel_wait_entry_requeued_under_walk },
	{ "kernel_lock_page_exclusive_waiters",
	  "2 threads fight for a page, 2 unlock pages of every bucket",
	  kernel_lock_page_exclusive_waiters },
	{ NULL, NULL, NULL },
};
