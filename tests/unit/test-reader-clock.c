/* SPDX-License-Identifier: MIT */
/*
 * test-reader-clock.c - the trace file reader (src/tracefile/reader.c) on
 * files built byte by byte by tests/lib/tracebuild.c: the TSC clock: ticks
 * -> CLOCK_MONOTONIC by the CLOCK sections' sync points (interpolation
 * between neighbours, the slope of the nearest two outside them, mult/shift
 * with one point).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "reader-check.h"
#include "tracebuild.h"
#include "tracefile/reader.h"

static struct trail_reader *tsc_file(const uint64_t (*sync)[2], uint32_t n,
				     uint32_t shift, uint32_t mult)
{
	struct tw w = {0};
	struct trail_reader *r;

	tw_header(&w, CLOCK_TSC, 0);
	tw_clock(&w, CLOCK_TSC, shift, mult, sync, n);
	tw_std_events(&w);
	r = open_tw(&w);
	tw_free(&w);
	return r;
}

TEST(clock_interpolation_between_points)
{
	/* slope 2 ns/tick from 1000 to 3000, 0.25 from 3000 to 7000 */
	static const uint64_t sync[][2] = {{1000, 5000}, {3000, 9000}, {7000, 10000}};
	static const uint64_t rows[][2] = {
		{1000, 5000}, {2000, 7000}, {1001, 5002}, {2999, 8998},
		{3000, 9000}, {3004, 9001}, {5000, 9500}, {6999, 9999},
		{7000, 10000},
		/* outside: the slope of the nearest two */
		{11000, 11000}, {7004, 10001}, {0, 3000}, {500, 4000}, {999, 4998},
	};
	struct trail_reader *r = tsc_file(sync, 3, 0, 1);

	if (!r)
		return;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (trail_reader_to_ns(r, rows[i][0]) != rows[i][1]) {
			fprintf(stderr, "  to_ns(%" PRIu64 ") = %" PRIu64 ", want %" PRIu64 "\n",
				rows[i][0], trail_reader_to_ns(r, rows[i][0]), rows[i][1]);
			check_failures++;
		}
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
}

TEST(clock_points_unsorted_and_in_several_sections)
{
	/* the same three points, in two CLOCK sections, out of order */
	static const uint64_t s1[][2] = {{7000, 10000}, {1000, 5000}};
	static const uint64_t s2[][2] = {{3000, 9000}};
	struct tw w = {0};
	struct trail_reader *r;
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 2000, 0, 1, 2, "t", 0, -1};
	struct got g[4];

	tw_header(&w, CLOCK_TSC, 0);
	tw_clock(&w, CLOCK_TSC, 0, 1, s1, 2);
	tw_std_events(&w);
	rb_ev(&rb, 0, 1);
	rb_ev(&rb, 3000, 2);
	tw_chunk(&w, &c, &rb);
	tw_clock(&w, CLOCK_TSC, 0, 1, s2, 1); /* a later CLOCK section */
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_reader_to_ns(r, 2000), 7000);
	CHECK_EQ(trail_reader_to_ns(r, 5000), 9500);
	/* records carry both clocks */
	CHECK_EQ(read_all(r, g, 4), 2);
	CHECK_EQ(g[0].ts_raw, 2000);
	CHECK_EQ(g[0].ts_ns, 7000);
	CHECK_EQ(g[1].ts_raw, 5000);
	CHECK_EQ(g[1].ts_ns, 9500);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(clock_is_monotonic)
{
	/* awkward slopes, one point whose time goes back (dropped: the
	 * mapping must stay monotonic), a sweep of every tick */
	static const uint64_t sync[][2] = {
		{1000, 5000}, {4000, 6001}, {4500, 5000}, {10007, 19999}, {10008, 20000},
		{20011, 20003},
	};
	struct trail_reader *r = tsc_file(sync, 6, 0, 1);
	uint64_t prev = 0;
	int bad = 0;

	if (!r)
		return;
	for (uint64_t t = 0; t < 30000; t++) {
		uint64_t ns = trail_reader_to_ns(r, t);

		if (ns < prev && bad++ < 5)
			fprintf(stderr, "  to_ns(%" PRIu64 ") = %" PRIu64 " < %" PRIu64 "\n", t,
				ns, prev);
		prev = ns;
	}
	CHECK_EQ(bad, 0);
	/* the consistent points are honoured exactly */
	CHECK_EQ(trail_reader_to_ns(r, 1000), 5000);
	CHECK_EQ(trail_reader_to_ns(r, 10007), 19999);
	CHECK_EQ(trail_reader_to_ns(r, 10008), 20000);
	CHECK_EQ(trail_reader_to_ns(r, 20011), 20003);
	trail_reader_close(r);
}

TEST(clock_large_values_exact)
{
	/* 10^12 ticks apart, 3 * 10^11 ns: products beyond 64 bits */
	static const uint64_t sync[][2] = {
		{1000000000000ull, 500000000000000000ull},
		{2000000000000ull, 500000300000000000ull},
	};
	struct trail_reader *r = tsc_file(sync, 2, 0, 1);

	if (!r)
		return;
	CHECK(trail_reader_to_ns(r, 1500000000000ull) == 500000150000000000ull);
	CHECK(trail_reader_to_ns(r, 1000000000001ull) == 500000000000000000ull); /* 0.3 */
	CHECK(trail_reader_to_ns(r, 1000000000010ull) == 500000000000000003ull);
	CHECK(trail_reader_to_ns(r, 1999999999999ull) == 500000299999999999ull); /* floor */
	/* beyond the last point, the same slope */
	CHECK(trail_reader_to_ns(r, 3000000000000ull) == 500000600000000000ull);
	trail_reader_close(r);
}

TEST(clock_one_point_and_none)
{
	/* one point: the kernel's calibration, 1.5 ns/tick (mult 3 >> 1) */
	static const uint64_t one[][2] = {{1000, 1000000}};
	static const uint64_t low[][2] = {{1000, 500}, {2000, 2500}};
	struct trail_reader *r = tsc_file(one, 1, 1, 3);

	if (r) {
		CHECK_EQ(trail_reader_to_ns(r, 1000), 1000000);
		CHECK_EQ(trail_reader_to_ns(r, 3000), 1003000);
		CHECK_EQ(trail_reader_to_ns(r, 0), 998500);
		trail_reader_close(r);
	}
	/* before the first point, never below zero */
	r = tsc_file(low, 2, 0, 1);
	if (r) {
		CHECK_EQ(trail_reader_to_ns(r, 800), 100);
		CHECK_EQ(trail_reader_to_ns(r, 750), 0);
		CHECK_EQ(trail_reader_to_ns(r, 0), 0);
		trail_reader_close(r);
	}
}

TEST(clock_section_without_points)
{
	/* a CLOCK section with the calibration only (n = 0) is well formed:
	 * then ns = ticks * mult >> shift (1.5 ns/tick here). Also the
	 * first CLOCK section of a file, when no sync point is stored yet. */
	struct trail_reader *r = tsc_file(NULL, 0, 1, 3);

	if (!r)
		return;
	CHECK_EQ(trail_reader_to_ns(r, 1000), 1500);
	CHECK(trail_reader_to_ns(r, 1ull << 40) == 3ull << 39);
	CHECK(trail_reader_to_ns(r, 1ull << 62) == 3ull << 61);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
}

TEST(clock_mono_is_identity)
{
	struct tw w = {0};
	struct trail_reader *r;

	tw_header(&w, CLOCK_MONO, 0);
	r = open_tw(&w);
	if (r) {
		CHECK_EQ(trail_reader_to_ns(r, 0), 0);
		CHECK_EQ(trail_reader_to_ns(r, 123456789), 123456789);
		CHECK(trail_reader_to_ns(r, UINT64_MAX) == UINT64_MAX);
		trail_reader_close(r);
	}
	tw_free(&w);
}

TEST_MAIN(CHECK_T(clock_interpolation_between_points),
	  CHECK_T(clock_points_unsorted_and_in_several_sections),
	  CHECK_T(clock_is_monotonic), CHECK_T(clock_large_values_exact),
	  CHECK_T(clock_one_point_and_none),
	  CHECK_T(clock_section_without_points),
	  CHECK_T(clock_mono_is_identity))
