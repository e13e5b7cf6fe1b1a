// SPDX-License-Identifier: MIT
/*
 * tests/fixture.c - the writeback fixture of the unit tests (fixture.h).
 * Criterion runs each test in its own process: one fixture per process.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "lib/proportions.h"
#include "kernel/bug.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "testutil.h"

struct fx fx;
struct runner rn;

bool fx_closing(void)
{
	return __atomic_load_n(&fx.closing, __ATOMIC_ACQUIRE);
}

static int tf_write_inode(struct uf_file *f, void *priv, int sync)
{
	struct tf *t = priv;
	tf_write_inode_fn fn;

	(void)f;
	__atomic_add_fetch(&t->nr_write_inode, 1, __ATOMIC_SEQ_CST);
	fn = __atomic_load_n(&t->on_write_inode, __ATOMIC_ACQUIRE);
	if (fx_closing() || !fn)
		return 0;
	return fn(t, sync);
}

static int tf_writepages_veto(struct uf_file *f, void *priv,
			      enum uf_wb_kind kind)
{
	struct tf *t = priv;

	(void)f;
	if (fx_closing())
		return 0;
	if (__atomic_load_n(&t->veto, __ATOMIC_SEQ_CST) & (1u << kind)) {
		__atomic_add_fetch(&t->nr_vetoed, 1, __ATOMIC_SEQ_CST);
		return 1;
	}
	__atomic_add_fetch(&t->nr_writepages, 1, __ATOMIC_SEQ_CST);
	if (t->on_writepages)
		t->on_writepages(t, kind);
	return 0;
}

static const struct uf_file_ops tf_ops = {
	.write_inode = tf_write_inode,
	.writepages_veto = tf_writepages_veto,
};

/* ------------------------------------------------------------------ */
/* Setup and teardown                                                  */

static void fx_open_trace(struct uf_cache_config *cfg)
{
	int fd;

	snprintf(fx.trace, sizeof(fx.trace), "/tmp/uflush-fx-trace.XXXXXX");
	fd = mkstemp(fx.trace);
	cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
	close(fd);
	cfg->trace_path = fx.trace;
}

/*
 * A plain file unless @loop: most tests need no loop device, and leave
 * the host's loop devices to the tests that do.
 */
static void fx_open_dev(bool loop)
{
	unsigned int flags = loop ? UF_TESTDEV_NO_FALLBACK :
				    UF_TESTDEV_FILE_ONLY;
	char why[sizeof(fx.td.why_not_loop)];
	int ret;

	ret = uf_testdev_create(FX_DEV_SIZE, flags, &fx.td);
	if (ret) {
		snprintf(why, sizeof(why), "%s", fx.td.why_not_loop);
		uf_testdev_destroy(&fx.td);
		cr_skip_test("no scratch %s: %s (%s)",
			     loop ? "loop device with direct I/O" : "device",
			     strerror(-ret), why);
	}
	fx.have_td = true;
	cr_assert_eq(fx.td.is_loop, loop);
}

void fx_setup(const struct fx_opts *o)
{
	struct uf_cache_config cfg;
	struct uf_dev_config dcfg = {
		.flags = o->flusher ? 0 : UF_DEV_NO_FLUSHER,
	};
	int ret;

	memset(&fx, 0, sizeof(fx));
	memset(&rn, 0, sizeof(rn));
	fx_open_dev(o->loop);
	fx.spec = o->policy;
	fx.flusher = o->flusher;
	if (o->shaped)
		dcfg.flags |= UF_DEV_SHAPED;

	if (!o->real_clock)
		uf_clock_set_virtual(o->start);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = o->nr_pages ? o->nr_pages : FX_POOL_PAGES;
	cfg.policy = o->policy;
	cfg.dirty_bytes = FX_DIRTY_BYTES;
	if (o->max_io_pages)
		cfg.max_io_pages = o->max_io_pages;
	if (o->hz)
		cfg.hz = o->hz;
	if (o->set_dwi)
		cfg.dirty_writeback_centisecs = o->dwi;
	if (o->expire_cs)
		cfg.dirty_expire_centisecs = o->expire_cs;
	if (o->trace)
		fx_open_trace(&cfg);
	ret = uf_cache_open(&cfg, &fx.cache);
	cr_assert_eq(ret, 0, "uf_cache_open(%s): %s", o->policy,
		     strerror(-ret));
	fx.pol = uf_cache_obj(fx.cache)->policy;
	ret = uf_dev_open(fx.cache, fx.td.path, &dcfg, &fx.dev);
	cr_assert_eq(ret, 0, "uf_dev_open(%s): %s", fx.td.path,
		     strerror(-ret));
	fx.bdi = uf_dev_bdi(fx.dev);
	cr_assert_not_null(fx.bdi);
	fx.wb = &fx.bdi->wb;
	if (o->flusher)
		cr_assert_not_null(fx.wb->task);
	else
		cr_assert_null(fx.wb->task,
			       "UF_DEV_NO_FLUSHER device has a flusher");
	if (o->max_io_pages)
		cr_assert_eq(fx.bdi->max_io_pages, o->max_io_pages);
	if (!o->real_clock)
		cr_assert_eq(jiffies, o->start);
}

/* After a failed test: hooks relent; let the runner finish. */
static void runner_reap(void)
{
	struct timespec t0;

	if (!rn.live)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!rn_done() && real_secs_since(&t0) < 2 * REAL_WAIT_S)
		if (wait_asleep(rn.task, &rn.done) == 1)
			clock_step(jiffies + 10UL * (unsigned long)HZ);
	runner_join();
}

/*
 * A device without a flusher needs none here: closing it queues sync
 * works, which queue_and_wait() runs in the caller for a threadless bdi.
 */
int fx_teardown(void (*stop)(void))
{
	unsigned long ino;
	int ret = 0;

	__atomic_store_n(&fx.closing, true, __ATOMIC_RELEASE);
	for (ino = 1; ino <= FX_MAX_FILES; ino++)
		if (fx.tf[ino].held)
			tf_release_page(&fx.tf[ino]);
	if (fx.umount_held)
		uf_dev_release_umount(fx.dev);
	fx.umount_held = false;
	runner_reap();
	if (stop)
		stop();
	/* whatever still sleeps on a timeout ends in real time */
	uf_clock_set_real();
	if (fx.cache)
		ret = uf_cache_close(fx.cache);
	fx.cache = NULL;
	if (fx.have_td)
		uf_testdev_destroy(&fx.td);
	fx.have_td = false;
	if (fx.trace[0])
		unlink(fx.trace);
	fx.trace[0] = '\0';
	return ret;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

struct tf *tf_open(unsigned long ino, unsigned long pages)
{
	cr_assert(ino >= 1 && ino <= FX_MAX_FILES);
	return tf_open_ops(ino, pages, &tf_ops, &fx.tf[ino]);
}

struct tf *tf_open_ops(unsigned long ino, unsigned long pages,
		       const struct uf_file_ops *ops, void *priv)
{
	struct tf *t = &fx.tf[ino];
	int ret;

	cr_assert(ino >= 1 && ino <= FX_MAX_FILES);
	cr_assert(pages * PG <= FX_SLOT);
	memset(t, 0, sizeof(*t));
	t->ino = ino;
	t->off = ino * FX_SLOT;
	ret = uf_file_open(fx.dev, ino, t->off, pages * PG, ops, priv,
			   &t->f);
	cr_assert_eq(ret, 0, "uf_file_open(ino %lu): %s", ino, strerror(-ret));
	t->inode = uf_file_inode(t->f);
	cr_assert_not_null(t->inode);
	return t;
}

int tf_write(struct tf *t, unsigned long first, unsigned long nr,
	     uint32_t seed)
{
	size_t len = nr * PG;
	uint64_t off = first * PG;
	void *buf = malloc(len);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	tu_fill(buf, len, t->off + off, seed);
	n = uf_pwrite(t->f, buf, len, off);
	free(buf);
	return n == (ssize_t)len ? 0 : (n < 0 ? (int)n : -EIO);
}

void tf_dirty(struct tf *t, unsigned long first, unsigned long nr,
	      uint32_t seed)
{
	int ret = tf_write(t, first, nr, seed);

	cr_assert_eq(ret, 0, "uf_pwrite(ino %lu): %s", t->ino, strerror(-ret));
}

struct tf *tf_open_dirty(unsigned long ino, unsigned long pages,
			 unsigned long nr_dirty)
{
	struct tf *t = tf_open(ino, pages);

	tf_dirty(t, 0, nr_dirty, 1);
	return t;
}

void mark_sync(struct tf *t)
{
	cr_assert_eq(uf_file_mark_inode_dirty(t->f, UF_I_DIRTY_SYNC), 0);
}

void set_veto(struct tf *t, unsigned int kinds)
{
	__atomic_store_n(&t->veto, kinds, __ATOMIC_SEQ_CST);
}

void tf_hold_page(struct tf *t, unsigned long index)
{
	int ret;

	cr_assert_null(t->held, "ino %lu already holds a page", t->ino);
	ret = uf_page_get(t->f, index, UF_PAGE_WRITE, &t->held);
	cr_assert_eq(ret, 0, "uf_page_get(ino %lu, %lu): %s", t->ino, index,
		     strerror(-ret));
}

void tf_release_page(struct tf *t)
{
	struct uf_page *p = t->held;

	t->held = NULL;
	cr_assert_eq(uf_page_put(p), 0);
}

unsigned long istate(struct tf *t)
{
	return __atomic_load_n(&t->inode->i_state, __ATOMIC_SEQ_CST);
}

unsigned long dirtied_when(struct tf *t)
{
	unsigned long ret;

	spin_lock(&fx.wb->list_lock);
	ret = t->inode->dirtied_when;
	spin_unlock(&fx.wb->list_lock);
	return ret;
}

void tf_expect_on_dev(struct tf *t, unsigned long first, unsigned long nr,
		      uint32_t seed, const char *what)
{
	filemap_fdatawait(t->inode->i_mapping);
	tu_raw_expect(fx.td.path, t->off + first * PG, nr * PG, seed, what);
}

void expect_zero_on_dev(uint64_t off, size_t len, const char *what)
{
	uint8_t *buf = tu_alloc(len);
	size_t i;
	int ret;

	ret = tu_raw_read(fx.td.path, off, buf, len);
	for (i = 0; !ret && i < len && !buf[i]; i++)
		;
	free(buf);
	cr_assert_eq(ret, 0, "%s: raw read: %s", what, strerror(-ret));
	cr_assert_eq(i, len, "%s: device byte %llu is written", what,
		     (unsigned long long)(off + i));
}

void tf_expect_unwritten(struct tf *t, unsigned long first,
			 unsigned long nr, const char *what)
{
	filemap_fdatawait(t->inode->i_mapping);
	expect_zero_on_dev(t->off + first * PG, nr * PG, what);
}

/* ------------------------------------------------------------------ */
/* Lists                                                               */

char *__list_str(struct list_head *head, char *buf, size_t len)
{
	struct list_head *pos;
	size_t n = 0;

	buf[0] = '\0';
	for (pos = head->prev; pos != head; pos = pos->prev) {
		struct inode *inode = list_entry(pos, struct inode, i_wb_list);

		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%lu",
				      n ? "," : "", inode->i_ino);
	}
	return buf;
}

char *list_str(struct list_head *head, char *buf, size_t len)
{
	spin_lock(&fx.wb->list_lock);
	__list_str(head, buf, len);
	spin_unlock(&fx.wb->list_lock);
	return buf;
}

static bool on_list(struct list_head *head, struct inode *inode)
{
	struct list_head *pos;

	list_for_each(pos, head)
		if (pos == &inode->i_wb_list)
			return true;
	return false;
}

const char *which_list(struct tf *t)
{
	struct bdi_writeback *wb = fx.wb;
	const char *name = "none";

	spin_lock(&wb->list_lock);
	if (on_list(&wb->b_dirty, t->inode))
		name = "b_dirty";
	else if (on_list(&wb->b_io, t->inode))
		name = "b_io";
	else if (on_list(&wb->b_more_io, t->inode))
		name = "b_more_io";
	else if (on_list(&wb->b_more_io_wait, t->inode))
		name = "b_more_io_wait";
	else if (!list_empty(&t->inode->i_wb_list))
		name = "a foreign list";
	spin_unlock(&wb->list_lock);
	return name;
}

bool tf_on(struct tf *t, const char *list)
{
	return !strcmp(which_list(t), list);
}

void expect_b_dirty_ordered(void)
{
	struct list_head *head = &fx.wb->b_dirty, *pos;
	unsigned long prev = 0;
	bool first = true, ok = true;
	char buf[128];

	spin_lock(&fx.wb->list_lock);
	for (pos = head->prev; pos != head; pos = pos->prev) {
		struct inode *inode = list_entry(pos, struct inode, i_wb_list);

		if (!first && time_before(inode->dirtied_when, prev))
			ok = false;
		prev = inode->dirtied_when;
		first = false;
	}
	__list_str(head, buf, sizeof(buf));
	spin_unlock(&fx.wb->list_lock);
	cr_assert(ok, "b_dirty (tail first: %s) is not time-ordered", buf);
}

/* ------------------------------------------------------------------ */
/* Works, clock, tunables, trace                                       */

/*
 * Each kind as the kernel builds it (fs-writeback.c of 3.2): WB_SYNC_NONE
 * unless said; nr_pages 0 means get_nr_dirty_pages().
 */
static const struct wb_writeback_work work_kinds[] = {
	/* wb_check_old_data_flush */
	[W_KUPDATE] = { .for_kupdate = 1, .range_cyclic = 1,
			.reason = WB_REASON_PERIODIC },
	/* wb_check_background_flush */
	[W_BACKGROUND] = { .nr_pages = LONG_MAX, .for_background = 1,
			   .range_cyclic = 1, .reason = WB_REASON_BACKGROUND },
	/* wakeup_flusher_threads */
	[W_NONE] = { .nr_pages = LONG_MAX,
		     .reason = WB_REASON_TRY_TO_FREE_PAGES },
	/* sync_inodes_sb */
	[W_SYNC] = { .nr_pages = LONG_MAX, .sync_mode = WB_SYNC_ALL,
		     .reason = WB_REASON_SYNC },
	/* writeback_inodes_sb_nr */
	[W_TAGGED] = { .tagged_writepages = 1, .reason = WB_REASON_SYNC },
};

struct wb_writeback_work mkwork(enum wkind k)
{
	struct wb_writeback_work w = work_kinds[k];

	INIT_LIST_HEAD(&w.list);
	if (!w.nr_pages)
		w.nr_pages = get_nr_dirty_pages(uf_cache_obj(fx.cache));
	if (k == W_SYNC || k == W_TAGGED)
		w.sb = fx.bdi->sb;
	return w;
}

long run(struct wb_writeback_work *w)
{
	return wb_writeback(fx.wb, w);
}

long run_kind(enum wkind k)
{
	struct wb_writeback_work w = mkwork(k);

	return run(&w);
}

bool work_queued(void)
{
	bool ret;

	spin_lock(&fx.bdi->wb_lock);
	ret = !list_empty(&fx.bdi->work_list);
	spin_unlock(&fx.bdi->wb_lock);
	return ret;
}

unsigned long expire_jiffies(void)
{
	return msecs_to_jiffies(uf_cache_obj(fx.cache)->vm.dirty_expire_interval * 10);
}

unsigned long max_pause(void)
{
	unsigned int dwi = uf_cache_obj(fx.cache)->vm.dirty_writeback_interval;

	return dwi ? msecs_to_jiffies(dwi * 10) : (unsigned long)HZ;
}

void advance(unsigned long d)
{
	cr_assert_eq(uf_clock_advance(d), 0);
}

void advance_to(unsigned long t)
{
	cr_assert(!time_before(t, jiffies), "advance_to(%lu) at %lu", t,
		  jiffies);
	advance(t - jiffies);
}

void set_tunable(const char *name, unsigned long v)
{
	cr_assert_eq(uf_cache_set_tunable(fx.cache, name, v), 0, "%s", name);
}

void set_bg_thresh_pages(unsigned long pages)
{
	set_tunable("dirty_background_bytes", pages * PG);
}

int trace_count(const char *event, const char *needle)
{
	char line[1024], pat[64];
	FILE *f = fopen(fx.trace, "re");
	int n = 0;

	if (!f)
		return -1;
	snprintf(pat, sizeof(pat), ": %s: ", event);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, pat) && (!needle || strstr(line, needle)))
			n++;
	fclose(f);
	return n;
}

void hold_umount(void)
{
	cr_assert_eq(uf_dev_hold_umount(fx.dev), 0);
	fx.umount_held = true;
}

void release_umount(void)
{
	cr_assert_eq(uf_dev_release_umount(fx.dev), 0);
	fx.umount_held = false;
}

/* ------------------------------------------------------------------ */
/* The runner                                                          */

long real_secs_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)(t.tv_sec - t0->tv_sec);
}

static void *runner_fn(void *arg)
{
	struct task_struct *me = current;
	long ret = 0;

	(void)arg;
	get_task_struct(me);
	__atomic_store_n(&rn.task, me, __ATOMIC_RELEASE);
	if (rn.what == RUN_WORK) {
		ret = wb_writeback(fx.wb, &rn.work);
	} else {
		do {
			ret += wb_do_writeback(fx.wb, 0);
		} while (work_queued());
	}
	rn.ret = ret;
	rn.done_at = jiffies;
	__atomic_store_n(&rn.done, true, __ATOMIC_RELEASE);
	return NULL;
}

bool rn_done(void)
{
	return __atomic_load_n(&rn.done, __ATOMIC_ACQUIRE);
}

void runner_start(enum run_what what, const struct wb_writeback_work *w)
{
	struct timespec t0;

	memset(&rn, 0, sizeof(rn));
	rn.what = what;
	if (w)
		rn.work = *w;
	INIT_LIST_HEAD(&rn.work.list);
	cr_assert_eq(pthread_create(&rn.th, NULL, runner_fn, NULL), 0);
	rn.live = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(&rn.task, __ATOMIC_ACQUIRE)) {
		cr_assert_lt(real_secs_since(&t0), REAL_WAIT_S,
			     "the runner thread did not start");
		sched_yield();
	}
}

void runner_join(void)
{
	if (!rn.live)
		return;
	pthread_join(rn.th, NULL);
	put_task_struct(rn.task);
	rn.live = false;
}

int wait_asleep(struct task_struct *p, bool *done)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (done && __atomic_load_n(done, __ATOMIC_ACQUIRE))
			return 0;
		if (!uf_wait_task_sleeping(p, 10))
			return 1;
		if (real_secs_since(&t0) >= REAL_WAIT_S)
			return -1;
	}
}

void clock_step(unsigned long limit)
{
	unsigned long t;

	if (uf_clock_next_expiry(&t) || time_after(t, limit))
		t = limit;
	uf_clock_advance(time_after(t, jiffies) ? t - jiffies : 0);
}

bool rn_drive(unsigned long limit)
{
	for (;;) {
		int r = wait_asleep(rn.task, &rn.done);

		cr_assert_geq(r, 0,
			      "the work neither slept nor ended within %d s of real time",
			      REAL_WAIT_S);
		if (!r)
			return true;
		if (!time_before(jiffies, limit))
			return false;
		clock_step(limit);
	}
}

/* ------------------------------------------------------------------ */
/* Scenarios shared by the base and the seed-000 tests                 */

int hook_continuous_redirty(struct tf *t, int sync)
{
	(void)sync;
	if (__atomic_load_n(&t->nr_write_inode, __ATOMIC_SEQ_CST) > 50)
		return 0;	/* a livelock: end it, the test will fail */
	uf_clock_advance(1);
	tf_write(t, 0, 1, 99);
	uf_file_mark_inode_dirty(t->f, UF_I_DIRTY_SYNC);
	return 0;
}

struct tf *r_then_s(const char *spec, unsigned long start,
		    unsigned long r_pages, unsigned long r_dirty,
		    unsigned long s_dirty)
{
	struct tf *r, *s;

	FX_SETUP(.start = start, .policy = spec);
	r = tf_open(1, r_pages);
	s = tf_open(2, 4);
	tf_dirty(r, 0, r_dirty, 1);
	mark_sync(r);
	advance(1);
	tf_dirty(s, 0, s_dirty, 2);
	advance(5);
	return r;
}

struct tf *redirtier_setup(const char *spec, unsigned long start)
{
	struct tf *r = r_then_s(spec, start, 8, 8, 4);

	r->on_write_inode = hook_continuous_redirty;
	return r;
}

long sync_livelock_case(const char *spec, unsigned long start,
			enum wkind k)
{
	struct tf *r = redirtier_setup(spec, start), *s = &fx.tf[2];
	struct wb_writeback_work w = mkwork(k);
	long ret = run(&w);

	cr_assert_eq(r->nr_write_inode, 1,
		     "%s: the %s work wrote the redirtied inode %d times (I14: once)",
		     spec, k == W_SYNC ? "WB_SYNC_ALL" : "tagged",
		     r->nr_write_inode);
	expect_on(r, "b_dirty");
	cr_assert_eq(dirtied_when(r), jiffies,
		     "%s: R's dirtied_when %lu, want now %lu", spec,
		     dirtied_when(r), jiffies);
	cr_assert_eq(istate(r) & (I_DIRTY | I_SYNC),
		     I_DIRTY_PAGES | I_DIRTY_SYNC);
	expect_on(s, "none");
	/* the work wrote all of R as it was; the redirtied page is cached */
	tf_expect_on_dev(r, 0, 8, 1, "R");
	tf_expect_on_dev(s, 0, 4, 2, "S");
	return ret;
}

/* ------------------------------------------------------------------ */
/* A hand-built cache                                                  */

struct hand *hand_new(unsigned long nr_pages, unsigned long nr_file)
{
	struct hand *h = calloc(1, sizeof(*h));
	struct address_space *m;

	cr_assert(h);
	spin_lock_init(&h->c.bdi_lock);
	INIT_LIST_HEAD(&h->c.bdi_list);
	cr_assert_eq(page_pool_init(&h->c.pool, nr_pages), 0);
	h->sb.s_cache = &h->c;
	h->sb.s_bdi = &h->bdi;
	h->bdi.cache = &h->c;
	h->inode.i_sb = &h->sb;
	h->inode.i_mapping = &h->inode.i_data;
	h->inode.i_size = (loff_t)(nr_file * PAGE_SIZE);
	spin_lock_init(&h->inode.i_lock);
	INIT_LIST_HEAD(&h->inode.i_wb_list);
	m = &h->inode.i_data;
	m->host = &h->inode;
	INIT_RADIX_TREE(&m->page_tree);
	spin_lock_init(&m->tree_lock);
	m->backing_dev_info = &h->bdi;
	return h;
}

unsigned long nr_free(struct hand *h)
{
	return global_page_state(&h->c, NR_FREE_PAGES);
}

struct address_space *hmap(struct hand *h)
{
	return &h->inode.i_data;
}

/* Drop every page of the file, then demand the pool be whole again. */
void hand_free(struct hand *h)
{
	truncate_inode_pages(hmap(h), 0);
	cr_assert_eq(hmap(h)->nrpages, 0);
	cr_assert_eq(nr_free(h), h->c.pool.nr, "frames leaked: %lu of %lu free",
		     nr_free(h), h->c.pool.nr);
	cr_assert_eq(global_page_state(&h->c, NR_FILE_PAGES), 0);
	page_pool_exit(&h->c.pool);
	radix_tree_destroy(&hmap(h)->page_tree);
	free(h);
	cr_assert_eq(uf_bug_count(), 0, "a WARN/BUG fired");
}

/* A cached page at @index, unlocked, held only by the page cache. */
struct page *cache_page(struct hand *h, unsigned long index)
{
	struct page *page = page_pool_alloc(&h->c);

	cr_assert(page, "no free frame for index %lu", index);
	cr_assert_eq(add_to_page_cache_lru(page, hmap(h), index), 0);
	SetPageUptodate(page);
	unlock_page(page);
	put_page(&h->c, page);
	cr_assert_eq(page_count(page), 1);
	return page;
}

bool cached(struct hand *h, unsigned long index)
{
	struct page *page = find_get_page(hmap(h), index);

	if (page)
		put_page(&h->c, page);
	return page != NULL;
}

static void *fx_bg_fn(void *arg)
{
	struct fx_bg *bg = arg;

	__atomic_store_n(&bg->task, current, __ATOMIC_RELEASE);
	bg->fn(bg->arg);
	__atomic_store_n(&bg->done, true, __ATOMIC_RELEASE);
	return NULL;
}

void fx_bg_start(struct fx_bg *bg, void (*fn)(void *arg), void *arg)
{
	memset(bg, 0, sizeof(*bg));
	bg->fn = fn;
	bg->arg = arg;
	cr_assert_eq(pthread_create(&bg->thread, NULL, fx_bg_fn, bg), 0);
	while (!__atomic_load_n(&bg->task, __ATOMIC_ACQUIRE))
		sched_yield();
}

bool fx_bg_done(struct fx_bg *bg)
{
	return __atomic_load_n(&bg->done, __ATOMIC_ACQUIRE);
}

void fx_bg_expect_asleep(struct fx_bg *bg, const char *who, const char *what)
{
	cr_assert_eq(uf_wait_task_sleeping(bg->task, 5000), 0,
		     "%s: the %s did not go to sleep", what, who);
}

void fx_bg_join(struct fx_bg *bg, const char *who, const char *what)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	cr_assert_eq(pthread_timedjoin_np(bg->thread, NULL, &ts), 0,
		     "%s: the %s was not woken", what, who);
}

/* ------------------------------------------------------------------ */
/* A hand-made cache and two devices                                   */

struct limits_hand *limits_hand_new(unsigned long nr_pages)
{
	struct limits_hand *h = calloc(1, sizeof(*h));
	int i;

	cr_assert(h);
	h->c.vm_stat[NR_FREE_PAGES] = (long)nr_pages;
	h->c.vm.vm_dirty_ratio = 20;
	h->c.vm.dirty_background_ratio = 10;
	h->c.max_io_pages = 256;
	for (i = 0; i < 2; i++) {
		h->bdi[i].cache = &h->c;
		spin_lock_init(&h->bdi[i].wb.list_lock);
	}
	return h;
}

void limits_hand_free(struct limits_hand *h)
{
	page_writeback_exit(&h->c);
	free(h);
	cr_assert_eq(uf_bug_count(), 0, "a WARN/BUG fired");
}

void hand_queueing(struct hand *h)
{
	INIT_LIST_HEAD(&h->bdi.work_list);
	spin_lock_init(&h->bdi.wb_lock);
	spin_lock_init(&h->bdi.wb.list_lock);
	h->inode.i_count = 1;
}
