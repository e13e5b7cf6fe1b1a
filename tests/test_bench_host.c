// SPDX-License-Identifier: MIT
/*
 * Description: the host helpers of uflush-bench (bench/host.c) put the
 * host back as they found it, and do their cost arithmetic right.
 *
 * The dirty limits are set and restored in a directory that stands in
 * for /proc/sys/vm (the kernel zeroes the ratio of a pair when its bytes
 * are written, and the test does the same, so that a restore that forgot
 * the ratio is seen); a memory cgroup is made, entered, left and removed
 * (as root, where a memory controller is mounted); the per-GB and bound
 * arithmetic of issue 11's CPU target, the paired ratios, and the copy
 * cost growing with the pages copied.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/harness.h"

/* ------------------------------------------------------------------ */
/* A stand-in for /proc/sys/vm                                         */

static char vm_dir[64];

static void knob_put(const char *knob, unsigned long v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", vm_dir, knob);
	f = fopen(path, "w");
	cr_assert(f, "%s: %s", path, strerror(errno));
	fprintf(f, "%lu\n", v);
	fclose(f);
}

static unsigned long knob_get(const char *knob)
{
	char path[128];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", vm_dir, knob);
	f = fopen(path, "r");
	cr_assert(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fscanf(f, "%lu", &v), 1);
	fclose(f);
	return v;
}

static void vm_setup(unsigned long ratio, unsigned long bytes,
		     unsigned long bg_ratio, unsigned long bg_bytes)
{
	snprintf(vm_dir, sizeof(vm_dir), "/tmp/uflush-vm.XXXXXX");
	cr_assert(mkdtemp(vm_dir));
	knob_put("dirty_ratio", ratio);
	knob_put("dirty_bytes", bytes);
	knob_put("dirty_background_ratio", bg_ratio);
	knob_put("dirty_background_bytes", bg_bytes);
}

static void vm_teardown(void)
{
	static const char *const knobs[] = {
		"dirty_ratio", "dirty_bytes", "dirty_background_ratio",
		"dirty_background_bytes",
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", vm_dir, knobs[i]);
		unlink(path);
	}
	rmdir(vm_dir);
}

/* What the kernel does when a byte knob is written. */
static void kernel_zeroes_ratios(void)
{
	knob_put("dirty_ratio", 0);
	knob_put("dirty_background_ratio", 0);
}

Test(bench_host, dirty_limits_set_then_ratios_restored)
{
	struct bench_dirty d = { 0 };

	vm_setup(20, 0, 10, 0);
	d.vm_dir = vm_dir;
	cr_assert_eq(bench_dirty_set(&d, 53686272, 26841088), 0, "%s", d.why);
	cr_assert(d.applied);
	cr_assert_eq(d.dirty_bytes, 53686272);
	cr_assert_eq(knob_get("dirty_bytes"), 53686272);
	cr_assert_eq(knob_get("dirty_background_bytes"), 26841088);
	kernel_zeroes_ratios();

	cr_assert_eq(bench_dirty_restore(&d), 0);
	cr_assert_eq(knob_get("dirty_ratio"), 20);
	cr_assert_eq(knob_get("dirty_background_ratio"), 10);
	cr_assert(!d.saved);
	cr_assert_eq(bench_dirty_restore(&d), 0, "a second restore is a no-op");
	vm_teardown();
}

Test(bench_host, dirty_bytes_restored_where_they_were_set)
{
	struct bench_dirty d = { 0 };

	vm_setup(0, 1ul << 30, 10, 0);
	d.vm_dir = vm_dir;
	cr_assert_eq(bench_dirty_set(&d, 8192, 4096), 0, "%s", d.why);
	kernel_zeroes_ratios();
	/* a second set keeps the first saved values */
	cr_assert_eq(bench_dirty_set(&d, 16384, 8192), 0, "%s", d.why);
	cr_assert_eq(knob_get("dirty_bytes"), 16384);
	cr_assert_eq(bench_dirty_restore(&d), 0);
	cr_assert_eq(knob_get("dirty_bytes"), 1ul << 30);
	cr_assert_eq(knob_get("dirty_background_ratio"), 10);
	vm_teardown();
}

Test(bench_host, dirty_limits_that_cannot_be_read_say_why)
{
	struct bench_dirty d = { .vm_dir = "/nonexistent/uflush-vm" };

	cr_assert_eq(bench_dirty_set(&d, 8192, 4096), -ENOENT);
	cr_assert(!d.applied && !d.saved);
	cr_assert(strstr(d.why, "cannot read vm.dirty_ratio"), "%s", d.why);
}

/* ------------------------------------------------------------------ */
/* Memory cgroup                                                       */

static bool in_group(const char *dir)
{
	const char *name = strrchr(dir, '/') + 1;
	char line[1024];
	bool yes = false;
	FILE *f = fopen("/proc/self/cgroup", "r");

	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		yes |= strstr(line, name) != NULL;
	fclose(f);
	return yes;
}

Test(bench_host, memcg_is_entered_left_and_removed)
{
	struct bench_memcg m;
	char name[64];
	void *p;

	if (geteuid())
		cr_skip_test("needs root to make a cgroup");
	snprintf(name, sizeof(name), "uflush-test-%d", (int)getpid());
	if (bench_memcg_create(&m, name, 64u << 20))
		cr_skip_test("no memory cgroup here: %s", m.why);
	cr_assert(m.version == 1 || m.version == 2);
	cr_assert_eq(access(m.dir, F_OK), 0);
	cr_assert_eq(bench_memcg_enter(&m), 0, "%s", m.why);
	cr_assert(in_group(m.dir));
	p = malloc(8u << 20);
	cr_assert(p);
	memset(p, 1, 8u << 20);		/* charged to the group */
	cr_assert_geq(bench_memcg_peak(&m), 8u << 20);
	free(p);
	cr_assert_eq(bench_memcg_leave(&m), 0);
	cr_assert(!in_group(m.dir));
	bench_memcg_destroy(&m);
	cr_assert_neq(access(m.dir, F_OK), 0, "the group is removed");
}

/* ------------------------------------------------------------------ */
/* Costs                                                               */

Test(bench_host, cpu_bound_is_twice_fio_plus_the_copy)
{
	/* issue 11's example: fio 0.05 s/GB, a copy per page 0.06 s/GB */
	cr_assert_float_eq(bench_per_gb(0.5, 2000000000ull), 0.25, 1e-12);
	cr_assert(isnan(bench_per_gb(1, 0)));
	cr_assert_float_eq(bench_cpu_bound(0.05, 0.06), 0.22, 1e-12);
	cr_assert(isnan(bench_cpu_bound(NAN, 0.06)));
	/* uflush at 0.37 s/GB is 1.68 x that bound */
	cr_assert_float_eq(0.37 / bench_cpu_bound(0.05, 0.06), 1.6818, 1e-3);
}

Test(bench_host, paired_ratios_pair_by_repetition)
{
	struct bench_samples a = { 3, { 2, 4, 9 } }, b = { 3, { 1, 2, 3 } };
	struct bench_samples c = { 2, { 4, 0 } };
	struct bench_stats st;

	bench_paired_stats(&a, &b, &st);
	cr_assert_eq(st.n, 3);
	cr_assert_float_eq(st.median, 2, 1e-12);
	cr_assert_float_eq(st.min, 2, 1e-12);
	cr_assert_float_eq(st.max, 3, 1e-12);
	/* only the reps both have, and none over a zero */
	bench_paired_stats(&a, &c, &st);
	cr_assert_eq(st.n, 1);
	cr_assert_float_eq(st.median, 0.5, 1e-12);
}

Test(bench_host, copy_cost_grows_with_the_pages)
{
	void *src = bench_random_buffer(1u << 20);
	double few, many;

	cr_assert(src);
	cr_assert_eq(bench_copy_cost(src, 100, 10, 1u << 20, &few), -EINVAL);
	cr_assert_eq(bench_copy_cost(src, 1u << 20, 8192, bench_copy_wset(),
				     &few), 0);
	cr_assert_eq(bench_copy_cost(src, 1u << 20, 8 * 8192,
				     bench_copy_wset(), &many), 0);
	cr_assert_gt(few, 0);
	cr_assert_gt(many, 2 * few, "8x the pages: %.4f s vs %.4f s", many,
		     few);
	cr_assert_gt(bench_copy_wset(), bench_l2_bytes());
	free(src);
}

Test(bench_host, permutation_draws_each_page_once_from_its_seed)
{
	enum { N = 5000, K = 1000 };
	uint32_t *p = bench_permutation(N, N, 1), *q, *r;
	unsigned char *seen = calloc(N, 1);
	unsigned int i, same = 0, moved = 0;

	cr_assert(p && seen);
	for (i = 0; i < N; i++) {
		cr_assert_lt(p[i], N);
		cr_assert_not(seen[p[i]], "page %u twice", p[i]);
		seen[p[i]] = 1;
		moved += p[i] != i;
	}
	cr_assert_gt(moved, N * 9 / 10, "shuffled: %u of %d moved", moved, N);
	/* the same seed gives the same order, another seed another */
	q = bench_permutation(N, K, 1);
	r = bench_permutation(N, K, 2);
	cr_assert(q && r);
	for (i = 0; i < K; i++) {
		cr_assert_eq(q[i], p[i]);
		same += r[i] == p[i];
	}
	cr_assert_lt(same, K / 10);
	cr_assert_null(bench_permutation(0, 0, 1));
	free(p);
	free(q);
	free(r);
	free(seen);
}

Test(bench_host, dirty_limits_that_cannot_be_written_are_left_alone)
{
	struct bench_dirty d = { 0 };
	bool dropped = false;
	char path[128];

	vm_setup(20, 0, 10, 0);
	d.vm_dir = vm_dir;
	snprintf(path, sizeof(path), "%s/dirty_background_bytes", vm_dir);
	cr_assert_eq(chmod(path, 0444), 0);
	if (!geteuid()) {
		/* root writes a read-only file: be nobody for a moment */
		cr_assert_eq(chmod(vm_dir, 0755), 0);
		cr_assert_eq(setresuid(65534, 65534, 0), 0);
		dropped = true;
	}
	cr_assert_eq(bench_dirty_set(&d, 8192, 4096), -EACCES, "%s", d.why);
	if (dropped)
		cr_assert_eq(setresuid(0, 0, 0), 0);
	cr_assert(!d.applied && !d.saved && !d.changed);
	cr_assert(strstr(d.why, "Permission denied"), "%s", d.why);
	cr_assert_eq(knob_get("dirty_ratio"), 20);
	vm_teardown();
}
