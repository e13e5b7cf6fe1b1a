// SPDX-License-Identifier: MIT
/*
 * Description: what lies under a file on a modelled disk (io/sim.h,
 * "Block placement" and "Write cache").
 *
 * sim_alloc: alloc=stream places a logical 8 MiB window at the stream
 * goal when the first write reaches it, so windows written in turn lie
 * in that order; interleaved streams then seek over windows, not over
 * the disk; a read of blocks no write reached is a hole, answered ahead
 * of the queue with zeros; alloc=none leaves every byte at its offset.
 * sim_wcache: with the drive's write cache, a write that fits completes
 * at the link's rate; the cache destages by shortest positioning time
 * first, so interleaved short streams go out several times faster than
 * served in arrival order; a sequential stream still runs at the media
 * rate; a flush completes only once the cache is empty; bad specs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "io/sim.h"
#include "sim_fixture.h"
#include "uflush.h"

#define PG	4096u
#define MIB	((uint64_t)1 << 20)
#define WIN	(8 * MIB)

/*
 * @streams writers, each its own region of the disk @gap apart, write
 * @chunk at a time in turn, @rounds times, all arriving at 0 (a flusher
 * that keeps the queue full).  Returns when the last one completes.
 */
static uint64_t interleave(struct uf_sim_model *m, unsigned int streams,
			   uint64_t gap, uint64_t chunk, unsigned int rounds)
{
	uint64_t done = 0;
	unsigned int r, k;

	for (r = 0; r < rounds; r++)
		for (k = 0; k < streams; k++)
			done = uf_sim_model_schedule(m, UF_IO_WRITE,
						     k * gap + r * chunk,
						     chunk, 0);
	return done;
}

static double mibs(uint64_t bytes, uint64_t ns)
{
	return (double)bytes / MIB / (ns / 1e9);
}

Test(sim_alloc, windows_lie_in_first_write_order)
{
	struct uf_sim_model m;
	unsigned int k;

	sim_model_open(&m, "hdd,size=1t,alloc=stream");
	interleave(&m, 100, 10ull << 30, 100 << 10, 3);
	for (k = 0; k < 100; k++) {
		uint64_t at = (uint64_t)k * (10ull << 30);

		cr_assert_eq(uf_sim_model_phys(&m, at), k * WIN,
			     "stream %u at %" PRIu64 " MiB", k,
			     uf_sim_model_phys(&m, at) / MIB);
		/* a window's blocks in order */
		cr_assert_eq(uf_sim_model_phys(&m, at + 300 * 1024),
			     k * WIN + 300 * 1024);
	}
	cr_assert_eq(m.nr_win_alloc, 100);
	uf_sim_model_exit(&m);

	sim_model_open(&m, "hdd,size=1t");
	interleave(&m, 4, 10ull << 30, 100 << 10, 1);
	cr_assert_eq(uf_sim_model_phys(&m, 3 * (10ull << 30)),
		     3 * (10ull << 30));
	uf_sim_model_exit(&m);
}

Test(sim_alloc, interleaved_streams_seek_over_windows_not_the_disk)
{
	struct uf_sim_model a, n;
	uint64_t ta, tn, bytes = 100ull * 20 * (256 << 10);

	sim_model_open(&a, "hdd,size=1t,alloc=stream");
	sim_model_open(&n, "hdd,size=1t");
	ta = interleave(&a, 100, 10ull << 30, 256 << 10, 20);
	tn = interleave(&n, 100, 10ull << 30, 256 << 10, 20);
	printf("sim_alloc: 100 streams, 256 KiB in turn: %.1f MiB/s placed by alloc=stream, %.1f at their offsets\n",
	       mibs(bytes, ta), mibs(bytes, tn));
	/* 8 MiB seeks (about t2t) instead of 10 GiB ones (about 3 ms) */
	cr_assert_lt(ta, tn * 0.85, "alloc=stream %.1f, none %.1f MiB/s",
		     mibs(bytes, ta), mibs(bytes, tn));
	uf_sim_model_exit(&a);
	uf_sim_model_exit(&n);
}

Test(sim_alloc, holes_are_reads_no_write_reached)
{
	struct uf_sim_model m;

	sim_model_open(&m, "hdd,size=16g,alloc=stream");
	cr_assert(uf_sim_model_hole(&m, UF_IO_READ, 0, PG));
	uf_sim_model_schedule(&m, UF_IO_WRITE, 4 * PG, PG, 0);
	cr_assert(uf_sim_model_hole(&m, UF_IO_READ, 0, 4 * PG));
	cr_assert(!uf_sim_model_hole(&m, UF_IO_READ, 0, 5 * PG));
	cr_assert(!uf_sim_model_hole(&m, UF_IO_READ, 4 * PG + 512, 512));
	cr_assert(uf_sim_model_hole(&m, UF_IO_READ, 5 * PG, PG));
	cr_assert(!uf_sim_model_hole(&m, UF_IO_WRITE, 0, PG));
	uf_sim_model_exit(&m);
	sim_model_open(&m, "hdd,size=16g");
	cr_assert(!uf_sim_model_hole(&m, UF_IO_READ, 0, PG));
	uf_sim_model_exit(&m);
}

/* ------------------------------------------------------------------ */
/* Through the engine                                                  */

static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t order_cond = PTHREAD_COND_INITIALIZER;
static int order[64], nr_order;

static void order_end(struct uf_io_req *req, int res)
{
	cr_assert_geq(res, 0, "request %d: %d", (int)(intptr_t)req->private,
		      res);
	pthread_mutex_lock(&order_lock);
	order[nr_order++] = (int)(intptr_t)req->private;
	pthread_cond_signal(&order_cond);
	pthread_mutex_unlock(&order_lock);
}

Test(sim_alloc, hole_read_goes_ahead_of_the_queue, .fini = sim_dev_fini)
{
	static struct uf_io_req rq[9];
	static struct iovec iov[9];
	struct uf_io_req *batch[9];
	struct uf_sim_stats st;
	uint8_t *buf = aligned_alloc(PG, 9 * MIB);
	unsigned int i;

	cr_assert_not_null(buf);
	memset(buf, 0x5a, 9 * MIB);
	sim_dev_make("hdd,size=16g,alloc=stream");
	/* 8 writes of 1 MiB far apart, then a read of a block never written */
	for (i = 0; i < 9; i++) {
		iov[i].iov_base = buf + i * MIB;
		iov[i].iov_len = i < 8 ? MIB : PG;
		rq[i] = (struct uf_io_req){
			.op = i < 8 ? UF_IO_WRITE : UF_IO_READ,
			.offset = i < 8 ? i * (1ull << 30) : 15ull << 30,
			.iov = &iov[i], .nr_iov = 1, .end_io = order_end,
			.private = (void *)(intptr_t)i,
		};
		batch[i] = &rq[i];
	}
	nr_order = 0;
	cr_assert_eq(uf_bdev_submit(t_bdev, batch, 8), 0);
	cr_assert_eq(uf_bdev_submit(t_bdev, batch + 8, 1), 0);
	pthread_mutex_lock(&order_lock);
	while (nr_order < 9)
		pthread_cond_wait(&order_cond, &order_lock);
	pthread_mutex_unlock(&order_lock);
	/* the writes take ~100 ms of seeks; the hole read none */
	cr_assert_lt(order[0] == 8 ? 0 : 1, 1,
		     "first completion: request %d, not the hole read", order[0]);
	cr_assert_eq(buf[8 * MIB], 0, "a hole reads as zeros");
	cr_assert_eq(uf_sim_get_stats(t_sim, &st), 0);
	cr_assert_eq(st.hole_reads, 1);
	cr_assert_eq(st.placed_windows, 8);
	/* a written block is no hole: its data comes back */
	cr_assert_eq(uf_bdev_pread(t_bdev, buf, PG, 3ull << 30), PG);
	cr_assert_eq(buf[0], 0x5a);
	cr_assert_eq(uf_sim_get_stats(t_sim, &st), 0);
	cr_assert_eq(st.hole_reads, 1);
	free(buf);
}

/* ------------------------------------------------------------------ */
/* The write cache                                                     */

Test(sim_wcache, a_write_that_fits_completes_at_the_link_rate)
{
	struct uf_sim_model m;
	uint64_t done, want = (uint64_t)(PG * 1e9 / 300e6) + 1;

	sim_model_open(&m, "hdd,size=1t,wcache_kb=32768");
	done = uf_sim_model_schedule(&m, UF_IO_WRITE, 500ull << 30, PG, 0);
	cr_assert_eq(done, want, "%" PRIu64 " ns, want %" PRIu64, done, want);
	/* without the cache: a seek and a turn first */
	uf_sim_model_exit(&m);
	sim_model_open(&m, "hdd,size=1t");
	done = uf_sim_model_schedule(&m, UF_IO_WRITE, 500ull << 30, PG, 0);
	cr_assert_gt(done, 5000000, "%" PRIu64 " ns", done);
	uf_sim_model_exit(&m);
}

Test(sim_wcache, sptf_destage_beats_arrival_order_on_short_streams)
{
	struct uf_sim_model c, n;
	uint64_t tc, tn, bytes = 100ull * 40 * (100 << 10);
	double pos;

	/* 100 streams' 100 KiB pieces in 8 MiB windows (alloc=stream) */
	sim_model_open(&c, "hdd,size=1t,alloc=stream,wcache_kb=32768");
	sim_model_open(&n, "hdd,size=1t,alloc=stream");
	interleave(&c, 100, 10ull << 30, 100 << 10, 40);
	tc = uf_sim_model_schedule(&c, UF_IO_FLUSH, 0, 0, 0);
	tn = interleave(&n, 100, 10ull << 30, 100 << 10, 40);
	pos = (double)c.destage_pos_ns / c.nr_destage / 1e6;
	printf("sim_wcache: 100 streams of 100 KiB pieces: %.1f MiB/s destaged by SPTF (%.2f ms positioning a piece), %.1f in arrival order\n",
	       mibs(bytes, tc), pos, mibs(bytes, tn));
	cr_assert_lt(tc * 2, tn, "SPTF %.1f, arrival order %.1f MiB/s",
		     mibs(bytes, tc), mibs(bytes, tn));
	/* far under a seek plus half a turn (about 5.2 ms here) */
	cr_assert_lt(pos, 2.5, "%.2f ms a piece", pos);
	uf_sim_model_exit(&c);
	uf_sim_model_exit(&n);
}

Test(sim_wcache, sequential_stream_runs_at_the_media_rate)
{
	struct uf_sim_model m;
	uint64_t done = 0, i, n = 1000;
	double r;

	sim_model_open(&m, "hdd,size=16g,bw=180m,wcache_kb=32768");
	for (i = 0; i < n; i++)
		done = uf_sim_model_schedule(&m, UF_IO_WRITE, i * MIB, MIB, 0);
	done = uf_sim_model_schedule(&m, UF_IO_FLUSH, 0, 0, 0);
	r = mibs(n * MIB, done);
	cr_assert(r > 179 && r < 180.5, "%.2f MiB/s", r);
	uf_sim_model_exit(&m);
}

Test(sim_wcache, flush_completes_once_the_cache_is_empty)
{
	struct uf_sim_model m;
	uint64_t w = 0, f, i;

	sim_model_open(&m, "hdd,size=1t,wcache_kb=32768");
	/* 16 scattered MiB: in the cache at the link's rate */
	for (i = 0; i < 16; i++)
		w = uf_sim_model_schedule(&m, UF_IO_WRITE, i * (37ull << 30),
					  MIB, 0);
	cr_assert_lt(w, 60000000, "%" PRIu64 " ns", w);
	f = uf_sim_model_schedule(&m, UF_IO_FLUSH, 0, 0, w);
	cr_assert_eq(m.nr_seg, 0);
	cr_assert_eq(m.wc_bytes, 0);
	/* 16 pieces, each a transfer of 1 MiB at 180 MiB/s plus a seek */
	cr_assert_gt(f, 16 * (MIB * 1000000000ull / (180 * MIB)),
		     "%" PRIu64 " ns", f);
	cr_assert_eq(m.nr_destage, 16);
	uf_sim_model_exit(&m);
}

Test(sim_wcache, a_full_cache_holds_the_write_until_destaged)
{
	struct uf_sim_model m;
	uint64_t done = 0, i, xfer = MIB * 1000000000ull / (180 * MIB);

	/* 20 scattered MiB into 4 MiB: the link could take them in 70 ms */
	sim_model_open(&m, "hdd,size=1t,wcache_kb=4096");
	for (i = 0; i < 20; i++) {
		done = uf_sim_model_schedule(&m, UF_IO_WRITE,
					     i * (47ull << 30) % m.cfg.size,
					     MIB, 0);
		cr_assert_leq(m.wc_bytes, 4 * MIB, "write %" PRIu64, i);
	}
	/* the last 16 waited for room: a media transfer each at least */
	cr_assert_gt(done, 16 * xfer, "%" PRIu64 " ns", done);
	uf_sim_model_exit(&m);
}

Test(sim_wcache, bad_specs)
{
	static const char *const bad[] = {
		"ssd,wcache_kb=1024", "hdd,wcache_kb=2000000",
		"hdd,wcache_kb=1024,iface_bw=0", "hdd,alloc=maybe", "hdd,alloc=",
	};
	struct uf_sim_config c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(uf_sim_config_parse(&c, bad[i]), -EINVAL, "\"%s\"",
			     bad[i]);
	cr_assert_eq(uf_sim_config_parse(&c, "hdd,alloc=stream,wcache_kb=32768"),
		     0);
	cr_assert(c.alloc_stream);
	cr_assert_eq(c.wcache_kb, 32768);
	cr_assert_eq(c.iface_bw, 300000000);
}
