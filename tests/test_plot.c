// SPDX-License-Identifier: MIT
/*
 * Description: `uflush-bench plot` (bench/plot.c) on a small recorded A/B
 * trace pair (tests/data/plot-{A,B}.trace and .lat: excerpts of a
 * linux-3.1 vs mainline run of JBOD-2HDD-hdd-4dd-1M-2p-64M-20:10-3s, B's
 * device numbers swapped so that B meets its devices in the other order,
 * A with one writeback_wait line added; the .lat files carry fsync samples
 * of the fsync case).  Every PNG is drawn and non-empty, every plot has
 * both sides (or says "n/a" for one), a device has one colour in A and B,
 * the time axis stops at the run's end, 3.1's sleeps are plotted and
 * mainline's no-sleep records (pause <= 0, one near -2^32 ms) are not.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bench_plot_render(const char *dir, const char *const *traces,
		      unsigned int n);

static char out[64];
static char data[512];
static char gp[64 * 1024];

/* tests/data beside this file (the build compiles tests/test_plot.c). */
static void paths(void)
{
	const char *f = __FILE__, *slash = strrchr(f, '/');

	snprintf(data, sizeof(data), "%.*sdata",
		 slash ? (int)(slash - f + 1) : 0, f);
}

static void trace_of(char *buf, size_t len, char side)
{
	snprintf(buf, len, "%s/plot-%c.trace", data, side);
}

static void render(void)
{
	char a[600], b[600];
	const char *tr[2] = { a, b };
	FILE *f;
	size_t n;

	if (system("command -v gnuplot >/dev/null 2>&1"))
		cr_skip_test("gnuplot not installed (scripts/install-deps)");
	paths();
	trace_of(a, sizeof(a), 'A');
	trace_of(b, sizeof(b), 'B');
	if (access(a, R_OK))
		cr_skip_test("fixture %s not found (run from the repository)",
			     a);
	snprintf(out, sizeof(out), "/tmp/uflush-plot-XXXXXX");
	cr_assert_not_null(mkdtemp(out));
	cr_assert_eq(bench_plot_render(out, tr, 2), 0);
	snprintf(a, sizeof(a), "%s/plot.gp", out);
	f = fopen(a, "r");
	cr_assert_not_null(f);
	n = fread(gp, 1, sizeof(gp) - 1, f);
	gp[n] = '\0';
	fclose(f);
}

static void cleanup(void)
{
	char cmd[128];

	if (out[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", out);
		cr_assert_eq(system(cmd), 0);
	}
}

/* The script's part for one PNG (up to the next "set output"). */
static void section(const char *png, char *buf, size_t len)
{
	char key[64];
	const char *p, *e;

	snprintf(key, sizeof(key), "set output '%s'", png);
	p = strstr(gp, key);
	cr_assert_not_null(p, "no %s in plot.gp", png);
	e = strstr(p + 1, "set output '");
	if (!e)
		e = p + strlen(p);
	snprintf(buf, len, "%.*s", (int)(e - p), p);
}

static void has(const char *sec, const char *what, const char *png)
{
	cr_expect_not_null(strstr(sec, what), "%s: no \"%s\"", png, what);
}

Test(plot, every_png_drawn_with_both_sides, .fini = cleanup)
{
	static const char *const pngs[] = {
		"dirty.png", "bw.png", "pauses.png", "ratelimit.png",
		"chunks.png", "fsync.png",
	};
	char path[128], sec[16 * 1024], sig[8];
	unsigned int i;
	FILE *f;

	render();
	for (i = 0; i < sizeof(pngs) / sizeof(pngs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", out, pngs[i]);
		f = fopen(path, "rb");
		cr_assert_not_null(f, "%s not drawn", pngs[i]);
		cr_expect_eq(fread(sig, 1, 8, f), 8, "%s is empty", pngs[i]);
		cr_expect_eq(memcmp(sig, "\x89PNG", 4), 0, "%s: not a PNG",
			     pngs[i]);
		fclose(f);
	}
	/* the key names the policies, from the .lat files */
	has(gp, "title 'A linux-3.1'", "plot.gp");
	has(gp, "title 'B mainline'", "plot.gp");
	section("dirty.png", sec, sizeof(sec));
	has(sec, "'dirty-A.dat'", "dirty.png");
	has(sec, "'dirty-B.dat'", "dirty.png");
	section("bw.png", sec, sizeof(sec));
	has(sec, "'bw-A.dat'", "bw.png");
	has(sec, "'bw-B.dat'", "bw.png");
	section("pauses.png", sec, sizeof(sec));
	has(sec, "'pauses-A.dat'", "pauses.png");	/* 3.1's waits */
	has(sec, "'pauses-B.dat'", "pauses.png");
	has(sec, "whole write call", "pauses.png");	/* says what it is */
	section("ratelimit.png", sec, sizeof(sec));
	has(sec, "'rate-B.dat'", "ratelimit.png");
	has(sec, "'bdirate-B.dat'", "ratelimit.png");
	has(sec, "n/a for A (no balance_dirty_pages", "ratelimit.png");
	has(sec, "n/a for A (no bdi_dirty_ratelimit", "ratelimit.png");
	section("chunks.png", sec, sizeof(sec));
	has(sec, "'chunks-A.dat'", "chunks.png");
	has(sec, "'chunks-B.dat'", "chunks.png");
	has(sec, "'waits-A.dat'", "chunks.png");
	has(sec, "n/a for B (no writeback_wait", "chunks.png");
	section("fsync.png", sec, sizeof(sec));
	has(sec, "'fsync-A.dat'", "fsync.png");
	has(sec, "'fsync-B.dat'", "fsync.png");
}

/* Rows of a .dat file: column col (1-based) of each into v. */
static unsigned int column(const char *name, unsigned int col, double *v,
			   unsigned int max)
{
	char path[128], line[256];
	unsigned int n = 0, c;
	FILE *f;
	char *p, *end;

	snprintf(path, sizeof(path), "%s/%s", out, name);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", name);
	while (n < max && fgets(line, sizeof(line), f)) {
		p = line;
		for (c = 1; c < col && *p; c++)
			p = strchr(p, ' ') ? strchr(p, ' ') + 1 : p + strlen(p);
		v[n] = strtod(p, &end);
		if (end != p)
			n++;
	}
	fclose(f);
	return n;
}

Test(plot, pauses_are_sleeps, .fini = cleanup)
{
	double v[512];
	unsigned int i, n;

	render();
	n = column("pauses-B.dat", 2, v, 512);
	cr_assert_gt(n, 0);
	for (i = 0; i < n; i++)
		cr_expect_gt(v[i], 0, "B pause %g ms plotted: not a sleep",
			     v[i]);
	/* 3.1: start (or written) to wait, a ms or more here */
	n = column("pauses-A.dat", 2, v, 512);
	cr_assert_gt(n, 10, "3.1's sleeps not plotted");
	for (i = 0; i < n; i++)
		cr_expect(v[i] > 0 && v[i] < 1000, "A sleep %g ms", v[i]);
	has(gp, "left out: A 0 B ", "pauses.png");
}

Test(plot, time_axis_is_the_run, .fini = cleanup)
{
	double v[512];
	unsigned int i, n;
	const char *x;

	render();
	x = strstr(gp, "set xrange [0:");
	cr_assert_not_null(x);
	/* the fixture's traces span 3.03 and 3.02 s */
	cr_expect(strtod(x + 14, NULL) > 2.9 && strtod(x + 14, NULL) < 3.2,
		  "xrange %.20s", x);
	n = column("bw-A.dat", 1, v, 512);
	cr_assert_gt(n, 0);
	for (i = 0; i < n; i++)
		cr_expect_lt(v[i], 3.3, "bw-A.dat has a bin at %g s", v[i]);
	n = column("bw-B.dat", 1, v, 512);
	cr_assert_gt(n, 0);
	for (i = 0; i < n; i++)
		cr_expect_lt(v[i], 3.3, "bw-B.dat has a bin at %g s", v[i]);
}

/* The device (maj * 1000 + min) of each writeback_single_inode line. */
static unsigned int trace_devs(char side, unsigned int *dev, unsigned int max)
{
	char path[600], line[1024];
	unsigned int n = 0, maj, min;
	const char *p;
	FILE *f;

	trace_of(path, sizeof(path), side);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (n < max && fgets(line, sizeof(line), f)) {
		p = strstr(line, "writeback_single_inode: bdi ");
		if (p && sscanf(p + 28, "%u:%u", &maj, &min) == 2)
			dev[n++] = maj * 1000 + min;
	}
	fclose(f);
	return n;
}

/* chunks-X.dat's colour column beside the fixture's devices. */
Test(plot, a_device_has_one_colour, .fini = cleanup)
{
	unsigned int dev[2][64];
	double col[2][64];
	unsigned int n[2], s, i, j, k;

	render();
	for (s = 0; s < 2; s++) {
		n[s] = trace_devs((char)('A' + s), dev[s], 64);
		cr_assert_eq(column(s ? "chunks-B.dat" : "chunks-A.dat", 3,
				    col[s], 64), n[s]);
	}
	for (s = 0; s < 2; s++)
		for (i = 0; i < n[s]; i++)
			for (k = 0; k < 2; k++)
				for (j = 0; j < n[k]; j++)
					cr_expect_eq(dev[s][i] == dev[k][j],
						     col[s][i] == col[k][j],
						     "%c %u and %c %u: colours %06x, %06x",
						     'A' + s, dev[s][i], 'A' + k,
						     dev[k][j], (unsigned int)col[s][i],
						     (unsigned int)col[k][j]);
}

Test(plot, bad_input)
{
	const char *none[2] = { "/nonexistent/a.trace", "/nonexistent/b.trace" };
	char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/uflush-plot-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_expect_eq(bench_plot_render(dir, none, 2), -ENOENT);
	cr_expect_eq(bench_plot_render(dir, none, 0), -EINVAL);
	cr_expect_eq(bench_plot_render(dir, none, 3), -EINVAL);
	snprintf(out, sizeof(out), "%s", dir);
	cleanup();
}
