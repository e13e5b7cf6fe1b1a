// SPDX-License-Identifier: MIT
/*
 * engine/lib/radix-tree.c - the per-mapping page index (mirrors the 3.2-era
 * lib/radix-tree.c).
 *
 * Why a radix tree and not a balanced tree: page indices of a file are
 * dense and clustered, so 64-way nodes keep the tree three or four levels
 * deep for any realistic file, and per-node tag bitmaps turn "next dirty
 * page at or after i" into a handful of ctz instructions per level.  That
 * is what keeps write_cache_pages() and sync cheap on a large, mostly clean
 * mapping, and the writeback policies measured here assume that cost.
 *
 * Shape.  A tree of height h covers indices 0 .. 64^h - 1 (capped at
 * ULONG_MAX); the root grows a new top node (the old top becomes slot 0)
 * when a larger index is inserted, and shrinks again when the top node is
 * left holding only slot 0.  Height 0 stores the single item at index 0
 * directly in the root.  A tag bit in a node says its slot holds a tagged
 * item (leaf level) or a subtree with at least one tagged item (above), and
 * the root keeps one bit per tag for the whole tree.
 *
 * The caller holds the mapping's tree lock for every call but one:
 * radix_tree_lookup_seq() reads without it, under the mapping's seqcount,
 * where the kernel reads under RCU.  For that, the writers here store
 * slots, the top pointer and the height with atomic stores, and nodes are
 * type-stable: a node taken out of a tree goes to a free list that only
 * ever hands it to another tree, never back to the allocator, so a reader
 * holding a stale node pointer reads a node (possibly reused), never freed
 * memory; the seqcount then tells it to retry.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "kernel/seqlock.h"
#include "kernel/spinlock.h"
#include "lib/radix-tree.h"
#include "lib/slab.h"

_Static_assert(RADIX_TREE_MAP_SIZE == 64,
	       "tag bitmaps are one 64-bit word per tag");

struct radix_tree_node {
	unsigned int count;	/* non-NULL slots; 0 means free it */
	void *slots[RADIX_TREE_MAP_SIZE];
	unsigned long long tags[RADIX_TREE_MAX_TAGS];
};

/* One step of a root-to-leaf walk: the node and the slot taken in it. */
struct radix_tree_path {
	struct radix_tree_node *node;
	unsigned int offset;
};

/* Highest index a tree of @height levels can hold. */
static unsigned long radix_tree_maxindex(unsigned int height)
{
	unsigned int bits = height * RADIX_TREE_MAP_SHIFT;

	if (bits >= RADIX_TREE_INDEX_BITS)
		return ~0UL;
	return (1UL << bits) - 1;
}

/* Clear the low @shift bits of @index, where @shift may reach the width. */
static unsigned long align_down(unsigned long index, unsigned int shift)
{
	if (shift >= RADIX_TREE_INDEX_BITS)
		return 0;
	return index >> shift << shift;
}

static unsigned int slot_offset(unsigned long index, unsigned int shift)
{
	return (index >> shift) & RADIX_TREE_MAP_MASK;
}

static void node_tag_set(struct radix_tree_node *node, unsigned int tag,
			 unsigned int offset)
{
	node->tags[tag] |= 1ULL << offset;
}

static void node_tag_clear(struct radix_tree_node *node, unsigned int tag,
			   unsigned int offset)
{
	node->tags[tag] &= ~(1ULL << offset);
}

static bool node_tag_get(const struct radix_tree_node *node, unsigned int tag,
			 unsigned int offset)
{
	return node->tags[tag] >> offset & 1;
}

static void root_tag_set(struct radix_tree_root *root, unsigned int tag)
{
	root->tags |= 1U << tag;
}

static void root_tag_clear(struct radix_tree_root *root, unsigned int tag)
{
	root->tags &= ~(1U << tag);
}

static bool root_tag_get(const struct radix_tree_root *root, unsigned int tag)
{
	return root->tags >> tag & 1;
}

static bool tag_valid(unsigned int tag)
{
	return tag < RADIX_TREE_MAX_TAGS;
}

/* Slot stores a lockless reader may see: atomic, so the race is defined. */
static void slot_set(void **slot, void *item)
{
	__atomic_store_n(slot, item, __ATOMIC_RELAXED);
}

static void *slot_get(void *const *slot)
{
	return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

static void root_set(struct radix_tree_root *root, void *rnode,
		     unsigned int height)
{
	__atomic_store_n(&root->height, height, __ATOMIC_RELAXED);
	slot_set(&root->rnode, rnode);
}

/*
 * The type-stable node cache (the kernel's radix_tree_node_cachep is
 * SLAB_DESTROY_BY_RCU-like in effect): freed nodes are linked through
 * slots[0] and reused by any tree; the memory is never returned, so it is
 * bounded by the most nodes ever in use at once (at most about one per
 * cached page for the sparsest files, usually one per 64).
 */
static spinlock_t node_cache_lock = __SPIN_LOCK_UNLOCKED;
static struct radix_tree_node *node_cache;

static struct radix_tree_node *radix_tree_node_alloc(void)
{
	struct radix_tree_node *node;
	unsigned int i, tag;

	spin_lock(&node_cache_lock);
	node = node_cache;
	if (node)
		node_cache = slot_get(&node->slots[0]);
	spin_unlock(&node_cache_lock);
	if (!node)
		return kzalloc(sizeof(struct radix_tree_node));
	/* a stale reader may still look at it: zero the slots atomically */
	for (i = 0; i < RADIX_TREE_MAP_SIZE; i++)
		slot_set(&node->slots[i], NULL);
	node->count = 0;
	for (tag = 0; tag < RADIX_TREE_MAX_TAGS; tag++)
		node->tags[tag] = 0;
	return node;
}

static void radix_tree_node_free(struct radix_tree_node *node)
{
	spin_lock(&node_cache_lock);
	slot_set(&node->slots[0], node_cache);
	node_cache = node;
	spin_unlock(&node_cache_lock);
}

/*
 * Grow the tree until @index fits.  Each new top node takes the old top as
 * slot 0 and inherits the root's tag bits for it, because everything the
 * old tree held now lives under that one slot.
 */
static int radix_tree_extend(struct radix_tree_root *root, unsigned long index)
{
	unsigned int height = root->height + 1;
	unsigned int tag;

	while (index > radix_tree_maxindex(height))
		height++;

	if (!root->rnode) {
		/* Nothing to push down; insert builds the path itself. */
		__atomic_store_n(&root->height, height, __ATOMIC_RELAXED);
		return 0;
	}

	while (root->height < height) {
		struct radix_tree_node *node = radix_tree_node_alloc();

		if (!node)
			return -ENOMEM;
		slot_set(&node->slots[0], root->rnode);
		node->count = 1;
		for (tag = 0; tag < RADIX_TREE_MAX_TAGS; tag++)
			if (root_tag_get(root, tag))
				node_tag_set(node, tag, 0);
		root_set(root, node, root->height + 1);
	}
	return 0;
}

/*
 * While the top node is left with slot 0 as its only child, that child can
 * be the top itself: the tree then covers a smaller range with one level
 * less to walk.  The root's tag bits stay right because the dropped node's
 * only tag bits were those of slot 0.
 */
static void radix_tree_shrink(struct radix_tree_root *root)
{
	while (root->height > 0 && root->rnode) {
		struct radix_tree_node *node = root->rnode;

		if (node->count != 1 || !node->slots[0])
			break;
		root_set(root, node->slots[0], root->height - 1);
		radix_tree_node_free(node);
	}
}

/*
 * Undo what a failed insert can undo cheaply: growth that got no item.
 * Empty nodes it created lower down stay; they are valid and get reused.
 */
static int radix_tree_insert_failed(struct radix_tree_root *root, int err)
{
	if (!root->rnode)
		__atomic_store_n(&root->height, 0, __ATOMIC_RELAXED);
	radix_tree_shrink(root);
	return err;
}

/**
 * radix_tree_insert - add @item at @index
 * @root: the tree
 * @index: page index
 * @item: non-NULL item; it starts with no tags
 *
 * Return: 0, -EEXIST if @index is occupied, -ENOMEM, or -EINVAL for a NULL
 * @item (NULL is how an empty slot is spelt).
 */
int radix_tree_insert(struct radix_tree_root *root, unsigned long index,
		      void *item)
{
	struct radix_tree_node *parent = NULL;
	void **slot = &root->rnode;
	unsigned int height, shift;
	int err;

	if (!item)
		return -EINVAL;
	if (index > radix_tree_maxindex(root->height)) {
		err = radix_tree_extend(root, index);
		if (err)
			return radix_tree_insert_failed(root, err);
	}

	height = root->height;
	shift = height * RADIX_TREE_MAP_SHIFT;
	while (height--) {
		if (!*slot) {
			struct radix_tree_node *node = radix_tree_node_alloc();

			if (!node)
				return radix_tree_insert_failed(root, -ENOMEM);
			slot_set(slot, node);
			if (parent)
				parent->count++;
		}
		parent = *slot;
		shift -= RADIX_TREE_MAP_SHIFT;
		slot = &parent->slots[slot_offset(index, shift)];
	}

	if (*slot)
		return -EEXIST;
	slot_set(slot, item);
	if (parent)
		parent->count++;
	return 0;
}

/**
 * radix_tree_lookup_slot - find the slot holding the item at @index
 *
 * Return: the slot, for radix_tree_replace_slot(), or NULL if @index is
 * empty.
 */
void **radix_tree_lookup_slot(struct radix_tree_root *root, unsigned long index)
{
	struct radix_tree_node *node = root->rnode;
	unsigned int shift;
	void **slot;

	if (!node)
		return NULL;
	if (root->height == 0)
		return index == 0 ? &root->rnode : NULL;
	if (index > radix_tree_maxindex(root->height))
		return NULL;

	shift = root->height * RADIX_TREE_MAP_SHIFT;
	for (;;) {
		shift -= RADIX_TREE_MAP_SHIFT;
		slot = &node->slots[slot_offset(index, shift)];
		if (!*slot)
			return NULL;
		if (shift == 0)
			return slot;
		node = *slot;
	}
}

/**
 * radix_tree_lookup - the item at @index, or NULL
 */
void *radix_tree_lookup(const struct radix_tree_root *root, unsigned long index)
{
	/* The walk only writes through the slot it returns, which we don't. */
	void **slot = radix_tree_lookup_slot((struct radix_tree_root *)root,
					     index);

	return slot ? *slot : NULL;
}

/**
 * radix_tree_lookup_seq - the item at @index, read without the tree lock
 * @seq: the writers' seqcount, @start what read_seqcount_begin() gave
 *
 * The kernel walks under RCU; here the walk checks the seqcount before it
 * follows each node pointer, so that it never takes an item for a node,
 * and after it read the leaf slot, so that it never takes a node for an
 * item: a node reused higher up in a tree holds node pointers in its
 * slots, and a caller that took one for a page would count a reference in
 * the node's memory (a writer may grow or shrink the tree under it).
 * Return: the item, NULL, or RADIX_TREE_RETRY if a writer ran.  An item or
 * NULL is only as good as the caller's own read_seqcount_retry() after it
 * has used it.
 */
void *radix_tree_lookup_seq(const struct radix_tree_root *root,
			    unsigned long index, const seqcount_t *seq,
			    unsigned int start)
{
	unsigned int height = __atomic_load_n(&root->height, __ATOMIC_RELAXED);
	void *p = slot_get(&root->rnode);
	unsigned int shift;

	if (read_seqcount_retry(seq, start))
		return RADIX_TREE_RETRY;
	if (!p || height == 0)
		return index == 0 ? p : NULL;
	if (index > radix_tree_maxindex(height))
		return NULL;
	shift = height * RADIX_TREE_MAP_SHIFT;
	for (;;) {
		const struct radix_tree_node *node = p;

		shift -= RADIX_TREE_MAP_SHIFT;
		p = slot_get(&node->slots[slot_offset(index, shift)]);
		if (read_seqcount_retry(seq, start))
			return RADIX_TREE_RETRY;
		if (!p || shift == 0)
			return p;
	}
}

/*
 * Record the walk from the top node to the leaf slot of @index in @path.
 * Returns the number of levels walked (0 for a height-0 tree holding
 * @index), or -1 when @index holds no item.
 */
static int radix_tree_walk(const struct radix_tree_root *root,
			   unsigned long index,
			   struct radix_tree_path path[RADIX_TREE_MAX_PATH])
{
	struct radix_tree_node *node = root->rnode;
	unsigned int shift, offset;
	int level = 0;

	if (!node)
		return -1;
	if (root->height == 0)
		return index == 0 ? 0 : -1;
	if (index > radix_tree_maxindex(root->height))
		return -1;

	shift = root->height * RADIX_TREE_MAP_SHIFT;
	for (;;) {
		shift -= RADIX_TREE_MAP_SHIFT;
		offset = slot_offset(index, shift);
		path[level].node = node;
		path[level].offset = offset;
		level++;
		if (!node->slots[offset])
			return -1;
		if (shift == 0)
			return level;
		node = node->slots[offset];
	}
}

/* Set @tag along a recorded walk; stop where an ancestor already has it. */
static void path_tag_set(struct radix_tree_root *root,
			 const struct radix_tree_path *path, int levels,
			 unsigned int tag)
{
	int i;

	for (i = levels - 1; i >= 0; i--) {
		if (node_tag_get(path[i].node, tag, path[i].offset))
			break;
		node_tag_set(path[i].node, tag, path[i].offset);
	}
	root_tag_set(root, tag);
}

/*
 * Clear @tag at the leaf of a recorded walk, then upwards for as long as
 * the node just cleared has no other slot carrying it.
 */
static void path_tag_clear(struct radix_tree_root *root,
			   const struct radix_tree_path *path, int levels,
			   unsigned int tag)
{
	int i;

	for (i = levels - 1; i >= 0; i--) {
		node_tag_clear(path[i].node, tag, path[i].offset);
		if (path[i].node->tags[tag])
			return;
	}
	root_tag_clear(root, tag);
}

/* radix_tree_walk() for a tag operation: -1 for an invalid tag too. */
static int radix_tree_tag_walk(const struct radix_tree_root *root,
			       unsigned long index, unsigned int tag,
			       struct radix_tree_path path[RADIX_TREE_MAX_PATH])
{
	return tag_valid(tag) ? radix_tree_walk(root, index, path) : -1;
}

/**
 * radix_tree_tag_set - set @tag on the item at @index
 *
 * Return: the item, or NULL (and nothing tagged) if @index is empty.
 */
void *radix_tree_tag_set(struct radix_tree_root *root, unsigned long index,
			 unsigned int tag)
{
	struct radix_tree_path path[RADIX_TREE_MAX_PATH];
	int levels;

	levels = radix_tree_tag_walk(root, index, tag, path);
	if (levels < 0)
		return NULL;
	path_tag_set(root, path, levels, tag);
	return levels ? path[levels - 1].node->slots[path[levels - 1].offset] :
			root->rnode;
}

/**
 * radix_tree_tag_clear - clear @tag on the item at @index
 *
 * Ancestors lose the tag once no other item below them carries it, and
 * the root too when the last tagged item goes, so radix_tree_tagged()
 * stays exact.
 *
 * Return: the item, or NULL if @index is empty.
 */
void *radix_tree_tag_clear(struct radix_tree_root *root, unsigned long index,
			   unsigned int tag)
{
	struct radix_tree_path path[RADIX_TREE_MAX_PATH];
	const struct radix_tree_path *leaf;
	int levels;

	levels = radix_tree_tag_walk(root, index, tag, path);
	if (levels < 0)
		return NULL;
	if (levels == 0) {
		root_tag_clear(root, tag);
		return root->rnode;
	}
	leaf = &path[levels - 1];
	/* An untagged leaf slot has nothing to withdraw from its ancestors. */
	if (node_tag_get(leaf->node, tag, leaf->offset))
		path_tag_clear(root, path, levels, tag);
	return leaf->node->slots[leaf->offset];
}

/**
 * radix_tree_tag_get - does the item at @index carry @tag?
 *
 * Return: 1 if it does, 0 if not or if @index is empty.
 */
int radix_tree_tag_get(const struct radix_tree_root *root, unsigned long index,
		       unsigned int tag)
{
	struct radix_tree_node *node = root->rnode;
	unsigned int shift, offset;

	if (!tag_valid(tag) || !node || !root_tag_get(root, tag))
		return 0;
	if (root->height == 0)
		return index == 0;
	if (index > radix_tree_maxindex(root->height))
		return 0;

	/* Tag bits imply occupied slots, so a clear bit ends the search. */
	shift = root->height * RADIX_TREE_MAP_SHIFT;
	for (;;) {
		shift -= RADIX_TREE_MAP_SHIFT;
		offset = slot_offset(index, shift);
		if (!node_tag_get(node, tag, offset))
			return 0;
		if (shift == 0)
			return 1;
		node = node->slots[offset];
	}
}

/**
 * radix_tree_tagged - does any item in the tree carry @tag?
 */
int radix_tree_tagged(const struct radix_tree_root *root, unsigned int tag)
{
	return tag_valid(tag) && root_tag_get(root, tag);
}

/**
 * radix_tree_delete - remove the item at @index
 *
 * Clears its tags, frees nodes left empty and lowers the tree when it can.
 *
 * Return: the item removed, or NULL if @index was empty.
 */
void *radix_tree_delete(struct radix_tree_root *root, unsigned long index)
{
	struct radix_tree_path path[RADIX_TREE_MAX_PATH];
	const struct radix_tree_path *leaf;
	unsigned int tag;
	void *item;
	int levels, i;

	levels = radix_tree_walk(root, index, path);
	if (levels < 0)
		return NULL;
	if (levels == 0) {
		item = root->rnode;
		radix_tree_init_root(root);
		return item;
	}

	leaf = &path[levels - 1];
	item = leaf->node->slots[leaf->offset];
	for (tag = 0; tag < RADIX_TREE_MAX_TAGS; tag++)
		if (node_tag_get(leaf->node, tag, leaf->offset))
			path_tag_clear(root, path, levels, tag);

	for (i = levels - 1; i >= 0; i--) {
		struct radix_tree_node *node = path[i].node;

		slot_set(&node->slots[path[i].offset], NULL);
		if (--node->count) {
			if (i == 0)
				radix_tree_shrink(root);
			return item;
		}
		radix_tree_node_free(node);
	}
	/* The top node went too: the tree is empty. */
	radix_tree_init_root(root);
	return item;
}

static void radix_tree_free_node(struct radix_tree_node *node,
				 unsigned int height)
{
	unsigned int i;

	if (height > 1)
		for (i = 0; i < RADIX_TREE_MAP_SIZE; i++)
			if (node->slots[i])
				radix_tree_free_node(node->slots[i],
						     height - 1);
	radix_tree_node_free(node);
}

/**
 * radix_tree_destroy - free every node, leaving an empty tree
 *
 * The items are the caller's and are not touched; collect them first
 * (radix_tree_gang_lookup) if they need freeing too.
 */
void radix_tree_destroy(struct radix_tree_root *root)
{
	if (root->height > 0 && root->rnode)
		radix_tree_free_node(root->rnode, root->height);
	radix_tree_init_root(root);
}

/*
 * First slot at or after @offset in @node that holds an item or subtree
 * (@tag < 0) or carries @tag.  Returns RADIX_TREE_MAP_SIZE if none.
 */
static unsigned int next_slot(const struct radix_tree_node *node,
			      unsigned int offset, int tag)
{
	unsigned long long bits;

	if (offset >= RADIX_TREE_MAP_SIZE)
		return RADIX_TREE_MAP_SIZE;
	if (tag >= 0) {
		bits = node->tags[tag] & (~0ULL << offset);
		return bits ? (unsigned int)__builtin_ctzll(bits) :
			      RADIX_TREE_MAP_SIZE;
	}
	while (offset < RADIX_TREE_MAP_SIZE && !node->slots[offset])
		offset++;
	return offset;
}

/*
 * Find the leaf node holding the first item at or after *@indexp (carrying
 * @tag unless @tag < 0) and move *@indexp onto that item.  @path, if not
 * NULL, receives the walk to it.  Returns NULL when there is none.
 *
 * A node with nothing suitable past the wanted offset sends the search to
 * the start of the next node's range, restarting from the top; with tags
 * that never happens below the top, since a tag bit promises a hit.
 */
static struct radix_tree_node *
find_next_leaf(const struct radix_tree_root *root, unsigned long *indexp,
	       int tag, struct radix_tree_path *path)
{
	unsigned long index = *indexp;
	struct radix_tree_node *node;
	unsigned int shift, span, offset, found, level;

restart:
	if (index > radix_tree_maxindex(root->height))
		return NULL;
	node = root->rnode;
	shift = root->height * RADIX_TREE_MAP_SHIFT;
	level = 0;
	for (;;) {
		span = shift;	/* log2 of the indices this node covers */
		shift -= RADIX_TREE_MAP_SHIFT;
		offset = slot_offset(index, shift);
		found = next_slot(node, offset, tag);
		if (found == RADIX_TREE_MAP_SIZE) {
			/* Nothing left here: jump past this node's range. */
			if (span >= RADIX_TREE_INDEX_BITS)
				return NULL;
			index = align_down(index, span) + (1UL << span);
			if (!index)
				return NULL;
			goto restart;
		}
		if (found != offset)
			index = align_down(index, span) |
				(unsigned long)found << shift;
		if (path) {
			path[level].node = node;
			path[level].offset = found;
		}
		level++;
		if (shift == 0)
			break;
		node = node->slots[found];
	}
	*indexp = index;
	return node;
}

/*
 * Copy the items of @leaf from the offset of @index onwards (those with @tag
 * unless @tag < 0) into @results/@indices, at most @max of them.
 */
static unsigned int collect_leaf(const struct radix_tree_node *leaf,
				 unsigned long index, int tag, void **results,
				 unsigned long *indices, unsigned int max)
{
	unsigned long base = align_down(index, RADIX_TREE_MAP_SHIFT);
	unsigned int offset = slot_offset(index, 0);
	unsigned int n = 0;

	while (n < max) {
		offset = next_slot(leaf, offset, tag);
		if (offset == RADIX_TREE_MAP_SIZE)
			break;
		results[n] = leaf->slots[offset];
		if (indices)
			indices[n] = base | offset;
		n++;
		offset++;
	}
	return n;
}

static unsigned int gang_lookup(const struct radix_tree_root *root,
				void **results, unsigned long *indices,
				unsigned long index, unsigned int max_items,
				int tag)
{
	const struct radix_tree_node *leaf;
	unsigned int n = 0;

	if (!root->rnode || !max_items)
		return 0;
	if (tag >= 0 && !root_tag_get(root, tag))
		return 0;
	if (root->height == 0) {
		if (index != 0)
			return 0;
		results[0] = root->rnode;
		if (indices)
			indices[0] = 0;
		return 1;
	}

	while (n < max_items) {
		leaf = find_next_leaf(root, &index, tag, NULL);
		if (!leaf)
			break;
		n += collect_leaf(leaf, index, tag, results + n,
				  indices ? indices + n : NULL, max_items - n);
		index = (index | RADIX_TREE_MAP_MASK) + 1;
		if (!index)
			break;	/* the leaf ending at ULONG_MAX was the last */
	}
	return n;
}

/**
 * radix_tree_gang_lookup - up to @max_items items from @first_index on
 * @results: where the items go, in ascending index order
 *
 * Return: how many were found.
 */
unsigned int radix_tree_gang_lookup(const struct radix_tree_root *root,
				    void **results, unsigned long first_index,
				    unsigned int max_items)
{
	return gang_lookup(root, results, NULL, first_index, max_items, -1);
}

/**
 * radix_tree_gang_lookup_index - radix_tree_gang_lookup() that also stores
 * each item's index in @indices
 */
unsigned int radix_tree_gang_lookup_index(const struct radix_tree_root *root,
					  void **results,
					  unsigned long *indices,
					  unsigned long first_index,
					  unsigned int max_items)
{
	return gang_lookup(root, results, indices, first_index, max_items, -1);
}

/**
 * radix_tree_gang_lookup_tag - up to @max_items items carrying @tag, from
 * @first_index on, in ascending index order
 *
 * Untagged subtrees are skipped whole through the nodes' tag bitmaps.
 *
 * Return: how many were found.
 */
unsigned int radix_tree_gang_lookup_tag(const struct radix_tree_root *root,
					void **results,
					unsigned long first_index,
					unsigned int max_items,
					unsigned int tag)
{
	if (!tag_valid(tag))
		return 0;
	return gang_lookup(root, results, NULL, first_index, max_items,
			   (int)tag);
}

/**
 * radix_tree_gang_lookup_tag_index - radix_tree_gang_lookup_tag() that also
 * stores each item's index in @indices
 */
unsigned int
radix_tree_gang_lookup_tag_index(const struct radix_tree_root *root,
				 void **results, unsigned long *indices,
				 unsigned long first_index,
				 unsigned int max_items, unsigned int tag)
{
	if (!tag_valid(tag))
		return 0;
	return gang_lookup(root, results, indices, first_index, max_items,
			   (int)tag);
}

/*
 * Set @settag on the @iftag items of @leaf from the offset of @index up
 * to @last, at most @max of them.  Returns how many, and leaves *@indexp
 * on the last one tagged.
 */
static unsigned long tag_leaf(struct radix_tree_node *leaf,
			      unsigned long *indexp, unsigned long last,
			      unsigned long max, unsigned int iftag,
			      unsigned int settag)
{
	unsigned long base = align_down(*indexp, RADIX_TREE_MAP_SHIFT);
	unsigned int offset = slot_offset(*indexp, 0);
	unsigned long n = 0;

	while (n < max) {
		offset = next_slot(leaf, offset, (int)iftag);
		if (offset == RADIX_TREE_MAP_SIZE || (base | offset) > last)
			break;
		node_tag_set(leaf, settag, offset);
		*indexp = base | offset;
		n++;
		offset++;
	}
	return n;
}

/**
 * radix_tree_range_tag_if_tagged - set @settag on items carrying @iftag
 * @root: the tree
 * @first_indexp: in: where to start; out: where to resume
 * @last_index: last index of the range (inclusive)
 * @nr_to_tag: most items to tag in this call
 * @iftag: tag an item must carry to be tagged
 * @settag: tag to set
 *
 * tag_pages_for_writeback() marks the pages that are dirty when sync starts
 * as TOWRITE, in batches so the tree lock can be dropped between them, and
 * then writes only TOWRITE pages: pages dirtied meanwhile cannot make sync
 * chase its own tail.  Items already carrying @settag count too.
 *
 * *@first_indexp is left just past the last item tagged when @nr_to_tag
 * ran out, or at @last_index + 1 when the range was finished; both wrap to
 * 0 past ULONG_MAX, which is how the caller's loop knows to stop.
 *
 * Return: the number of items tagged.
 */
unsigned long radix_tree_range_tag_if_tagged(struct radix_tree_root *root,
					     unsigned long *first_indexp,
					     unsigned long last_index,
					     unsigned long nr_to_tag,
					     unsigned int iftag,
					     unsigned int settag)
{
	struct radix_tree_path path[RADIX_TREE_MAX_PATH];
	struct radix_tree_node *leaf;
	unsigned long index = *first_indexp;
	unsigned long tagged = 0, n;

	if (!tag_valid(iftag) || !tag_valid(settag) || !nr_to_tag ||
	    index > last_index)
		return 0;
	if (!root->rnode || !root_tag_get(root, iftag))
		goto done;
	if (root->height == 0) {
		if (index == 0) {
			root_tag_set(root, settag);
			tagged = 1;
		}
		goto done;
	}

	while (tagged < nr_to_tag) {
		leaf = find_next_leaf(root, &index, (int)iftag, path);
		if (!leaf || index > last_index)
			break;
		n = tag_leaf(leaf, &index, last_index, nr_to_tag - tagged,
			     iftag, settag);
		/* One propagation covers every item tagged in this leaf. */
		path_tag_set(root, path, root->height - 1, settag);
		tagged += n;
		if (tagged == nr_to_tag) {
			*first_indexp = index + 1;
			return tagged;
		}
		index = (index | RADIX_TREE_MAP_MASK) + 1;
		if (!index || index > last_index)
			break;
	}
done:
	*first_indexp = last_index + 1;
	return tagged;
}

/* Step from @index by @step (1 or -1) to the first empty index, at most
 * @max_scan times; stop where the index wraps (0 after ULONG_MAX, or
 * ULONG_MAX below 0). */
static unsigned long radix_tree_hole(const struct radix_tree_root *root,
				     unsigned long index,
				     unsigned long max_scan, int step)
{
	unsigned long wrap = step > 0 ? 0 : ~0UL;
	unsigned long i;

	for (i = 0; i < max_scan; i++) {
		if (!radix_tree_lookup(root, index))
			break;
		index += (unsigned long)(long)step;
		if (index == wrap)
			break;
	}
	return index;
}

/**
 * radix_tree_next_hole - first empty index at or after @index
 * @max_scan: how many indices to look at before giving up
 *
 * Return: the empty index; or, when none was found in @max_scan, @index +
 * @max_scan; or 0 when the search ran past ULONG_MAX.
 */
unsigned long radix_tree_next_hole(const struct radix_tree_root *root,
				   unsigned long index, unsigned long max_scan)
{
	return radix_tree_hole(root, index, max_scan, 1);
}

/**
 * radix_tree_prev_hole - last empty index at or before @index
 * @max_scan: how many indices to look at before giving up
 *
 * Return: the empty index; or, when none was found in @max_scan, @index -
 * @max_scan; or ULONG_MAX when the search ran below 0.
 */
unsigned long radix_tree_prev_hole(const struct radix_tree_root *root,
				   unsigned long index, unsigned long max_scan)
{
	return radix_tree_hole(root, index, max_scan, -1);
}

/*
 * Check one node and its subtree: counts match the occupied slots, tag
 * bits sit only on occupied slots, and an interior tag bit is set exactly
 * when the child has that tag somewhere.  Returns nodes seen or -EUCLEAN.
 */
static long verify_node(const struct radix_tree_node *node,
			unsigned int height)
{
	unsigned long long present = 0;
	unsigned int i, tag, count = 0;
	long nodes = 1, sub;

	for (i = 0; i < RADIX_TREE_MAP_SIZE; i++) {
		const struct radix_tree_node *child = node->slots[i];

		if (!child)
			continue;
		count++;
		present |= 1ULL << i;
		if (height == 1)
			continue;
		sub = verify_node(child, height - 1);
		if (sub < 0)
			return sub;
		nodes += sub;
		for (tag = 0; tag < RADIX_TREE_MAX_TAGS; tag++)
			if (node_tag_get(node, tag, i) != !!child->tags[tag])
				return -EUCLEAN;
	}
	if (count != node->count)
		return -EUCLEAN;
	for (tag = 0; tag < RADIX_TREE_MAX_TAGS; tag++)
		if (node->tags[tag] & ~present)
			return -EUCLEAN;
	return nodes;
}

/**
 * radix_tree_verify - check the tree's invariants (for tests and debugging)
 *
 * Beyond verify_node(): the root's tag bits mirror the top node's, an empty
 * tree has no tags, and the top node is never one that radix_tree_shrink()
 * would have removed.
 *
 * Return: the number of nodes, or -EUCLEAN if something is inconsistent.
 */
long radix_tree_verify(const struct radix_tree_root *root)
{
	const struct radix_tree_node *node = root->rnode;
	unsigned int tag;
	long nodes;

	if (!node)
		return root->tags ? -EUCLEAN : 0;
	if (root->height == 0)
		return 0;
	if (node->count == 1 && node->slots[0])
		return -EUCLEAN;
	nodes = verify_node(node, root->height);
	if (nodes < 0)
		return nodes;
	for (tag = 0; tag < RADIX_TREE_MAX_TAGS; tag++)
		if (root_tag_get(root, tag) != !!node->tags[tag])
			return -EUCLEAN;
	return nodes;
}
