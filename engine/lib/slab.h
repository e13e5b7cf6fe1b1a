/* SPDX-License-Identifier: MIT */
/*
 * engine/lib/slab.h - kmalloc/kzalloc/kfree for uflush's objects.
 *
 * Objects other than page frames come from jemalloc (mallocx), which keeps
 * per-thread caches and size classes like the kernel's slab.  Sanitizer
 * builds define UF_NO_JEMALLOC and use the C library, which the sanitizers
 * intercept.
 */
#ifndef UF_SLAB_H
#define UF_SLAB_H

#include <stdlib.h>
#include <string.h>

#ifndef UF_NO_JEMALLOC
#include <jemalloc/jemalloc.h>

static inline void *kmalloc(size_t size)
{
	return size ? mallocx(size, 0) : NULL;
}

static inline void *kzalloc(size_t size)
{
	return size ? mallocx(size, MALLOCX_ZERO) : NULL;
}

static inline void kfree(void *p)
{
	if (p)
		dallocx(p, 0);
}

/* The kernel's krealloc: NULL p allocates, size 0 frees; on failure p
 * is kept. */
static inline void *krealloc(void *p, size_t size)
{
	if (!p)
		return kmalloc(size);
	if (!size) {
		kfree(p);
		return NULL;
	}
	return rallocx(p, size, 0);
}
#else
static inline void *kmalloc(size_t size)
{
	return size ? malloc(size) : NULL;
}

static inline void *kzalloc(size_t size)
{
	return size ? calloc(1, size) : NULL;
}

static inline void kfree(void *p)
{
	free(p);
}

static inline void *krealloc(void *p, size_t size)
{
	if (!size) {
		free(p);
		return NULL;
	}
	return realloc(p, size);
}
#endif

#endif /* UF_SLAB_H */
