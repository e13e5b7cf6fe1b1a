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
#include "fs/writeback.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "lib/radix-tree.h"
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

/*
 * fdatasync while the flusher is filling a request of the same file: it
 * has set PG_writeback on the request's pages, and moves their tags to
 * WRITEBACK only when it closes the request (mpage_writepage,
 * mpage_flush).  The sync walk finds them by their DIRTY/TOWRITE tag, not
 * dirty: it must wait for them, since fdatawait walks the WRITEBACK tag and
 * would not.  Worlds make the moment exact.  A sync task wakes the flusher
 * for the file's one pagevec of dirty pages; page operations cost 200 us,
 * so the flusher has used its tick when its walk reaches the end of the
 * pagevec and gives way there, its request still open.  In some seeds the
 * writer is picked next and its fdatasync runs in that window (the test
 * checks that some do).  When it returns, no page of the file may be dirty
 * or under writeback.  Found by the API fuzzer, on a real device.
 */
#define FR_PAGES	PAGEVEC_SIZE
#define FR_SEEDS	8

struct fr_case {
	struct uf_cache *c;
	int step;
	int ret, sync_ret;
	bool in_window;		/* a page under writeback, still untagged */
	long first_busy;	/* a page dirty or under writeback, or -1 */
	unsigned long flags;
};

#define FR_STEP(n, call) do {						\
	int __r = (call);						\
	if (__r) {							\
		fc->step = (n);						\
		return __r;						\
	}								\
} while (0)

/* Before the fdatasync: is a page of the file in a request being filled? */
static bool fr_window_open(struct uf_file *f)
{
	struct address_space *mapping = uf_file_inode(f)->i_mapping;
	struct uf_cache *c = mapping_cache(mapping);
	struct page *page;
	bool open = false;
	unsigned long i;

	for (i = 0; i < FR_PAGES && !open; i++) {
		page = find_get_page(mapping, i);
		if (!page)
			continue;
		spin_lock(&mapping->tree_lock);
		open = PageWriteback(page) &&
		       !radix_tree_tag_get(&mapping->page_tree, i,
					   PAGECACHE_TAG_WRITEBACK);
		spin_unlock(&mapping->tree_lock);
		put_page(c, page);
	}
	return open;
}

static void fr_busy_page(struct fr_case *fc, struct uf_file *f)
{
	struct address_space *mapping = uf_file_inode(f)->i_mapping;
	struct uf_cache *c = mapping_cache(mapping);
	struct page *page;
	unsigned long i;

	fc->first_busy = -1;
	for (i = 0; i < FR_PAGES && fc->first_busy < 0; i++) {
		page = find_get_page(mapping, i);
		if (!page)
			continue;
		if (PageDirty(page) || PageWriteback(page)) {
			fc->first_busy = (long)i;
			fc->flags = page->flags;
		}
		put_page(c, page);
	}
}

static int fr_sync_fn(void *arg)
{
	struct fr_case *fc = arg;

	fc->sync_ret = uf_sync(fc->c);
	return 0;
}

static int fr_main(void *arg)
{
	struct fr_case *fc = arg;
	struct uf_dev_config dcfg = { .engine = "sim" };
	static uint8_t data[FR_PAGES * TU_PAGE];
	struct uf_cache_config cfg;
	struct uf_sim_task *t;
	struct uf_file *f;
	struct uf_dev *d;
	struct uf_sim *sim;

	FR_STEP(1, uf_sim_create("fs-race", "ssd,size=16m,seed=3", &sim));
	uf_cache_config_init(&cfg);
	cfg.nr_pages = 1024;
	cfg.dirty_writeback_centisecs = 0;	/* no kupdate */
	FR_STEP(2, uf_cache_open(&cfg, &fc->c));
	FR_STEP(3, uf_dev_open(fc->c, "fs-race", &dcfg, &d));
	FR_STEP(4, uf_file_open(d, 1, 0, sizeof(data), NULL, NULL, &f));
	memset(data, 0xa5, sizeof(data));
	FR_STEP(5, uf_pwrite(f, data, sizeof(data), 0) == (ssize_t)sizeof(data)
		   ? 0 : -EIO);
	FR_STEP(6, uf_sim_spawn("fs-race-sync", fr_sync_fn, fc, &t));
	FR_STEP(7, uf_sim_sleep_ns(1000 * 1000));
	fc->in_window = fr_window_open(f);
	fc->ret = uf_fdatasync(f);
	fr_busy_page(fc, f);
	FR_STEP(8, uf_sim_join(t, NULL));
	FR_STEP(9, uf_file_close(f));
	FR_STEP(10, uf_dev_close(d));
	FR_STEP(11, uf_cache_close(fc->c));
	FR_STEP(12, uf_sim_destroy(sim));
	return 0;
}

Test(fsync, fdatasync_waits_for_a_request_being_filled, .timeout = 120)
{
	struct uf_sim_opts o = { .max_ns = 60ull * 1000000000,
				 .ns_per_page_op = 200 * 1000 };
	struct uf_sim_result r;
	unsigned int in_window = 0;
	int ret;

	for (o.seed = 1; o.seed <= FR_SEEDS; o.seed++) {
		struct fr_case fc = { .first_busy = -1 };

		ret = uf_sim_run(&o, fr_main, &fc, &r);
		cr_assert_eq(ret, 0, "uf_sim_run: %s", strerror(-ret));
		cr_assert_eq(r.main_ret, 0, "seed %llu: main_fn: %s at step %d",
			     (unsigned long long)o.seed, strerror(-r.main_ret),
			     fc.step);
		cr_assert_eq(fc.sync_ret, 0, "uf_sync: %s",
			     strerror(-fc.sync_ret));
		cr_assert_eq(fc.ret, 0, "uf_fdatasync: %s", strerror(-fc.ret));
		cr_assert_eq(fc.first_busy, -1, "seed %llu: uf_fdatasync "
			     "returned with page %ld of the file %s (flags "
			     "%#lx): the flusher's request being filled was "
			     "not waited for", (unsigned long long)o.seed,
			     fc.first_busy,
			     fc.flags & (1ul << PG_writeback) ?
			     "under writeback" : "dirty", fc.flags);
		in_window += fc.in_window;
	}
	printf("fsync: %u of %d seeds called fdatasync with the flusher's "
	       "request open\n", in_window, FR_SEEDS);
	cr_assert_gt(in_window, 0, "no seed called fdatasync with the "
		     "flusher's request open: the test no longer reaches the "
		     "race");
}
