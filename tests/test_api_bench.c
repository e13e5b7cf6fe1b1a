// SPDX-License-Identifier: MIT
/*
 * Description: what a benchmark harness needs from the public API
 * (issue 13): a policy spec resolved without a cache, a device's size,
 * per-device busy time and completed write requests with their bytes,
 * per-file pages written, and a timestamp in every stats snapshot; each
 * with its errors for a bad handle or argument.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "uflush.h"

static struct uf_cache *cache;

static void *pattern(size_t len, uint32_t seed)
{
	void *buf = malloc(len);

	cr_assert_not_null(buf);
	tu_fill(buf, len, 0, seed);
	return buf;
}

static void ab_fini(void)
{
	tu_cache_drop(&cache);
	tu_fini();
}

static struct uf_dev *open_dev(void)
{
	struct uf_cache_config cfg;
	const char *path = tu_dev(TU_FILE, TU_DEV_SIZE);
	int ret;

	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = 1024;
	cfg.dirty_writeback_centisecs = 0;
	ret = uf_cache_open(&cfg, &cache);
	cr_assert_eq(ret, 0, "uf_cache_open: %s", strerror(-ret));
	return tu_cache_dev(cache, path, 0);
}

Test(api_bench, policy_resolve_matches_the_open_cache, .fini = ab_fini)
{
	struct uf_cache_config cfg;
	char buf[1024], small[8];

	cr_assert_eq(uf_policy_resolve("linux-3.1,bgthresh=bdi", buf,
				       sizeof(buf)), 0);
	cr_assert(strstr(buf, "linux-3.1: "), "%s", buf);
	cr_assert(strstr(buf, " bgthresh=bdi"), "%s", buf);
	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = 64;
	cfg.policy = "linux-3.1,bgthresh=bdi";
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	cr_assert_str_eq(uf_cache_policy(cache), buf);
	/* NULL: the default, as a cache opened without a policy */
	cr_assert_eq(uf_policy_resolve(NULL, buf, sizeof(buf)), 0);
	cr_assert(!strncmp(buf, "mainline: ", 10), "%s", buf);
	cr_assert_eq(uf_policy_resolve("no-such-preset", buf, sizeof(buf)),
		     -EINVAL);
	cr_assert_eq(uf_policy_resolve("mainline,,", buf, sizeof(buf)),
		     -EINVAL);
	cr_assert_eq(uf_policy_resolve("mainline", small, sizeof(small)),
		     -ERANGE);
	cr_assert_eq(uf_policy_resolve("mainline", NULL, 10), -EINVAL);
	cr_assert_eq(uf_policy_resolve("mainline", buf, 0), -EINVAL);
}

Test(api_bench, dev_size_and_io_counters, .fini = ab_fini)
{
	struct uf_dev *dev = open_dev();
	struct uf_dev_stats s0, s1;
	struct uf_file *f;
	void *buf = pattern(256 << 10, 7);
	uint64_t size = 0;

	cr_assert_eq(uf_dev_size(dev, &size), 0);
	cr_assert_eq(size, TU_DEV_SIZE);
	cr_assert_eq(uf_dev_size(dev, NULL), -EINVAL);
	cr_assert_eq(uf_dev_stats(dev, &s0), 0);
	cr_assert_eq(s0.size_bytes, TU_DEV_SIZE);
	f = tu_file_open(dev, 1, 0, 1 << 20, NULL, NULL);
	cr_assert_eq(uf_pwrite(f, buf, 256 << 10, 0), 256 << 10);
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(uf_dev_stats(dev, &s1), 0);
	cr_assert_geq(s1.write_ios, s0.write_ios + 1);
	/* 64 pages went out: their bytes, in requests of at most that */
	cr_assert_eq(s1.write_bytes - s0.write_bytes, 256 << 10,
		     "wrote %llu bytes",
		     (unsigned long long)(s1.write_bytes - s0.write_bytes));
	cr_assert_geq(s1.io_ticks_ms, s0.io_ticks_ms);
	cr_assert_gt(s1.at_ns, s0.at_ns);
	cr_assert_geq((long)(s1.at_jiffies - s0.at_jiffies), 0);
	free(buf);
}

Test(api_bench, file_pages_written_and_snapshot_times, .fini = ab_fini)
{
	struct uf_dev *dev = open_dev();
	struct uf_file *f, *g;
	struct uf_file_stats fs0, fs1, gs;
	struct uf_cache_stats c0, c1;
	void *buf = pattern(64 << 10, 3);

	f = tu_file_open(dev, 1, 0, 1 << 20, NULL, NULL);
	g = tu_file_open(dev, 2, 1 << 20, 1 << 20, NULL, NULL);
	cr_assert_eq(uf_cache_stats(cache, &c0), 0);
	cr_assert_eq(uf_file_stats(f, &fs0), 0);
	cr_assert_eq(fs0.pages_written, 0);
	cr_assert_eq(uf_pwrite(f, buf, 64 << 10, 0), 64 << 10);
	cr_assert_eq(uf_pwrite(g, buf, 8 << 10, 0), 8 << 10);
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(uf_file_stats(f, &fs1), 0);
	cr_assert_eq(fs1.pages_written, 16, "%lu", fs1.pages_written);
	cr_assert_eq(fs1.nr_pages, 16);
	cr_assert_gt(fs1.at_ns, fs0.at_ns);
	/* g's pages are still dirty: not written */
	cr_assert_eq(uf_file_stats(g, &gs), 0);
	cr_assert_eq(gs.pages_written, 0);
	cr_assert_eq(uf_file_stats(f, NULL), -EINVAL);
	cr_assert_eq(uf_cache_stats(cache, &c1), 0);
	cr_assert_gt(c1.at_ns, c0.at_ns);
	cr_assert_gt(c1.at_jiffies, 0);
	cr_assert_eq(uf_file_close(f), 0);
	cr_assert_eq(uf_file_stats(f, &fs1), -EBADF);
	cr_assert_eq(uf_file_stats(NULL, &fs1), -EBADF);
	cr_assert_eq(uf_dev_size(NULL, NULL), -EBADF);
	free(buf);
}

Test(api_bench, close_discard_throws_dirty_data_away_only_by_name,
     .fini = ab_fini)
{
	const char *path = tu_dev(TU_FILE, TU_DEV_SIZE);
	struct uf_cache_config cfg;
	struct uf_dev *dev;
	struct uf_file *f;
	void *buf = pattern(256 << 10, 2);

	tu_raw_fill(path, 0, 1 << 20, 1);
	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = 1024;
	cfg.dirty_writeback_centisecs = 0;	/* nothing written behind */
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	dev = tu_cache_dev(cache, path, 0);
	f = tu_file_open(dev, 1, 0, 1 << 20, NULL, NULL);
	cr_assert_eq(uf_pwrite(f, buf, 256 << 10, 0), 256 << 10);
	/* not asked for by name: refused, and the cache stays open */
	cr_assert_eq(uf_cache_close_discard(cache, NULL), -EINVAL);
	cr_assert_eq(uf_cache_close_discard(cache, "discard"), -EINVAL);
	cr_assert_eq(uf_file_stats(f, &(struct uf_file_stats){ 0 }), 0);
	cr_assert_eq(uf_cache_close_discard(NULL, UF_DISCARD_DIRTY), -EBADF);
	cr_assert_eq(uf_cache_close_discard(cache, UF_DISCARD_DIRTY), 0);
	cr_assert_eq(uf_cache_stats(cache, &(struct uf_cache_stats){ 0 }),
		     -EBADF);
	cache = NULL;
	/* the device still holds what it held before */
	tu_raw_expect(path, 0, 1 << 20, 1, "after a discarding close");
	free(buf);
}
