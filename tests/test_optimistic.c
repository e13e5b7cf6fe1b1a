// SPDX-License-Identifier: MIT
/*
 * tests/test_optimistic.c - uf_pread's hits copy a cached page without
 * taking a reference (filemap.c, filemap_read_hit), validated afterwards
 * by the page's page_seq (mm.h): a copy the frame changed under is thrown
 * away and the page read again with a reference.  Every byte uf_pread
 * returns must be the file's: never a mix of two versions of a page (a
 * rewrite during the copy), nor another file's data (the frame reclaimed
 * or truncated and reused during the copy).
 *
 * Description:
 *  - Deterministic, one thread: filemap_copy_hook runs in the middle of
 *    the hit's copy and, there, rewrites the page (uf_pwrite), or drops it
 *    (truncate's delete_from_page_cache, or reclaim: try_to_free_pages)
 *    and has its frame reused by another file's read.  Without the
 *    validation the first half of the result is the old page and the
 *    second half the new contents of the frame.  The hook also checks that
 *    the copy it interrupts holds no reference (page count 1: the page
 *    cache's), i.e. that the hit took the optimistic path at all.
 *  - Threaded: two readers pread random pages of a file whose pages a
 *    third thread rewrites whole (two versions, alternating; half the
 *    reads and rewrites on 4 hot pages, so they meet) while a
 *    fourth reads another file through a cache smaller than both, so that
 *    the readers' pages are reclaimed and their frames reused all along;
 *    every page read must be one version or the other, whole.
 * Devices: a scratch loop device with direct I/O (skipped, reason printed,
 * where none can be made).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"
#include "fs/writeback.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "testutil.h"
#include "uflush-internal.h"
#include "uflush.h"

#define OP_DEV_SIZE	(64ull << 20)
#define OP_A_OFF	(1ull << 20)	/* the file under test */
#define OP_A_PAGES	64ul
#define OP_B_OFF	(8ull << 20)	/* the file that reuses frames */
#define OP_B_PAGES	1024ul
#define OP_SEED		21		/* on the device */
#define OP_SEED2	22		/* the rewrites */
#define OP_SEED3	23		/* a second rewrite */
#define OP_INDEX	5ul		/* the page the hook acts on */

enum op_action { OP_REWRITE, OP_TRUNCATE, OP_RECLAIM };

static struct {
	struct uf_cache *cache;
	struct uf_file *a, *b;
	struct address_space *am, *bm;
	enum op_action action;
	int calls;			/* hook calls */
	int rearm;			/* calls to stay armed for */
	int count_seen;			/* page count at the first call */
	int count_seen2;		/* ... at the second */
	bool reused;			/* the frame went to file b */
	bool dropped;			/* it left file a */
	int ret;			/* of the hook's own calls */
} op;

static void op_fini(void)
{
	__atomic_store_n(&filemap_copy_hook, NULL, __ATOMIC_RELAXED);
	tu_cache_drop(&op.cache);
	tu_fini();
}

static void op_open(unsigned long nr_pages)
{
	struct uf_cache_config cfg;
	const char *path;
	struct uf_dev *d;
	int ret;

	memset(&op, 0, sizeof(op));
	path = tu_dev(TU_LOOP, OP_DEV_SIZE);
	tu_raw_fill(path, 0, 16ull << 20, OP_SEED);
	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = nr_pages;
	ret = uf_cache_open(&cfg, &op.cache);
	cr_assert_eq(ret, 0, "uf_cache_open: %s", strerror(-ret));
	d = tu_cache_dev(op.cache, path, 0);
	op.a = tu_file_open(d, 1, OP_A_OFF, OP_A_PAGES * TU_PAGE, NULL, NULL);
	op.b = tu_file_open(d, 2, OP_B_OFF, OP_B_PAGES * TU_PAGE, NULL, NULL);
	op.am = uf_file_inode(op.a)->i_mapping;
	op.bm = uf_file_inode(op.b)->i_mapping;
}

static struct address_space *page_mapping_now(struct page *page)
{
	return __atomic_load_n(&page->mapping, __ATOMIC_ACQUIRE);
}

/* Read file b page by page until @page's frame holds one of them. */
static void op_reuse(struct page *page)
{
	char buf[TU_PAGE];
	unsigned long i;

	for (i = 0; i < OP_B_PAGES && !op.reused; i++) {
		if (uf_pread(op.b, buf, TU_PAGE, i * TU_PAGE) != TU_PAGE)
			op.ret = -EIO;
		op.reused = page_mapping_now(page) == op.bm;
	}
}

/* Reclaim until the page leaves file a (it may be active: aging first). */
static void op_reclaim(struct page *page)
{
	struct uf_cache *c = mapping_cache(op.am);
	int i;

	for (i = 0; i < 100 && page_mapping_now(page) == op.am; i++) {
		lru_add_drain_all(c);
		try_to_free_pages(c, 1024);
	}
}

static void op_hook(struct page *page)
{
	char buf[TU_PAGE];

	/* not for the hook's own reads */
	__atomic_store_n(&filemap_copy_hook, NULL, __ATOMIC_RELAXED);
	if (op.calls++)
		op.count_seen2 = page_count(page);
	else
		op.count_seen = page_count(page);
	switch (op.action) {
	case OP_REWRITE:
		tu_fill(buf, TU_PAGE, OP_A_OFF + OP_INDEX * TU_PAGE,
			op.calls == 1 ? OP_SEED2 : OP_SEED3);
		if (uf_pwrite(op.a, buf, TU_PAGE, OP_INDEX * TU_PAGE) !=
		    TU_PAGE)
			op.ret = -EIO;
		if (op.calls < op.rearm)
			__atomic_store_n(&filemap_copy_hook, op_hook,
					 __ATOMIC_RELAXED);
		return;
	case OP_TRUNCATE:
		/* truncate_inode_pages()'s way with one page: it holds a
		 * reference of its own, dropped once the page is unlocked */
		get_page(page);
		lock_page(page);
		if (page_mapping_now(page) == op.am)
			delete_from_page_cache(page);
		unlock_page(page);
		put_page(mapping_cache(op.am), page);
		break;
	case OP_RECLAIM:
		op_reclaim(page);
		break;
	}
	op.dropped = page_mapping_now(page) != op.am;
	if (op.dropped)
		op_reuse(page);
}

/* Warm page OP_INDEX (active and referenced: a hit writes no flag), then
 * read it once more with the hook armed; the result in @buf. */
static void op_run(enum op_action action, int rearm, char *buf)
{
	ssize_t n;
	int i;

	op_open(256);
	op.rearm = rearm;
	for (i = 0; i < 4; i++) {
		cr_assert_eq(uf_pread(op.a, buf, TU_PAGE, OP_INDEX * TU_PAGE),
			     TU_PAGE);
		lru_add_drain();	/* onto the LRU: no pagevec's count */
	}
	op.action = action;
	__atomic_store_n(&filemap_copy_hook, op_hook, __ATOMIC_RELAXED);
	n = uf_pread(op.a, buf, TU_PAGE, OP_INDEX * TU_PAGE);
	__atomic_store_n(&filemap_copy_hook, NULL, __ATOMIC_RELAXED);
	cr_assert_eq(n, TU_PAGE, "uf_pread: %zd", n);
	cr_assert_eq(op.calls, op.rearm ? op.rearm : 1,
		     "the hook ran %d times", op.calls);
	cr_assert_eq(op.ret, 0, "the hook's own I/O failed");
	cr_assert_eq(op.count_seen, 1, "the hit's copy held a reference "
		     "(page count %d): not the optimistic path",
		     op.count_seen);
}

static void op_expect(const char *buf, uint32_t seed, const char *what)
{
	long bad = tu_check(buf, TU_PAGE, OP_A_OFF + OP_INDEX * TU_PAGE,
			    seed);

	cr_assert_eq(bad, -1, "%s: byte %ld of the page read is not the "
		     "file's (a copy the frame changed under was kept)",
		     what, bad);
}

Test(optimistic, hit_rewritten_during_its_copy_is_read_again,
     .fini = op_fini, .timeout = 60)
{
	char buf[TU_PAGE];

	op_run(OP_REWRITE, 1, buf);
	op_expect(buf, OP_SEED2, "rewritten under the copy");
	tu_cache_close(&op.cache);
}

/* The read again holds a reference; a rewrite during its copy makes it
 * copy once more (copy_page_stable), never keep a mix. */
Test(optimistic, reread_rewritten_during_its_copy_is_copied_again,
     .fini = op_fini, .timeout = 60)
{
	char buf[TU_PAGE];

	op_run(OP_REWRITE, 2, buf);
	cr_assert_geq(op.count_seen2, 2, "the second copy held no "
		      "reference: not the referenced path");
	op_expect(buf, OP_SEED3, "rewritten under the referenced copy");
	tu_cache_close(&op.cache);
}

Test(optimistic, hit_truncated_and_reused_during_its_copy_is_read_again,
     .fini = op_fini, .timeout = 60)
{
	char buf[TU_PAGE];

	op_run(OP_TRUNCATE, 1, buf);
	cr_assert(op.dropped, "delete_from_page_cache left the page");
	if (!op.reused)
		cr_skip_test("the frame was not reused by %lu reads of "
			     "another file", OP_B_PAGES);
	op_expect(buf, OP_SEED, "truncated and reused under the copy");
	tu_cache_close(&op.cache);
}

Test(optimistic, hit_reclaimed_and_reused_during_its_copy_is_read_again,
     .fini = op_fini, .timeout = 60)
{
	char buf[TU_PAGE];

	op_run(OP_RECLAIM, 1, buf);
	if (!op.dropped)
		cr_skip_test("reclaim never took the page (100 passes)");
	if (!op.reused)
		cr_skip_test("the frame was not reused by %lu reads of "
			     "another file", OP_B_PAGES);
	op_expect(buf, OP_SEED, "reclaimed and reused under the copy");
	tu_cache_close(&op.cache);
}

/* Hits still age a page (the first ones, through a reference: inactive,
 * referenced, active), and one on a page already active and referenced
 * writes nothing to it: no flag, no count. */
Test(optimistic, steady_hit_writes_nothing_to_the_page, .fini = op_fini,
     .timeout = 60)
{
	unsigned long flags;
	char buf[TU_PAGE];
	struct page *page;
	int i;

	op_open(256);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(uf_pread(op.a, buf, TU_PAGE, OP_INDEX * TU_PAGE),
			     TU_PAGE);
		lru_add_drain();	/* onto the LRU: no pagevec's count */
	}
	page = find_get_page(op.am, OP_INDEX);
	cr_assert_not_null(page);
	flags = __atomic_load_n(&page->flags, __ATOMIC_RELAXED);
	cr_assert(flags & BIT(PG_active) && flags & BIT(PG_referenced),
		  "four reads left the page %s%s", flags & BIT(PG_active) ?
		  "active" : "inactive", flags & BIT(PG_referenced) ?
		  ", referenced" : "");
	cr_assert_eq(page_count(page), 2);	/* the cache's and ours */
	op.action = OP_REWRITE;
	for (i = 0; i < 100; i++)
		cr_assert_eq(uf_pread(op.a, buf, TU_PAGE, OP_INDEX * TU_PAGE),
			     TU_PAGE);
	cr_assert_eq(__atomic_load_n(&page->flags, __ATOMIC_RELAXED), flags);
	cr_assert_eq(page_count(page), 2);
	put_page(mapping_cache(op.am), page);
	op_expect(buf, OP_SEED, "a steady hit");
	tu_cache_close(&op.cache);
}

/* ------------------------------------------------------------------ */
/* Threaded                                                            */

#define OP_RACE_MS	2000

struct op_race {
	bool stop;			/* atomic */
	unsigned long reads, bad, rewrites, thrash;	/* atomic */
	long bad_index, bad_byte;
};

static uint64_t op_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Half the time one of 4 hot pages (readers meet the rewriter there),
 * else any page (reclaim takes those). */
static unsigned long op_page(uint64_t *s)
{
	uint64_t x = op_rand(s);

	return (unsigned long)(x & 1 ? (x >> 1) % 4 : (x >> 1) % OP_A_PAGES);
}

static void *op_reader(void *arg)
{
	struct op_race *r = arg;
	uint64_t s = (uintptr_t)&s | 1, off;
	char buf[TU_PAGE];
	unsigned long i;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		i = op_page(&s);
		off = OP_A_OFF + i * TU_PAGE;
		if (uf_pread(op.a, buf, TU_PAGE, i * TU_PAGE) != TU_PAGE ||
		    (tu_check(buf, TU_PAGE, off, OP_SEED) >= 0 &&
		     tu_check(buf, TU_PAGE, off, OP_SEED2) >= 0)) {
			if (!__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED)) {
				r->bad_index = (long)i;
				r->bad_byte = tu_check(buf, TU_PAGE, off,
						       OP_SEED);
			}
		}
		__atomic_add_fetch(&r->reads, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *op_rewriter(void *arg)
{
	struct op_race *r = arg;
	uint64_t s = 0x9e3779b9, round = 0;
	char bufs[2][TU_PAGE];
	unsigned long i;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		i = op_page(&s);
		tu_fill(bufs[round & 1], TU_PAGE, OP_A_OFF + i * TU_PAGE,
			round & 1 ? OP_SEED2 : OP_SEED);
		if (uf_pwrite(op.a, bufs[round & 1], TU_PAGE, i * TU_PAGE) !=
		    TU_PAGE)
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		round++;
		__atomic_add_fetch(&r->rewrites, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *op_thrasher(void *arg)
{
	struct op_race *r = arg;
	char buf[TU_PAGE];
	unsigned long i = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (uf_pread(op.b, buf, TU_PAGE, i * TU_PAGE) != TU_PAGE)
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		i = (i + 1) % OP_B_PAGES;
		__atomic_add_fetch(&r->thrash, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

Test(optimistic, readers_race_rewrites_and_reclaim, .fini = op_fini,
     .timeout = 120)
{
	void *(*fns[4])(void *) = { op_reader, op_reader, op_rewriter,
				    op_thrasher };
	struct op_race r = { 0 };
	struct uf_cache_stats st;
	pthread_t tids[4];
	uint64_t t0;
	int i;

	op_open(128);	/* a's 64 pages and b's 1024 do not fit */
	for (i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&tids[i], NULL, fns[i], &r), 0);
	t0 = uf_now_ns();
	while (uf_now_ns() - t0 < OP_RACE_MS * 1000000ull &&
	       !__atomic_load_n(&r.bad, __ATOMIC_RELAXED))
		usleep(10000);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_join(tids[i], NULL);
	cr_assert_eq(uf_cache_stats(op.cache, &st), 0);
	cr_log_info("%lu reads, %lu rewrites, %lu thrashing reads, %lu "
		    "pages reclaimed, %lu wrong", r.reads, r.rewrites,
		    r.thrash, (unsigned long)st.nr_reclaimed, r.bad);
	cr_assert_eq(r.bad, 0, "%lu of %lu reads wrong (first: page %ld, "
		     "byte %ld)", r.bad, r.reads, r.bad_index, r.bad_byte);
	cr_assert_gt(r.reads, 1000, "the readers barely ran: %lu reads",
		     r.reads);
	cr_assert_gt(st.nr_reclaimed, 0, "nothing was reclaimed: the race "
		     "with reclaim was not exercised");
	tu_cache_close(&op.cache);
}
