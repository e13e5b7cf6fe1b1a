// SPDX-License-Identifier: MIT
/*
 * tests/stress/stress.c - uflush-stress: named multi-threaded scenarios,
 * without criterion, so that they can run under ThreadSanitizer.
 *
 * Description: the criterion binary cannot start under TSan (Criterion#274,
 * "Could not initialize inheritable arena"), so `make test SANITIZE=thread`
 * runs this program instead, and plain `make test` runs it after the suite.
 * It runs every scenario of the tables in io.c and cache.c (or those whose
 * name contains --filter), one after the other in this process, and prints
 *
 *   PASS name
 *   FAIL name: why
 *   SKIP name: why          (no loop device with direct I/O could be made)
 *   N passed, N failed[, N skipped]
 *
 * exiting 1 if any failed.  A sanitizer report is a failure too: under TSan
 * the Makefile sets halt_on_error=1, which ends the process with an error
 * at the first report.  A watchdog fails a scenario that runs longer than
 * --timeout seconds and ends the process (scratch loop devices are
 * autoclear, so none is left attached).  A scenario also fails if it made
 * the library's WARN/BUG counter move.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/bug.h"
#include "stress.h"
#include "uflush.h"

#define ST_DEFAULT_TIMEOUT	60	/* seconds per scenario */

/* ------------------------------------------------------------------ */
/* Results                                                             */

enum st_result st_why(struct st_ctx *ctx, enum st_result r,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->why, sizeof(ctx->why), fmt, ap);
	va_end(ap);
	return r;
}

void st_err_init(struct st_err *e)
{
	pthread_mutex_init(&e->lock, NULL);
	e->set = false;
	e->msg[0] = '\0';
}

void st_err_set(struct st_err *e, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&e->lock);
	if (!e->set) {
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
		e->set = true;
	}
	pthread_mutex_unlock(&e->lock);
}

bool st_err_is_set(struct st_err *e)
{
	bool set;

	pthread_mutex_lock(&e->lock);
	set = e->set;
	pthread_mutex_unlock(&e->lock);
	return set;
}

enum st_result st_err_result(struct st_err *e, struct st_ctx *ctx)
{
	enum st_result r = ST_PASS;

	pthread_mutex_lock(&e->lock);
	if (e->set)
		r = st_fail(ctx, "%s", e->msg);
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* ------------------------------------------------------------------ */
/* Devices, patterns, buffers, time                                    */

enum st_result st_dev_get(struct st_ctx *ctx, uint64_t size,
			  struct uf_testdev *td)
{
	unsigned int flags = ctx->file_ok ? 0 : UF_TESTDEV_NO_FALLBACK;
	int ret;

	memset(td, 0, sizeof(*td));
	td->loop_nr = -1;
	ret = uf_testdev_create(size, flags, td);
	if (ret && !ctx->file_ok)
		return st_skip(ctx, "no loop device with direct I/O (%s): %s",
			       strerror(-ret), td->why_not_loop);
	if (ret)
		return st_fail(ctx, "uf_testdev_create: %s (%s)",
			       strerror(-ret), td->why_not_loop);
	if (!td->is_loop)
		fprintf(stderr, "  %s: using the file %s: %s\n", ctx->name,
			td->path, td->why_not_loop);
	return ST_PASS;
}

void st_dev_put(struct uf_testdev *td)
{
	uf_testdev_destroy(td);
}

uint64_t st_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t st_word(uint64_t dev_off, uint64_t seed)
{
	return st_mix((seed << 40) ^ (dev_off >> 3));
}

void st_fill(void *buf, size_t len, uint64_t dev_off, uint64_t seed)
{
	uint64_t *p = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		p[i] = st_word(dev_off + i * 8, seed);
}

long st_check(const void *buf, size_t len, uint64_t dev_off, uint64_t seed)
{
	const uint64_t *p = buf;
	uint64_t want;
	size_t i, b;

	for (i = 0; i < len / 8; i++) {
		want = st_word(dev_off + i * 8, seed);
		if (p[i] == want)
			continue;
		for (b = 0; b < 8; b++)
			if (((const uint8_t *)&p[i])[b] !=
			    ((const uint8_t *)&want)[b])
				return (long)(i * 8 + b);
	}
	return -1;
}

void *st_alloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, ST_PAGE, len ? len : ST_PAGE))
		return NULL;
	memset(p, 0, len);
	return p;
}

int st_raw_read(const char *path, uint64_t off, void *buf, size_t len)
{
	return uf_testdev_raw_io(path, false, off, buf, len);
}

int st_raw_write(const char *path, uint64_t off, const void *buf, size_t len)
{
	return uf_testdev_raw_io(path, true, off, (void *)buf, len);
}

uint64_t st_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void st_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

unsigned int st_scaled(const struct st_ctx *ctx, unsigned int ms)
{
	double v = ms * ctx->scale;

	return v < 1 ? 1 : (unsigned int)v;
}

/* ------------------------------------------------------------------ */
/* Watchdog                                                            */

static const char *notes[ST_NOTES];	/* atomic */

void st_note(unsigned int slot, const char *what)
{
	if (slot < ST_NOTES)
		__atomic_store_n(&notes[slot], what, __ATOMIC_RELAXED);
}

static void notes_clear(void)
{
	unsigned int i;

	for (i = 0; i < ST_NOTES; i++)
		st_note(i, NULL);
}

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const char *name;	/* the scenario running, NULL between */
	uint64_t deadline_ms;
	unsigned int timeout_s;
	unsigned int passed, failed, skipped;
} wd = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void print_summary(unsigned int passed, unsigned int failed,
			  unsigned int skipped)
{
	if (skipped)
		printf("%u passed, %u failed, %u skipped\n", passed, failed,
		       skipped);
	else
		printf("%u passed, %u failed\n", passed, failed);
	fflush(stdout);
}

static void *watchdog_fn(void *arg)
{
	struct timespec ts;
	const char *what;
	unsigned int i;

	(void)arg;
	pthread_mutex_lock(&wd.lock);
	for (;;) {
		if (wd.name && st_now_ms() >= wd.deadline_ms) {
			printf("FAIL %s: still running after %u s (hang? a lost completion?)",
			       wd.name, wd.timeout_s);
			for (i = 0; i < ST_NOTES; i++) {
				what = __atomic_load_n(&notes[i],
						       __ATOMIC_RELAXED);
				if (what)
					printf("; thread %u in %s", i, what);
			}
			printf("\n");
			print_summary(wd.passed, wd.failed + 1, wd.skipped);
			_exit(1);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&wd.cond, &wd.lock, &ts);
	}
	return NULL;
}

static void watchdog_arm(const char *name)
{
	pthread_mutex_lock(&wd.lock);
	wd.name = name;
	wd.deadline_ms = st_now_ms() + (uint64_t)wd.timeout_s * 1000;
	pthread_mutex_unlock(&wd.lock);
}

static void watchdog_disarm(enum st_result r)
{
	pthread_mutex_lock(&wd.lock);
	wd.name = NULL;
	if (r == ST_PASS)
		wd.passed++;
	else if (r == ST_FAIL)
		wd.failed++;
	else
		wd.skipped++;
	pthread_mutex_unlock(&wd.lock);
}

/* ------------------------------------------------------------------ */
/* Checks against a model                                              */

/* Random bytes (not a pattern) for writes whose place is in a model. */
void st_rand_bytes(uint64_t *rng, void *p, size_t len)
{
	uint8_t *buf = p;
	uint64_t w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		w = st_rand(rng);
		memcpy(buf + i, &w, 8);
	}
	w = st_rand(rng);
	for (; i < len; i++, w >>= 8)
		buf[i] = (uint8_t)w;
}

/* First differing byte or -1. */
long st_first_diff(const void *pa, const void *pb, size_t len)
{
	const uint8_t *a = pa, *b = pb;
	size_t i;

	if (!memcmp(a, b, len))
		return -1;
	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

/* The raw device at [off, +len) against want. */
enum st_result st_expect_raw(struct st_ctx *ctx, const char *path,
			     uint64_t off, const void *want, size_t len,
			     const char *what)
{
	uint8_t *buf = st_alloc(len);
	long bad;
	int ret;

	if (!buf)
		return st_fail(ctx, "out of memory");
	ret = st_raw_read(path, off, buf, len);
	bad = ret ? -1 : st_first_diff(buf, want, len);
	free(buf);
	if (ret)
		return st_fail(ctx, "%s: raw read of %s: %s", what, path,
			       strerror(-ret));
	if (bad >= 0)
		return st_fail(ctx, "%s: the device differs from the model at %llu",
			       what, (unsigned long long)off +
			       (unsigned long long)bad);
	return ST_PASS;
}

/* uf_pread of the whole file against want. */
enum st_result st_expect_file(struct st_ctx *ctx, struct uf_file *f,
			      const void *want, size_t len, const char *what)
{
	uint8_t *buf = st_alloc(len);
	ssize_t n;
	long bad;

	if (!buf)
		return st_fail(ctx, "out of memory");
	n = uf_pread(f, buf, len, 0);
	bad = n == (ssize_t)len ? st_first_diff(buf, want, len) : -1;
	free(buf);
	if (n != (ssize_t)len)
		return st_fail(ctx, "%s: uf_pread = %zd (%s)", what, n,
			       n < 0 ? strerror((int)-n) : "short");
	if (bad >= 0)
		return st_fail(ctx, "%s: uf_pread differs from the model at file offset %ld",
			       what, bad);
	return ST_PASS;
}

enum st_result st_check_clean(struct st_ctx *ctx, struct uf_cache *c,
			      const char *what)
{
	struct uf_cache_stats st;
	int ret;

	ret = uf_cache_stats(c, &st);
	if (ret)
		return st_fail(ctx, "uf_cache_stats: %s", strerror(-ret));
	if (st.nr_dirty || st.nr_writeback)
		return st_fail(ctx, "%s: %lu dirty and %lu writeback pages",
			       what, st.nr_dirty, st.nr_writeback);
	if (st.write_errors)
		return st_fail(ctx, "%s: %lu write errors", what,
			       st.write_errors);
	if (st.nr_file_pages > st.nr_pages)
		return st_fail(ctx, "%s: %lu cached pages in a %lu-page pool",
			       what, st.nr_file_pages, st.nr_pages);
	return ST_PASS;
}

enum st_result st_sync_clean(struct st_ctx *ctx, struct uf_cache *c,
			     const char *which)
{
	char what[64];
	int ret;

	ret = uf_sync(c);
	if (ret)
		return st_fail(ctx, "uf_sync%s%s%s: %s", which ? "(" : "",
			       which ? which : "", which ? ")" : "",
			       strerror(-ret));
	snprintf(what, sizeof(what), "%s%safter uf_sync", which ? which : "",
		 which ? " " : "");
	return st_check_clean(ctx, c, what);
}

enum st_result st_close_cache(struct st_ctx *ctx, struct uf_cache **c,
			      const char *which)
{
	int ret;

	ret = uf_cache_close(*c);
	*c = NULL;
	if (ret)
		return st_fail(ctx, "uf_cache_close%s%s%s: %s",
			       which ? "(" : "", which ? which : "",
			       which ? ")" : "", strerror(-ret));
	return ST_PASS;
}

void st_run_put(struct uf_cache *c, void *model, struct st_err *err)
{
	if (c)
		uf_cache_close(c);
	free(model);
	pthread_mutex_destroy(&err->lock);
}

enum st_result st_prefill(struct st_ctx *ctx, const char *path, void *model,
			  size_t len, uint64_t dev_off, uint64_t seed)
{
	int ret;

	st_fill(model, len, dev_off, seed);
	ret = st_raw_write(path, dev_off, model, len);
	if (ret)
		return st_fail(ctx, "raw write of %s: %s", path,
			       strerror(-ret));
	return ST_PASS;
}

bool st_spawn(struct st_err *err, pthread_t *tid, void *(*fn)(void *),
	      void *arg)
{
	int ret = pthread_create(tid, NULL, fn, arg);

	if (ret)
		st_err_set(err, "pthread_create: %s", strerror(ret));
	return !ret;
}

unsigned int st_start_workers(struct st_err *err, void *th, size_t size,
			      unsigned int nr_main,
			      void *(*const fns[])(void *), uint64_t seed)
{
	unsigned int i;

	for (i = 0;; i++) {
		struct st_worker *w = (void *)((char *)th + i * size);
		unsigned int k = i < nr_main ? 0 : i - nr_main + 1;

		if (!fns[k])
			break;
		w->id = i;
		w->rng = st_mix(seed + i);
		if (!st_spawn(err, &w->tid, fns[k], w))
			break;
	}
	return i;
}

void st_cache_config(struct uf_cache_config *cfg, size_t nr_pages,
		     unsigned int max_io_pages, unsigned int expire_cs,
		     unsigned int writeback_cs)
{
	uf_cache_config_init(cfg);
	cfg->nr_pages = nr_pages;
	if (max_io_pages)
		cfg->max_io_pages = max_io_pages;
	cfg->dirty_expire_centisecs = expire_cs;
	cfg->dirty_writeback_centisecs = writeback_cs;
}

enum st_result st_open_files(struct st_ctx *ctx,
			     const struct uf_cache_config *cfg,
			     const char *path, struct uf_cache **c,
			     struct uf_dev **d, struct uf_file **files,
			     unsigned int nr, uint64_t base, uint64_t len)
{
	unsigned int i;
	int ret;

	ret = uf_cache_open(cfg, c);
	if (ret)
		return st_fail(ctx, "uf_cache_open: %s", strerror(-ret));
	ret = uf_dev_open(*c, path, NULL, d);
	if (ret)
		return st_fail(ctx, "uf_dev_open(%s): %s", path,
			       strerror(-ret));
	for (i = 0; i < nr; i++) {
		ret = uf_file_open(*d, i + 1, base + i * len, len, NULL, NULL,
				   &files[i]);
		if (ret)
			return st_fail(ctx, "uf_file_open(%u): %s", i,
				       strerror(-ret));
	}
	return ST_PASS;
}

/* ------------------------------------------------------------------ */
/* Main                                                                */

static const struct st_scenario *const tables[] = {
	st_kernel_scenarios,
	st_io_scenarios,
	st_cache_scenarios,
	st_handle_scenarios,
	st_alloc_scenarios,
	st_page_scenarios,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uflush-stress [--filter SUBSTR] [--list] [--seed N] [--scale F]\n"
		"                     [--timeout SEC] [--file-ok]\n"
		"  --filter SUBSTR  run only scenarios whose name contains SUBSTR\n"
		"  --list           list the scenarios and exit\n"
		"  --seed N         seed of the random choices (default: fixed)\n"
		"  --scale F        multiply durations and op counts by F (1.0)\n"
		"  --timeout SEC    fail a scenario running longer (%d)\n"
		"  --file-ok        use a plain O_DIRECT file where no loop device can be made\n",
		ST_DEFAULT_TIMEOUT);
}

static const char *result_name(enum st_result r)
{
	return r == ST_PASS ? "PASS" : r == ST_FAIL ? "FAIL" : "SKIP";
}

static enum st_result run_one(const struct st_scenario *s,
			      const struct st_ctx *opts)
{
	struct st_ctx ctx = *opts;
	unsigned long bugs = uf_bug_count();
	enum st_result r;

	ctx.name = s->name;
	ctx.why[0] = '\0';
	printf("RUN  %s\n", s->name);
	fflush(stdout);
	notes_clear();
	watchdog_arm(s->name);
	r = s->run(&ctx);
	if (r == ST_PASS && uf_bug_count() != bugs)
		r = st_fail(&ctx, "%lu WARN/BUG fired in the library (see stderr)",
			    uf_bug_count() - bugs);
	if (r == ST_PASS)
		printf("PASS %s\n", s->name);
	else
		printf("%s %s: %s\n", result_name(r), s->name,
		       ctx.why[0] ? ctx.why : "(no reason given)");
	fflush(stdout);
	watchdog_disarm(r);
	return r;
}

int main(int argc, char **argv)
{
	struct st_ctx opts = { .seed = 0x5eed, .scale = 1.0 };
	const char *filter = NULL;
	const struct st_scenario *s;
	unsigned int passed = 0, failed = 0, skipped = 0, matched = 0;
	bool list = false;
	pthread_t wd_tid;
	size_t t;
	int i;

	wd.timeout_s = ST_DEFAULT_TIMEOUT;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--list")) {
			list = true;
		} else if (!strcmp(a, "--file-ok")) {
			opts.file_ok = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--filter") && v) {
			filter = v;
			i++;
		} else if (!strcmp(a, "--seed") && v) {
			opts.seed = strtoull(v, NULL, 0);
			i++;
		} else if (!strcmp(a, "--scale") && v) {
			opts.scale = strtod(v, NULL);
			if (!(opts.scale > 0)) {
				fprintf(stderr, "uflush-stress: bad --scale %s\n", v);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--timeout") && v) {
			wd.timeout_s = (unsigned int)strtoul(v, NULL, 0);
			if (!wd.timeout_s)
				wd.timeout_s = ST_DEFAULT_TIMEOUT;
			i++;
		} else {
			fprintf(stderr, "uflush-stress: bad argument %s\n", a);
			usage(stderr);
			return 2;
		}
	}

	if (list) {
		for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
			for (s = tables[t]; s->name; s++)
				if (!filter || strstr(s->name, filter))
					printf("%-24s %s\n", s->name, s->what);
		return 0;
	}

	if (pthread_create(&wd_tid, NULL, watchdog_fn, NULL)) {
		fprintf(stderr, "uflush-stress: cannot start the watchdog\n");
		return 2;
	}
	pthread_detach(wd_tid);

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (s = tables[t]; s->name; s++) {
			if (filter && !strstr(s->name, filter))
				continue;
			matched++;
			switch (run_one(s, &opts)) {
			case ST_PASS:
				passed++;
				break;
			case ST_FAIL:
				failed++;
				break;
			case ST_SKIP:
				skipped++;
				break;
			}
		}
	}
	if (filter && !matched)
		fprintf(stderr, "uflush-stress: no scenario matches \"%s\"\n",
			filter);
	print_summary(passed, failed, skipped);
	return failed ? 1 : 0;
}
