// SPDX-License-Identifier: MIT
/*
 * engine/trace/trace.c - the trace buffer (kernel/trace/trace.c's role):
 * tracepoints print lines as ftrace prints them, so that the seeds' traces
 * and ours can be read, grepped and plotted alike:
 *
 *   flush-8:0-1170  [004]   211.068428: writeback_start: bdi 8:0: ...
 *
 * comm-pid, [cpu], seconds.microseconds of CLOCK_MONOTONIC, event, fields
 * in the kernel's order.  One line is one write under a lock, so lines of
 * concurrent tasks never interleave.  The events live in trace/events/,
 * one file per include/trace/events/ header.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kernel/sched.h"
#include "kernel/sim.h"
#include "lib/slab.h"
#include "trace/trace.h"

struct uf_trace {
	FILE *f;
	pthread_mutex_t lock;
};

int uf_trace_open(struct uf_cache *cache, const char *path)
{
	struct uf_trace *t;

	t = kzalloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->f = fopen(path, "ae");
	if (!t->f) {
		int err = -errno;

		kfree(t);
		return err;
	}
	pthread_mutex_init(&t->lock, NULL);
	cache->trace = t;
	return 0;
}

void uf_trace_close(struct uf_cache *cache)
{
	struct uf_trace *t = cache->trace;

	if (!t)
		return;
	cache->trace = NULL;
	fclose(t->f);
	pthread_mutex_destroy(&t->lock);
	kfree(t);
}

/*
 * Inside a world (kernel/sim.c): virtual time, CPU 0 and virtual pids,
 * so that a run's trace is a function of its seed and inputs; each line
 * goes into the world's trace hash.
 */
static void trace_emit_sim(struct uf_trace *t, struct task_struct *tsk,
			   const char *event, const char *fields)
{
	uint64_t ns = uf_sim_now_ns();
	char line[640];
	int n;

	n = snprintf(line, sizeof(line),
		     "%16s-%-5d [000] %5llu.%06llu: %s: %s\n",
		     tsk->comm, (int)tsk->pid,
		     (unsigned long long)(ns / 1000000000ull),
		     (unsigned long long)(ns % 1000000000ull / 1000), event,
		     fields);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	uf_sim_trace_line(line, (size_t)n);
	pthread_mutex_lock(&t->lock);
	fwrite(line, 1, (size_t)n, t->f);
	fflush(t->f);
	pthread_mutex_unlock(&t->lock);
}

void trace_emit(struct uf_cache *c, const char *event,
		       const char *fmt, ...)
{
	struct uf_trace *t = c->trace;
	struct task_struct *tsk = current;
	char fields[512];
	struct timespec ts;
	va_list ap;
	int cpu;

	if (!t)
		return;
	va_start(ap, fmt);
	vsnprintf(fields, sizeof(fields), fmt, ap);
	va_end(ap);
	if (uf_in_sim()) {
		trace_emit_sim(t, tsk, event, fields);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	cpu = sched_getcpu();
	pthread_mutex_lock(&t->lock);
	fprintf(t->f, "%16s-%-5d [%03d] %5ld.%06ld: %s: %s\n", tsk->comm,
		(int)tsk->pid, cpu < 0 ? 0 : cpu, (long)ts.tv_sec,
		ts.tv_nsec / 1000, event, fields);
	fflush(t->f);
	pthread_mutex_unlock(&t->lock);
}

