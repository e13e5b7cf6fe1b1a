// SPDX-License-Identifier: MIT
/*
 * bench/randwrite.c - `uflush-bench randwrite`: 4 KiB random overwrites
 * through uflush's page cache beside fio's O_DIRECT random writes on the
 * same device, in the same run (issue 11, target 2):
 *
 *   fio raw   fio, O_DIRECT, 4 KiB randwrite at QD 64 through io_uring
 *             over the same range, the same number of writes, then fsync:
 *             what the device does with random 4 KiB writes;
 *   uflush    one thread uf_pwrite()s 4 KiB at page-aligned offsets of a
 *             file of --file-size bytes (4 x the cache by default) through
 *             a cache of --cache bytes, then uf_fsync().
 *
 * The offsets are a permutation of the file's pages, drawn once from a
 * fixed seed (--seed; Fisher-Yates over xorshift64): each page is written
 * at most once and every rep writes the same sequence, the first --writes
 * of it.  fio's randwrite keeps a random map by default, so it too writes
 * each block at most once (in its own order).  The device is written in
 * full before the runs (untimed), so that no write lands in a hole; each
 * uflush run starts with an empty cache, and a full-page overwrite never
 * reads.
 *
 * Each case is timed from its first write to the return of its fsync;
 * IOPS = writes / that time.  The two cases alternate, the order rotated
 * each rep; medians, min-max spreads, the ratio of the medians and the
 * spread of the per-rep ratios.  Beside them what the flusher merged: the
 * pages uflush wrote back and the write requests it submitted
 * (uf_cache_stats, uf_dev_stats), and the requests the device completed
 * and their mean size (its sysfs stat, after the block layer).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uflush.h"
#include "bench.h"

#define RW_PAGE			4096u
#define RW_DEFAULT_PAGES	65536u
#define RW_FILE_PER_CACHE	4	/* default --file-size: 4 x the cache */
#define RW_BUF_PAGES		256	/* distinct 4 KiB sources, in turn */
#define RW_PREFILL_CHUNK	(8u << 20)
#define RW_QD			64

enum rw_case { RW_FIO, RW_UFLUSH, RW_NR };

static const char *const rw_names[RW_NR] = { "fio raw", "uflush" };
static const char *const rw_keys[RW_NR] = { "fio_raw", "uflush" };

struct rw_opts {
	uint64_t file_size;
	unsigned int pages, reps, seed;
	unsigned int writes;		/* 0: every page of the file */
	const char *policy, *dev, *json;
	bool file_size_given, force, no_fio;
};

/* What one run measured. */
struct rw_run {
	double iops;
	double secs;			/* first write to fsync return */
	double cpu;			/* % of one CPU: the process / fio */
	double host_cpu;		/* % of one CPU: the whole host */
	struct bench_probed probe;	/* and the device's requests */
	/* uflush only */
	double write_secs;		/* the uf_pwrite() loop alone */
	double fsync_secs;
	struct bench_uf_counts uf;	/* what uflush counted */
};

struct rw_results {
	struct bench_case *bc;
	char cmd[1024];			/* fio's command line */
	unsigned int n;
	struct rw_run runs[BENCH_MAX_REPS];
};

struct rw_bench {
	struct rw_opts o;
	struct bench_env env;
	struct bench_target t;		/* range: the file */
	char policy[512];
	struct bench_reopen ro;
	uint64_t writes;		/* per run */
	uint32_t *perm;			/* the pages, in the order written */
	void *buf;			/* RW_BUF_PAGES of random bytes */
	struct bench_case cases[RW_NR];
	struct rw_results rows[RW_NR];
};

static struct rw_bench rw_bench = {
	.o = { .pages = RW_DEFAULT_PAGES, .seed = 1, .reps = 3 },
};

/* Statistics of a field of a case's runs; its IOPS paired with base's. */
#define ROW_STATS(r, field, st) BENCH_ROW_STATS(r, struct rw_run, field, st)
#define ROW_IOPS(r, base, a, b) BENCH_ROW_PAIR(r, base, struct rw_run, iops, a, b)
#define ROW_DEV(r, ios, kib) BENCH_ROW_DEV(r, struct rw_run, ios, kib)

/* ------------------------------------------------------------------ */
/* uflush                                                              */

/* What one uflush run needs beside the cache, device and file. */
struct rw_arg {
	struct rw_bench *b;
	struct rw_run *r;
};

static int rw_write(void *priv, struct uf_cache *cache, struct uf_dev *dev,
		    struct uf_file *file)
{
	struct rw_bench *b = ((struct rw_arg *)priv)->b;
	struct rw_run *r = ((struct rw_arg *)priv)->r;
	struct bench_uf_snap s0;
	const char *src = b->buf;
	struct bench_probe p;
	uint64_t i, tw;
	ssize_t n;
	int err = 0;

	bench_uf_snap(cache, dev, &s0);
	bench_probe_start(&b->t, &p);
	for (i = 0; i < b->writes && !bench_stop; i++) {
		n = uf_pwrite(file, src + (i % RW_BUF_PAGES) * RW_PAGE,
			      RW_PAGE, (uint64_t)b->perm[i] * RW_PAGE);
		if (n != RW_PAGE) {
			err = n < 0 ? (int)n : -EIO;
			break;
		}
	}
	tw = uf_now_ns();
	if (!err)
		err = uf_fsync(file);
	bench_probe_end(&b->t, &p, &r->probe);
	bench_uf_counts(&s0, cache, dev, &r->uf);
	r->secs = r->probe.secs;
	r->iops = i / r->secs;
	r->cpu = r->probe.cpu_secs / r->secs * 100;
	r->host_cpu = r->probe.host_cpu_secs / r->secs * 100;
	r->write_secs = (tw - p.t0) / 1e9;
	r->fsync_secs = r->secs - r->write_secs;
	return err;
}

static int run_uflush(struct rw_bench *b, struct rw_results *row,
		      struct rw_run *r)
{
	struct rw_arg arg = { b, r };
	struct uf_cache_config cfg;

	memset(r, 0, sizeof(*r));
	uf_cache_config_init(&cfg);
	cfg.nr_pages = b->o.pages;
	cfg.policy = b->o.policy;
	return bench_uflush_run(&cfg, &b->ro, &b->t, b->t.range, rw_write, &arg,
				row->bc->why, sizeof(row->bc->why));
}

/* ------------------------------------------------------------------ */
/* fio                                                                 */

static int fio_job_build(const struct rw_bench *b, struct fio_job *job)
{
	int err = 0;

	fio_job_init(job);
	err |= fio_arg(job, "--name=uflush-randwrite");
	err |= fio_arg(job, "--filename=%s", b->t.path);
	err |= fio_arg(job, "--direct=1");
	err |= fio_arg(job, "--rw=randwrite");
	err |= fio_arg(job, "--bs=4k");
	err |= fio_arg(job, "--iodepth=%d", RW_QD);
	err |= fio_arg(job, "--ioengine=io_uring");
	err |= fio_arg(job, "--size=%" PRIu64, b->t.range);
	err |= fio_arg(job, "--io_size=%" PRIu64, b->writes * RW_PAGE);
	err |= fio_arg(job, "--randseed=%u", b->o.seed);
	err |= fio_arg(job, "--end_fsync=1");
	err |= fio_arg(job, "--output-format=json");
	return err ? -E2BIG : 0;
}

static int run_fio(struct rw_bench *b, struct rw_results *row, struct rw_run *r)
{
	struct fio_result res;
	struct fio_job job;
	struct bench_probe p;
	int err;

	memset(r, 0, sizeof(*r));
	err = fio_job_build(b, &job);
	if (err)
		return err;
	fio_job_cmdline(&job, row->cmd, sizeof(row->cmd));
	bench_probe_start(&b->t, &p);
	err = fio_run(&job, &res);
	bench_probe_end(&b->t, &p, &r->probe);
	if (err) {
		snprintf(row->bc->why, sizeof(row->bc->why), "fio: %s", res.err);
		return err;
	}
	/* fio's runtime covers its writes and its end_fsync */
	r->secs = res.bw_bytes > 0 ? res.io_bytes / res.bw_bytes : 0;
	r->iops = r->secs > 0 ? res.io_bytes / RW_PAGE / r->secs : 0;
	r->cpu = res.usr_cpu + res.sys_cpu;
	r->host_cpu = r->probe.host_cpu_secs / r->probe.secs * 100;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The schedule                                                        */

static int run_one(void *priv, unsigned int c, unsigned int rep)
{
	struct rw_bench *b = priv;
	struct rw_results *row = &b->rows[c];
	struct rw_run r;
	int err, ret;

	err = c == RW_UFLUSH ? run_uflush(b, row, &r) : run_fio(b, row, &r);
	if (bench_run_over(err, row->bc, row->n, &ret))
		return ret;
	row->runs[row->n++] = r;
	fprintf(stderr, "  rep %u/%u  %-8s %9.0f IOPS  %6.2f s  cpu %4.0f%%",
		rep + 1, b->o.reps, rw_names[c], r.iops, r.secs, r.cpu);
	if (c == RW_UFLUSH)
		fprintf(stderr, "  (writes %.2f s, fsync %.2f s; %" PRIu64 " requests for %lu pages)",
			r.write_secs, r.fsync_secs, r.uf.write_ios,
			r.uf.pages_written);
	fprintf(stderr, "\n");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

enum {
	COL_CASE, COL_IOPS, COL_SPREAD, COL_X_FIO, COL_X_FIO_SPREAD, COL_CPU,
	COL_HOST, COL_REQS, COL_REQ_KIB, COL_PER_REQ,
};

static const char *const rw_cols[] = {
	"case", ">IOPS", ">(min-max)", ">x fio raw", ">(min-max)", ">cpu%",
	">host cpu%", ">dev writes", ">avg KiB", ">writes/req",
};

static void rw_row(struct bench_table *t, const void *priv, unsigned int c)
{
	const struct rw_bench *b = priv;
	const struct rw_results *r = &b->rows[c];
	struct bench_samples x, y;
	struct bench_stats m;
	double ios, kib;
	int row = bench_table_case(t, COL_IOPS, rw_names[c], r->bc, r->n);

	if (row < 0)
		return;
	ROW_STATS(r, iops, &m);
	bench_table_stats(t, row, COL_IOPS, &m);
	ROW_IOPS(r, &b->rows[RW_FIO], &x, &y);
	bench_table_paired(t, row, COL_X_FIO, &x, &y);
	BENCH_ROW_CELL(t, row, COL_CPU, "%.0f", r, struct rw_run, cpu);
	BENCH_ROW_CELL(t, row, COL_HOST, "%.0f", r, struct rw_run, host_cpu);
	bench_table_dev(t, row, COL_REQS, r->runs, r->n, sizeof(r->runs[0]),
			offsetof(struct rw_run, probe));
	if (ROW_DEV(r, &ios, &kib))
		bench_table_set(t, row, COL_PER_REQ, "%.2f", b->writes / ios);
	else
		bench_table_set(t, row, COL_PER_REQ, "-");
}

static void rw_header(const void *priv)
{
	const struct rw_bench *b = priv;
	uint64_t cache_bytes = (uint64_t)b->o.pages * RW_PAGE;

	printf("\nuflush-bench randwrite: 4 KiB random overwrites through the cache vs fio O_DIRECT randwrite\n");
	bench_target_print(&b->t, NULL);
	printf("file:    %.2f GiB (%.1f x the uflush cache), prefilled; %" PRIu64 " writes of 4 KiB per run\n",
	       b->t.range / (double)(1u << 30), (double)b->t.range / cache_bytes,
	       b->writes);
	printf("offsets: uflush a fixed-seed permutation of the file's pages (seed %u; each page at most\n"
	       "         once, the same sequence every rep); fio its own random order with its random map\n"
	       "         (each block at most once), --randseed %u\n",
	       b->o.seed, b->o.seed);
	printf("uflush:  %u pages (%.0f MiB), engine io_uring, one writer thread, an empty cache each run\n",
	       b->o.pages, cache_bytes / (double)(1u << 20));
	printf("fio:     O_DIRECT, io_uring, QD %d, the same range and number of writes\n",
	       RW_QD);
	printf("policy:  %s\n", b->policy);
	bench_env_print(&b->env, NULL, true);
	printf("runs:    %u reps, the two cases interleaved (order rotated each rep); medians%s\n\n",
	       b->o.reps, bench_stop ? " (INTERRUPTED: partial results)" : "");
}

/* What the flusher merged: pages written back per request it submitted. */
static void print_merged(const struct rw_bench *b)
{
	const struct rw_results *r = &b->rows[RW_UFLUSH];
	const struct rw_run *last;
	struct bench_stats w, f;
	double ios, kib;

	if (!r->n)
		return;
	last = &r->runs[r->n - 1];
	ROW_STATS(r, write_secs, &w);
	ROW_STATS(r, fsync_secs, &f);
	printf("\nuflush, medians over %u run%s (min-max), counters of the last run:\n",
	       r->n, r->n == 1 ? "" : "s");
	printf("  uf_pwrite loop alone  %.2f s (%.2f-%.2f) = %.0f writes/s into the cache\n",
	       w.median, w.min, w.max, b->writes / w.median);
	printf("  uf_fsync              %.2f s (%.2f-%.2f)\n", f.median, f.min,
	       f.max);
	printf("  pages                 dirtied %lu, written back %lu\n",
	       last->uf.pages_dirtied, last->uf.pages_written);
	if (last->uf.write_ios)
		printf("  merged by the flusher %" PRIu64 " write requests submitted (uf_dev_stats), %.2f pages = %.1f KiB each\n",
		       last->uf.write_ios,
		       (double)last->uf.pages_written / last->uf.write_ios,
		       last->uf.write_bytes / 1024.0 / last->uf.write_ios);
	if (ROW_DEV(r, &ios, &kib))
		printf("  at the device         %.0f write requests completed, %.1f KiB each (sysfs, median)\n",
		       ios, kib);
	printf("  limits                dirty_thresh %lu pages, background_thresh %lu\n",
	       last->uf.dirty_thresh, last->uf.background_thresh);
	if (last->uf.write_errors)
		printf("  WRITE ERRORS          %lu\n", last->uf.write_errors);
}

static void rw_notes(const void *priv)
{
	const struct rw_bench *b = priv;
	struct bench_samples x, y;
	unsigned int c;

	print_merged(b);
	printf("\nissue 11 target 2: ratio of the medians (min-max of the per-rep ratios)\n");
	ROW_IOPS(&b->rows[RW_UFLUSH], &b->rows[RW_FIO], &x, &y);
	bench_print_target("uflush / fio raw IOPS", &x, &y, true, 0.8);
	printf("\nIOPS = writes / time from the first write to the return of fsync (fio: its runtime,\n"
	       "which includes --end_fsync).  cpu%% = CPU per wall second: uflush all its threads, fio\n"
	       "its job's usr+sys; host cpu%% = all CPUs (/proc/stat).  dev writes, avg KiB = write\n"
	       "requests the device completed and their mean size (sysfs stat); writes/req = the\n"
	       "4 KiB writes issued per device request (> 1: merged).\n");
	bench_reopen_print(&b->ro);
	for (c = 0; c < RW_NR; c++)
		if (b->cases[c].skipped)
			printf("%s skipped: %s\n", rw_names[c], b->cases[c].why);
	if (b->rows[RW_FIO].cmd[0])
		printf("\nfio command line (once per rep):\n  %s\n",
		       b->rows[RW_FIO].cmd);
}

#define JSON_STATS(j, r, field) \
	bench_json_field(j, #field, (r)->runs, (r)->n, sizeof(struct rw_run), \
			 offsetof(struct rw_run, field))

static void rw_json_case(struct bench_json *j, const void *priv,
			 unsigned int c)
{
	const struct rw_bench *b = priv;
	const struct rw_results *r = &b->rows[c];
	struct bench_samples x, y;

	bench_json_case(j, rw_keys[c], r->bc, r->n, r->cmd);
	JSON_STATS(j, r, iops);
	JSON_STATS(j, r, secs);
	JSON_STATS(j, r, cpu);
	JSON_STATS(j, r, host_cpu);
	ROW_IOPS(r, &b->rows[RW_FIO], &x, &y);
	bench_json_paired(j, "ratio_fio_raw", &x, &y);
	bench_json_probed(j, r->runs, r->n, sizeof(r->runs[0]),
			  offsetof(struct rw_run, probe));
	if (c == RW_UFLUSH) {
		JSON_STATS(j, r, write_secs);
		JSON_STATS(j, r, fsync_secs);
		bench_json_uf_counts(j, r->runs, r->n, sizeof(r->runs[0]),
				     offsetof(struct rw_run, uf));
	}
	bench_json_end(j);
}

static void rw_json_config(struct bench_json *j, const void *priv)
{
	const struct rw_bench *b = priv;

	bench_fio_json(j, &b->env);
	bench_json_u64(j, "iodepth", RW_QD);
	bench_json_end(j);
	bench_json_u64(j, "file_bytes", b->t.range);
	bench_json_u64(j, "writes", b->writes);
	bench_json_u64(j, "write_bytes", RW_PAGE);
	bench_json_str(j, "offsets", "fixed-seed permutation, each page at most once");
	bench_json_u64(j, "seed", b->o.seed);
	bench_json_u64(j, "reps", b->o.reps);
	bench_json_uflush(j, b->o.pages, b->policy);
	bench_json_end(j);
}

static const struct bench_report rw_report = BENCH_REPORT_OF(rw);

/* ------------------------------------------------------------------ */
/* Options                                                             */

#define RW_ABOUT \
	"4 KiB random overwrites through uflush's page cache (one thread,\n" \
	"uf_pwrite at page-aligned offsets of a prefilled file 4 x the cache,\n" \
	"a fixed-seed permutation of its pages, then uf_fsync) beside fio's\n" \
	"O_DIRECT 4 KiB randwrite at QD 64 through io_uring over the same range\n" \
	"and number of writes; interleaved, IOPS medians, min-max spreads and\n" \
	"the ratio (issue 11's target 2: >= 0.8), and how much the flusher\n" \
	"merged (requests submitted and completed, their mean size).\n"

static const struct bench_opt rw_opts[] = {
	BENCH_OPT_CACHE(&rw_bench.o.pages, 16, 1u << 28,
			"the uflush cache (default 256M; --pages N: frames)"),
	{ .name = "file-size", .arg = "SIZE", .type = BENCH_OPT_SIZE,
	  .dest = &rw_bench.o.file_size, .min = 1u << 20,
	  .max = 1ull << 44, .align = RW_PAGE,
	  .given = &rw_bench.o.file_size_given,
	  .help = "the file overwritten, and the scratch device size\n"
		  "(default 4 x the cache: 1G for 256 MiB)" },
	BENCH_UINT("writes", "N", &rw_bench.o.writes, 1, UINT_MAX, NULL,
		   "4 KiB writes per run, at most the file's pages\n"
		   "(default: every page of the file once)"),
	BENCH_UINT("seed", "N", &rw_bench.o.seed, 0, UINT_MAX, NULL,
		   "the permutation's seed and fio's --randseed (default 1)"),
	BENCH_OPT_REPS(&rw_bench.o.reps, "repetitions of the two cases (default 3)"),
	BENCH_STR("policy", "SPEC", &rw_bench.o.policy,
		  "uflush flush policy: preset[,knob=value...]; the library's"),
	BENCH_OPT_DEV(&rw_bench.o.dev),
	BENCH_OPT_FORCE(&rw_bench.o.force),
	BENCH_FLAG("no-fio", &rw_bench.o.no_fio, "skip the fio baseline"),
	BENCH_OPT_JSON(&rw_bench.o.json),
	BENCH_OPT_END,
};

const struct bench_cmdline bench_randwrite_cmdline = {
	.cmd = "randwrite", .about = RW_ABOUT BENCH_SCRATCH_ABOUT,
	.opts = rw_opts, .epilog = BENCH_ENV_FIO,
};

/* ------------------------------------------------------------------ */
/* Main                                                                */

/*
 * After the options: the file, the offsets, the buffer, the cases, the
 * environment and the policy.  0, or the exit code.
 */
static int rw_setup(struct rw_bench *b)
{
	struct rw_opts *o = &b->o;
	uint64_t pages;
	unsigned int c;

	if (!o->file_size_given)
		o->file_size = (uint64_t)o->pages * RW_PAGE * RW_FILE_PER_CACHE;
	pages = o->file_size / RW_PAGE;
	if (o->writes > pages) {
		bench_err("randwrite", "--writes %u is more than the file's %" PRIu64 " pages",
			  o->writes, pages);
		return 2;
	}
	b->writes = o->writes ? o->writes : pages;
	b->perm = bench_permutation(pages, b->writes, o->seed);
	b->buf = bench_random_buffer(RW_BUF_PAGES * RW_PAGE);
	if (!b->perm || !b->buf) {
		bench_err("randwrite", "%s", strerror(ENOMEM));
		return 1;
	}
	for (c = 0; c < RW_NR; c++) {
		b->cases[c].name = rw_names[c];
		b->rows[c].bc = &b->cases[c];
	}
	if (bench_env_init(&b->env, "randwrite", !o->no_fio) ||
	    bench_check_policy("randwrite", o->policy, b->policy,
			       sizeof(b->policy)))
		return 2;
	if (!b->env.have_fio) {
		b->cases[RW_FIO].skipped = true;
		snprintf(b->cases[RW_FIO].why, sizeof(b->cases[RW_FIO].why),
			 "%.250s", b->env.fio_why);
	}
	return 0;
}

static int rw_run_all(struct rw_bench *b)
{
	struct bench_sched s = {
		.nr_cases = RW_NR, .cases = b->cases, .reps = b->o.reps,
		.rotate = true, .run = run_one, .priv = b,
	};
	uint64_t t0 = uf_now_ns();
	int err;

	bench_err("randwrite", "%s (%s), %.2f GiB file, %" PRIu64 " writes per run, %u reps",
		  b->t.path, b->t.desc, b->t.range / (double)(1u << 30),
		  b->writes, b->o.reps);
	err = bench_target_prefill(&b->t, b->t.range, RW_PREFILL_CHUNK);
	if (err) {
		bench_err("randwrite", "prefill failed: %s", strerror(-err));
		return err;
	}
	fprintf(stderr, "prefill: wrote %.2f GiB in %.1f s so that no write lands in a hole\n",
		b->t.range / (double)(1u << 30), (uf_now_ns() - t0) / 1e9);
	err = bench_sched_run(&s);
	if (err)
		return err;
	return bench_report(&rw_report, &b->env, &b->t, b->o.json, b, RW_NR);
}

int bench_randwrite_main(int argc, char **argv)
{
	struct rw_bench *b = &rw_bench;
	int err = bench_opts_parse(&bench_randwrite_cmdline, argc, argv,
				   stdout, stderr);

	if (err)
		return err > 0 ? 0 : 2;
	err = rw_setup(b);
	if (!err && !bench_target_open(&b->t, "randwrite", b->o.dev,
				       b->o.file_size, b->o.force)) {
		b->t.range = b->o.file_size;
		b->t.force = b->o.force;
		err = bench_stop ? 0 : rw_run_all(b);
		bench_target_close(&b->t);
		err = bench_exit_uflush("randwrite", err, b->rows[RW_UFLUSH].n);
	} else if (!err) {
		err = 1;
	}
	free(b->perm);
	free(b->buf);
	return err;
}
