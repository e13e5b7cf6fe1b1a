// SPDX-License-Identifier: MIT
/*
 * engine/kernel/printk.c - where uflush's messages go.  Default: stderr, levels up
 * to UF_LOG_NOTICE (or UFLUSH_LOGLEVEL from the environment); an embedder
 * can take them with uf_set_log_fn().
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "uflush.h"
#include "kernel/printk.h"

static uf_log_fn_t log_fn;
static void *log_priv;

void uf_set_log_fn(uf_log_fn_t fn, void *priv)
{
	log_priv = priv;
	log_fn = fn;
}

static int default_loglevel(void)
{
	const char *s = getenv("UFLUSH_LOGLEVEL");

	return s ? atoi(s) : UF_LOG_NOTICE;
}

void uf_printk(int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (log_fn) {
		log_fn(log_priv, level, buf);
		return;
	}
	if (level <= default_loglevel())
		fprintf(stderr, "uflush: %s\n", buf);
}
