// SPDX-License-Identifier: MIT
/*
 * tests/test_integration.c - the public API end to end, on loop devices.
 *
 * Description: every test here runs uflush as an embedder would, on a
 * scratch loop device with direct I/O (skipped, reason printed, where none
 * can be made), and judges the result by reading the raw device with
 * O_DIRECT, never by trusting uflush's own counters alone:
 *  - many threads write many files at random unaligned, overlapping places
 *    through a cache much smaller than the data (reclaim, throttling), and
 *    every byte of the device must equal a model after uf_sync, through
 *    uf_pread, and through a fresh cache after close;
 *  - the zero-copy page API (WRITE, NOREAD, NOCREATE);
 *  - durability: what a killed process fsynced is on the device;
 *  - write errors reach fsync once (errseq) and leave the cache readable;
 *  - the write_inode hook under fsync and fdatasync;
 *  - kupdate writes expired pages with no sync call at all;
 *  - a mounted block device is refused unless forced.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/bug.h"
#include "testutil.h"
#include "uflush.h"

#define IG_DEV_SIZE	(64ull << 20)
#define IG_MIB		(1ull << 20)
/*
 * How long to wait for the flusher to do what takes it well under a second
 * here (kupdate every 100 ms): a liveness bound, not a speed check, so it
 * is generous enough for a loaded machine; a flusher that never writes
 * still fails it.
 */
#define IG_FLUSHER_WAIT_MS	20000

/* One test's resources, released by ig_fini() whatever happened. */
static struct {
	struct uf_cache *cache;
	pid_t child;
	struct uf_testdev td2;
	bool td2_made;
	void *wi_priv;
	struct uf_file *wi_file;
	unsigned int wi_sync, wi_nosync, wi_bad;
} ig;

static void ig_fini(void)
{
	if (ig.child > 0) {
		kill(ig.child, SIGKILL);
		waitpid(ig.child, NULL, 0);
		ig.child = 0;
	}
	tu_cache_drop(&ig.cache);
	/* first: it unmounts tu.mnt, which may be on td2 */
	tu_fini();
	if (ig.td2_made)
		uf_testdev_destroy(&ig.td2);
	ig.td2_made = false;
}

static void ig_config(struct uf_cache_config *cfg, size_t nr_pages)
{
	cr_assert_eq(uf_cache_config_init(cfg), 0);
	cfg->nr_pages = nr_pages;
}

static void ig_open_cache(const struct uf_cache_config *cfg)
{
	int ret = uf_cache_open(cfg, &ig.cache);

	cr_assert_eq(ret, 0, "uf_cache_open: %s", strerror(-ret));
}

static struct uf_dev *ig_dev(const char *path, unsigned int flags)
{
	return tu_cache_dev(ig.cache, path, flags);
}

static void ig_close_cache(void)
{
	tu_cache_close(&ig.cache);
}

static void ig_stats(struct uf_cache_stats *st)
{
	cr_assert_eq(uf_cache_stats(ig.cache, st), 0);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Poll the cache until nothing is dirty or under writeback, up to ms;
 * true if it got there. */
static bool wait_clean(unsigned int ms, struct uf_cache_stats *st)
{
	unsigned int waited;

	for (waited = 0;; waited += 10) {
		ig_stats(st);
		if (!st->nr_dirty && !st->nr_writeback)
			return true;
		if (waited >= ms)
			return false;
		sleep_ms(10);
	}
}

/* ------------------------------------------------------------------ */
/* Many threads, many files, a small cache                             */

#define MW_THREADS	8
#define MW_FILES	16
#define MW_OPS		300
#define MW_CACHE	1024
#define MW_MAX_LEN	(256u << 10)

struct mw_file {
	uint64_t off;		/* on the device */
	uint64_t open_len;	/* as passed to uf_file_open (unaligned) */
	uint64_t len;		/* rounded up to a page */
	uint64_t bound[MW_THREADS + 1];	/* regions, one per thread */
	struct uf_file *f;
};

struct mw {
	struct mw_file files[MW_FILES];
	uint8_t *model;		/* the whole device as it must be */
};

struct mw_thread {
	pthread_t tid;
	struct mw *mw;
	unsigned int id;
	uint64_t rng;
	unsigned long writes, reads, bytes;
	char err[256];		/* set on the first failure */
};

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void rnd_fill(uint64_t *s, uint8_t *p, size_t len)
{
	size_t i;
	uint64_t w = 0;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			w = rnd(s);
		p[i] = (uint8_t)(w >> ((i & 7) * 8));
	}
}

/* Files of 1-4 MiB (not page multiples), a page apart, from 4 KiB in;
 * each split into per-thread regions at unaligned bounds, so that threads
 * share the pages at the bounds. */
static void mw_layout(struct mw *mw)
{
	uint64_t off = TU_PAGE;
	unsigned int i, k;

	for (i = 0; i < MW_FILES; i++) {
		struct mw_file *mf = &mw->files[i];

		mf->off = off;
		mf->open_len = (i % 4 + 1) * IG_MIB - (i * 1000) % 4096;
		mf->len = (mf->open_len + TU_PAGE - 1) & ~(uint64_t)(TU_PAGE - 1);
		mf->bound[0] = 0;
		for (k = 1; k < MW_THREADS; k++)
			mf->bound[k] = k * (mf->len / MW_THREADS) +
				       (k * 1237 + i * 331) % 3000 - 1500;
		mf->bound[MW_THREADS] = mf->len;
		off += mf->len + TU_PAGE;
	}
	cr_assert_leq(off, IG_DEV_SIZE);
}

static void mw_open_files(struct mw *mw, struct uf_dev *d)
{
	unsigned int i;

	for (i = 0; i < MW_FILES; i++)
		mw->files[i].f = tu_file_open(d, 100 + i, mw->files[i].off,
					      mw->files[i].open_len, NULL,
					      NULL);
}

static void *mw_worker(void *arg)
{
	struct mw_thread *t = arg;
	struct mw *mw = t->mw;
	uint8_t *buf = malloc(MW_MAX_LEN), *got = malloc(MW_MAX_LEN);
	unsigned int op;

	if (!buf || !got) {
		snprintf(t->err, sizeof(t->err), "out of memory");
		goto out;
	}
	for (op = 0; op < MW_OPS; op++) {
		unsigned int fi = (unsigned int)(rnd(&t->rng) % MW_FILES);
		struct mw_file *mf = &mw->files[fi];
		unsigned int r = (t->id + fi) % MW_THREADS;
		uint64_t lo = mf->bound[r], hi = mf->bound[r + 1], off;
		unsigned int pick = (unsigned int)(rnd(&t->rng) % 100);
		size_t len;
		ssize_t n;

		len = pick < 50 ? 1 + rnd(&t->rng) % 6000 :
		      pick < 85 ? 1 + rnd(&t->rng) % (64u << 10) :
		      1 + rnd(&t->rng) % MW_MAX_LEN;
		if (len > hi - lo)
			len = (size_t)(hi - lo);
		off = lo + rnd(&t->rng) % (hi - lo - len + 1);
		rnd_fill(&t->rng, buf, len);
		memcpy(mw->model + mf->off + off, buf, len);
		n = uf_pwrite(mf->f, buf, len, off);
		if (n != (ssize_t)len) {
			snprintf(t->err, sizeof(t->err),
				 "thread %u: uf_pwrite(file %u, %zu @ %llu) = %zd",
				 t->id, fi, len, (unsigned long long)off, n);
			goto out;
		}
		t->writes++;
		t->bytes += len;

		if (op % 8 != 7)
			continue;
		/* read back some of this thread's region of the file */
		len = 1 + rnd(&t->rng) % (64u << 10);
		if (len > hi - lo)
			len = (size_t)(hi - lo);
		off = lo + rnd(&t->rng) % (hi - lo - len + 1);
		n = uf_pread(mf->f, got, len, off);
		if (n != (ssize_t)len ||
		    memcmp(got, mw->model + mf->off + off, len)) {
			snprintf(t->err, sizeof(t->err),
				 "thread %u: uf_pread(file %u, %zu @ %llu) = %zd, %s",
				 t->id, fi, len, (unsigned long long)off, n,
				 n == (ssize_t)len ? "wrong bytes" : "short");
			goto out;
		}
		t->reads++;
	}
out:
	free(buf);
	free(got);
	return NULL;
}

/* Where in the layout a device offset is, for messages. */
static void mw_where(struct mw *mw, uint64_t off, char *s, size_t n)
{
	unsigned int i;

	for (i = 0; i < MW_FILES; i++) {
		struct mw_file *mf = &mw->files[i];

		if (off >= mf->off && off < mf->off + mf->len) {
			snprintf(s, n, "file %u offset %llu", i,
				 (unsigned long long)(off - mf->off));
			return;
		}
	}
	snprintf(s, n, "outside every file");
}

/* The raw device must equal the model byte for byte. */
static void mw_expect_device(struct mw *mw, const char *path,
			     const char *what)
{
	uint8_t *dev = tu_alloc(IG_DEV_SIZE);
	uint64_t i, first = 0, nr_bad = 0;
	char where[64];
	int ret;

	ret = tu_raw_read(path, 0, dev, IG_DEV_SIZE);
	if (!ret && memcmp(dev, mw->model, IG_DEV_SIZE)) {
		for (i = 0; i < IG_DEV_SIZE; i++) {
			if (dev[i] != mw->model[i] && !nr_bad++)
				first = i;
		}
	}
	free(dev);
	cr_assert_eq(ret, 0, "%s: raw read of %s: %s", what, path,
		     strerror(-ret));
	mw_where(mw, first, where, sizeof(where));
	cr_assert_eq(nr_bad, 0,
		     "%s: %llu bytes of the device differ from the model, the first at device offset %llu (%s)",
		     what, (unsigned long long)nr_bad,
		     (unsigned long long)first, where);
}

/* Every file read through the cache must equal the model. */
static void mw_expect_files(struct mw *mw, const char *what)
{
	unsigned int i;

	for (i = 0; i < MW_FILES; i++) {
		struct mw_file *mf = &mw->files[i];
		uint8_t *buf = malloc(mf->len);
		ssize_t n;
		long bad = -1;
		uint64_t j;

		cr_assert(buf);
		n = uf_pread(mf->f, buf, mf->len, 0);
		if (n == (ssize_t)mf->len && memcmp(buf, mw->model + mf->off,
						    mf->len)) {
			for (j = 0; j < mf->len && bad < 0; j++)
				if (buf[j] != mw->model[mf->off + j])
					bad = (long)j;
		}
		free(buf);
		cr_assert_eq(n, (ssize_t)mf->len, "%s: uf_pread(file %u) = %zd",
			     what, i, n);
		cr_assert_eq(bad, -1, "%s: file %u differs from the model at offset %ld",
			     what, i, bad);
	}
}

Test(integration, many_threads_many_files_small_cache, .fini = ig_fini,
     .timeout = 280)
{
	struct mw_thread th[MW_THREADS];
	struct uf_cache_config cfg;
	struct uf_cache_stats st;
	unsigned long total = 0;
	const char *path;
	struct uf_dev *d;
	struct mw *mw;
	unsigned int i;

	path = tu_dev(TU_LOOP, IG_DEV_SIZE);
	mw = calloc(1, sizeof(*mw));
	cr_assert(mw);
	mw->model = tu_alloc(IG_DEV_SIZE);
	tu_fill(mw->model, IG_DEV_SIZE, 0, 1);
	tu_raw_fill(path, 0, IG_DEV_SIZE, 1);
	mw_layout(mw);

	ig_config(&cfg, MW_CACHE);
	ig_open_cache(&cfg);
	d = ig_dev(path, 0);
	mw_open_files(mw, d);

	memset(th, 0, sizeof(th));
	for (i = 0; i < MW_THREADS; i++) {
		th[i].mw = mw;
		th[i].id = i;
		th[i].rng = tu_mix(0x1234 + i) | 1;
		cr_assert_eq(pthread_create(&th[i].tid, NULL, mw_worker,
					    &th[i]), 0);
	}
	for (i = 0; i < MW_THREADS; i++)
		pthread_join(th[i].tid, NULL);
	for (i = 0; i < MW_THREADS; i++) {
		cr_assert_eq(th[i].err[0], '\0', "%s", th[i].err);
		cr_assert_eq(th[i].writes, MW_OPS);
		total += th[i].bytes;
	}
	ig_stats(&st);
	cr_log_info("many_threads: %lu bytes written; %lu pages cached, %lu dirtied, %lu written before sync",
		    total, st.nr_file_pages, st.nr_dirtied, st.nr_written);
	cr_assert_gt(total, 8 * (unsigned long)MW_CACHE * TU_PAGE,
		     "the test wrote too little to need reclaim");
	cr_assert_leq(st.nr_file_pages, MW_CACHE);
	cr_assert_gt(st.nr_written, 0, "nothing written back while the data was 8x the cache");

	cr_assert_eq(uf_sync(ig.cache), 0);
	ig_stats(&st);
	cr_assert_eq(st.nr_dirty, 0, "dirty pages after uf_sync");
	cr_assert_eq(st.nr_writeback, 0, "writeback pages after uf_sync");
	cr_assert_eq(st.write_errors, 0);
	mw_expect_device(mw, path, "after uf_sync");
	mw_expect_files(mw, "uf_pread after uf_sync");
	ig_close_cache();
	mw_expect_device(mw, path, "after uf_cache_close");

	/* a fresh cache reads what the first one left */
	ig_open_cache(&cfg);
	d = ig_dev(path, 0);
	mw_open_files(mw, d);
	mw_expect_files(mw, "uf_pread through a fresh cache");
	ig_close_cache();
	mw_expect_device(mw, path, "after closing the fresh cache");
	free(mw->model);
	free(mw);
}

/* ------------------------------------------------------------------ */
/* The zero-copy page API                                              */

#define PG_OFF		IG_MIB

struct pg_waiter {
	struct uf_file *f;
	unsigned long index;
	int ret;
	bool got;
	uint8_t first;		/* data[0] when it got the page */
};

static void *pg_waiter_fn(void *arg)
{
	struct pg_waiter *w = arg;
	struct uf_page *p;

	w->ret = uf_page_get(w->f, w->index, UF_PAGE_WRITE, &p);
	if (w->ret)
		return NULL;
	w->first = ((uint8_t *)uf_page_data(p))[0];
	__atomic_store_n(&w->got, true, __ATOMIC_RELEASE);
	uf_page_put(p);
	return NULL;
}

Test(integration, page_api_zero_copy, .fini = ig_fini)
{
	struct uf_cache_config cfg;
	struct uf_cache_stats st, st0;
	struct pg_waiter w = { 0 };
	uint8_t *want, *data;
	struct uf_page *p, *q;
	const char *path;
	struct uf_file *f;
	struct uf_dev *d;
	pthread_t tid;
	unsigned int i;

	path = tu_dev(TU_LOOP, IG_DEV_SIZE);
	tu_raw_fill(path, 0, 4 * IG_MIB, 1);
	ig_config(&cfg, 256);
	cfg.dirty_writeback_centisecs = 0;
	ig_open_cache(&cfg);
	d = ig_dev(path, 0);
	f = tu_file_open(d, 1, PG_OFF, 16 * TU_PAGE, NULL, NULL);

	/* page 3: read from the device, change 200 bytes in place */
	cr_assert_eq(uf_page_get(f, 3, UF_PAGE_WRITE, &p), 0);
	data = uf_page_data(p);
	cr_assert_not_null(data);
	cr_assert_eq((uintptr_t)data % TU_PAGE, 0, "page data not aligned");
	cr_assert_eq(tu_check(data, TU_PAGE, PG_OFF + 3 * TU_PAGE, 1), -1,
		     "page 3 was not read from the device");
	tu_fill(data + 100, 200, PG_OFF + 3 * TU_PAGE + 100, 2);
	cr_assert_eq(uf_page_set_dirty(p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	ig_stats(&st);
	cr_assert_eq(st.nr_dirty, 1, "nr_dirty after one page: %lu",
		     st.nr_dirty);
	tu_file_expect(f, 3 * TU_PAGE + 100, 200, PG_OFF + 3 * TU_PAGE + 100, 2,
		  "uf_pread of the bytes changed in place");
	tu_file_expect(f, 3 * TU_PAGE, 100, PG_OFF + 3 * TU_PAGE, 1,
		  "uf_pread of the bytes before them");

	/* NOREAD on a miss: zeroed, whatever the device holds */
	cr_assert_eq(uf_page_get(f, 5, UF_PAGE_WRITE | UF_PAGE_NOREAD, &p), 0);
	data = uf_page_data(p);
	for (i = 0; i < TU_PAGE; i++)
		cr_assert_eq(data[i], 0, "NOREAD page byte %u is 0x%02x", i,
			     data[i]);
	tu_fill(data + 1000, 100, PG_OFF + 5 * TU_PAGE + 1000, 3);
	cr_assert_eq(uf_page_set_dirty(p), 0);
	cr_assert_eq(uf_page_put(p), 0);

	/* NOREAD without WRITE: zeroed too, and not dirty */
	ig_stats(&st0);
	cr_assert_eq(uf_page_get(f, 7, UF_PAGE_NOREAD, &p), 0);
	data = uf_page_data(p);
	for (i = 0; i < TU_PAGE; i++)
		cr_assert_eq(data[i], 0, "NOREAD page 7 byte %u", i);
	cr_assert_eq(uf_page_put(p), 0);
	ig_stats(&st);
	cr_assert_eq(st.nr_dirty, st0.nr_dirty, "a NOREAD page came dirty");

	/* NOREAD on a hit: the cached data, not zeroes */
	cr_assert_eq(uf_page_get(f, 3, UF_PAGE_NOREAD, &p), 0);
	cr_assert_eq(tu_check(uf_page_data(p) + 100, 200,
			      PG_OFF + 3 * TU_PAGE + 100, 2), -1,
		     "NOREAD on a cached page lost its data");
	/* NOCREATE finds the same frame */
	cr_assert_eq(uf_page_get(f, 3, UF_PAGE_NOCREATE, &q), 0);
	cr_assert_eq(uf_page_data(p), uf_page_data(q));
	cr_assert_eq(uf_page_put(q), 0);
	cr_assert_eq(uf_page_put(p), 0);

	/* UF_PAGE_WRITE excludes another writer until put */
	cr_assert_eq(uf_page_get(f, 9, UF_PAGE_WRITE, &p), 0);
	w.f = f;
	w.index = 9;
	cr_assert_eq(pthread_create(&tid, NULL, pg_waiter_fn, &w), 0);
	sleep_ms(200);
	cr_assert(!__atomic_load_n(&w.got, __ATOMIC_ACQUIRE),
		  "a second UF_PAGE_WRITE got a page that is held");
	data = uf_page_data(p);
	data[0] = 0xa7;
	cr_assert_eq(uf_page_set_dirty(p), 0);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert(tu_flag_wait_ms(&w.got, 10000),
		  "the waiting writer never got the page (ret %d)", w.ret);
	pthread_join(tid, NULL);
	cr_assert_eq(w.ret, 0);
	cr_assert_eq(w.first, 0xa7, "the waiter saw the page before the change");

	cr_assert_eq(uf_fsync(f), 0);
	ig_stats(&st);
	cr_assert_eq(st.nr_dirty, 0, "dirty pages after uf_fsync");

	/* the device: page 3 old + new; page 5 zeroes + new; 7 untouched */
	want = tu_alloc(16 * TU_PAGE);
	data = tu_alloc(16 * TU_PAGE);
	tu_fill(want, 16 * TU_PAGE, PG_OFF, 1);
	tu_fill(want + 3 * TU_PAGE + 100, 200, PG_OFF + 3 * TU_PAGE + 100, 2);
	memset(want + 5 * TU_PAGE, 0, TU_PAGE);
	tu_fill(want + 5 * TU_PAGE + 1000, 100, PG_OFF + 5 * TU_PAGE + 1000, 3);
	want[9 * TU_PAGE] = 0xa7;
	cr_assert_eq(tu_raw_read(path, PG_OFF, data, 16 * TU_PAGE), 0);
	for (i = 0; i < 16 * TU_PAGE && want[i] == data[i]; i++)
		;
	free(want);
	free(data);
	cr_assert_eq(i, 16 * TU_PAGE,
		     "the device differs at byte %u (page %u) of the file", i,
		     i / TU_PAGE);
	cr_assert_eq(uf_file_close(f), 0);
	ig_close_cache();
}

/* ------------------------------------------------------------------ */
/* Durability                                                          */

#define DU_A_OFF	IG_MIB
#define DU_B_OFF	(2 * IG_MIB)
#define DU_LEN		(256u << 10)

/* In the child: never returns, never asserts.  Says "1" when fsync is
 * done, or "E<step> <errno>" on a failure. */
static void du_child(const char *path, int wfd)
{
	struct uf_cache *c;
	struct uf_dev *d;
	struct uf_file *a, *b;
	const char *step = "alloc";
	char *buf = malloc(DU_LEN), msg[64];
	long ret = -ENOMEM;
	size_t off, n;

	if (!buf)
		goto fail;
	step = "uf_cache_open";
	ret = uf_cache_open(NULL, &c);
	if (ret)
		goto fail;
	step = "uf_dev_open";
	ret = uf_dev_open(c, path, NULL, &d);
	if (ret)
		goto fail;
	step = "uf_file_open";
	ret = uf_file_open(d, 1, DU_A_OFF, DU_LEN, NULL, NULL, &a);
	if (!ret)
		ret = uf_file_open(d, 2, DU_B_OFF, DU_LEN, NULL, NULL, &b);
	if (ret)
		goto fail;
	step = "uf_pwrite";
	tu_fill(buf, DU_LEN, DU_A_OFF, 9);
	for (off = 0; off < DU_LEN; off += n) {
		n = DU_LEN - off < 7777 ? DU_LEN - off : 7777;
		ret = uf_pwrite(a, buf + off, n, off);
		if (ret != (long)n)
			goto fail;
	}
	step = "uf_fsync";
	ret = uf_fsync(a);
	if (ret)
		goto fail;
	/* the control: written, never synced */
	step = "uf_pwrite (control)";
	tu_fill(buf, DU_LEN, DU_B_OFF, 10);
	ret = uf_pwrite(b, buf, DU_LEN, 0);
	if (ret != DU_LEN)
		goto fail;
	if (write(wfd, "1", 1) != 1)
		_exit(2);
	for (;;)
		pause();
fail:
	snprintf(msg, sizeof(msg), "E%s %ld", step, ret);
	if (write(wfd, msg, strlen(msg)) < 0)
		_exit(3);
	_exit(1);
}

/*
 * No .timeout here: criterion 2.4's runner leaks (LeakSanitizer, 48 bytes,
 * exit status 1) when a test with its own timeout forks; the poll() below
 * bounds the wait instead.
 */
Test(integration, fsynced_data_survives_kill_9, .fini = ig_fini)
{
	struct pollfd pfd;
	char msg[80] = "";
	uint8_t *buf;
	const char *path;
	struct uf_dev *d;
	struct uf_file *a;
	int fds[2], status, ret;
	unsigned int i, nr9 = 0, nr1 = 0;
	ssize_t n;

	path = tu_dev(TU_LOOP, IG_DEV_SIZE);
	tu_raw_fill(path, 0, 4 * IG_MIB, 1);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	fflush(NULL);
	ig.child = fork();
	cr_assert_geq(ig.child, 0, "fork: %s", strerror(errno));
	if (ig.child == 0) {
		close(fds[0]);
		du_child(path, fds[1]);
	}
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	ret = poll(&pfd, 1, 60000);
	n = ret > 0 ? read(fds[0], msg, sizeof(msg) - 1) : -1;
	close(fds[0]);
	cr_assert_gt(ret, 0, "the child said nothing in 60 s");
	cr_assert_gt(n, 0, "the child died before saying anything");
	msg[n] = '\0';
	cr_assert_str_eq(msg, "1", "the child failed: %s", msg);

	cr_assert_eq(kill(ig.child, SIGKILL), 0);
	cr_assert_eq(waitpid(ig.child, &status, 0), ig.child);
	ig.child = 0;
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "the child was not killed by SIGKILL (status 0x%x)", status);

	tu_raw_expect(path, DU_A_OFF, DU_LEN, 9, "fsynced data after kill -9");
	/* the control may or may not have made it; just say which */
	buf = tu_alloc(DU_LEN);
	cr_assert_eq(tu_raw_read(path, DU_B_OFF, buf, DU_LEN), 0);
	for (i = 0; i < DU_LEN; i++) {
		nr9 += buf[i] == tu_byte(DU_B_OFF + i, 10);
		nr1 += buf[i] == tu_byte(DU_B_OFF + i, 1);
	}
	free(buf);
	cr_log_info("durability control (no fsync): %u of %u bytes new, %u old",
		    nr9, DU_LEN, nr1);

	/*
	 * The dead process lets go of the device: open it again and read
	 * back.  Its io_uring is torn down by a kernel worker after the
	 * process is reaped, so the O_EXCL open may be refused for a moment.
	 */
	ig_open_cache(NULL);
	for (i = 0; i < 1000; i++) {
		ret = uf_dev_open(ig.cache, path, NULL, &d);
		if (ret != -EBUSY)
			break;
		sleep_ms(10);
	}
	cr_assert_eq(ret, 0, "uf_dev_open(%s) after the child died: %s", path,
		     strerror(-ret));
	if (i)
		cr_log_info("the device was busy for %u ms after kill -9",
			    i * 10);
	a = tu_file_open(d, 1, DU_A_OFF, DU_LEN, NULL, NULL);
	tu_file_expect(a, 0, DU_LEN, DU_A_OFF, 9,
		       "read by a new process' cache");
	ig_close_cache();
}

/* ------------------------------------------------------------------ */
/* Write errors                                                        */

#define ER_OFF		IG_MIB
#define ER_PAGES	64
#define ER_BAD_FIRST	16	/* pages [16, 24) fail */
#define ER_BAD_NR	8

static struct uf_file *er_setup(struct uf_dev **dp, unsigned int writeback_cs,
				unsigned int expire_cs)
{
	struct uf_cache_config cfg;
	const char *path;

	path = tu_dev(TU_LOOP, IG_DEV_SIZE);
	tu_raw_fill(path, 0, 4 * IG_MIB, 1);
	ig_config(&cfg, 1024);
	cfg.max_io_pages = 1;	/* one request per page: failures are exact */
	cfg.dirty_writeback_centisecs = writeback_cs;
	if (expire_cs)
		cfg.dirty_expire_centisecs = expire_cs;
	ig_open_cache(&cfg);
	*dp = ig_dev(path, UF_DEV_SHAPED);
	return tu_file_open(*dp, 1, ER_OFF, ER_PAGES * TU_PAGE, NULL, NULL);
}

static void er_fail_range(struct uf_dev *d, uint64_t off, uint64_t len)
{
	struct uf_io_shape shape = {
		.eio_offset = off,
		.eio_len = len,
	};

	cr_assert_eq(uf_dev_set_shape(d, &shape), 0);
}

Test(integration, write_error_reaches_fsync_once, .fini = ig_fini)
{
	const uint64_t bad_off = ER_OFF + ER_BAD_FIRST * TU_PAGE;
	const uint64_t bad_len = ER_BAD_NR * TU_PAGE;
	struct uf_io_shape clear = { 0 };
	struct uf_cache_stats st;
	struct uf_dev_stats ds;
	struct uf_file *f;
	struct uf_dev *d;
	int ret;

	f = er_setup(&d, 0, 0);
	tu_file_write(f, 0, ER_PAGES * TU_PAGE, ER_OFF, 3, 10000);
	er_fail_range(d, bad_off, bad_len);

	ret = uf_fsync(f);
	cr_assert_eq(ret, -EIO, "uf_fsync over a failing range: %d", ret);
	ret = uf_fsync(f);
	cr_assert_eq(ret, 0, "a second uf_fsync reported the error again: %d",
		     ret);
	cr_assert_eq(uf_fdatasync(f), 0, "uf_fdatasync after it");
	ig_stats(&st);
	cr_assert_gt(st.write_errors, 0, "cache write_errors");
	cr_assert_leq(st.write_errors, ER_BAD_NR,
		      "%lu write errors for %u failing one-page requests",
		      st.write_errors, ER_BAD_NR);
	cr_assert_eq(uf_dev_stats(d, &ds), 0);
	cr_assert_eq(ds.write_errors, st.write_errors, "device write_errors");
	cr_assert_eq(st.nr_dirty, 0, "failed pages stayed dirty");
	cr_assert_eq(st.nr_writeback, 0);

	/* outside the failed range: on the device */
	tu_raw_expect(tu.td.path, ER_OFF, ER_BAD_FIRST * TU_PAGE, 3,
		      "pages before the failed range");
	tu_raw_expect(tu.td.path, bad_off + bad_len,
		      (ER_PAGES - ER_BAD_FIRST - ER_BAD_NR) * TU_PAGE, 3,
		      "pages after the failed range");
	/* in the cache: everything, the failed pages included */
	tu_file_expect(f, 0, ER_PAGES * TU_PAGE, ER_OFF, 3,
		  "the cache after the failed writeback");

	/* the device heals; rewriting the range sticks */
	cr_assert_eq(uf_dev_set_shape(d, &clear), 0);
	tu_file_write(f, ER_BAD_FIRST * TU_PAGE, bad_len, bad_off, 4, bad_len);
	cr_assert_eq(uf_fsync(f), 0, "uf_fsync after the device healed");
	tu_raw_expect(tu.td.path, bad_off, bad_len, 4, "the rewritten range");
	ig_stats(&st);
	cr_assert_leq(st.write_errors, ER_BAD_NR, "new write errors");
	ret = uf_file_close(f);
	cr_assert_eq(ret, 0, "uf_file_close after fsync reported the error: %d",
		     ret);
	ig_close_cache();
}

/* The flusher meets the error; the next fsync still reports it, once. */
Test(integration, flusher_write_error_reaches_fsync, .fini = ig_fini)
{
	struct uf_cache_stats st;
	struct uf_file *f;
	struct uf_dev *d;
	int ret;

	f = er_setup(&d, 10, 20);
	er_fail_range(d, ER_OFF, ER_PAGES * TU_PAGE);
	tu_file_write(f, 0, 16 * TU_PAGE, ER_OFF, 5, 16 * TU_PAGE);
	cr_assert(wait_clean(IG_FLUSHER_WAIT_MS, &st),
		  "kupdate did not write the pages in %d ms (%lu dirty, %lu writeback)",
		  IG_FLUSHER_WAIT_MS, st.nr_dirty, st.nr_writeback);
	cr_assert_gt(st.write_errors, 0, "the flusher met no error");
	ret = uf_fsync(f);
	cr_assert_eq(ret, -EIO, "uf_fsync after the flusher's failed writes: %d",
		     ret);
	cr_assert_eq(uf_fsync(f), 0, "reported twice");
	tu_file_expect(f, 0, 16 * TU_PAGE, ER_OFF, 5,
		       "the cache after the error");
	cr_assert_eq(uf_file_close(f), 0);
	ig_close_cache();
}

/* An error no fsync saw is returned by uf_file_close. */
Test(integration, write_error_reaches_close, .fini = ig_fini)
{
	struct uf_file *f;
	struct uf_dev *d;
	int ret;

	f = er_setup(&d, 0, 0);
	tu_file_write(f, 0, 8 * TU_PAGE, ER_OFF, 6, 3000);
	er_fail_range(d, ER_OFF + 2 * TU_PAGE, TU_PAGE);
	ret = uf_file_close(f);
	cr_assert_eq(ret, -EIO, "uf_file_close with an unreported error: %d",
		     ret);
	tu_raw_expect(tu.td.path, ER_OFF, 2 * TU_PAGE, 6,
		      "pages before the failed one");
	tu_raw_expect(tu.td.path, ER_OFF + 3 * TU_PAGE, 5 * TU_PAGE, 6,
		      "pages after the failed one");
	ig_close_cache();
}

/* ------------------------------------------------------------------ */
/* write_inode                                                         */

static int wi_write_inode(struct uf_file *file, void *priv, int sync)
{
	if (priv != ig.wi_priv || file != ig.wi_file)
		__atomic_add_fetch(&ig.wi_bad, 1, __ATOMIC_RELAXED);
	if (sync)
		__atomic_add_fetch(&ig.wi_sync, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&ig.wi_nosync, 1, __ATOMIC_RELAXED);
	return 0;
}

static unsigned int wi_sync(void)
{
	return __atomic_load_n(&ig.wi_sync, __ATOMIC_RELAXED);
}

Test(integration, write_inode_under_fsync_and_fdatasync, .fini = ig_fini)
{
	static const struct uf_file_ops ops = {
		.write_inode = wi_write_inode,
	};
	struct uf_cache_config cfg;
	const char *path;
	struct uf_dev *d;
	struct uf_file *f;
	int cookie;

	path = tu_dev(TU_LOOP, IG_DEV_SIZE);
	ig_config(&cfg, 256);
	cfg.dirty_writeback_centisecs = 0;	/* only our calls write */
	ig_open_cache(&cfg);
	d = ig_dev(path, 0);
	ig.wi_priv = &cookie;
	f = tu_file_open(d, 1, IG_MIB, 16 * TU_PAGE, &ops, &cookie);
	ig.wi_file = f;

	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(wi_sync(), 0, "write_inode for a clean inode");

	cr_assert_eq(uf_file_mark_inode_dirty(f, UF_I_DIRTY_SYNC), 0);
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(wi_sync(), 1, "fsync of an I_DIRTY_SYNC inode: %u write_inode(sync=1) calls",
		     wi_sync());
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(wi_sync(), 1, "a second fsync wrote the clean inode");

	/* fdatasync: not for I_DIRTY_SYNC alone... */
	cr_assert_eq(uf_file_mark_inode_dirty(f, UF_I_DIRTY_SYNC), 0);
	cr_assert_eq(uf_fdatasync(f), 0);
	cr_assert_eq(wi_sync(), 1, "fdatasync wrote an I_DIRTY_SYNC-only inode");
	/* ...which stays dirty for the next fsync */
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(wi_sync(), 2, "fsync after fdatasync skipped the inode");

	/* ...but for I_DIRTY_DATASYNC */
	cr_assert_eq(uf_file_mark_inode_dirty(f, UF_I_DIRTY_DATASYNC), 0);
	cr_assert_eq(uf_fdatasync(f), 0);
	cr_assert_eq(wi_sync(), 3, "fdatasync of an I_DIRTY_DATASYNC inode");
	cr_assert_eq(uf_fdatasync(f), 0);
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(wi_sync(), 3, "the inode was written again while clean");

	/* with data too: once per fsync, after the data */
	tu_file_write(f, 100, 5000, IG_MIB + 100, 7, 5000);
	cr_assert_eq(uf_file_mark_inode_dirty(f, UF_I_DIRTY_SYNC), 0);
	cr_assert_eq(uf_fsync(f), 0);
	cr_assert_eq(wi_sync(), 4, "fsync of dirty data + inode");
	tu_raw_expect_any(path, IG_MIB + 100, 5000, 7, "data fsynced with the inode");

	cr_assert_eq(__atomic_load_n(&ig.wi_nosync, __ATOMIC_RELAXED), 0,
		     "write_inode(sync=0) with kupdate off");
	cr_assert_eq(ig.wi_bad, 0, "write_inode got the wrong file or priv");
	cr_assert_eq(uf_file_close(f), 0);
	ig_close_cache();
}

/* ------------------------------------------------------------------ */
/* kupdate                                                             */

#define KU_OFF		(IG_MIB + 123)
#define KU_LEN		(100 * TU_PAGE)

static struct uf_file *ku_setup(unsigned int writeback_cs,
				unsigned int expire_cs)
{
	struct uf_cache_config cfg;
	struct uf_cache_stats st;
	struct uf_file *f;
	const char *path;

	path = tu_dev(TU_LOOP, IG_DEV_SIZE);
	tu_raw_fill(path, 0, 4 * IG_MIB, 1);
	ig_config(&cfg, 4096);
	cfg.dirty_writeback_centisecs = writeback_cs;
	cfg.dirty_expire_centisecs = expire_cs;
	ig_open_cache(&cfg);
	f = tu_file_open(ig_dev(path, 0), 1, IG_MIB, 2 * IG_MIB, NULL, NULL);
	ig_stats(&st);
	/* the premise: 101 pages are far below the background threshold,
	 * so only kupdate may write them */
	cr_assert_gt(st.background_thresh, 200, "background_thresh %lu",
		     st.background_thresh);
	tu_file_write(f, KU_OFF - IG_MIB, KU_LEN, KU_OFF, 8, 9000);
	ig_stats(&st);
	cr_assert_geq(st.nr_dirtied, 100);
	return f;
}

Test(integration, kupdate_writes_expired_pages, .fini = ig_fini,
     .timeout = 60)
{
	struct uf_cache_stats st;
	struct uf_file *f;

	f = ku_setup(10, 20);
	cr_assert(wait_clean(IG_FLUSHER_WAIT_MS, &st),
		  "still %lu dirty and %lu under writeback %d ms after writing, with kupdate every 100 ms",
		  st.nr_dirty, st.nr_writeback, IG_FLUSHER_WAIT_MS);
	cr_assert_geq(st.nr_written, 100);
	tu_raw_expect_any(tu.td.path, KU_OFF, KU_LEN, 8,
			  "the device after kupdate");
	cr_assert_eq(uf_file_close(f), 0);
	ig_close_cache();
}

/* The control: with kupdate off, nothing writes these pages. */
Test(integration, no_kupdate_no_writeback, .fini = ig_fini)
{
	struct uf_cache_stats st;
	struct uf_file *f;

	f = ku_setup(0, 20);
	sleep_ms(500);
	ig_stats(&st);
	cr_assert_geq(st.nr_dirty, 100, "pages were written with kupdate off and far below the thresholds (%lu dirty)",
		      st.nr_dirty);
	cr_assert_eq(uf_fsync(f), 0);
	tu_raw_expect_any(tu.td.path, KU_OFF, KU_LEN, 8, "after fsync");
	cr_assert_eq(uf_file_close(f), 0);
	ig_close_cache();
}

/* ------------------------------------------------------------------ */
/* Mounted devices                                                     */

Test(integration, mounted_device_is_ebusy_unless_forced, .fini = ig_fini)
{
	struct uf_dev_config force = { .flags = UF_DEV_FORCE };
	struct uf_cache_config cfg;
	struct uf_dev *d, *m = NULL;
	struct uf_file *f;
	const char *why;
	uint8_t *sb;
	int ret;

	tu_dev(TU_LOOP, IG_DEV_SIZE);
	ret = uf_testdev_create(IG_DEV_SIZE, UF_TESTDEV_NO_FALLBACK, &ig.td2);
	if (ret) {
		char why[sizeof(ig.td2.why_not_loop)];

		snprintf(why, sizeof(why), "%s", ig.td2.why_not_loop);
		ig_fini();
		cr_skip_test("no second loop device (%s): %s", strerror(-ret),
			     why);
	}
	ig.td2_made = true;
	why = tu_mount_ext4(ig.td2.path, tu.mnt, sizeof(tu.mnt));
	if (why) {
		ig_fini();
		cr_skip_test("%s", why);
	}

	ig_config(&cfg, 256);
	ig_open_cache(&cfg);
	d = ig_dev(tu.td.path, 0);
	ret = uf_dev_open(ig.cache, ig.td2.path, NULL, &m);
	if (ret == 0)
		uf_dev_close(m);
	cr_assert_eq(ret, -EBUSY, "uf_dev_open of mounted %s: %d (%s)",
		     ig.td2.path, ret, strerror(-ret));
	cr_assert_null(m);

	/* the cache and its other device are unaffected */
	f = tu_file_open(d, 1, IG_MIB, 4 * TU_PAGE, NULL, NULL);
	tu_file_write(f, 0, 3 * TU_PAGE, IG_MIB, 11, 3 * TU_PAGE);
	cr_assert_eq(uf_fsync(f), 0);
	tu_raw_expect(tu.td.path, IG_MIB, 3 * TU_PAGE, 11, "the other device");
	cr_assert_eq(uf_file_close(f), 0);

	ret = uf_dev_open(ig.cache, ig.td2.path, &force, &m);
	if (ret == -EBUSY) {
		ig_fini();
		cr_skip_test("the kernel refuses to open a mounted device for writing (CONFIG_BLK_DEV_WRITE_MOUNTED=n?)");
	}
	cr_assert_eq(ret, 0, "uf_dev_open(UF_DEV_FORCE) of mounted %s: %s",
		     ig.td2.path, strerror(-ret));
	cr_assert_eq(uf_dev_close(m), 0);

	/* nothing was written: the filesystem is whole and unmounts */
	sb = tu_alloc(TU_PAGE);
	cr_assert_eq(tu_raw_read(ig.td2.path, 0, sb, TU_PAGE), 0);
	ret = sb[1024 + 56] == 0x53 && sb[1024 + 57] == 0xef;
	free(sb);
	cr_assert(ret, "the ext4 superblock is gone after the forced open");
	cr_assert_eq(umount(tu.mnt), 0, "umount: %s", strerror(errno));
	rmdir(tu.mnt);
	tu.mnt[0] = '\0';

	/* unmounted, it is accepted without force */
	m = ig_dev(ig.td2.path, 0);
	cr_assert_eq(uf_dev_close(m), 0);
	ig_close_cache();
}
