// SPDX-License-Identifier: MIT
/*
 * tests/test_lookup.c - the lockless page cache lookup: find_get_page()
 * walking the radix tree under mapping->tree_seq while writers insert,
 * delete, grow and shrink the tree (engine/lib/radix-tree.c,
 * radix_tree_lookup_seq; engine/mm/filemap.c).
 *
 * What would go wrong without the seqcount: a walk that crosses a shrink
 * takes an item for a node and follows it (a crash here: the items are not
 * addresses), and a lookup that races with a delete returns a page that is
 * no longer the file's, or a page already reused for another index.  Each
 * test churns the tree from one thread while others look up, for a fixed
 * number of rounds, and checks every answer.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "fixture.h"
#include "kernel/seqlock.h"
#include "lib/radix-tree.h"
#include "mm/pagemap.h"

#define CHURN_ROUNDS	20000
#define STABLE		3

static const unsigned long stable_idx[STABLE] = { 0, 100, 5000 };

/* Items the walk must never follow: even (bit 0 is RADIX_TREE_RETRY's),
 * and not addresses. */
static void *item_of(unsigned long index)
{
	return (void *)(uintptr_t)((index << 8) | 0xa0);
}

struct tree_case {
	struct radix_tree_root root;
	pthread_mutex_t lock;
	seqcount_t seq;
	bool stop;		/* atomic */
	unsigned long lookups;	/* atomic */
	unsigned long retries;	/* atomic */
	char bad[160];		/* the first wrong answer (criterion's
				 * asserts belong to the test's thread) */
	pthread_mutex_t bad_lock;
};

static void tree_bad(struct tree_case *t, unsigned long idx, void *item,
		     void *want)
{
	pthread_mutex_lock(&t->bad_lock);
	if (!t->bad[0])
		snprintf(t->bad, sizeof(t->bad), "index %lu: %p, want %p",
			 idx, item, want);
	pthread_mutex_unlock(&t->bad_lock);
}

static void tree_write(struct tree_case *t, unsigned long index, bool add)
{
	pthread_mutex_lock(&t->lock);
	write_seqcount_begin(&t->seq);
	if (add)
		cr_assert_eq(radix_tree_insert(&t->root, index, item_of(index)),
			     0);
	else
		cr_assert_eq(radix_tree_delete(&t->root, index),
			     item_of(index));
	write_seqcount_end(&t->seq);
	pthread_mutex_unlock(&t->lock);
}

static void *tree_reader(void *arg)
{
	struct tree_case *t = arg;
	unsigned long n = 0, retries = 0;
	unsigned int seq, i;
	void *item;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < STABLE + 1; i++) {
			/* the stable items, and one index never inserted */
			unsigned long idx = i < STABLE ? stable_idx[i] : 77;

			do {
				seq = read_seqcount_begin(&t->seq);
				item = radix_tree_lookup_seq(&t->root, idx,
							     &t->seq, seq);
				retries += item == RADIX_TREE_RETRY;
			} while (item == RADIX_TREE_RETRY ||
				 read_seqcount_retry(&t->seq, seq));
			if (item != (i < STABLE ? item_of(idx) : NULL))
				tree_bad(t, idx, item,
					 i < STABLE ? item_of(idx) : NULL);
			n++;
		}
	}
	__atomic_add_fetch(&t->lookups, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->retries, retries, __ATOMIC_RELAXED);
	return NULL;
}

Test(lookup, seq_walk_survives_growth_and_shrink)
{
	struct tree_case t = { .lock = PTHREAD_MUTEX_INITIALIZER,
			       .bad_lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t readers[2];
	unsigned long r, far;
	unsigned int i;

	INIT_RADIX_TREE(&t.root);
	for (i = 0; i < STABLE; i++)
		tree_write(&t, stable_idx[i], true);
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&readers[i], NULL, tree_reader,
					    &t), 0);
	for (r = 0; r < CHURN_ROUNDS; r++) {
		/* a far index grows the tree by several levels, its delete
		 * shrinks it back: the walks race with both */
		far = (1UL << (12 + r % 40)) + r;
		tree_write(&t, far, true);
		tree_write(&t, 6000 + r % 4000, true);
		tree_write(&t, far, false);
		tree_write(&t, 6000 + r % 4000, false);
	}
	__atomic_store_n(&t.stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(readers[i], NULL);
	cr_log_info("%lu lookups, %lu retried walks", t.lookups, t.retries);
	cr_expect_eq(t.bad[0], 0, "%s", t.bad);
	cr_expect_gt(t.lookups, 0);
	cr_expect_geq(radix_tree_verify(&t.root), 0, "tree invariants broken");
	for (i = 0; i < STABLE; i++)
		cr_expect_eq(radix_tree_lookup(&t.root, stable_idx[i]),
			     item_of(stable_idx[i]));
	radix_tree_destroy(&t.root);
}

/* ---- find_get_page() against add and delete on a hand-built cache ---- */

struct page_case {
	struct hand *h;
	bool stop;		/* atomic */
	unsigned long found;	/* atomic: churned pages found */
	char bad[160];		/* the first wrong answer */
	pthread_mutex_t bad_lock;
};

static void page_bad(struct page_case *pc, const char *msg)
{
	pthread_mutex_lock(&pc->bad_lock);
	if (!pc->bad[0])
		snprintf(pc->bad, sizeof(pc->bad), "%s", msg);
	pthread_mutex_unlock(&pc->bad_lock);
}

#define CHURN_LO	64
#define CHURN_PAGES	32

static void *page_reader(void *arg)
{
	struct page_case *pc = arg;
	struct address_space *m = hmap(pc->h);
	unsigned long idx, n = 0, found = 0;
	struct address_space *mapping;
	struct page *page;
	char msg[160];

	while (!__atomic_load_n(&pc->stop, __ATOMIC_ACQUIRE)) {
		idx = n++ % (CHURN_LO + CHURN_PAGES);
		page = find_get_page(m, idx);
		if (!page) {
			if (idx < CHURN_LO) {
				snprintf(msg, sizeof(msg),
					 "stable page %lu not found", idx);
				page_bad(pc, msg);
			}
			continue;
		}
		/* the page was the file's page at idx when the reference was
		 * taken; the reference keeps it from being freed and reused,
		 * not from being deleted since (mapping NULL: truncate's way) */
		mapping = __atomic_load_n(&page->mapping, __ATOMIC_RELAXED);
		if (page->index != idx || (mapping != m && mapping)) {
			snprintf(msg, sizeof(msg),
				 "index %lu: got page of index %lu, mapping %p",
				 idx, page->index, (void *)page->mapping);
			page_bad(pc, msg);
		}
		found += idx >= CHURN_LO;
		put_page(&pc->h->c, page);
	}
	__atomic_add_fetch(&pc->found, found, __ATOMIC_RELAXED);
	return NULL;
}

static void churn_add(struct hand *h, unsigned long idx)
{
	struct page *page = page_cache_alloc(hmap(h));

	cr_assert(page, "pool ran dry");
	cr_assert_eq(add_to_page_cache_lru(page, hmap(h), idx), 0);
	SetPageUptodate(page);
	unlock_page(page);
	put_page(&h->c, page);
}

/* remove_mapping()'s way: lock, delete, drop the page cache's reference */
static void churn_del(struct hand *h, unsigned long idx)
{
	struct page *page = find_lock_page(hmap(h), idx);

	cr_assert(page, "churned page %lu vanished", idx);
	delete_from_page_cache(page);
	unlock_page(page);
	put_page(&h->c, page);
}

Test(lookup, find_get_page_never_returns_a_page_that_left_the_file)
{
	struct page_case pc = { .h = hand_new(256, 1UL << 20),
				.bad_lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t readers[2];
	unsigned long r, i;

	for (i = 0; i < CHURN_LO; i++)
		cache_page(pc.h, i);
	for (i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&readers[i], NULL, page_reader,
					    &pc), 0);
	for (r = 0; r < CHURN_ROUNDS / 4; r++) {
		for (i = 0; i < CHURN_PAGES; i++)
			churn_add(pc.h, CHURN_LO + i);
		/* and a far page: the tree grows and shrinks */
		churn_add(pc.h, 1UL << 19);
		for (i = 0; i < CHURN_PAGES; i++)
			churn_del(pc.h, CHURN_LO + (i * 7) % CHURN_PAGES);
		churn_del(pc.h, 1UL << 19);
	}
	__atomic_store_n(&pc.stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(readers[i], NULL);
	cr_log_info("churned pages found %lu times", pc.found);
	cr_expect_eq(pc.bad[0], 0, "%s", pc.bad);
	cr_expect_gt(pc.found, 0, "the readers never met a churned page");
	hand_free(pc.h);
}
