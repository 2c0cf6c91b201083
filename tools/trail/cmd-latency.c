/* SPDX-License-Identifier: MIT */
/*
 * cmd-latency.c - `trail timerlat top|hist` and `trail osnoise top|hist`:
 * the kernel's timerlat and osnoise tracers for what a process sees
 * (latency.c measures), printed in rtla's layouts (tools/tracing/rtla:
 * the same titles, columns and widths, `ESC c` before each refresh of a
 * top, the histogram's over/count/min/avg/max rows) so that a reader of
 * rtla's output reads these. Where tracefs is writable the kernel's own
 * events fill in what user space cannot see (kattr.c, read live by the
 * measuring threads: timerlat's IRQ columns, osnoise's interference);
 * elsewhere it is said, not invented: timerlat's IRQ columns show rtla's
 * "-", osnoise counts from /proc, and a line says so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <trail/uevent.h>

#include "../../src/session/session.h"
#include "kattr.h"
#include "latency.h"
#include "opt.h"
#include "tool.h"

enum {
	O_DMA = OPT_LONG_ID, O_NO_HEADER, O_NO_SUMMARY, O_NO_INDEX, O_WITH_ZEROS,
};

#define COMMON_ROWS                                                                                \
	{'d', "duration", OPT_REQUIRED, "TIME",                                                    \
	 "stop after TIME (s, m, h, d; default: until Ctrl-C)", 0, "a time"},                      \
	{'c', "cpus", OPT_REQUIRED, "LIST", "the CPUs to measure (0-3,5; default: all)", 0,      \
	 "a CPU list"},                                                                            \
	{'P', "priority", OPT_REQUIRED, "o:NICE|r:PRIO|f:PRIO",                                  \
	 "the measuring threads' scheduling", 0, "a policy"},                                      \
	{0, "dma-latency", OPT_REQUIRED, "US",                                                     \
	 "hold /dev/cpu_dma_latency at US meanwhile", O_DMA, "microseconds"},                      \
	{'q', "quiet", OPT_NONE, NULL, "top: print only at the end", 0, NULL},                    \
	{'b', "bucket-size", OPT_REQUIRED, "N", "hist: a bucket's width, us (default 1)", 0,       \
	 "a width"},                                                                               \
	{'E', "entries", OPT_REQUIRED, "N", "hist: buckets (default 256)", 0, "a count"},          \
	{0, "no-header", OPT_NONE, NULL, "hist: without its header", O_NO_HEADER, NULL},          \
	{0, "no-summary", OPT_NONE, NULL, "hist: without count, min, avg, max", O_NO_SUMMARY,     \
	 NULL},                                                                                    \
	{0, "no-index", OPT_NONE, NULL, "hist: without the index column (with --with-zeros)",      \
	 O_NO_INDEX, NULL},                                                                        \
	{0, "with-zeros", OPT_NONE, NULL, "hist: the empty buckets too", O_WITH_ZEROS, NULL},     \
	OPT_HELP_ROW

static const struct opt_cmd timerlat_opts = {
	.name = "timerlat",
	.intro = "Usage: trail timerlat [top|hist] [OPTIONS]\n"
		 "\n"
		 "The kernel's timerlat tracer for what a program sees: a thread per CPU\n"
		 "sleeps until a time on the monotonic clock, PERIOD apart, and takes how\n"
		 "late it woke (rtla timerlat's thread latency). top: a table refreshed every\n"
		 "second; hist: a histogram at the end. In rtla's layouts; exit status 2\n"
		 "when -T stopped it. `trail record -p timerlat [-- OPTIONS]` records each\n"
		 "sample as a timerlat:timerlat event.\n",
	.col = 30,
	.opts = (const struct opt[]){
		{'p', "period", OPT_REQUIRED, "US", "the timer's period (100..1000000, default 1000)", 0,
		 "microseconds"},
		{'T', "thread", OPT_REQUIRED, "US", "stop when a thread latency reaches US", 0,
		 "microseconds"},
		{'i', "irq", OPT_REQUIRED, "US",
		 "stop when an IRQ latency reaches US (the kernel's\n"
		 "events: tracefs writable)", 0, "microseconds"},
		{'a', "auto", OPT_REQUIRED, "US",
		 "stop when a thread latency reaches US, and say\n"
		 "what delayed it: the kernel's events, where tracefs\n"
		 "is writable (rtla's auto-analysis)", 0, "microseconds"},
		{'n', "nano", OPT_NONE, NULL, "in nanoseconds", 0, NULL},
		COMMON_ROWS,
		{0},
	},
};

static const struct opt_cmd osnoise_opts = {
	.name = "osnoise",
	.intro = "Usage: trail osnoise [top|hist] [OPTIONS]\n"
		 "\n"
		 "The kernel's osnoise tracer for what a program sees: a thread per CPU\n"
		 "reads the clock in a loop for RUNTIME of every PERIOD; a gap longer than\n"
		 "the threshold is noise. top: per CPU, noise, CPU available, the largest\n"
		 "gap, and the interference seen from user space (the CPU's interrupts,\n"
		 "NMIs and softirqs, the thread's preemptions; HW: gaps none of those\n"
		 "explain); hist: the gaps' histogram. In rtla's layouts. `trail record\n"
		 "-p osnoise [-- OPTIONS]` records each window as an osnoise:osnoise event.\n",
	.col = 30,
	.opts = (const struct opt[]){
		{'p', "period", OPT_REQUIRED, "US", "a window (default 1000000)", 0, "microseconds"},
		{'r', "runtime", OPT_REQUIRED, "US", "measured of each window (default: all of it)", 0,
		 "microseconds"},
		{'T', "threshold", OPT_REQUIRED, "US", "the smallest gap that is noise (default 5)", 0,
		 "microseconds"},
		{'s', "stop", OPT_REQUIRED, "US", "stop when a single gap passes US", 0, "microseconds"},
		{'S', "stop-total", OPT_REQUIRED, "US", "stop when a window's noise passes US", 0,
		 "microseconds"},
		COMMON_ROWS,
		{0},
	},
};

static volatile sig_atomic_t interrupted;

static void ka_stop(void *arg)
{
	kattr_stop(arg);
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* rtla's duration: "D HH:MM:SS", days in 3 columns */
static void duration(uint64_t ns, char *buf, size_t n)
{
	uint64_t s = ns / 1000000000ull;

	snprintf(buf, n, "%3u %02u:%02u:%02u", (unsigned)(s / 86400), (unsigned)(s / 3600 % 24),
		 (unsigned)(s / 60 % 60), (unsigned)(s % 60));
}

/* rtla's -d: a number, then s, m, h or d */
static int parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	unsigned long v;
	uint64_t mul = 1;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || !v)
		return -1;
	if (*end == 'm' || *end == 'M')
		mul = 60;
	else if (*end == 'h' || *end == 'H')
		mul = 3600;
	else if (*end == 'd' || *end == 'D')
		mul = 86400;
	else if (*end && *end != 's' && *end != 'S')
		return -1;
	if (*end && end[1])
		return -1;
	*ns = (uint64_t)v * mul * 1000000000ull;
	return 0;
}

/* "0-3,5": 0, or the offset of the first bad byte + 1 */
static size_t parse_cpus(const char *s, struct lat_opts *o)
{
	const char *p = s;

	o->ncpus = 0;
	while (*p) {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			return (size_t)(p - s) + 1;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return (size_t)(end - s) + 2;
			b = strtoul(end + 1, &end, 10);
			if (b < a)
				return (size_t)(p - s) + 1;
		}
		if (b >= LAT_MAX_CPUS)
			return (size_t)(p - s) + 1;
		for (unsigned long c = a; c <= b; c++) {
			int dup = 0;

			for (int k = 0; k < o->ncpus; k++)
				dup |= o->cpus[k] == (int)c;
			if (!dup && o->ncpus < LAT_MAX_CPUS)
				o->cpus[o->ncpus++] = (int)c;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return (size_t)(end - s) + 1;
		p = end;
	}
	return o->ncpus ? 0 : 1;
}

static int parse_prio(const char *s, struct lat_opts *o)
{
	char *end;
	long v;

	if ((s[0] == 'd' || s[0] == 'D') && s[1] == ':')
		return -2; /* SCHED_DEADLINE */
	if (!s[0] || s[1] != ':')
		return -1;
	v = strtol(s + 2, &end, 10);
	if (end == s + 2 || *end)
		return -1;
	switch (s[0]) {
	case 'o': case 'O':
		if (v < -20 || v > 19)
			return -1;
		o->policy = SCHED_OTHER;
		o->prio = (int)v; /* (a nice value) */
		return 0;
	case 'f': case 'F':
	case 'r': case 'R':
		if (v < 1 || v > 99)
			return -1;
		o->policy = s[0] == 'f' || s[0] == 'F' ? SCHED_FIFO : SCHED_RR;
		o->prio = (int)v;
		return 0;
	}
	return -1;
}

struct view {
	int tracer, top, quiet, nano, no_header, no_summary, no_index, with_zeros;
	uint32_t bucket, entries;
};

static uint64_t unit(const struct view *v, uint64_t ns)
{
	return v->nano ? ns : ns / 1000;
}

/* ------------------------------------------------------------- timerlat */

static void timerlat_top(const struct view *v, struct lat_run *r, FILE *f)
{
	static const char no_value[] = "        -";
	const char *u = v->nano ? "ns" : "us";
	uint64_t tc = 0, tmin = UINT64_MAX, tmax = 0, tsum = 0;
	uint64_t ic = 0, imin = UINT64_MAX, imax = 0, isum = 0;
	char d[32], a[4][16];
	int e = 0;

	if (!v->quiet)
		fputs("\033c", f);
	duration(lat_now() - r->t0, d, sizeof(d));
	fprintf(f, "                                     Timer Latency                                              \n");
	fprintf(f, "%-6s   |          IRQ Timer Latency (%s)        |         Thread Timer Latency (%s)\n", d,
		u, u);
	fprintf(f, "CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max\n");
	for (int i = 0; i < r->o.ncpus; i++) {
		const struct lat_cpu *c = &r->c[i];
		uint64_t n = __atomic_load_n(&c->count, __ATOMIC_RELAXED);

		if (!n)
			continue;
		if (c->irq_count) {
			uint64_t in = __atomic_load_n(&c->irq_count, __ATOMIC_RELAXED);

			snprintf(a[0], sizeof(a[0]), "%9llu", (unsigned long long)unit(v, c->irq_cur));
			snprintf(a[1], sizeof(a[1]), "%9llu", (unsigned long long)unit(v, c->irq_min));
			snprintf(a[2], sizeof(a[2]), "%9llu", (unsigned long long)unit(v, c->irq_sum / in));
			snprintf(a[3], sizeof(a[3]), "%9llu", (unsigned long long)unit(v, c->irq_max));
			ic += in;
			isum += c->irq_sum;
			imin = c->irq_min < imin ? c->irq_min : imin;
			imax = c->irq_max > imax ? c->irq_max : imax;
		} else {
			for (int k = 0; k < 4; k++)
				snprintf(a[k], sizeof(a[k]), "%s", no_value);
		}
		fprintf(f, "%3d #%-9llu |%s %s %s %s |", c->cpu, (unsigned long long)n, a[0], a[1], a[2],
			a[3]);
		fprintf(f, "%9llu %9llu %9llu %9llu\n", (unsigned long long)unit(v, c->cur),
			(unsigned long long)unit(v, c->min), (unsigned long long)unit(v, c->sum / n),
			(unsigned long long)unit(v, c->max));
		tc += n;
		tsum += c->sum;
		tmin = c->min < tmin ? c->min : tmin;
		tmax = c->max > tmax ? c->max : tmax;
	}
	if (tc) {
		uint64_t k = tc;

		while (k > 999999) {
			k /= 10;
			e++;
		}
		fprintf(f, "%.*s|%.*s|%.*s\n", 15, "----------------------------------------", 40,
			"----------------------------------------", 39,
			"----------------------------------------");
		if (ic) {
			snprintf(a[1], sizeof(a[1]), "%9llu", (unsigned long long)unit(v, imin));
			snprintf(a[2], sizeof(a[2]), "%9llu", (unsigned long long)unit(v, isum / ic));
			snprintf(a[3], sizeof(a[3]), "%9llu", (unsigned long long)unit(v, imax));
		} else {
			for (int k = 1; k < 4; k++)
				snprintf(a[k], sizeof(a[k]), "%s", no_value);
		}
		fprintf(f, "ALL #%-6llu e%d |          %s %s %s |", (unsigned long long)k, e, a[1], a[2],
			a[3]);
		fprintf(f, "          %9llu %9llu %9llu\n", (unsigned long long)unit(v, tmin),
			(unsigned long long)unit(v, tsum / tc), (unsigned long long)unit(v, tmax));
	}
	fflush(f);
}

/* one column of a histogram: a CPU's thread (or osnoise) samples, or
 * its IRQ ones */
struct hcol {
	int cpu, irq;
	const uint64_t *hist;
	uint64_t over, count, min, sum, max;
};

static void hist_rows(const struct view *v, const struct lat_run *r, FILE *f, int osnoise)
{
	struct hcol *col = calloc((size_t)r->o.ncpus * 2 + 1, sizeof(*col));
	char d[32];
	int n = 0, irq = 0;

	if (!col)
		return;
	for (int i = 0; i < r->o.ncpus; i++) {
		const struct lat_cpu *c = &r->c[i];

		if (!__atomic_load_n(&c->count, __ATOMIC_RELAXED) && !v->with_zeros)
			continue;
		if (c->irq_hist) { /* (timerlat, the kernel's events read: rtla's IRQ column) */
			col[n++] = (struct hcol){c->cpu, 1, c->irq_hist, c->irq_over, c->irq_count, c->irq_min,
						 c->irq_sum, c->irq_max};
			irq = 1;
		}
		col[n++] = (struct hcol){c->cpu, 0, c->hist, c->over, c->count, c->min, c->sum, c->max};
	}
	duration(lat_now() - r->t0, d, sizeof(d));
	if (!v->no_header) {
		fprintf(f, "# RTLA %s histogram\n", osnoise ? "osnoise" : "timerlat");
		fprintf(f, "# Time unit is %s (%s)\n", v->nano ? "nanoseconds" : "microseconds",
			v->nano ? "ns" : "us");
		fprintf(f, "# Duration: %s\n", d);
		if (!v->no_index)
			fputs("Index", f);
		for (int k = 0; k < n; k++)
			fprintf(f, osnoise ? "   CPU-%03d" : col[k].irq ? "   IRQ-%03d" : "   Thr-%03d", col[k].cpu);
		fputc('\n', f);
	}
	for (uint32_t b = 0; b < v->entries; b++) {
		uint64_t total = 0;

		for (int k = 0; k < n; k++)
			total += col[k].hist[b];
		if (!total && !v->with_zeros)
			continue;
		if (!v->no_index)
			fprintf(f, "%-6u", b * v->bucket);
		for (int k = 0; k < n; k++)
			fprintf(f, "%9llu ", (unsigned long long)col[k].hist[b]);
		fputc('\n', f);
	}
	if (!v->no_index)
		fputs("over: ", f);
	for (int k = 0; k < n; k++)
		fprintf(f, "%9llu ", (unsigned long long)col[k].over);
	fputc('\n', f);
	if (v->no_summary) {
		free(col);
		return;
	}
	for (int row = 0; row < 4; row++) {
		static const char *const label[] = {"count:", "min:  ", "avg:  ", "max:  "};

		if (!v->no_index)
			fputs(label[row], f);
		for (int k = 0; k < n; k++) {
			const struct hcol *c = &col[k];

			if (row == 0)
				fprintf(f, "%9llu ", (unsigned long long)c->count);
			else if (!c->count)
				fprintf(f, "%9c ", '-');
			else if (row == 1)
				fprintf(f, "%9llu ", (unsigned long long)unit(v, c->min));
			else if (row == 2 && osnoise)
				fprintf(f, "%9.2f ", (double)c->sum / (double)c->count / (v->nano ? 1 : 1000.0));
			else if (row == 2)
				fprintf(f, "%9llu ", (unsigned long long)unit(v, c->sum / c->count));
			else
				fprintf(f, "%9llu ", (unsigned long long)unit(v, c->max));
		}
		fputc('\n', f);
	}
	if (!osnoise) { /* ALL: the IRQ column (where read) and the thread's */
		uint64_t tc[2] = {0}, tmin[2] = {UINT64_MAX, UINT64_MAX}, tmax[2] = {0}, tsum[2] = {0};

		for (int k = 0; k < n; k++) {
			const struct hcol *c = &col[k];
			int x = c->irq;

			if (!c->count)
				continue;
			tc[x] += c->count;
			tsum[x] += c->sum;
			tmin[x] = c->min < tmin[x] ? c->min : tmin[x];
			tmax[x] = c->max > tmax[x] ? c->max : tmax[x];
		}
		fprintf(f, "%s%s       Thr\n", v->no_index ? "" : "ALL:  ", irq ? "      IRQ" : "");
		for (int row = 0; row < 4; row++) {
			static const char *const label[] = {"count:", "min:  ", "avg:  ", "max:  "};

			if (row && !tc[0] && !tc[1])
				break;
			fputs(v->no_index ? "" : label[row], f);
			for (int x = irq ? 1 : 0; x >= 0; x--) {
				uint64_t val = row == 0 ? tc[x] : !tc[x] ? 0 : row == 1 ? unit(v, tmin[x])
					     : row == 2 ? unit(v, tsum[x] / tc[x]) : unit(v, tmax[x]);

				if (row && !tc[x])
					fprintf(f, "%9c ", '-');
				else
					fprintf(f, "%9llu ", (unsigned long long)val);
			}
			fputc('\n', f);
		}
	}
	free(col);
}

/* -------------------------------------------------------------- osnoise */

static void osnoise_top(const struct view *v, struct lat_run *r, FILE *f)
{
	char d[32];

	if (!v->quiet)
		fputs("\033c", f);
	duration(lat_now() - r->t0, d, sizeof(d));
	fprintf(f, "%42s%s%39s%35s\n", "", "Operating System Noise", "", "");
	fprintf(f, "duration: %9s | time is in us\n", d);
	fprintf(f, "CPU Period       Runtime        Noise  %% CPU Aval   Max Noise   Max Single          HW          NMI          IRQ      Softirq       Thread\n");
	for (int i = 0; i < r->o.ncpus; i++) {
		const struct lat_cpu *c = &r->c[i];
		uint64_t rt = __atomic_load_n(&c->runtime, __ATOMIC_RELAXED) / 1000, no = c->noise / 1000, p;

		if (!rt)
			continue;
		p = (rt > no ? rt - no : 0) * 10000000ull / rt;
		fprintf(f, "%3d #%-6llu %12llu ", c->cpu, (unsigned long long)c->windows, (unsigned long long)rt);
		fprintf(f, "%12llu ", (unsigned long long)no);
		fprintf(f, "  %3llu.%05llu", (unsigned long long)(p / 100000), (unsigned long long)(p % 100000));
		fprintf(f, "%12llu %12llu", (unsigned long long)(c->max_noise / 1000),
			(unsigned long long)(c->max_single / 1000));
		fprintf(f, "%12llu %12llu %12llu %12llu %12llu\n", (unsigned long long)c->hw,
			(unsigned long long)c->nmi, (unsigned long long)c->irq, (unsigned long long)c->softirq,
			(unsigned long long)c->thread);
	}
	fflush(f);
}

/* ---------------------------------------------------- trail record -p */

/*
 * `trail record -p timerlat|osnoise [OPTIONS] [-- TRACER OPTIONS]`: the
 * recording of `trail TRACER emit TRACER OPTIONS`, whose measuring
 * threads write each sample as an event (timerlat:timerlat,
 * osnoise:osnoise: the kernel's fields) through trail/uevent.h of the
 * libtrail the recorder preloads; `trail report` prints them in the
 * kernel's layouts ("#58508 context thread timer_latency 106167 ns").
 */
int latency_record(struct trail_session *S, char **cmd, char ***out)
{
	static char self[PATH_MAX];
	int n = 0, osn = !strcmp(S->tracer, "osnoise");
	char **v;
	ssize_t k;

	if (S->npids || S->all) {
		tool_usage_err("record", "-p %s records trail's own measuring threads: no -P or -a "
			       "(its options after --)", S->tracer);
		return EXIT_USAGE;
	}
	if ((k = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return 1;
	self[k] = '\0';
	while (cmd && cmd[n])
		n++;
	if (!(v = calloc((size_t)n + 4, sizeof(*v))))
		return 1;
	v[0] = self;
	v[1] = osn ? "osnoise" : "timerlat";
	v[2] = "emit";
	memcpy(v + 3, cmd, (size_t)n * sizeof(*v));
	/* (the session owns it: freed with it) */
	if (!trail_session_keep(S, (char *)v))
		return 1;
	*out = v;
	S->tracer = NULL;
	S->allow_unknown = 1;
	return trail_session_event(S, osn ? "osnoise:osnoise" : "timerlat:timerlat");
}

struct emit {
	struct trail_uevent *ev;
	int (*write)(struct trail_uevent *, const struct trail_uvalue *, unsigned);
};

static void emit_sample(void *arg, int cpu, uint64_t seq, uint64_t value, const uint64_t *w)
{
	struct emit *e = arg;
	struct trail_uvalue v[8];

	(void)cpu;
	if (!w) { /* timerlat: seqnum, context (1: thread), timer_latency */
		v[0].u = seq;
		v[1].i = 1;
		v[2].u = value;
		e->write(e->ev, v, 3);
		return;
	}
	v[0].u = w[OSN_RUNTIME];
	v[1].u = w[OSN_NOISE];
	v[2].u = w[OSN_MAX_SINGLE];
	v[3].u = w[OSN_HW];
	v[4].u = w[OSN_NMI];
	v[5].u = w[OSN_IRQ];
	v[6].u = w[OSN_SOFTIRQ];
	v[7].u = w[OSN_THREAD];
	e->write(e->ev, v, 8);
}

/* timerlat: the sample's IRQ context record (context 0), before its
 * thread's */
static void emit_irq(void *arg, int cpu, uint64_t seq, uint64_t value)
{
	struct emit *e = arg;
	struct trail_uvalue v[3];

	(void)cpu;
	v[0].u = seq;
	v[1].i = 0;
	v[2].u = value;
	e->write(e->ev, v, 3);
}

static int emit_setup(enum lat_tracer tracer, struct emit *e)
{
	struct trail_uevent *(*mk)(const char *, const char *, struct trail_uevent_err *);
	struct trail_uevent_err err;

	*(void **)&mk = dlsym(RTLD_DEFAULT, "trail_uevent_new");
	*(void **)&e->write = dlsym(RTLD_DEFAULT, "trail_uevent_write");
	if (!mk || !e->write) {
		tool_err("%s emit: the samples are written through libtrail: run it as `trail record "
			 "-p %s`", tracer == LAT_TIMERLAT ? "timerlat" : "osnoise",
			 tracer == LAT_TIMERLAT ? "timerlat" : "osnoise");
		return -1;
	}
	e->ev = tracer == LAT_TIMERLAT
			? mk("timerlat", "timerlat u64 seqnum; s32 context; u64 timer_latency", &err)
			: mk("osnoise", "osnoise u64 runtime; u64 noise; u64 max_sample; u32 hw_count; "
					"u32 nmi_count; u32 irq_count; u32 softirq_count; u32 thread_count", &err);
	return e->ev ? 0 : -1;
}

/* ----------------------------------------------------------------- main */

static int run(int argc, char **argv, enum lat_tracer tracer)
{
	const struct opt_cmd *cmd = tracer == LAT_TIMERLAT ? &timerlat_opts : &osnoise_opts;
	struct view v = {.tracer = tracer, .top = 1, .bucket = 1, .entries = 256};
	struct lat_opts o = {.tracer = tracer};
	uint64_t dur = 0, t;
	struct opt_parser op;
	struct lat_run r;
	unsigned long u;
	char why[256];
	int id, dma = -1, cpus_given = 0, rc = 0;
	long dma_us = -1;
	const char *name = cmd->name;

	o.period_ns = tracer == LAT_TIMERLAT ? 1000000ull : 1000000000ull;
	o.thresh_ns = 5000;
	o.policy = tracer == LAT_TIMERLAT ? SCHED_FIFO : SCHED_OTHER;
	o.prio = tracer == LAT_TIMERLAT ? 95 : 0;
	struct emit em = {0};
	struct kattr ka = {0}, kl = {0};
	int emit = 0, aa = 0, ka_on = 0;

	if (argc > 1 && (!strcmp(argv[1], "top") || !strcmp(argv[1], "hist") ||
			 !strcmp(argv[1], "emit"))) {
		v.top = argv[1][0] == 't';
		emit = argv[1][0] == 'e';
		argv++;
		argc--;
	}
	opt_init(&op, cmd, argc, argv);
	while ((id = opt_next(&op)) != OPT_END) {
		switch (id) {
		case OPT_EXIT:
			return op.status;
		case 'd':
			if (parse_duration(optarg, &dur)) {
				tool_usage_err(name, "-d %s: not a duration (a number, then s, m, h or d)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c': {
			size_t bad = parse_cpus(optarg, &o);

			if (bad) {
				tool_caret(name, optarg, bad - 1, "not a CPU list (0-3,5)");
				return EXIT_USAGE;
			}
			cpus_given = 1;
			break;
		}
		case 'P': {
			int pr = parse_prio(optarg, &o);

			if (pr == -2) {
				tool_err("%s: -P %s: SCHED_DEADLINE is not supported here (o:NICE, r:PRIO, "
					 "f:PRIO)", name, optarg);
				return EXIT_USAGE;
			}
			if (pr) {
				tool_usage_err(name, "-P %s: o:NICE (-20..19), r:PRIO or f:PRIO (1..99)", optarg);
				return EXIT_USAGE;
			}
			break;
		}
		case 'p':
		case 'r':
		case 'i':
		case 'T':
		case 's':
		case 'S':
		case O_DMA:
			if (tool_parse_ulong(optarg, NULL, id == O_DMA ? 0 : 1,
					     id == O_DMA ? 10000 : 10000000, &u)) {
				tool_usage_err(name, "%s %s: out of range", id == O_DMA ? "--dma-latency"
					       : (char[]){'-', (char)id, 0}, optarg);
				return EXIT_USAGE;
			}
			if (id == 'p') {
				if (tracer == LAT_TIMERLAT && (u < 100 || u > 1000000)) {
					tool_usage_err(name, "-p %s: a period from 100 to 1000000 us (the timer "
						       "cannot wake a thread reliably more often)", optarg);
					return EXIT_USAGE;
				}
				o.period_ns = u * 1000ull;
			} else if (id == 'r') {
				if (u < 100) {
					tool_usage_err(name, "-r %s: a runtime of at least 100 us", optarg);
					return EXIT_USAGE;
				}
				o.runtime_ns = u * 1000ull;
			} else if (id == 'T') {
				if (tracer == LAT_TIMERLAT)
					o.stop_ns = u * 1000ull;
				else
					o.thresh_ns = u * 1000ull;
			} else if (id == 'i') {
				o.stop_irq_ns = u * 1000ull;
			} else if (id == 's') {
				o.stop_ns = u * 1000ull;
			} else if (id == 'S') {
				o.stop_total_ns = u * 1000ull;
			} else {
				dma_us = (long)u;
			}
			break;
		case 'a':
			if (tool_parse_ulong(optarg, NULL, 1, 10000000, &u)) {
				tool_usage_err(name, "-a %s: out of range", optarg);
				return EXIT_USAGE;
			}
			o.stop_ns = u * 1000ull;
			aa = 1;
			break;
		case 'n': v.nano = 1; break;
		case 'q': v.quiet = 1; break;
		case 'b':
		case 'E':
			if (tool_parse_ulong(optarg, NULL, id == 'b' ? 1 : 10, id == 'b' ? 999999 : 9999999,
					     &u)) {
				tool_usage_err(name, "-%c %s: out of range", id, optarg);
				return EXIT_USAGE;
			}
			if (id == 'b')
				v.bucket = (uint32_t)u;
			else
				v.entries = (uint32_t)u;
			break;
		case O_NO_HEADER: v.no_header = 1; break;
		case O_NO_SUMMARY: v.no_summary = 1; break;
		case O_NO_INDEX: v.no_index = 1; break;
		case O_WITH_ZEROS: v.with_zeros = 1; break;
		}
	}
	if (optind < argc) {
		tool_usage_err(name, "unexpected '%s' (top or hist come first)", argv[optind]);
		return EXIT_USAGE;
	}
	if (v.no_index && !v.with_zeros) {
		tool_usage_err(name, "--no-index needs --with-zeros (else the rows cannot be told apart)");
		return EXIT_USAGE;
	}
	if (!o.runtime_ns || o.runtime_ns > o.period_ns)
		o.runtime_ns = tracer == LAT_OSNOISE && o.runtime_ns > o.period_ns ? 0 : o.period_ns;
	if (!o.runtime_ns) {
		tool_usage_err(name, "-r: the runtime cannot be longer than the period");
		return EXIT_USAGE;
	}
	if (!cpus_given) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set))
			CPU_ZERO(&set);
		for (int c = 0; c < CPU_SETSIZE && o.ncpus < LAT_MAX_CPUS; c++)
			if (CPU_ISSET(c, &set))
				o.cpus[o.ncpus++] = c;
	}
	if (emit) {
		if (emit_setup(tracer, &em))
			return 1;
		o.sample = emit_sample;
		o.irq_sample = emit_irq;
		o.arg = &em;
		v.quiet = 1;
	}
	o.bucket_ns = v.bucket * (v.nano ? 1u : 1000u);
	o.entries = v.top ? 0 : v.entries;
	if (dma_us >= 0) {
		int32_t val = (int32_t)dma_us;

		dma = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
		if (dma < 0 || write(dma, &val, sizeof(val)) != sizeof(val)) {
			tool_err("%s: --dma-latency: /dev/cpu_dma_latency: %s", name, strerror(errno));
			if (dma >= 0)
				close(dma);
			return 1;
		}
	}
	if (aa && tracer == LAT_TIMERLAT) {
		if (kattr_start(&ka, o.cpus, o.ncpus))
			tool_warn("%s: -a: the kernel's events are not read (%s): the thread latency "
				  "alone", name, ka.why);
		else
			ka_on = 1;
		o.on_stop = ka_stop;
		o.stop_arg = &ka;
	}
	/* the kernel's events read live where tracefs lets us: timerlat's
	 * IRQ latency, osnoise's interference */
	if (!kattr_start_named(&kl, tracer == LAT_TIMERLAT ? "timerlat-live" : "osnoise", o.cpus,
			       o.ncpus))
		o.live = &kl;
	else if (o.stop_irq_ns) {
		tool_err("%s: -i: the IRQ latency is read from the kernel's events, which are not "
			 "readable here (%s)", name, kl.why);
		kattr_free(&ka);
		if (dma >= 0)
			close(dma);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if ((rc = lat_start(&r, &o, why, sizeof(why)))) {
		kattr_free(&ka);
		kattr_free(&kl);
		tool_err("%s: %s", name, rc == -EINVAL || rc == -EAGAIN ? why : strerror(-rc));
		lat_free(&r);
		if (dma >= 0)
			close(dma);
		return rc == -EINVAL ? EXIT_USAGE : 1;
	}
	for (t = lat_now(); !interrupted && !__atomic_load_n(&r.stop, __ATOMIC_RELAXED) &&
			    (!dur || lat_now() - r.t0 < dur);) {
		struct timespec ts = {0, 50000000};

		nanosleep(&ts, NULL);
		if (v.top && !v.quiet && lat_now() - t >= 1000000000ull) {
			t = lat_now();
			if (tracer == LAT_TIMERLAT)
				timerlat_top(&v, &r, stdout);
			else
				osnoise_top(&v, &r, stdout);
		}
		for (int i = 0; i < o.ncpus; i++)
			if (r.c[i].failed) {
				lat_stop(&r);
				tool_err("%s: %s", name, r.c[i].why);
				lat_free(&r);
				return 1;
			}
	}
	lat_stop(&r);
	if (emit)
		; /* (the samples are the recording's) */
	else if (v.top && tracer == LAT_TIMERLAT)
		timerlat_top(&v, &r, stdout);
	else if (v.top)
		osnoise_top(&v, &r, stdout);
	else
		hist_rows(&v, &r, stdout, tracer == LAT_OSNOISE);
	if (r.stopped_cpu >= 0) {
		printf("%s hit stop tracing\n", name);
		printf("  CPU %d: %s of %.2f us\n", r.stopped_cpu,
		       tracer == LAT_OSNOISE ? "noise" : r.stopped_irq ? "IRQ latency" : "thread latency",
		       (double)r.stopped_value / 1000.0);
		rc = 2;
		if (aa && tracer == LAT_TIMERLAT && r.stopped_due) {
			if (ka_on)
				kattr_analyze(&ka, r.stopped_cpu, r.stopped_due, r.stopped_woke, r.stopped_tid,
					      stdout);
			else
				printf("## CPU %d hit stop tracing ##\n  Thread latency: %37s %9.2f us (100%%) "
				       "(the kernel's events not read: %s)\n", r.stopped_cpu, "",
				       (r.stopped_woke - r.stopped_due) / 1000.0, ka.why);
		}
	}
	kattr_free(&ka);
	kattr_free(&kl);
	if (r.prio_note)
		tool_warn("%s: the threads run at the default priority: %s not allowed (CAP_SYS_NICE or "
			  "an RLIMIT_RTPRIO, or -P o:0)", name,
			  o.policy == SCHED_FIFO ? "SCHED_FIFO" : o.policy == SCHED_RR ? "SCHED_RR" : "the nice value");
	if (!o.live && tracer == LAT_TIMERLAT && !emit)
		fprintf(stderr, "trail: timerlat: IRQ columns: the timer interrupt's latency is read from "
			"the kernel's local_timer_entry events, which are not readable here (%s); the "
			"thread latency is measured here\n", kl.why);
	else if (!o.live && !emit)
		fprintf(stderr, "trail: osnoise: HW NMI IRQ Softirq Thread: counted from /proc (the "
			"kernel's events are not readable here: %s): HW is a lower bound\n", kl.why);
	lat_free(&r);
	if (dma >= 0)
		close(dma);
	return rc;
}

int cmd_timerlat(int argc, char **argv)
{
	return run(argc, argv, LAT_TIMERLAT);
}

int cmd_osnoise(int argc, char **argv)
{
	return run(argc, argv, LAT_OSNOISE);
}
