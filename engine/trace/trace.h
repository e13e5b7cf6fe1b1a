/* SPDX-License-Identifier: MIT */
/*
 * engine/trace/trace.h - the trace buffer the tracepoints print to, in
 * ftrace's text form, the file named by uf_cache_config.trace_path:
 *
 *   flush-7:0-1234  [001]  211.070000: writeback_start: bdi 7:0: sb_dev 0:0
 *       nr_pages=9223372036854774848 sync_mode=0 kupdate=0 range_cyclic=1
 *       background=1 reason=background
 *
 * Field names and order are the kernel's.  When tracing is off each
 * tracepoint costs one predictable branch (trace_on()).
 */
#ifndef UF_TRACE_H
#define UF_TRACE_H

#include <stdbool.h>

#include "mm/mm.h"

int uf_trace_open(struct uf_cache *cache, const char *path);
void uf_trace_close(struct uf_cache *cache);

static inline bool trace_on(const struct uf_cache *cache)
{
	return __builtin_expect(cache->trace != NULL, 0);
}

/* One trace line: "comm-pid [cpu] sec.usec: event: fields". */
__attribute__((format(printf, 3, 4)))
void trace_emit(struct uf_cache *c, const char *event, const char *fmt, ...);

#endif /* UF_TRACE_H */
