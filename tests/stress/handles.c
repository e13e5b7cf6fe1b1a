// SPDX-License-Identifier: MIT
/*
 * tests/stress/handles.c - handle lifetimes under concurrency: calls that
 * race with the close of the handle they use.
 *
 * Description: in each round the main thread opens a target (a file; a
 * device and a file; a cache, a device and a file), publishes its handles
 * to three worker threads, lets them run 5-30 ms and closes it, then the
 * next round opens the next target, which takes the slots just freed.
 * Each worker has its own pages of the file (the data does not race).
 * The workers never stop between rounds: they keep calling on whatever
 * handles they last loaded, so calls race with the close and then run on
 * closed handles whose slots now hold the next round's objects.  Every
 * call must give success or -EBADF (or the errno the header documents for
 * that race, -EBUSY for uf_dev_close with files open), never crash; and
 * each round writes its own pattern into its own device region, so a
 * stale handle that reached the next round's file shows up as a foreign
 * pattern there (checked through uf_pread, uf_page_get and the raw device
 * after the close):
 *  - handles_file_close_race: uf_file_close against uf_fsync,
 *    uf_fdatasync, uf_pwrite, uf_pread, uf_page_get/set_dirty/put,
 *    uf_file_mark_inode_dirty, uf_sync and the statistics calls;
 *  - handles_dev_close_race: uf_dev_close (after uf_file_close of the
 *    round's file) against the same file calls and against uf_dev_stats and
 *    uf_file_open/uf_file_close of the workers' own files on that device;
 *  - handles_cache_close_race: uf_cache_close with its device and file
 *    open, against all of the above and uf_cache_set_tunable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"
#include "uflush.h"

#define HR_WORKERS	3
#define HR_PAGES	16			/* pages per round's file */
#define HR_FILE_LEN	(HR_PAGES * ST_PAGE)
#define HR_REGIONS	96		/* rounds before regions repeat */
/* the workers' own files, after the regions */
#define HR_TMP_OFF	(HR_REGIONS * HR_FILE_LEN)
#define HR_DEV_SIZE	(HR_TMP_OFF + HR_WORKERS * ST_PAGE)
#define HR_MAX_ROUNDS	HR_REGIONS

enum hr_mode { HR_FILE, HR_DEV, HR_CACHE };

/* One round's objects, written before the round is published. */
struct hr_target {
	struct uf_cache *cache;
	struct uf_dev *dev;
	struct uf_file *file;
	uint64_t dev_off;		/* the region of the round's file */
	uint64_t seed;			/* the pattern the round writes */
};

struct hr_run {
	enum hr_mode mode;
	struct hr_target t[HR_MAX_ROUNDS];
	unsigned int round;		/* atomic: the published one */
	bool stop;			/* atomic */
	struct st_err err;
	unsigned long calls, ebadf;	/* atomic */
	unsigned long busy;		/* atomic: closes refused, retried */
};

struct hr_thread {
	struct hr_run *run;
	unsigned int id;
	pthread_t tid;
	uint64_t rng;
	unsigned long ebadf;
	uint8_t *buf, *want;
};

/* Every 8-byte word zero (never written) or the round's pattern: a torn
 * read of a page being written is both, a stale write is neither. */
static long hr_bad_word(const uint8_t *buf, const uint8_t *want, size_t len)
{
	uint64_t a, b;
	size_t i;

	for (i = 0; i < len; i += 8) {
		memcpy(&a, buf + i, 8);
		memcpy(&b, want + i, 8);
		if (a && a != b)
			return (long)i;
	}
	return -1;
}

/* ret must be one of the goods, or -EBADF (counted). */
static bool hr_ok(struct hr_thread *th, unsigned int r, const char *call,
		  long ret, long good, long good2)
{
	struct hr_run *run = th->run;

	__atomic_add_fetch(&run->calls, 1, __ATOMIC_RELAXED);
	if (ret == good || ret == good2)
		return true;
	if (ret == -EBADF) {
		th->ebadf++;
		if (r)	/* round 0's NULL handles prove nothing */
			__atomic_add_fetch(&run->ebadf, 1, __ATOMIC_RELAXED);
		return false;
	}
	st_err_set(&run->err, "worker %u, round %u: %s returned %ld (%s)",
		   th->id, r, call, ret, ret < 0 ? strerror((int)-ret) : "?");
	return false;
}

static void hr_check_page(struct hr_thread *th, unsigned int r,
			  const uint8_t *data, unsigned long page,
			  const char *how)
{
	const struct hr_target *t = &th->run->t[r];
	uint64_t off = t->dev_off + page * ST_PAGE;
	long bad;

	st_fill(th->want, ST_PAGE, off, t->seed);
	bad = hr_bad_word(data, th->want, ST_PAGE);
	if (bad >= 0)
		st_err_set(&th->run->err, "round %u: %s of page %lu: byte %ld is neither zero nor the round's pattern (a stale handle's write?)",
			   r, how, page, bad);
}

static void hr_page_call(struct hr_thread *th, unsigned int r,
			 unsigned long page, bool write)
{
	const struct hr_target *t = &th->run->t[r];
	struct uf_page *p = NULL;
	uint8_t *data;
	int ret;

	ret = uf_page_get(t->file, page, write ? UF_PAGE_WRITE : 0, &p);
	if (!hr_ok(th, r, "uf_page_get", ret, 0, 0))
		return;
	data = uf_page_data(p);
	if (!data) {
		st_err_set(&th->run->err, "round %u: uf_page_data of a held page is NULL",
			   r);
		return;
	}
	hr_check_page(th, r, data, page, "uf_page_get");
	if (write) {
		st_fill(data, ST_PAGE, t->dev_off + page * ST_PAGE, t->seed);
		hr_ok(th, r, "uf_page_set_dirty", uf_page_set_dirty(p), 0, 0);
	}
	hr_ok(th, r, "uf_page_put", uf_page_put(p), 0, 0);
}

/* A file of the worker's own on the round's device, opened and closed. */
static void hr_tmp_file(struct hr_thread *th, unsigned int r)
{
	const struct hr_target *t = &th->run->t[r];
	struct uf_file *f = NULL;
	ssize_t n;
	int ret;

	ret = uf_file_open(t->dev, 1000 + th->id, HR_TMP_OFF + th->id * ST_PAGE,
			   ST_PAGE, NULL, NULL, &f);
	if (!hr_ok(th, r, "uf_file_open", ret, 0, 0))
		return;
	memset(th->buf, (int)th->id, ST_PAGE);
	n = uf_pwrite(f, th->buf, ST_PAGE, 0);
	hr_ok(th, r, "uf_pwrite of an own file", (long)n, ST_PAGE, ST_PAGE);
	hr_ok(th, r, "uf_file_close of an own file", uf_file_close(f), 0, 0);
}

static void hr_call(struct hr_thread *th, unsigned int r)
{
	const struct hr_target *t = &th->run->t[r];
	/* each worker its own pages: what races is the close, not the data */
	unsigned long page = th->id + HR_WORKERS * (unsigned long)
		st_rand_below(&th->rng, (HR_PAGES - th->id + HR_WORKERS - 1) /
					HR_WORKERS);
	uint64_t off = page * ST_PAGE;
	struct uf_cache_stats cs;
	struct uf_dev_stats ds;
	unsigned int op;
	ssize_t n;

	op = (unsigned int)st_rand_below(&th->rng,
					 th->run->mode == HR_FILE ? 12 : 13);
	switch (op) {
	case 0:
		hr_ok(th, r, "uf_fsync", uf_fsync(t->file), 0, 0);
		break;
	case 1:
		hr_ok(th, r, "uf_fdatasync", uf_fdatasync(t->file), 0, 0);
		break;
	case 2:
	case 3:
		st_fill(th->buf, ST_PAGE, t->dev_off + off, t->seed);
		n = uf_pwrite(t->file, th->buf, ST_PAGE, off);
		hr_ok(th, r, "uf_pwrite", (long)n, ST_PAGE, ST_PAGE);
		break;
	case 4:
	case 5:
		n = uf_pread(t->file, th->buf, ST_PAGE, off);
		if (hr_ok(th, r, "uf_pread", (long)n, ST_PAGE, ST_PAGE))
			hr_check_page(th, r, th->buf, page, "uf_pread");
		break;
	case 6:
		hr_page_call(th, r, page, true);
		break;
	case 7:
		hr_page_call(th, r, page, false);
		break;
	case 8:
		hr_ok(th, r, "uf_file_mark_inode_dirty",
		      uf_file_mark_inode_dirty(t->file, UF_I_DIRTY_SYNC), 0, 0);
		break;
	case 9:
		hr_ok(th, r, "uf_sync", uf_sync(t->cache), 0, 0);
		break;
	case 10:
		hr_ok(th, r, "uf_cache_stats", uf_cache_stats(t->cache, &cs),
		      0, 0);
		hr_ok(th, r, "uf_cache_set_tunable",
		      uf_cache_set_tunable(t->cache, "dirty_background_ratio",
					   10), 0, 0);
		break;
	case 11:
		hr_ok(th, r, "uf_dev_stats", uf_dev_stats(t->dev, &ds), 0, 0);
		break;
	default:
		hr_tmp_file(th, r);
		break;
	}
}

static void *hr_worker(void *arg)
{
	struct hr_thread *th = arg;
	struct hr_run *run = th->run;
	unsigned long ebadf;
	unsigned int r, i;

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE) &&
	       !st_err_is_set(&run->err)) {
		r = __atomic_load_n(&run->round, __ATOMIC_ACQUIRE);
		ebadf = th->ebadf;
		/* a few calls on one round's handles, then look again */
		for (i = 0; i < 8; i++)
			hr_call(th, r);
		/* all closed: the next round is being opened; don't spin */
		if (th->ebadf - ebadf == 8)
			st_sleep_ms(1);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The main thread: open, publish, wait, close, check                  */

static enum st_result hr_open_cache(struct st_ctx *ctx, struct uf_cache **c)
{
	struct uf_cache_config cfg;
	int ret;

	st_cache_config(&cfg, 256, 0, 5, 2);
	ret = uf_cache_open(&cfg, c);
	return ret ? st_fail(ctx, "uf_cache_open: %s", strerror(-ret)) :
		     ST_PASS;
}

static enum st_result hr_open(struct st_ctx *ctx, struct hr_run *run,
			      const char *path, unsigned int r,
			      struct hr_target *t)
{
	enum st_result res;
	int ret;

	t->dev_off = (uint64_t)(r % HR_REGIONS) * HR_FILE_LEN;
	t->seed = 1000u * (unsigned int)run->mode + r + 1;
	if (run->mode == HR_CACHE) {
		res = hr_open_cache(ctx, &t->cache);
		if (res != ST_PASS)
			return res;
	}
	if (run->mode != HR_FILE) {
		ret = uf_dev_open(t->cache, path, NULL, &t->dev);
		if (ret)
			return st_fail(ctx, "round %u: uf_dev_open: %s", r,
				       strerror(-ret));
	}
	ret = uf_file_open(t->dev, 1 + r, t->dev_off, HR_FILE_LEN, NULL, NULL,
			   &t->file);
	if (ret)
		return st_fail(ctx, "round %u: uf_file_open: %s", r,
			       strerror(-ret));
	return ST_PASS;
}

/* uf_dev_close until no worker's own file holds the device. */
static int hr_dev_close(struct uf_dev *d)
{
	int ret, i;

	for (i = 0; i < 5000; i++) {
		ret = uf_dev_close(d);
		if (ret != -EBUSY)
			return ret;
		st_sleep_ms(1);
	}
	return ret;
}

/* A cache or file close is -EBUSY while a worker holds one of its page
 * handles (include/uflush.h): try again, as for the device. */
static int hr_close_retry(struct uf_cache *c, struct uf_file *f,
			  unsigned long *busy)
{
	int ret, i;

	for (i = 0; i < 5000; i++) {
		ret = c ? uf_cache_close(c) : uf_file_close(f);
		if (ret != -EBUSY)
			return ret;
		__atomic_add_fetch(busy, 1, __ATOMIC_RELAXED);
		st_sleep_ms(1);
	}
	return ret;
}

static enum st_result hr_close(struct st_ctx *ctx, struct hr_run *run,
			       unsigned int r, struct hr_target *t)
{
	int ret;

	st_note(0, run->mode == HR_CACHE ? "uf_cache_close" : "uf_file_close");
	if (run->mode == HR_CACHE) {
		ret = hr_close_retry(t->cache, NULL, &run->busy);
		st_note(0, NULL);
		return ret ? st_fail(ctx, "round %u: uf_cache_close: %s", r,
				     strerror(-ret)) : ST_PASS;
	}
	ret = hr_close_retry(NULL, t->file, &run->busy);
	st_note(0, NULL);
	if (ret)
		return st_fail(ctx, "round %u: uf_file_close: %s", r,
			       strerror(-ret));
	if (run->mode == HR_DEV) {
		st_note(0, "uf_dev_close");
		ret = hr_dev_close(t->dev);
		st_note(0, NULL);
		if (ret)
			return st_fail(ctx, "round %u: uf_dev_close: %s", r,
				       strerror(-ret));
	}
	return ST_PASS;
}

/* After the close everything is on the device: the round's region holds
 * zeroes or its own pattern, nothing a stale handle wrote. */
static enum st_result hr_check_raw(struct st_ctx *ctx, const char *path,
				   unsigned int r, const struct hr_target *t,
				   uint8_t *buf, uint8_t *want)
{
	long bad;
	int ret;

	ret = st_raw_read(path, t->dev_off, buf, HR_FILE_LEN);
	if (ret)
		return st_fail(ctx, "raw read: %s", strerror(-ret));
	st_fill(want, HR_FILE_LEN, t->dev_off, t->seed);
	bad = hr_bad_word(buf, want, HR_FILE_LEN);
	if (bad >= 0)
		return st_fail(ctx, "round %u: device byte %llu is neither zero nor the round's pattern",
			       r, (unsigned long long)t->dev_off +
			       (unsigned long long)bad);
	return ST_PASS;
}

static enum st_result hr_rounds(struct st_ctx *ctx, struct hr_run *run,
				const char *path, struct uf_cache *cache,
				struct uf_dev *dev, unsigned int rounds)
{
	uint8_t *buf = st_alloc(HR_FILE_LEN), *want = st_alloc(HR_FILE_LEN);
	uint64_t rng = st_mix(ctx->seed ^ 0x4852);
	enum st_result res = ST_PASS;
	unsigned int r;

	if (!buf || !want)
		res = st_fail(ctx, "out of memory");
	for (r = 1; r < rounds && res == ST_PASS; r++) {
		struct hr_target *t = &run->t[r];

		t->cache = cache;
		t->dev = dev;
		res = hr_open(ctx, run, path, r, t);
		if (res != ST_PASS)
			break;
		__atomic_store_n(&run->round, r, __ATOMIC_RELEASE);
		st_sleep_ms(5 + (unsigned int)st_rand_below(&rng, 26));
		res = hr_close(ctx, run, r, t);
		if (res == ST_PASS)
			res = hr_check_raw(ctx, path, r, t, buf, want);
		if (st_err_is_set(&run->err))
			break;
	}
	free(buf);
	free(want);
	return res;
}

static enum st_result hr_scenario(struct st_ctx *ctx, enum hr_mode mode)
{
	struct hr_thread th[HR_WORKERS];
	struct uf_cache *cache = NULL;
	struct uf_dev *dev = NULL;
	struct uf_testdev td;
	struct hr_run *run;
	enum st_result res, r2;
	unsigned int i, started = 0, rounds;
	int ret;

	rounds = 1 + (unsigned int)(48 * (ctx->scale < 1 ? 1 : ctx->scale));
	if (rounds > HR_MAX_ROUNDS)
		rounds = HR_MAX_ROUNDS;
	run = calloc(1, sizeof(*run));
	if (!run)
		return st_fail(ctx, "out of memory");
	run->mode = mode;
	st_err_init(&run->err);
	memset(th, 0, sizeof(th));
	res = st_dev_get(ctx, HR_DEV_SIZE, &td);
	if (res != ST_PASS)
		goto out_run;
	if (mode != HR_CACHE) {
		res = hr_open_cache(ctx, &cache);
		if (res != ST_PASS)
			goto out;
	}
	if (mode == HR_FILE) {
		ret = uf_dev_open(cache, td.path, NULL, &dev);
		if (ret) {
			res = st_fail(ctx, "uf_dev_open: %s", strerror(-ret));
			goto out;
		}
	}
	/* round 0: handles that were never opened (all NULL): -EBADF */
	for (i = 0; i < HR_WORKERS; i++) {
		th[i].run = run;
		th[i].id = i;
		th[i].rng = st_mix(ctx->seed * 131 + i + 1);
		th[i].buf = st_alloc(ST_PAGE);
		th[i].want = st_alloc(ST_PAGE);
		if (!th[i].buf || !th[i].want ||
		    pthread_create(&th[i].tid, NULL, hr_worker, &th[i])) {
			st_err_set(&run->err, "worker %u could not start", i);
			break;
		}
		started++;
	}
	res = ST_PASS;
	if (started == HR_WORKERS)
		res = hr_rounds(ctx, run, td.path, cache, dev, rounds);
	__atomic_store_n(&run->stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	r2 = st_err_result(&run->err, ctx);
	if (res == ST_PASS)
		res = r2;
	if (res == ST_PASS)
		fprintf(stderr, "  %s: %u closes (%lu -EBUSY: page handles "
			"held), %lu calls, %lu of them -EBADF\n", ctx->name,
			rounds - 1, run->busy, run->calls, run->ebadf);
	if (res == ST_PASS && (run->ebadf == 0 || run->calls <= run->ebadf))
		res = st_fail(ctx, "%lu calls, %lu -EBADF: the race was not exercised",
			      run->calls, run->ebadf);
out:
	for (i = 0; i < HR_WORKERS; i++) {
		free(th[i].buf);
		free(th[i].want);
	}
	if (cache) {
		ret = uf_cache_close(cache);
		if (ret && res == ST_PASS)
			res = st_fail(ctx, "uf_cache_close: %s",
				      strerror(-ret));
	}
	st_dev_put(&td);
out_run:
	pthread_mutex_destroy(&run->err.lock);
	free(run);
	return res;
}

static enum st_result handles_file_close_race(struct st_ctx *ctx)
{
	return hr_scenario(ctx, HR_FILE);
}

static enum st_result handles_dev_close_race(struct st_ctx *ctx)
{
	return hr_scenario(ctx, HR_DEV);
}

static enum st_result handles_cache_close_race(struct st_ctx *ctx)
{
	return hr_scenario(ctx, HR_CACHE);
}

const struct st_scenario st_handle_scenarios[] = {
	{ "handles_file_close_race",
	  "uf_file_close racing every file, page, cache and dev call; 48 closes",
	  handles_file_close_race },
	{ "handles_dev_close_race",
	  "uf_dev_close racing file calls and file open/close on the device",
	  handles_dev_close_race },
	{ "handles_cache_close_race",
	  "uf_cache_close with its device and file open, racing all calls",
	  handles_cache_close_race },
	{ NULL, NULL, NULL },
};
