/* SPDX-License-Identifier: MIT */
/*
 * bench/harness.h - what every uflush-bench scenario runs on.
 *
 * A scenario (io.c, cache.c, busyloop.c, ...) declares its options as a
 * table, its cases (what runs: "uflush", "fio raw", a policy variant), and
 * what one run of a case records; the harness does the rest:
 *
 *   options    bench_cmdline: a table of --options with their types,
 *              bounds and help lines; parsing, clear error messages, and
 *              the --help text come from it;
 *   device     bench_target: a scratch loop device (direct I/O, checked in
 *              sysfs) over a sparse file, or --dev PATH; described, filled
 *              once, its sysfs counters read, removed at exit;
 *   schedule   bench_sched: cases x repetitions, the repetitions outermost
 *              (A B C A B C ...), the order rotated if asked; a case that
 *              fails on its first run is skipped from then on;
 *   numbers    bench_samples and bench_stats: medians, min-max spreads,
 *              ratios of medians and paired ratios;
 *   output     bench_table (aligned text) and bench_json (a JSON writer
 *              that escapes strings and keeps track of nesting).
 *
 * bench/harness.c has the pure parts (options, statistics, schedule,
 * tables, JSON), bench/target.c the device and the run's surroundings,
 * bench/host.c the host held to a cache's limits and what the device
 * benchmarks (cache, randwrite) measure and print alike;
 * both are linked into the test binary too (tests/test_bench_harness.c).  Helpers return 0 or a
 * count on success and a negative errno on failure, like the library.
 */
#ifndef UF_BENCH_HARNESS_H
#define UF_BENCH_HARNESS_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "uflush.h"
#include "io/testdev.h"

struct uf_cache;
struct uf_dev;

#define BENCH_MAX_REPS		32

/* ------------------------------------------------------------------ */
/* Stopping                                                            */

/*
 * Set (to the signal number) by SIGINT or SIGTERM once
 * bench_install_signals() ran.  Long loops poll it; blocking waits in the
 * benchmarks are timed so that they notice it within ~100 ms.
 */
extern volatile sig_atomic_t bench_stop;

int bench_install_signals(void);

/* Sleep ms milliseconds; a signal cuts it short only once bench_stop is
 * set. */
void bench_sleep_ms(unsigned int ms);

/*
 * A benchmark's worker thread, the first member of the scenario's own
 * struct: the harness starts and joins arrays of them (elements stride
 * bytes apart).
 */
struct bench_thread {
	pthread_t th;
	int err;			/* what the thread ended with */
};

/* Start fn on each of nr elements of arr, counting them in *started;
 * stops at the first that cannot start and returns its -errno. */
int bench_threads_start(void *arr, size_t stride, unsigned int nr,
			void *(*fn)(void *), unsigned int *started);
/*
 * Set *stop and join the nr threads started.  Returns err if nonzero,
 * else the first thread's error, saying "what: <error>" in why.
 */
int bench_threads_stop(bool *stop, void *arr, size_t stride, unsigned int nr,
		       int err, const char *what, char *why, size_t len);

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
/* A size the way the options take it: "4k", "64M", "3000" (exact). */
void bench_fmt_size(char *buf, size_t len, uint64_t v);

/* ------------------------------------------------------------------ */
/* Command lines                                                       */

enum bench_opt_type {
	BENCH_OPT_FLAG,		/* bool = true */
	BENCH_OPT_UINT,		/* unsigned int in [min, max] */
	BENCH_OPT_SIZE,		/* uint64_t with units, [min, max], align */
	BENCH_OPT_STR,		/* const char * = the argument */
	BENCH_OPT_LIST,		/* bool[nr]: which of names[] were listed */
	BENCH_OPT_STRV,		/* struct bench_strv: each --opt A,B adds */
	BENCH_OPT_ALIAS,	/* the option named .now (an old name) */
	BENCH_OPT_PAGES,	/* a SIZE in [min, max] bytes, a multiple of
				 * 4k, into an unsigned int of 4 KiB pages */
};

/* Paths given by a repeatable option (--dev A --dev B, or --dev A,B). */
#define BENCH_STRV_MAX	16
struct bench_strv {
	unsigned int n;
	const char *v[BENCH_STRV_MAX];
	char buf[BENCH_STRV_MAX][256];
};

struct bench_opt {
	const char *name;		/* without "--"; NULL ends a table */
	const char *arg;		/* for --help: "SEC", "LIST"; NULL */
	enum bench_opt_type type;
	void *dest;
	uint64_t min, max;
	uint64_t align;			/* SIZE: a multiple of it (0: any) */
	const char *const *names;	/* LIST */
	unsigned int nr;
	bool *given;			/* if set: true once the option is seen */
	const char *want;		/* what a bad value should have been;
					 * NULL: said from min, max, align */
	const char *help;		/* --help lines, '\n' between them */
	const char *now;		/* if set: an old name, kept working
					 * with a note that --now is the name */
	unsigned int scale;		/* UINT: dest = value x scale (0: 1) */
};

#define BENCH_FLAG(n, d, h) \
	{ .name = (n), .type = BENCH_OPT_FLAG, .dest = (d), .help = (h) }
#define BENCH_STR(n, a, d, h) \
	{ .name = (n), .arg = (a), .type = BENCH_OPT_STR, .dest = (d), \
	  .help = (h) }
/* w may be NULL: "lo..hi", ">= lo"; "a multiple of 4k, at most 64M" */
#define BENCH_UINT(n, a, d, lo, hi, w, h) \
	{ .name = (n), .arg = (a), .type = BENCH_OPT_UINT, .dest = (d), \
	  .min = (lo), .max = (hi), .want = (w), .help = (h) }
#define BENCH_SIZE(n, d, lo, hi, al, h) \
	{ .name = (n), .arg = "SIZE", .type = BENCH_OPT_SIZE, .dest = (d), \
	  .min = (lo), .max = (hi), .align = (al), .help = (h) }
#define BENCH_LIST(n, d, nm, w, h) \
	{ .name = (n), .arg = "LIST", .type = BENCH_OPT_LIST, .dest = (d), \
	  .names = (nm), .nr = sizeof(nm) / sizeof((nm)[0]), .want = (w), \
	  .help = (h) }

/*
 * An old name of the option named now_: it still works, parsed as that
 * one, with a note on stderr that --now_ is the name.  Not in --help.
 * (An old option in other units keeps its own entry with .now set.)
 */
/*
 * --cache SIZE: a cache of so many bytes, into dest as 4 KiB frames;
 * --pages N stays as its old name (frames, with a note).
 */
#define BENCH_OPT_CACHE(d, lo_pages, hi_pages, h) \
	{ .name = "cache", .arg = "SIZE", .type = BENCH_OPT_PAGES, \
	  .dest = (d), .min = (uint64_t)(lo_pages) * 4096, \
	  .max = (uint64_t)(hi_pages) * 4096, .align = 4096, .help = (h) }, \
	{ .name = "pages", .arg = "N", .type = BENCH_OPT_UINT, .dest = (d), \
	  .min = (lo_pages), .max = (hi_pages), .now = "cache", .help = "" }

#define BENCH_OLD_NAME(old, now_) \
	{ .name = (old), .type = BENCH_OPT_ALIAS, .now = (now_), .help = "" }

/* The end of a table. */
#define BENCH_OPT_END	{ .name = NULL }

/* The options every scenario on a device has. */
#define BENCH_OPT_REPS(d, h) \
	BENCH_UINT("reps", "N", d, 1, BENCH_MAX_REPS, NULL, h)
#define BENCH_OPT_DEV(d) \
	BENCH_STR("dev", "PATH", d, \
		  "use this block device or file: ITS DATA IS OVERWRITTEN")
#define BENCH_OPT_FORCE(d) \
	BENCH_FLAG("force", d, "open PATH even if mounted or in use")
#define BENCH_OPT_JSON(d) \
	BENCH_STR("json", "FILE", d, "also write the results as JSON")

/* The last options of a scenario on one device: --dev, --force, --json,
 * and the end of the table. */
#define BENCH_OPTS_DEV_END(dev, force, json) \
	BENCH_OPT_DEV(dev), BENCH_OPT_FORCE(force), BENCH_OPT_JSON(json), \
	BENCH_OPT_END

#define BENCH_SCRATCH_ABOUT \
	"Default device: a scratch loop device (direct I/O) over a sparse file,\n" \
	"or the file itself where a loop device cannot be made; removed at exit.\n"
#define BENCH_ENV_TESTDIR \
	"Environment: UFLUSH_TESTDIR = where the scratch file goes.\n"
#define BENCH_ENV_FIO \
	"Environment: FIO = the fio binary; UFLUSH_TESTDIR = where the scratch\n" \
	"file goes (default /var/tmp).\n"

/* A subcommand's command line: its options and the text of its --help. */
struct bench_cmdline {
	const char *cmd;		/* "io": messages say "uflush-bench io" */
	const char *about;		/* before the options */
	const struct bench_opt *opts;
	const char *epilog;		/* after them */
	int *rest;			/* if set: arguments that are not
					 * options are allowed, and start at
					 * argv[*rest] (moved to the end) */
	const char *args;		/* the usage line's positionals:
					 * "POLICY_A POLICY_B [CASE...]" */
};

/* Subcommand name's command line, bench_NAME_cmdline (bench.h). */
#define BENCH_CMDLINE(name, opts_, about_, epilog_)			\
	const struct bench_cmdline bench_##name##_cmdline = {		\
		.cmd = #name, .about = (about_), .opts = (opts_),	\
		.epilog = (epilog_),					\
	}

/*
 * Parse argv[1..] (argv[0] is the subcommand) into the table's dest.
 * Defaults are whatever dest holds before.  Every command line also takes
 * --help and --quiet (bench_quiet: no progress lines).  When out is
 * stdout (a subcommand's own command line) and an option named "json" is
 * "-", the JSON report goes to stdout and everything else printed on
 * stdout to stderr from here on (bench_json_to_stdout()).  Returns 0; 1
 * if --help was given (the help went to out); -EINVAL with one line on
 * err saying what was wrong with which option.
 */
int bench_opts_parse(const struct bench_cmdline *cl, int argc, char **argv,
		     FILE *out, FILE *err);
void bench_opts_usage(const struct bench_cmdline *cl, FILE *f);
/*
 * bench_opts_parse() for a subcommand's main, on stdout and stderr:
 * -1 to go on, else the exit code (0 after --help, 2 for a bad option).
 */
int bench_opts_main(const struct bench_cmdline *cl, int argc, char **argv);

/* --quiet: no progress lines on stderr. */
extern bool bench_quiet;

/*
 * `--json -`: keep the real stdout for the JSON report (bench_json_create
 * of "-" writes there) and send fd 1 to stderr, so that tables and notes
 * printed on stdout go to stderr.  Once; 0 or -errno.
 */
int bench_json_to_stdout(void);

/* "uflush-bench CMD: " and the message, on stderr. */
__attribute__((format(printf, 2, 3)))
void bench_err(const char *cmd, const char *fmt, ...);

/*
 * The library's messages, kept (a uf_log_fn_t with the bench_log as its
 * priv): each as prefix, message, end, with sep between two of them;
 * what does not fit in text is cut off.
 */
struct bench_log {
	const char *prefix, *sep, *end;
	size_t len;
	char text[2048];
};

void bench_log_keep(void *priv, int level, const char *msg);

/*
 * Room for one more element of size bytes in the array *(T **)arrp that
 * holds nr of its cap (doubling, first elements at first).  -ENOMEM
 * leaves the array as it was.
 */
int bench_grow(void *arrp, size_t *cap, size_t nr, size_t size,
	       size_t first);

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
/* The q-quantile (0..1) of v[0..n-1] by the nearest lower rank; 0 if !n. */
double bench_quantile(const double *v, unsigned int n, double q);

/* One metric of one case, a sample per repetition. */
struct bench_samples {
	unsigned int n;
	double v[BENCH_MAX_REPS];
};

void bench_samples_add(struct bench_samples *s, double v);
void bench_samples_stats(const struct bench_samples *s,
			 struct bench_stats *st);
double bench_samples_median(const struct bench_samples *s);
/*
 * Gather a double field of n records (what a scenario's runs recorded):
 * the one at byte off of each, stride bytes apart.
 */
void bench_samples_gather(struct bench_samples *s, const void *recs,
			  unsigned int n, size_t stride, size_t off);
/* median(a) / median(b); NAN when either has none or b's is not > 0. */
double bench_ratio(const struct bench_samples *a,
		   const struct bench_samples *b);

/* ------------------------------------------------------------------ */
/* Schedule                                                            */

/* What a case's run callback returns besides 0 and a negative errno. */
#define BENCH_SKIP	1	/* this case cannot run here: skip it */

struct bench_case {
	const char *name;
	bool skipped;
	char why[320];			/* why it was skipped or failed */
	unsigned int runs;		/* runs that succeeded */
};

/*
 * Run every case once per repetition, repetitions outermost, so that a
 * slow drift of the machine hits every case alike; with rotate the order
 * turns by one each repetition (A B C, B C A, ...), so that no case always
 * follows the same one.  run() returns 0 (a sample was recorded), BENCH_SKIP
 * (skip this case from now on: it cannot run here) or a negative errno,
 * which stops the schedule.  bench_case.runs counts the runs that
 * returned 0, so that run() can tell a first failure (skip) from a later
 * one (stop).  Stops early on bench_stop.  Returns 0 or the error.
 */
struct bench_sched {
	unsigned int nr_cases;
	struct bench_case *cases;
	unsigned int reps;
	bool rotate;
	int (*run)(void *priv, unsigned int c, unsigned int rep);
	void *priv;
	/* optional: seconds one run of case c should take (0: unknown),
	 * for the ETA; and the command the progress lines name */
	double (*est_secs)(void *priv, unsigned int c);
	const char *cmd;
};

/* A schedule of the nr cases at cases_, rotated; .reps set before it runs. */
#define BENCH_SCHED_ROTATED(cases_, nr, run_, priv_) {			\
	.nr_cases = (nr), .cases = (cases_), .rotate = true,		\
	.run = (run_), .priv = (priv_),					\
}

int bench_sched_run(const struct bench_sched *s);

/*
 * Progress of bench_sched_run() on stderr unless bench_quiet: the runs
 * and an estimate up front (from est_secs when every case has one), then
 * a line every bench_progress_ms (5000) with the elapsed time, the run
 * and the ETA, as long as the schedule runs.  A test points
 * bench_progress_file (NULL: stderr) elsewhere and shortens the period.
 */
extern unsigned int bench_progress_ms;
extern FILE *bench_progress_file;
/*
 * Seconds left when done of total units of work took elapsed seconds:
 * the rate so far; before the first is done, total - elapsed if the units
 * are seconds (an estimate), else NAN (unknown).
 */
double bench_eta(double elapsed, double done, double total, bool secs);
/* "45s", "2m05s", "1h02m"; "?" for NAN. */
void bench_fmt_secs(char *buf, size_t len, double secs);
/* The case that runs i-th in repetition rep. */
unsigned int bench_sched_case(const struct bench_sched *s, unsigned int rep,
			      unsigned int i);

/* ------------------------------------------------------------------ */
/* Tables                                                              */

#define BENCH_TABLE_MAX_COLS	16
#define BENCH_TABLE_MAX_ROWS	64
#define BENCH_CELL_LEN		80

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
/* Reset the table and add these columns. */
void bench_table_init(struct bench_table *t, const char *const *headings,
		      unsigned int nr);
/* Start a row; returns its index, or -ENOSPC. */
int bench_table_row(struct bench_table *t);
__attribute__((format(printf, 4, 5)))
void bench_table_set(struct bench_table *t, unsigned int row,
		     unsigned int col, const char *fmt, ...);
/* The median in col and its min-max in col + 1 ("%.0f" from 100 up). */
void bench_table_stats(struct bench_table *t, unsigned int row,
		       unsigned int col, const struct bench_stats *st);
/* "%.2f", or "-" for NAN. */
void bench_table_ratio(struct bench_table *t, unsigned int row,
		       unsigned int col, double ratio);
void bench_table_print(const struct bench_table *t, FILE *f);

/* "%.0f" from 100 up, else "%.1f". */
void bench_fmt_num(char *buf, size_t len, double v);

/* ------------------------------------------------------------------ */
/* Reports                                                             */

struct bench_json;
struct bench_env;
struct bench_target;

/*
 * How a scenario reports its results (priv is the scenario's state, i the
 * index of a case): the columns of its table and the row of a case, text
 * before and after the table; for the JSON report the members that
 * describe the run and the object of a case.
 */
struct bench_report {
	const char *const *cols;
	unsigned int nr_cols;
	void (*header)(const void *priv);
	void (*row)(struct bench_table *t, const void *priv, unsigned int i);
	void (*notes)(const void *priv);
	void (*json_config)(struct bench_json *j, const void *priv);
	void (*json_case)(struct bench_json *j, const void *priv,
			  unsigned int i);
};

/* The report of a scenario whose parts are named P_cols, P_header, ... */
#define BENCH_REPORT_OF(p) {						\
	.cols = p##_cols,						\
	.nr_cols = sizeof(p##_cols) / sizeof(p##_cols[0]),		\
	.header = p##_header, .row = p##_row, .notes = p##_notes,	\
	.json_config = p##_json_config, .json_case = p##_json_case,	\
}

/*
 * Refuse a bad policy spec before any device is made: the library's
 * message says why, and a line on stderr which spec it was.  The resolved
 * spec goes to resolved (if set).  0 or the library's -errno.
 */
int bench_check_policy(const char *cmd, const char *spec, char *resolved,
		       size_t len);

/*
 * Print the header, the table of nr cases and the notes on stdout; then,
 * if json_path is set, write the JSON report there: {"benchmark": cmd,
 * "kernel": ..., "device": {bench_target_json}, "interrupted": ..., the
 * json_config members, "results": [a json_case object per case]}.
 * Returns 0, or -errno (and says why) if the report cannot be written.
 */
int bench_report(const struct bench_report *r, const struct bench_env *env,
		 const struct bench_target *t, const char *json_path,
		 const void *priv, unsigned int nr);

/* ------------------------------------------------------------------ */
/* JSON output                                                         */

#define BENCH_JSON_DEPTH	8

/*
 * A JSON writer: members and elements are separated and indented by
 * nesting.  key is a member's name inside an object, NULL for an element
 * of an array.  Numbers that are not finite are written as null.
 */
struct bench_json {
	FILE *f;
	unsigned int depth;
	bool first[BENCH_JSON_DEPTH];	/* nothing written at this level */
	char close[BENCH_JSON_DEPTH];	/* '}' or ']' */
};

void bench_json_init(struct bench_json *j, FILE *f);
/* Open path and start the top object; -errno and a message if it fails. */
int bench_json_create(struct bench_json *j, const char *cmd,
		      const char *path);
/* End the top object and close the file; -EIO and a message on failure. */
int bench_json_finish(struct bench_json *j, const char *cmd,
		      const char *path);

void bench_json_obj(struct bench_json *j, const char *key);
void bench_json_arr(struct bench_json *j, const char *key);
void bench_json_end(struct bench_json *j);
void bench_json_str(struct bench_json *j, const char *key, const char *s);
void bench_json_num(struct bench_json *j, const char *key, double v);
void bench_json_u64(struct bench_json *j, const char *key, uint64_t v);
void bench_json_int(struct bench_json *j, const char *key, long long v);
void bench_json_bool(struct bench_json *j, const char *key, bool v);
void bench_json_null(struct bench_json *j, const char *key);
/* Arrays of numbers, on one line. */
void bench_json_nums(struct bench_json *j, const char *key, const double *v,
		     unsigned int n);
void bench_json_ulongs(struct bench_json *j, const char *key,
		       const unsigned long *v, unsigned int n);
/* key: [samples], key_median, key_min, key_max. */
void bench_json_stats(struct bench_json *j, const char *key,
		      const double *v, unsigned int n);
void bench_json_samples(struct bench_json *j, const char *key,
			const struct bench_samples *s);

/* Members keys[i]: v[i], i < n. */
void bench_json_members(struct bench_json *j, const char *const *keys,
			const double *v, unsigned int n);
/* Members "policy_<names[i]>": policy[i], i < n (the resolved specs). */
void bench_json_policies(struct bench_json *j, const char *const *names,
			 const char (*policy)[512], unsigned int n);
/* Write s as a JSON string literal (quoted and escaped). */
void bench_json_escape(FILE *f, const char *s);

/*
 * A JSON navigator over text, building no tree (fio's report, saved
 * results): p at a value.  The member key of an object, element idx of
 * an array: where its value starts, or NULL (missing, malformed).
 */
const char *bench_jget(const char *p, const char *key);
const char *bench_jindex(const char *p, unsigned int idx);
/* A number (null: NAN); -ENOENT for p NULL, -EINVAL if not a number. */
int bench_jnum(const char *p, double *v);
/* A string, unescaped (\\uXXXX as '?'), cut to len; -ENOENT, -EINVAL. */
int bench_jstr(const char *p, char *buf, size_t len);

/* SHA-256 of data, or of a file's contents, as 64 hex digits. */
void bench_sha256(const void *data, size_t len, char hex[65]);
/* 0, or -errno if the file cannot be read. */
int bench_sha256_file(const char *path, char hex[65]);
/*
 * The members every JSON result has beside "kernel": "machine" (CPU
 * model, CPUs online and usable, memory), "uname" and "uflush" (version
 * and the git commit it was built from, or "unknown").
 */
void bench_machine_json(struct bench_json *j);
/*
 * A "plugins" array for a policy spec: each plugin=PATH item's path and
 * sha256 (or why it could not be read).
 */
void bench_plugins_json(struct bench_json *j, const char *spec);

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
/* CPU seconds and context switches of all threads of the process. */
void bench_process_cpu(double *cpu, uint64_t *csw);
/*
 * Call fn for each thread of this process with its tid and comm; stops
 * when fn returns nonzero and returns that.  -errno if /proc is missing.
 */
int bench_for_each_thread(int (*fn)(void *priv, int tid, const char *comm),
			  void *priv);
/* A page-aligned buffer of pseudo-random bytes (not zeros: a virtual
 * disk may turn zero writes into discards); free() it. */
void *bench_random_buffer(size_t len);
uint64_t bench_xorshift64(uint64_t *state);

/* ------------------------------------------------------------------ */
/* The device under test                                               */

struct bench_target {
	const char *cmd;
	struct uf_testdev td;
	bool scratch;			/* ours: removed by bench_target_close */
	bool is_blk;
	const char *path;
	char desc[512];
	int dio;			/* loop/dio; -1 if not a loop device */
	uint64_t size;			/* bytes of the device or file */
	unsigned int major, minor;	/* if is_blk */
	unsigned int max_sectors_kb;	/* 0 if unknown */
	uint64_t range;			/* what the scenario uses: [0, range) */
	unsigned int lbs;		/* logical block size, 0 if unknown */
	bool force;			/* open it even if mounted or in use */
	bool shaped;			/* bench_dev_open() shapes it: */
	struct uf_io_shape shape;
	struct bench_target *next;	/* live targets, removed at exit */
};

/*
 * The device a scenario writes to: with dev NULL a scratch device of size
 * bytes, else dev, which must have at least size bytes (0: any) and whose
 * data is overwritten (a warning says so).  A block device that is
 * mounted (saying where) or held exclusively by another is refused with
 * -EBUSY unless force (which t->force keeps for bench_dev_open).  Says
 * why on stderr if it fails.  A scratch device is removed by
 * bench_target_close() or at exit.
 */
int bench_target_open(struct bench_target *t, const char *cmd,
		      const char *dev, uint64_t size, bool force);
/* -EINVAL (and says which) if two --dev paths are the same device. */
int bench_devs_distinct(const char *cmd, const struct bench_strv *devs);
/*
 * Whether block device major:minor is mounted, per mountinfo (NULL:
 * /proc/self/mountinfo, where a mounted partition of it counts too):
 * 1 and the first mount point in where, 0, or -errno.
 */
int bench_mounted_at(const char *mountinfo, unsigned int major,
		     unsigned int minor, char *where, size_t len);
void bench_target_close(struct bench_target *t);
/*
 * Write [0, range) once with O_DIRECT in chunk-byte writes (untimed), so
 * that no run pays for allocating blocks of the sparse backing file.
 */
int bench_target_prefill(const struct bench_target *t, uint64_t range,
			 size_t chunk);
/* Write requests and 512-byte sectors the device completed (sysfs stat). */
bool bench_target_counters(const struct bench_target *t, uint64_t *ios,
			   uint64_t *sectors);
/* Read and write requests the device completed (sysfs stat). */
bool bench_target_ios(const struct bench_target *t, uint64_t *reads,
		      uint64_t *writes);
/* "device:  PATH: DESC (scratch, removed at exit)" + extra, a line. */
void bench_target_print(const struct bench_target *t, const char *extra);
/*
 * Members path, scratch, loop, dio, description, max_sectors_kb and, when
 * known, range_bytes and block_size of an open object.
 */
void bench_target_json(struct bench_json *j, const struct bench_target *t);

/*
 * Opening the device again and again: once we have had it open, -EBUSY
 * means our own previous handle has not let go yet (the kernel tears an
 * io_uring down asynchronously and the O_EXCL claim goes with its last
 * file reference), so that is retried for a while, untimed, and counted.
 * The library's messages from the failed tries are held back.
 */
struct bench_reopen {
	bool opened;
	unsigned int busy_reopens;	/* opens that first saw -EBUSY */
	uint64_t busy_wait_ns;
};

int bench_open_retry(struct bench_reopen *ro,
		     int (*open_fn)(void *arg), void *arg);
/* A note on the reopens that waited, if any. */
void bench_reopen_print(const struct bench_reopen *ro);
/*
 * uf_dev_open() of the target on io_uring, through bench_open_retry(),
 * with UF_DEV_FORCE if t->force, and shaped by t->shape if t->shaped.
 */
int bench_dev_open(struct bench_reopen *ro, struct uf_cache *cache,
		   const struct bench_target *t, struct uf_dev **dev);

/*
 * One run of uflush on the target: a cache of cfg, the target opened in
 * it (bench_dev_open), one file (inode 1) over [0, range), fn, and the
 * cache closed again (the file and device with it).  0 or the first
 * error, with what failed in why.
 */
typedef int (*bench_uflush_fn)(void *priv, struct uf_cache *cache,
			       struct uf_dev *dev, struct uf_file *file);
int bench_uflush_run(const struct uf_cache_config *cfg,
		     struct bench_reopen *ro, const struct bench_target *t,
		     uint64_t range, bench_uflush_fn fn, void *priv,
		     char *why, size_t len);

/*
 * Writer i's file when writers go round-robin over nd devices, each file
 * fsize bytes, side by side on its device: inode i + 1 on dev[i % nd] at
 * (i / nd) * fsize.  On failure why says so.  uf_file_open()'s return.
 */
/*
 * uf_cache_close(cache), which writes the rest, if cache is set.  Returns
 * err if nonzero, else the close's error, saying so in why.
 */
int bench_cache_close(struct uf_cache *cache, int err, char *why,
		      size_t len);

int bench_spread_file(struct uf_dev *const *dev, unsigned int nd,
		      unsigned int i, uint64_t fsize, struct uf_file **f,
		      char *why, size_t len);

/*
 * Write [off, off + len) of a file through the cache in 1 MiB uf_pwrites
 * of buf (1 MiB); len a multiple of 1 MiB.  Stops early on bench_stop.
 * 0, uf_pwrite's error, or -EIO for a short write.
 */
int bench_fill_file(struct uf_file *f, uint64_t off, uint64_t len,
		    const void *buf);

/* ------------------------------------------------------------------ */
/* A run's surroundings                                                */

struct bench_env {
	const char *cmd;
	char kernel[160];
	bool have_fio;
	char fio_version[64];
	char fio_why[256];
};

/*
 * Install the signal handlers, read the kernel version and, if want_fio,
 * look for fio (saying on stderr when it is missing).  -errno if the
 * signals cannot be set.
 */
int bench_env_init(struct bench_env *env, const char *cmd, bool want_fio);
/* "kernel:  ..." + extra and, if fio was wanted, "fio:     ..." lines. */
void bench_env_print(const struct bench_env *env, const char *extra,
		     bool fio);
/*
 * Open a "fio" object with members available, version, why_missing; the
 * caller may add more, then closes it with bench_json_end().
 */
void bench_fio_json(struct bench_json *j, const struct bench_env *env);
/*
 * The exit code: 128 + the signal (130 SIGINT, 143 SIGTERM; and a message)
 * if interrupted, 1 on err, else 0.
 */
int bench_exit_code(const char *cmd, int err);

/*
 * What a scenario on one device holds besides its own: the options
 * --reps, --dev, --force, --json (BENCH_OPTS_COMMON_END), the run's
 * surroundings, the device and its reopen count.
 */
struct bench_common {
	unsigned int reps;
	const char *dev;
	bool force;
	const char *json;
	struct bench_env env;
	struct bench_target t;
	struct bench_reopen ro;
};

#define BENCH_OPTS_COMMON_END(cm) \
	BENCH_OPTS_DEV_END(&(cm).dev, &(cm).force, &(cm).json)

/* ------------------------------------------------------------------ */
/* Holding the host to a uflush cache's limits (bench/host.c)          */

/*
 * The host kernel's dirty limits in bytes for the length of a baseline
 * run: vm.dirty_bytes and vm.dirty_background_bytes set, the four knobs
 * as they were saved first and put back by bench_dirty_restore() (a
 * byte value where one was set, else the ratio: writing one of a pair
 * zeroes the other), or at exit if the caller did not get there.
 * vm_dir is "/proc/sys/vm" when NULL (a test points it elsewhere).
 */
struct bench_dirty {
	const char *vm_dir;
	bool saved;			/* the old values are held */
	bool changed;			/* a knob was written and not (yet)
					 * put back */
	unsigned long old_ratio, old_bytes, old_bg_ratio, old_bg_bytes;
	uint64_t dirty_bytes, bg_bytes;	/* what was set, read back */
	bool applied;
	char why[256];			/* why not, if !applied */
	struct bench_dirty *next;	/* held ones, restored at exit */
};

/* 0, or -errno with the reason in d->why (the old values restored). */
int bench_dirty_set(struct bench_dirty *d, uint64_t dirty_bytes,
		    uint64_t bg_bytes);
/* Put the saved values back; 0 or -errno (and a line on stderr). */
int bench_dirty_restore(struct bench_dirty *d);
/* "vm.dirty_ratio 20 (dirty_bytes 0), ..." as saved. */
void bench_dirty_fmt_old(const struct bench_dirty *d, char *buf, size_t len);

/*
 * A memory cgroup of limit bytes for a baseline: made below the
 * process's own group (cgroup v2 "memory.max" if the v2 hierarchy has
 * the memory controller, else v1 "memory.limit_in_bytes"), entered by
 * the whole process around a child it spawns (the child starts inside
 * and stays there), left and removed after (also at exit).
 */
struct bench_memcg {
	int version;			/* 1 or 2; 0: none could be made */
	char dir[512];			/* the group */
	char home[512];			/* the group we came from */
	uint64_t limit;
	bool made, inside;
	char why[320];			/* why there is none */
	struct bench_memcg *next;
};

/* 0, or -errno with the reason in m->why. */
int bench_memcg_create(struct bench_memcg *m, const char *name,
		       uint64_t limit);
int bench_memcg_enter(struct bench_memcg *m);
int bench_memcg_leave(struct bench_memcg *m);
/* Peak usage in bytes since made (v1 max_usage, v2 memory.peak); 0. */
uint64_t bench_memcg_peak(const struct bench_memcg *m);
/* Leave it if inside and remove it. */
void bench_memcg_destroy(struct bench_memcg *m);

/* sync(), then drop the host's page cache (root): 0 or -errno. */
int bench_drop_caches(void);

/* ------------------------------------------------------------------ */
/* A run of a device benchmark (bench/host.c)                          */

/* The first number in a file (sysctl, sysfs); 0 or -errno. */
int bench_read_ulong(const char *path, unsigned long *v);
/* CPU seconds of the calling thread; busy CPU seconds of the host. */
double bench_thread_cpu(void);
double bench_host_busy(void);

/* What a run costs around it: wall, CPU, host CPU, device requests. */
struct bench_probe {
	uint64_t t0;
	double cpu0, host0;
	bool dev_ok;
	uint64_t ios0, sectors0;
};

struct bench_probed {
	double secs;
	double cpu_secs;		/* the process, all threads */
	double host_cpu_secs;		/* every CPU of the host */
	bool have_dev;
	uint64_t dev_ios;		/* write requests the device did */
	uint64_t dev_sectors;		/* 512-byte sectors */
};

void bench_probe_start(const struct bench_target *t, struct bench_probe *p);
void bench_probe_end(const struct bench_target *t,
		     const struct bench_probe *p, struct bench_probed *r);
/*
 * The medians over n records (stride bytes apart, a struct bench_probed
 * at byte off of each) of the device's write requests and their mean
 * size in KiB, over the runs that counted any; false if none did.
 */
bool bench_probed_dev(const void *recs, unsigned int n, size_t stride,
		      size_t off, double *ios, double *kib);

/* What uflush counted over a run: uf_cache_stats/uf_dev_stats deltas. */
struct bench_uf_snap {
	struct uf_cache_stats cs;
	struct uf_dev_stats ds;
};

struct bench_uf_counts {
	unsigned long pages_dirtied;
	unsigned long pages_written;	/* written back */
	unsigned long write_errors;
	unsigned long dirty_thresh;	/* pages, at the end */
	unsigned long background_thresh;
	uint64_t write_ios;		/* write requests uflush submitted */
	uint64_t write_bytes;
	unsigned long bdi_written_kb;
	unsigned long bdi_bw_kbps;	/* bandwidth estimate at the end */
	unsigned long works_done;	/* wb_writeback works */
};

void bench_uf_snap(struct uf_cache *cache, struct uf_dev *dev,
		   struct bench_uf_snap *s);
/* The counts since s0. */
void bench_uf_counts(const struct bench_uf_snap *s0, struct uf_cache *cache,
		     struct uf_dev *dev, struct bench_uf_counts *c);
/* Arrays over the runs (a bench_uf_counts at off of each record). */
void bench_json_uf_counts(struct bench_json *j, const void *recs,
			  unsigned int n, size_t stride, size_t off);

/*
 * [0, n) in a random order drawn from seed (Fisher-Yates over
 * xorshift64), of which the first k places are drawn (the rest is left
 * over); free() it.  NULL if n is 0 or too large, or without memory.
 */
uint32_t *bench_permutation(uint64_t n, uint64_t k, uint64_t seed);

/* ------------------------------------------------------------------ */
/* One 4 KiB copy per page, and issue 11's CPU bound (bench/host.c)    */

/* The L2 cache of CPU 0 in bytes from sysfs; 0 if unknown. */
size_t bench_l2_bytes(void);
/*
 * The working set of the copy cost: 4 x the L2 cache (8 MiB if its size
 * is unknown), so that the copies miss the L2 as a cache's frames do.
 */
size_t bench_copy_wset(void);
/*
 * CPU seconds of this thread to memcpy pages 4 KiB buffers from src
 * (src_len bytes, taken 4 KiB at a time in turn) to destinations that
 * walk a prefaulted working set of wset bytes.  -ENOMEM.
 */
int bench_copy_cost(const void *src, size_t src_len, uint64_t pages,
		    size_t wset, double *secs);
/* secs per 10^9 bytes; NAN if bytes is 0. */
double bench_per_gb(double secs, uint64_t bytes);
/*
 * Issue 11's CPU bound for buffered writes, in CPU seconds per GB:
 * 2 x (fio's CPU per GB + one 4 KiB copy per page per GB).  NAN if
 * either is not a number.
 */
double bench_cpu_bound(double fio_per_gb, double copy_per_gb);

/* ------------------------------------------------------------------ */
/* Ratios, targets, and the tables and JSON of a device benchmark      */

/*
 * a[i] / b[i] for the repetitions both have (a sample pair from the same
 * repetition), into st: the spread of a ratio.  n = 0 if none.
 */
void bench_paired_stats(const struct bench_samples *a,
			const struct bench_samples *b, struct bench_stats *st);
/* The ratio of the medians of a and b in col, the paired min-max in col + 1. */
void bench_table_paired(struct bench_table *t, unsigned int row,
			unsigned int col, const struct bench_samples *a,
			const struct bench_samples *b);
/* The median of a double field of n records in a cell, printed by fmt. */
__attribute__((format(printf, 4, 0)))
void bench_table_median(struct bench_table *t, unsigned int row,
			unsigned int col, const char *fmt, const void *recs,
			unsigned int n, size_t stride, size_t off);
#define BENCH_ROW_CELL(t, row, col, fmt, r, type, field)		\
	bench_table_median(t, row, col, fmt, (r)->runs, (r)->n,	\
			   sizeof(type), offsetof(type, field))
/* Statistics / JSON (bench_json_samples) of a double field of records. */
void bench_field_stats(const void *recs, unsigned int n, size_t stride,
		       size_t off, struct bench_stats *st);
void bench_json_field(struct bench_json *j, const char *key,
		      const void *recs, unsigned int n, size_t stride,
		      size_t off);
/*
 * The samples / statistics of a double field of a scenario's row: a
 * struct with runs[] (of type) and n.
 */
#define BENCH_ROW_SAMPLES(row, type, field, s)				\
	bench_samples_gather(s, (row)->runs, (row)->n, sizeof(type),	\
			     offsetof(type, field))
#define BENCH_ROW_STATS(row, type, field, st)				\
	bench_field_stats((row)->runs, (row)->n, sizeof(type),		\
			  offsetof(type, field), st)
/* The samples of field of row and of base, to pair them rep by rep. */
#define BENCH_ROW_PAIR(row, base, type, field, a, b) do {		\
	BENCH_ROW_SAMPLES(row, type, field, a);				\
	BENCH_ROW_SAMPLES(base, type, field, b);			\
} while (0)
/* bench_probed_dev() over a row's runs (their bench_probed is probe). */
#define BENCH_ROW_DEV(row, type, ios, kib)				\
	bench_probed_dev((row)->runs, (row)->n, sizeof(type),		\
			 offsetof(type, probe), ios, kib)
/* A JSON array of expr over runs[0..n-1], each in turn called run. */
#define BENCH_JSON_RUNS(j, key, runs, n, run, expr) do {		\
	double v_[BENCH_MAX_REPS];					\
	unsigned int i_;						\
									\
	for (i_ = 0; i_ < (n) && i_ < BENCH_MAX_REPS; i_++) {		\
		const __typeof__((runs)[0]) *run = &(runs)[i_];		\
									\
		v_[i_] = (double)(expr);				\
	}								\
	bench_json_nums(j, key, v_, i_);				\
} while (0)
/*
 * "  what  ratio (min-max)  target >= goal: met": the ratio of the
 * medians of a and b, the spread of the paired ratios, at most goal if
 * not at_least; MISSED if not met, a dash if either has no sample.
 */
void bench_print_target(const char *what, const struct bench_samples *a,
			const struct bench_samples *b, bool at_least,
			double goal);
/*
 * A case's row: its name in column 0; if it has no run (n == 0), "skipped"
 * or "no run" in col and -ENODATA.  The row, or -ENOSPC.
 */
int bench_table_case(struct bench_table *t, unsigned int col,
		     const char *name, const struct bench_case *bc,
		     unsigned int n);
/* bench_probed_dev()'s medians in col and col + 1, or dashes. */
void bench_table_dev(struct bench_table *t, unsigned int row,
		     unsigned int col, const void *recs, unsigned int n,
		     size_t stride, size_t off);
/* Open a case's object: case, status, reason, cmd. */
void bench_json_case(struct bench_json *j, const char *key,
		     const struct bench_case *bc, unsigned int n,
		     const char *cmd);
/* dev_write_ios and dev_write_sectors of each run (0 if not counted). */
void bench_json_probed(struct bench_json *j, const void *recs,
		       unsigned int n, size_t stride, size_t off);
/*
 * Open a "cache" object (pages, policy, engine io_uring) for the uflush
 * case; the caller may add more, then closes it with bench_json_end().
 */
void bench_json_uflush(struct bench_json *j, unsigned long pages,
		       const char *policy);
/*
 * After a run callback's run that returned err: true if the callback is to
 * return *ret instead of recording a sample: 0 when the benchmark is
 * stopping; on an error (said on stderr with the case's why) BENCH_SKIP
 * if the case has no run yet (n == 0), else err.
 */
bool bench_run_over(int err, const struct bench_case *bc, unsigned int n,
		    int *ret);
/* bench_exit_code(), and 1 (saying so) if uflush never ran. */
int bench_exit_uflush(const char *cmd, int err, unsigned int uflush_runs);
/* key: the ratio of the medians, key_min, key_max: the paired spread. */
void bench_json_paired(struct bench_json *j, const char *key,
		       const struct bench_samples *a,
		       const struct bench_samples *b);

#endif /* UF_BENCH_HARNESS_H */
