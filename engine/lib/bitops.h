/* SPDX-License-Identifier: MIT */
/*
 * engine/lib/bitops.h - atomic bit operations on unsigned long words, with the
 * kernel's names and ordering (test_and_* are full barriers; set/clear are
 * relaxed unless paired with smp_mb__after_atomic()).
 */
#ifndef UF_BITOPS_H
#define UF_BITOPS_H

#include <stdbool.h>

#define BIT(nr)		(1UL << (nr))
#define BITS_PER_LONG	(8 * (int)sizeof(long))
#define BITS_TO_LONGS(n)	(((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)

static inline void set_bit(int nr, unsigned long *addr)
{
	__atomic_fetch_or(addr, BIT(nr), __ATOMIC_RELAXED);
}

static inline void clear_bit(int nr, unsigned long *addr)
{
	__atomic_fetch_and(addr, ~BIT(nr), __ATOMIC_RELAXED);
}

static inline void clear_bit_unlock(int nr, unsigned long *addr)
{
	__atomic_fetch_and(addr, ~BIT(nr), __ATOMIC_RELEASE);
}

static inline bool test_bit(int nr, const unsigned long *addr)
{
	return __atomic_load_n(addr, __ATOMIC_ACQUIRE) & BIT(nr);
}

static inline bool test_and_set_bit(int nr, unsigned long *addr)
{
	return __atomic_fetch_or(addr, BIT(nr), __ATOMIC_SEQ_CST) & BIT(nr);
}

static inline bool test_and_set_bit_lock(int nr, unsigned long *addr)
{
	return __atomic_fetch_or(addr, BIT(nr), __ATOMIC_ACQUIRE) & BIT(nr);
}

static inline bool test_and_clear_bit(int nr, unsigned long *addr)
{
	return __atomic_fetch_and(addr, ~BIT(nr), __ATOMIC_SEQ_CST) & BIT(nr);
}

/*
 * TSan does not model fences (gcc rejects them under -fsanitize=thread), so
 * there a full barrier is a seq_cst read-modify-write, which it does model.
 */
#if defined(__SANITIZE_THREAD__)
static inline void smp_mb(void)
{
	static int smp_mb_dummy;

	__atomic_fetch_add(&smp_mb_dummy, 0, __ATOMIC_SEQ_CST);
}
#else
#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#define smp_mb__after_atomic()	smp_mb()
#define smp_mb__before_atomic()	smp_mb()

#endif /* UF_BITOPS_H */
