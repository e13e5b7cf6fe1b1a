// SPDX-License-Identifier: MIT
/*
 * io/shape.c - the shaping engine: a wrapper around a real engine that makes
 * a device slower or faultier than it is.
 *
 * It lets one machine stand in for a JBOD of "slow disks" (a bandwidth cap
 * and an added latency per device) and lets tests see how the writeback code
 * copes with I/O errors and with a device that stops answering for a while.
 *
 * Each request of the outer queue gets an event record from a pool sized to
 * the queue depth (the common layer never lets more than depth requests be in
 * flight, so the pool cannot run dry).  The record carries the timing and the
 * result, and embeds a shadow request that is what the inner engine sees:
 * the caller's request has no room for a held result or a delivery time,
 * and its ->next belongs to whichever engine holds it, so the inner engine
 * never sees it; the inner queue's complete() finds the record again with
 * container_of().
 *
 *   submit:   injected error? -> completion list (-EIO, after the latency)
 *             over the bandwidth budget? -> release list (held)
 *             else -> inner queue now
 *   complete: before submit + latency, or during a stall? -> completion list
 *             else -> outer->complete() now
 *
 * One timer thread sleeps until the earliest event of either list is due,
 * then releases held requests to the inner queue and delivers held
 * completions.  It never calls out while holding the state lock: the inner
 * submit may block, and the inner engine's completion thread takes that lock
 * in shape_inner_complete().
 */
#include <errno.h>
#include <stddef.h>
#include <time.h>

#include "io/io.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "lib/slab.h"

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

/* The kernel's names; engine/kernel/jiffies.h may already have some of them. */
#ifndef NSEC_PER_SEC
#define NSEC_PER_SEC	1000000000ull
#endif
#ifndef NSEC_PER_MSEC
#define NSEC_PER_MSEC	1000000ull
#endif
#ifndef NSEC_PER_USEC
#define NSEC_PER_USEC	1000ull
#endif

/* Requests handed to the inner queue / completions delivered per unlock. */
#define SHAPE_BATCH	32

#define SHAPE_ALL_OPS	((1u << UF_IO_READ) | (1u << UF_IO_WRITE) | \
			 (1u << UF_IO_FLUSH))

/* One outer request while the shaping engine has it. */
struct shape_ev {
	struct uf_io_req shadow;	/* what the inner engine sees */
	struct uf_io_req *req;		/* the caller's request */
	uint64_t floor;			/* not delivered before: submit+latency */
	uint64_t due;			/* sort key: release or delivery time */
	int res;
	struct shape_ev *next;		/* free list, release or done list */
};

/* Kept sorted by ->due; equal times stay in insertion order. */
struct ev_list {
	struct shape_ev *head;
	struct shape_ev *tail;
};

struct shape_state {
	struct uf_io_queue inner;	/* the wrapped engine's queue */
	struct uf_io_queue *outer;

	pthread_mutex_t lock;		/* everything below */
	pthread_cond_t wake;		/* earlier event, stall change, stop */
	pthread_t timer;
	bool stop;

	struct uf_io_shape shape;
	uint64_t seen;			/* requests since the shape was set */
	uint64_t bw_end;		/* the bandwidth budget is spent until */
	uint64_t stall_until;		/* no completion delivered before */
	struct uf_shape_counters cnt;	/* for tests: what got through */

	struct shape_ev *pool;
	struct shape_ev *free;
	unsigned int nr_free;
	struct ev_list release;		/* held for bandwidth */
	struct ev_list done;		/* completions held back */
};

/* ------------------------------------------------------------------ */
/* Event records and lists                                             */

static struct shape_ev *ev_get(struct shape_state *st)
{
	struct shape_ev *ev = st->free;

	st->free = ev->next;
	st->nr_free--;
	ev->next = NULL;
	return ev;
}

static void ev_put(struct shape_state *st, struct shape_ev *ev)
{
	ev->req = NULL;
	ev->next = st->free;
	st->free = ev;
	st->nr_free++;
}

/* Insert by ->due after equal ones; returns true if @ev is the new head. */
static bool ev_list_add(struct ev_list *l, struct shape_ev *ev)
{
	struct shape_ev **pp;

	ev->next = NULL;
	/* Times mostly arrive in order: appending is the common case. */
	if (!l->tail || l->tail->due <= ev->due) {
		if (l->tail)
			l->tail->next = ev;
		else
			l->head = ev;
		l->tail = ev;
		return l->head == ev;
	}
	for (pp = &l->head; (*pp)->due <= ev->due; pp = &(*pp)->next)
		;
	ev->next = *pp;
	*pp = ev;
	return l->head == ev;
}

static struct shape_ev *ev_list_pop(struct ev_list *l)
{
	struct shape_ev *ev = l->head;

	l->head = ev->next;
	if (!l->head)
		l->tail = NULL;
	ev->next = NULL;
	return ev;
}

/* ------------------------------------------------------------------ */
/* Counters, under st->lock                                            */

static void count_submit(struct shape_state *st, const struct uf_io_req *req)
{
	struct uf_shape_counters *c = &st->cnt;

	if (req->op != UF_IO_FLUSH)
		return;
	c->flushes++;
	c->last_flush_seq = ++c->seq;
	if (!c->first_flush_seq)
		c->first_flush_seq = c->last_flush_seq;
}

/* Stamped when handed on, before the caller's end_io can run. */
static void count_done(struct shape_state *st, const struct uf_io_req *req,
		       int res)
{
	struct uf_shape_counters *c = &st->cnt;

	if (req->op == UF_IO_WRITE) {
		c->writes_done++;
		c->last_write_done_seq = ++c->seq;
	} else if (req->op == UF_IO_FLUSH) {
		c->flushes_done++;
		c->flushes_failed += res < 0;
	}
}

/* ------------------------------------------------------------------ */
/* Decisions, under st->lock                                           */

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b,
			   uint64_t blen)
{
	/* Saturate: a range may legitimately run to the end of u64 space. */
	uint64_t a_end = a + alen < a ? UINT64_MAX : a + alen;
	uint64_t b_end = b + blen < b ? UINT64_MAX : b + blen;

	return a < b_end && b < a_end;
}

static bool shape_inject_eio(struct shape_state *st,
			     const struct uf_io_req *req)
{
	const struct uf_io_shape *s = &st->shape;
	uint32_t ops = s->eio_ops ? s->eio_ops : 1u << UF_IO_WRITE;

	st->seen++;
	if (s->eio_every_nth && st->seen % s->eio_every_nth == 0)
		return true;
	if (!s->eio_len || !(ops & (1u << req->op)))
		return false;
	/*
	 * A flush has no range of its own: it makes everything written
	 * durable, the bad range included, so it fails whenever flushes are
	 * in the mask.
	 */
	if (req->op == UF_IO_FLUSH)
		return true;
	return ranges_overlap(req->offset, req->len, s->eio_offset,
			      s->eio_len);
}

/* Rounded up, so that rounding can only err on the slow side. */
static uint64_t bw_cost_ns(uint64_t len, uint64_t bw)
{
	unsigned __int128 ns = (unsigned __int128)len * NSEC_PER_SEC;

	return (uint64_t)((ns + bw - 1) / bw);
}

/*
 * Token bucket without burst: each request is released when the previous
 * one's share of the bandwidth has elapsed, so the sustained rate cannot
 * exceed the cap however deep the queue.  Returns the release time.
 */
static uint64_t bw_release_time(struct shape_state *st, uint64_t len,
				uint64_t now)
{
	uint64_t bw = st->shape.bw_bytes_per_sec, at;

	if (!bw)
		return now;
	at = st->bw_end > now ? st->bw_end : now;
	st->bw_end = at + bw_cost_ns(len, bw);
	return at;
}

static void ev_init(struct shape_ev *ev, struct uf_io_req *req,
		    uint64_t floor)
{
	/*
	 * The shadow's end_io is never used: the inner queue's complete() is
	 * shape_inner_complete(), not uf_io_complete().
	 */
	ev->shadow = (struct uf_io_req) {
		.op = req->op,
		.offset = req->offset,
		.iov = req->iov,
		.nr_iov = req->nr_iov,
		.len = req->len,
	};
	ev->req = req;
	ev->floor = floor;
	ev->due = floor;
	ev->res = 0;
}

/*
 * Sort one new request: failed, held for bandwidth or to go now (linked
 * on @go).  Returns true if the timer thread must re-arm.
 */
static bool shape_one(struct shape_state *st, struct shape_ev *ev,
		      uint64_t now, struct shape_ev ***go)
{
	struct uf_io_req *req = ev->req;
	uint64_t at;

	if (shape_inject_eio(st, req)) {
		/* it never reaches the device, but still takes the latency */
		ev->res = -EIO;
		return ev_list_add(&st->done, ev);
	}
	at = bw_release_time(st, req->len, now);
	if (at > now) {
		ev->due = at;
		return ev_list_add(&st->release, ev);
	}
	**go = ev;
	*go = &ev->next;
	return false;
}

/* ------------------------------------------------------------------ */
/* Calling out, without st->lock                                       */

/* Hand a chain of records to the inner queue, a batch at a time. */
static void shape_submit_chain(struct shape_state *st, struct shape_ev *ev)
{
	struct uf_io_req *batch[SHAPE_BATCH];
	unsigned int n;
	uint64_t now;

	while (ev) {
		now = uf_now_ns();
		/* read ->next first: once submitted, ev may complete */
		for (n = 0; ev && n < SHAPE_BATCH; ev = ev->next) {
			ev->shadow.submit_ns = now;
			ev->shadow.next = NULL;
			batch[n++] = &ev->shadow;
		}
		/* a refused batch comes back through shape_inner_complete */
		uf_io_queue_submit(&st->inner, batch, n);
	}
}

struct shape_done {
	struct uf_io_req *req;
	int res;
};

static void shape_deliver(struct shape_state *st, struct shape_done *d,
			  unsigned int n)
{
	struct uf_io_queue *outer = st->outer;
	unsigned int i;

	for (i = 0; i < n; i++)
		outer->complete(outer, d[i].req, d[i].res);
}

/* ------------------------------------------------------------------ */
/* Completions from the inner engine                                   */

static void shape_inner_complete(struct uf_io_queue *iq,
				 struct uf_io_req *shadow, int res)
{
	struct shape_state *st = container_of(iq, struct shape_state, inner);
	struct shape_ev *ev = container_of(shadow, struct shape_ev, shadow);
	struct uf_io_queue *outer = st->outer;
	struct uf_io_req *req;
	uint64_t now;

	pthread_mutex_lock(&st->lock);
	now = uf_now_ns();
	ev->res = res;
	/*
	 * Deliver from this thread unless held back, or unless a held
	 * completion that is already due would be overtaken.
	 */
	if (ev->floor <= now && now >= st->stall_until &&
	    (!st->done.head || st->done.head->due > now)) {
		req = ev->req;
		count_done(st, req, res);
		ev_put(st, ev);
		pthread_mutex_unlock(&st->lock);
		/* after this the queue may be torn down: touch nothing */
		outer->complete(outer, req, res);
		return;
	}
	ev->due = ev->floor > now ? ev->floor : now;
	if (ev_list_add(&st->done, ev))
		pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
}

/* ------------------------------------------------------------------ */
/* Timer thread                                                        */

/* Held requests whose release time has come, as a chain. */
static struct shape_ev *take_released(struct shape_state *st, uint64_t now)
{
	struct shape_ev *go = NULL, **tail = &go, *ev;

	while (st->release.head && st->release.head->due <= now) {
		ev = ev_list_pop(&st->release);
		*tail = ev;
		tail = &ev->next;
	}
	return go;
}

/*
 * Completions due now, in order, up to @max.  Their records go back to the
 * pool here, before the outer slot is freed, so the pool never runs dry.
 */
static unsigned int take_done(struct shape_state *st, uint64_t now,
			      struct shape_done *d, unsigned int max)
{
	struct shape_ev *ev;
	unsigned int n = 0;

	if (now < st->stall_until)
		return 0;
	while (n < max && st->done.head && st->done.head->due <= now) {
		ev = ev_list_pop(&st->done);
		d[n].req = ev->req;
		d[n].res = ev->res;
		count_done(st, ev->req, ev->res);
		n++;
		ev_put(st, ev);
	}
	return n;
}

/* When the next thing is due; 0 if nothing is pending. */
static uint64_t next_event(struct shape_state *st)
{
	uint64_t t = 0, d;

	if (st->release.head)
		t = st->release.head->due;
	if (st->done.head) {
		d = st->done.head->due;
		if (d < st->stall_until)
			d = st->stall_until;
		if (!t || d < t)
			t = d;
	}
	return t;
}

static void timer_sleep(struct shape_state *st, uint64_t until)
{
	struct timespec ts;

	if (!until) {
		pthread_cond_wait(&st->wake, &st->lock);
		return;
	}
	ts.tv_sec = (time_t)(until / NSEC_PER_SEC);
	ts.tv_nsec = (long)(until % NSEC_PER_SEC);
	pthread_cond_timedwait(&st->wake, &st->lock, &ts);
}

static void *shape_timer(void *arg)
{
	struct shape_state *st = arg;
	struct shape_done done[SHAPE_BATCH];
	struct shape_ev *go;
	unsigned int n;
	uint64_t now;

	pthread_mutex_lock(&st->lock);
	while (!st->stop) {
		now = uf_now_ns();
		go = take_released(st, now);
		n = take_done(st, now, done, SHAPE_BATCH);
		if (!go && !n) {
			timer_sleep(st, next_event(st));
			continue;
		}
		pthread_mutex_unlock(&st->lock);
		shape_submit_chain(st, go);
		shape_deliver(st, done, n);
		pthread_mutex_lock(&st->lock);
	}
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Engine operations                                                   */

static int shape_submit(struct uf_io_queue *q, struct uf_io_req **reqs,
			unsigned int nr)
{
	struct shape_state *st = q->engine_data;
	struct shape_ev *go = NULL, **tail = &go, *ev;
	bool kick = false;
	uint64_t now, lat;
	unsigned int i;

	pthread_mutex_lock(&st->lock);
	/* All or nothing: a refused batch is completed by the caller. */
	if (nr > st->nr_free) {
		pthread_mutex_unlock(&st->lock);
		pr_err("shape: %u requests but %u free records (depth %u)",
		       nr, st->nr_free, q->depth);
		return -EBUSY;
	}
	now = uf_now_ns();
	lat = (uint64_t)st->shape.latency_us * NSEC_PER_USEC;
	for (i = 0; i < nr; i++) {
		ev = ev_get(st);
		count_submit(st, reqs[i]);
		ev_init(ev, reqs[i], now + lat);
		kick |= shape_one(st, ev, now, &tail);
	}
	if (kick)
		pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
	shape_submit_chain(st, go);
	return 0;
}

static void shape_free(struct shape_state *st)
{
	kfree(st->pool);
	kfree(st);
}

static int shape_alloc(struct uf_io_queue *q, struct shape_state **out)
{
	struct shape_state *st;
	unsigned int i;

	st = kzalloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->pool = kzalloc(sizeof(*st->pool) * q->depth);
	if (!st->pool) {
		kfree(st);
		return -ENOMEM;
	}
	for (i = 0; i < q->depth; i++)
		ev_put(st, &st->pool[i]);
	st->outer = q;
	*out = st;
	return 0;
}

/* The timer sleeps on CLOCK_MONOTONIC, the clock of uf_now_ns(). */
static int shape_sync_init(struct shape_state *st)
{
	pthread_condattr_t attr;
	int ret;

	ret = pthread_condattr_init(&attr);
	if (ret)
		return -ret;
	ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&st->wake, &attr);
	pthread_condattr_destroy(&attr);
	if (ret)
		return -ret;
	pthread_mutex_init(&st->lock, NULL);
	return 0;
}

static void shape_sync_exit(struct shape_state *st)
{
	pthread_cond_destroy(&st->wake);
	pthread_mutex_destroy(&st->lock);
}

static int shape_setup(struct uf_io_queue *q)
{
	struct shape_state *st;
	int ret;

	if (!q->inner || q->inner == &uf_shape_engine || !q->depth)
		return -EINVAL;
	ret = shape_alloc(q, &st);
	if (ret)
		return ret;
	/* The inner engine's error lets uf_bdev_open() try the next one. */
	ret = uf_io_queue_init(&st->inner, q->inner, q->fd, q->depth);
	if (ret)
		goto err_free;
	st->inner.complete = shape_inner_complete;
	ret = shape_sync_init(st);
	if (ret)
		goto err_inner;
	ret = -uf_thread_create(&st->timer, shape_timer, st, "uf-shape");
	if (ret)
		goto err_sync;
	q->engine_data = st;
	return 0;

err_sync:
	shape_sync_exit(st);
err_inner:
	uf_io_queue_exit(&st->inner);
err_free:
	shape_free(st);
	return ret;
}

static void shape_teardown(struct uf_io_queue *q)
{
	struct shape_state *st = q->engine_data;

	pthread_mutex_lock(&st->lock);
	if (st->release.head || st->done.head)
		pr_warn("shape: torn down with requests still held");
	st->stop = true;
	pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
	pthread_join(st->timer, NULL);
	uf_io_queue_exit(&st->inner);
	shape_sync_exit(st);
	shape_free(st);
}

UF_IO_ENGINE(uf_shape_engine, "shape", shape);

/* ------------------------------------------------------------------ */
/* Knobs                                                               */

static struct shape_state *shape_state_of(struct uf_io_queue *q)
{
	if (!q || q->engine != &uf_shape_engine)
		return NULL;
	return q->engine_data;
}

/*
 * Applies to requests submitted from now on; held ones keep their times.
 * The every-Nth count restarts so that "the Nth request" means the Nth
 * after this call.
 */
int uf_shape_set(struct uf_io_queue *q, const struct uf_io_shape *shape)
{
	struct shape_state *st = shape_state_of(q);

	if (!st || !shape || (shape->eio_ops & ~SHAPE_ALL_OPS))
		return -EINVAL;
	pthread_mutex_lock(&st->lock);
	st->shape = *shape;
	st->seen = 0;
	pthread_mutex_unlock(&st->lock);
	return 0;
}

/* A new stall replaces the current one: ms = 0 ends a stall at once. */
int uf_shape_stall(struct uf_io_queue *q, unsigned int ms)
{
	struct shape_state *st = shape_state_of(q);

	if (!st)
		return -EINVAL;
	pthread_mutex_lock(&st->lock);
	st->stall_until = uf_now_ns() + (uint64_t)ms * NSEC_PER_MSEC;
	pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
	return 0;
}

int uf_shape_counters(struct uf_io_queue *q, struct uf_shape_counters *out)
{
	struct shape_state *st = shape_state_of(q);

	if (!st || !out)
		return -EINVAL;
	pthread_mutex_lock(&st->lock);
	*out = st->cnt;
	pthread_mutex_unlock(&st->lock);
	return 0;
}
