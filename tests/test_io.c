// SPDX-License-Identifier: MIT
/*
 * Description: the I/O engines move the right bytes to the right place.
 *
 * Scratch devices first (io/testdev.c): a loop device really runs with
 * direct I/O and 4096-byte blocks and is detached again, and a backing
 * filesystem without direct I/O is refused rather than used buffered.
 * Then, for every engine (io_uring, libaio, psync, never falling back) on
 * a loop device and on a plain file: single-buffer writes, and vectored
 * writes of scattered pages to contiguous device ranges with many requests
 * in flight, are read back from the raw device with a separate
 * open(O_DIRECT)+pread and compared byte for byte.  Finally: the engine
 * fallback when io_uring is disabled, a full queue that must sleep rather
 * than spin, and eight threads submitting to one device at once.
 */
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/fs.h>
#include <linux/loop.h>

#include "testutil.h"

/* ------------------------------------------------------------------ */
/* Scratch devices                                                     */

static void read_sysfs(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

Test(io, testdev_loop_has_direct_io, .fini = tu_fini)
{
	char sys[96], val[300], backing[256], dir[256];
	uint64_t bytes = 0;
	struct stat st;
	int fd, nr;

	tu_dev(TU_LOOP, TU_DEV_SIZE);
	nr = tu.td.loop_nr;
	cr_assert_geq(nr, 0);
	snprintf(sys, sizeof(sys), "/dev/loop%d", nr);
	cr_assert_str_eq(tu.td.path, sys);
	cr_assert_eq(stat(tu.td.path, &st), 0);
	cr_assert(S_ISBLK(st.st_mode), "%s is not a block device",
		  tu.td.path);

	snprintf(sys, sizeof(sys), "/sys/block/loop%d/loop/dio", nr);
	read_sysfs(sys, val, sizeof(val));
	cr_assert_str_eq(val, "1", "loop%d runs buffered (dio=%s)", nr, val);
	snprintf(sys, sizeof(sys), "/sys/block/loop%d/queue/logical_block_size",
		 nr);
	read_sysfs(sys, val, sizeof(val));
	cr_assert_str_eq(val, "4096", "loop%d logical block size %s", nr,
			 val);
	snprintf(sys, sizeof(sys), "/sys/block/loop%d/loop/backing_file", nr);
	read_sysfs(sys, val, sizeof(val));
	cr_assert_str_eq(val, tu.td.backing);

	fd = open(tu.td.path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ioctl(fd, BLKGETSIZE64, &bytes), 0);
	close(fd);
	cr_assert_eq(bytes, TU_DEV_SIZE);
	cr_assert_eq(tu.td.size, TU_DEV_SIZE);

	/* sparse: the backing file takes (almost) no space */
	cr_assert_eq(stat(tu.td.backing, &st), 0);
	cr_assert_eq((uint64_t)st.st_size, TU_DEV_SIZE);
	cr_assert_lt((uint64_t)st.st_blocks * 512, TU_DEV_SIZE / 4);

	snprintf(backing, sizeof(backing), "%s", tu.td.backing);
	snprintf(dir, sizeof(dir), "%s", tu.td.backing);
	*strrchr(dir, '/') = '\0';
	uf_testdev_destroy(&tu.td);

	/* detached (or reused by someone else), file and directory gone */
	read_sysfs(sys, val, sizeof(val));
	cr_assert_str_neq(val, backing, "loop%d still attached to %s", nr,
			  backing);
	cr_assert_neq(stat(backing, &st), 0);
	cr_assert_neq(stat(dir, &st), 0, "%s left behind", dir);
	cr_assert_eq(tu.td.loop_nr, -1);
	cr_assert(!tu.td.is_loop);

	/* twice, and on a zeroed struct: nothing happens */
	uf_testdev_destroy(&tu.td);
	memset(&tu.td, 0, sizeof(tu.td));
	uf_testdev_destroy(&tu.td);
	uf_testdev_destroy(NULL);
}

Test(io, testdev_file_only, .fini = tu_fini)
{
	char dir[256];
	struct stat st;
	int fd;

	cr_assert_eq(uf_testdev_create(TU_DEV_SIZE, UF_TESTDEV_FILE_ONLY,
				       &tu.td), 0);
	cr_assert(!tu.td.is_loop);
	cr_assert_eq(tu.td.loop_nr, -1);
	cr_assert_str_eq(tu.td.path, tu.td.backing);
	cr_assert_neq(tu.td.why_not_loop[0], '\0', "no reason given");
	cr_assert_eq(stat(tu.td.path, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq((uint64_t)st.st_size, TU_DEV_SIZE);
	fd = open(tu.td.path, O_RDWR | O_DIRECT);
	cr_assert_geq(fd, 0, "fallback file refuses O_DIRECT: %s",
		      strerror(errno));
	close(fd);

	snprintf(dir, sizeof(dir), "%s", tu.td.backing);
	*strrchr(dir, '/') = '\0';
	uf_testdev_destroy(&tu.td);
	cr_assert_neq(stat(dir, &st), 0, "%s left behind", dir);
	uf_testdev_destroy(&tu.td);
}

Test(io, testdev_bad_size, .fini = tu_fini)
{
	cr_assert_eq(uf_testdev_create(0, 0, &tu.td), -EINVAL);
	cr_assert_eq(uf_testdev_create(4096 + 512, 0, &tu.td), -EINVAL);
	cr_assert_eq(uf_testdev_create(4096, 0, NULL), -EINVAL);
}

/* The first loop device bound to a file under dir, or -1. */
static int loop_under(const char *dir)
{
	char sys[96], val[300];
	int nr;

	for (nr = 0; nr < 256; nr++) {
		snprintf(sys, sizeof(sys),
			 "/sys/block/loop%d/loop/backing_file", nr);
		read_sysfs(sys, val, sizeof(val));
		if (!strncmp(val, dir, strlen(dir)))
			return nr;
	}
	return -1;
}

static void assert_no_loop_under(const char *dir)
{
	int nr = loop_under(dir);

	cr_assert_lt(nr, 0, "loop%d left attached under %s", nr, dir);
}

/*
 * A process that dies without uf_testdev_destroy() (crash, timeout kill)
 * leaves no attached loop device (autoclear) and its directory is swept by
 * the next uf_testdev_create().  Run in a private $UFLUSH_TESTDIR.
 */
Test(io, testdev_dead_process_leaves_nothing, .fini = tu_fini)
{
	char base[] = "/var/tmp/uflush-sweep.XXXXXX";
	char child_backing[256], child_dir[256], lpath[32];
	int pipefd[2], st, left = 0, loop_nr, fd;
	bool swept, child_loop;
	struct uf_testdev td;
	struct dirent *de;
	struct stat sb;
	ssize_t n;
	pid_t pid;
	DIR *d;

	cr_assert_not_null(mkdtemp(base));
	setenv("UFLUSH_TESTDIR", base, 1);
	cr_assert_eq(pipe(pipefd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		/* the child dies holding a device, as if it crashed */
		memset(&td, 0, sizeof(td));
		if (uf_testdev_create(TU_DEV_SIZE, 0, &td))
			_exit(1);
		if (write(pipefd[1], &td, sizeof(td)) != sizeof(td))
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	memset(&td, 0, sizeof(td));
	n = read(pipefd[0], &td, sizeof(td));
	close(pipefd[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	snprintf(child_backing, sizeof(child_backing), "%s", td.backing);
	snprintf(child_dir, sizeof(child_dir), "%s", td.backing);
	if (strrchr(child_dir, '/'))
		*strrchr(child_dir, '/') = '\0';
	child_loop = td.is_loop;
	loop_nr = loop_under(base);

	/* our own create sweeps the dead child's directory */
	st = uf_testdev_create(TU_DEV_SIZE, UF_TESTDEV_FILE_ONLY, &td);
	swept = stat(child_backing, &sb) != 0;
	uf_testdev_destroy(&td);
	unsetenv("UFLUSH_TESTDIR");

	/* clean up before judging, so a failure leaves nothing either */
	if (loop_nr >= 0) {
		snprintf(lpath, sizeof(lpath), "/dev/loop%d", loop_nr);
		fd = open(lpath, O_RDONLY);
		if (fd >= 0) {
			ioctl(fd, LOOP_CLR_FD, 0);
			close(fd);
		}
	}
	if (!swept) {
		unlink(child_backing);
		rmdir(child_dir);
	}
	d = opendir(base);
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			left++;
	if (d)
		closedir(d);
	rmdir(base);

	cr_assert_eq(n, (ssize_t)sizeof(td), "child failed to make a device");
	cr_assert(child_backing[0]);
	cr_assert_eq(st, 0, "uf_testdev_create: %s", strerror(-st));
	cr_assert_lt(loop_nr, 0,
		     "loop%d of a dead process still attached (loop: %d)",
		     loop_nr, child_loop);
	cr_assert(swept, "%s of a dead process not swept", child_backing);
	cr_assert_eq(left, 0, "%d entries left in %s", left, base);
}

/*
 * ramfs has no direct I/O: the kernel accepts LOOP_CONFIGURE but leaves
 * the device buffered.  That must be caught (dio=0), not used, and the
 * file fallback must be refused too since the file cannot do O_DIRECT.
 */
Test(io, testdev_refuses_buffered_loop, .fini = tu_fini)
{
	struct dirent *de;
	int ret, left = 0;
	DIR *d;

	if (geteuid())
		tu_skip("needs root to mount a ramfs and attach loop devices");
	ret = tu_mount_ramfs();
	if (ret)
		tu_skip("cannot mount a ramfs: %s", strerror(-ret));
	setenv("UFLUSH_TESTDIR", tu.ramfs, 1);

	ret = uf_testdev_create(TU_DEV_SIZE, UF_TESTDEV_NO_FALLBACK, &tu.td);
	cr_assert_lt(ret, 0, "a loop device over ramfs was accepted (%s)",
		     tu.td.path);
	assert_no_loop_under(tu.ramfs);

	ret = uf_testdev_create(TU_DEV_SIZE, 0, &tu.td);
	cr_assert_lt(ret, 0, "accepted %s on ramfs, which has no O_DIRECT",
		     tu.td.path);
	assert_no_loop_under(tu.ramfs);

	/* nothing left behind in the directory */
	d = opendir(tu.ramfs);
	cr_assert_not_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			left++;
	closedir(d);
	cr_assert_eq(left, 0, "%d entries left in %s", left, tu.ramfs);
	unsetenv("UFLUSH_TESTDIR");
}

/* ------------------------------------------------------------------ */
/* Round trips per engine                                              */

static void check_props(struct uf_bdev *b, enum tu_kind kind)
{
	unsigned int lbs = 0;
	uint64_t size = 0;

	cr_assert_eq(uf_bdev_size(b, &size), 0);
	cr_assert_eq(size, TU_DEV_SIZE);
	cr_assert_eq(uf_bdev_block_size(b, &lbs), 0);
	cr_assert(lbs >= 512 && lbs <= TU_PAGE && !(lbs & (lbs - 1)),
		  "logical block size %u", lbs);
	if (kind == TU_LOOP)
		cr_assert_eq(lbs, TU_PAGE);
	cr_assert_eq(uf_bdev_is_blockdev(b), kind == TU_LOOP);
	cr_assert_str_eq(uf_bdev_path(b), tu.td.path);
}

/*
 * Single-buffer writes of several sizes, including the first and the last
 * block of the device, each with its own seed; read back raw and through
 * uflush.
 */
static void rw_single(const char *engine, enum tu_kind kind)
{
	static const struct {
		uint64_t off;
		size_t len;
	} w[] = {
		{ 0, 4096 },
		{ 8192, 65536 },
		{ 1 << 20, 1 << 20 },
		{ 7 << 20, 12288 },
		{ TU_DEV_SIZE - 4096, 4096 },
		{ TU_DEV_SIZE - (256 << 10), 128 << 10 },
	};
	struct uf_bdev *b;
	unsigned int i;
	ssize_t n;
	void *buf;

	tu_dev(kind, TU_DEV_SIZE);
	b = tu_open(engine, 0, 0, NULL);
	check_props(b, kind);

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		buf = tu_alloc(w[i].len);
		tu_fill(buf, w[i].len, w[i].off, 100 + i);
		n = uf_bdev_pwrite(b, buf, w[i].len, w[i].off);
		free(buf);
		cr_assert_eq(n, (ssize_t)w[i].len, "%s write %u: %zd", engine,
			     i, n);
	}
	cr_assert_eq(uf_bdev_flush(b), 0);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		tu_raw_expect(tu.td.path, w[i].off, w[i].len, 100 + i,
			      "single write");

	/* and back through uflush */
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		long bad;

		buf = tu_alloc(w[i].len);
		n = uf_bdev_pread(b, buf, w[i].len, w[i].off);
		bad = tu_check(buf, w[i].len, w[i].off, 100 + i);
		free(buf);
		cr_assert_eq(n, (ssize_t)w[i].len, "%s read %u: %zd", engine,
			     i, n);
		cr_assert_eq(bad, -1, "%s read %u differs at byte %ld", engine,
			     i, bad);
	}
}

TU_ENGINE_TESTS(io, rw_single, rw_single)

#define VEC_REQS	256
#define VEC_PAGES	8	/* pages per request */
#define VEC_BATCH	32

/*
 * 256 requests of 8 pages each cover 8 MiB of the device contiguously;
 * the pages come from one pool in a scrambled order, so no request's
 * buffers are contiguous in memory.  Submitted in batches of 32 to a queue
 * of 64, so many are in flight at once.  Then the same through vectored
 * reads into another scrambled pool.
 */
static void rw_vectored(const char *engine, enum tu_kind kind)
{
	const unsigned int nr_pages = VEC_REQS * VEC_PAGES;
	const uint64_t base = 4 << 20;
	struct uf_io_req *reqs[VEC_BATCH];
	unsigned int i, j, p, *perm;
	size_t lens[VEC_PAGES];
	void *bufs[VEC_PAGES];
	struct tu_batch batch;
	struct tu_io *ios;
	struct uf_bdev *b;
	uint8_t *pool;
	int ret, pass;

	tu_dev(kind, TU_DEV_SIZE);
	b = tu_open(engine, 64, 0, NULL);
	pool = tu_alloc((size_t)nr_pages * TU_PAGE);
	ios = calloc(VEC_REQS, sizeof(*ios));
	perm = calloc(nr_pages, sizeof(*perm));
	cr_assert(ios && perm);
	for (i = 0; i < VEC_PAGES; i++)
		lens[i] = TU_PAGE;

	for (pass = 0; pass < 2; pass++) {
		enum uf_io_op op = pass ? UF_IO_READ : UF_IO_WRITE;

		/* a different scramble for each pass: (i * 97 + pass) mod N */
		for (i = 0; i < nr_pages; i++)
			perm[i] = (i * 97 + 13 * pass) % nr_pages;
		memset(pool, 0, (size_t)nr_pages * TU_PAGE);
		tu_batch_init(&batch);
		for (i = 0; i < VEC_REQS; i++) {
			uint64_t off = base + (uint64_t)i * VEC_PAGES * TU_PAGE;

			for (j = 0; j < VEC_PAGES; j++) {
				p = perm[i * VEC_PAGES + j];
				bufs[j] = pool + (size_t)p * TU_PAGE;
				if (op == UF_IO_WRITE)
					tu_fill(bufs[j], TU_PAGE,
						off + j * TU_PAGE, 7);
			}
			tu_io_init(&ios[i], &batch, op, off, bufs, lens,
				   VEC_PAGES);
		}
		for (i = 0; i < VEC_REQS; i += VEC_BATCH) {
			for (j = 0; j < VEC_BATCH; j++)
				reqs[j] = &ios[i + j].req;
			ret = uf_bdev_submit(b, reqs, VEC_BATCH);
			cr_assert_eq(ret, 0, "%s submit: %s", engine,
				     strerror(-ret));
		}
		cr_assert_eq(tu_batch_wait(&batch, VEC_REQS, TU_WAIT_MS), 0,
			     "%s: only %u of %u completed", engine,
			     batch.nr_done, VEC_REQS);
		cr_assert_eq(uf_bdev_drain(b), 0);
		cr_assert_eq(batch.nr_dup, 0, "end_io called twice");
		cr_assert_eq(batch.nr_done, VEC_REQS, "extra completions");
		for (i = 0; i < VEC_REQS; i++)
			cr_assert_eq(ios[i].res, VEC_PAGES * TU_PAGE,
				     "%s %s req %u: res %d", engine,
				     pass ? "read" : "write", i, ios[i].res);

		if (op == UF_IO_WRITE) {
			struct tu_io fl;
			struct uf_io_req *r = &fl.req;

			/* an asynchronous flush completes with 0 */
			tu_batch_init(&batch);
			tu_io_init(&fl, &batch, UF_IO_FLUSH, 0, NULL, NULL, 0);
			cr_assert_eq(uf_bdev_submit(b, &r, 1), 0);
			cr_assert_eq(tu_batch_wait(&batch, 1, TU_WAIT_MS), 0);
			cr_assert_eq(fl.res, 0, "%s async flush: %d", engine,
				     fl.res);
			cr_assert_eq(uf_bdev_flush(b), 0);
			tu_raw_expect(tu.td.path, base,
				      (size_t)nr_pages * TU_PAGE, 7,
				      "vectored write");
			/* neighbours untouched (still sparse zeros) */
			cr_assert_eq(tu_raw_read(tu.td.path, base - TU_PAGE,
						 pool, TU_PAGE), 0);
			cr_assert_eq(tu_raw_read(tu.td.path, base +
						 (uint64_t)nr_pages * TU_PAGE,
						 pool + TU_PAGE, TU_PAGE), 0);
			for (i = 0; i < 2 * TU_PAGE; i++)
				cr_assert_eq(pool[i], 0,
					     "write spilled outside its range");
			continue;
		}
		for (i = 0; i < nr_pages; i++) {
			uint64_t off = base + (uint64_t)i * TU_PAGE;
			long bad;

			p = perm[i];
			bad = tu_check(pool + (size_t)p * TU_PAGE, TU_PAGE,
				       off, 7);
			cr_assert_eq(bad, -1,
				     "%s vectored read: page %u byte %ld wrong",
				     engine, i, bad);
		}
	}
	free(perm);
	free(ios);
	free(pool);
}

TU_ENGINE_TESTS(io, rw_vectored, rw_vectored)

/*
 * The file shrinks behind uflush's back: a read that gets fewer bytes than
 * asked (straddling the new end) or none (past it) is -EIO, never a short
 * count; a read before the new end still works.
 */
static void short_read(const char *engine)
{
	const uint64_t half = TU_DEV_SIZE / 2;
	struct uf_bdev *b;
	uint8_t *buf;

	tu_dev(TU_FILE, TU_DEV_SIZE);
	tu_raw_fill(tu.td.path, half - 2 * TU_PAGE, 4 * TU_PAGE, 31);
	b = tu_open(engine, 0, 0, NULL);
	cr_assert_eq(truncate(tu.td.path, (off_t)half), 0);
	buf = tu_alloc(4 * TU_PAGE);
	cr_assert_eq(uf_bdev_pread(b, buf, 4 * TU_PAGE, half - 2 * TU_PAGE),
		     -EIO, "%s: a short read was not -EIO", engine);
	cr_assert_eq(uf_bdev_pread(b, buf, TU_PAGE, half + TU_PAGE), -EIO,
		     "%s: a read past EOF was not -EIO", engine);
	cr_assert_eq(uf_bdev_pread(b, buf, 2 * TU_PAGE, half - 2 * TU_PAGE),
		     2 * TU_PAGE);
	cr_assert_eq(tu_check(buf, 2 * TU_PAGE, half - 2 * TU_PAGE, 31), -1);
	free(buf);
}

Test(io, short_read_is_eio_io_uring, .fini = tu_fini)
{
	short_read("io_uring");
}

Test(io, short_read_is_eio_libaio, .fini = tu_fini)
{
	short_read("libaio");
}

Test(io, short_read_is_eio_psync, .fini = tu_fini)
{
	short_read("psync");
}

#define CL_REQS	16

/*
 * Closing with requests in flight (each held 50 ms by the shaper) waits
 * for them: every end_io has run, once, when uf_bdev_close() returns.
 */
static void close_waits(const char *engine, enum tu_kind kind)
{
	struct uf_io_shape shape = { .latency_us = 50000 };
	struct uf_io_req *reqs[CL_REQS];
	struct tu_io ios[CL_REQS];
	struct tu_batch batch;
	struct uf_bdev *b;
	unsigned int done;
	uint8_t *pool;
	int i;

	tu_dev_mem(kind, TU_DEV_SIZE);
	b = tu_open(engine, CL_REQS, 0, &shape);
	pool = tu_alloc((size_t)CL_REQS * TU_PAGE);
	tu_fill(pool, (size_t)CL_REQS * TU_PAGE, 0, 32);
	tu_batch_init(&batch);
	tu_io_init_writes(ios, reqs, &batch, pool, TU_PAGE, TU_PAGE, CL_REQS);
	cr_assert_eq(uf_bdev_submit(b, reqs, CL_REQS), 0);
	cr_assert_eq(uf_bdev_close(b), 0);
	tu.bdev = NULL;
	pthread_mutex_lock(&batch.lock);
	done = batch.nr_done;
	pthread_mutex_unlock(&batch.lock);
	cr_assert_eq(done, CL_REQS, "%s: close returned with %u of %d done",
		     engine, done, CL_REQS);
	cr_assert_eq(batch.nr_dup, 0);
	for (i = 0; i < CL_REQS; i++)
		cr_assert_eq(ios[i].res, (int)TU_PAGE);
	tu_raw_expect(tu.td.path, 0, (size_t)CL_REQS * TU_PAGE, 32,
		      "written before close");
	free(pool);
}

TU_ENGINE_TESTS(io, close_waits_for_inflight, close_waits)

/* ------------------------------------------------------------------ */
/* Engine fallback                                                     */

Test(io, fallback_to_libaio_without_io_uring, .fini = tu_fini)
{
	struct uf_bdev_config cfg;
	void *buf;

	setenv("UFLUSH_DISABLE_IO_URING", "1", 1);
	tu_dev(TU_FILE, TU_DEV_SIZE);
	uf_bdev_config_init(&cfg);
	cfg.engine = NULL;
	cr_assert_eq(uf_bdev_open(tu.td.path, &cfg, &tu.bdev), 0);
	cr_assert_str_eq(uf_bdev_engine_name(tu.bdev), "libaio");

	buf = tu_alloc(TU_PAGE);
	tu_fill(buf, TU_PAGE, 12288, 3);
	cr_assert_eq(uf_bdev_pwrite(tu.bdev, buf, TU_PAGE, 12288), TU_PAGE);
	free(buf);
	tu_raw_expect(tu.td.path, 12288, TU_PAGE, 3, "after fallback");
	unsetenv("UFLUSH_DISABLE_IO_URING");
}

Test(io, no_fallback_without_io_uring_is_enosys, .fini = tu_fini)
{
	struct uf_bdev_config cfg;
	int ret;

	setenv("UFLUSH_DISABLE_IO_URING", "1", 1);
	tu_dev(TU_FILE, TU_DEV_SIZE);
	uf_bdev_config_init(&cfg);
	cfg.engine = "io_uring";
	cfg.flags |= UF_BDEV_NO_FALLBACK;
	ret = uf_bdev_open(tu.td.path, &cfg, &tu.bdev);
	cr_assert_eq(ret, -ENOSYS, "got %d (%s)", ret, strerror(-ret));
	cr_assert_null(tu.bdev);

	/* without the flag, the same request falls back */
	cfg.flags = 0;
	cr_assert_eq(uf_bdev_open(tu.td.path, &cfg, &tu.bdev), 0);
	cr_assert_str_neq(uf_bdev_engine_name(tu.bdev), "io_uring");
	unsetenv("UFLUSH_DISABLE_IO_URING");
}

/* ------------------------------------------------------------------ */
/* A full queue sleeps                                                 */

#define FQ_REQS		100
#define FQ_DEPTH	2
#define FQ_LAT_US	5000
/* Of the idle time a latency adds, the CPU share that means spinning. */
#define FQ_SPIN_SHARE	0.25

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

struct fq_run {
	double wall_ms;
	double cpu_ms;
};

/* Submit all of ios in one call and wait for them: wall and CPU time. */
static struct fq_run fq_submit_all(struct uf_bdev *b, const char *engine,
				   struct tu_io *ios)
{
	struct uf_io_req *reqs[FQ_REQS];
	struct tu_batch batch;
	struct fq_run run;
	double cpu0;
	uint64_t t0;
	int i, ret;

	tu_batch_init(&batch);
	for (i = 0; i < FQ_REQS; i++) {
		ios[i].batch = &batch;
		ios[i].done = false;
		reqs[i] = &ios[i].req;
	}
	cpu0 = cpu_seconds();
	t0 = uf_now_ns();
	ret = uf_bdev_submit(b, reqs, FQ_REQS);
	cr_assert_eq(ret, 0, "submit: %s", strerror(-ret));
	cr_assert_eq(tu_batch_wait(&batch, FQ_REQS, TU_WAIT_MS), 0,
		     "%s: only %u of %d completed", engine, batch.nr_done,
		     FQ_REQS);
	run.wall_ms = tu_ms_since(t0);
	run.cpu_ms = (cpu_seconds() - cpu0) * 1000;
	for (i = 0; i < FQ_REQS; i++)
		cr_assert_eq(ios[i].res, (int)TU_PAGE, "req %d: %d", i,
			     ios[i].res);
	cr_assert_eq(batch.nr_dup, 0);
	return run;
}

/*
 * Queue depth 2, 100 requests submitted in one call: the submitter must
 * wait for room about 50 times.  Run once with no added latency (the
 * reference) and once with 5 ms per request, which must take at least
 * 250 ms.  Both runs do the same requests, waits and wakeups (bar the
 * shaper's timer); the second only adds idle time.  A waiter or a reaper
 * that spins turns that idle time into CPU time, roughly one CPU's worth;
 * one that sleeps adds next to nothing.  The CPU time of the reference
 * absorbs what this machine charges for the work itself, however loaded.
 */
static void full_queue(const char *engine, enum tu_kind kind)
{
	struct uf_io_shape shape = { 0 };
	struct fq_run ref, run;
	double idle_ms, extra_cpu_ms;
	struct tu_io *ios;
	struct uf_bdev *b;
	uint8_t *pool;
	int i;

	tu_dev_mem(kind, TU_DEV_SIZE);
	b = tu_open(engine, FQ_DEPTH, UF_BDEV_SHAPED, &shape);
	pool = tu_alloc((size_t)FQ_REQS * TU_PAGE);
	ios = calloc(FQ_REQS, sizeof(*ios));
	cr_assert_not_null(ios);
	for (i = 0; i < FQ_REQS; i++)
		tu_fill(pool + (size_t)i * TU_PAGE, TU_PAGE,
			(uint64_t)i * 2 * TU_PAGE, 21);
	tu_io_init_writes(ios, NULL, NULL, pool, TU_PAGE, 2 * TU_PAGE,
			  FQ_REQS);

	ref = fq_submit_all(b, engine, ios);
	shape.latency_us = FQ_LAT_US;
	cr_assert_eq(uf_bdev_set_shape(b, &shape), 0);
	run = fq_submit_all(b, engine, ios);

	cr_assert_geq(run.wall_ms, 0.95 * FQ_REQS / FQ_DEPTH * FQ_LAT_US / 1000,
		      "%s: 100 requests at depth 2 and 5 ms took only %.1f ms",
		      engine, run.wall_ms);
	idle_ms = run.wall_ms - ref.wall_ms;
	extra_cpu_ms = run.cpu_ms - ref.cpu_ms;
	cr_log_info("%s/%s full queue: %.1f ms wall, %.1f ms CPU; without latency %.1f ms wall, %.1f ms CPU",
		    engine, tu_kind_name(kind), run.wall_ms, run.cpu_ms,
		    ref.wall_ms, ref.cpu_ms);
	cr_assert_lt(extra_cpu_ms, FQ_SPIN_SHARE * idle_ms,
		     "%s: %.1f ms more CPU for %.1f ms more waiting (%.1f ms CPU in %.1f ms with latency, %.1f in %.1f without): busy-waiting?",
		     engine, extra_cpu_ms, idle_ms, run.cpu_ms, run.wall_ms,
		     ref.cpu_ms, ref.wall_ms);

	for (i = 0; i < FQ_REQS; i++)
		tu_raw_expect(tu.td.path, (uint64_t)i * 2 * TU_PAGE, TU_PAGE,
			      21, "full queue");
	free(ios);
	free(pool);
}

TU_ENGINE_TESTS(io, full_queue_sleeps, full_queue)

/* ------------------------------------------------------------------ */
/* Many submitters                                                     */

#define MT_THREADS	8
#define MT_REQS		64	/* per thread */
#define MT_PAGES	4	/* per request */
#define MT_BATCH	8

struct mt_arg {
	struct uf_bdev *bdev;
	unsigned int id;
	struct tu_batch batch;
	struct tu_io ios[MT_REQS];
	uint8_t *pool;
	int submit_ret;
	int wait_ret;
};

static uint64_t mt_off(unsigned int thread, unsigned int req)
{
	/* interleave the threads' requests across the device */
	return ((uint64_t)req * MT_THREADS + thread) * MT_PAGES * TU_PAGE;
}

static void *mt_thread(void *p)
{
	struct mt_arg *a = p;
	struct uf_io_req *reqs[MT_BATCH];
	size_t lens[MT_PAGES];
	void *bufs[MT_PAGES];
	unsigned int i, j;
	int ret;

	for (j = 0; j < MT_PAGES; j++)
		lens[j] = TU_PAGE;
	tu_batch_init(&a->batch);
	for (i = 0; i < MT_REQS; i++) {
		uint64_t off = mt_off(a->id, i);

		for (j = 0; j < MT_PAGES; j++) {
			/* pages of a request in reverse memory order */
			bufs[j] = a->pool + ((size_t)i * MT_PAGES +
					     (MT_PAGES - 1 - j)) * TU_PAGE;
			tu_fill(bufs[j], TU_PAGE, off + j * TU_PAGE,
				1000 + a->id);
		}
		memset(&a->ios[i], 0, sizeof(a->ios[i]));
		a->ios[i].batch = &a->batch;
		for (j = 0; j < MT_PAGES; j++) {
			a->ios[i].iov[j].iov_base = bufs[j];
			a->ios[i].iov[j].iov_len = lens[j];
		}
		a->ios[i].req.op = UF_IO_WRITE;
		a->ios[i].req.offset = off;
		a->ios[i].req.iov = a->ios[i].iov;
		a->ios[i].req.nr_iov = MT_PAGES;
		a->ios[i].req.end_io = tu_end_io;
		a->ios[i].req.private = &a->ios[i];
	}
	for (i = 0; i < MT_REQS; i += MT_BATCH) {
		for (j = 0; j < MT_BATCH; j++)
			reqs[j] = &a->ios[i + j].req;
		ret = uf_bdev_submit(a->bdev, reqs, MT_BATCH);
		if (ret && !a->submit_ret)
			a->submit_ret = ret;
	}
	a->wait_ret = tu_batch_wait(&a->batch, MT_REQS, TU_WAIT_MS);
	return NULL;
}

static void many_threads(const char *engine, enum tu_kind kind)
{
	pthread_t th[MT_THREADS];
	struct mt_arg *args;
	struct uf_bdev *b;
	unsigned int t, i;

	tu_dev(kind, TU_DEV_SIZE);
	b = tu_open(engine, 16, 0, NULL);	/* smaller than the load */
	args = calloc(MT_THREADS, sizeof(*args));
	cr_assert_not_null(args);
	for (t = 0; t < MT_THREADS; t++) {
		args[t].bdev = b;
		args[t].id = t;
		args[t].pool = tu_alloc((size_t)MT_REQS * MT_PAGES * TU_PAGE);
	}
	for (t = 0; t < MT_THREADS; t++)
		cr_assert_eq(pthread_create(&th[t], NULL, mt_thread,
					    &args[t]), 0);
	for (t = 0; t < MT_THREADS; t++)
		pthread_join(th[t], NULL);

	for (t = 0; t < MT_THREADS; t++) {
		cr_assert_eq(args[t].submit_ret, 0, "thread %u submit: %s", t,
			     strerror(-args[t].submit_ret));
		cr_assert_eq(args[t].wait_ret, 0,
			     "thread %u: only %u of %d completed", t,
			     args[t].batch.nr_done, MT_REQS);
		cr_assert_eq(args[t].batch.nr_dup, 0);
		for (i = 0; i < MT_REQS; i++)
			cr_assert_eq(args[t].ios[i].res, MT_PAGES * TU_PAGE,
				     "thread %u req %u: %d", t, i,
				     args[t].ios[i].res);
	}
	cr_assert_eq(uf_bdev_flush(b), 0);
	for (t = 0; t < MT_THREADS; t++) {
		for (i = 0; i < MT_REQS; i++)
			tu_raw_expect(tu.td.path, mt_off(t, i),
				      MT_PAGES * TU_PAGE, 1000 + t,
				      "many threads");
		free(args[t].pool);
	}
	free(args);
}

TU_ENGINE_TESTS(io, many_threads, many_threads)
