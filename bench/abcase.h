/* SPDX-License-Identifier: MIT */
/*
 * bench/abcase.h - the cases of `uflush-bench ab`, named the way the
 * seeds' tables name theirs, and the comparison arithmetic of its table.
 *
 * A case name (canonical form; the parser also takes the prefix left out):
 *
 *   [sim:][JBOD-<n>HDD-][memcg=<SIZE>/][thresh=<SIZE>/]<dev>-<w><kind>[+<w2><kind2>]-<bs>-<c>p-<mem>-<limit>:<bg>-<len>
 *
 *   sim:           modelled devices (io/sim.c, data discarded) and a cache
 *                  whose frames hold no data (uf_cache_config.frames =
 *                  "none"), so the seeds' sizes fit; dev is hdd or ssd,
 *                  io/sim.c's models with their published defaults
 *   JBOD-<n>HDD-   n devices, each shaped into a slow disk (default: one)
 *   thresh=SIZE/   the seeds' group: the dirty limit in bytes (only and
 *                  always when <limit> is bytes; must equal it)
 *   dev            loop (a scratch loop device as it is), hdd (shaped:
 *                  BENCH_HDD_BW, BENCH_HDD_LAT_US), ssd (lighter shaping)
 *   w kind         writers: dd (sequential, each its own file), fio
 *                  (random, 30% reads, writes through the page API) or
 *                  fsync (small random writes, an fsync every 16) or
 *                  xfsdd (dd on a file whose inode every write dirties,
 *                  I_DIRTY_SYNC, and whose write_inode fails with
 *                  -EAGAIN while its writer is inside a write call: seed
 *                  000's XFS i_size under an ilock held across
 *                  balance_dirty_pages, L691-698 and L1930-1945)
 *   +w2 kind2      w2 more writers of kind2 beside them (the last w2
 *                  files), e.g. 2dd+1fsync: seed 000's flusher meeting an
 *                  inode whose I_SYNC an fsync holds
 *   bs             bytes per write call
 *   c p            CPUs the run is pinned to (at most the machine's)
 *   memcg=SIZE/    a memory domain of SIZE inside the cache (the frames
 *                  writers may use; dirty limits stay the cache's)
 *   mem            the cache's size (frames = mem / 4k)
 *   limit:bg       dirty limit, as bytes ("100M": vm.dirty_bytes) or as a
 *                  ratio ("20": vm.dirty_ratio), and dirty_background_ratio
 *   len            X (the run's --secs), "<n>s" seconds, or a SIZE: stop
 *                  after the writers wrote that much
 *
 * e.g. thresh=100M/loop-10dd-4k-2p-1024M-100M:10-X,
 *      sim:thresh=8M/hdd-2dd+1fsync-4k-2p-4096M-8M:10-60s and
 *      JBOD-4HDD-thresh=32M/hdd-10dd-1M-2p-128M-32M:10-4s.
 */
#ifndef UF_BENCH_ABCASE_H
#define UF_BENCH_ABCASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define AB_NAME_LEN		160
#define AB_MAX_DEVS		16
#define AB_MAX_WRITERS		1024	/* seed 001: 100 dd on each of 10 disks */
#define AB_MAX_CASES		32
/* What a frame of a frames="none" cache costs: its struct page, a PTE. */
#define AB_SIM_BYTES_PER_FRAME	80

/* The shaping of the device kinds (a 2012 SATA disk, a slow SSD). */
#define BENCH_HDD_BW		(30ull << 20)
#define BENCH_HDD_LAT_US	2000
#define BENCH_SSD_BW		(200ull << 20)
#define BENCH_SSD_LAT_US	100

enum ab_dev { AB_DEV_LOOP, AB_DEV_HDD, AB_DEV_SSD, AB_NR_DEVS };
enum ab_kind { AB_DD, AB_FIO, AB_FSYNC, AB_XFSDD, AB_NR_KINDS };
#define AB_KIND_LIST	"dd, fio, fsync or xfsdd"

struct ab_case {
	bool sim;			/* sim: devices modelled (io/sim.c) */
	unsigned int jbod;		/* 0: one device, no JBOD- prefix */
	uint64_t memcg;			/* bytes of a memory domain inside the
					 * cache (seed 003's memcg), 0: none */
	enum ab_dev dev;
	unsigned int writers;		/* in all, the +w2 ones included */
	enum ab_kind kind;
	unsigned int writers2;		/* the last writers2 are of kind2 */
	enum ab_kind kind2;
	uint64_t bs;
	unsigned int cpus;
	uint64_t mem;
	bool limit_bytes;		/* limit is vm.dirty_bytes */
	uint64_t limit;			/* bytes, or dirty_ratio percent */
	unsigned int bg_ratio;		/* dirty_background_ratio */
	unsigned int secs;		/* 0 with amount 0: X */
	uint64_t amount;		/* bytes written by all writers */
};

extern const char *const ab_dev_names[AB_NR_DEVS];
extern const char *const ab_kind_names[AB_NR_KINDS];

/*
 * Parse a case name.  -EINVAL on anything else, with what was wrong in why
 * (if why is set): a missing part, an unknown device or writer kind, a
 * number out of range, a thresh= that is not the limit.
 */
int ab_case_parse(const char *s, struct ab_case *c, char *why, size_t len);
/* The canonical name; parsing it gives c back. */
void ab_case_format(const struct ab_case *c, char *buf, size_t len);
/* How many devices the case runs on (1 or the JBOD count). */
unsigned int ab_case_devs(const struct ab_case *c);
/* The kind of the case's writer i (0-based): kind, or kind2 for the last
 * writers2. */
enum ab_kind ab_case_kind(const struct ab_case *c, unsigned int i);

/*
 * Hold a case to the machine before any device is made: -ENOMEM if its
 * cache (mem) is larger than mem bytes of memory (a sim: case, whose
 * frames hold no data, if its struct pages, AB_SIM_BYTES_PER_FRAME per
 * 4 KiB frame, are); 1 if it asks for more
 * CPUs than the cpus this process may run on, which it is capped to
 * (c->cpus = cpus); else 0.  why says which (0 for either: not checked).
 */
int ab_case_fit(struct ab_case *c, uint64_t mem, unsigned int cpus,
		char *why, size_t len);

/*
 * Sort `ab`'s positionals args[0..n-1]: a word that parses as a case
 * (ab_case_parse) is a case, any other must resolve as a policy spec
 * (uf_policy_resolve: "mainline,plugin=./x.so" has a '/' and is still a
 * policy).  The policies come first, two of them or none: spec[0..1] and
 * *nr_spec (0 or 2); the cases are args[*nr_spec..].  -EINVAL with why
 * set for a word that is neither, a policy after a case, or one policy
 * or more than two.
 */
int ab_split_args(char *const *args, unsigned int n, const char **spec,
		  unsigned int *nr_spec, char *why, size_t len);

/* ------------------------------------------------------------------ */
/* Job files (`ab --job FILE`)                                         */

#define AB_JOB_MAX_WORDS	96

/*
 * A job file in fio's ini conventions: `key=value` lines, '#' or ';'
 * comments, a [global] section holding ab's options by their long names
 * (dev may repeat; a flag takes 1/0, true/false or no value) and the two
 * policies (policy_a=, policy_b=), then one section per case, named by
 * the case or holding case=NAME.
 */
struct ab_job {
	unsigned int nr_words;		/* "--key=value" words, in file order */
	char *words[AB_JOB_MAX_WORDS];
	const char *spec[2];		/* NULL where not given */
	unsigned int nr_cases;
	const char *cases[AB_MAX_CASES];
	size_t used;
	char store[16384];
};

/*
 * Parse text (of file, for messages) into job; opts is the table of the
 * options [global] may set.  -EINVAL with "file:line: what" in why.
 */
int ab_job_parse(const char *text, const char *file,
		 const struct bench_opt *opts, struct ab_job *job, char *why,
		 size_t len);

/* ------------------------------------------------------------------ */
/* Built-in matrices                                                   */

/*
 * The seed's own figures for one row of a --sim matrix, as its mail
 * prints them (NAN where it gives none; note says why, e.g. "OOM").
 */
struct ab_seed_row {
	const char *name;		/* the seed's case name */
	double before, after, change;	/* change in percent */
	const char *note;
};

struct ab_matrix {
	const char *name;
	const char *about;		/* one line: which seed, what varies */
	const char *policy_a, *policy_b; /* the seed's before and after */
	const char *const *cases;	/* NULL-terminated case names; NULL: --sim only */
	/*
	 * --sim: the seed's own scale on modelled devices.  sim_cases are
	 * sim: names (NULL: no sim variant); sim_policy_a/b, where not NULL,
	 * name the seed table's kernels more closely than policy_a/b;
	 * seed_rows[i] is the seed's figure for sim_cases[i], from the mail
	 * seed_source names (subject, author, date), in seed_metric units.
	 */
	const char *const *sim_cases;
	const char *sim_policy_a, *sim_policy_b;
	const struct ab_seed_row *seed_rows;
	const char *seed_source;
	const char *seed_metric;
};

/* The built-in matrices; the last has name NULL. */
extern const struct ab_matrix ab_matrices[];
const struct ab_matrix *ab_matrix_find(const char *name);

/* ------------------------------------------------------------------ */
/* Comparison arithmetic                                               */

/*
 * One row of the A/B table: the medians of A's and B's repetitions, the
 * change from A to B in percent, each side's spread (half its min-max
 * range, in percent of its median) and whether the change is inside the
 * noise: the two min-max ranges overlap, or a side has one sample only
 * (no spread known).  change is NAN when A's median is not > 0.
 */
struct ab_cmp {
	double a, b;
	double change;			/* percent */
	double spread_a, spread_b;	/* percent */
	bool noise;
};

void ab_compare(const struct bench_samples *a, const struct bench_samples *b,
		struct ab_cmp *out);
/* The TOTAL row: sums of the medians; noise if every row is noise. */
void ab_compare_total(const struct ab_cmp *rows, unsigned int n,
		      struct ab_cmp *out);
/* "+12.3%", "-4.0%"; with " ~" when inside the noise; "-" for NAN. */
void ab_fmt_change(char *buf, size_t len, const struct ab_cmp *c);

#endif /* UF_BENCH_ABCASE_H */
