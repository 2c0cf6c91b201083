/* SPDX-License-Identifier: MIT */
/* fgraph.c - the function_graph layout, an output; see fgraph.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fgraph.h"
#include "argtypes.h"
#include "evline.h"
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

struct fgraph {
	struct trail_output out;
	const struct trail_export_src *src;
	FILE *f;
	int proc, quiet, abstime, abstime_ns;
	const struct trail_rstream *last;
	uint32_t *depth; /* by stream: the depth of what comes next */
	size_t nst;
	size_t line_depth; /* of the line being built, if past the indentation cap */
	struct trail_argtypes *types; /* --args, typed --retval: from DWARF */
};

static int begin(void *ctx, const struct trail_export_src *src)
{
	struct fgraph *g = ctx;

	g->src = src;
	g->nst = src->nstreams;
	g->depth = calloc(g->nst ? g->nst : 1, sizeof(*g->depth));
	g->types = trail_argtypes_new(src->reader);
	if (!g->depth || !g->types)
		return -ENOMEM;
	if (!g->quiet)
		fprintf(g->f, "# tracer: function_graph\n#\n#%s CPU)%s  DURATION      |  FUNCTION CALLS\n"
			"#%s  |  %s   |   |          |   |   |   |\n",
			g->abstime ? (g->abstime_ns ? "        TIME          " : "     TIME       ") : "",
			g->proc ? "           TASK-TID     " : "",
			g->abstime ? (g->abstime_ns ? "          |           " : "      |         ") : "",
			g->proc ? "              |         " : "");
	return 0;
}

static void fgraph_free(void *ctx)
{
	struct fgraph *g = ctx;

	if (g) {
		free(g->depth);
		trail_argtypes_free(g->types);
	}
	free(g);
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

/* "func()" as ftrace writes calls (a demangled C++ name has its own
 * parameter list already); bare: "func" */
static void name_of(const struct trail_call *c, int bare, struct lbuf *l)
{
	if (c->name) {
		const char *paren = strchr(c->name, '(');

		if (bare && paren)
			lb_put(l, c->name, (size_t)(paren - c->name));
		else
			lb_str(l, c->name);
		if (!bare && !paren)
			lb_put(l, "()", 2);
	} else {
		lb_hex(l, (unsigned long long)c->func);
		if (!bare)
			lb_put(l, "()", 2);
	}
}

/* The columns before the call text: the absolute time with abstime, CPU,
 * TASK-PID with -O fgraph:proc, duration, and the indentation of depth. */
static void lead(struct fgraph *g, FILE *out, struct lbuf *l, const struct trail_rstream *st,
		 uint32_t cpu, uint64_t ts, int with_dur, uint64_t dur, size_t depth)
{
	if (g->last && g->last != st) /* ftrace's context switch marker */
		fprintf(out, " ------------------------------------------\n"
			     " %3u) %s-%u => %s-%u\n"
			     " ------------------------------------------\n\n",
			cpu == ~0u ? 0 : cpu, g->last->comm, g->last->tid, st->comm, st->tid);
	g->last = st;
	lb_init(l, out);
	if (g->abstime) { /* ftrace's funcgraph-abstime: when the line happened */
		lb_num(l, ts / 1000000000ull, 6, ' ');
		lb_put(l, ".", 1);
		if (g->abstime_ns)
			lb_num(l, ts % 1000000000ull, 9, '0');
		else
			lb_num(l, ts % 1000000000ull / 1000, 6, '0');
		lb_put(l, " |", 2);
	}
	if (cpu == ~0u) {
		lb_str(l, " \?\?\?) ");
	} else {
		lb_put(l, " ", 1);
		lb_num(l, cpu, 3, ' ');
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

/* the function's name without a C++ parameter list, for DWARF */
static const char *bare_name(const struct trail_call *c, char *buf, size_t n)
{
	return trail_argtypes_bare(c->name, buf, n);
}

/* The call's name with its arguments (record --args) as its DWARF types
 * show them: "parse(path=0x55d0c0a01234, flags=42)" */
static void call_text(struct fgraph *g, const struct trail_call *c, struct lbuf *l)
{
	char buf[512];

	if (c->flags & TRAIL_CALL_ARGS) {
		name_of(c, 1, l);
		if (!trail_argtypes_args(g->types, c->stream->pid, c->func, c->ts_raw,
					 bare_name(c, buf, sizeof(buf)), c->args, l))
			lb_put(l, "()", 2);
		return;
	}
	name_of(c, 0, l);
}

/* Does the call have a return value to show? Not when DWARF says its
 * function returns void (the kernel's funcgraph-retval with BTF). */
static int has_retval(struct fgraph *g, const struct trail_call *c)
{
	char buf[512];

	return (c->flags & TRAIL_CALL_RETVAL) &&
	       trail_argtypes_retval(g->types, c->stream->pid, c->func, c->ts_raw,
				     bare_name(c, buf, sizeof(buf)), c->retval, NULL) != 0;
}

/* " = value" (open: " / * = value", the comment opened): by the function's return type from
 * DWARF, trimmed to its width, signed or unsigned in decimal, pointers in
 * hex; with no type known, the kernel's funcgraph-retval without types: an
 * error code (-4095..-1) in decimal, anything else in hex; an int's error
 * code too (its upper 32 bits of %rax are zero, not a sign extension) */
static void retval(struct fgraph *g, struct lbuf *l, const struct trail_call *c, int open)
{
	int64_t v = (int64_t)c->retval;
	char buf[512];

	lb_put(l, open ? " /* = " : " = ", open ? 6 : 3);
	if (trail_argtypes_retval(g->types, c->stream->pid, c->func, c->ts_raw,
				  bare_name(c, buf, sizeof(buf)), c->retval, l) > 0)
		return;
	if (!(c->retval >> 32))
		v = (int32_t)(uint32_t)c->retval;
	if (v < 0 && v >= -4095) {
		lb_put(l, "-", 1);
		lb_num(l, (unsigned long long)-v, 0, ' ');
	} else {
		lb_hex(l, (unsigned long long)c->retval);
	}
}

/* record --counters: "diff: page-faults=+3 task-clock=+1.200us" in a comment
 * (uftrace's read=pmu-* comment), times in microseconds */
static void counters(struct lbuf *l, const struct trail_call *c)
{
	lb_put(l, "/* diff:", 8);
	for (uint32_t i = 0; i < c->nctr; i++) {
		lb_put(l, " ", 1);
		lb_str(l, trail_call_counter_name(c, i));
		lb_put(l, "=+", 2);
		if (trail_call_counter_is_ns(c, i)) {
			char frac[4];

			lb_num(l, (unsigned long long)(c->ctr[i] / 1000), 0, ' ');
			frac[0] = '.';
			frac[1] = (char)('0' + c->ctr[i] % 1000 / 100);
			frac[2] = (char)('0' + c->ctr[i] % 100 / 10);
			frac[3] = (char)('0' + c->ctr[i] % 10);
			lb_put(l, frac, 4);
			lb_put(l, "us", 2);
		} else {
			lb_num(l, (unsigned long long)c->ctr[i], 0, ' ');
		}
	}
	lb_put(l, " */", 3);
}

static int call(void *ctx, const struct trail_call *c)
{
	struct fgraph *g = ctx;
	FILE *out = g->f;
	struct lbuf l;

	if (c->stream->order < g->nst)
		g->depth[c->stream->order] = c->kind == TRAIL_CALL_ENTRY ? c->depth + 1 :
					     c->kind == TRAIL_CALL_EXIT ? c->depth :
					     g->depth[c->stream->order];
	switch (c->kind) {
	case TRAIL_CALL_ENTRY:
		lead(g, out, &l, c->stream, c->cpu, c->start_ns, 0, 0, c->depth);
		call_text(g, c, &l);
		lb_put(&l, " {", 2);
		break;
	case TRAIL_CALL_LEAF:
		if (c->flags & TRAIL_CALL_THRESH) { /* a record-time threshold call */
			lead(g, out, &l, c->stream, c->cpu, c->end_ns, 1, c->end_ns - c->start_ns, 0);
			lb_put(&l, "} /* ", 5);
			name_of(c, 1, &l);
			lb_put(&l, " */", 3);
			break;
		}
		lead(g, out, &l, c->stream, c->cpu, c->start_ns, 1, c->end_ns - c->start_ns,
		     c->depth);
		call_text(g, c, &l);
		lb_put(&l, ";", 1);
		if (has_retval(g, c)) {
			retval(g, &l, c, 1);
			lb_put(&l, " */", 3);
		}
		if (c->flags & TRAIL_CALL_COUNTERS) {
			lb_put(&l, " ", 1);
			counters(&l, c);
		}
		break;
	case TRAIL_CALL_EXIT:
		/* a call still open when the trace (or a loss) cut it: ftrace
		 * prints nothing for it */
		if (c->flags & TRAIL_CALL_OPEN)
			return 0;
		if (c->flags & TRAIL_CALL_COUNTERS) { /* a line in its body */
			lead(g, out, &l, c->stream, c->cpu, c->end_ns, 0, 0, c->depth + 1);
			counters(&l, c);
			end(g, &l);
		}
		/* the duration is known when the entry is in this stream; the
		 * return from an inherited frame or one whose entry was lost
		 * has none */
		lead(g, out, &l, c->stream, c->cpu, c->end_ns, !(c->flags & TRAIL_CALL_NOSTART),
		     c->end_ns - c->start_ns, c->depth);
		lb_put(&l, "}", 1);
		if (c->func) {
			lb_put(&l, " /* ", 4);
			name_of(c, 1, &l); /* closing: the bare name */
		}
		if (has_retval(g, c)) {
			retval(g, &l, c, !c->func);
			lb_put(&l, " */", 3);
		} else if (c->func) {
			lb_put(&l, " */", 3);
		}
		break;
	default:
		return 0;
	}
	end(g, &l);
	return 0;
}

/* Records of other events, as comments in the tree */
static int record(void *ctx, const struct trail_record *rec)
{
	struct fgraph *g = ctx;
	uint32_t depth = rec->stream->order < g->nst ? g->depth[rec->stream->order] : 0;
	struct lbuf l;

	lead(g, g->f, &l, rec->stream, rec->cpu, rec->ts_ns, 0, 0, depth);
	if (rec->type == TRAIL_RT_LOST) {
		lb_put(&l, "/* [LOST ", 9);
		lb_num(&l, (unsigned long long)rec->lost, 0, ' ');
		lb_put(&l, " EVENTS] */", 11);
	} else {
		lb_put(&l, "/* ", 3);
		trail_text_event(&l, g->src, rec);
		lb_put(&l, " */", 3);
	}
	end(g, &l);
	return 0;
}

struct trail_output *trail_output_fgraph_create(const struct trail_fgraph_opts *opts)
{
	static const struct trail_output ops = {
		.name = "fgraph", .begin = begin, .event = record, .call = call,
		.free = fgraph_free,
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
	g->abstime = opts->abstime;
	g->abstime_ns = opts->abstime_ns;
	return &g->out;
}
