// SPDX-License-Identifier: MIT
/*
 * tests/stress/io.c - stress scenarios of the I/O layer (io/).
 *
 * Description: many threads submit batches of vectored requests to one
 * device through uf_bdev_submit() at once, each thread on its own region
 * (a run of "slots" of 1..8 pages), writing a pattern, reading it back into
 * scattered buffers, round after round; at the end the device is read raw
 * with O_DIRECT and every slot must hold the last pattern written to it.
 *  - engine_io_uring / engine_libaio / engine_psync: 8 threads, one engine
 *    each time (UF_BDEV_NO_FALLBACK), a queue shallower than what they
 *    submit (so submitters sleep for room), flushes mixed in; any error
 *    fails;
 *  - shape_eio_latency_bw: the shaping wrapper with a latency, a bandwidth
 *    cap and every Nth request failing with EIO, 4 threads submitting and
 *    a fifth stalling the completions now and then: every request must
 *    complete exactly once, exactly total/N with EIO, none before its
 *    latency, not faster than the cap, and a failed write must not reach
 *    the device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "stress.h"

#define RW_MAX_THREADS	8
#define RW_MAX_PAGES	8	/* pages per request */
#define RW_BATCH	8	/* requests per batch, flush not counted */
#define RW_MAX_SLOTS	128
#define RW_POOL_PAGES	(2 * RW_BATCH * RW_MAX_PAGES)
#define RW_WAIT_MS	30000

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct rw_slot {
	uint64_t off;		/* device offset */
	unsigned int pages;
	uint64_t seed;		/* on the device; 0: never written (zeroes) */
};

/* One batch in flight and its waiter. */
struct rw_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int pending;
};

struct rw_run;

struct rw_req {
	struct uf_io_req req;
	struct iovec iov[RW_MAX_PAGES];
	struct rw_run *run;
	struct rw_wait *w;
	struct rw_slot *slot;
	uint64_t seed;		/* what a write puts there */
	unsigned int calls;	/* end_io calls: atomic */
	int res;
	uint64_t t_submit;
	uint64_t t_done;
};

struct rw_thread {
	struct rw_run *run;
	unsigned int id;
	pthread_t tid;
	uint64_t rng;
	struct rw_slot slots[RW_MAX_SLOTS];
	unsigned int nr_slots;
	uint8_t *pool;		/* RW_POOL_PAGES page buffers */
	struct rw_req reqs[RW_BATCH + 1];
	unsigned long nr_reqs, nr_eio, nr_rounds;
	uint64_t bytes_ok;	/* moved by successful reads and writes */
};

struct rw_run {
	struct uf_bdev *b;
	struct st_err err;
	unsigned int nr_threads;
	uint64_t region;	/* bytes per thread */
	uint64_t end_ms;	/* run rounds until then ... */
	unsigned int min_rounds; /* ... but at least this many */
	bool allow_eio;		/* shape: an injected EIO is expected */
	bool flushes;		/* mix flush requests into write batches */
	uint64_t latency_ns;	/* no completion sooner after submit */
	struct rw_thread th[RW_MAX_THREADS];
};

static void rw_end_io(struct uf_io_req *req, int res)
{
	struct rw_req *r = container_of(req, struct rw_req, req);
	struct rw_wait *w = r->w;

	if (__atomic_fetch_add(&r->calls, 1, __ATOMIC_RELAXED))
		st_err_set(&r->run->err,
			   "request op %d at %llu completed twice (res %d)",
			   (int)req->op, (unsigned long long)req->offset, res);
	r->res = res;
	r->t_done = uf_now_ns();
	pthread_mutex_lock(&w->lock);
	w->pending--;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Wait for a batch; a lost completion is reported and then waited for
 * forever (freeing the requests would be a use after free): the runner's
 * watchdog fails the scenario. */
static void rw_wait_batch(struct rw_thread *t, struct rw_wait *w)
{
	struct timespec ts;
	bool told = false;

	pthread_mutex_lock(&w->lock);
	while (w->pending) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += RW_WAIT_MS / 1000;
		if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) ==
		    ETIMEDOUT && w->pending && !told) {
			fprintf(stderr, "  thread %u: %u completion(s) missing after %d s\n",
				t->id, w->pending, RW_WAIT_MS / 1000);
			st_err_set(&t->run->err,
				   "thread %u: %u completion(s) lost",
				   t->id, w->pending);
			told = true;
		}
	}
	pthread_mutex_unlock(&w->lock);
}

/* Slots of 1..RW_MAX_PAGES pages covering the thread's region. */
static void rw_layout(struct rw_thread *t)
{
	uint64_t base = t->id * t->run->region, off = 0;
	unsigned int n;

	t->nr_slots = 0;
	while (off < t->run->region && t->nr_slots < RW_MAX_SLOTS) {
		n = 1 + (unsigned int)st_rand_below(&t->rng, RW_MAX_PAGES);
		if (off + (uint64_t)n * ST_PAGE > t->run->region)
			n = (unsigned int)((t->run->region - off) / ST_PAGE);
		t->slots[t->nr_slots++] = (struct rw_slot) {
			.off = base + off,
			.pages = n,
		};
		off += (uint64_t)n * ST_PAGE;
	}
}

/*
 * Point r's iovecs at pool pages: one iovec per page from a shuffled set
 * (scattered buffers), or one iovec over a contiguous run.  Batch request
 * k owns pool pages [k * RW_MAX_PAGES * 2, +RW_MAX_PAGES * 2).
 */
static void rw_buffers(struct rw_thread *t, struct rw_req *r, unsigned int k)
{
	uint8_t *area = t->pool + (size_t)k * 2 * RW_MAX_PAGES * ST_PAGE;
	unsigned int perm[2 * RW_MAX_PAGES], i, j, tmp;
	unsigned int n = r->slot->pages;

	if (st_rand_below(&t->rng, 3) == 0) {
		r->iov[0].iov_base = area + ST_PAGE *
			st_rand_below(&t->rng, 2 * RW_MAX_PAGES - n + 1);
		r->iov[0].iov_len = (size_t)n * ST_PAGE;
		r->req.nr_iov = 1;
		return;
	}
	for (i = 0; i < 2 * RW_MAX_PAGES; i++)
		perm[i] = i;
	for (i = 2 * RW_MAX_PAGES - 1; i > 0; i--) {
		j = (unsigned int)st_rand_below(&t->rng, i + 1);
		tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	for (i = 0; i < n; i++) {
		r->iov[i].iov_base = area + (size_t)perm[i] * ST_PAGE;
		r->iov[i].iov_len = ST_PAGE;
	}
	r->req.nr_iov = n;
}

static bool zeroes(const void *buf, size_t len)
{
	const uint64_t *p = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (p[i])
			return false;
	return true;
}

/* A read's buffers against what its slot should hold. */
static bool rw_verify_read(struct rw_thread *t, struct rw_req *r)
{
	unsigned int i, page = 0, pages;
	uint64_t off = r->slot->off;
	long bad = -1;
	uint8_t *p;

	for (i = 0; i < r->req.nr_iov && bad < 0; i++) {
		p = r->iov[i].iov_base;
		pages = (unsigned int)(r->iov[i].iov_len / ST_PAGE);
		if (r->slot->seed)
			bad = st_check(p, r->iov[i].iov_len,
				       off + (uint64_t)page * ST_PAGE,
				       r->slot->seed);
		else if (!zeroes(p, r->iov[i].iov_len))
			bad = 0;
		page += pages;
		if (bad >= 0)
			bad += (long)(page - pages) * ST_PAGE;
	}
	if (bad < 0)
		return true;
	st_err_set(&t->run->err,
		   "thread %u: read of [%llu,+%u pages) differs at byte %ld (want seed %llu)",
		   t->id, (unsigned long long)off, r->slot->pages, bad,
		   (unsigned long long)r->slot->seed);
	return false;
}

/* Submit one batch of slots[first, first+nr) as op, wait, judge. */
static bool rw_batch(struct rw_thread *t, enum uf_io_op op,
		     unsigned int first, unsigned int nr, bool flush)
{
	struct rw_run *run = t->run;
	struct uf_io_req *batch[RW_BATCH + 1];
	struct rw_wait w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	unsigned int k, n = 0, i;
	struct rw_req *r;
	uint64_t now, dev_off;
	bool ok = true;
	int ret;

	for (k = 0; k < nr; k++) {
		r = &t->reqs[k];
		memset(r, 0, sizeof(*r));
		r->run = run;
		r->w = &w;
		r->slot = &t->slots[first + k];
		r->req.op = op;
		r->req.offset = r->slot->off;
		r->req.iov = r->iov;
		r->req.end_io = rw_end_io;
		rw_buffers(t, r, k);
		if (op == UF_IO_WRITE) {
			r->seed = ((uint64_t)(t->id + 1) << 24) |
				  (t->nr_rounds + 1);
			dev_off = r->slot->off;
			for (i = 0; i < r->req.nr_iov; i++) {
				st_fill(r->iov[i].iov_base, r->iov[i].iov_len,
					dev_off, r->seed);
				dev_off += r->iov[i].iov_len;
			}
		} else {
			for (i = 0; i < r->req.nr_iov; i++)
				memset(r->iov[i].iov_base, 0xa5,
				       r->iov[i].iov_len);
		}
		batch[n++] = &r->req;
	}
	if (flush) {
		r = &t->reqs[n];
		memset(r, 0, sizeof(*r));
		r->run = run;
		r->w = &w;
		r->req.op = UF_IO_FLUSH;
		r->req.end_io = rw_end_io;
		batch[n++] = &r->req;
	}
	w.pending = n;
	now = uf_now_ns();
	for (k = 0; k < n; k++)
		t->reqs[k].t_submit = now;
	st_note(t->id, "uf_bdev_submit");
	ret = uf_bdev_submit(run->b, batch, n);
	if (ret) {
		st_err_set(&run->err, "thread %u: uf_bdev_submit(%u): %s",
			   t->id, n, strerror(-ret));
		return false;
	}
	st_note(t->id, "waiting for its batch's completions");
	rw_wait_batch(t, &w);

	for (k = 0; k < n && ok; k++) {
		r = &t->reqs[k];
		t->nr_reqs++;
		if (__atomic_load_n(&r->calls, __ATOMIC_RELAXED) != 1) {
			st_err_set(&run->err, "thread %u: end_io ran %u times",
				   t->id, r->calls);
			ok = false;
			break;
		}
		if (r->t_done - r->t_submit < run->latency_ns) {
			st_err_set(&run->err,
				   "thread %u: completed after %llu us, before the %llu us latency",
				   t->id, (unsigned long long)
				   (r->t_done - r->t_submit) / 1000,
				   (unsigned long long)run->latency_ns / 1000);
			ok = false;
			break;
		}
		if (r->res == -EIO && run->allow_eio) {
			t->nr_eio++;
			continue;	/* a failed write left the old data */
		}
		if (r->req.op == UF_IO_FLUSH) {
			if (r->res) {
				st_err_set(&run->err, "thread %u: flush: %s",
					   t->id, strerror(-r->res));
				ok = false;
			}
			continue;
		}
		if (r->res != (int)r->req.len) {
			st_err_set(&run->err,
				   "thread %u: op %d of %zu bytes at %llu: res %d (%s)",
				   t->id, (int)r->req.op, r->req.len,
				   (unsigned long long)r->req.offset, r->res,
				   r->res < 0 ? strerror(-r->res) : "short");
			ok = false;
			break;
		}
		t->bytes_ok += r->req.len;
		if (op == UF_IO_WRITE)
			r->slot->seed = r->seed;
		else
			ok = rw_verify_read(t, r);
	}
	pthread_cond_destroy(&w.cond);
	pthread_mutex_destroy(&w.lock);
	return ok;
}

/* A write pass over the region, then a read pass, in batches. */
static bool rw_round(struct rw_thread *t)
{
	unsigned int first, nr;
	bool flush;

	for (first = 0; first < t->nr_slots; first += nr) {
		nr = 1 + (unsigned int)st_rand_below(&t->rng, RW_BATCH);
		if (nr > t->nr_slots - first)
			nr = t->nr_slots - first;
		flush = t->run->flushes && !st_rand_below(&t->rng, 4);
		if (!rw_batch(t, UF_IO_WRITE, first, nr, flush))
			return false;
	}
	for (first = 0; first < t->nr_slots; first += nr) {
		nr = 1 + (unsigned int)st_rand_below(&t->rng, RW_BATCH);
		if (nr > t->nr_slots - first)
			nr = t->nr_slots - first;
		if (!rw_batch(t, UF_IO_READ, first, nr, false))
			return false;
	}
	t->nr_rounds++;
	return true;
}

static void *rw_thread_fn(void *arg)
{
	struct rw_thread *t = arg;

	while (!st_err_is_set(&t->run->err) &&
	       (t->nr_rounds < t->run->min_rounds ||
		st_now_ms() < t->run->end_ms)) {
		if (!rw_round(t))
			break;
	}
	st_note(t->id, NULL);
	return NULL;
}

/* Start the threads, join them. */
static enum st_result rw_go(struct st_ctx *ctx, struct rw_run *run)
{
	unsigned int i, started;
	struct rw_thread *t;

	for (i = 0; i < run->nr_threads; i++) {
		t = &run->th[i];
		t->run = run;
		t->id = i;
		t->rng = st_mix(ctx->seed * 131 + i);
		t->pool = st_alloc((size_t)RW_POOL_PAGES * ST_PAGE);
		if (!t->pool)
			return st_fail(ctx, "out of memory");
		rw_layout(t);
	}
	for (started = 0; started < run->nr_threads; started++) {
		if (!st_spawn(&run->err, &run->th[started].tid, rw_thread_fn,
			      &run->th[started]))
			break;
	}
	for (i = 0; i < started; i++)
		pthread_join(run->th[i].tid, NULL);
	return st_err_result(&run->err, ctx);
}

/* Every slot of every thread, read raw, holds its last pattern. */
static enum st_result rw_verify_device(struct st_ctx *ctx,
				       struct rw_run *run, const char *path)
{
	size_t len = (size_t)run->region * run->nr_threads;
	uint8_t *buf = st_alloc(len);
	enum st_result r = ST_PASS;
	struct rw_slot *s;
	unsigned int i, j;
	long bad;
	int ret;

	if (!buf)
		return st_fail(ctx, "out of memory");
	ret = st_raw_read(path, 0, buf, len);
	if (ret) {
		free(buf);
		return st_fail(ctx, "raw read of %s: %s", path, strerror(-ret));
	}
	for (i = 0; i < run->nr_threads && r == ST_PASS; i++) {
		for (j = 0; j < run->th[i].nr_slots && r == ST_PASS; j++) {
			s = &run->th[i].slots[j];
			size_t n = (size_t)s->pages * ST_PAGE;

			if (s->seed)
				bad = st_check(buf + s->off, n, s->off,
					       s->seed);
			else
				bad = zeroes(buf + s->off, n) ? -1 : 0;
			if (bad >= 0)
				r = st_fail(ctx,
					    "raw device differs at %llu (thread %u slot %u, seed %llu)",
					    (unsigned long long)s->off +
					    (unsigned long long)bad, i, j,
					    (unsigned long long)s->seed);
		}
	}
	free(buf);
	return r;
}

static void rw_free(struct rw_run *run)
{
	unsigned int i;

	for (i = 0; i < RW_MAX_THREADS; i++)
		free(run->th[i].pool);
	pthread_mutex_destroy(&run->err.lock);
	free(run);
}

/*
 * A scratch device of dev_size (*td) and a run of nr_threads on it in
 * *out: ST_PASS, or why not (with nothing left to release).
 */
static enum st_result rw_new(struct st_ctx *ctx, uint64_t dev_size,
			     unsigned int nr_threads, uint64_t region,
			     struct uf_testdev *td, struct rw_run **out)
{
	enum st_result r = st_dev_get(ctx, dev_size, td);
	struct rw_run *run;

	if (r != ST_PASS)
		return r;
	run = calloc(1, sizeof(*run));
	if (!run) {
		st_dev_put(td);
		return st_fail(ctx, "out of memory");
	}
	st_err_init(&run->err);
	run->nr_threads = nr_threads;
	run->region = region;
	*out = run;
	return ST_PASS;
}

/* A scenario's device, how it is opened, and how its threads run */
struct rw_setup {
	uint64_t dev_size, region;
	unsigned int nr_threads, queue_depth, flags;
	const char *engine;		/* NULL: the default */
	const struct uf_io_shape *shape;
	unsigned int run_ms, min_rounds;	/* run_ms before st_scaled() */
	bool flushes, allow_eio;
	uint64_t latency_ns;
};

/*
 * rw_new() and the device opened as su says: ST_PASS with *out holding
 * it, else ST_FAIL, or ST_SKIP for an engine this machine lacks; nothing
 * is left to release then.
 */
static enum st_result rw_open(struct st_ctx *ctx, const struct rw_setup *su,
			      struct uf_testdev *td, struct rw_run **out)
{
	const char *engine = su->engine ? su->engine : "shaped";
	struct uf_bdev_config cfg;
	struct rw_run *run = NULL;
	enum st_result r;
	int ret;

	r = rw_new(ctx, su->dev_size, su->nr_threads, su->region, td, &run);
	if (r != ST_PASS)
		return r;
	uf_bdev_config_init(&cfg);
	if (su->engine)
		cfg.engine = su->engine;
	cfg.queue_depth = su->queue_depth;
	cfg.flags = su->flags;
	cfg.shape = su->shape;
	ret = uf_bdev_open(td->path, &cfg, &run->b);
	if (su->engine &&
	    (ret == -ENOSYS || ret == -EPERM || ret == -EOPNOTSUPP))
		r = st_skip(ctx, "engine %s unavailable here: %s", engine,
			    strerror(-ret));
	else if (ret)
		r = st_fail(ctx, "uf_bdev_open(%s, %s): %s", td->path, engine,
			    strerror(-ret));
	else if (su->engine && strcmp(uf_bdev_engine_name(run->b), engine)) {
		r = st_fail(ctx, "asked for %s, got %s", engine,
			    uf_bdev_engine_name(run->b));
		uf_bdev_close(run->b);
	}
	if (r != ST_PASS) {
		rw_free(run);
		st_dev_put(td);
		return r;
	}
	run->end_ms = st_now_ms() + st_scaled(ctx, su->run_ms);
	run->min_rounds = su->min_rounds;
	run->flushes = su->flushes;
	run->allow_eio = su->allow_eio;
	run->latency_ns = su->latency_ns;
	*out = run;
	return ST_PASS;
}

/* ------------------------------------------------------------------ */
/* Each engine, 8 threads                                              */

#define ENG_THREADS	8
#define ENG_REGION	(96ull * ST_PAGE)
#define ENG_QD		16

static const struct rw_setup eng_setup = {
	.dev_size = 8 * ST_MIB, .region = ENG_REGION, .nr_threads = ENG_THREADS,
	.queue_depth = ENG_QD, .flags = UF_BDEV_NO_FALLBACK,
	.run_ms = 1500, .min_rounds = 2, .flushes = true,
};

static enum st_result engine_run(struct st_ctx *ctx, const char *engine)
{
	struct rw_setup su = eng_setup;
	struct uf_testdev td;
	enum st_result r;
	struct rw_run *run = NULL;
	unsigned long reqs = 0;
	unsigned int i;
	int ret;

	su.engine = engine;
	r = rw_open(ctx, &su, &td, &run);
	if (r != ST_PASS)
		return r;
	r = rw_go(ctx, run);
	ret = uf_bdev_close(run->b);
	if (r == ST_PASS && ret)
		r = st_fail(ctx, "uf_bdev_close: %s", strerror(-ret));
	if (r == ST_PASS)
		r = rw_verify_device(ctx, run, td.path);
	for (i = 0; i < run->nr_threads; i++)
		reqs += run->th[i].nr_reqs;
	if (r == ST_PASS)
		fprintf(stderr, "  %s: %lu requests from %u threads\n",
			ctx->name, reqs, run->nr_threads);
	rw_free(run);
	st_dev_put(&td);
	return r;
}

static enum st_result engine_io_uring(struct st_ctx *ctx)
{
	return engine_run(ctx, "io_uring");
}

static enum st_result engine_libaio(struct st_ctx *ctx)
{
	return engine_run(ctx, "libaio");
}

static enum st_result engine_psync(struct st_ctx *ctx)
{
	return engine_run(ctx, "psync");
}

/* ------------------------------------------------------------------ */
/* The shaping wrapper: latency, bandwidth, every Nth EIO, stalls      */

#define SH_THREADS	4
#define SH_REGION	(64ull * ST_PAGE)
#define SH_QD		16
#define SH_LATENCY_US	1500
#define SH_BW		(48ull << 20)
#define SH_NTH		7

static const struct rw_setup sh_setup = {
	.dev_size = 4 * ST_MIB, .region = SH_REGION, .nr_threads = SH_THREADS,
	.queue_depth = SH_QD, .flags = UF_BDEV_SHAPED,
	.run_ms = 1500, .min_rounds = 3, .allow_eio = true,
	.latency_ns = SH_LATENCY_US * 1000ull,
};

struct sh_staller {
	struct rw_run *run;
	bool stop;		/* atomic */
	unsigned int stalls;
};

static void *sh_staller_fn(void *arg)
{
	struct sh_staller *s = arg;
	int ret;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		st_sleep_ms(150);
		ret = uf_bdev_stall(s->run->b, 20);
		if (ret) {
			st_err_set(&s->run->err, "uf_bdev_stall: %s",
				   strerror(-ret));
			break;
		}
		s->stalls++;
	}
	return NULL;
}

static enum st_result shape_eio_latency_bw(struct st_ctx *ctx)
{
	struct uf_io_shape shape = {
		.bw_bytes_per_sec = SH_BW,
		.latency_us = SH_LATENCY_US,
		.eio_every_nth = SH_NTH,
	};
	struct rw_setup su = sh_setup;
	struct sh_staller stl = { 0 };
	unsigned long reqs = 0, eio = 0;
	uint64_t bytes = 0, t0, elapsed, min_ns;
	struct uf_testdev td;
	struct rw_run *run = NULL;
	pthread_t stl_tid;
	enum st_result r;
	unsigned int i;
	int ret;

	su.shape = &shape;
	r = rw_open(ctx, &su, &td, &run);
	if (r != ST_PASS)
		return r;
	stl.run = run;
	t0 = uf_now_ns();
	ret = pthread_create(&stl_tid, NULL, sh_staller_fn, &stl);
	if (ret) {
		uf_bdev_close(run->b);
		r = st_fail(ctx, "pthread_create: %s", strerror(ret));
		goto out;
	}
	r = rw_go(ctx, run);
	elapsed = uf_now_ns() - t0;
	__atomic_store_n(&stl.stop, true, __ATOMIC_RELEASE);
	pthread_join(stl_tid, NULL);
	ret = uf_bdev_close(run->b);
	if (r == ST_PASS)
		r = st_err_result(&run->err, ctx);
	if (r == ST_PASS && ret)
		r = st_fail(ctx, "uf_bdev_close: %s", strerror(-ret));
	if (r != ST_PASS)
		goto out;

	for (i = 0; i < run->nr_threads; i++) {
		reqs += run->th[i].nr_reqs;
		eio += run->th[i].nr_eio;
		bytes += run->th[i].bytes_ok;
	}
	if (eio != reqs / SH_NTH) {
		r = st_fail(ctx, "%lu of %lu requests failed with EIO, want exactly %lu (every %uth)",
			    eio, reqs, reqs / SH_NTH, SH_NTH);
		goto out;
	}
	/* no burst: all but the first request's worth waited for the cap */
	if (bytes > RW_MAX_PAGES * ST_PAGE) {
		min_ns = (bytes - RW_MAX_PAGES * ST_PAGE) * 1000000000ull /
			 SH_BW;
		if (elapsed < min_ns) {
			r = st_fail(ctx, "%llu bytes in %llu ms: faster than the %llu MiB/s cap",
				    (unsigned long long)bytes,
				    (unsigned long long)elapsed / 1000000,
				    (unsigned long long)(SH_BW >> 20));
			goto out;
		}
	}
	r = rw_verify_device(ctx, run, td.path);
	if (r == ST_PASS)
		fprintf(stderr, "  %s: %lu requests, %lu EIO, %llu KiB in %llu ms, %u stalls\n",
			ctx->name, reqs, eio, (unsigned long long)bytes >> 10,
			(unsigned long long)elapsed / 1000000, stl.stalls);
out:
	rw_free(run);
	st_dev_put(&td);
	return r;
}

const struct st_scenario st_io_scenarios[] = {
	{ "engine_io_uring", "8 threads, vectored batches, io_uring",
	  engine_io_uring },
	{ "engine_libaio", "8 threads, vectored batches, libaio",
	  engine_libaio },
	{ "engine_psync", "8 threads, vectored batches, psync",
	  engine_psync },
	{ "shape_eio_latency_bw",
	  "4 threads through latency + bandwidth cap + every-7th EIO + stalls",
	  shape_eio_latency_bw },
	{ NULL, NULL, NULL },
};
