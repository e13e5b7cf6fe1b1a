// SPDX-License-Identifier: MIT
/*
 * io/libaio.c - the Linux native AIO engine, the first fallback when
 * io_uring is unavailable.
 *
 * One aio context per queue and a pool of `depth` iocbs: the common layer
 * keeps at most depth requests in flight, so the pool never runs dry and
 * nothing is allocated per request.  A request holds its iocb until it is
 * completed, whichever way it completes.  Submitters fill iocbs and call
 * io_submit() once per batch under sq_lock, retrying the tail of a batch
 * the kernel took only in part.
 *
 * Every iocb signals an eventfd when it completes.  The reaper thread
 * sleeps in poll() on that eventfd and on a stop eventfd, then drains the
 * completion ring with non-blocking io_getevents(): it never spins, and
 * teardown wakes it with one write.  iocbs go back to the pool before
 * q->complete() runs, so the slot end_io frees always has an iocb behind it.
 *
 * Some requests are completed by the reaper without the kernel's aio:
 * flushes once the kernel has rejected IOCB_CMD_FDSYNC with -EINVAL
 * (before 4.18), which the reaper turns into fdatasync(), and the tail of a
 * batch whose submission failed half way.  They wait on a deferred list and
 * the reaper is woken through the same eventfd.  end_io thus always runs on
 * the completion thread, never inside the submitter's call, which may hold
 * locks end_io takes.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <libaio.h>

#include "io/io.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "lib/slab.h"

/* io_submit() -EAGAIN is retried every 1 ms for ~5 s, then fails. */
#define AIO_RETRY_NS		1000000L
#define AIO_MAX_RETRIES		5000
#define AIO_RES_SYNC		1	/* deferred: run fdatasync() */

struct aio_slot {
	struct iocb iocb;	/* iocb.data is the request */
	int res;		/* result of a deferred completion */
};

struct aio_data {
	struct uf_io_queue *q;
	io_context_t ctx;
	int ev_fd;			/* signalled by each completion */
	int stop_fd;			/* signalled by teardown */
	unsigned int depth;

	pthread_mutex_t sq_lock;	/* submitters; guards batch */
	struct iocb **batch;

	pthread_mutex_t pool_lock;	/* shared with the reaper: */
	struct aio_slot **free_slots;	/*   stack of free slots */
	unsigned int nr_free;
	struct aio_slot **deferred;	/*   completions for the reaper */
	unsigned int nr_deferred;

	struct aio_slot *slots;		/* the pool itself */
	struct io_event *events;	/* reaper only */
	struct aio_slot **work;		/* reaper only */
	pthread_t reaper;
	atomic_bool fdsync_broken;
	/*
	 * Bumped (release) before each io_submit() and read (acquire) by the
	 * reaper: the kernel orders submission before completion, but C11 and
	 * the sanitizers cannot see that, so this makes it formal.
	 */
	atomic_uint submit_seq;
};

static struct aio_slot *iocb_slot(struct iocb *iocb)
{
	return (struct aio_slot *)((char *)iocb -
				   offsetof(struct aio_slot, iocb));
}

static void aio_backoff(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = AIO_RETRY_NS };

	nanosleep(&ts, NULL);
}

static void aio_kick(int fd)
{
	uint64_t one = 1;

	/* Only fails if the counter would overflow: already signalled. */
	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_warn("libaio: eventfd write: %s", strerror(errno));
}

/* ------------------------------------------------------------------ */
/* Submission                                                          */

static void aio_prep(struct aio_data *d, struct iocb *iocb,
		     struct uf_io_req *req)
{
	int fd = d->q->fd;

	switch (req->op) {
	case UF_IO_READ:
		io_prep_preadv(iocb, fd, req->iov, (int)req->nr_iov,
			       (long long)req->offset);
		break;
	case UF_IO_WRITE:
		io_prep_pwritev(iocb, fd, req->iov, (int)req->nr_iov,
				(long long)req->offset);
		break;
	case UF_IO_FLUSH:
		io_prep_fdsync(iocb, fd);
		break;
	}
	io_set_eventfd(iocb, d->ev_fd);
	iocb->data = req;
}

/* Caller holds pool_lock.  Capacity: each deferred slot is a pool slot. */
static void aio_defer_locked(struct aio_data *d, struct aio_slot *s, int res)
{
	s->res = res;
	d->deferred[d->nr_deferred++] = s;
}

/*
 * Take a slot per request and fill d->batch with the iocbs to submit;
 * flushes go straight to the deferred list once the kernel has shown it
 * has no FDSYNC.  Returns the number of iocbs in the batch (*nr_deferred:
 * how many were deferred), or -EBUSY if the pool cannot cover the batch,
 * which only happens if more than depth requests are in flight.
 */
static int aio_fill_batch(struct aio_data *d, struct uf_io_req **reqs,
			  unsigned int nr, unsigned int *nr_deferred)
{
	bool no_fdsync = atomic_load(&d->fdsync_broken);
	unsigned int i, n = 0;
	struct aio_slot *s;

	*nr_deferred = 0;
	pthread_mutex_lock(&d->pool_lock);
	if (d->nr_free < nr) {
		pthread_mutex_unlock(&d->pool_lock);
		return -EBUSY;
	}
	for (i = 0; i < nr; i++) {
		s = d->free_slots[--d->nr_free];
		aio_prep(d, &s->iocb, reqs[i]);
		if (reqs[i]->op == UF_IO_FLUSH && no_fdsync) {
			aio_defer_locked(d, s, AIO_RES_SYNC);
			(*nr_deferred)++;
			continue;
		}
		d->batch[n++] = &s->iocb;
	}
	pthread_mutex_unlock(&d->pool_lock);
	return (int)n;
}

/* The kernel refused IOCB_CMD_FDSYNC: this flush goes to fdatasync(). */
static void aio_fdsync_fallback(struct aio_data *d, struct iocb *iocb)
{
	if (!atomic_exchange(&d->fdsync_broken, true))
		pr_info("libaio: kernel has no IOCB_CMD_FDSYNC; flushing with fdatasync()");
	pthread_mutex_lock(&d->pool_lock);
	aio_defer_locked(d, iocb_slot(iocb), AIO_RES_SYNC);
	pthread_mutex_unlock(&d->pool_lock);
}

/*
 * io_submit() d->batch[0..n) until all of it is in.  Returns how many
 * iocbs were consumed, in order (taken by the kernel, or flushes diverted
 * to fdatasync: *nr_deferred counts those); *err says why the rest did not.
 */
static unsigned int aio_push(struct aio_data *d, unsigned int n,
			     unsigned int *nr_deferred, int *err)
{
	unsigned int done = 0, tries = 0;
	int ret;

	*err = 0;
	atomic_fetch_add_explicit(&d->submit_seq, 1, memory_order_release);
	while (done < n) {
		ret = io_submit(d->ctx, (long)(n - done), d->batch + done);
		if (ret > 0) {
			done += (unsigned int)ret;
			tries = 0;
			continue;
		}
		if (ret == -EINVAL &&
		    d->batch[done]->aio_lio_opcode == IO_CMD_FDSYNC) {
			aio_fdsync_fallback(d, d->batch[done++]);
			(*nr_deferred)++;
			continue;
		}
		if (ret == 0)
			ret = -EAGAIN;
		/* -EAGAIN: kernel resources short for now; they come back */
		if ((ret != -EAGAIN && ret != -EINTR) ||
		    ++tries > AIO_MAX_RETRIES) {
			*err = ret;
			break;
		}
		aio_backoff();
	}
	return done;
}

/* d->batch[from..n) did not go: give the slots back, or defer with err. */
static void aio_unwind(struct aio_data *d, unsigned int from,
		       unsigned int n, bool defer, int err)
{
	unsigned int i;

	pthread_mutex_lock(&d->pool_lock);
	for (i = from; i < n; i++) {
		if (defer)
			aio_defer_locked(d, iocb_slot(d->batch[i]), err);
		else
			d->free_slots[d->nr_free++] = iocb_slot(d->batch[i]);
	}
	pthread_mutex_unlock(&d->pool_lock);
}

static int aio_submit(struct uf_io_queue *q, struct uf_io_req **reqs,
		      unsigned int nr)
{
	struct aio_data *d = q->engine_data;
	unsigned int n, nr_deferred, done;
	int ret, err;

	if (!uf_io_batch_valid(reqs, nr))
		return -EINVAL;
	pthread_mutex_lock(&d->sq_lock);
	ret = aio_fill_batch(d, reqs, nr, &nr_deferred);
	if (ret < 0) {
		pthread_mutex_unlock(&d->sq_lock);
		return ret;
	}
	n = (unsigned int)ret;
	done = aio_push(d, n, &nr_deferred, &err);
	if (done < n) {
		/* Nothing went: the caller completes them all. */
		if (!done && !nr_deferred) {
			aio_unwind(d, 0, n, false, 0);
			pthread_mutex_unlock(&d->sq_lock);
			return err;
		}
		/* Part went: the rest complete with err, exactly once. */
		pr_warn("libaio: io_submit failed after %u of %u requests: %s",
			nr - (n - done), nr, strerror(-err));
		aio_unwind(d, done, n, true, err);
		nr_deferred += n - done;
	}
	pthread_mutex_unlock(&d->sq_lock);
	if (nr_deferred)
		aio_kick(d->ev_fd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Completion                                                          */

static void aio_put_slot(struct aio_data *d, struct aio_slot *s)
{
	pthread_mutex_lock(&d->pool_lock);
	d->free_slots[d->nr_free++] = s;
	pthread_mutex_unlock(&d->pool_lock);
}

/* Drain the completion ring without blocking. */
static void aio_reap_events(struct aio_data *d)
{
	struct timespec zero = { 0, 0 };
	struct io_event *ev = d->events;
	int n, i;

	do {
		n = io_getevents(d->ctx, 0, (long)d->depth, ev, &zero);
		if (n == -EINTR)
			continue;
		if (n < 0)
			pr_warn("libaio: io_getevents: %s", strerror(-n));
		if (n <= 0)
			return;
		(void)atomic_load_explicit(&d->submit_seq,
					   memory_order_acquire);
		pthread_mutex_lock(&d->pool_lock);
		for (i = 0; i < n; i++)
			d->free_slots[d->nr_free++] = iocb_slot(ev[i].obj);
		pthread_mutex_unlock(&d->pool_lock);
		/* ev[] holds copies of data and res: the slots may go now */
		for (i = 0; i < n; i++)
			d->q->complete(d->q, ev[i].data, (int)(long)ev[i].res);
	} while ((unsigned int)n == d->depth || n == -EINTR);
}

/* Complete what submitters left on the deferred list, in order. */
static void aio_run_deferred(struct aio_data *d)
{
	struct uf_io_req *req;
	unsigned int n, i;
	int res;

	pthread_mutex_lock(&d->pool_lock);
	n = d->nr_deferred;
	memcpy(d->work, d->deferred, n * sizeof(*d->work));
	d->nr_deferred = 0;
	pthread_mutex_unlock(&d->pool_lock);
	for (i = 0; i < n; i++) {
		req = d->work[i]->iocb.data;
		res = d->work[i]->res;
		if (res == AIO_RES_SYNC)
			res = uf_io_fdatasync(d->q->fd);
		aio_put_slot(d, d->work[i]);
		d->q->complete(d->q, req, res);
	}
}

static void aio_drain_eventfd(int fd)
{
	uint64_t v;

	/* Non-blocking: a spurious wakeup just finds it empty. */
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		pr_warn("libaio: eventfd read: %s", strerror(errno));
}

static void *aio_reaper(void *arg)
{
	struct aio_data *d = arg;
	struct pollfd pfd[2] = {
		{ .fd = d->ev_fd, .events = POLLIN },
		{ .fd = d->stop_fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno != EINTR) {
				pr_warn("libaio: poll: %s", strerror(errno));
				aio_backoff();
			}
			continue;
		}
		/* Reset the counter first: later completions re-signal it. */
		if (pfd[0].revents)
			aio_drain_eventfd(d->ev_fd);
		aio_reap_events(d);
		aio_run_deferred(d);
		if (pfd[1].revents)
			break;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Setup and teardown                                                  */

static int aio_alloc(struct aio_data *d)
{
	unsigned int i, n = d->depth;

	d->slots = kzalloc(n * sizeof(*d->slots));
	d->free_slots = kzalloc(n * sizeof(*d->free_slots));
	d->deferred = kzalloc(n * sizeof(*d->deferred));
	d->work = kzalloc(n * sizeof(*d->work));
	d->batch = kzalloc(n * sizeof(*d->batch));
	d->events = kzalloc(n * sizeof(*d->events));
	if (!d->slots || !d->free_slots || !d->deferred || !d->work ||
	    !d->batch || !d->events)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		d->free_slots[i] = &d->slots[i];
	d->nr_free = n;
	return 0;
}

static void aio_free(struct aio_data *d)
{
	if (d->ev_fd >= 0)
		close(d->ev_fd);
	if (d->stop_fd >= 0)
		close(d->stop_fd);
	if (d->ctx)
		io_destroy(d->ctx);
	pthread_mutex_destroy(&d->pool_lock);
	pthread_mutex_destroy(&d->sq_lock);
	kfree(d->events);
	kfree(d->batch);
	kfree(d->work);
	kfree(d->deferred);
	kfree(d->free_slots);
	kfree(d->slots);
	kfree(d);
}

static int aio_start_reaper(struct aio_data *d)
{
	return -uf_thread_create(&d->reaper, aio_reaper, d, "uf-aio");
}

static int aio_init_kernel(struct aio_data *d)
{
	int ret;

	ret = io_setup((int)d->depth, &d->ctx);
	if (ret < 0) {
		d->ctx = 0;
		pr_info("libaio: io_setup(%u): %s", d->depth, strerror(-ret));
		return ret;
	}
	d->ev_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->ev_fd < 0)
		return -errno;
	d->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->stop_fd < 0)
		return -errno;
	return 0;
}

static int aio_setup(struct uf_io_queue *q)
{
	struct aio_data *d;
	int ret;

	if (!q->depth || q->depth > INT32_MAX)
		return -EINVAL;
	d = kzalloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->q = q;
	d->depth = q->depth;
	d->ev_fd = d->stop_fd = -1;
	pthread_mutex_init(&d->sq_lock, NULL);
	pthread_mutex_init(&d->pool_lock, NULL);
	atomic_init(&d->fdsync_broken, false);
	atomic_init(&d->submit_seq, 0);
	ret = aio_alloc(d);
	if (!ret)
		ret = aio_init_kernel(d);
	if (!ret)
		ret = aio_start_reaper(d);
	if (!ret)
		q->engine_data = d;
	else
		aio_free(d);
	return ret;
}

static void aio_teardown(struct uf_io_queue *q)
{
	struct aio_data *d = q->engine_data;

	aio_kick(d->stop_fd);
	pthread_join(d->reaper, NULL);
	aio_free(d);
}

UF_IO_ENGINE(uf_libaio_engine, "libaio", aio);
