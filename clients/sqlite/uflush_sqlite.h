/* SPDX-License-Identifier: MIT */
/*
 * uflush_sqlite.h - a SQLite VFS whose files live on a uflush device.
 *
 * Build: build/libuflush_sqlite.a (link it with libuflush.a and -lsqlite3)
 * and build/clients/uflush_sqlite.so, a SQLite loadable extension that
 * registers the same VFS for the stock shell:
 *
 *	sqlite3 -cmd '.load build/clients/uflush_sqlite' \
 *		'file:bank.db?vfs=uflush&dev=/dev/loop0'
 *
 * URI parameters (each falls back to an environment variable):
 *	dev=PATH	the block device or file      UFLUSH_SQLITE_DEV
 *	cachesize=SIZE	the cache's pool ("64M")       UFLUSH_SQLITE_CACHESIZE
 *	policy=SPEC	a flush policy spec            UFLUSH_SQLITE_POLICY
 *	engine=NAME	io_uring, libaio, psync or sim UFLUSH_SQLITE_ENGINE
 *			(sim: dev= is the name of a uf_sim device of this
 *			process, made by uf_sim_create; see uflush.h)
 *	extent=SIZE	room of each file, set when the device is formatted
 *							UFLUSH_SQLITE_EXTENT
 *	format=1	format a device that holds something else
 *	shaped=1	open the device with the shaping wrapper (for tests:
 *			see UF_SQLITE_FCNTL_DEVICE)
 * A blank device is formatted on first use: no valid directory, [4K, 8K)
 * and [1M, 1M + 4K) all zeros, and [0, 4K) zeros or part of a format's
 * first write (a fresh device, or one whose format a crash tore).
 * Anything else without a valid directory needs format=1; a damaged
 * directory is refused (uf_sqlite_last_errno() -EUCLEAN), never formatted
 * over unasked.
 * clients/sqlite/uflush_sqlite.c describes the on-device format.
 */
#ifndef UFLUSH_SQLITE_H
#define UFLUSH_SQLITE_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Register the VFS under name (NULL: "uflush"), as the default VFS if
 * make_default.  Returns a SQLite result code.  Registering again is
 * harmless.
 */
int uf_sqlite_vfs_register(const char *name, int make_default);

/*
 * Why the last open or delete on this thread failed, in words ("bad
 * cachesize=abc: want a size such as 64M"); "" if none.  The same text is
 * logged with sqlite3_log() and printed on stderr (unless
 * $UFLUSH_SQLITE_QUIET is set).
 */
const char *uf_sqlite_last_error(void);
/* The negative errno behind it, when there was one (-EBUSY: the device
 * is held by someone else; -EUCLEAN: no valid directory, and not blank),
 * else 0. */
int uf_sqlite_last_errno(void);

/*
 * sqlite3_file_control(db, "main", UF_SQLITE_FCNTL_DEVICE, &dev) sets
 * (struct uf_dev *)dev to the device of that database, e.g. for
 * uf_dev_set_shape() (open with shaped=1) or uf_dev_stats().
 */
#define UF_SQLITE_FCNTL_DEVICE	0x75660001

#ifdef __cplusplus
}
#endif

#endif /* UFLUSH_SQLITE_H */
