/* SPDX-License-Identifier: MIT */
/*
 * policies/policy.h - the decision points of writeback that a flush policy
 * chooses (DESIGN.md §4), and the registry that composes them.
 *
 * fs-writeback.c keeps the kernel's functions whole and asks the cache's
 * policy at exactly the places where the seeds' variants differ.  Each hook
 * is called with the locks the kernel held at that point (noted per hook),
 * so a variant reads like the hunk of the patch it comes from.  Each
 * variant lives in its own file in policies/ and names the seed lines it
 * mirrors.
 *
 * A policy spec is a preset name followed by knob=value overrides:
 *
 *	linux-3.2
 *	kara-v4.2,nowait=v4
 *	linux-3.1,nowait=v3b,requeue=p2-v3
 *	linux-3.2,plugin=./my-policy.so
 *
 * Knobs (the patch names of seed 000, docs/seeds.md):
 *   nowait    no-progress handling in wb_writeback:
 *             b0 v3a v3b v4 v4-r7 v4.1 v4.2 mainline
 *   requeue   where writeback_single_inode puts the inode:
 *             base p2-v3 requeue4 p2-v4 riw riw-sync mainline
 *   skipped   the pages_skipped block of writeback_sb_inodes:
 *             redirty requeue requeue-wait removed
 *   sbbusy    grab_super_passive() failed: redirty requeue requeue-wait
 *   cutoff    older_than_this of non-kupdate works: fixed v4.2 bg-all
 *   kupdate   fixed early (kupdate-early: retry while b_more_io_wait)
 *   progress  what wb_writeback returns: pages total
 *   bgthresh  over_bground_thresh(): global bdi (seed 001)
 *   chunk     writeback_chunk_size(): fixed bandwidth
 *   skipcount a page ->writepage declines (redirty_page_for_writepage):
 *             3.2 mainline
 *   wcpcap    write_cache_pages with a block mapper: stock cap (seed 004)
 *   bdp       the dirty throttle, balance_dirty_pages(): 3.1 (the writer
 *             writes pages itself and sleeps) 3.2 (IO-less: position and
 *             rate control) mainline (the wb_ form: think time, min
 *             pause, strictlimit)
 *   reclaim   what reclaim does with dirty and writeback pages
 *             (mm/vmscan.h): legacy 3.2 pageout mainline
 *   timer     when timers fire (engine/kernel/timer.h): cascade (3.x:
 *             at expires) wheel (4.8+: at the wheel bucket's expiry)
 *   plugin    a shared object whose uf_policy_plugin_init() may change any
 *             hook of the policy resolved so far (see README); it must
 *             export UF_POLICY_PLUGIN_ABI (below).  The resolved spec
 *             shows each knob whose member it changed as knob=plugin and
 *             ends with plugin=PATH(knob,...), or plugin=PATH(none)
 *
 * Parsing is strict, so that a typo never runs some other policy: the
 * spec is split on every ',', and an empty item (a leading, trailing or
 * doubled ','; "" as a whole), an item with whitespace, an item without
 * '=', "=value", "knob=", an unknown preset, knob or value, and the same
 * knob (plugin included) given twice in the spec are refused with
 * -EINVAL and a pr_err() naming the item and its position (1 = the
 * preset).  Overriding a knob with the value the preset already gives it
 * is fine ("linux-3.2,cutoff=bg-all"): the preset is not an item, the
 * rule is about the string.  A plugin PATH thus has no ',' or whitespace.
 */
#ifndef UF_POLICY_H
#define UF_POLICY_H

#include <stdbool.h>
#include <stddef.h>

struct address_space;
struct bdi_writeback;
struct inode;
struct reclaim_policy;
struct wb_writeback_work;
struct writeback_control;

/* wb_writeback()'s loop state that the variants read and write. */
struct wb_loop_state {
	unsigned long oldest_jif;	/* the cutoff (older_than_this) */
	unsigned long pause;		/* no-progress backoff, jiffies */
	unsigned long max_pause;
	long total_progress;
	unsigned long nr_waits;		/* no-progress waits, for benches */
};

#define WB_POLICY_NAME_LEN	64
#define WB_POLICY_SPEC_LEN	512

struct wb_policy {
	char name[WB_POLICY_NAME_LEN];	/* preset it started from */
	char spec[WB_POLICY_SPEC_LEN];	/* every knob=value, resolved */

	/*
	 * wb_writeback(): the pass wrote nothing and b_more_io is not empty.
	 * Wait (or not) for something to change.  Return true to end the
	 * work.  Called and returns with wb->list_lock held.
	 */
	bool (*no_progress)(struct bdi_writeback *wb,
			    struct wb_writeback_work *work,
			    struct wb_loop_state *st);

	/*
	 * wb_writeback(): set st->oldest_jif at the top of each iteration.
	 * kupdate always moves it to now - dirty_expire_interval; the
	 * variants differ in what background and other works do.
	 */
	void (*cutoff)(struct bdi_writeback *wb, struct wb_writeback_work *work,
		       struct wb_loop_state *st);

	/*
	 * writeback_single_inode(): where the inode goes after writeback,
	 * the inode not being freed.  inode_written: write_inode succeeded
	 * or was not needed.  dirtied_before: when the writeback_sb_inodes()
	 * pass started (kupdate: its expiry cutoff), as 6.18's
	 * requeue_inode() gets it; a sync_inode() call passes its own start.
	 * Called with wb->list_lock and i_lock held.
	 */
	void (*requeue)(struct inode *inode, struct bdi_writeback *wb,
			struct writeback_control *wbc, bool inode_written,
			unsigned long dirtied_before);

	/*
	 * writeback_sb_inodes(): wbc.pages_skipped != 0 after the inode was
	 * written.  NULL: the block is removed (P2-v4).  list_lock + i_lock.
	 */
	void (*pages_skipped)(struct inode *inode, struct bdi_writeback *wb);

	/*
	 * __writeback_inodes_wb(): grab_super_passive() failed for the
	 * inode's superblock.  list_lock and i_lock held (ABI 2: the
	 * list helpers below all want i_lock).
	 */
	void (*super_busy)(struct inode *inode, struct bdi_writeback *wb);

	/*
	 * balance_dirty_pages_ratelimited(): a writer dirtied a page of
	 * @mapping (or, with BDP_PEEK, asks about @nr_new more).  Throttle
	 * it as the chosen kernel did; BDP_ASYNC: instead of sleeping,
	 * return -EAGAIN with *pause in jiffies (mm/dirty-throttle.h).
	 * Called with no lock held, never for a flusher.
	 */
	int (*balance_dirty_pages)(struct address_space *mapping,
				   unsigned long nr_new, unsigned int flags,
				   long *pause);

	/* wb_writeback() returns total progress instead of pages. */
	bool return_total_progress;
	/*
	 * kupdate-early (seed 000 L1273-1373): kupdate runs at every flusher
	 * wakeup while b_more_io_wait is non-empty, and the flusher sleeps
	 * 1, 2, 4... jiffies up to max_pause while it is.
	 */
	bool kupdate_early;

	/*
	 * over_bground_thresh(): besides the global test, is a device whose
	 * own reclaimable pages exceed its share of background_thresh over
	 * the threshold?  (seed 001; policies/bgthresh.c)
	 */
	bool bgthresh_bdi;
	/*
	 * writeback_chunk_size(): MAX_WRITEBACK_PAGES per inode instead of
	 * about half a second of the device's bandwidth (policies/chunk.c).
	 */
	bool chunk_fixed;
	/*
	 * A page ->writepage declines: mainline takes it back out of the
	 * dirtied counts and out of writeback_sb_inodes' progress
	 * (policies/skipcount.c).  Both forms charge it to nr_to_write.
	 */
	bool skipcount_mainline;
	/*
	 * write_cache_pages() of a file with a block mapper (uf_file_ops.
	 * map_blocks): stop accumulating at the mapper's extent and submit,
	 * instead of scanning to the end of the range (seed 004;
	 * policies/wcpcap.c).
	 */
	bool wcp_cap;
	/*
	 * requeue=mainline also selects 6.18's inode path (Linux 6.18
	 * fs/fs-writeback.c, docs/linux-6.18.md): __writeback_single_inode
	 * clears I_DIRTY after do_writepages and re-sets I_DIRTY_PAGES if
	 * pages are still tagged; only the flusher requeues (sync_inode and
	 * write_inode_now take a clean inode off the lists, redirty_tail a
	 * dirty one not I_SYNC_QUEUED, leave the rest to the flusher);
	 * writeback_sb_inodes passes over an I_SYNC inode itself (WB_SYNC_NONE:
	 * requeue_io, not counted as progress; WB_SYNC_ALL: wait, start
	 * again); queue_io sets I_SYNC_QUEUED, which __mark_inode_dirty tests
	 * instead of I_SYNC.
	 */
	bool inode_wb_mainline;
	/*
	 * nowait=mainline also selects 6.18's wb_writeback loop: the cutoff
	 * hook runs only when b_io is empty, right before queue_io, and a
	 * pass without progress ends or waits only once some pass of the
	 * work has queued (6.18's "progress || !queued": continue).
	 */
	bool wb_loop_mainline;
	/*
	 * timer=wheel: the cache's timers (the flusher's wakeup timer and
	 * sleeps, a throttled writer's pause) fire at 4.8+'s bucket expiry,
	 * not at their expires (TIMER_UF_WHEEL; policies/timer.c).
	 */
	bool timer_wheel;
	/* reclaim=: the reclaim variant (engine/mm/vmscan.h) */
	const struct reclaim_policy *reclaim;

	void *plugin_handle;		/* dlopen() handle, if any */
};

/*
 * Resolve a spec into *pol.  NULL means the default preset.  Errors, each
 * with a pr_err() saying why:
 *   -EINVAL   a malformed spec (see above); for an unknown name the
 *             message lists the valid ones
 *   -ENOENT   plugin=PATH: no such file (another stat(2) error, such as
 *             -EACCES, is returned as it is).  A PATH without '/' is
 *             searched for by dlopen() in the library path: not loadable
 *             from there is -ENOENT too.
 *   -ENOEXEC  plugin=PATH exists but dlopen() refuses it (not an ELF
 *             shared object, wrong architecture, missing dependency), or
 *             it has no uf_policy_plugin_init() (dlerror()'s text is in
 *             the message), or no uf_policy_abi_version (built without
 *             UF_POLICY_PLUGIN_ABI)
 *   -EPROTO   its uf_policy_abi_version is not UF_POLICY_ABI_VERSION: it
 *             was built against another uflush; the message gives both
 *   other     uf_policy_plugin_init()'s own negative errno, passed on (a
 *             positive return is -EINVAL)
 * On error *pol holds nothing to release.
 */
int wb_policy_resolve(const char *spec, struct wb_policy *pol);
void wb_policy_release(struct wb_policy *pol);

#define WB_POLICY_DEFAULT	"mainline"

/* Presets and knob values, for listing (NULL-terminated). */
extern const char *const wb_policy_presets[];
/* Print every preset and knob with its values and seed lines. */
void wb_policy_list(void (*out)(void *priv, const char *line), void *priv);

/*
 * A plugin exports this (C linkage).  It gets the policy resolved from the
 * spec so far and may replace hooks; return 0 or a negative errno.
 */
typedef int (*uf_policy_plugin_init_t)(struct wb_policy *pol);
#define UF_POLICY_PLUGIN_SYMBOL	"uf_policy_plugin_init"

/*
 * The plugin ABI: struct wb_policy's layout, the hooks' prototypes and
 * the locks they are called with.  Bumped whenever one of them changes,
 * so that a plugin built against another uflush is refused at load
 * (-EPROTO) instead of writing its hooks into the wrong members.  A
 * plugin states the ABI it was built for by putting, at file scope:
 *
 *	UF_POLICY_PLUGIN_ABI;
 */
/* 2: requeue() gets dirtied_before; super_busy() holds i_lock; the
 * inode_wb_mainline and wb_loop_mainline members.  3: timer_wheel */
#define UF_POLICY_ABI_VERSION	3
#define UF_POLICY_ABI_SYMBOL	"uf_policy_abi_version"
#ifdef __cplusplus
#define UF_POLICY_ABI_LINKAGE	extern "C"
#else
#define UF_POLICY_ABI_LINKAGE	extern
#endif
#define UF_POLICY_PLUGIN_ABI						\
	UF_POLICY_ABI_LINKAGE __attribute__((visibility("default")))	\
	const unsigned int uf_policy_abi_version;			\
	__attribute__((visibility("default")))				\
	const unsigned int uf_policy_abi_version = UF_POLICY_ABI_VERSION

/* ---- one variant: a named value of a knob ---- */
struct wb_variant {
	const char *knob;
	const char *value;
	const char *source;	/* seed lines / kernel function it mirrors */
	void (*apply)(struct wb_policy *pol);
};

/*
 * Most variants set one member of the policy: define wb_variant_<sym>
 * (what registry.c lists) with an apply() doing pol->member = val.
 */
#define DEFINE_WB_VARIANT(sym, knob_, value_, source_, member, val)	\
	static void apply_##sym(struct wb_policy *pol)			\
	{								\
		pol->member = val;					\
	}								\
	const struct wb_variant wb_variant_##sym = {			\
		.knob = knob_, .value = value_, .source = source_,	\
		.apply = apply_##sym,					\
	}

/*
 * A reclaim variant (engine/mm/vmscan.h): reclaim_<sym> with its hooks,
 * and the value of the "reclaim" knob that picks it.
 */
#define DEFINE_RECLAIM_POLICY(sym, value_, oom_retries, writeback_page_,	\
			      dirty_page_, throttle_, after_priority_,	\
			      source_)					\
	const struct reclaim_policy reclaim_##sym = {			\
		.name = value_,						\
		.writeback_page = writeback_page_,			\
		.dirty_page = dirty_page_,				\
		.throttle = throttle_,					\
		.after_priority = after_priority_,			\
		.domain_oom_retries = oom_retries,			\
	};								\
	DEFINE_WB_VARIANT(reclaim_##sym, "reclaim", value_, source_,	\
			  reclaim, &reclaim_##sym)

/*
 * Test hook: called by the timed no-progress variants (v4, v4-r7, v4.1,
 * v4.2) right after their "other work queued? over the background
 * threshold?" checks and before they sleep, with list_lock dropped, so a
 * test can queue a work exactly in the window where v4 loses the wakeup
 * (B5).  NULL in normal use.
 */
extern void (*wb_nowait_test_hook)(struct bdi_writeback *wb);

/* Helpers the variants share (fs-writeback.c); list_lock and i_lock held. */
void redirty_tail(struct inode *inode, struct bdi_writeback *wb);
void requeue_io(struct inode *inode, struct bdi_writeback *wb);
void requeue_io_wait(struct inode *inode, struct bdi_writeback *wb);
void inode_wait_for_writeback(struct inode *inode, struct bdi_writeback *wb);
bool wb_work_pending(struct bdi_writeback *wb);

#endif /* UF_POLICY_H */
