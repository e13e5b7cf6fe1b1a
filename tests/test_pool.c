// SPDX-License-Identifier: MIT
/*
 * Description: `uflush-bench pool` (bench/pool.c, bench/pool.h): the
 * Zipfian generator against its own formula (the top ranks' frequencies
 * for theta = 0.99 are 1/zeta(n) and 2^-theta/zeta(n)), uniform keys
 * flat, the latency histogram's percentiles on known inputs, the mixes'
 * read/update/fsync accounting, and a 2 s end-to-end run whose JSON has
 * every figure of every system and both ratios.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/pool.h"
#include "io/testdev.h"

#define SAMPLES	1000000u

/* Frequency of each rank 0 and 1 over SAMPLES draws, unscrambled. */
static void top_two(uint64_t n, double *f0, double *f1)
{
	struct pool_zipf z;
	uint64_t rng = 12345, r, c0 = 0, c1 = 0;
	unsigned int i;

	cr_assert_eq(pool_zipf_init(&z, n, POOL_THETA, false), 0);
	for (i = 0; i < SAMPLES; i++) {
		r = pool_zipf_next(&z, &rng);
		cr_assert_lt(r, n);
		c0 += r == 0;
		c1 += r == 1;
	}
	*f0 = (double)c0 / SAMPLES;
	*f1 = (double)c1 / SAMPLES;
}

Test(pool, zipf_top_keys_match_the_formula)
{
	static const uint64_t ns[] = { 1000, 100000 };
	double f0, f1, zn, want0, want1;
	unsigned int i;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		zn = pool_zeta(ns[i], POOL_THETA);
		want0 = 1 / zn;
		want1 = pow(2, -POOL_THETA) / zn;
		top_two(ns[i], &f0, &f1);
		/* 10^6 draws: a standard error under 0.5% of either */
		cr_expect(fabs(f0 / want0 - 1) < 0.03,
			  "n %lu: rank 0 drawn %.5f, want 1/zeta(n) = %.5f",
			  (unsigned long)ns[i], f0, want0);
		cr_expect(fabs(f1 / want1 - 1) < 0.03,
			  "n %lu: rank 1 drawn %.5f, want 2^-theta/zeta(n) = %.5f",
			  (unsigned long)ns[i], f1, want1);
	}
	/* zeta(2, theta) by hand */
	cr_expect_float_eq(pool_zeta(2, 0.99), 1 + pow(2, -0.99), 1e-12);
}

/* Scrambled: the hottest key is rank 0's hash, as frequent as rank 0. */
Test(pool, zipf_scrambled_spreads_the_hot_key)
{
	struct pool_zipf z;
	uint64_t n = 10000, rng = 99, hot, k, c = 0, head = 0;
	unsigned int i;
	double want;

	cr_assert_eq(pool_zipf_init(&z, n, POOL_THETA, true), 0);
	hot = (pool_fnv64(0) & INT64_MAX) % n;
	want = 1 / pool_zeta(n, POOL_THETA);
	for (i = 0; i < SAMPLES; i++) {
		k = pool_zipf_next(&z, &rng);
		cr_assert_lt(k, n);
		c += k == hot;
		head += k < n / 100;
	}
	cr_expect(fabs((double)c / SAMPLES / want - 1) < 0.05,
		  "hot key %lu drawn %.5f, want %.5f", (unsigned long)hot,
		  (double)c / SAMPLES, want);
	/* unscrambled, the first 1% of keys would get over half the draws */
	cr_expect_lt((double)head / SAMPLES, 0.2, "head of the file %.3f",
		     (double)head / SAMPLES);
}

Test(pool, zipf_rejects_bad_parameters)
{
	struct pool_zipf z;

	cr_expect_eq(pool_zipf_init(&z, 1, POOL_THETA, false), -EINVAL);
	cr_expect_eq(pool_zipf_init(&z, 100, 1.0, false), -EINVAL);
	cr_expect_eq(pool_zipf_init(&z, 100, 0, false), -EINVAL);
	cr_expect_eq(pool_zipf_init(&z, 100, NAN, false), -EINVAL);
}

Test(pool, uniform_is_flat)
{
	enum { N = 100 };
	struct pool_zipf z;
	uint64_t count[N] = { 0 }, rng = 7, k;
	unsigned int i;
	double want = (double)SAMPLES / N;

	cr_assert_eq(pool_zipf_init(&z, N, POOL_THETA, true), 0);
	for (i = 0; i < SAMPLES; i++) {
		k = pool_key(POOL_UNIFORM, &z, &rng);
		cr_assert_lt(k, N);
		count[k]++;
	}
	/* sigma is about 1% of want: 5% is 5 sigma */
	for (i = 0; i < N; i++)
		cr_expect(fabs(count[i] / want - 1) < 0.05,
			  "key %u drawn %lu times, want about %.0f", i,
			  (unsigned long)count[i], want);
}

static void expect_near(double got, double want, double rel, const char *what)
{
	cr_expect(fabs(got - want) <= rel * want,
		  "%s: %.1f, want %.1f within %.1f%%", what, got, want,
		  rel * 100);
}

Test(pool, histogram_percentiles_of_known_inputs)
{
	struct pool_hist *h = calloc(1, sizeof(*h)), *g = calloc(1, sizeof(*g));
	uint64_t v;

	cr_assert(h && g);
	cr_expect(isnan(pool_hist_quantile(h, 0.5)), "an empty histogram");
	/* 1..100000 once each: a bucket is at most 1/32 of a value wide */
	for (v = 1; v <= 100000; v++)
		pool_hist_add(h, v);
	expect_near(pool_hist_quantile(h, 0.5), 50000, 1.0 / 64, "p50");
	expect_near(pool_hist_quantile(h, 0.99), 99000, 1.0 / 64, "p99");
	expect_near(pool_hist_quantile(h, 0.999), 99900, 1.0 / 64, "p99.9");
	cr_expect_float_eq(pool_hist_quantile(h, 1), 100000, 1e-9,
			   "the max, never above it");
	/* exact below 64: 0..63 once each, nearest rank */
	for (v = 0; v < 64; v++)
		pool_hist_add(g, v);
	cr_expect_float_eq(pool_hist_quantile(g, 0.5), 31, 1e-9);
	cr_expect_float_eq(pool_hist_quantile(g, 1.0 / 64), 0, 1e-9);
	/* a tail: 10 ops of 5 ms, and 990 of 10 us merged in from another */
	memset(h, 0, sizeof(*h));
	memset(g, 0, sizeof(*g));
	for (v = 0; v < 10; v++)
		pool_hist_add(h, 5000000);
	for (v = 0; v < 990; v++)
		pool_hist_add(g, 10000);
	pool_hist_merge(h, g);
	cr_expect_eq(h->n, 1000);
	expect_near(pool_hist_quantile(h, 0.99), 10000, 1.0 / 64, "p99 body");
	expect_near(pool_hist_quantile(h, 0.999), 5000000, 1.0 / 64,
		    "p99.9 tail");
	free(h);
	free(g);
}

/* Every value lands in a bucket whose middle is within 1/64 of it. */
Test(pool, histogram_buckets_are_log_linear)
{
	uint64_t rng = 3, v;
	unsigned int i, b, last = 0;
	double m;

	for (i = 0; i < 100000; i++) {
		v = bench_xorshift64(&rng) >> (bench_xorshift64(&rng) % 64);
		b = pool_hist_bucket(v);
		cr_assert_lt(b, POOL_HIST_BUCKETS);
		m = pool_hist_value(b);
		cr_assert(fabs(m - (double)v) <= (double)v / 64 + 0.5,
			  "%lu in bucket %u (middle %.1f)", (unsigned long)v,
			  b, m);
	}
	for (v = 1; v < (1u << 20); v += v / 8 + 1) {
		b = pool_hist_bucket(v);
		cr_assert_geq(b, last, "buckets in the order of values");
		last = b;
	}
	cr_expect_eq(pool_hist_bucket(UINT64_MAX), POOL_HIST_BUCKETS - 1);
}

/* ops of mix m with fsyncs every n updates: the tally. */
static struct pool_tally run_mix(enum pool_mix_id m, unsigned int n,
				 unsigned int ops, uint64_t *fsync_calls)
{
	struct pool_tally t = { 0 };
	uint64_t rng = 42;
	unsigned int i;

	*fsync_calls = 0;
	for (i = 0; i < ops; i++)
		*fsync_calls += pool_account(&pool_mixes[m], n, &t,
					     pool_next_op(&pool_mixes[m],
							  &rng));
	return t;
}

Test(pool, mix_accounting)
{
	static const double reads[POOL_NR_MIXES] = { 0.5, 0.95, 1, 0.1 };
	struct pool_tally t;
	uint64_t calls;
	unsigned int m, ops = 200000;
	double f;

	for (m = 0; m < POOL_NR_MIXES; m++) {
		t = run_mix(m, 1000, ops, &calls);
		cr_expect_eq(t.reads + t.updates, ops, "mix %u", m);
		f = (double)t.reads / ops;
		cr_expect(fabs(f - reads[m]) < 0.01,
			  "mix %u: %.4f reads, want %.2f", m, f, reads[m]);
		cr_expect_eq(t.fsyncs, calls, "mix %u", m);
		if (m == POOL_MIX_W)
			cr_expect_eq(t.fsyncs, t.updates / 1000,
				     "W: an fsync per 1000 updates: %lu for %lu",
				     (unsigned long)t.fsyncs,
				     (unsigned long)t.updates);
		else
			cr_expect_eq(t.fsyncs, 0, "mix %u fsyncs", m);
	}
	cr_expect_eq(run_mix(POOL_MIX_C, 1000, ops, &calls).updates, 0);
	t = run_mix(POOL_MIX_W, 1, 1000, &calls);
	cr_expect_eq(t.fsyncs, t.updates, "N = 1: an fsync per update");
}

/* ------------------------------------------------------------------ */
/* End to end                                                          */

static char json_path[PATH_MAX];

static void e2e_fini(void)
{
	if (json_path[0])
		unlink(json_path);
}

/* The number after "key": at or after from; NAN if null or missing. */
static double json_num(const char *from, const char *key, const char **at)
{
	char pat[96];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(from, pat);
	*at = p;
	if (!p)
		return NAN;
	p += strlen(pat);
	return strncmp(p, "null", 4) ? strtod(p, NULL) : NAN;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	cr_assert_not_null(f, "no JSON at %s", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, len + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, len, f), (size_t)len);
	fclose(f);
	return buf;
}

static int run_bench(const char *exe)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (!pid) {
		/* the text report; the JSON is what is checked */
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(exe, exe, "pool", "--mix", "A", "--dist", "zipf",
		      "--ws", "2", "--threads", "1", "--secs", "2", "--reps",
		      "1", "--cache", "16M", "--quiet", "--json", json_path,
		      (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

Test(pool, end_to_end_json_has_every_field, .fini = e2e_fini,
     .timeout = 120)
{
	static const char *const fields[] = {
		"ops_s_median", "p50_us_median", "p99_us_median",
		"p999_us_median", "dev_reads_op_median",
		"dev_writes_op_median", "cpu_us_op_median",
	};
	static const char *const systems[] = { "uflush", "kernel", "direct" };
	static const char *const ratios[] = {
		"ratio_uflush_kernel_ops_s", "ratio_uflush_direct_ops_s",
	};
	char exe[PATH_MAX], bench[PATH_MAX + 16], pat[64], *text;
	const char *sys, *end, *at;
	struct uf_testdev td;
	unsigned int s, i;
	ssize_t n;
	double v;

	if (geteuid())
		cr_skip_test("needs root for a loop device, a cgroup and drop_caches");
	if (uf_testdev_create(1 << 20, UF_TESTDEV_NO_FALLBACK, &td))
		cr_skip_test("no loop device here: %s", td.why_not_loop);
	uf_testdev_destroy(&td);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = '\0';
	snprintf(bench, sizeof(bench), "%s/uflush-bench", dirname(exe));
	if (access(bench, X_OK))
		cr_assert_fail("uflush-bench not built: %s", bench);
	snprintf(json_path, sizeof(json_path), "/tmp/uflush-test-pool-%d.json",
		 (int)getpid());
	cr_assert_eq(run_bench(bench), 0, "uflush-bench pool failed");
	text = slurp(json_path);
	cr_expect(strstr(text, "\"benchmark\": \"pool\""), "%s", text);
	cr_expect(strstr(text, "\"cpu_model\": "));
	for (s = 0; s < 3; s++) {
		snprintf(pat, sizeof(pat), "\"case\": \"%s\"", systems[s]);
		sys = strstr(text, pat);
		cr_assert_not_null(sys, "no system %s", systems[s]);
		end = strstr(sys + 1, "\"case\": ");
		cr_expect(!strncmp(strstr(sys, "\"status\": "),
				   "\"status\": \"ok\"", 14),
			  "%s did not run", systems[s]);
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			v = json_num(sys, fields[i], &at);
			cr_expect(at && (!end || at < end), "%s: no %s",
				  systems[s], fields[i]);
			cr_expect(!isnan(v) && v >= 0, "%s: %s = %f",
				  systems[s], fields[i], v);
		}
		v = json_num(sys, "ops_s_median", &at);
		cr_expect_gt(v, 0, "%s: no op done", systems[s]);
	}
	for (i = 0; i < 2; i++) {
		v = json_num(text, ratios[i], &at);
		cr_expect(at, "no %s", ratios[i]);
		cr_expect(!isnan(v) && v > 0, "%s = %f", ratios[i], v);
	}
	free(text);
}
