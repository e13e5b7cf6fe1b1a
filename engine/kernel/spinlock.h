/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/spinlock.h - the kernel's spinlock_t for uflush (rw_semaphore:
 * kernel/rwsem.h).
 *
 * In the kernel these locks protect short critical sections that never
 * sleep.  In userspace a spinning lock is wrong (a preempted holder makes the
 * others burn a core), so spinlock_t is a pthread mutex that spins briefly
 * before it sleeps (glibc's adaptive type); the rules of use
 * stay the kernel's: never sleep while holding one, take them in the
 * kernel's order (wb->list_lock, then inode->i_lock).
 * assert_spin_locked() is executable documentation, as in the kernel.
 */
#ifndef UF_SPINLOCK_H
#define UF_SPINLOCK_H

#include <pthread.h>
#include <stdbool.h>

#include "kernel/bug.h"
#include "kernel/sim.h"

typedef struct {
	pthread_mutex_t m;
	pthread_t owner;
	bool held;
} spinlock_t;

/*
 * Adaptive: a contended lock spins a little before sleeping in the futex.
 * The sections are short (list and tree updates), so a waiter usually gets
 * the lock while spinning; a plain mutex put it to sleep and woke it again
 * for each one (tree_lock and lru_lock between the writer, kswapd and the
 * I/O completion thread: a context switch per contended section).
 */
#define __SPIN_LOCK_UNLOCKED { PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP, 0, false }

static inline void spin_lock_init(spinlock_t *l)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&l->m, &a);
	pthread_mutexattr_destroy(&a);
	l->held = false;
}

/*
 * Contended: in a world (kernel/sim.c) only one task runs, so the holder
 * is a task that slept or was preempted holding the lock (the kernel's
 * "scheduling while atomic"), and waiting would stop the world: fatal
 * there.  The check costs nothing on the uncontended path.
 */
static inline void spin_lock_contended(spinlock_t *l)
{
	if (uf_in_sim())
		uf_sim_spin_contended(&l->m);
	pthread_mutex_lock(&l->m);
}

static inline void spin_lock(spinlock_t *l)
{
	if (__builtin_expect(pthread_mutex_trylock(&l->m) != 0, 0))
		spin_lock_contended(l);
	l->owner = pthread_self();
	__atomic_store_n(&l->held, true, __ATOMIC_RELAXED);
}

static inline bool spin_trylock(spinlock_t *l)
{
	if (pthread_mutex_trylock(&l->m))
		return false;
	l->owner = pthread_self();
	__atomic_store_n(&l->held, true, __ATOMIC_RELAXED);
	return true;
}

static inline void spin_unlock(spinlock_t *l)
{
	__atomic_store_n(&l->held, false, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->m);
}

/* True if the calling thread holds l. */
static inline bool spin_is_locked_by_me(spinlock_t *l)
{
	return __atomic_load_n(&l->held, __ATOMIC_RELAXED) &&
	       pthread_equal(l->owner, pthread_self());
}

#define assert_spin_locked(l)	WARN_ON_ONCE(!spin_is_locked_by_me(l))

#include "kernel/rwsem.h"

#endif /* UF_SPINLOCK_H */
