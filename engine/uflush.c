// SPDX-License-Identifier: MIT
/*
 * engine/uflush.c - the public API (include/uflush.h) on top of the kernel
 * mirror: caches, devices, files and pages as handles, argument checks, and
 * the system calls' glue (fsync, sync, close).
 *
 * Objects live in tables that are never freed while the process runs (like
 * file descriptors); a handle names a slot and the generation it was opened
 * with, so a closed handle is -EBADF, never a use after free nor the next
 * object of the slot.  Every call counts itself in on its handle's slot for
 * its duration; a close marks the slot closed, waits for the calls in it to
 * leave, then tears the object down (see "Handle slots").
 */
#include <errno.h>
#include <limits.h>
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
	pthread_mutex_t files_lock;	/* open/close of this device's files */
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
	struct uf_cache_slot *cs;	/* a user of the cache while held */
	struct uf_file *file;		/* UF_PAGE_WRITE: a user of it */
	uint8_t cs_shard, file_shard;	/* the shards those users are in */
};

static struct uf_cache_slot caches[UF_MAX_CACHES];
static struct uf_dev devs[UF_MAX_DEVS];
static int64_t cache_users[HSLOT_SHARDS * UF_MAX_CACHES]
	__attribute__((aligned(64)));
static int64_t dev_users[HSLOT_SHARDS * UF_MAX_DEVS]
	__attribute__((aligned(64)));
static struct uf_file *file_chunks[FILE_CHUNKS];
static struct uf_page_slot *pslot_chunks[PSLOT_CHUNKS];
static uint64_t pslot_free_head;	/* ABA tag << 32 | index + 1 */
static unsigned int nr_pslot_chunks;	/* pslot_grow_lock */
static pthread_mutex_t pslot_grow_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int cache_hz;	/* the hz of open caches; 0 = none open */
static unsigned int nr_open_caches;
/* Closers waiting for users to leave or objects to go (rare: one queue). */
static DECLARE_WAIT_QUEUE_HEAD(handles_wq);

/* ------------------------------------------------------------------ */
/* Handle slots                                                        */

static inline uint64_t s_gen(uint64_t s)
{
	return s >> S_GEN_SHIFT;
}

static void *h_make(enum h_kind kind, uint32_t idx, uint64_t gen)
{
	return (void *)(uintptr_t)(gen << H_GEN_SHIFT |
				   (uint64_t)idx << H_KIND_BITS | kind);
}

static bool h_decode(const void *h, enum h_kind kind, uint32_t *idx,
		     uint64_t *gen)
{
	uint64_t v = (uintptr_t)h;

	if ((v & ((1u << H_KIND_BITS) - 1)) != kind)
		return false;
	*idx = (uint32_t)(v >> H_KIND_BITS) & (H_IDX_MAX - 1);
	*gen = v >> H_GEN_SHIFT;
	return true;
}

static unsigned int next_shard;

/* The calling thread's shard, given out round-robin at its first call. */
static unsigned int my_shard(void)
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
static uint64_t hslot_enter(struct hslot *s, unsigned int shard)
{
	if (!s->users)
		return __atomic_fetch_add(&s->state, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&s->users[shard * s->stride], 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&s->state, __ATOMIC_SEQ_CST);
}

/* A user leaves by the shard it entered by. */
static void hslot_put_shard(struct hslot *s, unsigned int shard)
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

static void hslot_put(struct hslot *s)
{
	hslot_put_shard(s, my_shard());
}

/* Count a caller in if the slot still holds generation gen, open. */
static bool hslot_get(struct hslot *s, uint64_t gen)
{
	unsigned int shard = my_shard();
	uint64_t old = hslot_enter(s, shard);

	if (s_gen(old) == gen && (old & S_LIVE))
		return true;
	hslot_put_shard(s, shard);
	return false;
}

/* The same for whatever generation is open (walks over a table). */
static bool hslot_get_live(struct hslot *s, uint64_t *gen)
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

/* Before any call can reach a slot: the static tables' shards. */
__attribute__((constructor)) static void hslot_tables_init(void)
{
	unsigned int i;

	for (i = 0; i < UF_MAX_CACHES; i++) {
		caches[i].h.users = &cache_users[i];
		caches[i].h.stride = UF_MAX_CACHES;
	}
	for (i = 0; i < UF_MAX_DEVS; i++) {
		devs[i].h.users = &dev_users[i];
		devs[i].h.stride = UF_MAX_DEVS;
	}
}

/* One more user for a caller already counted in (a page handle's pin). */
static unsigned int hslot_pin(struct hslot *s)
{
	unsigned int shard = my_shard();

	hslot_enter(s, shard);
	return shard;
}

/* Close generation gen: from now on its calls get -EBADF.  Only one of
 * racing closers wins. */
static bool hslot_kill(struct hslot *s, uint64_t gen)
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

static bool hslot_idle(struct hslot *s)
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
static void hslot_drain(struct hslot *s)
{
	wait_event(handles_wq, hslot_idle(s));
}

/* The generation the next open of this (not live) slot gets. */
static uint64_t hslot_gen(struct hslot *s)
{
	return s_gen(__atomic_load_n(&s->state, __ATOMIC_ACQUIRE));
}

/* Open: what was set up before is seen by every caller counted in. */
static uint64_t hslot_publish(struct hslot *s)
{
	return s_gen(__atomic_fetch_add(&s->state, S_LIVE, __ATOMIC_ACQ_REL));
}

static bool hslot_retired(struct hslot *s)
{
	return hslot_gen(s) >= UF_HANDLE_GEN_MAX;
}

/* Take a free slot (handles_lock held). */
static bool hslot_claim(struct hslot *s)
{
	if (s->taken || hslot_retired(s))
		return false;
	s->taken = true;
	return true;
}

static void hslot_release(struct hslot *s)
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

static struct uf_cache_slot *cache_at(uint32_t idx)
{
	return idx < UF_MAX_CACHES ? &caches[idx] : NULL;
}

static struct uf_dev *dev_at(uint32_t idx)
{
	return idx < UF_MAX_DEVS ? &devs[idx] : NULL;
}

static struct uf_file *file_at(uint32_t idx)
{
	return chunk_entry(file_chunks, FILE_CHUNK, idx);
}

static struct uf_page_slot *pslot_at(uint32_t idx)
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
static struct hslot *hslot_of(const void *h, uint64_t *gen)
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

static struct uf_cache_slot *cache_get(struct uf_cache *h)
{
	return h_get(h, H_CACHE, cache_at);
}

static struct uf_dev *dev_get(struct uf_dev *h)
{
	return h_get(h, H_DEV, dev_at);
}

static struct uf_file *file_get(struct uf_file *h)
{
	return h_get(h, H_FILE, file_at);
}

static struct uf_page_slot *pslot_get(struct uf_page *h)
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

static struct uf_cache_slot *cache_slot_of(struct uf_cache *c)
{
	return container_of(c, struct uf_cache_slot, cache);
}

long uf_handle_slot(const void *handle)
{
	uint64_t gen;
	struct hslot *s = hslot_of(handle, &gen);

	return s ? (long)(((uintptr_t)handle >> H_KIND_BITS) &
			  (H_IDX_MAX - 1)) : -EBADF;
}

uint64_t uf_handle_gen(const void *handle)
{
	return (uintptr_t)handle >> H_GEN_SHIFT;
}

int uf_handle_age(const void *closed, uint64_t gen)
{
	struct hslot *s;
	uint64_t old, g;
	int ret = 0;

	s = hslot_of(closed, &g);
	if (!s || ((uintptr_t)closed & ((1u << H_KIND_BITS) - 1)) == H_PAGE)
		return -EBADF;	/* page slots are not aged */
	if (gen > UF_HANDLE_GEN_MAX)
		return -EINVAL;
	pthread_mutex_lock(&handles_lock);
	old = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
	if (s->taken || (old & S_LIVE))
		ret = -EBUSY;
	while (!ret && !__atomic_compare_exchange_n(&s->state, &old,
			(old & S_USERS) | gen << S_GEN_SHIFT, true,
			__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		;
	pthread_mutex_unlock(&handles_lock);
	return ret;
}

static int uf_dev_close_cascade(struct uf_dev *d, uint64_t gen);

/* ------------------------------------------------------------------ */
/* Cache                                                               */

int uf_cache_config_init(struct uf_cache_config *cfg)
{
	if (!cfg)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_pages = 65536;
	cfg->hz = 1000;
	cfg->max_io_pages = 256;
	cfg->dirty_ratio = 20;
	cfg->dirty_background_ratio = 10;
	cfg->dirty_expire_centisecs = 3000;
	cfg->dirty_writeback_centisecs = 500;
	return 0;
}

static int check_cache_config(const struct uf_cache_config *cfg)
{
	if (cfg->nr_pages < 16 || cfg->nr_pages > (1ul << 32))
		return -EINVAL;
	if (cfg->hz < 100 || cfg->hz > 10000)
		return -EINVAL;
	if (cfg->max_io_pages < 1 || cfg->max_io_pages > 1024)
		return -EINVAL;
	if (cfg->dirty_ratio > 100 || cfg->dirty_background_ratio > 100)
		return -EINVAL;
	if (cfg->mem_limit_pages && (cfg->mem_limit_pages < 16 ||
				     cfg->mem_limit_pages > cfg->nr_pages))
		return -EINVAL;
	return 0;
}


static void cache_init_tunables(struct uf_cache *c,
				const struct uf_cache_config *cfg)
{
	c->vm.vm_dirty_ratio = cfg->dirty_ratio;
	c->vm.dirty_background_ratio = cfg->dirty_background_ratio;
	c->vm.vm_dirty_bytes = cfg->dirty_bytes;
	c->vm.dirty_background_bytes = cfg->dirty_background_bytes;
	c->vm.dirty_expire_interval = cfg->dirty_expire_centisecs;
	c->vm.dirty_writeback_interval = cfg->dirty_writeback_centisecs;
	c->max_io_pages = cfg->max_io_pages;
}

/* jiffies are one clock per process: every open cache shares one HZ. */
static int claim_hz(unsigned int hz)
{
	int ret = 0;

	pthread_mutex_lock(&handles_lock);
	if (nr_open_caches && cache_hz != hz)
		ret = -EINVAL;
	else if (!nr_open_caches && (unsigned int)HZ != hz)
		ret = uf_set_hz((int)hz);
	if (!ret) {
		cache_hz = hz;
		nr_open_caches++;
	}
	pthread_mutex_unlock(&handles_lock);
	return ret;
}

static void release_hz(void)
{
	pthread_mutex_lock(&handles_lock);
	nr_open_caches--;
	pthread_mutex_unlock(&handles_lock);
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

static struct uf_cache_slot *cache_slot_get(void)
{
	struct uf_cache_slot *s = claim_slot(caches);

	if (s) {
		memset(&s->cache, 0, sizeof(s->cache));
		s->nr_devs = 0;
	}
	return s;
}

static int cache_setup(struct uf_cache *c, const struct uf_cache_config *cfg)
{
	int ret;

	cache_init_tunables(c, cfg);
	spin_lock_init(&c->bdi_lock);
	INIT_LIST_HEAD(&c->bdi_list);
	init_waitqueue_head(&c->dirty_wait);
	ret = page_pool_init(&c->pool, cfg->mem_limit_pages ?
			     cfg->mem_limit_pages : cfg->nr_pages);
	if (ret)
		return ret;
	if (cfg->mem_limit_pages)
		page_pool_set_machine(&c->pool, cfg->nr_pages);
	page_writeback_init(c);
	if (cfg->trace_path) {
		ret = uf_trace_open(c, cfg->trace_path);
		if (ret) {
			page_pool_exit(&c->pool);
			return ret;
		}
	}
	ret = kswapd_run(c);
	if (ret) {
		uf_trace_close(c);
		page_pool_exit(&c->pool);
	}
	return ret;
}

int uf_cache_open(const struct uf_cache_config *cfg, struct uf_cache **out)
{
	struct uf_cache_config def;
	struct wb_policy *pol;
	struct uf_cache_slot *s;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg) {
		uf_cache_config_init(&def);
		cfg = &def;
	}
	ret = check_cache_config(cfg);
	if (ret)
		return ret;
	pol = kzalloc(sizeof(*pol));
	if (!pol)
		return -ENOMEM;
	ret = wb_policy_resolve(cfg->policy, pol);
	if (ret) {
		kfree(pol);
		return ret;
	}
	ret = claim_hz(cfg->hz);
	if (ret)
		goto out_policy;
	s = cache_slot_get();
	if (!s) {
		ret = -EMFILE;
		goto out_hz;
	}
	s->cache.policy = pol;
	ret = cache_setup(&s->cache, cfg);
	if (ret)
		goto out_slot;
	pr_info("cache: %zu pages, HZ=%u, policy %s", cfg->nr_pages, cfg->hz,
		pol->spec);
	*out = h_make(H_CACHE, (uint32_t)(s - caches), hslot_publish(&s->h));
	return 0;

out_slot:
	hslot_release(&s->h);
out_hz:
	release_hz();
out_policy:
	wb_policy_release(pol);
	kfree(pol);
	return ret;
}

/* The string lives as long as the cache: the caller's to keep it open. */
const char *uf_cache_policy(struct uf_cache *h)
{
	return with_handle(cache_get, h, s, NULL,
			   (const char *)s->cache.policy->spec);
}

/*
 * Page handles held now on cache @s (or, with @f, UF_PAGE_WRITE ones on
 * that file): a census of the live page slots, so that a close never waits
 * for a handle that only its own caller could put (the kernel's umount of
 * a busy filesystem is -EBUSY, not a sleep).  Rare, so it costs the closer
 * a walk over the slots, not every get and put a count.  Handles got by
 * calls racing with the census may be missed: the close then waits for
 * them as for the calls that got them.
 */
static unsigned long page_handles_held(struct uf_cache_slot *s,
				       struct uf_file *f)
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
static int close_busy(struct uf_cache_slot *s, struct uf_file *f,
		      const char *what)
{
	unsigned long n = page_handles_held(s, f);

	if (!n)
		return 0;
	pr_warn("%s: %lu page handle%s%s still held: uf_page_put %s first; "
		"nothing closed (-EBUSY)", what, n, n == 1 ? "" : "s",
		f ? " (UF_PAGE_WRITE)" : "", n == 1 ? "it" : "them");
	return -EBUSY;
}

/*
 * A uf_file_ops callback that closes its own file, or the device or cache
 * of it, would wait for itself: the flusher (or the fsync caller) that
 * runs the callback is inside writeback of that file.  -EDEADLK instead.
 */
static bool closing_from_callback(struct uf_cache_slot *s, struct uf_dev *d,
				  struct uf_file *f)
{
	struct inode *inode = current->in_file_op;
	struct uf_file *cb;

	if (!inode)
		return false;
	cb = container_of(inode, struct uf_file, inode);
	if (f ? cb == f : d ? cb->dev == d : cb->dev->cache == &s->cache) {
		pr_warn("a uf_file_ops callback closed its own %s: -EDEADLK",
			f ? "file" : d ? "device" : "cache");
		return true;
	}
	return false;
}

/* Close every device of the cache, and their files (cache close). */
static int cache_close_devs(struct uf_cache_slot *s)
{
	struct uf_dev *d;
	int i, ret = 0, err;
	uint64_t gen;
	bool mine;

	for (i = 0; i < UF_MAX_DEVS; i++) {
		d = &devs[i];
		if (!hslot_get_live(&d->h, &gen))
			continue;
		mine = d->cache == &s->cache;
		hslot_put(&d->h);
		if (!mine)
			continue;
		err = uf_dev_close_cascade(d, gen);
		if (!ret)
			ret = err;
	}
	return ret;
}

static bool cache_has_devs(struct uf_cache_slot *s)
{
	return __atomic_load_n(&s->nr_devs, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Calls on the cache and page handles are waited for first (the pool goes
 * away), then each device is closed with its files; a device closed by
 * someone else meanwhile is waited for.
 */
static int cache_close(struct uf_cache *h, bool discard)
{
	struct uf_cache_slot *s;
	struct uf_cache *c;
	uint64_t gen;
	uint32_t idx;
	int ret;

	if (!h_decode(h, H_CACHE, &idx, &gen) || idx >= UF_MAX_CACHES)
		return -EBADF;
	s = &caches[idx];
	if (s_gen(__atomic_load_n(&s->h.state, __ATOMIC_ACQUIRE)) != gen)
		return -EBADF;
	if (closing_from_callback(s, NULL, NULL))
		return -EDEADLK;
	ret = close_busy(s, NULL, "uf_cache_close");
	if (ret)
		return ret;
	if (!hslot_kill(&s->h, gen))
		return -EBADF;
	hslot_drain(&s->h);
	/* atomic: a file closed by its own caller meanwhile reads it */
	__atomic_store_n(&s->discard, discard, __ATOMIC_RELAXED);
	ret = cache_close_devs(s);
	wait_event(handles_wq, !cache_has_devs(s));
	c = &s->cache;
	kswapd_stop(c);
	uf_trace_close(c);
	page_writeback_exit(c);
	page_pool_exit(&c->pool);
	wb_policy_release(c->policy);
	kfree(c->policy);
	c->policy = NULL;
	__atomic_store_n(&s->discard, false, __ATOMIC_RELAXED);
	hslot_release(&s->h);
	release_hz();
	return ret;
}

int uf_cache_close(struct uf_cache *h)
{
	return cache_close(h, false);
}

/* ---- begin: what a benchmark harness needs (issue 13) ---- */
int uf_cache_close_discard(struct uf_cache *h, const char *confirm)
{
	struct uf_cache_slot *s = cache_get(h);

	if (!s)
		return -EBADF;
	hslot_put(&s->h);
	if (!confirm || strcmp(confirm, UF_DISCARD_DIRTY))
		return -EINVAL;
	return cache_close(h, true);
}
/* ---- end: what a benchmark harness needs ---- */

/* /proc/sys/vm names → fields. */
static unsigned long *tunable_field(struct uf_cache *c, const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} map[] = {
		{ "dirty_ratio", offsetof(struct vm_tunables, vm_dirty_ratio) },
		{ "dirty_background_ratio",
		  offsetof(struct vm_tunables, dirty_background_ratio) },
		{ "dirty_bytes", offsetof(struct vm_tunables, vm_dirty_bytes) },
		{ "dirty_background_bytes",
		  offsetof(struct vm_tunables, dirty_background_bytes) },
		{ "dirty_expire_centisecs",
		  offsetof(struct vm_tunables, dirty_expire_interval) },
		{ "dirty_writeback_centisecs",
		  offsetof(struct vm_tunables, dirty_writeback_interval) },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].name, name))
			return (unsigned long *)((char *)&c->vm + map[i].off);
	return NULL;
}

static int cache_set_tunable(struct uf_cache *c, const char *name,
			     unsigned long value)
{
	unsigned long *f;

	if (!name)
		return -EINVAL;
	f = tunable_field(c, name);
	if (!f)
		return -ENOENT;
	if (strstr(name, "ratio") && value > 100)
		return -EINVAL;
	/* as the kernel's dirty_bytes handler: at least two pages */
	if (!strcmp(name, "dirty_bytes") && value && value < 2 * PAGE_SIZE)
		return -EINVAL;
	if (!strcmp(name, "dirty_bytes") && !value &&
	    !__atomic_load_n(&c->vm.vm_dirty_ratio, __ATOMIC_RELAXED))
		return -EINVAL;	/* would leave no dirty limit at all */
	__atomic_store_n(f, value, __ATOMIC_RELAXED);
	/* as the sysctl handlers do: a ratio clears the bytes, and back;
	 * atomic, as the flushers and throttled writers read them */
	if (!strcmp(name, "dirty_ratio"))
		__atomic_store_n(&c->vm.vm_dirty_bytes, 0, __ATOMIC_RELAXED);
	else if (!strcmp(name, "dirty_bytes") && value)
		__atomic_store_n(&c->vm.vm_dirty_ratio, 0, __ATOMIC_RELAXED);
	else if (!strcmp(name, "dirty_background_ratio"))
		__atomic_store_n(&c->vm.dirty_background_bytes, 0,
				 __ATOMIC_RELAXED);
	else if (!strcmp(name, "dirty_background_bytes") && value)
		__atomic_store_n(&c->vm.dirty_background_ratio, 0,
				 __ATOMIC_RELAXED);
	if (!strcmp(name, "dirty_ratio") || !strcmp(name, "dirty_bytes")) {
		update_completion_period(c);
		writeback_set_ratelimit(c);
	}
	return 0;
}

int uf_cache_set_tunable(struct uf_cache *h, const char *name,
			 unsigned long value)
{
	return with_cache(h, s, cache_set_tunable(&s->cache, name, value));
}

static int cache_get_tunable(struct uf_cache *c, const char *name,
			     unsigned long *value)
{
	unsigned long *f = name && value ? tunable_field(c, name) : NULL;

	if (!name || !value)
		return -EINVAL;
	if (!f)
		return -ENOENT;
	*value = __atomic_load_n(f, __ATOMIC_RELAXED);
	return 0;
}

int uf_cache_get_tunable(struct uf_cache *h, const char *name,
			 unsigned long *value)
{
	return with_cache(h, s, cache_get_tunable(&s->cache, name, value));
}

static int cache_fill_stats(struct uf_cache *c, struct uf_cache_stats *st)
{
	unsigned long bg, dirty;

	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	global_dirty_limits(c, &bg, &dirty);
	st->nr_pages = c->pool.nr;
	/* a domain's: the machine outside it is not the cache's */
	st->nr_free = global_page_state(c, NR_FREE_PAGES);
	st->nr_free = st->nr_free > c->pool.nr_outside ?
		      st->nr_free - c->pool.nr_outside : 0;
	st->nr_file_pages = global_page_state(c, NR_FILE_PAGES);
	st->nr_dirty = global_page_state(c, NR_FILE_DIRTY);
	st->nr_writeback = global_page_state(c, NR_WRITEBACK);
	st->nr_dirtied = global_page_state(c, NR_DIRTIED);
	st->nr_written = global_page_state(c, NR_WRITTEN);
	st->dirty_thresh = dirty;
	st->background_thresh = bg;
	st->write_errors = (unsigned long)__atomic_load_n(&c->write_errors,
							  __ATOMIC_RELAXED);
	reclaim_fill_stats(c, st);
	st->at_jiffies = jiffies;
	st->at_ns = uf_now_ns();
	return 0;
}

int uf_cache_stats(struct uf_cache *h, struct uf_cache_stats *st)
{
	return with_cache(h, s, cache_fill_stats(&s->cache, st));
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */

static struct uf_dev *dev_slot_get(void)
{
	struct uf_dev *d = claim_slot(devs);

	/* all but the slot, which stale callers may touch */
	if (d)
		memset((char *)d + sizeof(d->h), 0, sizeof(*d) - sizeof(d->h));
	return d;
}

/* The kernel names a bdi by its device number; files get 0:N. */
static dev_t dev_number(const char *path, struct uf_dev *d)
{
	struct stat st;

	if (!stat(path, &st) && S_ISBLK(st.st_mode))
		return st.st_rdev;
	return makedev(0, (unsigned int)(d - devs) + 1);
}

static void sb_init(struct super_block *sb, struct uf_dev *d, dev_t devt)
{
	memset(sb, 0, sizeof(*sb));
	sb->s_dev = devt;
	sb->s_bdi = &d->bdi;
	sb->s_cache = d->cache;
	init_rwsem(&sb->s_umount);
	spin_lock_init(&sb->s_inode_list_lock);
	INIT_LIST_HEAD(&sb->s_inodes);
}

static int dev_setup(struct uf_dev *d, struct uf_cache *c, const char *path,
		     const struct uf_dev_config *cfg)
{
	struct uf_bdev_config bcfg;
	unsigned int lim;
	char name[32];
	dev_t devt;
	int ret;

	uf_bdev_config_init(&bcfg);
	if (cfg) {
		bcfg.engine = cfg->engine;
		if (cfg->queue_depth)
			bcfg.queue_depth = cfg->queue_depth;
		bcfg.flags = cfg->flags & (UF_BDEV_FORCE | UF_BDEV_SHAPED);
	}
	ret = uf_bdev_open(path, &bcfg, &d->bdev);
	if (ret)
		return ret;
	uf_bdev_size(d->bdev, &d->size);
	/* best effort: where the engine cannot, requests pin their pages */
	uf_bdev_register_memory(d->bdev, c->pool.frames,
				c->pool.nr << PAGE_SHIFT);
	d->cache = c;
	devt = dev_number(path, d);
	snprintf(name, sizeof(name), "%u:%u", major(devt), minor(devt));
	bdi_init(&d->bdi, c, d->bdev, name);
	/* a request the block layer would split goes no further unsplit */
	if (!uf_bdev_max_pages(d->bdev, &lim) && lim &&
	    lim < d->bdi.max_io_pages)
		d->bdi.max_io_pages = lim;
	sb_init(&d->sb, d, devt);
	d->bdi.sb = &d->sb;
	pthread_mutex_init(&d->files_lock, NULL);
	ret = bdi_register(&d->bdi, !(cfg && (cfg->flags & UF_DEV_NO_FLUSHER)));
	if (ret) {
		uf_bdev_close(d->bdev);
		return ret;
	}
	return 0;
}

int uf_dev_open(struct uf_cache *h, const char *path,
		const struct uf_dev_config *cfg, struct uf_dev **out)
{
	struct uf_cache_slot *s;
	struct uf_dev *d;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	s = cache_get(h);
	if (!s)
		return -EBADF;
	ret = -EINVAL;
	if (!path || (cfg && (cfg->flags & ~(UF_DEV_FORCE | UF_DEV_SHAPED |
					     UF_DEV_NO_FLUSHER))))
		goto out;
	ret = -EMFILE;
	d = dev_slot_get();
	if (!d)
		goto out;
	ret = dev_setup(d, &s->cache, path, cfg);
	if (ret) {
		hslot_release(&d->h);
		goto out;
	}
	/* before the cache's user is dropped: its close counts this one */
	__atomic_add_fetch(&s->nr_devs, 1, __ATOMIC_ACQ_REL);
	*out = h_make(H_DEV, (uint32_t)(d - devs), hslot_publish(&d->h));
out:
	hslot_put(&s->h);
	return ret;
}

/* sync(2) for one device: write, wait, flush the device cache. */
static int dev_sync(struct uf_dev *d)
{
	down_read(&d->sb.s_umount);
	writeback_inodes_sb(&d->sb, WB_REASON_SYNC);
	sync_inodes_sb(&d->sb);
	up_read(&d->sb.s_umount);
	return uf_bdev_flush(d->bdev);
}

static void dev_teardown(struct uf_dev *d)
{
	bdi_unregister(&d->bdi);
	bdi_destroy(&d->bdi);
	uf_bdev_close(d->bdev);
	pthread_mutex_destroy(&d->files_lock);
}

/* d->umount from @from to @to, unless someone moved it first. */
static bool dev_umount_move(struct uf_dev *d, int from, int to)
{
	return __atomic_compare_exchange_n(&d->umount, &from, to, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static int dev_release_umount(struct uf_dev *d)
{
	if (!dev_umount_move(d, UMOUNT_HELD, UMOUNT_NONE))
		return -EINVAL;
	up_write(&d->sb.s_umount);
	return 0;
}

/* Drop a uf_dev_hold_umount() the closer inherits, so that a uf_sync()
 * waiting for s_umount can leave and the close does not wait for it
 * forever. */
static void dev_drop_umount(struct uf_dev *d)
{
	dev_release_umount(d);	/* -EINVAL: none held */
}

static int file_close_gen(struct uf_file *f, uint64_t gen);

/* Close every file of a closing device (cache close). */
static int dev_close_files(struct uf_dev *d)
{
	struct uf_file *f;
	int ret = 0, err;
	uint32_t i;
	uint64_t gen;
	bool mine;

	for (i = 0; i < FILE_CHUNK * FILE_CHUNKS; i++) {
		f = file_at(i);
		if (!f) {
			i += FILE_CHUNK - 1;	/* chunk not allocated */
			continue;
		}
		if (!hslot_get_live(&f->h, &gen))
			continue;
		mine = f->dev == d;
		hslot_put(&f->h);
		if (!mine)
			continue;
		err = file_close_gen(f, gen);
		if (!ret && err != -EBADF)	/* -EBADF: closed meanwhile */
			ret = err;
	}
	return ret;
}

static bool dev_has_files(struct uf_dev *d)
{
	return __atomic_load_n(&d->nr_files, __ATOMIC_ACQUIRE) != 0;
}

/* The device is closed (no new calls, no new files): wait for the calls
 * in flight, close the files left (cascade), and tear it down. */
static int dev_finish_close(struct uf_dev *d, bool cascade)
{
	struct uf_cache_slot *s = cache_slot_of(d->cache);
	int ret = 0, err;

	dev_drop_umount(d);
	hslot_drain(&d->h);
	dev_drop_umount(d);	/* a hold that was in flight */
	if (cascade)
		ret = dev_close_files(d);
	wait_event(handles_wq, !dev_has_files(d));
	err = dev_sync(d);
	if (!ret)
		ret = err;
	dev_teardown(d);
	hslot_release(&d->h);
	__atomic_sub_fetch(&s->nr_devs, 1, __ATOMIC_ACQ_REL);
	wake_up_all(&handles_wq);
	return ret;
}

static int uf_dev_close_cascade(struct uf_dev *d, uint64_t gen)
{
	bool killed;

	pthread_mutex_lock(&d->files_lock);
	killed = hslot_kill(&d->h, gen);
	pthread_mutex_unlock(&d->files_lock);
	/* not killed: someone else's uf_dev_close; the cache waits for it */
	return killed ? dev_finish_close(d, true) : 0;
}

int uf_dev_close(struct uf_dev *h)
{
	struct uf_dev *d = dev_get(h);
	uint64_t gen = (uintptr_t)h >> H_GEN_SHIFT;
	int ret = 0;

	if (!d)
		return -EBADF;
	if (closing_from_callback(NULL, d, NULL)) {
		hslot_put(&d->h);
		return -EDEADLK;
	}
	/* under files_lock: uf_file_open checks for a closed device there */
	pthread_mutex_lock(&d->files_lock);
	if (dev_has_files(d))
		ret = -EBUSY;
	else if (!hslot_kill(&d->h, gen))
		ret = -EBADF;
	pthread_mutex_unlock(&d->files_lock);
	hslot_put(&d->h);
	return ret ? ret : dev_finish_close(d, false);
}

int uf_dev_set_shape(struct uf_dev *h, const struct uf_io_shape *shape)
{
	return with_dev(h, d, uf_bdev_set_shape(d->bdev, shape));
}

int uf_dev_stall(struct uf_dev *h, unsigned int ms)
{
	return with_dev(h, d, uf_bdev_stall(d->bdev, ms));
}

static int dev_hold_umount(struct uf_dev *d)
{
	if (!dev_umount_move(d, UMOUNT_NONE, UMOUNT_TAKING))
		return -EBUSY;
	down_write(&d->sb.s_umount);
	__atomic_store_n(&d->umount, UMOUNT_HELD, __ATOMIC_RELEASE);
	return 0;
}

int uf_dev_hold_umount(struct uf_dev *h)
{
	return with_dev(h, d, dev_hold_umount(d));
}

int uf_dev_release_umount(struct uf_dev *h)
{
	return with_dev(h, d, dev_release_umount(d));
}

/* Tests only: the objects stay valid while the handle is open. */
struct uf_cache *uf_cache_obj(struct uf_cache *h)
{
	return with_handle(cache_get, h, s, NULL, &s->cache);
}

struct backing_dev_info *uf_dev_bdi(struct uf_dev *h)
{
	return with_handle(dev_get, h, d, NULL, &d->bdi);
}

struct inode *uf_file_inode(struct uf_file *h)
{
	return with_handle(file_get, h, f, NULL, &f->inode);
}

/* The device's I/O counters and the snapshot's time (issue 13). */
static void dev_fill_io_stats(struct uf_dev *d, struct uf_dev_stats *st)
{
	struct uf_bdev_io_stats io;

	st->size_bytes = d->size;
	if (!uf_bdev_io_stats(d->bdev, &io)) {
		st->io_ticks_ms = io.io_ticks_ns / 1000000;
		st->write_ios = io.nr_writes;
		st->write_bytes = io.write_bytes;
		st->fixed_ios = io.nr_fixed;
	}
	st->at_jiffies = jiffies;
	st->at_ns = uf_now_ns();
}

static int dev_stats(struct uf_dev *d, struct uf_dev_stats *st)
{
	if (!st)
		return -EINVAL;
	bdi_fill_stats(&d->bdi, st);
	dev_fill_io_stats(d, st);
	return 0;
}

int uf_dev_stats(struct uf_dev *h, struct uf_dev_stats *st)
{
	return with_dev(h, d, dev_stats(d, st));
}

/* ---- begin: what a benchmark harness needs (issue 13) ---- */
static int dev_size(struct uf_dev *d, uint64_t *bytes)
{
	if (!bytes)
		return -EINVAL;
	*bytes = d->size;
	return 0;
}

int uf_dev_size(struct uf_dev *h, uint64_t *bytes)
{
	return with_dev(h, d, dev_size(d, bytes));
}

static int file_stats(struct uf_file *f, struct uf_file_stats *st)
{
	struct address_space *m = &f->inode.i_data;

	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->nr_pages = __atomic_load_n(&m->nrpages, __ATOMIC_RELAXED);
	st->pages_written = __atomic_load_n(&m->nr_written, __ATOMIC_RELAXED);
	st->at_jiffies = jiffies;
	st->at_ns = uf_now_ns();
	return 0;
}

int uf_file_stats(struct uf_file *h, struct uf_file_stats *st)
{
	return with_file(h, f, file_stats(f, st));
}

int uf_policy_resolve(const char *spec, char *buf, size_t len)
{
	struct wb_policy *pol;
	int ret;

	if (!buf || !len)
		return -EINVAL;
	pol = kzalloc(sizeof(*pol));
	if (!pol)
		return -ENOMEM;
	ret = wb_policy_resolve(spec, pol);
	if (!ret) {
		if ((size_t)snprintf(buf, len, "%s", pol->spec) >= len)
			ret = -ERANGE;
		wb_policy_release(pol);
	}
	kfree(pol);
	return ret;
}
/* ---- end: what a benchmark harness needs ---- */

int uf_sync(struct uf_cache *h)
{
	struct uf_cache_slot *s = cache_get(h);
	int i, ret = 0, err;
	struct uf_dev *d;
	uint64_t gen;

	if (!s)
		return -EBADF;
	wakeup_flusher_threads(&s->cache, 0, WB_REASON_SYNC);
	for (i = 0; i < UF_MAX_DEVS; i++) {
		d = &devs[i];
		if (!hslot_get_live(&d->h, &gen))
			continue;
		err = d->cache == &s->cache ? dev_sync(d) : 0;
		hslot_put(&d->h);
		if (!ret)
			ret = err;
	}
	hslot_put(&s->h);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

/* Never freed, like the slots (64 KiB of shards per 1024 files). */
static struct uf_file *file_chunk_alloc(uint32_t n)
{
	struct uf_file *chunk = kzalloc(FILE_CHUNK * sizeof(*chunk));
	int64_t *users = kzalloc(HSLOT_SHARDS * FILE_CHUNK * sizeof(*users));
	uint32_t j;

	if (!chunk || !users) {
		kfree(chunk);
		kfree(users);
		return NULL;
	}
	for (j = 0; j < FILE_CHUNK; j++) {
		chunk[j].idx = n * FILE_CHUNK + j;
		chunk[j].h.users = &users[j];
		chunk[j].h.stride = FILE_CHUNK;
	}
	return chunk;
}

static struct uf_file *file_slot_get(void)
{
	struct uf_file *f = NULL, *chunk;
	int i, j;

	pthread_mutex_lock(&handles_lock);
	for (i = 0; i < FILE_CHUNKS && !f; i++) {
		chunk = file_chunks[i];
		if (!chunk) {
			chunk = file_chunk_alloc((uint32_t)i);
			if (!chunk)
				break;
			__atomic_store_n(&file_chunks[i], chunk,
					 __ATOMIC_RELEASE);
		}
		for (j = 0; j < FILE_CHUNK && !f; j++) {
			if (hslot_claim(&chunk[j].h)) {
				f = &chunk[j];
				memset(&f->inode, 0, sizeof(f->inode));
				f->dev = NULL;
			}
		}
	}
	pthread_mutex_unlock(&handles_lock);
	return f;
}

/* -EEXIST for a used ino, -EBUSY for an overlapping range. */
static int check_file_conflict(struct uf_dev *d, uint64_t ino,
			       uint64_t start, uint64_t end)
{
	struct inode *inode;
	int ret = 0;

	spin_lock(&d->sb.s_inode_list_lock);
	list_for_each_entry(inode, &d->sb.s_inodes, i_sb_list) {
		uint64_t s = inode->dev_offset, e = s + (uint64_t)inode->i_size;

		if (inode->i_ino == ino) {
			ret = -EEXIST;
			break;
		}
		if (start < e && s < end) {
			ret = -EBUSY;
			break;
		}
	}
	spin_unlock(&d->sb.s_inode_list_lock);
	return ret;
}

static void inode_init(struct uf_file *f, struct uf_dev *d, uint64_t ino,
		       uint64_t off, uint64_t len)
{
	struct inode *inode = &f->inode;
	struct address_space *mapping = &inode->i_data;

	inode->i_ino = ino;
	spin_lock_init(&inode->i_lock);
	INIT_LIST_HEAD(&inode->i_wb_list);
	INIT_LIST_HEAD(&inode->i_sb_list);
	inode->i_sb = &d->sb;
	inode->i_mapping = mapping;
	inode->i_size = (loff_t)len;
	inode->dev_offset = off;
	inode->i_count = 1;
	init_waitqueue_head(&inode->i_sync_wait);

	mapping->host = inode;
	INIT_RADIX_TREE(&mapping->page_tree, 0);
	spin_lock_init(&mapping->tree_lock);
	seqcount_init(&mapping->tree_seq);
	mapping->backing_dev_info = &d->bdi;
	inode->f_wb_err = errseq_sample(&mapping->wb_err);
}

static int file_open(struct uf_dev *d, uint64_t ino, uint64_t dev_offset,
		     uint64_t length, const struct uf_file_ops *ops,
		     void *priv, struct uf_file **out)
{
	struct uf_file *f;
	uint64_t len;
	int ret;

	if (dev_offset % PAGE_SIZE || !length || length > (uint64_t)LLONG_MAX)
		return -EINVAL;
	len = (length + PAGE_SIZE - 1) & PAGE_MASK;
	if (len > d->size || dev_offset > d->size - len)
		return -ERANGE;
	f = file_slot_get();
	if (!f)
		return -EMFILE;
	pthread_mutex_lock(&d->files_lock);
	/* a device closed since dev_get() takes no new files */
	ret = __atomic_load_n(&d->h.state, __ATOMIC_ACQUIRE) & S_LIVE ?
	      check_file_conflict(d, ino, dev_offset, dev_offset + len) :
	      -EBADF;
	if (ret) {
		pthread_mutex_unlock(&d->files_lock);
		hslot_release(&f->h);
		return ret;
	}
	inode_init(f, d, ino, dev_offset, len);
	f->inode.ops = ops;
	f->inode.priv = priv;
	f->inode.handle = h_make(H_FILE, f->idx, hslot_gen(&f->h));
	f->dev = d;
	spin_lock(&d->sb.s_inode_list_lock);
	list_add_tail(&f->inode.i_sb_list, &d->sb.s_inodes);
	__atomic_add_fetch(&d->sb.s_nr_inodes, 1, __ATOMIC_RELAXED);
	spin_unlock(&d->sb.s_inode_list_lock);
	__atomic_add_fetch(&d->nr_files, 1, __ATOMIC_ACQ_REL);
	hslot_publish(&f->h);
	pthread_mutex_unlock(&d->files_lock);
	*out = f->inode.handle;
	return 0;
}

int uf_file_open(struct uf_dev *h, uint64_t ino, uint64_t dev_offset,
		 uint64_t length, const struct uf_file_ops *ops, void *priv,
		 struct uf_file **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	return with_dev(h, d,
			file_open(d, ino, dev_offset, length, ops, priv, out));
}

/*
 * evict(): write everything, take the inode off the writeback lists under
 * I_FREEING (after any running writeback of it), drop its pages.
 */
static int file_evict(struct uf_file *f)
{
	struct inode *inode = &f->inode;
	int ret = 0;

	/* a discarding cache close: I_FREEING keeps the flusher off, and
	 * the truncate below cancels the dirty pages unwritten */
	if (!__atomic_load_n(&cache_slot_of(f->dev->cache)->discard,
			     __ATOMIC_RELAXED))
		ret = write_inode_now(inode, 1);
	spin_lock(&inode->i_lock);
	inode->i_state |= I_FREEING;
	spin_unlock(&inode->i_lock);
	inode_wait_for_pageout(inode);	/* seed 003 works hold it */
	inode_wait_for_writeback_sync(inode);
	inode_wb_list_del(inode);
	truncate_inode_pages(inode->i_mapping, 0);
	return ret;
}

/*
 * Close generation gen of the file: new calls get -EBADF at once; the calls
 * in flight (an fsync waiting for I/O, a writer in the dirty throttle) and
 * UF_PAGE_WRITE page handles are waited for; then the inode is evicted.
 * Nothing is held while waiting, so the flusher and the throttled writers
 * keep going.
 */
static int file_close_gen(struct uf_file *f, uint64_t gen)
{
	struct uf_dev *d;
	int ret, err;

	if (!hslot_kill(&f->h, gen))
		return -EBADF;
	hslot_drain(&f->h);
	d = f->dev;
	pthread_mutex_lock(&d->files_lock);
	ret = file_evict(f);
	err = errseq_check_and_advance(&f->inode.i_data.wb_err,
				       &f->inode.f_wb_err);
	spin_lock(&d->sb.s_inode_list_lock);
	list_del_init(&f->inode.i_sb_list);
	__atomic_sub_fetch(&d->sb.s_nr_inodes, 1, __ATOMIC_RELAXED);
	spin_unlock(&d->sb.s_inode_list_lock);
	radix_tree_destroy(&f->inode.i_data.page_tree);
	pthread_mutex_unlock(&d->files_lock);
	hslot_release(&f->h);
	/* last: a cache close waits for this before the device goes */
	__atomic_sub_fetch(&d->nr_files, 1, __ATOMIC_ACQ_REL);
	wake_up_all(&handles_wq);
	return err ? err : (ret == -EIO ? 0 : ret);
}

int uf_file_close(struct uf_file *h)
{
	uint64_t gen;
	uint32_t idx;
	struct uf_file *f;
	int ret;

	if (!h_decode(h, H_FILE, &idx, &gen))
		return -EBADF;
	f = file_at(idx);
	if (!f || s_gen(__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE)) != gen)
		return -EBADF;
	if (closing_from_callback(NULL, NULL, f))
		return -EDEADLK;
	ret = close_busy(NULL, f, "uf_file_close");
	return ret ? ret : file_close_gen(f, gen);
}

/* A write's arguments: 1 to go on, 0 for nothing to write, or -errno. */
static inline ssize_t file_pwrite_check(struct uf_file *f, const void *buf,
					size_t len, uint64_t offset)
{
	if (!buf && len)
		return -EINVAL;
	if (len > SSIZE_MAX || offset > (uint64_t)f->inode.i_size ||
	    len > (uint64_t)f->inode.i_size - offset)
		return -EFBIG;
	return len ? 1 : 0;
}

static ssize_t file_pwrite(struct uf_file *f, const void *buf, size_t len,
			   uint64_t offset)
{
	ssize_t ret = file_pwrite_check(f, buf, len, offset);

	if (ret <= 0)
		return ret;
	return generic_perform_write(&f->inode, buf, len, (loff_t)offset);
}

ssize_t uf_pwrite(struct uf_file *h, const void *buf, size_t len,
		  uint64_t offset)
{
	return with_file(h, f, file_pwrite(f, buf, len, offset));
}

static ssize_t file_pread(struct uf_file *f, void *buf, size_t len,
			  uint64_t offset)
{
	if (!buf && len)
		return -EINVAL;
	if (offset >= (uint64_t)f->inode.i_size || !len)
		return 0;
	if (len > (uint64_t)f->inode.i_size - offset)
		len = (size_t)((uint64_t)f->inode.i_size - offset);
	if (len > SSIZE_MAX)
		len = SSIZE_MAX & PAGE_MASK;
	return filemap_read(&f->inode, buf, len, (loff_t)offset);
}

ssize_t uf_pread(struct uf_file *h, void *buf, size_t len, uint64_t offset)
{
	return with_file(h, f, file_pread(f, buf, len, offset));
}

/*
 * generic_file_fsync(): data, then the inode if it is dirty (fdatasync:
 * only if I_DIRTY_DATASYNC), then the device's cache.  Write errors are
 * reported through errseq, once per error.
 */
static int file_fsync(struct uf_file *f, bool datasync)
{
	struct inode *inode = &f->inode;
	unsigned long state;
	int ret, err;

	ret = filemap_write_and_wait(inode->i_mapping);
	if (ret == -EIO)
		ret = 0;	/* reported below, once, by errseq */
	spin_lock(&inode->i_lock);
	state = inode->i_state;
	spin_unlock(&inode->i_lock);
	if ((state & (I_DIRTY_SYNC | I_DIRTY_DATASYNC)) &&
	    (!datasync || (state & I_DIRTY_DATASYNC))) {
		err = sync_inode_metadata(inode, 1);
		if (!ret)
			ret = err;
	}
	err = uf_bdev_flush(f->dev->bdev);
	if (!ret)
		ret = err;
	err = errseq_check_and_advance(&inode->i_data.wb_err,
				       &inode->f_wb_err);
	return err ? err : ret;
}

int uf_fsync(struct uf_file *h)
{
	return with_file(h, f, file_fsync(f, false));
}

int uf_fdatasync(struct uf_file *h)
{
	return with_file(h, f, file_fsync(f, true));
}

static int file_mark_inode_dirty(struct uf_file *f, unsigned int flags)
{
	if (!flags || (flags & ~(UF_I_DIRTY_SYNC | UF_I_DIRTY_DATASYNC)))
		return -EINVAL;
	__mark_inode_dirty(&f->inode, (int)flags);
	return 0;
}

int uf_file_mark_inode_dirty(struct uf_file *h, unsigned int flags)
{
	return with_file(h, f, file_mark_inode_dirty(f, flags));
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

static void pslot_cache_key_init(void)
{
	if (pthread_key_create(&pslot_cache_key, pslot_cache_drain))
		pr_warn("no per-thread page slot caches: pthread_key_create failed");
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
			__atomic_store_n(&pslot_chunks[nr_pslot_chunks++],
					 chunk, __ATOMIC_RELEASE);
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

static int page_lookup(struct uf_file *f, unsigned long index,
		       unsigned int flags, struct page **pagep)
{
	struct page *page;
	int ret;

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
	struct page *page;
	uint64_t gen;
	int ret;

	if (flags & ~(UF_PAGE_NOREAD | UF_PAGE_NOCREATE | UF_PAGE_WRITE))
		return -EINVAL;
	if (index >= (unsigned long)(f->inode.i_size >> PAGE_SHIFT))
		return -EFBIG;
	if (!hslot_get_live(&s->h, &gen))
		return -EBADF;	/* the cache is closing */
	ps = pslot_alloc();
	ret = ps ? page_lookup(f, index, flags, &page) : -EMFILE;
	if (ret) {
		if (ps)
			pslot_free(ps);
		hslot_put(&s->h);
		return ret;
	}
	/* the page-level count the allocator reads (a pinned frame) */
	__atomic_add_fetch(&page->uf_users, 1, __ATOMIC_ACQ_REL);
	ps->page = page;
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
		ClearPageOwnerPriv1(page);
		dirtied = PageDirty(page);
		unlock_page(page);
	}
	__atomic_sub_fetch(&page->uf_users, 1, __ATOMIC_ACQ_REL);
	put_page(&ps->cs->cache, page);
	if (dirtied)
		balance_dirty_pages_ratelimited(f->inode.i_mapping);
	if (f)
		hslot_put_shard(&f->h, ps->file_shard);
	hslot_put_shard(&ps->cs->h, ps->cs_shard);
	pslot_free(ps);
	return 0;
}

/* ---- begin: the dirty throttle's API (issue 9) ---- */
/* kept together at the end of the file to ease merging */
#include "mm/dirty-throttle.h"

static ssize_t file_pwrite_nb(struct uf_file *f, const void *buf, size_t len,
			      uint64_t offset, uint64_t *pause_ns)
{
	unsigned long nr_pages;
	long pause;
	ssize_t n;

	if (!pause_ns)
		return -EINVAL;
	*pause_ns = 0;
	n = file_pwrite_check(f, buf, len, offset);
	if (n <= 0)
		return n;
	nr_pages = (unsigned long)(((offset + len - 1) >> PAGE_SHIFT) -
				   (offset >> PAGE_SHIFT) + 1);
	if (balance_dirty_pages_nowait_begin(f->inode.i_mapping, nr_pages,
					     &pause)) {
		*pause_ns = (uint64_t)jiffies_to_usecs((unsigned long)pause) *
			    1000;
		return -EAGAIN;
	}
	n = generic_perform_write(&f->inode, buf, len, (loff_t)offset);
	balance_dirty_pages_nowait_end();
	return n;
}

ssize_t uf_pwrite_nb(struct uf_file *h, const void *buf, size_t len,
		     uint64_t offset, uint64_t *pause_ns)
{
	return with_file(h, f, file_pwrite_nb(f, buf, len, offset, pause_ns));
}

/* /sys/class/bdi/<dev>/ names, as the kernel's sysfs files */
static int dev_set_bdi_tunable(struct backing_dev_info *bdi,
			       const char *name, uint64_t value)
{
	if (!name)
		return -EINVAL;
	if (!strcmp(name, "min_ratio") || !strcmp(name, "max_ratio")) {
		if (value > 100)
			return -EINVAL;
		return name[1] == 'i' ?
		       bdi_set_min_ratio(bdi, (unsigned int)value) :
		       bdi_set_max_ratio(bdi, (unsigned int)value);
	}
	if (!strcmp(name, "min_bytes"))
		return bdi_set_min_bytes(bdi, value);
	if (!strcmp(name, "max_bytes"))
		return bdi_set_max_bytes(bdi, value);
	if (!strcmp(name, "strict_limit"))
		return value > 1 ? -EINVAL :
		       bdi_set_strict_limit(bdi, (unsigned int)value);
	return -ENOENT;
}

static int dev_get_bdi_tunable(struct backing_dev_info *bdi,
			       const char *name, uint64_t *value)
{
	if (!name || !value)
		return -EINVAL;
	if (!strcmp(name, "min_ratio"))
		*value = bdi_get_min_ratio(bdi);
	else if (!strcmp(name, "max_ratio"))
		*value = bdi_get_max_ratio(bdi);
	else if (!strcmp(name, "min_bytes"))
		*value = bdi_get_min_bytes(bdi);
	else if (!strcmp(name, "max_bytes"))
		*value = bdi_get_max_bytes(bdi);
	else if (!strcmp(name, "strict_limit"))
		*value = !!(__atomic_load_n(&bdi->capabilities,
					    __ATOMIC_RELAXED) &
			    BDI_CAP_STRICTLIMIT);
	else
		return -ENOENT;
	return 0;
}

int uf_dev_set_bdi_tunable(struct uf_dev *h, const char *name,
			   uint64_t value)
{
	return with_dev(h, d, dev_set_bdi_tunable(&d->bdi, name, value));
}

int uf_dev_get_bdi_tunable(struct uf_dev *h, const char *name,
			   uint64_t *value)
{
	return with_dev(h, d, dev_get_bdi_tunable(&d->bdi, name, value));
}
/* ---- end: the dirty throttle's API ---- */
