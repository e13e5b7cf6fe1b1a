// SPDX-License-Identifier: MIT
/*
 * engine/uflush.c - the public API (include/uflush.h) on top of the kernel
 * mirror: caches, devices, files and pages as handles, argument checks, and
 * the system calls' glue (fsync, sync, close).
 *
 * Handles live in tables that are never freed while the process runs (like
 * file descriptors), so a closed handle is reported as -EBADF instead of
 * being a use after free; a slot is reused by a later open.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "uflush.h"
#include "mm/backing-dev.h"
#include "fs/fs.h"
#include "io/io.h"
#include "kernel/jiffies.h"
#include "mm/pagemap.h"
#include "policies/policy.h"
#include "mm/vmscan.h"
#include "kernel/printk.h"
#include "lib/proportions.h"
#include "lib/slab.h"
#include "trace/trace.h"
#include "trace/events/writeback.h"
#include "uflush-internal.h"
#include "fs/writeback.h"

#define UF_MAX_CACHES		64
#define UF_MAX_DEVS		256
#define FILE_CHUNK		1024
#define FILE_CHUNKS		64	/* 65536 open files */

struct uf_cache_slot {
	struct uf_cache cache;
	bool in_use;
	pthread_mutex_t lock;		/* device open/close */
};

struct uf_dev {
	bool in_use;
	struct uf_cache *cache;
	struct uf_bdev *bdev;
	struct backing_dev_info bdi;
	struct super_block sb;
	pthread_mutex_t files_lock;	/* open/close of this device's files */
	unsigned long nr_files;
	uint64_t size;
	bool umount_held;
};

struct uf_file {
	struct inode inode;		/* first: inode <-> file casts */
	bool in_use;
	struct uf_dev *dev;
};

static struct uf_cache_slot caches[UF_MAX_CACHES];
static struct uf_dev devs[UF_MAX_DEVS];
static struct uf_file *file_chunks[FILE_CHUNKS];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int cache_hz;	/* the hz of open caches; 0 = none open */
static unsigned int nr_open_caches;

static int uf_dev_close_all(struct uf_dev *d);

/* ------------------------------------------------------------------ */
/* Handle checks                                                       */

static struct uf_cache_slot *cache_slot(struct uf_cache *c)
{
	return (struct uf_cache_slot *)c;
}

static bool in_table(const void *p, const void *base, size_t size,
		     size_t elem)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;

	return a >= b && a < b + size && (a - b) % elem == 0;
}

static bool cache_ok(struct uf_cache *c)
{
	return c && in_table(c, caches, sizeof(caches), sizeof(caches[0])) &&
	       __atomic_load_n(&cache_slot(c)->in_use, __ATOMIC_ACQUIRE);
}

static bool dev_ok(struct uf_dev *d)
{
	return d && in_table(d, devs, sizeof(devs), sizeof(devs[0])) &&
	       __atomic_load_n(&d->in_use, __ATOMIC_ACQUIRE);
}

static bool file_ok(struct uf_file *f)
{
	int i;

	if (!f)
		return false;
	for (i = 0; i < FILE_CHUNKS; i++) {
		struct uf_file *chunk = __atomic_load_n(&file_chunks[i],
							__ATOMIC_ACQUIRE);

		if (chunk && in_table(f, chunk, FILE_CHUNK * sizeof(*chunk),
				      sizeof(*chunk)))
			return __atomic_load_n(&f->in_use, __ATOMIC_ACQUIRE);
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Cache                                                               */

int uf_cache_config_init(struct uf_cache_config *cfg)
{
	if (!cfg)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_pages = 65536;
	cfg->hz = 1000;
	cfg->max_io_pages = 256;
	cfg->dirty_ratio = 20;
	cfg->dirty_background_ratio = 10;
	cfg->dirty_expire_centisecs = 3000;
	cfg->dirty_writeback_centisecs = 500;
	return 0;
}

static int check_cache_config(const struct uf_cache_config *cfg)
{
	if (cfg->nr_pages < 16 || cfg->nr_pages > (1ul << 32))
		return -EINVAL;
	if (cfg->hz < 100 || cfg->hz > 10000)
		return -EINVAL;
	if (cfg->max_io_pages < 1 || cfg->max_io_pages > 1024)
		return -EINVAL;
	if (cfg->dirty_ratio > 100 || cfg->dirty_background_ratio > 100)
		return -EINVAL;
	if (cfg->mem_limit_pages && (cfg->mem_limit_pages < 16 ||
				     cfg->mem_limit_pages > cfg->nr_pages))
		return -EINVAL;
	return 0;
}


static void cache_init_tunables(struct uf_cache *c,
				const struct uf_cache_config *cfg)
{
	c->vm.vm_dirty_ratio = cfg->dirty_ratio;
	c->vm.dirty_background_ratio = cfg->dirty_background_ratio;
	c->vm.vm_dirty_bytes = cfg->dirty_bytes;
	c->vm.dirty_background_bytes = cfg->dirty_background_bytes;
	c->vm.dirty_expire_interval = cfg->dirty_expire_centisecs;
	c->vm.dirty_writeback_interval = cfg->dirty_writeback_centisecs;
	c->max_io_pages = cfg->max_io_pages;
}

/* jiffies are one clock per process: every open cache shares one HZ. */
static int claim_hz(unsigned int hz)
{
	int ret = 0;

	pthread_mutex_lock(&handles_lock);
	if (nr_open_caches && cache_hz != hz)
		ret = -EINVAL;
	else if (!nr_open_caches && (unsigned int)HZ != hz)
		ret = uf_set_hz((int)hz);
	if (!ret) {
		cache_hz = hz;
		nr_open_caches++;
	}
	pthread_mutex_unlock(&handles_lock);
	return ret;
}

static void release_hz(void)
{
	pthread_mutex_lock(&handles_lock);
	nr_open_caches--;
	pthread_mutex_unlock(&handles_lock);
}

static struct uf_cache_slot *cache_slot_get(void)
{
	struct uf_cache_slot *s = NULL;
	int i;

	pthread_mutex_lock(&handles_lock);
	for (i = 0; i < UF_MAX_CACHES && !s; i++) {
		if (!caches[i].in_use) {
			s = &caches[i];
			memset(&s->cache, 0, sizeof(s->cache));
		}
	}
	pthread_mutex_unlock(&handles_lock);
	return s;
}

static int cache_setup(struct uf_cache *c, const struct uf_cache_config *cfg)
{
	int ret;

	cache_init_tunables(c, cfg);
	spin_lock_init(&c->bdi_lock);
	INIT_LIST_HEAD(&c->bdi_list);
	init_waitqueue_head(&c->dirty_wait);
	ret = page_pool_init(&c->pool, cfg->mem_limit_pages ?
			     cfg->mem_limit_pages : cfg->nr_pages);
	if (ret)
		return ret;
	if (cfg->mem_limit_pages)
		page_pool_set_machine(&c->pool, cfg->nr_pages);
	page_writeback_init(c);
	if (cfg->trace_path) {
		ret = uf_trace_open(c, cfg->trace_path);
		if (ret) {
			page_pool_exit(&c->pool);
			return ret;
		}
	}
	ret = kswapd_run(c);
	if (ret) {
		uf_trace_close(c);
		page_pool_exit(&c->pool);
	}
	return ret;
}

int uf_cache_open(const struct uf_cache_config *cfg, struct uf_cache **out)
{
	struct uf_cache_config def;
	struct wb_policy *pol;
	struct uf_cache_slot *s;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg) {
		uf_cache_config_init(&def);
		cfg = &def;
	}
	ret = check_cache_config(cfg);
	if (ret)
		return ret;
	pol = kzalloc(sizeof(*pol));
	if (!pol)
		return -ENOMEM;
	ret = wb_policy_resolve(cfg->policy, pol);
	if (ret) {
		kfree(pol);
		return ret;
	}
	ret = claim_hz(cfg->hz);
	if (ret)
		goto out_policy;
	s = cache_slot_get();
	if (!s) {
		ret = -EMFILE;
		goto out_hz;
	}
	s->cache.policy = pol;
	ret = cache_setup(&s->cache, cfg);
	if (ret)
		goto out_hz;
	pthread_mutex_init(&s->lock, NULL);
	pr_info("cache: %zu pages, HZ=%u, policy %s", cfg->nr_pages, cfg->hz,
		pol->spec);
	__atomic_store_n(&s->in_use, true, __ATOMIC_RELEASE);
	*out = &s->cache;
	return 0;

out_hz:
	release_hz();
out_policy:
	wb_policy_release(pol);
	kfree(pol);
	return ret;
}

const char *uf_cache_policy(struct uf_cache *c)
{
	return cache_ok(c) ? c->policy->spec : NULL;
}

int uf_cache_close(struct uf_cache *c)
{
	struct uf_cache_slot *s;
	int i, ret = 0, err;

	if (!cache_ok(c))
		return -EBADF;
	s = cache_slot(c);
	for (i = 0; i < UF_MAX_DEVS; i++) {
		if (!dev_ok(&devs[i]) || devs[i].cache != c)
			continue;
		err = uf_dev_close_all(&devs[i]);
		if (!ret)
			ret = err;
	}
	__atomic_store_n(&s->in_use, false, __ATOMIC_RELEASE);
	kswapd_stop(c);
	uf_trace_close(c);
	page_writeback_exit(c);
	page_pool_exit(&c->pool);
	wb_policy_release(c->policy);
	kfree(c->policy);
	c->policy = NULL;
	pthread_mutex_destroy(&s->lock);
	release_hz();
	return ret;
}

/* /proc/sys/vm names → fields. */
static unsigned long *tunable_field(struct uf_cache *c, const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} map[] = {
		{ "dirty_ratio", offsetof(struct vm_tunables, vm_dirty_ratio) },
		{ "dirty_background_ratio",
		  offsetof(struct vm_tunables, dirty_background_ratio) },
		{ "dirty_bytes", offsetof(struct vm_tunables, vm_dirty_bytes) },
		{ "dirty_background_bytes",
		  offsetof(struct vm_tunables, dirty_background_bytes) },
		{ "dirty_expire_centisecs",
		  offsetof(struct vm_tunables, dirty_expire_interval) },
		{ "dirty_writeback_centisecs",
		  offsetof(struct vm_tunables, dirty_writeback_interval) },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].name, name))
			return (unsigned long *)((char *)&c->vm + map[i].off);
	return NULL;
}

int uf_cache_set_tunable(struct uf_cache *c, const char *name,
			 unsigned long value)
{
	unsigned long *f;

	if (!cache_ok(c))
		return -EBADF;
	if (!name)
		return -EINVAL;
	f = tunable_field(c, name);
	if (!f)
		return -ENOENT;
	if (strstr(name, "ratio") && value > 100)
		return -EINVAL;
	/* as the kernel's dirty_bytes handler: at least two pages */
	if (!strcmp(name, "dirty_bytes") && value && value < 2 * PAGE_SIZE)
		return -EINVAL;
	if (!strcmp(name, "dirty_bytes") && !value && !c->vm.vm_dirty_ratio)
		return -EINVAL;	/* would leave no dirty limit at all */
	__atomic_store_n(f, value, __ATOMIC_RELAXED);
	/* as the sysctl handlers do: a ratio clears the bytes, and back */
	if (!strcmp(name, "dirty_ratio"))
		c->vm.vm_dirty_bytes = 0;
	else if (!strcmp(name, "dirty_bytes") && value)
		c->vm.vm_dirty_ratio = 0;
	else if (!strcmp(name, "dirty_background_ratio"))
		c->vm.dirty_background_bytes = 0;
	else if (!strcmp(name, "dirty_background_bytes") && value)
		c->vm.dirty_background_ratio = 0;
	if (!strcmp(name, "dirty_ratio") || !strcmp(name, "dirty_bytes")) {
		update_completion_period(c);
		writeback_set_ratelimit(c);
	}
	return 0;
}

int uf_cache_get_tunable(struct uf_cache *c, const char *name,
			 unsigned long *value)
{
	unsigned long *f;

	if (!cache_ok(c))
		return -EBADF;
	if (!name || !value)
		return -EINVAL;
	f = tunable_field(c, name);
	if (!f)
		return -ENOENT;
	*value = __atomic_load_n(f, __ATOMIC_RELAXED);
	return 0;
}

int uf_cache_stats(struct uf_cache *c, struct uf_cache_stats *st)
{
	unsigned long bg, dirty;

	if (!cache_ok(c))
		return -EBADF;
	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	global_dirty_limits(c, &bg, &dirty);
	st->nr_pages = c->pool.nr;
	/* a domain's: the machine outside it is not the cache's */
	st->nr_free = global_page_state(c, NR_FREE_PAGES);
	st->nr_free = st->nr_free > c->pool.nr_outside ?
		      st->nr_free - c->pool.nr_outside : 0;
	st->nr_file_pages = global_page_state(c, NR_FILE_PAGES);
	st->nr_dirty = global_page_state(c, NR_FILE_DIRTY);
	st->nr_writeback = global_page_state(c, NR_WRITEBACK);
	st->nr_dirtied = global_page_state(c, NR_DIRTIED);
	st->nr_written = global_page_state(c, NR_WRITTEN);
	st->dirty_thresh = dirty;
	st->background_thresh = bg;
	st->write_errors = (unsigned long)__atomic_load_n(&c->write_errors,
							  __ATOMIC_RELAXED);
	reclaim_fill_stats(c, st);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */

static struct uf_dev *dev_slot_get(void)
{
	struct uf_dev *d = NULL;
	int i;

	pthread_mutex_lock(&handles_lock);
	for (i = 0; i < UF_MAX_DEVS && !d; i++) {
		if (!devs[i].in_use && !devs[i].cache) {
			d = &devs[i];
			memset(d, 0, sizeof(*d));
			d->cache = (struct uf_cache *)1; /* reserved */
		}
	}
	pthread_mutex_unlock(&handles_lock);
	return d;
}

static void dev_slot_put(struct uf_dev *d)
{
	pthread_mutex_lock(&handles_lock);
	d->in_use = false;
	d->cache = NULL;
	pthread_mutex_unlock(&handles_lock);
}

/* The kernel names a bdi by its device number; files get 0:N. */
static dev_t dev_number(const char *path, struct uf_dev *d)
{
	struct stat st;

	if (!stat(path, &st) && S_ISBLK(st.st_mode))
		return st.st_rdev;
	return makedev(0, (unsigned int)(d - devs) + 1);
}

static void sb_init(struct super_block *sb, struct uf_dev *d, dev_t devt)
{
	memset(sb, 0, sizeof(*sb));
	sb->s_dev = devt;
	sb->s_bdi = &d->bdi;
	sb->s_cache = d->cache;
	init_rwsem(&sb->s_umount);
	spin_lock_init(&sb->s_inode_list_lock);
	INIT_LIST_HEAD(&sb->s_inodes);
}

static int dev_setup(struct uf_dev *d, struct uf_cache *c, const char *path,
		     const struct uf_dev_config *cfg)
{
	struct uf_bdev_config bcfg;
	char name[32];
	dev_t devt;
	int ret;

	uf_bdev_config_init(&bcfg);
	if (cfg) {
		bcfg.engine = cfg->engine;
		if (cfg->queue_depth)
			bcfg.queue_depth = cfg->queue_depth;
		bcfg.flags = cfg->flags & (UF_BDEV_FORCE | UF_BDEV_SHAPED);
	}
	ret = uf_bdev_open(path, &bcfg, &d->bdev);
	if (ret)
		return ret;
	uf_bdev_size(d->bdev, &d->size);
	d->cache = c;
	devt = dev_number(path, d);
	snprintf(name, sizeof(name), "%u:%u", major(devt), minor(devt));
	bdi_init(&d->bdi, c, d->bdev, name);
	sb_init(&d->sb, d, devt);
	d->bdi.sb = &d->sb;
	pthread_mutex_init(&d->files_lock, NULL);
	ret = bdi_register(&d->bdi, !(cfg && (cfg->flags & UF_DEV_NO_FLUSHER)));
	if (ret) {
		uf_bdev_close(d->bdev);
		return ret;
	}
	return 0;
}

int uf_dev_open(struct uf_cache *c, const char *path,
		const struct uf_dev_config *cfg, struct uf_dev **out)
{
	struct uf_dev *d;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cache_ok(c))
		return -EBADF;
	if (!path || (cfg && (cfg->flags & ~(UF_DEV_FORCE | UF_DEV_SHAPED |
					     UF_DEV_NO_FLUSHER))))
		return -EINVAL;
	d = dev_slot_get();
	if (!d)
		return -EMFILE;
	ret = dev_setup(d, c, path, cfg);
	if (ret) {
		dev_slot_put(d);
		return ret;
	}
	__atomic_store_n(&d->in_use, true, __ATOMIC_RELEASE);
	*out = d;
	return 0;
}

/* sync(2) for one device: write, wait, flush the device cache. */
static int dev_sync(struct uf_dev *d)
{
	down_read(&d->sb.s_umount);
	writeback_inodes_sb(&d->sb, WB_REASON_SYNC);
	sync_inodes_sb(&d->sb);
	up_read(&d->sb.s_umount);
	return uf_bdev_flush(d->bdev);
}

static void dev_teardown(struct uf_dev *d)
{
	bdi_unregister(&d->bdi);
	bdi_destroy(&d->bdi);
	uf_bdev_close(d->bdev);
	pthread_mutex_destroy(&d->files_lock);
}

/* Close every file of the device, then the device (cache close). */
static int uf_dev_close_all(struct uf_dev *d)
{
	int i, j, ret = 0, err;

	for (i = 0; i < FILE_CHUNKS; i++) {
		struct uf_file *chunk = file_chunks[i];

		for (j = 0; chunk && j < FILE_CHUNK; j++) {
			if (!file_ok(&chunk[j]) || chunk[j].dev != d)
				continue;
			err = uf_file_close(&chunk[j]);
			if (!ret)
				ret = err;
		}
	}
	return uf_dev_close(d) ?: ret;
}

int uf_dev_close(struct uf_dev *d)
{
	int ret;

	if (!dev_ok(d))
		return -EBADF;
	pthread_mutex_lock(&d->files_lock);
	if (d->nr_files) {
		pthread_mutex_unlock(&d->files_lock);
		return -EBUSY;
	}
	__atomic_store_n(&d->in_use, false, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&d->files_lock);
	if (d->umount_held)
		up_write(&d->sb.s_umount);
	ret = dev_sync(d);
	dev_teardown(d);
	dev_slot_put(d);
	return ret;
}

int uf_dev_set_shape(struct uf_dev *d, const struct uf_io_shape *shape)
{
	if (!dev_ok(d))
		return -EBADF;
	return uf_bdev_set_shape(d->bdev, shape);
}

int uf_dev_stall(struct uf_dev *d, unsigned int ms)
{
	if (!dev_ok(d))
		return -EBADF;
	return uf_bdev_stall(d->bdev, ms);
}

int uf_dev_hold_umount(struct uf_dev *d)
{
	if (!dev_ok(d))
		return -EBADF;
	if (__atomic_exchange_n(&d->umount_held, true, __ATOMIC_ACQ_REL))
		return -EBUSY;
	down_write(&d->sb.s_umount);
	return 0;
}

int uf_dev_release_umount(struct uf_dev *d)
{
	if (!dev_ok(d))
		return -EBADF;
	if (!__atomic_load_n(&d->umount_held, __ATOMIC_ACQUIRE))
		return -EINVAL;
	up_write(&d->sb.s_umount);
	__atomic_store_n(&d->umount_held, false, __ATOMIC_RELEASE);
	return 0;
}

struct backing_dev_info *uf_dev_bdi(struct uf_dev *d)
{
	return dev_ok(d) ? &d->bdi : NULL;
}

struct inode *uf_file_inode(struct uf_file *f)
{
	return file_ok(f) ? &f->inode : NULL;
}


int uf_dev_stats(struct uf_dev *d, struct uf_dev_stats *st)
{
	if (!dev_ok(d))
		return -EBADF;
	if (!st)
		return -EINVAL;
	bdi_fill_stats(&d->bdi, st);
	return 0;
}

int uf_sync(struct uf_cache *c)
{
	int i, ret = 0, err;

	if (!cache_ok(c))
		return -EBADF;
	wakeup_flusher_threads(c, 0, WB_REASON_SYNC);
	for (i = 0; i < UF_MAX_DEVS; i++) {
		if (!dev_ok(&devs[i]) || devs[i].cache != c)
			continue;
		err = dev_sync(&devs[i]);
		if (!ret)
			ret = err;
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

static struct uf_file *file_slot_get(void)
{
	struct uf_file *f = NULL;
	int i, j;

	pthread_mutex_lock(&handles_lock);
	for (i = 0; i < FILE_CHUNKS && !f; i++) {
		if (!file_chunks[i]) {
			struct uf_file *chunk = kzalloc(FILE_CHUNK *
							sizeof(*chunk));

			if (!chunk)
				break;
			__atomic_store_n(&file_chunks[i], chunk,
					 __ATOMIC_RELEASE);
		}
		for (j = 0; j < FILE_CHUNK && !f; j++) {
			if (!__atomic_load_n(&file_chunks[i][j].in_use,
					     __ATOMIC_ACQUIRE) &&
			    !file_chunks[i][j].dev) {
				f = &file_chunks[i][j];
				memset(f, 0, sizeof(*f));
				f->dev = (struct uf_dev *)1; /* reserved */
			}
		}
	}
	pthread_mutex_unlock(&handles_lock);
	return f;
}

static void file_slot_put(struct uf_file *f)
{
	pthread_mutex_lock(&handles_lock);
	f->in_use = false;
	f->dev = NULL;
	pthread_mutex_unlock(&handles_lock);
}

/* -EEXIST for a used ino, -EBUSY for an overlapping range. */
static int check_file_conflict(struct uf_dev *d, uint64_t ino,
			       uint64_t start, uint64_t end)
{
	struct inode *inode;
	int ret = 0;

	spin_lock(&d->sb.s_inode_list_lock);
	list_for_each_entry(inode, &d->sb.s_inodes, i_sb_list) {
		uint64_t s = inode->dev_offset, e = s + (uint64_t)inode->i_size;

		if (inode->i_ino == ino) {
			ret = -EEXIST;
			break;
		}
		if (start < e && s < end) {
			ret = -EBUSY;
			break;
		}
	}
	spin_unlock(&d->sb.s_inode_list_lock);
	return ret;
}

static void inode_init(struct uf_file *f, struct uf_dev *d, uint64_t ino,
		       uint64_t off, uint64_t len)
{
	struct inode *inode = &f->inode;
	struct address_space *mapping = &inode->i_data;

	inode->i_ino = ino;
	spin_lock_init(&inode->i_lock);
	INIT_LIST_HEAD(&inode->i_wb_list);
	INIT_LIST_HEAD(&inode->i_sb_list);
	inode->i_sb = &d->sb;
	inode->i_mapping = mapping;
	inode->i_size = (loff_t)len;
	inode->dev_offset = off;
	inode->i_count = 1;
	init_waitqueue_head(&inode->i_sync_wait);

	mapping->host = inode;
	INIT_RADIX_TREE(&mapping->page_tree, 0);
	spin_lock_init(&mapping->tree_lock);
	mapping->backing_dev_info = &d->bdi;
	inode->f_wb_err = errseq_sample(&mapping->wb_err);
}

int uf_file_open(struct uf_dev *d, uint64_t ino, uint64_t dev_offset,
		 uint64_t length, const struct uf_file_ops *ops, void *priv,
		 struct uf_file **out)
{
	struct uf_file *f;
	uint64_t len;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev_ok(d))
		return -EBADF;
	if (dev_offset % PAGE_SIZE || !length || length > (uint64_t)LLONG_MAX)
		return -EINVAL;
	len = (length + PAGE_SIZE - 1) & PAGE_MASK;
	if (len > d->size || dev_offset > d->size - len)
		return -ERANGE;
	f = file_slot_get();
	if (!f)
		return -EMFILE;
	pthread_mutex_lock(&d->files_lock);
	ret = dev_ok(d) ? check_file_conflict(d, ino, dev_offset,
					      dev_offset + len) : -EBADF;
	if (ret) {
		pthread_mutex_unlock(&d->files_lock);
		file_slot_put(f);
		return ret;
	}
	inode_init(f, d, ino, dev_offset, len);
	f->inode.ops = ops;
	f->inode.priv = priv;
	f->dev = d;
	spin_lock(&d->sb.s_inode_list_lock);
	list_add_tail(&f->inode.i_sb_list, &d->sb.s_inodes);
	__atomic_add_fetch(&d->sb.s_nr_inodes, 1, __ATOMIC_RELAXED);
	spin_unlock(&d->sb.s_inode_list_lock);
	d->nr_files++;
	__atomic_store_n(&f->in_use, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&d->files_lock);
	*out = f;
	return 0;
}

/*
 * evict(): write everything, take the inode off the writeback lists under
 * I_FREEING (after any running writeback of it), drop its pages.
 */
static int file_evict(struct uf_file *f)
{
	struct inode *inode = &f->inode;
	int ret;

	ret = write_inode_now(inode, 1);
	spin_lock(&inode->i_lock);
	inode->i_state |= I_FREEING;
	spin_unlock(&inode->i_lock);
	inode_wait_for_pageout(inode);	/* seed 003 works hold it */
	inode_wait_for_writeback_sync(inode);
	inode_wb_list_del(inode);
	truncate_inode_pages(inode->i_mapping, 0);
	return ret;
}

int uf_file_close(struct uf_file *f)
{
	struct uf_dev *d;
	int ret, err;

	if (!file_ok(f))
		return -EBADF;
	d = f->dev;
	pthread_mutex_lock(&d->files_lock);
	if (!__atomic_exchange_n(&f->in_use, false, __ATOMIC_ACQ_REL)) {
		pthread_mutex_unlock(&d->files_lock);
		return -EBADF;
	}
	ret = file_evict(f);
	err = errseq_check_and_advance(&f->inode.i_data.wb_err,
				       &f->inode.f_wb_err);
	spin_lock(&d->sb.s_inode_list_lock);
	list_del_init(&f->inode.i_sb_list);
	__atomic_sub_fetch(&d->sb.s_nr_inodes, 1, __ATOMIC_RELAXED);
	spin_unlock(&d->sb.s_inode_list_lock);
	radix_tree_destroy(&f->inode.i_data.page_tree);
	d->nr_files--;
	pthread_mutex_unlock(&d->files_lock);
	file_slot_put(f);
	return err ? err : (ret == -EIO ? 0 : ret);
}

ssize_t uf_pwrite(struct uf_file *f, const void *buf, size_t len,
		  uint64_t offset)
{
	if (!file_ok(f))
		return -EBADF;
	if (!buf && len)
		return -EINVAL;
	if (len > SSIZE_MAX || offset > (uint64_t)f->inode.i_size ||
	    len > (uint64_t)f->inode.i_size - offset)
		return -EFBIG;
	if (!len)
		return 0;
	return generic_perform_write(&f->inode, buf, len, (loff_t)offset);
}

ssize_t uf_pread(struct uf_file *f, void *buf, size_t len, uint64_t offset)
{
	if (!file_ok(f))
		return -EBADF;
	if (!buf && len)
		return -EINVAL;
	if (offset >= (uint64_t)f->inode.i_size || !len)
		return 0;
	if (len > (uint64_t)f->inode.i_size - offset)
		len = (size_t)((uint64_t)f->inode.i_size - offset);
	if (len > SSIZE_MAX)
		len = SSIZE_MAX & PAGE_MASK;
	return filemap_read(&f->inode, buf, len, (loff_t)offset);
}

/*
 * generic_file_fsync(): data, then the inode if it is dirty (fdatasync:
 * only if I_DIRTY_DATASYNC), then the device's cache.  Write errors are
 * reported through errseq, once per error.
 */
static int file_fsync(struct uf_file *f, bool datasync)
{
	struct inode *inode = &f->inode;
	unsigned long state;
	int ret, err;

	ret = filemap_write_and_wait(inode->i_mapping);
	if (ret == -EIO)
		ret = 0;	/* reported below, once, by errseq */
	spin_lock(&inode->i_lock);
	state = inode->i_state;
	spin_unlock(&inode->i_lock);
	if ((state & (I_DIRTY_SYNC | I_DIRTY_DATASYNC)) &&
	    (!datasync || (state & I_DIRTY_DATASYNC))) {
		err = sync_inode_metadata(inode, 1);
		if (!ret)
			ret = err;
	}
	err = uf_bdev_flush(f->dev->bdev);
	if (!ret)
		ret = err;
	err = errseq_check_and_advance(&inode->i_data.wb_err,
				       &inode->f_wb_err);
	return err ? err : ret;
}

int uf_fsync(struct uf_file *f)
{
	if (!file_ok(f))
		return -EBADF;
	return file_fsync(f, false);
}

int uf_fdatasync(struct uf_file *f)
{
	if (!file_ok(f))
		return -EBADF;
	return file_fsync(f, true);
}

int uf_file_mark_inode_dirty(struct uf_file *f, unsigned int flags)
{
	if (!file_ok(f))
		return -EBADF;
	if (!flags || (flags & ~(UF_I_DIRTY_SYNC | UF_I_DIRTY_DATASYNC)))
		return -EINVAL;
	__mark_inode_dirty(&f->inode, (int)flags);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Pages                                                               */

/* The page handle is the struct page; it must belong to an open cache. */
static struct uf_cache *page_cache_of(struct uf_page *p)
{
	int i;

	for (i = 0; i < UF_MAX_CACHES; i++) {
		struct uf_cache *c = &caches[i].cache;

		if (__atomic_load_n(&caches[i].in_use, __ATOMIC_ACQUIRE) &&
		    c->pool.pages && in_table(p, c->pool.pages,
					      c->pool.nr * sizeof(struct page),
					      sizeof(struct page)))
			return c;
	}
	return NULL;
}

/*
 * A page handle is good while its holder has not put it: uf_users counts
 * the references handed out, so a second put (or use after put) is -EBADF
 * instead of stealing the page cache's own reference.
 */
static bool page_ok(struct uf_page *p)
{
	struct page *page = (struct page *)p;

	return p && page_cache_of(p) &&
	       __atomic_load_n(&page->uf_users, __ATOMIC_ACQUIRE) > 0;
}

/* Take one handed-out reference back; false if none is left. */
static bool page_user_put(struct page *page)
{
	unsigned int n = __atomic_load_n(&page->uf_users, __ATOMIC_ACQUIRE);

	while (n) {
		if (__atomic_compare_exchange_n(&page->uf_users, &n, n - 1,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return true;
	}
	return false;
}

/* A cached page as it is, or a new one zeroed instead of read. */
static struct page *page_get_noread(struct uf_file *f, unsigned long index)
{
	struct inode *inode = &f->inode;
	struct page *page;

	page = find_or_create_page(inode->i_mapping, index);
	if (!page)
		return NULL;
	if (!PageUptodate(page)) {
		memset(page_address(inode_cache(inode), page), 0, PAGE_SIZE);
		SetPageUptodate(page);
	}
	unlock_page(page);
	return page;
}

int uf_page_get(struct uf_file *f, unsigned long index, unsigned int flags,
		struct uf_page **out)
{
	struct page *page;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!file_ok(f))
		return -EBADF;
	if (flags & ~(UF_PAGE_NOREAD | UF_PAGE_NOCREATE | UF_PAGE_WRITE))
		return -EINVAL;
	if (index >= (unsigned long)(f->inode.i_size >> PAGE_SHIFT))
		return -EFBIG;
	if (flags & UF_PAGE_NOCREATE) {
		page = find_get_page(f->inode.i_mapping, index);
		if (!page)
			return -ENOENT;
	} else if (flags & UF_PAGE_NOREAD) {
		page = page_get_noread(f, index);
		if (!page)
			return -ENOMEM;
	} else {
		ret = read_cache_page(f->inode.i_mapping, index, &page);
		if (ret)
			return ret;
	}
	if (flags & UF_PAGE_WRITE) {
		lock_page(page);
		wait_on_page_writeback(page);
		SetPageOwnerPriv1(page);
	}
	__atomic_add_fetch(&page->uf_users, 1, __ATOMIC_ACQ_REL);
	*out = (struct uf_page *)page;
	return 0;
}

void *uf_page_data(struct uf_page *p)
{
	struct uf_cache *c;

	if (!page_ok(p))
		return NULL;
	c = page_cache_of(p);
	return c ? page_address(c, (struct page *)p) : NULL;
}

int uf_page_set_dirty(struct uf_page *p)
{
	struct page *page = (struct page *)p;

	if (!page_ok(p))
		return -EBADF;
	if (!PageOwnerPriv1(page))
		return -EPERM;	/* only a page taken with UF_PAGE_WRITE */
	if (!page->mapping)
		return -EBADF;	/* its file was closed */
	SetPageUptodate(page);
	set_page_dirty(page);
	return 0;
}

int uf_page_put(struct uf_page *p)
{
	struct page *page = (struct page *)p;
	struct address_space *mapping;
	struct uf_cache *c;
	bool dirtied = false;

	if (!page_ok(p) || !page_user_put(page))
		return -EBADF;
	c = page_cache_of(p);
	mapping = page->mapping;
	if (TestClearPageOwnerPriv1(page)) {
		dirtied = PageDirty(page);
		unlock_page(page);
	}
	put_page(c, page);
	if (dirtied && mapping)
		balance_dirty_pages_ratelimited(mapping);
	return 0;
}
