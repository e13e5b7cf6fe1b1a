// SPDX-License-Identifier: MIT
/*
 * tests/test_seed000_requeue.c - the requeue, pages_skipped, super-busy,
 * cutoff and kupdate variants of seed 000 ("writeback: Improve busyloop
 * prevention" / "Replace some redirty_tail() calls with requeue_io()",
 * Jan Kara / Wu Fengguang 2011) pinned to the seed.
 *
 * Description: one test per problem labelled in docs/seeds.md (B2, B3,
 * B4b, B6, B7, B8, B9, B10) and per case of writeback_single_inode's
 * requeue decision in each P2 variant, each run under the variant that had the bug and under the one
 * that fixed it (or its neighbour on one knob), asserting the different
 * outcomes; plus the registry's refusals and override order.
 *
 * Each test opens a cache on the virtual clock with the policy spec under
 * test (cfg.policy), on a plain scratch file.  Most use a device without
 * a flusher (UF_DEV_NO_FLUSHER): the test runs the work itself, either on
 * its own thread when nothing sleeps, or on a runner thread while the test
 * thread moves the clock from one timer to the next, each step only once
 * the runner is asleep (a handshake with a real-time bound, never a sleep).
 * B10 drives the device's real flusher thread the same way.  The files'
 * uf_file_ops hooks (run with no uflush lock held) decline kinds of
 * writeback (writepages_veto, as btrfs declined kupdate), fail write_inode
 * with -EAGAIN while a "lock" is held (XFS), redirty, or move the clock.
 * Seed lines "Lnnn" are seed 000's: docs/seeds.md maps them to the mails.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"


/* What the hooks saw; the test checks it afterwards. */
static struct {
	int calls;
	int nr_at;
	unsigned long at[16];
	int kind;
	unsigned long dirtied_when;
	int starts, waits;
} seen;

/* Also between the cases of one test. */
static void fx_fini(void)
{
	fx_teardown(NULL);
	memset(&seen, 0, sizeof(seen));
}

/* v3b's longest sleep: "if (pause < HZ / 10) pause <<= 1" (L5039-5047) */
static unsigned long v3b_cap(void)
{
	unsigned long p = 1;

	while (p < (unsigned long)HZ / 10)
		p <<= 1;
	return p;
}

/* ---- hooks shared by several tests ---- */

static int hook_eagain(struct tf *t, int sync)
{
	(void)t;
	(void)sync;
	return -EAGAIN;
}

/* write_inode succeeds, and the inode is dirty again at once */
static int hook_redirty_inode(struct tf *t, int sync)
{
	(void)sync;
	uf_file_mark_inode_dirty(t->f, UF_I_DIRTY_SYNC);
	return 0;
}

/* write_inode succeeds, and page 0 is dirty again at once */
static int hook_redirty_page(struct tf *t, int sync)
{
	(void)sync;
	tf_write(t, 0, 1, 90);
	return 0;
}

/* Note the first writepages the file did not decline: when, for whom. */
static void hook_note_first(struct tf *t, enum uf_wb_kind kind)
{
	if (seen.nr_at++)
		return;
	seen.at[0] = jiffies;
	seen.kind = (int)kind;
	seen.dirtied_when = t->inode->dirtied_when;
}

/* ================================================================== */
/* Registry                                                            */

static bool same_hooks(const struct wb_policy *a, const struct wb_policy *b)
{
	return a->no_progress == b->no_progress && a->cutoff == b->cutoff &&
	       a->requeue == b->requeue &&
	       a->pages_skipped == b->pages_skipped &&
	       a->super_busy == b->super_busy &&
	       a->return_total_progress == b->return_total_progress &&
	       a->kupdate_early == b->kupdate_early;
}

/*
 * Policy specs (policies/policy.h): an unknown preset, knob or value makes
 * uf_cache_open() fail with -EINVAL and open nothing, and so does a knob
 * given twice; an override replaces the preset's value; each preset is
 * the §0 variant map's combination of knobs (checked on the hooks a cache
 * really runs).
 */
Test(seed000_requeue, registry_refuses_unknown_names_overrides_in_order,
     .timeout = 60)
{
	static const char *const bad[] = {
		"linux-3.4",			/* preset */
		"Linux-3.1",			/* preset (case) */
		"kara-v4.2,requeue=p2-v5",	/* value */
		"kara-v4.2,requeues=p2-v4",	/* knob */
		"wu-riw,sbbusy=removed",	/* a value of another knob */
		"linux-3.1,cutoff=",		/* empty value */
		"linux-3.2,kupdate=early,kupdate=late",	/* a later one */
		"linux-3.1,requeue=p2-v3,requeue=p2-v4",	/* knob twice */
	};
	static const struct {
		const char *spec, *same_as;
	} eq[] = {
		{ "linux-3.2,cutoff=bg-all", "linux-3.3" },
		{ "linux-3.3,cutoff=fixed", "linux-3.2" },
		{ "linux-3.1,nowait=v4.2,requeue=p2-v4,skipped=removed,"
		  "sbbusy=requeue,cutoff=v4.2", "kara-v4.2" },
		{ "linux-3.1,requeue=riw,skipped=requeue-wait,"
		  "sbbusy=requeue-wait,cutoff=bg-all,kupdate=early,"
		  "progress=total", "wu-riw" },
		{ "linux-3.3,nowait=mainline,requeue=mainline,"
		  "skipped=removed,cutoff=bg-all", "mainline" },
		{ "kara-v4.2,nowait=b0,requeue=base,skipped=redirty,"
		  "sbbusy=redirty,cutoff=fixed", "linux-3.1" },
	};
	struct uf_cache_config cfg;
	struct wb_policy a, b;
	struct uf_cache *c;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uf_cache_config_init(&cfg);
		cfg.nr_pages = 64;
		cfg.policy = bad[i];
		c = NULL;
		ret = uf_cache_open(&cfg, &c);
		cr_assert_eq(ret, -EINVAL, "uf_cache_open(\"%s\") = %d, want -EINVAL",
			     bad[i], ret);
		cr_assert_null(c);
	}

	for (i = 0; i < sizeof(eq) / sizeof(eq[0]); i++) {
		uf_cache_config_init(&cfg);
		cfg.nr_pages = 64;
		cfg.policy = eq[i].spec;
		ret = uf_cache_open(&cfg, &c);
		cr_assert_eq(ret, 0, "uf_cache_open(\"%s\"): %s", eq[i].spec,
			     strerror(-ret));
		cr_assert_eq(wb_policy_resolve(eq[i].same_as, &b), 0);
		cr_assert(same_hooks(uf_cache_obj(c)->policy, &b),
			  "\"%s\" runs other hooks than \"%s\" (%s)",
			  eq[i].spec, eq[i].same_as, uf_cache_policy(c));
		wb_policy_release(&b);
		cr_assert_eq(uf_cache_close(c), 0);
	}

	/* an override really replaces the preset's value, and says so */
	cr_assert_eq(wb_policy_resolve("linux-3.1,requeue=p2-v3", &a), 0);
	cr_assert_eq(wb_policy_resolve("linux-3.1,requeue=p2-v4", &b), 0);
	cr_assert_neq(a.requeue, b.requeue);
	cr_assert_not_null(strstr(a.spec, " requeue=p2-v3"), "%s", a.spec);
	cr_assert_null(strstr(a.spec, "requeue=base"), "%s", a.spec);
}

/* ================================================================== */
/* The requeue table (§2.2)                                            */

enum row {
	ROW_SYNC_META,		/* WB_SYNC_ALL, inode redirtied */
	ROW_TAGGED_PAGES,	/* tagged_writepages, a page redirtied */
	ROW_SLICE,		/* pages left, nr_to_write <= 0 */
	ROW_BLOCKED,		/* pages left, nr_to_write > 0: declined */
	ROW_REDIRTIED,		/* clean pages, I_DIRTY, inode_written */
	ROW_EAGAIN,		/* clean pages, I_DIRTY, !inode_written */
	ROW_CLEAN,		/* clean */
	ROW_SKIPPED,		/* wbc.pages_skipped, slice used up */
	ROW_SLICE_YOUNG,	/* slice used up, dirtied after the pass began */
	NR_ROWS,
};

/* in the order of enum row */
static const char *const row_name[NR_ROWS] = {
	"I_DIRTY under WB_SYNC_ALL", "I_DIRTY under tagged_writepages",
	"pages left, slice used up", "pages left, nr_to_write > 0",
	"I_DIRTY, inode_written", "I_DIRTY, write_inode -EAGAIN",
	"clean", "pages_skipped, slice used up",
	"slice used up, dirtied after start",
};

/* D redirty_tail, M requeue_io, W requeue_io_wait, N off the lists */
static const char *outcome_str(char c)
{
	switch (c) {
	case 'D':
		return "b_dirty, dirtied_when = now";
	case 'M':
		return "b_more_io, dirtied_when kept";
	case 'W':
		return "b_more_io_wait, dirtied_when kept";
	case 'w':
		return "b_more_io_wait, dirtied_when = now";
	case 'N':
		return "off the lists";
	}
	return "?";
}

static void outcome(struct tf *t, unsigned long t0, char *buf, size_t len)
{
	const char *l = which_list(t);
	unsigned long dw = dirtied_when(t);

	if (!strcmp(l, "none")) {
		snprintf(buf, len, "off the lists");
		return;
	}
	snprintf(buf, len, "%s, dirtied_when %s", l,
		 dw == jiffies ? "= now" :
		 dw == t0 ? "kept" : "moved elsewhere");
}

static void row_prepare(enum row r, struct tf *t)
{
	switch (r) {
	case ROW_SYNC_META:
		tf_dirty(t, 0, 2, 1);
		mark_sync(t);
		t->on_write_inode = hook_redirty_inode;
		break;
	case ROW_TAGGED_PAGES:
		tf_dirty(t, 0, 2, 1);
		mark_sync(t);
		t->on_write_inode = hook_redirty_page;
		break;
	case ROW_SLICE:
	case ROW_SKIPPED:
	case ROW_SLICE_YOUNG:
		tf_dirty(t, 0, 4, 1);
		break;
	case ROW_BLOCKED:
		tf_dirty(t, 0, 2, 1);
		set_veto(t, 1u << UF_WB_KUPDATE);
		break;
	case ROW_REDIRTIED:
		mark_sync(t);
		t->on_write_inode = hook_redirty_inode;
		break;
	case ROW_EAGAIN:
		mark_sync(t);
		t->on_write_inode = hook_eagain;
		break;
	case ROW_CLEAN:
		tf_dirty(t, 0, 2, 1);
		break;
	case NR_ROWS:
		break;
	}
}

static struct writeback_control row_wbc(enum row r)
{
	struct writeback_control wbc = {
		.nr_to_write = 1024,
		.sync_mode = WB_SYNC_NONE,
		.range_cyclic = 1,
		.range_start = 0,
		.range_end = LLONG_MAX,
	};

	switch (r) {
	case ROW_SYNC_META:
		wbc.sync_mode = WB_SYNC_ALL;
		wbc.nr_to_write = LONG_MAX;
		wbc.range_cyclic = 0;
		break;
	case ROW_TAGGED_PAGES:
		wbc.tagged_writepages = 1;
		wbc.nr_to_write = LONG_MAX;
		wbc.range_cyclic = 0;
		break;
	case ROW_SLICE:
	case ROW_SLICE_YOUNG:
		wbc.nr_to_write = 2;
		break;
	case ROW_SKIPPED:
		wbc.nr_to_write = 2;
		wbc.pages_skipped = 1;
		break;
	case ROW_BLOCKED:
		wbc.for_kupdate = 1;
		break;
	default:
		break;
	}
	return wbc;
}

/*
 * Write an inode that queue_io() moved to b_io (I_SYNC_QUEUED under
 * requeue=mainline, as queue_io sets it) with the row's wbc, as
 * writeback_sb_inodes does (writeback_inode_flusher); it ends with the
 * policy's requeue decision, given the pass's start @dirtied_before.
 */
static void write_one(struct tf *t, struct writeback_control *wbc,
		      unsigned long dirtied_before)
{
	struct inode *inode = t->inode;

	spin_lock(&fx.wb->list_lock);
	list_move(&inode->i_wb_list, &fx.wb->b_io);
	spin_lock(&inode->i_lock);
	if (fx.pol->inode_wb_mainline)
		inode->i_state |= I_SYNC_QUEUED;
	writeback_inode_flusher(inode, fx.wb, wbc, dirtied_before);
	spin_unlock(&inode->i_lock);
	spin_unlock(&fx.wb->list_lock);
}

#define REQUEUE_COLUMN(name, ...)					\
	FX_TEST(seed000_requeue, name, 60, requeue_column(__VA_ARGS__))

/*
 * One column of the §2.2 table: every row's inode was dirtied at t0, a
 * newer inode H heads b_dirty (so a redirty_tail shows as dirtied_when =
 * now), and each row is written at a later jiffy by a pass that began
 * then, except the last row's, which began before t0 (the inode was
 * dirtied after it began: 6.18's requeue_inode tells it apart).
 */
static void requeue_column(const char *spec, const char *want)
{
	struct tf *t[NR_ROWS], *h;
	char fails[2048] = "", got[96];
	unsigned long t0;
	size_t n = 0;
	int r;

	FX_SETUP(.start = 20000000, .policy = spec);
	t0 = jiffies;
	for (r = 0; r < NR_ROWS; r++) {
		t[r] = tf_open((unsigned long)r + 1, 4);
		row_prepare((enum row)r, t[r]);
	}
	advance(10);
	h = tf_open(15, 1);
	tf_dirty(h, 0, 1, 15);
	advance(10);

	for (r = 0; r < NR_ROWS; r++) {
		struct writeback_control wbc = row_wbc((enum row)r);

		advance(1);
		write_one(t[r], &wbc,
			  r == ROW_SLICE_YOUNG ? t0 - 1 : jiffies);
		outcome(t[r], t0, got, sizeof(got));
		if (strcmp(got, outcome_str(want[r])) && n < sizeof(fails))
			n += (size_t)snprintf(fails + n, sizeof(fails) - n,
					      "\n  %-32s %s, want %s",
					      row_name[r], got,
					      outcome_str(want[r]));
	}
	cr_assert_eq(n, 0, "%s:%s", spec, fails);
	expect_on(h, "b_dirty");
	cr_assert_eq(dirtied_when(h), t0 + 10);
	tf_expect_on_dev(t[ROW_CLEAN], 0, 2, 1, "the clean row's pages");
}

/*
 * Seed 000 §2.2, "Base" column ([base], removed lines of L3985-4060): a
 * still-dirty inode under sync or tagged writeback gets dirtied_when = now
 * and falls through; pages left → requeue_io if the slice was used up,
 * else redirty_tail ("blocked"); I_DIRTY → redirty_tail whether
 * write_inode worked or not (B10); clean → off the lists.  The requeue
 * hook ignores pages_skipped (the writeback_sb_inodes block handles it).
 */
REQUEUE_COLUMN(requeue_table_base, "linux-3.1", "DDMDDDNMM")

/*
 * P2-v3 (L4590-4650): the sync branch redirty_tails and stops; pages left
 * → requeue_io even with nr_to_write > 0 (the hunk behind btrfs -80 %,
 * B2, L6247-6320); I_DIRTY → inode_written ? redirty_tail : requeue_io.
 */
REQUEUE_COLUMN(requeue_table_p2_v3, "linux-3.1,requeue=p2-v3", "DDMMDMNMM")

/*
 * requeue4 (Wu's reduction, L5893-5935): base everywhere except the
 * inode_written rule for I_DIRTY.
 */
REQUEUE_COLUMN(requeue_table_requeue4, "linux-3.1,requeue=requeue4", "DDMDDMNMM")

/*
 * P2-v4 = v3.1 (L4000-4060, L6610-6670): v3's sync branch and
 * inode_written rule, but "Writeback blocked by something. Put inode back
 * to dirty list to prevent livelocking" for pages left with nr_to_write
 * > 0.
 */
REQUEUE_COLUMN(requeue_table_p2_v4, "linux-3.1,requeue=p2-v4", "DDMDDMNMM")

/*
 * RIW (L1921-1946): every "might be blocked" case → requeue_io_wait
 * (b_more_io_wait, dirtied_when kept): pages left with nr_to_write > 0,
 * and I_DIRTY whatever inode_written says.  As posted, a still-dirty
 * inode under sync or tagged writeback falls through to requeue_io_wait
 * too, which defeats sync livelock prevention (I14, B7; spec §7 [ours]):
 * the variant keeps the seed's bug, pinned here.
 */
REQUEUE_COLUMN(requeue_table_riw, "linux-3.1,requeue=riw", "wwMWWWNMM")

/*
 * riw-sync: RIW with P2-v4's sync branch in front, as spec §7 advises:
 * the sync rows go back to b_dirty, the rest is RIW's.
 */
REQUEUE_COLUMN(requeue_table_riw_sync, "linux-3.1,requeue=riw-sync", "DDMWWWNMM")

/*
 * 6.18 requeue_inode() (Linux 6.18 fs/fs-writeback.c): base's rows plus
 * the pages_skipped row (redirty_tail) ahead of the pages-left rows, and
 * a used-up slice of an inode dirtied after the pass began goes to
 * b_dirty (redirty_tail), not b_more_io: every 3.x column says M there.
 */
REQUEUE_COLUMN(requeue_table_mainline, "linux-3.1,requeue=mainline", "DDMDDDNDD")

/* ================================================================== */
/* B3: pages_skipped double handling                                   */

/*
 * B3 (L6140-6146, L6984-6996), through writeback_sb_inodes().  T has 4
 * dirty pages and dirty metadata; the embedder holds page 1 for writing
 * (uf_page_get UF_PAGE_WRITE), so write_cache_pages() skips it and counts
 * it in wbc.pages_skipped, as block_write_full_page() did for a locked
 * buffer.  A tagged work (writeback_inodes_sb) writes the other 3 pages
 * and the metadata, which write_inode dirties again: T is still dirty
 * under tagged writeback, so writeback_single_inode() stamps dirtied_when
 * = now and, under P2-v3 (and base, P2-v4), redirty_tails it to b_dirty.
 * The pages_skipped block then moves it again: to b_more_io
 * (skipped=requeue: the redirty_tail decision is lost), b_more_io_wait
 * (requeue-wait), b_dirty (redirty); removed (P2-v4), T stays where
 * writeback_single_inode() put it.  The work is sized to end after T
 * (nr_pages = 3): with the page still held, a requeued T would be retried
 * without progress.
 *
 * Next pass: the page is released and a kupdate work runs one jiffy
 * later.  A requeued T is taken at once, whatever its dirtied_when; T on
 * b_dirty, stamped now, waits until it has expired again.
 */
static int hook_redirty_inode_once(struct tf *t, int sync)
{
	(void)sync;
	if (__atomic_load_n(&t->nr_write_inode, __ATOMIC_SEQ_CST) == 1)
		uf_file_mark_inode_dirty(t->f, UF_I_DIRTY_SYNC);
	return 0;
}

static void pages_skipped_case(const char *spec, const char *want)
{
	bool requeued = strcmp(want, "b_dirty") != 0;
	struct wb_writeback_work w;
	unsigned long now;
	struct tf *t;
	long ret;

	FX_SETUP(.start = 21000000, .policy = spec);
	t = tf_open_dirty(1, 4, 4);
	mark_sync(t);
	t->on_write_inode = hook_redirty_inode_once;
	tf_hold_page(t, 1);
	advance(10);
	now = jiffies;

	w = mkwork(W_TAGGED);
	w.nr_pages = 3;
	ret = run(&w);
	/*
	 * 3 written + the held page: ->writepage declining a page still
	 * uses up slice in 3.2's write_cache_pages (skipcount=3.2).
	 */
	cr_assert_eq(ret, 4, "%s: the tagged work used %ld pages, want 4",
		     spec, ret);
	cr_assert_eq(t->nr_write_inode, 1);
	expect_on(t, want);
	cr_assert_eq(dirtied_when(t), now,
		     "%s: T's dirtied_when %lu, want the sync stamp %lu", spec,
		     dirtied_when(t), now);
	cr_assert(istate(t) & I_DIRTY_SYNC, "%s: T's metadata is clean", spec);
	tf_expect_on_dev(t, 0, 1, 1, "T page 0");
	tf_expect_unwritten(t, 1, 1, "T page 1 (held, skipped)");
	tf_expect_on_dev(t, 2, 2, 1, "T pages 2-3");

	tf_release_page(t);
	advance(1);
	run_kind(W_KUPDATE);
	if (requeued) {
		expect_on(t, "none");
		cr_assert_eq(t->nr_write_inode, 2);
		tf_expect_on_dev(t, 1, 1, 1, "T page 1 (next pass)");
		return;
	}
	expect_on(t, "b_dirty");
	cr_assert_eq(dirtied_when(t), now);
	cr_assert_eq(t->nr_write_inode, 1,
		     "%s: T retried before it expired again", spec);
	tf_expect_unwritten(t, 1, 1, "T page 1 (not expired again)");
	advance_to(now + expire_jiffies());
	run_kind(W_KUPDATE);
	expect_on(t, "none");
	cr_assert_eq(t->nr_write_inode, 2);
	tf_expect_on_dev(t, 1, 1, 1, "T page 1 (expired again)");
}

/* requeue (P2-v3), and RIW's requeue-wait on the same P2-v3 requeue */
Test(seed000_requeue, b3_p2v3_pages_skipped_requeues_a_redirty_tailed_inode,
     .fini = fx_fini, .timeout = 60)
{
	pages_skipped_case("linux-3.1,requeue=p2-v3,skipped=requeue",
			   "b_more_io");
	fx_fini();
	pages_skipped_case("linux-3.1,requeue=p2-v3,skipped=requeue-wait",
			   "b_more_io_wait");
}

Test(seed000_requeue, b3_removed_block_leaves_it_on_b_dirty,
     .fini = fx_fini, .timeout = 60)
{
	pages_skipped_case("linux-3.1,requeue=p2-v3,skipped=removed",
			   "b_dirty");
	cr_assert_null(fx.pol->pages_skipped);
}

Test(seed000_requeue, b3_kara_v42_has_no_pages_skipped_block,
     .fini = fx_fini, .timeout = 60)
{
	pages_skipped_case("kara-v4.2", "b_dirty");
	cr_assert_null(fx.pol->pages_skipped);
}

/* Base redirty_tails again: harmless, b_dirty either way. */
Test(seed000_requeue, b3_base_pages_skipped_redirty_tails,
     .fini = fx_fini, .timeout = 60)
{
	pages_skipped_case("linux-3.1", "b_dirty");
	cr_assert_not_null(fx.pol->pages_skipped);
}

/* ================================================================== */
/* B2: the btrfs kupdate livelock                                      */

/*
 * M ("the btree inode"): 4 pages dirtied at t0, declined for kupdate
 * (Chris Mason, L433-435).  D ("inode 257", the data): 16 pages dirtied
 * one second before the kupdate run, enough to be over the background
 * threshold.  The clock then stands 30 s + 1 after t0: M has expired, D
 * has not, and kupdate is due.  Returns t0.
 */
static unsigned long b2_setup(const char *spec)
{
	struct tf *m, *d;
	unsigned long t0;

	FX_SETUP(.start = 30000000, .policy = spec, .trace = true);
	set_bg_thresh_pages(8);
	m = tf_open(1, 8);
	d = tf_open(2, 16);
	t0 = jiffies;
	tf_dirty(m, 0, 4, 1);
	set_veto(m, 1u << UF_WB_KUPDATE);
	m->on_writepages = hook_note_first;
	advance(expire_jiffies() - (unsigned long)HZ);
	tf_dirty(d, 0, 16, 2);
	advance((unsigned long)HZ + 1);
	cr_assert(over_bground_thresh(fx.bdi));
	return t0;
}

/*
 * B2 (L5199-5620, L6274-6305, L6500-6553), I11.  Under P2-v3 with P1-v3b,
 * M (pages left, nr_to_write untouched) is requeue_io'd, so every kupdate
 * pass makes no progress with b_more_io non-empty: the work sleeps 1, 2,
 * 4 ... 128 jiffies (v3b never ends a work) and retries M for ever, while
 * D, excluded by kupdate's older_than_this, waits for the background
 * writeback that runs only after kupdate returns (the 25 s stall of
 * L6518-6527).  Bounded here at 10 simulated seconds, then ended by
 * lifting the veto (btrfs' transaction commit): the next pass writes M,
 * kupdate ends, and background writeback writes D.
 */
Test(seed000_requeue, b2_p2v3_v3b_kupdate_livelocks_on_declined_inode,
     .fini = fx_fini, .timeout = 120)
{
	struct tf *m, *d;
	unsigned long t0, ts, lifted, e, s, longest = 0;
	int sleeps = 0, starts = 0, waits = 0;

	t0 = b2_setup("linux-3.1,nowait=v3b,requeue=p2-v3");
	m = &fx.tf[1];
	d = &fx.tf[2];
	ts = jiffies;
	runner_start(RUN_FLUSH, NULL);
	while (time_before(jiffies, ts + 10UL * (unsigned long)HZ)) {
		cr_assert_eq(wait_asleep(rn.task, &rn.done), 1,
			     "the kupdate work ended (or hung) %lu jiffies in: no livelock",
			     jiffies - ts);
		/* asleep in the no-progress wait */
		expect_on(m, "b_more_io");
		cr_assert_eq(dirtied_when(m), t0,
			     "requeue_io moved M's dirtied_when");
		cr_assert_eq(d->nr_writepages, 0,
			     "D was written while kupdate looped");
		cr_assert_eq(uf_clock_next_expiry(&e), 0);
		s = e - jiffies;
		if (s > longest)
			longest = s;
		sleeps++;
		starts = trace_count("writeback_start", "kupdate=1");
		waits = trace_count("writeback_wait", "kupdate=1");
		cr_assert_eq(starts, waits, "passes %d, waits %d", starts,
			     waits);
		clock_step(ts + 10UL * (unsigned long)HZ);
	}
	cr_assert(!rn_done());
	cr_assert_eq(longest, v3b_cap(), "longest sleep %lu, want %lu",
		     longest, v3b_cap());
	cr_assert_geq(sleeps, 70, "only %d no-progress sleeps in 10 s",
		      sleeps);
	cr_assert_eq(trace_count("writeback_start", "background=1"), 0);
	cr_assert(istate(d) & I_DIRTY_PAGES);
	cr_assert_eq(m->nr_vetoed, starts);

	/* the fs relents: one more pass writes M, then it all ends */
	lifted = jiffies;
	set_veto(m, 0);
	cr_assert(rn_drive(lifted + 10UL * (unsigned long)HZ),
		  "still looping after the veto was lifted");
	runner_join();
	cr_assert_leq(rn.done_at - lifted, v3b_cap(),
		      "took %lu jiffies after the veto was lifted",
		      rn.done_at - lifted);
	cr_assert_eq(seen.kind, UF_WB_KUPDATE,
		     "M was first written by a kind-%d work", seen.kind);
	cr_assert_eq(trace_count("writeback_start", "background=1") > 0, 1);
	tf_expect_on_dev(m, 0, 4, 1, "M");
	tf_expect_on_dev(d, 0, 16, 2, "D (background, once kupdate ended)");
	expect_on(m, "none");
	expect_on(d, "none");
}

/*
 * I23 (L6779-6790): a criterion M fails under (for_kupdate) must not hold
 * up other works.  Even the livelocked P2-v3 kupdate work gives way: at
 * the top of its next pass it sees the queued work (the [base] yield of
 * kupdate and background works), at most one v3b sleep later, and the
 * queued WB_SYNC_NONE work, which M does not decline, writes M and D.
 */
Test(seed000_requeue, b2_i23_livelocked_kupdate_yields_to_a_queued_work,
     .fini = fx_fini, .timeout = 120)
{
	struct tf *m, *d;
	unsigned long ts, queued;

	b2_setup("linux-3.1,nowait=v3b,requeue=p2-v3");
	m = &fx.tf[1];
	d = &fx.tf[2];
	ts = jiffies;
	runner_start(RUN_FLUSH, NULL);
	cr_assert(!rn_drive(ts + 2UL * (unsigned long)HZ),
		  "the P2-v3 kupdate work ended: no livelock");
	expect_on(m, "b_more_io");
	cr_assert_eq(seen.nr_at, 0);

	queued = jiffies;
	bdi_start_writeback(fx.bdi, 1024, WB_REASON_TRY_TO_FREE_PAGES);
	cr_assert(rn_drive(queued + 10UL * (unsigned long)HZ),
		  "the flusher did not finish after a work was queued");
	runner_join();
	cr_assert_eq(seen.kind, UF_WB_OTHER_NONE,
		     "M was first written by a kind-%d work, want the queued one",
		     seen.kind);
	cr_assert_leq(seen.at[0] - queued, v3b_cap(),
		      "the queued work waited %lu jiffies", seen.at[0] - queued);
	tf_expect_on_dev(m, 0, 4, 1, "M (queued work)");
	tf_expect_on_dev(d, 0, 16, 2, "D");
	cr_assert_eq(istate(m) & I_DIRTY, 0);
	cr_assert_eq(istate(d) & I_DIRTY, 0);
}

/*
 * B2's fix (P2-v3.1/v4, L6555-6698, L4000-4060), I11: M is redirty_tail'ed
 * ("Put inode back to dirty list to prevent livelocking"), older than D at
 * the head of b_dirty so dirtied_when = now; the kupdate work ends after
 * its one pass without sleeping, and background writeback writes D (and
 * M, which it does not decline) at once, in the same jiffy.
 */
static void b2_one_pass(const char *spec)
{
	struct tf *m, *d;
	unsigned long ts;

	b2_setup(spec);
	m = &fx.tf[1];
	d = &fx.tf[2];
	ts = jiffies;
	runner_start(RUN_FLUSH, NULL);
	cr_assert(rn_drive(ts + 10UL * (unsigned long)HZ),
		  "%s: the flusher is still busy after 10 s", spec);
	runner_join();
	cr_assert_eq(rn.done_at, ts, "%s: the flusher took %lu jiffies", spec,
		     rn.done_at - ts);
	cr_assert_eq(trace_count("writeback_start", "kupdate=1"), 1,
		     "%s: %d kupdate passes, want 1", spec,
		     trace_count("writeback_start", "kupdate=1"));
	cr_assert_eq(trace_count("writeback_wait", NULL), 0);
	cr_assert_eq(m->nr_vetoed, 1);
	cr_assert_eq(seen.kind, UF_WB_BACKGROUND);
	cr_assert_eq(seen.dirtied_when, ts,
		     "%s: M's dirtied_when %lu when background took it, want %lu (redirty_tail)",
		     spec, seen.dirtied_when, ts);
	tf_expect_on_dev(m, 0, 4, 1, "M (background)");
	tf_expect_on_dev(d, 0, 16, 2, "D (background)");
}

FX_TEST(seed000_requeue, b2_kara_v42_kupdate_ends_in_one_pass, 60,
	b2_one_pass("kara-v4.2"))

/* The requeue knob alone makes the difference (same v3b as the bug). */
FX_TEST(seed000_requeue, b2_p2v4_with_v3b_kupdate_ends_in_one_pass, 60,
	b2_one_pass("linux-3.1,nowait=v3b,requeue=p2-v4"))

/* ================================================================== */
/* B4b: the background work's cutoff                                   */

/* A's write_inode: a lock is held; the first time, B gets dirty (dd). */
static int hook_b4b_a(struct tf *t, int sync)
{
	(void)t;
	(void)sync;
	if (!seen.calls++) {
		uf_clock_advance(1);
		tf_write(&fx.tf[2], 0, 4, 2);
	}
	return -EAGAIN;
}

/* B's first writepages: which pass of the work, after how many waits. */
static void hook_b4b_b(struct tf *t, enum uf_wb_kind kind)
{
	(void)t;
	(void)kind;
	if (seen.nr_at++)
		return;
	seen.at[0] = jiffies;
	seen.starts = trace_count("writeback_start", NULL);
	seen.waits = trace_count("writeback_wait", NULL);
}

/*
 * B4b (L620-712, L1097-1106; I2, I3).  A has only I_DIRTY_SYNC and its
 * write_inode always fails (XFS, ilock held by the throttled dd); C has
 * pages; K keeps the cache over the background threshold but declines
 * background writeback.  The background work starts at ts; during its
 * first pass (in A's write_inode) B is dirtied, at ts + 1: after the work
 * started.  C's pages make the first pass progress, so nothing sleeps
 * before pass 2.  Returns the no-progress sleeps seen, in @sleeps.
 */
static unsigned long b4b_ts;

static int b4b_case(const char *spec, int want_pass, int want_waits,
		    unsigned long *sleeps, int max_sleeps)
{
	struct tf *a, *b, *c, *k;
	struct wb_writeback_work w;
	unsigned long ts, e;
	int n = 0, r;

	FX_SETUP(.start = 40000000, .policy = spec, .trace = true);
	set_bg_thresh_pages(8);
	a = tf_open(1, 4);
	b = tf_open(2, 4);
	c = tf_open(3, 4);
	k = tf_open(4, 16);
	mark_sync(a);
	a->on_write_inode = hook_b4b_a;
	advance(1);
	tf_dirty(c, 0, 4, 3);
	advance(1);
	tf_dirty(k, 0, 16, 4);
	set_veto(k, 1u << UF_WB_BACKGROUND);
	b->on_writepages = hook_b4b_b;
	advance(5UL * (unsigned long)HZ);	/* past the delayed wakeup */
	ts = jiffies;
	b4b_ts = ts;

	w = mkwork(W_BACKGROUND);
	runner_start(RUN_WORK, &w);
	while ((r = wait_asleep(rn.task, &rn.done)) == 1) {
		cr_assert(time_before(jiffies, ts + 60UL * (unsigned long)HZ),
			  "%s: the background work still runs after 60 s", spec);
		if (!uf_clock_next_expiry(&e) && n < max_sleeps)
			sleeps[n++] = e - jiffies;
		clock_step(ts + 60UL * (unsigned long)HZ);
	}
	cr_assert_eq(r, 0, "%s: the work neither slept nor ended", spec);
	runner_join();
	cr_assert_eq(seen.calls > 0, 1);
	tf_expect_on_dev(c, 0, 4, 3, "C");
	cr_assert_eq(k->nr_writepages, 0);

	if (want_pass) {
		cr_assert_eq(seen.nr_at, 1, "%s: B was never written", spec);
		cr_assert_eq(seen.starts, want_pass,
			     "%s: B written in pass %d, want pass %d", spec,
			     seen.starts, want_pass);
		cr_assert_eq(seen.waits, want_waits,
			     "%s: B written after %d no-progress waits, want %d",
			     spec, seen.waits, want_waits);
		tf_expect_on_dev(b, 0, 4, 2, "B");
	} else {
		cr_assert_eq(b->nr_writepages, 0,
			     "%s: the work took B, dirtied after it started",
			     spec);
		expect_on(b, "b_dirty");
		cr_assert_eq(dirtied_when(b), ts + 1);
		cr_assert(over_bground_thresh(fx.bdi));
		tf_expect_unwritten(b, 0, 4, "B");
	}
	return n;
}

/* 3.1: the fixed cutoff never takes B; A and K went to b_dirty with
 * dirtied_when = ts + 1 (redirty_tail), so pass 2 finds nothing: the work
 * ends over the threshold with B dirty. */
Test(seed000_requeue, b4b_linux31_fixed_cutoff_never_takes_b,
     .fini = fx_fini, .timeout = 60)
{
	unsigned long sleeps[4];

	cr_assert_eq(b4b_case("linux-3.1", 0, 0, sleeps, 4), 0);
	cr_assert_eq(rn.done_at, b4b_ts + 1, "ended at +%lu",
		     rn.done_at - b4b_ts);
}

/*
 * The stall as reported on v4 ("requeue6", L523-541): P1-v4 + P2-v4 with
 * the fixed cutoff.  A sits on b_more_io, every pass makes no progress and
 * the waits grow 1, 2 ... 2048, 4096 (2.04 s and 4.08 s apart, L523-541)
 * until pause > max_pause ends the work: B is never taken.
 */
Test(seed000_requeue, b4b_v4_fixed_cutoff_stalls_with_b_dirty,
     .fini = fx_fini, .timeout = 60)
{
	unsigned long sleeps[32], ts;
	int n, i;

	n = b4b_case("linux-3.1,nowait=v4,requeue=p2-v4", 0, 0, sleeps, 32);
	ts = b4b_ts;
	cr_assert_eq(HZ, 1000);
	cr_assert_eq(n, 13, "%d no-progress sleeps, want 13", n);
	for (i = 0; i < n; i++)
		cr_assert_eq(sleeps[i], 1UL << i, "sleep %d: %lu jiffies", i,
			     sleeps[i]);
	cr_assert_eq(rn.done_at, ts + 1 + 8191, "ended at +%lu",
		     rn.done_at - ts);
}

/* 3.3 (bg-all, L1223-1271): cutoff = now at every pass: B in pass 2. */
Test(seed000_requeue, b4b_linux33_bg_all_takes_b_next_pass,
     .fini = fx_fini, .timeout = 60)
{
	unsigned long sleeps[4];

	b4b_case("linux-3.3", 2, 0, sleeps, 4);
}

/* bg-all with the v4.2 loop: still pass 2, before any sleep. */
Test(seed000_requeue, b4b_bg_all_with_v42_takes_b_next_pass,
     .fini = fx_fini, .timeout = 60)
{
	unsigned long sleeps[32];

	b4b_case("linux-3.3,nowait=v4.2,requeue=p2-v4", 2, 0, sleeps, 32);
}

/*
 * kara-v4.2's cutoff (L755-769): "else if (pause > 1) oldest_jif = now",
 * so pass 2 (pause 1, after progress) still uses the start time; B is
 * taken in pass 3, after the first no-progress sleep.
 */
Test(seed000_requeue, b4b_kara_v42_takes_b_after_first_sleep,
     .fini = fx_fini, .timeout = 60)
{
	unsigned long sleeps[32];

	b4b_case("kara-v4.2", 3, 1, sleeps, 32);
}

/* ================================================================== */
/* B6: a journal inode redirtied every 5 s                             */

static struct {
	unsigned long end, next;
	unsigned long redirty[8];
	int nr_redirty;
	unsigned long jw[16];
	int nr_jw;
	unsigned long s_page;
} b6;

/*
 * S (the dd): each time its inode is written, 100 ms pass, it dirties two
 * more pages and its inode (i_size); every 5 s kjournald redirties J.
 */
static int hook_b6_dd(struct tf *s, int sync)
{
	(void)sync;
	uf_clock_advance((unsigned long)HZ / 10);
	if (!time_before(jiffies, b6.end))
		return 0;
	if (!time_before(jiffies, b6.next) && b6.nr_redirty < 8) {
		tf_write(&fx.tf[1], 0, 1, 100 + (uint32_t)b6.nr_redirty);
		b6.redirty[b6.nr_redirty++] = jiffies;
		b6.next += 5UL * (unsigned long)HZ;
	}
	tf_write(s, b6.s_page, 2, 7);
	b6.s_page = (b6.s_page + 2) % 32;
	uf_file_mark_inode_dirty(s->f, UF_I_DIRTY_SYNC);
	return 0;
}

static void hook_b6_journal(struct tf *t, enum uf_wb_kind kind)
{
	(void)t;
	(void)kind;
	if (b6.nr_jw < 16)
		b6.jw[b6.nr_jw++] = jiffies;
}

/*
 * B6 (L1834-1893, L2151-2365, L3799-3822): J (ino 0 of ext3, the block
 * device inode kjournald dirties after each commit) is redirtied every
 * 5 s while one background work runs for 30 s behind a dd (S).  Runs the
 * work on the test thread (nothing sleeps) and returns its start.
 */
static unsigned long b6_run(const char *spec)
{
	struct tf *j, *s;
	unsigned long ts;

	FX_SETUP(.start = 50000000, .policy = spec);
	set_bg_thresh_pages(1);
	memset(&b6, 0, sizeof(b6));
	j = tf_open(1, 4);
	s = tf_open(2, 32);
	tf_dirty(j, 0, 1, 99);
	advance(5);
	tf_dirty(s, 0, 2, 7);
	mark_sync(s);
	b6.s_page = 2;
	advance(5UL * (unsigned long)HZ);
	ts = jiffies;
	b6.end = ts + 30UL * (unsigned long)HZ;
	b6.next = ts + 5UL * (unsigned long)HZ;
	j->on_writepages = hook_b6_journal;
	s->on_write_inode = hook_b6_dd;

	run_kind(W_BACKGROUND);
	return ts;
}

/* bg-all: J is written in the pass right after each redirty. */
Test(seed000_requeue, b6_bg_all_writes_journal_inode_on_each_redirty,
     .fini = fx_fini, .timeout = 120)
{
	unsigned long ts = b6_run("linux-3.3");
	int i;

	cr_assert(!time_before(jiffies, b6.end),
		  "the background work ended at +%lu", jiffies - ts);
	cr_assert_eq(b6.nr_redirty, 5);
	cr_assert_eq(b6.nr_jw, 6, "J written %d times, want 1 + 5 redirties",
		     b6.nr_jw);
	cr_assert_eq(b6.jw[0], ts);
	for (i = 0; i < b6.nr_redirty; i++)
		cr_assert(time_in_range(b6.jw[i + 1], b6.redirty[i],
					b6.redirty[i] +
					(unsigned long)HZ / 10),
			  "redirty %d at +%lu written at +%lu", i,
			  b6.redirty[i] - ts, b6.jw[i + 1] - ts);
	expect_on(&fx.tf[1], "none");
	tf_expect_on_dev(&fx.tf[1], 0, 1, 104, "J (last redirty)");
}

/*
 * Fixed cutoff: the work writes J once; the redirtied J (dirtied after the
 * start) is not taken, and S, redirty_tail'ed behind it with dirtied_when
 * = now, is excluded too, so the work ends there with J dirty.
 */
Test(seed000_requeue, b6_fixed_cutoff_writes_journal_inode_once_per_work,
     .fini = fx_fini, .timeout = 120)
{
	unsigned long ts = b6_run("linux-3.1");

	cr_assert_eq(b6.nr_jw, 1, "J written %d times by one work",
		     b6.nr_jw);
	cr_assert_eq(b6.jw[0], ts);
	cr_assert_eq(b6.nr_redirty, 1);
	cr_assert_eq(jiffies, b6.redirty[0], "the work ended at +%lu",
		     jiffies - ts);
	expect_on(&fx.tf[1], "b_dirty");
	cr_assert_eq(dirtied_when(&fx.tf[1]), b6.redirty[0]);
	cr_assert(istate(&fx.tf[1]) & I_DIRTY_PAGES);
	tf_expect_on_dev(&fx.tf[1], 0, 1, 99, "J (first version only)");
}

/* ================================================================== */
/* B7: sync livelock prevention under every preset                     */

#define SYNC_LIVELOCK_PRESET(name, ...)					\
	FX_TEST(seed000_requeue, name, 60, sync_livelock_preset(__VA_ARGS__))

/*
 * B7 (L958-970, L1187-1192), I14 (L4003-4012): a writer redirties R (a
 * page and the inode) right after each write; a WB_SYNC_ALL work
 * (sync_inodes_sb), and a tagged one (writeback_inodes_sb), write R once,
 * leave it on b_dirty with dirtied_when = now, write S too, and end.
 */
static void sync_livelock_preset(const char *spec)
{
	sync_livelock_case(spec, 60000000, W_SYNC);
	fx_fini();
	sync_livelock_case(spec, 60000000, W_TAGGED);
}

SYNC_LIVELOCK_PRESET(b7_linux31_sync_ends_against_redirtier, "linux-3.1")

SYNC_LIVELOCK_PRESET(b7_linux32_sync_ends_against_redirtier, "linux-3.2")

/* v4.2's "pause > 1" refresh would break this (L958-970); no sleep here */
SYNC_LIVELOCK_PRESET(b7_kara_v42_sync_ends_against_redirtier, "kara-v4.2")

/*
 * Spec §7 [ours] and B7: RIW's requeue_io_wait of a still-dirty inode
 * under WB_SYNC_ALL bypasses the fixed cutoff (b_more_io_wait is spliced
 * into b_io whatever dirtied_when says), so a sync work against a
 * continuous redirtier writes it again and again: the seed's RIW as
 * posted, pinned.  It ends here only because the redirtier gives up after
 * its cap.  With riw-sync (P2-v4's sync branch first) the work writes it
 * once.
 */
Test(seed000_requeue, b7_wu_riw_sync_livelocks_against_redirtier,
     .fini = fx_fini, .timeout = 60)
{
	struct tf *r = redirtier_setup("wu-riw", 60000000);
	struct wb_writeback_work w = mkwork(W_SYNC);

	run(&w);
	cr_assert_gt(r->nr_write_inode, 10,
		     "wu-riw: the sync work wrote the redirtier %d times; the seed's RIW livelocks (B7)",
		     r->nr_write_inode);
}

SYNC_LIVELOCK_PRESET(b7_wu_riw_sync_variant_ends_against_redirtier,
		     "wu-riw,requeue=riw-sync")

SYNC_LIVELOCK_PRESET(b7_mainline_sync_ends_against_redirtier, "mainline")

/* ================================================================== */
/* B8: a redirtied inode must not monopolise writeback                 */

/* R's write_inode: works, takes HZ/10 + 1, and R is dirty again. */
static int hook_b8_r(struct tf *t, int sync)
{
	(void)sync;
	if (__atomic_load_n(&t->nr_write_inode, __ATOMIC_SEQ_CST) > 20)
		return 0;
	uf_clock_advance((unsigned long)HZ / 10 + 1);
	if (t->arg)
		tf_write(t, 0, 1, 50);
	uf_file_mark_inode_dirty(t->f, UF_I_DIRTY_SYNC);
	return 0;
}

/*
 * B8 (L4756-4790), I12: R is redirtied right after every successful
 * write_inode (@pages: a page too, not only the inode).  In one kupdate
 * work with three other expired inodes O1-O3 and a newer N heading
 * b_dirty, the others are written, and R, once written, goes behind them
 * (redirty_tail: dirtied_when = now, out of this kupdate) — or, where the
 * variant requeues it, comes back at every refill of b_io.
 * @want_r: R's write_inode calls in the work (0: more than one).
 */
static void b8_case(const char *spec, bool pages, int want_r)
{
	struct tf *r, *o[3], *n;
	unsigned long i;

	FX_SETUP(.start = 70000000, .policy = spec);
	r = tf_open(1, 4);
	for (i = 0; i < 3; i++)
		o[i] = tf_open(i + 2, 4);
	n = tf_open(5, 4);
	if (pages)
		tf_dirty(r, 0, 1, 1);
	mark_sync(r);
	for (i = 0; i < 3; i++) {
		advance(1);
		tf_dirty(o[i], 0, 4, 2 + (uint32_t)i);
	}
	advance(expire_jiffies());
	tf_dirty(n, 0, 1, 5);
	advance(10);
	r->arg = pages;
	r->on_write_inode = hook_b8_r;

	run_kind(W_KUPDATE);
	for (i = 0; i < 3; i++) {
		expect_on(o[i], "none");
		tf_expect_on_dev(o[i], 0, 4, 2 + (uint32_t)i, "O");
	}
	expect_on(n, "b_dirty");
	cr_assert_eq(n->nr_writepages, 0);
	if (want_r) {
		cr_assert_eq(r->nr_write_inode, want_r,
			     "%s: R written %d times in one kupdate work, want %d",
			     spec, r->nr_write_inode, want_r);
		expect_on(r, "b_dirty");
		cr_assert(time_after(dirtied_when(r), dirtied_when(n)),
			  "%s: R not behind N on b_dirty", spec);
	} else {
		cr_assert_gt(r->nr_write_inode, 1,
			     "%s: R written once; this variant requeues it",
			     spec);
	}
}

/* The inode_written rule (L4784-4790): written + redirtied → redirty_tail */
Test(seed000_requeue, b8_inode_redirtier_goes_behind_the_others,
     .fini = fx_fini, .timeout = 60)
{
	static const char *const specs[] = {
		"linux-3.1", "linux-3.1,requeue=p2-v3",
		"linux-3.1,requeue=requeue4", "kara-v4.2", "mainline",
	};
	size_t i;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		b8_case(specs[i], false, 1);
		fx_fini();
	}
}

/* RIW: I_DIRTY → requeue_io_wait, retried at the next refill */
FX_TEST(seed000_requeue,
	b8_riw_retries_the_inode_redirtier_in_the_same_work, 60,
	b8_case("wu-riw", false, 0))

/*
 * Pages redirtied too: "pages left, nr_to_write > 0" → redirty_tail in
 * base, requeue4 and P2-v4; P2-v3's requeue_io brings R back at every
 * refill while the others have been written (its writes count as progress,
 * so only the work's nr_pages ends it).
 */
Test(seed000_requeue, b8_page_redirtier_goes_behind_the_others,
     .fini = fx_fini, .timeout = 60)
{
	static const char *const specs[] = {
		"linux-3.1", "linux-3.1,requeue=requeue4", "kara-v4.2",
		"mainline",
	};
	size_t i;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		b8_case(specs[i], true, 1);
		fx_fini();
	}
}

FX_TEST(seed000_requeue, b8_p2v3_requeues_the_page_redirtier, 60,
	b8_case("linux-3.1,requeue=p2-v3", true, 0))

/* ================================================================== */
/* B9: grab_super_passive() failing                                    */

/*
 * X: 2 pages dirtied at t0, expired; Y: 1 page at t0 + 100, not expired,
 * heading b_dirty.  s_umount is then held (an unmount in progress), so
 * grab_super_passive() fails for every inode of the device.  Returns t0.
 */
static unsigned long b9_setup(const char *spec)
{
	struct tf *y;
	unsigned long t0;

	FX_SETUP(.start = 80000000, .policy = spec, .trace = true);
	t0 = jiffies;
	tf_open_dirty(1, 4, 2);
	advance(100);
	y = tf_open(2, 4);
	tf_dirty(y, 0, 1, 2);
	advance(expire_jiffies() - 50);
	hold_umount();
	return t0;
}

/*
 * Base (L4080-4086: "Don't use requeue_io() to avoid busy retrying the
 * inode/sb"): X is redirty_tail'ed, its dirtied_when moved to now (older
 * than Y), and the work ends after one pass: no retry.  After the sb is
 * free again, X waits a whole expire interval more.
 */
static void b9_no_retry(const char *spec)
{
	struct wb_writeback_work w;
	struct tf *x = &fx.tf[1];
	unsigned long ts;

	b9_setup(spec);
	ts = jiffies;
	w = mkwork(W_KUPDATE);
	runner_start(RUN_WORK, &w);
	cr_assert(rn_drive(ts + 10UL * (unsigned long)HZ),
		  "%s: still retrying after 10 s", spec);
	runner_join();
	cr_assert_eq(rn.done_at, ts);
	cr_assert_eq(trace_count("writeback_start", NULL), 1,
		     "%s: %d passes, want 1", spec,
		     trace_count("writeback_start", NULL));
	cr_assert_eq(trace_count("writeback_wait", NULL), 0);
	expect_on(x, "b_dirty");
	cr_assert_eq(dirtied_when(x), ts,
		     "%s: X's dirtied_when not moved to now by redirty_tail",
		     spec);

	advance_to(ts + 10UL * (unsigned long)HZ);
	release_umount();
	run_kind(W_KUPDATE);
	cr_assert_eq(x->nr_writepages, 0, "%s: X written before it expired again",
		     spec);
	advance_to(ts + expire_jiffies());
	run_kind(W_KUPDATE);
	cr_assert_eq(x->nr_writepages, 1);
	tf_expect_on_dev(x, 0, 2, 1, "X");
}

FX_TEST(seed000_requeue, b9_linux31_super_busy_redirty_tails_without_retry, 60,
	b9_no_retry("linux-3.1"))

/* kara-v4.2 with only sbbusy switched back: the base outcome */
FX_TEST(seed000_requeue, b9_kara_v42_with_sbbusy_redirty_does_not_retry, 60,
	b9_no_retry("kara-v4.2,sbbusy=redirty"))

/*
 * P2 (L4079-4087): requeue_io, relying on P1's backoff.  X keeps its
 * dirtied_when and is retried after sleeps of 1, 2 ... 4096 jiffies: 14
 * passes, then pause > max_pause ends the work (8191 jiffies on).  It
 * stays on b_more_io, so once the sb is free the next kupdate writes it
 * at once, without waiting to expire again.
 */
Test(seed000_requeue, b9_kara_v42_super_busy_requeues_with_backoff,
     .fini = fx_fini, .timeout = 60)
{
	struct wb_writeback_work w;
	struct tf *x;
	unsigned long t0, ts, e, sleeps[32];
	int n = 0, r, i;

	t0 = b9_setup("kara-v4.2");
	x = &fx.tf[1];
	cr_assert_eq(HZ, 1000);
	cr_assert_eq(max_pause(), 5000);
	ts = jiffies;
	w = mkwork(W_KUPDATE);
	runner_start(RUN_WORK, &w);
	while ((r = wait_asleep(rn.task, &rn.done)) == 1) {
		cr_assert(time_before(jiffies, ts + 10UL * (unsigned long)HZ),
			  "still retrying after 10 s");
		expect_on(x, "b_more_io");
		cr_assert_eq(dirtied_when(x), t0);
		if (!uf_clock_next_expiry(&e) && n < 32)
			sleeps[n++] = e - jiffies;
		clock_step(ts + 10UL * (unsigned long)HZ);
	}
	cr_assert_eq(r, 0);
	runner_join();
	cr_assert_eq(n, 13, "%d sleeps, want 13", n);
	for (i = 0; i < n; i++)
		cr_assert_eq(sleeps[i], 1UL << i, "sleep %d: %lu", i,
			     sleeps[i]);
	cr_assert_eq(rn.done_at, ts + 8191, "ended at +%lu",
		     rn.done_at - ts);
	cr_assert_eq(trace_count("writeback_start", "kupdate=1"), 14);
	expect_on(x, "b_more_io");
	cr_assert_eq(dirtied_when(x), t0);
	cr_assert_eq(x->nr_writepages, 0);

	advance_to(ts + 10UL * (unsigned long)HZ);
	release_umount();
	run_kind(W_KUPDATE);
	expect_on(x, "none");
	tf_expect_on_dev(x, 0, 2, 1, "X");
}

/*
 * RIW (L1957-1966, Wu L1510-1515): requeue_io_wait parks X on
 * b_more_io_wait with dirtied_when kept, and the work ends after one pass
 * (b_more_io is empty).  The flusher wakes each second while the sb is
 * pinned: with kupdate-early (L1273-1373) each wakeup runs kupdate and
 * retries X, and the first wakeup after the release writes it; with
 * kupdate=fixed only every dirty_writeback_interval.
 */
static void b9_requeue_wait(bool early)
{
	const char *spec = early ? "wu-riw" : "wu-riw,kupdate=fixed";
	struct tf *x;
	unsigned long t0, ts, i;

	t0 = b9_setup(spec);
	x = &fx.tf[1];
	ts = jiffies;
	run_kind(W_KUPDATE);
	cr_assert_eq(trace_count("writeback_start", NULL), 1);
	cr_assert_eq(trace_count("writeback_wait", NULL), 0);
	expect_on(x, "b_more_io_wait");
	cr_assert_eq(dirtied_when(x), t0);

	for (i = 1; i < 10; i++) {
		advance_to(ts + i * (unsigned long)HZ);
		wb_do_writeback(fx.wb, 0);
		expect_on(x, "b_more_io_wait");
		cr_assert_eq(dirtied_when(x), t0);
	}
	cr_assert_eq(trace_count("writeback_start", "kupdate=1"),
		     early ? 10 : 3, "%s: %d kupdate passes", spec,
		     trace_count("writeback_start", "kupdate=1"));

	advance_to(ts + 10UL * (unsigned long)HZ);
	release_umount();
	advance(1);
	wb_do_writeback(fx.wb, 0);
	if (early) {
		expect_on(x, "none");
	} else {
		expect_on(x, "b_more_io_wait");
		advance_to(ts + 11UL * (unsigned long)HZ);
		wb_do_writeback(fx.wb, 0);
		expect_on(x, "none");
	}
	tf_expect_on_dev(x, 0, 2, 1, "X");
}

FX_TEST(seed000_requeue, b9_wu_riw_super_busy_parks_on_more_io_wait, 60,
	b9_requeue_wait(true))

FX_TEST(seed000_requeue, b9_riw_without_kupdate_early_retries_per_interval, 60,
	b9_requeue_wait(false))

/* ================================================================== */
/* B10: XFS i_size, write_inode failing while a lock is held           */

#define B10_SOLID_S	40	/* s: the lock held from the start */
#define B10_BURSTS_S	90	/* s: then 90 % held, in bursts */
#define B10_MAX_FREE	64
#define B10_MAX_TRIES	2048

static struct {
	unsigned long ts;
	unsigned long rel;		/* from ts: free for good from here */
	unsigned long free_a[B10_MAX_FREE], free_b[B10_MAX_FREE];
	int nr_free;
	unsigned long tries[B10_MAX_TRIES];
	int nr_tries;			/* atomic */
	bool written;			/* atomic */
	unsigned long written_at;
} b10;

/*
 * The lock: held for B10_SOLID_S, then bursts of 2-8 s (a fixed LCG), each
 * followed by a free gap of a ninth of it (90 % held), the last burst
 * ending at or after B10_BURSTS_S; free afterwards.
 */
static void b10_schedule(unsigned long ts)
{
	unsigned long at = B10_SOLID_S * (unsigned long)HZ;
	uint64_t x = 0x5eed000ull;

	b10.ts = ts;
	for (;;) {
		unsigned long held, gap;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		held = 2UL * (unsigned long)HZ +
		       (unsigned long)((x >> 33) % (6 * (uint64_t)HZ + 1));
		gap = held / 9;
		if (at + held >= B10_BURSTS_S * (unsigned long)HZ ||
		    b10.nr_free == B10_MAX_FREE) {
			b10.rel = at + held;
			return;
		}
		b10.free_a[b10.nr_free] = at + held;
		b10.free_b[b10.nr_free] = at + held + gap;
		b10.nr_free++;
		at += held + gap;
	}
}

static bool b10_held(unsigned long now)
{
	unsigned long d = now - b10.ts;
	int i;

	if (d >= b10.rel)
		return false;
	for (i = 0; i < b10.nr_free; i++)
		if (d >= b10.free_a[i] && d < b10.free_b[i])
			return false;
	return true;
}

/* When the lock was last released before @now (it is free at @now). */
static unsigned long b10_released(unsigned long now)
{
	unsigned long d = now - b10.ts;
	int i;

	if (d >= b10.rel)
		return b10.ts + b10.rel;
	for (i = 0; i < b10.nr_free; i++)
		if (d >= b10.free_a[i] && d < b10.free_b[i])
			return b10.ts + b10.free_a[i];
	return now;
}

static int hook_b10_x(struct tf *t, int sync)
{
	unsigned long now = jiffies;
	int i = __atomic_fetch_add(&b10.nr_tries, 1, __ATOMIC_SEQ_CST);

	(void)t;
	(void)sync;
	if (i < B10_MAX_TRIES)
		b10.tries[i] = now;
	if (b10_held(now))
		return -EAGAIN;
	b10.written_at = now;
	__atomic_store_n(&b10.written, true, __ATOMIC_RELEASE);
	return 0;
}

struct b10_result {
	bool dw_moved;			/* dirtied_when ever != ts */
	bool dw_moved_after_first_try;
	bool saw_more_io_wait;
	unsigned long longest_gap;	/* between tries */
	unsigned long shortest_gap;
};

/*
 * B10 (L3956-3964, L1941-1943), I10, I22.  X's metadata (i_size) is
 * dirtied at ts; its write_inode fails with -EAGAIN whenever the lock is
 * held.  Y is appended every second (the newer inode at the head of
 * b_dirty).  The device's own flusher runs; the test moves the clock to
 * the next timer (or append) each time the flusher sleeps, until X's
 * metadata is written.
 */
static void b10_run(const char *spec, struct b10_result *res)
{
	struct tf *x, *y;
	struct task_struct *flusher;
	unsigned long ts, next_append, limit, page = 0, first_try = 0;
	int i, n;

	memset(&b10, 0, sizeof(b10));
	memset(res, 0, sizeof(*res));
	FX_SETUP(.start = 90000000, .policy = spec, .flusher = true);
	x = tf_open(1, 4);
	y = tf_open(2, 64);
	x->on_write_inode = hook_b10_x;
	flusher = fx.wb->task;
	cr_assert_eq(wait_asleep(flusher, NULL), 1, "the flusher never slept");
	ts = jiffies;
	b10_schedule(ts);
	mark_sync(x);
	next_append = ts + (unsigned long)HZ;
	limit = ts + b10.rel + 80UL * (unsigned long)HZ;

	for (;;) {
		unsigned long e, target, dw;
		const char *where;

		cr_assert_eq(wait_asleep(flusher, NULL), 1,
			     "%s: the flusher did not go back to sleep", spec);
		if (__atomic_load_n(&b10.written, __ATOMIC_ACQUIRE))
			break;
		cr_assert(time_before(jiffies, limit),
			  "%s: X's metadata not written %lu s after the lock's release",
			  spec, (jiffies - ts - b10.rel) / (unsigned long)HZ);
		dw = dirtied_when(x);
		where = which_list(x);
		if (dw != ts) {
			res->dw_moved = true;
			if (__atomic_load_n(&b10.nr_tries, __ATOMIC_SEQ_CST))
				res->dw_moved_after_first_try = true;
		}
		if (!strcmp(where, "b_more_io_wait"))
			res->saw_more_io_wait = true;

		/*
		 * Append only while the flusher sleeps, after whatever it did
		 * at this jiffy, so that the run does not depend on which
		 * thread gets there first.
		 */
		if (!time_before(jiffies, next_append)) {
			tf_dirty(y, page, 1, 200 + (uint32_t)page);
			page = (page + 1) % 64;
			next_append += (unsigned long)HZ;
			continue;
		}
		target = next_append;
		if (!uf_clock_next_expiry(&e) && time_before(e, target))
			target = e;
		uf_clock_advance(time_after(target, jiffies) ?
				 target - jiffies : 0);
	}

	n = __atomic_load_n(&b10.nr_tries, __ATOMIC_SEQ_CST);
	cr_assert(n >= 2 && n <= B10_MAX_TRIES, "%s: %d tries", spec, n);
	first_try = b10.tries[0];
	cr_assert(!time_before(first_try, ts + expire_jiffies()),
		  "%s: X tried at +%lu, before it expired", spec,
		  first_try - ts);
	cr_assert(b10_held(first_try));
	res->shortest_gap = ULONG_MAX;
	for (i = 1; i < n; i++) {
		unsigned long g = b10.tries[i] - b10.tries[i - 1];

		if (g > res->longest_gap)
			res->longest_gap = g;
		if (g < res->shortest_gap)
			res->shortest_gap = g;
		cr_assert(b10_held(b10.tries[i - 1]));
	}
	cr_assert_eq(b10.tries[n - 1], b10.written_at);
	cr_assert_eq(istate(x) & I_DIRTY, 0);
}

/*
 * Base: each failure redirty_tails X behind Y, moving dirtied_when to now,
 * so X is tried again only once it has expired again: a whole
 * dirty_expire_interval between tries, however briefly the lock was held.
 */
Test(seed000_requeue, b10_linux31_eagain_pushes_dirtied_when_forward,
     .fini = fx_fini, .timeout = 120)
{
	struct b10_result res;

	b10_run("linux-3.1", &res);
	cr_assert(res.dw_moved_after_first_try,
		  "dirtied_when did not move after a failed write_inode");
	cr_assert_geq(res.shortest_gap, expire_jiffies(),
		      "X retried %lu jiffies after a failure, before it expired again",
		      res.shortest_gap);
	cr_assert_geq(b10.written_at - b10.tries[0], expire_jiffies());
}

/*
 * P2-v4 (L4040-4058): requeue_io, dirtied_when never moves; the kupdate
 * work retries X along its backoff and, after it gives up, the next
 * kupdate (X still on b_more_io, exempt from the cutoff) does: the longest
 * gap is max_pause, and X is written within max_pause + DWI of the lock's
 * release.
 */
Test(seed000_requeue, b10_kara_v42_eagain_retries_quickly_keeping_dirtied_when,
     .fini = fx_fini, .timeout = 120)
{
	unsigned long bound;
	struct b10_result res;

	b10_run("kara-v4.2", &res);
	bound = max_pause() + msecs_to_jiffies(
		uf_cache_obj(fx.cache)->vm.dirty_writeback_interval * 10);
	cr_assert(!res.dw_moved, "dirtied_when moved under P2-v4");
	cr_assert_leq(res.longest_gap, bound, "a gap of %lu jiffies",
		      res.longest_gap);
	cr_assert_leq(b10.written_at - b10_released(b10.written_at), bound,
		      "written %lu jiffies after the lock's release",
		      b10.written_at - b10_released(b10.written_at));
}

/*
 * RIW + kupdate-early (L1273-1373, L1895-2069): X waits on
 * b_more_io_wait with dirtied_when kept, and the flusher, sleeping 1, 2,
 * 4 ... up to max_pause while b_more_io_wait is non-empty, runs kupdate at
 * each wakeup: no gap exceeds max_pause.
 */
Test(seed000_requeue, b10_wu_riw_eagain_waits_on_more_io_wait,
     .fini = fx_fini, .timeout = 120)
{
	struct b10_result res;

	b10_run("wu-riw", &res);
	cr_assert(res.saw_more_io_wait, "X never on b_more_io_wait");
	cr_assert(!res.dw_moved, "dirtied_when moved under RIW");
	cr_assert_leq(res.longest_gap, max_pause(), "a gap of %lu jiffies",
		      res.longest_gap);
	cr_assert_leq(b10.written_at - b10_released(b10.written_at),
		      max_pause(), "written %lu jiffies after the release",
		      b10.written_at - b10_released(b10.written_at));
}
