/* SPDX-License-Identifier: MIT */
/*
 * engine/mm/dirty-throttle.h - the dirty throttle of mm/page-writeback.c:
 * balance_dirty_pages() as it was in 3.1 (the dirtier writes pages itself),
 * 3.2 (IO-less: position and rate control, Wu Fengguang's series), 3.3
 * (3.2 + think time, min pause, dirty_throttle_leaks) and mainline (the
 * wb_ form with struct dirty_throttle_control, strictlimit), plus the
 * control-line and rate helpers each uses, exported so that tests can
 * check them against hand-computed values.
 *
 * The policy knob "bdp" (policies/bdp.c) picks one of the four
 * balance_dirty_pages_ratelimited_*() front-ends.
 */
#ifndef UF_DIRTY_THROTTLE_H
#define UF_DIRTY_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

struct address_space;
struct backing_dev_info;
struct uf_cache;

/* Sleep at most 200 ms at a time (3.1 onwards). */
#define MAX_PAUSE	\
	((unsigned long)HZ / 5 > 1 ? (unsigned long)HZ / 5 : 1UL)
/* Fixed point of pos_ratio: 1.0 == 1 << RATELIMIT_CALC_SHIFT. */
#define RATELIMIT_CALC_SHIFT	10
/* 3.3+: keep nr_dirtied_pause at least this many pages (32 @4K). */
#define DIRTY_POLL_THRESH	(128 >> (PAGE_SHIFT - 10))
/* mainline (v6.4+): min_ratio/max_ratio are kept in 1/10000 percent. */
#define BDI_RATIO_SCALE		10000

/*
 * Flags of a throttle call (balance_dirty_pages_ratelimited_flags()).
 * BDP_ASYNC is the kernel's: where it would sleep, return -EAGAIN and set
 * *pause instead.  BDP_PEEK is uflush's: "if nr_new more pages were
 * dirtied now, would you pause?": computes only, changes no task state.
 */
#define BDP_ASYNC		0x0001
#define BDP_PEEK		0x0002

/* A throttle entry.  nr_new: pages not yet dirtied to count in
 * (BDP_PEEK); 0 otherwise.  Return 0, or -EAGAIN with *pause (jiffies)
 * for BDP_ASYNC. */
typedef int bdp_ratelimited_fn(struct address_space *mapping,
			       unsigned long nr_new, unsigned int flags,
			       long *pause);

/* The four front-ends (policies/bdp.c points the hook at one of them). */
bdp_ratelimited_fn balance_dirty_pages_ratelimited_31;
bdp_ratelimited_fn balance_dirty_pages_ratelimited_32;
bdp_ratelimited_fn balance_dirty_pages_ratelimited_33;
bdp_ratelimited_fn balance_dirty_pages_ratelimited_mainline;

/* The policy's throttle for @mapping (3.2's when the cache has none). */
bdp_ratelimited_fn balance_dirty_pages_ratelimited_flags;

/* ---- shared helpers ---- */
unsigned long dirty_freerun_ceiling(unsigned long thresh,
				    unsigned long bg_thresh);
unsigned long hard_dirty_limit(struct uf_cache *c, unsigned long thresh);
unsigned long dirty_poll_interval(unsigned long dirty, unsigned long thresh);

/* ---- 3.1 ---- */
unsigned long task_dirty_limit(unsigned long bdi_dirty);
unsigned long task_min_dirty_limit(unsigned long bdi_dirty);
long sync_writeback_pages(struct uf_cache *c, unsigned long dirtied);

/* ---- 3.2 ---- */
unsigned long bdi_position_ratio(struct backing_dev_info *bdi,
				 unsigned long thresh, unsigned long bg_thresh,
				 unsigned long dirty, unsigned long bdi_thresh,
				 unsigned long bdi_dirty);
void bdi_update_dirty_ratelimit(struct backing_dev_info *bdi,
				unsigned long thresh, unsigned long bg_thresh,
				unsigned long dirty, unsigned long bdi_thresh,
				unsigned long bdi_dirty, unsigned long dirtied,
				unsigned long elapsed);
unsigned long bdi_max_pause(struct backing_dev_info *bdi,
			    unsigned long bdi_dirty);

/* ---- 3.3 (bdi_position_ratio is 3.2's) ---- */
void bdi_update_dirty_ratelimit_33(struct backing_dev_info *bdi,
				   unsigned long thresh,
				   unsigned long bg_thresh,
				   unsigned long dirty,
				   unsigned long bdi_thresh,
				   unsigned long bdi_dirty,
				   unsigned long dirtied,
				   unsigned long elapsed);
unsigned long bdi_max_pause_33(struct backing_dev_info *bdi,
			       unsigned long bdi_dirty);
long bdi_min_pause_33(struct backing_dev_info *bdi, long max_pause,
		      unsigned long task_ratelimit,
		      unsigned long dirty_ratelimit, int *nr_dirtied_pause);
/* Pages left unpaid by exited threads (3.3's dirty_throttle_leaks). */
int dirty_throttle_leaks_read(void);
/* Tests: take every leaked page (runs that must start alike). */
int dirty_throttle_leaks_take_all(void);

/* ---- mainline: include/linux/writeback.h's dirty_throttle_control ---- */
struct dirty_throttle_control {
	struct backing_dev_info *wb;	/* the kernel's bdi_writeback */
	unsigned long avail;		/* dirtyable */
	unsigned long dirty;		/* file_dirty + writeback */
	unsigned long thresh;		/* dirty threshold */
	unsigned long bg_thresh;	/* dirty background threshold */
	unsigned long wb_dirty;		/* per-wb counterparts */
	unsigned long wb_thresh;
	unsigned long wb_bg_thresh;
	unsigned long limit;		/* hard_dirty_limit(), by wb_position_ratio */
	unsigned long pos_ratio;
};

long long pos_ratio_polynom(unsigned long setpoint, unsigned long dirty,
			    unsigned long limit);
void wb_position_ratio(struct dirty_throttle_control *dtc);
void wb_update_dirty_ratelimit(struct dirty_throttle_control *dtc,
			       unsigned long dirtied, unsigned long elapsed);
unsigned long wb_max_pause(struct backing_dev_info *wb,
			   unsigned long wb_dirty);
long wb_min_pause(struct backing_dev_info *wb, long max_pause,
		  unsigned long task_ratelimit, unsigned long dirty_ratelimit,
		  int *nr_dirtied_pause);
unsigned long __wb_calc_thresh(struct dirty_throttle_control *dtc,
			       unsigned long thresh);
void wb_dirty_limits(struct dirty_throttle_control *dtc);
/* 6.18's wb_stat_error(): nr_cpu_ids * WB_STAT_BATCH pages */
unsigned long wb_stat_error(void);

/* Per-device limits (/sys/class/bdi/<dev>/...): min_ratio and max_ratio
 * in percent (bdi_set_min_ratio/max_ratio in proportions.h), their
 * mainline byte forms, and strict_limit (0 or 1). */
int bdi_set_min_bytes(struct backing_dev_info *bdi, uint64_t min_bytes);
int bdi_set_max_bytes(struct backing_dev_info *bdi, uint64_t max_bytes);
uint64_t bdi_get_min_bytes(struct backing_dev_info *bdi);
uint64_t bdi_get_max_bytes(struct backing_dev_info *bdi);
int bdi_set_strict_limit(struct backing_dev_info *bdi,
			 unsigned int strict_limit);
unsigned int bdi_get_min_ratio(struct backing_dev_info *bdi);
unsigned int bdi_get_max_ratio(struct backing_dev_info *bdi);

/* uf_pwrite_nb(): see page-writeback.c */
int balance_dirty_pages_nowait_begin(struct address_space *mapping,
				     unsigned long nr_new, long *pause);
void balance_dirty_pages_nowait_end(void);

/* 3.1/3.2 fs/fs-writeback.c: write up to @nr_pages of the device's dirty
 * inodes from the calling thread; returns the pages written. */
struct bdi_writeback;
long writeback_inodes_wb(struct bdi_writeback *wb, long nr_pages);

/* For tests: the task's 3.1 dirty proportion restarts (a new task). */
void task_dirty_reset(void);

#endif /* UF_DIRTY_THROTTLE_H */
