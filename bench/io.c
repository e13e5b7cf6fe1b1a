// SPDX-License-Identifier: MIT
/*
 * bench/io.c - `uflush-bench io`: raw write throughput of uflush's I/O
 * engines beside fio on the same device, in the same run.
 *
 * For each pattern (seq: 1 MiB writes at QD 32; rand: aligned 4 KiB random
 * writes at QD 64) and engine (io_uring, libaio, psync), the benchmark runs
 * a closed loop through uf_bdev_submit() for --runtime seconds, then fio
 * with the same pattern, engine, depth and byte range, and repeats the pair
 * --reps times (the repetition loop is the outer one, so that a drift of
 * the machine hits every row alike).  The table shows medians, min-max
 * spreads, the ratio of the medians and the median of the per-repetition
 * ratios of back-to-back runs.
 *
 * The closed loop: the submitting thread keeps QD requests in flight.
 * Completions run on the engine's thread, where end_io may not submit; it
 * only counts bytes, parks the request on a done list and, once a refill
 * batch has gathered, signals the submitter, which resubmits the whole
 * batch with one uf_bdev_submit() call.  Batching the refills trades a
 * little queue depth for far fewer wakeups.
 *
 * The device is a scratch loop device (direct I/O, verified in sysfs) over
 * a sparse file, or that file itself where a loop device cannot be made,
 * destroyed at the end even on SIGINT; or --dev PATH, which is overwritten.
 * A scratch device is written once in full before the runs, so that no run
 * pays for allocating blocks in the sparse backing file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"
#include "io/testdev.h"

#define IO_MAX_REPS		32
#define IO_DEFAULT_SIZE		(2ull << 30)
#define IO_WAIT_SLICE_NS	100000000ull	/* poll bench_stop this often */
#define IO_DRAIN_TIMEOUT_NS	30000000000ull
#define IO_REOPEN_TIMEOUT_NS	5000000000ull

struct io_pattern {
	const char *name;
	const char *fio_rw;
	const char *fio_bs;
	unsigned int bs;
	unsigned int qd;
	bool rand;
};

static const struct io_pattern io_patterns[] = {
	{ "seq", "write", "1M", 1u << 20, 32, false },
	{ "rand", "randwrite", "4k", 4096, 64, true },
};

#define NR_PATTERNS (sizeof(io_patterns) / sizeof(io_patterns[0]))

static const char *const pattern_names[] = { "seq", "rand" };
static const char *const engine_names[] = { "io_uring", "libaio", "psync" };

#define NR_ENGINES (sizeof(engine_names) / sizeof(engine_names[0]))

struct io_opts {
	unsigned int runtime;
	unsigned int reps;
	unsigned int batch;		/* 0 = QD/8 */
	uint64_t size;
	bool size_set;
	const char *dev;
	bool force;
	int prefill;			/* -1 = only on a scratch device */
	bool no_fio;
	bool fio_batch;			/* fio batches like our loop */
	const char *json;
	bool pattern[NR_PATTERNS];
	bool engine[NR_ENGINES];
};

/* The device under test. */
struct io_target {
	struct uf_testdev td;
	bool scratch;
	const char *path;
	char desc[512];
	uint64_t range;			/* bytes used: [0, range) */
	unsigned int lbs;
};

/* One row: a pattern on an engine, ours and fio's numbers per rep. */
struct io_cell {
	const struct io_pattern *pat;
	const char *engine;
	bool skipped;
	char why[256];
	bool fio_failed;
	char fio_why[256];
	char fio_cmd[1024];
	unsigned int batch;
	unsigned int nu, nf;
	double u_mbs[IO_MAX_REPS], u_iops[IO_MAX_REPS], u_cpu[IO_MAX_REPS];
	double u_batch[IO_MAX_REPS], u_csw[IO_MAX_REPS];
	int engine_threads;		/* threads the engine started */
	double f_mbs[IO_MAX_REPS], f_iops[IO_MAX_REPS], f_cpu[IO_MAX_REPS];
	double paired[IO_MAX_REPS];	/* uflush/fio of back-to-back runs */
	unsigned int np;
};

struct io_bench {
	struct io_opts o;
	struct io_target t;
	char kernel[160];
	bool have_fio;
	char fio_version[64];
	char fio_why[256];
	bool opened;			/* we have had the device open */
	unsigned int busy_reopens;	/* opens that first saw -EBUSY */
	uint64_t busy_wait_ns;
	unsigned int settles;		/* flushes before runs */
	uint64_t settle_ns;
	int settle_err;
	void *buf;			/* write buffers, one per slot */
	size_t buf_len;
	unsigned int nr_cells;
	struct io_cell cells[NR_PATTERNS * NR_ENGINES];
};

/* ------------------------------------------------------------------ */
/* The closed loop                                                     */

struct io_slot {
	struct uf_io_req req;
	struct iovec iov;
};

struct io_load {
	struct uf_bdev *bdev;
	unsigned int bs;
	unsigned int qd;
	unsigned int batch;
	bool rand;
	uint64_t nr_blocks;
	uint64_t next_blk;
	uint64_t rng;
	uint64_t to_issue;		/* blocks left; UINT64_MAX = timed */
	struct io_slot *slots;
	struct uf_io_req **reqs;	/* the submitter's batch */

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct uf_io_req **done;	/* completed, waiting for a refill */
	unsigned int nr_done;
	unsigned int inflight;
	bool waiting;
	uint64_t bytes;
	uint64_t ios;
	int error;

	uint64_t wakeups;		/* submitter statistics */
	uint64_t refills;
	uint64_t refilled;
};

struct io_run {
	double mbs;
	double iops;
	double cpu;			/* % of one CPU, all our threads */
	double avg_batch;		/* requests per refill */
	double csw_per_io;		/* context switches per request */
	uint64_t bytes;
	double secs;
};

static void load_end_io(struct uf_io_req *req, int res)
{
	struct io_load *ld = req->private;

	pthread_mutex_lock(&ld->lock);
	if (res < 0) {
		if (!ld->error)
			ld->error = res;
	} else {
		ld->bytes += res;
		ld->ios++;
	}
	ld->done[ld->nr_done++] = req;
	ld->inflight--;
	if (ld->waiting && (ld->nr_done >= ld->batch || !ld->inflight ||
			    res < 0))
		pthread_cond_signal(&ld->cond);
	pthread_mutex_unlock(&ld->lock);
}

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void load_prep(struct io_load *ld, struct uf_io_req *req)
{
	uint64_t blk;

	if (ld->rand) {
		blk = xorshift64(&ld->rng) % ld->nr_blocks;
	} else {
		blk = ld->next_blk++;
		if (ld->next_blk == ld->nr_blocks)
			ld->next_blk = 0;
	}
	req->offset = blk * ld->bs;
	if (ld->to_issue != UINT64_MAX)
		ld->to_issue--;
}

static void load_exit(struct io_load *ld)
{
	pthread_cond_destroy(&ld->cond);
	pthread_mutex_destroy(&ld->lock);
	free(ld->slots);
	free(ld->reqs);
	free(ld->done);
}

/* Set up the loop's state; on failure nothing is left to clean up. */
static int load_init(struct io_load *ld, struct uf_bdev *bdev,
		     const struct io_pattern *pat, uint64_t range,
		     unsigned int batch, void *buf)
{
	unsigned int i;

	memset(ld, 0, sizeof(*ld));
	if (bench_cond_init(&ld->cond))
		return -ENOMEM;
	pthread_mutex_init(&ld->lock, NULL);
	ld->bdev = bdev;
	ld->bs = pat->bs;
	ld->qd = pat->qd;
	ld->batch = batch;
	ld->rand = pat->rand;
	ld->nr_blocks = range / pat->bs;
	ld->rng = uf_now_ns() | 1;
	ld->to_issue = UINT64_MAX;
	ld->slots = calloc(ld->qd, sizeof(*ld->slots));
	ld->reqs = calloc(ld->qd, sizeof(*ld->reqs));
	ld->done = calloc(ld->qd, sizeof(*ld->done));
	if (!ld->slots || !ld->reqs || !ld->done || !ld->nr_blocks) {
		load_exit(ld);
		return -ENOMEM;
	}
	for (i = 0; i < ld->qd; i++) {
		struct io_slot *s = &ld->slots[i];

		s->iov.iov_base = (char *)buf + (size_t)i * ld->bs;
		s->iov.iov_len = ld->bs;
		s->req.op = UF_IO_WRITE;
		s->req.iov = &s->iov;
		s->req.nr_iov = 1;
		s->req.end_io = load_end_io;
		s->req.private = ld;
	}
	return 0;
}

static int load_submit(struct io_load *ld, unsigned int n)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++)
		load_prep(ld, ld->reqs[i]);
	pthread_mutex_lock(&ld->lock);
	ld->inflight += n;
	pthread_mutex_unlock(&ld->lock);
	err = uf_bdev_submit(ld->bdev, ld->reqs, n);
	if (err) {
		/* rejected before any was queued (io.h) */
		pthread_mutex_lock(&ld->lock);
		ld->inflight -= n;
		pthread_mutex_unlock(&ld->lock);
	}
	return err;
}

/* Sleep on the condvar until @deadline at the latest (lock held). */
static void load_sleep(struct io_load *ld, uint64_t deadline)
{
	uint64_t now = uf_now_ns(), until = now + IO_WAIT_SLICE_NS;
	struct timespec ts;

	if (deadline < until)
		until = deadline;
	ts.tv_sec = until / 1000000000ull;
	ts.tv_nsec = until % 1000000000ull;
	ld->waiting = true;
	pthread_cond_timedwait(&ld->cond, &ld->lock, &ts);
	ld->waiting = false;
	ld->wakeups++;
}

/*
 * Wait until a refill batch has completed (or all in flight have, or the
 * deadline, an error or a stop came), and move the completed requests to
 * ld->reqs.  Returns how many; *busy says whether requests are still in
 * flight, *err whether one failed.
 */
static unsigned int load_wait(struct io_load *ld, uint64_t deadline,
			      bool *busy, int *err)
{
	unsigned int n;

	pthread_mutex_lock(&ld->lock);
	while (ld->nr_done < ld->batch && ld->inflight && !ld->error &&
	       !bench_stop && uf_now_ns() < deadline)
		load_sleep(ld, deadline);
	n = ld->nr_done;
	memcpy(ld->reqs, ld->done, n * sizeof(*ld->reqs));
	ld->nr_done = 0;
	*busy = ld->inflight > 0;
	*err = ld->error;
	pthread_mutex_unlock(&ld->lock);
	return n;
}

static int load_drain(struct io_load *ld)
{
	uint64_t give_up = uf_now_ns() + IO_DRAIN_TIMEOUT_NS;
	int err;

	pthread_mutex_lock(&ld->lock);
	while (ld->inflight && uf_now_ns() < give_up)
		load_sleep(ld, give_up);
	err = ld->inflight ? -ETIMEDOUT : ld->error;
	pthread_mutex_unlock(&ld->lock);
	return err;
}

/* CPU seconds and context switches of all threads of the process. */
static void usage_now(double *cpu, uint64_t *csw)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	*csw = ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Refill loop: resubmit completed batches until the deadline. */
static int load_loop(struct io_load *ld, uint64_t deadline)
{
	unsigned int n;
	bool busy;
	int err = 0;

	while (!err) {
		n = load_wait(ld, deadline, &busy, &err);
		if (err || bench_stop || uf_now_ns() >= deadline)
			break;
		if (ld->to_issue < n)
			n = ld->to_issue;
		if (!n) {
			if (!busy)
				break;
			continue;
		}
		ld->refills++;
		ld->refilled += n;
		err = load_submit(ld, n);
	}
	return err;
}

/*
 * Run the loop for @ns nanoseconds (or until to_issue blocks were written)
 * and fill @run.  Bytes are those completed from the first submission
 * until the last completion, over that time.
 */
static int load_run(struct io_load *ld, uint64_t ns, struct io_run *run)
{
	unsigned int i, n = ld->qd;
	uint64_t t0, t1, csw0, csw1;
	double c0, c1;
	int err, derr;

	if (ld->to_issue < n)
		n = ld->to_issue;
	for (i = 0; i < n; i++)
		ld->reqs[i] = &ld->slots[i].req;
	usage_now(&c0, &csw0);
	t0 = uf_now_ns();
	err = load_submit(ld, n);
	if (!err)
		err = load_loop(ld, t0 + ns);
	derr = load_drain(ld);
	t1 = uf_now_ns();
	usage_now(&c1, &csw1);
	memset(run, 0, sizeof(*run));
	run->secs = (t1 - t0) / 1e9;
	run->bytes = ld->bytes;
	run->mbs = ld->bytes / 1e6 / run->secs;
	run->iops = ld->ios / run->secs;
	run->cpu = (c1 - c0) / run->secs * 100;
	run->avg_batch = ld->refills ? (double)ld->refilled / ld->refills : 0;
	run->csw_per_io = ld->ios ? (double)(csw1 - csw0) / ld->ios : 0;
	return err ? err : derr;
}

/*
 * One closed loop on an open device, for @ns or until @blocks blocks were
 * written (0 = no limit).  On -ETIMEDOUT requests are stuck in flight and
 * their memory stays allocated: the I/O layer still owns it.
 */
static int load_once(struct io_bench *b, struct uf_bdev *bdev,
		     const struct io_pattern *pat, unsigned int batch,
		     uint64_t ns, uint64_t blocks, struct io_run *run)
{
	struct io_load ld;
	int err;

	err = load_init(&ld, bdev, pat, b->t.range, batch, b->buf);
	if (err)
		return err;
	if (blocks)
		ld.to_issue = blocks;
	err = load_run(&ld, ns, run);
	if (err != -ETIMEDOUT)
		load_exit(&ld);
	return err;
}

/* ------------------------------------------------------------------ */
/* One run of ours                                                     */

static unsigned int cell_batch(const struct io_bench *b,
			       const struct io_pattern *pat)
{
	unsigned int batch = b->o.batch ? b->o.batch : pat->qd / 8;

	if (batch > pat->qd)
		batch = pat->qd;
	return batch ? batch : 1;
}

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
 * Open the device with one engine.  Once we have had it open, -EBUSY means
 * our own previous handle has not let go yet: an io_uring instance with
 * the device registered as a fixed file is torn down asynchronously by the
 * kernel, and the O_EXCL claim goes with its last file reference.  So that
 * case is retried for a while (and counted, for the report).
 */
static int open_dev(struct io_bench *b, const char *engine,
		    unsigned int qd, unsigned int flags, struct uf_bdev **bdev)
{
	uint64_t give_up = uf_now_ns() + IO_REOPEN_TIMEOUT_NS, t0 = 0;
	struct timespec pause = { 0, 5000000 };
	struct uf_bdev_config cfg;
	int err;

	uf_bdev_config_init(&cfg);
	cfg.engine = engine;
	cfg.queue_depth = qd;
	cfg.flags = flags | (b->o.force ? UF_BDEV_FORCE : 0);
	held_log.len = 0;
	if (b->opened)
		uf_set_log_fn(hold_log, &held_log);
	for (;;) {
		err = uf_bdev_open(b->t.path, &cfg, bdev);
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

/* Is task tid of this process one of io_uring's kernel workers (iou-*)? */
static bool io_uring_worker(const char *tid)
{
	char path[300], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "iou-", 4);
}

/*
 * Threads of this process, to see how many an engine starts; -1 if
 * unknown.  io_uring's own workers come and go with the kernel's
 * asynchronous work, so they are not counted.
 */
static int count_threads(void)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.' && !io_uring_worker(de->d_name);
	closedir(d);
	return n;
}

/*
 * A failure to open on the first rep means the engine cannot be set up
 * here: the row is skipped.  Later it is an error.
 */
static int run_ours(struct io_bench *b, struct io_cell *c, struct io_run *run)
{
	struct uf_bdev *bdev;
	int err, threads;

	threads = count_threads();
	err = open_dev(b, c->engine, c->pat->qd, UF_BDEV_NO_FALLBACK, &bdev);
	if (!err && threads >= 0)
		c->engine_threads = count_threads() - threads;
	if (err) {
		snprintf(c->why, sizeof(c->why), "cannot set up %s on %s: %s",
			 c->engine, b->t.path, strerror(-err));
		if (c->nu)
			return err;
		c->skipped = true;
		return 0;
	}
	err = load_once(b, bdev, c->pat, c->batch,
			(uint64_t)b->o.runtime * 1000000000ull, 0, run);
	if (err && err != -ETIMEDOUT)
		snprintf(c->why, sizeof(c->why), "%s %s: I/O failed: %s",
			 c->pat->name, c->engine, strerror(-err));
	else if (err)
		snprintf(c->why, sizeof(c->why),
			 "%s %s: requests did not complete within %llu s",
			 c->pat->name, c->engine,
			 IO_DRAIN_TIMEOUT_NS / 1000000000ull);
	if (err == -ETIMEDOUT)
		return err;	/* closing would wait for them forever */
	uf_bdev_close(bdev);
	return err;
}

/* ------------------------------------------------------------------ */
/* One run of fio                                                      */

static int fio_job_build(const struct io_bench *b, const struct io_cell *c,
			 struct fio_job *job)
{
	const struct io_pattern *pat = c->pat;
	bool psync = !strcmp(c->engine, "psync");
	uint64_t slice = b->t.range / pat->qd / pat->bs * pat->bs;
	int err = 0;

	fio_job_init(job);
	err |= fio_arg(job, "--name=uflush-io");
	err |= fio_arg(job, "--filename=%s", b->t.path);
	err |= fio_arg(job, "--direct=1");
	err |= fio_arg(job, "--rw=%s", pat->fio_rw);
	err |= fio_arg(job, "--bs=%s", pat->fio_bs);
	err |= fio_arg(job, "--ioengine=%s", c->engine);
	if (!psync) {
		err |= fio_arg(job, "--iodepth=%u", pat->qd);
		err |= fio_arg(job, "--size=%" PRIu64, b->t.range);
	} else if (pat->rand) {
		/* QD threads, each random over the whole range */
		err |= fio_arg(job, "--iodepth=1");
		err |= fio_arg(job, "--numjobs=%u", pat->qd);
		err |= fio_arg(job, "--size=%" PRIu64, b->t.range);
	} else {
		/* QD threads, each sequential over its own slice */
		err |= fio_arg(job, "--iodepth=1");
		err |= fio_arg(job, "--numjobs=%u", pat->qd);
		err |= fio_arg(job, "--size=%" PRIu64, slice);
		err |= fio_arg(job, "--offset_increment=%" PRIu64, slice);
	}
	if (psync) {
		err |= fio_arg(job, "--thread");
		err |= fio_arg(job, "--group_reporting");
	} else if (b->o.fio_batch) {
		/* submit and reap in batches, as our closed loop does */
		err |= fio_arg(job, "--iodepth_batch_submit=%u", c->batch);
		err |= fio_arg(job, "--iodepth_batch_complete_max=%u",
			       pat->qd);
	}
	if (pat->rand)
		err |= fio_arg(job, "--norandommap");
	err |= fio_arg(job, "--time_based");
	err |= fio_arg(job, "--runtime=%u", b->o.runtime);
	err |= fio_arg(job, "--output-format=json");
	return err ? -E2BIG : 0;
}

static int run_fio(struct io_bench *b, struct io_cell *c, struct io_run *run)
{
	struct fio_result res;
	struct fio_job job;
	int err;

	err = fio_job_build(b, c, &job);
	if (err)
		return err;
	fio_job_cmdline(&job, c->fio_cmd, sizeof(c->fio_cmd));
	err = fio_run(&job, &res);
	if (err) {
		c->fio_failed = true;
		snprintf(c->fio_why, sizeof(c->fio_why), "%s", res.err);
		return err;
	}
	memset(run, 0, sizeof(*run));
	run->mbs = res.bw_bytes / 1e6;
	run->iops = res.iops;
	/* fio reports the mean of its jobs: scale psync's to the group */
	run->cpu = res.usr_cpu + res.sys_cpu;
	if (!strcmp(c->engine, "psync"))
		run->cpu *= c->pat->qd;
	run->bytes = res.io_bytes;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The schedule                                                        */

static void report_rep(const struct io_cell *c, unsigned int rep,
		       unsigned int reps, const struct io_run *u,
		       const struct io_run *f, bool have_f)
{
	fprintf(stderr, "  rep %u/%u  %-4s %-8s  uflush %8.1f MB/s %9.0f IOPS",
		rep + 1, reps, c->pat->name, c->engine, u->mbs, u->iops);
	if (have_f)
		fprintf(stderr, "   fio %8.1f MB/s %9.0f IOPS   x%.2f\n",
			f->mbs, f->iops, f->mbs > 0 ? u->mbs / f->mbs : 0);
	else
		fprintf(stderr, "   fio -\n");
}

/*
 * Flush the device's volatile cache before a run (untimed).  A loop device
 * passes the flush to its backing file and the disk under it: without it a
 * run inherits the writeback of the data the run before it left behind
 * (up to a second here after a 3 s run), which is noise at best and, as
 * each run has the same predecessor every rep, a bias at worst.
 */
static int settle(struct io_bench *b)
{
	uint64_t t0 = uf_now_ns();
	int fd, err = 0;

	fd = open(b->t.path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fdatasync(fd))
		err = -errno;
	if (fd >= 0)
		close(fd);
	b->settle_ns += uf_now_ns() - t0;
	b->settles++;
	if (err && !b->settle_err) {
		b->settle_err = err;
		fprintf(stderr, "uflush-bench io: warning: cannot flush %s: %s\n",
			b->t.path, strerror(-err));
	}
	return bench_stop ? -EINTR : 0;
}

/* Ours then fio's, for one cell in one rep.  Error = stop everything. */
static int run_pair(struct io_bench *b, struct io_cell *c, unsigned int rep)
{
	struct io_run u, f;
	bool have_f = false;
	int err;

	if (c->skipped)
		return 0;
	settle(b);
	err = run_ours(b, c, &u);
	if (err || c->skipped || bench_stop)
		return err;
	c->u_mbs[c->nu] = u.mbs;
	c->u_iops[c->nu] = u.iops;
	c->u_cpu[c->nu] = u.cpu;
	c->u_batch[c->nu] = u.avg_batch;
	c->u_csw[c->nu] = u.csw_per_io;
	c->nu++;
	if (b->have_fio && !c->fio_failed && !settle(b) &&
	    !run_fio(b, c, &f)) {
		c->f_mbs[c->nf] = f.mbs;
		c->f_iops[c->nf] = f.iops;
		c->f_cpu[c->nf] = f.cpu;
		c->nf++;
		if (f.mbs > 0)
			c->paired[c->np++] = u.mbs / f.mbs;
		have_f = true;
	}
	if (bench_stop)
		return 0;
	report_rep(c, rep, b->o.reps, &u, &f, have_f);
	if (c->fio_failed && !c->nf)
		fprintf(stderr, "  fio failed: %s\n", c->fio_why);
	return 0;
}

static void make_cells(struct io_bench *b)
{
	unsigned int p, e;

	for (p = 0; p < NR_PATTERNS; p++) {
		if (!b->o.pattern[p])
			continue;
		for (e = 0; e < NR_ENGINES; e++) {
			struct io_cell *c = &b->cells[b->nr_cells];

			if (!b->o.engine[e])
				continue;
			memset(c, 0, sizeof(*c));
			c->pat = &io_patterns[p];
			c->engine = engine_names[e];
			c->batch = cell_batch(b, c->pat);
			b->nr_cells++;
		}
	}
}

/* Reps outermost, so that slow drifts of the machine hit every row. */
static int run_all(struct io_bench *b)
{
	unsigned int rep, i;
	int err;

	for (rep = 0; rep < b->o.reps && !bench_stop; rep++) {
		for (i = 0; i < b->nr_cells && !bench_stop; i++) {
			err = run_pair(b, &b->cells[i], rep);
			if (err) {
				fprintf(stderr, "uflush-bench io: %s\n",
					b->cells[i].why);
				return err;
			}
			if (!rep && b->cells[i].skipped)
				fprintf(stderr, "  %s %s: skipped: %s\n",
					b->cells[i].pat->name,
					b->cells[i].engine, b->cells[i].why);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The device                                                          */

static void describe_loop(struct io_target *t, const char *what)
{
	char backing[300];
	int dio;

	if (bench_loop_info(t->path, &dio, backing, sizeof(backing))) {
		snprintf(t->desc, sizeof(t->desc), "%s", what);
		return;
	}
	snprintf(t->desc, sizeof(t->desc),
		 "loop device over %s, direct I/O %s (sysfs loop/dio=%d)",
		 backing, dio == 1 ? "on, verified" : "OFF", dio);
	if (dio != 1)
		fprintf(stderr,
			"uflush-bench io: warning: %s has dio=0: writes go through the host page cache and the numbers mean little\n",
			t->path);
}

static int target_scratch(struct io_bench *b)
{
	struct io_target *t = &b->t;
	int err;

	err = uf_testdev_create(b->o.size, 0, &t->td);
	if (err) {
		fprintf(stderr,
			"uflush-bench io: cannot create a scratch device: %s\n",
			strerror(-err));
		return err;
	}
	t->scratch = true;
	t->path = t->td.path;
	if (t->td.is_loop)
		describe_loop(t, "loop device");
	else
		snprintf(t->desc, sizeof(t->desc),
			 "plain file opened with O_DIRECT (no loop device: %s)",
			 t->td.why_not_loop);
	return 0;
}

static int target_dev(struct io_bench *b)
{
	struct io_target *t = &b->t;
	struct stat st;

	t->path = b->o.dev;
	if (stat(t->path, &st)) {
		fprintf(stderr, "uflush-bench io: %s: %s\n", t->path,
			strerror(errno));
		return -errno;
	}
	if (S_ISBLK(st.st_mode))
		describe_loop(t, "block device");
	else
		snprintf(t->desc, sizeof(t->desc),
			 "regular file opened with O_DIRECT");
	fprintf(stderr,
		"uflush-bench io: warning: writing over %s: its data will be destroyed\n",
		t->path);
	return 0;
}

/* Size and block size, and whether we may open it at all. */
static int target_probe(struct io_bench *b)
{
	struct io_target *t = &b->t;
	struct uf_bdev *bdev;
	uint64_t size;
	int err;

	err = open_dev(b, NULL, 1, 0, &bdev);
	if (err == -EBUSY) {
		fprintf(stderr,
			"uflush-bench io: %s is mounted or in use; --force uses it anyway (and overwrites it)\n",
			t->path);
		return err;
	}
	if (err) {
		fprintf(stderr, "uflush-bench io: cannot open %s: %s\n",
			t->path, strerror(-err));
		return err;
	}
	uf_bdev_size(bdev, &size);
	uf_bdev_block_size(bdev, &t->lbs);
	uf_bdev_close(bdev);
	t->range = size;
	if (b->o.size_set && b->o.size < size)
		t->range = b->o.size;
	t->range &= ~((uint64_t)(1u << 20) - 1);
	if (t->range < (64u << 20) || t->lbs > 4096) {
		fprintf(stderr,
			"uflush-bench io: %s: need >= 64 MiB and <= 4096-byte blocks (have %" PRIu64 " bytes, %u-byte blocks)\n",
			t->path, size, t->lbs);
		return -EINVAL;
	}
	return 0;
}

/* Write the range once, so that later runs overwrite allocated blocks. */
static int prefill(struct io_bench *b)
{
	const struct io_pattern *pat = &io_patterns[0];
	struct uf_bdev *bdev;
	struct io_run run;
	int err;

	err = open_dev(b, NULL, pat->qd, 0, &bdev);
	if (err)
		return err;
	err = load_once(b, bdev, pat, cell_batch(b, pat), UINT64_MAX / 2,
			b->t.range / pat->bs, &run);
	if (err == -ETIMEDOUT)
		return err;
	uf_bdev_close(bdev);
	if (!err && !bench_stop)
		fprintf(stderr,
			"prefill: wrote %.2f GiB in %.1f s (%.0f MB/s) so no run writes into holes\n",
			run.bytes / (double)(1u << 30), run.secs, run.mbs);
	return err;
}

static int alloc_buffers(struct io_bench *b)
{
	size_t len = 0, i;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	unsigned int p;

	for (p = 0; p < NR_PATTERNS; p++)
		if ((size_t)io_patterns[p].bs * io_patterns[p].qd > len)
			len = (size_t)io_patterns[p].bs * io_patterns[p].qd;
	if (posix_memalign(&b->buf, 4096, len))
		return -ENOMEM;
	/* not zeros: a virtual disk may turn zero writes into discards */
	for (i = 0; i < len / 8; i++)
		((uint64_t *)b->buf)[i] = xorshift64(&rng);
	b->buf_len = len;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

static void fmt_num(char *buf, size_t len, double v)
{
	snprintf(buf, len, v >= 100 ? "%.0f" : "%.1f", v);
}

static void set_spread(struct bench_table *t, int row, unsigned int col,
		       const struct bench_stats *st)
{
	char lo[24], hi[24];

	fmt_num(lo, sizeof(lo), st->min);
	fmt_num(hi, sizeof(hi), st->max);
	bench_table_set(t, row, col, "%s-%s", lo, hi);
}

enum {
	COL_PATTERN, COL_ENGINE, COL_U_MBS, COL_U_SPREAD, COL_F_MBS,
	COL_F_SPREAD, COL_RATIO, COL_PAIRED, COL_U_IOPS, COL_F_IOPS,
	COL_U_CPU, COL_F_CPU,
};

static const char *const io_cols[] = {
	"pattern", "engine", ">uflush MB/s", ">(min-max)", ">fio MB/s",
	">(min-max)", ">ratio", ">paired", ">uflush IOPS", ">fio IOPS",
	">uflush cpu%", ">fio cpu%",
};

static void cell_row_fio(struct bench_table *t, int row,
			 const struct io_cell *c, double u_median)
{
	struct bench_stats fm, fi, fc, pr;
	char num[24];

	bench_stats(c->f_mbs, c->nf, &fm);
	bench_stats(c->f_iops, c->nf, &fi);
	bench_stats(c->f_cpu, c->nf, &fc);
	bench_stats(c->paired, c->np, &pr);
	fmt_num(num, sizeof(num), fm.median);
	bench_table_set(t, row, COL_F_MBS, "%s", num);
	set_spread(t, row, COL_F_SPREAD, &fm);
	bench_table_set(t, row, COL_RATIO, "%.2f",
			fm.median > 0 ? u_median / fm.median : 0);
	bench_table_set(t, row, COL_PAIRED, "%.2f", pr.median);
	bench_table_set(t, row, COL_F_IOPS, "%.0f", fi.median);
	bench_table_set(t, row, COL_F_CPU, "%.0f", fc.median);
}

static void cell_row(struct bench_table *t, const struct io_cell *c)
{
	struct bench_stats um, ui, uc;
	int row = bench_table_row(t);
	char num[24];

	if (row < 0)
		return;
	bench_table_set(t, row, COL_PATTERN, "%s", c->pat->name);
	bench_table_set(t, row, COL_ENGINE, "%s", c->engine);
	if (c->skipped || !c->nu) {
		bench_table_set(t, row, COL_U_MBS, "%s",
				c->skipped ? "skipped" : "no run");
		return;
	}
	bench_stats(c->u_mbs, c->nu, &um);
	bench_stats(c->u_iops, c->nu, &ui);
	bench_stats(c->u_cpu, c->nu, &uc);
	fmt_num(num, sizeof(num), um.median);
	bench_table_set(t, row, COL_U_MBS, "%s", num);
	set_spread(t, row, COL_U_SPREAD, &um);
	bench_table_set(t, row, COL_U_IOPS, "%.0f", ui.median);
	bench_table_set(t, row, COL_U_CPU, "%.0f", uc.median);
	if (c->nf) {
		cell_row_fio(t, row, c, um.median);
	} else {
		bench_table_set(t, row, COL_F_MBS, "-");
		bench_table_set(t, row, COL_RATIO, "-");
	}
}

static void print_header(const struct io_bench *b)
{
	printf("\nuflush-bench io: raw write throughput, uflush's I/O engines vs fio, same device\n");
	printf("device:  %s: %s, %.2f GiB used, %u-byte blocks%s\n",
	       b->t.path, b->t.desc, b->t.range / (double)(1u << 30),
	       b->t.lbs, b->t.scratch ? " (scratch, removed at exit)" : "");
	printf("kernel:  %s\n", b->kernel);
	if (b->have_fio)
		printf("fio:     %s (%s)\n", b->fio_version, fio_binary());
	else
		printf("fio:     BASELINE MISSING: %s\n", b->fio_why);
	printf("runs:    %u s each, %u reps, uflush and fio interleaved; medians%s\n\n",
	       b->o.runtime, b->o.reps,
	       bench_stop ? " (INTERRUPTED: partial results)" : "");
}

/* Threads an engine ran for a pattern, or -1 if it did not run. */
static int threads_of(const struct io_bench *b, const char *engine,
		      const char *pattern)
{
	unsigned int i;

	for (i = 0; i < b->nr_cells; i++)
		if (b->cells[i].nu && !strcmp(b->cells[i].engine, engine) &&
		    !strcmp(b->cells[i].pat->name, pattern))
			return b->cells[i].engine_threads;
	return -1;
}

/* How many threads each engine really ran: psync's are its concurrency. */
static void print_threads(const struct io_bench *b)
{
	const char *lead = "engine threads (counted in /proc/self/task):";
	const struct io_cell *c;
	unsigned int e, i;
	int seq, rnd;

	for (e = 0; e < NR_ENGINES; e++) {
		seq = threads_of(b, engine_names[e], "seq");
		rnd = threads_of(b, engine_names[e], "rand");
		if (seq < 0 && rnd < 0)
			continue;
		if (seq < 0 || rnd < 0 || seq == rnd)
			printf("%s %s %d", lead, engine_names[e],
			       seq < 0 ? rnd : seq);
		else
			printf("%s %s %d (seq) / %d (rand)", lead,
			       engine_names[e], seq, rnd);
		lead = ",";
	}
	if (lead[0] == ',')
		printf("\n");
	for (i = 0; i < b->nr_cells; i++) {
		c = &b->cells[i];
		if (!c->nu || strcmp(c->engine, "psync") ||
		    c->engine_threads <= 0 ||
		    (unsigned int)c->engine_threads >= c->pat->qd)
			continue;
		printf("NB: %s/psync: uflush's engine ran %d worker threads at depth %u, so its\n"
		       "    concurrency is %d against fio's %u jobs.\n",
		       c->pat->name, c->engine_threads, c->pat->qd,
		       c->engine_threads, c->pat->qd);
	}
}

static void print_failures(const struct io_bench *b)
{
	const struct io_cell *c;
	unsigned int i;

	for (i = 0; i < b->nr_cells; i++) {
		c = &b->cells[i];
		if (c->skipped)
			printf("%s/%s skipped: %s\n", c->pat->name, c->engine,
			       c->why);
		else if (c->fio_failed && !c->nf)
			printf("%s/%s: fio failed: %s\n", c->pat->name,
			       c->engine, c->fio_why);
	}
	if (b->settles)
		printf("Each run started after a device flush (fdatasync, untimed; %u flushes, %.1f s in all).\n",
		       b->settles, b->settle_ns / 1e9);
	if (b->busy_reopens)
		printf("%u reopen(s) found the device still held by our own previous handle (-EBUSY:\n"
		       "the kernel tears an io_uring down asynchronously) and waited %.0f ms in all, untimed.\n",
		       b->busy_reopens, b->busy_wait_ns / 1e6);
}

static void print_notes(const struct io_bench *b)
{
	unsigned int i, shown = 0;

	printf("\nMB/s = 10^6 bytes/s; spread = min-max over the reps; ratio = median uflush / median fio.\n"
	       "paired = median over the reps of uflush/fio from back-to-back runs (robust to drift).\n"
	       "cpu%% = CPU time of all the process's threads per wall second (fio: its usr+sys,\n"
	       "times numjobs for psync).\n"
	       "seq = 1 MiB sequential writes at QD 32; rand = 4 KiB aligned uniform random writes at\n"
	       "QD 64 (fio --norandommap, so that fio draws offsets as uflush does).\n"
	       "uflush keeps QD requests in flight and resubmits completed ones in batches of %u (seq)\n"
	       "and %u (rand); see --batch.\n"
	       "psync is synchronous: fio runs --numjobs=QD threads at --iodepth=1 (seq: each on its\n"
	       "own slice of the range) against uflush's psync engine at depth QD: equal concurrency.\n"
	       "%s",
	       cell_batch(b, &io_patterns[0]), cell_batch(b, &io_patterns[1]),
	       b->o.fio_batch ?
	       "fio submits in batches of the same size and reaps up to QD at once (--fio-batch).\n" :
	       "fio submits and reaps one request at a time (its default; --fio-batch to batch).\n");
	print_threads(b);
	print_failures(b);
	for (i = 0; i < b->nr_cells; i++) {
		if (!b->cells[i].fio_cmd[0])
			continue;
		if (!shown++)
			printf("\nfio command lines (each run once per rep):\n");
		printf("  %s\n", b->cells[i].fio_cmd);
	}
}

static void print_results(const struct io_bench *b)
{
	static struct bench_table t;
	unsigned int i;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < sizeof(io_cols) / sizeof(io_cols[0]); i++)
		bench_table_col(&t, io_cols[i]);
	for (i = 0; i < b->nr_cells; i++)
		cell_row(&t, &b->cells[i]);
	print_header(b);
	bench_table_print(&t, stdout);
	print_notes(b);
	fflush(stdout);
}

static void json_stats(FILE *f, const char *name, const double *v,
		       unsigned int n)
{
	struct bench_stats st;

	bench_stats(v, n, &st);
	fprintf(f, "\"%s\": ", name);
	bench_json_array(f, v, n);
	fprintf(f, ", \"%s_median\": %.3f, \"%s_min\": %.3f, \"%s_max\": %.3f",
		name, st.median, name, st.min, name, st.max);
}

static void json_cell(FILE *f, const struct io_cell *c)
{
	struct bench_stats u, fs;

	fprintf(f, "    {\"pattern\": \"%s\", \"engine\": \"%s\", \"bs\": %u, \"qd\": %u, \"refill_batch\": %u,\n",
		c->pat->name, c->engine, c->pat->bs, c->pat->qd, c->batch);
	fprintf(f, "     \"status\": \"%s\", \"reason\": ",
		c->skipped ? "skipped" : "ok");
	bench_json_str(f, c->skipped ? c->why : "");
	fprintf(f, ",\n     \"uflush\": {");
	json_stats(f, "mbps", c->u_mbs, c->nu);
	fprintf(f, ", ");
	json_stats(f, "iops", c->u_iops, c->nu);
	fprintf(f, ", ");
	json_stats(f, "cpu_pct", c->u_cpu, c->nu);
	fprintf(f, ", \"avg_refill\": ");
	bench_json_array(f, c->u_batch, c->nu);
	fprintf(f, ", \"ctxsw_per_io\": ");
	bench_json_array(f, c->u_csw, c->nu);
	fprintf(f, ", \"engine_threads\": %d", c->engine_threads);
	fprintf(f, "},\n     \"fio\": {");
	json_stats(f, "mbps", c->f_mbs, c->nf);
	fprintf(f, ", ");
	json_stats(f, "iops", c->f_iops, c->nf);
	fprintf(f, ", ");
	json_stats(f, "cpu_pct", c->f_cpu, c->nf);
	fprintf(f, ", \"error\": ");
	bench_json_str(f, c->fio_failed ? c->fio_why : "");
	fprintf(f, ", \"cmd\": ");
	bench_json_str(f, c->fio_cmd);
	bench_stats(c->u_mbs, c->nu, &u);
	bench_stats(c->f_mbs, c->nf, &fs);
	fprintf(f, "},\n     \"paired_ratios\": ");
	bench_json_array(f, c->paired, c->np);
	if (c->nu && c->nf && fs.median > 0)
		fprintf(f, ",\n     \"ratio\": %.4f}", u.median / fs.median);
	else
		fprintf(f, ",\n     \"ratio\": null}");
}

static int write_json(const struct io_bench *b, bool interrupted)
{
	FILE *f = fopen(b->o.json, "w");
	unsigned int i;

	if (!f) {
		fprintf(stderr, "uflush-bench io: cannot write %s: %s\n",
			b->o.json, strerror(errno));
		return -errno;
	}
	fprintf(f, "{\n  \"benchmark\": \"io\",\n  \"kernel\": ");
	bench_json_str(f, b->kernel);
	fprintf(f, ",\n  \"device\": {\"path\": ");
	bench_json_str(f, b->t.path);
	fprintf(f, ", \"scratch\": %s, \"loop\": %s, \"description\": ",
		b->t.scratch ? "true" : "false",
		b->t.scratch && b->t.td.is_loop ? "true" : "false");
	bench_json_str(f, b->t.desc);
	fprintf(f, ", \"range_bytes\": %" PRIu64 ", \"block_size\": %u},\n",
		b->t.range, b->t.lbs);
	fprintf(f, "  \"runtime_s\": %u, \"reps\": %u, \"interrupted\": %s,\n",
		b->o.runtime, b->o.reps, interrupted ? "true" : "false");
	fprintf(f, "  \"fio\": {\"available\": %s, \"version\": ",
		b->have_fio ? "true" : "false");
	bench_json_str(f, b->have_fio ? b->fio_version : "");
	fprintf(f, ", \"batched\": %s, \"why_missing\": ",
		b->o.fio_batch ? "true" : "false");
	bench_json_str(f, b->have_fio ? "" : b->fio_why);
	fprintf(f, "},\n  \"results\": [\n");
	for (i = 0; i < b->nr_cells; i++) {
		json_cell(f, &b->cells[i]);
		fprintf(f, "%s\n", i + 1 < b->nr_cells ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f)) {
		fprintf(stderr, "uflush-bench io: writing %s: %s\n",
			b->o.json, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

void bench_io_usage(FILE *f)
{
	fprintf(f,
		"usage: uflush-bench io [OPTIONS]\n"
		"\n"
		"Raw write throughput of uflush's I/O engines (uf_bdev_submit in a closed\n"
		"loop) beside fio with the same pattern, engine, depth and byte range on\n"
		"the same device; runs interleaved, medians and min-max spreads printed.\n"
		"Default device: a scratch loop device (direct I/O) over a sparse file,\n"
		"or the file itself where a loop device cannot be made; removed at exit.\n"
		"\n"
		"  --runtime SEC      seconds per run (default 3)\n"
		"  --reps N           repetitions of each uflush/fio pair (default 3)\n"
		"  --size SIZE        scratch device size, or the range used on --dev\n"
		"                     (default 2G; whole device with --dev)\n"
		"  --patterns LIST    seq,rand (default both)\n"
		"  --engines LIST     io_uring,libaio,psync (default all)\n"
		"  --dev PATH         use this block device or file: ITS DATA IS OVERWRITTEN\n"
		"  --force            open PATH even if mounted or in use\n"
		"  --batch N          resubmit completed requests in batches of N\n"
		"                     (default QD/8)\n"
		"  --prefill, --no-prefill\n"
		"                     write the range once before measuring (default:\n"
		"                     only on the scratch device)\n"
		"  --no-fio           skip the fio baseline\n"
		"  --fio-batch        let fio submit in batches of the refill batch and\n"
		"                     reap up to QD at once, as uflush's loop does\n"
		"                     (io_uring, libaio; fio's default is one at a time)\n"
		"  --json FILE        also write the results as JSON\n"
		"\n"
		"Environment: FIO = the fio binary; UFLUSH_TESTDIR = where the scratch\n"
		"file goes (default /var/tmp).\n");
}

enum {
	OPT_RUNTIME = 256, OPT_REPS, OPT_SIZE, OPT_PATTERNS, OPT_ENGINES,
	OPT_DEV, OPT_FORCE, OPT_BATCH, OPT_PREFILL, OPT_NO_PREFILL,
	OPT_NO_FIO, OPT_FIO_BATCH, OPT_JSON, OPT_HELP,
};

static const struct option io_longopts[] = {
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "patterns", required_argument, NULL, OPT_PATTERNS },
	{ "engines", required_argument, NULL, OPT_ENGINES },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "prefill", no_argument, NULL, OPT_PREFILL },
	{ "no-prefill", no_argument, NULL, OPT_NO_PREFILL },
	{ "no-fio", no_argument, NULL, OPT_NO_FIO },
	{ "fio-batch", no_argument, NULL, OPT_FIO_BATCH },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int bad_opt(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "uflush-bench io: bad %s '%s' (want %s)\n", opt, val,
		want);
	return -EINVAL;
}

static int parse_one(struct io_opts *o, int opt, const char *arg)
{
	const char *bad;

	switch (opt) {
	case OPT_RUNTIME:
		if (bench_parse_uint(arg, 1, 3600, &o->runtime))
			return bad_opt("--runtime", arg, "1..3600 seconds");
		return 0;
	case OPT_REPS:
		if (bench_parse_uint(arg, 1, IO_MAX_REPS, &o->reps))
			return bad_opt("--reps", arg, "1..32");
		return 0;
	case OPT_SIZE:
		o->size_set = true;
		if (bench_parse_size(arg, &o->size) || o->size < (64u << 20))
			return bad_opt("--size", arg, "a size >= 64M");
		return 0;
	case OPT_BATCH:
		if (bench_parse_uint(arg, 1, 4096, &o->batch))
			return bad_opt("--batch", arg, "1..QD");
		return 0;
	case OPT_PATTERNS:
		if (bench_parse_list(arg, pattern_names, NR_PATTERNS,
				     o->pattern, &bad))
			return bad_opt("pattern", bad, "seq, rand");
		return 0;
	case OPT_ENGINES:
		if (bench_parse_list(arg, engine_names, NR_ENGINES,
				     o->engine, &bad))
			return bad_opt("engine", bad,
				       "io_uring, libaio, psync");
		return 0;
	}
	return -EINVAL;
}

static int parse_opts(struct io_opts *o, int argc, char **argv)
{
	int opt, err;

	memset(o, 0, sizeof(*o));
	o->runtime = 3;
	o->reps = 3;
	o->size = IO_DEFAULT_SIZE;
	o->prefill = -1;
	memset(o->pattern, 1, sizeof(o->pattern));
	memset(o->engine, 1, sizeof(o->engine));
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", io_longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_DEV: o->dev = optarg; break;
		case OPT_FORCE: o->force = true; break;
		case OPT_PREFILL: o->prefill = 1; break;
		case OPT_NO_PREFILL: o->prefill = 0; break;
		case OPT_NO_FIO: o->no_fio = true; break;
		case OPT_FIO_BATCH: o->fio_batch = true; break;
		case OPT_JSON: o->json = optarg; break;
		case OPT_HELP: bench_io_usage(stdout); return 1;
		case '?': return -EINVAL;
		default:
			err = parse_one(o, opt, optarg);
			if (err)
				return err;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uflush-bench io: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Main                                                                */

static void find_fio(struct io_bench *b)
{
	if (b->o.no_fio) {
		snprintf(b->fio_why, sizeof(b->fio_why), "--no-fio given");
		return;
	}
	b->have_fio = !fio_find(b->fio_version, sizeof(b->fio_version),
				b->fio_why, sizeof(b->fio_why));
	if (!b->have_fio)
		fprintf(stderr,
			"uflush-bench io: fio baseline missing (%s); printing uflush numbers only\n",
			b->fio_why);
}

static void announce(const struct io_bench *b)
{
	unsigned int runs = b->nr_cells * b->o.reps * (b->have_fio ? 2 : 1);

	fprintf(stderr,
		"uflush-bench io: %s (%s), %u rows x %u reps, about %u s\n",
		b->t.path, b->t.desc, b->nr_cells, b->o.reps,
		runs * b->o.runtime + runs / 2);
}

/* Everything between making the device and removing it. */
static int bench_io_run(struct io_bench *b)
{
	bool fill = b->o.prefill < 0 ? b->t.scratch : b->o.prefill;
	int err;

	err = target_probe(b);
	if (err)
		return err;
	err = alloc_buffers(b);
	if (err)
		return err;
	make_cells(b);
	announce(b);
	if (fill && !bench_stop) {
		err = prefill(b);
		if (err) {
			fprintf(stderr, "uflush-bench io: prefill failed: %s\n",
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

static int exit_code(const struct io_bench *b, int err)
{
	unsigned int i, ran = 0;

	if (bench_stop) {
		fprintf(stderr, "uflush-bench io: interrupted\n");
		return 130;
	}
	if (err)
		return 1;
	for (i = 0; i < b->nr_cells; i++)
		ran += b->cells[i].nu > 0;
	if (!ran) {
		fprintf(stderr, "uflush-bench io: no engine could run\n");
		return 1;
	}
	return 0;
}

int bench_io_main(int argc, char **argv)
{
	static struct io_bench bench;
	struct io_bench *b = &bench;
	int err;

	err = parse_opts(&b->o, argc, argv);
	if (err)
		return err > 0 ? 0 : 2;
	err = bench_install_signals();
	if (err) {
		fprintf(stderr, "uflush-bench io: signals: %s\n",
			strerror(-err));
		return 1;
	}
	bench_kernel_version(b->kernel, sizeof(b->kernel));
	find_fio(b);
	err = b->o.dev ? target_dev(b) : target_scratch(b);
	if (err)
		return 1;
	if (!bench_stop)
		err = bench_io_run(b);
	if (b->t.scratch)
		uf_testdev_destroy(&b->t.td);
	free(b->buf);
	return exit_code(b, err);
}
