// SPDX-License-Identifier: MIT
/*
 * tests/test_simcut.c - power cuts at virtual instants (uf_sim_cut_at_ns,
 * io/sim.c, an event on the world's clock in engine/kernel/sim.c).
 *
 * A world writes and fsyncs 64 KiB (acknowledged before the cut), arms a
 * drop cut at T (after re-arming once: the first instant must not fire),
 * then either starts a 4 MiB fsync that is in flight at T, so the clock
 * jumps to T with nothing runnable, or charges 10 ms of CPU across T.
 * Either way the cut must read exactly T, the fsync in flight and a write
 * submitted after T fail with -EIO, the acknowledged 64 KiB survive and
 * the 4 MiB (never durable) is dropped; the same seed gives the same
 * world hash, image and cut instant.  A flush the device finished by T
 * whose completion was not delivered yet (the CPU busy across T) is done:
 * its fsync returns 0 after the cut and its data survive.  Bad calls get
 * their errno.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uflush.h"
#include "uflush-internal.h"

#define MS	1000000ull
#define SMALL	(64u << 10)
#define BIG	(4u << 20)
#define BIG_OFF	(1u << 20)

struct cut_case {
	bool charge;		/* cross T by a CPU charge, else a jump */
	int step;		/* where main failed */
	uint64_t t, cut_ns, power_cuts, img;
	int ret_inflight, ret_after, early_past, early_mode;
	bool small_ok, big_dropped;
};

static uint8_t *buf;

static int open_all(const char *name, struct uf_cache **c,
		    struct uf_file **f)
{
	struct uf_dev_config dcfg = { .engine = "sim",
				      .flags = UF_DEV_NO_FLUSHER };
	struct uf_cache_config cfg;
	struct uf_dev *d;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 4096;
	cfg.dirty_writeback_centisecs = 0;
	cfg.dirty_bytes = 64u << 20;
	cfg.dirty_background_bytes = 32u << 20;
	if (uf_cache_open(&cfg, c))
		return -1;
	if (uf_dev_open(*c, name, &dcfg, &d) ||
	    uf_file_open(d, 1, 0, 8u << 20, NULL, NULL, f)) {
		uf_cache_close_discard(*c, UF_DISCARD_DIRTY);
		return -1;
	}
	return 0;
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* After the boot: what the cut left on the device. */
static int check_image(struct cut_case *cc, struct uf_sim *sim)
{
	struct uf_sim_stats st;

	if (uf_sim_get_stats(sim, &st) || uf_sim_image_hash(sim, &cc->img))
		return -1;
	cc->cut_ns = st.last_cut_ns;
	cc->power_cuts = st.power_cuts;
	if (uf_sim_read(sim, buf, SMALL, 0))
		return -1;
	cc->small_ok = all_bytes(buf, SMALL, 0xa1);
	if (uf_sim_read(sim, buf, BIG, BIG_OFF))
		return -1;
	cc->big_dropped = all_bytes(buf, BIG, 0);
	return 0;
}

static int cut_main(void *arg)
{
	struct cut_case *cc = arg;
	struct uf_cache *c;
	struct uf_file *f;
	struct uf_sim *sim;

	cc->step = 1;
	/* 100 MiB/s: 4 MiB take 40 ms, in flight at T */
	if (uf_sim_create("cut", "ssd,size=64m,bw=100m,qd=4", &sim))
		return -1;
	cc->step = 2;
	if (open_all("cut", &c, &f))
		return -1;
	cc->step = 3;
	memset(buf, 0xa1, SMALL);
	if (uf_pwrite(f, buf, SMALL, 0) != SMALL || uf_fsync(f))
		return -1;
	cc->step = 4;
	memset(buf, 0xb2, BIG);
	if (uf_pwrite(f, buf, BIG, BIG_OFF) != BIG)
		return -1;
	cc->t = uf_now_ns() + MS;
	cc->early_past = uf_sim_cut_at_ns(sim, uf_now_ns() - 1,
					  UF_SIM_CUT_DROP, 1);
	cc->early_mode = uf_sim_cut_at_ns(sim, cc->t, (enum uf_sim_cut)9, 1);
	/* armed at T / 2 first: re-arming must cancel that one */
	if (uf_sim_cut_at_ns(sim, uf_now_ns() + MS / 2, UF_SIM_CUT_DROP, 1) ||
	    uf_sim_cut_at_ns(sim, cc->t, UF_SIM_CUT_DROP, 1))
		return -1;
	cc->step = 5;
	if (cc->charge) {
		uf_sim_charge_ns(10 * MS);
		cc->ret_inflight = uf_fsync(f);
	} else {
		cc->ret_inflight = uf_fsync(f);
	}
	memset(buf, 0xc3, SMALL);
	cc->ret_after = (int)uf_pwrite(f, buf, SMALL, 2 * BIG_OFF + BIG);
	if (cc->ret_after == SMALL)
		cc->ret_after = uf_fsync(f);
	uf_cache_close_discard(c, UF_DISCARD_DIRTY);
	cc->step = 6;
	if (check_image(cc, sim) || uf_sim_destroy(sim))
		return -1;
	cc->step = 0;
	return 0;
}

static void run_cut(struct cut_case *cc, uint64_t seed,
		    struct uf_sim_result *r)
{
	struct uf_sim_opts o = { .seed = seed, .max_ns = 60ull * 1000 * MS };
	int ret;

	ret = uf_sim_run(&o, cut_main, cc, r);
	cr_assert_eq(ret, 0, "uf_sim_run: %s", strerror(-ret));
	cr_assert_eq(r->main_ret, 0, "main failed at step %d", cc->step);
}

static void check_cut(bool charge)
{
	struct cut_case a = { .charge = charge }, b = { .charge = charge };
	struct uf_sim_result ra, rb;

	buf = aligned_alloc(4096, BIG);
	cr_assert(buf);
	run_cut(&a, 7, &ra);
	printf("simcut (%s): T %" PRIu64 " ns, cut at %" PRIu64
	       " ns, in flight %d, after %d\n", charge ? "charge" : "jump",
	       a.t, a.cut_ns, a.ret_inflight, a.ret_after);
	cr_assert_eq(a.early_past, -EINVAL);
	cr_assert_eq(a.early_mode, -EINVAL);
	cr_assert_eq(a.power_cuts, 1);
	cr_assert_eq(a.cut_ns, a.t, "the cut came at %" PRIu64 " ns, not T = %"
		     PRIu64, a.cut_ns, a.t);
	cr_assert(a.small_ok, "the write fsynced before T is lost");
	cr_assert_eq(a.ret_inflight, -EIO, "the fsync across T: %d",
		     a.ret_inflight);
	cr_assert(a.big_dropped, "a write never made durable survived a drop");
	cr_assert_eq(a.ret_after, -EIO, "a write after T: %d", a.ret_after);
	run_cut(&b, 7, &rb);
	cr_assert_eq(rb.trace_hash, ra.trace_hash, "same seed, other world");
	cr_assert_eq(b.img, a.img, "same seed, other image");
	cr_assert_eq(b.cut_ns, a.cut_ns);
	free(buf);
}

Test(simcut, cut_at_t_when_the_clock_jumps, .timeout = 60)
{
	check_cut(false);
}

Test(simcut, cut_at_t_inside_a_cpu_charge, .timeout = 60)
{
	check_cut(true);
}

/*
 * What the device finished by T survives even if its completion was not
 * delivered: a task's fsync has its flush (2 ms on this device) in flight
 * when main wakes, arms a drop cut at T after the flush is due and
 * charges 10 ms of CPU across both, so the completion task cannot run
 * before T.  The flush is done at T: the fsync returns 0 after T and its
 * 64 KiB are on the image.
 */
struct done_case {
	struct uf_file *f;
	int fsync_ret;
	uint64_t fsync_end, t;
};

static int syncer_fn(void *arg)
{
	struct done_case *dc = arg;

	dc->fsync_ret = uf_fsync(dc->f);
	dc->fsync_end = uf_now_ns();
	return 0;
}

static int done_main(void *arg)
{
	struct done_case *dc = arg;
	struct uf_sim_task *t;
	struct uf_cache *c;
	struct uf_sim *sim;
	int ret = -1;

	if (uf_sim_create("cut-done", "ssd,size=64m,bw=100m,flush_us=2000",
			  &sim))
		return -1;
	if (open_all("cut-done", &c, &dc->f))
		goto out;
	memset(buf, 0xd4, SMALL);
	if (uf_pwrite(dc->f, buf, SMALL, 0) != SMALL ||
	    uf_sim_spawn("syncer", syncer_fn, dc, &t))
		goto close;
	/* the writes take 0.7 ms, then the flush is submitted: 2 ms */
	uf_sim_sleep_ns(3 * MS / 2);
	dc->t = uf_now_ns() + 2 * MS;
	if (uf_sim_cut_at_ns(sim, dc->t, UF_SIM_CUT_DROP, 1))
		goto close;
	uf_sim_charge_ns(10 * MS);
	if (uf_sim_join(t, NULL))
		goto close;
	ret = 0;
close:
	uf_cache_close_discard(c, UF_DISCARD_DIRTY);
	if (!ret && (uf_sim_read(sim, buf, SMALL, 0) ||
		     !all_bytes(buf, SMALL, 0xd4)))
		ret = -2;
out:
	uf_sim_destroy(sim);
	return ret;
}

Test(simcut, finished_by_t_is_done_though_undelivered, .timeout = 60)
{
	struct uf_sim_opts o = { .seed = 3, .max_ns = 60ull * 1000 * MS };
	struct done_case dc = { .fsync_ret = 1 };
	struct uf_sim_result r;

	buf = aligned_alloc(4096, BIG);
	cr_assert(buf);
	cr_assert_eq(uf_sim_run(&o, done_main, &dc, &r), 0);
	printf("simcut (undelivered): T %" PRIu64 " ns, fsync %d at %" PRIu64
	       " ns, main %d\n", dc.t, dc.fsync_ret, dc.fsync_end, r.main_ret);
	cr_assert_gt(dc.fsync_end, dc.t, "the fsync ended before T: the case "
		     "did not put its flush's completion after the cut");
	cr_assert_eq(dc.fsync_ret, 0, "a flush done by T failed: %d",
		     dc.fsync_ret);
	cr_assert_eq(r.main_ret, 0, "the fsynced 64 KiB are not on the image "
		     "(%d)", r.main_ret);
	free(buf);
}

/* A world's task arms it; nothing else may. */
Test(simcut, bad_calls)
{
	struct uf_sim *sim;

	cr_assert_eq(uf_sim_cut_at_ns(NULL, 1, UF_SIM_CUT_DROP, 0), -EBADF);
	cr_assert_eq(uf_sim_create("cut-bad", "ssd,size=16m", &sim), 0);
	cr_assert_eq(uf_sim_cut_at_ns(sim, 1, UF_SIM_CUT_DROP, 0), -EPERM);
	cr_assert_eq(uf_sim_cut_at_ns(sim, 1, (enum uf_sim_cut)-1, 0),
		     -EINVAL);
	cr_assert_eq(uf_sim_destroy(sim), 0);
}
