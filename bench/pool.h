/* SPDX-License-Identifier: MIT */
/*
 * bench/pool.h - the pure parts of `uflush-bench pool` (bench/pool.c): the
 * key generators, the latency histogram and the operation mix.  Header
 * only, so that tests/test_pool.c checks them without linking pool.c.
 *
 *   zipf      Gray, Sundaresan, Englert, Baclawski, Weinberger, "Quickly
 *             generating billion-record synthetic databases", SIGMOD 1994
 *             (the inverse-CDF approximation of its Zipfian generator), as
 *             YCSB's ZipfianGenerator implements it; scrambled as YCSB's
 *             ScrambledZipfianGenerator: the rank is hashed (FNV-1a, 64
 *             bits, over its 8 bytes) modulo the key count, so that the
 *             hot keys are spread over the file instead of its head (YCSB
 *             draws the rank over 10^10 items before the modulo; here over
 *             the key count itself, so that the top ranks' frequencies are
 *             exactly the formula's);
 *   uniform   every key alike;
 *   pool_hist an HDR-style histogram: 32 log-linear buckets per power of
 *             two (a bucket is at most 1/32 of its value wide), exact
 *             below 64;
 *   pool_mix  YCSB's core workloads A (50% reads, 50% updates), B (95/5),
 *             C (reads only) and a write-heavy W (10/90, an fsync every
 *             fsync_every updates of a thread).
 */
#ifndef UF_BENCH_POOL_H
#define UF_BENCH_POOL_H

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"

/* ------------------------------------------------------------------ */
/* Keys                                                                */

enum pool_dist { POOL_ZIPF, POOL_UNIFORM, POOL_NR_DISTS };

#define POOL_THETA	0.99	/* YCSB's ZIPFIAN_CONSTANT */

struct pool_zipf {
	uint64_t n;
	double theta, alpha, zetan, eta, half_pow_theta;
	bool scramble;
};

/* zeta(n, theta) = sum of 1 / i^theta for i = 1..n. */
static inline double pool_zeta(uint64_t n, double theta)
{
	double sum = 0;
	uint64_t i;

	for (i = 1; i <= n; i++)
		sum += pow((double)i, -theta);
	return sum;
}

/* -EINVAL unless n >= 2 and 0 < theta < 1 (where the formula holds). */
static inline int pool_zipf_init(struct pool_zipf *z, uint64_t n,
				 double theta, bool scramble)
{
	if (n < 2 || !(theta > 0 && theta < 1))
		return -EINVAL;
	z->n = n;
	z->theta = theta;
	z->scramble = scramble;
	z->alpha = 1 / (1 - theta);
	z->zetan = pool_zeta(n, theta);
	z->half_pow_theta = pow(0.5, theta);
	z->eta = (1 - pow(2.0 / n, 1 - theta)) /
		 (1 - pool_zeta(2, theta) / z->zetan);
	return 0;
}

/* FNV-1a over the 8 bytes of v, low byte first (YCSB's fnvhash64). */
static inline uint64_t pool_fnv64(uint64_t v)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int i;

	for (i = 0; i < 8; i++) {
		h ^= v & 0xff;
		h *= 0x100000001b3ull;
		v >>= 8;
	}
	return h;
}

/* A double in [0, 1) from 53 random bits. */
static inline double pool_unit(uint64_t *rng)
{
	return (bench_xorshift64(rng) >> 11) * 0x1p-53;
}

/* Rank 0 (the most frequent) .. n - 1 for a uniform u in [0, 1). */
static inline uint64_t pool_zipf_rank(const struct pool_zipf *z, double u)
{
	double uz = u * z->zetan;
	uint64_t r;

	/* ranks 0 and 1 exactly, the rest from the approximated inverse CDF */
	if (uz < 1)
		return 0;
	if (uz < 1 + z->half_pow_theta)
		return 1;
	r = (uint64_t)(z->n * pow(z->eta * u - z->eta + 1, z->alpha));
	return r < z->n ? r : z->n - 1;
}

static inline uint64_t pool_zipf_next(const struct pool_zipf *z,
				      uint64_t *rng)
{
	uint64_t r = pool_zipf_rank(z, pool_unit(rng));

	/* non-negative before the modulo, as YCSB's Math.abs makes it */
	return z->scramble ? (pool_fnv64(r) & INT64_MAX) % z->n : r;
}

/* The next key of dist over z->n keys. */
static inline uint64_t pool_key(enum pool_dist dist, const struct pool_zipf *z,
				uint64_t *rng)
{
	if (dist == POOL_ZIPF)
		return pool_zipf_next(z, rng);
	return bench_xorshift64(rng) % z->n;
}

/* ------------------------------------------------------------------ */
/* Latency histogram                                                   */

#define POOL_HIST_SUB_BITS	5
#define POOL_HIST_SUB		(1u << POOL_HIST_SUB_BITS)	/* 32 */
#define POOL_HIST_EXACT		(2 * POOL_HIST_SUB)		/* 64 */
#define POOL_HIST_BUCKETS	(POOL_HIST_EXACT + \
				 (64 - POOL_HIST_SUB_BITS - 1) * POOL_HIST_SUB)

struct pool_hist {
	uint64_t n;
	uint64_t max;
	uint64_t count[POOL_HIST_BUCKETS];
};

static inline unsigned int pool_hist_bucket(uint64_t v)
{
	unsigned int e;

	if (v < POOL_HIST_EXACT)
		return (unsigned int)v;
	e = 63 - __builtin_clzll(v);	/* >= 6 */
	/* the top 6 bits: 32 sub-buckets of the octave [2^e, 2^(e+1)) */
	return POOL_HIST_EXACT + (e - POOL_HIST_SUB_BITS - 1) * POOL_HIST_SUB +
	       (unsigned int)((v >> (e - POOL_HIST_SUB_BITS)) - POOL_HIST_SUB);
}

/* The middle of bucket b: at most 1/64 of a value away from it. */
static inline double pool_hist_value(unsigned int b)
{
	unsigned int e, m;
	double lo, width;

	if (b < POOL_HIST_EXACT)
		return b;
	e = (b - POOL_HIST_EXACT) / POOL_HIST_SUB + POOL_HIST_SUB_BITS + 1;
	m = (b - POOL_HIST_EXACT) % POOL_HIST_SUB + POOL_HIST_SUB;
	width = ldexp(1, (int)(e - POOL_HIST_SUB_BITS));
	lo = m * width;
	return lo + (width - 1) / 2;
}

static inline void pool_hist_add(struct pool_hist *h, uint64_t v)
{
	h->count[pool_hist_bucket(v)]++;
	h->n++;
	if (v > h->max)
		h->max = v;
}

static inline void pool_hist_merge(struct pool_hist *to,
				   const struct pool_hist *from)
{
	unsigned int b;

	for (b = 0; b < POOL_HIST_BUCKETS; b++)
		to->count[b] += from->count[b];
	to->n += from->n;
	if (from->max > to->max)
		to->max = from->max;
}

/*
 * The q-quantile (0 < q <= 1): the value of the bucket holding the
 * ceil(q * n)-th smallest sample (nearest rank), never above the largest
 * sample, which q = 1 gives exactly.  NAN if empty.
 */
static inline double pool_hist_quantile(const struct pool_hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned int b;
	double v;

	if (!h->n)
		return NAN;
	rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	if (rank >= h->n)
		return (double)h->max;
	for (b = 0; b < POOL_HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= rank)
			break;
	}
	v = pool_hist_value(b < POOL_HIST_BUCKETS ? b : POOL_HIST_BUCKETS - 1);
	return v < (double)h->max ? v : (double)h->max;
}

/* ------------------------------------------------------------------ */
/* Operation mix                                                       */

enum pool_mix_id { POOL_MIX_A, POOL_MIX_B, POOL_MIX_C, POOL_MIX_W,
		   POOL_NR_MIXES };

enum pool_op { POOL_READ, POOL_UPDATE };

struct pool_mix {
	unsigned int read_pct;		/* reads of 100 operations */
	bool fsyncs;			/* an fsync every fsync_every updates */
};

static const struct pool_mix pool_mixes[POOL_NR_MIXES] = {
	[POOL_MIX_A] = { 50, false },
	[POOL_MIX_B] = { 95, false },
	[POOL_MIX_C] = { 100, false },
	[POOL_MIX_W] = { 10, true },
};

/* What one thread did: its operations by kind. */
struct pool_tally {
	uint64_t reads, updates, fsyncs;
};

static inline enum pool_op pool_next_op(const struct pool_mix *m,
					uint64_t *rng)
{
	return bench_xorshift64(rng) % 100 < m->read_pct ? POOL_READ :
							   POOL_UPDATE;
}

/*
 * Count op in t; true if an fsync is due after it (an update that is the
 * fsync_every-th of this thread's since the last one, in a mix with them).
 */
static inline bool pool_account(const struct pool_mix *m,
				unsigned int fsync_every,
				struct pool_tally *t, enum pool_op op)
{
	if (op == POOL_READ) {
		t->reads++;
		return false;
	}
	t->updates++;
	if (!m->fsyncs || !fsync_every || t->updates % fsync_every)
		return false;
	t->fsyncs++;
	return true;
}

#endif /* UF_BENCH_POOL_H */
