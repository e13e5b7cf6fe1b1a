// SPDX-License-Identifier: MIT
/*
 * engine/kernel/bug.c - the slow path of WARN_ON/BUG_ON (see bug.h for why BUG_ON
 * does not crash by default).
 */
#include <stdlib.h>

#include "kernel/bug.h"
#include "kernel/printk.h"

static unsigned long bug_count;

void uf_warn_slowpath(const char *file, int line, const char *cond, bool bug)
{
	const char *abort_env = getenv("UFLUSH_BUG_ABORT");

	__atomic_add_fetch(&bug_count, 1, __ATOMIC_RELAXED);
	pr_err("%s at %s:%d: %s", bug ? "BUG" : "WARNING", file, line, cond);
	if (bug && abort_env && *abort_env == '1')
		abort();
}

unsigned long uf_bug_count(void)
{
	return __atomic_load_n(&bug_count, __ATOMIC_RELAXED);
}
