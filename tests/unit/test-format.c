/* SPDX-License-Identifier: MIT */
/*
 * test-format.c - event fields printed the way ftrace prints them
 * (src/tracefile/fields.c, trail_format_fields): every field kind and size,
 * the extremes of each integer type, hex/bool/pointer flags, floats with
 * %g, strings with C escapes, NULL strings, arrays and sequences, payloads
 * too short for their fields, and truncation into small buffers, which
 * must never write past the size given (checked with canaries).
 *
 * Events are described directly as struct trail_revent (no blob), and
 * payloads are packed by hand in the layout of include/trail/abi.h.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "tracefile/reader.h"

/* One-field event. */
static struct trail_revent ev1(const char *name, uint8_t kind, uint8_t size,
			       uint8_t flags, uint16_t count)
{
	struct trail_revent ev;

	memset(&ev, 0, sizeof(ev));
	ev.meta.provider = "t";
	ev.meta.name = "e";
	ev.meta.nfields = 1;
	ev.meta.fields[0] = (struct trail_field){name, kind, size, flags, count};
	return ev;
}

/* Format into a roomy buffer, checking the returned length. */
static const char *fmt(const struct trail_revent *ev, const void *p, uint32_t len)
{
	static char buf[4096];
	size_t n = trail_format_fields(ev, p, len, buf, sizeof(buf));

	CHECK_EQ(n, strlen(buf));
	return buf;
}

/* ------------------------------------------------------------- integers */

static const struct int_row {
	uint8_t size, flags;
	uint64_t raw; /* the value's low `size` bytes are the payload */
	const char *want;
} int_rows[] = {
	/* unsigned */
	{1, 0, 0, "v=0"},
	{1, 0, 255, "v=255"},
	{2, 0, 65535, "v=65535"},
	{2, 0, 1000, "v=1000"},
	{4, 0, 4294967295u, "v=4294967295"},
	{8, 0, 0, "v=0"},
	{8, 0, 10, "v=10"},
	{8, 0, UINT64_MAX, "v=18446744073709551615"},
	{8, 0, 1ull << 63, "v=9223372036854775808"},
	/* signed: sign-extended from the field's size */
	{1, TRAIL_FF_SIGNED, 0x80, "v=-128"},
	{1, TRAIL_FF_SIGNED, 0x7f, "v=127"},
	{1, TRAIL_FF_SIGNED, 0xff, "v=-1"},
	{2, TRAIL_FF_SIGNED, 0x8000, "v=-32768"},
	{2, TRAIL_FF_SIGNED, 0x7fff, "v=32767"},
	{4, TRAIL_FF_SIGNED, 0x80000000u, "v=-2147483648"},
	{4, TRAIL_FF_SIGNED, 0xfffffffeu, "v=-2"},
	{4, TRAIL_FF_SIGNED, 0x7fffffffu, "v=2147483647"},
	{8, TRAIL_FF_SIGNED, (uint64_t)INT64_MIN, "v=-9223372036854775808"},
	{8, TRAIL_FF_SIGNED, (uint64_t)INT64_MAX, "v=9223372036854775807"},
	{8, TRAIL_FF_SIGNED, (uint64_t)-1, "v=-1"},
	{8, TRAIL_FF_SIGNED, 0, "v=0"},
	/* hex: the stored bytes, lowercase, no leading zeros */
	{1, TRAIL_FF_HEX, 0, "v=0x0"},
	{1, TRAIL_FF_HEX, 0xab, "v=0xab"},
	{2, TRAIL_FF_HEX, 0x0100, "v=0x100"},
	{4, TRAIL_FF_HEX, 0xdeadbeefu, "v=0xdeadbeef"},
	{8, TRAIL_FF_HEX, UINT64_MAX, "v=0xffffffffffffffff"},
	{8, TRAIL_FF_HEX, 0x0123456789abcdefull, "v=0x123456789abcdef"},
	{1, TRAIL_FF_HEX | TRAIL_FF_SIGNED, 0xff, "v=0xff"}, /* not sign-extended */
	/* bool: 0 or 1 whatever the byte */
	{1, TRAIL_FF_BOOL, 0, "v=0"},
	{1, TRAIL_FF_BOOL, 1, "v=1"},
	{1, TRAIL_FF_BOOL, 0x80, "v=1"},
	/* pointer, as the macro describes it (PTR | HEX, 8 bytes) */
	{8, TRAIL_FF_PTR | TRAIL_FF_HEX, 0x7fff12345678ull, "v=0x7fff12345678"},
	{8, TRAIL_FF_PTR | TRAIL_FF_HEX, 0, "v=0x0"},
};

TEST(format_integers)
{
	for (size_t i = 0; i < sizeof(int_rows) / sizeof(int_rows[0]); i++) {
		const struct int_row *r = &int_rows[i];
		struct trail_revent ev = ev1("v", TRAIL_FK_INT, r->size, r->flags, 0);
		uint8_t p[8];
		const char *got;

		/* little-endian: the low bytes first */
		for (int k = 0; k < 8; k++)
			p[k] = (uint8_t)(r->raw >> (8 * k));
		got = fmt(&ev, p, r->size);
		if (strcmp(got, r->want)) {
			fprintf(stderr, "  row %zu: \"%s\", want \"%s\"\n", i, got, r->want);
			check_failures++;
		}
	}
}

/* --------------------------------------------------------------- floats */

TEST(format_floats)
{
	static const struct {
		double d;
		const char *want;
	} dbl[] = {
		{0.0, "v=0"},
		{1.5, "v=1.5"},
		{-2.25, "v=-2.25"},
		{0.1, "v=0.1"},
		{1e20, "v=1e+20"},
		{1e-5, "v=1e-05"},
		{123456.0, "v=123456"},
		{1234567.0, "v=1.23457e+06"},
	};
	struct trail_revent ev;
	float f;
	double d;

	for (size_t i = 0; i < sizeof(dbl) / sizeof(dbl[0]); i++) {
		ev = ev1("v", TRAIL_FK_FLOAT, 8, TRAIL_FF_SIGNED, 0);
		CHECK_STR(fmt(&ev, &dbl[i].d, 8), dbl[i].want);
		/* the same values as float where exact in binary32 */
		if (dbl[i].d == (double)(float)dbl[i].d) {
			f = (float)dbl[i].d;
			ev = ev1("v", TRAIL_FK_FLOAT, 4, TRAIL_FF_SIGNED, 0);
			CHECK_STR(fmt(&ev, &f, 4), dbl[i].want);
		}
	}
	/* a float widened: 0.1f is not 0.1, but %g's 6 digits hide it */
	f = 0.1f;
	ev = ev1("v", TRAIL_FK_FLOAT, 4, 0, 0);
	CHECK_STR(fmt(&ev, &f, 4), "v=0.1");
	f = FLT_MAX;
	CHECK_STR(fmt(&ev, &f, 4), "v=3.40282e+38");
	/* special values */
	ev = ev1("v", TRAIL_FK_FLOAT, 8, 0, 0);
	d = -0.0;
	CHECK_STR(fmt(&ev, &d, 8), "v=-0");
	d = INFINITY;
	CHECK_STR(fmt(&ev, &d, 8), "v=inf");
	d = -INFINITY;
	CHECK_STR(fmt(&ev, &d, 8), "v=-inf");
	d = NAN;
	CHECK(strstr(fmt(&ev, &d, 8), "nan") != NULL);
	d = DBL_MAX;
	CHECK_STR(fmt(&ev, &d, 8), "v=1.79769e+308");
}

/* -------------------------------------------------------------- strings */

/* Payload of a string field: u16 length, bytes. */
static uint32_t str_payload(uint8_t *p, const void *s, uint16_t n)
{
	memcpy(p, &n, 2);
	if (n != TRAIL_STRING_NULL) {
		memcpy(p + 2, s, n);
		return 2u + n;
	}
	return 2;
}

TEST(format_strings)
{
	static const struct {
		const char *s;
		uint16_t n;
		const char *want;
	} rows[] = {
		{"abc", 3, "s=\"abc\""},
		{"", 0, "s=\"\""},
		{"a b", 3, "s=\"a b\""},
		{"\"", 1, "s=\"\\\"\""},              /* " -> \" */
		{"\\", 1, "s=\"\\\\\""},              /* \ -> \\ */
		{"\n", 1, "s=\"\\n\""},
		{"\t", 1, "s=\"\\t\""},
		{"\r", 1, "s=\"\\r\""},
		{"\x01", 1, "s=\"\\x01\""},
		{"\x1f", 1, "s=\"\\x1f\""},
		{"\x1b[0m", 4, "s=\"\\x1b[0m\""},     /* no terminal escapes */
		{"\x7f", 1, "s=\"\\x7f\""},
		{"a\0b", 3, "s=\"a\\x00b\""},        /* an embedded NUL */
		{" ~", 2, "s=\" ~\""},                /* printable edges */
		{"x\"y\\z\n", 6, "s=\"x\\\"y\\\\z\\n\""},
		/* the length, not a NUL, ends the string */
		{"abcdef", 3, "s=\"abc\""},
	};
	struct trail_revent ev = ev1("s", TRAIL_FK_STRING, 1, 0, 0);
	uint8_t p[64];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t len = str_payload(p, rows[i].s, rows[i].n);
		const char *got = fmt(&ev, p, len);

		if (strcmp(got, rows[i].want)) {
			fprintf(stderr, "  row %zu: %s, want %s\n", i, got, rows[i].want);
			check_failures++;
		}
	}
	/* NULL pointer marker */
	CHECK_STR(fmt(&ev, p, str_payload(p, NULL, TRAIL_STRING_NULL)), "s=(null)");
}

TEST(format_string_high_bytes)
{
	/* bytes >= 0x80 (UTF-8) pass through untouched */
	struct trail_revent ev = ev1("s", TRAIL_FK_STRING, 1, 0, 0);
	uint8_t p[16];

	CHECK_STR(fmt(&ev, p, str_payload(p, "\xc3\xa9", 2)), "s=\"\xc3\xa9\"");
}

/* ------------------------------------------------------ arrays and seqs */

TEST(format_arrays)
{
	struct trail_revent ev;
	uint16_t a16[3] = {1, 2, 3};
	uint8_t a8[2] = {1, 0xff};
	int32_t s32[2] = {-1, 0};
	uint64_t u64[2] = {UINT64_MAX, 0x10};

	ev = ev1("a", TRAIL_FK_ARRAY, 2, 0, 3);
	CHECK_STR(fmt(&ev, a16, 6), "a={1,2,3}");
	ev = ev1("a", TRAIL_FK_ARRAY, 1, TRAIL_FF_HEX, 2);
	CHECK_STR(fmt(&ev, a8, 2), "a={0x1,0xff}");
	ev = ev1("a", TRAIL_FK_ARRAY, 1, TRAIL_FF_SIGNED, 2);
	CHECK_STR(fmt(&ev, a8, 2), "a={1,-1}");
	ev = ev1("a", TRAIL_FK_ARRAY, 4, TRAIL_FF_SIGNED, 2);
	CHECK_STR(fmt(&ev, s32, 8), "a={-1,0}");
	ev = ev1("a", TRAIL_FK_ARRAY, 8, TRAIL_FF_HEX, 2);
	CHECK_STR(fmt(&ev, u64, 16), "a={0xffffffffffffffff,0x10}");
	ev = ev1("a", TRAIL_FK_ARRAY, 8, 0, 1);
	CHECK_STR(fmt(&ev, u64, 8), "a={18446744073709551615}");
}

TEST(format_sequences)
{
	struct trail_revent ev;
	uint8_t p[64];
	uint16_t k;
	uint32_t v[3] = {1, 2, 3};

	ev = ev1("q", TRAIL_FK_SEQ, 4, 0, 0);
	k = 3;
	memcpy(p, &k, 2);
	memcpy(p + 2, v, 12);
	CHECK_STR(fmt(&ev, p, 14), "q={1,2,3}");
	ev = ev1("q", TRAIL_FK_SEQ, 4, TRAIL_FF_HEX, 0);
	k = 2;
	memcpy(p, &k, 2);
	CHECK_STR(fmt(&ev, p, 10), "q={0x1,0x2}");
	k = 0;
	memcpy(p, &k, 2);
	CHECK_STR(fmt(&ev, p, 2), "q={}");
	/* elements of 2 bytes, signed */
	ev = ev1("q", TRAIL_FK_SEQ, 2, TRAIL_FF_SIGNED, 0);
	k = 2;
	memcpy(p, &k, 2);
	p[2] = 0x00, p[3] = 0x80; /* -32768 */
	p[4] = 0x05, p[5] = 0x00; /* 5 */
	CHECK_STR(fmt(&ev, p, 6), "q={-32768,5}");
}

/* ---------------------------------------------------- several fields */

TEST(format_several_fields)
{
	/* fd (s32), path (string), flags (u16 hex), ok (bool), ids (u8 seq) */
	struct trail_revent ev;
	uint8_t p[64];
	uint32_t n = 0;
	int32_t fd = -9;
	uint16_t fl = 0x1a, k;

	memset(&ev, 0, sizeof(ev));
	ev.meta.nfields = 5;
	ev.meta.fields[0] = (struct trail_field){"fd", TRAIL_FK_INT, 4, TRAIL_FF_SIGNED, 0};
	ev.meta.fields[1] = (struct trail_field){"path", TRAIL_FK_STRING, 1, 0, 0};
	ev.meta.fields[2] = (struct trail_field){"flags", TRAIL_FK_INT, 2, TRAIL_FF_HEX, 0};
	ev.meta.fields[3] = (struct trail_field){"ok", TRAIL_FK_INT, 1, TRAIL_FF_BOOL, 0};
	ev.meta.fields[4] = (struct trail_field){"ids", TRAIL_FK_SEQ, 1, 0, 0};
	memcpy(p + n, &fd, 4);               /* fd */
	n += 4;
	n += str_payload(p + n, "/tmp/x y", 8); /* path */
	memcpy(p + n, &fl, 2);               /* flags */
	n += 2;
	p[n++] = 1;                          /* ok */
	k = 2;                               /* ids: 2 elements */
	memcpy(p + n, &k, 2);
	n += 2;
	p[n++] = 7;
	p[n++] = 8;
	CHECK_STR(fmt(&ev, p, n), "fd=-9 path=\"/tmp/x y\" flags=0x1a ok=1 ids={7,8}");

	/* no fields: empty output */
	ev.meta.nfields = 0;
	CHECK_STR(fmt(&ev, p, 0), "");
}

/* ------------------------------------------------------- short payloads */

TEST(format_short_payloads)
{
	/* the reader measures payloads first, but the formatter is handed
	 * raw lengths too: it must stop, say so, and read nothing beyond */
	struct trail_revent ev;
	uint8_t p[16] = {1, 0, 0, 0, 5, 0, 'a', 'b'};

	ev = ev1("v", TRAIL_FK_INT, 4, 0, 0);
	CHECK_STR(fmt(&ev, p, 3), "v=<short>");
	CHECK_STR(fmt(&ev, p, 0), "v=<short>");
	ev = ev1("v", TRAIL_FK_FLOAT, 8, 0, 0);
	CHECK_STR(fmt(&ev, p, 7), "v=<short>");
	ev = ev1("s", TRAIL_FK_STRING, 1, 0, 0);
	CHECK_STR(fmt(&ev, p + 4, 1), "s=<short>");  /* no room for the length */
	CHECK_STR(fmt(&ev, p + 4, 4), "s=<short>");  /* length 5, 2 bytes */
	ev = ev1("a", TRAIL_FK_ARRAY, 2, 0, 3);
	CHECK_STR(fmt(&ev, p, 5), "a=<short>");
	ev = ev1("q", TRAIL_FK_SEQ, 4, 0, 0);
	p[8] = 2, p[9] = 0;                        /* count 2, 8 bytes needed */
	CHECK_STR(fmt(&ev, p + 8, 9), "q=<short>");

	/* fields before the short one are printed */
	memset(&ev, 0, sizeof(ev));
	ev.meta.nfields = 2;
	ev.meta.fields[0] = (struct trail_field){"a", TRAIL_FK_INT, 1, 0, 0};
	ev.meta.fields[1] = (struct trail_field){"b", TRAIL_FK_INT, 4, 0, 0};
	CHECK_STR(fmt(&ev, p, 2), "a=1 b=<short>");
}

/* ------------------------------------------------------------ truncation */

#define CANARY 0xa5

/* A payload with every kind of field, and its full text. */
static void rich_event(struct trail_revent *ev, uint8_t *p, uint32_t *len)
{
	uint32_t n = 0;
	int64_t big = INT64_MIN;
	uint16_t k = 3, a[3] = {10, 200, 3000};
	double d = -1.5;

	memset(ev, 0, sizeof(*ev));
	ev->meta.nfields = 5;
	ev->meta.fields[0] = (struct trail_field){"big", TRAIL_FK_INT, 8, TRAIL_FF_SIGNED, 0};
	ev->meta.fields[1] = (struct trail_field){"s", TRAIL_FK_STRING, 1, 0, 0};
	ev->meta.fields[2] = (struct trail_field){"d", TRAIL_FK_FLOAT, 8, 0, 0};
	ev->meta.fields[3] = (struct trail_field){"q", TRAIL_FK_SEQ, 2, TRAIL_FF_HEX, 0};
	ev->meta.fields[4] = (struct trail_field){"z", TRAIL_FK_STRING, 1, 0, 0};
	memcpy(p + n, &big, 8);
	n += 8;
	n += str_payload(p + n, "q\"\n\x01", 4);
	memcpy(p + n, &d, 8);
	n += 8;
	memcpy(p + n, &k, 2);
	memcpy(p + n + 2, a, 6);
	n += 8;
	n += str_payload(p + n, NULL, TRAIL_STRING_NULL);
	*len = n;
}

TEST(format_truncation_never_overflows)
{
	static const char full[] =
		"big=-9223372036854775808 s=\"q\\\"\\n\\x01\" d=-1.5 "
		"q={0xa,0xc8,0xbb8} z=(null)";
	struct trail_revent ev;
	uint8_t p[128];
	uint32_t len;
	char buf[256];
	size_t want_full = strlen(full), got;

	rich_event(&ev, p, &len);
	got = trail_format_fields(&ev, p, len, buf, sizeof(buf));
	CHECK_STR(buf, full);
	CHECK_EQ(got, want_full);

	/* every buffer size from 1 to past the full length */
	for (size_t n = 1; n <= want_full + 2; n++) {
		size_t expect = n - 1 < want_full ? n - 1 : want_full;

		memset(buf, CANARY, sizeof(buf));
		got = trail_format_fields(&ev, p, len, buf, n);
		if (got != expect || buf[got] != '\0' || memcmp(buf, full, got)) {
			fprintf(stderr, "  n %zu: returned %zu (want %zu), \"%.*s\"\n", n, got,
				expect, (int)got, buf);
			check_failures++;
		}
		for (size_t k = n; k < sizeof(buf); k++)
			if ((uint8_t)buf[k] != CANARY) {
				fprintf(stderr, "  n %zu: byte %zu written\n", n, k);
				check_failures++;
				break;
			}
	}
}

TEST(format_zero_size_buffer)
{
	/* n == 0: like snprintf, room for nothing, not even the NUL; the
	 * buffer may be a pointer to the end of a full one */
	struct trail_revent ev;
	uint8_t p[128];
	uint32_t len;
	char buf[8];
	size_t got;

	rich_event(&ev, p, &len);
	memset(buf, CANARY, sizeof(buf));
	got = trail_format_fields(&ev, p, len, buf, 0);
	CHECK_EQ(got, 0);
	CHECK_EQ((uint8_t)buf[0], CANARY);
}

TEST_MAIN(CHECK_T(format_integers), CHECK_T(format_floats),
	  CHECK_T(format_strings), CHECK_T(format_string_high_bytes),
	  CHECK_T(format_arrays), CHECK_T(format_sequences),
	  CHECK_T(format_several_fields), CHECK_T(format_short_payloads),
	  CHECK_T(format_truncation_never_overflows),
	  CHECK_T(format_zero_size_buffer))
