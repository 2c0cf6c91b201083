/* SPDX-License-Identifier: MIT */
/*
 * text.c - ftrace's text layouts for `trail report`, as outputs (text.h):
 *
 *   cpus=2
 *   # entries-in-buffer/entries-written: 2000/2000   #P:2
 *   ...per-stream accounting...
 *   #           TASK-PID     CPU#      TIMESTAMP  FUNCTION
 *            example-4242  [001]  5012.104432: app:request: fd=3 path="/etc/hosts" bytes=0x200
 *
 * The function tracer's records are ftrace's "func <-parent" lines, every
 * other event its fields in ftrace's format; a function_graph recording is
 * handed to fgraph.c. --count replaces the lines with a table of events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/arena.h"
#include "fgraph.h"
#include "formats.h"
#include "lbuf.h"
#include "evline.h"
#include "text.h"

struct evcount {
	const struct trail_revent *ev;
	uint64_t n;
};

struct text {
	struct trail_output out;
	struct trail_text_opts o;
	const struct trail_export_src *src; /* from begin() to end() */
	struct trail_output *fg; /* a function_graph file's layout, once known */
	/* count */
	struct evcount *v;
	size_t n, last;
	uint64_t lost, lost_recs;
};

static void header(FILE *f, const struct trail_export_src *src, size_t max_streams)
{
	struct trail_reader *r = src->reader;
	const struct trail_file_hdr *h = src->hdr;
	const struct trail_rstream *const *st = src->streams;
	size_t n = src->nstreams;
	uint64_t in = 0, lost = 0, nostream = trail_reader_nostream_lost(r);
	uint64_t damaged = trail_reader_damaged_events(r), gone_streams;
	uint64_t gone = trail_reader_gone_lost(r, &gone_streams);
	const char *v;

	fprintf(f, "cpus=%u\n", h->ncpus);
	fprintf(f, "# trail trace %s", src->path);
	if ((v = trail_reader_info(r, "command")) && *v)
		fprintf(f, " of: %s", v);
	fprintf(f, "\n# clock: %s, mode: %s",
		h->clock == TRAIL_CLOCK_TSC ? "tsc (shown as CLOCK_MONOTONIC)" : "CLOCK_MONOTONIC",
		(h->flags & TRAIL_ARENA_OVERWRITE) ? "overwrite (flight recorder)" : "discard");
	if ((v = trail_reader_info(r, "blocking_timeout")))
		fprintf(f, " (blocking up to %s)", v);
	if ((v = trail_reader_info(r, "buffer_bytes")))
		fprintf(f, ", buffer: %llu KiB", strtoull(v, NULL, 10) / 1024);
	if ((v = trail_reader_info(r, "events")) && *v)
		fprintf(f, ", events: %s", v);
	if ((v = trail_reader_info(r, "tracer")) && *v) {
		fprintf(f, ", tracer: %s", v);
		if ((v = trail_reader_info(r, "functions")) && *v)
			fprintf(f, " %s", v);
	}
	fprintf(f, "\n");
	for (int t = 0; t < 2; t++) /* record -f, -T */
		for (int k = 1;; k++) {
			char key[32];

			snprintf(key, sizeof(key), "%s%d", t ? "trigger" : "filter", k);
			if (!(v = trail_reader_info(r, key)))
				break;
			fprintf(f, "# %s: %s\n", t ? "trigger" : "filter", v);
		}
	fprintf(f, "#\n");
	for (size_t i = 0; i < n; i++) {
		in += st[i]->in_file;
		lost += st[i]->dropped + st[i]->overwritten;
	}
	lost += nostream + gone;
	fprintf(f, "# entries-in-buffer/entries-written: %llu/%llu   #P:%u\n",
		(unsigned long long)in, (unsigned long long)(in + lost + damaged), h->ncpus);
	if (damaged)
		fprintf(f, "# DAMAGED: %llu events written could not be read (the file is damaged: "
			"see the messages on stderr)\n", (unsigned long long)damaged);
	if (trail_reader_graph_unhooked(r))
		fprintf(f, "# function_graph: %llu calls deeper than a thread's shadow stack "
			"(16384 frames) were not traced\n",
			(unsigned long long)trail_reader_graph_unhooked(r));
	if (nostream)
		fprintf(f, "# LOST %llu EVENTS with no stream (stream table full, or nested > 4 deep)\n",
			(unsigned long long)nostream);
	if (gone)
		fprintf(f, "# %llu events of %llu threads that ended were all overwritten "
			"(those threads are not listed)\n",
			(unsigned long long)gone, (unsigned long long)gone_streams);
	fprintf(f, "#\n# %-26s %6s %6s  %-35s %s\n", "TASK-PID/TID", "STREAM", "LEVEL",
		"entries-in-buffer/entries-written", "lost");
	for (size_t i = 0; i < n; i++) {
		char task[64], counts[64];

		if (i == max_streams) {
			fprintf(f, "# ... %zu more streams ('trail report --stat' lists them all)\n",
				n - i);
			break;
		}
		uint64_t l = st[i]->dropped + st[i]->overwritten;

		snprintf(task, sizeof(task), "%.16s-%u/%u", st[i]->comm, st[i]->pid, st[i]->tid);
		if (st[i]->final)
			snprintf(counts, sizeof(counts), "%llu/%llu",
				 (unsigned long long)st[i]->in_file,
				 (unsigned long long)(st[i]->in_file + l));
		else
			snprintf(counts, sizeof(counts), "%llu/?", (unsigned long long)st[i]->in_file);
		fprintf(f, "# %-26s %6u %6u  %-35s ", task, st[i]->order, st[i]->level, counts);
		if (st[i]->final)
			fprintf(f, "%llu", (unsigned long long)l);
		else
			fprintf(f, "? (no final accounting)");
		if (l && st[i]->dropped)
			fprintf(f, " (%llu dropped: buffer full)", (unsigned long long)st[i]->dropped);
		if (st[i]->overwritten)
			fprintf(f, " (%llu overwritten)", (unsigned long long)st[i]->overwritten);
		fprintf(f, "\n");
	}
	fprintf(f, "#\n#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
		"#              | |         |         |         |\n");
}

/* The header, unless quiet: both layouts start with it. */
static int count_begin(void *ctx, const struct trail_export_src *src)
{
	struct text *t = ctx;

	t->src = src;
	if (!t->o.quiet)
		header(t->o.out, src, t->o.stat ? (size_t)-1 : 64);
	return 0;
}

/* "%16s-%-7u [%03u] %6llu.%06llu: " */
static void prefix(struct lbuf *l, const struct trail_record *rec, int ns_ts)
{
	const struct trail_rstream *st = rec->stream;
	size_t cl = strnlen(st->comm, 16);
	uint64_t sec = rec->ts_ns / 1000000000ull, frac = rec->ts_ns % 1000000000ull;

	lb_pad(l, cl < 16 ? 16 - cl : 0, ' ');
	lb_put(l, st->comm, cl);
	lb_put(l, "-", 1);
	lb_num_left(l, st->tid, 7);
	lb_put(l, " [", 2);
	if (rec->cpu == ~0u)
		lb_put(l, "???", 3);
	else
		lb_num(l, rec->cpu, 3, '0');
	lb_put(l, "] ", 2);
	lb_num(l, sec, 6, ' ');
	lb_put(l, ".", 1);
	if (ns_ts)
		lb_num(l, frac, 9, '0');
	else
		lb_num(l, frac / 1000, 6, '0');
	lb_put(l, ": ", 2);
}

/* ftrace's function tracer line: "func <-parent" */
static void function_line(struct lbuf *l, const struct trail_export_src *src,
			  const struct trail_record *rec, uint64_t ip, uint64_t parent)
{
	trail_text_addr(l, src, rec->stream->pid, ip, rec->ts_raw);
	lb_put(l, " <-", 3);
	trail_text_addr(l, src, rec->stream->pid, parent, rec->ts_raw);
}

/* A function_graph recording is shown in its own layout: the recording's
 * tracer says which, or the first thing shown. */
static int to_graph(struct text *t)
{
	struct trail_fgraph_opts fo = {
		.sz = sizeof(fo), .out = t->o.out, .proc = t->o.graph_proc, .quiet = t->o.quiet,
		.abstime = t->o.graph_abstime, .abstime_ns = t->o.ns_ts,
	};

	t->fg = trail_output_fgraph_create(&fo);
	if (!t->fg)
		return -errno;
	return t->fg->begin(t->fg->ctx, t->src);
}

static int text_begin(void *ctx, const struct trail_export_src *src)
{
	struct text *t = ctx;

	const char *tracer = trail_reader_info(src->reader, "tracer");

	count_begin(ctx, src);
	if (t->o.stat)
		return TRAIL_OUTPUT_DONE; /* --stat: no records read */
	return tracer && !strcmp(tracer, "function_graph") ? to_graph(t) : 0;
}

static int text_call(void *ctx, const struct trail_call *c)
{
	struct text *t = ctx;
	int rc;

	if (!t->fg && (rc = to_graph(t)))
		return rc;
	return t->fg->call(t->fg->ctx, c);
}

static int text_event(void *ctx, const struct trail_record *rec)
{
	struct text *t = ctx;
	uint64_t ip, parent;
	struct lbuf l;

	if (t->fg)
		return t->fg->event(t->fg->ctx, rec);
	lb_init(&l, t->o.out);
	prefix(&l, rec, t->o.ns_ts);
	if (rec->type == TRAIL_RT_LOST) {
		lb_put(&l, "[LOST ", 6);
		lb_num(&l, (unsigned long long)rec->lost, 0, ' ');
		lb_put(&l, " EVENTS]", 8);
	} else if (trail_export_function(rec, &ip, &parent)) {
		function_line(&l, t->src, rec, ip, parent);
	} else {
		trail_text_event(&l, t->src, rec);
	}
	lb_end(&l);
	return 0;
}

static int text_end(void *ctx, const struct trail_export_src *src)
{
	struct text *t = ctx;
	int rc = 0;

	if (t->fg && t->fg->end)
		rc = t->fg->end(t->fg->ctx, src);
	if (fflush(t->o.out) || ferror(t->o.out))
		return rc ? rc : -EIO;
	return rc;
}

/* --count: the records of each event, and the LOST records' sum */
static int count_event(void *ctx, const struct trail_record *rec)
{
	struct text *t = ctx;

	if (rec->type == TRAIL_RT_LOST) {
		t->lost += rec->lost;
		t->lost_recs++;
		return 0;
	}
	if (rec->type != TRAIL_RT_EVENT)
		return 0;
	if (t->last < t->n && t->v[t->last].ev == rec->event) {
		t->v[t->last].n++;
		return 0;
	}
	for (t->last = 0; t->last < t->n && t->v[t->last].ev != rec->event; t->last++)
		;
	if (t->last == t->n) {
		struct evcount *nv = realloc(t->v, (t->n + 1) * sizeof(*t->v));

		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->v[t->n++] = (struct evcount){rec->event, 0};
	}
	t->v[t->last].n++;
	return 0;
}

static int evcount_cmp(const void *a, const void *b)
{
	const struct trail_meta *x = &((const struct evcount *)a)->ev->meta;
	const struct trail_meta *y = &((const struct evcount *)b)->ev->meta;
	int d = strcmp(x->provider, y->provider);

	return d ? d : strcmp(x->name, y->name);
}

static int count_end(void *ctx, const struct trail_export_src *src)
{
	struct text *t = ctx;
	FILE *f = t->o.out;

	(void)src;
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), evcount_cmp);
	fprintf(f, "# %-38s %s\n", "EVENT", "RECORDS");
	for (size_t i = 0; i < t->n; i++) {
		char name[256];

		snprintf(name, sizeof(name), "%s:%s", t->v[i].ev->meta.provider,
			 t->v[i].ev->meta.name);
		fprintf(f, "  %-38s %llu\n", name, (unsigned long long)t->v[i].n);
	}
	if (t->lost_recs)
		fprintf(f, "  %-38s %llu (%llu events)\n", "[LOST]",
			(unsigned long long)t->lost_recs, (unsigned long long)t->lost);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

static void text_free(void *ctx)
{
	struct text *t = ctx;

	trail_output_free(t->fg);
	free(t->v);
	free(t);
}

static struct trail_output *create(const struct trail_text_opts *opts,
				   const struct trail_output *ops)
{
	struct text *t;

	if (!opts || opts->sz < sizeof(*opts) || !opts->out) {
		errno = EINVAL;
		return NULL;
	}
	t = trail__output_new(sizeof(*t), ops);
	if (!t)
		return NULL;
	t->o = *opts;
	return &t->out;
}

struct trail_output *trail_output_text_create(const struct trail_text_opts *opts)
{
	static const struct trail_output ops = {
		.name = "text", .begin = text_begin, .event = text_event, .call = text_call,
		.end = text_end,
		.free = text_free,
	};

	return create(opts, &ops);
}

struct trail_output *trail_output_count_create(const struct trail_text_opts *opts)
{
	static const struct trail_output ops = {
		.name = "count", .begin = count_begin, .event = count_event, .end = count_end,
		.free = text_free,
	};

	return create(opts, &ops);
}

struct trail_output *trail__export_text(const struct trail_export_opts *opts)
{
	struct trail_text_opts to = {.sz = sizeof(to), .out = opts->out};

	return trail_output_text_create(&to);
}
