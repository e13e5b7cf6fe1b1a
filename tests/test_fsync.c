// SPDX-License-Identifier: MIT
/*
 * tests/test_fsync.c - uf_fsync, uf_fdatasync and uf_sync flush the
 * device's volatile cache, once, after the data they wrote is done.
 *
 * A flush is the whole difference between "handed to the device" and
 * "durable", and nothing in the data read back shows whether it happened:
 * these tests count what reaches a shaped loop device instead.  The shaping
 * wrapper stamps each write completion and each flush submission with one
 * sequence counter (struct uf_shape_counters), so a flush sent before the
 * writes it should cover had completed shows as a smaller stamp.  Writes
 * get an added latency so that such a flush would have time to overtake
 * them.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/bug.h"
#include "mm/backing-dev.h"
#include "testutil.h"
#include "uflush-internal.h"
#include "uflush.h"

#define FS_DEV_SIZE	(16ull << 20)
#define FS_OFF		(1ull << 20)	/* where the file starts */
#define FS_PAGES	8		/* written per test, one request each */
#define FS_LATENCY_US	20000		/* long enough to be overtaken */

/* One test's resources, released by fs_fini() whatever happened. */
static struct {
	struct uf_cache *cache;
	struct uf_testdev td2;
	bool td2_made;
} fs;

static void fs_fini(void)
{
	tu_cache_drop(&fs.cache);
	if (fs.td2_made)
		uf_testdev_destroy(&fs.td2);
	fs.td2_made = false;
	tu_fini();
}

/* A cache that writes nothing on its own, one page per request. */
static void fs_open_cache(void)
{
	struct uf_cache_config cfg;
	int ret;

	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = 1024;
	cfg.max_io_pages = 1;
	cfg.dirty_writeback_centisecs = 0;
	ret = uf_cache_open(&cfg, &fs.cache);
	cr_assert_eq(ret, 0, "uf_cache_open: %s", strerror(-ret));
}

/* A shaped device whose requests each take FS_LATENCY_US. */
static struct uf_dev *fs_dev(const char *path)
{
	struct uf_io_shape shape = { .latency_us = FS_LATENCY_US };
	struct uf_dev *d = tu_cache_dev(fs.cache, path, UF_DEV_SHAPED);

	cr_assert_eq(uf_dev_set_shape(d, &shape), 0);
	return d;
}

/* The cache, a shaped loop device and a file on it, dirty with seed. */
static struct uf_file *fs_setup(struct uf_dev **dp, uint32_t seed)
{
	const char *path = tu_dev(TU_LOOP, FS_DEV_SIZE);
	const size_t len = FS_PAGES * TU_PAGE;
	struct uf_file *f;

	fs_open_cache();
	*dp = fs_dev(path);
	f = tu_file_open(*dp, 1, FS_OFF, len, NULL, NULL);
	tu_file_write(f, 0, len, FS_OFF, seed, len);
	return f;
}

static void fs_counters(struct uf_dev *d, struct uf_shape_counters *c)
{
	int ret = uf_bdev_shape_counters(uf_dev_bdi(d)->bdev, c);

	cr_assert_eq(ret, 0, "uf_bdev_shape_counters: %s", strerror(-ret));
}

/*
 * Between a and b the device saw nr_writes writes complete and exactly
 * one flush, submitted after the last of those writes had completed.
 */
static void fs_expect_one_flush_after(const struct uf_shape_counters *a,
				      const struct uf_shape_counters *b,
				      uint64_t nr_writes, const char *what)
{
	cr_assert_eq(b->writes_done - a->writes_done, nr_writes,
		     "%s: %llu writes completed, want %llu", what,
		     (unsigned long long)(b->writes_done - a->writes_done),
		     (unsigned long long)nr_writes);
	cr_assert_eq(b->flushes - a->flushes, 1,
		     "%s issued %llu device flushes, want 1", what,
		     (unsigned long long)(b->flushes - a->flushes));
	cr_assert_eq(b->flushes_done - a->flushes_done, 1,
		     "%s returned before its flush completed", what);
	cr_assert_gt(b->last_flush_seq, b->last_write_done_seq,
		     "%s flushed (stamp %llu) before its last write completed (stamp %llu)",
		     what, (unsigned long long)b->last_flush_seq,
		     (unsigned long long)b->last_write_done_seq);
}

typedef int (*fs_sync_fn)(struct uf_file *f);

/* sync(f), with d's counters before it in a and after it in b. */
static int fs_counted(fs_sync_fn sync, struct uf_file *f, struct uf_dev *d,
		      struct uf_shape_counters *a, struct uf_shape_counters *b)
{
	int ret;

	fs_counters(d, a);
	ret = sync(f);
	fs_counters(d, b);
	return ret;
}

static void fs_flushes_after_data(fs_sync_fn sync, const char *name)
{
	struct uf_shape_counters a, b;
	struct uf_file *f;
	struct uf_dev *d;
	int ret;

	f = fs_setup(&d, 7);
	ret = fs_counted(sync, f, d, &a, &b);
	cr_assert_eq(ret, 0, "%s: %s", name, strerror(-ret));
	fs_expect_one_flush_after(&a, &b, FS_PAGES, name);
	tu_raw_expect(tu.td.path, FS_OFF, FS_PAGES * TU_PAGE, 7, name);

	/* nothing dirty: no write, still the one flush */
	ret = fs_counted(sync, f, d, &a, &b);
	cr_assert_eq(ret, 0, "%s of a clean file: %s", name, strerror(-ret));
	fs_expect_one_flush_after(&a, &b, 0, name);
	cr_assert_eq(uf_file_close(f), 0);
}

Test(fsync, fsync_flushes_once_after_its_writes, .fini = fs_fini)
{
	fs_flushes_after_data(uf_fsync, "uf_fsync");
}

Test(fsync, fdatasync_flushes_once_after_its_writes, .fini = fs_fini)
{
	fs_flushes_after_data(uf_fdatasync, "uf_fdatasync");
}

/* uf_sync flushes every device of the cache, a clean one too. */
Test(fsync, sync_flushes_each_device, .fini = fs_fini)
{
	struct uf_shape_counters a1, b1, a2, b2;
	struct uf_dev *d1, *d2;
	struct uf_file *f;
	int ret;

	f = fs_setup(&d1, 8);
	/* a loop device if one can be had, else a file: both are devices */
	ret = uf_testdev_create(FS_DEV_SIZE, 0, &fs.td2);
	cr_assert_eq(ret, 0, "a second test device: %s", strerror(-ret));
	fs.td2_made = true;
	d2 = fs_dev(fs.td2.path);
	fs_counters(d1, &a1);
	fs_counters(d2, &a2);
	ret = uf_sync(fs.cache);
	cr_assert_eq(ret, 0, "uf_sync: %s", strerror(-ret));
	fs_counters(d1, &b1);
	fs_counters(d2, &b2);
	fs_expect_one_flush_after(&a1, &b1, FS_PAGES, "uf_sync (dirty device)");
	fs_expect_one_flush_after(&a2, &b2, 0, "uf_sync (clean device)");
	tu_raw_expect(tu.td.path, FS_OFF, FS_PAGES * TU_PAGE, 8, "uf_sync");
	cr_assert_eq(uf_file_close(f), 0);
}

/* The device fails its flushes, and only them (any eio_len will do). */
static void fs_fail_flushes(struct uf_dev *d)
{
	struct uf_io_shape shape = {
		.latency_us = FS_LATENCY_US,
		.eio_ops = 1u << UF_IO_FLUSH,
		.eio_len = 1,
	};

	cr_assert_eq(uf_dev_set_shape(d, &shape), 0);
}

static void fs_flush_error_reaches(fs_sync_fn sync, const char *name)
{
	struct uf_io_shape healed = { 0 };
	struct uf_shape_counters a, b;
	struct uf_file *f;
	struct uf_dev *d;
	int ret;

	f = fs_setup(&d, 9);
	fs_fail_flushes(d);
	ret = fs_counted(sync, f, d, &a, &b);
	cr_assert_eq(b.flushes_failed - a.flushes_failed, 1,
		     "%s: %llu flushes failed, want 1", name,
		     (unsigned long long)(b.flushes_failed - a.flushes_failed));
	cr_assert_eq(ret, -EIO, "%s with a failing flush: %d, want -EIO",
		     name, ret);
	fs_expect_one_flush_after(&a, &b, FS_PAGES, name);
	/* the data itself was written */
	tu_raw_expect(tu.td.path, FS_OFF, FS_PAGES * TU_PAGE, 9, name);

	/* a clean file: the flush alone decides */
	ret = sync(f);
	cr_assert_eq(ret, -EIO, "%s of a clean file, failing flush: %d",
		     name, ret);
	cr_assert_eq(uf_dev_set_shape(d, &healed), 0);
	ret = sync(f);
	cr_assert_eq(ret, 0, "%s after the device healed: %d", name, ret);
	cr_assert_eq(uf_file_close(f), 0);
	cr_assert_eq(uf_bug_count(), 0, "a WARN/BUG fired");
}

Test(fsync, fsync_reports_flush_error, .fini = fs_fini)
{
	fs_flush_error_reaches(uf_fsync, "uf_fsync");
}

Test(fsync, fdatasync_reports_flush_error, .fini = fs_fini)
{
	fs_flush_error_reaches(uf_fdatasync, "uf_fdatasync");
}

Test(fsync, sync_reports_flush_error, .fini = fs_fini)
{
	struct uf_file *f;
	struct uf_dev *d;
	int ret;

	f = fs_setup(&d, 10);
	fs_fail_flushes(d);
	ret = uf_sync(fs.cache);
	cr_assert_eq(ret, -EIO, "uf_sync with a failing flush: %d", ret);
	tu_raw_expect(tu.td.path, FS_OFF, FS_PAGES * TU_PAGE, 10, "uf_sync");
	cr_assert_eq(uf_file_close(f), 0);
}
