/* SPDX-License-Identifier: MIT */
/*
 * engine/trace/events/vmscan.h - reclaim's tracepoints, each printing the
 * fields of the kernel the reclaim variant follows, in its order: the 3.x
 * variants (legacy, 3.2, pageout) those of 3.2.41's
 * include/trace/events/vmscan.h, reclaim=mainline those of 6.18's (with
 * mm_vmscan_throttled); and the writeback_congest_waited class of
 * include/trace/events/writeback.h (3.2's writeback_congestion_wait and
 * writeback_wait_iff_congested, seed 003's writeback_reclaim_wait,
 * S003:L863-868).  One zone: nid 0, zid ZONE_NORMAL's index; order 0;
 * the page cache's gfp mask, GFP_HIGHUSER_MOVABLE.  So the kernel's
 * tools (trace-vmscan-postprocess.pl, perf) parse them.
 */
#ifndef UF_TRACE_EVENTS_VMSCAN_H
#define UF_TRACE_EVENTS_VMSCAN_H

#include "trace/trace.h"

struct page;
struct reclaim_batch;

/* x86-64's ZONE_NORMAL (after ZONE_DMA, ZONE_DMA32): uflush's one zone */
#define UF_TRACE_ZID	2

void __trace_mm_vmscan_lru_shrink_inactive(struct uf_cache *c,
					   unsigned long nr_scanned,
					   unsigned long nr_reclaimed,
					   const struct reclaim_batch *rb,
					   int priority);
void __trace_mm_vmscan_lru_isolate(struct uf_cache *c,
				   unsigned long nr_requested,
				   unsigned long nr_scanned,
				   unsigned long nr_taken);
void __trace_mm_vmscan_writepage(struct uf_cache *c, struct page *page);
void __trace_mm_vmscan_direct_reclaim_begin(struct uf_cache *c,
					    int may_writepage);
void __trace_mm_vmscan_direct_reclaim_end(struct uf_cache *c,
					  unsigned long nr_reclaimed);
void __trace_mm_vmscan_wakeup_kswapd(struct uf_cache *c);
void __trace_mm_vmscan_kswapd_wake(struct uf_cache *c);
void __trace_mm_vmscan_kswapd_sleep(struct uf_cache *c);
/* @reason: enum vmscan_throttle_state (mm/vmscan.h) */
void __trace_mm_vmscan_throttled(struct uf_cache *c, unsigned int usec_timeout,
				 unsigned int usec_delayed, int reason);
void __trace_congest_waited(struct uf_cache *c, const char *event,
			    unsigned int usec_timeout,
			    unsigned int usec_delayed);

#define trace_mm_vmscan_lru_shrink_inactive(c, sc, rc, rb, prio) do {	\
	if (trace_on(c))						\
		__trace_mm_vmscan_lru_shrink_inactive(c, sc, rc, rb, prio);\
} while (0)
#define trace_mm_vmscan_lru_isolate(c, req, sc, taken) do {		\
	if (trace_on(c))						\
		__trace_mm_vmscan_lru_isolate(c, req, sc, taken);	\
} while (0)
#define trace_mm_vmscan_writepage(c, page) do {				\
	if (trace_on(c))						\
		__trace_mm_vmscan_writepage(c, page);			\
} while (0)
#define trace_mm_vmscan_direct_reclaim_begin(c, may_writepage) do {	\
	if (trace_on(c))						\
		__trace_mm_vmscan_direct_reclaim_begin(c, may_writepage);\
} while (0)
#define trace_mm_vmscan_direct_reclaim_end(c, nr) do {			\
	if (trace_on(c))						\
		__trace_mm_vmscan_direct_reclaim_end(c, nr);		\
} while (0)
#define trace_mm_vmscan_wakeup_kswapd(c) do {				\
	if (trace_on(c))						\
		__trace_mm_vmscan_wakeup_kswapd(c);			\
} while (0)
#define trace_mm_vmscan_kswapd_wake(c) do {				\
	if (trace_on(c))						\
		__trace_mm_vmscan_kswapd_wake(c);			\
} while (0)
#define trace_mm_vmscan_kswapd_sleep(c) do {				\
	if (trace_on(c))						\
		__trace_mm_vmscan_kswapd_sleep(c);			\
} while (0)
#define trace_mm_vmscan_throttled(c, t, d, r) do {			\
	if (trace_on(c))						\
		__trace_mm_vmscan_throttled(c, t, d, r);		\
} while (0)
#define trace_writeback_congestion_wait(c, t, d) do {			\
	if (trace_on(c))						\
		__trace_congest_waited(c, "writeback_congestion_wait",	\
				       t, d);				\
} while (0)
#define trace_writeback_wait_iff_congested(c, t, d) do {		\
	if (trace_on(c))						\
		__trace_congest_waited(c, "writeback_wait_iff_congested",\
				       t, d);				\
} while (0)
#define trace_writeback_reclaim_wait(c, t, d) do {			\
	if (trace_on(c))						\
		__trace_congest_waited(c, "writeback_reclaim_wait", t, d);\
} while (0)

#endif /* UF_TRACE_EVENTS_VMSCAN_H */
