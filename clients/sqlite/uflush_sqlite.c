// SPDX-License-Identifier: MIT
/*
 * clients/sqlite/uflush_sqlite.c - a SQLite VFS over uflush.
 *
 * SQLite's files (database, rollback journal, WAL) are uflush files on one
 * device; a small directory at the start of the device names them.
 *
 * On the device:
 *
 *   [0, 4K)        directory copy 0   } the "directory file" (uflush ino 1)
 *   [4K, 8K)       directory copy 1   }
 *   [1M + i*E, 1M + (i+1)*E)   the extent of entry i (E = extent size)
 *
 * A directory copy is one 4 KiB block: a header (magic, version, sequence
 * number, extent size, number of entries), up to 32 entries {name, file
 * length, generation, used}, and a CRC-32 of the block in its last four
 * bytes.  Entry i owns extent i; a file grows within its extent and gets
 * SQLITE_FULL past it.  Numbers are in host byte order (little-endian).
 *
 * Crash atomicity.  The directory changes in memory; a "commit" writes the
 * whole of it, with the next sequence number, to the copy that does NOT
 * hold the last durable commit, and fdatasyncs the directory file; only
 * then is that copy the durable one.  Commits are serialised, so the
 * other copy always holds the previous durable state: after a crash the
 * valid copy (magic, CRC) with the higher sequence number is the
 * directory, and a torn or lost commit falls back to the one before it.
 *
 * Formatting.  A device with no valid copy is formatted without format=1
 * only if it is blank: copy 1 and the first page of the data area all
 * zeros, copy 0 zeros or part of a format's first write.  That is a fresh
 * device, or one whose format a crash cut short (its first write, to copy
 * 0, torn); a device that holds files cannot look like that unless
 * damaged from outside (ufs_check_blank() has the argument), and a
 * damaged directory is refused, not formatted over.
 *
 * Lengths.  A write past the end or a truncate changes the file's length
 * in memory only.  xSync is uf_fdatasync or uf_fsync (as the sync flags
 * say); only when that succeeded does the length the file had before it
 * go into the directory, and the directory is committed: data first, then
 * the length that covers it.  So a length on the device never covers
 * bytes that did not reach it, which matters more here than on a file
 * system: an extent is reused as it is, and a rollback journal whose
 * length covered the stale bytes of the previous journal in the same
 * extent would look hot, and be played back over committed transactions.
 * That is also why uflush's inode path (uf_file_ops.write_inode) carries
 * no lengths: uflush calls write_inode from background writeback before
 * the data is durable, and from uf_fsync even when writing the data
 * failed, and it cannot tell the two from success.  The last close of a
 * file whose length was never synced (synchronous=OFF) fdatasyncs it and
 * records the length the same way, for the commit of the last close.
 *
 * Creating a file changes the directory in memory only: the next sync (of
 * any file) commits it.  Deleting a file commits at once, whatever SQLite's
 * syncDir says: in rollback-journal mode the journal's deletion is the
 * commit of a transaction, and on uflush what is not on the device is gone
 * after a crash of the process (the cache lives in it).  If that commit
 * fails the file stays, as after a failed unlink(2).  A file deleted while
 * open keeps its extent until its last close.
 *
 * Writes past the end zero-fill the gap (holes read as zeros, as SQLite
 * expects of POSIX).  Locks are kept in the process: one process owns a
 * device (the device is opened O_EXCL, and flock()ed), so a second process
 * is refused at open; inside the process connections lock each other as
 * in the unix VFS.  WAL mode works, its shared memory on the heap.  xFetch
 * (memory-mapped I/O, PRAGMA mmap_size) hands out the cache page itself
 * when SQLite asks for exactly one aligned 4 KiB page inside the file;
 * otherwise SQLite falls back to xRead.  That is safe because SQLite only
 * reads through fetched pages, and the locks that protect an mmap of the
 * file protect them too; the reference keeps the page in the cache.
 *
 * Temporary files (no name) go to SQLite's default VFS.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef UF_SQLITE_EXT
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include <sqlite3.h>
#endif

#include "uflush.h"
#include "clients/sqlite/uflush_sqlite.h"

#define UFS_PAGE		4096u
#define UFS_MAGIC		"UFSQLDIR"
#define UFS_VERSION		1u
#define UFS_DATA_START		(1ull << 20)
#define UFS_NAME_LEN		80		/* with the NUL */
#define UFS_MAX_ENTRIES		32u
#define UFS_DEFAULT_CACHE	(32ull << 20)
#define UFS_MIN_CACHE		(1ull << 20)
#define UFS_MIN_EXTENT		(64ull << 10)
#define UFS_MAX_EXTENT		(256ull << 20)
#define UFS_SHM_LOCKS		8		/* SQLITE_SHM_NLOCK */

struct ufs_disk_entry {
	char name[UFS_NAME_LEN];
	uint64_t len;
	uint32_t gen;
	uint32_t used;
};

struct ufs_disk_head {
	char magic[8];
	uint32_t version;
	uint32_t nr_entries;
	uint64_t seq;
	uint64_t extent;
	uint64_t data_start;
	uint64_t dev_size;	/* when formatted */
	uint8_t pad[16];
};

_Static_assert(sizeof(struct ufs_disk_entry) == 96, "entry layout");
_Static_assert(sizeof(struct ufs_disk_head) == 64, "header layout");
_Static_assert(sizeof(struct ufs_disk_head) + UFS_MAX_ENTRIES *
	       sizeof(struct ufs_disk_entry) <= UFS_PAGE - 4, "fits a block");

struct ufs_node;

/* One open device: its cache, its directory, its open files. */
struct ufs_dev {
	struct ufs_dev *next;
	char path[PATH_MAX];
	int refs;			/* open sqlite3_files */
	int lock_fd;
	uint64_t size;
	struct uf_cache *cache;
	struct uf_dev *dev;
	struct uf_file *dirf;

	pthread_mutex_t lock;		/* all below, and the nodes' state */
	pthread_mutex_t commit_lock;	/* one commit at a time */
	struct ufs_disk_head head;
	struct ufs_disk_entry ent[UFS_MAX_ENTRIES];
	struct ufs_node *node[UFS_MAX_ENTRIES];	/* open on extent i */
	int durable;			/* copy with the last durable commit */
	bool dirty;			/* directory differs from it */
	unsigned char buf[UFS_PAGE];	/* under commit_lock */
	unsigned char load[3 * UFS_PAGE];	/* ufs_dir_load's copies, and
					   ufs_data_zero's page */
};

/* One file open in the process, shared by the connections that opened it. */
struct ufs_node {
	struct ufs_dev *d;
	unsigned int idx;
	struct uf_file *f;
	int refs;
	bool unlinked;
	uint64_t size;			/* its length, as SQLite sees it */
	/* locks (unix VFS levels) */
	int nshared;
	void *reserved, *pending, *excl;
	/* WAL shared memory, on the heap */
	int shm_refs;
	int shm_nreg;
	void **shm_reg;
	int shm_shared[UFS_SHM_LOCKS];
	void *shm_excl[UFS_SHM_LOCKS];
};

struct ufs_fetch {
	struct uf_page *pg;
	void *data;
};

struct ufs_file {
	sqlite3_file base;
	struct ufs_node *n;
	int level;
	bool delete_on_close;
	bool shm_mapped;
	unsigned int shm_shared;	/* bit per shm lock held */
	unsigned int shm_excl;
	struct ufs_fetch *fetch;
	int nfetch, fetch_cap;
};

static pthread_mutex_t ufs_global = PTHREAD_MUTEX_INITIALIZER;
static struct ufs_dev *ufs_devs;
static sqlite3_vfs ufs_vfs;
static const sqlite3_io_methods ufs_io;
static const unsigned char ufs_zero[UFS_PAGE];

static __thread char ufs_err[320];
static __thread int ufs_errno;

const char *uf_sqlite_last_error(void)
{
	return ufs_err;
}

int uf_sqlite_last_errno(void)
{
	return ufs_errno;
}

/* Say why an open or delete failed; returns rc. */
__attribute__((format(printf, 3, 4)))
static int ufs_fail(int rc, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ufs_err, sizeof(ufs_err), fmt, ap);
	va_end(ap);
	ufs_errno = err;
	sqlite3_log(rc, "uflush: %s", ufs_err);
	if (!getenv("UFLUSH_SQLITE_QUIET"))
		fprintf(stderr, "uflush-sqlite: %s\n", ufs_err);
	return rc;
}

static void ufs_ok(void)
{
	ufs_err[0] = '\0';
	ufs_errno = 0;
}

static sqlite3_vfs *ufs_base(void)
{
	return (sqlite3_vfs *)ufs_vfs.pAppData;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

struct ufs_conf {
	const char *dev;
	uint64_t cache;
	const char *policy;
	const char *engine;
	uint64_t extent;		/* 0: not given */
	bool format;
	bool shaped;
};

/* "4096", "64k", "32M", "1G" (binary units). */
static int ufs_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmg";
	unsigned int shift = 0;
	unsigned long long v;
	const char *u;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	u = *end ? strchr(units, tolower((unsigned char)*end)) : NULL;
	if (u) {
		shift = 10 * (unsigned int)(u - units + 1);
		end++;
	}
	if (errno || *end || !v)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/* A URI parameter of a database, journal or WAL name, else $env. */
static const char *ufs_param(const char *name, const char *key,
			     const char *env)
{
	const char *v = name ? sqlite3_uri_parameter(name, key) : NULL;

	return v ? v : getenv(env);
}

static int ufs_bool(const char *v, bool *out)
{
	if (!v) {
		*out = false;
		return 0;
	}
	if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true") ||
	    !strcmp(v, "on"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "no") ||
		 !strcmp(v, "false") || !strcmp(v, "off"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int ufs_conf_parse(const char *name, struct ufs_conf *c)
{
	const char *v;

	memset(c, 0, sizeof(*c));
	c->cache = UFS_DEFAULT_CACHE;
	c->dev = ufs_param(name, "dev", "UFLUSH_SQLITE_DEV");
	if (c->dev && !*c->dev)
		return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
				"empty dev=: want the path of a block device or file");
	v = ufs_param(name, "cachesize", "UFLUSH_SQLITE_CACHESIZE");
	if (v && (ufs_parse_size(v, &c->cache) || c->cache < UFS_MIN_CACHE ||
		  c->cache > (64ull << 30)))
		return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
				"bad cachesize=%s: want a size from 1M to 64G such as 64M",
				v);
	v = ufs_param(name, "extent", "UFLUSH_SQLITE_EXTENT");
	if (v && (ufs_parse_size(v, &c->extent) ||
		  c->extent % UFS_PAGE || c->extent < UFS_MIN_EXTENT ||
		  c->extent > UFS_MAX_EXTENT * 64))
		return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
				"bad extent=%s: want a multiple of 4k from 64k to 16G", v);
	c->policy = ufs_param(name, "policy", "UFLUSH_SQLITE_POLICY");
	if (c->policy && !*c->policy)
		c->policy = NULL;
	c->engine = ufs_param(name, "engine", "UFLUSH_SQLITE_ENGINE");
	if (c->engine && strcmp(c->engine, "io_uring") &&
	    strcmp(c->engine, "libaio") && strcmp(c->engine, "psync") &&
	    strcmp(c->engine, "sim"))
		return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
				"bad engine=%s: want io_uring, libaio, psync or sim",
				c->engine);
	v = name ? sqlite3_uri_parameter(name, "format") : NULL;
	if (ufs_bool(v, &c->format))
		return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
				"bad format=%s: want 1 or 0", v);
	v = name ? sqlite3_uri_parameter(name, "shaped") : NULL;
	if (ufs_bool(v, &c->shaped))
		return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
				"bad shaped=%s: want 1 or 0", v);
	return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* The directory                                                       */

static uint32_t ufs_crc32(const unsigned char *p, size_t len)
{
	uint32_t crc = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

static void ufs_dir_encode(struct ufs_dev *d, unsigned char *buf)
{
	uint32_t crc;

	memset(buf, 0, UFS_PAGE);
	memcpy(buf, &d->head, sizeof(d->head));
	memcpy(buf + sizeof(d->head), d->ent, sizeof(d->ent));
	crc = ufs_crc32(buf, UFS_PAGE - 4);
	memcpy(buf + UFS_PAGE - 4, &crc, 4);
}

/* A valid copy: magic, version, CRC, and a layout that fits the device. */
static bool ufs_dir_valid(const unsigned char *buf, uint64_t dev_size,
			  struct ufs_disk_head *h)
{
	uint32_t crc;

	memcpy(h, buf, sizeof(*h));
	memcpy(&crc, buf + UFS_PAGE - 4, 4);
	if (memcmp(h->magic, UFS_MAGIC, 8) || h->version != UFS_VERSION ||
	    crc != ufs_crc32(buf, UFS_PAGE - 4))
		return false;
	return h->nr_entries && h->nr_entries <= UFS_MAX_ENTRIES &&
	       h->extent && !(h->extent % UFS_PAGE) &&
	       h->data_start == UFS_DATA_START &&
	       h->data_start + h->nr_entries * h->extent <= dev_size;
}

/*
 * Write the directory to the copy that is not durable and make it
 * durable.  Only if something changed; serialised; d->lock not held.
 */
static int ufs_commit(struct ufs_dev *d)
{
	int target, ret = 0;
	ssize_t n;

	pthread_mutex_lock(&d->commit_lock);
	pthread_mutex_lock(&d->lock);
	if (!d->dirty) {
		pthread_mutex_unlock(&d->lock);
		goto out;
	}
	target = d->durable ^ 1;
	d->head.seq++;
	ufs_dir_encode(d, d->buf);
	d->dirty = false;
	pthread_mutex_unlock(&d->lock);

	n = uf_pwrite(d->dirf, d->buf, UFS_PAGE, (uint64_t)target * UFS_PAGE);
	ret = n == UFS_PAGE ? uf_fdatasync(d->dirf) : n < 0 ? (int)n : -EIO;
	if (ret) {
		pthread_mutex_lock(&d->lock);
		d->dirty = true;
		pthread_mutex_unlock(&d->lock);
	} else {
		d->durable = target;
	}
out:
	pthread_mutex_unlock(&d->commit_lock);
	return ret;
}

static bool ufs_all_zero(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* The extent size of a fresh device: eight files at least, 256M at most. */
static uint64_t ufs_default_extent(uint64_t dev_size)
{
	uint64_t e = (dev_size - UFS_DATA_START) / 8;

	if (e > UFS_MAX_EXTENT)
		e = UFS_MAX_EXTENT;
	if (e >= (1ull << 20))
		e &= ~((1ull << 20) - 1);
	else
		e &= ~(uint64_t)(UFS_PAGE - 1);
	return e;
}

static int ufs_format(struct ufs_dev *d, const struct ufs_conf *c)
{
	uint64_t extent = c->extent ? c->extent : ufs_default_extent(d->size);
	uint64_t nr;
	int ret;

	nr = extent ? (d->size - UFS_DATA_START) / extent : 0;
	if (nr > UFS_MAX_ENTRIES)
		nr = UFS_MAX_ENTRIES;
	if (nr < 1)
		return ufs_fail(SQLITE_CANTOPEN, -ENOSPC,
				"%s: %llu bytes hold no extent of %llu bytes after the 1M directory area",
				d->path, (unsigned long long)d->size,
				(unsigned long long)extent);
	memset(&d->head, 0, sizeof(d->head));
	memset(d->ent, 0, sizeof(d->ent));
	memcpy(d->head.magic, UFS_MAGIC, 8);
	d->head.version = UFS_VERSION;
	d->head.nr_entries = (uint32_t)nr;
	d->head.extent = extent;
	d->head.data_start = UFS_DATA_START;
	d->head.dev_size = d->size;
	/*
	 * Both copies, so that no older directory can win afterwards: copy 0
	 * first, made durable before copy 1 is written.  ufs_check_blank()
	 * rests on that order: a crash before ufs_format() returns leaves
	 * copy 0 valid, or copy 1 as it was (zeros on a fresh device).
	 */
	d->durable = 1;
	d->dirty = true;
	ret = ufs_commit(d);
	if (!ret) {
		d->dirty = true;
		ret = ufs_commit(d);
	}
	if (ret)
		return ufs_fail(SQLITE_IOERR, ret, "%s: formatting failed: %s",
				d->path, strerror(-ret));
	return SQLITE_OK;
}

/* Is the first page of the data area (extent 0's) all zeros? */
static int ufs_data_zero(struct ufs_dev *d, bool *zero)
{
	struct uf_file *f;
	ssize_t n;
	int ret;

	/* ino 2 is entry 0's, and no entry is open yet */
	ret = uf_file_open(d->dev, 2, UFS_DATA_START, UFS_PAGE, NULL, NULL,
			   &f);
	if (ret)
		return ret;
	n = uf_pread(f, d->load + 2 * UFS_PAGE, UFS_PAGE, 0);
	ret = uf_file_close(f);
	if (n != UFS_PAGE)
		return n < 0 ? (int)n : -EIO;
	*zero = ufs_all_zero(d->load + 2 * UFS_PAGE, UFS_PAGE);
	return ret;
}

/*
 * Could copy 0 be what a torn first write of ufs_format() left on a blank
 * device?  That write holds a header and a CRC and no entry, so whatever
 * sectors of it landed, the rest of the block is zeros, and the header's
 * first sector, if it landed, starts with the magic.
 */
static bool ufs_torn_first_write(const unsigned char *c0)
{
	size_t h = sizeof(struct ufs_disk_head);

	return ufs_all_zero(c0 + h, UFS_PAGE - 4 - h) &&
	       (ufs_all_zero(c0, h) || !memcmp(c0, UFS_MAGIC, 8));
}

/*
 * Neither directory copy is valid: format the device unasked only if it
 * is blank, i.e. copy 1 and the first data page are all zeros and copy 0
 * holds no more than part of a format's first write.  Why that cannot
 * destroy a database:
 *
 * From the moment ufs_format() returns, one copy is valid at every
 * instant.  ufs_format() commits copy 0, fdatasync included, before it
 * writes copy 1, and each later commit writes only the copy that does not
 * hold the last durable one, so a torn or failed write damages one copy
 * and the other keeps the commit before it.  And nothing is acknowledged
 * before ufs_format() returns: no file exists before it, so no data
 * extent has been written.
 *
 * So no valid copy means a format that never got past its first write
 * (copy 0, torn or lost; copy 1 still as it was), with nothing
 * acknowledged since, or damage from outside.  Copy 1 all zeros (our own
 * writes never leave it so: every directory starts with UFS_MAGIC, and a
 * tear keeps it) and copy 0 in the shape of ufs_torn_first_write() are
 * what the first leaves on a fresh device; formatting it again loses
 * nothing.  To look the same, outside damage would have to wipe copy 1
 * and leave copy 0 so, and the zero data page refuses even that when a
 * file was ever written to extent 0, the first file created (usually the
 * database, whose header SQLite writes first).  Anything else is refused,
 * with a reason.
 */
static int ufs_check_blank(struct ufs_dev *d, unsigned char (*copy)[UFS_PAGE])
{
	bool data_zero = false;
	int ret;

	ret = ufs_data_zero(d, &data_zero);
	if (ret)
		return ufs_fail(SQLITE_IOERR, ret,
				"%s: cannot read its data area: %s", d->path,
				strerror(-ret));
	if (ufs_all_zero(copy[1], UFS_PAGE) && data_zero &&
	    ufs_torn_first_write(copy[0]))
		return SQLITE_OK;
	if (!memcmp(copy[0], UFS_MAGIC, 8) || !memcmp(copy[1], UFS_MAGIC, 8))
		return ufs_fail(SQLITE_CANTOPEN, -EUCLEAN,
				"%s: its uflush-sqlite directory is damaged (no valid copy) and its files may hold data; not formatting it (format=1 would, and lose them)",
				d->path);
	if (!data_zero)
		return ufs_fail(SQLITE_CANTOPEN, -EUCLEAN,
				"%s holds no uflush-sqlite directory, but its data area (at 1M) is not blank: a damaged uflush-sqlite device, or something else; not formatting it (format=1 would, and lose its data)",
				d->path);
	return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
			"%s holds no uflush-sqlite directory and is not blank; add format=1 to format it (its data is lost)",
			d->path);
}

static int ufs_dir_load(struct ufs_dev *d, const struct ufs_conf *c)
{
	unsigned char (*copy)[UFS_PAGE] = (void *)d->load;
	struct ufs_disk_head h[2];
	bool ok[2];
	int i, best = -1;
	ssize_t n;

	for (i = 0; i < 2; i++) {
		n = uf_pread(d->dirf, copy[i], UFS_PAGE, (uint64_t)i * UFS_PAGE);
		if (n != UFS_PAGE)
			return ufs_fail(SQLITE_IOERR, n < 0 ? (int)n : -EIO,
					"%s: cannot read the directory: %s",
					d->path, strerror(n < 0 ? (int)-n : EIO));
		ok[i] = ufs_dir_valid(copy[i], d->size, &h[i]);
		if (ok[i] && (best < 0 || h[i].seq > h[best].seq))
			best = i;
	}
	if (best < 0) {
		int rc = c->format ? SQLITE_OK : ufs_check_blank(d, copy);

		return rc == SQLITE_OK ? ufs_format(d, c) : rc;
	}
	if (c->format)
		return ufs_format(d, c);
	if (c->extent && c->extent != h[best].extent)
		return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
				"extent=%llu differs from the device's %llu (set when it was formatted)",
				(unsigned long long)c->extent,
				(unsigned long long)h[best].extent);
	d->head = h[best];
	memcpy(d->ent, copy[best] + sizeof(d->head), sizeof(d->ent));
	for (i = 0; i < (int)UFS_MAX_ENTRIES; i++) {
		d->ent[i].name[UFS_NAME_LEN - 1] = '\0';
		if (i >= (int)d->head.nr_entries || d->ent[i].len > d->head.extent)
			d->ent[i].used = 0;
	}
	d->durable = best;
	d->dirty = false;
	return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */

static int ufs_dev_size(int fd, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, size) ? -errno : 0;
	if (!S_ISREG(st.st_mode))
		return -ENODEV;
	*size = (uint64_t)st.st_size;
	return 0;
}

/*
 * engine=sim: dev= names a uf_sim device of this process (uf_sim_create),
 * not a path: no realpath, no flock (the sim engine admits one opener),
 * and the size comes from the opened device.
 */
static bool ufs_is_sim(const struct ufs_conf *c)
{
	return c->engine && !strcmp(c->engine, "sim");
}

static int ufs_dev_check_size(const struct ufs_conf *c,
			      const struct ufs_dev *d)
{
	if (d->size >= UFS_DATA_START + UFS_MIN_EXTENT)
		return SQLITE_OK;
	return ufs_fail(SQLITE_CANTOPEN, -ENOSPC,
			"dev=%s: %llu bytes is too small (want 1M + 64k at least)",
			c->dev, (unsigned long long)d->size);
}

static void ufs_dev_free(struct ufs_dev *d)
{
	if (d->dirf)
		uf_file_close(d->dirf);
	if (d->dev)
		uf_dev_close(d->dev);
	if (d->cache)
		uf_cache_close(d->cache);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->commit_lock);
	free(d);
}

static int ufs_dev_open(const struct ufs_conf *c, const char *real,
			struct ufs_dev **out)
{
	struct uf_cache_config cc;
	struct uf_dev_config dc;
	struct ufs_dev *d;
	int ret, rc;

	d = calloc(1, sizeof(*d));
	if (!d)
		return ufs_fail(SQLITE_NOMEM, -ENOMEM, "out of memory");
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->commit_lock, NULL);
	snprintf(d->path, sizeof(d->path), "%s", real);
	d->lock_fd = -1;
	if (ufs_is_sim(c))
		goto cache;	/* a sim device: in this process, opened once */
	d->lock_fd = open(real, O_RDONLY | O_CLOEXEC);
	if (d->lock_fd < 0) {
		rc = ufs_fail(SQLITE_CANTOPEN, -errno, "dev=%s: %s", c->dev,
			      strerror(errno));
		goto fail;
	}
	/* one process per device: a second one is refused, not blocked */
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB)) {
		rc = ufs_fail(SQLITE_CANTOPEN, -EBUSY,
			      "%s is in use by another process", c->dev);
		goto fail;
	}
	ret = ufs_dev_size(d->lock_fd, &d->size);
	if (ret) {
		rc = ufs_fail(SQLITE_CANTOPEN, ret,
			      "dev=%s: not a block device or file (%s)",
			      c->dev, strerror(-ret));
		goto fail;
	}
	rc = ufs_dev_check_size(c, d);
	if (rc != SQLITE_OK)
		goto fail;
cache:
	uf_cache_config_init(&cc);
	cc.nr_pages = (size_t)(c->cache / UFS_PAGE);
	cc.policy = c->policy;
	ret = uf_cache_open(&cc, &d->cache);
	if (ret) {
		d->cache = NULL;
		rc = ufs_fail(SQLITE_CANTOPEN, ret,
			      ret == -EINVAL && c->policy ?
			      "policy=%s rejected: %s (see the uflush message above)" :
			      "cannot open a uflush cache (policy %s): %s",
			      c->policy ? c->policy : "default", strerror(-ret));
		goto fail;
	}
	memset(&dc, 0, sizeof(dc));
	dc.engine = c->engine;
	dc.flags = c->shaped ? UF_DEV_SHAPED : 0;
	ret = uf_dev_open(d->cache, real, &dc, &d->dev);
	if (ret) {
		d->dev = NULL;
		rc = ufs_fail(SQLITE_CANTOPEN, ret, "cannot open dev=%s: %s%s",
			      c->dev, strerror(-ret),
			      ret == -EBUSY ? " (mounted, or held by another process)" : "");
		goto fail;
	}
	if (ufs_is_sim(c)) {
		ret = uf_dev_size(d->dev, &d->size);
		rc = ret ? ufs_fail(SQLITE_CANTOPEN, ret, "dev=%s: size: %s",
				    c->dev, strerror(-ret)) :
			   ufs_dev_check_size(c, d);
		if (rc != SQLITE_OK)
			goto fail;
	}
	ret = uf_file_open(d->dev, 1, 0, 2 * UFS_PAGE, NULL, NULL, &d->dirf);
	if (ret) {
		d->dirf = NULL;
		rc = ufs_fail(SQLITE_CANTOPEN, ret,
			      "dev=%s: cannot open the directory: %s", c->dev,
			      strerror(-ret));
		goto fail;
	}
	rc = ufs_dir_load(d, c);
	if (rc != SQLITE_OK)
		goto fail;
	*out = d;
	return SQLITE_OK;
fail:
	ufs_dev_free(d);
	return rc;
}

/* Under ufs_global. */
static int ufs_dev_get(const struct ufs_conf *c, struct ufs_dev **out)
{
	char real[PATH_MAX];
	struct ufs_dev *d;
	int rc;

	if (!c->dev) {
		/* a journal or WAL of an older SQLite: the one open device */
		if (ufs_devs && !ufs_devs->next) {
			*out = ufs_devs;
			return SQLITE_OK;
		}
		return ufs_fail(SQLITE_CANTOPEN, -EINVAL,
				"no device: give dev=PATH in the URI or $UFLUSH_SQLITE_DEV");
	}
	if (ufs_is_sim(c))
		snprintf(real, sizeof(real), "%s", c->dev);
	else if (!realpath(c->dev, real))
		return ufs_fail(SQLITE_CANTOPEN, -errno, "dev=%s: %s", c->dev,
				strerror(errno));
	for (d = ufs_devs; d; d = d->next)
		if (!strcmp(d->path, real)) {
			*out = d;
			return SQLITE_OK;
		}
	rc = ufs_dev_open(c, real, &d);
	if (rc != SQLITE_OK)
		return rc;
	d->next = ufs_devs;
	ufs_devs = d;
	*out = d;
	return SQLITE_OK;
}

/* Under ufs_global: the last file of d closed. */
static int ufs_dev_put(struct ufs_dev *d)
{
	struct ufs_dev **pp;
	int ret;

	if (--d->refs > 0)
		return 0;
	for (pp = &ufs_devs; *pp; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	ret = ufs_commit(d);
	if (d->dirf) {
		int err = uf_file_close(d->dirf);

		d->dirf = NULL;
		if (!ret)
			ret = err;
	}
	if (d->dev) {
		uf_dev_close(d->dev);
		d->dev = NULL;
	}
	if (d->cache) {
		int err = uf_cache_close(d->cache);

		d->cache = NULL;
		if (!ret)
			ret = err;
	}
	ufs_dev_free(d);
	return ret;
}

/* A linked entry by name, or -1.  Under d->lock. */
static int ufs_lookup(struct ufs_dev *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->head.nr_entries; i++)
		if (d->ent[i].used && !strcmp(d->ent[i].name, name))
			return (int)i;
	return -1;
}

/* The open device that has name, under ufs_global; NULL if none. */
static struct ufs_dev *ufs_dev_of_name(const char *name, int *idx)
{
	struct ufs_dev *d;

	for (d = ufs_devs; d; d = d->next) {
		pthread_mutex_lock(&d->lock);
		*idx = ufs_lookup(d, name);
		pthread_mutex_unlock(&d->lock);
		if (*idx >= 0)
			return d;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Nodes (open files)                                                  */

static uint64_t ufs_extent_off(const struct ufs_dev *d, unsigned int idx)
{
	return d->head.data_start + (uint64_t)idx * d->head.extent;
}

/* Open (or share) the node of entry idx; under ufs_global. */
static int ufs_node_get(struct ufs_dev *d, unsigned int idx,
			struct ufs_node **out)
{
	struct ufs_node *n;
	int ret;

	pthread_mutex_lock(&d->lock);
	n = d->node[idx];
	if (n)
		n->refs++;
	pthread_mutex_unlock(&d->lock);
	if (n) {
		*out = n;
		return 0;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->d = d;
	n->idx = idx;
	n->refs = 1;
	n->size = d->ent[idx].len;
	ret = uf_file_open(d->dev, idx + 2, ufs_extent_off(d, idx),
			   d->head.extent, NULL, n, &n->f);
	if (ret) {
		free(n);
		return ret;
	}
	pthread_mutex_lock(&d->lock);
	d->node[idx] = n;
	pthread_mutex_unlock(&d->lock);
	*out = n;
	return 0;
}

/* Under ufs_global. */
static int ufs_node_put(struct ufs_node *n)
{
	struct ufs_dev *d = n->d;
	bool changed;
	int i, ret, err;

	pthread_mutex_lock(&d->lock);
	if (--n->refs > 0) {
		pthread_mutex_unlock(&d->lock);
		return 0;
	}
	changed = !n->unlinked && d->ent[n->idx].len != n->size;
	pthread_mutex_unlock(&d->lock);
	/*
	 * A length never synced (synchronous=OFF) would be lost with the
	 * node: make the data durable, then record the length for the next
	 * commit (the last close commits).
	 */
	ret = changed ? uf_fdatasync(n->f) : 0;
	err = uf_file_close(n->f);	/* writes back, drops the pages */
	if (!ret)
		ret = err;
	pthread_mutex_lock(&d->lock);
	if (changed && !ret && !n->unlinked) {
		d->ent[n->idx].len = n->size;
		d->dirty = true;
	}
	d->node[n->idx] = NULL;
	pthread_mutex_unlock(&d->lock);
	for (i = 0; i < n->shm_nreg; i++)
		free(n->shm_reg[i]);
	free(n->shm_reg);
	free(n);
	return ret;
}

/*
 * Unlink entry idx (its extent stays busy while it is open) and commit.
 * If the commit fails the file is still there, as after a failed
 * unlink(2): a journal whose deletion failed stays hot, and SQLite rolls
 * its transaction back rather than half-commit it.
 */
static int ufs_unlink(struct ufs_dev *d, int idx)
{
	struct ufs_disk_entry old;
	int ret;

	pthread_mutex_lock(&d->lock);
	old = d->ent[idx];
	d->ent[idx].used = 0;
	d->ent[idx].len = 0;
	if (d->node[idx])
		d->node[idx]->unlinked = true;
	d->dirty = true;
	pthread_mutex_unlock(&d->lock);
	ret = ufs_commit(d);
	if (ret) {
		pthread_mutex_lock(&d->lock);
		if (!d->ent[idx].used) {
			d->ent[idx] = old;
			if (d->node[idx])
				d->node[idx]->unlinked = false;
		}
		pthread_mutex_unlock(&d->lock);
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* I/O methods                                                         */

static struct ufs_file *ufs_f(sqlite3_file *pf)
{
	return (struct ufs_file *)pf;
}

static uint64_t ufs_size(struct ufs_node *n)
{
	uint64_t sz;

	pthread_mutex_lock(&n->d->lock);
	sz = n->size;
	pthread_mutex_unlock(&n->d->lock);
	return sz;
}

static int ufs_unfetch_all(struct ufs_file *p);
static int ufs_shm_unmap(sqlite3_file *pf, int delete_flag);
static int ufs_unlock(sqlite3_file *pf, int level);

static int ufs_close(sqlite3_file *pf)
{
	struct ufs_file *p = ufs_f(pf);
	struct ufs_node *n = p->n;
	struct ufs_dev *d;
	int ret, err, rc = SQLITE_OK;

	if (!n)
		return SQLITE_OK;
	d = n->d;
	ufs_unfetch_all(p);
	ufs_shm_unmap(pf, 0);
	ufs_unlock(pf, SQLITE_LOCK_NONE);
	free(p->fetch);
	p->fetch = NULL;

	pthread_mutex_lock(&ufs_global);
	if (p->delete_on_close) {
		pthread_mutex_lock(&d->lock);
		err = n->unlinked ? -1 : 0;
		pthread_mutex_unlock(&d->lock);
		if (!err && ufs_unlink(d, (int)n->idx))
			rc = SQLITE_IOERR_DELETE;
	}
	ret = ufs_node_put(n);
	err = ufs_dev_put(d);
	pthread_mutex_unlock(&ufs_global);
	p->n = NULL;
	if (ret || err)
		rc = SQLITE_IOERR_CLOSE;
	return rc;
}

static int ufs_read(sqlite3_file *pf, void *buf, int amt, sqlite3_int64 off)
{
	struct ufs_node *n = ufs_f(pf)->n;
	uint64_t size = ufs_size(n), want;
	ssize_t got = 0;

	if (off < 0 || amt < 0)
		return SQLITE_IOERR_READ;
	if ((uint64_t)off < size) {
		want = size - (uint64_t)off;
		if (want > (uint64_t)amt)
			want = (uint64_t)amt;
		got = uf_pread(n->f, buf, (size_t)want, (uint64_t)off);
		if (got < 0)
			return SQLITE_IOERR_READ;
	}
	if (got < amt) {
		/* SQLite wants the rest zeroed on a short read */
		memset((char *)buf + got, 0, (size_t)(amt - got));
		return SQLITE_IOERR_SHORT_READ;
	}
	return SQLITE_OK;
}

/* Write buf (NULL: zeros) at off; 0 or -errno. */
static int ufs_pwrite_all(struct uf_file *f, const void *buf, uint64_t len,
			  uint64_t off)
{
	while (len) {
		size_t chunk = buf ? (size_t)len :
			(size_t)(len < UFS_PAGE ? len : UFS_PAGE);
		ssize_t n = uf_pwrite(f, buf ? buf : ufs_zero, chunk, off);

		if (n <= 0)
			return n < 0 ? (int)n : -EIO;
		len -= (uint64_t)n;
		off += (uint64_t)n;
		if (buf)
			buf = (const char *)buf + n;
	}
	return 0;
}

/* Make the file size bytes long, in memory (xSync makes it durable). */
static void ufs_set_size(struct ufs_node *n, uint64_t size, bool grow_only)
{
	pthread_mutex_lock(&n->d->lock);
	if (!grow_only || size > n->size)
		n->size = size;
	pthread_mutex_unlock(&n->d->lock);
}

static int ufs_write(sqlite3_file *pf, const void *buf, int amt,
		     sqlite3_int64 off)
{
	struct ufs_node *n = ufs_f(pf)->n;
	uint64_t end, size;

	if (off < 0 || amt < 0)
		return SQLITE_IOERR_WRITE;
	end = (uint64_t)off + (uint64_t)amt;
	if (end > n->d->head.extent)
		return SQLITE_FULL;
	size = ufs_size(n);
	if ((uint64_t)off > size &&
	    ufs_pwrite_all(n->f, NULL, (uint64_t)off - size, size))
		return SQLITE_IOERR_WRITE;
	if (ufs_pwrite_all(n->f, buf, (uint64_t)amt, (uint64_t)off))
		return SQLITE_IOERR_WRITE;
	ufs_set_size(n, end, true);
	return SQLITE_OK;
}

static int ufs_truncate(sqlite3_file *pf, sqlite3_int64 size)
{
	struct ufs_node *n = ufs_f(pf)->n;
	uint64_t old;

	if (size < 0)
		return SQLITE_IOERR_TRUNCATE;
	if ((uint64_t)size > n->d->head.extent)
		return SQLITE_FULL;
	old = ufs_size(n);
	if ((uint64_t)size > old &&
	    ufs_pwrite_all(n->f, NULL, (uint64_t)size - old, old))
		return SQLITE_IOERR_TRUNCATE;
	ufs_set_size(n, (uint64_t)size, false);
	return SQLITE_OK;
}

static int ufs_sync(sqlite3_file *pf, int flags)
{
	struct ufs_node *n = ufs_f(pf)->n;
	struct ufs_dev *d = n->d;
	uint64_t size = ufs_size(n);
	int ret;

	ret = (flags & SQLITE_SYNC_DATAONLY) ? uf_fdatasync(n->f) :
					       uf_fsync(n->f);
	if (ret)
		return SQLITE_IOERR_FSYNC;
	/* the data up to size is on the device: now its length (and any
	 * create or other change waiting in the directory) */
	pthread_mutex_lock(&d->lock);
	if (!n->unlinked && d->ent[n->idx].len != size) {
		d->ent[n->idx].len = size;
		d->dirty = true;
	}
	pthread_mutex_unlock(&d->lock);
	if (ufs_commit(d))
		return SQLITE_IOERR_DIR_FSYNC;
	return SQLITE_OK;
}

static int ufs_file_size(sqlite3_file *pf, sqlite3_int64 *size)
{
	*size = (sqlite3_int64)ufs_size(ufs_f(pf)->n);
	return SQLITE_OK;
}

/*
 * Locks inside the process, with the unix VFS's levels: SHARED readers;
 * one RESERVED writer-to-be; PENDING stops new readers; EXCLUSIVE once
 * the others have gone.
 */
static int ufs_lock(sqlite3_file *pf, int level)
{
	struct ufs_file *p = ufs_f(pf);
	struct ufs_node *n = p->n;
	int rc = SQLITE_OK;

	pthread_mutex_lock(&n->d->lock);
	if (p->level >= level)
		goto out;
	if (level == SQLITE_LOCK_SHARED) {
		if ((n->pending && n->pending != p) ||
		    (n->excl && n->excl != p)) {
			rc = SQLITE_BUSY;
			goto out;
		}
		n->nshared++;
		p->level = SQLITE_LOCK_SHARED;
	} else if (level == SQLITE_LOCK_RESERVED) {
		if (n->reserved && n->reserved != p) {
			rc = SQLITE_BUSY;
			goto out;
		}
		n->reserved = p;
		p->level = SQLITE_LOCK_RESERVED;
	} else {
		if (n->pending && n->pending != p) {
			rc = SQLITE_BUSY;
			goto out;
		}
		n->pending = p;
		p->level = SQLITE_LOCK_PENDING;
		if (level == SQLITE_LOCK_PENDING)
			goto out;
		if (n->nshared > 1) {
			rc = SQLITE_BUSY;
			goto out;
		}
		n->excl = p;
		p->level = SQLITE_LOCK_EXCLUSIVE;
	}
out:
	pthread_mutex_unlock(&n->d->lock);
	return rc;
}

static int ufs_unlock(sqlite3_file *pf, int level)
{
	struct ufs_file *p = ufs_f(pf);
	struct ufs_node *n = p->n;

	pthread_mutex_lock(&n->d->lock);
	if (p->level > level) {
		if (n->excl == p)
			n->excl = NULL;
		if (n->pending == p)
			n->pending = NULL;
		if (level < SQLITE_LOCK_RESERVED && n->reserved == p)
			n->reserved = NULL;
		if (level == SQLITE_LOCK_NONE)
			n->nshared--;
		p->level = level;
	}
	pthread_mutex_unlock(&n->d->lock);
	return SQLITE_OK;
}

static int ufs_check_reserved(sqlite3_file *pf, int *res)
{
	struct ufs_node *n = ufs_f(pf)->n;

	pthread_mutex_lock(&n->d->lock);
	*res = n->reserved || n->pending || n->excl;
	pthread_mutex_unlock(&n->d->lock);
	return SQLITE_OK;
}

static int ufs_file_control(sqlite3_file *pf, int op, void *arg)
{
	struct ufs_node *n = ufs_f(pf)->n;

	switch (op) {
	case UF_SQLITE_FCNTL_DEVICE:
		*(struct uf_dev **)arg = n->d->dev;
		return SQLITE_OK;
	case SQLITE_FCNTL_VFSNAME:
		*(char **)arg = sqlite3_mprintf("%s", ufs_vfs.zName);
		return SQLITE_OK;
	default:
		return SQLITE_NOTFOUND;
	}
}

static int ufs_sector_size(sqlite3_file *pf)
{
	(void)pf;
	return UFS_PAGE;
}

static int ufs_device_characteristics(sqlite3_file *pf)
{
	(void)pf;
	/* a write touches only the 4K blocks it covers */
	return SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

/* ---- WAL shared memory, on the heap ---- */

static int ufs_shm_map(sqlite3_file *pf, int region, int sz, int extend,
		       void volatile **pp)
{
	struct ufs_file *p = ufs_f(pf);
	struct ufs_node *n = p->n;
	int rc = SQLITE_OK;

	*pp = NULL;
	pthread_mutex_lock(&n->d->lock);
	if (!p->shm_mapped) {
		p->shm_mapped = true;
		n->shm_refs++;
	}
	if (region >= n->shm_nreg) {
		void **reg;

		if (!extend)
			goto out;
		reg = realloc(n->shm_reg, sizeof(*reg) * (size_t)(region + 1));
		if (!reg) {
			rc = SQLITE_NOMEM;
			goto out;
		}
		memset(reg + n->shm_nreg, 0,
		       sizeof(*reg) * (size_t)(region + 1 - n->shm_nreg));
		n->shm_reg = reg;
		n->shm_nreg = region + 1;
	}
	if (!n->shm_reg[region]) {
		if (!extend)
			goto out;
		n->shm_reg[region] = calloc(1, (size_t)sz);
		if (!n->shm_reg[region]) {
			rc = SQLITE_NOMEM;
			goto out;
		}
	}
	*pp = n->shm_reg[region];
out:
	pthread_mutex_unlock(&n->d->lock);
	return rc;
}

static int ufs_shm_lock(sqlite3_file *pf, int ofst, int nr, int flags)
{
	struct ufs_file *p = ufs_f(pf);
	struct ufs_node *n = p->n;
	unsigned int mask = ((1u << nr) - 1) << ofst;
	int i, rc = SQLITE_OK;

	if (ofst < 0 || nr < 1 || ofst + nr > UFS_SHM_LOCKS)
		return SQLITE_IOERR_SHMLOCK;
	pthread_mutex_lock(&n->d->lock);
	if (flags & SQLITE_SHM_UNLOCK) {
		for (i = ofst; i < ofst + nr; i++) {
			if ((p->shm_shared >> i) & 1)
				n->shm_shared[i]--;
			if (n->shm_excl[i] == p)
				n->shm_excl[i] = NULL;
		}
		p->shm_shared &= ~mask;
		p->shm_excl &= ~mask;
	} else if (flags & SQLITE_SHM_SHARED) {
		for (i = ofst; i < ofst + nr; i++)
			if (n->shm_excl[i] && n->shm_excl[i] != p) {
				rc = SQLITE_BUSY;
				goto out;
			}
		for (i = ofst; i < ofst + nr; i++)
			if (!((p->shm_shared >> i) & 1))
				n->shm_shared[i]++;
		p->shm_shared |= mask;
	} else {
		for (i = ofst; i < ofst + nr; i++)
			if ((n->shm_excl[i] && n->shm_excl[i] != p) ||
			    n->shm_shared[i] - (int)((p->shm_shared >> i) & 1)) {
				rc = SQLITE_BUSY;
				goto out;
			}
		for (i = ofst; i < ofst + nr; i++)
			n->shm_excl[i] = p;
		p->shm_excl |= mask;
	}
out:
	pthread_mutex_unlock(&n->d->lock);
	return rc;
}

static void ufs_shm_barrier(sqlite3_file *pf)
{
	(void)pf;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static int ufs_shm_unmap(sqlite3_file *pf, int delete_flag)
{
	struct ufs_file *p = ufs_f(pf);
	struct ufs_node *n = p->n;
	int i;

	(void)delete_flag;	/* the heap is gone with the process anyway */
	pthread_mutex_lock(&n->d->lock);
	for (i = 0; i < UFS_SHM_LOCKS; i++) {
		if ((p->shm_shared >> i) & 1)
			n->shm_shared[i]--;
		if (n->shm_excl[i] == p)
			n->shm_excl[i] = NULL;
	}
	p->shm_shared = p->shm_excl = 0;
	if (p->shm_mapped) {
		p->shm_mapped = false;
		if (--n->shm_refs == 0) {
			for (i = 0; i < n->shm_nreg; i++)
				free(n->shm_reg[i]);
			free(n->shm_reg);
			n->shm_reg = NULL;
			n->shm_nreg = 0;
		}
	}
	pthread_mutex_unlock(&n->d->lock);
	return SQLITE_OK;
}

/* ---- memory-mapped I/O: the cache page itself ---- */

static int ufs_fetch(sqlite3_file *pf, sqlite3_int64 off, int amt, void **pp)
{
	struct ufs_file *p = ufs_f(pf);
	struct ufs_node *n = p->n;
	struct uf_page *pg;

	*pp = NULL;
	/* one whole page inside the file, else SQLite uses xRead */
	if (amt != (int)UFS_PAGE || off < 0 || off % UFS_PAGE ||
	    (uint64_t)off + UFS_PAGE > ufs_size(n))
		return SQLITE_OK;
	if (p->nfetch == p->fetch_cap) {
		int cap = p->fetch_cap ? 2 * p->fetch_cap : 16;
		struct ufs_fetch *a = realloc(p->fetch, sizeof(*a) * (size_t)cap);

		if (!a)
			return SQLITE_OK;
		p->fetch = a;
		p->fetch_cap = cap;
	}
	if (uf_page_get(n->f, (unsigned long)(off / UFS_PAGE), 0, &pg))
		return SQLITE_OK;	/* xRead will say what is wrong */
	p->fetch[p->nfetch].pg = pg;
	p->fetch[p->nfetch].data = uf_page_data(pg);
	*pp = p->fetch[p->nfetch++].data;
	return SQLITE_OK;
}

static int ufs_unfetch_all(struct ufs_file *p)
{
	while (p->nfetch > 0)
		uf_page_put(p->fetch[--p->nfetch].pg);
	return SQLITE_OK;
}

static int ufs_unfetch(sqlite3_file *pf, sqlite3_int64 off, void *data)
{
	struct ufs_file *p = ufs_f(pf);
	int i;

	(void)off;
	if (!data)
		return ufs_unfetch_all(p);
	for (i = p->nfetch - 1; i >= 0; i--)
		if (p->fetch[i].data == data) {
			uf_page_put(p->fetch[i].pg);
			p->fetch[i] = p->fetch[--p->nfetch];
			return SQLITE_OK;
		}
	return SQLITE_OK;
}

static const sqlite3_io_methods ufs_io = {
	.iVersion = 3,
	.xClose = ufs_close,
	.xRead = ufs_read,
	.xWrite = ufs_write,
	.xTruncate = ufs_truncate,
	.xSync = ufs_sync,
	.xFileSize = ufs_file_size,
	.xLock = ufs_lock,
	.xUnlock = ufs_unlock,
	.xCheckReservedLock = ufs_check_reserved,
	.xFileControl = ufs_file_control,
	.xSectorSize = ufs_sector_size,
	.xDeviceCharacteristics = ufs_device_characteristics,
	.xShmMap = ufs_shm_map,
	.xShmLock = ufs_shm_lock,
	.xShmBarrier = ufs_shm_barrier,
	.xShmUnmap = ufs_shm_unmap,
	.xFetch = ufs_fetch,
	.xUnfetch = ufs_unfetch,
};

/* ------------------------------------------------------------------ */
/* VFS methods                                                         */

static bool ufs_is_temp(const char *name, int flags)
{
	return !name || (flags & (SQLITE_OPEN_TEMP_DB |
				  SQLITE_OPEN_TEMP_JOURNAL |
				  SQLITE_OPEN_TRANSIENT_DB |
				  SQLITE_OPEN_SUBJOURNAL));
}

static int ufs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *pf,
		    int flags, int *out_flags)
{
	struct ufs_file *p = ufs_f(pf);
	struct ufs_conf c;
	struct ufs_dev *d;
	struct ufs_node *n;
	bool created = false;
	int idx, rc, ret;

	(void)vfs;
	memset(p, 0, sizeof(*p));
	if (ufs_is_temp(name, flags))
		return ufs_base()->xOpen(ufs_base(), name, pf, flags,
					 out_flags);
	ufs_ok();
	rc = ufs_conf_parse(name, &c);
	if (rc != SQLITE_OK)
		return rc;
	if (strlen(name) >= UFS_NAME_LEN)
		return ufs_fail(SQLITE_CANTOPEN, -ENAMETOOLONG,
				"%s: names have at most %d bytes on a uflush device",
				name, UFS_NAME_LEN - 1);

	pthread_mutex_lock(&ufs_global);
	rc = ufs_dev_get(&c, &d);
	if (rc != SQLITE_OK)
		goto out;
	d->refs++;
	pthread_mutex_lock(&d->lock);
	idx = ufs_lookup(d, name);
	if (idx >= 0 && (flags & SQLITE_OPEN_EXCLUSIVE) &&
	    (flags & SQLITE_OPEN_CREATE)) {
		pthread_mutex_unlock(&d->lock);
		rc = ufs_fail(SQLITE_CANTOPEN, -EEXIST, "%s exists", name);
		goto put;
	}
	if (idx < 0) {
		unsigned int i;

		if (!(flags & SQLITE_OPEN_CREATE)) {
			pthread_mutex_unlock(&d->lock);
			rc = ufs_fail(SQLITE_CANTOPEN, -ENOENT,
				      "%s: no such file on %s", name, d->path);
			goto put;
		}
		for (i = 0; i < d->head.nr_entries; i++)
			if (!d->ent[i].used && !d->node[i])
				break;
		if (i == d->head.nr_entries) {
			pthread_mutex_unlock(&d->lock);
			rc = ufs_fail(SQLITE_CANTOPEN, -ENOSPC,
				      "%s: the directory of %s is full (%u files)",
				      name, d->path, d->head.nr_entries);
			goto put;
		}
		idx = (int)i;
		snprintf(d->ent[idx].name, UFS_NAME_LEN, "%s", name);
		d->ent[idx].len = 0;
		d->ent[idx].gen++;
		d->ent[idx].used = 1;
		d->dirty = true;
		created = true;
	}
	pthread_mutex_unlock(&d->lock);
	ret = ufs_node_get(d, (unsigned int)idx, &n);
	if (ret) {
		rc = ufs_fail(SQLITE_CANTOPEN, ret, "%s: uf_file_open: %s",
			      name, strerror(-ret));
		if (created) {
			pthread_mutex_lock(&d->lock);
			d->ent[idx].used = 0;
			pthread_mutex_unlock(&d->lock);
		}
		goto put;
	}
	p->n = n;
	p->delete_on_close = flags & SQLITE_OPEN_DELETEONCLOSE;
	pf->pMethods = &ufs_io;
	if (out_flags)
		*out_flags = flags;
	pthread_mutex_unlock(&ufs_global);
	return SQLITE_OK;
put:
	ufs_dev_put(d);
out:
	pthread_mutex_unlock(&ufs_global);
	return rc;
}

static int ufs_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	struct ufs_dev *d;
	int idx, rc = SQLITE_OK;

	(void)vfs;
	(void)sync_dir;		/* always synced: see the top of the file */
	pthread_mutex_lock(&ufs_global);
	d = ufs_dev_of_name(name, &idx);
	if (!d)
		rc = SQLITE_IOERR_DELETE_NOENT;
	else if (ufs_unlink(d, idx))
		rc = SQLITE_IOERR_DELETE;
	pthread_mutex_unlock(&ufs_global);
	return rc;
}

static int ufs_access(sqlite3_vfs *vfs, const char *name, int flags,
		      int *res)
{
	struct ufs_dev *d;
	int idx;

	(void)vfs;
	(void)flags;
	*res = 0;
	pthread_mutex_lock(&ufs_global);
	d = ufs_dev_of_name(name, &idx);
	if (d) {
		pthread_mutex_lock(&d->lock);
		/* as the unix VFS: an empty file does not "exist" */
		*res = d->node[idx] ? d->node[idx]->size > 0 :
				      d->ent[idx].len > 0;
		if (flags != SQLITE_ACCESS_EXISTS)
			*res = 1;
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_unlock(&ufs_global);
	return SQLITE_OK;
}

/* Names are kept as given: they are keys in the device's directory. */
static int ufs_full_pathname(sqlite3_vfs *vfs, const char *name, int n_out,
			     char *out)
{
	(void)vfs;
	if ((int)strlen(name) >= n_out)
		return SQLITE_CANTOPEN;
	memcpy(out, name, strlen(name) + 1);
	return SQLITE_OK;
}

static void *ufs_dl_open(sqlite3_vfs *vfs, const char *path)
{
	(void)vfs;
	return ufs_base()->xDlOpen(ufs_base(), path);
}

static void ufs_dl_error(sqlite3_vfs *vfs, int n, char *msg)
{
	(void)vfs;
	ufs_base()->xDlError(ufs_base(), n, msg);
}

static void (*ufs_dl_sym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	(void)vfs;
	return ufs_base()->xDlSym(ufs_base(), h, sym);
}

static void ufs_dl_close(sqlite3_vfs *vfs, void *h)
{
	(void)vfs;
	ufs_base()->xDlClose(ufs_base(), h);
}

static int ufs_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return ufs_base()->xRandomness(ufs_base(), n, out);
}

static int ufs_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return ufs_base()->xSleep(ufs_base(), us);
}

static int ufs_current_time(sqlite3_vfs *vfs, double *t)
{
	(void)vfs;
	return ufs_base()->xCurrentTime(ufs_base(), t);
}

static int ufs_last_error(sqlite3_vfs *vfs, int n, char *msg)
{
	(void)vfs;
	if (n > 0)
		snprintf(msg, (size_t)n, "%s", ufs_err);
	return ufs_errno ? -ufs_errno : 0;
}

static int ufs_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *t)
{
	(void)vfs;
	return ufs_base()->xCurrentTimeInt64(ufs_base(), t);
}

static sqlite3_vfs ufs_vfs = {
	.iVersion = 2,
	.mxPathname = UFS_NAME_LEN - 1,
	.zName = "uflush",
	.xOpen = ufs_open,
	.xDelete = ufs_delete,
	.xAccess = ufs_access,
	.xFullPathname = ufs_full_pathname,
	.xDlOpen = ufs_dl_open,
	.xDlError = ufs_dl_error,
	.xDlSym = ufs_dl_sym,
	.xDlClose = ufs_dl_close,
	.xRandomness = ufs_randomness,
	.xSleep = ufs_sleep,
	.xCurrentTime = ufs_current_time,
	.xGetLastError = ufs_last_error,
	.xCurrentTimeInt64 = ufs_current_time64,
};

int uf_sqlite_vfs_register(const char *name, int make_default)
{
	sqlite3_vfs *base;
	int rc;

	pthread_mutex_lock(&ufs_global);
	if (!ufs_vfs.pAppData) {
		base = sqlite3_vfs_find(NULL);
		if (!base || base == &ufs_vfs) {
			pthread_mutex_unlock(&ufs_global);
			return SQLITE_ERROR;
		}
		ufs_vfs.pAppData = base;
		ufs_vfs.szOsFile = (int)sizeof(struct ufs_file);
		if (base->szOsFile > ufs_vfs.szOsFile)
			ufs_vfs.szOsFile = base->szOsFile;
	}
	if (name && strcmp(name, ufs_vfs.zName)) {
		if (sqlite3_vfs_find(ufs_vfs.zName) == &ufs_vfs) {
			pthread_mutex_unlock(&ufs_global);
			return SQLITE_MISUSE;	/* one name per process */
		}
		ufs_vfs.zName = strdup(name);
		if (!ufs_vfs.zName) {
			ufs_vfs.zName = "uflush";
			pthread_mutex_unlock(&ufs_global);
			return SQLITE_NOMEM;
		}
	}
	rc = sqlite3_vfs_register(&ufs_vfs, make_default);
	pthread_mutex_unlock(&ufs_global);
	return rc;
}

#ifdef UF_SQLITE_EXT
/*
 * The loadable extension's entry point: ".load uflush_sqlite" looks for
 * sqlite3_uflushsqlite_init.  The VFS stays registered after the
 * connection that loaded it closes.
 */
__attribute__((visibility("default")))
int sqlite3_uflushsqlite_init(sqlite3 *db, char **err,
			      const sqlite3_api_routines *api)
{
	int rc;

	(void)db;
	SQLITE_EXTENSION_INIT2(api);
	rc = uf_sqlite_vfs_register(NULL, 0);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("uflush: cannot register the VFS (%d)",
				       rc);
		return rc;
	}
	return SQLITE_OK_LOAD_PERMANENTLY;
}

__attribute__((visibility("default")))
int sqlite3_extension_init(sqlite3 *db, char **err,
			   const sqlite3_api_routines *api)
{
	return sqlite3_uflushsqlite_init(db, err, api);
}
#endif
