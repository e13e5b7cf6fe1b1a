// SPDX-License-Identifier: MIT
/*
 * tests/test_sqlite_vfs.c - the SQLite VFS over uflush (clients/sqlite):
 * every io method's edge cases called directly, the on-device directory
 * read back from the raw device, a crash of the process that holds it,
 * the refusal of a second process, bad URI parameters, injected write
 * errors, and SQLite itself on top.
 *
 * Each test runs in a process of its own (criterion); tests that fork do so
 * before they use uflush, whose threads a fork() would not copy.
 */
#include <sqlite3.h>
#include <signal.h>

#include "testutil.h"
#include "uflush.h"
#include "clients/sqlite/uflush_sqlite.h"

#define SQ_DEV_SIZE	(32ull << 20)
#define SQ_EXTENT	(1u << 20)
#define SQ_DATA_START	(1u << 20)

static sqlite3_vfs *sq_vfs(void)
{
	sqlite3_vfs *vfs;

	setenv("UFLUSH_SQLITE_QUIET", "1", 1);
	cr_assert_eq(uf_sqlite_vfs_register(NULL, 0), SQLITE_OK);
	vfs = sqlite3_vfs_find("uflush");
	cr_assert_not_null(vfs);
	return vfs;
}

/* A name as SQLite hands it to xOpen, with its URI parameters. */
static sqlite3_filename sq_name(const char *name, const char *dev)
{
	const char *params[] = { "dev", dev, "cachesize", "4M",
				 "extent", "1M" };
	sqlite3_filename f = sqlite3_create_filename(name, "", "", 3, params);

	cr_assert_not_null(f);
	return f;
}

static sqlite3_file *sq_open(sqlite3_vfs *vfs, sqlite3_filename name,
			     int flags, int *rc)
{
	sqlite3_file *f = calloc(1, (size_t)vfs->szOsFile);

	cr_assert_not_null(f);
	*rc = vfs->xOpen(vfs, name, f, flags, NULL);
	return f;
}

#define SQ_RW (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | \
	       SQLITE_OPEN_MAIN_DB)

static sqlite3_file *sq_open_ok(sqlite3_vfs *vfs, sqlite3_filename name)
{
	int rc;
	sqlite3_file *f = sq_open(vfs, name, SQ_RW, &rc);

	cr_assert_eq(rc, SQLITE_OK, "xOpen: %d (%s)", rc,
		     uf_sqlite_last_error());
	return f;
}

static void sq_close(sqlite3_file *f)
{
	cr_assert_eq(f->pMethods->xClose(f), SQLITE_OK);
	free(f);
}

static void sq_write(sqlite3_file *f, uint64_t off, size_t len, uint32_t seed)
{
	void *buf = tu_alloc(len);

	tu_fill(buf, len, off, seed);
	cr_assert_eq(f->pMethods->xWrite(f, buf, (int)len, (sqlite3_int64)off),
		     SQLITE_OK, "xWrite(%zu at %llu)", len,
		     (unsigned long long)off);
	free(buf);
}

static int64_t sq_size(sqlite3_file *f)
{
	sqlite3_int64 sz = -1;

	cr_assert_eq(f->pMethods->xFileSize(f, &sz), SQLITE_OK);
	return sz;
}

/*
 * What an io-method test starts from: the VFS, a device, one open file and
 * a scratch buffer of buflen bytes (none for 0).
 */
struct sq_fx {
	sqlite3_vfs *vfs;
	const char *dev;
	sqlite3_filename name;
	sqlite3_file *f;
	unsigned char *buf;
};

static struct sq_fx sq_setup(const char *file, size_t buflen)
{
	struct sq_fx x;

	x.vfs = sq_vfs();
	x.dev = tu_dev(TU_LOOP, SQ_DEV_SIZE);
	x.name = sq_name(file, x.dev);
	x.f = sq_open_ok(x.vfs, x.name);
	x.buf = buflen ? tu_alloc(buflen) : NULL;
	return x;
}

/* Closes the file the test holds last (x->f), frees its name and buffer. */
static void sq_done(struct sq_fx *x)
{
	sq_close(x->f);
	sqlite3_free_filename(x->name);
	free(x->buf);
}

/* ------------------------------------------------------------------ */
/* The directory as the raw device holds it                            */

struct sq_raw_entry {
	bool found;
	uint64_t len;
	unsigned int idx;
	uint64_t seq;
};

static uint32_t sq_crc32(const unsigned char *p, size_t len)
{
	uint32_t crc = 0xffffffffu;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/* The newest valid copy's entry for name (layout: uflush_sqlite.c). */
static struct sq_raw_entry sq_raw_lookup(const char *dev, const char *name,
					 int *copy)
{
	unsigned char *buf = tu_alloc(2 * TU_PAGE);
	struct sq_raw_entry e = { false, 0, 0, 0 };
	uint64_t seq, best_seq = 0;
	uint32_t crc, nr, i;
	int c, best = -1;

	cr_assert_eq(tu_raw_read(dev, 0, buf, 2 * TU_PAGE), 0);
	for (c = 0; c < 2; c++) {
		unsigned char *b = buf + c * TU_PAGE;

		memcpy(&crc, b + TU_PAGE - 4, 4);
		memcpy(&seq, b + 16, 8);
		if (memcmp(b, "UFSQLDIR", 8) || crc != sq_crc32(b, TU_PAGE - 4))
			continue;
		if (best < 0 || seq > best_seq) {
			best = c;
			best_seq = seq;
		}
	}
	cr_assert_geq(best, 0, "no valid directory copy on %s", dev);
	if (copy)
		*copy = best;
	e.seq = best_seq;
	memcpy(&nr, buf + best * TU_PAGE + 12, 4);
	for (i = 0; i < nr; i++) {
		unsigned char *ent = buf + best * TU_PAGE + 64 + i * 96;
		uint32_t used;

		memcpy(&used, ent + 92, 4);
		if (used && !strcmp((char *)ent, name)) {
			e.found = true;
			e.idx = i;
			memcpy(&e.len, ent + 80, 8);
		}
	}
	free(buf);
	return e;
}

/* ------------------------------------------------------------------ */
/* io methods                                                          */

TestSuite(sqlite_vfs, .timeout = 120);

Test(sqlite_vfs, short_reads_are_zero_filled, .fini = tu_fini)
{
	struct sq_fx x = sq_setup("a.db", 8192);
	sqlite3_file *f = x.f;
	int i;

	cr_assert_eq(sq_size(f), 0);
	sq_write(f, 0, 100, 1);
	cr_assert_eq(sq_size(f), 100);

	memset(x.buf, 0xaa, 8192);
	cr_assert_eq(f->pMethods->xRead(f, x.buf, 300, 0),
		     SQLITE_IOERR_SHORT_READ);
	cr_assert_eq(tu_check(x.buf, 100, 0, 1), -1, "the 100 bytes written");
	for (i = 100; i < 300; i++)
		cr_assert_eq(x.buf[i], 0, "byte %d after the end not zeroed",
			     i);
	cr_assert_eq(x.buf[300], 0xaa, "zeroed past the read");

	/* entirely past the end: all zeros, short */
	memset(x.buf, 0xaa, 8192);
	cr_assert_eq(f->pMethods->xRead(f, x.buf, 4096, 5000),
		     SQLITE_IOERR_SHORT_READ);
	for (i = 0; i < 4096; i++)
		cr_assert_eq(x.buf[i], 0);

	/* a full read is not short */
	cr_assert_eq(f->pMethods->xRead(f, x.buf, 100, 0), SQLITE_OK);
	sq_done(&x);
}

Test(sqlite_vfs, writes_grow_within_the_extent_only, .fini = tu_fini)
{
	struct sq_fx x = sq_setup("grow.db", 16384);
	sqlite3_file *f = x.f;
	int i;

	/* a gap reads as zeros, though the extent held something */
	tu_raw_fill(x.dev, SQ_DATA_START, 3 * TU_PAGE, 77);
	sq_write(f, 0, 10, 2);
	sq_write(f, 9000, 100, 3);
	cr_assert_eq(sq_size(f), 9100);
	cr_assert_eq(f->pMethods->xRead(f, x.buf, 8990, 10), SQLITE_OK);
	for (i = 0; i < 8990; i++)
		cr_assert_eq(x.buf[i], 0, "gap byte %d is %#x", 10 + i,
			     x.buf[i]);

	/* up to the end of the extent: fine; one byte past: SQLITE_FULL */
	sq_write(f, SQ_EXTENT - 4096, 4096, 4);
	cr_assert_eq(sq_size(f), SQ_EXTENT);
	cr_assert_eq(f->pMethods->xWrite(f, x.buf, 4096, SQ_EXTENT - 4095),
		     SQLITE_FULL);
	cr_assert_eq(f->pMethods->xWrite(f, x.buf, 1, SQ_EXTENT), SQLITE_FULL);
	cr_assert_eq(sq_size(f), SQ_EXTENT, "a refused write changed the size");
	cr_assert_eq(f->pMethods->xTruncate(f, SQ_EXTENT + 1), SQLITE_FULL);
	sq_done(&x);
}

Test(sqlite_vfs, truncate_shrinks_and_zero_extends, .fini = tu_fini)
{
	struct sq_fx x = sq_setup("t.db", 8192);
	sqlite3_file *f = x.f;
	struct sq_raw_entry e;
	int i;

	sq_write(f, 0, 8192, 5);
	cr_assert_eq(f->pMethods->xTruncate(f, 50), SQLITE_OK);
	cr_assert_eq(sq_size(f), 50);
	memset(x.buf, 0xaa, 8192);
	cr_assert_eq(f->pMethods->xRead(f, x.buf, 100, 0),
		     SQLITE_IOERR_SHORT_READ);
	cr_assert_eq(tu_check(x.buf, 50, 0, 5), -1);
	for (i = 50; i < 100; i++)
		cr_assert_eq(x.buf[i], 0);

	/* growing by truncate: zeros, not the old bytes */
	cr_assert_eq(f->pMethods->xTruncate(f, 8192), SQLITE_OK);
	cr_assert_eq(sq_size(f), 8192);
	cr_assert_eq(f->pMethods->xRead(f, x.buf, 8192, 0), SQLITE_OK);
	cr_assert_eq(tu_check(x.buf, 50, 0, 5), -1);
	for (i = 50; i < 8192; i++)
		cr_assert_eq(x.buf[i], 0, "byte %d came back after truncate",
			     i);

	/* the length is durable after xSync */
	cr_assert_eq(f->pMethods->xTruncate(f, 1000), SQLITE_OK);
	cr_assert_eq(f->pMethods->xSync(f, SQLITE_SYNC_NORMAL), SQLITE_OK);
	e = sq_raw_lookup(x.dev, "t.db", NULL);
	cr_assert(e.found);
	cr_assert_eq(e.len, 1000, "directory says %llu", (unsigned long long)e.len);
	sq_done(&x);
}

/* xSync: data and length on the device, whatever the flags. */
Test(sqlite_vfs, sync_makes_data_and_length_durable, .fini = tu_fini)
{
	static const int flags[] = {
		SQLITE_SYNC_NORMAL, SQLITE_SYNC_FULL,
		SQLITE_SYNC_NORMAL | SQLITE_SYNC_DATAONLY,
		SQLITE_SYNC_FULL | SQLITE_SYNC_DATAONLY,
	};
	struct sq_fx x = sq_setup("s.db", 0);
	sqlite3_file *f = x.f;
	struct sq_raw_entry e;
	unsigned int i;
	uint64_t off = 0, seq = 0;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		uint64_t len = 5000 + i * 3000;

		sq_write(f, off, len - off, 10 + i);
		e = sq_raw_lookup(x.dev, "s.db", NULL);
		cr_assert(!e.found || e.len < len,
			  "the length is on the device before xSync");
		cr_assert_eq(f->pMethods->xSync(f, flags[i]), SQLITE_OK);
		e = sq_raw_lookup(x.dev, "s.db", NULL);
		cr_assert(e.found, "no entry after xSync(%#x)", flags[i]);
		cr_assert_eq(e.len, len, "xSync(%#x): length %llu, want %llu",
			     flags[i], (unsigned long long)e.len,
			     (unsigned long long)len);
		cr_assert_gt(e.seq, seq, "the directory was not rewritten");
		seq = e.seq;
		/* the pattern follows file offsets; the raw read must
		 * cover whole blocks */
		{
			uint64_t from = off & ~4095ull;
			uint64_t to = (len + 4095) & ~4095ull;
			unsigned char *raw = tu_alloc(to - from);

			cr_assert_eq(tu_raw_read(x.dev, SQ_DATA_START + e.idx *
						 (uint64_t)SQ_EXTENT + from,
						 raw, to - from), 0);
			cr_assert_eq(tu_check(raw + (off - from), len - off,
					      off, 10 + i), -1,
				     "xSync(%#x): data not on the device",
				     flags[i]);
			free(raw);
		}
		off = len;
	}
	sq_done(&x);
}

Test(sqlite_vfs, delete_of_an_open_file, .fini = tu_fini)
{
	/* another file stays open throughout: x.f, keep.db */
	struct sq_fx x = sq_setup("keep.db", 4096);
	sqlite3_vfs *vfs = x.vfs;
	sqlite3_filename name = sq_name("d.db", x.dev);
	sqlite3_file *f = sq_open_ok(vfs, name), *g;
	int res = -1, rc;

	sq_write(f, 0, 4096, 20);
	cr_assert_eq(vfs->xAccess(vfs, "d.db", SQLITE_ACCESS_EXISTS, &res),
		     SQLITE_OK);
	cr_assert_eq(res, 1);
	cr_assert_eq(vfs->xDelete(vfs, "d.db", 0), SQLITE_OK);
	cr_assert_eq(vfs->xAccess(vfs, "d.db", SQLITE_ACCESS_EXISTS, &res),
		     SQLITE_OK);
	cr_assert_eq(res, 0, "deleted, yet it exists");
	cr_assert(!sq_raw_lookup(x.dev, "d.db", NULL).found,
		  "the deletion is not on the device");
	cr_assert_eq(vfs->xDelete(vfs, "d.db", 0), SQLITE_IOERR_DELETE_NOENT);

	/* the open handle still works, as after unlink(2) */
	cr_assert_eq(f->pMethods->xRead(f, x.buf, 4096, 0), SQLITE_OK);
	cr_assert_eq(tu_check(x.buf, 4096, 0, 20), -1);
	sq_write(f, 4096, 100, 21);

	/* a new file of that name is a new, empty file */
	g = sq_open(vfs, name, SQ_RW, &rc);
	cr_assert_eq(rc, SQLITE_OK);
	cr_assert_eq(sq_size(g), 0);
	cr_assert_eq(sq_size(f), 4196);
	sq_close(g);
	sq_close(f);
	/* without CREATE, a missing file cannot be opened */
	cr_assert_eq(vfs->xDelete(vfs, "d.db", 0), SQLITE_OK);
	g = sq_open(vfs, name, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MAIN_DB, &rc);
	cr_assert_eq(rc, SQLITE_CANTOPEN);
	cr_assert(strstr(uf_sqlite_last_error(), "no such file"), "%s",
		  uf_sqlite_last_error());
	free(g);
	sqlite3_free_filename(name);
	sq_done(&x);
}

/* xFetch hands out the cache page itself, or nothing. */
Test(sqlite_vfs, fetch_is_the_cache_page, .fini = tu_fini)
{
	struct sq_fx x = sq_setup("m.db", 4096);
	sqlite3_file *f = x.f;
	void *p = NULL, *q = NULL;

	sq_write(f, 0, 3 * 4096, 30);
	cr_assert_eq(f->pMethods->xFetch(f, 4096, 4096, &p), SQLITE_OK);
	cr_assert_not_null(p);
	cr_assert_eq((uintptr_t)p % 4096, 0);
	cr_assert_eq(tu_check(p, 4096, 4096, 30), -1);
	/* not a copy: a write shows through the fetched pointer */
	tu_fill(x.buf, 100, 4096, 31);
	cr_assert_eq(f->pMethods->xWrite(f, x.buf, 100, 4096), SQLITE_OK);
	cr_assert_eq(tu_check(p, 100, 4096, 31), -1,
		     "the fetched page is a copy");
	cr_assert_eq(f->pMethods->xUnfetch(f, 4096, p), SQLITE_OK);

	/* what is not one aligned page inside the file: no pointer */
	cr_assert_eq(f->pMethods->xFetch(f, 100, 4096, &q), SQLITE_OK);
	cr_assert_null(q);
	cr_assert_eq(f->pMethods->xFetch(f, 0, 8192, &q), SQLITE_OK);
	cr_assert_null(q);
	cr_assert_eq(f->pMethods->xFetch(f, 3 * 4096, 4096, &q), SQLITE_OK);
	cr_assert_null(q, "a page past the end was handed out");
	/* held at close: given back by xClose */
	cr_assert_eq(f->pMethods->xFetch(f, 0, 4096, &q), SQLITE_OK);
	cr_assert_not_null(q);
	sq_done(&x);
}

/* ------------------------------------------------------------------ */
/* Crashes and other processes                                         */

/*
 * A child writes and syncs a.db, creates b.db without a sync, writes more
 * to a.db without a sync, then dies by SIGKILL: its cache dies with it.
 */
static void sq_crash_child(const char *dev)
{
	sqlite3_vfs *vfs = sq_vfs();
	sqlite3_filename a = sq_name("a.db", dev), b = sq_name("b.db", dev);
	sqlite3_file *fa, *fb;
	int rc;

	fa = sq_open(vfs, a, SQ_RW, &rc);
	if (rc)
		_exit(2);
	fb = sq_open(vfs, b, SQ_RW, &rc);
	if (rc)
		_exit(2);
	(void)fb;
	{
		void *buf = tu_alloc(20000);

		tu_fill(buf, 20000, 0, 40);
		if (fa->pMethods->xWrite(fa, buf, 12288, 0) ||
		    fa->pMethods->xSync(fa, SQLITE_SYNC_NORMAL))
			_exit(3);
		/* b.db's creation went with that commit; now more, unsynced */
		if (fa->pMethods->xWrite(fa, buf, 20000, 12288))
			_exit(3);
	}
	kill(getpid(), SIGKILL);
	_exit(4);
}

Test(sqlite_vfs, directory_survives_a_crash, .fini = tu_fini)
{
	const char *dev = tu_dev(TU_LOOP, SQ_DEV_SIZE);
	sqlite3_filename a;
	sqlite3_file *f;
	sqlite3_vfs *vfs;
	unsigned char *buf = tu_alloc(12288);
	int st = 0, rc, copy, res = 0;
	struct sq_raw_entry e;
	pid_t pid;

	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid)
		sq_crash_child(dev);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		  "the child did not reach its crash (status %#x)", st);

	vfs = sq_vfs();
	a = sq_name("a.db", dev);
	e = sq_raw_lookup(dev, "a.db", &copy);
	cr_assert(e.found);
	cr_assert_eq(e.len, 12288, "length %llu", (unsigned long long)e.len);
	/* the device may be busy for a moment after the kill */
	for (int i = 0; i < 500; i++) {
		f = sq_open(vfs, a, SQ_RW, &rc);
		if (rc != SQLITE_CANTOPEN || uf_sqlite_last_errno() != -EBUSY)
			break;
		free(f);
		usleep(10000);
	}
	cr_assert_eq(rc, SQLITE_OK, "%s", uf_sqlite_last_error());
	cr_assert_eq(sq_size(f), 12288);
	cr_assert_eq(f->pMethods->xRead(f, buf, 12288, 0), SQLITE_OK);
	cr_assert_eq(tu_check(buf, 12288, 0, 40), -1);
	cr_assert_eq(vfs->xAccess(vfs, "b.db", SQLITE_ACCESS_READWRITE, &res),
		     SQLITE_OK);
	cr_assert_eq(res, 1, "b.db's creation was synced with a.db");
	sq_close(f);
	sqlite3_free_filename(a);
	free(buf);
}

/* A torn newest directory copy: the one before it is the directory. */
Test(sqlite_vfs, torn_directory_falls_back, .fini = tu_fini)
{
	struct sq_fx x = sq_setup("x.db", 4096);
	sqlite3_file *f = x.f;
	int copy;

	sq_write(f, 0, 4096, 50);
	cr_assert_eq(f->pMethods->xSync(f, SQLITE_SYNC_NORMAL), SQLITE_OK);
	sq_write(f, 4096, 4096, 51);
	cr_assert_eq(f->pMethods->xSync(f, SQLITE_SYNC_NORMAL), SQLITE_OK);
	sq_close(f);
	cr_assert_eq(sq_raw_lookup(x.dev, "x.db", &copy).len, 8192);

	/* tear the newest copy: half of it old bytes */
	cr_assert_eq(tu_raw_read(x.dev, (uint64_t)copy * 4096, x.buf, 4096), 0);
	memset(x.buf + 2048, 0x5a, 2048);
	cr_assert_eq(tu_raw_io(x.dev, true, (uint64_t)copy * 4096, x.buf,
			       4096), 0);

	x.f = f = sq_open_ok(x.vfs, x.name);
	cr_assert_eq(sq_size(f), 4096, "the torn copy was used");
	sq_done(&x);
}

/*
 * The directory a format's first write puts in copy 0 of a device of
 * SQ_DEV_SIZE formatted with extent=1M (layout: uflush_sqlite.c), with
 * sequence number seq.
 */
static void sq_dir_image(unsigned char *b, uint64_t seq)
{
	uint32_t v, crc;
	uint64_t q;

	memset(b, 0, TU_PAGE);
	memcpy(b, "UFSQLDIR", 8);
	v = 1;					/* version */
	memcpy(b + 8, &v, 4);
	v = (SQ_DEV_SIZE - SQ_DATA_START) / SQ_EXTENT;	/* entries */
	memcpy(b + 12, &v, 4);
	memcpy(b + 16, &seq, 8);
	q = SQ_EXTENT;
	memcpy(b + 24, &q, 8);
	q = SQ_DATA_START;
	memcpy(b + 32, &q, 8);
	q = SQ_DEV_SIZE;
	memcpy(b + 40, &q, 8);
	crc = sq_crc32(b, TU_PAGE - 4);
	memcpy(b + TU_PAGE - 4, &crc, 4);
}

/* Whether copy c of the raw device is a valid directory; its seq. */
static bool sq_copy_valid(const char *dev, int c, uint64_t *seq)
{
	unsigned char *b = tu_alloc(TU_PAGE);
	uint32_t crc;
	bool ok;

	cr_assert_eq(tu_raw_read(dev, (uint64_t)c * TU_PAGE, b, TU_PAGE), 0);
	memcpy(&crc, b + TU_PAGE - 4, 4);
	memcpy(seq, b + 16, 8);
	ok = !memcmp(b, "UFSQLDIR", 8) && crc == sq_crc32(b, TU_PAGE - 4);
	free(b);
	return ok;
}

/*
 * The device as a crash while formatting it leaves it: blank but for copy
 * 0, which holds the first write's bytes [from, to) only.
 */
static void sq_torn_format(const char *dev, const unsigned char *image,
			   size_t from, size_t to)
{
	unsigned char *b = tu_alloc(2 * TU_PAGE);

	memset(b, 0, 2 * TU_PAGE);
	memcpy(b + from, image + from, to - from);
	cr_assert_eq(tu_raw_io(dev, true, 0, b, 2 * TU_PAGE), 0);
	memset(b, 0, TU_PAGE);
	cr_assert_eq(tu_raw_io(dev, true, SQ_DATA_START, b, TU_PAGE), 0);
	free(b);
}

/*
 * A crash while formatting a fresh device tears the first directory write
 * (copy 0; copy 1 is not written yet): whichever sectors of it landed, the
 * device is blank again, and the next open formats it without format=1.
 * The whole first write, not torn, is a directory, and is used as one.
 */
Test(sqlite_vfs, torn_format_is_formatted_again, .fini = tu_fini)
{
	static const size_t tears[] = { 512, 1024, 2048, TU_PAGE - 512 };
	const char *dev = tu_dev(TU_LOOP, SQ_DEV_SIZE);
	unsigned char *image = tu_alloc(2 * TU_PAGE);	/* and a buffer */
	sqlite3_filename name;
	struct sq_raw_entry e;
	sqlite3_file *f;
	sqlite3_vfs *vfs;
	uint64_t seq;
	unsigned int i, head;
	int rc;

	vfs = sq_vfs();
	name = sq_name("t.db", dev);
	/* what makes it safe: copy 0 is written, and durable, first */
	f = sq_open_ok(vfs, name);
	cr_assert(sq_copy_valid(dev, 0, &seq) && seq == 1,
		  "a fresh format's first write is not copy 0 (seq %llu)",
		  (unsigned long long)seq);
	cr_assert(sq_copy_valid(dev, 1, &seq) && seq == 2,
		  "a fresh format's second write is not copy 1 (seq %llu)",
		  (unsigned long long)seq);
	sq_close(f);

	sq_dir_image(image, 100);
	for (i = 0; i < 2 * sizeof(tears) / sizeof(tears[0]); i++) {
		size_t t = tears[i / 2];

		/* the first t bytes landed, or all but them */
		head = !(i & 1);
		if (head)
			sq_torn_format(dev, image, 0, t);
		else
			sq_torn_format(dev, image, t, TU_PAGE);
		f = sq_open(vfs, name, SQ_RW, &rc);
		cr_assert_eq(rc, SQLITE_OK,
			     "a format torn after %s %zu bytes: %d (%s)",
			     head ? "the first" : "all but the first", t, rc,
			     uf_sqlite_last_error());
		sq_write(f, 0, 4096, 70 + i);
		cr_assert_eq(f->pMethods->xSync(f, SQLITE_SYNC_NORMAL),
			     SQLITE_OK);
		sq_close(f);
		cr_assert(sq_copy_valid(dev, 0, &seq) &&
			  sq_copy_valid(dev, 1, &seq),
			  "tear at %zu: the device was not formatted", t);
		e = sq_raw_lookup(dev, "t.db", NULL);
		cr_assert(e.found && e.len == 4096, "tear at %zu: t.db lost", t);
		/* the pattern follows file offsets */
		cr_assert_eq(tu_raw_read(dev, SQ_DATA_START + e.idx *
					 (uint64_t)SQ_EXTENT, image + TU_PAGE,
					 4096), 0);
		cr_assert_eq(tu_check(image + TU_PAGE, 4096, 0, 70 + i), -1,
			     "tear at %zu: t.db's data", t);
	}

	/* not torn: that directory (seq 100) is loaded, not formatted over */
	sq_torn_format(dev, image, 0, TU_PAGE);
	f = sq_open_ok(vfs, name);
	sq_write(f, 0, 4096, 80);
	cr_assert_eq(f->pMethods->xSync(f, SQLITE_SYNC_NORMAL), SQLITE_OK);
	sq_close(f);
	e = sq_raw_lookup(dev, "t.db", NULL);
	cr_assert(e.found);
	cr_assert_gt(e.seq, 100, "the first write's directory was not used");
	sqlite3_free_filename(name);
	free(image);
}

/* A second process is refused while one holds the device. */
Test(sqlite_vfs, second_process_refused, .fini = tu_fini)
{
	const char *dev = tu_dev(TU_LOOP, SQ_DEV_SIZE);
	int go[2], done[2], rc;
	sqlite3_filename name;
	sqlite3_file *f;
	sqlite3_vfs *vfs;
	char c = 0;
	pid_t pid;

	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(done), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		vfs = sq_vfs();
		name = sq_name("one.db", dev);
		f = sq_open(vfs, name, SQ_RW, &rc);
		c = rc == SQLITE_OK ? 'y' : 'n';
		if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
			_exit(1);
		if (rc == SQLITE_OK)
			f->pMethods->xClose(f);
		_exit(0);
	}
	cr_assert_eq(read(go[0], &c, 1), 1);
	cr_assert_eq(c, 'y', "the first process could not open the device");
	vfs = sq_vfs();
	name = sq_name("one.db", dev);
	f = sq_open(vfs, name, SQ_RW, &rc);
	cr_assert_eq(rc, SQLITE_CANTOPEN, "a second process opened the device");
	cr_assert_eq(uf_sqlite_last_errno(), -EBUSY);
	cr_assert(strstr(uf_sqlite_last_error(), dev), "%s",
		  uf_sqlite_last_error());
	free(f);
	cr_assert_eq(write(done[1], &c, 1), 1);
	waitpid(pid, NULL, 0);
	sqlite3_free_filename(name);
}

/* ------------------------------------------------------------------ */
/* URI parameters                                                      */

static void sq_expect_bad_uri(const char *dev, const char *params,
			      const char *says)
{
	char uri[512];
	sqlite3 *db = NULL;
	int rc;

	snprintf(uri, sizeof(uri), "file:p.db?vfs=uflush&dev=%s%s", dev,
		 params);
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
	cr_assert_eq(rc, SQLITE_CANTOPEN, "%s: rc %d", params, rc);
	cr_assert(strstr(uf_sqlite_last_error(), says),
		  "%s: the error \"%s\" does not say \"%s\"", params,
		  uf_sqlite_last_error(), says);
	sqlite3_close(db);
}

Test(sqlite_vfs, bad_uri_parameters, .fini = tu_fini)
{
	const char *dev = tu_dev(TU_LOOP, SQ_DEV_SIZE);
	char uri[512];
	sqlite3 *db = NULL;

	sq_vfs();
	sq_expect_bad_uri(dev, "&cachesize=abc", "cachesize=abc");
	sq_expect_bad_uri(dev, "&cachesize=4k", "cachesize=4k");
	sq_expect_bad_uri(dev, "&extent=3", "extent=3");
	sq_expect_bad_uri(dev, "&engine=floppy", "engine=floppy");
	sq_expect_bad_uri(dev, "&format=maybe", "format=maybe");
	sq_expect_bad_uri(dev, "&policy=linux-9.9", "policy=linux-9.9");
	sq_expect_bad_uri("/nonexistent/dev", "", "/nonexistent/dev");

	/* a device holding something else is not formatted unasked */
	tu_raw_fill(dev, 0, 8192, 60);
	sq_expect_bad_uri(dev, "", "format=1");
	tu_raw_expect(dev, 0, 8192, 60, "the device was changed");

	/* and with format=1 it is */
	snprintf(uri, sizeof(uri), "file:p.db?vfs=uflush&dev=%s&format=1", dev);
	cr_assert_eq(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE |
				     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
				     NULL), SQLITE_OK, "%s",
		     uf_sqlite_last_error());
	cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL),
		     SQLITE_OK);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}

/* ------------------------------------------------------------------ */
/* SQLite on top                                                       */

static sqlite3 *sq_db(const char *dev, const char *extra)
{
	char uri[512];
	sqlite3 *db = NULL;
	int rc;

	snprintf(uri, sizeof(uri),
		 "file:bank.db?vfs=uflush&dev=%s&cachesize=4M%s", dev,
		 extra ? extra : "");
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
	cr_assert_eq(rc, SQLITE_OK, "open %s: %d %s", uri, rc,
		     uf_sqlite_last_error());
	return db;
}

static void sq_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	cr_assert_eq(rc, SQLITE_OK, "%s: %s", sql, err ? err : "?");
}

static int64_t sq_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK,
		     "%s: %s", sql, sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s: %s", sql,
		     sqlite3_errmsg(db));
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void sq_integrity_ok(sqlite3 *db)
{
	sqlite3_stmt *st;

	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1,
					&st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
}

static void sq_bank(sqlite3 *db, int nacc)
{
	char sql[128];
	int i;

	sq_exec(db, "DROP TABLE IF EXISTS log");
	sq_exec(db, "CREATE TABLE log(x)");
	sq_exec(db, "CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER)");
	sq_exec(db, "BEGIN");
	for (i = 1; i <= nacc; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO accounts VALUES(%d, 1000)", i);
		sq_exec(db, sql);
	}
	sq_exec(db, "COMMIT");
}

static int sq_transfer(sqlite3 *db, int a, int b, int amount)
{
	char sql[256];
	int rc;

	snprintf(sql, sizeof(sql),
		 "BEGIN; UPDATE accounts SET balance = balance - %d WHERE id = %d;"
		 "UPDATE accounts SET balance = balance + %d WHERE id = %d;"
		 "INSERT INTO log VALUES(%d); COMMIT;",
		 amount, a, amount, b, a);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

Test(sqlite_vfs, sqlite_persists_in_both_modes, .fini = tu_fini)
{
	static const char *const modes[] = { "delete", "wal", "truncate" };
	const char *dev = tu_dev(TU_LOOP, 64ull << 20);
	char sql[128];
	sqlite3 *db, *db2;
	unsigned int m;
	int i;

	sq_vfs();
	for (m = 0; m < 3; m++) {
		db = sq_db(dev, "");
		snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s", modes[m]);
		sq_exec(db, sql);
		sq_exec(db, "DROP TABLE IF EXISTS accounts");
		sq_bank(db, 50);
		for (i = 0; i < 40; i++)
			cr_assert_eq(sq_transfer(db, i % 50 + 1, (i * 7) % 50 + 1,
						 i), SQLITE_OK);
		/* another connection in the process sees it (locks, shm) */
		db2 = sq_db(dev, "");
		cr_assert_eq(sq_int(db2, "SELECT sum(balance) FROM accounts"),
			     50000);
		sq_exec(db, "BEGIN IMMEDIATE");
		cr_assert_eq(sqlite3_exec(db2, "BEGIN IMMEDIATE", NULL, NULL,
					  NULL), SQLITE_BUSY,
			     "%s: two writers at once", modes[m]);
		sq_exec(db, "COMMIT");
		cr_assert_eq(sqlite3_close(db2), SQLITE_OK);
		cr_assert_eq(sqlite3_close(db), SQLITE_OK);

		db = sq_db(dev, "");
		sq_exec(db, "PRAGMA mmap_size=1048576");
		sq_integrity_ok(db);
		cr_assert_eq(sq_int(db, "SELECT sum(balance) FROM accounts"),
			     50000);
		cr_assert_eq(sq_int(db, "SELECT count(*) FROM accounts"), 50);
		cr_assert_eq(sqlite3_close(db), SQLITE_OK);
	}
}

/* With synchronous=OFF nothing is ever synced: a clean close keeps it all. */
Test(sqlite_vfs, synchronous_off_survives_a_clean_close, .fini = tu_fini)
{
	const char *dev = tu_dev(TU_LOOP, 64ull << 20);
	sqlite3 *db;

	sq_vfs();
	db = sq_db(dev, "");
	sq_exec(db, "PRAGMA synchronous=OFF");
	sq_bank(db, 300);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
	db = sq_db(dev, "");
	sq_integrity_ok(db);
	cr_assert_eq(sq_int(db, "SELECT count(*) FROM accounts"), 300);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}

/*
 * Write errors injected under SQLite: every tenth transaction runs while
 * the device fails all writes (and flushes), the others while it fails
 * every 29th request.  Those that meet an error fail with SQLITE_IOERR, the
 * others succeed, and after a reopen the database is whole and holds
 * exactly the transactions that succeeded.
 */
Test(sqlite_vfs, write_errors_are_ioerr_not_corruption, .fini = tu_fini)
{
	const char *dev = tu_dev(TU_LOOP, 64ull << 20);
	const struct uf_io_shape every = { .eio_every_nth = 29 };
	const struct uf_io_shape all = {
		.eio_offset = 0, .eio_len = 64ull << 20,
		.eio_ops = (1u << 1) | (1u << 2),
	};
	const struct uf_io_shape none = { 0 };
	struct uf_dev *udev = NULL;
	int i, rc, ok = 0, ioerr = 0;
	int64_t n;
	sqlite3 *db;

	sq_vfs();
	db = sq_db(dev, "&shaped=1");
	sq_bank(db, 20);
	cr_assert_eq(sqlite3_file_control(db, "main", UF_SQLITE_FCNTL_DEVICE,
					  &udev), SQLITE_OK);
	cr_assert_not_null(udev);
	for (i = 0; i < 200; i++) {
		bool bad = i % 10 == 5;

		cr_assert_eq(uf_dev_set_shape(udev, bad ? &all : &every), 0);
		rc = sq_transfer(db, i % 20 + 1, (i * 3) % 20 + 1, 7);
		if (rc == SQLITE_OK)
			ok++;
		else if ((rc & 0xff) == SQLITE_IOERR)
			ioerr++;
		else
			cr_assert_fail("transfer %d: %d (%s), want OK or IOERR",
				       i, rc, sqlite3_errmsg(db));
		cr_assert(!bad || rc != SQLITE_OK,
			  "transfer %d committed while no write could", i);
	}
	cr_assert_eq(uf_dev_set_shape(udev, &none), 0);
	cr_assert_geq(ioerr, 20, "write errors did not reach SQLite");
	cr_assert_gt(ok, 100, "too few transactions got through");
	sqlite3_close(db);

	/* a new cache reads what the device holds */
	db = sq_db(dev, "");
	sq_integrity_ok(db);
	cr_assert_eq(sq_int(db, "SELECT sum(balance) FROM accounts"), 20000);
	/* every commit that said OK is there, none that failed */
	n = sq_int(db, "SELECT count(*) FROM log");
	cr_assert_eq(n, ok, "%d commits acknowledged, %lld there", ok,
		     (long long)n);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
	cr_log_info("%d transfers committed, %d got SQLITE_IOERR", ok, ioerr);
}

/* Opening dev must fail, saying why, and leave the device as it was. */
static void sq_expect_refused(const char *dev, const unsigned char *dir,
			      const unsigned char *data, const char *says,
			      int err)
{
	unsigned char *b = tu_alloc(2 * TU_PAGE);
	char uri[512];
	sqlite3 *db = NULL;
	int rc;

	snprintf(uri, sizeof(uri), "file:bank.db?vfs=uflush&dev=%s", dev);
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
	cr_assert_eq(rc, SQLITE_CANTOPEN, "%s: opened (rc %d)", says, rc);
	cr_assert(strstr(uf_sqlite_last_error(), says),
		  "the error \"%s\" does not say \"%s\"",
		  uf_sqlite_last_error(), says);
	cr_assert(strstr(uf_sqlite_last_error(), "format=1"), "%s",
		  uf_sqlite_last_error());
	cr_assert_eq(uf_sqlite_last_errno(), err, "%s: errno %d, want %d", says,
		     uf_sqlite_last_errno(), err);
	sqlite3_close(db);
	cr_assert_eq(tu_raw_read(dev, 0, b, 2 * TU_PAGE), 0);
	cr_assert(!memcmp(b, dir, 2 * TU_PAGE), "%s: the directory changed",
		  says);
	cr_assert_eq(tu_raw_read(dev, SQ_DATA_START, b, TU_PAGE), 0);
	cr_assert(!memcmp(b, data, TU_PAGE), "%s: the database changed", says);
	free(b);
}

/*
 * A device that holds a database but neither of whose directory copies is
 * valid (damaged from outside: no torn commit does that) is refused with a
 * reason, not taken for blank and formatted; with the directory put back,
 * the database is all there.
 */
Test(sqlite_vfs, damaged_directory_is_not_formatted, .fini = tu_fini)
{
	const char *dev = tu_dev(TU_LOOP, SQ_DEV_SIZE);
	unsigned char *dir = tu_alloc(2 * TU_PAGE);
	unsigned char *bad = tu_alloc(2 * TU_PAGE);
	unsigned char *data = tu_alloc(TU_PAGE);
	sqlite3 *db;

	sq_vfs();
	db = sq_db(dev, "");
	sq_bank(db, 20);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
	cr_assert_eq(sq_raw_lookup(dev, "bank.db", NULL).idx, 0,
		     "the database is not in extent 0");
	cr_assert_eq(tu_raw_read(dev, 0, dir, 2 * TU_PAGE), 0);
	cr_assert_eq(tu_raw_read(dev, SQ_DATA_START, data, TU_PAGE), 0);
	cr_assert(!memcmp(data, "SQLite format 3", 16));

	/* a byte flipped in each copy: both fail their CRC */
	memcpy(bad, dir, 2 * TU_PAGE);
	bad[200] ^= 1;
	bad[TU_PAGE + 200] ^= 1;
	cr_assert_eq(tu_raw_io(dev, true, 0, bad, 2 * TU_PAGE), 0);
	sq_expect_refused(dev, bad, data, "directory is damaged",
			  -EUCLEAN);

	/* copy 1 wiped, copy 0 damaged: what a torn format looks like,
	 * but for the data */
	memset(bad + TU_PAGE, 0, TU_PAGE);
	cr_assert_eq(tu_raw_io(dev, true, 0, bad, 2 * TU_PAGE), 0);
	sq_expect_refused(dev, bad, data, "directory is damaged",
			  -EUCLEAN);

	/* both wiped: a blank directory over a database */
	memset(bad, 0, 2 * TU_PAGE);
	cr_assert_eq(tu_raw_io(dev, true, 0, bad, 2 * TU_PAGE), 0);
	sq_expect_refused(dev, bad, data, "data area (at 1M) is not blank",
			  -EUCLEAN);

	cr_assert_eq(tu_raw_io(dev, true, 0, dir, 2 * TU_PAGE), 0);
	db = sq_db(dev, "");
	sq_integrity_ok(db);
	cr_assert_eq(sq_int(db, "SELECT sum(balance) FROM accounts"), 20000);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
	free(dir);
	free(bad);
	free(data);
}

/*
 * No valid copy, copy 1 and the data area blank, but copy 0 holds more
 * than a format's first write puts there (a header, a CRC): not blank.
 */
Test(sqlite_vfs, not_a_torn_format_is_not_formatted, .fini = tu_fini)
{
	const char *dev = tu_dev(TU_LOOP, SQ_DEV_SIZE);
	unsigned char *dir = tu_alloc(2 * TU_PAGE);
	unsigned char *zero = tu_alloc(TU_PAGE);

	sq_vfs();
	memset(zero, 0, TU_PAGE);
	/* something else: a partition table, a boot sector */
	sq_torn_format(dev, zero, 0, TU_PAGE);
	tu_raw_fill(dev, 0, TU_PAGE, 61);
	cr_assert_eq(tu_raw_read(dev, 0, dir, 2 * TU_PAGE), 0);
	sq_expect_refused(dev, dir, zero, "is not blank", -EINVAL);

	/* a directory header, and an entry: a damaged directory */
	sq_dir_image(dir, 1);
	sq_torn_format(dev, dir, 0, 512);
	memcpy(dir + 512, "bank.db", 8);
	memset(dir + 1024, 0, TU_PAGE + TU_PAGE - 1024);
	cr_assert_eq(tu_raw_io(dev, true, 0, dir, 2 * TU_PAGE), 0);
	sq_expect_refused(dev, dir, zero, "directory is damaged", -EUCLEAN);
	free(dir);
	free(zero);
}
