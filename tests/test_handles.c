// SPDX-License-Identifier: MIT
/*
 * tests/test_handles.c - handle values of closed objects (include/uflush.h:
 * "-EBADF for a handle that is closed").
 *
 * Description: a closed handle must stay -EBADF even after its slot is
 * reused by the next open, instead of reaching the new object.  For each
 * kind (file, device, cache, page) the test closes one object, opens the
 * next so that it takes the same slot (uf_handle_slot() says so), then
 * tries every call with the stale handle: each must be -EBADF and the new
 * object's data, counters and state must be unchanged.  The generation
 * tests reopen one slot many times (every old handle stays -EBADF) and age
 * a slot to the end of its generations: it is retired, not wrapped.  The
 * last tests pin down what a page handle held across its file's close
 * does.  Devices are scratch files opened O_DIRECT (tu_dev(TU_FILE)).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/bug.h"
#include "testutil.h"
#include "uflush.h"
#include "uflush-internal.h"

#define HX_FILL_LEN	(4ull << 20)	/* seed 1 over the first 4 MiB */
#define HX_OFF		(1ull << 20)	/* where the test files start */
#define HX_LEN		(8 * TU_PAGE)

static struct {
	struct uf_cache *cache;
	const char *path;
} hx;

static void hx_fini(void)
{
	if (hx.cache)
		uf_cache_close(hx.cache);
	hx.cache = NULL;
	tu_fini();
}

static struct uf_cache *hx_cache(size_t nr_pages)
{
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;
	int ret;

	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = nr_pages;
	cfg.dirty_writeback_centisecs = 0;	/* nothing behind our back */
	ret = uf_cache_open(&cfg, &c);
	cr_assert_eq(ret, 0, "uf_cache_open: %s", strerror(-ret));
	return c;
}

/* A cache over a scratch file whose first 4 MiB hold seed 1's pattern. */
static struct uf_dev *hx_open(void)
{
	struct uf_dev *d = NULL;
	int ret;

	hx.path = tu_dev(TU_FILE, TU_DEV_SIZE);
	tu_raw_fill(hx.path, 0, HX_FILL_LEN, 1);
	hx.cache = hx_cache(64);
	ret = uf_dev_open(hx.cache, hx.path, NULL, &d);
	cr_assert_eq(ret, 0, "uf_dev_open(%s): %s", hx.path, strerror(-ret));
	return d;
}

static struct uf_file *hx_file(struct uf_dev *d, uint64_t ino, uint64_t off)
{
	struct uf_file *f = NULL;
	int ret;

	ret = uf_file_open(d, ino, off, HX_LEN, NULL, NULL, &f);
	cr_assert_eq(ret, 0, "uf_file_open(ino %llu): %s",
		     (unsigned long long)ino, strerror(-ret));
	return f;
}

static void hx_close_all(void)
{
	int ret = uf_cache_close(hx.cache);

	hx.cache = NULL;
	cr_assert_eq(ret, 0, "uf_cache_close: %s", strerror(-ret));
	cr_assert_eq(uf_bug_count(), 0, "a WARN/BUG fired");
}

static void snap(struct uf_cache_stats *st)
{
	cr_assert_eq(uf_cache_stats(hx.cache, st), 0);
}

static void expect_same(const struct uf_cache_stats *a, const char *what)
{
	tu_expect_stats_same(hx.cache, a, what);
}

/* f's whole length must be seed's pattern at device offset dev_off. */
static void expect_file(struct uf_file *f, uint64_t dev_off, uint32_t seed,
			const char *what)
{
	char *buf = tu_alloc(HX_LEN);
	ssize_t n;
	long bad;

	n = uf_pread(f, buf, HX_LEN, 0);
	bad = n == (ssize_t)HX_LEN ? tu_check(buf, HX_LEN, dev_off, seed) : -2;
	free(buf);
	cr_assert_eq(n, (ssize_t)HX_LEN, "%s: uf_pread = %zd", what, n);
	cr_assert_eq(bad, -1, "%s: byte %ld is not seed %u's", what, bad, seed);
}

static void expect_same_slot(const void *a, const void *b, const char *what)
{
	cr_assert_geq(uf_handle_slot(a), 0, "%s: no slot", what);
	cr_assert_eq(uf_handle_slot(a), uf_handle_slot(b),
		     "%s: the new object did not reuse the slot (%ld, %ld), "
		     "the test proves nothing", what, uf_handle_slot(a),
		     uf_handle_slot(b));
	cr_assert_neq(a, b, "%s: the new object got the closed one's handle",
		      what);
}

/* Every call on a closed file, the internal ones too: -EBADF or NULL. */
static void expect_file_ebadf(struct uf_file *f)
{
	tu_expect_file_ebadf(f);
	cr_assert_null(uf_file_inode(f));
}

/* ------------------------------------------------------------------ */
/* Stale handles and slot reuse                                        */

Test(handles, stale_file_does_not_reach_the_next_file, .fini = hx_fini)
{
	struct uf_cache_stats st0;
	struct uf_file *f1, *f2;
	struct uf_dev *d;

	d = hx_open();
	f1 = hx_file(d, 1, HX_OFF);
	cr_assert_eq(uf_file_close(f1), 0);
	/* the next file, elsewhere on the device, takes f1's slot */
	f2 = hx_file(d, 2, HX_OFF + HX_LEN);
	expect_same_slot(f1, f2, "file");
	expect_file(f2, HX_OFF + HX_LEN, 1, "f2 before");
	snap(&st0);
	expect_file_ebadf(f1);
	expect_same(&st0, "calls on the closed f1");
	expect_file(f2, HX_OFF + HX_LEN, 1, "f2 after calls on f1");
	cr_assert_eq(uf_fsync(f2), 0, "f2 is still open");
	cr_assert_eq(uf_file_close(f2), 0, "f1's close closed f2");
	tu_raw_expect(hx.path, HX_OFF, 2 * HX_LEN, 1, "device under f1, f2");
	hx_close_all();
}

Test(handles, stale_dev_does_not_reach_the_next_dev, .fini = hx_fini)
{
	struct uf_io_shape shape = { .latency_us = 1 };
	struct uf_dev_stats ds;
	struct uf_dev *d1, *d2;
	struct uf_file *f = NULL;
	int ret;

	d1 = hx_open();
	cr_assert_eq(uf_dev_close(d1), 0);
	ret = uf_dev_open(hx.cache, hx.path, NULL, &d2);
	cr_assert_eq(ret, 0, "uf_dev_open again: %s", strerror(-ret));
	expect_same_slot(d1, d2, "device");
	cr_assert_eq(uf_dev_stats(d1, &ds), -EBADF);
	cr_assert_eq(uf_dev_set_shape(d1, &shape), -EBADF);
	cr_assert_eq(uf_dev_stall(d1, 1), -EBADF);
	cr_assert_eq(uf_dev_hold_umount(d1), -EBADF);
	cr_assert_eq(uf_dev_release_umount(d1), -EBADF);
	cr_assert_eq(uf_file_open(d1, 1, HX_OFF, HX_LEN, NULL, NULL, &f),
		     -EBADF);
	cr_assert_null(f);
	cr_assert_null(uf_dev_bdi(d1));
	cr_assert_eq(uf_dev_close(d1), -EBADF);
	/* d2 is untouched: no umount hold, still open, no file on it */
	cr_assert_eq(uf_dev_release_umount(d2), -EINVAL,
		     "a hold through d1 landed on d2");
	cr_assert_eq(uf_dev_stats(d2, &ds), 0, "d2 was closed through d1");
	f = hx_file(d2, 1, HX_OFF);
	expect_file(f, HX_OFF, 1, "a file of d2");
	cr_assert_eq(uf_file_close(f), 0);
	cr_assert_eq(uf_dev_close(d2), 0);
	hx_close_all();
}

Test(handles, stale_cache_does_not_reach_the_next_cache, .fini = hx_fini)
{
	struct uf_cache_stats st;
	struct uf_cache *c1;
	struct uf_dev *d = NULL;
	unsigned long v = 0;

	hx.path = tu_dev(TU_FILE, TU_DEV_SIZE);
	c1 = hx_cache(64);
	cr_assert_eq(uf_cache_close(c1), 0);
	hx.cache = hx_cache(96);
	expect_same_slot(c1, hx.cache, "cache");
	cr_assert_eq(uf_cache_stats(c1, &st), -EBADF);
	cr_assert_eq(uf_cache_set_tunable(c1, "dirty_ratio", 7), -EBADF);
	cr_assert_eq(uf_cache_get_tunable(c1, "dirty_ratio", &v), -EBADF);
	cr_assert_eq(uf_sync(c1), -EBADF);
	cr_assert_null(uf_cache_policy(c1));
	cr_assert_eq(uf_dev_open(c1, hx.path, NULL, &d), -EBADF);
	cr_assert_null(d);
	cr_assert_eq(uf_cache_close(c1), -EBADF);
	/* the new cache: still open, its own size, tunable unchanged */
	cr_assert_eq(uf_cache_stats(hx.cache, &st), 0, "closed through c1");
	cr_assert_eq(st.nr_pages, 96);
	cr_assert_eq(uf_cache_get_tunable(hx.cache, "dirty_ratio", &v), 0);
	cr_assert_eq(v, 20, "dirty_ratio set through c1: %lu", v);
	cr_assert_eq(uf_dev_open(hx.cache, hx.path, NULL, &d), 0);
	hx_close_all();
}

/* A put page handle, and the same page got again by someone else. */
Test(handles, stale_page_does_not_reach_the_next_holder, .fini = hx_fini)
{
	struct uf_cache_stats st0;
	struct uf_page *p1, *p2;
	struct uf_file *f;
	char *data;

	f = hx_file(hx_open(), 1, HX_OFF);
	cr_assert_eq(uf_page_get(f, 2, UF_PAGE_WRITE, &p1), 0);
	cr_assert_eq(uf_page_put(p1), 0);
	cr_assert_eq(uf_page_get(f, 2, 0, &p2), 0);
	expect_same_slot(p1, p2, "page");
	snap(&st0);
	cr_assert_eq(uf_page_set_dirty(p1), -EBADF,
		     "set_dirty through a put handle");
	cr_assert_null(uf_page_data(p1));
	cr_assert_eq(uf_page_put(p1), -EBADF,
		     "a put handle dropped the next holder's reference");
	expect_same(&st0, "calls on the put page handle");
	/* p2 still holds the page: it cannot be reclaimed or changed */
	data = uf_page_data(p2);
	cr_assert_not_null(data, "p2 was put through p1");
	cr_assert_eq(tu_check(data, TU_PAGE, HX_OFF + 2 * TU_PAGE, 1), -1);
	cr_assert_eq(uf_page_set_dirty(p2), -EPERM, "p2 is not a writer");
	cr_assert_eq(uf_page_put(p2), 0);
	cr_assert_eq(uf_page_put(p2), -EBADF);
	expect_file(f, HX_OFF, 1, "the file");
	hx_close_all();
}

/* Two holders of one page have two handles; each put ends its own. */
Test(handles, page_handles_are_per_holder, .fini = hx_fini)
{
	struct uf_page *p, *q;
	struct uf_file *f;

	f = hx_file(hx_open(), 1, HX_OFF);
	cr_assert_eq(uf_page_get(f, 3, 0, &p), 0);
	cr_assert_eq(uf_page_get(f, 3, UF_PAGE_NOCREATE, &q), 0);
	cr_assert_neq(p, q);
	cr_assert_eq(uf_page_data(p), uf_page_data(q), "not the same frame");
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(uf_page_put(p), -EBADF, "p put twice");
	cr_assert_not_null(uf_page_data(q), "q was put by p's second put");
	cr_assert_eq(uf_page_put(q), 0);
	hx_close_all();
}

/* A file of a closed device, and a page of a closed cache. */
Test(handles, handles_closed_with_their_cache_stay_ebadf, .fini = hx_fini)
{
	struct uf_page *p, *p2;
	struct uf_file *f, *f2;
	struct uf_dev *d, *d2;
	struct uf_dev_stats ds;

	d = hx_open();
	f = hx_file(d, 1, HX_OFF);
	cr_assert_eq(uf_page_get(f, 1, 0, &p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	hx_close_all();
	/* a new cache, device, file and page take the same slots */
	hx.cache = hx_cache(64);
	cr_assert_eq(uf_dev_open(hx.cache, hx.path, NULL, &d2), 0);
	expect_same_slot(d, d2, "device after cache close");
	f2 = hx_file(d2, 2, HX_OFF + HX_LEN);
	expect_same_slot(f, f2, "file after cache close");
	cr_assert_eq(uf_page_get(f2, 1, UF_PAGE_WRITE, &p2), 0);
	expect_same_slot(p, p2, "page after cache close");
	expect_file_ebadf(f);
	cr_assert_eq(uf_dev_stats(d, &ds), -EBADF);
	cr_assert_eq(uf_dev_close(d), -EBADF);
	cr_assert_eq(uf_page_set_dirty(p), -EBADF);
	cr_assert_eq(uf_page_put(p), -EBADF);
	cr_assert_eq(uf_page_set_dirty(p2), 0, "p2 was put through p");
	cr_assert_eq(uf_page_put(p2), 0);
	cr_assert_eq(uf_file_close(f2), 0);
	cr_assert_eq(uf_dev_close(d2), 0);
	hx_close_all();
}

/* ------------------------------------------------------------------ */
/* Generations                                                         */

#define GEN_ROUNDS	2000

/* One slot reopened many times: every handle it gave is distinct, and
 * every closed one stays -EBADF, however many generations ago. */
Test(handles, every_generation_stays_closed, .fini = hx_fini)
{
	struct uf_file **old = calloc(GEN_ROUNDS, sizeof(*old));
	struct uf_file *f;
	struct uf_dev *d;
	long slot = -1;
	char b = 0;
	int i, j;

	cr_assert_not_null(old);
	d = hx_open();
	for (i = 0; i < GEN_ROUNDS; i++) {
		f = hx_file(d, 1 + (uint64_t)i, HX_OFF);
		if (i == 0)
			slot = uf_handle_slot(f);
		cr_assert_eq(uf_handle_slot(f), slot, "round %d: slot moved",
			     i);
		for (j = 0; j < i; j++)
			cr_assert_neq(f, old[j], "round %d reissued round %d's handle",
				      i, j);
		cr_assert_eq(uf_file_close(f), 0);
		old[i] = f;
	}
	f = hx_file(d, 1, HX_OFF);
	for (j = 0; j < GEN_ROUNDS; j++)
		cr_assert_eq(uf_pwrite(old[j], &b, 1, 0), -EBADF,
			     "round %d's handle is open again", j);
	free(old);
	expect_file(f, HX_OFF, 1, "the open file");
	hx_close_all();
}

/* A slot at its last generation is retired, never wrapped to an old one. */
Test(handles, last_generation_retires_the_slot, .fini = hx_fini)
{
	struct uf_file *f0, *f1, *f2;
	struct uf_dev *d;

	d = hx_open();
	f0 = hx_file(d, 1, HX_OFF);
	cr_assert_eq(uf_handle_gen(f0), 0, "a fresh slot starts at 0");
	cr_assert_eq(uf_file_close(f0), 0);
	cr_assert_eq(uf_handle_age(f0, UF_HANDLE_GEN_MAX - 1), 0);
	f1 = hx_file(d, 2, HX_OFF);
	cr_assert_eq(uf_handle_slot(f1), uf_handle_slot(f0));
	cr_assert_eq(uf_handle_gen(f1), UF_HANDLE_GEN_MAX - 1);
	cr_assert_eq(uf_file_close(f1), 0);
	f2 = hx_file(d, 3, HX_OFF);
	cr_assert_neq(uf_handle_slot(f2), uf_handle_slot(f1),
		      "the slot was reused past its last generation");
	cr_assert_eq(uf_handle_age(f1, 0), 0);	/* try to wrap it by hand */
	expect_file_ebadf(f0);
	expect_file_ebadf(f1);
	expect_file(f2, HX_OFF, 1, "the new file");
	cr_assert_eq(uf_file_close(f2), 0);
	hx_close_all();
}

/* ------------------------------------------------------------------ */
/* Page handles held across their file's close                         */

struct closer {
	struct uf_file *f;
	int ret;
	bool done;
};

static void *closer_fn(void *arg)
{
	struct closer *c = arg;

	c->ret = uf_file_close(c->f);
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The header: a close while a UF_PAGE_WRITE page of the file is held is
 * -EBUSY and closes nothing, from any thread; after the put, the change
 * made through the page is written by the close. */
Test(handles, close_with_a_write_page_held_is_ebusy, .fini = hx_fini)
{
	struct closer c = { 0 };
	struct uf_page *p;
	pthread_t tid;
	char *data;

	c.f = hx_file(hx_open(), 1, HX_OFF);
	cr_assert_eq(uf_page_get(c.f, 4, UF_PAGE_WRITE, &p), 0);
	cr_assert_eq(pthread_create(&tid, NULL, closer_fn, &c), 0);
	cr_assert(tu_flag_wait_ms(&c.done, 30000),
		  "uf_file_close waited for the UF_PAGE_WRITE page");
	pthread_join(tid, NULL);
	cr_assert_eq(c.ret, -EBUSY, "uf_file_close: %d", c.ret);
	cr_assert_eq(uf_pwrite(c.f, "x", 1, 0), 1,
		     "the refused close closed the file");
	data = uf_page_data(p);
	cr_assert_not_null(data);
	tu_fill(data, TU_PAGE, HX_OFF + 4 * TU_PAGE, 2);
	cr_assert_eq(uf_page_set_dirty(p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(uf_file_close(c.f), 0);
	tu_raw_expect(hx.path, HX_OFF + 4 * TU_PAGE, TU_PAGE, 2,
		      "the page changed before the close");
	hx_close_all();
}

/* A read-only page handle does not hold the close; its data stays
 * readable until it is put. */
Test(handles, read_page_outlives_its_file, .fini = hx_fini)
{
	struct uf_page *p;
	struct uf_file *f;
	char *data;

	f = hx_file(hx_open(), 1, HX_OFF);
	cr_assert_eq(uf_page_get(f, 5, 0, &p), 0);
	cr_assert_eq(uf_file_close(f), 0);
	data = uf_page_data(p);
	cr_assert_not_null(data, "the handle died with its file");
	cr_assert_eq(tu_check(data, TU_PAGE, HX_OFF + 5 * TU_PAGE, 1), -1);
	cr_assert_eq(uf_page_set_dirty(p), -EPERM);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(uf_page_put(p), -EBADF);
	hx_close_all();
}
