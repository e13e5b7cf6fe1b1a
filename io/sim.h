/* SPDX-License-Identifier: MIT */
/*
 * io/sim.h - modelled devices: the "sim" I/O engine (issue 19).
 *
 * A sim device lives in this process, named, made by uf_sim_create()
 * (include/uflush.h) from a spec string, and opened like any device with
 * the engine "sim" and its name as the path.  Its data is kept in memory
 * (keep_data=1) or thrown away (keep_data=0: reads give zeros and are
 * counted), and every request is timed by a model:
 *
 *   ssd  qd requests in service at once (default 32); each takes
 *        cmd_us + lat_us from its start, and its bytes go through one
 *        channel of bw bytes/s shared by all: done = max(start + cmd +
 *        lat, end of its turn on the channel).
 *   hdd  qd 1 by default.  A request that starts where the last one ended
 *        costs its transfer (len / bw, the media rate) only; any other
 *        pays a seek over the byte distance d, as a fraction x = d/size of
 *        a full stroke, and a rotational delay drawn uniformly from
 *        [0, 60/rpm) with the device's seeded PRNG:
 *            t_seek(x) = a + b*sqrt(x)           x <  0.5
 *                        c + e*x                 x >= 0.5   (continuous)
 *        the form of Ruemmler & Wilkes, "An introduction to disk drive
 *        modeling", IEEE Computer 27(3), March 1994.  a = seek_t2t, c and e
 *        put the line through t(1) = seek_full, and b is fitted so that
 *        the mean over all start/end pairs (distance density 2(1-x)) is
 *        seek_avg: the "weighted average of all possible seek
 *        combinations" datasheets quote.  Defaults, 7200 rpm desktop
 *        class: seek_t2t 1.0 ms, seek_avg 8.5 ms (Hitachi Deskstar
 *        7K1000.C specification, 4.5.2.1, read, 2-disk model), seek_full
 *        16 ms (IBM Deskstar/Ultrastar DDRS OEM spec 3.4.2.2: 15.0 ms
 *        typical, 16.0 max), rpm 7200 (mean rotational delay 4.17 ms),
 *        bw 180 MiB/s.
 *   both cmd_us per command; a request larger than max_kb is served as
 *        pieces of max_kb, each a command; a request that arrives while
 *        the one before it is still queued, of the same kind and
 *        contiguous, is merged into it (no command overhead) up to
 *        max_kb, as the elevator's back merge.  A flush takes flush_us.
 *        Requests are served and completed in arrival order (no NCQ or
 *        elevator reordering): the set of completed requests is always a
 *        prefix of the submitted ones (alloc=stream's hole reads aside).  Writes are charged their media
 *        time when served; the write cache below is about durability.
 *
 * Block placement (alloc=stream; alloc=none, the default: a byte lives
 * where its offset says).  A file of uflush is a range of the device, but
 * under ext4 the disk sees a file's blocks where the allocator put them,
 * and with delayed allocation it puts them when writeback maps them:
 * ext4_da_writepages() asks mballoc for each extent as it goes out.  A
 * request of a file over 16 blocks (s_mb_stream_request) takes the stream
 * goal, the block after the file system's last stream allocation
 * (s_mb_last_group/s_mb_last_start, ext4_mb_regular_allocator() and
 * ext4_mb_use_best_found() in 3.1/3.2), and ext4_mb_normalize_request()
 * widens a request of up to 8 MiB of such a file to its 8 MiB-aligned
 * logical window, kept as the inode's preallocation.  So files written
 * back in turn lie on the disk window after window, in the order the
 * flusher reached them.  alloc=stream models that placement, for the
 * timing only: the first write into a logical 8 MiB window of the device
 * gives the window the next free 8 MiB of the media (one goal per
 * device, from 0), its blocks in order, and every physically
 * discontiguous run of a request pays its own seek.  A read of blocks no
 * write ever reached is a hole, which ext4 answers without I/O: it
 * completes at once, ahead of the queue, with zeros
 * (uf_sim_stats.hole_reads).  The image stays logical; the placement
 * survives cuts and reopens.  Once the media is full, a new window lies
 * where its offset says.  Not modelled: block groups and their metadata,
 * small files' locality groups, XFS's allocation groups.
 *
 * Write cache (wcache_kb, hdd only; 0, the default: none).  A desktop SATA
 * disk acknowledges a write once it is in its buffer, and its write cache
 * is on by default (the Deskstar 7K1000.C's: 32 MB).  A write that fits
 * completes after cmd_us and its transfer over the link (iface_bw); one
 * that does not fit waits until destaging has made room; one larger than
 * the cache goes through to the media.  The arm destages on its own, a
 * max_kb piece at a time, always the piece with the shortest positioning
 * time from the head (SPTF: Jacobson & Wilkes, HPL-CSP-91-7, 1991;
 * Worthington, Ganger & Patt, SIGMETRICS 1994): the seek curve above plus
 * the platter's turn until the piece's first byte comes round, a byte's
 * angle being its place in the bytes the media rate passes in one
 * revolution (deterministic: without a cache the turn stays a seeded
 * draw).  A write that continues one in the cache merges into it.  A read
 * waits for the arm and is served from the media (no read hits); a flush
 * completes when the cache is empty.  The model is lazy: the destage
 * decisions up to an arrival are made when it is scheduled, on what was
 * in the cache by then, so it stays a function of the arrivals.  This is
 * the timing only: a write is durable when a flush covers it, as below.
 *
 * Volatile write cache.  A completed write is in the device's cache; a
 * flush makes durable the writes that had completed when the flush was
 * submitted (REQ_PREFLUSH's rule), once the flush completes.  A power cut
 * (uf_sim_power_cut, or armed with uf_sim_cut_at to happen when the Nth
 * request since power-on arrives) treats every write not made durable so,
 * and every write still in flight, by its mode:
 *   drop     all are lost: the image is the one after the last durable
 *            write;
 *   keep     all reach the media, in arrival order;
 *   tear512, each 512 B / 4 KiB sector of them independently, newest
 *   tear4k   write first, keeps its content with probability 1/2 or rolls
 *            back to that before the write (seeded): a sector ends at the
 *            durable version or at any later write to it.
 * Then every request in flight completes with -EIO and so does every
 * later one, until the device is opened again (a reboot): the image is
 * what the reboot sees.  Only a device that is not open can be destroyed.
 *
 * Faults: uf_sim_set_faults() takes a struct uf_io_shape's eio_* fields
 * (bandwidth and latency belong to the model: non-zero is -EINVAL) with
 * shape.c's meaning; an injected error completes in order, without
 * occupying the model.  uf_sim_stall() holds all completions for ms.
 *
 * Time.  The model is a pure function of its state and of each request's
 * arrival time (uf_sim_model_schedule): it decides at submission when a
 * request completes.  The engine runs it on uf_now_ns()'s clock and a
 * thread delivers completions when due: CLOCK_MONOTONIC, or inside a
 * deterministic world (uf_sim_run, kernel/sim.c) the virtual clock, where
 * the thread is a task and the head request's due time its wakeup event.  Same seed and same arrival times: same timings; same seed and
 * same request sequence: the same image after a cut.
 *
 * Spec string: "hdd" or "ssd", then ",key=value" items: size, lbs (512 or
 * 4096), qd, max_kb, bw (bytes/s), lat_us, cmd_us, flush_us, rpm,
 * seek_t2t_us, seek_avg_us, seek_full_us, keep_data (0/1), alloc
 * (none/stream), seed.  Sizes
 * and bw take k/m/g/t suffixes, powers of 1024.  Unknown key, bad value:
 * -EINVAL, logged.
 */
#ifndef UF_IO_SIM_H
#define UF_IO_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "io/io.h"

enum uf_sim_kind { UF_SIM_SSD, UF_SIM_HDD };

struct uf_sim_config {
	enum uf_sim_kind kind;
	uint64_t size;		/* bytes; default 1 GiB */
	unsigned int lbs;	/* logical block size: 512 or 4096 */
	unsigned int qd;	/* requests in service at once */
	unsigned int max_kb;	/* largest request served as one command */
	uint64_t bw;		/* bytes/s: ssd channel, hdd media rate */
	uint32_t lat_us;	/* ssd: per request, after the command */
	uint32_t cmd_us;	/* per command */
	uint32_t flush_us;
	uint32_t rpm;
	uint32_t seek_t2t_us, seek_avg_us, seek_full_us;
	bool keep_data;
	bool alloc_stream;	/* alloc=stream: ext4's block placement */
	uint32_t wcache_kb;	/* hdd: the drive's write cache; 0 = none */
	uint64_t iface_bw;	/* hdd with wcache: the link's bytes/s */
	uint64_t seed;
};

/* Defaults of a kind, then a spec string over them. */
void uf_sim_config_init(struct uf_sim_config *cfg, enum uf_sim_kind kind);
int uf_sim_config_parse(struct uf_sim_config *cfg, const char *spec);

/* The timing model alone, for tests and a future virtual clock. */
struct uf_sim_model {
	struct uf_sim_config cfg;
	double seek_a, seek_b, seek_c, seek_e;	/* ns, see above */
	uint64_t rng;
	uint64_t head;		/* byte after the last request served */
	uint64_t *slot_free;	/* cfg.qd entries: busy until (ns) */
	uint64_t chan_free;	/* ssd: the transfer channel busy until */
	uint64_t last_start, last_done;
	/* the last request, for back merges */
	enum uf_io_op last_op;
	uint64_t last_end, last_run;
	uint64_t nr_merged;
	/* alloc=stream: per 8 MiB logical window, its physical window + 1 */
	uint32_t *win;
	uint8_t **win_written;	/* a bit per 4 KiB block a write reached */
	uint64_t nr_win;
	uint64_t win_next;	/* the stream goal: the next free window */
	uint64_t nr_win_alloc, nr_hole_reads;
	/* wcache: writes in the drive's cache, destaged by SPTF */
	struct uf_sim_seg {
		uint64_t phys, len;
		uint64_t accept;	/* in the cache from (ns) */
	} *seg;
	unsigned int nr_seg, max_seg;
	uint64_t wc_bytes;	/* in the cache */
	uint64_t head_free;	/* the arm is busy until (ns) */
	uint64_t nr_destage, destage_pos_ns;	/* ops, their positioning */
};

int uf_sim_model_init(struct uf_sim_model *m, const struct uf_sim_config *c);
void uf_sim_model_exit(struct uf_sim_model *m);
/* Back to power-on: head at 0, idle; the PRNG goes on. */
void uf_sim_model_reset(struct uf_sim_model *m);
/* Seek time over a byte distance (0: none). */
uint64_t uf_sim_seek_ns(const struct uf_sim_model *m, uint64_t distance);
/* Mean seek over all start/end pairs, as fitted (ns). */
double uf_sim_seek_mean_ns(const struct uf_sim_model *m);
/*
 * alloc=stream: a read of blocks no write has reached (a hole: the file
 * system answers it without I/O); it leaves the model untouched.
 */
bool uf_sim_model_hole(const struct uf_sim_model *m, enum uf_io_op op,
		       uint64_t off, uint64_t len);
/* alloc=stream: where a byte lives on the media (allocated or not). */
uint64_t uf_sim_model_phys(const struct uf_sim_model *m, uint64_t off);
/* When a request arriving at @arrival completes (ns). */
uint64_t uf_sim_model_schedule(struct uf_sim_model *m, enum uf_io_op op,
			       uint64_t off, uint64_t len, uint64_t arrival);

/* The engine: opened by uf_bdev_open() for the engine name "sim". */
extern const struct uf_io_engine uf_sim_engine;

/*
 * For io/blkdev.c: claim the named device for one opener (-ENOENT none,
 * -EBUSY open already), powering it on; *id goes in the queue's fd.
 */
int uf_sim_claim(const char *name, int *id, uint64_t *size,
		 unsigned int *lbs, unsigned int *max_pages);
void uf_sim_unclaim(int id);
/* For io/blkdev.c: the claimed device keeps what is written (keep_data). */
bool uf_sim_keeps_data(int id);

struct uf_sim;
struct uf_io_shape;
int uf_sim_set_faults(struct uf_sim *sim, const struct uf_io_shape *shape);
int uf_sim_stall(struct uf_sim *sim, unsigned int ms);

#endif /* UF_IO_SIM_H */
