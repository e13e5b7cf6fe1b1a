// SPDX-License-Identifier: MIT
/*
 * tests/test_api.c - argument checking of the public API (include/uflush.h).
 *
 * Description: every public call is given bad arguments - NULL handles and
 * pointers, closed handles of each kind (cache, device, file, page), bad
 * configurations, impossible ranges, bad flags - and must return the
 * negative errno the header promises and change nothing: after each
 * refused call the test checks that the cache counters, the open files and
 * the bytes (in the cache, on the device, in a neighbouring file) are what
 * they were.  Devices are scratch files opened O_DIRECT (tu_dev(TU_FILE)),
 * which every machine can make; the loop device cases are in
 * test_integration.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/bug.h"
#include "testutil.h"
#include "uflush.h"

#define AX_FILL_LEN	(4ull << 20)	/* seed 1 over the first 4 MiB */
#define AX_OFF		(1ull << 20)	/* where the test files start */

/* One test's objects, released by ax_fini() whatever happened. */
static struct {
	struct uf_cache *cache;
	struct uf_cache *cache2;
	struct uf_dev *dev;
	const char *path;
	char tmpdir[256];
	char fifo[300];
	long null_ret;		/* what a NULL handle gave first */
	unsigned int wi_sync, wi_nosync;	/* write_inode calls */
} ax;

static void ax_fini(void)
{
	tu_cache_drop(&ax.cache2);
	tu_cache_drop(&ax.cache);
	if (ax.fifo[0])
		unlink(ax.fifo);
	if (ax.tmpdir[0])
		rmdir(ax.tmpdir);
	ax.fifo[0] = ax.tmpdir[0] = '\0';
	tu_fini();
}

/* A cache of nr_pages frames over a scratch file whose first 4 MiB hold
 * the pattern of seed 1; the device in ax.dev (shaped if asked). */
static void ax_open(size_t nr_pages, unsigned int dev_flags)
{
	struct uf_cache_config cfg;
	int ret;

	ax.path = tu_dev(TU_FILE, TU_DEV_SIZE);
	tu_raw_fill(ax.path, 0, AX_FILL_LEN, 1);
	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = nr_pages;
	cfg.dirty_writeback_centisecs = 0;	/* nothing behind our back */
	ret = uf_cache_open(&cfg, &ax.cache);
	cr_assert_eq(ret, 0, "uf_cache_open: %s", strerror(-ret));
	ax.dev = tu_cache_dev(ax.cache, ax.path, dev_flags);
}

static struct uf_file *ax_file(uint64_t ino, uint64_t off, uint64_t len,
			       const struct uf_file_ops *ops)
{
	return tu_file_open(ax.dev, ino, off, len, ops, NULL);
}

/* The usual start: a 64-page cache and file 1 at AX_OFF, len bytes long. */
static struct uf_file *ax_open_file(uint64_t len,
				    const struct uf_file_ops *ops)
{
	ax_open(64, 0);
	return ax_file(1, AX_OFF, len, ops);
}

static void ax_close_all(void)
{
	tu_cache_close(&ax.cache);
}

static void snap(struct uf_cache_stats *st)
{
	cr_assert_eq(uf_cache_stats(ax.cache, st), 0);
}

/* The counters a refused call must not move. */
static void expect_same(const struct uf_cache_stats *a, const char *what)
{
	struct uf_cache_stats b;

	snap(&b);
	cr_assert_eq(a->nr_free, b.nr_free, "%s changed nr_free: %lu -> %lu",
		     what, a->nr_free, b.nr_free);
	tu_expect_stats_same(ax.cache, a, what);
}

/*
 * A NULL handle.  The header says "-EINVAL for a NULL or malformed
 * argument, -EBADF for a handle that is closed", which a NULL handle fits
 * both ways; either is accepted, but every call must give the same one.
 */
static void expect_null_handle(long ret, const char *call)
{
	cr_assert(ret == -EINVAL || ret == -EBADF,
		  "%s with a NULL handle returned %ld, want -EINVAL or -EBADF",
		  call, ret);
	if (!ax.null_ret)
		ax.null_ret = ret;
	cr_assert_eq(ret, ax.null_ret,
		     "%s with a NULL handle returned %s, other calls %s", call,
		     ret == -EINVAL ? "-EINVAL" : "-EBADF",
		     ax.null_ret == -EINVAL ? "-EINVAL" : "-EBADF");
}

/* ------------------------------------------------------------------ */
/* Caches                                                              */

Test(api, config_init, .fini = ax_fini)
{
	struct uf_cache_config cfg;

	cr_assert_eq(uf_cache_config_init(NULL), -EINVAL);
	memset(&cfg, 0xa5, sizeof(cfg));
	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cr_assert_eq(cfg.nr_pages, 65536);
	cr_assert_null(cfg.policy);
	cr_assert_eq(cfg.hz, 1000);
	cr_assert_eq(cfg.max_io_pages, 0);	/* the device queue's limits */
	cr_assert_eq(cfg.dirty_ratio, 20);
	cr_assert_eq(cfg.dirty_background_ratio, 10);
	cr_assert_eq(cfg.dirty_bytes, 0);
	cr_assert_eq(cfg.dirty_background_bytes, 0);
	cr_assert_eq(cfg.dirty_expire_centisecs, 3000);
	cr_assert_eq(cfg.dirty_writeback_centisecs, 500);
	cr_assert_null(cfg.trace_path);
}

/* A 64-page cache's configuration, with hz unless 0 (the default). */
static void small_config(struct uf_cache_config *cfg, unsigned int hz)
{
	cr_assert_eq(uf_cache_config_init(cfg), 0);
	cfg->nr_pages = 64;
	if (hz)
		cfg->hz = hz;
}

/*
 * uf_cache_open() where it should fail: its result, with no cache left
 * open either way; a failure must have reset *out to NULL.
 */
static int open_refused(const struct uf_cache_config *cfg, const char *what)
{
	struct uf_cache *c = (struct uf_cache *)cfg;	/* must be reset */
	int ret = uf_cache_open(cfg, &c);

	if (ret == 0)
		uf_cache_close(c);
	else
		cr_assert_null(c, "uf_cache_open with %s left *out set", what);
	return ret;
}

/* uf_cache_open() into ax.cache that must succeed, then a clean close. */
static void open_then_close(const struct uf_cache_config *cfg,
			    const char *what)
{
	int ret = uf_cache_open(cfg, &ax.cache);

	cr_assert_eq(ret, 0, "uf_cache_open %s: %s", what, strerror(-ret));
	ax_close_all();
}

static void bad_config(void (*change)(struct uf_cache_config *),
		       const char *what)
{
	struct uf_cache_config cfg;
	int ret;

	/* hz 250: a leaked hz claim shows in the next open */
	small_config(&cfg, 250);
	change(&cfg);
	ret = open_refused(&cfg, what);
	cr_assert_eq(ret, -EINVAL, "uf_cache_open with %s: %d, want -EINVAL",
		     what, ret);
}

static void cfg_nr_pages_0(struct uf_cache_config *c) { c->nr_pages = 0; }
static void cfg_dirty_ratio(struct uf_cache_config *c) { c->dirty_ratio = 101; }
static void cfg_bg_ratio(struct uf_cache_config *c)
{
	c->dirty_background_ratio = 101;
}
static void cfg_policy(struct uf_cache_config *c) { c->policy = "no-such"; }
static void cfg_policy_empty(struct uf_cache_config *c) { c->policy = ""; }
static void cfg_hz_0(struct uf_cache_config *c) { c->hz = 0; }
static void cfg_max_io_big(struct uf_cache_config *c)
{
	c->max_io_pages = 1025;
}

Test(api, cache_open_bad_configs, .fini = ax_fini)
{
	struct uf_cache_config cfg;

	bad_config(cfg_nr_pages_0, "nr_pages 0");
	bad_config(cfg_dirty_ratio, "dirty_ratio 101");
	bad_config(cfg_bg_ratio, "dirty_background_ratio 101");
	bad_config(cfg_policy, "an unknown policy");
	bad_config(cfg_policy_empty, "an empty policy name");
	bad_config(cfg_hz_0, "hz 0");
	bad_config(cfg_max_io_big, "max_io_pages 1025");

	/* nothing was claimed: a cache with another hz opens, and the
	 * named default policy is accepted */
	small_config(&cfg, 1000);
	cfg.policy = "linux-3.2";
	open_then_close(&cfg, "after refused ones");
}

Test(api, cache_open_null_out, .fini = ax_fini)
{
	struct uf_cache_config cfg;

	small_config(&cfg, 0);
	cr_assert_eq(uf_cache_open(&cfg, NULL), -EINVAL);
	cr_assert_eq(uf_cache_open(NULL, NULL), -EINVAL);
	cfg.hz = 300;	/* the refused opens claimed no hz */
	open_then_close(&cfg, "hz 300 after refused ones");
}

/* A cache that fails late (after its hz is chosen) must release it too. */
Test(api, cache_open_failing_trace_path_claims_nothing, .fini = ax_fini)
{
	struct uf_cache_config cfg;
	int ret;

	small_config(&cfg, 300);
	cfg.trace_path = "/nonexistent-uflush-dir/trace";
	ret = open_refused(&cfg, "an impossible trace_path");
	cr_assert_lt(ret, 0, "uf_cache_open with an impossible trace_path succeeded");
	cfg.trace_path = NULL;
	cfg.hz = 1000;
	open_then_close(&cfg, "after a failed one");
}

Test(api, second_cache_with_another_hz_is_einval, .fini = ax_fini)
{
	struct uf_cache_config cfg;
	int ret;

	small_config(&cfg, 0);
	cr_assert_eq(uf_cache_open(&cfg, &ax.cache), 0);
	cfg.hz = 250;
	ret = open_refused(&cfg, "hz 250 beside hz 1000");
	cr_assert_eq(ret, -EINVAL, "second cache with hz 250 while one with 1000 is open: %d",
		     ret);
	cfg.hz = 1000;
	cr_assert_eq(uf_cache_open(&cfg, &ax.cache2), 0,
		     "a second cache with the same hz");
	cr_assert_neq(ax.cache, ax.cache2);
	/* one closed: the other still holds hz 1000 */
	cr_assert_eq(uf_cache_close(ax.cache2), 0);
	ax.cache2 = NULL;
	cfg.hz = 250;
	ret = open_refused(&cfg, "hz 250 beside hz 1000");
	cr_assert_eq(ret, -EINVAL, "hz 250 while a hz-1000 cache is still open: %d",
		     ret);
	ax_close_all();
	/* none open: any hz again */
	open_then_close(&cfg, "hz 250 once no cache is open");
}

Test(api, closed_cache_is_ebadf, .fini = ax_fini)
{
	struct uf_cache_stats st;
	struct uf_cache *c;
	struct uf_dev *d = (struct uf_dev *)&st;
	unsigned long v = 12345;

	ax_open(64, 0);
	c = ax.cache;
	ax_close_all();
	cr_assert_eq(uf_cache_close(c), -EBADF);
	cr_assert_eq(uf_cache_set_tunable(c, "dirty_ratio", 10), -EBADF);
	cr_assert_eq(uf_cache_get_tunable(c, "dirty_ratio", &v), -EBADF);
	cr_assert_eq(v, 12345, "a refused get wrote *value");
	cr_assert_eq(uf_sync(c), -EBADF);
	cr_assert_eq(uf_cache_stats(c, &st), -EBADF);
	cr_assert_eq(uf_dev_open(c, ax.path, NULL, &d), -EBADF);
	cr_assert_null(d);
	/* a device and a file closed with their cache */
	cr_assert_eq(uf_dev_close(ax.dev), -EBADF);
}

Test(api, handles_closed_with_their_cache_are_ebadf, .fini = ax_fini)
{
	struct uf_page *p = NULL;
	struct uf_file *f;
	struct uf_dev_stats ds;
	char buf[64];

	f = ax_open_file(8 * TU_PAGE, NULL);
	cr_assert_eq(uf_page_get(f, 0, 0, &p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	ax_close_all();
	cr_assert_eq(uf_dev_stats(ax.dev, &ds), -EBADF);
	cr_assert_eq(uf_dev_close(ax.dev), -EBADF);
	cr_assert_eq(uf_pread(f, buf, sizeof(buf), 0), -EBADF);
	cr_assert_eq(uf_pwrite(f, buf, sizeof(buf), 0), -EBADF);
	cr_assert_eq(uf_fsync(f), -EBADF);
	cr_assert_eq(uf_file_close(f), -EBADF);
	cr_assert_eq(uf_page_put(p), -EBADF);
	cr_assert_eq(uf_page_set_dirty(p), -EBADF);
	cr_assert_null(uf_page_data(p));
}

/* ------------------------------------------------------------------ */
/* NULL handles and pointers                                           */

Test(api, null_handles, .fini = ax_fini)
{
	struct uf_io_shape shape = { 0 };
	struct uf_cache_stats st;
	struct uf_dev_stats ds;
	struct uf_dev *d = (struct uf_dev *)&ds;
	struct uf_file *f = (struct uf_file *)&ds;
	struct uf_page *p = (struct uf_page *)&ds;
	unsigned long v = 7;
	char buf[16];

	ax.path = tu_dev(TU_FILE, TU_DEV_SIZE);
	expect_null_handle(uf_cache_close(NULL), "uf_cache_close");
	expect_null_handle(uf_cache_set_tunable(NULL, "dirty_ratio", 1),
			   "uf_cache_set_tunable");
	expect_null_handle(uf_cache_get_tunable(NULL, "dirty_ratio", &v),
			   "uf_cache_get_tunable");
	cr_assert_eq(v, 7);
	expect_null_handle(uf_sync(NULL), "uf_sync");
	expect_null_handle(uf_cache_stats(NULL, &st), "uf_cache_stats");
	expect_null_handle(uf_dev_open(NULL, ax.path, NULL, &d),
			   "uf_dev_open");
	cr_assert_null(d);
	expect_null_handle(uf_dev_close(NULL), "uf_dev_close");
	expect_null_handle(uf_dev_set_shape(NULL, &shape), "uf_dev_set_shape");
	expect_null_handle(uf_dev_stall(NULL, 1), "uf_dev_stall");
	expect_null_handle(uf_dev_hold_umount(NULL), "uf_dev_hold_umount");
	expect_null_handle(uf_dev_release_umount(NULL),
			   "uf_dev_release_umount");
	expect_null_handle(uf_dev_stats(NULL, &ds), "uf_dev_stats");
	expect_null_handle(uf_file_open(NULL, 1, 0, TU_PAGE, NULL, NULL, &f),
			   "uf_file_open");
	cr_assert_null(f);
	expect_null_handle(uf_file_close(NULL), "uf_file_close");
	expect_null_handle(uf_pwrite(NULL, buf, sizeof(buf), 0), "uf_pwrite");
	expect_null_handle(uf_pread(NULL, buf, sizeof(buf), 0), "uf_pread");
	expect_null_handle(uf_fsync(NULL), "uf_fsync");
	expect_null_handle(uf_fdatasync(NULL), "uf_fdatasync");
	expect_null_handle(uf_file_mark_inode_dirty(NULL, UF_I_DIRTY_SYNC),
			   "uf_file_mark_inode_dirty");
	expect_null_handle(uf_page_get(NULL, 0, 0, &p), "uf_page_get");
	cr_assert_null(p);
	expect_null_handle(uf_page_set_dirty(NULL), "uf_page_set_dirty");
	expect_null_handle(uf_page_put(NULL), "uf_page_put");
	cr_assert_null(uf_page_data(NULL));
}

/* Handles that were never returned by uflush: not crashing is the point. */
Test(api, foreign_handles_are_ebadf, .fini = ax_fini)
{
	static char junk[65536] __attribute__((aligned(64)));
	struct uf_cache_stats st;
	char buf[16];

	memset(junk, 0x5a, sizeof(junk));
	cr_assert_eq(uf_cache_stats((struct uf_cache *)junk, &st), -EBADF);
	cr_assert_eq(uf_sync((struct uf_cache *)junk), -EBADF);
	cr_assert_eq(uf_dev_close((struct uf_dev *)junk), -EBADF);
	cr_assert_eq(uf_fsync((struct uf_file *)junk), -EBADF);
	cr_assert_eq(uf_pread((struct uf_file *)junk, buf, 16, 0), -EBADF);
	cr_assert_eq(uf_page_put((struct uf_page *)junk), -EBADF);
	cr_assert_eq(uf_page_set_dirty((struct uf_page *)junk), -EBADF);
	cr_assert_null(uf_page_data((struct uf_page *)junk));
}

Test(api, null_pointers_with_good_handles, .fini = ax_fini)
{
	struct uf_cache_stats st0;
	struct uf_file *f, *g = NULL;
	unsigned long v;
	struct uf_dev *d = NULL;

	ax_open(64, UF_DEV_SHAPED);
	f = ax_file(1, AX_OFF, 8 * TU_PAGE, NULL);
	tu_file_write(f, 0, 100, AX_OFF, 2, SIZE_MAX);
	cr_assert_eq(uf_fsync(f), 0);
	snap(&st0);

	cr_assert_eq(uf_cache_set_tunable(ax.cache, NULL, 1), -EINVAL);
	cr_assert_eq(uf_cache_get_tunable(ax.cache, NULL, &v), -EINVAL);
	cr_assert_eq(uf_cache_get_tunable(ax.cache, "dirty_ratio", NULL),
		     -EINVAL);
	cr_assert_eq(uf_cache_stats(ax.cache, NULL), -EINVAL);
	cr_assert_eq(uf_dev_open(ax.cache, NULL, NULL, &d), -EINVAL);
	cr_assert_null(d);
	cr_assert_eq(uf_dev_open(ax.cache, ax.path, NULL, NULL), -EINVAL);
	cr_assert_eq(uf_dev_stats(ax.dev, NULL), -EINVAL);
	cr_assert_eq(uf_dev_set_shape(ax.dev, NULL), -EINVAL);
	cr_assert_eq(uf_file_open(ax.dev, 2, 0, TU_PAGE, NULL, NULL, NULL),
		     -EINVAL);
	cr_assert_eq(uf_pwrite(f, NULL, 10, 0), -EINVAL);
	cr_assert_eq(uf_pread(f, NULL, 10, 0), -EINVAL);
	cr_assert_eq(uf_page_get(f, 0, 0, NULL), -EINVAL);
	cr_assert_eq(uf_pwrite(f, NULL, 0, 0), 0, "a zero-length write");
	cr_assert_eq(uf_pread(f, NULL, 0, 0), 0, "a zero-length read");
	expect_same(&st0, "calls with NULL pointers");
	tu_file_expect(f, 0, 100, AX_OFF, 2, "the file after them");

	/* the refused uf_file_open(ino 2) holds no range nor ino */
	cr_assert_eq(uf_file_open(ax.dev, 2, 0, TU_PAGE, NULL, NULL, &g), 0);
	cr_assert_eq(uf_file_close(g), 0);
	cr_assert_eq(uf_file_close(f), 0);
	cr_assert_eq(uf_dev_close(ax.dev), 0,
		     "a refused call left the device busy");
	ax_close_all();
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */

static void dev_open_refused(const char *path, const struct uf_dev_config *cfg,
			     int want, const char *what)
{
	struct uf_dev *d = (struct uf_dev *)&d;
	int ret;

	ret = uf_dev_open(ax.cache, path, cfg, &d);
	if (ret == 0)
		uf_dev_close(d);
	cr_assert_eq(ret, want, "uf_dev_open(%s): %d (%s), want %d (%s)",
		     what, ret, strerror(-ret), want, strerror(-want));
	cr_assert_null(d, "uf_dev_open(%s) left *out set", what);
}

Test(api, dev_open_bad_paths_and_configs, .fini = ax_fini)
{
	struct uf_dev_config cfg = { 0 };
	struct uf_cache_stats st0;
	struct uf_dev_stats ds;
	struct uf_file *f;

	ax_open(64, 0);
	snap(&st0);
	snprintf(ax.tmpdir, sizeof(ax.tmpdir), "/var/tmp/uflush-api.XXXXXX");
	cr_assert_not_null(mkdtemp(ax.tmpdir));
	snprintf(ax.fifo, sizeof(ax.fifo), "%s/fifo", ax.tmpdir);
	cr_assert_eq(mkfifo(ax.fifo, 0600), 0, "mkfifo: %s", strerror(errno));

	dev_open_refused("/nonexistent-uflush/dev", NULL, -ENOENT,
			 "a missing path");
	dev_open_refused(ax.tmpdir, NULL, -ENODEV, "a directory");
	dev_open_refused(ax.fifo, NULL, -ENODEV, "a fifo");
	dev_open_refused("/dev/null", NULL, -ENODEV, "a character device");
	cfg.flags = 1u << 7;
	dev_open_refused(ax.path, &cfg, -EINVAL, "unknown flags");
	cfg.flags = 0;
	cfg.engine = "no-such-engine";
	dev_open_refused(ax.path, &cfg, -EINVAL, "an unknown engine");
	expect_same(&st0, "refused uf_dev_open calls");

	/* the first device is untouched and works */
	cr_assert_eq(uf_dev_stats(ax.dev, &ds), 0);
	cr_assert_eq(ds.write_errors, 0);
	f = ax_file(1, AX_OFF, 4 * TU_PAGE, NULL);
	tu_file_write(f, 10, 5000, AX_OFF + 10, 3, SIZE_MAX);
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(uf_file_close(f), 0);
	tu_raw_expect_any(ax.path, AX_OFF + 10, 5000, 3, "written after");
	ax_close_all();
}

Test(api, closed_dev_is_ebadf, .fini = ax_fini)
{
	struct uf_io_shape shape = { 0 };
	struct uf_dev_stats ds;
	struct uf_file *f = (struct uf_file *)&ds;
	struct uf_dev *d;

	ax_open(64, UF_DEV_SHAPED);
	d = ax.dev;
	cr_assert_eq(uf_dev_close(d), 0);
	cr_assert_eq(uf_dev_close(d), -EBADF, "a second uf_dev_close");
	cr_assert_eq(uf_dev_set_shape(d, &shape), -EBADF);
	cr_assert_eq(uf_dev_stall(d, 1), -EBADF);
	cr_assert_eq(uf_dev_hold_umount(d), -EBADF);
	cr_assert_eq(uf_dev_release_umount(d), -EBADF);
	cr_assert_eq(uf_dev_stats(d, &ds), -EBADF);
	cr_assert_eq(uf_file_open(d, 1, 0, TU_PAGE, NULL, NULL, &f), -EBADF);
	cr_assert_null(f);
	/* the cache lives on and can open the device again */
	cr_assert_eq(uf_dev_open(ax.cache, ax.path, NULL, &ax.dev), 0);
	ax_close_all();
}

Test(api, dev_calls_that_do_not_apply, .fini = ax_fini)
{
	struct uf_io_shape shape = { .eio_len = TU_PAGE };

	ax_open(64, 0);
	cr_assert_eq(uf_dev_set_shape(ax.dev, &shape), -EINVAL,
		     "a shape on a device opened without UF_DEV_SHAPED");
	cr_assert_eq(uf_dev_release_umount(ax.dev), -EINVAL,
		     "releasing s_umount that is not held");
	cr_assert_eq(uf_dev_hold_umount(ax.dev), 0);
	cr_assert_eq(uf_dev_hold_umount(ax.dev), -EBUSY,
		     "holding s_umount twice");
	cr_assert_eq(uf_dev_release_umount(ax.dev), 0);
	cr_assert_eq(uf_dev_release_umount(ax.dev), -EINVAL);
	ax_close_all();
}

Test(api, dev_close_with_open_files_is_ebusy, .fini = ax_fini)
{
	struct uf_dev_stats ds;
	struct uf_file *f;

	f = ax_open_file(16 * TU_PAGE, NULL);
	tu_file_write(f, 0, 3 * TU_PAGE, AX_OFF, 4, SIZE_MAX);
	cr_assert_eq(uf_dev_close(ax.dev), -EBUSY);
	cr_assert_eq(uf_dev_close(ax.dev), -EBUSY, "a second time");
	/* the device, its flusher and the file all still work */
	cr_assert_eq(uf_dev_stats(ax.dev, &ds), 0);
	tu_file_write(f, 5 * TU_PAGE + 7, 1000, AX_OFF + 5 * TU_PAGE + 7, 4,
		      SIZE_MAX);
	cr_assert_eq(uf_fsync(f), 0);
	tu_raw_expect(ax.path, AX_OFF, 3 * TU_PAGE, 4, "data of the busy device");
	tu_file_expect(f, 0, 3 * TU_PAGE, AX_OFF, 4, "read after -EBUSY");
	cr_assert_eq(uf_file_close(f), 0);
	cr_assert_eq(uf_dev_close(ax.dev), 0);
	ax_close_all();
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

static void file_open_refused(uint64_t ino, uint64_t off, uint64_t len,
			      int want, const char *what)
{
	struct uf_file *f = (struct uf_file *)&f;
	int ret;

	ret = uf_file_open(ax.dev, ino, off, len, NULL, NULL, &f);
	if (ret == 0)
		uf_file_close(f);
	cr_assert_eq(ret, want,
		     "uf_file_open(%s: ino %llu, off %llu, len %llu): %d (%s), want %d (%s)",
		     what, (unsigned long long)ino, (unsigned long long)off,
		     (unsigned long long)len, ret, strerror(-ret), want,
		     strerror(-want));
	cr_assert_null(f, "uf_file_open(%s) left *out set", what);
}

Test(api, file_open_bad_ranges, .fini = ax_fini)
{
	const uint64_t size = TU_DEV_SIZE;
	struct uf_file *a, *b, *c, *d;

	ax_open(64, 0);
	file_open_refused(1, 1, TU_PAGE, -EINVAL, "offset 1");
	file_open_refused(1, 512, TU_PAGE, -EINVAL, "offset 512");
	file_open_refused(1, AX_OFF + 4095, TU_PAGE, -EINVAL, "offset 4095");
	file_open_refused(1, AX_OFF, 0, -EINVAL, "length 0");
	file_open_refused(1, size, 1, -ERANGE, "at the end");
	file_open_refused(1, 0, size + 1, -ERANGE, "one byte too long");
	file_open_refused(1, size - TU_PAGE, TU_PAGE + 1, -ERANGE,
			  "rounded up past the end");
	file_open_refused(1, size + (1ull << 30), TU_PAGE, -ERANGE,
			  "far beyond");
	file_open_refused(1, UINT64_MAX & ~4095ull, TU_PAGE, -ERANGE,
			  "offset + length overflows");
	file_open_refused(1, 0, 1ull << 62, -ERANGE, "length 2^62");

	/* the whole device and its last page are fine */
	a = ax_file(1, 0, size, NULL);
	cr_assert_eq(uf_file_close(a), 0);
	a = ax_file(1, size - TU_PAGE, TU_PAGE, NULL);
	cr_assert_eq(uf_file_close(a), 0);

	/* a: [AX_OFF, +64 KiB); b: 4097 bytes = two pages after a gap */
	a = ax_file(1, AX_OFF, 64 << 10, NULL);
	b = ax_file(2, AX_OFF + (128 << 10), TU_PAGE + 1, NULL);
	file_open_refused(1, AX_OFF + (1 << 20), TU_PAGE, -EEXIST,
			  "ino of a");
	file_open_refused(2, 0, TU_PAGE, -EEXIST, "ino of b");
	file_open_refused(3, AX_OFF, 64 << 10, -EBUSY, "a's range");
	file_open_refused(3, AX_OFF + TU_PAGE, TU_PAGE, -EBUSY, "inside a");
	file_open_refused(3, AX_OFF - TU_PAGE, 2 * TU_PAGE, -EBUSY,
			  "across a's start");
	file_open_refused(3, AX_OFF + (60 << 10), 8 << 10, -EBUSY,
			  "across a's end");
	file_open_refused(3, 0, 4 << 20, -EBUSY, "around a and b");
	file_open_refused(3, AX_OFF - TU_PAGE, TU_PAGE + 1, -EBUSY,
			  "rounded up into a");
	file_open_refused(3, AX_OFF + (128 << 10) + TU_PAGE, TU_PAGE, -EBUSY,
			  "b's second page (its length was rounded up)");

	/* touching is not overlapping */
	c = ax_file(3, AX_OFF - TU_PAGE, TU_PAGE, NULL);
	d = ax_file(4, AX_OFF + (64 << 10), TU_PAGE, NULL);
	cr_assert_eq(uf_file_close(d), 0);
	d = ax_file(4, AX_OFF + (128 << 10) + 2 * TU_PAGE, TU_PAGE, NULL);

	/* the refused opens took no slot: four files, then none */
	cr_assert_eq(uf_file_close(a), 0);
	cr_assert_eq(uf_file_close(b), 0);
	cr_assert_eq(uf_file_close(c), 0);
	cr_assert_eq(uf_dev_close(ax.dev), -EBUSY);
	cr_assert_eq(uf_file_close(d), 0);
	/* an ino is free again once closed */
	a = ax_file(1, AX_OFF, TU_PAGE, NULL);
	cr_assert_eq(uf_file_close(a), 0);
	cr_assert_eq(uf_dev_close(ax.dev), 0,
		     "refused uf_file_open calls left the device busy");
	ax_close_all();
}

Test(api, closed_file_is_ebadf, .fini = ax_fini)
{
	struct uf_cache_stats st0;
	struct uf_file *f;

	f = ax_open_file(8 * TU_PAGE, NULL);
	tu_file_write(f, 0, 100, AX_OFF, 5, SIZE_MAX);
	cr_assert_eq(uf_file_close(f), 0);
	snap(&st0);
	tu_expect_file_ebadf(f);
	expect_same(&st0, "calls on a closed file");
	tu_raw_expect_any(ax.path, AX_OFF, 100, 5, "data written before close");
	tu_raw_expect_any(ax.path, AX_OFF + 100, 8 * TU_PAGE - 100, 1,
		      "rest of the closed file");
	ax_close_all();
}

/*
 * A refused write writes nothing: not in the cache, not on the device, not
 * in the file next door.  a = [AX_OFF, +32 KiB), b right after it.
 */
Test(api, pwrite_past_the_end_is_efbig_and_writes_nothing, .fini = ax_fini)
{
	const uint64_t len = 32 << 10;
	struct uf_cache_stats st0;
	struct uf_file *a, *b;
	char *junk;

	a = ax_open_file(len, NULL);
	b = ax_file(2, AX_OFF + len, len, NULL);
	tu_file_write(b, 0, len, AX_OFF + len, 6, SIZE_MAX);
	cr_assert_eq(uf_fsync(b), 0);
	tu_raw_expect(ax.path, AX_OFF + len, len, 6, "neighbour b, written");
	/* a's pages cached */
	tu_file_expect(a, 0, len, AX_OFF, 1, "a before");
	snap(&st0);

	junk = malloc(2 * TU_PAGE);
	cr_assert(junk);
	tu_fill(junk, 2 * TU_PAGE, 0, 99);
	cr_assert_eq(uf_pwrite(a, junk, 20, len - 10), -EFBIG,
		     "straddling the end");
	cr_assert_eq(uf_pwrite(a, junk, 1, len), -EFBIG, "at the end");
	cr_assert_eq(uf_pwrite(a, junk, 2 * TU_PAGE, len - TU_PAGE + 1),
		     -EFBIG, "a page and a bit into b");
	cr_assert_eq(uf_pwrite(a, junk, len + 1, 0), -EFBIG,
		     "longer than the file");
	cr_assert_eq(uf_pwrite(a, junk, 1, UINT64_MAX), -EFBIG,
		     "offset UINT64_MAX");
	cr_assert_eq(uf_pwrite(a, junk, TU_PAGE, UINT64_MAX - 100), -EFBIG,
		     "offset + length overflows");
	cr_assert_eq(uf_pwrite(a, junk, SIZE_MAX, 0), -EFBIG, "SIZE_MAX bytes");
	cr_assert_eq(uf_pwrite(a, junk, (size_t)SSIZE_MAX + 1, 0), -EFBIG,
		     "SSIZE_MAX + 1 bytes");
	free(junk);
	expect_same(&st0, "refused writes");

	cr_assert_eq(uf_sync(ax.cache), 0);
	tu_file_expect(a, 0, len, AX_OFF, 1, "a after refused writes");
	tu_file_expect(b, 0, len, AX_OFF + len, 6,
		       "b after refused writes to a");
	tu_raw_expect(ax.path, AX_OFF, len, 1, "a on the device");
	tu_raw_expect(ax.path, AX_OFF + len, len, 6, "b on the device");
	tu_raw_expect(ax.path, AX_OFF + 2 * len, 64 << 10, 1,
		      "after b on the device");
	ax_close_all();
	/* and nothing left to be written at close either */
	tu_raw_expect(ax.path, AX_OFF, len, 1, "a after close");
	tu_raw_expect(ax.path, AX_OFF + len, len, 6, "b after close");
}

Test(api, pread_past_the_end_is_short, .fini = ax_fini)
{
	const uint64_t len = 8 * TU_PAGE;
	unsigned char buf[256];
	struct uf_file *f;
	unsigned int i;
	ssize_t n;

	f = ax_open_file(len, NULL);
	memset(buf, 0xee, sizeof(buf));
	n = uf_pread(f, buf, sizeof(buf), len - 40);
	cr_assert_eq(n, 40, "a read straddling the end: %zd, want 40", n);
	cr_assert_eq(tu_check(buf, 40, AX_OFF + len - 40, 1), -1);
	for (i = 40; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xee, "byte %u past a short read written",
			     i);
	memset(buf, 0xee, sizeof(buf));
	cr_assert_eq(uf_pread(f, buf, sizeof(buf), len), 0, "at the end");
	cr_assert_eq(uf_pread(f, buf, sizeof(buf), len + 1), 0);
	cr_assert_eq(uf_pread(f, buf, sizeof(buf), UINT64_MAX), 0);
	cr_assert_eq(uf_pread(f, buf, sizeof(buf), UINT64_MAX - 10), 0);
	cr_assert_eq(uf_pread(f, buf, 0, 0), 0, "zero bytes");
	for (i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xee, "a zero-byte read wrote byte %u",
			     i);
	/* a length that does not fit in ssize_t is still just short */
	n = uf_pread(f, buf, SIZE_MAX, len - 100);
	cr_assert_eq(n, 100, "uf_pread(SIZE_MAX bytes, 100 before the end): %zd",
		     n);
	cr_assert_eq(tu_check(buf, 100, AX_OFF + len - 100, 1), -1);
	ax_close_all();
}

static int count_write_inode(struct uf_file *file, void *priv, int sync)
{
	(void)file;
	(void)priv;
	if (sync)
		__atomic_add_fetch(&ax.wi_sync, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&ax.wi_nosync, 1, __ATOMIC_RELAXED);
	return 0;
}

Test(api, mark_inode_dirty_bad_flags, .fini = ax_fini)
{
	static const struct uf_file_ops ops = {
		.write_inode = count_write_inode,
	};
	static const unsigned int bad[] = {
		0, 1u << 2, 1u << 7, UF_I_DIRTY_SYNC | (1u << 3),
		UF_I_DIRTY_DATASYNC | (1u << 31), ~0u,
	};
	struct uf_file *f;
	size_t i;

	f = ax_open_file(8 * TU_PAGE, &ops);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(uf_file_mark_inode_dirty(f, bad[i]), -EINVAL,
			     "flags 0x%x", bad[i]);
	/* none of them dirtied the inode */
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(ax.wi_sync + ax.wi_nosync, 0,
		     "write_inode called after refused uf_file_mark_inode_dirty");
	cr_assert_eq(uf_file_mark_inode_dirty(f, UF_I_DIRTY_SYNC |
					      UF_I_DIRTY_DATASYNC), 0);
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(ax.wi_sync, 1, "write_inode after a good mark");
	ax_close_all();
}

/* ------------------------------------------------------------------ */
/* Pages                                                               */

static void page_get_refused(struct uf_file *f, unsigned long index,
			     unsigned int flags, int want, const char *what)
{
	struct uf_page *p = (struct uf_page *)&p;
	int ret;

	ret = uf_page_get(f, index, flags, &p);
	if (ret == 0)
		uf_page_put(p);
	cr_assert_eq(ret, want, "uf_page_get(%s: index %lu, flags 0x%x): %d (%s), want %d (%s)",
		     what, index, flags, ret, strerror(-ret), want,
		     strerror(-want));
	cr_assert_null(p, "uf_page_get(%s) left *out set", what);
}

Test(api, page_get_bad_arguments, .fini = ax_fini)
{
	struct uf_cache_stats st0, st;
	struct uf_page *p, *q;
	struct uf_file *f;

	ax_open(64, 0);
	/* 5 pages: 4 and a byte, rounded up */
	f = ax_file(1, AX_OFF, 4 * TU_PAGE + 1, NULL);
	snap(&st0);
	cr_assert_eq(st0.nr_file_pages, 0);
	page_get_refused(f, 5, 0, -EFBIG, "one past the end");
	page_get_refused(f, 5, UF_PAGE_WRITE | UF_PAGE_NOREAD, -EFBIG,
			 "past the end, to write");
	page_get_refused(f, ULONG_MAX, 0, -EFBIG, "ULONG_MAX");
	page_get_refused(f, 0, 1u << 3, -EINVAL, "unknown flag");
	page_get_refused(f, 0, ~0u, -EINVAL, "all flags");
	page_get_refused(f, 3, UF_PAGE_NOCREATE, -ENOENT, "not cached");
	page_get_refused(f, 3, UF_PAGE_NOCREATE | UF_PAGE_WRITE, -ENOENT,
			 "not cached, to write");
	expect_same(&st0, "refused uf_page_get calls");

	/* the last page exists; NOCREATE then finds it */
	cr_assert_eq(uf_page_get(f, 4, 0, &p), 0);
	cr_assert_eq(tu_check(uf_page_data(p), TU_PAGE, AX_OFF + 4 * TU_PAGE,
			      1), -1, "page 4 is not the device's");
	cr_assert_eq(uf_page_get(f, 4, UF_PAGE_NOCREATE, &q), 0);
	cr_assert_eq(uf_page_data(p), uf_page_data(q),
		     "NOCREATE found another page");
	cr_assert_eq(uf_page_put(q), 0);
	cr_assert_eq(uf_page_put(p), 0);
	snap(&st);
	cr_assert_eq(st.nr_file_pages, 1);
	cr_assert_eq(st.nr_dirty, 0);
	ax_close_all();
}

Test(api, page_set_dirty_without_write_is_eperm, .fini = ax_fini)
{
	struct uf_cache_stats st0, st;
	struct uf_page *p;
	struct uf_file *f;

	f = ax_open_file(8 * TU_PAGE, NULL);
	cr_assert_eq(uf_page_get(f, 2, 0, &p), 0);
	snap(&st0);
	cr_assert_eq(uf_page_set_dirty(p), -EPERM);
	cr_assert_eq(uf_page_set_dirty(p), -EPERM, "a second time");
	expect_same(&st0, "a refused uf_page_set_dirty");
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(uf_fsync(f), 0);
	expect_same(&st0, "fsync after a refused uf_page_set_dirty");

	/* the same page taken to write can be dirtied */
	cr_assert_eq(uf_page_get(f, 2, UF_PAGE_WRITE, &p), 0);
	memset(uf_page_data(p), 0x77, 10);
	cr_assert_eq(uf_page_set_dirty(p), 0);
	snap(&st);
	cr_assert_eq(st.nr_dirty, st0.nr_dirty + 1);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(uf_fsync(f), 0);
	ax_close_all();
}

/* A page handle is "closed" by uf_page_put(). */
Test(api, page_after_put_is_ebadf, .fini = ax_fini)
{
	struct uf_cache_stats st0;
	struct uf_page *p, *q;
	struct uf_file *f;
	int ret;

	f = ax_open_file(8 * TU_PAGE, NULL);
	cr_assert_eq(uf_page_get(f, 1, 0, &p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	snap(&st0);
	ret = uf_page_put(p);
	cr_assert_eq(ret, -EBADF, "a second uf_page_put: %d", ret);
	expect_same(&st0, "a second uf_page_put");
	/* the page is still cached and intact */
	cr_assert_eq(uf_page_get(f, 1, UF_PAGE_NOCREATE, &q), 0);
	cr_assert_eq(tu_check(uf_page_data(q), TU_PAGE, AX_OFF + TU_PAGE, 1),
		     -1);
	cr_assert_eq(uf_page_put(q), 0);
	ax_close_all();
}

Test(api, page_set_dirty_after_put_is_ebadf, .fini = ax_fini)
{
	struct uf_cache_stats st0;
	struct uf_page *p;
	struct uf_file *f;
	int ret;

	f = ax_open_file(8 * TU_PAGE, NULL);
	cr_assert_eq(uf_page_get(f, 1, UF_PAGE_WRITE, &p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	snap(&st0);
	ret = uf_page_set_dirty(p);
	cr_assert_eq(ret, -EBADF, "uf_page_set_dirty after put: %d (%s)", ret,
		     strerror(-ret));
	expect_same(&st0, "uf_page_set_dirty after put");
	ax_close_all();
}

Test(api, page_of_a_closed_file_is_ebadf, .fini = ax_fini)
{
	struct uf_page *p;
	struct uf_file *f;

	f = ax_open_file(8 * TU_PAGE, NULL);
	cr_assert_eq(uf_page_get(f, 3, 0, &p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(uf_file_close(f), 0);
	cr_assert_eq(uf_page_put(p), -EBADF);
	cr_assert_eq(uf_page_set_dirty(p), -EBADF);
	cr_assert_null(uf_page_data(p), "uf_page_data of a dropped page");
	ax_close_all();
}

/* ------------------------------------------------------------------ */
/* Tunables                                                            */

static const char *const tunables[] = {
	"dirty_ratio", "dirty_background_ratio", "dirty_bytes",
	"dirty_background_bytes", "dirty_expire_centisecs",
	"dirty_writeback_centisecs",
};

static unsigned long get_tunable(const char *name)
{
	unsigned long v = ~0ul;
	int ret;

	ret = uf_cache_get_tunable(ax.cache, name, &v);
	cr_assert_eq(ret, 0, "uf_cache_get_tunable(%s): %s", name,
		     strerror(-ret));
	return v;
}

Test(api, tunables, .fini = ax_fini)
{
	struct uf_cache_config cfg;
	struct uf_cache_stats st;
	unsigned long v, want;
	size_t i;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 1024;
	cfg.dirty_writeback_centisecs = 0;
	cr_assert_eq(uf_cache_open(&cfg, &ax.cache), 0);

	/* the configured values come back */
	cr_assert_eq(get_tunable("dirty_ratio"), 20);
	cr_assert_eq(get_tunable("dirty_background_ratio"), 10);
	cr_assert_eq(get_tunable("dirty_bytes"), 0);
	cr_assert_eq(get_tunable("dirty_background_bytes"), 0);
	cr_assert_eq(get_tunable("dirty_expire_centisecs"), 3000);
	cr_assert_eq(get_tunable("dirty_writeback_centisecs"), 0);

	/* unknown names */
	v = 4242;
	cr_assert_eq(uf_cache_get_tunable(ax.cache, "dirty_nonsense", &v),
		     -ENOENT);
	cr_assert_eq(uf_cache_get_tunable(ax.cache, "", &v), -ENOENT);
	cr_assert_eq(uf_cache_get_tunable(ax.cache, "dirty_ratio_", &v),
		     -ENOENT);
	cr_assert_eq(uf_cache_get_tunable(ax.cache, "vm.dirty_ratio", &v),
		     -ENOENT);
	cr_assert_eq(v, 4242, "a refused get wrote *value");
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_nonsense", 1),
		     -ENOENT);
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "swappiness", 1), -ENOENT);

	/* round trips, one by one (a ratio and its bytes clear each other) */
	for (i = 0; i < sizeof(tunables) / sizeof(tunables[0]); i++) {
		want = strstr(tunables[i], "ratio") ? 30 + i :
		       strstr(tunables[i], "bytes") ? (100 + i) * 4096 :
		       700 + i;
		cr_assert_eq(uf_cache_set_tunable(ax.cache, tunables[i], want),
			     0, "set %s", tunables[i]);
		cr_assert_eq(get_tunable(tunables[i]), want, "round trip of %s",
			     tunables[i]);
	}

	/* ratios over 100 are refused and change nothing */
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_ratio", 40), 0);
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_background_ratio",
					  5), 0);
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_ratio", 101),
		     -EINVAL);
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_ratio", ULONG_MAX),
		     -EINVAL);
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_background_ratio",
					  101), -EINVAL);
	cr_assert_eq(get_tunable("dirty_ratio"), 40);
	cr_assert_eq(get_tunable("dirty_background_ratio"), 5);
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_ratio", 100), 0,
		     "100 is a valid ratio");
	cr_assert_eq(get_tunable("dirty_ratio"), 100);

	/* dirty_bytes wins, and a refused ratio does not take it back */
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_bytes",
					  40 * 4096), 0);
	cr_assert_eq(uf_cache_stats(ax.cache, &st), 0);
	cr_assert_eq(st.dirty_thresh, 40, "dirty_thresh with dirty_bytes = 40 pages: %lu",
		     st.dirty_thresh);
	cr_assert_eq(uf_cache_set_tunable(ax.cache, "dirty_ratio", 101),
		     -EINVAL);
	cr_assert_eq(get_tunable("dirty_bytes"), 40 * 4096,
		     "a refused dirty_ratio cleared dirty_bytes");
	cr_assert_eq(uf_cache_stats(ax.cache, &st), 0);
	cr_assert_eq(st.dirty_thresh, 40);
	ax_close_all();
}
