// SPDX-License-Identifier: MIT
/*
 * tests/test_list.c - engine/lib/list.h, the kernel's list_head.
 *
 * The writeback ordering rules of seed 000 (§2.1: b_dirty newest at the
 * head, b_io consumed from its tail, requeued inodes served before newly
 * expired ones) are statements about where list_add, list_move and the
 * splices put entries, so each of those is pinned down here by comparing
 * whole lists against the expected order.
 */
#include <criterion/criterion.h>
#include <stddef.h>

#include "lib/list.h"

struct item {
	int id;
	struct list_head node;
};

static struct item items[8];

static void init_items(void)
{
	for (int i = 0; i < 8; i++) {
		items[i].id = i;
		INIT_LIST_HEAD(&items[i].node);
	}
}

/* Assert @head holds exactly the ids in @ids, head to tail, both ways. */
static void expect_order(struct list_head *head, const int *ids, int n)
{
	struct item *it;
	int i = 0;

	list_for_each_entry(it, head, node) {
		cr_assert_lt(i, n, "more than %d entries", n);
		cr_assert_eq(it->id, ids[i], "forward[%d] = %d, want %d", i,
			     it->id, ids[i]);
		i++;
	}
	cr_assert_eq(i, n, "%d entries, want %d", i, n);
	list_for_each_entry_reverse(it, head, node) {
		i--;
		cr_assert_eq(it->id, ids[i], "reverse[%d] = %d, want %d", i,
			     it->id, ids[i]);
	}
	cr_assert_eq(list_count(head), (size_t)n);
}

#define EXPECT(head, ...) do {						\
	const int __ids[] = { __VA_ARGS__ };				\
	expect_order(head, __ids, sizeof(__ids) / sizeof(__ids[0]));	\
} while (0)

/* list_add_tail() the items with these ids to @head, in this order. */
static void add_tail_ids(struct list_head *head, const int *ids, int n)
{
	for (int i = 0; i < n; i++)
		list_add_tail(&items[ids[i]].node, head);
}

#define ADD_TAIL(head, ...) do {					\
	const int __ids[] = { __VA_ARGS__ };				\
	add_tail_ids(head, __ids, sizeof(__ids) / sizeof(__ids[0]));	\
} while (0)

TestSuite(list, .init = init_items);

Test(list, empty_head)
{
	LIST_HEAD(head);
	struct list_head dyn;

	INIT_LIST_HEAD(&dyn);
	cr_assert(list_empty(&head));
	cr_assert(list_empty(&dyn));
	cr_assert(!list_is_singular(&head));
	cr_assert_eq(list_count(&head), 0);
	cr_assert_null(list_first_entry_or_null(&head, struct item, node));
}

Test(list, add_is_a_stack_add_tail_a_queue)
{
	LIST_HEAD(stack);
	LIST_HEAD(queue);

	for (int i = 0; i < 3; i++)
		list_add(&items[i].node, &stack);
	EXPECT(&stack, 2, 1, 0);
	cr_assert_eq(list_first_entry(&stack, struct item, node)->id, 2);
	cr_assert_eq(list_last_entry(&stack, struct item, node)->id, 0);

	for (int i = 3; i < 6; i++)
		list_add_tail(&items[i].node, &queue);
	EXPECT(&queue, 3, 4, 5);
	cr_assert(list_is_first(&items[3].node, &queue));
	cr_assert(list_is_last(&items[5].node, &queue));
}

Test(list, singular)
{
	LIST_HEAD(head);

	list_add(&items[0].node, &head);
	cr_assert(list_is_singular(&head));
	list_add(&items[1].node, &head);
	cr_assert(!list_is_singular(&head));
}

Test(list, del_and_del_init)
{
	LIST_HEAD(head);

	for (int i = 0; i < 4; i++)
		list_add_tail(&items[i].node, &head);
	list_del(&items[1].node);
	EXPECT(&head, 0, 2, 3);
	cr_assert_eq(items[1].node.next, LIST_POISON1);
	cr_assert_eq(items[1].node.prev, LIST_POISON2);

	list_del_init(&items[3].node);
	EXPECT(&head, 0, 2);
	cr_assert(list_empty(&items[3].node), "del_init leaves it empty");

	list_del_init(&items[0].node);
	list_del_init(&items[2].node);
	cr_assert(list_empty(&head));
}

/* redirty_tail: list_move to the head of b_dirty; requeue_io: b_more_io. */
Test(list, move_and_move_tail)
{
	LIST_HEAD(a);
	LIST_HEAD(b);

	for (int i = 0; i < 4; i++)
		list_add_tail(&items[i].node, &a);
	list_move(&items[2].node, &b);
	list_move(&items[0].node, &b);
	EXPECT(&a, 1, 3);
	EXPECT(&b, 0, 2);

	list_move_tail(&items[1].node, &b);
	EXPECT(&a, 3);
	EXPECT(&b, 0, 2, 1);

	/* within one list: to the head, and to the tail */
	list_move(&items[1].node, &b);
	EXPECT(&b, 1, 0, 2);
	list_move_tail(&items[1].node, &b);
	EXPECT(&b, 0, 2, 1);
}

/*
 * queue_io: b_more_io spliced into b_io, then the expired b_dirty inodes;
 * b_io is consumed from its tail.  The splices must keep the spliced
 * list's order and put it at the right end.
 */
Test(list, splice_init_order)
{
	LIST_HEAD(dst);
	LIST_HEAD(src);

	ADD_TAIL(&dst, 0, 1);
	ADD_TAIL(&src, 2, 3);

	list_splice_init(&src, &dst);
	EXPECT(&dst, 2, 3, 0, 1);
	cr_assert(list_empty(&src));

	ADD_TAIL(&src, 4, 5);
	list_splice_tail_init(&src, &dst);
	EXPECT(&dst, 2, 3, 0, 1, 4, 5);
	cr_assert(list_empty(&src));

	/* splicing an empty list changes nothing */
	list_splice_init(&src, &dst);
	list_splice_tail_init(&src, &dst);
	EXPECT(&dst, 2, 3, 0, 1, 4, 5);
}

Test(list, splice_without_init)
{
	LIST_HEAD(dst);
	LIST_HEAD(src);

	ADD_TAIL(&dst, 0);
	ADD_TAIL(&src, 1, 2);
	list_splice(&src, &dst);
	EXPECT(&dst, 1, 2, 0);
	INIT_LIST_HEAD(&src);
	list_add_tail(&items[3].node, &src);
	list_splice_tail(&src, &dst);
	EXPECT(&dst, 1, 2, 0, 3);
}

Test(list, safe_iteration_allows_removal)
{
	LIST_HEAD(head);
	LIST_HEAD(odd);
	struct item *it, *n;

	for (int i = 0; i < 8; i++)
		list_add_tail(&items[i].node, &head);
	list_for_each_entry_safe(it, n, &head, node)
		if (it->id & 1)
			list_move_tail(&it->node, &odd);
	EXPECT(&head, 0, 2, 4, 6);
	EXPECT(&odd, 1, 3, 5, 7);

	/* from the tail, as writeback_sb_inodes() walks b_io */
	list_for_each_entry_safe_reverse(it, n, &head, node)
		if (it->id >= 4)
			list_del_init(&it->node);
	EXPECT(&head, 0, 2);
}

Test(list, raw_iteration_and_rotate)
{
	LIST_HEAD(head);
	struct list_head *pos, *n;
	int sum = 0;

	for (int i = 0; i < 3; i++)
		list_add_tail(&items[i].node, &head);
	list_for_each(pos, &head)
		sum += list_entry(pos, struct item, node)->id;
	cr_assert_eq(sum, 3);

	list_rotate_left(&head);
	EXPECT(&head, 1, 2, 0);

	list_for_each_safe(pos, n, &head)
		list_del_init(pos);
	cr_assert(list_empty(&head));
}

Test(list, replace_init_and_neighbours)
{
	LIST_HEAD(head);
	struct item *it;

	for (int i = 0; i < 3; i++)
		list_add_tail(&items[i].node, &head);
	list_replace_init(&items[1].node, &items[5].node);
	EXPECT(&head, 0, 5, 2);
	cr_assert(list_empty(&items[1].node));

	it = list_first_entry(&head, struct item, node);
	cr_assert_eq(list_next_entry(it, node)->id, 5);
	it = list_last_entry(&head, struct item, node);
	cr_assert_eq(list_prev_entry(it, node)->id, 5);
}

Test(list, container_of_finds_the_outer_struct)
{
	struct item *it = &items[6];

	cr_assert_eq(container_of(&it->node, struct item, node), it);
	cr_assert_eq(list_entry(&items[7].node, struct item, node)->id, 7);
}
