// SPDX-License-Identifier: MIT
/*
 * bench/wcpcap.c - `uflush-bench wcpcap`: seed 004's write_cache_pages
 * cap.  A file whose embedder maps blocks at writeback (uf_file_ops.
 * map_blocks, delayed allocation) is written in full, untimed, with the
 * dirty limits high enough that nothing is written back before the
 * fsync ("a dirty_ratio of 80 to leave something for fsync to do"); then
 * its fsync is timed.  The mapper maps at most --extent pages a call, as
 * mballoc did (2048 pages, 8 MiB).
 *
 *   stock  write_cache_pages gathers the dirty pages to the end of the
 *          file on every round, then writes the one extent the mapper
 *          mapped: about N^2 / (2 * extent) page visits for N pages;
 *   cap    it stops gathering at the extent and submits: N visits.
 *
 * The cases run alternately, --reps times.  The table gives the fsync's
 * wall time, the process CPU per wall second during it (the seed saw 80%
 * with stock and 2% with the cap), and the pages write_cache_pages looked
 * at (uf_dev_stats.wcp_pages_scanned) and the mapper calls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"

#define WCP_MAX_REPS	BENCH_MAX_REPS
#define WCP_PAGE	4096ull

enum wcp_case { CASE_STOCK, CASE_CAP, NR_CASES };

static const char *const case_names[NR_CASES] = { "stock", "cap" };

struct wcp_opts {
	uint64_t size;
	uint64_t bw;
	unsigned int extent;
	const char *policy;
};

struct wcp_run {
	double secs;		/* the fsync */
	double cpu;		/* % of one CPU, the process, during it */
	double cpu_secs;
	double scanned;		/* pages write_cache_pages looked at */
	double map_calls;
};

struct wcp_bench {
	struct wcp_opts o;
	struct bench_common cm;
	void *buf;
	char spec[NR_CASES][256];
	char policy[NR_CASES][512];	/* resolved */
	struct bench_case cases[NR_CASES];
	unsigned int n[NR_CASES];
	struct wcp_run runs[NR_CASES][WCP_MAX_REPS];
};

static struct wcp_bench wcp = {
	.o = { .size = 1ull << 30, .bw = 200ull << 20, .extent = 2048 },
	.cm = { .reps = 3 },
};

static const struct bench_opt wcp_opts[] = {
	BENCH_SIZE("file-size", &wcp.o.size, 1ull << 20, 4ull << 30,
		   1ull << 20, "the file (and the dirty data fsync writes); 1G"),
	BENCH_OLD_NAME("size", "file-size"),
	BENCH_SIZE("bw", &wcp.o.bw, 0, 1ull << 40, 0,
		   "shape the device to this many bytes/s, a disk that\n"
		   "fsync waits for (0: as fast as it is); 200M"),
	BENCH_UINT("extent", "PAGES", &wcp.o.extent, 1, 1u << 20, NULL,
		   "the most pages the mapper maps a call; 2048 (8 MiB)"),
	BENCH_OPT_REPS(&wcp.cm.reps, "repetitions of each case; 3"),
	BENCH_STR("policy", "SPEC", &wcp.o.policy,
		  "the policy both cases start from (wcpcap= is added);\n"
		  "linux-3.2"),
	BENCH_OPTS_COMMON_END(wcp.cm),
};

BENCH_CMDLINE(wcpcap, wcp_opts,
	"Seed 004: CPU of an fsync of a large delalloc file, with\n"
	"and without write_cache_pages stopping at the mapper's\n"
	"extent.\n"
	BENCH_SCRATCH_ABOUT,
	"Environment: UFLUSH_TESTDIR = where the scratch file\n"
	"goes.\n");

struct mapper {
	unsigned long extent;
	unsigned long calls;
};

/* mballoc: one extent a call, whatever the run asked for. */
static int map_extent(struct uf_file *f, void *priv, unsigned long index,
		      unsigned long nr_pages)
{
	struct mapper *m = priv;

	(void)f;
	(void)index;
	m->calls++;
	return (int)(nr_pages < m->extent ? nr_pages : m->extent);
}

static int wcp_once(struct wcp_bench *b, enum wcp_case c, struct wcp_run *r)
{
	struct uf_cache_config cfg;
	struct uf_dev_stats s0, s1;
	struct mapper m = { .extent = b->o.extent };
	struct uf_file_ops ops = {
		.map_blocks = map_extent,
		.max_extent_pages = b->o.extent,
	};
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_dev *dev;
	double cpu0, cpu1;
	uint64_t t0;
	const char *spec;
	int err, cerr;

	uf_cache_config_init(&cfg);
	/* room for all of it dirty, and no writeback before the fsync */
	cfg.nr_pages = (unsigned long)(b->o.size / WCP_PAGE) + 32768;
	cfg.policy = b->spec[c];
	cfg.dirty_bytes = (unsigned long)b->o.size + (64ul << 20);
	cfg.dirty_background_bytes = (unsigned long)b->o.size + (32ul << 20);
	cfg.dirty_writeback_centisecs = 0;	/* no kupdate meanwhile */
	err = uf_cache_open(&cfg, &cache);
	if (err) {
		snprintf(b->cases[c].why, sizeof(b->cases[c].why),
			 "uf_cache_open: %s", strerror(-err));
		return err;
	}
	spec = uf_cache_policy(cache);
	snprintf(b->policy[c], sizeof(b->policy[c]), "%s", spec ? spec : "?");
	err = bench_dev_open(&b->cm.ro, cache, &b->cm.t, &dev);
	if (!err)
		err = uf_file_open(dev, 1, 0, b->o.size, &ops, &m, &file);
	if (!err)
		err = bench_fill_file(file, 0, b->o.size, b->buf);
	if (err) {
		snprintf(b->cases[c].why, sizeof(b->cases[c].why),
			 "setup: %s", strerror(-err));
		goto out;
	}
	m.calls = 0;
	uf_dev_stats(dev, &s0);
	bench_process_cpu(&cpu0, NULL);
	t0 = uf_now_ns();
	err = uf_fsync(file);
	r->secs = (uf_now_ns() - t0) / 1e9;
	bench_process_cpu(&cpu1, NULL);
	uf_dev_stats(dev, &s1);
	r->cpu_secs = cpu1 - cpu0;
	r->cpu = r->cpu_secs / r->secs * 100;
	r->scanned = (double)(s1.wcp_pages_scanned - s0.wcp_pages_scanned);
	r->map_calls = (double)m.calls;
	if (err)
		snprintf(b->cases[c].why, sizeof(b->cases[c].why),
			 "uf_fsync: %s", strerror(-err));
out:
	cerr = uf_cache_close(cache);
	return err ? err : cerr;
}

static int wcp_run_one(void *priv, unsigned int c, unsigned int rep)
{
	struct wcp_bench *b = priv;
	struct wcp_run r = { 0 };
	int err;

	err = wcp_once(b, c, &r);
	if (bench_stop)
		return 0;
	if (err) {
		fprintf(stderr, "  %s: %s\n", case_names[c], b->cases[c].why);
		return b->n[c] ? err : BENCH_SKIP;
	}
	b->runs[c][b->n[c]++] = r;
	fprintf(stderr, "rep %u %-5s fsync %.2f s, CPU %.2f s (%.0f%%), %.0f pages looked at, %.0f map calls\n",
		rep + 1, case_names[c], r.secs, r.cpu_secs, r.cpu, r.scanned,
		r.map_calls);
	return 0;
}

static void gather(const struct wcp_bench *b, unsigned int c, size_t off,
		   struct bench_samples *s)
{
	memset(s, 0, sizeof(*s));
	bench_samples_gather(s, b->runs[c], b->n[c], sizeof(struct wcp_run),
			     off);
}

static const char *const wcp_cols[] = {
	"case", ">fsync s", ">min-max", ">CPU %", ">min-max", ">CPU s",
	">pages looked at", ">map calls", ">CPU s vs stock",
};

static void wcp_header(const void *priv)
{
	const struct wcp_bench *b = priv;

	printf("wcpcap: fsync of a %.0f MiB file, all dirty, mapper extent %u pages (%.1f MiB), device %s%.0f MB/s\n",
	       b->o.size / 1048576.0, b->o.extent,
	       b->o.extent * WCP_PAGE / 1048576.0,
	       b->o.bw ? "shaped to " : "unshaped, ", b->o.bw / 1e6);
	printf("policy:  stock = %s\n         cap   = %s\n", b->policy[0],
	       b->policy[1]);
}

static void wcp_row(struct bench_table *t, const void *priv, unsigned int c)
{
	const struct wcp_bench *b = priv;
	struct bench_samples s, cpu, base;
	struct bench_stats st;
	int row = bench_table_row(t);

	if (row < 0)
		return;
	bench_table_set(t, row, 0, "%s", case_names[c]);
	if (!b->n[c]) {
		bench_table_set(t, row, 1, "skipped");
		return;
	}
	gather(b, c, offsetof(struct wcp_run, secs), &s);
	bench_samples_stats(&s, &st);
	bench_table_stats(t, row, 1, &st);
	gather(b, c, offsetof(struct wcp_run, cpu), &cpu);
	bench_samples_stats(&cpu, &st);
	bench_table_stats(t, row, 3, &st);
	gather(b, c, offsetof(struct wcp_run, cpu_secs), &cpu);
	bench_table_set(t, row, 5, "%.2f", bench_samples_median(&cpu));
	gather(b, c, offsetof(struct wcp_run, scanned), &s);
	bench_table_set(t, row, 6, "%.0f", bench_samples_median(&s));
	gather(b, c, offsetof(struct wcp_run, map_calls), &s);
	bench_table_set(t, row, 7, "%.0f", bench_samples_median(&s));
	gather(b, CASE_STOCK, offsetof(struct wcp_run, cpu_secs), &base);
	bench_table_ratio(t, row, 8, bench_ratio(&cpu, &base));
}

static void wcp_notes(const void *priv)
{
	const struct wcp_bench *b = priv;
	double n = (double)(b->o.size / WCP_PAGE), e = b->o.extent;
	double rounds = n / e;

	printf("\nExpected pages looked at: cap %.0f; stock %.0f (N + (N-e) + ... = N(N/e+1)/2).\n",
	       n, e * rounds * (rounds + 1) / 2);
	printf("CPU is the whole process (fsync thread, I/O completions) per wall second of the fsync.\n");
}

static void wcp_json_config(struct bench_json *j, const void *priv)
{
	const struct wcp_bench *b = priv;

	bench_json_u64(j, "size_bytes", b->o.size);
	bench_json_u64(j, "extent_pages", b->o.extent);
	bench_json_u64(j, "bw_bytes_per_sec", b->o.bw);
	bench_json_policies(j, case_names, b->policy, NR_CASES);
}

static void wcp_json_case(struct bench_json *j, const void *priv,
			  unsigned int c)
{
	const struct wcp_bench *b = priv;
	struct bench_samples s;

	bench_json_obj(j, NULL);
	bench_json_str(j, "case", case_names[c]);
	gather(b, c, offsetof(struct wcp_run, secs), &s);
	bench_json_samples(j, "fsync_secs", &s);
	gather(b, c, offsetof(struct wcp_run, cpu), &s);
	bench_json_samples(j, "cpu_percent", &s);
	gather(b, c, offsetof(struct wcp_run, cpu_secs), &s);
	bench_json_samples(j, "cpu_secs", &s);
	gather(b, c, offsetof(struct wcp_run, scanned), &s);
	bench_json_samples(j, "pages_scanned", &s);
	gather(b, c, offsetof(struct wcp_run, map_calls), &s);
	bench_json_samples(j, "map_calls", &s);
	bench_json_end(j);
}

static const struct bench_report wcp_report = BENCH_REPORT_OF(wcp);

int bench_wcpcap_main(int argc, char **argv)
{
	struct wcp_bench *b = &wcp;
	struct bench_sched s = BENCH_SCHED_ROTATED(b->cases, NR_CASES,
						   wcp_run_one, b);
	int err = bench_opts_main(&bench_wcpcap_cmdline, argc, argv);
	unsigned int c;

	if (err >= 0)
		return err;
	for (c = 0; c < NR_CASES; c++) {
		b->cases[c].name = case_names[c];
		snprintf(b->spec[c], sizeof(b->spec[c]), "%s,wcpcap=%s",
			 b->o.policy ? b->o.policy : "linux-3.2",
			 case_names[c]);
		if (bench_check_policy("wcpcap", b->spec[c], NULL, 0))
			return 2;
	}
	if (bench_env_init(&b->cm.env, "wcpcap", false))
		return 1;
	b->buf = bench_random_buffer(1u << 20);
	if (!b->buf)
		return 1;
	if (bench_target_open(&b->cm.t, "wcpcap", b->cm.dev, b->o.size,
			      b->cm.force)) {
		free(b->buf);
		return 1;
	}
	b->cm.t.range = b->o.size;
	b->cm.t.force = b->cm.force;
	b->cm.t.shaped = b->o.bw != 0;
	b->cm.t.shape.bw_bytes_per_sec = b->o.bw;
	bench_env_print(&b->cm.env, NULL, false);
	bench_target_print(&b->cm.t, NULL);
	s.reps = b->cm.reps;
	err = bench_sched_run(&s);
	if (!err && !bench_stop && !b->n[CASE_STOCK] && !b->n[CASE_CAP]) {
		bench_err("wcpcap", "no case could run");
		err = -EIO;
	}
	if (!err)	/* interrupted: the runs done so far */
		err = bench_report(&wcp_report, &b->cm.env, &b->cm.t, b->cm.json, b,
				   NR_CASES);
	bench_target_close(&b->cm.t);
	free(b->buf);
	return bench_exit_code("wcpcap", err);
}
