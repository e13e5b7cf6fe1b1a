// SPDX-License-Identifier: MIT
/*
 * bench/uflush-bench.c - the uflush-bench tool: subcommand dispatch and the
 * helpers the subcommands share (bench/bench.h).
 *
 *	uflush-bench help [CMD]		list subcommands, or CMD's options
 *	uflush-bench CMD [OPTIONS]	run one
 *
 * Every subcommand measures uflush beside a baseline taken in the same run
 * (fio on the raw device, or the kernel's page cache) and prints ratios;
 * absolute numbers from a noisy machine mean little on their own.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench.h"

static const struct bench_cmd bench_cmds[] = {
	{ "io", "raw device throughput of the I/O engines vs fio",
	  bench_io_main, bench_io_usage },
	{ "cache", "sequential writes through the cache vs fio raw and the kernel's page cache",
	  bench_cache_main, bench_cache_usage },
	{ "busyloop", "seed 000's no-progress variants with an inode that cannot be written",
	  bench_busyloop_main, bench_busyloop_usage },
	{ "policies", "list the flush policies, or resolve a policy spec",
	  bench_policies_main, bench_policies_usage },
};

#define NR_CMDS (sizeof(bench_cmds) / sizeof(bench_cmds[0]))

/* ------------------------------------------------------------------ */
/* Stopping                                                            */

volatile sig_atomic_t bench_stop;

static void bench_on_signal(int sig)
{
	bench_stop = sig;
}

/*
 * No SA_RESTART: a blocking read or waitpid returns EINTR so that the
 * caller sees bench_stop promptly.
 */
int bench_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bench_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int bench_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int err;

	pthread_condattr_init(&attr);
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return -err;
}

/* ------------------------------------------------------------------ */
/* Option values                                                       */

int bench_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	if (*end || !v || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int bench_parse_uint(const char *s, unsigned int min, unsigned int max,
		     unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int bench_parse_list(const char *s, const char *const *names, unsigned int nr,
		     bool *picked, const char **bad)
{
	static char item[64];
	unsigned int i, found = 0;
	size_t len;

	memset(picked, 0, nr * sizeof(*picked));
	while (*s) {
		len = strcspn(s, ",");
		snprintf(item, sizeof(item), "%.*s", (int)len, s);
		for (i = 0; i < nr; i++)
			if (len && !strcmp(item, names[i]))
				break;
		if (i == nr) {
			*bad = item;
			return -EINVAL;
		}
		picked[i] = true;
		found++;
		s += len;
		if (*s == ',')
			s++;
	}
	if (!found) {
		*bad = "(empty list)";
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Statistics                                                          */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_stats(const double *v, unsigned int n, struct bench_stats *st)
{
	double *s;

	memset(st, 0, sizeof(*st));
	if (!n)
		return;
	s = malloc(n * sizeof(*s));
	if (!s)
		return;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	st->n = n;
	st->min = s[0];
	st->max = s[n - 1];
	st->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
}

/* ------------------------------------------------------------------ */
/* Tables                                                              */

void bench_table_col(struct bench_table *t, const char *heading)
{
	unsigned int c = t->nr_cols;

	if (c >= BENCH_TABLE_MAX_COLS)
		return;
	t->right[c] = heading[0] == '>';
	snprintf(t->head[c], BENCH_CELL_LEN, "%s", heading + t->right[c]);
	t->nr_cols++;
}

int bench_table_row(struct bench_table *t)
{
	if (t->nr_rows >= BENCH_TABLE_MAX_ROWS)
		return -ENOSPC;
	memset(t->cell[t->nr_rows], 0, sizeof(t->cell[0]));
	return t->nr_rows++;
}

void bench_table_set(struct bench_table *t, unsigned int row,
		     unsigned int col, const char *fmt, ...)
{
	va_list ap;

	if (row >= t->nr_rows || col >= t->nr_cols)
		return;
	va_start(ap, fmt);
	vsnprintf(t->cell[row][col], BENCH_CELL_LEN, fmt, ap);
	va_end(ap);
}

static void table_line(const struct bench_table *t, const unsigned int *w,
		       const char (*cells)[BENCH_CELL_LEN], FILE *f)
{
	char line[BENCH_TABLE_MAX_COLS * (BENCH_CELL_LEN + 2) + 1];
	size_t pos = 0, n;
	unsigned int c;

	for (c = 0; c < t->nr_cols; c++) {
		pos += snprintf(line + pos, sizeof(line) - pos,
				t->right[c] ? "%s%*s" : "%s%-*s",
				c ? "  " : "", (int)w[c], cells[c]);
		if (pos >= sizeof(line))
			pos = sizeof(line) - 1;
	}
	n = pos;
	while (n && line[n - 1] == ' ')
		n--;
	fprintf(f, "%.*s\n", (int)n, line);
}

void bench_table_print(const struct bench_table *t, FILE *f)
{
	unsigned int w[BENCH_TABLE_MAX_COLS] = { 0 }, r, c, total = 0;

	for (c = 0; c < t->nr_cols; c++) {
		w[c] = strlen(t->head[c]);
		for (r = 0; r < t->nr_rows; r++)
			if (strlen(t->cell[r][c]) > w[c])
				w[c] = strlen(t->cell[r][c]);
		total += w[c] + (c ? 2 : 0);
	}
	table_line(t, w, t->head, f);
	for (c = 0; c < total; c++)
		fputc('-', f);
	fputc('\n', f);
	for (r = 0; r < t->nr_rows; r++)
		table_line(t, w, t->cell[r], f);
}

/* ------------------------------------------------------------------ */
/* JSON output                                                         */

void bench_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void bench_json_array(FILE *f, const double *v, unsigned int n)
{
	unsigned int i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%.3f", i ? ", " : "", v[i]);
	fputc(']', f);
}

/* ------------------------------------------------------------------ */
/* The machine                                                         */

void bench_kernel_version(char *buf, size_t len)
{
	struct utsname u;

	if (uname(&u))
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%s %s %s", u.sysname, u.release,
			 u.machine);
}

static int read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int bench_loop_info(const char *path, int *dio, char *backing, size_t len)
{
	char sys[PATH_MAX], val[PATH_MAX];
	struct stat st;
	int err;

	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return -ENOTBLK;
	if (major(st.st_rdev) != 7)	/* LOOP_MAJOR */
		return -ENOTBLK;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/dio",
		 major(st.st_rdev), minor(st.st_rdev));
	err = read_sysfs(sys, val, sizeof(val));
	if (err)
		return err;
	*dio = atoi(val);
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(st.st_rdev), minor(st.st_rdev));
	if (read_sysfs(sys, val, sizeof(val)))
		snprintf(val, sizeof(val), "?");
	snprintf(backing, len, "%s", val);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */

static const struct bench_cmd *find_cmd(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_CMDS; i++)
		if (!strcmp(bench_cmds[i].name, name))
			return &bench_cmds[i];
	return NULL;
}

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
		"usage: uflush-bench COMMAND [OPTIONS]\n"
		"       uflush-bench help [COMMAND]\n"
		"\n"
		"Each command measures uflush beside a baseline taken in the same\n"
		"run and prints ratios.  Commands:\n\n");
	for (i = 0; i < NR_CMDS; i++)
		fprintf(f, "  %-12s %s\n", bench_cmds[i].name,
			bench_cmds[i].summary);
	fprintf(f, "\n'uflush-bench help COMMAND' shows its options.\n");
}

static int help(int argc, char **argv)
{
	const struct bench_cmd *cmd;

	if (argc < 3) {
		usage(stdout);
		return 0;
	}
	cmd = find_cmd(argv[2]);
	if (!cmd) {
		fprintf(stderr, "uflush-bench: no command '%s'\n\n", argv[2]);
		usage(stderr);
		return 2;
	}
	cmd->usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const struct bench_cmd *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h"))
		return help(argc, argv);
	cmd = find_cmd(argv[1]);
	if (!cmd) {
		fprintf(stderr, "uflush-bench: no command '%s'\n\n", argv[1]);
		usage(stderr);
		return 2;
	}
	return cmd->run(argc - 1, argv + 1);
}
