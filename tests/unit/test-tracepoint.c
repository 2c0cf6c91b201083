/* SPDX-License-Identifier: MIT */
/*
 * test-tracepoint.c - the public header <trail/trail.h> from C11, without
 * libtrail: the payload each field kind packs (golden records, byte by byte),
 * the description blob of every event, argument evaluation while an event is
 * off, trail_enabled(), and the descriptor list in the section trail_events.
 *
 * The header declares trail__write() and trail__register() weak; this file
 * defines both to catch what the call site and the constructor hand to
 * libtrail. Each event's status word, trail__state_<prov>_<ev>, is a static
 * of this translation unit, so a test turns an event on by storing 1 in it.
 *
 * Golden records assume a little-endian host (the payload is host order).
 * Compiled with -std=c11 (tests/cli/test-header.sh does the -pedantic
 * builds: the call of an event without arguments draws a pedantic warning).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trail/trail.h>

#include "check.h"

/* ------------------------------------------------------------------------
 * Stand-ins for libtrail.
 */
static struct {
	int calls;
	struct trail_event *ev;
	uint32_t len;
	unsigned char buf[1 << 16];
} cap;

void trail__write(struct trail_event *ev, const void *payload, uint32_t len)
{
	cap.calls++;
	cap.ev = ev;
	cap.len = len;
	if (len <= sizeof(cap.buf))
		memcpy(cap.buf, payload, len);
}

/* what the constructors registered, before main() */
static struct trail_event **reg_start, **reg_stop;
static int reg_calls;
/* set by a test that lets its process exit through the destructors */
static int unreg_fd = -1;

void trail__register(struct trail_event **start, struct trail_event **stop)
{
	reg_calls++;
	reg_start = start;
	reg_stop = stop;
}

void trail__unregister(struct trail_event **start, struct trail_event **stop)
{
	char c = start == &__start_trail_events[0] &&
				 stop == &__stop_trail_events[0]
			 ? 'u'
			 : 'x';

	if (unreg_fd >= 0 && write(unreg_fd, &c, 1) != 1)
		_exit(3);
}

static void cap_reset(void)
{
	cap.calls = 0;
	cap.ev = NULL;
	cap.len = 0;
	memset(cap.buf, 0xa5, sizeof(cap.buf));
}

#define ON(prov, ev) (trail__state_##prov##_##ev = 1)
#define OFF(prov, ev) (trail__state_##prov##_##ev = 0)

static void need_little_endian(void)
{
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	SKIP("golden records are little-endian");
#endif
}

/* Compare the captured payload with a golden record. */
#define CHECK_PAYLOAD(want) check_payload(__LINE__, (want), sizeof(want))

static void check_payload(int line, const unsigned char *want, size_t n)
{
	if (cap.calls != 1) {
		fprintf(stderr, "  line %d: trail__write called %d times, want 1\n",
			line, cap.calls);
		check_failures++;
		return;
	}
	if (cap.len != n) {
		fprintf(stderr, "  line %d: payload is %u bytes, want %zu\n", line,
			cap.len, n);
		check_failures++;
	}
	for (size_t i = 0; i < n && i < cap.len; i++)
		if (cap.buf[i] != want[i]) {
			fprintf(stderr,
				"  line %d: payload byte %zu is 0x%02x, want 0x%02x\n",
				line, i, cap.buf[i], want[i]);
			check_failures++;
			return;
		}
}

/* ------------------------------------------------------------------------
 * The events. Every one is called by some test, so each has a descriptor.
 */
TRAIL_EVENT(app, ints,
	    TRAIL_ARGS(int8_t, i8, int16_t, i16, int32_t, i32, int64_t, i64,
		       uint8_t, u8, uint16_t, u16, uint32_t, u32, uint64_t, u64),
	    TRAIL_FIELDS(trail_field_int(i8) trail_field_int(i16)
			 trail_field_int(i32) trail_field_int(i64)
			 trail_field_int(u8) trail_field_int(u16)
			 trail_field_int(u32) trail_field_int(u64)))

TRAIL_EVENT(app, hexes,
	    TRAIL_ARGS(uint8_t, h8, int16_t, h16, uint32_t, h32, int64_t, h64),
	    TRAIL_FIELDS(trail_field_hex(h8) trail_field_hex(h16)
			 trail_field_hex(h32) trail_field_hex(h64)))

TRAIL_EVENT(app, bools,
	    TRAIL_ARGS(int, b42, int, b0, int, b256, int64_t, bhigh, bool, bt,
		       const void *, bp, const void *, bnull),
	    TRAIL_FIELDS(trail_field_bool(b42) trail_field_bool(b0)
			 trail_field_bool(b256) trail_field_bool(bhigh)
			 trail_field_bool(bt) trail_field_bool(bp)
			 trail_field_bool(bnull) trail_field_int(braw, bt)))

TRAIL_EVENT(app, ptrs,
	    TRAIL_ARGS(const void *, p, char *, q, const void *, nul),
	    TRAIL_FIELDS(trail_field_ptr(p) trail_field_ptr(q)
			 trail_field_ptr(nul)))

TRAIL_EVENT(app, floats, TRAIL_ARGS(float, f, double, d),
	    TRAIL_FIELDS(trail_field_float(f) trail_field_float(d)))

struct rec {
	char label[8];
	int16_t xy[2];
	uint8_t tag[3];
};

TRAIL_EVENT(app, strings,
	    TRAIL_ARGS(const char *, s, const char *, nul, const struct rec *, r),
	    TRAIL_FIELDS(trail_field_string(s) trail_field_string(nul)
			 trail_field_string(label, r->label)))

TRAIL_EVENT(app, arrays,
	    TRAIL_ARGS(const int16_t *, a, const uint64_t *, b, const struct rec *, r),
	    TRAIL_FIELDS(trail_field_array(a, 3) trail_field_array_hex(b, 2)
			 trail_field_array(xy, r->xy, 2)
			 trail_field_array_hex(tag, r->tag, 3)))

TRAIL_EVENT(app, seqs,
	    TRAIL_ARGS(const uint32_t *, v, size_t, n, const int8_t *, w, int, wn),
	    TRAIL_FIELDS(trail_field_seq(v, n) trail_field_seq_hex(w, w, wn)))

TRAIL_EVENT(app, exprs, TRAIL_ARGS(int, n, const char *, name),
	    TRAIL_FIELDS(trail_field_int(len, (n * 2))
			 trail_field_hex(low, (uint8_t)(n & 0xff))
			 trail_field_int(count, n)
			 trail_field_string(rest, name + 1)
			 trail_field_bool(odd, (n % 2))))

TRAIL_EVENT(app, tick, TRAIL_ARGS(), TRAIL_FIELDS())

TRAIL_EVENT(app, twelve,
	    TRAIL_ARGS(uint8_t, a, int16_t, b, int32_t, c, int64_t, d, float, e,
		       double, f, const char *, g, const void *, h, bool, i,
		       const uint16_t *, j, size_t, jn, uint32_t, k),
	    TRAIL_FIELDS(trail_field_int(a) trail_field_int(b)
			 trail_field_int(c) trail_field_int(d)
			 trail_field_float(e) trail_field_float(f)
			 trail_field_string(g) trail_field_ptr(h)
			 trail_field_bool(i) trail_field_seq(j, jn)
			 trail_field_int(jn) trail_field_hex(k)))

static int evaluated;

static int bump(void)
{
	return ++evaluated;
}

TRAIL_EVENT(app, lazy, TRAIL_ARGS(int, v), TRAIL_FIELDS(trail_field_int(v)))

/* field expressions with a side effect */
TRAIL_EVENT(app, once, TRAIL_ARGS(const uint32_t *, v),
	    TRAIL_FIELDS(trail_field_int(k, bump())
			 trail_field_seq(vals, v, (size_t)bump())
			 trail_field_string(s, (bump(), "xy"))
			 trail_field_array(arr, (bump(), v), 1)))

/* ------------------------------------------------------------------------
 * Payload layout, one field kind at a time.
 */
TEST(payload_ints)
{
	static const unsigned char want[] = {
		0xfe,                                           /* i8  -2 */
		0xd4, 0xfe,                                     /* i16 -300 */
		0x90, 0xee, 0xfe, 0xff,                         /* i32 -70000 */
		0x00, 0x0e, 0xfa, 0xd5, 0xfe, 0xff, 0xff, 0xff, /* i64 -5e9 */
		0xab,                                           /* u8  0xab */
		0xef, 0xbe,                                     /* u16 0xbeef */
		0xef, 0xbe, 0xad, 0xde,                         /* u32 0xdeadbeef */
		0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, /* u64 */
	};

	need_little_endian();
	cap_reset();
	ON(app, ints);
	trail(app, ints, -2, -300, -70000, -5000000000LL, 0xab, 0xbeef,
	      0xdeadbeefu, 0x0123456789abcdefull);
	CHECK_PAYLOAD(want);
	CHECK(cap.ev != NULL && cap.ev->state == &trail__state_app_ints);
}

TEST(payload_hex)
{
	static const unsigned char want[] = {
		0x7f,                                           /* h8  0x7f */
		0xff, 0xff,                                     /* h16 -1 */
		0x78, 0x56, 0x34, 0x12,                         /* h32 0x12345678 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* h64 INT64_MIN */
	};

	need_little_endian();
	cap_reset();
	ON(app, hexes);
	trail(app, hexes, 0x7f, -1, 0x12345678, INT64_MIN);
	CHECK_PAYLOAD(want);
}

TEST(payload_bool_normalized)
{
	static int x;
	static const unsigned char want[] = {
		0x01, /* b42: 42 */
		0x00, /* b0: 0 */
		0x01, /* b256: 256, whose low byte is 0 */
		0x01, /* bhigh: 1 << 40, whose low 32 bits are 0 */
		0x01, /* bt: true */
		0x01, /* bp: a pointer */
		0x00, /* bnull: NULL */
		0x01, /* braw: trail_field_int of a bool, one byte */
	};

	need_little_endian();
	cap_reset();
	ON(app, bools);
	trail(app, bools, 42, 0, 256, (int64_t)1 << 40, true, &x, NULL);
	CHECK_PAYLOAD(want);
}

TEST(payload_ptr_is_8_bytes)
{
	static char obj[4];
	unsigned char want[24];
	uint64_t p = (uint64_t)(uintptr_t)obj, q = (uint64_t)(uintptr_t)(obj + 3);

	need_little_endian();
	memcpy(want, &p, 8);       /* p */
	memcpy(want + 8, &q, 8);   /* q */
	memset(want + 16, 0, 8);   /* nul */
	cap_reset();
	ON(app, ptrs);
	trail(app, ptrs, obj, obj + 3, NULL);
	CHECK_PAYLOAD(want);
}

TEST(payload_float_double)
{
	static const unsigned char want[] = {
		0x00, 0x00, 0xc0, 0x3f,                         /* f  1.5f */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xc0, /* d -2.25 */
	};

	need_little_endian();
	cap_reset();
	ON(app, floats);
	trail(app, floats, 1.5f, -2.25);
	CHECK_PAYLOAD(want);
}

TEST(payload_string)
{
	static const struct rec r = {"label", {0, 0}, {0, 0, 0}};
	static const unsigned char want[] = {
		0x05, 0x00, 'h', 'e', 'l', 'l', 'o',      /* s: u16 5, no NUL */
		0xff, 0xff,                               /* nul: NULL, no bytes */
		0x05, 0x00, 'l', 'a', 'b', 'e', 'l',      /* label: char array */
	};
	static const unsigned char empty[] = {
		0x00, 0x00, /* s: "" */
		0xff, 0xff, /* nul */
		0x05, 0x00, 'l', 'a', 'b', 'e', 'l',
	};

	need_little_endian();
	ON(app, strings);
	cap_reset();
	trail(app, strings, "hello", NULL, &r);
	CHECK_PAYLOAD(want);
	cap_reset();
	trail(app, strings, "", NULL, &r);
	CHECK_PAYLOAD(empty);
}

/* A string of n bytes (plus NUL, if nul) keeps min(n, 4095) of them. */
static void check_long_string(size_t n, bool nul)
{
	static const struct rec r = {"", {0, 0}, {0, 0, 0}};
	size_t keep = n < 4095 ? n : 4095; /* TRAIL_STRING_MAX, spelled out */
	char *s = malloc(nul ? n + 1 : n);

	CHECK(s != NULL);
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		s[i] = (char)('a' + i % 26);
	if (nul)
		s[n] = 0;
	cap_reset();
	trail(app, strings, s, NULL, &r);
	CHECK_EQ(cap.calls, 1);
	CHECK_EQ(cap.len, 2 + keep + 2 + 2);
	CHECK_EQ(cap.buf[0] | cap.buf[1] << 8, keep);
	CHECK(memcmp(cap.buf + 2, s, keep) == 0);
	CHECK_EQ(cap.buf[2 + keep], 0xff); /* the next field follows at once */
	CHECK_EQ(cap.buf[3 + keep], 0xff);
	free(s);
}

TEST(payload_string_cut_at_4095)
{
	need_little_endian();
	ON(app, strings);
	check_long_string(5000, true);
	check_long_string(4096, true);
	check_long_string(4095, true);
	check_long_string(4094, true);
	/* exactly 4095 bytes and no NUL: nothing past them is read (ASan) */
	check_long_string(4095, false);
}

TEST(payload_fixed_array)
{
	static const int16_t a[3] = {-1, 2, 0x1234};
	static const uint64_t b[2] = {0x1122334455667788ull, 1};
	static const struct rec r = {"", {-2, 3}, {0xa, 0xb, 0xc}};
	static const unsigned char want[] = {
		0xff, 0xff, 0x02, 0x00, 0x34, 0x12, /* a: 3 x int16, no count */
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* b[0] */
		0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* b[1] */
		0xfe, 0xff, 0x03, 0x00,                         /* xy: r->xy */
		0x0a, 0x0b, 0x0c,                               /* tag: r->tag */
	};

	need_little_endian();
	cap_reset();
	ON(app, arrays);
	trail(app, arrays, a, b, &r);
	CHECK_PAYLOAD(want);
}

TEST(payload_sequence)
{
	static const uint32_t v[3] = {1, 0x10000, 0xffffffffu};
	static const int8_t w[2] = {-1, 5};
	static const unsigned char want[] = {
		0x03, 0x00,                                     /* v: count 3 */
		0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, /* v[0], v[1] */
		0xff, 0xff, 0xff, 0xff,                         /* v[2] */
		0x02, 0x00, 0xff, 0x05,                         /* w: count 2 */
	};
	static const unsigned char nulls[] = {
		0x00, 0x00, /* v: NULL with n 7 */
		0x00, 0x00, /* w: NULL with wn 9 */
	};
	static const unsigned char empty[] = {
		0x00, 0x00, /* v: count 0 */
		0x01, 0x00, 0xff, /* w: count 1 */
	};

	need_little_endian();
	ON(app, seqs);
	cap_reset();
	trail(app, seqs, v, 3, w, 2);
	CHECK_PAYLOAD(want);
	cap_reset();
	trail(app, seqs, NULL, 7, NULL, 9);
	CHECK_PAYLOAD(nulls);
	cap_reset();
	trail(app, seqs, v, 0, w, 1);
	CHECK_PAYLOAD(empty);
}

TEST(payload_sequence_cut_at_4096)
{
	size_t n = 5000;
	uint32_t *v = malloc(n * sizeof(*v));
	static const int8_t w[1] = {7};

	need_little_endian();
	CHECK(v != NULL);
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)i * 3;
	ON(app, seqs);
	cap_reset();
	trail(app, seqs, v, n, w, 1);
	CHECK_EQ(cap.calls, 1);
	CHECK_EQ(cap.len, 2 + 4096 * 4 + 3);
	CHECK_EQ(cap.buf[0] | cap.buf[1] << 8, 4096);
	CHECK(memcmp(cap.buf + 2, v, 4096 * 4) == 0);
	CHECK_EQ(cap.buf[2 + 4096 * 4], 1); /* w follows the 4096th element */
	CHECK_EQ(cap.buf[4 + 4096 * 4], 7);
	cap_reset();
	trail(app, seqs, v, 4096, w, 1);
	CHECK_EQ(cap.len, 2 + 4096 * 4 + 3);
	cap_reset();
	trail(app, seqs, v, 4095, w, 1);
	CHECK_EQ(cap.len, 2 + 4095 * 4 + 3);
	CHECK_EQ(cap.buf[0] | cap.buf[1] << 8, 4095);
	free(v);
}

TEST(payload_array_from_null_is_zeros)
{
	static const uint64_t b[2] = {5, 6};
	static const struct rec r = {"", {1, 2}, {3, 4, 5}};
	unsigned char want[6] = {0}; /* a: 3 x int16 from NULL: zeros */

	need_little_endian();
	cap_reset();
	ON(app, arrays);
	trail(app, arrays, NULL, b, &r);
	CHECK_EQ(cap.calls, 1);
	CHECK_EQ(cap.len, 6 + 16 + 4 + 3);
	CHECK(memcmp(cap.buf, want, 6) == 0);
	CHECK_EQ(cap.buf[6], 5); /* b follows */
}

TEST(payload_sequence_negative_length_is_empty)
{
	static const uint32_t v[2] = {1, 2};
	static const int8_t w[1] = {7};

	need_little_endian();
	ON(app, seqs);
	cap_reset();
	/* a failed read()'s -1 as a signed length: nothing copied */
	trail(app, seqs, v, 2, w, -1);
	CHECK_EQ(cap.calls, 1);
	CHECK_EQ(cap.len, 2 + 8 + 2);
	CHECK_EQ(cap.buf[10] | cap.buf[11] << 8, 0);
	/* and through a size_t: (size_t)-1 is no length either */
	cap_reset();
	trail(app, seqs, v, (size_t)-1, w, 1);
	CHECK_EQ(cap.len, 2 + 2 + 1);
	CHECK_EQ(cap.buf[0] | cap.buf[1] << 8, 0);
}

TEST(payload_expressions_and_renamed_fields)
{
	static const unsigned char want[] = {
		0x2e, 0x02, 0x00, 0x00, /* len = n * 2 = 558, int */
		0x17,                   /* low = (uint8_t)(n & 0xff) */
		0x17, 0x01, 0x00, 0x00, /* count = n = 279 */
		0x02, 0x00, 'b', 'c',   /* rest = name + 1 */
		0x01,                   /* odd = n % 2 */
	};

	need_little_endian();
	cap_reset();
	ON(app, exprs);
	trail(app, exprs, 279, "abc");
	CHECK_PAYLOAD(want);
}

/* The documented call of an event without arguments; gcc -pedantic warns
 * here (ISO C99 wants an argument for "..."), clang is told not to. */
static void call_tick(void)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
	trail(app, tick);
#pragma GCC diagnostic pop
}

TEST(payload_no_fields)
{
	cap_reset();
	ON(app, tick);
	call_tick();
	CHECK_EQ(cap.calls, 1);
	CHECK_EQ(cap.len, 0);
	CHECK(cap.ev != NULL && cap.ev->state == &trail__state_app_tick);
}

TEST(payload_twelve_arguments)
{
	static const uint16_t j[2] = {0x0102, 0xfffe};
	static char h;
	uint64_t hv = (uint64_t)(uintptr_t)&h;
	unsigned char want[] = {
		0x09,                                           /* a 9 */
		0xf6, 0xff,                                     /* b -10 */
		0x0b, 0x00, 0x00, 0x00,                         /* c 11 */
		0xf4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* d -12 */
		0x00, 0x00, 0x50, 0x41,                         /* e 13.0f */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2c, 0xc0, /* f -14.0 */
		0x02, 0x00, '1', '5',                           /* g "15" */
		0, 0, 0, 0, 0, 0, 0, 0,                         /* h, below */
		0x01,                                           /* i true */
		0x02, 0x00, 0x02, 0x01, 0xfe, 0xff,             /* j 2 x u16 */
		0x02, 0, 0, 0, 0, 0, 0, 0,                      /* jn 2, size_t */
		0x11, 0x00, 0x00, 0x00,                         /* k 17 */
	};

	need_little_endian();
	memcpy(want + 31, &hv, 8);
	cap_reset();
	ON(app, twelve);
	trail(app, twelve, 9, -10, 11, -12, 13.0f, -14.0, "15", &h, true, j, 2,
	      17);
	CHECK_PAYLOAD(want);
}

/* ------------------------------------------------------------------------
 * The description blob.
 */
struct want_field {
	const char *name;
	uint8_t kind, size, flags;
	uint16_t count;
};

struct want_meta {
	const char *provider, *name;
	uint8_t nfields;
	struct want_field f[12];
};

enum { S = TRAIL_FF_SIGNED, H = TRAIL_FF_HEX, B = TRAIL_FF_BOOL, P = TRAIL_FF_PTR };
enum { I = TRAIL_FK_INT, F = TRAIL_FK_FLOAT, STR = TRAIL_FK_STRING,
       ARR = TRAIL_FK_ARRAY, SEQ = TRAIL_FK_SEQ };

/* Walk one blob field by field; every byte must be accounted for. */
static void check_meta(const struct trail_event *ev, const struct want_meta *w)
{
	const unsigned char *b = ev->meta, *p;
	struct trail_meta_hdr h;
	size_t want_size = sizeof(h) + strlen(w->provider) + 1 + strlen(w->name) + 1;

	memcpy(&h, b, sizeof(h));
	CHECK_EQ(h.magic, TRAIL_META_MAGIC);
	CHECK_EQ(h.version, 1);
	CHECK_EQ(h.nfields, w->nfields);
	p = b + sizeof(h);
	CHECK_STR((const char *)p, w->provider);
	p += strlen((const char *)p) + 1;
	CHECK_STR((const char *)p, w->name);
	p += strlen((const char *)p) + 1;
	for (unsigned i = 0; i < w->nfields && i < h.nfields; i++) {
		const struct want_field *wf = &w->f[i];
		struct trail_meta_field f;

		memcpy(&f, p, sizeof(f));
		p += sizeof(f);
		if (f.kind != wf->kind || f.size != wf->size ||
		    f.flags != wf->flags || f.count != wf->count ||
		    f.namelen != strlen(wf->name) ||
		    strcmp((const char *)p, wf->name)) {
			fprintf(stderr,
				"  %s:%s field %u: {%u %u 0x%x %u \"%s\"/%u}, want "
				"{%u %u 0x%x %u \"%s\"}\n",
				w->provider, w->name, i, f.kind, f.size, f.flags,
				f.count, (const char *)p, f.namelen, wf->kind,
				wf->size, wf->flags, wf->count, wf->name);
			check_failures++;
		}
		p += strlen((const char *)p) + 1;
		want_size += sizeof(f) + strlen(wf->name) + 1;
	}
	CHECK_EQ(h.size, want_size);
	CHECK_EQ(p - b, h.size);
}

/* Turn on and call every event once; return the descriptors, in the order
 * of metas[] below. */
static int fire_all(struct trail_event **evs)
{
	static const int16_t a[3];
	static const uint64_t b[2];
	static const uint16_t j[1];
	static const uint32_t u[1];
	static const struct rec r;
	int n = 0;

#define FIRE(name, ...)                                                       \
	do {                                                                  \
		cap_reset();                                                  \
		ON(app, name);                                                \
		trail(app, name, __VA_ARGS__);                                \
		OFF(app, name);                                               \
		evs[n++] = cap.calls == 1 ? cap.ev : NULL;                    \
	} while (0)
	FIRE(ints, 0, 0, 0, 0, 0, 0, 0, 0);
	FIRE(hexes, 0, 0, 0, 0);
	FIRE(bools, 0, 0, 0, 0, false, NULL, NULL);
	FIRE(ptrs, NULL, NULL, NULL);
	FIRE(floats, 0, 0);
	FIRE(strings, "", NULL, &r);
	FIRE(arrays, a, b, &r);
	FIRE(seqs, NULL, 0, NULL, 0);
	FIRE(exprs, 0, "x");
	FIRE(twelve, 0, 0, 0, 0, 0, 0, "", NULL, false, j, 1, 0);
	FIRE(once, u);
	FIRE(lazy, 0);
#undef FIRE
	cap_reset();
	ON(app, tick);
	call_tick();
	OFF(app, tick);
	evs[n++] = cap.calls == 1 ? cap.ev : NULL;
	return n;
}

static const struct want_meta metas[] = {
	{"app", "ints", 8,
	 {{"i8", I, 1, S, 0}, {"i16", I, 2, S, 0}, {"i32", I, 4, S, 0},
	  {"i64", I, 8, S, 0}, {"u8", I, 1, 0, 0}, {"u16", I, 2, 0, 0},
	  {"u32", I, 4, 0, 0}, {"u64", I, 8, 0, 0}}},
	{"app", "hexes", 4,
	 {{"h8", I, 1, H, 0}, {"h16", I, 2, S | H, 0}, {"h32", I, 4, H, 0},
	  {"h64", I, 8, S | H, 0}}},
	{"app", "bools", 8,
	 {{"b42", I, 1, B, 0}, {"b0", I, 1, B, 0}, {"b256", I, 1, B, 0},
	  {"bhigh", I, 1, B, 0}, {"bt", I, 1, B, 0}, {"bp", I, 1, B, 0},
	  {"bnull", I, 1, B, 0}, {"braw", I, 1, 0, 0}}},
	{"app", "ptrs", 3,
	 {{"p", I, 8, P | H, 0}, {"q", I, 8, P | H, 0}, {"nul", I, 8, P | H, 0}}},
	{"app", "floats", 2, {{"f", F, 4, S, 0}, {"d", F, 8, S, 0}}},
	{"app", "strings", 3,
	 {{"s", STR, 1, 0, 0}, {"nul", STR, 1, 0, 0}, {"label", STR, 1, 0, 0}}},
	{"app", "arrays", 4,
	 {{"a", ARR, 2, S, 3}, {"b", ARR, 8, H, 2}, {"xy", ARR, 2, S, 2},
	  {"tag", ARR, 1, H, 3}}},
	{"app", "seqs", 2, {{"v", SEQ, 4, 0, 0}, {"w", SEQ, 1, S | H, 0}}},
	{"app", "exprs", 5,
	 {{"len", I, 4, S, 0}, {"low", I, 1, H, 0}, {"count", I, 4, S, 0},
	  {"rest", STR, 1, 0, 0}, {"odd", I, 1, B, 0}}},
	{"app", "twelve", 12,
	 {{"a", I, 1, 0, 0}, {"b", I, 2, S, 0}, {"c", I, 4, S, 0},
	  {"d", I, 8, S, 0}, {"e", F, 4, S, 0}, {"f", F, 8, S, 0},
	  {"g", STR, 1, 0, 0}, {"h", I, 8, P | H, 0}, {"i", I, 1, B, 0},
	  {"j", SEQ, 2, 0, 0}, {"jn", I, sizeof(size_t), 0, 0},
	  {"k", I, 4, H, 0}}},
	{"app", "once", 4,
	 {{"k", I, 4, S, 0}, {"vals", SEQ, 4, 0, 0}, {"s", STR, 1, 0, 0},
	  {"arr", ARR, 4, 0, 1}}},
	{"app", "lazy", 1, {{"v", I, 4, S, 0}}},
	{"app", "tick", 0, {{NULL, 0, 0, 0, 0}}},
};
#define NEVENTS (sizeof(metas) / sizeof(metas[0]))

TEST(meta_blob)
{
	struct trail_event *evs[NEVENTS + 1];
	int n = fire_all(evs);

	CHECK_EQ(n, NEVENTS);
	for (int i = 0; i < n; i++) {
		if (!evs[i]) {
			fprintf(stderr, "  %s:%s: trail__write not called\n",
				metas[i].provider, metas[i].name);
			check_failures++;
			continue;
		}
		CHECK_EQ(evs[i]->abi, TRAIL_EVENT_ABI);
		CHECK_EQ(evs[i]->size, sizeof(struct trail_event));
		CHECK(evs[i]->rt == NULL);
		check_meta(evs[i], &metas[i]);
	}
}

/* An empty event's blob, byte by byte: header, "app", "tick". */
TEST(meta_blob_golden_no_fields)
{
	static const unsigned char want[] = {
		0x54, 0x52, 0x4d, 0x31, /* magic "TRM1" */
		0x11, 0x00,             /* size 17 */
		0x01,                   /* version */
		0x00,                   /* nfields */
		'a', 'p', 'p', 0,
		't', 'i', 'c', 'k', 0,
	};
	struct trail_event *evs[NEVENTS + 1];

	need_little_endian();
	fire_all(evs);
	CHECK(evs[NEVENTS - 1] != NULL);
	if (evs[NEVENTS - 1])
		CHECK(memcmp(evs[NEVENTS - 1]->meta, want, sizeof(want)) == 0);
}

/* One field's record, byte by byte: {kind, size, flags, namelen, count}. */
TEST(meta_blob_golden_field)
{
	static const unsigned char want[] = {
		0x54, 0x52, 0x4d, 0x31, /* magic */
		0x19, 0x00,             /* size 8 + 4 + 5 + 6 + 2 = 25 */
		0x01, 0x01,             /* version, nfields */
		'a', 'p', 'p', 0,
		'l', 'a', 'z', 'y', 0,
		0x01,                   /* kind INT */
		0x04,                   /* size 4 */
		0x01,                   /* flags SIGNED */
		0x01,                   /* namelen */
		0x00, 0x00,             /* count */
		'v', 0,
	};
	struct trail_event *evs[NEVENTS + 1];

	need_little_endian();
	fire_all(evs);
	CHECK(evs[NEVENTS - 2] != NULL);
	if (evs[NEVENTS - 2])
		CHECK(memcmp(evs[NEVENTS - 2]->meta, want, sizeof(want)) == 0);
}

/* ------------------------------------------------------------------------
 * The call site.
 */
TEST(events_start_off)
{
	const uint32_t *words[] = {
		&trail__state_app_ints, &trail__state_app_hexes,
		&trail__state_app_bools, &trail__state_app_ptrs,
		&trail__state_app_floats, &trail__state_app_strings,
		&trail__state_app_arrays, &trail__state_app_seqs,
		&trail__state_app_exprs, &trail__state_app_twelve,
		&trail__state_app_once, &trail__state_app_lazy,
		&trail__state_app_tick,
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		CHECK_EQ(*words[i], 0);
	CHECK(!trail_enabled(app, ints));
	CHECK(!trail_enabled(app, tick));
	cap_reset();
	trail(app, lazy, 1);
	call_tick();
	CHECK_EQ(cap.calls, 0);
}

TEST(disabled_event_skips_arguments)
{
	evaluated = 0;
	cap_reset();
	OFF(app, lazy);
	CHECK(!trail_enabled(app, lazy));
	trail(app, lazy, bump());
	trail(app, lazy, bump());
	CHECK_EQ(evaluated, 0);
	CHECK_EQ(cap.calls, 0);

	ON(app, lazy);
	CHECK(trail_enabled(app, lazy));
	trail(app, lazy, bump());
	CHECK_EQ(evaluated, 1);
	CHECK_EQ(cap.calls, 1);
	CHECK_EQ(cap.len, 4);
	CHECK_EQ(cap.buf[0], 1);

	OFF(app, lazy);
	trail(app, lazy, bump());
	CHECK_EQ(evaluated, 1);
	CHECK_EQ(cap.calls, 1);
}

/* libtrail sets bit N for session slot N: any bit turns the event on. */
TEST(enabled_reflects_status_word)
{
	static const uint32_t words[] = {0, 1, 2, 0x80, 0x80000000u, 0xffffffffu};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		trail__state_app_lazy = words[i];
		CHECK_EQ(!!trail_enabled(app, lazy), words[i] != 0);
		cap_reset();
		evaluated = 0;
		trail(app, lazy, bump());
		CHECK_EQ(cap.calls, words[i] != 0);
		CHECK_EQ(evaluated, words[i] != 0);
	}
	/* each event has its own word */
	trail__state_app_lazy = 1;
	trail__state_app_ints = 0;
	CHECK(trail_enabled(app, lazy));
	CHECK(!trail_enabled(app, ints));
}

/* Each argument, each field expression and a sequence's length is
 * evaluated exactly once per call. */
TEST(fields_evaluated_once)
{
	static const uint32_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	unsigned cnt;

	/* n feeds four fields */
	ON(app, exprs);
	cap_reset();
	evaluated = 0;
	trail(app, exprs, bump(), "ab");
	CHECK_EQ(evaluated, 1);
	CHECK_EQ(cap.buf[5], 1); /* count, the argument as passed */

	ON(app, once);
	cap_reset();
	evaluated = 0;
	trail(app, once, v);
	CHECK_EQ(evaluated, 4);
	CHECK_EQ(cap.calls, 1);
	/* k (4) | vals: u16 cnt, cnt x 4 | s: u16 2, "xy" | arr: 1 x 4 */
	cnt = cap.buf[4] | cap.buf[5] << 8;
	CHECK(cnt >= 1 && cnt <= 4);
	CHECK_EQ(cap.len, 4 + 2 + cnt * 4 + 4 + 4);
	CHECK_EQ(cap.buf[6 + cnt * 4], 2);
	CHECK(memcmp(cap.buf + 8 + cnt * 4, "xy", 2) == 0);
	OFF(app, once);
}

/* ------------------------------------------------------------------------
 * The descriptor list.
 */
TEST(descriptors_in_section)
{
	struct trail_event *evs[NEVENTS + 1];
	struct trail_event **start = __start_trail_events;
	struct trail_event **stop = __stop_trail_events, **p;
	size_t nulls = 0, others = 0;
	int n = fire_all(evs);

	CHECK(start < stop);
	for (int i = 0; i < n; i++) {
		int seen = 0;

		for (p = start; p < stop; p++)
			seen += evs[i] && *p == evs[i];
		if (seen != 1) {
			fprintf(stderr, "  %s:%s listed %d times\n",
				metas[i].provider, metas[i].name, seen);
			check_failures++;
		}
	}
	for (p = start; p < stop; p++) {
		if (!*p) {
			nulls++;
			continue;
		}
		others++;
		CHECK_EQ((*p)->abi, TRAIL_EVENT_ABI);
		CHECK(*(const uint32_t *)(*p)->meta == TRAIL_META_MAGIC);
	}
	CHECK_EQ(nulls, 1); /* one translation unit, one NULL entry */
	CHECK_EQ(others, NEVENTS + 2); /* + app:defined and app:emitted, below */
}

/* The constructor handed this object's bounds to trail__register. */
TEST(constructor_registers_bounds)
{
	CHECK_EQ(reg_calls, 1);
	CHECK(reg_start == &__start_trail_events[0]);
	CHECK(reg_stop == &__stop_trail_events[0]);
}

/* At exit the destructor hands the same bounds to trail__unregister. */
TEST(destructor_unregisters_bounds)
{
	int fd[2];
	char c = 0;
	pid_t pid;
	int status;

	CHECK(pipe(fd) == 0);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		unreg_fd = fd[1];
		exit(0); /* runs the destructors, unlike _exit */
	}
	close(fd[1]);
	CHECK(read(fd[0], &c, 1) == 1);
	CHECK_EQ(c, 'u');
	CHECK(read(fd[0], &c, 1) == 0); /* once */
	close(fd[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}


/* TRAIL_EVENT_DEFINE: the descriptor alone, the same blob as TRAIL_EVENT
 * makes for the same fields (the names "defined" and "emitted" have the
 * same length: only those bytes differ), one descriptor however often it
 * is asked for, with its own status word, in the section registration
 * reads. */
TRAIL_EVENT_DEFINE(app, defined, TRAIL_ARGS(int, v, uint64_t, h, const char *, s),
		   TRAIL_FIELDS(trail_field_int(v) trail_field_hex(h) trail_field_string(s)))
TRAIL_EVENT(app, emitted, TRAIL_ARGS(int, v, uint64_t, h, const char *, s),
	    TRAIL_FIELDS(trail_field_int(v) trail_field_hex(h) trail_field_string(s)))

TEST(define_declares_the_same_descriptor)
{
	struct trail_event *d = TRAIL_EVENT_DESC(app, defined), *e;
	const unsigned char *db = d->meta, *eb;
	uint16_t dsize, esize;
	int in_section = 0;

	CHECK(TRAIL_EVENT_DESC(app, defined) == d);
	CHECK(d->state == &trail__state_app_defined);
	CHECK(!trail_enabled(app, defined));
	trail__state_app_emitted = 1;
	cap.calls = 0;
	trail(app, emitted, 1, 2, "x");
	trail__state_app_emitted = 0;
	CHECK_EQ(cap.calls, 1);
	e = cap.ev;
	eb = e->meta;
	memcpy(&dsize, db + 4, 2);
	memcpy(&esize, eb + 4, 2);
	CHECK_EQ(dsize, esize);
	/* header 8, "app\0" 4, then the event name (8 with its NUL) */
	CHECK(memcmp(db, eb, 12) == 0);
	CHECK(memcmp(db + 12, "defined", 8) == 0 && memcmp(eb + 12, "emitted", 8) == 0);
	CHECK(memcmp(db + 20, eb + 20, (size_t)dsize - 20) == 0);
	for (struct trail_event **p = reg_start; p && p < reg_stop; p++)
		in_section |= *p == d;
	CHECK(in_section);
}

TEST_MAIN(CHECK_T(payload_ints), CHECK_T(payload_hex),
	  CHECK_T(payload_array_from_null_is_zeros),
	  CHECK_T(payload_sequence_negative_length_is_empty),
	  CHECK_T(payload_bool_normalized), CHECK_T(payload_ptr_is_8_bytes),
	  CHECK_T(payload_float_double), CHECK_T(payload_string),
	  CHECK_T(payload_string_cut_at_4095), CHECK_T(payload_fixed_array),
	  CHECK_T(payload_sequence), CHECK_T(payload_sequence_cut_at_4096),
	  CHECK_T(payload_expressions_and_renamed_fields),
	  CHECK_T(payload_no_fields), CHECK_T(payload_twelve_arguments),
	  CHECK_T(meta_blob), CHECK_T(meta_blob_golden_no_fields),
	  CHECK_T(meta_blob_golden_field), CHECK_T(events_start_off),
	  CHECK_T(disabled_event_skips_arguments),
	  CHECK_T(enabled_reflects_status_word),
	  CHECK_T(fields_evaluated_once), CHECK_T(descriptors_in_section),
	  CHECK_T(constructor_registers_bounds),
	  CHECK_T(destructor_unregisters_bounds),
	  CHECK_T(define_declares_the_same_descriptor))
