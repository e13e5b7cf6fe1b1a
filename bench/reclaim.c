// SPDX-License-Identifier: MIT
/*
 * bench/reclaim.c - `uflush-bench reclaim`: seed 003's test case (Greg
 * Thelen's memcg dd, S003:L310-325), scaled.  Two writers each write
 * --data bytes in --bs (1 KiB) writes, sequentially, into their own file
 * on one device, inside a memory domain of --limit bytes (the seed's 100 MB
 * memcg) in a machine of --machine bytes (which sets the dirty limits, as
 * a memcg had none of its own).  The cases, in the same run:
 *
 *   3.2        reclaim=3.2: reclaim marks dirty pages PG_reclaim, wakes
 *              the flushers and goes on scanning; in the domain it fails
 *              allocations (the seed: "the dd tasks are quickly OOM
 *              killed");
 *   pageout    reclaim=pageout: seed 003's pageout works and reclaim_wait
 *              (the seed: no OOM, ~48 MB/s each, ~95% of global);
 *   mainline   reclaim=mainline: flusher wakeups (reason vmscan) and
 *              reclaim_throttle, as a cgroup-v1 memcg gets today;
 *   legacy     reclaim=legacy: reclaim writes the pages itself, one at a
 *              time (pageout());
 *   global     no domain: the writers use the whole machine as global
 *              memory (kswapd, the machine's dirty limits), the seed's
 *              "global dd numbers for comparison".
 *
 * A writer that gets -ENOMEM (or a short count) counts an allocation
 * failure and retries the rest of that write (the seed's dd would be
 * dead; counting them says how often).  MB/s per writer is its bytes over
 * its own time from its first write to the end of its fsync (dd
 * conv=fsync), so that a case whose cache holds more of the data is not
 * credited with writes the device has not done.  Defaults are
 * the seed's ratio scaled 1:16: 6.25 MiB domain, 64 MiB per writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"

enum rc_case { RC_32, RC_PAGEOUT, RC_MAINLINE, RC_LEGACY, RC_GLOBAL, RC_NR };

static const char *const rc_names[RC_NR] = {
	"3.2", "pageout", "mainline", "legacy", "global",
};

static const char *const rc_specs[RC_NR] = {
	"linux-3.2", "linux-3.2,reclaim=pageout", "linux-3.2,reclaim=mainline",
	"linux-3.2,reclaim=legacy", "linux-3.2",
};

struct rc_opts {
	uint64_t limit, machine, data, bs;
	unsigned int reps;
	const char *dev;
	bool force;
	const char *json;
};

struct rc_run {
	double mbs[2];			/* per writer */
	unsigned long failures;
	unsigned long waits, wait_timeouts, works, merged, pageouts, throttles;
	double wait_avg_ms;
};

struct rc_bench {
	struct rc_opts o;
	struct bench_target t;
	struct bench_reopen ro;
	struct bench_case cases[RC_NR];
	struct rc_run runs[RC_NR][BENCH_MAX_REPS];
	unsigned int nr_runs[RC_NR];
	void *buf;
};

struct rc_writer {
	struct uf_file *f;
	const struct rc_opts *o;
	const void *buf;
	double secs;
	unsigned long failures;
	int err;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *rc_write(void *arg)
{
	struct rc_writer *w = arg;
	uint64_t off = 0, bs = w->o->bs;
	double t0 = now_s();
	ssize_t n;
	size_t done;

	while (off < w->o->data && !bench_stop) {
		done = 0;
		while (done < bs) {
			n = uf_pwrite(w->f, (const char *)w->buf + done,
				      (size_t)bs - done, off + done);
			if (n == -ENOMEM || (n >= 0 && (size_t)n < bs - done))
				w->failures++;
			else if (n < 0) {
				w->err = (int)n;
				return NULL;
			}
			if (n > 0)
				done += (size_t)n;
			if (w->failures > 1000000)
				return NULL;
		}
		off += bs;
	}
	w->err = uf_fsync(w->f);
	w->secs = now_s() - t0;
	return NULL;
}

static int rc_run_one(void *priv, unsigned int c, unsigned int rep)
{
	struct rc_bench *b = priv;
	struct uf_cache_config cfg;
	struct rc_writer w[2];
	struct uf_cache_stats st;
	struct uf_cache *cache;
	struct uf_dev *dev;
	struct rc_run *r = &b->runs[c][b->nr_runs[c]];
	pthread_t th[2];
	int err, i;

	(void)rep;
	uf_cache_config_init(&cfg);
	cfg.nr_pages = (size_t)(b->o.machine / 4096);
	cfg.policy = rc_specs[c];
	if (c != RC_GLOBAL)
		cfg.mem_limit_pages = (size_t)(b->o.limit / 4096);
	err = uf_cache_open(&cfg, &cache);
	if (err)
		return err;
	err = bench_dev_open(&b->ro, cache, &b->t, &dev);
	if (err)
		goto out;
	memset(w, 0, sizeof(w));
	for (i = 0; i < 2; i++) {
		w[i].o = &b->o;
		w[i].buf = b->buf;
		err = uf_file_open(dev, (uint64_t)i + 1, (uint64_t)i * b->o.data,
				   b->o.data, NULL, NULL, &w[i].f);
		if (err)
			goto out;
	}
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, rc_write, &w[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	uf_cache_stats(cache, &st);
	memset(r, 0, sizeof(*r));
	for (i = 0; i < 2; i++) {
		if (w[i].err && !err)
			err = w[i].err;
		r->mbs[i] = w[i].secs > 0 ? (double)b->o.data / 1e6 / w[i].secs
					  : 0;
		r->failures += w[i].failures;
	}
	r->waits = st.nr_reclaim_wait;
	r->wait_timeouts = st.reclaim_wait_timeouts;
	r->wait_avg_ms = st.nr_reclaim_wait ?
		(double)st.reclaim_wait_us / 1000.0 / (double)st.nr_reclaim_wait : 0;
	r->works = st.nr_pageout_works;
	r->merged = st.nr_pageout_merged;
	r->pageouts = st.nr_pageout;
	r->throttles = st.nr_throttle + st.nr_congestion_wait;
	if (!err)
		b->nr_runs[c]++;
out:
	uf_cache_close(cache);	/* syncs, closes files and device */
	return err;
}

static void rc_print(struct rc_bench *b)
{
	static const char *const cols[] = {
		"case", ">alloc failures (all reps)", ">MB/s writer 1", ">MB/s writer 2",
		">total MB/s", ">% of global", ">reclaim waits",
		">avg delay ms", ">full 100ms", ">pageout works",
		">merged", ">pageout()", ">throttles",
	};
	struct bench_samples tot[RC_NR];
	struct bench_table t;
	unsigned int c, k;
	double g;
	int row;

	for (c = 0; c < RC_NR; c++) {
		tot[c].n = 0;
		for (k = 0; k < b->nr_runs[c]; k++)
			bench_samples_add(&tot[c], b->runs[c][k].mbs[0] +
					  b->runs[c][k].mbs[1]);
	}
	g = bench_samples_median(&tot[RC_GLOBAL]);
	bench_table_init(&t, cols, sizeof(cols) / sizeof(cols[0]));
	for (c = 0; c < RC_NR; c++) {
		struct bench_samples s[2] = { { 0 }, { 0 } };
		struct rc_run *r;
		unsigned long f = 0, w = 0, to = 0, wk = 0, mg = 0, po = 0, th = 0;
		double d = 0;

		if (!b->nr_runs[c])
			continue;
		for (k = 0; k < b->nr_runs[c]; k++) {
			r = &b->runs[c][k];
			bench_samples_add(&s[0], r->mbs[0]);
			bench_samples_add(&s[1], r->mbs[1]);
			f += r->failures; w += r->waits; to += r->wait_timeouts;
			wk += r->works; mg += r->merged; po += r->pageouts;
			th += r->throttles;
			d += r->wait_avg_ms;
		}
		row = bench_table_row(&t);
		if (row < 0)
			break;
		bench_table_set(&t, (unsigned int)row, 0, "%s", rc_names[c]);
		bench_table_set(&t, (unsigned int)row, 1, "%lu", f);
		bench_table_set(&t, (unsigned int)row, 2, "%.1f",
				bench_samples_median(&s[0]));
		bench_table_set(&t, (unsigned int)row, 3, "%.1f",
				bench_samples_median(&s[1]));
		bench_table_set(&t, (unsigned int)row, 4, "%.1f",
				bench_samples_median(&tot[c]));
		bench_table_set(&t, (unsigned int)row, 5, "%.0f%%",
				g > 0 ? 100.0 * bench_samples_median(&tot[c]) / g
				      : 0.0);
		bench_table_set(&t, (unsigned int)row, 6, "%lu", w / b->nr_runs[c]);
		bench_table_set(&t, (unsigned int)row, 7, "%.1f",
				d / b->nr_runs[c]);
		bench_table_set(&t, (unsigned int)row, 8, "%lu", to / b->nr_runs[c]);
		bench_table_set(&t, (unsigned int)row, 9, "%lu", wk / b->nr_runs[c]);
		bench_table_set(&t, (unsigned int)row, 10, "%lu", mg / b->nr_runs[c]);
		bench_table_set(&t, (unsigned int)row, 11, "%lu", po / b->nr_runs[c]);
		bench_table_set(&t, (unsigned int)row, 12, "%lu", th / b->nr_runs[c]);
	}
	bench_table_print(&t, stdout);
	printf("MB/s: medians, each writer's bytes over its writes + fsync; failures: the sum\n"
	       "over %u rep(s); other counts and delays: means; throttles: reclaim_throttle +\n"
	       "wait_iff_congested sleeps\n", b->o.reps);
}

/* --json: the options, the device and each case's runs. */
static int rc_json(struct rc_bench *b, const struct bench_env *env)
{
	struct bench_json j;
	unsigned int c;
	int err;

	err = bench_json_create(&j, "reclaim", b->o.json);
	if (err)
		return err;
	bench_json_str(&j, "kernel", env->kernel);
	bench_machine_json(&j);
	bench_json_obj(&j, "device");
	bench_target_json(&j, &b->t);
	bench_json_end(&j);
	bench_json_bool(&j, "interrupted", bench_stop);
	bench_json_u64(&j, "limit_bytes", b->o.limit);
	bench_json_u64(&j, "machine_bytes", b->o.machine);
	bench_json_u64(&j, "data_bytes", b->o.data);
	bench_json_u64(&j, "bs", b->o.bs);
	bench_json_u64(&j, "reps", b->o.reps);
	bench_json_arr(&j, "results");
	for (c = 0; c < RC_NR; c++) {
		const struct rc_run *r = b->runs[c];
		unsigned int n = b->nr_runs[c];

		bench_json_obj(&j, NULL);
		bench_json_str(&j, "case", rc_names[c]);
		bench_json_str(&j, "policy", rc_specs[c]);
		bench_json_bool(&j, "memory_domain", c != RC_GLOBAL);
		BENCH_JSON_RUNS(&j, "mb_per_sec_writer1", r, n, x, x->mbs[0]);
		BENCH_JSON_RUNS(&j, "mb_per_sec_writer2", r, n, x, x->mbs[1]);
		BENCH_JSON_RUNS(&j, "alloc_failures", r, n, x, x->failures);
		BENCH_JSON_RUNS(&j, "reclaim_waits", r, n, x, x->waits);
		BENCH_JSON_RUNS(&j, "reclaim_wait_avg_ms", r, n, x,
				x->wait_avg_ms);
		BENCH_JSON_RUNS(&j, "reclaim_wait_timeouts", r, n, x,
				x->wait_timeouts);
		BENCH_JSON_RUNS(&j, "pageout_works", r, n, x, x->works);
		BENCH_JSON_RUNS(&j, "pageout_merged", r, n, x, x->merged);
		BENCH_JSON_RUNS(&j, "pageouts", r, n, x, x->pageouts);
		BENCH_JSON_RUNS(&j, "throttles", r, n, x, x->throttles);
		bench_json_end(&j);
	}
	bench_json_end(&j);
	return bench_json_finish(&j, "reclaim", b->o.json);
}

static const struct bench_opt rc_opt_table[] = {
	BENCH_SIZE("limit", NULL, 16ull << 16, 1ull << 40, 4096,
		   "the memory domain (seed: 100M; default 6400k)"),
	BENCH_SIZE("machine", NULL, 16ull << 16, 1ull << 44, 4096,
		   "the machine it is in: sets the dirty limits (default 16 x limit)"),
	BENCH_SIZE("data", NULL, 1ull << 20, 1ull << 40, 4096,
		   "bytes each of the 2 writers writes (seed: 1G; default 64M)"),
	BENCH_SIZE("bs", NULL, 512, 1ull << 20, 512,
		   "bytes per write (seed: 1k)"),
	BENCH_OPT_REPS(NULL, "repetitions (default 1)"),
	BENCH_OPT_DEV(NULL),
	BENCH_OPT_FORCE(NULL),
	BENCH_OPT_JSON(NULL),
	BENCH_OPT_END,
};

BENCH_CMDLINE(reclaim, rc_opt_table,
	"Seed 003: 2 writers x --data in --bs writes into a --limit memory domain,\n"
	"under reclaim=3.2, reclaim=pageout, and without a domain (global).\n"
	BENCH_SCRATCH_ABOUT,
	NULL);

int bench_reclaim_main(int argc, char **argv)
{
	static struct rc_bench bench;
	struct rc_bench *b = &bench;
	struct bench_opt opts[sizeof(rc_opt_table) / sizeof(rc_opt_table[0])];
	struct bench_cmdline cl = bench_reclaim_cmdline;
	struct bench_env env;
	unsigned int i;
	int err;

	b->o.limit = 6400ull << 10;
	b->o.data = 64ull << 20;
	b->o.bs = 1024;
	b->o.reps = 1;
	memcpy(opts, rc_opt_table, sizeof(opts));
	opts[0].dest = &b->o.limit;
	opts[1].dest = &b->o.machine;
	opts[2].dest = &b->o.data;
	opts[3].dest = &b->o.bs;
	opts[4].dest = &b->o.reps;
	opts[5].dest = &b->o.dev;
	opts[6].dest = &b->o.force;
	opts[7].dest = &b->o.json;
	cl.opts = opts;
	err = bench_opts_main(&cl, argc, argv);
	if (err >= 0)
		return err;
	if (!b->o.machine)
		b->o.machine = 16 * b->o.limit;
	if (b->o.machine < b->o.limit) {
		bench_err("reclaim", "--machine must be at least --limit");
		return 2;
	}
	if (bench_env_init(&env, "reclaim", false))
		return 1;
	b->buf = bench_random_buffer((size_t)b->o.bs);
	if (!b->buf)
		return 1;
	if (bench_target_open(&b->t, "reclaim", b->o.dev, 2 * b->o.data,
			      b->o.force)) {
		free(b->buf);
		return 1;
	}
	b->t.range = 2 * b->o.data;
	b->t.force = b->o.force;
	bench_env_print(&env, NULL, false);
	bench_target_print(&b->t, NULL);
	printf("domain %" PRIu64 " KiB in a %" PRIu64 " KiB machine; 2 writers x %" PRIu64 " KiB in %" PRIu64 "-byte writes\n",
	       b->o.limit >> 10, b->o.machine >> 10, b->o.data >> 10, b->o.bs);
	err = bench_target_prefill(&b->t, b->t.range, 8u << 20);
	if (!err) {
		struct bench_sched s = {
			.nr_cases = RC_NR, .cases = b->cases, .reps = b->o.reps,
			.rotate = false, .run = rc_run_one, .priv = b,
			.cmd = "reclaim",
		};

		for (i = 0; i < RC_NR; i++)
			b->cases[i].name = rc_names[i];
		err = bench_sched_run(&s);
		if (bench_stop)
			printf("INTERRUPTED: partial results, of the runs completed before the signal\n");
		rc_print(b);
		if (b->o.json && rc_json(b, &env) && !err)
			err = -EIO;
	}
	bench_target_close(&b->t);
	free(b->buf);
	return bench_exit_code("reclaim", err);
}
