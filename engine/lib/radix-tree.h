/* SPDX-License-Identifier: MIT */
/*
 * engine/lib/radix-tree.h - the per-mapping page index (mirrors the 3.2-era
 * include/linux/radix-tree.h).
 *
 * Each mapping keeps its pages in a radix tree keyed by page index, with
 * 64-slot nodes and three tag bitmaps per node.  The page cache uses the
 * tags to find dirty, under-writeback and to-write pages without visiting
 * clean ones: a tag bit in an interior node means "something below carries
 * this tag", so write_cache_pages() and sync skip clean subtrees in one
 * step.  Keeping the kernel's structure (rather than a generic ordered map)
 * means tag_pages_for_writeback() and the tagged lookups behave, and cost,
 * what they cost in the kernel the policies are copied from.
 *
 * Locking is the caller's: every function here expects the mapping's tree
 * lock to be held, but radix_tree_lookup_seq(), which reads under the
 * mapping's seqcount instead (where the kernel reads under RCU).
 */
#ifndef UF_RADIX_TREE_H
#define UF_RADIX_TREE_H

#include <limits.h>
#include <stddef.h>

#include "kernel/seqlock.h"

#define RADIX_TREE_MAP_SHIFT	6
#define RADIX_TREE_MAP_SIZE	(1UL << RADIX_TREE_MAP_SHIFT)
#define RADIX_TREE_MAP_MASK	(RADIX_TREE_MAP_SIZE - 1)
#define RADIX_TREE_MAX_TAGS	3

/* Enough levels of 6 bits each to cover every bit of an unsigned long. */
#define RADIX_TREE_INDEX_BITS	(sizeof(unsigned long) * CHAR_BIT)
#define RADIX_TREE_MAX_PATH	\
	((RADIX_TREE_INDEX_BITS + RADIX_TREE_MAP_SHIFT - 1) / \
	 RADIX_TREE_MAP_SHIFT)

/* The page cache's tags (include/linux/fs.h). */
#define PAGECACHE_TAG_DIRTY	0
#define PAGECACHE_TAG_WRITEBACK	1
#define PAGECACHE_TAG_TOWRITE	2

/*
 * @height: levels of nodes below the root; 0 means @rnode is either NULL or
 *	the item at index 0 itself (a one-page file costs no node).
 * @tags: bit t set when some item in the tree carries tag t, so
 *	radix_tree_tagged() is one load.
 * @rnode: the top node, or the item when @height is 0.
 */
struct radix_tree_root {
	unsigned int height;
	unsigned int tags;
	void *rnode;
};

#define RADIX_TREE_INIT		{ .height = 0, .tags = 0, .rnode = NULL }
#define RADIX_TREE(name)	struct radix_tree_root name = RADIX_TREE_INIT

static inline void radix_tree_init_root(struct radix_tree_root *root)
{
	__atomic_store_n(&root->height, 0, __ATOMIC_RELAXED);
	root->tags = 0;
	__atomic_store_n(&root->rnode, NULL, __ATOMIC_RELAXED);
}

/* radix_tree_lookup_seq(): a writer ran, look again (never an item: items
 * are aligned pointers). */
#define RADIX_TREE_RETRY	((void *)1)

/* The kernel's form takes a gfp mask too; accept and ignore it. */
#define INIT_RADIX_TREE(root, ...)	radix_tree_init_root(root)

/* Slots returned by radix_tree_lookup_slot() are plain pointers. */
static inline void *radix_tree_deref_slot(void **slot)
{
	return *slot;
}

/* Swap the item in an occupied slot in place; tags stay with the slot. */
static inline void radix_tree_replace_slot(void **slot, void *item)
{
	*slot = item;
}

int radix_tree_insert(struct radix_tree_root *root, unsigned long index,
		      void *item);
void *radix_tree_lookup(const struct radix_tree_root *root,
			unsigned long index);
void *radix_tree_lookup_seq(const struct radix_tree_root *root,
			    unsigned long index, const seqcount_t *seq,
			    unsigned int start);
void **radix_tree_lookup_slot(struct radix_tree_root *root,
			      unsigned long index);
void *radix_tree_delete(struct radix_tree_root *root, unsigned long index);
void radix_tree_destroy(struct radix_tree_root *root);

void *radix_tree_tag_set(struct radix_tree_root *root, unsigned long index,
			 unsigned int tag);
void *radix_tree_tag_clear(struct radix_tree_root *root, unsigned long index,
			   unsigned int tag);
int radix_tree_tag_get(const struct radix_tree_root *root,
		       unsigned long index, unsigned int tag);
int radix_tree_tagged(const struct radix_tree_root *root, unsigned int tag);

unsigned int radix_tree_gang_lookup(const struct radix_tree_root *root,
				    void **results, unsigned long first_index,
				    unsigned int max_items);
unsigned int radix_tree_gang_lookup_index(const struct radix_tree_root *root,
					  void **results,
					  unsigned long *indices,
					  unsigned long first_index,
					  unsigned int max_items);
unsigned int radix_tree_gang_lookup_tag(const struct radix_tree_root *root,
					void **results,
					unsigned long first_index,
					unsigned int max_items,
					unsigned int tag);
unsigned int
radix_tree_gang_lookup_tag_index(const struct radix_tree_root *root,
				 void **results, unsigned long *indices,
				 unsigned long first_index,
				 unsigned int max_items, unsigned int tag);

unsigned long radix_tree_range_tag_if_tagged(struct radix_tree_root *root,
					     unsigned long *first_indexp,
					     unsigned long last_index,
					     unsigned long nr_to_tag,
					     unsigned int iftag,
					     unsigned int settag);

unsigned long radix_tree_next_hole(const struct radix_tree_root *root,
				   unsigned long index,
				   unsigned long max_scan);
unsigned long radix_tree_prev_hole(const struct radix_tree_root *root,
				   unsigned long index,
				   unsigned long max_scan);

long radix_tree_verify(const struct radix_tree_root *root);

#endif /* UF_RADIX_TREE_H */
