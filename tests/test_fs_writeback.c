// SPDX-License-Identifier: MIT
/*
 * tests/test_fs_writeback.c - engine/fs/fs-writeback.c under the base policy:
 * the dirty inode lists and the work loop of the 3.1/3.2 kernel, one test
 * per rule of the base (3.1/3.2) lists and loop that seed 000 starts from
 * (docs/seeds.md).
 *
 * Description: each test opens a cache on the virtual clock and a device
 * without a flusher (UF_DEV_NO_FLUSHER), dirties files through the public
 * API, runs wb_writeback() itself with a hand-built work, and checks the
 * order of b_dirty / b_io / b_more_io, dirtied_when, i_state, the return
 * value and the bytes on the device.  The files' uf_file_ops hooks (called
 * by the engine with no lock held) move the clock, redirty, queue works
 * or hold I_SYNC, so the moments between the kernel's steps are reached
 * exactly, without sleeps.  Lists are printed tail first ("1,2,3": ino 1
 * is at the tail), the end b_io is consumed from and the old end of
 * b_dirty.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "testutil.h"


/* Record of what a hook saw, checked by the test afterwards. */
static struct {
	int calls;
	char b_io[128], b_more_io[128], b_dirty[128];
	char where[16][32];
	unsigned long dirtied_when[16];
	unsigned long state[16];
	int starts[16];
} seen;

/* Virtual clock at @start, the base policy; @trace: tracepoints to a file. */
static void base_setup(unsigned long start, bool trace)
{
	FX_SETUP(.start = start, .policy = "linux-3.1", .trace = trace);
}

static void fx_fini(void)
{
	fx_teardown(NULL);
	memset(&seen, 0, sizeof(seen));
}

/* ------------------------------------------------------------------ */
/* Hooks shared by several tests                                       */

static void hook_advance(struct tf *t, enum uf_wb_kind kind)
{
	(void)kind;
	uf_clock_advance((unsigned long)t->arg);
}

/* ================================================================== */
/* __mark_inode_dirty                                                  */

/*
 * Spec §1.1 (b_dirty: "the head is the newest and the tail the oldest",
 * [base]), §1.2 (dirtied_when: "time (jiffies) the inode was first
 * dirtied"), I15.  A newly dirty inode goes to the head of b_dirty with
 * dirtied_when = now; dirtying it again (pages or metadata) keeps both its
 * place and its time, or b_dirty would lose its order.
 */
Test(fs_writeback, mark_dirty_new_at_head_redirty_keeps_place_and_time,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *a, *b;
	unsigned long t0;

	base_setup(1000000, false);
	a = tf_open(1, 8);
	b = tf_open(2, 8);
	t0 = jiffies;

	tf_dirty(a, 0, 1, 1);
	cr_assert_eq(a->inode->dirtied_when, t0);
	cr_assert(istate(a) & I_DIRTY_PAGES);
	expect_list(b_dirty, "1");

	advance(7);
	tf_dirty(b, 0, 1, 2);
	cr_assert_eq(b->inode->dirtied_when, t0 + 7);
	expect_list(b_dirty, "1,2");

	/* again dirty: more pages, then metadata: no move, no new time */
	advance(7);
	tf_dirty(a, 1, 2, 1);
	mark_sync(a);
	cr_assert_eq(uf_file_mark_inode_dirty(b->f, UF_I_DIRTY_DATASYNC), 0);
	expect_list(b_dirty, "1,2");
	cr_assert_eq(a->inode->dirtied_when, t0,
		     "redirtied inode moved in time: %lu, want %lu",
		     a->inode->dirtied_when, t0);
	cr_assert_eq(b->inode->dirtied_when, t0 + 7);
	cr_assert_eq(istate(a) & I_DIRTY, I_DIRTY_PAGES | I_DIRTY_SYNC);
	cr_assert_eq(istate(b) & I_DIRTY, I_DIRTY_PAGES | I_DIRTY_DATASYNC);
	expect_list(b_io, "");
	expect_list(b_more_io, "");
	expect_b_dirty_ordered();
}

/* C's write_inode, C under I_SYNC: dirty a page, note what it did. */
static int hook_redirty_under_sync(struct tf *t, int sync)
{
	(void)sync;
	uf_clock_advance(3);
	if (tf_write(t, 1, 1, 33))
		return 0;
	spin_lock(&fx.wb->list_lock);
	__list_str(&fx.wb->b_dirty, seen.b_dirty, sizeof(seen.b_dirty));
	seen.dirtied_when[0] = t->inode->dirtied_when;
	seen.state[0] = t->inode->i_state;
	spin_unlock(&fx.wb->list_lock);
	seen.calls++;
	return 0;
}

/*
 * [base] __mark_inode_dirty: "If the inode is being synced, just update
 * its dirty state.  The unlocker will place the inode on the appropriate
 * superblock list" — an inode dirtied while I_SYNC gets only the flags.
 * Then the unlocker (spec §2.2 Base, "pages still tagged dirty,
 * nr_to_write > 0" → redirty_tail) puts it at the head, and since it is
 * older than the head, with dirtied_when = now (§2.1 redirty_tail, I15).
 */
Test(fs_writeback, mark_dirty_under_i_sync_only_sets_flags,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *a, *b, *c;
	unsigned long t0;

	base_setup(2000000, false);
	c = tf_open(3, 8);
	a = tf_open(1, 8);
	b = tf_open(2, 8);
	t0 = jiffies;
	tf_dirty(c, 0, 1, 3);
	mark_sync(c);
	advance(5);
	tf_dirty(a, 0, 1, 1);
	advance(5);
	tf_dirty(b, 0, 1, 2);
	expect_list(b_dirty, "3,1,2");

	c->on_write_inode = hook_redirty_under_sync;
	cr_assert_eq(write_inode_now(c->inode, 0), 0);
	cr_assert_eq(seen.calls, 1, "write_inode of C called %d times",
		     seen.calls);
	/* inside write_inode: flags only */
	cr_assert_str_eq(seen.b_dirty, "3,1,2",
			 "dirtying C under I_SYNC moved it: b_dirty %s",
			 seen.b_dirty);
	cr_assert_eq(seen.dirtied_when[0], t0,
		     "dirtying C under I_SYNC set dirtied_when %lu (want %lu)",
		     seen.dirtied_when[0], t0);
	cr_assert(seen.state[0] & I_SYNC);
	cr_assert(seen.state[0] & I_DIRTY_PAGES);
	/* after: requeued by writeback_single_inode (redirty_tail) */
	expect_list(b_dirty, "1,2,3");
	cr_assert_eq(c->inode->dirtied_when, t0 + 13);
	cr_assert_eq(istate(c) & (I_DIRTY | I_SYNC), I_DIRTY_PAGES);
	expect_b_dirty_ordered();
	tf_expect_on_dev(c, 0, 1, 3, "C page 0");
	tf_expect_unwritten(c, 1, 1, "C page 1, dirtied during writeback");
}

/* ================================================================== */
/* queue_io                                                            */

static void hook_snap_lists(struct tf *t, enum uf_wb_kind kind)
{
	(void)t;
	(void)kind;
	if (seen.calls++)
		return;
	spin_lock(&fx.wb->list_lock);
	__list_str(&fx.wb->b_io, seen.b_io, sizeof(seen.b_io));
	__list_str(&fx.wb->b_more_io, seen.b_more_io, sizeof(seen.b_more_io));
	__list_str(&fx.wb->b_dirty, seen.b_dirty, sizeof(seen.b_dirty));
	spin_unlock(&fx.wb->list_lock);
}

/*
 * Spec §2.1 queue_io/move_expired_inodes and "Ordering facts" [base],
 * I16: b_io is refilled only when empty, first with b_more_io, then with
 * the expired part of b_dirty taken oldest first; b_io is consumed from
 * the tail, so requeued inodes are served before newly expired ones and
 * those oldest first.
 */
Test(fs_writeback, queue_io_serves_more_io_first_then_oldest,
     .fini = fx_fini, .timeout = 60)
{
	struct wb_writeback_work w1 = mkwork(W_NONE), w2;
	struct tf *m, *a, *b, *c;
	unsigned long t0;
	long chunk, ret;

	base_setup(3000000, false);
	chunk = writeback_chunk_size(fx.bdi, &w1);
	cr_assert(chunk > 0 && chunk < 2000, "chunk %ld", chunk);
	m = tf_open(4, (unsigned long)chunk + 8);
	c = tf_open(3, 4);
	a = tf_open(1, 4);
	b = tf_open(2, 4);
	t0 = jiffies;

	/* M: one slice written, the rest parked on b_more_io */
	tf_dirty(m, 0, (unsigned long)chunk + 8, 4);
	w1.nr_pages = chunk;
	ret = run(&w1);
	cr_assert_eq(ret, chunk);
	expect_on(m, "b_more_io");

	/* then three newer inodes, dirtied in the order A, B, C */
	advance(5);
	tf_dirty(a, 0, 4, 1);
	advance(1);
	tf_dirty(b, 0, 4, 2);
	advance(1);
	tf_dirty(c, 0, 4, 3);
	advance(1);
	expect_list(b_dirty, "1,2,3");

	m->on_writepages = hook_snap_lists;
	w2 = mkwork(W_NONE);
	ret = run(&w2);
	cr_assert_str_eq(seen.b_io, "4,1,2,3",
			 "b_io after queue_io (tail first) is \"%s\"",
			 seen.b_io);
	cr_assert_str_eq(seen.b_more_io, "");
	cr_assert_str_eq(seen.b_dirty, "");
	cr_assert_eq(m->inode->dirtied_when, t0);
	cr_assert_eq(ret, 8 + 3 * 4);
	expect_list(b_io, "");
	expect_list(b_dirty, "");
	expect_list(b_more_io, "");
	tf_expect_on_dev(m, 0, (unsigned long)chunk + 8, 4, "M");
	tf_expect_on_dev(a, 0, 4, 1, "A");
	tf_expect_on_dev(b, 0, 4, 2, "B");
	tf_expect_on_dev(c, 0, 4, 3, "C");
}

/* ================================================================== */
/* kupdate (I1), with the clock about to wrap                          */

#define KUPDATE_EXPIRY(name, ...)					\
	FX_TEST(fs_writeback, name, 60, kupdate_expiry(__VA_ARGS__))

/*
 * Spec I1 (L763-767): in a for_kupdate work an inode leaves b_dirty only
 * if dirtied_when <= now - dirty_expire_interval: A dirtied exactly one
 * expire interval ago is written, C dirtied one jiffy later is not, until
 * the clock moves one more jiffy.  Run from @start, so that the cutoffs
 * cross a wrap when asked (time_after() arithmetic, spec §2 "wrap-safe").
 */
static void kupdate_expiry(unsigned long start)
{
	struct tf *a, *b, *c;
	unsigned long t0, e;
	long ret;

	base_setup(start, false);
	e = expire_jiffies();
	cr_assert_eq(e, 30UL * (unsigned long)HZ);
	a = tf_open(1, 8);
	b = tf_open(2, 8);
	c = tf_open(3, 8);
	t0 = jiffies;
	tf_dirty(a, 0, 3, 1);
	advance(1);
	tf_dirty(c, 0, 2, 3);
	advance(9999);
	tf_dirty(b, 0, 1, 2);
	advance(e - 10000);
	cr_assert_eq(jiffies, t0 + e);
	expect_list(b_dirty, "1,3,2");

	ret = run_kind(W_KUPDATE);
	cr_assert_eq(ret, 3, "kupdate wrote %ld pages, want A's 3", ret);
	expect_on(a, "none");
	cr_assert_eq(istate(a) & I_DIRTY, 0);
	expect_list(b_dirty, "3,2");
	expect_list(b_io, "");
	expect_list(b_more_io, "");
	cr_assert_eq(c->inode->dirtied_when, t0 + 1);
	cr_assert_eq(b->inode->dirtied_when, t0 + 10000);
	tf_expect_on_dev(a, 0, 3, 1, "A (expired)");
	tf_expect_unwritten(c, 0, 2, "C (one jiffy short of expiry)");
	tf_expect_unwritten(b, 0, 1, "B (not expired)");

	advance(1);
	ret = run_kind(W_KUPDATE);
	cr_assert_eq(ret, 2, "kupdate wrote %ld pages, want C's 2", ret);
	expect_list(b_dirty, "2");
	tf_expect_on_dev(c, 0, 2, 3, "C (expired now)");
	tf_expect_unwritten(b, 0, 1, "B (still not expired)");
}

KUPDATE_EXPIRY(kupdate_writes_only_expired, 1000)

/*
 * Seed 000 L526: dirtied_when=4294869658, just before 2^32.  B is dirtied
 * after 2^32 while A and C, and the cutoffs, are before it: a plain "<"
 * would take B (on a 32-bit target this is the wrap itself).
 */
KUPDATE_EXPIRY(kupdate_writes_only_expired_across_32bit_boundary,
	       4294967296UL - 5000)

/* The same across the wrap of unsigned long itself. */
KUPDATE_EXPIRY(kupdate_writes_only_expired_across_ulong_wrap, ULONG_MAX - 5000)

/* ================================================================== */
/* background                                                          */

/*
 * I2, stop part (L752): a background work stops as soon as the cache is
 * not over the background threshold.  Checked at the top of each
 * iteration: at once when it starts under it, and after the pass in
 * which it got under (the pass ends after HZ/10, I17).
 */
Test(fs_writeback, background_stops_below_threshold, .fini = fx_fini,
     .timeout = 60)
{
	struct tf *a, *b, *c;
	long ret;

	base_setup(4000000, false);
	set_bg_thresh_pages(8);
	a = tf_open(1, 4);
	b = tf_open(2, 4);
	c = tf_open(3, 4);
	tf_dirty(a, 0, 4, 1);
	advance(1);
	tf_dirty(b, 0, 4, 2);

	/* 8 dirty pages: not over 8 */
	ret = run_kind(W_BACKGROUND);
	cr_assert_eq(ret, 0);
	cr_assert_eq(a->nr_writepages + b->nr_writepages, 0);
	expect_list(b_dirty, "1,2");
	expect_list(b_io, "");

	/* 12 dirty: over; writing A takes HZ/10 + 1 and leaves 8 */
	advance(1);
	tf_dirty(c, 0, 4, 3);
	a->arg = (unsigned long)HZ / 10 + 1;
	a->on_writepages = hook_advance;
	ret = run_kind(W_BACKGROUND);
	cr_assert_eq(ret, 4, "background work wrote %ld pages, want A's 4",
		     ret);
	cr_assert_eq(b->nr_writepages + c->nr_writepages, 0,
		     "background work went on under the threshold");
	expect_list(b_io, "2,3");
	expect_list(b_dirty, "");
	tf_expect_on_dev(a, 0, 4, 1, "A");
	tf_expect_unwritten(b, 0, 4, "B");
	tf_expect_unwritten(c, 0, 4, "C");
}

/* A's writepages: time passes, and N gets dirty meanwhile. */
static void hook_dirty_other(struct tf *t, enum uf_wb_kind kind)
{
	(void)kind;
	if (seen.calls++)
		return;
	uf_clock_advance((unsigned long)t->arg);
	tf_write(&fx.tf[9], 0, 16, 9);
}

/*
 * Base cutoff (spec §0 "bg-all" is the later change, L1223-1271; §3 B4b;
 * policies/base.c cutoff_fixed): before bg-all, a background work keeps
 * older_than_this = its start time, so an inode dirtied after it started
 * is not written by it, even while the cache stays over the background
 * threshold.  (I2's "eligible in the next iteration" is bg-all, not base.)
 */
Test(fs_writeback, background_base_does_not_take_inodes_dirtied_after_start,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *a, *n;
	unsigned long t0;
	long ret;

	base_setup(5000000, false);
	set_bg_thresh_pages(8);
	a = tf_open(1, 16);
	n = tf_open(9, 16);
	tf_dirty(a, 0, 16, 1);
	advance(10);
	t0 = jiffies;
	a->arg = (unsigned long)HZ / 10 + 1;
	a->on_writepages = hook_dirty_other;

	ret = run_kind(W_BACKGROUND);
	cr_assert_eq(seen.calls, 1);
	cr_assert_eq(ret, 16, "wrote %ld pages, want A's 16 only", ret);
	cr_assert_eq(n->nr_writepages, 0,
		     "base background work wrote an inode dirtied after it started");
	cr_assert_eq(n->inode->dirtied_when, t0 + (unsigned long)HZ / 10 + 1);
	expect_list(b_dirty, "9");
	cr_assert(over_bground_thresh(fx.bdi),
		  "test setup: N should keep the cache over the threshold");
	tf_expect_unwritten(n, 0, 16, "N");
	tf_expect_on_dev(a, 0, 16, 1, "A");
}

/* ================================================================== */
/* Fixed cutoff of the other works (I3)                                */

/*
 * I3 (L749-750, L958-970): a work that is neither kupdate nor background
 * never queues an inode dirtied after its start, even one jiffy after;
 * an inode dirtied in the jiffy it started is not "after" and is taken.
 */
static void fixed_cutoff(enum wkind k)
{
	struct tf *a, *z, *n;
	unsigned long t0;
	long ret;

	base_setup(6000000, false);
	a = tf_open(1, 4);
	z = tf_open(2, 4);
	n = tf_open(9, 16);
	tf_dirty(a, 0, 4, 1);
	advance(10);
	tf_dirty(z, 0, 4, 2);	/* same jiffy as the work's start */
	t0 = jiffies;
	a->arg = 1;
	a->on_writepages = hook_dirty_other;

	ret = run_kind(k);
	cr_assert_eq(seen.calls, 1);
	cr_assert_eq(ret, 8, "wrote %ld pages, want A's and Z's 8", ret);
	expect_on(a, "none");
	expect_on(z, "none");
	cr_assert_eq(n->nr_writepages, 0,
		     "the work took an inode dirtied after its start");
	cr_assert_eq(n->inode->dirtied_when, t0 + 1);
	expect_list(b_dirty, "9");
	tf_expect_on_dev(a, 0, 4, 1, "A");
	tf_expect_on_dev(z, 0, 4, 2, "Z");
	tf_expect_unwritten(n, 0, 16, "N");
}

FX_TEST(fs_writeback, sync_none_work_has_fixed_cutoff, 60,
	fixed_cutoff(W_NONE))

FX_TEST(fs_writeback, sync_all_work_has_fixed_cutoff, 60,
	fixed_cutoff(W_SYNC))

/* ================================================================== */
/* Yielding to queued works (I4)                                       */

/* Drain the works queued by hand, as the flusher would. */
static void drain_work_list(void)
{
	wb_do_writeback(fx.wb, 0);
	spin_lock(&fx.bdi->wb_lock);
	cr_assert(list_empty(&fx.bdi->work_list));
	spin_unlock(&fx.bdi->wb_lock);
}

/*
 * I4 ([base] "yield", spec §2.4): with bdi->work_list non-empty at the top
 * of an iteration, a kupdate or background work returns before queueing
 * anything; a work of another kind does not yield (base: only those two).
 */
Test(fs_writeback, kupdate_and_background_yield_to_queued_work,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *a;
	long ret;

	base_setup(7000000, false);
	set_bg_thresh_pages(2);
	a = tf_open_dirty(1, 4, 4);
	advance(expire_jiffies() + 1);

	/* no flusher: the work stays on the list */
	bdi_start_writeback(fx.bdi, 4, WB_REASON_SYNC);
	spin_lock(&fx.bdi->wb_lock);
	cr_assert(!list_empty(&fx.bdi->work_list));
	spin_unlock(&fx.bdi->wb_lock);

	ret = run_kind(W_KUPDATE);
	cr_assert_eq(ret, 0, "kupdate did not yield: wrote %ld", ret);
	expect_list(b_dirty, "1");
	expect_list(b_io, "");

	ret = run_kind(W_BACKGROUND);
	cr_assert_eq(ret, 0, "background did not yield: wrote %ld", ret);
	expect_list(b_dirty, "1");
	expect_list(b_io, "");
	cr_assert_eq(a->nr_writepages, 0);

	ret = run_kind(W_NONE);
	cr_assert_eq(ret, 4, "a plain WB_SYNC_NONE work yielded");
	expect_on(a, "none");
	tf_expect_on_dev(a, 0, 4, 1, "A");

	drain_work_list();
}

/* Writing A takes HZ/10 + 1, and someone queues a work meanwhile. */
static void hook_queue_work(struct tf *t, enum uf_wb_kind kind)
{
	(void)t;
	(void)kind;
	if (seen.calls++)
		return;
	bdi_start_writeback(fx.bdi, 1, WB_REASON_SYNC);
	uf_clock_advance((unsigned long)HZ / 10 + 1);
}

#define YIELD_MIDWAY(name, ...)						\
	FX_TEST(fs_writeback, name, 60, yield_midway(__VA_ARGS__))

/* I4 and I17 together: the yield happens at the next iteration. */
static void yield_midway(enum wkind k, long want)
{
	struct tf *a, *b;
	long ret;

	base_setup(8000000, false);
	set_bg_thresh_pages(2);
	a = tf_open_dirty(1, 4, 4);
	advance(1);
	b = tf_open(2, 4);
	tf_dirty(b, 0, 4, 2);
	advance(expire_jiffies());
	a->on_writepages = hook_queue_work;

	ret = run_kind(k);
	cr_assert_eq(seen.calls, 1);
	cr_assert_eq(ret, want, "wrote %ld pages, want %ld", ret, want);
	if (want == 4) {
		cr_assert_eq(b->nr_writepages, 0, "B was written: no yield");
		expect_list(b_io, "2");
		tf_expect_unwritten(b, 0, 4, "B");
	} else {
		expect_on(b, "none");
		tf_expect_on_dev(b, 0, 4, 2, "B");
	}
	tf_expect_on_dev(a, 0, 4, 1, "A");
	drain_work_list();
}

YIELD_MIDWAY(kupdate_yields_between_passes, W_KUPDATE, 4)

YIELD_MIDWAY(background_yields_between_passes, W_BACKGROUND, 4)

YIELD_MIDWAY(sync_none_work_does_not_yield, W_NONE, 8)

/* ================================================================== */
/* HZ/10 (I17)                                                         */

/* Writing each inode takes t->arg jiffies; note the pass it is in. */
static void hook_pass_counter(struct tf *t, enum uf_wb_kind kind)
{
	int i = seen.calls++;

	(void)kind;
	if (i >= 16)
		return;
	uf_clock_advance((unsigned long)t->arg);
	seen.starts[i] = trace_count("writeback_start", NULL);
}

/*
 * I17 ([base] writeback_sb_inodes, __writeback_inodes_wb): once it wrote
 * something, a pass returns to wb_writeback when more than HZ/10 has gone
 * by (time_is_before_jiffies(start + HZ/10): strictly more).  b_io is not
 * refilled for the next pass while it still holds inodes (I16).
 */
Test(fs_writeback, pass_returns_after_hz_over_10, .fini = fx_fini,
     .timeout = 60)
{
	struct tf *t[4];
	unsigned long i;
	long ret;

	base_setup(9000000, true);
	cr_assert_eq(HZ % 20, 0);
	for (i = 0; i < 4; i++) {
		t[i] = tf_open(i + 1, 2);
		tf_dirty(t[i], 0, 2, (uint32_t)i + 1);
		t[i]->arg = (unsigned long)HZ / 20;
		t[i]->on_writepages = hook_pass_counter;
		advance(1);
	}

	ret = run_kind(W_NONE);
	cr_assert_eq(ret, 8);
	cr_assert_eq(seen.calls, 4);
	/* A at +HZ/20, B at +HZ/10 (not more: go on), C at +3HZ/20: stop */
	cr_assert_eq(seen.starts[0], 1);
	cr_assert_eq(seen.starts[1], 1);
	cr_assert_eq(seen.starts[2], 1,
		     "the pass ended at exactly HZ/10 (must be after it)");
	cr_assert_eq(seen.starts[3], 2,
		     "D was written in the first pass: no HZ/10 bail");
	/* passes: A-C, D (b_io not refilled), an empty one that ends it */
	cr_assert_eq(trace_count("writeback_start", NULL), 3);
	cr_assert_eq(trace_count("writeback_queue_io", NULL), 2);
	for (i = 0; i < 4; i++)
		tf_expect_on_dev(t[i], 0, 2, (uint32_t)i + 1, "file");
}

/* E's write_inode: a lock is held, and it took long. */
static int hook_eagain_slow(struct tf *t, int sync)
{
	(void)sync;
	if (!seen.calls++)
		uf_clock_advance((unsigned long)t->arg);
	return -EAGAIN;
}

static void hook_note_pass(struct tf *t, enum uf_wb_kind kind)
{
	(void)t;
	(void)kind;
	seen.starts[0] = trace_count("writeback_start", NULL);
}

/* I17: "once it wrote something" — time alone does not end a pass. */
Test(fs_writeback, pass_goes_on_after_hz_over_10_without_progress,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *e, *f;
	long ret;

	base_setup(9500000, true);
	e = tf_open(1, 2);
	f = tf_open(2, 2);
	mark_sync(e);
	advance(1);
	tf_dirty(f, 0, 2, 2);
	e->arg = (unsigned long)HZ;
	e->on_write_inode = hook_eagain_slow;
	f->on_writepages = hook_note_pass;

	ret = run_kind(W_NONE);
	cr_assert_eq(ret, 2);
	cr_assert_eq(seen.starts[0], 1,
		     "F was not written in E's pass: the pass ended without progress");
	tf_expect_on_dev(f, 0, 2, 2, "F");
}

/* ================================================================== */
/* Slice exhaustion (I13)                                              */

/* Note where @x is, its dirtied_when and state, the first time only. */
static bool note_first(struct tf *x)
{
	if (seen.calls++)
		return false;
	snprintf(seen.where[0], sizeof(seen.where[0]), "%s", which_list(x));
	seen.dirtied_when[0] = x->inode->dirtied_when;
	seen.state[0] = istate(x);
	return true;
}

static void hook_note_m(struct tf *t, enum uf_wb_kind kind)
{
	struct tf *m = &fx.tf[4];

	(void)t;
	(void)kind;
	if (note_first(m))
		seen.starts[0] = m->nr_writepages;
}

/*
 * I13 ([base], L4023-4026; §2.2 Base "pages still tagged dirty,
 * nr_to_write <= 0 (slice used up)" → requeue_io): an inode with more dirty
 * pages than writeback_chunk_size() goes to b_more_io with dirtied_when
 * unchanged, the other inodes of b_io are served, and the next queue_io
 * brings it back for the rest.
 */
Test(fs_writeback, slice_exhausted_inode_goes_to_more_io,
     .fini = fx_fini, .timeout = 60)
{
	struct wb_writeback_work w = mkwork(W_NONE);
	struct tf *m, *a;
	unsigned long t0, pages;
	long chunk, ret;

	base_setup(10000000, false);
	chunk = writeback_chunk_size(fx.bdi, &w);
	cr_assert(chunk > 0 && chunk < 2000, "chunk %ld", chunk);
	pages = (unsigned long)chunk + 76;
	m = tf_open(4, pages);
	a = tf_open(1, 2);
	t0 = jiffies;
	tf_dirty(m, 0, pages, 4);
	advance(1);
	tf_dirty(a, 0, 2, 1);
	advance(1);
	a->on_writepages = hook_note_m;

	ret = run(&w);
	cr_assert_eq(seen.calls, 1);
	cr_assert_str_eq(seen.where[0], "b_more_io",
			 "M after its first slice is on %s", seen.where[0]);
	cr_assert_eq(seen.dirtied_when[0], t0,
		     "requeue_io moved M's dirtied_when to %lu (want %lu)",
		     seen.dirtied_when[0], t0);
	cr_assert(seen.state[0] & I_DIRTY_PAGES);
	cr_assert_eq(seen.starts[0], 1);
	cr_assert_eq(m->nr_writepages, 2, "M written in %d goes, want 2",
		     m->nr_writepages);
	cr_assert_eq(ret, (long)pages + 2);
	expect_on(m, "none");
	cr_assert_eq(istate(m) & I_DIRTY, 0);
	tf_expect_on_dev(m, 0, pages, 4, "M");
	tf_expect_on_dev(a, 0, 2, 1, "A");
}

/* ================================================================== */
/* redirty_tail (I15)                                                  */

static int hook_redirty(struct tf *t, int sync)
{
	(void)sync;
	if (!seen.calls++)
		tf_write(t, 1, 1, 77);
	return 0;
}

/*
 * I15 ([base] redirty_tail, spec §2.1): an inode written but dirty again
 * goes to the head of b_dirty; being older than the head, it gets
 * dirtied_when = now, so b_dirty stays ordered and the kupdate work that
 * wrote it does not take it again.
 */
Test(fs_writeback, redirty_tail_keeps_b_dirty_ordered, .fini = fx_fini,
     .timeout = 60)
{
	struct tf *a, *b;
	unsigned long t0, now;
	long ret;

	base_setup(11000000, false);
	a = tf_open(1, 4);
	t0 = jiffies;
	tf_dirty(a, 0, 1, 1);
	mark_sync(a);
	advance(10);
	b = tf_open(2, 4);
	tf_dirty(b, 0, 1, 2);
	advance(expire_jiffies() - 5);	/* A expired, B not */
	now = jiffies;
	a->on_write_inode = hook_redirty;

	ret = run_kind(W_KUPDATE);
	cr_assert_eq(ret, 1);
	cr_assert_eq(a->nr_write_inode, 1);
	expect_list(b_dirty, "2,1");
	cr_assert_eq(a->inode->dirtied_when, now,
		     "redirty_tail left A at %lu, older than the head (%lu)",
		     a->inode->dirtied_when, b->inode->dirtied_when);
	cr_assert_eq(b->inode->dirtied_when, t0 + 10);
	cr_assert_eq(istate(a) & I_DIRTY, I_DIRTY_PAGES);
	expect_b_dirty_ordered();
	tf_expect_on_dev(a, 0, 1, 1, "A page 0");
	tf_expect_unwritten(a, 1, 1, "A page 1 (redirtied)");
}

/* ================================================================== */
/* write_inode failing (seed 000 L3956-3964, B10)                      */

static int hook_eagain(struct tf *t, int sync)
{
	(void)t;
	(void)sync;
	return -EAGAIN;
}

/*
 * Base (spec §2.2 table, "clean pages but I_DIRTY (... write_inode
 * failed)" → redirty_tail; B10): a write_inode that fails with -EAGAIN
 * leaves the inode dirty, and base puts it through redirty_tail, which,
 * the inode being older than the head of b_dirty, sets dirtied_when = now:
 * "inode writeout is put off" by a whole dirty_expire_interval (L3956-
 * 3964).  No quick retry: b_more_io stays empty and the work ends.
 */
Test(fs_writeback, write_inode_eagain_puts_inode_off_a_full_expire_interval,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *a, *b;
	unsigned long t0, now, e;
	long ret;

	base_setup(12000000, false);
	e = expire_jiffies();
	a = tf_open(1, 4);
	b = tf_open(2, 4);
	t0 = jiffies;
	mark_sync(a);
	advance(10);
	tf_dirty(b, 0, 1, 2);
	advance(e - 5);			/* A expired, B not */
	now = jiffies;
	a->on_write_inode = hook_eagain;

	ret = run_kind(W_KUPDATE);
	cr_assert_eq(ret, 0);
	cr_assert_eq(a->nr_write_inode, 1, "write_inode tried %d times",
		     a->nr_write_inode);
	cr_assert_eq(istate(a) & I_DIRTY, I_DIRTY_SYNC);
	expect_list(b_more_io, "");
	expect_list(b_dirty, "2,1");
	cr_assert_eq(a->inode->dirtied_when, now,
		     "A's dirtied_when %lu, want now %lu (was %lu)",
		     a->inode->dirtied_when, now, t0);
	expect_b_dirty_ordered();

	/* B expires before A now: A waits a whole interval more */
	advance(e - 1);
	ret = run_kind(W_KUPDATE);
	cr_assert_eq(ret, 1);
	expect_on(b, "none");
	cr_assert_eq(a->nr_write_inode, 1, "A retried before it expired again");
	expect_list(b_dirty, "1");

	advance(1);
	run_kind(W_KUPDATE);
	cr_assert_eq(a->nr_write_inode, 2);
	tf_expect_on_dev(b, 0, 1, 2, "B");
}

/*
 * The same with b_dirty empty: redirty_tail has no head to compare with
 * and keeps dirtied_when (§2.1), so kupdate retries at its next run.
 */
Test(fs_writeback, write_inode_eagain_alone_keeps_dirtied_when,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *a;
	unsigned long t0;
	long ret;

	base_setup(12500000, false);
	a = tf_open(1, 4);
	t0 = jiffies;
	mark_sync(a);
	advance(expire_jiffies());
	a->on_write_inode = hook_eagain;

	ret = run_kind(W_KUPDATE);
	cr_assert_eq(ret, 0);
	cr_assert_eq(a->nr_write_inode, 1);
	expect_list(b_dirty, "1");
	cr_assert_eq(a->inode->dirtied_when, t0);
	cr_assert_eq(istate(a) & I_DIRTY, I_DIRTY_SYNC);

	advance((unsigned long)HZ * 5);
	run_kind(W_KUPDATE);
	cr_assert_eq(a->nr_write_inode, 2);
}

/* ================================================================== */
/* Sync livelock prevention (I14)                                      */

/*
 * I14 (L4003-4012, B7; §2.2 Base: "I_DIRTY && (WB_SYNC_ALL or
 * tagged_writepages) → dirtied_when = now, then fall through" to
 * redirty_tail): a sync work, or a tagged one (writeback_inodes_sb), run
 * against a continuous redirtier writes it once, leaves it on b_dirty
 * with dirtied_when = now, and ends; the other dirty inode is written too.
 */
static void livelock_prevention(bool tagged)
{
	long ret;

	ret = sync_livelock_case("linux-3.1", 13000000,
				 tagged ? W_TAGGED : W_SYNC);
	cr_assert_eq(ret, 8 + 4);
}

FX_TEST(fs_writeback, sync_all_terminates_against_continuous_redirtier, 60,
	livelock_prevention(false))

FX_TEST(fs_writeback, tagged_work_terminates_against_continuous_redirtier, 60,
	livelock_prevention(true))

/* ================================================================== */
/* I_SYNC inodes under WB_SYNC_NONE (I18)                              */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool inside;
	struct task_struct *main_task;
	int wait_ret;
	char where[32];
	unsigned long dirtied_when;
	unsigned long state;
} hs = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/*
 * R's write_inode in the fsync thread, R under I_SYNC: dirty a page of R,
 * tell the test we are inside, and hold I_SYNC until the test's work
 * sleeps (on R's I_SYNC, as base does when a pass made no progress).
 */
static int hook_hold_i_sync(struct tf *t, int sync)
{
	(void)sync;
	if (__atomic_load_n(&t->nr_write_inode, __ATOMIC_SEQ_CST) > 1)
		return 0;
	tf_write(t, 1, 1, 21);
	pthread_mutex_lock(&hs.lock);
	hs.inside = true;
	pthread_cond_broadcast(&hs.cond);
	pthread_mutex_unlock(&hs.lock);

	hs.wait_ret = uf_wait_task_sleeping(hs.main_task, 30000);
	snprintf(hs.where, sizeof(hs.where), "%s", which_list(t));
	hs.dirtied_when = t->inode->dirtied_when;
	hs.state = istate(t);
	return 0;
}

static void *fsync_thread(void *arg)
{
	struct tf *t = arg;

	return (void *)(intptr_t)uf_fsync(t->f);
}

static void hook_note_r(struct tf *t, enum uf_wb_kind kind)
{
	(void)t;
	(void)kind;
	note_first(&fx.tf[1]);
}

/*
 * I18 ([base] writeback_single_inode, L79-83, L1552-1557).  R is under
 * writeback by an fsync (held inside its write_inode, R dirtied again
 * meanwhile); the test's work runs R (oldest) and A:
 *  - WB_SYNC_NONE: R is requeue_io'd (b_more_io, dirtied_when kept) and
 *    the work goes on with A; the next pass makes no progress, so base
 *    waits for the I_SYNC of the last b_more_io inode (B0, L73-86), and
 *    writes R's new page afterwards;
 *  - WB_SYNC_ALL: the work waits for R's I_SYNC right there, R still on
 *    b_io, then writes R, then A.
 */
static void i_sync_inode(enum wkind k)
{
	struct tf *r, *a;
	unsigned long t0;
	pthread_t th;
	void *thret;
	long ret;

	r = r_then_s("linux-3.1", 14000000, 4, 2, 1);
	a = &fx.tf[2];
	t0 = dirtied_when(r);
	r->on_write_inode = hook_hold_i_sync;
	a->on_writepages = hook_note_r;
	hs.main_task = current;

	cr_assert_eq(pthread_create(&th, NULL, fsync_thread, r), 0);
	pthread_mutex_lock(&hs.lock);
	while (!hs.inside)
		pthread_cond_wait(&hs.cond, &hs.lock);
	pthread_mutex_unlock(&hs.lock);
	cr_assert(istate(r) & I_SYNC);

	ret = run_kind(k);
	pthread_join(th, &thret);
	cr_assert_eq((int)(intptr_t)thret, 0, "fsync: %s",
		     strerror(-(int)(intptr_t)thret));
	cr_assert_eq(hs.wait_ret, 0, "the work never slept");
	cr_assert_eq(seen.calls, 1);
	if (k == W_NONE) {
		/* while A was written, R waited on b_more_io */
		cr_assert_str_eq(seen.where[0], "b_more_io",
				 "I_SYNC inode went to %s under WB_SYNC_NONE",
				 seen.where[0]);
		cr_assert_eq(seen.dirtied_when[0], t0);
		cr_assert(seen.state[0] & I_SYNC);
		/* then the work slept on R's I_SYNC, R still there */
		cr_assert_str_eq(hs.where, "b_more_io",
				 "the work slept with R on %s", hs.where);
	} else {
		/* the work slept on R's I_SYNC before anything else */
		cr_assert_str_eq(hs.where, "b_io",
				 "the work slept with R on %s", hs.where);
		cr_assert_eq(a->nr_writepages, 1);
		/* and wrote R before A */
		cr_assert_str_eq(seen.where[0], "none",
				 "R was on %s when A was written",
				 seen.where[0]);
	}
	cr_assert_eq(hs.dirtied_when, t0);
	/* R's page 1, dirtied under I_SYNC, written by the work */
	cr_assert_eq(ret, 2, "wrote %ld pages, want A's and R's page 1", ret);
	expect_on(r, "none");
	cr_assert_eq(istate(r) & (I_DIRTY | I_SYNC), 0);
	tf_expect_on_dev(r, 0, 1, 1, "R page 0 (fsync)");
	tf_expect_on_dev(r, 1, 1, 21, "R page 1 (the work)");
	tf_expect_on_dev(a, 0, 1, 2, "A");
}

FX_TEST(fs_writeback, i_sync_inode_is_requeued_under_sync_none, 60,
	i_sync_inode(W_NONE))

FX_TEST(fs_writeback, i_sync_inode_is_waited_for_under_sync_all, 60,
	i_sync_inode(W_SYNC))

/* ================================================================== */
/* Data                                                                */

/*
 * What writeback writes reaches the device byte for byte, at the file's
 * place: whole pages, a write with partial pages at both ends (the rest
 * of those pages read from the device first), a page written twice (the
 * last write wins), and nothing outside the files.
 */
Test(fs_writeback, written_data_reaches_device_byte_for_byte,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *f1, *f2, *f3;
	uint64_t base2;
	uint8_t *buf;
	long ret, bad[3];

	base_setup(15000000, false);
	f1 = tf_open(1, 10);
	f2 = tf_open(2, 3);
	f3 = tf_open(3, 2);
	base2 = f2->off;
	tu_raw_fill(fx.td.path, base2, 3 * PG, 50);

	tf_dirty(f1, 0, 10, 11);
	buf = malloc(9000);
	cr_assert_not_null(buf);
	tu_fill(buf, 9000, base2 + 100, 12);
	cr_assert_eq(uf_pwrite(f2->f, buf, 9000, 100), 9000);
	free(buf);
	tf_dirty(f3, 0, 2, 13);
	tf_dirty(f3, 1, 1, 14);
	advance(expire_jiffies());

	ret = run_kind(W_KUPDATE);
	cr_assert_eq(ret, 10 + 3 + 2);
	expect_list(b_dirty, "");
	tf_expect_on_dev(f1, 0, 10, 11, "F1");
	/* O_DIRECT reads whole blocks: read F2's 3 pages, check the parts */
	filemap_fdatawait(f2->inode->i_mapping);
	buf = tu_alloc(3 * PG);
	cr_assert_eq(tu_raw_read(fx.td.path, base2, buf, 3 * PG), 0);
	bad[0] = tu_check(buf, 100, base2, 50);
	bad[1] = tu_check(buf + 100, 9000, base2 + 100, 12);
	bad[2] = tu_check(buf + 9100, 3 * PG - 9100, base2 + 9100, 50);
	free(buf);
	cr_assert_eq(bad[0], -1, "F2 head (read back) differs at %ld", bad[0]);
	cr_assert_eq(bad[1], -1, "F2 data differs at %ld", bad[1]);
	cr_assert_eq(bad[2], -1, "F2 tail (read back) differs at %ld", bad[2]);
	tf_expect_on_dev(f3, 0, 1, 13, "F3 page 0");
	tf_expect_on_dev(f3, 1, 1, 14, "F3 page 1 (rewritten)");
	expect_zero_on_dev(f1->off + 10 * PG, PG, "past F1");
	expect_zero_on_dev(f3->off - PG, PG, "before F3");

	/* rewritten after a sync: the next sync writes the new bytes */
	tf_dirty(f1, 3, 2, 15);
	ret = run_kind(W_SYNC);
	cr_assert_eq(ret, 2);
	tf_expect_on_dev(f1, 0, 3, 11, "F1 pages 0-2");
	tf_expect_on_dev(f1, 3, 2, 15, "F1 pages 3-4 (rewritten)");
	tf_expect_on_dev(f1, 5, 5, 11, "F1 pages 5-9");
}

/*
 * 6.18's include/trace/events/writeback.h ends writeback_work_class
 * (writeback_start...), writeback_queue_io and writeback_single_inode
 * with cgroup_ino; 3.x has none.  One work of one file under each.
 */
static void run_one_traced(const char *spec)
{
	struct tf *t;

	FX_SETUP(.start = 13000000, .policy = spec, .trace = true);
	t = tf_open(1, 2);
	tf_dirty(t, 0, 2, 1);
	advance(1);
	cr_assert_eq(run_kind(W_NONE), 2, "%s", spec);
}

Test(fs_writeback, trace_fields_618_end_with_cgroup_ino, .fini = fx_fini,
     .timeout = 60)
{
	static const char *const ev[] = {
		"writeback_start", "writeback_written",
		"writeback_queue_io", "writeback_single_inode",
	};
	size_t i;

	run_one_traced("linux-6.18");
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		cr_assert_eq(trace_count(ev[i], " cgroup_ino=0"),
			     trace_count(ev[i], NULL),
			     "linux-6.18: every %s has cgroup_ino", ev[i]);
	cr_assert_gt(trace_count("writeback_single_inode", " cgroup_ino=0"), 0);
	cr_assert_gt(trace_count("writeback_queue_io", " cgroup_ino=0"), 0);
}

Test(fs_writeback, trace_fields_3x_have_no_cgroup_ino, .fini = fx_fini,
     .timeout = 60)
{
	static const char *const ev[] = {
		"writeback_start", "writeback_written",
		"writeback_queue_io", "writeback_single_inode",
	};
	size_t i;

	run_one_traced("linux-3.2");
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		cr_assert_gt(trace_count(ev[i], NULL), 0, "no %s", ev[i]);
		cr_assert_eq(trace_count(ev[i], "cgroup_ino"), 0,
			     "3.2's %s has a cgroup_ino", ev[i]);
	}
}

/* ================================================================== */
/* Linux 6.18's inode path (requeue=mainline; docs/linux-6.18.md)      */

/* F's first writepages: page 5, clean until now, is dirtied. */
static void hook_dirty_page5(struct tf *t, enum uf_wb_kind kind)
{
	(void)kind;
	if (__atomic_load_n(&t->nr_writepages, __ATOMIC_SEQ_CST) == 1)
		tf_write(t, 5, 1, 55);
}

/*
 * 6.18 __writeback_single_inode: I_DIRTY is cleared after do_writepages
 * and I_DIRTY_PAGES put back only if pages are still tagged.  F (pages 0-1
 * dirty) gets page 5 dirtied at the start of its writepages, which then
 * writes all three.  3.2 cleared I_DIRTY_PAGES before the write, so the
 * dirtying set it again on a mapping that ends clean: F goes back to
 * b_dirty flagged dirty; under 6.18 F is clean and off the lists.
 */
static void dirty_during_writepages(const char *spec, bool mainline)
{
	struct tf *f;

	FX_SETUP(.start = 16000000, .policy = spec);
	f = tf_open_dirty(1, 8, 2);
	f->on_writepages = hook_dirty_page5;
	advance(expire_jiffies() + 1);
	cr_assert_eq(run_kind(W_KUPDATE), 3, "%s: F's 3 pages", spec);
	tf_expect_on_dev(f, 5, 1, 55, "F page 5");
	if (mainline) {
		expect_on(f, "none");
		cr_assert_eq(istate(f) & I_DIRTY, 0, "%s: clean F flagged %#lx",
			     spec, istate(f));
	} else {
		expect_on(f, "b_dirty");
		cr_assert_eq(istate(f) & I_DIRTY, I_DIRTY_PAGES);
	}
}

Test(fs_writeback, mainline_clears_i_dirty_after_writepages, .fini = fx_fini,
     .timeout = 60)
{
	dirty_during_writepages("linux-3.2", false);
	fx_fini();
	dirty_during_writepages("mainline", true);
}

/*
 * 6.18 writeback_single_inode (sync_inode, write_inode_now, fsync's
 * metadata) never calls requeue_inode: a still-dirty inode not queued by
 * the flusher goes to b_dirty, one on b_io (I_SYNC_QUEUED) stays there.
 * 3.2's requeue moves both to b_more_io (pages left, nr_to_write 0 used
 * up).  F's pages are declined (veto), so they stay dirty.
 */
static void metadata_sync_keeps_lists(const char *spec, bool mainline)
{
	struct inode *inode;
	struct tf *f;

	FX_SETUP(.start = 16100000, .policy = spec);
	f = tf_open_dirty(1, 4, 2);
	mark_sync(f);
	set_veto(f, 1u << UF_WB_OTHER_NONE);
	inode = f->inode;
	advance(5);

	cr_assert_eq(sync_inode_metadata(inode, 0), 0);
	cr_assert_eq(f->nr_write_inode, 1);
	expect_on(f, mainline ? "b_dirty" : "b_more_io");

	/* as queue_io leaves it: on b_io, I_SYNC_QUEUED under 6.18 */
	mark_sync(f);
	spin_lock(&fx.wb->list_lock);
	list_move(&inode->i_wb_list, &fx.wb->b_io);
	spin_lock(&inode->i_lock);
	if (mainline)
		inode->i_state |= I_SYNC_QUEUED;
	spin_unlock(&inode->i_lock);
	spin_unlock(&fx.wb->list_lock);
	cr_assert_eq(sync_inode_metadata(inode, 0), 0);
	cr_assert_eq(f->nr_write_inode, 2);
	expect_on(f, mainline ? "b_io" : "b_more_io");
}

Test(fs_writeback, mainline_sync_inode_never_requeues, .fini = fx_fini,
     .timeout = 60)
{
	metadata_sync_keeps_lists("linux-3.2", false);
	fx_fini();
	metadata_sync_keeps_lists("mainline", true);
}

/* R's write_inode under fsync: dirty page 1 again, note R's place. */
static int hook_redirty_note(struct tf *t, int sync)
{
	(void)sync;
	tf_write(t, 1, 1, 21);
	list_str(&fx.wb->b_dirty, seen.b_dirty, sizeof(seen.b_dirty));
	seen.dirtied_when[0] = dirtied_when(t);
	return 0;
}

/*
 * 6.18 __mark_inode_dirty tests I_SYNC_QUEUED, not I_SYNC: R, fsync'ed
 * (I_SYNC) and clean by then, dirtied again from its write_inode, goes to
 * the head of b_dirty at once with dirtied_when = now.  3.x leaves an
 * I_SYNC inode where it is (its dirtied_when kept) until the requeue.
 */
static void redirty_under_fsync(const char *spec, bool mainline)
{
	unsigned long t0, t1;
	struct tf *r;

	r = r_then_s(spec, 16200000, 4, 2, 1);
	t0 = dirtied_when(r);
	r->on_write_inode = hook_redirty_note;
	t1 = jiffies;
	cr_assert_eq(uf_fsync(r->f), 0);
	cr_assert_eq(r->nr_write_inode, 1);
	if (mainline) {
		cr_assert_str_eq(seen.b_dirty, "2,1", "%s: b_dirty %s", spec,
				 seen.b_dirty);
		cr_assert_eq(seen.dirtied_when[0], t1);
	} else {
		cr_assert_str_eq(seen.b_dirty, "1,2", "%s: b_dirty %s", spec,
				 seen.b_dirty);
		cr_assert_eq(seen.dirtied_when[0], t0);
	}
	cr_assert(istate(r) & I_DIRTY_PAGES);
	/* then 3.x's requeue: pages left, nr_to_write 0 → requeue_io */
	expect_on(r, mainline ? "b_dirty" : "b_more_io");
}

Test(fs_writeback, mainline_redirty_under_fsync_goes_to_b_dirty,
     .fini = fx_fini, .timeout = 60)
{
	redirty_under_fsync("linux-3.2", false);
	fx_fini();
	redirty_under_fsync("mainline", true);
}

/* B's write_inode under fsync: hold I_SYNC until the work sleeps, then
 * note what C looked like at that moment. */
static int hook_hold_note_c(struct tf *t, int sync)
{
	struct tf *c = &fx.tf[2];

	(void)sync;
	pthread_mutex_lock(&hs.lock);
	hs.inside = true;
	pthread_cond_broadcast(&hs.cond);
	pthread_mutex_unlock(&hs.lock);

	hs.wait_ret = uf_wait_task_sleeping(hs.main_task, 30000);
	snprintf(hs.where, sizeof(hs.where), "%s", which_list(t));
	snprintf(seen.where[0], sizeof(seen.where[0]), "%s", which_list(c));
	seen.starts[0] = __atomic_load_n(&c->nr_writepages, __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * 6.18 writeback_sb_inodes and wb_writeback (Linux 6.18 fs/fs-writeback.c).
 * A first work (nr_pages 1) writes A and leaves B on b_io.  B is then
 * fsync'ed, clean, and held under I_SYNC inside its write_inode; C is
 * dirtied.  A second work meets B on b_io: requeue_io, traced as
 * writeback_sb_inodes_requeue, and not counted as progress (3.x counted a
 * clean I_SYNC inode, so this work would spin instead of sleeping).  That
 * pass did not queue, so 6.18 goes on to queue_io, writes C, and only
 * then, B alone left on b_more_io, sleeps on B's I_SYNC (3.x's loop slept
 * before ever taking C).
 */
Test(fs_writeback, mainline_i_sync_inode_requeued_uncounted_wait_once_queued,
     .fini = fx_fini, .timeout = 90)
{
	struct wb_writeback_work w;
	struct tf *a, *b, *c;
	pthread_t th;
	void *thret;
	long ret;

	FX_SETUP(.start = 16300000, .policy = "mainline", .trace = true);
	a = tf_open_dirty(3, 1, 1);
	advance(1);
	b = tf_open_dirty(1, 4, 2);
	mark_sync(b);
	c = tf_open(2, 1);
	advance(5);
	w = mkwork(W_NONE);
	w.nr_pages = 1;
	cr_assert_eq(run(&w), 1);
	expect_on(a, "none");
	expect_on(b, "b_io");

	advance(1);
	tf_dirty(c, 0, 1, 2);
	advance(1);
	b->on_write_inode = hook_hold_note_c;
	hs.main_task = current;
	cr_assert_eq(pthread_create(&th, NULL, fsync_thread, b), 0);
	pthread_mutex_lock(&hs.lock);
	while (!hs.inside)
		pthread_cond_wait(&hs.cond, &hs.lock);
	pthread_mutex_unlock(&hs.lock);
	cr_assert(istate(b) & I_SYNC);
	cr_assert_eq(istate(b) & I_DIRTY, 0);

	w = mkwork(W_NONE);
	w.nr_pages = 1000;
	ret = run(&w);
	pthread_join(th, &thret);
	cr_assert_eq((int)(intptr_t)thret, 0);
	cr_assert_eq(hs.wait_ret, 0, "the work never slept on B's I_SYNC");
	cr_assert_str_eq(hs.where, "b_more_io", "B was on %s", hs.where);
	cr_assert_eq(seen.starts[0], 1, "C not written before the wait");
	cr_assert_str_eq(seen.where[0], "none");
	cr_assert_eq(ret, 1, "wrote %ld pages, want C's", ret);
	cr_assert_eq(trace_count("writeback_sb_inodes_requeue", NULL), 3);
	cr_assert_eq(trace_count("writeback_sb_inodes_requeue",
				 "ino=1 state=I_SYNC|I_SYNC_QUEUED "), 3);
	cr_assert_eq(trace_count("writeback_sb_inodes_requeue",
				 " cgroup_ino=0"), 3);
	cr_assert_eq(trace_count("writeback_single_inode_requeue", NULL), 0);
	expect_on(b, "none");
	tf_expect_on_dev(c, 0, 1, 2, "C");
}
