/* SPDX-License-Identifier: MIT */
/*
 * test-symrule.c - which symbol names an address (src/common/symrule.c),
 * the rule libtrail's site table, `trail list -f` and the recorder's
 * SYMBOLS share. Table-driven: which ELF symbols are candidates at all;
 * then symbol tables (a row of symbols, in table order) with the name each
 * queried address must get, or none. Each table is also built from its
 * symbols in reverse and rotated input orders: the answer may depend on
 * the table index, never on the order the caller collected them in.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/symrule.h"

/* ------------------------------------------------------------ candidates */

#define INFO(b, t) ELF64_ST_INFO(STB_##b, STT_##t)

static const struct class_row {
	unsigned char info;
	uint16_t shndx;
	const char *name;
	int want;
} class_rows[] = {
	{INFO(GLOBAL, FUNC), 14, "f", TRAIL_SYMRULE_FUNC},
	{INFO(LOCAL, FUNC), 14, "f", TRAIL_SYMRULE_FUNC},
	{INFO(WEAK, FUNC), 14, "f", TRAIL_SYMRULE_FUNC},
	{INFO(GLOBAL, GNU_IFUNC), 14, "f", TRAIL_SYMRULE_FUNC},
	{INFO(GLOBAL, NOTYPE), 14, "lbl", TRAIL_SYMRULE_LABEL},
	{INFO(LOCAL, NOTYPE), 14, "lbl", TRAIL_SYMRULE_LABEL},
	/* a real section past the 16-bit indices */
	{INFO(GLOBAL, FUNC), SHN_XINDEX, "f", TRAIL_SYMRULE_FUNC},
	/* not defined here, or not in a section */
	{INFO(GLOBAL, FUNC), SHN_UNDEF, "f", -1},
	{INFO(WEAK, FUNC), SHN_UNDEF, "f", -1},
	{INFO(GLOBAL, FUNC), SHN_ABS, "f", -1},
	{INFO(GLOBAL, NOTYPE), SHN_ABS, "lbl", -1},
	{INFO(GLOBAL, FUNC), SHN_COMMON, "f", -1},
	{INFO(GLOBAL, FUNC), SHN_LOPROC, "f", -1},
	/* no name */
	{INFO(GLOBAL, FUNC), 14, "", -1},
	{INFO(GLOBAL, FUNC), 14, NULL, -1},
	{INFO(LOCAL, NOTYPE), 14, "", -1},
	/* not code */
	{INFO(GLOBAL, OBJECT), 14, "v", -1},
	{INFO(LOCAL, SECTION), 14, "s", -1},
	{INFO(LOCAL, FILE), SHN_ABS, "x.c", -1},
	{INFO(GLOBAL, TLS), 14, "t", -1},
};

TEST(candidates)
{
	for (size_t i = 0; i < sizeof(class_rows) / sizeof(class_rows[0]); i++) {
		const struct class_row *r = &class_rows[i];
		int got = trail__symrule_class(r->info, r->shndx, r->name);

		if (got != r->want)
			fprintf(stderr, "  row %zu (%s)\n", i, r->name ? r->name : "NULL");
		CHECK_EQ(got, r->want);
	}
}

/* ---------------------------------------------------------------- tables */

struct sym {
	const char *name;
	unsigned char info, other;
	uint16_t shndx;
	uint64_t value, size;
};

struct query {
	uint64_t addr;
	const char *want; /* NULL: no name */
};

#define MAXS 8
#define MAXQ 8
#define S(n, b, t, v, sz) {n, INFO(b, t), STV_DEFAULT, 14, v, sz}
#define SV(n, b, t, vis, v, sz) {n, INFO(b, t), STV_##vis, 14, v, sz}
#define SX(n, b, t, shndx, v, sz) {n, INFO(b, t), STV_DEFAULT, shndx, v, sz}

static const struct table_row {
	const char *what;
	struct sym syms[MAXS]; /* in symbol table order, from index 1 */
	struct query q[MAXQ];
} table_rows[] = {
	{"one sized function",
	 {S("f", GLOBAL, FUNC, 0x1000, 0x20)},
	 {{0x1000, "f"}, {0x1004, "f"}, {0x101f, "f"}, {0x1020, NULL}, {0xfff, NULL}}},
	{"binding: global > weak > local, whatever the table order",
	 {S("l", LOCAL, FUNC, 0x1000, 0x20), S("w", WEAK, FUNC, 0x1000, 0x20),
	  S("g", GLOBAL, FUNC, 0x1000, 0x20)},
	 {{0x1000, "g"}, {0x1010, "g"}}},
	{"binding: weak > local",
	 {S("l", LOCAL, FUNC, 0x1000, 0x20), S("w", WEAK, FUNC, 0x1000, 0x20)},
	 {{0x1000, "w"}, {0x1004, "w"}}},
	{"binding before size: a global unsized alias names its local sized function",
	 {S("impl", LOCAL, FUNC, 0x1000, 0x40), S("entry", GLOBAL, FUNC, 0x1000, 0)},
	 /* the unsized alias spans the function: one name at the entry and
	  * after an endbr64 alike */
	 {{0x1000, "entry"}, {0x1004, "entry"}, {0x103f, "entry"}, {0x1040, NULL}}},
	{"sized over unsized at one binding",
	 {S("bare", GLOBAL, FUNC, 0x1000, 0), S("real", GLOBAL, FUNC, 0x1000, 0x10)},
	 {{0x1000, "real"}, {0x1004, "real"}}},
	{"an unsized function alone: its entry and an endbr64 after it",
	 {S("asm_fn", GLOBAL, FUNC, 0x1000, 0)},
	 {{0x1000, "asm_fn"}, {0x1004, "asm_fn"}, {0x1005, NULL}}},
	{"default visibility over hidden at one binding",
	 {SV("__hidden_f", LOCAL, FUNC, HIDDEN, 0x1000, 0x10),
	  SV("f", LOCAL, FUNC, DEFAULT, 0x1000, 0x10)},
	 {{0x1000, "f"}}},
	{"protected counts as default; internal as hidden",
	 {SV("i", GLOBAL, FUNC, INTERNAL, 0x1000, 0x10),
	  SV("p", GLOBAL, FUNC, PROTECTED, 0x1000, 0x10)},
	 {{0x1000, "p"}}},
	{"ties: the earlier in the table",
	 {S("first", GLOBAL, FUNC, 0x1000, 0x10), S("second", GLOBAL, FUNC, 0x1000, 0x10),
	  S("third", GLOBAL, FUNC, 0x1000, 0x10)},
	 {{0x1000, "first"}, {0x100c, "first"}}},
	{"ties among locals: the earlier in the table",
	 {S("a_local", LOCAL, FUNC, 0x2000, 0x10), S("b_local", LOCAL, FUNC, 0x2000, 0x10)},
	 {{0x2000, "a_local"}}},
	{"aliases of different sizes: the winner, over the largest",
	 {S("small", GLOBAL, FUNC, 0x1000, 0x8), S("big", LOCAL, FUNC, 0x1000, 0x40)},
	 {{0x1000, "small"}, {0x1020, "small"}, {0x1040, NULL}}},
	{"the function at the greatest address at or below",
	 {S("a", GLOBAL, FUNC, 0x1000, 0x10), S("b", GLOBAL, FUNC, 0x1010, 0x10),
	  S("c", LOCAL, FUNC, 0x1030, 0x10)},
	 {{0x100f, "a"}, {0x1010, "b"}, {0x1024, NULL}, {0x1030, "c"}}},
	{"not candidates: undefined, absolute, empty names, objects",
	 {SX("undef", GLOBAL, FUNC, SHN_UNDEF, 0x1000, 0x10),
	  SX("abs", GLOBAL, FUNC, SHN_ABS, 0x1000, 0x10), S("", GLOBAL, FUNC, 0x1000, 0x10),
	  S("obj", GLOBAL, OBJECT, 0x1000, 0x10), S("real", LOCAL, FUNC, 0x1000, 0x10)},
	 {{0x1000, "real"}, {0x1008, "real"}}},
	{"only non-candidates: no name",
	 {SX("undef", GLOBAL, FUNC, SHN_UNDEF, 0x1000, 0x10),
	  SX("abs", GLOBAL, FUNC, SHN_ABS, 0x1000, 0x10)},
	 {{0x1000, NULL}}},
	{"a function before a label at its address",
	 {S("lbl", GLOBAL, NOTYPE, 0x1000, 0), S("f", LOCAL, FUNC, 0x1000, 0x10)},
	 {{0x1000, "f"}, {0x1004, "f"}}},
	{"a label inside a function does not cut it",
	 {S("f", GLOBAL, FUNC, 0x1000, 0x40), S("loop", LOCAL, NOTYPE, 0x1010, 0)},
	 {{0x1010, "f"}, {0x1030, "f"}}},
	{"a label in a gap between functions names its entry",
	 {S("f", GLOBAL, FUNC, 0x1000, 0x10), S("stub", GLOBAL, NOTYPE, 0x1010, 0),
	  S("g", GLOBAL, FUNC, 0x1020, 0x10)},
	 {{0x1010, "stub"}, {0x1014, "stub"}, {0x1015, NULL}, {0x1020, "g"}}},
	{"an unsized label before a sized function",
	 {S("start_lbl", GLOBAL, FUNC, 0x1000, 0), S("work", GLOBAL, FUNC, 0x1008, 0x20)},
	 {{0x1000, "start_lbl"}, {0x1004, "start_lbl"}, {0x1008, "work"}, {0x100c, "work"}}},
	{"a debug file's versioned aliases: the default version names it",
	 {S("__lock@GLIBC_2.2.5", GLOBAL, FUNC, 0x1000, 0x10),
	  S("lock@@GLIBC_2.2.5", GLOBAL, FUNC, 0x1000, 0x10)},
	 {{0x1000, "lock@@GLIBC_2.2.5"}, {0x100f, "lock@@GLIBC_2.2.5"}}},
	{"sections of a relocatable object are apart",
	 {SX("a", GLOBAL, FUNC, 3, 0x0, 0x10), SX("b", GLOBAL, FUNC, 5, 0x0, 0x10)},
	 {{0}}}, /* queried by relocatable_sections */
};

/* Build the table of a row from its symbols in the given input order. */
static size_t build(const struct table_row *r, const size_t *order, size_t n,
		    struct trail_symrule_ent *v)
{
	size_t k = 0;

	for (size_t j = 0; j < n; j++) {
		const struct sym *s = &r->syms[order[j]];
		int cls = trail__symrule_class(s->info, s->shndx, s->name);

		if (cls < 0)
			continue;
		v[k++] = (struct trail_symrule_ent){
			.value = s->value,
			.size = s->size,
			.shndx = s->shndx == 14 ? 0 : s->shndx, /* a linked file: one space */
			.index = (uint32_t)order[j] + 1,
			.name = (uint32_t)order[j],
			.rank = trail__symrule_rank(cls, s->info, s->other, s->size, s->name),
		};
	}
	return trail__symrule_table(v, k);
}

TEST(tables)
{
	for (size_t i = 0; i < sizeof(table_rows) / sizeof(table_rows[0]); i++) {
		const struct table_row *r = &table_rows[i];
		size_t n = 0;

		while (n < MAXS && r->syms[n].name)
			n++;
		/* input orders: as in the table, reversed, rotated */
		for (int o = 0; o < 3; o++) {
			struct trail_symrule_ent v[MAXS];
			size_t order[MAXS], nv;

			for (size_t j = 0; j < n; j++)
				order[j] = o == 0 ? j : o == 1 ? n - 1 - j : (j + 1) % n;
			nv = build(r, order, n, v);
			for (size_t j = 1; j < nv; j++) /* sorted, one per address */
				CHECK(v[j - 1].shndx < v[j].shndx ||
				      (v[j - 1].shndx == v[j].shndx && v[j - 1].value < v[j].value));
			for (size_t q = 0; q < MAXQ && r->q[q].addr; q++) {
				const struct query *qq = &r->q[q];
				const struct trail_symrule_ent *e =
					trail__symrule_find(v, nv, 0, qq->addr);
				const char *got = e ? r->syms[e->name].name : NULL;

				if (!got != !qq->want || (got && strcmp(got, qq->want))) {
					fprintf(stderr, "  %s (order %d): 0x%llx is %s, want %s\n",
						r->what, o, (unsigned long long)qq->addr,
						got ? got : "unnamed", qq->want ? qq->want : "unnamed");
					check_failures++;
				}
			}
		}
	}
}

TEST(relocatable_sections)
{
	/* the same offset in two sections: each its own function */
	const struct table_row *r = &table_rows[sizeof(table_rows) / sizeof(table_rows[0]) - 1];
	size_t order[] = {1, 0};
	struct trail_symrule_ent v[2];
	size_t nv = build(r, order, 2, v);

	CHECK_EQ(nv, 2);
	CHECK(trail__symrule_find(v, nv, 3, 4) && !strcmp(r->syms[trail__symrule_find(v, nv, 3, 4)->name].name, "a"));
	CHECK(trail__symrule_find(v, nv, 5, 4) && !strcmp(r->syms[trail__symrule_find(v, nv, 5, 4)->name].name, "b"));
	CHECK(!trail__symrule_find(v, nv, 4, 4));
	CHECK(!trail__symrule_find(v, nv, 3, 0x10));
	CHECK_EQ(trail__symrule_upto(v, nv, 3, 0), 1);
	CHECK_EQ(trail__symrule_upto(v, nv, 5, 0), 2);
}

TEST(covers)
{
	CHECK(trail__symrule_covers(0x1000, 0x10, 0x1000));
	CHECK(trail__symrule_covers(0x1000, 0x10, 0x100f));
	CHECK(!trail__symrule_covers(0x1000, 0x10, 0x1010));
	CHECK(!trail__symrule_covers(0x1000, 0x10, 0xfff));
	/* unsized: the entry and an endbr64 after it */
	CHECK(trail__symrule_covers(0x1000, 0, 0x1000));
	CHECK(trail__symrule_covers(0x1000, 0, 0x1000 + TRAIL_SYMRULE_SLACK));
	CHECK(!trail__symrule_covers(0x1000, 0, 0x1001 + TRAIL_SYMRULE_SLACK));
	/* no wrap at the top of the address space */
	CHECK(trail__symrule_covers(UINT64_MAX - 4, 0x100, UINT64_MAX));
	CHECK(!trail__symrule_covers(UINT64_MAX - 4, 0x100, 0));
}

TEST(big_table_sorted)
{
	/* many aliases in scrambled order: heapsort, then one per address
	 * named by the best rank and the lowest index */
	enum { N = 3000 };
	static struct trail_symrule_ent v[N];
	size_t nv;

	for (uint32_t i = 0; i < N; i++) {
		uint32_t j = (i * 7919u) % N; /* a permutation */
		unsigned char info = j % 3 == 0 ? INFO(LOCAL, FUNC) : j % 3 == 1 ? INFO(WEAK, FUNC)
										   : INFO(GLOBAL, FUNC);

		v[i] = (struct trail_symrule_ent){
			.value = 0x1000 + (j / 10) * 0x10, .size = 0x10, .index = j + 1, .name = j,
			.rank = trail__symrule_rank(TRAIL_SYMRULE_FUNC, info, STV_DEFAULT, 0x10, NULL),
		};
	}
	nv = trail__symrule_table(v, N);
	CHECK_EQ(nv, N / 10);
	for (size_t k = 0; k < nv; k++) {
		/* aliases j = 10k..10k+9: the globals are j % 3 == 2; the first */
		uint32_t want = (uint32_t)k * 10;

		while (want % 3 != 2)
			want++;
		if (v[k].name != want || v[k].value != 0x1000 + k * 0x10) {
			fprintf(stderr, "  group %zu: %u at 0x%llx\n", k, v[k].name,
				(unsigned long long)v[k].value);
			check_failures++;
			break;
		}
	}
}

TEST_MAIN(CHECK_T(candidates), CHECK_T(tables), CHECK_T(relocatable_sections),
	  CHECK_T(covers), CHECK_T(big_table_sorted))
