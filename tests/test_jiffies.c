// SPDX-License-Identifier: MIT
/*
 * tests/test_jiffies.c - engine/kernel/jiffies.c: HZ, jiffies, time_after() and
 * the conversions, and the real and virtual clocks.
 *
 * Seed 000's traces show dirtied_when=4294869658, just before the 32-bit
 * wrap, and every cutoff in wb_writeback() is a time_after() between such
 * values; the backoff arithmetic of §2.4 depends on msecs_to_jiffies()
 * rounding at HZ 1000/250/100.  Those are pinned here.  Timers and
 * sleepers on the virtual clock are tested in test_timer.c/test_wait.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <time.h>

#include "kernel/jiffies.h"
#include "kernel/timer.h"

static void restore_clock(void)
{
	uf_clock_set_real();
	uf_set_hz(1000);
}

TestSuite(time, .fini = restore_clock);

Test(time, real_clock_starts_five_minutes_before_32bit_wrap)
{
	unsigned long j;

	cr_assert_eq(HZ, 1000);
	cr_assert_eq(INITIAL_JIFFIES, 4294967296UL - 300UL * 1000);
	cr_assert(!uf_clock_is_virtual());
	j = jiffies;
	/* the clock starts on first use: we are at most a second in */
	cr_assert(time_after_eq(j, INITIAL_JIFFIES), "jiffies %lu", j);
	cr_assert(time_before(j, INITIAL_JIFFIES + HZ), "jiffies %lu", j);
}

Test(time, set_hz_restarts_the_real_clock)
{
	unsigned long j;

	cr_assert_eq(uf_set_hz(100), 0);
	cr_assert_eq(HZ, 100);
	cr_assert_eq(INITIAL_JIFFIES, 4294967296UL - 300UL * 100);
	j = jiffies;
	cr_assert(time_after_eq(j, INITIAL_JIFFIES), "jiffies %lu", j);
	cr_assert(time_before(j, INITIAL_JIFFIES + HZ), "jiffies %lu", j);
}

Test(time, set_hz_refuses_bad_values_and_pending_timers)
{
	struct timer_list t;

	cr_assert_eq(uf_set_hz(0), -EINVAL);
	cr_assert_eq(uf_set_hz(-5), -EINVAL);
	cr_assert_eq(uf_set_hz(1000001), -EINVAL);
	uf_clock_set_virtual(0);
	timer_setup(&t, NULL, 0);
	mod_timer(&t, 10);
	cr_assert_eq(uf_set_hz(250), -EBUSY);
	del_timer(&t);
	cr_assert_eq(uf_set_hz(250), 0);
	cr_assert_eq(HZ, 250);
}

Test(time, real_clock_moves_at_hz)
{
	struct timespec ts = { 0, 50 * 1000000L };
	unsigned long before, after;

	before = jiffies;
	nanosleep(&ts, NULL);		/* measuring the clock, not syncing */
	after = jiffies;
	cr_assert_geq(after - before, 49, "50 ms gave %lu ticks",
		      after - before);
	cr_assert_lt(after - before, 5000, "50 ms gave %lu ticks",
		     after - before);
}

Test(time, time_after_across_the_32bit_wrap)
{
	/* 64-bit jiffies does not wrap at 2^32; comparisons must not care */
	unsigned long a = 4294869658UL;		/* seed 000's dirtied_when */
	unsigned long b = 4294967296UL + 1000;

	cr_assert(time_after(b, a));
	cr_assert(time_before(a, b));
	cr_assert(!time_after(a, b));
	cr_assert(!time_before(b, a));
	cr_assert(time_after_eq(b, a));
	cr_assert(time_before_eq(a, b));
	cr_assert(time_in_range(4294967295UL, a, b));
}

Test(time, time_after_across_the_unsigned_long_wrap)
{
	unsigned long a = ULONG_MAX - 5;
	unsigned long b = 10;		/* 16 ticks after a */

	cr_assert(time_after(b, a));
	cr_assert(time_before(a, b));
	cr_assert(!time_after(a, b));
	cr_assert(time_after_eq(b, a));
	cr_assert(!time_after_eq(a, b));
	cr_assert(time_before_eq(a, b));
	cr_assert(!time_before_eq(b, a));
	cr_assert(time_in_range(ULONG_MAX, a, b));
	cr_assert(time_in_range(0, a, b));
	cr_assert(!time_in_range(11, a, b));
	/* a plain < would say the opposite */
	cr_assert(b < a);
}

Test(time, time_after_eq_at_equality)
{
	unsigned long t = 12345;

	cr_assert(!time_after(t, t));
	cr_assert(!time_before(t, t));
	cr_assert(time_after_eq(t, t));
	cr_assert(time_before_eq(t, t));
}

struct conv {
	unsigned int ms;
	unsigned long j;
};

static void check_msecs(int hz, const struct conv *c, int n)
{
	cr_assert_eq(uf_set_hz(hz), 0);
	for (int i = 0; i < n; i++)
		cr_assert_eq(msecs_to_jiffies(c[i].ms), c[i].j,
			     "HZ=%d: msecs_to_jiffies(%u) = %lu, want %lu", hz,
			     c[i].ms, msecs_to_jiffies(c[i].ms), c[i].j);
}

#define CHECK_MSECS(hz, ...) do {					\
	const struct conv __c[] = { __VA_ARGS__ };			\
	check_msecs(hz, __c, sizeof(__c) / sizeof(__c[0]));		\
} while (0)

Test(time, msecs_to_jiffies_rounds_up)
{
	CHECK_MSECS(1000, { 0, 0 }, { 1, 1 }, { 999, 999 }, { 5000, 5000 },
		    { 30000, 30000 });
	CHECK_MSECS(250, { 0, 0 }, { 1, 1 }, { 4, 1 }, { 5, 2 }, { 8, 2 },
		    { 9, 3 }, { 100, 25 }, { 5000, 1250 });
	CHECK_MSECS(100, { 0, 0 }, { 1, 1 }, { 10, 1 }, { 11, 2 },
		    { 100, 10 }, { 5000, 500 }, { 30000, 3000 });
}

/* seed 000 §2.4: max_pause = msecs_to_jiffies(dirty_writeback_interval*10) */
Test(time, max_pause_of_the_backoff)
{
	cr_assert_eq(uf_set_hz(1000), 0);
	cr_assert_eq(msecs_to_jiffies(500 * 10), 5000);
	cr_assert_eq(uf_set_hz(250), 0);
	cr_assert_eq(msecs_to_jiffies(500 * 10), 1250);
	cr_assert_eq(uf_set_hz(100), 0);
	cr_assert_eq(msecs_to_jiffies(500 * 10), 500);
	cr_assert_eq(HZ / 10, 10);
}

Test(time, negative_msecs_mean_forever)
{
	cr_assert_eq(msecs_to_jiffies((unsigned int)-1), MAX_JIFFY_OFFSET);
	cr_assert_eq(usecs_to_jiffies((unsigned int)-1), MAX_JIFFY_OFFSET);
	cr_assert_eq(msecs_to_jiffies(INT_MAX), (unsigned long)INT_MAX);
}

Test(time, usecs_and_back)
{
	cr_assert_eq(usecs_to_jiffies(1), 1);
	cr_assert_eq(usecs_to_jiffies(1000), 1);
	cr_assert_eq(usecs_to_jiffies(1001), 2);
	cr_assert_eq(usecs_to_jiffies(100000), 100);
	cr_assert_eq(jiffies_to_msecs(100), 100);
	cr_assert_eq(jiffies_to_usecs(100), 100000);	/* HZ/10 in traces */

	cr_assert_eq(uf_set_hz(250), 0);
	cr_assert_eq(usecs_to_jiffies(1), 1);
	cr_assert_eq(usecs_to_jiffies(4000), 1);
	cr_assert_eq(usecs_to_jiffies(4001), 2);
	cr_assert_eq(jiffies_to_msecs(1), 4);
	cr_assert_eq(jiffies_to_msecs(25), 100);
	cr_assert_eq(jiffies_to_usecs(HZ / 10), 100000);

	cr_assert_eq(uf_set_hz(300), 0);	/* 1000 % HZ != 0 */
	cr_assert_eq(jiffies_to_msecs(1), 4);	/* 3.33 rounded up */
	cr_assert_eq(jiffies_to_msecs(3), 10);
	cr_assert_eq(msecs_to_jiffies(10), 3);
	cr_assert_eq(msecs_to_jiffies(11), 4);
}

Test(time, virtual_clock_stands_still_until_advanced)
{
	uf_clock_set_virtual(INITIAL_JIFFIES);
	cr_assert(uf_clock_is_virtual());
	cr_assert_eq(jiffies, INITIAL_JIFFIES);
	cr_assert_eq(jiffies, INITIAL_JIFFIES);
	cr_assert_eq(uf_clock_advance(0), 0);
	cr_assert_eq(jiffies, INITIAL_JIFFIES);
	cr_assert_eq(uf_clock_advance(7), 0);
	cr_assert_eq(jiffies, INITIAL_JIFFIES + 7);
	cr_assert_eq(uf_clock_advance(MAX_JIFFY_OFFSET + 1UL), -EINVAL);
	cr_assert_eq(jiffies, INITIAL_JIFFIES + 7);
}

Test(time, virtual_clock_crosses_both_wraps)
{
	uf_clock_set_virtual(4294967296UL - 3);
	cr_assert_eq(uf_clock_advance(5), 0);
	cr_assert_eq(jiffies, 4294967298UL);

	uf_clock_set_virtual(ULONG_MAX - 2);
	cr_assert_eq(uf_clock_advance(5), 0);
	cr_assert_eq(jiffies, 2);
}

Test(time, advance_is_refused_on_the_real_clock)
{
	unsigned long before = jiffies;

	cr_assert_eq(uf_clock_advance(1000000), -EINVAL);
	cr_assert(time_before(jiffies, before + 1000000));
}

Test(time, real_clock_resumes_from_the_virtual_value)
{
	unsigned long j;

	uf_clock_set_virtual(ULONG_MAX - 100);
	uf_clock_set_real();
	cr_assert(!uf_clock_is_virtual());
	j = jiffies;
	cr_assert(time_after_eq(j, ULONG_MAX - 100), "jiffies %lu", j);
	cr_assert(time_before(j, ULONG_MAX - 100 + HZ), "jiffies %lu", j);
}
