/* SPDX-License-Identifier: MIT */
/* sframe.c - a PC's unwind row from .sframe (sframe.h). */
#include "sframe.h"

#include <string.h>

#define SFRAME_MAGIC 0xdee2
#define F_FDE_SORTED 0x1
#define F_START_PCREL 0x4
#define ABI_AMD64_LE 3
#define HDR_LEN 28
#define MAX_FRES 65536 /* a function's rows read at most (a bound, not a limit
			* of the format: gcc's largest have a few hundred) */

int trail__sframe_open(struct trail_sframe *sf, uint64_t addr, uint64_t len, trail_uw_read rd,
		       void *ctx)
{
	uint8_t h[HDR_LEN];
	uint16_t magic;
	uint32_t nfdes, nfres, fre_len, fdeoff, freoff;
	uint64_t end;

	if (len < HDR_LEN || rd(ctx, addr, h, HDR_LEN))
		return -1;
	memcpy(&magic, h, 2);
	/* (version 3 changed the FDE's layout: not read here) */
	if (magic != SFRAME_MAGIC || (h[2] != 1 && h[2] != 2) || !(h[3] & F_FDE_SORTED) ||
	    h[4] != ABI_AMD64_LE)
		return -1;
	memcpy(&nfdes, h + 8, 4);
	memcpy(&nfres, h + 12, 4);
	memcpy(&fre_len, h + 16, 4);
	memcpy(&fdeoff, h + 20, 4);
	memcpy(&freoff, h + 24, 4);
	*sf = (struct trail_sframe){
		.addr = addr,
		.len = len,
		.nfdes = nfdes,
		.version = h[2],
		.flags = h[3],
		.fdesz = h[2] == 1 ? 17 : 20,
		.fp_off = (int8_t)h[5],
		.ra_off = (int8_t)h[6],
	};
	/* the sub-sections inside the section (in 64 bits: no wrap) */
	end = HDR_LEN + (uint64_t)h[7];
	if (end + fdeoff + (uint64_t)nfdes * sf->fdesz > len || end + freoff + fre_len > len)
		return -1;
	(void)nfres;
	sf->fdes = addr + end + fdeoff;
	sf->fres = addr + end + freoff;
	sf->fres_len = fre_len;
	return 0;
}

/* FDE i's function start (its s32 field, from the section or the field) */
static int fde_start(const struct trail_sframe *sf, uint32_t i, uint64_t *start, trail_uw_read rd,
		     void *ctx)
{
	uint64_t at = sf->fdes + (uint64_t)i * sf->fdesz;
	int32_t v;

	if (rd(ctx, at, &v, 4))
		return -1;
	*start = (sf->flags & F_START_PCREL ? at : sf->addr) + (uint64_t)(int64_t)v;
	return 0;
}

/* the last FDE starting at or before pc: its index, or -1 */
static int64_t fde_find(const struct trail_sframe *sf, uint64_t pc, trail_uw_read rd, void *ctx)
{
	uint32_t lo = 0, hi = sf->nfdes;
	uint64_t start;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (fde_start(sf, mid, &start, rd, ctx))
			return -1;
		if (start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

static uint32_t uget(const uint8_t *p, unsigned size)
{
	uint8_t b8;
	uint16_t b16;
	uint32_t b32;

	switch (size) {
	case 1:
		memcpy(&b8, p, 1);
		return b8;
	case 2:
		memcpy(&b16, p, 2);
		return b16;
	default:
		memcpy(&b32, p, 4);
		return b32;
	}
}

static int32_t sget(const uint8_t *p, unsigned size)
{
	uint32_t v = uget(p, size);

	if (size == 1)
		return (int8_t)v;
	if (size == 2)
		return (int16_t)v;
	return (int32_t)v;
}

int trail__sframe_find(const struct trail_sframe *sf, uint64_t pc, struct trail_uwrow *row,
		       trail_uw_read rd, void *ctx)
{
	uint8_t fre[4 + 1 + 3 * 4], info, rep = 16;
	uint32_t size, fre_off, nfres, off, k;
	uint64_t start, at, end, best = 0, fde;
	unsigned asz, osz, n;
	int64_t i = fde_find(sf, pc, rd, ctx);
	int found = 0;

	/* (field by field: loads, not a copy, in the process) */
	fde = sf->fdes + (uint64_t)i * sf->fdesz;
	if (i < 0 || fde_start(sf, (uint32_t)i, &start, rd, ctx) || rd(ctx, fde + 4, &size, 4) ||
	    rd(ctx, fde + 8, &fre_off, 4) || rd(ctx, fde + 12, &nfres, 4) ||
	    rd(ctx, fde + 16, &info, 1) || (sf->version == 2 && rd(ctx, fde + 17, &rep, 1)))
		return -1;
	if (pc - start >= size || (info & 0x0f) > 2 || fre_off > sf->fres_len)
		return -1;
	asz = 1u << (info & 0x0f);
	off = (uint32_t)(pc - start);
	if (info & 0x10) {
		/* a repetitive block: the row of the same place in the first
		 * (v1 has no size: 16, an x86-64 PLT entry) */

		if (!rep)
			return -1;
		off %= rep;
	}
	/* the FREs, sorted by start: the last one at or before off */
	at = sf->fres + fre_off;
	end = sf->fres + sf->fres_len;
	for (k = 0; k < nfres && k < MAX_FRES; k++) {
		if (at > end || end - at < asz + 1 || rd(ctx, at, fre, asz) ||
		    rd(ctx, at + asz, fre + asz, 1))
			return -1;
		osz = 1u << ((fre[asz] >> 5) & 3);
		n = (fre[asz] >> 1) & 0x0f;
		if (osz > 4 || n > 3)
			return -1;
		if (uget(fre, asz) > off)
			break;
		best = at;
		found = 1;
		at += asz + 1 + n * osz;
	}
	if (!found)
		return -1;
	/* the row: its offsets (CFA from its base, the saved FP; the
	 * others, aarch64's, not read) */
	if (rd(ctx, best + asz, fre + asz, 1))
		return -1;
	osz = 1u << ((fre[asz] >> 5) & 3);
	n = (fre[asz] >> 1) & 0x0f;
	if (!n || end - best < asz + 1 + n * osz || rd(ctx, best + asz + 1, fre + asz + 1, osz) ||
	    (n >= 2 && rd(ctx, best + asz + 1 + osz, fre + asz + 1 + osz, osz)))
		return -1;
	*row = (struct trail_uwrow){
		.cfa_reg = (fre[asz] & 1) ? TRAIL_UW_SP : TRAIL_UW_FP,
		.cfa_off = sget(fre + asz + 1, osz),
		.ra_off = sf->ra_off,
	};
	if (n >= 2) {
		row->fp_saved = 1;
		row->fp_off = sget(fre + asz + 1 + osz, osz);
	}
	return 0;
}
