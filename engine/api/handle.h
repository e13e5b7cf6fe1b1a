/* SPDX-License-Identifier: MIT */
/*
 * engine/api/handle.h - the objects behind the public API's handles and
 * the handle table (the kernel's fs/file.c fd table, fdget/fdput): what
 * engine/api/{handle,cache,dev,file,page}.c share, nothing else includes.
 *
 * Objects live in tables that are never freed while the process runs (like
 * file descriptors); a handle names a slot and the generation it was opened
 * with, so a closed handle is -EBADF, never a use after free nor the next
 * object of the slot.  Every call counts itself in on its handle's slot for
 * its duration; a close marks the slot closed, waits for the calls in it to
 * leave, then tears the object down (see "Handle slots").  Each object's
 * lifetime rules live in its own file: cache.c, dev.c, file.c, page.c.
 */
#ifndef UF_API_HANDLE_H
#define UF_API_HANDLE_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "uflush.h"
#include "mm/backing-dev.h"
#include "fs/fs.h"
#include "io/io.h"
#include "kernel/jiffies.h"
#include "mm/pagemap.h"
#include "policies/policy.h"
#include "mm/vmscan.h"
#include "kernel/printk.h"
#include "lib/proportions.h"
#include "lib/slab.h"
#include "trace/trace.h"
#include "trace/events/writeback.h"
#include "uflush-internal.h"
#include "fs/writeback.h"

#define UF_MAX_CACHES		64

#define UF_MAX_DEVS		256

#define FILE_CHUNK		1024

#define FILE_CHUNKS		64	/* 65536 open files */

#define PSLOT_CHUNK		4096

#define PSLOT_CHUNKS		512	/* 2M page handles at once */

/*
 * Handle values.  A handle is not a pointer but kind | slot | generation:
 * bits 0-2 the kind (never 0, so no aligned pointer is a handle), bits 3-23
 * the slot index, bits 24-63 the slot's generation when it was opened.
 */
#define H_KIND_BITS		3

#define H_IDX_BITS		21

#define H_GEN_SHIFT		(H_KIND_BITS + H_IDX_BITS)

#define H_IDX_MAX		(1u << H_IDX_BITS)

enum h_kind { H_CACHE = 1, H_DEV, H_FILE, H_PAGE };

/*
 * A slot's state, one word so that one atomic add both counts a caller in
 * and reads what it checks: generation (bits 24-63) | S_LIVE | users (bits
 * 0-22, calls in flight and page handles pinning the object).  Closing
 * clears S_LIVE and bumps the generation in one compare-and-swap, so each
 * call either got in before (and the close waits for it to leave) or sees
 * the close and returns -EBADF.  A slot whose generation reaches
 * UF_HANDLE_GEN_MAX is retired instead of reused: no handle value is ever
 * issued twice.
 */
#define S_USERS			((1ull << 23) - 1)

#define S_LIVE			(1ull << 23)

#define S_GEN_SHIFT		24

_Static_assert(sizeof(uintptr_t) == 8, "handles need 64-bit pointers");

_Static_assert(UF_MAX_DEVS <= H_IDX_MAX && UF_MAX_CACHES <= H_IDX_MAX &&
	       FILE_CHUNK * FILE_CHUNKS <= H_IDX_MAX &&
	       PSLOT_CHUNK * PSLOT_CHUNKS <= H_IDX_MAX, "slot index bits");

_Static_assert(UF_HANDLE_GEN_MAX == (~0ull >> S_GEN_SHIFT), "gen bits");

/*
 * The users of a cache, device or file slot are counted in per-thread
 * shards rather than in its state word: every uf_pread() counts itself in
 * and out, and two threads reading one file made that word's cache line
 * bounce on each call.  A thread keeps to one shard (threads past
 * HSLOT_SHARDS share), and a user leaves by the shard it entered by, even
 * from another thread (a page handle's pins remember theirs), so every
 * shard's count is what it holds: a closer that reads them one by one,
 * after it cleared S_LIVE, can only see zero once they are all gone.
 * Entering is Dekker's pattern against the closer: shard then state here,
 * state then shards there, all sequentially consistent.  Page slots, one
 * holder each and millions of them, count in the state word (users NULL).
 */
#define HSLOT_SHARDS		8

struct hslot {
	uint64_t state;
	bool taken;		/* handles_lock: owned from open to close */
	int64_t *users;		/* shard i at users[i * stride]; NULL: none */
	uint32_t stride;
};

struct uf_cache_slot {
	struct hslot h;
	unsigned long nr_devs;	/* atomic: devices not yet torn down */
	bool discard;		/* uf_cache_close_discard: evict unwritten */
	struct uf_cache cache __attribute__((aligned(64)));	/* h's line
				 * is read on every call: not beside these */
};

enum { UMOUNT_NONE, UMOUNT_TAKING, UMOUNT_HELD };

struct uf_dev {
	struct hslot h;		/* first: kept when the slot is reset */
	struct uf_cache *cache;
	struct uf_bdev *bdev;
	struct backing_dev_info bdi;
	struct super_block sb;
	pthread_mutex_t files_lock;	/* open/close of this device's files;
					 * held across writeback: uf_mutex_* */
	unsigned long nr_files;		/* atomic, under files_lock */
	uint64_t size;
	int umount;			/* atomic: UMOUNT_* */
};

struct uf_file {
	struct inode inode;
	struct hslot h __attribute__((aligned(64)));	/* not beside i_state */
	uint32_t idx;
	struct uf_dev *dev;
};

/* A held page: one per uf_page_get, so a put handle never names another
 * holder's page.  A line each: two threads' slots side by side made every
 * get and put of one bounce the other's line. */
struct __attribute__((aligned(64))) uf_page_slot {
	struct hslot h;
	uint32_t idx;
	uint32_t next;			/* atomic: free list, index + 1 */
	struct page *page;
	struct page **pin;		/* its pin (page_pin.c), or NULL:
					 * a reference (uf_users) */
	struct uf_cache_slot *cs;	/* a user of the cache while held */
	struct uf_file *file;		/* UF_PAGE_WRITE: a user of it */
	uint8_t cs_shard, file_shard;	/* the shards those users are in */
};

/* The tables (engine/api/handle.c) and the closers' one queue. */
extern struct uf_cache_slot caches[UF_MAX_CACHES];
extern struct uf_dev devs[UF_MAX_DEVS];
extern struct uf_file *file_chunks[FILE_CHUNKS];
extern struct uf_page_slot *pslot_chunks[PSLOT_CHUNKS];
extern unsigned int nr_pslot_chunks;	/* page.c: pslot_grow_lock */
extern pthread_mutex_t handles_lock;
extern struct wait_queue_head handles_wq;
extern unsigned int next_shard;

/* Across the objects' files. */
bool closing_from_callback(struct uf_cache_slot *s, struct uf_dev *d,
			   struct uf_file *f);
int dev_sync(struct uf_dev *d);
int dev_close_cascade(struct uf_dev *d, uint64_t gen);
int file_close_gen(struct uf_file *f, uint64_t gen);
int close_busy(struct uf_cache_slot *s, struct uf_file *f, const char *what);
unsigned long page_handles_held(struct uf_cache_slot *s, struct uf_file *f);

/* ------------------------------------------------------------------ */
/* Handle slots                                                        */

static inline uint64_t s_gen(uint64_t s)
{
	return s >> S_GEN_SHIFT;
}

static inline void *h_make(enum h_kind kind, uint32_t idx, uint64_t gen)
{
	return (void *)(uintptr_t)(gen << H_GEN_SHIFT |
				   (uint64_t)idx << H_KIND_BITS | kind);
}

static inline bool h_decode(const void *h, enum h_kind kind, uint32_t *idx,
		     uint64_t *gen)
{
	uint64_t v = (uintptr_t)h;

	if ((v & ((1u << H_KIND_BITS) - 1)) != kind)
		return false;
	*idx = (uint32_t)(v >> H_KIND_BITS) & (H_IDX_MAX - 1);
	*gen = v >> H_GEN_SHIFT;
	return true;
}

/* The calling thread's shard, given out round-robin at its first call. */
static inline unsigned int my_shard(void)
{
	static __thread unsigned int shard
		__attribute__((tls_model("initial-exec")));

	if (!shard)
		shard = __atomic_fetch_add(&next_shard, 1, __ATOMIC_RELAXED) %
			HSLOT_SHARDS + 1;
	return shard - 1;
}

/* Count one user in on @shard; the state as it was.  Page slots: in the
 * state word itself, so the add reads it too. */
static inline uint64_t hslot_enter(struct hslot *s, unsigned int shard)
{
	if (!s->users)
		return __atomic_fetch_add(&s->state, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&s->users[shard * s->stride], 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&s->state, __ATOMIC_SEQ_CST);
}

/* A user leaves by the shard it entered by. */
static inline void hslot_put_shard(struct hslot *s, unsigned int shard)
{
	uint64_t n;

	if (!s->users) {
		n = __atomic_sub_fetch(&s->state, 1, __ATOMIC_ACQ_REL);
		if (!(n & (S_LIVE | S_USERS)))
			wake_up_all(&handles_wq);
		return;
	}
	__atomic_sub_fetch(&s->users[shard * s->stride], 1, __ATOMIC_SEQ_CST);
	/* closing: maybe the last one out (the closer counts) */
	if (!(__atomic_load_n(&s->state, __ATOMIC_SEQ_CST) & S_LIVE))
		wake_up_all(&handles_wq);
}

static inline void hslot_put(struct hslot *s)
{
	hslot_put_shard(s, my_shard());
}

/* Count a caller in if the slot still holds generation gen, open. */
static inline bool hslot_get(struct hslot *s, uint64_t gen)
{
	unsigned int shard = my_shard();
	uint64_t old = hslot_enter(s, shard);

	if (s_gen(old) == gen && (old & S_LIVE))
		return true;
	hslot_put_shard(s, shard);
	return false;
}

/* The same for whatever generation is open (walks over a table). */
static inline bool hslot_get_live(struct hslot *s, uint64_t *gen)
{
	unsigned int shard = my_shard();
	uint64_t old = hslot_enter(s, shard);

	if (old & S_LIVE) {
		*gen = s_gen(old);
		return true;
	}
	hslot_put_shard(s, shard);
	return false;
}

/* One more user for a caller already counted in (a page handle's pin). */
static inline unsigned int hslot_pin(struct hslot *s)
{
	unsigned int shard = my_shard();

	hslot_enter(s, shard);
	return shard;
}

/* Close generation gen: from now on its calls get -EBADF.  Only one of
 * racing closers wins. */
static inline bool hslot_kill(struct hslot *s, uint64_t gen)
{
	uint64_t old = __atomic_load_n(&s->state, __ATOMIC_RELAXED), new;

	do {
		if (s_gen(old) != gen || !(old & S_LIVE))
			return false;
		new = (old & S_USERS) | (gen + 1) << S_GEN_SHIFT;
	} while (!__atomic_compare_exchange_n(&s->state, &old, new, true,
					      __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	return true;
}

static inline bool hslot_idle(struct hslot *s)
{
	int64_t n = 0;
	unsigned int i;

	if (__atomic_load_n(&s->state, __ATOMIC_SEQ_CST) & S_USERS)
		return false;
	if (s->users)
		for (i = 0; i < HSLOT_SHARDS; i++)
			n += __atomic_load_n(&s->users[i * s->stride],
					     __ATOMIC_SEQ_CST);
	return !n;
}

/* After hslot_kill: wait for the callers that got in before it. */
static inline void hslot_drain(struct hslot *s)
{
	wait_event(handles_wq, hslot_idle(s));
}

/* The generation the next open of this (not live) slot gets. */
static inline uint64_t hslot_gen(struct hslot *s)
{
	return s_gen(__atomic_load_n(&s->state, __ATOMIC_ACQUIRE));
}

/* Open: what was set up before is seen by every caller counted in. */
static inline uint64_t hslot_publish(struct hslot *s)
{
	return s_gen(__atomic_fetch_add(&s->state, S_LIVE, __ATOMIC_ACQ_REL));
}

static inline bool hslot_retired(struct hslot *s)
{
	return hslot_gen(s) >= UF_HANDLE_GEN_MAX;
}

/* Take a free slot (handles_lock held). */
static inline bool hslot_claim(struct hslot *s)
{
	if (s->taken || hslot_retired(s))
		return false;
	s->taken = true;
	return true;
}

static inline void hslot_release(struct hslot *s)
{
	pthread_mutex_lock(&handles_lock);
	s->taken = false;
	pthread_mutex_unlock(&handles_lock);
}

/* The slot at @idx of a table, or NULL: past its end, or (a table grown
 * in chunks of @per) in a chunk not allocated yet. */
#define chunk_entry(chunks, per, idx) ({				\
	typeof(chunks[0]) __chunk = NULL;				\
	if ((idx) < (per) * (sizeof(chunks) / sizeof(chunks[0])))	\
		__chunk = __atomic_load_n(&chunks[(idx) / (per)],	\
					  __ATOMIC_ACQUIRE);		\
	__chunk ? &__chunk[(idx) % (per)] : NULL;			\
})

static inline struct uf_cache_slot *cache_at(uint32_t idx)
{
	return idx < UF_MAX_CACHES ? &caches[idx] : NULL;
}

static inline struct uf_dev *dev_at(uint32_t idx)
{
	return idx < UF_MAX_DEVS ? &devs[idx] : NULL;
}

static inline struct uf_file *file_at(uint32_t idx)
{
	return chunk_entry(file_chunks, FILE_CHUNK, idx);
}

static inline struct uf_page_slot *pslot_at(uint32_t idx)
{
	return chunk_entry(pslot_chunks, PSLOT_CHUNK, idx);
}

/* The slot of a handle of @kind (slot_at: its table), or NULL. */
#define h_slot(h, kind, slot_at, gen) ({				\
	typeof(slot_at(0)) __obj = NULL;				\
	uint32_t __idx;							\
									\
	if (h_decode(h, kind, &__idx, gen))				\
		__obj = slot_at(__idx);					\
	__obj;								\
})

/* The slot a handle of any kind names, and its generation; NULL if none. */
static inline struct hslot *hslot_of(const void *h, uint64_t *gen)
{
	struct uf_cache_slot *cs = h_slot(h, H_CACHE, cache_at, gen);
	struct uf_dev *d = h_slot(h, H_DEV, dev_at, gen);
	struct uf_file *f = h_slot(h, H_FILE, file_at, gen);
	struct uf_page_slot *ps = h_slot(h, H_PAGE, pslot_at, gen);

	return cs ? &cs->h : d ? &d->h : f ? &f->h : ps ? &ps->h : NULL;
}

/* The object a handle of @kind names, with a user counted in; NULL:
 * -EBADF. */
#define h_get(h, kind, slot_at) ({					\
	uint64_t __gen;							\
	typeof(slot_at(0)) __s = h_slot(h, kind, slot_at, &__gen);	\
									\
	__s && hslot_get(&__s->h, __gen) ? __s : NULL;			\
})

static inline struct uf_cache_slot *cache_get(struct uf_cache *h)
{
	return h_get(h, H_CACHE, cache_at);
}

static inline struct uf_dev *dev_get(struct uf_dev *h)
{
	return h_get(h, H_DEV, dev_at);
}

static inline struct uf_file *file_get(struct uf_file *h)
{
	return h_get(h, H_FILE, file_at);
}

static inline struct uf_page_slot *pslot_get(struct uf_page *h)
{
	return h_get(h, H_PAGE, pslot_at);
}

/*
 * A call on handle @h: count in on its slot, evaluate @expr with @obj the
 * object, count out; @fail if the handle is not open.  The kernel's
 * fdget()/fdput() around a system call.  It expands to the code one would
 * write out, so the hit paths (uf_pread, uf_pwrite) pay nothing for it.
 */
#define with_handle(get, h, obj, fail, expr) ({			\
	typeof(get(h)) obj = get(h);					\
	typeof(expr) __ret = (fail);					\
									\
	if (obj) {							\
		__ret = (expr);						\
		hslot_put(&obj->h);					\
	}								\
	__ret;								\
})

#define with_cache(h, s, expr)	with_handle(cache_get, h, s, -EBADF, expr)

#define with_dev(h, d, expr)	with_handle(dev_get, h, d, -EBADF, expr)

#define with_file(h, f, expr)	with_handle(file_get, h, f, -EBADF, expr)

#define with_pslot(h, ps, expr)					\
	with_handle(pslot_get, h, ps, -EBADF, expr)

static inline struct uf_cache_slot *cache_slot_of(struct uf_cache *c)
{
	return container_of(c, struct uf_cache_slot, cache);
}

/* Claim a free slot of a fixed table, or NULL.  The slot is the caller's
 * until it publishes it: no lock needed to reset it. */
#define claim_slot(table) ({						\
	typeof(&table[0]) __s = NULL;					\
	size_t __i;							\
									\
	pthread_mutex_lock(&handles_lock);				\
	for (__i = 0; __i < sizeof(table) / sizeof(table[0]) && !__s;	\
	     __i++)							\
		if (hslot_claim(&table[__i].h))				\
			__s = &table[__i];				\
	pthread_mutex_unlock(&handles_lock);				\
	__s;								\
})

#endif /* UF_API_HANDLE_H */
