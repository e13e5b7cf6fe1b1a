// SPDX-License-Identifier: MIT
/*
 * bench/harness.c - options, statistics, schedule, tables and JSON for the
 * uflush-bench scenarios (bench/harness.h).  The device and environment
 * helpers are in bench/target.c.
 */
#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* ------------------------------------------------------------------ */
/* Stopping                                                            */

volatile sig_atomic_t bench_stop;

static void bench_on_signal(int sig)
{
	bench_stop = sig;
}

/*
 * No SA_RESTART: a blocking read or waitpid returns EINTR so that the
 * caller sees bench_stop promptly.
 */
int bench_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bench_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void bench_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR && !bench_stop)
		;
}

static struct bench_thread *thread_at(void *arr, size_t stride,
				      unsigned int i)
{
	return (struct bench_thread *)((char *)arr + i * stride);
}

int bench_threads_start(void *arr, size_t stride, unsigned int nr,
			void *(*fn)(void *), unsigned int *started)
{
	struct bench_thread *t;
	int err;

	for (; *started < nr; (*started)++) {
		t = thread_at(arr, stride, *started);
		err = pthread_create(&t->th, NULL, fn, t);
		if (err)
			return -err;
	}
	return 0;
}

int bench_threads_stop(bool *stop, void *arr, size_t stride, unsigned int nr,
		       int err, const char *what, char *why, size_t len)
{
	struct bench_thread *t;
	unsigned int i;

	__atomic_store_n(stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < nr; i++) {
		t = thread_at(arr, stride, i);
		pthread_join(t->th, NULL);
		if (!err && t->err) {
			err = t->err;
			snprintf(why, len, "%s: %s", what, strerror(-err));
		}
	}
	return err;
}

int bench_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int err;

	pthread_condattr_init(&attr);
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return -err;
}

/* ------------------------------------------------------------------ */
/* Option values                                                       */

int bench_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	if (*end || !v || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int bench_parse_uint(const char *s, unsigned int min, unsigned int max,
		     unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int bench_parse_list(const char *s, const char *const *names, unsigned int nr,
		     bool *picked, const char **bad)
{
	static char item[64];
	unsigned int i, found = 0;
	size_t len;

	memset(picked, 0, nr * sizeof(*picked));
	while (*s) {
		len = strcspn(s, ",");
		snprintf(item, sizeof(item), "%.*s", (int)len, s);
		for (i = 0; i < nr; i++)
			if (len && !strcmp(item, names[i]))
				break;
		if (i == nr) {
			*bad = item;
			return -EINVAL;
		}
		picked[i] = true;
		found++;
		s += len;
		if (*s == ',')
			s++;
	}
	if (!found) {
		*bad = "(empty list)";
		return -EINVAL;
	}
	return 0;
}

void bench_fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "kMGT";
	int i;

	for (i = 3; i >= 0; i--) {
		if (v && !(v % (1ull << (10 * (i + 1))))) {
			snprintf(buf, len, "%llu%c",
				 (unsigned long long)(v >> (10 * (i + 1))),
				 units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* ------------------------------------------------------------------ */
/* Command lines                                                       */

#define BENCH_MAX_OPTS	40
#define OPT_VAL_BASE	256
#define OPT_VAL_HELP	255
#define OPT_VAL_QUIET	254

bool bench_quiet;

static bool opts_json_stdout(const struct bench_cmdline *cl);

void bench_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "uflush-bench %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static unsigned int nr_opts(const struct bench_opt *opts)
{
	unsigned int n = 0;

	while (opts[n].name)
		n++;
	return n;
}

/* What a value of o must be, said from its bounds when o->want is NULL. */
static const char *opt_want(const struct bench_opt *o, char *buf,
			    size_t len)
{
	char lo[24], hi[24];

	if (o->want)
		return o->want;
	if (o->type == BENCH_OPT_UINT) {
		if (o->max >= UINT32_MAX)
			snprintf(buf, len, ">= %llu",
				 (unsigned long long)o->min);
		else
			snprintf(buf, len, "%llu..%llu",
				 (unsigned long long)o->min,
				 (unsigned long long)o->max);
		return buf;
	}
	bench_fmt_size(hi, sizeof(hi), o->max);
	if (o->align && o->min > o->align) {
		/* "--dev-size 1M": the minimum matters more than the unit */
		bench_fmt_size(lo, sizeof(lo), o->min);
		snprintf(buf, len, "a size from %s to %s", lo, hi);
		bench_fmt_size(lo, sizeof(lo), o->align);
		snprintf(buf + strlen(buf), len - strlen(buf),
			 ", a multiple of %s", lo);
		return buf;
	}
	bench_fmt_size(lo, sizeof(lo), o->align ? o->align : o->min);
	snprintf(buf, len, "%s%s%s%s", o->align ? "a multiple of " : "a size >= ",
		 lo, o->max < UINT64_MAX ? ", at most " : "",
		 o->max < UINT64_MAX ? hi : "");
	return buf;
}

/* --dev A,B: each path is added to the list. */
static int opt_strv(const char *cmd, const struct bench_opt *o,
		    const char *arg, FILE *err)
{
	struct bench_strv *sv = o->dest;
	size_t len;

	while (*arg) {
		len = strcspn(arg, ",");
		if (!len || len >= sizeof(sv->buf[0])) {
			fprintf(err, "uflush-bench %s: bad --%s '%s' (want PATH[,PATH...])\n",
				cmd, o->name, arg);
			return -EINVAL;
		}
		if (sv->n == BENCH_STRV_MAX) {
			fprintf(err, "uflush-bench %s: at most %d --%s paths\n",
				cmd, BENCH_STRV_MAX, o->name);
			return -E2BIG;
		}
		snprintf(sv->buf[sv->n], sizeof(sv->buf[0]), "%.*s",
			 (int)len, arg);
		sv->v[sv->n] = sv->buf[sv->n];
		sv->n++;
		arg += len;
		if (*arg == ',')
			arg++;
	}
	return 0;
}

/* One option's value into its dest; a message on err if it is bad. */
static int opt_value(const char *cmd, const struct bench_opt *o,
		     const char *arg, FILE *err)
{
	const char *bad = arg;
	char want[96];
	unsigned int u;
	uint64_t v;

	switch (o->type) {
	case BENCH_OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case BENCH_OPT_STR:
		*(const char **)o->dest = arg;
		return 0;
	case BENCH_OPT_UINT:
		if (!bench_parse_uint(arg, o->min, o->max, &u) &&
		    (!o->scale || u <= UINT32_MAX / o->scale)) {
			*(unsigned int *)o->dest = o->scale ? u * o->scale : u;
			return 0;
		}
		break;
	case BENCH_OPT_STRV:
		return opt_strv(cmd, o, arg, err);
	case BENCH_OPT_ALIAS:
		return -EINVAL;
	case BENCH_OPT_SIZE:
		if (!bench_parse_size(arg, &v) && v >= o->min && v <= o->max &&
		    (!o->align || !(v % o->align))) {
			*(uint64_t *)o->dest = v;
			return 0;
		}
		break;
	case BENCH_OPT_PAGES:
		if (!bench_parse_size(arg, &v) && v >= o->min && v <= o->max &&
		    !(v % 4096) && v / 4096 <= UINT32_MAX) {
			*(unsigned int *)o->dest = (unsigned int)(v / 4096);
			return 0;
		}
		break;
	case BENCH_OPT_LIST:
		if (!bench_parse_list(arg, o->names, o->nr, o->dest, &bad))
			return 0;
		fprintf(err, "uflush-bench %s: bad --%s item '%s' (want %s)\n",
			cmd, o->name, bad, o->want);
		return -EINVAL;
	}
	fprintf(err, "uflush-bench %s: bad --%s '%s' (want %s)\n", cmd, o->name,
		arg, opt_want(o, want, sizeof(want)));
	return -EINVAL;
}

/* The option an old name stands for (itself if it is not one). */
static const struct bench_opt *opt_target(const struct bench_opt *opts,
					  const struct bench_opt *o)
{
	const struct bench_opt *t;

	if (o->type != BENCH_OPT_ALIAS)
		return o;
	for (t = opts; t->name; t++)
		if (!strcmp(t->name, o->now) && t->type != BENCH_OPT_ALIAS)
			return t;
	return NULL;
}

static void build_longopts(const struct bench_opt *opts, unsigned int n,
			   struct option *lo)
{
	const struct bench_opt *t;
	unsigned int i;

	for (i = 0; i < n; i++) {
		t = opt_target(opts, &opts[i]);
		lo[i].name = opts[i].name;
		lo[i].has_arg = !t || t->type == BENCH_OPT_FLAG ?
				no_argument : required_argument;
		lo[i].flag = NULL;
		lo[i].val = OPT_VAL_BASE + i;
	}
	lo[n] = (struct option){ "help", no_argument, NULL, OPT_VAL_HELP };
	lo[n + 1] = (struct option){ "quiet", no_argument, NULL,
				     OPT_VAL_QUIET };
	lo[n + 2] = (struct option){ NULL, 0, NULL, 0 };
}

/* What getopt_long refused (opterr is off: the messages are ours). */
static int opt_refused(const struct bench_cmdline *cl, int c,
		       const char *word, FILE *err)
{
	const struct bench_opt *o = NULL;

	if (optopt >= OPT_VAL_BASE)
		o = &cl->opts[optopt - OPT_VAL_BASE];
	if (c == ':' && o)
		fprintf(err, "uflush-bench %s: --%s needs a value (%s)\n",
			cl->cmd, o->name, o->arg ? o->arg : "?");
	else if (o || optopt == OPT_VAL_HELP || optopt == OPT_VAL_QUIET)
		fprintf(err, "uflush-bench %s: --%s takes no value ('%s')\n",
			cl->cmd, o ? o->name :
			optopt == OPT_VAL_HELP ? "help" : "quiet", word);
	else
		fprintf(err, "uflush-bench %s: unknown option '%s' ('uflush-bench help %s' lists them)\n",
			cl->cmd, word, cl->cmd);
	return -EINVAL;
}

int bench_opts_parse(const struct bench_cmdline *cl, int argc, char **argv,
		     FILE *out, FILE *err)
{
	struct option lo[BENCH_MAX_OPTS + 3];
	unsigned int n = nr_opts(cl->opts);
	const struct bench_opt *o;
	int c;

	if (n > BENCH_MAX_OPTS)
		return -E2BIG;
	build_longopts(cl->opts, n, lo);
	opterr = 0;
	optind = 0;	/* 0: glibc starts over, also mid-word */
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		if (c == OPT_VAL_HELP) {
			bench_opts_usage(cl, out);
			return 1;
		}
		if (c == OPT_VAL_QUIET) {
			bench_quiet = true;
			continue;
		}
		if (c < OPT_VAL_BASE)
			return opt_refused(cl, c, argv[optind - 1], err);
		o = &cl->opts[c - OPT_VAL_BASE];
		if (o->now)
			fprintf(err, "uflush-bench %s: note: --%s is now --%s (the old name still works)\n",
				cl->cmd, o->name, o->now);
		o = opt_target(cl->opts, o);
		if (!o)
			return -EINVAL;	/* a table naming no option */
		if (o->given)
			*o->given = true;
		if (opt_value(cl->cmd, o, optarg, err))
			return -EINVAL;
	}
	if (out == stdout && opts_json_stdout(cl) && bench_json_to_stdout())
		return -EIO;
	if (cl->rest) {
		*cl->rest = optind;
		return 0;
	}
	if (optind < argc) {
		fprintf(err, "uflush-bench %s: unexpected argument '%s'\n",
			cl->cmd, argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* Is the "json" option "-"? */
static bool opts_json_stdout(const struct bench_cmdline *cl)
{
	const struct bench_opt *o;
	const char *v;

	for (o = cl->opts; o->name; o++) {
		if (strcmp(o->name, "json") || o->type != BENCH_OPT_STR ||
		    !o->dest)
			continue;
		v = *(const char **)o->dest;
		return v && !strcmp(v, "-");
	}
	return false;
}

static int json_stdout_fd = -1;

int bench_json_to_stdout(void)
{
	if (json_stdout_fd >= 0)
		return 0;
	fflush(stdout);
	json_stdout_fd = dup(STDOUT_FILENO);
	if (json_stdout_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return -errno;
	return 0;
}

int bench_opts_main(const struct bench_cmdline *cl, int argc, char **argv)
{
	int err = bench_opts_parse(cl, argc, argv, stdout, stderr);

	return err ? (err > 0 ? 0 : 2) : -1;
}

#define HELP_COL	21

/* "  --name ARG" then the help lines in a column (or below, if long). */
static void usage_opt(const struct bench_opt *o, FILE *f)
{
	const char *h = o->help, *nl;
	int w;

	if (o->now)
		return;		/* an old name: works, but is not offered */
	w = fprintf(f, "  --%s%s%s", o->name, o->arg ? " " : "",
		    o->arg ? o->arg : "");
	if (w >= HELP_COL - 1) {
		fputc('\n', f);
		w = 0;
	}
	for (;;) {
		nl = strchr(h, '\n');
		fprintf(f, "%*s%.*s\n", HELP_COL - w, "",
			(int)(nl ? nl - h : (long)strlen(h)), h);
		if (!nl)
			break;
		h = nl + 1;
		w = 0;
	}
}

void bench_opts_usage(const struct bench_cmdline *cl, FILE *f)
{
	const struct bench_opt *o;

	fprintf(f, "usage: uflush-bench %s [OPTIONS]%s%s\n\n%s\n", cl->cmd,
		cl->args ? " " : "", cl->args ? cl->args : "", cl->about);
	for (o = cl->opts; o->name; o++)
		usage_opt(o, f);
	fprintf(f, "  --quiet%*sno progress lines on stderr\n", HELP_COL - 9, "");
	if (cl->epilog)
		fprintf(f, "\n%s", cl->epilog);
}

void bench_log_keep(void *priv, int level, const char *msg)
{
	struct bench_log *l = priv;
	size_t room = sizeof(l->text) - l->len;
	int n;

	(void)level;
	n = snprintf(l->text + l->len, room, "%s%s%s%s",
		     l->len && l->sep ? l->sep : "",
		     l->prefix ? l->prefix : "", msg, l->end ? l->end : "");
	if (n > 0)
		l->len += (size_t)n < room ? (size_t)n : room - 1;
}

int bench_grow(void *arrp, size_t *cap, size_t nr, size_t size,
	       size_t first)
{
	size_t n = *cap ? *cap * 2 : first;
	void *arr, *p;

	if (nr < *cap)
		return 0;
	memcpy(&arr, arrp, sizeof(arr));
	p = realloc(arr, n * size);
	if (!p)
		return -ENOMEM;
	memcpy(arrp, &p, sizeof(p));
	*cap = n;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Statistics                                                          */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double *sorted_copy(const double *v, unsigned int n)
{
	double *s = malloc(n * sizeof(*s));

	if (!s)
		return NULL;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return s;
}

void bench_stats(const double *v, unsigned int n, struct bench_stats *st)
{
	double *s;

	memset(st, 0, sizeof(*st));
	if (!n)
		return;
	s = sorted_copy(v, n);
	if (!s)
		return;
	st->n = n;
	st->min = s[0];
	st->max = s[n - 1];
	st->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
}

double bench_quantile(const double *v, unsigned int n, double q)
{
	double *s, r;

	if (!n)
		return 0;
	s = sorted_copy(v, n);
	if (!s)
		return 0;
	r = s[(size_t)((n - 1) * q)];
	free(s);
	return r;
}

void bench_samples_add(struct bench_samples *s, double v)
{
	if (s->n < BENCH_MAX_REPS)
		s->v[s->n++] = v;
}

void bench_samples_stats(const struct bench_samples *s,
			 struct bench_stats *st)
{
	bench_stats(s->v, s->n, st);
}

double bench_samples_median(const struct bench_samples *s)
{
	struct bench_stats st;

	bench_stats(s->v, s->n, &st);
	return st.median;
}

void bench_samples_gather(struct bench_samples *s, const void *recs,
			  unsigned int n, size_t stride, size_t off)
{
	const char *p = recs;
	double v;

	s->n = 0;
	for (; s->n < n && s->n < BENCH_MAX_REPS; p += stride) {
		memcpy(&v, p + off, sizeof(v));
		s->v[s->n++] = v;
	}
}

double bench_ratio(const struct bench_samples *a,
		   const struct bench_samples *b)
{
	double m = bench_samples_median(b);

	if (!a->n || !b->n || !(m > 0))
		return NAN;
	return bench_samples_median(a) / m;
}

/* ------------------------------------------------------------------ */
/* Schedule                                                            */

unsigned int bench_sched_case(const struct bench_sched *s, unsigned int rep,
			      unsigned int i)
{
	return s->rotate ? (rep + i) % s->nr_cases : i;
}

double bench_eta(double elapsed, double done, double total, bool secs)
{
	if (done > 0)
		return elapsed * (total - done) / done;
	if (secs)
		return total > elapsed ? total - elapsed : 0;
	return NAN;
}

void bench_fmt_secs(char *buf, size_t len, double secs)
{
	unsigned long s;

	if (isnan(secs) || secs < 0) {
		snprintf(buf, len, "?");
		return;
	}
	s = (unsigned long)(secs + 0.5);
	if (s >= 3600)
		snprintf(buf, len, "%luh%02lum", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, len, "%lum%02lus", s / 60, s % 60);
	else
		snprintf(buf, len, "%lus", s);
}

unsigned int bench_progress_ms = 5000;
FILE *bench_progress_file;

/* What the ticker thread reads while the schedule runs. */
struct sched_progress {
	const struct bench_sched *s;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool over;
	bool secs;			/* the weights are estimated seconds */
	double done, total;		/* weights: est. seconds, or runs */
	unsigned int run, runs;		/* the run going on, of runs */
	uint64_t t0;
};

static FILE *progress_file(void)
{
	return bench_progress_file ? bench_progress_file : stderr;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double case_weight(const struct sched_progress *p, unsigned int c)
{
	return p->secs ? p->s->est_secs(p->s->priv, c) : 1;
}

static void progress_line(struct sched_progress *p)
{
	double el = (mono_ns() - p->t0) / 1e9;
	char e[24], left[24];

	bench_fmt_secs(e, sizeof(e), el);
	bench_fmt_secs(left, sizeof(left),
		       bench_eta(el, p->done, p->total, p->secs));
	fprintf(progress_file(), "uflush-bench%s%s: %s elapsed, run %u/%u, ETA %s\n",
		p->s->cmd ? " " : "", p->s->cmd ? p->s->cmd : "", e,
		p->run, p->runs, left);
	fflush(progress_file());
}

static void *progress_fn(void *arg)
{
	struct sched_progress *p = arg;
	struct timespec ts;
	uint64_t next;

	pthread_mutex_lock(&p->lock);
	while (!p->over) {
		next = mono_ns() + bench_progress_ms * 1000000ull;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		while (!p->over && mono_ns() < next)
			pthread_cond_timedwait(&p->cond, &p->lock, &ts);
		if (!p->over)
			progress_line(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The runs and, if every case has an estimate, their seconds. */
static void progress_init(struct sched_progress *p,
			  const struct bench_sched *s)
{
	unsigned int c;
	char est[24];

	memset(p, 0, sizeof(*p));
	p->s = s;
	pthread_mutex_init(&p->lock, NULL);
	bench_cond_init(&p->cond);
	p->secs = s->est_secs != NULL;
	for (c = 0; c < s->nr_cases; c++) {
		if (s->cases[c].skipped)
			continue;
		if (p->secs && !(s->est_secs(s->priv, c) > 0))
			p->secs = false;
		p->runs += s->reps;
	}
	for (c = 0; c < s->nr_cases; c++)
		if (!s->cases[c].skipped)
			p->total += case_weight(p, c) * s->reps;
	p->t0 = mono_ns();
	if (bench_quiet)
		return;
	bench_fmt_secs(est, sizeof(est), p->secs ? p->total : NAN);
	fprintf(progress_file(), "uflush-bench%s%s: %u runs (%u reps of %u), ETA %s%s\n",
		s->cmd ? " " : "", s->cmd ? s->cmd : "", p->runs,
		s->reps, s->nr_cases, est,
		p->secs ? " (the runs' own time, setup not counted)" :
			  " (known after the first run)");
}

/* Run ci in repetition rep; a case skipped takes its later runs along. */
static int sched_one(const struct bench_sched *s, struct sched_progress *p,
		     unsigned int ci, unsigned int rep)
{
	struct bench_case *c = &s->cases[ci];
	double w = case_weight(p, ci);
	int err;

	if (c->skipped)
		return 0;
	pthread_mutex_lock(&p->lock);
	p->run++;
	pthread_mutex_unlock(&p->lock);
	err = s->run(s->priv, ci, rep);
	pthread_mutex_lock(&p->lock);
	p->done += w;
	if (err == BENCH_SKIP && !bench_stop)
		p->total -= w * (s->reps - rep - 1);
	pthread_mutex_unlock(&p->lock);
	if (bench_stop)
		return 0;
	if (err == BENCH_SKIP) {
		c->skipped = true;
		return 0;
	}
	if (err)
		return err;
	c->runs++;
	return 0;
}

int bench_sched_run(const struct bench_sched *s)
{
	struct sched_progress p;
	unsigned int rep, i, ci;
	pthread_t th;
	bool ticker;
	int err = 0;

	progress_init(&p, s);
	ticker = !bench_quiet && !pthread_create(&th, NULL, progress_fn, &p);
	for (rep = 0; rep < s->reps && !bench_stop && !err; rep++) {
		for (i = 0; i < s->nr_cases && !bench_stop && !err; i++) {
			ci = bench_sched_case(s, rep, i);
			err = sched_one(s, &p, ci, rep);
		}
	}
	pthread_mutex_lock(&p.lock);
	p.over = true;
	pthread_cond_signal(&p.cond);
	pthread_mutex_unlock(&p.lock);
	if (ticker)
		pthread_join(th, NULL);
	pthread_cond_destroy(&p.cond);
	pthread_mutex_destroy(&p.lock);
	return err;
}

/* ------------------------------------------------------------------ */
/* Tables                                                              */

void bench_table_col(struct bench_table *t, const char *heading)
{
	unsigned int c = t->nr_cols;

	if (c >= BENCH_TABLE_MAX_COLS)
		return;
	t->right[c] = heading[0] == '>';
	snprintf(t->head[c], BENCH_CELL_LEN, "%s", heading + t->right[c]);
	t->nr_cols++;
}

void bench_table_init(struct bench_table *t, const char *const *headings,
		      unsigned int nr)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < nr; i++)
		bench_table_col(t, headings[i]);
}

int bench_table_row(struct bench_table *t)
{
	if (t->nr_rows >= BENCH_TABLE_MAX_ROWS)
		return -ENOSPC;
	memset(t->cell[t->nr_rows], 0, sizeof(t->cell[0]));
	return t->nr_rows++;
}

void bench_table_set(struct bench_table *t, unsigned int row,
		     unsigned int col, const char *fmt, ...)
{
	va_list ap;

	if (row >= t->nr_rows || col >= t->nr_cols)
		return;
	va_start(ap, fmt);
	vsnprintf(t->cell[row][col], BENCH_CELL_LEN, fmt, ap);
	va_end(ap);
}

void bench_fmt_num(char *buf, size_t len, double v)
{
	snprintf(buf, len, v >= 100 ? "%.0f" : "%.1f", v);
}

void bench_table_stats(struct bench_table *t, unsigned int row,
		       unsigned int col, const struct bench_stats *st)
{
	char mid[24], lo[24], hi[24];

	bench_fmt_num(mid, sizeof(mid), st->median);
	bench_fmt_num(lo, sizeof(lo), st->min);
	bench_fmt_num(hi, sizeof(hi), st->max);
	bench_table_set(t, row, col, "%s", mid);
	bench_table_set(t, row, col + 1, "%s-%s", lo, hi);
}

void bench_table_ratio(struct bench_table *t, unsigned int row,
		       unsigned int col, double ratio)
{
	if (isnan(ratio))
		bench_table_set(t, row, col, "-");
	else
		bench_table_set(t, row, col, "%.2f", ratio);
}

static void table_line(const struct bench_table *t, const unsigned int *w,
		       const char (*cells)[BENCH_CELL_LEN], FILE *f)
{
	char line[BENCH_TABLE_MAX_COLS * (BENCH_CELL_LEN + 2) + 1];
	size_t pos = 0, n;
	unsigned int c;

	for (c = 0; c < t->nr_cols; c++) {
		pos += snprintf(line + pos, sizeof(line) - pos,
				t->right[c] ? "%s%*s" : "%s%-*s",
				c ? "  " : "", (int)w[c], cells[c]);
		if (pos >= sizeof(line))
			pos = sizeof(line) - 1;
	}
	n = pos;
	while (n && line[n - 1] == ' ')
		n--;
	fprintf(f, "%.*s\n", (int)n, line);
}

void bench_table_print(const struct bench_table *t, FILE *f)
{
	unsigned int w[BENCH_TABLE_MAX_COLS] = { 0 }, r, c, total = 0;

	for (c = 0; c < t->nr_cols; c++) {
		w[c] = strlen(t->head[c]);
		for (r = 0; r < t->nr_rows; r++)
			if (strlen(t->cell[r][c]) > w[c])
				w[c] = strlen(t->cell[r][c]);
		total += w[c] + (c ? 2 : 0);
	}
	table_line(t, w, t->head, f);
	for (c = 0; c < total; c++)
		fputc('-', f);
	fputc('\n', f);
	for (r = 0; r < t->nr_rows; r++)
		table_line(t, w, t->cell[r], f);
}

/* ------------------------------------------------------------------ */
/* JSON output                                                         */

void bench_json_members(struct bench_json *j, const char *const *keys,
			const double *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		bench_json_num(j, keys[i], v[i]);
}

void bench_json_policies(struct bench_json *j, const char *const *names,
			 const char (*policy)[512], unsigned int n)
{
	char key[64];
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "policy_%s", names[i]);
		bench_json_str(j, key, policy[i]);
	}
}

void bench_json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void bench_json_init(struct bench_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

/* The separator, the indentation and the key of the next value. */
static void json_key(struct bench_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	if (key) {
		bench_json_escape(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct bench_json *j, const char *key, char ch)
{
	json_key(j, key);
	fputc(ch, j->f);
	if (j->depth + 1 < BENCH_JSON_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
	j->close[j->depth] = ch == '{' ? '}' : ']';
}

void bench_json_obj(struct bench_json *j, const char *key)
{
	json_open(j, key, '{');
}

void bench_json_arr(struct bench_json *j, const char *key)
{
	json_open(j, key, '[');
}

/* Close the innermost object or array. */
void bench_json_end(struct bench_json *j)
{
	bool empty = j->first[j->depth];
	char ch = j->close[j->depth];

	if (!j->depth)
		return;
	j->depth--;
	if (!empty)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(ch, j->f);
}

void bench_json_str(struct bench_json *j, const char *key, const char *s)
{
	json_key(j, key);
	bench_json_escape(j->f, s ? s : "");
}

static void json_double(FILE *f, double v)
{
	if (!isfinite(v))
		fputs("null", f);
	else if (v == (double)(long long)v && fabs(v) < 1e15)
		fprintf(f, "%lld", (long long)v);
	else
		fprintf(f, "%.4f", v);
}

void bench_json_num(struct bench_json *j, const char *key, double v)
{
	json_key(j, key);
	json_double(j->f, v);
}

void bench_json_u64(struct bench_json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void bench_json_int(struct bench_json *j, const char *key, long long v)
{
	json_key(j, key);
	fprintf(j->f, "%lld", v);
}

void bench_json_bool(struct bench_json *j, const char *key, bool v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void bench_json_null(struct bench_json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

void bench_json_nums(struct bench_json *j, const char *key, const double *v,
		     unsigned int n)
{
	unsigned int i;

	json_key(j, key);
	fputc('[', j->f);
	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", j->f);
		json_double(j->f, v[i]);
	}
	fputc(']', j->f);
}

void bench_json_ulongs(struct bench_json *j, const char *key,
		       const unsigned long *v, unsigned int n)
{
	unsigned int i;

	json_key(j, key);
	fputc('[', j->f);
	for (i = 0; v && i < n; i++)
		fprintf(j->f, "%s%lu", i ? ", " : "", v[i]);
	fputc(']', j->f);
}

void bench_json_stats(struct bench_json *j, const char *key,
		      const double *v, unsigned int n)
{
	struct bench_stats st;
	char name[64];

	bench_stats(v, n, &st);
	bench_json_nums(j, key, v, n);
	snprintf(name, sizeof(name), "%s_median", key);
	bench_json_num(j, name, n ? st.median : NAN);
	snprintf(name, sizeof(name), "%s_min", key);
	bench_json_num(j, name, n ? st.min : NAN);
	snprintf(name, sizeof(name), "%s_max", key);
	bench_json_num(j, name, n ? st.max : NAN);
}

void bench_json_samples(struct bench_json *j, const char *key,
			const struct bench_samples *s)
{
	bench_json_stats(j, key, s->v, s->n);
}

int bench_json_create(struct bench_json *j, const char *cmd,
		      const char *path)
{
	FILE *f;

	if (!strcmp(path, "-") && json_stdout_fd >= 0)
		f = fdopen(dup(json_stdout_fd), "w");
	else if (!strcmp(path, "-"))
		f = fdopen(dup(STDOUT_FILENO), "w");
	else
		f = fopen(path, "w");
	if (!f) {
		bench_err(cmd, "cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	bench_json_init(j, f);
	bench_json_obj(j, NULL);
	bench_json_str(j, "benchmark", cmd);
	return 0;
}

int bench_json_finish(struct bench_json *j, const char *cmd,
		      const char *path)
{
	while (j->depth)
		bench_json_end(j);
	fputc('\n', j->f);
	if (fclose(j->f)) {
		bench_err(cmd, "writing %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* A JSON navigator (bench/harness.h)                                  */

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *skip_string(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p == '"' ? p + 1 : NULL;
}

static const char *skip_value(const char *p, unsigned int depth);

/* p at '{' or '['; returns past the matching close. */
static const char *skip_container(const char *p, unsigned int depth)
{
	char close = *p == '{' ? '}' : ']';
	bool obj = *p == '{';

	p = ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (obj) {
			if (*p != '"' || !(p = skip_string(p)))
				return NULL;
			p = ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = skip_value(ws(p), depth + 1);
		if (!p)
			return NULL;
		p = ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
		p = ws(p);
	}
}

static const char *skip_value(const char *p, unsigned int depth)
{
	if (depth > 64)
		return NULL;
	p = ws(p);
	if (*p == '"')
		return skip_string(p);
	if (*p == '{' || *p == '[')
		return skip_container(p, depth);
	if (!*p || *p == ',' || *p == '}' || *p == ']')
		return NULL;
	while (*p && !strchr(",}] \t\r\n", *p))
		p++;
	return p;
}

/* Past the value at p and the comma after it, if any; NULL if malformed. */
static const char *next_item(const char *p)
{
	p = skip_value(p, 0);
	if (!p)
		return NULL;
	p = ws(p);
	return *p == ',' ? ws(p + 1) : p;
}

/* p at an object; the value of member key, or NULL. */
const char *bench_jget(const char *p, const char *key)
{
	size_t klen = strlen(key);
	const char *k;
	bool match;

	if (!p || *(p = ws(p)) != '{')
		return NULL;
	p = ws(p + 1);
	while (*p == '"') {
		k = p + 1;
		p = skip_string(p);
		if (!p)
			return NULL;
		match = (size_t)(p - 1 - k) == klen && !strncmp(k, key, klen);
		p = ws(p);
		if (*p++ != ':')
			return NULL;
		p = ws(p);
		if (match)
			return p;
		p = next_item(p);
		if (!p)
			return NULL;
	}
	return NULL;
}

/* p at an array; element idx, or NULL. */
const char *bench_jindex(const char *p, unsigned int idx)
{
	if (!p || *(p = ws(p)) != '[')
		return NULL;
	p = ws(p + 1);
	while (*p && *p != ']') {
		if (!idx--)
			return p;
		p = next_item(p);
		if (!p)
			return NULL;
	}
	return NULL;
}

int bench_jnum(const char *p, double *v)
{
	char *end;

	if (!p)
		return -ENOENT;
	p = ws(p);
	if (!strncmp(p, "null", 4)) {
		*v = NAN;
		return 0;
	}
	*v = strtod(p, &end);
	return end == p ? -EINVAL : 0;
}

int bench_jstr(const char *p, char *buf, size_t len)
{
	size_t n = 0;

	if (!p)
		return -ENOENT;
	p = ws(p);
	if (*p != '"')
		return -EINVAL;
	for (p++; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			if (*p == 'n')
				buf[n < len - 1 ? n++ : n] = '\n';
			else if (*p == 't')
				buf[n < len - 1 ? n++ : n] = '\t';
			else if (*p == 'u' && p[1] && p[2] && p[3] && p[4])
				p += 4, buf[n < len - 1 ? n++ : n] = '?';
			else
				buf[n < len - 1 ? n++ : n] = *p;
			continue;
		}
		if (n < len - 1)
			buf[n++] = *p;
	}
	buf[n] = '\0';
	return *p == '"' ? 0 : -EINVAL;
}

/* ------------------------------------------------------------------ */
/* SHA-256 (FIPS 180-4), for the plugins a result names                */

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR32(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t *h, const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
	unsigned int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 64; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^
			(w[i - 15] >> 3)) +
		       (ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^
			(w[i - 2] >> 10));
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; k = h[7];
	for (i = 0; i < 64; i++) {
		t1 = k + (ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25)) +
		     ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
		t2 = (ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		k = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void bench_sha256(const void *data, size_t len, char hex[65])
{
	uint32_t h[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};
	const unsigned char *p = data;
	unsigned char tail[128];
	uint64_t bits = (uint64_t)len * 8;
	size_t i, rest, n;

	for (i = 0; i + 64 <= len; i += 64)
		sha_block(h, p + i);
	rest = len - i;
	memset(tail, 0, sizeof(tail));
	memcpy(tail, p + i, rest);
	tail[rest] = 0x80;
	n = rest < 56 ? 64 : 128;	/* the length goes in the last 8 */
	for (i = 0; i < 8; i++)
		tail[n - 1 - i] = (unsigned char)(bits >> (8 * i));
	sha_block(h, tail);
	if (n == 128)
		sha_block(h, tail + 64);
	for (i = 0; i < 8; i++)
		snprintf(hex + 8 * i, 9, "%08x", h[i]);
}

int bench_sha256_file(const char *path, char hex[65])
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int err = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (len == cap) {
			char *p = realloc(buf, cap ? 2 * cap : 1 << 16);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			buf = p;
			cap = cap ? 2 * cap : 1 << 16;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (!n) {
			err = ferror(f) ? -EIO : 0;
			break;
		}
	}
	fclose(f);
	if (!err)
		bench_sha256(buf ? buf : "", len, hex);
	free(buf);
	return err;
}

int bench_check_policy(const char *cmd, const char *spec, char *resolved,
		       size_t len)
{
	char buf[1024];
	int err;

	err = uf_policy_resolve(spec, resolved ? resolved : buf,
				resolved ? len : sizeof(buf));
	if (err)
		bench_err(cmd, "bad policy \"%s\": %s", spec ? spec : "(default)",
			  strerror(-err));
	return err;
}
