/* SPDX-License-Identifier: MIT */
/*
 * uflush.h - the public API of uflush, a userspace page cache whose flusher
 * threads implement the Linux kernel's writeback algorithms.
 *
 * Objects:
 *   struct uf_cache  one page pool and one dirty domain ("memory"), with its
 *                    /proc/sys/vm tunables and its flush policy
 *   struct uf_dev    a block device (or a file standing in for one) in a
 *                    cache: one backing_dev_info, one flusher thread
 *   struct uf_file   an "inode": a byte range of a device, with its pages
 *   struct uf_page   one cached page, for zero-copy use by a buffer pool
 *
 * Conventions: functions return 0 (or a byte count) on success and a
 * negative errno on failure, and a failed call changes nothing.  Handles
 * are opaque.  All calls are thread-safe unless noted.
 *
 * Errors common to all calls: -EBADF for a handle that is NULL, closed or
 * was never issued; -EINVAL for a NULL or malformed argument other than the
 * handle.
 *
 * Handle lifetimes:
 *  - A handle value is never issued twice: a closed handle stays -EBADF for
 *    every call, also after a later open took the same place in the
 *    handle table (handles carry a generation; a table slot is retired
 *    rather than reused after 2^40 opens).
 *  - A close may race with calls on the same handle from other threads.
 *    Each such call either runs to the end on the open object, or returns
 *    -EBADF without touching it; the close waits for the calls that
 *    started before it (an fsync waiting for I/O, a writer in the dirty
 *    throttle) and then tears the object down.  Calls that start after
 *    the close has begun get -EBADF.  Of two racing closes, one does the
 *    work and the other gets -EBADF.
 *  - A close never waits for something only its caller could release.
 *    From inside a uf_file_ops callback, closing the callback's file, its
 *    device or its cache is -EDEADLK (the callback runs inside writeback
 *    of that file); nothing is closed.
 *  - Page handles: one per uf_page_get() (two gets of one page are two
 *    handles); uf_page_put() closes it.  A page handle with UF_PAGE_WRITE
 *    holds its file: uf_file_close() is -EBUSY while one is held, by any
 *    thread, and closes nothing (logged with the count).  Without
 *    UF_PAGE_WRITE it does not hold the file, and stays usable after the
 *    file's close (uf_page_data, uf_page_put) until it is put.  Every page
 *    handle holds its cache: uf_cache_close() is -EBUSY while any is held.
 *    (The kernel's umount of a busy filesystem: -EBUSY, not a sleep.)  A
 *    page handle got by a call that was already running when the close
 *    began is waited for, as that call is.
 */
#ifndef UFLUSH_H
#define UFLUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uf_cache;
struct uf_dev;
struct uf_file;
struct uf_page;

/* ------------------------------------------------------------------ */
/* Messages                                                            */

/*
 * Where uflush's messages go (which I/O engine a device uses, fallbacks,
 * write errors).  level is a syslog level (3 = error ... 7 = debug).
 * Without a callback, messages up to level 5 (or $UFLUSH_LOGLEVEL) go to
 * stderr.  Pass NULL to restore that.
 */
typedef void (*uf_log_fn_t)(void *priv, int level, const char *msg);
void uf_set_log_fn(uf_log_fn_t fn, void *priv);

/* ------------------------------------------------------------------ */
/* Cache                                                               */

/*
 * Configuration of a cache.  Fill with uf_cache_config_init(), then change
 * what you need.  The tunables mirror /proc/sys/vm and default to the
 * kernel's values; as in the kernel, setting a *_bytes value makes it win
 * over the matching *_ratio (ratios are percent of the pool).
 */
struct uf_cache_config {
	size_t nr_pages;		/* 4 KiB frames in the pool (65536) */
	const char *policy;		/* flush policy spec; NULL = "mainline"
				 * (today's kernel); "linux-3.2" etc. name
				 * the historical kernels (README) */
	unsigned int hz;		/* jiffies per second (1000); see below */
	unsigned int max_io_pages;	/* most pages merged into one write;
				 * 0 (default): as many as the device
				 * queue takes unsplit (max_sectors_kb,
				 * max_segments), 256 for a file; at
				 * most 1024 */

	unsigned int dirty_ratio;		/* 20 */
	unsigned int dirty_background_ratio;	/* 10 */
	unsigned long dirty_bytes;		/* 0 */
	unsigned long dirty_background_bytes;	/* 0 */
	unsigned int dirty_expire_centisecs;	/* 3000 */
	unsigned int dirty_writeback_centisecs;	/* 500; 0 = no kupdate */

	const char *trace_path;		/* write tracepoints here; NULL = off */

	/*
	 * A memory domain (memcg): 0 = none.  Otherwise the cache may hold
	 * only this many pages, as a memcg's limit, inside a machine of
	 * nr_pages (which then only sizes the dirty limits: they are the
	 * machine's, as memcg had no dirty accounting; only the domain's
	 * frames are allocated).  Reclaim is the domain's own (no kswapd)
	 * and may fail allocations: see "-ENOMEM and short counts".
	 * 16 <= mem_limit_pages <= nr_pages, else -EINVAL.
	 */
	size_t mem_limit_pages;

	/*
	 * What the frame pool is: NULL or "data" (the default), memory that
	 * holds the pages' bytes; "none", frames that hold nothing: every
	 * 2 MiB of the pool is mapped onto one shared 2 MiB region, so a
	 * 16 GiB cache costs about 2 MiB plus its page tables and its page
	 * descriptors (64 bytes a frame).  Page contents are then garbage:
	 * a read returns whatever another page last wrote over the same
	 * bytes.  For throughput runs over devices that discard data (a
	 * uf_sim device with keep_data=0); uf_dev_open() of any other
	 * device on such a cache is -EINVAL.  Another value: -EINVAL.
	 */
	const char *frames;
};

int uf_cache_config_init(struct uf_cache_config *cfg);

/*
 * Open a cache: allocates the whole frame pool up front.  hz is process
 * wide (jiffies are one clock): a second cache must use the same value or
 * gets -EINVAL.
 *
 * cfg.policy errors (each logged, naming the cause): -EINVAL for a
 * malformed spec: an unknown name, an empty item (stray ','), whitespace,
 * "knob=" or "=value", or the same knob twice; for plugin=PATH, -ENOENT
 * if PATH does not exist, -ENOEXEC if it is not a loadable shared object
 * or lacks uf_policy_plugin_init(), and that function's own error if it
 * fails.  policies/policy.h has the details.
 */
int uf_cache_open(const struct uf_cache_config *cfg, struct uf_cache **out);

/*
 * The resolved flush policy of a cache: "preset: knob=value ..." with every
 * knob, as it runs (record it with every result).  cfg.policy takes a
 * preset (linux-3.1, linux-3.2, linux-3.3, kara-v4.2, wu-riw, mainline =
 * the default)
 * followed by ,knob=value overrides and ,plugin=PATH.so; see README.
 * The string lives until the cache is closed; NULL for a bad handle.
 */
const char *uf_cache_policy(struct uf_cache *cache);

/* Write back everything, stop the flushers, close all devices and files,
 * free the pool.  Returns the first writeback error, if any (the cache is
 * closed either way).  Waits for calls in flight on the cache, its devices
 * and its files; calls racing with it get -EBADF.  -EBUSY (nothing closed)
 * while a page handle of the cache is held; -EDEADLK from a uf_file_ops
 * callback of one of its files. */
int uf_cache_close(struct uf_cache *cache);

/*
 * Change a tunable at run time by its /proc/sys/vm name ("dirty_ratio",
 * "dirty_background_bytes", "dirty_writeback_centisecs", ...).  Unknown
 * name: -ENOENT.
 */
int uf_cache_set_tunable(struct uf_cache *cache, const char *name,
			 unsigned long value);
int uf_cache_get_tunable(struct uf_cache *cache, const char *name,
			 unsigned long *value);

/* Write back and wait for everything dirty in the cache, then flush every
 * device's volatile cache (sync(2)). */
int uf_sync(struct uf_cache *cache);

/* ------------------------------------------------------------------ */
/* Devices                                                             */

/* What a shaping wrapper does to a device's I/O (UF_DEV_SHAPED). */
struct uf_io_shape {
	uint64_t bw_bytes_per_sec;	/* 0 = unlimited */
	uint32_t latency_us;		/* added to every request */
	uint64_t eio_offset;		/* requests touching [eio_offset, */
	uint64_t eio_len;		/*  +eio_len) fail with -EIO (0 = off) */
	uint32_t eio_ops;		/* bitmask of 1 << op (0 read, 1 write,
					 * 2 flush); 0 = writes only */
	uint32_t eio_every_nth;		/* every Nth request fails (0 = off) */
};

#define UF_DEV_FORCE	(1u << 0)	/* open even if mounted or busy */
#define UF_DEV_SHAPED	(1u << 2)	/* put the shaping wrapper in */

struct uf_dev_config {
	const char *engine;		/* "io_uring" (default), "libaio",
					 * "psync"; falls back if unavailable;
					 * "sim": path names a uf_sim device */
	unsigned int queue_depth;	/* 0 = 64 */
	unsigned int flags;		/* UF_DEV_* */
};

/*
 * Add a device to a cache and start its flusher thread.  The device is
 * opened O_DIRECT (and O_EXCL for a block device).  -EBUSY: mounted, swap,
 * or held by someone else (UF_DEV_FORCE overrides); -ENOENT; -ENODEV not a
 * block device or regular file; -EINVAL the path cannot do O_DIRECT.
 */
int uf_dev_open(struct uf_cache *cache, const char *path,
		const struct uf_dev_config *cfg, struct uf_dev **out);

/* Stop the flusher and close the device.  -EBUSY while files are open
 * (nothing is closed then); -EDEADLK from a uf_file_ops callback of one of
 * its files.  Waits for calls in flight on the device; drops a
 * uf_dev_hold_umount() hold, whichever thread took it (the hold belongs
 * to the device, not to a thread). */
int uf_dev_close(struct uf_dev *dev);

int uf_dev_set_shape(struct uf_dev *dev, const struct uf_io_shape *shape);
int uf_dev_stall(struct uf_dev *dev, unsigned int ms);

/*
 * Hold the device's superblock s_umount for writing, as an unmount or
 * remount would: while held, the flusher's grab_super_passive() fails for
 * this device's inodes.  For reproducing the seeds' stuck cases.  -EBUSY
 * if held already; release: -EINVAL if not held.  The hold belongs to the
 * device, not to the thread that took it: any thread may release it, and
 * uf_dev_close drops it.
 */
int uf_dev_hold_umount(struct uf_dev *dev);
int uf_dev_release_umount(struct uf_dev *dev);

/* ------------------------------------------------------------------ */
/* Files (inodes)                                                      */

/* i_state dirty bits, with the kernel's values. */
#define UF_I_DIRTY_SYNC		(1u << 0)
#define UF_I_DIRTY_DATASYNC	(1u << 1)

/* Which writeback is asking, for uf_file_ops.writepages_veto. */
enum uf_wb_kind {
	UF_WB_KUPDATE = 1,	/* periodic: for_kupdate */
	UF_WB_BACKGROUND,	/* for_background */
	UF_WB_OTHER_NONE,	/* other WB_SYNC_NONE work (e.g. writeback_inodes_sb) */
	UF_WB_SYNC,		/* WB_SYNC_ALL: fsync, sync */
};

/*
 * What the embedder supplies for its files; every member is optional.
 * The callbacks are called from the flusher (or an fsync caller) with no
 * uflush lock held; write_inode and writepages_veto may call
 * uf_pwrite/uf_file_mark_inode_dirty on the same file.
 *
 * write_inode: write the file's metadata (called when the inode is dirty
 *   with UF_I_DIRTY_SYNC/DATASYNC).  sync is 1 for data integrity
 *   (WB_SYNC_ALL).  Return 0, -EAGAIN ("a lock is held, try later": the
 *   inode stays dirty, as XFS redirtied it), or another -errno (reported
 *   to the fsync that asked, the inode counts as written).
 * writepages_veto: return non-zero to decline writing pages for this kind
 *   of writeback; the pages stay dirty and nothing is counted written (as
 *   btrfs declined kupdate for its btree inode).  Declining UF_WB_SYNC
 *   makes that fsync return -EAGAIN.
 * map_blocks: delayed allocation.  Writeback gathers a run of contiguous
 *   dirty pages and, before writing it, asks for blocks for the pages
 *   [index, index + nr_pages).  Return how many pages from index were
 *   mapped (0..nr_pages; an allocator maps at most one extent per call,
 *   as ext4's mballoc did); only those are written now, the rest stay
 *   dirty for the next round.  0 (nothing can be mapped now) ends this
 *   writeback; an fsync that needed those pages fails with -EAGAIN.  A
 *   -errno stops this writeback with the pages left dirty and reaches the
 *   fsync that asked.  The pages of the
 *   run are locked meanwhile: do not uf_page_get them from here.  The
 *   policy knob wcpcap says how runs are gathered (seed 004): to the end
 *   of the range on every round (stock), or up to max_extent_pages (cap).
 * max_extent_pages: the most pages map_blocks maps in one call, for
 *   wcpcap=cap; 0 is 2048 (8 MiB, mballoc's largest extent).
 */
struct uf_file_ops {
	int (*write_inode)(struct uf_file *file, void *priv, int sync);
	int (*writepages_veto)(struct uf_file *file, void *priv,
			       enum uf_wb_kind kind);
	int (*map_blocks)(struct uf_file *file, void *priv,
			  unsigned long index, unsigned long nr_pages);
	unsigned long max_extent_pages;
};

/*
 * Open a file: the byte range [dev_offset, dev_offset + length) of the
 * device, named by ino (unique per device).  dev_offset must be a multiple
 * of 4096; length is rounded up to a multiple of 4096 and must fit in the
 * device.  -EEXIST ino in use; -EBUSY range overlaps an open file; -ERANGE
 * outside the device.
 */
int uf_file_open(struct uf_dev *dev, uint64_t ino, uint64_t dev_offset,
		 uint64_t length, const struct uf_file_ops *ops, void *priv,
		 struct uf_file **out);

/* Write back and drop the file's pages, then close it; waits for calls in
 * flight on the file.  -EBUSY (nothing closed) while a page of the file is
 * held with UF_PAGE_WRITE; -EDEADLK from the file's own uf_file_ops
 * callback.  Returns a writeback error not yet reported by fsync, if
 * any. */
int uf_file_close(struct uf_file *file);

/*
 * Read and write through the cache.  Any alignment and length.  A write past
 * the file's length fails with -EFBIG and writes nothing; a read past it is
 * short.  A partial-page write reads the rest of the page from the device
 * first.  Writers may be throttled when the cache is over its dirty limit.
 */
ssize_t uf_pwrite(struct uf_file *file, const void *buf, size_t len,
		  uint64_t offset);
ssize_t uf_pread(struct uf_file *file, void *buf, size_t len,
		 uint64_t offset);

/* ---- begin: non-blocking write (dirty throttle, issue 9) ---- */
/*
 * uf_pwrite_nb: uf_pwrite for an event loop: it never sleeps in the dirty
 * throttle.  Where uf_pwrite would be paused (balance_dirty_pages, of the
 * cache policy's bdp kernel) it returns -EAGAIN having written nothing,
 * with *pause_ns set to the pause it would have taken (at most 200 ms;
 * 3.1's first pause is one jiffy).  Wait that long and call again: a call
 * made sooner gets -EAGAIN and the time still left; the call after the
 * wait writes, the pause counting as taken.  A write that goes ahead may
 * still wait for a free frame (see the allocation contract below) but is
 * not throttled; whatever pause it earns is asked for by the next call.
 * *pause_ns is 0 unless -EAGAIN.  Other errors as uf_pwrite; pause_ns
 * NULL: -EINVAL.  The kernel's counterpart is BDP_ASYNC
 * (balance_dirty_pages_ratelimited_flags), which io_uring's buffered
 * writes use; here it is asked before any byte is copied.
 */
ssize_t uf_pwrite_nb(struct uf_file *file, const void *buf, size_t len,
		     uint64_t offset, uint64_t *pause_ns);
/* ---- end: non-blocking write ---- */

/* ---- begin: -ENOMEM and short counts (page allocation contract) ---- */
/*
 * -ENOMEM and short counts.  uf_pwrite, uf_pread and uf_page_get need a
 * free frame for each page not already cached.  When none is free they
 * wait, as long as it takes, for one to become free: clean pages are
 * reclaimed, dirty ones are written by the flusher (woken for it), pages
 * under writeback are waited for, and frames held by calls in flight in
 * other threads are waited for until those calls release them.  Threads
 * waiting for frames are served in the order they began to wait.
 * They return -ENOMEM in exactly one case: every frame of the cache is
 * pinned, i.e. holds a page obtained with uf_page_get and not yet given
 * back with uf_page_put (by this thread or any other); then no frame could
 * ever be freed without the holders, and the call fails instead of waiting
 * for them (a page-cache "out of memory"; a warning is logged).  Nothing
 * is changed by a call that fails so.  A uf_pwrite that has already copied
 * some bytes when that happens returns the count copied (those bytes are
 * in the cache and written back as usual); a uf_pread likewise returns a
 * short count.  A short uf_pwrite count means that, or -EIO reading a
 * partial page from the device; never anything else.
 *
 * One more case, opt-in: a cache opened with a memory limit
 * (cfg.mem_limit_pages, a memory domain: the seed-003 memcg) reproduces
 * its kernel's memcg OOM.  When reclaim in the domain frees nothing 5
 * times for one allocation (MEM_CGROUP_RECLAIM_RETRIES) and no page of it
 * is clean, the call fails with -ENOMEM (or a short count, as above) as
 * the kernel would OOM-kill the writer: every reclaim= variant can (3.2
 * does quickly on a fully dirty domain; reclaim=pageout slows reclaim to
 * the I/O rate and does not in seed 003's case; legacy and mainline may
 * on a tiny domain over a slow device).  The retries are 5 for legacy,
 * 3.2 and pageout (MEM_CGROUP_RECLAIM_RETRIES), 16 for mainline.  Each
 * such failure is counted (uf_cache_stats.nr_oom) and logged, and wakes
 * the flushers so that a retry can succeed.  Without a memory limit no
 * variant fails but as described above.
 */
/* ---- end: -ENOMEM and short counts ---- */

/*
 * Make the file durable: write and wait for its dirty pages (WB_SYNC_ALL),
 * write its inode (fdatasync: only if I_DIRTY_DATASYNC), flush the device's
 * volatile cache.  A write error since the last fsync of this file is
 * returned once as -EIO (the kernel's errseq rule).
 */
int uf_fsync(struct uf_file *file);
int uf_fdatasync(struct uf_file *file);

/* Mark the file's metadata dirty (UF_I_DIRTY_SYNC | UF_I_DIRTY_DATASYNC):
 * __mark_inode_dirty(); the flusher calls ops->write_inode later. */
int uf_file_mark_inode_dirty(struct uf_file *file, unsigned int flags);

/* ------------------------------------------------------------------ */
/* Pages: zero-copy access for buffer pools                            */

#define UF_PAGE_NOREAD	(1u << 0)	/* on a miss, don't read the device:
					 * the page starts zeroed */
#define UF_PAGE_NOCREATE (1u << 1)	/* only find a cached page (-ENOENT) */
#define UF_PAGE_WRITE	(1u << 2)	/* return it locked and not under
					 * writeback, ready to modify */

/*
 * Find or create page `index` of the file and take a reference.  Without
 * UF_PAGE_WRITE the data may be read but not changed; with it, the page is
 * locked (other writers and writeback wait) until uf_page_put().  May
 * sleep for a free frame.  The page returned always holds the file's
 * data: a page another thread is still reading is waited for, with every
 * flag.  -EFBIG index past the file; -ENOMEM no frame could be freed;
 * -EIO the read failed; -ENOENT with UF_PAGE_NOCREATE, no page with the
 * file's data is cached (never cached, reclaimed, or its read failed:
 * NOCREATE never starts I/O); -EMFILE 2^21 page handles are held already;
 * -EBADF also when the file's cache is being closed; -EINVAL unknown
 * flags or a NULL out.
 */
int uf_page_get(struct uf_file *file, unsigned long index, unsigned int flags,
		struct uf_page **out);
/* 4096 bytes, aligned; valid until the handle is put.  NULL for a bad
 * handle. */
void *uf_page_data(struct uf_page *page);
/* Mark a page obtained with UF_PAGE_WRITE dirty (set_page_dirty); -EPERM
 * for a handle got without UF_PAGE_WRITE. */
int uf_page_set_dirty(struct uf_page *page);
/* Unlock if locked, drop the reference; the caller may then be throttled. */
int uf_page_put(struct uf_page *page);

/* ------------------------------------------------------------------ */
/* Statistics                                                          */

/* One device: what the kernel's /sys/kernel/debug/bdi/<dev>/stats shows,
 * plus totals.  Sizes in KiB as there; counts of inodes per list. */
struct uf_dev_stats {
	unsigned long bdi_writeback_kb;
	unsigned long bdi_reclaimable_kb;
	unsigned long bdi_dirty_thresh_kb;
	unsigned long dirty_thresh_kb;
	unsigned long background_thresh_kb;
	unsigned long bdi_dirtied_kb;
	unsigned long bdi_written_kb;
	unsigned long bdi_write_bandwidth_kbps;
	unsigned long b_dirty;
	unsigned long b_io;
	unsigned long b_more_io;
	unsigned long b_more_io_wait;
	unsigned long state;		/* BDI_* bits */
	unsigned long write_errors;	/* failed write requests */
	unsigned long works_done;	/* wb_writeback works run */
	unsigned long wcp_pages_scanned; /* dirty pages write_cache_pages
					    looked at, written or not */
	/* the flusher's list decisions (seed 000): no-progress waits of
	 * wb_writeback (the writeback_wait tracepoint), and calls of
	 * requeue_io() (to b_more_io) and redirty_tail() (to b_dirty) */
	unsigned long wb_waits;
	unsigned long requeue_io;
	unsigned long redirty_tail;
	/* seed 001's decision point: over_bground_thresh() calls where the
	 * device's own background test (reclaimable pages over its share of
	 * background_thresh) was over and the global one was not; counted
	 * under bgthresh=global as well, where the answer is no, so that an
	 * A/B run shows how often the two variants decide differently */
	unsigned long bg_bdi_only;
	/* the device's I/O, as /proc/diskstats counts it (issue 13) */
	uint64_t size_bytes;		/* the device's size */
	uint64_t io_ticks_ms;		/* busy: >= 1 request in flight */
	uint64_t write_ios;		/* completed write requests */
	uint64_t write_bytes;		/* their bytes (mean: / write_ios) */
	uint64_t fixed_ios;		/* requests of either kind served from
					 * the registered frame pool (io_uring,
					 * Linux 6.15+): no per-request pinning */
	/* when the snapshot was taken: the engine's jiffies (uf_jiffies
	 * clock) and uf_now_ns() */
	unsigned long at_jiffies;
	uint64_t at_ns;
};

struct uf_cache_stats {
	unsigned long nr_pages;		/* frames in the pool (a domain's) */
	unsigned long nr_free;
	unsigned long nr_file_pages;	/* cached */
	unsigned long nr_dirty;
	unsigned long nr_writeback;
	unsigned long nr_dirtied;	/* total pages ever dirtied */
	unsigned long nr_written;	/* total pages ever written */
	unsigned long dirty_thresh;	/* pages */
	unsigned long background_thresh;
	unsigned long write_errors;

	/* reclaim (vmstat's names in the comments) */
	unsigned long mem_limit;		/* domain frames, 0 = none */
	unsigned long nr_scanned;		/* pgscan */
	unsigned long nr_reclaimed;		/* pgsteal */
	unsigned long nr_rotated;		/* pgrotated */
	unsigned long nr_immediate;		/* nr_vmscan_immediate_reclaim */
	unsigned long nr_pageout;		/* pages written by reclaim */
	unsigned long nr_pageout_works;		/* seed 003 works queued */
	unsigned long nr_pageout_merged;	/* pages merged into works */
	unsigned long nr_pageout_nomem;		/* work reserve empty */
	unsigned long nr_reclaim_wait;		/* writeback_reclaim_wait */
	unsigned long reclaim_wait_us;		/* total usec_delayed */
	unsigned long reclaim_wait_timeouts;	/* waits of a full HZ/10 */
	unsigned long nr_congestion_wait;	/* wait_iff_congested slept */
	unsigned long nr_throttle;		/* mainline reclaim_throttle */
	unsigned long nr_flusher_wakeups;	/* by reclaim */
	unsigned long nr_kswapd_runs;
	unsigned long nr_alloc_stall;		/* allocstall */
	unsigned long nr_oom;			/* allocations failed */

	unsigned long at_jiffies;	/* as in uf_dev_stats */
	uint64_t at_ns;
};

int uf_dev_stats(struct uf_dev *dev, struct uf_dev_stats *st);
int uf_cache_stats(struct uf_cache *cache, struct uf_cache_stats *st);

/* ---- begin: what a benchmark harness needs (issue 13) ---- */
/* One file: its cached pages and the pages whose writeback completed. */
struct uf_file_stats {
	unsigned long nr_pages;		/* in the cache now */
	unsigned long pages_written;	/* total, since the file was opened */
	unsigned long at_jiffies;	/* as in uf_dev_stats */
	uint64_t at_ns;
};

int uf_file_stats(struct uf_file *file, struct uf_file_stats *st);

/* A device's size in bytes (what uf_file_open's ranges must fit in). */
int uf_dev_size(struct uf_dev *dev, uint64_t *bytes);

/*
 * Resolve a flush policy spec as uf_cache_open() would, without opening
 * a cache (to check or record it up front): the string uf_cache_policy()
 * would give goes to buf.  NULL spec: the default.  cfg.policy's errors
 * (uf_cache_open), and -ERANGE if it does not fit in len (buf then holds
 * as much as fits).
 */
int uf_policy_resolve(const char *spec, char *buf, size_t len);

/*
 * Close a cache WITHOUT writing back: dirty data is thrown away (scratch
 * runs of a benchmark, whose data nobody reads).  Writeback already under
 * way is waited for; otherwise as uf_cache_close().  Refused with -EINVAL
 * (the cache stays open) unless confirm is UF_DISCARD_DIRTY, so that it
 * cannot be called by accident.
 */
#define UF_DISCARD_DIRTY	"discard dirty data"
int uf_cache_close_discard(struct uf_cache *cache, const char *confirm);

/* The clocks of the stats snapshots: jiffies (HZ of the open caches, or
 * 1000) and CLOCK_MONOTONIC nanoseconds. */
unsigned long uf_jiffies(void);
uint64_t uf_now_ns(void);
/* ---- end: what a benchmark harness needs ---- */

/* ---- begin: per-device dirty limits (dirty throttle, issue 9) ---- */
/*
 * A device's tunables by their /sys/class/bdi/<dev>/ names:
 *   min_ratio     percent of the dirty threshold reserved for the device
 *                 (the devices' sum stays under 100), default 0
 *   max_ratio     percent it may use at most, default 100
 *   min_bytes,    the same as bytes (mainline, v6.4): converted to a ratio
 *   max_bytes     of the dirty threshold as it is when set; reading gives
 *                 the ratio in bytes of the threshold now
 *   strict_limit  1: throttle writers on the device's own dirty pages and
 *                 share (BDI_CAP_STRICTLIMIT, as FUSE), not only when the
 *                 cache is over its limit; honoured by bdp=mainline
 * -ENOENT unknown name; -EINVAL out of range (a ratio over 100, min over
 * max, the reserves reaching 100%, bytes over the dirtyable memory, a
 * zero dirty threshold, strict_limit not 0/1).
 */
int uf_dev_set_bdi_tunable(struct uf_dev *dev, const char *name,
			   uint64_t value);
int uf_dev_get_bdi_tunable(struct uf_dev *dev, const char *name,
			   uint64_t *value);
/* ---- end: per-device dirty limits ---- */

/* ---- begin: version (issue 18) ---- */
/*
 * The version of this header; uf_version() gives the library's, so an
 * embedder can check they agree.  Makefile and uflush.pc take theirs from
 * UFLUSH_VERSION_STRING.
 */
#define UFLUSH_VERSION_MAJOR	0
#define UFLUSH_VERSION_MINOR	1
#define UFLUSH_VERSION_PATCH	0
#define UFLUSH_VERSION_STRING	"0.1.0"
/* One number for comparisons: UFLUSH_VERSION >= UFLUSH_VERSION_NUM(0, 1, 0) */
#define UFLUSH_VERSION_NUM(major, minor, patch)				\
	(((major) << 16) | ((minor) << 8) | (patch))
#define UFLUSH_VERSION							\
	UFLUSH_VERSION_NUM(UFLUSH_VERSION_MAJOR, UFLUSH_VERSION_MINOR,	\
			   UFLUSH_VERSION_PATCH)

/*
 * The library's version: UFLUSH_VERSION_STRING as the library was built,
 * followed by " (git COMMIT)" when the build knew its git commit (with
 * "-dirty" if the tree had changes), e.g. "0.1.0 (git 2da84183a1c2)".
 * A static string; never NULL.
 */
const char *uf_version(void);
/* ---- end: version ---- */

/* ---- begin: simulated devices (issue 19) ---- */
/*
 * A modelled device in this process's memory: an SSD or a 7200 rpm disk
 * with a volatile write cache, for tests and A/B runs without real I/O,
 * and for power-cut crash tests.  io/sim.h documents the model.
 *
 * uf_sim_create(name, spec, &sim): spec is "hdd" or "ssd" followed by
 * ",key=value" items, e.g. "hdd,size=16g,keep_data=0,seed=7" (README,
 * "Simulated devices").  The name is what uf_dev_open() takes as its path
 * with cfg.engine = "sim" (no fallback to another engine, nor from one to
 * sim).  -EEXIST name in use; -EINVAL bad spec (logged); -ENOSPC 64
 * devices exist already; -ENOMEM.
 * uf_sim_destroy(): -EBUSY (nothing done) while the device is open.
 *
 * uf_sim_power_cut(sim, mode, seed): cut the power now.  Writes not made
 * durable by a completed flush, and writes in flight, are dropped, kept or
 * torn per 512 B / 4 KiB sector (seeded) by mode; requests in flight and
 * all later ones fail with -EIO until the device is next opened, which
 * sees the image the cut left.  uf_sim_cut_at(sim, nth, mode, seed): the
 * same, when the nth request (1 = the next) since power-on arrives; that
 * request fails.  On a device that is not open, or off after a cut, nth
 * counts from the next open (power-on).  nth 0 disarms.  -EINVAL unknown
 * mode.
 * uf_sim_cut_at_ns(sim, t_ns, mode, seed): the same cut at instant t_ns
 * of the running world's virtual clock (uf_now_ns() in the world, 0 at
 * its start), from a task of the world: an event on that clock, so the
 * cut happens at exactly t_ns whatever the tasks do (the clock stops
 * there when it jumps or a task's CPU charge crosses it).  What the
 * device finished by t_ns (a write into its cache, a flush) is done;
 * requests still in flight and every later one fail with -EIO.  Open or
 * closed, the device loses power at t_ns; it is disarmed by a cut, by
 * t_ns 0, by a new call, and by the end of its world.  -EBADF bad sim;
 * -EINVAL unknown mode or t_ns before now; -EPERM not a task of a running
 * world (uf_sim_active()); -ENOSPC 64 timed cuts pending.
 * uf_sim_read(): the device's current content (its cache included),
 * bypassing the model; 0 or -ERANGE.
 * uf_sim_image_hash(): a hash of the content (equal content, equal hash).
 */
struct uf_sim;

enum uf_sim_cut {
	UF_SIM_CUT_DROP,
	UF_SIM_CUT_KEEP,
	UF_SIM_CUT_TEAR512,
	UF_SIM_CUT_TEAR4K,
};

struct uf_sim_stats {
	uint64_t reads, writes, flushes;	/* completed without error */
	uint64_t read_bytes, write_bytes;
	uint64_t zero_read_bytes;	/* keep_data=0: bytes read as zeros */
	uint64_t merged;		/* requests back-merged in the model */
	uint64_t eio_injected;
	uint64_t failed_off;		/* requests failed: power was off */
	uint64_t power_cuts;
	uint64_t cut_lost_writes;	/* writes not durable at the cut */
	uint64_t cut_torn_sectors;	/* sectors rolled back by tear cuts */
	uint64_t last_cut_ns;		/* uf_now_ns() at the last cut */
	uint64_t hole_reads;		/* alloc=stream: reads of holes */
	uint64_t placed_windows;	/* alloc=stream: 8 MiB windows placed */
};

int uf_sim_create(const char *name, const char *spec, struct uf_sim **out);
int uf_sim_destroy(struct uf_sim *sim);
int uf_sim_power_cut(struct uf_sim *sim, enum uf_sim_cut mode, uint64_t seed);
int uf_sim_cut_at(struct uf_sim *sim, uint64_t nth, enum uf_sim_cut mode,
		  uint64_t seed);
int uf_sim_cut_at_ns(struct uf_sim *sim, uint64_t t_ns, enum uf_sim_cut mode,
		     uint64_t seed);
int uf_sim_read(struct uf_sim *sim, void *buf, size_t len, uint64_t off);
int uf_sim_image_hash(struct uf_sim *sim, uint64_t *hash);
int uf_sim_get_stats(struct uf_sim *sim, struct uf_sim_stats *st);
/* ---- end: simulated devices ---- */

/* ---- begin: simulation (issue 19) ---- */
/*
 * A deterministic world: the engine on a virtual clock, one task at a
 * time (DESIGN.md, "Deterministic simulation").
 *
 * uf_sim_run(o, main_fn, arg, res) runs main_fn(arg) as the first task of
 * a fresh world.  Every thread the engine starts inside it (flushers,
 * kswapd, the sim devices' completion threads) and every task started
 * with uf_sim_spawn() is a task of the world; exactly one runs at a time
 * and it hands over only when it blocks (a sleep in schedule(), a wait
 * of the engine, a join, uf_sim_sleep_ns()) or is preempted at a charge
 * point (below) once it has used up its tick.  The next task is picked
 * among the runnable ones by a PRNG seeded with o->seed; when none is
 * runnable the virtual clock jumps to the next event (a timer, a sim
 * device's completion, a sleep's end) and fires it.  Inside a world
 * uf_now_ns() and jiffies read the virtual clock, traces show virtual
 * time, CPU 0 and virtual pids (1 = main_fn, then in creation order).
 * Only sim devices (cfg.engine "sim") can be opened in a world: another
 * engine is -EOPNOTSUPP.  The caller of uf_sim_run() is not a task of
 * the world and waits (really) for its end.
 *
 * Returns 0 when main_fn has returned and no other task is left (main_fn
 * must close what it opened and join what it spawned), with res filled
 * (res may be NULL); res->main_ret is main_fn's value.  Errors: -EINVAL
 * (NULL o or main_fn, bad hz); -EBUSY a world exists or existed and
 * failed, or timers or sleepers of the real clock are pending, or the
 * caller is a task of a world; -ENOMEM / -EAGAIN no thread for main_fn;
 * -ETIMEDOUT the virtual clock reached o->max_ns; -EDEADLK every task is
 * blocked and no event is pending, or the world made no progress for 60 s
 * of real time (who waits on what is logged); -ECHILD main_fn
 * returned leaving tasks behind (logged).  After -ETIMEDOUT, -EDEADLK or
 * -ECHILD the world's tasks stay frozen for the life of the process and
 * later calls are -EBUSY: end the process.
 *
 * The CPU cost model: one virtual CPU.  Charge points in the engine's hot
 * paths advance the clock by the cost of the work done (ns, 0 in an
 * option = the default): per page copied in or out of the cache by
 * uf_pwrite/uf_pread (ns_per_page_copy, default 500), per page-cache
 * operation (ns_per_page_op, 100: a lookup, an insert, and three for a
 * page written back plus one at its completion), per request submitted
 * (ns_per_request, 10000), per inode visited by writeback (ns_per_inode,
 * 10000), per page reclaim scans off the inactive list (ns_per_page_scan,
 * 75: all of reclaim's work for a page it counts in pgscan); DESIGN.md
 * gives how they were measured.  So a task that loops without sleeping
 * burns virtual CPU: the clock moves, timers fire, and
 * res->cpu_ns shows it.  A task that has run a tick (1e9 / HZ ns) gives
 * way at the engine's next preemption point (cond_resched(), schedule()
 * while running, a lock break, uf_sim_charge_ns).
 *
 * uf_sim_spawn(name, fn, arg, &t): from a task of the world, a new task
 * (a writer) that runs fn(arg) when picked; -EPERM outside a world's
 * task; -EINVAL NULL fn or out; -ENOMEM / -EAGAIN.  uf_sim_join(t, &ret):
 * wait for it to end, get fn's value (ret may be NULL) and free t: once
 * per task (t is freed by it); -EPERM outside a world's task, -EINVAL NULL
 * t or one another task is joining, -EDEADLK t is the caller.
 * uf_sim_sleep_ns(ns): sleep ns of virtual time (0: yield); -EPERM
 * outside a world's task.  uf_sim_charge_ns(ns): charge ns of virtual CPU
 * to the caller (its own work); nothing outside a world's task.
 * uf_sim_active(): the caller is a task of a running world.
 */
struct uf_sim_opts {
	uint64_t seed;		/* order among runnable tasks; device PRNGs */
	int hz;			/* 0: the engine's HZ */
	uint64_t max_ns;	/* virtual-time limit of the run; 0: none */
	/* CPU cost model overrides, ns of virtual time; 0 = the defaults */
	uint64_t ns_per_page_copy, ns_per_page_op, ns_per_request,
		 ns_per_inode, ns_per_page_scan;
};

struct uf_sim_result {
	uint64_t virtual_ns;	/* virtual time at the end (from 0) */
	/* FNV-1a 64 over every scheduling decision ("vpid@ns" of the task
	 * picked) and every trace line written inside the world, in order:
	 * identical for the same seed and inputs */
	uint64_t trace_hash;
	uint64_t switches, events;	/* context switches; clock jumps */
	int main_ret;			/* main_fn's return value */
	uint64_t cpu_ns;		/* virtual CPU charged, all tasks */
	unsigned int nr_tasks;		/* tasks the world had, in all */
};

struct uf_sim_task;

int uf_sim_run(const struct uf_sim_opts *o, int (*main_fn)(void *), void *arg,
	       struct uf_sim_result *res);
int uf_sim_spawn(const char *name, int (*fn)(void *), void *arg,
		 struct uf_sim_task **out);
int uf_sim_join(struct uf_sim_task *t, int *ret);
int uf_sim_sleep_ns(uint64_t ns);
void uf_sim_charge_ns(uint64_t ns);
bool uf_sim_active(void);
/* ---- end: simulation ---- */

#ifdef __cplusplus
}
#endif

#endif /* UFLUSH_H */
