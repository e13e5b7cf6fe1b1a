// SPDX-License-Identifier: MIT
/*
 * tests/test_page_integrity.c - a page handed to a caller holds the file's
 * data, and a close never waits for what only its caller could release.
 *
 * Description:
 *  - NOCREATE against a read in flight: one thread reads the pages of a
 *    cold file (uf_page_get with no flags: create, read from the device),
 *    another spins on uf_page_get(NOCREATE) for the page being read and
 *    compares each hit with the device.  The frames come from pages of
 *    other offsets (the file is closed between rounds), so a page handed
 *    out before its read completed shows other data.  Rounds go on until
 *    enough hits landed while the read was still in flight.
 *  - NOCREATE against a read that fails (an EIO range, with latency so the
 *    window is wide): never a page, with and without UF_PAGE_WRITE.
 *  - Closes: a cache or file close while this thread holds a page handle is
 *    -EBUSY at once and closes nothing; a uf_file_ops callback closing its
 *    own file, device or cache is -EDEADLK; the callbacks get a handle the
 *    API takes; uf_dev_close drops another thread's s_umount hold.
 * Devices: a scratch loop device with direct I/O (skipped, reason printed,
 * where none can be made), so that a read takes real time.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/bug.h"
#include "testutil.h"
#include "uflush.h"

#define PI_DEV_SIZE	(64ull << 20)
#define PI_OFF		(1ull << 20)	/* the file under test */
#define PI_PAGES	32ul
#define PI_SEED		7
#define PI_MIN_RACED	200		/* hits while the read was in flight */
#define PI_MAX_ROUNDS	20000
#define PI_MAX_MS	60000

static struct {
	struct uf_cache *cache;
} pi;

static void pi_fini(void)
{
	tu_cache_drop(&pi.cache);
	tu_fini();
}

static struct uf_dev *pi_open(const char *path, size_t nr_pages,
			      unsigned int dev_flags)
{
	struct uf_cache_config cfg;
	int ret;

	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = nr_pages;
	cfg.dirty_writeback_centisecs = 0;	/* nothing behind our back */
	ret = uf_cache_open(&cfg, &pi.cache);
	cr_assert_eq(ret, 0, "uf_cache_open: %s", strerror(-ret));
	return tu_cache_dev(pi.cache, path, dev_flags);
}

static uint64_t pi_ms(void)
{
	return uf_now_ns() / 1000000;
}

/* ------------------------------------------------------------------ */
/* NOCREATE against a read in flight                                   */

struct race {
	struct uf_file *f;		/* atomic: the file of this round */
	unsigned long cur;		/* atomic: index being read, << 1 | busy */
	unsigned int nocreate_flags;
	bool stop;			/* atomic */
	bool parked;			/* atomic: saw f NULL */
	unsigned long hits, raced, bad, errors;
	long bad_index, bad_byte;
	int bad_ret;
};

/* Spin on the page the reader is reading; check every hit. */
static void *nocreate_fn(void *arg)
{
	struct race *r = arg;
	unsigned long cur, index;
	struct uf_page *p;
	struct uf_file *f;
	long bad;
	int ret;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		f = __atomic_load_n(&r->f, __ATOMIC_ACQUIRE);
		cur = __atomic_load_n(&r->cur, __ATOMIC_ACQUIRE);
		index = cur >> 1;
		if (!f) {
			__atomic_store_n(&r->parked, true, __ATOMIC_RELEASE);
			continue;
		}
		ret = uf_page_get(f, index, r->nocreate_flags, &p);
		if (ret == -ENOENT || ret == -EBADF)
			continue;	/* not cached yet / between rounds */
		if (ret) {
			r->errors++;
			r->bad_ret = ret;
			continue;
		}
		r->hits++;
		if (cur & 1)
			r->raced++;	/* the reader was still inside its get */
		bad = tu_check(uf_page_data(p), TU_PAGE,
			       PI_OFF + index * TU_PAGE, PI_SEED);
		if (bad >= 0 && !r->bad++) {
			r->bad_index = (long)index;
			r->bad_byte = bad;
		}
		uf_page_put(p);
	}
	return NULL;
}

/* One round: open the file cold, read its pages one by one, close it. */
static void race_round(struct race *r, struct uf_dev *d)
{
	struct uf_page *p;
	struct uf_file *f;
	unsigned long i;
	int ret;

	f = tu_file_open(d, 1, PI_OFF, PI_PAGES * TU_PAGE, NULL, NULL);
	__atomic_store_n(&r->f, f, __ATOMIC_RELEASE);
	for (i = 0; i < PI_PAGES; i++) {
		__atomic_store_n(&r->cur, i << 1 | 1, __ATOMIC_RELEASE);
		ret = uf_page_get(f, i, 0, &p);
		__atomic_store_n(&r->cur, i << 1, __ATOMIC_RELEASE);
		cr_assert_eq(ret, 0, "reader: uf_page_get(%lu): %s", i,
			     strerror(-ret));
		cr_assert_eq(tu_check(uf_page_data(p), TU_PAGE,
				      PI_OFF + i * TU_PAGE, PI_SEED), -1,
			     "the reader's own page %lu is wrong", i);
		cr_assert_eq(uf_page_put(p), 0);
	}
	/* the spinner lets go of the file before it is closed */
	__atomic_store_n(&r->parked, false, __ATOMIC_RELEASE);
	__atomic_store_n(&r->f, NULL, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&r->parked, __ATOMIC_ACQUIRE))
		;
	ret = uf_file_close(f);
	cr_assert_eq(ret, 0, "uf_file_close: %s", strerror(-ret));
}

static void nocreate_race(unsigned int flags)
{
	struct race r = { .nocreate_flags = UF_PAGE_NOCREATE | flags };
	unsigned long rounds = 0;
	const char *path;
	struct uf_dev *d;
	pthread_t tid;
	uint64_t t0;

	path = tu_dev(TU_LOOP, PI_DEV_SIZE);
	tu_raw_fill(path, 0, 4ull << 20, PI_SEED);
	d = pi_open(path, 256, 0);
	cr_assert_eq(pthread_create(&tid, NULL, nocreate_fn, &r), 0);
	t0 = pi_ms();
	while (r.raced < PI_MIN_RACED && !r.bad && rounds < PI_MAX_ROUNDS &&
	       pi_ms() - t0 < PI_MAX_MS) {
		race_round(&r, d);
		rounds++;
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	cr_log_info("%lu rounds, %lu NOCREATE hits, %lu during the read, "
		    "%lu wrong", rounds, r.hits, r.raced, r.bad);
	cr_assert_eq(r.bad, 0, "NOCREATE (flags 0x%x) handed out page %ld "
		     "before its data: byte %ld wrong (%lu of %lu hits, "
		     "%lu rounds)", r.nocreate_flags, r.bad_index, r.bad_byte,
		     r.bad, r.hits, rounds);
	cr_assert_eq(r.errors, 0, "NOCREATE failed with %d", r.bad_ret);
	cr_assert_geq(r.raced, PI_MIN_RACED, "the race was not exercised: "
		      "%lu hits during a read in %lu rounds", r.raced, rounds);
	tu_cache_close(&pi.cache);
}

Test(page_integrity, nocreate_waits_for_a_read_in_flight, .fini = pi_fini,
     .timeout = 120)
{
	nocreate_race(0);
}

Test(page_integrity, nocreate_write_waits_for_a_read_in_flight,
     .fini = pi_fini, .timeout = 120)
{
	nocreate_race(UF_PAGE_WRITE);
}

/* ------------------------------------------------------------------ */
/* NOCREATE against a read that fails                                  */

struct failing {
	struct uf_file *f;
	unsigned int flags;
	bool stop;			/* atomic */
	unsigned long found;		/* NOCREATE returned a page */
	unsigned long tries;
};

static void *failing_fn(void *arg)
{
	struct failing *fl = arg;
	struct uf_page *p;
	int ret;

	while (!__atomic_load_n(&fl->stop, __ATOMIC_ACQUIRE)) {
		ret = uf_page_get(fl->f, 0, UF_PAGE_NOCREATE | fl->flags, &p);
		fl->tries++;
		if (!ret) {
			fl->found++;
			uf_page_put(p);
		}
	}
	return NULL;
}

static void nocreate_failed_read(unsigned int flags)
{
	struct uf_io_shape shape = {
		.latency_us = 300,		/* the page sits in the tree */
		.eio_offset = PI_OFF,
		.eio_len = TU_PAGE,
		.eio_ops = 1u << 0,		/* reads */
	};
	struct failing fl = { .flags = flags };
	struct uf_page *p;
	const char *path;
	struct uf_dev *d;
	pthread_t tid;
	int i, ret;

	path = tu_dev(TU_LOOP, PI_DEV_SIZE);
	d = pi_open(path, 256, UF_DEV_SHAPED);
	cr_assert_eq(uf_dev_set_shape(d, &shape), 0);
	fl.f = tu_file_open(d, 1, PI_OFF, PI_PAGES * TU_PAGE, NULL, NULL);
	cr_assert_eq(pthread_create(&tid, NULL, failing_fn, &fl), 0);
	for (i = 0; i < 300; i++) {
		ret = uf_page_get(fl.f, 0, 0, &p);
		cr_assert_eq(ret, -EIO, "a read of the EIO range: %d", ret);
	}
	__atomic_store_n(&fl.stop, true, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	cr_log_info("%lu NOCREATE tries beside 300 failing reads",
		    fl.tries);
	cr_assert_eq(fl.found, 0, "NOCREATE (flags 0x%x) returned a page "
		     "whose read failed, %lu times", flags, fl.found);
	cr_assert_eq(uf_page_get(fl.f, 0, UF_PAGE_NOCREATE | flags, &p),
		     -ENOENT, "after the failed read");
	tu_cache_close(&pi.cache);
}

Test(page_integrity, nocreate_never_returns_a_failed_read, .fini = pi_fini,
     .timeout = 120)
{
	nocreate_failed_read(0);
}

Test(page_integrity, nocreate_write_never_returns_a_failed_read,
     .fini = pi_fini, .timeout = 120)
{
	nocreate_failed_read(UF_PAGE_WRITE);
}

/* ------------------------------------------------------------------ */
/* Closes                                                              */

/* A single thread that forgot a put: the close says so at once. */
Test(page_integrity, cache_close_with_a_held_page_is_ebusy, .fini = pi_fini,
     .timeout = 30)
{
	struct uf_page *p;
	struct uf_file *f;
	const char *path;
	struct uf_dev *d;
	uint64_t t0;
	char buf[16];

	path = tu_dev(TU_LOOP, PI_DEV_SIZE);
	tu_raw_fill(path, 0, 4ull << 20, PI_SEED);
	d = pi_open(path, 256, 0);
	f = tu_file_open(d, 1, PI_OFF, PI_PAGES * TU_PAGE, NULL, NULL);
	cr_assert_eq(uf_page_get(f, 2, 0, &p), 0);
	t0 = pi_ms();
	cr_assert_eq(uf_cache_close(pi.cache), -EBUSY);
	cr_assert_lt(pi_ms() - t0, 2000, "the refusal took %llu ms",
		     (unsigned long long)(pi_ms() - t0));
	/* nothing was closed */
	cr_assert_eq(uf_pread(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	cr_assert_eq(tu_check(uf_page_data(p), TU_PAGE,
			      PI_OFF + 2 * TU_PAGE, PI_SEED), -1);
	cr_assert_eq(uf_cache_close_discard(pi.cache, UF_DISCARD_DIRTY),
		     -EBUSY);
	cr_assert_eq(uf_page_put(p), 0);
	tu_cache_close(&pi.cache);
}

Test(page_integrity, close_with_a_held_write_page_is_ebusy, .fini = pi_fini,
     .timeout = 30)
{
	struct uf_page *p, *q;
	struct uf_file *f;
	const char *path;
	struct uf_dev *d;
	uint64_t t0;

	path = tu_dev(TU_LOOP, PI_DEV_SIZE);
	tu_raw_fill(path, 0, 4ull << 20, PI_SEED);
	d = pi_open(path, 256, 0);
	f = tu_file_open(d, 1, PI_OFF, PI_PAGES * TU_PAGE, NULL, NULL);
	cr_assert_eq(uf_page_get(f, 3, UF_PAGE_WRITE, &p), 0);
	t0 = pi_ms();
	cr_assert_eq(uf_file_close(f), -EBUSY);
	cr_assert_eq(uf_dev_close(d), -EBUSY);	/* its file is open */
	cr_assert_eq(uf_cache_close(pi.cache), -EBUSY);
	cr_assert_lt(pi_ms() - t0, 2000);
	/* the handle and the file still work */
	tu_fill(uf_page_data(p), TU_PAGE, PI_OFF + 3 * TU_PAGE, PI_SEED + 1);
	cr_assert_eq(uf_page_set_dirty(p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	/* a read-only handle does not hold the file, only the cache */
	cr_assert_eq(uf_page_get(f, 4, 0, &q), 0);
	cr_assert_eq(uf_file_close(f), 0);
	cr_assert_eq(uf_dev_close(d), 0);
	cr_assert_eq(uf_cache_close(pi.cache), -EBUSY);
	cr_assert_eq(uf_page_put(q), 0);
	tu_cache_close(&pi.cache);
	tu_raw_expect(path, PI_OFF + 3 * TU_PAGE, TU_PAGE, PI_SEED + 1,
		      "the page changed under the refused closes");
}

struct selfclose {
	struct uf_cache *cache;
	struct uf_dev *dev;
	struct uf_file *file;		/* what the callbacks should get */
	int calls;			/* atomic */
	int file_ret, dev_ret, cache_ret, stats_ret;
	bool handle_ok;
};

static void selfclose_try(struct selfclose *sc, struct uf_file *file)
{
	struct uf_file_stats st;

	sc->handle_ok = file == sc->file;
	sc->stats_ret = uf_file_stats(file, &st);
	sc->file_ret = uf_file_close(file);
	sc->dev_ret = uf_dev_close(sc->dev);
	sc->cache_ret = uf_cache_close(sc->cache);
	__atomic_add_fetch(&sc->calls, 1, __ATOMIC_RELEASE);
}

static int selfclose_write_inode(struct uf_file *file, void *priv, int sync)
{
	(void)sync;
	selfclose_try(priv, file);
	return 0;
}

static int selfclose_map(struct uf_file *file, void *priv,
			 unsigned long index, unsigned long nr)
{
	(void)index;
	selfclose_try(priv, file);
	return (int)nr;
}

static void selfclose_expect(struct selfclose *sc, const char *what)
{
	cr_assert_gt(__atomic_load_n(&sc->calls, __ATOMIC_ACQUIRE), 0,
		     "%s: the callback never ran", what);
	cr_assert(sc->handle_ok, "%s: the callback got another handle", what);
	cr_assert_eq(sc->stats_ret, 0, "%s: uf_file_stats on the callback's "
		     "file: %d", what, sc->stats_ret);
	cr_assert_eq(sc->file_ret, -EDEADLK, "%s: file close %d", what,
		     sc->file_ret);
	cr_assert_eq(sc->dev_ret, -EDEADLK, "%s: dev close %d", what,
		     sc->dev_ret);
	cr_assert_eq(sc->cache_ret, -EDEADLK, "%s: cache close %d", what,
		     sc->cache_ret);
}

/* From the fsync caller (write_inode) and from the flusher (kupdate). */
Test(page_integrity, callback_closing_its_own_file_is_edeadlk,
     .fini = pi_fini, .timeout = 60)
{
	struct selfclose sc = { 0 };
	struct uf_file_ops ops = { .write_inode = selfclose_write_inode };
	const char *path;
	uint64_t t0;

	path = tu_dev(TU_LOOP, PI_DEV_SIZE);
	sc.dev = pi_open(path, 256, 0);
	sc.cache = pi.cache;
	sc.file = tu_file_open(sc.dev, 1, PI_OFF, PI_PAGES * TU_PAGE, &ops,
			       &sc);
	cr_assert_eq(uf_file_mark_inode_dirty(sc.file, UF_I_DIRTY_SYNC), 0);
	cr_assert_eq(uf_fsync(sc.file), 0);
	selfclose_expect(&sc, "write_inode from fsync");

	/* the flusher's kupdate pass */
	memset(&sc.calls, 0, sizeof(sc.calls));
	cr_assert_eq(uf_cache_set_tunable(pi.cache,
					  "dirty_writeback_centisecs", 10), 0);
	cr_assert_eq(uf_cache_set_tunable(pi.cache,
					  "dirty_expire_centisecs", 1), 0);
	cr_assert_eq(uf_file_mark_inode_dirty(sc.file, UF_I_DIRTY_SYNC), 0);
	t0 = pi_ms();
	while (!__atomic_load_n(&sc.calls, __ATOMIC_ACQUIRE) &&
	       pi_ms() - t0 < 20000)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	selfclose_expect(&sc, "write_inode from the flusher");
	cr_assert_eq(uf_file_close(sc.file), 0);
	tu_cache_close(&pi.cache);
}

Test(page_integrity, map_blocks_closing_its_own_file_is_edeadlk,
     .fini = pi_fini, .timeout = 60)
{
	struct selfclose sc = { 0 };
	struct uf_file_ops ops = { .map_blocks = selfclose_map };
	const char *path;

	path = tu_dev(TU_LOOP, PI_DEV_SIZE);
	sc.dev = pi_open(path, 256, 0);
	sc.cache = pi.cache;
	sc.file = tu_file_open(sc.dev, 1, PI_OFF, PI_PAGES * TU_PAGE, &ops,
			       &sc);
	tu_file_write(sc.file, 0, 4 * TU_PAGE, PI_OFF, PI_SEED, TU_PAGE);
	cr_assert_eq(uf_fsync(sc.file), 0);
	selfclose_expect(&sc, "map_blocks from fsync");
	cr_assert_eq(uf_file_close(sc.file), 0);
	tu_cache_close(&pi.cache);
	tu_raw_expect(path, PI_OFF, 4 * TU_PAGE, PI_SEED, "after map_blocks");
}

struct holder {
	struct uf_dev *d;
	int ret;
	bool held;			/* atomic */
};

static void *hold_fn(void *arg)
{
	struct holder *h = arg;

	h->ret = uf_dev_hold_umount(h->d);
	__atomic_store_n(&h->held, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The hold belongs to no thread: the closer may drop it (rwsem.h). */
Test(page_integrity, dev_close_drops_another_threads_umount_hold,
     .fini = pi_fini, .timeout = 60)
{
	struct holder h = { 0 };
	const char *path;
	pthread_t tid;

	path = tu_dev(TU_LOOP, PI_DEV_SIZE);
	h.d = pi_open(path, 256, 0);
	cr_assert_eq(pthread_create(&tid, NULL, hold_fn, &h), 0);
	pthread_join(tid, NULL);
	cr_assert_eq(h.ret, 0);
	cr_assert_eq(uf_dev_hold_umount(h.d), -EBUSY, "held twice");
	cr_assert_eq(uf_dev_close(h.d), 0);
	tu_cache_close(&pi.cache);
}
