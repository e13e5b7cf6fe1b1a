// SPDX-License-Identifier: MIT
/*
 * engine/api/page.c - struct uf_page: a page handle (one per uf_page_get),
 * its slot table with per-thread free caches, get, data, set_dirty and put,
 * and the census of held handles that a close consults.
 */
#include "api/handle.h"
#include "kernel/sim.h"

static uint64_t pslot_free_head;	/* ABA tag << 32 | index + 1 */
unsigned int nr_pslot_chunks;	/* pslot_grow_lock */
static pthread_mutex_t pslot_grow_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Page handles held now on cache @s (or, with @f, UF_PAGE_WRITE ones on
 * that file): a census of the live page slots, so that a close never waits
 * for a handle that only its own caller could put (the kernel's umount of
 * a busy filesystem is -EBUSY, not a sleep).  Rare, so it costs the closer
 * a walk over the slots, not every get and put a count.  Handles got by
 * calls racing with the census may be missed: the close then waits for
 * them as for the calls that got them.
 */
unsigned long page_handles_held(struct uf_cache_slot *s, struct uf_file *f)
{
	unsigned int nr_chunks, i, j;
	struct uf_page_slot *chunk, *ps;
	unsigned long n = 0;

	nr_chunks = __atomic_load_n(&nr_pslot_chunks, __ATOMIC_ACQUIRE);
	for (i = 0; i < nr_chunks; i++) {
		chunk = __atomic_load_n(&pslot_chunks[i], __ATOMIC_ACQUIRE);
		for (j = 0; chunk && j < PSLOT_CHUNK; j++) {
			ps = &chunk[j];
			if (!(__atomic_load_n(&ps->h.state, __ATOMIC_ACQUIRE) &
			      S_LIVE))
				continue;
			if (f ? __atomic_load_n(&ps->file, __ATOMIC_RELAXED) == f
			      : __atomic_load_n(&ps->cs, __ATOMIC_RELAXED) == s)
				n++;
		}
	}
	return n;
}

/* -EBUSY, logged with the count, if page handles would hold the close. */
int close_busy(struct uf_cache_slot *s, struct uf_file *f, const char *what)
{
	unsigned long n = page_handles_held(s, f);

	if (!n)
		return 0;
	pr_warn("%s: %lu page handle%s%s still held: uf_page_put %s first; "
		"nothing closed (-EBUSY)", what, n, n == 1 ? "" : "s",
		f ? " (UF_PAGE_WRITE)" : "", n == 1 ? "it" : "them");
	return -EBUSY;
}

/* ------------------------------------------------------------------ */
/* Pages                                                               */

/*
 * Page handle slots come from a lock-free stack (uf_page_get is a buffer
 * pool's hot path); the tag in the head's top half defeats ABA.
 */
static void pslot_push(struct uf_page_slot *ps)
{
	uint64_t head = __atomic_load_n(&pslot_free_head, __ATOMIC_RELAXED);
	uint64_t new;

	do {
		__atomic_store_n(&ps->next, (uint32_t)head, __ATOMIC_RELAXED);
		new = ((head >> 32) + 1) << 32 | (ps->idx + 1);
	} while (!__atomic_compare_exchange_n(&pslot_free_head, &head, new,
					      true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

static struct uf_page_slot *pslot_pop(void)
{
	uint64_t head = __atomic_load_n(&pslot_free_head, __ATOMIC_ACQUIRE);
	struct uf_page_slot *ps;
	uint64_t new;

	do {
		if (!(uint32_t)head)
			return NULL;
		ps = pslot_at((uint32_t)head - 1);
		new = ((head >> 32) + 1) << 32 |
		      __atomic_load_n(&ps->next, __ATOMIC_RELAXED);
	} while (!__atomic_compare_exchange_n(&pslot_free_head, &head, new,
					      true, __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	return ps;
}

/*
 * A few free page slots per thread, so that uf_page_get/put in a loop do
 * not compare-and-swap the one free list head that every thread shares.
 * Given back to the list when the thread exits.
 */
#define PSLOT_CACHE		32

struct pslot_cache {
	unsigned int nr;
	bool registered;
	struct uf_page_slot *slots[PSLOT_CACHE];
};

static __thread struct pslot_cache pslot_cache
	__attribute__((tls_model("initial-exec")));

static pthread_key_t pslot_cache_key;

static pthread_once_t pslot_cache_once = PTHREAD_ONCE_INIT;

static void pslot_cache_drain(void *arg)
{
	struct pslot_cache *pc = arg;

	while (pc->nr)
		pslot_push(pc->slots[--pc->nr]);
	pc->registered = false;
}

/* In a world, a task gives its slots back at its end, in its turn
 * (kernel/sim.c), not when its thread really exits. */
static void pslot_cache_sim_exit(void)
{
	struct pslot_cache *pc = &pslot_cache;

	if (!pc->registered)
		return;
	pthread_setspecific(pslot_cache_key, NULL);
	pslot_cache_drain(pc);
}

static void pslot_cache_key_init(void)
{
	if (pthread_key_create(&pslot_cache_key, pslot_cache_drain))
		pr_warn("no per-thread page slot caches: pthread_key_create failed");
	else
		uf_sim_register_exit(pslot_cache_sim_exit);
}

/* False if this thread's cache cannot be drained at its exit: unused. */
static bool pslot_cache_ready(struct pslot_cache *pc)
{
	if (pc->registered)
		return true;
	pthread_once(&pslot_cache_once, pslot_cache_key_init);
	if (pthread_setspecific(pslot_cache_key, pc))
		return false;
	pc->registered = true;
	return true;
}

static struct uf_page_slot *pslot_alloc(void)
{
	struct pslot_cache *pc = &pslot_cache;
	struct uf_page_slot *ps, *chunk;
	uint32_t i, base;

	if (pc->nr)
		return pc->slots[--pc->nr];
	ps = pslot_pop();
	if (ps)
		return ps;
	pthread_mutex_lock(&pslot_grow_lock);
	ps = pslot_pop();
	if (!ps && nr_pslot_chunks < PSLOT_CHUNKS) {
		chunk = kzalloc(PSLOT_CHUNK * sizeof(*chunk));
		if (chunk) {
			base = nr_pslot_chunks * PSLOT_CHUNK;
			for (i = 0; i < PSLOT_CHUNK; i++)
				chunk[i].idx = base + i;
			__atomic_store_n(&pslot_chunks[nr_pslot_chunks],
					 chunk, __ATOMIC_RELEASE);
			/* atomic: a closer's census reads it unlocked */
			__atomic_store_n(&nr_pslot_chunks, nr_pslot_chunks + 1,
					 __ATOMIC_RELEASE);
			for (i = PSLOT_CHUNK - 1; i > 0; i--)
				pslot_push(&chunk[i]);
			ps = &chunk[0];
		}
	}
	pthread_mutex_unlock(&pslot_grow_lock);
	return ps;
}

static void pslot_free(struct uf_page_slot *ps)
{
	struct pslot_cache *pc = &pslot_cache;

	if (hslot_retired(&ps->h))
		return;
	if (pc->nr < PSLOT_CACHE && pslot_cache_ready(pc))
		pc->slots[pc->nr++] = ps;
	else
		pslot_push(ps);
}

/* A cached page as it is, or a new one zeroed instead of read. */
static struct page *page_get_noread(struct uf_file *f, unsigned long index)
{
	struct inode *inode = &f->inode;
	struct page *page;

	page = find_or_create_page(inode->i_mapping, index);
	if (!page)
		return NULL;
	if (!PageUptodate(page)) {
		memset(page_address(inode_cache(inode), page), 0, PAGE_SIZE);
		SetPageUptodate(page);
	}
	unlock_page(page);
	return page;
}

/*
 * A read-only handle on a cached, uptodate page pins it in this thread's
 * pin table (page_pin.c; *pinp its slot): what any of the flags would
 * give for such a page, without writing the page's lines.  Otherwise, or
 * with the table full, a reference (*pinp NULL).
 */
static int page_lookup(struct uf_file *f, unsigned long index,
		       unsigned int flags, struct page **pagep,
		       struct page ***pinp)
{
	struct page **slot;
	struct page *page;
	int ret;

	*pinp = NULL;
	if (!(flags & UF_PAGE_WRITE) && (slot = page_pin_slot()) != NULL) {
		/* only read_cache_page() marks the page accessed */
		page = find_pin_page(f->inode.i_mapping, index, slot,
				     !(flags & (UF_PAGE_NOCREATE |
						UF_PAGE_NOREAD)));
		if (page) {
			*pinp = slot;
			*pagep = page;
			return 0;
		}
	}
	if (flags & UF_PAGE_NOCREATE) {
		/* never a page whose read is in flight or failed */
		page = find_get_page_uptodate(f->inode.i_mapping, index);
		if (!page)
			return -ENOENT;
	} else if (flags & UF_PAGE_NOREAD) {
		page = page_get_noread(f, index);
		if (!page)
			return -ENOMEM;
	} else {
		ret = read_cache_page(f->inode.i_mapping, index, &page);
		if (ret)
			return ret;
	}
	if (flags & UF_PAGE_WRITE) {
		lock_page(page);
		wait_on_page_writeback(page);
		SetPageOwnerPriv1(page);
		/* its holder writes the frame at will until the put: no
		 * reader's copy without a reference may count on it */
		page_seq_write_begin(page);
	}
	*pagep = page;
	return 0;
}

/* The page handle pins the cache (its frame), and with UF_PAGE_WRITE the
 * file (its mapping, for set_dirty and the throttle in put). */
static int file_page_get(struct uf_file *f, unsigned long index,
			 unsigned int flags, struct uf_page **out)
{
	struct uf_cache_slot *s = cache_slot_of(f->dev->cache);
	struct uf_page_slot *ps;
	struct page *page, **pin;
	uint64_t gen;
	int ret;

	if (flags & ~(UF_PAGE_NOREAD | UF_PAGE_NOCREATE | UF_PAGE_WRITE))
		return -EINVAL;
	if (index >= (unsigned long)(f->inode.i_size >> PAGE_SHIFT))
		return -EFBIG;
	if (!hslot_get_live(&s->h, &gen))
		return -EBADF;	/* the cache is closing */
	ps = pslot_alloc();
	ret = ps ? page_lookup(f, index, flags, &page, &pin) : -EMFILE;
	if (ret) {
		if (ps)
			pslot_free(ps);
		hslot_put(&s->h);
		return ret;
	}
	/* the page-level count the allocator reads (a pinned frame); a pin
	 * is found by its scan of the pin tables */
	if (!pin)
		__atomic_add_fetch(&page->uf_users, 1, __ATOMIC_ACQ_REL);
	ps->page = page;
	ps->pin = pin;
	/* atomic: a closer's census (page_handles_held) reads them */
	__atomic_store_n(&ps->cs, s, __ATOMIC_RELAXED);
	ps->cs_shard = (uint8_t)my_shard();	/* hslot_get_live()'s */
	__atomic_store_n(&ps->file, NULL, __ATOMIC_RELAXED);
	if (flags & UF_PAGE_WRITE) {
		/* the caller's user keeps the slot: no check needed */
		ps->file_shard = (uint8_t)hslot_pin(&f->h);
		__atomic_store_n(&ps->file, f, __ATOMIC_RELAXED);
	}
	*out = h_make(H_PAGE, ps->idx, hslot_publish(&ps->h));
	return 0;
}

int uf_page_get(struct uf_file *h, unsigned long index, unsigned int flags,
		struct uf_page **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	return with_file(h, f, file_page_get(f, index, flags, out));
}

/* Valid until the handle is put. */
void *uf_page_data(struct uf_page *h)
{
	return with_handle(pslot_get, h, ps, NULL,
			   page_address(&ps->cs->cache, ps->page));
}

static int pslot_set_dirty(struct uf_page_slot *ps)
{
	if (!ps->file)
		return -EPERM;	/* only a page taken with UF_PAGE_WRITE */
	SetPageUptodate(ps->page);
	set_page_dirty(ps->page);
	return 0;
}

int uf_page_set_dirty(struct uf_page *h)
{
	return with_pslot(h, ps, pslot_set_dirty(ps));
}

/* The page handle's close: the first put wins, a second gets -EBADF. */
int uf_page_put(struct uf_page *h)
{
	struct uf_page_slot *ps;
	struct page *page;
	struct uf_file *f;
	bool dirtied = false;
	uint64_t gen;
	uint32_t idx;

	if (!h_decode(h, H_PAGE, &idx, &gen))
		return -EBADF;
	ps = pslot_at(idx);
	if (!ps || !hslot_kill(&ps->h, gen))
		return -EBADF;
	hslot_drain(&ps->h);
	page = ps->page;
	f = ps->file;
	if (f) {
		page_seq_write_end(page);
		ClearPageOwnerPriv1(page);
		dirtied = PageDirty(page);
		unlock_page(page);
	}
	if (ps->pin) {
		page_unpin(&ps->cs->cache, ps->pin, page);
	} else {
		__atomic_sub_fetch(&page->uf_users, 1, __ATOMIC_ACQ_REL);
		put_page(&ps->cs->cache, page);
	}
	if (dirtied)
		balance_dirty_pages_ratelimited(f->inode.i_mapping);
	if (f)
		hslot_put_shard(&f->h, ps->file_shard);
	hslot_put_shard(&ps->cs->h, ps->cs_shard);
	pslot_free(ps);
	return 0;
}
