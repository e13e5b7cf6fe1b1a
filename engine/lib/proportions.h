/* SPDX-License-Identifier: MIT */
/*
 * engine/lib/proportions.h - floating proportions (the kernel's
 * include/linux/proportions.h, 3.2 era) and the per-device writeout share
 * that mm/page-writeback.c builds on them.
 *
 * A device's share of the dirty limit is its fraction of the cache's recent
 * writeback completions: every page whose writeback ends counts one event
 * for its device, and every "period" of events halves all the counts, so
 * the share follows what each device has been completing lately.  As in
 * 3.2, a period is measured in events (2^(shift-1) of them, shift coupled
 * to the dirty limit by calc_period_shift()), not in time (flexible
 * proportions, v3.5+, moved to 3 s periods).
 *
 * Difference from lib/proportions.c: the denominator is the aged sum of
 * all devices' counts, kept beside them and halved with them, instead of
 * "half a period plus the events of this period".  The two agree once a
 * few periods have passed; ours is exact from the first event, so with one
 * device the share is exactly 1 (the kernel's starts near 0 and climbs).
 * With no completion at all in the cache yet every device gets a share of
 * 1: its limit is then the global one.
 */
#ifndef UF_PROPORTIONS_H
#define UF_PROPORTIONS_H

#include <stdbool.h>

#include "kernel/spinlock.h"

/* Bounds of a period's shift: a period is 2^(shift-1) events. */
#define PROP_MIN_SHIFT	1
#define PROP_MAX_SHIFT	40

/* The whole: one per cache (the kernel's vm_completions). */
struct prop_descriptor {
	spinlock_t lock;		/* everything below, and the locals */
	unsigned int shift;
	unsigned long period;		/* periods completed so far */
	unsigned long period_events;	/* events in the current period */
	unsigned long events;		/* aged sum of all locals' events */
};

/* One part: one per device (bdi->completions). */
struct prop_local_single {
	unsigned long events;		/* aged as of @period */
	unsigned long period;		/* the global period last seen */
};

void prop_descriptor_init(struct prop_descriptor *pd, unsigned int shift);
/* Back to prop_descriptor_init()'s state, under the lock: no events, no
 * period completed (the locals' next use brings them down to nothing). */
void prop_descriptor_reset(struct prop_descriptor *pd, unsigned int shift);
/* New period length for the periods to come; counts are kept. */
void prop_change_shift(struct prop_descriptor *pd, unsigned int shift);
void prop_local_init_single(struct prop_local_single *pl);

/*
 * Count @nr events for @pl, unless @pl's fraction already exceeds
 * @max_percent of the whole (the kernel's __prop_inc_percpu_max; pass 100
 * for no cap).
 */
void prop_inc_single_max(struct prop_descriptor *pd,
			 struct prop_local_single *pl, unsigned long nr,
			 unsigned int max_percent);
/* @nr calls of prop_inc_single_max(pd, pl, 1, max_percent) under one
 * lock: the cap is checked before each event, as it was per page. */
void prop_inc_single_max_each(struct prop_descriptor *pd,
			      struct prop_local_single *pl, unsigned long nr,
			      unsigned int max_percent);

/* @pl's share as *num / *den (den > 0 always; see the top of the file). */
void prop_fraction_single(struct prop_descriptor *pd,
			  struct prop_local_single *pl,
			  unsigned long *num, unsigned long *den);

/*
 * ---- engine/mm/page-writeback.c: the per-device share and its knobs ----
 *
 * These would sit in include/linux/writeback.h and backing-dev.h; they are
 * declared here so that writeback.h and backing-dev.h stay as they are.
 */
struct backing_dev_info;
struct uf_cache;

/* A writeback completion of one page on @bdi (test_clear_page_writeback
 * calls it; FUSE-like callers that end writeback themselves may too). */
void bdi_writeout_inc(struct backing_dev_info *bdi);
/* @nr of them at once (one request's pages), as @nr bdi_writeout_inc(). */
void bdi_writeout_add(struct backing_dev_info *bdi, unsigned long nr);
/* @bdi's share of the cache's recent completions, as num/den. */
void bdi_writeout_fraction(struct backing_dev_info *bdi, long *numerator,
			   long *denominator);

/* /sys/class/bdi/<dev>/min_ratio and max_ratio: percent of the dirty limit
 * reserved for / allowed to the device.  -EINVAL as the kernel refuses. */
int bdi_set_min_ratio(struct backing_dev_info *bdi, unsigned int min_ratio);
int bdi_set_max_ratio(struct backing_dev_info *bdi, unsigned int max_ratio);

/*
 * Call when a dirty tunable changes (the kernel's sysctl handlers do):
 * re-couples the completion period to the dirty limit and resets the
 * smoothed global dirty limit to the new threshold.  Also run once at
 * cache setup (page_writeback_init); without it both start lazily.
 */
void page_writeback_init(struct uf_cache *cache);
void update_completion_period(struct uf_cache *cache);
void writeback_set_ratelimit(struct uf_cache *cache);

/* The smoothed global dirty limit (3.2's global_dirty_limit), in pages. */
unsigned long global_dirty_limit(struct uf_cache *cache);

/*
 * Forget the state kept for a device or a cache (bdi_destroy,
 * uf_cache_close), once no write of it is in flight.  Needed until struct
 * backing_dev_info and struct uf_cache carry it themselves (see
 * page-writeback.c, "Where the state lives"): their slots are reused, and
 * a new device in an old slot would otherwise inherit the old share.
 */
void bdi_writeout_exit(struct backing_dev_info *bdi);
void page_writeback_exit(struct uf_cache *cache);

#endif /* UF_PROPORTIONS_H */
