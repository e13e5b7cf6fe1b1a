// SPDX-License-Identifier: MIT
/*
 * Description: the modelled devices (io/sim.c) do what io/sim.h says.
 *
 * sim_model: the timing model on made-up arrival times (no clock): seek
 * time grows with distance between the fitted track-to-track and full
 * stroke times and averages seek_avg over all pairs; a sequential stream
 * takes its bytes over the media rate; a random 4 KiB stream at queue
 * depth 1 gets 1/(mean seek + half a revolution + transfer) IOPS; an ssd
 * is latency-bound at low depth and bandwidth-bound with big requests;
 * the same seed gives the same timings, another seed others; queued
 * contiguous requests merge up to max_kb.
 * sim_dev: the engine through uf_bdev: a write not flushed is lost on a
 * drop cut, kept on a keep cut, torn sector-wise on a tear cut; flushed
 * writes always survive; the same seed gives the same image hash;
 * keep_data=0 reads zeros and counts them; after a cut requests fail
 * until the device is opened again; a cut armed at the Nth request;
 * injected errors and stalls; bad input gets its errno.
 * sim_crash: uflush over a sim device, writes and fsyncs at random, a
 * power cut at a seeded point, the image reopened: every acknowledged
 * write is there.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "io/sim.h"
#include "uflush-internal.h"
#include "uflush.h"

#define PG	4096u
#define MS	1000000.0

/* ------------------------------------------------------------------ */
/* The model                                                           */

static uint64_t t_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void model_open(struct uf_sim_model *m, const char *spec)
{
	struct uf_sim_config c;

	cr_assert_eq(uf_sim_config_parse(&c, spec), 0, "%s", spec);
	cr_assert_eq(uf_sim_model_init(m, &c), 0);
}

Test(sim_model, seek_grows_with_distance)
{
	struct uf_sim_model m;
	uint64_t d, prev = 0, t;

	model_open(&m, "hdd,size=1t");
	cr_assert_eq(uf_sim_seek_ns(&m, 0), 0);
	for (d = PG; d <= m.cfg.size; d *= 2) {
		t = uf_sim_seek_ns(&m, d);
		cr_assert_gt(t, prev, "seek(%" PRIu64 ") = %" PRIu64
			     " ns, not above %" PRIu64, d, t, prev);
		prev = t;
	}
	/* one track (~1 MiB) costs about track-to-track, all of it full */
	t = uf_sim_seek_ns(&m, 1 << 20);
	cr_assert(t >= 1.0 * MS && t < 1.1 * MS, "t2t %" PRIu64, t);
	t = uf_sim_seek_ns(&m, m.cfg.size);
	cr_assert(t > 15.99 * MS && t < 16.01 * MS, "full %" PRIu64, t);
	cr_assert_float_eq(uf_sim_seek_mean_ns(&m), 8.5 * MS, 0.01 * MS);
	/* continuous at the knee */
	cr_assert_float_eq((double)uf_sim_seek_ns(&m, m.cfg.size / 2),
			   (double)uf_sim_seek_ns(&m, m.cfg.size / 2 - PG),
			   0.01 * MS);
	uf_sim_model_exit(&m);
}

Test(sim_model, sequential_is_transfer_bound)
{
	struct uf_sim_model m;
	uint64_t done = 0, i, n = 1000, len = 1 << 20;
	double want;

	model_open(&m, "hdd,size=16g,bw=180m");
	for (i = 0; i < n; i++)
		done = uf_sim_model_schedule(&m, UF_IO_WRITE, i * len, len, 0);
	want = (double)n * len / (180.0 * (1 << 20)) * 1e9;
	cr_assert_float_eq((double)done, want, want * 0.001,
			   "%" PRIu64 " ns for %" PRIu64 " MiB, want %.0f",
			   done, n, want);
	uf_sim_model_exit(&m);
}

Test(sim_model, random_4k_is_seek_bound)
{
	struct uf_sim_model m;
	uint64_t done = 0, i, n = 20000, rng = 42, blocks;
	double iops, want, rot;

	model_open(&m, "hdd,size=16g,rpm=7200");
	blocks = m.cfg.size / PG;
	for (i = 0; i < n; i++)
		done = uf_sim_model_schedule(&m, UF_IO_READ,
					     t_rng(&rng) % blocks * PG, PG, 0);
	iops = n / (done / 1e9);
	rot = 60e9 / 7200 / 2;
	want = 1e9 / (uf_sim_seek_mean_ns(&m) + rot +
		      PG / (180.0 * (1 << 20)) * 1e9);
	cr_assert(iops > want * 0.97 && iops < want * 1.03,
		  "%.1f IOPS, want %.1f (seek %.2f ms + rot %.2f ms)", iops,
		  want, uf_sim_seek_mean_ns(&m) / MS, rot / MS);
	cr_assert(iops > 70 && iops < 90, "%.1f IOPS for a 7200 rpm disk",
		  iops);
	uf_sim_model_exit(&m);
}

Test(sim_model, ssd_latency_and_bandwidth)
{
	struct uf_sim_model m;
	uint64_t done = 0, i;

	/* qd 32, 100 us each, ample bandwidth: 3200 requests in 10 ms */
	model_open(&m, "ssd,qd=32,lat_us=100,bw=100g");
	for (i = 0; i < 3200; i++)
		done = uf_sim_model_schedule(&m, UF_IO_READ, i * 2 * PG, PG, 0);
	cr_assert_float_eq((double)done, 10 * MS, 0.05 * MS, "%" PRIu64,
			   done);
	uf_sim_model_exit(&m);
	/* 1 MiB requests at 500 MiB/s: 2 ms each whatever the depth */
	model_open(&m, "ssd,qd=32,lat_us=100,bw=500m");
	for (i = 0; i < 100; i++)
		done = uf_sim_model_schedule(&m, UF_IO_WRITE, i << 21, 1 << 20,
					     0);
	cr_assert_float_eq((double)done, 200 * MS, 0.1 * MS, "%" PRIu64,
			   done);
	uf_sim_model_exit(&m);
}

/* The completion times of a random mixed stream, folded into a hash. */
static uint64_t timing_hash(const char *spec, uint64_t *last)
{
	struct uf_sim_model m;
	uint64_t h = 0, rng = 7, i, t = 0, done;

	model_open(&m, spec);
	for (i = 0; i < 500; i++) {
		t += t_rng(&rng) % 20000000;
		done = uf_sim_model_schedule(&m, (enum uf_io_op)(t_rng(&rng) % 3),
					     t_rng(&rng) % 1000 * (64 << 10),
					     PG * (1 + t_rng(&rng) % 16), t);
		cr_assert_geq(done, t);
		h = h * 31 + done;
	}
	*last = done;
	uf_sim_model_exit(&m);
	return h;
}

Test(sim_model, same_seed_same_timings)
{
	uint64_t a, b, c, la, lb, lc;

	a = timing_hash("hdd,seed=5", &la);
	b = timing_hash("hdd,seed=5", &lb);
	c = timing_hash("hdd,seed=6", &lc);
	cr_assert_eq(a, b);
	cr_assert_eq(la, lb);
	cr_assert_neq(a, c, "another seed, other rotational delays");
}

Test(sim_model, queued_contiguous_requests_merge)
{
	struct uf_sim_model m;
	uint64_t i, done = 0;

	/*
	 * 64 KiB writes back to back, all arriving at 0: the first is in
	 * service at once, the rest merge 16 to a 1 MiB command.
	 */
	model_open(&m, "hdd,cmd_us=500,max_kb=1024");
	for (i = 0; i < 64; i++)
		done = uf_sim_model_schedule(&m, UF_IO_WRITE, i << 16, 1 << 16,
					     0);
	cr_assert_eq(m.nr_merged, 59, "%" PRIu64 " merged", m.nr_merged);
	/* 5 commands of 0.5 ms, no seek (the head starts at 0) */
	cr_assert_float_eq((double)done,
			   5 * 0.5 * MS + (4 << 20) / (180.0 * (1 << 20)) * 1e9,
			   0.01 * MS);
	uf_sim_model_exit(&m);
}

Test(sim_model, bad_specs)
{
	static const char *const bad[] = {
		"", "floppy", "hdd,", "hdd,size", "hdd,size=", "hdd,size=1x",
		"hdd,nosuch=1", "hdd,lbs=1024", "hdd,qd=0", "hdd,qd=257",
		"ssd,bw=0", "hdd,size=4097", "hdd,keep_data=2",
		"hdd,seek_t2t_us=9000", "hdd,rpm=0", "hdd,max_kb=6",
		"hdd,size=99999999999999999999",
	};
	struct uf_sim_config c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(uf_sim_config_parse(&c, bad[i]), -EINVAL, "\"%s\"",
			     bad[i]);
	cr_expect_eq(uf_sim_config_parse(&c, NULL), -EINVAL);
	cr_assert_eq(uf_sim_config_parse(&c, "ssd,size=2g,qd=4,keep_data=0"),
		     0);
	cr_assert_eq(c.size, 2ull << 30);
	cr_assert_eq(c.qd, 4);
	cr_assert(!c.keep_data);
}

/* ------------------------------------------------------------------ */
/* The engine                                                          */

static struct uf_sim *t_sim;
static struct uf_bdev *t_bdev;

static void dev_fini(void)
{
	if (t_bdev)
		uf_bdev_close(t_bdev);
	t_bdev = NULL;
	if (t_sim)
		uf_sim_destroy(t_sim);
	t_sim = NULL;
}

static struct uf_bdev *dev_open(void)
{
	struct uf_bdev_config cfg;
	int ret;

	uf_bdev_config_init(&cfg);
	cfg.engine = "sim";
	ret = uf_bdev_open("t-sim", &cfg, &t_bdev);
	cr_assert_eq(ret, 0, "open: %s", strerror(-ret));
	cr_assert_str_eq(uf_bdev_engine_name(t_bdev), "sim");
	return t_bdev;
}

static void dev_close(void)
{
	cr_assert_eq(uf_bdev_close(t_bdev), 0);
	t_bdev = NULL;
}

static struct uf_bdev *dev_make(const char *spec)
{
	int ret = uf_sim_create("t-sim", spec, &t_sim);

	cr_assert_eq(ret, 0, "create %s: %s", spec, strerror(-ret));
	return dev_open();
}

static void *page_of(uint8_t v, size_t len)
{
	void *p = aligned_alloc(PG, len);

	cr_assert_not_null(p);
	memset(p, v, len);
	return p;
}

static void dev_write(uint64_t off, uint8_t v, size_t len)
{
	void *p = page_of(v, len);

	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, len, off), (ssize_t)len);
	free(p);
}

/* Every byte of the image at [off, off+len) is v. */
static void image_is(uint64_t off, uint8_t v, size_t len)
{
	uint8_t *p = page_of(0xee, len);
	size_t i;

	cr_assert_eq(uf_sim_read(t_sim, p, len, off), 0);
	for (i = 0; i < len && p[i] == v; i++)
		;
	cr_assert_eq(i, len, "image +%zu at %" PRIu64 ": 0x%02x, want 0x%02x",
		     i, off, i < len ? p[i] : 0, v);
	free(p);
}

/* A flushed write A at 0, an unflushed B at 64 KiB over old content. */
static void two_writes(const char *spec)
{
	dev_make(spec);
	dev_write(0, 0xaa, 16 * PG);
	dev_write(64 << 10, 0x11, 16 * PG);
	cr_assert_eq(uf_bdev_flush(t_bdev), 0);
	dev_write(64 << 10, 0xbb, 16 * PG);
	image_is(64 << 10, 0xbb, 16 * PG);	/* reads see the cache */
}

Test(sim_dev, drop_cut_loses_unflushed_write, .fini = dev_fini)
{
	struct uf_sim_stats st;

	two_writes("ssd,size=16m,lbs=512");
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_DROP, 1), 0);
	image_is(0, 0xaa, 16 * PG);
	image_is(64 << 10, 0x11, 16 * PG);
	cr_assert_eq(uf_sim_get_stats(t_sim, &st), 0);
	cr_assert_eq(st.cut_lost_writes, 1);
	cr_assert_eq(st.power_cuts, 1);
}

Test(sim_dev, keep_cut_keeps_unflushed_write, .fini = dev_fini)
{
	two_writes("ssd,size=16m,lbs=512");
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_KEEP, 1), 0);
	image_is(0, 0xaa, 16 * PG);
	image_is(64 << 10, 0xbb, 16 * PG);
}

/* Sectors of B: each all old or all new; returns how many are new. */
static unsigned int torn_sectors(unsigned int sec, unsigned int *nr)
{
	uint8_t *p = page_of(0, 16 * PG);
	unsigned int i, j, new = 0;

	cr_assert_eq(uf_sim_read(t_sim, p, 16 * PG, 64 << 10), 0);
	*nr = 16 * PG / sec;
	for (i = 0; i < *nr; i++) {
		for (j = 1; j < sec; j++)
			cr_assert_eq(p[i * sec + j], p[i * sec],
				     "sector %u torn inside", i);
		cr_assert(p[i * sec] == 0x11 || p[i * sec] == 0xbb);
		new += p[i * sec] == 0xbb;
	}
	free(p);
	return new;
}

static void tear_case(enum uf_sim_cut mode, unsigned int sec)
{
	struct uf_sim_stats st;
	unsigned int nr, nr512, new;

	two_writes("ssd,size=16m,lbs=512");
	cr_assert_eq(uf_sim_power_cut(t_sim, mode, 3), 0);
	image_is(0, 0xaa, 16 * PG);
	new = torn_sectors(sec, &nr);
	cr_assert(new > 0 && new < nr, "%u of %u sectors new: not torn", new,
		  nr);
	if (sec == 4096)	/* 512 B pieces of one 4 KiB sector agree */
		cr_assert(torn_sectors(512, &nr512) == new * 8);
	cr_assert_eq(uf_sim_get_stats(t_sim, &st), 0);
	cr_assert_eq(st.cut_torn_sectors, nr - new);
}

Test(sim_dev, tear512_cut_tears_per_sector, .fini = dev_fini)
{
	tear_case(UF_SIM_CUT_TEAR512, 512);
}

Test(sim_dev, tear4k_cut_tears_per_4k, .fini = dev_fini)
{
	tear_case(UF_SIM_CUT_TEAR4K, 4096);
}

/* A deterministic mixed load on a fresh device, torn; its hash. */
static uint64_t torn_hash(uint64_t dev_seed, uint64_t cut_seed)
{
	char spec[128];
	uint64_t h, rng = 11;
	int i;

	/* a disk 100 times faster than 7200 rpm: the same PRNG, less wait */
	snprintf(spec, sizeof(spec),
		 "hdd,size=64m,rpm=720000,seek_t2t_us=10,seek_avg_us=85,seek_full_us=160,seed=%" PRIu64,
		 dev_seed);
	dev_make(spec);
	for (i = 0; i < 200; i++) {
		dev_write(t_rng(&rng) % 4096 * PG, (uint8_t)(1 + i),
			  PG * (1 + t_rng(&rng) % 8));
		if (t_rng(&rng) % 10 == 0)
			cr_assert_eq(uf_bdev_flush(t_bdev), 0);
	}
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_TEAR512, cut_seed),
		     0);
	cr_assert_eq(uf_sim_image_hash(t_sim, &h), 0);
	dev_fini();
	return h;
}

Test(sim_dev, same_seed_same_image, .fini = dev_fini)
{
	uint64_t a = torn_hash(1, 9), b = torn_hash(2, 9), c = torn_hash(1, 10);

	/* the device seed moves timings only; the cut's seed the image */
	cr_assert_eq(a, b);
	cr_assert_neq(a, c);
	cr_assert_eq(torn_hash(1, 10), c);
}

Test(sim_dev, keep_data_0_reads_zeros, .fini = dev_fini)
{
	struct uf_sim_stats st;
	uint64_t size, off = 15ull << 30;
	uint8_t *p;

	dev_make("hdd,size=16g,keep_data=0");
	cr_assert_eq(uf_bdev_size(t_bdev, &size), 0);
	cr_assert_eq(size, 16ull << 30);
	dev_write(off, 0x5a, 4 * PG);
	p = page_of(0xee, 4 * PG);
	cr_assert_eq(uf_bdev_pread(t_bdev, p, 4 * PG, off), 4 * PG);
	cr_assert_eq(p[0], 0);
	cr_assert_eq(p[4 * PG - 1], 0);
	free(p);
	cr_assert_eq(uf_sim_get_stats(t_sim, &st), 0);
	cr_assert_eq(st.zero_read_bytes, 4 * PG);
	cr_assert_eq(st.writes, 1);
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_TEAR512, 1), 0);
	cr_assert_eq(uf_sim_get_stats(t_sim, &st), 0);
	cr_assert_eq(st.cut_lost_writes, 1);
}

Test(sim_dev, off_after_cut_until_reopened, .fini = dev_fini)
{
	uint8_t *p = page_of(0x77, PG);
	struct uf_sim_stats st;

	dev_make("ssd,size=16m");
	dev_write(0, 0x33, PG);
	cr_assert_eq(uf_bdev_flush(t_bdev), 0);
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_DROP, 0), 0);
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, PG), -EIO);
	cr_assert_eq(uf_bdev_pread(t_bdev, p, PG, 0), -EIO);
	cr_assert_eq(uf_bdev_flush(t_bdev), -EIO);
	cr_assert_eq(uf_sim_get_stats(t_sim, &st), 0);
	cr_assert_eq(st.failed_off, 3);
	cr_assert_eq(uf_sim_destroy(t_sim), -EBUSY);
	dev_close();
	dev_open();	/* the reboot */
	cr_assert_eq(uf_bdev_pread(t_bdev, p, PG, 0), PG);
	cr_assert_eq(p[0], 0x33);
	cr_assert_eq(p[PG - 1], 0x33);
	free(p);
}

Test(sim_dev, cut_at_nth_request, .fini = dev_fini)
{
	dev_make("ssd,size=16m");
	cr_assert_eq(uf_sim_cut_at(t_sim, 3, UF_SIM_CUT_KEEP, 0), 0);
	dev_write(0, 0x01, PG);
	cr_assert_eq(uf_bdev_flush(t_bdev), 0);
	{
		void *p = page_of(0x02, PG);

		/* the third request: the power goes as it arrives */
		cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, PG), -EIO);
		free(p);
	}
	image_is(0, 0x01, PG);
	image_is(PG, 0x00, PG);
}

Test(sim_dev, faults_and_stall, .fini = dev_fini)
{
	struct uf_io_shape f = { .eio_offset = 8 * PG, .eio_len = PG };
	void *p = page_of(0x42, PG);
	uint64_t t0;

	dev_make("ssd,size=16m");
	cr_assert_eq(uf_sim_set_faults(t_sim, &f), 0);
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, 8 * PG), -EIO);
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, 9 * PG), PG);
	image_is(8 * PG, 0, PG);
	f.latency_us = 1;
	cr_assert_eq(uf_sim_set_faults(t_sim, &f), -EINVAL);
	memset(&f, 0, sizeof(f));
	f.eio_every_nth = 2;
	cr_assert_eq(uf_sim_set_faults(t_sim, &f), 0);
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, 0), PG);
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, 0), -EIO);
	memset(&f, 0, sizeof(f));
	cr_assert_eq(uf_sim_set_faults(t_sim, &f), 0);
	cr_assert_eq(uf_sim_stall(t_sim, 100), 0);
	t0 = uf_now_ns();
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, 0), PG);
	cr_assert_geq(uf_now_ns() - t0, 100000000ull, "stall not held");
	free(p);
}

Test(sim_dev, bad_input, .fini = dev_fini)
{
	struct uf_bdev_config cfg;
	struct uf_sim *other, *bogus = (struct uf_sim *)&cfg;
	struct uf_bdev *b;
	struct uf_sim_stats st;
	uint64_t h;
	char buf[PG];

	uf_bdev_config_init(&cfg);
	cfg.engine = "sim";
	cr_assert_eq(uf_bdev_open("t-none", &cfg, &b), -ENOENT);
	dev_make("ssd,size=1m");
	cr_assert_eq(uf_sim_create("t-sim", "ssd", &other), -EEXIST);
	cr_assert_eq(uf_sim_create(NULL, "ssd", &other), -EINVAL);
	cr_assert_eq(uf_sim_create("x", "ssd", NULL), -EINVAL);
	cr_assert_eq(uf_sim_create("x", "ssd,qd=0", &other), -EINVAL);
	cr_assert_eq(uf_bdev_open("t-sim", &cfg, &b), -EBUSY);
	cr_assert_eq(uf_sim_destroy(t_sim), -EBUSY);
	cr_assert_eq(uf_sim_destroy(NULL), -EBADF);
	cr_assert_eq(uf_sim_destroy(bogus), -EBADF);
	cr_assert_eq(uf_sim_power_cut(NULL, UF_SIM_CUT_DROP, 0), -EBADF);
	cr_assert_eq(uf_sim_power_cut(t_sim, (enum uf_sim_cut)9, 0), -EINVAL);
	cr_assert_eq(uf_sim_cut_at(t_sim, 1, (enum uf_sim_cut)-1, 0), -EINVAL);
	cr_assert_eq(uf_sim_read(t_sim, buf, PG, 1 << 20), -ERANGE);
	cr_assert_eq(uf_sim_read(t_sim, buf, 2 << 20, 0), -ERANGE);
	cr_assert_eq(uf_sim_read(t_sim, NULL, PG, 0), -EINVAL);
	cr_assert_eq(uf_sim_read(bogus, buf, PG, 0), -EBADF);
	cr_assert_eq(uf_sim_image_hash(t_sim, NULL), -EINVAL);
	cr_assert_eq(uf_sim_get_stats(t_sim, NULL), -EINVAL);
	cr_assert_eq(uf_sim_get_stats(NULL, &st), -EBADF);
	cr_assert_eq(uf_sim_image_hash(NULL, &h), -EBADF);
	cr_assert_eq(uf_sim_stall(NULL, 1), -EBADF);
	/* a sim device is reached only by engine "sim", and the other way */
	cfg.engine = NULL;
	cr_assert_neq(uf_bdev_open("t-sim", &cfg, &b), 0);
}
