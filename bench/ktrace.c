// SPDX-License-Identifier: MIT
/*
 * bench/ktrace.c - the statistics kdiff compares, from ftrace text (a
 * kernel's trace_pipe or uflush's cfg.trace_path), and their capture from
 * the host kernel's tracefs (bench/ktrace.h).
 *
 * The event formats are Linux 6.18's (include/trace/events/writeback.h:
 * balance_dirty_pages, bdi_dirty_ratelimit, global_dirty_state and the
 * writeback_work_class events; include/trace/events/block.h:
 * block_rq_issue), which uflush prints in the same names and order.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "ktrace.h"

/* ------------------------------------------------------------------ */
/* Samples                                                             */

void kt_vec_add(struct kt_vec *x, double v)
{
	size_t cap;
	double *nv;

	if (x->n == x->cap) {
		cap = x->cap ? 2 * x->cap : 256;
		nv = realloc(x->v, cap * sizeof(*nv));
		if (!nv)
			return;		/* a sample lost, not a crash */
		x->v = nv;
		x->cap = cap;
	}
	x->v[x->n++] = v;
}

void kt_vec_free(struct kt_vec *x)
{
	free(x->v);
	memset(x, 0, sizeof(*x));
}

double kt_mean(const struct kt_vec *x)
{
	double s = 0;
	size_t i;

	if (!x->n)
		return NAN;
	for (i = 0; i < x->n; i++)
		s += x->v[i];
	return s / x->n;
}

double kt_quantile(const struct kt_vec *x, double q)
{
	if (!x->n || x->n > UINT32_MAX)
		return NAN;
	return bench_quantile(x->v, (unsigned int)x->n, q);
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */

/* " key=NUM" inside s; NAN if missing. */
static double field(const char *s, const char *key)
{
	char k[48];
	const char *p;

	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(s, k);
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

/* " bdi 7:3: ..." or " bdi 7:3 ..." at the start of s: is it want? */
static bool bdi_is(const char *s, const char *want)
{
	const char *p = strstr(s, "bdi ");
	size_t n;

	if (!*want)
		return true;
	if (!p)
		return false;
	p += 4;
	n = strlen(want);
	return !strncmp(p, want, n) && (p[n] == ':' || p[n] == ' ' ||
					 p[n] == '\0');
}

static void take(struct ktrace_stats *st, double t)
{
	if (!st->taken++)
		st->first_t = t;
	st->last_t = t;
}

/* The previous sample held from its time until t. */
static void gds_weigh(struct ktrace_stats *st, double t)
{
	double dt = t - st->gds_prev_t;

	if (!st->have_gds || dt <= 0)
		return;
	st->w_sum += dt;
	st->w_dirty += dt * st->prev_dirty;
	st->w_sp += dt * st->prev_sp;
	st->w_lim += dt * st->prev_lim;
	st->w_share += dt * st->prev_share;
	if (st->prev_dirty > st->prev_sp)
		st->w_above += dt;
}

static void ev_gds(struct ktrace_stats *st, const char *s, double t)
{
	double dirty = field(s, "dirty"), wb = field(s, "writeback");
	double bg = field(s, "bg_thresh"), thresh = field(s, "thresh");
	double limit = field(s, "limit"), freerun, hard;

	if (isnan(dirty) || isnan(wb) || isnan(bg) || isnan(thresh) ||
	    isnan(limit))
		return;
	take(st, t);
	gds_weigh(st, t);
	freerun = (thresh + bg) / 2;
	hard = limit > thresh ? limit : thresh;
	if (!st->nr_gds || thresh < st->thresh_min)
		st->thresh_min = thresh;
	if (!st->nr_gds || thresh > st->thresh_max)
		st->thresh_max = thresh;
	st->nr_gds++;
	st->have_gds = true;
	st->gds_prev_t = t;
	st->prev_dirty = dirty + wb;
	st->prev_sp = (hard + freerun) / 2;
	st->prev_lim = hard;
	st->prev_share = dirty + wb > 0 ? wb / (dirty + wb) : 0;
	kt_vec_add(&st->gds_t, t);
	kt_vec_add(&st->gds_dirty, st->prev_dirty);
	kt_vec_add(&st->gds_setpoint, st->prev_sp);
	kt_vec_add(&st->gds_limit, hard);
}

/* The rate the device's throttle had when the window opened. */
static void first_ratelimit(struct ktrace_stats *st, const char *s)
{
	if (isnan(st->rl_first))
		st->rl_first = field(s, "dirty_ratelimit");
}

static void ev_bdp(struct ktrace_stats *st, const char *s, double t)
{
	double pause = field(s, "pause"), wb_sp, wb_dirty;

	if (!bdi_is(s, st->f.bdi) || isnan(pause))
		return;
	take(st, t);
	first_ratelimit(st, s);
	kt_vec_add(&st->pause, pause);
	/* the device's own position, which the host's other bdis skew less */
	wb_sp = field(s, "wb_setpoint");
	if (isnan(wb_sp))
		wb_sp = field(s, "bdi_setpoint");
	wb_dirty = field(s, "wb_dirty");
	if (isnan(wb_dirty))
		wb_dirty = field(s, "bdi_dirty");
	if (wb_sp > 0 && !isnan(wb_dirty))
		kt_vec_add(&st->wb_dirty_sp, wb_dirty / wb_sp);
	/* 3.2's event has neither: only mainline's are compared */
	if (!isnan(field(s, "period")))
		kt_vec_add(&st->period, field(s, "period"));
	if (!isnan(field(s, "think")))
		kt_vec_add(&st->think, field(s, "think"));
	if (!isnan(field(s, "dirtied")))
		kt_vec_add(&st->dirtied, field(s, "dirtied"));
}

static void ev_ratelimit(struct ktrace_stats *st, const char *s, double t)
{
	double bw = field(s, "write_bw"), rl = field(s, "dirty_ratelimit");
	unsigned int n = st->f.nr_writers ? st->f.nr_writers : 1;

	if (!bdi_is(s, st->f.bdi) || isnan(bw) || isnan(rl))
		return;
	take(st, t);
	first_ratelimit(st, s);
	st->nr_rate_updates++;
	if (bw > 0)
		kt_vec_add(&st->rl_ratio, rl / (bw / n));
}

/* " key=INT" inside s, exactly (nr_pages starts at LONG_MAX). */
static bool field_ll(const char *s, const char *key, long long *v)
{
	char k[48];
	const char *p;

	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(s, k);
	if (!p)
		return false;
	*v = strtoll(p + strlen(k), NULL, 10);
	return true;
}

static void ev_work(struct ktrace_stats *st, const char *s, double t,
		    bool start)
{
	long long pages;

	if (!bdi_is(s, st->f.bdi) || !field_ll(s, "nr_pages", &pages))
		return;
	take(st, t);
	if (start) {
		st->start_pages = pages;
		st->have_start = true;
		return;
	}
	if (!st->have_start)
		return;		/* its start was before the window */
	st->have_start = false;
	st->passes++;
	kt_vec_add(&st->pass_pages, (double)(st->start_pages - pages));
}

/* " 7,3 WS 1048576 () 2048 + 2048 none,0,0 [comm]" */
static void ev_rq(struct ktrace_stats *st, const char *s, double t)
{
	char dev[32], rwbs[16];
	const char *plus;
	unsigned long sectors;

	if (sscanf(s, " %31s %15s", dev, rwbs) != 2)
		return;
	if (*st->f.dev && strcmp(dev, st->f.dev))
		return;
	if (!strchr(rwbs, 'W') || strchr(rwbs, 'D'))
		return;		/* reads, discards */
	plus = strstr(s, " + ");
	if (!plus || sscanf(plus + 3, "%lu", &sectors) != 1 || !sectors)
		return;		/* a flush without data */
	take(st, t);
	kt_vec_add(&st->rq_kib, sectors / 2.0);
}

/* What was dirty before the window: on a host, not all of it ours. */
static void pre_window(struct ktrace_stats *st, const char *s)
{
	double dirty = field(s, "dirty"), wb = field(s, "writeback");

	if (!isnan(dirty) && !isnan(wb))
		st->pre_dirty = dirty + wb;
}

void ktrace_stats_init(struct ktrace_stats *st, const struct ktrace_filter *f)
{
	memset(st, 0, sizeof(*st));
	st->f = *f;
	st->pre_dirty = NAN;
	st->rl_first = NAN;
}

/* "comm-pid [cpu] [flags] TS: event: rest": TS, event, rest. */
static bool split_line(const char *line, double *ts, char *ev, size_t len,
		       const char **rest)
{
	const char *p = strchr(line, ']');
	char fmt[48];
	int n = 0;

	if (!p || !strchr(line, '['))
		return false;
	while (*++p == ' ')
		;
	snprintf(fmt, sizeof(fmt), "%%lf: %%%zu[^:]:%%n", len - 1);
	if (sscanf(p, fmt, ts, ev, &n) != 2 || !n) {
		snprintf(fmt, sizeof(fmt), "%%*s %%lf: %%%zu[^:]:%%n", len - 1);
		n = 0;
		if (sscanf(p, fmt, ts, ev, &n) != 2 || !n)
			return false;
	}
	*rest = p + n;
	return true;
}

void ktrace_stats_line(struct ktrace_stats *st, const char *line)
{
	const char *s;
	char ev[64];
	double t;

	st->lines++;
	if (!split_line(line, &t, ev, sizeof(ev), &s))
		return;
	if (st->f.t1 > st->f.t0 && (t < st->f.t0 || t > st->f.t1)) {
		if (t < st->f.t0 && !strcmp(ev, "global_dirty_state"))
			pre_window(st, s);
		return;
	}
	if (!strcmp(ev, "global_dirty_state"))
		ev_gds(st, s, t);
	else if (!strcmp(ev, "balance_dirty_pages"))
		ev_bdp(st, s, t);
	else if (!strcmp(ev, "bdi_dirty_ratelimit"))
		ev_ratelimit(st, s, t);
	else if (!strcmp(ev, "writeback_start"))
		ev_work(st, s, t, true);
	else if (!strcmp(ev, "writeback_written"))
		ev_work(st, s, t, false);
	else if (!strcmp(ev, "block_rq_issue"))
		ev_rq(st, s, t);
}

void ktrace_stats_finish(struct ktrace_stats *st)
{
	if (st->f.t1 > st->f.t0)
		gds_weigh(st, st->f.t1);
	if (st->w_sum > 0) {
		st->dirty_mean = st->w_dirty / st->w_sum;
		st->setpoint_mean = st->w_sp / st->w_sum;
		st->limit_mean = st->w_lim / st->w_sum;
		st->wb_share = st->w_share / st->w_sum;
		st->above_setpoint_pct = 100 * st->w_above / st->w_sum;
	} else if (st->have_gds) {
		/* one sample, or all at one instant: it is the whole story */
		st->dirty_mean = st->prev_dirty;
		st->setpoint_mean = st->prev_sp;
		st->limit_mean = st->prev_lim;
		st->wb_share = st->prev_share;
		st->above_setpoint_pct = st->prev_dirty > st->prev_sp ? 100 : 0;
	} else {
		st->dirty_mean = st->setpoint_mean = st->limit_mean = NAN;
		st->wb_share = st->above_setpoint_pct = NAN;
	}
}

int ktrace_stats_file(struct ktrace_stats *st, const char *path)
{
	char line[2048];
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		ktrace_stats_line(st, line);
	fclose(f);
	return 0;
}

double ktrace_stats_secs(const struct ktrace_stats *st)
{
	if (st->f.t1 > st->f.t0)
		return st->f.t1 - st->f.t0;
	return st->taken > 1 ? st->last_t - st->first_t : NAN;
}

bool ktrace_rate_inherited(const struct ktrace_stats *st)
{
	return isfinite(st->rl_first) &&
	       st->rl_first < KTRACE_INIT_BW_KBPS * 7 / 8;
}

unsigned int ktrace_hz_nearest(double measured)
{
	static const unsigned int choice[] = { 100, 250, 300, 1000 };
	unsigned int i, pick = 0;
	double best = INFINITY;

	if (!(measured > 0))
		return 0;
	for (i = 0; i < sizeof(choice) / sizeof(choice[0]); i++) {
		if (fabs(measured - choice[i]) < best) {
			best = fabs(measured - choice[i]);
			pick = choice[i];
		}
	}
	return best <= pick / 10.0 ? pick : 0;
}

double ktrace_rate_updates_per_s(const struct ktrace_stats *st)
{
	double s = ktrace_stats_secs(st);

	return s > 0 ? st->nr_rate_updates / s : NAN;
}

double ktrace_passes_per_s(const struct ktrace_stats *st)
{
	double s = ktrace_stats_secs(st);

	return s > 0 ? st->passes / s : NAN;
}

void ktrace_stats_free(struct ktrace_stats *st)
{
	struct kt_vec *v[] = {
		&st->gds_t, &st->gds_dirty, &st->gds_setpoint, &st->gds_limit,
		&st->pause, &st->period, &st->think, &st->wb_dirty_sp,
		&st->dirtied, &st->rl_ratio,
		&st->pass_pages, &st->rq_kib,
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		kt_vec_free(v[i]);
}

/* ------------------------------------------------------------------ */
/* tracefs                                                             */

#define TRACEFS		"/sys/kernel/tracing"
#define TRACEFS_OLD	"/sys/kernel/debug/tracing"

static const char *tracefs;
static bool tracefs_mounted;		/* by us: unmounted at exit */
static struct ktrace_cap *held_caps;
static unsigned int nr_caps;

static void ktrace_at_exit(void)
{
	while (held_caps)
		ktrace_stop(held_caps);
	if (tracefs_mounted)
		umount(TRACEFS);
}

static bool has_instances(const char *root)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/instances", root);
	return !access(path, F_OK);
}

int ktrace_available(char *why, size_t len)
{
	static bool registered;

	if (tracefs)
		return 0;
	if (geteuid()) {
		snprintf(why, len, "not root: the host's tracefs and sysctls need root");
		return -EPERM;
	}
	if (!registered)
		registered = !atexit(ktrace_at_exit);
	if (has_instances(TRACEFS)) {
		tracefs = TRACEFS;
	} else if (!mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		tracefs_mounted = true;
		tracefs = TRACEFS;
	} else if (has_instances(TRACEFS_OLD)) {
		tracefs = TRACEFS_OLD;
	} else {
		snprintf(why, len, "no tracefs: %s has no instances/ and cannot be mounted (%s)",
			 TRACEFS, strerror(errno));
		return -ENOENT;
	}
	return 0;
}

static int put(const char *dir, const char *file, const char *s)
{
	char path[512];
	size_t n = strlen(s);
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, n) != (ssize_t)n)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

static void *pipe_copy(void *arg)
{
	struct ktrace_cap *c = arg;
	struct pollfd pfd = { .fd = c->pipe_fd, .events = POLLIN };
	static __thread char buf[65536];
	ssize_t n;

	for (;;) {
		n = read(c->pipe_fd, buf, sizeof(buf));
		if (n > 0) {
			c->bytes += fwrite(buf, 1, (size_t)n, c->out);
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (c->stop)
			break;		/* and the pipe is empty */
		poll(&pfd, 1, 100);
	}
	return NULL;
}

/* An event's filter (before it is enabled) and its enable. */
static int event_on(struct ktrace_cap *c, const char *ev, const char *filt)
{
	char sub[320];
	int err;

	snprintf(sub, sizeof(sub), "%s/events/%s", c->dir, ev);
	err = filt ? put(sub, "filter", filt) : 0;
	if (!err)
		err = put(sub, "enable", "1");
	if (err)
		snprintf(c->why, sizeof(c->why), "cannot enable %s%s%s: %s",
			 ev, filt ? " with filter " : "", filt ? filt : "",
			 strerror(-err));
	return err;
}

static int events_on(struct ktrace_cap *c, unsigned int maj,
		     unsigned int min, unsigned int events)
{
	static const char *const wb_bdi[] = {
		"writeback/balance_dirty_pages",
		"writeback/bdi_dirty_ratelimit",
	};
	static const char *const wb_name[] = {
		"writeback/writeback_start", "writeback/writeback_written",
	};
	char filt[96];
	unsigned int i;
	int err = 0;

	if (events & KTRACE_EV_WRITEBACK) {
		snprintf(filt, sizeof(filt), "bdi == \"%u:%u\"", maj, min);
		for (i = 0; i < 2 && !err; i++)
			err = event_on(c, wb_bdi[i], filt);
		snprintf(filt, sizeof(filt), "name == \"%u:%u\"", maj, min);
		for (i = 0; i < 2 && !err; i++)
			err = event_on(c, wb_name[i], filt);
		/* global: no device to filter on */
		if (!err)
			err = event_on(c, "writeback/global_dirty_state", NULL);
	}
	if ((events & KTRACE_EV_BLOCK) && !err) {
		/* dev_t in the kernel's encoding: MAJOR << 20 | MINOR */
		snprintf(filt, sizeof(filt), "dev == %lu",
			 ((unsigned long)maj << 20) | min);
		err = event_on(c, "block/block_rq_issue", filt);
	}
	return err;
}

static void cap_remove(struct ktrace_cap *c)
{
	if (c->pipe_fd >= 0)
		close(c->pipe_fd);
	c->pipe_fd = -1;
	if (c->out)
		fclose(c->out);
	c->out = NULL;
	if (c->made && rmdir(c->dir))
		fprintf(stderr, "uflush-bench: cannot remove the tracefs instance %s: %s\n",
			c->dir, strerror(errno));
	c->made = false;
}

int ktrace_start(struct ktrace_cap *c, const char *out_path,
		 unsigned int maj, unsigned int min, unsigned int events)
{
	char path[320];
	int err;

	memset(c, 0, sizeof(*c));
	c->pipe_fd = -1;
	err = ktrace_available(c->why, sizeof(c->why));
	if (err)
		return err;
	snprintf(c->dir, sizeof(c->dir), "%s/instances/uflush-kdiff-%d-%u",
		 tracefs, (int)getpid(), nr_caps++);
	if (mkdir(c->dir, 0755)) {
		err = -errno;
		snprintf(c->why, sizeof(c->why), "mkdir %s: %s", c->dir,
			 strerror(errno));
		return err;
	}
	c->made = true;
	c->out = fopen(out_path, "w");
	if (!c->out) {
		err = -errno;
		snprintf(c->why, sizeof(c->why), "%s: %s", out_path,
			 strerror(errno));
		goto fail;
	}
	/* tracing_on first off: only our window fills the buffer */
	err = put(c->dir, "tracing_on", "0");
	if (!err)
		err = put(c->dir, "trace_clock", "mono");
	if (!err)
		err = put(c->dir, "buffer_size_kb", "8192");
	if (err) {
		snprintf(c->why, sizeof(c->why), "cannot set up %s: %s",
			 c->dir, strerror(-err));
		goto fail;
	}
	err = events_on(c, maj, min, events);
	if (err)
		goto fail;
	snprintf(path, sizeof(path), "%s/trace_pipe", c->dir);
	c->pipe_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->pipe_fd < 0) {
		err = -errno;
		snprintf(c->why, sizeof(c->why), "%.250s: %s", path,
			 strerror(errno));
		goto fail;
	}
	err = -pthread_create(&c->th, NULL, pipe_copy, c);
	if (err) {
		snprintf(c->why, sizeof(c->why), "pthread_create: %s",
			 strerror(-err));
		goto fail;
	}
	c->running = true;
	c->next = held_caps;
	held_caps = c;
	err = put(c->dir, "tracing_on", "1");
	if (err) {
		snprintf(c->why, sizeof(c->why), "tracing_on: %s",
			 strerror(-err));
		ktrace_stop(c);
	}
	return err;
fail:
	cap_remove(c);
	return err;
}

int ktrace_stop(struct ktrace_cap *c)
{
	struct ktrace_cap **p;
	int err = 0;

	if (!c->running)
		return 0;
	put(c->dir, "tracing_on", "0");
	c->stop = true;
	pthread_join(c->th, NULL);
	c->running = false;
	for (p = &held_caps; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	if (c->out && fflush(c->out))
		err = -errno;
	cap_remove(c);
	return err;
}
