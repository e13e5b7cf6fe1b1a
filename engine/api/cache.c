// SPDX-License-Identifier: MIT
/*
 * engine/api/cache.c - struct uf_cache: open (the pool, the policy, the
 * tunables, HZ), close (its devices and files, after the calls and page
 * handles on it), tunables, stats, uf_sync and policy resolution.
 */
#include "api/handle.h"

static unsigned int cache_hz;	/* the hz of open caches; 0 = none open */
static unsigned int nr_open_caches;

int uf_cache_config_init(struct uf_cache_config *cfg)
{
	if (!cfg)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_pages = 65536;
	cfg->hz = 1000;
	cfg->max_io_pages = 0;	/* the device queue's limits */
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
	if (cfg->max_io_pages > 1024)
		return -EINVAL;
	if (cfg->dirty_ratio > 100 || cfg->dirty_background_ratio > 100)
		return -EINVAL;
	if (cfg->mem_limit_pages && (cfg->mem_limit_pages < 16 ||
				     cfg->mem_limit_pages > cfg->nr_pages))
		return -EINVAL;
	if (cfg->frames && strcmp(cfg->frames, "data") &&
	    strcmp(cfg->frames, "none")) {
		pr_err("cache: frames=\"%s\": \"data\" or \"none\"",
		       cfg->frames);
		return -EINVAL;
	}
	return 0;
}

static bool frames_none(const struct uf_cache_config *cfg)
{
	return cfg->frames && !strcmp(cfg->frames, "none");
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
	struct uf_cache_slot *s = claim_slot(caches);

	if (s) {
		memset(&s->cache, 0, sizeof(s->cache));
		s->nr_devs = 0;
	}
	return s;
}

static int cache_setup(struct uf_cache *c, const struct uf_cache_config *cfg)
{
	int ret;

	cache_init_tunables(c, cfg);
	spin_lock_init(&c->bdi_lock);
	INIT_LIST_HEAD(&c->bdi_list);
	ret = (frames_none(cfg) ? page_pool_init_nodata : page_pool_init)
		(&c->pool, cfg->mem_limit_pages ? cfg->mem_limit_pages :
						  cfg->nr_pages);
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
		goto out_slot;
	pr_info("cache: %zu pages, HZ=%u, policy %s", cfg->nr_pages, cfg->hz,
		pol->spec);
	*out = h_make(H_CACHE, (uint32_t)(s - caches), hslot_publish(&s->h));
	return 0;

out_slot:
	hslot_release(&s->h);
out_hz:
	release_hz();
out_policy:
	wb_policy_release(pol);
	kfree(pol);
	return ret;
}

/* The string lives as long as the cache: the caller's to keep it open. */
const char *uf_cache_policy(struct uf_cache *h)
{
	return with_handle(cache_get, h, s, NULL,
			   (const char *)s->cache.policy->spec);
}

/* Close every device of the cache, and their files (cache close). */
static int cache_close_devs(struct uf_cache_slot *s)
{
	struct uf_dev *d;
	int i, ret = 0, err;
	uint64_t gen;
	bool mine;

	for (i = 0; i < UF_MAX_DEVS; i++) {
		d = &devs[i];
		if (!hslot_get_live(&d->h, &gen))
			continue;
		mine = d->cache == &s->cache;
		hslot_put(&d->h);
		if (!mine)
			continue;
		err = dev_close_cascade(d, gen);
		if (!ret)
			ret = err;
	}
	return ret;
}

static bool cache_has_devs(struct uf_cache_slot *s)
{
	return __atomic_load_n(&s->nr_devs, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Calls on the cache and page handles are waited for first (the pool goes
 * away), then each device is closed with its files; a device closed by
 * someone else meanwhile is waited for.
 */
static int cache_close(struct uf_cache *h, bool discard)
{
	struct uf_cache_slot *s;
	struct uf_cache *c;
	uint64_t gen;
	uint32_t idx;
	int ret;

	if (!h_decode(h, H_CACHE, &idx, &gen) || idx >= UF_MAX_CACHES)
		return -EBADF;
	s = &caches[idx];
	if (s_gen(__atomic_load_n(&s->h.state, __ATOMIC_ACQUIRE)) != gen)
		return -EBADF;
	if (closing_from_callback(s, NULL, NULL))
		return -EDEADLK;
	ret = close_busy(s, NULL, "uf_cache_close");
	if (ret)
		return ret;
	if (!hslot_kill(&s->h, gen))
		return -EBADF;
	hslot_drain(&s->h);
	/* atomic: a file closed by its own caller meanwhile reads it */
	__atomic_store_n(&s->discard, discard, __ATOMIC_RELAXED);
	ret = cache_close_devs(s);
	wait_event(handles_wq, !cache_has_devs(s));
	c = &s->cache;
	kswapd_stop(c);
	uf_trace_close(c);
	page_writeback_exit(c);
	page_pool_exit(&c->pool);
	wb_policy_release(c->policy);
	kfree(c->policy);
	c->policy = NULL;
	__atomic_store_n(&s->discard, false, __ATOMIC_RELAXED);
	hslot_release(&s->h);
	release_hz();
	return ret;
}

int uf_cache_close(struct uf_cache *h)
{
	return cache_close(h, false);
}

int uf_cache_close_discard(struct uf_cache *h, const char *confirm)
{
	struct uf_cache_slot *s = cache_get(h);

	if (!s)
		return -EBADF;
	hslot_put(&s->h);
	if (!confirm || strcmp(confirm, UF_DISCARD_DIRTY))
		return -EINVAL;
	return cache_close(h, true);
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

static int cache_set_tunable(struct uf_cache *c, const char *name,
			     unsigned long value)
{
	unsigned long *f;

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
	if (!strcmp(name, "dirty_bytes") && !value &&
	    !__atomic_load_n(&c->vm.vm_dirty_ratio, __ATOMIC_RELAXED))
		return -EINVAL;	/* would leave no dirty limit at all */
	__atomic_store_n(f, value, __ATOMIC_RELAXED);
	/* as the sysctl handlers do: a ratio clears the bytes, and back;
	 * atomic, as the flushers and throttled writers read them */
	if (!strcmp(name, "dirty_ratio"))
		__atomic_store_n(&c->vm.vm_dirty_bytes, 0, __ATOMIC_RELAXED);
	else if (!strcmp(name, "dirty_bytes") && value)
		__atomic_store_n(&c->vm.vm_dirty_ratio, 0, __ATOMIC_RELAXED);
	else if (!strcmp(name, "dirty_background_ratio"))
		__atomic_store_n(&c->vm.dirty_background_bytes, 0,
				 __ATOMIC_RELAXED);
	else if (!strcmp(name, "dirty_background_bytes") && value)
		__atomic_store_n(&c->vm.dirty_background_ratio, 0,
				 __ATOMIC_RELAXED);
	if (!strcmp(name, "dirty_ratio") || !strcmp(name, "dirty_bytes")) {
		update_completion_period(c);
		writeback_set_ratelimit(c);
	}
	return 0;
}

int uf_cache_set_tunable(struct uf_cache *h, const char *name,
			 unsigned long value)
{
	return with_cache(h, s, cache_set_tunable(&s->cache, name, value));
}

static int cache_get_tunable(struct uf_cache *c, const char *name,
			     unsigned long *value)
{
	unsigned long *f = name && value ? tunable_field(c, name) : NULL;

	if (!name || !value)
		return -EINVAL;
	if (!f)
		return -ENOENT;
	*value = __atomic_load_n(f, __ATOMIC_RELAXED);
	return 0;
}

int uf_cache_get_tunable(struct uf_cache *h, const char *name,
			 unsigned long *value)
{
	return with_cache(h, s, cache_get_tunable(&s->cache, name, value));
}

static int cache_fill_stats(struct uf_cache *c, struct uf_cache_stats *st)
{
	unsigned long bg, dirty;

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
	st->at_jiffies = jiffies;
	st->at_ns = uf_now_ns();
	return 0;
}

int uf_cache_stats(struct uf_cache *h, struct uf_cache_stats *st)
{
	return with_cache(h, s, cache_fill_stats(&s->cache, st));
}

/* Tests only: the objects stay valid while the handle is open. */
struct uf_cache *uf_cache_obj(struct uf_cache *h)
{
	return with_handle(cache_get, h, s, NULL, &s->cache);
}

int uf_policy_resolve(const char *spec, char *buf, size_t len)
{
	struct wb_policy *pol;
	int ret;

	if (!buf || !len)
		return -EINVAL;
	pol = kzalloc(sizeof(*pol));
	if (!pol)
		return -ENOMEM;
	ret = wb_policy_resolve(spec, pol);
	if (!ret) {
		if ((size_t)snprintf(buf, len, "%s", pol->spec) >= len)
			ret = -ERANGE;
		wb_policy_release(pol);
	}
	kfree(pol);
	return ret;
}

int uf_sync(struct uf_cache *h)
{
	struct uf_cache_slot *s = cache_get(h);
	int i, ret = 0, err;
	struct uf_dev *d;
	uint64_t gen;

	if (!s)
		return -EBADF;
	wakeup_flusher_threads(&s->cache, 0, WB_REASON_SYNC);
	for (i = 0; i < UF_MAX_DEVS; i++) {
		d = &devs[i];
		if (!hslot_get_live(&d->h, &gen))
			continue;
		err = d->cache == &s->cache ? dev_sync(d) : 0;
		hslot_put(&d->h);
		if (!ret)
			ret = err;
	}
	hslot_put(&s->h);
	return ret;
}
