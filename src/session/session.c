/* SPDX-License-Identifier: MIT */
/*
 * session.c - a session built from parts and checked against itself
 * (session.h); its messages; the spec and the recorder's options it
 * becomes. The checks against the programs' objects are check.c's and
 * dynevents.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/arena.h"
#include "../common/counters.h"
#include "../common/filter.h"
#include "../common/rv.h"
#include "../common/spec.h"
#include "../common/synth.h"
#include "../common/trigger.h"
#include "../recorder/recorder.h"
#include "bconf.h"
#include "internal.h"
#include "probes.h"
#include "synths.h"

/* ------------------------------------------------------------- messages */

static void say(const struct trail_session *S, enum trail_diag_level level, const char *fmt,
		va_list ap)
{
	char msg[2048];
	struct trail_diag_msg m = {.level = level, .msg = msg};

	vsnprintf(msg, sizeof(msg), fmt, ap);
	S->diag->emit(S->diag->ctx, &m);
}

int trail_session_err(const struct trail_session *S, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(S, TRAIL_DIAG_ERR, fmt, ap);
	va_end(ap);
	return TRAIL_SESSION_FAIL;
}

int trail_session_usage(const struct trail_session *S, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(S, TRAIL_DIAG_USAGE, fmt, ap);
	va_end(ap);
	return TRAIL_SESSION_USAGE;
}

void trail_session_warn(const struct trail_session *S, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(S, TRAIL_DIAG_WARN, fmt, ap);
	va_end(ap);
}

void trail_session_note(const struct trail_session *S, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(S, TRAIL_DIAG_NOTE, fmt, ap);
	va_end(ap);
}

int trail_session_caret(const struct trail_session *S, int level, const char *what,
			const char *input, size_t pos, const char *msg)
{
	struct trail_diag_msg m = {.level = (enum trail_diag_level)level, .msg = msg,
				   .what = what, .input = input, .pos = pos};

	S->diag->emit(S->diag->ctx, &m);
	return level == TRAIL_DIAG_USAGE ? TRAIL_SESSION_USAGE : TRAIL_SESSION_FAIL;
}

/* ---------------------------------------------------------------- parts */

void trail_session_init(struct trail_session *S, const struct trail_diag *diag)
{
	memset(S, 0, sizeof(*S));
	S->diag = diag;
	S->output = "trace.dat";
	S->buffer_bytes = (uint64_t)TRAIL_ARENA_DEFAULT_KB * 1024;
	S->chunk_size = TRAIL_CHUNK_DEFAULT;
	S->nest = -1;
}

/* one more pointer at the end of *v (n of them): 0 or -1 */
static int push(void *v, int *n, void *x)
{
	void ***pv = v, **g = realloc(*pv, (size_t)(*n + 1) * sizeof(*g));

	if (!g)
		return -1;
	*pv = g;
	g[(*n)++] = x;
	return 0;
}

int trail__sess_add_event(struct trail_session *S, char *ev)
{
	return push(&S->events, &S->nevents, ev);
}

int trail__sess_add_line(struct trail_session *S, char *line)
{
	return push(&S->funcs, &S->nfuncs, line);
}

static int oom(const struct trail_session *S)
{
	return trail_session_err(S, "out of memory");
}

int trail_session_event(struct trail_session *S, const char *pattern)
{
	const char *why;
	size_t bad = trail__spec_check(pattern, &why);

	if (bad)
		return trail_session_caret(S, TRAIL_DIAG_USAGE, "bad event name", pattern, bad - 1,
					   why);
	return trail__sess_add_event(S, (char *)pattern) ? oom(S) : 0;
}

int trail_session_filter(struct trail_session *S, const char *text)
{
	const char *ev = S->nevents ? S->events[S->nevents - 1] : NULL;
	char *line;

	if (!ev)
		return trail_session_usage(S, "-f '%s': a filter applies to the events of the -e "
					   "before it: give that -e first", text);
	if (strpbrk(text, "\n\r") || strlen(text) >= TRAIL_FILTER_MAX_TEXT)
		return trail_session_usage(S, "-f '%s': one line of at most 1023 bytes", text);
	if (asprintf(&line, "@filter %s %s", ev, text) < 0)
		return oom(S);
	for (int i = 0; i < S->nfilters; i++)
		if (!strncmp(S->filters[i], line, 9 + strlen(ev))) {
			free(line);
			return trail_session_usage(S, "-f '%s': the -e before it has a filter already "
						   "(join them with && or ||)", text);
		}
	if (push(&S->filters, &S->nfilters, line)) {
		free(line);
		return oom(S);
	}
	return 0;
}

int trail_session_trigger(struct trail_session *S, const char *text)
{
	size_t ev = trail_trigger_event(text), off = ev ? ev + 1 : 0, bad;
	const char *pat = ev ? NULL : S->nevents ? S->events[S->nevents - 1] : NULL, *why;
	struct trail_trigger t;
	struct trail_filter_err fe;
	char *line;
	int n = S->ntriggers;
	size_t *to;

	if (!ev && !pat)
		return trail_session_usage(S, "-T '%s': a trigger names its event (SYS:EVENT:TRIGGER) "
					   "or applies to the -e before it: give one", text);
	if (strpbrk(text, "\n\r") || strlen(text) >= TRAIL_FILTER_MAX_TEXT)
		return trail_session_usage(S, "-T '%s': one line of at most 1023 bytes", text);
	if (ev) {
		char p[TRAIL_FILTER_MAX_TEXT];

		memcpy(p, text, ev);
		p[ev] = '\0';
		if ((bad = trail__spec_check(p, &why)))
			return trail_session_caret(S, TRAIL_DIAG_USAGE, "trigger", text, bad - 1, why);
	}
	if (trail_trigger_parse(text + off, &t, &fe))
		return trail_session_caret(S, TRAIL_DIAG_USAGE, "trigger", text,
					   off + (size_t)fe.pos, fe.msg);
	if ((ev ? asprintf(&line, "@trigger %s%.*s %s",
			   memchr(text, ':', ev) ? "" : TRAIL_SYNTH_PROVIDER ":", (int)ev, text,
			   text + off)
		: asprintf(&line, "@trigger %s %s", pat, text)) < 0)
		return oom(S);
	if (!(to = realloc(S->trig_off, (size_t)(n + 1) * sizeof(*to)))) {
		free(line);
		return oom(S);
	}
	S->trig_off = to;
	to[n] = off;
	if (push(&S->trig_args, &n, (void *)text)) {
		free(line);
		return oom(S);
	}
	if (push(&S->triggers, &S->ntriggers, line)) {
		free(line);
		return oom(S);
	}
	S->stacktrace |= t.cmd == TRAIL_TRIG_STACKTRACE;
	S->snapshot |= t.cmd == TRAIL_TRIG_SNAPSHOT;
	S->objtrace |= t.cmd == TRAIL_TRIG_OBJTRACE;
	return 0;
}

/* A list of counters (opt: the option's name; prefixed: each item is
 * counter:NAME or perf:thread:NAME, --context's), each tried on this
 * thread, into v (*n of them, at most 8) */
static int counter_list(struct trail_session *S, const char *opt, const char *text, int prefixed,
			uint8_t *v, int *n)
{
	const struct trail_counter *all;
	size_t cn;

	all = trail_counters(&cn);
	for (const char *p = text; *p;) {
		size_t k = strcspn(p, ","), pre = 0;
		struct perf_event_attr a;
		int c, fd;

		if (prefixed && k > 8 && !strncmp(p, "counter:", 8))
			pre = 8;
		else if (prefixed && k > 12 && !strncmp(p, "perf:thread:", 12))
			pre = 12;
		if (prefixed && !pre)
			return trail_session_caret(S, TRAIL_DIAG_USAGE, opt, text, (size_t)(p - text),
						   "a context is counter:NAME (or perf:thread:NAME)");
		if ((c = trail_counter_find(p + pre, k - pre)) < 0)
			return trail_session_caret(S, TRAIL_DIAG_USAGE, opt, text,
						   (size_t)(p - text) + pre,
						   "Unknown counter (page-faults, minor-faults, major-faults, "
						   "context-switches, cpu-migrations, task-clock, cpu-clock, "
						   "cycles, instructions, cache-references, cache-misses, "
						   "branches, branch-misses)");
		for (int i = 0; i < *n; i++)
			if (v[i] == c)
				return trail_session_caret(S, TRAIL_DIAG_USAGE, opt, text,
							   (size_t)(p - text) + pre, "This counter is already read");
		if (*n == TRAIL_CTR_MAX)
			return trail_session_usage(S, "--%s: at most %d counters", opt, TRAIL_CTR_MAX);
		trail_counter_attr(c, &a);
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return trail_session_err(S, "--%s %s%s: %s", opt, prefixed ? "counter:" : "",
						 all[c].name,
						 errno == ENOENT || errno == EOPNOTSUPP
						 ? "not on this machine (no hardware PMU the kernel exposes: "
						   "a virtual machine often has none; the software counters "
						   "always are)"
						 : errno == EACCES || errno == EPERM
						 ? "not permitted (kernel.perf_event_paranoid: 2 allows a "
						   "process's own counters, 3 and more none)"
						 : strerror(errno));
		close(fd);
		v[(*n)++] = (uint8_t)c;
		p += k;
		if (*p == ',')
			p++;
	}
	return 0;
}

int trail_session_context(struct trail_session *S, const char *ctx)
{
	return counter_list(S, "context", ctx, 1, S->ctr, &S->nctr);
}

int trail_session_counters(struct trail_session *S, const char *list)
{
	return counter_list(S, "counters", list, 0, S->fctr, &S->nfctr);
}

/* --counters, at the validation: each call's record (fields: the
 * function, a delta a counter, the counts at the entry), recorded, and
 * the tracer's option naming them */
static int call_counters_define(struct trail_session *S)
{
	const struct trail_counter *all;
	char def[1024], opt[256];
	size_t cn, o, k;
	char *line;
	int r;

	if (!S->nfctr)
		return 0;
	all = trail_counters(&cn);
	o = (size_t)snprintf(def, sizeof(def), "%s u64 func", TRAIL_CTR_CALL_EVENT);
	k = (size_t)snprintf(opt, sizeof(opt), "@counters ");
	for (int i = 0; i < S->nfctr; i++) {
		o += (size_t)snprintf(def + o, sizeof(def) - o, "; u64 %s", all[S->fctr[i]].field);
		k += (size_t)snprintf(opt + k, sizeof(opt) - k, "%s%s", i ? "," : "",
				      all[S->fctr[i]].name);
	}
	for (int i = 0; i < S->nfctr; i++)
		o += (size_t)snprintf(def + o, sizeof(def) - o, "; u64 %s_at", all[S->fctr[i]].field);
	if ((r = trail_session_synth(S, def)) ||
	    (r = trail_session_event(S, TRAIL_SYNTH_PROVIDER ":" TRAIL_CTR_CALL_EVENT)))
		return r;
	if (!(line = strdup(opt)) || trail__sess_add_line(S, line)) {
		free(line);
		return oom(S);
	}
	return 0;
}

void trail_session_stack(struct trail_session *S)
{
	S->stack = 1;
	/* (ftrace:user_stack recorded, as for a -T stacktrace) */
	S->stacktrace = 1;
}

/* --context: the counters' synthetic event ("perf_counters u64 F; ...")
 * or the trigger that writes it ("counters:N,N") into buf */
static void context_text(const struct trail_session *S, int trigger, char *buf, size_t n)
{
	const struct trail_counter *all;
	size_t cn, o = (size_t)snprintf(buf, n, "%s", trigger ? "counters:" : TRAIL_CTR_EVENT);

	all = trail_counters(&cn);
	for (int i = 0; i < S->nctr && o < n; i++)
		o += trigger ? (size_t)snprintf(buf + o, n - o, "%s%s", i ? "," : "", all[S->ctr[i]].name)
			     : (size_t)snprintf(buf + o, n - o, "%s u64 %s", i ? ";" : "",
						all[S->ctr[i]].field);
}

/* --context, at the validation: the counters' synthetic event, recorded */
static int context_define(struct trail_session *S)
{
	char def[512];
	int r;

	if (!S->nctr)
		return 0;
	context_text(S, 0, def, sizeof(def));
	if ((r = trail_session_synth(S, def)))
		return r;
	return trail_session_event(S, TRAIL_SYNTH_PROVIDER ":" TRAIL_CTR_EVENT);
}

/* ... into the spec, once the probes added theirs: a counters trigger
 * (--context), a stacktrace one (--stack) on the events of each -e and
 * --probe (libtrail leaves the counters' own event out, and a stack's
 * event writes no stack of its own) */
static int context_triggers(struct trail_session *S)
{
	char trig[256], *line;

	if (S->nctr)
		context_text(S, 1, trig, sizeof(trig));
	for (int k = 0; k < 2; k++) {
		if (k ? !S->stack : !S->nctr)
			continue;
		for (int i = 0; i < S->nevents; i++) {
			if (!strcmp(S->events[i], TRAIL_SYNTH_PROVIDER ":" TRAIL_CTR_EVENT) ||
			    !strcmp(S->events[i], TRAIL_SYNTH_PROVIDER ":" TRAIL_CTR_CALL_EVENT) ||
			    !strcmp(S->events[i], "ftrace:user_stack"))
				continue;
			if (asprintf(&line, "@trigger %s %s", S->events[i], k ? "stacktrace" : trig) < 0)
				return oom(S);
			if (trail__sess_add_line(S, line)) {
				free(line);
				return oom(S);
			}
		}
	}
	return 0;
}

/* do a and b say the same? */
static int rv_same(const struct trail_rv_model *a, const struct trail_rv_model *b)
{
	if (strcmp(a->name, b->name) || a->init != b->init || a->accepting != b->accepting ||
	    a->nstates != b->nstates || a->nevents != b->nevents)
		return 0;
	for (int i = 0; i < a->nstates; i++)
		if (strcmp(a->states[i], b->states[i]))
			return 0;
	for (int i = 0; i < a->nevents; i++)
		if (strcmp(a->events[i], b->events[i]))
			return 0;
	for (int i = 0; i < a->nstates; i++)
		if (memcmp(a->next[i], b->next[i], (size_t)a->nevents))
			return 0;
	return 1;
}

int trail_session_rv(struct trail_session *S, const char *path)
{
	struct trail_rv_mon *r;
	const char **p;
	char err[600];

	if (S->nrv == TRAIL_RV_MONITORS)
		return trail_session_usage(S, "--rv %s: at most %d monitors a recording", path,
					   TRAIL_RV_MONITORS);
	if (!(r = realloc(S->rvs, (size_t)(S->nrv + 1) * sizeof(*r))))
		return oom(S);
	S->rvs = r;
	if (!(p = realloc(S->rv_paths, (size_t)(S->nrv + 1) * sizeof(*p))))
		return oom(S);
	S->rv_paths = p;
	r += S->nrv;
	memset(r, 0, sizeof(*r));
	if (trail_rv_load(path, &r->m, err, sizeof(err)))
		return trail_session_usage(S, "--rv %s", err);
	for (int i = 0; i < S->nrv; i++)
		if (!strcmp(S->rvs[i].m.name, r->m.name))
			return trail_session_usage(S, "--rv %s: a monitor named %s is loaded already (from "
						   "%s): name the digraph", path, r->m.name, S->rv_paths[i]);
	r->idx = S->nrv;
	strcpy(r->per, "thread");
	strcpy(r->reactor, "trace");
	p[S->nrv++] = path;
	return 0;
}

int trail_session_rv_per(struct trail_session *S, const char *per)
{
	size_t n = strlen(per);

	if (!S->nrv)
		return trail_session_usage(S, "--per %s: it applies to the --rv before it: give that "
					   "first", per);
	if (!n || n >= TRAIL_RV_PER_MAX || strspn(per, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						   "0123456789_") != n || isdigit((unsigned char)*per))
		return trail_session_usage(S, "--per %s: thread, process, or the name of an event "
					   "field (the instance key)", per);
	strcpy(S->rvs[S->nrv - 1].per, per);
	return 0;
}

int trail_session_rv_reactor(struct trail_session *S, const char *reactor)
{
	if (!S->nrv)
		return trail_session_usage(S, "--reactor %s: it applies to the --rv before it: give "
					   "that first", reactor);
	if (!trail_rv_reactor(reactor))
		return trail_session_usage(S, "--reactor %s: nop, trace, printk, abort, traceoff or "
					   "snapshot", reactor);
	strcpy(S->rvs[S->nrv - 1].reactor, reactor);
	return 0;
}

int trail_session_mmio(struct trail_session *S, const char *path)
{
	const char **p;
	uint64_t (*r)[2];

	if (!path[0] || strpbrk(path, "\n\r") || strlen(path) > 250)
		return trail_session_usage(S, "--mmio '%s': a path as /proc/PID/maps shows it "
					   "(one line, at most 250 bytes)", path);
	if (S->nmmio == 8)
		return trail_session_usage(S, "--mmio %s: 8 regions at most", path);
	if (!(p = realloc(S->mmio_paths, (size_t)(S->nmmio + 1) * sizeof(*p))))
		return oom(S);
	S->mmio_paths = p;
	if (!(r = realloc(S->mmio_range, (size_t)(S->nmmio + 1) * sizeof(*r))))
		return oom(S);
	S->mmio_range = r;
	p[S->nmmio] = path;
	r[S->nmmio][0] = r[S->nmmio][1] = 0;
	S->nmmio++;
	return 0;
}

int trail_session_mmio_range(struct trail_session *S, const char *range)
{
	unsigned long long lo, hi;
	char *e;

	if (!S->nmmio)
		return trail_session_usage(S, "--mmio-range %s: it applies to the --mmio before it: "
					   "give that first", range);
	errno = 0;
	lo = strtoull(range, &e, 0);
	if (errno || e == range || *e != ',')
		goto bad;
	range = e + 1;
	hi = strtoull(range, &e, 0);
	if (errno || e == range || *e || hi <= lo)
		goto bad;
	S->mmio_range[S->nmmio - 1][0] = lo;
	S->mmio_range[S->nmmio - 1][1] = hi;
	return 0;
bad:
	return trail_session_usage(S, "--mmio-range needs START,END, file offsets with START < END "
				   "(0x1000,0x2000)");
}

int trail__sess_synth_find(const struct trail_session *S, const char *name)
{
	for (int i = 0; i < S->nsynths; i++)
		if (!strcmp(S->sdefs[i].name, name))
			return i;
	return -1;
}

static int synth_add(struct trail_session *S, const struct trail_synth *d)
{
	char text[2048], **g = realloc(S->synths, (size_t)(S->nsynths + 1) * sizeof(*g));
	struct trail_synth *sd;

	if (!g)
		return -1;
	S->synths = g;
	if (!(sd = realloc(S->sdefs, (size_t)(S->nsynths + 1) * sizeof(*sd))))
		return -1;
	S->sdefs = sd;
	trail_synth_describe(d, text, sizeof(text));
	if (asprintf(&S->synths[S->nsynths], "@synth %s", text) < 0)
		return -1;
	S->sdefs[S->nsynths++] = *d;
	return 0;
}

/* the kept definitions (trail synth) this recording names: an -e
 * selects it, or a -T's text names it as a word */
static int synths_needed(struct trail_session *S)
{
	struct synth_list l = {0};
	char err[512];
	int r = synths_read(&l, err, sizeof(err));

	/* (also where a registry directory that cannot be used is said:
	 * the kept definitions, probes' too, and the processes are there) */
	if (r) {
		trail_session_err(S, "%s%s", r == -EINVAL ? "synth: " : "", err);
		return -1;
	}
	for (int i = 0; i < l.n; i++) {
		const char *name = l.defs[i].name;
		size_t nl = strlen(name);
		int need = trail__sess_synth_find(S, name) < 0 ? 0 : -1;

		for (int k = 0; !need && k < S->nevents; k++)
			need = trail__spec_match1(S->events[k], strlen(S->events[k]),
						  TRAIL_SYNTH_PROVIDER, name);
		for (int k = 0; !need && k < S->ntriggers; k++)
			for (const char *t = S->triggers[k]; !need && (t = strstr(t, name)); t += nl)
				need = (t == S->triggers[k] || !(isalnum((unsigned char)t[-1]) || t[-1] == '_')) &&
				       !(isalnum((unsigned char)t[nl]) || t[nl] == '_');
		if (need > 0 && synth_add(S, &l.defs[i])) {
			synths_free(&l);
			return -1;
		}
	}
	synths_free(&l);
	return 0;
}


int trail_session_synth(struct trail_session *S, const char *def)
{
	struct trail_synth d;
	struct trail_filter_err fe;

	if (trail_synth_parse(def, &d, &fe))
		return trail_session_caret(S, TRAIL_DIAG_USAGE, "synth", def,
					   fe.pos < 0 ? 0 : (size_t)fe.pos, fe.msg);
	if (trail__sess_synth_find(S, d.name) >= 0)
		return trail_session_usage(S, "--synth '%s': that synthetic event is defined "
					   "already", def);
	return synth_add(S, &d) ? oom(S) : 0;
}

int trail_session_probe(struct trail_session *S, const char *def)
{
	return push(&S->probes, &S->nprobes, (void *)def) ? oom(S) : 0;
}

int trail_session_func(struct trail_session *S, char kind, const char *glob)
{
	const char *why;
	size_t bad;
	char *line;

	if (!*glob || strpbrk(glob, " \t\n"))
		return trail_session_usage(S, "-l/-n/-g need a function name or glob, not '%s'",
					   glob);
	if ((bad = trail__glob_check(glob, strlen(glob), &why)))
		return trail_session_caret(S, TRAIL_DIAG_USAGE, "bad function glob", glob, bad - 1,
					   why);
	if (asprintf(&line, "@%c %s", kind, glob) < 0)
		return oom(S);
	if (trail__sess_add_line(S, line)) {
		free(line);
		return oom(S);
	}
	return 0;
}

int trail_session_tracer(struct trail_session *S, const char *name)
{
	if (strcmp(name, "function") && strcmp(name, "function_graph") && strcmp(name, "timerlat") &&
	    strcmp(name, "osnoise"))
		return trail_session_usage(S, "unknown tracer '%s' (available: function "
					   "function_graph timerlat osnoise)", name);
	S->tracer = name;
	return 0;
}

char *trail_session_keep(struct trail_session *S, char *s)
{
	if (!s || push(&S->owned, &S->nowned, s)) {
		free(s);
		oom(S);
		return NULL;
	}
	return s;
}

int trail_session_pid(struct trail_session *S, pid_t pid)
{
	pid_t *g = realloc(S->pids, (size_t)(S->npids + 1) * sizeof(*g));

	if (!g)
		return oom(S);
	S->pids = g;
	g[S->npids++] = pid;
	return 0;
}

/* ------------------------------------------------------ the parts together */

int trail_session_validate(struct trail_session *S, char **cmd)
{
	static char *none[] = {NULL};
	const char *fg = "-p function or -p function_graph";

	S->cmd = cmd ? cmd : none;
	S->nfuncs_user = S->nfuncs;
	if (S->nctr && !S->nevents && !S->nprobes)
		return trail_session_usage(S, "--context reads counters at the events of the -e "
					   "and --probe options: give one");
	if (S->stack && !S->nevents && !S->nprobes)
		return trail_session_usage(S, "--stack takes stacks at the events of the -e "
					   "and --probe options: give one");
	if (context_define(S))
		return TRAIL_SESSION_FAIL;
	if (S->nfctr && (!S->tracer || strcmp(S->tracer, "function_graph")))
		return trail_session_usage(S, "--counters reads counters at each call's entry and "
					   "exit: give -p function_graph (at events: --context "
					   "counter:NAME)");
	if (S->nfctr && S->thresh_ns)
		return trail_session_usage(S, "--counters does not go with --graph-time-thresh (a "
					   "call's counters are written before its exit record)");
	if (call_counters_define(S))
		return TRAIL_SESSION_FAIL;
	if (synths_needed(S))
		return TRAIL_SESSION_FAIL;
	if (!S->nevents && !S->tracer && !S->nprobes && !S->ntriggers && !S->nrv && !S->nmmio)
		return trail_session_usage(S, "no events selected: give -e EVENT (e.g. -e 'app:*' "
					   "or -e all) or -p TRACER");
	if (S->nfuncs && !S->tracer)
		return trail_session_usage(S, "-l, -n and -g select functions for a tracer: give %s",
					   fg);
	for (int i = 0; S->objtrace && !S->tracer && i < S->ntriggers; i++) {
		struct trail_trigger t;
		struct trail_filter_err fe;

		if (!trail_trigger_parse(S->trig_args[i] + S->trig_off[i], &t, &fe) &&
		    t.cmd == TRAIL_TRIG_OBJTRACE)
			return trail_session_usage(S, "-T '%s': objtrace follows objects into the "
						   "function tracer's entries: give %s",
						   S->trig_args[i], fg);
	}
	if (S->nest >= 0 && !S->tracer)
		return trail_session_usage(S, "--nest limits a tracer: give %s", fg);
	if (S->no_libcall && !S->tracer)
		return trail_session_usage(S, "--no-libcall limits a tracer: give %s", fg);
	if (S->nest_libcall && !S->tracer)
		return trail_session_usage(S, "--nest-libcall widens a tracer: give %s", fg);
	if (S->nest_libcall && S->no_libcall)
		return trail_session_usage(S, "--nest-libcall and --no-libcall contradict each "
					   "other: give one");
	if (S->ntids && !S->tracer)
		return trail_session_usage(S, "--tid selects threads for a tracer: give %s", fg);
	if (S->ntids && !S->npids)
		return trail_session_usage(S, "--tid selects threads of running processes: give -P PID");
	if ((S->max_depth || S->thresh_ns || S->retval || S->args) &&
	    (!S->tracer || strcmp(S->tracer, "function_graph")))
		return trail_session_usage(S, "--max-graph-depth, --graph-time-thresh, --retval and "
					   "--args go with -p function_graph");
	if (S->args && S->thresh_ns)
		return trail_session_usage(S, "--args does not go with --graph-time-thresh (a long "
					   "call is one record written at its return, when its "
					   "arguments are gone)");
	for (int i = 0; i < S->nfuncs; i++)
		if (S->funcs[i][1] == 'g' && strcmp(S->tracer, "function_graph"))
			return trail_session_usage(S, "-g %s: graph roots go with -p function_graph "
						   "(-l limits the function tracer)", S->funcs[i] + 3);
	if (S->snapshot && !S->overwrite)
		return trail_session_usage(S, "-T snapshot takes the flight recorder's contents: "
					   "give --overwrite");
	if (!S->buffer_given)
		S->buffer_bytes = trail_recorder_default_buffer();
	if (S->block_us && S->overwrite)
		return trail_session_usage(S, "--blocking-timeout is for discard mode: --overwrite "
					   "never waits");
	if (!*S->cmd && !S->npids && !S->all && !S->check_only)
		return trail_session_usage(S, "nothing to record: give a COMMAND, -P PID or -a");
	if ((*S->cmd != NULL) + (S->npids > 0) + S->all > 1)
		return trail_session_usage(S, "give one of a COMMAND, -P PID and -a");
	return 0;
}

int trail_session_patches(const struct trail_session *S)
{
	/* (a kept user event's definition patches nothing) */
	for (int i = 0; i < S->nprobe_names; i++)
		if (strncmp(S->probe_names[i], "user_events:", 12))
			return 1;
	return S->tracer || S->nusdt;
}

int trail_session_spec(struct trail_session *S)
{
	/* the filters and triggers go to the spec after the probes (and the
	 * stack traces' event, when a trigger takes them) */
	for (int i = 0; i < S->nsynths + S->nfilters + S->ntriggers + S->stacktrace + S->objtrace;
	     i++) {
		int f = i - S->nsynths;
		char **from = i < S->nsynths		   ? &S->synths[i]
			      : f < S->nfilters		   ? &S->filters[f]
			      : f < S->nfilters + S->ntriggers ? &S->triggers[f - S->nfilters]
								 : NULL;
		char *line = from ? *from
				  : strdup(i == S->nsynths + S->nfilters + S->ntriggers && S->stacktrace
						   ? "ftrace:user_stack"
						   : "ftrace:objtrace");

		if (!line || trail__sess_add_line(S, line)) {
			if (!from)
				free(line);
			return oom(S);
		}
		if (from)
			*from = NULL;
	}
	if (context_triggers(S))
		return TRAIL_SESSION_FAIL;
	/* the MMIO regions, and their events */
	for (int i = 0; i <= S->nmmio && S->nmmio; i++) {
		char *line;

		if (i == S->nmmio ? !(line = strdup("mmio:*"))
		    : asprintf(&line, "@mmio %llx %llx %s", (unsigned long long)S->mmio_range[i][0],
			       (unsigned long long)S->mmio_range[i][1], S->mmio_paths[i]) < 0)
			return oom(S);
		if (trail__sess_add_line(S, line)) {
			free(line);
			return oom(S);
		}
	}
	/* the monitors, and their violations' event */
	for (int i = 0; i <= S->nrv && S->nrv; i++) {
		size_t cap = 1 << 17, n;
		char *line = malloc(cap);

		if (!line)
			return oom(S);
		if (i == S->nrv) {
			strcpy(line, "rv:error");
		} else {
			struct trail_rv_mon *back = malloc(sizeof(*back));

			memcpy(line, "@rv ", 4);
			n = trail_rv_encode(&S->rvs[i], line + 4, cap - 4);
			/* (what the processes will read: the same model) */
			if (!back || !n || trail_rv_decode(line + 4, n, back) ||
			    !rv_same(&back->m, &S->rvs[i].m)) {
				free(back);
				free(line);
				return trail_session_err(S, "--rv %s: the model does not survive its "
							 "encoding (a state or event with no name?)",
							 S->rv_paths[i]);
			}
			free(back);
		}
		if (trail__sess_add_line(S, line)) {
			free(line);
			return oom(S);
		}
	}
	return 0;
}

void trail_session_recorder_opts(const struct trail_session *S, struct trail_recorder_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->events = S->events;
	o->nevents = S->nevents;
	o->funcs = S->funcs;
	o->nfuncs = S->nfuncs;
	o->nfuncs_user = S->nfuncs_user;
	o->tracer = S->tracer;
	o->max_depth = S->max_depth;
	o->retval = S->retval;
	o->args = S->args;
	o->no_libcall = S->no_libcall;
	o->nest_libcall = S->nest_libcall;
	o->thresh_ns = S->thresh_ns;
	o->nest = S->nest;
	o->tids = S->tids;
	o->ntids = S->ntids;
	o->buffer_bytes = S->buffer_bytes;
	o->buffer_given = S->buffer_given;
	o->chunk_size = S->chunk_size;
	o->overwrite = S->overwrite;
	o->block_us = S->block_us;
	o->clock = S->clock;
	o->cmd = S->cmd;
	o->cmd_path = S->cmd_path;
	o->pids = S->pids;
	o->npids = S->npids;
	o->hist_bytes = S->hist_bytes;
	o->patches = trail_session_patches(S);
	o->start_paused = S->start_paused;
}

/* ----------------------------------------------------------------- free */

static void free_all(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void trail_session_free(struct trail_session *S)
{
	if (S->nprobe_names)
		probes_unmark_in_use();
	free_all(S->funcs, S->nfuncs);
	free_all(S->probe_names, S->nprobe_names);
	free_all(S->probe_events, S->nprobe_events);
	free_all(S->usdt, S->nusdt);
	free_all(S->synths, S->nsynths);
	free(S->sdefs);
	free_all(S->filters, S->nfilters);
	free_all(S->triggers, S->ntriggers);
	free(S->trig_args);
	free(S->trig_off);
	free(S->rvs);
	free(S->rv_paths);
	free(S->mmio_paths);
	free(S->mmio_range);
	free(S->probes);
	free(S->events);
	free(S->pids);
	free(S->cmd_path);
	free_all(S->owned, S->nowned);
	if (S->bconf) {
		trail_bconf_free(S->bconf);
		free(S->bconf);
	}
	memset(S, 0, sizeof(*S));
}
