// SPDX-License-Identifier: MIT
/*
 * bench/plot.c - `uflush-bench plot [--out DIR] A.trace [B.trace]`: PNGs
 * of a run from its tracepoints in ftrace text form (what cfg.trace_path
 * gets, and what a kernel's trace_pipe prints for the same events, so a
 * kernel trace of the same workload plots the same way), via gnuplot:
 *
 *   dirty.png      global_dirty_state: dirty, writeback, thresholds, limit
 *   bw.png         per-device written bandwidth (writeback_single_inode
 *                  wrote=, summed per device over 250 ms bins)
 *   pauses.png     balance_dirty_pages: each writer's throttle pauses
 *   ratelimit.png  balance_dirty_pages task_ratelimit and bdi_dirty_ratelimit
 *                  dirty_ratelimit, write_bw
 *   chunks.png     writeback_single_inode wrote= per call (the chunks), and
 *                  writeback_wait (no-progress waits) as marks
 *
 * With two traces, A and B share the axes (A solid, B dashed); time is
 * seconds from each trace's first event.  The data files stay beside the
 * PNGs (the .dat files and plot.gp in DIR), so the plots can be redrawn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench.h"

#define PLOT_MAX_BDIS	16
#define PLOT_BIN	0.25

static const char *plot_out = "plots";
static int plot_rest;

static const struct bench_opt plot_opts[] = {
	BENCH_STR("out", "DIR", &plot_out, "where the PNGs go; plots"),
	BENCH_OPT_END,
};

const struct bench_cmdline bench_plot_cmdline = {
	.cmd = "plot",
	.about = "Arguments: A.trace [B.trace].\n"
		 "PNGs of a run from its tracepoints (ftrace text, uflush's or a\n"
		 "kernel's): dirty.png (global dirty state), bw.png (per-device\n"
		 "written bandwidth), pauses.png (writers' throttle pauses),\n"
		 "ratelimit.png, chunks.png (writeback chunks, no-progress waits).\n"
		 "Two traces: A and B on the same axes.  Needs gnuplot.\n",
	.opts = plot_opts,
	.rest = &plot_rest,
};

enum { S_DIRTY, S_PAUSES, S_RATE, S_BDIRATE, S_CHUNKS, S_WAITS, NR_S };

static const char *const series_names[NR_S] = {
	"dirty", "pauses", "rate", "bdirate", "chunks", "waits",
};

struct plot_side {
	char tag;			/* 'A' or 'B' */
	unsigned long cnt[NR_S];	/* rows in each data file */
	FILE *f[NR_S];			/* the data files, by series */
	unsigned int nr_bdis;
	char bdi[PLOT_MAX_BDIS][16];
	double *bins[PLOT_MAX_BDIS];	/* pages per bin */
	unsigned int nr_bins[PLOT_MAX_BDIS];
	double t_end;
};

/* "key=NUM" inside s; 0 if missing. */
static double field(const char *s, const char *key)
{
	char k[40];
	const char *p;

	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(s, k);
	return p ? strtod(p + strlen(k), NULL) : 0;
}

/* "bdi 7:0:" at the start of s into name. */
static bool bdi_of(const char *s, char *name, size_t len)
{
	const char *p = strstr(s, "bdi ");
	size_t n;

	if (!p)
		return false;
	p += 4;
	n = strcspn(p, ": ");
	if (p[n] == ':' && p[n + 1] != ' ')	/* MAJ:MIN: */
		n += 1 + strcspn(p + n + 1, ":");
	if (!n || n >= len)
		return false;
	memcpy(name, p, n);
	name[n] = '\0';
	return true;
}

static void add_bw(struct plot_side *sd, const char *bdi, double t,
		   double pages)
{
	unsigned int i, bin = (unsigned int)(t / PLOT_BIN);
	size_t cap;

	for (i = 0; i < sd->nr_bdis && strcmp(sd->bdi[i], bdi); i++)
		;
	if (i == sd->nr_bdis) {
		if (i == PLOT_MAX_BDIS)
			return;
		snprintf(sd->bdi[i], sizeof(sd->bdi[i]), "%s", bdi);
		sd->nr_bdis++;
	}
	if (bin >= sd->nr_bins[i]) {
		cap = bin + 64;
		double *nb = realloc(sd->bins[i], cap * sizeof(double));

		if (!nb)
			return;
		memset(nb + sd->nr_bins[i], 0,
		       (cap - sd->nr_bins[i]) * sizeof(double));
		sd->bins[i] = nb;
		sd->nr_bins[i] = (unsigned int)cap;
	}
	sd->bins[i][bin] += pages;
}

static void plot_event(struct plot_side *sd, const char *ev, const char *s,
		       double t, long pid)
{
	char bdi[16];

	if (!strcmp(ev, "global_dirty_state")) {
		sd->cnt[S_DIRTY]++;
		fprintf(sd->f[S_DIRTY], "%.6f %.0f %.0f %.0f %.0f %.0f\n", t,
			field(s, "dirty"), field(s, "writeback"),
			field(s, "bg_thresh"), field(s, "thresh"),
			field(s, "limit"));
	} else if (!strcmp(ev, "balance_dirty_pages")) {
		sd->cnt[S_PAUSES]++;
		sd->cnt[S_RATE]++;
		fprintf(sd->f[S_PAUSES], "%.6f %.0f %ld\n", t,
			field(s, "pause"), pid);
		fprintf(sd->f[S_RATE], "%.6f %.0f\n", t,
			field(s, "task_ratelimit"));
	} else if (!strcmp(ev, "bdi_dirty_ratelimit")) {
		sd->cnt[S_BDIRATE]++;
		fprintf(sd->f[S_BDIRATE], "%.6f %.0f %.0f\n", t,
			field(s, "dirty_ratelimit"), field(s, "write_bw"));
	} else if (!strcmp(ev, "writeback_single_inode")) {
		double wrote = field(s, "wrote");

		sd->cnt[S_CHUNKS]++;
		fprintf(sd->f[S_CHUNKS], "%.6f %.0f\n", t, wrote);
		if (wrote > 0 && bdi_of(s, bdi, sizeof(bdi)))
			add_bw(sd, bdi, t, wrote);
	} else if (!strcmp(ev, "writeback_wait")) {
		sd->cnt[S_WAITS]++;
		fprintf(sd->f[S_WAITS], "%.6f 1\n", t);
	}
}

/* One line: "comm-pid [cpu] [flags] TS: event: rest". */
static void plot_line(struct plot_side *sd, const char *line, double *t0)
{
	const char *p = strchr(line, ']'), *b = strchr(line, '['), *d;
	char ev[64];
	double ts;
	long pid = 0;
	int n = 0;

	if (!p || !b)
		return;
	/* "comm-PID [cpu]": the writer a throttle event belongs to */
	for (d = b; d > line && d[-1] == ' '; d--)
		;
	while (d > line && d[-1] >= '0' && d[-1] <= '9')
		d--;
	pid = strtol(d, NULL, 10);
	/* a kernel trace may have a flags column ("d..1.") before the time */
	while (*++p == ' ')
		;
	if (sscanf(p, "%lf: %63[^:]:%n", &ts, ev, &n) != 2 &&
	    sscanf(p, "%*s %lf: %63[^:]:%n", &ts, ev, &n) != 2)
		return;
	if (*t0 < 0)
		*t0 = ts;
	if (ts - *t0 > sd->t_end)
		sd->t_end = ts - *t0;
	plot_event(sd, ev, p + n, ts - *t0, pid);
}

static FILE *dat(const char *dir, const char *name, char tag)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s-%c.dat", dir, name, tag);
	return fopen(path, "w");
}

static void side_close(struct plot_side *sd, FILE *bw)
{
	unsigned int i;

	for (i = 0; i < NR_S; i++)
		if (sd->f[i])
			fclose(sd->f[i]);
	if (bw)
		fclose(bw);
}

static int side_read(struct plot_side *sd, const char *trace, const char *dir)
{
	char line[1024];
	double t0 = -1;
	FILE *f = fopen(trace, "r");
	unsigned int i, k;
	FILE *bw;

	if (!f) {
		bench_err("plot", "%s: %s", trace, strerror(errno));
		return -errno;
	}
	bw = dat(dir, "bw", sd->tag);
	for (i = 0; i < NR_S; i++)
		sd->f[i] = dat(dir, series_names[i], sd->tag);
	for (i = 0; i < NR_S && bw; i++)
		if (!sd->f[i])
			break;
	if (i < NR_S) {
		bench_err("plot", "cannot write in %s: %s", dir,
			  strerror(errno));
		side_close(sd, bw);
		fclose(f);
		return -EIO;
	}
	while (fgets(line, sizeof(line), f))
		plot_line(sd, line, &t0);
	fclose(f);
	/* one block per device (gnuplot "index"), MB/s per bin */
	for (i = 0; i < sd->nr_bdis; i++) {
		for (k = 0; k < sd->nr_bins[i]; k++)
			fprintf(bw, "%.3f %.3f\n", (k + 0.5) * PLOT_BIN,
				sd->bins[i][k] * 4096 / 1e6 / PLOT_BIN);
		fprintf(bw, "\n\n");
		free(sd->bins[i]);
	}
	side_close(sd, bw);
	return 0;
}

static void gp_plot(FILE *g, const char *dir, const char *png,
		    const char *title, const char *ylabel)
{
	fprintf(g, "set output '%s/%s'\nset title \"%s\"\nset ylabel '%s'\n",
		dir, png, title, ylabel);
}

/* "plot" or "," and the series of both sides. */
static void gp_series(FILE *g, const struct plot_side *sd, unsigned int n,
		      unsigned int series, const char *name, const char *using,
		      const char *what, const char *with, int color,
		      bool *first)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!sd[i].cnt[series])
			continue;	/* gnuplot fails on a plot of nothing */
		fprintf(g, "%s '%s-%c.dat' using %s with %s dt %d lc %d title '%c %s'",
			*first ? "plot" : ", \\\n    ", name, sd[i].tag, using,
			with, i ? 2 : 1, color, sd[i].tag, what);
		*first = false;
	}
}

/* A plot none of whose events were in the traces still gets drawn. */
static void gp_end(FILE *g, bool first, const char *events)
{
	if (first)
		fprintf(g, "plot [0:1] 0 title 'no %s events'", events);
	fprintf(g, "\n");
}

static void gp_script(FILE *g, const char *dir, const struct plot_side *sd,
		      unsigned int n)
{
	static const char *const dirty_cols[] = {
		"dirty", "writeback", "bg_thresh", "thresh", "limit",
	};
	char using[16];
	unsigned int c, i, k;
	bool first;

	fprintf(g, "set terminal pngcairo size 1000,600 noenhanced\n"
		   "set xlabel 'seconds'\nset grid\nset key outside right\n"
		   "cd '%s'\n", dir);
	gp_plot(g, ".", "dirty.png", "global dirty state", "pages");
	first = true;
	for (c = 0; c < 5; c++) {
		snprintf(using, sizeof(using), "1:%u", c + 2);
		gp_series(g, sd, n, S_DIRTY, "dirty", using, dirty_cols[c], "lines",
			  (int)c + 1, &first);
	}
	gp_end(g, first, "global_dirty_state");
	gp_plot(g, ".", "bw.png", "written bandwidth per device", "MB/s");
	first = true;
	for (i = 0; i < n; i++)
		for (k = 0; k < sd[i].nr_bdis; k++) {
			fprintf(g, "%s 'bw-%c.dat' index %u using 1:2 with steps dt %u lc %u title '%c %s'",
				first ? "plot" : ", \\\n    ", sd[i].tag, k,
				i ? 2 : 1, k + 1, sd[i].tag, sd[i].bdi[k]);
			first = false;
		}
	gp_end(g, first, "writeback_single_inode");
	gp_plot(g, ".", "pauses.png", "writers' throttle pauses (balance_dirty_pages; a colour per writer, A dots, B circles)", "pause, ms");
	first = true;
	for (i = 0; i < n; i++) {
		if (!sd[i].cnt[S_PAUSES])
			continue;
		fprintf(g, "%s 'pauses-%c.dat' using 1:2:(int($3) %% 8 + 1) with points pt %d ps 0.5 lc variable title '%c pause'",
			first ? "plot" : ", \\\n   ", sd[i].tag, i ? 6 : 7,
			sd[i].tag);
		first = false;
	}
	gp_end(g, first, "balance_dirty_pages");
	gp_plot(g, ".", "ratelimit.png", "dirty ratelimits", "KiB/s");
	first = true;
	gp_series(g, sd, n, S_RATE, "rate", "1:2", "task_ratelimit",
		  "points pt 7 ps 0.3", 1, &first);
	gp_series(g, sd, n, S_BDIRATE, "bdirate", "1:2", "dirty_ratelimit",
		  "lines", 2, &first);
	gp_series(g, sd, n, S_BDIRATE, "bdirate", "1:3", "write_bw", "lines",
		  3, &first);
	gp_end(g, first, "balance_dirty_pages or bdi_dirty_ratelimit");
	gp_plot(g, ".", "chunks.png", "writeback chunks (wrote= per inode) and no-progress waits", "pages");
	fprintf(g, "set y2label 'writeback_wait'\nset y2range [0:2]\nset y2tics 1\n");
	first = true;
	gp_series(g, sd, n, S_CHUNKS, "chunks", "1:2", "wrote",
		  "points pt 7 ps 0.4", 1, &first);
	for (i = 0; i < n; i++) {
		if (!sd[i].cnt[S_WAITS])
			continue;
		fprintf(g, "%s 'waits-%c.dat' using 1:2 axes x1y2 with impulses lc 4 title '%c writeback_wait'",
			first ? "plot" : ", \\\n   ", sd[i].tag, sd[i].tag);
		first = false;
	}
	gp_end(g, first, "writeback_single_inode or writeback_wait");
}

int bench_plot_render(const char *dir, const char *const *traces,
		      unsigned int n)
{
	struct plot_side sd[2];
	char path[512], cmd[600];
	unsigned int i;
	FILE *g;
	int rc;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		bench_err("plot", "mkdir %s: %s", dir, strerror(errno));
		return -errno;
	}
	memset(sd, 0, sizeof(sd));
	for (i = 0; i < n; i++) {
		sd[i].tag = (char)('A' + i);
		if (side_read(&sd[i], traces[i], dir))
			return -EIO;
	}
	snprintf(path, sizeof(path), "%s/plot.gp", dir);
	g = fopen(path, "w");
	if (!g) {
		bench_err("plot", "%s: %s", path, strerror(errno));
		return -errno;
	}
	gp_script(g, dir, sd, n);
	fclose(g);
	/* its "no valid points" warnings (an event a policy never emits) */
	snprintf(cmd, sizeof(cmd), "gnuplot '%s/plot.gp' 2>'%s/gnuplot.log'",
		 dir, dir);
	rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc)) {
		bench_err("plot", "gnuplot failed (%s, see %s/gnuplot.log); is gnuplot installed (scripts/install-deps)?",
			  WIFEXITED(rc) && WEXITSTATUS(rc) == 127 ?
			  "not found" : "error", dir);
		return -EIO;
	}
	printf("plots:   %s/{dirty,bw,pauses,ratelimit,chunks}.png\n", dir);
	return 0;
}

int bench_plot_main(int argc, char **argv)
{
	int err, n;

	plot_out = "plots";
	err = bench_opts_main(&bench_plot_cmdline, argc, argv);
	if (err >= 0)
		return err;
	n = argc - plot_rest;
	if (n < 1 || n > 2) {
		bench_err("plot", "give one trace, or two (A and B)");
		return 2;
	}
	return bench_plot_render(plot_out, (const char *const *)argv + plot_rest,
				 (unsigned int)n) ? 1 : 0;
}
