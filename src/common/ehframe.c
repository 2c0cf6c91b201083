/* SPDX-License-Identifier: MIT */
/* ehframe.c - function starts from .eh_frame_hdr (ehframe.h). */
#include "ehframe.h"

#include <string.h>

#define TABLE_ENC 0x3b /* DW_EH_PE_datarel | DW_EH_PE_sdata4 */

/* bytes of a 4- or 8-byte encoded value, 0 for another form */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x03: /* udata4 */
	case 0x0b: /* sdata4 */
		return 4;
	case 0x00: /* absptr (64-bit) */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		return 8;
	default:
		return 0;
	}
}

/* where the table starts (4 + eh_frame_ptr + fde_count) */
static size_t table_off(const uint8_t *hdr)
{
	return 4 + enc_size(hdr[1]) + 4;
}

int trail__ehframe_count(const uint8_t *hdr, size_t len, size_t *n)
{
	uint32_t count;
	size_t t;

	/* version 1, a readable eh_frame_ptr, a 4-byte fde_count, the
	 * table's encoding */
	if (!hdr || len < 4 || hdr[0] != 1 || !enc_size(hdr[1]) ||
	    ((hdr[2] & 0x0f) != 0x03 && (hdr[2] & 0x0f) != 0x0b) || hdr[3] != TABLE_ENC)
		return -1;
	t = table_off(hdr);
	if (len < t)
		return -1;
	memcpy(&count, hdr + 4 + enc_size(hdr[1]), 4);
	if ((uint64_t)count * 8 > len - t)
		return -1;
	*n = count;
	return 0;
}

uint64_t trail__ehframe_start(const uint8_t *hdr, uint64_t hdr_addr, size_t i)
{
	int32_t loc;

	memcpy(&loc, hdr + table_off(hdr) + i * 8, 4);
	return hdr_addr + (uint64_t)(int64_t)loc;
}

uint64_t trail__ehframe_fde(const uint8_t *hdr, uint64_t hdr_addr, size_t i)
{
	int32_t loc;

	memcpy(&loc, hdr + table_off(hdr) + i * 8 + 4, 4);
	return hdr_addr + (uint64_t)(int64_t)loc;
}

/* ------------------------------------------------- an FDE's first row */

struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static int64_t sleb(struct cur *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (c->p < c->end) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -(int64_t)((uint64_t)1 << shift);
			return v;
		}
	}
	c->bad = 1;
	return 0;
}

static void skip(struct cur *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = 1;
		c->p = c->end;
	} else {
		c->p += n;
	}
}

struct row {
	int reg;        /* the CFA's register, -1: not a register + offset */
	int64_t off;
	int64_t data_align;
};

/* Run CFA instructions up to the first that moves to a later address:
 * 1 when one did (or the end came), 0 when one that cannot be followed
 * did (the row is then unknown) */
static int run(struct cur *c, struct row *r)
{
	while (c->p < c->end && !c->bad) {
		uint8_t op = *c->p++;

		switch (op >> 6) {
		case 1: /* advance_loc */
			return 1;
		case 2: /* offset */
			uleb(c);
			continue;
		case 3: /* restore */
			continue;
		default:
			break;
		}
		switch (op) {
		case 0x00: case 0x0a: case 0x0b: /* nop, remember, restore_state */
			break;
		case 0x01: case 0x02: case 0x03: case 0x04: /* set_loc, advance_loc1/2/4 */
			return 1;
		case 0x05: case 0x09: case 0x14: case 0x2f:
			uleb(c);
			uleb(c);
			break;
		case 0x06: case 0x07: case 0x08: case 0x2e:
			uleb(c);
			break;
		case 0x0c: /* def_cfa */
			r->reg = (int)uleb(c);
			r->off = (int64_t)uleb(c);
			break;
		case 0x0d: /* def_cfa_register */
			r->reg = (int)uleb(c);
			break;
		case 0x0e: /* def_cfa_offset */
			r->off = (int64_t)uleb(c);
			break;
		case 0x0f: /* def_cfa_expression */
			return 0;
		case 0x10: case 0x16: /* expression, val_expression */
			uleb(c);
			skip(c, uleb(c));
			break;
		case 0x11: case 0x15:
			uleb(c);
			sleb(c);
			break;
		case 0x12: /* def_cfa_sf */
			r->reg = (int)uleb(c);
			r->off = sleb(c) * r->data_align;
			break;
		case 0x13: /* def_cfa_offset_sf */
			r->off = sleb(c) * r->data_align;
			break;
		default:
			return 0;
		}
	}
	return !c->bad;
}

int trail__ehframe_is_entry(uint64_t fde, int (*read)(void *ctx, uintptr_t addr, void *buf, size_t n),
			    void *ctx)
{
	uint8_t fb[256], cb[256];
	uint32_t flen, cptr, clen;
	uint64_t cie;
	uint8_t fenc = 0, aug_z = 0;
	struct cur c;
	struct row r = {.reg = -1};
	size_t fn, cn, k;
	const char *aug;

	if (read(ctx, (uintptr_t)fde, &flen, 4) || !flen || flen == 0xffffffffu ||
	    read(ctx, (uintptr_t)fde + 4, &cptr, 4) || !cptr)
		return 1;
	cie = fde + 4 - cptr;
	if (read(ctx, (uintptr_t)cie, &clen, 4) || clen < 5 || clen == 0xffffffffu)
		return 1;
	/* (the first row is in the first bytes: read no more) */
	cn = clen - 4 < sizeof(cb) ? clen - 4 : sizeof(cb);
	fn = flen - 4 < sizeof(fb) ? flen - 4 : sizeof(fb);
	if (read(ctx, (uintptr_t)cie + 8, cb, cn) || read(ctx, (uintptr_t)fde + 8, fb, fn))
		return 1;
	/* the CIE: version, augmentation, alignments, return register,
	 * augmentation data (the FDE's pointer encoding), instructions */
	c = (struct cur){cb + 1, cb + cn, 0};
	aug = (const char *)c.p;
	if (!memchr(aug, 0, cn - 1))
		return 1;
	c.p += strlen(aug) + 1;
	uleb(&c);
	r.data_align = sleb(&c);
	if (cb[0] == 1)
		c.p++;
	else
		uleb(&c);
	if (aug[0] == 'z') {
		uint64_t alen = uleb(&c);
		const uint8_t *after;

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return 1;
		after = c.p + alen;

		aug_z = 1;
		for (k = 1; aug[k] && c.p < c.end && !c.bad; k++) {
			if (aug[k] == 'R') {
				fenc = *c.p++;
			} else if (aug[k] == 'P') {
				uint8_t penc = *c.p++;
				size_t ps = enc_size(penc);

				if (!ps)
					return 1;
				skip(&c, ps);
			} else if (aug[k] == 'L') {
				c.p++;
			} else if (aug[k] != 'S' && aug[k] != 'B') {
				return 1;
			}
		}
		if (after > c.end || c.bad)
			return 1;
		c.p = after;
	} else if (aug[0]) {
		return 1;
	}
	if (!run(&c, &r) && c.p < c.end)
		return 1;
	/* the FDE: its address and length in its encoding, augmentation
	 * data, then its instructions up to the first advance */
	k = enc_size(fenc);
	if (!k)
		return 1;
	c = (struct cur){fb + 2 * k, fb + fn, 0};
	if (c.p > c.end)
		return 1;
	if (aug_z)
		skip(&c, uleb(&c));
	if (!run(&c, &r) || c.bad || r.reg < 0)
		return 1;
	/* %rsp + 8: the return address just pushed by a call */
	return r.reg == 7 && r.off == 8;
}
