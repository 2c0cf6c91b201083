/* SPDX-License-Identifier: MIT */
/*
 * test-sframe.c - a PC's unwind row from .sframe (src/common/sframe.c),
 * versions 1 and 2, on sections built byte by byte: three functions
 *
 *   f  at 0x1000, 0x20 bytes: sp+8 at 0, sp+16 at 4 (push), sp+8 at 0x1c
 *   g  at 0x1040, 0x300 bytes, 2-byte FRE starts: sp+8 at 0, sp+16 at 1,
 *      then fp+16 with the FP saved at CFA-16 from 0x104 (1-byte offsets)
 *   plt at 0x1400, 0x40 bytes, PCMASK: per 16-byte entry sp+8, then
 *      sp+16 from 0xb
 *
 * then hostile sections: counts and offsets past the end, FREs that
 * overrun, an offset size of 8, no offsets, the other versions.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#define MEMIMG_SIZE 512
#include "memimg.h"
#include "common/sframe.h"

#define BASE MEMIMG_BASE /* the section's address */

/* FRE info byte: base SP (1) or FP (0), offsets' count and size code */
#define INFO(sp, n, sz) (uint8_t)((sp) | (n) << 1 | (sz) << 5)

/* the FREs, their offsets in fre_at[] (from the FRE sub-section) */
static size_t fre_at[3];

static void fres(void)
{
	size_t fre0 = used;

	fre_at[0] = used - fre0; /* f: 1-byte starts */
	p8(0x00), p8(INFO(1, 1, 0)), p8(8);
	p8(0x04), p8(INFO(1, 1, 0)), p8(16);
	p8(0x1c), p8(INFO(1, 1, 0)), p8(8);
	fre_at[1] = used - fre0; /* g: 2-byte starts */
	p16(0x000), p8(INFO(1, 1, 0)), p8(8);
	p16(0x001), p8(INFO(1, 1, 0)), p8(16);
	p16(0x104), p8(INFO(0, 2, 0)), p8(16), p8((uint8_t)-16);
	fre_at[2] = used - fre0; /* plt: 1-byte starts in a 16-byte block */
	p8(0x00), p8(INFO(1, 1, 0)), p8(8);
	p8(0x0b), p8(INFO(1, 1, 0)), p8(16);
}

/* an FDE (v1: 17 bytes; v2: 20) for a function at start (from the
 * section, or from the field itself when pcrel) */
static void fde(int v, int pcrel, uint32_t start, uint32_t size, size_t fre, uint32_t n,
		uint8_t info)
{
	int64_t at = (int64_t)(BASE + used);

	p32((uint32_t)((int64_t)start - (pcrel ? at : BASE))); /* sfde_func_start_address */
	p32(size);                                              /* sfde_func_size */
	p32((uint32_t)fre);                                     /* sfde_func_start_fre_off */
	p32(n);                                                 /* sfde_func_num_fres */
	p8(info);                                               /* sfde_func_info */
	if (v == 2) {
		p8(info & 0x10 ? 16 : 0); /* sfde_func_rep_size */
		p16(0);                   /* sfde_func_padding2 */
	}
}

/* the whole section, version v */
static void build(int v, int pcrel)
{
	size_t fdesz = v == 1 ? 17 : 20, nfde = 3, frelen;
	uint8_t tmp[64];

	memimg_reset();
	/* (the FREs first, into tmp, for their length) */
	fres();
	frelen = used;
	memcpy(tmp, mem, frelen);
	used = 0;
	p16(0xdee2);                  /* sfp_magic */
	p8((uint8_t)v);               /* sfp_version */
	p8(0x1 | (pcrel ? 0x4 : 0));  /* sfp_flags: FDE_SORTED (, FUNC_START_PCREL) */
	p8(3);                        /* sfh_abi_arch: AMD64, little-endian */
	p8(0);                        /* sfh_cfa_fixed_fp_offset */
	p8((uint8_t)-8);              /* sfh_cfa_fixed_ra_offset */
	p8(0);                        /* sfh_auxhdr_len */
	p32(3);                       /* sfh_num_fdes */
	p32(8);                       /* sfh_num_fres */
	p32((uint32_t)frelen);        /* sfh_fre_len */
	p32(0);                       /* sfh_fdeoff */
	p32((uint32_t)(nfde * fdesz)); /* sfh_freoff */
	fde(v, pcrel, 0x1000, 0x20, fre_at[0], 3, 0x0);   /* ADDR1 */
	fde(v, pcrel, 0x1040, 0x300, fre_at[1], 3, 0x1);  /* ADDR2 */
	fde(v, pcrel, 0x1400, 0x40, fre_at[2], 2, 0x10);  /* ADDR1, PCMASK */
	put(tmp, frelen);
}

static int find(uint64_t pc, struct trail_uwrow *r)
{
	struct trail_sframe sf;

	if (trail__sframe_open(&sf, BASE, used, rd, NULL))
		return -2;
	return trail__sframe_find(&sf, pc, r, rd, NULL);
}

static const struct q {
	uint64_t pc;
	int ret;
	uint8_t reg;
	int32_t cfa, fp; /* fp: 0 when not saved */
} queries[] = {
	{0x0fff, -1, 0, 0, 0},  /* before the first function */
	{0x1000, 0, TRAIL_UW_SP, 8, 0},
	{0x1003, 0, TRAIL_UW_SP, 8, 0},
	{0x1004, 0, TRAIL_UW_SP, 16, 0},
	{0x101c, 0, TRAIL_UW_SP, 8, 0},
	{0x101f, 0, TRAIL_UW_SP, 8, 0},
	{0x1020, -1, 0, 0, 0},  /* between f and g */
	{0x1041, 0, TRAIL_UW_SP, 16, 0},
	{0x1143, 0, TRAIL_UW_SP, 16, 0},
	{0x1144, 0, TRAIL_UW_FP, 16, -16},
	{0x133f, 0, TRAIL_UW_FP, 16, -16},
	{0x1340, -1, 0, 0, 0},
	{0x1400, 0, TRAIL_UW_SP, 8, 0},
	{0x140a, 0, TRAIL_UW_SP, 8, 0},
	{0x140b, 0, TRAIL_UW_SP, 16, 0},
	{0x1430, 0, TRAIL_UW_SP, 8, 0},  /* the third entry's first bytes */
	{0x143f, 0, TRAIL_UW_SP, 16, 0},
	{0x1440, -1, 0, 0, 0},
};

static void check_rows(int v, int pcrel)
{
	build(v, pcrel);
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		const struct q *q = &queries[i];
		struct trail_uwrow r;
		int got = find(q->pc, &r);

		if (got != q->ret)
			fprintf(stderr, "  v%d pcrel %d pc %#llx: %d\n", v, pcrel,
				(unsigned long long)q->pc, got);
		CHECK_EQ(got, q->ret);
		if (got)
			continue;
		CHECK_EQ(r.cfa_reg, q->reg);
		CHECK_EQ(r.cfa_off, q->cfa);
		CHECK_EQ(r.ra_off, -8);
		CHECK_EQ(r.fp_saved, q->fp != 0);
		if (q->fp)
			CHECK_EQ(r.fp_off, q->fp);
	}
}

TEST(version1)
{
	check_rows(1, 0);
}

TEST(version2)
{
	check_rows(2, 0);
	check_rows(2, 1);
}

/* the header's fields, at their offsets */
#define H_VERSION 2
#define H_FLAGS 3
#define H_ABI 4
#define H_NFDES 8
#define H_FRELEN 16
#define H_FREOFF 24

static void set32(size_t off, uint32_t v)
{
	memcpy(mem + off, &v, 4);
}

TEST(hostile)
{
	struct trail_uwrow r;
	struct trail_sframe sf;
	size_t fde0 = 28, fre0;

	for (int v = 1; v <= 2; v++) {
		size_t fdesz = v == 1 ? 17 : 20;

		fre0 = fde0 + 3 * fdesz;
		/* the header: not read */
		build(v, 0), mem[0] ^= 1;
		CHECK_EQ(find(0x1000, &r), -2);
		build(v, 0), mem[H_VERSION] = 3;
		CHECK_EQ(find(0x1000, &r), -2);
		build(v, 0), mem[H_FLAGS] = 0; /* unsorted */
		CHECK_EQ(find(0x1000, &r), -2);
		build(v, 0), mem[H_ABI] = 2;   /* aarch64 */
		CHECK_EQ(find(0x1000, &r), -2);
		build(v, 0), set32(H_NFDES, 0x10000000);
		CHECK_EQ(find(0x1000, &r), -2);
		build(v, 0), set32(H_FRELEN, 0xfffffff0u);
		CHECK_EQ(find(0x1000, &r), -2);
		build(v, 0), set32(H_FREOFF, 0xffffffffu);
		CHECK_EQ(find(0x1000, &r), -2);
		build(v, 0);
		CHECK_EQ(trail__sframe_open(&sf, BASE, 20, rd, NULL), -1); /* cut header */
		CHECK_EQ(trail__sframe_open(&sf, BASE, used - 1, rd, NULL), -1);
		/* an FDE's FREs past the sub-section, or too many of them */
		build(v, 0), set32(fde0 + 8, 0x7fffffff);
		CHECK_EQ(find(0x1000, &r), -1);
		build(v, 0), set32(fde0 + 12, 0xffffffffu);
		CHECK_EQ(find(0x1004, &r), 0); /* (the FREs read up to the row) */
		build(v, 0), set32(2 * fdesz + fde0 + 12, 0xffffffffu);
		CHECK_EQ(find(0x143f, &r), -1); /* the last FRE, then the end */
		/* an FRE start size not defined, offsets of 8 bytes, none */
		build(v, 0), mem[fde0 + 16] = 0x3;
		CHECK_EQ(find(0x1000, &r), -1);
		build(v, 0), mem[fre0 + 1] = INFO(1, 1, 3);
		CHECK_EQ(find(0x1000, &r), -1);
		build(v, 0), mem[fre0 + 1] = INFO(1, 0, 0);
		CHECK_EQ(find(0x1000, &r), -1);
		build(v, 0), mem[fre0 + 1] = INFO(1, 15, 2); /* 15 offsets: past the end */
		CHECK_EQ(find(0x1000, &r), -1);
		/* a PCMASK FDE with no block size (v2) */
		if (v == 2) {
			build(v, 0), mem[fde0 + 2 * fdesz + 17] = 0;
			CHECK_EQ(find(0x1400, &r), -1);
		}
		/* every byte of the FDEs and FREs in turn: no crash, no read
		 * outside (rd refuses them: a row or -1 either way) */
		for (size_t off = fde0; off < used; off++)
			for (int bit = 0; bit < 8; bit++) {
				build(v, 0);
				mem[off] ^= (uint8_t)(1u << bit);
				for (uint64_t pc = 0x0ff0; pc < 0x1460; pc += 7)
					(void)find(pc, &r);
			}
	}
}

TEST_MAIN(CHECK_T(version1), CHECK_T(version2), CHECK_T(hostile))
