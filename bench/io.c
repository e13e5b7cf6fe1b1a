// SPDX-License-Identifier: MIT
/*
 * bench/io.c - `uflush-bench io`: raw write throughput of uflush's I/O
 * engines beside fio on the same device, in the same run.
 *
 * For each pattern (seq: 1 MiB writes at QD 32; rand: aligned 4 KiB random
 * writes at QD 64) and engine (io_uring, libaio, psync), the benchmark runs
 * a closed loop through uf_bdev_submit() for --secs seconds, then fio
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
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"

#define IO_DEFAULT_SIZE		(2ull << 30)
#define IO_WAIT_SLICE_NS	100000000ull	/* poll bench_stop this often */
#define IO_DRAIN_TIMEOUT_NS	30000000000ull

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

#define NR_CELLS	(NR_PATTERNS * NR_ENGINES)

struct io_opts {
	unsigned int runtime;
	unsigned int reps;
	unsigned int batch;		/* 0 = QD/8 */
	uint64_t size;
	bool size_set;
	const char *dev;
	bool force;
	bool prefill, no_prefill;	/* neither: only on a scratch device */
	bool no_fio;
	bool fio_batch;			/* fio batches like our loop */
	const char *json;
	bool pattern[NR_PATTERNS];
	bool engine[NR_ENGINES];
};

/* A pattern's samples of one side, uflush or fio, one per rep. */
struct io_side {
	struct bench_samples mbs, iops, cpu;
};

/* One row: a pattern on an engine, ours and fio's numbers per rep. */
struct io_cell {
	const struct io_pattern *pat;
	const char *engine;
	struct bench_case *bc;		/* skipped, why, runs */
	bool fio_failed;
	char fio_why[256];
	char fio_cmd[1024];
	unsigned int batch;
	struct io_side u, f;
	struct bench_samples u_batch, u_csw;
	int engine_threads;		/* threads the engine started */
	struct bench_samples paired;	/* uflush/fio of back-to-back runs */
};

struct io_bench {
	struct io_opts o;
	struct bench_env env;
	struct bench_target t;		/* its range: bytes used */
	struct bench_reopen ro;
	unsigned int settles;		/* flushes before runs */
	uint64_t settle_ns;
	int settle_err;
	void *buf;			/* write buffers, one per slot */
	size_t buf_len;
	unsigned int nr_cells;
	struct io_cell cells[NR_CELLS];
	struct bench_case cases[NR_CELLS];
};

/* The benchmark, with the defaults of its options. */
static struct io_bench io_bench = {
	.o = {
		.runtime = 3, .reps = 3, .size = IO_DEFAULT_SIZE,
		.pattern = { true, true }, .engine = { true, true, true },
	},
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

static void load_prep(struct io_load *ld, struct uf_io_req *req)
{
	uint64_t blk;

	if (ld->rand) {
		blk = bench_xorshift64(&ld->rng) % ld->nr_blocks;
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
	bench_process_cpu(&c0, &csw0);
	t0 = uf_now_ns();
	err = load_submit(ld, n);
	if (!err)
		err = load_loop(ld, t0 + ns);
	derr = load_drain(ld);
	t1 = uf_now_ns();
	bench_process_cpu(&c1, &csw1);
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

struct bdev_open_args {
	const char *path;
	struct uf_bdev_config cfg;
	struct uf_bdev **bdev;
};

static int bdev_open_once(void *arg)
{
	struct bdev_open_args *a = arg;

	return uf_bdev_open(a->path, &a->cfg, a->bdev);
}

/* Open the device with one engine; -EBUSY from our last handle waits. */
static int open_dev(struct io_bench *b, const char *engine,
		    unsigned int qd, unsigned int flags, struct uf_bdev **bdev)
{
	struct bdev_open_args a = { .path = b->t.path, .bdev = bdev };

	uf_bdev_config_init(&a.cfg);
	a.cfg.engine = engine;
	a.cfg.queue_depth = qd;
	a.cfg.flags = flags | (b->o.force ? UF_BDEV_FORCE : 0);
	return bench_open_retry(&b->ro, bdev_open_once, &a);
}

/* Count a thread unless it is one of io_uring's kernel workers (iou-*). */
static int count_thread(void *priv, int tid, const char *comm)
{
	(void)tid;
	*(int *)priv += !!strncmp(comm, "iou-", 4);
	return 0;
}

/*
 * Threads of this process, to see how many an engine starts; -1 if
 * unknown.  io_uring's own workers come and go with the kernel's
 * asynchronous work, so they are not counted.
 */
static int count_threads(void)
{
	int n = 0;

	return bench_for_each_thread(count_thread, &n) ? -1 : n;
}

/*
 * A failure to open on the first rep means the engine cannot be set up
 * here: the row is skipped (BENCH_SKIP).  Later it is an error.
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
		snprintf(c->bc->why, sizeof(c->bc->why),
			 "cannot set up %s on %s: %s", c->engine, b->t.path,
			 strerror(-err));
		return c->bc->runs ? err : BENCH_SKIP;
	}
	err = load_once(b, bdev, c->pat, c->batch,
			(uint64_t)b->o.runtime * 1000000000ull, 0, run);
	if (err && err != -ETIMEDOUT)
		snprintf(c->bc->why, sizeof(c->bc->why), "%s %s: I/O failed: %s",
			 c->pat->name, c->engine, strerror(-err));
	else if (err)
		snprintf(c->bc->why, sizeof(c->bc->why),
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
		bench_err("io", "warning: cannot flush %s: %s", b->t.path,
			  strerror(-err));
	}
	return bench_stop ? -EINTR : 0;
}

static void record_fio(struct io_cell *c, const struct io_run *u,
		       const struct io_run *f)
{
	bench_samples_add(&c->f.mbs, f->mbs);
	bench_samples_add(&c->f.iops, f->iops);
	bench_samples_add(&c->f.cpu, f->cpu);
	if (f->mbs > 0)
		bench_samples_add(&c->paired, u->mbs / f->mbs);
}

/*
 * Ours then fio's, for one cell in one rep (a bench_sched run callback).
 * Error = stop everything.
 */
static int run_pair(void *priv, unsigned int i, unsigned int rep)
{
	struct io_bench *b = priv;
	struct io_cell *c = &b->cells[i];
	struct io_run u, f;
	bool have_f = false;
	int err;

	settle(b);
	err = run_ours(b, c, &u);
	if (bench_stop)
		return 0;
	if (err == BENCH_SKIP)
		fprintf(stderr, "  %s %s: skipped: %s\n", c->pat->name,
			c->engine, c->bc->why);
	else if (err)
		bench_err("io", "%s", c->bc->why);
	if (err)
		return err;
	bench_samples_add(&c->u.mbs, u.mbs);
	bench_samples_add(&c->u.iops, u.iops);
	bench_samples_add(&c->u.cpu, u.cpu);
	bench_samples_add(&c->u_batch, u.avg_batch);
	bench_samples_add(&c->u_csw, u.csw_per_io);
	if (b->env.have_fio && !c->fio_failed && !settle(b) &&
	    !run_fio(b, c, &f)) {
		record_fio(c, &u, &f);
		have_f = true;
	}
	if (bench_stop)
		return 0;
	report_rep(c, rep, b->o.reps, &u, &f, have_f);
	if (c->fio_failed && !c->f.mbs.n)
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
			c->bc = &b->cases[b->nr_cells];
			b->nr_cells++;
		}
	}
}

/* Reps outermost, so that slow drifts of the machine hit every row. */
static int run_all(struct io_bench *b)
{
	struct bench_sched s = {
		.nr_cases = b->nr_cells, .cases = b->cases, .reps = b->o.reps,
		.run = run_pair, .priv = b,
	};

	return bench_sched_run(&s);
}

/* ------------------------------------------------------------------ */
/* The device                                                          */

/* Size and block size, and whether we may open it at all. */
static int target_probe(struct io_bench *b)
{
	struct bench_target *t = &b->t;
	struct uf_bdev *bdev;
	uint64_t size;
	int err;

	err = open_dev(b, NULL, 1, 0, &bdev);
	if (err == -EBUSY) {
		bench_err("io", "%s is mounted or in use; --force uses it anyway (and overwrites it)",
			  t->path);
		return err;
	}
	if (err) {
		bench_err("io", "cannot open %s: %s", t->path, strerror(-err));
		return err;
	}
	uf_bdev_size(bdev, &size);
	uf_bdev_block_size(bdev, &b->t.lbs);
	uf_bdev_close(bdev);
	b->t.range = size;
	if (b->o.size_set && b->o.size < size)
		b->t.range = b->o.size;
	b->t.range &= ~((uint64_t)(1u << 20) - 1);
	if (b->t.range < (64u << 20) || b->t.lbs > 4096) {
		bench_err("io", "%s: need >= 64 MiB and <= 4096-byte blocks (have %" PRIu64 " bytes, %u-byte blocks)",
			  t->path, size, b->t.lbs);
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
	size_t len = 0;
	unsigned int p;

	for (p = 0; p < NR_PATTERNS; p++)
		if ((size_t)io_patterns[p].bs * io_patterns[p].qd > len)
			len = (size_t)io_patterns[p].bs * io_patterns[p].qd;
	b->buf = bench_random_buffer(len);
	if (!b->buf)
		return -ENOMEM;
	b->buf_len = len;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

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
			 const struct io_cell *c)
{
	struct bench_stats fm;

	bench_samples_stats(&c->f.mbs, &fm);
	bench_table_stats(t, row, COL_F_MBS, &fm);
	bench_table_ratio(t, row, COL_RATIO, bench_ratio(&c->u.mbs, &c->f.mbs));
	bench_table_set(t, row, COL_PAIRED, "%.2f",
			bench_samples_median(&c->paired));
	bench_table_set(t, row, COL_F_IOPS, "%.0f",
			bench_samples_median(&c->f.iops));
	bench_table_set(t, row, COL_F_CPU, "%.0f",
			bench_samples_median(&c->f.cpu));
}

static void cell_row(struct bench_table *t, const void *priv, unsigned int i)
{
	const struct io_cell *c = &((const struct io_bench *)priv)->cells[i];
	struct bench_stats um;
	int row = bench_table_row(t);

	if (row < 0)
		return;
	bench_table_set(t, row, COL_PATTERN, "%s", c->pat->name);
	bench_table_set(t, row, COL_ENGINE, "%s", c->engine);
	if (c->bc->skipped || !c->u.mbs.n) {
		bench_table_set(t, row, COL_U_MBS, "%s",
				c->bc->skipped ? "skipped" : "no run");
		return;
	}
	bench_samples_stats(&c->u.mbs, &um);
	bench_table_stats(t, row, COL_U_MBS, &um);
	bench_table_set(t, row, COL_U_IOPS, "%.0f",
			bench_samples_median(&c->u.iops));
	bench_table_set(t, row, COL_U_CPU, "%.0f",
			bench_samples_median(&c->u.cpu));
	if (c->f.mbs.n) {
		cell_row_fio(t, row, c);
	} else {
		bench_table_set(t, row, COL_F_MBS, "-");
		bench_table_set(t, row, COL_RATIO, "-");
	}
}

static void print_header(const void *priv)
{
	const struct io_bench *b = priv;
	char extra[96];

	snprintf(extra, sizeof(extra), ", %.2f GiB used, %u-byte blocks",
		 b->t.range / (double)(1u << 30), b->t.lbs);
	printf("\nuflush-bench io: raw write throughput, uflush's I/O engines vs fio, same device\n");
	bench_target_print(&b->t, extra);
	bench_env_print(&b->env, NULL, true);
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
		if (b->cells[i].u.mbs.n && !strcmp(b->cells[i].engine, engine) &&
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
		if (!c->u.mbs.n || strcmp(c->engine, "psync") ||
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
		if (c->bc->skipped)
			printf("%s/%s skipped: %s\n", c->pat->name, c->engine,
			       c->bc->why);
		else if (c->fio_failed && !c->f.mbs.n)
			printf("%s/%s: fio failed: %s\n", c->pat->name,
			       c->engine, c->fio_why);
	}
	if (b->settles)
		printf("Each run started after a device flush (fdatasync, untimed; %u flushes, %.1f s in all).\n",
		       b->settles, b->settle_ns / 1e9);
	bench_reopen_print(&b->ro);
}

static void print_notes(const void *priv)
{
	const struct io_bench *b = priv;
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

static void json_side(struct bench_json *j, const char *key,
		      const struct io_side *s)
{
	bench_json_obj(j, key);
	bench_json_samples(j, "mbps", &s->mbs);
	bench_json_samples(j, "iops", &s->iops);
	bench_json_samples(j, "cpu_pct", &s->cpu);
}

static void json_cell(struct bench_json *j, const void *priv,
		      unsigned int i)
{
	const struct io_cell *c = &((const struct io_bench *)priv)->cells[i];

	bench_json_obj(j, NULL);
	bench_json_str(j, "pattern", c->pat->name);
	bench_json_str(j, "engine", c->engine);
	bench_json_u64(j, "bs", c->pat->bs);
	bench_json_u64(j, "qd", c->pat->qd);
	bench_json_u64(j, "refill_batch", c->batch);
	bench_json_str(j, "status", c->bc->skipped ? "skipped" : "ok");
	bench_json_str(j, "reason", c->bc->skipped ? c->bc->why : "");
	json_side(j, "uflush", &c->u);
	bench_json_nums(j, "avg_refill", c->u_batch.v, c->u_batch.n);
	bench_json_nums(j, "ctxsw_per_io", c->u_csw.v, c->u_csw.n);
	bench_json_int(j, "engine_threads", c->engine_threads);
	bench_json_end(j);
	json_side(j, "fio", &c->f);
	bench_json_str(j, "error", c->fio_failed ? c->fio_why : "");
	bench_json_str(j, "cmd", c->fio_cmd);
	bench_json_end(j);
	bench_json_nums(j, "paired_ratios", c->paired.v, c->paired.n);
	bench_json_num(j, "ratio", bench_ratio(&c->u.mbs, &c->f.mbs));
	bench_json_end(j);
}

static void json_config(struct bench_json *j, const void *priv)
{
	const struct io_bench *b = priv;

	bench_json_u64(j, "runtime_s", b->o.runtime);
	bench_json_u64(j, "reps", b->o.reps);
	bench_fio_json(j, &b->env);
	bench_json_bool(j, "batched", b->o.fio_batch);
	bench_json_end(j);
}

static const struct bench_report io_report = {
	io_cols, sizeof(io_cols) / sizeof(io_cols[0]),
	print_header, cell_row, print_notes, json_config, json_cell,
};

/* ------------------------------------------------------------------ */
/* Options                                                             */

static const struct bench_opt io_opts[] = {
	BENCH_UINT("secs", "SEC", &io_bench.o.runtime, 1, 3600,
		   "1..3600 seconds", "seconds per run (default 3)"),
	BENCH_OLD_NAME("runtime", "secs"),
	BENCH_OPT_REPS(&io_bench.o.reps,
		       "repetitions of each uflush/fio pair (default 3)"),
	BENCH_OLD_NAME("size", "dev-size"),
	{ .name = "dev-size", .arg = "SIZE", .type = BENCH_OPT_SIZE,
	  .dest = &io_bench.o.size, .min = 64u << 20, .max = UINT64_MAX,
	  .given = &io_bench.o.size_set,
	  .help = "scratch device size, or the range used on --dev\n"
		  "(default 2G; whole device with --dev)" },
	BENCH_LIST("patterns", io_bench.o.pattern, pattern_names, "seq, rand",
		   "seq,rand (default both)"),
	BENCH_LIST("engines", io_bench.o.engine, engine_names,
		   "io_uring, libaio, psync",
		   "io_uring,libaio,psync (default all)"),
	BENCH_OPT_DEV(&io_bench.o.dev),
	BENCH_OPT_FORCE(&io_bench.o.force),
	BENCH_UINT("batch", "N", &io_bench.o.batch, 1, 4096, "1..QD",
		   "resubmit completed requests in batches of N\n"
		   "(default QD/8)"),
	BENCH_FLAG("prefill", &io_bench.o.prefill,
		   "write the range once before measuring (default:\n"
		   "only on the scratch device)"),
	BENCH_FLAG("no-prefill", &io_bench.o.no_prefill,
		   "do not write it first (--prefill wins over it)"),
	BENCH_FLAG("no-fio", &io_bench.o.no_fio, "skip the fio baseline"),
	BENCH_FLAG("fio-batch", &io_bench.o.fio_batch,
		   "let fio submit in batches of the refill batch and\n"
		   "reap up to QD at once, as uflush's loop does\n"
		   "(io_uring, libaio; fio's default is one at a time)"),
	BENCH_OPT_JSON(&io_bench.o.json),
	BENCH_OPT_END,
};

BENCH_CMDLINE(io, io_opts,
	"Raw write throughput of uflush's I/O engines (uf_bdev_submit in a closed\n"
	"loop) beside fio with the same pattern, engine, depth and byte range on\n"
	"the same device; runs interleaved, medians and min-max spreads printed.\n"
	BENCH_SCRATCH_ABOUT,
	BENCH_ENV_FIO);

/* ------------------------------------------------------------------ */
/* Main                                                                */

static void announce(const struct io_bench *b)
{
	unsigned int runs = b->nr_cells * b->o.reps * (b->env.have_fio ? 2 : 1);

	fprintf(stderr,
		"uflush-bench io: %s (%s), %u rows x %u reps, about %u s\n",
		b->t.path, b->t.desc, b->nr_cells, b->o.reps,
		runs * b->o.runtime + runs / 2);
}

/* Everything between making the device and removing it. */
static int bench_io_run(struct io_bench *b)
{
	bool fill = b->o.prefill ? true : b->o.no_prefill ? false :
		    b->t.scratch;
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
			bench_err("io", "prefill failed: %s", strerror(-err));
			return err;
		}
	}
	err = run_all(b);
	if (err)
		return err;
	return bench_report(&io_report, &b->env, &b->t, b->o.json, b,
			    b->nr_cells);
}

static int exit_code(const struct io_bench *b, int err)
{
	unsigned int i, ran = 0;

	if (bench_stop || err)
		return bench_exit_code("io", err);
	for (i = 0; i < b->nr_cells; i++)
		ran += b->cells[i].u.mbs.n > 0;
	if (!ran) {
		bench_err("io", "no engine could run");
		return 1;
	}
	return 0;
}

int bench_io_main(int argc, char **argv)
{
	struct io_bench *b = &io_bench;
	int err;

	err = bench_opts_main(&bench_io_cmdline, argc, argv);
	if (err >= 0)
		return err;
	if (bench_env_init(&b->env, "io", !b->o.no_fio))
		return 1;
	if (bench_target_open(&b->t, "io", b->o.dev,
			      b->o.dev ? 0 : b->o.size, b->o.force))
		return 1;
	if (!bench_stop)
		err = bench_io_run(b);
	bench_target_close(&b->t);
	free(b->buf);
	return exit_code(b, err);
}
