// SPDX-License-Identifier: MIT
/*
 * tests/test_folio.c - the buffered write's folio granularity under
 * bdp=mainline (issue 17, finding 3): 6.18's generic_perform_write() and
 * iomap_write_iter() write into a folio sized by the write's length and
 * alignment (fgf_set_order), dirty and charge it whole and call the
 * throttle once per folio; the 3.x presets call it per 4 KiB page.
 *
 * Every throttle call is seen through cache->bdp_probe: the writer's
 * nr_dirtied on entry, less what it was when the previous call returned,
 * is what the folio just written charged.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs.h"
#include "fs/writeback.h"
#include "kernel/jiffies.h"
#include "kernel/sched.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "uflush-internal.h"
#include "uflush.h"
#include "testutil.h"

#define FO_MAX_CALLS	8192
#define FO_MIB		(1ul << 20)

/* What the probe saw: per call, the pages charged since the last one. */
static struct {
	unsigned long charged[FO_MAX_CALLS];
	unsigned long calls;
	int exit_dirtied;	/* nr_dirtied when the last call returned */
} fo;

static void fo_probe(struct address_space *mapping, unsigned long nr_new,
		     unsigned int flags, const int *ret, long pause)
{
	(void)mapping;
	(void)nr_new;
	(void)flags;
	(void)pause;
	if (ret) {
		fo.exit_dirtied = current->nr_dirtied;
		return;
	}
	if (fo.calls < FO_MAX_CALLS)
		fo.charged[fo.calls] = (unsigned long)(current->nr_dirtied -
						       fo.exit_dirtied);
	fo.calls++;
}

static void fo_reset(void)
{
	memset(&fo, 0, sizeof(fo));
	fo.exit_dirtied = current->nr_dirtied;
}

/* ------------------------------------------------------------------ */
/* On the virtual clock, below freerun: the throttle never sleeps      */

static struct {
	struct uf_cache *c;
	struct uf_dev *d;
	struct uf_file *f;
	struct address_space *m;
} fv;

static void fv_fini(void)
{
	if (fv.f)
		uf_file_close(fv.f);
	if (fv.d)
		uf_dev_close(fv.d);
	tu_cache_drop(&fv.c);
	memset(&fv, 0, sizeof(fv));
	uf_clock_set_real();
	tu_fini();
}

/* A 64 MiB cache (its freerun ceiling is far above these writes) and an
 * 8 MiB file on a scratch device; the probe on. */
static void fv_open(const char *policy)
{
	struct uf_cache_config cfg;

	uf_clock_set_virtual(1000000);
	tu_dev(TU_FILE, TU_DEV_SIZE);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = 16384;
	cfg.policy = policy;
	cr_assert_eq(uf_cache_open(&cfg, &fv.c), 0);
	fv.d = tu_cache_dev(fv.c, tu.td.path, UF_DEV_NO_FLUSHER);
	fv.f = tu_file_open(fv.d, 1, 0, 8 * FO_MIB, NULL, NULL);
	fv.m = uf_file_inode(fv.f)->i_mapping;
	uf_cache_obj(fv.c)->bdp_probe = fo_probe;
	current->nr_dirtied = 0;
	current->bdp_ratelimits = 0;
	fo_reset();
}

static unsigned long fv_vm(enum vm_stat_item i)
{
	return global_page_state(uf_cache_obj(fv.c), i);
}

static void fv_write(uint64_t off, size_t len, int byte)
{
	char *buf = malloc(len);

	cr_assert_not_null(buf);
	memset(buf, byte, len);
	cr_assert_eq(uf_pwrite(fv.f, buf, len, off), (ssize_t)len);
	free(buf);
}

static unsigned int order_at(unsigned long index)
{
	struct page *page = find_get_page(fv.m, index);
	unsigned int o;

	cr_assert_not_null(page, "page %lu not cached", index);
	o = page->folio_order;
	put_page(uf_cache_obj(fv.c), page);
	return o;
}

/* A 64 KiB write at 0: one 16-page folio (fgf_set_order(64 KiB) = 4),
 * one throttle call charged 16. */
Test(folio, write_64k_is_a_16_page_folio, .fini = fv_fini)
{
	unsigned long i;

	fv_open("mainline");
	fv_write(0, 16 * PAGE_SIZE, 'a');
	cr_assert_eq(fo.calls, 1, "throttle calls: %lu", fo.calls);
	cr_assert_eq(fo.charged[0], 16, "charged %lu", fo.charged[0]);
	for (i = 0; i < 16; i++)
		cr_assert_eq(order_at(i), 4, "page %lu", i);
	cr_assert_eq(fv_vm(NR_FILE_DIRTY), 16);
}

/*
 * Unaligned, 64 KiB at 4 KiB: each folio is as large as the rest of the
 * write and the index's alignment allow (__filemap_get_folio lowers the
 * order to __ffs(index)): 1, 2, 4, 8 pages, then the last page.
 */
Test(folio, unaligned_write_grows_its_folios, .fini = fv_fini)
{
	static const unsigned long want[] = { 1, 2, 4, 8, 1 };
	unsigned long i;

	fv_open("mainline");
	fv_write(PAGE_SIZE, 16 * PAGE_SIZE, 'u');
	cr_assert_eq(fo.calls, 5, "throttle calls: %lu", fo.calls);
	for (i = 0; i < 5; i++)
		cr_assert_eq(fo.charged[i], want[i], "call %lu charged %lu",
			     i, fo.charged[i]);
	cr_assert_eq(order_at(1), 0);
	cr_assert_eq(order_at(2), 1);
	cr_assert_eq(order_at(4), 2);
	cr_assert_eq(order_at(8), 3);
	cr_assert_eq(order_at(16), 0);
}

/* A folio cannot cover a page already cached (filemap_add_folio's
 * -EEXIST): with page 8 cached (and dirty), a 64 KiB write at 0 gets 8
 * pages, then page 8's own 4 KiB folio (charged 0), then folios of 1, 2
 * and 4 pages at 9, 10 and 12, as their alignment allows. */
Test(folio, new_folio_stops_short_of_a_cached_page, .fini = fv_fini)
{
	static const unsigned long want[] = { 8, 0, 1, 2, 4 };
	unsigned long i;

	fv_open("mainline");
	fv_write(8 * PAGE_SIZE, PAGE_SIZE, 'p');
	fo_reset();
	fv_write(0, 16 * PAGE_SIZE, 'q');
	cr_assert_eq(fo.calls, 5, "throttle calls: %lu", fo.calls);
	for (i = 0; i < 5; i++)
		cr_assert_eq(fo.charged[i], want[i], "call %lu charged %lu",
			     i, fo.charged[i]);
	cr_assert_eq(fv_vm(NR_FILE_DIRTY), 16);
}

/* Adjacent pages of @m from @index whose frames follow in the pool. */
static unsigned long ascending_pairs(struct address_space *m,
				     unsigned long index, unsigned long nr)
{
	struct page *prev = NULL, *page;
	unsigned long i, n = 0;

	for (i = 0; i < nr; i++) {
		page = find_get_page(m, index + i);
		cr_assert_not_null(page, "page %lu not cached", index + i);
		if (prev && page == prev + 1)
			n++;
		if (prev)
			put_page(uf_cache_obj(fv.c), prev);
		prev = page;
	}
	if (prev)
		put_page(uf_cache_obj(fv.c), prev);
	return n;
}

/*
 * A new folio's frames come in ascending order, as a folio allocated in
 * one piece is contiguous: after a file's 256 pages were dropped, one by
 * one, the pool gives their frames back most recently freed first
 * (descending); a 1 MiB write under mainline still gets them ascending,
 * so bio_add_page can merge them.  Under 3.2 (4 KiB folios) they come
 * descending, as its per-page allocations take them.
 */
static void refill_after_drop(const char *policy, unsigned long *asc)
{
	struct uf_file *g;

	fv_open(policy);
	g = tu_file_open(fv.d, 2, 8 * FO_MIB, FO_MIB, NULL, NULL);
	{
		char *buf = malloc(FO_MIB);

		cr_assert_not_null(buf);
		memset(buf, 'g', FO_MIB);
		cr_assert_eq(uf_pwrite(g, buf, FO_MIB, 0), (ssize_t)FO_MIB);
		free(buf);
	}
	cr_assert_eq(uf_file_close(g), 0);
	fv_write(0, FO_MIB, 'h');
	*asc = ascending_pairs(fv.m, 0, 256);
}

Test(folio, new_folio_frames_ascend_after_a_drop, .fini = fv_fini)
{
	unsigned long asc;

	refill_after_drop("mainline", &asc);
	/* 254 here: the run of g's frames need not line up with the folio */
	cr_assert_geq(asc, 250, "ascending neighbours: %lu of 255", asc);
}

Test(folio, v32_pages_take_frames_as_freed, .fini = fv_fini)
{
	unsigned long asc;

	refill_after_drop("linux-3.2", &asc);
	cr_assert_lt(asc, 16, "ascending neighbours: %lu of 255", asc);
}

/* 1 MiB aligned writes: one call per 256 pages, each charged 256. */
Test(folio, aligned_1m_writes_charge_256_per_call, .fini = fv_fini)
{
	unsigned long i;

	fv_open("mainline");
	for (i = 0; i < 4; i++)
		fv_write(i * FO_MIB, FO_MIB, 'm');
	cr_assert_eq(fo.calls, 4, "throttle calls: %lu", fo.calls);
	for (i = 0; i < 4; i++)
		cr_assert_eq(fo.charged[i], 256, "call %lu charged %lu", i,
			     fo.charged[i]);
	cr_assert_eq(order_at(0), 8);
	cr_assert_eq(order_at(1023), 8);
}

/* Rewriting a dirty folio charges nothing (folio_mark_dirty of a dirty
 * folio): one call, 0 pages, no page newly dirtied. */
Test(folio, rewrite_of_a_dirty_folio_charges_nothing, .fini = fv_fini)
{
	fv_open("mainline");
	fv_write(0, FO_MIB, 'a');
	cr_assert_eq(fv_vm(NR_DIRTIED), 256);
	fo_reset();
	fv_write(0, FO_MIB, 'b');
	cr_assert_eq(fo.calls, 1, "throttle calls: %lu", fo.calls);
	cr_assert_eq(fo.charged[0], 0, "charged %lu", fo.charged[0]);
	cr_assert_eq(fv_vm(NR_DIRTIED), 256);
	/* 4 KiB into it: the folio found is the 1 MiB one, still one call */
	fo_reset();
	fv_write(100 * PAGE_SIZE + 17, 100, 'c');
	cr_assert_eq(fo.calls, 1);
	cr_assert_eq(fo.charged[0], 0);
}

/*
 * 4 KiB into a clean 1 MiB folio dirties the whole folio and charges its
 * 256 pages (6.18: folio_mark_dirty -> folio_account_dirtied, nr pages),
 * with one throttle call.
 */
Test(folio, partial_rewrite_of_a_clean_folio_dirties_it_whole,
     .fini = fv_fini)
{
	fv_open("mainline");
	fv_write(0, FO_MIB, 'a');
	cr_assert_eq(uf_fsync(fv.f), 0);
	cr_assert_eq(fv_vm(NR_FILE_DIRTY), 0);
	fo_reset();
	fv_write(128 * PAGE_SIZE, PAGE_SIZE, 'z');
	cr_assert_eq(fo.calls, 1, "throttle calls: %lu", fo.calls);
	cr_assert_eq(fo.charged[0], 256, "charged %lu", fo.charged[0]);
	cr_assert_eq(fv_vm(NR_FILE_DIRTY), 256);
}

/* linux-3.2: 4 KiB pages, a throttle call per page (3.2.41
 * generic_perform_write), and no folio recorded. */
Test(folio, v32_calls_per_page, .fini = fv_fini)
{
	fv_open("linux-3.2");
	fv_write(0, FO_MIB, 'a');
	cr_assert_eq(fo.calls, 256, "throttle calls: %lu", fo.calls);
	cr_assert_eq(order_at(0), 0);
	cr_assert_eq(order_at(255), 0);
	cr_assert_eq(fv_vm(NR_FILE_DIRTY), 256);
}

/* ------------------------------------------------------------------ */
/* Throttled, in a world: the balance_dirty_pages events               */

#define FW_FILE		(64ul << 20)
#define FW_WRITES	48		/* 48 MiB through a 16 MiB cache */

struct fw_case {
	const char *policy;
	const char *trace;
	unsigned long written;	/* pages */
	int step;
};

#define STEP(n, call) do {						\
	int __r = (call);						\
	if (__r) {							\
		wc->step = (n);						\
		return __r;						\
	}								\
} while (0)

static int fw_main(void *arg)
{
	struct fw_case *wc = arg;
	struct uf_dev_config dcfg = { .engine = "sim" };
	struct uf_cache_config cfg;
	struct uf_cache *c;
	struct uf_file *f;
	struct uf_dev *d;
	struct uf_sim *sim;
	char *buf;
	int i;

	STEP(1, uf_sim_create("fo-ssd", "ssd,size=256m,seed=7", &sim));
	uf_cache_config_init(&cfg);
	cfg.nr_pages = 4096;
	cfg.policy = wc->policy;
	cfg.trace_path = wc->trace;
	STEP(2, uf_cache_open(&cfg, &c));
	STEP(3, uf_dev_open(c, "fo-ssd", &dcfg, &d));
	STEP(4, uf_file_open(d, 1, 0, FW_FILE, NULL, NULL, &f));
	uf_cache_obj(c)->bdp_probe = fo_probe;
	fo_reset();
	buf = malloc(FO_MIB);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < FW_WRITES; i++) {
		memset(buf, i + 1, FO_MIB);
		if (uf_pwrite(f, buf, FO_MIB, (uint64_t)i * FO_MIB) !=
		    (ssize_t)FO_MIB) {
			free(buf);
			wc->step = 5;
			return -EIO;
		}
		wc->written += FO_MIB / PAGE_SIZE;
	}
	free(buf);
	uf_cache_obj(c)->bdp_probe = NULL;
	STEP(6, uf_file_close(f));
	STEP(7, uf_dev_close(d));
	STEP(8, uf_cache_close(c));
	STEP(9, uf_sim_destroy(sim));
	return 0;
}

static void fw_run(struct fw_case *wc)
{
	struct uf_sim_opts o = { .seed = 1, .max_ns = 600ull * 1000000000 };
	struct uf_sim_result r;
	int ret;

	unlink(wc->trace);
	ret = uf_sim_run(&o, fw_main, wc, &r);
	cr_assert_eq(ret, 0, "uf_sim_run: %s", strerror(-ret));
	cr_assert_eq(r.main_ret, 0, "main: %s at step %d",
		     strerror(-r.main_ret), wc->step);
}

/* The dirtied= of each balance_dirty_pages line; returns the count. */
static unsigned long fw_dirtied(const char *path, unsigned long *min,
				unsigned long *max)
{
	char line[1024];
	unsigned long n = 0, v;
	const char *p;
	FILE *fp = fopen(path, "r");

	cr_assert_not_null(fp, "%s: %s", path, strerror(errno));
	*min = ~0ul;
	*max = 0;
	while (fgets(line, sizeof(line), fp)) {
		if (!strstr(line, ": balance_dirty_pages: "))
			continue;
		p = strstr(line, " dirtied=");
		cr_assert_not_null(p, "%s", line);
		v = strtoul(p + 9, NULL, 10);
		*min = v < *min ? v : *min;
		*max = v > *max ? v : *max;
		n++;
	}
	fclose(fp);
	return n;
}

/*
 * mainline, 1 MiB writes through a 16 MiB cache (the writer is held at
 * its limit): a call per 256 pages, each charged 256, and every
 * balance_dirty_pages event says dirtied=256, as 6.18's do (kdiff).
 */
Test(folio, world_1m_writes_trace_dirtied_256, .timeout = 300)
{
	struct fw_case wc = { .policy = "mainline",
			      .trace = "/tmp/uflush-folio-ml.trace" };
	unsigned long i, n, min, max;

	fw_run(&wc);
	cr_assert_eq(fo.calls, wc.written / 256, "calls %lu for %lu pages",
		     fo.calls, wc.written);
	for (i = 0; i < fo.calls && i < FO_MAX_CALLS; i++)
		cr_assert_eq(fo.charged[i], 256, "call %lu charged %lu", i,
			     fo.charged[i]);
	n = fw_dirtied(wc.trace, &min, &max);
	cr_assert_gt(n, 10, "balance_dirty_pages events: %lu", n);
	cr_assert(min == 256 && max == 256, "dirtied= %lu..%lu", min, max);
	unlink(wc.trace);
}

/* linux-3.2, the same writes: a call per page, and the events' dirtied=
 * the per-page ratelimit's (below 256). */
Test(folio, world_v32_throttles_per_page, .timeout = 300)
{
	struct fw_case wc = { .policy = "linux-3.2",
			      .trace = "/tmp/uflush-folio-32.trace" };
	unsigned long n, min, max;

	fw_run(&wc);
	cr_assert_eq(fo.calls, wc.written, "calls %lu for %lu pages",
		     fo.calls, wc.written);
	n = fw_dirtied(wc.trace, &min, &max);
	cr_assert_gt(n, 10, "balance_dirty_pages events: %lu", n);
	cr_assert_lt(max, 256, "dirtied= up to %lu", max);
	unlink(wc.trace);
}
