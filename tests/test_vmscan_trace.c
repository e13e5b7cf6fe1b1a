// SPDX-License-Identifier: MIT
/*
 * tests/test_vmscan_trace.c - every reclaim tracepoint line matches the
 * TP_printk format of the kernel its reclaim variant follows, transcribed
 * here from the headers: 3.2.41 include/trace/events/vmscan.h and
 * writeback.h (the 3.x presets; linux-3.1 runs reclaim=legacy, which also
 * writes pages from direct reclaim), and mainline's (6.18; reclaim=
 * mainline).  The seed-003 wait (writeback_reclaim_wait) keeps the seed's
 * format, that of writeback_congest_waited.  So the kernel's parsers
 * (Documentation/trace/postprocess/trace-vmscan-postprocess.pl, perf)
 * read uflush's traces.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/jiffies.h"
#include "mm/backing-dev.h"
#include "mm/mm.h"
#include "mm/pagemap.h"
#include "mm/vmscan.h"
#include "trace/events/vmscan.h"
#include "testutil.h"
#include "uflush-internal.h"
#include "uflush.h"

struct tp_fmt {
	const char *event;
	const char *fmt;
	bool required;		/* the scenario below must produce it */
	int seen;
};

#define CONGEST_WAITED "usec_timeout=%u usec_delayed=%u"

/* 3.2.41 include/trace/events/vmscan.h and writeback.h, TP_printk */
static struct tp_fmt fmt_32[] = {
	{ "mm_vmscan_kswapd_sleep", "nid=%d", true, 0 },
	{ "mm_vmscan_kswapd_wake", "nid=%d order=%d", true, 0 },
	{ "mm_vmscan_wakeup_kswapd", "nid=%d zid=%d order=%d", true, 0 },
	{ "mm_vmscan_direct_reclaim_begin",
	  "order=%d may_writepage=%d gfp_flags=%s", true, 0 },
	{ "mm_vmscan_direct_reclaim_end", "nr_reclaimed=%lu", true, 0 },
	{ "mm_vmscan_lru_isolate",
	  "isolate_mode=%d order=%d nr_requested=%lu nr_scanned=%lu nr_taken=%lu contig_taken=%lu contig_dirty=%lu contig_failed=%lu",
	  true, 0 },
	{ "mm_vmscan_writepage", "page=%p pfn=%lu flags=%s", true, 0 },
	{ "mm_vmscan_lru_shrink_inactive",
	  "nid=%d zid=%d nr_scanned=%ld nr_reclaimed=%ld priority=%d flags=%s",
	  true, 0 },
	{ "writeback_congestion_wait", CONGEST_WAITED, true, 0 },
	{ "writeback_wait_iff_congested", CONGEST_WAITED, true, 0 },
	{ "writeback_reclaim_wait", CONGEST_WAITED, true, 0 },
	{ NULL, NULL, false, 0 },
};

/* 6.18.35 include/trace/events/vmscan.h, TP_printk (lines 63-536).
 * mm_vmscan_write_folio (343) is not required: 6.18 writes no file folio
 * from reclaim, and a mm_vmscan_writepage line fails (no format here). */
static struct tp_fmt fmt_mainline[] = {
	{ "mm_vmscan_kswapd_sleep", "nid=%d", true, 0 },
	{ "mm_vmscan_kswapd_wake", "nid=%d order=%d", true, 0 },
	{ "mm_vmscan_wakeup_kswapd", "nid=%d order=%d gfp_flags=%s", true, 0 },
	{ "mm_vmscan_direct_reclaim_begin", "order=%d gfp_flags=%s", true, 0 },
	{ "mm_vmscan_direct_reclaim_end", "nr_reclaimed=%lu", true, 0 },
	{ "mm_vmscan_lru_isolate",
	  "classzone=%d order=%d nr_requested=%lu nr_scanned=%lu nr_skipped=%lu nr_taken=%lu lru=%s",
	  true, 0 },
	{ "mm_vmscan_write_folio", "page=%p pfn=0x%lx flags=%s", false, 0 },
	{ "mm_vmscan_lru_shrink_inactive",
	  "nid=%d nr_scanned=%ld nr_reclaimed=%ld nr_dirty=%ld nr_writeback=%ld nr_congested=%ld nr_immediate=%ld nr_activate_anon=%d nr_activate_file=%d nr_ref_keep=%ld nr_unmap_fail=%ld priority=%d flags=%s",
	  true, 0 },
	{ "mm_vmscan_throttled",
	  "nid=%d usec_timeout=%d usect_delayed=%d reason=%s", true, 0 },
	{ NULL, NULL, false, 0 },
};

/*
 * @text against @fmt: literal characters exactly; %d %ld a decimal with
 * an optional '-'; %u %lu a decimal; %lx hex digits; %p the kernel's %p
 * (hex digits, no 0x); %s a symbol or flag list ([A-Za-z0-9_|]+).
 */
static bool fmt_match(const char *fmt, const char *text)
{
	const char *f = fmt, *t = text;
	char conv;
	int n;

	while (*f) {
		if (*f != '%') {
			if (*t++ != *f++)
				return false;
			continue;
		}
		f++;
		while (*f == 'l')
			f++;
		conv = *f++;
		n = 0;
		if (conv == 'd' && *t == '-')
			t++;
		for (;; n++, t++) {
			char ch = *t;
			bool ok;

			switch (conv) {
			case 'd': case 'u':
				ok = ch >= '0' && ch <= '9';
				break;
			case 'x': case 'p':
				ok = (ch >= '0' && ch <= '9') ||
				     (ch >= 'a' && ch <= 'f');
				break;
			case 's':
				ok = (ch >= 'A' && ch <= 'Z') ||
				     (ch >= 'a' && ch <= 'z') ||
				     (ch >= '0' && ch <= '9') ||
				     ch == '_' || ch == '|';
				break;
			default:
				cr_assert_fail("conversion %%%c in \"%s\"", conv,
					       fmt);
				return false;
			}
			if (!ok)
				break;
		}
		if (!n)
			return false;
	}
	return *t == '\0';
}

static struct tp_fmt *find_fmt(struct tp_fmt *tab, const char *event)
{
	for (; tab->event; tab++)
		if (!strcmp(tab->event, event))
			return tab;
	return NULL;
}

/* "comm-pid [cpu] sec.usec: event: fields": every reclaim event line is
 * checked; returns the number checked. */
static int check_trace(const char *path, struct tp_fmt *tab)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int checked = 0;

	cr_assert(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		char *ev, *end, *fields;
		struct tp_fmt *tp;

		line[strcspn(line, "\n")] = '\0';
		ev = strchr(line, ']');
		ev = ev ? strstr(ev, ": ") : NULL;
		cr_assert(ev, "not a trace line: %s", line);
		ev += 2;
		end = strstr(ev, ": ");
		cr_assert(end, "no fields: %s", line);
		*end = '\0';
		fields = end + 2;
		if (strncmp(ev, "mm_vmscan_", 10) &&
		    !strstr(ev, "_wait") && !strstr(ev, "congested"))
			continue;
		tp = find_fmt(tab, ev);
		if (!tp && (!strcmp(ev, "writeback_congestion_wait") ||
			    !strcmp(ev, "writeback_wait_iff_congested")))
			cr_assert_fail("%s: a 3.x wait in a mainline trace", ev);
		if (!tp && strncmp(ev, "mm_vmscan_", 10))
			continue;	/* another writeback event */
		cr_assert(tp, "%s: no format transcribed for it", ev);
		cr_assert(fmt_match(tp->fmt, fields),
			  "%s: \"%s\" is not \"%s\"", ev, fields, tp->fmt);
		tp->seen++;
		checked++;
	}
	fclose(f);
	for (; tab->event; tab++)
		cr_assert(!tab->required || tab->seen, "no %s line", tab->event);
	return checked;
}

/* The matcher itself: each conversion refuses what it should. */
Test(vmscan_trace, fmt_match_refuses)
{
	cr_assert(fmt_match("nid=%d zid=%d", "nid=0 zid=2"));
	cr_assert(fmt_match("a=%ld", "a=-3"));
	cr_assert_not(fmt_match("a=%lu", "a=-3"));
	cr_assert_not(fmt_match("nid=%d zid=%d", "nid=0"));
	cr_assert_not(fmt_match("nid=%d", "nid=0 zid=2"), "extra fields");
	cr_assert_not(fmt_match("nid=%d order=%d", "order=0 nid=0"));
	cr_assert(fmt_match("page=%p pfn=0x%lx", "page=00007f12ab pfn=0x1f"));
	cr_assert_not(fmt_match("page=%p", "page=0x7f12ab"), "glibc's %%p");
	cr_assert(fmt_match("flags=%s", "flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"));
	cr_assert_not(fmt_match("reason=%s", "reason="));
}

/* Until @event is in the trace (kswapd writes from its own thread). */
static bool wait_for_line(const char *path, const char *event)
{
	char needle[128];
	char line[1024];
	int i;

	snprintf(needle, sizeof(needle), ": %s: ", event);
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		bool found = false;

		cr_assert(f);
		while (!found && fgets(line, sizeof(line), f))
			found = strstr(line, needle) != NULL;
		fclose(f);
		if (found)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * 8 pages written, then reads fill the 1024-frame cache behind them
 * (kswapd woken, runs, sleeps); direct reclaims until they reach the dirty
 * pages (legacy writes them; mainline marks them PG_reclaim and
 * activates them, and a kswapd run with the high mark out of reach
 * activates them again, writing none); then each wait once.
 */
static void run_scenario(const char *policy, const char *trace, bool ml)
{
	const char *path = tu_dev(TU_FILE, 8ull << 20);
	struct uf_cache_config cfg;
	struct uf_cache_stats st;
	struct uf_cache *cache;
	struct uf_file *file;
	struct uf_dev *dev;
	struct uf_cache *c;
	char *buf = tu_alloc(1 << 20);
	unsigned long high;
	int i;

	uf_cache_config_init(&cfg);
	cfg.nr_pages = 1024;
	cfg.policy = policy;
	cfg.trace_path = trace;
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	c = uf_cache_obj(cache);
	cr_assert_eq(reclaim_is_3x(c), !ml);
	dev = tu_cache_dev(cache, path, UF_DEV_NO_FLUSHER);
	file = tu_file_open(dev, 1, 0, 8u << 20, NULL, NULL);
	for (i = 0; i < 8; i++) {
		tu_fill(buf, PAGE_SIZE, (uint64_t)i * PAGE_SIZE, 3);
		cr_assert_eq(uf_pwrite(file, buf, PAGE_SIZE,
				       (uint64_t)i * PAGE_SIZE),
			     (ssize_t)PAGE_SIZE);
	}
	for (i = 1; i < 8; i++)
		cr_assert_eq(uf_pread(file, buf, 1 << 20, (uint64_t)i << 20),
			     1 << 20);
	cr_assert(wait_for_line(trace, "mm_vmscan_kswapd_sleep"),
		  "kswapd never went back to sleep");
	/* until reclaim met the dirty pages behind the clean ones: legacy
	 * wrote them, mainline marked them */
	for (i = 0; i < 64; i++) {
		try_to_free_pages(c, SWAP_CLUSTER_MAX);
		cr_assert_eq(uf_cache_stats(cache, &st), 0);
		if (ml ? st.nr_immediate >= 8 : st.nr_pageout > 0)
			break;
	}
	if (ml) {
		high = c->pool.wmark_high;
		c->pool.wmark_high = c->pool.nr;
		balance_pgdat(c);
		c->pool.wmark_high = high;
		reclaim_throttle_writeback(c);
	} else {
		congestion_wait(c, BLK_RW_ASYNC, 1);
		wait_iff_congested(c, BLK_RW_ASYNC, 1);
		reclaim_wait(c, 1);
	}
	cr_assert_eq(uf_fsync(file), 0);
	free(buf);
	cr_assert_eq(uf_file_close(file), 0);
	cr_assert_eq(uf_dev_close(dev), 0);
	cr_assert_eq(uf_cache_close(cache), 0);
}

static void scenario(const char *policy, struct tp_fmt *tab, bool ml)
{
	char trace[] = "/tmp/uflush-vmscan-trace.XXXXXX";
	int fd = mkstemp(trace);
	int n;

	cr_assert_geq(fd, 0);
	close(fd);
	run_scenario(policy, trace, ml);
	n = check_trace(trace, tab);
	cr_log_info("%s: %d reclaim event lines match", policy, n);
	unlink(trace);
}

Test(vmscan_trace, linux_31_lines_are_3_2_41s, .timeout = 120,
     .fini = tu_fini)
{
	scenario("linux-3.1", fmt_32, false);
}

Test(vmscan_trace, linux_32_lines_are_3_2_41s, .timeout = 120,
     .fini = tu_fini)
{
	/* 3.2 writes from kswapd only below priority 10 */
	fmt_32[6].required = false;
	scenario("linux-3.2", fmt_32, false);
}

Test(vmscan_trace, mainline_lines_are_mainlines, .timeout = 120,
     .fini = tu_fini)
{
	scenario("mainline", fmt_mainline, true);
}

/*
 * 6.18 mm_vmscan_throttled (include/trace/events/vmscan.h:512-536):
 * reason is show_throttle_flags(1 << reason), one name per
 * vmscan_throttle_state, in that enum's order; usect_delayed as spelled
 * there.
 */
Test(vmscan_trace, throttled_prints_each_6_18_reason, .timeout = 60)
{
	static const char *const names[NR_VMSCAN_THROTTLE] = {
		"VMSCAN_THROTTLE_WRITEBACK", "VMSCAN_THROTTLE_ISOLATED",
		"VMSCAN_THROTTLE_NOPROGRESS", "VMSCAN_THROTTLE_CONGESTED",
	};
	char trace[] = "/tmp/uflush-vmscan-trace.XXXXXX";
	char line[512], want[160];
	struct uf_cache_config cfg;
	struct uf_cache *cache;
	int fd = mkstemp(trace), r = 0;
	FILE *f;

	cr_assert_geq(fd, 0);
	close(fd);
	uf_cache_config_init(&cfg);
	cfg.nr_pages = 256;
	cfg.policy = "mainline";
	cfg.trace_path = trace;
	cr_assert_eq(uf_cache_open(&cfg, &cache), 0);
	for (r = 0; r < NR_VMSCAN_THROTTLE; r++)
		__trace_mm_vmscan_throttled(uf_cache_obj(cache), 100000, r, r);
	cr_assert_eq(uf_cache_close(cache), 0);
	f = fopen(trace, "r");
	cr_assert(f);
	r = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, ": mm_vmscan_throttled: "))
			continue;
		cr_assert_lt(r, NR_VMSCAN_THROTTLE, "extra line %s", line);
		snprintf(want, sizeof(want),
			 ": mm_vmscan_throttled: nid=0 usec_timeout=100000 usect_delayed=%d reason=%s\n",
			 r, names[r]);
		cr_assert(strstr(line, want), "\"%s\" lacks \"%s\"", line,
			  want);
		r++;
	}
	fclose(f);
	unlink(trace);
	cr_assert_eq(r, NR_VMSCAN_THROTTLE, "%d throttled lines", r);
}
