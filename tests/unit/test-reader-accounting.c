/* SPDX-License-Identifier: MIT */
/*
 * test-reader-accounting.c - the trace file reader (src/tracefile/reader.c)
 * on files built byte by byte by tests/lib/tracebuild.c: losses, chunk
 * order and accounting: LOST records (before a chunk and after a stream's
 * last chunk), chunks read in sequence order and de-duplicated, missing
 * chunks, modules loaded and unloaded, STREAM and END sections, and unknown
 * sections skipped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reader-check.h"
#include "tracebuild.h"
#include "tracefile/reader.h"

TEST(reader_lost_before)
{
	struct tw w = {0};
	struct rb r0 = {.len = 0}, r1 = {.len = 0}, r2 = {.len = 0};
	struct chunk_desc c0 = {0, 1, 0, 1000, 3, 1, 2, "t", 0, -1};
	struct chunk_desc c1 = {0, 1, 1, 2000, 17, 1, 2, "t", 0, -1};
	struct chunk_desc c2 = {0, 1, 2, 3000, 4, 1, 2, "t", 0, -1};
	struct trail_reader *r;
	struct got g[16];
	size_t s0, s1, s2, n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_ev(&r0, 1, 1);
	rb_ev(&r1, 5, 2);
	rb_ev(&r1, 5, 3);
	/* r2: a chunk with no records, only the loss before it */
	s0 = tw_chunk(&w, &c0, &r0);
	s1 = tw_chunk(&w, &c1, &r1);
	s2 = tw_chunk(&w, &c2, &r2);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 16);
	CHECK_EQ(n, 6);
	/* 3 lost before the first chunk, at its base time */
	CHECK_EQ(g[0].type, TRAIL_RT_LOST);
	CHECK_EQ(g[0].lost, 3);
	CHECK_EQ(g[0].ts_raw, 1000);
	CHECK_EQ(g[0].file_off, s0 + 16 + 8); /* the chunk header saying so */
	CHECK_EQ(g[1].type, TRAIL_RT_EVENT);
	CHECK_EQ(g[1].v, 1);
	CHECK_EQ(g[2].type, TRAIL_RT_LOST);
	CHECK_EQ(g[2].lost, 17);
	CHECK_EQ(g[2].ts_raw, 2000);
	CHECK_EQ(g[2].file_off, s1 + 16 + 8);
	CHECK(g[2].st == g[1].st);
	CHECK_EQ(g[3].v, 2);
	CHECK_EQ(g[3].ts_raw, 2005);
	CHECK_EQ(g[4].v, 3);
	CHECK_EQ(g[5].type, TRAIL_RT_LOST);
	CHECK_EQ(g[5].lost, 4);
	CHECK_EQ(g[5].ts_raw, 3000);
	CHECK_EQ(g[5].file_off, s2 + 16 + 8);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_chunks_read_in_seq_order)
{
	struct tw w = {0};
	struct trail_reader *r;
	const struct trail_rstream *const *streams;
	struct got g[8];
	size_t n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	/* drained out of order: seq 2, 0, 1 */
	tw_simple_chunk(&w, 0, 2, 3000, 1, 0, 2);
	tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
	tw_simple_chunk(&w, 0, 1, 2000, 1, 0, 1);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 8);
	CHECK_EQ(n, 3);
	for (size_t i = 0; i < 3 && i < n; i++) {
		CHECK_EQ(g[i].v, i);
		CHECK_EQ(g[i].ts_raw, 1000 * (i + 1));
	}
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->missing_chunks, 0);
	CHECK_EQ(streams[0]->in_file, 3);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

static void check_duplicate(int fuller_first)
{
	/* seq 1 saved twice: salvaged with 1 event, then published with 2;
	 * the fuller copy is read, whatever the file order */
	struct tw w = {0};
	struct rb part = {.len = 0}, full = {.len = 0};
	struct chunk_desc cp = {0, 1, 1, 2000, 0, 1, 2, "t", 0x1 /* salvaged */, -1};
	struct chunk_desc cf = {0, 1, 1, 2000, 0, 1, 2, "t", 0, -1};
	const struct trail_rstream *const *streams;
	struct trail_reader *r;
	struct got g[8];
	size_t n;

	rb_ev(&part, 0, 10);
	rb_ev(&full, 0, 10);
	rb_ev(&full, 1, 11);
	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
	if (fuller_first)
		tw_chunk(&w, &cf, &full);
	tw_chunk(&w, &cp, &part);
	if (!fuller_first)
		tw_chunk(&w, &cf, &full);
	tw_simple_chunk(&w, 0, 2, 3000, 1, 0, 20);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 8);
	CHECK_EQ(n, 4);
	CHECK_EQ(g[0].v, 0);
	CHECK_EQ(g[1].v, 10);
	CHECK_EQ(g[2].v, 11);
	CHECK_EQ(g[3].v, 20);
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->in_file, 4); /* the copy is not counted twice */
	CHECK_EQ(streams[0]->missing_chunks, 0);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_duplicate_chunk_keeps_fuller_copy)
{
	check_duplicate(0);
	check_duplicate(1);
}

TEST(reader_missing_chunks)
{
	struct tw w = {0};
	struct trail_reader *r;
	const struct trail_rstream *const *streams;
	struct got g[8];

	/* discard mode: a gap is damage, reported, events still read */
	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
	tw_simple_chunk(&w, 0, 3, 4000, 2, 1, 3);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 3);
	CHECK_EQ(g[2].v, 4);
	CHECK_ERR(r, ANY_OFFSET, "chunks 1..2 are missing");
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->missing_chunks, 2);
	trail_reader_close(r);
	tw_free(&w);

	/* overwrite mode: the oldest chunks were reclaimed, by design */
	tw_header(&w, CLOCK_MONO, FLAG_OVERWRITE);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 5, 1000, 1, 0, 5);
	tw_simple_chunk(&w, 0, 6, 2000, 1, 0, 6);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_NO_ERRORS(r);
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->missing_chunks, 0);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_missing_leading_chunks)
{
	/* Discard mode: every stream numbers its chunks from 0 (a reused
	 * slot starts again at 0 with a new generation) and nothing reclaims
	 * them, so a stream whose first chunk in the file is seq 2 lost
	 * chunks 0 and 1, exactly like a gap in the middle does. */
	struct tw w = {0};
	struct trail_reader *r;
	const struct trail_rstream *const *streams;
	struct got g[8];

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 2, 3000, 1, 0, 2);
	tw_simple_chunk(&w, 0, 3, 4000, 1, 0, 3);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->missing_chunks, 2);
	CHECK_ERR(r, ANY_OFFSET, "chunks 0..1 are missing");
	trail_reader_close(r);
	tw_free(&w);
}

/* MODULE, SYMBOLS and MODGONE sections: addresses are named by the object
 * that was loaded there at the record's time (dlopen/dlclose in turns). */
TEST(reader_modules_come_and_go)
{
	struct tw w = {0};
	struct trail_reader *r;
	const char *s;
	uint64_t off = 99;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_symbols(&w, 1, 0x1100, 0x20, "main");
	tw_symbols(&w, 2, 0x1100, 0x20, "inner_a");
	tw_symbols(&w, 3, 0x1100, 0x20, "inner_b");
	/* the program, and two plugins in turn at one address: A, B, A */
	tw_module(&w, 42, 1, 0x400000, 0x401000, 0x402000, "/bin/host");
	tw_module(&w, 42, 2, 0x7000000, 0x7001000, 0x7002000, "/p/a.so");
	tw_module(&w, 42, 3, 0x7000000, 0x7001000, 0x7002000, "/p/b.so");
	tw_module(&w, 42, 2, 0x7000000, 0x7001000, 0x7002000, "/p/a.so");
	/* the recorder may write the unloadings after all the loadings */
	tw_modgone(&w, 42, 0x7000000, 0x7001000, 0x7002000, 2000);
	tw_modgone(&w, 42, 0x7000000, 0x7001000, 0x7002000, 3000);
	/* an unloading of something not in the file changes nothing */
	tw_modgone(&w, 42, 0x9000000, 0x9001000, 0x9002000, 1500);
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(nerrors(r), 0);
	s = trail_reader_symbol(r, 42, 0x7001108, 1999, &off);
	CHECK(s && !strcmp(s, "inner_a"));
	CHECK_EQ(off, 8);
	s = trail_reader_symbol(r, 42, 0x7001108, 2000, NULL);
	CHECK(s && !strcmp(s, "inner_b"));
	s = trail_reader_symbol(r, 42, 0x7001100, 2999, NULL);
	CHECK(s && !strcmp(s, "inner_b"));
	s = trail_reader_symbol(r, 42, 0x7001100, 3000, NULL);
	CHECK(s && !strcmp(s, "inner_a"));
	s = trail_reader_symbol(r, 42, 0x7001100, UINT64_MAX - 1, NULL);
	CHECK(s && !strcmp(s, "inner_a"));
	s = trail_reader_symbol(r, 42, 0x401110, 5000, NULL);
	CHECK(s && !strcmp(s, "main"));
	/* outside every object, past a symbol's end, another process */
	CHECK(!trail_reader_symbol(r, 42, 0x7003100, 10, NULL));
	CHECK(!trail_reader_symbol(r, 42, 0x7001120, 10, NULL));
	CHECK(!trail_reader_symbol(r, 43, 0x401110, 10, NULL));
	trail_reader_close(r);
	free(w.b);
}

TEST(reader_stream_sections)
{
	struct tw w = {0};
	struct chunk_desc c = {3, 1, 0, 1000, 2, 42, 43, "old", 0, -1};
	struct rb rb = {.len = 0};
	struct stream_desc s1 = {3, 1, 42, 43, 0, 0, 1, 0, 1, "mid"};
	struct stream_desc s2 = {3, 1, 42, 43, 0, 1, 5, 6, 1, "renamed"};
	struct stream_desc idle = {9, 4, 42, 44, 1, 1, 8, 0, 0, "idle"};
	const struct trail_rstream *const *streams;
	struct trail_reader *r;
	struct got g[8];
	size_t n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_ev(&rb, 1, 1);
	rb_ev(&rb, 1, 2);
	tw_chunk(&w, &c, &rb);
	tw_stream(&w, &s1);
	tw_stream(&w, &s2);   /* a later STREAM section replaces the earlier */
	tw_stream(&w, &idle); /* a stream that never filled a chunk */
	tw_end(&w, 1, 12);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_reader_streams(r, &streams), 2);
	CHECK_EQ(streams[0]->idx, 3);
	CHECK_EQ(streams[0]->dropped, 5);
	CHECK_EQ(streams[0]->overwritten, 6);
	CHECK_EQ(streams[0]->final, 1);
	CHECK_STR(streams[0]->comm, "renamed");
	CHECK_EQ(streams[0]->in_file, 2);
	CHECK_EQ(streams[1]->idx, 9);
	CHECK_EQ(streams[1]->gen, 4);
	CHECK_EQ(streams[1]->tid, 44);
	CHECK_EQ(streams[1]->level, 1);
	CHECK_EQ(streams[1]->dropped, 8);
	CHECK_EQ(streams[1]->in_file, 0);
	CHECK_EQ(trail_reader_complete(r), 1);
	CHECK_EQ(trail_reader_nostream_lost(r), 12);

	/* LOST 2 before the chunk, its events, then the 5 - 2 = 3 drops
	 * after its last chunk; the idle stream shows nothing */
	n = read_all(r, g, 8);
	CHECK_EQ(n, 4);
	CHECK_EQ(g[0].type, TRAIL_RT_LOST);
	CHECK_EQ(g[0].lost, 2);
	CHECK_EQ(g[1].v, 1);
	CHECK_EQ(g[2].v, 2);
	CHECK_EQ(g[3].type, TRAIL_RT_LOST);
	CHECK_EQ(g[3].lost, 3);
	CHECK_EQ(g[3].ts_raw, 1002); /* at the stream's last time */
	CHECK(g[3].st == streams[0]);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_stream_not_final_has_no_tail_loss)
{
	struct tw w = {0};
	struct stream_desc s = {0, 1, 1, 2, 0, 0 /* not final */, 5, 0, 1, "t"};
	struct trail_reader *r;
	struct got g[8];

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	tw_stream(&w, &s);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_EQ(g[1].type, TRAIL_RT_EVENT);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_end_section)
{
	static const struct {
		size_t len;     /* END payload bytes, 0: no END */
		uint32_t complete;
		int want;
		int malformed;
	} rows[] = {
		{0, 0, 0, 0},   /* no END: the recorder did not finish */
		{56, 1, 1, 0},
		{56, 0, 0, 0},
		{56, 2, 0, 0},  /* only 1 means complete */
		{48, 1, 1, 0},  /* before procs_refused was appended */
		{44, 1, 1, 0},  /* up to `complete`: all that matters */
		{64, 1, 1, 0},  /* a newer, longer END */
		{43, 1, 0, 1},  /* `complete` cut: malformed */
		{8, 1, 0, 1},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tw w = {0};
		struct trail_reader *r;
		size_t end = 0;
		int f0 = check_failures;

		tw_header(&w, CLOCK_MONO, 0);
		tw_std_events(&w);
		tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
		if (rows[i].len > 56) {
			uint8_t p[64] = {0};

			put64(p, w.chunks);
			put64(p + 8, w.events);
			put64(p + 16, 12);
			put32(p + 40, rows[i].complete);
			end = tw_sec(&w, SEC_END, p, rows[i].len);
		} else if (rows[i].len) {
			end = tw_end_len(&w, rows[i].complete, 12, rows[i].len);
		}
		r = open_tw(&w);
		if (!r)
			continue;
		CHECK_EQ(trail_reader_complete(r), rows[i].want);
		if (rows[i].want)
			CHECK_EQ(trail_reader_nostream_lost(r), 12);
		if (rows[i].malformed) {
			CHECK_ERR(r, end, "malformed END section");
		} else {
			CHECK_NO_ERRORS(r);
		}
		if (check_failures != f0)
			fprintf(stderr, "  ... END of %zu bytes\n", rows[i].len);
		trail_reader_close(r);
		tw_free(&w);
	}
}

TEST(reader_skips_unknown_sections)
{
	/* a newer writer's section type: skipped without complaint */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[4];

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_sec(&w, 99, "future", 6);
	tw_sec(&w, 0, "", 0);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 4), 2);
	CHECK_EQ(trail_reader_complete(r), 1);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST_MAIN(CHECK_T(reader_lost_before), CHECK_T(reader_chunks_read_in_seq_order),
	  CHECK_T(reader_duplicate_chunk_keeps_fuller_copy),
	  CHECK_T(reader_missing_chunks),
	  CHECK_T(reader_missing_leading_chunks),
	  CHECK_T(reader_modules_come_and_go), CHECK_T(reader_stream_sections),
	  CHECK_T(reader_stream_not_final_has_no_tail_loss),
	  CHECK_T(reader_end_section), CHECK_T(reader_skips_unknown_sections))
