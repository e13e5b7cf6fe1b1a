// SPDX-License-Identifier: MIT
/*
 * engine/trace/events/writeback.c - the writeback tracepoints
 * (include/trace/events/writeback.h): each prints its fields in the
 * kernel's names and order.  writeback_single_inode's age is in seconds, as
 * in the seed-000 traces (L526, L533, L540).
 */
#include <stdio.h>

#include "fs/fs.h"
#include "fs/writeback.h"
#include "kernel/jiffies.h"
#include "mm/backing-dev.h"
#include "trace/events/writeback.h"

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
		   "bdi %s: sb_dev %u:%u nr_pages=%ld sync_mode=%d kupdate=%d range_cyclic=%d background=%d reason=%s ino=%lu offset=%lu",
		   bdi->name, maj, min, work->nr_pages, (int)work->sync_mode,
		   work->for_kupdate, work->range_cyclic,
		   work->for_background, wb_reason_name[work->reason],
		   work->inode ? work->inode->i_ino : 0UL, work->offset);
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
