// SPDX-License-Identifier: MIT
/*
 * tests/test_uring.c - what the io_uring engine does beyond moving data
 * (io/io_uring.c):
 *  - the frame pool registered (uf_bdev_register_memory): the flusher's
 *    writes and the cache's reads go as WRITEV_FIXED/READV_FIXED, the data
 *    on the device is the data written, and with the registration off the
 *    same run goes as plain writev/readv.  Needs a kernel with the
 *    vectored fixed opcodes (6.15+); elsewhere those tests say so and skip;
 *  - a flush runs on the caller's thread: no io-wq worker is left behind
 *    to wake an idle process every 5 s.
 */
#include <criterion/criterion.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define FX_PAGES	1024
#define FX_FILE		(256UL * 4096)
#define FX_READ_FROM	(192UL * 4096)	/* raw-filled, read through the cache */

static struct uf_cache *cache;

static void fixed_fini(void)
{
	tu_cache_drop(&cache);
	unsetenv("UFLUSH_DISABLE_FIXED_BUFFERS");
	tu_fini();
}

/* Skip unless this kernel's io_uring has READV_FIXED and WRITEV_FIXED. */
static void need_fixed_vectors(void)
{
	struct io_uring_probe *p;
	struct io_uring ring;
	bool ok = false;

	if (io_uring_queue_init(4, &ring, 0))
		tu_skip("no io_uring here");
	p = io_uring_get_probe_ring(&ring);
	if (p) {
		ok = io_uring_opcode_supported(p, 60) &&
		     io_uring_opcode_supported(p, 61);
		io_uring_free_probe(p);
	}
	io_uring_queue_exit(&ring);
	if (!ok)
		tu_skip("this kernel's io_uring has no READV_FIXED/WRITEV_FIXED (Linux 6.15+)");
}

/*
 * Write the first 3/4 of a file through the cache and fsync it; read the
 * last 1/4 (raw-filled beforehand) through the cache.  Returns the
 * device's counters after it.
 */
static void run(const char *path, struct uf_dev_stats *st)
{
	struct uf_cache_config cfg;
	struct uf_dev *d;
	struct uf_file *f;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = FX_PAGES;
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	d = tu_cache_dev(cache, path, 0);
	tu_raw_fill(path, FX_READ_FROM, FX_FILE - FX_READ_FROM, 2);
	f = tu_file_open(d, 1, 0, FX_FILE, NULL, NULL);
	tu_file_write(f, 0, FX_READ_FROM, 0, 1, 12288);
	cr_assert_eq(uf_fsync(f), 0);
	tu_file_expect(f, FX_READ_FROM, FX_FILE - FX_READ_FROM, FX_READ_FROM,
		       2, "read through the cache");
	cr_assert_eq(uf_dev_stats(d, st), 0);
	tu_cache_close(&cache);
	tu_raw_expect(path, 0, FX_READ_FROM, 1, "written through the cache");
}

Test(uring, cache_io_goes_through_the_registered_pool, .fini = fixed_fini)
{
	struct uf_dev_stats st;

	need_fixed_vectors();
	run(tu_dev(TU_LOOP, 4UL << 20), &st);
	cr_log_info("%llu write requests, %llu fixed requests",
		    (unsigned long long)st.write_ios,
		    (unsigned long long)st.fixed_ios);
	cr_assert_gt(st.write_ios, 0);
	/* every write request, and at least one read per read page run */
	cr_expect_geq(st.fixed_ios, st.write_ios + 1,
		      "%llu fixed requests for %llu writes and the reads",
		      (unsigned long long)st.fixed_ios,
		      (unsigned long long)st.write_ios);
}

Test(uring, off_by_environment_the_same_run_pins_per_request,
     .fini = fixed_fini)
{
	struct uf_dev_stats st;

	setenv("UFLUSH_DISABLE_FIXED_BUFFERS", "1", 1);
	run(tu_dev(TU_LOOP, 4UL << 20), &st);
	cr_assert_gt(st.write_ios, 0);
	cr_expect_eq(st.fixed_ios, 0);
}

/* A buffer outside the registered memory still works: uf_bdev_rw() with a
 * heap buffer on a device whose queue has the pool registered. */
Test(uring, a_buffer_outside_the_pool_goes_unregistered, .fini = fixed_fini)
{
	struct uf_bdev_io_stats io0, io1;
	struct uf_bdev *b;
	struct iovec v;
	char *pool, *buf;

	need_fixed_vectors();
	tu_dev(TU_LOOP, 4UL << 20);
	b = tu_open("io_uring", 8, 0, NULL);
	pool = tu_alloc((1UL << 20) + 8192);	/* registered: 1 MiB of it */
	buf = tu_alloc(8192);
	cr_assert_eq(uf_bdev_register_memory(b, pool, 1UL << 20), 0);
	cr_assert_eq(uf_bdev_io_stats(b, &io0), 0);
	/* inside, straddling the end, outside */
	tu_fill(pool, 4096, 0, 3);
	v = (struct iovec){ pool, 4096 };
	cr_assert_eq(uf_bdev_rw(b, UF_IO_WRITE, 0, &v, 1), 4096);
	tu_fill(buf, 8192, 4096, 3);
	v = (struct iovec){ buf, 8192 };
	cr_assert_eq(uf_bdev_rw(b, UF_IO_WRITE, 4096, &v, 1), 8192);
	v = (struct iovec){ pool + (1UL << 20) - 4096, 8192 };
	cr_assert_eq(uf_bdev_rw(b, UF_IO_READ, 0, &v, 1), 8192,
		     "a buffer half in the pool");
	cr_assert_eq(uf_bdev_io_stats(b, &io1), 0);
	cr_expect_eq(io1.nr_fixed - io0.nr_fixed, 1,
		     "only the request inside the pool is a fixed one");
	tu_raw_expect(tu.td.path, 0, 12288, 3, "mixed requests");
	free(buf);
	free(pool);
}

Test(uring, a_flush_leaves_no_io_wq_worker_behind, .fini = fixed_fini)
{
	struct uf_bdev *b;
	unsigned int i;

	tu_dev(TU_LOOP, 4UL << 20);
	b = tu_open("io_uring", 8, 0, NULL);
	cr_assert_eq(tu_nr_iou_workers(), 0, "a worker before any flush");
	for (i = 0; i < 4; i++)
		cr_assert_eq(uf_bdev_flush(b), 0);
	cr_expect_eq(tu_nr_iou_workers(), 0,
		     "a flush started an io-wq worker (it would wake every 5 s)");
}
