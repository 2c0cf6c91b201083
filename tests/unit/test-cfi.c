/* SPDX-License-Identifier: MIT */
/*
 * test-cfi.c - a PC's unwind row from .eh_frame (src/common/cfi.c): an
 * .eh_frame_hdr and its .eh_frame built byte by byte, a gcc-like CIE
 * ("zR", CFA %rsp + 8, the return address at CFA - 8) and an FDE per
 * function:
 *
 *   f    0x1000 +0x40  push %rbp; mov %rsp, %rbp; ...; leave: %rbp saved
 *   g    0x1100 +0x40  remember_state / restore_state around an early
 *                      return, GNU_args_size
 *   plt  0x1200 +0x40  GNU ld's .plt: %rsp + 16, + 24, then its
 *                      expression (+ 8 from byte 11 of each entry)
 *   top  0x1300 +0x10  the return address undefined: the outermost frame
 *   expr 0x1400 +0x10  another CFA expression: not covered
 *   rbpx 0x1500 +0x10  %rbp by an expression: not covered
 *
 * then hostile tables: counts, lengths and pointers past the end,
 * states too deep, a restore_state with none, every bit flipped.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#define MEMIMG_SIZE 1024
#include "memimg.h"
#include "common/cfi.h"

#define BASE MEMIMG_BASE /* .eh_frame_hdr's address */
#define NFDE 6

static void set32(size_t off, uint32_t v)
{
	memcpy(mem + off, &v, 4);
}

#define PLT_EXPR 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22

static const struct fn {
	uint32_t start, range;
	uint8_t ins[32];
	size_t n;
} fns[NFDE] = {
	/* advance 1; def_cfa_offset 16; offset r6 at CFA-16; advance 3;
	 * def_cfa_register r6; advance 0x30; def_cfa r7 8 */
	{0x1000, 0x40, {0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x70, 0x0c, 0x07, 0x08}, 12},
	/* advance 1; def_cfa_offset 16; advance 4; remember; def_cfa_offset 8;
	 * advance 1; restore_state; GNU_args_size 16; advance_loc1 0x20;
	 * def_cfa_offset 8 */
	{0x1100, 0x40, {0x41, 0x0e, 0x10, 0x44, 0x0a, 0x0e, 0x08, 0x41, 0x0b, 0x2e, 0x10, 0x02, 0x20,
			0x0e, 0x08}, 15},
	/* def_cfa_offset 16; advance 6; def_cfa_offset 24; advance 10; the
	 * PLT expression with lit11 */
	{0x1200, 0x40, {0x0e, 0x10, 0x46, 0x0e, 0x18, 0x4a, PLT_EXPR}, 19},
	/* undefined r16 */
	{0x1300, 0x10, {0x07, 0x10}, 2},
	/* def_cfa_expression: DW_OP_breg7 8, DW_OP_deref */
	{0x1400, 0x10, {0x0f, 0x03, 0x77, 0x08, 0x06}, 5},
	/* expression r6: DW_OP_breg7 0 */
	{0x1500, 0x10, {0x10, 0x06, 0x02, 0x77, 0x00}, 5},
};

static size_t fde_off[NFDE], cie_off, hdr_count;

static void build(void)
{
	static const uint8_t cie[] = {
		0x01,             /* version */
		'z', 'R', 0,      /* augmentation */
		0x01,             /* code alignment */
		0x78,             /* data alignment -8 */
		0x10,             /* return address: r16 */
		0x01, 0x1b,       /* augmentation data: R = pcrel sdata4 */
		0x0c, 0x07, 0x08, /* def_cfa r7 8 */
		0x90, 0x01,       /* offset r16 at CFA-8 */
		0x00, 0x00,       /* padding */
	};
	size_t table;

	memimg_reset();
	/* .eh_frame_hdr */
	p8(1);    /* version */
	p8(0x1b); /* eh_frame_ptr: pcrel sdata4 */
	p8(0x03); /* fde_count: udata4 */
	p8(0x3b); /* table: datarel sdata4 */
	p32(0);   /* eh_frame_ptr (not read) */
	hdr_count = used;
	p32(NFDE);
	table = used;
	used += NFDE * 8;
	/* .eh_frame: the CIE, then the FDEs */
	cie_off = used;
	p32(4 + sizeof(cie)); /* length */
	p32(0);               /* CIE id */
	put(cie, sizeof(cie));
	for (int i = 0; i < NFDE; i++) {
		size_t len = 4 + 4 + 4 + 1 + fns[i].n;

		fde_off[i] = used;
		set32(table + i * 8, fns[i].start - BASE);
		set32(table + i * 8 + 4, (uint32_t)used);
		p32((uint32_t)len);                                     /* length */
		p32((uint32_t)(used - cie_off));                        /* back to the CIE */
		p32((uint32_t)(fns[i].start - (BASE + used)));          /* pc_begin, pcrel */
		p32(fns[i].range);                                      /* pc_range */
		p8(0);                                                  /* augmentation data */
		put(fns[i].ins, fns[i].n);
	}
}

static int find(uint64_t pc, struct trail_uwrow *r)
{
	return trail__cfi_find(BASE, hdr_count + 4 + NFDE * 8, pc, r, rd, NULL);
}

static const struct q {
	uint64_t pc;
	int ret;
	uint8_t reg, plt_k, undef;
	int32_t cfa, fp; /* fp: 0 when not saved */
} queries[] = {
	{0x0fff, -1, 0, 0, 0, 0, 0},
	{0x1000, 0, TRAIL_UW_SP, 0, 0, 8, 0},
	{0x1001, 0, TRAIL_UW_SP, 0, 0, 16, -16},
	{0x1004, 0, TRAIL_UW_FP, 0, 0, 16, -16},
	{0x1033, 0, TRAIL_UW_FP, 0, 0, 16, -16},
	{0x1034, 0, TRAIL_UW_SP, 0, 0, 8, -16},
	{0x103f, 0, TRAIL_UW_SP, 0, 0, 8, -16},
	{0x1040, -1, 0, 0, 0, 0, 0},
	{0x1105, 0, TRAIL_UW_SP, 0, 0, 8, 0},   /* after the early return */
	{0x1106, 0, TRAIL_UW_SP, 0, 0, 16, 0},  /* its state restored */
	{0x1126, 0, TRAIL_UW_SP, 0, 0, 8, 0},
	{0x1200, 0, TRAIL_UW_SP, 0, 0, 16, 0},
	{0x1206, 0, TRAIL_UW_SP, 0, 0, 24, 0},
	{0x1210, 0, TRAIL_UW_SP, 11, 0, 8, 0},
	{0x123f, 0, TRAIL_UW_SP, 11, 0, 8, 0},
	{0x1300, 0, TRAIL_UW_SP, 0, 1, 8, 0},
	{0x1400, -1, 0, 0, 0, 0, 0},
	{0x1500, -1, 0, 0, 0, 0, 0},
	{0x1510, -1, 0, 0, 0, 0, 0},
};

TEST(rows)
{
	build();
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		const struct q *q = &queries[i];
		struct trail_uwrow r;
		int got = find(q->pc, &r);

		if (got != q->ret)
			fprintf(stderr, "  pc %#llx: %d\n", (unsigned long long)q->pc, got);
		CHECK_EQ(got, q->ret);
		if (got)
			continue;
		CHECK_EQ(r.cfa_reg, q->reg);
		CHECK_EQ(r.cfa_off, q->cfa);
		CHECK_EQ(r.plt_k, q->plt_k);
		CHECK_EQ(r.ra_undef, q->undef);
		if (!q->undef)
			CHECK_EQ(r.ra_off, -8);
		CHECK_EQ(r.fp_saved, q->fp != 0);
		if (q->fp)
			CHECK_EQ(r.fp_off, q->fp);
	}
}

TEST(hostile)
{
	struct trail_uwrow r;
	size_t f;

	build();
	f = fde_off[0];
	/* the header: another table encoding, a count past the end */
	build(), mem[3] = 0x1b;
	CHECK_EQ(find(0x1000, &r), -1);
	build(), set32(hdr_count, 0x20000000);
	CHECK_EQ(find(0x1000, &r), -1);
	/* (unknown length: the table's reads are the bound) */
	CHECK_EQ(trail__cfi_find(BASE, 0, 0x1000, &r, rd, NULL), -1);
	/* an FDE pointer out of reach, a CIE pointer out of reach or to
	 * an FDE, 64-bit and huge lengths */
	build(), set32(hdr_count + 4 + 4, 0x7ffffff0);
	CHECK_EQ(find(0x1000, &r), -1);
	build(), set32(f + 4, 0x7fffffff);
	CHECK_EQ(find(0x1000, &r), -1);
	build(), set32(f + 4, (uint32_t)(f + 4 - fde_off[1]));
	CHECK_EQ(find(0x1000, &r), -1);
	build(), set32(f, 0xffffffffu);
	CHECK_EQ(find(0x1000, &r), -1);
	build(), set32(f, 0x00ffffff);
	CHECK_EQ(find(0x1000, &r), -1);
	build(), set32(cie_off, 0x00ffffff);
	CHECK_EQ(find(0x1000, &r), -1);
	/* a CIE of another version, augmentation, return column */
	build(), mem[cie_off + 8] = 2;
	CHECK_EQ(find(0x1000, &r), -1);
	build(), mem[cie_off + 10] = 'X';
	CHECK_EQ(find(0x1000, &r), -1);
	build(), mem[cie_off + 14] = 0x11;
	CHECK_EQ(find(0x1000, &r), -1);
	/* a LEB128 that never ends (def_cfa's last operand, f's last byte);
	 * a row before it still read */
	build(), mem[f + 17 + 11] = 0x88;
	CHECK_EQ(find(0x103f, &r), -1);
	CHECK_EQ(find(0x1004, &r), 0);
	/* remember_state 5 deep, restore_state with none */
	{
		static const uint8_t deep[] = {0x0a, 0x0a, 0x0a, 0x0a, 0x0a};

		build(), memcpy(mem + fde_off[1] + 17, deep, sizeof(deep));
		CHECK_EQ(find(0x1100, &r), -1);
		build(), mem[fde_off[1] + 17 + 4] = 0x0b;
		CHECK_EQ(find(0x1105, &r), -1);
	}
	/* the PLT expression with another operator */
	build(), mem[fde_off[2] + 17 + 6 + 9] = 0x2b;
	CHECK_EQ(find(0x1210, &r), -1);
	CHECK_EQ(find(0x1206, &r), 0); /* (its rows before it still read) */
	/* every bit of the tables in turn: no crash, no read outside */
	for (size_t off = 0; off < used; off++)
		for (int bit = 0; bit < 8; bit++) {
			build();
			mem[off] ^= (uint8_t)(1u << bit);
			for (uint64_t pc = 0x0ff0; pc < 0x1520; pc += 5)
				(void)find(pc, &r);
		}
}

TEST_MAIN(CHECK_T(rows), CHECK_T(hostile))
