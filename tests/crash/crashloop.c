// SPDX-License-Identifier: MIT
/*
 * tests/crash/crashloop.c - kill -9 at random moments; fsynced data must be
 * on the device.
 *
 * Each iteration forks a child that opens a cache on one scratch loop
 * device (the same device every time, a new cache every time) and writes
 * until killed: uf_pwrite at any alignment and length, and the page API
 * (uf_page_get(WRITE[|NOREAD]), change part of the page, set_dirty, put),
 * with uf_fsync, uf_fdatasync and uf_sync between.  Before every write the
 * child tells the parent over a pipe what it is about to write (device
 * range and version; the bytes are a function of both), and after every
 * successful fsync/sync it says which versions that made durable, before
 * going on.  The parent SIGKILLs the child at a random moment: after a
 * random delay, right after an acknowledgement, during a big write, or
 * during an fsync.  Then it reads the raw device (O_DIRECT) and checks
 * every page against the writes it was told of.  Most children cap
 * the device's bandwidth (UF_DEV_SHAPED), so that requests wait in the
 * process and a kill loses them: an fsync that returned before its writes
 * reached the device is then caught.
 *
 * The rule checked, per 4 KiB page: uflush writes a page under its lock
 * and never changes a page under writeback, so what is on the device is
 * the page after some prefix of the writes to it, in order.  That prefix
 * must include every acknowledged write (older content is a lost fsync)
 * and may include any later ones (written back before the kill, or not).
 * Pages nobody wrote must be unchanged.
 *
 *   uflush-crashloop [-n ITERATIONS] [-s SEED] [-v]
 *
 * Needs root (loop device); without one it uses a plain file and says so.
 * With --sim it runs the same workload over a sim device instead, with
 * power cuts in place of kills (crashloop_sim.c).
 * Exit status 0 when every kill point passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "io/testdev.h"
#include "tests/crash/crashloop.h"

#define ALL_FILES	0xff

/* What the child says; small enough for one atomic pipe write. */
enum { M_READY = 'R', M_WRITE = 'W', M_FSYNC = 'F', M_ACK = 'A',
       M_ERROR = 'E' };

struct msg {
	uint8_t type;
	uint8_t file;		/* ALL_FILES for uf_sync */
	uint16_t op;		/* M_ERROR: which call (a letter) */
	uint32_t ver;		/* M_WRITE: its version; M_ACK: all below */
	uint64_t off;		/* M_WRITE: device offset */
	uint32_t len;
	int32_t err;
};

static bool verbose;

const char *const policies[] = {
	"linux-3.2", "linux-3.1", "kara-v4.2", "wu-riw", "mainline",
};
#define NR_POLICIES (sizeof(policies) / sizeof(policies[0]))
const size_t nr_policies = NR_POLICIES;

/* ------------------------------------------------------------------ */
/* Shared by both sides                                                */

uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}

/* The byte a write of version ver puts at device offset off. */
static uint8_t gen(uint64_t off, uint32_t ver)
{
	uint64_t x = (off >> 3) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)ver * 0xc2b2ae3d27d4eb4full;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint8_t)(x >> ((off & 7) * 8));
}

void gen_fill(uint8_t *buf, uint64_t off, size_t len, uint32_t ver)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = gen(off + i, ver);
}

/* ------------------------------------------------------------------ */
/* Child                                                               */

static int child_fd;

static void say(const struct msg *m)
{
	if (write(child_fd, m, sizeof(*m)) != sizeof(*m))
		_exit(3);
}

static void __attribute__((noreturn)) child_fail(char op, long err)
{
	struct msg m = { .type = M_ERROR, .op = (uint16_t)op,
			 .err = (int32_t)err };

	say(&m);
	_exit(1);
}

static void drop_log(void *priv, int level, const char *msg)
{
	(void)priv;
	if (level <= 3)
		fprintf(stderr, "crashloop child: uflush: %s\n", msg);
}

static void child_pwrite(struct uf_file *f, int fi, uint64_t *rng,
			 uint8_t *buf, uint32_t *ver)
{
	uint64_t off = rng_below(rng, FILE_SIZE);
	size_t len;
	struct msg m = { .type = M_WRITE, .file = (uint8_t)fi };
	ssize_t ret;

	if (rng_below(rng, 10) < 7)
		len = 1 + rng_below(rng, 16 << 10);
	else
		len = BIG_WRITE + rng_below(rng, MAX_WRITE - BIG_WRITE);
	if (len > FILE_SIZE - off)
		len = FILE_SIZE - off;
	m.ver = *ver;
	m.off = (uint64_t)fi * FILE_SIZE + off;
	m.len = (uint32_t)len;
	gen_fill(buf, m.off, len, m.ver);
	say(&m);
	ret = uf_pwrite(f, buf, len, off);
	if (ret != (ssize_t)len)
		child_fail('w', ret);
	(*ver)++;
}

static void child_page(struct uf_file *f, int fi, uint64_t *rng,
		       uint32_t *ver)
{
	unsigned long index = (unsigned long)rng_below(rng, FILE_PAGES);
	bool noread = rng_below(rng, 4) == 0;
	struct msg m = { .type = M_WRITE, .file = (uint8_t)fi };
	struct uf_page *p;
	uint32_t a = 0, b = PG;
	uint8_t *data;
	int ret;

	ret = uf_page_get(f, index, UF_PAGE_WRITE |
			  (noread ? UF_PAGE_NOREAD : 0), &p);
	if (ret)
		child_fail('g', ret);
	data = uf_page_data(p);
	if (!data)
		child_fail('d', -EFAULT);
	/* a NOREAD miss is zeros, not the file: overwrite it all */
	if (!noread) {
		a = (uint32_t)rng_below(rng, PG);
		b = a + 1 + (uint32_t)rng_below(rng, PG - a);
	}
	m.ver = *ver;
	m.off = (uint64_t)fi * FILE_SIZE + (uint64_t)index * PG + a;
	m.len = b - a;
	say(&m);
	gen_fill(data + a, m.off, m.len, m.ver);
	ret = uf_page_set_dirty(p);
	if (ret)
		child_fail('s', ret);
	ret = uf_page_put(p);
	if (ret)
		child_fail('p', ret);
	(*ver)++;
}

static void child_sync(struct uf_cache *c, struct uf_file **files, int fi,
		       int kind, uint32_t ver)
{
	struct msg m = { .type = M_FSYNC, .file = (uint8_t)fi };
	int ret;

	if (kind == 2)
		m.file = ALL_FILES;
	say(&m);
	if (kind == 0)
		ret = uf_fsync(files[fi]);
	else if (kind == 1)
		ret = uf_fdatasync(files[fi]);
	else
		ret = uf_sync(c);
	if (ret)
		child_fail("fdS"[kind], ret);
	/* everything below ver is durable: say so before going on */
	m.type = M_ACK;
	m.ver = ver;
	say(&m);
}

static void __attribute__((noreturn)) child_main(const char *path,
						 uint64_t seed, int fd)
{
	struct uf_cache_config cfg;
	struct uf_cache *c;
	struct uf_dev *d;
	struct uf_file *files[NFILES];
	struct msg m = { .type = M_READY };
	struct uf_dev_config dcfg = { .engine = NULL };
	struct uf_io_shape shape = { .bw_bytes_per_sec = 0 };
	bool shaped;
	uint64_t rng = seed;
	uint32_t ver = 1;
	uint8_t *buf;
	int i, ret;

	child_fd = fd;
	uf_set_log_fn(drop_log, NULL);
	if (posix_memalign((void **)&buf, PG, MAX_WRITE))
		child_fail('m', -ENOMEM);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = 256 + rng_below(&rng, 768);
	cfg.policy = policies[rng_below(&rng, NR_POLICIES)];
	/* write back early and often: kills then land mid-writeback too */
	cfg.dirty_expire_centisecs = 5 + (unsigned int)rng_below(&rng, 50);
	cfg.dirty_writeback_centisecs = 5 + (unsigned int)rng_below(&rng, 20);
	/*
	 * Two children in three get a bandwidth cap: the shaping engine then
	 * holds requests in this process, where a kill loses them, as a
	 * crash loses what a disk never got.  Without it every request is
	 * in the kernel at once and completes after the kill anyway.
	 */
	shaped = rng_below(&rng, 3) != 0;
	if (shaped) {
		dcfg.flags = UF_DEV_SHAPED;
		shape.bw_bytes_per_sec = (2 + rng_below(&rng, 32)) << 20;
	}
	ret = uf_cache_open(&cfg, &c);
	if (ret)
		child_fail('c', ret);
	/* the last child's io_uring may still hold the device a moment */
	for (i = 0; i < 500; i++) {
		ret = uf_dev_open(c, path, &dcfg, &d);
		if (ret != -EBUSY)
			break;
		usleep(10000);
	}
	if (ret)
		child_fail('o', ret);
	if (shaped) {
		ret = uf_dev_set_shape(d, &shape);
		if (ret)
			child_fail('h', ret);
	}
	for (i = 0; i < NFILES; i++) {
		ret = uf_file_open(d, (uint64_t)i + 1, (uint64_t)i * FILE_SIZE,
				   FILE_SIZE, NULL, NULL, &files[i]);
		if (ret)
			child_fail('f', ret);
	}
	say(&m);
	for (;;) {
		int fi = (int)rng_below(&rng, NFILES);
		uint64_t r = rng_below(&rng, 100);

		if (r < 45)
			child_pwrite(files[fi], fi, &rng, buf, &ver);
		else if (r < 75)
			child_page(files[fi], fi, &rng, &ver);
		else if (r < 86)
			child_sync(c, files, fi, 0, ver);
		else if (r < 96)
			child_sync(c, files, fi, 1, ver);
		else
			child_sync(c, files, fi, 2, ver);
	}
}

/* ------------------------------------------------------------------ */
/* Parent                                                              */

enum kill_mode { K_DELAY, K_AFTER_ACK, K_BIG_WRITE, K_IN_FSYNC, NR_MODES };
static const char *const mode_names[] = {
	"random delay", "right after an ack", "during a big write",
	"during an fsync",
};

struct iter {
	struct msg *w;		/* the writes announced, in order */
	size_t nr_w, cap_w;
	uint32_t acked[NFILES];	/* versions below are durable */
	unsigned int nr_acks, nr_fsyncs;
	bool ready, error;
	struct msg err;
};

static uint8_t *base;		/* the device as the last check left it */
static uint8_t *raw;		/* the device now */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void take(struct iter *it, const struct msg *m)
{
	unsigned int f;

	switch (m->type) {
	case M_READY:
		it->ready = true;
		break;
	case M_WRITE:
		if (it->nr_w == it->cap_w) {
			it->cap_w = it->cap_w ? 2 * it->cap_w : 1024;
			it->w = realloc(it->w, it->cap_w * sizeof(*it->w));
			if (!it->w) {
				perror("crashloop: realloc");
				exit(2);
			}
		}
		it->w[it->nr_w++] = *m;
		break;
	case M_FSYNC:
		it->nr_fsyncs++;
		break;
	case M_ACK:
		it->nr_acks++;
		for (f = 0; f < NFILES; f++)
			if ((m->file == ALL_FILES || m->file == f) &&
			    m->ver > it->acked[f])
				it->acked[f] = m->ver;
		break;
	case M_ERROR:
		it->error = true;
		it->err = *m;
		break;
	}
}

/* Read whole messages; false at end of file. */
static bool drain(int fd, struct iter *it, struct msg *last, size_t *nr)
{
	static uint8_t pend[sizeof(struct msg) * 256];
	static size_t npend;
	ssize_t n = read(fd, pend + npend, sizeof(pend) - npend);
	size_t i;

	*nr = 0;
	if (n <= 0) {
		npend = 0;
		return false;
	}
	npend += (size_t)n;
	for (i = 0; i + sizeof(struct msg) <= npend; i += sizeof(struct msg)) {
		memcpy(last, pend + i, sizeof(*last));
		take(it, last);
		(*nr)++;
	}
	memmove(pend, pend + i, npend - i);
	npend -= i;
	return true;
}

static bool triggers(enum kill_mode mode, const struct msg *m)
{
	switch (mode) {
	case K_AFTER_ACK:
		return m->type == M_ACK;
	case K_BIG_WRITE:
		return m->type == M_WRITE && m->len >= BIG_WRITE;
	case K_IN_FSYNC:
		return m->type == M_FSYNC;
	default:
		return false;
	}
}

/*
 * Run the child until the kill point; returns what was said.  The kill
 * comes at the nth trigger (plus a short random delay for "during"
 * kinds), or after a random delay, or at the latest after 2 s.
 */
static void run_child(int fd, pid_t pid, enum kill_mode mode, uint64_t *rng,
		      struct iter *it)
{
	unsigned int nth = 1 + (unsigned int)rng_below(rng, 6), seen = 0;
	double start = 0, deadline = now_ms() + 30000, kill_at = -1;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct msg last;
	size_t nr;

	for (;;) {
		double t = now_ms();
		int timeout;

		if (kill_at < 0 && t >= deadline)
			kill_at = t;
		if (kill_at >= 0 && t >= kill_at)
			break;
		timeout = (int)((kill_at >= 0 ? kill_at : deadline) - t) + 1;
		if (poll(&pfd, 1, timeout) <= 0)
			continue;
		if (!drain(fd, it, &last, &nr))
			break;	/* the child is gone by itself */
		if (it->error)
			break;
		if (it->ready && !start) {
			start = now_ms();
			deadline = start + 2000;
			if (mode == K_DELAY)
				kill_at = start + (double)rng_below(rng, 400);
		}
		/* any message of the batch could be the trigger: use the
		 * last one, close enough to "right after" */
		if (kill_at < 0 && nr && triggers(mode, &last) &&
		    ++seen >= nth) {
			kill_at = now_ms();
			if (mode != K_AFTER_ACK)
				kill_at += (double)rng_below(rng, 4);
		}
	}
	kill(pid, SIGKILL);
	/* what the child said before it died counts too */
	while (drain(fd, it, &last, &nr))
		;
}

/* Open the device once the dead child's I/O has let go of it. */
static int open_idle(const struct uf_testdev *td)
{
	int i, fd = -1;

	for (i = 0; i < 1000; i++) {
		fd = open(td->path, O_RDONLY | O_DIRECT | O_CLOEXEC |
			  (td->is_loop ? O_EXCL : 0));
		if (fd >= 0 || errno != EBUSY)
			break;
		usleep(10000);
	}
	if (fd >= 0 && !td->is_loop)
		usleep(100000);	/* no O_EXCL on a file: just wait a bit */
	return fd;
}

static int read_dev(const struct uf_testdev *td)
{
	int fd = open_idle(td);
	uint64_t done = 0;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "crashloop: open %s: %s\n", td->path,
			strerror(errno));
		return -1;
	}
	while (done < DEV_SIZE) {
		n = pread(fd, raw + done, DEV_SIZE - done, (off_t)done);
		if (n <= 0) {
			fprintf(stderr, "crashloop: read %s: %s\n", td->path,
				n < 0 ? strerror(errno) : "short");
			close(fd);
			return -1;
		}
		done += (uint64_t)n;
	}
	close(fd);
	return 0;
}

/* Apply the part of write w that falls in page p to buf (page p). */
static void apply(uint8_t *buf, uint64_t p, const struct msg *w)
{
	uint64_t ps = p * PG, pe = ps + PG;
	uint64_t s = w->off > ps ? w->off : ps;
	uint64_t e = w->off + w->len < pe ? w->off + w->len : pe;

	if (s < e)
		gen_fill(buf + (s - ps), s, e - s, w->ver);
}

static bool touches(const struct msg *w, uint64_t p)
{
	return w->off < (p + 1) * PG && w->off + w->len > p * PG;
}

/* One page: the device must show a prefix of its writes that holds every
 * acknowledged one.  Returns false (and says why) if not. */
static bool check_page(const struct iter *it, uint64_t p, unsigned int iter)
{
	static uint8_t cur[PG], acked_state[PG];
	unsigned int f = (unsigned int)(p / FILE_PAGES);
	const uint8_t *dev = raw + p * PG;
	size_t i, n = 0, nacked = 0, j;
	bool any = false;

	memcpy(cur, base + p * PG, PG);
	for (i = 0; i < it->nr_w; i++) {
		if (!touches(&it->w[i], p))
			continue;
		n++;
		if (it->w[i].ver < it->acked[f])
			nacked = n;
	}
	if (!n)
		return !memcmp(dev, cur, PG) || (fprintf(stderr,
			"crashloop: iteration %u: page %llu (file %u) changed though nobody wrote it\n",
			iter, (unsigned long long)p, f), false);
	j = 0;
	if (nacked == 0) {
		memcpy(acked_state, cur, PG);
		any = !memcmp(dev, cur, PG);
	}
	for (i = 0; i < it->nr_w && !any; i++) {
		if (!touches(&it->w[i], p))
			continue;
		apply(cur, p, &it->w[i]);
		j++;
		if (j == nacked)
			memcpy(acked_state, cur, PG);
		if (j >= nacked && !memcmp(dev, cur, PG))
			any = true;
	}
	if (any)
		return true;
	for (i = 0; i < PG && dev[i] == acked_state[i]; i++)
		;
	fprintf(stderr,
		"crashloop: iteration %u: page %llu (file %u, device offset %llu): not the page after any prefix of its %zu writes that holds the %zu acknowledged (acked below version %u); first byte off the acknowledged state at +%zu: 0x%02x, acknowledged 0x%02x\n",
		iter, (unsigned long long)p, f,
		(unsigned long long)(p * PG), n, nacked, it->acked[f], i,
		i < PG ? dev[i] : 0, i < PG ? acked_state[i] : 0);
	return false;
}

static bool check(const struct iter *it, unsigned int iter)
{
	uint64_t p;
	bool ok = true;

	for (p = 0; p < DEV_PAGES; p++)
		if (!check_page(it, p, iter))
			ok = false;
	return ok;
}

static void usage(void)
{
	fprintf(stderr, "usage: uflush-crashloop [-n ITERATIONS] [-s SEED] [-v]\n"
		"       uflush-crashloop --sim [-n ITERATIONS] [-s SEED] [--seed N] [--cut MODE] [--twice] [--flusher] [--world] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int iters = 150, passed = 0, failed = 0, i;
	unsigned int by_mode[NR_MODES] = { 0 };
	uint64_t seed = (uint64_t)time(NULL), rng;
	unsigned long long writes = 0, acks = 0;
	struct uf_testdev td;
	double t0 = now_ms();
	int opt, ret;

	for (i = 1; i < (unsigned int)argc; i++)
		if (!strcmp(argv[i], "--sim"))
			return crashloop_sim_main(argc, argv);
	while ((opt = getopt(argc, argv, "n:s:v")) != -1) {
		switch (opt) {
		case 'n':
			iters = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			usage();
		}
	}
	rng = seed;
	printf("crashloop: %u iterations, seed %llu\n", iters,
	       (unsigned long long)seed);
	ret = uf_testdev_create(DEV_SIZE, 0, &td);
	if (ret) {
		fprintf(stderr, "crashloop: cannot make a scratch device: %s\n",
			strerror(-ret));
		return 2;
	}
	if (!td.is_loop)
		printf("crashloop: no loop device (%s): using %s\n",
		       td.why_not_loop, td.path);
	if (posix_memalign((void **)&base, PG, DEV_SIZE) ||
	    posix_memalign((void **)&raw, PG, DEV_SIZE)) {
		uf_testdev_destroy(&td);
		return 2;
	}
	memset(base, 0, DEV_SIZE);	/* a new sparse backing file */
	signal(SIGPIPE, SIG_IGN);

	for (i = 0; i < iters; i++) {
		enum kill_mode mode = (enum kill_mode)rng_below(&rng, NR_MODES);
		uint64_t child_seed = rng_next(&rng);
		struct iter it = { 0 };
		int fds[2], status;
		pid_t pid;
		bool ok;

		if (pipe2(fds, O_CLOEXEC)) {
			perror("crashloop: pipe");
			break;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			perror("crashloop: fork");
			break;
		}
		if (pid == 0) {
			close(fds[0]);
			child_main(td.path, child_seed, fds[1]);
		}
		close(fds[1]);
		run_child(fds[0], pid, mode, &rng, &it);
		close(fds[0]);
		waitpid(pid, &status, 0);

		ok = !it.error && WIFSIGNALED(status) &&
		     WTERMSIG(status) == SIGKILL;
		if (it.error)
			fprintf(stderr,
				"crashloop: iteration %u: the child's call '%c' failed: %s\n",
				i, it.err.op, strerror(-it.err.err));
		else if (!ok)
			fprintf(stderr,
				"crashloop: iteration %u: the child ended by itself (status 0x%x)\n",
				i, status);
		if (read_dev(&td)) {
			failed++;
			break;
		}
		if (!check(&it, i))
			ok = false;
		memcpy(base, raw, DEV_SIZE);
		writes += it.nr_w;
		acks += it.nr_acks;
		by_mode[mode]++;
		if (verbose || !ok)
			printf("crashloop: iteration %u (child seed %llu): killed %s after %zu writes, %u fsyncs, %u acks: %s\n",
			       i, (unsigned long long)child_seed,
			       mode_names[mode], it.nr_w, it.nr_fsyncs,
			       it.nr_acks, ok ? "ok" : "FAILED");
		free(it.w);
		if (ok)
			passed++;
		else
			failed++;
	}
	uf_testdev_destroy(&td);
	printf("crashloop: kill points: %u %s, %u %s, %u %s, %u %s; %llu writes, %llu acks, %.1f s\n",
	       by_mode[0], mode_names[0], by_mode[1], mode_names[1],
	       by_mode[2], mode_names[2], by_mode[3], mode_names[3],
	       writes, acks, (now_ms() - t0) / 1e3);
	printf("crashloop: %u kill points survived, %u failed\n", passed,
	       failed);
	printf("%u passed, %u failed\n", passed, failed);
	return failed || passed < iters ? 1 : 0;
}
