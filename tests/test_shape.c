// SPDX-License-Identifier: MIT
/*
 * Description: the shaping wrapper (io/shape.c) does what it is told, over
 * every engine, on a loop device and on a file.
 *
 * Injected errors reach end_io as -EIO, for a device range and for every
 * Nth request, and a failed write leaves its whole device range untouched
 * (checked with a raw read); the shape can be changed while the device is
 * open.  A bandwidth limit of 16 MiB/s measured over ~1.5 s comes out
 * within 0.7-1.1x; added latency delays each request by at least the
 * configured time; a stall holds every completion, also of a request
 * already in flight, for at least the given time, and then ends.
 * Lower bounds on wall time are absolute; upper bounds scale with a write
 * timed in the same test, so a loaded machine loosens them instead of
 * failing them.
 */
#include "testutil.h"

/* Submit one async request of len bytes at off; returns it for waiting. */
static void submit_one(struct uf_bdev *b, struct tu_io *io,
		       struct tu_batch *batch, enum uf_io_op op, uint64_t off,
		       void *buf, size_t len)
{
	struct uf_io_req *r = &io->req;
	int ret;

	tu_io_init(io, batch, op, off, &buf, &len, 1);
	ret = uf_bdev_submit(b, &r, 1);
	cr_assert_eq(ret, 0, "submit at %llu: %s", (unsigned long long)off,
		     strerror(-ret));
}

/* How long one synchronous page write at off takes, in ms. */
static double write_ms(struct uf_bdev *b, void *buf, uint64_t off)
{
	uint64_t t0 = uf_now_ns();

	cr_assert_eq(uf_bdev_pwrite(b, buf, TU_PAGE, off), TU_PAGE);
	return tu_ms_since(t0);
}

/*
 * The quickest of a few page writes at off with the present shape: what a
 * write costs on this machine right now, which one scheduling hiccup does
 * not inflate.  Upper bounds on wall time scale with it.
 */
static double ref_write_ms(struct uf_bdev *b, void *buf, uint64_t off)
{
	double best = write_ms(b, buf, off), ms;
	int i;

	for (i = 1; i < 3; i++) {
		ms = write_ms(b, buf, off);
		if (ms < best)
			best = ms;
	}
	return best;
}

Test(shape, needs_shaped_device, .fini = tu_fini)
{
	struct uf_io_shape shape = { .latency_us = 10 };
	struct uf_bdev *b;

	tu_dev(TU_FILE, TU_DEV_SIZE);
	b = tu_open("psync", 0, 0, NULL);
	cr_assert_eq(uf_bdev_set_shape(b, &shape), -EINVAL);
	cr_assert_eq(uf_bdev_stall(b, 10), -EINVAL);
	cr_assert_eq(uf_bdev_close(b), 0);
	tu.bdev = NULL;
	b = tu_open("psync", 0, UF_BDEV_SHAPED, NULL);
	cr_assert_eq(uf_bdev_set_shape(b, NULL), -EINVAL);
	cr_assert_eq(uf_bdev_set_shape(b, &shape), 0);
	cr_assert_eq(uf_bdev_stall(b, 1), 0);
	cr_assert_str_eq(uf_bdev_engine_name(b), "psync");
}

/* ------------------------------------------------------------------ */
/* Injected errors                                                     */

#define EIO_OFF		(1u << 20)
#define EIO_LEN		(64u << 10)
#define REQ_LEN		(16u << 10)

/*
 * Writes touching [1 MiB, +64 KiB) fail: one inside, one straddling the
 * start of the range; one beyond it succeeds.  Reads there still work.
 * Then the range is switched to reads, then shaping is turned off.
 */
static void eio_range(const char *engine, enum tu_kind kind)
{
	struct uf_io_shape shape = {
		.eio_offset = EIO_OFF,
		.eio_len = EIO_LEN,
	};
	const uint64_t lo = EIO_OFF - EIO_LEN, hi = EIO_OFF + 3 * EIO_LEN;
	const uint64_t in = EIO_OFF + REQ_LEN, across = EIO_OFF - REQ_LEN / 2;
	const uint64_t out = EIO_OFF + 2 * EIO_LEN;
	struct tu_io io[3];
	struct tu_batch batch;
	struct uf_bdev *b;
	uint8_t *buf[3];
	int i;

	tu_dev(kind, TU_DEV_SIZE);
	tu_raw_fill(tu.td.path, lo, hi - lo, 11);
	b = tu_open(engine, 0, 0, &shape);
	for (i = 0; i < 3; i++)
		buf[i] = tu_alloc(REQ_LEN);
	tu_fill(buf[0], REQ_LEN, in, 12);
	tu_fill(buf[1], REQ_LEN, across, 12);
	tu_fill(buf[2], REQ_LEN, out, 12);

	tu_batch_init(&batch);
	submit_one(b, &io[0], &batch, UF_IO_WRITE, in, buf[0], REQ_LEN);
	submit_one(b, &io[1], &batch, UF_IO_WRITE, across, buf[1], REQ_LEN);
	submit_one(b, &io[2], &batch, UF_IO_WRITE, out, buf[2], REQ_LEN);
	cr_assert_eq(tu_batch_wait(&batch, 3, TU_WAIT_MS), 0,
		     "%u of 3 completed", batch.nr_done);
	cr_assert_eq(io[0].res, -EIO, "write inside the EIO range: %d",
		     io[0].res);
	cr_assert_eq(io[1].res, -EIO, "write straddling the EIO range: %d",
		     io[1].res);
	cr_assert_eq(io[2].res, (int)REQ_LEN, "write outside: %d", io[2].res);
	cr_assert_eq(uf_bdev_flush(b), 0);

	/* failed writes left no trace, the good one landed */
	tu_raw_expect(tu.td.path, lo, out - lo, 11, "around failed writes");
	tu_raw_expect(tu.td.path, out, REQ_LEN, 12, "write outside range");
	tu_raw_expect(tu.td.path, out + REQ_LEN, hi - out - REQ_LEN, 11,
		      "after the good write");

	/* writes only (eio_ops 0): reading the range works */
	cr_assert_eq(uf_bdev_pread(b, buf[0], REQ_LEN, in), REQ_LEN);
	cr_assert_eq(tu_check(buf[0], REQ_LEN, in, 11), -1);

	/* reads only: the read fails, a write goes through */
	shape.eio_ops = 1u << UF_IO_READ;
	cr_assert_eq(uf_bdev_set_shape(b, &shape), 0);
	cr_assert_eq(uf_bdev_pread(b, buf[0], REQ_LEN, in), -EIO);
	tu_fill(buf[1], REQ_LEN, in, 13);
	cr_assert_eq(uf_bdev_pwrite(b, buf[1], REQ_LEN, in), REQ_LEN);
	tu_raw_expect(tu.td.path, in, REQ_LEN, 13, "write with read EIO");

	/* off again */
	memset(&shape, 0, sizeof(shape));
	cr_assert_eq(uf_bdev_set_shape(b, &shape), 0);
	cr_assert_eq(uf_bdev_pread(b, buf[0], REQ_LEN, in), REQ_LEN);
	cr_assert_eq(tu_check(buf[0], REQ_LEN, in, 13), -1);
	tu_fill(buf[2], REQ_LEN, across, 14);
	cr_assert_eq(uf_bdev_pwrite(b, buf[2], REQ_LEN, across), REQ_LEN);
	tu_raw_expect(tu.td.path, across, REQ_LEN, 14, "after shaping off");
	for (i = 0; i < 3; i++)
		free(buf[i]);
}

TU_ENGINE_TESTS(shape, eio_range, eio_range)

#define NTH		4
#define NTH_REQS	40

/* Every 4th of 40 writes fails: 10 of them, 4 apart, each left intact. */
static void eio_every_nth(const char *engine, enum tu_kind kind)
{
	struct uf_io_shape shape = { .eio_every_nth = NTH };
	int res[NTH_REQS], failed = 0, last = -1, i;
	struct uf_bdev *b;
	uint8_t *buf;

	tu_dev(kind, TU_DEV_SIZE);
	tu_raw_fill(tu.td.path, 0, (size_t)NTH_REQS * TU_PAGE, 15);
	b = tu_open(engine, 0, 0, &shape);
	buf = tu_alloc(TU_PAGE);
	for (i = 0; i < NTH_REQS; i++) {
		tu_fill(buf, TU_PAGE, (uint64_t)i * TU_PAGE, 16);
		res[i] = (int)uf_bdev_pwrite(b, buf, TU_PAGE,
					     (uint64_t)i * TU_PAGE);
	}
	free(buf);
	cr_assert_eq(uf_bdev_flush(b), 0);

	for (i = 0; i < NTH_REQS; i++) {
		if (res[i] == (int)TU_PAGE) {
			tu_raw_expect(tu.td.path, (uint64_t)i * TU_PAGE,
				      TU_PAGE, 16, "successful write");
			continue;
		}
		cr_assert_eq(res[i], -EIO, "write %d: %d", i, res[i]);
		cr_assert(last < 0 || i - last == NTH,
			  "failures at %d and %d, not every %dth", last, i,
			  NTH);
		last = i;
		failed++;
		tu_raw_expect(tu.td.path, (uint64_t)i * TU_PAGE, TU_PAGE, 15,
			      "failed write");
	}
	cr_assert_eq(failed, NTH_REQS / NTH, "%d of %d writes failed", failed,
		     NTH_REQS);
}

TU_ENGINE_TESTS(shape, eio_every_nth, eio_every_nth)

/* ------------------------------------------------------------------ */
/* Timing                                                              */

#define BW		(16ull << 20)
#define BW_REQ		(256u << 10)
#define BW_REQS		96	/* 24 MiB: 1.5 s at 16 MiB/s */
#define BW_BYTES	((size_t)BW_REQS * BW_REQ)

/* Write pool to [0, BW_BYTES) at depth 8; the rate in bytes per second. */
static double bw_write_all(struct uf_bdev *b, uint8_t *pool)
{
	struct uf_io_req *reqs[BW_REQS];
	struct tu_batch batch;
	struct tu_io *ios;
	uint64_t t0, t1 = 0;
	int i, ret;

	ios = calloc(BW_REQS, sizeof(*ios));
	cr_assert_not_null(ios);
	tu_batch_init(&batch);
	tu_io_init_writes(ios, reqs, &batch, pool, BW_REQ, BW_REQ, BW_REQS);
	t0 = uf_now_ns();
	ret = uf_bdev_submit(b, reqs, BW_REQS);
	cr_assert_eq(ret, 0, "submit: %s", strerror(-ret));
	cr_assert_eq(tu_batch_wait(&batch, BW_REQS, TU_WAIT_MS), 0);
	for (i = 0; i < BW_REQS; i++) {
		cr_assert_eq(ios[i].res, (int)BW_REQ, "req %d: %d", i,
			     ios[i].res);
		if (ios[i].done_ns > t1)
			t1 = ios[i].done_ns;
	}
	free(ios);
	return (double)BW_BYTES / ((double)(t1 - t0) / 1e9);
}

/*
 * 24 MiB at a 16 MiB/s cap must take 1.5 s, give or take: 0.7-1.1x the
 * cap.  Slower than 0.7x only counts against the shaper if the device
 * itself, unshaped, is clearly faster than the cap; a host disk that other
 * jobs saturate is a reason to skip, not a failure.
 */
static void bandwidth(const char *engine, enum tu_kind kind)
{
	struct uf_io_shape shape = { .bw_bytes_per_sec = BW };
	double rate, raw;
	struct uf_bdev *b;
	uint8_t *pool;

	tu_dev_mem(kind, TU_DEV_SIZE);
	b = tu_open(engine, 8, 0, &shape);
	pool = tu_alloc(BW_BYTES);
	tu_fill(pool, BW_BYTES, 0, 17);
	rate = bw_write_all(b, pool);
	cr_log_info("%s/%s on %s: %.2f MiB/s (%.2fx the limit)", engine,
		    tu_kind_name(kind), tu.td.backing, rate / (1 << 20),
		    rate / (double)BW);
	cr_assert_leq(rate, 1.1 * (double)BW,
		      "%s: %.2f MiB/s against a limit of %llu MiB/s", engine,
		      rate / (1 << 20), BW >> 20);
	tu_raw_expect(tu.td.path, 0, BW_BYTES, 17, "bandwidth-limited writes");
	if (rate < 0.7 * (double)BW) {
		memset(&shape, 0, sizeof(shape));
		cr_assert_eq(uf_bdev_set_shape(b, &shape), 0);
		raw = bw_write_all(b, pool);
		free(pool);
		if (raw < 2.0 * (double)BW)
			tu_skip("%s: device too slow or busy to check a %llu MiB/s floor: %.1f MiB/s unshaped, %.1f MiB/s shaped",
				engine, BW >> 20, raw / (1 << 20),
				rate / (1 << 20));
		cr_assert_fail("%s: %.2f MiB/s against a limit of %llu MiB/s, on a device that does %.1f MiB/s unshaped",
			       engine, rate / (1 << 20), BW >> 20,
			       raw / (1 << 20));
	}
	free(pool);
}

TU_ENGINE_TESTS(shape, bandwidth, bandwidth)

#define LAT_US		20000
#define LAT_REQS	8

/*
 * 20 ms added latency: each of 8 sequential writes, and each of 8
 * concurrent ones, takes at least 20 ms and (a sanity bound against a
 * unit mix-up, which would make it 20 s) at most 50 times that, plus 20
 * times what an unshaped write took just before.
 */
static void latency(const char *engine, enum tu_kind kind)
{
	struct uf_io_shape shape = { 0 };
	struct tu_io ios[LAT_REQS];
	struct tu_batch batch;
	struct uf_bdev *b;
	uint8_t *pool;
	double ms, max_ms;
	int i;

	tu_dev_mem(kind, TU_DEV_SIZE);
	b = tu_open(engine, LAT_REQS, UF_BDEV_SHAPED, &shape);
	pool = tu_alloc((size_t)LAT_REQS * TU_PAGE);
	tu_fill(pool, (size_t)LAT_REQS * TU_PAGE, 0, 18);
	max_ms = 50 * LAT_US / 1000.0 + 20 * ref_write_ms(b, pool, 0);
	shape.latency_us = LAT_US;
	cr_assert_eq(uf_bdev_set_shape(b, &shape), 0);

	for (i = 0; i < LAT_REQS; i++) {
		ms = write_ms(b, pool + (size_t)i * TU_PAGE,
			      (uint64_t)i * TU_PAGE);
		cr_assert_geq(ms, LAT_US / 1000.0,
			      "%s: write %d took %.2f ms with %d us latency",
			      engine, i, ms, LAT_US);
		cr_assert_lt(ms, max_ms,
			     "%s: write %d took %.1f ms (bound %.1f)", engine,
			     i, ms, max_ms);
	}

	tu_batch_init(&batch);
	for (i = 0; i < LAT_REQS; i++)
		submit_one(b, &ios[i], &batch, UF_IO_READ,
			   (uint64_t)i * TU_PAGE, pool + (size_t)i * TU_PAGE,
			   TU_PAGE);
	cr_assert_eq(tu_batch_wait(&batch, LAT_REQS, TU_WAIT_MS), 0);
	for (i = 0; i < LAT_REQS; i++) {
		ms = (double)(ios[i].done_ns - ios[i].req.submit_ns) / 1e6;
		cr_assert_eq(ios[i].res, (int)TU_PAGE);
		cr_assert_geq(ms, LAT_US / 1000.0,
			      "%s: concurrent read %d took %.2f ms", engine,
			      i, ms);
		cr_assert_lt(ms, max_ms,
			     "%s: concurrent read %d took %.1f ms (bound %.1f)",
			     engine, i, ms, max_ms);
	}
	cr_assert_eq(tu_check(pool, (size_t)LAT_REQS * TU_PAGE, 0, 18), -1);
	tu_raw_expect(tu.td.path, 0, (size_t)LAT_REQS * TU_PAGE, 18,
		      "latency writes");
	free(pool);
}

TU_ENGINE_TESTS(shape, latency, latency)

#define STALL_MS	300

/*
 * A request in flight (50 ms latency) and one submitted during the stall
 * both complete no earlier than 300 ms after the stall began, and not
 * much later: within 20 times what a 50 ms write took just before.
 * Afterwards writes are quick again: the quickest of three takes less
 * than half the stall (a stall that outlived its time would hold it for
 * a whole one) beyond 10 times the quickest unshaped write before it.
 */
static void stall(const char *engine, enum tu_kind kind)
{
	struct uf_io_shape shape = { 0 };
	double ms, ref_ms, lat_ms, max_ms;
	struct tu_io ios[2];
	struct tu_batch batch;
	struct uf_bdev *b;
	uint8_t *pool;
	uint64_t t0;
	int i;

	tu_dev_mem(kind, TU_DEV_SIZE);
	b = tu_open(engine, 0, UF_BDEV_SHAPED, &shape);
	pool = tu_alloc(3 * TU_PAGE);
	tu_fill(pool, 3 * TU_PAGE, 0, 19);
	ref_ms = ref_write_ms(b, pool + 2 * TU_PAGE, 2 * TU_PAGE);
	shape.latency_us = 50000;
	cr_assert_eq(uf_bdev_set_shape(b, &shape), 0);
	lat_ms = write_ms(b, pool, 0);
	max_ms = STALL_MS + 20 * lat_ms;

	tu_batch_init(&batch);
	submit_one(b, &ios[0], &batch, UF_IO_WRITE, 0, pool, TU_PAGE);
	t0 = uf_now_ns();
	cr_assert_eq(uf_bdev_stall(b, STALL_MS), 0);
	submit_one(b, &ios[1], &batch, UF_IO_WRITE, TU_PAGE, pool + TU_PAGE,
		   TU_PAGE);
	cr_assert_eq(tu_batch_wait(&batch, 2, TU_WAIT_MS), 0);
	for (i = 0; i < 2; i++) {
		ms = (double)(ios[i].done_ns - t0) / 1e6;
		cr_assert_eq(ios[i].res, (int)TU_PAGE);
		cr_assert_geq(ms, STALL_MS,
			      "%s: request %d completed %.1f ms into a %d ms stall",
			      engine, i, ms, STALL_MS);
		cr_assert_lt(ms, max_ms,
			     "%s: request %d completed %.1f ms after a %d ms stall began (bound %.1f, a 50 ms write took %.1f)",
			     engine, i, ms, STALL_MS, max_ms, lat_ms);
	}

	memset(&shape, 0, sizeof(shape));
	cr_assert_eq(uf_bdev_set_shape(b, &shape), 0);
	ms = ref_write_ms(b, pool + 2 * TU_PAGE, 2 * TU_PAGE);
	max_ms = STALL_MS / 2.0 + 10 * ref_ms;
	cr_assert_lt(ms, max_ms,
		     "%s: writes after the stall took %.1f ms at best (bound %.1f, %.2f ms before it)",
		     engine, ms, max_ms, ref_ms);
	tu_raw_expect(tu.td.path, 0, 3 * TU_PAGE, 19, "stalled writes");
	free(pool);
}

TU_ENGINE_TESTS(shape, stall, stall)
