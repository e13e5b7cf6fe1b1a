/* SPDX-License-Identifier: MIT */
/*
 * tests/fixture.h - the writeback fixture shared by the fs-writeback,
 * seed-000, policy and page-writeback tests.
 *
 * FX_SETUP() opens a cache with a policy spec on the virtual clock (or the
 * real one), over a plain scratch file (or a loop device) registered as a
 * device without a flusher (UF_DEV_NO_FLUSHER, unless .flusher).  The test
 * runs the works itself: on its own thread with run(), or on the runner
 * thread (runner_start()) while it moves the clock from one timer to the
 * next (rn_drive()).  Files (struct tf, by ino) are opened with hooks
 * whose behaviour each test sets: on_write_inode (its return is
 * write_inode's), on_writepages (called for each writepages not declined),
 * veto (kinds of writeback declined, as btrfs declined kupdate).  The
 * hooks run with no uflush lock held and give way once teardown began.
 *
 * Lists are printed tail first ("1,2,3": ino 1 is at the tail), the end
 * b_io is consumed from and the old end of b_dirty.
 *
 * A test sets .fini to a function that calls fx_teardown(), which releases
 * held pages and a held s_umount, stops the runner, and closes everything
 * on the real clock (continuing from the virtual one), so that whatever
 * still sleeps on a timeout ends.
 */
#ifndef UF_TEST_FIXTURE_H
#define UF_TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "fs/fs.h"
#include "fs/writeback.h"
#include "io/testdev.h"
#include "kernel/jiffies.h"
#include "kernel/sched.h"
#include "mm/backing-dev.h"
#include "policies/policy.h"
#include "uflush-internal.h"
#include "uflush.h"

#define FX_POOL_PAGES	4096
/* dirty threshold 2048 pages: writeback_chunk_size() is then 1024 pages */
#define FX_DIRTY_BYTES	(8ul << 20)
#define FX_DEV_SIZE	(128ull << 20)
#define FX_SLOT		(8ull << 20)	/* device space per ino */
#define FX_MAX_FILES	15
#define PG		4096ul
#define REAL_WAIT_S	30		/* real-time bound, handshakes */

struct tf;
typedef int (*tf_write_inode_fn)(struct tf *t, int sync);
typedef void (*tf_writepages_fn)(struct tf *t, enum uf_wb_kind kind);

/* A test file: its handle, its inode and its hooks' behaviour. */
struct tf {
	struct uf_file *f;
	struct inode *inode;
	unsigned long ino;
	uint64_t off;			/* device offset of byte 0 */
	int nr_write_inode;		/* atomic: write_inode calls */
	int nr_writepages;		/* atomic: writepages not declined */
	int nr_vetoed;			/* atomic: writepages declined */
	unsigned int veto;		/* atomic: 1 << uf_wb_kind declined */
	tf_write_inode_fn on_write_inode;	/* atomic */
	tf_writepages_fn on_writepages;
	long arg;			/* per-test knob */
	struct uf_page *held;		/* tf_hold_page() */
};

struct fx_opts {
	unsigned long start;		/* virtual clock at setup */
	bool real_clock;		/* ... or stay on the real one */
	const char *policy;		/* cfg.policy */
	unsigned long nr_pages;		/* cfg.nr_pages, 0: FX_POOL_PAGES */
	unsigned int max_io_pages;	/* cfg.max_io_pages, 0: the default */
	unsigned int hz;		/* cfg.hz, 0: the default */
	bool set_dwi;			/* set dirty_writeback_centisecs */
	unsigned int dwi;		/* ... to dwi (0 is a value) */
	unsigned int expire_cs;		/* dirty_expire_centisecs or 0 */
	bool trace;			/* tracepoints to a file */
	bool flusher;			/* the device's own flusher */
	bool shaped;			/* UF_DEV_SHAPED (uf_dev_stall...) */
	bool loop;			/* a loop device; skip if none */
};

struct fx {
	struct uf_testdev td;
	bool have_td;
	struct uf_cache *cache;
	struct uf_dev *dev;
	struct backing_dev_info *bdi;
	struct bdi_writeback *wb;
	const struct wb_policy *pol;
	const char *spec;
	bool flusher;
	bool umount_held;
	char trace[64];
	bool closing;			/* atomic: hooks give way */
	struct tf tf[FX_MAX_FILES + 1];	/* by ino */
};

extern struct fx fx;

void fx_setup(const struct fx_opts *o);
#define FX_SETUP(...) fx_setup(&(const struct fx_opts){ __VA_ARGS__ })
/*
 * @stop: the test file's own threads, stopped after the hooks give way.
 * Returns what uf_cache_close() did; a second call does nothing.
 */
int fx_teardown(void (*stop)(void));
bool fx_closing(void);

/*
 * A test that is one call of a scenario function, torn down by the test
 * file's fx_fini(): FX_TEST(suite, name, 60, scenario("spec", ...))
 */
#define FX_TEST(suite, name, secs, call)				\
	Test(suite, name, .fini = fx_fini, .timeout = secs) { call; }

/* ---- files ---- */

/* Open file @ino: @pages pages at device offset ino * FX_SLOT. */
struct tf *tf_open(unsigned long ino, unsigned long pages);
/* ... with the test's own uf_file_ops instead of the hooks above */
struct tf *tf_open_ops(unsigned long ino, unsigned long pages,
		       const struct uf_file_ops *ops, void *priv);
/* Pages [first, first + nr) with @seed; 0 or -errno (hooks call it). */
int tf_write(struct tf *t, unsigned long first, unsigned long nr,
	     uint32_t seed);
void tf_dirty(struct tf *t, unsigned long first, unsigned long nr,
	      uint32_t seed);
/* tf_open(), then its first @nr_dirty pages dirtied with seed 1 */
struct tf *tf_open_dirty(unsigned long ino, unsigned long pages,
			 unsigned long nr_dirty);
void mark_sync(struct tf *t);
void set_veto(struct tf *t, unsigned int kinds);
/* Hold page @index as an embedder writing it (uf_page_get UF_PAGE_WRITE). */
void tf_hold_page(struct tf *t, unsigned long index);
void tf_release_page(struct tf *t);
unsigned long istate(struct tf *t);
unsigned long dirtied_when(struct tf *t);

/* Wait for the file's writeback I/O, then demand @seed on the device. */
void tf_expect_on_dev(struct tf *t, unsigned long first, unsigned long nr,
		      uint32_t seed, const char *what);
/* ... or zeros (never written). */
void tf_expect_unwritten(struct tf *t, unsigned long first,
			 unsigned long nr, const char *what);
void expect_zero_on_dev(uint64_t off, size_t len, const char *what);

/* ---- lists ---- */

/* The inos on @head, tail first, as "1,2,3"; list_lock held. */
char *__list_str(struct list_head *head, char *buf, size_t len);
char *list_str(struct list_head *head, char *buf, size_t len);
/* Which wb list the inode is on: "b_dirty", ..., or "none". */
const char *which_list(struct tf *t);
bool tf_on(struct tf *t, const char *list);
/* I15: dirtied_when never decreases from the tail of b_dirty to its head. */
void expect_b_dirty_ordered(void);

#define expect_list(head, want) do {					\
	char __buf[128];						\
	list_str(&fx.wb->head, __buf, sizeof(__buf));			\
	cr_assert_str_eq(__buf, want, #head " (tail first) is \"%s\", want \"%s\"", \
			 __buf, want);					\
} while (0)

#define expect_on(t, want)						\
	cr_assert_str_eq(which_list(t), want, "%s: ino %lu is on %s, want %s", \
			 fx.spec, (t)->ino, which_list(t), want)

/* ---- works, clock, tunables, trace ---- */

enum wkind { W_KUPDATE, W_BACKGROUND, W_NONE, W_SYNC, W_TAGGED };

/* A work as the kernel builds each kind (fs-writeback.c of 3.2). */
struct wb_writeback_work mkwork(enum wkind k);
long run(struct wb_writeback_work *w);
/* Build a work of kind @k and run it on the test's thread. */
long run_kind(enum wkind k);
bool work_queued(void);
unsigned long expire_jiffies(void);
/* max_pause of the v4 family and of kupdate-early (L51-54, L1334-1337) */
unsigned long max_pause(void);
void advance(unsigned long d);
void advance_to(unsigned long t);
void set_tunable(const char *name, unsigned long v);
void set_bg_thresh_pages(unsigned long pages);
/* Lines of @event (containing @needle, if any) in the trace so far. */
int trace_count(const char *event, const char *needle);
void hold_umount(void);
void release_umount(void);

/* ---- the runner: a thread running one work, or the flusher's works ---- */

enum run_what {
	RUN_WORK,	/* wb_writeback(rn.work) */
	RUN_FLUSH,	/* wb_do_writeback() until no work is queued, as the
			 * flusher thread loops (bdi_writeback_thread) */
};

struct runner {
	pthread_t th;
	bool live;			/* not joined yet */
	enum run_what what;
	struct wb_writeback_work work;
	struct task_struct *task;	/* referenced while live */
	long ret;
	bool done;			/* atomic */
	unsigned long done_at;
};

extern struct runner rn;

long real_secs_since(const struct timespec *t0);

void runner_start(enum run_what what, const struct wb_writeback_work *w);
void runner_join(void);
bool rn_done(void);
/* 1: @p sleeps in schedule(); 0: *@done is set; -1 after REAL_WAIT_S. */
int wait_asleep(struct task_struct *p, bool *done);
/* Someone sleeps: move the clock to the next timer, at most to @limit. */
void clock_step(unsigned long limit);
/* Step the clock while the runner sleeps: true when it is done, false
 * when the clock reached @limit with it asleep. */
bool rn_drive(unsigned long limit);

/* ---- scenarios shared by the base and the seed-000 tests ---- */

/*
 * R (fx.tf[1], @r_pages pages): pages [0, r_dirty) with seed 1 and its
 * metadata dirtied at @start; S (fx.tf[2], 4 pages): pages [0, s_dirty)
 * with seed 2 one jiffy later; the clock then at @start + 6.  Returns R.
 */
struct tf *r_then_s(const char *spec, unsigned long start,
		    unsigned long r_pages, unsigned long r_dirty,
		    unsigned long s_dirty);
/* R's write_inode: time passes and R is dirtied again, page and inode. */
int hook_continuous_redirty(struct tf *t, int sync);
/* r_then_s() of 8 and 4 dirty pages, R redirtied after each write. */
struct tf *redirtier_setup(const char *spec, unsigned long start);
/*
 * I14 / B7: a work of kind @k (W_SYNC or W_TAGGED) against R writes it
 * once, leaves it on b_dirty with dirtied_when = now, writes S too, and
 * ends.  Returns what the work returned.
 */
long sync_livelock_case(const char *spec, unsigned long start,
			enum wkind k);

/* ------------------------------------------------------------------ */
/* A hand-built cache: a frame pool, a device-less bdi and one inode,   */
/* no uflush objects and no threads (mm-level tests).                  */

struct hand {
	struct uf_cache c;
	struct super_block sb;
	struct backing_dev_info bdi;
	struct inode inode;
};

/* @nr_pages frames; the inode is @nr_file pages long. */
struct hand *hand_new(unsigned long nr_pages, unsigned long nr_file);
/* Drop every page of the file, then demand the pool be whole again and
 * no WARN/BUG have fired. */
void hand_free(struct hand *h);
struct address_space *hmap(struct hand *h);
unsigned long nr_free(struct hand *h);
/* A clean cached page at @index, unlocked, held only by the page cache. */
struct page *cache_page(struct hand *h, unsigned long index);
bool cached(struct hand *h, unsigned long index);
/* The bdi gets a work list and no flusher, the inode a reference (it can
 * be grabbed): what pageout works and reclaim's flusher wakeups need. */
void hand_queueing(struct hand *h);

/*
 * A thread that runs fn(arg) in the background, for tests that check it
 * sleeps (a task they can hand to uf_wait_task_sleeping) and is woken.
 */
struct fx_bg {
	pthread_t thread;
	struct task_struct *task;	/* atomic, set by the thread itself */
	bool done;			/* atomic: fn returned */
	void (*fn)(void *arg);
	void *arg;
};

/* Starts the thread; returns once it knows its task. */
void fx_bg_start(struct fx_bg *bg, void (*fn)(void *arg), void *arg);
bool fx_bg_done(struct fx_bg *bg);
/* Asleep within 5 s, or fail: "<what>: the <who> did not go to sleep". */
void fx_bg_expect_asleep(struct fx_bg *bg, const char *who,
			 const char *what);
/* Joined within 10 s, or fail: "<what>: the <who> was not woken". */
void fx_bg_join(struct fx_bg *bg, const char *who, const char *what);

/* ------------------------------------------------------------------ */
/* A hand-made cache and two devices, no threads: the dirty-limit and   */
/* throttle formulas (page_writeback, balance_dirty).                  */

struct limits_hand {
	struct uf_cache c;
	struct backing_dev_info bdi[2];
};

/* @nr_pages free frames, dirty ratios 20/10, max_io_pages 256. */
struct limits_hand *limits_hand_new(unsigned long nr_pages);
/* Frees it and demands no WARN/BUG fired. */
void limits_hand_free(struct limits_hand *h);

#endif /* UF_TEST_FIXTURE_H */
