// SPDX-License-Identifier: MIT
/*
 * io/io_uring.c - the io_uring engine (the default).
 *
 * One ring per queue, sized to the queue depth (the kernel gives the CQ
 * ring twice that, so completions never overflow while at most depth
 * requests are in flight).  Submitters fill SQEs and call io_uring_submit()
 * once per batch under sq_lock: liburing's SQ side is single-producer.  One
 * reaper thread owns the CQ side: it sleeps in io_uring_wait_cqe(), takes a
 * batch with io_uring_peek_batch_cqe(), hands the CQEs back to the kernel
 * and only then calls q->complete(), so the ring never waits for end_io.
 *
 * Choices:
 *  - IORING_SETUP_SUBMIT_ALL (5.18+) makes the kernel consume every SQE of
 *    a batch and fail the bad ones through their CQE instead of stopping at
 *    the first; older kernels are handled by resubmitting the rest.
 *  - The device fd is registered as a fixed file when possible: that saves
 *    a file reference count round trip per request on a shared fd table.
 *  - FLUSH is the same fdatasync() the other engines do (on a block
 *    device it flushes the volatile cache, on a file datasync is what the
 *    data needs), called on the submitting thread when a batch is only
 *    flushes, which is how fsync sends them: io_uring runs IORING_OP_FSYNC
 *    in an io-wq worker anyway, and the last such worker stays and wakes
 *    every 5 s for good, the one wakeup left in an idle cache.  A batch
 *    that mixes flushes with reads or writes uses IORING_OP_FSYNC.
 *  - Teardown posts a NOP whose user_data is a sentinel; the reaper exits
 *    when it reaps it, so nobody ever polls.
 *  - UFLUSH_DISABLE_IO_URING=1 makes setup fail with -ENOSYS, so tests can
 *    exercise the fallback on machines where io_uring works.
 *  - The cache's frame pool is registered as fixed buffers (1 GiB each,
 *    the kernel's limit per buffer) where the kernel has the vectored fixed
 *    opcodes (6.15+): a request whose iovecs all lie in one of them goes
 *    as READV_FIXED/WRITEV_FIXED and the kernel pins nothing per request;
 *    pinning 4 KiB frames one by one was a fifth of a streaming write's
 *    CPU.  Without them, or when registration fails (RLIMIT_MEMLOCK for an
 *    unprivileged process), requests are plain readv/writev as before.
 *    UFLUSH_DISABLE_FIXED_BUFFERS=1 turns this off.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <liburing.h>

#include "io/io.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "lib/slab.h"

/* user_data values no request pointer can take (requests are aligned) */
#define URING_STOP	(~(uint64_t)0)
#define URING_IGNORE	(~(uint64_t)1)

#define URING_REAP_BATCH	64

/* The vectored fixed-buffer opcodes (Linux 6.15) by number: the liburing
 * headers this builds against may predate them. */
#define URING_OP_READV_FIXED	60
#define URING_OP_WRITEV_FIXED	61
#define URING_FIXED_SHIFT	30	/* one registered buffer per GiB */
/* A transiently failing submit (-EAGAIN...) is retried every 1 ms, ~5 s. */
#define URING_RETRY_NS		1000000L
#define URING_MAX_RETRIES	5000

struct uring_data {
	struct io_uring ring;
	struct uf_io_queue *q;
	pthread_mutex_t sq_lock;	/* SQ side: one producer at a time */
	pthread_t reaper;
	bool fixed_file;
	char *reg_base;			/* registered memory, or NULL */
	size_t reg_len;
	/*
	 * Bumped (release) before each batch goes to the kernel and read
	 * (acquire) by the reaper after each wait: the kernel orders the SQE
	 * before its CQE, but neither C11 nor the sanitizers know that, so
	 * this publishes the submitters' writes to the requests formally.
	 */
	atomic_uint submit_seq;
};

static void uring_backoff(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = URING_RETRY_NS };

	nanosleep(&ts, NULL);
}

static bool uring_transient(int err)
{
	return err == -EAGAIN || err == -EBUSY || err == -EINTR ||
	       err == -ENOMEM;
}

/*
 * Push everything in the SQ ring to the kernel.  Returns 0 once the ring is
 * empty, or the error that stopped it (SQEs may then be left in the ring).
 */
static int uring_flush_sq(struct uring_data *d)
{
	struct io_uring *ring = &d->ring;
	unsigned int tries = 0;
	int ret;

	atomic_fetch_add_explicit(&d->submit_seq, 1, memory_order_release);
	while (io_uring_sq_ready(ring)) {
		ret = io_uring_submit(ring);
		if (ret > 0) {
			tries = 0;
			continue;
		}
		if (ret == 0)
			ret = -EAGAIN;
		if (!uring_transient(ret) || ++tries > URING_MAX_RETRIES)
			return ret;
		uring_backoff();
	}
	return 0;
}

/* A free SQE, flushing the ring to make room if it is full. */
static struct io_uring_sqe *uring_get_sqe(struct uring_data *d, int *err)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);

	if (sqe)
		return sqe;
	*err = uring_flush_sq(d);
	if (*err)
		return NULL;
	sqe = io_uring_get_sqe(&d->ring);
	if (!sqe)
		*err = -EBUSY;
	return sqe;
}

/* The registered buffer that holds every iovec of @req, if there is one. */
static bool uring_fixed_index(const struct uring_data *d,
			      const struct uf_io_req *req, unsigned int *idx)
{
	unsigned int i;
	size_t off, end;

	if (!d->reg_base)
		return false;
	for (i = 0; i < req->nr_iov; i++) {
		off = (size_t)((char *)req->iov[i].iov_base - d->reg_base);
		end = off + req->iov[i].iov_len;
		if (off >= d->reg_len || end > d->reg_len || end <= off)
			return false;
		if (!i)
			*idx = (unsigned int)(off >> URING_FIXED_SHIFT);
		if ((off >> URING_FIXED_SHIFT) != *idx ||
		    ((end - 1) >> URING_FIXED_SHIFT) != *idx)
			return false;
	}
	return req->nr_iov > 0;
}

static void uring_prep_rw(struct uring_data *d, struct io_uring_sqe *sqe,
			  int fd, struct uf_io_req *req)
{
	bool rd = req->op == UF_IO_READ;
	unsigned int idx;

	if (uring_fixed_index(d, req, &idx)) {
		io_uring_prep_rw(rd ? URING_OP_READV_FIXED :
				 URING_OP_WRITEV_FIXED, sqe, fd, req->iov,
				 req->nr_iov, req->offset);
		sqe->buf_index = (__u16)idx;
		__atomic_add_fetch(&d->q->nr_fixed, 1, __ATOMIC_RELAXED);
	} else if (rd) {
		io_uring_prep_readv(sqe, fd, req->iov, req->nr_iov,
				    req->offset);
	} else {
		io_uring_prep_writev(sqe, fd, req->iov, req->nr_iov,
				     req->offset);
	}
}

static void uring_prep(struct uring_data *d, struct io_uring_sqe *sqe,
		       struct uf_io_req *req)
{
	int fd = d->fixed_file ? 0 : d->q->fd;

	switch (req->op) {
	case UF_IO_READ:
	case UF_IO_WRITE:
		uring_prep_rw(d, sqe, fd, req);
		break;
	case UF_IO_FLUSH:
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		break;
	}
	if (d->fixed_file)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)req);
}

/*
 * After a hard submission error, SQEs from position @from up to the tail
 * were published but not consumed.  They cannot be taken back, so turn
 * them into NOPs the reaper ignores; the next submit pushes them through.
 * Safe because the kernel reads an SQE only when it consumes it, which
 * happens in io_uring_enter() under sq_lock (no SQPOLL).
 */
static void uring_neutralise(struct io_uring *ring, unsigned int from)
{
	unsigned int tail = ring->sq.sqe_tail, pos, idx;
	struct io_uring_sqe *sqe;

	for (pos = from; pos != tail; pos++) {
		idx = ring->sq.array[pos & ring->sq.ring_mask];
		sqe = &ring->sq.sqes[idx];
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, URING_IGNORE);
	}
}

/*
 * Queue and push one batch under sq_lock.  Returns how many requests the
 * kernel took (the first ones of @reqs); *err says why the rest did not go.
 */
static unsigned int uring_submit_locked(struct uring_data *d,
					struct uf_io_req **reqs,
					unsigned int nr, int *err)
{
	struct io_uring *ring = &d->ring;
	unsigned int start = ring->sq.sqe_tail, filled, taken, head;
	struct io_uring_sqe *sqe;
	int ret = 0;

	for (filled = 0; filled < nr; filled++) {
		sqe = uring_get_sqe(d, &ret);
		if (!sqe)
			break;
		uring_prep(d, sqe, reqs[filled]);
	}
	if (!ret)
		ret = uring_flush_sq(d);
	if (!ret) {
		*err = 0;
		return nr;
	}
	/* Which of ours did the kernel consume before it stopped? */
	head = *ring->sq.khead;
	taken = (int)(head - start) > 0 ? head - start : 0;
	if (taken > filled)
		taken = filled;
	uring_neutralise(ring, start + taken);
	*err = ret;
	return taken;
}

/* A batch of flushes only: fdatasync() here, completed before we return. */
static bool uring_flush_inline(struct uf_io_queue *q, struct uf_io_req **reqs,
			       unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (reqs[i]->op != UF_IO_FLUSH)
			return false;
	for (i = 0; i < nr; i++)
		q->complete(q, reqs[i], uf_io_fdatasync(q->fd));
	return true;
}

static int uring_submit(struct uf_io_queue *q, struct uf_io_req **reqs,
			unsigned int nr)
{
	struct uring_data *d = q->engine_data;
	unsigned int i, taken;
	int err;

	if (!nr)
		return 0;
	if (!uf_io_batch_valid(reqs, nr))
		return -EINVAL;
	if (uring_flush_inline(q, reqs, nr))
		return 0;
	pthread_mutex_lock(&d->sq_lock);
	taken = uring_submit_locked(d, reqs, nr, &err);
	pthread_mutex_unlock(&d->sq_lock);
	if (!taken && err)
		return err;
	if (taken < nr)
		pr_warn("io_uring: submit failed after %u of %u requests: %s",
			taken, nr, strerror(-err));
	/* Part went in: the rest must still complete exactly once. */
	for (i = taken; i < nr; i++)
		q->complete(q, reqs[i], err);
	return 0;
}

/* Returns true when the stop sentinel was reaped. */
static bool uring_reap(struct uring_data *d)
{
	struct io_uring_cqe *cqes[URING_REAP_BATCH];
	uint64_t ud[URING_REAP_BATCH];
	int res[URING_REAP_BATCH];
	struct uf_io_queue *q = d->q;
	bool stop = false;
	unsigned int n, i;

	n = io_uring_peek_batch_cqe(&d->ring, cqes, URING_REAP_BATCH);
	for (i = 0; i < n; i++) {
		ud[i] = io_uring_cqe_get_data64(cqes[i]);
		res[i] = cqes[i]->res;
	}
	/* Give the CQ slots back before end_io runs, which may take long. */
	io_uring_cq_advance(&d->ring, n);
	(void)atomic_load_explicit(&d->submit_seq, memory_order_acquire);
	for (i = 0; i < n; i++) {
		if (ud[i] == URING_STOP)
			stop = true;
		else if (ud[i] != URING_IGNORE)
			q->complete(q, (struct uf_io_req *)(uintptr_t)ud[i],
				    res[i]);
	}
	return stop;
}

static void *uring_reaper(void *arg)
{
	struct uring_data *d = arg;
	struct io_uring_cqe *cqe;
	bool warned = false;
	int ret;

	for (;;) {
		ret = io_uring_wait_cqe(&d->ring, &cqe);
		if (ret == -EINTR || ret == -EAGAIN || ret == -ETIME)
			continue;
		if (ret < 0) {
			/* Should not happen; don't spin if it does. */
			if (!warned)
				pr_warn("io_uring: wait_cqe: %s",
					strerror(-ret));
			warned = true;
			uring_backoff();
			continue;
		}
		if (uring_reap(d))
			break;
	}
	return NULL;
}

/* Tell the reaper to exit: a NOP whose completion it recognises. */
static void uring_stop_reaper(struct uring_data *d)
{
	struct io_uring_sqe *sqe;
	unsigned int warned = 0;
	int err = 0;

	pthread_mutex_lock(&d->sq_lock);
	for (;;) {
		sqe = uring_get_sqe(d, &err);
		if (sqe) {
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, URING_STOP);
			err = uring_flush_sq(d);
			if (!err)
				break;
		}
		/* Nothing else can stop the reaper: keep trying. */
		if (!warned++)
			pr_warn("io_uring: cannot post the stop NOP (%s); retrying",
				strerror(-err));
		uring_backoff();
	}
	pthread_mutex_unlock(&d->sq_lock);
}

static int uring_start_reaper(struct uring_data *d)
{
	return -uf_thread_create(&d->reaper, uring_reaper, d, "uf-uring");
}

static int uring_ring_init(struct uring_data *d, unsigned int depth)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL;
	ret = io_uring_queue_init_params(depth, &d->ring, &p);
	if (ret == -EINVAL) {
		/* pre-5.18: no SUBMIT_ALL; uring_flush_sq() copes */
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CLAMP;
		ret = io_uring_queue_init_params(depth, &d->ring, &p);
	}
	return ret;
}

static bool uring_disabled_by_env(void)
{
	const char *s = getenv("UFLUSH_DISABLE_IO_URING");

	return s && *s && strcmp(s, "0") != 0;
}

static int uring_setup(struct uf_io_queue *q)
{
	struct uring_data *d;
	int ret;

	if (uring_disabled_by_env())
		return -ENOSYS;
	if (!q->depth)
		return -EINVAL;
	d = kzalloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->q = q;
	ret = uring_ring_init(d, q->depth);
	if (ret) {
		pr_info("io_uring: cannot set up a ring: %s", strerror(-ret));
		kfree(d);
		return ret;
	}
	d->fixed_file = io_uring_register_files(&d->ring, &q->fd, 1) == 0;
	pthread_mutex_init(&d->sq_lock, NULL);
	atomic_init(&d->submit_seq, 0);
	ret = uring_start_reaper(d);
	if (ret) {
		pthread_mutex_destroy(&d->sq_lock);
		io_uring_queue_exit(&d->ring);
		kfree(d);
		return ret;
	}
	q->engine_data = d;
	return 0;
}

static void uring_teardown(struct uf_io_queue *q)
{
	struct uring_data *d = q->engine_data;

	uring_stop_reaper(d);
	pthread_join(d->reaper, NULL);
	/*
	 * The ring's teardown is asynchronous in the kernel, and a registered
	 * file stays open (and its block device claimed) until it is done:
	 * unregister first, so the device can be reopened at once.
	 */
	if (d->fixed_file)
		io_uring_unregister_files(&d->ring);
	if (d->reg_base)	/* unpin the frames now, not when the ring goes */
		io_uring_unregister_buffers(&d->ring);
	io_uring_queue_exit(&d->ring);
	pthread_mutex_destroy(&d->sq_lock);
	kfree(d);
}

static bool uring_has_fixed_vectors(struct io_uring *ring)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);
	bool ok;

	if (!p)
		return false;
	ok = io_uring_opcode_supported(p, URING_OP_READV_FIXED) &&
	     io_uring_opcode_supported(p, URING_OP_WRITEV_FIXED);
	io_uring_free_probe(p);
	return ok;
}

static int uring_register_memory(struct uf_io_queue *q, void *base,
				 size_t len)
{
	struct uring_data *d = q->engine_data;
	size_t chunk = (size_t)1 << URING_FIXED_SHIFT, off;
	unsigned int n = 0, max = 1024;
	struct iovec *iov;
	int ret;

	if (getenv("UFLUSH_DISABLE_FIXED_BUFFERS") || d->reg_base)
		return -EOPNOTSUPP;
	if (!uring_has_fixed_vectors(&d->ring))
		return -EOPNOTSUPP;
	if (len > max * chunk)
		return -E2BIG;
	iov = kmalloc(max * sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (off = 0; off < len; off += chunk, n++) {
		iov[n].iov_base = (char *)base + off;
		iov[n].iov_len = len - off < chunk ? len - off : chunk;
	}
	ret = io_uring_register_buffers(&d->ring, iov, n);
	kfree(iov);
	if (ret) {
		pr_info("io_uring: frames not registered (%s): requests pin their pages",
			strerror(-ret));
		return ret;
	}
	pthread_mutex_lock(&d->sq_lock);
	d->reg_base = base;
	d->reg_len = len;
	pthread_mutex_unlock(&d->sq_lock);
	return 0;
}

const struct uf_io_engine uf_io_uring_engine = {
	.name = "io_uring",
	.setup = uring_setup,
	.teardown = uring_teardown,
	.submit = uring_submit,
	.register_memory = uring_register_memory,
};
