/* SPDX-License-Identifier: MIT */
/*
 * fields.c - event fields as ftrace prints them: "name=value" separated by
 * spaces; strings quoted with C escapes, hex fields as 0x..., arrays as
 * {a,b,c}. Hand-rolled number formatting: report prints millions of lines.
 */
#include <stdio.h>
#include <string.h>

#include "../common/util.h"
#include "reader.h"

struct out {
	char *p, *end;
};

static void put(struct out *o, const char *s, size_t n)
{
	size_t room = (size_t)(o->end - o->p);

	if (n > room)
		n = room;
	memcpy(o->p, s, n);
	o->p += n;
}

static void putc1(struct out *o, char c)
{
	if (o->p < o->end)
		*o->p++ = c;
}

static void put_u64(struct out *o, uint64_t v)
{
	char tmp[24];

	put(o, tmp, (size_t)(trail__utoa(tmp, v) - tmp));
}

static void put_s64(struct out *o, int64_t v)
{
	if (v < 0) {
		putc1(o, '-');
		put_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(o, (uint64_t)v);
	}
}

static void put_hex(struct out *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[18];
	int n = 0;

	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	putc1(o, '0');
	putc1(o, 'x');
	while (n)
		putc1(o, tmp[--n]);
}

static uint64_t load_u(const uint8_t *p, unsigned size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64 = 0;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

static int64_t sign_extend(uint64_t v, unsigned size)
{
	unsigned shift = 64 - size * 8;

	return shift ? (int64_t)(v << shift) >> shift : (int64_t)v;
}

static void put_int(struct out *o, const struct trail_field *f, const uint8_t *p)
{
	uint64_t v = load_u(p, f->size);

	if (f->flags & TRAIL_FF_BOOL)
		put_u64(o, v != 0);
	else if (f->flags & TRAIL_FF_HEX)
		put_hex(o, v);
	else if (f->flags & TRAIL_FF_SIGNED)
		put_s64(o, sign_extend(v, f->size));
	else
		put_u64(o, v);
}

static void put_string(struct out *o, const uint8_t *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	putc1(o, '"');
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];

		switch (c) {
		case '"': put(o, "\\\"", 2); break;
		case '\\': put(o, "\\\\", 2); break;
		case '\n': put(o, "\\n", 2); break;
		case '\t': put(o, "\\t", 2); break;
		case '\r': put(o, "\\r", 2); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				char e[4] = {'\\', 'x', digits[c >> 4], digits[c & 15]};
				put(o, e, 4);
			} else {
				putc1(o, (char)c);
			}
		}
	}
	putc1(o, '"');
}

/* trail_field_at(), inlined into trail_format_fields(): report prints
 * millions of lines */
static inline int field_at(const struct trail_revent *ev, uint32_t i, const uint8_t *p,
			   uint32_t len, uint32_t *off, struct trail_fval *v)
{
	const struct trail_field *f;
	uint32_t o = *off, count = 1, esz;
	uint16_t k;

	if (i >= ev->meta.nfields)
		return 0;
	f = &ev->meta.fields[i];
	esz = f->size;
	v->null = 0;
	switch (f->kind) {
	case TRAIL_FK_INT:
	case TRAIL_FK_FLOAT:
		break;
	case TRAIL_FK_ARRAY:
		count = f->count;
		break;
	case TRAIL_FK_STRING:
	case TRAIL_FK_SEQ:
		if (o + 2 > len)
			return 0;
		memcpy(&k, p + o, 2);
		o += 2;
		count = k;
		if (f->kind == TRAIL_FK_STRING) {
			esz = 1;
			v->null = k == TRAIL_STRING_NULL;
			count = v->null ? 0 : k;
		}
		break;
	default:
		return 0;
	}
	if (o + (uint64_t)count * esz > len)
		return 0;
	v->f = f;
	v->data = p + o;
	v->count = count;
	*off = o + count * esz;
	return 1;
}

/* One field's value, as ftrace prints it. */
static inline void put_value(struct out *o, const struct trail_fval *v)
{
	const struct trail_field *f = v->f;

	switch (f->kind) {
	case TRAIL_FK_INT:
		if (f->flags & TRAIL_FF_CHAR) {
			char c[3] = {'\'', (char)*v->data, '\''};

			if (*v->data >= 0x20 && *v->data < 0x7f)
				put(o, c, 3);
			else
				put_int(o, f, v->data);
		} else {
			put_int(o, f, v->data);
		}
		break;
	case TRAIL_FK_FLOAT: {
		char tmp[40];

		put(o, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%g", trail_fval_double(v)));
		break;
	}
	case TRAIL_FK_STRING:
		if (v->null)
			put(o, "(null)", 6);
		else
			put_string(o, v->data, v->count);
		break;
	case TRAIL_FK_ARRAY:
	case TRAIL_FK_SEQ:
		putc1(o, '{');
		for (uint32_t j = 0; j < v->count; j++) {
			if (j)
				putc1(o, ',');
			put_int(o, f, v->data + (size_t)j * f->size);
		}
		putc1(o, '}');
		break;
	}
}

size_t trail_format_fields(const struct trail_revent *ev, const uint8_t *p,
			   uint32_t len, char *buf, size_t n)
{
	struct out o = {buf, buf + (n ? n - 1 : 0)};
	const struct trail_meta *m = &ev->meta;
	uint32_t off = 0;
	struct trail_fval v;

	if (!n)
		return 0;
	for (uint32_t i = 0; i < m->nfields; i++) {
		const struct trail_field *f = &m->fields[i];

		if (i)
			putc1(&o, ' ');
		put(&o, f->name, strlen(f->name));
		putc1(&o, '=');
		/* lengths were checked by trail__payload_len(); stay defensive */
		if (!field_at(ev, i, p, len, &off, &v)) {
			put(&o, "<short>", 7);
			break;
		}
		put_value(&o, &v);
	}
	*o.p = '\0';
	return (size_t)(o.p - buf);
}

size_t trail_format_probe_fields(const struct trail_revent *ev, const uint8_t *p, uint32_t len,
				 char *buf, size_t n,
				 size_t (*sym)(void *ctx, uint64_t addr, char *b, size_t n),
				 void *ctx)
{
	struct out o = {buf, buf + (n ? n - 1 : 0)};
	const struct trail_meta *m = &ev->meta;
	uint32_t off = 0, arg = 0, first = 1;
	uint64_t fault = 0;
	struct trail_fval v;

	if (!n)
		return 0;
	for (uint32_t i = 0; i < m->nfields; i++) {
		const struct trail_field *f = &m->fields[i];

		if (!field_at(ev, i, p, len, &off, &v)) {
			put(&o, " <short>", 8);
			break;
		}
		if (!strncmp(f->name, "__probe_", 8)) { /* the probe's own */
			if (!strcmp(f->name, "__probe_fault"))
				fault = trail_fval_u64(&v, 0);
			continue;
		}
		if (!first)
			putc1(&o, ' ');
		first = 0;
		put(&o, f->name, strlen(f->name));
		putc1(&o, '=');
		if (fault >> (arg < 63 ? arg : 63) & 1)
			put(&o, "(fault)", 7);
		else if (f->kind == TRAIL_FK_INT && (f->flags & TRAIL_FF_SYM) && sym) {
			char b[256];

			put(&o, b, sym(ctx, trail_fval_u64(&v, 0), b, sizeof(b)));
		} else
			put_value(&o, &v);
		arg++;
	}
	*o.p = '\0';
	return (size_t)(o.p - buf);
}

int trail_field_at(const struct trail_revent *ev, uint32_t i, const uint8_t *p, uint32_t len,
		   uint32_t *off, struct trail_fval *v)
{
	return field_at(ev, i, p, len, off, v);
}

uint64_t trail_fval_u64(const struct trail_fval *v, uint32_t j)
{
	if (j >= v->count || v->f->kind == TRAIL_FK_STRING || v->f->kind == TRAIL_FK_FLOAT)
		return 0;
	return load_u(v->data + (size_t)j * v->f->size, v->f->size);
}

int64_t trail_fval_s64(const struct trail_fval *v, uint32_t j)
{
	return sign_extend(trail_fval_u64(v, j), v->f->size);
}

double trail_fval_double(const struct trail_fval *v)
{
	float fl;
	double d = 0;

	if (v->f->kind != TRAIL_FK_FLOAT)
		return 0;
	if (v->f->size == 4) {
		memcpy(&fl, v->data, 4);
		return fl;
	}
	memcpy(&d, v->data, 8);
	return d;
}
