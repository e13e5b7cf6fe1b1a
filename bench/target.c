// SPDX-License-Identifier: MIT
/*
 * bench/target.c - the device under test, opening it again and again, and
 * the machine a scenario runs on (bench/harness.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "uflush.h"
#include "bench.h"
#include "io/io.h"

#define BENCH_REOPEN_TIMEOUT_NS	5000000000ull

/* The Makefile passes both; a build without it says so. */
#ifndef UF_BENCH_VERSION
#define UF_BENCH_VERSION "unknown"
#endif
#ifndef UF_BENCH_COMMIT
#define UF_BENCH_COMMIT "unknown"
#endif

/* ------------------------------------------------------------------ */
/* The machine                                                         */

void bench_kernel_version(char *buf, size_t len)
{
	struct utsname u;

	if (uname(&u))
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%s %s %s", u.sysname, u.release,
			 u.machine);
}

static int read_sysfs(const char *path, char *buf, size_t len);

/* "model name" of the first CPU in /proc/cpuinfo (or the arm "Hardware"). */
static void cpu_model(char *buf, size_t len)
{
	char line[512], *v;
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) && strncmp(line, "Hardware", 8))
			continue;
		v = strchr(line, ':');
		if (!v)
			continue;
		v += 1 + (v[1] == ' ');
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		break;
	}
	fclose(f);
}

void bench_machine_json(struct bench_json *j)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	char model[256];
	struct utsname u;
	cpu_set_t set;

	cpu_model(model, sizeof(model));
	bench_json_obj(j, "machine");
	bench_json_str(j, "cpu_model", model);
	bench_json_int(j, "cpus_online", sysconf(_SC_NPROCESSORS_ONLN));
	if (!sched_getaffinity(0, sizeof(set), &set))
		bench_json_int(j, "cpus_usable", CPU_COUNT(&set));
	bench_json_u64(j, "memory_bytes", pages > 0 && psz > 0 ?
		       (uint64_t)pages * (uint64_t)psz : 0);
	bench_json_end(j);
	if (!uname(&u)) {
		bench_json_obj(j, "uname");
		bench_json_str(j, "sysname", u.sysname);
		bench_json_str(j, "nodename", u.nodename);
		bench_json_str(j, "release", u.release);
		bench_json_str(j, "version", u.version);
		bench_json_str(j, "machine", u.machine);
		bench_json_end(j);
	}
	bench_json_obj(j, "uflush");
	bench_json_str(j, "version", UF_BENCH_VERSION);
	bench_json_str(j, "commit", UF_BENCH_COMMIT);
	bench_json_end(j);
}

void bench_plugins_json(struct bench_json *j, const char *spec)
{
	char path[PATH_MAX], hex[65];
	const char *p = spec;
	size_t n;
	int err;

	bench_json_arr(j, "plugins");
	while (p && (p = strstr(p, "plugin=")) != NULL) {
		if (p != spec && p[-1] != ',') {
			p += 7;
			continue;
		}
		p += 7;
		n = strcspn(p, ",");
		snprintf(path, sizeof(path), "%.*s", (int)n, p);
		p += n;
		bench_json_obj(j, NULL);
		bench_json_str(j, "path", path);
		err = bench_sha256_file(path, hex);
		if (err)
			bench_json_str(j, "error", strerror(-err));
		else
			bench_json_str(j, "sha256", hex);
		bench_json_end(j);
	}
	bench_json_end(j);
}

static int read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int bench_loop_info(const char *path, int *dio, char *backing, size_t len)
{
	char sys[PATH_MAX], val[PATH_MAX];
	struct stat st;
	int err;

	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return -ENOTBLK;
	if (major(st.st_rdev) != 7)	/* LOOP_MAJOR */
		return -ENOTBLK;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/dio",
		 major(st.st_rdev), minor(st.st_rdev));
	err = read_sysfs(sys, val, sizeof(val));
	if (err)
		return err;
	*dio = atoi(val);
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(st.st_rdev), minor(st.st_rdev));
	if (read_sysfs(sys, val, sizeof(val)))
		snprintf(val, sizeof(val), "?");
	snprintf(backing, len, "%s", val);
	return 0;
}

void bench_process_cpu(double *cpu, uint64_t *csw)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	if (csw)
		*csw = ru.ru_nvcsw + ru.ru_nivcsw;
}

int bench_for_each_thread(int (*fn)(void *priv, int tid, const char *comm),
			  void *priv)
{
	char path[64], comm[32];
	struct dirent *de;
	int tid, ret = 0;
	DIR *d;
	FILE *f;

	d = opendir("/proc/self/task");
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d)) != NULL) {
		tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
		f = fopen(path, "r");
		if (!f)
			continue;	/* it just ended */
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		ret = fn(priv, tid, comm);
	}
	closedir(d);
	return ret;
}

uint64_t bench_xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

void *bench_random_buffer(size_t len)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	void *buf;
	size_t i;

	if (posix_memalign(&buf, 4096, len))
		return NULL;
	for (i = 0; i < len / 8; i++)
		((uint64_t *)buf)[i] = bench_xorshift64(&rng);
	return buf;
}

/* ------------------------------------------------------------------ */
/* The device under test                                               */

/* Scratch devices still attached: removed at exit whatever happens. */
static struct bench_target *live_targets;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static void remove_live_targets(void)
{
	while (live_targets)
		bench_target_close(live_targets);
}

static void target_link(struct bench_target *t)
{
	static bool registered;

	pthread_mutex_lock(&live_lock);
	if (!registered)
		registered = !atexit(remove_live_targets);
	t->next = live_targets;
	live_targets = t;
	pthread_mutex_unlock(&live_lock);
}

static void target_unlink(struct bench_target *t)
{
	struct bench_target **p;

	pthread_mutex_lock(&live_lock);
	for (p = &live_targets; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
}

static int read_uint(const char *path, unsigned int *v)
{
	char buf[32];
	int err = read_sysfs(path, buf, sizeof(buf));

	if (!err)
		*v = strtoul(buf, NULL, 10);
	return err;
}

/* A block device: its numbers, loop setting and queue limits. */
static void describe_blk(struct bench_target *t, const struct stat *st)
{
	char backing[300], path[96];

	t->is_blk = true;
	t->major = major(st->st_rdev);
	t->minor = minor(st->st_rdev);
	snprintf(path, sizeof(path),
		 "/sys/dev/block/%u:%u/queue/max_sectors_kb", t->major,
		 t->minor);
	read_uint(path, &t->max_sectors_kb);
	if (bench_loop_info(t->path, &t->dio, backing, sizeof(backing))) {
		t->dio = -1;
		snprintf(t->desc, sizeof(t->desc), "block device");
		return;
	}
	snprintf(t->desc, sizeof(t->desc), "loop device over %s, dio=%d%s",
		 backing, t->dio,
		 t->dio == 1 ? " (verified in sysfs)" : " (BUFFERED)");
	if (t->dio != 1)
		bench_err(t->cmd, "warning: %s has dio=0: writes go through the host page cache and the numbers mean little",
			  t->path);
}

static int target_scratch(struct bench_target *t, uint64_t size)
{
	struct stat st;
	int err;

	err = uf_testdev_create(size, 0, &t->td);
	if (err) {
		bench_err(t->cmd, "cannot create a scratch device: %s",
			  strerror(-err));
		return err;
	}
	t->scratch = true;
	t->path = t->td.path;
	t->size = size;
	target_link(t);
	if (t->td.is_loop && !stat(t->path, &st) && S_ISBLK(st.st_mode))
		describe_blk(t, &st);
	else
		snprintf(t->desc, sizeof(t->desc),
			 "plain file opened with O_DIRECT (no loop device: %s)",
			 t->td.why_not_loop);
	return 0;
}

/* Is the sysfs node of mnt (maj:min) below the one of ours (a partition)? */
static bool sysfs_below(const char *mnt, unsigned int major,
			unsigned int minor)
{
	char p[96], ours[PATH_MAX], theirs[PATH_MAX];
	size_t n;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major, minor);
	if (!realpath(p, ours))
		return false;
	snprintf(p, sizeof(p), "/sys/dev/block/%s", mnt);
	if (!realpath(p, theirs))
		return false;
	n = strlen(ours);
	return !strncmp(theirs, ours, n) && theirs[n] == '/';
}

int bench_mounted_at(const char *mountinfo, unsigned int major,
		     unsigned int minor, char *where, size_t len)
{
	char line[4096], devno[32], mnt[PATH_MAX], want[32];
	int found = 0;
	FILE *f;

	f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "r");
	if (!f)
		return -errno;
	snprintf(want, sizeof(want), "%u:%u", major, minor);
	/* id parent maj:min root mount-point ...: the 3rd and 5th fields */
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %31s %*s %4095s", devno, mnt) != 2)
			continue;
		if (!strcmp(devno, want) ||
		    (!mountinfo && sysfs_below(devno, major, minor))) {
			snprintf(where, len, "%s", mnt);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

/*
 * A block device that is mounted, or that another holds open
 * exclusively (a filesystem, md, dm, swap), is refused before any run
 * unless --force: the library would refuse it in the first run anyway.
 */
static int target_check_free(struct bench_target *t, const char *dev,
			     const struct stat *st)
{
	char where[PATH_MAX];
	int fd;

	if (t->force)
		return 0;
	if (bench_mounted_at(NULL, major(st->st_rdev), minor(st->st_rdev),
			     where, sizeof(where)) > 0) {
		bench_err(t->cmd, "%s is mounted on %s (/proc/self/mountinfo): refusing to overwrite it; --force uses it anyway",
			  dev, where);
		return -EBUSY;
	}
	fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 && errno == EBUSY) {
		bench_err(t->cmd, "%s is in use (another holds it open exclusively: md, dm, swap?): refusing; --force uses it anyway",
			  dev);
		return -EBUSY;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

static int target_dev(struct bench_target *t, const char *dev, uint64_t need)
{
	struct stat st;
	int fd, err;

	t->path = dev;
	if (stat(dev, &st)) {
		bench_err(t->cmd, "%s: %s", dev, strerror(errno));
		return -errno;
	}
	if (S_ISBLK(st.st_mode)) {
		err = target_check_free(t, dev, &st);
		if (err)
			return err;
		fd = open(dev, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			t->size = (uint64_t)lseek(fd, 0, SEEK_END);
			close(fd);
		}
		describe_blk(t, &st);
	} else if (S_ISREG(st.st_mode)) {
		t->size = (uint64_t)st.st_size;
		snprintf(t->desc, sizeof(t->desc),
			 "regular file opened with O_DIRECT");
	} else {
		bench_err(t->cmd, "%s: not a block device or a file", dev);
		return -ENODEV;
	}
	if (t->size < need) {
		bench_err(t->cmd, "%s has %" PRIu64 " bytes, need %" PRIu64,
			  dev, t->size, need);
		return -ERANGE;
	}
	if (need)
		bench_err(t->cmd, "warning: writing over the first %" PRIu64 " bytes of %s: their data will be destroyed",
			  need, dev);
	else
		bench_err(t->cmd, "warning: writing over %s: its data will be destroyed",
			  dev);
	return 0;
}

int bench_devs_distinct(const char *cmd, const struct bench_strv *devs)
{
	struct stat a, b;
	unsigned int i, k;

	for (i = 0; i < devs->n; i++)
		for (k = 0; k < i; k++) {
			if (strcmp(devs->v[i], devs->v[k]) &&
			    (stat(devs->v[i], &a) || stat(devs->v[k], &b) ||
			     (S_ISBLK(a.st_mode) ? a.st_rdev != b.st_rdev :
			      a.st_dev != b.st_dev || a.st_ino != b.st_ino)))
				continue;
			bench_err(cmd, "--dev %s and %s are the same device: give each once",
				  devs->v[k], devs->v[i]);
			return -EINVAL;
		}
	return 0;
}

int bench_target_open(struct bench_target *t, const char *cmd,
		      const char *dev, uint64_t size, bool force)
{
	memset(t, 0, sizeof(*t));
	t->cmd = cmd;
	t->dio = -1;
	t->force = force;
	return dev ? target_dev(t, dev, size) : target_scratch(t, size);
}

void bench_target_close(struct bench_target *t)
{
	if (!t->scratch)
		return;
	target_unlink(t);
	uf_testdev_destroy(&t->td);
	t->scratch = false;
}

int bench_target_prefill(const struct bench_target *t, uint64_t range,
			 size_t chunk)
{
	uint64_t off;
	ssize_t n;
	void *buf;
	int fd, err = 0;

	if (posix_memalign(&buf, 4096, chunk))
		return -ENOMEM;
	memset(buf, 0xa5, chunk);
	fd = open(t->path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	for (off = 0; off < range && !bench_stop; off += (uint64_t)n) {
		size_t len = range - off < chunk ? (size_t)(range - off) : chunk;

		n = pwrite(fd, buf, len, (off_t)off);
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
	}
	if (!err && fdatasync(fd))
		err = -errno;
	close(fd);
	free(buf);
	return err;
}

/* Fields i and k of the first seven of the device's sysfs stat. */
static bool target_stat(const struct bench_target *t, unsigned int i,
			uint64_t *vi, unsigned int k, uint64_t *vk)
{
	unsigned long long v[7];
	char path[96];
	FILE *f;
	int n;

	if (!t->is_blk)
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat", t->major,
		 t->minor);
	f = fopen(path, "r");
	if (!f)
		return false;
	/* reads: ios merges sectors ticks; writes: ios merges sectors */
	n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6]);
	fclose(f);
	if (n != 7)
		return false;
	*vi = v[i];
	*vk = v[k];
	return true;
}

bool bench_target_counters(const struct bench_target *t, uint64_t *ios,
			   uint64_t *sectors)
{
	return target_stat(t, 4, ios, 6, sectors);
}

bool bench_target_ios(const struct bench_target *t, uint64_t *reads,
		      uint64_t *writes)
{
	return target_stat(t, 0, reads, 4, writes);
}

void bench_target_print(const struct bench_target *t, const char *extra)
{
	printf("device:  %s: %s%s%s\n", t->path, t->desc, extra ? extra : "",
	       t->scratch ? " (scratch, removed at exit)" : "");
}

/* The disk's model from sysfs (a partition: its disk's), if it says. */
static bool target_model(const struct bench_target *t, char *buf,
			 size_t len)
{
	char p[128];

	if (!t->is_blk)
		return false;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/device/model", t->major,
		 t->minor);
	if (!read_sysfs(p, buf, len) && buf[0])
		return true;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../device/model",
		 t->major, t->minor);
	return !read_sysfs(p, buf, len) && buf[0];
}

void bench_target_json(struct bench_json *j, const struct bench_target *t)
{
	char model[128];

	bench_json_str(j, "path", t->path);
	bench_json_u64(j, "size_bytes", t->size);
	if (target_model(t, model, sizeof(model)))
		bench_json_str(j, "model", model);
	bench_json_bool(j, "scratch", t->scratch);
	bench_json_bool(j, "loop", t->dio >= 0);
	bench_json_int(j, "dio", t->dio);
	bench_json_str(j, "description", t->desc);
	bench_json_u64(j, "max_sectors_kb", t->max_sectors_kb);
	if (t->range)
		bench_json_u64(j, "range_bytes", t->range);
	if (t->lbs)
		bench_json_u64(j, "block_size", t->lbs);
}

/* ------------------------------------------------------------------ */
/* Opening the device again and again                                  */

int bench_open_retry(struct bench_reopen *ro,
		     int (*open_fn)(void *arg), void *arg)
{
	uint64_t give_up = uf_now_ns() + BENCH_REOPEN_TIMEOUT_NS, t0 = 0;
	struct timespec pause = { 0, 5000000 };
	static struct bench_log held = { .prefix = "uflush: ", .end = "\n" };
	int err;

	held.len = 0;
	if (ro->opened)
		uf_set_log_fn(bench_log_keep, &held);
	for (;;) {
		err = open_fn(arg);
		if (err != -EBUSY || !ro->opened || bench_stop ||
		    uf_now_ns() > give_up)
			break;
		if (!t0)
			t0 = uf_now_ns();
		held.len = 0;
		nanosleep(&pause, NULL);
	}
	uf_set_log_fn(NULL, NULL);
	if (err && held.len)
		fputs(held.text, stderr);
	if (t0 && !err) {
		ro->busy_reopens++;
		ro->busy_wait_ns += uf_now_ns() - t0;
	}
	if (!err)
		ro->opened = true;
	return err;
}

struct dev_open_args {
	struct uf_cache *cache;
	const char *path;
	struct uf_dev_config cfg;
	struct uf_dev **dev;
};

static int dev_open_once(void *arg)
{
	struct dev_open_args *a = arg;

	return uf_dev_open(a->cache, a->path, &a->cfg, a->dev);
}

int bench_dev_open(struct bench_reopen *ro, struct uf_cache *cache,
		   const struct bench_target *t, struct uf_dev **dev)
{
	struct dev_open_args a = { cache, t->path, { 0 }, dev };
	int err;

	a.cfg.engine = "io_uring";
	a.cfg.flags = (t->force ? UF_DEV_FORCE : 0) |
		      (t->shaped ? UF_DEV_SHAPED : 0);
	err = bench_open_retry(ro, dev_open_once, &a);
	if (err || !t->shaped)
		return err;
	err = uf_dev_set_shape(*dev, &t->shape);
	if (err) {
		uf_dev_close(*dev);
		*dev = NULL;
	}
	return err;
}

int bench_uflush_run(const struct uf_cache_config *cfg,
		     struct bench_reopen *ro, const struct bench_target *t,
		     uint64_t range, bench_uflush_fn fn, void *priv,
		     char *why, size_t len)
{
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_dev *dev;
	int err, cerr;

	err = uf_cache_open(cfg, &cache);
	if (err) {
		snprintf(why, len, "uf_cache_open: %s", strerror(-err));
		return err;
	}
	err = bench_dev_open(ro, cache, t, &dev);
	if (err) {
		snprintf(why, len, "uf_dev_open %s: %s", t->path,
			 strerror(-err));
		goto out;
	}
	err = uf_file_open(dev, 1, 0, range, NULL, NULL, &file);
	if (err) {
		snprintf(why, len, "uf_file_open: %s", strerror(-err));
		goto out;
	}
	err = fn(priv, cache, dev, file);
	if (err)
		snprintf(why, len, "write/fsync: %s", strerror(-err));
out:
	/* closes the file and the device; everything is clean by now */
	cerr = uf_cache_close(cache);
	if (!err && cerr) {
		snprintf(why, len, "uf_cache_close: %s", strerror(-cerr));
		err = cerr;
	}
	return err;
}

void bench_reopen_print(const struct bench_reopen *ro)
{
	if (ro->busy_reopens)
		printf("%u reopen(s) found the device still held by our own previous handle (-EBUSY:\n"
		       "the kernel tears an io_uring down asynchronously) and waited %.0f ms in all, untimed.\n",
		       ro->busy_reopens, ro->busy_wait_ns / 1e6);
}

/* ------------------------------------------------------------------ */
/* A run's surroundings                                                */

int bench_env_init(struct bench_env *env, const char *cmd, bool want_fio)
{
	int err;

	memset(env, 0, sizeof(*env));
	env->cmd = cmd;
	err = bench_install_signals();
	if (err) {
		bench_err(cmd, "signals: %s", strerror(-err));
		return err;
	}
	bench_kernel_version(env->kernel, sizeof(env->kernel));
	if (!want_fio) {
		snprintf(env->fio_why, sizeof(env->fio_why), "--no-fio given");
		return 0;
	}
	env->have_fio = !fio_find(env->fio_version, sizeof(env->fio_version),
				  env->fio_why, sizeof(env->fio_why));
	if (!env->have_fio)
		bench_err(cmd, "fio baseline missing (%s); printing uflush numbers only",
			  env->fio_why);
	return 0;
}

void bench_env_print(const struct bench_env *env, const char *extra,
		     bool fio)
{
	printf("kernel:  %s%s\n", env->kernel, extra ? extra : "");
	if (!fio)
		return;
	if (env->have_fio)
		printf("fio:     %s (%s)\n", env->fio_version, fio_binary());
	else
		printf("fio:     BASELINE MISSING: %s\n", env->fio_why);
}

static int json_report(const struct bench_report *r,
		       const struct bench_env *env,
		       const struct bench_target *t, const char *path,
		       const void *priv, unsigned int nr)
{
	struct bench_json j;
	unsigned int i;
	int err;

	err = bench_json_create(&j, env->cmd, path);
	if (err)
		return err;
	bench_json_str(&j, "kernel", env->kernel);
	bench_machine_json(&j);
	bench_json_obj(&j, "device");
	bench_target_json(&j, t);
	bench_json_end(&j);
	bench_json_bool(&j, "interrupted", bench_stop);
	r->json_config(&j, priv);
	bench_json_arr(&j, "results");
	for (i = 0; i < nr; i++)
		r->json_case(&j, priv, i);
	bench_json_end(&j);
	return bench_json_finish(&j, env->cmd, path);
}

void bench_fio_json(struct bench_json *j, const struct bench_env *env)
{
	bench_json_obj(j, "fio");
	bench_json_bool(j, "available", env->have_fio);
	bench_json_str(j, "version", env->have_fio ? env->fio_version : "");
	bench_json_str(j, "why_missing", env->have_fio ? "" : env->fio_why);
}

int bench_report(const struct bench_report *r, const struct bench_env *env,
		 const struct bench_target *t, const char *json_path,
		 const void *priv, unsigned int nr)
{
	static struct bench_table table;
	unsigned int i;

	bench_table_init(&table, r->cols, r->nr_cols);
	for (i = 0; i < nr; i++)
		r->row(&table, priv, i);
	if (bench_stop)
		printf("INTERRUPTED: partial results, of the runs completed before the signal\n");
	r->header(priv);
	bench_table_print(&table, stdout);
	r->notes(priv);
	fflush(stdout);
	if (!json_path)
		return 0;
	return json_report(r, env, t, json_path, priv, nr);
}

int bench_exit_code(const char *cmd, int err)
{
	if (bench_stop) {
		bench_err(cmd, "interrupted by %s: the results above are partial",
			  bench_stop == SIGTERM ? "SIGTERM" : "SIGINT");
		return 128 + bench_stop;	/* 130, 143: as a shell says */
	}
	return err ? 1 : 0;
}

int bench_fill_file(struct uf_file *f, uint64_t off, uint64_t len,
		    const void *buf)
{
	uint64_t end = off + len;
	ssize_t n;

	for (; off < end && !bench_stop; off += 1u << 20) {
		n = uf_pwrite(f, buf, 1u << 20, off);
		if (n != 1 << 20)
			return n < 0 ? (int)n : -EIO;
	}
	return 0;
}

int bench_cache_close(struct uf_cache *cache, int err, char *why,
		      size_t len)
{
	int cerr;

	if (!cache)
		return err;
	cerr = uf_cache_close(cache);
	if (!err && cerr) {
		err = cerr;
		snprintf(why, len, "uf_cache_close: %s", strerror(-err));
	}
	return err;
}

int bench_spread_file(struct uf_dev *const *dev, unsigned int nd,
		      unsigned int i, uint64_t fsize, struct uf_file **f,
		      char *why, size_t len)
{
	int err = uf_file_open(dev[i % nd], i + 1, (uint64_t)(i / nd) * fsize,
			       fsize, NULL, NULL, f);

	if (err)
		snprintf(why, len, "uf_file_open: %s", strerror(-err));
	return err;
}
