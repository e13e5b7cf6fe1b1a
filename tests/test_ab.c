// SPDX-License-Identifier: MIT
/*
 * Description: `uflush-bench ab` (bench/abcase.c, bench/ab.c): case names
 * parse and print back the same, bad names are refused with a reason, the
 * built-in matrices are all valid names, the comparison arithmetic and its
 * noise mark are right, and (as root) a short real A/B run writes a JSON
 * report with both sides of every case.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/abcase.h"

int bench_ab_main(int argc, char **argv);

static void round_trip(const char *name)
{
	struct ab_case c, c2;
	char buf[AB_NAME_LEN], why[160] = "";

	cr_assert_eq(ab_case_parse(name, &c, why, sizeof(why)), 0,
		     "%s: %s", name, why);
	ab_case_format(&c, buf, sizeof(buf));
	cr_assert_str_eq(buf, name);
	cr_assert_eq(ab_case_parse(buf, &c2, NULL, 0), 0);
	cr_assert_eq(memcmp(&c, &c2, sizeof(c)), 0, "%s", name);
}

Test(ab, case_names_round_trip)
{
	round_trip("thresh=100M/loop-10dd-4k-2p-1024M-100M:10-X");
	round_trip("thresh=1G/loop-1dd-4k-8p-4096M-1024M:10-X");
	round_trip("JBOD-4HDD-thresh=100M/hdd-100dd-1M-2p-256M-100M:10-X");
	round_trip("JBOD-10HDD-hdd-10dd-1M-24p-16384M-20:10-X");
	round_trip("ssd-4fsync-8k-1p-64M-20:5-3s");
	round_trip("thresh=8M/loop-2fio-16k-2p-128M-8M:10-256M");
	round_trip("memcg=6400k/hdd-2dd-1k-2p-100M-20:10-8s");
	round_trip("JBOD-2HDD-memcg=8M/thresh=16M/hdd-4dd-1M-2p-256M-16M:10-X");
}

/* seed 003's memcg: a domain inside the cache, and the matrix using it. */
Test(ab, memcg_prefix_and_seed003_matrix)
{
	const struct ab_matrix *m = ab_matrix_find("seed003");
	struct ab_case c;
	char why[160] = "";

	cr_assert_eq(ab_case_parse("memcg=6400k/hdd-2dd-1k-2p-100M-20:10-8s",
				   &c, NULL, 0), 0);
	cr_assert_eq(c.memcg, 6400ull << 10);
	cr_assert_eq(c.mem, 100ull << 20);
	cr_assert_eq(ab_case_parse("loop-1dd-4k-1p-64M-20:10-X", &c, NULL, 0),
		     0);
	cr_assert_eq(c.memcg, 0);
	cr_assert_eq(ab_case_parse("memcg=5000/loop-1dd-4k-1p-64M-20:10-X", &c,
				   why, sizeof(why)), -EINVAL);
	cr_assert_not_null(strstr(why, "memcg="), "%s", why);
	cr_assert_not_null(m);
	cr_assert_str_eq(m->policy_b, "linux-3.2,reclaim=pageout");
	cr_assert_eq(ab_case_parse(m->cases[0], &c, NULL, 0), 0);
	cr_assert_gt(c.memcg, 0);
}

Test(ab, case_fields_parse)
{
	struct ab_case c;

	cr_assert_eq(ab_case_parse("JBOD-4HDD-thresh=100M/hdd-10fsync-8k-2p-1024M-100M:10-5s",
				   &c, NULL, 0), 0);
	cr_assert_eq(c.jbod, 4);
	cr_assert_eq(ab_case_devs(&c), 4);
	cr_assert_eq(c.dev, AB_DEV_HDD);
	cr_assert_eq(c.writers, 10);
	cr_assert_eq(c.kind, AB_FSYNC);
	cr_assert_eq(c.bs, 8192);
	cr_assert_eq(c.cpus, 2);
	cr_assert_eq(c.mem, 1024ull << 20);
	cr_assert(c.limit_bytes);
	cr_assert_eq(c.limit, 100ull << 20);
	cr_assert_eq(c.bg_ratio, 10);
	cr_assert_eq(c.secs, 5);
	cr_assert_eq(c.amount, 0);
	cr_assert_eq(ab_case_parse("loop-1dd-4k-1p-64M-20:10-X", &c, NULL, 0),
		     0);
	cr_assert_not(c.limit_bytes);
	cr_assert_eq(c.limit, 20);
	cr_assert_eq(ab_case_devs(&c), 1);
}

/* Without the seeds' thresh= prefix a name parses and prints with it. */
Test(ab, thresh_prefix_is_added)
{
	struct ab_case c;
	char buf[AB_NAME_LEN];

	cr_assert_eq(ab_case_parse("loop-1dd-4k-1p-64M-8M:10-X", &c, NULL, 0),
		     0);
	ab_case_format(&c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "thresh=8M/loop-1dd-4k-1p-64M-8M:10-X");
}

static void refused(const char *name, const char *want)
{
	struct ab_case c;
	char why[160] = "";

	cr_assert_eq(ab_case_parse(name, &c, why, sizeof(why)), -EINVAL,
		     "%s parsed", name);
	cr_assert(strstr(why, want), "%s: '%s' lacks '%s'", name, why, want);
}

Test(ab, bad_names_are_refused_with_a_reason)
{
	refused("", "device");
	refused("floppy-1dd-4k-1p-64M-8M:10-X", "device");
	refused("loop-1cp-4k-1p-64M-8M:10-X", "writer kind");
	refused("loop-0dd-4k-1p-64M-8M:10-X", "writers");
	refused("loop-1dd-100-1p-64M-8M:10-X", "write size");
	refused("loop-1dd-4k-1-64M-8M:10-X", "CPUs");
	refused("loop-1dd-4k-1p-64M-8M-X", "limit");
	refused("loop-1dd-4k-1p-64M-8M:101-X", "background");
	refused("loop-1dd-4k-1p-64M-8M:10-", "length");
	refused("loop-1dd-4k-1p-64M-8M:10-Xs", "length");
	refused("thresh=9M/loop-1dd-4k-1p-64M-8M:10-X", "thresh=");
	refused("thresh=9M/loop-1dd-4k-1p-64M-20:10-X", "thresh=");
	refused("JBOD-1HDD-hdd-1dd-4k-1p-64M-20:10-X", "JBOD");
	refused("JBOD-4SSD-hdd-1dd-4k-1p-64M-20:10-X", "JBOD");
	cr_assert_eq(ab_case_parse(NULL, NULL, NULL, 0), -EINVAL);
}

Test(ab, matrices_name_valid_cases)
{
	unsigned int i, k;
	struct ab_case c;
	char buf[AB_NAME_LEN];

	cr_assert_not_null(ab_matrix_find("seed000"));
	cr_assert_not_null(ab_matrix_find("seed001"));
	cr_assert_not_null(ab_matrix_find("seed004"));
	cr_assert_not_null(ab_matrix_find("demo"));
	cr_assert_null(ab_matrix_find("seed999"));
	for (i = 0; ab_matrices[i].name; i++)
		for (k = 0; ab_matrices[i].cases && ab_matrices[i].cases[k];
		     k++) {
			cr_assert_eq(ab_case_parse(ab_matrices[i].cases[k],
						   &c, NULL, 0), 0, "%s",
				     ab_matrices[i].cases[k]);
			ab_case_format(&c, buf, sizeof(buf));
			cr_assert_str_eq(buf, ab_matrices[i].cases[k]);
		}
}

/* ------------------------------------------------------------------ */
/* Comparison                                                          */

static void fill(struct bench_samples *s, const double *v, unsigned int n)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++)
		bench_samples_add(s, v[i]);
}

/* Two sets of samples compared, and the change as the table prints it */
struct cmp_out {
	struct ab_cmp c;
	char text[32];
};

/* SAMPLES(v, ...): the values and their number, as compare() takes them */
#define SAMPLES(...) (const double[]){ __VA_ARGS__ }, \
	(unsigned int)(sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double))

static struct cmp_out compare(const double *a, unsigned int na,
			      const double *b, unsigned int nb)
{
	struct bench_samples sa, sb;
	struct cmp_out r;

	fill(&sa, a, na);
	fill(&sb, b, nb);
	ab_compare(&sa, &sb, &r.c);
	ab_fmt_change(r.text, sizeof(r.text), &r.c);
	return r;
}

Test(ab, compare_change_and_spread)
{
	struct cmp_out r = compare(SAMPLES(90, 100, 110),
				   SAMPLES(140, 150, 160));

	cr_assert_float_eq(r.c.a, 100, 1e-9);
	cr_assert_float_eq(r.c.b, 150, 1e-9);
	cr_assert_float_eq(r.c.change, 50, 1e-9);
	cr_assert_float_eq(r.c.spread_a, 10, 1e-9);	/* (110-90)/2/100 */
	cr_assert_float_eq(r.c.spread_b, 10.0 / 1.5, 1e-9);
	cr_assert_not(r.c.noise);
	cr_assert_str_eq(r.text, "+50.0%");
}

Test(ab, compare_marks_overlapping_ranges_as_noise)
{
	struct cmp_out r = compare(SAMPLES(90, 100, 120),
				   SAMPLES(115, 104, 130));

	cr_assert_float_eq(r.c.change, 15, 1e-9);
	cr_assert(r.c.noise, "120 >= 104: the ranges overlap");
	cr_assert_str_eq(r.text, "+15.0% ~");
	/* a drop, outside the noise */
	r = compare(SAMPLES(115, 104, 130), SAMPLES(50, 60, 55));
	cr_assert_not(r.c.noise);
	cr_assert_str_eq(r.text, "-52.2%");
}

Test(ab, compare_one_rep_is_noise_and_no_baseline_is_nan)
{
	struct cmp_out r = compare(SAMPLES(10), SAMPLES(20));

	cr_assert(r.c.noise);
	cr_assert(isnan(r.c.spread_a));
	r = compare(SAMPLES(0, 0), SAMPLES(20));
	cr_assert(isnan(r.c.change));
	cr_assert_str_eq(r.text, "-");
}

Test(ab, total_sums_medians)
{
	struct ab_cmp rows[2] = {
		{ .a = 100, .b = 150, .noise = false },
		{ .a = 300, .b = 250, .noise = true },
	}, t;

	ab_compare_total(rows, 2, &t);
	cr_assert_float_eq(t.a, 400, 1e-9);
	cr_assert_float_eq(t.b, 400, 1e-9);
	cr_assert_float_eq(t.change, 0, 1e-9);
	cr_assert_not(t.noise);
	rows[0].noise = true;
	ab_compare_total(rows, 2, &t);
	cr_assert(t.noise);
}

/* ------------------------------------------------------------------ */
/* The positionals (issue 18)                                           */

#define NARGS(a) (sizeof(a) / sizeof((a)[0]))

Test(ab, positionals_are_sorted_by_parsing_not_by_slashes)
{
	const char *plugin = "build/plugins/congestion-wait.so";
	char spec[256], why[320];
	char *args[] = { "mainline", spec,
			 "thresh=4M/loop-1dd-4k-1p-32M-4M:10-2s" };
	const char *p[2] = { NULL, NULL };
	unsigned int np = 9;

	if (access(plugin, R_OK))
		cr_skip_test("no %s (run from the repository after make build)",
			     plugin);
	snprintf(spec, sizeof(spec), "mainline,plugin=./%s", plugin);
	cr_assert_eq(ab_split_args(args, NARGS(args), p, &np, why,
				   sizeof(why)), 0, "%s", why);
	cr_assert_eq(np, 2);
	cr_assert_str_eq(p[0], "mainline");
	cr_assert_str_eq(p[1], spec, "a spec with a '/' is a policy");
}

Test(ab, positionals_without_policies_are_all_cases)
{
	char *args[] = { "thresh=4M/loop-1dd-4k-1p-32M-4M:10-2s",
			 "loop-2dd-4k-1p-32M-20:10-X" };
	const char *p[2] = { NULL, NULL };
	unsigned int np = 9;
	char why[320];

	cr_assert_eq(ab_split_args(args, NARGS(args), p, &np, why,
				   sizeof(why)), 0, "%s", why);
	cr_assert_eq(np, 0);
}

Test(ab, positionals_out_of_place_are_refused_clearly)
{
	char *one[] = { "mainline", "loop-2dd-4k-1p-32M-20:10-X" };
	char *late[] = { "mainline", "linux-3.1", "loop-2dd-4k-1p-32M-20:10-X",
			 "linux-3.2" };
	char *three[] = { "mainline", "linux-3.1", "linux-3.2" };
	char *neither[] = { "mainline", "linux-3.1", "lop-2dd-4k-1p-32M-20:10-X" };
	const char *p[2];
	unsigned int np;
	char why[320];

	cr_assert_eq(ab_split_args(one, NARGS(one), p, &np, why, sizeof(why)),
		     -EINVAL);
	cr_assert(strstr(why, "one policy ('mainline'): give two"), "%s", why);
	cr_assert_eq(ab_split_args(late, NARGS(late), p, &np, why,
				   sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "policy 'linux-3.2' after a case"), "%s", why);
	cr_assert_eq(ab_split_args(three, NARGS(three), p, &np, why,
				   sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "a third policy 'linux-3.2'"), "%s", why);
	cr_assert_eq(ab_split_args(neither, NARGS(neither), p, &np, why,
				   sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "'lop-2dd-4k-1p-32M-20:10-X' is neither a case (device: loop, hdd or ssd) nor a policy ("),
		  "%s", why);
}

Test(ab, a_bare_number_is_no_length)
{
	struct ab_case c;
	char why[160];

	cr_assert_eq(ab_case_parse("loop-1dd-4k-1p-32M-4M:10-2", &c, why,
				   sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "a size of at least 1M"), "%s", why);
	cr_assert_eq(ab_case_parse("loop-1dd-4k-1p-32M-4M:10-64M", &c, why,
				   sizeof(why)), 0, "%s", why);
	cr_assert_eq(c.amount, 64ull << 20);
}

Test(ab, big_sizes_print_back_as_given)
{
	round_trip("loop-1dd-4k-1p-1000G-20:10-X");
	round_trip("loop-1dd-4k-1p-64G-20:10-X");
	round_trip("loop-1dd-4k-1p-65535M-20:10-X");
	round_trip("thresh=100G/loop-1dd-1M-1p-2000G-100G:10-3T");
}

Test(ab, a_case_is_held_to_the_machine)
{
	struct ab_case c;
	char why[160];

	cr_assert_eq(ab_case_parse("loop-1dd-4k-24p-1000G-20:10-X", &c, NULL,
				   0), 0);
	cr_assert_eq(ab_case_fit(&c, 8ull << 30, 2, why, sizeof(why)),
		     -ENOMEM);
	cr_assert_str_eq(why, "its cache of 1000G is more than this machine's memory (8.0G)");
	cr_assert_eq(c.cpus, 24, "refused: left as it was");
	c.mem = 1ull << 30;
	cr_assert_eq(ab_case_fit(&c, 8ull << 30, 2, why, sizeof(why)), 1);
	cr_assert_str_eq(why, "24p capped to 2p: this process may run on 2 CPUs");
	cr_assert_eq(c.cpus, 2);
	cr_assert_eq(ab_case_fit(&c, 8ull << 30, 2, why, sizeof(why)), 0);
	cr_assert_eq(ab_case_fit(&c, 0, 0, why, sizeof(why)), 0,
		     "unknown machine: not checked");
}

/* ------------------------------------------------------------------ */
/* A real run                                                          */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static unsigned int count(const char *s, const char *sub)
{
	unsigned int n = 0;

	while ((s = strstr(s, sub))) {
		n++;
		s++;
	}
	return n;
}

Test(ab, short_real_run_reports_both_sides, .timeout = 120)
{
	char json[] = "/tmp/uflush-ab-test.XXXXXX";
	char *argv[] = {
		"ab", "linux-3.1", "linux-3.2",
		"JBOD-2HDD-hdd-2dd-256k-1p-32M-20:10-1s",
		"thresh=4M/ssd-2fsync-8k-1p-32M-4M:10-1s",
		"--reps", "2", "--dev-size", "64M", "--json", json, NULL,
	};
	int fd, rc;
	char *s;

	if (geteuid())
		cr_skip_test("needs root for the scratch loop devices");
	fd = mkstemp(json);
	cr_assert_geq(fd, 0);
	close(fd);
	rc = bench_ab_main(11, argv);
	s = slurp(json);
	unlink(json);
	cr_assert_eq(rc, 0);
	cr_assert_not_null(s);
	cr_assert(strstr(s, "\"benchmark\": \"ab\""), "%s", s);
	cr_assert(strstr(s, "\"policy_b_resolved\": \"linux-3.2: "));
	cr_assert(strstr(s, "\"case\": \"TOTAL\""));
	cr_assert(strstr(s, "\"case\": \"JBOD-2HDD-hdd-2dd-256k-1p-32M-20:10-1s\""));
	/* two cases, each with A and B, each with two reps of throughput */
	cr_assert_eq(count(s, "\"mb_per_sec\": ["), 4, "%s", s);
	cr_assert_eq(count(s, "\"fsync_p99_ms_median\": null"), 2,
		     "the dd case has no fsyncs, the fsync case has: %s", s);
	free(s);
}

/* A file as --dev: no sysfs counters, uflush's own count of its writes. */
Test(ab, file_target_counts_its_device_writes, .timeout = 120)
{
	char json[] = "/tmp/uflush-ab-file.XXXXXX";
	char img[] = "/var/tmp/uflush-ab-dev.XXXXXX";
	char *argv[] = {
		"ab", "--quiet", "linux-3.1", "linux-3.2",
		"loop-1dd-4k-1p-32M-20:10-1s", "--reps", "1", "--dev", img,
		"--json", json, NULL,
	};
	int fd, rc;
	const char *p;
	char *s;

	fd = mkstemp(img);
	if (fd < 0)
		cr_skip_test("cannot make a file in /var/tmp: %s",
			     strerror(errno));
	cr_assert_eq(ftruncate(fd, 64 << 20), 0);
	close(fd);
	fd = mkstemp(json);
	cr_assert_geq(fd, 0);
	close(fd);
	rc = bench_ab_main(11, argv);
	s = slurp(json);
	unlink(json);
	unlink(img);
	cr_assert_eq(rc, 0);
	cr_assert_not_null(s);
	p = strstr(s, "\"dev_writes_median\": ");
	cr_assert_not_null(p, "%s", s);
	cr_assert_gt(atof(p + 21), 0, "A's dev writes: %s", s);
	p = strstr(p + 1, "\"dev_writes_median\": ");
	cr_assert_not_null(p, "%s", s);
	cr_assert_gt(atof(p + 21), 0, "B's dev writes: %s", s);
	free(s);
}

/* In "devices": the object with this path line says "scratch": false. */
static bool ours_in_devices(const char *s, const char *path_line)
{
	const char *d = strstr(s, "\"devices\": ["), *p, *end;

	p = d ? strstr(d, path_line) : NULL;
	end = p ? strchr(p, '}') : NULL;
	d = p ? strstr(p, "\"scratch\": false") : NULL;
	return d && d < end;
}

/* Issue 18: a JBOD case on devices of one's own, --dev A --dev B. */
Test(ab, jbod_case_runs_on_the_devices_given, .timeout = 120)
{
	char json[] = "/tmp/uflush-ab-jbod.XXXXXX", devs[300], want[160];
	struct bench_target t[2];
	char *argv[] = {
		"ab", "--quiet", "linux-3.1", "linux-3.2",
		"JBOD-2HDD-hdd-2dd-256k-1p-32M-20:10-1s", "--reps", "1",
		"--dev", devs, "--json", json, NULL,
	};
	int fd, rc;
	char *s;

	if (geteuid())
		cr_skip_test("needs root for the scratch loop devices");
	cr_assert_eq(bench_target_open(&t[0], "test", NULL, 64u << 20, false), 0);
	cr_assert_eq(bench_target_open(&t[1], "test", NULL, 64u << 20, false), 0);
	snprintf(devs, sizeof(devs), "%s,%s", t[0].path, t[1].path);
	fd = mkstemp(json);
	cr_assert_geq(fd, 0);
	close(fd);
	rc = bench_ab_main(11, argv);
	s = slurp(json);
	unlink(json);
	cr_assert_not_null(s);
	snprintf(want, sizeof(want), "      \"path\": \"%s\",", t[0].path);
	cr_assert(ours_in_devices(s, want), "device 1 is ours, not a scratch one: %s", s);
	snprintf(want, sizeof(want), "      \"path\": \"%s\",", t[1].path);
	cr_assert(ours_in_devices(s, want), "device 2: %s", s);
	bench_target_close(&t[0]);
	bench_target_close(&t[1]);
	cr_assert_eq(rc, 0);
	free(s);
}

/* Refused before any device is made: too few, or one twice. */
Test(ab, jbod_case_with_too_few_devices_is_refused)
{
	char *few[] = {
		"ab", "linux-3.1", "linux-3.2",
		"JBOD-4HDD-hdd-1dd-1M-2p-256M-20:10-X", "--dev",
		"/dev/null,/dev/zero", NULL,
	};
	char *twice[] = {
		"ab", "linux-3.1", "linux-3.2",
		"JBOD-2HDD-hdd-1dd-1M-2p-256M-20:10-X", "--dev", "/dev/null",
		"--dev", "/dev/null", NULL,
	};

	cr_assert_eq(bench_ab_main(6, few), 2);
	cr_assert_eq(bench_ab_main(8, twice), 2);
}

static void *interrupt_later(void *arg)
{
	(void)arg;
	usleep(3500 * 1000);
	kill(getpid(), SIGINT);
	return NULL;
}

/* Issue 18: ^C mid-run gives the runs done so far, marked, and 130. */
Test(ab, interrupted_run_reports_what_it_completed, .timeout = 120)
{
	char json[] = "/tmp/uflush-ab-int.XXXXXX";
	char *argv[] = {
		"ab", "--quiet", "linux-3.1", "linux-3.2",
		"thresh=4M/loop-1dd-4k-1p-32M-4M:10-1s", "--reps", "20",
		"--dev-size", "64M", "--json", json, NULL,
	};
	const char *p, *q;
	unsigned int n;
	pthread_t th;
	int fd, rc;
	char *s;

	if (geteuid())
		cr_skip_test("needs root for the scratch loop devices");
	fd = mkstemp(json);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(pthread_create(&th, NULL, interrupt_later, NULL), 0);
	rc = bench_ab_main(11, argv);
	pthread_join(th, NULL);
	s = slurp(json);
	unlink(json);
	cr_assert_eq(rc, 130);
	cr_assert_not_null(s);
	cr_assert(strstr(s, "\"interrupted\": true"), "%s", s);
	p = strstr(s, "\"mb_per_sec\": [");
	cr_assert_not_null(p, "%s", s);
	cr_assert_neq(p[15], ']', "A ran at least once before the signal: %s",
		      s);
	for (n = 1, q = p + 15; *q && *q != ']'; q++)
		n += *q == ',';
	cr_assert_lt(n, 20, "not all 20 reps ran: %s", s);
	free(s);
}

/* ------------------------------------------------------------------ */
/* compare (issue 18)                                                   */

int bench_compare_main(int argc, char **argv);

static void saved_run(char *path, const char *a, const char *b,
		      double v1a, double v1b, bool second_case, double v2)
{
	int fd = mkstemp(path);
	FILE *f;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\n  \"benchmark\": \"ab\",\n  \"interrupted\": %s,\n"
		   "  \"policy_a\": \"%s\",\n  \"policy_b\": \"%s\",\n"
		   "  \"results\": [\n"
		   "    {\"case\": \"loop-1dd-4k-1p-32M-20:10-X\", \"A\": {\"mb_per_sec\": [1], \"mb_per_sec_median\": %g},\n"
		   "     \"B\": {\"mb_per_sec_median\": %g}}",
		second_case ? "false" : "true", a, b, v1a, v1b);
	if (second_case)
		fprintf(f, ",\n    {\"case\": \"ssd-2fsync-8k-1p-32M-20:10-X\", \"A\": {\"mb_per_sec_median\": %g}, \"B\": {\"mb_per_sec_median\": null}}",
			v2);
	fprintf(f, ",\n    {\"case\": \"TOTAL\", \"a\": 1}\n  ]\n}\n");
	fclose(f);
}

static char *run_compare(int argc, char **argv, int *rc)
{
	FILE *out = tmpfile();
	char *text = calloc(1, 8192);
	int saved;

	cr_assert(out && text);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fileno(out), STDOUT_FILENO);
	*rc = bench_compare_main(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(out);
	cr_assert_geq(fread(text, 1, 8191, out), 0);
	fclose(out);
	return text;
}

Test(ab, compare_lines_up_saved_runs_against_the_first)
{
	char r1[] = "/tmp/uflush-cmp1.XXXXXX", r2[] = "/tmp/uflush-cmp2.XXXXXX";
	char *argv[] = { "compare", r1, r2, NULL };
	char *text;
	int rc;

	saved_run(r1, "linux-3.1", "linux-3.2", 200, 220, true, 50);
	saved_run(r2, "linux-3.2", "mainline", 210, 300, false, 0);
	text = run_compare(3, argv, &rc);
	unlink(r1);
	unlink(r2);
	cr_assert_eq(rc, 0, "%s", text);
	cr_assert(strstr(text, "[1] /tmp/uflush-cmp1."), "%s", text);
	cr_assert(strstr(text, " B = mainline (INTERRUPTED: partial)\n"), "%s", text);
	cr_assert(strstr(text, "200  +10.0%  220   +5.0%  210  +50.0%  300  loop-1dd-4k-1p-32M-20:10-X\n"),
		  "%s", text);
	cr_assert(strstr(text, "50.00       -    -       -    -       -    -  ssd-2fsync-8k-1p-32M-20:10-X\n"),
		  "a case a run lacks: %s", text);
	cr_assert(strstr(text, "200  +10.0%  220   +5.0%  210  +50.0%  300  TOTAL\n"),
		  "TOTAL over the cases all have: %s", text);
	free(text);
}

Test(ab, compare_refuses_what_it_cannot_read)
{
	char r1[] = "/tmp/uflush-cmp3.XXXXXX";
	char *other[] = { "compare", r1, NULL };
	char *metric[] = { "compare", "--metric", "bogus", r1, NULL };
	char *missing[] = { "compare", "/nonexistent.json", NULL };
	char *none[] = { "compare", NULL };
	FILE *f;
	int fd, rc;

	cr_assert_eq(bench_compare_main(1, none), 2);
	free(run_compare(2, missing, &rc));
	cr_assert_eq(rc, 1);
	saved_run(r1, "a", "b", 1, 2, true, 3);
	free(run_compare(4, metric, &rc));
	cr_assert_eq(rc, 2, "no such metric");
	fd = open(r1, O_WRONLY | O_TRUNC);
	f = fdopen(fd, "w");
	fprintf(f, "{\"benchmark\": \"jbod\", \"results\": [{\"case\": \"x\", \"A\": {\"mb_per_sec_median\": 1}}]}\n");
	fclose(f);
	free(run_compare(2, other, &rc));
	unlink(r1);
	cr_assert_eq(rc, 2, "not an ab result");
}

/* ------------------------------------------------------------------ */
/* Job files (issue 18)                                                 */

#include "bench/bench.h"

static int job_of(const char *text, struct ab_job *job, char *why,
		  size_t len)
{
	return ab_job_parse(text, "t.job", bench_ab_cmdline.opts, job, why,
			    len);
}

Test(ab, job_file_gives_options_policies_and_cases)
{
	static struct ab_job job;
	char why[400];

	cr_assert_eq(job_of("; fio's comments\n# both kinds\n[global]\n"
			    "policy_a = linux-3.1\npolicy_b=mainline,plugin=./x.so\n"
			    "reps=2\ndev=/dev/sdb,/dev/sdc\ndev=/dev/sdd\nkernel\nforce=0\n\n"
			    "[thresh=8M/loop-1dd-4k-2p-512M-8M:10-X]\n"
			    "[named]\ncase = JBOD-2HDD-hdd-1dd-1M-2p-256M-20:10-X\n",
			    &job, why, sizeof(why)), 0, "%s", why);
	cr_assert_str_eq(job.spec[0], "linux-3.1");
	cr_assert_str_eq(job.spec[1], "mainline,plugin=./x.so");
	cr_assert_eq(job.nr_words, 4);
	cr_assert_str_eq(job.words[0], "--reps=2");
	cr_assert_str_eq(job.words[1], "--dev=/dev/sdb,/dev/sdc");
	cr_assert_str_eq(job.words[2], "--dev=/dev/sdd");
	cr_assert_str_eq(job.words[3], "--kernel", "a flag without a value");
	cr_assert_eq(job.nr_cases, 2);
	cr_assert_str_eq(job.cases[0], "thresh=8M/loop-1dd-4k-2p-512M-8M:10-X");
	cr_assert_str_eq(job.cases[1], "JBOD-2HDD-hdd-1dd-1M-2p-256M-20:10-X");
}

Test(ab, job_file_mistakes_name_their_line)
{
	static struct ab_job job;
	char why[400];

	cr_assert_eq(job_of("[global]\nbogus=1\n", &job, why, sizeof(why)),
		     -EINVAL);
	cr_assert(strstr(why, "t.job:2: unknown key 'bogus'"), "%s", why);
	cr_assert_eq(job_of("reps=2\n", &job, why, sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "t.job:1: 'reps' before any [section]"), "%s", why);
	cr_assert_eq(job_of("[global]\n[loop-1dd-4k-2p-512M-8M:10]\n", &job,
			    why, sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "t.job:2: bad case 'loop-1dd-4k-2p-512M-8M:10'"),
		  "%s", why);
	cr_assert_eq(job_of("[global]\n[c]\nreps=3\n", &job, why, sizeof(why)),
		     -EINVAL);
	cr_assert(strstr(why, "t.job:3: a case section takes case= only"), "%s", why);
	cr_assert_eq(job_of("[global]\npolicy_a=mainline\n", &job, why,
			    sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "give both policy_a and policy_b"), "%s", why);
	cr_assert_eq(job_of("[global]\nkernel=maybe\n", &job, why,
			    sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "t.job:2: kernel takes 1, 0, true or false"), "%s", why);
}

/* bench/jobs/NAME.job reproduces the built-in matrix NAME. */
Test(ab, job_files_reproduce_the_seed_matrices)
{
	static struct ab_job job;
	char path[128], why[400], *text;
	unsigned int i, k, checked = 0, real = 0;

	for (i = 0; ab_matrices[i].name; i++) {
		/* a --sim-only matrix has no devices to name */
		if (!ab_matrices[i].cases)
			continue;
		real++;
		snprintf(path, sizeof(path), "bench/jobs/%s.job",
			 ab_matrices[i].name);
		text = slurp(path);
		if (!text)
			continue;
		cr_assert_eq(job_of(text, &job, why, sizeof(why)), 0, "%s: %s",
			     path, why);
		free(text);
		cr_assert_str_eq(job.spec[0], ab_matrices[i].policy_a, "%s", path);
		cr_assert_str_eq(job.spec[1], ab_matrices[i].policy_b, "%s", path);
		for (k = 0; ab_matrices[i].cases[k]; k++) {
			cr_assert_lt(k, job.nr_cases, "%s", path);
			cr_assert_str_eq(job.cases[k], ab_matrices[i].cases[k],
					 "%s", path);
		}
		cr_assert_eq(k, job.nr_cases, "%s", path);
		checked++;
	}
	if (!checked)
		cr_skip_test("no bench/jobs/ here (run from the repository)");
	cr_assert_eq(checked, real, "a job file for every matrix with real cases");
}

/* ------------------------------------------------------------------ */
/* Plots                                                               */

int bench_plot_render(const char *dir, const char *const *traces,
		      unsigned int n);

static unsigned int lines_of(const char *path, char *first, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned int n = 0;

	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f))
		if (!n++)
			snprintf(first, len, "%s", line);
	fclose(f);
	return n;
}

/* uflush's trace and a kernel's (with the flags column) read alike. */
Test(ab, plot_reads_uflush_and_kernel_trace_lines)
{
	char dir[] = "/tmp/uflush-plot-test.XXXXXX", path[128], first[256];
	const char *traces[1] = { path };
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a.trace", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "    uflush-bench-42 [000]  100.500000: global_dirty_state: dirty=7 writeback=3 unstable=0 bg_thresh=100 thresh=200 limit=250 dirtied=7 written=0\n"
		   "              dd-1234  [001] d..1.   101.000000: global_dirty_state: dirty=9 writeback=1 unstable=0 bg_thresh=100 thresh=200 limit=260 dirtied=9 written=1\n"
		   "              dd-1234  [001] .....   101.250000: balance_dirty_pages: bdi 7:0: limit=260 setpoint=200 dirty=9 bdi_setpoint=100 bdi_dirty=9 dirty_ratelimit=100 task_ratelimit=50 dirtied=1 dirtied_pause=1 paused=0 pause=12\n"
		   "       flush-7:0-77 [000]  101.500000: writeback_single_inode: bdi 7:0: ino=1 state= dirtied_when=1 age=0 index=0 to_write=1024 wrote=256\n"
		   "garbage without brackets\n");
	fclose(f);
	/* gnuplot may be missing here: the data files come first */
	bench_plot_render(dir, traces, 1);
	snprintf(path, sizeof(path), "%s/dirty-A.dat", dir);
	cr_assert_eq(lines_of(path, first, sizeof(first)), 2);
	cr_assert_str_eq(first, "0.000000 7 3 100 200 250\n");
	snprintf(path, sizeof(path), "%s/pauses-A.dat", dir);
	cr_assert_eq(lines_of(path, first, sizeof(first)), 1);
	/* the third column: the writer's colour (the first: 0x1f77b4) */
	cr_assert_str_eq(first, "0.750000 12 2062260\n");
	snprintf(path, sizeof(path), "%s/bw-A.dat", dir);
	cr_assert_geq(lines_of(path, first, sizeof(first)), 1);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	cr_assert_eq(system(path), 0);
}
