// SPDX-License-Identifier: MIT
/*
 * tests/test_page_pin.c - a read-only uf_page_get pins its page in the
 * calling thread's pin table (mm/page_pin.c) instead of taking a
 * reference, and the header's lifetime rules still hold: a page handed
 * out holds the file's data, and its frame is never freed nor reused
 * until it is put, whatever reclaim and truncation do meanwhile.
 *
 * Description:
 *  - the fast path is taken: while held, the page's count is the page
 *    cache's alone (1) and uf_users is 0, and page_pinned() finds it;
 *  - reclaim (try_to_free_pages, another file read through a cache too
 *    small for both) keeps a pinned page in its file, data unchanged;
 *  - truncation (uf_file_close) with a pinned handle held: the frame
 *    leaves the file but is not freed (PG_pin_orphan) nor reused by the
 *    other file's reads; the put frees it (NR_FREE_PAGES one more);
 *  - more pages held at once than a pin table has slots: the rest take
 *    references, and every handle reads the file's data;
 *  - a handle got by a thread that has exited is put by another, after
 *    its frame was truncated: the frame is freed then, not before;
 *  - more threads holding a page at once than there are pin tables: the
 *    rest take references;
 *  - half the cache pinned by threads that exit without putting, then
 *    truncated and the other file read through: no pinned frame freed or
 *    reused, each freed by its put (NR_FREE_PAGES one more per put), and
 *    every frame free or cached at the end (uf_cache_stats);
 *  - uf_cache_close with those pins held is -EBUSY and closes nothing;
 *  - a pin's put, like a reference's, is a reclaim event for a waiting
 *    allocator (put_page's count-1 wakeup);
 *  - threaded: two threads get (NOCREATE: cold pages too), hold, check
 *    and put pages of a file while a third reads it all through a cache a
 *    tenth its size (reclaim around the held pages) and a fourth drops its
 *    pages (truncate's way): every byte seen at the get and again at the
 *    put, six gets later, is the file's.
 * Devices: a scratch loop device with direct I/O (skipped, reason printed,
 * where none can be made).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs.h"
#include "fs/writeback.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "testutil.h"
#include "uflush-internal.h"
#include "uflush.h"

#define PP_DEV_SIZE	(64ull << 20)
#define PP_A_OFF	(1ull << 20)	/* the file whose pages are held */
#define PP_A_PAGES	64ul
#define PP_B_OFF	(8ull << 20)	/* the file that reuses frames */
#define PP_B_PAGES	1024ul
#define PP_SEED		31
#define PP_INDEX	5ul

static struct {
	struct uf_cache *cache;
	struct uf_cache *c;		/* the engine's */
	struct uf_dev *d;
	struct uf_file *a, *b;
	struct address_space *am, *bm;
} pp;

/* pages pinned by threads that exit without putting them */
#define PP_EXITERS	4
#define PP_EXITED	(PP_EXITERS * PIN_SLOTS + 0ul)
static struct uf_page *pp_exited[PP_EXITED];

static void pp_fini(void)
{
	tu_cache_drop(&pp.cache);
	tu_fini();
}

static void pp_open(unsigned long nr_pages)
{
	struct uf_cache_config cfg;
	const char *path;
	int ret;

	memset(&pp, 0, sizeof(pp));
	path = tu_dev(TU_LOOP, PP_DEV_SIZE);
	tu_raw_fill(path, 0, 16ull << 20, PP_SEED);
	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = nr_pages;
	ret = uf_cache_open(&cfg, &pp.cache);
	cr_assert_eq(ret, 0, "uf_cache_open: %s", strerror(-ret));
	pp.c = uf_cache_obj(pp.cache);
	pp.d = tu_cache_dev(pp.cache, path, 0);
	pp.a = tu_file_open(pp.d, 1, PP_A_OFF, PP_A_PAGES * TU_PAGE, NULL,
			    NULL);
	pp.b = tu_file_open(pp.d, 2, PP_B_OFF, PP_B_PAGES * TU_PAGE, NULL,
			    NULL);
	pp.am = uf_file_inode(pp.a)->i_mapping;
	pp.bm = uf_file_inode(pp.b)->i_mapping;
}

/* Cached, active and referenced: a get that changes no flag. */
static void pp_warm(unsigned long index)
{
	char buf[TU_PAGE];
	int i;

	for (i = 0; i < 4; i++) {
		cr_assert_eq(uf_pread(pp.a, buf, TU_PAGE, index * TU_PAGE),
			     TU_PAGE);
		lru_add_drain();
	}
}

/* The descriptor of a held page's frame (no assertion: any thread). */
static struct page *pp_page_of(struct uf_page *p)
{
	char *data = uf_page_data(p);

	return &pp.c->pool.pages[(size_t)(data - (char *)pp.c->pool.frames) /
				 PAGE_SIZE];
}

static void pp_expect(struct uf_page *p, unsigned long index,
		      const char *what)
{
	long bad = tu_check(uf_page_data(p), TU_PAGE,
			    PP_A_OFF + index * TU_PAGE, PP_SEED);

	cr_assert_eq(bad, -1, "%s: byte %ld of the held page is not the "
		     "file's (its frame was freed and reused)", what, bad);
}

/* Another file read whole through the cache: every free frame reused. */
static void pp_thrash(void)
{
	char buf[TU_PAGE];
	unsigned long i;

	for (i = 0; i < PP_B_PAGES; i++)
		cr_assert_eq(uf_pread(pp.b, buf, TU_PAGE, i * TU_PAGE),
			     TU_PAGE);
}

static struct uf_page *pp_get(unsigned long index)
{
	struct uf_page *p;
	int ret = uf_page_get(pp.a, index, 0, &p);

	cr_assert_eq(ret, 0, "uf_page_get: %s", strerror(-ret));
	return p;
}

Test(page_pin, read_only_get_takes_no_reference, .fini = pp_fini,
     .timeout = 60)
{
	struct uf_page *p;
	struct page *page;

	pp_open(256);
	pp_warm(PP_INDEX);
	p = pp_get(PP_INDEX);
	page = pp_page_of(p);
	cr_assert_eq(page->mapping, pp.am);
	cr_assert(page_pinned(page), "the held page is in no pin table");
	cr_assert_eq(page_count(page), 1, "page count %d: the get took a "
		     "reference (not the pinned path)", page_count(page));
	cr_assert_eq(page->uf_users, 0u);
	pp_expect(p, PP_INDEX, "held");
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_not(page_pinned(page), "the put left its pin");
	cr_assert_eq(uf_page_put(p), -EBADF);
	tu_cache_close(&pp.cache);
}

/* Reclaim until the page leaves file a, or 100 passes: it must not. */
Test(page_pin, reclaim_keeps_a_pinned_page, .fini = pp_fini, .timeout = 60)
{
	struct uf_page *p;
	struct page *page;
	int i;

	pp_open(64);
	pp_warm(PP_INDEX);
	p = pp_get(PP_INDEX);
	page = pp_page_of(p);
	cr_assert_eq(page_count(page), 1, "not the pinned path");
	for (i = 0; i < 100 && page->mapping == pp.am; i++) {
		lru_add_drain_all(pp.c);
		try_to_free_pages(pp.c, 1024);
		if (!(i % 10))
			pp_thrash();
	}
	cr_assert_eq(page->mapping, pp.am, "reclaim took a pinned page "
		     "(its frame now %s)", page->mapping == pp.bm ?
		     "holds the other file's page" : "is free");
	pp_expect(p, PP_INDEX, "after reclaim");
	cr_assert_eq(uf_page_put(p), 0);
	/* unpinned, the same reclaim frees it */
	for (i = 0; i < 100 && page->mapping == pp.am; i++) {
		lru_add_drain_all(pp.c);
		try_to_free_pages(pp.c, 1024);
		pp_thrash();
	}
	cr_assert_neq(page->mapping, pp.am, "reclaim never took the page "
		      "once put: the test proves nothing");
	tu_cache_close(&pp.cache);
}

Test(page_pin, truncate_leaves_a_pinned_frame_to_its_put, .fini = pp_fini,
     .timeout = 60)
{
	unsigned long free_before;
	struct uf_page *p;
	struct page *page;

	pp_open(64);
	pp_warm(PP_INDEX);
	p = pp_get(PP_INDEX);
	page = pp_page_of(p);
	cr_assert_eq(page_count(page), 1, "not the pinned path");
	/* a read-only handle does not keep its file: the close truncates */
	cr_assert_eq(uf_file_close(pp.a), 0);
	cr_assert_null(page->mapping, "the close left the page in its file");
	cr_assert(test_bit(PG_pin_orphan, &page->flags), "the frame of a "
		  "truncated pinned page was not left to its pin");
	pp_thrash();
	cr_assert_null(page->mapping, "the frame was reused while pinned");
	pp_expect(p, PP_INDEX, "truncated, then other reads");
	free_before = global_page_state(pp.c, NR_FREE_PAGES);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(global_page_state(pp.c, NR_FREE_PAGES), free_before + 1,
		     "the put of the last pin did not free the frame");
	cr_assert_not(test_bit(PG_pin_orphan, &page->flags));
	tu_cache_close(&pp.cache);
}

Test(page_pin, more_pages_held_than_pin_slots_take_references,
     .fini = pp_fini, .timeout = 60)
{
	struct uf_page *p[3 * PIN_SLOTS];
	unsigned long i, pinned = 0, referenced = 0;
	struct page *page;

	pp_open(256);
	for (i = 0; i < 3 * PIN_SLOTS; i++)
		pp_warm(i);
	for (i = 0; i < 3 * PIN_SLOTS; i++) {
		p[i] = pp_get(i);
		page = pp_page_of(p[i]);
		if (page_count(page) == 1 && page_pinned(page))
			pinned++;
		else if (page_count(page) == 2 && page->uf_users == 1)
			referenced++;
	}
	cr_assert_eq(pinned, PIN_SLOTS, "%lu pinned", pinned);
	cr_assert_eq(referenced, 2 * PIN_SLOTS, "%lu referenced", referenced);
	pp_thrash();
	for (i = 0; i < 3 * PIN_SLOTS; i++) {
		pp_expect(p[i], i, "held among many");
		cr_assert_eq(uf_page_put(p[i]), 0);
	}
	for (i = 0; i < 3 * PIN_SLOTS; i++) {
		cr_assert_eq(uf_page_get(pp.a, i, UF_PAGE_NOCREATE, &p[0]), 0);
		page = pp_page_of(p[0]);
		cr_assert_eq(page_count(page), 1, "page %lu: slots not "
			     "given back", i);
		cr_assert_eq(uf_page_put(p[0]), 0);
	}
	tu_cache_close(&pp.cache);
}

static void *pp_get_fn(void *arg)
{
	struct uf_page **p = arg;

	if (uf_page_get(pp.a, PP_INDEX, 0, p))
		*p = NULL;
	return NULL;
}

/* The getter's table goes back at its exit with the slot still set;
 * another thread pins the same page (from an empty table) and puts it. */
Test(page_pin, put_after_the_getter_exited, .fini = pp_fini, .timeout = 60)
{
	unsigned long free_before;
	struct uf_page *p = NULL, *q = NULL;
	struct page *page;
	pthread_t tid;

	pp_open(64);
	pp_warm(PP_INDEX);
	pp_warm(PP_INDEX + 1);
	cr_assert_eq(pthread_create(&tid, NULL, pp_get_fn, &p), 0);
	pthread_join(tid, NULL);
	cr_assert_not_null(p);
	page = pp_page_of(p);
	cr_assert(page_pinned(page), "not the pinned path");
	cr_assert_eq(pthread_create(&tid, NULL, pp_get_fn, &q), 0);
	pthread_join(tid, NULL);
	cr_assert_not_null(q);
	cr_assert_eq(pp_page_of(q), page);
	cr_assert_eq(uf_page_put(q), 0);
	cr_assert(page_pinned(page), "a put cleared another handle's pin");
	cr_assert_eq(uf_file_close(pp.a), 0);
	pp_thrash();
	pp_expect(p, PP_INDEX, "got by a thread gone, truncated");
	free_before = global_page_state(pp.c, NR_FREE_PAGES);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(global_page_state(pp.c, NR_FREE_PAGES), free_before + 1);
	tu_cache_close(&pp.cache);
}

/* Past PIN_TABLES threads pinning at once, a get takes a reference. */
#define PP_THREADS	(PIN_TABLES + 8)

static pthread_barrier_t pp_barrier;

static void *pp_hold_fn(void *arg)
{
	struct uf_page **p = arg;

	if (uf_page_get(pp.a, PP_INDEX, UF_PAGE_NOCREATE, p))
		*p = NULL;
	pthread_barrier_wait(&pp_barrier);	/* all held at once */
	pthread_barrier_wait(&pp_barrier);	/* counted */
	if (*p && uf_page_put(*p))
		*p = NULL;
	return NULL;
}

Test(page_pin, more_threads_than_pin_tables_take_references,
     .fini = pp_fini, .timeout = 60)
{
	static struct uf_page *p[PP_THREADS];
	static pthread_t tids[PP_THREADS];
	unsigned int i, nr;
	struct page *page;
	int count;

	pp_open(64);
	pp_warm(PP_INDEX);
	cr_assert_eq(pthread_barrier_init(&pp_barrier, NULL, PP_THREADS + 1),
		     0);
	for (nr = 0; nr < PP_THREADS; nr++)
		if (pthread_create(&tids[nr], NULL, pp_hold_fn, &p[nr]))
			break;
	if (nr < PP_THREADS) {
		/* the threads made so far wait at the barrier forever */
		cr_skip_test("only %u threads could be made", nr);
	}
	pthread_barrier_wait(&pp_barrier);
	for (i = 0; i < PP_THREADS; i++) {
		cr_assert_not_null(p[i], "thread %u's get failed", i);
		pp_expect(p[i], PP_INDEX, "one of many threads'");
	}
	page = pp_page_of(p[0]);
	count = page_count(page);
	cr_assert_eq(count, 1 + PP_THREADS - PIN_TABLES, "page count %d: %u "
		     "threads, %u pin tables", count, PP_THREADS, PIN_TABLES);
	cr_assert_eq(page->uf_users, PP_THREADS - PIN_TABLES);
	pthread_barrier_wait(&pp_barrier);
	for (i = 0; i < PP_THREADS; i++) {
		pthread_join(tids[i], NULL);
		cr_assert_not_null(p[i], "thread %u's put failed", i);
	}
	cr_assert_eq(page_count(page), 1);
	cr_assert_not(page_pinned(page));
	pthread_barrier_destroy(&pp_barrier);
	tu_cache_close(&pp.cache);
}

/* Threads that pin a slot-full of pages each and exit without putting:
 * the header's handles outlive their getter, usable from any thread. */

static void *pp_pin_and_exit_fn(void *arg)
{
	struct uf_page **p = arg;
	unsigned long i, base = (unsigned long)(p - pp_exited);

	for (i = 0; i < PIN_SLOTS; i++)
		if (uf_page_get(pp.a, base + i, 0, &p[i]))
			p[i] = NULL;
	return NULL;
}

static void pp_pin_and_exit(void)
{
	unsigned long i;
	pthread_t tid;

	for (i = 0; i < PP_EXITED; i++)
		pp_warm(i);
	for (i = 0; i < PP_EXITERS; i++) {
		cr_assert_eq(pthread_create(&tid, NULL, pp_pin_and_exit_fn,
					    &pp_exited[i * PIN_SLOTS]), 0);
		pthread_join(tid, NULL);
	}
	for (i = 0; i < PP_EXITED; i++) {
		cr_assert_not_null(pp_exited[i], "get %lu failed", i);
		cr_assert(page_pinned(pp_page_of(pp_exited[i])) &&
			  page_count(pp_page_of(pp_exited[i])) == 1,
			  "page %lu: not the pinned path", i);
	}
}

/* Every frame free or cached once nothing is held or in flight. */
static void pp_expect_frames_accounted(const char *what)
{
	struct uf_cache_stats st;

	lru_add_drain_all(pp.c);
	cr_assert_eq(uf_cache_stats(pp.cache, &st), 0);
	cr_assert_eq(st.nr_free, global_page_state(pp.c, NR_FREE_PAGES));
	cr_assert_eq(st.nr_free + st.nr_file_pages, st.nr_pages, "%s: %lu "
		     "free + %lu cached of %lu frames: %ld lost", what,
		     st.nr_free, st.nr_file_pages, st.nr_pages,
		     (long)(st.nr_pages - st.nr_free - st.nr_file_pages));
}

/*
 * Half the cache pinned by threads gone, then truncated: no frame freed
 * while pinned, none reused by the other file's reads, each freed once
 * by its put from this thread, and the accounting whole at the end.
 */
Test(page_pin, many_truncated_pinned_frames_freed_once_by_their_puts,
     .fini = pp_fini, .timeout = 60)
{
	unsigned long i, free0, cached, free1;
	struct page *pages[PP_EXITED];

	pp_open(64);
	pp_pin_and_exit();
	for (i = 0; i < PP_EXITED; i++)
		pages[i] = pp_page_of(pp_exited[i]);
	free0 = global_page_state(pp.c, NR_FREE_PAGES);
	cached = pp.am->nrpages;
	cr_assert_eq(uf_file_close(pp.a), 0);
	cr_assert_eq(global_page_state(pp.c, NR_FREE_PAGES),
		     free0 + cached - PP_EXITED, "the close freed %lu of "
		     "%lu cached pages, %lu of them pinned",
		     global_page_state(pp.c, NR_FREE_PAGES) - free0, cached,
		     PP_EXITED);
	pp_thrash();
	for (i = 0; i < PP_EXITED; i++) {
		cr_assert_null(pages[i]->mapping, "page %lu: a pinned frame "
			       "was reused", i);
		cr_assert(test_bit(PG_pin_orphan, &pages[i]->flags));
		pp_expect(pp_exited[i], i, "pinned by a thread gone, "
			  "truncated, then other reads");
	}
	free1 = global_page_state(pp.c, NR_FREE_PAGES);
	for (i = 0; i < PP_EXITED; i++) {
		cr_assert_eq(uf_page_put(pp_exited[i]), 0);
		cr_assert_eq(global_page_state(pp.c, NR_FREE_PAGES),
			     free1 + i + 1, "put %lu: frame not freed once", i);
		cr_assert_not(page_pinned(pages[i]));
	}
	pp_expect_frames_accounted("after the puts");
	tu_cache_close(&pp.cache);
}

/* uf_cache_close with pins of exited threads held: -EBUSY, nothing
 * closed; once they are put, the close goes through. */
Test(page_pin, cache_close_with_pins_of_exited_threads_is_ebusy,
     .fini = pp_fini, .timeout = 60)
{
	char buf[TU_PAGE];
	unsigned long i;

	pp_open(64);
	pp_pin_and_exit();
	cr_assert_eq(uf_cache_close(pp.cache), -EBUSY, "uf_cache_close with "
		     "%lu page handles held", PP_EXITED);
	/* nothing closed: the cache, its file and the handles still work */
	cr_assert_eq(uf_pread(pp.a, buf, TU_PAGE, 0), TU_PAGE);
	for (i = 0; i < PP_EXITED; i++) {
		pp_expect(pp_exited[i], i, "after a refused close");
		cr_assert_eq(uf_page_put(pp_exited[i]), 0);
	}
	pp_expect_frames_accounted("after the puts");
	cr_assert_eq(uf_bug_count(), 0);
	tu_cache_close(&pp.cache);
}

/*
 * A put that leaves a clean page to the page cache alone is a reclaim
 * event for an allocator waiting for a frame (put_page's count-1 case):
 * without it the waiter sleeps its HZ/10 safety net although reclaim
 * could now free the page.  A pin's put must raise it as a reference's
 * does.  The waiter is faked (nr_alloc_waiters): the event is the test.
 */
static unsigned long pp_put_event(unsigned int flags, bool pinned)
{
	struct page_pool *pool = &pp.c->pool;
	struct uf_page *p;
	unsigned long seq;

	cr_assert_eq(uf_page_get(pp.a, PP_INDEX, flags, &p), 0);
	cr_assert_eq(page_pinned(pp_page_of(p)), pinned);
	__atomic_add_fetch(&pool->nr_alloc_waiters, 1, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&pool->reclaim_seq, __ATOMIC_SEQ_CST);
	cr_assert_eq(uf_page_put(p), 0);
	seq = __atomic_load_n(&pool->reclaim_seq, __ATOMIC_SEQ_CST) - seq;
	__atomic_sub_fetch(&pool->nr_alloc_waiters, 1, __ATOMIC_SEQ_CST);
	return seq;
}

Test(page_pin, put_of_a_pin_wakes_a_waiting_allocator, .fini = pp_fini,
     .timeout = 60)
{
	pp_open(64);
	pp_warm(PP_INDEX);
	/* the premise: a referenced handle's put raises the event */
	cr_assert_geq(pp_put_event(UF_PAGE_WRITE, false), 1);
	cr_assert_geq(pp_put_event(0, true), 1, "a pinned handle's put left "
		      "a waiting allocator asleep (no reclaim event)");
	tu_cache_close(&pp.cache);
}

/* ---- threaded ---- */

struct pp_run {
	bool stop;			/* atomic */
	unsigned long gets, pinned, bad, dropped;	/* atomic */
	long bad_index;
};

static uint64_t pp_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A ring of pages held at once, each checked at its get and again at its
 * put, PP_HELD gets later: NOCREATE, so cold pages of file b too, which
 * the thrasher's reads of b reclaim around them. */
#define PP_HELD		6

static bool pp_ok(struct uf_page *p, unsigned long i)
{
	return tu_check(uf_page_data(p), TU_PAGE, PP_B_OFF + i * TU_PAGE,
			PP_SEED) < 0;
}

static void pp_wrong(struct pp_run *r, unsigned long i)
{
	if (!__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED))
		__atomic_store_n(&r->bad_index, (long)i, __ATOMIC_RELAXED);
}

static void *pp_holder(void *arg)
{
	struct pp_run *r = arg;
	uint64_t s = (uintptr_t)&s | 1;
	unsigned long idx[PP_HELD], n = 0, pinned = 0, k = 0, i;
	struct uf_page *held[PP_HELD] = { NULL };
	struct uf_page *p;
	int ret;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		i = (unsigned long)(pp_rand(&s) % PP_B_PAGES);
		ret = uf_page_get(pp.b, i, UF_PAGE_NOCREATE, &p);
		if (ret == -ENOENT) {
			sched_yield();
			continue;
		}
		if (ret) {
			pp_wrong(r, i);
			continue;
		}
		n++;
		pinned += page_pinned(pp_page_of(p));
		if (!pp_ok(p, i))
			pp_wrong(r, i);
		if (held[k]) {
			if (!pp_ok(held[k], idx[k]) || uf_page_put(held[k]))
				pp_wrong(r, idx[k]);
		}
		held[k] = p;
		idx[k] = i;
		k = (k + 1) % PP_HELD;
		sched_yield();
	}
	for (k = 0; k < PP_HELD; k++)
		if (held[k] && (!pp_ok(held[k], idx[k]) ||
				uf_page_put(held[k])))
			pp_wrong(r, idx[k]);
	__atomic_add_fetch(&r->gets, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->pinned, pinned, __ATOMIC_RELAXED);
	return NULL;
}

static void *pp_thrasher(void *arg)
{
	struct pp_run *r = arg;
	char buf[TU_PAGE];
	unsigned long i = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (uf_pread(pp.b, buf, TU_PAGE, i * TU_PAGE) != TU_PAGE)
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		i = (i + 1) % PP_B_PAGES;
	}
	return NULL;
}

/* truncate_inode_pages()'s way with one page at a time */
static void *pp_dropper(void *arg)
{
	struct pp_run *r = arg;
	uint64_t s = 0x9e3779b9;
	struct page *page;
	unsigned long n = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		page = find_lock_page(pp.bm, (unsigned long)(pp_rand(&s) %
							     PP_B_PAGES));
		if (!page)
			continue;
		if (!PageDirty(page) && !PageWriteback(page)) {
			delete_from_page_cache(page);
			n++;
		}
		unlock_page(page);
		put_page(pp.c, page);
		usleep(1000);	/* the thrasher fills the cache meanwhile */
	}
	__atomic_add_fetch(&r->dropped, n, __ATOMIC_RELAXED);
	return NULL;
}

Test(page_pin, held_pages_racing_reclaim_and_truncate_hold_the_data,
     .fini = pp_fini, .timeout = 120)
{
	void *(*fns[4])(void *) = { pp_holder, pp_holder, pp_thrasher,
				    pp_dropper };
	struct pp_run r = { 0 };
	struct uf_cache_stats st;
	pthread_t tids[4];
	unsigned int i;

	pp_open(96);	/* b does not fit */
	for (i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&tids[i], NULL, fns[i], &r), 0);
	usleep(1500 * 1000);
	/* on a loaded machine the dropper's frees may feed the thrasher for
	 * a while without reclaim: run on (up to 10 s) until reclaim ran */
	for (i = 0; i < 85; i++) {
		uf_cache_stats(pp.cache, &st);
		if (st.nr_reclaimed)
			break;
		usleep(100 * 1000);
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_join(tids[i], NULL);
	uf_cache_stats(pp.cache, &st);
	cr_log_info("%lu gets (%lu pinned), %lu pages reclaimed, %lu "
		    "dropped", r.gets, r.pinned,
		    (unsigned long)st.nr_reclaimed, r.dropped);
	cr_assert_eq(r.bad, 0, "%lu held pages wrong (first: page %ld)",
		     r.bad, r.bad_index);
	cr_assert(r.pinned && st.nr_reclaimed && r.dropped,
		  "the race was not exercised: %lu pinned gets, %lu reclaimed,"
		  " %lu dropped", r.pinned, (unsigned long)st.nr_reclaimed,
		  r.dropped);
	tu_cache_close(&pp.cache);
}
