// SPDX-License-Identifier: MIT
/*
 * tests/stress/cache.c - stress scenarios of the cache (engine/) through
 * the public API, with the flusher threads running.
 *
 * Description: threads use uflush as an embedder would while the flushers
 * work, and the result is judged against a model and the raw device:
 *  - cache_writers_fsync_sync: 6 threads uf_pwrite() at random unaligned
 *    places of 8 files through a 512-page cache (4x smaller than the data:
 *    reclaim and dirty throttling run), each thread owning interleaved
 *    512-byte sectors of shared pages (read-modify-write of the same pages
 *    from many threads) and 16 KiB chunks, while one thread uf_fsync()s
 *    random files and one calls uf_sync() and reads the statistics; after
 *    a last uf_sync the raw device and uf_pread must equal the model;
 *  - page_api_threads: 4 threads use uf_page_get/set_dirty/put (WRITE,
 *    WRITE|NOREAD, read-only, NOCREATE) and uf_pread on disjoint pages of
 *    one file through a cache 4x smaller than it, with a thread fsyncing;
 *  - open_close_churn: while two threads keep cache A's flusher busy,
 *    one thread opens, writes, closes and reopens files of A's device, and
 *    one opens and closes a second cache B, its device and its files (also
 *    by closing the device with files open: -EBUSY, and by closing the
 *    whole cache with everything open); what each closed file wrote must be
 *    on the raw device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"
#include "uflush.h"

/* ------------------------------------------------------------------ */
/* Writers, fsync and sync through a small cache                       */

#define CF_FILES	8
#define CF_FILE_LEN	(1ull << 20)
#define CF_STRIPED	(512ull << 10)	/* first half: 512-byte sectors */
#define CF_SECTOR	512u
#define CF_CHUNK	(16u << 10)	/* second half: 16 KiB chunks */
#define CF_THREADS	6
#define CF_CACHE	512
#define CF_DEV_SIZE	(16ull << 20)

struct cf_run {
	struct uf_cache *cache;
	struct uf_dev *dev;
	struct uf_file *files[CF_FILES];
	uint8_t *model;		/* the device [0, CF_FILES * CF_FILE_LEN) */
	struct st_err err;
	uint64_t end_ms;
	bool stop;		/* atomic: helpers stop */
};

struct cf_thread {
	struct st_worker w;	/* first: st_start_workers() */
	struct cf_run *run;
	unsigned long writes, bytes, reads, calls;
	uint8_t buf[CF_CHUNK];
	uint8_t rbuf[CF_CHUNK];
};

/* A random place that thread id owns in file f: [*off, +*len). */
static void cf_pick(struct cf_thread *t, unsigned int f, uint64_t *off,
		    size_t *len)
{
	uint64_t first = (t->w.id + CF_THREADS - f % CF_THREADS) % CF_THREADS;
	uint64_t n, base, a;

	if (st_rand_below(&t->w.rng, 2)) {
		n = (CF_STRIPED / CF_SECTOR - first + CF_THREADS - 1) /
		    CF_THREADS;
		base = (first + CF_THREADS * st_rand_below(&t->w.rng, n)) *
		       CF_SECTOR;
		a = st_rand_below(&t->w.rng, CF_SECTOR);
		*len = 1 + (size_t)st_rand_below(&t->w.rng, CF_SECTOR - a);
	} else {
		n = ((CF_FILE_LEN - CF_STRIPED) / CF_CHUNK - first +
		     CF_THREADS - 1) / CF_THREADS;
		base = CF_STRIPED + (first + CF_THREADS *
				     st_rand_below(&t->w.rng, n)) * CF_CHUNK;
		a = st_rand_below(&t->w.rng, CF_CHUNK);
		*len = 1 + (size_t)st_rand_below(&t->w.rng, CF_CHUNK - a);
	}
	*off = base + a;
}

static void *cf_writer(void *arg)
{
	struct cf_thread *t = arg;
	struct cf_run *run = t->run;
	unsigned int f;
	uint64_t off;
	uint8_t *m;
	size_t len;
	ssize_t n;
	long bad;

	while (st_now_ms() < run->end_ms && !st_err_is_set(&run->err)) {
		f = (unsigned int)st_rand_below(&t->w.rng, CF_FILES);
		cf_pick(t, f, &off, &len);
		m = run->model + f * CF_FILE_LEN + off;
		st_rand_bytes(&t->w.rng, t->buf, len);
		st_note(t->w.id, "uf_pwrite");
		n = uf_pwrite(run->files[f], t->buf, len, off);
		if (n != (ssize_t)len) {
			st_err_set(&run->err, "writer %u: uf_pwrite(file %u, %zu @ %llu) = %zd",
				   t->w.id, f, len, (unsigned long long)off, n);
			break;
		}
		memcpy(m, t->buf, len);
		t->writes++;
		t->bytes += len;
		if (st_rand_below(&t->w.rng, 16))
			continue;
		/* read back what this thread owns: nobody else writes it */
		st_note(t->w.id, "uf_pread");
		n = uf_pread(run->files[f], t->rbuf, len, off);
		bad = n == (ssize_t)len ? st_first_diff(t->rbuf, m, len) : -1;
		if (n != (ssize_t)len || bad >= 0) {
			st_err_set(&run->err, "writer %u: uf_pread(file %u, %zu @ %llu) = %zd, differs at %ld",
				   t->w.id, f, len, (unsigned long long)off, n,
				   bad);
			break;
		}
		t->reads++;
	}
	st_note(t->w.id, NULL);
	return NULL;
}

static void *cf_fsyncer(void *arg)
{
	struct cf_thread *t = arg;
	struct cf_run *run = t->run;
	unsigned int f;
	int ret;

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE)) {
		f = (unsigned int)st_rand_below(&t->w.rng, CF_FILES);
		st_note(t->w.id, "uf_fsync");
		ret = uf_fsync(run->files[f]);
		if (ret) {
			st_err_set(&run->err, "uf_fsync(file %u): %s", f,
				   strerror(-ret));
			break;
		}
		t->calls++;
		st_sleep_ms(2);
	}
	st_note(t->w.id, NULL);
	return NULL;
}

static void *cf_syncer(void *arg)
{
	struct cf_thread *t = arg;
	struct cf_run *run = t->run;
	struct uf_cache_stats cs;
	struct uf_dev_stats ds;
	int ret;

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE)) {
		st_note(t->w.id, "uf_sync");
		ret = uf_sync(run->cache);
		if (ret) {
			st_err_set(&run->err, "uf_sync: %s", strerror(-ret));
			break;
		}
		st_note(t->w.id, "uf_cache_stats/uf_dev_stats");
		ret = uf_cache_stats(run->cache, &cs);
		if (!ret)
			ret = uf_dev_stats(run->dev, &ds);
		if (ret) {
			st_err_set(&run->err, "stats: %s", strerror(-ret));
			break;
		}
		t->calls++;
		st_sleep_ms(40);
	}
	st_note(t->w.id, NULL);
	return NULL;
}

/* CF_THREADS writers, an fsyncer, a syncer */
static void *(*const cf_fns[])(void *) = {
	cf_writer, cf_fsyncer, cf_syncer, NULL
};

static enum st_result cache_writers_fsync_sync(struct st_ctx *ctx)
{
	struct cf_thread *th;
	struct uf_cache_config cfg;
	struct uf_cache_stats st;
	struct uf_testdev td;
	struct cf_run run;
	unsigned long writes = 0, bytes = 0;
	unsigned int i, started = 0;
	enum st_result r;
	char what[64];

	memset(&run, 0, sizeof(run));
	st_err_init(&run.err);
	r = st_dev_get(ctx, CF_DEV_SIZE, &td);
	if (r != ST_PASS)
		return r;
	th = calloc(CF_THREADS + 2, sizeof(*th));
	run.model = st_alloc(CF_FILES * CF_FILE_LEN);
	if (!th || !run.model) {
		r = st_fail(ctx, "out of memory");
		goto out;
	}
	/* the device starts with a pattern, so read-modify-write shows */
	r = st_prefill(ctx, td.path, run.model, CF_FILES * CF_FILE_LEN, 0, 7);
	if (r != ST_PASS)
		goto out;

	st_cache_config(&cfg, CF_CACHE, 32, 50, 20);
	r = st_open_files(ctx, &cfg, td.path, &run.cache, &run.dev, run.files,
			  CF_FILES, 0, CF_FILE_LEN);
	if (r != ST_PASS)
		goto out;

	run.end_ms = st_now_ms() + st_scaled(ctx, 3000);
	for (i = 0; i < CF_THREADS + 2; i++)
		th[i].run = &run;
	started = st_start_workers(&run.err, th, sizeof(*th), CF_THREADS,
				   cf_fns, ctx->seed * 977);
	if (started < CF_THREADS + 2)
		__atomic_store_n(&run.end_ms, 0, __ATOMIC_RELAXED);
	for (i = 0; i < started && i < CF_THREADS; i++)
		pthread_join(th[i].w.tid, NULL);
	__atomic_store_n(&run.stop, true, __ATOMIC_RELEASE);
	for (i = CF_THREADS; i < started; i++)
		pthread_join(th[i].w.tid, NULL);
	r = st_err_result(&run.err, ctx);
	if (r != ST_PASS)
		goto out;

	for (i = 0; i < CF_THREADS; i++) {
		writes += th[i].writes;
		bytes += th[i].bytes;
	}
	r = st_sync_clean(ctx, run.cache, NULL);
	if (r != ST_PASS)
		goto out;
	uf_cache_stats(run.cache, &st);
	if (st.nr_dirtied <= CF_CACHE) {
		r = st_fail(ctx, "only %lu pages dirtied: too little to need reclaim in a %u-page cache",
			    st.nr_dirtied, CF_CACHE);
		goto out;
	}
	r = st_expect_raw(ctx, td.path, 0, run.model, CF_FILES * CF_FILE_LEN,
		          "after uf_sync");
	for (i = 0; i < CF_FILES && r == ST_PASS; i++) {
		snprintf(what, sizeof(what), "file %u after uf_sync", i);
		r = st_expect_file(ctx, run.files[i], run.model + i * CF_FILE_LEN,
				   CF_FILE_LEN, what);
	}
	if (r != ST_PASS)
		goto out;
	r = st_close_cache(ctx, &run.cache, NULL);
	if (r != ST_PASS)
		goto out;
	r = st_expect_raw(ctx, td.path, 0, run.model, CF_FILES * CF_FILE_LEN,
		          "after uf_cache_close");
	if (r == ST_PASS)
		fprintf(stderr, "  %s: %lu writes, %lu KiB, %lu pages dirtied, %lu written; %lu fsyncs, %lu syncs\n",
			ctx->name, writes, bytes >> 10, st.nr_dirtied,
			st.nr_written, th[CF_THREADS].calls,
			th[CF_THREADS + 1].calls);
out:
	st_run_put(run.cache, run.model, &run.err);
	free(th);
	st_dev_put(&td);
	return r;
}

/* ------------------------------------------------------------------ */
/* The zero-copy page API from several threads                         */

#define PA_THREADS	4
#define PA_PAGES	1024
#define PA_CACHE	256
#define PA_DEV_OFF	(1ull << 20)
#define PA_DEV_SIZE	(8ull << 20)

struct pa_run {
	struct uf_cache *cache;
	struct uf_file *file;
	uint8_t *model;		/* the file, page by page */
	struct st_err err;
	uint64_t end_ms;
	bool stop;		/* atomic: the fsyncer stops */
};

struct pa_thread {
	struct st_worker w;	/* first: st_start_workers() */
	struct pa_run *run;
	unsigned long ops[5];
	uint8_t buf[ST_PAGE];
};

enum { PA_WRITE, PA_WRITE_NOREAD, PA_READ, PA_NOCREATE, PA_PREAD };

static const char *const pa_op_names[] = {
	"uf_page_get(WRITE)", "uf_page_get(WRITE|NOREAD)", "uf_page_get(0)",
	"uf_page_get(NOCREATE)", "uf_pread",
};

static bool pa_is_zero(const uint8_t *p)
{
	unsigned int i;

	for (i = 0; i < ST_PAGE; i++)
		if (p[i])
			return false;
	return true;
}

/* One operation on page idx, which this thread owns. */
static bool pa_op(struct pa_thread *t, unsigned long idx, unsigned int op)
{
	struct pa_run *run = t->run;
	uint8_t *m = run->model + idx * ST_PAGE, *data;
	unsigned int flags = 0, a, len;
	struct uf_page *pg = NULL;
	const char *bad = NULL;
	ssize_t n;
	int ret;

	if (op == PA_PREAD) {
		n = uf_pread(run->file, t->buf, ST_PAGE, idx * ST_PAGE);
		if (n != ST_PAGE || memcmp(t->buf, m, ST_PAGE)) {
			st_err_set(&run->err, "thread %u: uf_pread(page %lu) = %zd or wrong data",
				   t->w.id, idx, n);
			return false;
		}
		return true;
	}
	if (op == PA_WRITE)
		flags = UF_PAGE_WRITE;
	else if (op == PA_WRITE_NOREAD)
		flags = UF_PAGE_WRITE | UF_PAGE_NOREAD;
	else if (op == PA_NOCREATE)
		flags = UF_PAGE_NOCREATE;
	ret = uf_page_get(run->file, idx, flags, &pg);
	if (op == PA_NOCREATE && ret == -ENOENT)
		return true;
	if (ret) {
		st_err_set(&run->err, "thread %u: uf_page_get(%lu, 0x%x): %s",
			   t->w.id, idx, flags, strerror(-ret));
		return false;
	}
	data = uf_page_data(pg);
	if (!data || (uintptr_t)data % ST_PAGE) {
		bad = "no data or misaligned";
		goto put;
	}
	switch (op) {
	case PA_WRITE:
		if (memcmp(data, m, ST_PAGE)) {
			bad = "locked page differs from the model";
			break;
		}
		a = (unsigned int)st_rand_below(&t->w.rng, ST_PAGE);
		len = 1 + (unsigned int)st_rand_below(&t->w.rng, ST_PAGE - a);
		st_rand_bytes(&t->w.rng, data + a, len);
		memcpy(m + a, data + a, len);
		ret = uf_page_set_dirty(pg);
		break;
	case PA_WRITE_NOREAD:
		/* a hit gives the cached data, a miss zeroes */
		if (memcmp(data, m, ST_PAGE) && !pa_is_zero(data)) {
			bad = "NOREAD page neither cached data nor zeroes";
			break;
		}
		st_rand_bytes(&t->w.rng, data, ST_PAGE);
		memcpy(m, data, ST_PAGE);
		ret = uf_page_set_dirty(pg);
		break;
	default:
		if (memcmp(data, m, ST_PAGE))
			bad = "page differs from the model";
		break;
	}
	if (!bad && ret)
		bad = "uf_page_set_dirty failed";
put:
	ret = uf_page_put(pg);
	if (!bad && ret)
		bad = "uf_page_put failed";
	if (bad) {
		st_err_set(&run->err, "thread %u: page %lu, flags 0x%x: %s",
			   t->w.id, idx, flags, bad);
		return false;
	}
	return true;
}

static void *pa_worker(void *arg)
{
	struct pa_thread *t = arg;
	struct pa_run *run = t->run;
	unsigned long idx;
	unsigned int op, r;

	while (st_now_ms() < run->end_ms && !st_err_is_set(&run->err)) {
		idx = t->w.id + PA_THREADS *
		      st_rand_below(&t->w.rng, PA_PAGES / PA_THREADS);
		r = (unsigned int)st_rand_below(&t->w.rng, 20);
		op = r < 8 ? PA_WRITE : r < 10 ? PA_WRITE_NOREAD :
		     r < 15 ? PA_READ : r < 17 ? PA_NOCREATE : PA_PREAD;
		st_note(t->w.id, pa_op_names[op]);
		if (!pa_op(t, idx, op))
			break;
		t->ops[op]++;
	}
	st_note(t->w.id, NULL);
	return NULL;
}

static void *pa_fsyncer(void *arg)
{
	struct pa_thread *t = arg;
	struct pa_run *run = t->run;
	int ret;

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE)) {
		st_note(t->w.id, "uf_fsync");
		ret = uf_fsync(run->file);
		if (ret) {
			st_err_set(&run->err, "uf_fsync: %s", strerror(-ret));
			break;
		}
		t->ops[0]++;
		st_sleep_ms(15);
	}
	st_note(t->w.id, NULL);
	return NULL;
}

/* PA_THREADS workers, an fsyncer */
static void *(*const pa_fns[])(void *) = { pa_worker, pa_fsyncer, NULL };

static enum st_result page_api_threads(struct st_ctx *ctx)
{
	struct pa_thread *th;
	struct uf_cache_config cfg;
	struct uf_testdev td;
	struct uf_dev *dev;
	struct pa_run run;
	unsigned long ops[5] = { 0 };
	unsigned int i, j, started = 0;
	enum st_result r;

	memset(&run, 0, sizeof(run));
	st_err_init(&run.err);
	r = st_dev_get(ctx, PA_DEV_SIZE, &td);
	if (r != ST_PASS)
		return r;
	th = calloc(PA_THREADS + 1, sizeof(*th));
	run.model = st_alloc(PA_PAGES * ST_PAGE);
	if (!th || !run.model) {
		r = st_fail(ctx, "out of memory");
		goto out;
	}
	r = st_prefill(ctx, td.path, run.model, PA_PAGES * ST_PAGE, PA_DEV_OFF,
		       3);
	if (r != ST_PASS)
		goto out;
	st_cache_config(&cfg, PA_CACHE, 0, 30, 10);
	r = st_open_files(ctx, &cfg, td.path, &run.cache, &dev, &run.file, 1,
			  PA_DEV_OFF, PA_PAGES * ST_PAGE);
	if (r != ST_PASS)
		goto out;

	run.end_ms = st_now_ms() + st_scaled(ctx, 2500);
	for (i = 0; i <= PA_THREADS; i++)
		th[i].run = &run;
	started = st_start_workers(&run.err, th, sizeof(*th), PA_THREADS,
				   pa_fns, ctx->seed * 7919);
	for (i = 0; i < started && i < PA_THREADS; i++)
		pthread_join(th[i].w.tid, NULL);
	__atomic_store_n(&run.stop, true, __ATOMIC_RELEASE);
	if (started > PA_THREADS)
		pthread_join(th[PA_THREADS].w.tid, NULL);
	r = st_err_result(&run.err, ctx);
	if (r != ST_PASS)
		goto out;

	r = st_sync_clean(ctx, run.cache, NULL);
	if (r == ST_PASS)
		r = st_expect_raw(ctx, td.path, PA_DEV_OFF, run.model,
			          PA_PAGES * ST_PAGE, "after uf_sync");
	if (r == ST_PASS)
		r = st_expect_file(ctx, run.file, run.model, PA_PAGES * ST_PAGE,
				   "after uf_sync");
	if (r != ST_PASS)
		goto out;
	r = st_close_cache(ctx, &run.cache, NULL);
	if (r != ST_PASS)
		goto out;
	for (i = 0; i < PA_THREADS; i++)
		for (j = 0; j < 5; j++)
			ops[j] += th[i].ops[j];
	fprintf(stderr, "  %s: %lu write, %lu write|noread, %lu read, %lu nocreate, %lu pread; %lu fsyncs\n",
		ctx->name, ops[0], ops[1], ops[2], ops[3], ops[4],
		th[PA_THREADS].ops[0]);
out:
	st_run_put(run.cache, run.model, &run.err);
	free(th);
	st_dev_put(&td);
	return r;
}

/* ------------------------------------------------------------------ */
/* Open and close files, devices, caches while a flusher works         */

#define OC_WRITERS	2
#define OC_WFILE_LEN	(1ull << 20)	/* writer files at [0, 2 MiB) */
#define OC_CHURN_OFF	(4ull << 20)	/* churned files of A from here */
#define OC_CHURN_LEN	(256ull << 10)
#define OC_CHURN_SLOTS	8
#define OC_B_FILES	3
#define OC_B_LEN	(192ull << 10)
#define OC_BUF_LEN	(OC_CHURN_LEN > OC_B_LEN ? OC_CHURN_LEN : OC_B_LEN)

struct oc_run {
	const char *path_a, *path_b;
	struct uf_cache *cache_a;
	struct uf_dev *dev_a;
	struct uf_file *wfiles[OC_WRITERS];
	uint8_t *model;		/* the writers' files */
	struct st_err err;
	uint64_t end_ms;
	bool stop;		/* atomic: writers stop */
	unsigned long a_cycles, b_cycles, b_caches, b_ebusy, b_cache_close;
	unsigned long b_late;	/* reopens of B that met -EBUSY first */
	uint64_t b_late_ms;	/* the longest such wait */
};

/*
 * A device closed with uf_dev_close()/uf_cache_close() must be free for
 * O_EXCL again when the call returns.  Where it is not (the io_uring
 * engine's registered file was released asynchronously), retry for up to
 * OC_REOPEN_MS, count it, and fail the scenario at the end: the rest of the
 * churn still runs.  The library's "held open exclusively elsewhere"
 * messages from those retries are not printed.
 */
#define OC_REOPEN_MS	2000

static void oc_log(void *priv, int level, const char *msg)
{
	(void)priv;
	if (strstr(msg, "held open exclusively elsewhere"))
		return;
	if (level <= 5)
		fprintf(stderr, "uflush: %s\n", msg);
}

struct oc_thread {
	struct st_worker w;	/* first: st_start_workers() */
	struct oc_run *run;
	unsigned long writes;
	uint8_t *buf;		/* OC_BUF_LEN */
	uint8_t *rbuf;		/* OC_BUF_LEN */
};

static void *oc_writer(void *arg)
{
	struct oc_thread *t = arg;
	struct oc_run *run = t->run;
	uint64_t off;
	size_t len;
	ssize_t n;

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE) &&
	       !st_err_is_set(&run->err)) {
		off = st_rand_below(&t->w.rng, OC_WFILE_LEN);
		len = 1 + (size_t)st_rand_below(&t->w.rng, 32768);
		if (len > OC_WFILE_LEN - off)
			len = (size_t)(OC_WFILE_LEN - off);
		st_rand_bytes(&t->w.rng, t->buf, len);
		st_note(t->w.id, "uf_pwrite");
		n = uf_pwrite(run->wfiles[t->w.id], t->buf, len, off);
		if (n != (ssize_t)len) {
			st_err_set(&run->err, "writer %u: uf_pwrite = %zd",
				   t->w.id, n);
			break;
		}
		memcpy(run->model + t->w.id * OC_WFILE_LEN + off, t->buf, len);
		t->writes++;
		if (st_rand_below(&t->w.rng, 64))
			continue;
		st_note(t->w.id, "uf_fsync");
		n = uf_fsync(run->wfiles[t->w.id]);
		if (n) {
			st_err_set(&run->err, "writer %u: uf_fsync: %s",
				   t->w.id, strerror((int)-n));
			break;
		}
	}
	st_note(t->w.id, NULL);
	return NULL;
}

/* Write seed's pattern to file f at [0, len); 0 or -errno. */
static int oc_fill_file(struct oc_thread *t, struct uf_file *f,
			uint64_t dev_off, size_t len, uint64_t seed)
{
	size_t done = 0, n;
	ssize_t w;

	st_fill(t->buf, len, dev_off, seed);
	while (done < len) {
		n = 1 + (size_t)st_rand_below(&t->w.rng, 40000);
		if (n > len - done)
			n = len - done;
		w = uf_pwrite(f, t->buf + done, n, done);
		if (w != (ssize_t)n)
			return w < 0 ? (int)w : -EIO;
		done += n;
	}
	return 0;
}

/* Files of device A: open, write, maybe fsync, close; reopen, read, close. */
static bool oc_churn_a_once(struct oc_thread *t, unsigned long iter)
{
	struct oc_run *run = t->run;
	unsigned int slot = (unsigned int)(iter % OC_CHURN_SLOTS);
	uint64_t off = OC_CHURN_OFF + slot * OC_CHURN_LEN;
	size_t len = (size_t)OC_CHURN_LEN -
		     ST_PAGE * (size_t)st_rand_below(&t->w.rng, 16);
	struct uf_file *f;
	const char *step;
	ssize_t n;
	long ret;

	step = "uf_file_open";
	st_note(t->w.id, step);
	ret = uf_file_open(run->dev_a, 100 + slot, off, len, NULL, NULL, &f);
	if (ret)
		goto fail;
	step = "uf_pwrite";
	st_note(t->w.id, step);
	ret = oc_fill_file(t, f, off, len, iter + 1);
	if (!ret && !st_rand_below(&t->w.rng, 2)) {
		step = "uf_fsync";
		st_note(t->w.id, step);
		ret = uf_fsync(f);
	}
	if (ret) {
		uf_file_close(f);
		goto fail;
	}
	step = "uf_file_close";
	st_note(t->w.id, step);
	ret = uf_file_close(f);
	if (ret)
		goto fail;
	step = "raw read";
	st_note(t->w.id, step);
	ret = st_raw_read(run->path_a, off, t->rbuf, len);
	if (ret)
		goto fail;
	step = "raw check after close";
	st_note(t->w.id, step);
	ret = st_check(t->rbuf, len, off, iter + 1);
	if (ret >= 0)
		goto fail;
	step = "uf_file_open (again)";
	st_note(t->w.id, step);
	ret = uf_file_open(run->dev_a, 100 + slot, off, len, NULL, NULL, &f);
	if (ret)
		goto fail;
	memset(t->rbuf, 0, len);
	st_note(t->w.id, "uf_pread (after reopen)");
	n = uf_pread(f, t->rbuf, len, 0);
	ret = n == (ssize_t)len ? st_check(t->rbuf, len, off, iter + 1) :
	      n < 0 ? (long)n : -EIO;
	st_note(t->w.id, "uf_file_close (after reopen)");
	uf_file_close(f);
	step = "uf_pread after reopen";
	st_note(t->w.id, step);
	if (ret != -1)
		goto fail;
	return true;
fail:
	st_err_set(&run->err, "churn A, iteration %lu, file at %llu: %s: %ld (%s)",
		   iter, (unsigned long long)off, step, ret,
		   ret < 0 ? strerror((int)-ret) : "data differs at that byte");
	return false;
}

static void *oc_churn_a(void *arg)
{
	struct oc_thread *t = arg;
	struct oc_run *run = t->run;
	unsigned long iter;

	for (iter = 0; st_now_ms() < run->end_ms &&
	     !st_err_is_set(&run->err); iter++) {
		if (!oc_churn_a_once(t, iter))
			break;
	}
	run->a_cycles = iter;
	st_note(t->w.id, NULL);
	return NULL;
}

/*
 * Cache B: open (every few rounds a new cache), open the device and three
 * files, write a pattern, then close in one of three ways; the device
 * must then hold the pattern.
 */
static bool oc_churn_b_once(struct oc_thread *t, struct uf_cache **cb,
			    unsigned long iter)
{
	struct oc_run *run = t->run;
	struct uf_file *f[OC_B_FILES] = { NULL };
	struct uf_cache_config cfg;
	struct uf_dev_config dcfg = { 0 };
	struct uf_dev *d = NULL;
	unsigned int i, how;
	const char *step;
	uint64_t t0;
	long ret = 0;

	if (!*cb) {
		st_cache_config(&cfg, 128 + st_rand_below(&t->w.rng, 256), 0,
				5, 5);
		step = "uf_cache_open";
		st_note(t->w.id, step);
		ret = uf_cache_open(&cfg, cb);
		if (ret)
			goto fail;
		run->b_caches++;
	}
	dcfg.engine = (const char *[]){ "io_uring", "libaio", "psync" }
		[st_rand_below(&t->w.rng, 3)];
	step = "uf_dev_open";
	st_note(t->w.id, step);
	t0 = st_now_ms();
	ret = uf_dev_open(*cb, run->path_b, &dcfg, &d);
	if (ret == -EBUSY) {
		run->b_late++;
		while (ret == -EBUSY && st_now_ms() - t0 < OC_REOPEN_MS) {
			st_sleep_ms(2);
			ret = uf_dev_open(*cb, run->path_b, &dcfg, &d);
		}
		if (st_now_ms() - t0 > run->b_late_ms)
			run->b_late_ms = st_now_ms() - t0;
	}
	if (ret)
		goto fail;
	for (i = 0; i < OC_B_FILES; i++) {
		step = "uf_file_open";
		st_note(t->w.id, step);
		ret = uf_file_open(d, i + 1, i * OC_B_LEN, OC_B_LEN, NULL, NULL,
				   &f[i]);
		if (ret)
			goto fail;
		step = "uf_pwrite";
		st_note(t->w.id, step);
		ret = oc_fill_file(t, f[i], i * OC_B_LEN, OC_B_LEN, iter + 1);
		if (ret)
			goto fail;
	}
	how = (unsigned int)st_rand_below(&t->w.rng, 4);
	if (how == 0) {
		/* close the whole cache with everything open */
		step = "uf_cache_close (files open)";
		st_note(t->w.id, step);
		ret = uf_cache_close(*cb);
		*cb = NULL;
		run->b_cache_close++;
		if (ret)
			goto fail;
	} else {
		if (how == 1) {
			step = "uf_dev_close with files open (want -EBUSY)";
			st_note(t->w.id, step);
			ret = uf_dev_close(d);
			if (ret != -EBUSY) {
				ret = ret ? ret : -EINVAL;
				goto fail;
			}
			run->b_ebusy++;
		}
		for (i = 0; i < OC_B_FILES; i++) {
			step = "uf_file_close";
			st_note(t->w.id, step);
			ret = uf_file_close(f[i]);
			f[i] = NULL;
			if (ret)
				goto fail;
		}
		step = "uf_dev_close";
		st_note(t->w.id, step);
		ret = uf_dev_close(d);
		if (ret)
			goto fail;
		if (!st_rand_below(&t->w.rng, 4)) {
			step = "uf_cache_close";
			st_note(t->w.id, step);
			ret = uf_cache_close(*cb);
			*cb = NULL;
			if (ret)
				goto fail;
		}
	}
	for (i = 0; i < OC_B_FILES; i++) {
		step = "raw read of B";
		st_note(t->w.id, step);
		ret = st_raw_read(run->path_b, i * OC_B_LEN, t->rbuf, OC_B_LEN);
		if (ret)
			goto fail;
		step = "raw check of B";
		st_note(t->w.id, step);
		ret = st_check(t->rbuf, OC_B_LEN, i * OC_B_LEN, iter + 1);
		if (ret >= 0)
			goto fail;
	}
	return true;
fail:
	st_err_set(&run->err, "churn B, iteration %lu: %s: %ld (%s)", iter,
		   step, ret, ret < 0 ? strerror((int)-ret) :
		   "data differs at that byte");
	return false;
}

static void *oc_churn_b(void *arg)
{
	struct oc_thread *t = arg;
	struct oc_run *run = t->run;
	struct uf_cache *cb = NULL;
	unsigned long iter;

	for (iter = 0; st_now_ms() < run->end_ms &&
	     !st_err_is_set(&run->err); iter++) {
		if (!oc_churn_b_once(t, &cb, iter))
			break;
	}
	st_note(t->w.id, "uf_cache_close (B, at the end)");
	if (cb)
		uf_cache_close(cb);
	run->b_cycles = iter;
	st_note(t->w.id, NULL);
	return NULL;
}

/* OC_WRITERS writers, a churner of cache A, one of caches B */
static void *(*const oc_fns[])(void *) = {
	oc_writer, oc_churn_a, oc_churn_b, NULL
};

static enum st_result open_close_churn(struct st_ctx *ctx)
{
	struct oc_thread th[OC_WRITERS + 2];
	struct uf_cache_config cfg;
	struct uf_testdev ta, tb;
	struct oc_run run;
	unsigned int i, started = 0;
	bool have_b = false, oom;
	enum st_result r;

	memset(&run, 0, sizeof(run));
	memset(th, 0, sizeof(th));
	st_err_init(&run.err);
	r = st_dev_get(ctx, 8 * ST_MIB, &ta);
	if (r != ST_PASS)
		return r;
	/* no uflush thread runs now: the log hook can change */
	uf_set_log_fn(oc_log, NULL);
	r = st_dev_get(ctx, 4 * ST_MIB, &tb);
	if (r != ST_PASS)
		goto out;
	have_b = true;
	run.path_a = ta.path;
	run.path_b = tb.path;
	run.model = st_alloc(OC_WRITERS * OC_WFILE_LEN);
	oom = !run.model;
	for (i = 0; i < OC_WRITERS + 2; i++) {
		th[i].buf = st_alloc(OC_BUF_LEN);
		th[i].rbuf = st_alloc(OC_BUF_LEN);
		oom |= !th[i].buf || !th[i].rbuf;
	}
	if (oom) {
		r = st_fail(ctx, "out of memory");
		goto out;
	}
	st_cache_config(&cfg, 512, 0, 30, 10);
	r = st_open_files(ctx, &cfg, ta.path, &run.cache_a, &run.dev_a,
			  run.wfiles, OC_WRITERS, 0, OC_WFILE_LEN);
	if (r != ST_PASS)
		goto out;

	run.end_ms = st_now_ms() + st_scaled(ctx, 3000);
	for (i = 0; i < OC_WRITERS + 2; i++)
		th[i].run = &run;
	started = st_start_workers(&run.err, th, sizeof(*th), OC_WRITERS,
				   oc_fns, ctx->seed * 4099);
	if (started < OC_WRITERS + 2)
		__atomic_store_n(&run.stop, true, __ATOMIC_RELEASE);
	for (i = OC_WRITERS; i < started; i++)
		pthread_join(th[i].w.tid, NULL);
	__atomic_store_n(&run.stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < started && i < OC_WRITERS; i++)
		pthread_join(th[i].w.tid, NULL);
	r = st_err_result(&run.err, ctx);
	if (r != ST_PASS)
		goto out;

	r = st_sync_clean(ctx, run.cache_a, "A");
	if (r == ST_PASS)
		r = st_expect_raw(ctx, ta.path, 0, run.model,
			          OC_WRITERS * OC_WFILE_LEN,
			          "A's writer files after uf_sync");
	if (r != ST_PASS)
		goto out;
	r = st_close_cache(ctx, &run.cache_a, "A");
	if (r != ST_PASS)
		goto out;
	if (run.a_cycles < 2 || run.b_cycles < 2) {
		r = st_fail(ctx, "too few cycles: %lu on A, %lu on B",
			    run.a_cycles, run.b_cycles);
		goto out;
	}
	if (run.b_late) {
		r = st_fail(ctx, "uf_dev_open of device B right after closing it (uf_dev_close/uf_cache_close) gave -EBUSY in %lu of %lu cycles, for up to %llu ms (the O_EXCL claim outlived the close)",
			    run.b_late, run.b_cycles,
			    (unsigned long long)run.b_late_ms);
		goto out;
	}
	fprintf(stderr, "  %s: %lu + %lu writes on A; %lu file cycles on A; %lu cycles on B (%lu caches, %lu -EBUSY, %lu closed whole)\n",
		ctx->name, th[0].writes, th[1].writes, run.a_cycles,
		run.b_cycles, run.b_caches, run.b_ebusy, run.b_cache_close);
out:
	st_run_put(run.cache_a, run.model, &run.err);
	uf_set_log_fn(NULL, NULL);
	for (i = 0; i < OC_WRITERS + 2; i++) {
		free(th[i].buf);
		free(th[i].rbuf);
	}
	if (have_b)
		st_dev_put(&tb);
	st_dev_put(&ta);
	return r;
}

const struct st_scenario st_cache_scenarios[] = {
	{ "cache_writers_fsync_sync",
	  "6 writers on 8 files, 512-page cache, fsync + sync threads",
	  cache_writers_fsync_sync },
	{ "page_api_threads",
	  "4 threads on disjoint pages via uf_page_get/set_dirty/put",
	  page_api_threads },
	{ "open_close_churn",
	  "files/devices/caches opened and closed while A's flusher works",
	  open_close_churn },
	{ NULL, NULL, NULL },
};
