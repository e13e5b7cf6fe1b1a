// SPDX-License-Identifier: MIT
/*
 * engine/api/dev.c - struct uf_dev: a block device (or a file) in a cache,
 * its bdi, superblock and flusher; open, close (after its files), the
 * s_umount hold, shaping, stats and the bdi's sysfs tunables.
 */
#include "api/handle.h"
#include "mm/dirty-throttle.h"

static struct uf_dev *dev_slot_get(void)
{
	struct uf_dev *d = claim_slot(devs);

	/* all but the slot, which stale callers may touch */
	if (d)
		memset((char *)d + sizeof(d->h), 0, sizeof(*d) - sizeof(d->h));
	return d;
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
	struct uf_bdev_limits lim;
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
	/* a pool whose frames alias each other would write garbage */
	if (c->pool.no_data && uf_bdev_keeps_data(d->bdev)) {
		pr_err("dev %s: the cache's frames hold no data (frames=\"none\"); only a device that discards data (sim, keep_data=0) may be opened on it",
		       path);
		uf_bdev_close(d->bdev);
		return -EINVAL;
	}
	uf_bdev_size(d->bdev, &d->size);
	/* best effort: where the engine cannot, requests pin their pages */
	uf_bdev_register_memory(d->bdev, c->pool.frames,
				c->pool.nr << PAGE_SHIFT);
	d->cache = c;
	devt = dev_number(path, d);
	snprintf(name, sizeof(name), "%u:%u", major(devt), minor(devt));
	bdi_init(&d->bdi, c, d->bdev, name);
	/* requests stay within the queue's limits: one the block layer
	 * would split cannot be issued without blocking */
	if (!uf_bdev_limits(d->bdev, &lim)) {
		if (lim.max_pages && (!d->bdi.max_io_pages ||
				      lim.max_pages < d->bdi.max_io_pages))
			d->bdi.max_io_pages = lim.max_pages;
		d->bdi.max_segments = lim.max_segments;
		d->bdi.max_segment_pages = lim.max_segment_size >> PAGE_SHIFT;
	}
	/* the congestion thresholds are over the requests it takes */
	uf_bdev_queue_depth(d->bdev, &d->bdi.nr_requests);
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

int uf_dev_open(struct uf_cache *h, const char *path,
		const struct uf_dev_config *cfg, struct uf_dev **out)
{
	struct uf_cache_slot *s;
	struct uf_dev *d;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	s = cache_get(h);
	if (!s)
		return -EBADF;
	ret = -EINVAL;
	if (!path || (cfg && (cfg->flags & ~(UF_DEV_FORCE | UF_DEV_SHAPED |
					     UF_DEV_NO_FLUSHER))))
		goto out;
	ret = -EMFILE;
	d = dev_slot_get();
	if (!d)
		goto out;
	ret = dev_setup(d, &s->cache, path, cfg);
	if (ret) {
		hslot_release(&d->h);
		goto out;
	}
	/* before the cache's user is dropped: its close counts this one */
	__atomic_add_fetch(&s->nr_devs, 1, __ATOMIC_ACQ_REL);
	*out = h_make(H_DEV, (uint32_t)(d - devs), hslot_publish(&d->h));
out:
	hslot_put(&s->h);
	return ret;
}

/* sync(2) for one device: write, wait, flush the device cache. */
int dev_sync(struct uf_dev *d)
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

/* d->umount from @from to @to, unless someone moved it first. */
static bool dev_umount_move(struct uf_dev *d, int from, int to)
{
	return __atomic_compare_exchange_n(&d->umount, &from, to, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static int dev_release_umount(struct uf_dev *d)
{
	if (!dev_umount_move(d, UMOUNT_HELD, UMOUNT_NONE))
		return -EINVAL;
	up_write(&d->sb.s_umount);
	return 0;
}

/* Drop a uf_dev_hold_umount() the closer inherits, so that a uf_sync()
 * waiting for s_umount can leave and the close does not wait for it
 * forever. */
static void dev_drop_umount(struct uf_dev *d)
{
	dev_release_umount(d);	/* -EINVAL: none held */
}

/* Close every file of a closing device (cache close). */
static int dev_close_files(struct uf_dev *d)
{
	struct uf_file *f;
	int ret = 0, err;
	uint32_t i;
	uint64_t gen;
	bool mine;

	for (i = 0; i < FILE_CHUNK * FILE_CHUNKS; i++) {
		f = file_at(i);
		if (!f) {
			i += FILE_CHUNK - 1;	/* chunk not allocated */
			continue;
		}
		if (!hslot_get_live(&f->h, &gen))
			continue;
		mine = f->dev == d;
		hslot_put(&f->h);
		if (!mine)
			continue;
		err = file_close_gen(f, gen);
		if (!ret && err != -EBADF)	/* -EBADF: closed meanwhile */
			ret = err;
	}
	return ret;
}

static bool dev_has_files(struct uf_dev *d)
{
	return __atomic_load_n(&d->nr_files, __ATOMIC_ACQUIRE) != 0;
}

/* The device is closed (no new calls, no new files): wait for the calls
 * in flight, close the files left (cascade), and tear it down. */
static int dev_finish_close(struct uf_dev *d, bool cascade)
{
	struct uf_cache_slot *s = cache_slot_of(d->cache);
	int ret = 0, err;

	dev_drop_umount(d);
	hslot_drain(&d->h);
	dev_drop_umount(d);	/* a hold that was in flight */
	if (cascade)
		ret = dev_close_files(d);
	wait_event(handles_wq, !dev_has_files(d));
	err = dev_sync(d);
	if (!ret)
		ret = err;
	dev_teardown(d);
	hslot_release(&d->h);
	__atomic_sub_fetch(&s->nr_devs, 1, __ATOMIC_ACQ_REL);
	wake_up_all(&handles_wq);
	return ret;
}

int dev_close_cascade(struct uf_dev *d, uint64_t gen)
{
	bool killed;

	uf_mutex_lock(&d->files_lock);
	killed = hslot_kill(&d->h, gen);
	uf_mutex_unlock(&d->files_lock);
	/* not killed: someone else's uf_dev_close; the cache waits for it */
	return killed ? dev_finish_close(d, true) : 0;
}

int uf_dev_close(struct uf_dev *h)
{
	struct uf_dev *d = dev_get(h);
	uint64_t gen = (uintptr_t)h >> H_GEN_SHIFT;
	int ret = 0;

	if (!d)
		return -EBADF;
	if (closing_from_callback(NULL, d, NULL)) {
		hslot_put(&d->h);
		return -EDEADLK;
	}
	/* under files_lock: uf_file_open checks for a closed device there */
	uf_mutex_lock(&d->files_lock);
	if (dev_has_files(d))
		ret = -EBUSY;
	else if (!hslot_kill(&d->h, gen))
		ret = -EBADF;
	uf_mutex_unlock(&d->files_lock);
	hslot_put(&d->h);
	return ret ? ret : dev_finish_close(d, false);
}

int uf_dev_set_shape(struct uf_dev *h, const struct uf_io_shape *shape)
{
	return with_dev(h, d, uf_bdev_set_shape(d->bdev, shape));
}

int uf_dev_stall(struct uf_dev *h, unsigned int ms)
{
	return with_dev(h, d, uf_bdev_stall(d->bdev, ms));
}

static int dev_hold_umount(struct uf_dev *d)
{
	if (!dev_umount_move(d, UMOUNT_NONE, UMOUNT_TAKING))
		return -EBUSY;
	down_write(&d->sb.s_umount);
	__atomic_store_n(&d->umount, UMOUNT_HELD, __ATOMIC_RELEASE);
	return 0;
}

int uf_dev_hold_umount(struct uf_dev *h)
{
	return with_dev(h, d, dev_hold_umount(d));
}

int uf_dev_release_umount(struct uf_dev *h)
{
	return with_dev(h, d, dev_release_umount(d));
}

struct backing_dev_info *uf_dev_bdi(struct uf_dev *h)
{
	return with_handle(dev_get, h, d, NULL, &d->bdi);
}

/* The device's I/O counters and the snapshot's time (issue 13). */
static void dev_fill_io_stats(struct uf_dev *d, struct uf_dev_stats *st)
{
	struct uf_bdev_io_stats io;

	st->size_bytes = d->size;
	if (!uf_bdev_io_stats(d->bdev, &io)) {
		st->io_ticks_ms = io.io_ticks_ns / 1000000;
		st->write_ios = io.nr_writes;
		st->write_bytes = io.write_bytes;
		st->fixed_ios = io.nr_fixed;
	}
	st->at_jiffies = jiffies;
	st->at_ns = uf_now_ns();
}

static int dev_stats(struct uf_dev *d, struct uf_dev_stats *st)
{
	if (!st)
		return -EINVAL;
	bdi_fill_stats(&d->bdi, st);
	dev_fill_io_stats(d, st);
	return 0;
}

int uf_dev_stats(struct uf_dev *h, struct uf_dev_stats *st)
{
	return with_dev(h, d, dev_stats(d, st));
}

static int dev_size(struct uf_dev *d, uint64_t *bytes)
{
	if (!bytes)
		return -EINVAL;
	*bytes = d->size;
	return 0;
}

int uf_dev_size(struct uf_dev *h, uint64_t *bytes)
{
	return with_dev(h, d, dev_size(d, bytes));
}

/* /sys/class/bdi/<dev>/ names, as the kernel's sysfs files */
static int dev_set_bdi_tunable(struct backing_dev_info *bdi,
			       const char *name, uint64_t value)
{
	if (!name)
		return -EINVAL;
	if (!strcmp(name, "min_ratio") || !strcmp(name, "max_ratio")) {
		if (value > 100)
			return -EINVAL;
		return name[1] == 'i' ?
		       bdi_set_min_ratio(bdi, (unsigned int)value) :
		       bdi_set_max_ratio(bdi, (unsigned int)value);
	}
	if (!strcmp(name, "min_bytes"))
		return bdi_set_min_bytes(bdi, value);
	if (!strcmp(name, "max_bytes"))
		return bdi_set_max_bytes(bdi, value);
	if (!strcmp(name, "strict_limit"))
		return value > 1 ? -EINVAL :
		       bdi_set_strict_limit(bdi, (unsigned int)value);
	return -ENOENT;
}

static int dev_get_bdi_tunable(struct backing_dev_info *bdi,
			       const char *name, uint64_t *value)
{
	if (!name || !value)
		return -EINVAL;
	if (!strcmp(name, "min_ratio"))
		*value = bdi_get_min_ratio(bdi);
	else if (!strcmp(name, "max_ratio"))
		*value = bdi_get_max_ratio(bdi);
	else if (!strcmp(name, "min_bytes"))
		*value = bdi_get_min_bytes(bdi);
	else if (!strcmp(name, "max_bytes"))
		*value = bdi_get_max_bytes(bdi);
	else if (!strcmp(name, "strict_limit"))
		*value = !!(__atomic_load_n(&bdi->capabilities,
					    __ATOMIC_RELAXED) &
			    BDI_CAP_STRICTLIMIT);
	else
		return -ENOENT;
	return 0;
}

int uf_dev_set_bdi_tunable(struct uf_dev *h, const char *name,
			   uint64_t value)
{
	return with_dev(h, d, dev_set_bdi_tunable(&d->bdi, name, value));
}

int uf_dev_get_bdi_tunable(struct uf_dev *h, const char *name,
			   uint64_t *value)
{
	return with_dev(h, d, dev_get_bdi_tunable(&d->bdi, name, value));
}
