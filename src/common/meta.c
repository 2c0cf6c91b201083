/* SPDX-License-Identifier: MIT */
/* meta.c - parsing event description blobs; see meta.h. */
#include "meta.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* an identifier of at most 128 bytes; with dots, '.' too past the first
 * byte (an event name: the kernel's user_events_multi:NAME.<id>) */
static int is_ident(const char *s, size_t len, int dots)
{
	if (!len || len > 128)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    c == '_';
		if (!alpha && !(i && ((c >= '0' && c <= '9') || (dots && c == '.'))))
			return 0;
	}
	return 1;
}

/* a NUL-terminated identifier at p[*off], inside size */
static const char *take_name(const uint8_t *p, uint32_t size, uint32_t *off,
			     size_t want_len, int dots)
{
	const char *s = (const char *)p + *off;
	const void *z;
	size_t len;

	if (*off >= size)
		return NULL;
	z = memchr(s, 0, size - *off);
	if (!z)
		return NULL;
	len = (size_t)((const char *)z - s);
	if (want_len != (size_t)-1 && len != want_len)
		return NULL;
	if (!is_ident(s, len, dots))
		return NULL;
	*off += (uint32_t)len + 1;
	return s;
}

int trail__meta_parse(const void *blob, size_t avail, struct trail_meta *m,
		      const char **why)
{
	const uint8_t *p = blob;
	struct trail_meta_hdr h;
	uint32_t off = sizeof(h);

	*why = "event description truncated";
	if (avail < sizeof(h))
		return -EPROTO;
	memcpy(&h, p, sizeof(h));
	*why = "bad event description magic";
	if (h.magic != TRAIL_META_MAGIC)
		return -EPROTO;
	*why = "event description size out of bounds";
	if (h.size < sizeof(h) + 4 || h.size > avail)
		return -EPROTO;
	*why = "unsupported event description version";
	if (h.version != 1)
		return -EPROTO;
	m->size = h.size;
	m->nfields = h.nfields;
	m->fixed_len = 0;
	m->variable = 0;
	*why = "bad provider name";
	if (!(m->provider = take_name(p, h.size, &off, (size_t)-1, 0)))
		return -EPROTO;
	*why = "bad event name";
	if (!(m->name = take_name(p, h.size, &off, (size_t)-1, 1)))
		return -EPROTO;
	for (uint32_t i = 0; i < h.nfields; i++) {
		struct trail_meta_field mf;
		struct trail_field *f = &m->fields[i];
		int sz_ok;

		*why = "field description truncated";
		if (off + sizeof(mf) > h.size)
			return -EPROTO;
		memcpy(&mf, p + off, sizeof(mf));
		off += sizeof(mf);
		*why = "bad field name";
		if (!(f->name = take_name(p, h.size, &off, mf.namelen, 0)))
			return -EPROTO;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(m->fields[j].name, f->name)) {
				*why = "duplicate field name";
				return -EPROTO;
			}
		f->kind = mf.kind;
		f->size = mf.size;
		f->flags = mf.flags;
		f->count = mf.count;
		sz_ok = mf.size == 1 || mf.size == 2 || mf.size == 4 ||
			mf.size == 8;
		*why = "bad field type";
		switch (mf.kind) {
		case TRAIL_FK_INT:
			if (!sz_ok || mf.count)
				return -EPROTO;
			m->fixed_len += mf.size;
			break;
		case TRAIL_FK_FLOAT:
			if ((mf.size != 4 && mf.size != 8) || mf.count)
				return -EPROTO;
			m->fixed_len += mf.size;
			break;
		case TRAIL_FK_STRING:
			if (mf.size != 1 || mf.count)
				return -EPROTO;
			m->variable = 1;
			break;
		case TRAIL_FK_ARRAY:
			if (!sz_ok || !mf.count)
				return -EPROTO;
			m->fixed_len += (uint32_t)mf.size * mf.count;
			break;
		case TRAIL_FK_SEQ:
			if (!sz_ok || mf.count)
				return -EPROTO;
			m->variable = 1;
			break;
		default:
			return -EPROTO;
		}
	}
	/* the struct may end with padding only */
	*why = "trailing bytes in event description";
	for (; off < h.size; off++)
		if (p[off])
			return -EPROTO;
	*why = NULL;
	return 0;
}

uint32_t trail__meta_hash(const void *blob, size_t size)
{
	const uint8_t *p = blob;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < size; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

int trail__payload_len(const struct trail_meta *m, const uint8_t *p,
		       size_t avail, size_t *len)
{
	size_t off = 0;

	if (!m->variable) {
		if (m->fixed_len > avail)
			return -EPROTO;
		*len = m->fixed_len;
		return 0;
	}
	for (uint32_t i = 0; i < m->nfields; i++) {
		const struct trail_field *f = &m->fields[i];
		uint16_t n;

		switch (f->kind) {
		case TRAIL_FK_INT:
		case TRAIL_FK_FLOAT:
			off += f->size;
			break;
		case TRAIL_FK_ARRAY:
			off += (size_t)f->size * f->count;
			break;
		case TRAIL_FK_STRING:
			if (off + 2 > avail)
				return -EPROTO;
			memcpy(&n, p + off, 2);
			off += 2;
			if (n == TRAIL_STRING_NULL)
				break;
			if (n > TRAIL_STRING_MAX)
				return -EPROTO;
			off += n;
			break;
		case TRAIL_FK_SEQ:
			if (off + 2 > avail)
				return -EPROTO;
			memcpy(&n, p + off, 2);
			off += 2;
			if (n > TRAIL_SEQ_MAX)
				return -EPROTO;
			off += (size_t)n * f->size;
			break;
		}
		if (off > avail)
			return -EPROTO;
	}
	*len = off;
	return 0;
}

const char *trail__field_type(const struct trail_field *f, char *buf, size_t n)
{
	static const char *const sint[] = {"", "s8", "s16", "", "s32", "", "", "", "s64"};
	static const char *const uint[] = {"", "u8", "u16", "", "u32", "", "", "", "u64"};
	unsigned sz = f->size <= 8 ? f->size : 0;
	const char *base = (f->flags & TRAIL_FF_SIGNED) ? sint[sz] : uint[sz];

	switch (f->kind) {
	case TRAIL_FK_INT:
		if (f->flags & TRAIL_FF_BOOL)
			return "bool";
		if (f->flags & TRAIL_FF_PTR)
			return "void *";
		return base;
	case TRAIL_FK_FLOAT:
		return f->size == 4 ? "float" : "double";
	case TRAIL_FK_STRING:
		return "char[]";
	case TRAIL_FK_ARRAY:
		snprintf(buf, n, "%s[%u]", base, f->count);
		return buf;
	case TRAIL_FK_SEQ:
		snprintf(buf, n, "%s[]", base);
		return buf;
	}
	return "?";
}
