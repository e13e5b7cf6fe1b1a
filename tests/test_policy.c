// SPDX-License-Identifier: MIT
/*
 * Description: the policy registry (policies/registry.c): presets resolve
 * to the knob values the seed-000 digest gives them, overrides apply in
 * order, unknown names are refused, the resolved spec names every knob,
 * and a policy plugin built from policies/examples/congestion-wait.c loads
 * from a shared object and really changes the no-progress wait (HZ/10
 * sleeps, on the virtual clock).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "uflush.h"
#include "mm/backing-dev.h"
#include "fs/fs.h"
#include "kernel/jiffies.h"
#include "policies/policy.h"
#include "kernel/sched.h"
#include "io/testdev.h"
#include "uflush-internal.h"
#include "fs/writeback.h"

static void expect_spec(const char *spec, const char *want)
{
	struct wb_policy pol;
	int ret;

	ret = wb_policy_resolve(spec, &pol);
	cr_assert_eq(ret, 0, "%s: %s", spec, strerror(-ret));
	cr_assert_str_eq(pol.spec, want, "%s resolved to \"%s\"", spec,
			 pol.spec);
	wb_policy_release(&pol);
}

Test(policy, presets_resolve_to_their_knobs)
{
	expect_spec("linux-3.1", "linux-3.1: nowait=b0 requeue=base "
		    "skipped=redirty sbbusy=redirty cutoff=fixed "
		    "kupdate=fixed progress=pages");
	expect_spec("linux-3.2", "linux-3.2: nowait=b0 requeue=base "
		    "skipped=redirty sbbusy=redirty cutoff=bg-all "
		    "kupdate=fixed progress=pages");
	expect_spec("kara-v4.2", "kara-v4.2: nowait=v4.2 requeue=p2-v4 "
		    "skipped=removed sbbusy=requeue cutoff=v4.2 "
		    "kupdate=fixed progress=pages");
	expect_spec("wu-riw", "wu-riw: nowait=b0 requeue=riw "
		    "skipped=requeue-wait sbbusy=requeue-wait cutoff=bg-all "
		    "kupdate=early progress=total");
	expect_spec("mainline", "mainline: nowait=mainline "
		    "requeue=mainline skipped=removed sbbusy=redirty "
		    "cutoff=bg-all kupdate=fixed progress=pages");
	expect_spec(NULL, "linux-3.2: nowait=b0 requeue=base "
		    "skipped=redirty sbbusy=redirty cutoff=bg-all "
		    "kupdate=fixed progress=pages");
}

Test(policy, overrides_apply_in_order)
{
	expect_spec("linux-3.2,nowait=v3b,requeue=p2-v3",
		    "linux-3.2: nowait=v3b requeue=p2-v3 skipped=redirty "
		    "sbbusy=redirty cutoff=bg-all kupdate=fixed "
		    "progress=pages");
	expect_spec("kara-v4.2,nowait=v4.1,cutoff=bg-all",
		    "kara-v4.2: nowait=v4.1 requeue=p2-v4 skipped=removed "
		    "sbbusy=requeue cutoff=bg-all kupdate=fixed "
		    "progress=pages");
}

Test(policy, hooks_follow_the_knobs)
{
	struct wb_policy a, b;

	cr_assert_eq(wb_policy_resolve("linux-3.1", &a), 0);
	cr_assert_eq(wb_policy_resolve("linux-3.1,nowait=v4,skipped=removed,"
				       "progress=total,kupdate=early", &b), 0);
	cr_assert_neq(a.no_progress, b.no_progress);
	cr_assert_eq(a.requeue, b.requeue);
	cr_assert_not_null(a.pages_skipped);
	cr_assert_null(b.pages_skipped);
	cr_assert(!a.return_total_progress && b.return_total_progress);
	cr_assert(!a.kupdate_early && b.kupdate_early);
}

Test(policy, unknown_names_are_refused)
{
	static const char *const bad[] = {
		"", "linux-9.9", "linux-3.2,nowait=v9", "linux-3.2,bogus=1",
		"linux-3.2,nowait", "linux-3.2,plugin=/nonexistent.so",
	};
	struct uf_cache_config cfg;
	struct uf_cache *c = NULL;
	struct wb_policy pol;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = wb_policy_resolve(bad[i], &pol);

		cr_assert(ret == -EINVAL || ret == -ENOENT,
			  "\"%s\" gave %d", bad[i], ret);
		uf_cache_config_init(&cfg);
		cfg.nr_pages = 64;
		cfg.policy = bad[i];
		cr_assert_lt(uf_cache_open(&cfg, &c), 0, "cache took \"%s\"",
			     bad[i]);
		cr_assert_null(c);
	}
}

Test(policy, cache_records_resolved_policy)
{
	struct uf_cache_config cfg;
	struct uf_cache *c;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 64;
	cfg.policy = "wu-riw,nowait=v4.2";
	cr_assert_eq(uf_cache_open(&cfg, &c), 0);
	cr_assert_str_eq(uf_cache_policy(c), "wu-riw: nowait=v4.2 "
			 "requeue=riw skipped=requeue-wait "
			 "sbbusy=requeue-wait cutoff=bg-all kupdate=early "
			 "progress=total");
	cr_assert_eq(uf_cache_close(c), 0);
	cr_assert_null(uf_cache_policy(c));
}

/* build/plugins/congestion-wait.so, beside the test binary. */
static void plugin_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	snprintf(buf, len, "%s/plugins/congestion-wait.so", dirname(exe));
	if (access(buf, R_OK))
		cr_skip_test("plugin not built: %s", buf);
}

Test(policy, plugin_replaces_the_hook)
{
	char path[PATH_MAX], spec[PATH_MAX + 64];
	struct wb_policy base, pol;

	plugin_path(path, sizeof(path));
	snprintf(spec, sizeof(spec), "kara-v4.2,plugin=%s", path);
	cr_assert_eq(wb_policy_resolve("kara-v4.2", &base), 0);
	cr_assert_eq(wb_policy_resolve(spec, &pol), 0);
	cr_assert_neq(pol.no_progress, base.no_progress);
	cr_assert_eq(pol.requeue, base.requeue);
	cr_assert_not_null(strstr(pol.spec, "plugin="));
	wb_policy_release(&pol);
	cr_assert_null(pol.plugin_handle);
}

/*
 * The plugin's wait really runs: an inode whose write_inode keeps failing
 * sits on b_more_io (requeue=p2-v4), the work makes no progress and sleeps
 * HZ/10 per round — not 1, 2, 4... as kara-v4.2's own v4.2 would.
 */
static int eagain_write_inode(struct uf_file *f, void *priv, int sync)
{
	(void)f;
	(void)priv;
	(void)sync;
	return -EAGAIN;
}

static const struct uf_file_ops eagain_ops = {
	.write_inode = eagain_write_inode,
};

struct runner {
	struct bdi_writeback *wb;
	struct task_struct *task;
	long ret;
	bool done;
};

static void *run_work(void *arg)
{
	struct runner *r = arg;
	struct wb_writeback_work work = {
		.nr_pages = 1024, .sync_mode = WB_SYNC_NONE,
		.range_cyclic = 1, .reason = WB_REASON_SYNC,
	};

	__atomic_store_n(&r->task, current, __ATOMIC_RELEASE);
	r->ret = wb_writeback(r->wb, &work);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static unsigned long next_sleep(struct runner *r)
{
	unsigned long t;

	cr_assert_eq(uf_wait_task_sleeping(r->task, 10000), 0,
		     "the work did not go to sleep");
	cr_assert_eq(uf_clock_next_expiry(&t), 0);
	return t - jiffies;
}

Test(policy, plugin_wait_runs_on_the_clock, .timeout = 60)
{
	char path[PATH_MAX], spec[PATH_MAX + 64];
	struct uf_dev_config dcfg = { .flags = UF_DEV_NO_FLUSHER };
	struct uf_cache_config cfg;
	struct uf_testdev td;
	struct runner r = { 0 };
	struct uf_cache *c;
	struct uf_dev *d;
	struct uf_file *f;
	pthread_t th;
	int i;

	plugin_path(path, sizeof(path));
	if (uf_testdev_create(16 << 20, UF_TESTDEV_FILE_ONLY, &td))
		cr_skip_test("no scratch file: %s", td.why_not_loop);
	uf_clock_set_virtual(100000);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = 256;
	snprintf(spec, sizeof(spec), "kara-v4.2,plugin=%s", path);
	cfg.policy = spec;
	cr_assert_eq(uf_cache_open(&cfg, &c), 0);
	cr_assert_eq(uf_dev_open(c, td.path, &dcfg, &d), 0);
	cr_assert_eq(uf_file_open(d, 1, 0, 1 << 20, &eagain_ops, NULL, &f), 0);
	cr_assert_eq(uf_file_mark_inode_dirty(f, UF_I_DIRTY_SYNC), 0);

	r.wb = &uf_dev_bdi(d)->wb;
	pthread_create(&th, NULL, run_work, &r);
	while (!__atomic_load_n(&r.task, __ATOMIC_ACQUIRE))
		sched_yield();
	/* v4.2 would sleep 1, 2, 4; the plugin sleeps HZ/10 each time */
	for (i = 0; i < 3; i++) {
		unsigned long s = next_sleep(&r);

		cr_assert_eq(s, (unsigned long)HZ / 10,
			     "sleep %d: %lu jiffies", i, s);
		uf_clock_advance(s);
	}
	/* let the inode be written: the work then ends */
	{
		struct inode *inode = uf_file_inode(f);

		inode->ops = NULL;
	}
	while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE)) {
		unsigned long t;

		if (!uf_wait_task_sleeping(r.task, 100) &&
		    !uf_clock_next_expiry(&t))
			uf_clock_advance(t - jiffies);
	}
	pthread_join(th, NULL);
	cr_assert_eq(uf_cache_close(c), 0);
	uf_testdev_destroy(&td);
	uf_clock_set_real();
}

/*
 * I19 (seed 000 L4063-4065, L1306-1315): progress is pages written plus
 * inodes made clean, so a pass that only writes an inode's metadata counts
 * as progress; wb_writeback returns pages (base, v4: nr_pages - what is
 * left) or total progress (kupdate-early/RIW: progress=total).
 */
static int ok_write_inode(struct uf_file *f, void *priv, int sync)
{
	(void)f;
	(void)sync;
	__atomic_add_fetch((int *)priv, 1, __ATOMIC_RELAXED);
	return 0;
}

static const struct uf_file_ops ok_ops = { .write_inode = ok_write_inode };

static long progress_of(const char *spec, unsigned int data_pages,
			int *nr_write_inode)
{
	struct uf_dev_config dcfg = { .flags = UF_DEV_NO_FLUSHER };
	struct wb_writeback_work work = {
		.nr_pages = 1024, .sync_mode = WB_SYNC_NONE,
		.range_cyclic = 1, .reason = WB_REASON_SYNC,
	};
	struct uf_cache_config cfg;
	struct uf_testdev td;
	struct uf_cache *c;
	struct uf_dev *d;
	struct uf_file *meta, *data;
	static char buf[64 << 10];
	long ret;

	if (uf_testdev_create(16 << 20, UF_TESTDEV_FILE_ONLY, &td))
		cr_skip_test("no scratch file: %s", td.why_not_loop);
	uf_clock_set_virtual(200000);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = 256;
	cfg.policy = spec;
	cr_assert_eq(uf_cache_open(&cfg, &c), 0);
	cr_assert_eq(uf_dev_open(c, td.path, &dcfg, &d), 0);
	cr_assert_eq(uf_file_open(d, 1, 0, 1 << 20, &ok_ops, nr_write_inode,
				  &meta), 0);
	cr_assert_eq(uf_file_open(d, 2, 1 << 20, 1 << 20, NULL, NULL, &data),
		     0);
	cr_assert_eq(uf_file_mark_inode_dirty(meta, UF_I_DIRTY_SYNC), 0);
	memset(buf, 0x5a, sizeof(buf));
	if (data_pages)
		cr_assert_eq(uf_pwrite(data, buf, data_pages * 4096, 0),
			     (ssize_t)data_pages * 4096);
	uf_clock_advance(10);
	ret = wb_writeback(&uf_dev_bdi(d)->wb, &work);
	cr_assert_eq(uf_cache_close(c), 0);
	uf_testdev_destroy(&td);
	uf_clock_set_real();
	return ret;
}

Test(policy, progress_counts_pages_or_total)
{
	int n = 0;

	/* metadata only: written, but no pages */
	cr_assert_eq(progress_of("linux-3.2", 0, &n), 0);
	cr_assert_eq(n, 1, "write_inode ran %d times", n);
	n = 0;
	cr_assert_eq(progress_of("linux-3.2,progress=total", 0, &n), 1,
		     "the cleaned inode counts as progress");
	cr_assert_eq(n, 1);
	/* 8 pages + two inodes cleaned */
	n = 0;
	cr_assert_eq(progress_of("linux-3.2", 8, &n), 8);
	n = 0;
	cr_assert_eq(progress_of("wu-riw", 8, &n), 10);
}
