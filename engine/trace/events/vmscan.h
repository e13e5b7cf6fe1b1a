/* SPDX-License-Identifier: MIT */
/*
 * engine/trace/events/vmscan.h - reclaim's tracepoints: the kernel's
 * include/trace/events/vmscan.h (3.2 names and fields, for one zone),
 * mainline's mm_vmscan_throttled, and the writeback_congest_waited class
 * of include/trace/events/writeback.h (writeback_wait_iff_congested and
 * seed 003's writeback_reclaim_wait, S003:L863-868).
 */
#ifndef UF_TRACE_EVENTS_VMSCAN_H
#define UF_TRACE_EVENTS_VMSCAN_H

#include "trace/trace.h"

struct page;
struct reclaim_batch;

void __trace_mm_vmscan_lru_shrink_inactive(struct uf_cache *c,
					   unsigned long nr_scanned,
					   unsigned long nr_reclaimed,
					   const struct reclaim_batch *rb,
					   int priority);
void __trace_mm_vmscan_writepage(struct uf_cache *c, struct page *page);
void __trace_mm_vmscan_event(struct uf_cache *c, const char *event,
			     const char *field, unsigned long val);
void __trace_congest_waited(struct uf_cache *c, const char *event,
			    unsigned int usec_timeout,
			    unsigned int usec_delayed);

#define trace_mm_vmscan_lru_shrink_inactive(c, sc, rc, rb, prio) do {	\
	if (trace_on(c))						\
		__trace_mm_vmscan_lru_shrink_inactive(c, sc, rc, rb, prio);\
} while (0)
#define trace_mm_vmscan_writepage(c, page) do {				\
	if (trace_on(c))						\
		__trace_mm_vmscan_writepage(c, page);			\
} while (0)
#define trace_mm_vmscan_direct_reclaim_begin(c, nr) do {		\
	if (trace_on(c))						\
		__trace_mm_vmscan_event(c,				\
			"mm_vmscan_direct_reclaim_begin", "nr_to_reclaim", nr);\
} while (0)
#define trace_mm_vmscan_direct_reclaim_end(c, nr) do {			\
	if (trace_on(c))						\
		__trace_mm_vmscan_event(c,				\
			"mm_vmscan_direct_reclaim_end", "nr_reclaimed", nr);\
} while (0)
#define trace_mm_vmscan_wakeup_kswapd(c, nr) do {			\
	if (trace_on(c))						\
		__trace_mm_vmscan_event(c, "mm_vmscan_wakeup_kswapd",	\
					"nr_free", nr);			\
} while (0)
#define trace_mm_vmscan_kswapd_wake(c, nr) do {				\
	if (trace_on(c))						\
		__trace_mm_vmscan_event(c, "mm_vmscan_kswapd_wake",	\
					"nr_free", nr);			\
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
#define trace_mm_vmscan_throttled(c, t, d) do {				\
	if (trace_on(c))						\
		__trace_congest_waited(c, "mm_vmscan_throttled", t, d);	\
} while (0)

#endif /* UF_TRACE_EVENTS_VMSCAN_H */
