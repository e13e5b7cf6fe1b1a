// SPDX-License-Identifier: MIT
/*
 * engine/mm/filemap.c - the page cache: mm/filemap.c (3.2 era) for uflush,
 * with the pieces of mm/truncate.c, fs/buffer.c (block_write_begin) and
 * fs/mpage.c (mpage_readpage) that a filesystem would otherwise supply.
 *
 * Kept from the kernel:
 *  - pages live in mapping->page_tree under mapping->tree_lock; a lookup
 *    takes no lock and a speculative reference (get_page_unless_zero), so
 *    reclaim's __remove_mapping() excludes it by freezing the count at 0.
 *    Where the kernel walks under RCU and re-reads the slot, find_get_page()
 *    walks under mapping->tree_seq, which inserts and deletes bump, and
 *    checks it again once it holds the reference (the tree's nodes are
 *    type-stable: lib/radix-tree.c);
 *  - PG_locked and PG_writeback waiters sleep on a small hashed table of
 *    wait queues (page_wait_slot()), with keyed wakeups so a wakeup for one
 *    page does not disturb the sleepers of another in the same bucket,
 *    and a count of sleepers per bucket so that waking a page nobody
 *    waits for takes no lock;
 *  - end_page_writeback() rotates PG_reclaim pages, then clears
 *    PG_writeback through test_clear_page_writeback() and wakes waiters;
 *  - the write path copies under the page lock after waiting for writeback
 *    (stable pages), reading the page first when the write covers only
 *    part of it (block_write_begin), then set_page_dirty() and
 *    balance_dirty_pages_ratelimited() per page, as 3.2's
 *    generic_perform_write() does; under bdp=mainline per 6.18 folio, a
 *    run of 4 KiB pages (perform_write_folios);
 *  - filemap_fdatawrite/fdatawait with WB_SYNC_ALL and the WRITEBACK tag.
 *
 * Not the kernel's: a read hit (filemap_read_hit) copies the page without
 * a reference and validates the copy with the page's page_seq (mm.h), so
 * readers of one page write nothing to it; a read that races a rewrite
 * gets one version of the page (copy_page_stable), where the kernel's may
 * get a mix.
 *
 * Simplified:
 *  - reads are synchronous and one page at a time (no readahead); a page
 *    whose read fails is dropped from the cache instead of being left
 *    !uptodate with PG_error, so a failed read holds no frame;
 *  - a file's length is fixed at open: writes past it fail with -EFBIG
 *    before anything is touched, and reads past it are short;
 *  - truncate_inode_pages() waits for locked and writeback pages in a
 *    single pass (it is only used when a file is closed).
 */
#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "mm/backing-dev.h"
#include "fs/fs.h"
#include "io/io.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "kernel/sched.h"
#include "kernel/wait.h"
#include "fs/writeback.h"

/* TSan's runtime annotations (its dynamic_annotations interface): the
 * optimistic copies' reads race with writers by design (filemap_read). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UF_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define UF_TSAN 1
#endif
#if defined(UF_TSAN)
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define tsan_ignore_reads_begin() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define tsan_ignore_reads_end()	AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define tsan_ignore_reads_begin() do { } while (0)
#define tsan_ignore_reads_end()	do { } while (0)
#endif

/* ---- page wait queues ---- */

#define PAGE_WAIT_TABLE_BITS	8
#define PAGE_WAIT_TABLE_SIZE	(1U << PAGE_WAIT_TABLE_BITS)

/*
 * Each slot counts its sleepers, so that unlock_page() and
 * end_page_writeback() on a page nobody waits for (nearly every page of a
 * streaming write) skip the queue's lock: the kernel's waitqueue_active()
 * peek in wake_up_page_bit() (6.18: PG_waiters), done on a count of our
 * own so that no list is read without its lock.  Dekker's handshake: a
 * sleeper counts itself, then (full barrier) tests the bit; a waker
 * changes the bit, then (full barrier) reads the count.
 */
struct page_wait_slot {
	wait_queue_head_t wq;
	int waiters;			/* atomic */
};

static struct page_wait_slot page_wait_table[PAGE_WAIT_TABLE_SIZE];
static pthread_once_t page_wait_table_once = PTHREAD_ONCE_INIT;

static void page_wait_table_init(void)
{
	unsigned int i;

	for (i = 0; i < PAGE_WAIT_TABLE_SIZE; i++)
		init_waitqueue_head(&page_wait_table[i].wq);
}

/* page_waitqueue(): the kernel hashes into the zone's table; one global
 * table serves every cache here. */
static struct page_wait_slot *page_wait_slot(const struct page *page)
{
	uint64_t h = (uint64_t)(uintptr_t)page * 0x9e3779b97f4a7c15ull;

	pthread_once(&page_wait_table_once, page_wait_table_init);
	return &page_wait_table[h >> (64 - PAGE_WAIT_TABLE_BITS)];
}

/* A sleeper counts itself before its first test of the bit. */
static void page_wait_begin(struct page_wait_slot *s)
{
	__atomic_add_fetch(&s->waiters, 1, __ATOMIC_SEQ_CST);
	smp_mb();
}

static void page_wait_end(struct page_wait_slot *s)
{
	__atomic_sub_fetch(&s->waiters, 1, __ATOMIC_RELEASE);
}

/* After the bit changed: may anyone sleep on the slot? (TSan: a seq_cst
 * read-modify-write, as pool_has_alloc_waiters() does it.) */
static bool page_wait_slot_active(struct page_wait_slot *s)
{
#if defined(__SANITIZE_THREAD__)
	return __atomic_fetch_add(&s->waiters, 0, __ATOMIC_ACQ_REL);
#else
	smp_mb();
	return __atomic_load_n(&s->waiters, __ATOMIC_RELAXED);
#endif
}

/* wait_bit_key / wait_bit_queue: which page and bit a sleeper waits for. */
struct wait_page_key {
	struct page *page;
	int bit_nr;
};

struct wait_page_queue {
	struct wait_page_key key;
	wait_queue_entry_t wait;
};

/* wake_bit_function(): wake only the sleepers of this page and bit, and
 * only if the bit is really clear (a woken locker may have retaken it). */
static int wake_page_function(wait_queue_entry_t *wait, unsigned int mode,
			      int sync, void *arg)
{
	struct wait_page_key *key = arg;
	struct wait_page_queue *wp =
		container_of(wait, struct wait_page_queue, wait);

	if (key && (wp->key.page != key->page ||
		    wp->key.bit_nr != key->bit_nr ||
		    test_bit(key->bit_nr, &key->page->flags)))
		return 0;
	return autoremove_wake_function(wait, mode, sync, arg);
}

static void init_wait_page_queue(struct wait_page_queue *wp,
				 struct page *page, int bit_nr)
{
	wp->key.page = page;
	wp->key.bit_nr = bit_nr;
	init_wait(&wp->wait);
	wp->wait.func = wake_page_function;
}

void wake_up_page(struct page *page, int bit_nr)
{
	struct wait_page_key key = { .page = page, .bit_nr = bit_nr };
	struct page_wait_slot *s = page_wait_slot(page);

	if (!page_wait_slot_active(s))
		return;
	/* nr_exclusive 1: one lock_page() sleeper gets the lock; every
	 * wait_on_page_bit() sleeper is non-exclusive and woken */
	__wake_up(&s->wq, TASK_NORMAL, 1, &key);
}

void wait_on_page_bit(struct page *page, int bit_nr)
{
	struct page_wait_slot *s = page_wait_slot(page);
	struct wait_page_queue wp;

	if (!test_bit(bit_nr, &page->flags))
		return;
	init_wait_page_queue(&wp, page, bit_nr);
	page_wait_begin(s);
	do {
		prepare_to_wait(&s->wq, &wp.wait, TASK_UNINTERRUPTIBLE);
		if (test_bit(bit_nr, &page->flags))
			io_schedule();
	} while (test_bit(bit_nr, &page->flags));
	finish_wait(&s->wq, &wp.wait);
	page_wait_end(s);
}

/* __lock_page(): exclusive sleepers, so unlock_page() hands the lock to
 * one of them rather than waking a herd. */
void __lock_page(struct page *page)
{
	struct page_wait_slot *s = page_wait_slot(page);
	struct wait_page_queue wp;

	init_wait_page_queue(&wp, page, PG_locked);
	page_wait_begin(s);
	for (;;) {
		prepare_to_wait_exclusive(&s->wq, &wp.wait,
					  TASK_UNINTERRUPTIBLE);
		if (PageLocked(page))
			io_schedule();
		if (!test_and_set_bit_lock(PG_locked, &page->flags))
			break;
	}
	finish_wait(&s->wq, &wp.wait);
	page_wait_end(s);
}

bool trylock_page(struct page *page)
{
	return !test_and_set_bit_lock(PG_locked, &page->flags);
}

void lock_page(struct page *page)
{
	if (!trylock_page(page))
		__lock_page(page);
}

void unlock_page(struct page *page)
{
	WARN_ON_ONCE(!PageLocked(page));
	clear_bit_unlock(PG_locked, &page->flags);
	/* wake_up_page()'s barrier is the kernel's smp_mb__after_atomic():
	 * the clear before the peek at the slot's sleepers */
	wake_up_page(page, PG_locked);
	/* no reclaim event: whoever holds the lock holds a reference too,
	 * and its put_page() says when the page becomes freeable */
}

void wait_on_page_writeback(struct page *page)
{
	if (PageWriteback(page))
		wait_on_page_bit(page, PG_writeback);
}

/*
 * end_page_writeback(): the write of this page completed (I/O completion
 * thread: must not sleep).  PG_reclaim is cleared and the page rotated
 * before PG_writeback is, so that reclaim, which skips writeback pages,
 * finds it at the tail only once it is freeable.  The cache is looked up
 * first: once PG_writeback is clear the page may be truncated and freed.
 */
void end_page_writeback(struct page *page)
{
	struct uf_cache *c = mapping_cache(page->mapping);

	if (TestClearPageReclaim(page))
		rotate_reclaimable_page(c, page);
	if (!test_clear_page_writeback(page))
		BUG_ON(1);
	uf_sim_charge(UF_SIM_COST_PAGE_OP, 1);	/* a world's CPU model */
	wake_up_page(page, PG_writeback); /* ordered as in unlock_page() */
	/* allocators waiting for reclaimable pages wait for writeback to
	 * make progress (throttled writers sleep on a timeout: 3.1's
	 * congestion_wait, 3.2's pause) */
	pool_reclaim_event(&c->pool);
	acct_reclaim_writeback(c, 1);	/* mainline's reclaim_throttle */
}

/*
 * end_page_writeback() for the @nr pages of one request (all of
 * @mapping), in the same order of steps: every PG_reclaim page is rotated
 * before its PG_writeback is cleared, then the clears and counts under
 * one tree_lock (test_clear_pages_writeback), then the wakeups.  The
 * allocators' and reclaim throttle's events once for the request: each
 * is a wakeup to re-check, which one does as well as @nr.
 */
void end_pages_writeback(struct address_space *mapping, struct page **pages,
			 unsigned int nr)
{
	struct uf_cache *c = mapping_cache(mapping);
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (TestClearPageReclaim(pages[i]))
			rotate_reclaimable_page(c, pages[i]);
	if (test_clear_pages_writeback(mapping, pages, nr) != nr)
		BUG_ON(1);
	uf_sim_charge(UF_SIM_COST_PAGE_OP, nr);	/* as end_page_writeback, each */
	for (i = 0; i < nr; i++)
		wake_up_page(pages[i], PG_writeback);
	pool_reclaim_event(&c->pool);
	acct_reclaim_writeback(c, nr);
}

/* ---- errors ---- */

void mapping_set_error(struct address_space *mapping, int error)
{
	if (!error)
		return;
	errseq_set(&mapping->wb_err, error);
	if (error == -ENOSPC)
		set_bit(AS_ENOSPC, &mapping->flags);
	else
		set_bit(AS_EIO, &mapping->flags);
}

/* filemap_check_errors(): report and clear the legacy AS_* error bits.
 * Per-opener reporting is errseq's job (mapping->wb_err). */
int filemap_check_errors(struct address_space *mapping)
{
	int ret = 0;

	if (test_bit(AS_ENOSPC, &mapping->flags) &&
	    test_and_clear_bit(AS_ENOSPC, &mapping->flags))
		ret = -ENOSPC;
	if (test_bit(AS_EIO, &mapping->flags) &&
	    test_and_clear_bit(AS_EIO, &mapping->flags))
		ret = -EIO;
	return ret;
}

/* ---- the radix tree ---- */

struct backing_dev_info *mapping_bdi(struct address_space *mapping)
{
	if (mapping->backing_dev_info)
		return mapping->backing_dev_info;
	return mapping->host->i_sb->s_bdi;
}

struct page *find_get_page(struct address_space *mapping, unsigned long index)
{
	struct uf_cache *c = mapping_cache(mapping);
	struct page *page;
	unsigned int seq;

	uf_sim_charge(UF_SIM_COST_PAGE_OP, 1);
repeat:
	seq = read_seqcount_begin(&mapping->tree_seq);
	page = radix_tree_lookup_seq(&mapping->page_tree, index,
				     &mapping->tree_seq, seq);
	if (page == RADIX_TREE_RETRY)
		goto repeat;
	if (!page) {
		if (read_seqcount_retry(&mapping->tree_seq, seq))
			goto repeat;
		return NULL;
	}
	prefetch_frame(c, page);
	/* page_cache_get_speculative(): count 0 is a page being freed or
	 * frozen by reclaim; either way look again */
	if (!get_page_unless_zero(page))
		goto repeat;
	/* the kernel re-reads the slot; here the seqcount says whether the
	 * tree still held the page when we took the reference */
	if (read_seqcount_retry(&mapping->tree_seq, seq)) {
		put_page(c, page);
		goto repeat;
	}
	return page;
}

/* The page is locked when found still in @mapping (not truncated or
 * reclaimed while we slept on its lock). */
struct page *find_lock_page(struct address_space *mapping, unsigned long index)
{
	struct page *page;

	for (;;) {
		page = find_get_page(mapping, index);
		if (!page)
			return NULL;
		lock_page(page);
		if (page->mapping == mapping && page->index == index)
			return page;
		unlock_page(page);
		put_page(mapping_cache(mapping), page);
	}
}

/*
 * The lookup of a reader that must not start I/O (uf_page_get with
 * NOCREATE): do_generic_file_read()'s page_not_up_to_date steps without
 * its ->readpage.  A page found not uptodate is under read (its reader
 * holds the lock), or its read failed, or it is a new page a writer is
 * filling: wait for the lock, then look again.  A page that left the
 * mapping meanwhile (a failed read deletes it: drop_unread_page) is looked
 * up anew; one still not uptodate holds no data and counts as not cached.
 */
struct page *find_get_page_uptodate(struct address_space *mapping,
				    unsigned long index)
{
	struct uf_cache *c = mapping_cache(mapping);
	struct page *page;
	bool gone, ok;

	for (;;) {
		page = find_get_page(mapping, index);
		if (!page || PageUptodate(page))
			return page;
		lock_page(page);
		gone = page->mapping != mapping || page->index != index;
		ok = !gone && PageUptodate(page);
		unlock_page(page);
		if (ok)
			return page;
		put_page(c, page);
		if (!gone)
			return NULL;
	}
}

unsigned int find_get_pages(struct address_space *mapping,
			    unsigned long start, unsigned int nr_pages,
			    struct page **pages)
{
	unsigned int i, ret;

	spin_lock(&mapping->tree_lock);
	ret = radix_tree_gang_lookup(&mapping->page_tree, (void **)pages,
				     start, nr_pages);
	for (i = 0; i < ret; i++)
		get_page(pages[i]);
	spin_unlock(&mapping->tree_lock);
	return ret;
}

unsigned int find_get_pages_tag(struct address_space *mapping,
				unsigned long *index, int tag,
				unsigned int nr_pages, struct page **pages)
{
	unsigned int i, ret;

	spin_lock(&mapping->tree_lock);
	ret = radix_tree_gang_lookup_tag(&mapping->page_tree, (void **)pages,
					 *index, nr_pages, (unsigned int)tag);
	for (i = 0; i < ret; i++)
		get_page(pages[i]);
	if (ret)
		*index = pages[ret - 1]->index + 1;
	spin_unlock(&mapping->tree_lock);
	return ret;
}

int add_to_page_cache_locked(struct page *page, struct address_space *mapping,
			     unsigned long index)
{
	int error;

	WARN_ON_ONCE(!PageLocked(page));
	uf_sim_charge(UF_SIM_COST_PAGE_OP, 1);
	get_page(page);		/* the page cache's reference */
	page->mapping = mapping;
	page->index = index;
	/* the frame's last folio is not this one's: a lone page until a
	 * writer says otherwise (write_one_page) */
	__atomic_store_n(&page->folio_order, 0, __ATOMIC_RELAXED);
	spin_lock(&mapping->tree_lock);
	write_seqcount_begin(&mapping->tree_seq);
	error = radix_tree_insert(&mapping->page_tree, index, page);
	write_seqcount_end(&mapping->tree_seq);
	if (!error)
		__atomic_add_fetch(&mapping->nrpages, 1, __ATOMIC_RELAXED);
	spin_unlock(&mapping->tree_lock);
	if (error) {
		page->mapping = NULL;
		put_page(mapping_cache(mapping), page);
		return error;
	}
	inc_vm_state(mapping_cache(mapping), NR_FILE_PAGES);
	return 0;
}

int add_to_page_cache_lru(struct page *page, struct address_space *mapping,
			  unsigned long index)
{
	int ret;

	/* a new page is private to us: nobody can be waiting on its lock */
	SetPageLocked(page);
	ret = add_to_page_cache_locked(page, mapping, index);
	if (ret) {
		ClearPageLocked(page);
		return ret;
	}
	lru_cache_add(mapping_cache(mapping), page);
	return 0;
}

/*
 * A new page whose whole contents a writer has already copied into its
 * frame (issue 20): add_to_page_cache_lru() and set_page_dirty()'s
 * __set_page_dirty_nobuffers() under one tree_lock, where the per-page
 * path takes it twice.  The page goes into the tree uptodate and dirty,
 * so nobody can find it locked or clean first, and it takes no page lock
 * at all (nobody else can reach it before it is complete).  The counts,
 * tag and LRU addition are those of the per-page path, in its order
 * relative to the writer's throttle call.  -EEXIST as add_to_page_cache.
 */
static int add_to_page_cache_dirty(struct page *page,
				   struct address_space *mapping,
				   unsigned long index)
{
	int error;

	uf_sim_charge(UF_SIM_COST_PAGE_OP, 1);	/* as add_to_page_cache_locked */
	get_page(page);		/* the page cache's reference */
	page->mapping = mapping;
	page->index = index;
	SetPageUptodate(page);
	SetPageDirty(page);
	spin_lock(&mapping->tree_lock);
	write_seqcount_begin(&mapping->tree_seq);
	error = radix_tree_insert(&mapping->page_tree, index, page);
	write_seqcount_end(&mapping->tree_seq);
	if (!error) {
		__atomic_add_fetch(&mapping->nrpages, 1, __ATOMIC_RELAXED);
		account_page_dirtied(page, mapping);
		radix_tree_tag_set(&mapping->page_tree, index,
				   PAGECACHE_TAG_DIRTY);
	}
	spin_unlock(&mapping->tree_lock);
	if (error) {
		ClearPageDirty(page);
		ClearPageUptodate(page);
		page->mapping = NULL;
		put_page(mapping_cache(mapping), page);
		return error;
	}
	inc_vm_state(mapping_cache(mapping), NR_FILE_PAGES);
	lru_cache_add(mapping_cache(mapping), page);
	if (mapping->host)
		__mark_inode_dirty(mapping->host, I_DIRTY_PAGES);
	return 0;
}

/*
 * __delete_from_page_cache(): under tree_lock, page locked.  The page
 * cache's reference is the caller's to drop.  A dirty page dropped here
 * (truncate) stops counting as dirty.
 */
void __delete_from_page_cache(struct page *page)
{
	struct address_space *mapping = page->mapping;
	struct uf_cache *c = mapping_cache(mapping);

	assert_spin_locked(&mapping->tree_lock);
	/* around the tree's change: a reader that copied without a
	 * reference (filemap_read_hit) learns the frame may be reused */
	page_seq_write_begin(page);
	write_seqcount_begin(&mapping->tree_seq);
	radix_tree_delete(&mapping->page_tree, page->index);
	write_seqcount_end(&mapping->tree_seq);
	page->mapping = NULL;
	page_seq_write_end(page);
	__atomic_sub_fetch(&mapping->nrpages, 1, __ATOMIC_RELAXED);
	dec_vm_state(c, NR_FILE_PAGES);
	if (PageDirty(page)) {
		dec_vm_state(c, NR_FILE_DIRTY);
		dec_bdi_stat(mapping_bdi(mapping), BDI_RECLAIMABLE);
	}
}

void delete_from_page_cache(struct page *page)
{
	struct address_space *mapping = page->mapping;
	struct uf_cache *c = mapping_cache(mapping);

	WARN_ON_ONCE(!PageLocked(page));
	spin_lock(&mapping->tree_lock);
	__delete_from_page_cache(page);
	spin_unlock(&mapping->tree_lock);
	put_page(c, page);
}

/*
 * The frames of a new folio, taken from the pool before it is written and
 * handed out in ascending order by page_cache_alloc() (folio_frames_get).
 */
struct folio_frames {
	struct page *pg[1u << MAX_PAGECACHE_ORDER];
	unsigned int nr, next;
};

struct page *page_cache_alloc(struct address_space *mapping)
{
	struct folio_frames *ff = current->folio_frames;

	if (ff && ff->next < ff->nr)
		return ff->pg[ff->next++];
	return alloc_page(mapping_cache(mapping));
}

struct page *find_or_create_page(struct address_space *mapping,
				 unsigned long index)
{
	struct page *page;
	int err;

	for (;;) {
		page = find_lock_page(mapping, index);
		if (page)
			return page;
		page = page_cache_alloc(mapping);
		if (!page)
			return NULL;
		err = add_to_page_cache_lru(page, mapping, index);
		if (!err)
			return page;
		put_page(mapping_cache(mapping), page);
		if (err != -EEXIST)
			return NULL;
	}
}

/* ---- reading ---- */

static bool index_in_file(struct inode *inode, unsigned long index)
{
	return index < ((uint64_t)inode->i_size + PAGE_SIZE - 1) >> PAGE_SHIFT;
}

/*
 * Read a locked page of its file from the device, keeping it locked.  Any
 * failure of the device (or a short read, which the I/O layer reports as
 * -EIO) is -EIO to the caller.
 */
static int __readpage(struct page *page)
{
	struct address_space *mapping = page->mapping;
	struct inode *inode = mapping->host;
	struct uf_cache *c = mapping_cache(mapping);
	ssize_t ret;

	ret = uf_bdev_pread(mapping_bdi(mapping)->bdev, page_address(c, page),
			    PAGE_SIZE, inode->dev_offset +
			    ((uint64_t)page->index << PAGE_SHIFT));
	if (ret != (ssize_t)PAGE_SIZE) {
		SetPageError(page);
		return -EIO;
	}
	ClearPageError(page);
	SetPageUptodate(page);
	return 0;
}

int mpage_readpage(struct page *page)
{
	int ret = __readpage(page);

	unlock_page(page);
	return ret;
}

/* A page that could not be read holds no data: give its frame back. */
static void drop_unread_page(struct page *page)
{
	struct uf_cache *c = mapping_cache(page->mapping);

	delete_from_page_cache(page);
	unlock_page(page);
	put_page(c, page);
}

int read_cache_page(struct address_space *mapping, unsigned long index,
		    struct page **pagep)
{
	struct uf_cache *c = mapping_cache(mapping);
	struct page *page;
	int err;

	if (!index_in_file(mapping->host, index))
		return -EFBIG;
retry:
	page = find_get_page(mapping, index);
	if (!page) {
		page = page_cache_alloc(mapping);
		if (!page)
			return -ENOMEM;
		err = add_to_page_cache_lru(page, mapping, index);
		if (err) {
			put_page(c, page);
			if (err == -EEXIST)
				goto retry;
			return err;
		}
		goto readpage;
	}
	if (PageUptodate(page))
		goto out;
	/* someone else is reading it, or failed to: wait and look again */
	lock_page(page);
	if (page->mapping != mapping) {
		unlock_page(page);
		put_page(c, page);
		goto retry;
	}
	if (PageUptodate(page)) {
		unlock_page(page);
		goto out;
	}
readpage:
	err = __readpage(page);
	if (err) {
		drop_unread_page(page);
		return err;
	}
	unlock_page(page);
out:
	mark_page_accessed(c, page);
	*pagep = page;
	return 0;
}

/*
 * The copy out of a frame that may change under it: the caller checks
 * page_seq afterwards and throws a changed copy away (the seqcount
 * reader's torn read, here of a whole frame).  TSan would report the
 * copy against the frame's writers, so its reads are hidden from it; what
 * orders the data for a copy kept is page_seq and PG_uptodate.
 */
void (*filemap_copy_hook)(struct page *page);

static void copy_from_frame(void *dst, const void *src, size_t nr,
			    struct page *page)
{
	void (*hook)(struct page *) =
		__atomic_load_n(&filemap_copy_hook, __ATOMIC_RELAXED);
	size_t half = hook ? nr / 2 : nr;

	tsan_ignore_reads_begin();
	memcpy(dst, src, half);
	tsan_ignore_reads_end();
	if (__builtin_expect(!hook, 1))
		return;
	hook(page);
	tsan_ignore_reads_begin();
	memcpy((char *)dst + half, (const char *)src + half, nr - half);
	tsan_ignore_reads_end();
}

/* mark_page_accessed() would change nothing (@flags: the page's). */
static bool page_accessed_noop(unsigned long flags)
{
	return (flags & BIT(PG_referenced)) &&
	       ((flags & BIT(PG_active)) || !(flags & BIT(PG_lru)));
}

/*
 * A hit copied with no reference taken: nothing written to a line that
 * other readers of the page read (the kernel's get_page_unless_zero and
 * put_page on struct page's count were the last such RMW of a hit).  The
 * optimistic read of vmcache and LeanStore, over page_seq (mm.h):
 *  - the lookup under tree_seq, as find_get_page(); the page's page_seq
 *    and flags are read before tree_seq is checked again, so the page was
 *    the file's page at @index, uptodate, when page_seq was read;
 *  - the copy; then page_seq again: unchanged, the page never left the
 *    mapping (which comes before any reuse of its frame) and no writer
 *    touched its bytes meanwhile, so the copy is the file's data.
 * False: nothing returned; the caller takes the referenced path.
 * mark_page_accessed() writes a flag at most twice in a page's life; then
 * a reference is taken to do it, as the kernel's caller holds one.
 */
/*
 * The lockless peek both optimistic paths start with: the page cached at
 * @index, uptodate and with no writer in it (page_seq even), its page_seq
 * and flags read before tree_seq is checked again, so that they are the
 * file's page's at @index; NULL otherwise (the caller takes the
 * referenced path).
 */
static struct page *page_cache_peek(struct address_space *mapping,
				    unsigned long index, unsigned int *pseq,
				    unsigned long *flags)
{
	unsigned int seq;
	struct page *page;

	seq = read_seqcount_begin(&mapping->tree_seq);
	page = radix_tree_lookup_seq(&mapping->page_tree, index,
				     &mapping->tree_seq, seq);
	if (!page || page == RADIX_TREE_RETRY)
		return NULL;
	*pseq = page_seq_begin(page);
	*flags = __atomic_load_n(&page->flags, __ATOMIC_ACQUIRE);
	if ((*pseq & 1) || !(*flags & BIT(PG_uptodate)) ||
	    read_seqcount_retry(&mapping->tree_seq, seq))
		return NULL;
	return page;
}

static bool filemap_read_hit(struct address_space *mapping,
			     unsigned long index, void *dst, size_t offset,
			     size_t nr)
{
	struct uf_cache *c = mapping_cache(mapping);
	unsigned int pseq;
	unsigned long flags;
	struct page *page;

	page = page_cache_peek(mapping, index, &pseq, &flags);
	if (!page)
		return false;
	copy_from_frame(dst, (char *)page_address(c, page) + offset, nr, page);
	if (page_seq_retry(page, pseq))
		return false;
	if (!page_accessed_noop(flags) && get_page_unless_zero(page)) {
		/* unchanged: still the file's page, and now held */
		if (!page_seq_retry(page, pseq))
			mark_page_accessed(c, page);
		put_page(c, page);
	}
	return true;
}

/*
 * A read-only page handle's lookup: the page cached at @index, uptodate,
 * pinned in @slot of this thread's pin table (page_pin.c) rather than
 * referenced; NULL if it is not there as such (the caller takes the
 * referenced path).  As filemap_read_hit, the page_seq and flags read
 * before tree_seq is checked again are the file's page's at @index; the
 * pin then holds if page_seq has not moved (the page stayed in the
 * mapping).  With @accessed (the caller's referenced path would call
 * mark_page_accessed(), as read_cache_page() does), a page that it would
 * change takes that path; so does one a writer holds (page_seq odd).
 */
struct page *find_pin_page(struct address_space *mapping,
			   unsigned long index, struct page **slot,
			   bool accessed)
{
	unsigned int pseq;
	unsigned long flags;
	struct page *page;

	page = page_cache_peek(mapping, index, &pseq, &flags);
	if (!page || (accessed && !page_accessed_noop(flags)))
		return NULL;
	if (!page_pin(mapping_cache(mapping), page, slot, pseq))
		return NULL;
	return page;
}

/*
 * The copy of a referenced page: the reference keeps the frame from
 * reuse, not from a writer.  A writer's copy or truncate's zeroing is
 * brief, under the page lock: wait for it and copy again, so a read
 * racing a rewrite gets one version of the page, never a mix.  A page
 * held through UF_PAGE_WRITE (PG_owner_priv_1) is its holder's for as
 * long as it likes: copied as it is.
 */
static void copy_page_stable(struct uf_cache *c, struct page *page,
			     void *dst, size_t offset, size_t nr)
{
	const char *src = (char *)page_address(c, page) + offset;
	unsigned int seq, spins = 0;

	for (;;) {
		seq = page_seq_begin(page);
		if ((seq & 1) && !PageOwnerPriv1(page)) {
			if (++spins % 64)
				cpu_relax();
			else
				uf_sched_yield();
			continue;
		}
		copy_from_frame(dst, src, nr, page);
		if ((seq & 1) || !page_seq_retry(page, seq))
			return;
	}
}

/* do_generic_file_read(), page by page into @buf. */
ssize_t filemap_read(struct inode *inode, void *buf, size_t len, loff_t pos)
{
	struct address_space *mapping = inode->i_mapping;
	struct uf_cache *c = inode_cache(inode);
	size_t copied = 0, offset, nr;
	unsigned long index;
	struct page *page;
	int err = 0;

	if (pos < 0)
		return -EINVAL;
	if (pos >= inode->i_size || !len)
		return 0;
	if (len > (uint64_t)(inode->i_size - pos))
		len = (size_t)(inode->i_size - pos);
	while (copied < len) {
		offset = (size_t)pos & ~PAGE_MASK;
		nr = PAGE_SIZE - offset;
		if (nr > len - copied)
			nr = len - copied;
		index = (unsigned long)(pos >> PAGE_SHIFT);
		if (!filemap_read_hit(mapping, index, (char *)buf + copied,
				      offset, nr)) {
			err = read_cache_page(mapping, index, &page);
			if (err)
				break;
			copy_page_stable(c, page, (char *)buf + copied,
					 offset, nr);
			put_page(c, page);
		}
		copied += nr;
		pos += (loff_t)nr;
		uf_sim_charge(UF_SIM_COST_PAGE_COPY, 1);
		cond_resched();
	}
	return copied ? (ssize_t)copied : err;
}

/* ---- writing ---- */

struct page *grab_cache_page_write_begin(struct address_space *mapping,
					 unsigned long index)
{
	struct page *page = find_or_create_page(mapping, index);

	/* stable pages: never modify a page while its write is in flight */
	if (page)
		wait_on_page_writeback(page);
	return page;
}

int block_write_begin(struct address_space *mapping, loff_t pos,
		      unsigned int len, struct page **pagep)
{
	size_t offset = (size_t)pos & ~PAGE_MASK;
	struct page *page;
	int err;

	page = grab_cache_page_write_begin(mapping,
					   (unsigned long)(pos >> PAGE_SHIFT));
	if (!page)
		return -ENOMEM;
	if (!PageUptodate(page) && (offset || len < PAGE_SIZE)) {
		err = __readpage(page);
		if (err) {
			drop_unread_page(page);
			return err;
		}
	}
	*pagep = page;
	return 0;
}

int block_write_end(struct address_space *mapping, struct page *page)
{
	int newly;

	SetPageUptodate(page);
	newly = set_page_dirty(page);
	unlock_page(page);
	mark_page_accessed(mapping_cache(mapping), page);
	put_page(mapping_cache(mapping), page);
	return newly;
}

/*
 * The copy into the page (iov_iter_copy_from_user_atomic's place).  A
 * whole new page (@fresh: just allocated, so its frame comes cold from
 * reclaim) is written with non-temporal stores: it is going to the device,
 * not to this CPU, so there is no point reading its old lines in (a cached
 * store fetches each line first) nor evicting the caller's working set
 * for it.  A page already cached may well be in the CPU's cache (a hit
 * rewritten): there the streaming stores, which must reach memory before
 * the fence lets go, cost a third more than memcpy (uflush-bench hits,
 * pwrite 0.61 of memcpy against 0.88), so it gets memcpy.  The fence
 * orders the stores before set_page_dirty() lets the flusher at the page.
 */
static void copy_to_frame(void *dst, const void *src, size_t bytes,
			  bool fresh)
{
#if defined(__SSE2__)
	if (bytes == PAGE_SIZE && fresh) {
		__m128i *d = dst;
		const __m128i *s = src;
		size_t i;

		for (i = 0; i < PAGE_SIZE / sizeof(*d); i += 4) {
			__m128i a = _mm_loadu_si128(s + i);
			__m128i b = _mm_loadu_si128(s + i + 1);
			__m128i e = _mm_loadu_si128(s + i + 2);
			__m128i f = _mm_loadu_si128(s + i + 3);

			_mm_stream_si128(d + i, a);
			_mm_stream_si128(d + i + 1, b);
			_mm_stream_si128(d + i + 2, e);
			_mm_stream_si128(d + i + 3, f);
		}
		_mm_sfence();
		return;
	}
#else
	(void)fresh;
#endif
	memcpy(dst, src, bytes);
}

/*
 * A whole page not in the cache: copied into a new frame before the frame
 * is the file's, then added uptodate and dirty in one step
 * (add_to_page_cache_dirty).  The allocation, and any reclaim in it, is
 * where grab_cache_page_write_begin() makes it.  Returns 1 if the page
 * was written, 0 if it is cached (or another writer added it meanwhile):
 * the caller then writes it the per-page way; -ENOMEM.
 */
static int write_new_page(struct address_space *mapping, const char *src,
			  loff_t pos, unsigned int order)
{
	unsigned long index = (unsigned long)(pos >> PAGE_SHIFT);
	struct uf_cache *c = mapping_cache(mapping);
	struct page *page;

	page = find_get_page(mapping, index);
	if (page) {
		put_page(c, page);
		return 0;
	}
	page = page_cache_alloc(mapping);
	if (!page)
		return -ENOMEM;
	page_seq_write_begin(page);
	copy_to_frame(page_address(c, page), src, PAGE_SIZE, true);
	page_seq_write_end(page);
	__atomic_store_n(&page->folio_order, (unsigned char)order,
			 __ATOMIC_RELAXED);
	if (add_to_page_cache_dirty(page, mapping, index)) {
		put_page(c, page);
		return 0;
	}
	mark_page_accessed(c, page);
	put_page(c, page);
	return 1;
}

/*
 * @bytes at @pos within one page, the page written as part of a folio of
 * @order (page->folio_order; 0 under the 3.x presets).  A whole page not
 * cached takes write_new_page(), any other the locked way.  Returns 1 if
 * the page turned dirty, 0 if it was dirty already, or -errno.
 */
static int write_one_page(struct address_space *mapping, const char *src,
			  loff_t pos, size_t bytes, unsigned int order)
{
	struct uf_cache *c = mapping_cache(mapping);
	size_t offset = (size_t)pos & ~PAGE_MASK;
	struct page *page;
	int status;

	if (bytes == PAGE_SIZE && !c->page_batch_off) {
		status = write_new_page(mapping, src, pos, order);
		if (status)
			return status;
	}
	status = block_write_begin(mapping, pos, (unsigned int)bytes, &page);
	if (status)
		return status;
	__atomic_store_n(&page->folio_order, (unsigned char)order,
			 __ATOMIC_RELAXED);
	/* a full page not uptodate was not read: a new frame */
	page_seq_write_begin(page);
	copy_to_frame((char *)page_address(c, page) + offset, src, bytes,
		      !PageUptodate(page));
	page_seq_write_end(page);
	return block_write_end(mapping, page);
}

/* include/linux/pagemap.h filemap_get_order(): the order fgf_set_order()
 * asks __filemap_get_folio() for, the largest folio @size fills. */
static unsigned int filemap_get_order(size_t size)
{
	unsigned int shift = 63 - (unsigned int)__builtin_clzll(size);

	return shift <= PAGE_SHIFT ? 0 : shift - PAGE_SHIFT;
}

/* Is any page of [@index, @index + @nr) in the cache? */
static bool range_cached(struct address_space *mapping, unsigned long index,
			 unsigned long nr)
{
	struct page *page;
	bool found = false;

	if (find_get_pages(mapping, index, 1, &page)) {
		found = page->index < index + nr;
		put_page(mapping_cache(mapping), page);
	}
	return found;
}

/*
 * The folio 6.18 writes @len bytes at @pos into (issue 17):
 * generic_perform_write() and iomap_write_iter() get it from
 * __filemap_get_folio(FGP_WRITEBEGIN | fgf_set_order(len)).  The folio
 * already at the index, whatever its size: here the one its page was
 * written as part of (page->folio_order), naturally aligned as every
 * folio is.  Else a new one: the order @len fills, at most the mapping's
 * largest, lowered to the index's alignment, and lowered again while
 * filemap_add_folio() would meet a page in its range (-EEXIST; the
 * kernel's loop tries each smaller order at the same index).  Returns
 * true if the folio was in the cache; *first, *order: its extent.
 */
static bool write_begin_folio(struct address_space *mapping, loff_t pos,
			      size_t len, unsigned long *first,
			      unsigned int *order)
{
	unsigned long index = (unsigned long)(pos >> PAGE_SHIFT);
	struct page *page = find_get_page(mapping, index);
	unsigned int o;

	if (page) {
		o = __atomic_load_n(&page->folio_order, __ATOMIC_RELAXED);
		put_page(mapping_cache(mapping), page);
		*first = index & ~((1UL << o) - 1);
		*order = o;
		return true;
	}
	o = filemap_get_order(len);
	if (o > mapping_max_folio_order(mapping))
		o = mapping_max_folio_order(mapping);
	if (index & ((1UL << o) - 1))
		o = (unsigned int)__builtin_ctzl(index);
	while (o && range_cached(mapping, index, 1UL << o))
		o--;
	*first = index;
	*order = o;
	return false;
}

/*
 * folio_mark_dirty() of a folio that was clean: the whole folio turns
 * dirty and is charged (folio_account_dirtied: folio_nr_pages), not only
 * the pages a write touched.  Here: every page of the folio still cached,
 * uptodate and clean; one the embedder holds (page lock taken) is left.
 */
static void folio_mark_dirty_rest(struct address_space *mapping,
				  unsigned long first, unsigned int order)
{
	struct uf_cache *c = mapping_cache(mapping);
	unsigned long index = first, end = first + (1UL << order);
	struct page *pages[PAGEVEC_SIZE];
	unsigned int i, nr;

	while (index < end &&
	       (nr = find_get_pages(mapping, index, PAGEVEC_SIZE, pages))) {
		for (i = 0; i < nr; i++) {
			struct page *page = pages[i];

			index = page->index + 1;
			if (page->index < end && PageUptodate(page) &&
			    !PageDirty(page) && trylock_page(page)) {
				if (page->mapping == mapping)
					set_page_dirty(page);
				unlock_page(page);
			}
			put_page(c, page);
		}
	}
}

static int page_ptr_cmp(const void *a, const void *b)
{
	const struct page *x = *(struct page *const *)a;
	const struct page *y = *(struct page *const *)b;

	return (x > y) - (x < y);
}

/*
 * 6.18 allocates a new folio in one piece (filemap_alloc_folio of its
 * order, from the buddy allocator), so its pages are physically
 * contiguous and a bio takes it as few segments.  uflush's pool hands out
 * single frames, most recently freed first: after reclaim has freed a
 * run of frames one by one, the next writer gets them in descending
 * order, which bio_add_page never merges (page_phys_follows wants
 * ascending).  So the pages a write touches in a new folio get their
 * frames here, at once, sorted ascending: runs the pool holds come back
 * as runs.
 */
static void folio_frames_get(struct address_space *mapping, loff_t pos,
			     size_t len, struct folio_frames *ff)
{
	unsigned long want = (unsigned long)(((pos + (loff_t)len - 1) >>
					      PAGE_SHIFT) -
					     (pos >> PAGE_SHIFT) + 1);
	struct page *page;

	ff->nr = ff->next = 0;
	/*
	 * Free frames only, no reclaim: a writer holding frames it waits to
	 * add to would starve its neighbours in a small pool (6.18 asks
	 * for a large folio with __GFP_NORETRY and falls back to smaller
	 * ones; here the frames the pool lacks come one by one, as before)
	 */
	while (ff->nr < want && ff->nr < (1u << MAX_PAGECACHE_ORDER)) {
		page = alloc_page_nowait(mapping_cache(mapping));
		if (!page)
			break;
		ff->pg[ff->nr++] = page;
	}
	qsort(ff->pg, ff->nr, sizeof(ff->pg[0]), page_ptr_cmp);
}

/* Frames the folio did not use (a page another writer added) go back. */
static void folio_frames_put(struct address_space *mapping,
			     struct folio_frames *ff)
{
	while (ff->next < ff->nr)
		put_page(mapping_cache(mapping), ff->pg[ff->next++]);
}

/*
 * One folio's part of a write (6.18's loop body): the pages of
 * [@pos, @pos + @len) within the folio of write_begin_folio(), copied and
 * dirtied one after another with no throttle call among them, so they are
 * charged together.  Returns the bytes written, or -errno if none were.
 */
static ssize_t write_folio(struct address_space *mapping, const char *src,
			   loff_t pos, size_t len)
{
	struct folio_frames *ff = NULL, ffs;
	unsigned long first;
	unsigned int order;
	size_t done = 0, bytes;
	int status = 0, newly = 0;
	bool found;
	loff_t end;

	found = write_begin_folio(mapping, pos, len, &first, &order);
	end = (loff_t)(first + (1UL << order)) << PAGE_SHIFT;
	if (len > (uint64_t)(end - pos))
		len = (size_t)(end - pos);
	if (!found && order) {
		ff = &ffs;
		folio_frames_get(mapping, pos, len, ff);
		current->folio_frames = ff;
	}
	do {
		bytes = PAGE_SIZE - ((size_t)pos & ~PAGE_MASK);
		if (bytes > len - done)
			bytes = len - done;
		status = write_one_page(mapping, src + done, pos, bytes, order);
		if (status < 0)
			break;
		newly |= status;
		done += bytes;
		pos += (loff_t)bytes;
		/* a world's CPU model: the copy costs per 4 KiB page */
		uf_sim_charge(UF_SIM_COST_PAGE_COPY, 1);
	} while (done < len);
	if (ff) {
		current->folio_frames = NULL;
		folio_frames_put(mapping, ff);
	}
	if (found && newly && order)
		folio_mark_dirty_rest(mapping, first, order);
	return done ? (ssize_t)done : status;
}

/*
 * 6.18's generic_perform_write() and iomap_write_iter(): a chunk of at
 * most the mapping's largest folio, aligned to it, then the folio there.
 * The throttle is called once per folio, after it (6.18 calls it at the
 * top of the loop, before write_begin: the same sequence of calls for a
 * stream of writes, except that 6.18 leaves a write's last folio to the
 * next write's first call; README, Deviations).
 */
static ssize_t perform_write_folios(struct inode *inode, const char *buf,
				    size_t len, loff_t pos)
{
	struct address_space *mapping = inode->i_mapping;
	size_t chunk = PAGE_SIZE << mapping_max_folio_order(mapping);
	size_t written = 0, bytes;
	ssize_t ret = 0;

	do {
		bytes = chunk - ((size_t)pos & (chunk - 1));
		if (bytes > len - written)
			bytes = len - written;
		ret = write_folio(mapping, buf + written, pos, bytes);
		if (ret < 0)
			break;
		written += (size_t)ret;
		pos += ret;
		cond_resched();
		balance_dirty_pages_ratelimited(mapping);
	} while (written < len);
	return written ? (ssize_t)written : ret;
}

static ssize_t __generic_perform_write(struct inode *inode, const void *buf,
				       size_t len, loff_t pos)
{
	struct address_space *mapping = inode->i_mapping;
	size_t written = 0, offset, bytes;
	int status = 0;

	if (pos < 0)
		return -EINVAL;
	if (!len)
		return 0;
	if (pos > inode->i_size || len > (uint64_t)(inode->i_size - pos))
		return -EFBIG;
	if (mapping_max_folio_order(mapping))
		return perform_write_folios(inode, buf, len, pos);
	do {
		offset = (size_t)pos & ~PAGE_MASK;
		bytes = PAGE_SIZE - offset;
		if (bytes > len - written)
			bytes = len - written;
		status = write_one_page(mapping, (const char *)buf + written,
					pos, bytes, 0);
		if (status < 0)
			break;
		status = 0;
		written += bytes;
		pos += (loff_t)bytes;
		/* a world's CPU model; 3.2's loop has a cond_resched() here */
		uf_sim_charge(UF_SIM_COST_PAGE_COPY, 1);
		cond_resched();
		balance_dirty_pages_ratelimited(mapping);
	} while (written < len);
	return written ? (ssize_t)written : status;
}

/*
 * __generic_file_aio_write() of 3.2: the writer is "current->
 * backing_dev_info" while it writes, so that its own direct reclaim may
 * write to the device it is dirtying even when that is congested
 * (may_write_to_queue).
 */
ssize_t generic_perform_write(struct inode *inode, const void *buf,
			      size_t len, loff_t pos)
{
	struct backing_dev_info *old = current_backing_dev_info();
	ssize_t ret;

	set_current_backing_dev_info(mapping_bdi(inode->i_mapping));
	ret = __generic_perform_write(inode, buf, len, pos);
	set_current_backing_dev_info(old);
	return ret;
}

/* ---- writeback and waiting ---- */

int filemap_fdatawrite_range(struct address_space *mapping, loff_t start,
			     loff_t end)
{
	struct writeback_control wbc = {
		.sync_mode = WB_SYNC_ALL,
		.nr_to_write = LONG_MAX,
		.range_start = start,
		.range_end = end,
	};

	if (!__atomic_load_n(&mapping->nrpages, __ATOMIC_RELAXED))
		return 0;
	return do_writepages(mapping, &wbc);
}

int filemap_fdatawrite(struct address_space *mapping)
{
	return filemap_fdatawrite_range(mapping, 0, LLONG_MAX);
}

/* Wait on every page tagged WRITEBACK in the range, in index order. */
int filemap_fdatawait_range(struct address_space *mapping, loff_t start,
			    loff_t end)
{
	struct uf_cache *c = mapping_cache(mapping);
	unsigned long index = (unsigned long)(start >> PAGE_SHIFT);
	unsigned long last = (unsigned long)(end >> PAGE_SHIFT);
	struct page *pages[PAGEVEC_SIZE];
	unsigned int i, nr;

	if (end < start)
		return 0;
	while (index <= last) {
		nr = find_get_pages_tag(mapping, &index,
					PAGECACHE_TAG_WRITEBACK, PAGEVEC_SIZE,
					pages);
		if (!nr)
			break;
		for (i = 0; i < nr; i++) {
			if (pages[i]->index <= last)
				wait_on_page_writeback(pages[i]);
			put_page(c, pages[i]);
		}
		if (!index)	/* wrapped past ULONG_MAX */
			break;
	}
	return filemap_check_errors(mapping);
}

int filemap_fdatawait(struct address_space *mapping)
{
	return filemap_fdatawait_range(mapping, 0, LLONG_MAX);
}

int filemap_write_and_wait_range(struct address_space *mapping, loff_t start,
				 loff_t end)
{
	int err, err2;

	if (!__atomic_load_n(&mapping->nrpages, __ATOMIC_RELAXED))
		return filemap_check_errors(mapping);
	err = filemap_fdatawrite_range(mapping, start, end);
	/* pages may have been submitted before the error: wait for them,
	 * unless the device itself is failing */
	if (err == -EIO) {
		filemap_check_errors(mapping);
		return err;
	}
	err2 = filemap_fdatawait_range(mapping, start, end);
	return err ? err : err2;
}

int filemap_write_and_wait(struct address_space *mapping)
{
	return filemap_write_and_wait_range(mapping, 0, LLONG_MAX);
}

/* ---- truncation (mm/truncate.c) ---- */

/* cancel_dirty_page(): the data is being thrown away; stop counting it. */
static void truncate_cancel_dirty(struct page *page)
{
	struct address_space *mapping = page->mapping;

	if (TestClearPageDirty(page)) {
		dec_vm_state(mapping_cache(mapping), NR_FILE_DIRTY);
		dec_bdi_stat(mapping_bdi(mapping), BDI_RECLAIMABLE);
	}
}

/* truncate_complete_page(): locked, not under writeback. */
static void truncate_complete_page(struct page *page)
{
	truncate_cancel_dirty(page);
	ClearPageReclaim(page);
	delete_from_page_cache(page);
}

/* truncate_partial_page(): zero the tail of the page holding @lstart. */
static void truncate_partial_page(struct address_space *mapping,
				  loff_t lstart)
{
	size_t partial = (size_t)lstart & ~PAGE_MASK;
	struct uf_cache *c = mapping_cache(mapping);
	struct page *page;

	page = find_lock_page(mapping, (unsigned long)(lstart >> PAGE_SHIFT));
	if (!page)
		return;
	wait_on_page_writeback(page);
	page_seq_write_begin(page);
	memset((char *)page_address(c, page) + partial, 0,
	       PAGE_SIZE - partial);
	page_seq_write_end(page);
	unlock_page(page);
	put_page(c, page);
}

/*
 * truncate_inode_pages(): drop every page from @lstart on, waiting for
 * pages that are locked or under writeback.  Dirty pages lose their data:
 * the caller (file close) writes them back first.
 */
void truncate_inode_pages(struct address_space *mapping, loff_t lstart)
{
	unsigned long index = (unsigned long)
		((lstart + (loff_t)PAGE_SIZE - 1) >> PAGE_SHIFT);
	struct uf_cache *c = mapping_cache(mapping);
	struct page *pages[PAGEVEC_SIZE];
	unsigned int i, nr;
	struct page *page;

	if (lstart & ~PAGE_MASK)
		truncate_partial_page(mapping, lstart);
	for (;;) {
		nr = find_get_pages(mapping, index, PAGEVEC_SIZE, pages);
		if (!nr)
			break;
		for (i = 0; i < nr; i++) {
			page = pages[i];
			index = page->index + 1;
			lock_page(page);
			wait_on_page_writeback(page);
			if (page->mapping == mapping)
				truncate_complete_page(page);
			unlock_page(page);
			put_page(c, page);
		}
		if (!index)
			break;
	}
}
