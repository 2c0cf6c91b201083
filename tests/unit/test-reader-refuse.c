/* SPDX-License-Identifier: MIT */
/*
 * test-reader-refuse.c - the trace file reader (src/tracefile/reader.c) on
 * files built byte by byte by tests/lib/tracebuild.c: files that are not
 * trace files: every header field that makes a file unreadable, one row
 * each, with its message; paths that are no regular file.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/crc32c.h"
#include "reader-check.h"
#include "tracebuild.h"
#include "tracefile/reader.h"

TEST(reader_refuses_bad_files)
{
	static const struct {
		const char *what;
		int off;       /* header byte to change, -1: none */
		uint8_t x;     /* XORed into it */
		int fix_crc;   /* recompute the header CRC afterwards */
		size_t size;   /* bytes kept, SIZE_MAX: all */
		int rc;
		const char *msg;
		int at0;       /* the message names offset 0 */
	} rows[] = {
		{"valid", -1, 0, 0, SIZE_MAX, 0, NULL, 0},
		{"minor 7 (compatible)", 10, 7, 1, SIZE_MAX, 0, NULL, 0},
		{"empty", -1, 0, 0, 0, -EPROTO, "too short", 0},
		{"1 byte", -1, 0, 0, 1, -EPROTO, "too short", 0},
		{"63 bytes", -1, 0, 0, 63, -EPROTO, "too short", 0},
		{"bad magic", 0, 0x01, 1, SIZE_MAX, -EPROTO, "not a trail trace file", 1},
		{"magic in lower case", 7, 0x20, 1, SIZE_MAX, -EPROTO, "not a trail trace file", 1},
		{"bad header CRC", 60, 0x01, 0, SIZE_MAX, -EPROTO, "checksum mismatch", 1},
		{"header byte changed", 16, 0x01, 0, SIZE_MAX, -EPROTO, "checksum mismatch", 1},
		{"padding byte changed", 50, 0x01, 0, SIZE_MAX, -EPROTO, "checksum mismatch", 1},
		{"major 3", 8, 0x01, 1, SIZE_MAX, -EPROTO, "unsupported trace file version 3.0", 0},
		{"major 0", 8, 0x02, 1, SIZE_MAX, -EPROTO, "unsupported trace file version 0.0", 0},
		{"big-endian", 12, 0x03, 1, SIZE_MAX, -EPROTO, "unsupported trace file version", 0},
		{"header size 32", 14, 0x60, 1, SIZE_MAX, -EPROTO, "unsupported trace file version", 0},
		{"clock 3", 28, 0x01, 1, SIZE_MAX, -EPROTO, "unknown clock 3", 0},
		{"clock 0", 28, 0x02, 1, SIZE_MAX, -EPROTO, "unknown clock 0", 0},
	};
	struct tw base = {0};

	tw_header(&base, CLOCK_MONO, 0);
	tw_std_events(&base);
	tw_simple_chunk(&base, 0, 0, 1000, 1, 0, 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tw w = {0};
		struct trail_reader *r;
		char err[512];
		int rc;
		size_t size = rows[i].size == SIZE_MAX ? base.len : rows[i].size;

		tw_put(&w, base.b, base.len);
		if (rows[i].off >= 0)
			w.b[rows[i].off] ^= rows[i].x;
		if (rows[i].fix_crc)
			put32(w.b + 60, trail__crc32c(0, w.b, 60));
		r = open_n(&w, size, &rc, err, sizeof(err));
		if (rc != rows[i].rc || (rows[i].msg && !strstr(err, rows[i].msg)) ||
		    (rows[i].at0 && !strstr(err, "offset 0"))) {
			fprintf(stderr, "  %s: rc %d \"%s\", want %d \"%s\"\n", rows[i].what,
				rc, err, rows[i].rc, rows[i].msg ? rows[i].msg : "");
			check_failures++;
		}
		if (r) {
			struct got g[4];

			CHECK_EQ(read_all(r, g, 4), 1);
		}
		trail_reader_close(r);
		tw_free(&w);
	}
	tw_free(&base);
}

TEST(reader_refuses_non_files)
{
	struct trail_reader *r = (struct trail_reader *)1;
	char err[512];

	CHECK_EQ(trail_reader_open("/nonexistent/trail/trace.dat", &r, err, sizeof(err)),
		 -ENOENT);
	CHECK(r == NULL);
	CHECK(strstr(err, "/nonexistent/trail/trace.dat") != NULL);
	r = (struct trail_reader *)1;
	CHECK_EQ(trail_reader_open("/", &r, err, sizeof(err)), -EINVAL);
	CHECK(r == NULL);
	CHECK(strstr(err, "not a regular file") != NULL);
}

TEST_MAIN(CHECK_T(reader_refuses_bad_files), CHECK_T(reader_refuses_non_files))
