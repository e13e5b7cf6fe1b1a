/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/stress.h - the scenario runner's helpers (no criterion).
 *
 * Description: uflush-stress runs the multi-threaded paths of the library
 * (the I/O engines, the shaping wrapper, the cache with its flushers, the
 * page API, open/close churn) under whatever sanitizer the build has, above
 * all ThreadSanitizer, which the criterion suite cannot start under
 * (Criterion#274).  Each scenario is a function that returns ST_PASS,
 * ST_FAIL or ST_SKIP and says why in its struct st_ctx.  Worker threads
 * never fail a scenario directly: they record the first error in a
 * struct st_err, which the scenario's thread checks after joining them.
 */
#ifndef UF_STRESS_H
#define UF_STRESS_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/testdev.h"

#define ST_PAGE		4096u
#define ST_MIB		(1ull << 20)

enum st_result {
	ST_PASS,
	ST_FAIL,
	ST_SKIP,
};

/* What a scenario gets: options, and room for its reason. */
struct st_ctx {
	const char *name;
	uint64_t seed;
	double scale;		/* multiplies durations and op counts */
	bool file_ok;		/* fall back to a plain file, not skip */
	char why[512];
};

struct st_scenario {
	const char *name;
	const char *what;
	enum st_result (*run)(struct st_ctx *ctx);
};

/* The table, one per source file; stress.c joins them. */
extern const struct st_scenario st_io_scenarios[];
extern const struct st_scenario st_cache_scenarios[];
extern const struct st_scenario st_handle_scenarios[];
extern const struct st_scenario st_alloc_scenarios[];
extern const struct st_scenario st_page_scenarios[];
extern const struct st_scenario st_kernel_scenarios[];

/* Set ctx->why and return r, so that `return st_fail(ctx, ...)`. */
enum st_result st_why(struct st_ctx *ctx, enum st_result r,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define st_fail(ctx, ...)	st_why(ctx, ST_FAIL, __VA_ARGS__)
#define st_skip(ctx, ...)	st_why(ctx, ST_SKIP, __VA_ARGS__)

/* The first error of any worker thread of a scenario. */
struct st_err {
	pthread_mutex_t lock;
	bool set;
	char msg[384];
};

void st_err_init(struct st_err *e);
void st_err_set(struct st_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool st_err_is_set(struct st_err *e);
/* ST_FAIL with e's message if one is set, else ST_PASS. */
enum st_result st_err_result(struct st_err *e, struct st_ctx *ctx);

/* Scratch device: a loop device with direct I/O, destroyed by st_dev_put.
 * Returns ST_PASS, or ST_SKIP/ST_FAIL with ctx->why set. */
enum st_result st_dev_get(struct st_ctx *ctx, uint64_t size,
			  struct uf_testdev *td);
void st_dev_put(struct uf_testdev *td);

/* Patterns: a 64-bit word per 8 device bytes, from seed and offset. */
uint64_t st_mix(uint64_t x);
void st_fill(void *buf, size_t len, uint64_t dev_off, uint64_t seed);
/* Offset of the first byte that differs, or -1.  len and dev_off must be
 * multiples of 8 (they are page-sized here). */
long st_check(const void *buf, size_t len, uint64_t dev_off, uint64_t seed);
/* The model of [dev_off, +len) starts as st_fill's pattern, written to the
 * raw device too (so a read-modify-write shows).  ST_PASS or ST_FAIL. */
enum st_result st_prefill(struct st_ctx *ctx, const char *path, void *model,
			  size_t len, uint64_t dev_off, uint64_t seed);

/* A small, per-thread PRNG (splitmix64). */
static inline uint64_t st_rand(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return st_mix(*state);
}

static inline uint64_t st_rand_below(uint64_t *state, uint64_t n)
{
	return n ? st_rand(state) % n : 0;
}

/* Random bytes (not a pattern) for writes whose place is in a model. */
void st_rand_bytes(uint64_t *rng, void *buf, size_t len);
/* Offset of the first byte where a and b differ, or -1. */
long st_first_diff(const void *a, const void *b, size_t len);

struct uf_cache;
struct uf_dev;
struct uf_file;
/* The raw device at [off, +len), then uf_pread of the whole file, against
 * want; ST_FAIL saying where they differ, with what in the message. */
enum st_result st_expect_raw(struct st_ctx *ctx, const char *path,
			     uint64_t off, const void *want, size_t len,
			     const char *what);
enum st_result st_expect_file(struct st_ctx *ctx, struct uf_file *f,
			      const void *want, size_t len, const char *what);
/* No dirty or writeback pages, no write errors, no more pages than frames. */
enum st_result st_check_clean(struct st_ctx *ctx, struct uf_cache *c,
			      const char *what);

/*
 * uf_sync(c), then st_check_clean.  which names the cache in the messages
 * ("uf_sync(A)", "A after uf_sync"), or NULL for the only cache.
 */
enum st_result st_sync_clean(struct st_ctx *ctx, struct uf_cache *c,
			     const char *which);
/* uf_cache_close(*c), leaving *c NULL; which as for st_sync_clean. */
enum st_result st_close_cache(struct st_ctx *ctx, struct uf_cache **c,
			      const char *which);

/* A scenario's end, pass or fail: close c if open, free model, drop err. */
void st_run_put(struct uf_cache *c, void *model, struct st_err *err);

/*
 * pthread_create(fn, arg) into *tid; on a failure record it in err and
 * return false (the caller stops the threads it started and joins them).
 */
bool st_spawn(struct st_err *err, pthread_t *tid, void *(*fn)(void *),
	      void *arg);

/*
 * What a scenario's thread struct starts with (its first member, w), so
 * that st_start_workers() can start an array of them.
 */
struct st_worker {
	pthread_t tid;
	unsigned int id;
	uint64_t rng;
};

/*
 * Start the threads of th, an array of structs size bytes each: the first
 * nr_main run fns[0], then one each runs fns[1], fns[2] ... (up to a NULL).
 * Each gets id i and rng st_mix(seed + i).  Returns how many started; a
 * failed start is recorded in err and ends it there.
 */
unsigned int st_start_workers(struct st_err *err, void *th, size_t size,
			      unsigned int nr_main,
			      void *(*const fns[])(void *), uint64_t seed);

struct uf_cache_config;
/*
 * uf_cache_config_init() with nr_pages frames, the flusher's expire and
 * interval in centisecs, and max_io_pages unless 0 (the default then).
 */
void st_cache_config(struct uf_cache_config *cfg, size_t nr_pages,
		     unsigned int max_io_pages, unsigned int expire_cs,
		     unsigned int writeback_cs);

/*
 * A cache from cfg, the device at path, and nr files of len bytes each,
 * ino i + 1 at device offset base + i * len.  ST_PASS, or ST_FAIL naming
 * the call that failed (what was opened stays in *c for the caller to
 * close).
 */
enum st_result st_open_files(struct st_ctx *ctx,
			     const struct uf_cache_config *cfg,
			     const char *path, struct uf_cache **c,
			     struct uf_dev **d, struct uf_file **files,
			     unsigned int nr, uint64_t base, uint64_t len);

/* Zeroed, page-aligned; NULL on failure. */
void *st_alloc(size_t len);

/* The raw device with O_DIRECT, bypassing uflush: 0 or -errno. */
int st_raw_read(const char *path, uint64_t off, void *buf, size_t len);
int st_raw_write(const char *path, uint64_t off, const void *buf, size_t len);

/*
 * What a scenario's thread is doing, for the watchdog's message if the
 * scenario hangs: st_note(slot, "uf_file_close") before a call that may
 * block, st_note(slot, NULL) after.  Slots 0..ST_NOTES-1; cleared between
 * scenarios.
 */
#define ST_NOTES	8
void st_note(unsigned int slot, const char *what);

uint64_t st_now_ms(void);
void st_sleep_ms(unsigned int ms);
/* A duration in ms scaled by ctx->scale, at least 1. */
unsigned int st_scaled(const struct st_ctx *ctx, unsigned int ms);

#endif /* UF_STRESS_H */
