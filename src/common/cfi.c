/* SPDX-License-Identifier: MIT */
/*
 * cfi.c - a PC's unwind row from .eh_frame (cfi.h).
 *
 * Every byte is read through the caller's reader, in windows of 64 bytes
 * (cur): the walk runs on signal stacks, which may be small, and an FDE
 * can be long. Lengths and offsets are bounded by the CIE's and FDE's own
 * lengths, and those by FDE_MAX; the number of instructions by OPS_MAX.
 */
#include "cfi.h"

#include <string.h>

#define TABLE_ENC 0x3b  /* DW_EH_PE_datarel | DW_EH_PE_sdata4 */
#define FDE_MAX (1u << 20)
#define OPS_MAX 4096
#define STATES 4
#define RA_COL 16

struct cur {
	uint64_t at, end;
	uint64_t wat;   /* the window's address */
	unsigned wlen;
	int bad;
	trail_uw_read rd;
	void *ctx;
	uint8_t w[64];
};

/* a cursor on [at, end) (its window left as it is: zeroing 64 bytes
 * costs more than the walk's reads of an FDE) */
static void cur_init(struct cur *c, uint64_t at, uint64_t end, trail_uw_read rd, void *ctx)
{
	c->at = at;
	c->end = end;
	c->wat = 0;
	c->wlen = 0;
	c->bad = 0;
	c->rd = rd;
	c->ctx = ctx;
}

/* the window moved to c->at (out of line: the byte reads below stay
 * small enough to inline) */
static __attribute__((noinline)) uint8_t refill(struct cur *c)
{
	uint64_t n;

	if (c->bad || c->at >= c->end) {
		c->bad = 1;
		return 0;
	}
	n = c->end - c->at;
	c->wlen = n < sizeof(c->w) ? (unsigned)n : sizeof(c->w);
	c->wat = c->at;
	if (c->rd(c->ctx, c->at, c->w, c->wlen)) {
		c->bad = 1;
		c->wlen = 0;
		return 0;
	}
	return c->w[c->at++ - c->wat];
}

static inline uint8_t u8(struct cur *c)
{
	/* (at - wat wraps to large when at is below the window) */
	if (__builtin_expect(c->at - c->wat < c->wlen && c->at < c->end && !c->bad, 1))
		return c->w[c->at++ - c->wat];
	return refill(c);
}

/* n (<= 8) bytes, little-endian */
static uint64_t uN(struct cur *c, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)u8(c) << (8 * i);
	return v;
}

static uint64_t uleb(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !c->bad; shift += 7) {
		uint8_t b = u8(c);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

static int64_t sleb(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !c->bad; shift += 7) {
		uint8_t b = u8(c);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (shift + 7 < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << (shift + 7);
			return (int64_t)v;
		}
	}
	return 0;
}

static void skip(struct cur *c, uint64_t n)
{
	if (n > c->end - c->at)
		c->bad = 1;
	else
		c->at += n;
}

/* a pointer in encoding enc: its size, 0 for a form not read here */
static unsigned enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x00: case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

/* a pointer in encoding enc at c (absolute or pc-relative) */
static uint64_t enc_read(struct cur *c, uint8_t enc)
{
	uint64_t at = c->at, v;
	unsigned n = enc_size(enc);

	/* (absolute or pc-relative, not indirect) */
	if (!n || (enc & 0x70) > 0x10 || (enc & 0x80)) {
		c->bad = 1;
		return 0;
	}
	v = uN(c, n);
	if ((enc & 0x0f) == 0x0a)
		v = (uint64_t)(int64_t)(int16_t)v;
	else if ((enc & 0x0f) == 0x0b)
		v = (uint64_t)(int64_t)(int32_t)v;
	return (enc & 0x70) == 0x10 ? at + v : v;
}

/* --------------------------------------------------------- the rows */

enum { R_SAME, R_OFF, R_UNDEF };

struct rule {
	uint8_t kind;
	int32_t off;
};

struct state {
	uint8_t cfa_reg, plt_k;
	int32_t cfa_off;
	struct rule fp, ra;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fenc, z;
	uint64_t ins, ins_end; /* its initial instructions */
};

/* the PLT's CFA: DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and;
 * DW_OP_litK; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus: %rsp + 8, + 8
 * when (%rip & 15) >= K (the entry's push is done) */
static int plt_expr(struct cur *c, uint64_t len, struct state *s)
{
	static const uint8_t want[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0, 0x2a,
				       0x33, 0x24, 0x22};
	uint8_t b[sizeof(want)];

	if (len != sizeof(want))
		return -1;
	for (unsigned i = 0; i < sizeof(want); i++)
		b[i] = u8(c);
	if (c->bad || memcmp(b, want, 6) || memcmp(b + 7, want + 7, 4) || b[6] < 0x30 ||
	    b[6] > 0x3f)
		return -1;
	s->cfa_reg = TRAIL_UW_SP;
	s->cfa_off = 8;
	s->plt_k = (uint8_t)(b[6] - 0x30);
	return 0;
}

/* Offsets: a factored one (v * align) or a plain one, as an int32_t in
 * *out; -1 when it does not fit (a damaged table: in 64-bit arithmetic
 * the product could overflow) */
static int scaled(int64_t v, int64_t align, int32_t *out)
{
	int64_t p;

	if (__builtin_mul_overflow(v, align, &p) || p < INT32_MIN || p > INT32_MAX)
		return -1;
	*out = (int32_t)p;
	return 0;
}

static int uscaled(uint64_t v, int64_t align, int32_t *out)
{
	return v > INT32_MAX ? -1 : scaled((int64_t)v, align, out);
}

/* a rule for register reg: only %rbp's and the return address's kept */
static void set_rule(struct state *s, uint64_t reg, uint8_t kind, int32_t off)
{
	struct rule *r = reg == TRAIL_UW_FP ? &s->fp : reg == RA_COL ? &s->ra : NULL;

	if (r)
		*r = (struct rule){kind, off};
}

static void restore(struct state *s, const struct state *init, uint64_t reg)
{
	if (reg == TRAIL_UW_FP)
		s->fp = init->fp;
	else if (reg == RA_COL)
		s->ra = init->ra;
}

/* Run the instructions at c from location loc until one moves past pc
 * (or they end): 0, or -1 on one not read here. init: the CIE's row
 * (NULL while running the CIE's). */
static int run(struct cur *c, const struct cie *ci, uint64_t loc, uint64_t pc, struct state *s,
	       const struct state *init)
{
	struct state stack[STATES];
	unsigned depth = 0;
	uint64_t reg, delta;
	int32_t off;

	for (unsigned n = 0; c->at < c->end && n < OPS_MAX; n++) {
		uint8_t op = u8(c);

		if (c->bad)
			return -1;
		delta = 0;
		switch (op >> 6) {
		case 1:
			delta = op & 0x3f;
			goto advance;
		case 2:
			if (uscaled(uleb(c), ci->data_align, &off))
				return -1;
			set_rule(s, op & 0x3f, R_OFF, off);
			continue;
		case 3:
			if (!init)
				return -1;
			restore(s, init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			continue;
		case 0x02: /* advance_loc1, 2, 4 */
			delta = uN(c, 1);
			goto advance;
		case 0x03:
			delta = uN(c, 2);
			goto advance;
		case 0x04:
			delta = uN(c, 4);
			goto advance;
		case 0x05: /* offset_extended */
			reg = uleb(c);
			if (uscaled(uleb(c), ci->data_align, &off))
				return -1;
			set_rule(s, reg, R_OFF, off);
			continue;
		case 0x11: /* offset_extended_sf */
			reg = uleb(c);
			if (scaled(sleb(c), ci->data_align, &off))
				return -1;
			set_rule(s, reg, R_OFF, off);
			continue;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = uleb(c);
			if (uscaled(uleb(c), -ci->data_align, &off))
				return -1;
			set_rule(s, reg, R_OFF, off);
			continue;
		case 0x06: /* restore_extended */
			if (!init)
				return -1;
			restore(s, init, uleb(c));
			continue;
		case 0x07: /* undefined */
			set_rule(s, uleb(c), R_UNDEF, 0);
			continue;
		case 0x08: /* same_value */
			set_rule(s, uleb(c), R_SAME, 0);
			continue;
		case 0x09: /* register */
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = uleb(c);
			if (reg == TRAIL_UW_FP || reg == RA_COL)
				return -1;
			uleb(c); /* (an sleb: the same bytes to skip) */
			continue;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = uleb(c);
			if (reg == TRAIL_UW_FP || reg == RA_COL)
				return -1;
			skip(c, uleb(c));
			continue;
		case 0x0a: /* remember_state */
			if (depth == STATES)
				return -1;
			stack[depth++] = *s;
			continue;
		case 0x0b: /* restore_state */
			if (!depth)
				return -1;
			*s = stack[--depth];
			continue;
		case 0x0c: /* def_cfa */
			reg = uleb(c);
			s->cfa_reg = (uint8_t)(reg < 255 ? reg : 255);
			if (uscaled(uleb(c), 1, &s->cfa_off))
				return -1;
			s->plt_k = 0;
			continue;
		case 0x12: /* def_cfa_sf */
			reg = uleb(c);
			s->cfa_reg = (uint8_t)(reg < 255 ? reg : 255);
			if (scaled(sleb(c), ci->data_align, &s->cfa_off))
				return -1;
			s->plt_k = 0;
			continue;
		case 0x0d: /* def_cfa_register */
			reg = uleb(c);
			s->cfa_reg = (uint8_t)(reg < 255 ? reg : 255);
			continue;
		case 0x0e: /* def_cfa_offset */
			if (uscaled(uleb(c), 1, &s->cfa_off))
				return -1;
			continue;
		case 0x13: /* def_cfa_offset_sf */
			if (scaled(sleb(c), ci->data_align, &s->cfa_off))
				return -1;
			continue;
		case 0x0f: /* def_cfa_expression */
			if (plt_expr(c, uleb(c), s))
				return -1;
			continue;
		case 0x2e: /* GNU_args_size */
			uleb(c);
			continue;
		default: /* set_loc, GNU_window_save, vendor ones */
			return -1;
		}
advance:
		if (c->bad)
			return -1;
		loc += delta * ci->code_align;
		if (loc > pc)
			return 0;
	}
	return c->bad ? -1 : 0;
}

/* ------------------------------------------------- the CIE, the FDE */

static int cie_read(uint64_t at, struct cie *ci, trail_uw_read rd, void *ctx)
{
	struct cur c;
	char aug[8];
	uint32_t len;
	uint8_t ver;
	unsigned k;
	uint64_t after;

	if (rd(ctx, at, &len, 4) || len < 8 || len > FDE_MAX)
		return -1;
	cur_init(&c, at + 4, at + 4 + len, rd, ctx);
	if (uN(&c, 4) != 0) /* the CIE id */
		return -1;
	ver = u8(&c);
	if (ver != 1 && ver != 3)
		return -1;
	for (k = 0; k < sizeof(aug); k++)
		if (!(aug[k] = (char)u8(&c)))
			break;
	if (k == sizeof(aug) || c.bad)
		return -1;
	memset(ci, 0, sizeof(*ci));
	ci->code_align = uleb(&c);
	ci->data_align = sleb(&c);
	if ((ver == 1 ? u8(&c) : uleb(&c)) != RA_COL)
		return -1;
	if (aug[0] == 'z') {
		uint64_t alen = uleb(&c);

		if (c.bad || alen > c.end - c.at)
			return -1;
		after = c.at + alen;
		ci->z = 1;
		for (k = 1; aug[k]; k++) {
			uint8_t enc;

			switch (aug[k]) {
			case 'R':
				ci->fenc = u8(&c);
				break;
			case 'P':
				enc = u8(&c);
				if (!enc_size(enc))
					return -1;
				skip(&c, enc_size(enc));
				break;
			case 'L':
				u8(&c);
				break;
			case 'S':
			case 'B':
				break;
			default:
				return -1;
			}
		}
		if (c.bad || c.at > after)
			return -1;
		c.at = after;
	} else if (aug[0]) {
		return -1;
	}
	/* (x86-64's are 1 and -8: a few bytes at most in any ABI) */
	if (c.bad || !ci->code_align || ci->code_align > 64 || ci->data_align < -64 ||
	    ci->data_align > 64 || !enc_size(ci->fenc))
		return -1;
	ci->ins = c.at;
	ci->ins_end = c.end;
	return 0;
}

/* the FDE of pc: the last table entry at or before it */
static int fde_lookup(uint64_t hdr, uint64_t len, uint64_t pc, uint64_t *fde, trail_uw_read rd,
		      void *ctx)
{
	uint8_t h[4];
	uint32_t count, lo = 0, hi;
	uint64_t table;
	unsigned psz;
	int32_t v[2];

	if (rd(ctx, hdr, h, 4) || h[0] != 1 || !(psz = enc_size(h[1])) ||
	    ((h[2] & 0x0f) != 0x03 && (h[2] & 0x0f) != 0x0b) || h[3] != TABLE_ENC ||
	    rd(ctx, hdr + 4 + psz, &count, 4))
		return -1;
	table = hdr + 4 + psz + 4;
	if (len && (len < 8 + psz || (uint64_t)count * 8 > len - (8 + psz)))
		return -1;
	hi = count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rd(ctx, table + (uint64_t)mid * 8, v, 4))
			return -1;
		if (hdr + (uint64_t)(int64_t)v[0] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || rd(ctx, table + (uint64_t)(lo - 1) * 8, v, 8))
		return -1;
	*fde = hdr + (uint64_t)(int64_t)v[1];
	return 0;
}

int trail__cfi_find(uint64_t hdr, uint64_t len, uint64_t pc, struct trail_uwrow *row,
		    trail_uw_read rd, void *ctx)
{
	struct cur c;
	struct state s = {.cfa_reg = 255}, init;
	struct cie ci;
	uint64_t fde, begin, range;
	uint32_t flen, cptr;

	if (fde_lookup(hdr, len, pc, &fde, rd, ctx))
		return -1;
	if (rd(ctx, fde, &flen, 4) || flen < 8 || flen > FDE_MAX)
		return -1;
	cur_init(&c, fde + 4, fde + 4 + flen, rd, ctx);
	cptr = (uint32_t)uN(&c, 4);
	if (c.bad || !cptr || cptr > fde + 4 || cie_read(fde + 4 - cptr, &ci, rd, ctx))
		return -1;
	begin = enc_read(&c, ci.fenc);
	range = enc_read(&c, ci.fenc & 0x0f);
	if (c.bad || pc < begin || pc - begin >= range)
		return -1;
	if (ci.z)
		skip(&c, uleb(&c));
	if (c.bad)
		return -1;
	/* the CIE's row, then the FDE's up to pc */
	{
		struct cur cc;

		cur_init(&cc, ci.ins, ci.ins_end, rd, ctx);

		if (run(&cc, &ci, begin, UINT64_MAX, &s, NULL))
			return -1;
	}
	init = s;
	if (run(&c, &ci, begin, pc, &s, &init))
		return -1;
	if ((s.cfa_reg != TRAIL_UW_SP && s.cfa_reg != TRAIL_UW_FP) ||
	    (s.ra.kind != R_OFF && s.ra.kind != R_UNDEF))
		return -1;
	*row = (struct trail_uwrow){
		.cfa_reg = s.cfa_reg,
		.cfa_off = s.cfa_off,
		.plt_k = s.plt_k,
		.ra_undef = s.ra.kind == R_UNDEF,
		.ra_off = s.ra.off,
		.fp_saved = s.fp.kind == R_OFF,
		.fp_off = s.fp.off,
	};
	return 0;
}
