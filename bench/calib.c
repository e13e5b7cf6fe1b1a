// SPDX-License-Identifier: MIT
/*
 * bench/calib.c - `uflush-bench calib`: the sim device against reality
 * (issue 19, item 5).
 *
 * One case, N dd-style writers of 1 MiB writes for --secs under one
 * policy, runs --reps times on a scratch loop device (direct I/O) behind
 * the shaping wrapper (io/shape.c: --bw, --lat-us), and --reps times on a
 * sim SSD (io/sim.h) given the same bandwidth, latency and queue depth
 * (uflush's, 64), keep_data=0, both on the real clock.  Each run is traced
 * (cfg.trace_path) and read by bench/ktrace.c as kdiff reads uflush's
 * side: throughput over the writers' window, mean dirty+writeback over
 * the throttle's setpoint, and the share of the time above it.  The sim's
 * median of each must lie in the band of the real repeats (bench/calib.h:
 * their median +- the larger of their range and a floor); --check makes
 * that the exit status.
 *
 * The two devices are not the same model: the shaper releases a request
 * when the bandwidth of those before it has been spent and completes it
 * no earlier than its arrival + latency; the sim SSD completes it at the
 * end of its own turn on the channel, and no earlier than its start +
 * latency.  At a sustained queue both run at bw; they differ by one
 * request's transfer in the completion time of each.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "calib.h"
#include "ktrace.h"

#define CB_CHUNK	(1u << 20)
#define CB_DIRTY	(100ull << 20)
#define CB_BG		(50ull << 20)
#define CB_MAX_WRITERS	16
#define CB_MAX_REPS	16
#define CB_QD		64	/* uflush's default queue depth, both sides */

enum { CB_REAL, CB_SIM, CB_SIDES };
static const char *const cb_side[CB_SIDES] = { "loop+shape", "sim ssd" };

enum { CB_MBS, CB_DSP, CB_ABOVE, CB_METRICS };
static const struct {
	const char *name, *fmt;
	double rel_floor, abs_floor;
} cb_metric[CB_METRICS] = {
	/*
	 * Floors: twice the range of 5 real repeats measured on the default
	 * case (README, "Calibration": 0.5% for both ratios, 1 point of
	 * time), so that 3 repeats that agree by chance still leave room.
	 */
	[CB_MBS] = { "MiB/s", "%.1f", 0.01, 0 },
	[CB_DSP] = { "dirty/setpoint", "%.3f", 0.01, 0 },
	[CB_ABOVE] = { "% time above setpoint", "%.0f", 0, 3 },
};

static struct cb_opts {
	const char *policy;
	unsigned int writers, secs, reps, lat_us, pages;
	uint64_t bw, size;
	uint64_t sim_bw;		/* 0: bw */
	bool check;
	const char *traces;
} cb_o = {
	.policy = "linux-3.2", .writers = 2, .secs = 20, .reps = 3,
	.lat_us = 1000, .pages = 65536, .bw = 32u << 20, .size = 2ull << 30,
};

static const struct bench_opt cb_opts_tab[] = {
	BENCH_STR("policy", "SPEC", &cb_o.policy, "the flush policy; linux-3.2"),
	BENCH_UINT("writers", "N", &cb_o.writers, 1, CB_MAX_WRITERS, NULL,
		   "dd writers of 1 MiB writes; 2"),
	BENCH_UINT("secs", "SEC", &cb_o.secs, 1, 3600, NULL,
		   "seconds each run writes; 20"),
	BENCH_UINT("reps", "N", &cb_o.reps, 1, CB_MAX_REPS, NULL,
		   "runs of each device, interleaved; 3"),
	BENCH_SIZE("bw", &cb_o.bw, 1u << 20, 1ull << 34, 0,
		   "both devices' bandwidth, bytes per second; 32M"),
	BENCH_UINT("lat-us", "US", &cb_o.lat_us, 0, 1000000, NULL,
		   "both devices' per-request latency; 1000"),
	BENCH_UINT("pages", "N", &cb_o.pages, 4096, 1u << 22, NULL,
		   "the cache's pool in 4 KiB pages; 65536 (dirty limits 100M/50M)"),
	BENCH_SIZE("size", &cb_o.size, 256u << 20, 1ull << 40, 1u << 20,
		   "each device; 2G"),
	BENCH_SIZE("sim-bw", &cb_o.sim_bw, 1u << 20, 1ull << 34, 0,
		   "give the sim another bandwidth than --bw (a check that\n--check can fail)"),
	BENCH_FLAG("check", &cb_o.check,
		   "exit 3 when a sim median leaves the real repeats' band"),
	BENCH_STR("traces", "DIR", &cb_o.traces,
		  "keep the runs' traces there (default: removed)"),
	BENCH_OPT_END,
};

const struct bench_cmdline bench_calib_cmdline = {
	.cmd = "calib",
	.about = "The same dd case on a shaped scratch loop device and on a sim SSD\n"
		 "with the same bandwidth, latency and queue depth, on the real clock:\n"
		 "throughput and the dirty trajectory from each run's trace, the sim's\n"
		 "medians against the band of the real repeats.\n",
	.opts = cb_opts_tab,
	.epilog = "Exit: 0; 1 error; 3 --check failed; 77 no direct-I/O loop device.\n"
		  BENCH_ENV_TESTDIR,
};

/* ------------------------------------------------------------------ */
/* The comparison                                                      */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The non-NAN values sorted into out; how many. */
static unsigned int sorted(const double *v, unsigned int n, double *out)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		if (!isnan(v[i]))
			out[k++] = v[i];
	qsort(out, k, sizeof(*out), cmp_dbl);
	return k;
}

double calib_median(const double *v, unsigned int n)
{
	double s[CB_MAX_REPS * 2];
	unsigned int k;

	if (n > CB_MAX_REPS * 2)
		n = CB_MAX_REPS * 2;
	k = sorted(v, n, s);
	if (!k)
		return NAN;
	return k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
}

void calib_band(const double *real, unsigned int n, double rel_floor,
		double abs_floor, struct calib_band *b)
{
	double s[CB_MAX_REPS * 2], half;

	if (n > CB_MAX_REPS * 2)
		n = CB_MAX_REPS * 2;
	b->n = sorted(real, n, s);
	if (!b->n) {
		b->median = b->lo = b->hi = b->half = NAN;
		return;
	}
	b->median = calib_median(s, b->n);
	half = s[b->n - 1] - s[0];
	if (half < rel_floor * fabs(b->median))
		half = rel_floor * fabs(b->median);
	if (half < abs_floor)
		half = abs_floor;
	b->half = half;
	b->lo = b->median - half;
	b->hi = b->median + half;
}

bool calib_in_band(const struct calib_band *b, double sim)
{
	return b->n && !isnan(sim) && sim >= b->lo && sim <= b->hi;
}

/* ------------------------------------------------------------------ */
/* One run                                                             */

struct cb_writer {
	struct bench_thread bt;
	struct uf_file *file;
	uint64_t off0, len, bytes, deadline, t_end;
};

struct cb_run {
	int side;
	uint64_t bytes;
	double t0, t1;
	double m[CB_METRICS];
	char trace[320], why[400];
};

static struct {
	void *buf;
	char tdir[256];
	struct bench_env env;
	struct bench_reopen ro;
	struct cb_run runs[CB_SIDES][CB_MAX_REPS];
} cb;

/* dd: 1 MiB after 1 MiB over its region, round again, until the end. */
static void *cb_writer_fn(void *arg)
{
	struct cb_writer *w = arg;
	uint64_t off = w->off0;
	ssize_t n;

	while (!bench_stop && uf_now_ns() < w->deadline) {
		n = uf_pwrite(w->file, cb.buf, CB_CHUNK, off);
		if (n != CB_CHUNK) {
			w->bt.err = n < 0 ? (int)n : -EIO;
			break;
		}
		w->bytes += CB_CHUNK;
		off += CB_CHUNK;
		if (off + CB_CHUNK > w->off0 + w->len)
			off = w->off0;
	}
	w->t_end = uf_now_ns();
	return NULL;
}

static int cb_write(void *priv, struct uf_cache *cache, struct uf_dev *dev,
		    struct uf_file *file)
{
	struct cb_writer w[CB_MAX_WRITERS];
	struct cb_run *r = priv;
	uint64_t region = (cb_o.size / cb_o.writers) & ~(uint64_t)(CB_CHUNK - 1);
	uint64_t t0 = uf_now_ns(), t1 = t0;
	unsigned int i, started = 0;
	bool stop = false;
	int err;

	(void)cache;
	(void)dev;
	memset(w, 0, sizeof(w));
	for (i = 0; i < cb_o.writers; i++) {
		w[i].file = file;
		w[i].off0 = i * region;
		w[i].len = region;
		w[i].deadline = t0 + cb_o.secs * 1000000000ull;
	}
	err = bench_threads_start(w, sizeof(*w), cb_o.writers, cb_writer_fn,
				  &started);
	err = bench_threads_stop(&stop, w, sizeof(*w), started, err, "writer",
				 r->why, sizeof(r->why));
	for (i = 0; i < started; i++) {
		r->bytes += w[i].bytes;
		if (w[i].t_end > t1)
			t1 = w[i].t_end;
	}
	r->t0 = t0 / 1e9;
	r->t1 = t1 / 1e9;
	return err;
}

static void cb_cache_config(struct uf_cache_config *cfg, struct cb_run *r)
{
	uf_cache_config_init(cfg);
	cfg->nr_pages = cb_o.pages;
	cfg->policy = cb_o.policy;
	cfg->dirty_bytes = CB_DIRTY;
	cfg->dirty_background_bytes = CB_BG;
	cfg->trace_path = r->trace;
}

static int cb_run_real(struct cb_run *r)
{
	struct uf_cache_config cfg;
	struct bench_target t;
	int err;

	if (bench_target_open(&t, "calib", NULL, cb_o.size, false))
		return -EIO;
	if (!t.is_blk || t.dio != 1) {
		snprintf(r->why, sizeof(r->why),
			 "no direct-I/O loop device: %.300s", t.desc);
		bench_target_close(&t);
		return BENCH_SKIP;
	}
	t.shaped = true;
	t.shape.bw_bytes_per_sec = cb_o.bw;
	t.shape.latency_us = cb_o.lat_us;
	cb_cache_config(&cfg, r);
	err = bench_uflush_run(&cfg, &cb.ro, &t, cb_o.size, cb_write, r,
			       r->why, sizeof(r->why));
	bench_target_close(&t);
	return err;
}

static int cb_run_sim(struct cb_run *r, unsigned int rep)
{
	struct uf_dev_config dcfg = { .engine = "sim", .queue_depth = CB_QD };
	struct uf_cache_config cfg;
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_sim *sim;
	struct uf_dev *dev;
	char name[64], spec[200];
	int err;

	snprintf(name, sizeof(name), "calib-%d-%u", (int)getpid(), rep);
	snprintf(spec, sizeof(spec),
		 "ssd,size=%" PRIu64 ",bw=%" PRIu64 ",lat_us=%u,cmd_us=0,qd=%u,keep_data=0,seed=%u",
		 cb_o.size, cb_o.sim_bw ? cb_o.sim_bw : cb_o.bw, cb_o.lat_us,
		 CB_QD, rep + 1);
	err = uf_sim_create(name, spec, &sim);
	if (err) {
		snprintf(r->why, sizeof(r->why), "uf_sim_create(%s): %s", spec,
			 strerror(-err));
		return err;
	}
	cb_cache_config(&cfg, r);
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		snprintf(r->why, sizeof(r->why), "uf_cache_open: %s",
			 strerror(-err));
		uf_sim_destroy(sim);
		return err;
	}
	err = uf_dev_open(cache, name, &dcfg, &dev);
	if (!err)
		err = uf_file_open(dev, 1, 0, cb_o.size, NULL, NULL, &file);
	if (err)
		snprintf(r->why, sizeof(r->why), "open: %s", strerror(-err));
	else
		err = cb_write(r, cache, dev, file);
	err = bench_cache_close(cache, err, r->why, sizeof(r->why));
	uf_sim_destroy(sim);
	return err;
}

static int cb_parse(struct cb_run *r)
{
	struct ktrace_filter f = { .t0 = r->t0, .t1 = r->t1,
				   .nr_writers = cb_o.writers };
	struct ktrace_stats st;
	int err;

	ktrace_stats_init(&st, &f);
	err = ktrace_stats_file(&st, r->trace);
	ktrace_stats_finish(&st);
	if (err) {
		snprintf(r->why, sizeof(r->why), "reading %.320s: %s", r->trace,
			 strerror(-err));
	} else {
		r->m[CB_MBS] = r->t1 > r->t0 ?
			       r->bytes / (r->t1 - r->t0) / (1 << 20) : NAN;
		r->m[CB_DSP] = st.setpoint_mean > 0 ?
			       st.dirty_mean / st.setpoint_mean : NAN;
		r->m[CB_ABOVE] = st.above_setpoint_pct;
	}
	ktrace_stats_free(&st);
	if (!cb_o.traces)
		unlink(r->trace);
	return err;
}

static int cb_run_one(int side, unsigned int rep)
{
	struct cb_run *r = &cb.runs[side][rep];
	int err;

	r->side = side;
	snprintf(r->trace, sizeof(r->trace), "%s/%s-%u.trace", cb.tdir,
		 side == CB_REAL ? "real" : "sim", rep);
	if (!bench_quiet)
		fprintf(stderr, "calib: %s run %u of %u (%u s)\n", cb_side[side],
			rep + 1, cb_o.reps, cb_o.secs);
	err = side == CB_REAL ? cb_run_real(r) : cb_run_sim(r, rep);
	if (err) {
		if (err != BENCH_SKIP)
			fprintf(stderr, "calib: %s run %u: %s\n", cb_side[side],
				rep + 1, r->why);
		return err;
	}
	return cb_parse(r);
}

/* ------------------------------------------------------------------ */
/* The table                                                           */

static unsigned int cb_report(void)
{
	double v[CB_SIDES][CB_MAX_REPS];
	struct calib_band b;
	unsigned int rep, fails = 0;
	int s, m;
	double sim;
	bool in;

	printf("calib: %u writers x 1 MiB dd, %u s, policy %s, %u reps per device\n",
	       cb_o.writers, cb_o.secs, cb_o.policy, cb_o.reps);
	printf("devices: bw %" PRIu64 " MiB/s, latency %u us, queue depth %u; cache %u pages, dirty 100M, background 50M\n",
	       cb_o.bw >> 20, cb_o.lat_us, CB_QD, cb_o.pages);
	if (cb_o.sim_bw && cb_o.sim_bw != cb_o.bw)
		printf("the sim's bandwidth is %" PRIu64 " MiB/s (--sim-bw): it should not agree\n",
		       cb_o.sim_bw >> 20);
	printf("\n");
	printf("%-22s  %-34s  %-34s  %-8s  %-15s  %s\n", "metric",
	       "loop+shape: runs", "sim ssd: runs", "sim med",
	       "real band", "");
	for (m = 0; m < CB_METRICS; m++) {
		char runs[CB_SIDES][64], band[48], one[24], med[24];

		for (s = 0; s < CB_SIDES; s++) {
			runs[s][0] = '\0';
			for (rep = 0; rep < cb_o.reps; rep++) {
				v[s][rep] = cb.runs[s][rep].m[m];
				snprintf(one, sizeof(one), cb_metric[m].fmt,
					 v[s][rep]);
				if (strlen(runs[s]) + strlen(one) + 2 <
				    sizeof(runs[s])) {
					if (rep)
						strcat(runs[s], " ");
					strcat(runs[s], one);
				}
			}
		}
		calib_band(v[CB_REAL], cb_o.reps, cb_metric[m].rel_floor,
			   cb_metric[m].abs_floor, &b);
		sim = calib_median(v[CB_SIM], cb_o.reps);
		in = calib_in_band(&b, sim);
		fails += !in;
		snprintf(med, sizeof(med), cb_metric[m].fmt, sim);
		snprintf(one, sizeof(one), cb_metric[m].fmt, b.lo);
		snprintf(band, sizeof(band), "%s..", one);
		snprintf(one, sizeof(one), cb_metric[m].fmt, b.hi);
		strncat(band, one, sizeof(band) - strlen(band) - 1);
		printf("%-22s  %-34s  %-34s  %-8s  %-15s  %s\n",
		       cb_metric[m].name, runs[CB_REAL], runs[CB_SIM], med,
		       band, in ? "ok" : "OUT");
	}
	printf("\nband: the real runs' median +- max(their range, %.0f%% of it) (%% time: +- max(range, %.0f points))\n",
	       cb_metric[CB_MBS].rel_floor * 100, cb_metric[CB_ABOVE].abs_floor);
	return fails;
}

static int cb_tdir(void)
{
	const char *base = cb_o.traces;

	if (base) {
		snprintf(cb.tdir, sizeof(cb.tdir), "%s", base);
		return mkdir(cb.tdir, 0755) && errno != EEXIST ? -errno : 0;
	}
	base = getenv("UFLUSH_TESTDIR");
	snprintf(cb.tdir, sizeof(cb.tdir), "%s/uflush-calib-XXXXXX",
		 base && *base ? base : "/var/tmp");
	return mkdtemp(cb.tdir) ? 0 : -errno;
}

int bench_calib_main(int argc, char **argv)
{
	unsigned int rep, fails;
	int err = 0, s;

	err = bench_opts_main(&bench_calib_cmdline, argc, argv);
	if (err >= 0)
		return err;
	if (bench_check_policy("calib", cb_o.policy, NULL, 0))
		return 2;
	if (bench_env_init(&cb.env, "calib", false))
		return 1;
	cb.buf = bench_random_buffer(CB_CHUNK);
	if (!cb.buf || cb_tdir()) {
		fprintf(stderr, "calib: no buffer or trace directory\n");
		return 1;
	}
	/* interleaved: real, sim, real, sim: the host's noise falls on both */
	err = 0;
	for (rep = 0; rep < cb_o.reps && !err && !bench_stop; rep++)
		for (s = 0; s < CB_SIDES && !err && !bench_stop; s++)
			err = cb_run_one(s, rep);
	if (!cb_o.traces)
		rmdir(cb.tdir);
	free(cb.buf);
	if (err == BENCH_SKIP) {
		printf("calib: skipped: %s\n", cb.runs[CB_REAL][rep - 1].why);
		return 77;
	}
	if (err || bench_stop)
		return bench_exit_code("calib", err);
	fails = cb_report();
	return cb_o.check && fails ? 3 : 0;
}
