// SPDX-License-Identifier: MIT
/*
 * engine/trace.c - the writeback tracepoints (include/trace/events/
 * writeback.h) printed as ftrace prints them, so that the seeds' traces and
 * ours can be read, grepped and plotted alike:
 *
 *   flush-8:0-1170  [004]   211.068428: writeback_start: bdi 8:0: ...
 *
 * comm-pid, [cpu], seconds.microseconds of CLOCK_MONOTONIC, event, fields
 * in the kernel's order.  writeback_single_inode's age is in seconds, as in
 * the seed-000 traces (L526, L533, L540).  One line is one write under a
 * lock, so lines of concurrent tasks never interleave.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backing-dev.h"
#include "fs.h"
#include "jiffies.h"
#include "sched.h"
#include "slab.h"
#include "trace.h"
#include "writeback.h"

struct uf_trace {
	FILE *f;
	pthread_mutex_t lock;
};

int uf_trace_open(struct uf_cache *cache, const char *path)
{
	struct uf_trace *t;

	t = kzalloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->f = fopen(path, "ae");
	if (!t->f) {
		int err = -errno;

		kfree(t);
		return err;
	}
	pthread_mutex_init(&t->lock, NULL);
	cache->trace = t;
	return 0;
}

void uf_trace_close(struct uf_cache *cache)
{
	struct uf_trace *t = cache->trace;

	if (!t)
		return;
	cache->trace = NULL;
	fclose(t->f);
	pthread_mutex_destroy(&t->lock);
	kfree(t);
}

__attribute__((format(printf, 3, 4)))
static void trace_emit(struct uf_cache *c, const char *event,
		       const char *fmt, ...)
{
	struct uf_trace *t = c->trace;
	struct task_struct *tsk = current;
	char fields[512];
	struct timespec ts;
	va_list ap;
	int cpu;

	if (!t)
		return;
	va_start(ap, fmt);
	vsnprintf(fields, sizeof(fields), fmt, ap);
	va_end(ap);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	cpu = sched_getcpu();
	pthread_mutex_lock(&t->lock);
	fprintf(t->f, "%16s-%-5d [%03d] %5ld.%06ld: %s: %s\n", tsk->comm,
		(int)tsk->pid, cpu < 0 ? 0 : cpu, (long)ts.tv_sec,
		ts.tv_nsec / 1000, event, fields);
	fflush(t->f);
	pthread_mutex_unlock(&t->lock);
}

static void sb_dev(struct super_block *sb, unsigned int *maj,
		   unsigned int *min)
{
	*maj = sb ? (unsigned int)(sb->s_dev >> 8) & 0xfff : 0;
	*min = sb ? (unsigned int)((sb->s_dev & 0xff) |
				   ((sb->s_dev >> 12) & ~0xffu)) : 0;
}

void __trace_writeback_work(const char *event, struct backing_dev_info *bdi,
			    struct wb_writeback_work *work)
{
	unsigned int maj, min;

	sb_dev(work->sb, &maj, &min);
	trace_emit(bdi->cache, event,
		   "bdi %s: sb_dev %u:%u nr_pages=%ld sync_mode=%d kupdate=%d range_cyclic=%d background=%d reason=%s",
		   bdi->name, maj, min, work->nr_pages, (int)work->sync_mode,
		   work->for_kupdate, work->range_cyclic,
		   work->for_background, wb_reason_name[work->reason]);
}

void __trace_writeback_queue_io(struct bdi_writeback *wb,
				struct wb_writeback_work *work, int moved)
{
	unsigned long *older = work->older_than_this;
	unsigned long now = jiffies;

	trace_emit(wb->bdi->cache, "writeback_queue_io",
		   "bdi %s: older=%lu age=%ld enqueue=%d reason=%s",
		   wb->bdi->name, older ? *older : 0UL,
		   older ? (long)jiffies_to_msecs(now - *older) : -1L, moved,
		   wb_reason_name[work->reason]);
}

/* i_state as the kernel's show_inode_state() prints it. */
static void inode_state_str(unsigned long state, char *buf, size_t len)
{
	static const struct {
		unsigned long bit;
		const char *name;
	} names[] = {
		{ I_DIRTY_SYNC, "I_DIRTY_SYNC" },
		{ I_DIRTY_DATASYNC, "I_DIRTY_DATASYNC" },
		{ I_DIRTY_PAGES, "I_DIRTY_PAGES" },
		{ I_NEW, "I_NEW" },
		{ I_WILL_FREE, "I_WILL_FREE" },
		{ I_FREEING, "I_FREEING" },
		{ I_CLEAR, "I_CLEAR" },
		{ I_SYNC, "I_SYNC" },
		{ I_REFERENCED, "I_REFERENCED" },
	};
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(state & names[i].bit))
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s",
				      n ? "|" : "", names[i].name);
	}
}

void __trace_writeback_single_inode(const char *event, struct inode *inode,
				    struct writeback_control *wbc,
				    unsigned long nr_to_write)
{
	char state[160];

	inode_state_str(inode->i_state, state, sizeof(state));
	trace_emit(inode_cache(inode), event,
		   "bdi %s: ino=%lu state=%s dirtied_when=%lu age=%lu index=%lu to_write=%ld wrote=%lu",
		   inode->i_sb->s_bdi->name, inode->i_ino, state,
		   inode->dirtied_when,
		   (jiffies - inode->dirtied_when) / (unsigned long)HZ,
		   __atomic_load_n(&inode->i_mapping->writeback_index,
				   __ATOMIC_RELAXED), (long)nr_to_write,
		   nr_to_write - (unsigned long)wbc->nr_to_write);
}

void __trace_writeback_pages_written(struct uf_cache *c, long pages)
{
	trace_emit(c, "writeback_pages_written", "%ld", pages);
}

void __trace_writeback_class(const char *event, struct backing_dev_info *bdi)
{
	trace_emit(bdi->cache, event, "bdi %s", bdi->name);
}

void __trace_global_dirty_state(struct uf_cache *c,
				unsigned long background_thresh,
				unsigned long dirty_thresh)
{
	trace_emit(c, "global_dirty_state",
		   "dirty=%lu writeback=%lu unstable=%lu bg_thresh=%lu thresh=%lu limit=%lu dirtied=%lu written=%lu",
		   global_page_state(c, NR_FILE_DIRTY),
		   global_page_state(c, NR_WRITEBACK),
		   global_page_state(c, NR_UNSTABLE_NFS), background_thresh,
		   dirty_thresh, dirty_thresh,
		   global_page_state(c, NR_DIRTIED),
		   global_page_state(c, NR_WRITTEN));
}
