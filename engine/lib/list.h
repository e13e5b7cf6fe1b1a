/* SPDX-License-Identifier: MIT */
/*
 * engine/lib/list.h - intrusive circular doubly-linked lists, with the API of
 * the kernel's include/linux/list.h (struct list_head, list_add,
 * list_splice_init, list_for_each_entry_safe, ...).
 *
 * The writeback code is written in terms of these lists (b_dirty, b_io,
 * b_more_io, work_list, the LRU), and its ordering rules ("b_io is consumed
 * from its tail", "requeued inodes are served before newly expired ones")
 * are statements about where list_add, list_move and the splices put
 * entries.  Keeping the kernel's exact semantics lets the mirrored code be
 * read against the kernel line by line.
 *
 * A list_head is both the head of a list and the link of an entry; an empty
 * head points at itself.  No locking: callers hold the list's lock.
 * list_del() poisons the entry, so a use after deletion faults at once.
 */
#ifndef UF_LIST_H
#define UF_LIST_H

#include <stdbool.h>
#include <stddef.h>

#ifndef container_of
/* The structure that embeds @ptr as its @member. */
#define container_of(ptr, type, member) ({				\
	const __typeof__(((type *)0)->member) *__mptr = (ptr);		\
	(type *)((char *)__mptr - offsetof(type, member));		\
})
#endif

/* Addresses that fault, stored in a deleted entry. */
#define LIST_POISON1	((struct list_head *)0x100)
#define LIST_POISON2	((struct list_head *)0x122)

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name)	{ &(name), &(name) }
#define LIST_HEAD(name)		struct list_head name = LIST_HEAD_INIT(name)

static inline void INIT_LIST_HEAD(struct list_head *list)
{
	list->next = list;
	list->prev = list;
}

/* Link @entry between two consecutive entries @prev and @next. */
static inline void __list_add(struct list_head *entry, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = entry;
	entry->next = next;
	entry->prev = prev;
	prev->next = entry;
}

/* Insert @entry right after @head: a stack (newest first). */
static inline void list_add(struct list_head *entry, struct list_head *head)
{
	__list_add(entry, head, head->next);
}

/* Insert @entry right before @head, i.e. at the tail: a queue. */
static inline void list_add_tail(struct list_head *entry,
				 struct list_head *head)
{
	__list_add(entry, head->prev, head);
}

/* Join @prev and @next, dropping whatever was between them. */
static inline void __list_del(struct list_head *prev, struct list_head *next)
{
	next->prev = prev;
	prev->next = next;
}

static inline void __list_del_entry(struct list_head *entry)
{
	__list_del(entry->prev, entry->next);
}

static inline void list_del(struct list_head *entry)
{
	__list_del_entry(entry);
	entry->next = LIST_POISON1;
	entry->prev = LIST_POISON2;
}

/* Unlink @entry and make it an empty list again (list_empty() is true). */
static inline void list_del_init(struct list_head *entry)
{
	__list_del_entry(entry);
	INIT_LIST_HEAD(entry);
}

static inline void list_replace_init(struct list_head *old,
				     struct list_head *entry)
{
	entry->next = old->next;
	entry->next->prev = entry;
	entry->prev = old->prev;
	entry->prev->next = entry;
	INIT_LIST_HEAD(old);
}

/* Unlink @entry from its list and add it at the head of @head. */
static inline void list_move(struct list_head *entry, struct list_head *head)
{
	__list_del_entry(entry);
	list_add(entry, head);
}

/* Unlink @entry from its list and add it at the tail of @head. */
static inline void list_move_tail(struct list_head *entry,
				  struct list_head *head)
{
	__list_del_entry(entry);
	list_add_tail(entry, head);
}

static inline bool list_is_first(const struct list_head *entry,
				 const struct list_head *head)
{
	return entry->prev == head;
}

static inline bool list_is_last(const struct list_head *entry,
				const struct list_head *head)
{
	return entry->next == head;
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

/* Exactly one entry. */
static inline bool list_is_singular(const struct list_head *head)
{
	return !list_empty(head) && head->next == head->prev;
}

/* Move the first entry to the tail. */
static inline void list_rotate_left(struct list_head *head)
{
	if (!list_empty(head))
		list_move_tail(head->next, head);
}

/* Insert the entries of @list (not its head) between @prev and @next. */
static inline void __list_splice(const struct list_head *list,
				 struct list_head *prev,
				 struct list_head *next)
{
	struct list_head *first = list->next;
	struct list_head *last = list->prev;

	first->prev = prev;
	prev->next = first;
	last->next = next;
	next->prev = last;
}

/*
 * The splices keep @list's order: after list_splice(list, head) the entries
 * of @list come first in @head, in the order they had; after
 * list_splice_tail() they come last.  The _init forms leave @list empty;
 * the others leave it pointing into @head, to be reinitialised.
 */
static inline void list_splice(const struct list_head *list,
			       struct list_head *head)
{
	if (!list_empty(list))
		__list_splice(list, head, head->next);
}

static inline void list_splice_tail(const struct list_head *list,
				    struct list_head *head)
{
	if (!list_empty(list))
		__list_splice(list, head->prev, head);
}

static inline void list_splice_init(struct list_head *list,
				    struct list_head *head)
{
	if (!list_empty(list)) {
		__list_splice(list, head, head->next);
		INIT_LIST_HEAD(list);
	}
}

static inline void list_splice_tail_init(struct list_head *list,
					 struct list_head *head)
{
	if (!list_empty(list)) {
		__list_splice(list, head->prev, head);
		INIT_LIST_HEAD(list);
	}
}

/* Number of entries; walks the list. */
static inline size_t list_count_nodes(const struct list_head *head)
{
	const struct list_head *pos;
	size_t n = 0;

	for (pos = head->next; pos != head; pos = pos->next)
		n++;
	return n;
}

#define list_count(head)	list_count_nodes(head)

#define list_entry(ptr, type, member)	container_of(ptr, type, member)

#define list_first_entry(head, type, member)				\
	list_entry((head)->next, type, member)

#define list_last_entry(head, type, member)				\
	list_entry((head)->prev, type, member)

#define list_first_entry_or_null(head, type, member) ({		\
	struct list_head *__head = (head);				\
	struct list_head *__pos = __head->next;				\
	__pos != __head ? list_entry(__pos, type, member) : NULL;	\
})

#define list_next_entry(pos, member)					\
	list_entry((pos)->member.next, __typeof__(*(pos)), member)

#define list_prev_entry(pos, member)					\
	list_entry((pos)->member.prev, __typeof__(*(pos)), member)

#define list_entry_is_head(pos, head, member)				\
	(&(pos)->member == (head))

#define list_for_each(pos, head)					\
	for (pos = (head)->next; pos != (head); pos = pos->next)

#define list_for_each_safe(pos, n, head)				\
	for (pos = (head)->next, n = pos->next; pos != (head);		\
	     pos = n, n = pos->next)

#define list_for_each_entry(pos, head, member)				\
	for (pos = list_first_entry(head, __typeof__(*pos), member);	\
	     !list_entry_is_head(pos, head, member);			\
	     pos = list_next_entry(pos, member))

#define list_for_each_entry_reverse(pos, head, member)			\
	for (pos = list_last_entry(head, __typeof__(*pos), member);	\
	     !list_entry_is_head(pos, head, member);			\
	     pos = list_prev_entry(pos, member))

/* Safe against removal of @pos; @n is the lookahead cursor. */
#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_first_entry(head, __typeof__(*pos), member),	\
	     n = list_next_entry(pos, member);				\
	     !list_entry_is_head(pos, head, member);			\
	     pos = n, n = list_next_entry(n, member))

#define list_for_each_entry_safe_reverse(pos, n, head, member)		\
	for (pos = list_last_entry(head, __typeof__(*pos), member),	\
	     n = list_prev_entry(pos, member);				\
	     !list_entry_is_head(pos, head, member);			\
	     pos = n, n = list_prev_entry(n, member))

#endif /* UF_LIST_H */
