/* SPDX-License-Identifier: MIT */
/*
 * kattr.c - what delayed a timerlat thread, from the kernel's own events
 * where it lets trail read them (tracefs writable: root or the tracing
 * group): rtla's auto-analysis (-a) for trail timerlat. A tracefs
 * instance of trail's own (instances/trail-timerlat-PID, removed at the
 * end; the user's top-level settings untouched) records, on the measured
 * CPUs and on the monotonic clock (trace_clock mono: the samples' clock),
 * the local timer interrupt, the interrupt handlers, softirqs, NMIs and
 * context switches. When a sample crosses the threshold the instance
 * stops, and that CPU's records between the timer's due time and the
 * thread's wake-up are read back: the timer interrupt's latency, then
 * each interference with its duration, in rtla's layout. TRAIL_TRACEFS
 * names tracefs where it is mounted elsewhere.
 */
#include "kattr.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const events[] = {
	"irq_vectors", /* (the local timer's, IPIs', irq_work's... entries and exits) */
	"irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_entry", "irq/softirq_exit",
	"nmi/nmi_handler", "sched/sched_switch",
};

static int put(const char *dir, const char *file, const char *v)
{
	char p[600];
	int fd, r;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	if ((fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
		return -errno;
	r = write(fd, v, strlen(v)) == (ssize_t)strlen(v) ? 0 : -errno;
	close(fd);
	return r;
}

int kattr_start(struct kattr *k, const int *cpus, int ncpus)
{
	return kattr_start_named(k, "timerlat", cpus, ncpus);
}

int kattr_start_named(struct kattr *k, const char *name, const int *cpus, int ncpus)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	const char *root = NULL;
	char mask[300] = "", p[600];
	uint64_t words[16] = {0};
	int n = 0;

	const char *env = getenv("TRAIL_TRACEFS");

	memset(k, 0, sizeof(*k));
	for (int i = 0; i < 2 && !root; i++) {
		const char *d = env && *env ? env : roots[i];

		snprintf(p, sizeof(p), "%s/instances", d);
		if (!access(p, W_OK))
			root = d;
	}
	if (!root) {
		snprintf(k->why, sizeof(k->why), "tracefs is not mounted at %.150s, or not writable "
			 "(root or the tracing group)", env && *env ? env : "/sys/kernel/tracing");
		return -1;
	}
	snprintf(k->dir, sizeof(k->dir), "%s/instances/trail-%s-%d", root, name, (int)getpid());
	if (mkdir(k->dir, 0700) && errno != EEXIST) {
		snprintf(k->why, sizeof(k->why), "%.180s: %s", k->dir, strerror(errno));
		return -1;
	}
	k->made = 1;
	for (int i = 0; i < ncpus; i++)
		if (cpus[i] < 1024)
			words[cpus[i] / 64] |= 1ull << (cpus[i] % 64);
	/* tracing_cpumask: 32-bit hex words, highest first, comma-separated */
	for (int w = 31; w >= 0; w--) {
		uint32_t v = (uint32_t)(words[w / 2] >> (w % 2 ? 32 : 0));

		if (v || n || !w)
			n += snprintf(mask + n, sizeof(mask) - (size_t)n, "%s%08x", n ? "," : "", v);
	}
	if (put(k->dir, "trace_clock", "mono") || put(k->dir, "buffer_size_kb", "2048") ||
	    put(k->dir, "tracing_cpumask", mask)) {
		snprintf(k->why, sizeof(k->why), "%.180s: its settings cannot be written", k->dir);
		return -1;
	}
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(p, sizeof(p), "events/%s/enable", events[i]);
		put(k->dir, p, "1"); /* (an event this kernel lacks: its part is not seen) */
	}
	put(k->dir, "tracing_on", "1");
	k->ok = 1;
	return 0;
}

void kattr_stop(struct kattr *k)
{
	if (k->ok)
		put(k->dir, "tracing_on", "0");
}

void kattr_free(struct kattr *k)
{
	if (k->made)
		rmdir(k->dir); /* (busy: left as it is) */
	k->made = k->ok = 0;
}

/* one line of a per_cpu trace: "comm-pid [cpu] flags ts: event: fields" */
struct line {
	uint64_t ts;
	char ev[48];
	const char *f; /* the fields */
};

static int parse(char *s, struct line *l)
{
	char *br = strstr(s, "] "), *colon, *ev;
	unsigned long long sec, us;

	if (!br || s[0] == '#')
		return -1;
	br += 2;
	while (*br && *br != ' ')
		br++; /* (the flags) */
	if (sscanf(br, " %llu.%llu:", &sec, &us) != 2)
		return -1;
	if (!(colon = strchr(br, ':')))
		return -1;
	ev = colon + 2;
	if (!(colon = strchr(ev, ':')))
		return -1;
	snprintf(l->ev, sizeof(l->ev), "%.*s", (int)(colon - ev), ev);
	l->f = colon + 2;
	l->ts = sec * 1000000000ull + us * 1000ull;
	return 0;
}

static const char *field(const char *f, const char *name, char *out, size_t n)
{
	const char *p = strstr(f, name);
	size_t k = 0;

	out[0] = '\0';
	if (!p)
		return NULL;
	p += strlen(name);
	while (p[k] && p[k] != ' ' && p[k] != '\n' && k + 1 < n) {
		out[k] = p[k];
		k++;
	}
	out[k] = '\0';
	return out;
}

struct item {
	char name[48];
	uint64_t start, dur;
};

static void add(struct item *v, int *n, const char *name, uint64_t start, uint64_t dur)
{
	if (*n < 64) {
		snprintf(v[*n].name, sizeof(v[0].name), "%s", name);
		v[*n].start = start;
		v[(*n)++].dur = dur;
	}
}

static void block(FILE *out, const char *what, int pad, const struct item *v, int n, uint64_t total)
{
	uint64_t sum = 0;

	for (int i = 0; i < n; i++)
		sum += v[i].dur;
	if (!n)
		return;
	fprintf(out, "  %s %*s %9.2f us (%.2f %%)\n", what, pad, "", sum / 1000.0,
		total ? sum * 100.0 / (double)total : 0);
	for (int i = 0; i < n; i++)
		fprintf(out, "  %24s %24s %9.2f us\n", v[i].name, "", v[i].dur / 1000.0);
}

void kattr_analyze(struct kattr *k, int cpu, uint64_t due, uint64_t woke, long tid, FILE *out)
{
	char p[640], buf[1024], x[64], y[64];
	struct item irq[64], sirq[64], nmi[64], thr[64];
	int nirq = 0, nsirq = 0, nnmi = 0, nthr = 0;
	uint64_t timer = 0, irq_open[256] = {0}, sirq_open[16] = {0}, timer_in = 0, run_start = 0;
	char run_comm[64] = "", blocking[80] = "";
	uint64_t total = woke > due ? woke - due : 0;
	FILE *f;

	fprintf(out, "## CPU %d hit stop tracing, analyzing it ##\n", cpu);
	snprintf(p, sizeof(p), "%s/per_cpu/cpu%d/trace", k->dir, cpu);
	if (!k->ok || !(f = fopen(p, "re"))) {
		fprintf(out, "  (the kernel's events of CPU %d cannot be read: %s)\n", cpu,
			k->ok ? strerror(errno) : k->why);
		return;
	}
	while (fgets(buf, sizeof(buf), f)) {
		struct line l;

		if (parse(buf, &l) || l.ts > woke)
			continue;
		/* (the switches from the buffer's start: who runs when the
		 * window opens; the rest only near the window) */
		if (strcmp(l.ev, "sched_switch") && l.ts + 2000000 < due)
			continue;
		if (!strcmp(l.ev, "sched_switch")) {
			char next[64], npid[32];

			field(l.f, "prev_comm=", x, sizeof(x));
			field(l.f, "prev_pid=", y, sizeof(y));
			field(l.f, "next_comm=", next, sizeof(next));
			field(l.f, "next_pid=", npid, sizeof(npid));
			if (run_comm[0] && l.ts > due) {
				uint64_t s = run_start > due ? run_start : due;

				add(thr, &nthr, run_comm, s, l.ts - s);
			}
			if (atol(npid) == tid && !blocking[0] && atol(y) != 0)
				snprintf(blocking, sizeof(blocking), "%s:%s", x, y);
			run_start = l.ts;
			if (atol(npid) != 0 && atol(npid) != tid)
				snprintf(run_comm, sizeof(run_comm), "%s:%s", next, npid);
			else
				run_comm[0] = '\0';
		} else if (!strcmp(l.ev, "local_timer_entry")) {
			timer_in = l.ts;
			if (!timer && l.ts + 20000 >= due)
				timer = l.ts;
		} else if (!strcmp(l.ev, "local_timer_exit") && timer_in && l.ts >= due) {
			add(irq, &nirq, "local_timer:236", timer_in, l.ts - timer_in);
			timer_in = 0;
		} else if (!strcmp(l.ev, "irq_handler_entry")) {
			field(l.f, "irq=", x, sizeof(x));
			if (atoi(x) >= 0 && atoi(x) < 256)
				irq_open[atoi(x)] = l.ts;
		} else if (!strcmp(l.ev, "irq_handler_exit")) {
			int n = atoi(field(l.f, "irq=", x, sizeof(x)) ? x : "-1");

			if (n >= 0 && n < 256 && irq_open[n] && l.ts >= due) {
				char nm[48];

				snprintf(nm, sizeof(nm), "irq:%d", n);
				add(irq, &nirq, nm, irq_open[n], l.ts - irq_open[n]);
			}
			if (n >= 0 && n < 256)
				irq_open[n] = 0;
		} else if (!strcmp(l.ev, "softirq_entry")) {
			int v = atoi(field(l.f, "vec=", x, sizeof(x)) ? x : "-1");

			if (v >= 0 && v < 16)
				sirq_open[v] = l.ts;
		} else if (!strcmp(l.ev, "softirq_exit")) {
			int v = atoi(field(l.f, "vec=", x, sizeof(x)) ? x : "-1");
			const char *a = strstr(l.f, "action=");

			if (v >= 0 && v < 16 && sirq_open[v] && l.ts >= due) {
				char nm[48];

				snprintf(nm, sizeof(nm), "%.*s:%d", a ? (int)strcspn(a + 7, "]") : 1,
					 a ? a + 7 : "?", v);
				add(sirq, &nsirq, nm, sirq_open[v], l.ts - sirq_open[v]);
			}
			if (v >= 0 && v < 16)
				sirq_open[v] = 0;
		} else if (!strcmp(l.ev, "nmi_handler") && l.ts >= due) {
			field(l.f, "delta_ns=", x, sizeof(x));
			add(nmi, &nnmi, "nmi", l.ts, strtoull(x, NULL, 10));
		}
	}
	fclose(f);
	if (timer)
		fprintf(out, "  IRQ latency: %40s %9.2f us\n", "", (timer - due) / 1000.0);
	else
		fprintf(out, "  IRQ latency: %40s %9s (no local timer interrupt recorded)\n", "", "-");
	if (blocking[0])
		fprintf(out, "  Blocking thread:\n  %24s\n", blocking);
	block(out, "NMI interference", 36, nmi, nnmi, total);
	block(out, "IRQ interference", 36, irq, nirq, total);
	block(out, "Softirq interference", 32, sirq, nsirq, total);
	block(out, "Thread interference", 33, thr, nthr, total);
	fprintf(out, "------------------------------------------------------------------------\n");
	fprintf(out, "  Thread latency: %37s %9.2f us (100%%)\n", "", total / 1000.0);
}

/* ----------------------------------------------------------------- live */

int kattr_pipe_open(const struct kattr *k, int cpu, struct kpipe *p)
{
	char path[640];

	p->n = 0;
	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe", k->dir, cpu);
	p->fd = k->ok ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	return p->fd < 0 ? -1 : 0;
}

void kattr_pipe_close(struct kpipe *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

static void classify(char *s, void (*fn)(void *, const struct kevent *), void *arg)
{
	struct line l;
	struct kevent e = {0};
	char x[32];

	if (parse(s, &l))
		return;
	e.ts = l.ts;
	e.kind = KEV_OTHER;
	if (strstr(l.ev, "_entry") && strcmp(l.ev, "softirq_entry")) {
		e.kind = KEV_IRQ;
		e.timer = !strcmp(l.ev, "local_timer_entry");
	} else if (!strcmp(l.ev, "softirq_entry")) {
		e.kind = KEV_SOFTIRQ;
	} else if (!strcmp(l.ev, "nmi_handler")) {
		e.kind = KEV_NMI;
	} else if (!strcmp(l.ev, "sched_switch")) {
		e.kind = KEV_SWITCH;
		e.prev_pid = atol(field(l.f, "prev_pid=", x, sizeof(x)) ? x : "-1");
	}
	if (e.kind != KEV_OTHER)
		fn(arg, &e);
}

void kattr_pipe_read(struct kpipe *p, void (*fn)(void *arg, const struct kevent *ev), void *arg)
{
	for (int rounds = 0; p->fd >= 0 && rounds < 4096; rounds++) {
		ssize_t r = read(p->fd, p->buf + p->n, sizeof(p->buf) - 1 - p->n);
		char *s, *nl;

		if (r <= 0)
			return; /* (EAGAIN: nothing more now) */
		p->n += (size_t)r;
		p->buf[p->n] = '\0';
		for (s = p->buf; (nl = strchr(s, '\n')); s = nl + 1) {
			*nl = '\0';
			classify(s, fn, arg);
		}
		p->n = (size_t)(p->buf + p->n - s);
		if (p->n == sizeof(p->buf) - 1) /* (a line longer than the buffer: dropped) */
			p->n = 0;
		memmove(p->buf, s, p->n);
	}
}
