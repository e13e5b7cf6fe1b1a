// SPDX-License-Identifier: MIT
/*
 * bench/policies.c - `uflush-bench policies`: the flush policies a cache
 * can run (policies/registry.c), so that a spec can be checked before a
 * benchmark is started with it.
 *
 *	uflush-bench policies
 *		every preset with its knob values, and every knob value with
 *		the seed lines or kernel function it mirrors
 *	uflush-bench policies SPEC...
 *		what each SPEC resolves to (every knob=value, as
 *		uf_cache_policy() will report it) with the source of each
 *		value, or why it is refused
 *
 * Resolving a spec with plugin=PATH loads the plugin (and unloads it).
 * Exit status: 0, 1 if a SPEC was refused, 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uflush.h"
#include "bench.h"
#include "policies/policy.h"

#define POL_MAX_LINES	128
#define POL_LINE_LEN	512

/* wb_policy_list()'s lines, kept to look the sources up. */
struct pol_lines {
	unsigned int nr;
	char line[POL_MAX_LINES][POL_LINE_LEN];
};

static void print_line(void *priv, const char *line)
{
	(void)priv;
	printf("%s\n", line);
}

static void keep_line(void *priv, const char *line)
{
	struct pol_lines *l = priv;

	if (l->nr < POL_MAX_LINES)
		snprintf(l->line[l->nr++], POL_LINE_LEN, "%s", line);
}

/*
 * The list line of knob=value: "  knob=value<spaces>source".  NULL if the
 * registry lists no such value (a plugin's, say).
 */
static const char *source_of(const struct pol_lines *l, const char *kv)
{
	size_t n = strlen(kv);
	const char *p;
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		p = l->line[i];
		if (strncmp(p, "  ", 2) || strncmp(p + 2, kv, n) ||
		    p[2 + n] != ' ')
			continue;
		p += 2 + n;
		while (*p == ' ')
			p++;
		return p;
	}
	return NULL;
}

/* "preset: k=v k=v ..." → one line per k=v with its source. */
static void print_sources(const struct pol_lines *l, const char *spec)
{
	char buf[WB_POLICY_SPEC_LEN], *item, *save = NULL;
	const char *colon = strchr(spec, ':'), *src;

	snprintf(buf, sizeof(buf), "%s", colon ? colon + 1 : spec);
	for (item = strtok_r(buf, " ", &save); item;
	     item = strtok_r(NULL, " ", &save)) {
		if (!strncmp(item, "plugin=", 7))
			src = "loaded; its " UF_POLICY_PLUGIN_SYMBOL "() may have replaced any hook";
		else
			src = source_of(l, item);
		printf("  %-22s %s\n", item, src ? src : "");
	}
}

static int resolve_one(const struct pol_lines *l, const char *spec)
{
	/* what the library says while the spec is resolved */
	static struct bench_log msgs = { .sep = "\n  " };
	struct wb_policy pol;
	int err;

	msgs.len = 0;
	msgs.text[0] = '\0';
	uf_set_log_fn(bench_log_keep, &msgs);
	err = wb_policy_resolve(spec, &pol);
	uf_set_log_fn(NULL, NULL);
	printf("spec:      %s\n", spec);
	if (err) {
		printf("refused:   %s%s%s\n\n", strerror(-err),
		       msgs.len ? "\n  " : "", msgs.text);
		return err;
	}
	printf("resolved:  %s\n", pol.spec);
	if (msgs.len)
		printf("messages:\n  %s\n", msgs.text);
	print_sources(l, pol.spec);
	printf("\n");
	wb_policy_release(&pol);
	return 0;
}

void bench_policies_usage(FILE *f)
{
	fprintf(f,
		"usage: uflush-bench policies [SPEC...]\n"
		"\n"
		"Without SPEC: every flush policy preset with its knob values, and every\n"
		"knob value with the seed lines or kernel function it mirrors.\n"
		"With SPECs: what each resolves to (every knob=value, as uf_cache_policy()\n"
		"reports it) and the source of each value, or why it is refused.\n"
		"A SPEC is a preset followed by ,knob=value overrides and ,plugin=PATH.so:\n"
		"  linux-3.2   kara-v4.2,nowait=v4   linux-3.1,nowait=v3b,requeue=p2-v3\n"
		"The default policy is %s.  Exit status 1 if a SPEC is refused.\n",
		WB_POLICY_DEFAULT);
}

int bench_policies_main(int argc, char **argv)
{
	static struct pol_lines lines;
	int i, refused = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			bench_policies_usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--"))
			break;
		if (argv[i][0] == '-') {
			fprintf(stderr, "uflush-bench policies: unknown option '%s'\n\n",
				argv[i]);
			bench_policies_usage(stderr);
			return 2;
		}
	}
	if (argc < 2) {
		printf("flush policies (default %s); a spec is PRESET[,knob=value...][,plugin=PATH]\n\n",
		       WB_POLICY_DEFAULT);
		wb_policy_list(print_line, NULL);
		return 0;
	}
	wb_policy_list(keep_line, &lines);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			continue;
		if (resolve_one(&lines, argv[i]))
			refused++;
	}
	fflush(stdout);
	return refused ? 1 : 0;
}
