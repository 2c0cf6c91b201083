/* SPDX-License-Identifier: MIT */
/*
 * bootcfg.c - a session from a bootconfig file (session.h): the kernel's
 * boot-time tracing keys (Documentation/trace/boottime-trace.rst) read
 * for a process, in the grammar of bconf.h:
 *
 *   ftrace.tracer = function | function_graph
 *   ftrace.ftrace.filters / ftrace.ftrace.notraces = GLOB, ...   (-l / -n)
 *   ftrace.fgraph_filters, kernel.fgraph_filters = GLOB, ...     (-g)
 *   ftrace.fgraph_notraces, kernel.fgraph_notraces = GLOB, ...   (-n)
 *   ftrace.fgraph_max_depth, kernel.fgraph_max_depth = N
 *   ftrace.options = funcgraph-retval, funcgraph-args, ...
 *   ftrace.buffer_size = SIZE (KB, MB), ftrace.trace_clock = CLOCK
 *   ftrace.tracing_on = 0 (nothing recorded until a traceon trigger)
 *   ftrace.events = GROUP:EVENT, ...
 *   ftrace.event.GROUP.EVENT.{enable, filter = F, actions = A, ...}
 *   ftrace.event.kprobes.EVENT.probes = "FUNC ARGS" | "FUNC%return ARGS"
 *   ftrace.event.synthetic.EVENT.fields = "TYPE NAME", ...
 *   kernel.trace_event, kernel.trace_buf_size, kernel.ftrace,
 *   kernel.ftrace_filter, kernel.ftrace_notrace, kernel.trace_clock
 *   trail.output = FILE
 *
 * Every message names the key's place in the file (FILE:LINE:COL);
 * a key that means nothing for a process, or that this front-end does
 * not take yet, is a warning naming it, never an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/spec.h"
#include "../common/util.h"
#include "bconf.h"
#include "internal.h"

/* Where each value the file gave the session was written: the checks
 * against the programs, later, say their caret errors at its place too. */
struct bwhere {
	struct trail_diag diag;         /* (first: what S->diag points to) */
	const struct trail_diag *outer; /* the front-end's */
	const char *path;
	size_t n;
	struct {
		const char *text;
		unsigned line, col;
	} v[];
};

struct bctx {
	struct trail_session *S;
	const char **wtext;             /* the values given, and their keys */
	const struct trail_bconf_node **wnode;
	size_t nw;
	const char *path;
	const struct trail_diag *outer; /* the front-end's diag */
	struct trail_diag diag;         /* ... with the key's place first */
	const struct trail_bconf_node *at; /* the key being read */
	int pass;
};

/* the front-end's diag, each message after the place of the key read */
static void emit(void *ctx, const struct trail_diag_msg *m)
{
	const struct bctx *b = ctx;
	struct trail_diag_msg w = *m;
	char what[512], msg[2300];

	if (b->at && m->level != TRAIL_DIAG_NOTE) {
		if (m->input) {
			snprintf(what, sizeof(what), "%s:%u:%u: %s", b->path, b->at->line, b->at->col,
				 m->what);
			w.what = what;
		} else {
			snprintf(msg, sizeof(msg), "%s:%u:%u: %s", b->path, b->at->line, b->at->col,
				 m->msg);
			w.msg = msg;
		}
	}
	b->outer->emit(b->outer->ctx, &w);
}

/* a value given to the session: text, written at the key k */
static void note(struct bctx *b, const char *text, const struct trail_bconf_node *k)
{
	const char **t = realloc(b->wtext, (b->nw + 1) * sizeof(*t));
	const struct trail_bconf_node **n = t ? realloc(b->wnode, (b->nw + 1) * sizeof(*n)) : NULL;

	if (t)
		b->wtext = t;
	if (!n)
		return; /* (said without its place, then) */
	b->wnode = n;
	t[b->nw] = text;
	n[b->nw++] = k;
}

/* the session's diag once the file is read: a caret error on a value
 * the file gave, after the value's place */
static void emit_where(void *ctx, const struct trail_diag_msg *m)
{
	const struct bwhere *w = ctx;
	struct trail_diag_msg x = *m;
	char what[512];

	for (size_t i = 0; m->input && i < w->n; i++)
		if (!strcmp(m->input, w->v[i].text)) {
			snprintf(what, sizeof(what), "%s:%u:%u: %s", w->path, w->v[i].line, w->v[i].col,
				 m->what);
			x.what = what;
			break;
		}
	w->outer->emit(w->outer->ctx, &x);
}

static void unknown(struct bctx *b, const char *key, const char *why)
{
	trail_session_warn(b->S, "%s: %s", key, why);
}

/* the key's single value (a list where one is expected: an error) */
static const char *one(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	const struct trail_bconf_node *v = trail_bconf_values(k);

	if (!v) {
		trail_session_usage(b->S, "%s needs a value", key);
		return NULL;
	}
	if (trail_bconf_nvalues(k) > 1) {
		trail_session_usage(b->S, "%s takes one value, not a list", key);
		return NULL;
	}
	return v->data;
}

static int funcs(struct bctx *b, char kind, const struct trail_bconf_node *k)
{
	for (const struct trail_bconf_node *v = trail_bconf_values(k); v && v->value; v = v->next) {
		int r = trail_session_func(b->S, kind, v->data);

		if (r)
			return r;
	}
	return 0;
}

static int events(struct bctx *b, const struct trail_bconf_node *k)
{
	for (const struct trail_bconf_node *v = trail_bconf_values(k); v && v->value; v = v->next) {
		int r = trail_session_event(b->S, v->data);

		if (r)
			return r;
	}
	return 0;
}

static int depth(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	const char *v = one(b, key, k);
	uint64_t n;
	size_t bad;

	if (!v)
		return TRAIL_SESSION_USAGE;
	if (trail__parse_num(v, strlen(v), &n, &bad) || !n || n > 100000)
		return trail_session_usage(b->S, "%s needs a depth from 1, not '%s'", key, v);
	b->S->max_depth = (uint32_t)n;
	return 0;
}

static int buffer(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	const char *v = one(b, key, k);
	uint64_t bytes;

	if (!v)
		return TRAIL_SESSION_USAGE;
	if (trail__parse_kb(v, &bytes) || bytes < 8192)
		return trail_session_usage(b->S, "%s needs a size of at least 8 KiB (64KB, 32MB), "
					   "not '%s'", key, v);
	b->S->buffer_bytes = bytes;
	b->S->buffer_given = 1;
	return 0;
}

static int clock_(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	const char *v = one(b, key, k);

	if (!v)
		return TRAIL_SESSION_USAGE;
	/* the kernel's clocks a process has: the TSC, CLOCK_MONOTONIC */
	if (!strcmp(v, "x86-tsc"))
		b->S->clock_want = "x86-tsc";
	else if (!strcmp(v, "mono") || !strcmp(v, "global") || !strcmp(v, "local") ||
		 !strcmp(v, "perf"))
		b->S->clock_want = "mono";
	else
		return trail_session_usage(b->S, "%s: no clock '%s' for a process (x86-tsc, mono, "
					   "global, local, perf)", key, v);
	return 0;
}

static int tracer(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	const char *v = one(b, key, k);

	if (!v)
		return TRAIL_SESSION_USAGE;
	if (!strcmp(v, "nop"))
		return 0;
	return trail_session_tracer(b->S, v);
}

static int options(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	for (const struct trail_bconf_node *v = trail_bconf_values(k); v && v->value; v = v->next) {
		const char *o = v->data;
		int no = !strncmp(o, "no", 2);

		if (!strcmp(o + 2 * no, "funcgraph-retval"))
			b->S->retval = !no;
		else if (!strcmp(o + 2 * no, "funcgraph-args"))
			b->S->args = !no;
		else if (!strcmp(o, "overwrite"))
			b->S->overwrite = 1;
		else if (!strcmp(o, "nooverwrite"))
			b->S->overwrite = 0;
		else
			trail_session_warn(b->S, "%s: option '%s' means nothing for a process here: "
					   "left out", key, o);
	}
	return 0;
}

static int tracing_on(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	const char *v = one(b, key, k);

	if (!v)
		return TRAIL_SESSION_USAGE;
	if (strcmp(v, "0") && strcmp(v, "1"))
		return trail_session_usage(b->S, "%s is 0 or 1, not '%s'", key, v);
	b->S->start_paused = !strcmp(v, "0");
	return 0;
}

/* GROUP.EVENT of key "...event.GROUP.EVENT.LEAF" as "GROUP:EVENT" */
static char *event_name(struct bctx *b, const struct trail_bconf_node *k)
{
	const struct trail_bconf_node *e = k->parent, *g = e ? e->parent : NULL;
	char *s = NULL;

	if (!g || asprintf(&s, "%s:%s", g->data, e->data) < 0)
		return NULL;
	return trail_session_keep(b->S, s);
}

/* an event's kprobes.EVENT.probes = "FUNC[%return] ARGS" */
static int kprobe(struct bctx *b, const char *key, const struct trail_bconf_node *k,
		  const char *ev)
{
	const char *v = one(b, key, k), *sp, *pct;
	char *def = NULL;
	size_t fl;

	if (!v)
		return TRAIL_SESSION_USAGE;
	sp = strpbrk(v, " \t");
	fl = sp ? (size_t)(sp - v) : strlen(v);
	pct = memchr(v, '%', fl);
	if (pct && strncmp(pct, "%return", fl - (size_t)(pct - v)))
		return trail_session_usage(b->S, "%s: '%.*s': only %%return may follow the function",
					   key, (int)fl, v);
	/* the event in the group kprobes, as the kernel's */
	if (asprintf(&def, "%c:kprobes/%s %.*s%s", pct ? 'r' : 'p', strchr(ev, ':') + 1,
		     (int)(pct ? (size_t)(pct - v) : fl), v, sp ? sp : "") < 0)
		return trail_session_err(b->S, "out of memory");
	if (!trail_session_keep(b->S, def))
		return TRAIL_SESSION_FAIL;
	note(b, def, k);
	return trail_session_probe(b->S, def);
}

/* synthetic.EVENT.fields = "TYPE NAME", ... */
static int fields(struct bctx *b, const struct trail_bconf_node *k, const char *ev)
{
	size_t n = strlen(ev) + 2;
	char *def;

	for (const struct trail_bconf_node *v = trail_bconf_values(k); v && v->value; v = v->next)
		n += strlen(v->data) + 2;
	if (!(def = trail_session_keep(b->S, malloc(n))))
		return TRAIL_SESSION_FAIL;
	strcpy(def, strchr(ev, ':') + 1);
	for (const struct trail_bconf_node *v = trail_bconf_values(k); v && v->value; v = v->next) {
		strcat(def, v == trail_bconf_values(k) ? " " : "; ");
		strcat(def, v->data);
	}
	return trail_session_synth(b->S, def);
}

/* is the event GROUP:EVENT enabled by an ftrace.events pattern or its
 * own enable key? */
static int enabled(const struct bctx *b, const char *ev, const struct trail_bconf_node *leaf)
{
	const char *colon = strchr(ev, ':');
	char group[256];

	for (const struct trail_bconf_node *n = leaf->parent->child; n; n = n->next)
		if (!n->value && !strcmp(n->data, "enable"))
			return 1;
	snprintf(group, sizeof(group), "%.*s", (int)(colon - ev), ev);
	for (int i = 0; i < b->S->nevents; i++)
		if (trail__spec_match1(b->S->events[i], strlen(b->S->events[i]), group, colon + 1))
			return 1;
	return 0;
}

/* ftrace.event.GROUP.EVENT.LEAF (rest: "GROUP.EVENT.LEAF") */
static int event_key(struct bctx *b, const char *key, const char *rest,
		     const struct trail_bconf_node *k)
{
	const char *leaf = k->data, *ev;
	int dots = 0;

	for (const char *p = rest; *p; p++)
		dots += *p == '.';
	if (dots != 2) {
		if (b->pass == 0)
			unknown(b, key, "not an event's key (ftrace.event.GROUP.EVENT.enable, "
				"filter, actions, probes, fields): left out");
		return 0;
	}
	if (!(ev = event_name(b, k)))
		return TRAIL_SESSION_FAIL;
	/* pass 0: definitions (probes, synthetic events), enables; pass 1:
	 * filters (after their event) and actions */
	if (b->pass == 0) {
		if (!strcmp(leaf, "probes"))
			return strncmp(rest, "kprobes.", 8)
				       ? trail_session_usage(b->S, "%s: probes are defined in the "
							     "group kprobes", key)
				       : kprobe(b, key, k, ev);
		if (!strcmp(leaf, "fields"))
			return strncmp(rest, "synthetic.", 10)
				       ? trail_session_usage(b->S, "%s: fields define an event of "
							     "the group synthetic", key)
				       : fields(b, k, ev);
		if (!strcmp(leaf, "enable"))
			return trail_bconf_values(k) && strcmp(trail_bconf_values(k)->data, "1")
				       ? 0 : trail_session_event(b->S, ev);
		if (strcmp(leaf, "filter") && strcmp(leaf, "actions"))
			unknown(b, key, "not an event's key (enable, filter, actions, probes, "
				"fields): left out");
		return 0;
	}
	if (!strcmp(leaf, "filter")) {
		const char *f = one(b, key, k);
		int r;

		if (!f)
			return TRAIL_SESSION_USAGE;
		if (!enabled(b, ev, k)) {
			trail_session_warn(b->S, "%s: %s is not enabled (add enable, or name it in "
					   "ftrace.events): its filter is left out", key, ev);
			return 0;
		}
		/* the filter applies to the pattern before it: this event */
		if ((r = trail_session_event(b->S, ev)))
			return r;
		note(b, f, k);
		return trail_session_filter(b->S, f);
	}
	if (!strcmp(leaf, "actions"))
		for (const struct trail_bconf_node *v = trail_bconf_values(k); v && v->value;
		     v = v->next) {
			char *t = NULL;
			int r;

			if (asprintf(&t, "%s:%s", ev, v->data) < 0 || !trail_session_keep(b->S, t))
				return TRAIL_SESSION_FAIL;
			note(b, t, v);
			if ((r = trail_session_trigger(b->S, t)))
				return r;
		}
	return 0;
}

/* ftrace.KEY, or ftrace.instance.NAME.KEY */
static int limit(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	(void)key;
	return funcs(b, 'l', k);
}

static int notrace(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	(void)key;
	return funcs(b, 'n', k);
}

static int graph(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	(void)key;
	return funcs(b, 'g', k);
}

static int enable(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	(void)key;
	return events(b, k);
}

static int snapshots(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	(void)key, (void)k;
	b->S->overwrite = 1; /* snapshots take the flight recorder's */
	return 0;
}

/* what is recorded is written however the process ends (a fatal signal,
 * SIGKILL included: the buffer is shared memory the recorder keeps): the
 * kernel's dump_on_oops, always */
static int always(struct bctx *b, const char *key, const struct trail_bconf_node *k)
{
	(void)b, (void)key, (void)k;
	return 0;
}

/* The keys a session takes (pass 0), under ftrace. and under kernel.
 * (the kernel command line's spellings), and the part each makes. */
static const struct {
	const char *ftrace, *kernel;
	int (*take)(struct bctx *b, const char *key, const struct trail_bconf_node *k);
} keys[] = {
	{"tracer", "ftrace", tracer},
	{"ftrace.filters", "ftrace_filter", limit},
	{"ftrace.notraces", "ftrace_notrace", notrace},
	{"fgraph_notraces", "fgraph_notraces", notrace},
	{"fgraph_filters", "fgraph_filters", graph},
	{"fgraph_max_depth", "fgraph_max_depth", depth},
	{"buffer_size", "trace_buf_size", buffer},
	{"trace_clock", "trace_clock", clock_},
	{"options", "trace_options", options},
	{"tracing_on", NULL, tracing_on},
	{"events", "trace_event", enable},
	{"alloc_snapshot", NULL, snapshots},
	{NULL, "dump_on_oops", always},
};

/* ftrace.REST (kernel: kernel.REST): the table's part, else a warning */
static int table_key(struct bctx *b, const char *key, const char *rest,
		     const struct trail_bconf_node *k, int kernel)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *name = kernel ? keys[i].kernel : keys[i].ftrace;

		if (name && !strcmp(rest, name))
			return keys[i].take(b, key, k);
	}
	if (kernel && !strcmp(rest, "tp_printk")) {
		/* every event on stderr as text too (the recorder's: a
		 * boot-time session's is the program's) */
		b->S->tp_printk = b->S->overwrite = 1;
		return 0;
	}
	if (kernel)
		unknown(b, key, "means nothing for a process: left out");
	else
		unknown(b, key, !strcmp(rest, "cpumask") ? "a process's threads are not bound to a "
							   "CPU mask here: left out"
							 : "not a boot-time tracing key: left out");
	return 0;
}

/* Does the session's instance name GROUP.EVENT (ev: "GROUP.EVENT.LEAF")
 * under its own event keys? (the top's probes and synthetic events are
 * every instance's definitions, taken where one is used) */
struct uses {
	const char *prefix; /* ftrace.instance.NAME.event.GROUP.EVENT. */
	size_t len;
};

static int uses_key(void *arg, const char *key, const struct trail_bconf_node *k)
{
	const struct uses *u = arg;

	(void)k;
	return !strncmp(key, u->prefix, u->len);
}

static int instance_uses(const struct bctx *b, const char *ev)
{
	const char *leaf = strrchr(ev, '.');
	char prefix[512];
	struct uses u = {prefix, 0};

	if (!leaf || (strcmp(leaf, ".probes") && strcmp(leaf, ".fields")))
		return 0;
	u.len = (size_t)snprintf(prefix, sizeof(prefix), "ftrace.instance.%s.event.%.*s.",
				 b->S->instance, (int)(leaf - ev), ev);
	return u.len < sizeof(prefix) && trail_bconf_each(b->S->bconf, uses_key, &u);
}

/* ftrace.KEY, or ftrace.instance.NAME.KEY: the instance's own keys are
 * read for its session as the top's are for the top's */
static int ftrace_key(struct bctx *b, const char *key, const char *rest,
		      const struct trail_bconf_node *k)
{
	if (!strncmp(rest, "instance.", 9)) {
		const char *name = rest + 9, *dot = strchr(name, '.');
		const char *want = b->S->instance;

		if (!dot || dot == name) {
			if (b->pass == 0)
				unknown(b, key, "an instance's keys are ftrace.instance.NAME.KEY: "
					"left out");
			return 0;
		}
		if (!want || strlen(want) != (size_t)(dot - name) || strncmp(want, name, strlen(want)))
			return 0; /* (another session's) */
		rest = dot + 1;
	} else if (b->S->instance) {
		if (!strncmp(rest, "event.", 6) && instance_uses(b, rest + 6))
			return event_key(b, key, rest + 6, k);
		return 0; /* (the top's) */
	}
	if (!strncmp(rest, "event.", 6))
		return event_key(b, key, rest + 6, k);
	return b->pass == 1 ? 0 : table_key(b, key, rest, k, 0);
}

static int one_key(void *arg, const char *key, const struct trail_bconf_node *k)
{
	struct bctx *b = arg;

	b->at = k;
	if (!strncmp(key, "ftrace.", 7))
		return ftrace_key(b, key, key + 7, k);
	if (!strncmp(key, "kernel.", 7))
		return b->pass == 1 ? 0 : table_key(b, key, key + 7, k, 1);
	if (b->pass == 1)
		return 0;
	if (!strcmp(key, "trail.output")) {
		const char *v = one(b, key, k);

		if (!v)
			return TRAIL_SESSION_USAGE;
		b->S->output = v;
		return 0;
	}
	unknown(b, key, "not a tracing key (ftrace.*, kernel.*, trail.output): left out");
	return 0;
}

static int instance_output(struct trail_session *S);

int trail_session_bootconfig(struct trail_session *S, const char *path, const char *text,
			     size_t len)
{
	struct bctx b = {.S = S, .path = path, .outer = S->diag};
	struct trail_bconf_err e;
	int r;

	if (S->bconf)
		return trail_session_usage(S, "%s: one bootconfig file a session", path);
	if (!(S->bconf = calloc(1, sizeof(*S->bconf))))
		return trail_session_err(S, "out of memory");
	r = trail_bconf_parse(text, len, S->bconf, &e);
	if (r) {
		free(S->bconf);
		S->bconf = NULL;
		if (!e.line)
			return trail_session_usage(S, "%s: %s", path, e.msg);
		{
			/* the kernel tool's words, a caret under the place */
			size_t ls = e.pos, le = e.pos;
			char what[300], *line;

			while (ls && text[ls - 1] != '\n')
				ls--;
			while (le < len && text[le] != '\n' && text[le])
				le++;
			if (!(line = strndup(text + ls, le - ls)))
				return trail_session_err(S, "out of memory");
			snprintf(what, sizeof(what), "%s:%u:%u: Parse error", path, e.line, e.col);
			r = trail_session_caret(S, TRAIL_DIAG_USAGE, what, line, e.pos - ls, e.msg);
			free(line);
			return r;
		}
	}
	b.diag = (struct trail_diag){emit, &b};
	S->diag = &b.diag;
	for (b.pass = 0, r = 0; b.pass < 2 && !r; b.pass++)
		r = trail_bconf_each(S->bconf, one_key, &b);
	S->diag = b.outer;
	if (!r && S->instance) {
		char names[64][64];
		int n = trail_session_bootconfig_instances(S, names, 64), i;

		for (i = 0; i < n && i < 64 && strcmp(names[i], S->instance); i++)
			;
		r = i == n || i == 64
			    ? trail_session_usage(S, "%s: no instance '%s' (ftrace.instance.%s.*)", path,
						  S->instance, S->instance)
			    : instance_output(S);
	}
	if (!r && !(S->bconf_path = trail_session_keep(S, strdup(path))))
		r = TRAIL_SESSION_FAIL;
	if (!r && b.nw) {
		struct bwhere *w = malloc(sizeof(*w) + b.nw * sizeof(w->v[0]));
		char *p = strdup(path);

		if (!w || !p) {
			free(w);
			free(p);
		} else if (!trail_session_keep(S, (char *)w)) {
			free(p); /* (w freed by keep) */
		} else if (trail_session_keep(S, p)) {
			w->diag = (struct trail_diag){emit_where, w};
			w->outer = b.outer;
			w->path = p;
			w->n = b.nw;
			for (size_t i = 0; i < b.nw; i++) {
				w->v[i].text = b.wtext[i];
				w->v[i].line = b.wnode[i]->line;
				w->v[i].col = b.wnode[i]->col;
			}
			S->diag = &w->diag;
		}
	}
	free(b.wtext);
	free(b.wnode);
	return r;
}

int trail_session_bootconfig_instances(const struct trail_session *S, char (*names)[64],
				       int max)
{
	return S->bconf ? trail_bconf_names(S->bconf, "ftrace.instance.", names, max) : 0;
}

/* an instance's output: OUTPUT with .NAME before its extension
 * (app-%p.dat: app-%p.NAME.dat), else after it */
static int instance_output(struct trail_session *S)
{
	const char *out = S->output ? S->output : "trace.dat", *slash = strrchr(out, '/');
	const char *dot = strrchr(slash ? slash + 1 : out, '.');
	char *o = NULL;

	if (dot && dot > (slash ? slash + 1 : out)) {
		if (asprintf(&o, "%.*s.%s%s", (int)(dot - out), out, S->instance, dot) < 0)
			o = NULL;
	} else if (asprintf(&o, "%s.%s", out, S->instance) < 0) {
		o = NULL;
	}
	return (S->output = trail_session_keep(S, o)) ? 0 : TRAIL_SESSION_FAIL;
}

int trail_session_bootconfig_file(struct trail_session *S, const char *path)
{
	char *buf = malloc(TRAIL_BCONF_MAX + 2);
	FILE *f;
	size_t n;
	int r;

	if (!buf)
		return trail_session_err(S, "out of memory");
	if (!(f = fopen(path, "r"))) {
		r = errno;
		free(buf);
		return trail_session_err(S, "cannot read %s: %s", path, strerror(r));
	}
	/* (a file larger than the grammar's limit is read no further) */
	n = fread(buf, 1, TRAIL_BCONF_MAX + 1, f);
	r = ferror(f) ? errno : 0;
	fclose(f);
	if (r) {
		free(buf);
		return trail_session_err(S, "cannot read %s: %s", path, strerror(r));
	}
	r = trail_session_bootconfig(S, path, buf, n);
	free(buf);
	return r;
}
