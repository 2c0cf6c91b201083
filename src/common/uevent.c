/* SPDX-License-Identifier: MIT */
/*
 * uevent.c - user event definitions in the kernel's user_events grammar,
 * their trail descriptions and payloads (uevent.h). Allocates nothing:
 * libtrail parses under its control lock, maybe in a signal handler.
 *
 * The kernel's parser, followed where a program can tell: the name ends
 * at the first blank (a ':' in it, flags, is refused: none are defined);
 * fields are split at ';', leading blanks skipped, an empty one ignored;
 * a field's words are split at single blanks (two blanks, or one at its
 * end, make an empty word: refused), the type being one word or one of
 * the two-word forms "unsigned T", "struct T", "__data_loc [unsigned ]T",
 * "__rel_loc [unsigned ]T"; a size only after a struct. Trail refuses
 * more than the kernel in two places, both said by their message: names
 * (of the event and the fields) must be identifiers, as filters and hist
 * keys name them, and a field name may not be used twice.
 */
#include "uevent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trail/abi.h>

static int fail(struct trail_filter_err *e, size_t pos, const char *msg)
{
	e->pos = (int)pos;
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	return -EINVAL;
}

static const struct {
	const char *name;
	uint8_t size, ext;
} ints[] = {
	{"s64", 8, 0}, {"u64", 8, 0}, {"s32", 4, 0}, {"u32", 4, 0}, {"int", 4, 0},
	{"unsigned int", 4, 0}, {"s16", 2, 0}, {"u16", 2, 0}, {"short", 2, 0},
	{"unsigned short", 2, 0}, {"s8", 1, 0}, {"u8", 1, 0}, {"char", 1, 0},
	{"unsigned char", 1, 0}, {"bool", 1, 1},
};

static int ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* t[0..n) a name of letters, digits and '_', not starting with a digit:
 * -1, or the offset of the first byte that is not */
static int bad_ident(const char *t, size_t n)
{
	if (!n)
		return 0;
	if (t[0] >= '0' && t[0] <= '9')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!ident(t[i]))
			return (int)i;
	return -1;
}

static int int_size(const char *ty, int ext)
{
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (!strcmp(ints[i].name, ty) && (ext || !ints[i].ext))
			return ints[i].size;
	return 0;
}

/* text[0..n) kept in d->text, NUL-terminated: its offset, or -1 */
static int keep(struct trail_ue_def *d, const char *t, size_t n)
{
	uint32_t at = d->text_used;

	if (n + 1 > sizeof(d->text) - at)
		return -1;
	memcpy(d->text + at, t, n);
	d->text[at + n] = '\0';
	d->text_used += (uint32_t)n + 1;
	return (int)at;
}

/* kstrtouint(s, 0): decimal, 0x hex or 0 octal, digits only */
static int parse_uint(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (n > 1 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	if (i == n)
		return -1;
	for (; i < n; i++) {
		unsigned dg;

		if (s[i] >= '0' && s[i] <= '9')
			dg = (unsigned)(s[i] - '0');
		else if (s[i] >= 'a' && s[i] <= 'f')
			dg = (unsigned)(s[i] - 'a' + 10);
		else if (s[i] >= 'A' && s[i] <= 'F')
			dg = (unsigned)(s[i] - 'A' + 10);
		else
			return -1;
		if (dg >= base)
			return -1;
		v = v * base + dg;
		if (v > 0xffffffffu)
			return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* One field, s[at .. end) (after the leading blanks). */
static int field(const char *s, size_t at, size_t end, unsigned opts, struct trail_ue_def *d,
		 struct trail_filter_err *e)
{
	static const char *const two[] = {"unsigned ", "struct ", "__data_loc unsigned ",
					  "__data_loc ", "__rel_loc unsigned ", "__rel_loc "};
	int ext = !!(opts & TRAIL_UE_EXT), is_struct = 0, ty, nm;
	size_t tstart = at, tend, w[3], wl[3], nw = 0, i, p;
	struct trail_ue_field *f;
	uint32_t size = 0;
	char type[96];

	if (d->nfields == TRAIL_UE_MAX_FIELDS)
		return fail(e, at, "Too many fields (at most 128)");
	/* (the kernel takes any byte in a type; a definition is one line of
	 * trail's files and specs, and a type is shown as written) */
	for (i = at; i < end; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return fail(e, i, "Invalid character");
	f = &d->f[d->nfields];
	memset(f, 0, sizeof(*f));
	/* the type: one word, or a two-word form and its next word */
	tend = at;
	for (i = 0; i < sizeof(two) / sizeof(two[0]); i++) {
		size_t l = strlen(two[i]);

		if (end - at > l && !memcmp(s + at, two[i], l)) {
			const char *sp = memchr(s + at + l, ' ', end - at - l);

			if (!sp)
				return fail(e, end, "Missing field name (TYPE NAME)");
			is_struct = i == 1;
			tend = (size_t)(sp - s);
			break;
		}
	}
	if (tend == at) { /* one word */
		const char *sp = memchr(s + at, ' ', end - at);

		if (!sp)
			return fail(e, end, "Missing field name (TYPE NAME)");
		tend = (size_t)(sp - s);
	}
	if (tend - tstart >= sizeof(type))
		return fail(e, tstart, "Invalid type");
	memcpy(type, s + tstart, tend - tstart);
	type[tend - tstart] = '\0';
	/* the other words, at single blanks */
	for (p = tend + 1;; ) {
		const char *sp = memchr(s + p, ' ', end - p);
		size_t we = sp ? (size_t)(sp - s) : end;

		if (nw == 2)
			return fail(e, p, is_struct ? "Too many words (struct TYPE NAME SIZE)"
						    : "Too many words (TYPE NAME)");
		w[nw] = p;
		wl[nw++] = we - p;
		if (!sp)
			break;
		p = we + 1;
	}
	for (i = 0; i < nw; i++)
		if (!wl[i])
			return fail(e, w[i], nw > 1 ? "Extra blank (fields are TYPE NAME; TYPE NAME)"
						    : "Missing field name (TYPE NAME)");
	if (nw == 2 && !is_struct)
		return fail(e, w[1], "A size follows struct types only (struct TYPE NAME SIZE)");
	if (nw == 2 && (parse_uint(s + w[1], wl[1], &size) || (s[w[1]] == '0' && wl[1] > 1)))
		return fail(e, w[1], "Invalid struct size (a decimal number)");
	if (is_struct && nw < 2)
		return fail(e, end, "Missing struct size (struct TYPE NAME SIZE)");
	if ((nm = bad_ident(s + w[0], wl[0])) >= 0)
		return fail(e, w[0] + (size_t)nm, "Invalid field name (letters, digits and _)");
	if (wl[0] > TRAIL_UE_FIELD_MAX)
		return fail(e, w[0] + TRAIL_UE_FIELD_MAX, "Field name too long (at most 128 bytes)");
	/* the size, and the kind */
	f->sign = type[0] != 'u';
	if (is_struct) {
		if (!size)
			return fail(e, w[1], "Invalid struct size (a decimal number)");
		if (size > 0xffff)
			return fail(e, w[1], "Struct too large (at most 65535 bytes)");
		f->kind = TRAIL_UE_BLOB;
		f->sign = 0;
	} else if (!strncmp(type, "__data_loc ", 11) || !strncmp(type, "__rel_loc ", 10)) {
		char el[96];
		char *br;
		int es;

		f->kind = TRAIL_UE_LOC;
		f->rel = type[2] == 'r';
		f->str = strstr(type, "char") != NULL;
		snprintf(el, sizeof(el), "%s", type + (f->rel ? 10 : 11));
		if ((br = strchr(el, '[')))
			*br = '\0';
		es = int_size(el, 0);
		f->esize = (uint8_t)(es && !f->str ? es : 1);
		f->sign = !f->str && es && el[0] != 'u';
		size = 4;
	} else if (!strncmp(type, "char[", 5) || !strncmp(type, "unsigned char[", 14)) {
		const char *in = strchr(type, '[') + 1, *cl;
		size_t n = strlen(in);

		if (n > 7)
			return fail(e, tstart + (size_t)(in - type), "Invalid array size (at most 1024)");
		cl = memchr(in, ']', n);
		if (cl && cl == in && ext) {
			/* trail's char[]: a string, the kernel's __data_loc char[] */
			f->kind = TRAIL_UE_LOC;
			f->str = 1;
			f->esize = 1;
			size = 4;
		} else {
			if (!cl || parse_uint(in, (size_t)(cl - in), &size) || !size ||
			    size > TRAIL_UE_ARRAY_MAX)
				return fail(e, tstart + (size_t)(in - type),
					    "Invalid array size (1 to 1024)");
			f->kind = TRAIL_UE_CHARS;
		}
	} else if (ext && (!strcmp(type, "string") || !strcmp(type, "bytes"))) {
		f->kind = TRAIL_UE_LOC;
		f->str = type[0] == 's';
		f->esize = 1;
		f->sign = 0;
		size = 4;
	} else if (ext && (!strcmp(type, "double") || !strcmp(type, "float"))) {
		f->kind = TRAIL_UE_FLOAT;
		size = type[0] == 'd' ? 8 : 4;
	} else if ((size = (uint32_t)int_size(type, ext))) {
		f->kind = TRAIL_UE_INT;
		f->boolean = !strcmp(type, "bool");
		if (f->boolean)
			f->sign = 0;
	} else {
		return fail(e, tstart, !strcmp(type, "long") || !strcmp(type, "unsigned long")
				       ? "Invalid type: long's size differs between programs (s64, u64)"
				       : ext ? "Invalid type (u8..u64, s8..s64, int, char[N], string, "
					       "double, ...)"
					     : "Invalid type (u8..u64, s8..s64, char, short, int, char[N], "
					       "__data_loc char[], ...)");
	}
	if (d->min_size + (uint64_t)size > 0xffff)
		return fail(e, tstart, "Fields too large (at most 65535 bytes)");
	for (uint32_t k = 0; k < d->nfields; k++)
		if (strlen(trail_ue_fname(d, k)) == wl[0] &&
		    !memcmp(trail_ue_fname(d, k), s + w[0], wl[0]))
			return fail(e, w[0], "Field name already used");
	ty = keep(d, type, strlen(type));
	nm = keep(d, s + w[0], wl[0]);
	if (ty < 0 || nm < 0)
		return fail(e, tstart, "Definition too long");
	f->type = (uint16_t)ty;
	f->name = (uint16_t)nm;
	f->size = size;
	f->off = d->min_size;
	d->min_size += size;
	if (f->kind == TRAIL_UE_CHARS || f->kind == TRAIL_UE_LOC)
		d->direct = 0;
	if (ext && (!strcmp(type, "string") || !strcmp(type, "bytes") || !strcmp(type, "bool") ||
		    f->kind == TRAIL_UE_FLOAT || !strcmp(type, "char[]")))
		d->ext = 1;
	d->nfields++;
	return 0;
}

/*
 * NAME[:FLAGS] [FIELD[;FIELD...]]
 */
int trail_ue_parse(const char *s, unsigned opts, struct trail_ue_def *d, struct trail_filter_err *e)
{
	size_t len = strnlen(s, TRAIL_UE_DESC_MAX), nl, i;
	const char *sp;
	int r, at;

	memset(d, 0, offsetof(struct trail_ue_def, f));
	d->text_used = 0;
	d->direct = 1;
	if (len == TRAIL_UE_DESC_MAX) {
		fail(e, TRAIL_UE_DESC_MAX - 1, "Definition too long (at most 511 bytes)");
		return -E2BIG;
	}
	sp = memchr(s, ' ', len);
	nl = sp ? (size_t)(sp - s) : len;
	if (!nl)
		return fail(e, 0, "Missing event name (NAME [TYPE FIELD;...])");
	if (memchr(s, ':', nl))
		return fail(e, (size_t)((const char *)memchr(s, ':', nl) - s),
			    "No flags are defined (NAME:FLAGS)");
	if ((r = bad_ident(s, nl)) >= 0)
		return fail(e, (size_t)r, "Invalid event name (letters, digits and _)");
	if (nl > TRAIL_UE_NAME_MAX)
		return fail(e, TRAIL_UE_NAME_MAX, "Event name too long (at most 110 bytes)");
	at = keep(d, s, nl);
	d->name = (uint16_t)at;
	for (i = nl; i < len;) {
		const char *semi;
		size_t end;

		i++; /* the blank after the name, or the ';' */
		semi = memchr(s + i, ';', len - i);
		end = semi ? (size_t)(semi - s) : len;
		while (i < end && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
				   s[i] == '\v' || s[i] == '\f'))
			i++;
		if (i < end && (r = field(s, i, end, opts, d, e)))
			return r;
		i = end;
	}
	return 0;
}

int trail_ue_same(const struct trail_ue_def *a, const struct trail_ue_def *b)
{
	if (a->nfields != b->nfields)
		return 0;
	for (uint32_t i = 0; i < a->nfields; i++)
		if (strcmp(trail_ue_fname(a, i), trail_ue_fname(b, i)) ||
		    strcmp(trail_ue_ftype(a, i), trail_ue_ftype(b, i)) ||
		    (a->f[i].kind == TRAIL_UE_BLOB && a->f[i].size != b->f[i].size))
			return 0;
	return 1;
}

size_t trail_ue_format(const struct trail_ue_def *d, char *buf, size_t n)
{
	size_t o = 0;

#define PUT(...)                                                                                   \
	do {                                                                                       \
		int k_ = snprintf(buf + (o < n ? o : n), o < n ? n - o : 0, __VA_ARGS__);          \
		o += k_ > 0 ? (size_t)k_ : 0;                                                      \
	} while (0)
	PUT("%s", trail_ue_name(d));
	for (uint32_t i = 0; i < d->nfields; i++) {
		PUT("%s%s %s", i ? "; " : " ", trail_ue_ftype(d, i), trail_ue_fname(d, i));
		if (d->f[i].kind == TRAIL_UE_BLOB)
			PUT(" %u", d->f[i].size);
	}
#undef PUT
	return o;
}

size_t trail_ue_meta(const struct trail_ue_def *d, const char *provider, const char *name,
		     void *buf, size_t n)
{
	uint8_t *b = buf;
	struct trail_meta_hdr h = {TRAIL_META_MAGIC, 0, 1, (uint8_t)d->nfields};
	size_t o = sizeof(h), pl = strlen(provider) + 1, nl = strlen(name) + 1;

	if (d->nfields > 255 || o + pl + nl > n)
		return 0;
	memcpy(b + o, provider, pl);
	o += pl;
	memcpy(b + o, name, nl);
	o += nl;
	for (uint32_t i = 0; i < d->nfields; i++) {
		const struct trail_ue_field *f = &d->f[i];
		const char *fname = trail_ue_fname(d, i);
		size_t fl = strlen(fname);
		struct trail_meta_field mf = {.namelen = (uint8_t)fl};

		switch (f->kind) {
		case TRAIL_UE_INT:
			mf.kind = TRAIL_FK_INT;
			mf.size = (uint8_t)f->size;
			mf.flags = (uint8_t)((f->sign ? TRAIL_FF_SIGNED : 0) |
					     (f->boolean ? TRAIL_FF_BOOL : 0));
			break;
		case TRAIL_UE_FLOAT:
			mf.kind = TRAIL_FK_FLOAT;
			mf.size = (uint8_t)f->size;
			break;
		case TRAIL_UE_CHARS:
			mf.kind = TRAIL_FK_STRING;
			mf.size = 1;
			break;
		case TRAIL_UE_BLOB:
			mf.kind = TRAIL_FK_ARRAY;
			mf.size = 1;
			mf.flags = TRAIL_FF_HEX;
			mf.count = (uint16_t)f->size;
			break;
		case TRAIL_UE_LOC:
			mf.kind = f->str ? TRAIL_FK_STRING : TRAIL_FK_SEQ;
			mf.size = f->esize;
			mf.flags = (uint8_t)(f->sign ? TRAIL_FF_SIGNED : 0);
			break;
		}
		if (fl > 255 || o + sizeof(mf) + fl + 1 > n || o + sizeof(mf) + fl + 1 > 0xffff)
			return 0;
		memcpy(b + o, &mf, sizeof(mf));
		o += sizeof(mf);
		memcpy(b + o, fname, fl + 1);
		o += fl + 1;
	}
	h.size = (uint16_t)o;
	memcpy(b, &h, sizeof(h));
	return o;
}

size_t trail_ue_out_max(const struct trail_ue_def *d)
{
	size_t n = 0;

	for (uint32_t i = 0; i < d->nfields; i++) {
		const struct trail_ue_field *f = &d->f[i];

		if (f->kind == TRAIL_UE_CHARS)
			n += 2 + f->size;
		else if (f->kind == TRAIL_UE_LOC)
			n += 2 + (f->str ? TRAIL_STRING_MAX : (size_t)TRAIL_SEQ_MAX * f->esize);
		else
			n += f->size;
	}
	return n;
}

int trail_ue_convert(const struct trail_ue_def *d, const uint8_t *p, size_t len, uint8_t *out,
		     size_t *olen)
{
	size_t o = 0;

	if (len < d->min_size)
		return -EINVAL;
	for (uint32_t i = 0; i < d->nfields; i++) {
		const struct trail_ue_field *f = &d->f[i];
		const uint8_t *src = p + f->off;
		uint16_t n16;

		switch (f->kind) {
		case TRAIL_UE_CHARS: {
			const uint8_t *z = memchr(src, 0, f->size);

			n16 = (uint16_t)(z ? (size_t)(z - src) : f->size);
			memcpy(out + o, &n16, 2);
			memcpy(out + o + 2, src, n16);
			o += 2u + n16;
			break;
		}
		case TRAIL_UE_LOC: {
			uint32_t loc, at, sz;
			uint64_t start;

			memcpy(&loc, src, 4);
			at = loc & 0xffff;
			sz = loc >> 16;
			if (f->rel)
				start = (uint64_t)f->off + 4 + at;
			else if (at < TRAIL_UE_LOC_OFF) /* in the kernel's header */
				return -EFAULT;
			else
				start = at - TRAIL_UE_LOC_OFF;
			if (start + sz > len)
				return -EFAULT;
			if (f->str) {
				const uint8_t *z;

				if (!sz || p[start + sz - 1] != 0)
					return -EFAULT;
				z = memchr(p + start, 0, sz);
				sz = (uint32_t)(z - (p + start));
				if (sz > TRAIL_STRING_MAX)
					sz = TRAIL_STRING_MAX;
			} else {
				sz /= f->esize;
				if (sz > TRAIL_SEQ_MAX)
					sz = TRAIL_SEQ_MAX;
				sz *= f->esize;
			}
			n16 = (uint16_t)(f->str ? sz : sz / f->esize);
			memcpy(out + o, &n16, 2);
			memcpy(out + o + 2, p + start, sz);
			o += 2u + sz;
			break;
		}
		default:
			memcpy(out + o, src, f->size);
			o += f->size;
			break;
		}
	}
	*olen = o;
	return 0;
}
