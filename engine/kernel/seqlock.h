/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/seqlock.h - seqcount_t (the kernel's include/linux/seqlock.h).
 *
 * A writer, already serialised by a lock of its own, makes the count odd
 * while it changes the data and even again after; a reader takes the count,
 * reads without a lock, and retries if the count moved.  uflush uses it for
 * the one place the kernel uses RCU on a hot path: the page cache lookup
 * (filemap.c, find_get_page), whose tree nodes are type-stable so that a
 * reader racing with a writer reads stale nodes, never freed memory.
 *
 * The reader's loads of the protected data must be atomic (relaxed is
 * enough); the ordering comes from here.  TSan has no fences (gcc rejects
 * them under -fsanitize=thread), so its build orders the final check with
 * a read-modify-write instead, which it models.
 */
#ifndef UF_SEQLOCK_H
#define UF_SEQLOCK_H

#include <stdbool.h>

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

typedef struct {
	unsigned int sequence;
} seqcount_t;

static inline void seqcount_init(seqcount_t *s)
{
	__atomic_store_n(&s->sequence, 0, __ATOMIC_RELAXED);
}

/* Wait out a writer in progress; the count to pass to the retry check. */
static inline unsigned int read_seqcount_begin(const seqcount_t *s)
{
	unsigned int seq;

	while ((seq = __atomic_load_n(&s->sequence, __ATOMIC_ACQUIRE)) & 1)
		cpu_relax();
	return seq;
}

/* True if a writer ran since read_seqcount_begin() returned @start: what
 * was read in between may be torn and must be thrown away. */
static inline bool read_seqcount_retry(const seqcount_t *s, unsigned int start)
{
#if defined(__SANITIZE_THREAD__)
	return __atomic_fetch_add((unsigned int *)&s->sequence, 0,
				  __ATOMIC_ACQ_REL) != start;
#else
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->sequence, __ATOMIC_RELAXED) != start;
#endif
}

/* Caller holds the writers' lock.  The increment's acquire half keeps the
 * data stores that follow from moving above it. */
static inline void write_seqcount_begin(seqcount_t *s)
{
	__atomic_fetch_add(&s->sequence, 1, __ATOMIC_ACQ_REL);
}

static inline void write_seqcount_end(seqcount_t *s)
{
	__atomic_fetch_add(&s->sequence, 1, __ATOMIC_RELEASE);
}

#endif /* UF_SEQLOCK_H */
