// SPDX-License-Identifier: MIT
/*
 * bench/sqlite.c - uflush-bench sqlite: one SQLite workload through the
 * uflush VFS (clients/sqlite) and through SQLite's default VFS on ext4 on
 * the same device (the kernel's page cache), in one run.
 *
 * The workload, on a fresh database each run (one table, an index):
 *   insert   --rows rows in transactions of --batch rows
 *   update   --txns transactions, each updating 5 rows found by the index
 *   read     --reads point reads by the index, 100 to a read transaction
 *   mixed    --txns transactions of 3 reads, an update and an insert
 * under synchronous=NORMAL and FULL (rollback journal, or WAL with
 * --journal wal).  Per case: transactions/s of each phase, the latency of
 * COMMIT (median, 99th percentile, over the write phases), and the bytes
 * the device wrote (its sysfs counters; for ext4 including its own
 * journal, up to a syncfs after SQLite closed).  Ratios are uflush over
 * ext4 at the same synchronous setting.
 *
 * The ext4 case makes the file system afresh on the device each run
 * (mkfs.ext4, mount in a temporary directory, unmount afterwards); the
 * uflush case formats the device through the VFS (format=1).
 *
 * Hook for the A/B of two flush policies (a later issue): a case is a row
 * of sq_cases[] with its own policy; a second uflush row with another
 * --policy-b spec is all it takes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "uflush.h"
#include "bench.h"
#include "clients/sqlite/uflush_sqlite.h"

#define SQ_PHASES	4
#define SQ_MAX_CASES	4
#define SQ_UPDATE_ROWS	5
#define SQ_READ_TXN	100

enum sq_backend { SQ_UFLUSH, SQ_EXT4 };

struct sq_case_def {
	const char *name;
	enum sq_backend backend;
	bool full;		/* synchronous=FULL, else NORMAL */
};

static const struct sq_case_def sq_cases[SQ_MAX_CASES] = {
	{ "uflush NORMAL", SQ_UFLUSH, false },
	{ "ext4 NORMAL", SQ_EXT4, false },
	{ "uflush FULL", SQ_UFLUSH, true },
	{ "ext4 FULL", SQ_EXT4, true },
};

struct sq_opts {
	unsigned int rows, batch, txns, reads, reps;
	uint64_t size, cache;
	const char *policy, *journal, *dev, *json;
	bool force;
};

struct sq_run {
	double tps[SQ_PHASES];
	double p50_ms, p99_ms;
	double written_mb;
	double secs;
};

struct sq_bench {
	struct sq_opts o;
	struct bench_env env;
	struct bench_target t;
	struct bench_case cases[SQ_MAX_CASES];
	unsigned int n[SQ_MAX_CASES];
	struct sq_run runs[SQ_MAX_CASES][BENCH_MAX_REPS];
	double *lat;		/* commit latencies of the current run, ms */
	size_t nlat, cap;
	uint64_t rng;
	char mnt[256];
};

static struct sq_bench sq_bench = {
	.o = {
		.rows = 20000, .batch = 500, .txns = 300, .reads = 10000,
		.reps = 3, .size = 256ull << 20, .cache = 64ull << 20,
		.journal = "delete",
	},
};

static double sq_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* The workload                                                        */

static int sq_exec(sqlite3 *db, const char *sql, char *why, size_t len)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	if (rc != SQLITE_OK)
		snprintf(why, len, "%s: %s", sql, err ? err : sqlite3_errstr(rc));
	sqlite3_free(err);
	return rc == SQLITE_OK ? 0 : -EIO;
}

static int sq_commit(struct sq_bench *b, sqlite3 *db, char *why, size_t len)
{
	double t0 = sq_now();
	int err = sq_exec(db, "COMMIT", why, len);

	if (!err && !bench_grow(&b->lat, &b->cap, b->nlat, sizeof(double), 1024))
		b->lat[b->nlat++] = (sq_now() - t0) * 1e3;
	return err;
}

static int sq_step(sqlite3_stmt *st, int want)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == want || rc == SQLITE_DONE ? 0 : -EIO;
}

struct sq_stmts {
	sqlite3_stmt *ins, *upd, *get;
};

static int sq_prepare(sqlite3 *db, struct sq_stmts *s)
{
	if (sqlite3_prepare_v2(db, "INSERT INTO t(k, v) VALUES(?, ?)", -1,
			       &s->ins, NULL) ||
	    sqlite3_prepare_v2(db, "UPDATE t SET v = ? WHERE k = ?", -1,
			       &s->upd, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT v FROM t WHERE k = ?", -1,
			       &s->get, NULL))
		return -EIO;
	return 0;
}

static void sq_finalize(struct sq_stmts *s)
{
	sqlite3_finalize(s->ins);
	sqlite3_finalize(s->upd);
	sqlite3_finalize(s->get);
}

static const char sq_payload[] =
	"uflush-bench sqlite payload: some text of the size of a small row, "
	"as an application would store it";

static int sq_insert(struct sq_bench *b, struct sq_stmts *s, unsigned int k)
{
	(void)b;
	sqlite3_bind_int64(s->ins, 1, k);
	sqlite3_bind_text(s->ins, 2, sq_payload, -1, SQLITE_STATIC);
	return sq_step(s->ins, SQLITE_DONE);
}

static int sq_update(struct sq_bench *b, struct sq_stmts *s, unsigned int n)
{
	sqlite3_bind_text(s->upd, 1, sq_payload + bench_xorshift64(&b->rng) % 16,
			  -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->upd, 2, (sqlite3_int64)(bench_xorshift64(&b->rng) % n));
	return sq_step(s->upd, SQLITE_DONE);
}

static int sq_get(struct sq_bench *b, struct sq_stmts *s, unsigned int n)
{
	sqlite3_bind_int64(s->get, 1, (sqlite3_int64)(bench_xorshift64(&b->rng) % n));
	return sq_step(s->get, SQLITE_ROW);
}

/* The four phases on an open database; r gets the rates. */
static int sq_workload(struct sq_bench *b, sqlite3 *db, bool full,
		       struct sq_run *r, char *why, size_t len)
{
	const struct sq_opts *o = &b->o;
	struct sq_stmts s = { NULL, NULL, NULL };
	unsigned int i, j, rows = 0, txns;
	char sql[128];
	double t0;
	int err;

	snprintf(sql, sizeof(sql),
		 "PRAGMA journal_mode=%s; PRAGMA synchronous=%s;", o->journal,
		 full ? "FULL" : "NORMAL");
	err = sq_exec(db, sql, why, len) ||
	      sq_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);"
		      "CREATE INDEX t_k ON t(k);", why, len);
	if (err)
		return -EIO;
	if (sq_prepare(db, &s)) {
		snprintf(why, len, "prepare: %s", sqlite3_errmsg(db));
		sq_finalize(&s);
		return -EIO;
	}
	b->nlat = 0;
	err = 0;

	t0 = sq_now();
	for (txns = 0; !err && rows < o->rows && !bench_stop; txns++) {
		err = sq_exec(db, "BEGIN", why, len);
		for (j = 0; !err && j < o->batch && rows < o->rows; j++)
			err = sq_insert(b, &s, rows++);
		if (!err)
			err = sq_commit(b, db, why, len);
	}
	r->tps[0] = txns / (sq_now() - t0);

	t0 = sq_now();
	for (i = 0; !err && i < o->txns && !bench_stop; i++) {
		err = sq_exec(db, "BEGIN", why, len);
		for (j = 0; !err && j < SQ_UPDATE_ROWS; j++)
			err = sq_update(b, &s, rows);
		if (!err)
			err = sq_commit(b, db, why, len);
	}
	r->tps[1] = o->txns / (sq_now() - t0);

	t0 = sq_now();
	txns = (o->reads + SQ_READ_TXN - 1) / SQ_READ_TXN;
	for (i = 0; !err && i < txns && !bench_stop; i++) {
		err = sq_exec(db, "BEGIN", why, len);
		for (j = 0; !err && j < SQ_READ_TXN; j++)
			err = sq_get(b, &s, rows);
		if (!err)
			err = sq_exec(db, "COMMIT", why, len);
	}
	r->tps[2] = txns / (sq_now() - t0);

	t0 = sq_now();
	for (i = 0; !err && i < o->txns && !bench_stop; i++) {
		err = sq_exec(db, "BEGIN", why, len);
		for (j = 0; !err && j < 3; j++)
			err = sq_get(b, &s, rows);
		if (!err)
			err = sq_update(b, &s, rows);
		if (!err)
			err = sq_insert(b, &s, rows++);
		if (!err)
			err = sq_commit(b, db, why, len);
	}
	r->tps[3] = o->txns / (sq_now() - t0);
	if (err && !why[0])
		snprintf(why, len, "%s", sqlite3_errmsg(db));
	sq_finalize(&s);
	return err ? -EIO : 0;
}

static int sq_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------------ */
/* The two backends                                                    */

static int sq_run_cmd(const char *cmd)
{
	int st = system(cmd);

	return st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) ? -EIO : 0;
}

static void sq_umount(struct sq_bench *b)
{
	if (!b->mnt[0])
		return;
	if (umount(b->mnt))
		umount2(b->mnt, MNT_DETACH);
	rmdir(b->mnt);
	b->mnt[0] = '\0';
}

static int sq_open_ext4(struct sq_bench *b, sqlite3 **db, char *why,
			size_t len)
{
	char cmd[600], path[320];

	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s >/dev/null 2>&1",
		 b->t.path);
	if (sq_run_cmd(cmd)) {
		snprintf(why, len, "mkfs.ext4 %s failed (is e2fsprogs installed?)",
			 b->t.path);
		return BENCH_SKIP;
	}
	snprintf(b->mnt, sizeof(b->mnt), "/var/tmp/uflush-sqlite-mnt.XXXXXX");
	if (!mkdtemp(b->mnt)) {
		b->mnt[0] = '\0';
		snprintf(why, len, "mkdtemp: %s", strerror(errno));
		return BENCH_SKIP;
	}
	if (mount(b->t.path, b->mnt, "ext4", 0, NULL)) {
		snprintf(why, len, "cannot mount ext4 on %s: %s", b->t.path,
			 strerror(errno));
		rmdir(b->mnt);
		b->mnt[0] = '\0';
		return BENCH_SKIP;
	}
	snprintf(path, sizeof(path), "%s/bench.db", b->mnt);
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		snprintf(why, len, "open: %.200s", sqlite3_errmsg(*db));
		return -EIO;
	}
	return 0;
}

static int sq_open_uflush(struct sq_bench *b, sqlite3 **db, char *why,
			  size_t len)
{
	char uri[1024];
	uint64_t end = (uint64_t)(sq_now() * 1000) + 10000;
	int rc;

	snprintf(uri, sizeof(uri),
		 "file:bench.db?vfs=uflush&dev=%s&cachesize=%" PRIu64
		 "&format=1%s%s", b->t.path, b->o.cache,
		 b->o.policy ? "&policy=" : "", b->o.policy ? b->o.policy : "");
	for (;;) {
		rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READWRITE |
				     SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
				     NULL);
		/* our own last handle may not have let go yet */
		if (rc == SQLITE_OK || uf_sqlite_last_errno() != -EBUSY ||
		    (uint64_t)(sq_now() * 1000) > end)
			break;
		sqlite3_close(*db);
		usleep(10000);
	}
	if (rc != SQLITE_OK) {
		snprintf(why, len, "open: %.200s", uf_sqlite_last_error());
		return -EIO;
	}
	return 0;
}

static void sq_drop_caches(void)
{
	int err = bench_drop_caches();

	/* without root, runs share the host's cache (the header says so) */
	if (err && err != -EACCES && err != -EPERM)
		bench_err("sqlite", "cannot drop the host's caches: %s",
			  strerror(-err));
}

static int sq_run_one(void *priv, unsigned int c, unsigned int rep)
{
	struct sq_bench *b = priv;
	const struct sq_case_def *d = &sq_cases[c];
	struct bench_case *bc = &b->cases[c];
	struct sq_run r;
	uint64_t ios0 = 0, sec0 = 0, ios1 = 0, sec1 = 0;
	bool have0, have1;
	sqlite3 *db = NULL;
	double t0;
	int err;

	memset(&r, 0, sizeof(r));
	bc->why[0] = '\0';
	b->rng = 0x9e3779b97f4a7c15ull + rep;
	sq_drop_caches();
	err = d->backend == SQ_EXT4 ?
		sq_open_ext4(b, &db, bc->why, sizeof(bc->why)) :
		sq_open_uflush(b, &db, bc->why, sizeof(bc->why));
	have0 = bench_target_counters(&b->t, &ios0, &sec0);
	t0 = sq_now();
	if (!err)
		err = sq_workload(b, db, d->full, &r, bc->why, sizeof(bc->why));
	if (sqlite3_close(db) != SQLITE_OK && !err) {
		snprintf(bc->why, sizeof(bc->why), "close failed");
		err = -EIO;
	}
	if (d->backend == SQ_EXT4 && b->mnt[0]) {
		int fd = open(b->mnt, O_RDONLY | O_DIRECTORY);

		if (fd >= 0) {
			syncfs(fd);
			close(fd);
		}
	}
	r.secs = sq_now() - t0;
	have1 = bench_target_counters(&b->t, &ios1, &sec1);
	sq_umount(b);
	if (err) {
		fprintf(stderr, "  %s: %s\n", d->name, bc->why);
		/* a first failure skips the case, a later one stops */
		return bc->runs ? err : BENCH_SKIP;
	}
	if (bench_stop)
		return 0;
	r.written_mb = have0 && have1 ? (sec1 - sec0) * 512.0 / 1e6 : NAN;
	qsort(b->lat, b->nlat, sizeof(double), sq_cmp);
	r.p50_ms = bench_quantile(b->lat, (unsigned int)b->nlat, 0.5);
	r.p99_ms = bench_quantile(b->lat, (unsigned int)b->nlat, 0.99);
	b->runs[c][b->n[c]++] = r;
	fprintf(stderr, "  rep %u/%u  %-14s insert %6.1f  update %6.1f  read %7.1f  mixed %6.1f tx/s  commit p50 %.2f p99 %.2f ms  %.1f MB written\n",
		rep + 1, b->o.reps, d->name, r.tps[0], r.tps[1], r.tps[2],
		r.tps[3], r.p50_ms, r.p99_ms, r.written_mb);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

enum { COL_CASE, COL_INS, COL_UPD, COL_READ, COL_MIX, COL_P50, COL_P99,
       COL_MB, NR_COLS };

static const char *const sq_cols[NR_COLS] = {
	"case", ">insert tx/s", ">update tx/s", ">read tx/s", ">mixed tx/s",
	">commit p50 ms", ">p99 ms", ">MB written",
};

static void sq_samples(const struct sq_bench *b, unsigned int c, size_t off,
		       struct bench_samples *s)
{
	bench_samples_gather(s, b->runs[c], b->n[c], sizeof(struct sq_run),
			     off);
}

static double sq_median(const struct sq_bench *b, unsigned int c, size_t off)
{
	struct bench_samples s;

	sq_samples(b, c, off, &s);
	return bench_samples_median(&s);
}

static double sq_ratio(const struct sq_bench *b, unsigned int c,
		       unsigned int base, size_t off)
{
	struct bench_samples x, y;

	sq_samples(b, c, off, &x);
	sq_samples(b, base, off, &y);
	return bench_ratio(&x, &y);
}

static const size_t sq_offs[NR_COLS] = {
	0, offsetof(struct sq_run, tps[0]), offsetof(struct sq_run, tps[1]),
	offsetof(struct sq_run, tps[2]), offsetof(struct sq_run, tps[3]),
	offsetof(struct sq_run, p50_ms), offsetof(struct sq_run, p99_ms),
	offsetof(struct sq_run, written_mb),
};

static void sq_row(struct bench_table *t, const void *priv, unsigned int c)
{
	const struct sq_bench *b = priv;
	unsigned int col;
	int row;

	/* a row per case, then under each uflush case its ratios to ext4 */
	row = bench_table_row(t);
	if (row < 0)
		return;
	bench_table_set(t, (unsigned int)row, COL_CASE, "%s", sq_cases[c].name);
	for (col = COL_INS; col < NR_COLS; col++) {
		if (!b->n[c])
			bench_table_set(t, (unsigned int)row, col, "%s",
					b->cases[c].skipped ? "skipped" : "-");
		else
			bench_table_set(t, (unsigned int)row, col, "%.*f",
					col >= COL_P50 ? 2 : 1,
					sq_median(b, c, sq_offs[col]));
	}
	if (sq_cases[c].backend != SQ_EXT4)
		return;
	row = bench_table_row(t);
	if (row < 0)
		return;
	bench_table_set(t, (unsigned int)row, COL_CASE, "  uflush/ext4 %s",
			sq_cases[c].full ? "FULL" : "NORMAL");
	for (col = COL_INS; col < NR_COLS; col++)
		bench_table_ratio(t, (unsigned int)row, col,
				  sq_ratio(b, c - 1, c, sq_offs[col]));
}

static void sq_header(const void *priv)
{
	const struct sq_bench *b = priv;

	printf("\nuflush-bench sqlite: SQLite through the uflush VFS vs SQLite on ext4 (kernel page cache), same device\n");
	bench_target_print(&b->t, NULL);
	printf("work:    %u rows inserted %u to a transaction; %u update txns of %u rows; %u point reads %u to a txn; %u mixed txns\n",
	       b->o.rows, b->o.batch, b->o.txns, SQ_UPDATE_ROWS, b->o.reads,
	       SQ_READ_TXN, b->o.txns);
	printf("sqlite:  %s, journal_mode=%s, page size 4096\n",
	       sqlite3_libversion(), b->o.journal);
	printf("uflush:  cachesize %" PRIu64 " MiB, policy %s; ext4: host page cache, caches dropped before each run\n",
	       b->o.cache >> 20, b->o.policy ? b->o.policy : "default (mainline)");
	bench_env_print(&b->env, NULL, false);
	printf("runs:    %u reps, cases interleaved (order rotated); medians; ratios = uflush / ext4%s\n\n",
	       b->o.reps, bench_stop ? " (INTERRUPTED)" : "");
}

static void sq_notes(const void *priv)
{
	(void)priv;
	printf("\nMB written: what the device completed (sysfs), SQLite's data, journal and directory;\n"
	       "for ext4 also its own journal and metadata.  Commit latency over insert, update, mixed.\n");
}

static void sq_json_config(struct bench_json *j, const void *priv)
{
	const struct sq_bench *b = priv;

	bench_json_str(j, "sqlite", sqlite3_libversion());
	bench_json_str(j, "journal_mode", b->o.journal);
	bench_json_u64(j, "rows", b->o.rows);
	bench_json_u64(j, "batch", b->o.batch);
	bench_json_u64(j, "txns", b->o.txns);
	bench_json_u64(j, "reads", b->o.reads);
	bench_json_u64(j, "cache_bytes", b->o.cache);
	bench_json_str(j, "policy", b->o.policy ? b->o.policy : "");
}

static void sq_json_case(struct bench_json *j, const void *priv,
			 unsigned int c)
{
	const struct sq_bench *b = priv;
	struct bench_samples s;
	unsigned int col;
	static const char *const keys[NR_COLS] = {
		"", "insert_tps", "update_tps", "read_tps", "mixed_tps",
		"commit_p50_ms", "commit_p99_ms", "written_mb",
	};

	bench_json_obj(j, NULL);
	bench_json_str(j, "case", sq_cases[c].name);
	bench_json_str(j, "backend", sq_cases[c].backend == SQ_EXT4 ?
		       "ext4" : "uflush");
	bench_json_str(j, "synchronous", sq_cases[c].full ? "FULL" : "NORMAL");
	bench_json_str(j, "reason", b->cases[c].skipped ? b->cases[c].why : "");
	for (col = COL_INS; col < NR_COLS; col++) {
		sq_samples(b, c, sq_offs[col], &s);
		bench_json_samples(j, keys[col], &s);
		if (sq_cases[c].backend == SQ_UFLUSH) {
			char key[64];

			snprintf(key, sizeof(key), "ratio_ext4_%s", keys[col]);
			bench_json_num(j, key, sq_ratio(b, c, c + 1,
							sq_offs[col]));
		}
	}
	bench_json_end(j);
}

static const struct bench_report sq_report = {
	sq_cols, NR_COLS, sq_header, sq_row, sq_notes, sq_json_config,
	sq_json_case,
};

/* ------------------------------------------------------------------ */
/* Options and main                                                    */

static const struct bench_opt sq_opts[] = {
	BENCH_UINT("rows", "N", &sq_bench.o.rows, 100, 10000000, NULL,
		   "rows of the insert phase (default 20000)"),
	BENCH_UINT("batch", "N", &sq_bench.o.batch, 1, 1000000, NULL,
		   "rows to an insert transaction (default 500)"),
	BENCH_UINT("txns", "N", &sq_bench.o.txns, 1, 10000000, NULL,
		   "transactions of the update and mixed phases (default 300)"),
	BENCH_UINT("reads", "N", &sq_bench.o.reads, 100, 100000000, NULL,
		   "point reads (default 10000)"),
	BENCH_SIZE("cache", &sq_bench.o.cache, 1u << 20, 64ull << 30, 4096,
		   "uflush cache size (default 64M)"),
	BENCH_STR("policy", "SPEC", &sq_bench.o.policy,
		  "uflush flush policy (default: the library's)"),
	BENCH_STR("journal", "MODE", &sq_bench.o.journal,
		  "delete (default) or wal"),
	BENCH_SIZE("dev-size", &sq_bench.o.size, 64u << 20, UINT64_MAX,
		   1u << 20, "scratch device size (default 256M)"),
	BENCH_OLD_NAME("size", "dev-size"),
	BENCH_OPT_REPS(&sq_bench.o.reps, "repetitions of the cases (default 3)"),
	BENCH_OPTS_DEV_END(&sq_bench.o.dev, &sq_bench.o.force,
			   &sq_bench.o.json),
};

BENCH_CMDLINE(sqlite, sq_opts,
	"A SQLite workload (bulk insert, indexed updates, point reads, mixed)\n"
	"through the uflush VFS and through SQLite's default VFS on ext4 made on\n"
	"the same device, under synchronous=NORMAL and FULL: transactions/s,\n"
	"commit latency, bytes written, and their ratios.  Needs root (mkfs,\n"
	"mount, dropping caches).\n"
	BENCH_SCRATCH_ABOUT,
	NULL);

int bench_sqlite_main(int argc, char **argv)
{
	struct sq_bench *b = &sq_bench;
	struct bench_sched s = BENCH_SCHED_ROTATED(b->cases, SQ_MAX_CASES,
						   sq_run_one, b);
	unsigned int c;
	int err;

	err = bench_opts_main(&bench_sqlite_cmdline, argc, argv);
	if (err >= 0)
		return err;
	if (strcmp(b->o.journal, "delete") && strcmp(b->o.journal, "wal")) {
		bench_err("sqlite", "--journal %s: want delete or wal",
			  b->o.journal);
		return 2;
	}
	for (c = 0; c < SQ_MAX_CASES; c++)
		b->cases[c].name = sq_cases[c].name;
	setenv("UFLUSH_SQLITE_QUIET", "1", 0);
	if (uf_sqlite_vfs_register(NULL, 0) != SQLITE_OK) {
		bench_err("sqlite", "cannot register the uflush VFS");
		return 1;
	}
	if (bench_env_init(&b->env, "sqlite", false))
		return 1;
	if (bench_target_open(&b->t, "sqlite", b->o.dev, b->o.size,
			      b->o.force))
		return 1;
	b->t.range = b->t.size;
	b->t.force = b->o.force;
	s.reps = b->o.reps;
	if (!b->t.is_blk) {
		bench_err("sqlite", "%s is not a block device: no ext4 baseline",
			  b->t.path);
	}
	err = bench_stop ? 0 : bench_sched_run(&s);
	sq_umount(b);
	if (!err)
		err = bench_report(&sq_report, &b->env, &b->t, b->o.json, b,
				   SQ_MAX_CASES);
	bench_target_close(&b->t);
	free(b->lat);
	if (!err && (!b->n[0] || !b->n[2])) {
		bench_err("sqlite", "uflush could not run");
		return 1;
	}
	return bench_exit_code("sqlite", err);
}
