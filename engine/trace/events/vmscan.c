// SPDX-License-Identifier: MIT
/*
 * engine/trace/events/vmscan.c - reclaim's tracepoints (vmscan.h), each
 * printing the kernel's field names.
 */
#include "fs/fs.h"
#include "mm/mm.h"
#include "mm/vmscan.h"
#include "trace/events/vmscan.h"

void __trace_mm_vmscan_lru_shrink_inactive(struct uf_cache *c,
					   unsigned long nr_scanned,
					   unsigned long nr_reclaimed,
					   const struct reclaim_batch *rb,
					   int priority)
{
	trace_emit(c, "mm_vmscan_lru_shrink_inactive",
		   "nr_scanned=%lu nr_reclaimed=%lu nr_taken=%lu nr_dirty=%lu nr_writeback=%lu nr_pgreclaim=%lu priority=%d flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC",
		   nr_scanned, nr_reclaimed, rb->nr_taken, rb->nr_dirty,
		   rb->nr_writeback, rb->nr_pgreclaim, priority);
}

void __trace_mm_vmscan_writepage(struct uf_cache *c, struct page *page)
{
	trace_emit(c, "mm_vmscan_writepage",
		   "page=%p pfn=%lu ino=%lu index=%lu flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC",
		   (void *)page, (unsigned long)(page - c->pool.pages),
		   page->mapping && page->mapping->host ?
		   page->mapping->host->i_ino : 0UL, page->index);
}

void __trace_mm_vmscan_event(struct uf_cache *c, const char *event,
			     const char *field, unsigned long val)
{
	trace_emit(c, event, "%s=%lu", field, val);
}

void __trace_congest_waited(struct uf_cache *c, const char *event,
			    unsigned int usec_timeout,
			    unsigned int usec_delayed)
{
	trace_emit(c, event, "usec_timeout=%u usec_delayed=%u", usec_timeout,
		   usec_delayed);
}
