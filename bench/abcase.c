// SPDX-License-Identifier: MIT
/*
 * bench/abcase.c - the case names of `uflush-bench ab` (bench/abcase.h),
 * its built-in matrices and the arithmetic of its comparison table.  Pure:
 * linked into the tests too.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abcase.h"

const char *const ab_dev_names[AB_NR_DEVS] = { "loop", "hdd", "ssd" };
const char *const ab_kind_names[AB_NR_KINDS] = {
	"dd", "fio", "fsync", "xfsdd",
};

#define AB_MAX_CPUS	1024

__attribute__((format(printf, 3, 4)))
static int bad(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A decimal number at *s (advanced past it) in [min, max]. */
static int take_uint(const char **s, unsigned int min, unsigned int max,
		     unsigned int *out)
{
	char *end;
	unsigned long v;

	if (**s < '0' || **s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(*s, &end, 10);
	if (errno || v < min || v > max)
		return -EINVAL;
	*s = end;
	*out = (unsigned int)v;
	return 0;
}

/* A size in [*s, up to stop) (advanced past it). */
static int take_size(const char **s, char stop, uint64_t *out)
{
	const char *e = stop ? strchr(*s, stop) : *s + strlen(*s);
	char buf[32];
	size_t n;

	if (!e)
		return -EINVAL;
	n = (size_t)(e - *s);
	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, *s, n);
	buf[n] = '\0';
	if (bench_parse_size(buf, out))
		return -EINVAL;
	*s = e;
	return 0;
}

static int take_lit(const char **s, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*s, lit, n))
		return -EINVAL;
	*s += n;
	return 0;
}

/* One of names, followed by a character of ends. */
static int take_name_to(const char **s, const char *const *names,
			unsigned int nr, const char *ends, unsigned int *out)
{
	unsigned int i;
	size_t n;

	for (i = 0; i < nr; i++) {
		n = strlen(names[i]);
		if (!strncmp(*s, names[i], n) && (*s)[n] &&
		    strchr(ends, (*s)[n])) {
			*s += n;
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int take_name(const char **s, const char *const *names,
		     unsigned int nr, unsigned int *out)
{
	return take_name_to(s, names, nr, "-", out);
}

static int parse_prefix(const char **s, struct ab_case *c, bool *thresh,
			uint64_t *tv, char *why, size_t len)
{
	if (!take_lit(s, "JBOD-")) {
		if (take_uint(s, 2, AB_MAX_DEVS, &c->jbod) ||
		    take_lit(s, "HDD-"))
			return bad(why, len, "JBOD-<n>HDD-: n is 2..%d",
				   AB_MAX_DEVS);
	}
	if (!take_lit(s, "memcg=")) {
		if (take_size(s, '/', &c->memcg) || c->memcg % 4096 ||
		    c->memcg < (64u << 10))
			return bad(why, len, "memcg=SIZE/: a multiple of 4k, at least 64k");
		(*s)++;
	}
	*thresh = false;
	if (!take_lit(s, "thresh=")) {
		if (take_size(s, '/', tv))
			return bad(why, len, "thresh=SIZE/: a size such as 100M");
		(*s)++;
		*thresh = true;
	}
	return 0;
}

static int parse_len(const char *s, struct ab_case *c, char *why,
		     size_t len)
{
	const char *p = s;

	if (!strcmp(s, "X"))
		return 0;
	if (!take_uint(&p, 1, 86400, &c->secs) && !strcmp(p, "s"))
		return 0;
	c->secs = 0;
	p = s;
	/* "-2" is not 2 bytes to write: an amount is at least 1M */
	if (!take_size(&p, '\0', &c->amount) && c->amount >= (1u << 20))
		return 0;
	c->amount = 0;
	return bad(why, len, "length '%s': X, <n>s (seconds, 1..86400) or a size of at least 1M",
		   s);
}

static int parse_limit(const char **s, struct ab_case *c, char *why,
		       size_t len)
{
	const char *p = *s;
	unsigned int r;

	if (!take_uint(&p, 1, 100, &r) && *p == ':') {
		c->limit = r;
		c->limit_bytes = false;
	} else if (!take_size(s, ':', &c->limit)) {
		c->limit_bytes = true;
		p = *s;
	} else {
		return bad(why, len, "limit: a dirty_ratio (1..100) or bytes, then ':'");
	}
	p++;
	if (take_uint(&p, 0, 100, &c->bg_ratio) || *p != '-')
		return bad(why, len, "':<bg>': dirty_background_ratio 0..100");
	*s = p + 1;
	return 0;
}

/* <w><kind>[+<w2><kind2>]: c->writers counts both groups. */
static int parse_writers(const char **s, struct ab_case *c, char *why,
			 size_t len)
{
	unsigned int v;

	if (take_uint(s, 1, AB_MAX_WRITERS, &c->writers))
		return bad(why, len, "writers: 1..%d", AB_MAX_WRITERS);
	if (take_name_to(s, ab_kind_names, AB_NR_KINDS, "-+", &v))
		return bad(why, len, "writer kind: %s", AB_KIND_LIST);
	c->kind = v;
	if (**s != '+')
		return 0;
	(*s)++;
	if (take_uint(s, 1, AB_MAX_WRITERS - c->writers, &c->writers2))
		return bad(why, len, "+writers: 1..%d in all",
			   AB_MAX_WRITERS);
	if (take_name(s, ab_kind_names, AB_NR_KINDS, &v))
		return bad(why, len, "+writer kind: %s", AB_KIND_LIST);
	c->kind2 = v;
	c->writers += c->writers2;
	return 0;
}

int ab_case_parse(const char *s, struct ab_case *c, char *why, size_t len)
{
	unsigned int v;
	uint64_t tv = 0;
	bool thresh;
	int err;

	if (!s || !c)
		return bad(why, len, "no case");
	memset(c, 0, sizeof(*c));
	c->sim = !take_lit(&s, "sim:");
	err = parse_prefix(&s, c, &thresh, &tv, why, len);
	if (err)
		return err;
	if (take_name(&s, ab_dev_names, AB_NR_DEVS, &v))
		return bad(why, len, "device: loop, hdd or ssd");
	c->dev = v;
	if (c->sim && c->dev == AB_DEV_LOOP)
		return bad(why, len, "a sim: case's device is a model: hdd or ssd, not loop");
	s++;
	err = parse_writers(&s, c, why, len);
	if (err)
		return err;
	s++;
	if (take_size(&s, '-', &c->bs) || c->bs % 512 || c->bs > (64u << 20))
		return bad(why, len, "write size: a multiple of 512, at most 64M");
	s++;
	if (take_uint(&s, 1, AB_MAX_CPUS, &c->cpus) || take_lit(&s, "p-"))
		return bad(why, len, "CPUs: <n>p, n 1..%d", AB_MAX_CPUS);
	if (take_size(&s, '-', &c->mem) || c->mem % 4096 ||
	    c->mem < (1u << 20))
		return bad(why, len, "cache size: a multiple of 4k, at least 1M");
	s++;
	err = parse_limit(&s, c, why, len);
	if (err)
		return err;
	if (thresh && (!c->limit_bytes || c->limit != tv))
		return bad(why, len, "thresh= must be the dirty limit in bytes");
	return parse_len(s, c, why, len);
}

/*
 * Sizes of the body in M when they are whole M (the seeds' 4096M, 16384M),
 * up to 64G; larger ones in their largest whole unit (1000G, not 1024000M).
 */
static void fmt_mb(char *buf, size_t len, uint64_t v)
{
	if (v >= (1u << 20) && v < (64ull << 30) && !(v % (1u << 20)))
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	else
		bench_fmt_size(buf, len, v);
}

/* "10dd", "2dd+1fsync" */
static void fmt_writers(const struct ab_case *c, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u%s", c->writers - c->writers2,
			 ab_kind_names[c->kind]);

	if (c->writers2 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "+%u%s", c->writers2,
			 ab_kind_names[c->kind2]);
}

void ab_case_format(const struct ab_case *c, char *buf, size_t len)
{
	char jbod[64] = "", pre[48] = "", bs[24], mem[24], lim[32], l[32];
	char mcg[24], wr[48];
	size_t n = 0;

	if (c->jbod)
		n = (size_t)snprintf(jbod, sizeof(jbod), "JBOD-%uHDD-", c->jbod);
	if (c->memcg) {
		bench_fmt_size(mcg, sizeof(mcg), c->memcg);
		snprintf(jbod + n, sizeof(jbod) - n, "memcg=%s/", mcg);
	}
	if (c->limit_bytes) {
		bench_fmt_size(l, sizeof(l), c->limit);
		snprintf(pre, sizeof(pre), "thresh=%s/", l);
		fmt_mb(lim, sizeof(lim), c->limit);
	} else {
		snprintf(lim, sizeof(lim), "%llu",
			 (unsigned long long)c->limit);
	}
	bench_fmt_size(bs, sizeof(bs), c->bs);
	fmt_mb(mem, sizeof(mem), c->mem);
	if (c->secs)
		snprintf(l, sizeof(l), "%us", c->secs);
	else if (c->amount)
		fmt_mb(l, sizeof(l), c->amount);
	else
		snprintf(l, sizeof(l), "X");
	fmt_writers(c, wr, sizeof(wr));
	snprintf(buf, len, "%s%s%s%s-%s-%s-%up-%s-%s:%u-%s",
		 c->sim ? "sim:" : "", jbod, pre,
		 ab_dev_names[c->dev], wr, bs,
		 c->cpus, mem, lim, c->bg_ratio, l);
}

unsigned int ab_case_devs(const struct ab_case *c)
{
	return c->jbod ? c->jbod : 1;
}

enum ab_kind ab_case_kind(const struct ab_case *c, unsigned int i)
{
	return i >= c->writers - c->writers2 ? c->kind2 : c->kind;
}

int ab_case_fit(struct ab_case *c, uint64_t mem, unsigned int cpus,
		char *why, size_t len)
{
	char have[24], want[24];
	/* a sim: cache's frames hold no data: its struct pages are the cost */
	uint64_t need = c->sim ? c->mem / 4096 * AB_SIM_BYTES_PER_FRAME :
			c->mem;

	if (mem && need > mem) {
		fmt_mb(want, sizeof(want), c->mem);
		snprintf(have, sizeof(have), "%.1fG", mem / 1073741824.0);
		snprintf(why, len, "its cache of %s%s is more than this machine's memory (%s)",
			 want, c->sim ? " (its frames' struct pages)" : "",
			 have);
		return -ENOMEM;
	}
	if (cpus && c->cpus > cpus) {
		snprintf(why, len, "%up capped to %up: this process may run on %u CPU%s",
			 c->cpus, cpus, cpus, cpus == 1 ? "" : "s");
		c->cpus = cpus;
		return 1;
	}
	return 0;
}

int ab_split_args(char *const *args, unsigned int n, const char **spec,
		  unsigned int *nr_spec, char *why, size_t len)
{
	char cwhy[160], resolved[1024];
	struct ab_case c;
	unsigned int i, np = 0;
	bool cases = false;
	int err;

	for (i = 0; i < n; i++) {
		if (!ab_case_parse(args[i], &c, cwhy, sizeof(cwhy))) {
			cases = true;
			continue;
		}
		err = uf_policy_resolve(args[i], resolved, sizeof(resolved));
		if (err)
			return bad(why, len, "'%s' is neither a case (%s) nor a policy (%s)",
				   args[i], cwhy, strerror(-err));
		if (cases)
			return bad(why, len, "policy '%s' after a case: give POLICY_A POLICY_B first",
				   args[i]);
		if (np == 2)
			return bad(why, len, "a third policy '%s': give two, POLICY_A POLICY_B",
				   args[i]);
		spec[np++] = args[i];
	}
	if (np == 1)
		return bad(why, len, "one policy ('%s'): give two, POLICY_A POLICY_B",
			   spec[0]);
	*nr_spec = np;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Job files                                                           */

/* A copy of s (n bytes) in the job's store; NULL when it is full. */
static char *job_keep(struct ab_job *job, const char *s, size_t n)
{
	char *p;

	if (job->used + n + 1 > sizeof(job->store))
		return NULL;
	p = job->store + job->used;
	memcpy(p, s, n);
	p[n] = '\0';
	job->used += n + 1;
	return p;
}

/* s without blanks around it, in place. */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && strchr(" \t\r\n", e[-1]))
		*--e = '\0';
	return s;
}

static const struct bench_opt *job_opt(const struct bench_opt *opts,
				       const char *key)
{
	for (; opts->name; opts++)
		if (!strcmp(opts->name, key) && opts->type != BENCH_OPT_ALIAS &&
		    !opts->now)
			return opts;
	return NULL;
}

/* One [global] key=value as a word: "--key=value", "--flag" or none. */
static int job_global(struct ab_job *job, const struct bench_opt *opts,
		      const char *key, const char *val, const char *at,
		      char *why, size_t len)
{
	const struct bench_opt *o;
	char word[1024];
	int n;

	if (!strcmp(key, "policy_a") || !strcmp(key, "policy_b")) {
		job->spec[key[7] - 'a'] = job_keep(job, val, strlen(val));
		return job->spec[key[7] - 'a'] ? 0 :
		       bad(why, len, "%s: the file is too large", at);
	}
	o = job_opt(opts, key);
	if (!o || !strcmp(key, "job") || !strcmp(key, "list"))
		return bad(why, len, "%s: unknown key '%s' (policy_a, policy_b, or an option of `uflush-bench help ab`)",
			   at, key);
	if (o->type == BENCH_OPT_FLAG) {
		if (!*val || !strcmp(val, "1") || !strcmp(val, "true"))
			n = snprintf(word, sizeof(word), "--%s", key);
		else if (!strcmp(val, "0") || !strcmp(val, "false"))
			return 0;
		else
			return bad(why, len, "%s: %s takes 1, 0, true or false, not '%s'",
				   at, key, val);
	} else if (!*val) {
		return bad(why, len, "%s: %s needs a value", at, key);
	} else {
		n = snprintf(word, sizeof(word), "--%s=%s", key, val);
	}
	if (n < 0 || (size_t)n >= sizeof(word) ||
	    job->nr_words == AB_JOB_MAX_WORDS)
		return bad(why, len, "%s: too many or too long settings", at);
	job->words[job->nr_words] = job_keep(job, word, (size_t)n);
	return job->words[job->nr_words++] ? 0 :
	       bad(why, len, "%s: the file is too large", at);
}

static int job_case(struct ab_job *job, const char *name, const char *at,
		    char *why, size_t len)
{
	struct ab_case c;
	char cwhy[160];

	if (ab_case_parse(name, &c, cwhy, sizeof(cwhy)))
		return bad(why, len, "%s: bad case '%s': %s", at, name, cwhy);
	if (job->nr_cases == AB_MAX_CASES)
		return bad(why, len, "%s: at most %d cases", at, AB_MAX_CASES);
	job->cases[job->nr_cases] = job_keep(job, name, strlen(name));
	return job->cases[job->nr_cases++] ? 0 :
	       bad(why, len, "%s: the file is too large", at);
}

/* The end of a case section: its case= or, without one, its name. */
static int job_section_end(struct ab_job *job, const char *sect,
			   bool had_case, const char *at, char *why,
			   size_t len)
{
	if (!sect || !sect[0] || had_case || !strcmp(sect, "global"))
		return 0;
	return job_case(job, sect, at, why, len);
}

static int job_line(struct ab_job *job, const struct bench_opt *opts,
		    char *line, char *sect, bool *had_case, const char *at,
		    char *why, size_t len)
{
	char *eq, *key, *val;

	eq = strchr(line, '=');
	if (eq)
		*eq = '\0';
	key = trim(line);
	val = eq ? trim(eq + 1) : key + strlen(key);	/* a bare flag: "" */
	if (!sect[0])
		return bad(why, len, "%s: '%s' before any [section] ([global] first)",
			   at, key);
	if (!strcmp(sect, "global"))
		return job_global(job, opts, key, val, at, why, len);
	if (strcmp(key, "case"))
		return bad(why, len, "%s: a case section takes case= only ('%s' goes in [global])",
			   at, key);
	if (*had_case)
		return bad(why, len, "%s: one case= per section", at);
	*had_case = true;
	return job_case(job, val, at, why, len);
}

int ab_job_parse(const char *text, const char *file,
		 const struct bench_opt *opts, struct ab_job *job, char *why,
		 size_t len)
{
	char line[1024], sect[AB_NAME_LEN] = "", at[300];
	bool had_case = false;
	unsigned int ln = 0;
	const char *p = text;
	char *s;
	size_t n;
	int err;

	memset(job, 0, sizeof(*job));
	while (*p) {
		n = strcspn(p, "\n");
		ln++;
		snprintf(at, sizeof(at), "%s:%u", file, ln);
		if (n >= sizeof(line))
			return bad(why, len, "%s: line too long", at);
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			err = job_section_end(job, sect, had_case, at, why,
					      len);
			if (err)
				return err;
			n = strlen(s);
			if (s[n - 1] != ']' || n < 3 || n - 2 >= sizeof(sect))
				return bad(why, len, "%s: a section is [name]", at);
			snprintf(sect, sizeof(sect), "%.*s", (int)(n - 2), s + 1);
			had_case = false;
			continue;
		}
		err = job_line(job, opts, s, sect, &had_case, at, why, len);
		if (err)
			return err;
	}
	snprintf(at, sizeof(at), "%s:%u", file, ln);
	err = job_section_end(job, sect, had_case, at, why, len);
	if (err)
		return err;
	if (!job->spec[0] != !job->spec[1])
		return bad(why, len, "%s: give both policy_a and policy_b, or neither (then matrix= gives them)",
			   file);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Built-in matrices, at this machine's scale (2 CPUs, a few hundred MB) */

/* Seed 000: thresh x N-dd on one disk, 3.1 against 3.2. */
static const char *const seed000_cases[] = {
	"thresh=8M/loop-1dd-4k-2p-512M-8M:10-X",
	"thresh=8M/loop-10dd-4k-2p-512M-8M:10-X",
	"thresh=100M/loop-1dd-4k-2p-512M-100M:10-X",
	"thresh=100M/loop-10dd-4k-2p-512M-100M:10-X",
	NULL,
};

/* Seed 001: JBOD of slow disks, 1/10/100 dd, bgthresh global vs bdi. */
static const char *const seed001_cases[] = {
	"JBOD-4HDD-hdd-1dd-1M-2p-256M-20:10-X",
	"JBOD-4HDD-hdd-10dd-1M-2p-256M-20:10-X",
	"JBOD-4HDD-hdd-100dd-1M-2p-256M-20:10-X",
	NULL,
};

/*
 * Seed 004: a database-like fsync load.  (Seed 003's small-memory case
 * joins here after the reclaim issue: a 32M cache under a dd stream.)
 */
static const char *const seed004_cases[] = {
	"thresh=16M/ssd-4fsync-8k-2p-256M-16M:10-X",
	"thresh=16M/ssd-1dd-1M-2p-256M-16M:10-X",
	NULL,
};

/* `make run`: short, on a shaped JBOD. */
static const char *const demo_cases[] = {
	"JBOD-4HDD-hdd-10dd-1M-2p-128M-20:10-3s",
	"thresh=16M/ssd-2fsync-8k-2p-128M-16M:10-3s",
	NULL,
};

/*
 * Seed 003 at 1:16 (a 100 MB memcg in a larger machine, 2 dd of 1 KiB
 * writes): a 6.25 MiB domain in a 100 MiB cache over an HDD-shaped device;
 * under 3.2 allocations fail (the seed's OOM, counted in the oom column),
 * under pageout works they do not.
 */
static const char *const seed003_cases[] = {
	"memcg=6400k/hdd-2dd-1k-2p-100M-20:10-8s",
	NULL,
};

/* ------------------------------------------------------------------ */
/* The --sim matrices: the seeds' own sizes, on modelled devices         */

/*
 * Seed 000 at its own size: a 4096M machine, 4k dd writes, thresh 1M, 8M,
 * 100M, 1G and 1, 2, 10 or 100 dd on one disk; the rows of Wu Fengguang's
 * table for v4 (ext4 ones: uflush has no filesystem), 60 s a case (the
 * seed's ran 300 s).  Then three rows of ours, with xfsdd writers.
 */
static const char *const seed000_sim_cases[] = {
	"sim:thresh=1M/hdd-1dd-4k-2p-4096M-1M:10-60s",
	"sim:thresh=1M/hdd-2dd-4k-2p-4096M-1M:10-60s",
	"sim:thresh=1M/hdd-10dd-4k-2p-4096M-1M:10-60s",
	"sim:thresh=8M/hdd-1dd-4k-2p-4096M-8M:10-60s",
	"sim:thresh=8M/hdd-2dd-4k-2p-4096M-8M:10-60s",
	"sim:thresh=8M/hdd-10dd-4k-2p-4096M-8M:10-60s",
	"sim:thresh=100M/hdd-1dd-4k-2p-4096M-100M:10-60s",
	"sim:thresh=100M/hdd-2dd-4k-2p-4096M-100M:10-60s",
	"sim:thresh=100M/hdd-10dd-4k-2p-4096M-100M:10-60s",
	"sim:thresh=1G/hdd-1dd-4k-2p-4096M-1024M:10-60s",
	"sim:thresh=1G/hdd-10dd-4k-2p-4096M-1024M:10-60s",
	"sim:thresh=1G/hdd-100dd-4k-2p-4096M-1024M:10-60s",
	/*
	 * Not the seed's ext4 rows: plain dd never reaches the code where
	 * A and B differ.  xfsdd's inode is left I_DIRTY_SYNC with its pages
	 * written and its write_inode refused (seed 000 B4, B10): B's
	 * p2-v4 requeue_io()s it where A redirty_tail()s it, and the pass
	 * that wrote nothing else is B's v4 wait where A ends the work.
	 */
	"sim:thresh=1M/hdd-2xfsdd-4k-2p-4096M-1M:10-60s",
	"sim:thresh=1M/hdd-1dd+1xfsdd-4k-2p-4096M-1M:10-60s",
	"sim:thresh=8M/hdd-2xfsdd-4k-2p-4096M-8M:10-60s",
	NULL,
};

/* write_bw, MB/s: 3.1.0-rc8-ioless6a+ -> 3.1.0-rc8-ioless6-requeue6+ */
static const struct ab_seed_row seed000_rows[] = {
	{ "thresh=1M/ext4-1dd-4k-8p-4096M-1M:10-X", 51.36, 53.05, 3.3, NULL },
	{ "thresh=1M/ext4-2dd-4k-8p-4096M-1M:10-X", 46.93, 47.13, 0.4, NULL },
	{ "thresh=1M/ext4-10dd-4k-8p-4096M-1M:10-X", 32.09, 32.08, -0.0, NULL },
	{ "thresh=8M/ext4-1dd-4k-8p-4096M-8M:10-X", 56.39, 55.91, -0.9, NULL },
	{ "thresh=8M/ext4-2dd-4k-8p-4096M-8M:10-X", 51.26, 51.61, 0.7, NULL },
	{ "thresh=8M/ext4-10dd-4k-8p-4096M-8M:10-X", 35.58, 35.90, 0.9, NULL },
	{ "thresh=100M/ext4-1dd-4k-8p-4096M-100M:10-X", 56.60, 55.75, -1.5, NULL },
	{ "thresh=100M/ext4-2dd-4k-8p-4096M-100M:10-X", 54.14, 53.64, -0.9, NULL },
	{ "thresh=100M/ext4-10dd-4k-8p-4096M-100M:10-X", 46.45, 46.33, -0.3, NULL },
	{ "thresh=1G/ext4-1dd-4k-8p-4096M-1024M:10-X", 58.12, 57.42, -1.2, NULL },
	{ "thresh=1G/ext4-10dd-4k-8p-4096M-1024M:10-X", 56.23, 55.03, -2.1, NULL },
	{ "thresh=1G/ext4-100dd-4k-8p-4096M-1024M:10-X", 50.42, 50.01, -0.8, NULL },
	/* ours, beside the same table's xfs rows (L4300, L4312) */
	{ "thresh=1M/xfs-2dd-4k-8p-4096M-1M:10-X", 47.07, 39.78, -15.5,
	  "ours: xfsdd for xfs" },
	{ "(none: dd beside one xfsdd)", NAN, NAN, NAN,
	  "ours: not a seed row" },
	{ "thresh=8M/xfs-2dd-4k-8p-4096M-8M:10-X", 47.59, 47.25, -0.7,
	  "ours: xfsdd for xfs" },
};

/*
 * Seed 001 at its own size: 10 disks, a 16 GB machine at 20:10, 1M dd
 * writes, 60 s of virtual time a case.  The seed's 1, 10 and 100 dd are
 * per disk: its 1dd rows write as much as its 10dd rows (nr_written
 * 58.8M against 61.8M pages at 16G, 52.5M against 47.5M at 100M), which
 * one dd in all could not with nine disks idle.  Our count is in all
 * (writer i on disk i % 10), so 10, 100 and 1000.
 */
static const char *const seed001_sim_cases[] = {
	"sim:JBOD-10HDD-hdd-10dd-1M-2p-16384M-20:10-60s",
	"sim:JBOD-10HDD-hdd-100dd-1M-2p-16384M-20:10-60s",
	"sim:JBOD-10HDD-hdd-1000dd-1M-2p-16384M-20:10-60s",
	NULL,
};

/* vmstat nr_written, pages: 3.1.0-rc4-wo-underrun+ -> -bgthresh3+ */
static const struct ab_seed_row seed001_rows[] = {
	{ "JBOD-10HDD-16G/ext4-1dd-1M-24p-16384M-20:10-X", 58853546, 58823828,
	  -0.1, NULL },
	{ "JBOD-10HDD-16G/ext4-10dd-1M-24p-16384M-20:10-X", 61790815,
	  130032231, 110.4, NULL },
	{ "JBOD-10HDD-16G/ext4-100dd-1M-24p-16384M-20:10-X", 125596480,
	  158179363, 25.9, NULL },
};

/*
 * The rest of seed 001's table: the same JBOD with the global limit set
 * in bytes (dirty_bytes 100M, 800M, 2G, 4G; background_ratio 10, which
 * global_dirty_limits() halves to dirty/2 where 10% of 16 GB is above the
 * limit).  Here the throttle's setpoint leaves the dirty count (pages
 * under writeback not counted) below background_thresh, so the per-disk
 * test has something to decide.  20 s of virtual time a case, to keep the
 * matrix near 15 minutes of wall time.
 */
static const char *const seed001_thresh_sim_cases[] = {
	"sim:JBOD-10HDD-thresh=100M/hdd-10dd-1M-2p-16384M-100M:10-20s",
	"sim:JBOD-10HDD-thresh=100M/hdd-100dd-1M-2p-16384M-100M:10-20s",
	"sim:JBOD-10HDD-thresh=100M/hdd-1000dd-1M-2p-16384M-100M:10-20s",
	"sim:JBOD-10HDD-thresh=800M/hdd-10dd-1M-2p-16384M-800M:10-20s",
	"sim:JBOD-10HDD-thresh=800M/hdd-100dd-1M-2p-16384M-800M:10-20s",
	"sim:JBOD-10HDD-thresh=800M/hdd-1000dd-1M-2p-16384M-800M:10-20s",
	"sim:JBOD-10HDD-thresh=2G/hdd-10dd-1M-2p-16384M-2048M:10-20s",
	"sim:JBOD-10HDD-thresh=2G/hdd-100dd-1M-2p-16384M-2048M:10-20s",
	"sim:JBOD-10HDD-thresh=2G/hdd-1000dd-1M-2p-16384M-2048M:10-20s",
	"sim:JBOD-10HDD-thresh=4G/hdd-10dd-1M-2p-16384M-4096M:10-20s",
	"sim:JBOD-10HDD-thresh=4G/hdd-100dd-1M-2p-16384M-4096M:10-20s",
	"sim:JBOD-10HDD-thresh=4G/hdd-1000dd-1M-2p-16384M-4096M:10-20s",
	NULL,
};

/* The ext4 rows, the xfs change beside (4G: the seed has xfs rows only). */
static const struct ab_seed_row seed001_thresh_rows[] = {
	{ "JBOD-10HDD-thresh=100M/ext4-1dd-1M-24p-16384M-100M:10-X",
	  52548986, 53001031, 0.9, "xfs -1.1%" },
	{ "JBOD-10HDD-thresh=100M/ext4-10dd-1M-24p-16384M-100M:10-X",
	  47491324, 53785605, 13.3, "xfs +14.0%" },
	{ "JBOD-10HDD-thresh=100M/ext4-100dd-1M-24p-16384M-100M:10-X",
	  42677090, 54643527, 28.0, "xfs +36.8%" },
	{ "JBOD-10HDD-thresh=800M/ext4-1dd-1M-24p-16384M-800M:10-X",
	  52183472, 58855181, 12.8, "xfs +18.9%" },
	{ "JBOD-10HDD-thresh=800M/ext4-10dd-1M-24p-16384M-800M:10-X",
	  57882933, 66269621, 14.5, "xfs +35.5%" },
	{ "JBOD-10HDD-thresh=800M/ext4-100dd-1M-24p-16384M-800M:10-X",
	  68308534, 147324758, 115.7, "xfs +94.2%" },
	{ "JBOD-10HDD-thresh=2G/ext4-1dd-1M-24p-16384M-2048M:10-X",
	  51919909, 58269894, 12.2, "xfs +7.5%" },
	{ "JBOD-10HDD-thresh=2G/ext4-10dd-1M-24p-16384M-2048M:10-X",
	  57518856, 59677625, 3.8, "xfs +38.6%" },
	{ "JBOD-10HDD-thresh=2G/ext4-100dd-1M-24p-16384M-2048M:10-X",
	  127996037, 156719990, 22.4, "xfs +79.0%" },
	{ "JBOD-10HDD-thresh=4G/xfs-1dd-1M-24p-16384M-4096M:10-X",
	  50635672, 50384787, -0.5, "no ext4 row" },
	{ "JBOD-10HDD-thresh=4G/xfs-10dd-1M-24p-16384M-4096M:10-X",
	  72312903, 58272885, -19.4, "no ext4 row" },
	{ "JBOD-10HDD-thresh=4G/xfs-100dd-1M-24p-16384M-4096M:10-X",
	  206041046, 296846536, 44.1, "no ext4 row" },
};

/*
 * Seed 003 at its own size: Greg Thelen's test, 2 dd each writing 1 GiB
 * in 1 KiB writes inside a 100 MB memcg.  The seed does not give the
 * machine's memory: 16 times the memcg, as `uflush-bench reclaim`.
 */
static const char *const seed003_sim_cases[] = {
	"sim:memcg=100M/hdd-2dd-1k-2p-1600M-20:10-2048M",
	NULL,
};

/* dd's MB/s, the two dd summed (48.3 + 47.8); before: OOM-killed */
static const struct ab_seed_row seed003_rows[] = {
	{ "2 dd bs=1k count=1M in a 100M memcg", NAN, 96.1, NAN,
	  "dd OOM-killed before" },
};

const struct ab_matrix ab_matrices[] = {
	{ "seed000", "seed 000: dirty threshold x number of dd writers on one disk",
	  "linux-3.1", "linux-3.2", seed000_cases,
	  /* ioless6a: 3.1 with the IO-less throttle; requeue6: Kara's v4 */
	  seed000_sim_cases, "linux-3.1,bdp=3.2",
	  "linux-3.1,bdp=3.2,nowait=v4,requeue=p2-v4", seed000_rows,
	  "Wu Fengguang, \"Re: [PATCH 0/2 v4] writeback: Improve busyloop prevention and inode requeueing\", reply to Jan Kara's posting of 13 Oct 2011",
	  "write_bw, MB/s" },
	{ "seed001", "seed 001: JBOD of 4 slow disks, 1/10/100 dd, bgthresh global vs bdi",
	  "linux-3.2,bgthresh=global", "linux-3.2,bgthresh=bdi", seed001_cases,
	  seed001_sim_cases, NULL, NULL, seed001_rows,
	  "Wu Fengguang, \"[PATCH 11/11] writeback: per-bdi background threshold\", 2011 (3.1.0-rc4 kernels)",
	  "vmstat nr_written, pages" },
	{ "seed001-thresh", "seed 001's thresh= rows: the 10-disk JBOD at dirty_bytes 100M/800M/2G/4G (--sim only)",
	  "linux-3.2,bgthresh=global", "linux-3.2,bgthresh=bdi", NULL,
	  seed001_thresh_sim_cases, NULL, NULL, seed001_thresh_rows,
	  "Wu Fengguang, \"[PATCH 11/11] writeback: per-bdi background threshold\", 2011 (3.1.0-rc4 kernels)",
	  "vmstat nr_written, pages" },
	{ "seed004", "seed 004: fsync-heavy writers beside a stream, write_cache_pages capped or not",
	  "mainline,wcpcap=stock", "mainline,wcpcap=cap", seed004_cases,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	{ "seed003", "seed 003: 2 dd of 1k writes in a small memory domain, 3.2 reclaim vs pageout works",
	  "linux-3.2", "linux-3.2,reclaim=pageout", seed003_cases,
	  seed003_sim_cases, NULL, NULL, seed003_rows,
	  "Wu Fengguang, \"Re: reclaim the LRU lists full of dirty/writeback pages\", Feb 2012 (after 14 Feb 2012)",
	  "dd MB/s" },
	{ "demo", "make run: linux-3.1 vs linux-3.2 on a shaped JBOD and an fsync load",
	  "linux-3.1", "linux-3.2", demo_cases,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	{ .name = NULL },
};

const struct ab_matrix *ab_matrix_find(const char *name)
{
	unsigned int i;

	for (i = 0; ab_matrices[i].name; i++)
		if (!strcmp(ab_matrices[i].name, name))
			return &ab_matrices[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Comparison                                                          */

static double spread(const struct bench_stats *st)
{
	if (st->n < 2 || !(st->median > 0))
		return NAN;
	return (st->max - st->min) / 2 / st->median * 100;
}

void ab_compare(const struct bench_samples *a, const struct bench_samples *b,
		struct ab_cmp *out)
{
	struct bench_stats sa, sb;

	bench_samples_stats(a, &sa);
	bench_samples_stats(b, &sb);
	out->a = sa.median;
	out->b = sb.median;
	out->change = sa.n && sb.n && sa.median > 0 ?
		      (sb.median / sa.median - 1) * 100 : NAN;
	out->spread_a = spread(&sa);
	out->spread_b = spread(&sb);
	out->noise = sa.n < 2 || sb.n < 2 ||
		     (sa.min <= sb.max && sb.min <= sa.max);
}

void ab_compare_total(const struct ab_cmp *rows, unsigned int n,
		      struct ab_cmp *out)
{
	unsigned int i;

	memset(out, 0, sizeof(*out));
	out->noise = true;
	out->spread_a = out->spread_b = NAN;
	for (i = 0; i < n; i++) {
		out->a += rows[i].a;
		out->b += rows[i].b;
		if (!rows[i].noise)
			out->noise = false;
	}
	out->change = out->a > 0 ? (out->b / out->a - 1) * 100 : NAN;
}

void ab_fmt_change(char *buf, size_t len, const struct ab_cmp *c)
{
	if (isnan(c->change))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%%s", c->change,
			 c->noise ? " ~" : "");
}
