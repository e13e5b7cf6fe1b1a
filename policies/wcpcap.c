// SPDX-License-Identifier: MIT
/*
 * policies/wcpcap.c - wcpcap=stock, cap: write_cache_pages() of a file
 * whose embedder maps blocks at writeback time (uf_file_ops.map_blocks,
 * delayed allocation), where one call maps at most one allocator extent.
 * Files without a mapper are written the same under both.
 *
 *   stock  (seed 004 L5-20, ext4 before 2.6.34): each round accumulates
 *          the contiguous dirty pages to the end of the range, maps them
 *          (the mapper takes one extent), writes what was mapped and
 *          starts the next round; an fsync of N dirty pages visits about
 *          N^2 / (2 * extent) pages.
 *   cap    (seed 004 L21-24, Eric Sandeen's patch, merged for 2.6.34):
 *          accumulation stops at the mapper's extent (8 MiB / blocksize,
 *          2048 pages), which is mapped and submitted; the round ends
 *          there.  Linear.  Every preset names a kernel after 2.6.34.
 */
#include "policies/policy.h"

DEFINE_WB_VARIANT(wcpcap_stock, "wcpcap", "stock",
		  "seed 004: scan to the end of the range every round",
		  wcp_cap, false);

DEFINE_WB_VARIANT(wcpcap_cap, "wcpcap", "cap",
		  "seed 004 (2.6.34): stop at the mapper's extent",
		  wcp_cap, true);
