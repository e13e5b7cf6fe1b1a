// SPDX-License-Identifier: MIT
/*
 * engine/mm/page_pin.c - per-thread page pins: how a read-only
 * uf_page_get holds a frame without writing a line that other threads
 * write (issue 20).  Not the kernel's: its page cache hit takes a
 * reference on the page (get_page_unless_zero in find_get_page, 3.2
 * mm/filemap.c; folio_try_get in 6.18's filemap_get_read_batch), an
 * atomic on the line every reader of that page writes.  Here the reader
 * publishes the page in a slot of its own thread's pin table instead, and
 * the two paths that free a frame look at the tables first:
 *
 *  - reclaim's __remove_mapping freezes the count at 0, then scans: a
 *    pinned page is unfrozen and kept, as one with an extra reference is;
 *  - put_page, when the count reaches 0 (truncate, a failed read), scans:
 *    a pinned frame is marked PG_pin_orphan and left to its pins; the
 *    unpin that finds no pin left frees it (page_pin_handoff, page_unpin).
 *
 * Dekker's pattern, every access sequentially consistent: the pinner
 * stores its slot, then reads _count; a freer drops _count to 0, then
 * reads the slots.  Either the freer sees the pin or the pinner sees 0
 * (or a later count: the frame freed and handed out again, which a
 * release store makes the pinner see with the page_seq that its delete
 * moved) and gives up.  The same pattern, on PG_pin_orphan and the slots,
 * between a handoff and the last unpin: exactly one of them frees.
 *
 * The cost of a freer's scan is one line per table in use (the highest
 * table index a thread has claimed): a thread claims the lowest free one
 * (skipping those an exited thread left full of pins not yet put) and
 * gives it back when it exits, so it is about the number of threads that
 * pin at once.  A table is one line of PIN_SLOTS pages; a thread holding
 * more (or past PIN_TABLES threads) takes references as before.
 */
#include <pthread.h>

#include "mm/mm.h"
#include "kernel/printk.h"
#include "kernel/sim.h"

struct pin_table pin_tables[PIN_TABLES];
static unsigned int nr_pin_tables;	/* atomic: the scan's bound */
static bool pin_table_owned[PIN_TABLES];	/* pin_lock */
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t pin_key;
static pthread_once_t pin_once = PTHREAD_ONCE_INIT;
static bool pin_key_ok;

static __thread struct pin_table *my_pin_table
	__attribute__((tls_model("initial-exec")));


/* Thread exit: the table is free for the next thread.  Slots still set
 * belong to handles not put yet; their puts clear them from any thread,
 * and the next owner only ever fills empty slots. */
static void pin_table_release(void *arg)
{
	struct pin_table *t = arg;

	/* a pin from a later destructor of this thread claims anew */
	my_pin_table = NULL;
	pthread_mutex_lock(&pin_lock);
	pin_table_owned[t - pin_tables] = false;
	pthread_mutex_unlock(&pin_lock);
}

/*
 * In a world, a task's exit is in its turn (kernel/sim.c): the table is
 * free for the next task then, not when the thread really exits, so that
 * which table (or none) a later task claims does not depend on real time.
 */
static void pin_table_sim_exit(void)
{
	struct pin_table *t = my_pin_table;

	if (!t)
		return;
	pthread_setspecific(pin_key, NULL);
	pin_table_release(t);
}

static void pin_key_init(void)
{
	pin_key_ok = !pthread_key_create(&pin_key, pin_table_release);
	if (!pin_key_ok)
		pr_warn("no per-thread page pins: pthread_key_create failed");
	else
		uf_sim_register_exit(pin_table_sim_exit);
}

/* Slots of a table not owned that still hold an exited thread's pins. */
static unsigned int pin_table_used(const struct pin_table *t)
{
	unsigned int j, n = 0;

	for (j = 0; j < PIN_SLOTS; j++)
		n += !!__atomic_load_n(&t->slot[j], __ATOMIC_RELAXED);
	return n;
}

/*
 * The lowest free table with the fewest slots left set by handles of an
 * exited thread not put yet: a thread that took the lowest table full of
 * them would never pin.  pin_lock held.
 */
static struct pin_table *pin_table_pick(void)
{
	unsigned int i, used, best_used = PIN_SLOTS;
	struct pin_table *best = NULL;

	for (i = 0; i < PIN_TABLES && best_used; i++) {
		if (pin_table_owned[i])
			continue;
		used = pin_table_used(&pin_tables[i]);
		if (used < best_used) {
			best = &pin_tables[i];
			best_used = used;
		}
	}
	return best;
}

static struct pin_table *pin_table_claim(void)
{
	struct pin_table *t;
	unsigned int i;

	pthread_once(&pin_once, pin_key_init);
	if (!pin_key_ok)
		return NULL;
	pthread_mutex_lock(&pin_lock);
	t = pin_table_pick();
	if (t) {
		i = (unsigned int)(t - pin_tables);
		pin_table_owned[i] = true;
		if (i >= __atomic_load_n(&nr_pin_tables, __ATOMIC_RELAXED))
			__atomic_store_n(&nr_pin_tables, i + 1,
					 __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&pin_lock);
	if (t && pthread_setspecific(pin_key, t)) {
		pin_table_release(t);
		t = NULL;
	}
	return t;
}

struct page **page_pin_slot(void)
{
	struct pin_table *t = my_pin_table;
	unsigned int i;

	if (__builtin_expect(!t, 0)) {
		t = pin_table_claim();
		if (!t)
			return NULL;
		my_pin_table = t;
	}
	for (i = 0; i < PIN_SLOTS; i++)
		if (!__atomic_load_n(&t->slot[i], __ATOMIC_RELAXED))
			return &t->slot[i];
	return NULL;
}

bool page_pinned(const struct page *page)
{
	unsigned int n = __atomic_load_n(&nr_pin_tables, __ATOMIC_SEQ_CST);
	unsigned int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < PIN_SLOTS; j++)
			if (__atomic_load_n(&pin_tables[i].slot[j],
					    __ATOMIC_SEQ_CST) == page)
				return true;
	return false;
}

/*
 * The exchange is the pinner's half of Dekker's pattern (a locked
 * instruction on a line of this thread's, not a fence on a shared one).
 * Count 0: free, or frozen by reclaim, or falling to 0 in put_page.  Any
 * other count with page_seq unchanged: the page did not leave its mapping
 * before the pin was visible, and no frame is freed while it stays.
 */
bool page_pin(struct uf_cache *c, struct page *page, struct page **slot,
	      unsigned int pseq)
{
	(void)__atomic_exchange_n(slot, page, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&page->_count, __ATOMIC_SEQ_CST) &&
	    __atomic_load_n(&page->page_seq, __ATOMIC_ACQUIRE) == pseq)
		return true;
	page_unpin(c, slot, page);
	return false;
}

/* Whoever clears PG_pin_orphan with no pin left frees the frame. */
static bool pin_orphan_claim(struct page *page)
{
	return !page_pinned(page) &&
	       test_and_clear_bit(PG_pin_orphan, &page->flags);
}

/*
 * put_page()'s count-1 event: a clean page now held by the page cache
 * alone is one a waiting allocator's reclaim can free.  The peek is an
 * SC load after the slot's SC exchange; the allocator counts itself,
 * fences, then scans the pins (alloc_waiter_enqueue): one sees the other.
 */
static void pin_put_event(struct uf_cache *c, struct page *page)
{
	if (__builtin_expect(__atomic_load_n(&c->pool.nr_alloc_waiters,
					     __ATOMIC_SEQ_CST), 0) &&
	    page_count(page) == 1 && page_reclaimable_flags(page))
		pool_reclaim_event(&c->pool);
}

void page_unpin(struct uf_cache *c, struct page **slot, struct page *page)
{
	/* release: the holder's reads of the frame come before its reuse */
	(void)__atomic_exchange_n(slot, NULL, __ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&page->flags, __ATOMIC_SEQ_CST) &
			     BIT(PG_pin_orphan), 0)) {
		if (pin_orphan_claim(page))
			page_pool_free(c, page);
		return;
	}
	pin_put_event(c, page);
}

bool page_pin_handoff(struct page *page)
{
	if (!page_pinned(page))
		return false;
	(void)test_and_set_bit(PG_pin_orphan, &page->flags);
	/* the pins may all have gone before they could see the bit */
	return !pin_orphan_claim(page);
}
