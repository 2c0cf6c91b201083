/* SPDX-License-Identifier: MIT */
/*
 * sframe.h - the unwind row of a PC from an object's .sframe section
 * (PT_GNU_SFRAME, 0x6474e554), SFrame versions 1 (binutils 2.40, Debian
 * 12's `gcc -Wa,--gsframe`) and 2 (binutils 2.41 and later), AMD64 only.
 *
 * The section: a header (preamble: magic 0xdee2, version, flags; the ABI,
 * the fixed FP and RA offsets from the CFA, the auxiliary header's
 * length, the FDE and FRE counts, the FRE bytes, the FDE and FRE
 * sub-sections' offsets from the header's end), then the FDEs sorted by
 * function start, then the FREs.
 *
 *   FDE v1 (17 bytes, packed): s32 start, u32 size, u32 fre_off,
 *                              u32 nfres, u8 info
 *   FDE v2 (20 bytes):         the same, then u8 rep_size, u16 padding
 *   info: bits 0-3 the FREs' start address size (0: 1 byte, 1: 2, 2: 4),
 *         bit 4 PCMASK (a repetitive block, the PLT: the FREs' starts
 *         are offsets in a block of rep_size bytes; v1 has no rep_size:
 *         16, an x86-64 PLT entry), bit 5 (aarch64 only)
 *   FRE: start (1, 2 or 4 bytes, from the function's start), u8 info
 *        (bit 0 the CFA's base: 1 SP, 0 FP; bits 1-4 the offsets'
 *        count; bits 5-6 their size: 1, 2 or 4 bytes), then the offsets:
 *        CFA from its base, then (AMD64) the saved FP from the CFA; the
 *        RA is at the header's fixed offset (CFA - 8)
 *
 * A function's start is relative to the section's start, or with the
 * flag SFRAME_F_FDE_FUNC_START_PCREL (0x4, binutils 2.45) to the FDE's
 * own field. Every offset and count is checked against the section's
 * length: a damaged section is a PC it does not cover.
 */
#ifndef TRAIL_COMMON_SFRAME_H
#define TRAIL_COMMON_SFRAME_H

#include "unwind.h"

struct trail_sframe {
	uint64_t addr, len;   /* the section */
	uint64_t fdes, fres;  /* the sub-sections' addresses */
	uint64_t fres_len;
	uint32_t nfdes;
	uint8_t version, flags, fdesz;
	int8_t ra_off, fp_off;
};

/* Read the header of the section at addr (len bytes): 0, or -1 when it
 * is not one read here (another ABI or version, unsorted FDEs, sizes
 * past its end). */
int trail__sframe_open(struct trail_sframe *sf, uint64_t addr, uint64_t len, trail_uw_read rd,
		       void *ctx);
/* The row of pc: 0, or -1 when the section does not cover it (or its
 * FDE or FREs are damaged). */
int trail__sframe_find(const struct trail_sframe *sf, uint64_t pc, struct trail_uwrow *row,
		       trail_uw_read rd, void *ctx);

#endif
