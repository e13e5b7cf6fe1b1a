// SPDX-License-Identifier: MIT
/*
 * tests/crash/sqlite_crash.c - uflush-sqlite-crash: SQLite on uflush,
 * killed with SIGKILL at random moments, must come back whole.
 *
 * A bank: NACC accounts of 1000 each, and a child process moving money
 * between them, one transaction per transfer (two UPDATEs and a row in a
 * log whose ids count up from 1), synchronous=FULL.  After each COMMIT the
 * child writes the transaction's id on a pipe: that transaction is
 * acknowledged, and must survive.  The parent kills the child with SIGKILL
 * at a random moment (sometimes before its first commit, while it opens or
 * recovers the database), then opens the database itself and checks:
 *
 *   - PRAGMA integrity_check says "ok";
 *   - the balances still add up to NACC * 1000 (the invariant);
 *   - the log holds ids 1..max with no gap, and max >= the last id
 *     acknowledged (every acknowledged transaction is there).
 *
 * SIGKILL is a power cut for uflush: its cache lives in the killed process,
 * so whatever was not written to the device is gone.  Each kill point is
 * one check; the run goes over rollback-journal and WAL modes and several
 * flush policies, with memory-mapped reads (xFetch) in every other run,
 * and prints "N passed, M failed".  Exit status 0 only if none failed.
 *
 *	uflush-sqlite-crash [--kills N] [--modes delete,wal]
 *		[--policies linux-3.1,linux-3.2] [--max-ms MS] [--seed S]
 *		[--dev PATH] [-v]
 *	uflush-sqlite-crash --sim [--world] [--cut MODE] [--twice]
 *		[--keep-going] ...	(power cuts on a sim device, below)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "uflush.h"
#include "io/testdev.h"
#include "clients/sqlite/uflush_sqlite.h"

#define NACC		64
#define BALANCE		1000
#define DEV_SIZE	(64ull << 20)
#define OPEN_WAIT_MS	15000
#define MAX_CONFIGS	16

static struct uf_testdev crash_td;
static bool crash_have_td;
static bool verbose;
static uint64_t rng;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct config {
	const char *mode;	/* "delete" or "wal" */
	const char *policy;
};

/* --sim: "&engine=sim", dev= then names a sim device of this process */
static const char *uri_engine = "";

static void uri(char *buf, size_t len, const char *dev,
		const struct config *c, bool format)
{
	snprintf(buf, len,
		 "file:bank.db?vfs=uflush&dev=%s&cachesize=8M&extent=8M&policy=%s%s%s",
		 dev, c->policy, format ? "&format=1" : "", uri_engine);
}

/*
 * Open, waiting while the device is still held: the kernel lets go of a
 * killed process's O_EXCL claim only when its io_uring is torn down.
 */
static int open_db(const char *u, sqlite3 **db)
{
	uint64_t end = now_ms() + OPEN_WAIT_MS;
	int rc;

	for (;;) {
		rc = sqlite3_open_v2(u, db, SQLITE_OPEN_READWRITE |
				     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
				     NULL);
		if (rc == SQLITE_OK)
			return 0;
		sqlite3_close(*db);
		*db = NULL;
		if (uf_sqlite_last_errno() != -EBUSY || now_ms() > end)
			return rc;
		sleep_ms(10);
	}
}

/* --sim: after the cut every call fails; the workload says nothing */
static bool quiet_errors;

static int exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	if (rc != SQLITE_OK && quiet_errors) {
		sqlite3_free(err);
	} else if (rc != SQLITE_OK) {
		fprintf(stderr, "sqlite-crash: %s: %s (%d)\n", sql,
			err ? err : sqlite3_errstr(rc), rc);
		sqlite3_free(err);
	}
	return rc;
}

/* One integer (or text) from a query; -1 and a message if it fails. */
static int query(sqlite3 *db, const char *sql, int64_t *v, char *text,
		 size_t len)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			if (v)
				*v = sqlite3_column_int64(st, 0);
			if (text)
				snprintf(text, len, "%s",
					 (const char *)sqlite3_column_text(st, 0) ?
					 (const char *)sqlite3_column_text(st, 0) : "");
			rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK && !quiet_errors)
		fprintf(stderr, "sqlite-crash: %s: %s\n", sql,
			sqlite3_errmsg(db));
	return rc == SQLITE_OK ? 0 : -1;
}

static int setup(const char *dev, const struct config *c)
{
	char u[512], sql[256];
	sqlite3 *db;
	int i, rc;

	uri(u, sizeof(u), dev, c, true);
	rc = open_db(u, &db);
	if (rc) {
		fprintf(stderr, "sqlite-crash: open %s: %s (%s)\n", u,
			sqlite3_errstr(rc), uf_sqlite_last_error());
		return -1;
	}
	snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s", c->mode);
	rc = exec(db, sql) || exec(db, "PRAGMA synchronous=FULL") ||
	     exec(db, "CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)") ||
	     exec(db, "CREATE TABLE log(id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, amount INTEGER, note TEXT)") ||
	     exec(db, "BEGIN");
	for (i = 1; !rc && i <= NACC; i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO accounts VALUES(%d, %d)", i, BALANCE);
		rc = exec(db, sql);
	}
	if (!rc)
		rc = exec(db, "COMMIT");
	if (sqlite3_close(db) != SQLITE_OK) {
		fprintf(stderr, "sqlite-crash: close after setup failed\n");
		rc = -1;
	}
	return rc ? -1 : 0;
}

/* The child: transfers until killed; acknowledges each commit on fd. */
static void worker(const char *dev, const struct config *c, bool mmap,
		   uint64_t seed, int fd)
{
	char u[512], sql[320], note[96];
	sqlite3 *db;
	int64_t id;
	int rc, i;

	rng = seed | 1;
	uri(u, sizeof(u), dev, c, false);
	rc = open_db(u, &db);
	if (rc) {
		fprintf(stderr, "sqlite-crash: worker: open: %s (%s)\n",
			sqlite3_errstr(rc), uf_sqlite_last_error());
		_exit(3);
	}
	if (exec(db, "PRAGMA synchronous=FULL") ||
	    exec(db, "PRAGMA wal_autocheckpoint=64") ||
	    exec(db, mmap ? "PRAGMA mmap_size=8388608" : "PRAGMA mmap_size=0") ||
	    query(db, "SELECT coalesce(max(id), 0) FROM log", &id, NULL, 0))
		_exit(3);
	for (;;) {
		int a = (int)(xorshift() % NACC) + 1;
		int b = (int)(xorshift() % NACC) + 1;
		int amount = (int)(xorshift() % 100) + 1;
		int pad = (int)(xorshift() % 64);

		id++;
		for (i = 0; i < pad; i++)
			note[i] = (char)('a' + (xorshift() % 26));
		note[pad] = '\0';
		snprintf(sql, sizeof(sql),
			 "BEGIN IMMEDIATE;"
			 "UPDATE accounts SET balance = balance - %d WHERE id = %d;"
			 "UPDATE accounts SET balance = balance + %d WHERE id = %d;"
			 "INSERT INTO log VALUES(%" PRId64 ", %d, %d, %d, '%s');"
			 "COMMIT;", amount, a, amount, b, id, a, b, amount, note);
		if (exec(db, sql))
			_exit(4);
		if (write(fd, &id, sizeof(id)) != sizeof(id))
			_exit(5);
	}
}

/* --sim --keep-going: every cut point, however many failed (break checks
 * count them) */
static bool keep_going;

/* --sim: the device verify() cuts instead of closing the database. */
static struct uf_sim *verify_cut;

/* The parent's check after a kill; 0 if the database is whole. */
static int verify(const char *dev, const struct config *c, int64_t acked,
		  int64_t *max_id, char *why, size_t len)
{
	char u[512], text[256];
	int64_t sum = 0, nacc = 0, count = 0;
	sqlite3 *db;
	int rc, bad = 0;

	uri(u, sizeof(u), dev, c, false);
	rc = open_db(u, &db);
	if (rc) {
		snprintf(why, len, "cannot reopen: %s (%s)", sqlite3_errstr(rc),
			 uf_sqlite_last_error());
		return -1;
	}
	*max_id = 0;
	if (query(db, "PRAGMA integrity_check", NULL, text, sizeof(text))) {
		snprintf(why, len, "integrity_check failed to run: %s",
			 sqlite3_errmsg(db));
		bad = 1;
	} else if (strcmp(text, "ok")) {
		snprintf(why, len, "integrity_check: %s", text);
		bad = 1;
	} else if (query(db, "SELECT sum(balance) FROM accounts", &sum, NULL, 0) ||
		   query(db, "SELECT count(*) FROM accounts", &nacc, NULL, 0) ||
		   query(db, "SELECT count(*) FROM log", &count, NULL, 0) ||
		   query(db, "SELECT coalesce(max(id), 0) FROM log", max_id,
			 NULL, 0)) {
		snprintf(why, len, "query failed: %s", sqlite3_errmsg(db));
		bad = 1;
	} else if (sum != (int64_t)NACC * BALANCE || nacc != NACC) {
		snprintf(why, len, "invariant broken: %" PRId64
			 " accounts hold %" PRId64, nacc, sum);
		bad = 1;
	} else if (count != *max_id) {
		snprintf(why, len, "log has %" PRId64 " rows for ids up to %"
			 PRId64, count, *max_id);
		bad = 1;
	} else if (*max_id < acked) {
		snprintf(why, len, "acknowledged transactions lost: %" PRId64
			 " acknowledged, %" PRId64 " there", acked, *max_id);
		bad = 1;
	} else if (query(db, "PRAGMA journal_mode", NULL, text, sizeof(text)) ||
		   strcmp(text, c->mode)) {
		snprintf(why, len, "journal_mode is %s, want %s", text,
			 c->mode);
		bad = 1;
	}
	if (verify_cut) {
		/* --sim: the check read only; what recovery wrote is durable,
		 * so the next boot starts from a crash, not a clean close */
		uf_sim_power_cut(verify_cut, UF_SIM_CUT_DROP, 0);
		quiet_errors = true;
		sqlite3_close_v2(db);
		quiet_errors = false;
	} else if (sqlite3_close(db) != SQLITE_OK && !bad) {
		snprintf(why, len, "close after the check failed");
		bad = 1;
	}
	return bad ? -1 : 0;
}

/*
 * uflush's threads (the timer, the flushers) belong to the process that
 * used it, and a fork() copies their locks mid-use: so the parent never
 * opens uflush itself; setup and checks run in children of their own.
 */
struct result {
	int ret;
	int64_t max_id;
	char why[480];
};

/* A pipe, then fork() with stdio flushed: the child inherits no buffered
 * output.  The child's pid, 0 in the child, -1 on failure. */
static pid_t fork_piped(int p[2])
{
	pid_t pid;

	if (pipe(p))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
	}
	return pid;
}

static int in_child(const char *dev, const struct config *c, int64_t acked,
		    bool is_setup, struct result *r)
{
	int p[2], status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->ret = -1;
	snprintf(r->why, sizeof(r->why), "the checking process died");
	pid = fork_piped(p);
	if (pid < 0)
		return -1;
	if (!pid) {
		struct result mine = { 0, 0, "" };

		close(p[0]);
		if (is_setup)
			mine.ret = setup(dev, c);
		else
			mine.ret = verify(dev, c, acked, &mine.max_id, mine.why,
					  sizeof(mine.why));
		if (write(p[1], &mine, sizeof(mine)) != sizeof(mine))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], r, sizeof(*r)) != sizeof(*r))
		r->ret = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	return r->ret;
}

/* Read the acknowledged ids until EOF; the highest. */
static int64_t drain(int fd)
{
	int64_t id, max = 0;
	ssize_t n;

	while ((n = read(fd, &id, sizeof(id))) == sizeof(id))
		if (id > max)
			max = id;
	return max;
}

struct totals {
	unsigned int passed, failed;
	int64_t acked;
};

/* One kill point; returns 0 if the database came back whole. */
static int kill_point(const char *dev, const struct config *c,
		      unsigned int k, unsigned int max_ms, int64_t *acked,
		      struct totals *t, unsigned int nr, unsigned int i)
{
	bool early = xorshift() % 4 == 0, mmap = k & 1;
	unsigned int delay = (unsigned int)(xorshift() % (max_ms + 1));
	uint64_t seed = xorshift();
	int p[2], status, ret;
	int64_t got, max_id = -1;
	char why[512] = "";
	pid_t pid;
	ssize_t n;

	pid = fork_piped(p);
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		worker(dev, c, mmap, seed, p[1]);
		_exit(0);
	}
	close(p[1]);
	if (!early) {
		/* after the first commit: a kill among transactions */
		n = read(p[0], &got, sizeof(got));
		if (n == sizeof(got) && got > *acked)
			*acked = got;
	}
	sleep_ms(delay);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	got = drain(p[0]);
	close(p[0]);
	if (got > *acked)
		*acked = got;
	if (!WIFSIGNALED(status)) {
		snprintf(why, sizeof(why), "the worker stopped by itself (%d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		ret = -1;
	} else {
		struct result r;

		ret = in_child(dev, c, *acked, false, &r);
		max_id = r.max_id;
		snprintf(why, sizeof(why), "%s", r.why);
	}
	if (ret)
		t->failed++;
	else
		t->passed++;
	if (ret || verbose)
		printf("  kill %u/%u %-6s %-10s %s %4u ms%s: %" PRId64
		       " acknowledged, %" PRId64 " there: %s\n", i + 1, nr,
		       c->mode, c->policy, early ? "from start" : "after 1st",
		       delay, mmap ? " mmap" : "", *acked, max_id,
		       ret ? why : "ok");
	/* what survived counts from here on (an unacknowledged commit may) */
	if (!ret)
		*acked = max_id;
	return ret;
}

static void quiet_log(void *priv, int level, const char *msg)
{
	(void)priv;
	if (level <= 3 && !strstr(msg, "held open exclusively") &&
	    !quiet_errors)
		fprintf(stderr, "uflush: %s\n", msg);
}

static void cleanup(void)
{
	if (crash_have_td)
		uf_testdev_destroy(&crash_td);
	crash_have_td = false;
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int split(char *s, const char **out, unsigned int max)
{
	unsigned int n = 0;
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok && n < max;
	     tok = strtok_r(NULL, ",", &save))
		out[n++] = tok;
	return (int)n;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uflush-sqlite-crash [--kills N] [--modes delete,wal]\n"
		"         [--policies linux-3.1,linux-3.2] [--max-ms MS] [--seed S]\n"
		"         [--dev PATH] [-v]\n"
		"Kills a SQLite bank on uflush N times (spread over modes x policies)\n"
		"and checks integrity, the invariant and every acknowledged commit.\n"
		"Without --dev, a scratch loop device; --dev PATH is overwritten.\n"
		"--sim [--cut drop|keep|tear512|tear4k] [--twice] [--keep-going]: power\n"
		"cuts on a sim device in this process instead of kills (N cuts; --max-ms\n"
		"unused); the same --seed, modes and policies replay exactly.\n"
		"--sim --world: each boot a deterministic world, cuts at seeded\n"
		"virtual instants (uf_sim_cut_at_ns).\n");
}

/* ------------------------------------------------------------------ */
/* --sim: power cuts on a sim device, in this process                 */

/*
 * The same bank over a sim SSD (io/sim.h) with its volatile write cache,
 * in this process: uflush cannot lose a write by SIGKILL that a power cut
 * loses, such as one that an fsync flushed before it had completed.  Each
 * cut point arms a cut at a seeded request number counted from the boot's
 * power-on (inside the open and its recovery, a transaction's writes, its
 * syncs or the directory commit), or lets a seeded number of transfers
 * commit and cuts then, with the database open; the cut drops, keeps or
 * tears (512 B / 4 KiB) what no completed flush covered.  The database is
 * then closed on the dead device (every request fails), and verify()
 * reopens the image through uflush (the reboot) and checks it; it ends
 * with a cut too, so the next boot recovers from a crash.  SQLite's PRNG
 * is seeded for each boot: a configuration's run is a function of its
 * seed, image hashes included (--twice runs it twice and compares).
 */
enum { SC_DROP, SC_KEEP, SC_TEAR512, SC_TEAR4K, NR_SC };
static const char *const sc_names[] = { "drop", "keep", "tear512", "tear4k" };

struct sim_totals {
	unsigned int cuts[NR_SC], hit, passed, failed;
	int64_t acked;
	uint64_t hash;
};

static uint64_t str_hash(uint64_t h, const char *s)
{
	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

/* The bank's transfers in this process until the power goes or ntx are
 * done (then the cut, the database still open).  -1: a call failed while
 * the power was on. */
static int sim_worker(const char *dev, const struct config *c, bool mmap,
		      unsigned int ntx, int mode, uint64_t cut_seed,
		      struct uf_sim *sim, int64_t *acked, char *why,
		      size_t len)
{
	struct uf_sim_stats st0, st1;
	char u[512], sql[320], note[96];
	unsigned int n;
	int64_t id = 0;
	sqlite3 *db = NULL;
	int rc, i, err = 0;

	uf_sim_get_stats(sim, &st0);
	uri(u, sizeof(u), dev, c, false);
	quiet_errors = true;
	rc = open_db(u, &db);
	if (rc)
		err = rc;
	else if (exec(db, "PRAGMA synchronous=FULL") ||
		 exec(db, "PRAGMA wal_autocheckpoint=64") ||
		 exec(db, mmap ? "PRAGMA mmap_size=8388608" :
			  "PRAGMA mmap_size=0") ||
		 query(db, "SELECT coalesce(max(id), 0) FROM log", &id, NULL, 0))
		err = -1;
	for (n = 0; !err && n < ntx; n++) {
		int a = (int)(xorshift() % NACC) + 1;
		int b = (int)(xorshift() % NACC) + 1;
		int amount = (int)(xorshift() % 100) + 1;
		int pad = (int)(xorshift() % 64);

		for (i = 0; i < pad; i++)
			note[i] = (char)('a' + (xorshift() % 26));
		note[pad] = '\0';
		snprintf(sql, sizeof(sql),
			 "BEGIN IMMEDIATE;"
			 "UPDATE accounts SET balance = balance - %d WHERE id = %d;"
			 "UPDATE accounts SET balance = balance + %d WHERE id = %d;"
			 "INSERT INTO log VALUES(%" PRId64 ", %d, %d, %d, '%s');"
			 "COMMIT;", amount, a, amount, b, id + 1, a, b, amount,
			 note);
		err = exec(db, sql);
		if (!err && ++id > *acked)
			*acked = id;	/* COMMIT returned: acknowledged */
		if (err)
			exec(db, "ROLLBACK");
	}
	uf_sim_get_stats(sim, &st1);
	if (st1.power_cuts == st0.power_cuts)
		uf_sim_power_cut(sim, (enum uf_sim_cut)mode, cut_seed);
	if (db)
		sqlite3_close_v2(db);
	quiet_errors = false;
	if (err && st1.power_cuts == st0.power_cuts) {
		snprintf(why, len, "the bank failed before any cut: %s (%s)",
			 rc ? sqlite3_errstr(rc) : "a statement",
			 uf_sqlite_last_error());
		return -1;
	}
	return st1.power_cuts != st0.power_cuts;	/* 1: the armed cut hit */
}

/*
 * --world: the boot (sim_worker) runs as a deterministic world (uf_sim_run):
 * the cache's flusher, kupdate's timer and the device's completions are
 * tasks on a virtual clock, and the cut is armed at a virtual instant
 * (uf_sim_cut_at_ns).  The request number drawn for it is scaled to an
 * instant: 60 us a request (a request takes about 50 us of a boot's
 * virtual time, seed 1; at 60 us 56 of the 100 cuts of --kills 100 hit,
 * at 90 us 51, at 150 us 39: the rest land after the transfers), so the
 * instants spread over the boot as the request numbers did.  verify()
 * runs outside, on the real clock.
 */
#define SQ_NS_PER_REQUEST	((uint64_t)60000)

static bool sim_world;

struct world_boot {
	const char *dev;
	const struct config *c;
	bool mmap;
	unsigned int ntx;
	int mode, ret;
	uint64_t cut_seed, nth, cut_ns;
	struct uf_sim *sim;
	int64_t *acked;
	char *why;
	size_t len;
};

static int world_boot_fn(void *arg)
{
	struct world_boot *wb = arg;
	struct uf_sim_stats st;
	int ret;

	wb->cut_ns = 0;
	if (wb->nth) {
		wb->cut_ns = uf_now_ns() + wb->nth * SQ_NS_PER_REQUEST;
		ret = uf_sim_cut_at_ns(wb->sim, wb->cut_ns,
				       (enum uf_sim_cut)wb->mode, wb->cut_seed);
		if (ret) {
			snprintf(wb->why, wb->len, "uf_sim_cut_at_ns: %s",
				 strerror(-ret));
			wb->ret = -1;
			return 0;
		}
	}
	wb->ret = sim_worker(wb->dev, wb->c, wb->mmap, wb->ntx, wb->mode,
			     wb->cut_seed, wb->sim, wb->acked, wb->why,
			     wb->len);
	uf_sim_get_stats(wb->sim, &st);
	if (wb->ret == 1 && st.last_cut_ns != wb->cut_ns) {
		snprintf(wb->why, wb->len,
			 "the cut armed at %" PRIu64 " ns came at %" PRIu64 " ns",
			 wb->cut_ns, st.last_cut_ns);
		wb->ret = -1;
	}
	return 0;
}

static int world_worker(struct world_boot *wb, uint64_t *trace_hash)
{
	struct uf_sim_opts o = { .seed = wb->cut_seed,
				 .max_ns = 3600ull * 1000000000ull };
	struct uf_sim_result r;
	int ret = uf_sim_run(&o, world_boot_fn, wb, &r);

	if (ret) {
		/* after a failed world its tasks are frozen: end here */
		printf("sqlite-crash --sim --world: uf_sim_run: %s\n",
		       strerror(-ret));
		exit(1);
	}
	*trace_hash = r.trace_hash;
	return wb->ret;
}

/* One cut point of a configuration; 0 if the database came back whole. */
static int sim_cut_point(const char *dev, const struct config *c,
			 struct uf_sim *sim, unsigned int k, int force_cut,
			 int64_t *acked, struct sim_totals *t)
{
	uint64_t r = xorshift() % 100, cut_seed = xorshift(), h = 0;
	int mode = force_cut >= 0 ? force_cut : r < 35 ? SC_DROP :
		   r < 60 ? SC_TEAR512 : r < 85 ? SC_TEAR4K : SC_KEEP;
	unsigned int ntx = 1 + (unsigned int)(xorshift() % 40);
	/* a boot's open makes ~20 requests, a transfer ~4 to 8 */
	uint64_t nth = xorshift() % 4 ? 1 + xorshift() % (20 + 6 * ntx) : 0;
	bool mmap = k & 1;
	int64_t max_id = -1;
	int hit = 0;
	char why[512] = "";
	int ret;

	uint64_t th = 0;

	sqlite3_test_control(SQLITE_TESTCTRL_PRNG_SEED, (int)cut_seed, NULL);
	if (sim_world) {
		struct world_boot wb = {
			.dev = dev, .c = c, .mmap = mmap, .ntx = ntx,
			.mode = mode, .cut_seed = cut_seed, .nth = nth,
			.sim = sim, .acked = acked, .why = why,
			.len = sizeof(why),
		};

		ret = world_worker(&wb, &th);
	} else {
		uf_sim_cut_at(sim, nth, (enum uf_sim_cut)mode, cut_seed);
		ret = sim_worker(dev, c, mmap, ntx, mode, cut_seed, sim, acked,
				 why, sizeof(why));
	}
	if (ret >= 0) {
		hit = ret;
		t->hit += ret;
		uf_sim_image_hash(sim, &h);
		t->hash = (t->hash ^ h ^ th) * 0x100000001b3ull;
		verify_cut = sim;
		ret = verify(dev, c, *acked, &max_id, why, sizeof(why));
		verify_cut = NULL;
	}
	t->cuts[mode]++;
	if (ret)
		t->failed++;
	else
		t->passed++;
	if (ret || verbose)
		printf("  cut %u %-6s %-10s %-7s %s %-4" PRIu64 " (%2u transfers)%s: image %016" PRIx64 ", %" PRId64 " acknowledged, %" PRId64 " there: %s\n",
		       k + 1, c->mode, c->policy, sc_names[mode],
		       hit ? (sim_world ? "at ns     " : "at request") :
		       nth ? "missed    " : "at the end",
		       sim_world && nth ? nth * SQ_NS_PER_REQUEST : nth,
		       ntx, mmap ? " mmap" : "", h, *acked, max_id,
		       ret ? why : "ok");
	if (!ret)
		*acked = max_id;
	return ret;
}

/* One configuration from its seed on a fresh sim device. */
static int sim_config(const struct config *c, unsigned int cuts,
		      uint64_t cseed, int force_cut, struct sim_totals *t)
{
	struct uf_sim *sim;
	int64_t acked = 0;
	char name[64], spec[160];
	unsigned int k, before = t->failed;
	int ret;

	rng = cseed | 1;
	snprintf(name, sizeof(name), "sqlite-sim-%016" PRIx64, cseed);
	snprintf(spec, sizeof(spec), "ssd,size=%llu,qd=%u,lat_us=%u,seed=%" PRIu64,
		 (unsigned long long)DEV_SIZE, 1 + (unsigned int)(xorshift() % 32),
		 (unsigned int)(xorshift() % 100), cseed);
	ret = uf_sim_create(name, spec, &sim);
	if (ret) {
		printf("  %s %s: uf_sim_create(%s): %s\n", c->mode, c->policy,
		       spec, strerror(-ret));
		t->failed++;
		return -1;
	}
	sqlite3_test_control(SQLITE_TESTCTRL_PRNG_SEED, (int)cseed, NULL);
	if (setup(name, c)) {
		printf("  %s %s: setup failed\n", c->mode, c->policy);
		t->failed++;
		uf_sim_destroy(sim);
		return -1;
	}
	t->hash = 0xcbf29ce484222325ull;
	for (k = 0; k < cuts; k++)
		if (sim_cut_point(name, c, sim, k, force_cut, &acked, t) &&
		    t->failed - before >= 3 && !keep_going)
			break;	/* enough said about this one */
	uf_sim_destroy(sim);
	t->acked += acked;
	if (!acked && t->failed == before) {
		printf("  %s %s: no transaction ever committed: nothing was tested\n",
		       c->mode, c->policy);
		t->failed++;
	}
	return t->failed == before ? 0 : -1;
}

static int sim_main(const struct config *cfgs, unsigned int nc,
		    unsigned int kills, uint64_t seed, int force_cut,
		    bool twice)
{
	struct sim_totals t = { .passed = 0 }, again;
	unsigned int ci, per = (kills + nc - 1) / nc;
	uint64_t t0 = now_ms(), cseed;

	uri_engine = "&engine=sim";
	printf("sqlite-crash --sim: seed %#" PRIx64 ", %u power cuts over %u configurations%s\n",
	       seed, per * nc, nc, twice ? ", each configuration twice" : "");
	for (ci = 0; ci < nc; ci++) {
		const struct config *c = &cfgs[ci];
		unsigned int before = t.failed;
		int ret;

		/* a configuration's seed: replayable with it alone */
		cseed = str_hash(str_hash(seed * 0x9e3779b97f4a7c15ull + 1,
					  c->mode), c->policy);
		ret = sim_config(c, per, cseed, force_cut, &t);
		if (!ret && twice) {
			uint64_t first = t.hash;

			memset(&again, 0, sizeof(again));
			ret = sim_config(c, per, cseed, force_cut, &again);
			if (!ret && again.hash != first) {
				printf("  %s %s: not deterministic: image hash %016" PRIx64 " then %016" PRIx64 "\n",
				       c->mode, c->policy, first, again.hash);
				t.failed++;
			}
			t.failed += again.failed;
		}
		printf("  %-6s %-10s %u cuts, image %016" PRIx64 ", %s\n",
		       c->mode, c->policy, per, t.hash,
		       t.failed == before ? "all ok" : "FAILED");
		if (t.failed != before)
			printf("  replay: uflush-sqlite-crash --sim%s --seed %#" PRIx64 " --modes %s --policies %s --kills %u -v\n",
			       sim_world ? " --world" : "", seed, c->mode,
			       c->policy, per);
	}
	printf("sqlite-crash --sim: cuts: %u drop, %u keep, %u tear512, %u tear4k (%u at an armed %s, the rest after the transfers); %" PRId64 " transactions acknowledged, %.1f s\n",
	       t.cuts[SC_DROP], t.cuts[SC_KEEP], t.cuts[SC_TEAR512],
	       t.cuts[SC_TEAR4K], t.hit, sim_world ? "instant" : "request",
	       t.acked,
	       (double)(now_ms() - t0) / 1000.0);
	printf("%u passed, %u failed\n", t.passed, t.failed);
	return t.failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kills", required_argument, NULL, 'k' },
		{ "modes", required_argument, NULL, 'm' },
		{ "policies", required_argument, NULL, 'p' },
		{ "max-ms", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "dev", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "sim", no_argument, NULL, 'S' },
		{ "world", no_argument, NULL, 'W' },
		{ "cut", required_argument, NULL, 'c' },
		{ "twice", no_argument, NULL, 'T' },
		{ "keep-going", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char modes_buf[128] = "delete,wal", pol_buf[256] = "linux-3.1,linux-3.2";
	const char *modes[MAX_CONFIGS], *pols[MAX_CONFIGS], *dev = NULL;
	unsigned int kills = 40, max_ms = 150, nm, np, ci, nc, i, per;
	struct config cfgs[MAX_CONFIGS];
	struct totals t = { 0, 0, 0 };
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	uint64_t t0 = now_ms();
	bool sim = false, twice = false;
	int opt, ret, force_cut = -1;

	while ((opt = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'k': kills = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'm': snprintf(modes_buf, sizeof(modes_buf), "%s", optarg); break;
		case 'p': snprintf(pol_buf, sizeof(pol_buf), "%s", optarg); break;
		case 't': max_ms = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'd': dev = optarg; break;
		case 'v': verbose = true; break;
		case 'S': sim = true; break;
		case 'W': sim_world = true; break;
		case 'T': twice = true; break;
		case 'K': keep_going = true; break;
		case 'c':
			for (force_cut = 0; force_cut < NR_SC &&
			     strcmp(optarg, sc_names[force_cut]); force_cut++)
				;
			if (force_cut == NR_SC) {
				fprintf(stderr, "sqlite-crash: --cut %s: want drop, keep, tear512 or tear4k\n",
					optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	nm = (unsigned int)split(modes_buf, modes, MAX_CONFIGS);
	np = (unsigned int)split(pol_buf, pols, MAX_CONFIGS);
	if (!kills || !nm || !np || nm * np > MAX_CONFIGS) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < nm; i++)
		if (strcmp(modes[i], "delete") && strcmp(modes[i], "wal")) {
			fprintf(stderr, "sqlite-crash: mode %s: want delete or wal\n",
				modes[i]);
			return 2;
		}
	nc = 0;
	for (i = 0; i < nm; i++)
		for (ci = 0; ci < np; ci++)
			cfgs[nc++] = (struct config){ modes[i], pols[ci] };

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the retries while a killed process lets go would say "busy" */
	setenv("UFLUSH_SQLITE_QUIET", "1", 0);
	uf_set_log_fn(quiet_log, NULL);
	rng = seed | 1;
	if (uf_sqlite_vfs_register(NULL, 0) != SQLITE_OK) {
		fprintf(stderr, "sqlite-crash: cannot register the VFS\n");
		return 1;
	}
	if (sim_world && !sim) {
		usage(stderr);
		return 2;
	}
	if (sim)
		return sim_main(cfgs, nc, kills, seed, force_cut, twice);
	if (!dev) {
		ret = uf_testdev_create(DEV_SIZE, 0, &crash_td);
		if (ret) {
			fprintf(stderr, "sqlite-crash: no scratch device: %s\n",
				strerror(-ret));
			return 1;
		}
		crash_have_td = true;
		atexit(cleanup);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		dev = crash_td.path;
	}
	printf("sqlite-crash: device %s%s, seed %#" PRIx64 ", %u kills over %u configurations\n",
	       dev, crash_have_td && !crash_td.is_loop ? " (a file: no loop device here)" : "",
	       seed, kills, nc);

	per = (kills + nc - 1) / nc;
	for (ci = 0; ci < nc; ci++) {
		const struct config *c = &cfgs[ci];
		unsigned int before = t.failed;
		int64_t acked = 0;

		struct result r;

		if (in_child(dev, c, 0, true, &r)) {
			printf("  %s %s: setup failed\n", c->mode, c->policy);
			t.failed++;
			continue;
		}
		for (i = 0; i < per; i++)
			if (kill_point(dev, c, i, max_ms, &acked, &t, per, i) &&
			    t.failed - before >= 3)
				break;	/* enough said about this one */
		printf("  %-6s %-10s %u kills, %" PRId64 " transactions committed, %s\n",
		       c->mode, c->policy, per, acked,
		       t.failed == before ? "all ok" : "FAILED");
		t.acked += acked;
		if (!acked && t.failed == before) {
			printf("  %s %s: no transaction ever committed: nothing was tested\n",
			       c->mode, c->policy);
			t.failed++;
		}
	}
	printf("sqlite-crash: %" PRId64 " transactions acknowledged, %.1f s\n",
	       t.acked, (double)(now_ms() - t0) / 1000.0);
	printf("%u passed, %u failed\n", t.passed, t.failed);
	return t.failed ? 1 : 0;
}
