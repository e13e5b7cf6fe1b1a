// SPDX-License-Identifier: MIT
/*
 * engine/kernel/wait_bit.c - the hashed bit wait queues of
 * kernel/sched/wait_bit.c (see wait_bit.h for why they exist here).
 */
#include <pthread.h>
#include <stdint.h>

#include "kernel/wait_bit.h"

#define WAIT_TABLE_BITS		8
#define WAIT_TABLE_SIZE		(1U << WAIT_TABLE_BITS)

static wait_queue_head_t bit_wait_table[WAIT_TABLE_SIZE];
static pthread_once_t bit_wait_table_once = PTHREAD_ONCE_INIT;

static void bit_wait_table_init(void)
{
	unsigned int i;

	for (i = 0; i < WAIT_TABLE_SIZE; i++)
		init_waitqueue_head(&bit_wait_table[i]);
}

/* The kernel hashes the word's address shifted by the bit (hash_long). */
wait_queue_head_t *bit_waitqueue(void *word, int bit)
{
	uint64_t val = (uint64_t)(uintptr_t)word << 6 | (uint64_t)bit;
	uint64_t h = val * 0x9e3779b97f4a7c15ull;

	pthread_once(&bit_wait_table_once, bit_wait_table_init);
	return &bit_wait_table[h >> (64 - WAIT_TABLE_BITS)];
}

int wake_bit_function(struct wait_queue_entry *wq_entry, unsigned int mode,
		      int flags, void *arg)
{
	struct wait_bit_key *key = arg;
	struct wait_bit_queue_entry *wbq =
		container_of(wq_entry, struct wait_bit_queue_entry, wq_entry);

	/* no test of the bit: uflush's inode i_count waits share the
	 * __I_SYNC queue (fs-writeback.c), so a wakeup means "look again" */
	if (key && (wbq->key.flags != key->flags ||
		    wbq->key.bit_nr != key->bit_nr))
		return 0;
	return autoremove_wake_function(wq_entry, mode, flags, arg);
}

void wake_up_bit(void *word, int bit)
{
	struct wait_bit_key key = { .flags = word, .bit_nr = bit };

	__wake_up(bit_waitqueue(word, bit), TASK_NORMAL, 1, &key);
}
