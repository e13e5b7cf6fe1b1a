// SPDX-License-Identifier: MIT
/*
 * tests/stress/alloc.c - page allocation under a small cache: many threads
 * competing for few frames.
 *
 * Description: the allocation contract (include/uflush.h, "-ENOMEM and
 * short writes"): uf_pwrite, uf_pread and uf_page_get never fail for want
 * of a frame while some frame is not pinned by a page holder; they wait
 * for reclaim and writeback instead.  Each run opens a cache of a few
 * frames over a scratch device and lets threads, each owning one 512 KiB
 * region of a file, write (1 byte to 221184 bytes = 54 pages, the size of
 * the reported short write), read their own region back against a model,
 * read the others' regions, and change pages through the page API.  When
 * there are fewer threads than frames, a thread may also keep one page
 * (read-only) across its next call, so that a caller's own pin is in play;
 * with as many threads as frames it holds pages only between calls, which
 * leaves every allocator at least one frame it can wait for.  Any short
 * write, short read or -ENOMEM fails the run; at the end the file (through
 * uf_pread) and the raw device must equal the model.
 *  - alloc_32_pages_8_threads: the report, 8 threads on 32 frames, several
 *    runs;
 *  - alloc_16_pages_8_16_threads: 8, 12 and 16 threads on 16 frames;
 *  - alloc_32_pages_reclaim_variants: the report's case under the other
 *    reclaim= variants (legacy, pageout, mainline).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"
#include "uflush.h"

#define AL_REGION	(512ull << 10)	/* one per thread */
#define AL_BIG_WRITE	221184u		/* 54 pages: the reported write */
#define AL_MAX_THREADS	16
#define AL_DEV_SIZE	(16ull << 20)
#define AL_DEV_OFF	(1ull << 20)
#define AL_SEED		11

struct al_run {
	struct uf_cache *cache;
	struct uf_file *file;
	unsigned int nr_threads, nr_pages;
	bool hold_across;	/* a thread may keep a page across a call */
	uint8_t *model;		/* the file; region i is thread i's */
	struct st_err err;
	uint64_t end_ms;
};

struct al_thread {
	struct al_run *run;
	unsigned int id;
	pthread_t tid;
	uint64_t rng;
	struct uf_page *held;	/* read-only, kept across one call */
	unsigned long writes, big_writes, reads, page_ops;
	uint8_t *buf;		/* AL_BIG_WRITE bytes */
};

/* The state of the cache, for the message of a failed call. */
static void al_fail_call(struct al_thread *t, const char *call, size_t len,
			 uint64_t off, ssize_t n)
{
	struct uf_cache_stats st;

	memset(&st, 0, sizeof(st));
	uf_cache_stats(t->run->cache, &st);
	st_err_set(&t->run->err,
		   "thread %u: %s(%zu @ %llu) = %zd%s%s; cache: %lu free, %lu file pages, %lu dirty, %lu writeback of %lu",
		   t->id, call, len, (unsigned long long)off, n,
		   n < 0 ? " " : " (short)", n < 0 ? strerror((int)-n) : "",
		   st.nr_free, st.nr_file_pages, st.nr_dirty, st.nr_writeback,
		   st.nr_pages);
}

/* A random range of this thread's region; big ones are the 54-page write. */
static void al_pick(struct al_thread *t, size_t *len, uint64_t *off)
{
	uint64_t base = (uint64_t)t->id * AL_REGION;

	switch (st_rand_below(&t->rng, 4)) {
	case 0:
		*len = AL_BIG_WRITE;
		break;
	case 1:
		*len = 1 + (size_t)st_rand_below(&t->rng, AL_BIG_WRITE);
		break;
	default:
		*len = 1 + (size_t)st_rand_below(&t->rng, 3 * ST_PAGE);
		break;
	}
	*off = base + st_rand_below(&t->rng, AL_REGION - *len + 1);
}

static bool al_write(struct al_thread *t)
{
	struct al_run *run = t->run;
	uint64_t off;
	size_t len;
	ssize_t n;

	al_pick(t, &len, &off);
	st_rand_bytes(&t->rng, t->buf, len);
	st_note(t->id, "uf_pwrite");
	n = uf_pwrite(run->file, t->buf, len, off);
	if (n != (ssize_t)len) {
		al_fail_call(t, "uf_pwrite", len, off, n);
		return false;
	}
	memcpy(run->model + off, t->buf, len);
	t->writes++;
	t->big_writes += len == AL_BIG_WRITE;
	return true;
}

/* Own region: checked against the model; another's: only the length. */
static bool al_read(struct al_thread *t)
{
	struct al_run *run = t->run;
	unsigned int owner = t->id;
	uint64_t off;
	size_t len;
	ssize_t n;
	long bad;

	if (st_rand_below(&t->rng, 2))
		owner = (unsigned int)st_rand_below(&t->rng, run->nr_threads);
	al_pick(t, &len, &off);
	off = off - (uint64_t)t->id * AL_REGION +
	      (uint64_t)owner * AL_REGION;
	st_note(t->id, "uf_pread");
	n = uf_pread(run->file, t->buf, len, off);
	if (n != (ssize_t)len) {
		al_fail_call(t, "uf_pread", len, off, n);
		return false;
	}
	if (owner == t->id) {
		bad = st_first_diff(t->buf, run->model + off, len);
		if (bad >= 0) {
			st_err_set(&run->err, "thread %u: uf_pread(%zu @ %llu) differs from the model at %llu",
				   t->id, len, (unsigned long long)off,
				   (unsigned long long)off +
				   (unsigned long long)bad);
			return false;
		}
	}
	t->reads++;
	return true;
}

/*
 * One page of the own region through the page API: changed (WRITE) and
 * put, or read-only and checked, and then maybe kept across the next call.
 */
static bool al_page(struct al_thread *t)
{
	struct al_run *run = t->run;
	unsigned long idx = (unsigned long)(t->id * (AL_REGION / ST_PAGE) +
		st_rand_below(&t->rng, AL_REGION / ST_PAGE));
	bool write = st_rand_below(&t->rng, 2);
	uint8_t *m = run->model + idx * ST_PAGE, *data;
	struct uf_page *pg;
	unsigned int a, len;
	int ret;

	st_note(t->id, "uf_page_get");
	ret = uf_page_get(run->file, idx, write ? UF_PAGE_WRITE : 0, &pg);
	if (ret) {
		al_fail_call(t, write ? "uf_page_get(WRITE)" : "uf_page_get",
			     ST_PAGE, idx * ST_PAGE, ret);
		return false;
	}
	data = uf_page_data(pg);
	if (!data || memcmp(data, m, ST_PAGE)) {
		st_err_set(&run->err, "thread %u: page %lu differs from the model",
			   t->id, idx);
		uf_page_put(pg);
		return false;
	}
	if (write) {
		a = (unsigned int)st_rand_below(&t->rng, ST_PAGE);
		len = 1 + (unsigned int)st_rand_below(&t->rng, ST_PAGE - a);
		st_rand_bytes(&t->rng, data + a, len);
		memcpy(m + a, data + a, len);
		ret = uf_page_set_dirty(pg);
	}
	if (!write && run->hold_across && st_rand_below(&t->rng, 2)) {
		t->held = pg;	/* put after the next call */
	} else if (uf_page_put(pg) || ret) {
		st_err_set(&run->err, "thread %u: page %lu: set_dirty/put failed",
			   t->id, idx);
		return false;
	}
	t->page_ops++;
	return true;
}

static void *al_worker(void *arg)
{
	struct uf_page *held;
	struct al_thread *t = arg;
	struct st_err *err = &t->run->err;
	bool ok;

	while (st_now_ms() < t->run->end_ms && !st_err_is_set(err)) {
		held = t->held;
		t->held = NULL;
		switch (st_rand_below(&t->rng, 8)) {
		case 0: case 1: case 2:
			ok = al_write(t);
			break;
		case 3: case 4: case 5:
			ok = al_read(t);
			break;
		default:
			ok = held ? al_read(t) : al_page(t);
			break;
		}
		if (held && uf_page_put(held)) {
			st_err_set(err, "thread %u: uf_page_put of a held page failed",
				   t->id);
			ok = false;
		}
		if (!ok)
			break;
	}
	if (t->held)
		uf_page_put(t->held);
	t->held = NULL;
	st_note(t->id, NULL);
	return NULL;
}

static enum st_result al_check_end(struct st_ctx *ctx, struct al_run *run,
				   const char *path, size_t file_len)
{
	uint8_t *buf = st_alloc(file_len);
	struct uf_cache_stats st;
	ssize_t n;
	long bad;
	int ret;

	if (!buf)
		return st_fail(ctx, "out of memory");
	ret = uf_sync(run->cache);
	if (ret) {
		free(buf);
		return st_fail(ctx, "uf_sync: %s", strerror(-ret));
	}
	uf_cache_stats(run->cache, &st);
	if (st.nr_dirty || st.nr_writeback || st.write_errors) {
		free(buf);
		return st_fail(ctx, "after uf_sync: %lu dirty, %lu writeback, %lu write errors",
			       st.nr_dirty, st.nr_writeback, st.write_errors);
	}
	n = uf_pread(run->file, buf, file_len, 0);
	bad = n == (ssize_t)file_len ?
	      st_first_diff(buf, run->model, file_len) : -1;
	if (n != (ssize_t)file_len || bad >= 0) {
		free(buf);
		return st_fail(ctx, "final uf_pread = %zd, differs from the model at %ld",
			       n, bad);
	}
	ret = st_raw_read(path, AL_DEV_OFF, buf, file_len);
	bad = ret ? -1 : st_first_diff(buf, run->model, file_len);
	free(buf);
	if (ret || bad >= 0)
		return st_fail(ctx, "raw read: %s, device differs from the model at file offset %ld",
			       strerror(-ret), bad);
	return ST_PASS;
}

/* One run: a fresh cache of @nr_pages frames, @nr_threads workers. */
static enum st_result al_one_run(struct st_ctx *ctx, const char *path,
				 unsigned int nr_pages, unsigned int nr_threads,
				 unsigned int run_nr, unsigned int ms,
				 const char *policy)
{
	size_t file_len = (size_t)nr_threads * AL_REGION;
	struct al_thread th[AL_MAX_THREADS];
	struct uf_cache_config cfg;
	unsigned long writes = 0, big = 0, reads = 0, pages = 0;
	unsigned int i, started = 0;
	struct uf_dev *dev;
	struct al_run run;
	enum st_result r;
	int ret;

	memset(&run, 0, sizeof(run));
	memset(th, 0, sizeof(th));
	st_err_init(&run.err);
	run.nr_pages = nr_pages;
	run.nr_threads = nr_threads;
	run.hold_across = nr_threads < nr_pages;
	run.model = st_alloc(file_len);
	if (!run.model) {
		r = st_fail(ctx, "out of memory");
		goto out;
	}
	r = st_prefill(ctx, path, run.model, file_len, AL_DEV_OFF,
		       AL_SEED + run_nr);
	if (r != ST_PASS)
		goto out;
	st_cache_config(&cfg, nr_pages, 8, 20, 10);
	cfg.policy = policy;
	r = st_open_files(ctx, &cfg, path, &run.cache, &dev, &run.file, 1,
			  AL_DEV_OFF, file_len);
	if (r != ST_PASS)
		goto out;

	run.end_ms = st_now_ms() + ms;
	for (i = 0; i < nr_threads; i++) {
		th[i].run = &run;
		th[i].id = i;
		th[i].rng = st_mix(ctx->seed * 6151 + run_nr * 131 + i);
		th[i].buf = st_alloc(AL_BIG_WRITE);
		if (!th[i].buf ||
		    (ret = pthread_create(&th[i].tid, NULL, al_worker,
					  &th[i]))) {
			st_err_set(&run.err, "thread %u: cannot start", i);
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(th[i].tid, NULL);
		writes += th[i].writes;
		big += th[i].big_writes;
		reads += th[i].reads;
		pages += th[i].page_ops;
	}
	r = st_err_result(&run.err, ctx);
	if (r == ST_PASS)
		r = al_check_end(ctx, &run, path, file_len);
	if (r == ST_PASS)
		r = st_close_cache(ctx, &run.cache, NULL);
	fprintf(stderr, "  %s: run %u, %u pages, %u threads%s%s: %lu writes (%lu of 54 pages), %lu reads, %lu page ops: %s\n",
		ctx->name, run_nr, nr_pages, nr_threads, policy ? ", " : "",
		policy ? policy : "", writes, big, reads,
		pages, r == ST_PASS ? "ok" : ctx->why);
out:
	st_run_put(run.cache, run.model, &run.err);
	for (i = 0; i < nr_threads; i++)
		free(th[i].buf);
	return r;
}

/*
 * @nr_runs runs of each thread count in @threads (0-terminated), each
 * @ms long (scaled); all of them run even after a failure, so the message
 * says how many failed.
 */
static enum st_result al_runs(struct st_ctx *ctx, unsigned int nr_pages,
			      const unsigned int *threads,
			      unsigned int nr_runs, unsigned int ms,
			      const char *policy)
{
	unsigned int i, k, n = 0, failed = 0;
	struct uf_testdev td;
	char first[512] = "";
	enum st_result r;

	r = st_dev_get(ctx, AL_DEV_SIZE, &td);
	if (r != ST_PASS)
		return r;
	for (k = 0; threads[k]; k++) {
		for (i = 0; i < nr_runs; i++, n++) {
			r = al_one_run(ctx, td.path, nr_pages, threads[k], n,
				       st_scaled(ctx, ms), policy);
			if (r == ST_PASS)
				continue;
			if (!failed++)
				snprintf(first, sizeof(first), "%s", ctx->why);
		}
	}
	st_dev_put(&td);
	if (failed)
		return st_fail(ctx, "%u of %u runs failed; first: %s", failed,
			       n, first);
	return ST_PASS;
}

static enum st_result alloc_32_pages_8_threads(struct st_ctx *ctx)
{
	static const unsigned int threads[] = { 8, 0 };

	return al_runs(ctx, 32, threads, 6, 2000, NULL);
}

static enum st_result alloc_16_pages_8_16_threads(struct st_ctx *ctx)
{
	static const unsigned int threads[] = { 8, 12, 16, 0 };

	return al_runs(ctx, 16, threads, 2, 2000, NULL);
}

/*
 * The contract holds whatever reclaim does with dirty pages: legacy
 * writes them from reclaim (pageout()), pageout queues seed 003's works
 * and waits in reclaim_wait(), mainline wakes the flushers and
 * throttles.  (Without a memory domain no variant may fail.)
 */
static enum st_result alloc_32_pages_reclaim_variants(struct st_ctx *ctx)
{
	static const unsigned int threads[] = { 8, 0 };
	static const char *const specs[] = {
		"linux-3.2,reclaim=legacy", "linux-3.2,reclaim=pageout",
		"linux-3.2,reclaim=mainline",
	};
	enum st_result r = ST_PASS, r1;
	unsigned int i;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		r1 = al_runs(ctx, 32, threads, 2, 1500, specs[i]);
		if (r1 != ST_PASS && r == ST_PASS)
			r = r1;
	}
	return r;
}

const struct st_scenario st_alloc_scenarios[] = {
	{ "alloc_32_pages_8_threads",
	  "8 threads, 32 frames: no short write, no -ENOMEM, data = model",
	  alloc_32_pages_8_threads },
	{ "alloc_16_pages_8_16_threads",
	  "8/12/16 threads, 16 frames: no short write, no -ENOMEM",
	  alloc_16_pages_8_16_threads },
	{ "alloc_32_pages_reclaim_variants",
	  "8 threads, 32 frames, reclaim=legacy/pageout/mainline: no short write, no -ENOMEM",
	  alloc_32_pages_reclaim_variants },
	{ NULL, NULL, NULL },
};
