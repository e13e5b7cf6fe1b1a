/* SPDX-License-Identifier: MIT */
/*
 * bench/ktrace.h - the host kernel's tracepoints for `uflush-bench kdiff`
 * (bench/kdiff.c): a tracefs instance of our own capturing the writeback
 * and block events of one device into a file, and the statistics that
 * kdiff compares, computed alike from a kernel trace and from uflush's
 * (cfg.trace_path: the same ftrace text, the kernel's field names).
 *
 * The parser takes the lines of either: "comm-pid [cpu] [flags] TS:
 * event: fields", with the fields as Linux 6.18 prints them
 * (include/trace/events/writeback.h, include/trace/events/block.h).
 */
#ifndef UF_BENCH_KTRACE_H
#define UF_BENCH_KTRACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ------------------------------------------------------------------ */
/* Statistics of a trace                                               */

/* A growing array of samples. */
struct kt_vec {
	double *v;
	size_t n, cap;
};

void kt_vec_add(struct kt_vec *x, double v);
void kt_vec_free(struct kt_vec *x);
double kt_mean(const struct kt_vec *x);
/* The q-quantile (0..1) by the nearest lower rank; NAN if empty. */
double kt_quantile(const struct kt_vec *x, double q);

/* Which events count: one device's, inside a time window. */
struct ktrace_filter {
	char bdi[32];		/* "7:3": the bdi of the writeback events;
				 * "" takes every bdi */
	char dev[32];		/* "7,3": block_rq_issue's device; "" any */
	double t0, t1;		/* seconds of the trace's clock; t1 <= t0:
				 * the whole trace */
	unsigned int nr_writers; /* N of write_bw / N */
};

struct ktrace_stats {
	struct ktrace_filter f;

	/*
	 * global_dirty_state, weighted by the time each sample held: dirty
	 * is dirty + writeback, what the throttle compares with its
	 * setpoint (mainline balance_dirty_pages: domain_dirty_avail);
	 * setpoint = (max(limit, thresh) + freerun) / 2 with freerun =
	 * (thresh + bg_thresh) / 2, as wb_position_ratio computes it.
	 */
	unsigned long nr_gds;
	double dirty_mean, setpoint_mean, limit_mean;	/* pages */
	double above_setpoint_pct;	/* % of the time dirty > setpoint */
	double wb_share;		/* mean writeback / (dirty + wb) */
	struct kt_vec gds_t, gds_dirty, gds_setpoint, gds_limit;

	double thresh_min, thresh_max;	/* global_dirty_state thresh, pages */
	double pre_dirty;		/* dirty + wb of the last sample before
					 * the window; NAN if none */

	/* balance_dirty_pages: ms; wb_dirty / wb_setpoint; the pages each
	 * call was charged for (dirtied=: a kernel writing 1 MiB folios
	 * charges 256 at a time, order-0 pages nr_dirtied_pause) */
	struct kt_vec pause, period, think, wb_dirty_sp, dirtied;
	/* bdi_dirty_ratelimit: dirty_ratelimit / (write_bw / N) */
	struct kt_vec rl_ratio;
	unsigned long nr_rate_updates;
	/*
	 * dirty_ratelimit (KiB/s) of the window's first balance_dirty_pages
	 * or bdi_dirty_ratelimit event; NAN if none.  A bdi new to the run
	 * starts at INIT_BW (100 MiB/s): far below it, the bdi carried the
	 * estimates of an earlier user.
	 */
	double rl_first;
	/* writeback_start .. writeback_written: one flusher pass each */
	unsigned long passes;
	struct kt_vec pass_pages;
	/* block_rq_issue, writes with data, KiB */
	struct kt_vec rq_kib;

	double first_t, last_t;		/* events taken */
	unsigned long lines, taken;

	/* the parser's state */
	bool have_gds, have_start;
	double gds_prev_t, w_sum, w_dirty, w_sp, w_lim, w_above, w_share;
	double prev_dirty, prev_sp, prev_lim, prev_share;
	long long start_pages;
};

void ktrace_stats_init(struct ktrace_stats *st, const struct ktrace_filter *f);
/* One line of a trace (anything that is not an event is ignored). */
void ktrace_stats_line(struct ktrace_stats *st, const char *line);
/* Close the time weighting: the last sample holds until the window ends. */
void ktrace_stats_finish(struct ktrace_stats *st);
/* Every line of the file path; 0 or -errno. Does not finish. */
int ktrace_stats_file(struct ktrace_stats *st, const char *path);
/* Seconds of the window (t1 - t0), else from the first to the last event. */
double ktrace_stats_secs(const struct ktrace_stats *st);
/* The first dirty_ratelimit says the bdi kept an earlier user's estimates
 * (below 7/8 of INIT_BW: one update moves it by at most 1/8). */
bool ktrace_rate_inherited(const struct ktrace_stats *st);
#define KTRACE_INIT_BW_KBPS	102400.0  /* 6.18 INIT_BW, 100 MiB/s */
/* The Kconfig HZ (100, 250, 300, 1000) nearest a measured tick rate; 0
 * when none is within 10% of it. */
unsigned int ktrace_hz_nearest(double measured);
/* Flusher passes and rate updates per second of the window. */
double ktrace_rate_updates_per_s(const struct ktrace_stats *st);
double ktrace_passes_per_s(const struct ktrace_stats *st);
void ktrace_stats_free(struct ktrace_stats *st);

/* ------------------------------------------------------------------ */
/* Capture from tracefs                                                */

#define KTRACE_EV_WRITEBACK	(1u << 0)	/* writeback:* of one bdi */
#define KTRACE_EV_BLOCK		(1u << 1)	/* block:block_rq_issue */

/*
 * One capture: an instance instances/uflush-kdiff-PID-N of tracefs (so
 * that no one else's tracing is touched), on the CLOCK_MONOTONIC clock
 * ("mono") so that its times compare with uf_now_ns() and with uflush's
 * trace, its trace_pipe copied into a file by a thread while it runs.
 * Removed by ktrace_stop() or at exit.
 */
struct ktrace_cap {
	char dir[256];			/* the instance */
	FILE *out;
	int pipe_fd;
	pthread_t th;
	bool made, running;
	volatile bool stop;
	unsigned long bytes;		/* copied to the file */
	char why[320];
	struct ktrace_cap *next;
};

/*
 * tracefs mounted (mounting it on /sys/kernel/tracing if needed, then
 * unmounted at exit) and usable by us (root): 0, or -errno with the
 * reason in why.
 */
int ktrace_available(char *why, size_t len);
/*
 * Start capturing events (KTRACE_EV_*) of device maj:min into out_path.
 * 0, or -errno with the reason in c->why (nothing left behind).
 */
int ktrace_start(struct ktrace_cap *c, const char *out_path,
		 unsigned int maj, unsigned int min, unsigned int events);
/* Stop, drain the pipe, close the file, remove the instance.  0 or -errno. */
int ktrace_stop(struct ktrace_cap *c);

#endif /* UF_BENCH_KTRACE_H */
