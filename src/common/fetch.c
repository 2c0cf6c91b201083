/* SPDX-License-Identifier: MIT */
/*
 * fetch.c - checking compiled probe blobs (fetch.h) and their hex form.
 * Used by the CLI after compiling and by libtrail before running one, so
 * every byte is treated as hostile; nothing is allocated.
 */
#include <errno.h>
#include <string.h>

#include "fetch.h"
#include "filter.h"
#include "meta.h"

/* the probe's own fields, in order, before the arguments */
static unsigned own_fields(uint8_t kind, uint8_t flags, const char **names)
{
	unsigned n = 0;

	if (kind == TRAIL_PROBE_ENTRY || kind == TRAIL_PROBE_WATCH)
		names[n++] = "__probe_ip";
	else if (kind == TRAIL_PROBE_RETURN) {
		names[n++] = "__probe_func";
		names[n++] = "__probe_ret_ip";
	}
	if (flags & TRAIL_PROBE_F_FAULT)
		names[n++] = "__probe_fault";
	return n;
}

static int size_ok(unsigned s)
{
	return s == 1 || s == 2 || s == 4 || s == 8;
}

/* Does the store op match field f? Adds its payload bound to *max. */
static int store_matches(const struct trail_fetch_insn *in, const struct trail_field *f,
			 uint32_t *max, const char **why)
{
	if (*max > 1u << 30) /* past any payload: sums stay far from wrapping */
		return 0;
	switch (in->op) {
	case TRAIL_FOP_ST_INT:
		*why = "integer store on a field of another type";
		if (f->kind != TRAIL_FK_INT || f->size != in->size)
			return 0;
		*max += in->size;
		return 1;
	case TRAIL_FOP_ST_STRING:
	case TRAIL_FOP_ST_COMM:
		*why = "string store on a field of another type";
		if (f->kind != TRAIL_FK_STRING)
			return 0;
		*why = "string longer than a string field can hold";
		if (in->op == TRAIL_FOP_ST_STRING && (in->u32 == 0 || in->u32 > TRAIL_STRING_MAX))
			return 0;
		*max += 2 + (in->op == TRAIL_FOP_ST_COMM ? 16 : in->u32);
		return 1;
	case TRAIL_FOP_ST_ARRAY:
		*why = "array store on a field of another type";
		if (f->kind != TRAIL_FK_ARRAY || f->size != in->size || f->count != in->u32)
			return 0;
		*why = "bad array length";
		if (!in->u32 || in->u32 > TRAIL_PROBE_MAX_ARRAY)
			return 0;
		*max += in->size * in->u32;
		return 1;
	}
	*why = "unknown store op";
	return 0;
}

int trail_probe_check(const void *blob, size_t len, struct trail_probe *p, const char **why)
{
	const uint8_t *b = blob;
	struct trail_probe_hdr h;
	struct trail_meta m;
	const char *own[3];
	unsigned nown, arg = 0, ops = 0;
	uint32_t max = 0, min = 0; /* payload bounds: strings at most, and empty */
	size_t off;

	*why = "probe blob truncated";
	if (len < sizeof(h))
		return -EPROTO;
	memcpy(&h, b, sizeof(h));
	*why = "not a probe blob";
	if (h.magic != TRAIL_PROBE_MAGIC)
		return -EPROTO;
	*why = "probe blob size mismatch";
	if (h.size != len || len > TRAIL_PROBE_MAX_BLOB)
		return -EPROTO;
	*why = "unknown probe kind";
	if (h.kind != TRAIL_PROBE_ENTRY && h.kind != TRAIL_PROBE_RETURN &&
	    h.kind != TRAIL_PROBE_EVENT && h.kind != TRAIL_PROBE_WATCH)
		return -EPROTO;
	*why = "unknown probe flags";
	if (h.flags & ~(TRAIL_PROBE_F_FAULT | TRAIL_PROBE_F_COMM | TRAIL_PROBE_F_FILTER |
			TRAIL_PROBE_F_INSN | TRAIL_PROBE_F_SEMA | TRAIL_PROBE_F_VEC |
			TRAIL_PROBE_F_ADDR | TRAIL_PROBE_F_ABS))
		return -EPROTO;
	*why = "bad watchpoint";
	if (h.kind == TRAIL_PROBE_WATCH &&
	    (!(h.jump & 3) || (h.jump & 12) ||
	     ((h.jump >> 4) != 1 && (h.jump >> 4) != 2 && (h.jump >> 4) != 4 && (h.jump >> 4) != 8) ||
	     (h.offset != UINT64_MAX && (h.offset & ((h.jump >> 4) - 1u))) || (h.flags & ~(TRAIL_PROBE_F_FAULT | TRAIL_PROBE_F_COMM |
							       TRAIL_PROBE_F_ABS))))
		return -EPROTO;
	if (h.kind != TRAIL_PROBE_WATCH && (h.flags & TRAIL_PROBE_F_ABS))
		return -EPROTO;
	*why = "bad instruction probe";
	if (((h.flags & TRAIL_PROBE_F_INSN) && h.kind != TRAIL_PROBE_ENTRY) ||
	    (h.jump && h.kind != TRAIL_PROBE_WATCH && (!(h.flags & TRAIL_PROBE_F_INSN) || h.jump > 24)) ||
	    ((h.flags & (TRAIL_PROBE_F_SEMA | TRAIL_PROBE_F_VEC)) && !(h.flags & TRAIL_PROBE_F_INSN)) ||
	    ((h.flags & TRAIL_PROBE_F_ADDR) &&
	     (h.kind != TRAIL_PROBE_ENTRY || (h.flags & TRAIL_PROBE_F_INSN))))
		return -EPROTO;
	*why = "too many probe arguments";
	if (h.nargs > TRAIL_PROBE_MAX_ARGS)
		return -EPROTO;
	*why = "probe blob parts overflow it";
	off = sizeof(h);
	if ((uint64_t)off + h.sym_len + h.obj_len + h.meta_size +
		    (uint64_t)h.ninsns * sizeof(struct trail_fetch_insn) + h.strs_size != len)
		return -EPROTO;
	p->hdr = (const struct trail_probe_hdr *)blob;
	p->sym = (const char *)b + off;
	*why = "bad probe symbol";
	if (h.sym_len < 2 || memchr(p->sym, 0, h.sym_len) != p->sym + h.sym_len - 1)
		return -EPROTO;
	off += h.sym_len;
	p->obj = (const char *)b + off;
	*why = "bad probe object";
	if (h.obj_len < 1 || memchr(p->obj, 0, h.obj_len) != p->obj + h.obj_len - 1)
		return -EPROTO;
	off += h.obj_len;
	p->meta = b + off;
	off += h.meta_size;
	p->code = (const struct trail_fetch_insn *)(const void *)(b + off);
	off += (size_t)h.ninsns * sizeof(struct trail_fetch_insn);
	p->strs = (const char *)b + off;
	*why = "probe strings not terminated";
	if (h.strs_size && p->strs[h.strs_size - 1])
		return -EPROTO;
	p->filter = NULL;
	p->sema = 0;
	if (h.flags & (TRAIL_PROBE_F_INSN | TRAIL_PROBE_F_ADDR)) {
		*why = "bad instruction probe";
		if (h.obj_len < 2 || !h.offset)
			return -EPROTO;
	}
	if (h.flags & TRAIL_PROBE_F_SEMA) {
		size_t k = h.strs_size ? h.strs_size - 1u : 0, n = 0;

		*why = "bad USDT semaphore";
		if (h.strs_size < 2)
			return -EPROTO;
		while (k > 0 && p->strs[k - 1])
			k--;
		for (const char *c = p->strs + k; *c; c++, n++) {
			int v = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1;

			if (v < 0 || n == 16)
				return -EPROTO;
			p->sema = p->sema << 4 | (uint64_t)v;
		}
		if (!p->sema)
			return -EPROTO;
	}
	if (h.flags & TRAIL_PROBE_F_FILTER) {
		size_t k = h.strs_size ? h.strs_size - 1u : 0;

		*why = "bad eprobe filter";
		if (h.kind != TRAIL_PROBE_EVENT || h.strs_size < 2)
			return -EPROTO;
		while (k > 0 && p->strs[k - 1])
			k--;
		p->filter = p->strs + k;
		if (!p->filter[0] || h.strs_size - 1u - k >= TRAIL_FILTER_MAX_TEXT)
			return -EPROTO;
	}
	if (h.kind != TRAIL_PROBE_ENTRY && h.kind != TRAIL_PROBE_WATCH && h.offset) {
		*why = "offset on a return or event probe";
		return -EPROTO;
	}
	if (trail__meta_parse(p->meta, h.meta_size, &m, why))
		return -EPROTO;
	*why = "probe event description size mismatch";
	if (m.size != h.meta_size)
		return -EPROTO;
	nown = own_fields(h.kind, h.flags, own);
	*why = "probe fields do not match its arguments";
	if (m.nfields != nown + h.nargs)
		return -EPROTO;
	for (unsigned i = 0; i < nown; i++) {
		const struct trail_field *f = &m.fields[i];

		*why = "probe's own field misnamed or mistyped";
		if (strcmp(f->name, own[i]) || f->kind != TRAIL_FK_INT || f->size != 8)
			return -EPROTO;
		max += 8;
	}
	for (uint16_t i = 0; i < h.ninsns; i++) {
		const struct trail_fetch_insn *in = &p->code[i];
		struct trail_fetch_insn c;

		memcpy(&c, in, sizeof(c));
		*why = "argument program too long";
		if (++ops > TRAIL_PROBE_MAX_INSNS)
			return -EPROTO;
		*why = "code past the last argument";
		if (arg >= h.nargs)
			return -EPROTO;
		switch (c.op) {
		case TRAIL_FOP_REG:
			*why = "unknown register";
			if (c.arg >= TRAIL_PREG_COUNT)
				return -EPROTO;
			*why = "register not saved at a return";
			if (h.kind == TRAIL_PROBE_RETURN && !(TRAIL_PREG_AT_RETURN >> c.arg & 1))
				return -EPROTO;
			*why = "register read in an eprobe";
			if (h.kind == TRAIL_PROBE_EVENT)
				return -EPROTO;
			break;
		case TRAIL_FOP_STACK:
			*why = "bad stack offset";
			if (c.imm < 0 || c.imm > (1 << 20) || (c.imm & 7))
				return -EPROTO;
			*why = "stack read in an eprobe";
			if (h.kind == TRAIL_PROBE_EVENT)
				return -EPROTO;
			break;
		case TRAIL_FOP_RETVAL:
			*why = "$retval outside a return probe";
			if (h.kind != TRAIL_PROBE_RETURN)
				return -EPROTO;
			break;
		case TRAIL_FOP_IMM:
			break;
		case TRAIL_FOP_WADDR:
		case TRAIL_FOP_WOLD:
			*why = "$addr or $old outside a wprobe";
			if (h.kind != TRAIL_PROBE_WATCH)
				return -EPROTO;
			break;
		case TRAIL_FOP_SYM:
			*why = "bad symbol object";
			if (c.u32 != 0xffffffffu && c.u32 >= h.strs_size)
				return -EPROTO;
			break;
		case TRAIL_FOP_FIELD:
			*why = "field read outside an eprobe";
			if (h.kind != TRAIL_PROBE_EVENT)
				return -EPROTO;
			*why = "bad source field";
			if (c.u32 > 255)
				return -EPROTO;
			break;
		case TRAIL_FOP_DEREF:
			*why = "bad dereference size";
			if (!size_ok(c.size))
				return -EPROTO;
			break;
		case TRAIL_FOP_BITFIELD:
			*why = "bad bitfield";
			if (!c.size || c.size > 64 || c.arg >= 64 || c.size + c.arg > 64)
				return -EPROTO;
			break;
		case TRAIL_FOP_ST_INT:
			*why = "bad store size";
			if (!size_ok(c.size))
				return -EPROTO;
			/* fall through */
		case TRAIL_FOP_ST_STRING:
		case TRAIL_FOP_ST_ARRAY:
		case TRAIL_FOP_ST_COMM:
			if (c.op == TRAIL_FOP_ST_ARRAY && !size_ok(c.size)) {
				*why = "bad array element size";
				return -EPROTO;
			}
			if (!store_matches(&c, &m.fields[nown + arg], &max, why))
				return -EPROTO;
			min += c.op == TRAIL_FOP_ST_INT ? c.size
			     : c.op == TRAIL_FOP_ST_ARRAY ? (uint32_t)c.size * c.u32 : 2;
			arg++;
			ops = 0;
			break;
		default:
			*why = "unknown fetch op";
			return -EPROTO;
		}
	}
	*why = "an argument has no store";
	if (arg != h.nargs)
		return -EPROTO;
	/* strings are cut to fit; the rest must fit as it is */
	*why = "probe arguments too large for one record";
	if (8u * nown + min > TRAIL_PROBE_MAX_PAYLOAD)
		return -EPROTO;
	*why = "probe payload bound wrong";
	if (h.payload_max != (max < TRAIL_PROBE_MAX_PAYLOAD ? max : TRAIL_PROBE_MAX_PAYLOAD))
		return -EPROTO;
	*why = NULL;
	return 0;
}

void trail_probe_hex(const void *blob, size_t len, char *out)
{
	static const char dig[] = "0123456789abcdef";
	const uint8_t *b = blob;

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = dig[b[i] >> 4];
		out[2 * i + 1] = dig[b[i] & 15];
	}
	out[2 * len] = '\0';
}

static int nib(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

long trail_probe_unhex(const char *hex, size_t n, void *out, size_t outsz)
{
	uint8_t *o = out;

	if (n & 1 || n / 2 > outsz)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = nib(hex[i]), lo = nib(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		o[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (long)(n / 2);
}
