/* SPDX-License-Identifier: MIT */
/*
 * test-reloc.c - entering unmodified code (src/arch/x86_64/reloc.c): a
 * table of small functions, as bytes, each with first instructions that
 * need something done to run elsewhere (RIP-relative operands with and
 * without immediates, short branches, jrcxz, calls direct and through
 * memory, endbr64, prefixes, lock). Each is checked by running it: the
 * function itself, then its relocated copy (which jumps back into the
 * function), must return the same for the same inputs, and a call moved
 * into the copy must leave the original return address on the stack.
 * Then the functions whose entry cannot be displaced, with their reasons,
 * and the leaves that move whole instead (a loop whose head is at or
 * near the entry), run from their copy with the original wiped.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "check.h"

#define PAGE 4096
#define DATA 0x800  /* a data word in the function's page */
#define DATA2 0x808 /* a function pointer there */
#define CALLEE 0x400 /* a function the tested ones call */

typedef long (*fn_t)(long);

struct row {
	const char *name;
	uint8_t code[48];
	unsigned n;
	int disp_at;     /* offset of a rel32 to DATA to fill in (-1: none) */
	int disp2_at;    /* the same, to DATA2 */
	int call_at;     /* offset of a call rel32 to CALLEE (-1: none) */
	unsigned len;    /* displaced bytes expected */
};

/* callee: returns its own return address (mov (%rsp),%rax; ret) */
static const uint8_t callee[] = {0x48, 0x8b, 0x04, 0x24, 0xc3};

static const struct row rows[] = {
	{"endbr64 push", {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x8d, 0x47, 0x01,
			  0x5d, 0xc3}, 14, -1, -1, -1, 5},
	{"rip load", {0x48, 0x8b, 0x05, 0, 0, 0, 0, 0x48, 0x01, 0xf8, 0xc3}, 11, 3, -1, -1, 7},
	{"rip lea", {0x48, 0x8d, 0x05, 0, 0, 0, 0, 0xc3}, 8, 3, -1, -1, 7},
	/* movl $imm32, DATA(%rip); mov DATA(%rip), %eax: an immediate after
	 * the displacement (and equal to it: found by decoding, not by value) */
	{"rip store imm", {0xc7, 0x05, 0, 0, 0, 0, 0xf6, 0x07, 0, 0, 0x8b, 0x05, 0xf0, 0x07, 0, 0,
			   0x48, 0x01, 0xf8, 0xc3}, 20, 2, -1, -1, 10},
	/* cmpq $5, DATA(%rip): an imm8 after it */
	{"rip cmp imm8", {0x48, 0x83, 0x3d, 0, 0, 0, 0, 0x05, 0x0f, 0x94, 0xc0, 0x48, 0x0f, 0xb6,
			  0xc0, 0xc3}, 16, 3, -1, -1, 8},
	/* test %rdi,%rdi; je +5; lea 2(%rdi),%rax; ret; mov $99,%rax; ret */
	{"short jcc", {0x48, 0x85, 0xff, 0x74, 0x05, 0x48, 0x8d, 0x47, 0x02, 0xc3, 0x48, 0xc7, 0xc0,
		       0x63, 0, 0, 0, 0xc3}, 18, -1, -1, -1, 5},
	/* cmp $3,%rdi; jg +... long form */
	{"long jcc", {0x48, 0x83, 0xff, 0x03, 0x0f, 0x8f, 0x05, 0, 0, 0, 0x48, 0x8d, 0x47, 0x02,
		      0xc3, 0x48, 0xc7, 0xc0, 0x63, 0, 0, 0, 0xc3}, 23, -1, -1, -1, 10},
	/* xor %eax,%eax; nop; nop; jmp +8 (over a ud2 pad); ...; lea 5(%rdi),%rax; ret */
	{"short jmp last", {0x31, 0xc0, 0x90, 0x90, 0xeb, 0x02, 0x0f, 0x0b, 0x48, 0x8d, 0x47, 0x05,
			    0xc3}, 13, -1, -1, -1, 6},
	/* mov %rdi,%rcx; jrcxz +6; mov $1,%eax; ret; mov $2,%eax; ret */
	{"jrcxz", {0x48, 0x89, 0xf9, 0xe3, 0x06, 0xb8, 0x01, 0, 0, 0, 0xc3, 0xb8, 0x02, 0, 0, 0,
		   0xc3}, 17, -1, -1, -1, 5},
	/* push %rbx; call CALLEE; pop %rbx; ret: returns the return address */
	{"call last", {0x53, 0xe8, 0, 0, 0, 0, 0x5b, 0xc3}, 8, -1, -1, 2, 6},
	/* push %rbx; call *DATA2(%rip); pop %rbx; ret */
	{"call rip", {0x53, 0xff, 0x15, 0, 0, 0, 0, 0x5b, 0xc3}, 9, -1, 3, -1, 7},
	/* a 10-byte nop with prefixes (66 2e 0f 1f 84 00 ..), then lea 3(%rdi) */
	{"prefixed nop", {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x48, 0x8d, 0x47, 0x03,
			  0xc3}, 15, -1, -1, -1, 10},
	/* mov %rdi,%rax; lock xadd %rax,DATA(%rip); ret */
	{"lock rip", {0x48, 0x89, 0xf8, 0xf0, 0x48, 0x0f, 0xc1, 0x05, 0, 0, 0, 0, 0xc3}, 13, 8, -1,
	 -1, 12},
};

static uint8_t *region(void)
{
	void *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void put_rel(uint8_t *page, int at, uintptr_t target, unsigned end_after)
{
	int32_t d = (int32_t)(target - ((uintptr_t)page + (unsigned)at + end_after));

	memcpy(page + at, &d, 4);
}

/* lay out row r in the page: the function at 0, its data and callee */
static void lay_out(uint8_t *page, const struct row *r)
{
	uintptr_t g = (uintptr_t)page + CALLEE;
	int64_t v = 5;

	memset(page, 0xcc, PAGE);
	memcpy(page, r->code, r->n);
	memcpy(page + CALLEE, callee, sizeof(callee));
	memcpy(page + DATA, &v, 8);
	memcpy(page + DATA2, &g, 8);
	/* rel32 fields end 4 bytes later, plus an immediate for some rows */
	if (r->disp_at >= 0) {
		unsigned imm = !strcmp(r->name, "rip store imm") ? 4 :
			       !strcmp(r->name, "rip cmp imm8") ? 1 : 0;

		put_rel(page, r->disp_at, (uintptr_t)page + DATA, 4 + imm);
		if (imm == 4) /* the immediate equal to the displacement */
			memcpy(page + r->disp_at + 4, page + r->disp_at, 4);
		if (imm == 4) /* and the load after it */
			put_rel(page, 12, (uintptr_t)page + DATA, 4);
	}
	if (r->disp2_at >= 0)
		put_rel(page, r->disp2_at, (uintptr_t)page + DATA2, 4);
	if (r->call_at >= 0)
		put_rel(page, r->call_at, g, 4);
}

TEST(relocated_code_runs_the_same)
{
	uint8_t *page = region();
	static const long in[] = {0, 1, 3, 4, -7, 1000};

	CHECK(page != NULL);
	if (!page)
		return;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct trail_arch_reloc rl;
		unsigned len = 0;
		char why[160];
		uint8_t *copy = page + PAGE;
		int rc;

		lay_out(page, r);
		rc = trail_arch_reloc_check(page, r->n, r->n, (uintptr_t)page, &len, why,
					    sizeof(why));
		if (rc) {
			fprintf(stderr, "  %s: refused: %s (%d)\n", r->name, why, rc);
			CHECK(0);
			continue;
		}
		CHECK_EQ(len, r->len);
		rc = trail_arch_reloc_make(page, len, (uintptr_t)page, (uintptr_t)copy, &rl);
		CHECK_EQ(rc, 0);
		if (rc)
			continue;
		CHECK(rl.copy_len <= TRAIL_ARCH_RELOC_CODE);
		CHECK(!memcmp(rl.orig, page, len));
		memcpy(copy, rl.code, rl.copy_len);
		for (size_t k = 0; k < sizeof(in) / sizeof(in[0]); k++) {
			long a, b;

			lay_out(page, r); /* the data back as it was */
			a = ((fn_t)(uintptr_t)page)(in[k]);
			lay_out(page, r);
			b = ((fn_t)(uintptr_t)copy)(in[k]);
			if (a != b)
				fprintf(stderr, "  %s(%ld): %ld, relocated %ld\n", r->name, in[k], a, b);
			CHECK_EQ(a, b);
		}
		/* the map: each displaced instruction's place in the copy */
		CHECK_EQ(trail_arch_reloc_map(&rl, (uintptr_t)page, (uintptr_t)page), (uintptr_t)copy);
		CHECK_EQ(trail_arch_reloc_map(&rl, (uintptr_t)page, (uintptr_t)page + len), 0);
		if (rl.ninsn > 1)
			CHECK_EQ(trail_arch_reloc_map(&rl, (uintptr_t)page,
						      (uintptr_t)page + rl.orig_off[1]),
				 (uintptr_t)copy + rl.copy_off[1]);
	}
	/* a call moved into the copy returns to the function, not the copy */
	{
		const struct row *r = &rows[9];
		struct trail_arch_reloc rl;
		unsigned len;

		lay_out(page, r);
		CHECK(!trail_arch_reloc_check(page, r->n, r->n, (uintptr_t)page, &len, NULL, 0));
		CHECK(!trail_arch_reloc_make(page, len, (uintptr_t)page, (uintptr_t)page + PAGE, &rl));
		memcpy(page + PAGE, rl.code, rl.copy_len);
		CHECK_EQ(((fn_t)(uintptr_t)(page + PAGE))(0), (uintptr_t)page + 6);
	}
	munmap(page, 2 * PAGE);
}

struct bad {
	const char *name;
	uint8_t code[16];
	unsigned n;
	int err;
	const char *why;
};

static const struct bad bads[] = {
	{"ret in 5 bytes", {0x31, 0xc0, 0xc3, 0xcc, 0xcc, 0xcc}, 6, -ENOSPC, "ends within"},
	{"too short", {0x31, 0xc0}, 2, -ENOSPC, "shorter than a jump"},
	/* xor %eax,%eax; dec %rdi; jnz back 2 bytes in: a loop head the jump
	 * would replace (one at the entry itself meets the jump: taken) */
	{"loop inside", {0x31, 0xc0, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3}, 8, -EXDEV,
	 "branch into the first 5"},
	/* nop; nop; jnz +0 -> 2, further on: a branch into the displaced bytes */
	{"branch inside", {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x75, 0xfa, 0xc3}, 9, -EXDEV,
	 "branch into"},
	/* call *%rax first: its return address would be inside the jump */
	{"indirect call first", {0xff, 0xd0, 0x90, 0x90, 0x90, 0xc3}, 6, -ENOTSUP, "a call inside"},
	/* a jump table: notrack jmp *%rax further on */
	{"jump table", {0x48, 0x89, 0xf8, 0x90, 0x90, 0x3e, 0xff, 0xe0}, 8, -EXDEV, "jump table"},
	{"not code", {0x06, 0x06, 0x06, 0x06, 0x06, 0x06}, 6, -EINVAL, "not an instruction"},
};

TEST(unrelocatable_entries_say_why)
{
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		char why[160] = "";
		unsigned len = 0;
		int rc = trail_arch_reloc_check(bads[i].code, bads[i].n, bads[i].n, 0x400000, &len,
						why, sizeof(why));

		if (rc != bads[i].err || !strstr(why, bads[i].why))
			fprintf(stderr, "  %s: %d \"%s\"\n", bads[i].name, rc, why);
		CHECK_EQ(rc, bads[i].err);
		CHECK(strstr(why, bads[i].why) != NULL);
	}
}

/* A switch's jump table (gcc's PIC form), read through the table reader:
 * its entries decide whether the entry can take a jump. */
#define TABLE 0x500000u
static int32_t table[3];

static int read_table(void *ctx, uintptr_t addr, void *buf, size_t n)
{
	(void)ctx;
	if (addr < TABLE || addr + n > TABLE + sizeof(table))
		return -1;
	memcpy(buf, (const uint8_t *)table + (addr - TABLE), n);
	return 0;
}

TEST(jump_tables_read)
{
	static const uint8_t f[] = {
		0x48, 0x89, 0xf8,                   /*  0: mov %rdi,%rax */
		0x83, 0xfe, 0x02,                   /*  3: cmp $2,%esi */
		0x77, 0x12,                         /*  6: ja 26 */
		0x48, 0x8d, 0x0d, 0xf1, 0xff, 0x0f, 0x00, /* 8: lea TABLE(%rip),%rcx */
		0x89, 0xf2,                         /* 15: mov %esi,%edx */
		0x48, 0x63, 0x14, 0x91,             /* 17: movslq (%rcx,%rdx,4),%rdx */
		0x48, 0x01, 0xca,                   /* 21: add %rcx,%rdx */
		0xff, 0xe2,                         /* 24: jmp *%rdx */
		0xc3, 0xc3, 0xc3,                   /* 26, 27, 28: the cases */
	};
	const uintptr_t fn = 0x400000;
	unsigned len = 0;
	char why[160] = "";

	for (int i = 0; i < 3; i++)
		table[i] = (int32_t)(int64_t)(fn + 26 + i - TABLE);
	/* without a reader: the table is unknown */
	trail_arch_table_reader(NULL, NULL);
	CHECK_EQ(trail_arch_reloc_check(f, sizeof(f), sizeof(f), fn, &len, why, sizeof(why)), -EXDEV);
	CHECK(strstr(why, "cannot be checked") != NULL);
	/* read: its three cases are past the displaced bytes */
	trail_arch_table_reader(read_table, NULL);
	CHECK_EQ(trail_arch_reloc_check(f, sizeof(f), sizeof(f), fn, &len, why, sizeof(why)), 0);
	CHECK_EQ(len, 6);
	/* one case into them: refused, and said which */
	table[1] = (int32_t)(int64_t)(fn + 2 - TABLE);
	CHECK_EQ(trail_arch_reloc_check(f, sizeof(f), sizeof(f), fn, &len, why, sizeof(why)), -EXDEV);
	CHECK(strstr(why, "a jump table entry into them (+0x2)") != NULL);
	/* a probe's jump at +8 (the lea): the table's cases are not in it */
	table[1] = (int32_t)(int64_t)(fn + 27 - TABLE);
	CHECK_EQ(trail_arch_jump_check(f, sizeof(f), fn, fn + 8, &len, why, sizeof(why)), 0);
	/* a table out of the reader's reach: unknown again */
	{
		uint8_t g[sizeof(f)];

		memcpy(g, f, sizeof(f));
		g[13] = 0x1f; /* the lea now points 1 MiB further */
		CHECK_EQ(trail_arch_reloc_check(g, sizeof(g), sizeof(g), fn, &len, why, sizeof(why)),
			 -EXDEV);
	}
	/* no bound check before the jump (gcc shares one between blocks):
	 * the entries are read while they are code near the jump (here, to
	 * the reader's end); one into the displaced bytes refuses */
	{
		uint8_t g[sizeof(f)];

		memcpy(g, f, sizeof(f));
		memcpy(g + 3, "\x0f\x1f\x00\x66\x90", 5); /* nopl (%rax); xchg %ax,%ax */
		for (int i = 0; i < 3; i++)
			table[i] = (int32_t)(int64_t)(fn + 26 + i - TABLE);
		CHECK_EQ(trail_arch_reloc_check(g, sizeof(g), sizeof(g), fn, &len, why, sizeof(why)), 0);
		table[2] = (int32_t)(int64_t)(fn + 3 - TABLE);
		CHECK_EQ(trail_arch_reloc_check(g, sizeof(g), sizeof(g), fn, &len, why, sizeof(why)),
			 -EXDEV);
		CHECK(strstr(why, "a jump table entry into them (+0x3)") != NULL);
		/* the first entry no code near the jump: no table known */
		table[0] = (int32_t)0x7fff0000;
		CHECK_EQ(trail_arch_reloc_check(g, sizeof(g), sizeof(g), fn, &len, why, sizeof(why)),
			 -EXDEV);
		CHECK(strstr(why, "cannot be checked") != NULL);
	}
	trail_arch_table_reader(NULL, NULL);
}

TEST(out_of_reach_copy_refused)
{
	/* a RIP-relative load copied 4 GiB away cannot reach its data */
	static const uint8_t code[] = {0x48, 0x8b, 0x05, 0x10, 0, 0, 0, 0xc3};
	struct trail_arch_reloc rl;

	CHECK_EQ(trail_arch_reloc_make(code, 7, 0x400000, 0x400000 + (6ull << 30), &rl), -ERANGE);
	CHECK_EQ(trail_arch_insn_len(code, sizeof(code), 0x400000), 7);
	CHECK_EQ(trail_arch_insn_len((const uint8_t *)"\x06", 1, 0), -EINVAL);
}

/* A function shorter than the jump, then alignment padding up to the next
 * symbol: the jump may cover the padding (room), and the copy runs it. */
TEST(short_function_before_padding)
{
	/* mov %rdi,%rax; ret; then a 4-byte nop of padding */
	static const uint8_t code[] = {0x48, 0x89, 0xf8, 0xc3, 0x0f, 0x1f, 0x40, 0x00};
	uint8_t *page = region();
	struct trail_arch_reloc rl;
	unsigned len = 0;
	char why[160];

	CHECK(page != NULL);
	if (!page)
		return;
	memcpy(page, code, sizeof(code));
	/* no room: refused as before */
	CHECK_EQ(trail_arch_reloc_check(page, 4, 4, (uintptr_t)page, &len, why, sizeof(why)),
		 -ENOSPC);
	CHECK(strstr(why, "ends within") != NULL);
	CHECK_EQ(trail_arch_reloc_check(page, 4, 8, (uintptr_t)page, &len, why, sizeof(why)), 0);
	CHECK_EQ(len, 4);
	CHECK(!trail_arch_reloc_make(page, len, (uintptr_t)page, (uintptr_t)page + PAGE, &rl));
	memcpy(page + PAGE, rl.code, rl.copy_len);
	CHECK_EQ(((fn_t)(uintptr_t)(page + PAGE))(42), 42);
	/* a branch to the ret, inside what the jump covers: refused */
	{
		/* je +0 (to the ret); ret; padding */
		static const uint8_t br[] = {0x74, 0x00, 0xc3, 0x90, 0x90, 0x90};

		CHECK_EQ(trail_arch_reloc_check(br, 3, 6, 0x400000, &len, why, sizeof(why)),
			 -EXDEV);
		/* the ret is not the function's last instruction: refused */
		CHECK_EQ(trail_arch_reloc_check(code, 8, 8, 0x400000, &len, why, sizeof(why)),
			 -ENOSPC);
	}
	munmap(page, 2 * PAGE);
}

/* The breakpoint fallback takes the first instruction alone: it is
 * relocated the same way, and refused only for what cannot run elsewhere. */
TEST(breakpoint_entries)
{
	/* dec %rdi; jnz back to the entry; mov %rdi,%rax; ret: a loop whose
	 * head is the entry takes the jump (each turn meets it) */
	static const uint8_t loop[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0x48, 0x89, 0xf8, 0xc3};
	/* xor %eax,%eax; dec %rdi; jnz back 2 bytes in; mov %rdi,%rax; ret:
	 * the loop the jump cannot take */
	static const uint8_t mid[] = {0x31, 0xc0, 0x48, 0xff, 0xcf, 0x75, 0xfb,
				      0x48, 0x89, 0xf8, 0xc3};
	uint8_t *page = region();
	struct trail_arch_reloc rl;
	unsigned len = 0;
	char why[160];

	CHECK(page != NULL);
	if (!page)
		return;
	memcpy(page, loop, sizeof(loop));
	CHECK_EQ(trail_arch_reloc_check(page, 9, 9, (uintptr_t)page, &len, why, sizeof(why)), 0);
	CHECK_EQ(len, 5);
	CHECK(!trail_arch_reloc_make(page, len, (uintptr_t)page, (uintptr_t)page + PAGE, &rl));
	memcpy(page + PAGE, rl.code, rl.copy_len);
	/* the copy decrements, its jnz goes back to the entry: runs to 0 */
	CHECK_EQ(((fn_t)(uintptr_t)(page + PAGE))(5), 0);
	memcpy(page, mid, sizeof(mid));
	CHECK_EQ(trail_arch_reloc_check(page, sizeof(mid), sizeof(mid), (uintptr_t)page, &len, why,
					sizeof(why)), -EXDEV);
	CHECK_EQ(trail_arch_trap_check(page, sizeof(mid), (uintptr_t)page, &len, why, sizeof(why)), 0);
	CHECK_EQ(len, 2);
	CHECK(!trail_arch_reloc_make(page, len, (uintptr_t)page, (uintptr_t)page + PAGE, &rl));
	memcpy(page + PAGE, rl.code, rl.copy_len);
	/* the copy clears, then goes on at the dec: the loop runs to 0 */
	CHECK_EQ(((fn_t)(uintptr_t)(page + PAGE))(5), 0);
	CHECK_EQ(trail_arch_reloc_map(&rl, (uintptr_t)page, (uintptr_t)page), (uintptr_t)page + PAGE);
	/* a function that is a lone ret */
	CHECK_EQ(trail_arch_trap_check((const uint8_t *)"\xc3", 1, 0x400000, &len, why,
				       sizeof(why)), 0);
	CHECK_EQ(len, 1);
	/* refused: a trap, an indirect call, not code */
	CHECK_EQ(trail_arch_trap_check((const uint8_t *)"\xcc\xc3", 2, 0x400000, &len, why,
				       sizeof(why)), -ENOTSUP);
	CHECK(strstr(why, "trap") != NULL);
	CHECK_EQ(trail_arch_trap_check((const uint8_t *)"\xff\xd0\xc3", 3, 0x400000, &len, why,
				       sizeof(why)), -ENOTSUP);
	CHECK(strstr(why, "indirect call") != NULL);
	CHECK_EQ(trail_arch_trap_check((const uint8_t *)"\x06", 1, 0x400000, &len, why,
				       sizeof(why)), -EINVAL);
	munmap(page, 2 * PAGE);
}

/* ------------------------------------------------ whole functions moved
 *
 * Functions no jump can enter at their first bytes, each run from a whole
 * copy (trail_arch_whole_make) after its original bytes were overwritten
 * with int3: a copy that went back into the original would trap. */
#define CALLEE2 0x480 /* lea 1(%rdi),%rax; ret */
#define SLOT 0x810    /* holds CALLEE2's address */

struct whole_row {
	const char *name;
	uint8_t code[24];
	unsigned n;
	int data_at; /* a rel32 to DATA (-1: none) */
	int rel_at;  /* a rel32 to CALLEE2 */
	int slot_at; /* a rel32 to SLOT */
};

static const struct whole_row wholes[] = {
	/* dec %rdi; jg entry; mov %rdi,%rax; ret */
	{"loop at the entry", {0x48, 0xff, 0xcf, 0x7f, 0xfb, 0x48, 0x89, 0xf8, 0xc3}, 9, -1, -1, -1},
	/* xor %eax,%eax; 1: add %edi,%eax; sub $1,%edi; jg 1b; ret */
	{"loop 2 bytes in", {0x31, 0xc0, 0x01, 0xf8, 0x83, 0xef, 0x01, 0x7f, 0xf9, 0xc3}, 10, -1, -1,
	 -1},
	/* xor; 1: add DATA(%rip),%rax; dec %rdi; jg 1b; ret */
	{"loop and data", {0x31, 0xc0, 0x48, 0x03, 0x05, 0, 0, 0, 0, 0x48, 0xff, 0xcf, 0x7f, 0xf4,
			   0xc3}, 15, 5, -1, -1},
	/* the sum loop, then mov %rax,%rdi; jmp CALLEE2 */
	{"loop then tail call", {0x31, 0xc0, 0x01, 0xf8, 0x83, 0xef, 0x01, 0x7f, 0xf9, 0x48, 0x89,
				 0xc7, 0xe9, 0, 0, 0, 0}, 17, -1, 13, -1},
	/* ... jmp *SLOT(%rip) */
	{"loop then GOT tail call", {0x31, 0xc0, 0x01, 0xf8, 0x83, 0xef, 0x01, 0x7f, 0xf9, 0x48,
				     0x89, 0xc7, 0xff, 0x25, 0, 0, 0, 0}, 18, -1, -1, 14},
	/* xor; 1: add; sub; jle 2f; jmp 1b; 2: ret */
	{"short jumps inside", {0x31, 0xc0, 0x01, 0xf8, 0x83, 0xef, 0x01, 0x7e, 0x02, 0xeb, 0xf7,
				0xc3}, 12, -1, -1, -1},
};

static void whole_lay_out(uint8_t *page, const struct whole_row *r)
{
	static const uint8_t callee2[] = {0x48, 0x8d, 0x47, 0x01, 0xc3};
	uintptr_t c2 = (uintptr_t)page + CALLEE2;
	int64_t v = 5;

	memset(page, 0xcc, PAGE);
	memcpy(page, r->code, r->n);
	memcpy(page + CALLEE2, callee2, sizeof(callee2));
	memcpy(page + DATA, &v, 8);
	memcpy(page + SLOT, &c2, 8);
	if (r->data_at >= 0)
		put_rel(page, r->data_at, (uintptr_t)page + DATA, 4);
	if (r->rel_at >= 0)
		put_rel(page, r->rel_at, c2, 4);
	if (r->slot_at >= 0)
		put_rel(page, r->slot_at, (uintptr_t)page + SLOT, 4);
}

TEST(whole_functions_run_the_same)
{
	static const long in[] = {0, 1, 3, 4, -7, 1000};
	uint8_t *page = region();

	CHECK(page != NULL);
	if (!page)
		return;
	for (size_t i = 0; i < sizeof(wholes) / sizeof(wholes[0]); i++) {
		const struct whole_row *r = &wholes[i];
		uint8_t *copy = page + PAGE;
		unsigned len = 0;
		char why[160];
		int kind;

		whole_lay_out(page, r);
		kind = trail_arch_entry_check(page, r->n, r->n, (uintptr_t)page, &len, why,
					      sizeof(why));
		if (kind != TRAIL_ARCH_ENTER_WHOLE)
			fprintf(stderr, "  %s: entered as %d (%s)\n", r->name, kind, why);
		CHECK_EQ(kind, TRAIL_ARCH_ENTER_WHOLE);
		CHECK_EQ(len, TRAIL_ARCH_SITE_SIZE);
		for (size_t k = 0; k < sizeof(in) / sizeof(in[0]); k++) {
			long a, b;
			int rc;

			whole_lay_out(page, r);
			a = ((fn_t)(uintptr_t)page)(in[k]);
			rc = trail_arch_whole_make(page, r->n, (uintptr_t)page, (uintptr_t)copy, copy);
			CHECK_EQ(rc, 0);
			if (rc)
				break;
			memset(page, 0xcc, r->n); /* the original gone */
			b = ((fn_t)(uintptr_t)copy)(in[k]);
			if (a != b)
				fprintf(stderr, "  %s(%ld): %ld, moved %ld\n", r->name, in[k], a, b);
			CHECK_EQ(a, b);
		}
	}
	/* out of reach of its data */
	whole_lay_out(page, &wholes[2]);
	CHECK_EQ(trail_arch_whole_make(page, wholes[2].n, (uintptr_t)page,
				       (uintptr_t)page + (6ull << 30), page + PAGE), -ERANGE);
	munmap(page, 2 * PAGE);
}

/* What cannot move whole, and why; and how each kind of entry is taken */
TEST(whole_refusals_say_why)
{
	static const struct bad no[] = {
		{"a call", {0x31, 0xc0, 0x01, 0xf8, 0xe8, 0, 0, 0, 0, 0x83, 0xef, 0x01, 0x7f, 0xf4,
			    0xc3}, 15, -ENOTSUP, "a call"},
		{"register jump", {0x31, 0xc0, 0x01, 0xf8, 0xff, 0xe0, 0xc3}, 7, -ENOTSUP,
		 "an indirect jump"},
		{"table jump", {0x31, 0xc0, 0x01, 0xf8, 0xff, 0x24, 0xc5, 0, 0, 0, 0, 0xc3}, 12,
		 -ENOTSUP, "an indirect jump"},
		{"short jump out", {0x31, 0xc0, 0x01, 0xf8, 0x83, 0xef, 0x01, 0x7f, 0xf9, 0xeb, 0x10},
		 11, -ENOTSUP, "a short branch out"},
		{"too short", {0x31, 0xc0, 0xc3}, 3, -ENOSPC, "shorter than a jump"},
		{"not code", {0x06, 0x06, 0x06, 0x06, 0x06, 0x06}, 6, -EINVAL, "not an instruction"},
	};
	static uint8_t big[TRAIL_ARCH_WHOLE_MAX + 1];
	/* mov %rdi,%rax; add $1,%rax; ret: nothing in the way of a jump */
	static const uint8_t plain[] = {0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0xc3};
	/* dec %rdi; jg entry; call; ret: a loop at the entry that cannot
	 * move: the jump, met each turn */
	static const uint8_t loop_call[] = {0x48, 0xff, 0xcf, 0x7f, 0xfb, 0xe8, 0, 0, 0, 0, 0xc3};
	char why[160];
	unsigned len;

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		int rc = trail_arch_whole_check(no[i].code, no[i].n, 0x400000, why, sizeof(why));

		if (rc != no[i].err || !strstr(why, no[i].why))
			fprintf(stderr, "  %s: %d \"%s\"\n", no[i].name, rc, why);
		CHECK_EQ(rc, no[i].err);
		CHECK(strstr(why, no[i].why) != NULL);
	}
	memset(big, 0x90, sizeof(big));
	CHECK_EQ(trail_arch_whole_check(big, sizeof(big), 0x400000, why, sizeof(why)), -E2BIG);
	CHECK(strstr(why, "too long") != NULL);
	/* the loop with a call: a breakpoint, the jump's reason kept */
	CHECK_EQ(trail_arch_entry_check(no[0].code, no[0].n, no[0].n, 0x400000, &len, why,
					sizeof(why)), TRAIL_ARCH_ENTER_TRAP);
	CHECK_EQ(len, 2);
	CHECK(strstr(why, "branch into the first") != NULL);
	CHECK_EQ(trail_arch_entry_check(plain, sizeof(plain), sizeof(plain), 0x400000, &len, why,
					sizeof(why)), TRAIL_ARCH_ENTER_JUMP);
	CHECK_EQ(len, 7);
	CHECK_EQ(trail_arch_entry_check(loop_call, sizeof(loop_call), sizeof(loop_call), 0x400000,
					&len, why, sizeof(why)), TRAIL_ARCH_ENTER_JUMP);
	CHECK_EQ(len, 5);
	/* nothing enters an int3 */
	CHECK_EQ(trail_arch_entry_check((const uint8_t *)"\xcc\xc3", 2, 2, 0x400000, &len, why,
					sizeof(why)), -ENOTSUP);
}

TEST_MAIN(CHECK_T(relocated_code_runs_the_same), CHECK_T(unrelocatable_entries_say_why),
	  CHECK_T(out_of_reach_copy_refused), CHECK_T(short_function_before_padding),
	  CHECK_T(breakpoint_entries), CHECK_T(jump_tables_read),
	  CHECK_T(whole_functions_run_the_same), CHECK_T(whole_refusals_say_why))
