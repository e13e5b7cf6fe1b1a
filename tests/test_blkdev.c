// SPDX-License-Identifier: MIT
/*
 * Description: io/blkdev.c returns every error io.h promises, and a
 * refused request leaves the device untouched.
 *
 * Opening: a missing path is -ENOENT, a file on a filesystem without
 * direct I/O (ramfs) -EINVAL, a char device, fifo or directory -ENODEV, a
 * mounted block device or one held O_EXCL elsewhere -EBUSY (accepted with
 * UF_BDEV_FORCE, without writing to it), and an open device is itself held
 * exclusively.  Requests: a misaligned buffer, offset or length and an
 * empty iovec are -EINVAL, a range past the end -ERANGE, and a batch with
 * one bad request submits none of it (no end_io, no bytes on the device).
 * A closed handle is -EBADF everywhere.
 */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testutil.h"

/* Open tu.td with whatever engine works (validation is engine-neutral). */
static struct uf_bdev *open_any(unsigned int flags)
{
	struct uf_bdev_config cfg;
	int ret;

	uf_bdev_config_init(&cfg);
	cfg.flags = flags;
	ret = uf_bdev_open(tu.td.path, &cfg, &tu.bdev);
	cr_assert_eq(ret, 0, "open %s: %s", tu.td.path, strerror(-ret));
	return tu.bdev;
}

static int try_open(const char *path, unsigned int flags)
{
	struct uf_bdev_config cfg;
	struct uf_bdev *b = NULL;
	int ret;

	uf_bdev_config_init(&cfg);
	cfg.flags = flags;
	ret = uf_bdev_open(path, &cfg, &b);
	if (!ret)
		uf_bdev_close(b);
	else
		cr_assert_null(b, "failed open left a handle");
	return ret;
}

/* ------------------------------------------------------------------ */
/* Opening                                                             */

Test(blkdev, open_missing_path_is_enoent, .fini = tu_fini)
{
	char path[300];

	cr_assert_eq(try_open("/nonexistent-uflush/dev", 0), -ENOENT);
	tu_dev(TU_FILE, TU_DEV_SIZE);
	snprintf(path, sizeof(path), "%s.missing", tu.td.backing);
	cr_assert_eq(try_open(path, 0), -ENOENT);
	cr_assert_eq(try_open(path, UF_BDEV_FORCE), -ENOENT);
}

Test(blkdev, open_without_direct_io_is_einval, .fini = tu_fini)
{
	char path[300];
	int fd, ret;

	ret = tu_mount_ramfs();
	if (ret)
		tu_skip("cannot mount a ramfs (no direct I/O there): %s",
			strerror(-ret));
	snprintf(path, sizeof(path), "%s/file", tu.ramfs);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	/* the premise: ramfs really refuses O_DIRECT */
	fd = open(path, O_RDWR | O_DIRECT);
	if (fd >= 0) {
		close(fd);
		tu_skip("this kernel's ramfs accepts O_DIRECT");
	}
	cr_assert_eq(try_open(path, 0), -EINVAL);
	unlink(path);
}

Test(blkdev, open_char_fifo_dir_is_enodev, .fini = tu_fini)
{
	char fifo[300], dir[256];

	cr_assert_eq(try_open("/dev/null", 0), -ENODEV);
	cr_assert_eq(try_open("/dev/null", UF_BDEV_FORCE), -ENODEV);
	tu_dev(TU_FILE, TU_DEV_SIZE);
	snprintf(dir, sizeof(dir), "%s", tu.td.backing);
	*strrchr(dir, '/') = '\0';
	cr_assert_eq(try_open(dir, 0), -ENODEV);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
	cr_assert_eq(try_open(fifo, 0), -ENODEV);
	unlink(fifo);
}

Test(blkdev, open_bad_arguments_is_einval, .fini = tu_fini)
{
	struct uf_bdev_config cfg;
	struct uf_bdev *b = NULL;

	tu_dev(TU_FILE, TU_DEV_SIZE);
	uf_bdev_config_init(&cfg);
	cr_assert_eq(uf_bdev_open(NULL, &cfg, &b), -EINVAL);
	cr_assert_eq(uf_bdev_open("", &cfg, &b), -EINVAL);
	cr_assert_eq(uf_bdev_open(tu.td.path, &cfg, NULL), -EINVAL);
	cfg.engine = "no-such-engine";
	cr_assert_eq(uf_bdev_open(tu.td.path, &cfg, &b), -EINVAL);
	cr_assert_null(b);
}

/*
 * A mounted filesystem's device is refused; UF_BDEV_FORCE opens it anyway.
 * Nothing is written to it: the forced handle only reads the superblock.
 */
Test(blkdev, mounted_device_is_ebusy, .fini = tu_fini)
{
	const char *why;
	uint8_t *buf;
	int ret;

	tu_dev(TU_LOOP, TU_DEV_SIZE);
	why = tu_mount_ext4(tu.td.path, tu.mnt, sizeof(tu.mnt));
	if (why)
		tu_skip("%s", why);

	cr_assert_eq(try_open(tu.td.path, 0), -EBUSY,
		     "mounted %s was not refused", tu.td.path);
	cr_assert_eq(try_open(tu.td.path, UF_BDEV_NO_FALLBACK), -EBUSY);

	ret = try_open(tu.td.path, UF_BDEV_FORCE);
	if (ret == -EBUSY)
		tu_skip("the kernel refuses to open a mounted device for writing (CONFIG_BLK_DEV_WRITE_MOUNTED=n?)");
	open_any(UF_BDEV_FORCE);
	cr_assert(uf_bdev_is_blockdev(tu.bdev));
	buf = tu_alloc(TU_PAGE);
	cr_assert_eq(uf_bdev_pread(tu.bdev, buf, TU_PAGE, 0), TU_PAGE);
	cr_assert(buf[1024 + 56] == 0x53 && buf[1024 + 57] == 0xef,
		  "no ext4 superblock read through the forced handle");
	free(buf);
	cr_assert_eq(uf_bdev_close(tu.bdev), 0);
	tu.bdev = NULL;

	/* unmounted, it is accepted again without force */
	cr_assert_eq(umount(tu.mnt), 0, "umount: %s", strerror(errno));
	rmdir(tu.mnt);
	tu.mnt[0] = '\0';
	cr_assert_eq(try_open(tu.td.path, 0), 0);
}

Test(blkdev, exclusively_held_device_is_ebusy, .fini = tu_fini)
{
	int fd, fd2;

	tu_dev(TU_LOOP, TU_DEV_SIZE);
	fd = open(tu.td.path, O_RDONLY | O_EXCL);
	cr_assert_geq(fd, 0, "O_EXCL open: %s", strerror(errno));
	cr_assert_eq(try_open(tu.td.path, 0), -EBUSY);
	cr_assert_eq(try_open(tu.td.path, UF_BDEV_FORCE), 0);
	close(fd);

	/* and uflush itself holds an open device exclusively */
	open_any(0);
	fd2 = open(tu.td.path, O_RDONLY | O_EXCL);
	if (fd2 >= 0)
		close(fd2);
	cr_assert_lt(fd2, 0, "%s open in uflush but not exclusively",
		     tu.td.path);
	cr_assert_eq(errno, EBUSY);
	cr_assert_eq(try_open(tu.td.path, 0), -EBUSY);
}

/* ------------------------------------------------------------------ */
/* Refused requests                                                    */

#define GUARD_LEN	(64u << 10)

/*
 * Submit [good, bad] as one batch: the call must fail with want, the good
 * request must never complete, and the device must be unchanged.
 */
static void batch_refused(struct uf_bdev *b, struct uf_io_req *bad,
			  uint64_t good_off, int want, const char *what)
{
	struct uf_io_req *reqs[2];
	struct tu_batch batch, bad_batch;
	struct tu_io good, bad_io;
	size_t len = TU_PAGE;
	void *buf = tu_alloc(TU_PAGE);
	int ret;

	/* should the bad one go through after all, count it, don't crash */
	tu_batch_init(&bad_batch);
	memset(&bad_io, 0, sizeof(bad_io));
	bad_io.batch = &bad_batch;
	bad->private = &bad_io;
	tu_batch_init(&batch);
	tu_fill(buf, TU_PAGE, good_off, 99);
	tu_io_init(&good, &batch, UF_IO_WRITE, good_off, &buf, &len, 1);
	reqs[0] = &good.req;
	reqs[1] = bad;
	ret = uf_bdev_submit(b, reqs, 2);
	cr_assert_eq(ret, want, "%s in a batch: %d, want %d", what, ret,
		     want);
	cr_assert_eq(uf_bdev_drain(b), 0);
	cr_assert_eq(batch.nr_done, 0,
		     "%s: the good request of a refused batch completed",
		     what);
	cr_assert_eq(bad_batch.nr_done, 0, "%s: the bad request completed",
		     what);
	free(buf);
}

static void misaligned(const char *engine, enum tu_kind kind)
{
	struct uf_io_req req;
	struct iovec iov[2];
	uint8_t *buf;
	struct uf_bdev *b;

	(void)engine;
	tu_dev(kind, TU_DEV_SIZE);
	tu_raw_fill(tu.td.path, 0, GUARD_LEN, 5);
	b = open_any(0);
	buf = tu_alloc(4 * TU_PAGE);
	tu_fill(buf, 4 * TU_PAGE, 0, 77);

	/* buffer, offset, length, each off by 100 bytes */
	cr_assert_eq(uf_bdev_pwrite(b, buf + 100, TU_PAGE, 0), -EINVAL);
	cr_assert_eq(uf_bdev_pwrite(b, buf, TU_PAGE, 100), -EINVAL);
	cr_assert_eq(uf_bdev_pwrite(b, buf, TU_PAGE + 100, 0), -EINVAL);
	cr_assert_eq(uf_bdev_pwrite(b, buf, 100, 0), -EINVAL);
	cr_assert_eq(uf_bdev_pread(b, buf + 100, TU_PAGE, 0), -EINVAL);
	cr_assert_eq(uf_bdev_pread(b, buf, TU_PAGE, 100), -EINVAL);
	cr_assert_eq(uf_bdev_pread(b, buf, TU_PAGE + 100, 0), -EINVAL);
	/* 512 is misaligned on a 4096-byte loop device */
	if (kind == TU_LOOP) {
		cr_assert_eq(uf_bdev_pwrite(b, buf, TU_PAGE, 512), -EINVAL);
		cr_assert_eq(uf_bdev_pwrite(b, buf + 512, TU_PAGE, 0),
			     -EINVAL);
		cr_assert_eq(uf_bdev_pwrite(b, buf, 512, 0), -EINVAL);
	}

	/* a misaligned second segment of a vector */
	iov[0].iov_base = buf;
	iov[0].iov_len = TU_PAGE;
	iov[1].iov_base = buf + 2 * TU_PAGE + 100;
	iov[1].iov_len = TU_PAGE;
	cr_assert_eq(uf_bdev_rw(b, UF_IO_WRITE, 0, iov, 2), -EINVAL);
	iov[1].iov_base = buf + 2 * TU_PAGE;
	iov[1].iov_len = 100;
	cr_assert_eq(uf_bdev_rw(b, UF_IO_WRITE, 0, iov, 2), -EINVAL);
	iov[1].iov_len = 0;
	cr_assert_eq(uf_bdev_rw(b, UF_IO_WRITE, 0, iov, 2), -EINVAL);
	iov[1].iov_base = NULL;
	iov[1].iov_len = TU_PAGE;
	cr_assert_eq(uf_bdev_rw(b, UF_IO_WRITE, 0, iov, 2), -EINVAL);

	/* empty iovec, no iovec, NULL arguments */
	cr_assert_eq(uf_bdev_rw(b, UF_IO_WRITE, 0, iov, 0), -EINVAL);
	cr_assert_eq(uf_bdev_rw(b, UF_IO_WRITE, 0, NULL, 1), -EINVAL);
	cr_assert_eq(uf_bdev_submit(b, NULL, 1), -EINVAL);

	/* one bad request sinks its whole batch */
	iov[0].iov_base = buf + 100;
	iov[0].iov_len = TU_PAGE;
	memset(&req, 0, sizeof(req));
	req.op = UF_IO_WRITE;
	req.offset = TU_PAGE;
	req.iov = iov;
	req.nr_iov = 1;
	req.end_io = tu_end_io;
	batch_refused(b, &req, 8 * TU_PAGE, -EINVAL, "misaligned buffer");
	iov[0].iov_base = buf;
	req.offset = TU_PAGE + 100;
	batch_refused(b, &req, 8 * TU_PAGE, -EINVAL, "misaligned offset");
	req.offset = TU_PAGE;
	req.end_io = NULL;
	batch_refused(b, &req, 8 * TU_PAGE, -EINVAL, "no end_io");

	free(buf);
	cr_assert_eq(uf_bdev_close(tu.bdev), 0);
	tu.bdev = NULL;
	tu_raw_expect(tu.td.path, 0, GUARD_LEN, 5,
		      "after refused misaligned requests");
}

Test(blkdev, misaligned_is_einval_loop, .fini = tu_fini)
{
	misaligned(NULL, TU_LOOP);
}

Test(blkdev, misaligned_is_einval_file, .fini = tu_fini)
{
	misaligned(NULL, TU_FILE);
}

static void out_of_range(enum tu_kind kind)
{
	const uint64_t end = TU_DEV_SIZE;
	struct uf_io_req req;
	struct iovec iov;
	struct uf_bdev *b;
	uint8_t *buf;

	tu_dev(kind, TU_DEV_SIZE);
	tu_raw_fill(tu.td.path, end - GUARD_LEN, GUARD_LEN, 6);
	b = open_any(0);
	buf = tu_alloc(4 * TU_PAGE);
	tu_fill(buf, 4 * TU_PAGE, 0, 88);

	/* straddling the end, at the end, beyond it, wrapping around */
	cr_assert_eq(uf_bdev_pwrite(b, buf, 2 * TU_PAGE, end - TU_PAGE),
		     -ERANGE);
	cr_assert_eq(uf_bdev_pwrite(b, buf, 4 * TU_PAGE, end - 3 * TU_PAGE),
		     -ERANGE);
	cr_assert_eq(uf_bdev_pwrite(b, buf, TU_PAGE, end), -ERANGE);
	cr_assert_eq(uf_bdev_pwrite(b, buf, TU_PAGE, end + TU_PAGE), -ERANGE);
	cr_assert_eq(uf_bdev_pwrite(b, buf, 2 * TU_PAGE,
				    UINT64_MAX - TU_PAGE + 1), -ERANGE);
	cr_assert_eq(uf_bdev_pread(b, buf, 2 * TU_PAGE, end - TU_PAGE),
		     -ERANGE);
	cr_assert_eq(uf_bdev_pread(b, buf, TU_PAGE, end), -ERANGE);

	iov.iov_base = buf;
	iov.iov_len = 2 * TU_PAGE;
	memset(&req, 0, sizeof(req));
	req.op = UF_IO_WRITE;
	req.offset = end - TU_PAGE;
	req.iov = &iov;
	req.nr_iov = 1;
	req.end_io = tu_end_io;
	batch_refused(b, &req, end - 8 * TU_PAGE, -ERANGE, "past the end");

	/* the last block itself is fine (reading only) */
	cr_assert_eq(uf_bdev_pread(b, buf, TU_PAGE, end - TU_PAGE), TU_PAGE);
	cr_assert_eq(tu_check(buf, TU_PAGE, end - TU_PAGE, 6), -1);

	free(buf);
	cr_assert_eq(uf_bdev_close(tu.bdev), 0);
	tu.bdev = NULL;
	tu_raw_expect(tu.td.path, end - GUARD_LEN, GUARD_LEN, 6,
		      "after refused out-of-range requests");
}

Test(blkdev, out_of_range_is_erange_loop, .fini = tu_fini)
{
	out_of_range(TU_LOOP);
}

Test(blkdev, out_of_range_is_erange_file, .fini = tu_fini)
{
	out_of_range(TU_FILE);
}

Test(blkdev, closed_handle_is_ebadf, .fini = tu_fini)
{
	static uint64_t never_opened[1024];
	struct uf_bdev *fake = (struct uf_bdev *)never_opened;
	struct uf_io_shape shape = { 0 };
	struct uf_io_req *r;
	struct tu_batch batch;
	struct uf_bdev *b;
	struct iovec iov;
	struct tu_io io;
	unsigned int lbs;
	size_t len = TU_PAGE;
	uint64_t size;
	void *buf;
	int i;

	tu_dev(TU_FILE, TU_DEV_SIZE);
	b = open_any(UF_BDEV_SHAPED);
	cr_assert_eq(uf_bdev_close(b), 0);
	tu.bdev = NULL;

	buf = tu_alloc(TU_PAGE);
	iov.iov_base = buf;
	iov.iov_len = TU_PAGE;
	tu_batch_init(&batch);
	tu_io_init(&io, &batch, UF_IO_WRITE, 0, &buf, &len, 1);
	r = &io.req;

	for (i = 0; i < 3; i++) {
		struct uf_bdev *h = i == 0 ? b : i == 1 ? NULL : fake;

		cr_assert_eq(uf_bdev_close(h), -EBADF, "handle %d", i);
		cr_assert_eq(uf_bdev_submit(h, &r, 1), -EBADF, "handle %d",
			     i);
		cr_assert_eq(uf_bdev_pwrite(h, buf, TU_PAGE, 0), -EBADF);
		cr_assert_eq(uf_bdev_pread(h, buf, TU_PAGE, 0), -EBADF);
		cr_assert_eq(uf_bdev_rw(h, UF_IO_READ, 0, &iov, 1), -EBADF);
		cr_assert_eq(uf_bdev_flush(h), -EBADF);
		cr_assert_eq(uf_bdev_drain(h), -EBADF);
		cr_assert_eq(uf_bdev_size(h, &size), -EBADF);
		cr_assert_eq(uf_bdev_block_size(h, &lbs), -EBADF);
		cr_assert_eq(uf_bdev_set_shape(h, &shape), -EBADF);
		cr_assert_eq(uf_bdev_stall(h, 10), -EBADF);
		cr_assert_null(uf_bdev_engine_name(h));
		cr_assert_null(uf_bdev_path(h));
		cr_assert(!uf_bdev_is_blockdev(h));
	}
	cr_assert_eq(batch.nr_done, 0, "a request to a closed handle ran");
	free(buf);
}

Test(blkdev, properties, .fini = tu_fini)
{
	unsigned int lbs;
	uint64_t size;

	tu_dev(TU_LOOP, TU_DEV_SIZE);
	open_any(0);
	cr_assert(uf_bdev_is_blockdev(tu.bdev));
	cr_assert_eq(uf_bdev_size(tu.bdev, &size), 0);
	cr_assert_eq(size, TU_DEV_SIZE);
	cr_assert_eq(uf_bdev_block_size(tu.bdev, &lbs), 0);
	cr_assert_eq(lbs, 4096);
	cr_assert_str_eq(uf_bdev_path(tu.bdev), tu.td.path);
	cr_assert_not_null(uf_bdev_engine_name(tu.bdev));
	cr_assert_not_null(uf_io_engine_find(uf_bdev_engine_name(tu.bdev)));
	cr_assert_eq(uf_bdev_size(tu.bdev, NULL), -EINVAL);
	cr_assert_eq(uf_bdev_block_size(tu.bdev, NULL), -EINVAL);
}

/*
 * A block device closed by uflush can be opened again at once, by every
 * engine: io_uring used to keep the device claimed (O_EXCL) for tens of
 * milliseconds after close, while the kernel tore its ring and registered
 * file down in the background.
 */
static void reopen_at_once(const char *engine)
{
	int i, ret;

	tu_dev(TU_LOOP, TU_DEV_SIZE);
	for (i = 0; i < 20; i++) {
		tu_open(engine, 8, 0, NULL);
		cr_assert_eq(uf_bdev_close(tu.bdev), 0);
		tu.bdev = NULL;
		ret = try_open(tu.td.path, UF_BDEV_NO_FALLBACK);
		cr_assert_eq(ret, 0, "%s: reopen %d right after close: %s",
			     engine, i, strerror(-ret));
	}
}

Test(blkdev, reopen_right_after_close_io_uring, .fini = tu_fini)
{
	reopen_at_once("io_uring");
}

Test(blkdev, reopen_right_after_close_libaio, .fini = tu_fini)
{
	reopen_at_once("libaio");
}
