/* SPDX-License-Identifier: MIT */
/*
 * textrange.c - the records of a trace file in a time range, as `trail
 * report` prints them, with a caller's lines put in among them by time:
 * what trail mount's trace and trace_pipe print (its trace_marker lines
 * among the records), and a recording's --tp-printk lines.
 */
#include <stdio.h>

#include "../../src/export/output.h"
#include "../../src/export/text.h"
#include "textrange.h"

/* the report's text output, the caller's lines before each record */
struct wrap {
	struct trail_output o;
	struct trail_output *in;
	void (*before)(void *arg, uint64_t ns);
	void *arg;
};

static int w_begin(void *ctx, const struct trail_export_src *src)
{
	struct wrap *w = ctx;

	return w->in->begin ? w->in->begin(w->in->ctx, src) : 0;
}

static int w_event(void *ctx, const struct trail_record *rec)
{
	struct wrap *w = ctx;

	if (w->before)
		w->before(w->arg, rec->ts_ns);
	return w->in->event ? w->in->event(w->in->ctx, rec) : 0;
}

static int w_call(void *ctx, const struct trail_call *c)
{
	struct wrap *w = ctx;

	if (w->before)
		w->before(w->arg, c->kind == TRAIL_CALL_EXIT ? c->end_ns : c->start_ns);
	return w->in->call(w->in->ctx, c);
}

static int w_damage(void *ctx, const char *msg)
{
	struct wrap *w = ctx;

	return w->in->damage(w->in->ctx, msg);
}

static int w_end(void *ctx, const struct trail_export_src *src)
{
	struct wrap *w = ctx;

	return w->in->end ? w->in->end(w->in->ctx, src) : 0;
}

int text_range(const char *path, uint64_t lo, uint64_t hi, int quiet, FILE *f,
	       void (*before)(void *arg, uint64_t ns), void *arg)
{
	struct trail_text_opts to = {.sz = sizeof(to), .out = f, .quiet = quiet};
	struct trail_view v = {.sz = sizeof(v)};
	struct wrap w = {.before = before, .arg = arg};
	struct trail_reader *r;
	char err[512];
	int rc;

	if (trail_reader_open(path, &r, err, sizeof(err)))
		return -1;
	if (!(w.in = trail_output_text_create(&to))) {
		trail_reader_close(r);
		return -1;
	}
	w.o = (struct trail_output){
		.name = "range", .ctx = &w, .begin = w_begin, .event = w_event,
		.call = w.in->call ? w_call : NULL, .whole_calls = w.in->whole_calls,
		.damage = w.in->damage ? w_damage : NULL, .end = w_end,
	};
	v.has_start = 1;
	v.start_ns = lo + 1;
	if (hi != UINT64_MAX) {
		v.has_end = 1;
		v.end_ns = hi;
	}
	rc = trail_export_run(r, "trace", &v, &w.o, err, sizeof(err));
	trail_output_free(w.in);
	trail_reader_close(r);
	return rc ? -1 : 0;
}
