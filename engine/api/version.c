// SPDX-License-Identifier: MIT
/*
 * engine/api/version.c - uf_version(): the library's version and, when the
 * build knew it, its git commit (the Makefile passes UF_GIT_COMMIT, and
 * rebuilds this file when the commit changes).
 */
#include "uflush.h"

#ifdef UF_GIT_COMMIT
#define UF_VERSION_FULL	UFLUSH_VERSION_STRING " (git " UF_GIT_COMMIT ")"
#endif

const char *uf_version(void)
{
#ifdef UF_VERSION_FULL
	/* "" when built outside a git tree: the version alone */
	if (UF_GIT_COMMIT[0])
		return UF_VERSION_FULL;
#endif
	return UFLUSH_VERSION_STRING;
}
