// SPDX-License-Identifier: MIT
/*
 * bench/pool.c - `uflush-bench pool`: a buffer pool's workload (issue 20,
 * item 1).  A working set of 4 KiB pages (keys) smaller or larger than the
 * cache, YCSB-style skewed reads and updates, so that hits, misses,
 * eviction and writeback happen at once, and the tail latency under it.
 * Three systems, on the same device, in the same run:
 *
 *   uflush    the page API: a read is uf_page_get(0), 64 bytes read,
 *             uf_page_put; an update uf_page_get(UF_PAGE_WRITE), 64 bytes
 *             changed, uf_page_set_dirty, uf_page_put; uf_fsync in W;
 *   kernel    the host's page cache: a read is a 4 KiB pread of the raw
 *             device, an update a pread, 64 bytes changed and a pwrite
 *             back (the same read-modify-write the page API does; a blind
 *             4 KiB pwrite would skip the miss's read); fsync in W.  Held
 *             to the uflush cache's limits as `uflush-bench cache` is: a
 *             memory cgroup of the cache's size, vm.dirty_bytes and
 *             dirty_background_bytes set to the cache's thresholds for
 *             the run and put back after it (and at exit, after SIGINT);
 *   direct    the same preads and pwrites with O_DIRECT: no cache at all.
 *
 * Mixes (bench/pool.h): A 50/50, B 95/5, C read-only, W 10/90 with an
 * fsync every --fsync-every updates of a thread.  Keys are Zipfian (theta
 * 0.99, scrambled as YCSB does) or uniform over ws x the cache.  Each run
 * warms up for a quarter of --secs (untimed; every run starts with an
 * empty cache: a new uflush cache, the host's caches dropped), then times
 * --secs: each operation alone with clock_gettime (an update of W that is
 * due an fsync includes it), into a log-bucket histogram per thread.
 * Around the timed window: the device's completed reads and writes (its
 * sysfs stat), the process's CPU (getrusage: all threads, uflush's flusher
 * and completion threads included), uflush's own write requests
 * (uf_dev_stats) and, where the kernel's memory cgroup is v2, its
 * cpu.stat.  The three systems run in turn for each configuration, the
 * order rotated over --reps; medians are reported, and the ratios of
 * uflush to the kernel and to O_DIRECT paired rep by rep.
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
#include "pool.h"

#define POOL_PAGE		4096u
#define POOL_TOUCH		64u	/* bytes read or changed per op */
#define POOL_MAX_WS		8
#define POOL_MAX_THREADS	8
#define POOL_PREFILL_CHUNK	(8u << 20)

enum pool_sys { SYS_UFLUSH, SYS_KERNEL, SYS_DIRECT, POOL_NR_SYS };

static const char *const sys_keys[POOL_NR_SYS] = {
	"uflush", "kernel", "direct",
};
static const char *const sys_names[POOL_NR_SYS] = {
	"uflush", "kernel page cache", "O_DIRECT",
};
static const char *const mix_names[POOL_NR_MIXES] = { "A", "B", "C", "W" };
static const char *const dist_names[POOL_NR_DISTS] = { "zipf", "uniform" };

struct pool_opts {
	bool mix[POOL_NR_MIXES];
	bool dist[POOL_NR_DISTS];
	bool sys[POOL_NR_SYS];
	const char *ws_arg, *threads_arg;
	uint64_t cache;
	unsigned int secs, reps, fsync_every, seed;
	const char *policy, *dev, *json;
	bool force, quiet, no_drop;
	bool mix_given, dist_given, sys_given;
};

/* What one run measured. */
struct pool_run {
	double ops_s;
	double p50_us, p99_us, p999_us, max_us;
	double dev_reads_op, dev_writes_op;	/* sysfs stat deltas */
	double cpu_us_op;			/* the process, all threads */
	double cg_cpu_us_op;			/* the kernel's cgroup; NAN */
	double uf_writes_op;			/* uf_dev_stats; NAN */
	double secs;
	uint64_t ops, reads, updates, fsyncs;
	bool dirty_held, memcg_held;		/* kernel only */
};

struct pool_row {
	unsigned int n;
	struct pool_run runs[BENCH_MAX_REPS];
};

/* One configuration: mix x dist x ws x threads. */
struct pool_cfg {
	enum pool_mix_id mix;
	enum pool_dist dist;
	double ws;
	unsigned int threads;
	uint64_t keys;
	struct pool_zipf zipf;
	struct bench_case cases[POOL_NR_SYS];	/* the schedule's */
	struct pool_row rows[POOL_NR_SYS];
};

struct pool_bench {
	struct pool_opts o;
	struct bench_env env;
	struct bench_target t;
	struct bench_reopen ro;
	double ws[POOL_MAX_WS];
	unsigned int nr_ws;
	unsigned int threads[POOL_MAX_THREADS];
	unsigned int nr_threads;
	struct pool_cfg *cfgs;
	unsigned int nr_cfgs;
	char policy[512];
	unsigned long dirty_thresh, background_thresh;	/* pages */
	struct bench_dirty dirty;
	char dirty_why[256], memcg_why[320];
	int memcg_version;
	int drop_err;
	char cpu_model[128];
	unsigned int runs_done, runs_total;
	FILE *out;			/* the text report */
};

static struct pool_bench pool_bench = {
	.o = {
		.cache = 256ull << 20, .secs = 10, .reps = 3,
		.fsync_every = 1000, .seed = 1,
		.ws_arg = "0.5,2,8", .threads_arg = "1,2",
	},
};

/* ------------------------------------------------------------------ */
/* The timed loop                                                      */

enum { PHASE_WARM, PHASE_TIMED, PHASE_STOP };

/* One worker, a cache line of its own for what it writes on every op. */
struct __attribute__((aligned(64))) pool_worker {
	struct bench_thread bt;		/* first: bench_threads_start */
	const struct pool_cfg *c;
	enum pool_sys sys;
	unsigned int fsync_every;
	int *phase;
	struct uf_file *file;
	int fd;
	unsigned char *buf;		/* 4 KiB, aligned for O_DIRECT */
	uint64_t rng;
	uint64_t sum;			/* of the bytes read: keeps the reads */
	struct pool_tally all, timed0;	/* since the start; at the window's */
	struct pool_hist *hist;
};

static int uflush_op(struct pool_worker *w, enum pool_op op, uint64_t key)
{
	unsigned int off = (key * POOL_TOUCH) % POOL_PAGE;
	struct uf_page *pg;
	unsigned char *p;
	int err, perr;

	err = uf_page_get(w->file, key, op == POOL_UPDATE ? UF_PAGE_WRITE : 0,
			  &pg);
	if (err)
		return err;
	p = uf_page_data(pg);
	if (op == POOL_READ) {
		memcpy(w->buf, p + off, POOL_TOUCH);
		w->sum += w->buf[0];
	} else {
		memset(p + off, (int)(w->rng & 0xff), POOL_TOUCH);
		err = uf_page_set_dirty(pg);
	}
	perr = uf_page_put(pg);
	return err ? err : perr;
}

/* pread (and for an update 64 bytes changed and pwrite) of one page. */
static int fd_op(struct pool_worker *w, enum pool_op op, uint64_t key)
{
	unsigned int off = (key * POOL_TOUCH) % POOL_PAGE;
	ssize_t n;

	n = pread(w->fd, w->buf, POOL_PAGE, (off_t)(key * POOL_PAGE));
	if (n != POOL_PAGE)
		return n < 0 ? -errno : -EIO;
	if (op == POOL_READ) {
		w->sum += w->buf[off];
		return 0;
	}
	memset(w->buf + off, (int)(w->rng & 0xff), POOL_TOUCH);
	n = pwrite(w->fd, w->buf, POOL_PAGE, (off_t)(key * POOL_PAGE));
	if (n != POOL_PAGE)
		return n < 0 ? -errno : -EIO;
	return 0;
}

static int pool_fsync(struct pool_worker *w)
{
	if (w->sys == SYS_UFLUSH)
		return uf_fsync(w->file);
	return fsync(w->fd) ? -errno : 0;
}

static int pool_one(struct pool_worker *w, bool timed)
{
	const struct pool_mix *m = &pool_mixes[w->c->mix];
	uint64_t key = pool_key(w->c->dist, &w->c->zipf, &w->rng);
	enum pool_op op = pool_next_op(m, &w->rng);
	uint64_t t0 = uf_now_ns();
	int err;

	err = w->sys == SYS_UFLUSH ? uflush_op(w, op, key) : fd_op(w, op, key);
	if (!err && pool_account(m, w->fsync_every, &w->all, op))
		err = pool_fsync(w);
	if (timed)
		pool_hist_add(w->hist, uf_now_ns() - t0);
	return err;
}

static void *pool_worker_fn(void *arg)
{
	struct pool_worker *w = arg;
	int ph, last = PHASE_WARM;

	while ((ph = __atomic_load_n(w->phase, __ATOMIC_ACQUIRE)) !=
	       PHASE_STOP && !bench_stop) {
		if (ph != last) {
			w->timed0 = w->all;
			last = ph;
		}
		w->bt.err = pool_one(w, ph == PHASE_TIMED);
		if (w->bt.err)
			break;
	}
	return NULL;
}

/* What the machine counted, at one end of the timed window. */
struct pool_snap {
	uint64_t ns;
	double cpu;
	bool have_dev;
	uint64_t reads, writes;
	bool have_uf;
	uint64_t uf_writes;
	double cg_cpu;			/* seconds; NAN if none */
};

/* usage_usec of a v2 group's cpu.stat, in seconds; NAN if none. */
static double cgroup_cpu(const struct bench_memcg *m)
{
	char path[600], line[128];
	unsigned long long us;
	double v = NAN;
	FILE *f;

	if (!m || !m->made || m->version != 2)
		return NAN;
	snprintf(path, sizeof(path), "%s/cpu.stat", m->dir);
	f = fopen(path, "r");
	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "usage_usec %llu", &us) == 1)
			v = us / 1e6;
	fclose(f);
	return v;
}

static void pool_snap(const struct pool_bench *b, struct uf_dev *dev,
		      const struct bench_memcg *m, struct pool_snap *s)
{
	struct uf_dev_stats ds;

	s->ns = uf_now_ns();
	bench_process_cpu(&s->cpu, NULL);
	s->have_dev = bench_target_ios(&b->t, &s->reads, &s->writes);
	s->have_uf = dev && !uf_dev_stats(dev, &ds);
	s->uf_writes = s->have_uf ? ds.write_ios : 0;
	s->cg_cpu = cgroup_cpu(m);
}

static double per_op(double v, uint64_t ops)
{
	return ops ? v / ops : NAN;
}

/* The run's figures from its workers and the two snapshots. */
static void pool_sum(struct pool_worker *w, unsigned int nr,
		     const struct pool_snap *a, const struct pool_snap *z,
		     struct pool_run *r)
{
	struct pool_hist *h = w[0].hist;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (i)
			pool_hist_merge(h, w[i].hist);
		r->reads += w[i].all.reads - w[i].timed0.reads;
		r->updates += w[i].all.updates - w[i].timed0.updates;
		r->fsyncs += w[i].all.fsyncs - w[i].timed0.fsyncs;
	}
	r->ops = h->n;
	r->secs = (z->ns - a->ns) / 1e9;
	r->ops_s = r->secs > 0 ? r->ops / r->secs : 0;
	r->p50_us = pool_hist_quantile(h, 0.50) / 1e3;
	r->p99_us = pool_hist_quantile(h, 0.99) / 1e3;
	r->p999_us = pool_hist_quantile(h, 0.999) / 1e3;
	r->max_us = h->max / 1e3;
	r->cpu_us_op = per_op((z->cpu - a->cpu) * 1e6, r->ops);
	r->dev_reads_op = a->have_dev && z->have_dev ?
			  per_op(z->reads - a->reads, r->ops) : NAN;
	r->dev_writes_op = a->have_dev && z->have_dev ?
			   per_op(z->writes - a->writes, r->ops) : NAN;
	r->uf_writes_op = a->have_uf && z->have_uf ?
			  per_op(z->uf_writes - a->uf_writes, r->ops) : NAN;
	r->cg_cpu_us_op = per_op((z->cg_cpu - a->cg_cpu) * 1e6, r->ops);
}

/* Where a run's workers work: uflush's file, or a descriptor. */
struct pool_where {
	struct uf_file *file;
	struct uf_dev *dev;
	int fd;
	const struct bench_memcg *memcg;
};

static int pool_workers_init(struct pool_bench *b, const struct pool_cfg *c,
			     enum pool_sys sys, const struct pool_where *at,
			     int *phase, struct pool_worker *w)
{
	unsigned int i;

	memset(w, 0, sizeof(*w) * c->threads);
	for (i = 0; i < c->threads; i++) {
		w[i].c = c;
		w[i].sys = sys;
		w[i].fsync_every = b->o.fsync_every;
		w[i].phase = phase;
		w[i].file = at->file;
		w[i].fd = at->fd;
		/* the same keys for every system and rep of a config */
		w[i].rng = (uint64_t)b->o.seed * 0x9e3779b97f4a7c15ull + i + 1;
		w[i].buf = bench_random_buffer(POOL_PAGE);
		w[i].hist = calloc(1, sizeof(*w[i].hist));
		if (!w[i].buf || !w[i].hist)
			return -ENOMEM;
	}
	return 0;
}

static void pool_workers_free(struct pool_worker *w, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		free(w[i].buf);
		free(w[i].hist);
	}
}

/* Warm up, time the window, stop: one run of one system. */
static int pool_window(struct pool_bench *b, const struct pool_cfg *c,
		       enum pool_sys sys, const struct pool_where *at,
		       struct pool_run *r, char *why, size_t len)
{
	struct pool_worker w[POOL_MAX_THREADS];
	struct pool_snap s0, s1;
	unsigned int started = 0;
	bool stop = false;
	int phase = PHASE_WARM, err;

	err = pool_workers_init(b, c, sys, at, &phase, w);
	if (!err)
		err = bench_threads_start(w, sizeof(w[0]), c->threads,
					  pool_worker_fn, &started);
	if (!err) {
		bench_sleep_ms(b->o.secs * 250);
		pool_snap(b, at->dev, at->memcg, &s0);
		__atomic_store_n(&phase, PHASE_TIMED, __ATOMIC_RELEASE);
		bench_sleep_ms(b->o.secs * 1000);
		pool_snap(b, at->dev, at->memcg, &s1);
	}
	__atomic_store_n(&phase, PHASE_STOP, __ATOMIC_RELEASE);
	err = bench_threads_stop(&stop, w, sizeof(w[0]), started, err,
				 sys_keys[sys], why, len);
	if (err && !why[0])
		snprintf(why, len, "%s: %s", sys_keys[sys], strerror(-err));
	if (!err && !bench_stop)
		pool_sum(w, c->threads, &s0, &s1, r);
	pool_workers_free(w, c->threads);
	return err;
}

/* ------------------------------------------------------------------ */
/* The three systems                                                   */

static void pool_cache_config(const struct pool_bench *b,
			      struct uf_cache_config *cfg)
{
	uf_cache_config_init(cfg);
	cfg->nr_pages = b->o.cache / POOL_PAGE;
	cfg->policy = b->o.policy;
}

struct uflush_arg {
	struct pool_bench *b;
	const struct pool_cfg *c;
	struct pool_run *r;
	char *why;
	size_t len;
};

static int uflush_fn(void *priv, struct uf_cache *cache, struct uf_dev *dev,
		     struct uf_file *file)
{
	struct uflush_arg *a = priv;
	struct pool_where at = { .file = file, .dev = dev, .fd = -1 };

	(void)cache;
	return pool_window(a->b, a->c, SYS_UFLUSH, &at, a->r, a->why, a->len);
}

static int run_uflush(struct pool_bench *b, const struct pool_cfg *c,
		      struct bench_case *bc, struct pool_run *r)
{
	struct uflush_arg a = { b, c, r, bc->why, sizeof(bc->why) };
	struct uf_cache_config cfg;

	pool_cache_config(b, &cfg);
	return bench_uflush_run(&cfg, &b->ro, &b->t, c->keys * POOL_PAGE,
				uflush_fn, &a, bc->why, sizeof(bc->why));
}

/* The host's cache held to the uflush cache's limits for the run. */
static void kernel_hold(struct pool_bench *b, struct bench_memcg *m,
			struct pool_run *r)
{
	char name[64];

	r->dirty_held = !bench_dirty_set(&b->dirty,
					 (uint64_t)b->dirty_thresh * POOL_PAGE,
					 (uint64_t)b->background_thresh *
					 POOL_PAGE);
	if (!r->dirty_held && !b->dirty_why[0])
		snprintf(b->dirty_why, sizeof(b->dirty_why), "%s",
			 b->dirty.why);
	snprintf(name, sizeof(name), "uflush-bench-%d-pool", (int)getpid());
	r->memcg_held = !bench_memcg_create(m, name, b->o.cache) &&
			!bench_memcg_enter(m);
	if (m->version)
		b->memcg_version = m->version;
	if (!r->memcg_held && !b->memcg_why[0])
		snprintf(b->memcg_why, sizeof(b->memcg_why), "%s", m->why);
}

static int run_fd(struct pool_bench *b, const struct pool_cfg *c,
		  enum pool_sys sys, struct bench_case *bc, struct pool_run *r)
{
	struct bench_memcg memcg = { 0 };
	struct pool_where at = { .fd = -1 };
	int flags = O_RDWR | O_CLOEXEC, err;

	if (sys == SYS_DIRECT)
		flags |= O_DIRECT;
	if (sys == SYS_KERNEL) {
		kernel_hold(b, &memcg, r);
		at.memcg = &memcg;
	}
	/* opened inside the group: the device's pages are charged to it */
	at.fd = open(b->t.path, flags);
	if (at.fd < 0) {
		err = -errno;
		snprintf(bc->why, sizeof(bc->why), "open %s: %s", b->t.path,
			 strerror(-err));
	} else {
		err = pool_window(b, c, sys, &at, r, bc->why, sizeof(bc->why));
		close(at.fd);
	}
	if (sys == SYS_KERNEL) {
		bench_memcg_destroy(&memcg);
		bench_dirty_restore(&b->dirty);
	}
	return err;
}

/*
 * Write back and drop the host's page cache before a run, so that the
 * kernel case starts as empty as a new uflush cache does.  Untimed.
 */
static void drop_caches(struct pool_bench *b)
{
	int err;

	if (b->o.no_drop) {
		sync();
		return;
	}
	err = bench_drop_caches();
	if (err && !b->drop_err)
		bench_err("pool", "warning: cannot drop the host's caches: %s; the kernel case may start warm",
			  strerror(-err));
	if (err)
		b->drop_err = err;
}

/* ------------------------------------------------------------------ */
/* The schedule                                                        */

struct pool_sched_arg {
	struct pool_bench *b;
	struct pool_cfg *c;
};

static void cfg_name(const struct pool_cfg *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s ws %gx %u thread%s", mix_names[c->mix],
		 dist_names[c->dist], c->ws, c->threads,
		 c->threads == 1 ? "" : "s");
}

static void progress(struct pool_bench *b, const struct pool_cfg *c,
		     unsigned int sys, unsigned int rep,
		     const struct pool_run *r)
{
	char name[64];

	if (b->o.quiet)
		return;
	cfg_name(c, name, sizeof(name));
	fprintf(stderr, "[%u/%u] %s rep %u/%u  %-17s %9.0f ops/s  p99 %8.1f us  p99.9 %8.1f us\n",
		b->runs_done, b->runs_total, name, rep + 1, b->o.reps,
		sys_names[sys], r->ops_s, r->p99_us, r->p999_us);
}

static int pool_sched_fn(void *priv, unsigned int sys, unsigned int rep)
{
	struct pool_sched_arg *a = priv;
	struct bench_case *bc = &a->c->cases[sys];
	struct pool_row *row = &a->c->rows[sys];
	struct pool_run *r = &row->runs[row->n];
	int err, ret;

	memset(r, 0, sizeof(*r));
	bc->why[0] = '\0';
	drop_caches(a->b);
	if (sys == SYS_UFLUSH)
		err = run_uflush(a->b, a->c, bc, r);
	else
		err = run_fd(a->b, a->c, sys, bc, r);
	a->b->runs_done++;
	if (bench_run_over(err, bc, row->n, &ret))
		return ret;
	progress(a->b, a->c, sys, rep, r);
	row->n++;
	return 0;
}

static int run_all(struct pool_bench *b)
{
	unsigned int i, s;
	int err = 0;

	for (i = 0; i < b->nr_cfgs && !err && !bench_stop; i++) {
		struct pool_cfg *c = &b->cfgs[i];
		struct pool_sched_arg a = { b, c };
		struct bench_sched sch = BENCH_SCHED_ROTATED(c->cases,
							     POOL_NR_SYS,
							     pool_sched_fn, &a);

		for (s = 0; s < POOL_NR_SYS; s++) {
			c->cases[s].name = sys_names[s];
			c->cases[s].skipped = !b->o.sys[s];
			if (!b->o.sys[s])
				snprintf(c->cases[s].why,
					 sizeof(c->cases[s].why),
					 "not in --systems");
		}
		sch.reps = b->o.reps;
		err = bench_sched_run(&sch);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Report                                                              */

#define RUN_SAMPLES(row, field, s) \
	BENCH_ROW_SAMPLES(row, struct pool_run, field, s)
#define RUN_STATS(row, field, st) \
	BENCH_ROW_STATS(row, struct pool_run, field, st)

static const char *const pool_cols[] = {
	"system", ">ops/s", ">(min-max)", ">p50 us", ">p99 us", ">p99.9 us",
	">dev rd/op", ">dev wr/op", ">cpu us/op", ">uf wr/op",
};

static double row_median(const struct pool_row *row, size_t off)
{
	struct bench_stats st;

	bench_field_stats(row->runs, row->n, sizeof(row->runs[0]), off, &st);
	return st.n ? st.median : NAN;
}

#define ROW_MEDIAN(row, field) \
	row_median(row, offsetof(struct pool_run, field))

static void cell_num(struct bench_table *t, unsigned int row,
		     unsigned int col, const char *fmt, double v)
{
	if (isnan(v))
		bench_table_set(t, row, col, "-");
	else
		bench_table_set(t, row, col, fmt, v);
}

static void table_row(struct bench_table *t, const struct pool_cfg *c,
		      unsigned int s)
{
	const struct pool_row *r = &c->rows[s];
	struct bench_stats st;
	int row;

	row = bench_table_case(t, 1, sys_names[s], &c->cases[s], r->n);
	if (row < 0)
		return;
	RUN_STATS(r, ops_s, &st);
	bench_table_stats(t, row, 1, &st);
	cell_num(t, row, 3, "%.1f", ROW_MEDIAN(r, p50_us));
	cell_num(t, row, 4, "%.1f", ROW_MEDIAN(r, p99_us));
	cell_num(t, row, 5, "%.1f", ROW_MEDIAN(r, p999_us));
	cell_num(t, row, 6, "%.3f", ROW_MEDIAN(r, dev_reads_op));
	cell_num(t, row, 7, "%.3f", ROW_MEDIAN(r, dev_writes_op));
	cell_num(t, row, 8, "%.2f", ROW_MEDIAN(r, cpu_us_op));
	cell_num(t, row, 9, "%.3f", ROW_MEDIAN(r, uf_writes_op));
}

/* "ops/s 1.23 (1.10-1.30)" of uflush over base; false if either is empty. */
static bool fmt_ratio(const struct pool_cfg *c, enum pool_sys base,
		      size_t off, char *buf, size_t len)
{
	struct bench_samples a, b;
	struct bench_stats st;
	double r;

	bench_samples_gather(&a, c->rows[SYS_UFLUSH].runs,
			     c->rows[SYS_UFLUSH].n, sizeof(struct pool_run),
			     off);
	bench_samples_gather(&b, c->rows[base].runs, c->rows[base].n,
			     sizeof(struct pool_run), off);
	r = bench_ratio(&a, &b);
	if (isnan(r))
		return false;
	bench_paired_stats(&a, &b, &st);
	snprintf(buf, len, "%.2f (%.2f-%.2f)", r, st.min, st.max);
	return true;
}

static void print_ratios(FILE *f, const struct pool_cfg *c)
{
	static const enum pool_sys bases[] = { SYS_KERNEL, SYS_DIRECT };
	char ops[64], p99[64];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		if (!fmt_ratio(c, bases[i], offsetof(struct pool_run, ops_s),
			       ops, sizeof(ops)))
			continue;
		if (!fmt_ratio(c, bases[i], offsetof(struct pool_run, p99_us),
			       p99, sizeof(p99)))
			snprintf(p99, sizeof(p99), "-");
		fprintf(f, "  uflush / %s: ops/s x %s, p99 x %s\n",
			sys_names[bases[i]], ops, p99);
	}
}

static void print_cfg(FILE *f, const struct pool_bench *b,
		      const struct pool_cfg *c)
{
	static struct bench_table t;
	const struct pool_mix *m = &pool_mixes[c->mix];
	char name[64];
	unsigned int s;

	cfg_name(c, name, sizeof(name));
	fprintf(f, "\n%s: %" PRIu64 " keys (%.0f MiB), %u%% reads",
		name, c->keys, c->keys * POOL_PAGE / 1048576.0, m->read_pct);
	if (m->fsyncs)
		fprintf(f, ", an fsync every %u updates per thread",
			b->o.fsync_every);
	fprintf(f, "\n");
	bench_table_init(&t, pool_cols,
			 sizeof(pool_cols) / sizeof(pool_cols[0]));
	for (s = 0; s < POOL_NR_SYS; s++)
		table_row(&t, c, s);
	bench_table_print(&t, f);
	print_ratios(f, c);
}

static void print_report(const struct pool_bench *b)
{
	FILE *f = b->out;
	char old[256];
	unsigned int i;

	fprintf(f, "uflush-bench pool: a buffer pool's reads and updates over a working set\n");
	fprintf(f, "kernel:  %s\ncpu:     %s, %ld online\n", b->env.kernel,
		b->cpu_model, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "device:  %s: %s%s\n", b->t.path, b->t.desc,
		b->t.scratch ? " (scratch, removed at exit)" : "");
	fprintf(f, "cache:   %" PRIu64 " MiB (%" PRIu64 " pages), policy %s\n",
		b->o.cache >> 20, b->o.cache / POOL_PAGE, b->policy);
	fprintf(f, "runs:    %u s timed after %.1f s of warm-up, %u rep%s, medians (min-max)\n",
		b->o.secs, b->o.secs / 4.0, b->o.reps,
		b->o.reps == 1 ? "" : "s");
	bench_dirty_fmt_old(&b->dirty, old, sizeof(old));
	fprintf(f, "kernel case: memcg v%d of %" PRIu64 " MiB%s%s; vm.dirty_bytes %lu, dirty_background_bytes %lu%s%s (host: %s)\n",
		b->memcg_version, b->o.cache >> 20,
		b->memcg_why[0] ? " NOT applied: " : "", b->memcg_why,
		b->dirty_thresh * POOL_PAGE, b->background_thresh * POOL_PAGE,
		b->dirty_why[0] ? " NOT applied: " : "", b->dirty_why, old);
	for (i = 0; i < b->nr_cfgs; i++)
		print_cfg(f, b, &b->cfgs[i]);
	fprintf(f, "\nlatency: one op (an update of W due an fsync includes it), log buckets of 1/32.\n"
		   "dev rd/op, wr/op: requests the device completed (sysfs stat) per op in the\n"
		   "window; uf wr/op: the write requests uflush submitted (uf_dev_stats).  cpu\n"
		   "us/op: the process's CPU (getrusage, all threads) per op; the host's flusher\n"
		   "and loop workers are not in it.  An update is a read-modify-write of 64 bytes\n"
		   "in all three systems (kernel, O_DIRECT: pread + pwrite of 4 KiB).\n");
	bench_reopen_print(&b->ro);
}

static void json_run_stats(struct bench_json *j, const struct pool_row *r)
{
#define JS(field) bench_json_field(j, #field, r->runs, r->n, \
				   sizeof(struct pool_run), \
				   offsetof(struct pool_run, field))
	JS(ops_s);
	JS(p50_us);
	JS(p99_us);
	JS(p999_us);
	JS(max_us);
	JS(dev_reads_op);
	JS(dev_writes_op);
	JS(cpu_us_op);
	JS(cg_cpu_us_op);
	JS(uf_writes_op);
	JS(secs);
#undef JS
	BENCH_JSON_RUNS(j, "ops", r->runs, r->n, run, run->ops);
	BENCH_JSON_RUNS(j, "reads", r->runs, r->n, run, run->reads);
	BENCH_JSON_RUNS(j, "updates", r->runs, r->n, run, run->updates);
	BENCH_JSON_RUNS(j, "fsyncs", r->runs, r->n, run, run->fsyncs);
}

static void json_ratio(struct bench_json *j, const char *key,
		       const struct pool_cfg *c, enum pool_sys base,
		       size_t off)
{
	struct bench_samples a, b;

	bench_samples_gather(&a, c->rows[SYS_UFLUSH].runs,
			     c->rows[SYS_UFLUSH].n, sizeof(struct pool_run),
			     off);
	bench_samples_gather(&b, c->rows[base].runs, c->rows[base].n,
			     sizeof(struct pool_run), off);
	bench_json_paired(j, key, &a, &b);
}

static void json_cfg(struct bench_json *j, const struct pool_bench *b,
		     const struct pool_cfg *c)
{
	unsigned int s;

	bench_json_obj(j, NULL);
	bench_json_str(j, "mix", mix_names[c->mix]);
	bench_json_str(j, "dist", dist_names[c->dist]);
	bench_json_num(j, "ws", c->ws);
	bench_json_u64(j, "threads", c->threads);
	bench_json_u64(j, "keys", c->keys);
	bench_json_u64(j, "read_pct", pool_mixes[c->mix].read_pct);
	bench_json_u64(j, "fsync_every",
		       pool_mixes[c->mix].fsyncs ? b->o.fsync_every : 0);
	bench_json_arr(j, "systems");
	for (s = 0; s < POOL_NR_SYS; s++) {
		bench_json_case(j, sys_keys[s], &c->cases[s], c->rows[s].n,
				"");
		json_run_stats(j, &c->rows[s]);
		if (s == SYS_KERNEL) {
			BENCH_JSON_RUNS(j, "memcg_applied", c->rows[s].runs,
					c->rows[s].n, run, run->memcg_held);
			BENCH_JSON_RUNS(j, "dirty_limits_applied",
					c->rows[s].runs, c->rows[s].n, run,
					run->dirty_held);
		}
		bench_json_end(j);
	}
	bench_json_end(j);
	json_ratio(j, "ratio_uflush_kernel_ops_s", c, SYS_KERNEL,
		   offsetof(struct pool_run, ops_s));
	json_ratio(j, "ratio_uflush_kernel_p99", c, SYS_KERNEL,
		   offsetof(struct pool_run, p99_us));
	json_ratio(j, "ratio_uflush_kernel_cpu_op", c, SYS_KERNEL,
		   offsetof(struct pool_run, cpu_us_op));
	json_ratio(j, "ratio_uflush_direct_ops_s", c, SYS_DIRECT,
		   offsetof(struct pool_run, ops_s));
	json_ratio(j, "ratio_uflush_direct_p99", c, SYS_DIRECT,
		   offsetof(struct pool_run, p99_us));
	bench_json_end(j);
}

static void json_config(struct bench_json *j, const struct pool_bench *b)
{
	bench_json_str(j, "kernel", b->env.kernel);
	bench_json_str(j, "cpu_model", b->cpu_model);
	bench_json_int(j, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
	bench_json_bool(j, "interrupted", bench_stop != 0);
	bench_json_obj(j, "device");
	bench_target_json(j, &b->t);
	bench_json_end(j);
	bench_json_obj(j, "config");
	bench_json_u64(j, "cache_bytes", b->o.cache);
	bench_json_u64(j, "cache_pages", b->o.cache / POOL_PAGE);
	bench_json_str(j, "policy", b->policy);
	bench_json_u64(j, "secs", b->o.secs);
	bench_json_num(j, "warmup_secs", b->o.secs / 4.0);
	bench_json_u64(j, "reps", b->o.reps);
	bench_json_u64(j, "fsync_every", b->o.fsync_every);
	bench_json_u64(j, "seed", b->o.seed);
	bench_json_num(j, "zipf_theta", POOL_THETA);
	bench_json_u64(j, "touch_bytes", POOL_TOUCH);
	bench_json_bool(j, "caches_dropped", !b->o.no_drop && !b->drop_err);
	bench_json_end(j);
	bench_json_obj(j, "kernel_limits");
	bench_json_u64(j, "dirty_bytes", b->dirty_thresh * POOL_PAGE);
	bench_json_u64(j, "dirty_background_bytes",
		       b->background_thresh * POOL_PAGE);
	bench_json_str(j, "dirty_error", b->dirty_why);
	bench_json_int(j, "memcg_version", b->memcg_version);
	bench_json_u64(j, "memcg_limit_bytes", b->o.cache);
	bench_json_str(j, "memcg_error", b->memcg_why);
	bench_json_end(j);
}

/* The JSON report to path, or to stdout for "-". */
static int json_report(const struct pool_bench *b, const char *path)
{
	struct bench_json j;
	unsigned int i;
	int err;

	if (!strcmp(path, "-")) {
		bench_json_init(&j, stdout);
		bench_json_obj(&j, NULL);
		bench_json_str(&j, "benchmark", "pool");
	} else {
		err = bench_json_create(&j, "pool", path);
		if (err)
			return err;
	}
	json_config(&j, b);
	bench_json_arr(&j, "results");
	for (i = 0; i < b->nr_cfgs; i++)
		json_cfg(&j, b, &b->cfgs[i]);
	bench_json_end(&j);
	if (strcmp(path, "-"))
		return bench_json_finish(&j, "pool", path);
	while (j.depth)
		bench_json_end(&j);
	fputc('\n', stdout);
	return fflush(stdout) ? -EIO : 0;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

static const struct bench_opt pool_opt_table[] = {
	{ .name = "mix", .arg = "LIST", .type = BENCH_OPT_LIST,
	  .dest = pool_bench.o.mix, .names = mix_names, .nr = POOL_NR_MIXES,
	  .given = &pool_bench.o.mix_given, .want = "A, B, C or W",
	  .help = "of A (50% reads, 50% updates), B (95/5), C (reads),\n"
		  "W (10/90, fsync every --fsync-every updates)\n"
		  "(default A,B,C,W)" },
	{ .name = "dist", .arg = "LIST", .type = BENCH_OPT_LIST,
	  .dest = pool_bench.o.dist, .names = dist_names,
	  .nr = POOL_NR_DISTS, .given = &pool_bench.o.dist_given,
	  .want = "zipf or uniform",
	  .help = "keys: zipf (theta 0.99, scrambled), uniform\n"
		  "(default zipf,uniform)" },
	BENCH_STR("ws", "LIST", &pool_bench.o.ws_arg,
		  "working sets in multiples of the cache, 0.1..64\n"
		  "(default 0.5,2,8)"),
	BENCH_STR("threads", "LIST", &pool_bench.o.threads_arg,
		  "worker threads, 1..8 (default 1,2)"),
	{ .name = "systems", .arg = "LIST", .type = BENCH_OPT_LIST,
	  .dest = pool_bench.o.sys, .names = sys_keys, .nr = POOL_NR_SYS,
	  .given = &pool_bench.o.sys_given,
	  .want = "uflush, kernel or direct",
	  .help = "of uflush, kernel, direct (default all three)" },
	{ .name = "cache", .arg = "SIZE", .type = BENCH_OPT_SIZE,
	  .dest = &pool_bench.o.cache, .min = 1u << 20, .max = 64ull << 30,
	  .align = 4096, .want = "a multiple of 4k from 1M to 64G",
	  .help = "the uflush cache, and the kernel's memory cgroup\n"
		  "(default 256M)" },
	BENCH_UINT("secs", "N", &pool_bench.o.secs, 1, 3600, NULL,
		   "timed seconds per run, after N/4 s of warm-up\n"
		   "(default 10)"),
	BENCH_OPT_REPS(&pool_bench.o.reps,
		       "repetitions of the three systems (default 3)"),
	BENCH_UINT("fsync-every", "N", &pool_bench.o.fsync_every, 1,
		   UINT_MAX, NULL,
		   "W: an fsync after every N updates of a thread\n"
		   "(default 1000)"),
	BENCH_UINT("seed", "N", &pool_bench.o.seed, 1, UINT_MAX, NULL,
		   "of the key and op sequences (default 1)"),
	BENCH_STR("policy", "SPEC", &pool_bench.o.policy,
		  "uflush flush policy (default: the library's)"),
	BENCH_FLAG("quiet", &pool_bench.o.quiet,
		   "no progress lines on stderr"),
	BENCH_FLAG("no-drop-caches", &pool_bench.o.no_drop,
		   "only sync between runs"),
	BENCH_OPT_DEV(&pool_bench.o.dev),
	BENCH_OPT_FORCE(&pool_bench.o.force),
	BENCH_STR("json", "FILE", &pool_bench.o.json,
		  "also write the results as JSON; \"-\": to stdout\n"
		  "(the text report then goes to stderr)"),
	BENCH_OPT_END,
};

const struct bench_cmdline bench_pool_cmdline = {
	.cmd = "pool",
	.about =
		"A buffer pool's workload: YCSB-style mixes of 4 KiB page reads and\n"
		"updates (64 bytes each), Zipfian or uniform keys over a working set of\n"
		"ws x the cache, through uflush's page API, the host kernel's page cache\n"
		"(pread/pwrite in a memory cgroup of the cache's size, vm.dirty_bytes\n"
		"set to the cache's dirty threshold for the run) and O_DIRECT; the three\n"
		"interleaved over --reps, each run warmed up, then timed op by op:\n"
		"ops/s, p50/p99/p99.9 latency, device reads and writes and CPU per op,\n"
		"uflush/kernel and uflush/O_DIRECT ratios.  Needs root for the loop\n"
		"device, the cgroup, the sysctls and drop_caches.\n"
		"Short form: --mix A --dist zipf --ws 2 --threads 1 --secs 2 --reps 1\n"
		BENCH_SCRATCH_ABOUT,
	.opts = pool_opt_table,
	.epilog = BENCH_ENV_TESTDIR,
};

/* A comma-separated list of numbers in [lo, hi] into v (at most max). */
static int parse_nums(const char *opt, const char *s, double lo, double hi,
		      bool integer, double *v, unsigned int max,
		      unsigned int *nr)
{
	const char *p = s;
	char *end;
	double x;

	*nr = 0;
	for (;;) {
		errno = 0;
		x = strtod(p, &end);
		if (end == p || errno || !(x >= lo && x <= hi) ||
		    (integer && x != floor(x)) || (*end && *end != ',') ||
		    *nr == max) {
			bench_err("pool", "--%s %s: want up to %u comma-separated %s in %g..%g",
				  opt, s, max, integer ? "integers" : "numbers",
				  lo, hi);
			return -EINVAL;
		}
		v[(*nr)++] = x;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* A --json FILE that cannot be written is said before the runs, not after. */
static int check_json(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return 0;
	f = fopen(path, "a");
	if (!f) {
		bench_err("pool", "--json %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	fclose(f);
	return 0;
}

static int check_opts(struct pool_bench *b)
{
	double th[POOL_MAX_THREADS];
	unsigned int i;
	int err;

	if (!b->o.mix_given)
		memset(b->o.mix, 1, sizeof(b->o.mix));
	if (!b->o.dist_given)
		memset(b->o.dist, 1, sizeof(b->o.dist));
	if (!b->o.sys_given)
		memset(b->o.sys, 1, sizeof(b->o.sys));
	err = parse_nums("ws", b->o.ws_arg, 0.1, 64, false, b->ws, POOL_MAX_WS,
			 &b->nr_ws);
	if (!err)
		err = parse_nums("threads", b->o.threads_arg, 1,
				 POOL_MAX_THREADS, true, th, POOL_MAX_THREADS,
				 &b->nr_threads);
	for (i = 0; !err && i < b->nr_threads; i++)
		b->threads[i] = (unsigned int)th[i];
	return err ? err : check_json(b->o.json);
}

/* ------------------------------------------------------------------ */
/* Main                                                                */

/* The configurations, mixes outermost; the largest working set in bytes. */
static int make_cfgs(struct pool_bench *b, uint64_t *max_bytes)
{
	unsigned int m, d, w, t, n = 0;
	uint64_t pages = b->o.cache / POOL_PAGE;
	struct pool_cfg *c;
	int err;

	b->cfgs = calloc(POOL_NR_MIXES * POOL_NR_DISTS * b->nr_ws *
			 b->nr_threads, sizeof(*b->cfgs));
	if (!b->cfgs)
		return -ENOMEM;
	*max_bytes = 0;
	for (m = 0; m < POOL_NR_MIXES; m++) {
		for (d = 0; d < POOL_NR_DISTS; d++) {
			for (w = 0; w < b->nr_ws; w++) {
				for (t = 0; t < b->nr_threads; t++) {
					if (!b->o.mix[m] || !b->o.dist[d])
						continue;
					c = &b->cfgs[n++];
					c->mix = m;
					c->dist = d;
					c->ws = b->ws[w];
					c->threads = b->threads[t];
					c->keys = (uint64_t)(pages * c->ws);
					if (c->keys < 2)
						c->keys = 2;
					/* a zeta(n) per config: n pow() calls */
					err = pool_zipf_init(&c->zipf, c->keys,
							     POOL_THETA, true);
					if (err)
						return err;
					if (c->keys * POOL_PAGE > *max_bytes)
						*max_bytes = c->keys *
							     POOL_PAGE;
				}
			}
		}
	}
	b->nr_cfgs = n;
	return 0;
}

static void cpu_model(char *buf, size_t len)
{
	char line[256], *p;
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) || !(p = strchr(line, ':')))
			continue;
		p += 1 + (p[1] == ' ');
		p[strcspn(p, "\n")] = '\0';
		snprintf(buf, len, "%s", p);
		break;
	}
	fclose(f);
}

/* The uflush cache's policy and dirty limits (the kernel is held to them). */
static int resolve_limits(struct pool_bench *b)
{
	struct uf_cache_config cfg;
	struct uf_cache_stats cs;
	struct uf_cache *cache;
	const char *spec;
	int err;

	pool_cache_config(b, &cfg);
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		bench_err("pool", "cannot open a cache of %" PRIu64 " pages with policy %s: %s",
			  b->o.cache / POOL_PAGE,
			  b->o.policy ? b->o.policy : "(default)",
			  strerror(-err));
		return err;
	}
	spec = uf_cache_policy(cache);
	snprintf(b->policy, sizeof(b->policy), "%s", spec ? spec : "?");
	err = uf_cache_stats(cache, &cs);
	uf_cache_close(cache);
	if (err)
		return err;
	b->dirty_thresh = cs.dirty_thresh;
	b->background_thresh = cs.background_thresh;
	return 0;
}

static int pool_run_all(struct pool_bench *b, uint64_t range)
{
	double est;
	int err;

	b->runs_total = b->nr_cfgs * b->o.reps * POOL_NR_SYS;
	est = b->runs_total * b->o.secs * 1.25;
	if (!b->o.quiet)
			bench_err("pool", "%u configs x %u reps x 3 systems, about %.0f min; device %s (%s)",
			  b->nr_cfgs, b->o.reps, est / 60, b->t.path,
			  b->t.desc);
	if (b->t.scratch && !bench_stop) {
		err = bench_target_prefill(&b->t, range, POOL_PREFILL_CHUNK);
		if (err) {
			bench_err("pool", "prefill failed: %s", strerror(-err));
			return err;
		}
	}
	err = run_all(b);
	if (err)
		return err;
	print_report(b);
	fflush(b->out);
	return b->o.json ? json_report(b, b->o.json) : 0;
}

static unsigned int uflush_runs(const struct pool_bench *b)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->nr_cfgs; i++)
		n += b->cfgs[i].rows[SYS_UFLUSH].n;
	return n;
}

int bench_pool_main(int argc, char **argv)
{
	struct pool_bench *b = &pool_bench;
	unsigned int runs;
	uint64_t range;
	int err;

	err = bench_opts_parse(&bench_pool_cmdline, argc, argv, stdout,
			       stderr);
	if (!err)
		err = check_opts(b);
	if (err)
		return err > 0 ? 0 : 2;
	b->out = b->o.json && !strcmp(b->o.json, "-") ? stderr : stdout;
	if (bench_env_init(&b->env, "pool", false))
		return 1;
	cpu_model(b->cpu_model, sizeof(b->cpu_model));
	err = make_cfgs(b, &range);
	if (!err && !b->nr_cfgs)
		err = -EINVAL;
	if (err) {
		bench_err("pool", "no configuration to run: %s",
			  strerror(-err));
		return 2;
	}
	if (resolve_limits(b))
		return 2;
	if (bench_target_open(&b->t, "pool", b->o.dev, range, false))
		return 1;
	b->t.range = range;
	b->t.force = b->o.force;
	if (!bench_stop)
		err = pool_run_all(b, range);
	bench_target_close(&b->t);
	runs = uflush_runs(b);	/* before the configurations go */
	free(b->cfgs);
	b->cfgs = NULL;
	if (!b->o.sys[SYS_UFLUSH])	/* --systems without it */
		return bench_exit_code("pool", err);
	return bench_exit_uflush("pool", err, runs);
}
