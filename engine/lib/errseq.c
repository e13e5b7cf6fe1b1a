// SPDX-License-Identifier: MIT
/*
 * engine/lib/errseq.c - lib/errseq.c for uflush (see errseq.h).
 *
 * Layout of the 32-bit word: bits 0-11 hold the (positive) errno, bit 12 is
 * the SEEN flag, bits 13-31 a counter bumped when a new error is recorded
 * after the previous one was seen.  The counter only moves when someone has
 * seen the last error, so an unseen error is never lost and a storm of
 * errors nobody looks at does not wrap the counter.
 */
#include <errno.h>
#include <stdbool.h>

#include "lib/errseq.h"

#define ERRNO_BITS	12
#define ERRNO_MASK	((1u << ERRNO_BITS) - 1)
#define SEEN_FLAG	(1u << ERRNO_BITS)
#define CTR_INC		(1u << (ERRNO_BITS + 1))

errseq_t errseq_set(errseq_t *eseq, int err)
{
	errseq_t old = __atomic_load_n(eseq, __ATOMIC_ACQUIRE), new;

	if (err >= 0 || -err > (int)ERRNO_MASK)
		return old;
	for (;;) {
		new = (old & ~(ERRNO_MASK | SEEN_FLAG)) | (errseq_t)-err;
		if (old & SEEN_FLAG)
			new += CTR_INC;
		if (new == old)
			return new;
		if (__atomic_compare_exchange_n(eseq, &old, new, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return new;
	}
}

errseq_t errseq_sample(errseq_t *eseq)
{
	errseq_t old = __atomic_load_n(eseq, __ATOMIC_ACQUIRE);

	/* An error nobody has seen is reported to the new opener too. */
	if (!(old & SEEN_FLAG))
		old = 0;
	return old;
}

int errseq_check(errseq_t *eseq, errseq_t since)
{
	errseq_t cur = __atomic_load_n(eseq, __ATOMIC_ACQUIRE);

	if (cur == since)
		return 0;
	return -(int)(cur & ERRNO_MASK);
}

int errseq_check_and_advance(errseq_t *eseq, errseq_t *since)
{
	errseq_t old = __atomic_load_n(eseq, __ATOMIC_ACQUIRE), new;
	int err;

	if (old == *since)
		return 0;
	new = old | SEEN_FLAG;
	if (new != old)
		__atomic_compare_exchange_n(eseq, &old, new, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	err = -(int)(new & ERRNO_MASK);
	*since = new;
	return err;
}
