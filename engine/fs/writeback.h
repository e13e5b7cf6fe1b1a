/* SPDX-License-Identifier: MIT */
/*
 * engine/fs/writeback.h - include/linux/writeback.h: writeback_control, the
 * writeback works, reasons, and the entry points of fs-writeback.c and
 * page-writeback.c.
 */
#ifndef UF_WRITEBACK_H
#define UF_WRITEBACK_H

#include <limits.h>
#include <stdbool.h>

#include "mm/backing-dev.h"
#include "kernel/completion.h"
#include "fs/fs.h"
#include "lib/list.h"
#include "mm/mm.h"

enum writeback_sync_modes {
	WB_SYNC_NONE,	/* don't wait on anything */
	WB_SYNC_ALL,	/* wait on every mapping (data integrity) */
};

/* Why a work was started (the trace's reason=). */
enum wb_reason {
	WB_REASON_BACKGROUND,
	WB_REASON_TRY_TO_FREE_PAGES,
	WB_REASON_SYNC,
	WB_REASON_PERIODIC,
	WB_REASON_LAPTOP_TIMER,
	WB_REASON_FREE_MORE_MEM,
	WB_REASON_FS_FREE_SPACE,
	WB_REASON_FORKER_THREAD,
	WB_REASON_PAGEOUT,	/* seed 003: a pageout work from reclaim */
	WB_REASON_VMSCAN,	/* mainline: reclaim met only unqueued dirty */
	WB_REASON_MAX,
};

extern const char *const wb_reason_name[WB_REASON_MAX];

/* How one inode is written: fs-writeback.c fills it, writepages uses it. */
struct writeback_control {
	long nr_to_write;		/* pages left in this slice */
	long pages_skipped;		/* pages not written */
	loff_t range_start;
	loff_t range_end;
	enum writeback_sync_modes sync_mode;
	unsigned for_kupdate:1;
	unsigned for_background:1;
	unsigned tagged_writepages:1;	/* tag-and-write to avoid livelock */
	unsigned for_reclaim:1;
	unsigned range_cyclic:1;	/* resume at writeback_index */
};

/* One queued writeback request (fs/fs-writeback.c). */
struct wb_writeback_work {
	long nr_pages;
	struct super_block *sb;
	unsigned long *older_than_this;
	enum writeback_sync_modes sync_mode;
	unsigned int tagged_writepages:1;
	unsigned int for_kupdate:1;
	unsigned int range_cyclic:1;
	unsigned int for_background:1;
	enum wb_reason reason;

	struct list_head list;		/* pending work list */
	struct completion *done;	/* set if the caller waits */

	/* seed 003 (S003:L594-595): a pageout work writes [offset,
	 * offset + nr_pages) of inode; it comes from the reserve */
	struct inode *inode;
	unsigned long offset;
	unsigned int from_reserve:1;
};

/* ---- engine/fs/fs-writeback.c ---- */
long wb_do_writeback(struct bdi_writeback *wb, int force_wait);
long wb_writeback(struct bdi_writeback *wb, struct wb_writeback_work *work);
void bdi_queue_work(struct backing_dev_info *bdi,
		    struct wb_writeback_work *work);
void bdi_start_writeback(struct backing_dev_info *bdi, long nr_pages,
			 enum wb_reason reason);
void bdi_start_background_writeback(struct backing_dev_info *bdi);
void writeback_inodes_sb(struct super_block *sb, enum wb_reason reason);
void writeback_inodes_sb_nr(struct super_block *sb, unsigned long nr,
			    enum wb_reason reason);
void sync_inodes_sb(struct super_block *sb);
void wakeup_flusher_threads(struct uf_cache *cache, long nr_pages,
			    enum wb_reason reason);
long get_nr_dirty_pages(struct uf_cache *cache);
void inode_wb_list_del(struct inode *inode);
/*
 * The flusher's write of one inode of b_io: writeback_sb_inodes' loop
 * body, as its requeue tests drive it.  list_lock and i_lock held (and
 * held again on return); under requeue=mainline the inode must not be
 * under I_SYNC.  dirtied_before: the pass's start (requeue hook).
 */
int writeback_inode_flusher(struct inode *inode, struct bdi_writeback *wb,
			    struct writeback_control *wbc,
			    unsigned long dirtied_before);

/* Seed 003 pageout works (fs-writeback.c).  flush_inode_page(): >0 an
 * existing work covers or was extended to @page (its 1-based position
 * among the inode's works, newest first), 0 a new work was queued,
 * -ENOENT the inode is going away, -ENOMEM the 1024-work reserve is
 * empty.  Never sleeps with @wait false (reclaim). */
#define WB_WORK_RESERVE		1024
#define PAGEOUT_DEPTH_LIMIT	100
long flush_inode_page(struct address_space *mapping, struct page *page,
		      bool wait);
bool extend_writeback_range(struct wb_writeback_work *work,
			    unsigned long offset, unsigned long unit);
unsigned long pageout_unit(struct backing_dev_info *bdi);
long wb_flush_inode(struct bdi_writeback *wb, struct wb_writeback_work *work);
void wb_work_free(struct wb_writeback_work *work);
unsigned long wb_work_reserve_free(void);
bool igrab(struct inode *inode);
void iput(struct inode *inode);
/* Wait until no pageout work holds @inode (eviction, after I_FREEING). */
void inode_wait_for_pageout(struct inode *inode);

/* ---- engine/mm/page-writeback.c ---- */
void global_dirty_limits(struct uf_cache *cache, unsigned long *pbackground,
			 unsigned long *pdirty);
unsigned long bdi_dirty_limit(struct backing_dev_info *bdi,
			      unsigned long dirty);
bool over_bground_thresh(struct backing_dev_info *bdi);
void balance_dirty_pages_ratelimited(struct address_space *mapping);
int do_writepages(struct address_space *mapping,
		  struct writeback_control *wbc);
int write_cache_pages(struct address_space *mapping,
		      struct writeback_control *wbc);
int set_page_dirty(struct page *page);
int clear_page_dirty_for_io(struct page *page);
void account_page_dirtied(struct page *page, struct address_space *mapping);
void account_page_writeback(struct page *page);
int test_clear_page_writeback(struct page *page);
unsigned int test_clear_pages_writeback(struct address_space *mapping,
					struct page **pages,
					unsigned int nr);
int test_set_page_writeback(struct page *page);
void test_set_pages_writeback_tags(struct address_space *mapping,
				   struct page **pages, unsigned int nr);
void tag_pages_for_writeback(struct address_space *mapping,
			     unsigned long start, unsigned long end);
void bdi_update_bandwidth(struct backing_dev_info *bdi,
			  unsigned long start_time);
bool bdi_bandwidth_per_pass(struct backing_dev_info *bdi);
long writeback_chunk_size(struct backing_dev_info *bdi,
			  struct wb_writeback_work *work);

/* ---- engine/mm/filemap.c ---- */
int filemap_fdatawrite(struct address_space *mapping);
int filemap_fdatawrite_range(struct address_space *mapping, loff_t start,
			     loff_t end);
int filemap_fdatawait(struct address_space *mapping);
int filemap_write_and_wait(struct address_space *mapping);
int filemap_check_errors(struct address_space *mapping);
void lock_page(struct page *page);
bool trylock_page(struct page *page);
void unlock_page(struct page *page);
void wait_on_page_writeback(struct page *page);
void end_page_writeback(struct page *page);
void end_pages_writeback(struct address_space *mapping, struct page **pages,
			 unsigned int nr);
void mapping_set_error(struct address_space *mapping, int error);
struct page *find_get_page(struct address_space *mapping,
			   unsigned long index);
struct page *find_lock_page(struct address_space *mapping,
			    unsigned long index);
/* A cached page that holds its data (uptodate), or NULL; waits for a read
 * in flight.  Never starts I/O. */
struct page *find_get_page_uptodate(struct address_space *mapping,
				    unsigned long index);
void truncate_inode_pages(struct address_space *mapping, loff_t lstart);

static inline bool mapping_tagged(struct address_space *mapping, int tag)
{
	bool ret;

	spin_lock(&mapping->tree_lock);
	ret = radix_tree_tagged(&mapping->page_tree, tag);
	spin_unlock(&mapping->tree_lock);
	return ret;
}

#endif /* UF_WRITEBACK_H */
