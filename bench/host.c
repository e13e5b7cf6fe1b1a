// SPDX-License-Identifier: MIT
/*
 * bench/host.c - the host around a device benchmark's runs
 * (bench/harness.h): its dirty limits and a memory cgroup, so that a
 * kernel baseline runs under the same limits as the uflush cache it is
 * compared with; what a run costs in CPU and device requests and what
 * uflush counted in it; what one 4 KiB copy per page costs; and the
 * ratios, targets, table cells and JSON that cache.c and randwrite.c
 * print alike.
 *
 * The host's knobs are global: they are changed only for the length of
 * the baseline run and put back after it, and at exit whatever happened
 * (a SIGINT or SIGTERM stops the run through bench_stop, so exit comes).
 * Only SIGKILL leaves them changed; the saved values are printed first
 * so that they can be put back by hand.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define COPY_PAGE	4096u

/* ------------------------------------------------------------------ */
/* Small files                                                         */

int bench_read_ulong(const char *path, unsigned long *v)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%lu", v);
	fclose(f);
	return n == 1 ? 0 : -EINVAL;
}

static int write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, len) != (ssize_t)len)
		err = -errno ?: -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static int write_ulong(const char *path, unsigned long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu\n", v);
	return write_str(path, buf);
}

/* ------------------------------------------------------------------ */
/* What to undo at exit                                                */

static struct bench_dirty *held_dirty;
static struct bench_memcg *held_memcg;

static void undo_at_exit(void)
{
	while (held_dirty)
		bench_dirty_restore(held_dirty);
	while (held_memcg)
		bench_memcg_destroy(held_memcg);
}

static void undo_register(void)
{
	static bool registered;

	if (!registered)
		registered = !atexit(undo_at_exit);
}

/* Hold x on a list of what exit undoes. */
#define HOLD(head, x) do {						\
	(x)->next = (head);						\
	(head) = (x);							\
	undo_register();						\
} while (0)

#define UNLINK(head, x) do {						\
	__typeof__(x) *p_;						\
									\
	for (p_ = &(head); *p_; p_ = &(*p_)->next) {			\
		if (*p_ == (x)) {					\
			*p_ = (x)->next;				\
			break;						\
		}							\
	}								\
} while (0)

/* ------------------------------------------------------------------ */
/* Dirty limits                                                        */

static void vm_path(const struct bench_dirty *d, const char *knob,
		    char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", d->vm_dir ? d->vm_dir : "/proc/sys/vm",
		 knob);
}

static int vm_read(const struct bench_dirty *d, const char *knob,
		   unsigned long *v)
{
	char path[512];

	vm_path(d, knob, path, sizeof(path));
	return bench_read_ulong(path, v);
}

static int vm_write(const struct bench_dirty *d, const char *knob,
		    unsigned long v)
{
	char path[512];

	vm_path(d, knob, path, sizeof(path));
	return write_ulong(path, v);
}

void bench_dirty_fmt_old(const struct bench_dirty *d, char *buf, size_t len)
{
	snprintf(buf, len,
		 "vm.dirty_ratio %lu, dirty_bytes %lu, dirty_background_ratio %lu, dirty_background_bytes %lu",
		 d->old_ratio, d->old_bytes, d->old_bg_ratio,
		 d->old_bg_bytes);
}

static int dirty_save(struct bench_dirty *d)
{
	static const char *const knobs[] = {
		"dirty_ratio", "dirty_bytes", "dirty_background_ratio",
		"dirty_background_bytes",
	};
	unsigned long *v[] = {
		&d->old_ratio, &d->old_bytes, &d->old_bg_ratio,
		&d->old_bg_bytes,
	};
	unsigned int i;
	int err;

	for (i = 0; i < 4; i++) {
		err = vm_read(d, knobs[i], v[i]);
		if (err) {
			snprintf(d->why, sizeof(d->why),
				 "cannot read vm.%s: %s", knobs[i],
				 strerror(-err));
			return err;
		}
	}
	d->saved = true;
	HOLD(held_dirty, d);
	return 0;
}

int bench_dirty_set(struct bench_dirty *d, uint64_t dirty_bytes,
		    uint64_t bg_bytes)
{
	unsigned long got, got_bg;
	int err;

	d->applied = false;
	d->why[0] = '\0';
	if (!d->saved) {
		err = dirty_save(d);
		if (err)
			return err;
	}
	/* background first: the kernel halves one that is not below */
	err = vm_write(d, "dirty_background_bytes", bg_bytes);
	d->changed |= !err;
	if (!err)
		err = vm_write(d, "dirty_bytes", dirty_bytes);
	if (err) {
		snprintf(d->why, sizeof(d->why),
			 "cannot write vm.dirty_bytes %" PRIu64
			 " / dirty_background_bytes %" PRIu64 ": %s",
			 dirty_bytes, bg_bytes, strerror(-err));
		bench_dirty_restore(d);
		return err;
	}
	if (vm_read(d, "dirty_bytes", &got) ||
	    vm_read(d, "dirty_background_bytes", &got_bg) ||
	    got != dirty_bytes || got_bg != bg_bytes) {
		snprintf(d->why, sizeof(d->why),
			 "vm.dirty_bytes / dirty_background_bytes did not read back as written");
		bench_dirty_restore(d);
		return -EIO;
	}
	d->dirty_bytes = got;
	d->bg_bytes = got_bg;
	d->applied = true;
	return 0;
}

/* One of a pair: the byte value where one was set, else the ratio. */
static int restore_pair(const struct bench_dirty *d, const char *bytes,
			unsigned long old_bytes, const char *ratio,
			unsigned long old_ratio)
{
	return old_bytes ? vm_write(d, bytes, old_bytes) :
			   vm_write(d, ratio, old_ratio);
}

int bench_dirty_restore(struct bench_dirty *d)
{
	char old[256];
	int err;

	if (!d->saved)
		return 0;
	UNLINK(held_dirty, d);
	d->saved = false;
	if (!d->changed)
		return 0;	/* nothing was written: nothing to undo */
	err = restore_pair(d, "dirty_background_bytes", d->old_bg_bytes,
			   "dirty_background_ratio", d->old_bg_ratio);
	if (!err)
		err = restore_pair(d, "dirty_bytes", d->old_bytes,
				   "dirty_ratio", d->old_ratio);
	d->changed = err != 0;	/* still changed if it could not be undone */
	if (err) {
		bench_dirty_fmt_old(d, old, sizeof(old));
		fprintf(stderr,
			"uflush-bench: CANNOT RESTORE the host's dirty limits (%s): they were %s\n",
			strerror(-err), old);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Memory cgroup                                                       */

/*
 * Where a hierarchy is mounted: v2 (fstype cgroup2) or the v1 one with
 * the memory controller.  Its mountpoint and the root it shows.
 */
static bool find_mount(int version, char *mnt, size_t len, char *root,
		       size_t rlen)
{
	char line[1024], r[512], m[512], fs[64], opts[512];
	const char *dash;
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %511s %511s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %*s %511s", fs, opts) != 2)
			continue;
		if (version == 2)
			found = !strcmp(fs, "cgroup2");
		else
			found = !strcmp(fs, "cgroup") &&
				(strstr(opts, ",memory") ||
				 !strncmp(opts, "memory", 6));
		if (found) {
			snprintf(mnt, len, "%s", m);
			snprintf(root, rlen, "%s", r);
		}
	}
	fclose(f);
	return found;
}

/* Our group's path in a hierarchy from /proc/self/cgroup. */
static bool own_group(int version, char *path, size_t len)
{
	char line[1024], *ctl, *p;
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ctl = strchr(line, ':');
		p = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!p)
			continue;
		*p++ = '\0';
		ctl++;
		if (version == 2)
			found = !strcmp(line, "0") && !*ctl;
		else
			found = !strcmp(ctl, "memory") ||
				strstr(ctl, ",memory") ||
				!strncmp(ctl, "memory,", 7);
		if (found)
			snprintf(path, len, "%s", p);
	}
	fclose(f);
	return found;
}

/* The directory of our group in that hierarchy, if it has one. */
static bool group_dir(int version, char *dir, size_t len)
{
	char mnt[512], root[512], path[512];
	const char *rel;
	size_t rl;

	if (!find_mount(version, mnt, sizeof(mnt), root, sizeof(root)) ||
	    !own_group(version, path, sizeof(path)))
		return false;
	rel = path;
	rl = strlen(root);
	if (strcmp(root, "/") && !strncmp(path, root, rl))
		rel = path + rl;
	return snprintf(dir, len, "%s%s", mnt, strcmp(rel, "/") ? rel : "") <
	       (int)len;
}

static bool has_word(const char *path, const char *word)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	bool yes = false;

	if (!f)
		return false;
	while (!yes && fscanf(f, "%511s", buf) == 1)
		yes = !strcmp(buf, word);
	fclose(f);
	return yes;
}

/* v2: the memory controller must be given to our group's children. */
static int v2_ready(const char *home, char *why, size_t len)
{
	char path[600];
	int err;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", home);
	if (!has_word(path, "memory")) {
		snprintf(why, len, "the cgroup v2 group %.200s has no memory controller",
			 home);
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", home);
	if (has_word(path, "memory"))
		return 0;
	err = write_str(path, "+memory");
	if (err)
		snprintf(why, len, "cannot enable memory in %.200s: %s", path,
			 strerror(-err));
	return err;
}

static int memcg_pick(struct bench_memcg *m)
{
	char dir[512], path[600];

	if (group_dir(2, dir, sizeof(dir))) {
		snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
		if (has_word(path, "memory")) {
			m->version = 2;
			snprintf(m->home, sizeof(m->home), "%s", dir);
			return v2_ready(m->home, m->why, sizeof(m->why));
		}
	}
	if (group_dir(1, dir, sizeof(dir))) {
		m->version = 1;
		snprintf(m->home, sizeof(m->home), "%s", dir);
		return 0;
	}
	snprintf(m->why, sizeof(m->why),
		 "no memory cgroup controller mounted (v1 or v2)");
	return -ENOENT;
}

int bench_memcg_create(struct bench_memcg *m, const char *name,
		       uint64_t limit)
{
	char path[600];
	int err;

	memset(m, 0, sizeof(*m));
	m->limit = limit;
	err = memcg_pick(m);
	if (err)
		goto fail;
	err = snprintf(m->dir, sizeof(m->dir), "%s/%s", m->home, name) >=
	      (int)sizeof(m->dir) ? -ENAMETOOLONG : 0;
	if (!err && mkdir(m->dir, 0755))
		err = -errno;
	if (err) {
		snprintf(m->why, sizeof(m->why), "mkdir %.200s: %s", m->dir,
			 strerror(-err));
		goto fail;
	}
	m->made = true;
	HOLD(held_memcg, m);
	snprintf(path, sizeof(path), "%s/%s", m->dir,
		 m->version == 2 ? "memory.max" : "memory.limit_in_bytes");
	err = write_ulong(path, limit);
	if (err) {
		snprintf(m->why, sizeof(m->why), "cannot write %.200s: %s", path,
			 strerror(-err));
		bench_memcg_destroy(m);
		goto fail;
	}
	return 0;
fail:
	m->version = 0;
	return err;
}

static int move_self(const char *dir)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return write_ulong(path, (unsigned long)getpid());
}

int bench_memcg_enter(struct bench_memcg *m)
{
	int err;

	if (!m->made)
		return -ENOENT;
	err = move_self(m->dir);
	if (err)
		snprintf(m->why, sizeof(m->why), "cannot move into %.200s: %s",
			 m->dir, strerror(-err));
	m->inside = !err;
	return err;
}

int bench_memcg_leave(struct bench_memcg *m)
{
	int err;

	if (!m->inside)
		return 0;
	err = move_self(m->home);
	if (err)
		fprintf(stderr, "uflush-bench: cannot move back to %s: %s\n",
			m->home, strerror(-err));
	m->inside = !!err;
	return err;
}

uint64_t bench_memcg_peak(const struct bench_memcg *m)
{
	char path[600];
	unsigned long v;

	if (!m->made)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", m->dir,
		 m->version == 2 ? "memory.peak" : "memory.max_usage_in_bytes");
	return bench_read_ulong(path, &v) ? 0 : v;
}

void bench_memcg_destroy(struct bench_memcg *m)
{
	struct timespec pause = { 0, 10000000 };
	int tries;

	if (!m->made)
		return;
	bench_memcg_leave(m);
	UNLINK(held_memcg, m);
	m->made = false;
	/* a child that just exited may still be counted for a moment */
	for (tries = 0; rmdir(m->dir) && errno == EBUSY && tries < 100;
	     tries++)
		nanosleep(&pause, NULL);
	if (!access(m->dir, F_OK))
		fprintf(stderr, "uflush-bench: cannot remove %s: %s\n",
			m->dir, strerror(errno));
}

/* ------------------------------------------------------------------ */
/* CPU                                                                 */

int bench_drop_caches(void)
{
	int fd, err = 0;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3\n", 2) != 2)
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

double bench_thread_cpu(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double bench_host_busy(void)
{
	unsigned long long v[8] = { 0 }, busy;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5 || hz <= 0)
		return 0;
	/* user nice system [idle iowait] irq softirq steal */
	busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return (double)busy / hz;
}

void bench_probe_start(const struct bench_target *t, struct bench_probe *p)
{
	p->dev_ok = bench_target_counters(t, &p->ios0, &p->sectors0);
	p->host0 = bench_host_busy();
	bench_process_cpu(&p->cpu0, NULL);
	p->t0 = uf_now_ns();
}

void bench_probe_end(const struct bench_target *t,
		     const struct bench_probe *p, struct bench_probed *r)
{
	uint64_t t1 = uf_now_ns(), ios, sectors;
	double cpu, host = bench_host_busy();

	bench_process_cpu(&cpu, NULL);
	r->secs = (t1 - p->t0) / 1e9;
	r->cpu_secs = cpu - p->cpu0;
	r->host_cpu_secs = host - p->host0;
	r->have_dev = p->dev_ok && bench_target_counters(t, &ios, &sectors);
	if (r->have_dev) {
		r->dev_ios = ios - p->ios0;
		r->dev_sectors = sectors - p->sectors0;
	}
}

bool bench_probed_dev(const void *recs, unsigned int n, size_t stride,
		      size_t off, double *ios, double *kib)
{
	struct bench_samples v = { 0 }, s = { 0 };
	const struct bench_probed *r;
	unsigned int i;

	for (i = 0; i < n; i++) {
		r = (const void *)((const char *)recs + i * stride + off);
		if (!r->have_dev || !r->dev_ios)
			continue;
		bench_samples_add(&v, r->dev_ios);
		bench_samples_add(&s, r->dev_sectors * 512.0 / 1024 /
				      r->dev_ios);
	}
	if (!v.n)
		return false;
	*ios = bench_samples_median(&v);
	*kib = bench_samples_median(&s);
	return true;
}

/* ------------------------------------------------------------------ */
/* uflush's own counters                                              */

void bench_uf_snap(struct uf_cache *cache, struct uf_dev *dev,
		   struct bench_uf_snap *s)
{
	uf_cache_stats(cache, &s->cs);
	uf_dev_stats(dev, &s->ds);
}

void bench_uf_counts(const struct bench_uf_snap *s0, struct uf_cache *cache,
		     struct uf_dev *dev, struct bench_uf_counts *c)
{
	struct bench_uf_snap s1;

	bench_uf_snap(cache, dev, &s1);
	c->pages_dirtied = s1.cs.nr_dirtied - s0->cs.nr_dirtied;
	c->pages_written = s1.cs.nr_written - s0->cs.nr_written;
	c->write_errors = s1.cs.write_errors - s0->cs.write_errors;
	c->dirty_thresh = s1.cs.dirty_thresh;
	c->background_thresh = s1.cs.background_thresh;
	c->write_ios = s1.ds.write_ios - s0->ds.write_ios;
	c->write_bytes = s1.ds.write_bytes - s0->ds.write_bytes;
	c->bdi_written_kb = s1.ds.bdi_written_kb - s0->ds.bdi_written_kb;
	c->bdi_bw_kbps = s1.ds.bdi_write_bandwidth_kbps;
	c->works_done = s1.ds.works_done - s0->ds.works_done;
}

/* ------------------------------------------------------------------ */
/* Offsets                                                             */

uint32_t *bench_permutation(uint64_t n, uint64_t k, uint64_t seed)
{
	uint64_t i, j, rng = seed * 0x9e3779b97f4a7c15ull + 1;
	uint32_t *p, t;

	if (!n || n > UINT32_MAX + 1ull)
		return NULL;
	p = malloc(n * sizeof(*p));
	if (!p)
		return NULL;
	for (i = 0; i < n; i++)
		p[i] = (uint32_t)i;
	/* a partial Fisher-Yates: the first k places are final */
	for (i = 0; i < k && i + 1 < n; i++) {
		j = i + bench_xorshift64(&rng) % (n - i);
		t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

/* ------------------------------------------------------------------ */
/* The copy                                                            */

static size_t parse_cache_size(const char *s)
{
	char *end;
	size_t v = strtoul(s, &end, 10);

	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	return v;
}

size_t bench_l2_bytes(void)
{
	char path[128], buf[32];
	unsigned long level;
	unsigned int i;
	FILE *f;

	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%u/level", i);
		if (bench_read_ulong(path, &level))
			break;
		if (level != 2)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%u/size", i);
		f = fopen(path, "r");
		if (!f)
			return 0;
		if (fscanf(f, "%31s", buf) != 1)
			buf[0] = '\0';
		fclose(f);
		return parse_cache_size(buf);
	}
	return 0;
}

size_t bench_copy_wset(void)
{
	size_t l2 = bench_l2_bytes();

	return l2 ? 4 * l2 : 8u << 20;
}

int bench_copy_cost(const void *src, size_t src_len, uint64_t pages,
		    size_t wset, double *secs)
{
	size_t nsrc = src_len / COPY_PAGE, ndst = wset / COPY_PAGE;
	const char *s = src;
	uint64_t i;
	double t0;
	void *mem;
	char *dst;

	if (!nsrc || !ndst)
		return -EINVAL;
	if (posix_memalign(&mem, COPY_PAGE, ndst * COPY_PAGE))
		return -ENOMEM;
	dst = mem;
	memset(dst, 1, ndst * COPY_PAGE);	/* fault it in, untimed */
	t0 = bench_thread_cpu();
	for (i = 0; i < pages; i++) {
		memcpy(dst + (i % ndst) * COPY_PAGE,
		       s + (i % nsrc) * COPY_PAGE, COPY_PAGE);
		/* the copies are the point: keep the compiler from eliding */
		__asm__ volatile("" : : "r"(dst) : "memory");
	}
	*secs = bench_thread_cpu() - t0;
	free(mem);
	return 0;
}

double bench_per_gb(double secs, uint64_t bytes)
{
	return bytes ? secs / (bytes / 1e9) : NAN;
}

double bench_cpu_bound(double fio_per_gb, double copy_per_gb)
{
	return 2 * (fio_per_gb + copy_per_gb);
}

/* ------------------------------------------------------------------ */
/* Ratios, targets, and the tables and JSON of a device benchmark      */

void bench_paired_stats(const struct bench_samples *a,
			const struct bench_samples *b, struct bench_stats *st)
{
	struct bench_samples r = { 0 };
	unsigned int i;

	for (i = 0; i < a->n && i < b->n; i++)
		if (b->v[i] > 0)
			bench_samples_add(&r, a->v[i] / b->v[i]);
	bench_samples_stats(&r, st);
}

void bench_table_paired(struct bench_table *t, unsigned int row,
			unsigned int col, const struct bench_samples *a,
			const struct bench_samples *b)
{
	struct bench_stats st;

	bench_table_ratio(t, row, col, bench_ratio(a, b));
	bench_paired_stats(a, b, &st);
	if (st.n)
		bench_table_set(t, row, col + 1, "(%.2f-%.2f)", st.min,
				st.max);
	else
		bench_table_set(t, row, col + 1, "-");
}

void bench_json_paired(struct bench_json *j, const char *key,
		       const struct bench_samples *a,
		       const struct bench_samples *b)
{
	struct bench_stats st;
	char k[128];

	bench_paired_stats(a, b, &st);
	bench_json_num(j, key, bench_ratio(a, b));
	snprintf(k, sizeof(k), "%s_min", key);
	bench_json_num(j, k, st.n ? st.min : NAN);
	snprintf(k, sizeof(k), "%s_max", key);
	bench_json_num(j, k, st.n ? st.max : NAN);
}

void bench_field_stats(const void *recs, unsigned int n, size_t stride,
		       size_t off, struct bench_stats *st)
{
	struct bench_samples s;

	bench_samples_gather(&s, recs, n, stride, off);
	bench_samples_stats(&s, st);
}

void bench_json_field(struct bench_json *j, const char *key,
		      const void *recs, unsigned int n, size_t stride,
		      size_t off)
{
	struct bench_samples s;

	bench_samples_gather(&s, recs, n, stride, off);
	bench_json_samples(j, key, &s);
}

void bench_print_target(const char *what, const struct bench_samples *a,
			const struct bench_samples *b, bool at_least,
			double goal)
{
	const char *op = at_least ? ">=" : "<=";
	double ratio = bench_ratio(a, b);
	struct bench_stats st;

	if (isnan(ratio)) {
		printf("  %-24s -     (a case did not run)  target %s %.2f\n",
		       what, op, goal);
		return;
	}
	bench_paired_stats(a, b, &st);
	printf("  %-24s %.2f (%.2f-%.2f)  target %s %.2f: %s\n", what, ratio,
	       st.min, st.max, op, goal,
	       (at_least ? ratio >= goal : ratio <= goal) ? "met" : "MISSED");
}

int bench_table_case(struct bench_table *t, unsigned int col,
		     const char *name, const struct bench_case *bc,
		     unsigned int n)
{
	int row = bench_table_row(t);

	if (row < 0)
		return row;
	bench_table_set(t, row, 0, "%s", name);
	if (n)
		return row;
	bench_table_set(t, row, col, "%s", bc->skipped ? "skipped" : "no run");
	return -ENODATA;
}

void bench_table_dev(struct bench_table *t, unsigned int row,
		     unsigned int col, const void *recs, unsigned int n,
		     size_t stride, size_t off)
{
	double ios, kib;

	if (!bench_probed_dev(recs, n, stride, off, &ios, &kib)) {
		bench_table_set(t, row, col, "-");
		bench_table_set(t, row, col + 1, "-");
		return;
	}
	bench_table_set(t, row, col, "%.0f", ios);
	bench_table_set(t, row, col + 1, kib < 100 ? "%.1f" : "%.0f", kib);
}

void bench_json_case(struct bench_json *j, const char *key,
		     const struct bench_case *bc, unsigned int n,
		     const char *cmd)
{
	bench_json_obj(j, NULL);
	bench_json_str(j, "case", key);
	bench_json_str(j, "status", bc->skipped ? "skipped" : n ? "ok" : "no run");
	bench_json_str(j, "reason", bc->skipped ? bc->why : "");
	bench_json_str(j, "cmd", cmd);
}

void bench_json_probed(struct bench_json *j, const void *recs,
		       unsigned int n, size_t stride, size_t off)
{
	const struct bench_probed *r;
	double ios[BENCH_MAX_REPS], sectors[BENCH_MAX_REPS];
	unsigned int i;

	for (i = 0; i < n && i < BENCH_MAX_REPS; i++) {
		r = (const void *)((const char *)recs + i * stride + off);
		ios[i] = r->have_dev ? r->dev_ios : 0;
		sectors[i] = r->have_dev ? r->dev_sectors : 0;
	}
	bench_json_nums(j, "dev_write_ios", ios, i);
	bench_json_nums(j, "dev_write_sectors", sectors, i);
}

void bench_json_uf_counts(struct bench_json *j, const void *recs,
			  unsigned int n, size_t stride, size_t off)
{
	static const struct {
		const char *key;
		size_t off;
		bool u64;
	} f[] = {
#define F(key, field, u64) \
	{ key, offsetof(struct bench_uf_counts, field), u64 }
		F("pages_dirtied", pages_dirtied, false),
		F("pages_written", pages_written, false),
		F("write_errors", write_errors, false),
		F("uf_write_ios", write_ios, true),
		F("uf_write_bytes", write_bytes, true),
		F("works_done", works_done, false),
#undef F
	};
	double v[BENCH_MAX_REPS];
	unsigned int i, k;
	const char *p;

	for (k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		for (i = 0; i < n && i < BENCH_MAX_REPS; i++) {
			p = (const char *)recs + i * stride + off + f[k].off;
			v[i] = f[k].u64 ? *(const uint64_t *)p :
					  *(const unsigned long *)p;
		}
		bench_json_nums(j, f[k].key, v, i);
	}
}

void bench_json_uflush(struct bench_json *j, unsigned long pages,
		       const char *policy)
{
	bench_json_obj(j, "cache");
	bench_json_u64(j, "pages", pages);
	bench_json_str(j, "policy", policy);
	bench_json_str(j, "engine", "io_uring");
}

int bench_exit_uflush(const char *cmd, int err, unsigned int uflush_runs)
{
	if (bench_stop || err)
		return bench_exit_code(cmd, err);
	if (!uflush_runs) {
		bench_err(cmd, "uflush could not run");
		return 1;
	}
	return 0;
}

bool bench_run_over(int err, const struct bench_case *bc, unsigned int n,
		    int *ret)
{
	*ret = 0;
	if (bench_stop)
		return true;
	if (!err)
		return false;
	fprintf(stderr, "  %s: %s\n", bc->name, bc->why);
	*ret = n ? err : BENCH_SKIP;
	return true;
}

void bench_table_median(struct bench_table *t, unsigned int row,
			unsigned int col, const char *fmt, const void *recs,
			unsigned int n, size_t stride, size_t off)
{
	struct bench_stats st;

	bench_field_stats(recs, n, stride, off, &st);
	bench_table_set(t, row, col, fmt, st.median);
}
