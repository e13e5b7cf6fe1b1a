/* SPDX-License-Identifier: MIT */
/*
 * engine/kernel/bug.h - WARN_ON / WARN_ON_ONCE / BUG_ON.
 *
 * A library must not take its host process down on a broken invariant, so
 * BUG_ON here is a loud warning that is counted (uf_bug_count(), which the
 * tests assert is zero) rather than a crash; UFLUSH_BUG_ABORT=1 makes it
 * abort, for debugging.
 */
#ifndef UF_BUG_H
#define UF_BUG_H

#include <stdbool.h>

void uf_warn_slowpath(const char *file, int line, const char *cond, bool bug);
unsigned long uf_bug_count(void);

#define WARN_ON(cond) ({						\
	bool __c = !!(cond);						\
	if (__builtin_expect(__c, 0))					\
		uf_warn_slowpath(__FILE__, __LINE__, #cond, false);	\
	__c;								\
})

#define WARN_ON_ONCE(cond) ({						\
	static bool __warned;						\
	bool __c = !!(cond);						\
	if (__builtin_expect(__c, 0) &&					\
	    !__atomic_exchange_n(&__warned, true, __ATOMIC_RELAXED))	\
		uf_warn_slowpath(__FILE__, __LINE__, #cond, false);	\
	__c;								\
})

#define BUG_ON(cond) do {						\
	if (__builtin_expect(!!(cond), 0))				\
		uf_warn_slowpath(__FILE__, __LINE__, #cond, true);	\
} while (0)

#endif /* UF_BUG_H */
