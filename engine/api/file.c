// SPDX-License-Identifier: MIT
/*
 * engine/api/file.c - struct uf_file: an inode over a byte range of a
 * device; open, evict and close, and the system calls on it (pwrite,
 * pread, fsync, the inode's dirtying, stats).
 */
#include "api/handle.h"
#include "mm/dirty-throttle.h"

struct inode *uf_file_inode(struct uf_file *h)
{
	return with_handle(file_get, h, f, NULL, &f->inode);
}

static int file_stats(struct uf_file *f, struct uf_file_stats *st)
{
	struct address_space *m = &f->inode.i_data;

	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->nr_pages = __atomic_load_n(&m->nrpages, __ATOMIC_RELAXED);
	st->pages_written = __atomic_load_n(&m->nr_written, __ATOMIC_RELAXED);
	st->at_jiffies = jiffies;
	st->at_ns = uf_now_ns();
	return 0;
}

int uf_file_stats(struct uf_file *h, struct uf_file_stats *st)
{
	return with_file(h, f, file_stats(f, st));
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

/* Never freed, like the slots (64 KiB of shards per 1024 files). */
static struct uf_file *file_chunk_alloc(uint32_t n)
{
	struct uf_file *chunk = kzalloc(FILE_CHUNK * sizeof(*chunk));
	int64_t *users = kzalloc(HSLOT_SHARDS * FILE_CHUNK * sizeof(*users));
	uint32_t j;

	if (!chunk || !users) {
		kfree(chunk);
		kfree(users);
		return NULL;
	}
	for (j = 0; j < FILE_CHUNK; j++) {
		chunk[j].idx = n * FILE_CHUNK + j;
		chunk[j].h.users = &users[j];
		chunk[j].h.stride = FILE_CHUNK;
	}
	return chunk;
}

static struct uf_file *file_slot_get(void)
{
	struct uf_file *f = NULL, *chunk;
	int i, j;

	pthread_mutex_lock(&handles_lock);
	for (i = 0; i < FILE_CHUNKS && !f; i++) {
		chunk = file_chunks[i];
		if (!chunk) {
			chunk = file_chunk_alloc((uint32_t)i);
			if (!chunk)
				break;
			__atomic_store_n(&file_chunks[i], chunk,
					 __ATOMIC_RELEASE);
		}
		for (j = 0; j < FILE_CHUNK && !f; j++) {
			if (hslot_claim(&chunk[j].h)) {
				f = &chunk[j];
				memset(&f->inode, 0, sizeof(f->inode));
				f->dev = NULL;
			}
		}
	}
	pthread_mutex_unlock(&handles_lock);
	return f;
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

	mapping->host = inode;
	INIT_RADIX_TREE(&mapping->page_tree, 0);
	spin_lock_init(&mapping->tree_lock);
	seqcount_init(&mapping->tree_seq);
	mapping->backing_dev_info = &d->bdi;
	inode->f_wb_err = errseq_sample(&mapping->wb_err);
}

static int file_open(struct uf_dev *d, uint64_t ino, uint64_t dev_offset,
		     uint64_t length, const struct uf_file_ops *ops,
		     void *priv, struct uf_file **out)
{
	struct uf_file *f;
	uint64_t len;
	int ret;

	if (dev_offset % PAGE_SIZE || !length || length > (uint64_t)LLONG_MAX)
		return -EINVAL;
	len = (length + PAGE_SIZE - 1) & PAGE_MASK;
	if (len > d->size || dev_offset > d->size - len)
		return -ERANGE;
	f = file_slot_get();
	if (!f)
		return -EMFILE;
	uf_mutex_lock(&d->files_lock);
	/* a device closed since dev_get() takes no new files */
	ret = __atomic_load_n(&d->h.state, __ATOMIC_ACQUIRE) & S_LIVE ?
	      check_file_conflict(d, ino, dev_offset, dev_offset + len) :
	      -EBADF;
	if (ret) {
		uf_mutex_unlock(&d->files_lock);
		hslot_release(&f->h);
		return ret;
	}
	inode_init(f, d, ino, dev_offset, len);
	f->inode.ops = ops;
	f->inode.priv = priv;
	f->inode.handle = h_make(H_FILE, f->idx, hslot_gen(&f->h));
	f->dev = d;
	spin_lock(&d->sb.s_inode_list_lock);
	list_add_tail(&f->inode.i_sb_list, &d->sb.s_inodes);
	__atomic_add_fetch(&d->sb.s_nr_inodes, 1, __ATOMIC_RELAXED);
	spin_unlock(&d->sb.s_inode_list_lock);
	__atomic_add_fetch(&d->nr_files, 1, __ATOMIC_ACQ_REL);
	hslot_publish(&f->h);
	uf_mutex_unlock(&d->files_lock);
	*out = f->inode.handle;
	return 0;
}

int uf_file_open(struct uf_dev *h, uint64_t ino, uint64_t dev_offset,
		 uint64_t length, const struct uf_file_ops *ops, void *priv,
		 struct uf_file **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	return with_dev(h, d,
			file_open(d, ino, dev_offset, length, ops, priv, out));
}

/*
 * evict(): write everything, take the inode off the writeback lists under
 * I_FREEING (after any running writeback of it), drop its pages.
 */
static int file_evict(struct uf_file *f)
{
	struct inode *inode = &f->inode;
	int ret = 0;

	/* a discarding cache close: I_FREEING keeps the flusher off, and
	 * the truncate below cancels the dirty pages unwritten */
	if (!__atomic_load_n(&cache_slot_of(f->dev->cache)->discard,
			     __ATOMIC_RELAXED))
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

/*
 * Close generation gen of the file: new calls get -EBADF at once; the calls
 * in flight (an fsync waiting for I/O, a writer in the dirty throttle) and
 * UF_PAGE_WRITE page handles are waited for; then the inode is evicted.
 * Nothing is held while waiting, so the flusher and the throttled writers
 * keep going.
 */
int file_close_gen(struct uf_file *f, uint64_t gen)
{
	struct uf_dev *d;
	int ret, err;

	if (!hslot_kill(&f->h, gen))
		return -EBADF;
	hslot_drain(&f->h);
	d = f->dev;
	uf_mutex_lock(&d->files_lock);
	ret = file_evict(f);
	err = errseq_check_and_advance(&f->inode.i_data.wb_err,
				       &f->inode.f_wb_err);
	spin_lock(&d->sb.s_inode_list_lock);
	list_del_init(&f->inode.i_sb_list);
	__atomic_sub_fetch(&d->sb.s_nr_inodes, 1, __ATOMIC_RELAXED);
	spin_unlock(&d->sb.s_inode_list_lock);
	radix_tree_destroy(&f->inode.i_data.page_tree);
	uf_mutex_unlock(&d->files_lock);
	hslot_release(&f->h);
	/* last: a cache close waits for this before the device goes */
	__atomic_sub_fetch(&d->nr_files, 1, __ATOMIC_ACQ_REL);
	wake_up_all(&handles_wq);
	return err ? err : (ret == -EIO ? 0 : ret);
}

int uf_file_close(struct uf_file *h)
{
	uint64_t gen;
	uint32_t idx;
	struct uf_file *f;
	int ret;

	if (!h_decode(h, H_FILE, &idx, &gen))
		return -EBADF;
	f = file_at(idx);
	if (!f || s_gen(__atomic_load_n(&f->h.state, __ATOMIC_ACQUIRE)) != gen)
		return -EBADF;
	if (closing_from_callback(NULL, NULL, f))
		return -EDEADLK;
	ret = close_busy(NULL, f, "uf_file_close");
	return ret ? ret : file_close_gen(f, gen);
}

/* A write's arguments: 1 to go on, 0 for nothing to write, or -errno. */
static inline ssize_t file_pwrite_check(struct uf_file *f, const void *buf,
					size_t len, uint64_t offset)
{
	if (!buf && len)
		return -EINVAL;
	if (len > SSIZE_MAX || offset > (uint64_t)f->inode.i_size ||
	    len > (uint64_t)f->inode.i_size - offset)
		return -EFBIG;
	return len ? 1 : 0;
}

static ssize_t file_pwrite(struct uf_file *f, const void *buf, size_t len,
			   uint64_t offset)
{
	ssize_t ret = file_pwrite_check(f, buf, len, offset);

	if (ret <= 0)
		return ret;
	return generic_perform_write(&f->inode, buf, len, (loff_t)offset);
}

ssize_t uf_pwrite(struct uf_file *h, const void *buf, size_t len,
		  uint64_t offset)
{
	return with_file(h, f, file_pwrite(f, buf, len, offset));
}

static ssize_t file_pread(struct uf_file *f, void *buf, size_t len,
			  uint64_t offset)
{
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

ssize_t uf_pread(struct uf_file *h, void *buf, size_t len, uint64_t offset)
{
	return with_file(h, f, file_pread(f, buf, len, offset));
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

int uf_fsync(struct uf_file *h)
{
	return with_file(h, f, file_fsync(f, false));
}

int uf_fdatasync(struct uf_file *h)
{
	return with_file(h, f, file_fsync(f, true));
}

static int file_mark_inode_dirty(struct uf_file *f, unsigned int flags)
{
	if (!flags || (flags & ~(UF_I_DIRTY_SYNC | UF_I_DIRTY_DATASYNC)))
		return -EINVAL;
	__mark_inode_dirty(&f->inode, (int)flags);
	return 0;
}

int uf_file_mark_inode_dirty(struct uf_file *h, unsigned int flags)
{
	return with_file(h, f, file_mark_inode_dirty(f, flags));
}

static ssize_t file_pwrite_nb(struct uf_file *f, const void *buf, size_t len,
			      uint64_t offset, uint64_t *pause_ns)
{
	unsigned long nr_pages;
	long pause;
	ssize_t n;

	if (!pause_ns)
		return -EINVAL;
	*pause_ns = 0;
	n = file_pwrite_check(f, buf, len, offset);
	if (n <= 0)
		return n;
	nr_pages = (unsigned long)(((offset + len - 1) >> PAGE_SHIFT) -
				   (offset >> PAGE_SHIFT) + 1);
	if (balance_dirty_pages_nowait_begin(f->inode.i_mapping, nr_pages,
					     &pause)) {
		*pause_ns = (uint64_t)jiffies_to_usecs((unsigned long)pause) *
			    1000;
		return -EAGAIN;
	}
	n = generic_perform_write(&f->inode, buf, len, (loff_t)offset);
	balance_dirty_pages_nowait_end();
	return n;
}

ssize_t uf_pwrite_nb(struct uf_file *h, const void *buf, size_t len,
		     uint64_t offset, uint64_t *pause_ns)
{
	return with_file(h, f, file_pwrite_nb(f, buf, len, offset, pause_ns));
}
