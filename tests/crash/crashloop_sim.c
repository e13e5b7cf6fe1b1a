// SPDX-License-Identifier: MIT
/*
 * tests/crash/crashloop_sim.c - uflush-crashloop --sim: the crash loop's
 * workload over a sim device (io/sim.h), power cuts instead of kills.
 *
 * SIGKILL cannot lose a request that reached the kernel, so the kill loop
 * misses an fsync that flushes the device's cache before its writes have
 * completed: the disk got them and keeps them.  A sim device has a
 * volatile write cache: a write is durable only once a flush submitted
 * after it completed has completed, and a power cut drops, keeps or tears
 * (per 512 B or 4 KiB, seeded) every write that is not.
 *
 * One iteration is one seed: a fresh sim SSD (random queue depth and
 * latency), then 1-3 boots of it.  A boot opens a cache over it (random
 * policy), arms a cut at a random request number counted from power-on
 * (so it lands inside an fsync's writes, between them and their flush, or
 * in the flush itself), or none, and runs the crash loop's operations
 * (uf_pwrite of any length and alignment, the page API, fsync, fdatasync,
 * sync) until the power goes or the boot's operations are done, then cuts
 * (if it has not happened), throws the cache away and checks the image
 * (the next boot reads it back through uflush): every 512 B or 4 KiB granule (the tear's
 * unit, else the page) must show the content it had at the boot's start
 * followed by some prefix, in order, of the boot's writes to it, a prefix
 * that holds every write acknowledged by a successful fsync, fdatasync
 * or sync of its file.  Nothing else is required.  The next boot starts
 * from that image: recovery over what a cut left.
 *
 * The device has no flusher thread, kupdate is off, the dirty limits are
 * above the device's size and the cache holds all of it: only the
 * workload's syncs write, from the one thread, so the requests are a
 * function of the seed and so is the image a cut leaves (its hash is
 * printed); `--seed N` replays iteration N exactly, with a trace, and
 * --twice runs every seed twice and fails if the images differ.
 * --flusher gives the device its flusher thread, kupdate and a small
 * cache (the kill loop's settings): writeback and reclaim then race the
 * workload, and replays are exact only with --world, which runs each boot
 * in a deterministic world (uf_sim_run).  In a world the cut is armed at
 * a seeded virtual instant (uf_sim_cut_at_ns; --cut-at request for the
 * request count): uniform within the boot's expected length, so it lands
 * wherever the flusher, reclaim or the workload happen to be at that time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uflush.h"
#include "uflush-internal.h"
#include "tests/crash/crashloop.h"

#define SIM_OPS_MIN	40
#define SIM_OPS_SPAN	120
#define SIM_MAX_BOOTS	3
/* A boot's expected virtual length per operation, ns: measured over
 * --world runs (-s 1, 12 seeds: 0.13-0.16 ms an op without the flusher,
 * 0.23-0.56 ms with it); a cut drawn past the boot's end is the "after
 * the last op" cut. */
#define SIM_NS_PER_OP		150000ull
#define SIM_NS_PER_OP_FLUSHER	300000ull

enum { CUT_DROP, CUT_KEEP, CUT_TEAR512, CUT_TEAR4K, NR_CUTS };
static const char *const cut_names[] = { "drop", "keep", "tear512", "tear4k" };

struct sw {
	uint64_t off;		/* device offset */
	uint32_t len, ver;
};

struct sim_iter {
	uint64_t seed, rng;
	bool verbose, flusher, world, cut_time;
	int force_cut;		/* -1: by the seed */
	/* this boot */
	struct sw *w;
	size_t nr_w, cap_w;
	uint32_t ver;		/* the next write's version (all boots) */
	uint32_t acked[NFILES];	/* versions below are durable */
	unsigned int nr_acks, nr_ops;
	int mode;
	uint64_t cut_nth, nr_rq;
	uint64_t cut_ns, cut_ns_hit;	/* --cut-at time: armed, happened */
	/* the iteration */
	unsigned int boots, cuts[NR_CUTS], acks, cut_hit;
	uint64_t hash;		/* over every boot's image after its cut */
	char why[512];
	struct uf_sim *sim;
	char name[48];
};

static uint8_t *sim_base;	/* the image at the boot's start */
static uint8_t *sim_img;	/* after the cut */
static uint8_t *sim_buf;

static void trace(struct sim_iter *it, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void trace(struct sim_iter *it, const char *fmt, ...)
{
	va_list ap;

	if (!it->verbose)
		return;
	va_start(ap, fmt);
	printf("crashloop --sim seed %" PRIu64 ": ", it->seed);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static struct sw *note(struct sim_iter *it, int fi, uint64_t off,
		       uint32_t len)
{
	struct sw *w;

	if (it->nr_w == it->cap_w) {
		it->cap_w = it->cap_w ? 2 * it->cap_w : 256;
		it->w = realloc(it->w, it->cap_w * sizeof(*it->w));
		if (!it->w) {
			perror("crashloop --sim: realloc");
			exit(2);
		}
	}
	w = &it->w[it->nr_w++];
	w->off = (uint64_t)fi * FILE_SIZE + off;
	w->len = len;
	w->ver = it->ver++;
	return w;
}

/* The operations of crashloop.c's child, recorded before they are made. */
static int op_pwrite(struct sim_iter *it, struct uf_file *f, int fi)
{
	uint64_t off = rng_below(&it->rng, FILE_SIZE);
	size_t len;
	struct sw *w;
	ssize_t ret;

	if (rng_below(&it->rng, 10) < 7)
		len = 1 + rng_below(&it->rng, 16 << 10);
	else
		len = BIG_WRITE + rng_below(&it->rng, MAX_WRITE - BIG_WRITE);
	if (len > FILE_SIZE - off)
		len = FILE_SIZE - off;
	w = note(it, fi, off, (uint32_t)len);
	gen_fill(sim_buf, w->off, len, w->ver);
	ret = uf_pwrite(f, sim_buf, len, off);
	trace(it, "pwrite file %d +%" PRIu64 " len %zu ver %u: %zd", fi, off,
	      len, w->ver, ret);
	return ret == (ssize_t)len ? 0 : ret < 0 ? (int)ret : -EIO;
}

static int op_page(struct sim_iter *it, struct uf_file *f, int fi)
{
	unsigned long index = (unsigned long)rng_below(&it->rng, FILE_PAGES);
	bool noread = rng_below(&it->rng, 4) == 0;
	uint32_t a = 0, b = PG;
	struct uf_page *p;
	struct sw *w;
	int ret;

	ret = uf_page_get(f, index, UF_PAGE_WRITE |
			  (noread ? UF_PAGE_NOREAD : 0), &p);
	trace(it, "page_get file %d index %lu%s: %d", fi, index,
	      noread ? " noread" : "", ret);
	if (ret)
		return ret;
	/* a NOREAD miss is zeros, not the file: overwrite it all */
	if (!noread) {
		a = (uint32_t)rng_below(&it->rng, PG);
		b = a + 1 + (uint32_t)rng_below(&it->rng, PG - a);
	}
	w = note(it, fi, (uint64_t)index * PG + a, b - a);
	gen_fill((uint8_t *)uf_page_data(p) + a, w->off, w->len, w->ver);
	ret = uf_page_set_dirty(p);
	uf_page_put(p);
	return ret;
}

static int op_sync(struct sim_iter *it, struct uf_cache *c,
		   struct uf_file **files, int fi, int kind)
{
	int ret, i;

	ret = kind == 0 ? uf_fsync(files[fi]) :
	      kind == 1 ? uf_fdatasync(files[fi]) : uf_sync(c);
	trace(it, "%s file %d: %d", kind == 0 ? "fsync" :
	      kind == 1 ? "fdatasync" : "sync", kind == 2 ? -1 : fi, ret);
	if (ret)
		return ret;
	for (i = 0; i < NFILES; i++)
		if (kind == 2 || i == fi)
			it->acked[i] = it->ver;
	it->nr_acks++;
	return 0;
}

static void quiet_log(void *priv, int level, const char *msg)
{
	(void)priv;
	if (level <= 3 && getenv("UF_CRASHLOOP_LOG"))
		fprintf(stderr, "crashloop --sim: uflush: %s\n", msg);
}

/*
 * A cache over the sim device.  Deterministic: no flusher, no kupdate,
 * the dirty limits above the device and room for all of it (no reclaim).
 */
static int sim_open(struct sim_iter *it, const char *policy,
		    struct uf_cache **c, struct uf_file **files)
{
	struct uf_dev_config dcfg = { .engine = "sim" };
	struct uf_cache_config cfg;
	struct uf_dev *d;
	int i, ret;

	uf_cache_config_init(&cfg);
	cfg.policy = policy;
	if (it->flusher) {
		cfg.nr_pages = 256 + rng_below(&it->rng, 768);
		cfg.dirty_expire_centisecs =
			5 + (unsigned int)rng_below(&it->rng, 50);
		cfg.dirty_writeback_centisecs =
			5 + (unsigned int)rng_below(&it->rng, 20);
	} else {
		dcfg.flags = UF_DEV_NO_FLUSHER;
		cfg.nr_pages = DEV_PAGES + 1024;
		cfg.dirty_writeback_centisecs = 0;
		cfg.dirty_bytes = DEV_SIZE + (2u << 20);
		cfg.dirty_background_bytes = DEV_SIZE + (1u << 20);
	}
	ret = uf_cache_open(&cfg, c);
	if (ret)
		return ret;
	ret = uf_dev_open(*c, it->name, &dcfg, &d);
	for (i = 0; !ret && i < NFILES; i++)
		ret = uf_file_open(d, (uint64_t)i + 1, (uint64_t)i * FILE_SIZE,
				   FILE_SIZE, NULL, NULL, &files[i]);
	if (ret)
		uf_cache_close_discard(*c, UF_DISCARD_DIRTY);
	return ret;
}

/* Granule [so, so + g): the base, then a prefix of its writes holding
 * the acknowledged ones? */
static bool check_granule(struct sim_iter *it, uint64_t so, unsigned int g)
{
	unsigned int f = (unsigned int)(so / FILE_SIZE);
	const uint8_t *img = sim_img + so;
	static uint8_t cur[PG];
	size_t i, need = 0, j;
	uint64_t lo, hi;

	for (i = 0; i < it->nr_w; i++)
		if (it->w[i].off < so + g && it->w[i].off + it->w[i].len > so &&
		    it->w[i].ver < it->acked[f])
			need = i + 1;
	memcpy(cur, sim_base + so, g);
	if (!need && !memcmp(cur, img, g))
		return true;
	for (i = 0; i < it->nr_w; i++) {
		const struct sw *w = &it->w[i];

		if (w->off >= so + g || w->off + w->len <= so)
			continue;
		lo = w->off > so ? w->off : so;
		hi = w->off + w->len < so + g ? w->off + w->len : so + g;
		gen_fill(cur + (lo - so), lo, hi - lo, w->ver);
		if (i + 1 >= need && !memcmp(cur, img, g))
			return true;
	}
	for (j = 0; j < g && img[j] == cur[j]; j++)
		;
	snprintf(it->why, sizeof(it->why),
		 "%s cut at %s %" PRIu64 ": device offset %" PRIu64 " (file %u, %u B granule) is not its content at boot followed by a prefix of its writes holding the acknowledged ones (below version %u); first byte off the last write's content at +%zu",
		 cut_names[it->mode], it->cut_time ? "ns" : "request",
		 it->cut_time ? it->cut_ns : it->cut_nth, so, f, g,
		 it->acked[f], j);
	return false;
}

/* The image the cut left, read from the device as the kill loop reads
 * its loop device (the next boot reads it through uflush); every granule
 * checked. */
static bool sim_verify(struct sim_iter *it)
{
	unsigned int g = it->mode == CUT_TEAR512 ? 512 : PG;
	uint64_t s;
	int ret;

	ret = uf_sim_read(it->sim, sim_img, DEV_SIZE, 0);
	if (ret) {
		snprintf(it->why, sizeof(it->why), "uf_sim_read: %s",
			 strerror(-ret));
		return false;
	}
	for (s = 0; s < DEV_SIZE; s += g)
		if (!check_granule(it, s, g))
			return false;
	return true;
}

static void sim_work(struct sim_iter *it, struct uf_cache *c,
		     struct uf_file **files, unsigned int ops, int *err)
{
	unsigned int op;
	int fi, ret = 0;
	uint64_t r;

	for (op = 0; op < ops && !ret; op++) {
		fi = (int)rng_below(&it->rng, NFILES);
		r = rng_below(&it->rng, 100);
		if (r < 45)
			ret = op_pwrite(it, files[fi], fi);
		else if (r < 75)
			ret = op_page(it, files[fi], fi);
		else
			ret = op_sync(it, c, files, fi,
				      r < 86 ? 0 : r < 96 ? 1 : 2);
		it->nr_ops++;
	}
	*err = ret;
}

static int pick_cut(struct sim_iter *it)
{
	uint64_t r = rng_below(&it->rng, 100);

	if (it->force_cut >= 0)
		return it->force_cut;
	return r < 35 ? CUT_DROP : r < 60 ? CUT_TEAR512 :
	       r < 85 ? CUT_TEAR4K : CUT_KEEP;
}

/*
 * Draw this boot's cut: at a request counted from the open, or (--cut-at
 * time, in a world) at a virtual instant after it, uniform within the
 * boot's expected length; one boot in five arms none (the cut after the
 * last op).  The draws are the same in both forms: a seed's request
 * cuts stay what they were.
 */
static void draw_cut(struct sim_iter *it, unsigned int ops)
{
	uint64_t len = ops * (it->flusher ? SIM_NS_PER_OP_FLUSHER :
			      SIM_NS_PER_OP);

	it->cut_nth = it->cut_ns = 0;
	if (!rng_below(&it->rng, 5))
		return;
	if (it->cut_time)
		it->cut_ns = 1 + rng_below(&it->rng, len);	/* from open */
	else	/* a boot makes about 1.5 requests an operation */
		it->cut_nth = 1 + rng_below(&it->rng, ops + ops / 2);
}

/* Arm it, once the cache is open. */
static int arm_cut(struct sim_iter *it, unsigned int b)
{
	if (it->cut_ns) {
		it->cut_ns += uf_now_ns();
		return uf_sim_cut_at_ns(it->sim, it->cut_ns,
					(enum uf_sim_cut)it->mode,
					it->seed + b);
	}
	if (it->cut_nth)
		return uf_sim_cut_at(it->sim, it->cut_nth,
				     (enum uf_sim_cut)it->mode, it->seed + b);
	return 0;
}

/* One boot: work, the cut, the check.  false with it->why. */
static bool sim_boot(struct sim_iter *it, unsigned int b)
{
	const char *policy = policies[rng_below(&it->rng, nr_policies)];
	unsigned int ops = SIM_OPS_MIN +
			   (unsigned int)rng_below(&it->rng, SIM_OPS_SPAN);
	struct uf_file *files[NFILES];
	struct uf_sim_stats st0, st1;
	struct uf_cache *c;
	uint64_t h;
	int ret, err;

	it->nr_w = 0;
	it->nr_acks = it->nr_ops = 0;
	memset(it->acked, 0, sizeof(it->acked));
	it->mode = pick_cut(it);
	draw_cut(it, ops);
	uf_sim_read(it->sim, sim_base, DEV_SIZE, 0);
	ret = sim_open(it, policy, &c, files);
	if (ret) {
		snprintf(it->why, sizeof(it->why), "boot %u: open: %s", b,
			 strerror(-ret));
		return false;
	}
	uf_sim_get_stats(it->sim, &st0);
	ret = arm_cut(it, b);
	if (ret) {
		snprintf(it->why, sizeof(it->why), "boot %u: arming the cut: %s",
			 b, strerror(-ret));
		uf_cache_close_discard(c, UF_DISCARD_DIRTY);
		return false;
	}
	sim_work(it, c, files, ops, &err);
	uf_sim_get_stats(it->sim, &st1);
	it->cut_ns_hit = st1.power_cuts != st0.power_cuts ?
			 st1.last_cut_ns : 0;
	if (err && st1.power_cuts == st0.power_cuts) {
		snprintf(it->why, sizeof(it->why),
			 "boot %u: a call failed before any cut: %s", b,
			 strerror(-err));
		uf_cache_close_discard(c, UF_DISCARD_DIRTY);
		return false;
	}
	it->cut_hit += st1.power_cuts != st0.power_cuts;
	it->nr_rq = st1.reads + st1.writes + st1.flushes + st1.eio_injected -
		    st0.reads - st0.writes - st0.flushes - st0.eio_injected;
	uf_sim_power_cut(it->sim, (enum uf_sim_cut)it->mode, it->seed + b);
	uf_cache_close_discard(c, UF_DISCARD_DIRTY);
	uf_sim_image_hash(it->sim, &h);
	it->hash = (it->hash ^ h) * 0x100000001b3ull;
	it->cuts[it->mode]++;
	it->acks += it->nr_acks;
	trace(it, "boot %u (%s): %s cut %s %" PRIu64 "%s%s, %u ops, %zu writes, %u acks, %" PRIu64 " requests completed, image %016" PRIx64,
	      b, policy, cut_names[it->mode],
	      it->cut_time ? (it->cut_ns ? "armed at ns" : "after the last op") :
	      it->cut_nth ? "armed at request" : "after the last op",
	      it->cut_time ? it->cut_ns : it->cut_nth,
	      st1.power_cuts != st0.power_cuts ? " (hit)" : "",
	      it->cut_ns_hit && it->cut_ns_hit != it->cut_ns ?
	      " (NOT at its instant)" : "", it->nr_ops,
	      it->nr_w, it->nr_acks, it->nr_rq, h);
	if (it->cut_time && it->cut_ns_hit && it->cut_ns_hit != it->cut_ns) {
		snprintf(it->why, sizeof(it->why),
			 "boot %u: the cut armed at %" PRIu64 " ns came at %" PRIu64 " ns",
			 b, it->cut_ns, it->cut_ns_hit);
		return false;
	}
	if (!sim_verify(it)) {
		char why[sizeof(it->why)];

		snprintf(why, sizeof(why), "boot %u (%s): %.440s", b, policy,
			 it->why);
		memcpy(it->why, why, sizeof(why));
		return false;
	}
	return true;
}

/*
 * --world: a boot as a deterministic world (uf_sim_run, kernel/sim.c):
 * the flusher, kupdate's timer, kswapd and the device's completions are
 * tasks scheduled by the seed on a virtual clock, so a run with --flusher
 * replays exactly too.
 */
struct boot_arg {
	struct sim_iter *it;
	unsigned int b;
	bool ok;
};

static int boot_task(void *p)
{
	struct boot_arg *a = p;

	a->ok = sim_boot(a->it, a->b);
	return 0;
}

static bool sim_boot_world(struct sim_iter *it, unsigned int b)
{
	struct uf_sim_opts o = { .seed = it->seed + b,
				 .max_ns = 3600ull * 1000000000ull };
	struct boot_arg a = { it, b, false };
	struct uf_sim_result r;
	int ret = uf_sim_run(&o, boot_task, &a, &r);

	if (ret) {
		snprintf(it->why, sizeof(it->why), "boot %u: uf_sim_run: %s%s",
			 b, strerror(-ret), ret == -EBUSY ? "" :
			 " (the world's tasks are frozen: ending)");
		if (ret != -EBUSY) {
			printf("crashloop --sim: seed %" PRIu64 ": %s\n",
			       it->seed, it->why);
			exit(1);
		}
		return false;
	}
	it->hash = (it->hash ^ r.trace_hash) * 0x100000001b3ull;
	trace(it, "boot %u: world: %.3f s virtual, %" PRIu64 " switches, trace %016" PRIx64,
	      b, r.virtual_ns / 1e9, r.switches, r.trace_hash);
	return a.ok;
}

/* One iteration from its seed; false with it->why. */
static bool sim_iteration(struct sim_iter *it)
{
	char spec[128];
	unsigned int b;
	bool ok = true;
	int ret;

	it->rng = it->seed;
	it->ver = 1;
	it->hash = 0xcbf29ce484222325ull;
	snprintf(it->name, sizeof(it->name), "crashloop-%" PRIx64, it->seed);
	/* depth and latency: writes are in flight when the cut comes */
	snprintf(spec, sizeof(spec),
		 "ssd,size=%" PRIu64 ",qd=%u,lat_us=%u,bw=%um,seed=%" PRIu64,
		 DEV_SIZE, 1 + (unsigned int)rng_below(&it->rng, 32),
		 (unsigned int)rng_below(&it->rng, 100),
		 200 + (unsigned int)rng_below(&it->rng, 1800), it->seed);
	it->boots = 1 + (unsigned int)rng_below(&it->rng, SIM_MAX_BOOTS);
	ret = uf_sim_create(it->name, spec, &it->sim);
	if (ret) {
		snprintf(it->why, sizeof(it->why), "uf_sim_create(%s): %s",
			 spec, strerror(-ret));
		return false;
	}
	trace(it, "device %s, %u boots", spec, it->boots);
	for (b = 0; b < it->boots && ok; b++)
		ok = it->world ? sim_boot_world(it, b) : sim_boot(it, b);
	uf_sim_destroy(it->sim);
	it->sim = NULL;
	return ok;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_cut(const char *s)
{
	int i;

	for (i = 0; i < NR_CUTS; i++)
		if (!strcmp(s, cut_names[i]))
			return i;
	fprintf(stderr, "crashloop --sim: --cut %s: want drop, keep, tear512 or tear4k\n",
		s);
	exit(2);
}

static void sim_usage(void)
{
	fprintf(stderr,
		"usage: uflush-crashloop --sim [-n ITERATIONS] [-s SEED] [--seed N]\n"
		"         [--cut drop|keep|tear512|tear4k] [--twice] [--flusher] [--world]\n"
		"         [--cut-at request|time] [-v]\n"
		"-s seeds the loop; --seed N replays the iteration of seed N alone,\n"
		"with a trace (exact, but with --flusher and no --world).  Cuts come\n"
		"at a seeded request, or with --world by default at a seeded virtual\n"
		"instant (--cut-at time needs --world).\n");
	exit(2);
}

/* Run one seed (twice with --twice: the images must agree). */
static bool sim_seed(struct sim_iter *it, bool twice)
{
	uint64_t first;
	bool ok = sim_iteration(it);

	if (!ok || !twice)
		return ok;
	first = it->hash;
	free(it->w);
	it->w = NULL;
	it->cap_w = it->nr_w = 0;
	memset(it->cuts, 0, sizeof(it->cuts));
	it->acks = it->cut_hit = 0;
	ok = sim_iteration(it);
	if (ok && it->hash != first) {
		snprintf(it->why, sizeof(it->why),
			 "not deterministic: image hash %016" PRIx64 " then %016" PRIx64,
			 first, it->hash);
		return false;
	}
	return ok;
}

int crashloop_sim_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sim", no_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'N' },
		{ "cut", required_argument, NULL, 'c' },
		{ "twice", no_argument, NULL, 't' },
		{ "flusher", no_argument, NULL, 'f' },
		{ "world", no_argument, NULL, 'w' },
		{ "cut-at", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int iters = 100, i, passed = 0, failed = 0;
	unsigned int cuts[NR_CUTS] = { 0 }, acks = 0, boots = 0, hit = 0;
	uint64_t seed = (uint64_t)time(NULL), rng, one = 0;
	bool verbose = false, twice = false, flusher = false, replay = false;
	bool world = false;
	int opt, force_cut = -1, cut_at = -1;	/* 0 request, 1 time */
	double t0 = now_s();
	struct sim_iter it;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "n:s:v", opts, NULL)) != -1) {
		switch (opt) {
		case 'n': iters = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'N': one = strtoull(optarg, NULL, 0); replay = true; break;
		case 'c': force_cut = parse_cut(optarg); break;
		case 't': twice = true; break;
		case 'f': flusher = true; break;
		case 'w': world = true; break;
		case 'a':
			if (strcmp(optarg, "request") && strcmp(optarg, "time"))
				sim_usage();
			cut_at = optarg[0] == 't';
			break;
		case 'v': verbose = true; break;
		case 'S': break;
		default: sim_usage();
		}
	}
	if (optind < argc || !iters || (cut_at == 1 && !world))
		sim_usage();
	if (cut_at < 0)
		cut_at = world;	/* a world's cuts are at virtual instants */
	if (posix_memalign((void **)&sim_buf, PG, MAX_WRITE) ||
	    !(sim_base = malloc(DEV_SIZE)) || !(sim_img = malloc(DEV_SIZE))) {
		fprintf(stderr, "crashloop --sim: out of memory\n");
		return 2;
	}
	uf_set_log_fn(quiet_log, NULL);
	if (replay)
		iters = 1;
	else
		printf("crashloop --sim: %u iterations, seed %" PRIu64 "%s%s%s%s\n",
		       iters, seed, world ? (cut_at ? ", each boot a world, cuts at instants" :
		       ", each boot a world") : "",
		       flusher ? (world ? ", with flushers" :
				  ", with flushers (not exact)") : "",
		       force_cut >= 0 ? ", cuts: " : "",
		       force_cut >= 0 ? cut_names[force_cut] : "");
	rng = seed;
	for (i = 0; i < iters; i++) {
		bool ok;

		memset(&it, 0, sizeof(it));
		it.seed = replay ? one : rng_next(&rng);
		it.verbose = verbose || replay;
		it.flusher = flusher;
		it.world = world;
		it.cut_time = cut_at == 1;
		it.force_cut = force_cut;
		ok = sim_seed(&it, twice);
		if (ok)
			passed++;
		else
			failed++;
		if (!ok || it.verbose)
			printf("crashloop --sim: iteration %u, seed %" PRIu64 ": %u boots, image %016" PRIx64 ": %s%s\n",
			       i, it.seed, it.boots, it.hash,
			       ok ? "ok" : "FAILED: ", ok ? "" : it.why);
		if (!ok && !replay)
			printf("crashloop --sim: replay: uflush-crashloop --sim --seed %" PRIu64 "%s%s%s%s%s\n",
			       it.seed, world ? " --world" : "",
			       world && !cut_at ? " --cut-at request" : "",
			       flusher ? " --flusher" : "",
			       force_cut >= 0 ? " --cut " : "",
			       force_cut >= 0 ? cut_names[force_cut] : "");
		for (opt = 0; opt < NR_CUTS; opt++)
			cuts[opt] += it.cuts[opt];
		acks += it.acks;
		boots += it.boots;
		hit += it.cut_hit;
		free(it.w);
	}
	printf("crashloop --sim: %u boots: %u drop, %u keep, %u tear512, %u tear4k cuts (%u at an armed %s, the rest after the last op); %u acks, %.1f s\n",
	       boots, cuts[CUT_DROP], cuts[CUT_KEEP], cuts[CUT_TEAR512],
	       cuts[CUT_TEAR4K], hit, cut_at ? "instant" : "request", acks,
	       now_s() - t0);
	printf("%u passed, %u failed\n", passed, failed);
	free(sim_buf);
	free(sim_base);
	free(sim_img);
	return failed ? 1 : 0;
}
