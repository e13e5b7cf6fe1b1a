// SPDX-License-Identifier: MIT
/*
 * bench/idle.c - `uflush-bench idle`: the wakeups of an idle cache (issue
 * 11, target 4).  The kernel's flusher sleeps while nothing is dirty and,
 * while something is, wakes once per dirty_writeback_interval (kupdate).
 * For each state a cache with one device and one file is opened, brought
 * to the state (untimed) and left alone for --secs seconds:
 *
 *   clean     the file written and fsynced: no thread should wake;
 *   dirty     1 MiB dirty that does not expire within the window: the
 *             flusher wakes once per interval and writes nothing;
 *   expiring  one page redirtied by the bench once per interval, with
 *             dirty_expire one interval: the flusher wakes once per
 *             interval and writes it.
 *
 * A wakeup is counted as a context switch: voluntary + involuntary ones
 * of every thread of the process (/proc/self/task/TID/status) before and
 * after the window, grouped by thread name (the engine names its threads:
 * flush-MAJ:MIN, uf-timer, uf-uring, kswapd, ...).  The flusher's loop is
 * also counted from its tracepoint (writeback_pages_written, one per pass)
 * in the cache's trace file.  A sleep with a timeout on the real clock
 * waits for its own deadline (engine/kernel/wait.c), so the timer thread
 * is expected to sleep through the periodic passes; it runs real timers
 * only, such as the delayed flusher wakeup a redirtied inode arms
 * ("expiring": one a pass).  Every other engine thread (and io_uring's
 * iou-wrk workers) is expected to sleep.
 * The bench's own thread sleeps through the window (and in "expiring"
 * wakes once per interval to write): it is listed, not judged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"

#define IDLE_PAGE	4096ull
#define IDLE_FILE	(16ull << 20)
#define IDLE_THREADS	32		/* thread names tracked */

enum idle_state { S_CLEAN, S_DIRTY, S_EXPIRING, NR_STATES };

static const char *const idle_names[NR_STATES] = {
	"clean", "dirty", "expiring",
};

/* Context switches of one thread name over one window (summed). */
struct idle_thread {
	char comm[20];
	unsigned int nr;		/* threads of that name */
	uint64_t csw;			/* voluntary + involuntary */
	uint64_t invol;
};

struct idle_run {
	unsigned int nr;
	struct idle_thread th[IDLE_THREADS];
	double secs;
	uint64_t passes;		/* writeback_pages_written events */
	unsigned long written;		/* pages */
};

struct idle_bench {
	struct {
		unsigned int secs;
		unsigned int interval_ms;
	} o;
	struct bench_common cm;
	char tracedir[256];
	char policy[512];
	void *buf;
	struct bench_case cases[NR_STATES];
	unsigned int n[NR_STATES];
	struct idle_run runs[NR_STATES][BENCH_MAX_REPS];
};

static struct idle_bench idle = {
	.o = { .secs = 5, .interval_ms = 1000 },
	.cm = { .reps = 1 },
};

static const struct bench_opt idle_opts[] = {
	BENCH_UINT("secs", "SEC", &idle.o.secs, 1, 3600, NULL,
		   "each state's window; 5"),
	BENCH_UINT("interval", "MS", &idle.o.interval_ms, 10, 60000,
		   "10..60000, a multiple of 10",
		   "dirty_writeback_interval; 1000"),
	BENCH_OPT_REPS(&idle.cm.reps, "repetitions of every state; 1"),
	BENCH_OPTS_COMMON_END(idle.cm),
};

BENCH_CMDLINE(idle, idle_opts,
	"Wakeups of an idle cache: clean (none expected), dirty and\n"
	"expiring (the flusher once per dirty_writeback_interval),\n"
	"counted as context switches per thread and from the\n"
	"flusher's tracepoint.\n"
	BENCH_SCRATCH_ABOUT,
	"Environment: UFLUSH_TESTDIR = where the scratch file and\n"
	"the trace go.\n");

/* ------------------------------------------------------------------ */
/* Counting                                                            */

/* A thread's voluntary + involuntary context switches, and the latter. */
static uint64_t thread_csw(int tid, uint64_t *invol)
{
	char path[64], line[128];
	unsigned long long v, n = 0;
	FILE *f;

	*invol = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
			n = v;
		else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu",
				&v) == 1)
			*invol = v;
	}
	fclose(f);
	return n + *invol;
}

/* A snapshot: every thread by tid. */
struct idle_snap {
	unsigned int nr;
	struct {
		int tid;
		char comm[20];
		uint64_t csw, invol;
	} t[IDLE_THREADS];
};

static int snap_one(void *priv, int tid, const char *comm)
{
	struct idle_snap *s = priv;

	if (s->nr == IDLE_THREADS)
		return 0;
	s->t[s->nr].tid = tid;
	snprintf(s->t[s->nr].comm, sizeof(s->t[0].comm), "%s", comm);
	s->t[s->nr].csw = thread_csw(tid, &s->t[s->nr].invol);
	s->nr++;
	return 0;
}

static struct idle_thread *run_thread(struct idle_run *r, const char *comm)
{
	unsigned int i;

	for (i = 0; i < r->nr; i++)
		if (!strcmp(r->th[i].comm, comm))
			return &r->th[i];
	if (r->nr == IDLE_THREADS)
		return NULL;
	snprintf(r->th[r->nr].comm, sizeof(r->th[0].comm), "%s", comm);
	return &r->th[r->nr++];
}

/* The switches of the threads alive at both ends, by name. */
static void snap_diff(const struct idle_snap *a, const struct idle_snap *z,
		      struct idle_run *r)
{
	struct idle_thread *th;
	unsigned int i, k;

	for (i = 0; i < z->nr; i++) {
		for (k = 0; k < a->nr && a->t[k].tid != z->t[i].tid; k++)
			;
		th = run_thread(r, z->t[i].comm);
		if (!th)
			continue;
		th->nr++;
		th->csw += z->t[i].csw - (k < a->nr ? a->t[k].csw : 0);
		th->invol += z->t[i].invol - (k < a->nr ? a->t[k].invol : 0);
	}
}

/* writeback_pages_written lines stamped inside [t0, t1] (CLOCK_MONOTONIC,
 * the trace's clock). */
static uint64_t trace_passes(const char *path, uint64_t t0, uint64_t t1)
{
	char line[1024], *p;
	double ts;
	uint64_t n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, ": writeback_pages_written:");
		if (!p)
			continue;
		while (p > line && p[-1] != ' ')
			p--;
		ts = strtod(p, NULL) * 1e9;
		if (ts >= t0 && ts <= t1)
			n++;
	}
	fclose(f);
	return n;
}

/* ------------------------------------------------------------------ */
/* One window                                                          */

/* The window: sleep, or in "expiring" redirty a page once per interval. */
static int idle_window(struct idle_bench *b, enum idle_state st,
		       struct uf_file *f)
{
	unsigned int i, n = b->o.secs * 1000 / b->o.interval_ms;
	ssize_t w;

	if (st != S_EXPIRING) {
		bench_sleep_ms(b->o.secs * 1000);
		return 0;
	}
	for (i = 0; i < n && !bench_stop; i++) {
		w = uf_pwrite(f, b->buf, IDLE_PAGE, (i % 16) * IDLE_PAGE);
		if (w != (ssize_t)IDLE_PAGE)
			return w < 0 ? (int)w : -EIO;
		bench_sleep_ms(b->o.interval_ms);
	}
	return 0;
}

/* Bring a fresh file to the state, untimed. */
static int idle_prepare(struct idle_bench *b, enum idle_state st,
			struct uf_file *f)
{
	int err = bench_fill_file(f, 0, 1u << 20, b->buf);

	if (!err)
		err = uf_fsync(f);
	if (!err && st == S_DIRTY)
		err = bench_fill_file(f, 1u << 20, 1u << 20, b->buf);
	/* let what setting up woke go back to sleep, and the clean inode
	 * expire and leave b_dirty */
	bench_sleep_ms(3 * b->o.interval_ms + 100);
	return err;
}

static int idle_once(struct idle_bench *b, enum idle_state st,
		     const char *trace, struct idle_run *r)
{
	struct uf_cache_config cfg;
	struct idle_snap a = { 0 }, z = { 0 };
	struct uf_cache_stats cs0, cs1;
	struct uf_cache *cache;
	struct uf_file *f;
	struct uf_dev *dev;
	const char *what = "uf_cache_open";
	uint64_t t0, t1;
	int err, cerr;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 16384;
	cfg.dirty_writeback_centisecs = b->o.interval_ms / 10;
	/*
	 * dirty: nothing expires in the window; clean and expiring: after
	 * one interval (an fsynced inode stays on b_dirty, as in the kernel,
	 * until kupdate finds it expired and writes it)
	 */
	cfg.dirty_expire_centisecs = st != S_DIRTY ? b->o.interval_ms / 10 :
				     (b->o.secs + 60) * 100;
	cfg.trace_path = trace;
	err = uf_cache_open(&cfg, &cache);
	if (err)
		goto fail;
	snprintf(b->policy, sizeof(b->policy), "%s", uf_cache_policy(cache));
	what = "uf_dev_open";
	err = bench_dev_open(&b->cm.ro, cache, &b->cm.t, &dev);
	if (!err) {
		what = "uf_file_open";
		err = uf_file_open(dev, 1, 0, IDLE_FILE, NULL, NULL, &f);
	}
	if (!err) {
		what = "setting up the state";
		err = idle_prepare(b, st, f);
	}
	if (err)
		goto out;
	uf_cache_stats(cache, &cs0);
	bench_for_each_thread(snap_one, &a);
	t0 = uf_now_ns();
	what = "uf_pwrite in the window";
	err = idle_window(b, st, f);
	t1 = uf_now_ns();
	bench_for_each_thread(snap_one, &z);
	uf_cache_stats(cache, &cs1);
	r->secs = (t1 - t0) / 1e9;
	r->written = cs1.nr_written - cs0.nr_written;
	snap_diff(&a, &z, r);
out:
	cerr = uf_cache_close_discard(cache, UF_DISCARD_DIRTY);
	if (!err)
		r->passes = trace_passes(trace, t0, t1);
	if (!err && !cerr)
		return 0;
	err = err ? err : cerr;
fail:
	snprintf(b->cases[st].why, sizeof(b->cases[st].why), "%s: %s", what,
		 strerror(-err));
	return err;
}

static int idle_run_one(void *priv, unsigned int st, unsigned int rep)
{
	struct idle_bench *b = priv;
	struct idle_run *r = &b->runs[st][b->n[st]];
	char trace[300];
	int err;

	snprintf(trace, sizeof(trace), "%s/%s-%u.trace", b->tracedir,
		 idle_names[st], rep);
	memset(r, 0, sizeof(*r));
	err = idle_once(b, st, trace, r);
	unlink(trace);
	if (bench_stop)
		return 0;
	if (err) {
		fprintf(stderr, "  %s: %s\n", idle_names[st], b->cases[st].why);
		return b->n[st] ? err : BENCH_SKIP;
	}
	b->n[st]++;
	fprintf(stderr, "rep %u %-8s %.1f s, flusher passes %llu, pages written %lu\n",
		rep + 1, idle_names[st], r->secs,
		(unsigned long long)r->passes, r->written);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Report                                                              */

/*
 * Wakeups a thread named comm should have in a window of state st; -1:
 * not judged (the bench's own thread).  The I/O reaper wakes for each
 * completion: one write a pass in "expiring".  io_uring's kernel workers
 * (iou-wrk-*, made for requests the ring punts, such as the device flush
 * of an fsync) live in the process and count: they should sleep too.
 */
static double idle_expected(const struct idle_bench *b, enum idle_state st,
			    const char *comm, double secs)
{
	double per_interval = secs * 1000 / b->o.interval_ms;

	if (!strncmp(comm, "flush-", 6))
		return st == S_CLEAN ? 0 : per_interval;
	if (!strcmp(comm, "uf-timer"))
		return st == S_EXPIRING ? per_interval : 0;
	if (!strcmp(comm, "uf-uring") || !strcmp(comm, "uf-aio"))
		return st == S_EXPIRING ? per_interval : 0;
	if (strncmp(comm, "uf-", 3) && strcmp(comm, "kswapd") &&
	    strncmp(comm, "iou-", 4))
		return -1;
	return 0;
}

/* Every thread name seen in any run of st, in the first run's order. */
static unsigned int idle_names_of(const struct idle_bench *b,
				  enum idle_state st, const char **names)
{
	unsigned int nr = 0, i, k, rep;

	for (rep = 0; rep < b->n[st]; rep++) {
		const struct idle_run *r = &b->runs[st][rep];

		for (i = 0; i < r->nr; i++) {
			for (k = 0; k < nr && strcmp(names[k], r->th[i].comm); k++)
				;
			if (k == nr && nr < IDLE_THREADS)
				names[nr++] = r->th[i].comm;
		}
	}
	return nr;
}

/* A name's switches (or, with invol, the involuntary ones) per run. */
static void idle_gather(const struct idle_bench *b, enum idle_state st,
			const char *comm, bool invol, struct bench_samples *s)
{
	unsigned int rep, i;

	memset(s, 0, sizeof(*s));
	for (rep = 0; rep < b->n[st]; rep++) {
		const struct idle_run *r = &b->runs[st][rep];
		double v = 0;

		for (i = 0; i < r->nr; i++)
			if (!strcmp(r->th[i].comm, comm))
				v = (double)(invol ? r->th[i].invol :
					     r->th[i].csw);
		bench_samples_add(s, v);
	}
}

static const char *const idle_cols[] = {
	"state", "thread", ">expected", ">wakeups", ">min-max", ">per s",
	">involuntary", "",
};

static void idle_header(const void *priv)
{
	const struct idle_bench *b = priv;

	printf("idle: %u s windows, dirty_writeback_interval %u ms, %u rep(s) per state\n",
	       b->o.secs, b->o.interval_ms, b->cm.reps);
	printf("policy:  %s\n", b->policy);
}

static void idle_row(struct bench_table *t, const void *priv, unsigned int st)
{
	const struct idle_bench *b = priv;
	const char *names[IDLE_THREADS];
	struct bench_samples s, secs;
	struct bench_stats sst;
	unsigned int nr, i, rep;
	double exp, mid;
	int row;

	memset(&secs, 0, sizeof(secs));
	for (rep = 0; rep < b->n[st]; rep++)
		bench_samples_add(&secs, b->runs[st][rep].secs);
	nr = idle_names_of(b, st, names);
	if (!nr) {
		row = bench_table_row(t);
		if (row >= 0) {
			bench_table_set(t, row, 0, "%s", idle_names[st]);
			bench_table_set(t, row, 1, "skipped");
		}
		return;
	}
	for (i = 0; i < nr; i++) {
		row = bench_table_row(t);
		if (row < 0)
			return;
		idle_gather(b, st, names[i], true, &s);
		bench_table_set(t, row, 6, "%.0f", bench_samples_median(&s));
		idle_gather(b, st, names[i], false, &s);
		bench_samples_stats(&s, &sst);
		mid = sst.median;
		exp = idle_expected(b, st, names[i],
				    bench_samples_median(&secs));
		bench_table_set(t, row, 0, "%s", i ? "" : idle_names[st]);
		bench_table_set(t, row, 1, "%s", names[i]);
		if (exp >= 0)
			bench_table_set(t, row, 2, "%.0f", exp);
		else
			bench_table_set(t, row, 2, "(bench)");
		bench_table_set(t, row, 3, "%.0f", mid);
		bench_table_set(t, row, 4, "%.0f-%.0f", sst.min, sst.max);
		bench_table_set(t, row, 5, "%.2f",
				mid / bench_samples_median(&secs));
		/* a wakeup more or less is the window's edges */
		if (exp >= 0 && (mid > exp + 1 || mid + 1 < exp))
			bench_table_set(t, row, 7, "%s",
					mid > exp ? "WAKES" : "FEWER");
	}
	row = bench_table_row(t);
	if (row < 0)
		return;
	memset(&s, 0, sizeof(s));
	for (rep = 0; rep < b->n[st]; rep++)
		bench_samples_add(&s, (double)b->runs[st][rep].passes);
	bench_samples_stats(&s, &sst);
	exp = st == S_CLEAN ? 0 :
	      bench_samples_median(&secs) * 1000 / b->o.interval_ms;
	bench_table_set(t, row, 1, "flusher passes (trace)");
	bench_table_set(t, row, 2, "%.0f", exp);
	bench_table_set(t, row, 3, "%.0f", sst.median);
	bench_table_set(t, row, 4, "%.0f-%.0f", sst.min, sst.max);
	bench_table_set(t, row, 5, "%.2f",
			sst.median / bench_samples_median(&secs));
}

static void idle_notes(const void *priv)
{
	(void)priv;
	printf("\nwakeups: context switches (voluntary + involuntary) over the window, summed\n"
	       "over the threads of a name (involuntary: of those, preemptions); WAKES/FEWER:\n"
	       "more than one off what is expected.\n"
	       "flusher passes: writeback_pages_written events, one per pass of its loop.\n");
}

static void idle_json_config(struct bench_json *j, const void *priv)
{
	const struct idle_bench *b = priv;

	bench_json_u64(j, "window_secs", b->o.secs);
	bench_json_u64(j, "interval_ms", b->o.interval_ms);
	bench_json_str(j, "policy", b->policy);
}

static void idle_json_case(struct bench_json *j, const void *priv,
			   unsigned int st)
{
	const struct idle_bench *b = priv;
	const char *names[IDLE_THREADS];
	struct bench_samples s;
	unsigned int nr, i, rep;
	double secs = 0;

	bench_json_obj(j, NULL);
	bench_json_str(j, "state", idle_names[st]);
	bench_json_bool(j, "skipped", b->cases[st].skipped);
	memset(&s, 0, sizeof(s));
	for (rep = 0; rep < b->n[st]; rep++) {
		bench_samples_add(&s, (double)b->runs[st][rep].passes);
		secs = b->runs[st][rep].secs;
	}
	bench_json_samples(j, "flusher_passes", &s);
	bench_json_arr(j, "threads");
	nr = idle_names_of(b, st, names);
	for (i = 0; i < nr; i++) {
		bench_json_obj(j, NULL);
		bench_json_str(j, "name", names[i]);
		bench_json_num(j, "expected",
			       idle_expected(b, st, names[i], secs));
		idle_gather(b, st, names[i], false, &s);
		bench_json_samples(j, "wakeups", &s);
		idle_gather(b, st, names[i], true, &s);
		bench_json_samples(j, "involuntary", &s);
		bench_json_end(j);
	}
	bench_json_end(j);
	bench_json_end(j);
}

static const struct bench_report idle_report = BENCH_REPORT_OF(idle);

int bench_idle_main(int argc, char **argv)
{
	const char *dir = getenv("UFLUSH_TESTDIR");
	struct idle_bench *b = &idle;
	unsigned int st;
	int err = bench_opts_main(&bench_idle_cmdline, argc, argv);

	if (err >= 0)
		return err;
	if (b->o.interval_ms % 10) {
		bench_err("idle", "bad --interval %u (want a multiple of 10)",
			  b->o.interval_ms);
		return 2;
	}
	for (st = 0; st < NR_STATES; st++)
		b->cases[st].name = idle_names[st];
	if (bench_env_init(&b->cm.env, "idle", false))
		return 1;
	snprintf(b->tracedir, sizeof(b->tracedir), "%s/uflush-idle-XXXXXX",
		 dir ? dir : "/var/tmp");
	if (!mkdtemp(b->tracedir)) {
		bench_err("idle", "mkdtemp %s: %s", b->tracedir,
			  strerror(errno));
		return 1;
	}
	b->buf = bench_random_buffer(1u << 20);
	err = b->buf ? bench_target_open(&b->cm.t, "idle", b->cm.dev,
					 IDLE_FILE, b->cm.force) :
		       -ENOMEM;
	if (!err) {
		b->cm.t.range = IDLE_FILE;
		b->cm.t.force = b->cm.force;
		bench_env_print(&b->cm.env, NULL, false);
		bench_target_print(&b->cm.t, NULL);
		/* the states in order: each is a fresh cache anyway */
		err = bench_sched_run(&(struct bench_sched){
			.nr_cases = NR_STATES, .cases = b->cases,
			.reps = b->cm.reps, .run = idle_run_one, .priv = b,
		});
	}
	if (!err)	/* interrupted: the runs done so far */
		err = bench_report(&idle_report, &b->cm.env, &b->cm.t, b->cm.json, b,
				   NR_STATES);
	bench_target_close(&b->cm.t);
	rmdir(b->tracedir);
	free(b->buf);
	return bench_exit_code("idle", err);
}
