/* SPDX-License-Identifier: MIT */
/*
 * test-rv.c - runtime verification models (src/common/rv.c): rvgen's DOT
 * as the kernel's monitors are written (wip, wwnr), hand-written forms
 * (bare names, comments, several events on one edge), labels with
 * filters, and the errors with their line and column.
 */
#include <string.h>

#include "check.h"
#include "common/rv.h"

static const char wip[] =
	"digraph state_automaton {\n"
	"\t{node [shape = circle] \"non_preemptive\"};\n"
	"\t{node [shape = plaintext, style=invis, label=\"\"] \"__init_preemptive\"};\n"
	"\t{node [shape = doublecircle] \"preemptive\"};\n"
	"\t{node [shape = circle] \"preemptive\"};\n"
	"\t\"__init_preemptive\" -> \"preemptive\";\n"
	"\t\"non_preemptive\" [label = \"non_preemptive\"];\n"
	"\t\"non_preemptive\" -> \"non_preemptive\" [ label = \"sched_waking\" ];\n"
	"\t\"non_preemptive\" -> \"preemptive\" [ label = \"preempt_enable\" ];\n"
	"\t\"preemptive\" [label = \"preemptive\"];\n"
	"\t\"preemptive\" -> \"non_preemptive\" [ label = \"preempt_disable\" ];\n"
	"\t{ rank = min ;\n"
	"\t\t\"__init_preemptive\";\n"
	"\t\t\"preemptive\";\n"
	"\t}\n"
	"}\n";

static int st(const struct trail_rv_model *m, const char *s)
{
	for (int i = 0; i < m->nstates; i++)
		if (!strcmp(m->states[i], s))
			return i;
	return -1;
}

static int ev(const struct trail_rv_model *m, const char *s)
{
	for (int i = 0; i < m->nevents; i++)
		if (!strcmp(m->events[i], s))
			return i;
	return -1;
}

TEST(rv_wip)
{
	static struct trail_rv_model m;
	struct trail_rv_err e;
	int np, p;

	CHECK_EQ(trail_rv_parse(wip, strlen(wip), &m, &e), 0);
	CHECK_STR(m.name, "state_automaton");
	CHECK_EQ(m.nstates, 2);
	CHECK_EQ(m.nevents, 3);
	np = st(&m, "non_preemptive");
	p = st(&m, "preemptive");
	CHECK(np >= 0 && p >= 0);
	CHECK_EQ(m.init, p);
	CHECK_EQ(m.accepting, 1ull << p);
	CHECK_EQ(m.next[np][ev(&m, "sched_waking")], np);
	CHECK_EQ(m.next[np][ev(&m, "preempt_enable")], p);
	CHECK_EQ(m.next[p][ev(&m, "preempt_disable")], np);
	CHECK_EQ(m.next[p][ev(&m, "sched_waking")], -1); /* the violation */
	CHECK_EQ(m.next[p][ev(&m, "preempt_enable")], -1);
}

TEST(rv_hand_written)
{
	static const char t[] =
		"// a hand-written model\n"
		"digraph mutex {\n"
		"  __init_free -> free   # the initial state\n"
		"  node [shape = doublecircle]; free;\n"
		"  /* two events on one edge, filters in labels */\n"
		"  free -> held [label = \"app:lock[id == 3]\\napp:trylock\"];\n"
		"  held -> free [label = \" app:unlock \"];\n"
		"}\n";
	static struct trail_rv_model m;
	struct trail_rv_err e;
	const char *f;
	size_t pl, fl;
	int k;

	CHECK_EQ(trail_rv_parse(t, strlen(t), &m, &e), 0);
	CHECK_STR(m.name, "mutex");
	CHECK_EQ(m.init, st(&m, "free"));
	CHECK_EQ(m.nevents, 3);
	CHECK((m.accepting >> st(&m, "free")) & 1);
	k = ev(&m, "app:lock[id == 3]");
	CHECK(k >= 0);
	CHECK_EQ(m.next[st(&m, "free")][k], st(&m, "held"));
	CHECK_EQ(m.next[st(&m, "free")][ev(&m, "app:trylock")], st(&m, "held"));
	CHECK_EQ(m.next[st(&m, "held")][ev(&m, "app:unlock")], st(&m, "free"));
	trail_rv_label(m.events[k], &pl, &f, &fl);
	CHECK_EQ(pl, 8);
	CHECK(f && fl == 7 && !memcmp(f, "id == 3", 7));
	trail_rv_label("app:unlock", &pl, &f, &fl);
	CHECK_EQ(pl, 10);
	CHECK_EQ(fl, 0);
}

static const struct {
	const char *text;
	int line, col;
	const char *msg;
} errors[] = {
	{"graph g { a -- b }", 1, 1, "not a DOT digraph"},
	{"digraph g  a -> b }", 1, 12, "'{' expected"},
	{"digraph g {\n \"a\" -> \"b\" [label = \"e\"];\n}\n", 1, 1, "no initial state"},
	{"digraph g {\n __init_a -> a;\n a -> b [label = \"e\"];\n a -> c [label = \"e\"];\n}\n", 4, 1,
	 "not deterministic: two transitions on e from a"},
	{"digraph g {\n __init_a -> a;\n __init_b -> b;\n a -> b [label = \"e\"];\n}\n", 3, 1,
	 "two initial states"},
	{"digraph g {\n __init_a -> a;\n a -> b;\n}\n", 3, 1, "an edge without a label"},
	{"digraph g {\n __init_a -> a;\n a -> b [label = \"e\"];\n", 4, 1, "'}' is missing"},
	{"digraph g {\n __init_a -> a;\n}\n", 1, 1, "no transitions"},
};

TEST(rv_errors)
{
	static struct trail_rv_model m;
	struct trail_rv_err e;

	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		int r = trail_rv_parse(errors[i].text, strlen(errors[i].text), &m, &e);

		CHECK_EQ(r, -1);
		CHECK_EQ(e.line, errors[i].line);
		CHECK_EQ(e.col, errors[i].col);
		CHECK(strstr(e.msg, errors[i].msg) != NULL);
		if (r != -1 || e.line != errors[i].line || e.col != errors[i].col ||
		    !strstr(e.msg, errors[i].msg))
			fprintf(stderr, "  case %zu: %d:%d %s\n", i, e.line, e.col, e.msg);
	}
}

/* past the limits: refused, nothing read past the text */
TEST(rv_huge)
{
	static struct trail_rv_model m;
	static char t[65536];
	struct trail_rv_err e;
	size_t n = 0;

	n += (size_t)snprintf(t + n, sizeof(t) - n, "digraph h { __init_s0 -> s0;\n");
	for (int i = 0; i < 70; i++)
		n += (size_t)snprintf(t + n, sizeof(t) - n, "s%d -> s%d [label = \"e\"];\n", i, i + 1);
	n += (size_t)snprintf(t + n, sizeof(t) - n, "}\n");
	CHECK_EQ(trail_rv_parse(t, n, &m, &e), -1);
	CHECK(strstr(e.msg, "too many states") != NULL);
	n = 0;
	n += (size_t)snprintf(t + n, sizeof(t) - n, "digraph h { __init_a -> a;\n");
	for (int i = 0; i < 70; i++)
		n += (size_t)snprintf(t + n, sizeof(t) - n, "a -> a [label = \"e%d\"];\n", i);
	n += (size_t)snprintf(t + n, sizeof(t) - n, "}\n");
	CHECK_EQ(trail_rv_parse(t, n, &m, &e), -1);
	CHECK(strstr(e.msg, "too many events") != NULL);
	/* cut anywhere: an error or a model, never a read past the end */
	for (size_t k = 0; k < strlen(wip); k++)
		trail_rv_parse(wip, k, &m, &e);
}

/* a monitor into its spec line and back (what the process reads): the
 * same model; names with spaces, '%' and a filter survive; a damaged
 * line (cut anywhere, a digit changed, a state out of range) is refused */
TEST(rv_encode)
{
	static struct trail_rv_mon a, b;
	static char line[1 << 16];
	const char *t = "digraph \"my mon\" { __init_free -> free;\n"
			"free -> \"held 100%\" [label = \"app:lock[id == 3 && name ~ \\\"a b\\\"]\\napp:trylock\"];\n"
			"\"held 100%\" -> free [label = \"app:unlock\"]; }\n";
	struct trail_rv_err e;
	size_t n;

	CHECK_EQ(trail_rv_parse(t, strlen(t), &a.m, &e), 0);
	a.idx = 3;
	strcpy(a.per, "id");
	strcpy(a.reactor, "printk");
	n = trail_rv_encode(&a, line, sizeof(line));
	CHECK(n > 0 && !strchr(line, '\n'));
	CHECK_EQ(trail_rv_decode(line, n, &b), 0);
	CHECK_EQ(b.idx, 3);
	CHECK_STR(b.per, "id");
	CHECK_STR(b.reactor, "printk");
	CHECK_STR(b.m.name, "my mon");
	CHECK_EQ(b.m.nstates, 2);
	CHECK_STR(b.m.states[1], "held 100%");
	CHECK_STR(b.m.events[0], "app:lock[id == 3 && name ~ \"a b\"]");
	CHECK_EQ(b.m.init, a.m.init);
	CHECK_EQ(b.m.accepting, a.m.accepting);
	for (int s = 0; s < a.m.nstates; s++)
		CHECK(!memcmp(a.m.next[s], b.m.next[s], (size_t)a.m.nevents));
	CHECK_EQ(trail_rv_encode(&a, line, 20), 0); /* (does not fit) */
	n = trail_rv_encode(&a, line, sizeof(line));
	for (size_t k = 0; k < n; k++)
		CHECK_EQ(trail_rv_decode(line, k, &b), -1);
	line[n - 1] = '7'; /* the last transition: to state 0x17 of 2 */
	CHECK_EQ(trail_rv_decode(line, n, &b), -1);
	n = trail_rv_encode(&a, line, sizeof(line));
	memcpy(line + 2, "nobody!", 7); /* (past the name: no space where one is) */
	CHECK_EQ(trail_rv_decode(line, n, &b), -1);
	n = trail_rv_encode(&a, line, sizeof(line));
	strcpy(a.reactor, "panic");
	n = trail_rv_encode(&a, line, sizeof(line));
	CHECK_EQ(trail_rv_decode(line, n, &b), -1);
	CHECK(trail_rv_reactor("snapshot") && !trail_rv_reactor("panic"));
}

TEST_MAIN(CHECK_T(rv_wip), CHECK_T(rv_hand_written), CHECK_T(rv_errors), CHECK_T(rv_huge),
	  CHECK_T(rv_encode))
