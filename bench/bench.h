/* SPDX-License-Identifier: MIT */
/*
 * bench/bench.h - the uflush-bench subcommands and fio.
 *
 * uflush-bench measures uflush beside a baseline taken in the same run and
 * prints ratios.  A subcommand is one entry of the table in uflush-bench.c;
 * what the subcommands share (options, the scratch device, repetitions,
 * statistics, tables, JSON) is the harness, bench/harness.h.  fio
 * (bench/fio.c) runs as a child process with its JSON report parsed.
 */
#ifndef UF_BENCH_H
#define UF_BENCH_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness.h"

/* ------------------------------------------------------------------ */
/* Subcommands (uflush-bench.c)                                        */

struct bench_cmd {
	const char *name;
	const char *summary;		/* one line for `uflush-bench help` */
	int (*run)(int argc, char **argv); /* argv[0] is the name; exit code */
	const struct bench_cmdline *cl;	/* its options and --help, or: */
	void (*usage)(FILE *f);
};

/* A subcommand's entry point and command line: bench_NAME_main and
 * bench_NAME_cmdline (the table entry is BENCH_CMD in uflush-bench.c). */
#define BENCH_CMD_DECLARE(name)						\
	int bench_##name##_main(int argc, char **argv);			\
	extern const struct bench_cmdline bench_##name##_cmdline

BENCH_CMD_DECLARE(io);
BENCH_CMD_DECLARE(cache);
BENCH_CMD_DECLARE(randwrite);
BENCH_CMD_DECLARE(busyloop);
BENCH_CMD_DECLARE(reclaim);
BENCH_CMD_DECLARE(wcpcap);
BENCH_CMD_DECLARE(jbod);
BENCH_CMD_DECLARE(sqlite);
BENCH_CMD_DECLARE(ab);
BENCH_CMD_DECLARE(plot);
BENCH_CMD_DECLARE(hits);
BENCH_CMD_DECLARE(idle);
BENCH_CMD_DECLARE(compare);
BENCH_CMD_DECLARE(kdiff);
BENCH_CMD_DECLARE(pool);
BENCH_CMD_DECLARE(calib);
/* PNGs of one trace or of A and B into dir (bench/plot.c). */
int bench_plot_render(const char *dir, const char *const *traces,
		      unsigned int n);
int bench_policies_main(int argc, char **argv);
void bench_policies_usage(FILE *f);

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
