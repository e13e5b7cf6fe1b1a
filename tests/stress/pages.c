// SPDX-License-Identifier: MIT
/*
 * tests/stress/pages.c - the page API's integrity under threads, for TSan.
 *
 * Description:
 *  - pages_nocreate_read_race: one thread reads the pages of a cold file
 *    one by one (uf_page_get with no flags), another spins on
 *    uf_page_get(NOCREATE) of the page being read and checks every hit
 *    against the device's pattern; the file is closed and reopened between
 *    rounds so that frames come back holding other offsets' data.  A page
 *    handed out before its read completed fails the check; under TSan the
 *    data's publication (SetPageUptodate, the lockless lookup) is checked
 *    too.  The scenario fails if no hit landed during a read.
 *  - pages_pread_hit_race: two threads uf_pread random pages of a file
 *    whose pages a third rewrites whole (two versions), while a fourth
 *    reads another file through a cache smaller than both, so pages are
 *    reclaimed and frames reused under the readers' copies; every page
 *    read must be one version, whole.  The hits copy without a reference
 *    (filemap.c, filemap_read_hit): under TSan this checks that only those
 *    copies' reads are excused, and that a copy kept is ordered after the
 *    data it copied (page_seq, PG_uptodate).
 *  - pages_getput_race: two threads get (read-only), hold, check and put
 *    pages of a file while a third reads another through a cache too
 *    small for both (reclaim) and a fourth closes and reopens the first
 *    (truncation of held pages): a held page holds the file's bytes at
 *    the get and still at the put (mm/page_pin.c: a pinned frame is never
 *    freed or reused).  Each holder is a chain of short-lived threads
 *    that exit with pins held, put by the next; at the end every frame
 *    is free or cached.  Under TSan: the pins' publication and the
 *    frees' scans of them.
 *  - pages_umount_hold_close: one thread takes uf_dev_hold_umount(),
 *    another closes the device, which drops the hold: the hold belongs to
 *    the device, and the semaphore under it has no owner (a pthread rwlock
 *    unlocked by a thread that does not hold it is undefined, and TSan
 *    reports it).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress.h"
#include "uflush.h"

#define PR_DEV_SIZE	(64ull << 20)
#define PR_OFF		(1ull << 20)
#define PR_PAGES	32ul
#define PR_SEED		11

struct pr_run {
	struct uf_file *f;		/* atomic: this round's file */
	unsigned long cur;		/* atomic: index << 1 | reading */
	bool stop, parked;		/* atomic */
	unsigned long hits, raced, bad;
	long bad_index;
	int bad_ret;
};

static void *pr_spinner(void *arg)
{
	struct pr_run *r = arg;
	unsigned long cur, index;
	struct uf_page *p;
	struct uf_file *f;
	int ret;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		f = __atomic_load_n(&r->f, __ATOMIC_ACQUIRE);
		if (!f) {
			__atomic_store_n(&r->parked, true, __ATOMIC_RELEASE);
			continue;
		}
		cur = __atomic_load_n(&r->cur, __ATOMIC_ACQUIRE);
		index = cur >> 1;
		ret = uf_page_get(f, index, UF_PAGE_NOCREATE, &p);
		if (ret == -ENOENT)
			continue;
		if (ret) {
			r->bad_ret = ret;
			continue;
		}
		r->hits++;
		r->raced += cur & 1;
		if (st_check(uf_page_data(p), ST_PAGE,
			     PR_OFF + index * ST_PAGE, PR_SEED) >= 0 &&
		    !r->bad++)
			r->bad_index = (long)index;
		uf_page_put(p);
	}
	return NULL;
}

static enum st_result pr_round(struct st_ctx *ctx, struct pr_run *r,
			       struct uf_dev *d)
{
	struct uf_page *p;
	struct uf_file *f;
	unsigned long i;
	int ret;

	ret = uf_file_open(d, 1, PR_OFF, PR_PAGES * ST_PAGE, NULL, NULL, &f);
	if (ret)
		return st_fail(ctx, "uf_file_open: %s", strerror(-ret));
	__atomic_store_n(&r->f, f, __ATOMIC_RELEASE);
	for (i = 0; i < PR_PAGES; i++) {
		__atomic_store_n(&r->cur, i << 1 | 1, __ATOMIC_RELEASE);
		ret = uf_page_get(f, i, 0, &p);
		__atomic_store_n(&r->cur, i << 1, __ATOMIC_RELEASE);
		if (ret)
			return st_fail(ctx, "uf_page_get(%lu): %s", i,
				       strerror(-ret));
		uf_page_put(p);
	}
	__atomic_store_n(&r->parked, false, __ATOMIC_RELEASE);
	__atomic_store_n(&r->f, NULL, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&r->parked, __ATOMIC_ACQUIRE))
		;
	ret = uf_file_close(f);
	return ret ? st_fail(ctx, "uf_file_close: %s", strerror(-ret)) :
		     ST_PASS;
}

static enum st_result pages_nocreate_read_race(struct st_ctx *ctx)
{
	unsigned int rounds, n = 0, i;
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;
	struct uf_dev *d = NULL;
	struct pr_run r = { 0 };
	struct uf_testdev td;
	enum st_result res;
	pthread_t tid;
	uint8_t *buf;
	int ret;

	rounds = (unsigned int)(100 * (ctx->scale < 0.1 ? 0.1 : ctx->scale));
	res = st_dev_get(ctx, PR_DEV_SIZE, &td);
	if (res != ST_PASS)
		return res;
	buf = st_alloc(PR_PAGES * ST_PAGE);
	if (!buf) {
		st_dev_put(&td);
		return st_fail(ctx, "out of memory");
	}
	st_fill(buf, PR_PAGES * ST_PAGE, PR_OFF, PR_SEED);
	ret = st_raw_write(td.path, PR_OFF, buf, PR_PAGES * ST_PAGE);
	free(buf);
	if (ret) {
		st_dev_put(&td);
		return st_fail(ctx, "raw write: %s", strerror(-ret));
	}
	st_cache_config(&cfg, 256, 0, 3000, 0);
	ret = uf_cache_open(&cfg, &c);
	if (!ret)
		ret = uf_dev_open(c, td.path, NULL, &d);
	if (ret) {
		res = st_fail(ctx, "open: %s", strerror(-ret));
		goto out;
	}
	if (pthread_create(&tid, NULL, pr_spinner, &r)) {
		res = st_fail(ctx, "pthread_create");
		goto out;
	}
	for (i = 0; i < rounds && res == ST_PASS && !r.bad; i++, n++)
		res = pr_round(ctx, &r, d);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	fprintf(stderr, "  %s: %u rounds, %lu NOCREATE hits, %lu during the "
		"read\n", ctx->name, n, r.hits, r.raced);
	if (res == ST_PASS && r.bad)
		res = st_fail(ctx, "NOCREATE handed out page %ld before its "
			      "data (%lu of %lu hits wrong)", r.bad_index,
			      r.bad, r.hits);
	else if (res == ST_PASS && r.bad_ret)
		res = st_fail(ctx, "NOCREATE failed: %s",
			      strerror(-r.bad_ret));
	else if (res == ST_PASS && !r.raced)
		res = st_fail(ctx, "no NOCREATE hit during a read in %u "
			      "rounds: the race was not exercised", n);
out:
	if (c)
		uf_cache_close(c);
	st_dev_put(&td);
	return res;
}

/* ------------------------------------------------------------------ */

#define PH_A_PAGES	64ul
#define PH_B_PAGES	512ul
#define PH_B_OFF	(8ull << 20)
#define PH_SEED2	12

struct ph_run {
	struct uf_file *a, *b;
	bool stop;			/* atomic */
	unsigned long reads, bad;	/* atomic */
	long bad_index;
};

static uint64_t ph_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Half the time one of 4 hot pages (readers meet the rewriter there),
 * else any page (reclaim takes those). */
static unsigned long ph_page(uint64_t *s)
{
	uint64_t x = ph_rand(s);

	return (unsigned long)(x & 1 ? (x >> 1) % 4 : (x >> 1) % PH_A_PAGES);
}

static void *ph_reader(void *arg)
{
	struct ph_run *r = arg;
	uint64_t s = (uintptr_t)&s | 1, off;
	unsigned long i, n = 0;
	uint8_t buf[ST_PAGE];

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		i = ph_page(&s);
		off = PR_OFF + i * ST_PAGE;
		if ((uf_pread(r->a, buf, ST_PAGE, i * ST_PAGE) != ST_PAGE ||
		     (st_check(buf, ST_PAGE, off, PR_SEED) >= 0 &&
		      st_check(buf, ST_PAGE, off, PH_SEED2) >= 0)) &&
		    !__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED))
			__atomic_store_n(&r->bad_index, (long)i,
					 __ATOMIC_RELAXED);
		n++;
	}
	__atomic_add_fetch(&r->reads, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *ph_rewriter(void *arg)
{
	struct ph_run *r = arg;
	uint64_t s = 0x9e3779b9, round = 0;
	uint8_t buf[ST_PAGE];
	unsigned long i;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		i = ph_page(&s);
		st_fill(buf, ST_PAGE, PR_OFF + i * ST_PAGE,
			round++ & 1 ? PH_SEED2 : PR_SEED);
		if (uf_pwrite(r->a, buf, ST_PAGE, i * ST_PAGE) != ST_PAGE)
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *ph_thrasher(void *arg)
{
	struct ph_run *r = arg;
	uint8_t buf[ST_PAGE];
	unsigned long i = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (uf_pread(r->b, buf, ST_PAGE, i * ST_PAGE) != ST_PAGE)
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		i = (i + 1) % PH_B_PAGES;
	}
	return NULL;
}

static enum st_result pages_pread_hit_race(struct st_ctx *ctx)
{
	void *(*fns[4])(void *) = { ph_reader, ph_reader, ph_rewriter,
				    ph_thrasher };
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;
	struct uf_dev *d = NULL;
	struct ph_run r = { 0 };
	struct uf_cache_stats st;
	struct uf_testdev td;
	enum st_result res;
	unsigned int i, nr = 0;
	pthread_t tids[4];
	uint8_t *buf;
	int ret;

	res = st_dev_get(ctx, PR_DEV_SIZE, &td);
	if (res != ST_PASS)
		return res;
	buf = st_alloc(PH_B_OFF + PH_B_PAGES * ST_PAGE - PR_OFF);
	if (!buf) {
		st_dev_put(&td);
		return st_fail(ctx, "out of memory");
	}
	st_fill(buf, PH_B_OFF + PH_B_PAGES * ST_PAGE - PR_OFF, PR_OFF,
		PR_SEED);
	ret = st_raw_write(td.path, PR_OFF, buf,
			   PH_B_OFF + PH_B_PAGES * ST_PAGE - PR_OFF);
	free(buf);
	if (ret) {
		st_dev_put(&td);
		return st_fail(ctx, "raw write: %s", strerror(-ret));
	}
	st_cache_config(&cfg, 128, 0, 3000, 50);	/* a and b do not fit */
	ret = uf_cache_open(&cfg, &c);
	if (!ret)
		ret = uf_dev_open(c, td.path, NULL, &d);
	if (!ret)
		ret = uf_file_open(d, 1, PR_OFF, PH_A_PAGES * ST_PAGE, NULL,
				   NULL, &r.a);
	if (!ret)
		ret = uf_file_open(d, 2, PH_B_OFF, PH_B_PAGES * ST_PAGE, NULL,
				   NULL, &r.b);
	if (ret) {
		res = st_fail(ctx, "open: %s", strerror(-ret));
		goto out;
	}
	for (i = 0; i < 4; i++, nr++)
		if (pthread_create(&tids[i], NULL, fns[i], &r))
			break;
	if (nr == 4)
		st_sleep_ms(st_scaled(ctx, 2000));
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < nr; i++)
		pthread_join(tids[i], NULL);
	if (nr < 4) {
		res = st_fail(ctx, "pthread_create");
		goto out;
	}
	uf_cache_stats(c, &st);
	fprintf(stderr, "  %s: %lu reads, %lu pages reclaimed, %lu wrong\n",
		ctx->name, r.reads, (unsigned long)st.nr_reclaimed, r.bad);
	if (r.bad)
		res = st_fail(ctx, "%lu reads wrong (first: page %ld): a "
			      "copy the frame changed under was kept", r.bad,
			      r.bad_index);
	else if (!r.reads || !st.nr_reclaimed)
		res = st_fail(ctx, "the race was not exercised: %lu reads, "
			      "%lu pages reclaimed", r.reads,
			      (unsigned long)st.nr_reclaimed);
out:
	if (c)
		uf_cache_close(c);
	st_dev_put(&td);
	return res;
}

/*
 * pages_getput_race: read-only page handles pin their pages in per-thread
 * tables (mm/page_pin.c), not in the page's count.  Two threads get
 * (NOCREATE: whatever is cached, cold pages too), hold a while, check and
 * put pages of file a, while a third reads all of file a through a cache
 * an eighth its size (reclaim of the pages around the held ones) and a
 * fourth closes and reopens it (truncation of pages that are held).  A held page must
 * hold the file's bytes at the get and still at the put: its frame is
 * never freed nor reused while a pin names it.  Each holder is a chain of
 * short-lived threads, each exiting with its pages pinned, the next one
 * putting them (the pin tables given back with slots set, reclaimed by
 * the next threads).  At the end, with nothing held, every frame is free
 * or cached.
 */
struct pg_run {
	struct uf_dev *d;
	struct uf_file *a;		/* atomic: reopened by the closer */
	bool stop;			/* atomic */
	unsigned long gets, bad, closes, ebadf;	/* atomic */
	unsigned long holder_threads;	/* atomic */
	long bad_index;
	int bad_ret;
};

/* A ring of PG_HELD pages held at once: each is checked at its get and
 * again at its put, PG_HELD gets later, with reclaim and closes between. */
#define PG_HELD		6

#define PG_A_PAGES	512ul	/* within what the scenario writes */

static bool pg_wrong(struct pg_run *r, unsigned long i, int ret)
{
	if (!__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED)) {
		r->bad_index = (long)i;
		r->bad_ret = ret;
	}
	return false;
}

static bool pg_check(struct pg_run *r, struct uf_page *p, unsigned long i)
{
	if (st_check(uf_page_data(p), ST_PAGE, PR_OFF + i * ST_PAGE,
		     PR_SEED) >= 0)
		return pg_wrong(r, i, 0);
	return true;
}

/* A holder's ring, handed from each short-lived thread to the next. */
struct pg_ring {
	struct pg_run *r;
	uint64_t s;
	unsigned long idx[PG_HELD], n, ebadf;
	struct uf_page *held[PG_HELD];
	unsigned int k;
};

/* Gets made by one thread of a holder before it exits, its pins held. */
#define PG_GETS_PER_THREAD	64

static void *pg_ring_run(void *arg)
{
	struct pg_ring *g = arg;
	struct pg_run *r = g->r;
	unsigned long i, gets = 0;
	struct uf_page *p;
	struct uf_file *f;
	int ret;

	while (gets < PG_GETS_PER_THREAD &&
	       !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		f = __atomic_load_n(&r->a, __ATOMIC_ACQUIRE);
		i = (unsigned long)(ph_rand(&g->s) % PG_A_PAGES);
		ret = uf_page_get(f, i, UF_PAGE_NOCREATE, &p);
		if (ret == -EBADF || ret == -ENOENT) {	/* closing, or cold */
			g->ebadf += ret == -EBADF;
			sched_yield();
			continue;
		}
		if (ret) {
			pg_wrong(r, i, ret);
			continue;
		}
		g->n++;
		gets++;
		pg_check(r, p, i);
		if (g->held[g->k]) {
			/* often got by the thread before this one, now gone */
			pg_check(r, g->held[g->k], g->idx[g->k]);
			ret = uf_page_put(g->held[g->k]);
			if (ret)
				pg_wrong(r, g->idx[g->k], ret);
		}
		g->held[g->k] = p;
		g->idx[g->k] = i;
		g->k = (g->k + 1) % PG_HELD;
		sched_yield();
	}
	return NULL;
}

/* A thread per PG_GETS_PER_THREAD gets, each exiting with the ring's
 * pages pinned in its table: the next one puts them from another thread,
 * and claims a table that exited threads left pins in. */
static void *pg_holder(void *arg)
{
	struct pg_ring g = { .r = arg };
	struct pg_run *r = arg;
	unsigned int k;
	pthread_t tid;
	int ret;

	g.s = (uintptr_t)&g | 1;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (pthread_create(&tid, NULL, pg_ring_run, &g)) {
			pg_wrong(r, 0, -EAGAIN);
			break;
		}
		pthread_join(tid, NULL);
		__atomic_add_fetch(&r->holder_threads, 1, __ATOMIC_RELAXED);
	}
	for (k = 0; k < PG_HELD; k++)
		if (g.held[k] && pg_check(r, g.held[k], g.idx[k]) &&
		    (ret = uf_page_put(g.held[k])) != 0)
			pg_wrong(r, g.idx[k], ret);
	__atomic_add_fetch(&r->gets, g.n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->ebadf, g.ebadf, __ATOMIC_RELAXED);
	return NULL;
}

static void *pg_thrasher(void *arg)
{
	struct pg_run *r = arg;
	uint8_t buf[ST_PAGE];
	unsigned long i = 0;

	ssize_t n;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		n = uf_pread(__atomic_load_n(&r->a, __ATOMIC_ACQUIRE), buf,
			     ST_PAGE, i * ST_PAGE);
		if (n != ST_PAGE && n != -EBADF)
			__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
		i = (i + 1) % PG_A_PAGES;
	}
	return NULL;
}

static void *pg_closer(void *arg)
{
	struct pg_run *r = arg;
	struct uf_file *f, *g;
	unsigned long n = 0;
	int ret;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		st_sleep_ms(150);	/* the reader refills the cache */
		f = __atomic_load_n(&r->a, __ATOMIC_ACQUIRE);
		ret = uf_file_close(f);	/* truncates pages that are held */
		if (!ret)
			ret = uf_file_open(r->d, 1, PR_OFF,
					   PG_A_PAGES * ST_PAGE, NULL, NULL,
					   &g);
		if (ret) {
			if (!__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED))
				r->bad_ret = ret;
			break;
		}
		__atomic_store_n(&r->a, g, __ATOMIC_RELEASE);
		n++;
	}
	__atomic_store_n(&r->closes, n, __ATOMIC_RELEASE);
	return NULL;
}

static enum st_result pages_getput_race(struct st_ctx *ctx)
{
	void *(*fns[4])(void *) = { pg_holder, pg_holder, pg_thrasher,
				    pg_closer };
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;
	struct pg_run r = { 0 };
	struct uf_cache_stats st;
	struct uf_testdev td;
	enum st_result res;
	unsigned int i, nr = 0;
	pthread_t tids[4];
	uint8_t *buf;
	int ret;

	res = st_dev_get(ctx, PR_DEV_SIZE, &td);
	if (res != ST_PASS)
		return res;
	buf = st_alloc(PH_B_OFF + PH_B_PAGES * ST_PAGE - PR_OFF);
	if (!buf) {
		st_dev_put(&td);
		return st_fail(ctx, "out of memory");
	}
	st_fill(buf, PH_B_OFF + PH_B_PAGES * ST_PAGE - PR_OFF, PR_OFF,
		PR_SEED);
	ret = st_raw_write(td.path, PR_OFF, buf,
			   PH_B_OFF + PH_B_PAGES * ST_PAGE - PR_OFF);
	free(buf);
	if (ret) {
		st_dev_put(&td);
		return st_fail(ctx, "raw write: %s", strerror(-ret));
	}
	st_cache_config(&cfg, PG_A_PAGES / 8, 0, 3000, 50);
	ret = uf_cache_open(&cfg, &c);
	if (!ret)
		ret = uf_dev_open(c, td.path, NULL, &r.d);
	if (!ret)
		ret = uf_file_open(r.d, 1, PR_OFF, PG_A_PAGES * ST_PAGE, NULL,
				   NULL, &r.a);
	if (ret) {
		res = st_fail(ctx, "open: %s", strerror(-ret));
		goto out;
	}
	for (i = 0; i < 4; i++, nr++)
		if (pthread_create(&tids[i], NULL, fns[i], &r))
			break;
	if (nr == 4)
		st_sleep_ms(st_scaled(ctx, 2000));
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	for (i = 0; i < nr; i++)
		pthread_join(tids[i], NULL);
	if (nr < 4) {
		res = st_fail(ctx, "pthread_create");
		goto out;
	}
	uf_cache_stats(c, &st);
	fprintf(stderr, "  %s: %lu gets by %lu holder threads, %lu pages "
		"reclaimed, %lu closes (%lu gets -EBADF), %lu wrong\n",
		ctx->name, r.gets, r.holder_threads,
		(unsigned long)st.nr_reclaimed, r.closes, r.ebadf, r.bad);
	if (r.bad)
		res = st_fail(ctx, "%lu held pages wrong (first: page %ld, "
			      "ret %d): a pinned frame was freed or reused",
			      r.bad, r.bad_index, r.bad_ret);
	else if (st.nr_free + st.nr_file_pages != st.nr_pages)
		res = st_fail(ctx, "%lu free + %lu cached of %lu frames with "
			      "nothing held: a frame lost or freed twice",
			      st.nr_free, st.nr_file_pages, st.nr_pages);
	else if (!r.gets || !st.nr_reclaimed || !r.closes ||
		 r.holder_threads < 2)
		res = st_fail(ctx, "the race was not exercised: %lu gets, "
			      "%lu pages reclaimed, %lu closes, %lu holder "
			      "threads", r.gets, (unsigned long)st.nr_reclaimed,
			      r.closes, r.holder_threads);
out:
	if (c)
		uf_cache_close(c);
	st_dev_put(&td);
	return res;
}

struct pr_holder {
	struct uf_dev *d;
	int ret;
};

static void *pr_hold(void *arg)
{
	struct pr_holder *h = arg;

	h->ret = uf_dev_hold_umount(h->d);
	return NULL;
}

static enum st_result pages_umount_hold_close(struct st_ctx *ctx)
{
	unsigned int rounds, i;
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;
	struct pr_holder h;
	struct uf_testdev td;
	enum st_result res;
	pthread_t tid;
	int ret;

	rounds = (unsigned int)(20 * (ctx->scale < 0.1 ? 0.1 : ctx->scale));
	res = st_dev_get(ctx, PR_DEV_SIZE, &td);
	if (res != ST_PASS)
		return res;
	st_cache_config(&cfg, 256, 0, 3000, 0);
	ret = uf_cache_open(&cfg, &c);
	if (ret) {
		res = st_fail(ctx, "uf_cache_open: %s", strerror(-ret));
		goto out;
	}
	for (i = 0; i < rounds && res == ST_PASS; i++) {
		h.d = NULL;
		ret = uf_dev_open(c, td.path, NULL, &h.d);
		if (ret) {
			res = st_fail(ctx, "uf_dev_open: %s", strerror(-ret));
			break;
		}
		if (pthread_create(&tid, NULL, pr_hold, &h)) {
			res = st_fail(ctx, "pthread_create");
			uf_dev_close(h.d);
			break;
		}
		pthread_join(tid, NULL);	/* the holder is gone */
		if (h.ret)
			res = st_fail(ctx, "uf_dev_hold_umount: %s",
				      strerror(-h.ret));
		st_note(0, "uf_dev_close (another thread's hold)");
		ret = uf_dev_close(h.d);
		st_note(0, NULL);
		if (ret && res == ST_PASS)
			res = st_fail(ctx, "uf_dev_close: %s", strerror(-ret));
	}
	if (res == ST_PASS)
		fprintf(stderr, "  %s: %u holds dropped by the closer\n",
			ctx->name, i);
out:
	if (c)
		uf_cache_close(c);
	st_dev_put(&td);
	return res;
}

const struct st_scenario st_page_scenarios[] = {
	{ "pages_nocreate_read_race",
	  "uf_page_get(NOCREATE) spinning on the page another thread reads",
	  pages_nocreate_read_race },
	{ "pages_pread_hit_race",
	  "uf_pread hits racing whole-page rewrites and reclaim",
	  pages_pread_hit_race },
	{ "pages_getput_race",
	  "read-only page handles held across reclaim and file close",
	  pages_getput_race },
	{ "pages_umount_hold_close",
	  "uf_dev_close dropping an s_umount hold another thread took",
	  pages_umount_hold_close },
	{ NULL, NULL, NULL },
};
