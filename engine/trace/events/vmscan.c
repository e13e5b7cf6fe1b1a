// SPDX-License-Identifier: MIT
/*
 * engine/trace/events/vmscan.c - reclaim's tracepoints (vmscan.h): the
 * TP_printk formats of 3.2.41 (3.x variants) or 6.18 (reclaim=mainline),
 * field for field.  The kernel prints %p as bare hex digits, a pointer's
 * width (no 0x); so do these.
 */
#include "fs/fs.h"
#include "mm/mm.h"
#include "mm/vmscan.h"
#include "trace/events/vmscan.h"

#define RECLAIM_FLAGS	"RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
#define GFP_FLAGS	"GFP_HIGHUSER_MOVABLE"

void __trace_mm_vmscan_lru_shrink_inactive(struct uf_cache *c,
					   unsigned long nr_scanned,
					   unsigned long nr_reclaimed,
					   const struct reclaim_batch *rb,
					   int priority)
{
	if (reclaim_is_3x(c)) {
		trace_emit(c, "mm_vmscan_lru_shrink_inactive",
			   "nid=0 zid=%d nr_scanned=%ld nr_reclaimed=%ld priority=%d flags=" RECLAIM_FLAGS,
			   UF_TRACE_ZID, (long)nr_scanned, (long)nr_reclaimed,
			   priority);
		return;
	}
	trace_emit(c, "mm_vmscan_lru_shrink_inactive",
		   "nid=0 nr_scanned=%ld nr_reclaimed=%ld nr_dirty=%ld nr_writeback=%ld nr_congested=%ld nr_immediate=%ld nr_activate_anon=0 nr_activate_file=%d nr_ref_keep=0 nr_unmap_fail=0 priority=%d flags=" RECLAIM_FLAGS,
		   (long)nr_scanned, (long)nr_reclaimed, (long)rb->nr_dirty,
		   (long)rb->nr_writeback, (long)rb->nr_congested,
		   (long)rb->nr_immediate, (int)rb->nr_activate, priority);
}

/* isolate_mode: 3.2's ISOLATE_INACTIVE (1); 6.18 prints no isolate_mode
 * (include/trace/events/vmscan.h:316) */
void __trace_mm_vmscan_lru_isolate(struct uf_cache *c,
				   unsigned long nr_requested,
				   unsigned long nr_scanned,
				   unsigned long nr_taken)
{
	if (reclaim_is_3x(c)) {
		trace_emit(c, "mm_vmscan_lru_isolate",
			   "isolate_mode=1 order=0 nr_requested=%lu nr_scanned=%lu nr_taken=%lu contig_taken=0 contig_dirty=0 contig_failed=0",
			   nr_requested, nr_scanned, nr_taken);
		return;
	}
	trace_emit(c, "mm_vmscan_lru_isolate",
		   "classzone=%d order=0 nr_requested=%lu nr_scanned=%lu nr_skipped=0 nr_taken=%lu lru=inactive_file",
		   UF_TRACE_ZID, nr_requested, nr_scanned, nr_taken);
}

void __trace_mm_vmscan_writepage(struct uf_cache *c, struct page *page)
{
	unsigned long pfn = (unsigned long)(page - c->pool.pages);

	/* 6.18 names it mm_vmscan_write_folio; reclaim=mainline never
	 * writes a file page, so only the 3.x form is emitted in practice */
	if (reclaim_is_3x(c))
		trace_emit(c, "mm_vmscan_writepage",
			   "page=%016lx pfn=%lu flags=" RECLAIM_FLAGS,
			   (unsigned long)(uintptr_t)page, pfn);
	else
		trace_emit(c, "mm_vmscan_write_folio",
			   "page=%016lx pfn=0x%lx flags=" RECLAIM_FLAGS,
			   (unsigned long)(uintptr_t)page, pfn);
}

void __trace_mm_vmscan_direct_reclaim_begin(struct uf_cache *c,
					    int may_writepage)
{
	if (reclaim_is_3x(c))
		trace_emit(c, "mm_vmscan_direct_reclaim_begin",
			   "order=0 may_writepage=%d gfp_flags=" GFP_FLAGS,
			   may_writepage);
	else
		trace_emit(c, "mm_vmscan_direct_reclaim_begin",
			   "order=0 gfp_flags=" GFP_FLAGS);
}

void __trace_mm_vmscan_direct_reclaim_end(struct uf_cache *c,
					  unsigned long nr_reclaimed)
{
	trace_emit(c, "mm_vmscan_direct_reclaim_end", "nr_reclaimed=%lu",
		   nr_reclaimed);
}

void __trace_mm_vmscan_wakeup_kswapd(struct uf_cache *c)
{
	if (reclaim_is_3x(c))
		trace_emit(c, "mm_vmscan_wakeup_kswapd",
			   "nid=0 zid=%d order=0", UF_TRACE_ZID);
	else
		trace_emit(c, "mm_vmscan_wakeup_kswapd",
			   "nid=0 order=0 gfp_flags=" GFP_FLAGS);
}

void __trace_mm_vmscan_kswapd_wake(struct uf_cache *c)
{
	trace_emit(c, "mm_vmscan_kswapd_wake", "nid=0 order=0");
}

void __trace_mm_vmscan_kswapd_sleep(struct uf_cache *c)
{
	trace_emit(c, "mm_vmscan_kswapd_sleep", "nid=0");
}

/* 6.18 show_throttle_flags() of 1 << reason, and the field spelled
 * usect_delayed (include/trace/events/vmscan.h:532): tools match that */
static const char *const throttle_names[NR_VMSCAN_THROTTLE] = {
	[VMSCAN_THROTTLE_WRITEBACK] = "VMSCAN_THROTTLE_WRITEBACK",
	[VMSCAN_THROTTLE_ISOLATED] = "VMSCAN_THROTTLE_ISOLATED",
	[VMSCAN_THROTTLE_NOPROGRESS] = "VMSCAN_THROTTLE_NOPROGRESS",
	[VMSCAN_THROTTLE_CONGESTED] = "VMSCAN_THROTTLE_CONGESTED",
};

void __trace_mm_vmscan_throttled(struct uf_cache *c, unsigned int usec_timeout,
				 unsigned int usec_delayed, int reason)
{
	const char *name = reason >= 0 && reason < NR_VMSCAN_THROTTLE ?
			   throttle_names[reason] : "VMSCAN_THROTTLE_NONE";

	trace_emit(c, "mm_vmscan_throttled",
		   "nid=0 usec_timeout=%d usect_delayed=%d reason=%s",
		   (int)usec_timeout, (int)usec_delayed, name);
}

void __trace_congest_waited(struct uf_cache *c, const char *event,
			    unsigned int usec_timeout,
			    unsigned int usec_delayed)
{
	trace_emit(c, event, "usec_timeout=%u usec_delayed=%u", usec_timeout,
		   usec_delayed);
}
