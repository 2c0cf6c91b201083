/* SPDX-License-Identifier: MIT */
/*
 * events.h - one event per field kind, for tests/cli/test-header.sh: the
 * same header is compiled as C (prog.c) and as C++ (prog.cc) in every
 * language mode, with warnings as errors.
 */
#ifndef TEST_HEADER_EVENTS_H
#define TEST_HEADER_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trail/trail.h>

TRAIL_EVENT(hdr, ints,
	    TRAIL_ARGS(int8_t, i8, int16_t, i16, int32_t, i32, int64_t, i64,
		       uint8_t, u8, uint16_t, u16, uint32_t, u32, uint64_t, u64),
	    TRAIL_FIELDS(trail_field_int(i8) trail_field_int(i16)
			 trail_field_int(i32) trail_field_int(i64)
			 trail_field_hex(u8) trail_field_hex(u16)
			 trail_field_int(u32) trail_field_hex(u64)))

TRAIL_EVENT(hdr, scalars,
	    TRAIL_ARGS(bool, b, int, flag, const void *, p, float, f, double, d,
		       char, c, long, l, unsigned long long, ull),
	    TRAIL_FIELDS(trail_field_bool(b) trail_field_bool(flag)
			 trail_field_bool(nonnull, p) trail_field_ptr(p)
			 trail_field_float(f) trail_field_float(d)
			 trail_field_int(c) trail_field_int(l)
			 trail_field_hex(ull)))

struct hdr_rec {
	char name[16];
	int16_t xy[2];
};

TRAIL_EVENT(hdr, blobs,
	    TRAIL_ARGS(const char *, s, const struct hdr_rec *, r,
		       const uint8_t *, bytes, const int64_t *, v, size_t, n),
	    TRAIL_FIELDS(trail_field_string(s)
			 trail_field_string(name, r->name)
			 trail_field_array(xy, r->xy, 2)
			 trail_field_array_hex(bytes, 4)
			 trail_field_seq(v, n)
			 trail_field_seq_hex(tail, v + 1, n ? n - 1 : 0)
			 trail_field_int(twice, (n * 2))))

TRAIL_EVENT(hdr, twelve,
	    TRAIL_ARGS(int, a1, int, a2, int, a3, int, a4, int, a5, int, a6,
		       int, a7, int, a8, int, a9, int, a10, int, a11, int, a12),
	    TRAIL_FIELDS(trail_field_int(a1) trail_field_int(a2)
			 trail_field_int(a3) trail_field_int(a4)
			 trail_field_int(a5) trail_field_int(a6)
			 trail_field_int(a7) trail_field_int(a8)
			 trail_field_int(a9) trail_field_int(a10)
			 trail_field_int(a11) trail_field_int(a12)))

/* defined here, called only where pedantic warnings are allowed */
TRAIL_EVENT(hdr, tick, TRAIL_ARGS(), TRAIL_FIELDS())

#endif /* TEST_HEADER_EVENTS_H */
