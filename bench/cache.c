// SPDX-License-Identifier: MIT
/*
 * bench/cache.c - `uflush-bench cache`: sequential write throughput through
 * uflush's page cache beside two baselines on the same device, in the same
 * run:
 *
 *   fio raw       fio, O_DIRECT, 1 MiB writes at QD 32 through io_uring,
 *                 then fsync: what the device can do (the physical limit);
 *   kernel        fio, buffered psync writes to the same block device,
 *                 then fsync: the host kernel's page cache and flusher,
 *                 what a user would pick instead of uflush;
 *   uflush        one thread uf_pwrite()s --size bytes in --bs chunks into
 *                 a cache of --pages frames (so several times the cache
 *                 passes through it: background writeback and the dirty
 *                 throttle run in their steady state), then uf_fsync().
 *
 * Each case is timed from its first write to the return of its fsync; fio's
 * runtime includes its end_fsync.  The three cases run once per repetition
 * (--reps), the order rotated from one repetition to the next so that no
 * case always follows the same one, and the table prints medians, min-max
 * spreads and the ratios of the medians.  Before every run the host's page
 * cache is written back and dropped (drop_caches, as root), so that no run
 * inherits the pages or the dirty data of the one before.
 *
 * Beside MB/s: the CPU time of the process per wall second (for uflush all
 * its threads: the writer, the flusher, the I/O completion thread; for fio
 * its job's usr+sys as fio reports it), the busy time of the whole host
 * (which also counts the kernel's flusher and the loop device's workers),
 * and the write requests the device saw (its sysfs stat, after the block
 * layer has split and merged them).  For uflush also the time the writes
 * alone took, before fsync, and what uf_cache_stats()/uf_dev_stats() count.
 *
 * The device is a scratch loop device (direct I/O, verified in sysfs) over
 * a sparse file, or that file itself where a loop device cannot be made,
 * written once in full before the runs and destroyed at the end even on
 * SIGINT; or --dev PATH, which is overwritten.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"
#include "mm/mm.h"

#define CACHE_MAX_REPS		BENCH_MAX_REPS
#define CACHE_DEFAULT_SIZE	(1ull << 30)
#define CACHE_DEFAULT_BS	(1ull << 20)
#define CACHE_DEFAULT_PAGES	65536u
#define CACHE_PREFILL_CHUNK	(8u << 20)

enum cache_case { CASE_RAW, CASE_KERNEL, CASE_UFLUSH, NR_CASES };

static const char *const case_names[NR_CASES] = {
	"fio raw", "kernel page cache", "uflush",
};

static const char *const case_keys[NR_CASES] = {
	"fio_raw", "kernel_page_cache", "uflush",
};

struct cache_opts {
	uint64_t size;
	uint64_t bs;
	unsigned int pages;
	unsigned int reps;
	const char *policy;
	const char *dev;
	bool force;
	bool no_fio;
	bool no_drop;
	const char *json;
};

/* What one run measured. */
struct cache_run {
	double mbs;
	double secs;			/* first write to fsync return */
	double cpu;			/* % of one CPU: the process */
	double host_cpu;		/* % of one CPU: the whole host */
	struct bench_probed probe;	/* and the device's requests */
	/* uflush only */
	double write_secs;		/* the uf_pwrite() loop alone */
	double writer_cpu_secs;		/* the writer thread's CPU in it */
	double fsync_secs;
	unsigned long pages_dirtied;
	unsigned long pages_written;
	unsigned long bdi_written_kb;
	unsigned long bdi_bw_kbps;	/* bandwidth estimate at the end */
	unsigned long works_done;
	unsigned long dirty_thresh;	/* pages */
	unsigned long background_thresh;
	unsigned long write_errors;
};

struct cache_row {
	struct bench_case *bc;		/* skipped, why, runs */
	char cmd[1024];			/* fio's command line */
	unsigned int n;
	struct cache_run runs[CACHE_MAX_REPS];
};

struct cache_bench {
	struct cache_opts o;
	struct bench_env env;
	struct bench_target t;		/* its range: bytes written per run */
	char policy[512];		/* resolved: uf_cache_policy() */
	int drop_err;			/* first drop_caches failure */
	unsigned int drops;
	struct bench_reopen ro;
	unsigned long host_dirty_ratio;
	unsigned long host_bg_ratio;
	uint64_t host_avail;		/* MemAvailable at start, bytes */
	void *buf;			/* one --bs chunk of random bytes */
	struct bench_case cases[NR_CASES];
	struct cache_row rows[NR_CASES];
};

/* The benchmark, with the defaults of its options. */
static struct cache_bench cache_bench = {
	.o = {
		.size = CACHE_DEFAULT_SIZE, .bs = CACHE_DEFAULT_BS,
		.pages = CACHE_DEFAULT_PAGES, .reps = 3,
	},
};

/* ------------------------------------------------------------------ */
/* The machine: CPU, device counters, caches                          */

static void probe_end(const struct cache_bench *b, const struct bench_probe *p,
		      struct cache_run *r)
{
	bench_probe_end(&b->t, p, &r->probe);
	r->secs = r->probe.secs;
	r->cpu = r->probe.cpu_secs / r->secs * 100;
	r->host_cpu = r->probe.host_cpu_secs / r->secs * 100;
}

static void host_info(struct cache_bench *b)
{
	char line[256];
	unsigned long long kb;
	FILE *f;

	if (bench_read_ulong("/proc/sys/vm/dirty_ratio", &b->host_dirty_ratio))
		b->host_dirty_ratio = 0;
	if (bench_read_ulong("/proc/sys/vm/dirty_background_ratio",
		       &b->host_bg_ratio))
		b->host_bg_ratio = 0;
	f = fopen("/proc/meminfo", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			b->host_avail = kb << 10;
	fclose(f);
}

/*
 * Write back and drop the host's page cache, so that a run neither reads
 * the pages nor inherits the dirty data of the one before.  Untimed.
 */
static void drop_caches(struct cache_bench *b)
{
	int fd, err = 0;

	sync();
	if (b->o.no_drop)
		return;
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3\n", 2) != 2)
		err = -errno;
	if (fd >= 0)
		close(fd);
	if (!err) {
		b->drops++;
		return;
	}
	if (!b->drop_err)
		bench_err("cache", "warning: cannot drop the host's caches: %s; runs may see each other's pages",
			  strerror(-err));
	b->drop_err = err;
}

/* ------------------------------------------------------------------ */
/* uflush                                                              */

static void cache_config(const struct cache_bench *b,
			 struct uf_cache_config *cfg)
{
	uf_cache_config_init(cfg);
	cfg->nr_pages = b->o.pages;
	cfg->policy = b->o.policy;
}

/* Open a cache once, untimed, to learn what --policy resolves to. */
static int resolve_policy(struct cache_bench *b)
{
	struct uf_cache_config cfg;
	struct uf_cache *cache;
	const char *spec;
	int err;

	cache_config(b, &cfg);
	cfg.nr_pages = 16;
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		bench_err("cache", "cannot open a cache with policy %s: %s",
			  b->o.policy ? b->o.policy : "(default)",
			  strerror(-err));
		return err;
	}
	spec = uf_cache_policy(cache);
	snprintf(b->policy, sizeof(b->policy), "%s", spec ? spec : "?");
	uf_cache_close(cache);
	return 0;
}

/* The timed part: write the range sequentially, then fsync. */
static int uflush_write(struct cache_bench *b, struct uf_cache *cache,
			struct uf_dev *dev, struct uf_file *file,
			struct cache_run *r)
{
	struct uf_cache_stats cs0, cs1;
	struct uf_dev_stats ds0, ds1;
	struct bench_probe p;
	uint64_t off, tw;
	double tc0, tc1;
	ssize_t n;
	int err = 0;

	uf_cache_stats(cache, &cs0);
	uf_dev_stats(dev, &ds0);
	bench_probe_start(&b->t, &p);
	tc0 = bench_thread_cpu();
	for (off = 0; off < b->t.range && !bench_stop; off += b->o.bs) {
		n = uf_pwrite(file, b->buf, b->o.bs, off);
		if (n != (ssize_t)b->o.bs) {
			err = n < 0 ? (int)n : -EIO;
			break;
		}
	}
	tw = uf_now_ns();
	tc1 = bench_thread_cpu();
	if (!err)
		err = uf_fsync(file);
	probe_end(b, &p, r);
	uf_cache_stats(cache, &cs1);
	uf_dev_stats(dev, &ds1);
	r->write_secs = (tw - p.t0) / 1e9;
	r->writer_cpu_secs = tc1 - tc0;
	r->fsync_secs = r->secs - r->write_secs;
	r->mbs = off / 1e6 / r->secs;
	r->pages_dirtied = cs1.nr_dirtied - cs0.nr_dirtied;
	r->pages_written = cs1.nr_written - cs0.nr_written;
	r->bdi_written_kb = ds1.bdi_written_kb - ds0.bdi_written_kb;
	r->bdi_bw_kbps = ds1.bdi_write_bandwidth_kbps;
	r->works_done = ds1.works_done - ds0.works_done;
	r->dirty_thresh = cs1.dirty_thresh;
	r->background_thresh = cs1.background_thresh;
	r->write_errors = cs1.write_errors - cs0.write_errors;
	return err;
}

static int run_uflush(struct cache_bench *b, struct cache_row *row,
		      struct cache_run *r)
{
	struct uf_cache_config cfg;
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_dev *dev;
	int err, cerr;

	memset(r, 0, sizeof(*r));
	cache_config(b, &cfg);
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		snprintf(row->bc->why, sizeof(row->bc->why), "uf_cache_open: %s",
			 strerror(-err));
		return err;
	}
	err = bench_dev_open(&b->ro, cache, &b->t, &dev);
	if (err) {
		snprintf(row->bc->why, sizeof(row->bc->why), "uf_dev_open %s: %s",
			 b->t.path, strerror(-err));
		goto out;
	}
	err = uf_file_open(dev, 1, 0, b->t.range, NULL, NULL, &file);
	if (err) {
		snprintf(row->bc->why, sizeof(row->bc->why), "uf_file_open: %s",
			 strerror(-err));
		goto out;
	}
	err = uflush_write(b, cache, dev, file, r);
	if (err)
		snprintf(row->bc->why, sizeof(row->bc->why), "write/fsync: %s",
			 strerror(-err));
out:
	/* closes the file and the device; everything is clean by now */
	cerr = uf_cache_close(cache);
	if (!err && cerr) {
		snprintf(row->bc->why, sizeof(row->bc->why), "uf_cache_close: %s",
			 strerror(-cerr));
		err = cerr;
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* fio                                                                 */

static int fio_job_build(const struct cache_bench *b, enum cache_case c,
			 struct fio_job *job)
{
	bool raw = c == CASE_RAW;
	int err = 0;

	fio_job_init(job);
	err |= fio_arg(job, "--name=uflush-cache-%s", raw ? "raw" : "kernel");
	err |= fio_arg(job, "--filename=%s", b->t.path);
	err |= fio_arg(job, "--direct=%d", raw ? 1 : 0);
	err |= fio_arg(job, "--rw=write");
	if (b->o.bs % (1u << 20))
		err |= fio_arg(job, "--bs=%" PRIu64 "k", b->o.bs >> 10);
	else
		err |= fio_arg(job, "--bs=%" PRIu64 "M", b->o.bs >> 20);
	if (raw) {
		err |= fio_arg(job, "--iodepth=32");
		err |= fio_arg(job, "--ioengine=io_uring");
	} else {
		err |= fio_arg(job, "--ioengine=psync");
	}
	err |= fio_arg(job, "--size=%" PRIu64, b->t.range);
	err |= fio_arg(job, "--end_fsync=1");
	err |= fio_arg(job, "--output-format=json");
	return err ? -E2BIG : 0;
}

static int run_fio(struct cache_bench *b, enum cache_case c,
		   struct cache_row *row, struct cache_run *r)
{
	struct fio_result res;
	struct fio_job job;
	struct bench_probe p;
	int err;

	memset(r, 0, sizeof(*r));
	err = fio_job_build(b, c, &job);
	if (err)
		return err;
	fio_job_cmdline(&job, row->cmd, sizeof(row->cmd));
	bench_probe_start(&b->t, &p);
	err = fio_run(&job, &res);
	probe_end(b, &p, r);
	if (err) {
		snprintf(row->bc->why, sizeof(row->bc->why), "fio: %s", res.err);
		return err;
	}
	/* fio's runtime covers its writes and its end_fsync */
	r->mbs = res.bw_bytes / 1e6;
	if (res.bw_bytes > 0)
		r->secs = res.io_bytes / res.bw_bytes;
	r->cpu = res.usr_cpu + res.sys_cpu;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The schedule                                                        */

static void report_run(const struct cache_bench *b, unsigned int rep,
		       enum cache_case c, const struct cache_run *r)
{
	fprintf(stderr, "  rep %u/%u  %-17s %8.1f MB/s  %5.2f s  cpu %4.0f%%",
		rep + 1, b->o.reps, case_names[c], r->mbs, r->secs, r->cpu);
	if (c == CASE_UFLUSH)
		fprintf(stderr, "  (writes %.2f s, writer cpu %.2f s; fsync %.2f s)",
			r->write_secs, r->writer_cpu_secs, r->fsync_secs);
	fprintf(stderr, "\n");
}

/*
 * One run of one case (a bench_sched run callback).  A case that fails on
 * its first run is skipped from then on (fio missing a feature, say); a
 * later failure stops the benchmark.
 */
static int run_one(void *priv, unsigned int c, unsigned int rep)
{
	struct cache_bench *b = priv;
	struct cache_row *row = &b->rows[c];
	struct cache_run r;
	int err;

	drop_caches(b);
	if (bench_stop)
		return 0;
	if (c == CASE_UFLUSH)
		err = run_uflush(b, row, &r);
	else
		err = run_fio(b, c, row, &r);
	if (bench_stop)
		return 0;
	if (err) {
		fprintf(stderr, "  %s: %s\n", case_names[c], row->bc->why);
		return row->n ? err : BENCH_SKIP;
	}
	row->runs[row->n++] = r;
	report_run(b, rep, c, &r);
	return 0;
}

/* The order rotates each rep, so that no case always follows another. */
static int run_all(struct cache_bench *b)
{
	struct bench_sched s = {
		.nr_cases = NR_CASES, .cases = b->cases, .reps = b->o.reps,
		.rotate = true, .run = run_one, .priv = b,
	};

	return bench_sched_run(&s);
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

/* The samples of a double field of the row's runs. */
#define ROW_SAMPLES(row, field, s) \
	bench_samples_gather(s, (row)->runs, (row)->n, \
			     sizeof(struct cache_run), \
			     offsetof(struct cache_run, field))

static void row_stats(const struct cache_row *row, size_t off,
		      struct bench_stats *st)
{
	struct bench_samples s;

	bench_samples_gather(&s, row->runs, row->n, sizeof(row->runs[0]),
			     off);
	bench_samples_stats(&s, st);
}

#define ROW_STATS(row, field, st) \
	row_stats(row, offsetof(struct cache_run, field), st)

/* median MB/s of row / of base; NAN if either has no run */
static double row_ratio(const struct cache_row *row,
			const struct cache_row *base)
{
	struct bench_samples a, b;

	ROW_SAMPLES(row, mbs, &a);
	ROW_SAMPLES(base, mbs, &b);
	return bench_ratio(&a, &b);
}

/* Median over the runs of the device's write requests and their size. */
static bool row_dev(const struct cache_row *row, double *ios, double *kib)
{
	return bench_probed_dev(row->runs, row->n, sizeof(row->runs[0]),
				offsetof(struct cache_run, probe), ios, kib);
}

enum {
	COL_CASE, COL_MBS, COL_SPREAD, COL_X_RAW, COL_X_KERNEL, COL_CPU,
	COL_HOST, COL_REQS, COL_REQ_KIB,
};

static const char *const cache_cols[] = {
	"case", ">MB/s", ">(min-max)", ">x fio raw", ">x kernel", ">cpu%",
	">host cpu%", ">dev writes", ">avg KiB",
};

static void table_row(struct bench_table *t, const void *priv,
		      unsigned int c)
{
	const struct cache_bench *b = priv;
	const struct cache_row *r = &b->rows[c];
	struct bench_stats m, cpu, host;
	double ios, kib;
	int row = bench_table_row(t);

	if (row < 0)
		return;
	bench_table_set(t, row, COL_CASE, "%s", case_names[c]);
	if (!r->n) {
		bench_table_set(t, row, COL_MBS, "%s",
				r->bc->skipped ? "skipped" : "no run");
		return;
	}
	ROW_STATS(r, mbs, &m);
	ROW_STATS(r, cpu, &cpu);
	ROW_STATS(r, host_cpu, &host);
	bench_table_stats(t, row, COL_MBS, &m);
	bench_table_ratio(t, row, COL_X_RAW, row_ratio(r, &b->rows[CASE_RAW]));
	bench_table_ratio(t, row, COL_X_KERNEL,
			  row_ratio(r, &b->rows[CASE_KERNEL]));
	bench_table_set(t, row, COL_CPU, "%.0f", cpu.median);
	bench_table_set(t, row, COL_HOST, "%.0f", host.median);
	if (row_dev(r, &ios, &kib)) {
		bench_table_set(t, row, COL_REQS, "%.0f", ios);
		bench_table_set(t, row, COL_REQ_KIB, "%.0f", kib);
	} else {
		bench_table_set(t, row, COL_REQS, "-");
		bench_table_set(t, row, COL_REQ_KIB, "-");
	}
}

static void print_header(const void *priv)
{
	const struct cache_bench *b = priv;
	uint64_t cache_bytes = (uint64_t)b->o.pages * 4096;
	char host[160];

	printf("\nuflush-bench cache: sequential writes through the cache vs fio raw and the kernel's page cache\n");
	bench_target_print(&b->t, b->t.dio < 0 && b->t.scratch ?
			   "; the kernel case writes the file through the host's page cache" :
			   NULL);
	if (b->t.max_sectors_kb)
		printf("         block layer max_sectors_kb %u\n",
		       b->t.max_sectors_kb);
	printf("size:    %.2f GiB written per run in %" PRIu64 " KiB writes (%.1f x the uflush cache)\n",
	       b->t.range / (double)(1u << 30), b->o.bs >> 10,
	       (double)b->t.range / cache_bytes);
	printf("uflush:  %u pages (%.0f MiB), engine io_uring, one writer thread\n",
	       b->o.pages, cache_bytes / (double)(1u << 20));
	printf("policy:  %s\n", b->policy);
	snprintf(host, sizeof(host),
		 "; host vm.dirty_ratio %lu, dirty_background_ratio %lu, MemAvailable %.1f GiB",
		 b->host_dirty_ratio, b->host_bg_ratio,
		 b->host_avail / (double)(1u << 30));
	bench_env_print(&b->env, host, true);
	if (b->o.no_drop)
		printf("caches:  host caches NOT dropped between runs (--no-drop-caches; sync only)\n");
	else if (b->drop_err)
		printf("caches:  host caches could NOT be dropped between runs: %s (sync only)\n",
		       strerror(-b->drop_err));
	else
		printf("caches:  host page cache synced and dropped before every run (%u drops)\n",
		       b->drops);
	printf("runs:    %u reps, the three cases interleaved (order rotated each rep); medians%s\n\n",
	       b->o.reps,
	       bench_stop ? " (INTERRUPTED: partial results)" : "");
}

static void print_uflush(const struct cache_bench *b)
{
	const struct cache_row *r = &b->rows[CASE_UFLUSH];
	const struct cache_run *last;
	struct bench_stats w, wc, f, pw;
	double ios, kib;
	double wmbs[CACHE_MAX_REPS], v[CACHE_MAX_REPS];
	unsigned int i;

	if (!r->n)
		return;
	last = &r->runs[r->n - 1];
	for (i = 0; i < r->n; i++)
		wmbs[i] = r->runs[i].write_secs > 0 ?
			  b->t.range / 1e6 / r->runs[i].write_secs : 0;
	ROW_STATS(r, write_secs, &w);
	ROW_STATS(r, writer_cpu_secs, &wc);
	ROW_STATS(r, fsync_secs, &f);
	bench_stats(wmbs, r->n, &pw);
	printf("\nuflush, medians over %u run%s (min-max):\n", r->n,
	       r->n == 1 ? "" : "s");
	printf("  uf_pwrite loop alone  %.2f s (%.2f-%.2f) = %.0f MB/s into the cache, throttled\n",
	       w.median, w.min, w.max, pw.median);
	printf("  writer thread CPU     %.2f s (%.2f-%.2f) of that; the rest asleep (throttled)\n",
	       wc.median, wc.min, wc.max);
	printf("  uf_fsync              %.2f s (%.2f-%.2f)\n", f.median,
	       f.min, f.max);
	for (i = 0; i < r->n; i++)
		v[i] = r->runs[i].pages_written;
	bench_stats(v, r->n, &pw);
	printf("  pages written         %.0f (%" PRIu64 " in the range; dirtied %lu, bdi_written %lu KiB in the last run)\n",
	       pw.median, b->t.range / 4096, last->pages_dirtied,
	       last->bdi_written_kb);
	printf("  limits                dirty_thresh %lu pages, background_thresh %lu; %lu wb works; bdi write bandwidth %lu KiB/s at the end\n",
	       last->dirty_thresh, last->background_thresh,
	       last->works_done, last->bdi_bw_kbps);
	if (row_dev(r, &ios, &kib))
		printf("  write requests        not counted by uf_cache_stats/uf_dev_stats; the device completed %.0f, %.0f KiB on average\n",
		       ios, kib);
	if (last->write_errors)
		printf("  WRITE ERRORS          %lu in the last run\n",
		       last->write_errors);
}

/* After the table: uflush's own numbers, then what the columns mean. */
static void print_notes(const void *priv)
{
	const struct cache_bench *b = priv;
	unsigned int c;

	print_uflush(b);
	printf("\nMB/s = 10^6 bytes/s from the first write to the return of fsync (fio: its runtime,\n"
	       "which includes --end_fsync).  x fio raw, x kernel = ratio of the medians.\n"
	       "cpu%% = CPU time per wall second: uflush all the process's threads (writer, flusher,\n"
	       "I/O completion); fio its job's usr+sys.  host cpu%% = busy time of all %ld CPUs\n"
	       "(/proc/stat) over the run, including the kernel's flusher and loop workers; for fio\n"
	       "the window includes fio's start-up.  dev writes, avg KiB = write requests the device\n"
	       "completed and their mean size (its sysfs stat: after the block layer's split/merge).\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	bench_reopen_print(&b->ro);
	for (c = 0; c < NR_CASES; c++)
		if (b->cases[c].skipped)
			printf("%s skipped: %s\n", case_names[c],
			       b->cases[c].why);
	printf("\nsizeof(struct page) = %zu bytes\n", sizeof(struct page));
	if (b->rows[CASE_RAW].cmd[0] || b->rows[CASE_KERNEL].cmd[0])
		printf("\nfio command lines (each run once per rep):\n");
	for (c = 0; c < NR_CASES; c++)
		if (b->rows[c].cmd[0])
			printf("  %s\n", b->rows[c].cmd);
}

static void json_stats(struct bench_json *j, const struct cache_row *r,
		       const char *name, size_t off)
{
	struct bench_samples s;

	bench_samples_gather(&s, r->runs, r->n, sizeof(r->runs[0]), off);
	bench_json_samples(j, name, &s);
}

#define JSON_STATS(j, r, field) \
	json_stats(j, r, #field, offsetof(struct cache_run, field))

/* An array of an integer field of the row's runs. */
#define JSON_RUNS(j, r, key, expr) do {					\
	double v_[CACHE_MAX_REPS];					\
	unsigned int i_;						\
									\
	for (i_ = 0; i_ < (r)->n; i_++) {				\
		const struct cache_run *run = &(r)->runs[i_];		\
									\
		v_[i_] = (double)(expr);				\
	}								\
	bench_json_nums(j, key, v_, (r)->n);				\
} while (0)

static void json_row(struct bench_json *j, const void *priv, unsigned int c)
{
	const struct cache_bench *b = priv;
	const struct cache_row *r = &b->rows[c];

	bench_json_obj(j, NULL);
	bench_json_str(j, "case", case_keys[c]);
	bench_json_str(j, "status",
		       r->bc->skipped ? "skipped" : r->n ? "ok" : "no run");
	bench_json_str(j, "reason", r->bc->skipped ? r->bc->why : "");
	bench_json_str(j, "cmd", r->cmd);
	JSON_STATS(j, r, mbs);
	JSON_STATS(j, r, secs);
	JSON_STATS(j, r, cpu);
	JSON_STATS(j, r, host_cpu);
	bench_json_num(j, "ratio_fio_raw", row_ratio(r, &b->rows[CASE_RAW]));
	bench_json_num(j, "ratio_kernel",
		       row_ratio(r, &b->rows[CASE_KERNEL]));
	JSON_RUNS(j, r, "dev_write_ios",
		  run->probe.have_dev ? run->probe.dev_ios : 0);
	JSON_RUNS(j, r, "dev_write_sectors",
		  run->probe.have_dev ? run->probe.dev_sectors : 0);
	if (c == CASE_UFLUSH) {
		JSON_STATS(j, r, write_secs);
		JSON_STATS(j, r, writer_cpu_secs);
		JSON_STATS(j, r, fsync_secs);
		JSON_RUNS(j, r, "pages_written", run->pages_written);
		JSON_RUNS(j, r, "pages_dirtied", run->pages_dirtied);
		JSON_RUNS(j, r, "write_errors", run->write_errors);
	}
	bench_json_end(j);
}

static void json_config(struct bench_json *j, const void *priv)
{
	const struct cache_bench *b = priv;

	bench_fio_json(j, &b->env);
	bench_json_end(j);
	bench_json_u64(j, "size_bytes", b->t.range);
	bench_json_u64(j, "bs", b->o.bs);
	bench_json_u64(j, "reps", b->o.reps);
	bench_json_obj(j, "cache");
	bench_json_u64(j, "pages", b->o.pages);
	bench_json_str(j, "policy", b->policy);
	bench_json_str(j, "engine", "io_uring");
	bench_json_u64(j, "sizeof_struct_page", sizeof(struct page));
	bench_json_end(j);
	bench_json_obj(j, "host");
	bench_json_u64(j, "dirty_ratio", b->host_dirty_ratio);
	bench_json_u64(j, "dirty_background_ratio", b->host_bg_ratio);
	bench_json_u64(j, "mem_available", b->host_avail);
	bench_json_bool(j, "caches_dropped", !b->o.no_drop && !b->drop_err);
	bench_json_str(j, "drop_error",
		       b->drop_err ? strerror(-b->drop_err) : "");
	bench_json_end(j);
}

static const struct bench_report cache_report = {
	cache_cols, sizeof(cache_cols) / sizeof(cache_cols[0]),
	print_header, table_row, print_notes, json_config, json_row,
};

/* ------------------------------------------------------------------ */
/* Options                                                             */

static const struct bench_opt cache_opts[] = {
	BENCH_SIZE("size", &cache_bench.o.size, 16u << 20, UINT64_MAX, 0,
		   "bytes written per run, and the scratch device size\n"
		   "(default 1G; several times the cache, so that\n"
		   "writeback and throttling reach their steady state)"),
	BENCH_SIZE("bs", &cache_bench.o.bs, 4096, 64u << 20, 4096,
		   "write size, uflush and fio (default 1M)"),
	BENCH_UINT("pages", "N", &cache_bench.o.pages, 16, UINT_MAX, NULL,
		   "uflush cache frames of 4 KiB (default 65536 = 256 MiB)"),
	BENCH_STR("policy", "SPEC", &cache_bench.o.policy,
		  "uflush flush policy: preset[,knob=value...], e.g.\n"
		  "kara-v4.2,nowait=v4 (default: the library's)"),
	BENCH_OPT_REPS(&cache_bench.o.reps,
		       "repetitions of the three cases (default 3)"),
	BENCH_OPT_DEV(&cache_bench.o.dev),
	BENCH_OPT_FORCE(&cache_bench.o.force),
	BENCH_FLAG("no-fio", &cache_bench.o.no_fio,
		   "skip both fio baselines"),
	BENCH_FLAG("no-drop-caches", &cache_bench.o.no_drop,
		   "only sync between runs"),
	BENCH_OPT_JSON(&cache_bench.o.json),
	BENCH_OPT_END,
};

const struct bench_cmdline bench_cache_cmdline = {
	.cmd = "cache",
	.about =
		"Sequential write throughput through uflush's page cache (one thread,\n"
		"uf_pwrite in --bs chunks, then uf_fsync) beside fio on the raw device\n"
		"(O_DIRECT, QD 32, io_uring) and fio through the host kernel's page cache\n"
		"(buffered psync) on the same device, each timed to the return of its\n"
		"fsync; interleaved, medians and min-max spreads printed.  The host's\n"
		"page cache is dropped before every run (needs root).\n"
		BENCH_SCRATCH_ABOUT,
	.opts = cache_opts,
	.epilog = BENCH_ENV_FIO,
};

/* What the table cannot check. */
static int check_opts(const struct cache_opts *o)
{
	if (o->size % o->bs) {
		bench_err("cache", "--size must be a multiple of --bs");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Main                                                                */

/* Without fio both baselines are skipped from the start. */
static void skip_fio_cases(struct cache_bench *b)
{
	enum cache_case c;

	for (c = CASE_RAW; c <= CASE_KERNEL; c++) {
		b->cases[c].skipped = true;
		snprintf(b->cases[c].why, sizeof(b->cases[c].why), "%s",
			 b->env.fio_why);
	}
}

static void announce(const struct cache_bench *b)
{
	uint64_t cache_bytes = (uint64_t)b->o.pages * 4096;

	bench_err("cache", "%s (%s), %.2f GiB per run, %u reps", b->t.path,
		  b->t.desc, b->t.range / (double)(1u << 30), b->o.reps);
	if (b->t.range < 4 * cache_bytes)
		bench_err("cache", "warning: --size is only %.1f x the cache: uflush's writeback will not reach its steady state",
			  (double)b->t.range / cache_bytes);
}

/* Everything between making the device and removing it. */
static int bench_cache_run(struct cache_bench *b)
{
	uint64_t t0;
	int err;

	b->buf = bench_random_buffer(b->o.bs);
	if (!b->buf)
		return -ENOMEM;
	announce(b);
	if (b->t.scratch && !bench_stop) {
		t0 = uf_now_ns();
		err = bench_target_prefill(&b->t, b->t.range,
					   CACHE_PREFILL_CHUNK);
		if (err) {
			bench_err("cache", "prefill failed: %s",
				  strerror(-err));
			return err;
		}
		if (!bench_stop)
			fprintf(stderr,
				"prefill: wrote %.2f GiB in %.1f s so that no run writes into holes\n",
				b->t.range / (double)(1u << 30),
				(uf_now_ns() - t0) / 1e9);
	}
	err = run_all(b);
	if (err)
		return err;
	return bench_report(&cache_report, &b->env, &b->t, b->o.json, b,
			    NR_CASES);
}

static int exit_code(const struct cache_bench *b, int err)
{
	if (bench_stop || err)
		return bench_exit_code("cache", err);
	if (!b->rows[CASE_UFLUSH].n) {
		bench_err("cache", "uflush could not run");
		return 1;
	}
	return 0;
}

int bench_cache_main(int argc, char **argv)
{
	struct cache_bench *b = &cache_bench;
	unsigned int c;
	int err;

	err = bench_opts_parse(&bench_cache_cmdline, argc, argv, stdout,
			       stderr);
	if (!err)
		err = check_opts(&b->o);
	if (err)
		return err > 0 ? 0 : 2;
	for (c = 0; c < NR_CASES; c++) {
		b->cases[c].name = case_names[c];
		b->rows[c].bc = &b->cases[c];
	}
	if (bench_env_init(&b->env, "cache", !b->o.no_fio))
		return 1;
	host_info(b);
	if (resolve_policy(b))
		return 2;
	if (!b->env.have_fio)
		skip_fio_cases(b);
	if (bench_target_open(&b->t, "cache", b->o.dev, b->o.size))
		return 1;
	b->t.range = b->o.size;
	b->t.force = b->o.force;
	if (!bench_stop)
		err = bench_cache_run(b);
	bench_target_close(&b->t);
	free(b->buf);
	return exit_code(b, err);
}
