/* SPDX-License-Identifier: MIT */
/*
 * engine/mm/vmscan.h - reclaim's state and decision points: the parts of
 * mm/vmscan.c (scan_control, the shrink_page_list outcomes), mm/swap.c
 * (pagevecs) and mm/backing-dev.c (wait_iff_congested, reclaim_wait) that
 * the reclaim variants in policies/reclaim-*.c need.
 *
 * What reclaim does with a dirty or a writeback page is the variant's
 * (struct reclaim_policy, chosen by the policy knob reclaim=): 3.1's
 * pageout() from reclaim, 3.2's "mark PG_reclaim and wake the flushers",
 * seed 003's pageout works with reclaim_wait(), mainline's
 * reclaim_throttle().  Everything else (isolation, freeing clean pages,
 * the priority loop, kswapd) is vmscan.c's and the same for all.
 */
#ifndef UF_VMSCAN_H
#define UF_VMSCAN_H

#include <stdbool.h>

#include "mm/mm.h"

#define DEF_PRIORITY			12
/* mm/memcontrol.c: no-progress reclaims before a charge fails */
#define MEM_CGROUP_RECLAIM_RETRIES	5
/* mainline mm/memcontrol.c */
#define MAX_RECLAIM_RETRIES		16

struct backing_dev_info;

struct scan_control {
	unsigned long nr_to_reclaim;
	unsigned long nr_reclaimed;
	unsigned long nr_scanned;	/* this priority, all lists */
	unsigned long total_scanned;	/* the whole do_try_to_free_pages */
	int priority;
	bool may_writepage;		/* pageout() allowed */
	bool kswapd;			/* current_is_kswapd() */
	bool global;			/* global_reclaim(): not a domain */
	/* mainline: one shrink_node() pass's batches summed (6.18
	 * scan_control.nr), read by its PGDAT_* / LRUVEC_* tests */
	struct {
		unsigned long dirty;
		unsigned long unqueued_dirty;
		unsigned long congested;
		unsigned long writeback;
		unsigned long immediate;
		unsigned long taken;
		unsigned long file_taken;
	} nr;
	/* mainline prepare_scan_control()'s cache trim mode: with file
	 * pages only it changes nothing but kswapd's restart */
	bool cache_trim_mode;
	bool cache_trim_mode_failed;
	bool no_cache_trim_mode;
};

/* Per shrink_page_list() call: what the batch held (3.2's out-params,
 * seed 003's ret_nr_pgreclaim, mainline's reclaim_stat). */
struct reclaim_batch {
	unsigned long nr_taken;
	/* 3.x: dirty; mainline: dirty or writeback */
	unsigned long nr_dirty;
	/* 3.x: dirty, not PG_reclaim; mainline: dirty, not writeback */
	unsigned long nr_unqueued_dirty;
	/* 3.x: under writeback; mainline: case 2 (PG_reclaim set now) */
	unsigned long nr_writeback;
	unsigned long nr_pgreclaim;	/* PG_reclaim met again */
	/* 3.x: pageout() refused (congested bdi); mainline: writeback
	 * with PG_reclaim */
	unsigned long nr_congested;
	unsigned long nr_immediate;	/* mainline case 1 */
	unsigned long nr_activate;	/* sent to the active list */
};

/* What shrink_page_list does with a dirty page after the variant's look. */
enum reclaim_dirty_action {
	RECLAIM_KEEP,		/* back to the LRU (PG_reclaim set or not) */
	RECLAIM_PAGEOUT,	/* write it from here: pageout() */
	RECLAIM_ACTIVATE,	/* to the active list */
};

struct reclaim_policy {
	const char *name;
	/* shrink_page_list(): @page (locked) is under writeback; the
	 * variant counts it and may set PG_reclaim.  It is kept (activated
	 * if the variant called reclaim_activate()); or, when this returns
	 * true, unlocked, waited for and looked at again (mainline's case
	 * 3). */
	bool (*writeback_page)(struct uf_cache *c, struct page *page,
			       struct scan_control *sc,
			       struct reclaim_batch *rb);
	/* shrink_page_list(): @page (locked) is dirty. */
	enum reclaim_dirty_action (*dirty_page)(struct uf_cache *c,
						struct page *page,
						struct scan_control *sc,
						struct reclaim_batch *rb);
	/* shrink_inactive_list(): after putback, no page lock held. */
	void (*throttle)(struct uf_cache *c, struct scan_control *sc,
			 struct reclaim_batch *rb);
	/* do_try_to_free_pages(): after each priority that did not reach
	 * nr_to_reclaim. */
	void (*after_priority)(struct uf_cache *c, struct scan_control *sc);
	/* A domain charge fails (-ENOMEM) after this many reclaims freed
	 * nothing (3.2: MEM_CGROUP_RECLAIM_RETRIES; mainline:
	 * MAX_RECLAIM_RETRIES): the memcg OOM of the kernel mirrored.
	 * 0: never. */
	int domain_oom_retries;
};

extern const struct reclaim_policy reclaim_legacy, reclaim_32,
	reclaim_pageout, reclaim_mainline;

/* The cache's reclaim variant (policy knob reclaim=; 3.2 if unset). */
const struct reclaim_policy *cache_reclaim_policy(struct uf_cache *c);

/* The variant is a 3.x one (legacy, 3.2, pageout): 3.2's kswapd, bdi
 * congestion and shrink_zone; else mainline's. */
bool reclaim_is_3x(struct uf_cache *c);

/* Shared by the variants (policies/reclaim-*.c). */
enum reclaim_dirty_action reclaim_keep_immediate(struct uf_cache *c,
						  struct page *page);
void reclaim_throttle_32(struct uf_cache *c, struct scan_control *sc,
			 struct reclaim_batch *rb);
void reclaim_nap_32(struct uf_cache *c, struct scan_control *sc);
void reclaim_after_priority_32(struct uf_cache *c, struct scan_control *sc);
bool reclaim_keep_writeback(struct uf_cache *c, struct page *page,
			    struct scan_control *sc, struct reclaim_batch *rb);
bool pageout_should_wait(struct uf_cache *c, struct scan_control *sc,
			 struct reclaim_batch *rb);
/* A writeback_page hook's "activate it" (the page goes to the active
 * list when put back; counted in nr_activate). */
void reclaim_activate(struct page *page, struct reclaim_batch *rb);

/* ---- engine/mm/vmscan.c ---- */

/* ->writepage for reclaim (page-writeback.c): @page locked, dirty bit
 * already cleared by clear_page_dirty_for_io(); puts it under writeback
 * and unlocks it. */
struct writeback_control;
int reclaim_writepage(struct page *page, struct writeback_control *wbc);

/* 3.2's pageout(): write one page from reclaim (PG_reclaim set). */
enum pageout_t { PAGE_KEEP, PAGE_ACTIVATE, PAGE_SUCCESS, PAGE_CLEAN };
enum pageout_t pageout(struct uf_cache *c, struct page *page,
		       struct scan_control *sc);

/* zone_dirty_ok() of 3.3: dirty+writeback within vm_dirty_ratio of the
 * dirtyable memory (the machine's, not a domain's). */
bool zone_dirty_ok(struct uf_cache *c);

/* 3.2 mm/backing-dev.c wait_iff_congested() (engine/mm/backing-dev.c):
 * sleep only if a bdi is write-congested and ZONE_CONGESTED is set.
 * Returns the jiffies left. */
long wait_iff_congested(struct uf_cache *c, int sync, long timeout);

/* current->backing_dev_info: the bdi this thread is writing to (3.2's
 * __generic_file_aio_write sets it), which may_write_to_queue() lets
 * reclaim write to even when congested.  NULL: none. */
void set_current_backing_dev_info(struct backing_dev_info *bdi);
struct backing_dev_info *current_backing_dev_info(void);

/* Seed 003: sleep on the cache's reclaim wait queue until a rotation
 * (reclaim_rotated) or @timeout.  Traced writeback_reclaim_wait. */
long reclaim_wait(struct uf_cache *c, long timeout);
void reclaim_rotated(struct uf_cache *c);

/* 6.18 include/linux/mmzone.h, in its order (the trace prints 1 << it) */
enum vmscan_throttle_state {
	VMSCAN_THROTTLE_WRITEBACK,
	VMSCAN_THROTTLE_ISOLATED,
	VMSCAN_THROTTLE_NOPROGRESS,
	VMSCAN_THROTTLE_CONGESTED,
	NR_VMSCAN_THROTTLE,
};

/* Mainline's reclaim_throttle() (6.18 mm/vmscan.c): WRITEBACK HZ/10,
 * ended early by the writeback accounting (__acct_reclaim_writeback);
 * ISOLATED HZ/50; NOPROGRESS and CONGESTED one jiffy, skipped when
 * kswapd gave up or write-pending pages are at most half the LRU. */
void reclaim_throttle(struct uf_cache *c, enum vmscan_throttle_state reason);
void reclaim_throttle_writeback(struct uf_cache *c);
void acct_reclaim_writeback(struct uf_cache *c, unsigned long nr);

/* shrink_zone() stops once this pass freed @nr_reclaimed (exported for
 * the tests): 3.x below DEF_PRIORITY only, mainline unless global direct
 * reclaim at DEF_PRIORITY. */
bool shrink_zone_done(struct uf_cache *c, struct scan_control *sc,
		      unsigned long nr_reclaimed);
/* One kswapd run, the variant's balance_pgdat(), in the calling thread
 * (kswapd's loop; the tests). */
void balance_pgdat(struct uf_cache *c);

/* The background reclaimer (kswapd): started with the cache. */
int kswapd_run(struct uf_cache *c);
void kswapd_stop(struct uf_cache *c);
/* Free frames fell below the low watermark: wake kswapd. */
void wakeup_kswapd(struct uf_cache *c);
/* current_is_kswapd(), and "in reclaim" (PF_MEMALLOC). */
bool current_is_kswapd(void);
bool current_in_reclaim(void);

struct uf_cache_stats;
void reclaim_fill_stats(struct uf_cache *c, struct uf_cache_stats *st);

/* ---- engine/mm/swap.c ---- */
/* Per-thread pagevecs: this thread's (lru_add_drain), every thread's for
 * @c (lru_add_drain_all); on thread exit they drain themselves. */
void lru_add_drain(void);
void lru_add_drain_all(struct uf_cache *c);
/* Every pagevec of @c flushed and unregistered (cache close). */
void lru_drain_cache(struct uf_cache *c);

#endif /* UF_VMSCAN_H */
