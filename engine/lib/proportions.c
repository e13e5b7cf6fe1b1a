// SPDX-License-Identifier: MIT
/*
 * engine/lib/proportions.c - floating proportions, after the 3.2 kernel's
 * lib/proportions.c (prop_descriptor / prop_local_single).
 *
 * Each part (a device) counts its events; the whole counts every event.
 * Time is measured in events: after every 2^(shift-1) events a period ends
 * and every count is halved, so an event's weight decays by half per period
 * and a part's share is its recent rate relative to the others'.
 *
 * The halving of a part is lazy, as in the kernel: a part remembers the
 * period it was last brought up to date in, and on its next use is shifted
 * right once per period it missed.  The whole keeps the aged sum of all
 * parts (halved eagerly at each period end), which is the denominator; see
 * proportions.h for how that differs from lib/proportions.c.
 *
 * Simplified: one lock per descriptor instead of per-cpu counters; the
 * parts are few (one per device) and updated once per page completion.
 */
#include <limits.h>

#include "lib/proportions.h"

static unsigned int prop_clamp_shift(unsigned int shift)
{
	if (shift < PROP_MIN_SHIFT)
		return PROP_MIN_SHIFT;
	if (shift > PROP_MAX_SHIFT)
		return PROP_MAX_SHIFT;
	return shift;
}

static void __prop_descriptor_clear(struct prop_descriptor *pd,
				    unsigned int shift)
{
	pd->shift = prop_clamp_shift(shift);
	pd->period = 0;
	pd->period_events = 0;
	pd->events = 0;
}

void prop_descriptor_init(struct prop_descriptor *pd, unsigned int shift)
{
	spin_lock_init(&pd->lock);
	__prop_descriptor_clear(pd, shift);
}

void prop_descriptor_reset(struct prop_descriptor *pd, unsigned int shift)
{
	spin_lock(&pd->lock);
	__prop_descriptor_clear(pd, shift);
	spin_unlock(&pd->lock);
}

void prop_change_shift(struct prop_descriptor *pd, unsigned int shift)
{
	spin_lock(&pd->lock);
	pd->shift = prop_clamp_shift(shift);
	spin_unlock(&pd->lock);
}

void prop_local_init_single(struct prop_local_single *pl)
{
	pl->events = 0;
	pl->period = 0;
}

static unsigned long prop_period_len(const struct prop_descriptor *pd)
{
	return 1UL << (pd->shift - 1);
}

/* Bring @pl up to the current period: halve it once per period missed. */
static void prop_norm_single(struct prop_descriptor *pd,
			     struct prop_local_single *pl)
{
	unsigned long missed = pd->period - pl->period;

	assert_spin_locked(&pd->lock);
	if (!missed)
		return;
	if (missed < sizeof(long) * CHAR_BIT)
		pl->events >>= missed;
	else
		pl->events = 0;
	pl->period = pd->period;
}

/* Close the periods that @nr new events completed; halve the whole. */
static void prop_advance(struct prop_descriptor *pd, unsigned long nr)
{
	unsigned long len = prop_period_len(pd);

	pd->period_events += nr;
	while (pd->period_events >= len) {
		pd->period_events -= len;
		pd->period++;
		pd->events >>= 1;
	}
}

static void __prop_fraction(struct prop_descriptor *pd,
			    struct prop_local_single *pl,
			    unsigned long *num, unsigned long *den)
{
	prop_norm_single(pd, pl);
	if (!pd->events) {
		/* no history in the whole: nobody's share is known */
		*num = 1;
		*den = 1;
		return;
	}
	*num = pl->events;
	*den = pd->events;
}

/* One prop_inc_single_max(); pd->lock held. */
static void __prop_inc_single_max(struct prop_descriptor *pd,
				  struct prop_local_single *pl,
				  unsigned long nr, unsigned int max_percent)
{
	unsigned long num, den;

	if (max_percent < 100) {
		/* a capped part stops gaining once over its cap */
		__prop_fraction(pd, pl, &num, &den);
		if (pd->events && num > den / 100 * max_percent +
				     den % 100 * max_percent / 100)
			return;
	}
	prop_norm_single(pd, pl);
	/*
	 * The part is current, so the halvings that these events may
	 * trigger reach it (lazily) exactly as they reach the whole: with
	 * one part, part == whole at all times.
	 */
	pl->events += nr;
	pd->events += nr;
	prop_advance(pd, nr);
}

void prop_inc_single_max(struct prop_descriptor *pd,
			 struct prop_local_single *pl, unsigned long nr,
			 unsigned int max_percent)
{
	spin_lock(&pd->lock);
	__prop_inc_single_max(pd, pl, nr, max_percent);
	spin_unlock(&pd->lock);
}

void prop_inc_single_max_each(struct prop_descriptor *pd,
			      struct prop_local_single *pl, unsigned long nr,
			      unsigned int max_percent)
{
	spin_lock(&pd->lock);
	while (nr--)
		__prop_inc_single_max(pd, pl, 1, max_percent);
	spin_unlock(&pd->lock);
}

void prop_fraction_single(struct prop_descriptor *pd,
			  struct prop_local_single *pl,
			  unsigned long *num, unsigned long *den)
{
	spin_lock(&pd->lock);
	__prop_fraction(pd, pl, num, den);
	spin_unlock(&pd->lock);
}
