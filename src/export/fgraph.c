/* SPDX-License-Identifier: MIT */
/* fgraph.c - the function_graph layout, an output; see fgraph.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fgraph.h"
#include "lbuf.h"

/*
 * Indentation stops growing at this depth. ftrace indents two columns a
 * level without a limit, but the kernel's function_graph never nests much
 * deeper than its return stack (FTRACE_RETFUNC_DEPTH, 50 frames), while a
 * trail thread follows 16384 calls: a 16384-deep recursion indented in
 * full is 32 KiB a line, half a gigabyte a report. Lines this deep or
 * deeper keep this depth's indentation and end with their depth, as
 * trace-cmd's -O fgraph:depth writes it: "deep() { (16000)". Shallower
 * lines are ftrace's, unchanged.
 */
#define INDENT_MAX_DEPTH 50

struct gpend {
	uint64_t func;
	uint64_t ts;
	int timed; /* 0: entered in another stream (a forked child's frame) */
};

struct gstream {
	struct gpend *stack;
	size_t depth, cap;
	int skip_exit; /* the next exit was printed with its leaf entry */
};

struct fgraph {
	struct trail_output out;
	struct trail_reader *r;
	FILE *f;
	int proc, quiet;
	struct gstream *st;
	size_t nst;
	const struct trail_rstream *last;
	size_t line_depth; /* of the line being built, if past the indentation cap */
};

static int begin(void *ctx, const struct trail_export_src *src)
{
	struct fgraph *g = ctx;

	g->r = src->reader;
	g->nst = src->nstreams;
	g->st = calloc(g->nst ? g->nst : 1, sizeof(*g->st));
	if (!g->st)
		return -ENOMEM;
	if (!g->quiet)
		fprintf(g->f, "# tracer: function_graph\n#\n# CPU)%s  DURATION      |  FUNCTION CALLS\n"
			"#  |  %s   |   |          |   |   |   |\n",
			g->proc ? "           TASK-TID     " : "",
			g->proc ? "              |         " : "");
	return 0;
}

static void fgraph_free(void *ctx)
{
	struct fgraph *g = ctx;

	if (!g)
		return;
	for (size_t i = 0; g->st && i < g->nst; i++)
		free(g->st[i].stack);
	free(g->st);
	free(g);
}

static int is(const struct trail_record *rec, const char *name)
{
	return rec->type == TRAIL_RT_EVENT && !strcmp(rec->event->meta.provider, "ftrace") &&
	       !strcmp(rec->event->meta.name, name);
}

int trail__fgraph_is_graph(const struct trail_record *rec)
{
	return is(rec, "funcgraph_entry") || is(rec, "funcgraph_exit") ||
	       is(rec, "funcgraph_exit_ret") || is(rec, "funcgraph_call") ||
	       is(rec, "funcgraph_leaf") || is(rec, "funcgraph_inherited");
}

/* ftrace's duration column: marker, 7 characters of microseconds (as many
 * of the 3 decimals as fit), " us" */
static void lb_duration(struct lbuf *l, uint64_t ns)
{
	char us[32];
	size_t len = lb_digits((unsigned long long)(ns / 1000), us);
	char mark = ns > 1000000000ull ? '$' : ns > 100000000ull ? '@' :
		    ns > 10000000ull ? '*' : ns > 1000000ull ? '#' :
		    ns > 100000ull ? '!' : ns > 10000ull ? '+' : ' ';

	if (len < 6) {
		size_t k = 6 - len > 3 ? 3 : 6 - len;
		unsigned frac = (unsigned)(ns % 1000);

		for (size_t i = k; i < 3; i++)
			frac /= 10;
		us[len++] = '.';
		for (size_t i = k; i-- > 0;) {
			us[len + i] = (char)('0' + frac % 10);
			frac /= 10;
		}
		len += k;
	}
	lb_put(l, &mark, 1);
	lb_put(l, " ", 1);
	if (len < 7)
		lb_pad(l, 7 - len, ' ');
	lb_put(l, us, len);
	lb_put(l, " us", 3);
}

static uint64_t u64at(const struct trail_record *rec, unsigned i)
{
	uint64_t v = 0;

	if (rec->len >= (i + 1) * 8)
		memcpy(&v, rec->payload + i * 8, 8);
	return v;
}

/* "func()" as ftrace writes calls (a demangled C++ name has its own
 * parameter list already); bare: "func" */
static void name_of(struct fgraph *g, const struct trail_record *rec, uint64_t ip, int bare,
		    struct lbuf *l)
{
	const char *name = trail_reader_symbol(g->r, rec->stream->pid, ip, rec->ts_raw, NULL);

	if (name) {
		const char *paren = strchr(name, '(');

		if (bare && paren)
			lb_put(l, name, (size_t)(paren - name));
		else
			lb_str(l, name);
		if (!bare && !paren)
			lb_put(l, "()", 2);
	} else {
		lb_hex(l, (unsigned long long)ip);
		if (!bare)
			lb_put(l, "()", 2);
	}
}

/* The columns before the call text: CPU, TASK-PID with -O fgraph:proc,
 * duration, and the indentation of depth. */
static void lead(struct fgraph *g, FILE *out, struct lbuf *l, const struct trail_record *rec,
		 int with_dur, uint64_t dur, size_t depth)
{
	const struct trail_rstream *st = rec->stream;

	if (g->last && g->last != st) /* ftrace's context switch marker */
		fprintf(out, " ------------------------------------------\n"
			     " %3u) %s-%u => %s-%u\n"
			     " ------------------------------------------\n\n",
			rec->cpu == ~0u ? 0 : rec->cpu, g->last->comm, g->last->tid, st->comm,
			st->tid);
	g->last = st;
	lb_init(l, out);
	if (rec->cpu == ~0u) {
		lb_str(l, " \?\?\?) ");
	} else {
		lb_put(l, " ", 1);
		lb_num(l, rec->cpu, 3, ' ');
		lb_put(l, ") ", 2);
	}
	if (g->proc) {
		size_t cl = strlen(st->comm);

		if (cl < 16)
			lb_pad(l, 16 - cl, ' ');
		lb_put(l, st->comm, cl);
		lb_put(l, "-", 1);
		lb_num_left(l, st->tid, 7);
		lb_put(l, " | ", 3);
	}
	if (with_dur)
		lb_duration(l, dur);
	else
		lb_pad(l, 12, ' ');
	lb_put(l, "  |  ", 5);
	g->line_depth = depth >= INDENT_MAX_DEPTH ? depth : 0;
	lb_pad(l, 2 * (depth < INDENT_MAX_DEPTH ? depth : INDENT_MAX_DEPTH), ' ');
}

/* The line ends, with its depth if its indentation was capped. */
static void end(struct fgraph *g, struct lbuf *l)
{
	if (g->line_depth) {
		lb_put(l, " (", 2);
		lb_num(l, g->line_depth, 0, ' ');
		lb_put(l, ")", 1);
	}
	lb_end(l);
}

static struct gstream *gs(struct fgraph *g, const struct trail_record *rec)
{
	return rec->stream->order < g->nst ? &g->st[rec->stream->order] : NULL;
}

static int push(struct gstream *s, uint64_t func, uint64_t ts, int timed)
{
	if (s->depth == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		void *p = realloc(s->stack, cap * sizeof(*s->stack));

		if (!p)
			return -1;
		s->stack = p;
		s->cap = cap;
	}
	s->stack[s->depth++] = (struct gpend){func, ts, timed};
	return 0;
}

static int record(void *ctx, const struct trail_record *rec)
{
	struct fgraph *g = ctx;
	FILE *out = g->f;
	struct gstream *s = gs(g, rec);
	struct lbuf l;

	if (!s)
		return 0;
	if (is(rec, "funcgraph_entry")) {
		struct trail_record next;
		uint64_t func = u64at(rec, 0);

		/* a leaf when the thread's next record is this call's exit */
		if (trail_reader_peek(g->r, rec->stream, &next) &&
		    (is(&next, "funcgraph_exit") || is(&next, "funcgraph_exit_ret"))) {
			lead(g, out, &l, rec, 1, next.ts_ns - rec->ts_ns, s->depth);
			name_of(g, rec, func, 0, &l);
			if (is(&next, "funcgraph_exit_ret")) {
				lb_put(&l, "; /* = ", 7);
				lb_hex(&l, (unsigned long long)u64at(&next, 0));
				lb_put(&l, " */", 3);
			} else {
				lb_put(&l, ";", 1);
			}
			end(g, &l);
			s->skip_exit = 1;
			return 0;
		}
		lead(g, out, &l, rec, 0, 0, s->depth);
		name_of(g, rec, func, 0, &l);
		lb_put(&l, " {", 2);
		end(g, &l);
		push(s, func, rec->ts_ns, 1);
		return 0;
	}
	if (is(rec, "funcgraph_inherited")) {
		/* a forked child's frame, entered in the parent: nothing to
		 * print until the child returns from it */
		push(s, u64at(rec, 0), 0, 0);
		return 0;
	}
	if (is(rec, "funcgraph_exit") || is(rec, "funcgraph_exit_ret")) {
		struct gpend p = {0, 0, 0};

		if (s->skip_exit) {
			s->skip_exit = 0;
			return 0;
		}
		if (s->depth)
			p = s->stack[--s->depth];
		/* the duration is known when the entry is in this stream; the
		 * return from an inherited frame or one whose entry was lost
		 * has none (its entry time is in another stream, or gone) */
		lead(g, out, &l, rec, p.timed, rec->ts_ns - p.ts, s->depth);
		lb_put(&l, "}", 1);
		if (p.func) {
			lb_put(&l, " /* ", 4);
			name_of(g, rec, p.func, 1, &l); /* closing: the bare name */
		}
		if (is(rec, "funcgraph_exit_ret")) {
			lb_put(&l, p.func ? " = " : " /* = ", p.func ? 3 : 6);
			lb_hex(&l, (unsigned long long)u64at(rec, 0));
		}
		if (p.func || is(rec, "funcgraph_exit_ret"))
			lb_put(&l, " */", 3);
		end(g, &l);
		return 0;
	}
	if (is(rec, "funcgraph_leaf")) { /* entry and exit of a leaf in one */
		uint32_t dur = 0;

		if (rec->len >= 12)
			memcpy(&dur, rec->payload + 8, 4);
		/* stamped at the entry; the duration is in clock ticks */
		lead(g, out, &l, rec, 1,
		     trail_reader_to_ns(g->r, rec->ts_raw + dur) - trail_reader_to_ns(g->r, rec->ts_raw),
		     s->depth);
		name_of(g, rec, u64at(rec, 0), 0, &l);
		lb_put(&l, ";", 1);
		end(g, &l);
		return 0;
	}
	if (is(rec, "funcgraph_call")) { /* threshold mode: long calls only */
		uint64_t dur = u64at(rec, 1);

		/* the duration is in clock ticks: convert as a span */
		lead(g, out, &l, rec, 1,
		     trail_reader_to_ns(g->r, rec->ts_raw) - trail_reader_to_ns(g->r, rec->ts_raw - dur),
		     0);
		lb_put(&l, "} /* ", 5);
		name_of(g, rec, u64at(rec, 0), 1, &l);
		lb_put(&l, " */", 3);
		end(g, &l);
		return 0;
	}
	/* anything else, as a comment at the current depth */
	lead(g, out, &l, rec, 0, 0, s->depth);
	if (rec->type == TRAIL_RT_LOST) {
		lb_put(&l, "/* [LOST ", 9);
		lb_num(&l, (unsigned long long)rec->lost, 0, ' ');
		lb_put(&l, " EVENTS] */", 11);
	} else {
		char fields[1000];

		trail_format_fields(rec->event, rec->payload, rec->len, fields, sizeof(fields));
		lb_put(&l, "/* ", 3);
		lb_str(&l, rec->event->meta.provider);
		lb_put(&l, ":", 1);
		lb_str(&l, rec->event->meta.name);
		lb_put(&l, ": ", 2);
		lb_str(&l, fields);
		lb_put(&l, " */", 3);
	}
	end(g, &l);
	return 0;
}

struct trail_output *trail_output_fgraph_create(const struct trail_fgraph_opts *opts)
{
	static const struct trail_output ops = {
		.name = "fgraph", .begin = begin, .event = record, .free = fgraph_free,
	};
	struct fgraph *g;

	if (!opts || opts->sz < sizeof(*opts) || !opts->out) {
		errno = EINVAL;
		return NULL;
	}
	g = trail__output_new(sizeof(*g), &ops);
	if (!g)
		return NULL;
	g->f = opts->out;
	g->proc = opts->proc;
	g->quiet = opts->quiet;
	return &g->out;
}
