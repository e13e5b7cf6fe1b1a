// SPDX-License-Identifier: MIT
/*
 * tests/test_errno_doc.c - every errno a call returns is the one its
 * comment in include/uflush.h names.
 *
 * Description: the test reads the public header, takes for each uf_*
 * function the comment between the declaration before it and its own
 * (a declaration right after another shares that one's comment), and
 * runs a table of calls whose errors the API makes predictable: bad
 * arguments, conflicts, missing things, busy objects.  Each observed
 * errno must be the expected one, and the expected one must be written in
 * the function's comment (or be one of the header's common errors,
 * -EBADF and -EINVAL).  A header that drifts from the code fails here.
 * Devices are scratch files opened O_DIRECT.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "uflush.h"

#define ED_MAX_DOC	8192

static struct {
	char *header;
	struct uf_cache *cache;
	char junk[64];
} ed;

static void ed_fini(void)
{
	tu_cache_drop(&ed.cache);
	free(ed.header);
	ed.header = NULL;
	if (ed.junk[0])
		unlink(ed.junk);
	ed.junk[0] = '\0';
	tu_fini();
}

/* include/uflush.h, found from the working directory or from here. */
static char *ed_read_header(void)
{
	static const char *const paths[] = {
		"include/uflush.h", "../include/uflush.h",
	};
	char alt[4096], *dir, *buf;
	FILE *f = NULL;
	size_t i, n;
	long len;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && !f; i++)
		f = fopen(paths[i], "r");
	if (!f) {
		snprintf(alt, sizeof(alt), "%s", __FILE__);
		dir = strrchr(alt, '/');
		if (dir) {
			snprintf(dir, sizeof(alt) - (size_t)(dir - alt),
				 "/../include/uflush.h");
			f = fopen(alt, "r");
		}
	}
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len + 1);
	n = buf ? fread(buf, 1, (size_t)len, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* Where "name(" is declared at the start of a line's return type. */
static const char *ed_decl(const char *h, const char *name)
{
	char pat[128];
	const char *p = h, *line;

	snprintf(pat, sizeof(pat), " %s(", name);
	while ((p = strstr(p, pat))) {
		line = p;
		while (line > h && line[-1] != '\n')
			line--;
		/* a declaration: the line starts with its type, not " *" */
		if (line[0] != ' ' && line[0] != '\t' && line[0] != '/' &&
		    line[0] != '*')
			return line;
		p += strlen(pat);
	}
	return NULL;
}

/* The end of the declaration (or #define/struct) before @at. */
static const char *ed_prev_end(const char *h, const char *at)
{
	const char *p = at;
	bool in_comment = false;

	/* walk back over the comment block(s) to the last ';' or '}' or
	 * preprocessor line outside a comment */
	while (p > h) {
		p--;
		if (!in_comment && p > h && p[0] == '/' && p[-1] == '*') {
			in_comment = true;	/* end of a comment, going back */
			continue;
		}
		if (in_comment && p > h && p[0] == '*' && p[-1] == '/') {
			in_comment = false;
			p--;
			continue;
		}
		if (!in_comment && (*p == ';' || *p == '}' ||
				    (*p == '#' && (p == h || p[-1] == '\n'))))
			return p + 1;
	}
	return h;
}

/* The comment documenting @name, into doc. */
static bool ed_doc(const char *name, char *doc, size_t len)
{
	const char *decl = ed_decl(ed.header, name), *start;
	size_t n;

	if (!decl)
		return false;
	start = ed_prev_end(ed.header, decl);
	/* no comment of its own: it shares the previous declaration's */
	n = (size_t)(decl - start);
	if (!memmem(start, n, "/*", 2) && start > ed.header) {
		const char *prev = start - 1;

		while (prev > ed.header && prev[-1] != '\n')
			prev--;
		start = ed_prev_end(ed.header, prev);
		n = (size_t)(decl - start);
	}
	if (n >= len)
		n = len - 1;
	memcpy(doc, start, n);
	doc[n] = '\0';
	return true;
}

static const char *ed_errname(int err)
{
	switch (-err) {
	case EBADF: return "-EBADF";
	case EINVAL: return "-EINVAL";
	case ENOENT: return "-ENOENT";
	case ENOEXEC: return "-ENOEXEC";
	case EBUSY: return "-EBUSY";
	case EEXIST: return "-EEXIST";
	case ERANGE: return "-ERANGE";
	case EFBIG: return "-EFBIG";
	case EPERM: return "-EPERM";
	case ENODEV: return "-ENODEV";
	case EDEADLK: return "-EDEADLK";
	case EAGAIN: return "-EAGAIN";
	case EIO: return "-EIO";
	}
	return NULL;
}

/* The errno a call gave must be the expected one, and be documented. */
static void ed_expect(const char *fn, const char *what, long got, int want)
{
	char doc[ED_MAX_DOC];
	const char *name = ed_errname(want);

	cr_assert_eq(got, want, "%s (%s): got %ld, want %s", fn, what, got,
		     name ? name : "?");
	cr_assert(name, "no name for errno %d", want);
	if (want == -EBADF || want == -EINVAL)
		return;		/* "Errors common to all calls" */
	cr_assert(ed_doc(fn, doc, sizeof(doc)),
		  "%s is not declared in include/uflush.h", fn);
	cr_assert(strstr(doc, name), "%s returns %s (%s), which its comment "
		  "in include/uflush.h does not name:\n%s", fn, name, what,
		  doc);
}

static struct uf_cache *ed_cache(const char *policy)
{
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;

	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = 1024;
	cfg.dirty_writeback_centisecs = 0;
	cfg.policy = policy;
	cr_assert_eq(uf_cache_open(&cfg, &c), 0);
	return c;
}

static int ed_open_policy(const char *policy)
{
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;
	int ret;

	cr_assert_eq(uf_cache_config_init(&cfg), 0);
	cfg.nr_pages = 256;
	cfg.policy = policy;
	ret = uf_cache_open(&cfg, &c);
	if (!ret)
		uf_cache_close(c);
	return ret;
}

Test(errno_doc, the_header_is_parsed, .fini = ed_fini)
{
	char doc[ED_MAX_DOC];

	ed.header = ed_read_header();
	cr_assert_not_null(ed.header, "include/uflush.h not found");
	/* a shared comment and an own one */
	cr_assert(ed_doc("uf_cache_get_tunable", doc, sizeof(doc)));
	cr_assert(strstr(doc, "-ENOENT"), "get_tunable's doc: %s", doc);
	cr_assert(ed_doc("uf_file_open", doc, sizeof(doc)));
	cr_assert(strstr(doc, "-EEXIST") && !strstr(doc, "uf_dev_hold"),
		  "file_open's doc: %s", doc);
}

Test(errno_doc, cache_calls, .fini = ed_fini)
{
	char buf[8], spec[128];
	unsigned long v;
	int fd;

	ed.header = ed_read_header();
	cr_assert_not_null(ed.header);
	ed_expect("uf_cache_open", "unknown preset",
		  ed_open_policy("no-such-kernel"), -EINVAL);
	ed_expect("uf_cache_open", "plugin path missing",
		  ed_open_policy("mainline,plugin=/nonexistent/uflush-x.so"),
		  -ENOENT);
	snprintf(ed.junk, sizeof(ed.junk), "/tmp/uflush-errno-XXXXXX");
	fd = mkstemp(ed.junk);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	snprintf(spec, sizeof(spec), "mainline,plugin=%s", ed.junk);
	ed_expect("uf_cache_open", "plugin not a shared object",
		  ed_open_policy(spec), -ENOEXEC);
	ed.cache = ed_cache(NULL);
	ed_expect("uf_cache_set_tunable", "unknown name",
		  uf_cache_set_tunable(ed.cache, "no_such_tunable", 1),
		  -ENOENT);
	ed_expect("uf_cache_get_tunable", "unknown name",
		  uf_cache_get_tunable(ed.cache, "no_such_tunable", &v),
		  -ENOENT);
	ed_expect("uf_policy_resolve", "buffer too small",
		  uf_policy_resolve("mainline", buf, sizeof(buf)), -ERANGE);
	ed_expect("uf_cache_close_discard", "wrong confirmation",
		  uf_cache_close_discard(ed.cache, "yes"), -EINVAL);
}

Test(errno_doc, device_file_and_page_calls, .fini = ed_fini)
{
	struct uf_file *f, *g = NULL;
	struct uf_page *p, *q = NULL;
	struct uf_dev *d, *d2 = NULL;
	uint64_t v;
	const char *path;
	char c = 'x';

	ed.header = ed_read_header();
	cr_assert_not_null(ed.header);
	path = tu_dev(TU_FILE, 64ull << 20);
	ed.cache = ed_cache(NULL);
	ed_expect("uf_dev_open", "no such path",
		  uf_dev_open(ed.cache, "/nonexistent/uflush-dev", NULL, &d2),
		  -ENOENT);
	ed_expect("uf_dev_open", "a character device",
		  uf_dev_open(ed.cache, "/dev/null", NULL, &d2), -ENODEV);
	d = tu_cache_dev(ed.cache, path, 0);
	ed_expect("uf_dev_set_bdi_tunable", "unknown name",
		  uf_dev_set_bdi_tunable(d, "no_such", 1), -ENOENT);
	ed_expect("uf_dev_set_bdi_tunable", "ratio over 100",
		  uf_dev_set_bdi_tunable(d, "max_ratio", 101), -EINVAL);
	ed_expect("uf_dev_get_bdi_tunable", "unknown name",
		  uf_dev_get_bdi_tunable(d, "no_such", &v), -ENOENT);
	ed_expect("uf_dev_release_umount", "nothing held",
		  uf_dev_release_umount(d), -EINVAL);

	f = tu_file_open(d, 1, 0, 16 * TU_PAGE, NULL, NULL);
	ed_expect("uf_file_open", "ino in use",
		  uf_file_open(d, 1, 1ull << 20, TU_PAGE, NULL, NULL, &g),
		  -EEXIST);
	ed_expect("uf_file_open", "overlapping range",
		  uf_file_open(d, 2, 4 * TU_PAGE, TU_PAGE, NULL, NULL, &g),
		  -EBUSY);
	ed_expect("uf_file_open", "outside the device",
		  uf_file_open(d, 3, 1ull << 40, TU_PAGE, NULL, NULL, &g),
		  -ERANGE);
	ed_expect("uf_pwrite", "past the end",
		  uf_pwrite(f, &c, 1, 16 * TU_PAGE), -EFBIG);
	ed_expect("uf_pwrite_nb", "pause_ns NULL",
		  uf_pwrite_nb(f, &c, 1, 0, NULL), -EINVAL);
	ed_expect("uf_file_mark_inode_dirty", "unknown flags",
		  uf_file_mark_inode_dirty(f, 1u << 9), -EINVAL);
	ed_expect("uf_page_get", "index past the file",
		  uf_page_get(f, 16, 0, &q), -EFBIG);
	ed_expect("uf_page_get", "NOCREATE, not cached",
		  uf_page_get(f, 3, UF_PAGE_NOCREATE, &q), -ENOENT);
	ed_expect("uf_page_get", "unknown flags",
		  uf_page_get(f, 3, 1u << 7, &q), -EINVAL);
	cr_assert_eq(uf_page_get(f, 2, 0, &p), 0);
	ed_expect("uf_page_set_dirty", "read-only handle",
		  uf_page_set_dirty(p), -EPERM);
	ed_expect("uf_cache_close", "a page handle held",
		  uf_cache_close(ed.cache), -EBUSY);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(uf_page_get(f, 2, UF_PAGE_WRITE, &p), 0);
	ed_expect("uf_file_close", "a UF_PAGE_WRITE page held",
		  uf_file_close(f), -EBUSY);
	ed_expect("uf_dev_close", "files open", uf_dev_close(d), -EBUSY);
	cr_assert_eq(uf_page_put(p), 0);
	cr_assert_eq(uf_dev_hold_umount(d), 0);
	ed_expect("uf_dev_hold_umount", "held already",
		  uf_dev_hold_umount(d), -EBUSY);
	cr_assert_eq(uf_dev_release_umount(d), 0);
	cr_assert_eq(uf_file_close(f), 0);
	ed_expect("uf_pread", "closed file", uf_pread(f, &c, 1, 0), -EBADF);
	tu_cache_close(&ed.cache);
}
