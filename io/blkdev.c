// SPDX-License-Identifier: MIT
/*
 * io/blkdev.c - opening devices and the engine-independent half of a queue.
 *
 * This is the layer between uflush's callers and an I/O engine: it checks
 * requests (alignment, range) before any reach the kernel, bounds the number
 * in flight to the queue depth (a submitter waits on a condvar for room, it
 * never spins), normalises results (a short transfer is -EIO) and picks the
 * engine, falling back io_uring -> libaio -> psync when one cannot be set up
 * (containers often disable io_uring).
 *
 * Safety: a block device that is mounted, used as swap, held by a stacked
 * driver (dm, md) or opened O_EXCL by anyone is refused with -EBUSY, and so
 * is a disk whose partition is in such use, unless the caller forces it.
 *
 * Handles live in a fixed table, like file descriptors, so a handle that was
 * closed reads as -EBADF instead of touching freed memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "io/io.h"
#include "io/sim.h"
#include "kernel/printk.h"
#include "kernel/sim.h"

#define UF_MAX_BDEVS		256
#define UF_DEFAULT_QD		64
#define UF_MAX_QD		4096
#define UF_MAX_IOV		1024

struct uf_bdev {
	atomic_bool in_use;
	bool is_blk;
	bool shaped;
	bool sim;			/* q.fd is a uf_sim id, not a file */
	char path[PATH_MAX];
	uint64_t size;
	unsigned int lbs;
	unsigned int max_pages;		/* per request, 0: no known limit */
	struct uf_bdev_limits lim;	/* the queue's, 0s for a file */
	struct uf_io_queue q;
};

static struct uf_bdev bdev_table[UF_MAX_BDEVS];
static pthread_mutex_t bdev_table_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t uf_now_ns(void)
{
	struct timespec ts;

	if (uf_in_sim())
		return uf_sim_now_ns();

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Queue: slots, submission, completion                                */

static void queue_release_slots(struct uf_io_queue *q, unsigned int nr)
{
	pthread_mutex_lock(&q->lock);
	q->inflight -= nr;
	if (!q->inflight && nr)
		q->io_ticks_ns += uf_now_ns() - q->busy_since_ns;
	if (q->waiters)
		uf_cond_broadcast(&q->room);
	pthread_mutex_unlock(&q->lock);
}

/*
 * An inner queue of a wrapping engine has its complete() pointed elsewhere;
 * its requests each hold a slot of the outer queue, which has the same
 * depth, so the inner one needs no accounting of its own.
 */
static bool queue_counts_slots(const struct uf_io_queue *q)
{
	return q->complete == uf_io_complete;
}

int uf_io_fdatasync(int fd)
{
	int ret;

	do {
		ret = fdatasync(fd);
	} while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

void uf_io_complete(struct uf_io_queue *q, struct uf_io_req *req, int res)
{
	if (res >= 0) {
		if (req->op == UF_IO_FLUSH)
			res = 0;
		else if ((size_t)res != req->len)
			res = -EIO;
	}
	if (res >= 0 && req->op == UF_IO_WRITE) {
		__atomic_add_fetch(&q->nr_writes, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&q->write_bytes, req->len, __ATOMIC_RELAXED);
	}
	/* end_io first: once the slot is free a drainer may free the world */
	req->end_io(req, res);
	queue_release_slots(q, 1);
}

int uf_io_queue_init(struct uf_io_queue *q, const struct uf_io_engine *e,
		     int fd, unsigned int depth)
{
	const struct uf_io_engine *inner = q->inner;
	int ret;

	memset(q, 0, sizeof(*q));
	q->engine = e;
	q->inner = inner;
	q->fd = fd;
	q->depth = depth;
	q->complete = uf_io_complete;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->room, NULL);
	ret = e->setup(q);
	if (ret) {
		pthread_cond_destroy(&q->room);
		pthread_mutex_destroy(&q->lock);
	}
	return ret;
}

void uf_io_queue_drain(struct uf_io_queue *q)
{
	pthread_mutex_lock(&q->lock);
	while (q->inflight) {
		q->waiters++;
		uf_cond_wait(&q->room, &q->lock);
		q->waiters--;
	}
	pthread_mutex_unlock(&q->lock);
}

void uf_io_queue_exit(struct uf_io_queue *q)
{
	uf_io_queue_drain(q);
	if (q->engine_data)
		q->engine->teardown(q);
	q->engine_data = NULL;
	pthread_cond_destroy(&q->room);
	pthread_mutex_destroy(&q->lock);
}

/* Wait for at least one free slot, then take as many as the batch needs. */
static unsigned int queue_get_slots(struct uf_io_queue *q, unsigned int want)
{
	unsigned int n;

	pthread_mutex_lock(&q->lock);
	while (q->inflight >= q->depth) {
		q->waiters++;
		uf_cond_wait(&q->room, &q->lock);
		q->waiters--;
	}
	n = q->depth - q->inflight;
	if (n > want)
		n = want;
	if (!q->inflight && n)
		q->busy_since_ns = uf_now_ns();
	q->inflight += n;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/*
 * Hand a batch to the engine in chunks that fit the free slots.  If the
 * engine refuses a chunk, its requests complete with the error, so each
 * request is still completed exactly once.
 */
int uf_io_queue_submit(struct uf_io_queue *q, struct uf_io_req **reqs,
		       unsigned int nr)
{
	unsigned int done = 0, n, i;
	int ret;

	while (done < nr) {
		n = nr - done;
		if (queue_counts_slots(q))
			n = queue_get_slots(q, n);
		ret = q->engine->submit(q, reqs + done, n);
		if (ret < 0) {
			for (i = 0; i < n; i++)
				q->complete(q, reqs[done + i], ret);
		}
		done += n;
	}
	return 0;
}

static const struct uf_io_engine *const engines[] = {
	&uf_io_uring_engine,
	&uf_libaio_engine,
	&uf_psync_engine,
};

#define NR_ENGINES (sizeof(engines) / sizeof(engines[0]))

const struct uf_io_engine *uf_io_engine_find(const char *name)
{
	size_t i;

	for (i = 0; i < NR_ENGINES; i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	/* not in engines[]: no fallback reaches it or leaves it */
	if (!strcmp(name, uf_sim_engine.name))
		return &uf_sim_engine;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Is a block device in use?                                           */

/* Mounted filesystems and swap, by device number. */
static bool devt_mounted(dev_t devt)
{
	unsigned int maj, min;
	char line[4096], *p;
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	/* "id parent maj:min root mountpoint ..." */
	while (!found && fgets(line, sizeof(line), f)) {
		p = strchr(line, ' ');
		p = p ? strchr(p + 1, ' ') : NULL;
		if (p && sscanf(p + 1, "%u:%u", &maj, &min) == 2 &&
		    makedev(maj, min) == devt)
			found = true;
	}
	fclose(f);
	return found;
}

static bool path_is_swap(const char *path, dev_t devt)
{
	char line[4096], name[PATH_MAX];
	bool found = false;
	struct stat st;
	FILE *f;

	(void)path;
	f = fopen("/proc/swaps", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%4095s", name) != 1 || name[0] != '/')
			continue;
		if (!stat(name, &st) && S_ISBLK(st.st_mode) &&
		    st.st_rdev == devt)
			found = true;
	}
	fclose(f);
	return found;
}

/* A stacked driver (dm, md, bcache) lists itself in holders/. */
static bool sysfs_has_holders(const char *sysdir)
{
	char p[PATH_MAX + 16];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(p, sizeof(p), "%s/holders", sysdir);
	d = opendir(p);
	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = de->d_name[0] != '.';
	closedir(d);
	return found;
}

static bool devt_busy(const char *sysdir, dev_t devt, const char *path)
{
	return devt_mounted(devt) || path_is_swap(path, devt) ||
	       sysfs_has_holders(sysdir);
}

/* The device itself or any of its partitions in use? */
static bool blockdev_in_use(const char *path, dev_t devt)
{
	char sysdir[64], sub[PATH_MAX], devstr[32];
	unsigned int maj, min;
	struct dirent *de;
	bool busy;
	FILE *f;
	DIR *d;

	snprintf(sysdir, sizeof(sysdir), "/sys/dev/block/%u:%u",
		 major(devt), minor(devt));
	busy = devt_busy(sysdir, devt, path);
	d = opendir(sysdir);
	if (!d)
		return busy;
	while (!busy && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s/partition", sysdir,
			 de->d_name);
		if (access(sub, F_OK))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s/dev", sysdir, de->d_name);
		f = fopen(sub, "re");
		if (!f)
			continue;
		if (fgets(devstr, sizeof(devstr), f) &&
		    sscanf(devstr, "%u:%u", &maj, &min) == 2) {
			snprintf(sub, sizeof(sub), "%s/%s", sysdir,
				 de->d_name);
			busy = devt_busy(sub, makedev(maj, min), "");
		}
		fclose(f);
	}
	closedir(d);
	return busy;
}

/* ------------------------------------------------------------------ */
/* Opening                                                             */

static unsigned long queue_limit(dev_t rdev, const char *name)
{
	char path[96];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s",
		 major(rdev), minor(rdev), name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%lu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static unsigned int clamp_uint(unsigned long v)
{
	return v > UINT_MAX ? UINT_MAX : (unsigned int)v;
}

/*
 * The limits the block layer splits a request by (blk_queue_split():
 * max_sectors_kb, max_segments, max_segment_size) and the queue's
 * nr_requests, the depth at which a submitter blocks for a tag.  A
 * request it must split cannot be issued without blocking, so io_uring
 * hands it to an io-wq worker (and a worker, once started, wakes the
 * process every 5 s for good).
 */
static void queue_limits(dev_t rdev, struct uf_bdev_limits *lim)
{
	lim->max_pages = clamp_uint(queue_limit(rdev, "max_sectors_kb") / 4);
	lim->max_segments = clamp_uint(queue_limit(rdev, "max_segments"));
	lim->max_segment_size =
		clamp_uint(queue_limit(rdev, "max_segment_size"));
	lim->nr_requests = clamp_uint(queue_limit(rdev, "nr_requests"));
}

/*
 * The most 4 KiB frames one request carries unsplit when every frame is
 * a segment of its own (frames not known to be contiguous in memory):
 * no more than max_segments, nor max_sectors_kb.
 */
static unsigned int queue_max_pages(const struct uf_bdev_limits *lim)
{
	unsigned int n = lim->max_segments;

	if (lim->max_pages && (!n || lim->max_pages < n))
		n = lim->max_pages;
	return n;
}

static int open_blockdev(struct uf_bdev *b, const struct stat *st,
			 unsigned int flags)
{
	int fd, lbs;

	if (!(flags & UF_BDEV_FORCE) && blockdev_in_use(b->path, st->st_rdev)) {
		pr_warn("%s: in use (mounted, swap or held by another driver); not opening it without force",
			b->path);
		return -EBUSY;
	}
	fd = open(b->path, O_RDWR | O_DIRECT | O_CLOEXEC |
		  ((flags & UF_BDEV_FORCE) ? 0 : O_EXCL));
	if (fd < 0) {
		if (errno == EBUSY)
			pr_warn("%s: held open exclusively elsewhere", b->path);
		return -errno;
	}
	if (ioctl(fd, BLKGETSIZE64, &b->size) || ioctl(fd, BLKSSZGET, &lbs)) {
		int err = -errno;

		close(fd);
		return err;
	}
	b->lbs = (unsigned int)lbs;
	b->is_blk = true;
	queue_limits(st->st_rdev, &b->lim);
	b->max_pages = queue_max_pages(&b->lim);
	return fd;
}

/* The direct-I/O offset alignment the filesystem asks for (statx). */
static unsigned int file_dio_align(int fd)
{
	struct statx stx;

	if (!statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align)
		return stx.stx_dio_offset_align;
	return 4096;	/* unknown: a page is always enough */
}

static int open_regular(struct uf_bdev *b, const struct stat *st)
{
	int fd;

	fd = open(b->path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EINVAL)
			pr_warn("%s: the filesystem cannot do O_DIRECT",
				b->path);
		return -errno;
	}
	b->size = (uint64_t)st->st_size;
	b->lbs = file_dio_align(fd);
	b->is_blk = false;
	memset(&b->lim, 0, sizeof(b->lim));
	return fd;
}

static int setup_queue(struct uf_bdev *b, int fd,
		       const struct uf_io_engine *e,
		       const struct uf_bdev_config *cfg)
{
	unsigned int qd = cfg->queue_depth;

	/* the kernel's submitter blocks when the queue's nr_requests tags
	 * are taken: as many requests in flight here (a file: 64) */
	if (!qd)
		qd = b->lim.nr_requests ? b->lim.nr_requests : UF_DEFAULT_QD;
	if (qd > UF_MAX_QD)
		qd = UF_MAX_QD;

	memset(&b->q, 0, sizeof(b->q));
	if (!b->shaped)
		return uf_io_queue_init(&b->q, e, fd, qd);
	b->q.inner = e;
	return uf_io_queue_init(&b->q, &uf_shape_engine, fd, qd);
}

/* The requested engine first, then the others in preference order. */
static int choose_engine(struct uf_bdev *b, int fd,
			 const struct uf_bdev_config *cfg)
{
	const char *want = cfg->engine ? cfg->engine : "io_uring";
	const struct uf_io_engine *e = uf_io_engine_find(want);
	int ret, first;
	size_t i;

	if (!e) {
		pr_err("unknown I/O engine \"%s\" (valid: io_uring, libaio, psync, sim)",
		       want);
		return -EINVAL;
	}
	ret = first = setup_queue(b, fd, e, cfg);
	if (!ret || (cfg->flags & UF_BDEV_NO_FALLBACK) || b->sim)
		return ret;
	for (i = 0; i < NR_ENGINES && ret; i++) {
		if (engines[i] == e)
			continue;
		ret = setup_queue(b, fd, engines[i], cfg);
		if (!ret)
			pr_notice("%s: I/O engine %s unavailable (%s); using %s",
				  b->path, want, strerror(-first),
				  engines[i]->name);
	}
	return ret;
}

static struct uf_bdev *bdev_slot_get(void)
{
	struct uf_bdev *b = NULL;
	int i;

	pthread_mutex_lock(&bdev_table_lock);
	for (i = 0; i < UF_MAX_BDEVS && !b; i++) {
		if (!atomic_load(&bdev_table[i].in_use)) {
			b = &bdev_table[i];
			memset(b->path, 0, sizeof(b->path));
			atomic_store(&b->in_use, true);
		}
	}
	pthread_mutex_unlock(&bdev_table_lock);
	return b;
}

static void bdev_slot_put(struct uf_bdev *b)
{
	atomic_store(&b->in_use, false);
}

void uf_bdev_config_init(struct uf_bdev_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

static int check_config(const char *path, const struct uf_bdev_config *cfg)
{
	if (!path || !*path || strlen(path) >= PATH_MAX)
		return -EINVAL;
	if (cfg->queue_depth > UF_MAX_QD)
		return -EINVAL;
	if (cfg->flags & ~(UF_BDEV_FORCE | UF_BDEV_NO_FALLBACK |
			   UF_BDEV_SHAPED))
		return -EINVAL;
	return 0;
}

static int bdev_open_fd(struct uf_bdev *b, const struct uf_bdev_config *cfg)
{
	unsigned int flags = cfg->flags;
	struct stat st;
	int id, ret;

	/* a modelled device (io/sim.h): the path is its name */
	if (b->sim) {
		b->is_blk = false;
		ret = uf_sim_claim(b->path, &id, &b->size, &b->lbs,
				   &b->max_pages);
		return ret ? ret : id;
	}

	if (stat(b->path, &st))
		return -errno;
	if (S_ISBLK(st.st_mode))
		return open_blockdev(b, &st, flags);
	if (S_ISREG(st.st_mode))
		return open_regular(b, &st);
	return -ENODEV;
}

static void bdev_close_fd(struct uf_bdev *b, int fd)
{
	if (b->sim)
		uf_sim_unclaim(fd);
	else
		close(fd);
}

int uf_bdev_open(const char *path, const struct uf_bdev_config *cfg,
		 struct uf_bdev **out)
{
	struct uf_bdev_config defcfg;
	struct uf_bdev *b;
	int fd, ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg) {
		uf_bdev_config_init(&defcfg);
		cfg = &defcfg;
	}
	ret = check_config(path, cfg);
	if (ret)
		return ret;
	b = bdev_slot_get();
	if (!b)
		return -EMFILE;
	strcpy(b->path, path);
	b->shaped = (cfg->flags & UF_BDEV_SHAPED) || cfg->shape;
	b->sim = cfg->engine && !strcmp(cfg->engine, uf_sim_engine.name);
	/* a world runs one task at a time: a real device's completions
	 * come from threads it cannot schedule */
	if (uf_in_sim() && !b->sim) {
		pr_err("%s: only sim devices can be opened in a simulation",
		       path);
		bdev_slot_put(b);
		return -EOPNOTSUPP;
	}
	fd = bdev_open_fd(b, cfg);
	if (fd < 0) {
		bdev_slot_put(b);
		return fd;
	}
	ret = choose_engine(b, fd, cfg);
	if (!ret && cfg->shape) {
		ret = uf_shape_set(&b->q, cfg->shape);
		if (ret)
			uf_io_queue_exit(&b->q);
	}
	if (ret) {
		bdev_close_fd(b, fd);
		bdev_slot_put(b);
		return ret;
	}
	pr_info("%s: opened (%s, %" PRIu64 " bytes, %u-byte blocks, engine %s%s)",
		path, b->sim ? "modelled" : b->is_blk ? "block device" : "file",
		b->size, b->lbs,
		uf_bdev_engine_name(b), b->shaped ? " shaped" : "");
	*out = b;
	return 0;
}

/* A handle is valid if it points at a slot of the table that is open. */
static bool bdev_valid(const struct uf_bdev *b)
{
	uintptr_t p = (uintptr_t)b, base = (uintptr_t)bdev_table;

	if (p < base || p >= base + sizeof(bdev_table) ||
	    (p - base) % sizeof(struct uf_bdev))
		return false;
	return atomic_load(&b->in_use);
}

int uf_bdev_close(struct uf_bdev *b)
{
	int fd;

	if (!bdev_valid(b))
		return -EBADF;
	fd = b->q.fd;
	uf_io_queue_exit(&b->q);
	bdev_close_fd(b, fd);
	bdev_slot_put(b);
	return 0;
}

/* The getters' checks: a device, and somewhere to put the answer. */
static int bdev_arg(struct uf_bdev *b, const void *out)
{
	if (!bdev_valid(b))
		return -EBADF;
	return out ? 0 : -EINVAL;
}

int uf_bdev_size(struct uf_bdev *b, uint64_t *size)
{
	int ret = bdev_arg(b, size);

	if (!ret)
		*size = b->size;
	return ret;
}

int uf_bdev_io_stats(struct uf_bdev *b, struct uf_bdev_io_stats *out)
{
	struct uf_io_queue *q;
	int ret = bdev_arg(b, out);

	if (ret)
		return ret;
	q = &b->q;
	pthread_mutex_lock(&q->lock);
	out->io_ticks_ns = q->io_ticks_ns;
	if (q->inflight)
		out->io_ticks_ns += uf_now_ns() - q->busy_since_ns;
	pthread_mutex_unlock(&q->lock);
	out->nr_writes = __atomic_load_n(&q->nr_writes, __ATOMIC_RELAXED);
	out->write_bytes = __atomic_load_n(&q->write_bytes, __ATOMIC_RELAXED);
	out->nr_fixed = __atomic_load_n(&q->nr_fixed, __ATOMIC_RELAXED);
	return 0;
}

int uf_bdev_register_memory(struct uf_bdev *b, void *base, size_t len)
{
	if (!bdev_valid(b))
		return -EBADF;
	if (!base || !len)
		return -EINVAL;
	/* a shaped queue wraps another: its engine sees the requests */
	if (b->shaped || !b->q.engine->register_memory)
		return -EOPNOTSUPP;
	return b->q.engine->register_memory(&b->q, base, len);
}

int uf_bdev_max_pages(struct uf_bdev *b, unsigned int *pages)
{
	int ret = bdev_arg(b, pages);

	if (!ret)
		*pages = b->max_pages;
	return ret;
}

bool uf_bdev_keeps_data(struct uf_bdev *b)
{
	if (bdev_arg(b, b))
		return true;
	return !b->sim || uf_sim_keeps_data(b->q.fd);
}

int uf_bdev_limits(struct uf_bdev *b, struct uf_bdev_limits *lim)
{
	int ret = bdev_arg(b, lim);

	if (!ret)
		*lim = b->lim;
	return ret;
}

int uf_bdev_queue_depth(struct uf_bdev *b, unsigned int *depth)
{
	int ret = bdev_arg(b, depth);

	if (!ret)
		*depth = b->q.depth;
	return ret;
}

int uf_bdev_block_size(struct uf_bdev *b, unsigned int *lbs)
{
	int ret = bdev_arg(b, lbs);

	if (!ret)
		*lbs = b->lbs;
	return ret;
}

const char *uf_bdev_engine_name(struct uf_bdev *b)
{
	if (!bdev_valid(b))
		return NULL;
	return b->shaped ? b->q.inner->name : b->q.engine->name;
}

const char *uf_bdev_path(struct uf_bdev *b)
{
	return bdev_valid(b) ? b->path : NULL;
}

bool uf_bdev_is_blockdev(struct uf_bdev *b)
{
	return bdev_valid(b) && b->is_blk;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */

static int check_req(const struct uf_bdev *b, struct uf_io_req *req)
{
	uint64_t len = 0;
	unsigned int i;

	if (!req || !req->end_io)
		return -EINVAL;
	if (req->op == UF_IO_FLUSH) {
		req->len = 0;
		return 0;
	}
	if ((req->op != UF_IO_READ && req->op != UF_IO_WRITE) || !req->iov ||
	    !req->nr_iov || req->nr_iov > UF_MAX_IOV ||
	    req->offset % b->lbs)
		return -EINVAL;
	for (i = 0; i < req->nr_iov; i++) {
		const struct iovec *v = &req->iov[i];

		if (!v->iov_base || !v->iov_len || v->iov_len % b->lbs ||
		    (uintptr_t)v->iov_base % b->lbs)
			return -EINVAL;
		len += v->iov_len;
		if (len > UF_IO_MAX_BYTES)
			return -EINVAL;
	}
	if (len > b->size || req->offset > b->size - len)
		return -ERANGE;
	req->len = len;
	return 0;
}

int uf_bdev_submit(struct uf_bdev *b, struct uf_io_req **reqs,
		   unsigned int nr)
{
	uint64_t now;
	unsigned int i;
	int ret;

	if (!bdev_valid(b))
		return -EBADF;
	if (!reqs || !nr)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		ret = check_req(b, reqs[i]);
		if (ret)
			return ret;
	}
	uf_sim_charge(UF_SIM_COST_REQUEST, nr);	/* a world's CPU model */
	now = uf_now_ns();
	for (i = 0; i < nr; i++) {
		reqs[i]->submit_ns = now;
		reqs[i]->next = NULL;
	}
	return uf_io_queue_submit(&b->q, reqs, nr);
}

struct sync_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int res;
};

static void sync_end_io(struct uf_io_req *req, int res)
{
	struct sync_wait *w = req->private;

	pthread_mutex_lock(&w->lock);
	w->res = res;
	w->done = true;
	uf_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

ssize_t uf_bdev_rw(struct uf_bdev *b, enum uf_io_op op, uint64_t offset,
		   const struct iovec *iov, unsigned int nr_iov)
{
	struct sync_wait w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	struct uf_io_req req = {
		.op = op, .offset = offset, .iov = iov, .nr_iov = nr_iov,
		.end_io = sync_end_io, .private = &w,
	};
	struct uf_io_req *r = &req;
	int ret;

	ret = uf_bdev_submit(b, &r, 1);
	if (ret)
		return ret;
	pthread_mutex_lock(&w.lock);
	while (!w.done)
		uf_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	pthread_cond_destroy(&w.cond);
	pthread_mutex_destroy(&w.lock);
	return w.res;
}

ssize_t uf_bdev_pread(struct uf_bdev *b, void *buf, size_t len,
		      uint64_t offset)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };

	return uf_bdev_rw(b, UF_IO_READ, offset, &v, 1);
}

ssize_t uf_bdev_pwrite(struct uf_bdev *b, const void *buf, size_t len,
		       uint64_t offset)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };

	return uf_bdev_rw(b, UF_IO_WRITE, offset, &v, 1);
}

int uf_bdev_flush(struct uf_bdev *b)
{
	return (int)uf_bdev_rw(b, UF_IO_FLUSH, 0, NULL, 0);
}

int uf_bdev_drain(struct uf_bdev *b)
{
	if (!bdev_valid(b))
		return -EBADF;
	uf_io_queue_drain(&b->q);
	return 0;
}

int uf_bdev_set_shape(struct uf_bdev *b, const struct uf_io_shape *shape)
{
	if (!bdev_valid(b))
		return -EBADF;
	if (!b->shaped || !shape)
		return -EINVAL;
	return uf_shape_set(&b->q, shape);
}

int uf_bdev_stall(struct uf_bdev *b, unsigned int ms)
{
	if (!bdev_valid(b))
		return -EBADF;
	if (!b->shaped)
		return -EINVAL;
	return uf_shape_stall(&b->q, ms);
}

int uf_bdev_shape_counters(struct uf_bdev *b, struct uf_shape_counters *out)
{
	if (!bdev_valid(b))
		return -EBADF;
	if (!b->shaped || !out)
		return -EINVAL;
	return uf_shape_counters(&b->q, out);
}
