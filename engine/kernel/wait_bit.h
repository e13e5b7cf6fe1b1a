/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/wait_bit.h - waiting for a bit of a word to change, on a
 * hashed table of wait queues: the kernel's include/linux/wait_bit.h and
 * kernel/sched/wait_bit.c (bit_waitqueue, wake_bit_function, wake_up_bit).
 *
 * Why a table and not a queue in the object: the object may be freed (and
 * its memory reused) while a sleeper that held no reference to it is still
 * on its way out of finish_wait().  Mainline's inode_sleep_on_writeback()
 * is such a sleeper (the flusher waits for __I_SYNC of an inode it does not
 * pin); a queue inside the inode would be re-initialised under it when the
 * inode's slot is reused.  The table outlives every object.
 */
#ifndef UF_WAIT_BIT_H
#define UF_WAIT_BIT_H

#include "kernel/wait.h"

struct wait_bit_key {
	void *flags;			/* the word */
	int bit_nr;
};

struct wait_bit_queue_entry {
	struct wait_bit_key key;
	struct wait_queue_entry wq_entry;
};

/* The queue the sleepers on @bit of @word share with other words' bits. */
wait_queue_head_t *bit_waitqueue(void *word, int bit);

/* Wakes (and dequeues) only an entry waiting for the waker's word and bit. */
int wake_bit_function(struct wait_queue_entry *wq_entry, unsigned int mode,
		      int flags, void *key);

/* Wake every sleeper on @bit of @word (the caller changed it). */
void wake_up_bit(void *word, int bit);

#define DEFINE_WAIT_BIT(name, word, bit)				\
	struct wait_bit_queue_entry name = {				\
		.key = { .flags = (word), .bit_nr = (bit) },		\
		.wq_entry = {						\
			.private = current,				\
			.func = wake_bit_function,			\
			.entry = LIST_HEAD_INIT((name).wq_entry.entry),	\
		},							\
	}

#endif /* UF_WAIT_BIT_H */
