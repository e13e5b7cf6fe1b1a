// SPDX-License-Identifier: MIT
/*
 * bench/ab.c - `uflush-bench ab POLICY_A POLICY_B [CASES...]`: A/B testing
 * of flush policies.  Each case (bench/abcase.h) runs under both policies
 * on the same devices, A B A B, repeated; the table is the seeds': before,
 * the change, after, the case, with each side's spread and a '~' where the
 * change is inside the noise, and a TOTAL row.  Beside it, per case and
 * side: fsync latency and writer pause percentiles, flusher CPU, device
 * writes and their mean size; the JSON report records the device, engine,
 * kernel, resolved policies and uflush version with every result.
 *
 * A run: a cache of the case's size and dirty limits under one policy,
 * the devices (scratch loop devices, shaped for hdd/ssd, made once for all
 * cases and both sides), a thread per writer on its own file (round-robin
 * over the devices); it lasts the case's time or until the writers wrote
 * its amount; then the cache is closed (writing the rest back) so that
 * the device counters hold everything the run wrote.  A sim: case
 * (issue 19) runs the same on modelled devices made per run, inside a
 * deterministic world on the virtual clock (below, "Sim cases").
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"
#include "abcase.h"
#include "io/io.h"

#ifndef UF_BENCH_VERSION
#define UF_BENCH_VERSION "unknown"
#endif

#define AB_SIDES	3	/* A, B and the kernel baseline */
#define AB_K		2
#define SIDE(side)	("ABK"[side])
#define AB_LAT_SAMPLES	4096	/* per writer, reservoir-sampled */
#define AB_FSYNC_EVERY	16
#define AB_POLL_MS	20

struct ab_opts {
	unsigned int secs;
	unsigned int reps;
	uint64_t dev_size;
	const char *matrix;
	const char *json;
	const char *trace_dir;
	const char *plot_dir;
	struct bench_strv devs;		/* --dev, in the order given */
	bool force;
	bool list;
	bool kernel;
	bool sim;
	const char *sim_dev;		/* items after every sim device's spec */
	const char *sim_cpu;		/* the worlds' CPU cost overrides */
	const char *job;
};

/* What one run of a case under one policy measured. */
struct ab_run {
	double mbs;		/* bytes the writers wrote / elapsed */
	double fsync_p50, fsync_p99;	/* ms; NAN without fsyncs */
	double pause_p50, pause_p99, pause_max; /* ms per write call */
	double flusher_cpu;	/* s, all flusher threads */
	double dev_writes;	/* write requests the devices completed */
	double dev_write_kb;	/* their mean size */
	double written_mb;	/* pages written back during the run */
	double busy;		/* % of the window the devices were busy */
	double oom;		/* allocations failed (-ENOMEM) in the window */
	double pgscan;		/* pages reclaim scanned in the window */
	/* sim: cases: the run's time on its clock, the wall time, the hash */
	double virt_s, wall_s;
	uint64_t trace_hash;
	/* in the window, all devices: seed 000's decision points
	 * (uf_dev_stats wb_waits, requeue_io, redirty_tail) and seed 001's
	 * (bg_bdi_only) */
	double wb_waits, requeue_io, redirty_tail, bg_bdi_only;
};

#define NR_METRICS	13

struct ab_cinfo {
	struct ab_case c;
	char name[AB_NAME_LEN];
	unsigned int n[AB_SIDES];
	struct ab_run runs[AB_SIDES][BENCH_MAX_REPS];
};

struct ab_bench {
	struct ab_opts o;
	const char *spec[2];
	char policy[2][512];		/* resolved */
	struct bench_env env;
	unsigned int nr_devs;
	struct bench_target t[AB_MAX_DEVS];
	struct bench_reopen ro[AB_MAX_DEVS];
	void *buf;
	unsigned int nr;
	struct ab_cinfo ci[AB_MAX_CASES];
	unsigned int sides;		/* 2, or 3 with --kernel */
	bool sim;			/* every case is a sim: one */
	const struct ab_matrix *m;	/* --matrix, for the seed's figures */
	uint64_t wall0;			/* when the first run began */
	struct uf_sim_opts sim_costs;	/* --sim-cpu's, parsed once; 0: model's */
	struct bench_case cases[AB_SIDES * AB_MAX_CASES];
	unsigned int done, total;
};

static struct ab_opts ab_o;

static const struct bench_opt ab_opt_table[] = {
	BENCH_UINT("secs", "SEC", &ab_o.secs, 1, 3600, NULL,
		   "length of a case whose name says X; 5"),
	BENCH_OPT_REPS(&ab_o.reps, "repetitions of each case and side; 3 (sim: cases 1:\n"
		       "a world is exact, a rep draws other seeds)"),
	BENCH_STR("matrix", "NAME", &ab_o.matrix,
		  "run a built-in matrix (--list shows them); its policies\n"
		  "are used when none are given"),
	BENCH_SIZE("dev-size", &ab_o.dev_size, 64ull << 20, 64ull << 30,
		   1ull << 20, "each scratch device's size; 512M"),
	{ .name = "dev", .arg = "PATH", .type = BENCH_OPT_STRV,
	  .dest = &ab_o.devs,
	  .help = "use these block devices or files: THEIR DATA IS OVERWRITTEN;\n"
		  "repeat it or give PATH,PATH,... for a JBOD case's devices" },
	BENCH_OPT_FORCE(&ab_o.force),
	BENCH_STR("trace", "DIR", &ab_o.trace_dir,
		  "write each case's first run's tracepoints (ftrace text)\n"
		  "to DIR/<case#>-<A|B>.trace"),
	BENCH_STR("plots", "DIR", &ab_o.plot_dir,
		  "render each case's plots, A and B on the same axes, into\n"
		  "DIR/<case#>/ (uflush-bench plot; traces go to DIR unless\n"
		  "--trace)"),
	BENCH_FLAG("kernel", &ab_o.kernel,
		   "add the host kernel's page cache as a third side: the same\n"
		   "writers, buffered, on the same loop device, with the host's\n"
		   "vm.dirty_* set to the case's for the run and restored after\n"
		   "(unshaped devices only)"),
	BENCH_FLAG("sim", &ab_o.sim,
		   "modelled devices (io/sim.c, data discarded) for every case,\n"
		   "and --matrix's cases at the seed's own scale (its sim: ones)"),
	BENCH_STR("sim-dev", "ITEMS", &ab_o.sim_dev,
		  "key=value items appended to every sim device's spec (io/sim.h),\n"
		  "e.g. alloc=none or rpm=10000"),
	BENCH_STR("sim-cpu", "ITEMS", &ab_o.sim_cpu,
		  "the worlds' CPU cost model, ns: page_copy, page_op, request,\n"
		  "inode, page_scan (uf_sim_opts), e.g. page_scan=30"),
	BENCH_FLAG("list", &ab_o.list, "list the built-in matrices and exit"),
	BENCH_STR("job", "FILE", &ab_o.job,
		  "read devices, cases, options and the two policies from an\n"
		  "ini file in fio's style (bench/jobs/); options given here win"),
	BENCH_OPT_JSON(&ab_o.json),
	BENCH_OPT_END,
};

static int ab_rest;

const struct bench_cmdline bench_ab_cmdline = {
	.cmd = "ab",
	.about = "Arguments: POLICY_A POLICY_B (specs, as --policy elsewhere), then\n"
		 "CASE... (or --matrix NAME, which also gives the policies).\n"
		 "A word that parses as a case is a case, any other a policy\n"
		 "(so 'mainline,plugin=./x.so' is a policy).\n"
		 "Each case under both policies on the same devices, A B A B,\n"
		 "repeated; the seeds' table: before, change, after, case.\n"
		 "A case: [sim:][JBOD-<n>HDD-][thresh=<SIZE>/]<dev>-<w><kind>[+<w2><kind2>]-\n"
		 "<bs>-<c>p-<mem>-<limit>:<bg>-<len>,\n"
		 "e.g. thresh=100M/loop-10dd-4k-2p-1024M-100M:10-X;\n"
		 "dev loop|hdd|ssd, kind dd|fio|fsync|xfsdd, len X|<n>s|SIZE (README).\n"
		 "+<w2><kind2>: w2 writers of kind2 beside the first w (2dd+1fsync).\n"
		 "xfsdd: a dd whose inode each write dirties (I_DIRTY_SYNC) and whose\n"
		 "write_inode fails (-EAGAIN) while its writer is in a write call, as\n"
		 "seed 000's XFS under an ilock held across balance_dirty_pages.\n",
	.opts = ab_opt_table,
	.epilog = "A '~' after a change: inside the noise (the repetitions' ranges\n"
		  "overlap).  Devices: scratch loop devices unless --dev.\n"
		  "Environment: UFLUSH_TESTDIR = where the scratch files go.\n",
	.rest = &ab_rest,
	.args = "[POLICY_A POLICY_B] [CASE...]",
};

/* ------------------------------------------------------------------ */
/* Writers                                                             */

struct ab_lat {
	unsigned long n;
	unsigned int kept;
	double v[AB_LAT_SAMPLES];
};

struct ab_writer {
	struct bench_thread t;		/* first: the harness joins it */
	struct uf_file *f;
	enum ab_kind kind;
	uint64_t size, bs;
	const char *buf;
	const bool *stop;
	int fd;			/* kernel baseline: the device, buffered */
	uint64_t base;		/* kernel baseline: where the file starts */
	uint64_t seed;
	uint64_t bytes;		/* written so far (atomic) */
	struct ab_lat pause, fsync;
	int ilock;		/* xfsdd: inside a write call (atomic) */
};

static void lat_add(struct ab_lat *l, uint64_t *seed, double ms)
{
	uint64_t k;

	l->n++;
	if (l->kept < AB_LAT_SAMPLES) {
		l->v[l->kept++] = ms;
		return;
	}
	k = bench_xorshift64(seed) % l->n;
	if (k < AB_LAT_SAMPLES)
		l->v[k] = ms;
}

/* The page API's write path: fio's mmap-like writes, a page at a time. */
static int page_write(struct ab_writer *w, uint64_t off)
{
	struct uf_page *pg;
	uint64_t i;
	int err;

	for (i = 0; i < w->bs; i += 4096) {
		err = uf_page_get(w->f, (off + i) / 4096,
				  UF_PAGE_WRITE | UF_PAGE_NOREAD, &pg);
		if (err)
			return err;
		memcpy(uf_page_data(pg), w->buf + i, 4096);
		err = uf_page_set_dirty(pg);
		uf_page_put(pg);
		if (err)
			return err;
	}
	return 0;
}

static int io_ret(const struct ab_writer *w, ssize_t n)
{
	if (n == (ssize_t)w->bs)
		return 0;
	return n < 0 ? (w->fd >= 0 ? -errno : (int)n) : -EIO;
}

/* Through uflush, or (kernel baseline) through the host's page cache. */
static int do_write(struct ab_writer *w, uint64_t off)
{
	if (w->fd >= 0)
		return io_ret(w, pwrite(w->fd, w->buf, w->bs, w->base + off));
	if (w->kind == AB_FIO && !(w->bs % 4096))
		return page_write(w, off);
	return io_ret(w, uf_pwrite(w->f, w->buf, w->bs, off));
}

static int do_read(struct ab_writer *w, char *rbuf, uint64_t off)
{
	if (w->fd >= 0)
		return io_ret(w, pread(w->fd, rbuf, w->bs, w->base + off));
	return io_ret(w, uf_pread(w->f, rbuf, w->bs, off));
}

static int do_fsync(struct ab_writer *w)
{
	if (w->fd >= 0)
		return fsync(w->fd) ? -errno : 0;
	return uf_fsync(w->f);
}

/*
 * xfsdd: the write call holds the file's "ilock" throughout, the dirty
 * throttle's pauses included, and leaves the inode I_DIRTY_SYNC (the
 * i_size XFS updates after the data I/O).  Seed 000 L691-698: the dd
 * "stuck in balance_dirty_pages() and holds ilock", so that XFS refuses
 * the flusher's write_inode.
 */
static int xfsdd_write(struct ab_writer *w, uint64_t off)
{
	int err, derr;

	__atomic_store_n(&w->ilock, 1, __ATOMIC_RELEASE);
	err = do_write(w, off);
	derr = uf_file_mark_inode_dirty(w->f, UF_I_DIRTY_SYNC);
	__atomic_store_n(&w->ilock, 0, __ATOMIC_RELEASE);
	return err ? err : derr;
}

/* xfs_fs_write_inode() of 3.1 for WB_SYNC_NONE: the ilock held, EAGAIN;
 * for an integrity write it would wait for the lock: written. */
static int xfsdd_write_inode(struct uf_file *f, void *priv, int sync)
{
	const struct ab_writer *w = priv;

	(void)f;
	if (!sync && __atomic_load_n(&w->ilock, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	return 0;
}

static const struct uf_file_ops xfsdd_ops = {
	.write_inode = xfsdd_write_inode,
};

static bool kind_sequential(enum ab_kind k)
{
	return k == AB_DD || k == AB_XFSDD;
}

static int writer_step(struct ab_writer *w, uint64_t *off, unsigned long k,
		       char *rbuf)
{
	uint64_t slots = w->size / w->bs, t0;
	int err = 0;

	if (!kind_sequential(w->kind))
		*off = bench_xorshift64(&w->seed) % slots * w->bs;
	if (w->kind == AB_FIO && bench_xorshift64(&w->seed) % 10 < 3)
		return do_read(w, rbuf, *off);
	t0 = uf_now_ns();
	/* the kernel baseline's xfsdd is a dd: the host's fs has its own */
	if (w->kind == AB_XFSDD && w->fd < 0)
		err = xfsdd_write(w, *off);
	else
		err = do_write(w, *off);
	/* in a memory domain, -ENOMEM is the seed-003 OOM: counted, go on */
	if (err == -ENOMEM && w->fd < 0)
		return 0;
	if (err)
		return err;
	lat_add(&w->pause, &w->seed, (uf_now_ns() - t0) / 1e6);
	__atomic_add_fetch(&w->bytes, w->bs, __ATOMIC_RELAXED);
	if (kind_sequential(w->kind)) {
		*off += w->bs;
		if (*off + w->bs > w->size)
			*off = 0;
	}
	if (w->kind == AB_FSYNC && !(k % AB_FSYNC_EVERY)) {
		t0 = uf_now_ns();
		err = do_fsync(w);
		lat_add(&w->fsync, &w->seed, (uf_now_ns() - t0) / 1e6);
	}
	return err;
}

static void *writer_fn(void *arg)
{
	struct ab_writer *w = arg;
	char *rbuf = aligned_alloc(4096, (w->bs + 4095) / 4096 * 4096);
	uint64_t off = 0;
	unsigned long k;

	if (!rbuf) {
		w->t.err = -ENOMEM;
		return NULL;
	}
	for (k = 1; !__atomic_load_n(w->stop, __ATOMIC_RELAXED) && !bench_stop;
	     k++) {
		w->t.err = writer_step(w, &off, k, rbuf);
		if (w->t.err)
			break;
	}
	free(rbuf);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Sim cases: modelled devices, and the writers' world (issue 19)      */

/*
 * A sim: case runs on AB_SIM_DEV_SIZE modelled disks (io/sim.c's hdd or
 * ssd with its published defaults, no tuning: a 7200 rpm desktop disk of
 * the Hitachi Deskstar 7K1000.C class, 1 TB) that discard data, under a
 * cache whose frames hold none (frames="none").  The seeds' rows are
 * ext4's, so the disks place blocks as ext4's allocator does
 * (alloc=stream), and a desktop SATA disk writes through its cache, on
 * by default: the 7K1000.C's 32 MB (wcache_kb), destaged by shortest
 * positioning time first.  --sim-dev appends items (alloc=none,
 * wcache_kb=0: the bare model).  Each run makes its own devices, seeded
 * by the repetition, and removes them.
 *
 * The whole run (open, writers, window, close) is the first task of a
 * deterministic world (uf_sim_run, seeded by the repetition): the writers
 * are its tasks (uf_sim_spawn), uf_now_ns() and the window's sleeps are
 * virtual, and the world's trace hash identifies the run.  The world_*
 * helpers fall back to threads and the real clock outside a world.
 */
#define AB_SIM_DEV_SIZE		"1000g"
/* ext4's block placement, and an hdd's 32 MB write cache (io/sim.h) */
#define AB_SIM_HDD_MODEL	"alloc=stream,wcache_kb=32768"
#define AB_SIM_SSD_MODEL	"alloc=stream"

struct ab_world_res {
	uint64_t virtual_ns;		/* on the world's clock */
	uint64_t wall_ns;
	uint64_t trace_hash;		/* 0: no world (the real clock) */
};

/* --sim-cpu's keys, in uf_sim_opts' order */
static const char *const sim_cpu_keys[] = {
	"page_copy", "page_op", "request", "inode", "page_scan",
};
#define NR_SIM_CPU_KEYS	(sizeof(sim_cpu_keys) / sizeof(sim_cpu_keys[0]))

static uint64_t *sim_cpu_field(struct uf_sim_opts *o, unsigned int k)
{
	uint64_t *const f[] = {
		&o->ns_per_page_copy, &o->ns_per_page_op, &o->ns_per_request,
		&o->ns_per_inode, &o->ns_per_page_scan,
	};

	return f[k];
}

/* --sim-cpu ITEMS (key=ns,...) into *o; -EINVAL, said, if one is bad. */
static int sim_cpu_parse(const char *items, struct uf_sim_opts *o)
{
	char buf[256], *save = NULL, *it, *eq, *end;
	unsigned long long ns;
	unsigned int k;

	if (!items)
		return 0;
	if (snprintf(buf, sizeof(buf), "%s", items) >= (int)sizeof(buf))
		goto bad;
	for (it = strtok_r(buf, ",", &save); it;
	     it = strtok_r(NULL, ",", &save)) {
		eq = strchr(it, '=');
		if (!eq)
			goto bad;
		*eq = 0;
		errno = 0;
		ns = strtoull(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end || !ns || eq[1] == '-')
			goto bad;
		for (k = 0; k < NR_SIM_CPU_KEYS; k++)
			if (!strcmp(it, sim_cpu_keys[k]))
				break;
		if (k == NR_SIM_CPU_KEYS)
			goto bad;
		*sim_cpu_field(o, k) = ns;
	}
	return 0;
bad:
	buf[0] = 0;
	for (k = 0; k < NR_SIM_CPU_KEYS; k++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
			 k ? ", " : "", sim_cpu_keys[k]);
	bench_err("ab", "--sim-cpu %s: want key=ns[,key=ns...], ns > 0, keys %s",
		  items, buf);
	return -EINVAL;
}

/* Run fn(arg) as the first task of a world seeded with seed, its CPU
 * costs those of *costs. */
static int world_run(uint64_t seed, const struct uf_sim_opts *costs,
		     int (*fn)(void *), void *arg, struct ab_world_res *res)
{
	struct uf_sim_opts o = *costs;
	struct uf_sim_result r;
	uint64_t t0 = uf_now_ns();
	int ret;

	o.seed = seed;
	memset(&r, 0, sizeof(r));
	ret = uf_sim_run(&o, fn, arg, &r);
	res->wall_ns = uf_now_ns() - t0;
	res->virtual_ns = r.virtual_ns;
	res->trace_hash = r.trace_hash;
	return ret ? ret : r.main_ret;
}

/* A case's window polls on the world's clock. */
static void world_sleep_ms(unsigned int ms)
{
	if (uf_sim_active())
		uf_sim_sleep_ns(ms * 1000000ull);
	else
		bench_sleep_ms(ms);
}

/* What the world's clock is, for the report. */
static const char *ab_world_clock(void)
{
	return "virtual (uf_sim_run: one task at a time, seeded by the rep)";
}

static void sim_dev_name(char *buf, size_t len, unsigned int i)
{
	snprintf(buf, len, "ab-sim-%d-%u", (int)getpid(), i);
}

/* A sim device's spec: the kind's model, then --sim-dev's items. */
static void sim_dev_spec(char *buf, size_t len, bool hdd, unsigned int seed,
			 const char *extra)
{
	snprintf(buf, len, "%s,size=%s,%s,keep_data=0,seed=%u%s%s",
		 hdd ? "hdd" : "ssd", AB_SIM_DEV_SIZE,
		 hdd ? AB_SIM_HDD_MODEL : AB_SIM_SSD_MODEL, seed,
		 extra ? "," : "", extra ? extra : "");
}

/* --sim-dev's items on a kind of device, before any run (io/sim.c logs
 * why). */
static int sim_dev_check(const char *extra, bool hdd)
{
	char name[48], spec[512];
	struct uf_sim *sim;
	int err;

	sim_dev_name(name, sizeof(name), AB_MAX_DEVS);
	sim_dev_spec(spec, sizeof(spec), hdd, 1, extra);
	err = uf_sim_create(name, spec, &sim);
	if (err) {
		bench_err("ab", "--sim-dev %s: %s (spec %s)", extra,
			  strerror(-err), spec);
		return err;
	}
	uf_sim_destroy(sim);
	return 0;
}

static int sim_devs_create(const struct ab_case *c, unsigned int rep,
			   const char *extra, struct uf_sim **sims, char *why,
			   size_t len)
{
	char name[48], spec[512];
	unsigned int i;
	int err;

	for (i = 0; i < ab_case_devs(c); i++) {
		sim_dev_name(name, sizeof(name), i);
		sim_dev_spec(spec, sizeof(spec), c->dev == AB_DEV_HDD,
			     1 + rep * AB_MAX_DEVS + i, extra);
		err = uf_sim_create(name, spec, &sims[i]);
		if (err) {
			snprintf(why, len, "uf_sim_create(%s, %s): %s", name,
				 spec, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Write requests the models completed, and their 512-byte sectors. */
static void sim_devs_counters(struct uf_sim **sims, unsigned int n,
			      uint64_t *ios, uint64_t *sectors)
{
	struct uf_sim_stats st;
	unsigned int i;

	*ios = *sectors = 0;
	for (i = 0; i < n; i++)
		if (sims[i] && !uf_sim_get_stats(sims[i], &st)) {
			*ios += st.writes;
			*sectors += st.write_bytes / 512;
		}
}

static void sim_devs_destroy(struct uf_sim **sims, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (sims[i])
			uf_sim_destroy(sims[i]);
}

/* ------------------------------------------------------------------ */
/* One run                                                             */

struct ab_state {
	struct uf_cache *cache;
	struct uf_dev *dev[AB_MAX_DEVS];
	struct ab_writer *w;
	unsigned int nr_writers;
	bool stop;
	cpu_set_t old_cpus;
	bool pinned;
	struct uf_sim *sims[AB_MAX_DEVS];	/* a sim: case's devices */
	struct uf_sim_task **tasks;	/* in a world: the writers' tasks */
};

/* The case's CPUs: the first c of those we may run on; threads inherit. */
static void pin_cpus(struct ab_state *s, unsigned int c)
{
	cpu_set_t set;
	unsigned int i, got = 0;

	if (sched_getaffinity(0, sizeof(s->old_cpus), &s->old_cpus))
		return;
	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE && got < c; i++)
		if (CPU_ISSET(i, &s->old_cpus)) {
			CPU_SET(i, &set);
			got++;
		}
	s->pinned = !sched_setaffinity(0, sizeof(set), &set);
}

static void trace_path(const struct ab_bench *b, unsigned int ci,
		       unsigned int side, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%u-%c.trace", b->o.trace_dir, ci + 1,
		 side ? 'B' : 'A');
}

static int open_cache(struct ab_bench *b, const struct ab_case *c,
		      unsigned int side, bool trace, unsigned int ci,
		      struct ab_state *s, char *why, size_t len)
{
	struct uf_cache_config cfg;
	char tp[512];
	int err;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = c->mem / 4096;
	cfg.mem_limit_pages = c->memcg / 4096;
	cfg.policy = b->spec[side];
	if (c->limit_bytes)
		cfg.dirty_bytes = c->limit;
	else
		cfg.dirty_ratio = (unsigned int)c->limit;
	cfg.dirty_background_ratio = c->bg_ratio;
	if (c->sim)	/* the devices discard data: frames need hold none */
		cfg.frames = "none";
	if (trace && b->o.trace_dir) {
		trace_path(b, ci, side, tp, sizeof(tp));
		unlink(tp);	/* the library appends */
		cfg.trace_path = tp;
	}
	err = uf_cache_open(&cfg, &s->cache);
	if (err) {
		snprintf(why, len, "uf_cache_open(%s): %s", b->spec[side],
			 strerror(-err));
		return err;
	}
	snprintf(b->policy[side], sizeof(b->policy[0]), "%s",
		 uf_cache_policy(s->cache));
	return 0;
}

static void shape_targets(struct ab_bench *b, const struct ab_case *c)
{
	unsigned int i;

	for (i = 0; i < b->nr_devs; i++) {
		memset(&b->t[i].shape, 0, sizeof(b->t[i].shape));
		b->t[i].shaped = c->dev != AB_DEV_LOOP;
		b->t[i].shape.bw_bytes_per_sec =
			c->dev == AB_DEV_HDD ? BENCH_HDD_BW : BENCH_SSD_BW;
		b->t[i].shape.latency_us = c->dev == AB_DEV_HDD ?
			BENCH_HDD_LAT_US : BENCH_SSD_LAT_US;
	}
}

/* Writer i of the case, on a file of fsize bytes; through uflush. */
static struct ab_writer *writer_init(const struct ab_bench *b,
				     const struct ab_case *c,
				     struct ab_state *s, unsigned int i,
				     uint64_t fsize)
{
	struct ab_writer *w = &s->w[i];

	w->kind = ab_case_kind(c, i);
	w->size = fsize;
	w->bs = c->bs;
	w->buf = b->buf;
	w->stop = &s->stop;
	w->seed = 0x9e3779b97f4a7c15ull * (i + 1);
	w->fd = -1;
	return w;
}

/* The smallest of the first nd devices (--dev ones may differ). */
static uint64_t min_range(const struct ab_bench *b, unsigned int nd)
{
	uint64_t r = b->t[0].range;
	unsigned int i;

	if (b->sim)
		bench_parse_size(AB_SIM_DEV_SIZE, &r);
	for (i = 1; !b->sim && i < nd; i++)
		if (b->t[i].range < r)
			r = b->t[i].range;
	return r;
}

/* bench_spread_file()'s file, with xfsdd's write_inode. */
static int xfsdd_open(struct uf_dev *const *dev, unsigned int nd,
		      unsigned int i, uint64_t fsize, struct ab_writer *w,
		      char *why, size_t len)
{
	int err = uf_file_open(dev[i % nd], i + 1, (uint64_t)(i / nd) * fsize,
			       fsize, &xfsdd_ops, w, &w->f);

	if (err)
		snprintf(why, len, "uf_file_open: %s", strerror(-err));
	return err;
}

static int open_files(struct ab_bench *b, const struct ab_case *c,
		      struct ab_state *s, char *why, size_t len)
{
	unsigned int i, nd = ab_case_devs(c);
	unsigned int per_dev = (c->writers + nd - 1) / nd;
	uint64_t fsize, unit = c->bs > 4096 ? c->bs : 4096;
	int err;

	fsize = min_range(b, nd) / per_dev / unit * unit;
	if (fsize < unit) {
		snprintf(why, len, "%u writers of %llu-byte writes do not fit in %llu bytes",
			 per_dev, (unsigned long long)c->bs,
			 (unsigned long long)min_range(b, nd));
		return -ENOSPC;
	}
	for (i = 0; i < c->writers; i++) {
		struct ab_writer *w = writer_init(b, c, s, i, fsize);

		if (w->kind == AB_XFSDD)
			err = xfsdd_open(s->dev, nd, i, fsize, w, why, len);
		else
			err = bench_spread_file(s->dev, nd, i, fsize, &w->f,
						why, len);
		if (err)
			return err;
	}
	return 0;
}

static int ab_open(struct ab_bench *b, const struct ab_case *c,
		   unsigned int side, bool trace, unsigned int ci,
		   struct ab_state *s, char *why, size_t len)
{
	unsigned int i;
	int err;

	err = open_cache(b, c, side, trace, ci, s, why, len);
	if (err)
		return err;
	if (c->sim) {
		struct uf_dev_config dcfg = { .engine = "sim" };
		char name[48];

		for (i = 0; i < ab_case_devs(c); i++) {
			sim_dev_name(name, sizeof(name), i);
			err = uf_dev_open(s->cache, name, &dcfg, &s->dev[i]);
			if (err) {
				snprintf(why, len, "uf_dev_open %s: %s", name,
					 strerror(-err));
				return err;
			}
		}
		return open_files(b, c, s, why, len);
	}
	shape_targets(b, c);
	for (i = 0; i < ab_case_devs(c); i++) {
		err = bench_dev_open(&b->ro[i], s->cache, &b->t[i], &s->dev[i]);
		if (err) {
			snprintf(why, len, "uf_dev_open %s: %s", b->t[i].path,
				 strerror(-err));
			return err;
		}
	}
	return open_files(b, c, s, why, len);
}

static uint64_t writers_bytes(const struct ab_state *s)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < s->nr_writers; i++)
		sum += __atomic_load_n(&s->w[i].bytes, __ATOMIC_RELAXED);
	return sum;
}

/* Until the case's time is up or its amount is written. */
static double ab_window(const struct ab_bench *b, const struct ab_case *c,
			struct ab_state *s)
{
	uint64_t t0 = uf_now_ns(), secs = c->secs ? c->secs : b->o.secs;

	while (!bench_stop) {
		world_sleep_ms(AB_POLL_MS);
		if (c->amount ? writers_bytes(s) >= c->amount :
				uf_now_ns() - t0 >= secs * 1000000000ull)
			break;
	}
	return (uf_now_ns() - t0) / 1e9;
}

static int flusher_cpu_fn(void *priv, int tid, const char *comm)
{
	char path[64];
	unsigned long ut, st;
	FILE *f;
	int n;

	if (strncmp(comm, "flush-", 6))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* after "(comm) ": state, then fields 4..13; utime, stime are 14, 15 */
	n = fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
		   &ut, &st);
	fclose(f);
	if (n == 2)
		*(double *)priv += (double)(ut + st) / sysconf(_SC_CLK_TCK);
	return 0;
}

static void lat_merge(const struct ab_state *s, bool fsync, double *p50,
		      double *p99, double *max)
{
	unsigned int i, k, n = 0;
	double *v;

	*p50 = *p99 = NAN;
	if (max)
		*max = NAN;
	for (i = 0; i < s->nr_writers; i++)
		n += fsync ? s->w[i].fsync.kept : s->w[i].pause.kept;
	v = n ? malloc(n * sizeof(*v)) : NULL;
	if (!v)
		return;
	n = 0;
	for (i = 0; i < s->nr_writers; i++) {
		const struct ab_lat *l = fsync ? &s->w[i].fsync : &s->w[i].pause;

		for (k = 0; k < l->kept; k++)
			v[n++] = l->v[k];
	}
	*p50 = bench_quantile(v, n, 0.5);
	*p99 = bench_quantile(v, n, 0.99);
	if (max) {
		*max = v[0];
		for (k = 1; k < n; k++)
			if (v[k] > *max)
				*max = v[k];
	}
	free(v);
}

/* The devices' sysfs counters; false if one has none (a file). */
static bool dev_counters(const struct ab_bench *b, unsigned int nd,
			 uint64_t *ios, uint64_t *sectors)
{
	uint64_t i1, s1;
	unsigned int i;
	bool all = true;

	*ios = *sectors = 0;
	if (b->sim)
		return false;
	for (i = 0; i < nd; i++)
		if (bench_target_counters(&b->t[i], &i1, &s1)) {
			*ios += i1;
			*sectors += s1;
		} else {
			all = false;
		}
	return all;
}

/*
 * Where a target has no sysfs counters (a file): everything written back
 * now (uf_sync), so that uflush's own counts of the write requests it
 * completed hold the run's, as the closing writeback would add them to
 * a block device's.  Fresh devices in each run: they count from 0.
 */
static void lib_counters(const struct ab_case *c, const struct ab_state *s,
			 uint64_t *ios, uint64_t *sectors)
{
	struct uf_dev_stats st;
	unsigned int i;

	*ios = *sectors = 0;
	if (!s->cache)
		return;
	uf_sync(s->cache);
	for (i = 0; i < ab_case_devs(c); i++)
		if (s->dev[i] && !uf_dev_stats(s->dev[i], &st)) {
			*ios += st.write_ios;
			*sectors += st.write_bytes / 512;
		}
}

static int stop_writers(struct ab_state *s, int err, char *why, size_t len)
{
	return bench_threads_stop(&s->stop, s->w, sizeof(*s->w), s->nr_writers,
				  err, "a writer", why, len);
}

/* A writer as a world's task: writer_fn's loop, its error returned. */
static int writer_task(void *arg)
{
	struct ab_writer *w = arg;

	writer_fn(w);
	return w->t.err;
}

/* The writers: threads, or a world's tasks (uf_sim_spawn) in one. */
static int world_writers_start(struct ab_state *s, unsigned int n)
{
	char name[16];
	unsigned int i;
	int err;

	if (!uf_sim_active())
		return bench_threads_start(s->w, sizeof(*s->w), n, writer_fn,
					   &s->nr_writers);
	s->tasks = calloc(n, sizeof(*s->tasks));
	if (!s->tasks)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "dd-%u", i);
		err = uf_sim_spawn(name, writer_task, &s->w[i], &s->tasks[i]);
		if (err)
			return err;
		s->nr_writers++;
	}
	return 0;
}

static int world_writers_stop(struct ab_state *s, int err, char *why,
			      size_t len)
{
	unsigned int i;
	int ret;

	if (!s->tasks)
		return stop_writers(s, err, why, len);
	__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < s->nr_writers; i++) {
		if (uf_sim_join(s->tasks[i], &ret))
			ret = -ECHILD;
		if (ret && !err) {
			err = ret;
			snprintf(why, len, "a writer: %s", strerror(-err));
		}
	}
	free(s->tasks);
	s->tasks = NULL;
	return err;
}

/* Busy time of the case's devices (the library's io_ticks), ms summed. */
/* The devices' busy time (ms) and decision counts, summed. */
struct ab_devsum {
	double busy_ms, wb_waits, requeue_io, redirty_tail, bg_bdi_only;
};

static void dev_sum(const struct ab_case *c, const struct ab_state *s,
		    struct ab_devsum *d)
{
	struct uf_dev_stats st;
	unsigned int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < ab_case_devs(c); i++) {
		if (uf_dev_stats(s->dev[i], &st))
			continue;
		d->busy_ms += (double)st.io_ticks_ms;
		d->wb_waits += (double)st.wb_waits;
		d->requeue_io += (double)st.requeue_io;
		d->redirty_tail += (double)st.redirty_tail;
		d->bg_bdi_only += (double)st.bg_bdi_only;
	}
}

static int ab_measure(struct ab_bench *b, const struct ab_case *c,
		      struct ab_state *s, struct ab_run *r)
{
	struct uf_cache_stats c0, c1;
	struct ab_devsum d0, d1;
	double secs;

	dev_sum(c, s, &d0);
	uf_cache_stats(s->cache, &c0);
	secs = ab_window(b, c, s);
	dev_sum(c, s, &d1);
	r->busy = (d1.busy_ms - d0.busy_ms) / 10 / secs / ab_case_devs(c);
	r->wb_waits = d1.wb_waits - d0.wb_waits;
	r->requeue_io = d1.requeue_io - d0.requeue_io;
	r->redirty_tail = d1.redirty_tail - d0.redirty_tail;
	r->bg_bdi_only = d1.bg_bdi_only - d0.bg_bdi_only;
	r->mbs = writers_bytes(s) / 1e6 / secs;
	uf_cache_stats(s->cache, &c1);
	r->written_mb = (double)(c1.nr_written - c0.nr_written) * 4096 / 1e6;
	r->oom = (double)(c1.nr_oom - c0.nr_oom);
	r->pgscan = (double)(c1.nr_scanned - c0.nr_scanned);
	r->flusher_cpu = 0;
	bench_for_each_thread(flusher_cpu_fn, &r->flusher_cpu);
	return 0;
}

/* One kind of the writers' samples, thinned to AB_LAT_SAMPLES in all. */
static void ab_lat_lines(FILE *f, const char *kind, const struct ab_state *s,
			 bool fsync)
{
	unsigned int i, k, n = 0, step;

	for (i = 0; i < s->nr_writers; i++)
		n += fsync ? s->w[i].fsync.kept : s->w[i].pause.kept;
	step = n / AB_LAT_SAMPLES + 1;
	for (i = 0; i < s->nr_writers; i++) {
		const struct ab_lat *l = fsync ? &s->w[i].fsync : &s->w[i].pause;

		for (k = 0; k < l->kept; k += step)
			fprintf(f, "%s %.4f\n", kind, l->v[k]);
	}
}

/*
 * Beside the traced run's trace, what its tracepoints lack for the plots
 * (bench/plot.c): the policy's name, and the fsync and whole write-call
 * latencies (ms) the table's percentiles come from, at most
 * AB_LAT_SAMPLES of each.  Best effort: the plots do without.
 */
static void ab_write_lat(const struct ab_bench *b, unsigned int ci,
			 unsigned int side, const struct ab_state *s)
{
	char tp[512];
	size_t len;
	FILE *f;

	trace_path(b, ci, side, tp, sizeof(tp));
	len = strlen(tp);
	snprintf(tp + len - strlen("trace"), sizeof(tp) - len + 5, "lat");
	f = fopen(tp, "w");
	if (!f)
		return;
	fprintf(f, "# uflush-bench ab: the traced run's latencies, ms\n"
		   "policy %s\n", b->spec[side]);
	ab_lat_lines(f, "fsync", s, true);
	ab_lat_lines(f, "call", s, false);
	fclose(f);
}

/* One run's open, window and close: a sim: case's world runs it whole. */
struct ab_body {
	struct ab_bench *b;
	unsigned int ci, side;
	bool trace, counted;
	struct ab_state *s;
	struct ab_run *r;
	uint64_t i1, s1;
	char *why;
	size_t len;
};

static int ab_body_fn(void *arg)
{
	struct ab_body *x = arg;
	const struct ab_case *c = &x->b->ci[x->ci].c;
	struct ab_state *s = x->s;
	int err;

	err = ab_open(x->b, c, x->side, x->trace, x->ci, s, x->why, x->len);
	if (!err)
		err = world_writers_start(s, c->writers);
	if (!err)
		err = ab_measure(x->b, c, s, x->r);
	err = world_writers_stop(s, err, x->why, x->len);
	lat_merge(s, true, &x->r->fsync_p50, &x->r->fsync_p99, NULL);
	lat_merge(s, false, &x->r->pause_p50, &x->r->pause_p99,
		  &x->r->pause_max);
	if (x->trace && x->b->o.trace_dir)
		ab_write_lat(x->b, x->ci, x->side, s);
	if (!x->counted && !c->sim)
		lib_counters(c, s, &x->i1, &x->s1);
	return bench_cache_close(s->cache, err, x->why, x->len);
}

/* A sim: case: its devices, then the body in a world seeded by rep. */
static int ab_sim_body(struct ab_body *x, unsigned int rep)
{
	const struct ab_case *c = &x->b->ci[x->ci].c;
	struct ab_world_res res = { 0, 0, 0 };
	uint64_t w0 = uf_now_ns();
	int err;

	err = sim_devs_create(c, rep, x->b->o.sim_dev, x->s->sims, x->why,
			      x->len);
	if (!err)
		err = world_run(rep + 1, &x->b->sim_costs, ab_body_fn, x, &res);
	/* the devices' own counts: the closing writeback included */
	sim_devs_counters(x->s->sims, ab_case_devs(c), &x->i1, &x->s1);
	sim_devs_destroy(x->s->sims, ab_case_devs(c));
	x->r->virt_s = res.virtual_ns / 1e9;
	x->r->wall_s = (uf_now_ns() - w0) / 1e9;
	x->r->trace_hash = res.trace_hash;
	return err;
}

static int ab_once(struct ab_bench *b, unsigned int ci, unsigned int side,
		   unsigned int rep, struct ab_run *r, char *why, size_t len)
{
	const struct ab_case *c = &b->ci[ci].c;
	struct ab_state *s = calloc(1, sizeof(*s));
	struct ab_body x = {
		.b = b, .ci = ci, .side = side, .trace = rep == 0, .s = s,
		.r = r, .why = why, .len = len,
	};
	uint64_t i0 = 0, s0 = 0;
	int err;

	if (!s)
		return -ENOMEM;
	s->w = calloc(c->writers, sizeof(*s->w));
	if (!s->w) {
		free(s);
		return -ENOMEM;
	}
	x.counted = !c->sim && dev_counters(b, ab_case_devs(c), &i0, &s0);
	if (c->sim) {
		err = ab_sim_body(&x, rep);
	} else {
		pin_cpus(s, c->cpus);
		err = ab_body_fn(&x);
		if (s->pinned)
			sched_setaffinity(0, sizeof(s->old_cpus),
					  &s->old_cpus);
	}
	if (x.counted)
		dev_counters(b, ab_case_devs(c), &x.i1, &x.s1);
	r->dev_writes = (double)(x.i1 - i0);
	r->dev_write_kb = x.i1 > i0 ? (double)(x.s1 - s0) / 2 / (x.i1 - i0) :
				      NAN;
	free(s->w);
	free(s);
	return err;
}

/* ------------------------------------------------------------------ */
/* The kernel baseline                                                 */

static const char *const vm_knobs[] = {
	"dirty_bytes", "dirty_ratio", "dirty_background_bytes",
	"dirty_background_ratio",
};
#define NR_VM_KNOBS	4

static int vm_rw(const char *knob, unsigned long *v, bool write)
{
	char path[96];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", knob);
	f = fopen(path, write ? "w" : "r");
	if (!f)
		return -errno;
	ok = write ? fprintf(f, "%lu\n", *v) > 0 : fscanf(f, "%lu", v) == 1;
	if (fclose(f) || !ok)
		return -EIO;
	return 0;
}

/* The case's limits into the host's vm.dirty_* (old: what to restore). */
static int vm_set(const struct ab_case *c, unsigned long *old)
{
	unsigned long v;
	unsigned int i;
	int err = 0;

	for (i = 0; i < NR_VM_KNOBS && !err; i++)
		err = vm_rw(vm_knobs[i], &old[i], false);
	if (err)
		return err;
	v = c->limit;	/* a ratio clears the bytes and back, as here */
	err = vm_rw(c->limit_bytes ? "dirty_bytes" : "dirty_ratio", &v, true);
	v = c->bg_ratio;
	if (!err)
		err = vm_rw("dirty_background_ratio", &v, true);
	return err;
}

/* Bytes or ratio, whichever was in force (the other reads 0). */
static void vm_restore(const unsigned long *old)
{
	unsigned long v;

	v = old[0] ? old[0] : old[1];
	vm_rw(old[0] ? "dirty_bytes" : "dirty_ratio", &v, true);
	v = old[2] ? old[2] : old[3];
	vm_rw(old[2] ? "dirty_background_bytes" : "dirty_background_ratio",
	      &v, true);
}

static int kern_files(struct ab_bench *b, const struct ab_case *c,
		      struct ab_state *s, int *fds, char *why, size_t len)
{
	unsigned int i, nd = ab_case_devs(c);
	unsigned int per_dev = (c->writers + nd - 1) / nd;
	uint64_t unit = c->bs > 4096 ? c->bs : 4096;
	uint64_t fsize = min_range(b, nd) / per_dev / unit * unit;

	for (i = 0; i < nd; i++) {
		fds[i] = open(b->t[i].path, O_RDWR | O_CLOEXEC);
		if (fds[i] < 0) {
			snprintf(why, len, "open %s: %s", b->t[i].path,
				 strerror(errno));
			return -errno;
		}
	}
	for (i = 0; i < c->writers; i++) {
		struct ab_writer *w = writer_init(b, c, s, i, fsize);

		w->fd = fds[i % nd];
		w->base = (uint64_t)(i / nd) * fsize;
	}
	return fsize ? 0 : -ENOSPC;
}

static int kern_run(struct ab_bench *b, const struct ab_case *c,
		    struct ab_state *s, int *fds, struct ab_run *r,
		    char *why, size_t len)
{
	unsigned int i, nd = ab_case_devs(c);
	int err;

	err = kern_files(b, c, s, fds, why, len);
	if (!err)
		err = bench_threads_start(s->w, sizeof(*s->w), c->writers,
					  writer_fn, &s->nr_writers);
	if (!err) {
		double secs = ab_window(b, c, s);

		r->mbs = writers_bytes(s) / 1e6 / secs;
	}
	err = stop_writers(s, err, why, len);
	/* the closing writeback, as uf_cache_close's */
	for (i = 0; i < nd; i++)
		if (fds[i] >= 0 && fsync(fds[i]) && !err) {
			err = -errno;
			snprintf(why, len, "fsync: %s", strerror(-err));
		}
	return err;
}

/*
 * The same writers through the host kernel's page cache: buffered I/O on
 * the same (unshaped) loop devices, fsync(2) for the fsync writers, with
 * vm.dirty_* set to the case's limits for the run.  The host's memory is
 * the host's, not the case's cache size.
 */
static int kern_once(struct ab_bench *b, unsigned int ci, struct ab_run *r,
		     char *why, size_t len)
{
	const struct ab_case *c = &b->ci[ci].c;
	unsigned long old[NR_VM_KNOBS];
	int fds[AB_MAX_DEVS];
	uint64_t i0, s0, i1, s1;
	struct ab_state *s;
	unsigned int i;
	bool counted;
	int err;

	if (c->dev != AB_DEV_LOOP) {
		snprintf(why, len, "the kernel baseline runs on unshaped devices only (this case: %s)",
			 ab_dev_names[c->dev]);
		return BENCH_SKIP;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->w = calloc(c->writers, sizeof(*s->w));
	if (!s || !s->w) {
		free(s);
		return -ENOMEM;
	}
	for (i = 0; i < AB_MAX_DEVS; i++)
		fds[i] = -1;
	err = vm_set(c, old);
	if (err) {
		snprintf(why, len, "setting vm.dirty_*: %s", strerror(-err));
		free(s->w);
		free(s);
		return BENCH_SKIP;
	}
	counted = dev_counters(b, ab_case_devs(c), &i0, &s0);
	pin_cpus(s, c->cpus);
	err = kern_run(b, c, s, fds, r, why, len);
	vm_restore(old);
	if (s->pinned)
		sched_setaffinity(0, sizeof(s->old_cpus), &s->old_cpus);
	lat_merge(s, true, &r->fsync_p50, &r->fsync_p99, NULL);
	lat_merge(s, false, &r->pause_p50, &r->pause_p99, &r->pause_max);
	for (i = 0; i < AB_MAX_DEVS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	dev_counters(b, ab_case_devs(c), &i1, &s1);
	r->dev_writes = counted ? (double)(i1 - i0) : NAN;
	r->dev_write_kb = counted && i1 > i0 ?
			  (double)(s1 - s0) / 2 / (i1 - i0) : NAN;
	r->flusher_cpu = r->written_mb = r->busy = r->oom = r->pgscan = NAN;
	free(s->w);
	free(s);
	return err;
}

static int ab_run_one(void *priv, unsigned int k, unsigned int rep)
{
	struct ab_bench *b = priv;
	unsigned int ci = k / b->sides, side = k % b->sides;
	struct ab_cinfo *info = &b->ci[ci];
	struct bench_case *bc = &b->cases[k];
	struct ab_run r;
	int err;

	memset(&r, 0, sizeof(r));
	if (side == AB_K)
		err = kern_once(b, ci, &r, bc->why, sizeof(bc->why));
	else
		err = ab_once(b, ci, side, rep, &r, bc->why, sizeof(bc->why));
	b->done++;
	if (bench_stop)
		return 0;
	if (err == BENCH_SKIP) {
		fprintf(stderr, "  K %s: %s\n", info->name, bc->why);
		return BENCH_SKIP;
	}
	if (err) {
		fprintf(stderr, "  %c %s: %s\n", SIDE(side), info->name,
			bc->why);
		return info->n[side] ? err : BENCH_SKIP;
	}
	info->runs[side][info->n[side]++] = r;
	fprintf(stderr, "[%u/%u] %c %s: %.1f MB/s, pause p99 %.1f ms, %.0f device writes",
		b->done, b->total, SIDE(side), info->name, r.mbs,
		r.pause_p99, r.dev_writes);
	if (info->c.sim)
		fprintf(stderr, "; %.1f s %s, %.1f s wall, hash %016llx",
			r.virt_s, r.trace_hash ? "virtual" : "(real clock)",
			r.wall_s, (unsigned long long)r.trace_hash);
	if (info->c.sim)
		fprintf(stderr, "; waits %.0f, requeue_io %.0f, redirty_tail %.0f, bdi-only bg %.0f",
			r.wb_waits, r.requeue_io, r.redirty_tail,
			r.bg_bdi_only);
	fputc('\n', stderr);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Report                                                              */

static void gather(const struct ab_cinfo *ci, unsigned int side, size_t off,
		   struct bench_samples *s)
{
	memset(s, 0, sizeof(*s));
	bench_samples_gather(s, ci->runs[side], ci->n[side],
			     sizeof(struct ab_run), off);
}

static void cmp_of(const struct ab_cinfo *ci, size_t off, struct ab_cmp *c)
{
	struct bench_samples a, b;

	gather(ci, 0, off, &a);
	gather(ci, 1, off, &b);
	ab_compare(&a, &b, c);
}

static const char *const ab_cols[] = {
	">before", ">+-%", ">change", ">after", ">+-%", "case",
};
static const char *const ab_cols_k[] = {
	">before", ">+-%", ">change", ">after", ">+-%", ">kernel", "case",
};

static void ab_header(const void *priv)
{
	const struct ab_bench *b = priv;
	unsigned int i;

	for (i = 1; i < b->nr_devs; i++)
		bench_target_print(&b->t[i], NULL);
	printf("uflush:  %s, engine %s\n", UF_BENCH_VERSION,
	       b->sim ? "sim" : "io_uring");
	printf("A:       %s\n         = %s\nB:       %s\n         = %s\n",
	       b->spec[0], b->policy[0], b->spec[1], b->policy[1]);
	printf("\nwriters' throughput, MB/s (median of %u reps; +-%%: half the min-max range):\n",
	       b->o.reps);
}

static void cell_spread(struct bench_table *t, int row, unsigned int col,
			double v)
{
	if (isnan(v))
		bench_table_set(t, row, col, "-");
	else
		bench_table_set(t, row, col, "%.1f%%", v);
}

/* The kernel's median MB/s (the TOTAL: only if every case has one). */
static void kern_cell(struct bench_table *t, int row, const struct ab_bench *b,
		      unsigned int i)
{
	struct bench_samples s;
	double sum = 0;
	unsigned int k;

	for (k = i == b->nr ? 0 : i; k < (i == b->nr ? b->nr : i + 1); k++) {
		gather(&b->ci[k], AB_K, offsetof(struct ab_run, mbs), &s);
		if (!s.n) {
			bench_table_set(t, row, 5, "-");
			return;
		}
		sum += bench_samples_median(&s);
	}
	bench_table_set(t, row, 5, "%.1f", sum);
}

static void ab_row(struct bench_table *t, const void *priv, unsigned int i)
{
	const struct ab_bench *b = priv;
	struct ab_cmp c, rows[AB_MAX_CASES];
	char ch[32];
	unsigned int k;
	int row = bench_table_row(t);

	if (row < 0)
		return;
	if (i == b->nr) {
		for (k = 0; k < b->nr; k++)
			cmp_of(&b->ci[k], offsetof(struct ab_run, mbs),
			       &rows[k]);
		ab_compare_total(rows, b->nr, &c);
	} else {
		cmp_of(&b->ci[i], offsetof(struct ab_run, mbs), &c);
	}
	bench_table_set(t, row, 0, "%.1f", c.a);
	cell_spread(t, row, 1, c.spread_a);
	ab_fmt_change(ch, sizeof(ch), &c);
	bench_table_set(t, row, 2, "%s", ch);
	bench_table_set(t, row, 3, "%.1f", c.b);
	cell_spread(t, row, 4, c.spread_b);
	if (b->sides == AB_SIDES)
		kern_cell(t, row, b, i);
	bench_table_set(t, row, b->sides == AB_SIDES ? 6 : 5, "%s",
			i == b->nr ? "TOTAL" : b->ci[i].name);
}

static const char *const detail_cols[] = {
	"case", "side", ">fsync p50", ">fsync p99", ">pause p50", ">pause p99",
	">pause max", ">flusher s", ">dev writes", ">mean KB", ">written MB",
	">busy%", ">oom", ">pgscan",
};

static void detail_cell(struct bench_table *t, int row, unsigned int col,
			const struct ab_cinfo *ci, unsigned int side,
			size_t off, const char *fmt)
{
	struct bench_samples s;
	double v;

	gather(ci, side, off, &s);
	v = bench_samples_median(&s);
	if (!s.n || isnan(v))
		bench_table_set(t, row, col, "-");
	else
		bench_table_set(t, row, col, fmt, v);
}

static const char *const sim_cols[] = {
	"case", "side", ">virtual s", ">wall s", "trace hash (rep 1)",
	">waits", ">requeue_io", ">redirty_tail", ">bdi-only bg",
};

/* The sim table's decision counts, medians of the reps. */
static void sim_count_cells(struct bench_table *t, int row,
			    const struct ab_cinfo *ci, unsigned int side)
{
	static const size_t offs[] = {
		offsetof(struct ab_run, wb_waits),
		offsetof(struct ab_run, requeue_io),
		offsetof(struct ab_run, redirty_tail),
		offsetof(struct ab_run, bg_bdi_only),
	};
	unsigned int k;

	for (k = 0; k < sizeof(offs) / sizeof(offs[0]); k++)
		detail_cell(t, row, 5 + k, ci, side, offs[k], "%.0f");
}

/* The seed's figure as its table prints it; "-" where it has none. */
static void seed_cell(struct bench_table *t, int row, unsigned int col,
		      double v, bool pct)
{
	if (isnan(v))
		bench_table_set(t, row, col, "-");
	else if (pct)
		bench_table_set(t, row, col, "%+.1f%%", v);
	else
		bench_table_set(t, row, col, "%.10g", v);
}

static const char *const seed_cols[] = {
	">A MB/s", ">change", ">B MB/s", ">seed before", ">seed change",
	">seed after", "sign", "case / seed's case",
};

static const char *sign_word(double ours, double seed, bool noise)
{
	if (isnan(ours) || isnan(seed))
		return "-";
	if (fabs(ours) < 0.05)		/* prints as +-0.0%: no sign */
		return "none";
	if ((ours > 0) == (seed > 0))
		return noise ? "same ~" : "same";
	return noise ? "OPPOSITE ~" : "OPPOSITE";
}

/* --matrix NAME --sim: each row beside the seed's own figure. */
static void ab_seed_table(const struct ab_bench *b)
{
	struct bench_table *t = calloc(1, sizeof(*t));
	const struct ab_seed_row *sr;
	struct ab_cmp c;
	char ch[32];
	unsigned int i;
	int row;

	if (!t)
		return;
	bench_table_init(t, seed_cols, sizeof(seed_cols) / sizeof(seed_cols[0]));
	for (i = 0; i < b->nr; i++) {
		sr = &b->m->seed_rows[i];
		cmp_of(&b->ci[i], offsetof(struct ab_run, mbs), &c);
		row = bench_table_row(t);
		if (row < 0)
			break;
		bench_table_set(t, row, 0, "%.1f", c.a);
		ab_fmt_change(ch, sizeof(ch), &c);
		bench_table_set(t, row, 1, "%s", ch);
		bench_table_set(t, row, 2, "%.1f", c.b);
		seed_cell(t, row, 3, sr->before, false);
		seed_cell(t, row, 4, sr->change, true);
		seed_cell(t, row, 5, sr->after, false);
		bench_table_set(t, row, 6, "%s",
				sign_word(c.change, sr->change, c.noise));
		bench_table_set(t, row, 7, "%s", b->ci[i].name);
		row = bench_table_row(t);
		if (row < 0)
			break;
		bench_table_set(t, row, 7, "  %s%s%s%s", sr->name,
				sr->note ? " (" : "", sr->note ? sr->note : "",
				sr->note ? ")" : "");
	}
	printf("\nbeside the seed (%s):\n  %s\n  the seed's figures: %s; ours: the writers' MB/s\n\n",
	       b->m->name, b->m->seed_source, b->m->seed_metric);
	bench_table_print(t, stdout);
	printf("\nsign: our change has the seed's sign (same), the other (OPPOSITE) or none\n"
	       "(under 0.05%%); '~': ours is inside the noise.  Sizes: the README's\n"
	       "closing note on --sim compares them.\n");
	free(t);
}

/* sim: cases: each run's clock, the wall time it took and its hash. */
static void ab_sim_notes(const struct ab_bench *b)
{
	struct bench_table *t = calloc(1, sizeof(*t));
	struct bench_samples sm;
	unsigned int i, side;
	int row;

	if (!t)
		return;
	bench_table_init(t, sim_cols, sizeof(sim_cols) / sizeof(sim_cols[0]));
	for (i = 0; i < b->nr; i++)
		for (side = 0; side < 2; side++) {
			const struct ab_cinfo *ci = &b->ci[i];

			row = bench_table_row(t);
			if (row < 0)
				break;
			bench_table_set(t, row, 0, "%s", side ? "" : ci->name);
			bench_table_set(t, row, 1, "%c", SIDE(side));
			gather(ci, side, offsetof(struct ab_run, virt_s), &sm);
			bench_table_set(t, row, 2, "%.1f", bench_samples_median(&sm));
			gather(ci, side, offsetof(struct ab_run, wall_s), &sm);
			bench_table_set(t, row, 3, "%.1f", bench_samples_median(&sm));
			if (ci->n[side])
				bench_table_set(t, row, 4, "%016llx",
						(unsigned long long)ci->runs[side][0].trace_hash);
			else
				bench_table_set(t, row, 4, "-");
			sim_count_cells(t, row, ci, side);
		}
	printf("\nsim: modelled devices (%s); clock: %s; CPU costs: %s.  Per case and side, medians:\n\n",
	       b->t[0].desc, ab_world_clock(),
	       b->o.sim_cpu ? b->o.sim_cpu : "the model's (uf_sim_opts)");
	bench_table_print(t, stdout);
	printf("\nwaits: wb_writeback's no-progress waits (writeback_wait); requeue_io,\n"
	       "redirty_tail: the flusher's moves of an inode to b_more_io and to b_dirty\n"
	       "(seed 000's decision points); bdi-only bg: over_bground_thresh() calls\n"
	       "where a device's own background test was over and the global one not\n"
	       "(seed 001's decision point: bgthresh=bdi goes on there, global stops;\n"
	       "counted under both), in the window.\n");
	printf("\nwall time of the whole run: %.1f s\n",
	       (uf_now_ns() - b->wall0) / 1e9);
	free(t);
	if (b->m && b->o.sim && b->m->seed_rows)
		ab_seed_table(b);
}

static void ab_notes(const void *priv)
{
	static const size_t offs[] = {
		offsetof(struct ab_run, fsync_p50),
		offsetof(struct ab_run, fsync_p99),
		offsetof(struct ab_run, pause_p50),
		offsetof(struct ab_run, pause_p99),
		offsetof(struct ab_run, pause_max),
		offsetof(struct ab_run, flusher_cpu),
		offsetof(struct ab_run, dev_writes),
		offsetof(struct ab_run, dev_write_kb),
		offsetof(struct ab_run, written_mb),
		offsetof(struct ab_run, busy),
		offsetof(struct ab_run, oom),
		offsetof(struct ab_run, pgscan),
	};
	static const char *const fmts[] = {
		"%.2f", "%.2f", "%.3f", "%.2f", "%.1f", "%.2f", "%.0f",
		"%.0f", "%.0f", "%.0f", "%.0f", "%.0f",
	};
	const struct ab_bench *b = priv;
	struct bench_table *t = calloc(1, sizeof(*t));
	unsigned int i, side, k;
	int row;

	if (!t)
		return;
	bench_table_init(t, detail_cols,
			 sizeof(detail_cols) / sizeof(detail_cols[0]));
	for (i = 0; i < b->nr; i++)
		for (side = 0; side < b->sides; side++) {
			row = bench_table_row(t);
			if (row < 0)
				break;
			bench_table_set(t, row, 0, "%s",
					side ? "" : b->ci[i].name);
			bench_table_set(t, row, 1, "%c", SIDE(side));
			for (k = 0; k < sizeof(offs) / sizeof(offs[0]); k++)
				detail_cell(t, row, k + 2, &b->ci[i], side,
					    offs[k], fmts[k]);
		}
	printf("\n'~': the change is inside the noise (the reps' min-max ranges overlap,\n"
	       "or a side has one rep).  Per case and side, medians of the reps (ms; s):\n\n");
	bench_table_print(t, stdout);
	printf("\nfsync: latency of uf_fsync (fsync writers); pause: time in one write call\n"
	       "(the dirty throttle's pauses); dev writes: write requests the devices\n"
	       "completed, the closing writeback included (a file: those uflush\n"
	       "completed, counted after a uf_sync); written: pages written back\n"
	       "during the timed window; busy%%: of the window, the devices' io_ticks;\n"
	       "oom: allocations that failed with -ENOMEM (a memcg= domain's OOM);\n"
	       "pgscan: pages reclaim scanned in the window (uf_cache_stats nr_scanned,\n"
	       "the kernel's pgscan).\n");
	if (b->sim)
		ab_sim_notes(b);
	if (b->sides == AB_SIDES)
		printf("kernel (K): the same writers through the host's page cache (buffered\n"
		       "pwrite/pread on the loop device, fsync(2)), vm.dirty_* set to the case's\n"
		       "for the run and restored after; the host's memory, not the case's cache\n"
		       "size; '-' where a case's devices are shaped (the kernel path is not).\n");
	free(t);
}

static void ab_json_config(struct bench_json *j, const void *priv)
{
	const struct ab_bench *b = priv;
	unsigned int i;

	bench_json_str(j, "uflush_version", UF_BENCH_VERSION);
	bench_json_str(j, "engine", b->sim ? "sim" : "io_uring");
	if (b->sim) {
		bench_json_str(j, "sim_device_size", AB_SIM_DEV_SIZE);
		bench_json_str(j, "sim_hdd_model", AB_SIM_HDD_MODEL);
		bench_json_str(j, "sim_ssd_model", AB_SIM_SSD_MODEL);
		bench_json_str(j, "sim_dev_extra",
			       b->o.sim_dev ? b->o.sim_dev : "");
		bench_json_str(j, "sim_cpu", b->o.sim_cpu ? b->o.sim_cpu : "");
		bench_json_str(j, "sim_clock", ab_world_clock());
		bench_json_num(j, "wall_s", (uf_now_ns() - b->wall0) / 1e9);
	}
	if (b->o.matrix)
		bench_json_str(j, "matrix", b->o.matrix);
	if (b->o.job) {
		char hex[65];

		bench_json_obj(j, "job");
		bench_json_str(j, "path", b->o.job);
		if (!bench_sha256_file(b->o.job, hex))
			bench_json_str(j, "sha256", hex);
		bench_json_end(j);
	}
	bench_json_str(j, "policy_a", b->spec[0]);
	bench_json_str(j, "policy_a_resolved", b->policy[0]);
	bench_json_str(j, "policy_b", b->spec[1]);
	bench_json_str(j, "policy_b_resolved", b->policy[1]);
	bench_json_obj(j, "policy_a_files");
	bench_plugins_json(j, b->spec[0]);
	bench_json_end(j);
	bench_json_obj(j, "policy_b_files");
	bench_plugins_json(j, b->spec[1]);
	bench_json_end(j);
	bench_json_u64(j, "reps", b->o.reps);
	bench_json_u64(j, "default_secs", b->o.secs);
	bench_json_arr(j, "devices");
	for (i = 0; i < b->nr_devs; i++) {
		bench_json_obj(j, NULL);
		bench_target_json(j, &b->t[i]);
		bench_json_end(j);
	}
	bench_json_end(j);
}

static const char *const metric_names[NR_METRICS] = {
	"mb_per_sec", "fsync_p50_ms", "fsync_p99_ms", "pause_p50_ms",
	"pause_p99_ms", "pause_max_ms", "flusher_cpu_s", "dev_writes",
	"dev_write_mean_kb", "written_mb", "dev_busy_percent",
	"alloc_failures", "pages_scanned",
};

static const char *const cmp_keys[] = {
	"a", "b", "change_percent", "spread_a_percent", "spread_b_percent",
};

static void json_cmp(struct bench_json *j, const struct ab_cmp *c)
{
	const double v[] = { c->a, c->b, c->change, c->spread_a, c->spread_b };

	bench_json_members(j, cmp_keys, v, sizeof(v) / sizeof(v[0]));
	bench_json_bool(j, "inside_noise", c->noise);
}

static void ab_json_case(struct bench_json *j, const void *priv,
			 unsigned int i)
{
	const struct ab_bench *b = priv;
	const struct ab_cinfo *ci;
	struct bench_samples s;
	struct ab_cmp c, rows[AB_MAX_CASES];
	unsigned int side, k;

	bench_json_obj(j, NULL);
	if (i == b->nr) {
		for (k = 0; k < b->nr; k++)
			cmp_of(&b->ci[k], offsetof(struct ab_run, mbs),
			       &rows[k]);
		ab_compare_total(rows, b->nr, &c);
		bench_json_str(j, "case", "TOTAL");
		json_cmp(j, &c);
		bench_json_end(j);
		return;
	}
	ci = &b->ci[i];
	bench_json_str(j, "case", ci->name);
	cmp_of(ci, offsetof(struct ab_run, mbs), &c);
	json_cmp(j, &c);
	if (b->m && b->o.sim && b->m->seed_rows) {
		const struct ab_seed_row *sr = &b->m->seed_rows[i];

		bench_json_obj(j, "seed");
		bench_json_str(j, "case", sr->name);
		bench_json_str(j, "source", b->m->seed_source);
		bench_json_str(j, "metric", b->m->seed_metric);
		bench_json_num(j, "before", sr->before);
		bench_json_num(j, "after", sr->after);
		bench_json_num(j, "change_percent", sr->change);
		if (sr->note)
			bench_json_str(j, "note", sr->note);
		bench_json_end(j);
	}
	for (side = 0; side < b->sides; side++) {
		bench_json_obj(j, side == AB_K ? "kernel" : side ? "B" : "A");
		bench_json_str(j, "policy", side == AB_K ?
			       "the host kernel's page cache" : b->policy[side]);
		for (k = 0; k < NR_METRICS; k++) {
			gather(ci, side, k * sizeof(double), &s);
			bench_json_samples(j, metric_names[k], &s);
		}
		if (ci->c.sim && side != AB_K) {
			gather(ci, side, offsetof(struct ab_run, virt_s), &s);
			bench_json_samples(j, "virtual_s", &s);
			gather(ci, side, offsetof(struct ab_run, wall_s), &s);
			bench_json_samples(j, "wall_s", &s);
			if (ci->n[side])
				bench_json_u64(j, "trace_hash",
					       ci->runs[side][0].trace_hash);
			gather(ci, side, offsetof(struct ab_run, wb_waits),
			       &s);
			bench_json_samples(j, "wb_waits", &s);
			gather(ci, side, offsetof(struct ab_run, requeue_io),
			       &s);
			bench_json_samples(j, "requeue_io", &s);
			gather(ci, side, offsetof(struct ab_run, redirty_tail),
			       &s);
			bench_json_samples(j, "redirty_tail", &s);
			gather(ci, side, offsetof(struct ab_run, bg_bdi_only),
			       &s);
			bench_json_samples(j, "bg_bdi_only", &s);
		}
		bench_json_end(j);
	}
	bench_json_end(j);
}

static const struct bench_report ab_report = BENCH_REPORT_OF(ab);

/* ------------------------------------------------------------------ */
/* Setup                                                               */

static void ab_list(void)
{
	unsigned int i, k;

	for (i = 0; ab_matrices[i].name; i++) {
		printf("%-9s %s\n          A = %s, B = %s\n",
		       ab_matrices[i].name, ab_matrices[i].about,
		       ab_matrices[i].policy_a, ab_matrices[i].policy_b);
		for (k = 0; ab_matrices[i].cases && ab_matrices[i].cases[k];
		     k++)
			printf("          %s\n", ab_matrices[i].cases[k]);
		if (!ab_matrices[i].sim_cases)
			continue;
		printf("          --sim: the seed's own scale%s%s%s%s\n",
		       ab_matrices[i].sim_policy_a ? ", A = " : "",
		       ab_matrices[i].sim_policy_a ? ab_matrices[i].sim_policy_a : "",
		       ab_matrices[i].sim_policy_a ? ", B = " : "",
		       ab_matrices[i].sim_policy_a ? ab_matrices[i].sim_policy_b : "");
		for (k = 0; ab_matrices[i].sim_cases[k]; k++)
			printf("          %s\n", ab_matrices[i].sim_cases[k]);
	}
}

/* The machine's memory in bytes; 0 if unknown. */
static uint64_t machine_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
}

/* The CPUs this process may run on (pin_cpus picks among them). */
static unsigned int usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return (unsigned int)CPU_COUNT(&set);
}

static int add_case(struct ab_bench *b, const char *name)
{
	struct ab_cinfo *ci;
	char why[160];
	unsigned int k;
	int err;

	if (b->nr == AB_MAX_CASES) {
		bench_err("ab", "at most %d cases", AB_MAX_CASES);
		return -E2BIG;
	}
	ci = &b->ci[b->nr];
	if (ab_case_parse(name, &ci->c, why, sizeof(why))) {
		bench_err("ab", "bad case '%s': %s", name, why);
		return -EINVAL;
	}
	if (b->o.sim && !ci->c.sim) {
		if (ci->c.dev == AB_DEV_LOOP) {
			bench_err("ab", "--sim: case '%s' is on a loop device; a model is hdd or ssd",
				  name);
			return -EINVAL;
		}
		ci->c.sim = true;
	}
	if (b->nr && ci->c.sim != b->sim) {
		bench_err("ab", "case '%s': sim: cases and real ones do not mix in one run",
			  name);
		return -EINVAL;
	}
	b->sim = ci->c.sim;
	if (b->sim && b->sides == AB_SIDES) {
		bench_err("ab", "--kernel: the host kernel cannot write to a modelled device (case '%s')",
			  name);
		return -EINVAL;
	}
	err = ab_case_fit(&ci->c, machine_mem(), usable_cpus(), why,
			  sizeof(why));
	if (err < 0) {
		bench_err("ab", "case '%s' cannot run here: %s", name, why);
		return err;
	}
	if (err)
		bench_err("ab", "note: case '%s': %s (the table names it as run)",
			  name, why);
	ab_case_format(&ci->c, ci->name, sizeof(ci->name));
	for (k = 0; k < b->sides; k++)
		b->cases[b->sides * b->nr + k].name = ci->name;
	if (ab_case_devs(&ci->c) > b->nr_devs)
		b->nr_devs = ab_case_devs(&ci->c);
	b->nr++;
	return 0;
}

/* Some case of the run is on this kind of device. */
static bool ab_has_dev(const struct ab_bench *b, enum ab_dev dev)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		if (b->ci[i].c.dev == dev)
			return true;
	return false;
}

/*
 * --dev: enough devices for every case (a JBOD-<n>HDD case needs n), none
 * twice; --sim-dev and --sim-cpu only with sim: cases and well formed
 * (--sim-cpu parsed here, once, into b->sim_costs); said before any
 * device is opened or made.
 */
static int ab_devs_check(struct ab_bench *b)
{
	unsigned int i;

	if (b->o.sim_dev && !b->sim) {
		bench_err("ab", "--sim-dev: only sim: cases run on modelled devices");
		return -EINVAL;
	}
	if (b->o.sim_cpu && !b->sim) {
		bench_err("ab", "--sim-cpu: only sim: cases run in worlds");
		return -EINVAL;
	}
	if (sim_cpu_parse(b->o.sim_cpu, &b->sim_costs))
		return -EINVAL;
	for (i = 0; b->o.sim_dev && i < 2; i++)
		if (ab_has_dev(b, i ? AB_DEV_HDD : AB_DEV_SSD) &&
		    sim_dev_check(b->o.sim_dev, i))
			return -EINVAL;
	if (!b->o.devs.n)
		return 0;
	if (b->sim) {
		bench_err("ab", "--dev: sim: cases run on modelled devices, not on given ones");
		return -EINVAL;
	}
	for (i = 0; i < b->nr; i++)
		if (ab_case_devs(&b->ci[i].c) > b->o.devs.n) {
			bench_err("ab", "case '%s' needs %u devices; --dev gave %u (repeat --dev, or --dev A,B,...)",
				  b->ci[i].name, ab_case_devs(&b->ci[i].c),
				  b->o.devs.n);
			return -EINVAL;
		}
	if (bench_devs_distinct("ab", &b->o.devs))
		return -EINVAL;
	if (b->o.devs.n > b->nr_devs)
		bench_err("ab", "note: the cases use %u of the %u --dev devices (the first)",
			  b->nr_devs, b->o.devs.n);
	return 0;
}

static int ab_args(struct ab_bench *b, int argc, char **argv)
{
	const struct ab_matrix *m = NULL;
	int i = ab_rest, err;
	unsigned int np;
	char why[320];

	if (b->o.matrix) {
		m = ab_matrix_find(b->o.matrix);
		if (!m) {
			bench_err("ab", "no matrix '%s' (--list shows them)",
				  b->o.matrix);
			return -EINVAL;
		}
		if (!b->o.sim && !m->cases) {
			bench_err("ab", "matrix '%s' runs on modelled devices only: add --sim",
				  b->o.matrix);
			return -EINVAL;
		}
		if (b->o.sim && !m->sim_cases) {
			bench_err("ab", "matrix '%s' has no --sim variant (--list shows them)",
				  b->o.matrix);
			return -EINVAL;
		}
	}
	err = ab_split_args(argv + i, (unsigned int)(argc - i), b->spec, &np,
			    why, sizeof(why));
	if (err) {
		bench_err("ab", "%s", why);
		return err;
	}
	i += (int)np;
	if (np) {
		/* the policies given win over the matrix's */
	} else if (m && b->o.sim && m->sim_policy_a) {
		b->spec[0] = m->sim_policy_a;
		b->spec[1] = m->sim_policy_b;
	} else if (m) {
		b->spec[0] = m->policy_a;
		b->spec[1] = m->policy_b;
	} else {
		bench_err("ab", "give POLICY_A POLICY_B, or --matrix NAME");
		return -EINVAL;
	}
	for (; i < argc; i++) {
		err = add_case(b, argv[i]);
		if (err)
			return err;
	}
	if (b->nr)
		m = NULL;	/* cases named: the matrix gives policies only */
	b->m = m;
	for (i = 0; m && (b->o.sim ? m->sim_cases : m->cases)[i]; i++) {
		err = add_case(b, (b->o.sim ? m->sim_cases : m->cases)[i]);
		if (err)
			return err;
	}
	if (!b->nr) {
		bench_err("ab", "no cases: name some, or --matrix NAME");
		return -EINVAL;
	}
	if (ab_devs_check(b))
		return -EINVAL;
	if (bench_check_policy("ab", b->spec[0], b->policy[0],
			       sizeof(b->policy[0])) ||
	    bench_check_policy("ab", b->spec[1], b->policy[1],
			       sizeof(b->policy[1])))
		return -EINVAL;
	return 0;
}

/* A sim: run's devices, described as targets (made per run, by ab_once). */
static void sim_targets(struct ab_bench *b)
{
	unsigned int i;

	for (i = 0; i < b->nr_devs; i++) {
		struct bench_target *t = &b->t[i];

		memset(t, 0, sizeof(*t));
		t->cmd = "ab";
		t->path = "sim";
		t->dio = -1;
		bench_parse_size(AB_SIM_DEV_SIZE, &t->size);
		t->range = t->size;
		snprintf(t->desc, sizeof(t->desc),
			 "%u modelled disk%s (io/sim.c, the case's hdd or ssd with its defaults; hdd: %s, ssd: %s%s%s), %s each, data discarded; the cache's frames hold none",
			 b->nr_devs, b->nr_devs == 1 ? "" : "s",
			 AB_SIM_HDD_MODEL, AB_SIM_SSD_MODEL,
			 b->o.sim_dev ? "; then " : "",
			 b->o.sim_dev ? b->o.sim_dev : "", AB_SIM_DEV_SIZE);
	}
}

static int ab_targets(struct ab_bench *b)
{
	const char *dev;
	unsigned int i;

	if (b->sim) {
		sim_targets(b);
		b->nr_devs = 1;		/* one line says it for all */
	}
	for (i = 0; !b->sim && i < b->nr_devs; i++) {
		dev = b->o.devs.n ? b->o.devs.v[i] : NULL;
		if (bench_target_open(&b->t[i], "ab", dev,
				      dev ? 0 : b->o.dev_size, b->o.force))
			return -ENODEV;
		b->t[i].range = dev ? b->t[i].size : b->o.dev_size;
	}
	if (b->o.plot_dir && !b->o.trace_dir)
		b->o.trace_dir = b->o.plot_dir;
	if (b->o.plot_dir && mkdir(b->o.plot_dir, 0755) && errno != EEXIST) {
		bench_err("ab", "mkdir %s: %s", b->o.plot_dir,
			  strerror(errno));
		return -errno;
	}
	if (b->o.trace_dir && mkdir(b->o.trace_dir, 0755) && errno != EEXIST) {
		bench_err("ab", "mkdir %s: %s", b->o.trace_dir,
			  strerror(errno));
		return -errno;
	}
	return 0;
}

/* Each case's A and B traces into plot_dir/<case#>/. */
static int ab_plots(struct ab_bench *b)
{
	char tr[2][512], dir[512];
	const char *traces[2] = { tr[0], tr[1] };
	unsigned int i;
	int err;

	for (i = 0; i < b->nr; i++) {
		trace_path(b, i, 0, tr[0], sizeof(tr[0]));
		trace_path(b, i, 1, tr[1], sizeof(tr[1]));
		snprintf(dir, sizeof(dir), "%s/%u", b->o.plot_dir, i + 1);
		printf("case %u: %s\n", i + 1, b->ci[i].name);
		err = bench_plot_render(dir, traces, 2);
		if (err)
			return err;
	}
	return 0;
}

/* A run's window: the case's time, or X's --secs; unknown for an amount. */
static double ab_est_secs(void *priv, unsigned int k)
{
	const struct ab_bench *b = priv;
	const struct ab_case *c = &b->ci[k / b->sides].c;

	if (c->amount)
		return 0;
	return c->secs ? c->secs : b->o.secs;
}

static int ab_go(struct ab_bench *b)
{
	struct bench_sched s = {
		.cases = b->cases, .run = ab_run_one, .priv = b,
		.nr_cases = b->sides * b->nr, .reps = b->o.reps,
		.est_secs = ab_est_secs, .cmd = "ab",
	};
	struct bench_report rep = ab_report;
	unsigned int i, k;
	int err;

	if (b->sides == AB_SIDES) {
		rep.cols = ab_cols_k;
		rep.nr_cols = sizeof(ab_cols_k) / sizeof(ab_cols_k[0]);
	}
	b->total = b->sides * b->nr * b->o.reps;
	b->wall0 = uf_now_ns();
	bench_env_print(&b->env, NULL, false);
	bench_target_print(&b->t[0], NULL);
	err = bench_sched_run(&s);
	for (i = 0; !err && !bench_stop && i < b->nr; i++)
		for (k = 0; k < 2; k++)
			if (!b->ci[i].n[k]) {
				bench_err("ab", "%s could not run under %c: %s",
					  b->ci[i].name, SIDE(k),
					  b->cases[b->sides * i + k].why);
				err = -EIO;
			}
	if (!err)	/* interrupted: the runs done so far */
		err = bench_report(&rep, &b->env, &b->t[0], b->o.json, b,
				   b->nr + 1);
	if (!err && !bench_stop && b->o.trace_dir)
		printf("\ntraces:  %s/<case#>-<A|B>.trace\n", b->o.trace_dir);
	if (!err && !bench_stop && b->o.plot_dir)
		err = ab_plots(b);
	return err;
}

/* The FILE of --job FILE or --job=FILE, if given. */
static const char *job_arg(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--job") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--job=", 6))
			return argv[i] + 6;
	}
	return NULL;
}

/*
 * --job FILE: the file's settings as words before the command line's (so
 * those win), its policies and cases after them as positionals.
 */
static int job_expand(const char *file, int *argc, char ***argv)
{
	static struct ab_job job;
	static char *words[AB_JOB_MAX_WORDS + 64 + AB_MAX_CASES + 3];
	char why[400], *text;
	unsigned int i, n = 0;
	FILE *f;
	long sz;
	int k;

	f = fopen(file, "r");
	if (!f) {
		bench_err("ab", "--job %s: %s", file, strerror(errno));
		return -errno;
	}
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	text = sz >= 0 && sz < (1 << 20) ? calloc(1, (size_t)sz + 1) : NULL;
	if (!text || fread(text, 1, (size_t)sz, f) != (size_t)sz) {
		bench_err("ab", "--job %s: cannot read it", file);
		fclose(f);
		free(text);
		return -EIO;
	}
	fclose(f);
	k = ab_job_parse(text, file, ab_opt_table, &job, why, sizeof(why));
	free(text);
	if (k) {
		bench_err("ab", "%s", why);
		return k;
	}
	if (*argc > 64) {
		bench_err("ab", "too many arguments beside --job");
		return -E2BIG;
	}
	words[n++] = (*argv)[0];
	for (i = 0; i < job.nr_words; i++)
		words[n++] = job.words[i];
	for (k = 1; k < *argc; k++)
		words[n++] = (*argv)[k];
	words[n++] = "--";	/* what follows are positionals */
	for (i = 0; i < 2 && job.spec[0]; i++)
		words[n++] = (char *)job.spec[i];
	for (i = 0; i < job.nr_cases; i++)
		words[n++] = (char *)job.cases[i];
	words[n] = NULL;
	*argc = (int)n;
	*argv = words;
	return 0;
}

int bench_ab_main(int argc, char **argv)
{
	const char *job = job_arg(argc, argv);
	struct ab_bench *b;
	unsigned int i;
	int err;

	memset(&ab_o, 0, sizeof(ab_o));
	ab_o.secs = 5;
	ab_o.reps = 0;		/* 3, or 1 for sim: cases (below) */
	ab_o.dev_size = 512ull << 20;
	if (job && job_expand(job, &argc, &argv))
		return 2;
	err = bench_opts_main(&bench_ab_cmdline, argc, argv);
	if (err >= 0)
		return err;
	if (ab_o.list) {
		ab_list();
		return 0;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return 1;
	b->o = ab_o;
	b->sides = ab_o.kernel ? AB_SIDES : 2;
	err = ab_args(b, argc, argv);
	if (err) {
		free(b);
		return 2;
	}
	if (!b->o.reps)
		b->o.reps = b->sim ? 1 : 3;
	err = bench_env_init(&b->env, "ab", false);
	b->buf = err ? NULL : bench_random_buffer(64u << 20);
	if (!b->buf)
		err = -ENOMEM;
	if (!err)
		err = ab_targets(b);
	if (!err)
		err = ab_go(b);
	for (i = 0; i < b->nr_devs; i++)
		bench_target_close(&b->t[i]);
	free(b->buf);
	free(b);
	return bench_exit_code("ab", err);
}
