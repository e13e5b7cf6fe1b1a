// SPDX-License-Identifier: MIT
/*
 * io/psync.c - the synchronous engine: preadv/pwritev from worker threads,
 * the last fallback, which works wherever the fd does.
 *
 * A pool of min(depth, 32) workers takes requests from one FIFO (a ring of
 * depth entries under a mutex, with a condvar the idle workers sleep on).
 * Each worker moves a request's whole range, looping over short transfers
 * and EINTR, then calls q->complete() itself: the workers are this engine's
 * completion threads, and there is nothing to gain from handing results
 * to yet another thread.  One worker per request the queue can hold, up
 * to 32: past that, threads cost more than the parallelism they buy.
 *
 * The FIFO is a fixed ring rather than a list through req->next so the
 * engine owns all of its state: the common layer keeps at most depth
 * requests in flight, so the ring cannot overflow (a batch that would
 * overflow it is refused whole with -EBUSY instead of corrupting memory).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "lib/slab.h"

#define PSYNC_MAX_WORKERS	32

struct psync_data {
	struct uf_io_queue *q;
	pthread_mutex_t lock;
	pthread_cond_t work;		/* idle workers wait here */
	struct uf_io_req **fifo;	/* ring of size entries */
	unsigned int size, head, count;
	bool stop;
	unsigned int nr_workers;
	pthread_t *workers;
};

/* ------------------------------------------------------------------ */
/* Doing one request                                                   */

static ssize_t psync_vec(int fd, enum uf_io_op op, const struct iovec *iov,
			 unsigned int nr, uint64_t off)
{
	ssize_t ret;

	do {
		if (op == UF_IO_READ)
			ret = preadv(fd, iov, (int)nr, (off_t)off);
		else
			ret = pwritev(fd, iov, (int)nr, (off_t)off);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

/*
 * The rest of @iov after @skip bytes, as a new array (*out, *nr_out) the
 * caller frees.  Only for short transfers, which are rare.
 */
static int psync_iov_advance(const struct iovec *iov, unsigned int nr,
			     size_t skip, struct iovec **out,
			     unsigned int *nr_out)
{
	unsigned int i = 0;
	struct iovec *v;

	while (i < nr && skip >= iov[i].iov_len)
		skip -= iov[i++].iov_len;
	if (i == nr)
		return -EINVAL;
	v = kmalloc((nr - i) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, iov + i, (nr - i) * sizeof(*v));
	v[0].iov_base = (char *)v[0].iov_base + skip;
	v[0].iov_len -= skip;
	*out = v;
	*nr_out = nr - i;
	return 0;
}

/* Move req->len bytes; returns bytes moved (short at EOF) or -errno. */
static ssize_t psync_rw(int fd, struct uf_io_req *req)
{
	const struct iovec *iov = req->iov;
	unsigned int nr = req->nr_iov;
	struct iovec *rest = NULL;
	size_t done = 0;
	ssize_t ret;

	for (;;) {
		ret = psync_vec(fd, req->op, iov, nr, req->offset + done);
		if (ret <= 0)
			break;
		done += (size_t)ret;
		if (done >= req->len)
			break;
		kfree(rest);
		rest = NULL;
		ret = psync_iov_advance(req->iov, req->nr_iov, done, &rest,
					&nr);
		if (ret < 0)
			break;
		iov = rest;
	}
	kfree(rest);
	/* An error after some progress still fails the request. */
	return ret < 0 ? ret : (ssize_t)done;
}

static int psync_do(int fd, struct uf_io_req *req)
{
	ssize_t ret;

	if (req->op == UF_IO_FLUSH)
		return uf_io_fdatasync(fd);
	ret = psync_rw(fd, req);
	/* res is an int, like the kernel's: a wider count cannot be whole */
	if (ret > INT_MAX)
		return -EIO;
	return (int)ret;
}

/* ------------------------------------------------------------------ */
/* Queue and workers                                                   */

static struct uf_io_req *psync_pop_locked(struct psync_data *d)
{
	struct uf_io_req *req = d->fifo[d->head];

	d->head = (d->head + 1) % d->size;
	d->count--;
	return req;
}

static void *psync_worker(void *arg)
{
	struct psync_data *d = arg;
	struct uf_io_queue *q = d->q;
	struct uf_io_req *req;

	for (;;) {
		pthread_mutex_lock(&d->lock);
		while (!d->count && !d->stop)
			pthread_cond_wait(&d->work, &d->lock);
		if (!d->count) {
			pthread_mutex_unlock(&d->lock);
			break;
		}
		req = psync_pop_locked(d);
		pthread_mutex_unlock(&d->lock);
		q->complete(q, req, psync_do(q->fd, req));
	}
	return NULL;
}

static int psync_submit(struct uf_io_queue *q, struct uf_io_req **reqs,
			unsigned int nr)
{
	struct psync_data *d = q->engine_data;
	unsigned int i, wake;

	if (!uf_io_batch_valid(reqs, nr))
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (nr > d->size - d->count) {
		pthread_mutex_unlock(&d->lock);
		return -EBUSY;
	}
	for (i = 0; i < nr; i++)
		d->fifo[(d->head + d->count + i) % d->size] = reqs[i];
	d->count += nr;
	wake = nr < d->nr_workers ? nr : d->nr_workers;
	/* One worker per request, not a thundering herd for one. */
	for (i = 0; i < wake; i++)
		pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Setup and teardown                                                  */

static void psync_stop_workers(struct psync_data *d)
{
	unsigned int i;

	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->lock);
	for (i = 0; i < d->nr_workers; i++)
		pthread_join(d->workers[i], NULL);
	d->nr_workers = 0;
}

static void psync_free(struct psync_data *d)
{
	pthread_cond_destroy(&d->work);
	pthread_mutex_destroy(&d->lock);
	kfree(d->workers);
	kfree(d->fifo);
	kfree(d);
}

/* Start up to @want workers; fewer is fine as long as there is one. */
static int psync_start_workers(struct psync_data *d, unsigned int want)
{
	char name[16];
	int ret = 0;

	while (d->nr_workers < want) {
		snprintf(name, sizeof(name), "uf-psync/%u", d->nr_workers);
		ret = -uf_thread_create(&d->workers[d->nr_workers],
					psync_worker, d, name);
		if (ret)
			break;
		d->nr_workers++;
	}
	if (!d->nr_workers)
		return ret;
	if (ret)
		pr_warn("psync: started %u of %u workers: %s", d->nr_workers,
			want, strerror(-ret));
	return 0;
}

static int psync_setup(struct uf_io_queue *q)
{
	unsigned int want;
	struct psync_data *d;
	int ret;

	if (!q->depth)
		return -EINVAL;
	want = q->depth < PSYNC_MAX_WORKERS ? q->depth : PSYNC_MAX_WORKERS;
	d = kzalloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->q = q;
	d->size = q->depth;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->work, NULL);
	d->fifo = kzalloc(d->size * sizeof(*d->fifo));
	d->workers = kzalloc(want * sizeof(*d->workers));
	if (!d->fifo || !d->workers) {
		psync_free(d);
		return -ENOMEM;
	}
	ret = psync_start_workers(d, want);
	if (ret)
		psync_free(d);
	else
		q->engine_data = d;
	return ret;
}

static void psync_teardown(struct uf_io_queue *q)
{
	struct psync_data *d = q->engine_data;

	psync_stop_workers(d);
	psync_free(d);
}

UF_IO_ENGINE(uf_psync_engine, "psync", psync);
