// SPDX-License-Identifier: MIT
/*
 * tests/test_radix_tree.c - engine/lib/radix-tree.c, the per-mapping page index.
 *
 * write_cache_pages() and sync trust the tree to return exactly the tagged
 * pages in index order, and radix_tree_tagged() to say whether a mapping is
 * still dirty; a wrong answer there silently loses or repeats writeback.  So
 * besides the edge cases (index 0 stored in the root, node boundaries,
 * ULONG_MAX) a randomised run checks every answer against a sorted array
 * and radix_tree_verify() checks the tag propagation after every change.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/radix-tree.h"

/* Items are never dereferenced by the tree; any distinct non-NULL value. */
static void *item_for(unsigned long index, unsigned int gen)
{
	return (void *)(uintptr_t)(((index * 0x9e3779b97f4a7c15UL) << 4) |
				   ((gen & 7) << 1) | 1);
}

static const unsigned long edge_indices[] = {
	0, 63, 64, 4095, 1UL << 40, ULONG_MAX,
};
#define NR_EDGE (sizeof(edge_indices) / sizeof(edge_indices[0]))

static void insert_ok(struct radix_tree_root *root, unsigned long index)
{
	cr_assert_eq(radix_tree_insert(root, index, item_for(index, 0)), 0,
		     "insert %lu", index);
}

static void verify_ok(const struct radix_tree_root *root)
{
	cr_assert_geq(radix_tree_verify(root), 0, "tree invariants broken");
}

static int is_edge(unsigned long index)
{
	size_t i;

	for (i = 0; i < NR_EDGE; i++)
		if (edge_indices[i] == index)
			return 1;
	return 0;
}

/* Every edge index present in @mask (bit i = edge_indices[i]) and nothing
 * around them. */
static void check_edges(const struct radix_tree_root *root, unsigned int mask)
{
	size_t i;
	int d;

	for (i = 0; i < NR_EDGE; i++) {
		unsigned long index = edge_indices[i];
		void *want = mask >> i & 1 ? item_for(index, 0) : NULL;

		cr_assert_eq(radix_tree_lookup(root, index), want,
			     "lookup %lu", index);
		for (d = -1; d <= 1; d += 2) {
			unsigned long near = index + (unsigned long)(long)d;

			if (!is_edge(near))
				cr_assert_null(radix_tree_lookup(root, near),
					       "neighbour %lu of %lu", near,
					       index);
		}
	}
}

Test(radix_tree, insert_lookup_delete_edges)
{
	RADIX_TREE(root);
	unsigned int mask = 0;
	size_t i;
	/* Delete in an order that empties inner nodes before the top. */
	static const size_t del_order[] = { 3, 5, 0, 4, 2, 1 };

	for (i = 0; i < NR_EDGE; i++) {
		insert_ok(&root, edge_indices[i]);
		mask |= 1U << i;
		check_edges(&root, mask);
		verify_ok(&root);
	}
	for (i = 0; i < NR_EDGE; i++) {
		unsigned long index = edge_indices[del_order[i]];

		cr_assert_eq(radix_tree_delete(&root, index),
			     item_for(index, 0), "delete %lu", index);
		cr_assert_null(radix_tree_delete(&root, index),
			       "second delete %lu", index);
		mask &= ~(1U << del_order[i]);
		check_edges(&root, mask);
		verify_ok(&root);
	}
	cr_assert_null(root.rnode);
	cr_assert_eq(root.height, 0);
	cr_assert_eq(radix_tree_verify(&root), 0);
}

Test(radix_tree, sparse_lookup_slot_and_replace)
{
	RADIX_TREE(root);
	void **slot;
	int i;

	for (i = 0; i < 40; i++)
		insert_ok(&root, 1UL << i);
	verify_ok(&root);
	for (i = 0; i < 40; i++) {
		cr_assert_eq(radix_tree_lookup(&root, 1UL << i),
			     item_for(1UL << i, 0));
		cr_assert_null(radix_tree_lookup(&root, (1UL << i) + 5));
	}
	cr_assert_null(radix_tree_lookup_slot(&root, 5));
	slot = radix_tree_lookup_slot(&root, 1UL << 33);
	cr_assert_not_null(slot);
	cr_assert_eq(radix_tree_deref_slot(slot), item_for(1UL << 33, 0));
	radix_tree_replace_slot(slot, item_for(1UL << 33, 1));
	cr_assert_eq(radix_tree_lookup(&root, 1UL << 33),
		     item_for(1UL << 33, 1));
	radix_tree_destroy(&root);
	cr_assert_null(root.rnode);
	cr_assert_null(radix_tree_lookup(&root, 1));
}

Test(radix_tree, height_grows_and_shrinks)
{
	RADIX_TREE(root);

	insert_ok(&root, 0);
	cr_assert_eq(root.height, 0, "index 0 alone lives in the root");
	cr_assert_eq(root.rnode, item_for(0, 0));
	cr_assert_eq(radix_tree_verify(&root), 0);
	insert_ok(&root, 63);
	cr_assert_eq(root.height, 1);
	insert_ok(&root, 64);
	cr_assert_eq(root.height, 2);
	insert_ok(&root, ULONG_MAX);
	cr_assert_eq(root.height, RADIX_TREE_MAX_PATH);
	verify_ok(&root);

	radix_tree_delete(&root, ULONG_MAX);
	cr_assert_eq(root.height, 2, "delete must shrink the tree");
	cr_assert_eq(radix_tree_verify(&root), 3, "a top node, two leaves");
	radix_tree_delete(&root, 64);
	cr_assert_eq(root.height, 1);
	radix_tree_delete(&root, 63);
	cr_assert_eq(root.height, 0);
	cr_assert_eq(root.rnode, item_for(0, 0));
	cr_assert_eq(radix_tree_lookup(&root, 0), item_for(0, 0));
	radix_tree_delete(&root, 0);
	cr_assert_null(root.rnode);
}

Test(radix_tree, insert_existing_is_eexist)
{
	RADIX_TREE(root);
	size_t i;

	for (i = 0; i < NR_EDGE; i++) {
		unsigned long index = edge_indices[i];

		insert_ok(&root, index);
		cr_assert_eq(radix_tree_insert(&root, index,
					       item_for(index, 1)), -EEXIST,
			     "reinsert %lu", index);
		cr_assert_eq(radix_tree_lookup(&root, index),
			     item_for(index, 0), "original kept at %lu",
			     index);
	}
	cr_assert_eq(radix_tree_insert(&root, 7, NULL), -EINVAL);
	cr_assert_null(radix_tree_lookup(&root, 7));
	verify_ok(&root);
	radix_tree_destroy(&root);
}

Test(radix_tree, tags_set_get_clear)
{
	RADIX_TREE(root);
	size_t i;

	for (i = 0; i < NR_EDGE; i++)
		insert_ok(&root, edge_indices[i]);
	cr_assert_not(radix_tree_tagged(&root, PAGECACHE_TAG_DIRTY));

	cr_assert_null(radix_tree_tag_set(&root, 65, PAGECACHE_TAG_DIRTY),
		       "tagging an empty index tags nothing");
	cr_assert_not(radix_tree_tagged(&root, PAGECACHE_TAG_DIRTY));

	cr_assert_eq(radix_tree_tag_set(&root, 4095, PAGECACHE_TAG_DIRTY),
		     item_for(4095, 0));
	cr_assert_eq(radix_tree_tag_set(&root, ULONG_MAX, PAGECACHE_TAG_DIRTY),
		     item_for(ULONG_MAX, 0));
	radix_tree_tag_set(&root, 64, PAGECACHE_TAG_WRITEBACK);
	verify_ok(&root);

	cr_assert(radix_tree_tag_get(&root, 4095, PAGECACHE_TAG_DIRTY));
	cr_assert(radix_tree_tag_get(&root, ULONG_MAX, PAGECACHE_TAG_DIRTY));
	cr_assert_not(radix_tree_tag_get(&root, 4095,
					 PAGECACHE_TAG_WRITEBACK));
	cr_assert_not(radix_tree_tag_get(&root, 64, PAGECACHE_TAG_DIRTY));
	cr_assert(radix_tree_tag_get(&root, 64, PAGECACHE_TAG_WRITEBACK));
	cr_assert_not(radix_tree_tag_get(&root, 4094, PAGECACHE_TAG_DIRTY));
	cr_assert(radix_tree_tagged(&root, PAGECACHE_TAG_DIRTY));
	cr_assert(radix_tree_tagged(&root, PAGECACHE_TAG_WRITEBACK));
	cr_assert_not(radix_tree_tagged(&root, PAGECACHE_TAG_TOWRITE));

	/* Clearing one of two keeps the tree tagged; the last one doesn't. */
	cr_assert_eq(radix_tree_tag_clear(&root, 4095, PAGECACHE_TAG_DIRTY),
		     item_for(4095, 0));
	cr_assert_not(radix_tree_tag_get(&root, 4095, PAGECACHE_TAG_DIRTY));
	cr_assert(radix_tree_tagged(&root, PAGECACHE_TAG_DIRTY));
	verify_ok(&root);
	radix_tree_tag_clear(&root, ULONG_MAX, PAGECACHE_TAG_DIRTY);
	cr_assert_not(radix_tree_tagged(&root, PAGECACHE_TAG_DIRTY));
	cr_assert(radix_tree_tagged(&root, PAGECACHE_TAG_WRITEBACK));
	verify_ok(&root);

	/* Deleting the last tagged item untags the tree too. */
	radix_tree_delete(&root, 64);
	cr_assert_not(radix_tree_tagged(&root, PAGECACHE_TAG_WRITEBACK));
	verify_ok(&root);

	/* A deleted and reinserted index comes back untagged. */
	radix_tree_tag_set(&root, 63, PAGECACHE_TAG_TOWRITE);
	radix_tree_delete(&root, 63);
	insert_ok(&root, 63);
	cr_assert_not(radix_tree_tag_get(&root, 63, PAGECACHE_TAG_TOWRITE));
	cr_assert_not(radix_tree_tagged(&root, PAGECACHE_TAG_TOWRITE));
	verify_ok(&root);
	radix_tree_destroy(&root);
}

Test(radix_tree, tag_on_root_item_survives_grow_and_shrink)
{
	RADIX_TREE(root);

	insert_ok(&root, 0);
	radix_tree_tag_set(&root, 0, PAGECACHE_TAG_DIRTY);
	cr_assert(radix_tree_tag_get(&root, 0, PAGECACHE_TAG_DIRTY));
	cr_assert_not(radix_tree_tag_get(&root, 1, PAGECACHE_TAG_DIRTY));

	insert_ok(&root, 1UL << 20);
	verify_ok(&root);
	cr_assert(radix_tree_tag_get(&root, 0, PAGECACHE_TAG_DIRTY));
	cr_assert_not(radix_tree_tag_get(&root, 1UL << 20,
					 PAGECACHE_TAG_DIRTY));

	radix_tree_delete(&root, 1UL << 20);
	cr_assert_eq(root.height, 0);
	cr_assert(radix_tree_tag_get(&root, 0, PAGECACHE_TAG_DIRTY));
	cr_assert(radix_tree_tagged(&root, PAGECACHE_TAG_DIRTY));
	radix_tree_tag_clear(&root, 0, PAGECACHE_TAG_DIRTY);
	cr_assert_not(radix_tree_tagged(&root, PAGECACHE_TAG_DIRTY));
	radix_tree_delete(&root, 0);
}

Test(radix_tree, gang_lookup_order_and_max_items)
{
	RADIX_TREE(root);
	void *results[8];
	unsigned long indices[8];
	unsigned int n, i;

	for (i = 0; i < NR_EDGE; i++)
		insert_ok(&root, edge_indices[i]);
	insert_ok(&root, 65);

	n = radix_tree_gang_lookup_index(&root, results, indices, 0, 8);
	cr_assert_eq(n, NR_EDGE + 1);
	cr_assert_eq(indices[0], 0);
	cr_assert_eq(indices[1], 63);
	cr_assert_eq(indices[2], 64);
	cr_assert_eq(indices[3], 65);
	cr_assert_eq(indices[4], 4095);
	cr_assert_eq(indices[5], 1UL << 40);
	cr_assert_eq(indices[6], ULONG_MAX);
	for (i = 0; i < n; i++)
		cr_assert_eq(results[i], item_for(indices[i], 0));

	n = radix_tree_gang_lookup_index(&root, results, indices, 64, 2);
	cr_assert_eq(n, 2, "max_items caps the batch");
	cr_assert_eq(indices[0], 64);
	cr_assert_eq(indices[1], 65);

	n = radix_tree_gang_lookup(&root, results, 66, 8);
	cr_assert_eq(n, 3);
	cr_assert_eq(results[0], item_for(4095, 0));
	cr_assert_eq(results[2], item_for(ULONG_MAX, 0));

	n = radix_tree_gang_lookup(&root, results, (1UL << 40) + 1, 8);
	cr_assert_eq(n, 1);
	cr_assert_eq(results[0], item_for(ULONG_MAX, 0));
	cr_assert_eq(radix_tree_gang_lookup(&root, results, 5, 0), 0);
	radix_tree_destroy(&root);

	/* Height 0: only a lookup from 0 sees the root item. */
	insert_ok(&root, 0);
	cr_assert_eq(radix_tree_gang_lookup(&root, results, 0, 8), 1);
	cr_assert_eq(radix_tree_gang_lookup(&root, results, 1, 8), 0);
	radix_tree_delete(&root, 0);
}

Test(radix_tree, gang_lookup_tag_batches_across_nodes)
{
	RADIX_TREE(root);
	void *results[16];
	unsigned long indices[16], index, expect;
	unsigned int n, i, seen = 0;

	/* 0..9999 present, every 7th dirty, plus a dirty ULONG_MAX. */
	for (index = 0; index < 10000; index++) {
		insert_ok(&root, index);
		if (index % 7 == 0)
			radix_tree_tag_set(&root, index, PAGECACHE_TAG_DIRTY);
	}
	insert_ok(&root, ULONG_MAX);
	radix_tree_tag_set(&root, ULONG_MAX, PAGECACHE_TAG_DIRTY);
	verify_ok(&root);

	/* Walk in batches of 16 like write_cache_pages() does. */
	index = 3;
	expect = 7;
	for (;;) {
		n = radix_tree_gang_lookup_tag_index(&root, results, indices,
						     index, 16,
						     PAGECACHE_TAG_DIRTY);
		if (!n)
			break;
		cr_assert_leq(n, 16);
		for (i = 0; i < n; i++, seen++) {
			if (expect >= 10000)
				expect = ULONG_MAX;
			cr_assert_eq(indices[i], expect, "batch from %lu",
				     index);
			cr_assert_eq(results[i], item_for(expect, 0));
			expect += 7;
		}
		index = indices[n - 1] + 1;
		if (!index)
			break;
	}
	cr_assert_eq(seen, (10000 - 7 + 6) / 7 + 1);

	n = radix_tree_gang_lookup_tag(&root, results, 9990, 16,
				       PAGECACHE_TAG_DIRTY);
	cr_assert_eq(n, 2);
	cr_assert_eq(results[0], item_for(9996, 0));
	cr_assert_eq(results[1], item_for(ULONG_MAX, 0));
	cr_assert_eq(radix_tree_gang_lookup_tag(&root, results, 0, 16,
						PAGECACHE_TAG_TOWRITE), 0);
	radix_tree_destroy(&root);
}

/* The caller's loop from tag_pages_for_writeback(), with a given batch. */
static unsigned long tag_for_writeback(struct radix_tree_root *root,
				       unsigned long start, unsigned long end,
				       unsigned long batch,
				       unsigned int *calls)
{
	unsigned long tagged, total = 0;

	*calls = 0;
	do {
		tagged = radix_tree_range_tag_if_tagged(root, &start, end,
							batch,
							PAGECACHE_TAG_DIRTY,
							PAGECACHE_TAG_TOWRITE);
		cr_assert_leq(tagged, batch);
		total += tagged;
		(*calls)++;
		cr_assert_lt(*calls, 100000, "tagging loop does not end");
	} while (tagged >= batch && start);
	return total;
}

/*
 * One radix_tree_range_tag_if_tagged() over [first, last], at most nr,
 * DIRTY -> to: demand that it tagged want and said to resume at next.
 */
static void range_tag_once(struct radix_tree_root *root, unsigned long first,
			   unsigned long last, unsigned long nr,
			   unsigned int to, unsigned long want,
			   unsigned long next, const char *what)
{
	unsigned long n;

	n = radix_tree_range_tag_if_tagged(root, &first, last, nr,
					   PAGECACHE_TAG_DIRTY, to);
	cr_assert_eq(n, want, "%s: tagged %lu, want %lu", what, n, want);
	cr_assert_eq(first, next, "%s: resume at %lu, want %lu", what, first,
		     next);
}

Test(radix_tree, range_tag_if_tagged_exact_range)
{
	RADIX_TREE(root);
	unsigned long index, first, n;
	unsigned int calls;

	for (index = 0; index < 2000; index++) {
		insert_ok(&root, index);
		if (index % 3 == 0)
			radix_tree_tag_set(&root, index, PAGECACHE_TAG_DIRTY);
	}

	/* One batch: stops after nr_to_tag and says where to go on. */
	range_tag_once(&root, 100, 1500, 5, PAGECACHE_TAG_TOWRITE, 5, 114 + 1,
		       "resume just past the 5th (114)");
	verify_ok(&root);

	/* ... from there on, in batches */
	n = tag_for_writeback(&root, 114 + 1, 1500, 7, &calls);
	cr_assert_eq(n, (1500 - 117) / 3 + 1);
	cr_assert_gt(calls, 1);
	verify_ok(&root);
	for (index = 0; index < 2000; index++) {
		int want = index % 3 == 0 && index >= 100 && index <= 1500;

		cr_assert_eq(radix_tree_tag_get(&root, index,
						PAGECACHE_TAG_TOWRITE), want,
			     "TOWRITE at %lu", index);
	}

	/* Finishing the range leaves first at last + 1. */
	range_tag_once(&root, 1990, 1995, 100, PAGECACHE_TAG_TOWRITE, 2, 1996,
		       "the end of the range");
	first = 1996;
	cr_assert_eq(radix_tree_range_tag_if_tagged(&root, &first, 1995, 0,
						    PAGECACHE_TAG_DIRTY,
						    PAGECACHE_TAG_TOWRITE), 0);
	radix_tree_destroy(&root);
}

Test(radix_tree, range_tag_if_tagged_to_ulong_max)
{
	RADIX_TREE(root);
	unsigned long n;
	unsigned int calls;

	insert_ok(&root, 5);
	insert_ok(&root, 1UL << 40);
	insert_ok(&root, ULONG_MAX - 1);
	insert_ok(&root, ULONG_MAX);
	radix_tree_tag_set(&root, 1UL << 40, PAGECACHE_TAG_DIRTY);
	radix_tree_tag_set(&root, ULONG_MAX, PAGECACHE_TAG_DIRTY);

	/* The batch ends exactly on ULONG_MAX: start wraps to 0. */
	n = tag_for_writeback(&root, 0, ULONG_MAX, 1, &calls);
	cr_assert_eq(n, 2);
	cr_assert_eq(calls, 2);
	cr_assert(radix_tree_tag_get(&root, ULONG_MAX, PAGECACHE_TAG_TOWRITE));
	cr_assert(radix_tree_tag_get(&root, 1UL << 40, PAGECACHE_TAG_TOWRITE));
	cr_assert_not(radix_tree_tag_get(&root, ULONG_MAX - 1,
					 PAGECACHE_TAG_TOWRITE));
	verify_ok(&root);

	range_tag_once(&root, 6, ULONG_MAX, 10, PAGECACHE_TAG_WRITEBACK, 2, 0,
		       "finishing at ULONG_MAX wraps to 0");
	radix_tree_destroy(&root);

	/* Height 0 tree: the root item. */
	insert_ok(&root, 0);
	radix_tree_tag_set(&root, 0, PAGECACHE_TAG_DIRTY);
	range_tag_once(&root, 0, 10, 10, PAGECACHE_TAG_TOWRITE, 1, 11,
		       "the root item");
	cr_assert(radix_tree_tag_get(&root, 0, PAGECACHE_TAG_TOWRITE));
	radix_tree_delete(&root, 0);
	cr_assert_not(radix_tree_tagged(&root, PAGECACHE_TAG_TOWRITE));
}

Test(radix_tree, next_and_prev_hole)
{
	RADIX_TREE(root);
	unsigned long index;

	for (index = 10; index < 20; index++)
		insert_ok(&root, index);
	cr_assert_eq(radix_tree_next_hole(&root, 10, 100), 20);
	cr_assert_eq(radix_tree_next_hole(&root, 10, 4), 14);
	cr_assert_eq(radix_tree_next_hole(&root, 5, 100), 5);
	cr_assert_eq(radix_tree_prev_hole(&root, 19, 100), 9);
	cr_assert_eq(radix_tree_prev_hole(&root, 19, 3), 16);
	radix_tree_destroy(&root);
}

/*
 * Randomised comparison against a sorted array.  Keys cluster in a small
 * range (so nodes fill, empty and tags propagate and unpropagate) with a
 * few huge ones (so the tree grows and shrinks in height).
 */
struct model_entry {
	unsigned long index;
	void *item;
	unsigned int tags;
};

struct model {
	struct model_entry *e;
	size_t nr;
};

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned long random_index(void)
{
	switch (rng() % 16) {
	case 0:
		return ULONG_MAX - rng() % 200;
	case 1:
		return (1UL << 40) + rng() % 200;
	case 2:
		return (unsigned long)rng();
	default:
		return rng() % 3000;
	}
}

/* Position of the first entry with index >= @index. */
static size_t model_find(const struct model *m, unsigned long index)
{
	size_t lo = 0, hi = m->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct model_entry *model_get(struct model *m, unsigned long index)
{
	size_t pos = model_find(m, index);

	return pos < m->nr && m->e[pos].index == index ? &m->e[pos] : NULL;
}

static void rand_insert(struct radix_tree_root *root, struct model *m,
			unsigned long index, unsigned int gen)
{
	size_t pos = model_find(m, index);
	int exists = pos < m->nr && m->e[pos].index == index;
	int ret = radix_tree_insert(root, index, item_for(index, gen));

	cr_assert_eq(ret, exists ? -EEXIST : 0, "insert %lu", index);
	if (exists)
		return;
	memmove(&m->e[pos + 1], &m->e[pos], (m->nr - pos) * sizeof(*m->e));
	m->e[pos] = (struct model_entry){ index, item_for(index, gen), 0 };
	m->nr++;
}

static void rand_delete(struct radix_tree_root *root, struct model *m,
			unsigned long index)
{
	struct model_entry *e = model_get(m, index);
	void *got = radix_tree_delete(root, index);

	cr_assert_eq(got, e ? e->item : NULL, "delete %lu", index);
	if (!e)
		return;
	memmove(e, e + 1, (size_t)(&m->e[m->nr] - (e + 1)) * sizeof(*e));
	m->nr--;
}

static void rand_tag(struct radix_tree_root *root, struct model *m,
		     unsigned long index, unsigned int tag, int set)
{
	struct model_entry *e = model_get(m, index);
	void *got = set ? radix_tree_tag_set(root, index, tag) :
			  radix_tree_tag_clear(root, index, tag);

	cr_assert_eq(got, e ? e->item : NULL, "tag %d %u at %lu", set, tag,
		     index);
	if (!e)
		return;
	if (set)
		e->tags |= 1U << tag;
	else
		e->tags &= ~(1U << tag);
}

static void rand_gang(const struct radix_tree_root *root,
		      const struct model *m, unsigned long first, int tag)
{
	void *results[40];
	unsigned long indices[40];
	unsigned int max = 1 + rng() % 40, n, got;
	size_t pos = model_find(m, first);

	if (tag < 0)
		got = radix_tree_gang_lookup_index(root, results, indices,
						   first, max);
	else
		got = radix_tree_gang_lookup_tag_index(root, results, indices,
						       first, max,
						       (unsigned int)tag);
	for (n = 0; n < max && pos < m->nr; pos++) {
		if (tag >= 0 && !(m->e[pos].tags >> tag & 1))
			continue;
		cr_assert_lt(n, got, "gang tag %d from %lu: missing %lu", tag,
			     first, m->e[pos].index);
		cr_assert_eq(indices[n], m->e[pos].index, "gang tag %d", tag);
		cr_assert_eq(results[n], m->e[pos].item);
		n++;
	}
	cr_assert_eq(got, n, "gang tag %d from %lu: extra items", tag, first);
}

static void rand_range_tag(struct radix_tree_root *root, struct model *m)
{
	unsigned long first = random_index(), last = random_index(), want;
	unsigned long nr = 1 + rng() % 50, n, next = 0, expect_first;
	size_t pos;

	if (first > last) {
		unsigned long t = first;

		first = last;
		last = t;
	}
	want = 0;
	expect_first = last + 1;
	for (pos = model_find(m, first); pos < m->nr; pos++) {
		if (m->e[pos].index > last)
			break;
		if (!(m->e[pos].tags & (1U << PAGECACHE_TAG_DIRTY)))
			continue;
		m->e[pos].tags |= 1U << PAGECACHE_TAG_TOWRITE;
		if (++want == nr) {
			expect_first = m->e[pos].index + 1;
			break;
		}
	}
	next = first;
	n = radix_tree_range_tag_if_tagged(root, &next, last, nr,
					   PAGECACHE_TAG_DIRTY,
					   PAGECACHE_TAG_TOWRITE);
	cr_assert_eq(n, want, "range_tag [%lu, %lu] max %lu", first, last, nr);
	cr_assert_eq(next, expect_first, "range_tag resume point");
}

static void rand_check_all(const struct radix_tree_root *root,
			   const struct model *m)
{
	unsigned int tag;
	size_t i;

	verify_ok(root);
	for (tag = 0; tag < RADIX_TREE_MAX_TAGS; tag++) {
		int any = 0;

		for (i = 0; i < m->nr; i++)
			any |= m->e[i].tags >> tag & 1;
		cr_assert_eq(radix_tree_tagged(root, tag), any, "tagged %u",
			     tag);
	}
	for (i = 0; i < m->nr; i++) {
		cr_assert_eq(radix_tree_lookup(root, m->e[i].index),
			     m->e[i].item);
		for (tag = 0; tag < RADIX_TREE_MAX_TAGS; tag++)
			cr_assert_eq(radix_tree_tag_get(root, m->e[i].index,
							tag),
				     (int)(m->e[i].tags >> tag & 1));
	}
}

static void rand_step(struct radix_tree_root *root, struct model *m,
		      unsigned int op)
{
	unsigned long index = random_index();
	struct model_entry *e;

	/* Aim most non-insert ops at present items, else they test little. */
	if (m->nr && rng() % 4)
		index = m->e[rng() % m->nr].index;

	switch (rng() % 10) {
	case 0: case 1: case 2:
		rand_insert(root, m, random_index(), op);
		break;
	case 3: case 4:
		rand_delete(root, m, index);
		break;
	case 5: case 6:
		rand_tag(root, m, index, rng() % RADIX_TREE_MAX_TAGS, 1);
		break;
	case 7:
		rand_tag(root, m, index, rng() % RADIX_TREE_MAX_TAGS, 0);
		break;
	case 8:
		rand_gang(root, m, random_index(),
			  (int)(rng() % (RADIX_TREE_MAX_TAGS + 1)) - 1);
		break;
	default:
		if (rng() % 2) {
			rand_range_tag(root, m);
			break;
		}
		e = model_get(m, index);
		cr_assert_eq(radix_tree_lookup(root, index),
			     e ? e->item : NULL, "lookup %lu", index);
		break;
	}
}

Test(radix_tree, randomised_against_sorted_array)
{
	enum { NR_OPS = 20000 };
	RADIX_TREE(root);
	struct model m = { .e = calloc(NR_OPS, sizeof(struct model_entry)) };
	unsigned int op;

	cr_assert_not_null(m.e);
	rng_state = 0x2545f4914f6cdd1dULL;
	for (op = 0; op < NR_OPS; op++) {
		rand_step(&root, &m, op);
		if (op % 64 == 0)
			verify_ok(&root);
		if (op % 2000 == 0)
			rand_check_all(&root, &m);
	}
	rand_check_all(&root, &m);
	cr_assert_gt(m.nr, 100, "the run should build a sizeable tree");

	/* Drain it: every node must go and the root must end up empty. */
	while (m.nr)
		rand_delete(&root, &m, m.e[rng() % m.nr].index);
	cr_assert_null(root.rnode);
	cr_assert_eq(root.height, 0);
	cr_assert_eq(root.tags, 0);
	free(m.e);
}
