// SPDX-License-Identifier: MIT
/*
 * bench/compare.c - `uflush-bench compare RESULT.json...`: the seeds' table
 * across any number of saved `ab` runs, the way Wu Fengguang's
 * writeback-tests "compare" script lays out kernels side by side (the
 * tables of the IO-less dirty throttling series, LKML, 2011): one column
 * per run and side, each after the first with its change against the
 * first, then the case.  A side is A, B (or the kernel, with --kernel) of
 * one saved file; cases are matched by name, a case a run lacks is '-'.
 * --metric picks what is compared (a metric of the saved runs, by its
 * JSON name; the median of its repetitions).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define CMP_MAX_COLS	7	/* 1 + 2 x 6 + the case: the table's 16 */
#define CMP_MAX_CASES	(BENCH_TABLE_MAX_ROWS - 1)
#define CMP_NAME_LEN	160

static const char *const side_keys[] = { "A", "B", "kernel" };
static const char *const side_specs[] = { "policy_a", "policy_b", NULL };

struct cmp_col {
	const char *text;		/* the file's results array */
	char legend[600];		/* "FILE A = spec" */
	const char *side;
	bool interrupted;		/* the run was cut short */
};

struct cmp_opts {
	const char *metric;
};

static struct cmp_opts cmp_o;
static int cmp_rest;

static const struct bench_opt cmp_opt_table[] = {
	BENCH_STR("metric", "NAME", &cmp_o.metric,
		  "what to compare: mb_per_sec (default), fsync_p99_ms,\n"
		  "pause_p99_ms, dev_writes, written_mb, ... (the saved names)"),
	BENCH_OPT_END,
};

const struct bench_cmdline bench_compare_cmdline = {
	.cmd = "compare",
	.about = "The seeds' table across saved `ab --json` results: a column per run\n"
		 "and side (A, B, kernel), the change of each against the first,\n"
		 "medians of the repetitions; cases matched by name.\n",
	.opts = cmp_opt_table,
	.epilog = "A run that was interrupted is marked so in the legend.\n",
	.rest = &cmp_rest,
	.args = "RESULT.json...",
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 65536) {
			char *p = realloc(s, cap + 65536 + 1);

			if (!p) {
				free(s);
				fclose(f);
				return NULL;
			}
			s = p;
			cap += 65536;
		}
		n = fread(s + len, 1, cap - len, f);
		len += n;
		if (!n)
			break;
	}
	fclose(f);
	s[len] = '\0';
	return s;
}

/* The columns of one file: each side its first case has. */
static int file_cols(const char *path, const char *text, struct cmp_col *cols,
		     unsigned int *nr)
{
	const char *res = bench_jget(text, "results"), *first;
	char bench[32] = "", spec[512];
	const char *intr = bench_jget(text, "interrupted");
	unsigned int s, before = *nr;

	if (bench_jstr(bench_jget(text, "benchmark"), bench, sizeof(bench)) ||
	    strcmp(bench, "ab") || !res) {
		bench_err("compare", "%s: not a saved `uflush-bench ab --json` result (benchmark \"%s\")",
			  path, bench);
		return -EINVAL;
	}
	first = bench_jindex(res, 0);
	for (s = 0; s < 3; s++) {
		if (!bench_jget(first, side_keys[s]))
			continue;
		if (*nr == CMP_MAX_COLS) {
			bench_err("compare", "at most %d columns (runs x sides)",
				  CMP_MAX_COLS);
			return -E2BIG;
		}
		if (!side_specs[s] ||
		    bench_jstr(bench_jget(text, side_specs[s]), spec,
			       sizeof(spec)))
			snprintf(spec, sizeof(spec), "%s",
				 s == 2 ? "kernel" : "?");
		cols[*nr].text = res;
		cols[*nr].side = side_keys[s];
		cols[*nr].interrupted = intr && !strncmp(intr, "true", 4);
		snprintf(cols[*nr].legend, sizeof(cols[0].legend),
			 "%s %s = %s", path, side_keys[s], spec);
		(*nr)++;
	}
	if (*nr == before) {
		bench_err("compare", "%s: no results (a run interrupted before its first?)",
			  path);
		return -EINVAL;
	}
	return 0;
}

/* Case name -> its row, added in the order first seen. */
static int case_row(char (*names)[CMP_NAME_LEN], unsigned int *nr,
		    const char *name)
{
	unsigned int i;

	for (i = 0; i < *nr; i++)
		if (!strcmp(names[i], name))
			return (int)i;
	if (*nr == CMP_MAX_CASES)
		return -1;
	snprintf(names[*nr], CMP_NAME_LEN, "%s", name);
	return (int)(*nr)++;
}

/* The median of metric for case of column c; NAN if it has none. */
static double cell(const struct cmp_col *c, const char *name,
		   const char *metric)
{
	char key[96], cname[CMP_NAME_LEN];
	const char *r;
	unsigned int i;
	double v;

	snprintf(key, sizeof(key), "%s_median", metric);
	for (i = 0; (r = bench_jindex(c->text, i)) != NULL; i++) {
		if (bench_jstr(bench_jget(r, "case"), cname, sizeof(cname)) ||
		    strcmp(cname, name))
			continue;
		if (bench_jnum(bench_jget(bench_jget(r, c->side), key), &v))
			return NAN;
		return v;
	}
	return NAN;
}

static void set_num(struct bench_table *t, unsigned int row, unsigned int col,
		    double v)
{
	if (isnan(v))
		bench_table_set(t, row, col, "-");
	else
		bench_table_set(t, row, col, v >= 100 ? "%.0f" :
				v >= 1 ? "%.2f" : "%.3g", v);
}

static void set_change(struct bench_table *t, unsigned int row,
		       unsigned int col, double base, double v)
{
	if (isnan(base) || isnan(v) || !(base > 0))
		bench_table_set(t, row, col, "-");
	else
		bench_table_set(t, row, col, "%+.1f%%", (v / base - 1) * 100);
}

/* The table's cells: a row per case and TOTAL (cases every column has). */
static void fill(struct bench_table *t, const struct cmp_col *cols,
		 unsigned int nc, char (*names)[CMP_NAME_LEN], unsigned int nr,
		 const char *metric)
{
	double v[CMP_MAX_COLS], sum[CMP_MAX_COLS] = { 0 };
	unsigned int r, c, summed = 0;
	bool all;
	int row;

	for (r = 0; r <= nr; r++) {
		row = bench_table_row(t);
		if (row < 0)
			return;
		all = true;
		for (c = 0; c < nc; c++) {
			v[c] = r < nr ? cell(&cols[c], names[r], metric) :
				summed ? sum[c] : NAN;
			if (r < nr && isnan(v[c]))
				all = false;
		}
		for (c = 0; r < nr && all && c < nc; c++)
			sum[c] += v[c];
		summed += r < nr && all;
		set_num(t, (unsigned int)row, 0, v[0]);
		for (c = 1; c < nc; c++) {
			set_change(t, (unsigned int)row, 2 * c - 1, v[0], v[c]);
			set_num(t, (unsigned int)row, 2 * c, v[c]);
		}
		bench_table_set(t, (unsigned int)row, 2 * nc - 1, "%s",
				r < nr ? names[r] : "TOTAL");
	}
}

/* Does the first case of column c have metric? */
static bool has_metric(const struct cmp_col *c, const char *metric)
{
	char key[96];

	snprintf(key, sizeof(key), "%s_median", metric);
	return bench_jget(bench_jget(bench_jindex(c->text, 0), c->side),
			  key) != NULL;
}

static int cmp_load(char **texts, unsigned int nf, char **paths,
		    const char *metric, struct cmp_col *cols,
		    unsigned int *nc, char (*names)[CMP_NAME_LEN],
		    unsigned int *nr)
{
	char name[CMP_NAME_LEN];
	const char *r;
	unsigned int f, i;
	int err;

	for (f = 0; f < nf; f++) {
		texts[f] = slurp(paths[f]);
		if (!texts[f]) {
			bench_err("compare", "cannot read %s: %s", paths[f],
				  strerror(errno ? errno : ENOMEM));
			return -EIO;
		}
		err = file_cols(paths[f], texts[f], cols, nc);
		if (!err && !has_metric(&cols[*nc - 1], metric)) {
			bench_err("compare", "%s has no metric '%s' (the names of the saved runs' *_median members)",
				  paths[f], metric);
			err = -EINVAL;
		}
		if (err)
			return err;
		for (i = 0; (r = bench_jindex(cols[*nc - 1].text, i)); i++) {
			if (bench_jstr(bench_jget(r, "case"), name,
				       sizeof(name)) || !strcmp(name, "TOTAL"))
				continue;
			if (case_row(names, nr, name) < 0) {
				bench_err("compare", "at most %d cases",
					  CMP_MAX_CASES);
				return -E2BIG;
			}
		}
	}
	return 0;
}

int bench_compare_main(int argc, char **argv)
{
	static char names[CMP_MAX_CASES][CMP_NAME_LEN];
	static struct bench_table t;
	struct cmp_col cols[CMP_MAX_COLS];
	unsigned int nf, nc = 0, nr = 0, c;
	char **texts;
	int err;

	memset(&cmp_o, 0, sizeof(cmp_o));
	cmp_o.metric = "mb_per_sec";
	err = bench_opts_main(&bench_compare_cmdline, argc, argv);
	if (err >= 0)
		return err;
	if (cmp_rest >= argc) {
		bench_err("compare", "give the RESULT.json files of `uflush-bench ab --json`");
		return 2;
	}
	nf = (unsigned int)(argc - cmp_rest);
	texts = calloc(nf, sizeof(*texts));
	if (!texts)
		return 1;
	err = cmp_load(texts, nf, argv + cmp_rest, cmp_o.metric, cols, &nc,
		       names, &nr);
	if (!err) {
		memset(&t, 0, sizeof(t));
		bench_table_col(&t, ">[1]");
		for (c = 1; c < nc; c++) {
			char h[16];

			bench_table_col(&t, ">change");
			snprintf(h, sizeof(h), ">[%u]", c + 1);
			bench_table_col(&t, h);
		}
		bench_table_col(&t, "case");
		fill(&t, cols, nc, names, nr, cmp_o.metric);
		printf("%s, median of each run's repetitions; change: against [1]\n",
		       cmp_o.metric);
		for (c = 0; c < nc; c++)
			printf("[%u] %s%s\n", c + 1, cols[c].legend,
			       cols[c].interrupted ? " (INTERRUPTED: partial)" : "");
		printf("\n");
		bench_table_print(&t, stdout);
		printf("\nTOTAL: the sums over the cases every column has.\n");
	}
	for (c = 0; c < nf; c++)
		free(texts[c]);
	free(texts);
	return err ? (err == -EINVAL || err == -E2BIG ? 2 : 1) : 0;
}
