/* SPDX-License-Identifier: MIT */
/*
 * tests/testutil.h - helpers shared by the criterion tests.
 *
 * - tu_fill()/tu_check(): a pattern that depends on a seed and on the
 *   *device* offset of every byte, so data landing at the wrong place or a
 *   stale block from an earlier write is told apart from the right data;
 * - tu_alloc(): zeroed, page-aligned buffers for O_DIRECT;
 * - tu_raw_read()/tu_raw_write(): plain open(O_DIRECT)+pread/pwrite on the
 *   device, bypassing uflush, to verify (and prepare) what is on the disk;
 * - tu_dev(): a scratch device (loop with dio=1, or a file) that is
 *   destroyed by tu_fini(), with the test skipped, reason printed, when the
 *   kind asked for cannot be had;
 * - struct tu_batch/tu_io: asynchronous requests whose end_io records the
 *   result, and a bounded wait for them (a lost completion fails the test
 *   instead of hanging it).
 *
 * Tests that use tu_dev(), tu_open() or tu_mount_ramfs() set .fini = tu_fini.
 * cr_skip_test() exits without running .fini, so skip with tu_skip().
 * Never assert on a thread other than the test's own (the completion thread
 * included): criterion aborts a test by longjmp.
 */
#ifndef UF_TESTUTIL_H
#define UF_TESTUTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/io.h"
#include "io/testdev.h"
#include "kernel/bug.h"

#define TU_PAGE		4096u
#define TU_DEV_SIZE	(64ull << 20)
#define TU_MAX_IOV	16
#define TU_WAIT_MS	30000

enum tu_kind {
	TU_LOOP,	/* loop device with direct I/O; skip if none */
	TU_FILE,	/* plain file opened O_DIRECT */
};

/* One test's resources, released by tu_fini() whatever happened. */
static struct {
	struct uf_testdev td;
	struct uf_bdev *bdev;
	char ramfs[256];
	char mnt[256];
} tu __attribute__((unused));

static inline void tu_fini(void)
{
	if (tu.bdev)
		uf_bdev_close(tu.bdev);
	tu.bdev = NULL;
	if (tu.mnt[0]) {
		if (umount(tu.mnt))
			umount2(tu.mnt, MNT_DETACH);
		rmdir(tu.mnt);
		tu.mnt[0] = '\0';
	}
	uf_testdev_destroy(&tu.td);
	if (tu.ramfs[0]) {
		if (umount(tu.ramfs))
			umount2(tu.ramfs, MNT_DETACH);
		rmdir(tu.ramfs);
		tu.ramfs[0] = '\0';
	}
}

#define tu_skip(...)					\
	do {						\
		tu_fini();				\
		cr_skip_test(__VA_ARGS__);		\
	} while (0)

/* ------------------------------------------------------------------ */
/* Patterns and buffers                                                */

static inline uint64_t tu_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The byte the pattern of seed puts at device offset off. */
static inline uint8_t tu_byte(uint64_t off, uint32_t seed)
{
	uint64_t w = tu_mix(((uint64_t)seed << 40) ^ (off >> 3));

	return (uint8_t)(w >> ((off & 7) * 8));
}

static inline void tu_fill(void *buf, size_t len, uint64_t dev_off,
			   uint32_t seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = tu_byte(dev_off + i, seed);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long tu_check(const void *buf, size_t len, uint64_t dev_off,
			    uint32_t seed)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != tu_byte(dev_off + i, seed))
			return (long)i;
	return -1;
}

static inline void *tu_alloc(size_t len)
{
	void *p = NULL;

	cr_assert_eq(posix_memalign(&p, TU_PAGE, len), 0,
		     "posix_memalign(%zu) failed", len);
	memset(p, 0, len);
	return p;
}

/* ------------------------------------------------------------------ */
/* The raw device, not through uflush                                  */

static inline int tu_raw_io(const char *path, bool write, uint64_t off,
			    void *buf, size_t len)
{
	return uf_testdev_raw_io(path, write, off, buf, len);
}

static inline int tu_raw_read(const char *path, uint64_t off, void *buf,
			      size_t len)
{
	return tu_raw_io(path, false, off, buf, len);
}

/* Put the pattern of seed on [off, off+len) of the raw device. */
static inline void tu_raw_fill(const char *path, uint64_t off, size_t len,
			       uint32_t seed)
{
	void *buf = tu_alloc(len);
	int ret;

	tu_fill(buf, len, off, seed);
	ret = tu_raw_io(path, true, off, buf, len);
	free(buf);
	cr_assert_eq(ret, 0, "raw write of %s [%llu,+%zu): %s", path,
		     (unsigned long long)off, len, strerror(-ret));
}

/* Read [off, off+len) of the raw device and demand the pattern of seed. */
static inline void tu_raw_expect(const char *path, uint64_t off, size_t len,
				 uint32_t seed, const char *what)
{
	void *buf = tu_alloc(len);
	long bad;
	int ret;

	ret = tu_raw_read(path, off, buf, len);
	if (ret) {
		free(buf);
		cr_assert_fail("%s: raw read of %s [%llu,+%zu): %s", what,
			       path, (unsigned long long)off, len,
			       strerror(-ret));
	}
	bad = tu_check(buf, len, off, seed);
	if (bad >= 0) {
		uint8_t got = ((uint8_t *)buf)[bad];

		free(buf);
		cr_assert_fail("%s: %s differs at device offset %llu: 0x%02x, want 0x%02x (seed %u)",
			       what, path, (unsigned long long)off +
			       (unsigned long long)bad, got,
			       tu_byte(off + (uint64_t)bad, seed), seed);
	}
	free(buf);
}

/* tu_raw_expect() for any offset and length: reads the enclosing pages. */
static inline void tu_raw_expect_any(const char *path, uint64_t off,
				     size_t len, uint32_t seed,
				     const char *what)
{
	uint64_t start = off & ~(uint64_t)(TU_PAGE - 1);
	uint64_t end = (off + len + TU_PAGE - 1) & ~(uint64_t)(TU_PAGE - 1);
	uint8_t *buf = tu_alloc(end - start);
	long bad;
	int ret;

	ret = tu_raw_read(path, start, buf, end - start);
	bad = ret ? -1 : tu_check(buf + (off - start), len, off, seed);
	free(buf);
	cr_assert_eq(ret, 0, "%s: raw read of %s [%llu,+%llu): %s", what,
		     path, (unsigned long long)start,
		     (unsigned long long)(end - start), strerror(-ret));
	cr_assert_eq(bad, -1, "%s: %s differs from seed %u at device offset %llu",
		     what, path, seed, (unsigned long long)(off + bad));
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */

static inline const char *tu_kind_name(enum tu_kind kind)
{
	return kind == TU_LOOP ? "loop" : "file";
}

static inline int tu_try_dev(enum tu_kind kind, uint64_t size,
			     const char *dir)
{
	unsigned int flags = kind == TU_FILE ? UF_TESTDEV_FILE_ONLY
				: UF_TESTDEV_NO_FALLBACK;
	int ret;

	if (!dir)
		return uf_testdev_create(size, flags, &tu.td);
	setenv("UFLUSH_TESTDIR", dir, 1);
	ret = uf_testdev_create(size, flags, &tu.td);
	unsetenv("UFLUSH_TESTDIR");
	return ret;
}

static inline const char *tu_dev_check(enum tu_kind kind, int ret)
{
	char why[sizeof(tu.td.why_not_loop)];

	if (ret && kind == TU_LOOP) {
		snprintf(why, sizeof(why), "%s", tu.td.why_not_loop);
		tu_skip("no loop device with direct I/O (%s): %s",
			strerror(-ret), why);
	}
	cr_assert_eq(ret, 0, "uf_testdev_create(%s): %s (%s)",
		     tu_kind_name(kind), strerror(-ret), tu.td.why_not_loop);
	cr_assert_eq(tu.td.is_loop, kind == TU_LOOP);
	return tu.td.path;
}

/* A scratch device of the kind asked for, in tu.td; skips if impossible. */
static inline const char *tu_dev(enum tu_kind kind, uint64_t size)
{
	return tu_dev_check(kind, tu_try_dev(kind, size, NULL));
}

/*
 * The same, backed by memory (tmpfs, which takes O_DIRECT since Linux 6.6)
 * unless $UFLUSH_TESTDIR says where: for tests that time the shaping and
 * queueing code, which must not measure a host disk that other jobs keep
 * busy.  Falls back to tu_dev() where tmpfs cannot do it.
 */
static inline const char *tu_dev_mem(enum tu_kind kind, uint64_t size)
{
	const char *env = getenv("UFLUSH_TESTDIR");
	struct statvfs sv;

	/* room for this and a parallel job's device, written in full */
	if ((!env || !*env) && !statvfs("/dev/shm", &sv) &&
	    (uint64_t)sv.f_bavail * sv.f_frsize >= 4 * size &&
	    !access("/dev/shm", W_OK) && !tu_try_dev(kind, size, "/dev/shm"))
		return tu_dev_check(kind, 0);
	return tu_dev(kind, size);
}

/*
 * Open tu.td's device with engine (no fallback) into tu.bdev.  An engine
 * the kernel refuses (io_uring disabled in a container) skips the test.
 */
static inline struct uf_bdev *tu_open(const char *engine, unsigned int qd,
				      unsigned int flags,
				      const struct uf_io_shape *shape)
{
	struct uf_bdev_config cfg;
	int ret;

	uf_bdev_config_init(&cfg);
	cfg.engine = engine;
	if (qd)
		cfg.queue_depth = qd;
	cfg.flags |= UF_BDEV_NO_FALLBACK | flags;
	cfg.shape = shape;
	ret = uf_bdev_open(tu.td.path, &cfg, &tu.bdev);
	if (ret == -ENOSYS || ret == -EPERM)
		tu_skip("engine %s unavailable here: %s", engine,
			strerror(-ret));
	cr_assert_eq(ret, 0, "uf_bdev_open(%s, %s): %s", tu.td.path,
		     engine, strerror(-ret));
	cr_assert_str_eq(uf_bdev_engine_name(tu.bdev), engine);
	return tu.bdev;
}

/* Mount a ramfs (no direct I/O) in a fresh directory; -errno if not. */
static inline int tu_mount_ramfs(void)
{
	snprintf(tu.ramfs, sizeof(tu.ramfs), "/var/tmp/uflush-ramfs.XXXXXX");
	if (!mkdtemp(tu.ramfs)) {
		tu.ramfs[0] = '\0';
		return -errno;
	}
	if (mount("uflush-test", tu.ramfs, "ramfs", 0, "size=16m")) {
		int err = -errno;

		rmdir(tu.ramfs);
		tu.ramfs[0] = '\0';
		return err;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Asynchronous requests                                               */

struct tu_batch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int nr_done;
	unsigned int nr_dup;	/* end_io called again on a finished req */
};

struct tu_io {
	struct uf_io_req req;
	struct iovec iov[TU_MAX_IOV];
	struct tu_batch *batch;
	bool done;
	int res;
	uint64_t done_ns;
};

static inline void tu_batch_init(struct tu_batch *b)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
}

static inline void tu_end_io(struct uf_io_req *req, int res)
{
	struct tu_io *io = req->private;
	struct tu_batch *b = io->batch;

	pthread_mutex_lock(&b->lock);
	if (io->done)
		b->nr_dup++;
	io->done = true;
	io->res = res;
	io->done_ns = uf_now_ns();
	b->nr_done++;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* Prepare io for op on [off, ...) over the given buffers. */
static inline void tu_io_init(struct tu_io *io, struct tu_batch *b,
			      enum uf_io_op op, uint64_t off,
			      void *const *bufs, const size_t *lens,
			      unsigned int nr)
{
	unsigned int i;

	memset(io, 0, sizeof(*io));
	cr_assert(nr <= TU_MAX_IOV);
	for (i = 0; i < nr; i++) {
		io->iov[i].iov_base = bufs[i];
		io->iov[i].iov_len = lens[i];
	}
	io->batch = b;
	io->req.op = op;
	io->req.offset = off;
	io->req.iov = io->iov;
	io->req.nr_iov = nr;
	io->req.end_io = tu_end_io;
	io->req.private = io;
}

/* ms from now on CLOCK_REALTIME, for the *timedwait() calls. */
static inline void tu_deadline(struct timespec *ts, unsigned int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Wait until nr requests of b completed; 0, or -ETIMEDOUT after ms. */
static inline int tu_batch_wait(struct tu_batch *b, unsigned int nr,
				unsigned int ms)
{
	struct timespec ts;
	int ret = 0;

	tu_deadline(&ts, ms);
	pthread_mutex_lock(&b->lock);
	while (b->nr_done < nr && !ret)
		ret = pthread_cond_timedwait(&b->cond, &b->lock, &ts);
	if (b->nr_done >= nr)
		ret = 0;
	pthread_mutex_unlock(&b->lock);
	return ret ? -ETIMEDOUT : 0;
}

static inline double tu_ms_since(uint64_t t0)
{
	return (double)(uf_now_ns() - t0) / 1e6;
}

/*
 * One Test() per engine and device kind, each calling fn(engine, kind);
 * a test that uses several engines names them in its own name.
 */
#define TU_ENGINE_TESTS(suite, name, fn, ...)				\
	Test(suite, name##_io_uring_loop, .fini = tu_fini, ##__VA_ARGS__) \
	{ fn("io_uring", TU_LOOP); }					\
	Test(suite, name##_io_uring_file, .fini = tu_fini, ##__VA_ARGS__) \
	{ fn("io_uring", TU_FILE); }					\
	Test(suite, name##_libaio_loop, .fini = tu_fini, ##__VA_ARGS__)	\
	{ fn("libaio", TU_LOOP); }					\
	Test(suite, name##_libaio_file, .fini = tu_fini, ##__VA_ARGS__)	\
	{ fn("libaio", TU_FILE); }					\
	Test(suite, name##_psync_loop, .fini = tu_fini, ##__VA_ARGS__)	\
	{ fn("psync", TU_LOOP); }					\
	Test(suite, name##_psync_file, .fini = tu_fini, ##__VA_ARGS__)	\
	{ fn("psync", TU_FILE); }

/* ------------------------------------------------------------------ */
/* Caches (include/uflush.h)                                           */

/* Add path to cache as a device with flags (UF_DEV_*), or fail the test. */
static inline struct uf_dev *tu_cache_dev(struct uf_cache *cache,
					  const char *path, unsigned int flags)
{
	struct uf_dev_config dcfg = { .flags = flags };
	struct uf_dev *d = NULL;
	int ret;

	ret = uf_dev_open(cache, path, &dcfg, &d);
	cr_assert_eq(ret, 0, "uf_dev_open(%s): %s", path, strerror(-ret));
	cr_assert_not_null(d);
	return d;
}

/* For a fini: close *cache if it is open, whatever that gives; forget it. */
static inline void tu_cache_drop(struct uf_cache **cache)
{
	if (*cache)
		uf_cache_close(*cache);
	*cache = NULL;
}

/* Close *cache and forget it; demand a clean close and no WARN/BUG. */
static inline void tu_cache_close(struct uf_cache **cache)
{
	int ret = uf_cache_close(*cache);

	*cache = NULL;
	cr_assert_eq(ret, 0, "uf_cache_close: %s", strerror(-ret));
	cr_assert_eq(uf_bug_count(), 0, "a WARN/BUG fired");
}

/* uf_file_open() that fails the test when it fails. */
static inline struct uf_file *tu_file_open(struct uf_dev *d, uint64_t ino,
					   uint64_t off, uint64_t len,
					   const struct uf_file_ops *ops,
					   void *priv)
{
	struct uf_file *f = NULL;
	int ret;

	ret = uf_file_open(d, ino, off, len, ops, priv, &f);
	cr_assert_eq(ret, 0, "uf_file_open(ino %llu @ %llu +%llu): %s",
		     (unsigned long long)ino, (unsigned long long)off,
		     (unsigned long long)len, strerror(-ret));
	cr_assert_not_null(f);
	return f;
}

/* Write the pattern of seed over [off, off+len) of f (at dev_off), in
 * pieces of at most chunk bytes. */
static inline void tu_file_write(struct uf_file *f, uint64_t off, size_t len,
				 uint64_t dev_off, uint32_t seed, size_t chunk)
{
	char *buf = malloc(len);
	size_t done, n;
	ssize_t ret;

	cr_assert(buf);
	tu_fill(buf, len, dev_off, seed);
	for (done = 0; done < len; done += n) {
		n = len - done < chunk ? len - done : chunk;
		ret = uf_pwrite(f, buf + done, n, off + done);
		if (ret != (ssize_t)n)
			free(buf);
		cr_assert_eq(ret, (ssize_t)n, "uf_pwrite(%zu @ %llu) = %zd",
			     n, (unsigned long long)(off + done), ret);
	}
	free(buf);
}

/* uf_pread of the whole of [off, off+len) of f must be the pattern of seed
 * at device offset dev_off. */
static inline void tu_file_expect(struct uf_file *f, uint64_t off,
				  size_t len, uint64_t dev_off, uint32_t seed,
				  const char *what)
{
	char *buf = malloc(len);
	ssize_t n;
	long bad;

	cr_assert(buf);
	n = uf_pread(f, buf, len, off);
	bad = n == (ssize_t)len ? tu_check(buf, len, dev_off, seed) : -2;
	free(buf);
	cr_assert_eq(n, (ssize_t)len, "%s: uf_pread(%zu @ %llu) = %zd", what,
		     len, (unsigned long long)off, n);
	cr_assert_eq(bad, -1, "%s: byte %ld of the range is not seed %u's",
		     what, bad, seed);
}

/*
 * The counters a refused call must not move, against a snapshot taken
 * before it; nr_free is left to the caller (not every test can pin it).
 */
static inline void tu_expect_stats_same(struct uf_cache *cache,
					const struct uf_cache_stats *a,
					const char *what)
{
	struct uf_cache_stats b;

	cr_assert_eq(uf_cache_stats(cache, &b), 0);
#define TU_SAME(field)							\
	cr_assert_eq(a->field, b.field, "%s changed " #field ": %lu -> %lu", \
		     what, a->field, b.field)
	TU_SAME(nr_file_pages);
	TU_SAME(nr_dirty);
	TU_SAME(nr_writeback);
	TU_SAME(nr_dirtied);
	TU_SAME(nr_written);
	TU_SAME(write_errors);
#undef TU_SAME
}

/* Every call on a closed file: -EBADF, nothing written anywhere. */
static inline void tu_expect_file_ebadf(struct uf_file *f)
{
	char buf[4096];
	struct uf_page *p = (struct uf_page *)buf;

	memset(buf, 0xee, sizeof(buf));
	cr_assert_eq(uf_pwrite(f, buf, sizeof(buf), 0), -EBADF);
	cr_assert_eq(uf_pwrite(f, buf, 100, 5), -EBADF);
	cr_assert_eq(uf_pread(f, buf, sizeof(buf), 0), -EBADF);
	cr_assert_eq(buf[0], (char)0xee, "a refused read wrote the buffer");
	cr_assert_eq(uf_fsync(f), -EBADF);
	cr_assert_eq(uf_fdatasync(f), -EBADF);
	cr_assert_eq(uf_file_mark_inode_dirty(f, UF_I_DIRTY_SYNC), -EBADF);
	cr_assert_eq(uf_page_get(f, 0, 0, &p), -EBADF);
	cr_assert_null(p);
	p = (struct uf_page *)buf;
	cr_assert_eq(uf_page_get(f, 0, UF_PAGE_WRITE | UF_PAGE_NOREAD, &p),
		     -EBADF);
	cr_assert_null(p);
	cr_assert_eq(uf_page_get(f, 1, UF_PAGE_WRITE | UF_PAGE_NOREAD, &p),
		     -EBADF);
	cr_assert_null(p);
	cr_assert_eq(uf_file_close(f), -EBADF, "a second uf_file_close");
}

/* A cache, the device at path in it, and one file (ino 1) on the device. */
struct tu_cdf {
	struct uf_cache *cache;
	struct uf_dev *dev;
	struct uf_file *file;
	const char *path;
};

/* Open cdf's cache from cfg, its device and the file at [off, +len). */
static inline void tu_cdf_open(struct tu_cdf *cdf,
			       const struct uf_cache_config *cfg,
			       uint64_t off, uint64_t len)
{
	cr_assert_eq(uf_cache_open(cfg, &cdf->cache), 0);
	cdf->dev = tu_cache_dev(cdf->cache, cdf->path, 0);
	cdf->file = tu_file_open(cdf->dev, 1, off, len, NULL, NULL);
}

/* Close file, device and cache; each must close clean, no WARN/BUG. */
static inline void tu_cdf_close(struct tu_cdf *cdf)
{
	cr_assert_eq(uf_file_close(cdf->file), 0);
	cr_assert_eq(uf_dev_close(cdf->dev), 0);
	cr_assert_eq(uf_cache_close(cdf->cache), 0);
	cr_assert_eq(uf_bug_count(), 0, "a WARN/BUG fired");
}

/* ------------------------------------------------------------------ */
/* Mounted devices                                                     */

/*
 * Put ext4 on path and mount it on a fresh directory whose name goes to
 * mnt (left empty when nothing is mounted; the caller's fini unmounts it).
 * NULL when mounted, else why it cannot be done here, for a skip.
 */
static inline const char *tu_mount_ext4(const char *path, char *mnt,
					size_t mnt_len)
{
	static char why[512];
	char cmd[600];
	int st, ret;

	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s >/dev/null 2>&1",
		 path);
	st = system(cmd);
	ret = st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
	if (ret == 127)
		return "mkfs.ext4 not available";
	cr_assert_eq(ret, 0, "mkfs.ext4 %s failed (%d)", path, ret);
	snprintf(mnt, mnt_len, "/var/tmp/uflush-mnt.XXXXXX");
	cr_assert_not_null(mkdtemp(mnt));
	if (mount(path, mnt, "ext4", 0, NULL)) {
		snprintf(why, sizeof(why), "cannot mount ext4 on %s: %s", path,
			 strerror(errno));
		rmdir(mnt);
		mnt[0] = '\0';
		return why;
	}
	return NULL;
}

/* Poll *flag, set by another thread, every 10 ms for at most ms: its value. */
static inline bool tu_flag_wait_ms(const bool *flag, unsigned int ms)
{
	unsigned int waited = 0;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (waited >= ms)
			return false;
		usleep(10000);
		waited += 10;
	}
	return true;
}

/* sem_wait() for at most ms; false if it timed out. */
static inline bool tu_sem_wait_ms(sem_t *sem, unsigned int ms)
{
	struct timespec ts;

	tu_deadline(&ts, ms);
	while (sem_timedwait(sem, &ts))
		if (errno != EINTR)
			return false;
	return true;
}

/*
 * nr one-buffer writes of len bytes: the ith from pool + i * len to
 * device offset i * stride, into ios[] and, unless NULL, reqs[].
 */
static inline void tu_io_init_writes(struct tu_io *ios,
				     struct uf_io_req **reqs,
				     struct tu_batch *b, uint8_t *pool,
				     size_t len, uint64_t stride,
				     unsigned int nr)
{
	unsigned int i;
	void *buf;

	for (i = 0; i < nr; i++) {
		buf = pool + (size_t)i * len;
		tu_io_init(&ios[i], b, UF_IO_WRITE, (uint64_t)i * stride,
			   &buf, &len, 1);
		if (reqs)
			reqs[i] = &ios[i].req;
	}
}

/* The process's io_uring worker threads (io-wq: "iou-wrk-PID"). */
static inline unsigned int tu_nr_iou_workers(void)
{
	char path[300], comm[32];
	unsigned int n = 0;
	struct dirent *e;
	DIR *dir;
	FILE *f;

	dir = opendir("/proc/self/task");
	cr_assert(dir);
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "iou-wrk", 7))
			n++;
		fclose(f);
	}
	closedir(dir);
	return n;
}

#endif /* UF_TESTUTIL_H */
