/* SPDX-License-Identifier: MIT */
/*
 * test-pltscan.c - which PLT entries are library calls
 * (src/common/pltscan.c), the rule libtrail's sites, the recorder's names
 * and `trail list -f` share. A PLT is built byte by byte from entry forms
 * (lazy .plt, IBT .plt.sec, PLT0, .plt.got-like, garbage) with a
 * relocation table; each row says which entries must come out, with which
 * GOT slot and symbol.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/pltscan.h"

#define PLT_ADDR 0x1020u
#define GOT_ADDR 0x4000u

enum form { PLT0, LAZY, IBT, IBT_NOBND, BND, PUSH_ONLY, GARBAGE };

/* entry i of form f jumping through slot: 16 bytes at out */
static void entry(uint8_t *out, uint64_t at, enum form f, uint64_t slot)
{
	static const uint8_t endbr[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t k = 0;
	int32_t d;

	memset(out, 0x90, TRAIL_PLT_ENTRY);
	switch (f) {
	case PLT0: /* push GOT+8; jmp *GOT+16 */
		out[0] = 0xff;
		out[1] = 0x35;
		return;
	case PUSH_ONLY: /* an IBT .plt's lazy entry: endbr64; push; bnd jmp PLT0 */
		memcpy(out, endbr, 4);
		out[4] = 0x68;
		return;
	case GARBAGE:
		memset(out, 0xcc, TRAIL_PLT_ENTRY);
		return;
	case IBT:
		memcpy(out, endbr, 4);
		k = 4;
		out[k++] = 0xf2;
		break;
	case IBT_NOBND:
		memcpy(out, endbr, 4);
		k = 4;
		break;
	case BND:
		out[k++] = 0xf2;
		break;
	case LAZY:
		break;
	}
	out[k] = 0xff;
	out[k + 1] = 0x25;
	d = (int32_t)(int64_t)(slot - (at + k + 6));
	memcpy(out + k + 2, &d, 4);
}

struct hit {
	uint64_t entry, slot;
	uint32_t sym;
};

struct hits {
	struct hit h[16];
	size_t n, stop_after;
};

static int collect(void *arg, uint64_t e, uint64_t slot, uint32_t sym)
{
	struct hits *c = arg;

	if (c->n < 16)
		c->h[c->n++] = (struct hit){e, slot, sym};
	return c->stop_after && c->n == c->stop_after;
}

TEST(entry_forms)
{
	static const enum form forms[] = {PLT0, LAZY, IBT, IBT_NOBND, BND, PUSH_ONLY, GARBAGE, LAZY};
	enum { N = sizeof(forms) / sizeof(forms[0]) };
	uint8_t code[N * TRAIL_PLT_ENTRY];
	Elf64_Rela rela[N];
	struct hits c = {0};
	size_t n;

	/* entry i jumps through slot i, whose relocation names symbol 10 + i;
	 * the relocations are listed in reverse (any order is read) */
	for (size_t i = 0; i < N; i++) {
		entry(code + i * TRAIL_PLT_ENTRY, PLT_ADDR + i * TRAIL_PLT_ENTRY, forms[i],
		      GOT_ADDR + 8 * i);
		rela[N - 1 - i] = (Elf64_Rela){.r_offset = GOT_ADDR + 8 * i,
					       .r_info = ELF64_R_INFO(10 + i, R_X86_64_JUMP_SLOT)};
	}
	/* the last one's slot is a GLOB_DAT (.plt.got): not a library call */
	rela[0].r_info = ELF64_R_INFO(10 + N - 1, R_X86_64_GLOB_DAT);
	n = trail__plt_each(code, PLT_ADDR, sizeof(code), rela, N, collect, &c);
	CHECK_EQ(n, 4);
	CHECK_EQ(c.n, 4);
	for (size_t k = 0, i = 1; k < c.n; k++, i++) {
		CHECK_EQ(c.h[k].entry, PLT_ADDR + i * TRAIL_PLT_ENTRY);
		CHECK_EQ(c.h[k].slot, GOT_ADDR + 8 * i);
		CHECK_EQ(c.h[k].sym, 10 + i);
	}
}

TEST(bounds_and_stop)
{
	uint8_t code[3 * TRAIL_PLT_ENTRY];
	Elf64_Rela rela[3];
	struct hits c = {.stop_after = 2};

	for (size_t i = 0; i < 3; i++) {
		entry(code + i * TRAIL_PLT_ENTRY, PLT_ADDR + i * TRAIL_PLT_ENTRY, LAZY,
		      GOT_ADDR + 8 * i);
		rela[i] = (Elf64_Rela){.r_offset = GOT_ADDR + 8 * i,
				       .r_info = ELF64_R_INFO(1 + i, R_X86_64_JUMP_SLOT)};
	}
	/* fn's non-zero answer stops the walk */
	CHECK_EQ(trail__plt_each(code, PLT_ADDR, sizeof(code), rela, 3, collect, &c), 2);
	/* a section cut inside its last entry: that entry is not read */
	c = (struct hits){0};
	CHECK_EQ(trail__plt_each(code, PLT_ADDR, sizeof(code) - 1, rela, 3, collect, &c), 2);
	/* no relocations, no code: nothing */
	CHECK_EQ(trail__plt_each(code, PLT_ADDR, sizeof(code), rela, 0, collect, &c), 0);
	CHECK_EQ(trail__plt_each(NULL, PLT_ADDR, 0, rela, 3, collect, &c), 0);
	/* a slot no relocation names */
	rela[1].r_offset = GOT_ADDR + 0x100;
	c = (struct hits){0};
	CHECK_EQ(trail__plt_each(code, PLT_ADDR, sizeof(code), rela, 3, collect, &c), 2);
	CHECK_EQ(c.h[1].entry, PLT_ADDR + 2 * TRAIL_PLT_ENTRY);
}

TEST(hookable)
{
	static const struct {
		const char *name;
		int want;
	} rows[] = {
		{"malloc", 1}, {"write", 1}, {"pthread_mutex_lock", 1}, {"__cxa_throw", 1},
		{"longjmp", 1}, {"fork", 1}, {"exit", 1},
		/* return twice */
		{"setjmp", 0}, {"_setjmp", 0}, {"sigsetjmp", 0}, {"__sigsetjmp", 0},
		{"vfork", 0}, {"__vfork", 0}, {"getcontext", 0}, {"swapcontext", 0},
		/* the unwinder's, the start and end of the program */
		{"_Unwind_Resume", 0}, {"_Unwind_RaiseException", 0},
		{"__libc_start_main", 0}, {"__cxa_finalize", 0}, {"", 0},
		/* near names are not those */
		{"setjmp2", 1}, {"vforkx", 1},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (trail__plt_hookable(rows[i].name) != rows[i].want) {
			fprintf(stderr, "  %s: %d\n", rows[i].name, !rows[i].want);
			check_failures++;
		}
}

TEST_MAIN(CHECK_T(entry_forms), CHECK_T(bounds_and_stop), CHECK_T(hookable))
