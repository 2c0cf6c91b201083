/* SPDX-License-Identifier: MIT */
/*
 * summary.c - `trail report --summary`: where the time went, as a table
 * (uftrace report's, with min/avg/max): per function the calls, their
 * total time (callees included), self time (callees shown excluded), and
 * the shortest, mean and longest call; per thread or process on request.
 * For the records that are not calls (static events, the function
 * tracer's records), the count and rate of each event.
 *
 *   Total time   Self time       Calls     Average     Minimum     Maximum  Function
 *   ==========  ==========  ==========  ==========  ==========  ==========  ==============
 *     2.197 ms    3.512 us           1    2.197 ms    2.197 ms    2.197 ms  main
 *
 * Calls are counted by name pointer first (one hash probe a call; the
 * reader's names are stable strings), merged by name text at the end,
 * so a function known to several processes is one row. A function the
 * recording entered through a breakpoint (its symbol's TRAIL_SYM_TRAP)
 * is marked `[breakpoint]`: each of its calls took a trap (a few us),
 * which its callers' times hold, not the program's work. A call the file
 * holds only the return of (NOSTART) has no duration: it is counted in
 * no row. A call the trace ended inside (OPEN) counts with the time it
 * had run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"

struct row {
	const void *key;  /* name pointer, or the event */
	uint64_t addr;    /* a call without a name: its address */
	uint32_t group;   /* tid or pid with --by, else 0 */
	uint32_t gidx;    /* the stream the group was first seen in */
	uint64_t calls, total, self, min, max;
	uint64_t ctr[8]; /* record --counters: the calls' deltas, by column */
	int used;
	int trap; /* entered through a breakpoint (TRAIL_SYM_TRAP) */
};

struct table {
	struct row *v;
	size_t cap, n; /* cap a power of two */
};

struct summary {
	struct trail_output out;
	struct trail_summary_opts o;
	const struct trail_export_src *src;
	struct table funcs, events, fcalls; /* fcalls: the function tracer's */
	uint64_t first_ns, last_ns, lost, lost_recs;
	int any;
	/* record --counters: a column each counter the calls had, in the
	 * order first seen (perf's names; times: task-clock, cpu-clock) */
	const char *cname[8];
	int cns[8];
	unsigned ncol;
};

static uint64_t hash(const void *key, uint64_t addr, uint32_t group)
{
	uint64_t h = ((uint64_t)(uintptr_t)key ^ addr * 31 ^ (uint64_t)group << 32);

	return h * 0x9e3779b97f4a7c15ull;
}

static int grow(struct table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct row *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct row *r = &t->v[i];
		size_t j;

		if (!r->used)
			continue;
		for (j = hash(r->key, r->addr, r->group) >> 20 & (cap - 1); v[j].used;
		     j = (j + 1) & (cap - 1))
			;
		v[j] = *r;
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return 0;
}

static struct row *find(struct table *t, const void *key, uint64_t addr, uint32_t group)
{
	size_t j;

	if ((t->n + 1) * 2 > t->cap && grow(t))
		return NULL;
	for (j = hash(key, addr, group) >> 20 & (t->cap - 1); t->v[j].used;
	     j = (j + 1) & (t->cap - 1)) {
		struct row *r = &t->v[j];

		if (r->key == key && r->addr == addr && r->group == group)
			return r;
	}
	t->v[j] = (struct row){.key = key, .addr = addr, .group = group, .min = UINT64_MAX,
			       .used = 1};
	t->n++;
	return &t->v[j];
}

static uint32_t group_of(const struct summary *s, const struct trail_rstream *st)
{
	return s->o.by == TRAIL_SUMMARY_BY_THREAD ? st->tid :
	       s->o.by == TRAIL_SUMMARY_BY_PROCESS ? st->pid : 0;
}

static int sum_begin(void *ctx, const struct trail_export_src *src)
{
	struct summary *s = ctx;

	s->src = src;
	return 0;
}

static int sum_call(void *ctx, const struct trail_call *c)
{
	struct summary *s = ctx;
	struct row *r;
	uint64_t dur;

	if (c->kind == TRAIL_CALL_ENTRY || (c->flags & TRAIL_CALL_NOSTART))
		return 0;
	r = find(&s->funcs, c->name, c->name ? 0 : c->func, group_of(s, c->stream));
	if (!r)
		return -ENOMEM;
	if (r->calls == 0) {
		r->gidx = c->stream->order;
		r->trap = !!(trail_reader_symbol_flags(s->src->reader, c->stream->pid, c->func,
						       c->ts_raw) & TRAIL_SYM_TRAP);
	}
	dur = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
	if (!s->first_ns || c->start_ns < s->first_ns)
		s->first_ns = c->start_ns;
	if (c->end_ns > s->last_ns)
		s->last_ns = c->end_ns;
	r->calls++;
	r->total += dur;
	r->self += dur > c->child_ns ? dur - c->child_ns : 0;
	for (uint32_t i = 0; (c->flags & TRAIL_CALL_COUNTERS) && i < c->nctr; i++) {
		const char *name = trail_call_counter_name(c, i);
		unsigned k = 0;

		while (k < s->ncol && strcmp(s->cname[k], name))
			k++;
		if (k == s->ncol) {
			if (k == 8)
				continue;
			s->cname[k] = name;
			s->cns[k] = trail_call_counter_is_ns(c, i);
			s->ncol++;
		}
		r->ctr[k] += c->ctr[i];
	}
	if (dur < r->min)
		r->min = dur;
	if (dur > r->max)
		r->max = dur;
	s->any = 1;
	return 0;
}

static int sum_event(void *ctx, const struct trail_record *rec)
{
	struct summary *s = ctx;
	uint64_t ip, parent;
	struct row *r;

	if (!s->first_ns || rec->ts_ns < s->first_ns)
		s->first_ns = rec->ts_ns;
	if (rec->ts_ns > s->last_ns)
		s->last_ns = rec->ts_ns;
	if (rec->type == TRAIL_RT_LOST) {
		s->lost += rec->lost;
		s->lost_recs++;
		return 0;
	}
	if (rec->type != TRAIL_RT_EVENT)
		return 0;
	if (trail_export_function(rec, &ip, &parent)) {
		/* the function tracer: calls of each function, no durations */
		const char *name;

		name = trail_export_symbol(s->src, rec->stream->pid, ip, rec->ts_raw);
		r = find(&s->fcalls, name, name ? 0 : ip, group_of(s, rec->stream));
		if (r && !r->calls)
			r->trap = !!(trail_reader_symbol_flags(s->src->reader, rec->stream->pid, ip,
							       rec->ts_raw) & TRAIL_SYM_TRAP);
	} else {
		r = find(&s->events, rec->event, 0, group_of(s, rec->stream));
	}
	if (!r)
		return -ENOMEM;
	if (r->calls == 0)
		r->gidx = rec->stream->order;
	r->calls++;
	return 0;
}

/* ---- printing ---- */

/* "  2.197 ms": uftrace's unit column, 3 decimals */
static void put_time(FILE *f, uint64_t ns)
{
	static const char *const unit[] = {"ns", "us", "ms", " s"};
	unsigned u = 0;
	uint64_t scale = 1;

	while (u < 3 && ns >= scale * 1000) {
		scale *= 1000;
		u++;
	}
	if (!u)
		fprintf(f, "  %7llu %s", (unsigned long long)ns, unit[0]);
	else
		fprintf(f, "  %7.3f %s", (double)ns / (double)scale, unit[u]);
}

static const char *row_name(const struct row *r, int event, char *buf, size_t n)
{
	if (event) {
		const struct trail_revent *ev = r->key;

		snprintf(buf, n, "%s:%s", ev->meta.provider, ev->meta.name);
		return buf;
	}
	if (r->key)
		return r->key;
	snprintf(buf, n, "0x%llx", (unsigned long long)r->addr);
	return buf;
}

struct sortctx {
	int col, event;
};

static uint64_t col_value(const struct row *r, int col)
{
	switch (col) {
	case TRAIL_SUMMARY_SORT_CALLS:
		return r->calls;
	case TRAIL_SUMMARY_SORT_SELF:
		return r->self;
	case TRAIL_SUMMARY_SORT_AVG:
		return r->calls ? r->total / r->calls : 0;
	case TRAIL_SUMMARY_SORT_MIN:
		return r->min;
	case TRAIL_SUMMARY_SORT_MAX:
		return r->max;
	default:
		return r->total;
	}
}

static int by_text(const struct row *a, const struct row *b, int event)
{
	char x[512], y[512];
	int d = strcmp(row_name(a, event, x, sizeof(x)), row_name(b, event, y, sizeof(y)));

	if (d)
		return d;
	return a->group < b->group ? -1 : a->group > b->group;
}

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct row *a = pa, *b = pb;
	const struct sortctx *sc = arg;
	uint64_t x, y;

	if (sc->col == TRAIL_SUMMARY_SORT_NAME)
		return by_text(a, b, sc->event);
	x = col_value(a, sc->col);
	y = col_value(b, sc->col);
	if (x != y)
		return x > y ? -1 : 1; /* the biggest first */
	return by_text(a, b, sc->event);
}

/* The rows in use, one per (name text, group), sorted. *n: how many. */
static struct row *rows(struct table *t, int event, int col, size_t *n)
{
	struct row *v = malloc((t->n ? t->n : 1) * sizeof(*v));
	struct sortctx sc = {TRAIL_SUMMARY_SORT_NAME, event};
	size_t k = 0, out = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->cap; i++)
		if (t->v[i].used)
			v[k++] = t->v[i];
	qsort_r(v, k, sizeof(*v), row_cmp, &sc);
	for (size_t i = 0; i < k; i++) {
		if (out && !by_text(&v[out - 1], &v[i], event)) {
			struct row *r = &v[out - 1];

			r->calls += v[i].calls;
			r->total += v[i].total;
			r->self += v[i].self;
			r->min = v[i].min < r->min ? v[i].min : r->min;
			r->max = v[i].max > r->max ? v[i].max : r->max;
			r->trap |= v[i].trap;
			for (int k = 0; k < 8; k++)
				r->ctr[k] += v[i].ctr[k];
			continue;
		}
		v[out++] = v[i];
	}
	sc.col = col;
	qsort_r(v, out, sizeof(*v), row_cmp, &sc);
	*n = out;
	return v;
}

static const char *group_text(const struct summary *s, const struct row *r, char *buf, size_t n)
{
	const struct trail_rstream *st = r->gidx < s->src->nstreams ? s->src->streams[r->gidx] : NULL;

	snprintf(buf, n, "%s-%u", st ? st->comm : "?", r->group);
	return buf;
}

/* The Thread or Process column (--by), before the name: its title, its
 * rule, or a row's value; nothing when rows are by function alone. */
enum { COL_TITLE, COL_RULE, COL_ROW };

static void group_col(const struct summary *s, FILE *f, int what, const struct row *r)
{
	char g[64];

	if (s->o.by == TRAIL_SUMMARY_BY_FUNCTION)
		return;
	if (what == COL_TITLE)
		fprintf(f, "%-22s  ", s->o.by == TRAIL_SUMMARY_BY_THREAD ? "Thread" : "Process");
	else if (what == COL_RULE)
		fputs("======================  ", f);
	else
		fprintf(f, "%-22s  ", group_text(s, r, g, sizeof(g)));
}

/* A table's head: the columns before the group, the group, the name's. */
static void table_head(const struct summary *s, FILE *f, const char *cols, const char *rule,
		       const char *name)
{
	fputs(cols, f);
	group_col(s, f, COL_TITLE, NULL);
	fprintf(f, "%s\n", name);
	fputs(rule, f);
	group_col(s, f, COL_RULE, NULL);
	fputs("====================\n", f);
}

/* a row's record --counters columns: the calls' deltas, summed */
static void counter_cols(const struct summary *s, FILE *f, const struct row *r)
{
	for (unsigned k = 0; k < s->ncol; k++) {
		if (s->cns[k]) {
			fputs("  ", f);
			put_time(f, r->ctr[k]);
		} else {
			fprintf(f, "  %12llu", (unsigned long long)r->ctr[k]);
		}
	}
}

static void row_tail(const struct summary *s, FILE *f, const struct row *r, int event)
{
	char name[512];

	fputs("  ", f);
	group_col(s, f, COL_ROW, r);
	/* (each call trapped: its callers' time holds that, not work) */
	fprintf(f, "%s%s\n", row_name(r, event, name, sizeof(name)),
		!event && r->trap ? " [breakpoint]" : "");
}

static int sum_end(void *ctx, const struct trail_export_src *src)
{
	struct summary *s = ctx;
	FILE *f = s->o.out;
	int by_count = s->o.sort == TRAIL_SUMMARY_SORT_NAME ? TRAIL_SUMMARY_SORT_NAME :
		       TRAIL_SUMMARY_SORT_CALLS;
	char cols[256], rule[256];
	struct row *v;
	size_t n;

	(void)src;
	if (!s->any && !s->events.n && !s->fcalls.n) {
		/* (the caller names the file, as for every output's reason) */
		snprintf(s->src->err, s->src->errlen,
			 "nothing to summarize (no calls or events shown)");
		return -ENODATA;
	}
	if (s->any) {
		if (!(v = rows(&s->funcs, 0, s->o.sort, &n)))
			return -ENOMEM;
		size_t co, ro;

		co = (size_t)snprintf(cols, sizeof(cols), "%s",
				      "  Total time   Self time       Calls     Average     Minimum     Maximum");
		ro = (size_t)snprintf(rule, sizeof(rule), "%s",
				      "  ==========  ==========  ==========  ==========  ==========  ==========");
		for (unsigned k = 0; k < s->ncol; k++) {
			co += (size_t)snprintf(cols + co, sizeof(cols) - co, "  %12.12s", s->cname[k]);
			ro += (size_t)snprintf(rule + ro, sizeof(rule) - ro, "  ============");
		}
		snprintf(cols + co, sizeof(cols) - co, "  ");
		snprintf(rule + ro, sizeof(rule) - ro, "  ");
		table_head(s, f, cols, rule, "Function");
		for (size_t i = 0; i < n; i++) {
			const struct row *r = &v[i];

			put_time(f, r->total);
			put_time(f, r->self);
			fprintf(f, "  %10llu", (unsigned long long)r->calls);
			put_time(f, r->calls ? r->total / r->calls : 0);
			put_time(f, r->min);
			put_time(f, r->max);
			counter_cols(s, f, r);
			row_tail(s, f, r, 0);
		}
		free(v);
	}
	if (s->fcalls.n) {
		if (!(v = rows(&s->fcalls, 0, by_count, &n)))
			return -ENOMEM;
		if (s->any)
			fputc('\n', f);
		table_head(s, f, "       Calls  ", "  ==========  ",
			   "Function (the function tracer: calls, no durations)");
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "  %10llu", (unsigned long long)v[i].calls);
			row_tail(s, f, &v[i], 0);
		}
		free(v);
	}
	if (s->events.n) {
		double span = s->last_ns > s->first_ns ? (double)(s->last_ns - s->first_ns) / 1e9 : 0;

		if (!(v = rows(&s->events, 1, by_count, &n)))
			return -ENOMEM;
		if (s->any || s->fcalls.n)
			fputc('\n', f);
		table_head(s, f, "       Count      Rate/s  ", "  ==========  ==========  ", "Event");
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "  %10llu  %10.1f", (unsigned long long)v[i].calls,
				span > 0 ? (double)v[i].calls / span : 0.0);
			row_tail(s, f, &v[i], 1);
		}
		free(v);
		fprintf(f, "  over %.6f s\n", span);
	}
	if (s->lost_recs)
		fprintf(f, "  [LOST] %llu events in %llu places: the figures above miss them\n",
			(unsigned long long)s->lost, (unsigned long long)s->lost_recs);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

static void sum_free(void *ctx)
{
	struct summary *s = ctx;

	if (!s)
		return;
	free(s->funcs.v);
	free(s->events.v);
	free(s->fcalls.v);
	free(s);
}

struct trail_output *trail_output_summary_create(const struct trail_summary_opts *opts)
{
	static const struct trail_output ops = {
		.name = "summary", .begin = sum_begin, .event = sum_event, .call = sum_call,
		.end = sum_end, .free = sum_free, .whole_calls = 1,
	};
	struct summary *s;

	if (!opts || opts->sz < sizeof(*opts) || !opts->out) {
		errno = EINVAL;
		return NULL;
	}
	s = trail__output_new(sizeof(*s), &ops);
	if (!s)
		return NULL;
	s->o = *opts;
	return &s->out;
}
