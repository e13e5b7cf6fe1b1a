// SPDX-License-Identifier: MIT
/*
 * tests/test_queue_limits.c - write requests as large as the device queue
 * takes unsplit, and as many in flight as it has tags (issue 17, findings 2
 * and 3: uflush sent 512 KiB requests, 64 at a time, where the kernel
 * sent 1.1-1.2 MiB ones, up to nr_requests, on the same loop device).
 *
 * Description: on a scratch loop device (limits from sysfs: max_sectors_kb,
 * max_segments, max_segment_size, nr_requests):
 *  - a streaming write through a cache whose frames are known to be
 *    physically contiguous (huge-page backed, read from /proc/self/pagemap;
 *    skipped with the reason where the frame numbers cannot be read) goes
 *    in requests larger than max_segments single frames could carry, and
 *    no larger than max_sectors_kb; no io-wq worker appears, so no request
 *    was split by the block layer;
 *  - the same write with the contiguity map dropped (every frame a
 *    segment): requests of at most max_segments pages;
 *  - a device opened without a queue depth gets the queue's nr_requests.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "io/io.h"
#include "mm/mm.h"
#include "testutil.h"
#include "uflush-internal.h"
#include "uflush.h"

#define QL_DEV_SIZE	(128ull << 20)
#define QL_WRITE	(64ull << 20)
#define QL_POOL		32768ul		/* 128 MiB: never recycled here */

static struct uf_cache *ql_cache;

static void ql_fini(void)
{
	tu_cache_drop(&ql_cache);
	tu_fini();
}

static unsigned long ql_sysfs(const char *path, const char *name)
{
	char p[128];
	struct stat st;
	unsigned long v = 0;
	FILE *f;

	cr_assert_eq(stat(path, &st), 0);
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/%s",
		 major(st.st_rdev), minor(st.st_rdev), name);
	f = fopen(p, "r");
	cr_assert_not_null(f, "%s", p);
	cr_assert_eq(fscanf(f, "%lu", &v), 1);
	fclose(f);
	return v;
}

/* The share of frames that follow the one before in physical memory. */
static double ql_contig_share(struct uf_cache *c)
{
	unsigned long i, n = 0;

	for (i = 0; i < c->pool.nr; i++)
		n += !!(c->pool.phys_contig[i / BITS_PER_LONG] &
			(1ul << (i % BITS_PER_LONG)));
	return (double)n / (double)c->pool.nr;
}

/* Stream QL_WRITE bytes and fsync; the mean request in bytes. */
static double ql_stream(const char *path, bool contig)
{
	struct uf_cache_config cfg;
	struct uf_dev_stats st;
	struct uf_cache *c;
	struct uf_dev *d;
	struct uf_file *f;

	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = QL_POOL;
	cr_assert_eq(uf_cache_open(&cfg, &ql_cache), 0);
	c = uf_cache_obj(ql_cache);
	if (contig && !c->pool.phys_contig)
		tu_skip("no frame known contiguous in physical memory "
			"(/proc/self/pagemap gives frame numbers to root only)");
	if (contig && ql_contig_share(c) < 0.5)
		tu_skip("only %.0f%% of the frames follow each other in physical "
			"memory here (a fragmented host): requests cannot grow",
			100 * ql_contig_share(c));
	if (!contig) {
		/* white box: as a process that cannot read pagemap */
		free(c->pool.phys_contig);
		c->pool.phys_contig = NULL;
	}
	d = tu_cache_dev(ql_cache, path, 0);
	f = tu_file_open(d, 1, 0, QL_WRITE, NULL, NULL);
	tu_file_write(f, 0, QL_WRITE, 0, 3, 1u << 20);
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(uf_dev_stats(d, &st), 0);
	cr_assert_gt(st.write_ios, 0);
	tu_cache_close(&ql_cache);
	tu_raw_expect(path, 0, QL_WRITE, 3, "the streamed data");
	return (double)st.write_bytes / (double)st.write_ios;
}

Test(queue_limits, contiguous_frames_make_requests_of_max_sectors,
     .fini = ql_fini, .timeout = 120)
{
	const char *path = tu_dev(TU_LOOP, QL_DEV_SIZE);
	unsigned long kb = ql_sysfs(path, "max_sectors_kb");
	unsigned long segs = ql_sysfs(path, "max_segments");
	double mean;

	mean = ql_stream(path, true);
	cr_log_info("mean request %.0f KiB (max_sectors_kb %lu, max_segments "
		    "%lu)", mean / 1024, kb, segs);
	cr_assert_leq(mean, kb * 1024.0, "a request over max_sectors_kb");
	cr_assert_gt(mean, segs * 4096.0 * 1.25, "requests of %.0f KiB: no "
		     "larger than %lu single frames (every frame a segment)",
		     mean / 1024, segs);
	cr_assert_eq(tu_nr_iou_workers(), 0, "a request was split (punted "
		     "to an io-wq worker)");
}

Test(queue_limits, unknown_contiguity_is_a_segment_a_frame, .fini = ql_fini,
     .timeout = 120)
{
	const char *path = tu_dev(TU_LOOP, QL_DEV_SIZE);
	unsigned long kb = ql_sysfs(path, "max_sectors_kb");
	unsigned long segs = ql_sysfs(path, "max_segments");
	unsigned long max = segs < kb / 4 ? segs : kb / 4;
	double mean;

	mean = ql_stream(path, false);
	cr_log_info("mean request %.0f KiB, at most %lu pages", mean / 1024,
		    max);
	cr_assert_leq(mean, max * 4096.0, "more segments than max_segments");
	cr_assert_gt(mean, max * 4096.0 * 0.75, "requests of %.0f KiB: not "
		     "filled to the segment limit", mean / 1024);
	cr_assert_eq(tu_nr_iou_workers(), 0, "a request was split");
}

Test(queue_limits, queue_depth_is_the_devices_nr_requests, .fini = ql_fini)
{
	const char *path = tu_dev(TU_LOOP, QL_DEV_SIZE);
	unsigned long nr = ql_sysfs(path, "nr_requests");
	struct uf_bdev_limits lim;
	struct uf_bdev *b;
	unsigned int qd;

	b = tu_open("io_uring", 0, 0, NULL);
	cr_assert_eq(uf_bdev_queue_depth(b, &qd), 0);
	cr_assert_eq(uf_bdev_limits(b, &lim), 0);
	cr_assert_eq(lim.nr_requests, nr);
	cr_assert_eq(qd, nr, "queue depth %u, the queue's nr_requests %lu",
		     qd, nr);
}
