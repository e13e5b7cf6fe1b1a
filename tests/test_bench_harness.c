// SPDX-License-Identifier: MIT
/*
 * Description: the pure parts of the uflush-bench harness (bench/harness.c)
 * do their arithmetic and their text right.
 *
 * Medians of odd and even counts, spreads, quantiles and ratios; the
 * interleaving order of the schedule and how it skips a case; option
 * parsing into the table's destinations, with one clear line for each kind
 * of mistake; size formatting; JSON escaping and nesting; the aligned
 * table; the kept library messages.  And, as root, the scratch device:
 * a loop device with direct I/O, counted, filled, opened shaped, and
 * detached again.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/harness.h"

/* ------------------------------------------------------------------ */
/* Statistics                                                          */

Test(bench_harness, median_odd_count)
{
	const double v[] = { 9, 1, 5, 3, 7 };
	struct bench_stats st;

	bench_stats(v, 5, &st);
	cr_assert_eq(st.n, 5);
	cr_assert_float_eq(st.median, 5, 1e-12);
	cr_assert_float_eq(st.min, 1, 1e-12);
	cr_assert_float_eq(st.max, 9, 1e-12);
}

Test(bench_harness, median_even_count_is_mean_of_middle_two)
{
	const double v[] = { 10, 2, 4, 100 };
	struct bench_stats st;

	bench_stats(v, 4, &st);
	cr_assert_float_eq(st.median, 7, 1e-12, "median %g", st.median);
	cr_assert_float_eq(st.min, 2, 1e-12);
	cr_assert_float_eq(st.max, 100, 1e-12);
	/* the input is left as it was */
	cr_assert_float_eq(v[0], 10, 0);
}

Test(bench_harness, stats_of_one_and_of_none)
{
	const double one = 3.5;
	struct bench_stats st;

	bench_stats(&one, 1, &st);
	cr_assert_float_eq(st.median, 3.5, 1e-12);
	cr_assert_float_eq(st.min, 3.5, 1e-12);
	cr_assert_float_eq(st.max, 3.5, 1e-12);
	bench_stats(&one, 0, &st);
	cr_assert_eq(st.n, 0);
	cr_assert_float_eq(st.median, 0, 0);
}

Test(bench_harness, quantile_by_lower_rank)
{
	double v[10];
	unsigned int i;

	for (i = 0; i < 10; i++)
		v[i] = 10 - i;		/* 10 .. 1, unsorted on purpose */
	cr_assert_float_eq(bench_quantile(v, 10, 0.9), 9, 1e-12);
	cr_assert_float_eq(bench_quantile(v, 10, 0), 1, 1e-12);
	cr_assert_float_eq(bench_quantile(v, 10, 1), 10, 1e-12);
	cr_assert_float_eq(bench_quantile(v, 0, 0.5), 0, 0);
}

Test(bench_harness, ratio_of_medians_and_missing_baselines)
{
	struct bench_samples a = { 0 }, b = { 0 }, none = { 0 };

	bench_samples_add(&a, 300);
	bench_samples_add(&a, 100);
	bench_samples_add(&a, 200);	/* median 200 */
	bench_samples_add(&b, 50);
	bench_samples_add(&b, 150);	/* median 100 */
	cr_assert_float_eq(bench_ratio(&a, &b), 2, 1e-12);
	cr_assert(isnan(bench_ratio(&a, &none)));
	cr_assert(isnan(bench_ratio(&none, &b)));
	b.v[0] = b.v[1] = 0;
	cr_assert(isnan(bench_ratio(&a, &b)), "a zero baseline has no ratio");
}

Test(bench_harness, samples_stop_at_max_reps)
{
	struct bench_samples s = { 0 };
	unsigned int i;

	for (i = 0; i < BENCH_MAX_REPS + 5; i++)
		bench_samples_add(&s, i);
	cr_assert_eq(s.n, BENCH_MAX_REPS);
}

struct run_rec {
	double mbs;
	int other;
};

Test(bench_harness, gather_a_field_of_the_runs)
{
	const struct run_rec runs[] = { { 1.5, 7 }, { 2.5, 8 }, { 4.5, 9 } };
	struct bench_samples s;

	bench_samples_gather(&s, runs, 3, sizeof(runs[0]),
			     offsetof(struct run_rec, mbs));
	cr_assert_eq(s.n, 3);
	cr_assert_float_eq(s.v[2], 4.5, 0);
	cr_assert_float_eq(bench_samples_median(&s), 2.5, 1e-12);
}

/* ------------------------------------------------------------------ */
/* Schedule                                                            */

struct sched_log {
	char order[64];
	unsigned int n;
	int fail_case;		/* this case fails ... */
	unsigned int fail_rep;	/* ... from this rep on */
	int fail_ret;
};

static int log_run(void *priv, unsigned int c, unsigned int rep)
{
	struct sched_log *l = priv;

	l->order[l->n++] = 'A' + c;
	if ((int)c == l->fail_case && rep >= l->fail_rep)
		return l->fail_ret;
	return 0;
}

Test(bench_harness, sched_rotates_reps_outermost)
{
	struct bench_case cases[3] = { { 0 } };
	struct sched_log l = { .fail_case = -1 };
	struct bench_sched s = {
		.nr_cases = 3, .cases = cases, .reps = 3, .rotate = true,
		.run = log_run, .priv = &l,
	};

	cr_assert_eq(bench_sched_run(&s), 0);
	cr_assert_str_eq(l.order, "ABCBCACAB");
	cr_assert_eq(cases[1].runs, 3);
	s.rotate = false;
	l.n = 0;
	memset(cases, 0, sizeof(cases));
	bench_sched_run(&s);
	cr_assert_str_eq(l.order, "ABCABCABC");
}

Test(bench_harness, sched_skips_a_case_that_cannot_run)
{
	struct bench_case cases[2] = { { 0 } };
	struct sched_log l = { .fail_case = 0, .fail_ret = BENCH_SKIP };
	struct bench_sched s = {
		.nr_cases = 2, .cases = cases, .reps = 3, .run = log_run,
		.priv = &l,
	};

	cr_assert_eq(bench_sched_run(&s), 0);
	cr_assert_str_eq(l.order, "ABBB", "A must not run again: %s",
			 l.order);
	cr_assert(cases[0].skipped);
	cr_assert_eq(cases[0].runs, 0);
	cr_assert_eq(cases[1].runs, 3);
}

Test(bench_harness, sched_stops_on_an_error)
{
	struct bench_case cases[2] = { { 0 } };
	struct sched_log l = { .fail_case = 1, .fail_rep = 1,
			       .fail_ret = -EIO };
	struct bench_sched s = {
		.nr_cases = 2, .cases = cases, .reps = 3, .run = log_run,
		.priv = &l,
	};

	cr_assert_eq(bench_sched_run(&s), -EIO);
	cr_assert_str_eq(l.order, "ABAB");
	cr_assert_eq(cases[1].runs, 1);
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

static const char *const colours[] = { "red", "green", "blue" };

struct test_opts {
	unsigned int reps;
	uint64_t size, bs;
	bool force, size_given;
	const char *json;
	bool colour[3];
	uint64_t dev_size;
	unsigned int secs;
	struct bench_strv devs;
	unsigned int pages;
};

static struct test_opts to;

static const struct bench_opt test_opt_table[] = {
	BENCH_OPT_REPS(&to.reps, "repetitions (default 3)"),
	{ .name = "size", .arg = "SIZE", .type = BENCH_OPT_SIZE,
	  .dest = &to.size, .min = 16u << 20, .max = UINT64_MAX,
	  .given = &to.size_given, .help = "bytes per run" },
	BENCH_SIZE("bs", &to.bs, 4096, 64u << 20, 4096, "write size"),
	BENCH_LIST("colours", to.colour, colours, "red, green, blue",
		   "which ones"),
	BENCH_OPT_FORCE(&to.force),
	BENCH_OPT_JSON(&to.json),
	BENCH_SIZE("dev-size", &to.dev_size, 64ull << 20, 64ull << 30,
		   1ull << 20, "each device's size"),
	BENCH_UINT("secs", "SEC", &to.secs, 1, 3600, NULL, "seconds"),
	BENCH_OLD_NAME("runtime", "secs"),
	{ .name = "devs", .arg = "PATH", .type = BENCH_OPT_STRV,
	  .dest = &to.devs, .help = "devices" },
	BENCH_OPT_CACHE(&to.pages, 16, 1u << 28, "the cache"),
	BENCH_OPT_END,
};

static const struct bench_cmdline test_cl = {
	.cmd = "test",
	.about = "Testing the option parser.\n",
	.opts = test_opt_table,
	.epilog = "The end.\n",
};

/* Parse the words; what went to err is in msg. */
static int parse(char *msg, size_t len, const char *a1, const char *a2,
		 const char *a3)
{
	char *argv[] = { "test", (char *)a1, (char *)a2, (char *)a3, NULL };
	int argc = 1 + !!a1 + (a1 && a2) + (a1 && a2 && a3);
	FILE *out = fmemopen(NULL, 4096, "w+");
	FILE *err = fmemopen(msg, len, "w");
	int ret;

	cr_assert(out && err);
	memset(msg, 0, len);
	memset(&to, 0, sizeof(to));
	to.reps = 3;
	ret = bench_opts_parse(&test_cl, argc, argv, out, err);
	fclose(out);
	fclose(err);
	return ret;
}

Test(bench_harness, options_fill_their_destinations)
{
	char msg[256];

	cr_assert_eq(parse(msg, sizeof(msg), "--reps", "5", "--size=1G"), 0,
		     "%s", msg);
	cr_assert_eq(to.reps, 5);
	cr_assert_eq(to.size, 1ull << 30);
	cr_assert(to.size_given);
	cr_assert_eq(parse(msg, sizeof(msg), "--force", "--colours=blue,red",
			   "--json=/x.json"), 0, "%s", msg);
	cr_assert(to.force);
	cr_assert(to.colour[0] && !to.colour[1] && to.colour[2]);
	cr_assert_str_eq(to.json, "/x.json");
	cr_assert_eq(to.reps, 3, "a default stays");
	cr_assert(!to.size_given);
	cr_assert_str_empty(msg);
}

Test(bench_harness, option_out_of_range_says_what_it_wants)
{
	char msg[256];

	cr_assert_eq(parse(msg, sizeof(msg), "--reps", "0", NULL), -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: bad --reps '0' (want 1..32)\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--reps", "3x", NULL), -EINVAL);
	cr_assert(strstr(msg, "bad --reps '3x'"), "%s", msg);
	cr_assert_eq(parse(msg, sizeof(msg), "--size", "1M", NULL), -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: bad --size '1M' (want a size >= 16M)\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--bs", "6k", NULL), -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: bad --bs '6k' (want a multiple of 4k, at most 64M)\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--bs", "128M", NULL), -EINVAL);
	cr_assert(strstr(msg, "at most 64M"), "%s", msg);
}

Test(bench_harness, option_list_names_the_bad_item)
{
	char msg[256];

	cr_assert_eq(parse(msg, sizeof(msg), "--colours", "red,pink", NULL),
		     -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: bad --colours item 'pink' (want red, green, blue)\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--colours", "", NULL), -EINVAL);
	cr_assert(strstr(msg, "(empty list)"), "%s", msg);
}

Test(bench_harness, option_mistakes_each_get_one_clear_line)
{
	char msg[256];

	cr_assert_eq(parse(msg, sizeof(msg), "--bogus", NULL, NULL), -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: unknown option '--bogus' ('uflush-bench help test' lists them)\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--reps", NULL, NULL), -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: --reps needs a value (N)\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--force=yes", NULL, NULL),
		     -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: --force takes no value ('--force=yes')\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--force", "stray", NULL),
		     -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: unexpected argument 'stray'\n");
}

Test(bench_harness, help_prints_the_table)
{
	char *argv[] = { "test", "--help", NULL };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cr_assert_eq(bench_opts_parse(&test_cl, 2, argv, out, stderr), 1);
	fclose(out);
	cr_assert(!strncmp(text, "usage: uflush-bench test [OPTIONS]\n\nTesting the option parser.\n\n", 60), "%s", text);
	cr_assert(strstr(text, "\n  --reps N           repetitions (default 3)\n"), "%s", text);
	cr_assert(strstr(text, "\n  --force            open PATH even if mounted or in use\n"), "%s", text);
	cr_assert(strstr(text, "\n\nThe end.\n"), "%s", text);
	free(text);
}

Test(bench_harness, sizes_format_as_options_take_them)
{
	char buf[24];

	bench_fmt_size(buf, sizeof(buf), 4096);
	cr_assert_str_eq(buf, "4k");
	bench_fmt_size(buf, sizeof(buf), 64ull << 20);
	cr_assert_str_eq(buf, "64M");
	bench_fmt_size(buf, sizeof(buf), 1ull << 32);
	cr_assert_str_eq(buf, "4G");
	bench_fmt_size(buf, sizeof(buf), 1536);
	cr_assert_str_eq(buf, "1536");
	bench_fmt_size(buf, sizeof(buf), 3ull << 40);
	cr_assert_str_eq(buf, "3T");
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

/* Run fn on a writer over a memory buffer; the text it wrote. */
static char *json_text(void (*fn)(struct bench_json *j))
{
	static char buf[4096];
	struct bench_json j;
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	cr_assert(f);
	memset(buf, 0, sizeof(buf));
	bench_json_init(&j, f);
	fn(&j);
	fclose(f);
	return buf;
}

static void write_escapes(struct bench_json *j)
{
	bench_json_str(j, NULL, "a\"b\\c\nd\te\x01" "f/é");
}

Test(bench_harness, json_escapes_strings)
{
	cr_assert_str_eq(json_text(write_escapes),
			 "\"a\\\"b\\\\c\\nd\\te\\u0001f/é\"");
}

static void write_nested(struct bench_json *j)
{
	const double v[] = { 1, 2.5 };

	bench_json_obj(j, NULL);
	bench_json_str(j, "name", "x");
	bench_json_obj(j, "inner");
	bench_json_bool(j, "ok", true);
	bench_json_null(j, "none");
	bench_json_end(j);
	bench_json_arr(j, "list");
	bench_json_obj(j, NULL);
	bench_json_u64(j, "n", 18446744073709551615ull);
	bench_json_end(j);
	bench_json_obj(j, NULL);
	bench_json_end(j);
	bench_json_end(j);
	bench_json_nums(j, "v", v, 2);
	bench_json_num(j, "nan", NAN);
	bench_json_int(j, "neg", -3);
	bench_json_end(j);
}

Test(bench_harness, json_nests_with_commas_and_indentation)
{
	cr_assert_str_eq(json_text(write_nested),
			 "{\n"
			 "  \"name\": \"x\",\n"
			 "  \"inner\": {\n"
			 "    \"ok\": true,\n"
			 "    \"none\": null\n"
			 "  },\n"
			 "  \"list\": [\n"
			 "    {\n"
			 "      \"n\": 18446744073709551615\n"
			 "    },\n"
			 "    {}\n"
			 "  ],\n"
			 "  \"v\": [1, 2.5000],\n"
			 "  \"nan\": null,\n"
			 "  \"neg\": -3\n"
			 "}");
}

static void write_stats(struct bench_json *j)
{
	const double v[] = { 3, 1, 2, 4 };

	bench_json_obj(j, NULL);
	bench_json_stats(j, "mbps", v, 4);
	bench_json_stats(j, "none", v, 0);
	bench_json_end(j);
}

Test(bench_harness, json_stats_give_samples_median_and_spread)
{
	cr_assert_str_eq(json_text(write_stats),
			 "{\n"
			 "  \"mbps\": [3, 1, 2, 4],\n"
			 "  \"mbps_median\": 2.5000,\n"
			 "  \"mbps_min\": 1,\n"
			 "  \"mbps_max\": 4,\n"
			 "  \"none\": [],\n"
			 "  \"none_median\": null,\n"
			 "  \"none_min\": null,\n"
			 "  \"none_max\": null\n"
			 "}");
}

/* ------------------------------------------------------------------ */
/* Tables and kept messages                                            */

Test(bench_harness, table_aligns_text_left_numbers_right)
{
	static const char *const cols[] = { "case", ">MB/s", ">(min-max)" };
	static struct bench_table t;
	struct bench_stats st = { 3, 1234.4, 99.96, 2000 };
	char buf[512] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	int row;

	cr_assert(f);
	bench_table_init(&t, cols, 3);
	row = bench_table_row(&t);
	bench_table_set(&t, row, 0, "%s", "uflush");
	bench_table_stats(&t, row, 1, &st);
	row = bench_table_row(&t);
	bench_table_set(&t, row, 0, "%s", "kernel page cache");
	bench_table_ratio(&t, row, 1, NAN);
	bench_table_print(&t, f);
	fclose(f);
	cr_assert_str_eq(buf,
			 "case               MB/s   (min-max)\n"
			 "-----------------------------------\n"
			 "uflush             1234  100.0-2000\n"
			 "kernel page cache     -\n");
}

Test(bench_harness, kept_messages_are_joined_and_cut)
{
	struct bench_log l = { .prefix = "uflush: ", .end = "\n" };
	struct bench_log p = { .sep = "\n  " };
	unsigned int i;

	bench_log_keep(&l, 0, "one");
	bench_log_keep(&l, 0, "two");
	cr_assert_str_eq(l.text, "uflush: one\nuflush: two\n");
	bench_log_keep(&p, 0, "a");
	bench_log_keep(&p, 0, "b");
	cr_assert_str_eq(p.text, "a\n  b");
	for (i = 0; i < 1000; i++)
		bench_log_keep(&l, 0, "a long enough message");
	cr_assert_eq(l.len, sizeof(l.text) - 1);
	cr_assert_eq(strlen(l.text), l.len);
}

Test(bench_harness, grow_doubles_and_keeps_the_contents)
{
	int *arr = NULL;
	size_t cap = 0, nr;

	for (nr = 0; nr < 100; nr++) {
		cr_assert_eq(bench_grow(&arr, &cap, nr, sizeof(*arr), 8), 0);
		cr_assert(cap > nr);
		arr[nr] = (int)nr;
	}
	cr_assert_eq(cap, 128);
	for (nr = 0; nr < 100; nr++)
		cr_assert_eq(arr[nr], (int)nr);
	free(arr);
}

/* ------------------------------------------------------------------ */
/* The scratch device (needs root for the loop device)                 */

Test(bench_harness, scratch_target_is_a_dio_loop_device_and_goes_away)
{
	struct uf_cache_config cfg;
	struct bench_reopen ro = { 0 };
	struct bench_target t;
	struct uf_cache *cache;
	struct uf_dev *dev;
	uint64_t ios0, sec0, ios1, sec1, rd0, wr0, rd1, wr1;
	char sys[96];

	if (geteuid())
		cr_skip_test("needs root for a loop device");
	cr_assert_eq(bench_target_open(&t, "test", NULL, 64u << 20, false), 0);
	if (!t.td.is_loop) {
		bench_target_close(&t);
		cr_skip_test("no loop device here: %s", t.td.why_not_loop);
	}
	cr_assert(t.scratch && t.is_blk);
	cr_assert_eq(t.dio, 1, "%s", t.desc);
	cr_assert(strstr(t.desc, "dio=1 (verified in sysfs)"), "%s", t.desc);
	cr_assert(bench_target_counters(&t, &ios0, &sec0));
	cr_assert(bench_target_ios(&t, &rd0, &wr0));
	cr_assert_eq(bench_target_prefill(&t, 1u << 20, 256u << 10), 0);
	cr_assert(bench_target_counters(&t, &ios1, &sec1));
	cr_assert(bench_target_ios(&t, &rd1, &wr1));
	cr_assert_geq(sec1 - sec0, 2048, "1 MiB is 2048 sectors: %llu",
		      (unsigned long long)(sec1 - sec0));
	/* writes, not reads (which udev's probing may add to) */
	cr_assert_geq(wr1 - wr0, 4, "4 writes of 256k: %llu",
		      (unsigned long long)(wr1 - wr0));
	cr_assert_geq(rd1, rd0);

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 256;
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	t.shaped = true;
	t.shape.latency_us = 100;
	cr_assert_eq(bench_dev_open(&ro, cache, &t, &dev), 0);
	cr_assert(ro.opened);
	cr_assert_eq(uf_cache_close(cache), 0);

	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/backing_file",
		 t.major, t.minor);
	cr_assert_eq(access(sys, F_OK), 0);
	bench_target_close(&t);
	cr_assert(!t.scratch);
	cr_assert_neq(access(sys, F_OK), 0, "the loop device is detached");
}

/* ------------------------------------------------------------------ */
/* What the scenarios share                                            */

Test(bench_harness, opts_main_gives_the_exit_code)
{
	char *ok[] = { "test", "--reps", "4", NULL };
	char *bad[] = { "test", "--reps", "0", NULL };
	char *help[] = { "test", "--help", NULL };
	FILE *out = stdout;

	/* the help text is not looked at here: keep it off the log */
	stdout = fopen("/dev/null", "w");
	cr_assert(stdout);
	cr_assert_eq(bench_opts_main(&test_cl, 3, ok), -1);
	cr_assert_eq(to.reps, 4);
	cr_assert_eq(bench_opts_main(&test_cl, 3, bad), 2);
	cr_assert_eq(bench_opts_main(&test_cl, 2, help), 0);
	fclose(stdout);
	stdout = out;
}

static void write_members(struct bench_json *j)
{
	static const char *const keys[] = { "a", "b" };
	static const char *const names[] = { "stock", "cap" };
	static const char policy[2][512] = { "p: x=1", "p: x=2" };
	const double v[] = { 1, 0.5 };

	bench_json_obj(j, NULL);
	bench_json_members(j, keys, v, 2);
	bench_json_policies(j, names, policy, 2);
	bench_json_end(j);
}

Test(bench_harness, json_members_and_policies_from_tables)
{
	cr_assert_str_eq(json_text(write_members),
			 "{\n"
			 "  \"a\": 1,\n"
			 "  \"b\": 0.5000,\n"
			 "  \"policy_stock\": \"p: x=1\",\n"
			 "  \"policy_cap\": \"p: x=2\"\n"
			 "}");
}

struct test_thread {
	struct bench_thread t;
	bool *stop;
	int fail;			/* end with this error */
	unsigned int linger_ms;		/* after the stop */
	bool done;
};

static void *test_thread_fn(void *arg)
{
	struct test_thread *w = arg;

	while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED))
		usleep(1000);
	/* the later threads end later: only joining them all sees all done */
	usleep(w->linger_ms * 1000);
	w->t.err = w->fail;
	__atomic_store_n(&w->done, true, __ATOMIC_RELAXED);
	return NULL;
}

Test(bench_harness, threads_stop_joins_all_and_keeps_the_first_error)
{
	struct test_thread w[3] = { { .fail = 0 }, { .fail = -EIO },
				    { .fail = -ENOSPC } };
	unsigned int i, started = 0;
	bool stop = false;
	char why[64] = "";

	for (i = 0; i < 3; i++) {
		w[i].stop = &stop;
		w[i].linger_ms = 50 * i;
	}
	cr_assert_eq(bench_threads_start(w, sizeof(w[0]), 3, test_thread_fn,
					 &started), 0);
	cr_assert_eq(started, 3);
	cr_assert_eq(bench_threads_stop(&stop, w, sizeof(w[0]), started, 0,
					"a writer", why, sizeof(why)), -EIO);
	cr_assert_str_eq(why, "a writer: Input/output error");
	for (i = 0; i < 3; i++)
		cr_assert(__atomic_load_n(&w[i].done, __ATOMIC_RELAXED),
			  "thread %u was joined", i);

	/* an error the caller already had wins, and why is left alone */
	memset(w, 0, sizeof(w));
	w[0].fail = -EIO;
	w[0].stop = &stop;
	stop = false;
	started = 0;
	snprintf(why, sizeof(why), "before");
	cr_assert_eq(bench_threads_start(w, sizeof(w[0]), 1, test_thread_fn,
					 &started), 0);
	cr_assert_eq(bench_threads_stop(&stop, w, sizeof(w[0]), started,
					-EINVAL, "a writer", why, sizeof(why)),
		     -EINVAL);
	cr_assert_str_eq(why, "before");
}

/* ------------------------------------------------------------------ */
/* Issue 18: progress, interruption, one vocabulary                    */

Test(bench_harness, dev_size_too_small_says_the_minimum)
{
	char msg[256];

	cr_assert_eq(parse(msg, sizeof(msg), "--dev-size", "1M", NULL),
		     -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: bad --dev-size '1M' (want a size from 64M to 64G, a multiple of 1M)\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--dev-size", "100M", NULL), 0,
		     "%s", msg);
	cr_assert_eq(to.dev_size, 100ull << 20);
}

Test(bench_harness, old_option_name_works_with_a_note)
{
	char msg[256];

	cr_assert_eq(parse(msg, sizeof(msg), "--runtime", "7", NULL), 0,
		     "%s", msg);
	cr_assert_eq(to.secs, 7);
	cr_assert_str_eq(msg, "uflush-bench test: note: --runtime is now --secs (the old name still works)\n");
	cr_assert_eq(parse(msg, sizeof(msg), "--runtime", "0", NULL), -EINVAL);
	cr_assert(strstr(msg, "bad --secs '0' (want 1..3600)"), "%s", msg);
	cr_assert_eq(parse(msg, sizeof(msg), "--secs", "9", NULL), 0);
	cr_assert_str_empty(msg);
}

Test(bench_harness, help_hides_old_names_and_offers_quiet)
{
	char *argv[] = { "test", "--help", NULL };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cr_assert_eq(bench_opts_parse(&test_cl, 2, argv, out, stderr), 1);
	fclose(out);
	cr_assert_null(strstr(text, "--runtime"), "%s", text);
	cr_assert(strstr(text, "\n  --quiet            no progress lines on stderr\n"), "%s", text);
	free(text);
}

Test(bench_harness, quiet_is_taken_everywhere)
{
	char msg[256];

	bench_quiet = false;
	cr_assert_eq(parse(msg, sizeof(msg), "--quiet", NULL, NULL), 0, "%s",
		     msg);
	cr_assert(bench_quiet);
}

Test(bench_harness, dev_lists_repeat_and_split_on_commas)
{
	char msg[256];

	cr_assert_eq(parse(msg, sizeof(msg), "--devs", "/dev/a,/dev/b",
			   "--devs=/dev/c"), 0, "%s", msg);
	cr_assert_eq(to.devs.n, 3);
	cr_assert_str_eq(to.devs.v[0], "/dev/a");
	cr_assert_str_eq(to.devs.v[1], "/dev/b");
	cr_assert_str_eq(to.devs.v[2], "/dev/c");
	cr_assert_eq(parse(msg, sizeof(msg), "--devs", "/dev/a,,/dev/b", NULL),
		     -EINVAL);
	cr_assert(strstr(msg, "want PATH[,PATH...]"), "%s", msg);
}

Test(bench_harness, eta_from_the_rate_or_the_estimate)
{
	char buf[24];

	cr_assert_float_eq(bench_eta(10, 2, 6, false), 20, 1e-9);
	cr_assert(isnan(bench_eta(3, 0, 6, false)), "no rate yet, no guess");
	cr_assert_float_eq(bench_eta(3, 0, 60, true), 57, 1e-9);
	cr_assert_float_eq(bench_eta(90, 0, 60, true), 0, 1e-9);
	bench_fmt_secs(buf, sizeof(buf), 45.2);
	cr_assert_str_eq(buf, "45s");
	bench_fmt_secs(buf, sizeof(buf), 125);
	cr_assert_str_eq(buf, "2m05s");
	bench_fmt_secs(buf, sizeof(buf), 3725);
	cr_assert_str_eq(buf, "1h02m");
	bench_fmt_secs(buf, sizeof(buf), NAN);
	cr_assert_str_eq(buf, "?");
}

static int slow_run(void *priv, unsigned int c, unsigned int rep)
{
	(void)priv;
	(void)c;
	(void)rep;
	usleep(120 * 1000);
	return 0;
}

static double two_secs(void *priv, unsigned int c)
{
	(void)priv;
	(void)c;
	return 2;
}

Test(bench_harness, progress_lines_while_a_schedule_runs)
{
	struct bench_case cases[2] = { { 0 } };
	struct bench_sched s = {
		.nr_cases = 2, .cases = cases, .reps = 2, .run = slow_run,
		.est_secs = two_secs, .cmd = "test",
	};
	char *text = NULL;
	size_t len = 0;

	bench_progress_file = open_memstream(&text, &len);
	bench_progress_ms = 50;
	cr_assert_eq(bench_sched_run(&s), 0);
	fclose(bench_progress_file);
	cr_assert(!strncmp(text, "uflush-bench test: 4 runs (2 reps of 2), ETA 8s (", 49),
		  "the estimate up front: %s", text);
	cr_assert(strstr(text, " elapsed, run "), "%s", text);
	cr_assert(strstr(text, ", ETA "), "%s", text);
	free(text);
	text = NULL;
	bench_quiet = true;
	bench_progress_file = open_memstream(&text, &len);
	memset(cases, 0, sizeof(cases));
	cr_assert_eq(bench_sched_run(&s), 0);
	fclose(bench_progress_file);
	cr_assert_str_empty(text, "--quiet: %s", text);
	free(text);
	bench_progress_file = NULL;
}

static int stop_at_third(void *priv, unsigned int c, unsigned int rep)
{
	unsigned int *n = priv;

	(void)c;
	(void)rep;
	if (++*n == 3)
		bench_stop = SIGTERM;	/* the signal comes mid-run */
	return 0;
}

Test(bench_harness, sched_stops_on_a_signal_and_keeps_what_ran)
{
	struct bench_case cases[2] = { { 0 } };
	unsigned int n = 0;
	struct bench_sched s = {
		.nr_cases = 2, .cases = cases, .reps = 3, .run = stop_at_third,
		.priv = &n,
	};

	bench_quiet = true;
	bench_stop = 0;
	cr_assert_eq(bench_sched_run(&s), 0);
	cr_assert_eq(n, 3, "no run after the signal");
	cr_assert_eq(cases[0].runs, 1, "the run cut short is not counted");
	cr_assert_eq(cases[1].runs, 1);
	cr_assert_eq(bench_exit_code("test", 0), 143);
	bench_stop = SIGINT;
	cr_assert_eq(bench_exit_code("test", -EIO), 130);
	bench_stop = 0;
	cr_assert_eq(bench_exit_code("test", -EIO), 1);
}

static const char *const fake_cols[] = { "case", ">n" };

static void fake_header(const void *priv) { (void)priv; }
static void fake_notes(const void *priv) { (void)priv; }

static void fake_row(struct bench_table *t, const void *priv, unsigned int i)
{
	const struct bench_case *c = priv;
	int row = bench_table_row(t);

	bench_table_set(t, row, 0, "%s", c[i].name);
	bench_table_set(t, row, 1, "%u", c[i].runs);
}

static void fake_json_config(struct bench_json *j, const void *priv)
{
	(void)priv;
	bench_json_str(j, "config", "fake");
}

static void fake_json_case(struct bench_json *j, const void *priv,
			   unsigned int i)
{
	const struct bench_case *c = priv;

	bench_json_obj(j, NULL);
	bench_json_str(j, "case", c[i].name);
	bench_json_u64(j, "runs", c[i].runs);
	bench_json_end(j);
}

static const struct bench_report fake_report = BENCH_REPORT_OF(fake);

static char *slurp_fd(int fd)
{
	char *s = calloc(1, 65536);

	cr_assert(s);
	lseek(fd, 0, SEEK_SET);
	cr_assert_geq(read(fd, s, 65535), 0);
	return s;
}

/* `--json -`: the JSON alone on stdout, the table on stderr. */
Test(bench_harness, json_dash_goes_to_stdout_and_the_table_to_stderr)
{
	char *argv[] = { "test", "--json", "-", NULL };
	struct bench_case cases[2] = { { .name = "one", .runs = 1 },
				       { .name = "two", .runs = 0 } };
	struct bench_env env = { .cmd = "test" };
	struct bench_target t = { .path = "/dev/null" };
	char out_path[] = "/tmp/uflush-json-out.XXXXXX";
	char err_path[] = "/tmp/uflush-json-err.XXXXXX";
	int out = mkstemp(out_path), errfd = mkstemp(err_path);
	char *o, *e;

	cr_assert(out >= 0 && errfd >= 0);
	unlink(out_path);
	unlink(err_path);
	fflush(stdout);
	fflush(stderr);
	cr_assert_geq(dup2(out, STDOUT_FILENO), 0);
	cr_assert_geq(dup2(errfd, STDERR_FILENO), 0);
	memset(&to, 0, sizeof(to));
	cr_assert_eq(bench_opts_parse(&test_cl, 3, argv, stdout, stderr), 0);
	bench_stop = SIGINT;
	cr_assert_eq(bench_report(&fake_report, &env, &t, to.json, cases, 2),
		     0);
	bench_stop = 0;
	fflush(stdout);
	fflush(stderr);
	o = slurp_fd(out);
	e = slurp_fd(errfd);
	cr_assert_eq(o[0], '{', "only JSON on stdout: %s", o);
	cr_assert(strstr(o, "\"interrupted\": true"), "%s", o);
	cr_assert(strstr(o, "\"case\": \"two\",\n      \"runs\": 0"), "%s", o);
	cr_assert_null(strstr(o, "INTERRUPTED"), "%s", o);
	cr_assert(strstr(e, "INTERRUPTED: partial results"), "%s", e);
	cr_assert(strstr(e, "one   1"), "the table on stderr: %s", e);
	free(o);
	free(e);
}

Test(bench_harness, mountinfo_names_where_a_device_is_mounted)
{
	char path[] = "/tmp/uflush-mountinfo.XXXXXX", where[256] = "";
	int fd = mkstemp(path);
	FILE *f;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fprintf(f, "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
		   "29 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
		   "40 29 8:17 /data /srv/data rw - xfs /dev/sdb1 rw\n");
	fclose(f);
	cr_assert_eq(bench_mounted_at(path, 8, 17, where, sizeof(where)), 1);
	cr_assert_str_eq(where, "/srv/data");
	cr_assert_eq(bench_mounted_at(path, 254, 0, where, sizeof(where)), 1);
	cr_assert_str_eq(where, "/");
	cr_assert_eq(bench_mounted_at(path, 8, 16, where, sizeof(where)), 0);
	unlink(path);
	cr_assert_eq(bench_mounted_at(path, 8, 16, where, sizeof(where)),
		     -ENOENT);
}

/* The root filesystem's block device, if it has one in /dev. */
static bool root_block_device(char *dev, size_t len)
{
	char line[1024], devno[32], mnt[512], sys[96], name[64];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %31s %*s %511s", devno, mnt) == 2 &&
		    !strcmp(mnt, "/"))
			found = true;
	fclose(f);
	if (!found)
		return false;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%s/uevent", devno);
	f = fopen(sys, "r");
	if (!f)
		return false;
	found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "DEVNAME=%63s", name) == 1;
	fclose(f);
	snprintf(dev, len, "/dev/%s", name);
	return found && !access(dev, F_OK);
}

/* Only opened to be refused (no --force): nothing is written to it. */
Test(bench_harness, a_mounted_dev_is_refused_up_front)
{
	struct bench_target t;
	char dev[96], msg[512] = "";
	FILE *err;
	int fd, saved;

	if (!root_block_device(dev, sizeof(dev)))
		cr_skip_test("the root filesystem is on no block device in /dev here");
	err = tmpfile();
	cr_assert_not_null(err);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(err), STDERR_FILENO);
	fd = bench_target_open(&t, "test", dev, 0, false);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(err);
	cr_assert_geq(fread(msg, 1, sizeof(msg) - 1, err), 0);
	fclose(err);
	cr_assert_eq(fd, -EBUSY, "%s: %s", dev, msg);
	cr_assert(strstr(msg, " is mounted on / (/proc/self/mountinfo)"), "%s", msg);
	cr_assert(strstr(msg, "--force uses it anyway"), "%s", msg);
}

Test(bench_harness, cache_takes_a_size_and_pages_stays)
{
	char msg[256];

	cr_assert_eq(parse(msg, sizeof(msg), "--cache", "256M", NULL), 0,
		     "%s", msg);
	cr_assert_eq(to.pages, 65536);
	cr_assert_str_empty(msg);
	cr_assert_eq(parse(msg, sizeof(msg), "--pages", "1024", NULL), 0,
		     "%s", msg);
	cr_assert_eq(to.pages, 1024);
	cr_assert(strstr(msg, "note: --pages is now --cache"), "%s", msg);
	cr_assert_eq(parse(msg, sizeof(msg), "--cache", "3000", NULL),
		     -EINVAL);
	cr_assert_str_eq(msg, "uflush-bench test: bad --cache '3000' (want a size from 64k to 1T, a multiple of 4k)\n");
}

/* ------------------------------------------------------------------ */
/* Self-describing results                                             */

Test(bench_harness, sha256_of_the_standard_vectors)
{
	char hex[65];

	bench_sha256("abc", 3, hex);
	cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	bench_sha256("", 0, hex);
	cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* 56 bytes: the length spills into a second padding block */
	bench_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		     56, hex);
	cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static const char *plugin_spec;

static void write_plugins(struct bench_json *j)
{
	bench_json_obj(j, NULL);
	bench_plugins_json(j, plugin_spec);
	bench_machine_json(j);
	bench_json_end(j);
}

Test(bench_harness, results_name_the_plugins_and_the_machine)
{
	char path[] = "/tmp/uflush-plugin.XXXXXX", spec[128], *text;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "abc", 3), 3);
	close(fd);
	snprintf(spec, sizeof(spec), "mainline,plugin=%s,plugin=/nonexistent.so",
		 path);
	plugin_spec = spec;
	text = json_text(write_plugins);
	unlink(path);
	cr_assert(strstr(text, "\"sha256\": \"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\""),
		  "%s", text);
	cr_assert(strstr(text, "\"path\": \"/nonexistent.so\",\n      \"error\": \"No such file or directory\""),
		  "%s", text);
	cr_assert(strstr(text, "\"cpu_model\": \""), "%s", text);
	cr_assert(strstr(text, "\"memory_bytes\": "), "%s", text);
	cr_assert(strstr(text, "\"release\": \""), "%s", text);
	cr_assert(strstr(text, "\"commit\": \""), "%s", text);
}

Test(bench_harness, json_navigator_finds_members_elements_and_values)
{
	const char *t = "{\"a\": [1, {\"b\": \"x\\\"y\\n\"}, null],\n"
			" \"n\": -2.5e1, \"z\": {}}";
	char buf[16];
	double v;

	cr_assert_eq(bench_jnum(bench_jget(t, "n"), &v), 0);
	cr_assert_float_eq(v, -25, 1e-9);
	cr_assert_eq(bench_jnum(bench_jindex(bench_jget(t, "a"), 0), &v), 0);
	cr_assert_float_eq(v, 1, 1e-9);
	cr_assert_eq(bench_jnum(bench_jindex(bench_jget(t, "a"), 2), &v), 0);
	cr_assert(isnan(v), "null reads as NAN");
	cr_assert_eq(bench_jstr(bench_jget(bench_jindex(bench_jget(t, "a"), 1),
					   "b"), buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "x\"y\n");
	cr_assert_null(bench_jindex(bench_jget(t, "a"), 3));
	cr_assert_null(bench_jget(t, "missing"));
	cr_assert_null(bench_jget(bench_jget(t, "z"), "a"));
	cr_assert_eq(bench_jnum(NULL, &v), -ENOENT);
	cr_assert_eq(bench_jstr(bench_jget(t, "n"), buf, sizeof(buf)), -EINVAL);
}
