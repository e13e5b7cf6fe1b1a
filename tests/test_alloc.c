// SPDX-License-Identifier: MIT
/*
 * tests/test_alloc.c - the page allocation contract (engine/mm/page_alloc.c,
 * include/uflush.h "-ENOMEM and short counts"): an allocation fails only
 * when every frame is pinned by a page holder (uf_page_get); a frame that
 * reclaim or writeback can free, or that an in-flight call will release,
 * is waited for, and frames freed while several threads wait are shared
 * out so that each of them gets on.
 *
 * The unit tests build a cache and an inode by hand (no device, no
 * flusher) and pin frames the way uf_page_get does (page->uf_users); the
 * integration tests go through the public API on a scratch device.
 * The old allocator gave up after 16 rounds that freed nothing with
 * nothing under writeback (about 1.7 s): the tests that wait longer than
 * that for a frame which does come fail on it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs/fs.h"
#include "kernel/sched.h"
#include "mm/backing-dev.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "fixture.h"
#include "testutil.h"
#include "uflush.h"
#include "uflush-internal.h"
#include "fs/writeback.h"

/* Longer than the old allocator's retries (16 x HZ/10) took to give up. */
#define OLD_GIVEUP_MS	2500

/* What uf_page_get / uf_page_put do to a page besides the reference. */
static void pin(struct page *page)
{
	get_page(page);
	__atomic_add_fetch(&page->uf_users, 1, __ATOMIC_ACQ_REL);
}

static void unpin(struct hand *h, struct page *page)
{
	__atomic_sub_fetch(&page->uf_users, 1, __ATOMIC_ACQ_REL);
	put_page(&h->c, page);
}

static double secs_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------------ */
/* An allocating thread, and a way to see it sleep                     */

struct allocator {
	struct fx_bg bg;
	struct hand *h;
	struct page *page;		/* what alloc_page() gave */
};

static void allocator_fn(void *arg)
{
	struct allocator *a = arg;

	a->page = alloc_page(&a->h->c);
}

static void allocator_start(struct allocator *a, struct hand *h)
{
	memset(a, 0, sizeof(*a));
	a->h = h;
	fx_bg_start(&a->bg, allocator_fn, a);
}

/* Asleep now, and still waiting after the old allocator would have quit. */
static void allocator_expect_waiting(struct allocator *a, const char *what)
{
	fx_bg_expect_asleep(&a->bg, "allocator", what);
	sleep_ms(OLD_GIVEUP_MS);
	cr_assert_not(fx_bg_done(&a->bg), "%s: alloc_page returned %s instead of waiting",
		      what, a->page ? "a frame" : "NULL (-ENOMEM)");
}

static struct page *allocator_join(struct allocator *a, const char *what)
{
	fx_bg_join(&a->bg, "allocator", what);
	return a->page;
}

/* ------------------------------------------------------------------ */
/* Unit: when -ENOMEM, when to wait                                    */

/*
 * The unit tests' hand, an 8-page file on 4 frames (.init = ah_4), or on 2
 * with page 0 cached and pinned (ah_2_pinned).  The test ends with
 * ah_done(): it unpins what is still pinned and frees the hand, which
 * demands every frame back (in the test: criterion ignores assertions in
 * a .fini, Criterion#211).
 */
static struct hand *ah;

static void ah_4(void)
{
	ah = hand_new(4, 8);
}

static void ah_2_pinned(void)
{
	ah = hand_new(2, 8);
	pin(cache_page(ah, 0));
}

static void ah_done(void)
{
	unsigned long i;

	for (i = 0; i < ah->c.pool.nr; i++)
		while (__atomic_load_n(&ah->c.pool.pages[i].uf_users,
				       __ATOMIC_ACQUIRE))
			unpin(ah, &ah->c.pool.pages[i]);
	hand_free(ah);
}

Test(alloc, enomem_at_once_when_every_frame_is_pinned, .timeout = 30,
     .init = ah_4)
{
	struct hand *h = ah;
	struct page *p[4];
	struct timespec t0;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		p[i] = cache_page(h, i);
		pin(p[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_null(alloc_page(&h->c), "every frame is pinned: -ENOMEM");
	cr_assert_lt(secs_since(&t0), 1.0, "took %.3f s to fail", secs_since(&t0));
	for (i = 0; i < 4; i++)
		cr_assert(cached(h, i), "pinned page %u was dropped", i);

	/* one unpinned clean page: it is reclaimed, the pinned ones stay */
	unpin(h, p[2]);
	p[2] = alloc_page(&h->c);
	cr_assert(p[2], "a clean unpinned page was not reclaimed");
	cr_assert_not(cached(h, 2));
	cr_assert(cached(h, 0) && cached(h, 1) && cached(h, 3));
	put_page(&h->c, p[2]);
	ah_done();
}

/*
 * Pinned pages on the inactive list, clean ones on an active list no
 * longer than it (so never aged by the usual rule): the clean ones are
 * still reclaimable, and the allocation must get one.
 */
Test(alloc, reclaims_clean_active_pages_behind_pinned_inactive_ones,
     .timeout = 30, .init = ah_4)
{
	struct hand *h = ah;
	struct page *p[4], *got;
	unsigned int i;

	for (i = 0; i < 4; i++)
		p[i] = cache_page(h, i);
	for (i = 2; i < 4; i++) {
		mark_page_accessed(&h->c, p[i]);
		mark_page_accessed(&h->c, p[i]);
		cr_assert(PageActive(p[i]));
	}
	pin(p[0]);
	pin(p[1]);
	got = alloc_page(&h->c);
	cr_assert(got, "-ENOMEM with two clean pages on the active list");
	cr_assert(cached(h, 0) && cached(h, 1), "a pinned page was reclaimed");
	put_page(&h->c, got);
	ah_done();
}

/*
 * The last frame is held by an in-flight call (a plain reference, not a
 * pin): it will be released, so the allocator waits for it, however long.
 */
Test(alloc, waits_for_a_frame_an_inflight_call_holds, .timeout = 60,
     .init = ah_2_pinned)
{
	struct page *held = page_pool_alloc(&ah->c);
	struct allocator a;

	cr_assert(held);
	allocator_start(&a, ah);
	allocator_expect_waiting(&a, "last frame held by an in-flight call");
	put_page(&ah->c, held);
	cr_assert_eq(allocator_join(&a, "frame released"), held,
		     "the released frame did not go to the waiter");
	put_page(&ah->c, held);
	ah_done();
}

/* While it waits, the last unpinned frame becomes pinned too: -ENOMEM. */
Test(alloc, enomem_when_the_last_frame_becomes_pinned, .timeout = 60,
     .init = ah_2_pinned)
{
	struct page *p1 = find_or_create_page(hmap(ah), 1); /* in-flight read */
	struct allocator a;

	cr_assert(p1);
	allocator_start(&a, ah);
	cr_assert_eq(uf_wait_task_sleeping(a.bg.task, 5000), 0);
	/* the read ends and hands the page to uf_page_get's caller */
	SetPageUptodate(p1);
	unlock_page(p1);
	__atomic_add_fetch(&p1->uf_users, 1, __ATOMIC_ACQ_REL);
	cr_assert_null(allocator_join(&a, "all frames pinned"),
		       "a frame came from a cache whose frames are all pinned");
	ah_done();
}

/* Every frame under writeback: wait for end_page_writeback, then reclaim. */
Test(alloc, waits_for_writeback_to_end, .timeout = 60, .init = ah_4)
{
	struct hand *h = ah;
	struct page *p[4], *got;
	struct allocator a;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		p[i] = cache_page(h, i);
		lock_page(p[i]);
		test_set_page_writeback(p[i]);
		unlock_page(p[i]);
	}
	allocator_start(&a, h);
	cr_assert_eq(uf_wait_task_sleeping(a.bg.task, 5000), 0,
		     "the allocator did not wait for writeback");
	sleep_ms(200);
	cr_assert_not(fx_bg_done(&a.bg), "alloc_page returned during writeback");
	end_page_writeback(p[2]);
	got = allocator_join(&a, "writeback of page 2 ended");
	cr_assert(got, "no frame after writeback ended");
	cr_assert_not(cached(h, 2), "the page done with writeback was not the one freed");
	put_page(&h->c, got);
	end_page_writeback(p[0]);
	end_page_writeback(p[1]);
	end_page_writeback(p[3]);
	ah_done();
}

/*
 * One frame not pinned, eight threads each caching their own pages
 * through it: every allocation needs the frame another thread's page
 * holds, reclaimed.  All must get all their pages, none -ENOMEM.
 */
#define MANY_THREADS	8
#define MANY_ROUNDS	300

struct many_arg {
	struct hand *h;
	pthread_barrier_t *start;
	unsigned int id;
	unsigned int rounds_done;
	unsigned int failed_at;		/* 0, or round + 1 of a NULL */
};

static void *many_fn(void *arg)
{
	struct many_arg *m = arg;
	struct page *page;
	unsigned int r;

	pthread_barrier_wait(m->start);
	for (r = 0; r < MANY_ROUNDS; r++) {
		page = find_or_create_page(hmap(m->h),
					   16 + m->id * MANY_ROUNDS + r);
		if (!page) {
			m->failed_at = r + 1;
			break;
		}
		/* "read" it: the others meanwhile find nothing to reclaim */
		memset(page_address(&m->h->c, page), (int)r, PAGE_SIZE);
		sched_yield();
		SetPageUptodate(page);
		unlock_page(page);
		put_page(&m->h->c, page);
		m->rounds_done++;
	}
	return NULL;
}

Test(alloc, one_free_frame_many_allocators_all_progress, .timeout = 120)
{
	struct hand *h = hand_new(16, 16 + MANY_THREADS * MANY_ROUNDS);
	struct many_arg m[MANY_THREADS];
	pthread_t t[MANY_THREADS];
	pthread_barrier_t start;
	struct page *p[15];
	unsigned int i;

	for (i = 0; i < 15; i++) {
		p[i] = cache_page(h, i);
		pin(p[i]);
	}
	pthread_barrier_init(&start, NULL, MANY_THREADS);
	for (i = 0; i < MANY_THREADS; i++) {
		m[i] = (struct many_arg){ .h = h, .start = &start, .id = i };
		cr_assert_eq(pthread_create(&t[i], NULL, many_fn, &m[i]), 0);
	}
	for (i = 0; i < MANY_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	for (i = 0; i < MANY_THREADS; i++)
		cr_expect_eq(m[i].failed_at, 0,
			     "thread %u: -ENOMEM at round %u with one frame reclaimable",
			     i, m[i].failed_at);
	for (i = 0; i < MANY_THREADS; i++)
		cr_assert_eq(m[i].rounds_done, MANY_ROUNDS,
			     "thread %u got %u of %u pages", i, m[i].rounds_done,
			     MANY_ROUNDS);
	for (i = 0; i < 15; i++) {
		cr_assert(cached(h, i), "pinned page %u was reclaimed", i);
		unpin(h, p[i]);
	}
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* Through the public API, on a scratch device                         */

#define IT_FILE_OFF	(1ull << 20)
#define IT_PAGES	64
#define IT_CACHE	16

static void it_open(struct tu_cdf *it, unsigned int dirty_ratio)
{
	struct uf_cache_config cfg;

	memset(it, 0, sizeof(*it));
	it->path = tu_dev(TU_FILE, TU_DEV_SIZE);
	tu_raw_fill(it->path, 0, IT_FILE_OFF + IT_PAGES * PAGE_SIZE, 1);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = IT_CACHE;
	if (dirty_ratio) {
		cfg.dirty_ratio = dirty_ratio;
		cfg.dirty_background_ratio = dirty_ratio;
	}
	tu_cdf_open(it, &cfg, IT_FILE_OFF, IT_PAGES * PAGE_SIZE);
}

/* The whole file through uf_pread against @want. */
static void it_expect_file(struct tu_cdf *it, const unsigned char *want,
			   const char *what)
{
	size_t len = IT_PAGES * PAGE_SIZE;
	unsigned char *buf = tu_alloc(len);
	ssize_t n = uf_pread(it->file, buf, len, 0);
	long bad = -1;
	size_t i;

	for (i = 0; n == (ssize_t)len && i < len && bad < 0; i++)
		if (buf[i] != want[i])
			bad = (long)i;
	free(buf);
	cr_assert_eq(n, (ssize_t)len, "%s: uf_pread = %zd", what, n);
	cr_assert_eq(bad, -1, "%s: file byte %ld differs", what, bad);
}

/*
 * The caller holds every frame: each call that needs one more fails with
 * -ENOMEM and changes nothing; a write (read) that already copied some
 * bytes returns that short count; after the puts, everything works and
 * the file holds exactly what was written.
 */
Test(alloc, it_caller_pins_every_frame, .timeout = 60, .fini = tu_fini)
{
	size_t len = IT_PAGES * PAGE_SIZE;
	unsigned char *want = tu_alloc(len), *buf = tu_alloc(4 * PAGE_SIZE);
	struct uf_page *pg[IT_CACHE], *extra;
	unsigned int i;
	struct tu_cdf it;

	it_open(&it, 0);
	tu_fill(want, len, IT_FILE_OFF, 1);
	/* pages 32-39 held for writing, 40-47 read-only */
	for (i = 0; i < IT_CACHE; i++)
		cr_assert_eq(uf_page_get(it.file, 32 + i,
					 i < 8 ? UF_PAGE_WRITE : 0, &pg[i]), 0,
			     "uf_page_get(%u)", 32 + i);

	tu_fill(buf, 4 * PAGE_SIZE, 0, 9);
	cr_assert_eq(uf_pwrite(it.file, buf, 2 * PAGE_SIZE, 100), -ENOMEM);
	cr_assert_eq(uf_pread(it.file, buf, PAGE_SIZE, 0), -ENOMEM);
	cr_assert_eq(uf_page_get(it.file, 0, 0, &extra), -ENOMEM);
	cr_assert_eq(uf_page_get(it.file, 0, UF_PAGE_NOREAD, &extra), -ENOMEM);
	/* pages 46 and 47 are cached (pinned), 48 needs a frame */
	cr_assert_eq(uf_pread(it.file, buf, 4 * PAGE_SIZE, 46 * PAGE_SIZE),
		     2 * PAGE_SIZE, "a read short of a frame is short");
	cr_assert_eq(tu_check(buf, 2 * PAGE_SIZE, IT_FILE_OFF + 46 * PAGE_SIZE,
			      1), -1);
	tu_fill(buf, 3 * PAGE_SIZE, 0, 9);
	cr_assert_eq(uf_pwrite(it.file, buf, 3 * PAGE_SIZE, 46 * PAGE_SIZE),
		     2 * PAGE_SIZE, "a write short of a frame is short");
	memcpy(want + 46 * PAGE_SIZE, buf, 2 * PAGE_SIZE);

	for (i = 0; i < IT_CACHE; i++)
		cr_assert_eq(uf_page_put(pg[i]), 0);
	it_expect_file(&it, want, "after the puts");
	cr_assert_eq(uf_fsync(it.file), 0);
	tu_raw_expect(it.path, IT_FILE_OFF, 46 * PAGE_SIZE, 1,
		      "before the short write");
	tu_raw_expect(it.path, IT_FILE_OFF + 48 * PAGE_SIZE,
		      (IT_PAGES - 48) * PAGE_SIZE, 1, "after the short write");
	free(want);
	free(buf);
	tu_cdf_close(&it);
}

struct reader {
	struct tu_cdf *it;
	unsigned char *buf;
	ssize_t ret;
	bool done;		/* atomic */
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;

	r->ret = uf_pread(r->it->file, r->buf, PAGE_SIZE, 40 * PAGE_SIZE);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Every frame dirty, and the flusher kept from writing (s_umount held, as
 * an unmount would) for longer than the old allocator's retries: a read
 * of an uncached page waits, and once the flusher may write, the
 * allocation's kick gets the pages written and the read completes.
 */
Test(alloc, it_all_frames_dirty_waits_for_writeback, .timeout = 60,
     .fini = tu_fini)
{
	unsigned char *buf = tu_alloc(IT_CACHE * PAGE_SIZE);
	struct uf_cache_stats st;
	struct timespec ts;
	struct reader r;
	pthread_t t;
	struct tu_cdf it;

	it_open(&it, 100);	/* no throttling, no background writeback */
	cr_assert_eq(uf_dev_hold_umount(it.dev), 0);
	tu_fill(buf, IT_CACHE * PAGE_SIZE, IT_FILE_OFF, 5);
	cr_assert_eq(uf_pwrite(it.file, buf, IT_CACHE * PAGE_SIZE, 0),
		     IT_CACHE * PAGE_SIZE);
	cr_assert_eq(uf_cache_stats(it.cache, &st), 0);
	cr_assert_eq(st.nr_dirty, IT_CACHE, "%lu dirty", st.nr_dirty);
	cr_assert_eq(st.nr_free, 0);

	memset(&r, 0, sizeof(r));
	r.it = &it;
	r.buf = tu_alloc(PAGE_SIZE);
	cr_assert_eq(pthread_create(&t, NULL, reader_fn, &r), 0);
	sleep_ms(OLD_GIVEUP_MS);
	cr_assert_not(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE),
		      "uf_pread returned %zd while every frame was dirty", r.ret);
	cr_assert_eq(uf_dev_release_umount(it.dev), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	cr_assert_eq(pthread_timedjoin_np(t, NULL, &ts), 0,
		     "the read was not woken after writeback");
	cr_assert_eq(r.ret, PAGE_SIZE, "uf_pread = %zd", r.ret);
	cr_assert_eq(tu_check(r.buf, PAGE_SIZE, IT_FILE_OFF + 40 * PAGE_SIZE,
			      1), -1);
	cr_assert_eq(uf_cache_stats(it.cache, &st), 0);
	cr_assert_geq(st.nr_written, 1, "nothing was written");
	cr_assert_eq(uf_fsync(it.file), 0);
	tu_raw_expect(it.path, IT_FILE_OFF, IT_CACHE * PAGE_SIZE, 5,
		      "the dirty pages");
	free(r.buf);
	free(buf);
	tu_cdf_close(&it);
}
