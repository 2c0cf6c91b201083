/* SPDX-License-Identifier: MIT */
/*
 * test-pltscan.c - which PLT entries are library calls
 * (src/common/pltscan.c), the rule libtrail's sites, the recorder's names
 * and `trail list -f` share. A PLT is built byte by byte from entry forms
 * (lazy .plt, IBT .plt.sec, PLT0, .plt.got-like, garbage) with a
 * relocation table; each row says which entries must come out, with which
 * GOT slot and symbol. Then -fno-plt code: which GOT slots only calls use,
 * from instruction forms aimed at them (call, tail jump, load, compare
 * with an immediate) in code that is not decoded.
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

/* -fno-plt: instruction forms that read a GOT slot */
enum use { CALL, TAILJMP, LOAD, CMP_IMM8, CMP_IMM32, CALL_NOTRACK };

#define TEXT_ADDR 0x1200u

/* the instruction of form u aimed at slot, at code (address at): its length */
static size_t use_insn(uint8_t *code, uint64_t at, enum use u, uint64_t slot)
{
	static const struct {
		uint8_t op[4], n, imm;
	} f[] = {
		[CALL] = {{0xff, 0x15}, 2, 0},          /* call *slot(%rip) */
		[TAILJMP] = {{0xff, 0x25}, 2, 0},       /* jmp *slot(%rip) */
		[LOAD] = {{0x48, 0x8b, 0x05}, 3, 0},    /* mov slot(%rip),%rax */
		[CMP_IMM8] = {{0x48, 0x83, 0x3d}, 3, 1},  /* cmpq $0,slot(%rip) */
		[CMP_IMM32] = {{0x48, 0x81, 0x3d}, 3, 4}, /* cmpq $imm32,slot(%rip) */
		[CALL_NOTRACK] = {{0x3e, 0xff, 0x15}, 3, 0},
	};
	size_t len = f[u].n + 4u + f[u].imm;
	int32_t d = (int32_t)(int64_t)(slot - (at + len));

	memcpy(code, f[u].op, f[u].n);
	memcpy(code + f[u].n, &d, 4);
	memset(code + f[u].n + 4, 0, f[u].imm);
	return len;
}

/* keep: symbols 1..99 are imported functions, 100 and up are not */
static int keep_below_100(void *arg, uint32_t sym)
{
	(void)arg;
	return sym > 0 && sym < 100;
}

TEST(got_calls)
{
	/* slot i (at GOT_ADDR + 8i) and how the code reads it */
	static const struct {
		enum use uses[3];
		size_t n;
		uint32_t want;
	} rows[] = {
		{{CALL}, 1, TRAIL_GOT_CALL},
		{{CALL, TAILJMP, CALL_NOTRACK}, 3, TRAIL_GOT_CALL},
		{{TAILJMP}, 1, TRAIL_GOT_CALL},
		{{CALL, LOAD}, 2, TRAIL_GOT_CALL | TRAIL_GOT_OTHER}, /* its address taken */
		{{CMP_IMM8, CALL}, 2, TRAIL_GOT_CALL | TRAIL_GOT_OTHER}, /* a weak one tested */
		{{CALL, CMP_IMM32}, 2, TRAIL_GOT_CALL | TRAIL_GOT_OTHER},
		{{LOAD}, 1, TRAIL_GOT_OTHER},
		{{0}, 0, 0}, /* not read */
	};
	enum { N = sizeof(rows) / sizeof(rows[0]) };
	uint8_t code[N * 3 * 16 + 64];
	Elf64_Rela rela[N + 3];
	struct trail_gotslot v[N + 3];
	size_t off = 0, n, calls = 0, cut = 0;

	memset(code, 0x90, sizeof(code));
	for (size_t i = 0; i < N; i++) {
		if (i == N / 2)
			cut = off;
		for (size_t u = 0; u < rows[i].n; u++) {
			off += use_insn(code + off, TEXT_ADDR + off, rows[i].uses[u], GOT_ADDR + 8 * i);
			code[off++] = 0x90;
		}
		/* listed in reverse: any order is read */
		rela[N - 1 - i] = (Elf64_Rela){.r_offset = GOT_ADDR + 8 * i,
					       .r_info = ELF64_R_INFO(1 + i, R_X86_64_GLOB_DAT)};
	}
	/* a JUMP_SLOT (the PLT's), a symbol keep refuses, a slot not 8-aligned */
	rela[N] = (Elf64_Rela){.r_offset = GOT_ADDR + 0x100, .r_info = ELF64_R_INFO(5, R_X86_64_JUMP_SLOT)};
	rela[N + 1] = (Elf64_Rela){.r_offset = GOT_ADDR + 0x108, .r_info = ELF64_R_INFO(100, R_X86_64_GLOB_DAT)};
	rela[N + 2] = (Elf64_Rela){.r_offset = GOT_ADDR + 0x113, .r_info = ELF64_R_INFO(6, R_X86_64_GLOB_DAT)};
	n = trail__got_slots(rela, N + 3, v, keep_below_100, NULL);
	CHECK_EQ(n, N);
	/* the code in two sections */
	trail__got_uses(code, TEXT_ADDR, cut, v, n);
	trail__got_uses(code + cut, TEXT_ADDR + cut, sizeof(code) - cut, v, n);
	for (size_t i = 0; i < n; i++) {
		CHECK_EQ(v[i].slot, GOT_ADDR + 8 * i);
		CHECK_EQ(v[i].sym, 1 + i);
		if (v[i].use != rows[i].want) {
			fprintf(stderr, "  slot %zu: use %u, wanted %u\n", i, v[i].use, rows[i].want);
			check_failures++;
		}
		calls += trail__got_is_call(&v[i]);
	}
	CHECK_EQ(calls, 3);
	/* the same slot twice in the table: once */
	rela[1] = rela[0];
	CHECK_EQ(trail__got_slots(rela, N, v, keep_below_100, NULL), N - 1);
	/* nothing to read */
	CHECK_EQ(trail__got_slots(NULL, 3, v, keep_below_100, NULL), 0);
	trail__got_uses(NULL, TEXT_ADDR, 100, v, n);
	trail__got_uses(code, TEXT_ADDR, 3, v, n);
}

TEST_MAIN(CHECK_T(entry_forms), CHECK_T(bounds_and_stop), CHECK_T(hookable), CHECK_T(got_calls))
