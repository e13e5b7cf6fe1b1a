// SPDX-License-Identifier: MIT
/*
 * bench/plot.c - `uflush-bench plot [--out DIR] A.trace [B.trace]`: PNGs
 * of a run from its tracepoints in ftrace text form (what cfg.trace_path
 * gets, and what a kernel's trace_pipe prints for the same events, so a
 * kernel trace of the same workload plots the same way), via gnuplot:
 *
 *   dirty.png      global_dirty_state: dirty, writeback, thresholds, limit
 *   bw.png         per-device written bandwidth (writeback_single_inode
 *                  wrote=, per device over 250 ms bins) and all devices
 *                  together (global_dirty_state written=, which counts
 *                  what fsync wrote too)
 *   pauses.png     each single throttle sleep of each writer: mainline and
 *                  3.2's balance_dirty_pages pause= (> 0; pause <= 0 is the
 *                  no-sleep path under min_pause), 3.1's balance_dirty_start
 *                  or _written to balance_dirty_wait
 *   ratelimit.png  balance_dirty_pages task_ratelimit per writer; per
 *                  device bdi_dirty_ratelimit dirty_ratelimit and write_bw
 *   chunks.png     writeback_single_inode wrote= per call (the chunks), and
 *                  writeback_wait (no-progress waits) as marks
 *   fsync.png      the CDF of the writers' fsync latencies (only with them)
 *
 * The tracepoints lack two things: the policy's name and the latencies
 * the bench measures.  `ab` writes them beside each trace, in
 * <case#>-<A|B>.lat ("policy NAME", "fsync MS", "call MS" lines); plot
 * reads that file when it is there (TRACE with .trace replaced by .lat).
 *
 * A colour is a device or a writer (writers ranked by pid in each trace),
 * the same in A and B; A is solid with filled circles, B dashed with open
 * squares.  Time is seconds from each trace's first event, up to the
 * longer trace's last.  The data files stay beside the PNGs (the .dat
 * files and plot.gp in DIR), so the plots can be redrawn.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench.h"

#define PLOT_MAX_BDIS	16
#define PLOT_BIN	0.25
#define PLOT_ALL	PLOT_MAX_BDIS	/* the all-devices bins */
#define PLOT_KEY_WRITERS 8		/* writers named in a key */

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
		 "kernel's): dirty.png (global dirty state), bw.png (written\n"
		 "bandwidth per device and in all), pauses.png (writers' single\n"
		 "throttle sleeps), ratelimit.png, chunks.png (writeback chunks,\n"
		 "no-progress waits), fsync.png (fsync latency CDF, from the .lat\n"
		 "file `ab` writes beside a trace).  Two traces: A and B on the\n"
		 "same axes, a colour per device or writer.  Needs gnuplot.\n",
	.opts = plot_opts,
	.rest = &plot_rest,
};

/* Distinct on white; a device's or writer's colour is its index here. */
static const unsigned int palette[] = {
	0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e, 0x9467bd,
	0x8c564b, 0xe377c2, 0x17becf, 0xbcbd22, 0x7f7f7f,
};
#define NR_COLORS	(sizeof(palette) / sizeof(palette[0]))

struct plot_pt {
	double t, v, w;
	long id;		/* writer pid, or device index */
};

struct plot_vec {
	struct plot_pt *p;
	size_t n, cap;
};

enum { V_SLEEPS, V_RATE, V_BDIRATE, V_CHUNKS, V_WAITS, V_FSYNC, V_CALLS,
       V_BDP31, NR_V };

/* Shared by A and B, so that a device has one colour in both. */
struct plot_devs {
	unsigned int n;
	char name[PLOT_MAX_BDIS][16];
};

struct plot_side {
	char tag;			/* 'A' or 'B' */
	char label[96];			/* "A linux-3.1" */
	bool oom;
	struct plot_devs *devs;
	FILE *dirty;
	unsigned long nr_dirty;
	struct plot_vec v[NR_V];	/* V_BDP31: pid, t of 3.1's last step */
	unsigned long nosleep;		/* pause <= 0: not a sleep */
	unsigned int nr_writers;
	double *bins[PLOT_MAX_BDIS + 1];	/* pages per bin */
	unsigned int cap[PLOT_MAX_BDIS + 1], used[PLOT_MAX_BDIS + 1];
	double written_t, written;	/* global_dirty_state's last written= */
	bool have_written;
	double t_end;
};

static void vec_add(struct plot_side *sd, unsigned int v, double t,
		    double val, double w, long id)
{
	struct plot_vec *pv = &sd->v[v];

	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? 2 * pv->cap : 256;
		struct plot_pt *p = realloc(pv->p, cap * sizeof(*p));

		if (!p) {
			sd->oom = true;
			return;
		}
		pv->p = p;
		pv->cap = cap;
	}
	pv->p[pv->n++] = (struct plot_pt){ t, val, w, id };
}

/* "key=NUM" inside s; 0 if missing.  Signed: pause= and think= are. */
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
	n = strcspn(p, ": \n");
	if (p[n] == ':' && p[n + 1] != ' ')	/* MAJ:MIN: */
		n += 1 + strcspn(p + n + 1, ": \n");
	if (!n || n >= len)
		return false;
	memcpy(name, p, n);
	name[n] = '\0';
	return true;
}

/* The device's index in both sides' table; -1 if it is full. */
static int dev_index(struct plot_devs *d, const char *bdi)
{
	unsigned int i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->name[i], bdi))
			return (int)i;
	if (d->n == PLOT_MAX_BDIS)
		return -1;
	snprintf(d->name[d->n], sizeof(d->name[0]), "%s", bdi);
	return (int)d->n++;
}

static void bin_add(struct plot_side *sd, unsigned int k, double t,
		    double pages)
{
	unsigned int bin = (unsigned int)(t / PLOT_BIN);

	if (bin >= sd->cap[k]) {
		unsigned int cap = bin + 64;
		double *nb = realloc(sd->bins[k], cap * sizeof(double));

		if (!nb) {
			sd->oom = true;
			return;
		}
		memset(nb + sd->cap[k], 0, (cap - sd->cap[k]) * sizeof(double));
		sd->bins[k] = nb;
		sd->cap[k] = cap;
	}
	sd->bins[k][bin] += pages;
	/* only the bins the trace reached: the capacity runs on past them */
	if (bin + 1 > sd->used[k])
		sd->used[k] = bin + 1;
}

/* pages written evenly over [t0, t1] (samples of a cumulative counter). */
static void bin_spread(struct plot_side *sd, unsigned int k, double t0,
		       double t1, double pages)
{
	double span = t1 - t0, edge;

	if (span <= 0) {
		bin_add(sd, k, t1, pages);
		return;
	}
	while (t0 < t1) {
		edge = ((unsigned int)(t0 / PLOT_BIN) + 1) * PLOT_BIN;
		if (edge > t1)
			edge = t1;
		bin_add(sd, k, t0, pages * (edge - t0) / span);
		t0 = edge;
	}
}

/* 3.1's throttle loop: the writer's last start (or own writeback) time. */
static struct plot_pt *bdp31_of(struct plot_side *sd, long pid)
{
	struct plot_vec *pv = &sd->v[V_BDP31];
	size_t i;

	for (i = pv->n; i-- > 0;)
		if (pv->p[i].id == pid)
			return &pv->p[i];
	vec_add(sd, V_BDP31, -1, 0, 0, pid);
	return sd->oom ? NULL : &pv->p[pv->n - 1];
}

static void plot_throttle(struct plot_side *sd, const char *ev, const char *s,
			  double t, long pid)
{
	struct plot_pt *st;
	double pause;

	if (!strcmp(ev, "balance_dirty_pages")) {
		/*
		 * pause <= 0 is the no-sleep path (mainline balance_dirty_pages:
		 * pause under min_pause traces min(pause, 0)); a task whose
		 * dirty_paused_when was still 0 then gets minus jiffies, about
		 * -2^32 ms.  Not a sleep: counted, not plotted.
		 */
		pause = field(s, "pause");
		if (pause > 0)
			vec_add(sd, V_SLEEPS, t, pause, 0, pid);
		else
			sd->nosleep++;
		vec_add(sd, V_RATE, t, field(s, "task_ratelimit"), 0, pid);
		return;
	}
	/* 3.1 (v3.1 mm/page-writeback.c): start [written] sleep wait */
	st = bdp31_of(sd, pid);
	if (!st)
		return;
	if (!strcmp(ev, "balance_dirty_wait")) {
		if (st->t >= 0)
			vec_add(sd, V_SLEEPS, t, (t - st->t) * 1000, 0, pid);
		st->t = -1;
	} else {
		st->t = t;
	}
}

static void plot_event(struct plot_side *sd, const char *ev, const char *s,
		       double t, long pid)
{
	char bdi[16];
	int k;

	if (!strcmp(ev, "global_dirty_state")) {
		double written = field(s, "written");

		sd->nr_dirty++;
		fprintf(sd->dirty, "%.6f %.0f %.0f %.0f %.0f %.0f\n", t,
			field(s, "dirty"), field(s, "writeback"),
			field(s, "bg_thresh"), field(s, "thresh"),
			field(s, "limit"));
		if (sd->have_written && written >= sd->written)
			bin_spread(sd, PLOT_ALL, sd->written_t, t,
				   written - sd->written);
		sd->have_written = true;
		sd->written = written;
		sd->written_t = t;
	} else if (!strcmp(ev, "balance_dirty_pages") ||
		   !strcmp(ev, "balance_dirty_start") ||
		   !strcmp(ev, "balance_dirty_written") ||
		   !strcmp(ev, "balance_dirty_wait")) {
		plot_throttle(sd, ev, s, t, pid);
	} else if (strcmp(ev, "bdi_dirty_ratelimit") &&
		   strcmp(ev, "writeback_single_inode") &&
		   strcmp(ev, "writeback_wait")) {
		return;
	} else if (!bdi_of(s, bdi, sizeof(bdi)) ||
		   (k = dev_index(sd->devs, bdi)) < 0) {
		return;
	} else if (!strcmp(ev, "bdi_dirty_ratelimit")) {
		vec_add(sd, V_BDIRATE, t, field(s, "dirty_ratelimit"),
			field(s, "write_bw"), k);
	} else if (!strcmp(ev, "writeback_single_inode")) {
		double wrote = field(s, "wrote");

		vec_add(sd, V_CHUNKS, t, wrote, 0, k);
		if (wrote > 0)
			bin_add(sd, (unsigned int)k, t, wrote);
	} else {
		vec_add(sd, V_WAITS, t, 1, 0, k);
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

/* A label goes into gnuplot's quotes: keep quotes out of it. */
static void label_set(struct plot_side *sd, const char *name)
{
	char *p;

	snprintf(sd->label, sizeof(sd->label), "%c %s", sd->tag, name);
	for (p = sd->label; *p; p++)
		if (*p == '\'' || *p == '"' || *p == '\\')
			*p = '_';
}

/* TRACE's .lat: the policy's name and the bench's latency samples. */
static void side_read_lat(struct plot_side *sd, const char *trace)
{
	char path[520], line[256], name[80];
	size_t len = strlen(trace);
	double ms;
	FILE *f;

	if (len > 6 && !strcmp(trace + len - 6, ".trace"))
		len -= 6;
	snprintf(path, sizeof(path), "%.*s.lat", (int)len, trace);
	f = fopen(path, "r");
	if (!f)
		return;		/* a kernel trace: no names, no latencies */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "policy %79s", name) == 1)
			label_set(sd, name);
		else if (sscanf(line, "fsync %lf", &ms) == 1)
			vec_add(sd, V_FSYNC, ms, 0, 0, 0);
		else if (sscanf(line, "call %lf", &ms) == 1)
			vec_add(sd, V_CALLS, ms, 0, 0, 0);
	}
	fclose(f);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static int cmp_t(const void *a, const void *b)
{
	double x = ((const struct plot_pt *)a)->t;
	double y = ((const struct plot_pt *)b)->t;

	return (x > y) - (x < y);
}

/*
 * Writers ranked by pid (threads start in order), so writer k has the
 * same colour in A and B: w becomes the rank.
 */
static void rank_writers(struct plot_side *sd)
{
	struct plot_vec *s = &sd->v[V_SLEEPS], *r = &sd->v[V_RATE];
	size_t i, n = 0, k;
	long *pids = malloc((s->n + r->n + 1) * sizeof(long));

	if (!pids) {
		sd->oom = true;
		return;
	}
	for (i = 0; i < s->n; i++)
		pids[n++] = s->p[i].id;
	for (i = 0; i < r->n; i++)
		pids[n++] = r->p[i].id;
	qsort(pids, n, sizeof(long), cmp_long);
	for (i = k = 0; i < n; i++)
		if (!k || pids[k - 1] != pids[i])
			pids[k++] = pids[i];
	sd->nr_writers = (unsigned int)k;
	for (i = 0; i < s->n + r->n; i++) {
		struct plot_pt *p = i < s->n ? &s->p[i] : &r->p[i - s->n];
		long *hit = bsearch(&p->id, pids, k, sizeof(long), cmp_long);

		p->w = hit ? (double)(hit - pids) : 0;
	}
	free(pids);
}

static FILE *dat(const char *dir, const char *name, char tag)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s-%c.dat", dir, name, tag);
	return fopen(path, "w");
}

static unsigned int color(double idx)
{
	return palette[(unsigned int)idx % NR_COLORS];
}

/* "t value rgb" rows; the colour from the writer rank or the device. */
static int write_pts(const char *dir, const char *name, char tag,
		     const struct plot_vec *pv, bool by_writer)
{
	FILE *f = dat(dir, name, tag);
	size_t i;

	if (!f)
		return -errno;
	for (i = 0; i < pv->n; i++)
		fprintf(f, "%.6f %.6g %u\n", pv->p[i].t, pv->p[i].v,
			color(by_writer ? pv->p[i].w : (double)pv->p[i].id));
	return fclose(f) ? -EIO : 0;
}

/* Per device, a block (blank line: gnuplot lifts the pen), in time order. */
static int write_bdirate(const char *dir, struct plot_side *sd)
{
	struct plot_vec *pv = &sd->v[V_BDIRATE];
	FILE *f = dat(dir, "bdirate", sd->tag);
	unsigned int k;
	size_t i;

	if (!f)
		return -errno;
	for (k = 0; k < sd->devs->n; k++) {
		for (i = 0; i < pv->n; i++)
			if (pv->p[i].id == (long)k)
				fprintf(f, "%.6f %.0f %.0f %u\n", pv->p[i].t,
					pv->p[i].v, pv->p[i].w, color(k));
		fprintf(f, "\n");
	}
	return fclose(f) ? -EIO : 0;
}

/* MB/s per bin, one gnuplot "index" block per device, all devices last. */
static int write_bw(const char *dir, struct plot_side *sd)
{
	FILE *f = dat(dir, "bw", sd->tag);
	unsigned int k, b;

	if (!f)
		return -errno;
	for (k = 0; k <= PLOT_ALL; k++) {
		if (!sd->used[k])
			continue;
		for (b = 0; b < sd->used[k]; b++)
			fprintf(f, "%.3f %.3f\n", (b + 0.5) * PLOT_BIN,
				sd->bins[k][b] * 4096 / 1e6 / PLOT_BIN);
		fprintf(f, "\n\n");
	}
	return fclose(f) ? -EIO : 0;
}

/* The CDF: latencies sorted, the share at or below each. */
static int write_cdf(const char *dir, struct plot_side *sd)
{
	struct plot_vec *pv = &sd->v[V_FSYNC];
	FILE *f = dat(dir, "fsync", sd->tag);
	size_t i;

	if (!f)
		return -errno;
	if (pv->n)	/* no samples: p may be NULL, which qsort may not take */
		qsort(pv->p, pv->n, sizeof(*pv->p), cmp_t);
	for (i = 0; i < pv->n; i++)
		fprintf(f, "%.6g %.6f\n", pv->p[i].t,
			(double)(i + 1) / (double)pv->n);
	return fclose(f) ? -EIO : 0;
}

static int side_write(const char *dir, struct plot_side *sd)
{
	int err;

	rank_writers(sd);
	if (sd->oom)
		return -ENOMEM;
	err = write_pts(dir, "pauses", sd->tag, &sd->v[V_SLEEPS], true);
	if (!err)
		err = write_pts(dir, "rate", sd->tag, &sd->v[V_RATE], true);
	if (!err)
		err = write_pts(dir, "chunks", sd->tag, &sd->v[V_CHUNKS], false);
	if (!err)
		err = write_pts(dir, "waits", sd->tag, &sd->v[V_WAITS], false);
	if (!err)
		err = write_bdirate(dir, sd);
	if (!err)
		err = write_bw(dir, sd);
	if (!err)
		err = write_cdf(dir, sd);
	return err;
}

static void side_free(struct plot_side *sd)
{
	unsigned int i;

	for (i = 0; i < NR_V; i++)
		free(sd->v[i].p);
	for (i = 0; i <= PLOT_ALL; i++)
		free(sd->bins[i]);
}

static int side_read(struct plot_side *sd, const char *trace, const char *dir)
{
	char line[1024];
	const char *base = strrchr(trace, '/');
	double t0 = -1;
	FILE *f = fopen(trace, "r");
	int err;

	if (!f) {
		err = -errno;
		bench_err("plot", "%s: %s", trace, strerror(errno));
		return err;
	}
	label_set(sd, base ? base + 1 : trace);
	side_read_lat(sd, trace);
	sd->dirty = dat(dir, "dirty", sd->tag);
	if (!sd->dirty) {
		err = -errno;
		bench_err("plot", "cannot write in %s: %s", dir,
			  strerror(errno));
		fclose(f);
		return err;
	}
	while (fgets(line, sizeof(line), f))
		plot_line(sd, line, &t0);
	fclose(f);
	err = fclose(sd->dirty) ? -EIO : 0;
	if (!err)
		err = side_write(dir, sd);
	if (err)
		bench_err("plot", "%s: %s", trace, strerror(-err));
	return err;
}

/* ------------------------------------------------------------------ */
/* The gnuplot script                                                  */

struct gp {
	FILE *f;
	bool first;
	const struct plot_side *sd;
	unsigned int n;
};

/* A: solid, filled circles; B: dashed, open squares. */
static int side_dt(unsigned int i)
{
	return i ? 2 : 1;
}

static int side_pt(unsigned int i)
{
	return i ? 4 : 7;
}

/* The same plot area in every plot and panel; the key right of it. */
static const char gp_margins[] =
	"set lmargin at screen 0.07\nset rmargin at screen 0.72\n";

__attribute__((format(printf, 2, 3)))
static void gp_item(struct gp *g, const char *fmt, ...)
{
	va_list ap;

	fprintf(g->f, "%s", g->first ? "plot NaN notitle, \\\n     " :
				       ", \\\n     ");
	g->first = false;
	va_start(ap, fmt);
	vfprintf(g->f, fmt, ap);
	va_end(ap);
}

static void gp_begin(struct gp *g, const char *png, const char *title,
		     const char *ylabel)
{
	fprintf(g->f, "reset\nset terminal pngcairo size 1200,650 noenhanced\n"
		      "set grid\nset key outside right top\n%s"
		      "set output '%s'\nset title \"%s\"\nset ylabel '%s'\n"
		      "set yrange [0:*]\n", gp_margins, png, title, ylabel);
	g->first = true;
}

static void gp_time(struct gp *g)
{
	double t = 0;
	unsigned int i;

	for (i = 0; i < g->n; i++)
		if (g->sd[i].t_end > t)
			t = g->sd[i].t_end;
	fprintf(g->f, "set xlabel 'seconds from the trace start'\n"
		      "set xrange [0:%.3f]\n", t > 0 ? t : 1);
}

static void gp_end(struct gp *g)
{
	if (g->first)	/* nothing at all: still a plot, and a key */
		gp_item(g, "keyentry with points pt -1 lc rgb 'white' title 'no events'");
	fprintf(g->f, "\n");
}

/* The key's side entries: how A and B are drawn, naming the policies. */
static void gp_key_sides(struct gp *g, const char *with)
{
	unsigned int i;

	for (i = 0; i < g->n; i++)
		gp_item(g, "keyentry with %s dt %d pt %d lc rgb 'black' title '%s'",
			with, side_dt(i), side_pt(i), g->sd[i].label);
}

static void gp_na(struct gp *g, unsigned int i, const char *events)
{
	gp_item(g, "keyentry with points pt -1 lc rgb 'white' title 'n/a for %c (no %s events)'",
		g->sd[i].tag, events);
}

/* Rows of series v over the sides; none: the y range is set, or gnuplot fails. */
static size_t gp_rows(struct gp *g, unsigned int v, bool log)
{
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < g->n; i++)
		n += g->sd[i].v[v].n;
	if (!n)
		fprintf(g->f, "set yrange [%s]\n", log ? "0.1:1000" : "0:1");
	return n;
}

static void gp_key_devs(struct gp *g)
{
	unsigned int k;

	for (k = 0; k < g->sd[0].devs->n; k++)
		gp_item(g, "keyentry with lines lw 6 lc rgb '#%06x' title 'device %s'",
			color(k), g->sd[0].devs->name[k]);
}

static void gp_key_writers(struct gp *g)
{
	unsigned int i, k, n = 0;

	for (i = 0; i < g->n; i++)
		if (g->sd[i].nr_writers > n)
			n = g->sd[i].nr_writers;
	for (k = 0; k < n && k < PLOT_KEY_WRITERS; k++)
		gp_item(g, "keyentry with points pt 5 lc rgb '#%06x' title 'writer %u'",
			color(k), k + 1);
	if (n > PLOT_KEY_WRITERS)
		gp_item(g, "keyentry with points pt -1 lc rgb 'white' title '(%u writers, colours repeat)'",
			n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * A start-up spike (ratelimits begin at their initial guess) hides the
 * rest: clip the y axis at twice the 95th percentile when more lies
 * above, and say so in the title.
 */
static void gp_yclip(struct gp *g, unsigned int v, bool second,
		     const char *title)
{
	size_t i, j, n = 0, above = 0;
	double *x, hi;

	for (i = 0; i < g->n; i++)
		n += g->sd[i].v[v].n * (second ? 2 : 1);
	x = n ? malloc(n * sizeof(double)) : NULL;
	fprintf(g->f, "set title \"%s\"\nset yrange [0:*]\n", title);
	if (!x)
		return;
	for (i = n = 0; i < g->n; i++)
		for (j = 0; j < g->sd[i].v[v].n; j++) {
			x[n++] = g->sd[i].v[v].p[j].v;
			if (second)
				x[n++] = g->sd[i].v[v].p[j].w;
		}
	qsort(x, n, sizeof(double), cmp_double);
	hi = 2 * x[(n - 1) * 95 / 100];
	for (i = 0; i < n; i++)
		above += x[i] > hi;
	if (above && hi > 0)
		fprintf(g->f, "set yrange [0:%.6g]\nset title \"%s (clipped at %.0f: %zu points above)\"\n",
			hi, title, hi, above);
	free(x);
}

static void gp_dirty(struct gp *g)
{
	static const char *const cols[] = {
		"dirty", "writeback", "bg_thresh", "thresh", "limit",
	};
	unsigned int c, i;

	gp_begin(g, "dirty.png", "global dirty state (global_dirty_state)",
		 "pages");
	gp_time(g);
	for (i = c = 0; i < g->n; i++)
		c += g->sd[i].nr_dirty > 0;
	if (!c)
		fprintf(g->f, "set yrange [0:1]\n");
	for (i = 0; i < g->n; i++) {
		if (!g->sd[i].nr_dirty) {
			gp_na(g, i, "global_dirty_state");
			continue;
		}
		for (c = 0; c < 5; c++)
			gp_item(g, "'dirty-%c.dat' using 1:%u with linespoints dt %d pt %d pi %lu lc rgb '#%06x' notitle",
				g->sd[i].tag, c + 2, side_dt(i), side_pt(i),
				g->sd[i].nr_dirty / 15 + 1, color(c));
	}
	gp_key_sides(g, "linespoints");
	for (c = 0; c < 5; c++)
		gp_item(g, "keyentry with lines lw 6 lc rgb '#%06x' title '%s'",
			color(c), cols[c]);
	gp_end(g);
}

static void gp_bw(struct gp *g)
{
	unsigned int i, k, blk;

	gp_begin(g, "bw.png", "written bandwidth per 250 ms\\nper device: writeback_single_inode wrote= (the flusher's)\\nall devices: global_dirty_state written= (fsync's writes too)",
		 "MB/s");
	gp_time(g);
	for (i = blk = 0; i < g->n; i++)
		for (k = 0; k <= PLOT_ALL; k++)
			blk += g->sd[i].used[k] > 0;
	if (!blk)
		fprintf(g->f, "set yrange [0:1]\n");
	for (i = 0; i < g->n; i++) {
		const struct plot_side *sd = &g->sd[i];

		for (k = blk = 0; k <= PLOT_ALL; k++) {
			if (!sd->used[k])
				continue;
			gp_item(g, "'bw-%c.dat' index %u using 1:2 with linespoints dt %d pt %d lw %d lc rgb '#%06x' notitle",
				sd->tag, blk++, side_dt(i), side_pt(i),
				k == PLOT_ALL ? 2 : 1,
				k == PLOT_ALL ? 0 : color(k));
		}
		if (!blk)
			gp_na(g, i, "writeback_single_inode or global_dirty_state");
	}
	gp_key_sides(g, "linespoints");
	gp_key_devs(g);
	gp_item(g, "keyentry with lines lw 2 lc rgb 'black' title 'all devices'");
	gp_end(g);
}

/* The bench's whole write calls' p99 (the table's "pause p99"). */
static double calls_p99(const struct plot_side *sd)
{
	const struct plot_vec *pv = &sd->v[V_CALLS];
	double *x = pv->n ? malloc(pv->n * sizeof(double)) : NULL, r;
	size_t i;

	if (!x)
		return 0;
	for (i = 0; i < pv->n; i++)
		x[i] = pv->p[i].t;
	qsort(x, pv->n, sizeof(double), cmp_double);
	r = x[(pv->n - 1) * 99 / 100];
	free(x);
	return r;
}

/* Log y: from below the shortest sleep or call p99 to above the longest. */
static void pauses_range(struct gp *g)
{
	double lo = 0, hi = 0, x;
	unsigned int i;
	size_t j;

	for (i = 0; i < g->n; i++) {
		const struct plot_vec *pv = &g->sd[i].v[V_SLEEPS];

		for (j = 0; j <= pv->n; j++) {
			x = j < pv->n ? pv->p[j].v : calls_p99(&g->sd[i]);
			if (x <= 0)
				continue;
			lo = !lo || x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
	}
	if (!hi)
		fprintf(g->f, "set yrange [0.1:1000]\n");
	else
		fprintf(g->f, "set yrange [%.3g:%.3g]\n", lo / 2, hi * 2);
}

static void gp_pauses(struct gp *g)
{
	char title[400];
	size_t len;
	unsigned int i;
	double p99;

	len = (size_t)snprintf(title, sizeof(title),
		"throttle sleeps: a point per sleep of one writer\\n"
		"(balance_dirty_pages pause > 0; 3.1: balance_dirty_start or _written to _wait)\\n"
		"not the table's pause: that is a whole write call (its p99: the flat lines)\\n"
		"no-sleep records (pause <= 0) left out:");
	for (i = 0; i < g->n && len < sizeof(title); i++)
		len += (size_t)snprintf(title + len, sizeof(title) - len,
					" %c %lu", g->sd[i].tag,
					g->sd[i].nosleep);
	gp_begin(g, "pauses.png", title, "sleep, ms (log)");
	gp_time(g);
	fprintf(g->f, "set logscale y\n");
	pauses_range(g);
	for (i = 0; i < g->n; i++) {
		if (!g->sd[i].v[V_SLEEPS].n)
			gp_na(g, i, "balance_dirty_pages or balance_dirty_wait");
		else
			gp_item(g, "'pauses-%c.dat' using 1:2:3 with points pt %d ps 0.6 lc rgb variable notitle",
				g->sd[i].tag, side_pt(i));
		p99 = calls_p99(&g->sd[i]);
		if (p99 > 0)
			gp_item(g, "%g with lines dt %d lw 2 lc rgb 'black' title '%c whole write call p99 %.3g ms'",
				p99, side_dt(i), g->sd[i].tag, p99);
	}
	gp_key_sides(g, "points");
	gp_key_writers(g);
	gp_end(g);
}

static void gp_ratelimit(struct gp *g)
{
	unsigned int i;

	fprintf(g->f, "reset\nset terminal pngcairo size 1200,900 noenhanced\n"
		      "set output 'ratelimit.png'\nset multiplot layout 2,1\n"
		      "set grid\nset key outside right top\n%s"
		      "set ylabel 'KiB/s'\n", gp_margins);
	g->first = true;
	gp_time(g);
	gp_yclip(g, V_RATE, false, "task_ratelimit of each writer (balance_dirty_pages)");
	gp_rows(g, V_RATE, false);
	for (i = 0; i < g->n; i++) {
		if (!g->sd[i].v[V_RATE].n)
			gp_na(g, i, "balance_dirty_pages task_ratelimit");
		else
			gp_item(g, "'rate-%c.dat' using 1:2:3 with points pt %d ps 0.4 lc rgb variable notitle",
				g->sd[i].tag, side_pt(i));
	}
	gp_key_sides(g, "points");
	gp_key_writers(g);
	gp_end(g);
	g->first = true;
	gp_yclip(g, V_BDIRATE, true, "per device (bdi_dirty_ratelimit): dirty_ratelimit thin, write_bw thick");
	gp_rows(g, V_BDIRATE, false);
	for (i = 0; i < g->n; i++) {
		if (!g->sd[i].v[V_BDIRATE].n) {
			gp_na(g, i, "bdi_dirty_ratelimit");
			continue;
		}
		gp_item(g, "'bdirate-%c.dat' using 1:2:4 with linespoints dt %d pt %d ps 0.6 lw 1 lc rgb variable notitle",
			g->sd[i].tag, side_dt(i), side_pt(i));
		gp_item(g, "'bdirate-%c.dat' using 1:3:4 with linespoints dt %d pt %d ps 0.6 lw 3 lc rgb variable notitle",
			g->sd[i].tag, side_dt(i), side_pt(i));
	}
	gp_key_sides(g, "linespoints");
	gp_key_devs(g);
	gp_end(g);
	fprintf(g->f, "unset multiplot\n");
}

static void gp_chunks(struct gp *g)
{
	unsigned int i, waits = 0;

	for (i = 0; i < g->n; i++)
		waits += g->sd[i].v[V_WAITS].n > 0;
	gp_begin(g, "chunks.png", waits ?
		 "writeback chunks (writeback_single_inode wrote= per call)\\nand no-progress waits (writeback_wait, marks on the right axis)" :
		 "writeback chunks (writeback_single_inode wrote= per call)",
		 "pages");
	gp_time(g);
	gp_rows(g, V_CHUNKS, false);
	if (waits)
		fprintf(g->f, "set y2range [0:1.2]\nset y2tics ('writeback_wait' 1)\n");
	for (i = 0; i < g->n; i++) {
		if (!g->sd[i].v[V_CHUNKS].n)
			gp_na(g, i, "writeback_single_inode");
		else
			gp_item(g, "'chunks-%c.dat' using 1:2:3 with points pt %d ps 0.8 lc rgb variable notitle",
				g->sd[i].tag, side_pt(i));
		if (!g->sd[i].v[V_WAITS].n)
			gp_na(g, i, "writeback_wait");
		else
			gp_item(g, "'waits-%c.dat' using 1:2:3 axes x1y2 with impulses dt %d lc rgb variable notitle",
				g->sd[i].tag, side_dt(i));
	}
	gp_key_sides(g, "points");
	gp_key_devs(g);
	gp_end(g);
}

static bool gp_fsync(struct gp *g)
{
	unsigned int i, any = 0;

	for (i = 0; i < g->n; i++)
		any += g->sd[i].v[V_FSYNC].n > 0;
	if (!any)
		return false;
	gp_begin(g, "fsync.png", "fsync latency CDF\\n(each uf_fsync of the fsync writers: the bench's samples, the table's fsync p50/p99)",
		 "share of fsyncs at or below");
	fprintf(g->f, "set xlabel 'fsync latency, ms (log)'\nset logscale x\n"
		      "set yrange [0:1]\n");
	for (i = 0; i < g->n; i++) {
		if (!g->sd[i].v[V_FSYNC].n)
			gp_na(g, i, "fsync latency");
		else
			gp_item(g, "'fsync-%c.dat' using 1:2 with linespoints dt %d pt %d pi %zu lw 2 lc rgb '#%06x' notitle",
				g->sd[i].tag, side_dt(i), side_pt(i),
				g->sd[i].v[V_FSYNC].n / 15 + 1, color(0));
	}
	gp_key_sides(g, "linespoints");
	gp_end(g);
	return true;
}

static bool gp_script(FILE *f, const struct plot_side *sd, unsigned int n)
{
	struct gp g = { .f = f, .sd = sd, .n = n };

	gp_dirty(&g);
	gp_bw(&g);
	gp_pauses(&g);
	gp_ratelimit(&g);
	gp_chunks(&g);
	return gp_fsync(&g);
}

int bench_plot_render(const char *dir, const char *const *traces,
		      unsigned int n)
{
	struct plot_devs devs = { 0 };
	struct plot_side sd[2];
	char path[512], cmd[1200];
	unsigned int i;
	bool fsync = false;
	FILE *g;
	int rc, err = 0;

	if (!dir || !traces || n < 1 || n > 2) {
		bench_err("plot", "give one trace, or two (A and B)");
		return -EINVAL;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		err = -errno;
		bench_err("plot", "mkdir %s: %s", dir, strerror(errno));
		return err;
	}
	memset(sd, 0, sizeof(sd));
	for (i = 0; i < n && !err; i++) {
		sd[i].tag = (char)('A' + i);
		sd[i].devs = &devs;
		err = side_read(&sd[i], traces[i], dir);
	}
	snprintf(path, sizeof(path), "%s/plot.gp", dir);
	g = err ? NULL : fopen(path, "w");
	if (!err && !g) {
		err = -errno;
		bench_err("plot", "%s: %s", path, strerror(errno));
	}
	if (g) {
		fprintf(g, "cd '%s'\n", dir);
		fsync = gp_script(g, sd, n);
		if (fclose(g))
			err = -EIO;
	}
	for (i = 0; i < n; i++)
		side_free(&sd[i]);
	if (err)
		return err;
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
	printf("plots:   %s/{dirty,bw,pauses,ratelimit,chunks%s}.png\n", dir,
	       fsync ? ",fsync" : "");
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
