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
#include "kernel/sched.h"
#include "lib/proportions.h"
#include "mm/backing-dev.h"
#include "mm/dirty-throttle.h"
#include "policies/policy.h"
#include "trace/events/writeback.h"

static void sb_dev(struct super_block *sb, unsigned int *maj,
		   unsigned int *min)
{
	*maj = sb ? (unsigned int)(sb->s_dev >> 8) & 0xfff : 0;
	*min = sb ? (unsigned int)((sb->s_dev & 0xff) |
				   ((sb->s_dev >> 12) & ~0xffu)) : 0;
}

/*
 * The cache runs mainline's throttle: print mainline's field lists.  6.18
 * (include/trace/events/writeback.h) ends writeback_work_class,
 * writeback_class, writeback_queue_io and writeback_single_inode with
 * cgroup_ino (cgroup writeback, 4.2): always 0 here, one wb per device.
 */
static bool trace_mainline(const struct uf_cache *c)
{
	return c->policy && c->policy->balance_dirty_pages ==
			    balance_dirty_pages_ratelimited_mainline;
}

void __trace_writeback_work(const char *event, struct backing_dev_info *bdi,
			    struct wb_writeback_work *work)
{
	unsigned int maj, min;

	sb_dev(work->sb, &maj, &min);
	if (trace_mainline(bdi->cache)) {
		/* ino= offset= (a pageout work's) are uflush's, after 6.18's */
		trace_emit(bdi->cache, event,
			   "bdi %s: sb_dev %u:%u nr_pages=%ld sync_mode=%d kupdate=%d range_cyclic=%d background=%d reason=%s cgroup_ino=0 ino=%lu offset=%lu",
			   bdi->name, maj, min, work->nr_pages,
			   (int)work->sync_mode, work->for_kupdate,
			   work->range_cyclic, work->for_background,
			   wb_reason_name[work->reason],
			   work->inode ? work->inode->i_ino : 0UL,
			   work->offset);
		return;
	}
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
		   trace_mainline(wb->bdi->cache) ?
		   "bdi %s: older=%lu age=%ld enqueue=%d reason=%s cgroup_ino=0" :
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
		{ I_SYNC_QUEUED, "I_SYNC_QUEUED" },	/* set under 6.18 only */
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
		   trace_mainline(inode_cache(inode)) ?
		   "bdi %s: ino=%lu state=%s dirtied_when=%lu age=%lu index=%lu to_write=%ld wrote=%lu cgroup_ino=0" :
		   "bdi %s: ino=%lu state=%s dirtied_when=%lu age=%lu index=%lu to_write=%ld wrote=%lu",
		   inode->i_sb->s_bdi->name, inode->i_ino, state,
		   inode->dirtied_when,
		   (jiffies - inode->dirtied_when) / (unsigned long)HZ,
		   __atomic_load_n(&inode->i_mapping->writeback_index,
				   __ATOMIC_RELAXED), (long)nr_to_write,
		   nr_to_write - (unsigned long)wbc->nr_to_write);
}

/* 6.18 include/trace/events/writeback.h: writeback_sb_inodes_requeue */
void __trace_writeback_sb_inodes_requeue(struct inode *inode)
{
	char state[160];

	inode_state_str(inode->i_state, state, sizeof(state));
	trace_emit(inode_cache(inode), "writeback_sb_inodes_requeue",
		   "bdi %s: ino=%lu state=%s dirtied_when=%lu age=%lu cgroup_ino=0",
		   inode->i_sb->s_bdi->name, inode->i_ino, state,
		   inode->dirtied_when,
		   (jiffies - inode->dirtied_when) / (unsigned long)HZ);
}

void __trace_writeback_pages_written(struct uf_cache *c, long pages)
{
	trace_emit(c, "writeback_pages_written", "%ld", pages);
}

void __trace_writeback_class(const char *event, struct backing_dev_info *bdi)
{
	trace_emit(bdi->cache, event,
		   trace_mainline(bdi->cache) ? "bdi %s: cgroup_ino=0" :
		   "bdi %s", bdi->name);
}

/*
 * global_dirty_state: 3.1/3.2 print unstable= (NFS unstable pages, always
 * 0 here); mainline dropped it with NR_UNSTABLE_NFS (5.8).
 */
void __trace_global_dirty_state(struct uf_cache *c,
				unsigned long background_thresh,
				unsigned long dirty_thresh)
{
	if (trace_mainline(c)) {
		trace_emit(c, "global_dirty_state",
			   "dirty=%lu writeback=%lu bg_thresh=%lu thresh=%lu limit=%lu dirtied=%lu written=%lu",
			   global_page_state(c, NR_FILE_DIRTY),
			   global_page_state(c, NR_WRITEBACK),
			   background_thresh, dirty_thresh,
			   global_dirty_limit(c),
			   global_page_state(c, NR_DIRTIED),
			   global_page_state(c, NR_WRITTEN));
		return;
	}
	trace_emit(c, "global_dirty_state",
		   "dirty=%lu writeback=%lu unstable=%lu bg_thresh=%lu thresh=%lu limit=%lu dirtied=%lu written=%lu",
		   global_page_state(c, NR_FILE_DIRTY),
		   global_page_state(c, NR_WRITEBACK),
		   global_page_state(c, NR_UNSTABLE_NFS), background_thresh,
		   dirty_thresh, global_dirty_limit(c),
		   global_page_state(c, NR_DIRTIED),
		   global_page_state(c, NR_WRITTEN));
}

/* Rates in KiB/s, as the kernel's KBps(). */
#define KBps(x)		((x) << (PAGE_SHIFT - 10))

/*
 * balance_dirty_pages (3.2.41, 3.3): limit is the smoothed global dirty
 * limit (3.x: 0 until the throttle first set it), setpoint the middle of
 * it and the freerun ceiling, bdi_setpoint its device share; times in ms.
 * 3.3 adds period and think (since the task's dirty_paused_when).
 * Mainline (6.18 include/trace/events/writeback.h:654) names the device's
 * fields wb_setpoint and wb_dirty (the bdi_writeback split, 4.2), has
 * period and think, adds cgroup_ino (0: no cgroups here), and its limit is
 * the throttle's dtc->limit, hard_dirty_limit() = max(thresh, the smoothed
 * limit), which the caller passes in e->limit.
 */
void __trace_balance_dirty_pages(struct backing_dev_info *bdi,
				 const struct bdp_trace *e)
{
	struct task_struct *t = current;
	unsigned long freerun = (e->thresh + e->bg_thresh) / 2;
	unsigned long limit = global_dirty_limit(bdi->cache);
	unsigned long setpoint = (limit + freerun) / 2;
	unsigned long hz = (unsigned long)HZ;
	long think;

	think = t->dirty_paused_when == 0 ? 0 :
		(long)(jiffies - t->dirty_paused_when) * 1000 / (long)hz;
	if (e->kind == BDP_TRACE_33) {
		/* 3.3: 3.2's fields, then period= and think= */
		trace_emit(bdi->cache, "balance_dirty_pages",
			   "bdi %s: limit=%lu setpoint=%lu dirty=%lu bdi_setpoint=%lu bdi_dirty=%lu dirty_ratelimit=%lu task_ratelimit=%lu dirtied=%u dirtied_pause=%u paused=%lu pause=%ld period=%lu think=%ld",
			   bdi->name, limit, setpoint, e->dirty,
			   setpoint * e->bdi_thresh / (e->thresh + 1),
			   e->bdi_dirty,
			   KBps(e->dirty_ratelimit), KBps(e->task_ratelimit),
			   (unsigned int)e->dirtied,
			   (unsigned int)t->nr_dirtied_pause,
			   (jiffies - e->start_time) * 1000 / hz,
			   e->pause * 1000 / (long)hz,
			   (unsigned long)e->period * 1000 / hz, think);
		return;
	}
	if (e->kind == BDP_TRACE_32) {
		trace_emit(bdi->cache, "balance_dirty_pages",
			   "bdi %s: limit=%lu setpoint=%lu dirty=%lu bdi_setpoint=%lu bdi_dirty=%lu dirty_ratelimit=%lu task_ratelimit=%lu dirtied=%u dirtied_pause=%u paused=%lu pause=%ld",
			   bdi->name, limit, setpoint, e->dirty,
			   setpoint * e->bdi_thresh / (e->thresh + 1),
			   e->bdi_dirty,
			   KBps(e->dirty_ratelimit), KBps(e->task_ratelimit),
			   (unsigned int)e->dirtied,
			   (unsigned int)t->nr_dirtied_pause,
			   (jiffies - e->start_time) * 1000 / hz,
			   e->pause * 1000 / (long)hz);
		return;
	}
	limit = e->limit;
	setpoint = (limit + freerun) / 2;
	trace_emit(bdi->cache, "balance_dirty_pages",
		   "bdi %s: limit=%lu setpoint=%lu dirty=%lu wb_setpoint=%lu wb_dirty=%lu dirty_ratelimit=%lu task_ratelimit=%lu dirtied=%u dirtied_pause=%u paused=%lu pause=%ld period=%lu think=%ld cgroup_ino=%lu",
		   bdi->name, limit, setpoint, e->dirty,
		   setpoint * e->bdi_thresh / (e->thresh + 1), e->bdi_dirty,
		   KBps(e->dirty_ratelimit), KBps(e->task_ratelimit),
		   (unsigned int)e->dirtied, (unsigned int)t->nr_dirtied_pause,
		   (jiffies - e->start_time) * 1000 / hz,
		   e->pause * 1000 / (long)hz,
		   (unsigned long)e->period * 1000 / hz, think, 0UL);
}

/* bdi_dirty_ratelimit: rates in KiB/s; mainline appends cgroup_ino. */
void __trace_bdi_dirty_ratelimit(struct backing_dev_info *bdi,
				 unsigned long dirty_rate,
				 unsigned long task_ratelimit, bool mainline)
{
	trace_emit(bdi->cache, "bdi_dirty_ratelimit",
		   mainline ?
		   "bdi %s: write_bw=%lu awrite_bw=%lu dirty_rate=%lu dirty_ratelimit=%lu task_ratelimit=%lu balanced_dirty_ratelimit=%lu cgroup_ino=0" :
		   "bdi %s: write_bw=%lu awrite_bw=%lu dirty_rate=%lu dirty_ratelimit=%lu task_ratelimit=%lu balanced_dirty_ratelimit=%lu",
		   bdi->name, KBps(bdi->write_bandwidth),
		   KBps(bdi->avg_write_bandwidth), KBps(dirty_rate),
		   KBps(bdi->dirty_ratelimit), KBps(task_ratelimit),
		   KBps(bdi->balanced_dirty_ratelimit));
}

/* 3.1's balance_dirty_written: pages the dirtier wrote so far. */
void __trace_balance_dirty_written(struct backing_dev_info *bdi,
				   unsigned long written)
{
	trace_emit(bdi->cache, "balance_dirty_written", "bdi %s written %d",
		   bdi->name, (int)written);
}

