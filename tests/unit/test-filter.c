/* SPDX-License-Identifier: MIT */
/*
 * test-filter.c - event filters (src/common/filter.c) against an event of
 * known fields: a table of filters with the records they pass, computed
 * here by C expressions of the same values (the oracle); precedence;
 * short-circuit (the predicates evaluated, as the kernel's filter
 * self-test checks); strings, globs and a field after a string; the
 * common fields; and the grammar errors with their caret positions.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/filter.h"

/* the event: s32 a, u32 b, u64 flags, string path, u8 c (after the string) */
static struct trail_meta meta = {
	.provider = "app",
	.name = "request",
	.nfields = 5,
	.variable = 1,
	.fields = {
		{"a", TRAIL_FK_INT, 4, TRAIL_FF_SIGNED, 1},
		{"b", TRAIL_FK_INT, 4, 0, 1},
		{"flags", TRAIL_FK_INT, 8, TRAIL_FF_HEX, 1},
		{"path", TRAIL_FK_STRING, 1, 0, 1},
		{"c", TRAIL_FK_INT, 1, 0, 1},
	},
};

struct rec {
	int32_t a;
	uint32_t b;
	uint64_t flags;
	const char *path;
	uint8_t c;
};

static uint32_t payload(const struct rec *r, uint8_t *out)
{
	uint16_t n = (uint16_t)strlen(r->path);
	uint32_t o = 0;

	memcpy(out + o, &r->a, 4), o += 4;
	memcpy(out + o, &r->b, 4), o += 4;
	memcpy(out + o, &r->flags, 8), o += 8;
	memcpy(out + o, &n, 2), o += 2;
	memcpy(out + o, r->path, n), o += n;
	out[o++] = r->c;
	return o;
}

static const struct rec recs[] = {
	{0, 0, 0, "", 0},
	{-5, 4097, 0x2, "/var/log/x", 7},
	{4096, 4096, 0x6, "/etc/app.conf", 255},
	{-1, 0xffffffffu, 0x8000000000000000ull, "/var", 1},
	{100, 1, 0x1, "/var/run/a.pid", 100},
};

static int glob_var(const char *s) { return !strncmp(s, "/var/", 5); }

/* each filter, and the C expression of r that it must agree with */
#define ROWS(X) \
	X("a == -5", r->a == -5) \
	X("a < 0", r->a < 0) \
	X("a <= -1", r->a <= -1) \
	X("a > 100", r->a > 100) \
	X("a >= 100", r->a >= 100) \
	X("a != 0", r->a != 0) \
	X("b > 4096", r->b > 4096) \
	X("b > 4096 && path ~ \"/var/*\"", r->b > 4096 && glob_var(r->path)) \
	X("b == 0xffffffff", r->b == 0xffffffffu) \
	X("b < 2", r->b < 2) \
	X("flags & 0x2", (r->flags & 2) != 0) \
	X("flags & 4 || c == 1", (r->flags & 4) || r->c == 1) \
	X("flags > 0x7fffffffffffffff", r->flags > 0x7fffffffffffffffull) \
	X("!(flags & 0x2)", !(r->flags & 2)) \
	X("!a == 0", !(r->a == 0)) \
	X("a == 0 || b == 1 && c == 100", r->a == 0 || (r->b == 1 && r->c == 100)) \
	X("(a == 0 || b == 1) && c == 100", (r->a == 0 || r->b == 1) && r->c == 100) \
	X("a == 4096 || a == -5 || a == -1", r->a == 4096 || r->a == -5 || r->a == -1) \
	X("!(a < 0 && !(b > 4096))", !(r->a < 0 && !(r->b > 4096))) \
	X("path == \"/var\"", !strcmp(r->path, "/var")) \
	X("path == '/etc/app.conf'", !strcmp(r->path, "/etc/app.conf")) \
	X("path != /var", strcmp(r->path, "/var") != 0) \
	X("path ~ \"*.pid\"", strlen(r->path) >= 4 && !strcmp(r->path + strlen(r->path) - 4, ".pid")) \
	X("path ~ \"/var*\"", !strncmp(r->path, "/var", 4)) \
	X("path ~ \"*a*\"", strchr(r->path, 'a') != NULL) \
	X("path == \"\"", !*r->path) \
	X("c == 255", r->c == 255) \
	X("c > 6 && c < 101", r->c > 6 && r->c < 101) \
	X("  a==-5  ", r->a == -5) \
	X("((((a == 100))))", r->a == 100) \
	X("common_pid == 42 && a == 100", r->a == 100) \
	X("common_comm == \"srv\" || a == -1", 1) \
	X("common_comm ~ \"x*\"", 0) \
	X("common_cpu == 3 && common_tid != 43", 0) \
	X("common_timestamp > 1000 && c == 7", r->c == 7) \

static const char *const filters[] = {
#define X(text, expr) text,
	ROWS(X)
#undef X
};

static int oracle(size_t row, const struct rec *r)
{
	size_t i = 0;

#define X(text, expr) if (row == i++) return (expr);
	ROWS(X)
#undef X
	return -1;
}

TEST(filter_table)
{
	struct trail_filter f;
	struct trail_filter_err e;
	struct trail_filter_ctx c = {.pid = 42, .tid = 43, .cpu = 3, .ts = 5000, .comm = "srv"};
	uint8_t buf[256];

	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
		int rc = trail_filter_compile(filters[i], &meta, &f, &e);

		if (rc) {
			fprintf(stderr, "  '%s': %s at %d\n", filters[i], e.msg, e.pos);
			CHECK(rc == 0);
			continue;
		}
		for (size_t k = 0; k < sizeof(recs) / sizeof(recs[0]); k++) {
			uint32_t len = payload(&recs[k], buf);
			int got = trail_filter_match(&f, buf, len, &c), want = oracle(i, &recs[k]);

			if (got != want)
				fprintf(stderr, "  '%s' on record %zu: %d, want %d\n", filters[i], k, got, want);
			CHECK_EQ(got, want);
		}
	}
}

/* a payload cut before a field passes no predicate on it */
TEST(filter_short_payload)
{
	struct trail_filter f;
	struct trail_filter_err e;
	struct trail_filter_ctx c = {0};
	uint8_t buf[256];
	uint32_t len = payload(&recs[1], buf);

	CHECK_EQ(trail_filter_compile("c == 7", &meta, &f, &e), 0);
	CHECK_EQ(trail_filter_match(&f, buf, len, &c), 1);
	CHECK_EQ(trail_filter_match(&f, buf, len - 1, &c), 0);
	CHECK_EQ(trail_filter_compile("path ~ \"/var*\"", &meta, &f, &e), 0);
	CHECK_EQ(trail_filter_match(&f, buf, 20, &c), 0);
	CHECK_EQ(trail_filter_compile("!(b == 1)", &meta, &f, &e), 0);
	CHECK_EQ(trail_filter_match(&f, buf, 6, &c), 1); /* b unreadable: b == 1 false */
}

/* the predicates evaluated: those the result needs, no more */
TEST(filter_short_circuit)
{
	static const struct {
		const char *filter;
		int rec;
		uint32_t steps;
		int pass;
	} sc[] = {
		{"a == -5 || b == 1 || c == 1", 1, 1, 1},   /* first true ends an || */
		{"a == 0 || b == 1 || c == 1", 1, 3, 0},
		{"a == 0 && b == 1 && c == 1", 1, 1, 0},    /* first false ends an && */
		{"a == -5 && b == 4097 && c == 7", 1, 3, 1},
		{"(a == 0 && b == 1) || c == 7", 1, 2, 1},  /* a false skips b */
		{"a == -5 || (b == 1 && c == 1)", 1, 1, 1},
		{"!(a == -5) && b == 1", 1, 1, 0},
		{"!(a == 0 || b == 1) && c == 7", 1, 3, 1},
	};
	struct trail_filter f;
	struct trail_filter_err e;
	uint8_t buf[256];

	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		uint32_t steps = 0, len = payload(&recs[sc[i].rec], buf);
		struct trail_filter_ctx c = {.steps = &steps};

		CHECK_EQ(trail_filter_compile(sc[i].filter, &meta, &f, &e), 0);
		CHECK_EQ(trail_filter_match(&f, buf, len, &c), sc[i].pass);
		if (steps != sc[i].steps)
			fprintf(stderr, "  '%s': %u predicates evaluated, want %u\n", sc[i].filter,
				steps, sc[i].steps);
		CHECK_EQ(steps, sc[i].steps);
	}
}

/* the grammar errors: the kernel's messages, the caret's column */
TEST(filter_errors)
{
	static const struct {
		const char *filter, *msg;
		int pos;
	} bad[] = {
		{"", "Meaningless filter expression", 0},
		{"   ", "Meaningless filter expression", 3},
		{"nofield == 1", "Field not found", 0},
		{"a == 1 && zz > 2", "Field not found", 10},
		{"a =! 1", "Invalid operator", 2},
		{"a 1", "Invalid operator", 2},
		{"a ~ 1", "Illegal operation for field type", 2},
		{"path > \"x\"", "Illegal operation for field type", 5},
		{"path & 1", "Illegal operation for field type", 5},
		{"a == 12x", "Illegal integer value", 5},
		{"a == 0x", "Illegal integer value", 5},
		{"b == 99999999999999999999", "Illegal integer value", 5},
		{"a ==", "Missing field name and/or value", 4},
		{"== 1", "Missing field name and/or value", 0},
		{"(a == 1", "Unbalanced parens", 0},
		{"a == 1)", "Unbalanced parens", 6},
		{"(a == 1 && (b == 2)", "Unbalanced parens", 0},
		{"path == \"abc", "Missing quote", 8},
		{"a == 1 b == 2", "Meaningless filter expression", 7},
		{"a == 1 &&", "Missing field name and/or value", 9},
		{"a == 1 || || b == 2", "Missing field name and/or value", 10},
		{"!", "Missing field name and/or value", 1},
	};
	struct trail_filter f;
	struct trail_filter_err e;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(trail_filter_compile(bad[i].filter, &meta, &f, &e), -1);
		if (strcmp(e.msg, bad[i].msg) || e.pos != bad[i].pos)
			fprintf(stderr, "  '%s': '%s' at %d, want '%s' at %d\n", bad[i].filter, e.msg,
				e.pos, bad[i].msg, bad[i].pos);
		CHECK_STR(e.msg, bad[i].msg);
		CHECK_EQ(e.pos, bad[i].pos);
	}
}

/* the limits: predicates and nesting */
TEST(filter_limits)
{
	char text[TRAIL_FILTER_MAX_TEXT];
	struct trail_filter f;
	struct trail_filter_err e;
	size_t n = 0;

	for (int i = 0; i < TRAIL_FILTER_MAX_PREDS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%sa == %d", i ? "||" : "", i);
	CHECK_EQ(trail_filter_compile(text, &meta, &f, &e), 0);
	CHECK_EQ(f.npreds, TRAIL_FILTER_MAX_PREDS);
	snprintf(text + n, sizeof(text) - n, "||a == 1");
	CHECK_EQ(trail_filter_compile(text, &meta, &f, &e), -1);
	CHECK_STR(e.msg, "Too many filter predicates");
	memset(text, '(', 40);
	snprintf(text + 40, sizeof(text) - 40, "a == 1");
	CHECK_EQ(trail_filter_compile(text, &meta, &f, &e), -1);
	CHECK_STR(e.msg, "Too many terms in predicate expression");
}

/* The record path's matcher (trail_filter_match_fast: 8-byte loads,
 * masks, sign extension, biased ranges) against the general evaluator
 * (run when steps are counted) on every integer size and sign, each
 * operator, and constants and values at the edges of each type. */
static struct trail_meta fixed = {
	.provider = "app",
	.name = "ints",
	.nfields = 10,
	.fixed_len = 33,
	.fields = {
		{"s8", TRAIL_FK_INT, 1, TRAIL_FF_SIGNED, 1}, {"u8", TRAIL_FK_INT, 1, 0, 1},
		{"s16", TRAIL_FK_INT, 2, TRAIL_FF_SIGNED, 1}, {"u16", TRAIL_FK_INT, 2, 0, 1},
		{"s32", TRAIL_FK_INT, 4, TRAIL_FF_SIGNED, 1}, {"u32", TRAIL_FK_INT, 4, 0, 1},
		{"s64", TRAIL_FK_INT, 8, TRAIL_FF_SIGNED, 1}, {"u64", TRAIL_FK_INT, 8, 0, 1},
		/* near the end: loaded by their size */
		{"t16", TRAIL_FK_INT, 2, TRAIL_FF_SIGNED, 1}, {"t8", TRAIL_FK_INT, 1, 0, 1},
	},
};

TEST(filter_fast_is_general)
{
	static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">=", "&"};
	static const char *const consts[] = {
		"0", "1", "-1", "127", "-128", "255", "32767", "-32768", "65535", "0x7fffffff",
		"-2147483648", "0xffffffff", "0x7fffffffffffffff", "-9223372036854775808",
		"0xffffffffffffffff", "42", "-42",
	};
	static const uint64_t vals[] = {
		0, 1, ~0ull, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
		0xffffffff, 0x7fffffffffffffffull, 0x8000000000000000ull, 42, (uint64_t)-42,
	};
	static const uint8_t offs[] = {0, 1, 2, 4, 6, 10, 14, 22, 30, 32};
	struct trail_filter f;
	struct trail_filter_err e;
	uint32_t steps = 0;
	struct trail_filter_ctx gen = {.steps = &steps}, fast = {0};
	long n = 0;

	for (uint32_t k = 0; k < fixed.nfields; k++)
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
			for (size_t c = 0; c < sizeof(consts) / sizeof(consts[0]); c++) {
				char text[128];

				snprintf(text, sizeof(text), "%s %s %s", fixed.fields[k].name, ops[o],
					 consts[c]);
				CHECK_EQ(trail_filter_compile(text, &fixed, &f, &e), 0);
				CHECK_EQ(f.fast, 1);
				CHECK_EQ(f.p[0].wide, offs[k] + 8 <= 33);
				for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++) {
					uint8_t buf[33];

					/* the value in field k (its low bytes), the
					 * other fields all ones */
					memset(buf, 0xff, sizeof(buf));
					memcpy(buf + offs[k], &vals[v], fixed.fields[k].size);
					if (trail_filter_match(&f, buf, 33, &fast) !=
					    trail_filter_match(&f, buf, 33, &gen)) {
						fprintf(stderr, "  '%s' on 0x%llx: fast %d, general %d\n",
							text, (unsigned long long)vals[v],
							trail_filter_match(&f, buf, 33, &fast),
							trail_filter_match(&f, buf, 33, &gen));
						CHECK(0);
					}
					n++;
				}
			}
	CHECK(n > 15000);
	/* a compound one, both ways */
	CHECK_EQ(trail_filter_compile("(s8 < 0 || u16 == 7) && !(s64 >= 5 && u64 & 8) || t16 < -3",
				      &fixed, &f, &e), 0);
	for (int i = 0; i < 256; i++) {
		uint8_t buf[33];

		for (int b = 0; b < 33; b++)
			buf[b] = (uint8_t)(i * 37 + b * 11);
		CHECK_EQ(trail_filter_match(&f, buf, 33, &fast), trail_filter_match(&f, buf, 33, &gen));
	}
}

TEST_MAIN(CHECK_T(filter_table), CHECK_T(filter_short_payload), CHECK_T(filter_short_circuit),
	  CHECK_T(filter_errors), CHECK_T(filter_limits), CHECK_T(filter_fast_is_general))
