// SPDX-License-Identifier: MIT
/*
 * tests/test_filemap.c - the page cache (engine/mm/filemap.c), the frame pool
 * (page_alloc.c), the LRU (swap.c) and direct reclaim (vmscan.c).
 *
 * The "unit" tests build a cache, a super_block and an inode by hand, with
 * no device and no flusher, so each invariant is checked on its own: pool
 * accounting and reference counts, page cache insert/lookup/delete, the
 * page lock and writeback waits between threads, LRU order, and which pages
 * reclaim frees and which it must refuse.  The "integration" tests go
 * through the public API on a scratch device and check bytes against the
 * raw device.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mm/backing-dev.h"
#include "fs/fs.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "kernel/sched.h"
#include "fixture.h"
#include "testutil.h"
#include "uflush.h"
#include "fs/writeback.h"

/* Put @page under writeback, as write_cache_pages() does. */
static void start_writeback(struct page *page)
{
	lock_page(page);
	cr_assert_eq(test_set_page_writeback(page), 0);
	unlock_page(page);
}

/* Index of every page on @list, head first. */
static unsigned int lru_indices(struct hand *h, struct list_head *list,
				unsigned long *out, unsigned int max)
{
	struct page *page;
	unsigned int n = 0;

	spin_lock(&h->c.pool.lru_lock);
	list_for_each_entry(page, list, lru) {
		if (n < max)
			out[n] = page->index;
		n++;
	}
	spin_unlock(&h->c.pool.lru_lock);
	return n;
}

/* ------------------------------------------------------------------ */
/* Threads that block, and a way to see they do                        */

struct blocker {
	struct fx_bg bg;
	struct page *page;
	struct hand *h;
	int op;
	int ret;
};

enum { OP_LOCK, OP_WAIT_WB, OP_TRUNCATE, OP_ALLOC, OP_FDATAWAIT };

static void blocker_fn(void *arg)
{
	struct blocker *b = arg;
	struct page *page;

	switch (b->op) {
	case OP_LOCK:
		lock_page(b->page);
		break;
	case OP_WAIT_WB:
		wait_on_page_writeback(b->page);
		break;
	case OP_TRUNCATE:
		truncate_inode_pages(hmap(b->h), 0);
		break;
	case OP_ALLOC:
		page = alloc_page(&b->h->c);
		b->ret = page ? 0 : -ENOMEM;
		if (page)
			put_page(&b->h->c, page);
		break;
	case OP_FDATAWAIT:
		b->ret = filemap_fdatawait(hmap(b->h));
		break;
	}
}

static void blocker_start(struct blocker *b, int op, struct hand *h,
			  struct page *page)
{
	memset(b, 0, sizeof(*b));
	b->op = op;
	b->h = h;
	b->page = page;
	fx_bg_start(&b->bg, blocker_fn, b);
}

/* The thread is asleep in schedule() and has not finished. */
static void blocker_expect_asleep(struct blocker *b, const char *what)
{
	fx_bg_expect_asleep(&b->bg, "thread", what);
	cr_assert_not(fx_bg_done(&b->bg), "%s: returned while it should wait",
		      what);
}

/* Start a blocker that must go to sleep at once. */
static void blocker_start_asleep(struct blocker *b, int op, struct hand *h,
				 struct page *page, const char *what)
{
	blocker_start(b, op, h, page);
	blocker_expect_asleep(b, what);
}

static void blocker_join(struct blocker *b, const char *what)
{
	fx_bg_join(&b->bg, "thread", what);
	cr_assert(fx_bg_done(&b->bg));
}

/*
 * The hand most tests run on, 4 frames and a 4-page file: .init = fm_4
 * makes it, the test ends with fm_done(), which frees it and demands every
 * frame back (in the test: criterion ignores assertions in a .fini).
 */
static struct hand *fm;

static void fm_4(void)
{
	fm = hand_new(4, 4);
}

static void fm_done(void)
{
	hand_free(fm);
}

/* ------------------------------------------------------------------ */
/* Pool                                                                */

Test(filemap, pool_alloc_free_and_counts)
{
	struct hand *h = hand_new(8, 8);
	struct page *pages[8];
	unsigned int i, j;

	cr_assert_eq(nr_free(h), 8);
	for (i = 0; i < 8; i++) {
		pages[i] = page_pool_alloc(&h->c);
		cr_assert(pages[i]);
		cr_assert_eq(page_count(pages[i]), 1);
		cr_assert_eq((uintptr_t)page_address(&h->c, pages[i]) %
			     PAGE_SIZE, 0, "frame not page aligned");
		for (j = 0; j < i; j++)
			cr_assert_neq(pages[i], pages[j]);
		/* the frame is ours to scribble on */
		memset(page_address(&h->c, pages[i]), (int)i, PAGE_SIZE);
	}
	cr_assert_eq(nr_free(h), 0);
	cr_assert_null(page_pool_alloc(&h->c), "an empty pool gave a frame");

	/* an extra reference keeps the frame allocated */
	get_page(pages[3]);
	put_page(&h->c, pages[3]);
	cr_assert_eq(nr_free(h), 0);
	cr_assert_eq(page_count(pages[3]), 1);
	for (i = 0; i < 8; i++)
		put_page(&h->c, pages[i]);
	cr_assert_eq(nr_free(h), 8);
	/* LIFO: the last frame freed is handed out first */
	cr_assert_eq(page_pool_alloc(&h->c), pages[7]);
	put_page(&h->c, pages[7]);
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* Page cache                                                          */

Test(filemap, add_find_delete)
{
	struct hand *h = hand_new(8, 16);
	struct page *page, *other, *found;

	page = page_pool_alloc(&h->c);
	cr_assert_eq(add_to_page_cache_lru(page, hmap(h), 5), 0);
	cr_assert(PageLocked(page), "a new cache page starts locked");
	cr_assert(PageLRU(page));
	cr_assert_eq(page->mapping, hmap(h));
	cr_assert_eq(page->index, 5);
	cr_assert_eq(page_count(page), 2, "ours + the page cache's");
	cr_assert_eq(hmap(h)->nrpages, 1);
	cr_assert_eq(global_page_state(&h->c, NR_FILE_PAGES), 1);

	other = page_pool_alloc(&h->c);
	cr_assert_eq(add_to_page_cache_lru(other, hmap(h), 5), -EEXIST);
	cr_assert_not(PageLocked(other));
	cr_assert_null(other->mapping);
	cr_assert_eq(page_count(other), 1, "a failed add keeps no reference");
	put_page(&h->c, other);

	found = find_get_page(hmap(h), 5);
	cr_assert_eq(found, page);
	cr_assert_eq(page_count(page), 3);
	put_page(&h->c, found);
	cr_assert_null(find_get_page(hmap(h), 4));
	cr_assert_null(find_get_page(hmap(h), 6));

	delete_from_page_cache(page);
	cr_assert_null(page->mapping);
	cr_assert_null(find_get_page(hmap(h), 5));
	cr_assert_eq(hmap(h)->nrpages, 0);
	cr_assert_eq(global_page_state(&h->c, NR_FILE_PAGES), 0);
	cr_assert_eq(page_count(page), 1, "only our reference is left");
	unlock_page(page);
	put_page(&h->c, page);
	cr_assert_eq(nr_free(h), 8);
	hand_free(h);
}

Test(filemap, find_lock_page_skips_a_truncated_page)
{
	struct hand *h = hand_new(8, 8);
	struct page *page = cache_page(h, 2), *got;

	cr_assert_eq(find_lock_page(hmap(h), 2), page);
	cr_assert(PageLocked(page));
	unlock_page(page);
	put_page(&h->c, page);

	/* gone from the cache: find_lock_page finds nothing */
	get_page(page);
	lock_page(page);
	delete_from_page_cache(page);
	unlock_page(page);
	put_page(&h->c, page);
	got = find_lock_page(hmap(h), 2);
	cr_assert_null(got);
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* Page lock and writeback waits                                       */

Test(filemap, lock_page_waits_for_unlock, .init = fm_4)
{
	struct hand *h = fm;
	struct page *page = cache_page(h, 0);
	struct blocker b;

	cr_assert(trylock_page(page));
	cr_assert_not(trylock_page(page), "a locked page was trylocked");
	blocker_start_asleep(&b, OP_LOCK, h, page,
			     "lock_page on a locked page");
	unlock_page(page);
	blocker_join(&b, "lock_page after unlock_page");
	cr_assert(PageLocked(page), "the waiter holds the lock now");
	cr_assert_not(trylock_page(page));
	unlock_page(page);
	fm_done();
}

Test(filemap, lock_page_handoff_between_many_threads, .init = fm_4)
{
	struct hand *h = fm;
	struct page *page = cache_page(h, 1);
	struct blocker b[4];
	unsigned int i, done, rounds;

	lock_page(page);
	for (i = 0; i < 4; i++)
		blocker_start(&b[i], OP_LOCK, h, page);
	for (i = 0; i < 4; i++)
		blocker_expect_asleep(&b[i], "lock_page, 4 waiters");
	/* each unlock hands the lock to exactly one waiter */
	for (rounds = 0; rounds < 4; rounds++) {
		unlock_page(page);
		for (;;) {
			done = 0;
			for (i = 0; i < 4; i++)
				done += fx_bg_done(&b[i].bg);
			if (done == rounds + 1)
				break;
			cr_assert_leq(done, rounds + 1,
				      "two waiters got the lock");
			sched_yield();
		}
		cr_assert(PageLocked(page));
	}
	for (i = 0; i < 4; i++)
		blocker_join(&b[i], "lock_page handoff");
	unlock_page(page);
	fm_done();
}

Test(filemap, wait_on_page_writeback_woken_by_end_page_writeback,
     .init = fm_4)
{
	struct hand *h = fm;
	struct page *page = cache_page(h, 3);
	struct blocker b;

	start_writeback(page);
	cr_assert(PageWriteback(page));
	blocker_start_asleep(&b, OP_WAIT_WB, h, page, "wait_on_page_writeback");
	/* the page lock is not what it waits for */
	lock_page(page);
	unlock_page(page);
	cr_assert_not(fx_bg_done(&b.bg));
	end_page_writeback(page);
	blocker_join(&b, "wait_on_page_writeback after end_page_writeback");
	cr_assert_not(PageWriteback(page));
	cr_assert_eq(global_page_state(&h->c, NR_WRITEBACK), 0);
	fm_done();
}

Test(filemap, end_page_writeback_rotates_reclaim_page_to_tail)
{
	struct hand *h = hand_new(8, 8);
	unsigned long idx[8];
	struct page *page;
	unsigned int i;

	for (i = 0; i < 4; i++)
		cache_page(h, i);
	/* newest at the head: 3 2 1 0 */
	cr_assert_eq(lru_indices(h, &h->c.pool.inactive_file, idx, 8), 4);
	cr_assert_eq(idx[0], 3);
	cr_assert_eq(idx[3], 0);

	page = find_get_page(hmap(h), 2);
	lock_page(page);
	test_set_page_writeback(page);
	SetPageReclaim(page);
	unlock_page(page);
	end_page_writeback(page);
	cr_assert_not(PageReclaim(page), "PG_reclaim is cleared");
	put_page(&h->c, page);
	lru_indices(h, &h->c.pool.inactive_file, idx, 8);
	cr_assert_eq(idx[3], 2, "a PG_reclaim page goes to the tail");
	cr_assert_eq(idx[0], 3);
	cr_assert_eq(idx[1], 1);
	cr_assert_eq(idx[2], 0);
	hand_free(h);
}

Test(filemap, truncate_waits_for_writeback, .init = fm_4)
{
	struct hand *h = fm;
	struct page *page = cache_page(h, 0);
	struct blocker b;

	cache_page(h, 1);
	start_writeback(page);
	blocker_start_asleep(&b, OP_TRUNCATE, h, NULL,
			     "truncate of a page under writeback");
	cr_assert(cached(h, 0), "truncated a page under writeback");
	end_page_writeback(page);
	blocker_join(&b, "truncate after end_page_writeback");
	cr_assert_not(cached(h, 0));
	cr_assert_not(cached(h, 1));
	cr_assert_eq(nr_free(h), 4);
	fm_done();
}

Test(filemap, fdatawait_waits_for_every_writeback_page_and_reports_error)
{
	struct hand *h = hand_new(8, 64);
	struct page *p[3];
	struct blocker b;
	unsigned int i;

	p[0] = cache_page(h, 1);
	p[1] = cache_page(h, 40);
	p[2] = cache_page(h, 63);
	for (i = 0; i < 3; i++)
		start_writeback(p[i]);
	cr_assert_eq(filemap_check_errors(hmap(h)), 0);
	blocker_start_asleep(&b, OP_FDATAWAIT, h, NULL, "fdatawait");
	end_page_writeback(p[0]);
	blocker_expect_asleep(&b, "fdatawait, 2 pages left");
	mapping_set_error(hmap(h), -EIO);
	end_page_writeback(p[2]);
	blocker_expect_asleep(&b, "fdatawait, 1 page left");
	end_page_writeback(p[1]);
	blocker_join(&b, "fdatawait");
	cr_assert_eq(b.ret, -EIO, "fdatawait must report the mapping's error");
	cr_assert_eq(filemap_check_errors(hmap(h)), 0, "reported once");
	cr_assert_neq(hmap(h)->wb_err, 0, "errseq keeps it for fsync");
	hand_free(h);
}

/* The write path refuses a write reaching past i_size before it touches
 * anything (there is no device here: any page access would fail). */
Test(filemap, generic_perform_write_past_i_size_is_efbig, .init = fm_4)
{
	struct hand *h = fm;
	char buf[16] = { 0 };

	cr_assert_eq(generic_perform_write(&h->inode, buf, 16,
					   4 * PAGE_SIZE - 8), -EFBIG);
	cr_assert_eq(generic_perform_write(&h->inode, buf, 1, 4 * PAGE_SIZE),
		     -EFBIG);
	cr_assert_eq(generic_perform_write(&h->inode, buf, 1, -1), -EINVAL);
	cr_assert_eq(generic_perform_write(&h->inode, buf, 0, 0), 0);
	cr_assert_eq(hmap(h)->nrpages, 0);
	cr_assert_eq(nr_free(h), 4);
	fm_done();
}

/* ------------------------------------------------------------------ */
/* LRU and reclaim                                                   */

Test(filemap, mark_page_accessed_activates_on_second_access, .init = fm_4)
{
	struct hand *h = fm;
	struct page *page = cache_page(h, 0);

	cr_assert_not(PageReferenced(page));
	mark_page_accessed(&h->c, page);
	cr_assert(PageReferenced(page));
	cr_assert_not(PageActive(page), "one access must not activate");
	mark_page_accessed(&h->c, page);
	cr_assert(PageActive(page));
	cr_assert_not(PageReferenced(page));
	cr_assert_eq(h->c.pool.nr_active, 1);
	cr_assert_eq(h->c.pool.nr_inactive, 0);
	cr_assert(list_is_first(&page->lru, &h->c.pool.active_file));
	fm_done();
}

/*
 * Reclaim works in batches of SWAP_CLUSTER_MAX from the inactive tail, as
 * the kernel's does: asked for 32 of 40, it frees exactly the 32 oldest.
 */
Test(filemap, reclaim_frees_oldest_clean_pages_first)
{
	struct hand *h = hand_new(40, 40);
	unsigned int i;

	for (i = 0; i < 40; i++)
		cache_page(h, i);
	cr_assert_eq(nr_free(h), 0);
	cr_assert_eq(try_to_free_pages(&h->c, SWAP_CLUSTER_MAX),
		     SWAP_CLUSTER_MAX);
	cr_assert_eq(nr_free(h), SWAP_CLUSTER_MAX);
	for (i = 0; i < SWAP_CLUSTER_MAX; i++)
		cr_assert_not(cached(h, i), "old page %u survived", i);
	for (i = SWAP_CLUSTER_MAX; i < 40; i++)
		cr_assert(cached(h, i), "new page %u was freed before old", i);
	cr_assert_eq(h->c.pool.nr_inactive, 40 - SWAP_CLUSTER_MAX);
	cr_assert_eq(global_page_state(&h->c, NR_FILE_PAGES),
		     40 - SWAP_CLUSTER_MAX);
	hand_free(h);
}

Test(filemap, reclaim_spares_active_pages_until_aged)
{
	struct hand *h = hand_new(40, 40);
	struct page *page;
	unsigned int i;

	for (i = 0; i < 40; i++)
		cache_page(h, i);
	page = find_get_page(hmap(h), 0);	/* the oldest, used twice */
	mark_page_accessed(&h->c, page);
	mark_page_accessed(&h->c, page);
	put_page(&h->c, page);
	cr_assert(PageActive(page));
	cr_assert_eq(try_to_free_pages(&h->c, SWAP_CLUSTER_MAX),
		     SWAP_CLUSTER_MAX);
	cr_assert(cached(h, 0), "an active page went before inactive ones");
	for (i = 1; i <= SWAP_CLUSTER_MAX; i++)
		cr_assert_not(cached(h, i), "old page %u survived", i);
	cr_assert(cached(h, SWAP_CLUSTER_MAX + 1));

	/* once the active list outgrows the inactive one it is aged */
	for (i = SWAP_CLUSTER_MAX + 1; i < 40; i++) {
		page = find_get_page(hmap(h), i);
		mark_page_accessed(&h->c, page);
		mark_page_accessed(&h->c, page);
		put_page(&h->c, page);
	}
	cr_assert_eq(h->c.pool.nr_inactive, 0);
	cr_assert_eq(try_to_free_pages(&h->c, SWAP_CLUSTER_MAX), 8,
		     "aged active pages are reclaimable");
	hand_free(h);
}

Test(filemap, reclaim_refuses_dirty_locked_writeback_and_pinned_pages)
{
	struct hand *h = hand_new(8, 8);
	struct page *p[8];
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = cache_page(h, i);
	SetPageDirty(p[0]);	/* flag only: no flusher in this test */
	SetPageDirty(p[1]);
	lock_page(p[2]);
	start_writeback(p[3]);
	get_page(p[4]);		/* a user holds it */

	cr_assert_eq(try_to_free_pages(&h->c, 8), 3, "only 5, 6, 7 are free");
	for (i = 0; i < 5; i++)
		cr_assert(cached(h, i), "page %u was reclaimed", i);
	for (i = 5; i < 8; i++)
		cr_assert_not(cached(h, i), "clean page %u was kept", i);
	cr_assert(PageReclaim(p[0]), "dirty pages get PG_reclaim");
	cr_assert(PageReclaim(p[1]));
	cr_assert(PageLRU(p[0]) && PageLRU(p[2]) && PageLRU(p[4]),
		  "kept pages go back on the LRU");
	cr_assert_eq(h->c.pool.nr_inactive, 5);

	/* released, they are freed by the next pass */
	ClearPageDirty(p[0]);
	ClearPageDirty(p[1]);
	ClearPageReclaim(p[0]);
	ClearPageReclaim(p[1]);
	unlock_page(p[2]);
	end_page_writeback(p[3]);
	put_page(&h->c, p[4]);
	cr_assert_eq(try_to_free_pages(&h->c, 8), 5);
	cr_assert_eq(nr_free(h), 8);
	hand_free(h);
}

Test(filemap, alloc_page_reclaims_clean_pages)
{
	struct hand *h = hand_new(4, 64);
	struct page *page;
	unsigned long i;

	/* a 64-page file through a 4-frame pool */
	for (i = 0; i < 64; i++) {
		page = find_or_create_page(hmap(h), i);
		cr_assert(page, "no frame for page %lu", i);
		SetPageUptodate(page);
		unlock_page(page);
		put_page(&h->c, page);
	}
	cr_assert_eq(hmap(h)->nrpages + nr_free(h), 4);
	cr_assert(cached(h, 63), "the newest page was reclaimed");
	hand_free(h);
}

/* Pinned = held through uf_page_get (uf_users); tests/test_alloc.c has
 * the rest of the allocation contract. */
Test(filemap, alloc_page_fails_when_everything_is_pinned, .timeout = 30)
{
	struct hand *h = hand_new(2, 4);
	struct page *a = page_pool_alloc(&h->c);
	struct page *b = page_pool_alloc(&h->c);

	a->uf_users = 1;
	b->uf_users = 1;
	cr_assert_null(alloc_page(&h->c), "no page can be freed: -ENOMEM");
	a->uf_users = 0;
	b->uf_users = 0;
	put_page(&h->c, a);
	put_page(&h->c, b);
	hand_free(h);
}

Test(filemap, alloc_page_waits_for_a_freed_frame)
{
	struct hand *h = hand_new(1, 4);
	struct page *a = page_pool_alloc(&h->c);
	struct blocker b;

	blocker_start_asleep(&b, OP_ALLOC, h, NULL,
			     "alloc_page with no free frame");
	put_page(&h->c, a);
	blocker_join(&b, "alloc_page after a frame was freed");
	cr_assert_eq(b.ret, 0);
	hand_free(h);
}

/* ------------------------------------------------------------------ */
/* Through the public API, on a scratch device                         */

#define IT_FILE_OFF	(1ull << 20)	/* the file starts 1 MiB in */
#define IT_FILL_LEN	(6ull << 20)	/* seed 1 over the file and around */

/*
 * A cache of @nr_pages frames over a fresh device whose bytes are the
 * pattern of seed 1, and a file of @file_len bytes at IT_FILE_OFF.
 */
static void it_open(struct tu_cdf *it, enum tu_kind kind, size_t nr_pages,
		    uint64_t file_len)
{
	struct uf_cache_config cfg;

	memset(it, 0, sizeof(*it));
	it->path = tu_dev(kind, TU_DEV_SIZE);
	tu_raw_fill(it->path, 0, IT_FILL_LEN, 1);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = nr_pages;
	tu_cdf_open(it, &cfg, IT_FILE_OFF, file_len);
}

/* uf_pread of [off, off+len) of the file must give the pattern of @seed. */
static void it_expect(struct tu_cdf *it, uint64_t off, size_t len, uint32_t seed,
		      const char *what)
{
	char *buf = malloc(len);
	ssize_t n;
	long bad;

	cr_assert(buf);
	n = uf_pread(it->file, buf, len, off);
	cr_assert_eq(n, (ssize_t)len, "%s: uf_pread(%zu @ %llu) = %zd", what,
		     len, (unsigned long long)off, n);
	bad = tu_check(buf, len, IT_FILE_OFF + off, seed);
	free(buf);
	cr_assert_eq(bad, -1, "%s: byte %llu of the file is not seed %u's",
		     what, (unsigned long long)off + (unsigned long long)bad,
		     seed);
}

/* Write the pattern of @seed over [off, off+len) of the file. */
static void it_write(struct tu_cdf *it, uint64_t off, size_t len, uint32_t seed)
{
	char *buf = malloc(len);
	ssize_t n;

	cr_assert(buf);
	tu_fill(buf, len, IT_FILE_OFF + off, seed);
	n = uf_pwrite(it->file, buf, len, off);
	free(buf);
	cr_assert_eq(n, (ssize_t)len, "uf_pwrite(%zu @ %llu) = %zd", len,
		     (unsigned long long)off, n);
}

Test(filemap, it_unwritten_ranges_read_the_device, .fini = tu_fini)
{
	struct tu_cdf it;

	it_open(&it, TU_FILE, 64, 64 * PAGE_SIZE);
	it_expect(&it, 0, PAGE_SIZE, 1, "page 0");
	it_expect(&it, 5000, 10000, 1, "unaligned, across pages");
	it_expect(&it, 63 * PAGE_SIZE + 1, PAGE_SIZE - 1, 1, "last page");
	/* again, now from the cache */
	it_expect(&it, 5000, 10000, 1, "cached");
	tu_cdf_close(&it);
}

Test(filemap, it_reads_past_the_end_are_short, .fini = tu_fini)
{
	char buf[256];
	struct tu_cdf it;

	it_open(&it, TU_FILE, 64, 8 * PAGE_SIZE);
	cr_assert_eq(uf_pread(it.file, buf, sizeof(buf), 8 * PAGE_SIZE - 100),
		     100);
	cr_assert_eq(tu_check(buf, 100, IT_FILE_OFF + 8 * PAGE_SIZE - 100, 1),
		     -1);
	cr_assert_eq(uf_pread(it.file, buf, sizeof(buf), 8 * PAGE_SIZE), 0);
	tu_cdf_close(&it);
}

Test(filemap, it_partial_page_write_keeps_the_rest_of_the_page,
     .fini = tu_fini)
{
	unsigned char *want, *got;
	struct tu_cdf it;
	bool same;

	it_open(&it, TU_FILE, 64, 16 * PAGE_SIZE);
	it_write(&it, 1000, 100, 2);		/* inside page 0 */
	it_write(&it, 3 * PAGE_SIZE - 10, 20, 3);	/* across pages 2-3 */
	it_expect(&it, 0, 1000, 1, "before the write");
	it_expect(&it, 1000, 100, 2, "the write");
	it_expect(&it, 1100, PAGE_SIZE - 1100, 1, "after the write");
	it_expect(&it, 2 * PAGE_SIZE, PAGE_SIZE - 10, 1, "page 2 head");
	it_expect(&it, 3 * PAGE_SIZE - 10, 20, 3, "the straddling write");
	it_expect(&it, 3 * PAGE_SIZE + 10, PAGE_SIZE - 10, 1, "page 3 tail");
	cr_assert_eq(uf_fsync(it.file), 0);

	/* on the device: the old bytes around the new ones (O_DIRECT reads
	 * whole pages, so build the expected 4 pages and compare) */
	want = tu_alloc(4 * PAGE_SIZE);
	got = tu_alloc(4 * PAGE_SIZE);
	tu_fill(want, 4 * PAGE_SIZE, IT_FILE_OFF, 1);
	tu_fill(want + 1000, 100, IT_FILE_OFF + 1000, 2);
	tu_fill(want + 3 * PAGE_SIZE - 10, 20, IT_FILE_OFF + 3 * PAGE_SIZE - 10,
		3);
	cr_assert_eq(tu_raw_read(it.path, IT_FILE_OFF, got, 4 * PAGE_SIZE), 0);
	same = memcmp(want, got, 4 * PAGE_SIZE) == 0;
	free(want);
	free(got);
	cr_assert(same, "the device does not hold old + new bytes");
	tu_cdf_close(&it);
}

Test(filemap, it_write_past_the_end_fails_and_changes_nothing,
     .fini = tu_fini)
{
	struct uf_cache_stats st;
	char buf[PAGE_SIZE];
	struct tu_cdf it;

	it_open(&it, TU_FILE, 64, 8 * PAGE_SIZE);
	memset(buf, 0xab, sizeof(buf));
	cr_assert_eq(uf_pwrite(it.file, buf, 20, 8 * PAGE_SIZE - 10), -EFBIG);
	cr_assert_eq(uf_pwrite(it.file, buf, 1, 8 * PAGE_SIZE), -EFBIG);
	cr_assert_eq(uf_pwrite(it.file, buf, sizeof(buf), 1ull << 40), -EFBIG);
	cr_assert_eq(uf_cache_stats(it.cache, &st), 0);
	cr_assert_eq(st.nr_file_pages, 0, "a refused write created pages");
	cr_assert_eq(st.nr_dirty, 0);
	cr_assert_eq(uf_fsync(it.file), 0);
	tu_cdf_close(&it);
	tu_raw_expect(it.path, IT_FILE_OFF, 8 * PAGE_SIZE, 1,
		      "device after refused writes");
}

/* A 4 MiB file through a 64-page cache: reclaim and writeback must keep
 * up, and every byte must come back. */
static void big_file_through_small_cache(enum tu_kind kind)
{
	const uint64_t len = 4ull << 20;
	const size_t chunk = 20000;	/* not page aligned on purpose */
	struct uf_cache_stats st;
	uint64_t off;
	struct tu_cdf it;

	it_open(&it, kind, 64, len);
	for (off = 0; off < len; off += chunk)
		it_write(&it, off, off + chunk > len ? len - off : chunk, 7);
	cr_assert_eq(uf_cache_stats(it.cache, &st), 0);
	cr_assert_leq(st.nr_file_pages, 64);
	for (off = 0; off < len; off += 3 * chunk)
		it_expect(&it, off, off + 3 * chunk > len ? len - off
			  : 3 * chunk, 7, "read back through the cache");
	cr_assert_eq(uf_fsync(it.file), 0);
	tu_cdf_close(&it);
	tu_raw_expect(it.path, IT_FILE_OFF, len, 7, "device after close");
	tu_raw_expect(it.path, IT_FILE_OFF + len, PAGE_SIZE, 1,
		      "device after the file");
}

Test(filemap, it_4mib_file_through_64_page_cache_file, .fini = tu_fini,
     .timeout = 120)
{
	big_file_through_small_cache(TU_FILE);
}

Test(filemap, it_4mib_file_through_64_page_cache_loop, .fini = tu_fini,
     .timeout = 120)
{
	big_file_through_small_cache(TU_LOOP);
}
