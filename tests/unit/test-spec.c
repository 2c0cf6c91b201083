/* SPDX-License-Identifier: MIT */
/*
 * test-spec.c - event selection patterns, trace-cmd's -e grammar
 * (src/common/spec.c): the glob matcher, one pattern against
 * provider:name, a multi-line spec, and the syntax check whose return value
 * places the caret of `trail record -e` error messages.
 *
 * Glob rows are also run through fnmatch(3) where the two agree by design
 * (no backslash escapes in trail patterns), as a second, independent oracle.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/spec.h"

/* ------------------------------------------------------------------ glob */

static const struct glob_row {
	const char *pat, *s;
	int want;
	int fnm; /* 1: fnmatch(3) must agree */
} glob_rows[] = {
	/* empty pattern only matches the empty string */
	{"", "", 1, 1},
	{"", "a", 0, 1},
	{"a", "", 0, 1},
	/* literals, case-sensitive */
	{"abc", "abc", 1, 1},
	{"abc", "abd", 0, 1},
	{"abc", "ab", 0, 1},
	{"ab", "abc", 0, 1},
	{"A", "a", 0, 1},
	/* star */
	{"*", "", 1, 1},
	{"*", "abc", 1, 1},
	{"a*", "a", 1, 1},
	{"a*", "abc", 1, 1},
	{"a*", "ba", 0, 1},
	{"*c", "abc", 1, 1},
	{"*c", "abd", 0, 1},
	{"ab*", "a", 0, 1},
	{"*x*", "abc", 0, 1},
	{"*x*", "axc", 1, 1},
	{"**", "x", 1, 1},
	{"**", "", 1, 1},
	{"a**b", "ab", 1, 1},
	{"a*b*c", "aXbYc", 1, 1},
	{"a*b*c", "abcabc", 1, 1},
	{"a*b*c", "abcab", 0, 1},
	/* question mark: exactly one character */
	{"?", "", 0, 1},
	{"?", "a", 1, 1},
	{"??", "a", 0, 1},
	{"a?c", "abc", 1, 1},
	{"a?c", "ac", 0, 1},
	{"*?", "", 0, 1},
	{"*?", "a", 1, 1},
	{"*?b", "ab", 1, 1},
	{"*?b", "b", 0, 1},
	/* sets */
	{"[a-c]", "b", 1, 1},
	{"[a-c]", "a", 1, 1},
	{"[a-c]", "c", 1, 1},
	{"[a-c]", "d", 0, 1},
	{"[a-c]", "", 0, 1},
	{"[a-c]x", "cx", 1, 1},
	{"[abc]", "c", 1, 1},
	{"[abc]", "ab", 0, 1},
	{"[!x]", "y", 1, 1},
	{"[!x]", "x", 0, 1},
	{"[^x]", "y", 1, 1},
	{"[^x]", "x", 0, 1},
	{"[!a-c]", "d", 1, 1},
	{"[!a-c]", "b", 0, 1},
	{"[]]", "]", 1, 1},   /* ']' first in a set is a member */
	{"[]a]", "a", 1, 1},
	{"[!]]", "]", 0, 1},
	{"[!]]", "a", 1, 1},
	{"[a-]", "-", 1, 1},  /* '-' last in a set is a member */
	{"[a-]", "a", 1, 1},
	{"[a-]", "b", 0, 1},
	{"[*]", "*", 1, 1},   /* no wildcard inside a set */
	{"[*]", "a", 0, 1},
	{"[?]", "a", 0, 1},
	{"[0-9][0-9]", "42", 1, 1},
	{"ev[0-9]", "ev", 0, 1},
	/* an unterminated '[' is a literal */
	{"[", "[", 1, 1},
	{"[", "a", 0, 1},
	{"[", "", 0, 1},
	{"a[b", "a[b", 1, 1},
	{"a[b", "ab", 0, 1},
	{"[ab", "a", 0, 1},
	{"[]", "[]", 1, 1},
	{"*[", "ab[", 1, 1},
	/* backtracking */
	{"*ab", "aab", 1, 1},
	{"*aab", "aaab", 1, 1},
	{"a*ab", "aXaXab", 1, 1},
	{"*abc", "ababc", 1, 1},
	{"*ab*cd", "xabyabcd", 1, 1},
	{"*ab*cd", "xabyabc", 0, 1},
	{"a*b", "abab", 1, 1},
	{"a*b", "abba", 0, 1},
	{"*a*a*a", "aaa", 1, 1},
	{"*a*a*a", "aa", 0, 1},
	{"*a*b", "xaybzb", 1, 1},
	{"*[0-9]", "abc5", 1, 1},
	{"*[0-9]", "abc5x", 0, 1},
	{"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0, 1},
	{"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 1, 1},
};

TEST(glob_table)
{
	for (size_t i = 0; i < sizeof(glob_rows) / sizeof(glob_rows[0]); i++) {
		const struct glob_row *g = &glob_rows[i];
		int got = trail__glob(g->pat, strlen(g->pat), g->s, strlen(g->s));

		if (got != g->want) {
			fprintf(stderr, "  glob(\"%s\", \"%s\") = %d, want %d\n", g->pat, g->s,
				got, g->want);
			check_failures++;
		}
		/* the oracle must agree with the row, else the row is wrong */
		if (g->fnm && (fnmatch(g->pat, g->s, 0) == 0) != g->want) {
			fprintf(stderr, "  row %zu disagrees with fnmatch(\"%s\", \"%s\")\n", i,
				g->pat, g->s);
			check_failures++;
		}
	}
}

TEST(glob_uses_lengths_not_nul)
{
	/* pattern and string are (pointer, length): bytes past the length
	 * must not take part */
	CHECK_EQ(trail__glob("abcXYZ", 3, "abc", 3), 1);
	CHECK_EQ(trail__glob("abc", 3, "abcdef", 3), 1);
	CHECK_EQ(trail__glob("abc", 3, "abcdef", 4), 0);
	CHECK_EQ(trail__glob("a*", 1, "ab", 2), 0);  /* the '*' is outside */
	CHECK_EQ(trail__glob("[a-c]", 4, "[a-c", 4), 1); /* "[a-c" unterminated */
	CHECK_EQ(trail__glob("[a-c]", 4, "b", 1), 0);
	CHECK_EQ(trail__glob("*", 0, "", 0), 1);
	CHECK_EQ(trail__glob("*", 0, "x", 1), 0);
	/* an embedded NUL is an ordinary byte */
	CHECK_EQ(trail__glob("a?b", 3, "a\0b", 3), 1);
	CHECK_EQ(trail__glob("a\0b", 3, "a\0b", 3), 1);
	CHECK_EQ(trail__glob("a\0b", 3, "a\0c", 3), 0);
}

/* ---------------------------------------------------------- spec_match1 */

static const struct m1_row {
	const char *pat, *prov, *name;
	int want;
} m1_rows[] = {
	/* everything */
	{"all", "net", "rx", 1},
	{"*", "net", "rx", 1},
	{"*:*", "net", "rx", 1},
	/* SYS:EVENT */
	{"net:rx", "net", "rx", 1},
	{"net:rx", "net", "tx", 0},
	{"net:rx", "disk", "rx", 0},
	{"net:rx", "rx", "net", 0},
	{"*:rx", "disk", "rx", 1},
	{"*:rx", "disk", "rxq", 0},
	{"net:*", "net", "anything", 1},
	{"net:*", "netx", "anything", 0},
	{"n*:r?", "net", "rx", 1},
	{"n*:r?", "net", "rxx", 0},
	{"n*:r?", "dev", "rx", 0},
	{"[mn]et:[rt]x", "met", "tx", 1},
	{"[mn]et:[rt]x", "jet", "tx", 0},
	{"[!n]et:*", "net", "rx", 0},
	{"[!n]et:*", "jet", "rx", 1},
	/* NAME: a system or an event */
	{"net", "net", "tx", 1},
	{"rx", "net", "rx", 1},
	{"rx", "net", "tx", 0},
	{"ne?", "net", "x", 1},
	{"ne", "net", "rx", 0},
	{"netx", "net", "rx", 0},
	{"*x", "net", "rx", 1},
	{"*x", "net", "ry", 0},
	/* a name that is both a system and an event */
	{"io", "io", "read", 1},
	{"io", "net", "io", 1},
	{"io", "io", "io", 1},
	{"io", "net", "read", 0},
	/* "all" is a keyword, not a prefix or glob */
	{"al", "all", "x", 0},
	{"al", "x", "y", 0},
	{"all", "x", "y", 1},
	{"alll", "x", "y", 0},
	{"al?", "x", "y", 0},
	{"al?", "all", "y", 1},
};

TEST(spec_match1_table)
{
	for (size_t i = 0; i < sizeof(m1_rows) / sizeof(m1_rows[0]); i++) {
		const struct m1_row *m = &m1_rows[i];
		int got = trail__spec_match1(m->pat, strlen(m->pat), m->prov, m->name);

		if (got != m->want) {
			fprintf(stderr, "  match1(\"%s\", %s:%s) = %d, want %d\n", m->pat,
				m->prov, m->name, got, m->want);
			check_failures++;
		}
	}
}

TEST(spec_match1_uses_length)
{
	/* the pattern is one line of a bigger buffer */
	CHECK_EQ(trail__spec_match1("net:rx\nfoo", 6, "net", "rx"), 1);
	CHECK_EQ(trail__spec_match1("net:rx\nfoo", 6, "net", "rx\nfoo"), 0);
	CHECK_EQ(trail__spec_match1("allx", 3, "p", "q"), 1);
	CHECK_EQ(trail__spec_match1("*x", 1, "p", "q"), 1);
	/* a colon beyond the length does not split the pattern */
	CHECK_EQ(trail__spec_match1("net:rx", 3, "net", "anything"), 1);
	CHECK_EQ(trail__spec_match1("net:rx", 3, "disk", "net"), 1);
}

/* ----------------------------------------------------------- spec_match */

static const struct m_row {
	const char *spec, *prov, *name;
	int want;
} m_rows[] = {
	{"", "a", "b", 0},
	{"\n", "a", "b", 0},
	{"\n\n\n", "a", "b", 0},
	{"a:b", "a", "b", 1},
	{"a:b\nc:d", "c", "d", 1},
	{"a:b\nc:d", "a", "b", 1},
	{"a:b\nc:d", "a", "d", 0},
	{"a:b\nc:d", "c", "b", 0},
	{"a:b\nc:d\n", "c", "d", 1},
	{"\n\nc:d\n\n", "c", "d", 1},
	{"x\ny\nz", "q", "z", 1},  /* last line without a newline */
	{"x\ny\nz", "q", "w", 0},
	{"x\nall", "q", "r", 1},
	{"x:y\nz", "z", "w", 1},
	/* lines are separate patterns, never glued together */
	{"abc\nd", "ab", "c", 0},
	{"ab\nc", "abc", "x", 0},
	{"ab\nc", "x", "abc", 0},
	{"a\n*", "p", "q", 1},
	{"n*\nx", "net", "q", 1},
};

TEST(spec_match_table)
{
	for (size_t i = 0; i < sizeof(m_rows) / sizeof(m_rows[0]); i++) {
		const struct m_row *m = &m_rows[i];
		int got = trail__spec_match(m->spec, m->prov, m->name);

		if (got != m->want) {
			fprintf(stderr, "  row %zu: match(spec, %s:%s) = %d, want %d\n", i,
				m->prov, m->name, got, m->want);
			check_failures++;
		}
	}
}

/* ----------------------------------------------------------- spec_check */

static const struct chk_row {
	const char *pat;
	size_t caret; /* 0: valid; else offset of the bad char + 1 */
	const char *why; /* substring of the message */
} chk_rows[] = {
	/* well formed */
	{"sys:ev", 0, NULL},
	{"all", 0, NULL},
	{"*", 0, NULL},
	{"ev", 0, NULL},
	{"s*:[a-z]?", 0, NULL},
	{"[!x]y", 0, NULL},
	{"[^x]", 0, NULL},
	{"a-b_C9", 0, NULL},
	{"*:*", 0, NULL},
	/* sets: each '[' closed, no ']' alone; caret under the bracket */
	{"app:[a-", 5, "'[' set without its ']'"},
	{"[ab", 1, "'[' set without its ']'"},
	{"a[]", 2, "'[' set without its ']'"},
	{"a]", 2, "']' without its '['"},
	{"[a]]", 4, "']' without its '['"},
	{"[]a]", 0, NULL},  /* a leading ']' is a member */
	/* empty */
	{"", 1, "empty event name"},
	/* characters outside the grammar, caret under the character */
	{" a", 1, "unexpected character"},
	{"a b", 2, "unexpected character"},
	{"a ", 2, "unexpected character"},
	{"a.b", 0, NULL}, /* user_events_multi:NAME.<id> */
	{"a/b", 2, "unexpected character"},
	{"a\tb", 2, "unexpected character"},
	{"ev\n", 3, "unexpected character"},
	{"sys:ev,x", 7, "unexpected character"},
	{"a\\b", 2, "unexpected character"},
	{"\xc3\xa9", 1, "unexpected character"},
	/* colons: at most one, with something on each side */
	{"a:b:c", 4, "more than one ':'"},
	{"a::b", 3, "more than one ':'"},
	{"a:b:", 4, "more than one ':'"},
	{":a", 1, "empty system or event name"},
	{"a:", 2, "empty system or event name"},
	{":", 1, "empty system or event name"},
	{"sys:", 4, "empty system or event name"},
	/* the first problem wins */
	{"a b:c:d", 2, "unexpected character"},
};

TEST(spec_check_table)
{
	for (size_t i = 0; i < sizeof(chk_rows) / sizeof(chk_rows[0]); i++) {
		const struct chk_row *c = &chk_rows[i];
		const char *why = NULL;
		size_t got = trail__spec_check(c->pat, &why);

		if (got != c->caret) {
			fprintf(stderr, "  check(\"%s\") = %zu, want %zu\n", c->pat, got,
				c->caret);
			check_failures++;
			continue;
		}
		if (c->caret && (!why || !strstr(why, c->why))) {
			fprintf(stderr, "  check(\"%s\"): message \"%s\", want \"%s\"\n", c->pat,
				why ? why : "(null)", c->why);
			check_failures++;
		}
	}
}

TEST(spec_check_accepts_what_match_understands)
{
	/* every valid row's pattern is usable by the matcher without
	 * surprises: a pattern that selects provider:name by its own text */
	CHECK_EQ(trail__spec_check("app:request", &(const char *){NULL}), 0);
	CHECK_EQ(trail__spec_match("app:request", "app", "request"), 1);
	CHECK_EQ(trail__spec_check("app", &(const char *){NULL}), 0);
	CHECK_EQ(trail__spec_match("app", "app", "request"), 1);
}

TEST_MAIN(CHECK_T(glob_table), CHECK_T(glob_uses_lengths_not_nul),
	  CHECK_T(spec_match1_table), CHECK_T(spec_match1_uses_length),
	  CHECK_T(spec_match_table), CHECK_T(spec_check_table),
	  CHECK_T(spec_check_accepts_what_match_understands))
