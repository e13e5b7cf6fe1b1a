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

static void uri(char *buf, size_t len, const char *dev,
		const struct config *c, bool format)
{
	snprintf(buf, len,
		 "file:bank.db?vfs=uflush&dev=%s&cachesize=8M&extent=8M&policy=%s%s",
		 dev, c->policy, format ? "&format=1" : "");
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

static int exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	if (rc != SQLITE_OK) {
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
	if (rc != SQLITE_OK)
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
	if (sqlite3_close(db) != SQLITE_OK && !bad) {
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

static int in_child(const char *dev, const struct config *c, int64_t acked,
		    bool is_setup, struct result *r)
{
	int p[2], status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->ret = -1;
	snprintf(r->why, sizeof(r->why), "the checking process died");
	if (pipe(p))
		return -1;
	fflush(NULL);
	pid = fork();
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

	if (pipe(p))
		return -1;
	fflush(NULL);
	pid = fork();
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
	if (level <= 3 && !strstr(msg, "held open exclusively"))
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
		"Without --dev, a scratch loop device; --dev PATH is overwritten.\n");
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
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'k': kills = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'm': snprintf(modes_buf, sizeof(modes_buf), "%s", optarg); break;
		case 'p': snprintf(pol_buf, sizeof(pol_buf), "%s", optarg); break;
		case 't': max_ms = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'd': dev = optarg; break;
		case 'v': verbose = true; break;
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
