/* SPDX-License-Identifier: MIT */
/*
 * io/io.h - block devices and the I/O engines behind them.
 *
 * A struct uf_bdev is one opened device (a block device, or a regular file
 * standing in for one), opened with O_DIRECT, with one submission queue of a
 * fixed depth served by one engine: io_uring (default), libaio or psync.
 * An optional shaping wrapper sits between the queue and the engine.
 *
 * Requests are asynchronous: uf_bdev_submit() hands a batch to the engine and
 * returns; each request's ->end_io() runs once, later, on the engine's
 * completion thread.  Every function returns 0 (or a count) on success and a
 * negative errno on failure; nothing here aborts the process.
 *
 * Errors a caller can get from every call:
 *   -EBADF   handle not open (never opened, or closed)
 *   -EINVAL  bad argument: NULL, misaligned buffer/offset/length, empty iovec
 *   -ERANGE  the request reaches past the end of the device
 * and from uf_bdev_open():
 *   -ENOENT  no such path
 *   -EBUSY   block device mounted or held open exclusively elsewhere
 *            (pass UF_BDEV_FORCE to open it anyway)
 *   -EINVAL  the path cannot do O_DIRECT (e.g. on a filesystem without it)
 *   -ENODEV  not a block device nor a regular file
 *   -ENOSYS  no engine could be set up
 */
#ifndef UF_IO_H
#define UF_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/uio.h>

#include "uflush.h"

/* The largest request: results are ints, and the kernel caps one I/O at
 * about 2 GiB. */
#define UF_IO_MAX_BYTES	(1u << 30)

enum uf_io_op {
	UF_IO_READ,
	UF_IO_WRITE,
	UF_IO_FLUSH,		/* flush the device's volatile write cache */
};

struct uf_io_req;
typedef void (*uf_io_end_t)(struct uf_io_req *req, int res);

/*
 * One request: a contiguous device byte range [offset, offset+len) moved
 * to/from nr_iov buffers, which need not be contiguous in memory (a run of
 * page frames).  Filled by the caller; the fields under "owned by the I/O
 * layer" must not be touched while the request is in flight.
 *
 * ->end_io(req, res) is called exactly once: res is the byte count (always
 * the full length: a short transfer is reported as -EIO) or a negative errno.
 * It runs on the engine's completion thread, so it must not sleep and must
 * not submit to the same device (the queue may be full, and only this
 * thread can make room).  If the engine refuses a batch outright, end_io
 * runs with the error on the submitting thread before uf_bdev_submit()
 * returns: do not hold a lock in the submitter that end_io takes.
 * A request moves at most UF_IO_MAX_BYTES.
 */
struct uf_io_req {
	enum uf_io_op op;
	uint64_t offset;
	const struct iovec *iov;
	unsigned int nr_iov;
	uf_io_end_t end_io;
	void *private;

	/* owned by the I/O layer while in flight */
	size_t len;
	uint64_t submit_ns;
	struct uf_io_req *next;
};

/* ------------------------------------------------------------------ */
/* Engines                                                             */

struct uf_io_queue;

/*
 * An engine moves requests between a queue and the kernel.  ->setup() may
 * return -ENOSYS/-EPERM/... to let uf_bdev_open() fall back to the next
 * engine.  ->submit() gets a batch that always fits in the free slots of the
 * queue (the common layer waits for room before calling it) and must hand it
 * to the kernel in as few system calls as it can.  A completion is reported
 * with q->complete(q, req, res) from whatever thread reaps it.
 * ->teardown() is called with no request in flight.
 */
struct uf_io_engine {
	const char *name;
	int (*setup)(struct uf_io_queue *q);
	/* called only for a queue that was set up; clears engine_data after */
	void (*teardown)(struct uf_io_queue *q);
	int (*submit)(struct uf_io_queue *q, struct uf_io_req **reqs,
		      unsigned int nr);
	/*
	 * Optional: @base..@base+@len holds most buffers the queue will see
	 * (a cache's frame pool); the engine may pin it once so that requests
	 * inside it need no pinning of their own.  -EOPNOTSUPP or any error:
	 * requests are served as before.  Called before any request.
	 */
	int (*register_memory)(struct uf_io_queue *q, void *base, size_t len);
};

/* For ->submit(): every request of the batch is one an engine knows. */
static inline bool uf_io_batch_valid(struct uf_io_req **reqs, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (!reqs[i] || (reqs[i]->op != UF_IO_READ &&
				 reqs[i]->op != UF_IO_WRITE &&
				 reqs[i]->op != UF_IO_FLUSH))
			return false;
	return true;
}

/* A UF_IO_FLUSH done with fdatasync(2), restarted after EINTR: 0 or
 * -errno (the engines without a flush opcode). */
int uf_io_fdatasync(int fd);

/* An engine's definition: NAME_setup, NAME_teardown and NAME_submit. */
#define UF_IO_ENGINE(var, label, prefix)				\
	const struct uf_io_engine var = {				\
		.name = label,						\
		.setup = prefix##_setup,				\
		.teardown = prefix##_teardown,				\
		.submit = prefix##_submit,				\
	}

extern const struct uf_io_engine uf_io_uring_engine;
extern const struct uf_io_engine uf_libaio_engine;
extern const struct uf_io_engine uf_psync_engine;
extern const struct uf_io_engine uf_shape_engine;

/*
 * The queue an engine serves.  The common layer (io/blkdev.c) owns lock,
 * inflight and the room wait; the engine owns engine_data.  complete() is
 * where the engine delivers a result: uf_io_complete, unless a wrapping
 * engine (shape) pointed its inner queue's complete() at itself.  Such an
 * inner queue keeps no slot count: each of its requests holds a slot of the
 * outer queue, which has the same depth.
 */
struct uf_io_queue {
	const struct uf_io_engine *engine;
	int fd;
	unsigned int depth;
	void *engine_data;
	const struct uf_io_engine *inner; /* wrapping engines: what they wrap */
	void (*complete)(struct uf_io_queue *q, struct uf_io_req *req,
			 int res);

	pthread_mutex_t lock;
	pthread_cond_t room;	/* signalled when inflight drops */
	unsigned int inflight;
	unsigned int waiters;

	/* /proc/diskstats-like accounting (outer queues; under lock) */
	uint64_t busy_since_ns;	/* when inflight last left 0 */
	uint64_t io_ticks_ns;	/* time with requests in flight, before it */
	uint64_t nr_writes;	/* completed write requests (atomic) */
	uint64_t write_bytes;	/* and their bytes (atomic) */
	uint64_t nr_fixed;	/* engine: from registered memory (atomic) */
};

/* Deliver a result: normalises short transfers to -EIO, frees the slot,
 * then calls req->end_io.  Engines call q->complete(), which is this unless
 * the queue is wrapped. */
void uf_io_complete(struct uf_io_queue *q, struct uf_io_req *req, int res);

/* Queue helpers, also for wrapping engines (shape): set up / tear down a
 * queue of the given engine over fd; for a wrapping engine set q->inner
 * before init.  uf_io_queue_submit waits for room, then calls the engine. */
int uf_io_queue_init(struct uf_io_queue *q, const struct uf_io_engine *e,
		     int fd, unsigned int depth);
void uf_io_queue_exit(struct uf_io_queue *q);
int uf_io_queue_submit(struct uf_io_queue *q, struct uf_io_req **reqs,
		       unsigned int nr);
void uf_io_queue_drain(struct uf_io_queue *q);

/* Look an engine up by name ("io_uring", "libaio", "psync"). */
const struct uf_io_engine *uf_io_engine_find(const char *name);

/* ------------------------------------------------------------------ */
/* Shaping (io/shape.c)                                                */

/* struct uf_io_shape is public: include/uflush.h. */

/*
 * What a shaping wrapper has seen since the device was opened, for tests
 * that check how many flushes reached a device and in what order.  One
 * sequence counter stamps two kinds of event: a write's completion handed
 * to the caller, and a flush handed to the wrapper.  A flush issued after
 * the writes it must make durable completed has a larger stamp than all
 * of them.  Failed requests (injected or not) count too.
 */
struct uf_shape_counters {
	uint64_t seq;			/* events stamped so far */
	uint64_t writes_done;		/* write completions delivered */
	uint64_t flushes;		/* flushes submitted */
	uint64_t flushes_done;		/* flush completions delivered */
	uint64_t flushes_failed;	/* of those, with an error */
	uint64_t last_write_done_seq;	/* stamp of the latest write done */
	uint64_t first_flush_seq;	/* stamp of the first flush submitted */
	uint64_t last_flush_seq;	/* stamp of the latest flush submitted */
};

/* ------------------------------------------------------------------ */
/* Devices (io/blkdev.c)                                               */

struct uf_bdev;

#define UF_BDEV_FORCE		(1u << 0) /* open even if mounted/busy */
#define UF_BDEV_NO_FALLBACK	(1u << 1) /* fail instead of another engine */
#define UF_BDEV_SHAPED		(1u << 2) /* put the shaping wrapper in */

struct uf_bdev_config {
	const char *engine;		/* NULL = "io_uring" */
	unsigned int queue_depth;	/* 0 = the device queue's nr_requests
					 * (64 for a file) */
	unsigned int flags;		/* UF_BDEV_* */
	const struct uf_io_shape *shape; /* initial shape (implies SHAPED) */
};

void uf_bdev_config_init(struct uf_bdev_config *cfg);
int uf_bdev_open(const char *path, const struct uf_bdev_config *cfg,
		 struct uf_bdev **out);
/* Waits for requests in flight.  The caller must not submit to the device
 * from another thread while closing it. */
int uf_bdev_close(struct uf_bdev *bdev);

/* Properties.  Size in bytes; logical block size in bytes (BLKSSZGET for a
 * block device, the direct-I/O alignment for a file). */
int uf_bdev_size(struct uf_bdev *bdev, uint64_t *size);
int uf_bdev_block_size(struct uf_bdev *bdev, unsigned int *lbs);
/* Pages one request can carry unsplit (the device queue's limits); 0 if
 * none is known (a regular file). */
int uf_bdev_max_pages(struct uf_bdev *bdev, unsigned int *pages);
/* Whether what is written can be read back: false only for a sim device
 * with keep_data=0 (io/sim.h). */
bool uf_bdev_keeps_data(struct uf_bdev *bdev);
/*
 * The device queue's limits (/sys/block/X/queue), all 0 for a file: what
 * the block layer splits a request by and how many it takes at once.  A
 * run of frames contiguous in physical memory is one segment, as
 * bio_add_page() merges them.
 */
struct uf_bdev_limits {
	unsigned int max_pages;		/* max_sectors_kb, in 4 KiB pages */
	unsigned int max_segments;
	unsigned int max_segment_size;	/* bytes */
	unsigned int nr_requests;
};
int uf_bdev_limits(struct uf_bdev *bdev, struct uf_bdev_limits *lim);
/* Requests in flight at most (the queue depth the device was opened with). */
int uf_bdev_queue_depth(struct uf_bdev *bdev, unsigned int *depth);
const char *uf_bdev_engine_name(struct uf_bdev *bdev);
const char *uf_bdev_path(struct uf_bdev *bdev);
bool uf_bdev_is_blockdev(struct uf_bdev *bdev);

/*
 * Submit a batch.  Each request is checked first (alignment, range); if any
 * is bad, none is submitted and the error is returned.  Blocks (sleeping,
 * not spinning) while the queue is full.  Returns 0 once all are queued.
 */
int uf_bdev_submit(struct uf_bdev *bdev, struct uf_io_req **reqs,
		   unsigned int nr);

/* Synchronous helpers built on submit: return bytes or -errno. */
ssize_t uf_bdev_rw(struct uf_bdev *bdev, enum uf_io_op op, uint64_t offset,
		   const struct iovec *iov, unsigned int nr_iov);
ssize_t uf_bdev_pread(struct uf_bdev *bdev, void *buf, size_t len,
		      uint64_t offset);
ssize_t uf_bdev_pwrite(struct uf_bdev *bdev, const void *buf, size_t len,
		       uint64_t offset);
int uf_bdev_flush(struct uf_bdev *bdev);
/* Wait until no request of this device is in flight. */
int uf_bdev_drain(struct uf_bdev *bdev);

/* Shaping: only on devices opened with UF_BDEV_SHAPED (else -EINVAL). */
int uf_bdev_set_shape(struct uf_bdev *bdev, const struct uf_io_shape *shape);
/* Hold every completion of this device for ms milliseconds from now. */
int uf_bdev_stall(struct uf_bdev *bdev, unsigned int ms);
/* Counts of what reached the device (struct uf_shape_counters).
 * A failing flush: 1 << UF_IO_FLUSH in the shape's eio_ops, any eio_len. */
int uf_bdev_shape_counters(struct uf_bdev *bdev,
			   struct uf_shape_counters *out);

/* What the device completed, as /proc/diskstats counts it: busy time
 * (io_ticks: time with at least one request in flight) and the write
 * requests that succeeded, with their bytes. */
struct uf_bdev_io_stats {
	uint64_t io_ticks_ns;
	uint64_t nr_writes;
	uint64_t write_bytes;
	uint64_t nr_fixed;	/* requests served from registered memory */
};

/* uf_io_engine.register_memory for the device's queue (unshaped only). */
int uf_bdev_register_memory(struct uf_bdev *bdev, void *base, size_t len);

int uf_bdev_io_stats(struct uf_bdev *bdev, struct uf_bdev_io_stats *out);

/* Shape engine hooks used by blkdev.c (io/shape.c). */
int uf_shape_set(struct uf_io_queue *q, const struct uf_io_shape *shape);
int uf_shape_stall(struct uf_io_queue *q, unsigned int ms);
int uf_shape_counters(struct uf_io_queue *q, struct uf_shape_counters *out);

/* Monotonic nanoseconds (CLOCK_MONOTONIC). */
uint64_t uf_now_ns(void);

#endif /* UF_IO_H */
