// SPDX-License-Identifier: MIT
/*
 * bench/jbod.c - `uflush-bench jbod`: seed 001's JBOD test.  Several slow
 * disks (scratch loop devices, each shaped to --bw with the shaping
 * wrapper, so that each is its own bottleneck although they share one
 * backing disk), one cache over all of them, and 1, 10 or 100 writers
 * spread round-robin over the devices, each writing its own file
 * sequentially in 1 MiB chunks (dd bs=1M), wrapping at its end.
 *
 * Each run measures, after a second of warm-up, the pages whose writeback
 * completed during --secs seconds (the seed's vmstat nr_written), under
 * bgthresh=global (before: 3.1's over_bground_thresh) and bgthresh=bdi
 * (after: seed 001), all else equal (--policy).  Every case runs once per
 * repetition, repetitions outermost, so a drift of the machine hits both
 * alike.  The table is the seed's: before, the change, after, the case;
 * with the min-max of the repetitions and a total.  Beside it, the share
 * of samples (every 20 ms, per device) where a device had dirty pages but
 * none under writeback: the idle disk seed 001 set out to remove (BG-7).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"

#define JBOD_MAX_DEVS		16
#define JBOD_MAX_WRITERS	100
#define JBOD_CHUNK		(1u << 20)
#define JBOD_SAMPLE_MS		20

static const char *const writer_names[] = { "1", "10", "100" };
static const unsigned int writer_counts[] = { 1, 10, 100 };
#define NR_WCOUNTS	3

static const char *const bg_names[] = { "global", "bdi" };
/* the seed's words for them */
static const char *const side_names[] = { "before", "after" };

struct jbod_opts {
	unsigned int devs;
	bool devs_given, bw_given;
	struct bench_strv dev;		/* --dev: real devices */
	bool force;
	uint64_t bw;
	uint64_t dev_size;
	bool writers[NR_WCOUNTS];
	bool writers_given;
	unsigned int secs;
	unsigned int reps;
	unsigned int pages;
	const char *policy;
	const char *json;
};

struct jbod_run {
	double pages;		/* nr_written in the window */
	double mbs;
	double idle;		/* % of samples: dirty, nothing in flight */
};

/* A case: a writer count under one bgthresh. */
struct jbod_case {
	unsigned int writers;
	unsigned int bg;	/* 0 global, 1 bdi */
	unsigned int n;
	struct jbod_run runs[BENCH_MAX_REPS];
};

struct jbod_bench {
	struct jbod_opts o;
	struct bench_env env;
	struct bench_target t[JBOD_MAX_DEVS];
	struct bench_reopen ro[JBOD_MAX_DEVS];
	void *buf;
	unsigned int nr_cases;
	struct bench_case cases[2 * NR_WCOUNTS];
	struct jbod_case jc[2 * NR_WCOUNTS];
	char policy[2][512];
};

static struct jbod_bench jbod = {
	.o = { .devs = 4, .bw = 30ull << 20, .dev_size = 256ull << 20,
	       .secs = 5, .reps = 2, .pages = 16384 },
};

static const struct bench_opt jbod_opts[] = {
	{ .name = "devs", .arg = "N", .type = BENCH_OPT_UINT,
	  .dest = &jbod.o.devs, .min = 2, .max = JBOD_MAX_DEVS,
	  .given = &jbod.o.devs_given,
	  .help = "devices (scratch loop devices); 4" },
	{ .name = "dev", .arg = "PATH", .type = BENCH_OPT_STRV,
	  .dest = &jbod.o.dev,
	  .help = "use these devices instead (at least 2; repeat it or give\n"
		  "PATH,PATH,...): THEIR DATA IS OVERWRITTEN; unshaped unless --bw" },
	BENCH_OPT_FORCE(&jbod.o.force),
	{ .name = "bw", .arg = "SIZE", .type = BENCH_OPT_SIZE,
	  .dest = &jbod.o.bw, .min = 1ull << 20, .max = 1ull << 30,
	  .given = &jbod.o.bw_given,
	  .help = "each device's bandwidth in bytes/s (a slow disk); 30M" },
	BENCH_SIZE("dev-size", &jbod.o.dev_size, 64ull << 20, 4ull << 30,
		   1ull << 20, "each device's size; 256M"),
	{ .name = "writers", .arg = "LIST", .type = BENCH_OPT_LIST,
	  .dest = jbod.o.writers, .names = writer_names, .nr = NR_WCOUNTS,
	  .given = &jbod.o.writers_given, .want = "1, 10 or 100",
	  .help = "writer counts to run, of 1,10,100; all" },
	BENCH_UINT("secs", "SEC", &jbod.o.secs, 1, 600, NULL,
		   "measured seconds per run (after 1 s of warm-up); 5"),
	BENCH_OPT_REPS(&jbod.o.reps, "repetitions of each case; 2"),
	BENCH_OPT_CACHE(&jbod.o.pages, 1024, 1u << 22,
			"the cache (dirty limits are 20%/10% of it); 64M\n"
			"(--pages N: frames)"),
	BENCH_STR("policy", "SPEC", &jbod.o.policy,
		  "the policy both sides start from (bgthresh= is added);\n"
		  "linux-3.2"),
	BENCH_OPT_JSON(&jbod.o.json),
	BENCH_OPT_END,
};

BENCH_CMDLINE(jbod, jbod_opts,
	"Seed 001: JBOD throughput with the background threshold\n"
	"global (before) or also per device (after).\n"
	"Devices: scratch loop devices (direct I/O), each shaped\n"
	"to --bw; removed at exit.\n",
	"Environment: UFLUSH_TESTDIR = where the scratch files go.\n");

/* ------------------------------------------------------------------ */
/* A run                                                               */

struct writer {
	struct bench_thread t;		/* first: the harness joins it */
	struct uf_file *f;
	uint64_t size;
	const void *buf;
	bool *stop;
};

static void *writer_fn(void *arg)
{
	struct writer *w = arg;
	uint64_t off = 0;
	ssize_t n;

	while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED) && !bench_stop) {
		n = uf_pwrite(w->f, w->buf, JBOD_CHUNK, off);
		if (n != JBOD_CHUNK) {
			w->t.err = n < 0 ? (int)n : -EIO;
			break;
		}
		off += JBOD_CHUNK;
		if (off + JBOD_CHUNK > w->size)
			off = 0;
	}
	return NULL;
}

/* Samples where a device has dirty pages and none under writeback. */
static void sample_idle(struct uf_dev **dev, unsigned int n,
			unsigned long *idle, unsigned long *total)
{
	struct uf_dev_stats st;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (uf_dev_stats(dev[i], &st))
			continue;
		(*total)++;
		if (st.bdi_reclaimable_kb && !st.bdi_writeback_kb)
			(*idle)++;
	}
}

struct jbod_state {
	struct uf_cache *cache;
	struct uf_dev *dev[JBOD_MAX_DEVS];
	struct writer w[JBOD_MAX_WRITERS];
	unsigned int nr_writers;
	bool stop;
};

static int jbod_open(struct jbod_bench *b, struct jbod_case *jc,
		     struct jbod_state *s, char *why, size_t len)
{
	unsigned int i, per_dev, d = b->o.devs;
	struct uf_cache_config cfg;
	char spec[256];
	uint64_t fsize;
	int err;

	snprintf(spec, sizeof(spec), "%s,bgthresh=%s",
		 b->o.policy ? b->o.policy : "linux-3.2", bg_names[jc->bg]);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = b->o.pages;
	cfg.policy = spec;
	err = uf_cache_open(&cfg, &s->cache);
	if (err) {
		snprintf(why, len, "uf_cache_open(%s): %s", spec,
			 strerror(-err));
		return err;
	}
	snprintf(b->policy[jc->bg], sizeof(b->policy[0]), "%s",
		 uf_cache_policy(s->cache));
	for (i = 0; i < d; i++) {
		err = bench_dev_open(&b->ro[i], s->cache, &b->t[i], &s->dev[i]);
		if (err) {
			snprintf(why, len, "uf_dev_open %s: %s", b->t[i].path,
				 strerror(-err));
			return err;
		}
	}
	per_dev = (jc->writers + d - 1) / d;
	fsize = b->o.dev_size / per_dev / JBOD_CHUNK * JBOD_CHUNK;
	for (i = 0; i < jc->writers; i++) {
		struct writer *w = &s->w[i];

		w->size = fsize;
		w->buf = b->buf;
		w->stop = &s->stop;
		err = bench_spread_file(s->dev, d, i, fsize, &w->f, why, len);
		if (err)
			return err;
	}
	return 0;
}

static int jbod_once(struct jbod_bench *b, struct jbod_case *jc,
		     struct jbod_run *r, char *why, size_t len)
{
	struct jbod_state *s = calloc(1, sizeof(*s));
	unsigned long idle = 0, total = 0, steps, k;
	struct uf_cache_stats c0, c1;
	uint64_t t0;
	int err;

	if (!s)
		return -ENOMEM;
	err = jbod_open(b, jc, s, why, len);
	if (!err)
		err = bench_threads_start(s->w, sizeof(*s->w), jc->writers,
					  writer_fn, &s->nr_writers);
	if (!err) {
		bench_sleep_ms(1000);		/* warm-up: dirty pages pile up */
		uf_cache_stats(s->cache, &c0);
		t0 = uf_now_ns();
		steps = b->o.secs * 1000ul / JBOD_SAMPLE_MS;
		for (k = 0; k < steps && !bench_stop; k++) {
			bench_sleep_ms(JBOD_SAMPLE_MS);
			sample_idle(s->dev, b->o.devs, &idle, &total);
		}
		uf_cache_stats(s->cache, &c1);
		r->pages = (double)(c1.nr_written - c0.nr_written);
		r->mbs = r->pages * 4096 / 1e6 / ((uf_now_ns() - t0) / 1e9);
		r->idle = total ? 100.0 * idle / total : 0;
	}
	err = bench_threads_stop(&s->stop, s->w, sizeof(*s->w), s->nr_writers,
				 err, "uf_pwrite", why, len);
	err = bench_cache_close(s->cache, err, why, len);
	free(s);
	return err;
}

static int jbod_run_one(void *priv, unsigned int c, unsigned int rep)
{
	struct jbod_bench *b = priv;
	struct jbod_case *jc = &b->jc[c];
	struct jbod_run r = { 0 };
	int err;

	err = jbod_once(b, jc, &r, b->cases[c].why, sizeof(b->cases[c].why));
	if (bench_stop)
		return 0;
	if (err) {
		fprintf(stderr, "  %s: %s\n", b->cases[c].name,
			b->cases[c].why);
		return jc->n ? err : BENCH_SKIP;
	}
	jc->runs[jc->n++] = r;
	fprintf(stderr, "rep %u %3u writers bgthresh=%-6s %9.0f pages (%.1f MB/s), idle-with-backlog %.1f%%\n",
		rep + 1, jc->writers, bg_names[jc->bg], r.pages, r.mbs,
		r.idle);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Report                                                              */

static void gather(const struct jbod_case *jc, size_t off,
		   struct bench_samples *s)
{
	memset(s, 0, sizeof(*s));
	bench_samples_gather(s, jc->runs, jc->n, sizeof(struct jbod_run),
			     off);
}

static const char *const jbod_cols[] = {
	">before", ">min-max", ">+-%", ">after", ">min-max", "case",
	">idle% before", ">idle% after",
};

static void case_name(const struct jbod_bench *b, unsigned int writers,
		      char *buf, size_t len)
{
	snprintf(buf, len, "JBOD-%uHDD-%lluM/%udd-1M-%uM-20:10",
		 b->o.devs, (unsigned long long)(b->o.bw >> 20), writers,
		 (unsigned int)((uint64_t)b->o.pages * 4096 >> 20));
}

/* Row i: writer count i of the ones run (global, bdi); the last: total. */
static unsigned int nr_rows(const struct jbod_bench *b)
{
	return b->nr_cases / 2 + 1;
}

static void jbod_header(const void *priv)
{
	const struct jbod_bench *b = priv;
	unsigned int i;

	if (b->t[0].shaped)
		printf("jbod: %u devices shaped to %llu MB/s each, %u s measured per run, %u reps\n",
		       b->o.devs, (unsigned long long)(b->o.bw / 1000000),
		       b->o.secs, b->o.reps);
	else
		printf("jbod: %u devices (--dev, unshaped), %u s measured per run, %u reps\n",
		       b->o.devs, b->o.secs, b->o.reps);
	for (i = 1; i < b->o.devs; i++)
		bench_target_print(&b->t[i], NULL);
	printf("before:  %s\nafter:   %s\n", b->policy[0], b->policy[1]);
	printf("nr_written (pages whose writeback completed) in the window, median of the reps:\n");
}

static void jbod_row(struct bench_table *t, const void *priv, unsigned int i)
{
	const struct jbod_bench *b = priv;
	struct bench_samples s0, s1, idle;
	struct bench_stats st0, st1;
	double before = 0, after = 0;
	unsigned int k;
	char name[128];
	int row = bench_table_row(t);

	if (row < 0)
		return;
	if (i + 1 == nr_rows(b)) {
		for (k = 0; k < b->nr_cases; k += 2) {
			gather(&b->jc[k], offsetof(struct jbod_run, pages),
			       &s0);
			gather(&b->jc[k + 1], offsetof(struct jbod_run, pages),
			       &s1);
			before += bench_samples_median(&s0);
			after += bench_samples_median(&s1);
		}
		bench_table_set(t, row, 0, "%.0f", before);
		bench_table_set(t, row, 2, "%+.1f%%",
				before > 0 ? (after / before - 1) * 100 : 0);
		bench_table_set(t, row, 3, "%.0f", after);
		bench_table_set(t, row, 5, "TOTAL");
		return;
	}
	gather(&b->jc[2 * i], offsetof(struct jbod_run, pages), &s0);
	gather(&b->jc[2 * i + 1], offsetof(struct jbod_run, pages), &s1);
	bench_samples_stats(&s0, &st0);
	bench_samples_stats(&s1, &st1);
	bench_table_stats(t, row, 0, &st0);
	bench_table_set(t, row, 2, "%+.1f%%",
			st0.median > 0 ? (st1.median / st0.median - 1) * 100
				       : 0);
	bench_table_stats(t, row, 3, &st1);
	case_name(b, b->jc[2 * i].writers, name, sizeof(name));
	bench_table_set(t, row, 5, "%s", name);
	gather(&b->jc[2 * i], offsetof(struct jbod_run, idle), &idle);
	bench_table_set(t, row, 6, "%.1f", bench_samples_median(&idle));
	gather(&b->jc[2 * i + 1], offsetof(struct jbod_run, idle), &idle);
	bench_table_set(t, row, 7, "%.1f", bench_samples_median(&idle));
}

static void jbod_notes(const void *priv)
{
	const struct jbod_bench *b = priv;

	printf("\nidle%%: samples (every %d ms, per device) with reclaimable pages and none under\n"
	       "writeback.  Writers go round-robin over the %u devices.\n",
	       JBOD_SAMPLE_MS, b->o.devs);
}

static void jbod_json_config(struct bench_json *j, const void *priv)
{
	const struct jbod_bench *b = priv;
	unsigned int i;

	bench_json_u64(j, "devices", b->o.devs);
	bench_json_arr(j, "device_list");
	for (i = 0; i < b->o.devs; i++) {
		bench_json_obj(j, NULL);
		bench_target_json(j, &b->t[i]);
		bench_json_bool(j, "shaped", b->t[i].shaped);
		bench_json_end(j);
	}
	bench_json_end(j);
	bench_json_u64(j, "bw_bytes_per_sec", b->o.bw);
	bench_json_u64(j, "secs", b->o.secs);
	bench_json_u64(j, "cache_pages", b->o.pages);
	bench_json_policies(j, side_names, b->policy, 2);
}

static void jbod_json_case(struct bench_json *j, const void *priv,
			   unsigned int i)
{
	const struct jbod_bench *b = priv;
	struct bench_samples s;
	unsigned int k;

	bench_json_obj(j, NULL);
	if (i + 1 == nr_rows(b)) {
		bench_json_str(j, "case", "total");
		bench_json_end(j);
		return;
	}
	bench_json_u64(j, "writers", b->jc[2 * i].writers);
	for (k = 0; k < 2; k++) {
		bench_json_obj(j, bg_names[k]);
		gather(&b->jc[2 * i + k], offsetof(struct jbod_run, pages), &s);
		bench_json_samples(j, "nr_written", &s);
		gather(&b->jc[2 * i + k], offsetof(struct jbod_run, idle), &s);
		bench_json_samples(j, "idle_percent", &s);
		bench_json_end(j);
	}
	bench_json_end(j);
}

static const struct bench_report jbod_report = BENCH_REPORT_OF(jbod);

/* ------------------------------------------------------------------ */

/*
 * --dev: the devices given (--devs, if also given, must agree), each
 * needing --dev-size bytes; shaped only if --bw says so.
 */
static int jbod_devs(struct jbod_bench *b)
{
	if (!b->o.dev.n)
		return 0;
	if (b->o.dev.n < 2) {
		bench_err("jbod", "--dev gave 1 device; a JBOD needs at least 2 (repeat --dev, or --dev A,B,...)");
		return -EINVAL;
	}
	if (b->o.devs_given && b->o.devs != b->o.dev.n) {
		bench_err("jbod", "--devs %u but --dev gave %u devices",
			  b->o.devs, b->o.dev.n);
		return -EINVAL;
	}
	b->o.devs = b->o.dev.n;
	return bench_devs_distinct("jbod", &b->o.dev);
}

static int jbod_targets(struct jbod_bench *b)
{
	const char *dev;
	unsigned int i;

	for (i = 0; i < b->o.devs; i++) {
		dev = b->o.dev.n ? b->o.dev.v[i] : NULL;
		if (bench_target_open(&b->t[i], "jbod", dev, b->o.dev_size,
				      b->o.force))
			return -ENODEV;
		b->t[i].range = b->o.dev_size;
		b->t[i].shaped = !dev || b->o.bw_given;
		b->t[i].shape.bw_bytes_per_sec = b->o.bw;
	}
	return 0;
}

/* A run: a second of warm-up and --secs measured. */
static double jbod_est_secs(void *priv, unsigned int c)
{
	const struct jbod_bench *b = priv;

	(void)c;
	return 1 + b->o.secs;
}

int bench_jbod_main(int argc, char **argv)
{
	struct jbod_bench *b = &jbod;
	struct bench_sched s = {
		.cases = b->cases, .run = jbod_run_one, .priv = b,
		.est_secs = jbod_est_secs, .cmd = "jbod",
	};
	unsigned int i, k;
	int err;

	err = bench_opts_main(&bench_jbod_cmdline, argc, argv);
	if (err >= 0)
		return err;
	if (jbod_devs(b))
		return 2;
	for (k = 0; k < 2; k++) {
		char spec[256];

		snprintf(spec, sizeof(spec), "%s,bgthresh=%s",
			 b->o.policy ? b->o.policy : "linux-3.2", bg_names[k]);
		if (bench_check_policy("jbod", spec, NULL, 0))
			return 2;
	}
	for (i = 0; i < NR_WCOUNTS; i++) {
		if (b->o.writers_given && !b->o.writers[i])
			continue;
		for (k = 0; k < 2; k++) {
			b->jc[b->nr_cases] = (struct jbod_case){
				.writers = writer_counts[i], .bg = k,
			};
			b->cases[b->nr_cases].name =
				k ? "after (bdi)" : "before (global)";
			b->nr_cases++;
		}
	}
	if (bench_env_init(&b->env, "jbod", false))
		return 1;
	b->buf = bench_random_buffer(JBOD_CHUNK);
	if (!b->buf)
		return 1;
	err = jbod_targets(b);
	if (!err) {
		bench_env_print(&b->env, NULL, false);
		bench_target_print(&b->t[0], NULL);
		s.nr_cases = b->nr_cases;
		s.reps = b->o.reps;
		err = bench_sched_run(&s);
	}
	for (i = 0; !err && !bench_stop && i < b->nr_cases; i++)
		if (!b->jc[i].n) {
			bench_err("jbod", "%s could not run: %s",
				  b->cases[i].name, b->cases[i].why);
			err = -EIO;
		}
	if (!err)	/* interrupted: the runs done so far */
		err = bench_report(&jbod_report, &b->env, &b->t[0], b->o.json,
				   b, nr_rows(b));
	for (i = 0; i < b->o.devs; i++)
		bench_target_close(&b->t[i]);
	free(b->buf);
	return bench_exit_code("jbod", err);
}
