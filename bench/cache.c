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
 *                 what a user would pick instead of uflush; held to the
 *                 uflush cache's limits: the host's vm.dirty_bytes and
 *                 dirty_background_bytes set to the cache's dirty_thresh
 *                 and background_thresh for the run (put back after it,
 *                 and at exit), fio inside a memory cgroup of the cache's
 *                 size; what could not be applied is printed;
 *   uflush        one thread uf_pwrite()s --dev-size bytes in --bs chunks into
 *                 a cache of --cache (so several times the cache
 *                 passes through it: background writeback and the dirty
 *                 throttle run in their steady state), then uf_fsync().
 *
 * Each case is timed from its first write to the return of its fsync; fio's
 * runtime includes its end_fsync.  The three cases run once per repetition
 * (--reps), the order rotated from one repetition to the next so that no
 * case always follows the same one, and the table prints medians, min-max
 * spreads, the ratios of the medians and the spread of the per-rep
 * ratios, and issue 11's targets (x fio raw, x kernel, and CPU per GB
 * against 2 x (fio raw's + one 4 KiB memcpy per page, timed in each rep
 * over a working set larger than the L2 cache)).  Before every run the host's page
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
#include <math.h>
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
#define CACHE_SIZE_PER_CACHE	8	/* default --dev-size: 8 x the cache */
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
	bool cold;
	bool size_given;
	const char *json;
};

/* What one run measured. */
struct cache_run {
	double mbs;
	double secs;			/* first write to fsync return */
	double cpu;			/* % of one CPU: the process */
	double host_cpu;		/* % of one CPU: the whole host */
	struct bench_probed probe;	/* and the device's requests */
	double cpu_per_gb;		/* CPU seconds per 10^9 bytes */
	/* uflush only */
	double write_secs;		/* the uf_pwrite() loop alone */
	double writer_cpu_secs;		/* the writer thread's CPU in it */
	double fsync_secs;
	struct bench_uf_counts uf;	/* what uflush counted */
	double copy_per_gb;		/* a 4 KiB memcpy per page, per GB */
	/* kernel only */
	bool dirty_held, memcg_held;	/* the limits it ran under */
	uint64_t memcg_peak;		/* bytes */
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
	/* the uflush cache's limits, which the kernel case is held to */
	unsigned long dirty_thresh, background_thresh;	/* pages */
	struct bench_dirty dirty;
	char dirty_why[256];		/* the first failure to apply them */
	int memcg_version;		/* of the last group made; 0: none */
	char memcg_why[320];		/* the first failure to make one */
	size_t copy_wset;		/* bytes the copy cost writes over */
	struct bench_case cases[NR_CASES];
	struct cache_row rows[NR_CASES];
};

/* The benchmark, with the defaults of its options. */
static struct cache_bench cache_bench = {
	.o = {
		.bs = CACHE_DEFAULT_BS,
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
	int err;

	if (b->o.no_drop) {
		sync();
		return;
	}
	err = bench_drop_caches();
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

/*
 * Open the cache once, untimed, to learn what --policy resolves to and the
 * dirty limits it sets (the kernel case is held to them).
 */
static int resolve_policy(struct cache_bench *b)
{
	struct uf_cache_config cfg;
	struct uf_cache_stats cs;
	struct uf_cache *cache;
	const char *spec;
	int err;

	cache_config(b, &cfg);
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		bench_err("cache", "cannot open a cache with policy %s: %s",
			  b->o.policy ? b->o.policy : "(default)",
			  strerror(-err));
		return err;
	}
	spec = uf_cache_policy(cache);
	snprintf(b->policy, sizeof(b->policy), "%s", spec ? spec : "?");
	err = uf_cache_stats(cache, &cs);
	uf_cache_close(cache);
	if (err) {
		bench_err("cache", "uf_cache_stats: %s", strerror(-err));
		return err;
	}
	b->dirty_thresh = cs.dirty_thresh;
	b->background_thresh = cs.background_thresh;
	return 0;
}

/* The timed part: write the range sequentially, then fsync. */
static int uflush_write(struct cache_bench *b, struct uf_cache *cache,
			struct uf_dev *dev, struct uf_file *file,
			struct cache_run *r)
{
	struct bench_uf_snap s0;
	struct bench_probe p;
	uint64_t off, tw;
	double tc0, tc1;
	ssize_t n;
	int err = 0;

	bench_uf_snap(cache, dev, &s0);
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
	bench_uf_counts(&s0, cache, dev, &r->uf);
	r->write_secs = (tw - p.t0) / 1e9;
	r->writer_cpu_secs = tc1 - tc0;
	r->fsync_secs = r->secs - r->write_secs;
	r->mbs = off / 1e6 / r->secs;
	r->cpu_per_gb = bench_per_gb(r->probe.cpu_secs, off);
	return err;
}

/*
 * What one 4 KiB copy per page costs for the pages of a run, measured
 * beside it: from the --bs buffer uflush copies from, into a working set
 * larger than the L2 cache.  Untimed.
 */
static double copy_per_gb(const struct cache_bench *b)
{
	uint64_t pages = b->t.range / 4096;
	double secs;

	if (bench_copy_cost(b->buf, b->o.bs, pages, b->copy_wset, &secs))
		return NAN;
	return bench_per_gb(secs, pages * 4096);
}

/* What one uflush run needs beside the cache, device and file. */
struct uflush_arg {
	struct cache_bench *b;
	struct cache_run *r;
};

/* --warm: the range once, fsynced; then the file afresh, no page cached. */
static int uflush_warm(struct cache_bench *b, struct uf_dev *dev,
		       struct uf_file **file)
{
	uint64_t off;
	ssize_t n;
	int err;

	for (off = 0; off < b->t.range && !bench_stop; off += b->o.bs) {
		n = uf_pwrite(*file, b->buf, b->o.bs, off);
		if (n != (ssize_t)b->o.bs)
			return n < 0 ? (int)n : -EIO;
	}
	err = uf_fsync(*file);
	if (!err)
		err = uf_file_close(*file);
	*file = NULL;
	return err ? err : uf_file_open(dev, 1, 0, b->t.range, NULL, NULL,
					file);
}

static int uflush_fn(void *priv, struct uf_cache *cache, struct uf_dev *dev,
		     struct uf_file *file)
{
	struct uflush_arg *a = priv;
	int err;

	if (!a->b->o.cold) {
		err = uflush_warm(a->b, dev, &file);
		if (err)
			return err;
	}
	return uflush_write(a->b, cache, dev, file, a->r);
}

static int run_uflush(struct cache_bench *b, struct cache_row *row,
		      struct cache_run *r)
{
	struct uflush_arg a = { b, r };
	struct uf_cache_config cfg;

	memset(r, 0, sizeof(*r));
	r->copy_per_gb = copy_per_gb(b);
	cache_config(b, &cfg);
	return bench_uflush_run(&cfg, &b->ro, &b->t, b->t.range, uflush_fn,
				&a, row->bc->why, sizeof(row->bc->why));
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

/*
 * Hold the kernel case to the uflush cache's limits: the host's dirty
 * limits set to the cache's dirty_thresh and background_thresh in bytes,
 * and fio started inside a memory cgroup of the cache's size.  What could
 * not be applied is recorded (and printed); the run goes on without it.
 */
static void kernel_hold(struct cache_bench *b, struct bench_memcg *m,
			struct cache_run *r)
{
	char name[64];

	r->dirty_held = !bench_dirty_set(&b->dirty,
					 (uint64_t)b->dirty_thresh * 4096,
					 (uint64_t)b->background_thresh * 4096);
	if (!r->dirty_held && !b->dirty_why[0])
		snprintf(b->dirty_why, sizeof(b->dirty_why), "%s",
			 b->dirty.why);
	snprintf(name, sizeof(name), "uflush-bench-%d-kernel", (int)getpid());
	r->memcg_held = !bench_memcg_create(m, name,
					    (uint64_t)b->o.pages * 4096) &&
			!bench_memcg_enter(m);
	if (m->version)
		b->memcg_version = m->version;
	if (!r->memcg_held && !b->memcg_why[0])
		snprintf(b->memcg_why, sizeof(b->memcg_why), "%s", m->why);
}

/* Everything back as it was, right after the run. */
static void kernel_release(struct cache_bench *b, struct bench_memcg *m,
			   struct cache_run *r)
{
	bench_memcg_leave(m);
	r->memcg_peak = bench_memcg_peak(m);
	bench_memcg_destroy(m);
	bench_dirty_restore(&b->dirty);
}

static int run_fio(struct cache_bench *b, enum cache_case c,
		   struct cache_row *row, struct cache_run *r)
{
	struct bench_memcg memcg = { 0 };
	struct fio_result res;
	struct fio_job job;
	struct bench_probe p;
	int err;

	memset(r, 0, sizeof(*r));
	err = fio_job_build(b, c, &job);
	if (err)
		return err;
	fio_job_cmdline(&job, row->cmd, sizeof(row->cmd));
	if (c == CASE_KERNEL)
		kernel_hold(b, &memcg, r);
	bench_probe_start(&b->t, &p);
	err = fio_run(&job, &res);
	probe_end(b, &p, r);
	if (c == CASE_KERNEL)
		kernel_release(b, &memcg, r);
	if (err) {
		snprintf(row->bc->why, sizeof(row->bc->why), "fio: %s", res.err);
		return err;
	}
	/* fio's runtime covers its writes and its end_fsync */
	r->mbs = res.bw_bytes / 1e6;
	if (res.bw_bytes > 0)
		r->secs = res.io_bytes / res.bw_bytes;
	r->cpu = res.usr_cpu + res.sys_cpu;
	r->cpu_per_gb = bench_per_gb(r->cpu / 100 * r->secs, res.io_bytes);
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
	int err, ret;

	drop_caches(b);
	if (bench_stop)
		return 0;
	if (c == CASE_UFLUSH)
		err = run_uflush(b, row, &r);
	else
		err = run_fio(b, c, row, &r);
	if (bench_run_over(err, row->bc, row->n, &ret))
		return ret;
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
	BENCH_ROW_SAMPLES(row, struct cache_run, field, s)

#define ROW_STATS(row, field, st) \
	BENCH_ROW_STATS(row, struct cache_run, field, st)
#define ROW_MBS(row, base, a, b) \
	BENCH_ROW_PAIR(row, base, struct cache_run, mbs, a, b)
#define ROW_DEV(row, ios, kib) BENCH_ROW_DEV(row, struct cache_run, ios, kib)
#define ROW_CELL(t, row, col, fmt, r, field) \
	BENCH_ROW_CELL(t, row, col, fmt, r, struct cache_run, field)

/* x fio raw, x kernel with the spread of the per-rep ratios */
static void row_paired(struct bench_table *t, int row, unsigned int col,
		       const struct cache_row *r, const struct cache_row *base)
{
	struct bench_samples a, b;

	ROW_MBS(r, base, &a, &b);
	bench_table_paired(t, row, col, &a, &b);
}

enum {
	COL_CASE, COL_MBS, COL_SPREAD, COL_X_RAW, COL_X_RAW_SPREAD,
	COL_X_KERNEL, COL_X_KERNEL_SPREAD, COL_CPU, COL_CPU_GB, COL_HOST,
	COL_REQS, COL_REQ_KIB,
};

static const char *const cache_cols[] = {
	"case", ">MB/s", ">(min-max)", ">x fio raw", ">(min-max)",
	">x kernel", ">(min-max)", ">cpu%", ">cpu s/GB", ">host cpu%",
	">dev writes", ">avg KiB",
};

static void table_row(struct bench_table *t, const void *priv,
		      unsigned int c)
{
	const struct cache_bench *b = priv;
	const struct cache_row *r = &b->rows[c];
	struct bench_stats m;
	int row = bench_table_case(t, COL_MBS, case_names[c], r->bc, r->n);

	if (row < 0)
		return;
	ROW_STATS(r, mbs, &m);
	bench_table_stats(t, row, COL_MBS, &m);
	row_paired(t, row, COL_X_RAW, r, &b->rows[CASE_RAW]);
	row_paired(t, row, COL_X_KERNEL, r, &b->rows[CASE_KERNEL]);
	ROW_CELL(t, row, COL_CPU, "%.0f", r, cpu);
	ROW_CELL(t, row, COL_CPU_GB, "%.3f", r, cpu_per_gb);
	ROW_CELL(t, row, COL_HOST, "%.0f", r, host_cpu);
	bench_table_dev(t, row, COL_REQS, r->runs, r->n, sizeof(r->runs[0]),
			offsetof(struct cache_run, probe));
}

/* How many of the kernel runs were held to the limits; the peak usage. */
struct kernel_held {
	unsigned int runs, dirty, memcg;
	uint64_t peak;
};

static void kernel_held(const struct cache_bench *b, struct kernel_held *k)
{
	const struct cache_row *r = &b->rows[CASE_KERNEL];
	unsigned int i;

	memset(k, 0, sizeof(*k));
	k->runs = r->n;
	for (i = 0; i < r->n; i++) {
		k->dirty += r->runs[i].dirty_held;
		k->memcg += r->runs[i].memcg_held;
		if (r->runs[i].memcg_peak > k->peak)
			k->peak = r->runs[i].memcg_peak;
	}
}

/* What the kernel case ran under; never silent about what failed. */
static void print_limits(const struct cache_bench *b)
{
	uint64_t cache_bytes = (uint64_t)b->o.pages * 4096;
	struct kernel_held k;
	char old[256];

	kernel_held(b, &k);
	if (!k.runs) {
		printf("limits:  the kernel case did not run\n");
		return;
	}
	printf("limits:  the kernel case is held to the uflush cache's limits:\n");
	printf("         vm.dirty_bytes %lu, dirty_background_bytes %lu (dirty_thresh %lu, background_thresh %lu pages)\n",
	       b->dirty_thresh * 4096, b->background_thresh * 4096,
	       b->dirty_thresh, b->background_thresh);
	if (k.dirty == k.runs)
		printf("         applied in every run\n");
	else
		printf("         NOT APPLIED in %u of %u runs: %s\n",
		       k.runs - k.dirty, k.runs, b->dirty_why);
	bench_dirty_fmt_old(&b->dirty, old, sizeof(old));
	if (k.dirty)
		printf("         the host's own put back after each run: %s\n",
		       old);
	if (k.memcg == k.runs)
		printf("         memory cgroup v%d of %.0f MiB (the cache's frames) around fio in every run, peak usage %.0f MiB\n",
		       b->memcg_version, cache_bytes / (double)(1u << 20),
		       k.peak / (double)(1u << 20));
	else
		printf("         memory cgroup of %.0f MiB NOT APPLIED in %u of %u runs: %s\n",
		       cache_bytes / (double)(1u << 20), k.runs - k.memcg,
		       k.runs, b->memcg_why);
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
	printf("uflush:  %s\n", b->o.cold ?
	       "timed on a freshly opened device (--cold)" :
	       "each run writes the range once untimed on the open device, then the timed pass\n"
	       "         (a warm bandwidth estimate, as the host kernel keeps one; --cold: without)");
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
	print_limits(b);
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
		v[i] = r->runs[i].uf.pages_written;
	bench_stats(v, r->n, &pw);
	printf("  pages written         %.0f (%" PRIu64 " in the range; dirtied %lu, bdi_written %lu KiB in the last run)\n",
	       pw.median, b->t.range / 4096, last->uf.pages_dirtied,
	       last->uf.bdi_written_kb);
	printf("  limits                dirty_thresh %lu pages, background_thresh %lu; %lu wb works; bdi write bandwidth %lu KiB/s at the end\n",
	       last->uf.dirty_thresh, last->uf.background_thresh,
	       last->uf.works_done, last->uf.bdi_bw_kbps);
	if (last->uf.write_ios)
		printf("  write requests        uflush submitted %" PRIu64 ", %.0f KiB on average (uf_dev_stats, the last run)\n",
		       last->uf.write_ios,
		       last->uf.write_bytes / 1024.0 / last->uf.write_ios);
	if (ROW_DEV(r, &ios, &kib))
		printf("  device requests       the device completed %.0f, %.0f KiB on average (sysfs stat, median)\n",
		       ios, kib);
	if (last->uf.write_errors)
		printf("  WRITE ERRORS          %lu in the last run\n",
		       last->uf.write_errors);
}

/*
 * Issue 11's CPU target: uflush's CPU per GB in us, and in bound its bound
 * in each rep, 2 x (fio raw's + one copy per page).
 */
static void cpu_samples(const struct cache_bench *b, struct bench_samples *us,
			struct bench_samples *bound)
{
	struct bench_samples fs, cs;
	unsigned int i;

	ROW_SAMPLES(&b->rows[CASE_UFLUSH], cpu_per_gb, us);
	ROW_SAMPLES(&b->rows[CASE_RAW], cpu_per_gb, &fs);
	ROW_SAMPLES(&b->rows[CASE_UFLUSH], copy_per_gb, &cs);
	bound->n = 0;
	for (i = 0; i < fs.n && i < cs.n; i++)
		bench_samples_add(bound, bench_cpu_bound(fs.v[i], cs.v[i]));
}

static void print_targets(const struct cache_bench *b)
{
	const struct cache_row *u = &b->rows[CASE_UFLUSH];
	struct bench_samples a, c;
	struct bench_stats fio, copy;
	struct kernel_held k;

	printf("\nissue 11 target 1: ratio of the medians (min-max of the per-rep ratios)\n");
	ROW_MBS(u, &b->rows[CASE_RAW], &a, &c);
	bench_print_target("uflush / fio raw MB/s", &a, &c, true, 0.95);
	ROW_MBS(u, &b->rows[CASE_KERNEL], &a, &c);
	bench_print_target("uflush / kernel MB/s", &a, &c, true, 2);
	kernel_held(b, &k);
	if (k.runs && (k.dirty != k.runs || k.memcg != k.runs))
		printf("  (the kernel case was NOT held to all of the cache's limits: see limits above)\n");
	cpu_samples(b, &a, &c);
	bench_print_target("uflush CPU/GB / bound", &a, &c, false, 1);
	ROW_STATS(&b->rows[CASE_RAW], cpu_per_gb, &fio);
	ROW_STATS(u, copy_per_gb, &copy);
	printf("  bound = 2 x (fio raw %.3f + copy %.3f) = %.3f CPU s/GB (medians); copy = one 4 KiB memcpy\n"
	       "  per page (%" PRIu64 " pages) from the %" PRIu64 " KiB write buffer into a %.0f MiB working set\n"
	       "  (the cache's size, at least 4 x L2), thread CPU, timed in each rep\n",
	       fio.median, copy.median, bench_samples_median(&c),
	       b->t.range / 4096, b->o.bs >> 10,
	       b->copy_wset / (double)(1u << 20));
}

/* After the table: uflush's own numbers, then what the columns mean. */
static void print_notes(const void *priv)
{
	const struct cache_bench *b = priv;
	unsigned int c;

	print_uflush(b);
	print_targets(b);
	printf("\nMB/s = 10^6 bytes/s from the first write to the return of fsync (fio: its runtime,\n"
	       "which includes --end_fsync).  x fio raw, x kernel = ratio of the medians, (min-max) of\n"
	       "the ratios within each rep.  cpu s/GB = CPU seconds per 10^9 bytes written.\n"
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

#define JSON_STATS(j, r, field) \
	bench_json_field(j, #field, (r)->runs, (r)->n, \
			 sizeof(struct cache_run), \
			 offsetof(struct cache_run, field))

/* An array of an integer field of the row's runs. */
#define JSON_RUNS(j, r, key, expr) \
	BENCH_JSON_RUNS(j, key, (r)->runs, (r)->n, run, expr)

static void json_paired(struct bench_json *j, const char *key,
			const struct cache_row *r, const struct cache_row *base)
{
	struct bench_samples a, b;

	ROW_MBS(r, base, &a, &b);
	bench_json_paired(j, key, &a, &b);
}

/* What the kernel case was held to, and issue 11's CPU target. */
static void json_limits(struct bench_json *j, const struct cache_bench *b)
{
	struct bench_samples us, bound;

	bench_json_obj(j, "kernel_limits");
	bench_json_u64(j, "dirty_bytes", b->dirty_thresh * 4096);
	bench_json_u64(j, "dirty_background_bytes",
		       b->background_thresh * 4096);
	bench_json_str(j, "dirty_error", b->dirty_why);
	bench_json_u64(j, "host_dirty_bytes", b->dirty.old_bytes);
	bench_json_u64(j, "host_dirty_background_bytes",
		       b->dirty.old_bg_bytes);
	bench_json_int(j, "memcg_version", b->memcg_version);
	bench_json_u64(j, "memcg_limit_bytes", (uint64_t)b->o.pages * 4096);
	bench_json_str(j, "memcg_error", b->memcg_why);
	bench_json_end(j);
	cpu_samples(b, &us, &bound);
	bench_json_obj(j, "cpu_target");
	bench_json_num(j, "bound_cpu_s_per_gb", bench_samples_median(&bound));
	bench_json_paired(j, "ratio", &us, &bound);
	bench_json_u64(j, "copy_working_set_bytes", b->copy_wset);
	bench_json_end(j);
}

static void json_row(struct bench_json *j, const void *priv, unsigned int c)
{
	const struct cache_bench *b = priv;
	const struct cache_row *r = &b->rows[c];

	bench_json_case(j, case_keys[c], r->bc, r->n, r->cmd);
	JSON_STATS(j, r, mbs);
	JSON_STATS(j, r, secs);
	JSON_STATS(j, r, cpu);
	JSON_STATS(j, r, host_cpu);
	JSON_STATS(j, r, cpu_per_gb);
	json_paired(j, "ratio_fio_raw", r, &b->rows[CASE_RAW]);
	json_paired(j, "ratio_kernel", r, &b->rows[CASE_KERNEL]);
	bench_json_probed(j, r->runs, r->n, sizeof(r->runs[0]),
			  offsetof(struct cache_run, probe));
	if (c == CASE_UFLUSH) {
		JSON_STATS(j, r, write_secs);
		JSON_STATS(j, r, writer_cpu_secs);
		JSON_STATS(j, r, fsync_secs);
		bench_json_uf_counts(j, r->runs, r->n, sizeof(r->runs[0]),
				     offsetof(struct cache_run, uf));
		JSON_STATS(j, r, copy_per_gb);
	}
	if (c == CASE_KERNEL) {
		JSON_RUNS(j, r, "dirty_limits_applied", run->dirty_held);
		JSON_RUNS(j, r, "memcg_applied", run->memcg_held);
		JSON_RUNS(j, r, "memcg_peak_bytes", run->memcg_peak);
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
	bench_json_uflush(j, b->o.pages, b->policy);
	bench_json_u64(j, "sizeof_struct_page", sizeof(struct page));
	bench_json_end(j);
	bench_json_obj(j, "host");
	bench_json_u64(j, "dirty_ratio", b->host_dirty_ratio);
	bench_json_u64(j, "dirty_background_ratio", b->host_bg_ratio);
	bench_json_u64(j, "mem_available", b->host_avail);
	bench_json_bool(j, "caches_dropped", !b->o.no_drop && !b->drop_err);
	bench_json_bool(j, "uflush_warm", !b->o.cold);
	bench_json_str(j, "drop_error",
		       b->drop_err ? strerror(-b->drop_err) : "");
	bench_json_end(j);
	json_limits(j, b);
}

static const struct bench_report cache_report = {
	cache_cols, sizeof(cache_cols) / sizeof(cache_cols[0]),
	print_header, table_row, print_notes, json_config, json_row,
};

/* ------------------------------------------------------------------ */
/* Options                                                             */

static const struct bench_opt cache_opts[] = {
	BENCH_OLD_NAME("size", "dev-size"),
	{ .name = "dev-size", .arg = "SIZE", .type = BENCH_OPT_SIZE,
	  .dest = &cache_bench.o.size, .min = 16u << 20, .max = UINT64_MAX,
	  .given = &cache_bench.o.size_given,
	  .help = "bytes written per run, and the scratch device size\n"
		  "(default 8 x the cache: 2G for 256 MiB; issue 11's\n"
		  "target is 4-8 x, so that writeback and throttling\n"
		  "reach their steady state)" },
	BENCH_SIZE("bs", &cache_bench.o.bs, 4096, 64u << 20, 4096,
		   "write size, uflush and fio (default 1M)"),
	BENCH_OPT_CACHE(&cache_bench.o.pages, 16, 1u << 28,
			"the uflush cache (default 256M; --pages N: frames)"),
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
	BENCH_FLAG("cold", &cache_bench.o.cold,
		   "time uflush's first pass on a freshly opened device;\n"
		   "by default it writes the range once untimed first\n"
		   "(file closed and reopened between: no page stays\n"
		   "cached), so that the device's write bandwidth estimate\n"
		   "is warm, as the host's is for the kernel case: the\n"
		   "kernel keeps a device's estimate across runs, and both\n"
		   "start from 100 MB/s and take seconds to converge"),
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
		"page cache is dropped before every run (needs root).  The kernel case\n"
		"runs under the uflush cache's limits: the host's vm.dirty_bytes and\n"
		"vm.dirty_background_bytes set to the cache's dirty_thresh and\n"
		"background_thresh for the run (and put back after it, and at exit),\n"
		"fio inside a memory cgroup of the cache's size (v1 or v2) where the\n"
		"host has one; what could not be applied is printed.  Issue 11's\n"
		"targets: x fio raw, x kernel, and CPU per GB against 2 x (fio raw's\n"
		"+ one 4 KiB memcpy per page, timed in the same run).\n"
		BENCH_SCRATCH_ABOUT,
	.opts = cache_opts,
	.epilog = BENCH_ENV_FIO,
};

/* What the table cannot check. */
static int check_opts(struct cache_opts *o)
{
	if (!o->size_given)
		o->size = (uint64_t)o->pages * 4096 * CACHE_SIZE_PER_CACHE /
			  o->bs * o->bs;
	if (o->size % o->bs) {
		bench_err("cache", "--dev-size must be a multiple of --bs");
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
		bench_err("cache", "warning: --dev-size is only %.1f x the cache: uflush's writeback will not reach its steady state",
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
	/* the frames the writer copies into: a pool of the cache's size, not
	 * a few MiB that stay in the CPU's cache (4 x L2 at the least) */
	b->copy_wset = (size_t)b->o.pages * 4096;
	if (b->copy_wset < bench_copy_wset())
		b->copy_wset = bench_copy_wset();
	if (resolve_policy(b))
		return 2;
	if (!b->env.have_fio)
		skip_fio_cases(b);
	if (bench_target_open(&b->t, "cache", b->o.dev, b->o.size,
			      b->o.force))
		return 1;
	b->t.range = b->o.size;
	b->t.force = b->o.force;
	if (!bench_stop)
		err = bench_cache_run(b);
	bench_target_close(&b->t);
	free(b->buf);
	return bench_exit_uflush("cache", err, b->rows[CASE_UFLUSH].n);
}
