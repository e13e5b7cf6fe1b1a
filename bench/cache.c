// SPDX-License-Identifier: MIT
/*
 * bench/cache.c - `uflush-bench cache`: sequential write throughput through
 * uflush's page cache beside two baselines on the same device, in the same
 * run:
 *
 *   fio raw       fio, O_DIRECT, 1 MiB writes at QD 32 through io_uring,
 *                 then fsync: what the device can do (the physical limit);
 *   kernel        fio, buffered psync writes to the same block device,
 *                 then fsync: the host kernel's page cache and flusher,
 *                 what a user would pick instead of uflush;
 *   uflush        one thread uf_pwrite()s --size bytes in --bs chunks into
 *                 a cache of --pages frames (so several times the cache
 *                 passes through it: background writeback and the dirty
 *                 throttle run in their steady state), then uf_fsync().
 *
 * Each case is timed from its first write to the return of its fsync; fio's
 * runtime includes its end_fsync.  The three cases run once per repetition
 * (--reps), the order rotated from one repetition to the next so that no
 * case always follows the same one, and the table prints medians, min-max
 * spreads and the ratios of the medians.  Before every run the host's page
 * cache is written back and dropped (drop_caches, as root), so that no run
 * inherits the pages or the dirty data of the one before.
 *
 * Beside MB/s: the CPU time of the process per wall second (for uflush all
 * its threads: the writer, the flusher, the I/O completion thread; for fio
 * its job's usr+sys as fio reports it), the busy time of the whole host
 * (which also counts the kernel's flusher and the loop device's workers),
 * and the write requests the device saw (its sysfs stat, after the block
 * layer has split and merged them).  For uflush also the time the writes
 * alone took, before fsync, and what uf_cache_stats()/uf_dev_stats() count.
 *
 * The device is a scratch loop device (direct I/O, verified in sysfs) over
 * a sparse file, or that file itself where a loop device cannot be made,
 * written once in full before the runs and destroyed at the end even on
 * SIGINT; or --dev PATH, which is overwritten.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"
#include "mm/mm.h"
#include "io/testdev.h"

#define CACHE_MAX_REPS		32
#define CACHE_DEFAULT_SIZE	(1ull << 30)
#define CACHE_DEFAULT_BS	(1ull << 20)
#define CACHE_DEFAULT_PAGES	65536u
#define CACHE_REOPEN_TIMEOUT_NS	5000000000ull
#define CACHE_PREFILL_CHUNK	(8u << 20)

enum cache_case { CASE_RAW, CASE_KERNEL, CASE_UFLUSH, NR_CASES };

static const char *const case_names[NR_CASES] = {
	"fio raw", "kernel page cache", "uflush",
};

static const char *const case_keys[NR_CASES] = {
	"fio_raw", "kernel_page_cache", "uflush",
};

struct cache_opts {
	uint64_t size;
	uint64_t bs;
	unsigned int pages;
	unsigned int reps;
	const char *policy;
	const char *dev;
	bool force;
	bool no_fio;
	bool no_drop;
	const char *json;
};

/* What one run measured. */
struct cache_run {
	double mbs;
	double secs;			/* first write to fsync return */
	double cpu;			/* % of one CPU: the process */
	double host_cpu;		/* % of one CPU: the whole host */
	bool have_dev;			/* device counters were read */
	uint64_t dev_ios;		/* write requests the device did */
	uint64_t dev_sectors;		/* 512-byte sectors written */
	/* uflush only */
	double write_secs;		/* the uf_pwrite() loop alone */
	double writer_cpu_secs;		/* the writer thread's CPU in it */
	double fsync_secs;
	unsigned long pages_dirtied;
	unsigned long pages_written;
	unsigned long bdi_written_kb;
	unsigned long bdi_bw_kbps;	/* bandwidth estimate at the end */
	unsigned long works_done;
	unsigned long dirty_thresh;	/* pages */
	unsigned long background_thresh;
	unsigned long write_errors;
};

struct cache_row {
	const char *name;
	bool skipped;			/* this case cannot run here */
	char why[320];
	char cmd[1024];			/* fio's command line */
	unsigned int n;
	struct cache_run runs[CACHE_MAX_REPS];
};

/* The device under test. */
struct cache_target {
	struct uf_testdev td;
	bool scratch;
	bool is_blk;
	const char *path;
	char desc[512];
	int dio;			/* loop/dio, -1 if not a loop device */
	char stat_path[PATH_MAX];	/* /sys/dev/block/M:m/stat, "" if none */
	unsigned int max_sectors_kb;	/* 0 if unknown */
	uint64_t range;			/* bytes used: [0, range) */
};

struct cache_bench {
	struct cache_opts o;
	struct cache_target t;
	char kernel[160];
	char policy[512];		/* resolved: uf_cache_policy() */
	bool have_fio;
	char fio_version[64];
	char fio_why[256];
	int drop_err;			/* first drop_caches failure */
	unsigned int drops;
	bool opened;			/* we have had the device open */
	unsigned int busy_reopens;
	uint64_t busy_wait_ns;
	unsigned long host_dirty_ratio;
	unsigned long host_bg_ratio;
	uint64_t host_avail;		/* MemAvailable at start, bytes */
	void *buf;			/* one --bs chunk of random bytes */
	unsigned int order[CACHE_MAX_REPS][NR_CASES];
	struct cache_row rows[NR_CASES];
};

/* ------------------------------------------------------------------ */
/* The machine: CPU, device counters, caches                          */

/* CPU seconds of all threads of this process. */
static double process_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* CPU seconds of the calling thread. */
static double thread_cpu(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Busy CPU seconds of the whole host (all CPUs) from /proc/stat. */
static double host_busy(void)
{
	unsigned long long v[8] = { 0 }, busy;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5 || hz <= 0)
		return 0;
	/* user nice system [idle iowait] irq softirq steal */
	busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return (double)busy / hz;
}

/* Write requests and sectors the device completed so far. */
static bool dev_counters(const struct cache_target *t, uint64_t *ios,
			 uint64_t *sectors)
{
	unsigned long long v[7];
	FILE *f;
	int n;

	if (!t->stat_path[0])
		return false;
	f = fopen(t->stat_path, "r");
	if (!f)
		return false;
	/* reads: ios merges sectors ticks; writes: ios merges sectors */
	n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6]);
	fclose(f);
	if (n != 7)
		return false;
	*ios = v[4];
	*sectors = v[6];
	return true;
}

/* The counters around one run. */
struct run_probe {
	uint64_t t0;
	double cpu0;
	double host0;
	bool dev_ok;
	uint64_t ios0, sectors0;
};

static void probe_start(const struct cache_bench *b, struct run_probe *p)
{
	p->dev_ok = dev_counters(&b->t, &p->ios0, &p->sectors0);
	p->host0 = host_busy();
	p->cpu0 = process_cpu();
	p->t0 = uf_now_ns();
}

/* Fill the run's wall time, CPU and device counters since probe_start. */
static void probe_end(const struct cache_bench *b, const struct run_probe *p,
		      struct cache_run *r)
{
	uint64_t t1 = uf_now_ns(), ios, sectors;
	double cpu = process_cpu(), host = host_busy();

	r->secs = (t1 - p->t0) / 1e9;
	r->cpu = (cpu - p->cpu0) / r->secs * 100;
	r->host_cpu = (host - p->host0) / r->secs * 100;
	r->have_dev = p->dev_ok && dev_counters(&b->t, &ios, &sectors);
	if (r->have_dev) {
		r->dev_ios = ios - p->ios0;
		r->dev_sectors = sectors - p->sectors0;
	}
}

static int read_ulong(const char *path, unsigned long *v)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%lu", v);
	fclose(f);
	return n == 1 ? 0 : -EINVAL;
}

static void host_info(struct cache_bench *b)
{
	char line[256];
	unsigned long long kb;
	FILE *f;

	if (read_ulong("/proc/sys/vm/dirty_ratio", &b->host_dirty_ratio))
		b->host_dirty_ratio = 0;
	if (read_ulong("/proc/sys/vm/dirty_background_ratio",
		       &b->host_bg_ratio))
		b->host_bg_ratio = 0;
	f = fopen("/proc/meminfo", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			b->host_avail = kb << 10;
	fclose(f);
}

/*
 * Write back and drop the host's page cache, so that a run neither reads
 * the pages nor inherits the dirty data of the one before.  Untimed.
 */
static void drop_caches(struct cache_bench *b)
{
	int fd, err = 0;

	sync();
	if (b->o.no_drop)
		return;
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3\n", 2) != 2)
		err = -errno;
	if (fd >= 0)
		close(fd);
	if (!err) {
		b->drops++;
		return;
	}
	if (!b->drop_err)
		fprintf(stderr,
			"uflush-bench cache: warning: cannot drop the host's caches: %s; runs may see each other's pages\n",
			strerror(-err));
	b->drop_err = err;
}

/* ------------------------------------------------------------------ */
/* uflush                                                              */

/* Library messages held back while an open is being retried. */
struct held_log {
	char text[2048];
	size_t len;
};

static struct held_log held_log;

static void hold_log(void *priv, int level, const char *msg)
{
	struct held_log *h = priv;
	int n;

	(void)level;
	n = snprintf(h->text + h->len, sizeof(h->text) - h->len,
		     "uflush: %s\n", msg);
	if (n > 0)
		h->len += (size_t)n < sizeof(h->text) - h->len ?
			  (size_t)n : sizeof(h->text) - h->len - 1;
}

/*
 * Open the device in the cache.  Once we have had it open, -EBUSY means
 * our own previous handle has not let go yet (the kernel tears an io_uring
 * down asynchronously and the O_EXCL claim goes with its last file
 * reference), so that is retried for a while, untimed, and counted.
 */
static int open_dev(struct cache_bench *b, struct uf_cache *cache,
		    struct uf_dev **dev)
{
	uint64_t give_up = uf_now_ns() + CACHE_REOPEN_TIMEOUT_NS, t0 = 0;
	struct timespec pause = { 0, 5000000 };
	struct uf_dev_config cfg;
	int err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.engine = "io_uring";
	cfg.flags = b->o.force ? UF_DEV_FORCE : 0;
	held_log.len = 0;
	if (b->opened)
		uf_set_log_fn(hold_log, &held_log);
	for (;;) {
		err = uf_dev_open(cache, b->t.path, &cfg, dev);
		if (err != -EBUSY || !b->opened || bench_stop ||
		    uf_now_ns() > give_up)
			break;
		if (!t0)
			t0 = uf_now_ns();
		held_log.len = 0;
		nanosleep(&pause, NULL);
	}
	uf_set_log_fn(NULL, NULL);
	if (err && held_log.len)
		fputs(held_log.text, stderr);
	if (t0 && !err) {
		b->busy_reopens++;
		b->busy_wait_ns += uf_now_ns() - t0;
	}
	if (!err)
		b->opened = true;
	return err;
}

static void cache_config(const struct cache_bench *b,
			 struct uf_cache_config *cfg)
{
	uf_cache_config_init(cfg);
	cfg->nr_pages = b->o.pages;
	cfg->policy = b->o.policy;
}

/* Open a cache once, untimed, to learn what --policy resolves to. */
static int resolve_policy(struct cache_bench *b)
{
	struct uf_cache_config cfg;
	struct uf_cache *cache;
	const char *spec;
	int err;

	cache_config(b, &cfg);
	cfg.nr_pages = 16;
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		fprintf(stderr, "uflush-bench cache: cannot open a cache with policy %s: %s\n",
			b->o.policy ? b->o.policy : "(default)",
			strerror(-err));
		return err;
	}
	spec = uf_cache_policy(cache);
	snprintf(b->policy, sizeof(b->policy), "%s", spec ? spec : "?");
	uf_cache_close(cache);
	return 0;
}

/* The timed part: write the range sequentially, then fsync. */
static int uflush_write(struct cache_bench *b, struct uf_cache *cache,
			struct uf_dev *dev, struct uf_file *file,
			struct cache_run *r)
{
	struct uf_cache_stats cs0, cs1;
	struct uf_dev_stats ds0, ds1;
	struct run_probe p;
	uint64_t off, tw;
	double tc0, tc1;
	ssize_t n;
	int err = 0;

	uf_cache_stats(cache, &cs0);
	uf_dev_stats(dev, &ds0);
	probe_start(b, &p);
	tc0 = thread_cpu();
	for (off = 0; off < b->t.range && !bench_stop; off += b->o.bs) {
		n = uf_pwrite(file, b->buf, b->o.bs, off);
		if (n != (ssize_t)b->o.bs) {
			err = n < 0 ? (int)n : -EIO;
			break;
		}
	}
	tw = uf_now_ns();
	tc1 = thread_cpu();
	if (!err)
		err = uf_fsync(file);
	probe_end(b, &p, r);
	uf_cache_stats(cache, &cs1);
	uf_dev_stats(dev, &ds1);
	r->write_secs = (tw - p.t0) / 1e9;
	r->writer_cpu_secs = tc1 - tc0;
	r->fsync_secs = r->secs - r->write_secs;
	r->mbs = off / 1e6 / r->secs;
	r->pages_dirtied = cs1.nr_dirtied - cs0.nr_dirtied;
	r->pages_written = cs1.nr_written - cs0.nr_written;
	r->bdi_written_kb = ds1.bdi_written_kb - ds0.bdi_written_kb;
	r->bdi_bw_kbps = ds1.bdi_write_bandwidth_kbps;
	r->works_done = ds1.works_done - ds0.works_done;
	r->dirty_thresh = cs1.dirty_thresh;
	r->background_thresh = cs1.background_thresh;
	r->write_errors = cs1.write_errors - cs0.write_errors;
	return err;
}

static int run_uflush(struct cache_bench *b, struct cache_row *row,
		      struct cache_run *r)
{
	struct uf_cache_config cfg;
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_dev *dev;
	int err, cerr;

	memset(r, 0, sizeof(*r));
	cache_config(b, &cfg);
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		snprintf(row->why, sizeof(row->why), "uf_cache_open: %s",
			 strerror(-err));
		return err;
	}
	err = open_dev(b, cache, &dev);
	if (err) {
		snprintf(row->why, sizeof(row->why), "uf_dev_open %s: %s",
			 b->t.path, strerror(-err));
		goto out;
	}
	err = uf_file_open(dev, 1, 0, b->t.range, NULL, NULL, &file);
	if (err) {
		snprintf(row->why, sizeof(row->why), "uf_file_open: %s",
			 strerror(-err));
		goto out;
	}
	err = uflush_write(b, cache, dev, file, r);
	if (err)
		snprintf(row->why, sizeof(row->why), "write/fsync: %s",
			 strerror(-err));
out:
	/* closes the file and the device; everything is clean by now */
	cerr = uf_cache_close(cache);
	if (!err && cerr) {
		snprintf(row->why, sizeof(row->why), "uf_cache_close: %s",
			 strerror(-cerr));
		err = cerr;
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* fio                                                                 */

static int fio_job_build(const struct cache_bench *b, enum cache_case c,
			 struct fio_job *job)
{
	bool raw = c == CASE_RAW;
	int err = 0;

	fio_job_init(job);
	err |= fio_arg(job, "--name=uflush-cache-%s", raw ? "raw" : "kernel");
	err |= fio_arg(job, "--filename=%s", b->t.path);
	err |= fio_arg(job, "--direct=%d", raw ? 1 : 0);
	err |= fio_arg(job, "--rw=write");
	if (b->o.bs % (1u << 20))
		err |= fio_arg(job, "--bs=%" PRIu64 "k", b->o.bs >> 10);
	else
		err |= fio_arg(job, "--bs=%" PRIu64 "M", b->o.bs >> 20);
	if (raw) {
		err |= fio_arg(job, "--iodepth=32");
		err |= fio_arg(job, "--ioengine=io_uring");
	} else {
		err |= fio_arg(job, "--ioengine=psync");
	}
	err |= fio_arg(job, "--size=%" PRIu64, b->t.range);
	err |= fio_arg(job, "--end_fsync=1");
	err |= fio_arg(job, "--output-format=json");
	return err ? -E2BIG : 0;
}

static int run_fio(struct cache_bench *b, enum cache_case c,
		   struct cache_row *row, struct cache_run *r)
{
	struct fio_result res;
	struct fio_job job;
	struct run_probe p;
	int err;

	memset(r, 0, sizeof(*r));
	err = fio_job_build(b, c, &job);
	if (err)
		return err;
	fio_job_cmdline(&job, row->cmd, sizeof(row->cmd));
	probe_start(b, &p);
	err = fio_run(&job, &res);
	probe_end(b, &p, r);
	if (err) {
		snprintf(row->why, sizeof(row->why), "fio: %s", res.err);
		return err;
	}
	/* fio's runtime covers its writes and its end_fsync */
	r->mbs = res.bw_bytes / 1e6;
	if (res.bw_bytes > 0)
		r->secs = res.io_bytes / res.bw_bytes;
	r->cpu = res.usr_cpu + res.sys_cpu;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The schedule                                                        */

static void report_run(const struct cache_bench *b, unsigned int rep,
		       enum cache_case c, const struct cache_run *r)
{
	fprintf(stderr, "  rep %u/%u  %-17s %8.1f MB/s  %5.2f s  cpu %4.0f%%",
		rep + 1, b->o.reps, case_names[c], r->mbs, r->secs, r->cpu);
	if (c == CASE_UFLUSH)
		fprintf(stderr, "  (writes %.2f s, writer cpu %.2f s; fsync %.2f s)",
			r->write_secs, r->writer_cpu_secs, r->fsync_secs);
	fprintf(stderr, "\n");
}

/*
 * One run of one case.  A case that fails on its first run is skipped
 * from then on (fio missing a feature, say); a later failure stops the
 * benchmark.
 */
static int run_one(struct cache_bench *b, enum cache_case c, unsigned int rep)
{
	struct cache_row *row = &b->rows[c];
	struct cache_run r;
	int err;

	if (row->skipped)
		return 0;
	drop_caches(b);
	if (bench_stop)
		return 0;
	if (c == CASE_UFLUSH)
		err = run_uflush(b, row, &r);
	else
		err = run_fio(b, c, row, &r);
	if (bench_stop)
		return 0;
	if (err) {
		fprintf(stderr, "  %s: %s\n", case_names[c], row->why);
		if (row->n)
			return err;
		row->skipped = true;
		return 0;
	}
	row->runs[row->n++] = r;
	report_run(b, rep, c, &r);
	return 0;
}

/* Rotate the order each rep, so that no case always follows another. */
static void make_order(struct cache_bench *b)
{
	unsigned int rep, i;

	for (rep = 0; rep < b->o.reps; rep++)
		for (i = 0; i < NR_CASES; i++)
			b->order[rep][i] = (rep + i) % NR_CASES;
}

static int run_all(struct cache_bench *b)
{
	unsigned int rep, i;
	int err;

	for (rep = 0; rep < b->o.reps && !bench_stop; rep++) {
		for (i = 0; i < NR_CASES && !bench_stop; i++) {
			err = run_one(b, b->order[rep][i], rep);
			if (err)
				return err;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The device                                                          */

static void target_sysfs(struct cache_target *t)
{
	char path[PATH_MAX];
	unsigned long v;
	struct stat st;

	t->stat_path[0] = '\0';
	if (stat(t->path, &st) || !S_ISBLK(st.st_mode))
		return;
	t->is_blk = true;
	snprintf(t->stat_path, sizeof(t->stat_path),
		 "/sys/dev/block/%u:%u/stat", major(st.st_rdev),
		 minor(st.st_rdev));
	snprintf(path, sizeof(path),
		 "/sys/dev/block/%u:%u/queue/max_sectors_kb",
		 major(st.st_rdev), minor(st.st_rdev));
	if (!read_ulong(path, &v))
		t->max_sectors_kb = v;
}

static void describe_blk(struct cache_target *t, const char *what)
{
	char backing[300];

	t->dio = -1;
	if (bench_loop_info(t->path, &t->dio, backing, sizeof(backing))) {
		t->dio = -1;
		snprintf(t->desc, sizeof(t->desc), "%s", what);
		return;
	}
	snprintf(t->desc, sizeof(t->desc),
		 "loop device over %s, dio=%d%s", backing, t->dio,
		 t->dio == 1 ? " (verified in sysfs)" : " (BUFFERED)");
	if (t->dio != 1)
		fprintf(stderr,
			"uflush-bench cache: warning: %s has dio=0: every case goes through the host page cache and the numbers mean little\n",
			t->path);
}

static int target_scratch(struct cache_bench *b)
{
	struct cache_target *t = &b->t;
	int err;

	err = uf_testdev_create(b->o.size, 0, &t->td);
	if (err) {
		fprintf(stderr,
			"uflush-bench cache: cannot create a scratch device: %s\n",
			strerror(-err));
		return err;
	}
	t->scratch = true;
	t->path = t->td.path;
	t->range = b->o.size;
	t->dio = -1;
	if (t->td.is_loop)
		describe_blk(t, "loop device");
	else
		snprintf(t->desc, sizeof(t->desc),
			 "plain file opened with O_DIRECT (no loop device: %s); the kernel case writes the file through the host's page cache",
			 t->td.why_not_loop);
	target_sysfs(t);
	return 0;
}

static int target_dev(struct cache_bench *b)
{
	struct cache_target *t = &b->t;
	uint64_t size = 0;
	struct stat st;
	int fd;

	t->path = b->o.dev;
	t->dio = -1;
	if (stat(t->path, &st)) {
		fprintf(stderr, "uflush-bench cache: %s: %s\n", t->path,
			strerror(errno));
		return -errno;
	}
	if (S_ISBLK(st.st_mode)) {
		fd = open(t->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			size = lseek(fd, 0, SEEK_END);
			close(fd);
		}
		describe_blk(t, "block device");
	} else if (S_ISREG(st.st_mode)) {
		size = st.st_size;
		snprintf(t->desc, sizeof(t->desc),
			 "regular file opened with O_DIRECT");
	} else {
		fprintf(stderr, "uflush-bench cache: %s: not a block device or a file\n",
			t->path);
		return -ENODEV;
	}
	if (size < b->o.size) {
		fprintf(stderr,
			"uflush-bench cache: %s has %" PRIu64 " bytes, --size wants %" PRIu64 "\n",
			t->path, size, b->o.size);
		return -ERANGE;
	}
	t->range = b->o.size;
	target_sysfs(t);
	fprintf(stderr,
		"uflush-bench cache: warning: writing over the first %" PRIu64 " bytes of %s: their data will be destroyed\n",
		t->range, t->path);
	return 0;
}

/*
 * Write the scratch range once (O_DIRECT, untimed) so that no run pays for
 * allocating blocks in the sparse backing file.
 */
static int prefill(struct cache_bench *b)
{
	uint64_t off, t0 = uf_now_ns();
	size_t chunk = CACHE_PREFILL_CHUNK;
	ssize_t n;
	void *buf;
	int fd, err = 0;

	if (posix_memalign(&buf, 4096, chunk))
		return -ENOMEM;
	memset(buf, 0xa5, chunk);
	fd = open(b->t.path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	for (off = 0; off < b->t.range && !bench_stop; off += n) {
		size_t len = b->t.range - off < chunk ?
			     b->t.range - off : chunk;

		n = pwrite(fd, buf, len, off);
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
	}
	if (!err && fdatasync(fd))
		err = -errno;
	close(fd);
	free(buf);
	if (!err && !bench_stop)
		fprintf(stderr,
			"prefill: wrote %.2f GiB in %.1f s so that no run writes into holes\n",
			b->t.range / (double)(1u << 30),
			(uf_now_ns() - t0) / 1e9);
	return err;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

static unsigned int run_values(const struct cache_row *row, size_t off,
			       double *v)
{
	unsigned int i;

	for (i = 0; i < row->n; i++)
		v[i] = *(const double *)((const char *)&row->runs[i] + off);
	return row->n;
}

static void row_stats(const struct cache_row *row, size_t off,
		      struct bench_stats *st)
{
	double v[CACHE_MAX_REPS];

	bench_stats(v, run_values(row, off, v), st);
}

#define ROW_STATS(row, field, st) \
	row_stats(row, offsetof(struct cache_run, field), st)

static double row_median_mbs(const struct cache_row *row)
{
	struct bench_stats st;

	ROW_STATS(row, mbs, &st);
	return row->n ? st.median : 0;
}

/* Median over the runs of the device's write requests and their size. */
static bool row_dev(const struct cache_row *row, double *ios, double *kib)
{
	double v[CACHE_MAX_REPS], s[CACHE_MAX_REPS];
	struct bench_stats a, c;
	unsigned int i, n = 0;

	for (i = 0; i < row->n; i++) {
		if (!row->runs[i].have_dev || !row->runs[i].dev_ios)
			continue;
		v[n] = row->runs[i].dev_ios;
		s[n] = row->runs[i].dev_sectors * 512.0 / 1024 /
		       row->runs[i].dev_ios;
		n++;
	}
	if (!n)
		return false;
	bench_stats(v, n, &a);
	bench_stats(s, n, &c);
	*ios = a.median;
	*kib = c.median;
	return true;
}

static void fmt_num(char *buf, size_t len, double v)
{
	snprintf(buf, len, v >= 100 ? "%.0f" : "%.1f", v);
}

enum {
	COL_CASE, COL_MBS, COL_SPREAD, COL_X_RAW, COL_X_KERNEL, COL_CPU,
	COL_HOST, COL_REQS, COL_REQ_KIB,
};

static const char *const cache_cols[] = {
	"case", ">MB/s", ">(min-max)", ">x fio raw", ">x kernel", ">cpu%",
	">host cpu%", ">dev writes", ">avg KiB",
};

static void set_ratio(struct bench_table *t, int row, unsigned int col,
		      double mine, const struct cache_row *base)
{
	double m = row_median_mbs(base);

	if (!base->n || m <= 0)
		bench_table_set(t, row, col, "-");
	else
		bench_table_set(t, row, col, "%.2f", mine / m);
}

static void table_row(const struct cache_bench *b, struct bench_table *t,
		      enum cache_case c)
{
	const struct cache_row *r = &b->rows[c];
	struct bench_stats m, cpu, host;
	char lo[24], hi[24], num[24];
	double ios, kib;
	int row = bench_table_row(t);

	if (row < 0)
		return;
	bench_table_set(t, row, COL_CASE, "%s", case_names[c]);
	if (!r->n) {
		bench_table_set(t, row, COL_MBS, "%s",
				r->skipped ? "skipped" : "no run");
		return;
	}
	ROW_STATS(r, mbs, &m);
	ROW_STATS(r, cpu, &cpu);
	ROW_STATS(r, host_cpu, &host);
	fmt_num(num, sizeof(num), m.median);
	fmt_num(lo, sizeof(lo), m.min);
	fmt_num(hi, sizeof(hi), m.max);
	bench_table_set(t, row, COL_MBS, "%s", num);
	bench_table_set(t, row, COL_SPREAD, "%s-%s", lo, hi);
	set_ratio(t, row, COL_X_RAW, m.median, &b->rows[CASE_RAW]);
	set_ratio(t, row, COL_X_KERNEL, m.median, &b->rows[CASE_KERNEL]);
	bench_table_set(t, row, COL_CPU, "%.0f", cpu.median);
	bench_table_set(t, row, COL_HOST, "%.0f", host.median);
	if (row_dev(r, &ios, &kib)) {
		bench_table_set(t, row, COL_REQS, "%.0f", ios);
		bench_table_set(t, row, COL_REQ_KIB, "%.0f", kib);
	} else {
		bench_table_set(t, row, COL_REQS, "-");
		bench_table_set(t, row, COL_REQ_KIB, "-");
	}
}

static void print_header(const struct cache_bench *b)
{
	uint64_t cache_bytes = (uint64_t)b->o.pages * 4096;

	printf("\nuflush-bench cache: sequential writes through the cache vs fio raw and the kernel's page cache\n");
	printf("device:  %s: %s%s\n", b->t.path, b->t.desc,
	       b->t.scratch ? " (scratch, removed at exit)" : "");
	if (b->t.max_sectors_kb)
		printf("         block layer max_sectors_kb %u\n",
		       b->t.max_sectors_kb);
	printf("size:    %.2f GiB written per run in %" PRIu64 " KiB writes (%.1f x the uflush cache)\n",
	       b->t.range / (double)(1u << 30), b->o.bs >> 10,
	       (double)b->t.range / cache_bytes);
	printf("uflush:  %u pages (%.0f MiB), engine io_uring, one writer thread\n",
	       b->o.pages, cache_bytes / (double)(1u << 20));
	printf("policy:  %s\n", b->policy);
	printf("kernel:  %s; host vm.dirty_ratio %lu, dirty_background_ratio %lu, MemAvailable %.1f GiB\n",
	       b->kernel, b->host_dirty_ratio, b->host_bg_ratio,
	       b->host_avail / (double)(1u << 30));
	if (b->have_fio)
		printf("fio:     %s (%s)\n", b->fio_version, fio_binary());
	else
		printf("fio:     BASELINES MISSING: %s\n", b->fio_why);
	if (b->o.no_drop)
		printf("caches:  host caches NOT dropped between runs (--no-drop-caches; sync only)\n");
	else if (b->drop_err)
		printf("caches:  host caches could NOT be dropped between runs: %s (sync only)\n",
		       strerror(-b->drop_err));
	else
		printf("caches:  host page cache synced and dropped before every run (%u drops)\n",
		       b->drops);
	printf("runs:    %u reps, the three cases interleaved (order rotated each rep); medians%s\n\n",
	       b->o.reps,
	       bench_stop ? " (INTERRUPTED: partial results)" : "");
}

static void print_uflush(const struct cache_bench *b)
{
	const struct cache_row *r = &b->rows[CASE_UFLUSH];
	const struct cache_run *last;
	struct bench_stats w, wc, f, pw;
	double ios, kib;
	double wmbs[CACHE_MAX_REPS], v[CACHE_MAX_REPS];
	unsigned int i;

	if (!r->n)
		return;
	last = &r->runs[r->n - 1];
	for (i = 0; i < r->n; i++)
		wmbs[i] = r->runs[i].write_secs > 0 ?
			  b->t.range / 1e6 / r->runs[i].write_secs : 0;
	ROW_STATS(r, write_secs, &w);
	ROW_STATS(r, writer_cpu_secs, &wc);
	ROW_STATS(r, fsync_secs, &f);
	bench_stats(wmbs, r->n, &pw);
	printf("\nuflush, medians over %u run%s (min-max):\n", r->n,
	       r->n == 1 ? "" : "s");
	printf("  uf_pwrite loop alone  %.2f s (%.2f-%.2f) = %.0f MB/s into the cache, throttled\n",
	       w.median, w.min, w.max, pw.median);
	printf("  writer thread CPU     %.2f s (%.2f-%.2f) of that; the rest asleep (throttled)\n",
	       wc.median, wc.min, wc.max);
	printf("  uf_fsync              %.2f s (%.2f-%.2f)\n", f.median,
	       f.min, f.max);
	for (i = 0; i < r->n; i++)
		v[i] = r->runs[i].pages_written;
	bench_stats(v, r->n, &pw);
	printf("  pages written         %.0f (%" PRIu64 " in the range; dirtied %lu, bdi_written %lu KiB in the last run)\n",
	       pw.median, b->t.range / 4096, last->pages_dirtied,
	       last->bdi_written_kb);
	printf("  limits                dirty_thresh %lu pages, background_thresh %lu; %lu wb works; bdi write bandwidth %lu KiB/s at the end\n",
	       last->dirty_thresh, last->background_thresh,
	       last->works_done, last->bdi_bw_kbps);
	if (row_dev(r, &ios, &kib))
		printf("  write requests        not counted by uf_cache_stats/uf_dev_stats; the device completed %.0f, %.0f KiB on average\n",
		       ios, kib);
	if (last->write_errors)
		printf("  WRITE ERRORS          %lu in the last run\n",
		       last->write_errors);
}

static void print_notes(const struct cache_bench *b)
{
	unsigned int c;

	printf("\nMB/s = 10^6 bytes/s from the first write to the return of fsync (fio: its runtime,\n"
	       "which includes --end_fsync).  x fio raw, x kernel = ratio of the medians.\n"
	       "cpu%% = CPU time per wall second: uflush all the process's threads (writer, flusher,\n"
	       "I/O completion); fio its job's usr+sys.  host cpu%% = busy time of all %ld CPUs\n"
	       "(/proc/stat) over the run, including the kernel's flusher and loop workers; for fio\n"
	       "the window includes fio's start-up.  dev writes, avg KiB = write requests the device\n"
	       "completed and their mean size (its sysfs stat: after the block layer's split/merge).\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	if (b->busy_reopens)
		printf("%u reopen(s) found the device still held by our previous handle (-EBUSY) and waited\n"
		       "%.0f ms in all, untimed.\n",
		       b->busy_reopens, b->busy_wait_ns / 1e6);
	for (c = 0; c < NR_CASES; c++)
		if (b->rows[c].skipped)
			printf("%s skipped: %s\n", case_names[c],
			       b->rows[c].why);
	printf("\nsizeof(struct page) = %zu bytes\n", sizeof(struct page));
	if (b->rows[CASE_RAW].cmd[0] || b->rows[CASE_KERNEL].cmd[0])
		printf("\nfio command lines (each run once per rep):\n");
	for (c = 0; c < NR_CASES; c++)
		if (b->rows[c].cmd[0])
			printf("  %s\n", b->rows[c].cmd);
}

static void print_results(const struct cache_bench *b)
{
	static struct bench_table t;
	unsigned int i;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < sizeof(cache_cols) / sizeof(cache_cols[0]); i++)
		bench_table_col(&t, cache_cols[i]);
	for (i = 0; i < NR_CASES; i++)
		table_row(b, &t, i);
	print_header(b);
	bench_table_print(&t, stdout);
	print_uflush(b);
	print_notes(b);
	fflush(stdout);
}

static void json_stats(FILE *f, const struct cache_row *r, const char *name,
		       size_t off)
{
	double v[CACHE_MAX_REPS];
	struct bench_stats st;
	unsigned int n = run_values(r, off, v);

	bench_stats(v, n, &st);
	fprintf(f, "\"%s\": ", name);
	bench_json_array(f, v, n);
	fprintf(f, ", \"%s_median\": %.3f, \"%s_min\": %.3f, \"%s_max\": %.3f",
		name, st.median, name, st.min, name, st.max);
}

#define JSON_STATS(f, r, field) \
	json_stats(f, r, #field, offsetof(struct cache_run, field))

static void json_ratio(FILE *f, const char *name, const struct cache_row *r,
		       const struct cache_row *base)
{
	double m = row_median_mbs(base);

	if (r->n && base->n && m > 0)
		fprintf(f, ", \"%s\": %.4f", name, row_median_mbs(r) / m);
	else
		fprintf(f, ", \"%s\": null", name);
}

static void json_row(FILE *f, const struct cache_bench *b, enum cache_case c)
{
	const struct cache_row *r = &b->rows[c];
	unsigned int i;

	fprintf(f, "    {\"case\": \"%s\", \"status\": \"%s\", \"reason\": ",
		case_keys[c], r->skipped ? "skipped" : r->n ? "ok" : "no run");
	bench_json_str(f, r->skipped ? r->why : "");
	fprintf(f, ", \"cmd\": ");
	bench_json_str(f, r->cmd);
	fprintf(f, ",\n     ");
	JSON_STATS(f, r, mbs);
	fprintf(f, ",\n     ");
	JSON_STATS(f, r, secs);
	fprintf(f, ",\n     ");
	JSON_STATS(f, r, cpu);
	fprintf(f, ",\n     ");
	JSON_STATS(f, r, host_cpu);
	json_ratio(f, "ratio_fio_raw", r, &b->rows[CASE_RAW]);
	json_ratio(f, "ratio_kernel", r, &b->rows[CASE_KERNEL]);
	fprintf(f, ",\n     \"dev_write_ios\": [");
	for (i = 0; i < r->n; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "",
			r->runs[i].have_dev ? r->runs[i].dev_ios : 0);
	fprintf(f, "], \"dev_write_sectors\": [");
	for (i = 0; i < r->n; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "",
			r->runs[i].have_dev ? r->runs[i].dev_sectors : 0);
	fprintf(f, "]");
	if (c == CASE_UFLUSH) {
		fprintf(f, ",\n     ");
		JSON_STATS(f, r, write_secs);
		fprintf(f, ",\n     ");
		JSON_STATS(f, r, writer_cpu_secs);
		fprintf(f, ",\n     ");
		JSON_STATS(f, r, fsync_secs);
		fprintf(f, ",\n     \"pages_written\": [");
		for (i = 0; i < r->n; i++)
			fprintf(f, "%s%lu", i ? ", " : "",
				r->runs[i].pages_written);
		fprintf(f, "], \"pages_dirtied\": [");
		for (i = 0; i < r->n; i++)
			fprintf(f, "%s%lu", i ? ", " : "",
				r->runs[i].pages_dirtied);
		fprintf(f, "], \"write_errors\": [");
		for (i = 0; i < r->n; i++)
			fprintf(f, "%s%lu", i ? ", " : "",
				r->runs[i].write_errors);
		fprintf(f, "]");
	}
	fprintf(f, "}");
}

static int write_json(const struct cache_bench *b, bool interrupted)
{
	FILE *f = fopen(b->o.json, "w");
	unsigned int c;

	if (!f) {
		fprintf(stderr, "uflush-bench cache: cannot write %s: %s\n",
			b->o.json, strerror(errno));
		return -errno;
	}
	fprintf(f, "{\n  \"benchmark\": \"cache\",\n  \"kernel\": ");
	bench_json_str(f, b->kernel);
	fprintf(f, ",\n  \"device\": {\"path\": ");
	bench_json_str(f, b->t.path);
	fprintf(f, ", \"scratch\": %s, \"loop\": %s, \"dio\": %d, \"description\": ",
		b->t.scratch ? "true" : "false",
		b->t.dio >= 0 ? "true" : "false", b->t.dio);
	bench_json_str(f, b->t.desc);
	fprintf(f, ", \"max_sectors_kb\": %u},\n", b->t.max_sectors_kb);
	fprintf(f, "  \"size_bytes\": %" PRIu64 ", \"bs\": %" PRIu64 ", \"reps\": %u, \"interrupted\": %s,\n",
		b->t.range, b->o.bs, b->o.reps,
		interrupted ? "true" : "false");
	fprintf(f, "  \"cache\": {\"pages\": %u, \"policy\": ", b->o.pages);
	bench_json_str(f, b->policy);
	fprintf(f, ", \"engine\": \"io_uring\", \"sizeof_struct_page\": %zu},\n",
		sizeof(struct page));
	fprintf(f, "  \"host\": {\"dirty_ratio\": %lu, \"dirty_background_ratio\": %lu, \"mem_available\": %" PRIu64 ", \"caches_dropped\": %s, \"drop_error\": ",
		b->host_dirty_ratio, b->host_bg_ratio, b->host_avail,
		!b->o.no_drop && !b->drop_err ? "true" : "false");
	bench_json_str(f, b->drop_err ? strerror(-b->drop_err) : "");
	fprintf(f, "},\n  \"fio\": {\"available\": %s, \"version\": ",
		b->have_fio ? "true" : "false");
	bench_json_str(f, b->have_fio ? b->fio_version : "");
	fprintf(f, ", \"why_missing\": ");
	bench_json_str(f, b->have_fio ? "" : b->fio_why);
	fprintf(f, "},\n  \"results\": [\n");
	for (c = 0; c < NR_CASES; c++) {
		json_row(f, b, c);
		fprintf(f, "%s\n", c + 1 < NR_CASES ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f)) {
		fprintf(stderr, "uflush-bench cache: writing %s: %s\n",
			b->o.json, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

void bench_cache_usage(FILE *f)
{
	fprintf(f,
		"usage: uflush-bench cache [OPTIONS]\n"
		"\n"
		"Sequential write throughput through uflush's page cache (one thread,\n"
		"uf_pwrite in --bs chunks, then uf_fsync) beside fio on the raw device\n"
		"(O_DIRECT, QD 32, io_uring) and fio through the host kernel's page cache\n"
		"(buffered psync) on the same device, each timed to the return of its\n"
		"fsync; interleaved, medians and min-max spreads printed.  The host's\n"
		"page cache is dropped before every run (needs root).\n"
		"Default device: a scratch loop device (direct I/O) over a sparse file,\n"
		"or the file itself where a loop device cannot be made; removed at exit.\n"
		"\n"
		"  --size SIZE        bytes written per run, and the scratch device size\n"
		"                     (default 1G; several times the cache, so that\n"
		"                     writeback and throttling reach their steady state)\n"
		"  --bs SIZE          write size, uflush and fio (default 1M)\n"
		"  --pages N          uflush cache frames of 4 KiB (default 65536 = 256 MiB)\n"
		"  --policy SPEC      uflush flush policy: preset[,knob=value...], e.g.\n"
		"                     kara-v4.2,nowait=v4 (default: the library's)\n"
		"  --reps N           repetitions of the three cases (default 3)\n"
		"  --dev PATH         use this block device or file: ITS DATA IS OVERWRITTEN\n"
		"  --force            open PATH even if mounted or in use\n"
		"  --no-fio           skip both fio baselines\n"
		"  --no-drop-caches   only sync between runs\n"
		"  --json FILE        also write the results as JSON\n"
		"\n"
		"Environment: FIO = the fio binary; UFLUSH_TESTDIR = where the scratch\n"
		"file goes (default /var/tmp).\n");
}

enum {
	OPT_SIZE = 256, OPT_BS, OPT_PAGES, OPT_POLICY, OPT_REPS, OPT_DEV,
	OPT_FORCE, OPT_NO_FIO, OPT_NO_DROP, OPT_JSON, OPT_HELP,
};

static const struct option cache_longopts[] = {
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "bs", required_argument, NULL, OPT_BS },
	{ "pages", required_argument, NULL, OPT_PAGES },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "no-fio", no_argument, NULL, OPT_NO_FIO },
	{ "no-drop-caches", no_argument, NULL, OPT_NO_DROP },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int bad_opt(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "uflush-bench cache: bad %s '%s' (want %s)\n", opt,
		val, want);
	return -EINVAL;
}

static int parse_one(struct cache_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case OPT_SIZE:
		if (bench_parse_size(arg, &o->size) || o->size < (16u << 20))
			return bad_opt("--size", arg, "a size >= 16M");
		return 0;
	case OPT_BS:
		if (bench_parse_size(arg, &o->bs) || o->bs % 4096 ||
		    o->bs > (64u << 20))
			return bad_opt("--bs", arg,
				       "a multiple of 4k, at most 64M");
		return 0;
	case OPT_PAGES:
		if (bench_parse_uint(arg, 16, UINT_MAX, &o->pages))
			return bad_opt("--pages", arg, ">= 16");
		return 0;
	case OPT_REPS:
		if (bench_parse_uint(arg, 1, CACHE_MAX_REPS, &o->reps))
			return bad_opt("--reps", arg, "1..32");
		return 0;
	}
	return -EINVAL;
}

static int parse_opts(struct cache_opts *o, int argc, char **argv)
{
	int opt, err;

	memset(o, 0, sizeof(*o));
	o->size = CACHE_DEFAULT_SIZE;
	o->bs = CACHE_DEFAULT_BS;
	o->pages = CACHE_DEFAULT_PAGES;
	o->reps = 3;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", cache_longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_POLICY: o->policy = optarg; break;
		case OPT_DEV: o->dev = optarg; break;
		case OPT_FORCE: o->force = true; break;
		case OPT_NO_FIO: o->no_fio = true; break;
		case OPT_NO_DROP: o->no_drop = true; break;
		case OPT_JSON: o->json = optarg; break;
		case OPT_HELP: bench_cache_usage(stdout); return 1;
		case '?': return -EINVAL;
		default:
			err = parse_one(o, opt, optarg);
			if (err)
				return err;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uflush-bench cache: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (o->size % o->bs) {
		fprintf(stderr, "uflush-bench cache: --size must be a multiple of --bs\n");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Main                                                                */

static void find_fio(struct cache_bench *b)
{
	if (b->o.no_fio) {
		snprintf(b->fio_why, sizeof(b->fio_why), "--no-fio given");
	} else {
		b->have_fio = !fio_find(b->fio_version, sizeof(b->fio_version),
					b->fio_why, sizeof(b->fio_why));
		if (!b->have_fio)
			fprintf(stderr,
				"uflush-bench cache: fio baselines missing (%s); printing uflush numbers only\n",
				b->fio_why);
	}
	if (!b->have_fio) {
		b->rows[CASE_RAW].skipped = true;
		b->rows[CASE_KERNEL].skipped = true;
		snprintf(b->rows[CASE_RAW].why, sizeof(b->rows[CASE_RAW].why),
			 "%s", b->fio_why);
		snprintf(b->rows[CASE_KERNEL].why,
			 sizeof(b->rows[CASE_KERNEL].why), "%s", b->fio_why);
	}
}

static int alloc_buffer(struct cache_bench *b)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull, x;
	size_t i;

	if (posix_memalign(&b->buf, 4096, b->o.bs))
		return -ENOMEM;
	/* not zeros: a virtual disk may turn zero writes into discards */
	for (i = 0; i < b->o.bs / 8; i++) {
		x = rng;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		rng = x;
		((uint64_t *)b->buf)[i] = x * 0x2545f4914f6cdd1dull;
	}
	return 0;
}

static void announce(const struct cache_bench *b)
{
	uint64_t cache_bytes = (uint64_t)b->o.pages * 4096;

	fprintf(stderr,
		"uflush-bench cache: %s (%s), %.2f GiB per run, %u reps\n",
		b->t.path, b->t.desc, b->t.range / (double)(1u << 30),
		b->o.reps);
	if (b->t.range < 4 * cache_bytes)
		fprintf(stderr,
			"uflush-bench cache: warning: --size is only %.1f x the cache: uflush's writeback will not reach its steady state\n",
			(double)b->t.range / cache_bytes);
}

/* Everything between making the device and removing it. */
static int bench_cache_run(struct cache_bench *b)
{
	int err;

	err = alloc_buffer(b);
	if (err)
		return err;
	make_order(b);
	announce(b);
	if (b->t.scratch && !bench_stop) {
		err = prefill(b);
		if (err) {
			fprintf(stderr, "uflush-bench cache: prefill failed: %s\n",
				strerror(-err));
			return err;
		}
	}
	err = run_all(b);
	if (err)
		return err;
	print_results(b);
	if (b->o.json)
		err = write_json(b, bench_stop);
	return err;
}

static int exit_code(const struct cache_bench *b, int err)
{
	if (bench_stop) {
		fprintf(stderr, "uflush-bench cache: interrupted\n");
		return 130;
	}
	if (err)
		return 1;
	if (!b->rows[CASE_UFLUSH].n) {
		fprintf(stderr, "uflush-bench cache: uflush could not run\n");
		return 1;
	}
	return 0;
}

int bench_cache_main(int argc, char **argv)
{
	static struct cache_bench bench;
	struct cache_bench *b = &bench;
	unsigned int c;
	int err;

	err = parse_opts(&b->o, argc, argv);
	if (err)
		return err > 0 ? 0 : 2;
	for (c = 0; c < NR_CASES; c++)
		b->rows[c].name = case_names[c];
	err = bench_install_signals();
	if (err) {
		fprintf(stderr, "uflush-bench cache: signals: %s\n",
			strerror(-err));
		return 1;
	}
	bench_kernel_version(b->kernel, sizeof(b->kernel));
	host_info(b);
	if (resolve_policy(b))
		return 2;
	find_fio(b);
	err = b->o.dev ? target_dev(b) : target_scratch(b);
	if (err)
		return 1;
	if (!bench_stop)
		err = bench_cache_run(b);
	if (b->t.scratch)
		uf_testdev_destroy(&b->t.td);
	free(b->buf);
	return exit_code(b, err);
}
