/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/rwsem.h - the kernel's rw_semaphore (include/linux/rwsem.h),
 * used for a superblock's s_umount.
 *
 * A semaphore, not a pthread rwlock: like the kernel's, it has no owner,
 * so a hold taken by one thread may be released by another (uf_dev_close
 * drops a uf_dev_hold_umount() taken by whichever thread took it; the
 * kernel's up_read_non_owner() case).  Unlocking a pthread rwlock from a
 * thread that does not hold it is undefined.  Readers are preferred, as
 * glibc's default rwlock did here before: a reader holding s_umount may
 * take it again for reading while a writer waits.  Its waits go through
 * the world's scheduler inside one (kernel/sim.h, uf_cond_wait).
 */
#ifndef UF_RWSEM_H
#define UF_RWSEM_H

#include <pthread.h>
#include <stdbool.h>

#include "kernel/sim.h"

struct rw_semaphore {
	pthread_mutex_t lock;
	pthread_cond_t wait;
	int readers;		/* lock: holders for reading */
	bool writer;		/* lock: held for writing */
};

static inline void init_rwsem(struct rw_semaphore *s)
{
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wait, NULL);
	s->readers = 0;
	s->writer = false;
}

static inline void down_read(struct rw_semaphore *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->writer)
		uf_cond_wait(&s->wait, &s->lock);
	s->readers++;
	pthread_mutex_unlock(&s->lock);
}

static inline bool down_read_trylock(struct rw_semaphore *s)
{
	bool ok;

	pthread_mutex_lock(&s->lock);
	ok = !s->writer;
	if (ok)
		s->readers++;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static inline void up_read(struct rw_semaphore *s)
{
	pthread_mutex_lock(&s->lock);
	if (!--s->readers)
		uf_cond_broadcast(&s->wait);
	pthread_mutex_unlock(&s->lock);
}

static inline void down_write(struct rw_semaphore *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->writer || s->readers)
		uf_cond_wait(&s->wait, &s->lock);
	s->writer = true;
	pthread_mutex_unlock(&s->lock);
}

static inline void up_write(struct rw_semaphore *s)
{
	pthread_mutex_lock(&s->lock);
	s->writer = false;
	uf_cond_broadcast(&s->wait);
	pthread_mutex_unlock(&s->lock);
}

#endif /* UF_RWSEM_H */
