/* SPDX-License-Identifier: MIT */
/*
 * test-meta.c - event description blobs (include/trail/abi.h) and their
 * parser (src/common/meta.c): golden blobs built byte by byte for every
 * field kind, a table of hostile blobs each refused with its reason, payload
 * measurement (trail__payload_len) including every truncation, type names,
 * the FNV-1a identity hash, and finally blobs made by the real TRAIL_EVENT
 * macro, found by walking this program's own trail_meta section, checked
 * against the declaration and against the payload the macro packs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trail/trail.h>

#include "check.h"
#include "common/meta.h"

/* An exact-size heap copy, so ASan sees any read past `n`. */
static uint8_t *dup_exact(const void *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	if (!q)
		abort();
	if (n)
		memcpy(q, p, n);
	return q;
}

static int parse_exact(const void *blob, size_t avail, struct trail_meta *m,
		       const char **why)
{
	uint8_t *q = dup_exact(blob, avail);
	int rc = trail__meta_parse(q, avail, m, why);

	/* m points into q; callers of this helper only look at rc and why */
	free(q);
	return rc;
}

/* ------------------------------------------------------------------------
 * Golden blobs. Header: magic "TRM1" (0x314d5254 little-endian), u16 size,
 * u8 version, u8 nfields; then provider and event names with their NULs;
 * then per field: kind, size, flags, namelen, u16 count, name, NUL.
 */

/* app:ints - every integer flavour: 66 bytes, fixed payload of 24 */
static const uint8_t blob_ints[] = {
	0x54, 0x52, 0x4d, 0x31,      /* magic */
	66, 0,                       /* size */
	1,                           /* version */
	6,                           /* nfields */
	'a', 'p', 'p', 0,            /* provider */
	'i', 'n', 't', 's', 0,       /* event */
	1, 1, 0x01, 1, 0, 0,         /* INT, 1 byte, SIGNED, namelen 1, count 0 */
	'a', 0,                      /*   a: s8 */
	1, 2, 0x00, 1, 0, 0,         /* INT, 2 bytes, unsigned */
	'b', 0,                      /*   b: u16 */
	1, 4, 0x02, 1, 0, 0,         /* INT, 4 bytes, HEX */
	'c', 0,                      /*   c: u32 shown in hex */
	1, 8, 0x01, 1, 0, 0,         /* INT, 8 bytes, SIGNED */
	'd', 0,                      /*   d: s64 */
	1, 1, 0x04, 2, 0, 0,         /* INT, 1 byte, BOOL, namelen 2 */
	'o', 'k', 0,                 /*   ok: bool */
	1, 8, 0x0a, 1, 0, 0,         /* INT, 8 bytes, PTR|HEX */
	'p', 0,                      /*   p: pointer */
};

/* app:flt - float and double: 32 bytes, fixed payload of 12 */
static const uint8_t blob_flt[] = {
	0x54, 0x52, 0x4d, 0x31,      /* magic */
	32, 0,                       /* size */
	1,                           /* version */
	2,                           /* nfields */
	'a', 'p', 'p', 0,            /* provider */
	'f', 'l', 't', 0,            /* event */
	2, 4, 0x01, 1, 0, 0,         /* FLOAT, 4 bytes (SIGNED, as the macro sets) */
	'f', 0,                      /*   f: float */
	2, 8, 0x01, 1, 0, 0,         /* FLOAT, 8 bytes */
	'g', 0,                      /*   g: double */
};

/* app:vars - string, fixed array, sequence: 43 bytes, variable */
static const uint8_t blob_vars[] = {
	0x54, 0x52, 0x4d, 0x31,      /* magic */
	43, 0,                       /* size */
	1,                           /* version */
	3,                           /* nfields */
	'a', 'p', 'p', 0,            /* provider */
	'v', 'a', 'r', 's', 0,       /* event */
	3, 1, 0x00, 1, 0, 0,         /* STRING, element size 1 */
	's', 0,                      /*   s: u16 len + bytes */
	4, 2, 0x00, 3, 3, 0,         /* ARRAY, u16 elements, namelen 3, count 3 */
	'a', 'r', 'r', 0,            /*   arr: u16[3] */
	5, 4, 0x01, 1, 0, 0,         /* SEQ, s32 elements, count 0 */
	'q', 0,                      /*   q: u16 count + elements */
};

/* app:nop - no fields: 16 bytes, empty payload */
static const uint8_t blob_nop[] = {
	0x54, 0x52, 0x4d, 0x31,      /* magic */
	16, 0,                       /* size */
	1,                           /* version */
	0,                           /* nfields */
	'a', 'p', 'p', 0,            /* provider */
	'n', 'o', 'p', 0,            /* event */
};

struct want_field {
	const char *name;
	uint8_t kind, size, flags;
	uint16_t count;
	const char *type; /* trail__field_type */
};

static void check_fields(const struct trail_meta *m, const struct want_field *w,
			 size_t n)
{
	char buf[64];

	CHECK_EQ(m->nfields, n);
	for (size_t i = 0; i < n && i < m->nfields; i++) {
		const struct trail_field *f = &m->fields[i];

		CHECK_STR(f->name, w[i].name);
		CHECK_EQ(f->kind, w[i].kind);
		CHECK_EQ(f->size, w[i].size);
		CHECK_EQ(f->flags, w[i].flags);
		CHECK_EQ(f->count, w[i].count);
		CHECK_STR(trail__field_type(f, buf, sizeof(buf)), w[i].type);
	}
}

TEST(meta_golden_ints)
{
	static const struct want_field w[] = {
		{"a", TRAIL_FK_INT, 1, TRAIL_FF_SIGNED, 0, "s8"},
		{"b", TRAIL_FK_INT, 2, 0, 0, "u16"},
		{"c", TRAIL_FK_INT, 4, TRAIL_FF_HEX, 0, "u32"},
		{"d", TRAIL_FK_INT, 8, TRAIL_FF_SIGNED, 0, "s64"},
		{"ok", TRAIL_FK_INT, 1, TRAIL_FF_BOOL, 0, "bool"},
		{"p", TRAIL_FK_INT, 8, TRAIL_FF_PTR | TRAIL_FF_HEX, 0, "void *"},
	};
	struct trail_meta m;
	const char *why = "unset";

	CHECK_EQ(sizeof(blob_ints), 66); /* the golden bytes themselves */
	CHECK_EQ(trail__meta_parse(blob_ints, sizeof(blob_ints), &m, &why), 0);
	CHECK(why == NULL);
	CHECK_STR(m.provider, "app");
	CHECK_STR(m.name, "ints");
	/* names point into the blob, not into a copy */
	CHECK(m.provider == (const char *)blob_ints + 8);
	CHECK(m.name == (const char *)blob_ints + 12);
	CHECK_EQ(m.size, 66);
	CHECK_EQ(m.fixed_len, 1 + 2 + 4 + 8 + 1 + 8);
	CHECK_EQ(m.variable, 0);
	check_fields(&m, w, 6);
}

TEST(meta_golden_floats)
{
	static const struct want_field w[] = {
		{"f", TRAIL_FK_FLOAT, 4, TRAIL_FF_SIGNED, 0, "float"},
		{"g", TRAIL_FK_FLOAT, 8, TRAIL_FF_SIGNED, 0, "double"},
	};
	struct trail_meta m;
	const char *why;

	CHECK_EQ(sizeof(blob_flt), 32);
	CHECK_EQ(trail__meta_parse(blob_flt, sizeof(blob_flt), &m, &why), 0);
	CHECK_STR(m.name, "flt");
	CHECK_EQ(m.size, 32);
	CHECK_EQ(m.fixed_len, 12);
	CHECK_EQ(m.variable, 0);
	check_fields(&m, w, 2);
}

TEST(meta_golden_variable)
{
	static const struct want_field w[] = {
		{"s", TRAIL_FK_STRING, 1, 0, 0, "char[]"},
		{"arr", TRAIL_FK_ARRAY, 2, 0, 3, "u16[3]"},
		{"q", TRAIL_FK_SEQ, 4, TRAIL_FF_SIGNED, 0, "s32[]"},
	};
	struct trail_meta m;
	const char *why;

	CHECK_EQ(sizeof(blob_vars), 43);
	CHECK_EQ(trail__meta_parse(blob_vars, sizeof(blob_vars), &m, &why), 0);
	CHECK_STR(m.provider, "app");
	CHECK_STR(m.name, "vars");
	CHECK_EQ(m.size, 43);
	CHECK_EQ(m.variable, 1);
	check_fields(&m, w, 3);
}

TEST(meta_golden_no_fields)
{
	struct trail_meta m;
	const char *why;
	size_t len = 99;

	CHECK_EQ(trail__meta_parse(blob_nop, sizeof(blob_nop), &m, &why), 0);
	CHECK_STR(m.name, "nop");
	CHECK_EQ(m.nfields, 0);
	CHECK_EQ(m.fixed_len, 0);
	CHECK_EQ(m.variable, 0);
	CHECK_EQ(trail__payload_len(&m, (const uint8_t *)"", 0, &len), 0);
	CHECK_EQ(len, 0);
}

TEST(meta_blob_in_a_bigger_buffer)
{
	/* avail beyond the blob (the next blob of a section) is not read as
	 * part of it, whatever it holds */
	uint8_t buf[sizeof(blob_ints) + 8];
	struct trail_meta m;
	const char *why;

	memcpy(buf, blob_ints, sizeof(blob_ints));
	memset(buf + sizeof(blob_ints), 'X', 8);
	CHECK_EQ(trail__meta_parse(buf, sizeof(buf), &m, &why), 0);
	CHECK_EQ(m.size, sizeof(blob_ints));
	CHECK_EQ(m.nfields, 6);
}

/* ------------------------------------------------------------------------
 * Hostile blobs: a valid base mutated a few bytes at a time.
 *
 *   base "p:e", one field x (INT, 4 bytes), 20 bytes, then 4 zero bytes:
 *   0-3 magic  4-5 size  6 version  7 nfields  8-9 "p"  10-11 "e"
 *   12 kind  13 size  14 flags  15 namelen  16-17 count  18-19 "x"
 */
static const uint8_t base_blob[24] = {
	0x54, 0x52, 0x4d, 0x31, /* magic */
	20, 0,                  /* size */
	1,                      /* version */
	1,                      /* nfields */
	'p', 0,                 /* provider */
	'e', 0,                 /* event */
	1, 4, 0, 1, 0, 0,       /* INT, 4 bytes, no flags, namelen 1, count 0 */
	'x', 0,                 /* field name */
	0, 0, 0, 0,             /* beyond the blob: zeros */
};

static const struct bad_row {
	const char *what;
	struct {
		int off, val;
	} mod[3];
	int nmod;
	size_t avail;
	const char *why; /* NULL: must parse */
} bad_rows[] = {
	{"valid base", {{0, 0}}, 0, 20, NULL},
	{"valid, more available", {{0, 0}}, 0, 24, NULL},
	{"trailing zero padding", {{4, 24}}, 1, 24, NULL},
	{"FLOAT 4", {{12, 2}, {13, 4}}, 2, 20, NULL},
	{"FLOAT 8", {{12, 2}, {13, 8}}, 2, 20, NULL},
	{"STRING 1", {{12, 3}, {13, 1}}, 2, 20, NULL},
	{"ARRAY count 3", {{12, 4}, {13, 4}, {16, 3}}, 3, 20, NULL},
	{"ARRAY count 65535", {{12, 4}, {16, 0xff}, {17, 0xff}}, 3, 20, NULL},
	{"SEQ", {{12, 5}, {13, 8}}, 2, 20, NULL},
	{"field name _x", {{18, '_'}}, 1, 20, NULL},

	{"no bytes", {{0, 0}}, 0, 0, "event description truncated"},
	{"shorter than a header", {{0, 0}}, 0, 7, "event description truncated"},
	{"bad magic (first byte)", {{0, 0x55}}, 1, 20, "bad event description magic"},
	{"bad magic (last byte)", {{3, 0x32}}, 1, 20, "bad event description magic"},
	{"size 4 < header", {{4, 4}}, 1, 20, "event description size out of bounds"},
	{"size 8: header only", {{4, 8}}, 1, 20, "event description size out of bounds"},
	{"size 0", {{4, 0}}, 1, 20, "event description size out of bounds"},
	{"size > avail", {{4, 21}}, 1, 20, "event description size out of bounds"},
	{"size 0xffff", {{4, 0xff}, {5, 0xff}}, 2, 24, "event description size out of bounds"},
	{"version 0", {{6, 0}}, 1, 20, "unsupported event description version"},
	{"version 2", {{6, 2}}, 1, 20, "unsupported event description version"},
	{"provider starts with a digit", {{8, '1'}}, 1, 20, "bad provider name"},
	{"provider with '-'", {{8, '-'}}, 1, 20, "bad provider name"},
	{"empty provider", {{8, 0}}, 1, 20, "bad provider name"},
	{"event name with a space", {{10, ' '}}, 1, 20, "bad event name"},
	{"empty event name", {{10, 0}}, 1, 20, "bad event name"},
	{"event name runs to the end", {{4, 12}, {7, 0}, {11, 'f'}}, 3, 20, "bad event name"},
	{"field name starts with a digit", {{18, '9'}}, 1, 20, "bad field name"},
	{"field name with '.'", {{18, '.'}}, 1, 20, "bad field name"},
	{"namelen 2 for \"x\"", {{15, 2}}, 1, 20, "bad field name"},
	{"namelen 0", {{15, 0}}, 1, 20, "bad field name"},
	{"nfields 2, one present", {{7, 2}}, 1, 20, "field description truncated"},
	{"nfields 255, one present", {{7, 255}}, 1, 24, "field description truncated"},
	{"nfields 1, no field", {{4, 12}}, 1, 20, "field description truncated"},
	{"kind 0", {{12, 0}}, 1, 20, "bad field type"},
	{"kind 6", {{12, 6}}, 1, 20, "bad field type"},
	{"kind 255", {{12, 255}}, 1, 20, "bad field type"},
	{"INT size 3", {{13, 3}}, 1, 20, "bad field type"},
	{"INT size 0", {{13, 0}}, 1, 20, "bad field type"},
	{"INT size 16", {{13, 16}}, 1, 20, "bad field type"},
	{"INT with a count", {{16, 1}}, 1, 20, "bad field type"},
	{"FLOAT size 2", {{12, 2}, {13, 2}}, 2, 20, "bad field type"},
	{"FLOAT size 1", {{12, 2}, {13, 1}}, 2, 20, "bad field type"},
	{"FLOAT with a count", {{12, 2}, {13, 8}, {16, 2}}, 3, 20, "bad field type"},
	{"STRING size 2", {{12, 3}, {13, 2}}, 2, 20, "bad field type"},
	{"STRING with a count", {{12, 3}, {13, 1}, {16, 1}}, 3, 20, "bad field type"},
	{"ARRAY count 0", {{12, 4}, {13, 4}}, 2, 20, "bad field type"},
	{"ARRAY size 3", {{12, 4}, {13, 3}, {16, 3}}, 3, 20, "bad field type"},
	{"SEQ with a count", {{12, 5}, {13, 4}, {16, 1}}, 3, 20, "bad field type"},
	{"SEQ size 5", {{12, 5}, {13, 5}}, 2, 20, "bad field type"},
	{"trailing non-zero byte", {{4, 21}, {20, 'Z'}}, 2, 24, "trailing bytes in event description"},
	{"non-zero after padding", {{4, 24}, {23, 1}}, 2, 24, "trailing bytes in event description"},
	{"field left over (nfields 0)", {{7, 0}}, 1, 20, "trailing bytes in event description"},
};

TEST(meta_hostile_table)
{
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const struct bad_row *b = &bad_rows[i];
		uint8_t buf[sizeof(base_blob)];
		struct trail_meta m;
		const char *why = NULL;
		int rc;

		memcpy(buf, base_blob, sizeof(buf));
		for (int k = 0; k < b->nmod; k++)
			buf[b->mod[k].off] = (uint8_t)b->mod[k].val;
		rc = parse_exact(buf, b->avail, &m, &why);
		if (!b->why) {
			if (rc) {
				fprintf(stderr, "  \"%s\": refused (%s)\n", b->what, why);
				check_failures++;
			}
			continue;
		}
		if (rc != -EPROTO || !why || strcmp(why, b->why)) {
			fprintf(stderr, "  \"%s\": rc %d, \"%s\", want -EPROTO, \"%s\"\n",
				b->what, rc, why ? why : "(null)", b->why);
			check_failures++;
		}
	}
}

TEST(meta_duplicate_field_names)
{
	static const uint8_t dup[] = {
		0x54, 0x52, 0x4d, 0x31, /* magic */
		28, 0,                  /* size */
		1,                      /* version */
		2,                      /* nfields */
		'p', 0, 'e', 0,         /* provider, event */
		1, 4, 0, 1, 0, 0, 'x', 0, /* x: u32 */
		1, 8, 0, 1, 0, 0, 'x', 0, /* x again: u64 */
	};
	static const uint8_t prefix[] = {
		0x54, 0x52, 0x4d, 0x31, /* magic */
		29, 0,                  /* size */
		1,                      /* version */
		2,                      /* nfields */
		'p', 0, 'e', 0,         /* provider, event */
		1, 4, 0, 1, 0, 0, 'x', 0,      /* x */
		1, 8, 0, 2, 0, 0, 'x', 'y', 0, /* xy: a different name */
	};
	struct trail_meta m;
	const char *why = NULL;

	CHECK_EQ(parse_exact(dup, sizeof(dup), &m, &why), -EPROTO);
	CHECK_STR(why, "duplicate field name");
	CHECK_EQ(parse_exact(prefix, sizeof(prefix), &m, &why), 0);
}

/* Build "PROV:EV" with one u8 field NAME into out; returns its size. */
static size_t mk_blob(uint8_t *out, const char *prov, const char *ev,
		      const char *field)
{
	struct trail_meta_hdr h = {TRAIL_META_MAGIC, 0, 1, 1};
	struct trail_meta_field f = {TRAIL_FK_INT, 1, 0, (uint8_t)strlen(field), 0};
	size_t off = sizeof(h);

	memcpy(out + off, prov, strlen(prov) + 1);
	off += strlen(prov) + 1;
	memcpy(out + off, ev, strlen(ev) + 1);
	off += strlen(ev) + 1;
	memcpy(out + off, &f, sizeof(f));
	off += sizeof(f);
	memcpy(out + off, field, strlen(field) + 1);
	off += strlen(field) + 1;
	h.size = (uint16_t)off;
	memcpy(out, &h, sizeof(h));
	return off;
}

TEST(meta_identifier_limits)
{
	/* identifiers: [A-Za-z_][A-Za-z0-9_]*, at most 128 bytes */
	static uint8_t buf[1024];
	char n128[129], n129[130];
	struct trail_meta m;
	const char *why;
	size_t n;

	memset(n128, 'a', 128);
	n128[128] = 0;
	memset(n129, 'b', 129);
	n129[129] = 0;

	n = mk_blob(buf, n128, "e", "x");
	CHECK_EQ(parse_exact(buf, n, &m, &why), 0);
	n = mk_blob(buf, n129, "e", "x");
	CHECK_EQ(parse_exact(buf, n, &m, &why), -EPROTO);
	CHECK_STR(why, "bad provider name");
	n = mk_blob(buf, "p", n128, "x");
	CHECK_EQ(parse_exact(buf, n, &m, &why), 0);
	n = mk_blob(buf, "p", n129, "x");
	CHECK_EQ(parse_exact(buf, n, &m, &why), -EPROTO);
	CHECK_STR(why, "bad event name");
	n = mk_blob(buf, "p", "e", n128);
	CHECK_EQ(parse_exact(buf, n, &m, &why), 0);
	n = mk_blob(buf, "p", "e", n129);
	CHECK_EQ(parse_exact(buf, n, &m, &why), -EPROTO);
	CHECK_STR(why, "bad field name");
	n = mk_blob(buf, "_Ab9", "Z_0", "_");
	CHECK_EQ(parse_exact(buf, n, &m, &why), 0);
	n = mk_blob(buf, "p", "e", "x\x80");
	CHECK_EQ(parse_exact(buf, n, &m, &why), -EPROTO);
}

TEST(meta_every_shortened_blob_refused)
{
	/* the golden blob cut at every length, once with its size field
	 * left alone (it then exceeds what is available) and once with the
	 * size field claiming the cut length: never accepted, never a read
	 * past the cut (ASan) */
	static const uint8_t *const blobs[] = {blob_ints, blob_flt, blob_vars};
	static const size_t sizes[] = {sizeof(blob_ints), sizeof(blob_flt),
				       sizeof(blob_vars)};

	for (int b = 0; b < 3; b++) {
		for (size_t cut = 0; cut < sizes[b]; cut++) {
			uint8_t buf[128];
			struct trail_meta m;
			const char *why = NULL;

			memcpy(buf, blobs[b], cut);
			if (parse_exact(buf, cut, &m, &why) != -EPROTO) {
				fprintf(stderr, "  blob %d cut %zu accepted\n", b, cut);
				check_failures++;
			}
			if (cut >= 6) {
				buf[4] = (uint8_t)cut;
				buf[5] = 0;
			}
			if (parse_exact(buf, cut, &m, &why) != -EPROTO || !why) {
				fprintf(stderr, "  blob %d resized to %zu accepted\n", b, cut);
				check_failures++;
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * trail__payload_len
 */

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

/* Every strictly shorter prefix of a valid payload is refused. */
static void check_all_cuts(const struct trail_meta *m, const uint8_t *p,
			   size_t len)
{
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *q = dup_exact(p, cut);
		size_t got = 12345;

		if (trail__payload_len(m, q, cut, &got) != -EPROTO) {
			fprintf(stderr, "  payload of %zu cut at %zu accepted (len %zu)\n",
				len, cut, got);
			check_failures++;
		}
		free(q);
	}
}

TEST(payload_fixed)
{
	struct trail_meta m;
	const char *why;
	uint8_t p[64] = {0};
	size_t len = 0;

	CHECK_EQ(trail__meta_parse(blob_ints, sizeof(blob_ints), &m, &why), 0);
	CHECK_EQ(trail__payload_len(&m, p, 24, &len), 0);
	CHECK_EQ(len, 24);
	/* bytes after the payload (the next record) do not count */
	CHECK_EQ(trail__payload_len(&m, p, 64, &len), 0);
	CHECK_EQ(len, 24);
	check_all_cuts(&m, p, 24);

	CHECK_EQ(trail__meta_parse(blob_flt, sizeof(blob_flt), &m, &why), 0);
	CHECK_EQ(trail__payload_len(&m, p, 12, &len), 0);
	CHECK_EQ(len, 12);
	check_all_cuts(&m, p, 12);
}

TEST(payload_variable)
{
	/* app:vars is s (string), arr (u16[3]), q (s32 sequence) */
	struct trail_meta m;
	const char *why;
	uint8_t p[64];
	size_t len = 0, n = 0;

	CHECK_EQ(trail__meta_parse(blob_vars, sizeof(blob_vars), &m, &why), 0);

	put16(p + n, 3);             /* s: length 3 */
	memcpy(p + n + 2, "abc", 3); /*    bytes, no NUL */
	n += 5;
	memset(p + n, 0x11, 6);      /* arr: 3 x u16 */
	n += 6;
	put16(p + n, 2);             /* q: count 2 */
	memset(p + n + 2, 0x22, 8);  /*    2 x s32 */
	n += 10;
	CHECK_EQ(n, 21);
	CHECK_EQ(trail__payload_len(&m, p, n, &len), 0);
	CHECK_EQ(len, 21);
	CHECK_EQ(trail__payload_len(&m, p, sizeof(p), &len), 0);
	CHECK_EQ(len, 21);
	check_all_cuts(&m, p, n);

	/* NULL string: the 0xffff marker and no bytes; empty sequence */
	n = 0;
	put16(p + n, TRAIL_STRING_NULL); /* s: NULL */
	n += 2;
	memset(p + n, 0, 6);             /* arr */
	n += 6;
	put16(p + n, 0);                 /* q: count 0 */
	n += 2;
	CHECK_EQ(trail__payload_len(&m, p, n, &len), 0);
	CHECK_EQ(len, 10);
	check_all_cuts(&m, p, n);

	/* empty string */
	put16(p, 0);
	CHECK_EQ(trail__payload_len(&m, p, n, &len), 0);
	CHECK_EQ(len, 10);
}

TEST(payload_limits)
{
	/* a string is kept up to 4095 bytes, a sequence up to 4096
	 * elements; beyond that the payload is refused even when the bytes
	 * are there */
	static uint8_t p[2 + 0xffff + 6 + 2 + 4 * 5000];
	struct trail_meta m;
	const char *why;
	size_t len;

	CHECK_EQ(trail__meta_parse(blob_vars, sizeof(blob_vars), &m, &why), 0);
	memset(p, 0, sizeof(p));

	put16(p, TRAIL_STRING_MAX); /* s: 4095 bytes */
	put16(p + 2 + 4095 + 6, 0); /* q: empty */
	CHECK_EQ(trail__payload_len(&m, p, sizeof(p), &len), 0);
	CHECK_EQ(len, 2 + 4095 + 6 + 2);

	put16(p, TRAIL_STRING_MAX + 1); /* 4096: over the limit */
	CHECK_EQ(trail__payload_len(&m, p, sizeof(p), &len), -EPROTO);
	put16(p, 0xfffe); /* largest non-NULL length */
	CHECK_EQ(trail__payload_len(&m, p, sizeof(p), &len), -EPROTO);

	put16(p, 0);             /* s: empty */
	put16(p + 2 + 6, 4096);  /* q: 4096 elements, allowed */
	CHECK_EQ(trail__payload_len(&m, p, sizeof(p), &len), 0);
	CHECK_EQ(len, 2 + 6 + 2 + 4096 * 4);
	put16(p + 2 + 6, 4097);  /* one too many */
	CHECK_EQ(trail__payload_len(&m, p, sizeof(p), &len), -EPROTO);
	put16(p + 2 + 6, 0xffff);
	CHECK_EQ(trail__payload_len(&m, p, sizeof(p), &len), -EPROTO);
}

/* ------------------------------------------------------------------------
 * Identity hash: FNV-1a, 32 bits.
 */
TEST(meta_hash)
{
	uint8_t copy[sizeof(blob_ints)];

	/* published FNV-1a test vectors */
	CHECK_EQ(trail__meta_hash("", 0), 0x811c9dc5u);
	CHECK_EQ(trail__meta_hash("a", 1), 0xe40c292cu);
	CHECK_EQ(trail__meta_hash("foobar", 6), 0xbf9cf968u);
	/* same bytes, same identity; any layout change, another one */
	memcpy(copy, blob_ints, sizeof(copy));
	CHECK_EQ(trail__meta_hash(copy, sizeof(copy)),
		 trail__meta_hash(blob_ints, sizeof(blob_ints)));
	copy[18] ^= 1; /* field a's size byte: 8 + "app" + "ints" + kind */
	CHECK(trail__meta_hash(copy, sizeof(copy)) !=
	      trail__meta_hash(blob_ints, sizeof(blob_ints)));
}

/* ------------------------------------------------------------------------
 * Blobs made by the real macros. trail() calls libtrail's trail__write,
 * which this program provides itself (there is no libtrail here).
 */
TRAIL_EVENT(tmeta, kinds,
	    TRAIL_ARGS(int8_t, a, uint16_t, b, int32_t, c, uint64_t, d, int, flag,
		       const void *, ptr, float, f, double, g, const char *, s,
		       const uint16_t *, arr, const int32_t *, q, size_t, nq),
	    TRAIL_FIELDS(trail_field_int(a) trail_field_int(b) trail_field_hex(c)
			 trail_field_int(d) trail_field_bool(flag)
			 trail_field_ptr(ptr) trail_field_float(f)
			 trail_field_float(g) trail_field_string(s)
			 trail_field_array(arr, 3) trail_field_seq(q, nq)))

TRAIL_EVENT(tmeta, nothing, TRAIL_ARGS(), TRAIL_FIELDS())

TRAIL_EVENT(tmeta, hexes,
	    TRAIL_ARGS(const uint8_t *, bytes, const uint64_t *, words, unsigned, n),
	    TRAIL_FIELDS(trail_field_array_hex(bytes, 4)
			 trail_field_seq_hex(w, words, n)))

extern const char __start_trail_meta[] __attribute__((visibility("hidden")));
extern const char __stop_trail_meta[] __attribute__((visibility("hidden")));

static struct trail_event *got_ev;
static uint8_t got_payload[65536];
static uint32_t got_len;
static int got_calls;

void trail__write(struct trail_event *ev, const void *payload, uint32_t len)
{
	got_ev = ev;
	got_len = len;
	got_calls++;
	if (len <= sizeof(got_payload))
		memcpy(got_payload, payload, len);
}

/* The blob of provider:name in this program's trail_meta section. */
static const uint8_t *find_blob(const char *prov, const char *name,
				struct trail_meta *out, int *nblobs)
{
	const uint8_t *p = (const uint8_t *)__start_trail_meta;
	const uint8_t *end = (const uint8_t *)__stop_trail_meta;
	const uint8_t *found = NULL;

	*nblobs = 0;
	while (p < end) {
		struct trail_meta m;
		const char *why;

		if (!*p) { /* alignment padding */
			p++;
			continue;
		}
		if (trail__meta_parse(p, (size_t)(end - p), &m, &why)) {
			fprintf(stderr, "  trail_meta+%td: %s\n",
				p - (const uint8_t *)__start_trail_meta, why);
			check_failures++;
			return NULL;
		}
		(*nblobs)++;
		if (!strcmp(m.provider, prov) && !strcmp(m.name, name)) {
			CHECK(found == NULL); /* one blob per event and TU */
			found = p;
			*out = m;
		}
		p += m.size;
	}
	return found;
}

TEST(macro_blob_matches_declaration)
{
	static const struct want_field w[] = {
		{"a", TRAIL_FK_INT, 1, TRAIL_FF_SIGNED, 0, "s8"},
		{"b", TRAIL_FK_INT, 2, 0, 0, "u16"},
		{"c", TRAIL_FK_INT, 4, TRAIL_FF_SIGNED | TRAIL_FF_HEX, 0, "s32"},
		{"d", TRAIL_FK_INT, 8, 0, 0, "u64"},
		{"flag", TRAIL_FK_INT, 1, TRAIL_FF_BOOL, 0, "bool"},
		{"ptr", TRAIL_FK_INT, 8, TRAIL_FF_PTR | TRAIL_FF_HEX, 0, "void *"},
		{"f", TRAIL_FK_FLOAT, 4, TRAIL_FF_SIGNED, 0, "float"},
		{"g", TRAIL_FK_FLOAT, 8, TRAIL_FF_SIGNED, 0, "double"},
		{"s", TRAIL_FK_STRING, 1, 0, 0, "char[]"},
		{"arr", TRAIL_FK_ARRAY, 2, 0, 3, "u16[3]"},
		{"q", TRAIL_FK_SEQ, 4, TRAIL_FF_SIGNED, 0, "s32[]"},
	};
	static const struct want_field wh[] = {
		{"bytes", TRAIL_FK_ARRAY, 1, TRAIL_FF_HEX, 4, "u8[4]"},
		{"w", TRAIL_FK_SEQ, 8, TRAIL_FF_HEX, 0, "u64[]"},
	};
	static const uint8_t bytes[4];
	static const uint64_t words[2];
	struct trail_meta m;
	const uint8_t *blob;
	int n;

	/* a blob exists once its event is used: this call site (off, so
	 * trail__write is not called) makes the compiler emit it */
	trail(tmeta, hexes, bytes, words, 2);
	CHECK_EQ(got_calls, 0);

	blob = find_blob("tmeta", "kinds", &m, &n);
	CHECK(blob != NULL);
	if (!blob)
		return;
	CHECK_EQ(n, 3); /* kinds, nothing, hexes: nothing else in this program */
	check_fields(&m, w, 11);
	CHECK_EQ(m.variable, 1);

	blob = find_blob("tmeta", "nothing", &m, &n);
	CHECK(blob != NULL);
	if (blob) {
		CHECK_EQ(m.nfields, 0);
		CHECK_EQ(m.variable, 0);
		CHECK_EQ(m.fixed_len, 0);
		/* header, "tmeta\0", "nothing\0": the blob has no padding */
		CHECK_EQ(m.size, 8 + 6 + 8);
	}
	blob = find_blob("tmeta", "hexes", &m, &n);
	CHECK(blob != NULL);
	if (blob)
		check_fields(&m, wh, 2);
}

/* Append v's bytes: the payload layout written out by hand. */
#define APPEND(buf, off, v)                                                  \
	do {                                                                 \
		__typeof__(v) v_ = (v);                                      \
		memcpy((buf) + (off), &v_, sizeof(v_));                      \
		(off) += sizeof(v_);                                         \
	} while (0)

TEST(macro_payload_matches_blob)
{
	static const uint16_t arr[3] = {1, 2, 0xbeef};
	static const int32_t q[2] = {-1, 2};
	uint8_t want[128];
	struct trail_meta m;
	const uint8_t *blob;
	size_t off = 0, len = 0;
	int n;

	blob = find_blob("tmeta", "kinds", &m, &n);
	CHECK(blob != NULL);
	if (!blob)
		return;

	/* off: the call site does nothing */
	trail(tmeta, kinds, -5, 65535, 0x1234, 0x0102030405060708ull, 7,
	      (const void *)0x1000, 1.5f, -2.25, "hi", arr, q, 2);
	CHECK_EQ(got_calls, 0);

	trail__state_tmeta_kinds = 1;
	trail(tmeta, kinds, -5, 65535, 0x1234, 0x0102030405060708ull, 7,
	      (const void *)0x1000, 1.5f, -2.25, "hi", arr, q, 2);
	CHECK_EQ(got_calls, 1);
	CHECK(got_ev != NULL);
	if (!got_ev)
		return;
	CHECK_EQ(got_ev->abi, TRAIL_EVENT_ABI);
	CHECK_EQ(got_ev->size, sizeof(struct trail_event));
	CHECK(got_ev->meta == (const void *)blob); /* the descriptor's blob */
	CHECK(got_ev->state == &trail__state_tmeta_kinds);

	APPEND(want, off, (int8_t)-5);
	APPEND(want, off, (uint16_t)65535);
	APPEND(want, off, (int32_t)0x1234);
	APPEND(want, off, (uint64_t)0x0102030405060708ull);
	APPEND(want, off, (uint8_t)1); /* bool: 7 -> 1 */
	APPEND(want, off, (uint64_t)0x1000);
	APPEND(want, off, 1.5f);
	APPEND(want, off, -2.25);
	APPEND(want, off, (uint16_t)2);
	memcpy(want + off, "hi", 2);
	off += 2;
	memcpy(want + off, arr, 6);
	off += 6;
	APPEND(want, off, (uint16_t)2);
	memcpy(want + off, q, 8);
	off += 8;
	CHECK_EQ(got_len, off);
	CHECK(got_len == off && !memcmp(got_payload, want, off));
	/* the reader's measurement agrees with the writer's */
	CHECK_EQ(trail__payload_len(&m, got_payload, got_len, &len), 0);
	CHECK_EQ(len, got_len);

	/* NULL string and NULL sequence: a then b..g take 36 bytes, then
	 * s is the 0xffff marker alone, arr 6 bytes, q a zero count */
	trail(tmeta, kinds, 0, 0, 0, 0, 0, NULL, 0.0f, 0.0, NULL, arr, NULL, 5);
	CHECK_EQ(got_len, 36 + 2 + 6 + 2);
	CHECK(got_payload[36] == 0xff && got_payload[37] == 0xff);
	CHECK(!memcmp(got_payload + 38, arr, 6));
	CHECK(got_payload[44] == 0 && got_payload[45] == 0);
	CHECK_EQ(trail__payload_len(&m, got_payload, got_len, &len), 0);
	CHECK_EQ(len, got_len);
}

TEST(macro_payload_limits_agree_with_parser)
{
	/* what the call site keeps of an oversized string or sequence is
	 * exactly what the parser accepts */
	static char big[5000];
	static int32_t many[5000];
	static const uint16_t arr[3];
	struct trail_meta m;
	size_t len = 0;
	uint16_t k;
	int n;

	if (!find_blob("tmeta", "kinds", &m, &n))
		return;
	memset(big, 'x', sizeof(big) - 1);
	trail__state_tmeta_kinds = 1;
	trail(tmeta, kinds, 0, 0, 0, 0, 0, NULL, 0.0f, 0.0, big, arr, many, 5000);
	memcpy(&k, got_payload + 36, 2); /* s's length */
	CHECK_EQ(k, TRAIL_STRING_MAX);
	memcpy(&k, got_payload + 36 + 2 + 4095 + 6, 2); /* q's count */
	CHECK_EQ(k, TRAIL_SEQ_MAX);
	CHECK_EQ(got_len, 36 + 2 + 4095 + 6 + 2 + 4096 * 4);
	CHECK_EQ(trail__payload_len(&m, got_payload, got_len, &len), 0);
	CHECK_EQ(len, got_len);

	/* and the empty-field event has an empty payload */
	trail__state_tmeta_nothing = 1;
	got_len = 99;
	trail(tmeta, nothing);
	CHECK_EQ(got_len, 0);
}

TEST_MAIN(CHECK_T(meta_golden_ints), CHECK_T(meta_golden_floats),
	  CHECK_T(meta_golden_variable), CHECK_T(meta_golden_no_fields),
	  CHECK_T(meta_blob_in_a_bigger_buffer), CHECK_T(meta_hostile_table),
	  CHECK_T(meta_duplicate_field_names), CHECK_T(meta_identifier_limits),
	  CHECK_T(meta_every_shortened_blob_refused), CHECK_T(payload_fixed),
	  CHECK_T(payload_variable), CHECK_T(payload_limits), CHECK_T(meta_hash),
	  CHECK_T(macro_blob_matches_declaration),
	  CHECK_T(macro_payload_matches_blob),
	  CHECK_T(macro_payload_limits_agree_with_parser))
