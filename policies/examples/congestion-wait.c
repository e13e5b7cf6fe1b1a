// SPDX-License-Identifier: MIT
/*
 * policies/examples/congestion-wait.c - an example flush policy plugin.
 *
 * Before the 3.x "wait on the oldest b_more_io inode", writeback that made
 * no progress slept a fixed HZ/10 (congestion_wait(WRITE, HZ/10), the 2.6
 * pdflush, e.g. Linux 2.6.30 mm/page-writeback.c:background_writeout()).
 * This plugin puts that back as
 * the no-progress handling of whatever policy it is loaded into:
 *
 *	cfg.policy = "kara-v4.2,plugin=build/plugins/congestion-wait.so";
 *
 * Build it against an installed uflush (make install puts this file in
 * share/uflush/examples/):
 *
 *	cc -shared -fPIC $(pkg-config --cflags uflush-plugin) \
 *	   -o congestion-wait.so congestion-wait.c
 *
 * or in the source tree (make does it): -Iinclude -iquote engine -iquote .
 * -D_GNU_SOURCE.  The symbols it calls (schedule_timeout, ...) come from
 * the process that loads it: link that with libuflush.so, or with
 * libuflush.a and -rdynamic.  UF_POLICY_PLUGIN_ABI records the plugin ABI
 * it was built for; uflush refuses a plugin of another one.
 */
#include <stdio.h>
#include <string.h>

#include "mm/backing-dev.h"
#include "kernel/jiffies.h"
#include "policies/policy.h"
#include "kernel/sched.h"
#include "trace/events/writeback.h"

static bool no_progress_congestion_wait(struct bdi_writeback *wb,
					struct wb_writeback_work *work,
					struct wb_loop_state *st)
{
	st->nr_waits++;
	trace_writeback_wait(wb->bdi, work);
	spin_unlock(&wb->list_lock);
	__set_current_state(TASK_UNINTERRUPTIBLE);
	schedule_timeout((long)HZ / 10);
	spin_lock(&wb->list_lock);
	return false;
}

UF_POLICY_PLUGIN_ABI;

int uf_policy_plugin_init(struct wb_policy *pol)
{
	pol->no_progress = no_progress_congestion_wait;
	return 0;
}
