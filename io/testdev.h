/* SPDX-License-Identifier: MIT */
/*
 * io/testdev.h - scratch devices for tests and benchmarks.
 *
 * uf_testdev_create() makes a sparse backing file in a temporary directory
 * ($UFLUSH_TESTDIR, else /var/tmp) and attaches a loop device over it with
 * direct I/O on and a 4096-byte logical block size, then checks that
 * /sys/block/loopN/loop/dio reads 1: a buffered loop device pushes our
 * O_DIRECT writes into the host page cache and makes every writeback
 * measurement meaningless (seed 002).  Where a loop device cannot be made
 * (not root, no /dev/loop-control, dio refused) it falls back to the backing
 * file itself, opened with O_DIRECT, and says so in ->why_not_loop.
 * uf_testdev_destroy() always detaches the loop device and removes the file.
 */
#ifndef UF_TESTDEV_H
#define UF_TESTDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UF_TESTDEV_FILE_ONLY	(1u << 0)	/* don't try a loop device */
#define UF_TESTDEV_NO_FALLBACK	(1u << 1)	/* fail rather than use a file */

struct uf_testdev {
	char path[256];		/* what to open: /dev/loopN or the file */
	char backing[256];	/* the backing file */
	bool is_loop;
	int loop_nr;		/* N of /dev/loopN, -1 if none */
	uint64_t size;
	char why_not_loop[160];	/* why a plain file is used, if it is */
};

int uf_testdev_create(uint64_t size, unsigned int flags,
		      struct uf_testdev *td);
void uf_testdev_destroy(struct uf_testdev *td);

/*
 * Read or write [off, off+len) of path with O_DIRECT, bypassing uflush
 * (a write is followed by fdatasync): how tests check what reached the
 * device.  buf, off and len must suit direct I/O.  0 or a negative errno.
 */
int uf_testdev_raw_io(const char *path, bool write, uint64_t off, void *buf,
		      size_t len);

#endif /* UF_TESTDEV_H */
