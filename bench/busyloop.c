// SPDX-License-Identifier: MIT
/*
 * bench/busyloop.c - `uflush-bench busyloop`: what seed 000's no-progress
 * variants ("writeback: Improve busyloop prevention", spec §2.4, §3 B1/B4,
 * §6 I5/I7/I21) cost on a real device.
 *
 * One inode ("stuck", ino 1) has only its metadata dirty (I_DIRTY_SYNC) and
 * a write_inode that returns -EAGAIN ("a lock is held", as XFS did) until
 * --secs seconds have passed, then 0.  Meanwhile a writer thread writes
 * --bs bytes to each of --files other files every --interval ms, so that
 * kupdate and background writeback both run.  Under requeue=p2-v4 an inode
 * whose write_inode failed goes to b_more_io: a pass that writes nothing
 * then finds b_more_io non-empty and the policy's no-progress handling
 * (the nowait knob) decides what the flusher does.  Each variant runs in a
 * fresh cache on the same scratch device; for each we report, over the
 * stuck window [0, --secs):
 *
 *   passes   wb_writeback iterations (writeback_start tracepoints)
 *   waits    no-progress waits (writeback_wait tracepoints)
 *   tries    calls of the stuck inode's write_inode
 *   cpu      the flusher thread's CPU time (utime+stime of the thread
 *            named flush-MAJ:MIN in /proc/self/task/TID/stat)
 *   page waits  for every write of the other files: from the return of
 *            its uf_pwrite to the first writeback_single_inode of that file
 *            with wrote>0 (its pages went to the device)
 *   unlock→written  how long after the lock cleared the flusher wrote the
 *            stuck inode's metadata, and whether that was within the bound
 *            (max_pause + dirty_writeback_interval, spec B10)
 *
 * The tracepoints go to a FIFO read by a thread of ours, which counts and
 * keeps only what it needs: a busy-looping flusher prints millions of lines,
 * and no trace file is ever written.  The run of a variant ends once the
 * stuck inode is written, or at the bound.  The device is a scratch loop
 * device (direct I/O, verified in sysfs) removed at exit, also on SIGINT,
 * or --dev PATH (overwritten).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"
#include "policies/policy.h"

#define BL_MAX_VARIANTS		32
#define BL_MAX_FILES		16
#define BL_STUCK_INO		1
/* The other files start here; the stuck inode is [0, 4096). */
#define BL_DATA_OFFSET		(1ull << 20)
#define BL_RBUF			(256u << 10)
#define BL_END_MARGIN_NS	20000000ull	/* t_end is set this early */
#define BL_POLL_NS		10000000ull
#define NSEC			1000000000ull

#define BL_DEFAULT_VARIANTS \
	"b0,v3a,v3b,v4,v4.1,v4.2,nowait=mainline," \
	"linux-3.1,linux-3.2,kara-v4.2,wu-riw,mainline"

struct bl_opts {
	unsigned int stuck_s;
	unsigned int interval_ms;
	unsigned int files;
	uint64_t file_size;
	uint64_t bs;
	unsigned int pages;
	unsigned int expire_cs;		/* UINT_MAX until set */
	unsigned int writeback_cs;
	unsigned int bound_s;		/* 0 = computed */
	const char *base;
	const char *variants;
	const char *dev;
	bool force;
	const char *json;
	const char *trace;		/* copy of the tracepoints, or NULL */
	bool no_trace;			/* no tracepoints at all */
};

/* What one variant's run measured.  [0] = stuck window, [1] = after. */
struct bl_result {
	bool traced;			/* passes, waits, page waits */
	unsigned long passes[2], passes_kupdate[2], passes_background[2];
	unsigned long waits[2], waits_kupdate[2], waits_background[2];
	unsigned long tries;
	double cpu_ms[2];		/* utime+stime, in clock ticks */
	double run_ms[2];		/* schedstat run time; < 0 if none */
	double written_after_s;		/* < 0: not written by the end */
	int written_sync;		/* write_inode's sync argument */
	bool within;
	double secs_after;		/* unlock to end of run */
	/* the other files' writes dirtied in the stuck window */
	unsigned int chunks;
	unsigned int unwritten;		/* no writeback by the end */
	double wait_median_ms, wait_p90_ms, wait_max_ms;
	bool max_censored;		/* the max is an unwritten chunk */
	double stall_max_ms;		/* longest uf_pwrite */
	unsigned long writes_done, writes_planned;
	/* totals */
	unsigned long trace_lines;
	uint64_t trace_bytes;
	unsigned long works_done;
	unsigned long pages_written;
	unsigned long dirty_thresh, background_thresh;
	/* per second of the run, from t=0 */
	unsigned int nr_secs;
	unsigned long *waits_per_s, *passes_per_s, *tries_per_s;
};

struct bl_variant {
	char label[BENCH_CELL_LEN];
	char spec[WB_POLICY_SPEC_LEN];		/* cfg.policy */
	char resolved[WB_POLICY_SPEC_LEN];	/* uf_cache_policy() */
	bool ran;
	char why[256];
	struct bl_result res;
};

struct bl_bench {
	struct bl_opts o;
	struct bench_env env;
	struct bench_target t;		/* its range: bytes of it used */
	char flusher[32];		/* expected comm, "" if unknown */
	char tmpdir[PATH_MAX - 64];
	char fifo[PATH_MAX];
	unsigned int bound_s;
	unsigned int nr_variants;
	struct bl_variant v[BL_MAX_VARIANTS];
	struct bench_case cases[BL_MAX_VARIANTS];
	void *buf;
	struct bench_reopen ro;
	int first_err;
};

/* The benchmark, with the defaults of its options. */
static struct bl_bench bl_bench = {
	.o = {
		.stuck_s = 30, .interval_ms = 200, .files = 4,
		.file_size = 8u << 20, .bs = 64u << 10, .pages = 16384,
		.expire_cs = UINT_MAX, .writeback_cs = UINT_MAX,
		.base = "linux-3.2", .variants = BL_DEFAULT_VARIANTS,
	},
};

/* One written chunk of another file. */
struct bl_chunk {
	unsigned int file;
	uint64_t t_ns;			/* uf_pwrite returned */
};

/* A writeback_single_inode with wrote > 0 of another file. */
struct bl_event {
	unsigned long ino;
	uint64_t t_ns;
};

/* The state of one variant's run, shared by its threads. */
struct bl_run {
	struct bl_bench *b;
	struct bl_variant *v;
	uint64_t t_start, t_unlock;	/* atomic; UINT64_MAX until set */
	uint64_t t_end;			/* atomic; UINT64_MAX: not yet */
	uint64_t written_ns;		/* atomic; 0 until written */
	int written_sync;
	unsigned long tries;		/* atomic */
	unsigned int nr_secs;
	unsigned long *b_passes, *b_waits, *b_tries;
	/* trace reader */
	pthread_t reader;
	bool reader_started;
	int reader_err;
	char *rbuf;
	FILE *copy;			/* --trace */
	unsigned long lines;
	uint64_t bytes;
	unsigned long passes[2], pk[2], pb[2], waits[2], wk[2], wbg[2];
	struct bl_event *ev;
	size_t nr_ev, cap_ev;
	bool ev_oom;
	/* writer */
	pthread_t writer;
	bool writer_started;
	int stop_writer;		/* atomic */
	int writer_err;
	struct uf_file *files[BL_MAX_FILES];
	struct bl_chunk *chunks;
	size_t nr_chunks, cap_chunks;
	bool chunk_oom;
	double stall_max_ms;
	unsigned long writes_done, writes_planned;
};

/* ------------------------------------------------------------------ */
/* The flusher thread's CPU time                                       */

struct flusher_search {
	const char *want;
	pid_t found;
	unsigned int nr;
};

static int flusher_match(void *priv, int tid, const char *comm)
{
	struct flusher_search *fs = priv;

	if (strncmp(comm, "flush-", 6))
		return 0;
	if (fs->want[0] && !strcmp(comm, fs->want)) {
		fs->found = tid;
		fs->nr = 1;
		return 1;
	}
	if (!fs->found)
		fs->found = tid;
	fs->nr++;
	return 0;
}

/* Find the flusher's tid by its comm (or the only flush-*); 0 if none. */
static pid_t find_flusher(const char *want)
{
	struct flusher_search fs = { want, 0, 0 };

	bench_for_each_thread(flusher_match, &fs);
	return fs.nr == 1 ? fs.found : 0;
}

/* utime+stime of a thread in ms (field 14, 15 of its stat); < 0 on error. */
static double thread_cpu_ms(pid_t tid)
{
	unsigned long long ut, st;
	char path[64], line[1024], *p;
	long tck = sysconf(_SC_CLK_TCK);
	FILE *f;
	int n;

	if (tid <= 0 || tck <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p)
		return -1;
	p = strrchr(line, ')');
	if (!p)
		return -1;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime */
	n = sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &ut, &st);
	if (n != 2)
		return -1;
	return (double)(ut + st) * 1000.0 / (double)tck;
}

/* The scheduler's run time of a thread in ms (schedstat); < 0 if none. */
static double thread_run_ms(pid_t tid)
{
	unsigned long long ns;
	char path[64];
	FILE *f;
	int n;

	if (tid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%llu", &ns);
	fclose(f);
	return n == 1 ? ns / 1e6 : -1;
}

/* ------------------------------------------------------------------ */
/* The trace reader                                                    */

static uint64_t load_u64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_u64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* The second of the run that ts falls in (clamped to the buckets). */
static unsigned int sec_index(const struct bl_run *r, uint64_t ts)
{
	uint64_t t0 = load_u64(&r->t_start), s;

	if (ts < t0)
		return 0;
	s = (ts - t0) / NSEC;
	return s < r->nr_secs ? (unsigned int)s : r->nr_secs - 1;
}

static unsigned long field_ul(const char *fields, const char *name,
			      bool *ok)
{
	const char *p = strstr(fields, name);
	char *end;
	unsigned long v;

	*ok = false;
	if (!p)
		return 0;
	p += strlen(name);
	v = strtoul(p, &end, 10);
	*ok = end != p;
	return v;
}

static void add_event(struct bl_run *r, unsigned long ino, uint64_t ts)
{
	if (bench_grow(&r->ev, &r->cap_ev, r->nr_ev, sizeof(*r->ev), 4096)) {
		r->ev_oom = true;
		return;
	}
	r->ev[r->nr_ev].ino = ino;
	r->ev[r->nr_ev].t_ns = ts;
	r->nr_ev++;
}

/* A pass or a wait in window w: in all, and by the kind of work. */
static void count_work(const char *fields, unsigned int w,
		       unsigned long *all, unsigned long *kupdate,
		       unsigned long *background)
{
	all[w]++;
	if (strstr(fields, " kupdate=1"))
		kupdate[w]++;
	else if (strstr(fields, " background=1"))
		background[w]++;
}

#define EVENT_IS(ev, len, name) \
	((len) == sizeof(name) - 1 && !memcmp(ev, name, sizeof(name) - 1))

/*
 * "  flush-7:0-1234  [001]   211.068428: writeback_start: bdi 7:0: ..."
 * Lines before t_start or after t_end are not counted.
 */
static void parse_line(struct bl_run *r, char *s, size_t len)
{
	char *p = memchr(s, ']', len), *end, *ev, *fields;
	unsigned long long sec, usec;
	unsigned long ino, wrote;
	size_t evlen;
	uint64_t ts;
	unsigned int w;
	bool ok1, ok2;

	r->lines++;
	if (!p)
		return;
	sec = strtoull(p + 1, &end, 10);
	if (*end != '.')
		return;
	usec = strtoull(end + 1, &end, 10);
	if (end[0] != ':' || end[1] != ' ')
		return;
	ts = sec * NSEC + usec * 1000;
	if (ts < load_u64(&r->t_start) || ts > load_u64(&r->t_end))
		return;
	ev = end + 2;
	fields = strchr(ev, ':');
	if (!fields)
		return;
	evlen = (size_t)(fields - ev);
	w = ts >= load_u64(&r->t_unlock);
	if (EVENT_IS(ev, evlen, "writeback_start")) {
		count_work(fields, w, r->passes, r->pk, r->pb);
		r->b_passes[sec_index(r, ts)]++;
	} else if (EVENT_IS(ev, evlen, "writeback_wait")) {
		count_work(fields, w, r->waits, r->wk, r->wbg);
		r->b_waits[sec_index(r, ts)]++;
	} else if (EVENT_IS(ev, evlen, "writeback_single_inode")) {
		ino = field_ul(fields, " ino=", &ok1);
		wrote = field_ul(fields, " wrote=", &ok2);
		if (ok1 && ok2 && wrote && ino != BL_STUCK_INO)
			add_event(r, ino, ts);
	}
}

static void *trace_reader(void *arg)
{
	struct bl_run *r = arg;
	char *buf = r->rbuf, *start, *nl;
	size_t have = 0;
	ssize_t n;
	int fd;

	/* blocks until uf_cache_open() opens the other end */
	do {
		fd = open(r->b->fifo, O_RDONLY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		r->reader_err = -errno;
		return NULL;
	}
	/* fewer stalls of a busy-looping flusher on a full pipe */
	fcntl(fd, F_SETPIPE_SZ, 1 << 20);
	for (;;) {
		n = read(fd, buf + have, BL_RBUF - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r->reader_err = -errno;
			break;
		}
		if (!n)
			break;		/* the cache closed the trace */
		r->bytes += (uint64_t)n;
		if (r->copy)
			fwrite(buf + have, 1, (size_t)n, r->copy);
		have += (size_t)n;
		buf[have] = '\0';
		start = buf;
		while ((nl = memchr(start, '\n',
				    (size_t)(buf + have - start))) != NULL) {
			*nl = '\0';
			parse_line(r, start, (size_t)(nl - start));
			start = nl + 1;
		}
		have = (size_t)(buf + have - start);
		memmove(buf, start, have);
		if (have == BL_RBUF - 1)
			have = 0;	/* no line is this long: drop it */
	}
	close(fd);
	return NULL;
}

/* Let a reader blocked in open() go when the cache never opened the FIFO. */
static void unblock_reader(struct bl_run *r)
{
	int fd = open(r->b->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
}

/* ------------------------------------------------------------------ */
/* The stuck inode and the writer                                      */

/* -EAGAIN ("a lock is held") until t_unlock, then 0. */
static int stuck_write_inode(struct uf_file *file, void *priv, int sync)
{
	struct bl_run *r = priv;
	uint64_t now = uf_now_ns();

	(void)file;
	if (now < load_u64(&r->t_unlock) && !bench_stop) {
		__atomic_add_fetch(&r->tries, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&r->b_tries[sec_index(r, now)], 1,
				   __ATOMIC_RELAXED);
		return -EAGAIN;
	}
	if (now <= load_u64(&r->t_end) && !load_u64(&r->written_ns)) {
		r->written_sync = sync;
		store_u64(&r->written_ns, now);
	}
	return 0;
}

static void add_chunk(struct bl_run *r, unsigned int file, uint64_t t)
{
	if (bench_grow(&r->chunks, &r->cap_chunks, r->nr_chunks,
		       sizeof(*r->chunks), 1024)) {
		r->chunk_oom = true;
		return;
	}
	r->chunks[r->nr_chunks].file = file;
	r->chunks[r->nr_chunks].t_ns = t;
	r->nr_chunks++;
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t_ns / NSEC),
		.tv_nsec = (long)(t_ns % NSEC),
	};

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* --bs bytes to each file every --interval ms, sequentially, wrapping. */
static void *writer(void *arg)
{
	struct bl_run *r = arg;
	const struct bl_opts *o = &r->b->o;
	uint64_t off[BL_MAX_FILES] = { 0 };
	uint64_t interval = (uint64_t)o->interval_ms * 1000000ull;
	uint64_t next = r->t_start, t0, t1;
	unsigned int i;
	ssize_t n;

	while (!__atomic_load_n(&r->stop_writer, __ATOMIC_ACQUIRE) &&
	       !bench_stop) {
		for (i = 0; i < o->files; i++) {
			t0 = uf_now_ns();
			n = uf_pwrite(r->files[i], r->b->buf, o->bs, off[i]);
			t1 = uf_now_ns();
			if (n != (ssize_t)o->bs) {
				r->writer_err = n < 0 ? (int)n : -EIO;
				return NULL;
			}
			off[i] = (off[i] + o->bs) % o->file_size;
			if (t0 >= r->t_unlock)
				continue;
			add_chunk(r, i, t1);
			r->writes_done++;
			if ((t1 - t0) / 1e6 > r->stall_max_ms)
				r->stall_max_ms = (t1 - t0) / 1e6;
		}
		next += interval;
		t1 = uf_now_ns();
		if (next < t1)
			next = t1;	/* throttled past the tick: slip */
		while (!bench_stop && uf_now_ns() < next &&
		       !__atomic_load_n(&r->stop_writer, __ATOMIC_ACQUIRE))
			sleep_until(next < uf_now_ns() + 100000000ull ?
				    next : uf_now_ns() + 100000000ull);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* One variant                                                         */

static int open_files(struct bl_bench *b, struct bl_run *r, struct uf_dev *dev,
		      struct uf_file **stuck)
{
	static const struct uf_file_ops stuck_ops = {
		.write_inode = stuck_write_inode,
	};
	unsigned int i;
	int err;

	err = uf_file_open(dev, BL_STUCK_INO, 0, 4096, &stuck_ops, r, stuck);
	for (i = 0; !err && i < b->o.files; i++)
		err = uf_file_open(dev, BL_STUCK_INO + 1 + i,
				   BL_DATA_OFFSET + i * b->o.file_size,
				   b->o.file_size, NULL, NULL, &r->files[i]);
	return err;
}

static int alloc_run(struct bl_run *r, struct bl_bench *b,
		     struct bl_variant *v)
{
	memset(r, 0, sizeof(*r));
	r->b = b;
	r->v = v;
	r->t_start = r->t_unlock = r->t_end = UINT64_MAX;
	r->nr_secs = b->o.stuck_s + b->bound_s + 2;
	r->b_passes = calloc(r->nr_secs, sizeof(unsigned long));
	r->b_waits = calloc(r->nr_secs, sizeof(unsigned long));
	r->b_tries = calloc(r->nr_secs, sizeof(unsigned long));
	r->rbuf = malloc(BL_RBUF);
	if (!r->b_passes || !r->b_waits || !r->b_tries || !r->rbuf)
		return -ENOMEM;
	return 0;
}

static void free_run(struct bl_run *r)
{
	void *bufs[] = { r->b_passes, r->b_waits, r->b_tries, r->rbuf, r->ev,
			 r->chunks };
	unsigned int i;

	for (i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		free(bufs[i]);
	if (r->copy)
		fclose(r->copy);
}

static int cmp_event(const void *a, const void *b)
{
	const struct bl_event *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
}

/* The first event of ino at or after t, or NULL. */
static const struct bl_event *first_event(const struct bl_run *r,
					  unsigned long ino, uint64_t t)
{
	size_t lo = 0, hi = r->nr_ev, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->ev[mid].ino < ino ||
		    (r->ev[mid].ino == ino && r->ev[mid].t_ns < t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->nr_ev && r->ev[lo].ino == ino)
		return &r->ev[lo];
	return NULL;
}

/* Page waits of the chunks dirtied in the stuck window. */
static void page_waits(struct bl_run *r, struct bl_result *res)
{
	const struct bl_event *e;
	struct bench_stats st;
	double *w, m;
	uint64_t t_end = load_u64(&r->t_end);
	size_t i;
	unsigned int n = 0;

	qsort(r->ev, r->nr_ev, sizeof(*r->ev), cmp_event);
	w = malloc((r->nr_chunks + 1) * sizeof(*w));
	if (!w)
		return;
	res->max_censored = false;
	res->wait_max_ms = 0;
	for (i = 0; i < r->nr_chunks; i++) {
		e = first_event(r, BL_STUCK_INO + 1 + r->chunks[i].file,
				r->chunks[i].t_ns);
		if (e) {
			w[n++] = (e->t_ns - r->chunks[i].t_ns) / 1e6;
			continue;
		}
		res->unwritten++;
		m = (t_end - r->chunks[i].t_ns) / 1e6;
		if (m > res->wait_max_ms) {
			res->wait_max_ms = m;
			res->max_censored = true;
		}
	}
	res->chunks = (unsigned int)r->nr_chunks;
	if (n) {
		bench_stats(w, n, &st);
		res->wait_median_ms = st.median;
		res->wait_p90_ms = bench_quantile(w, n, 0.9);
		if (st.max >= res->wait_max_ms) {
			res->wait_max_ms = st.max;
			res->max_censored = false;
		}
	}
	free(w);
}

static void fill_result(struct bl_run *r, struct bl_result *res)
{
	uint64_t written = load_u64(&r->written_ns);
	uint64_t t_end = load_u64(&r->t_end);
	unsigned int i;

	res->traced = !r->b->o.no_trace;
	for (i = 0; i < 2; i++) {
		res->passes[i] = r->passes[i];
		res->passes_kupdate[i] = r->pk[i];
		res->passes_background[i] = r->pb[i];
		res->waits[i] = r->waits[i];
		res->waits_kupdate[i] = r->wk[i];
		res->waits_background[i] = r->wbg[i];
	}
	res->tries = __atomic_load_n(&r->tries, __ATOMIC_RELAXED);
	res->written_after_s = written ? (written - r->t_unlock) / 1e9 : -1;
	res->written_sync = r->written_sync;
	res->within = written && res->written_after_s <= r->b->bound_s;
	res->secs_after = t_end > r->t_unlock ?
			  (t_end - r->t_unlock) / 1e9 : 0;
	res->stall_max_ms = r->stall_max_ms;
	res->writes_done = r->writes_done;
	res->writes_planned = (unsigned long)r->b->o.files *
		(((uint64_t)r->b->o.stuck_s * 1000 + r->b->o.interval_ms - 1) /
		 r->b->o.interval_ms);
	res->trace_lines = r->lines;
	res->trace_bytes = r->bytes;
	page_waits(r, res);
	res->nr_secs = r->nr_secs;
	res->waits_per_s = r->b_waits;
	res->passes_per_s = r->b_passes;
	res->tries_per_s = r->b_tries;
	r->b_waits = r->b_passes = r->b_tries = NULL;	/* now res's */
}

/* Wait until t, or until the stuck inode is written (if stop_written). */
static void wait_until(struct bl_run *r, uint64_t t, bool stop_written)
{
	uint64_t now;

	while (!bench_stop && (now = uf_now_ns()) < t) {
		if (stop_written && load_u64(&r->written_ns))
			return;
		sleep_until(now + BL_POLL_NS < t ? now + BL_POLL_NS : t);
	}
}

/* Stop the writer and wait for it. */
static void stop_writer(struct bl_run *r)
{
	if (!r->writer_started)
		return;
	__atomic_store_n(&r->stop_writer, 1, __ATOMIC_RELEASE);
	pthread_join(r->writer, NULL);
	r->writer_started = false;
}

/*
 * The timed part: t=0 mark the stuck inode dirty and start the writer;
 * t=--secs the lock clears; the run ends when the inode is written or
 * at t=--secs + bound.
 */
static int run_window(struct bl_run *r, struct uf_cache *cache,
		      struct uf_dev *dev, struct uf_file *stuck, pid_t tid)
{
	struct bl_result *res = &r->v->res;
	struct uf_cache_stats cs0, cs1;
	struct uf_dev_stats ds0, ds1;
	double c0, c1, c2, s0, s1, s2;
	uint64_t t0, t_end;
	int err;

	uf_cache_stats(cache, &cs0);
	uf_dev_stats(dev, &ds0);
	c0 = thread_cpu_ms(tid);
	s0 = thread_run_ms(tid);
	/* unlock first: nothing may see a start without its unlock */
	t0 = uf_now_ns();
	store_u64(&r->t_unlock, t0 + (uint64_t)r->b->o.stuck_s * NSEC);
	store_u64(&r->t_start, t0);
	err = uf_file_mark_inode_dirty(stuck, UF_I_DIRTY_SYNC);
	if (err)
		return err;
	err = -pthread_create(&r->writer, NULL, writer, r);
	if (err)
		return err;
	r->writer_started = true;

	wait_until(r, r->t_unlock, false);
	c1 = thread_cpu_ms(tid);
	s1 = thread_run_ms(tid);
	wait_until(r, r->t_unlock + (uint64_t)r->b->bound_s * NSEC, true);

	/* t_end is published before it is reached: see parse_line() */
	t_end = uf_now_ns() + BL_END_MARGIN_NS;
	store_u64(&r->t_end, t_end);
	sleep_until(t_end);
	c2 = thread_cpu_ms(tid);
	s2 = thread_run_ms(tid);
	stop_writer(r);
	uf_cache_stats(cache, &cs1);
	uf_dev_stats(dev, &ds1);

	res->cpu_ms[0] = c0 >= 0 && c1 >= 0 ? c1 - c0 : -1;
	res->cpu_ms[1] = c1 >= 0 && c2 >= 0 ? c2 - c1 : -1;
	res->run_ms[0] = s0 >= 0 && s1 >= 0 ? s1 - s0 : -1;
	res->run_ms[1] = s1 >= 0 && s2 >= 0 ? s2 - s1 : -1;
	res->works_done = ds1.works_done - ds0.works_done;
	res->pages_written = cs1.nr_written - cs0.nr_written;
	res->dirty_thresh = cs1.dirty_thresh;
	res->background_thresh = cs1.background_thresh;
	return r->writer_err;
}

static void cache_config(const struct bl_bench *b, const struct bl_variant *v,
			 struct uf_cache_config *cfg)
{
	uf_cache_config_init(cfg);
	cfg->nr_pages = b->o.pages;
	cfg->policy = v->spec;
	cfg->dirty_expire_centisecs = b->o.expire_cs;
	cfg->dirty_writeback_centisecs = b->o.writeback_cs;
	cfg->trace_path = b->o.no_trace ? NULL : b->fifo;
}

static int run_variant(struct bl_bench *b, struct bl_variant *v)
{
	struct uf_cache_config cfg;
	struct uf_cache *cache = NULL;
	struct uf_file *stuck = NULL;
	struct uf_dev *dev = NULL;
	struct bl_run run, *r = &run;
	const char *spec;
	pid_t tid;
	int err, cerr;

	err = alloc_run(r, b, v);
	if (err) {
		snprintf(v->why, sizeof(v->why), "out of memory");
		goto out_free;
	}
	if (b->o.no_trace)
		goto no_reader;
	if (b->o.trace) {
		r->copy = fopen(b->o.trace, "ae");
		if (!r->copy) {
			err = -errno;
			snprintf(v->why, sizeof(v->why), "%s: %s", b->o.trace,
				 strerror(-err));
			goto out_free;
		}
		fprintf(r->copy, "# uflush-bench busyloop: %s (%s)\n", v->label,
			v->spec);
	}
	err = -pthread_create(&r->reader, NULL, trace_reader, r);
	if (err) {
		snprintf(v->why, sizeof(v->why), "trace reader: %s",
			 strerror(-err));
		goto out_free;
	}
	r->reader_started = true;
no_reader:
	cache_config(b, v, &cfg);
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		snprintf(v->why, sizeof(v->why), "uf_cache_open: %s",
			 strerror(-err));
		if (r->reader_started)
			unblock_reader(r);
		goto out_join;
	}
	spec = uf_cache_policy(cache);
	snprintf(v->resolved, sizeof(v->resolved), "%s", spec ? spec : "?");
	err = bench_dev_open(&b->ro, cache, &b->t, &dev);
	if (err) {
		snprintf(v->why, sizeof(v->why), "uf_dev_open %s: %s",
			 b->t.path, strerror(-err));
		goto out_close;
	}
	err = open_files(b, r, dev, &stuck);
	if (err) {
		snprintf(v->why, sizeof(v->why), "uf_file_open: %s",
			 strerror(-err));
		goto out_close;
	}
	tid = find_flusher(b->flusher);
	if (!tid)
		fprintf(stderr,
			"uflush-bench busyloop: warning: no flusher thread %s found: no CPU numbers\n",
			b->flusher[0] ? b->flusher : "flush-*");
	err = run_window(r, cache, dev, stuck, tid);
	if (err)
		snprintf(v->why, sizeof(v->why), "run: %s", strerror(-err));
out_close:
	stop_writer(r);
	/* the writer is gone: the lock "clears" for the final writeback */
	if (load_u64(&r->t_end) == UINT64_MAX)
		store_u64(&r->t_end, uf_now_ns());
	/* also closes the trace: the reader sees EOF */
	cerr = uf_cache_close(cache);
	if (!err && cerr) {
		snprintf(v->why, sizeof(v->why), "uf_cache_close: %s",
			 strerror(-cerr));
		err = cerr;
	}
out_join:
	if (r->reader_started)
		pthread_join(r->reader, NULL);
	if (!err && r->reader_err) {
		err = r->reader_err;
		snprintf(v->why, sizeof(v->why), "trace reader: %s",
			 strerror(-err));
	}
	if (!err && (r->ev_oom || r->chunk_oom)) {
		err = -ENOMEM;
		snprintf(v->why, sizeof(v->why), "out of memory for events");
	}
	if (!err && !bench_stop) {
		fill_result(r, &v->res);
		v->ran = true;
	}
out_free:
	free_run(r);
	return err;
}

/* ------------------------------------------------------------------ */
/* Variants                                                            */

static bool is_preset(const char *name)
{
	unsigned int i;

	for (i = 0; wb_policy_presets[i]; i++)
		if (!strcmp(wb_policy_presets[i], name))
			return true;
	return false;
}

/*
 * An item of --variants: a preset ("linux-3.1"), a nowait value ("v4",
 * "nowait=mainline": BASE,requeue=p2-v4,nowait=VALUE), or a spec with '+'
 * for ',' ("kara-v4.2+nowait=v4"; "requeue=riw+nowait=v4" gets BASE).
 */
static int make_variant(const struct bl_bench *b, const char *item,
			struct bl_variant *v)
{
	char spec[WB_POLICY_SPEC_LEN], *p;
	const char *val = item;
	struct wb_policy pol;
	size_t first;
	int err;

	memset(v, 0, sizeof(*v));
	if (strlen(item) >= BENCH_CELL_LEN || strlen(item) + 64 >= sizeof(spec))
		return -ENAMETOOLONG;
	if (!strncmp(item, "nowait=", 7))
		val = item + 7;
	if (val != item || (!strchr(item, '=') && !strchr(item, '+') &&
			    !is_preset(item))) {
		snprintf(spec, sizeof(spec), "%s,requeue=p2-v4,nowait=%s",
			 b->o.base, val);
		snprintf(v->label, sizeof(v->label), "nowait=%s", val);
	} else {
		first = strcspn(item, "+");
		if (memchr(item, '=', first))
			snprintf(spec, sizeof(spec), "%s,%s", b->o.base, item);
		else
			snprintf(spec, sizeof(spec), "%s", item);
		for (p = spec; *p; p++)
			if (*p == '+')
				*p = ',';
		snprintf(v->label, sizeof(v->label), "%s", item);
	}
	snprintf(v->spec, sizeof(v->spec), "%s", spec);
	err = wb_policy_resolve(spec, &pol);	/* says why on stderr */
	if (err)
		return err;
	snprintf(v->resolved, sizeof(v->resolved), "%s", pol.spec);
	wb_policy_release(&pol);
	return 0;
}

static int make_variants(struct bl_bench *b)
{
	char list[1024], *item, *save = NULL;
	int err;

	if (strlen(b->o.variants) >= sizeof(list))
		return -EINVAL;
	strcpy(list, b->o.variants);
	for (item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		if (b->nr_variants == BL_MAX_VARIANTS) {
			fprintf(stderr, "uflush-bench busyloop: at most %d variants\n",
				BL_MAX_VARIANTS);
			return -E2BIG;
		}
		err = make_variant(b, item, &b->v[b->nr_variants]);
		if (err) {
			fprintf(stderr, "uflush-bench busyloop: bad variant '%s': %s\n",
				item, strerror(-err));
			return err;
		}
		b->nr_variants++;
	}
	if (!b->nr_variants) {
		fprintf(stderr, "uflush-bench busyloop: --variants is empty\n");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

enum {
	COL_VARIANT, COL_PASSES, COL_KB, COL_WAITS, COL_TRIES, COL_CPU,
	COL_CPU_PCT, COL_WMED, COL_WMAX, COL_STALL, COL_WRITTEN, COL_WITHIN,
};

static const char *const bl_cols[] = {
	"variant", ">passes", ">kupd/bg", ">waits", ">tries", ">cpu ms",
	">cpu%", ">wait med ms", ">wait max ms", ">stall ms",
	">unlock->written s", "within",
};

static void fmt_count(char *buf, size_t len, unsigned long v)
{
	if (v >= 10000000)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else
		snprintf(buf, len, "%lu", v);
}

static void table_row(struct bench_table *t, const void *priv,
		      unsigned int i)
{
	const struct bl_bench *b = priv;
	const struct bl_variant *v = &b->v[i];
	const struct bl_result *r = &v->res;
	char n1[24], n2[24];
	int row = bench_table_row(t);

	if (row < 0)
		return;
	bench_table_set(t, row, COL_VARIANT, "%s", v->label);
	if (!v->ran) {
		bench_table_set(t, row, COL_PASSES, "%s",
				!strcmp(v->why, "interrupted") ? "interrupted" :
				v->why[0] ? "failed" : "not run");
		return;
	}
	if (r->traced) {
		fmt_count(n1, sizeof(n1), r->passes[0]);
		bench_table_set(t, row, COL_PASSES, "%s", n1);
		fmt_count(n1, sizeof(n1), r->passes_kupdate[0]);
		fmt_count(n2, sizeof(n2), r->passes_background[0]);
		bench_table_set(t, row, COL_KB, "%s/%s", n1, n2);
		fmt_count(n1, sizeof(n1), r->waits[0]);
		bench_table_set(t, row, COL_WAITS, "%s", n1);
	} else {
		bench_table_set(t, row, COL_PASSES, "-");
		bench_table_set(t, row, COL_KB, "-");
		bench_table_set(t, row, COL_WAITS, "-");
	}
	fmt_count(n1, sizeof(n1), r->tries);
	bench_table_set(t, row, COL_TRIES, "%s", n1);
	if (r->cpu_ms[0] >= 0) {
		bench_table_set(t, row, COL_CPU, "%.0f", r->cpu_ms[0]);
		bench_table_set(t, row, COL_CPU_PCT, "%.1f",
				r->cpu_ms[0] / (b->o.stuck_s * 10.0));
	} else {
		bench_table_set(t, row, COL_CPU, "-");
		bench_table_set(t, row, COL_CPU_PCT, "-");
	}
	if (r->traced && r->chunks > r->unwritten)
		bench_table_set(t, row, COL_WMED, "%.0f", r->wait_median_ms);
	else
		bench_table_set(t, row, COL_WMED, "-");
	if (r->traced)
		bench_table_set(t, row, COL_WMAX, "%s%.0f",
				r->max_censored ? ">" : "", r->wait_max_ms);
	else
		bench_table_set(t, row, COL_WMAX, "-");
	bench_table_set(t, row, COL_STALL, "%.0f", r->stall_max_ms);
	if (r->written_after_s >= 0)
		bench_table_set(t, row, COL_WRITTEN, "%.2f",
				r->written_after_s);
	else
		bench_table_set(t, row, COL_WRITTEN, ">%.1f", r->secs_after);
	bench_table_set(t, row, COL_WITHIN, "%s", r->within ? "yes" : "NO");
}

static double max_pause_ms(const struct bl_bench *b)
{
	return b->o.writeback_cs ? b->o.writeback_cs * 10.0 : 1000.0;
}

static const struct bl_result *first_result(const struct bl_bench *b)
{
	unsigned int i;

	for (i = 0; i < b->nr_variants; i++)
		if (b->v[i].ran)
			return &b->v[i].res;
	return NULL;
}

static void print_header(const void *priv)
{
	const struct bl_bench *b = priv;
	const struct bl_result *r = first_result(b);
	double mibs = b->o.files * (b->o.bs / 1048576.0) /
		      (b->o.interval_ms / 1000.0);

	printf("\nuflush-bench busyloop: one inode's write_inode fails (-EAGAIN) for %u s while %u other files are written\n",
	       b->o.stuck_s, b->o.files);
	bench_target_print(&b->t, NULL);
	bench_env_print(&b->env, NULL, false);
	printf("cache:   %u pages (%.0f MiB), HZ 1000, engine io_uring",
	       b->o.pages, b->o.pages / 256.0);
	if (r)
		printf("; dirty_thresh %lu pages, background_thresh %lu",
		       r->dirty_thresh, r->background_thresh);
	printf("\n         dirty_expire_centisecs %u, dirty_writeback_centisecs %u (max_pause %.0f ms)\n",
	       b->o.expire_cs, b->o.writeback_cs, max_pause_ms(b));
	printf("load:    %u files x %" PRIu64 " MiB, %" PRIu64 " KiB to each every %u ms (%.2f MiB/s), for the whole run\n",
	       b->o.files, b->o.file_size >> 20, b->o.bs >> 10,
	       b->o.interval_ms, mibs);
	printf("stuck:   ino %d, I_DIRTY_SYNC only, write_inode -EAGAIN for %u s then 0; a run ends when it\n"
	       "         is written or %u s after the unlock (bound = max_pause + dirty_writeback_interval%s)\n",
	       BL_STUCK_INO, b->o.stuck_s, b->bound_s,
	       b->o.expire_cs > b->o.stuck_s * 100 ?
	       " + the inode's time left to expire" : "");
	printf("nowait=X rows run \"%s,requeue=p2-v4,nowait=X\": requeue=p2-v4 puts an inode whose write_inode\n"
	       "failed on b_more_io; the other rows are presets as they are.\n\n",
	       b->o.base);
}

static void print_notes(const void *priv)
{
	const struct bl_bench *b = priv;
	unsigned int i;

	printf("\nresolved policies (uf_cache_policy):\n");
	for (i = 0; i < b->nr_variants; i++)
		printf("  %-18s %s\n", b->v[i].label, b->v[i].resolved);
	for (i = 0; i < b->nr_variants; i++)
		if (!b->v[i].ran && b->v[i].why[0])
			printf("  %s FAILED: %s\n", b->v[i].label, b->v[i].why);
	printf("\nOver the stuck window [0, %u s): passes = wb_writeback iterations (writeback_start),\n"
	       "kupd/bg = of them in kupdate / background works, waits = no-progress waits\n"
	       "(writeback_wait), tries = calls of the stuck inode's write_inode, cpu ms = the flusher\n"
	       "thread's utime+stime (/proc/self/task/TID/stat, %ld ticks/s), cpu%% = of one CPU.\n"
	       "wait med/max = per write of the other files, from the return of its uf_pwrite to the\n"
	       "first writeback_single_inode of that file with wrote>0 (writes made in the window;\n"
	       "'>' = some were not written by the end of the run, their age is a lower bound).\n"
	       "stall = the longest uf_pwrite (throttled).  unlock->written = the first successful\n"
	       "write_inode after the lock cleared ('>' = not by the end); within = <= %u s.\n"
	       "%s\n",
	       b->o.stuck_s, sysconf(_SC_CLK_TCK), b->bound_s,
	       b->o.no_trace ?
	       "--no-trace: no tracepoints, so no passes, waits or page waits; the flusher's CPU\n"
	       "time is not slowed by trace output." :
	       "The tracepoints went to a FIFO and were counted, not stored; writing them slows a\n"
	       "busy-looping flusher (compare --no-trace).");
	bench_reopen_print(&b->ro);
}

/* A field of bl_result by name, for the JSON report. */
#define BL_PAIR(field) { #field, offsetof(struct bl_result, field) }

/* The counts kept for both windows: [stuck, after unlock]. */

static const struct {
	const char *key;
	size_t off;
} bl_pairs[] = {
	BL_PAIR(passes), BL_PAIR(passes_kupdate), BL_PAIR(passes_background),
	BL_PAIR(waits), BL_PAIR(waits_kupdate), BL_PAIR(waits_background),
};

/* The run's totals (unsigned long). */
static const struct {
	const char *key;
	size_t off;
} bl_totals[] = {
	BL_PAIR(works_done), BL_PAIR(pages_written), BL_PAIR(dirty_thresh),
	BL_PAIR(background_thresh), BL_PAIR(trace_lines),
};

static void json_counts(struct bench_json *j, const struct bl_result *r)
{
	unsigned int i;

	bench_json_bool(j, "traced", r->traced);
	bench_json_str(j, "windows", "[stuck, after unlock]");
	for (i = 0; i < sizeof(bl_pairs) / sizeof(bl_pairs[0]); i++)
		bench_json_ulongs(j, bl_pairs[i].key,
				  (const unsigned long *)((const char *)r +
							  bl_pairs[i].off), 2);
	bench_json_nums(j, "flusher_cpu_ms", r->cpu_ms, 2);
	bench_json_nums(j, "flusher_run_ms", r->run_ms, 2);
	bench_json_u64(j, "write_inode_tries", r->tries);
	bench_json_num(j, "written_after_unlock_s",
		       r->written_after_s >= 0 ? r->written_after_s : NAN);
	bench_json_int(j, "written_sync", r->written_sync);
	bench_json_bool(j, "within_bound", r->within);
	bench_json_num(j, "secs_after_unlock", r->secs_after);
}

static void json_waits(struct bench_json *j, const struct bl_result *r)
{
	bench_json_obj(j, "page_waits");
	bench_json_u64(j, "writes", r->chunks);
	bench_json_u64(j, "unwritten", r->unwritten);
	bench_json_num(j, "median_ms", r->wait_median_ms);
	bench_json_num(j, "p90_ms", r->wait_p90_ms);
	bench_json_num(j, "max_ms", r->wait_max_ms);
	bench_json_bool(j, "max_is_lower_bound", r->max_censored);
	bench_json_end(j);
	bench_json_obj(j, "writer");
	bench_json_u64(j, "writes", r->writes_done);
	bench_json_u64(j, "planned", r->writes_planned);
	bench_json_num(j, "max_stall_ms", r->stall_max_ms);
	bench_json_end(j);
}

static void json_variant(struct bench_json *j, const void *priv,
			 unsigned int i)
{
	const struct bl_variant *v = &((const struct bl_bench *)priv)->v[i];
	const struct bl_result *r = &v->res;
	unsigned int k;

	bench_json_obj(j, NULL);
	bench_json_str(j, "variant", v->label);
	bench_json_str(j, "spec", v->spec);
	bench_json_str(j, "policy", v->resolved);
	bench_json_str(j, "status",
		       v->ran ? "ok" : v->why[0] ? "failed" : "not run");
	bench_json_str(j, "error", v->why);
	if (v->ran) {
		json_counts(j, r);
		json_waits(j, r);
		for (k = 0; k < sizeof(bl_totals) / sizeof(bl_totals[0]); k++)
			bench_json_u64(j, bl_totals[k].key,
				       *(const unsigned long *)((const char *)r +
								bl_totals[k].off));
		bench_json_u64(j, "trace_bytes", r->trace_bytes);
		bench_json_obj(j, "per_second");
		bench_json_ulongs(j, "waits", r->waits_per_s, r->nr_secs);
		bench_json_ulongs(j, "passes", r->passes_per_s, r->nr_secs);
		bench_json_ulongs(j, "tries", r->tries_per_s, r->nr_secs);
		bench_json_end(j);
	}
	bench_json_end(j);
}

static void json_config(struct bench_json *j, const void *priv)
{
	const struct bl_bench *b = priv;

	bench_json_obj(j, "config");
	bench_json_u64(j, "stuck_s", b->o.stuck_s);
	bench_json_u64(j, "bound_s", b->bound_s);
	bench_json_u64(j, "interval_ms", b->o.interval_ms);
	bench_json_u64(j, "files", b->o.files);
	bench_json_u64(j, "file_size", b->o.file_size);
	bench_json_u64(j, "bs", b->o.bs);
	bench_json_u64(j, "pages", b->o.pages);
	bench_json_u64(j, "hz", 1000);
	bench_json_u64(j, "dirty_expire_centisecs", b->o.expire_cs);
	bench_json_u64(j, "dirty_writeback_centisecs", b->o.writeback_cs);
	bench_json_num(j, "max_pause_ms", max_pause_ms(b));
	bench_json_str(j, "base", b->o.base);
	bench_json_int(j, "clk_tck", sysconf(_SC_CLK_TCK));
	bench_json_end(j);
}

static const struct bench_report bl_report = {
	bl_cols, sizeof(bl_cols) / sizeof(bl_cols[0]),
	print_header, table_row, print_notes, json_config, json_variant,
};

/* ------------------------------------------------------------------ */
/* The device and the FIFO                                             */

/* The flusher's comm is flush-MAJ:MIN of the block device. */
static void name_flusher(struct bl_bench *b)
{
	if (b->t.is_blk)
		snprintf(b->flusher, sizeof(b->flusher), "flush-%u:%u",
			 b->t.major, b->t.minor);
}

static int make_fifo(struct bl_bench *b)
{
	const char *dir = getenv("UFLUSH_TESTDIR");

	snprintf(b->tmpdir, sizeof(b->tmpdir), "%s/uflush-busyloop-XXXXXX",
		 dir && *dir ? dir : "/var/tmp");
	if (!mkdtemp(b->tmpdir)) {
		fprintf(stderr, "uflush-bench busyloop: mkdtemp %s: %s\n",
			b->tmpdir, strerror(errno));
		b->tmpdir[0] = '\0';
		return -errno;
	}
	snprintf(b->fifo, sizeof(b->fifo), "%s/trace.fifo", b->tmpdir);
	if (mkfifo(b->fifo, 0600)) {
		fprintf(stderr, "uflush-bench busyloop: mkfifo %s: %s\n",
			b->fifo, strerror(errno));
		b->fifo[0] = '\0';
		return -errno;
	}
	return 0;
}

static void remove_fifo(struct bl_bench *b)
{
	if (b->fifo[0])
		unlink(b->fifo);
	if (b->tmpdir[0])
		rmdir(b->tmpdir);
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

static const struct bench_opt bl_opts[] = {
	BENCH_UINT("secs", "SEC", &bl_bench.o.stuck_s, 1, 3600,
		   "1..3600 seconds",
		   "seconds the inode's write_inode fails (default 30)"),
	BENCH_OLD_NAME("stuck", "secs"),
	BENCH_STR("variants", "LIST", &bl_bench.o.variants,
		  "comma-separated; each item is a nowait value (b0 v3a v3b\n"
		  "v4 v4-r7 v4.1 v4.2, or nowait=mainline), run as\n"
		  "BASE,requeue=p2-v4,nowait=VALUE; or a preset run as it\n"
		  "is; or a spec with '+' for ',' (kara-v4.2+nowait=v4)\n"
		  "(default " BL_DEFAULT_VARIANTS ")"),
	BENCH_STR("base", "PRESET", &bl_bench.o.base,
		  "BASE of the nowait items (default linux-3.2)"),
	BENCH_UINT("interval", "MS", &bl_bench.o.interval_ms, 1, 5000,
		   "1..5000 ms", "writer period (default 200)"),
	BENCH_SIZE("bs", &bl_bench.o.bs, 4096, 16u << 20, 4096,
		   "bytes written to each file per period (default 64k)"),
	BENCH_UINT("files", "N", &bl_bench.o.files, 1, BL_MAX_FILES, NULL,
		   "other files (default 4, at most 16)"),
	BENCH_SIZE("file-size", &bl_bench.o.file_size, 4096, 1ull << 32, 4096,
		   "size of each, written round and round (default 8M)"),
	BENCH_OPT_CACHE(&bl_bench.o.pages, 256, 1u << 28,
			"the cache (default 64M; --pages N: frames)"),
	BENCH_UINT("expire-cs", "N", &bl_bench.o.expire_cs, 0, 360000, NULL,
		   "dirty_expire_centisecs (default --secs/3, at most the\n"
		   "kernel's 3000: the stuck inode expires early in --secs)"),
	BENCH_UINT("writeback-cs", "N", &bl_bench.o.writeback_cs, 0, 360000,
		   NULL, "dirty_writeback_centisecs = max_pause (default --secs/6,\n"
		   "at most the kernel's 500: kupdate runs >= 6 times in it)"),
	BENCH_UINT("bound", "S", &bl_bench.o.bound_s, 1, 3600,
		   "1..3600 seconds",
		   "seconds after the unlock within which the inode must be\n"
		   "written (default max_pause + dirty_writeback_interval,\n"
		   "plus what the inode still has to expire, if anything)"),
	BENCH_OPT_DEV(&bl_bench.o.dev),
	BENCH_OPT_FORCE(&bl_bench.o.force),
	BENCH_OPT_JSON(&bl_bench.o.json),
	BENCH_STR("trace", "FILE", &bl_bench.o.trace,
		  "also append the tracepoints to FILE (v3a and b0 print\n"
		  "hundreds of MB per minute)"),
	BENCH_FLAG("no-trace", &bl_bench.o.no_trace,
		   "no tracepoints: the flusher's CPU time without their\n"
		   "cost, but no passes, waits or page waits"),
	BENCH_OPT_END,
};

BENCH_CMDLINE(busyloop, bl_opts,
	"What seed 000's no-progress variants cost on a real device: one inode with\n"
	"only its metadata dirty whose write_inode fails with -EAGAIN for --secs\n"
	"seconds, while a writer thread writes --bs to each of --files other files\n"
	"every --interval ms.  For each variant: flusher passes and no-progress\n"
	"waits (counted from the tracepoints), write_inode tries, the flusher\n"
	"thread's CPU time, how long the other files' writes waited for writeback,\n"
	"and how soon after the lock cleared the inode was written.\n"
	"Default device: a scratch loop device (direct I/O), removed at exit.\n",
	"Environment: UFLUSH_TESTDIR = where the scratch file and the trace FIFO go\n"
	"(default /var/tmp).\n");

static int parse_opts(struct bl_opts *o, int argc, char **argv)
{
	int err;

	err = bench_opts_main(&bench_busyloop_cmdline, argc, argv);
	if (err >= 0)
		return err;
	if (o->trace && o->no_trace) {
		bench_err("busyloop", "--trace and --no-trace exclude each other");
		return -EINVAL;
	}
	if (!is_preset(o->base)) {
		bench_err("busyloop", "--base must be a preset (linux-3.1 linux-3.2 kara-v4.2 wu-riw mainline)");
		return -EINVAL;
	}
	if (o->file_size % o->bs) {
		bench_err("busyloop", "--file-size must be a multiple of --bs");
		return -EINVAL;
	}
	/*
	 * The stuck inode is dirtied at t=0: it must expire well inside the
	 * stuck window, and kupdate must run several times in it.
	 */
	if (o->expire_cs == UINT_MAX)
		o->expire_cs = o->stuck_s * 100 / 3 < 3000 ?
			       o->stuck_s * 100 / 3 : 3000;
	if (o->writeback_cs == UINT_MAX)
		o->writeback_cs = o->stuck_s * 100 / 6 < 500 ?
				  o->stuck_s * 100 / 6 : 500;
	return 0;
}

/*
 * max_pause + dirty_writeback_interval (spec B10), plus the time the stuck
 * inode still needs to expire at the unlock, rounded up to seconds.
 */
static unsigned int default_bound(const struct bl_opts *o)
{
	unsigned int cs = o->writeback_cs ? 2 * o->writeback_cs : 100;

	if (o->expire_cs > o->stuck_s * 100)
		cs += o->expire_cs - o->stuck_s * 100;
	return (cs + 99) / 100;
}

/* ------------------------------------------------------------------ */
/* Main                                                                */

static void report_run(const struct bl_bench *b, const struct bl_variant *v,
		       unsigned int i)
{
	const struct bl_result *r = &v->res;

	if (!v->ran) {
		fprintf(stderr, "  [%u/%u] %-18s %s\n", i + 1, b->nr_variants,
			v->label, v->why[0] ? v->why : "not run");
		return;
	}
	fprintf(stderr, "  [%u/%u] %-18s ", i + 1, b->nr_variants, v->label);
	if (r->traced)
		fprintf(stderr, "passes %lu waits %lu ", r->passes[0],
			r->waits[0]);
	fprintf(stderr, "tries %lu cpu %.0f ms; written %s%.2f s after unlock\n",
		r->tries, r->cpu_ms[0], r->written_after_s >= 0 ? "" : "> ",
		r->written_after_s >= 0 ? r->written_after_s : r->secs_after);
}

/* One variant (a bench_sched run callback); a failure does not stop. */
static int run_one(void *priv, unsigned int i, unsigned int rep)
{
	struct bl_bench *b = priv;
	int err;

	(void)rep;
	err = run_variant(b, &b->v[i]);
	if (bench_stop) {
		snprintf(b->v[i].why, sizeof(b->v[i].why), "interrupted");
		return 0;
	}
	report_run(b, &b->v[i], i);
	if (err && !b->first_err)
		b->first_err = err;
	return 0;
}

static int run_all(struct bl_bench *b)
{
	struct bench_sched s = {
		.nr_cases = b->nr_variants, .cases = b->cases, .reps = 1,
		.run = run_one, .priv = b,
	};
	int err = bench_sched_run(&s);

	return err ? err : b->first_err;
}

static void free_results(struct bl_bench *b)
{
	unsigned int i;

	for (i = 0; i < b->nr_variants; i++) {
		free(b->v[i].res.waits_per_s);
		free(b->v[i].res.passes_per_s);
		free(b->v[i].res.tries_per_s);
	}
}

/* The device, its flusher's name, the buffer and the trace FIFO. */
static int set_up(struct bl_bench *b)
{
	uint64_t size = BL_DATA_OFFSET + b->o.files * b->o.file_size;
	int err;

	b->buf = bench_random_buffer(b->o.bs);
	if (!b->buf)
		return -ENOMEM;
	err = make_fifo(b);
	if (!err)
		err = bench_target_open(&b->t, "busyloop", b->o.dev, size,
						b->o.force);
	if (err)
		return err;
	b->t.range = size;
	b->t.force = b->o.force;
	name_flusher(b);
	if (b->t.scratch && !bench_stop) {
		err = bench_target_prefill(&b->t, b->t.range, 4u << 20);
		if (err)
			bench_err("busyloop", "prefill: %s", strerror(-err));
	}
	return err;
}

int bench_busyloop_main(int argc, char **argv)
{
	struct bl_bench *b = &bl_bench;
	int err;

	err = parse_opts(&b->o, argc, argv);
	if (err)
		return err > 0 ? 0 : 2;
	b->bound_s = b->o.bound_s ? b->o.bound_s : default_bound(&b->o);
	if (make_variants(b))
		return 2;
	if (bench_env_init(&b->env, "busyloop", false))
		return 1;
	err = set_up(b);
	if (!err && !bench_stop) {
		bench_err("busyloop", "%s (%s); %u variants, about %u-%u s each",
			  b->t.path, b->t.desc, b->nr_variants, b->o.stuck_s,
			  b->o.stuck_s + b->bound_s);
		err = run_all(b);
		if (bench_report(&bl_report, &b->env, &b->t, b->o.json, b,
				 b->nr_variants) && !err)
			err = -EIO;
	}
	bench_target_close(&b->t);
	remove_fifo(b);
	free_results(b);
	free(b->buf);
	return bench_exit_code("busyloop", err);
}
