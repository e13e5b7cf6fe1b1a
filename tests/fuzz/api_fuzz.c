// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/api_fuzz.c - libFuzzer harness for the public API.
 *
 * An input is a program: each operation is a byte choosing the call and a
 * few bytes choosing its arguments (handle, offset, length, flags; valid,
 * out of range, huge, NULL, closed, misaligned).  The calls run against one
 * small cache and one file-backed device made once per process; files and
 * the device's contents start empty for every input, so inputs are
 * independent.
 *
 * After each call the harness checks
 *   - the return value: the exact result where the API makes it predictable
 *     (bad handle -EBADF, bad flags -EINVAL, past the end -EFBIG, ...),
 *     else success or one of the errors the call documents;
 *   - data: an in-memory model of the device holds every byte a successful
 *     write put there; uf_pread, page contents and (after fsync, sync and
 *     at the end of the input) the raw device must match it.
 * A mismatch prints what happened and aborts, which libFuzzer reports as a
 * crash with the input saved.
 *
 * Stale handles: handles are slots that a later open may reuse.  A closed
 * file handle whose slot now holds a new file cannot be told apart by
 * pointer; by default such calls are skipped.  UF_FUZZ_STRICT_HANDLES=1
 * makes them and demands -EBADF (the handle-lifetime rule of uflush.h).
 * The same holds for a page handle equal to one still held: that is the
 * same page, by design, and is never used as a stale handle.  And as the
 * page is the handle, a reader's uf_page_put() of a page that another
 * holder has with UF_PAGE_WRITE drops the writer's lock; by default the
 * harness never holds a page twice when one of the holds is for writing,
 * UF_FUZZ_STRICT_HANDLES=1 lets it (and then the writer's
 * uf_page_set_dirty() fails with -EPERM).
 *
 * Two corpus inputs fail only in strict mode and show those two cases:
 * corpus/known-stale-file-handle (open, close, open: the closed handle
 * writes to the new file) and corpus/known-page-put-unlocks-writer.
 *
 * Env: UF_FUZZ_VERBOSE=1 traces every call to stderr (for minimised
 * crashes).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uflush.h"
#include "io/testdev.h"

#define PG		4096u
#define DEV_PAGES	256u			/* a 1 MiB device */
#define DEV_SIZE	((uint64_t)DEV_PAGES * PG)
#define CACHE_PAGES	48u
#define NFILES		4
#define NPAGES		4
#define MAX_WRITE_HELD	2	/* locked pages we keep: the dirty limit
				 * must stay reachable without them */
#define NSTALE		16
#define MAX_OPS		96

/* ------------------------------------------------------------------ */
/* Process-wide setup                                                  */

static struct uf_testdev td;
static struct uf_cache *cache;
static struct uf_dev *dev;
static int raw_fd = -1;
static bool strict_handles, verbose;

static uint8_t model[DEV_SIZE];
static uint64_t touched_lo, touched_hi;	/* pages the model changed */
static bool unknown[DEV_PAGES];	/* content not predictable (NOREAD miss) */
static uint8_t *iobuf;		/* DEV_SIZE + PG, page aligned */
static uint8_t *rawbuf;		/* DEV_SIZE, page aligned, for O_DIRECT */
static uint8_t foreign[256] __attribute__((aligned(64)));

static void quiet_log(void *priv, int level, const char *msg)
{
	(void)priv;
	if (level <= 3 || verbose)
		fprintf(stderr, "uflush[%d]: %s\n", level, msg);
}

static void teardown(void)
{
	if (cache)
		uf_cache_close(cache);
	if (raw_fd >= 0)
		close(raw_fd);
	uf_testdev_destroy(&td);
}

static void die_setup(const char *what, int err)
{
	fprintf(stderr, "api_fuzz: %s: %s\n", what, strerror(-err));
	exit(2);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct uf_cache_config cfg;
	struct uf_dev_config dcfg = { .engine = NULL };
	const char *e;
	int ret;

	(void)argc;
	(void)argv;
	e = getenv("UF_FUZZ_STRICT_HANDLES");
	strict_handles = e && *e == '1';
	e = getenv("UF_FUZZ_VERBOSE");
	verbose = e && *e == '1';
	uf_set_log_fn(quiet_log, NULL);

	ret = uf_testdev_create(DEV_SIZE, UF_TESTDEV_FILE_ONLY, &td);
	if (ret)
		die_setup("uf_testdev_create", ret);
	atexit(teardown);
	raw_fd = open(td.backing, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (raw_fd < 0)
		die_setup(td.backing, -errno);

	uf_cache_config_init(&cfg);
	cfg.nr_pages = CACHE_PAGES;
	ret = uf_cache_open(&cfg, &cache);
	if (ret)
		die_setup("uf_cache_open", ret);
	ret = uf_dev_open(cache, td.path, &dcfg, &dev);
	if (ret)
		die_setup("uf_dev_open", ret);
	if (posix_memalign((void **)&iobuf, PG, DEV_SIZE + PG) ||
	    posix_memalign((void **)&rawbuf, PG, DEV_SIZE))
		die_setup("posix_memalign", -ENOMEM);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Input decoding                                                      */

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t get8(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint16_t get16(struct input *in)
{
	return (uint16_t)(get8(in) | get8(in) << 8);
}

static uint32_t get32(struct input *in)
{
	return (uint32_t)get16(in) | (uint32_t)get16(in) << 16;
}

static uint64_t get64(struct input *in)
{
	return (uint64_t)get32(in) | (uint64_t)get32(in) << 32;
}

/* Data to write: a pattern from a seed, so inputs stay small. */
static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

/* ------------------------------------------------------------------ */
/* The harness' view of its handles                                    */

struct hfile {
	struct uf_file *h;		/* NULL: slot free */
	uint64_t ino, off, len;		/* len rounded up to pages */
};

struct hpage {
	struct uf_page *h;		/* NULL: slot free */
	int file;			/* slot of its file, -1 once closed */
	unsigned long index;
	bool write;			/* held with UF_PAGE_WRITE */
};

static struct hfile files[NFILES];
static struct hpage pages[NPAGES];
static struct uf_file *stale_files[NSTALE];
static struct uf_page *stale_pages[NSTALE];
static unsigned int nr_stale_files, nr_stale_pages;
static unsigned int op_nr;
static const char *op_name;

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "op %u: ", op_nr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "api_fuzz: op %u (%s): ", op_nr, op_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void expect(long ret, long want)
{
	if (ret != want)
		fail("returned %ld (%s), expected %ld (%s)", ret,
		     ret < 0 ? strerror((int)-ret) : "ok", want,
		     want < 0 ? strerror((int)-want) : "ok");
}

/* ret must be 0 or one of the listed negative errnos (0-terminated). */
static void expect_ok_or(long ret, ...)
{
	va_list ap;
	int e;

	if (ret == 0)
		return;
	va_start(ap, ret);
	while ((e = va_arg(ap, int)) != 0) {
		if (ret == -e) {
			va_end(ap);
			if (verbose)
				trace("  -> %s", strerror(e));
			return;
		}
	}
	va_end(ap);
	fail("returned %ld (%s), not success nor a documented error", ret,
	     ret < 0 ? strerror((int)-ret) : "?");
}

static void add_stale_file(struct uf_file *h)
{
	stale_files[nr_stale_files++ % NSTALE] = h;
}

static void add_stale_page(struct uf_page *h)
{
	stale_pages[nr_stale_pages++ % NSTALE] = h;
}

/* A real handle with its top bit flipped: never a handle uflush issued
 * (not in a handle table; a different generation), yet close to one. */
static void *bent(void *h)
{
	return (void *)((uintptr_t)h ^ ((uintptr_t)1 << 63));
}

static void *file_at(unsigned int i)
{
	return files[i].h;
}

static void *page_at(unsigned int i)
{
	return pages[i].h;
}

/* h is the open handle of one of the nr slots at() returns. */
static bool in_slots(void *(*at)(unsigned int), unsigned int nr, void *h)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (at(i) && at(i) == h)
			return true;
	return false;
}

static bool file_reused(void *h)
{
	return !strict_handles && in_slots(file_at, NFILES, h);
}

static bool page_reused(void *h)
{
	return in_slots(page_at, NPAGES, h);
}

/* Where pick() chooses from: the open slots and the closed handles. */
struct pick_set {
	unsigned int nr;			/* slots */
	void *(*at)(unsigned int i);		/* slot i's open handle or NULL */
	void *const *stale;
	unsigned long nr_stale;
	bool (*reused)(void *h);		/* a closed handle not usable */
};

/*
 * Choose a handle: an open one (slot), NULL, a closed one, one with a bit
 * off a real handle, or a pointer uflush never issued.  *slot is the open
 * slot or -1; *skip is set when the choice is not usable (a closed handle
 * whose slot was reused, without strict mode).
 */
static void *pick(struct input *in, const struct pick_set *ps, int *slot,
		  bool *skip)
{
	uint8_t b = get8(in);
	unsigned int i = b % ps->nr, k;
	void *h;

	*slot = -1;
	*skip = false;
	switch ((b >> 2) % 8) {
	default:	/* mostly a real handle, that slot's or the first */
		for (k = i; k < i + 1 + ps->nr; k++) {
			h = ps->at(k <= i ? i : k - i - 1);
			if (h) {
				*slot = (int)(k <= i ? i : k - i - 1);
				return h;
			}
		}
		return NULL;
	case 5:
		return NULL;
	case 6:
		if (!ps->nr_stale)
			return NULL;
		h = ps->stale[(b >> 5) % (ps->nr_stale < NSTALE ?
					  ps->nr_stale : NSTALE)];
		*skip = ps->reused(h);
		return h;
	case 7:
		h = ps->at(i);
		return h && (b & 0x80) ? bent(h) : (void *)foreign;
	}
}

static struct uf_file *pick_file(struct input *in, int *slot, bool *skip)
{
	const struct pick_set ps = {
		NFILES, file_at, (void *const *)stale_files, nr_stale_files,
		file_reused,
	};

	return pick(in, &ps, slot, skip);
}

static struct uf_page *pick_page(struct input *in, int *slot, bool *skip)
{
	const struct pick_set ps = {
		NPAGES, page_at, (void *const *)stale_pages, nr_stale_pages,
		page_reused,
	};

	return pick(in, &ps, slot, skip);
}

/* ------------------------------------------------------------------ */
/* Model checks                                                        */

/* Compare bytes read at device offset doff with the model. */
static void check_data(const uint8_t *got, uint64_t doff, size_t len,
		       const char *what)
{
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t d = doff + i;

		if (unknown[d / PG]) {
			i += PG - 1 - d % PG;	/* skip the rest of the page */
			continue;
		}
		if (got[i] != model[d])
			fail("%s: byte at device offset %llu is 0x%02x, the model says 0x%02x",
			     what, (unsigned long long)d, got[i], model[d]);
	}
}

/* The raw device must hold the model in [off, off+len) (page aligned). */
static void check_raw(uint64_t off, uint64_t len, const char *what)
{
	ssize_t n = pread(raw_fd, rawbuf, len, (off_t)off);

	if (n != (ssize_t)len)
		fail("%s: raw pread [%llu,+%llu): %zd %s", what,
		     (unsigned long long)off, (unsigned long long)len, n,
		     n < 0 ? strerror(errno) : "short");
	check_data(rawbuf, off, len, what);
}

static void touch(uint64_t doff, uint64_t len)
{
	uint64_t lo = doff / PG, hi = (doff + len + PG - 1) / PG;

	if (!len)
		return;
	if (touched_hi == touched_lo) {
		touched_lo = lo;
		touched_hi = hi;
		return;
	}
	if (lo < touched_lo)
		touched_lo = lo;
	if (hi > touched_hi)
		touched_hi = hi;
}

/* Apply a successful write of len bytes at device offset doff. */
static void model_write(const uint8_t *buf, uint64_t doff, size_t len)
{
	uint64_t p;

	memcpy(model + doff, buf, len);
	touch(doff, len);
	for (p = (doff + PG - 1) / PG; (p + 1) * PG <= doff + len; p++)
		unknown[p] = false;
}

/* ------------------------------------------------------------------ */
/* Deadlock avoidance: our own locked pages                            */

static void put_slot(int i)
{
	int ret = uf_page_put(pages[i].h);

	if (ret)
		fail("uf_page_put of a held page: %d (%s)", ret,
		     strerror(-ret));
	add_stale_page(pages[i].h);
	pages[i].h = NULL;
}

/*
 * A page we hold with UF_PAGE_WRITE is locked: writes, fsync and close of
 * its file wait for it, as they would for another thread.  Put the ones
 * the next call would wait on (file -1: all).
 */
static void put_write_pages(int file)
{
	int i;

	for (i = 0; i < NPAGES; i++)
		if (pages[i].h && pages[i].write &&
		    (file < 0 || pages[i].file == file))
			put_slot(i);
}

static unsigned int nr_write_held(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < NPAGES; i++)
		n += pages[i].h && pages[i].write;
	return n;
}

static unsigned int nr_write_held_on(int file)
{
	unsigned int i, n = 0;

	for (i = 0; i < NPAGES; i++)
		n += pages[i].h && pages[i].write && pages[i].file == file;
	return n;
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */

static uint64_t pick_offset(struct input *in, uint64_t len)
{
	uint8_t k = get8(in);

	switch (k % 8) {
	case 0:
		return 0;
	case 1:
		return len;			/* at the end */
	case 2:
		return len + get8(in);		/* past it */
	case 3:
		return UINT64_MAX - get8(in);
	case 4:
		return len > PG ? len - PG + get16(in) % PG : 0;
	default:
		return len ? get32(in) % len : 0;
	}
}

static size_t pick_len(struct input *in)
{
	uint8_t k = get8(in);

	switch (k % 8) {
	case 0:
		return 0;
	case 1:
		return SIZE_MAX - get8(in);
	case 2:
		return (size_t)SSIZE_MAX + 1 + get8(in);
	case 3:
		return PG;
	case 4:
		return 3 * PG + get16(in) % (2 * PG);
	default:
		return 1 + get16(in) % (2 * PG);
	}
}

static void op_open(struct input *in)
{
	uint64_t ino, off, length, len, end;
	uint8_t k = get8(in);
	struct uf_file *h = (struct uf_file *)foreign;
	struct uf_dev *d = dev;
	long want = 0;
	int i, slot = -1, ret;
	bool conflict_ino = false, conflict_range = false;

	for (i = 0; i < NFILES; i++)
		if (!files[i].h) {
			slot = i;
			break;
		}
	ino = (k & 1) ? get64(in) : get8(in) % 8;
	off = (k & 2) ? get64(in) : (uint64_t)(get8(in) % DEV_PAGES) * PG;
	switch ((k >> 2) % 8) {
	case 0:
		length = 0;
		break;
	case 1:
		length = get64(in);
		break;
	case 2:
		length = DEV_SIZE - off + 1;
		break;
	default:
		length = 1 + get32(in) % (32 * PG);
		break;
	}
	if ((k >> 5) == 7)
		d = (k & 1) ? NULL : (struct uf_dev *)foreign;
	if (slot < 0 && !(k & 0x80))
		return;		/* no room to keep a new file */

	if (!d || d == (struct uf_dev *)foreign)
		want = -EBADF;
	else if (off % PG || !length || length > (uint64_t)LLONG_MAX)
		want = -EINVAL;
	else {
		len = (length + PG - 1) & ~(uint64_t)(PG - 1);
		end = off + len;
		if (len > DEV_SIZE || off > DEV_SIZE - len) {
			want = -ERANGE;
		} else {
			for (i = 0; i < NFILES; i++) {
				if (!files[i].h)
					continue;
				if (files[i].ino == ino)
					conflict_ino = true;
				else if (off < files[i].off + files[i].len &&
					 files[i].off < end)
					conflict_range = true;
			}
		}
	}
	if (!want && slot < 0)
		return;		/* would succeed, but nowhere to keep it */
	trace("uf_file_open(ino %llu, off %llu, length %llu)",
	      (unsigned long long)ino, (unsigned long long)off,
	      (unsigned long long)length);
	ret = uf_file_open(d, ino, off, length, NULL, NULL, &h);
	if (conflict_ino || conflict_range) {
		if (!(conflict_ino && ret == -EEXIST) &&
		    !(conflict_range && ret == -EBUSY))
			fail("uf_file_open over a conflict returned %d", ret);
	} else if (ret == -EMFILE && !want) {
		return;
	} else {
		expect(ret, want);
	}
	if (ret) {
		if (h)
			fail("a failed uf_file_open set *out");
		return;
	}
	if (!h)
		fail("uf_file_open succeeded with a NULL handle");
	files[slot].h = h;
	files[slot].ino = ino;
	files[slot].off = off;
	files[slot].len = (length + PG - 1) & ~(uint64_t)(PG - 1);
}

static void forget_file(int slot)
{
	int i;

	/* pages still held outlive their file: no data checks on them */
	for (i = 0; i < NPAGES; i++)
		if (pages[i].h && pages[i].file == slot)
			pages[i].file = -1;
	add_stale_file(files[slot].h);
	files[slot].h = NULL;
}

/*
 * A call that takes a file handle and nothing else: -EBADF on a handle we do
 * not hold, 0 on one we do (our write-locked pages of it put first).  Returns
 * the file's slot when the call was made on it, else -1.
 */
static int op_file_call(struct input *in, const char *name,
			int (*call)(struct uf_file *))
{
	struct uf_file *h;
	int slot;
	bool skip;

	h = pick_file(in, &slot, &skip);
	if (skip)
		return -1;
	trace("%s(%p slot %d)", name, (void *)h, slot);
	if (slot < 0) {
		expect(call(h), -EBADF);
		return -1;
	}
	/* a close with our UF_PAGE_WRITE page held: refused, not a hang */
	if (call == uf_file_close && nr_write_held_on(slot)) {
		expect(call(h), -EBUSY);
		trace("  -EBUSY with %u write pages held", nr_write_held_on(slot));
	}
	put_write_pages(slot);
	expect(call(h), 0);
	return slot;
}

static void op_close(struct input *in)
{
	int slot = op_file_call(in, "uf_file_close", uf_file_close);

	if (slot >= 0)
		forget_file(slot);
}

/*
 * What uf_pwrite and uf_pread take, decoded in the order the corpus was
 * made with, and what either returns before offsets matter (1: nothing).
 */
struct rw_args {
	struct uf_file *h;
	int slot;
	bool skip, nullbuf;
	uint64_t off, flen;
	size_t len;
};

static void pick_rw(struct input *in, struct rw_args *a)
{
	a->h = pick_file(in, &a->slot, &a->skip);
	a->flen = a->slot >= 0 ? files[a->slot].len : 0;
	a->off = pick_offset(in, a->flen);
	a->len = pick_len(in);
}

static long rw_early_error(const struct rw_args *a)
{
	if (a->slot < 0)
		return -EBADF;
	if (a->nullbuf && a->len)
		return -EINVAL;
	return 1;
}

/* Out of frames or an injected error: allowed, and it changes nothing. */
static bool rw_may_fail(long want, ssize_t ret)
{
	if (want > 0 && (ret == -ENOMEM || ret == -EIO)) {
		trace("  -> %s", strerror((int)-ret));
		return true;
	}
	return false;
}

static void op_pwrite(struct input *in)
{
	struct rw_args a;
	uint32_t seed;
	ssize_t ret;
	long want;

	pick_rw(in, &a);
	seed = get16(in);
	a.nullbuf = (seed & 0xff) == 0x5a;
	if (a.skip)
		return;
	want = rw_early_error(&a);
	if (want > 0)
		want = a.off > a.flen || a.len > a.flen - a.off ?
		       -EFBIG : (long)a.len;
	trace("uf_pwrite(slot %d, len %zu, off %llu) want %ld", a.slot, a.len,
	      (unsigned long long)a.off, want);
	if (want > 0) {
		put_write_pages(a.slot);
		fill(iobuf, a.len, seed);
	}
	ret = uf_pwrite(a.h, a.nullbuf ? NULL : iobuf, a.len, a.off);
	if (want > 0 && ret >= 0 && ret <= want) {
		/* a short write is allowed (out of frames): those bytes */
		if (ret == 0 && a.len)
			fail("uf_pwrite wrote nothing and returned 0");
		model_write(iobuf, files[a.slot].off + a.off, (size_t)ret);
		return;
	}
	if (rw_may_fail(want, ret))
		return;
	expect(ret, want);
}

static void op_pread(struct input *in)
{
	struct rw_args a;
	ssize_t ret;
	long want;

	pick_rw(in, &a);
	a.nullbuf = get8(in) == 0x5a;
	if (a.skip)
		return;
	want = rw_early_error(&a);
	if (want > 0)
		want = a.off >= a.flen || !a.len ? 0 :
		       (long)(a.len < a.flen - a.off ? a.len : a.flen - a.off);
	trace("uf_pread(slot %d, len %zu, off %llu) want %ld", a.slot, a.len,
	      (unsigned long long)a.off, want);
	if (want > 0) {
		/* a read does not wait on our locked pages, but say so */
		memset(iobuf, 0xee, (size_t)want);
	}
	/* iobuf holds DEV_SIZE: more than any file, however long len is */
	ret = uf_pread(a.h, a.nullbuf ? NULL : iobuf, a.len, a.off);
	if (rw_may_fail(want, ret))
		return;
	if (want > 0 && ret > 0 && ret < want) {
		check_data(iobuf, files[a.slot].off + a.off, (size_t)ret,
			   "uf_pread (short)");
		return;
	}
	expect(ret, want);
	if (want > 0)
		check_data(iobuf, files[a.slot].off + a.off, (size_t)want,
			   "uf_pread");
}

static void check_synced(int slot)
{
	if (slot < 0)
		return;
	/* nothing else writes: the file is on the device now */
	check_raw(files[slot].off, files[slot].len, "raw device after fsync");
}

static void op_fsync(struct input *in)
{
	check_synced(op_file_call(in, "uf_fsync", uf_fsync));
}

static void op_fdatasync(struct input *in)
{
	check_synced(op_file_call(in, "uf_fdatasync", uf_fdatasync));
}

static void op_sync(struct input *in)
{
	uint8_t k = get8(in);
	struct uf_cache *c = cache;
	int ret;

	if (k % 8 == 6)
		c = NULL;
	else if (k % 8 == 7)
		c = (struct uf_cache *)foreign;
	trace("uf_sync(%p)", (void *)c);
	if (c != cache) {
		expect(uf_sync(c), -EBADF);
		return;
	}
	put_write_pages(-1);
	ret = uf_sync(c);
	expect(ret, 0);
	if (touched_hi > touched_lo)
		check_raw(touched_lo * PG, (touched_hi - touched_lo) * PG,
			  "raw device after uf_sync");
}

static void check_page_content(int i, const uint8_t *data, unsigned int flags)
{
	uint64_t doff = files[pages[i].file].off + (uint64_t)pages[i].index * PG;
	uint64_t p = doff / PG;
	static const uint8_t zero[PG];

	if (unknown[p] || !memcmp(data, model + doff, PG))
		return;
	/* UF_PAGE_NOREAD on a miss: zeroed, not read */
	if ((flags & UF_PAGE_NOREAD) && !(flags & UF_PAGE_NOCREATE) &&
	    !memcmp(data, zero, PG)) {
		unknown[p] = true;	/* cached zeros until reclaimed */
		return;
	}
	check_data(data, doff, PG, "uf_page_data after uf_page_get");
}

static void op_page_get(struct input *in)
{
	struct uf_file *h;
	struct uf_page *p = (struct uf_page *)foreign;
	int slot, i, ps = -1, ret;
	bool skip;
	uint8_t k = get8(in);
	unsigned long index, npages;
	unsigned int flags = k & 7;
	long want;
	void *data;

	h = pick_file(in, &slot, &skip);
	npages = slot >= 0 ? (unsigned long)(files[slot].len / PG) : 0;
	if (k & 0x08)
		flags |= (unsigned int)get8(in) << 3;	/* unknown bits */
	switch ((k >> 4) % 4) {
	case 0:
		index = npages;
		break;
	case 1:
		index = ULONG_MAX - get8(in);
		break;
	default:
		index = npages ? get16(in) % npages : 0;
		break;
	}
	if (skip)
		return;
	for (i = 0; i < NPAGES; i++)
		if (!pages[i].h) {
			ps = i;
			break;
		}
	if (ps < 0) {
		ps = k % NPAGES;
		put_slot(ps);
	}
	if (slot < 0)
		want = -EBADF;
	else if (flags & ~(UF_PAGE_NOREAD | UF_PAGE_NOCREATE | UF_PAGE_WRITE))
		want = -EINVAL;
	else if (index >= npages)
		want = -EFBIG;
	else
		want = 0;
	if (!want) {
		/*
		 * WRITE and NOREAD lock the page: we would wait on our own
		 * lock.  And the handle is the page: a reader's put of it
		 * would unlock a writer's (strict mode keeps that case).
		 */
		bool locks = flags & (UF_PAGE_WRITE | UF_PAGE_NOREAD);

		for (i = 0; i < NPAGES; i++)
			if (pages[i].h && pages[i].file == slot &&
			    pages[i].index == index &&
			    ((pages[i].write && locks) ||
			     (!strict_handles &&
			      (pages[i].write || (flags & UF_PAGE_WRITE)))))
				put_slot(i);
	}
	if (!want && (flags & UF_PAGE_WRITE) &&
	    nr_write_held() >= MAX_WRITE_HELD)
		put_write_pages(-1);
	trace("uf_page_get(slot %d, index %lu, flags 0x%x) want %ld", slot,
	      index, flags, want);
	ret = uf_page_get(h, index, flags, (k & 0x80) && (k & 0x40) ?
			  NULL : &p);
	if ((k & 0x80) && (k & 0x40)) {
		expect(ret, -EINVAL);	/* out is NULL */
		return;
	}
	if (!want && (flags & UF_PAGE_NOCREATE) && ret == -ENOENT)
		return;
	if (!want && ret < 0) {
		expect_ok_or(ret, ENOMEM, EIO, 0);
		if (p)
			fail("a failed uf_page_get set *out");
		return;
	}
	expect(ret, want);
	if (ret) {
		if (p)
			fail("a failed uf_page_get set *out");
		return;
	}
	data = uf_page_data(p);
	if (!data || (uintptr_t)data % PG)
		fail("uf_page_data of a fresh page: %p", data);
	pages[ps].h = p;
	pages[ps].file = slot;
	pages[ps].index = index;
	pages[ps].write = flags & UF_PAGE_WRITE;
	check_page_content(ps, data, flags);
}

/* Change part of a page held for writing, mark it dirty. */
static void op_page_write(struct input *in)
{
	int slot, ret;
	bool skip;
	struct uf_page *h = pick_page(in, &slot, &skip);
	uint16_t a = get16(in) % PG, b = get16(in) % (PG + 1);
	uint32_t seed = get16(in);
	uint8_t *data;
	uint64_t doff;

	if (skip)
		return;
	trace("page write(slot %d, [%u,%u))", slot, a, b);
	if (slot < 0) {
		expect(uf_page_set_dirty(h), -EBADF);
		if (uf_page_data(h))
			fail("uf_page_data of a bad handle is not NULL");
		return;
	}
	data = uf_page_data(h);
	if (!data)
		fail("uf_page_data of a held page is NULL");
	if (!pages[slot].write) {
		ret = uf_page_set_dirty(h);
		if (pages[slot].file < 0 && ret == -EBADF)
			return;
		expect(ret, -EPERM);
		return;
	}
	if (a > b) {
		uint16_t t = a;

		a = b;
		b = t;
	}
	fill(data + a, b - a, seed);
	doff = files[pages[slot].file].off +
	       (uint64_t)pages[slot].index * PG;
	ret = uf_page_set_dirty(h);
	expect(ret, 0);
	memcpy(model + doff + a, data + a, b - a);
	touch(doff + a, b - a);
	if (a == 0 && b == PG)
		unknown[doff / PG] = false;
}

static void op_page_put(struct input *in)
{
	int slot;
	bool skip;
	struct uf_page *h = pick_page(in, &slot, &skip);

	if (skip)
		return;
	trace("uf_page_put(slot %d)", slot);
	if (slot < 0) {
		expect(uf_page_put(h), -EBADF);
		return;
	}
	put_slot(slot);
}

/* Read a held page again and compare (pages of open files only). */
static void op_page_check(struct input *in)
{
	int slot;
	bool skip;
	struct uf_page *h = pick_page(in, &slot, &skip);
	uint8_t *data;

	if (skip || slot < 0 || pages[slot].file < 0)
		return;
	data = uf_page_data(h);
	if (!data)
		fail("uf_page_data of a held page is NULL");
	trace("page check(slot %d)", slot);
	check_page_content(slot, data, 0);
}

static void op_misc(struct input *in)
{
	uint8_t k = get8(in);
	struct uf_file *h;
	struct uf_cache_stats cs;
	struct uf_dev_stats ds;
	unsigned long v;
	int slot;
	bool skip;

	switch (k % 6) {
	case 0: {
		unsigned int flags = get8(in) % 8;

		h = pick_file(in, &slot, &skip);
		if (skip)
			return;
		if (k & 0x80)
			flags = get32(in);
		trace("uf_file_mark_inode_dirty(slot %d, 0x%x)", slot, flags);
		expect(uf_file_mark_inode_dirty(h, flags),
		       slot < 0 ? -EBADF : (!flags || flags & ~3u) ?
		       -EINVAL : 0);
		break;
	}
	case 1:
		expect(uf_cache_stats(cache, &cs), 0);
		if (cs.nr_pages != CACHE_PAGES || cs.nr_free > cs.nr_pages)
			fail("uf_cache_stats: nr_pages %lu nr_free %lu",
			     cs.nr_pages, cs.nr_free);
		expect(uf_cache_stats(k & 0x80 ? NULL :
				      (struct uf_cache *)foreign, &cs), -EBADF);
		break;
	case 2:
		expect(uf_dev_stats(dev, &ds), 0);
		expect(uf_dev_stats((struct uf_dev *)foreign, &ds), -EBADF);
		break;
	case 3:
		expect(uf_cache_get_tunable(cache, "dirty_ratio", &v), 0);
		expect(uf_cache_get_tunable(cache, "no_such_knob", &v),
		       -ENOENT);
		break;
	case 4: {
		bool any = false;
		int i;

		for (i = 0; i < NFILES; i++)
			any |= files[i].h != NULL;
		if (!any)
			break;	/* it would close the device */
		trace("uf_dev_close with files open");
		expect(uf_dev_close(dev), -EBUSY);
		break;
	}
	case 5:
		expect(uf_file_open(dev, 0, 0, PG, NULL, NULL, NULL),
		       -EINVAL);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* One input                                                           */

static void reset(void)
{
	memset(model, 0, sizeof(model));
	memset(unknown, 0, sizeof(unknown));
	memset(files, 0, sizeof(files));
	memset(pages, 0, sizeof(pages));
	nr_stale_files = nr_stale_pages = 0;
	touched_lo = touched_hi = 0;
	/* zero the device: the files of the last input are all closed */
	if (ftruncate(raw_fd, 0) || ftruncate(raw_fd, (off_t)DEV_SIZE)) {
		fprintf(stderr, "api_fuzz: ftruncate: %s\n", strerror(errno));
		abort();
	}
}

static void finish(void)
{
	int i;

	op_name = "end of input";
	for (i = 0; i < NPAGES; i++)
		if (pages[i].h)
			put_slot(i);
	for (i = 0; i < NFILES; i++) {
		if (!files[i].h)
			continue;
		trace("uf_file_close(slot %d) at the end", i);
		expect(uf_file_close(files[i].h), 0);
		forget_file(i);
	}
	/* closing wrote everything back; untouched pages are zero */
	if (touched_hi > touched_lo)
		check_raw(touched_lo * PG, (touched_hi - touched_lo) * PG,
			  "raw device after closing every file");
}

/* The operations an input's byte picks (% 16): the corpus depends on it. */
static const struct fuzz_op {
	const char *name;
	void (*run)(struct input *in);
} ops[16] = {
	{ "open", op_open }, { "close", op_close }, { "pwrite", op_pwrite },
	{ "pwrite", op_pwrite }, { "pread", op_pread }, { "fsync", op_fsync },
	{ "fdatasync", op_fdatasync }, { "sync", op_sync },
	{ "page_get", op_page_get }, { "page_write", op_page_write },
	{ "page_put", op_page_put }, { "page_check", op_page_check },
	{ "misc", op_misc }, { "pwrite", op_pwrite },
	{ "page_get", op_page_get }, { "pread", op_pread },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };

	reset();
	for (op_nr = 0; in.n && op_nr < MAX_OPS; op_nr++) {
		const struct fuzz_op *op = &ops[get8(&in) % 16];

		op_name = op->name;
		op->run(&in);
	}
	finish();
	return 0;
}
