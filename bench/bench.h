/* SPDX-License-Identifier: MIT */
/*
 * bench/bench.h - what the uflush-bench subcommands share.
 *
 * uflush-bench measures uflush beside a baseline taken in the same run and
 * prints ratios.  A subcommand is one entry of the table in uflush-bench.c;
 * the helpers here keep the subcommands alike: option values with units,
 * a stop flag set by SIGINT/SIGTERM, medians and spreads over repetitions,
 * aligned text tables, JSON output, and fio (bench/fio.c) run as a child
 * process with its JSON report parsed.
 *
 * Helpers return 0 or a count on success and a negative errno on failure,
 * like the library.
 */
#ifndef UF_BENCH_H
#define UF_BENCH_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ */
/* Subcommands (uflush-bench.c)                                        */

struct bench_cmd {
	const char *name;
	const char *summary;		/* one line for `uflush-bench help` */
	int (*run)(int argc, char **argv); /* argv[0] is the name; exit code */
	void (*usage)(FILE *f);
};

int bench_io_main(int argc, char **argv);
void bench_io_usage(FILE *f);
int bench_cache_main(int argc, char **argv);
void bench_cache_usage(FILE *f);
int bench_busyloop_main(int argc, char **argv);
void bench_busyloop_usage(FILE *f);
int bench_policies_main(int argc, char **argv);
void bench_policies_usage(FILE *f);

/* ------------------------------------------------------------------ */
/* Stopping                                                            */

/*
 * Set (to the signal number) by SIGINT or SIGTERM once
 * bench_install_signals() ran.  Long loops poll it; blocking waits in the
 * benchmarks are timed so that they notice it within ~100 ms.
 */
extern volatile sig_atomic_t bench_stop;

int bench_install_signals(void);

/* A condvar whose timed waits take CLOCK_MONOTONIC deadlines (uf_now_ns). */
int bench_cond_init(pthread_cond_t *cond);

/* ------------------------------------------------------------------ */
/* Option values                                                       */

/* "4096", "4k", "1M", "2G", "1T" (binary units); > 0.  -EINVAL if bad. */
int bench_parse_size(const char *s, uint64_t *out);
/* A decimal unsigned integer in [min, max]. */
int bench_parse_uint(const char *s, unsigned int min, unsigned int max,
		     unsigned int *out);
/*
 * Parse a comma-separated list of names, each of which must be one of
 * names[0..nr-1]; sets picked[i] for each one given.  On an unknown name
 * returns -EINVAL and points *bad at it (inside a static buffer).
 */
int bench_parse_list(const char *s, const char *const *names, unsigned int nr,
		     bool *picked, const char **bad);

/* ------------------------------------------------------------------ */
/* Statistics over repetitions                                         */

struct bench_stats {
	unsigned int n;
	double median;
	double min;
	double max;
};

/* Median (mean of the middle two for even n), min and max of v[0..n-1]. */
void bench_stats(const double *v, unsigned int n, struct bench_stats *st);

/* ------------------------------------------------------------------ */
/* Tables                                                              */

#define BENCH_TABLE_MAX_COLS	16
#define BENCH_TABLE_MAX_ROWS	64
#define BENCH_CELL_LEN		40

/*
 * A text table: columns are sized to their widest cell when printed.
 * Text columns are left-aligned, numeric ones right-aligned.
 */
struct bench_table {
	unsigned int nr_cols;
	unsigned int nr_rows;
	bool right[BENCH_TABLE_MAX_COLS];
	char head[BENCH_TABLE_MAX_COLS][BENCH_CELL_LEN];
	char cell[BENCH_TABLE_MAX_ROWS][BENCH_TABLE_MAX_COLS][BENCH_CELL_LEN];
};

/* Add a column; a heading starting with '>' is right-aligned. */
void bench_table_col(struct bench_table *t, const char *heading);
/* Start a row; returns its index, or -ENOSPC. */
int bench_table_row(struct bench_table *t);
__attribute__((format(printf, 4, 5)))
void bench_table_set(struct bench_table *t, unsigned int row,
		     unsigned int col, const char *fmt, ...);
void bench_table_print(const struct bench_table *t, FILE *f);

/* ------------------------------------------------------------------ */
/* JSON output                                                         */

/* Write s as a JSON string literal (quoted and escaped). */
void bench_json_str(FILE *f, const char *s);
/* Write v[0..n-1] as a JSON array of numbers. */
void bench_json_array(FILE *f, const double *v, unsigned int n);

/* ------------------------------------------------------------------ */
/* The machine                                                         */

/* "Linux 6.8.0-45-generic x86_64" */
void bench_kernel_version(char *buf, size_t len);
/*
 * For a loop block device, its dio setting from
 * /sys/block/loopN/loop/dio (0 or 1) and its backing file; -ENOTBLK if
 * path is not a loop device, -errno if sysfs cannot be read.
 */
int bench_loop_info(const char *path, int *dio, char *backing, size_t len);

/* ------------------------------------------------------------------ */
/* fio (bench/fio.c)                                                   */

#define FIO_MAX_ARGS	32
#define FIO_ARG_LEN	320

/* One fio invocation: argv is built with fio_arg(). */
struct fio_job {
	unsigned int argc;
	char argv[FIO_MAX_ARGS][FIO_ARG_LEN];
};

/* What one run reported for its (only) write group. */
struct fio_result {
	double bw_bytes;	/* bytes per second */
	double iops;
	double usr_cpu;		/* percent, as fio reports them */
	double sys_cpu;
	uint64_t io_bytes;
	char err[256];		/* why the run failed, if it did */
};

/*
 * fio_find(): look for fio ($FIO, else "fio" in $PATH) and fill its
 * version ("fio-3.33").  -ENOENT if it is missing, with the reason in why.
 */
int fio_find(char *version, size_t len, char *why, size_t why_len);
const char *fio_binary(void);

void fio_job_init(struct fio_job *job);
__attribute__((format(printf, 2, 3)))
int fio_arg(struct fio_job *job, const char *fmt, ...);
/* The command line as one string (for printing), shell-quoted if needed. */
void fio_job_cmdline(const struct fio_job *job, char *buf, size_t len);

/*
 * Run the job, wait for it, and parse its JSON report (--output-format=json
 * must be among the arguments).  Forwards bench_stop to fio as SIGINT.
 * Returns 0, or a negative errno with the reason in res->err: -EINTR when
 * interrupted, -EIO when fio failed or reported an error.
 */
int fio_run(const struct fio_job *job, struct fio_result *res);

/*
 * Parse a fio JSON report (text may have fio's "note:" lines before it):
 * jobs[0].write.{bw_bytes,iops,io_bytes}, jobs[0].{usr,sys}_cpu,
 * jobs[0].error.  Exposed for tests.
 */
int fio_parse_json(const char *text, struct fio_result *res);

#endif /* UF_BENCH_H */
