// SPDX-License-Identifier: MIT
/*
 * engine/api/handle.c - the handle table: its slots and their shards, the
 * handles' values for tests (uflush-internal.h), and the rule every close
 * keeps (never from inside a callback of the object it closes).
 */
#include "api/handle.h"

struct uf_cache_slot caches[UF_MAX_CACHES];
struct uf_dev devs[UF_MAX_DEVS];
static int64_t cache_users[HSLOT_SHARDS * UF_MAX_CACHES]
	__attribute__((aligned(64)));
static int64_t dev_users[HSLOT_SHARDS * UF_MAX_DEVS]
	__attribute__((aligned(64)));
struct uf_file *file_chunks[FILE_CHUNKS];
struct uf_page_slot *pslot_chunks[PSLOT_CHUNKS];
pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
/* Closers waiting for users to leave or objects to go (rare: one queue). */
DECLARE_WAIT_QUEUE_HEAD(handles_wq);
unsigned int next_shard;	/* my_shard(): round-robin */


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

/*
 * A uf_file_ops callback that closes its own file, or the device or cache
 * of it, would wait for itself: the flusher (or the fsync caller) that
 * runs the callback is inside writeback of that file.  -EDEADLK instead.
 */
bool closing_from_callback(struct uf_cache_slot *s, struct uf_dev *d,
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
