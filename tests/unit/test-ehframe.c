/* SPDX-License-Identifier: MIT */
/*
 * test-ehframe.c - which FDEs start a function (src/common/ehframe.c,
 * trail__ehframe_is_entry): a stripped program's sites come from its
 * unwind table, and a function's cold part (gcc's hot/cold splitting) has
 * an FDE of its own, whose first row is the hot part's frame; a jump
 * enters it anywhere, so it is no site. Each row is a CIE (gcc's: "zR",
 * CFA %rsp + 8, the return address at CFA - 8) and an FDE with the given
 * instructions, read through the reader as libtrail and the tools do.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#define MEMIMG_SIZE 512
#include "memimg.h"
#include "common/ehframe.h"

#define BASE MEMIMG_BASE

/* a CIE then an FDE with instructions ins (n bytes); the FDE's address */
static uint64_t build(const uint8_t *ins, size_t n, const char *aug)
{
	static const uint8_t tail[] = {
		0x01,             /* code alignment */
		0x78,             /* data alignment -8 */
		0x10,             /* return address: r16 */
	};
	static const uint8_t cie_ins[] = {0x0c, 0x07, 0x08, 0x90, 0x01, 0x00, 0x00};
	size_t cie_len = 4 + 1 + strlen(aug) + 1 + sizeof(tail) + (aug[0] ? 2 : 0) +
			 sizeof(cie_ins);
	uint64_t fde;
	uint8_t b;

	memimg_reset();
	p32((uint32_t)cie_len);
	p32(0); /* a CIE */
	b = 1;
	put(&b, 1);
	put(aug, strlen(aug) + 1);
	put(tail, sizeof(tail));
	if (aug[0]) {
		b = 1; /* augmentation data: one byte */
		put(&b, 1);
		b = 0x1b; /* R: pcrel sdata4 */
		put(&b, 1);
	}
	put(cie_ins, sizeof(cie_ins));
	fde = BASE + used;
	p32((uint32_t)(4 + 4 + 4 + (aug[0] ? 1 : 0) + n));
	p32((uint32_t)(used)); /* back to the CIE, from this field */
	p32(0x1000);            /* pc_begin */
	p32(0x40);              /* pc_range */
	if (aug[0]) {
		b = 0;
		put(&b, 1);
	}
	put(ins, n);
	return fde;
}

static const struct row {
	const char *name;
	uint8_t ins[16];
	size_t n;
	int want;
} rows[] = {
	{"plain function: the CIE's row", {0}, 0, 1},
	{"push %rbp after its first byte", {0x41, 0x0e, 0x10, 0x86, 0x02}, 5, 1},
	{"cold part: CFA %rsp + 80 at once", {0x0e, 0x50, 0x83, 0x05}, 4, 0},
	{"cold part: def_cfa_sf", {0x12, 0x07, 0x7e}, 3, 0}, /* -2 * -8 = 16 */
	{"cold part: CFA on %rbp", {0x0d, 0x06}, 2, 0},
	{"back to %rsp + 8 before any advance", {0x0e, 0x20, 0x0e, 0x08}, 4, 1},
	{"an expression: not read, kept", {0x0f, 0x02, 0x77, 0x08}, 4, 1},
	{"an unknown op: kept", {0x3f}, 1, 1},
	{"a cut instruction: kept", {0x0e}, 1, 1},
};

TEST(fde_first_row)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t fde = build(rows[i].ins, rows[i].n, "zR");
		int got = trail__ehframe_is_entry(fde, rd, NULL);

		if (got != rows[i].want)
			fprintf(stderr, "  %s: %d\n", rows[i].name, got);
		CHECK_EQ(got, rows[i].want);
	}
}

TEST(hostile_fdes)
{
	static const uint8_t cold[] = {0x0e, 0x50};
	uint64_t fde = build(cold, sizeof(cold), "zR");
	uint32_t v;

	/* unreadable, a CIE where an FDE should be, 64-bit lengths, a CIE
	 * pointer out of reach, an augmentation not read here: kept (1) */
	CHECK_EQ(trail__ehframe_is_entry(BASE + 4096, rd, NULL), 1);
	CHECK_EQ(trail__ehframe_is_entry(BASE, rd, NULL), 1);
	memcpy(&v, mem + (fde - BASE) + 4, 4);
	v += 1000;
	memcpy(mem + (fde - BASE) + 4, &v, 4);
	CHECK_EQ(trail__ehframe_is_entry(fde, rd, NULL), 1);
	fde = build(cold, sizeof(cold), "zR");
	v = 0xffffffffu;
	memcpy(mem + (fde - BASE), &v, 4);
	CHECK_EQ(trail__ehframe_is_entry(fde, rd, NULL), 1);
	fde = build(cold, sizeof(cold), "zX");
	CHECK_EQ(trail__ehframe_is_entry(fde, rd, NULL), 1);
	/* a huge augmentation length */
	fde = build(cold, sizeof(cold), "zR");
	mem[4 + 4 + 1 + 3 + 3] = 0x7f;
	CHECK_EQ(trail__ehframe_is_entry(fde, rd, NULL), 1);
	/* and the cold one as built: not an entry */
	fde = build(cold, sizeof(cold), "zR");
	CHECK_EQ(trail__ehframe_is_entry(fde, rd, NULL), 0);
}

TEST_MAIN(CHECK_T(fde_first_row), CHECK_T(hostile_fdes))
