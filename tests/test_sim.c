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
 * sim_calib: uflush-bench calib's band (bench/calib.c).
 * sim_sqlite: the SQLite VFS with engine=sim, dev= a sim device's name.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "bench/calib.h"
#include "clients/sqlite/uflush_sqlite.h"
#include "io/io.h"
#include "io/sim.h"
#include "sim_fixture.h"
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

Test(sim_model, seek_grows_with_distance)
{
	struct uf_sim_model m;
	uint64_t d, prev = 0, t;

	sim_model_open(&m, "hdd,size=1t");
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

	sim_model_open(&m, "hdd,size=16g,bw=180m");
	for (i = 0; i < n; i++)
		done = uf_sim_model_schedule(&m, UF_IO_WRITE, i * len, len, 0);
	want = (double)n * len / (180.0 * (1 << 20)) * 1e9;
	cr_assert_float_eq((double)done, want, want * 0.001,
			   "%" PRIu64 " ns for %" PRIu64 " MiB, want %.0f",
			   done, n, want);
	printf("sim_model: hdd sequential 1 MiB writes: %.1f MiB/s\n",
	       n / (done / 1e9));
	uf_sim_model_exit(&m);
}

Test(sim_model, random_4k_is_seek_bound)
{
	struct uf_sim_model m;
	uint64_t done = 0, i, n = 20000, rng = 42, blocks;
	double iops, want, rot;

	sim_model_open(&m, "hdd,size=16g,rpm=7200");
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
	printf("sim_model: hdd random 4 KiB reads, depth 1: %.1f IOPS (mean seek %.2f ms; t2t %.2f, full %.2f)\n",
	       iops, uf_sim_seek_mean_ns(&m) / MS,
	       uf_sim_seek_ns(&m, 1 << 20) / MS,
	       uf_sim_seek_ns(&m, m.cfg.size) / MS);
	uf_sim_model_exit(&m);
}

Test(sim_model, ssd_latency_and_bandwidth)
{
	struct uf_sim_model m;
	uint64_t done = 0, i;

	/* qd 32, 100 us each, ample bandwidth: 3200 requests in 10 ms */
	sim_model_open(&m, "ssd,qd=32,lat_us=100,bw=100g");
	for (i = 0; i < 3200; i++)
		done = uf_sim_model_schedule(&m, UF_IO_READ, i * 2 * PG, PG, 0);
	cr_assert_float_eq((double)done, 10 * MS, 0.05 * MS, "%" PRIu64,
			   done);
	uf_sim_model_exit(&m);
	/* 1 MiB requests at 500 MiB/s: 2 ms each whatever the depth */
	sim_model_open(&m, "ssd,qd=32,lat_us=100,bw=500m");
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

	sim_model_open(&m, spec);
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
	sim_model_open(&m, "hdd,cmd_us=500,max_kb=1024");
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
	sim_dev_make(spec);
	dev_write(0, 0xaa, 16 * PG);
	dev_write(64 << 10, 0x11, 16 * PG);
	cr_assert_eq(uf_bdev_flush(t_bdev), 0);
	dev_write(64 << 10, 0xbb, 16 * PG);
	image_is(64 << 10, 0xbb, 16 * PG);	/* reads see the cache */
}

Test(sim_dev, drop_cut_loses_unflushed_write, .fini = sim_dev_fini)
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

Test(sim_dev, keep_cut_keeps_unflushed_write, .fini = sim_dev_fini)
{
	two_writes("ssd,size=16m,lbs=512");
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_KEEP, 1), 0);
	image_is(0, 0xaa, 16 * PG);
	image_is(64 << 10, 0xbb, 16 * PG);
}

static void t_end_io(struct uf_io_req *req, int res)
{
	__atomic_store_n((int *)req->private, res == 0 ? 1 : res > 0 ? 2 : res,
			 __ATOMIC_RELEASE);
}

/*
 * REQ_PREFLUSH's rule: a flush covers the writes completed when it was
 * submitted.  A write still in flight then is not durable when the flush
 * completes, though it completes first.
 */
Test(sim_dev, flush_covers_only_completed_writes, .fini = sim_dev_fini)
{
	void *p = page_of(0x44, PG);
	struct iovec v = { .iov_base = p, .iov_len = PG };
	int wdone = 0, fdone = 0;
	struct uf_io_req w = {
		.op = UF_IO_WRITE, .offset = 0, .iov = &v, .nr_iov = 1,
		.end_io = t_end_io, .private = &wdone,
	}, f = { .op = UF_IO_FLUSH, .end_io = t_end_io, .private = &fdone };
	struct uf_io_req *reqs[2] = { &w, &f };

	sim_dev_make("ssd,size=16m,lat_us=20000,flush_us=0");
	cr_assert_eq(uf_bdev_submit(t_bdev, reqs, 2), 0);
	cr_assert_eq(uf_bdev_drain(t_bdev), 0);
	cr_assert_eq(wdone, 2);
	cr_assert_eq(fdone, 1);
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_DROP, 0), 0);
	image_is(0, 0, PG);
	free(p);
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

Test(sim_dev, tear512_cut_tears_per_sector, .fini = sim_dev_fini)
{
	tear_case(UF_SIM_CUT_TEAR512, 512);
}

Test(sim_dev, tear4k_cut_tears_per_4k, .fini = sim_dev_fini)
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
	sim_dev_make(spec);
	for (i = 0; i < 200; i++) {
		dev_write(t_rng(&rng) % 4096 * PG, (uint8_t)(1 + i),
			  PG * (1 + t_rng(&rng) % 8));
		if (t_rng(&rng) % 10 == 0)
			cr_assert_eq(uf_bdev_flush(t_bdev), 0);
	}
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_TEAR512, cut_seed),
		     0);
	cr_assert_eq(uf_sim_image_hash(t_sim, &h), 0);
	sim_dev_fini();
	return h;
}

Test(sim_dev, same_seed_same_image, .fini = sim_dev_fini)
{
	uint64_t a = torn_hash(1, 9), b = torn_hash(2, 9), c = torn_hash(1, 10);

	/* the device seed moves timings only; the cut's seed the image */
	cr_assert_eq(a, b);
	cr_assert_neq(a, c);
	cr_assert_eq(torn_hash(1, 10), c);
}

Test(sim_dev, keep_data_0_reads_zeros, .fini = sim_dev_fini)
{
	struct uf_sim_stats st;
	uint64_t size, off = 15ull << 30;
	uint8_t *p;

	sim_dev_make("hdd,size=16g,keep_data=0");
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

Test(sim_dev, off_after_cut_until_reopened, .fini = sim_dev_fini)
{
	uint8_t *p = page_of(0x77, PG);
	struct uf_sim_stats st;

	sim_dev_make("ssd,size=16m");
	dev_write(0, 0x33, PG);
	cr_assert_eq(uf_bdev_flush(t_bdev), 0);
	cr_assert_eq(uf_sim_power_cut(t_sim, UF_SIM_CUT_DROP, 0), 0);
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, PG), -EIO);
	cr_assert_eq(uf_bdev_pread(t_bdev, p, PG, 0), -EIO);
	cr_assert_eq(uf_bdev_flush(t_bdev), -EIO);
	cr_assert_eq(uf_sim_get_stats(t_sim, &st), 0);
	cr_assert_eq(st.failed_off, 3);
	cr_assert_eq(uf_sim_destroy(t_sim), -EBUSY);
	sim_dev_close();
	sim_dev_open();	/* the reboot */
	cr_assert_eq(uf_bdev_pread(t_bdev, p, PG, 0), PG);
	cr_assert_eq(p[0], 0x33);
	cr_assert_eq(p[PG - 1], 0x33);
	free(p);
}

Test(sim_dev, cut_at_nth_request, .fini = sim_dev_fini)
{
	sim_dev_make("ssd,size=16m");
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

/* Armed while closed (or off), the count starts at the next power-on. */
Test(sim_dev, cut_at_armed_closed_counts_from_power_on, .fini = sim_dev_fini)
{
	void *p = page_of(0x05, PG);
	unsigned int i;

	sim_dev_make("ssd,size=16m");
	for (i = 0; i < 5; i++)
		dev_write((uint64_t)i * PG, 0x04, PG);
	cr_assert_eq(uf_bdev_flush(t_bdev), 0);
	sim_dev_close();
	cr_assert_eq(uf_sim_cut_at(t_sim, 2, UF_SIM_CUT_DROP, 0), 0);
	sim_dev_open();
	dev_write(0, 0x05, PG);		/* request 1 after power-on */
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, PG), -EIO);	/* 2: cut */
	image_is(0, 0x04, 2 * PG);	/* the drop took request 1 too */
	/* off after a cut: armed again, it counts from the reboot */
	cr_assert_eq(uf_sim_cut_at(t_sim, 1, UF_SIM_CUT_DROP, 0), 0);
	sim_dev_close();
	sim_dev_open();
	cr_assert_eq(uf_bdev_pwrite(t_bdev, p, PG, 0), -EIO);
	free(p);
}

Test(sim_dev, faults_and_stall, .fini = sim_dev_fini)
{
	struct uf_io_shape f = { .eio_offset = 8 * PG, .eio_len = PG };
	void *p = page_of(0x42, PG);
	uint64_t t0;

	sim_dev_make("ssd,size=16m");
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

Test(sim_dev, bad_input, .fini = sim_dev_fini)
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
	sim_dev_make("ssd,size=1m");
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

/* ------------------------------------------------------------------ */
/* Power-cut crash test: uflush over a sim device                      */

/*
 * One seed is one run: a cache on a fresh sim device (four files), a
 * random sequence of uf_pwrite, page-API writes, uf_fsync, uf_fdatasync
 * and uf_sync, and a power cut armed at a random request number (so it
 * can land inside an fsync's writes or its flush), or made after the
 * last operation.  The device has no flusher thread and the dirty limits
 * are out of reach, so the request sequence is a function of the seed
 * alone, and with it the image the cut leaves: a failing seed replays
 * exactly (UF_SIM_CRASH_SEED=N, suite sim_crash, test replay).
 *
 * The rule, per 512 B sector (a tear cut keeps or drops each alone): the
 * reopened image shows the sector after some prefix, in order, of the
 * writes to it, and that prefix holds every acknowledged one (a write
 * whose file was then fsynced, fdatasynced or synced successfully).
 */
#define PC_FILES	4
#define PC_FILE_SIZE	(512u << 10)
#define PC_DEV_SIZE	((uint64_t)PC_FILES * PC_FILE_SIZE)
#define PC_SEC		512u
#define PC_OPS		80
#define PC_SEEDS	200

static const char *const pc_policies[] = {
	"linux-3.2", "linux-3.1", "kara-v4.2", "wu-riw", "mainline",
};
static const char *const pc_modes[] = { "drop", "keep", "tear512", "tear4k" };

struct pc_write {
	uint64_t off;		/* device offset */
	uint32_t len, ver;
};

struct pc_run {
	uint64_t seed, rng;
	bool verbose;
	struct pc_write w[PC_OPS];
	unsigned int nr_w;
	uint32_t ver;
	uint32_t acked[PC_FILES];	/* versions below are durable */
	unsigned int nr_acks;
	int mode;
	uint64_t cut_nth;
	char why[256];
	uint64_t hash;
	struct uf_sim *sim;
};

/* The byte version ver puts at device offset off. */
static uint8_t pc_byte(uint64_t off, uint32_t ver)
{
	uint64_t x = (off >> 3) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)ver * 0xc2b2ae3d27d4eb4full;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint8_t)(x >> ((off & 7) * 8));
}

static void pc_fill(uint8_t *buf, uint64_t off, size_t len, uint32_t ver)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pc_byte(off + i, ver);
}

static uint64_t pc_below(struct pc_run *r, uint64_t n)
{
	return t_rng(&r->rng) % n;
}

static void pc_log(struct pc_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pc_log(struct pc_run *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->verbose)
		return;
	va_start(ap, fmt);
	printf("sim_crash seed %" PRIu64 ": ", r->seed);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

/* Record a write before it is made: it may then be on the device. */
static struct pc_write *pc_note(struct pc_run *r, int fi, uint64_t off,
				uint32_t len)
{
	struct pc_write *w = &r->w[r->nr_w++];

	w->off = (uint64_t)fi * PC_FILE_SIZE + off;
	w->len = len;
	w->ver = r->ver++;
	return w;
}

static int pc_pwrite(struct pc_run *r, struct uf_file *f, int fi,
		     uint8_t *buf)
{
	uint64_t off = pc_below(r, PC_FILE_SIZE);
	uint32_t len = pc_below(r, 4) ? 1 + (uint32_t)pc_below(r, 16 << 10) :
		       (64 << 10) + (uint32_t)pc_below(r, 64 << 10);
	struct pc_write *w;
	ssize_t ret;

	if (len > PC_FILE_SIZE - off)
		len = (uint32_t)(PC_FILE_SIZE - off);
	w = pc_note(r, fi, off, len);
	pc_fill(buf, w->off, len, w->ver);
	ret = uf_pwrite(f, buf, len, off);
	pc_log(r, "pwrite file %d +%" PRIu64 " len %u ver %u: %zd", fi, off,
	       len, w->ver, ret);
	return ret == (ssize_t)len ? 0 : ret < 0 ? (int)ret : -EIO;
}

static int pc_page(struct pc_run *r, struct uf_file *f, int fi)
{
	unsigned long index = (unsigned long)pc_below(r, PC_FILE_SIZE / PG);
	bool noread = pc_below(r, 4) == 0;
	uint32_t a = 0, b = PG;
	struct pc_write *w;
	struct uf_page *p;
	int ret;

	if (!noread) {
		a = (uint32_t)pc_below(r, PG);
		b = a + 1 + (uint32_t)pc_below(r, PG - a);
	}
	ret = uf_page_get(f, index, UF_PAGE_WRITE |
			  (noread ? UF_PAGE_NOREAD : 0), &p);
	pc_log(r, "page_get file %d index %lu%s: %d", fi, index,
	       noread ? " noread" : "", ret);
	if (ret)
		return ret;
	/* a NOREAD miss is zeros, not the file: the write covers it all */
	w = pc_note(r, fi, (uint64_t)index * PG + a, b - a);
	pc_fill((uint8_t *)uf_page_data(p) + a, w->off, w->len, w->ver);
	ret = uf_page_set_dirty(p);
	uf_page_put(p);
	return ret;
}

static int pc_sync(struct pc_run *r, struct uf_cache *c,
		   struct uf_file **files, int fi, int kind)
{
	int ret, i;

	ret = kind == 0 ? uf_fsync(files[fi]) :
	      kind == 1 ? uf_fdatasync(files[fi]) : uf_sync(c);
	pc_log(r, "%s file %d: %d", kind == 0 ? "fsync" :
	       kind == 1 ? "fdatasync" : "sync", kind == 2 ? -1 : fi, ret);
	if (ret)
		return ret;
	for (i = 0; i < PC_FILES; i++)
		if (kind == 2 || i == fi)
			r->acked[i] = r->ver;
	r->nr_acks++;
	return 0;
}

static int pc_open(struct pc_run *r, const char *name, struct uf_cache **c,
		   struct uf_dev **d, struct uf_file **files)
{
	struct uf_dev_config dcfg = {
		.engine = "sim", .flags = UF_DEV_NO_FLUSHER,
	};
	struct uf_cache_config cfg;
	int i, ret;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 1024;
	cfg.policy = pc_policies[r->seed % (sizeof(pc_policies) /
					    sizeof(pc_policies[0]))];
	/* no kupdate, limits above the device: nothing writes but syncs */
	cfg.dirty_writeback_centisecs = 0;
	cfg.dirty_bytes = 3u << 20;
	cfg.dirty_background_bytes = 5u << 19;
	ret = uf_cache_open(&cfg, c);
	if (ret)
		return ret;
	ret = uf_dev_open(*c, name, &dcfg, d);
	for (i = 0; !ret && i < PC_FILES; i++)
		ret = uf_file_open(*d, (uint64_t)i + 1,
				   (uint64_t)i * PC_FILE_SIZE, PC_FILE_SIZE,
				   NULL, NULL, &files[i]);
	if (ret)
		uf_cache_close_discard(*c, UF_DISCARD_DIRTY);
	return ret;
}

static bool pc_check_sector(struct pc_run *r, const uint8_t *img,
			    uint64_t s);

/* Replays: the device's content after each operation, checked. */
static void pc_check_live(struct pc_run *r, unsigned int op)
{
	static uint8_t live[PC_DEV_SIZE];
	uint64_t s;

	if (!r->verbose || !r->sim)
		return;
	uf_sim_read(r->sim, live, PC_DEV_SIZE, 0);
	for (s = 0; s < PC_DEV_SIZE / PC_SEC; s++)
		if (!pc_check_sector(r, live, s)) {
			pc_log(r, "after op %u, before the cut: %s", op,
			       r->why);
			return;
		}
}

/* The workload, until the power goes (an error) or PC_OPS are done. */
static void pc_work(struct pc_run *r, struct uf_cache *c,
		    struct uf_file **files, uint8_t *buf)
{
	unsigned int op;
	int fi, ret = 0;
	uint64_t k;

	for (op = 0; op < PC_OPS && !ret; op++) {
		fi = (int)pc_below(r, PC_FILES);
		k = pc_below(r, 100);
		if (k < 45)
			ret = pc_pwrite(r, files[fi], fi, buf);
		else if (k < 70)
			ret = pc_page(r, files[fi], fi);
		else
			ret = pc_sync(r, c, files, fi,
				      k < 85 ? 0 : k < 95 ? 1 : 2);
		pc_check_live(r, op);
	}
}

static bool pc_touches(const struct pc_write *w, uint64_t so)
{
	return w->off < so + PC_SEC && w->off + w->len > so;
}

/* Sector s: after a prefix of its writes holding the acknowledged ones? */
static bool pc_check_sector(struct pc_run *r, const uint8_t *img, uint64_t s)
{
	uint64_t so = s * PC_SEC, lo, hi;
	unsigned int f = (unsigned int)(so / PC_FILE_SIZE), i, need = 0;
	uint8_t cur[PC_SEC];

	img += so;
	/* the prefix must reach past the last acknowledged write here */
	for (i = 0; i < r->nr_w; i++)
		if (pc_touches(&r->w[i], so) && r->w[i].ver < r->acked[f])
			need = i + 1;
	memset(cur, 0, sizeof(cur));
	if (!need && !memcmp(cur, img, PC_SEC))
		return true;
	for (i = 0; i < r->nr_w; i++) {
		const struct pc_write *w = &r->w[i];

		if (!pc_touches(w, so))
			continue;
		lo = w->off > so ? w->off : so;
		hi = w->off + w->len < so + PC_SEC ? w->off + w->len :
		     so + PC_SEC;
		pc_fill(cur + (lo - so), lo, hi - lo, w->ver);
		if (i + 1 >= need && !memcmp(cur, img, PC_SEC))
			return true;
	}
	for (i = 0; r->verbose && i < r->nr_w; i++)
		if (pc_touches(&r->w[i], so))
			pc_log(r, "  write %u: +%" PRIu64 " len %u ver %u", i,
			       r->w[i].off, r->w[i].len, r->w[i].ver);
	for (i = 0; r->verbose && i < PC_SEC; i += 64)
		pc_log(r, "  image +%u: %02x", i, img[i]);
	snprintf(r->why, sizeof(r->why),
		 "sector at device offset %" PRIu64 " (file %u) is not after any prefix of its writes holding the acknowledged ones (below version %u)",
		 so, f, r->acked[f]);
	return false;
}

/* Reopen the image through uflush and check every sector. */
static bool pc_verify(struct pc_run *r, struct uf_sim *sim,
		      const char *name, uint8_t *img)
{
	static uint8_t raw[PC_DEV_SIZE];
	struct uf_file *files[PC_FILES];
	struct uf_cache *c;
	struct uf_dev *d;
	uint64_t s;
	ssize_t n;
	int i, ret;

	ret = pc_open(r, name, &c, &d, files);
	if (ret) {
		snprintf(r->why, sizeof(r->why), "reopen: %s", strerror(-ret));
		return false;
	}
	for (i = 0; i < PC_FILES; i++) {
		n = uf_pread(files[i], img + (uint64_t)i * PC_FILE_SIZE,
			     PC_FILE_SIZE, 0);
		if (n != PC_FILE_SIZE) {
			snprintf(r->why, sizeof(r->why), "read file %d: %zd",
				 i, n);
			uf_cache_close_discard(c, UF_DISCARD_DIRTY);
			return false;
		}
	}
	uf_cache_close(c);
	/* what uflush read is the image (the engine's reads) */
	uf_sim_read(sim, raw, PC_DEV_SIZE, 0);
	for (s = 0; s < PC_DEV_SIZE && raw[s] == img[s]; s++)
		;
	if (s < PC_DEV_SIZE) {
		snprintf(r->why, sizeof(r->why),
			 "uf_pread differs from the image at %" PRIu64, s);
		return false;
	}
	for (s = 0; s < PC_DEV_SIZE / PC_SEC; s++)
		if (!pc_check_sector(r, img, s))
			return false;
	return true;
}

/* One seed, start to end; false with r->why if the rule broke. */
static bool pc_run_seed(struct pc_run *r, uint8_t *buf, uint8_t *img)
{
	struct uf_file *files[PC_FILES];
	struct uf_cache *c;
	struct uf_dev *d;
	struct uf_sim *sim;
	char name[32], spec[96];
	bool ok;
	int ret;

	r->rng = r->seed;
	r->ver = 1;
	snprintf(name, sizeof(name), "crash-%" PRIu64, r->seed);
	/* a little latency and depth: writes are in flight at a cut */
	snprintf(spec, sizeof(spec), "ssd,size=2m,lbs=4096,qd=%u,lat_us=%u",
		 1 + (unsigned int)pc_below(r, 32),
		 (unsigned int)pc_below(r, 30));
	r->mode = (int)pc_below(r, 4);
	r->cut_nth = pc_below(r, 3) ? 1 + pc_below(r, 120) : 0;
	ret = uf_sim_create(name, spec, &sim);
	if (ret) {
		snprintf(r->why, sizeof(r->why), "create: %s", strerror(-ret));
		return false;
	}
	ret = pc_open(r, name, &c, &d, files);
	if (ret) {
		snprintf(r->why, sizeof(r->why), "open: %s", strerror(-ret));
		uf_sim_destroy(sim);
		return false;
	}
	r->sim = sim;
	if (r->cut_nth)
		uf_sim_cut_at(sim, r->cut_nth, (enum uf_sim_cut)r->mode,
			      r->seed);
	pc_work(r, c, files, buf);
	uf_sim_power_cut(sim, (enum uf_sim_cut)r->mode, r->seed);
	uf_cache_close_discard(c, UF_DISCARD_DIRTY);
	uf_sim_image_hash(sim, &r->hash);
	ok = pc_verify(r, sim, name, img);
	pc_log(r, "%s: %s cut at request %" PRIu64 " (0: after the last op), %u writes, %u acks, image %016" PRIx64,
	       ok ? "ok" : "FAILED", pc_modes[r->mode], r->cut_nth, r->nr_w,
	       r->nr_acks, r->hash);
	uf_sim_destroy(sim);
	return ok;
}

static void pc_quiet(void *priv, int level, const char *msg)
{
	(void)priv;
	(void)level;
	(void)msg;
}

static uint64_t pc_env(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

Test(sim_crash, acknowledged_writes_survive_power_cuts, .timeout = 300)
{
	uint64_t base = pc_env("UF_SIM_CRASH_BASE", 1);
	uint64_t n = pc_env("UF_SIM_CRASH_SEEDS", PC_SEEDS), i, failed = 0;
	unsigned int by_mode[4] = { 0 }, acks = 0;
	uint8_t *buf = page_of(0, 128 << 10), *img = page_of(0, PC_DEV_SIZE);
	struct pc_run *r = calloc(1, sizeof(*r));

	cr_assert_not_null(r);
	uf_set_log_fn(pc_quiet, NULL);
	for (i = 0; i < n; i++) {
		memset(r, 0, sizeof(*r));
		r->seed = base + i;
		if (!pc_run_seed(r, buf, img)) {
			failed++;
			printf("sim_crash: seed %" PRIu64 " FAILED (%s cut at request %" PRIu64 "): %s; replay: UF_SIM_CRASH_SEED=%" PRIu64 " uflush-tests --filter 'sim_crash/replay'\n",
			       r->seed, pc_modes[r->mode], r->cut_nth, r->why,
			       r->seed);
		}
		by_mode[r->mode]++;
		acks += r->nr_acks;
	}
	uf_set_log_fn(NULL, NULL);
	printf("sim_crash: %" PRIu64 " seeds from %" PRIu64 " (%u drop, %u keep, %u tear512, %u tear4k cuts, %u acks): %" PRIu64 " failed\n",
	       n, base, by_mode[0], by_mode[1], by_mode[2], by_mode[3], acks,
	       failed);
	free(r);
	free(buf);
	free(img);
	cr_assert_eq(failed, 0, "%" PRIu64 " of %" PRIu64 " seeds failed",
		     failed, n);
}

Test(sim_crash, replays_exactly)
{
	uint8_t *buf = page_of(0, 128 << 10), *img = page_of(0, PC_DEV_SIZE);
	struct pc_run *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	uint64_t s;

	cr_assert(a && b);
	uf_set_log_fn(pc_quiet, NULL);
	for (s = 1000; s < 1010; s++) {
		memset(a, 0, sizeof(*a));
		memset(b, 0, sizeof(*b));
		a->seed = b->seed = s;
		cr_assert(pc_run_seed(a, buf, img), "seed %" PRIu64 ": %s", s,
			  a->why);
		cr_assert(pc_run_seed(b, buf, img), "seed %" PRIu64 ": %s", s,
			  b->why);
		cr_assert_eq(a->hash, b->hash, "seed %" PRIu64 ": image %016"
			     PRIx64 " then %016" PRIx64, s, a->hash, b->hash);
		cr_assert_eq(a->nr_w, b->nr_w);
		cr_assert_eq(a->nr_acks, b->nr_acks);
	}
	uf_set_log_fn(NULL, NULL);
	free(a);
	free(b);
	free(buf);
	free(img);
}

Test(sim_crash, replay)
{
	uint8_t *buf = page_of(0, 128 << 10), *img = page_of(0, PC_DEV_SIZE);
	struct pc_run *r = calloc(1, sizeof(*r));
	const char *v = getenv("UF_SIM_CRASH_SEED");

	cr_assert_not_null(r);
	if (!v || !*v) {
		printf("sim_crash/replay: skipped: set UF_SIM_CRASH_SEED=N to replay seed N with a trace\n");
		cr_skip_test("UF_SIM_CRASH_SEED not set");
	}
	r->seed = strtoull(v, NULL, 0);
	r->verbose = true;
	cr_assert(pc_run_seed(r, buf, img), "seed %" PRIu64 ": %s", r->seed,
		  r->why);
	free(r);
	free(buf);
	free(img);
}

/* ------------------------------------------------------------------ */
/* uflush-bench calib's comparison (bench/calib.c)                     */

Test(sim_calib, band_is_median_plus_range_or_floor)
{
	const double real[] = { 40.0, 42.0, 41.0 }, one[] = { 10.0 };
	const double gaps[] = { NAN, 5.0, NAN, 7.0 };
	struct calib_band b;

	/* range 2 > 1% of 41: median 41 +- 2 */
	calib_band(real, 3, 0.01, 0, &b);
	cr_assert_float_eq(b.median, 41.0, 1e-9);
	cr_assert_float_eq(b.lo, 39.0, 1e-9);
	cr_assert_float_eq(b.hi, 43.0, 1e-9);
	cr_assert(calib_in_band(&b, 39.0));
	cr_assert(calib_in_band(&b, 43.0));
	cr_assert_not(calib_in_band(&b, 38.9));
	cr_assert_not(calib_in_band(&b, 43.1));
	cr_assert_not(calib_in_band(&b, NAN));
	/* the floor wins over a range that happens to be small */
	calib_band(real, 3, 0.10, 0, &b);
	cr_assert_float_eq(b.half, 4.1, 1e-9);
	cr_assert(calib_in_band(&b, 36.95));
	calib_band(one, 1, 0, 3, &b);
	cr_assert_float_eq(b.lo, 7.0, 1e-9);
	cr_assert_float_eq(b.hi, 13.0, 1e-9);
	/* NANs are left out; none left: nothing is in the band */
	calib_band(gaps, 4, 0, 0, &b);
	cr_assert_eq(b.n, 2);
	cr_assert_float_eq(b.median, 6.0, 1e-9);
	cr_assert(calib_in_band(&b, 4.0));
	calib_band(gaps, 1, 0.5, 1, &b);
	cr_assert_eq(b.n, 0);
	cr_assert_not(calib_in_band(&b, 0));
	cr_assert_float_eq(calib_median(gaps, 4), 6.0, 1e-9);
	cr_assert(isnan(calib_median(gaps, 1)));
}

/* ------------------------------------------------------------------ */
/* The SQLite VFS on a sim device (engine=sim, tests/crash --sim)      */

static int t_sql_one(sqlite3 *db, const char *sql, int64_t *v)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	else if (rc == SQLITE_OK)
		rc = SQLITE_ERROR;
	sqlite3_finalize(st);
	return rc;
}

Test(sim_sqlite, vfs_engine_sim_names_a_sim_device, .fini = sim_dev_fini)
{
	const char *u = "file:t.db?vfs=uflush&dev=t-sim&engine=sim&cachesize=4M&extent=1M";
	uint64_t h0, h1;
	int64_t n = 0;
	sqlite3 *db;

	cr_assert_eq(uf_sim_create("t-sim", "ssd,size=16m", &t_sim), 0);
	cr_assert_eq(uf_sqlite_vfs_register(NULL, 0), SQLITE_OK);
	cr_assert_eq(uf_sim_image_hash(t_sim, &h0), 0);
	cr_assert_eq(sqlite3_open_v2(u, &db, SQLITE_OPEN_READWRITE |
				     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
				     NULL), SQLITE_OK, "%s",
		     uf_sqlite_last_error());
	cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(a); INSERT INTO t VALUES(7)",
				  NULL, NULL, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
	/* it went to the sim's image, and comes back from it */
	cr_assert_eq(uf_sim_image_hash(t_sim, &h1), 0);
	cr_assert_neq(h0, h1);
	cr_assert_eq(sqlite3_open_v2(u, &db, SQLITE_OPEN_READWRITE |
				     SQLITE_OPEN_URI, NULL), SQLITE_OK);
	cr_assert_eq(t_sql_one(db, "SELECT sum(a) FROM t", &n), SQLITE_OK);
	cr_assert_eq(n, 7);
	sqlite3_close(db);
	/* no such sim device: a clear error, not a path lookup */
	cr_assert_eq(sqlite3_open_v2("file:t.db?vfs=uflush&dev=t-none&engine=sim",
				     &db, SQLITE_OPEN_READWRITE |
				     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
				     NULL), SQLITE_CANTOPEN);
	cr_assert_eq(uf_sqlite_last_errno(), -ENOENT);
	sqlite3_close(db);
}
