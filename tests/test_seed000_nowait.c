// SPDX-License-Identifier: MIT
/*
 * tests/test_seed000_nowait.c - the no-progress handling of wb_writeback()
 * (the "nowait" knob) pinned to seed 000, "writeback: Improve busyloop
 * prevention" (labels of docs/seeds.md: B0, B1, B4a, B5; invariants
 * I5-I9, I20, I21).
 *
 * Description: each test opens a cache on the virtual clock with a policy
 * spec, a device without a flusher (UF_DEV_NO_FLUSHER) and a metadata-only
 * file E whose write_inode fails with -EAGAIN, as XFS does on a contended
 * ilock (seed 000 L3958-3962).  Under requeue=p2-v4 (kara-v4.2) E is
 * requeue_io'd to b_more_io after every pass, and no pass makes progress:
 * the situation the series is about.  A helper thread (the "worker") runs
 * wb_writeback() with a hand-made work; the test thread is the only one to
 * move the clock.  It waits until the worker sleeps (uf_wait_task_sleeping),
 * reads the length of its timed sleep off the timer queue
 * (uf_clock_next_expiry), checks that the worker is still asleep one jiffy
 * before the end and lets it run by advancing the last jiffy.  A work that
 * ends parks the worker in schedule(), so "asleep" plus a done flag tells a
 * finished work from a sleeping one without polling.  E's write_inode
 * count is the count of passes.  Where a test needs wakeups (lost wakeup,
 * dirtier kick) the worker is made bdi->wb.task, so bdi_queue_work() and
 * bdi_start_background_writeback() wake it as they would the flusher.
 * The power test (I20/I21) runs the real flusher on the virtual clock.
 *
 * Each variant is run next to a neighbour that must behave differently,
 * so each test can fail.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "fixture.h"
#include "kernel/timer.h"

#define WAIT_MS		30000u	/* bound of a handshake, real ms */
#define T0		7000000ul	/* virtual clock at setup */
#define FX_FSIZE_MAX	(512ul << 20)	/* largest file a test may write */


/* ------------------------------------------------------------------ */
/* Fixture: E (unwritable metadata), F (fails, then not), D (pages)    */

/* What the write_inode hook of a file does and saw, under ev.lock. */
struct nw_file {
	int nr_write_inode;	/* WB_SYNC_NONE write_inode calls: passes */
	int nr_not_running;	/* ... seeing !writeback_in_progress() */
	bool fail;		/* write_inode returns -EAGAIN */
	int succeed_at;		/* ... but from call N on (0: never) */
	bool hold_fsync;	/* fsync's write_inode holds I_SYNC */
};

static struct nw_file nw[FX_MAX_FILES + 1];	/* by ino */

/* Events between the hooks, the worker and the test; one lock for all. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool fsync_inside;	/* fsync is in E's write_inode, I_SYNC held */
	bool fsync_release;
} ev = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static struct {
	int hook_calls;			/* atomic: wb_nowait_test_hook */
	int hook_fire_at;		/* the call that queues a work */
	bool hook_foreign_wb;		/* atomic: got another wb */
	pthread_t fsync_th;
	bool have_fsync_th;
	int fsync_ret;
} nx;

/* The thread that plays the flusher and runs one work. */
static struct {
	pthread_t th;
	bool started;
	struct task_struct *task;	/* one reference held by the test */
	struct wb_writeback_work work;
	bool as_flusher;		/* make it bdi->wb.task */
	bool frame_running;		/* BDI_writeback_running around it */
	bool done;			/* under ev.lock */
	long ret;
	bool exit;			/* atomic */
} wk;

/*
 * fsync's write_inode of E (sync = 1): E is under I_SYNC.  Dirty E again,
 * as a writer would (only the flags change under I_SYNC), so that the
 * worker sees an inode that is dirty and busy, not one that became clean;
 * then hold until the test releases us.
 */
static int hold_in_fsync(struct tf *t)
{
	struct timespec ts;
	int err = 0;

	uf_file_mark_inode_dirty(t->f, UF_I_DIRTY_SYNC);
	uf_timespec_after_ms(&ts, CLOCK_REALTIME, WAIT_MS);
	pthread_mutex_lock(&ev.lock);
	ev.fsync_inside = true;
	pthread_cond_broadcast(&ev.cond);
	while (!ev.fsync_release && !fx_closing() && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&ev.cond, &ev.lock, &ts);
	pthread_mutex_unlock(&ev.lock);
	return 0;
}

static int nw_write_inode(struct tf *t, int sync)
{
	struct nw_file *w = &nw[t->ino];
	int n, ret = 0;

	if (sync) {
		if (w->hold_fsync)
			return hold_in_fsync(t);
		return 0;
	}
	pthread_mutex_lock(&ev.lock);
	n = ++w->nr_write_inode;
	if (!writeback_in_progress(fx.bdi))
		w->nr_not_running++;
	if (w->fail && !(w->succeed_at && n >= w->succeed_at))
		ret = -EAGAIN;
	pthread_cond_broadcast(&ev.cond);
	pthread_mutex_unlock(&ev.lock);
	return ret;
}

static int passes_of(struct tf *t)
{
	int n;

	pthread_mutex_lock(&ev.lock);
	n = nw[t->ino].nr_write_inode;
	pthread_mutex_unlock(&ev.lock);
	return n;
}

/* E is ino 1 in every test. */
static int passes(void)
{
	return passes_of(&fx.tf[1]);
}

static void set_fail(struct tf *t, bool fail, int succeed_at)
{
	pthread_mutex_lock(&ev.lock);
	nw[t->ino].fail = fail;
	nw[t->ino].succeed_at = succeed_at;
	pthread_mutex_unlock(&ev.lock);
}

/* ---- the worker ---- */

static void *worker_fn(void *arg)
{
	struct task_struct *me = current;
	long ret;

	(void)arg;
	get_task_struct(me);
	if (wk.as_flusher) {
		spin_lock(&fx.bdi->wb_lock);
		fx.bdi->wb.task = me;
		spin_unlock(&fx.bdi->wb_lock);
	}
	pthread_mutex_lock(&ev.lock);
	wk.task = me;
	pthread_cond_broadcast(&ev.cond);
	pthread_mutex_unlock(&ev.lock);

	/* as wb_do_writeback() frames the works it runs */
	if (wk.frame_running)
		set_bit(BDI_writeback_running, &fx.bdi->state);
	ret = wb_writeback(fx.wb, &wk.work);
	if (wk.frame_running)
		clear_bit(BDI_writeback_running, &fx.bdi->state);

	pthread_mutex_lock(&ev.lock);
	wk.ret = ret;
	wk.done = true;
	pthread_cond_broadcast(&ev.cond);
	pthread_mutex_unlock(&ev.lock);

	/* park: "asleep and done" is how the test sees the end */
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		if (__atomic_load_n(&wk.exit, __ATOMIC_ACQUIRE))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return NULL;
}

static bool worker_done(void)
{
	bool done;

	pthread_mutex_lock(&ev.lock);
	done = wk.done;
	pthread_mutex_unlock(&ev.lock);
	return done;
}

/* Wait for ev.cond until @pred holds; false after WAIT_MS. */
#define ev_wait(pred) ({						\
	struct timespec __ts;						\
	int __err = 0;							\
	bool __ok;							\
	uf_timespec_after_ms(&__ts, CLOCK_REALTIME, WAIT_MS);		\
	pthread_mutex_lock(&ev.lock);					\
	while (!(pred) && __err != ETIMEDOUT)				\
		__err = pthread_cond_timedwait(&ev.cond, &ev.lock, &__ts); \
	__ok = (pred);							\
	pthread_mutex_unlock(&ev.lock);					\
	__ok;								\
})

/*
 * Stop the worker whatever it is doing: hooks give way (closing), a timed
 * or untimed sleep is cut short, the work ends, the thread leaves.
 */
static void worker_stop(void)
{
	struct timespec ts;
	int i;

	if (!wk.started)
		return;
	ev_wait(wk.task != NULL);
	for (i = 0; i < 600 && !worker_done(); i++) {
		if (wk.task)
			wake_up_process(wk.task);
		uf_timespec_after_ms(&ts, CLOCK_REALTIME, 50);
		pthread_mutex_lock(&ev.lock);
		if (!wk.done)
			pthread_cond_timedwait(&ev.cond, &ev.lock, &ts);
		pthread_mutex_unlock(&ev.lock);
	}
	__atomic_store_n(&wk.exit, true, __ATOMIC_RELEASE);
	if (wk.task)
		wake_up_process(wk.task);
	pthread_join(wk.th, NULL);
	if (wk.task) {
		spin_lock(&fx.bdi->wb_lock);
		if (fx.bdi->wb.task == wk.task)
			fx.bdi->wb.task = NULL;
		spin_unlock(&fx.bdi->wb_lock);
		put_task_struct(wk.task);
	}
	memset(&wk, 0, sizeof(wk));
}

static void nw_stop(void)
{
	wb_nowait_test_hook = NULL;
	pthread_mutex_lock(&ev.lock);
	pthread_cond_broadcast(&ev.cond);
	pthread_mutex_unlock(&ev.lock);
	worker_stop();
	if (nx.have_fsync_th)
		pthread_join(nx.fsync_th, NULL);
	nx.have_fsync_th = false;
}

static void fx_fini(void)
{
	fx_teardown(nw_stop);
}

/*
 * Virtual clock at T0, a cache at @hz with @policy,
 * dirty_writeback_centisecs @dwi and dirty_expire_centisecs @expire_cs, a
 * device (without its flusher unless @flusher), tracepoints to a file.
 */
static void nw_setup_opts(const char *policy, unsigned int hz,
			  unsigned int dwi, unsigned int expire_cs,
			  bool flusher)
{
	memset(nw, 0, sizeof(nw));
	memset(&nx, 0, sizeof(nx));
	memset(&wk, 0, sizeof(wk));
	pthread_mutex_lock(&ev.lock);
	ev.fsync_inside = false;
	ev.fsync_release = false;
	pthread_mutex_unlock(&ev.lock);
	wb_nowait_test_hook = NULL;

	/*
	 * A broken variant busy-loops with tracing on: let its trace writes
	 * fail (EFBIG) rather than fill the disk until the test times out.
	 * Each test runs in its own process.
	 */
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &(struct rlimit){ FX_FSIZE_MAX, FX_FSIZE_MAX });

	FX_SETUP(.start = T0, .policy = policy, .hz = hz, .set_dwi = true,
		 .dwi = dwi, .expire_cs = expire_cs, .trace = true,
		 .flusher = flusher);
	cr_assert_eq(HZ, (int)hz);
}

static void nw_setup(const char *policy, unsigned int dwi)
{
	nw_setup_opts(policy, 1000, dwi, 3000, false);
}

/* A file whose write_inode is nw_write_inode(). */
static struct tf *nw_open(unsigned long ino, unsigned long pages)
{
	struct tf *t = tf_open(ino, pages);

	memset(&nw[ino], 0, sizeof(nw[ino]));
	t->on_write_inode = nw_write_inode;
	return t;
}

/* A file whose metadata is dirty and whose write_inode fails (-EAGAIN). */
static struct tf *tf_open_unwritable(unsigned long ino)
{
	struct tf *t = nw_open(ino, 1);

	set_fail(t, true, 0);
	mark_sync(t);
	return t;
}

/* D: @pages dirty pages that async writeback declines, as btrfs did. */
static struct tf *tf_open_vetoed(unsigned long ino, unsigned long pages)
{
	struct tf *t = nw_open(ino, pages);

	set_veto(t, 1u << UF_WB_KUPDATE | 1u << UF_WB_BACKGROUND |
		    1u << UF_WB_OTHER_NONE);
	tf_dirty(t, 0, pages, 3);
	return t;
}

/*
 * Start the worker on a work of kind @k.  The delayed flusher wakeup that
 * the first dirtying armed is cancelled first: the worker's timeout must be
 * the only timer, and nothing but the test may wake it.
 */
static void worker_start(enum wkind k, bool as_flusher, bool frame)
{
	del_timer_sync(&fx.wb->wakeup_timer);
	wk.work = mkwork(k);
	wk.as_flusher = as_flusher;
	wk.frame_running = frame;
	cr_assert_eq(pthread_create(&wk.th, NULL, worker_fn, NULL), 0);
	wk.started = true;
	cr_assert(ev_wait(wk.task != NULL), "the worker did not start");
}

/*
 * Wait until the worker sleeps: in the no-progress wait (false) or parked
 * after its work ended (true).
 */
static bool worker_idle(void)
{
	int ret = uf_wait_task_sleeping(wk.task, WAIT_MS);

	cr_assert_eq(ret, 0, "the worker neither sleeps nor ends (E passes: %d, jiffies T0+%lu)",
		     passes(), jiffies - T0);
	return worker_done();
}

static bool worker_asleep_now(void)
{
	return uf_wait_task_sleeping(wk.task, 0) == 0;
}

/* Length of the worker's timed sleep, 0 if it sleeps without a timeout. */
static unsigned long timed_sleep_len(void)
{
	unsigned long exp;

	cr_assert(!timer_pending(&fx.wb->wakeup_timer),
		  "test setup: the delayed flusher wakeup is armed");
	if (uf_clock_next_expiry(&exp))
		return 0;
	cr_assert(time_after(exp, jiffies), "a timer is overdue");
	return exp - jiffies;
}

/* The worker sleeps @len: still asleep, no pass, at len - 1; woken at len. */
static void wake_after(unsigned long len)
{
	int n = passes();

	if (len > 1) {
		advance(len - 1);
		cr_assert(worker_asleep_now(),
			  "the worker woke before its %lu-jiffy timeout ended",
			  len);
		cr_assert_eq(passes(), n, "a pass ran during the sleep");
	}
	advance(1);
}

/*
 * Step the worker from sleep to sleep until its work ends, or until the
 * next sleep would take the virtual time spent past @budget, or @max
 * sleeps.  The sleeps' lengths go to @lens; returns how many.
 */
static int step_sleeps(unsigned long budget, unsigned long *lens, int max,
		       bool *done)
{
	unsigned long spent = 0, len;
	int n = 0;

	for (;;) {
		if (worker_idle()) {
			*done = true;
			return n;
		}
		len = timed_sleep_len();
		cr_assert(len > 0, "sleep %d has no timeout (E passes %d)",
			  n + 1, passes());
		if (spent + len > budget || n == max) {
			*done = false;
			return n;
		}
		lens[n++] = len;
		wake_after(len);
		spent += len;
	}
}

static void expect_lens(const unsigned long *got, int n,
			const unsigned long *want, int nwant, const char *what)
{
	int i;

	for (i = 0; i < n && i < nwant; i++)
		cr_assert_eq(got[i], want[i],
			     "%s: sleep %d lasted %lu jiffies, want %lu",
			     what, i + 1, got[i], want[i]);
	cr_assert_eq(n, nwant, "%s: %d sleeps, want %d", what, n, nwant);
}

/* ================================================================== */
/* B1 / I5 / B0: busy loop or sleep                                    */

#define SPIN_PASSES	10000

#define NO_PROGRESS_LOOP(name, ...)					\
	FX_TEST(seed000_nowait, name, 120, no_progress_loop(__VA_ARGS__))

/*
 * E fails until its SPIN_PASSES-th write_inode.  A variant that does not
 * really sleep runs all the passes with the virtual clock standing still
 * (nothing but the test moves it) and ends; a sleeping one is found in a
 * timed sleep of 1 jiffy after the first pass.
 */
static void no_progress_loop(const char *policy, bool spins)
{
	struct tf *e;
	int waits;

	nw_setup(policy, 500);
	e = tf_open_unwritable(1);
	set_fail(e, true, SPIN_PASSES);
	advance(1);
	worker_start(W_NONE, false, false);

	if (spins) {
		cr_assert(worker_idle(),
			  "%s: the worker slept after %d passes; want a busy loop",
			  policy, passes());
		cr_assert_eq(passes(), SPIN_PASSES);
		cr_assert_eq(jiffies, T0 + 1,
			     "%s: the clock moved: the loop was not busy",
			     policy);
		waits = trace_count("writeback_wait", NULL);
		cr_assert(waits >= SPIN_PASSES - 1 && waits <= SPIN_PASSES,
			  "%s: %d writeback_wait lines for %d no-progress passes",
			  policy, waits, SPIN_PASSES - 1);
		cr_assert_eq(wk.ret, 0);
		return;
	}
	cr_assert_not(worker_idle(),
		      "%s: the work ended; want a no-progress sleep", policy);
	cr_assert_eq(passes(), 1, "%s: %d passes before the first sleep",
		     policy, passes());
	cr_assert_eq(timed_sleep_len(), 1,
		     "%s: first no-progress sleep of %lu jiffies, want 1",
		     policy, timed_sleep_len());
	cr_assert(tf_on(e, "b_more_io"));
	cr_assert_eq(trace_count("writeback_wait", NULL), 1);
}

/*
 * B1 (seed 000 L4525-4535, v3 "pause 1,2,4.. capped at HZ/10" with no task
 * state set): schedule_timeout() in TASK_RUNNING returns at once, so the
 * busyloop prevention busy-loops: 10000 no-progress passes, each traced
 * writeback_wait, in zero virtual time.
 */
NO_PROGRESS_LOOP(b1_v3a_busy_loops, "kara-v4.2,nowait=v3a", true)

/* B1 fix (L5043: __set_current_state(TASK_INTERRUPTIBLE)): v3b sleeps. */
NO_PROGRESS_LOOP(b1_v3b_sleeps, "kara-v4.2,nowait=v3b", false)

/* I5 (L87-103): v4 sleeps, and so does the kara-v4.2 preset. */
NO_PROGRESS_LOOP(b1_v4_sleeps, "kara-v4.2,nowait=v4", false)

NO_PROGRESS_LOOP(b1_kara_v42_sleeps, "kara-v4.2", false)

/*
 * B0 (L73-86, removed lines): the pre-series wait is on the I_SYNC of the
 * oldest b_more_io inode; E is not under writeback, so the wait returns at
 * once.  With P2's requeue_io of a write_inode failure (requeue=p2-v4) that
 * is a busy loop: the combination the series had to fix with P1.
 */
NO_PROGRESS_LOOP(b0_with_p2v4_requeue_busy_loops, "kara-v4.2,nowait=b0", true)

/*
 * The neighbours of the busy loop that do not loop, because E never reaches
 * b_more_io: linux-3.1 (requeue=base, §2.2: write_inode failed →
 * redirty_tail, B10) and mainline (requeue_inode: I_DIRTY → redirty_tail).
 * One pass, no wait, E back on b_dirty.
 */
static void no_more_io_no_wait(const char *policy)
{
	struct tf *e;

	nw_setup(policy, 500);
	e = tf_open_unwritable(1);
	advance(1);
	worker_start(W_NONE, false, false);
	cr_assert(worker_idle(), "%s: the work did not end", policy);
	cr_assert_eq(passes(), 1, "%s: %d passes", policy, passes());
	cr_assert_eq(jiffies, T0 + 1);
	cr_assert(tf_on(e, "b_dirty"), "%s: E is not back on b_dirty", policy);
	cr_assert_eq(trace_count("writeback_wait", NULL), 0);
}

FX_TEST(seed000_nowait, b0_linux31_requeue_base_has_no_busy_loop, 60,
	no_more_io_no_wait("linux-3.1"))

FX_TEST(seed000_nowait, mainline_preset_has_no_busy_loop, 60,
	no_more_io_no_wait("mainline"))

/* ================================================================== */
/* B0 / mainline: waiting for I_SYNC                                   */

static void *fsync_fn(void *arg)
{
	struct tf *t = arg;

	nx.fsync_ret = uf_fsync(t->f);
	return NULL;
}

#define I_SYNC_WAIT(name, ...)						\
	FX_TEST(seed000_nowait, name, 120, i_sync_wait(__VA_ARGS__))

/*
 * E is under I_SYNC by an fsync (held inside its write_inode, E dirtied
 * again meanwhile).  The worker's WB_SYNC_NONE pass requeue_io's it
 * (I18) and makes no progress.
 *  - b0 (L80-86) and mainline (inode_sleep_on_writeback): sleep until E's
 *    I_SYNC clears, with no timeout: 10 s of virtual time do not wake it,
 *    the end of the fsync does;
 *  - v4 (@timed): a timed sleep of 1 jiffy instead.
 */
static void i_sync_wait(const char *policy, bool timed)
{
	unsigned long len;
	struct tf *e;

	nw_setup(policy, 500);
	e = nw_open(1, 1);
	nw[e->ino].hold_fsync = true;
	mark_sync(e);
	advance(1);
	cr_assert_eq(pthread_create(&nx.fsync_th, NULL, fsync_fn, e), 0);
	nx.have_fsync_th = true;
	cr_assert(ev_wait(ev.fsync_inside), "fsync did not reach write_inode");
	cr_assert(e->inode->i_state & I_SYNC);

	worker_start(W_NONE, false, false);
	cr_assert_not(worker_idle(), "%s: the work ended with E under I_SYNC",
		      policy);
	cr_assert_eq(passes(), 0, "the worker wrote E under I_SYNC");
	cr_assert(tf_on(e, "b_more_io"), "E (I_SYNC) is not on b_more_io");
	len = timed_sleep_len();
	if (timed) {
		cr_assert_eq(len, 1, "%s: sleep of %lu jiffies, want 1",
			     policy, len);
	} else {
		cr_assert_eq(len, 0,
			     "%s: a timed sleep (%lu): want to sleep on I_SYNC",
			     policy, len);
		advance(10ul * (unsigned long)HZ);
		cr_assert(worker_asleep_now(),
			  "%s: the I_SYNC wait ended with E still under I_SYNC",
			  policy);
		cr_assert_not(worker_done());
	}

	/* fsync ends: I_SYNC clears and wakes the waiter */
	pthread_mutex_lock(&ev.lock);
	ev.fsync_release = true;
	pthread_cond_broadcast(&ev.cond);
	pthread_mutex_unlock(&ev.lock);
	pthread_join(nx.fsync_th, NULL);
	nx.have_fsync_th = false;
	cr_assert_eq(nx.fsync_ret, 0, "fsync: %s", strerror(-nx.fsync_ret));
	if (timed)
		wake_after(len);
	cr_assert(worker_idle(), "%s: the work did not end after the fsync",
		  policy);
	cr_assert_eq(trace_count("writeback_wait", NULL), 1);
}

I_SYNC_WAIT(b0_sleeps_until_i_sync_clears, "linux-3.1", false)

I_SYNC_WAIT(mainline_sleeps_until_i_sync_clears, "mainline", false)

I_SYNC_WAIT(v4_sleeps_timed_while_i_sync_held, "linux-3.1,nowait=v4", true)

/* ================================================================== */
/* Backoff arithmetic (§2.4), I5, I7 timeout                           */

/* 1, 2, 4 ... up to @last: the sleeps of a backoff */
static int doubling(unsigned long *lens, unsigned long last)
{
	unsigned long p;
	int n = 0;

	for (p = 1; p <= last; p <<= 1)
		lens[n++] = p;
	return n;
}

/*
 * §2.4 backoff arithmetic (L49-54, L87-103; v4.1 L391-411, v4.2
 * L804-830): single sleeps of 1, 2, 4 ... jiffies; the work ends at the
 * first no-progress pass after pause has passed max_pause =
 * msecs_to_jiffies(dirty_writeback_centisecs * 10), or HZ when that is 0.
 * HZ=1000, DWI=500: 13 sleeps up to 4096, 8191 jiffies in all, 14 passes
 * (I5: ≤ log2(max_pause) + 2 passes in 10 simulated seconds; I7: ends after
 * less than 2 * max_pause of sleep).  DWI=0: max_pause = HZ, sleeps up to
 * 512, 1023 jiffies.
 */
static void backoff_v4_hz(const char *policy, unsigned int hz,
			  unsigned int dwi, unsigned long last)
{
	unsigned long want[64], lens[64], sum = 0, max_pause;
	int nwant = doubling(want, last);
	bool done;
	int n, i;

	nw_setup_opts(policy, hz, dwi, 3000, false);
	tf_open_unwritable(1);
	advance(1);
	worker_start(W_NONE, false, false);
	n = step_sleeps(10ul * (unsigned long)HZ, lens, 64, &done);
	expect_lens(lens, n, want, nwant, policy);
	cr_assert(done, "%s: the work goes on after %d sleeps", policy, n);
	for (i = 0; i < n; i++)
		sum += lens[i];
	max_pause = dwi ? msecs_to_jiffies(dwi * 10) : (unsigned long)HZ;
	cr_assert(lens[n - 1] <= max_pause && 2 * lens[n - 1] > max_pause);
	cr_assert(sum < 2 * max_pause);
	cr_assert_eq(jiffies, T0 + 1 + sum,
		     "%s: the work ended at T0+1+%lu, want +%lu", policy,
		     jiffies - T0 - 1, sum);
	cr_assert_eq(passes(), nwant + 1, "%s: %d passes, want %d", policy,
		     passes(), nwant + 1);
	cr_assert_eq(trace_count("writeback_wait", NULL), nwant);
	cr_assert(tf_on(&fx.tf[1], "b_more_io"), "E left b_more_io");
}

#define BACKOFF_V4(name, ...)						\
	FX_TEST(seed000_nowait, name, 120, backoff_v4(__VA_ARGS__))

static void backoff_v4(const char *policy, unsigned int dwi)
{
	backoff_v4_hz(policy, 1000, dwi, dwi ? 4096 : 512);
}

BACKOFF_V4(backoff_v4_1_to_4096_then_ends, "kara-v4.2,nowait=v4", 500)

BACKOFF_V4(backoff_v4r7_1_to_4096_then_ends, "kara-v4.2,nowait=v4-r7", 500)

BACKOFF_V4(backoff_v41_1_to_4096_then_ends, "kara-v4.2,nowait=v4.1", 500)

BACKOFF_V4(backoff_v42_1_to_4096_then_ends, "kara-v4.2", 500)

BACKOFF_V4(backoff_v4_dwi0_max_pause_is_hz, "kara-v4.2,nowait=v4", 0)

BACKOFF_V4(backoff_v42_dwi0_max_pause_is_hz, "kara-v4.2", 0)

/* §2.4: HZ=250, max_pause 1250: sleeps 1 ... 1024 (2047 j ≈ 8.19 s). */
FX_TEST(seed000_nowait, backoff_v42_hz250_1_to_1024_then_ends, 120,
	backoff_v4_hz("kara-v4.2", 250, 500, 1024))

/* §2.4: HZ=100, max_pause 500: sleeps 1 ... 256 (511 j = 5.11 s). */
FX_TEST(seed000_nowait, backoff_v4_hz100_1_to_256_then_ends, 120,
	backoff_v4_hz("kara-v4.2,nowait=v4", 100, 500, 256))

/*
 * §2.4 edge case, as policies/nowait-v4.c documents its choice (the
 * posted "pause > max_pause", kept): at HZ=100 with DWI=512, max_pause is
 * 512, a power of two; pause stops at 512 and never exceeds it, so the
 * work never ends by timeout: 1 ... 256, then 512 for ever.  Next to the
 * test above (DWI=500: ends after 256), this is what tells ">" from ">=".
 */
Test(seed000_nowait, backoff_v4_power_of_two_max_pause_never_times_out,
     .fini = fx_fini, .timeout = 120)
{
	unsigned long lens[64], want[64];
	bool done;
	int n, nwant;

	nw_setup_opts("kara-v4.2,nowait=v4", 100, 512, 3000, false);
	tf_open_unwritable(1);
	advance(1);
	worker_start(W_NONE, false, false);
	nwant = doubling(want, 256);
	want[nwant++] = 512;
	want[nwant++] = 512;
	n = step_sleeps(20ul * (unsigned long)HZ, lens, 64, &done);
	cr_assert_not(done, "the work ended after %d sleeps (pause >= max_pause?)",
		      n);
	expect_lens(lens, n, want, nwant, "HZ=100 DWI=512");
	cr_assert_eq(timed_sleep_len(), 512);
}

/*
 * v3b (L5039-5047): "if (pause < HZ / 10) pause <<= 1", no abort: sleeps
 * 1 ... 64, then 128 for ever.  In 10 simulated seconds: 84 sleeps (85
 * passes), and the work is still going: B2's 25 s kupdate stall came from
 * this (L6518-6527).  Compare v4's 14 passes and end.
 */
Test(seed000_nowait, backoff_v3b_caps_at_128_never_ends, .fini = fx_fini,
     .timeout = 120)
{
	static const unsigned long head[] = { 1, 2, 4, 8, 16, 32, 64 };
	unsigned long lens[128], sum = 0;
	bool done;
	int n, i;

	nw_setup("kara-v4.2,nowait=v3b", 500);
	tf_open_unwritable(1);
	advance(1);
	worker_start(W_NONE, false, false);
	n = step_sleeps(10ul * (unsigned long)HZ, lens, 128, &done);
	cr_assert_not(done, "v3b ended a no-progress work after %d sleeps", n);
	cr_assert_eq(n, 84, "%d sleeps in 10 s, want 84", n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(lens[i], i < 7 ? head[i] : 128ul,
			     "sleep %d lasted %lu jiffies", i + 1, lens[i]);
		sum += lens[i];
	}
	cr_assert_eq(sum, 9983);
	cr_assert_eq(passes(), n + 1);
	cr_assert(worker_asleep_now());
	cr_assert_eq(timed_sleep_len(), 128);
}

#define PROGRESS_RESETS_PAUSE(name, ...)				\
	FX_TEST(seed000_nowait, name, 120, progress_resets_pause(__VA_ARGS__))

/*
 * I6 (L62-66: "if (progress) { pause = 1; continue; }"): E and F fail; F
 * starts to succeed during the 5th sleep (16 jiffies); its pass makes
 * progress, and the next no-progress sleep is 1 jiffy again, not 32 (v4)
 * or 128 (v3b).
 */
static void progress_resets_pause(const char *policy)
{
	static const unsigned long before[] = { 1, 2, 4, 8 };
	unsigned long lens[8];
	struct tf *f;
	bool done;
	int n;

	nw_setup(policy, 500);
	tf_open_unwritable(1);
	f = tf_open_unwritable(2);
	advance(1);
	worker_start(W_NONE, false, false);
	n = step_sleeps(10ul * (unsigned long)HZ, lens, 4, &done);
	cr_assert_not(done);
	expect_lens(lens, n, before, 4, policy);
	cr_assert_eq(timed_sleep_len(), 16);
	cr_assert_eq(passes_of(f), 5);

	set_fail(f, false, 0);
	wake_after(16);
	cr_assert_not(worker_idle(), "%s: the work ended", policy);
	cr_assert_eq(passes_of(f), 6, "F not retried");
	cr_assert(!(f->inode->i_state & I_DIRTY), "F still dirty");
	cr_assert_eq(timed_sleep_len(), 1,
		     "%s: the sleep after progress lasts %lu jiffies, want 1",
		     policy, timed_sleep_len());
	wake_after(1);
	cr_assert_not(worker_idle());
	cr_assert_eq(timed_sleep_len(), 2);
}

PROGRESS_RESETS_PAUSE(i6_v4_progress_resets_pause, "kara-v4.2,nowait=v4")

PROGRESS_RESETS_PAUSE(i6_v42_progress_resets_pause, "kara-v4.2")

PROGRESS_RESETS_PAUSE(i6_v3b_progress_resets_pause, "kara-v4.2,nowait=v3b")

/* ================================================================== */
/* I7: other work, background threshold                                */

/*
 * scenario(policy, v4) for the nowait variants that end a work on other
 * work or the threshold (v4, v4.1, v4.2: true) and the one that does not
 * (v3b: false): one test each, n_<variant>_<v4 name> or n_v3b_<v3b name>.
 */
#define NW_VARIANT(name, scenario, ...)					\
	FX_TEST(seed000_nowait, name, 60, scenario(__VA_ARGS__))
#define NOWAIT_VARIANTS(scenario, n, v4_name, v3b_name)			\
	NW_VARIANT(n##_v4_##v4_name, scenario, "kara-v4.2,nowait=v4", true) \
	NW_VARIANT(n##_v41_##v4_name, scenario, "kara-v4.2,nowait=v4.1", \
		   true)						\
	NW_VARIANT(n##_v42_##v4_name, scenario, "kara-v4.2", true)	\
	NW_VARIANT(n##_v3b_##v3b_name, scenario, "kara-v4.2,nowait=v3b", \
		   false)

/*
 * I4/I7 (L87-90, L400-403): a no-progress work ends at once when a work is
 * queued, even one that does not yield at the top of the loop (a plain
 * WB_SYNC_NONE work): one pass, no sleep, no writeback_wait.  v3b has no
 * such check and sleeps.
 */
static void queued_work_ends(const char *policy, bool ends)
{
	nw_setup(policy, 500);
	tf_open_unwritable(1);
	advance(1);
	/* no task to wake: the work just sits on work_list */
	bdi_start_writeback(fx.bdi, 1, WB_REASON_SYNC);
	cr_assert(work_queued());
	worker_start(W_NONE, false, false);
	if (ends) {
		cr_assert(worker_idle(),
			  "%s: a no-progress work went on with work queued",
			  policy);
		cr_assert_eq(jiffies, T0 + 1);
		cr_assert_eq(trace_count("writeback_wait", NULL), 0);
	} else {
		cr_assert_not(worker_idle(), "%s: the work ended", policy);
		cr_assert_eq(timed_sleep_len(), 1);
	}
	cr_assert_eq(passes(), 1);
}

NOWAIT_VARIANTS(queued_work_ends, i7, queued_work_ends_work,
		queued_work_does_not_end_work)

/*
 * I7 (L87-90: "!work->for_background && over_bground_thresh()"): D keeps
 * 16 dirty pages that async writeback declines (the cache stays over a
 * 4-page background threshold), E fails.
 *  - a non-background work ends after its first no-progress pass (v4.x;
 *    v3b sleeps instead);
 *  - a background work does not end on the threshold: it sleeps.  A work
 *    queued during its sleep wakes it (I8) and it yields (I4).
 */
static void over_bg_thresh(const char *policy, bool v4)
{
	nw_setup(policy, 500);
	tf_open_unwritable(1);
	tf_open_vetoed(3, 16);
	set_tunable("dirty_background_bytes", 4 * PG);
	cr_assert(over_bground_thresh(fx.bdi), "test setup: not over bg");
	advance(1);

	worker_start(W_NONE, false, false);
	if (v4) {
		cr_assert(worker_idle(),
			  "%s: a non-background work went on over the background threshold",
			  policy);
		cr_assert_eq(passes(), 1);
		cr_assert_eq(jiffies, T0 + 1);
		cr_assert_eq(trace_count("writeback_wait", NULL), 0);
	} else {
		cr_assert_not(worker_idle(), "%s: the work ended", policy);
		cr_assert_eq(timed_sleep_len(), 1);
		return;
	}
	worker_stop();
	cr_assert(over_bground_thresh(fx.bdi));

	worker_start(W_BACKGROUND, true, false);
	cr_assert_not(worker_idle(),
		      "%s: a background work ended on the background threshold",
		      policy);
	cr_assert_eq(passes(), 2);
	cr_assert_eq(timed_sleep_len(), 1);
	cr_assert_eq(trace_count("writeback_wait", NULL), 1);
	bdi_start_writeback(fx.bdi, 1, WB_REASON_SYNC);
	cr_assert(worker_idle(),
		  "%s: a work queued during the sleep did not end it", policy);
	cr_assert_eq(jiffies, T0 + 1, "the sleep ran out instead");
	cr_assert_eq(passes(), 2);
}

NOWAIT_VARIANTS(over_bg_thresh, i7, over_bg_thresh_ends_only_nonbackground,
		over_bg_thresh_does_not_end_work)

/* ================================================================== */
/* I8: wakeups, and B5 the lost one                                    */

/*
 * I8 (L249-256: "when some work is queued ... we always wakeup flusher
 * thread so these conditions will be noticed promptly"): a work queued
 * while the worker sleeps its 3rd pause (4 jiffies) wakes it at once; v4.x
 * then ends the work.  v3b wakes too (TASK_INTERRUPTIBLE) but goes on:
 * its next sleep is 8.
 */
static void queue_during_sleep(const char *policy, bool ends)
{
	static const unsigned long want[] = { 1, 2 };
	unsigned long lens[4], now;
	bool done;
	int n;

	nw_setup(policy, 500);
	tf_open_unwritable(1);
	advance(1);
	worker_start(W_NONE, true, false);
	n = step_sleeps(10ul * (unsigned long)HZ, lens, 2, &done);
	expect_lens(lens, n, want, 2, policy);
	cr_assert_eq(timed_sleep_len(), 4);
	now = jiffies;
	bdi_start_writeback(fx.bdi, 1, WB_REASON_SYNC);
	cr_assert(ev_wait(nw[1].nr_write_inode == 4),
		  "%s: the queued work did not wake the sleeper", policy);
	cr_assert_eq(worker_idle(), ends, "%s: the work %s", policy,
		     ends ? "goes on" : "ended");
	cr_assert_eq(jiffies, now);
	if (!ends)
		cr_assert_eq(timed_sleep_len(), 8);
}

NOWAIT_VARIANTS(queue_during_sleep, i8, queued_work_wakes_sleeper,
		queued_work_wakes_but_goes_on)

/*
 * wb_nowait_test_hook: in the window after the checks and before the
 * sleep, at the 3rd no-progress wait (pause 4), queue a work: bdi_queue_work
 * wakes bdi->wb.task, the worker itself.
 */
static void hook_queue_work(struct bdi_writeback *wb)
{
	int n = __atomic_add_fetch(&nx.hook_calls, 1, __ATOMIC_SEQ_CST);

	if (wb != fx.wb)
		__atomic_store_n(&nx.hook_foreign_wb, true, __ATOMIC_RELEASE);
	if (n == nx.hook_fire_at && !fx_closing())
		bdi_start_writeback(fx.bdi, 1, WB_REASON_SYNC);
}

#define LOST_WAKEUP(name, ...)						\
	FX_TEST(seed000_nowait, name, 60, lost_wakeup(__VA_ARGS__))

/*
 * B5 / I8 (Jan L257-259 "racy wrt wakeups"; v4 L87-103 vs v4.1 L391-411).
 *  - v4, v4-r7: the state is still TASK_RUNNING when the work is queued,
 *    so the wakeup is lost and the worker sleeps the full 4 jiffies with
 *    work queued (still asleep at 3), then ends the work;
 *  - v4.1, v4.2: TASK_INTERRUPTIBLE was set before the checks, the wakeup
 *    makes schedule_timeout() return at once: the work ends with the clock
 *    where it was.
 */
static void lost_wakeup(const char *policy, bool lost)
{
	static const unsigned long want[] = { 1, 2 };
	unsigned long lens[4];
	bool done;
	int n;

	nw_setup(policy, 500);
	tf_open_unwritable(1);
	advance(1);
	nx.hook_fire_at = 3;
	wb_nowait_test_hook = hook_queue_work;
	worker_start(W_NONE, true, false);
	/* the 3rd state seen is the lost-wakeup sleep, or the end */
	n = step_sleeps(10ul * (unsigned long)HZ, lens, 2, &done);
	expect_lens(lens, n, want, 2, policy);
	cr_assert_eq(jiffies, T0 + 1 + 3);
	cr_assert_eq(__atomic_load_n(&nx.hook_calls, __ATOMIC_SEQ_CST), 3,
		     "%s: wb_nowait_test_hook called %d times, want 3",
		     policy, nx.hook_calls);
	cr_assert_not(nx.hook_foreign_wb);
	cr_assert_eq(passes(), 3 + (done ? 1 : 0));
	if (!lost) {
		cr_assert(done,
			  "%s: the worker sleeps %lu jiffies with work queued: wakeup lost",
			  policy, timed_sleep_len());
		cr_assert_eq(jiffies, T0 + 1 + 3);
		return;
	}
	cr_assert_not(done, "%s: the wakeup was not lost", policy);
	cr_assert(work_queued());
	cr_assert_eq(timed_sleep_len(), 4,
		     "%s: the lost wakeup sleep lasts %lu, want the full 4",
		     policy, timed_sleep_len());
	wake_after(4);
	cr_assert(worker_idle(), "%s: the work did not end after the sleep",
		  policy);
	cr_assert_eq(passes(), 4);
	cr_assert_eq(jiffies, T0 + 1 + 3 + 4);
}

LOST_WAKEUP(b5_v4_loses_wakeup, "kara-v4.2,nowait=v4", true)

LOST_WAKEUP(b5_v4r7_loses_wakeup, "kara-v4.2,nowait=v4-r7", true)

LOST_WAKEUP(b5_v41_keeps_wakeup, "kara-v4.2,nowait=v4.1", false)

LOST_WAKEUP(b5_v42_keeps_wakeup, "kara-v4.2", false)

/* ================================================================== */
/* B4a / I9: writeback_in_progress() during the sleep                  */

#define RUNNING_BIT(name, ...)						\
	FX_TEST(seed000_nowait, name, 60, running_bit(__VA_ARGS__))

/*
 * B4a / I9 (Wu L515-520; requeue7 L3938-3950; v4.2 L820-826): the worker
 * runs its work framed by BDI_writeback_running as wb_do_writeback() does.
 *  - v4.2, v4-r7: writeback_in_progress() is false during each backoff
 *    sleep and true during the passes after it; a throttled dirtier's
 *    "if (!writeback_in_progress(bdi)) bdi_start_background_writeback()"
 *    therefore kicks the sleeper: it retries at once (pause doubled);
 *  - v4, v4.1: it stays true, the dirtier never kicks, and the worker
 *    sleeps on (the 20 s stall of B4).
 */
static void running_bit(const char *policy, bool cleared)
{
	unsigned long now;

	nw_setup(policy, 500);
	tf_open_unwritable(1);
	advance(1);
	worker_start(W_NONE, true, true);

	cr_assert_not(worker_idle());
	cr_assert_eq(timed_sleep_len(), 1);
	cr_assert_eq(writeback_in_progress(fx.bdi), !cleared,
		     "%s: writeback_in_progress() is %d during the sleep",
		     policy, !cleared);
	wake_after(1);
	cr_assert_not(worker_idle());
	cr_assert_eq(timed_sleep_len(), 2);
	cr_assert_eq(writeback_in_progress(fx.bdi), !cleared,
		     "%s: writeback_in_progress() is %d during the 2nd sleep",
		     policy, !cleared);
	cr_assert_eq(nw[1].nr_not_running, 0,
		     "%s: a pass ran with BDI_writeback_running clear", policy);

	/* the throttled dirtier of balance_dirty_pages (L515-520) */
	now = jiffies;
	if (!writeback_in_progress(fx.bdi))
		bdi_start_background_writeback(fx.bdi);
	if (cleared) {
		cr_assert(ev_wait(nw[1].nr_write_inode == 3),
			  "%s: the dirtier's kick did not wake the sleeper",
			  policy);
		cr_assert_not(worker_idle());
		cr_assert_eq(jiffies, now);
		cr_assert_eq(timed_sleep_len(), 4);
		cr_assert_not(writeback_in_progress(fx.bdi));
		wake_after(4);
		cr_assert_not(worker_idle());
		cr_assert_eq(passes(), 4);
	} else {
		cr_assert(worker_asleep_now());
		cr_assert_eq(passes(), 2, "%s: kicked while in progress",
			     policy);
		cr_assert_eq(timed_sleep_len(), 2);
		wake_after(2);
		cr_assert_not(worker_idle());
		cr_assert_eq(passes(), 3);
	}
	cr_assert_eq(nw[1].nr_not_running, 0,
		     "%s: a pass ran with BDI_writeback_running clear", policy);
}

RUNNING_BIT(b4a_v42_not_in_progress_while_sleeping, "kara-v4.2", true)

RUNNING_BIT(b4a_v4r7_not_in_progress_while_sleeping,
	    "kara-v4.2,nowait=v4-r7", true)

RUNNING_BIT(b4a_v4_in_progress_while_sleeping, "kara-v4.2,nowait=v4", false)

RUNNING_BIT(b4a_v41_in_progress_while_sleeping, "kara-v4.2,nowait=v4.1", false)

/* ================================================================== */
/* I20 / I21: the flusher's wakeups with an unwritable inode (RIW)     */

/*
 * I20 / I21 / B12 (kupdate-early L1273-1373; Jan's power argument
 * L259-264).  The real flusher on the virtual clock; one inode E whose
 * write_inode always fails, nothing else.  Under wu-riw E lives on
 * b_more_io_wait.  With kupdate=early the flusher retries it after 1, 2,
 * 4 ... 4096 jiffies (pause < max_pause = 5000), then once per max_pause:
 * never faster, never every 10 ms.  With kupdate=fixed it retries once per
 * dirty_writeback_interval from the start.  Each wakeup is one kupdate
 * pass (one write_inode of E).  dirty_expire is 1 s so that E has expired
 * at the flusher's first (delayed) wakeup, 5 s after E was dirtied.
 */
static void flusher_wakeups(const char *policy, bool early)
{
	struct task_struct *flusher;
	unsigned long gaps[40], exp, max_pause;
	int i, n = 0, nshort = early ? 13 : 0;

	nw_setup_opts(policy, 1000, 500, 100, true);
	max_pause = msecs_to_jiffies(500 * 10);
	spin_lock(&fx.bdi->wb_lock);
	flusher = fx.bdi->wb.task;
	spin_unlock(&fx.bdi->wb_lock);
	cr_assert_not_null(flusher);
	nw_open(1, 1);
	cr_assert_eq(uf_wait_task_sleeping(flusher, WAIT_MS), 0);
	cr_assert_eq(uf_clock_next_expiry(&exp), -ENOENT,
		     "the idle flusher sleeps with a timeout");
	set_fail(&fx.tf[1], true, 0);
	mark_sync(&fx.tf[1]);

	/* step the flusher through 60 simulated seconds and more */
	for (n = 0; n < (int)(sizeof(gaps) / sizeof(gaps[0])); n++) {
		int before = passes();

		cr_assert_eq(uf_wait_task_sleeping(flusher, WAIT_MS), 0,
			     "the flusher does not go back to sleep");
		cr_assert_eq(uf_clock_next_expiry(&exp), 0,
			     "%s: the flusher sleeps without a timeout with E dirty",
			     policy);
		gaps[n] = exp - jiffies;
		cr_assert(gaps[n] > 0);
		if (gaps[n] > 1)
			advance(gaps[n] - 1);
		cr_assert_eq(passes(), before, "a retry before the timeout");
		advance(1);
		cr_assert(ev_wait(nw[1].nr_write_inode == before + 1),
			  "%s: wakeup %d did not retry E", policy, n + 1);
		if (n >= nshort + 12)
			break;
	}
	n++;
	cr_assert_eq(gaps[0], max_pause, "the first wakeup came after %lu",
		     gaps[0]);
	for (i = 1; i <= nshort; i++)
		cr_assert_eq(gaps[i], 1ul << (i - 1),
			     "%s: retry %d after %lu jiffies, want %lu", policy,
			     i, gaps[i], 1ul << (i - 1));
	for (i = nshort + 1; i < n; i++)
		cr_assert_eq(gaps[i], max_pause,
			     "%s: wakeup %d after %lu jiffies, want max_pause %lu",
			     policy, i, gaps[i], max_pause);
	cr_assert_eq(passes(), n);
	cr_assert_eq(uf_wait_task_sleeping(flusher, WAIT_MS), 0);
}

FX_TEST(seed000_nowait, i21_wu_riw_kupdate_early_backs_off_to_max_pause, 120,
	flusher_wakeups("wu-riw", true))

FX_TEST(seed000_nowait, i20_wu_riw_kupdate_fixed_retries_every_dwi, 120,
	flusher_wakeups("wu-riw,kupdate=fixed", false))
