// SPDX-License-Identifier: MIT
/*
 * bench/uflush-bench.c - the uflush-bench tool: subcommand dispatch.  What
 * the subcommands share is in bench/harness.c and bench/target.c.
 *
 *	uflush-bench help [CMD]		list subcommands, or CMD's options
 *	uflush-bench CMD [OPTIONS]	run one
 *
 * Every subcommand measures uflush beside a baseline taken in the same run
 * (fio on the raw device, or the kernel's page cache) and prints ratios;
 * absolute numbers from a noisy machine mean little on their own.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define BENCH_CMD(name, summary) \
	{ #name, summary, bench_##name##_main, &bench_##name##_cmdline, NULL }

static const struct bench_cmd bench_cmds[] = {
	BENCH_CMD(ab, "A/B test two flush policies over cases or a seed's matrix"),
	BENCH_CMD(compare, "the seeds' table across saved ab --json results, % against the first"),
	BENCH_CMD(io, "raw device throughput of the I/O engines vs fio"),
	BENCH_CMD(cache, "sequential writes through the cache vs fio raw and the kernel's page cache"),
	BENCH_CMD(randwrite, "4 KiB random overwrites through the cache vs fio O_DIRECT randwrite at QD 64"),
	BENCH_CMD(hits, "4 KiB hits on resident pages vs a bare memcpy, 1 and 2 threads"),
	BENCH_CMD(idle, "wakeups of an idle cache, clean and dirty, per thread"),
	BENCH_CMD(busyloop, "seed 000's no-progress variants with an inode that cannot be written"),
	BENCH_CMD(reclaim, "seed 003: 2 writers in a small memory domain, reclaim=3.2 vs pageout works"),
	BENCH_CMD(wcpcap, "seed 004: fsync CPU of a delalloc file, write_cache_pages capped or not"),
	BENCH_CMD(jbod, "seed 001: slow devices, 1/10/100 writers, global vs per-device background threshold"),
	BENCH_CMD(pool, "a buffer pool: YCSB mixes over a working set vs the kernel page cache and O_DIRECT"),
	BENCH_CMD(sqlite, "a SQLite workload through the uflush VFS vs SQLite on ext4"),
	BENCH_CMD(kdiff, "live-kernel differential: the host kernel vs uflush's preset, tracefs vs uflush's trace"),
	BENCH_CMD(calib, "the sim SSD against a shaped loop device: throughput and dirty trajectory"),
	BENCH_CMD(plot, "PNGs of a run (or of A and B) from its tracepoints, via gnuplot"),
	{ "policies", "list the flush policies, or resolve a policy spec",
	  bench_policies_main, NULL, bench_policies_usage },
};

#define NR_CMDS (sizeof(bench_cmds) / sizeof(bench_cmds[0]))

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
	if (cmd->cl)
		bench_opts_usage(cmd->cl, stdout);
	else
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
