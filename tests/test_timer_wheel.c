// SPDX-License-Identifier: MIT
/*
 * tests/test_timer_wheel.c - when a timer fires, per preset (issue 17),
 * and the pending timers' heap at scale (issue 19).
 *
 * The 3.x presets keep 3.2.41's cascading wheel: a timer fires at its
 * expires.  linux-6.18 (and its alias mainline) take 6.18.35's
 * non-cascading wheel (kernel/time/timer.c calc_wheel_index, calc_index):
 * a timer fires at its bucket's expiry, expires rounded up past the
 * granularity of the level delta = expires - base clk picks (level n:
 * delta < 63 << 3n, granularity 8^n), so expires + 1 on level 0.
 *
 * The clock starts at W, a multiple of 4096, so that the buckets are easy
 * to work out by hand: W + 1250 on level 2 (504 <= 1250 < 4032) is rounded
 * up to the next multiple of 64, W + 1280.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "kernel/jiffies.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "mm/backing-dev.h"
#include "mm/dirty-throttle.h"
#include "uflush-internal.h"
#include "policies/policy.h"

#define WAIT_MS		5000
#define W		(1UL << 20)

static void virtual_clock(void)
{
	uf_clock_set_virtual(W);
}

/* The timer flags a cache of @preset arms its timers with. */
static unsigned int preset_timer_flags(const char *preset)
{
	struct wb_policy pol;
	struct uf_cache c;
	unsigned int flags;

	memset(&c, 0, sizeof(c));
	cr_assert_eq(wb_policy_resolve(preset, &pol), 0, "%s", preset);
	c.policy = &pol;
	flags = cache_timer_flags(&c);
	wb_policy_release(&pol);
	return flags;
}

static struct {
	int n;
	unsigned long at[4];
} fired;

static void record_fn(struct timer_list *t)
{
	(void)t;
	if (fired.n < 4)
		fired.at[fired.n] = jiffies;
	fired.n++;
}

/* Arm a timer of @flags for W + @delta at W; the jiffy it fires at. */
static unsigned long fire_time(unsigned int flags, unsigned long delta)
{
	struct timer_list t;
	unsigned long next = 0;

	uf_clock_set_virtual(W);
	fired.n = 0;
	timer_setup(&t, record_fn, flags);
	mod_timer(&t, W + delta);
	cr_assert_eq(uf_clock_next_expiry(&next), 0);
	/* one jiffy short of it: nothing fires */
	cr_assert_eq(uf_clock_advance(next - W - 1), 0);
	cr_assert_eq(fired.n, 0, "fired before its reported expiry %lu", next);
	cr_assert_eq(uf_clock_advance(1), 0);
	cr_assert_eq(fired.n, 1, "did not fire at its reported expiry %lu",
		     next);
	cr_assert_eq(fired.at[0], next);
	return fired.at[0] - W;
}

TestSuite(timer_wheel, .init = virtual_clock, .timeout = 30);

Test(timer_wheel, presets_3x_fire_at_expires)
{
	const char *const presets[] = { "linux-3.1", "linux-3.2", "linux-3.3",
					"kara-v4.2", "wu-riw" };

	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		unsigned int flags = preset_timer_flags(presets[i]);

		cr_assert_eq(flags & TIMER_UF_WHEEL, 0, "%s", presets[i]);
		cr_assert_eq(fire_time(flags, 1), 1, "%s", presets[i]);
		cr_assert_eq(fire_time(flags, 10), 10, "%s", presets[i]);
		cr_assert_eq(fire_time(flags, 1250), 1250, "%s", presets[i]);
	}
}

Test(timer_wheel, preset_618_fires_at_the_bucket_expiry)
{
	const char *const presets[] = { "linux-6.18", "mainline" };

	for (size_t i = 0; i < 2; i++) {
		unsigned int flags = preset_timer_flags(presets[i]);

		cr_assert(flags & TIMER_UF_WHEEL, "%s", presets[i]);
		/* level 0 (delta < 63): one jiffy late */
		cr_assert_eq(fire_time(flags, 1), 2, "%s", presets[i]);
		cr_assert_eq(fire_time(flags, 10), 11, "%s", presets[i]);
		cr_assert_eq(fire_time(flags, 62), 63, "%s", presets[i]);
		/* level 1 (63 <= delta < 504): up to a multiple of 8 */
		cr_assert_eq(fire_time(flags, 63), 64, "%s", presets[i]);
		cr_assert_eq(fire_time(flags, 100), 104, "%s", presets[i]);
		cr_assert_eq(fire_time(flags, 104), 112, "%s", presets[i]);
		/* level 2: dirty_writeback_interval at HZ 250, to 64s */
		cr_assert_eq(fire_time(flags, 1250), 1280, "%s", presets[i]);
		/* level 3 (4032 <= delta < 32256): 512s */
		cr_assert_eq(fire_time(flags, 5000), 5120, "%s", presets[i]);
	}
}

Test(timer_wheel, bucket_expiry_of_the_past_is_the_base_clk)
{
	/* a negative delta fires at base->clk: now, if no timer ran now */
	cr_assert_eq(timer_bucket_expiry(W - 5, TIMER_UF_WHEEL), W);
	cr_assert_eq(timer_bucket_expiry(W - 5, 0), W - 5);
	cr_assert_eq(timer_bucket_expiry(W, TIMER_UF_WHEEL), W + 1);
}

/*
 * A wheel timer re-armed in its callback sees base->clk one ahead of
 * jiffies (__run_timers increments it before running a tick's timers):
 * re-armed at W + 5 for 63 jiffies on, delta is 62, level 0, so it fires
 * at W + 69; measured from jiffies (delta 63, level 1) it would be the
 * next multiple of 8 above W + 68, W + 72.
 */
static struct timer_list rearm_timer;

static void rearm_fn(struct timer_list *t)
{
	record_fn(t);
	if (fired.n == 1)
		mod_timer(t, jiffies + 63);
}

Test(timer_wheel, rearmed_in_its_callback_counts_from_the_base_clk)
{
	fired.n = 0;
	timer_setup(&rearm_timer, rearm_fn, TIMER_UF_WHEEL);
	mod_timer(&rearm_timer, W + 4);
	cr_assert_eq(uf_clock_advance(5), 0);
	cr_assert_eq(fired.n, 1);
	cr_assert_eq(fired.at[0], W + 5);
	cr_assert_eq(uf_clock_advance(100), 0);
	cr_assert_eq(fired.n, 2);
	cr_assert_eq(fired.at[1], W + 69);
}

/* ---- schedule_timeout() of a task on behalf of a cache ---- */

static struct {
	unsigned int flags;
	long timeout, left;
	unsigned long woke;
	struct task_struct *task;
	sem_t ready, done;
} sl;

static void *sleeper_fn(void *arg)
{
	(void)arg;
	sl.task = current;
	current->timer_flags = sl.flags;
	sem_post(&sl.ready);
	sl.left = schedule_timeout_uninterruptible(sl.timeout);
	sl.woke = jiffies;
	sem_post(&sl.done);
	return NULL;
}

/* The jiffies after W at which a sleep of @timeout from W ends. */
static unsigned long sleep_time(const char *preset, long timeout)
{
	unsigned long next = 0;
	pthread_t th;

	uf_clock_set_virtual(W);
	sl.flags = preset_timer_flags(preset);
	sl.timeout = timeout;
	sem_init(&sl.ready, 0, 0);
	sem_init(&sl.done, 0, 0);
	pthread_create(&th, NULL, sleeper_fn, NULL);
	cr_assert(tu_sem_wait_ms(&sl.ready, WAIT_MS));
	cr_assert_eq(uf_wait_task_sleeping(sl.task, WAIT_MS), 0);
	cr_assert_eq(uf_clock_next_expiry(&next), 0);
	cr_assert_eq(uf_clock_advance(next - W - 1), 0);
	cr_assert_neq(sem_trywait(&sl.done), 0, "%s: woke a tick early",
		      preset);
	cr_assert_eq(uf_clock_advance(1), 0);
	cr_assert(tu_sem_wait_ms(&sl.done, WAIT_MS), "%s: never woke",
		  preset);
	pthread_join(th, NULL);
	cr_assert_eq(sl.left, 0, "%s: timed out with %ld left", preset,
		     sl.left);
	return sl.woke - W;
}

Test(timer_wheel, schedule_timeout_per_preset)
{
	cr_assert_eq(sleep_time("linux-3.2", 20), 20);
	cr_assert_eq(sleep_time("linux-3.3", 1), 1);
	cr_assert_eq(sleep_time("mainline", 20), 21);
	cr_assert_eq(sleep_time("linux-6.18", 1), 2);
	cr_assert_eq(sleep_time("linux-6.18", 1250), 1280);
}

/* On the real clock the sleeper waits for the same jiffy itself: never
 * earlier (a lower bound only: the machine may run it late). */
static unsigned long real_sleep(unsigned int flags, long timeout)
{
	unsigned long start;

	current->timer_flags = flags;
	/* from the start of a tick, as the kernel's timer interrupt is */
	start = jiffies;
	while (jiffies == start)
		;
	start = jiffies;
	schedule_timeout_uninterruptible(timeout);
	current->timer_flags = 0;
	return jiffies - start;
}

Test(timer_wheel, real_clock_sleep_ends_at_the_bucket_expiry)
{
	uf_clock_set_real();
	for (int i = 0; i < 3; i++) {
		cr_assert_geq(real_sleep(0, 3), 3);
		cr_assert_geq(real_sleep(TIMER_UF_WHEEL, 3), 4);
		cr_assert_geq(real_sleep(TIMER_UF_WHEEL, 20), 21);
	}
}

/* ---- the heap: many timers, one strict order ---- */

#define NT	3000

static struct heap_probe {
	struct timer_list timer;
	unsigned long expires;
	unsigned long order;		/* the test's own arming count */
	bool deleted;
} hp[NT];

static struct {
	int n;
	int idx[NT];
	unsigned long at[NT];
} hfired;

static void heap_fn(struct timer_list *t)
{
	struct heap_probe *p = from_timer(p, t, timer);

	hfired.idx[hfired.n] = (int)(p - hp);
	hfired.at[hfired.n] = jiffies;
	hfired.n++;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned long rnd(unsigned long n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned long)(rng % n);
}

static int by_expiry_then_order(const void *a, const void *b)
{
	const struct heap_probe *x = &hp[*(const int *)a];
	const struct heap_probe *y = &hp[*(const int *)b];

	if (x->expires != y->expires)
		return x->expires < y->expires ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void heap_arm(int i, unsigned long *order)
{
	unsigned long expires = W + 1 + rnd(200);

	/* few distinct expiries: many ties, broken by arming order; a
	 * pending timer re-armed for its own expiry keeps its place
	 * (__mod_timer's shortcut) */
	if (!timer_pending(&hp[i].timer) || expires != hp[i].expires)
		hp[i].order = (*order)++;
	hp[i].expires = expires;
	mod_timer(&hp[i].timer, expires);
}

Test(timer_wheel, many_timers_fire_by_expiry_then_arming_order)
{
	static int want[NT];
	unsigned long order = 0;
	int n = 0, i;

	for (i = 0; i < NT; i++) {
		timer_setup(&hp[i].timer, heap_fn, 0);
		hp[i].deleted = false;
		heap_arm(i, &order);
	}
	/* delete a third from anywhere in the heap, move another third */
	for (i = 0; i < NT; i++) {
		unsigned long r = rnd(3);

		if (r == 0) {
			cr_assert_eq(del_timer(&hp[i].timer), 1);
			cr_assert(!timer_pending(&hp[i].timer));
			hp[i].deleted = true;
		} else if (r == 1) {
			heap_arm(i, &order);
		}
	}
	/* and pop some mid-way, then delete more among what is left */
	cr_assert_eq(uf_clock_advance(50), 0);
	for (i = 0; i < NT; i += 7)
		if (!hp[i].deleted && timer_pending(&hp[i].timer)) {
			cr_assert_eq(del_timer(&hp[i].timer), 1);
			hp[i].deleted = true;
		}
	cr_assert_eq(uf_clock_advance(200), 0);
	cr_assert(!uf_timers_pending());

	for (i = 0; i < NT; i++)
		if (!hp[i].deleted)
			want[n++] = i;
	qsort(want, (size_t)n, sizeof(want[0]), by_expiry_then_order);
	cr_assert_eq(hfired.n, n, "%d timers fired, want %d", hfired.n, n);
	for (i = 0; i < n; i++) {
		int got = hfired.idx[i];

		cr_assert(!hp[got].deleted, "deleted timer %d fired", got);
		cr_assert_eq(got, want[i], "#%d fired timer %d, want %d", i,
			     got, want[i]);
		cr_assert_eq(hfired.at[i], hp[got].expires);
	}
	cr_assert_gt(n, NT / 4);
}

/* ---- who arms on a cache's behalf: the throttle, the flusher ---- */

static unsigned int bdp_saw;

static int bdp_record(struct address_space *mapping, unsigned long nr_new,
		      unsigned int flags, long *pause)
{
	(void)mapping;
	(void)nr_new;
	(void)flags;
	(void)pause;
	bdp_saw = current->timer_flags;
	return 0;
}

/* The timer flags a throttle call of a @preset cache sleeps with, and
 * those of the cache's flusher wakeup timer. */
static void cache_arms(const char *preset, unsigned int *bdp,
		       unsigned int *wakeup)
{
	static struct backing_dev_info bdi;
	struct address_space mapping;
	struct uf_cache_config cfg;
	struct uf_cache *cache, *c;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 64;
	cfg.policy = preset;
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0, "%s", preset);
	c = uf_cache_obj(cache);
	c->policy->balance_dirty_pages = bdp_record;
	cr_assert_eq(bdi_init(&bdi, c, NULL, "tw"), 0);
	memset(&mapping, 0, sizeof(mapping));
	mapping.backing_dev_info = &bdi;
	current->timer_flags = 0x4000;		/* the caller's own */
	bdp_saw = ~0u;
	cr_assert_eq(balance_dirty_pages_ratelimited_flags(&mapping, 0, 0,
							   NULL), 0);
	cr_assert_eq(current->timer_flags, 0x4000, "%s: not restored",
		     preset);
	current->timer_flags = 0;
	*bdp = bdp_saw;
	*wakeup = bdi.wb.wakeup_timer.flags;
	cr_assert_eq(uf_cache_close(cache), 0);
}

Test(timer_wheel, throttle_and_flusher_timer_follow_the_preset)
{
	unsigned int bdp, wakeup;

	cache_arms("linux-3.2", &bdp, &wakeup);
	cr_assert_eq(bdp, 0, "linux-3.2 throttle: %#x", bdp);
	cr_assert_eq(wakeup & TIMER_UF_WHEEL, 0);
	cache_arms("mainline", &bdp, &wakeup);
	cr_assert_eq(bdp, TIMER_UF_WHEEL, "mainline throttle: %#x", bdp);
	cr_assert(wakeup & TIMER_UF_WHEEL);
}
