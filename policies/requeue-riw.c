// SPDX-License-Identifier: MIT
/*
 * policies/requeue-riw.c - requeue=riw: Wu Fengguang's requeue_io_wait()
 * with b_more_io_wait (seed 000 L1921-1946 in the combined patch
 * L1895-2150): "never put an inode to b_more_io unless progress".
 *
 *   still dirty under sync/tagged → dirtied_when = now, then on (base)
 *   pages left, slice used up     → requeue_io
 *   pages left otherwise          → requeue_io_wait
 *   inode dirty                   → requeue_io_wait (XFS i_size, L1930-1945)
 *   clean                         → off the lists
 *
 * As posted, a still-dirty inode under WB_SYNC_ALL falls through to
 * requeue_io_wait, and b_more_io_wait is spliced into b_io whatever its
 * dirtied_when: sync livelock prevention (I14) no longer holds for it
 * (spec §7 [ours]).  Kept as the seed had it; pinned by a test.
 */
#include "policies/requeue.h"

DEFINE_REQUEUE_VARIANT(requeue_riw, "riw",
		       "seed 000 L1921-1946: requeue_io_wait + b_more_io_wait",
		       requeue_io_wait, requeue_io_wait);
