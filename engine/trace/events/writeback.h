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
	BDP_TRACE_MAINLINE,	/* + period= think= cgroup_ino= */
};

void __trace_balance_dirty_pages(struct backing_dev_info *bdi,
				 unsigned long thresh, unsigned long bg_thresh,
				 unsigned long dirty, unsigned long bdi_thresh,
				 unsigned long bdi_dirty,
				 unsigned long dirty_ratelimit,
				 unsigned long task_ratelimit,
				 unsigned long dirtied, long period,
				 long pause, unsigned long start_time,
				 enum bdp_trace_kind kind);
void __trace_bdi_dirty_ratelimit(struct backing_dev_info *bdi,
				 unsigned long dirty_rate,
				 unsigned long task_ratelimit, bool mainline);
void __trace_balance_dirty_written(struct backing_dev_info *bdi,
				   unsigned long written);


#define trace_writeback_queue(bdi, work) do {				\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_work("writeback_queue", bdi, work);	\
} while (0)
#define trace_writeback_exec(bdi, work) do {				\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_work("writeback_exec", bdi, work);	\
} while (0)
#define trace_writeback_start(bdi, work) do {				\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_work("writeback_start", bdi, work);	\
} while (0)
#define trace_writeback_written(bdi, work) do {				\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_work("writeback_written", bdi, work);	\
} while (0)
#define trace_writeback_wait(bdi, work) do {				\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_work("writeback_wait", bdi, work);	\
} while (0)
#define trace_writeback_queue_io(wb, work, moved) do {			\
	if (trace_on((wb)->bdi->cache))					\
		__trace_writeback_queue_io(wb, work, moved);		\
} while (0)
#define trace_writeback_single_inode(inode, wbc, nr) do {		\
	if (trace_on(inode_cache(inode)))				\
		__trace_writeback_single_inode("writeback_single_inode",\
					       inode, wbc, nr);		\
} while (0)
#define trace_writeback_single_inode_requeue(inode, wbc, nr) do {	\
	if (trace_on(inode_cache(inode)))				\
		__trace_writeback_single_inode(				\
			"writeback_single_inode_requeue", inode, wbc, nr);\
} while (0)
#define trace_writeback_pages_written(c, pages) do {			\
	if (trace_on(c))						\
		__trace_writeback_pages_written(c, pages);		\
} while (0)
#define trace_writeback_wake_background(bdi) do {			\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_class("writeback_wake_background", bdi);\
} while (0)
/* 3.2's wakeup_timer_fn: the flusher woken, or (no task) its forker */
#define trace_writeback_wake_thread(bdi) do {				\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_class("writeback_wake_thread", bdi);	\
} while (0)
#define trace_writeback_wake_forker_thread(bdi) do {			\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_class("writeback_wake_forker_thread", bdi);\
} while (0)
/* 3.2: a writeback_work_class event (the work's fields), not bdi-only */
#define trace_writeback_nothread(bdi, work) do {			\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_work("writeback_nothread", bdi, work);\
} while (0)
#define trace_global_dirty_state(c, bg, thresh) do {			\
	if (trace_on(c))						\
		__trace_global_dirty_state(c, bg, thresh);		\
} while (0)

#define trace_balance_dirty_pages(bdi, thresh, bg, dirty, bthresh,	\
				  bdirty, drl, trl, dirtied, period,	\
				  pause, start, kind) do {		\
	if (trace_on((bdi)->cache))					\
		__trace_balance_dirty_pages(bdi, thresh, bg, dirty,	\
					    bthresh, bdirty, drl, trl,	\
					    dirtied, period, pause,	\
					    start, kind);		\
} while (0)
#define trace_bdi_dirty_ratelimit(bdi, rate, trl, mainline) do {	\
	if (trace_on((bdi)->cache))					\
		__trace_bdi_dirty_ratelimit(bdi, rate, trl, mainline);	\
} while (0)
/* 3.1's three events around the dirtier's own writeback */
#define trace_balance_dirty_start(bdi) do {				\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_class("balance_dirty_start", bdi);	\
} while (0)
#define trace_balance_dirty_wait(bdi) do {				\
	if (trace_on((bdi)->cache))					\
		__trace_writeback_class("balance_dirty_wait", bdi);	\
} while (0)
#define trace_balance_dirty_written(bdi, written) do {			\
	if (trace_on((bdi)->cache))					\
		__trace_balance_dirty_written(bdi, written);		\
} while (0)

#endif /* UF_TRACE_EVENTS_WRITEBACK_H */
