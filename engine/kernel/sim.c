// SPDX-License-Identifier: MIT
/*
 * engine/kernel/sim.c - the deterministic world (issue 19): one CPU's
 * scheduler, in the role of the kernel's kernel/sched/core.c (__schedule
 * picking the next task, try_to_wake_up putting one on the run queue,
 * do_task_dead), with the clock of a discrete-event simulation.
 *
 * The baton.  Each task is a pthread; W.running names the one allowed to
 * run, and every other task of the world waits on its own condition
 * variable for its turn.  A task hands over only inside this file, with
 * W.lock held: it picks the next runnable task (seeded), makes it
 * W.running and signals it, then waits until it is W.running again.  So
 * the engine's code never runs concurrently inside a world, and the order
 * of everything it does is a function of the seed and the inputs.
 *
 * Blocking.  schedule() in a sleeping state, condition waits of the
 * engine (io/blkdev.c's queue room and synchronous waiter, io/sim.c's
 * completion thread, kernel/rwsem.h), joins and virtual sleeps are world
 * blocks.  Wakeups (try_to_wake_up, a condition signal, a deadline) put a
 * task on the run queue and never run it.  A block with spinlocks held is
 * a bug (the kernel's "scheduling while atomic"), and since only one task
 * runs, a contended spinlock can only be one: spin_lock() reports it
 * (uf_sim_spin_contended) instead of blocking the world, at no cost to
 * the uncontended path.  Plain pthread mutexes of the engine are never
 * held across a block either (the condition waits release theirs; a
 * sleeping lock is a uf_mutex_lock()).
 *
 * Idle.  With no task runnable, the task that is handing over moves the
 * clock to the earliest event: the first timer (kernel/timer.c, jiffies
 * converted to the first nanosecond at which jiffies reaches it), the
 * first deadline of a timed wait or the first callback event (to the
 * nanosecond: a sim device's power cut, uf_sim_event_at), and fires it;
 * timer and event callbacks run there, as in softirq context.  No event
 * and no runnable task: -EDEADLK.
 *
 * Time.  Virtual nanoseconds from 0; jiffies = INITIAL_JIFFIES + ns * HZ
 * / 1e9 (kernel/jiffies.c's virtual clock is stepped along).  One virtual
 * CPU: charged work (uf_sim_charge_cost) moves the clock; a task that has
 * run a tick (1e9 / HZ ns) since it was picked is preempted at the next
 * preemption point (cond_resched(), schedule() while running, a lock
 * break), as the tick's need_resched would, so a task that never sleeps
 * cannot stop time.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uflush.h"
#include "kernel/jiffies.h"
#include "kernel/kthread.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/sim.h"
#include "kernel/timer.h"
#include "lib/list.h"
#include "lib/slab.h"

bool uf_sim_world;

#define SIM_NS_PER_S	1000000000ull
#define SIM_START_NS	0ull

/* Defaults of the cost model, ns (DESIGN.md: how they were measured). */
static const uint64_t sim_cost_default[UF_SIM_NR_COSTS] = {
	[UF_SIM_COST_PAGE_COPY] = 500,
	[UF_SIM_COST_PAGE_OP] = 100,
	[UF_SIM_COST_REQUEST] = 10000,
	[UF_SIM_COST_INODE] = 10000,
	[UF_SIM_COST_PAGE_SCAN] = 75,
};

enum sim_block {
	SIM_RUNNABLE,		/* on the run queue, or running */
	SIM_SCHED,		/* in schedule(), in a sleeping state */
	SIM_COND,		/* in a condition wait (wait_key) */
	SIM_SLEEP,		/* uf_sim_sleep_ns() */
	SIM_JOIN,		/* waiting for a task to end */
	SIM_DEAD,
};

/* Callbacks at virtual instants (uf_sim_event_at): a device's power cut. */
#define SIM_MAX_EVENTS	64

struct sim_event {
	uint64_t at, seq;
	void (*fn)(void *);
	void *arg;
	bool used;
};

static const char *const sim_block_name[] = {
	"runnable", "schedule", "condition wait", "virtual sleep", "join",
	"dead",
};

struct uf_sim_task {
	struct list_head all;		/* W.tasks, creation order */
	struct list_head timed;		/* W.timed, by (wake_at, seq) */
	pthread_cond_t run_cond;	/* on W.lock: our turn */
	pthread_t thread;
	bool have_thread;
	struct task_struct *task;	/* bound by uf_sim_bind() */
	char name[TASK_COMM_LEN];
	pid_t vpid;

	enum sim_block block;
	const void *wait_key;		/* SIM_COND: the condition */
	const void *wchan;		/* where it blocked, for the dump */
	uint64_t wake_at;		/* timed block: deadline, 0 none */
	uint64_t timed_seq;
	bool timed_out;

	uint64_t slice_start;		/* ns when last picked */
	uint64_t cpu_ns;

	/* a thread's body */
	void *(*fn)(void *);
	void *arg;
	/* uf_sim_spawn() tasks */
	int (*task_fn)(void *);
	void *task_arg;
	int ret;
	bool is_main, spawned, joined;
	struct uf_sim_task *joiner;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t end_cond;	/* the uf_sim_run() caller */
	bool exists;			/* a world started and has not ended */
	bool poisoned;			/* a world failed: tasks are frozen */
	bool ended;
	int end_err;

	struct uf_sim_task *running;
	struct uf_sim_task **rq;	/* runnable, not running */
	unsigned int nr_rq, rq_cap;
	struct list_head tasks;
	struct list_head timed;
	uint64_t timed_seq;
	unsigned int nr_live, nr_tasks;
	pid_t next_vpid;

	uint64_t now;			/* atomic for readers */
	unsigned long base_jiffies;
	uint64_t tick_ns;
	uint64_t max_ns;
	uint64_t rng;
	uint64_t seed;
	uint64_t cost[UF_SIM_NR_COSTS];

	struct sim_event ev[SIM_MAX_EVENTS];
	uint64_t ev_seq;

	uint64_t hash;
	uint64_t switches, events, cpu_ns;
	int main_ret;
	bool main_done;
} W = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.end_cond = PTHREAD_COND_INITIALIZER,
	.tasks = LIST_HEAD_INIT(W.tasks),
	.timed = LIST_HEAD_INIT(W.timed),
};

static __thread struct uf_sim_task *sim_self;

/* The registered resets and exit hooks (uf_sim_register_reset, _exit),
 * on W.lock: room for the few owners of such state. */
#define SIM_MAX_RESETS	8

static void (*sim_resets[SIM_MAX_RESETS])(void);
static unsigned int nr_sim_resets;
static void (*sim_exits[SIM_MAX_RESETS])(void);
static unsigned int nr_sim_exits;

/* ---- helpers ---- */

#define FNV_OFFSET	0xcbf29ce484222325ull
#define FNV_PRIME	0x100000001b3ull

/* UFLUSH_SIM_DUMP=file: what goes into the hash, appended, one world
 * after the other (to diff two runs of a seed). */
static FILE *sim_dump;

static void hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;

	if (sim_dump)
		fwrite(p, 1, n, sim_dump);
	while (n--) {
		W.hash ^= *s++;
		W.hash *= FNV_PRIME;
	}
}

/* splitmix64: small, seedable, and the same everywhere. */
static uint64_t sim_rand(void)
{
	uint64_t z = (W.rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t now_ns(void)
{
	return __atomic_load_n(&W.now, __ATOMIC_RELAXED);
}

/* The running task has had its tick: the tick's need_resched.  The
 * preemption points are where the kernel may sleep: no spinlock held. */
static bool tick_used(const struct uf_sim_task *me)
{
	return now_ns() - me->slice_start >= W.tick_ns;
}

static unsigned long ns_to_jiffies(uint64_t ns)
{
	return W.base_jiffies +
	       (unsigned long)((unsigned __int128)(ns - SIM_START_NS) *
			       (unsigned int)HZ / SIM_NS_PER_S);
}

/* The first nanosecond at which jiffies reads @expires. */
static uint64_t jiffies_to_ns(unsigned long expires)
{
	long d = (long)(expires - W.base_jiffies);

	if (d <= 0)
		return SIM_START_NS;
	return SIM_START_NS +
	       (uint64_t)(((unsigned __int128)d * SIM_NS_PER_S +
			   (unsigned int)HZ - 1) / (unsigned int)HZ);
}

static void clock_set(uint64_t ns)
{
	__atomic_store_n(&W.now, ns, __ATOMIC_RELAXED);
	uf_clock_step(ns_to_jiffies(ns));
}

/* ---- the run queue ---- */

static void rq_add(struct uf_sim_task *t)
{
	struct uf_sim_task **n;

	if (W.nr_rq == W.rq_cap) {
		W.rq_cap = W.rq_cap ? 2 * W.rq_cap : 64;
		n = realloc(W.rq, W.rq_cap * sizeof(*n));
		if (!n) {
			pr_err("sim: out of memory for the run queue");
			abort();
		}
		W.rq = n;
	}
	t->block = SIM_RUNNABLE;
	W.rq[W.nr_rq++] = t;
}

/* The seeded pick: any runnable task, order of the queue kept. */
static struct uf_sim_task *rq_pick(void)
{
	unsigned int i = (unsigned int)(sim_rand() % W.nr_rq);
	struct uf_sim_task *t = W.rq[i];

	memmove(&W.rq[i], &W.rq[i + 1], (W.nr_rq - i - 1) * sizeof(*W.rq));
	W.nr_rq--;
	return t;
}

static void timed_del(struct uf_sim_task *t)
{
	if (t->wake_at) {
		list_del_init(&t->timed);
		t->wake_at = 0;
	}
}

static void timed_add(struct uf_sim_task *t, uint64_t at)
{
	struct uf_sim_task *pos;

	t->wake_at = at ? at : 1;
	t->timed_seq = ++W.timed_seq;
	list_for_each_entry_reverse(pos, &W.timed, timed)
		if (pos->wake_at <= t->wake_at)
			break;
	list_add(&t->timed, &pos->timed);
}

/* With W.lock: a blocked task becomes runnable. */
static void make_runnable(struct uf_sim_task *t)
{
	if (t->block == SIM_RUNNABLE || t->block == SIM_DEAD)
		return;
	timed_del(t);
	t->wait_key = NULL;
	rq_add(t);
}

/* ---- the end of a world ---- */

static void dump_tasks(void)
{
	struct uf_sim_task *t;
	Dl_info info;

	list_for_each_entry(t, &W.tasks, all) {
		if (t->block == SIM_DEAD)
			continue;
		if (t->wchan && dladdr(t->wchan, &info) && info.dli_sname)
			pr_err("sim:   %s-%d: %s in %s%s", t->name, (int)t->vpid,
			       sim_block_name[t->block], info.dli_sname,
			       t->block == SIM_SCHED && t->task &&
			       (__atomic_load_n(&t->task->__state,
						__ATOMIC_RELAXED) &
				TASK_UNINTERRUPTIBLE) ? " (D)" : "");
		else
			pr_err("sim:   %s-%d: %s", t->name, (int)t->vpid,
			       sim_block_name[t->block]);
	}
}

/* With W.lock: the world is over; wake its caller.  On an error nobody
 * gets the baton again. */
static void world_end(int err)
{
	if (W.ended)
		return;
	W.ended = true;
	W.end_err = err;
	W.running = NULL;
	if (err)
		W.poisoned = true;
	pthread_cond_broadcast(&W.end_cond);
}

static void world_fail(int err, const char *why)
{
	pr_err("sim: world at %llu ns: %s; tasks:",
	       (unsigned long long)now_ns(), why);
	dump_tasks();
	world_end(err);
}

/* ---- events ---- */

/* With W.lock: the earliest callback event, by (at, seq); NULL if none. */
static struct sim_event *event_first(void)
{
	struct sim_event *e, *first = NULL;

	for (e = W.ev; e < W.ev + SIM_MAX_EVENTS; e++)
		if (e->used && (!first || e->at < first->at ||
				(e->at == first->at && e->seq < first->seq)))
			first = e;
	return first;
}

/*
 * With W.lock: run the callback events due by now, earliest first, each
 * without W.lock (a device's cut takes its lock and wakes tasks, as a
 * timer callback does).  The slot is freed first: a callback may re-arm.
 */
static void fire_events(void)
{
	struct sim_event *e;
	void (*fn)(void *);
	void *arg;
	char rec[48];
	int n;

	while ((e = event_first()) && e->at <= now_ns()) {
		fn = e->fn;
		arg = e->arg;
		e->used = false;
		n = snprintf(rec, sizeof(rec), "E@%llu\n",
			     (unsigned long long)now_ns());
		hash_bytes(rec, (size_t)n);
		pthread_mutex_unlock(&W.lock);
		fn(arg);
		pthread_mutex_lock(&W.lock);
	}
}

int uf_sim_event_at(uint64_t at_ns, void (*fn)(void *), void *arg)
{
	struct sim_event *e;
	int ret = -ENOSPC;

	if (!uf_sim_active())
		return -EPERM;
	if (!fn)
		return -EINVAL;
	pthread_mutex_lock(&W.lock);
	if (at_ns < now_ns()) {
		pthread_mutex_unlock(&W.lock);
		return -EINVAL;
	}
	for (e = W.ev; e < W.ev + SIM_MAX_EVENTS; e++) {
		if (e->used)
			continue;
		*e = (struct sim_event){ .at = at_ns, .seq = ++W.ev_seq,
					 .fn = fn, .arg = arg, .used = true };
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&W.lock);
	return ret;
}

void uf_sim_event_cancel(void (*fn)(void *), void *arg)
{
	struct sim_event *e;

	pthread_mutex_lock(&W.lock);
	for (e = W.ev; e < W.ev + SIM_MAX_EVENTS; e++)
		if (e->used && e->fn == fn && e->arg == arg)
			e->used = false;
	pthread_mutex_unlock(&W.lock);
}

/* With W.lock: fire the events, timed waits and timers due by now. */
static void fire_due(void)
{
	struct uf_sim_task *t;
	unsigned long exp;
	uint64_t now = now_ns();

	fire_events();
	while (!list_empty(&W.timed)) {
		t = list_first_entry(&W.timed, struct uf_sim_task, timed);
		if (t->wake_at > now)
			break;
		t->timed_out = true;
		make_runnable(t);
	}
	while (!uf_clock_next_expiry(&exp) &&
	       time_before_eq(exp, ns_to_jiffies(now))) {
		/* callbacks wake tasks (W.lock): run them without it */
		pthread_mutex_unlock(&W.lock);
		uf_run_next_timer(ns_to_jiffies(now), false);
		pthread_mutex_lock(&W.lock);
	}
}

/* With W.lock, nothing runnable: jump to the next event and fire it.
 * False if the world ended instead. */
static bool idle_step(void)
{
	uint64_t next = UINT64_MAX, at;
	struct sim_event *e = event_first();
	unsigned long exp;

	if (!list_empty(&W.timed))
		next = list_first_entry(&W.timed, struct uf_sim_task,
					timed)->wake_at;
	if (e && e->at < next)
		next = e->at;
	if (!uf_clock_next_expiry(&exp)) {
		at = jiffies_to_ns(exp);
		if (at < next)
			next = at;
	}
	if (next == UINT64_MAX) {
		world_fail(-EDEADLK, "every task is blocked, no event pending");
		return false;
	}
	if (next < now_ns())
		next = now_ns();
	if (W.max_ns && next > SIM_START_NS + W.max_ns) {
		clock_set(SIM_START_NS + W.max_ns);
		world_fail(-ETIMEDOUT, "the virtual-time limit is reached");
		return false;
	}
	if (next > now_ns()) {
		clock_set(next);
		W.events++;
	}
	fire_due();
	return true;
}

/* ---- handing over ---- */

/*
 * With W.lock: @me (NULL: the caller of uf_sim_run) gives up the baton;
 * pick the next task and make it W.running.  @me may be picked again.
 */
static void dispatch(struct uf_sim_task *me)
{
	struct uf_sim_task *next;
	char rec[48];
	int n;

	if (W.ended)
		return;
	if (!W.nr_live) {
		world_end(0);
		return;
	}
	fire_due();
	while (!W.nr_rq) {
		if (!idle_step())
			return;
	}
	next = rq_pick();
	n = snprintf(rec, sizeof(rec), "%d@%llu\n", (int)next->vpid,
		     (unsigned long long)now_ns());
	hash_bytes(rec, (size_t)n);
	next->slice_start = now_ns();
	W.running = next;
	if (next != me) {
		W.switches++;
		pthread_cond_signal(&next->run_cond);
	}
}

/* With W.lock: wait until @me holds the baton. */
static void wait_turn(struct uf_sim_task *me)
{
	while (W.running != me)
		pthread_cond_wait(&me->run_cond, &W.lock);
}

/* With W.lock: @me, marked blocked (or runnable: a yield), switches. */
static void switch_away(struct uf_sim_task *me)
{
	dispatch(me);
	wait_turn(me);
}

/* With W.lock: a yield, keeping the task runnable. */
static void yield_locked(struct uf_sim_task *me)
{
	rq_add(me);
	switch_away(me);
}

/* ---- tasks ---- */

struct uf_sim_task *uf_sim_self(void)
{
	return sim_self;
}

const char *uf_sim_self_name(void)
{
	return sim_self ? sim_self->name : NULL;
}

pid_t uf_sim_bind(struct task_struct *p)
{
	struct uf_sim_task *me = sim_self;

	if (!me)
		return 0;
	me->task = p;
	p->sim = me;
	return me->vpid;
}

/* With W.lock. */
static struct uf_sim_task *task_new(const char *name)
{
	struct uf_sim_task *t = kzalloc(sizeof(*t));

	if (!t)
		return NULL;
	snprintf(t->name, sizeof(t->name), "%s", name);
	pthread_cond_init(&t->run_cond, NULL);
	INIT_LIST_HEAD(&t->timed);
	t->vpid = ++W.next_vpid;
	t->block = SIM_DEAD;
	list_add_tail(&t->all, &W.tasks);
	W.nr_live++;
	W.nr_tasks++;
	return t;
}

static void task_free(struct uf_sim_task *t)
{
	list_del(&t->all);
	pthread_cond_destroy(&t->run_cond);
	kfree(t);
}

/* The thread's exit work, in its turn (do_exit runs in the task). */
static void run_exit_hooks(void)
{
	unsigned int i, n;

	pthread_mutex_lock(&W.lock);
	n = nr_sim_exits;
	pthread_mutex_unlock(&W.lock);
	for (i = 0; i < n; i++)
		sim_exits[i]();
}

/* The body of every world thread: wait to be picked, run, die. */
static void *sim_thread_main(void *arg)
{
	struct uf_sim_task *me = arg;
	void *ret;

	sim_self = me;
	pthread_mutex_lock(&W.lock);
	wait_turn(me);
	pthread_mutex_unlock(&W.lock);

	if (me->task_fn) {
		me->ret = me->task_fn(me->task_arg);
		ret = NULL;
	} else {
		ret = me->fn(me->arg);
	}
	run_exit_hooks();

	pthread_mutex_lock(&W.lock);
	me->block = SIM_DEAD;
	if (me->task)
		me->task->sim = NULL;	/* it may outlive us */
	W.nr_live--;
	if (me->is_main) {
		W.main_ret = me->ret;
		W.main_done = true;
		if (W.nr_live) {
			world_fail(-ECHILD, "main_fn returned leaving tasks");
			pthread_mutex_unlock(&W.lock);
			return ret;
		}
	}
	if (me->joiner)
		make_runnable(me->joiner);
	dispatch(me);
	pthread_mutex_unlock(&W.lock);
	return ret;
}

/* With W.lock: a runnable world task running @fn or @task_fn. */
static int task_start(struct uf_sim_task **out, const char *name,
		      void *(*fn)(void *), void *arg,
		      int (*task_fn)(void *), void *task_arg)
{
	struct uf_sim_task *t = task_new(name);
	int err;

	if (!t)
		return ENOMEM;
	t->fn = fn;
	t->arg = arg;
	t->task_fn = task_fn;
	t->task_arg = task_arg;
	err = uf_thread_create_raw(&t->thread, sim_thread_main, t, t->name);
	if (err) {
		W.nr_live--;
		W.nr_tasks--;
		W.next_vpid--;
		task_free(t);
		return err;
	}
	t->have_thread = true;
	rq_add(t);
	*out = t;
	return 0;
}

int uf_sim_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg,
			 const char *name)
{
	struct uf_sim_task *t;
	int err;

	pthread_mutex_lock(&W.lock);
	err = task_start(&t, name, fn, arg, NULL, NULL);
	if (!err)
		*thread = t->thread;
	pthread_mutex_unlock(&W.lock);
	return err;
}

/* With W.lock: @me waits until @t is dead. */
static void join_wait(struct uf_sim_task *me, struct uf_sim_task *t)
{
	while (t->block != SIM_DEAD && !W.ended) {
		t->joiner = me;
		me->block = SIM_JOIN;
		me->wchan = __builtin_return_address(0);
		switch_away(me);
	}
	t->joiner = NULL;
}

int uf_sim_thread_join(pthread_t thread)
{
	struct uf_sim_task *me = sim_self, *t, *found = NULL;

	pthread_mutex_lock(&W.lock);
	list_for_each_entry(t, &W.tasks, all)
		if (t->have_thread && pthread_equal(t->thread, thread)) {
			found = t;
			break;
		}
	if (found && me && found != me)
		join_wait(me, found);
	if (found)
		found->joined = true;
	pthread_mutex_unlock(&W.lock);
	/* dead in the world: its thread only has its exit left */
	return pthread_join(thread, NULL);
}

/* ---- blocking and waking ---- */

void uf_sim_schedule(void)
{
	struct uf_sim_task *me = sim_self;
	struct task_struct *p = current;

	if (!me) {
		pr_err("sim: %s sleeps in a world but is not its task",
		       p->comm);
		abort();
	}
	pthread_mutex_lock(&W.lock);
	if (!task_is_running(p)) {
		me->block = SIM_SCHED;
		me->wchan = __builtin_return_address(0);
		switch_away(me);
	} else if (tick_used(me)) {
		yield_locked(me);	/* __schedule() of a runnable task */
	}
	pthread_mutex_unlock(&W.lock);
}

void uf_sim_wake(struct task_struct *p)
{
	struct uf_sim_task *t = p->sim;

	if (!t)
		return;
	pthread_mutex_lock(&W.lock);
	if (t->block == SIM_SCHED)
		make_runnable(t);
	pthread_mutex_unlock(&W.lock);
}

int uf_sim_cond_wait(pthread_cond_t *c, pthread_mutex_t *m,
		     uint64_t until_ns)
{
	struct uf_sim_task *me = sim_self;
	bool timed_out;

	pthread_mutex_lock(&W.lock);
	me->block = SIM_COND;
	me->wait_key = c;
	me->wchan = __builtin_return_address(0);
	me->timed_out = false;
	if (until_ns)
		timed_add(me, until_ns);
	pthread_mutex_unlock(m);
	switch_away(me);
	timed_out = me->timed_out;
	pthread_mutex_unlock(&W.lock);
	pthread_mutex_lock(m);
	return timed_out ? ETIMEDOUT : 0;
}

void uf_sim_mutex_lock(pthread_mutex_t *m)
{
	struct uf_sim_task *me = sim_self;

	while (pthread_mutex_trylock(m)) {
		pthread_mutex_lock(&W.lock);
		me->block = SIM_COND;
		me->wait_key = m;
		me->wchan = __builtin_return_address(0);
		switch_away(me);
		pthread_mutex_unlock(&W.lock);
	}
}

void uf_sim_cond_wake(const void *c, bool all)
{
	struct uf_sim_task *t, *n;

	pthread_mutex_lock(&W.lock);
	list_for_each_entry_safe(t, n, &W.tasks, all)
		if (t->block == SIM_COND && t->wait_key == c) {
			make_runnable(t);
			if (!all)
				break;
		}
	pthread_mutex_unlock(&W.lock);
}

void uf_sim_yield(void)
{
	struct uf_sim_task *me = sim_self;

	if (!me)
		return;
	pthread_mutex_lock(&W.lock);
	yield_locked(me);
	pthread_mutex_unlock(&W.lock);
}

void uf_sim_cond_resched(void)
{
	struct uf_sim_task *me = sim_self;

	if (!me || !tick_used(me))
		return;
	pthread_mutex_lock(&W.lock);
	yield_locked(me);
	pthread_mutex_unlock(&W.lock);
}

void uf_sim_spin_contended(pthread_mutex_t *m)
{
	struct uf_sim_task *me = sim_self;
	struct timespec ts;
	int i;

	if (!me)
		return;
	/* a thread outside the world (one exiting, after its turn) holds
	 * a lock for a moment; a task of the world holds it until it runs */
	for (i = 0; i < 1000; i++) {
		if (!pthread_mutex_trylock(m)) {
			pthread_mutex_unlock(m);
			return;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = 1000000;
		nanosleep(&ts, NULL);
	}
	pr_err("sim: %s-%d waits for a spinlock held by a task that is not "
	       "running: it slept or was preempted holding it (a sleep in "
	       "atomic context)", me->name, (int)me->vpid);
	dump_tasks();
	abort();
}

/* ---- time and the cost model ---- */

uint64_t uf_sim_now_ns(void)
{
	return now_ns();
}

/*
 * With W.lock: @ns of CPU for @me.  At the limit the world ends (and @me
 * never runs again).  No preemption here: the engine's charge points may
 * hold locks of any kind; a task that used up its tick gives way at the
 * next preemption point (cond_resched(), a lock break, schedule()).  A
 * callback event inside the span runs at its instant, the clock stopped
 * there, as an interrupt during the work would: a device's power cut at
 * T happens at T whatever the CPU does (its callback takes only the
 * device's lock, which no charge point holds).
 */
static void charge_locked(struct uf_sim_task *me, uint64_t ns)
{
	uint64_t now = now_ns() + ns;
	uint64_t lim = W.max_ns ? SIM_START_NS + W.max_ns : UINT64_MAX;
	struct sim_event *e;

	me->cpu_ns += ns;
	W.cpu_ns += ns;
	while ((e = event_first()) && e->at <= now && e->at <= lim) {
		if (e->at > now_ns())
			clock_set(e->at);
		fire_events();
	}
	if (W.max_ns && now > SIM_START_NS + W.max_ns) {
		clock_set(SIM_START_NS + W.max_ns);
		world_fail(-ETIMEDOUT, "the virtual-time limit is reached");
		wait_turn(me);
	}
	clock_set(now);
}


void uf_sim_charge_cost(enum uf_sim_cost kind, uint64_t n)
{
	struct uf_sim_task *me = sim_self;

	if (!me || W.ended)
		return;
	pthread_mutex_lock(&W.lock);
	charge_locked(me, W.cost[kind] * n);
	pthread_mutex_unlock(&W.lock);
}

void uf_sim_charge_ns(uint64_t ns)
{
	struct uf_sim_task *me = sim_self;

	if (!me || W.ended)
		return;
	pthread_mutex_lock(&W.lock);
	charge_locked(me, ns);
	/* the workload's own work holds none of the engine's locks */
	if (tick_used(me))
		yield_locked(me);
	pthread_mutex_unlock(&W.lock);
}

uint64_t uf_sim_seed_mix(void)
{
	return uf_in_sim() ? W.seed * 0x9e3779b97f4a7c15ull : 0;
}

void uf_sim_trace_line(const char *line, size_t len)
{
	pthread_mutex_lock(&W.lock);
	hash_bytes(line, len);
	pthread_mutex_unlock(&W.lock);
}

/* ---- the public calls ---- */

bool uf_sim_active(void)
{
	return uf_in_sim() && sim_self && !W.ended;
}

int uf_sim_spawn(const char *name, int (*fn)(void *), void *arg,
		 struct uf_sim_task **out)
{
	struct uf_sim_task *t;
	int err;

	if (!uf_sim_active())
		return -EPERM;
	if (!fn || !out)
		return -EINVAL;
	pthread_mutex_lock(&W.lock);
	err = task_start(&t, name ? name : "uf-task", NULL, NULL, fn, arg);
	if (!err) {
		t->spawned = true;
		*out = t;
	}
	pthread_mutex_unlock(&W.lock);
	return -err;
}

int uf_sim_join(struct uf_sim_task *t, int *ret)
{
	struct uf_sim_task *me = sim_self;

	if (!uf_sim_active())
		return -EPERM;
	if (!t)
		return -EINVAL;
	if (t == me)
		return -EDEADLK;
	pthread_mutex_lock(&W.lock);
	if (!t->spawned || t->joined) {
		pthread_mutex_unlock(&W.lock);
		return -EINVAL;
	}
	t->joined = true;
	join_wait(me, t);
	pthread_mutex_unlock(&W.lock);
	pthread_join(t->thread, NULL);
	if (ret)
		*ret = t->ret;
	pthread_mutex_lock(&W.lock);
	task_free(t);
	pthread_mutex_unlock(&W.lock);
	return 0;
}

int uf_sim_sleep_ns(uint64_t ns)
{
	struct uf_sim_task *me = sim_self;

	if (!uf_sim_active())
		return -EPERM;
	pthread_mutex_lock(&W.lock);
	if (!ns) {
		yield_locked(me);
	} else {
		me->block = SIM_SLEEP;
		me->wchan = __builtin_return_address(0);
		timed_add(me, now_ns() + ns);
		switch_away(me);
	}
	pthread_mutex_unlock(&W.lock);
	return 0;
}

void uf_sim_register_reset(void (*reset)(void))
{
	pthread_mutex_lock(&W.lock);
	if (nr_sim_resets == SIM_MAX_RESETS) {
		pr_err("sim: more than %d resets of process-wide state",
		       SIM_MAX_RESETS);
		abort();
	}
	sim_resets[nr_sim_resets++] = reset;
	pthread_mutex_unlock(&W.lock);
}

void uf_sim_register_exit(void (*exit_fn)(void))
{
	pthread_mutex_lock(&W.lock);
	if (nr_sim_exits == SIM_MAX_RESETS) {
		pr_err("sim: more than %d exit hooks", SIM_MAX_RESETS);
		abort();
	}
	sim_exits[nr_sim_exits++] = exit_fn;
	pthread_mutex_unlock(&W.lock);
}

static void world_reset(const struct uf_sim_opts *o)
{
	unsigned int i;
	const uint64_t *over[UF_SIM_NR_COSTS] = {
		&o->ns_per_page_copy, &o->ns_per_page_op, &o->ns_per_request,
		&o->ns_per_inode, &o->ns_per_page_scan,
	};

	W.ended = false;
	W.end_err = 0;
	W.running = NULL;
	W.nr_rq = 0;
	W.timed_seq = 0;
	memset(W.ev, 0, sizeof(W.ev));	/* an ended world's events die */
	W.ev_seq = 0;
	W.nr_live = W.nr_tasks = 0;
	W.next_vpid = 0;
	W.now = SIM_START_NS;
	W.base_jiffies = INITIAL_JIFFIES;
	W.tick_ns = SIM_NS_PER_S / (unsigned int)HZ;
	W.max_ns = o->max_ns;
	W.seed = o->seed;
	W.rng = o->seed;
	for (i = 0; i < UF_SIM_NR_COSTS; i++)
		W.cost[i] = *over[i] ? *over[i] : sim_cost_default[i];
	W.hash = FNV_OFFSET;
	W.switches = W.events = W.cpu_ns = 0;
	W.main_ret = 0;
	W.main_done = false;
	/* what an earlier world left in the engine must not steer this one */
	for (i = 0; i < nr_sim_resets; i++)
		sim_resets[i]();
}

static void sim_dump_open(const struct uf_sim_opts *o)
{
	const char *path = getenv("UFLUSH_SIM_DUMP");

	if (!path || !*path)
		return;
	sim_dump = fopen(path, "a");
	if (!sim_dump) {
		pr_err("sim: UFLUSH_SIM_DUMP %s: %s", path, strerror(errno));
		return;
	}
	fprintf(sim_dump, "=== world: seed %llu\n",
		(unsigned long long)o->seed);
}

static void sim_dump_close(void)
{
	if (sim_dump)
		fclose(sim_dump);
	sim_dump = NULL;
}

/* The world is over: reap what is left of its tasks. */
/*
 * With W.lock: wait for the end of the world.  A world that makes no
 * progress (no switch, no clock move) for SIM_WATCHDOG_S of real time has
 * its running task blocked outside the world, on a lock a blocked task
 * holds or in a wait not routed here: that is a deadlock too, and it
 * would otherwise hang the caller for good.
 */
#define SIM_WATCHDOG_S	60

static void watch_world(void)
{
	uint64_t seen = 0, now;
	struct timespec ts;
	int still = 0;

	while (!W.ended) {
		uf_timespec_after_ms(&ts, CLOCK_REALTIME, 1000);
		if (pthread_cond_timedwait(&W.end_cond, &W.lock, &ts) !=
		    ETIMEDOUT)
			continue;
		now = W.switches + now_ns() + W.events;
		still = now == seen ? still + 1 : 0;
		seen = now;
		if (still >= SIM_WATCHDOG_S)
			world_fail(-EDEADLK, "no progress in 60 s of real time: "
				   "the running task is blocked outside the "
				   "world (a lock a sleeping task holds?)");
	}
}

static void world_reap(void)
{
	struct uf_sim_task *t, *n;

	list_for_each_entry_safe(t, n, &W.tasks, all) {
		pthread_mutex_unlock(&W.lock);
		if (t->have_thread && !t->joined)
			pthread_join(t->thread, NULL);
		pthread_mutex_lock(&W.lock);
		task_free(t);
	}
}

int uf_sim_run(const struct uf_sim_opts *o, int (*main_fn)(void *), void *arg,
	       struct uf_sim_result *res)
{
	struct uf_sim_task *main_task;
	int err, old_hz = HZ;

	if (!o || !main_fn)
		return -EINVAL;
	if (o->hz < 0 || o->hz > 100000)
		return -EINVAL;
	pthread_mutex_lock(&W.lock);
	if (W.exists || W.poisoned || sim_self) {
		pthread_mutex_unlock(&W.lock);
		return -EBUSY;
	}
	if (uf_timers_pending() || uf_clock_nr_sleeping()) {
		pthread_mutex_unlock(&W.lock);
		return -EBUSY;
	}
	if (o->hz && o->hz != HZ) {
		err = uf_set_hz(o->hz);
		if (err) {
			pthread_mutex_unlock(&W.lock);
			return err == -EBUSY ? -EBUSY : -EINVAL;
		}
	}
	W.exists = true;
	world_reset(o);
	sim_dump_open(o);
	uf_clock_set_virtual(W.base_jiffies);
	__atomic_store_n(&uf_sim_world, true, __ATOMIC_SEQ_CST);

	err = task_start(&main_task, "uf-main", NULL, NULL, main_fn, arg);
	if (err) {
		sim_dump_close();
		__atomic_store_n(&uf_sim_world, false, __ATOMIC_SEQ_CST);
		uf_clock_set_real();
		if (HZ != old_hz)
			uf_set_hz(old_hz);
		W.exists = false;
		pthread_mutex_unlock(&W.lock);
		return -err;
	}
	main_task->is_main = true;
	dispatch(NULL);
	watch_world();
	err = W.end_err;
	sim_dump_close();
	if (res) {
		memset(res, 0, sizeof(*res));
		res->virtual_ns = now_ns() - SIM_START_NS;
		res->trace_hash = W.hash;
		res->switches = W.switches;
		res->events = W.events;
		res->main_ret = W.main_ret;
		res->cpu_ns = W.cpu_ns;
		res->nr_tasks = W.nr_tasks;
	}
	if (!err) {
		world_reap();
		__atomic_store_n(&uf_sim_world, false, __ATOMIC_SEQ_CST);
		uf_clock_set_real();
		if (HZ != old_hz)
			uf_set_hz(old_hz);	/* o->hz was the world's */
		W.exists = false;
	}
	pthread_mutex_unlock(&W.lock);
	return err;
}
