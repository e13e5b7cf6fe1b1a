// SPDX-License-Identifier: MIT
/*
 * io/sim.c - modelled devices and the "sim" engine (io/sim.h has the model).
 *
 * A device is a slot of a fixed table (pointers into it are checked, as
 * bdev handles are), with its image, its model and, while open, one
 * completion thread.  Submission runs the model under the device lock and
 * appends each request to one FIFO with the time it is due; the model
 * never completes a request before one that arrived earlier, so the FIFO is
 * also the delivery order.  The thread sleeps until the head is due, then
 * applies it to the image (a write's old bytes saved in an undo record
 * until a flush makes it durable) and delivers it outside the lock.
 *
 * The image is sparse: 4 KiB blocks in chunks of 512, allocated on first
 * write; an absent block reads as zeros.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/sim.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "kernel/sim.h"
#include "lib/slab.h"

#define SIM_MAX_DEVS	64
#define SIM_NAME_MAX	64
#define SIM_BLK		4096u
#define SIM_CHUNK	512u		/* blocks per chunk: 2 MiB */
#define SIM_MAX_SIZE	(1ull << 44)	/* 16 TiB */
#define SIM_MAX_QD	256u
#define SIM_SEEK_KNEE	0.5		/* sqrt below, linear above */
#define SIM_NS_US	1000ull
#define SIM_WIN		(8ull << 20)	/* alloc=stream: mballoc's 8 MiB */
#define SIM_WIN_BLKS	(SIM_WIN / SIM_BLK)
#define SIM_MAX_WCACHE_KB	(1u << 20)	/* 1 GiB */
#define SIM_NS_S	1000000000ull

#define SIM_ALL_OPS	((1u << UF_IO_READ) | (1u << UF_IO_WRITE) | \
			 (1u << UF_IO_FLUSH))

/* One request while the engine has it. */
struct sim_rq {
	struct uf_io_req *req;
	uint64_t wseq;		/* write: its number; flush: writes covered */
	uint64_t due;
	int res;
	bool done;		/* finished on the device before a timed cut */
	struct sim_rq *next;
};

/* A write applied but not durable: the bytes it replaced. */
struct sim_undo {
	uint64_t wseq, off, len;
	uint8_t *old;		/* NULL with keep_data=0 */
	struct sim_undo *next;	/* newer first */
};

struct uf_sim {
	bool in_use;		/* under sim_table_lock */
	bool open;
	char name[SIM_NAME_MAX];

	pthread_mutex_t lock;	/* everything below */
	pthread_cond_t wake;	/* new head, stall change, stop */
	struct uf_sim_model model;
	uint8_t ***chunks;	/* [size / 2 MiB][512] blocks */
	uint64_t nr_chunks;

	bool off;		/* power cut, until the next open */
	uint64_t nr_arrived;	/* requests since power-on */
	uint64_t cut_at;	/* armed cut: at this request, 0 = none */
	enum uf_sim_cut cut_mode;
	uint64_t cut_seed;
	uint64_t cut_ns;	/* armed timed cut: at this instant, 0 = none */
	enum uf_sim_cut cut_ns_mode;
	uint64_t cut_ns_seed;

	uint64_t wseq;		/* writes submitted */
	uint64_t done_wseq;	/* the last write applied */
	uint64_t durable_wseq;	/* writes up to here survive any cut */
	struct sim_undo *undo;

	struct uf_io_shape faults;
	uint64_t seen;		/* requests since the faults were set */
	uint64_t stall_until;

	struct uf_sim_stats st;

	/* the engine, while open */
	struct uf_io_queue *q;
	struct sim_rq *pool, *free;
	struct sim_rq *head, *tail;
	pthread_t thread;
	bool stop;
};

static struct uf_sim sim_table[SIM_MAX_DEVS];
static pthread_mutex_t sim_table_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

void uf_sim_config_init(struct uf_sim_config *c, enum uf_sim_kind kind)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->size = 1ull << 30;
	c->keep_data = true;
	c->seed = 1;
	if (kind == UF_SIM_HDD) {
		c->lbs = 512;
		c->qd = 1;
		c->max_kb = 1024;
		c->bw = 180ull << 20;
		c->cmd_us = 0;
		c->flush_us = 500;
		c->rpm = 7200;
		c->seek_t2t_us = 1000;
		c->seek_avg_us = 8500;
		c->seek_full_us = 16000;
		c->iface_bw = 300000000;	/* SATA 3 Gb/s, 8b/10b */
	} else {
		c->lbs = 4096;
		c->qd = 32;
		c->max_kb = 1024;
		c->bw = 500ull << 20;
		c->lat_us = 50;
		c->flush_us = 100;
	}
}

/* "123", "4k", "16G": powers of 1024. */
static int parse_size(const char *v, uint64_t *out)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end || (shift && n > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)n << shift;
	return 0;
}

static int parse_u32(const char *v, uint32_t *out)
{
	uint64_t n;

	if (parse_size(v, &n) || n > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)n;
	return 0;
}

static int config_set(struct uf_sim_config *c, const char *k, const char *v)
{
	static const struct { const char *k; size_t off; } u32s[] = {
		{ "lat_us", offsetof(struct uf_sim_config, lat_us) },
		{ "cmd_us", offsetof(struct uf_sim_config, cmd_us) },
		{ "flush_us", offsetof(struct uf_sim_config, flush_us) },
		{ "rpm", offsetof(struct uf_sim_config, rpm) },
		{ "seek_t2t_us", offsetof(struct uf_sim_config, seek_t2t_us) },
		{ "seek_avg_us", offsetof(struct uf_sim_config, seek_avg_us) },
		{ "seek_full_us", offsetof(struct uf_sim_config, seek_full_us) },
		{ "lbs", offsetof(struct uf_sim_config, lbs) },
		{ "qd", offsetof(struct uf_sim_config, qd) },
		{ "max_kb", offsetof(struct uf_sim_config, max_kb) },
		{ "wcache_kb", offsetof(struct uf_sim_config, wcache_kb) },
	};
	uint64_t n;
	size_t i;

	for (i = 0; i < sizeof(u32s) / sizeof(u32s[0]); i++)
		if (!strcmp(k, u32s[i].k))
			return parse_u32(v, (uint32_t *)((char *)c +
							 u32s[i].off));
	if (!strcmp(k, "size"))
		return parse_size(v, &c->size);
	if (!strcmp(k, "bw"))
		return parse_size(v, &c->bw);
	if (!strcmp(k, "iface_bw"))
		return parse_size(v, &c->iface_bw);
	if (!strcmp(k, "seed"))
		return parse_size(v, &c->seed);
	if (!strcmp(k, "alloc")) {
		if (strcmp(v, "none") && strcmp(v, "stream"))
			return -EINVAL;
		c->alloc_stream = v[0] == 's';
		return 0;
	}
	if (!strcmp(k, "keep_data")) {
		if (parse_size(v, &n) || n > 1)
			return -EINVAL;
		c->keep_data = n;
		return 0;
	}
	return -ENOENT;
}

static int config_check(const struct uf_sim_config *c)
{
	if (c->lbs != 512 && c->lbs != 4096)
		return -EINVAL;
	if (!c->size || c->size % SIM_BLK || c->size > SIM_MAX_SIZE)
		return -EINVAL;
	if (!c->qd || c->qd > SIM_MAX_QD || !c->bw || !c->max_kb ||
	    c->max_kb % 4)
		return -EINVAL;
	if (c->kind == UF_SIM_HDD &&
	    (!c->rpm || c->seek_t2t_us > c->seek_avg_us ||
	     c->seek_avg_us > c->seek_full_us))
		return -EINVAL;
	if (c->wcache_kb && (c->kind != UF_SIM_HDD || !c->iface_bw ||
			     c->wcache_kb > SIM_MAX_WCACHE_KB))
		return -EINVAL;
	return 0;
}

int uf_sim_config_parse(struct uf_sim_config *c, const char *spec)
{
	char buf[512], *item, *save = NULL, *eq;
	int ret;

	if (!c || !spec || strlen(spec) >= sizeof(buf))
		return -EINVAL;
	/* strtok_r skips empty items: a stray ',' is an error here */
	if (strstr(spec, ",,") || spec[0] == ',' ||
	    (*spec && spec[strlen(spec) - 1] == ',')) {
		pr_err("sim: spec \"%s\": empty item", spec);
		return -EINVAL;
	}
	strcpy(buf, spec);
	item = strtok_r(buf, ",", &save);
	if (!item || (strcmp(item, "hdd") && strcmp(item, "ssd"))) {
		pr_err("sim: spec \"%s\" must start with hdd or ssd", spec);
		return -EINVAL;
	}
	uf_sim_config_init(c, item[0] == 'h' ? UF_SIM_HDD : UF_SIM_SSD);
	while ((item = strtok_r(NULL, ",", &save))) {
		eq = strchr(item, '=');
		if (!eq) {
			pr_err("sim: \"%s\": not key=value", item);
			return -EINVAL;
		}
		*eq = '\0';
		ret = config_set(c, item, eq + 1);
		if (ret) {
			pr_err("sim: %s \"%s=%s\"", ret == -ENOENT ?
			       "unknown key" : "bad value", item, eq + 1);
			return -EINVAL;
		}
	}
	ret = config_check(c);
	if (ret)
		pr_err("sim: \"%s\": out of range (lbs 512/4096, size a multiple of 4 KiB up to 16 TiB, qd 1-256, bw > 0, max_kb a multiple of 4, hdd: t2t <= avg <= full, wcache_kb up to 1 GiB on an hdd with iface_bw > 0)",
		       spec);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The model                                                           */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	/* splitmix64 (Steele, Lea, Flood, OOPSLA 2014) */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double seek_at(const struct uf_sim_model *m, double x)
{
	if (x <= 0)
		return 0;
	if (x < SIM_SEEK_KNEE)
		return m->seek_a + m->seek_b * sqrt(x);
	return m->seek_c + m->seek_e * x;
}

/* Mean of t(x) under the density 2(1-x) of |u-v| for uniform u, v. */
static double seek_mean(const struct uf_sim_model *m)
{
	const int n = 4096;
	double s = 0, x;
	int i;

	for (i = 0; i < n; i++) {
		x = (i + 0.5) / n;
		s += seek_at(m, x) * 2 * (1 - x) / n;
	}
	return s;
}

/* c, e: the line from (knee, t(knee)) to (1, full). */
static void seek_line(struct uf_sim_model *m, double full)
{
	double tk = m->seek_a + m->seek_b * sqrt(SIM_SEEK_KNEE);

	m->seek_e = (full - tk) / (1 - SIM_SEEK_KNEE);
	m->seek_c = full - m->seek_e;
}

/* The mean is linear in b: two evaluations give the b that hits avg. */
static void seek_fit(struct uf_sim_model *m)
{
	const struct uf_sim_config *c = &m->cfg;
	double full = c->seek_full_us * 1e3, m0, m1;

	m->seek_a = c->seek_t2t_us * 1e3;
	m->seek_b = 0;
	seek_line(m, full);
	m0 = seek_mean(m);
	m->seek_b = 1;
	seek_line(m, full);
	m1 = seek_mean(m);
	m->seek_b = m1 > m0 ? (c->seek_avg_us * 1e3 - m0) / (m1 - m0) : 0;
	if (m->seek_b < 0)
		m->seek_b = 0;
	seek_line(m, full);
}

int uf_sim_model_init(struct uf_sim_model *m, const struct uf_sim_config *c)
{
	memset(m, 0, sizeof(*m));
	if (!c || config_check(c))
		return -EINVAL;
	m->cfg = *c;
	m->slot_free = kzalloc(c->qd * sizeof(*m->slot_free));
	if (!m->slot_free)
		return -ENOMEM;
	m->rng = c->seed;
	if (c->kind == UF_SIM_HDD)
		seek_fit(m);
	m->last_op = UF_IO_FLUSH;
	if (c->alloc_stream) {
		m->nr_win = (c->size + SIM_WIN - 1) / SIM_WIN;
		m->win = kzalloc(m->nr_win * sizeof(*m->win));
		m->win_written = kzalloc(m->nr_win * sizeof(*m->win_written));
		if (!m->win || !m->win_written) {
			uf_sim_model_exit(m);
			return -ENOMEM;
		}
	}
	return 0;
}

void uf_sim_model_exit(struct uf_sim_model *m)
{
	uint64_t i;

	for (i = 0; m->win_written && i < m->nr_win; i++)
		kfree(m->win_written[i]);
	kfree(m->win_written);
	kfree(m->win);
	kfree(m->seg);
	kfree(m->slot_free);
	m->seg = NULL;
	m->nr_seg = m->max_seg = 0;
	m->win_written = NULL;
	m->win = NULL;
	m->slot_free = NULL;
}

void uf_sim_model_reset(struct uf_sim_model *m)
{
	memset(m->slot_free, 0, m->cfg.qd * sizeof(*m->slot_free));
	m->head = 0;
	m->chan_free = m->last_start = m->last_done = 0;
	m->last_op = UF_IO_FLUSH;
	m->last_end = m->last_run = 0;
	/* what the drive's cache held is gone (the image's undo has it) */
	m->nr_seg = 0;
	m->wc_bytes = m->head_free = 0;
}

uint64_t uf_sim_seek_ns(const struct uf_sim_model *m, uint64_t d)
{
	return (uint64_t)seek_at(m, (double)d / (double)m->cfg.size);
}

double uf_sim_seek_mean_ns(const struct uf_sim_model *m)
{
	return seek_mean(m);
}

static uint64_t xfer_ns(const struct uf_sim_model *m, uint64_t len)
{
	return (uint64_t)(((unsigned __int128)len * SIM_NS_S + m->cfg.bw - 1) /
			  m->cfg.bw);
}

/* Commands a request needs: one per max_kb piece. */
static uint64_t nr_pieces(const struct uf_sim_model *m, uint64_t len)
{
	uint64_t max = (uint64_t)m->cfg.max_kb << 10;

	return len ? (len + max - 1) / max : 1;
}

/* Back merge: same kind, contiguous, the one before not started yet. */
static bool try_merge(struct uf_sim_model *m, enum uf_io_op op,
		      uint64_t off, uint64_t len, uint64_t arrival)
{
	uint64_t max = (uint64_t)m->cfg.max_kb << 10;

	if (op == UF_IO_FLUSH || op != m->last_op || off != m->last_end ||
	    m->last_start <= arrival || m->last_run + len > max)
		return false;
	m->nr_merged++;
	return true;
}

/* ---- alloc=stream: ext4's placement (io/sim.h, "Block placement") ---- */

static bool blk_written(const struct uf_sim_model *m, uint64_t blk)
{
	const uint8_t *bits = m->win_written[blk / SIM_WIN_BLKS];
	uint64_t i = blk % SIM_WIN_BLKS;

	return bits && (bits[i / 8] & (1u << (i % 8)));
}

bool uf_sim_model_hole(const struct uf_sim_model *m, enum uf_io_op op,
		       uint64_t off, uint64_t len)
{
	uint64_t b;

	if (!m->cfg.alloc_stream || op != UF_IO_READ || !len)
		return false;
	for (b = off / SIM_BLK; b <= (off + len - 1) / SIM_BLK; b++)
		if (blk_written(m, b))
			return false;
	return true;
}

uint64_t uf_sim_model_phys(const struct uf_sim_model *m, uint64_t off)
{
	uint64_t w = off / SIM_WIN;

	if (!m->cfg.alloc_stream || !m->win[w])
		return off;
	return (uint64_t)(m->win[w] - 1) * SIM_WIN + off % SIM_WIN;
}

/* A write reaches a window: place it at the stream goal if new. */
static int win_place(struct uf_sim_model *m, uint64_t w)
{
	uint64_t goal = m->win_next;

	if (m->win[w])
		return 0;
	if (!m->win_written[w]) {
		m->win_written[w] = kzalloc(SIM_WIN_BLKS / 8);
		if (!m->win_written[w])
			return -ENOMEM;
	}
	/* the media is full: where its offset says */
	if (goal >= m->nr_win || goal >= UINT32_MAX) {
		m->win[w] = (uint32_t)(w + 1);
		return 0;
	}
	m->win[w] = (uint32_t)(goal + 1);
	m->win_next = goal + 1;
	m->nr_win_alloc++;
	return 0;
}

static void blks_mark(struct uf_sim_model *m, uint64_t off, uint64_t len)
{
	uint64_t b, i;
	uint8_t *bits;

	for (b = off / SIM_BLK; b <= (off + len - 1) / SIM_BLK; b++) {
		bits = m->win_written[b / SIM_WIN_BLKS];
		i = b % SIM_WIN_BLKS;
		if (bits)
			bits[i / 8] |= (uint8_t)(1u << (i % 8));
	}
}

/*
 * The bytes from off (before end) that lie together on the media: to the
 * end of off's window under alloc=stream, else all of them.
 */
static uint64_t place_run(const struct uf_sim_model *m, uint64_t off,
			  uint64_t end)
{
	uint64_t n = SIM_WIN - off % SIM_WIN;

	return !m->cfg.alloc_stream || n > end - off ? end - off : n;
}

/* One revolution of the platter. */
static uint64_t rev_ns(const struct uf_sim_model *m)
{
	return 60 * SIM_NS_S / m->cfg.rpm;
}

/* One physically contiguous run on an hdd: its seek, rotation, transfer. */
static uint64_t hdd_run(struct uf_sim_model *m, uint64_t phys, uint64_t len)
{
	uint64_t rev = rev_ns(m), t = 0, d;

	if (phys != m->head) {
		d = phys > m->head ? phys - m->head : m->head - phys;
		t = uf_sim_seek_ns(m, d) + rng_next(&m->rng) % rev;
	}
	m->head = phys + len;
	return t + xfer_ns(m, len);
}

/*
 * The service time of an hdd request starting now, moving the head: one
 * run, or under alloc=stream a run per window, the holes of a read
 * skipped (a file system reads nothing there).
 */
static uint64_t hdd_cost(struct uf_sim_model *m, enum uf_io_op op,
			 uint64_t off, uint64_t len)
{
	uint64_t t = 0, end = off + len, n;

	if (!m->cfg.alloc_stream)
		return hdd_run(m, off, len);
	while (off < end) {
		n = place_run(m, off, end);
		if (op != UF_IO_READ || !uf_sim_model_hole(m, op, off, n))
			t += hdd_run(m, uf_sim_model_phys(m, off), n);
		off += n;
	}
	return t;
}

/* A write's windows get their places before it is timed. */
static void stream_alloc(struct uf_sim_model *m, enum uf_io_op op,
			 uint64_t off, uint64_t len)
{
	uint64_t w;

	if (!m->cfg.alloc_stream || op != UF_IO_WRITE || !len)
		return;
	for (w = off / SIM_WIN; w <= (off + len - 1) / SIM_WIN; w++)
		if (win_place(m, w))
			pr_warn("sim: no memory for a window's map: its writes count as holes");
	blks_mark(m, off, len);
}

/* ---- wcache: the drive's write cache (io/sim.h, "Write cache") ---- */

/*
 * From the head at instant t to phys: the seek, then the platter's turn
 * until phys comes under the head.  A byte's angle is its place in the
 * media rate's bytes per revolution; none where the last access ended.
 */
static uint64_t wc_position(const struct uf_sim_model *m, uint64_t phys,
			    uint64_t t)
{
	uint64_t rev = rev_ns(m), d, s, a, h;
	uint64_t tb = (uint64_t)((unsigned __int128)m->cfg.bw * rev /
				 SIM_NS_S);

	if (phys == m->head)
		return 0;
	if (!tb)
		tb = 1;
	d = phys > m->head ? phys - m->head : m->head - phys;
	s = uf_sim_seek_ns(m, d);
	a = (uint64_t)((unsigned __int128)(phys % tb) * rev / tb);
	h = (t + s) % rev;
	return s + (a >= h ? a - h : rev - h + a);
}

/* SPTF among the writes in the cache by @t; -1: none is in yet. */
static int wc_pick(const struct uf_sim_model *m, uint64_t t)
{
	uint64_t best_cost = UINT64_MAX, c;
	int best = -1;
	unsigned int i;

	for (i = 0; i < m->nr_seg; i++) {
		if (m->seg[i].accept > t)
			continue;
		c = wc_position(m, m->seg[i].phys, t);
		if (c < best_cost || (c == best_cost &&
				      m->seg[i].phys < m->seg[best].phys)) {
			best_cost = c;
			best = (int)i;
		}
	}
	return best;
}

static uint64_t wc_first_accept(const struct uf_sim_model *m)
{
	uint64_t a = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < m->nr_seg; i++)
		if (m->seg[i].accept < a)
			a = m->seg[i].accept;
	return a;
}

/* Destage up to max_kb of segment i from head_free on. */
static void wc_op(struct uf_sim_model *m, int i)
{
	struct uf_sim_seg *g = &m->seg[i];
	uint64_t n = (uint64_t)m->cfg.max_kb << 10, pos;

	if (n > g->len)
		n = g->len;
	pos = wc_position(m, g->phys, m->head_free);
	m->head_free += pos + xfer_ns(m, n);
	m->head = g->phys + n;
	m->nr_destage++;
	m->destage_pos_ns += pos;
	m->wc_bytes -= n;
	g->phys += n;
	g->len -= n;
	if (!g->len)
		m->seg[i] = m->seg[--m->nr_seg];
}

/* One destage op, idle until the first write is in if none is yet. */
static void wc_step(struct uf_sim_model *m)
{
	int i = wc_pick(m, m->head_free);

	if (i < 0) {
		m->head_free = wc_first_accept(m);
		i = wc_pick(m, m->head_free);
	}
	wc_op(m, i);
}

/* Every destage op that begins before t. */
static void wc_advance(struct uf_sim_model *m, uint64_t t)
{
	uint64_t a;
	int i;

	while (m->nr_seg && m->head_free < t) {
		i = wc_pick(m, m->head_free);
		if (i < 0) {
			a = wc_first_accept(m);
			if (a >= t)
				break;
			m->head_free = a;
			continue;
		}
		wc_op(m, i);
	}
}

/* A write's run joins the cache, merged with one it continues. */
static int wc_insert(struct uf_sim_model *m, uint64_t phys, uint64_t len,
		     uint64_t accept)
{
	struct uf_sim_seg *g;
	unsigned int i, max;

	for (i = 0; i < m->nr_seg; i++) {
		g = &m->seg[i];
		if (g->phys + g->len == phys) {
			g->len += len;
			return 0;
		}
	}
	if (m->nr_seg == m->max_seg) {
		max = m->max_seg ? 2 * m->max_seg : 64;
		g = krealloc(m->seg, max * sizeof(*g));
		if (!g)
			return -ENOMEM;
		m->seg = g;
		m->max_seg = max;
	}
	m->seg[m->nr_seg++] = (struct uf_sim_seg){ phys, len, accept };
	return 0;
}

/*
 * The media accessed from instant t by the arm: each window's run
 * positioned by wc_position, a read's holes skipped.  Returns the end.
 */
static uint64_t wc_media(struct uf_sim_model *m, enum uf_io_op op,
			 uint64_t off, uint64_t len, uint64_t t)
{
	uint64_t end = off + len, n, p;

	while (off < end) {
		n = place_run(m, off, end);
		if (op != UF_IO_READ || !uf_sim_model_hole(m, op, off, n)) {
			p = uf_sim_model_phys(m, off);
			t += wc_position(m, p, t) + xfer_ns(m, n);
			m->head = p + n;
		}
		off += n;
	}
	return t;
}

static uint64_t iface_ns(const struct uf_sim_model *m, uint64_t len)
{
	return (uint64_t)(((unsigned __int128)len * SIM_NS_S +
			   m->cfg.iface_bw - 1) / m->cfg.iface_bw);
}

/* A write into the cache, once it has room; through it if too big. */
static uint64_t wc_write(struct uf_sim_model *m, uint64_t off, uint64_t len,
			 uint64_t start, uint64_t cmds)
{
	uint64_t cap = (uint64_t)m->cfg.wcache_kb << 10, t = start, done;
	uint64_t end = off + len, n;
	bool waited = false;

	wc_advance(m, start);
	while (m->nr_seg && m->wc_bytes + len > cap) {
		wc_step(m);
		waited = true;
	}
	if (waited && m->head_free > t)
		t = m->head_free;
	if (len > cap) {
		if (m->head_free > t)
			t = m->head_free;
		m->head_free = wc_media(m, UF_IO_WRITE, off, len, t + cmds);
		return m->head_free;
	}
	done = t + cmds + iface_ns(m, len);
	for (; off < end; off += n) {
		n = place_run(m, off, end);
		if (wc_insert(m, uf_sim_model_phys(m, off), n, done)) {
			/* no memory for the record: written through */
			if (m->head_free < done)
				m->head_free = done;
			m->head_free = wc_media(m, UF_IO_WRITE, off, n,
						m->head_free);
			continue;
		}
		m->wc_bytes += n;
	}
	return done;
}

/* A read waits for the arm; a flush for the cache to empty. */
static uint64_t wc_read(struct uf_sim_model *m, uint64_t off, uint64_t len,
			uint64_t start, uint64_t cmds)
{
	wc_advance(m, start);
	if (m->head_free < start)
		m->head_free = start;
	m->head_free = wc_media(m, UF_IO_READ, off, len, m->head_free + cmds);
	return m->head_free;
}

static uint64_t wc_flush(struct uf_sim_model *m, uint64_t start,
			 uint64_t cost)
{
	wc_advance(m, start);
	while (m->nr_seg)
		wc_step(m);
	if (m->head_free < start)
		m->head_free = start;
	m->head_free += cost;
	return m->head_free;
}

/* The earliest-free slot; the start keeps arrival order. */
static unsigned int slot_pick(struct uf_sim_model *m, uint64_t arrival,
			      uint64_t *start)
{
	unsigned int i, best = 0;

	for (i = 1; i < m->cfg.qd; i++)
		if (m->slot_free[i] < m->slot_free[best])
			best = i;
	*start = arrival;
	if (m->slot_free[best] > *start)
		*start = m->slot_free[best];
	if (m->last_start > *start)
		*start = m->last_start;
	return best;
}

uint64_t uf_sim_model_schedule(struct uf_sim_model *m, enum uf_io_op op,
			       uint64_t off, uint64_t len, uint64_t arrival)
{
	uint64_t cmd = m->cfg.cmd_us * SIM_NS_US, start, done, x0;
	bool merged = try_merge(m, op, off, len, arrival);
	unsigned int s = slot_pick(m, arrival, &start);

	uint64_t cmds = (merged ? nr_pieces(m, len) - 1 : nr_pieces(m, len)) *
			cmd;

	stream_alloc(m, op, off, len);
	if (m->cfg.wcache_kb && op == UF_IO_FLUSH) {
		done = wc_flush(m, start, cmd + m->cfg.flush_us * SIM_NS_US);
	} else if (m->cfg.wcache_kb && op == UF_IO_WRITE) {
		done = wc_write(m, off, len, start, cmds);
	} else if (m->cfg.wcache_kb) {
		done = wc_read(m, off, len, start, cmds);
	} else if (op == UF_IO_FLUSH) {
		done = start + cmd + m->cfg.flush_us * SIM_NS_US;
	} else if (m->cfg.kind == UF_SIM_HDD) {
		done = start + hdd_cost(m, op, off, len) +
		       (merged ? nr_pieces(m, len) - 1 : nr_pieces(m, len)) *
		       cmd;
	} else {
		x0 = m->chan_free > start ? m->chan_free : start;
		m->chan_free = x0 + xfer_ns(m, len);
		done = start + (merged ? 0 : nr_pieces(m, len) * cmd) +
		       m->cfg.lat_us * SIM_NS_US;
		if (m->chan_free > done)
			done = m->chan_free;
	}
	/* completions in arrival order: the FIFO is the delivery order */
	if (done < m->last_done)
		done = m->last_done;
	m->slot_free[s] = done;
	m->last_start = start;
	m->last_done = done;
	m->last_run = merged ? m->last_run + len : len;
	m->last_op = op;
	m->last_end = off + len;
	return done;
}

/* ------------------------------------------------------------------ */
/* The image                                                           */

static uint8_t *blk_get(struct uf_sim *sim, uint64_t blk, bool create)
{
	uint64_t c = blk / SIM_CHUNK;
	uint8_t **chunk = sim->chunks[c];

	if (!chunk) {
		if (!create)
			return NULL;
		chunk = kzalloc(SIM_CHUNK * sizeof(*chunk));
		if (!chunk)
			return NULL;
		sim->chunks[c] = chunk;
	}
	if (!chunk[blk % SIM_CHUNK] && create)
		chunk[blk % SIM_CHUNK] = kzalloc(SIM_BLK);
	return chunk[blk % SIM_CHUNK];
}

static void img_read(struct uf_sim *sim, uint64_t off, void *buf, size_t len)
{
	uint8_t *dst = buf, *b;
	size_t n, o;

	while (len) {
		o = off % SIM_BLK;
		n = SIM_BLK - o < len ? SIM_BLK - o : len;
		b = blk_get(sim, off / SIM_BLK, false);
		if (b)
			memcpy(dst, b + o, n);
		else
			memset(dst, 0, n);
		dst += n;
		off += n;
		len -= n;
	}
}

/* -ENOMEM leaves a prefix written: only for ranges saved beforehand. */
static int img_write(struct uf_sim *sim, uint64_t off, const void *buf,
		     size_t len)
{
	const uint8_t *src = buf;
	uint8_t *b;
	size_t n, o;

	while (len) {
		o = off % SIM_BLK;
		n = SIM_BLK - o < len ? SIM_BLK - o : len;
		b = blk_get(sim, off / SIM_BLK, true);
		if (!b)
			return -ENOMEM;
		memcpy(b + o, src, n);
		src += n;
		off += n;
		len -= n;
	}
	return 0;
}

static void img_free(struct uf_sim *sim)
{
	uint64_t c;
	unsigned int i;

	if (!sim->chunks)
		return;
	for (c = 0; c < sim->nr_chunks; c++) {
		if (!sim->chunks[c])
			continue;
		for (i = 0; i < SIM_CHUNK; i++)
			kfree(sim->chunks[c][i]);
		kfree(sim->chunks[c]);
	}
	kfree(sim->chunks);
	sim->chunks = NULL;
}

/* Copy a request's buffers to/from the image; reads gather, writes flatten. */
static void req_read(struct uf_sim *sim, struct uf_io_req *req)
{
	uint64_t off = req->offset;
	unsigned int i;

	for (i = 0; i < req->nr_iov; i++) {
		if (sim->model.cfg.keep_data)
			img_read(sim, off, req->iov[i].iov_base,
				 req->iov[i].iov_len);
		else
			memset(req->iov[i].iov_base, 0, req->iov[i].iov_len);
		off += req->iov[i].iov_len;
	}
	if (!sim->model.cfg.keep_data)
		sim->st.zero_read_bytes += req->len;
}

/*
 * Apply a write, saving what it replaces.  With keep_data=0 only the
 * record is kept (the cut's counts).  -ENOMEM: nothing changed.
 */
static int req_apply(struct uf_sim *sim, struct uf_io_req *req, uint64_t wseq)
{
	struct sim_undo *u = kzalloc(sizeof(*u));
	uint64_t off = req->offset;
	unsigned int i;

	if (!u)
		return -ENOMEM;
	u->wseq = wseq;
	u->off = req->offset;
	u->len = req->len;
	if (sim->model.cfg.keep_data) {
		u->old = kmalloc(req->len);
		if (!u->old) {
			kfree(u);
			return -ENOMEM;
		}
		img_read(sim, off, u->old, req->len);
		for (i = 0; i < req->nr_iov; i++) {
			if (img_write(sim, off, req->iov[i].iov_base,
				      req->iov[i].iov_len)) {
				img_write(sim, u->off, u->old, u->len);
				kfree(u->old);
				kfree(u);
				return -ENOMEM;
			}
			off += req->iov[i].iov_len;
		}
	}
	u->next = sim->undo;
	sim->undo = u;
	sim->done_wseq = wseq;
	return 0;
}

static void undo_free(struct sim_undo *u)
{
	kfree(u->old);
	kfree(u);
}

/* A flush completed: the writes it covered are the media's now. */
static void undo_trim(struct uf_sim *sim)
{
	struct sim_undo **pp = &sim->undo, *u;

	while ((u = *pp)) {
		if (u->wseq <= sim->durable_wseq) {
			*pp = u->next;
			undo_free(u);
		} else {
			pp = &u->next;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Power cut                                                           */

static bool bit_test_set(uint8_t *map, uint64_t n)
{
	bool was = map[n / 8] & (1u << (n % 8));

	map[n / 8] |= (uint8_t)(1u << (n % 8));
	return was;
}

/*
 * Newest write first, each sector not settled yet keeps this write's
 * content (settles) or rolls back to what the write replaced.
 */
static void cut_tear(struct uf_sim *sim, unsigned int sec, uint64_t seed)
{
	uint64_t rng = seed, s, o;
	struct sim_undo *u;
	uint8_t *settled;

	settled = kzalloc(sim->model.cfg.size / sec / 8 + 1);
	if (!settled) {
		pr_err("sim %s: no memory to tear: dropping instead",
		       sim->name);
		sec = 0;
	}
	for (u = sim->undo; u; u = u->next) {
		for (o = 0; o < u->len; o += s) {
			/* a write's first and last sector may be partial */
			s = sec ? sec - (u->off + o) % sec : u->len;
			if (s > u->len - o)
				s = u->len - o;
			if (sec && bit_test_set(settled, (u->off + o) / sec))
				continue;
			if (sec && (rng_next(&rng) & 1))
				continue;	/* kept */
			img_write(sim, u->off + o, u->old + o, s);
			sim->st.cut_torn_sectors += sec != 0;
		}
	}
	kfree(settled);
}

/* Writes still in flight reach the cache first (keep, tear). */
static void cut_apply_inflight(struct uf_sim *sim)
{
	struct sim_rq *rq;

	for (rq = sim->head; rq; rq = rq->next)
		if (rq->req->op == UF_IO_WRITE && rq->res >= 0 && !rq->done &&
		    rq->wseq > sim->done_wseq &&
		    req_apply(sim, rq->req, rq->wseq))
			pr_warn("sim %s: no memory: a write in flight is lost in the cut",
				sim->name);
}

static void cut_locked(struct uf_sim *sim, enum uf_sim_cut mode,
		       uint64_t seed)
{
	struct sim_undo *u;
	struct sim_rq *rq;
	uint64_t now = uf_now_ns();

	if (sim->off)
		return;
	if (mode != UF_SIM_CUT_DROP)
		cut_apply_inflight(sim);
	sim->st.cut_lost_writes += sim->wseq - sim->durable_wseq;
	if (sim->model.cfg.keep_data && mode == UF_SIM_CUT_DROP) {
		for (u = sim->undo; u; u = u->next)
			img_write(sim, u->off, u->old, u->len);
	} else if (sim->model.cfg.keep_data && mode != UF_SIM_CUT_KEEP) {
		cut_tear(sim, mode == UF_SIM_CUT_TEAR512 ? 512 : 4096, seed);
	}
	while ((u = sim->undo)) {
		sim->undo = u->next;
		undo_free(u);
	}
	sim->off = true;
	sim->cut_at = 0;
	sim->st.power_cuts++;
	sim->st.last_cut_ns = now;
	sim->durable_wseq = sim->done_wseq = sim->wseq;
	for (rq = sim->head; rq; rq = rq->next) {
		if (rq->done)
			continue;	/* the device finished it in time */
		rq->res = -EIO;
		rq->due = now;
	}
	uf_cond_signal(&sim->wake);
}

/* ------------------------------------------------------------------ */
/* Engine: submission                                                  */

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b,
			   uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* shape.c's rule (shape_inject_eio), on the device's own counters. */
static bool inject_eio(struct uf_sim *sim, const struct uf_io_req *req)
{
	const struct uf_io_shape *f = &sim->faults;
	uint32_t ops = f->eio_ops ? f->eio_ops : 1u << UF_IO_WRITE;

	sim->seen++;
	if (f->eio_every_nth && sim->seen % f->eio_every_nth == 0)
		return true;
	if (!f->eio_len || !(ops & (1u << req->op)))
		return false;
	if (req->op == UF_IO_FLUSH)
		return true;
	return ranges_overlap(req->offset, req->len, f->eio_offset,
			      f->eio_len);
}

/* A hole read goes ahead of the queue: the device never sees it. */
static void rq_push(struct uf_sim *sim, struct sim_rq *rq)
{
	rq->next = sim->head;
	sim->head = rq;
	if (!sim->tail)
		sim->tail = rq;
	uf_cond_signal(&sim->wake);
}

static void rq_append(struct uf_sim *sim, struct sim_rq *rq)
{
	rq->next = NULL;
	if (sim->tail)
		sim->tail->next = rq;
	else
		sim->head = rq;
	sim->tail = rq;
}

/* Decide one request's fate and due time, under sim->lock. */
static void sim_one(struct uf_sim *sim, struct sim_rq *rq, uint64_t now)
{
	struct uf_io_req *req = rq->req;
	struct uf_sim_model *m = &sim->model;

	rq->res = 0;
	rq->wseq = 0;
	rq->done = false;
	if (!sim->off && ++sim->nr_arrived == sim->cut_at)
		cut_locked(sim, sim->cut_mode, sim->cut_seed);
	if (sim->off) {
		rq->res = -EIO;
		rq->due = now;
		sim->st.failed_off++;
	} else if (inject_eio(sim, req)) {
		rq->res = -EIO;
		rq->due = now > m->last_done ? now : m->last_done;
		m->last_done = rq->due;
		sim->st.eio_injected++;
	} else if (uf_sim_model_hole(m, req->op, req->offset, req->len)) {
		rq->due = now;
		m->nr_hole_reads++;
		rq_push(sim, rq);
		return;
	} else {
		if (req->op == UF_IO_WRITE)
			rq->wseq = ++sim->wseq;
		else if (req->op == UF_IO_FLUSH)
			rq->wseq = sim->done_wseq; /* completed before it */
		rq->due = uf_sim_model_schedule(m, req->op, req->offset,
						req->len, now);
	}
	rq_append(sim, rq);
}

static int sim_submit(struct uf_io_queue *q, struct uf_io_req **reqs,
		      unsigned int nr)
{
	struct uf_sim *sim = q->engine_data;
	struct sim_rq *rq, *got = NULL;
	bool was_empty;
	uint64_t now;
	unsigned int i;

	if (!uf_io_batch_valid(reqs, nr))
		return -EINVAL;
	pthread_mutex_lock(&sim->lock);
	for (i = 0, rq = sim->free; i < nr && rq; i++)
		rq = rq->next;
	if (i < nr) {
		pthread_mutex_unlock(&sim->lock);
		return -EBUSY;
	}
	was_empty = !sim->head;
	now = uf_now_ns();
	for (i = 0; i < nr; i++) {
		rq = sim->free;
		sim->free = rq->next;
		rq->req = reqs[i];
		sim_one(sim, rq, now);
		got = rq;
	}
	if (was_empty && got)
		uf_cond_signal(&sim->wake);
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Engine: completion                                                  */

/* The head is due: do what it does to the image; returns its result. */
static int sim_finish(struct uf_sim *sim, struct sim_rq *rq)
{
	struct uf_io_req *req = rq->req;

	if (rq->res < 0)
		return rq->res;
	switch (req->op) {
	case UF_IO_READ:
		req_read(sim, req);
		sim->st.reads++;
		sim->st.read_bytes += req->len;
		return (int)req->len;
	case UF_IO_WRITE:
		if (req_apply(sim, req, rq->wseq))
			return -ENOMEM;
		sim->st.writes++;
		sim->st.write_bytes += req->len;
		return (int)req->len;
	default:
		if (rq->wseq > sim->durable_wseq)
			sim->durable_wseq = rq->wseq;
		undo_trim(sim);
		sim->st.flushes++;
		return 0;
	}
}

/*
 * Until @until on uf_now_ns()'s clock (0: until woken).  Inside a world
 * that clock is virtual and the deadline is the completion's event: the
 * scheduler jumps to it when nothing else can run (kernel/sim.c).
 */
static void sim_sleep(struct uf_sim *sim, uint64_t until)
{
	struct timespec ts;

	if (uf_in_sim() && uf_sim_self()) {
		uf_sim_cond_wait(&sim->wake, &sim->lock, until);
		return;
	}
	if (!until) {
		pthread_cond_wait(&sim->wake, &sim->lock);
		return;
	}
	ts.tv_sec = (time_t)(until / SIM_NS_S);
	ts.tv_nsec = (long)(until % SIM_NS_S);
	pthread_cond_timedwait(&sim->wake, &sim->lock, &ts);
}

/* When the head may be delivered: its time, or the stall's end. */
static uint64_t rq_due(const struct uf_sim *sim, const struct sim_rq *rq)
{
	if (rq->due < sim->stall_until && rq->res >= 0 && !rq->done)
		return sim->stall_until;
	return rq->due;
}

static void *sim_thread(void *arg)
{
	struct uf_sim *sim = arg;
	struct uf_io_queue *q = sim->q;
	struct uf_io_req *req;
	struct sim_rq *rq;
	uint64_t now, at;
	int res;

	pthread_mutex_lock(&sim->lock);
	while (!sim->stop || sim->head) {
		rq = sim->head;
		now = uf_now_ns();
		at = rq ? rq_due(sim, rq) : 0;
		if (!rq || at > now) {
			sim_sleep(sim, at);
			continue;
		}
		sim->head = rq->next;
		if (!sim->head)
			sim->tail = NULL;
		res = rq->done ? rq->res : sim_finish(sim, rq);
		req = rq->req;
		rq->req = NULL;
		rq->next = sim->free;
		sim->free = rq;
		pthread_mutex_unlock(&sim->lock);
		q->complete(q, req, res);
		pthread_mutex_lock(&sim->lock);
	}
	pthread_mutex_unlock(&sim->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Engine: setup                                                       */

static struct uf_sim *sim_by_id(int id)
{
	if (id < 0 || id >= SIM_MAX_DEVS)
		return NULL;
	return &sim_table[id];
}

static int sim_setup(struct uf_io_queue *q)
{
	struct uf_sim *sim = sim_by_id(q->fd);
	unsigned int i;
	int ret;

	if (!sim || !q->depth)
		return -EINVAL;
	pthread_mutex_lock(&sim->lock);
	if (!sim->open || sim->q) {
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	sim->pool = kzalloc(q->depth * sizeof(*sim->pool));
	if (!sim->pool) {
		pthread_mutex_unlock(&sim->lock);
		return -ENOMEM;
	}
	sim->free = NULL;
	for (i = 0; i < q->depth; i++) {
		sim->pool[i].next = sim->free;
		sim->free = &sim->pool[i];
	}
	sim->head = sim->tail = NULL;
	sim->stop = false;
	sim->q = q;
	pthread_mutex_unlock(&sim->lock);
	ret = -uf_thread_create(&sim->thread, sim_thread, sim, "uf-sim");
	if (ret) {
		pthread_mutex_lock(&sim->lock);
		sim->q = NULL;
		kfree(sim->pool);
		sim->pool = NULL;
		pthread_mutex_unlock(&sim->lock);
		return ret;
	}
	q->engine_data = sim;
	return 0;
}

static void sim_teardown(struct uf_io_queue *q)
{
	struct uf_sim *sim = q->engine_data;

	pthread_mutex_lock(&sim->lock);
	sim->stop = true;
	uf_cond_signal(&sim->wake);
	pthread_mutex_unlock(&sim->lock);
	uf_thread_join(sim->thread);
	pthread_mutex_lock(&sim->lock);
	kfree(sim->pool);
	sim->pool = sim->free = NULL;
	sim->q = NULL;
	pthread_mutex_unlock(&sim->lock);
}

UF_IO_ENGINE(uf_sim_engine, "sim", sim);

/* ------------------------------------------------------------------ */
/* Devices                                                             */

static void time_cut(void *arg);

static bool sim_valid(const struct uf_sim *sim)
{
	uintptr_t p = (uintptr_t)sim, base = (uintptr_t)sim_table;

	if (p < base || p >= base + sizeof(sim_table) ||
	    (p - base) % sizeof(struct uf_sim))
		return false;
	return __atomic_load_n(&sim->in_use, __ATOMIC_ACQUIRE);
}

static struct uf_sim *sim_find_locked(const char *name)
{
	int i;

	for (i = 0; i < SIM_MAX_DEVS; i++)
		if (sim_table[i].in_use && !strcmp(sim_table[i].name, name))
			return &sim_table[i];
	return NULL;
}

static int sim_init(struct uf_sim *sim, const char *name,
		    const struct uf_sim_config *cfg)
{
	int ret;

	memset(sim, 0, sizeof(*sim));
	ret = uf_sim_model_init(&sim->model, cfg);
	if (ret)
		return ret;
	sim->nr_chunks = cfg->size / SIM_BLK / SIM_CHUNK + 1;
	sim->chunks = cfg->keep_data ?
		      kzalloc(sim->nr_chunks * sizeof(*sim->chunks)) : NULL;
	if (cfg->keep_data && !sim->chunks) {
		uf_sim_model_exit(&sim->model);
		return -ENOMEM;
	}
	snprintf(sim->name, sizeof(sim->name), "%s", name);
	pthread_mutex_init(&sim->lock, NULL);
	return 0;
}

/* The completion thread sleeps on CLOCK_MONOTONIC, uf_now_ns()'s clock. */
static int sim_cond_init(struct uf_sim *sim)
{
	pthread_condattr_t attr;
	int ret;

	ret = pthread_condattr_init(&attr);
	if (ret)
		return -ret;
	ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&sim->wake, &attr);
	pthread_condattr_destroy(&attr);
	return -ret;
}

int uf_sim_create(const char *name, const char *spec, struct uf_sim **out)
{
	struct uf_sim_config cfg;
	struct uf_sim *sim = NULL;
	int i, ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!name || !*name || strlen(name) >= SIM_NAME_MAX)
		return -EINVAL;
	ret = uf_sim_config_parse(&cfg, spec);
	if (ret)
		return ret;
	pthread_mutex_lock(&sim_table_lock);
	if (sim_find_locked(name)) {
		ret = -EEXIST;
		goto out;
	}
	for (i = 0; i < SIM_MAX_DEVS && !sim; i++)
		if (!sim_table[i].in_use)
			sim = &sim_table[i];
	ret = -ENOSPC;
	if (!sim)
		goto out;
	ret = sim_init(sim, name, &cfg);
	if (!ret && (ret = sim_cond_init(sim))) {
		pthread_mutex_destroy(&sim->lock);
		img_free(sim);
		uf_sim_model_exit(&sim->model);
	}
	if (!ret) {
		__atomic_store_n(&sim->in_use, true, __ATOMIC_RELEASE);
		*out = sim;
	}
out:
	pthread_mutex_unlock(&sim_table_lock);
	return ret;
}

int uf_sim_destroy(struct uf_sim *sim)
{
	struct sim_undo *u;
	int ret = 0;

	pthread_mutex_lock(&sim_table_lock);
	if (!sim_valid(sim))
		ret = -EBADF;
	else if (sim->open)
		ret = -EBUSY;
	if (ret) {
		pthread_mutex_unlock(&sim_table_lock);
		return ret;
	}
	__atomic_store_n(&sim->in_use, false, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sim_table_lock);
	uf_sim_event_cancel(time_cut, sim);
	while ((u = sim->undo)) {
		sim->undo = u->next;
		undo_free(u);
	}
	img_free(sim);
	uf_sim_model_exit(&sim->model);
	pthread_cond_destroy(&sim->wake);
	pthread_mutex_destroy(&sim->lock);
	return 0;
}

/* Opening is a reboot: power on, the model idle, the image as it is. */
int uf_sim_claim(const char *name, int *id, uint64_t *size,
		 unsigned int *lbs, unsigned int *max_pages)
{
	struct uf_sim *sim;
	int ret = 0;

	pthread_mutex_lock(&sim_table_lock);
	sim = sim_find_locked(name);
	if (!sim)
		ret = -ENOENT;
	else if (sim->open)
		ret = -EBUSY;
	if (!ret) {
		pthread_mutex_lock(&sim->lock);
		sim->open = true;
		sim->off = false;
		sim->nr_arrived = 0;
		sim->stall_until = 0;
		uf_sim_model_reset(&sim->model);
		/* in a world, the device's PRNG starts from its seed and
		 * the world's at each power-on: runs repeat exactly */
		if (uf_in_sim())
			sim->model.rng = sim->model.cfg.seed ^
					 uf_sim_seed_mix();
		pthread_mutex_unlock(&sim->lock);
		*id = (int)(sim - sim_table);
		*size = sim->model.cfg.size;
		*lbs = sim->model.cfg.lbs;
		*max_pages = sim->model.cfg.max_kb / 4;
	}
	pthread_mutex_unlock(&sim_table_lock);
	if (ret == -ENOENT)
		pr_warn("sim: no device named \"%s\" (uf_sim_create first)",
			name);
	return ret;
}

void uf_sim_unclaim(int id)
{
	struct uf_sim *sim = sim_by_id(id);

	if (!sim)
		return;
	pthread_mutex_lock(&sim_table_lock);
	sim->open = false;
	pthread_mutex_unlock(&sim_table_lock);
}

bool uf_sim_keeps_data(int id)
{
	struct uf_sim *sim = sim_by_id(id);

	return !sim || sim->model.cfg.keep_data;
}

/* The calls below: a valid device, its lock held around @expr. */
#define with_sim(sim, expr) ({						\
	int __r = -EBADF;						\
	if (sim_valid(sim)) {						\
		pthread_mutex_lock(&(sim)->lock);			\
		__r = (expr);						\
		pthread_mutex_unlock(&(sim)->lock);			\
	}								\
	__r;								\
})

static bool cut_mode_valid(enum uf_sim_cut mode)
{
	return mode == UF_SIM_CUT_DROP || mode == UF_SIM_CUT_KEEP ||
	       mode == UF_SIM_CUT_TEAR512 || mode == UF_SIM_CUT_TEAR4K;
}

static int power_cut(struct uf_sim *sim, enum uf_sim_cut mode, uint64_t seed)
{
	cut_locked(sim, mode, seed);
	return 0;
}

int uf_sim_power_cut(struct uf_sim *sim, enum uf_sim_cut mode, uint64_t seed)
{
	if (!cut_mode_valid(mode))
		return sim_valid(sim) ? -EINVAL : -EBADF;
	return with_sim(sim, power_cut(sim, mode, seed));
}

/*
 * Closed or off, the count starts at the next power-on (uf_sim_claim
 * zeroes nr_arrived): a crash test arms the next boot's cut before its
 * open, so the cut can land in the open's own recovery.
 */
static int cut_at(struct uf_sim *sim, uint64_t nth, enum uf_sim_cut mode,
		  uint64_t seed)
{
	bool counting = __atomic_load_n(&sim->open, __ATOMIC_ACQUIRE) &&
			!sim->off;

	sim->cut_at = nth ? (counting ? sim->nr_arrived : 0) + nth : 0;
	sim->cut_mode = mode;
	sim->cut_seed = seed;
	return 0;
}

int uf_sim_cut_at(struct uf_sim *sim, uint64_t nth, enum uf_sim_cut mode,
		  uint64_t seed)
{
	if (!cut_mode_valid(mode))
		return sim_valid(sim) ? -EINVAL : -EBADF;
	return with_sim(sim, cut_at(sim, nth, mode, seed));
}

/*
 * A timed cut happens at its instant, not when the completion thread
 * next runs: what the device finished by then (due by now: a write in
 * its cache, a flush's writes durable) is done, its delivery to the host
 * still to come; what it had not finished is in flight for the cut.
 */
static void finish_due(struct uf_sim *sim, uint64_t now)
{
	struct sim_rq *rq;

	for (rq = sim->head; rq && rq_due(sim, rq) <= now; rq = rq->next) {
		if (rq->done)
			continue;
		rq->res = sim_finish(sim, rq);
		rq->done = true;
	}
}

/* The world's event at sim->cut_ns (kernel/sim.c, uf_sim_event_at). */
static void time_cut(void *arg)
{
	struct uf_sim *sim = arg;
	uint64_t now;

	if (!sim_valid(sim))
		return;
	pthread_mutex_lock(&sim->lock);
	now = uf_now_ns();
	if (sim->cut_ns && sim->cut_ns <= now && !sim->off) {
		finish_due(sim, now);
		cut_locked(sim, sim->cut_ns_mode, sim->cut_ns_seed);
	}
	sim->cut_ns = 0;
	pthread_mutex_unlock(&sim->lock);
}

/* Lock order: sim->lock, then the world's (as the completion thread). */
static int cut_at_ns(struct uf_sim *sim, uint64_t t_ns, enum uf_sim_cut mode,
		     uint64_t seed)
{
	int ret;

	if (t_ns && t_ns < uf_now_ns())
		return -EINVAL;
	uf_sim_event_cancel(time_cut, sim);
	sim->cut_ns = 0;
	if (!t_ns)
		return 0;
	ret = uf_sim_event_at(t_ns, time_cut, sim);
	if (ret)
		return ret;
	sim->cut_ns = t_ns;
	sim->cut_ns_mode = mode;
	sim->cut_ns_seed = seed;
	return 0;
}

int uf_sim_cut_at_ns(struct uf_sim *sim, uint64_t t_ns, enum uf_sim_cut mode,
		     uint64_t seed)
{
	if (!sim_valid(sim))
		return -EBADF;
	if (!cut_mode_valid(mode))
		return -EINVAL;
	if (!uf_sim_active())
		return -EPERM;
	return with_sim(sim, cut_at_ns(sim, t_ns, mode, seed));
}

static int sim_read(struct uf_sim *sim, void *buf, size_t len, uint64_t off)
{
	if (len > sim->model.cfg.size || off > sim->model.cfg.size - len)
		return -ERANGE;
	if (sim->model.cfg.keep_data)
		img_read(sim, off, buf, len);
	else
		memset(buf, 0, len);
	return 0;
}

int uf_sim_read(struct uf_sim *sim, void *buf, size_t len, uint64_t off)
{
	if (!buf && len)
		return sim_valid(sim) ? -EINVAL : -EBADF;
	return with_sim(sim, sim_read(sim, buf, len, off));
}

static bool blk_zero(const uint8_t *b)
{
	unsigned int i;

	for (i = 0; i < SIM_BLK; i++)
		if (b[i])
			return false;
	return true;
}

/* FNV-1a over (block number, bytes) of every non-zero block, in order. */
static int image_hash(struct uf_sim *sim, uint64_t *hash)
{
	uint64_t h = 0xcbf29ce484222325ull, c, blk;
	const uint8_t *b;
	unsigned int i, j;

	for (c = 0; sim->chunks && c < sim->nr_chunks; c++) {
		for (i = 0; sim->chunks[c] && i < SIM_CHUNK; i++) {
			b = sim->chunks[c][i];
			if (!b || blk_zero(b))
				continue;
			blk = c * SIM_CHUNK + i;
			for (j = 0; j < 8; j++)
				h = (h ^ ((blk >> (8 * j)) & 0xff)) *
				    0x100000001b3ull;
			for (j = 0; j < SIM_BLK; j++)
				h = (h ^ b[j]) * 0x100000001b3ull;
		}
	}
	*hash = h;
	return 0;
}

int uf_sim_image_hash(struct uf_sim *sim, uint64_t *hash)
{
	if (!hash)
		return sim_valid(sim) ? -EINVAL : -EBADF;
	return with_sim(sim, image_hash(sim, hash));
}

static int get_stats(struct uf_sim *sim, struct uf_sim_stats *st)
{
	*st = sim->st;
	st->merged = sim->model.nr_merged;
	st->hole_reads = sim->model.nr_hole_reads;
	st->placed_windows = sim->model.nr_win_alloc;
	return 0;
}

int uf_sim_get_stats(struct uf_sim *sim, struct uf_sim_stats *st)
{
	if (!st)
		return sim_valid(sim) ? -EINVAL : -EBADF;
	return with_sim(sim, get_stats(sim, st));
}

static int set_faults(struct uf_sim *sim, const struct uf_io_shape *f)
{
	sim->faults = *f;
	sim->seen = 0;
	return 0;
}

int uf_sim_set_faults(struct uf_sim *sim, const struct uf_io_shape *f)
{
	if (!f || f->bw_bytes_per_sec || f->latency_us ||
	    (f->eio_ops & ~SIM_ALL_OPS))
		return sim_valid(sim) ? -EINVAL : -EBADF;
	return with_sim(sim, set_faults(sim, f));
}

static int stall(struct uf_sim *sim, unsigned int ms)
{
	sim->stall_until = uf_now_ns() + (uint64_t)ms * 1000000ull;
	uf_cond_signal(&sim->wake);
	return 0;
}

int uf_sim_stall(struct uf_sim *sim, unsigned int ms)
{
	return with_sim(sim, stall(sim, ms));
}
