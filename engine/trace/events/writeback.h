/* SPDX-License-Identifier: MIT */
/*
 * engine/trace/events/writeback.h - the writeback tracepoints
 * (include/trace/events/writeback.h).  Field names and order are the
 * kernel's; with tracing off each costs one predictable branch.
 */
#ifndef UF_TRACE_EVENTS_WRITEBACK_H
#define UF_TRACE_EVENTS_WRITEBACK_H

#include <stdbool.h>

#include "trace/trace.h"

struct backing_dev_info;
struct bdi_writeback;
struct wb_writeback_work;
struct writeback_control;
struct inode;

/* writeback_work class: writeback_nothread, _queue, _exec, _start,
 * _written, _wait */
void __trace_writeback_work(const char *event, struct backing_dev_info *bdi,
			    struct wb_writeback_work *work);
void __trace_writeback_queue_io(struct bdi_writeback *wb,
				struct wb_writeback_work *work, int moved);
void __trace_writeback_sb_inodes_requeue(struct inode *inode);
void __trace_writeback_single_inode(const char *event, struct inode *inode,
				    struct writeback_control *wbc,
				    unsigned long nr_to_write);
void __trace_writeback_pages_written(struct uf_cache *c, long pages);
void __trace_writeback_class(const char *event, struct backing_dev_info *bdi);
void __trace_global_dirty_state(struct uf_cache *c,
				unsigned long background_thresh,
				unsigned long dirty_thresh);

/* Which kernel's balance_dirty_pages line to print. */
enum bdp_trace_kind {
	BDP_TRACE_32,		/* 3.2: ... paused= pause= */
	BDP_TRACE_33,		/* 3.3: + period= think= */
	BDP_TRACE_MAINLINE,	/* + period= think= cgroup_ino= */
};

/* balance_dirty_pages' fields, in the order trace_balance_dirty_pages()
 * takes them */
struct bdp_trace {
	unsigned long thresh, bg_thresh, dirty, bdi_thresh, bdi_dirty;
	unsigned long dirty_ratelimit, task_ratelimit, dirtied;
	long period, pause;
	unsigned long start_time;
	enum bdp_trace_kind kind;
	unsigned long limit;	/* mainline: the dtc's (6.18 dtc->limit) */
};

void __trace_balance_dirty_pages(struct backing_dev_info *bdi,
				 const struct bdp_trace *e);
void __trace_bdi_dirty_ratelimit(struct backing_dev_info *bdi,
				 unsigned long dirty_rate,
				 unsigned long task_ratelimit, bool mainline);
void __trace_balance_dirty_written(struct backing_dev_info *bdi,
				   unsigned long written);


/* An event is formatted only when the cache traces: one branch otherwise. */
#define trace_if(c, call) do {						\
	if (trace_on(c))						\
		call;							\
} while (0)

/* The event classes (the kernel's DECLARE_EVENT_CLASS) */
#define trace_wb_work(event, bdi, work)					\
	trace_if((bdi)->cache, __trace_writeback_work(event, bdi, work))
#define trace_wb_class(event, bdi)					\
	trace_if((bdi)->cache, __trace_writeback_class(event, bdi))
#define trace_wb_inode(event, inode, wbc, nr)				\
	trace_if(inode_cache(inode),					\
		 __trace_writeback_single_inode(event, inode, wbc, nr))

#define trace_writeback_queue(bdi, w)	trace_wb_work("writeback_queue", bdi, w)
#define trace_writeback_exec(bdi, w)	trace_wb_work("writeback_exec", bdi, w)
#define trace_writeback_start(bdi, w)	trace_wb_work("writeback_start", bdi, w)
#define trace_writeback_written(bdi, w)					\
	trace_wb_work("writeback_written", bdi, w)
#define trace_writeback_wait(bdi, w)	trace_wb_work("writeback_wait", bdi, w)
#define trace_writeback_queue_io(wb, work, moved)			\
	trace_if((wb)->bdi->cache, __trace_writeback_queue_io(wb, work, moved))
#define trace_writeback_single_inode(inode, wbc, nr)			\
	trace_wb_inode("writeback_single_inode", inode, wbc, nr)
#define trace_writeback_single_inode_requeue(inode, wbc, nr)		\
	trace_wb_inode("writeback_single_inode_requeue", inode, wbc, nr)
/* 6.18: writeback_sb_inodes() passing over an inode under I_SYNC */
#define trace_writeback_sb_inodes_requeue(inode)			\
	trace_if(inode_cache(inode),					\
		 __trace_writeback_sb_inodes_requeue(inode))
#define trace_writeback_pages_written(c, pages)				\
	trace_if(c, __trace_writeback_pages_written(c, pages))
#define trace_writeback_wake_background(bdi)				\
	trace_wb_class("writeback_wake_background", bdi)
/* 3.2's wakeup_timer_fn: the flusher woken, or (no task) its forker */
#define trace_writeback_wake_thread(bdi)				\
	trace_wb_class("writeback_wake_thread", bdi)
#define trace_writeback_wake_forker_thread(bdi)				\
	trace_wb_class("writeback_wake_forker_thread", bdi)
/* 3.2: a writeback_work_class event (the work's fields), not bdi-only */
#define trace_writeback_nothread(bdi, w)				\
	trace_wb_work("writeback_nothread", bdi, w)
#define trace_global_dirty_state(c, bg, thresh)				\
	trace_if(c, __trace_global_dirty_state(c, bg, thresh))

#define trace_balance_dirty_pages(bdi, thresh, bg, dirty, bthresh,	\
				  bdirty, drl, trl, dirtied, period,	\
				  pause, start, kind)			\
	trace_if((bdi)->cache, __trace_balance_dirty_pages(bdi,		\
		 &(const struct bdp_trace){ thresh, bg, dirty, bthresh,	\
					    bdirty, drl, trl, dirtied,	\
					    period, pause, start, kind, 0 }))
#define trace_bdi_dirty_ratelimit(bdi, rate, trl, mainline)		\
	trace_if((bdi)->cache,						\
		 __trace_bdi_dirty_ratelimit(bdi, rate, trl, mainline))
/* 3.1's three events around the dirtier's own writeback */
#define trace_balance_dirty_start(bdi)					\
	trace_wb_class("balance_dirty_start", bdi)
#define trace_balance_dirty_wait(bdi)					\
	trace_wb_class("balance_dirty_wait", bdi)
#define trace_balance_dirty_written(bdi, written)			\
	trace_if((bdi)->cache, __trace_balance_dirty_written(bdi, written))

#endif /* UF_TRACE_EVENTS_WRITEBACK_H */
