// SPDX-License-Identifier: MIT
/*
 * tests/test_batch.c - the batched paths of issue 20 (a new page added
 * dirty in one step, write_cache_pages' tag moves per request,
 * end_pages_writeback, reclaim's frees in one go) decide as the per-page
 * ones do.  One
 * workload, run twice on the virtual clock, once with the batches and once
 * with cache->page_batch_off (the per-page paths): three writer threads
 * taking turns (whole pages, rewrites, a partial page), fsyncs, the
 * background works the throttle queues run by the test (no flusher), and
 * reclaim pressure (a memory domain of 512 frames, reclaimed by the
 * writers themselves: no kswapd).  Every throttle call is logged
 * (cache->bdp_probe) with its arguments, the counters it reads, the
 * writer's ratelimit state and what it returned; the vm and bdi
 * counters and each file's cached pages with their frames and LRU and
 * state bits after every step; and the trace.  The two logs must be equal
 * line for line, for the linux-3.2 and mainline presets.
 *
 * The one filter on the trace: each line's prefix of pid, CPU and real
 * time (the threads differ from run to run), and page=<address> (the two
 * runs' caches have different frame arrays; the pfn stays).  Everything
 * else in a line must match.
 *
 * Each step ends with the I/O it started completed (fsync, or
 * filemap_fdatawait on every file), so nothing depends on when the
 * completion thread ran.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs.h"
#include "fs/writeback.h"
#include "io/testdev.h"
#include "kernel/jiffies.h"
#include "kernel/sched.h"
#include "mm/backing-dev.h"
#include "mm/dirty-throttle.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "policies/policy.h"
#include "uflush-internal.h"
#include "uflush.h"

#define BT_WRITERS	3
#define BT_FILES	3
#define BT_FILE_PAGES	256ul
#define BT_PG		4096ul
#define BT_START	100000ul

/* What one run saw, as text. */
struct bt_log {
	char *buf;
	size_t len, size;
};

static struct bt_log *bt_cur;
static pthread_mutex_t bt_log_lock = PTHREAD_MUTEX_INITIALIZER;

static void bt_printf(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof(line));
	pthread_mutex_lock(&bt_log_lock);
	if (bt_cur->len + (size_t)n + 1 > bt_cur->size) {
		bt_cur->size = (bt_cur->size + (size_t)n + 1) * 2;
		bt_cur->buf = realloc(bt_cur->buf, bt_cur->size);
		cr_assert_not_null(bt_cur->buf);
	}
	memcpy(bt_cur->buf + bt_cur->len, line, (size_t)n + 1);
	bt_cur->len += (size_t)n;
	pthread_mutex_unlock(&bt_log_lock);
}

struct bt_run {
	struct uf_cache *cache;
	struct uf_cache *c;		/* the object */
	struct uf_dev *dev;
	struct backing_dev_info *bdi;
	struct uf_file *f[BT_FILES];
	/* the writers' baton: turn is whose step it is, -1 nobody's */
	pthread_t th[BT_WRITERS];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int turn;
	int step;
	bool stop;
	bool done;
};

static struct bt_run br;

/*
 * Which pages each file has cached, in which frames, and their LRU and
 * state bits (the reclaim's inputs beside the counters): a hash of
 * (index, frame, flags) per file and the number of pages.
 */
static void bt_pages(const char *what)
{
	const unsigned long keep = BIT(PG_referenced) | BIT(PG_uptodate) |
				   BIT(PG_dirty) | BIT(PG_lru) |
				   BIT(PG_active) | BIT(PG_writeback) |
				   BIT(PG_reclaim);
	unsigned long i, nr;
	uint64_t h;
	int f;

	for (f = 0; f < BT_FILES; f++) {
		struct address_space *m = uf_file_inode(br.f[f])->i_mapping;

		h = 1469598103934665603ull;
		nr = 0;
		for (i = 0; i < BT_FILE_PAGES; i++) {
			struct page *page = find_get_page(m, i);
			unsigned long fl;

			if (!page)
				continue;
			fl = __atomic_load_n(&page->flags, __ATOMIC_RELAXED) &
			     keep;
			/* and its frame: which one reclaim freed for it */
			fl |= (unsigned long)(page - br.c->pool.pages) << 32;
			put_page(br.c, page);
			h = (h ^ (i << 16 ^ fl)) * 1099511628211ull;
			nr++;
		}
		bt_printf("%s file %d pages %lu flags %016llx\n", what, f, nr,
			  (unsigned long long)h);
	}
}

static void bt_counts(const char *what)
{
	struct uf_cache *c = br.c;
	char line[480];
	size_t n = 0;
	int i;

	for (i = 0; i < NR_VM_STAT_ITEMS; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %ld",
				      __atomic_load_n(&c->vm_stat[i],
						      __ATOMIC_RELAXED));
	n += (size_t)snprintf(line + n, sizeof(line) - n, " |");
	for (i = 0; i < NR_BDI_STAT_ITEMS; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %ld",
				      __atomic_load_n(&br.bdi->bdi_stat[i],
						      __ATOMIC_RELAXED));
	bt_printf("%s @%lu vm/bdi%s\n", what, jiffies, line);
	bt_pages(what);
}

/* Each throttle call, logged: its inputs before, its answer after. */
static void bt_bdp(struct address_space *mapping, unsigned long nr_new,
		   unsigned int flags, const int *ret, long pause)
{
	struct task_struct *t = current;
	struct uf_cache *c = br.c;

	if (ret) {
		bt_printf("bdp -> %d pause %ld task %d/%d/%d\n", *ret, pause,
			  t->nr_dirtied, t->nr_dirtied_pause,
			  t->bdp_ratelimits);
		return;
	}
	bt_printf("bdp %s ino %lu nr_new %lu flags %x @%lu dirty %lu wb %lu "
		  "reclaimable %lu bdi_wb %lu task %d/%d/%d\n", t->comm,
		  mapping->host ? mapping->host->i_ino : 0, nr_new, flags,
		  jiffies, global_page_state(c, NR_FILE_DIRTY),
		  global_page_state(c, NR_WRITEBACK),
		  bdi_stat(br.bdi, BDI_RECLAIMABLE),
		  bdi_stat(br.bdi, BDI_WRITEBACK), t->nr_dirtied,
		  t->nr_dirtied_pause, t->bdp_ratelimits);
}

/* Writer @w's step @s: a run of whole pages, a rewrite, a partial page. */
static void bt_write_step(int w, int s)
{
	static char buf[40 * BT_PG];
	struct uf_file *f = br.f[(w + s) % BT_FILES];
	unsigned long first = ((unsigned long)s * 37 + (unsigned long)w * 11) %
			      (BT_FILE_PAGES - 40);
	size_t len = (size_t)(9 + (s * 7 + w * 5) % 30) * BT_PG;
	ssize_t n;

	memset(buf, 'a' + (s + w) % 26, sizeof(buf));
	n = uf_pwrite(f, buf, len, (off_t)(first * BT_PG));
	cr_assert_eq(n, (ssize_t)len, "writer %d step %d: %zd", w, s, n);
	/* a rewrite of part of it, a page dirty already */
	n = uf_pwrite(f, buf, 3 * BT_PG, (off_t)((first + 2) * BT_PG));
	cr_assert_eq(n, (ssize_t)(3 * BT_PG));
	/* an unaligned write: two partial pages, read first if not cached */
	n = uf_pwrite(f, buf, 5000, (off_t)((first + 30) * BT_PG + 100));
	cr_assert_eq(n, 5000);
}

static void *bt_writer(void *arg)
{
	int w = (int)(long)arg;

	snprintf(current->comm, sizeof(current->comm), "bt-writer-%d", w);
	pthread_mutex_lock(&br.lock);
	for (;;) {
		while (br.turn != w && !br.stop)
			pthread_cond_wait(&br.cond, &br.lock);
		if (br.stop)
			break;
		pthread_mutex_unlock(&br.lock);
		bt_write_step(w, br.step);
		pthread_mutex_lock(&br.lock);
		br.turn = -1;
		br.done = true;
		pthread_cond_broadcast(&br.cond);
	}
	pthread_mutex_unlock(&br.lock);
	return NULL;
}

/* Hand the baton to writer @w for step @s and wait for it to finish. */
static void bt_turn(int w, int s)
{
	pthread_mutex_lock(&br.lock);
	br.step = s;
	br.done = false;
	br.turn = w;
	pthread_cond_broadcast(&br.cond);
	while (!br.done)
		pthread_cond_wait(&br.cond, &br.lock);
	pthread_mutex_unlock(&br.lock);
}

/*
 * Completions are held back while writeback runs (the shaping wrapper's
 * stall), and delivered, all of them, before the next step: so what the
 * work and the throttle read never depends on when the completion thread
 * ran.  The writers run with no write in flight (their partial pages'
 * reads must complete).
 */
static void bt_hold(void)
{
	cr_assert_eq(uf_dev_stall(br.dev, 600000), 0);
}

static void bt_release(void)
{
	int i;

	cr_assert_eq(uf_dev_stall(br.dev, 0), 0);
	for (i = 0; i < BT_FILES; i++)
		filemap_fdatawait(uf_file_inode(br.f[i])->i_mapping);
}

/* Read @path into @log, each line without its run-specific parts. */
static void bt_read_trace(const char *path)
{
	char line[1024], *p, *q;
	FILE *fp = fopen(path, "re");

	cr_assert_not_null(fp, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), fp)) {
		/* "%16s-%-5d [%03d] %5ld.%06ld: event: fields": keep the
		 * comm and from the event on */
		char *bracket = strstr(line, " [");
		char *colon = bracket ? strstr(bracket, ": ") : NULL;
		char *dash = bracket;

		cr_assert_not_null(colon, "trace line \"%s\"", line);
		while (dash > line && dash[-1] != '-')
			dash--;
		cr_assert(dash > line, "trace line \"%s\"", line);
		dash[-1] = '\0';
		for (p = line; *p == ' '; p++)
			;
		/* page=<hex>: this run's frame array */
		for (q = colon; (q = strstr(q, "page=")) != NULL; ) {
			char *e = q + 5;

			while (isxdigit((unsigned char)*e) || *e == 'x')
				e++;
			memmove(q + 6, e, strlen(e) + 1);
			q[5] = 'P';
			q += 6;
		}
		bt_printf("trace %s%s", p, colon);
	}
	fclose(fp);
}

static void bt_run(const char *spec, bool batch_off, struct uf_testdev *td,
		   struct bt_log *log)
{
	struct uf_dev_config dcfg = {
		.flags = UF_DEV_NO_FLUSHER | UF_DEV_SHAPED,
	};
	struct uf_cache_config cfg;
	char trace[64];
	int fd, i, s, ret;

	memset(&br, 0, sizeof(br));
	bt_cur = log;
	snprintf(trace, sizeof(trace), "/tmp/uflush-batch-trace.XXXXXX");
	fd = mkstemp(trace);
	cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
	close(fd);

	uf_clock_set_virtual(BT_START);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = 4096;
	cfg.mem_limit_pages = 512;
	cfg.policy = spec;
	cfg.dirty_bytes = 4ul << 20;		/* 1024 pages */
	cfg.dirty_background_bytes = 256ul << 10;	/* 64 pages */
	cfg.trace_path = trace;
	/* the writers of the run before exited with pages dirtied: their
	 * dirty_throttle_leaks (process-wide) must not reach this run */
	dirty_throttle_leaks_take_all();
	ret = uf_cache_open(&cfg, &br.cache);
	cr_assert_eq(ret, 0, "uf_cache_open(%s): %s", spec, strerror(-ret));
	br.c = uf_cache_obj(br.cache);
	br.c->page_batch_off = batch_off;
	br.c->bdp_probe = bt_bdp;
	ret = uf_dev_open(br.cache, td->path, &dcfg, &br.dev);
	cr_assert_eq(ret, 0, "uf_dev_open: %s", strerror(-ret));
	br.bdi = uf_dev_bdi(br.dev);
	for (i = 0; i < BT_FILES; i++) {
		ret = uf_file_open(br.dev, (uint64_t)i + 1,
				   (uint64_t)i * BT_FILE_PAGES * BT_PG,
				   BT_FILE_PAGES * BT_PG, NULL, NULL, &br.f[i]);
		cr_assert_eq(ret, 0, "uf_file_open: %s", strerror(-ret));
	}

	pthread_mutex_init(&br.lock, NULL);
	pthread_cond_init(&br.cond, NULL);
	br.turn = -1;
	for (i = 0; i < BT_WRITERS; i++)
		cr_assert_eq(pthread_create(&br.th[i], NULL, bt_writer,
					    (void *)(long)i), 0);

	for (s = 0; s < 12; s++) {
		char what[32];

		for (i = 0; i < BT_WRITERS; i++) {
			/* no write is in flight: reads (partial pages) are
			 * not held back */
			bt_turn(i, s);
			snprintf(what, sizeof(what), "step %d writer %d", s, i);
			bt_counts(what);
		}
		/* the background works the throttle queued */
		bt_hold();
		wb_do_writeback(&br.bdi->wb, 0);
		bt_release();
		bt_counts("flush");
		if (s % 3 == 2) {
			struct inode *inode = uf_file_inode(br.f[s % BT_FILES]);

			/* fsync's writing half held, then the rest */
			bt_hold();
			cr_assert_eq(filemap_fdatawrite(inode->i_mapping), 0);
			bt_release();
			cr_assert_eq(uf_fsync(br.f[s % BT_FILES]), 0);
			bt_counts("fsync");
		}
		uf_clock_advance(37);
	}

	pthread_mutex_lock(&br.lock);
	br.stop = true;
	pthread_cond_broadcast(&br.cond);
	pthread_mutex_unlock(&br.lock);
	for (i = 0; i < BT_WRITERS; i++)
		pthread_join(br.th[i], NULL);
	for (i = 0; i < BT_FILES; i++)
		cr_assert_eq(uf_fsync(br.f[i]), 0);
	bt_counts("end");
	for (i = 0; i < BT_FILES; i++)
		cr_assert_eq(uf_file_close(br.f[i]), 0);
	cr_assert_eq(uf_dev_close(br.dev), 0);
	cr_assert_eq(uf_cache_close(br.cache), 0);
	uf_clock_set_real();
	bt_read_trace(trace);
	unlink(trace);
	pthread_mutex_destroy(&br.lock);
	pthread_cond_destroy(&br.cond);
}

/* The first line where @a and @b differ, for the failure message. */
static void bt_compare(const char *spec, const struct bt_log *a,
		       const struct bt_log *b)
{
	size_t i = 0, line = 1, start = 0;

	while (i < a->len && i < b->len && a->buf[i] == b->buf[i]) {
		if (a->buf[i] == '\n') {
			line++;
			start = i + 1;
		}
		i++;
	}
	if (i == a->len && i == b->len)
		return;
	cr_assert_fail("%s: batched and per-page runs differ at line %zu:\n"
		       "  batched:  %.*s\n  per-page: %.*s", spec, line,
		       (int)strcspn(a->buf + start, "\n"), a->buf + start,
		       (int)strcspn(b->buf + start, "\n"), b->buf + start);
}

static void bt_case(const char *spec)
{
	struct bt_log batched = { 0 }, per_page = { 0 };
	struct uf_testdev td;
	int ret;

	ret = uf_testdev_create(BT_FILES * BT_FILE_PAGES * BT_PG,
				UF_TESTDEV_FILE_ONLY, &td);
	if (ret) {
		uf_testdev_destroy(&td);
		cr_skip_test("no scratch device: %s", strerror(-ret));
	}
	bt_run(spec, false, &td, &batched);
	bt_run(spec, true, &td, &per_page);
	uf_testdev_destroy(&td);
	/* the scenario must have reached what it is about */
	cr_assert(strstr(batched.buf, "bdp ") != NULL);
	cr_assert(strstr(batched.buf, "mm_vmscan_direct_reclaim_begin") !=
		  NULL, "%s: no reclaim in the scenario", spec);
	cr_assert(strstr(batched.buf, "writeback_start") != NULL ||
		  strstr(batched.buf, "writeback_exec") != NULL,
		  "%s: no background writeback in the scenario", spec);
	bt_compare(spec, &batched, &per_page);
	free(batched.buf);
	free(per_page.buf);
}

Test(batch, per_page_and_batched_decide_alike_linux_32, .timeout = 120)
{
	bt_case("linux-3.2");
}

Test(batch, per_page_and_batched_decide_alike_mainline, .timeout = 120)
{
	bt_case("mainline");
}
