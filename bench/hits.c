// SPDX-License-Identifier: MIT
/*
 * bench/hits.c - `uflush-bench hits`: cache hits on resident pages (issue
 * 11, target 3).  Two files of --file-size bytes each are written in full and
 * fsynced (untimed), so that every page is cached and clean; then each
 * case runs for --ms milliseconds over the working set of one file, page
 * after page, wrapping around:
 *
 *   memcpy in/out  a bare 4 KiB memcpy from/to a buffer of --file-size bytes:
 *                  the baselines of pread and pwrite;
 *   pread, pwrite  4 KiB uf_pread / uf_pwrite (an overwrite: the pages
 *                  become dirty; they are fsynced again after the window);
 *   get+put        uf_page_get (read-only) + uf_page_put of one page;
 *   ... x2         the same with two threads, on one file (each starting
 *                  half way from the other) or one file each.
 *
 * The dirty limits are set above both files and kupdate is off, so that
 * no writeback starts while a window runs; the device's request counters
 * (sysfs) and the cache's written pages are read around every window and
 * reported: a hit benchmark must do no device I/O while timed.  Cases
 * are interleaved (rotated) over --reps repetitions; ratios are of the
 * same repetition's samples, given as median and min-max.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"

#define HIT_PAGE	4096ull
#define HIT_BATCH	256		/* ops between two clock reads */

enum hit_op { OP_MEMCPY_IN, OP_MEMCPY_OUT, OP_PREAD, OP_PWRITE, OP_GETPUT };

enum hit_case {
	C_MEMCPY_IN, C_MEMCPY_OUT, C_PREAD, C_PWRITE, C_GETPUT, C_MEMCPY2,
	C_PREAD2, C_PWRITE2, C_GETPUT2,
	C_PREAD2F, C_PWRITE2F, C_GETPUT2F,
	NR_HIT_CASES
};

/*
 * A case and its target: base >= 0 says "ratio to that case's rate, at
 * least target"; base < 0 with a target says "at least target M ops/s".
 */
struct hit_def {
	const char *name;
	enum hit_op op;
	unsigned int threads;
	bool two_files;
	int base;
	double target;
};

static const struct hit_def hit_defs[NR_HIT_CASES] = {
	[C_MEMCPY_IN]  = { "memcpy in",      OP_MEMCPY_IN,  1, false, -1, 0 },
	[C_MEMCPY_OUT] = { "memcpy out",     OP_MEMCPY_OUT, 1, false, -1, 0 },
	[C_PREAD]      = { "pread",          OP_PREAD,  1, false, C_MEMCPY_IN, 0.85 },
	[C_PWRITE]     = { "pwrite",         OP_PWRITE, 1, false, C_MEMCPY_OUT, 0.85 },
	[C_GETPUT]     = { "get+put",        OP_GETPUT, 1, false, -1, 20 },
	/* what two threads can get on this machine, right now */
	[C_MEMCPY2]    = { "memcpy in x2",   OP_MEMCPY_IN,  2, false, C_MEMCPY_IN, 0 },
	[C_PREAD2]     = { "pread x2 same",  OP_PREAD,  2, false, C_PREAD, 1.8 },
	[C_PWRITE2]    = { "pwrite x2 same", OP_PWRITE, 2, false, C_PWRITE, 1.8 },
	[C_GETPUT2]    = { "get+put x2 same", OP_GETPUT, 2, false, C_GETPUT, 1.8 },
	[C_PREAD2F]    = { "pread x2 files", OP_PREAD,  2, true, C_PREAD, 1.8 },
	[C_PWRITE2F]   = { "pwrite x2 files", OP_PWRITE, 2, true, C_PWRITE, 1.8 },
	[C_GETPUT2F]   = { "get+put x2 files", OP_GETPUT, 2, true, C_GETPUT, 1.8 },
};

/* The cases as --cases names them. */
static const char *const hit_keys[NR_HIT_CASES] = {
	"memcpy-in", "memcpy-out", "pread", "pwrite", "getput",
	"memcpy-in-x2", "pread-x2", "pwrite-x2", "getput-x2",
	"pread-x2-files", "pwrite-x2-files", "getput-x2-files",
};

/* What one window did besides its ops: it should be nothing. */
struct hit_io {
	uint64_t dev_reads, dev_writes;	/* requests the device completed */
	uint64_t written;		/* pages the cache wrote back */
	uint64_t dirtied;		/* pages it dirtied */
};

struct hit_bench {
	struct {
		uint64_t size;
		unsigned int ms;
		bool pick[NR_HIT_CASES];
		bool picked;
	} o;
	struct bench_common cm;
	bool counted;			/* the device has sysfs counters */
	struct uf_cache *cache;
	struct uf_file *file[2];
	unsigned char *ws;		/* the memcpy baseline's working set */
	char policy[512];
	char loadavg[64];		/* /proc/loadavg after the runs */
	struct bench_case cases[NR_HIT_CASES];
	struct bench_samples mops[NR_HIT_CASES];	/* M ops/s, total */
	struct hit_io io[NR_HIT_CASES];			/* summed */
};

static struct hit_bench hits = {
	.o = { .size = 64ull << 20, .ms = 300 },
	.cm = { .reps = 5 },
};

static const struct bench_opt hit_opts[] = {
	BENCH_SIZE("file-size", &hits.o.size, 1ull << 20, 4ull << 30,
		   1ull << 20, "the working set of a thread (one file); 64M"),
	BENCH_OLD_NAME("size", "file-size"),
	{ .name = "secs", .arg = "SEC", .type = BENCH_OPT_UINT,
	  .dest = &hits.o.ms, .min = 1, .max = 60, .scale = 1000,
	  .help = "each timed window in seconds; 0.3 (--ms 300)" },
	{ .name = "ms", .arg = "MS", .type = BENCH_OPT_UINT, .dest = &hits.o.ms,
	  .min = 10, .max = 60000, .now = "secs", .help = "" },
	BENCH_OPT_REPS(&hits.cm.reps, "repetitions of every case; 5"),
	{ .name = "cases", .arg = "LIST", .type = BENCH_OPT_LIST,
	  .dest = hits.o.pick, .names = hit_keys, .nr = NR_HIT_CASES,
	  .given = &hits.o.picked,
	  .want = "the names 'uflush-bench help hits' lists",
	  .help = "run only these (e.g. to profile one): memcpy-in,\n"
		  "memcpy-out, pread, pwrite, getput, memcpy-in-x2,\n"
		  "pread-x2, pwrite-x2, getput-x2, pread-x2-files,\n"
		  "pwrite-x2-files, getput-x2-files; all" },
	BENCH_OPTS_COMMON_END(hits.cm),
};

BENCH_CMDLINE(hits, hit_opts,
	"Cache hits on resident, clean pages: 4 KiB uf_pread and\n"
	"uf_pwrite against a bare 4 KiB memcpy over the same working\n"
	"set (target >= 0.85), uf_page_get+uf_page_put (target\n"
	">= 20 M/s), and two threads on one file or on two files\n"
	"against one (target >= 1.8x).  No device I/O while timed\n"
	"(checked with the device's counters).\n"
	BENCH_SCRATCH_ABOUT, BENCH_ENV_TESTDIR);

/* ------------------------------------------------------------------ */
/* The timed loop                                                      */

/*
 * A cache line each: the loop writes err on every op and ops every batch,
 * and two workers side by side in an array made those writes bounce one
 * line between the CPUs (get+put x2 measured 0.74-1.16x one thread with
 * it, the bench's own cost, not uflush's).
 */
struct __attribute__((aligned(64))) hit_worker {
	const struct hit_bench *b;
	enum hit_op op;
	struct uf_file *file;
	unsigned long first;		/* page to start at */
	pthread_barrier_t *go;
	void *buf;			/* 4 KiB of its own */
	uint64_t ops;
	uint64_t ns;
	int err;
	pthread_t thread;
};

static int hit_one(struct hit_worker *w, unsigned long idx)
{
	unsigned char *p = w->b->ws + idx * HIT_PAGE;
	struct uf_page *pg;
	ssize_t n = HIT_PAGE;
	int err;

	switch (w->op) {
	case OP_MEMCPY_IN:
		memcpy(w->buf, p, HIT_PAGE);
		break;
	case OP_MEMCPY_OUT:
		memcpy(p, w->buf, HIT_PAGE);
		break;
	case OP_PREAD:
		n = uf_pread(w->file, w->buf, HIT_PAGE, idx * HIT_PAGE);
		break;
	case OP_PWRITE:
		n = uf_pwrite(w->file, w->buf, HIT_PAGE, idx * HIT_PAGE);
		break;
	case OP_GETPUT:
		err = uf_page_get(w->file, idx, UF_PAGE_NOCREATE, &pg);
		if (err)
			return err;
		return uf_page_put(pg);
	}
	/* the copies must happen: nothing reads the buffers afterwards */
	__asm__ __volatile__("" : : "r"(w->buf), "r"(p) : "memory");
	return n == (ssize_t)HIT_PAGE ? 0 : n < 0 ? (int)n : -EIO;
}

static void *hit_worker_fn(void *arg)
{
	struct hit_worker *w = arg;
	unsigned long npages = w->b->o.size / HIT_PAGE, idx = w->first;
	uint64_t t0, now, end, ops = 0;
	unsigned int k;
	int err = 0;

	pthread_barrier_wait(w->go);
	t0 = uf_now_ns();
	end = t0 + w->b->o.ms * 1000000ull;
	do {
		for (k = 0; k < HIT_BATCH && !err; k++) {
			err = hit_one(w, idx);
			if (++idx == npages)
				idx = 0;
		}
		ops += k;
		now = uf_now_ns();
	} while (now < end && !err && !bench_stop);
	w->ops = ops;
	w->err = err;
	w->ns = now - t0;
	return NULL;
}

static void hit_io_read(const struct hit_bench *b, struct hit_io *io)
{
	struct uf_cache_stats cs;

	memset(io, 0, sizeof(*io));
	bench_target_ios(&b->cm.t, &io->dev_reads, &io->dev_writes);
	if (!uf_cache_stats(b->cache, &cs)) {
		io->written = cs.nr_written;
		io->dirtied = cs.nr_dirtied;
	}
}

/* The window's I/O, added to the case's total. */
static void hit_io_add(struct hit_io *sum, const struct hit_io *a,
		       const struct hit_io *z)
{
	sum->dev_reads += z->dev_reads - a->dev_reads;
	sum->dev_writes += z->dev_writes - a->dev_writes;
	sum->written += z->written - a->written;
	sum->dirtied += z->dirtied - a->dirtied;
}

/* One window of case c: its total M ops/s in *mops. */
static int hit_window(struct hit_bench *b, enum hit_case c, double *mops)
{
	const struct hit_def *d = &hit_defs[c];
	struct hit_worker w[2];
	struct hit_io a, z;
	pthread_barrier_t go;
	uint64_t ops = 0, ns = 0;
	unsigned int i, started;
	int err = 0;

	memset(w, 0, sizeof(w));
	pthread_barrier_init(&go, NULL, d->threads);
	for (i = 0; i < d->threads; i++) {
		w[i].b = b;
		w[i].op = d->op;
		w[i].file = b->file[d->two_files ? i : 0];
		w[i].first = d->two_files ? 0 : i * (b->o.size / HIT_PAGE / 2);
		w[i].go = &go;
		w[i].buf = bench_random_buffer(HIT_PAGE);
		if (!w[i].buf)
			err = -ENOMEM;
	}
	hit_io_read(b, &a);
	for (started = 0; !err && started < d->threads; started++)
		err = -pthread_create(&w[started].thread, NULL, hit_worker_fn,
				      &w[started]);
	if (err && started) {
		/* the barrier waits for all: cannot happen past the first */
		bench_err("hits", "pthread_create: %s", strerror(-err));
		abort();
	}
	for (i = 0; i < started; i++) {
		pthread_join(w[i].thread, NULL);
		ops += w[i].ops;
		if (w[i].ns > ns)
			ns = w[i].ns;
		if (w[i].err && !err)
			err = w[i].err;
	}
	hit_io_read(b, &z);
	hit_io_add(&b->io[c], &a, &z);
	for (i = 0; i < d->threads; i++)
		free(w[i].buf);
	pthread_barrier_destroy(&go);
	*mops = ns ? ops * 1e3 / ns : 0;
	return err;
}

static int hit_run_one(void *priv, unsigned int c, unsigned int rep)
{
	struct hit_bench *b = priv;
	double mops = 0;
	int err, serr = 0;

	err = hit_window(b, c, &mops);
	/* clean again, untimed, so that every window starts alike */
	if (hit_defs[c].op == OP_PWRITE) {
		serr = uf_fsync(b->file[0]);
		if (!serr)
			serr = uf_fsync(b->file[1]);
	}
	if (bench_stop)
		return 0;
	if (err || serr) {
		snprintf(b->cases[c].why, sizeof(b->cases[c].why), "%s: %s",
			 err ? "window" : "uf_fsync", strerror(-(err ? err : serr)));
		fprintf(stderr, "  %s: %s\n", hit_defs[c].name,
			b->cases[c].why);
		return b->cases[c].runs ? (err ? err : serr) : BENCH_SKIP;
	}
	bench_samples_add(&b->mops[c], mops);
	fprintf(stderr, "rep %u %-16s %7.2f M ops/s\n", rep + 1,
		hit_defs[c].name, mops);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Setup: the cache, both files resident and clean                     */

static int hit_fill(struct uf_file *f, uint64_t size, const void *buf)
{
	struct uf_file_stats fs;
	int err = bench_fill_file(f, 0, size, buf);

	if (!err)
		err = uf_fsync(f);
	if (!err)
		err = uf_file_stats(f, &fs);
	if (!err && fs.nr_pages != size / HIT_PAGE)
		err = -ENOMEM;		/* not all of it stayed resident */
	return err;
}

static int hit_setup(struct hit_bench *b)
{
	unsigned long npages = b->o.size / HIT_PAGE;
	struct uf_cache_config cfg;
	struct uf_dev *dev;
	const char *what;
	int err, i;

	uf_cache_config_init(&cfg);
	/* both files and room to spare: nothing is reclaimed */
	cfg.nr_pages = 2 * npages + npages / 2 + 4096;
	/* both files dirty stay under the background threshold, and kupdate
	 * is off: no writeback can start in a window */
	cfg.dirty_bytes = cfg.nr_pages * HIT_PAGE;
	cfg.dirty_background_bytes = cfg.dirty_bytes - 1024 * HIT_PAGE;
	cfg.dirty_writeback_centisecs = 0;
	cfg.dirty_expire_centisecs = 360000;
	what = "uf_cache_open";
	err = uf_cache_open(&cfg, &b->cache);
	if (err)
		goto fail;
	snprintf(b->policy, sizeof(b->policy), "%s",
		 uf_cache_policy(b->cache));
	what = "uf_dev_open";
	err = bench_dev_open(&b->cm.ro, b->cache, &b->cm.t, &dev);
	for (i = 0; !err && i < 2; i++) {
		what = "uf_file_open";
		err = uf_file_open(dev, i + 1, i * b->o.size, b->o.size, NULL,
				   NULL, &b->file[i]);
		what = "filling the file (or it did not stay resident)";
		if (!err)
			err = hit_fill(b->file[i], b->o.size, b->ws);
	}
	if (!err)
		return 0;
fail:
	bench_err("hits", "%s: %s", what, strerror(-err));
	return err;
}

/* ------------------------------------------------------------------ */
/* Report                                                              */

/* Case c's ratio to its base, paired by repetition. */
static void hit_ratios(const struct hit_bench *b, enum hit_case c,
		       struct bench_samples *r)
{
	const struct bench_samples *x = &b->mops[c];
	const struct bench_samples *y = &b->mops[hit_defs[c].base];
	unsigned int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < x->n && i < y->n; i++)
		if (y->v[i] > 0)
			bench_samples_add(r, x->v[i] / y->v[i]);
}

/* The median of case c's paired ratios to its base; NAN if none. */
static double hit_measured_ratio(const struct hit_bench *b, enum hit_case c)
{
	struct bench_samples r;

	hit_ratios(b, c, &r);
	return r.n ? bench_samples_median(&r) : NAN;
}

/* The median the target is about, or NAN if there is none. */
static double hit_measured(const struct hit_bench *b, enum hit_case c)
{
	if (!hit_defs[c].target || !b->mops[c].n)
		return NAN;
	if (hit_defs[c].base < 0)
		return bench_samples_median(&b->mops[c]);
	return hit_measured_ratio(b, c);
}

static const char *const hits_cols[] = {
	"case", ">threads", ">M ops/s", ">min-max", ">GB/s", ">ratio",
	">min-max", "vs", ">target", "met", ">dev I/O",
};

static void hits_header(const void *priv)
{
	const struct hit_bench *b = priv;

	printf("hits: 4 KiB ops on %.0f MiB resident per file, %u ms windows, %u reps (interleaved)\n",
	       b->o.size / 1048576.0, b->o.ms, b->cm.reps);
	printf("policy:  %s\n", b->policy);
	printf("CPUs:    %ld online, load average %s", sysconf(_SC_NPROCESSORS_ONLN),
	       b->loadavg);
}

static void hits_row(struct bench_table *t, const void *priv, unsigned int c)
{
	const struct hit_bench *b = priv;
	const struct hit_def *d = &hit_defs[c];
	struct bench_samples r;
	struct bench_stats st;
	double m = hit_measured(b, c);
	int row = bench_table_row(t);

	if (row < 0)
		return;
	bench_table_set(t, row, 0, "%s", d->name);
	bench_table_set(t, row, 1, "%u", d->threads);
	if (!b->mops[c].n) {
		bench_table_set(t, row, 2, b->o.picked && !b->o.pick[c] ?
				"not run" : "skipped");
		return;
	}
	bench_samples_stats(&b->mops[c], &st);
	bench_table_set(t, row, 2, "%.2f", st.median);
	bench_table_set(t, row, 3, "%.2f-%.2f", st.min, st.max);
	bench_table_set(t, row, 4, "%.2f", st.median * HIT_PAGE / 1e3);
	if (d->base >= 0)
		hit_ratios(b, c, &r);
	if (d->base >= 0 && r.n) {
		bench_samples_stats(&r, &st);
		bench_table_set(t, row, 5, "%.2f", st.median);
		bench_table_set(t, row, 6, "%.2f-%.2f", st.min, st.max);
		bench_table_set(t, row, 7, "%s", hit_defs[d->base].name);
	}
	if (!b->counted)
		bench_table_set(t, row, 10, "?");
	else if (b->io[c].dev_reads || b->io[c].dev_writes)
		bench_table_set(t, row, 10, "%llur+%lluw",
				(unsigned long long)b->io[c].dev_reads,
				(unsigned long long)b->io[c].dev_writes);
	else
		bench_table_set(t, row, 10, "none");
	if (d->target) {
		bench_table_set(t, row, 8, d->base < 0 ? ">= %.0f M/s" :
				">= %.2f", d->target);
		bench_table_set(t, row, 9, isnan(m) ? "-" :
				m >= d->target ? "yes" : "NO");
	}
}

static void hits_notes(const void *priv)
{
	const struct hit_bench *b = priv;
	struct hit_io sum = { 0 };
	unsigned int c;
	double m;

	for (c = 0; c < NR_HIT_CASES; c++) {
		sum.dev_reads += b->io[c].dev_reads;
		sum.dev_writes += b->io[c].dev_writes;
		sum.written += b->io[c].written;
	}
	printf("\nratio: this case's rate over the 'vs' case's, paired by repetition; 'memcpy in x2'\n"
	       "says what two threads get on this machine as loaded now (a bound for the x2 cases).\n");
	m = hit_measured_ratio(b, C_MEMCPY2);
	if (!isnan(m) && m < hit_defs[C_PREAD2].target)
		printf("THE MACHINE GAVE TWO THREADS %.2fx ONE (memcpy in x2): the x2 targets (%.1fx)\n"
		       "cannot be judged in this run; give it two idle CPUs.\n",
		       m, hit_defs[C_PREAD2].target);
	if (!b->counted)
		printf("device I/O while timed: NOT CHECKED (the device has no sysfs counters)\n");
	else
		printf("device I/O while timed: %llu reads, %llu writes (sysfs)%s\n",
		       (unsigned long long)sum.dev_reads,
		       (unsigned long long)sum.dev_writes,
		       sum.dev_reads || sum.dev_writes ?
		       ": NOT ALL HITS, the numbers include I/O" : ": none");
	printf("pages written back while timed: %llu%s; pwrite windows dirtied %llu pages\n"
	       "(made clean again by an untimed fsync after each).\n",
	       (unsigned long long)sum.written,
	       sum.written ? " (THE FLUSHER RAN)" : "",
	       (unsigned long long)(b->io[C_PWRITE].dirtied +
				    b->io[C_PWRITE2].dirtied +
				    b->io[C_PWRITE2F].dirtied));
}

static void hits_json_config(struct bench_json *j, const void *priv)
{
	const struct hit_bench *b = priv;

	bench_json_u64(j, "size_bytes", b->o.size);
	bench_json_u64(j, "window_ms", b->o.ms);
	bench_json_str(j, "policy", b->policy);
	bench_json_bool(j, "io_counted", b->counted);
}

static void hits_json_case(struct bench_json *j, const void *priv,
			   unsigned int c)
{
	const struct hit_bench *b = priv;
	const struct hit_def *d = &hit_defs[c];
	struct bench_samples r;

	bench_json_obj(j, NULL);
	bench_json_str(j, "case", d->name);
	bench_json_u64(j, "threads", d->threads);
	bench_json_bool(j, "two_files", d->two_files);
	bench_json_bool(j, "skipped", b->cases[c].skipped);
	bench_json_samples(j, "mops", &b->mops[c]);
	if (d->base >= 0) {
		hit_ratios(b, c, &r);
		bench_json_str(j, "vs", hit_defs[d->base].name);
		bench_json_samples(j, "ratio", &r);
	}
	if (d->target) {
		bench_json_num(j, "target", d->target);
		bench_json_str(j, "target_unit", d->base < 0 ? "mops" : "ratio");
		bench_json_num(j, "measured", hit_measured(b, c));
	}
	bench_json_u64(j, "dev_reads", b->io[c].dev_reads);
	bench_json_u64(j, "dev_writes", b->io[c].dev_writes);
	bench_json_u64(j, "pages_written", b->io[c].written);
	bench_json_end(j);
}

static void hit_loadavg(struct hit_bench *b)
{
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(b->loadavg, sizeof(b->loadavg), "?\n");
	if (f) {
		if (!fgets(b->loadavg, sizeof(b->loadavg), f))
			snprintf(b->loadavg, sizeof(b->loadavg), "?\n");
		fclose(f);
	}
}

static const struct bench_report hits_report = BENCH_REPORT_OF(hits);

int bench_hits_main(int argc, char **argv)
{
	struct hit_bench *b = &hits;
	struct bench_sched s = { 0 };
	uint64_t r0, w0;
	unsigned int c;
	int err;

	err = bench_opts_main(&bench_hits_cmdline, argc, argv);
	if (err >= 0)
		return err;
	for (c = 0; c < NR_HIT_CASES; c++) {
		b->cases[c].name = hit_defs[c].name;
		b->cases[c].skipped = b->o.picked && !b->o.pick[c];
	}
	if (bench_env_init(&b->cm.env, "hits", false))
		return 1;
	b->ws = bench_random_buffer(b->o.size);
	if (!b->ws)
		return 1;
	err = bench_target_open(&b->cm.t, "hits", b->cm.dev, 2 * b->o.size,
				b->cm.force);
	if (err)
		goto out_free;
	b->cm.t.range = 2 * b->o.size;
	b->cm.t.force = b->cm.force;
	b->counted = bench_target_ios(&b->cm.t, &r0, &w0);
	bench_env_print(&b->cm.env, NULL, false);
	bench_target_print(&b->cm.t, NULL);
	err = hit_setup(b);
	if (!err) {
		s = (struct bench_sched)BENCH_SCHED_ROTATED(
			b->cases, NR_HIT_CASES, hit_run_one, b);
		s.reps = b->cm.reps;
		err = bench_sched_run(&s);
		hit_loadavg(b);
	}
	if (!err)	/* interrupted: the runs done so far */
		err = bench_report(&hits_report, &b->cm.env, &b->cm.t, b->cm.json, b,
				   NR_HIT_CASES);
	if (b->cache)
		uf_cache_close_discard(b->cache, UF_DISCARD_DIRTY);
	bench_target_close(&b->cm.t);
out_free:
	free(b->ws);
	return bench_exit_code("hits", err);
}
