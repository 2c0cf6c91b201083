/* SPDX-License-Identifier: MIT */
/*
 * test-view.c - the view between the reader and the outputs
 * (src/export/view.c): function_graph records paired into calls, and the
 * selection every view applies (functions, depth, threshold, threads,
 * time). The traces are built byte by byte (tests/lib/tracebuild.c); an
 * output writes each call and event it gets as a line of a log, which the
 * tests compare with what ftrace's rules give:
 *
 *   E name depth start          a call begins
 *   X name depth start-end c=N  it ends, N ns in the children shown
 *   L name depth start-end      a leaf (nothing shown inside)
 *   V value @ts                 a t:u32 event
 *   LOST n                      a loss
 * Flags after: open (closed by the view), nostart, thresh.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "export/output.h"
#include "export/summary.h"
#include "reader-check.h"
#include "tracebuild.h"

enum { EV_ENTRY = 10, EV_EXIT, EV_LEAF, EV_CALL };

/* functions at 0x1000 * (i + 1) in process 42 */
static const char *const fnames[] = {"main", "a", "leaf", "b", "deep"};
#define F(i) (0x1000ull * ((i) + 1) + 0x10)
enum { MAIN, A, LEAF, B, DEEP };

static void header(struct tw *w)
{
	static const struct fdesc func[] = {{1, 8, 0x08, 0, "func"}};
	static const struct fdesc leaf[] = {{1, 8, 0x08, 0, "func"}, {1, 4, 0, 0, "duration"}};
	static const struct fdesc call[] = {{1, 8, 0x08, 0, "func"}, {1, 8, 0, 0, "duration"}};

	tw_header(w, CLOCK_MONO, 0);
	tw_std_events(w);
	tw_event(w, EV_ENTRY, "ftrace", "funcgraph_entry", func, 1);
	tw_event(w, EV_EXIT, "ftrace", "funcgraph_exit", NULL, 0);
	tw_event(w, EV_LEAF, "ftrace", "funcgraph_leaf", leaf, 2);
	tw_event(w, EV_CALL, "ftrace", "funcgraph_call", call, 2);
	for (unsigned i = 0; i < sizeof(fnames) / sizeof(fnames[0]); i++) {
		tw_symbols(w, i + 1, 0x1000ull * (i + 1), 0x100, fnames[i]);
		tw_module(w, 42, i + 1, 0, 0x1000ull * (i + 1), 0x1000ull * (i + 2), "/bin/prog");
	}
}

/* the records of a stream: "E main" at +d, "X", "V 7", "L leaf 30" (a
 * leaf record lasting 30), "C a 500" (a record-time threshold call) */
struct op {
	uint32_t delta;
	char kind;
	int fn;
	uint32_t v;
};

static void ops(struct rb *rb, const struct op *o, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t p[16];

		switch (o[i].kind) {
		case 'E':
			rb_hdr(rb, o[i].delta, REC_EVENT(EV_ENTRY));
			put64(p, F(o[i].fn));
			rb_raw(rb, p, 8);
			break;
		case 'X':
			rb_hdr(rb, o[i].delta, REC_EVENT(EV_EXIT));
			break;
		case 'V':
			rb_ev(rb, o[i].delta, o[i].v);
			break;
		case 'L':
			rb_hdr(rb, o[i].delta, REC_EVENT(EV_LEAF));
			put64(p, F(o[i].fn));
			put32(p + 8, o[i].v);
			rb_raw(rb, p, 12);
			break;
		case 'C':
			rb_hdr(rb, o[i].delta, REC_EVENT(EV_CALL));
			put64(p, F(o[i].fn));
			put64(p + 8, o[i].v);
			rb_raw(rb, p, 16);
			break;
		}
	}
}

struct logger {
	char buf[8192];
	size_t n;
	int order_ok;
	uint64_t last_ts[8];
};

static void logf_(struct logger *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct logger *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	l->n += (size_t)vsnprintf(l->buf + l->n, sizeof(l->buf) - l->n, fmt, ap);
	va_end(ap);
}

static int l_call(void *ctx, const struct trail_call *c)
{
	struct logger *l = ctx;
	const char *name = c->name ? c->name : "?";
	uint64_t ts = c->kind == TRAIL_CALL_EXIT ? c->end_ns : c->start_ns;

	if (c->stream->order < 8 && !(c->flags & (TRAIL_CALL_NOSTART | TRAIL_CALL_THRESH))) {
		if (ts < l->last_ts[c->stream->order])
			l->order_ok = 0;
		l->last_ts[c->stream->order] = ts;
	}
	if (c->kind == TRAIL_CALL_ENTRY)
		logf_(l, "E %s %u %llu", name, c->depth, (unsigned long long)c->start_ns);
	else if (c->kind == TRAIL_CALL_EXIT)
		logf_(l, "X %s %u %llu-%llu c=%llu", name, c->depth,
		      (unsigned long long)c->start_ns, (unsigned long long)c->end_ns,
		      (unsigned long long)c->child_ns);
	else
		logf_(l, "L %s %u %llu-%llu", name, c->depth, (unsigned long long)c->start_ns,
		      (unsigned long long)c->end_ns);
	if (c->flags & TRAIL_CALL_OPEN)
		logf_(l, " open");
	if (c->flags & TRAIL_CALL_NOSTART)
		logf_(l, " nostart");
	if (c->flags & TRAIL_CALL_THRESH)
		logf_(l, " thresh");
	logf_(l, "; ");
	return 0;
}

static int l_event(void *ctx, const struct trail_record *rec)
{
	struct logger *l = ctx;

	if (rec->stream->order < 8) {
		if (rec->ts_ns < l->last_ts[rec->stream->order])
			l->order_ok = 0;
		l->last_ts[rec->stream->order] = rec->ts_ns;
	}
	if (rec->type == TRAIL_RT_LOST) {
		logf_(l, "LOST %llu; ", (unsigned long long)rec->lost);
		return 0;
	}
	if (rec->len >= 4)
		logf_(l, "V %u @%llu; ", get32(rec->payload), (unsigned long long)rec->ts_ns);
	return 0;
}

/* The log of a view of the one-stream trace made of o (starting at 1000). */
static void view1(const struct op *o, size_t n, const struct trail_view *v, uint32_t lost_at,
		  struct logger *l)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 1000, 0, 42, 43, "prog", 0, -1};
	struct trail_output out = {.name = "log", .ctx = l, .event = l_event, .call = l_call};
	struct trail_reader *r;
	char err[256];

	memset(l, 0, sizeof(*l));
	l->order_ok = 1;
	header(&w);
	if (lost_at && lost_at < n) { /* two chunks, events lost between */
		struct rb rb2 = {.len = 0};
		struct chunk_desc c2 = c;
		uint64_t t = 1000;

		for (size_t i = 0; i < lost_at; i++)
			t += o[i].delta;
		ops(&rb, o, lost_at);
		tw_chunk(&w, &c, &rb);
		c2.seq = 1;
		c2.base_ts = t;
		c2.lost_before = 5;
		ops(&rb2, o + lost_at, n - lost_at);
		tw_chunk(&w, &c2, &rb2);
	} else {
		ops(&rb, o, n);
		tw_chunk(&w, &c, &rb);
	}
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	if (r) {
		CHECK_EQ(trail_export_run(r, "t", v, &out, err, sizeof(err)), 0);
		trail_reader_close(r);
	}
	tw_free(&w);
	if (l->n && l->buf[l->n - 1] == ' ')
		l->buf[--l->n] = '\0';
}

/* main { a { leaf; } V; b; } at 1000..: the tree most tests look at */
static const struct op tree[] = {
	{0, 'E', MAIN, 0},   /* 1000 */
	{10, 'E', A, 0},     /* 1010 */
	{10, 'E', LEAF, 0},  /* 1020 */
	{30, 'X', 0, 0},     /* 1050 */
	{150, 'X', 0, 0},    /* 1200: a lasted 190 */
	{10, 'V', 0, 7},     /* 1210 */
	{10, 'E', B, 0},     /* 1220 */
	{5, 'X', 0, 0},      /* 1225 */
	{75, 'X', 0, 0},     /* 1300: main 300 */
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

TEST(view_pairs_calls)
{
	struct logger l;

	view1(tree, N(tree), NULL, 0, &l);
	CHECK_STR(l.buf, "E main 0 1000; E a 1 1010; L leaf 2 1020-1050; X a 1 1010-1200 c=30; "
			 "V 7 @1210; L b 1 1220-1225; X main 0 1000-1300 c=195;");
	CHECK(l.order_ok);
}

/* the threshold keeps long calls with their callers, as a tree */
TEST(view_thresh_keeps_the_tree)
{
	struct trail_view v = {.sz = sizeof(v), .thresh_ns = 100};
	struct logger l;

	view1(tree, N(tree), &v, 0, &l);
	/* leaf (30) and b (5) go; a (190) stays a leaf now; the event stays */
	CHECK_STR(l.buf, "E main 0 1000; L a 1 1010-1200; V 7 @1210; X main 0 1000-1300 c=190;");
	CHECK(l.order_ok);
	v.thresh_ns = 250;
	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "E main 0 1000; V 7 @1210; X main 0 1000-1300 c=0;");
	v.thresh_ns = 301;
	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "V 7 @1210;");
}

TEST(view_max_depth)
{
	struct trail_view v = {.sz = sizeof(v), .max_depth = 1};
	struct logger l;

	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "E main 0 1000; V 7 @1210; X main 0 1000-1300 c=0;");
	v.max_depth = 2;
	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "E main 0 1000; L a 1 1010-1200; V 7 @1210; L b 1 1220-1225; "
			 "X main 0 1000-1300 c=195;");
}

TEST(view_functions)
{
	static const char *const a[] = {"a"}, *const ab[] = {"[ab]"}, *const le[] = {"le*"};
	struct trail_view v = {.sz = sizeof(v), .only = a, .nonly = 1};
	struct logger l;

	view1(tree, N(tree), &v, 0, &l); /* -l a: a alone, a leaf now */
	CHECK_STR(l.buf, "L a 0 1010-1200; V 7 @1210;");
	v = (struct trail_view){.sz = sizeof(v), .only = ab, .nonly = 1};
	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "L a 0 1010-1200; V 7 @1210; L b 0 1220-1225;");
	v = (struct trail_view){.sz = sizeof(v), .notrace = a, .nnotrace = 1};
	view1(tree, N(tree), &v, 0, &l); /* -n a: its callee stays, one level up */
	CHECK_STR(l.buf, "E main 0 1000; L leaf 1 1020-1050; V 7 @1210; L b 1 1220-1225; "
			 "X main 0 1000-1300 c=35;");
	v = (struct trail_view){.sz = sizeof(v), .graph = a, .ngraph = 1};
	view1(tree, N(tree), &v, 0, &l); /* -g a: a and what it calls */
	CHECK_STR(l.buf, "E a 0 1010; L leaf 1 1020-1050; X a 0 1010-1200 c=30; V 7 @1210;");
	v = (struct trail_view){.sz = sizeof(v), .graph = le, .ngraph = 1};
	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "L leaf 0 1020-1050; V 7 @1210;");
}

TEST(view_time_range)
{
	struct trail_view v = {.sz = sizeof(v), .has_start = 1, .start_ns = 1100};
	struct logger l;

	/* from 1100: a and main were entered before: their returns only */
	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "X a 1 0-1200 c=0 nostart; V 7 @1210; L b 1 1220-1225; "
			 "X main 0 0-1300 c=5 nostart;");
	/* up to 1215: what is open is closed there */
	v = (struct trail_view){.sz = sizeof(v), .has_end = 1, .end_ns = 1215};
	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "E main 0 1000; E a 1 1010; L leaf 2 1020-1050; X a 1 1010-1200 c=30; "
			 "V 7 @1210; X main 0 1000-1215 c=190 open;");
	/* relative: +15,+25 from the first record (1000) */
	v = (struct trail_view){.sz = sizeof(v), .has_start = 1, .start_ns = 15, .rel_start = 1,
				.has_end = 1, .end_ns = 25, .rel_end = 1};
	view1(tree, N(tree), &v, 0, &l);
	CHECK_STR(l.buf, "E leaf 2 1020; X leaf 2 1020-1025 c=0 open; X a 1 0-1025 c=5 open nostart; "
			 "X main 0 0-1025 c=0 open nostart;");
}

/* a trace that ends inside calls, and a loss that breaks the pairing */
TEST(view_open_and_lost)
{
	static const struct op cut[] = {
		{0, 'E', MAIN, 0}, {10, 'E', A, 0}, {10, 'V', 0, 1},
	};
	static const struct op lost[] = {
		{0, 'E', MAIN, 0}, {10, 'E', A, 0}, {10, 'V', 0, 1},
		/* chunk 2, 5 events lost before it */
		{30, 'V', 0, 2}, {10, 'X', 0, 0}, {10, 'X', 0, 0},
	};
	struct logger l;

	view1(cut, N(cut), NULL, 0, &l);
	CHECK_STR(l.buf, "E main 0 1000; E a 1 1010; V 1 @1020; X a 1 1010-1020 c=0 open; "
			 "X main 0 1000-1020 c=10 open;");
	view1(lost, N(lost), NULL, 3, &l);
	/* closed where the loss is (the second chunk starts at 1020) */
	CHECK_STR(l.buf, "E main 0 1000; E a 1 1010; V 1 @1020; X a 1 1010-1020 c=0 open; "
			 "X main 0 1000-1020 c=10 open; LOST 5; V 2 @1050; X ? 0 0-1060 c=0 nostart; "
			 "X ? 0 0-1070 c=0 nostart;");
}

/* record-time threshold calls and leaf records */
TEST(view_recorded_leaves_and_thresh)
{
	static const struct op o[] = {
		{0, 'E', MAIN, 0}, {10, 'L', LEAF, 40}, {100, 'C', A, 80}, {10, 'X', 0, 0},
	};
	struct trail_view v = {.sz = sizeof(v), .thresh_ns = 50};
	struct logger l;

	view1(o, N(o), NULL, 0, &l);
	CHECK_STR(l.buf, "E main 0 1000; L leaf 1 1010-1050; L a 0 1030-1110 thresh; "
			 "X main 0 1000-1120 c=40;");
	view1(o, N(o), &v, 0, &l);
	CHECK_STR(l.buf, "E main 0 1000; L a 0 1030-1110 thresh; X main 0 1000-1120 c=0;");
}

/* threads: two streams, one chosen by tid, then by name */
TEST(view_threads)
{
	struct tw w = {0};
	struct rb r1 = {.len = 0}, r2 = {.len = 0};
	struct chunk_desc c1 = {0, 1, 0, 1000, 0, 42, 43, "prog", 0, -1};
	struct chunk_desc c2 = {1, 1, 0, 1005, 0, 42, 44, "worker", 0, -1};
	static const uint32_t tid44[] = {44};
	static const char *const wk[] = {"work*"};
	struct trail_view v = {.sz = sizeof(v), .tids = tid44, .ntids = 1};
	struct logger l = {.order_ok = 1};
	struct trail_output out = {.name = "log", .ctx = &l, .event = l_event, .call = l_call};
	struct trail_reader *r;
	char err[256];

	header(&w);
	ops(&r1, tree, N(tree));
	ops(&r2, tree, 4); /* main { a { leaf; }: open at the end */
	tw_chunk(&w, &c1, &r1);
	tw_chunk(&w, &c2, &r2);
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_export_run(r, "t", &v, &out, err, sizeof(err)), 0);
	trail_reader_close(r);
	CHECK_STR(l.buf, "E main 0 1005; E a 1 1015; L leaf 2 1025-1055; X a 1 1015-1300 c=30 open; "
			 "X main 0 1005-1300 c=285 open; ");
	memset(&l, 0, sizeof(l));
	v = (struct trail_view){.sz = sizeof(v), .comms = wk, .ncomms = 1};
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_export_run(r, "t", &v, &out, err, sizeof(err)), 0);
	trail_reader_close(r);
	CHECK(strstr(l.buf, "E main 0 1005;") == l.buf);
	CHECK(!strstr(l.buf, "1000"));
	tw_free(&w);
}

/* the summary of the tree: calls, total, self per function */
TEST(view_summary_table)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 1000, 0, 42, 43, "prog", 0, -1};
	struct trail_reader *r;
	struct trail_output *out;
	char *text = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct trail_summary_opts so = {.sz = sizeof(so), .out = f,
					.sort = TRAIL_SUMMARY_SORT_NAME};

	header(&w);
	ops(&rb, tree, N(tree));
	ops(&rb, tree, N(tree)); /* twice: 2 calls each */
	tw_chunk(&w, &c, &rb);
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	out = trail_output_summary_create(&so);
	if (!r || !out || !f)
		return;
	CHECK_EQ(trail_export_run(r, "t", NULL, out, err, sizeof(err)), 0);
	fclose(f);
	/* a: total 2 x 190, self 2 x 160; main self 2 x (300 - 195) */
	CHECK(strstr(text, "     380 ns      320 ns           2      190 ns      190 ns      190 ns  a\n"));
	CHECK(strstr(text, "     600 ns      210 ns           2      300 ns      300 ns      300 ns  main\n"));
	CHECK(strstr(text, "      10 ns       10 ns           2        5 ns        5 ns        5 ns  b\n"));
	CHECK(strstr(text, "           2"));
	CHECK(strstr(text, "t:u32\n"));
	trail_output_free(out);
	trail_reader_close(r);
	free(text);
	tw_free(&w);
}

TEST_MAIN(CHECK_T(view_pairs_calls), CHECK_T(view_thresh_keeps_the_tree), CHECK_T(view_max_depth),
	  CHECK_T(view_functions), CHECK_T(view_time_range), CHECK_T(view_open_and_lost),
	  CHECK_T(view_recorded_leaves_and_thresh), CHECK_T(view_threads),
	  CHECK_T(view_summary_table))
