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
 *        prefix of the submitted ones.  Writes are charged their media
 *        time when served; the write cache below is about durability.
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
 * seek_t2t_us, seek_avg_us, seek_full_us, keep_data (0/1), seed.  Sizes
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
};

int uf_sim_model_init(struct uf_sim_model *m, const struct uf_sim_config *c);
void uf_sim_model_exit(struct uf_sim_model *m);
/* Back to power-on: head at 0, idle; the PRNG goes on. */
void uf_sim_model_reset(struct uf_sim_model *m);
/* Seek time over a byte distance (0: none). */
uint64_t uf_sim_seek_ns(const struct uf_sim_model *m, uint64_t distance);
/* Mean seek over all start/end pairs, as fitted (ns). */
double uf_sim_seek_mean_ns(const struct uf_sim_model *m);
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
