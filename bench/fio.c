// SPDX-License-Identifier: MIT
/*
 * bench/fio.c - fio as the baseline: run it as a child process and read
 * the numbers from its JSON report.
 *
 * fio is run directly (posix_spawn, no shell) with its stdout and stderr on
 * pipes.  The report is JSON on stdout, possibly after fio's "note:" lines;
 * a small navigator (no JSON library) picks jobs[0].write.bw_bytes and
 * friends out of it.  With --group_reporting, jobs[0] is the whole group.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "io/io.h"

extern char **environ;

/* Output of a child: all of stdout, the tail of stderr. */
struct child_out {
	char *out;
	size_t out_len;
	size_t out_cap;
	char err[1024];
	size_t err_len;
	int status;
};

const char *fio_binary(void)
{
	const char *env = getenv("FIO");

	return env && *env ? env : "fio";
}

/* ------------------------------------------------------------------ */
/* Running a child                                                     */

static int out_append(struct child_out *co, const char *buf, size_t n)
{
	if (co->out_len + n + 1 > co->out_cap) {
		size_t cap = (co->out_cap ? co->out_cap * 2 : 65536) + n;
		char *p = realloc(co->out, cap);

		if (!p)
			return -ENOMEM;
		co->out = p;
		co->out_cap = cap;
	}
	memcpy(co->out + co->out_len, buf, n);
	co->out_len += n;
	co->out[co->out_len] = '\0';
	return 0;
}

/* Keep the last sizeof(err)-1 bytes of stderr. */
static void err_append(struct child_out *co, const char *buf, size_t n)
{
	size_t cap = sizeof(co->err) - 1;

	if (n >= cap) {
		buf += n - cap;
		n = cap;
	}
	if (co->err_len + n > cap) {
		size_t drop = co->err_len + n - cap;

		memmove(co->err, co->err + drop, co->err_len - drop);
		co->err_len -= drop;
	}
	memcpy(co->err + co->err_len, buf, n);
	co->err_len += n;
	co->err[co->err_len] = '\0';
}

static int spawn(char *const *argv, pid_t *pid, int *out_fd, int *err_fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int po[2], pe[2], err;
	sigset_t def;

	if (pipe2(po, O_CLOEXEC))
		return -errno;
	if (pipe2(pe, O_CLOEXEC)) {
		err = -errno;
		close(po[0]);
		close(po[1]);
		return err;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, po[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, pe[1], STDERR_FILENO);
	posix_spawnattr_init(&attr);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	err = -posix_spawnp(pid, argv[0], &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	if (err) {
		close(po[0]);
		close(pe[0]);
		return err;
	}
	*out_fd = po[0];
	*err_fd = pe[0];
	return 0;
}

/*
 * Drain both pipes until EOF.  On bench_stop, pass SIGINT on to the child
 * once (fio then stops and still reports), and SIGKILL it if it has not
 * gone 5 s later.
 */
static int collect(pid_t pid, int out_fd, int err_fd, struct child_out *co)
{
	struct pollfd pfd[2] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 } };
	uint64_t kill_at = 0;
	char buf[16384];
	int open_fds = 2, i, err = 0;
	ssize_t n;

	while (open_fds) {
		if (bench_stop && !kill_at) {
			kill(pid, SIGINT);
			kill_at = uf_now_ns() + 5000000000ull;
		} else if (kill_at && uf_now_ns() > kill_at) {
			kill(pid, SIGKILL);
		}
		if (poll(pfd, 2, 200) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_fds--;
			} else if (i == 0) {
				err = err ?: out_append(co, buf, n);
			} else {
				err_append(co, buf, n);
			}
		}
	}
	return err;
}

static int run_child(char *const *argv, struct child_out *co)
{
	int out_fd, err_fd, err;
	pid_t pid;

	memset(co, 0, sizeof(*co));
	err = spawn(argv, &pid, &out_fd, &err_fd);
	if (err)
		return err;
	err = collect(pid, out_fd, err_fd, co);
	while (waitpid(pid, &co->status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
		kill(pid, SIGINT);
	}
	return err;
}

/* The last non-empty line of s, for error messages. */
static void last_line(const char *s, char *buf, size_t len)
{
	const char *end = s + strlen(s), *start;

	while (end > s && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	snprintf(buf, len, "%.*s", (int)(end - start), start);
}

/* ------------------------------------------------------------------ */
/* Jobs                                                                */

int fio_find(char *version, size_t len, char *why, size_t why_len)
{
	char *argv[] = { (char *)fio_binary(), "--version", NULL };
	struct child_out co;
	int err;

	err = run_child(argv, &co);
	if (err) {
		snprintf(why, why_len, "cannot run %s: %s", argv[0],
			 strerror(-err));
		free(co.out);
		return err == -ENOENT ? -ENOENT : err;
	}
	if (!WIFEXITED(co.status) || WEXITSTATUS(co.status) || !co.out) {
		snprintf(why, why_len, "'%s --version' failed", argv[0]);
		free(co.out);
		return -ENOENT;
	}
	last_line(co.out, version, len);
	free(co.out);
	return 0;
}

void fio_job_init(struct fio_job *job)
{
	job->argc = 0;
	snprintf(job->argv[job->argc++], FIO_ARG_LEN, "%s", fio_binary());
}

int fio_arg(struct fio_job *job, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (job->argc >= FIO_MAX_ARGS)
		return -E2BIG;
	va_start(ap, fmt);
	n = vsnprintf(job->argv[job->argc], FIO_ARG_LEN, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= FIO_ARG_LEN)
		return -E2BIG;
	job->argc++;
	return 0;
}

static bool needs_quotes(const char *s)
{
	return !*s || strpbrk(s, " \t\n'\"\\$`!*?[](){}<>|&;#~") != NULL;
}

void fio_job_cmdline(const struct fio_job *job, char *buf, size_t len)
{
	size_t pos = 0;
	unsigned int i;
	const char *a;

	buf[0] = '\0';
	for (i = 0; i < job->argc && pos < len; i++) {
		a = job->argv[i];
		if (!needs_quotes(a)) {
			pos += snprintf(buf + pos, len - pos, "%s%s",
					i ? " " : "", a);
			continue;
		}
		pos += snprintf(buf + pos, len - pos, "%s'", i ? " " : "");
		for (; *a && pos < len; a++)
			pos += snprintf(buf + pos, len - pos,
					*a == '\'' ? "'\\''" : "%c", *a);
		if (pos < len)
			pos += snprintf(buf + pos, len - pos, "'");
	}
}

int fio_run(const struct fio_job *job, struct fio_result *res)
{
	char *argv[FIO_MAX_ARGS + 1];
	struct child_out co;
	unsigned int i;
	int err;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < job->argc; i++)
		argv[i] = (char *)job->argv[i];
	argv[i] = NULL;
	err = run_child(argv, &co);
	if (err) {
		snprintf(res->err, sizeof(res->err), "cannot run %s: %s",
			 argv[0], strerror(-err));
		goto out;
	}
	if (bench_stop) {
		snprintf(res->err, sizeof(res->err), "interrupted");
		err = -EINTR;
	} else if (!WIFEXITED(co.status) || WEXITSTATUS(co.status)) {
		last_line(co.err, res->err, sizeof(res->err));
		if (!res->err[0])
			snprintf(res->err, sizeof(res->err),
				 "fio exited with status %#x", co.status);
		err = -EIO;
	} else {
		err = fio_parse_json(co.out ? co.out : "", res);
	}
out:
	free(co.out);
	return err;
}

/* The report starts at the first line that starts with '{'. */
static const char *report_start(const char *text)
{
	const char *p = text;

	while (p && *p != '{') {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return p;
}

int fio_parse_json(const char *text, struct fio_result *res)
{
	const char *root = report_start(text), *job, *wr;
	double error = 0, io_bytes = 0;

	job = bench_jindex(bench_jget(root, "jobs"), 0);
	wr = bench_jget(job, "write");
	if (!wr || bench_jnum(bench_jget(wr, "bw_bytes"), &res->bw_bytes) ||
	    bench_jnum(bench_jget(wr, "iops"), &res->iops)) {
		snprintf(res->err, sizeof(res->err),
			 "no jobs[0].write.bw_bytes/iops in fio's report");
		return -EIO;
	}
	bench_jnum(bench_jget(wr, "io_bytes"), &io_bytes);
	res->io_bytes = io_bytes;
	bench_jnum(bench_jget(job, "usr_cpu"), &res->usr_cpu);
	bench_jnum(bench_jget(job, "sys_cpu"), &res->sys_cpu);
	bench_jnum(bench_jget(job, "error"), &error);
	if (error) {
		snprintf(res->err, sizeof(res->err),
			 "fio job reported error %d (%s)", (int)error,
			 strerror((int)error));
		return -EIO;
	}
	return 0;
}
