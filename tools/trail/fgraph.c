/* SPDX-License-Identifier: MIT */
/* fgraph.c - the function_graph report layout; see fgraph.h. */
#include "fgraph.h"

#include <stdlib.h>
#include <string.h>

struct gpend {
	uint64_t func;
	uint64_t ts;
};

struct gstream {
	struct gpend *stack;
	size_t depth, cap;
	int skip_exit; /* the next exit was printed with its leaf entry */
};

struct fgraph {
	struct trail_reader *r;
	int proc;
	struct gstream *st;
	size_t nst;
	const struct trail_rstream *last;
};

struct fgraph *fgraph_new(struct trail_reader *r, int proc)
{
	const struct trail_rstream *const *streams;
	struct fgraph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->r = r;
	g->proc = proc;
	g->nst = trail_reader_streams(r, &streams);
	g->st = calloc(g->nst ? g->nst : 1, sizeof(*g->st));
	if (!g->st) {
		free(g);
		return NULL;
	}
	return g;
}

void fgraph_free(struct fgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nst; i++)
		free(g->st[i].stack);
	free(g->st);
	free(g);
}

static int is(const struct trail_record *rec, const char *name)
{
	return rec->type == TRAIL_RT_EVENT && !strcmp(rec->event->meta.provider, "ftrace") &&
	       !strcmp(rec->event->meta.name, name);
}

int fgraph_is_graph(const struct trail_record *rec)
{
	return is(rec, "funcgraph_entry") || is(rec, "funcgraph_exit") ||
	       is(rec, "funcgraph_exit_ret") || is(rec, "funcgraph_call");
}

const char *fgraph_duration(uint64_t ns, char *buf, size_t n)
{
	char us[32];
	unsigned long long u = (unsigned long long)(ns / 1000);
	int len = snprintf(us, sizeof(us), "%llu", u);
	char mark = ns > 1000000000ull ? '$' : ns > 100000000ull ? '@' :
		    ns > 10000000ull ? '*' : ns > 1000000ull ? '#' :
		    ns > 100000ull ? '!' : ns > 10000ull ? '+' : ' ';

	/* 7 characters of microseconds: as many of the 3 decimals as fit */
	if (len < 6) {
		int k = 6 - len > 3 ? 3 : 6 - len;
		unsigned long long frac = (unsigned long long)(ns % 1000);

		for (int i = k; i < 3; i++)
			frac /= 10;
		snprintf(us + len, sizeof(us) - (size_t)len, ".%0*llu", k, frac);
	}
	snprintf(buf, n, "%c %7s us", mark, us);
	return buf;
}

static uint64_t u64at(const struct trail_record *rec, unsigned i)
{
	uint64_t v = 0;

	if (rec->len >= (i + 1) * 8)
		memcpy(&v, rec->payload + i * 8, 8);
	return v;
}

/* "func()" as ftrace writes calls; a demangled C++ name has its own
 * parameter list already */
static void name_of(struct fgraph *g, const struct trail_record *rec, uint64_t ip,
		    char *buf, size_t n)
{
	const char *name = trail_reader_symbol(g->r, rec->stream->pid, ip, rec->ts_raw, NULL);

	if (name)
		snprintf(buf, n, "%s%s", name, strchr(name, '(') ? "" : "()");
	else
		snprintf(buf, n, "0x%llx()", (unsigned long long)ip);
}

static void line(struct fgraph *g, FILE *out, const struct trail_record *rec, int with_dur,
		 uint64_t dur, size_t depth, const char *text)
{
	const struct trail_rstream *st = rec->stream;
	char d[48];

	if (g->last && g->last != st) /* ftrace's context switch marker */
		fprintf(out, " ------------------------------------------\n"
			     " %3u) %s-%u => %s-%u\n"
			     " ------------------------------------------\n\n",
			rec->cpu == ~0u ? 0 : rec->cpu, g->last->comm, g->last->tid, st->comm,
			st->tid);
	g->last = st;
	if (rec->cpu == ~0u)
		fputs(" \?\?\?) ", out);
	else
		fprintf(out, " %3u) ", rec->cpu);
	if (g->proc)
		fprintf(out, "%*s-%-7u | ", 16, st->comm, st->tid);
	if (with_dur)
		fprintf(out, "%s  |  ", fgraph_duration(dur, d, sizeof(d)));
	else
		fprintf(out, "%*s  |  ", 12, "");
	fprintf(out, "%*s%s\n", (int)(2 * depth), "", text);
}

static struct gstream *gs(struct fgraph *g, const struct trail_record *rec)
{
	return rec->stream->order < g->nst ? &g->st[rec->stream->order] : NULL;
}

static int push(struct gstream *s, uint64_t func, uint64_t ts)
{
	if (s->depth == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		void *p = realloc(s->stack, cap * sizeof(*s->stack));

		if (!p)
			return -1;
		s->stack = p;
		s->cap = cap;
	}
	s->stack[s->depth++] = (struct gpend){func, ts};
	return 0;
}

void fgraph_record(struct fgraph *g, const struct trail_record *rec, FILE *out)
{
	struct gstream *s = gs(g, rec);
	char name[512], text[1200];

	if (!s)
		return;
	if (is(rec, "funcgraph_entry")) {
		struct trail_record next;
		uint64_t func = u64at(rec, 0);

		name_of(g, rec, func, name, sizeof(name));
		/* a leaf when the thread's next record is this call's exit */
		if (trail_reader_peek(g->r, rec->stream, &next) &&
		    (is(&next, "funcgraph_exit") || is(&next, "funcgraph_exit_ret"))) {
			if (is(&next, "funcgraph_exit_ret"))
				snprintf(text, sizeof(text), "%s; /* = 0x%llx */", name,
					 (unsigned long long)u64at(&next, 0));
			else
				snprintf(text, sizeof(text), "%s;", name);
			line(g, out, rec, 1, next.ts_ns - rec->ts_ns, s->depth, text);
			s->skip_exit = 1;
			return;
		}
		snprintf(text, sizeof(text), "%s {", name);
		line(g, out, rec, 0, 0, s->depth, text);
		push(s, func, rec->ts_ns);
		return;
	}
	if (is(rec, "funcgraph_exit") || is(rec, "funcgraph_exit_ret")) {
		struct gpend p = {0, rec->ts_ns};

		if (s->skip_exit) {
			s->skip_exit = 0;
			return;
		}
		if (s->depth)
			p = s->stack[--s->depth];
		name_of(g, rec, p.func, name, sizeof(name));
		name[strcspn(name, "(")] = '\0'; /* closing: the bare name */
		if (is(rec, "funcgraph_exit_ret"))
			snprintf(text, sizeof(text), "} /* %s = 0x%llx */", name,
				 (unsigned long long)u64at(rec, 0));
		else
			snprintf(text, sizeof(text), "} /* %s */", name);
		line(g, out, rec, 1, rec->ts_ns - p.ts, s->depth, text);
		return;
	}
	if (is(rec, "funcgraph_call")) { /* threshold mode: long calls only */
		uint64_t dur = u64at(rec, 1);

		name_of(g, rec, u64at(rec, 0), name, sizeof(name));
		name[strcspn(name, "(")] = '\0';
		snprintf(text, sizeof(text), "} /* %s */", name);
		/* the duration is in clock ticks: convert as a span */
		line(g, out, rec, 1,
		     trail_reader_to_ns(g->r, rec->ts_raw) - trail_reader_to_ns(g->r, rec->ts_raw - dur),
		     0, text);
		return;
	}
	/* anything else, as a comment at the current depth */
	if (rec->type == TRAIL_RT_LOST) {
		snprintf(text, sizeof(text), "/* [LOST %llu EVENTS] */",
			 (unsigned long long)rec->lost);
	} else {
		char fields[1000];

		trail_format_fields(rec->event, rec->payload, rec->len, fields, sizeof(fields));
		snprintf(text, sizeof(text), "/* %s:%s: %s */", rec->event->meta.provider,
			 rec->event->meta.name, fields);
	}
	line(g, out, rec, 0, 0, s->depth, text);
}
