/* SPDX-License-Identifier: MIT */
/*
 * engine/mm/pagemap.h - the page cache, frame allocator and LRU entry points
 * that mm.h and writeback.h do not declare: the parts of the kernel's
 * include/linux/pagemap.h, gfp.h, swap.h and fs.h (generic_perform_write,
 * do_generic_file_read) that uflush needs.
 *
 * Implemented in engine/mm/page_alloc.c, filemap.c, swap.c and vmscan.c.
 *
 * Conventions, as in the kernel:
 *  - a page returned by a lookup carries a reference the caller drops with
 *    put_page(); "lock" variants also return it locked (PG_locked);
 *  - the page cache itself holds one reference on every page in a mapping;
 *  - allocation may enter direct reclaim and sleep: never call it holding a
 *    spinlock_t.
 * The uf_cache of a page's mapping is inode_cache(mapping->host); pages
 * and the LRU are handled through the cache explicitly (put_page(c, page)),
 * since a page descriptor does not say which pool it belongs to.
 */
#ifndef UF_PAGEMAP_H
#define UF_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fs/fs.h"
#include "mm/mm.h"

/* mm/vmscan.c's batch: pages isolated from an LRU list at a time. */
#define SWAP_CLUSTER_MAX	32UL

/* ---- engine/mm/page_alloc.c ---- */

/*
 * A frame with one reference.  When none is free: queue for one, direct
 * reclaim (try_to_free_pages), wake the flushers for dirty pages, and
 * sleep on pool.free_wait until something may be freeable, for as long as
 * it takes.  NULL (-ENOMEM) only when every frame is pinned through
 * uf_page_get (page->uf_users), checked after a reclaim that freed nothing.
 */
struct page *alloc_page(struct uf_cache *c);
/*
 * GFP_NOWAIT: a free frame or NULL, never reclaim or a wait (kswapd is
 * woken below the low watermark, as alloc_page() does).
 */
struct page *alloc_page_nowait(struct uf_cache *c);

/* ---- engine/mm/filemap.c ---- */

static inline struct uf_cache *mapping_cache(struct address_space *mapping)
{
	return inode_cache(mapping->host);
}

/* The device that backs a mapping (mapping->backing_dev_info). */
struct backing_dev_info *mapping_bdi(struct address_space *mapping);

/* alloc_page() for a page of @mapping; NULL means -ENOMEM. */
struct page *page_cache_alloc(struct address_space *mapping);

/*
 * Insert a locked page at @index: takes the page cache's reference, sets
 * ->mapping and ->index.  -EEXIST if a page is already there.
 */
int add_to_page_cache_locked(struct page *page, struct address_space *mapping,
			     unsigned long index);
/* As above for a new page: locks it, and puts it on the inactive list. */
int add_to_page_cache_lru(struct page *page, struct address_space *mapping,
			  unsigned long index);
/* Remove a locked page; the caller holds mapping->tree_lock (__) or not. */
void __delete_from_page_cache(struct page *page);
void delete_from_page_cache(struct page *page);

/*
 * 6.18's largest page-cache folio, 1 << MAX_PAGECACHE_ORDER pages (2 MiB
 * at 4 KiB pages: HPAGE_PMD_ORDER on x86-64, include/linux/pagemap.h), the
 * order both a raw block device's mapping (block/bdev.c
 * set_init_blocksize: mapping_set_folio_min_order, max MAX_PAGECACHE_ORDER)
 * and an ext4 file's (fs/ext4/inode.c ext4_set_inode_mapping_order) allow.
 */
#define MAX_PAGECACHE_ORDER	9

/*
 * The largest folio order a buffered write into @mapping may use:
 * MAX_PAGECACHE_ORDER under bdp=mainline (6.18's write path), 0 under the
 * 3.x presets, whose page caches have 4 KiB pages only (page-writeback.c).
 */
unsigned int mapping_max_folio_order(const struct address_space *mapping);

/* Up to @nr_pages pages from @start (resp. tagged @tag from *@index, which
 * is moved past the last one found), each with a reference. */
unsigned int find_get_pages(struct address_space *mapping,
			    unsigned long start, unsigned int nr_pages,
			    struct page **pages);
unsigned int find_get_pages_tag(struct address_space *mapping,
				unsigned long *index, int tag,
				unsigned int nr_pages, struct page **pages);

/* Find page @index, or create it (locked, maybe not uptodate).  NULL means
 * -ENOMEM. */
struct page *find_or_create_page(struct address_space *mapping,
				 unsigned long index);

/* Sleep until @bit_nr (PG_locked, PG_writeback) of page->flags is clear. */
void wait_on_page_bit(struct page *page, int bit_nr);
/* Wake the waiters of @bit_nr of this page. */
void wake_up_page(struct page *page, int bit_nr);
void __lock_page(struct page *page);

/*
 * Read a locked page from the device, synchronously (->readpage): the page
 * is uptodate on return 0, PG_error and not uptodate on -EIO.  Unlocks the
 * page either way, as ->readpage does.
 */
int mpage_readpage(struct page *page);

/*
 * Page @index, uptodate, with a reference: found, or created and read from
 * the device.  -EFBIG past i_size, -ENOMEM, -EIO (the page is dropped).
 */
int read_cache_page(struct address_space *mapping, unsigned long index,
		    struct page **pagep);

/*
 * The write path's page, locked, referenced and not under writeback (stable
 * pages).  NULL means -ENOMEM.  May not be uptodate.
 */
struct page *grab_cache_page_write_begin(struct address_space *mapping,
					 unsigned long index);

/*
 * Prepare to copy @len bytes at @pos (within one page): the page of
 * grab_cache_page_write_begin(), read from the device first when the copy
 * covers only part of a page that is not uptodate.  -ENOMEM, -EIO.
 * With @len == 0 the page is always made uptodate (read if needed).
 */
int block_write_begin(struct address_space *mapping, loff_t pos,
		      unsigned int len, struct page **pagep);
/* After the copy: uptodate, set_page_dirty(), unlock, put.  Returns
 * set_page_dirty()'s answer: 1 if the page turned dirty. */
int block_write_end(struct address_space *mapping, struct page *page);

/*
 * Tests only: called in the middle of each copy out of a frame by
 * filemap_read(), so a test can change the frame under a copy.  NULL.
 */
extern void (*filemap_copy_hook)(struct page *page);

/* uf_pread / uf_pwrite: bytes copied, or -errno if none was. */
ssize_t filemap_read(struct inode *inode, void *buf, size_t len, loff_t pos);
ssize_t generic_perform_write(struct inode *inode, const void *buf,
			      size_t len, loff_t pos);

/* Wait for writeback of the pages in [start, end] (bytes, inclusive); the
 * mapping's error state (AS_EIO / AS_ENOSPC), cleared. */
int filemap_fdatawait_range(struct address_space *mapping, loff_t start,
			    loff_t end);
int filemap_write_and_wait_range(struct address_space *mapping, loff_t start,
				 loff_t end);

/* ---- engine/mm/swap.c ---- */

/*
 * The LRU list lengths change under pool.lru_lock but are read without it
 * (reclaim's list balance, statistics), so every access is atomic.
 */
static inline void lru_count_mod(struct page_pool *pool, bool active,
				 long delta)
{
	__atomic_add_fetch(active ? &pool->nr_active : &pool->nr_inactive,
			   (unsigned long)delta, __ATOMIC_RELAXED);
}

static inline unsigned long lru_count(struct page_pool *pool, bool active)
{
	return __atomic_load_n(active ? &pool->nr_active : &pool->nr_inactive,
			       __ATOMIC_RELAXED);
}

/* A new page goes to the head of the inactive file list (PG_lru). */
void lru_cache_add(struct uf_cache *c, struct page *page);
/* First access: PG_referenced; second: move to the active list. */
void mark_page_accessed(struct uf_cache *c, struct page *page);
void activate_page(struct uf_cache *c, struct page *page);
/* A PG_reclaim page finished writeback: to the inactive tail, reclaimed
 * next.  Never sleeps (runs on the I/O completion thread). */
void rotate_reclaimable_page(struct uf_cache *c, struct page *page);
/* Take a page whose count reached 0 off its LRU list. */
void __page_cache_release(struct uf_cache *c, struct page *page);

/* ---- engine/mm/vmscan.c ---- */

/*
 * Direct reclaim: free up to @nr_to_reclaim clean, unused page cache pages,
 * oldest first.  What is done with dirty and writeback pages is the
 * cache's reclaim variant (mm/vmscan.h).  Returns the number freed.
 */
unsigned long try_to_free_pages(struct uf_cache *c,
				unsigned long nr_to_reclaim);

#endif /* UF_PAGEMAP_H */
