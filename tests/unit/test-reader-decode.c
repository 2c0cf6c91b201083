/* SPDX-License-Identifier: MIT */
/*
 * test-reader-decode.c - the trace file reader (src/tracefile/reader.c) on
 * files built byte by byte by tests/lib/tracebuild.c: the reader decoding
 * well-formed files: a minimal file and every accessor, an empty file, the
 * merge of streams by timestamp (ties to the stream that sorts first), CPU,
 * TIME and LONGID records, and string events.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "reader-check.h"
#include "tracebuild.h"
#include "tracefile/reader.h"

TEST(reader_minimal_file)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {3, 1, 0, 1000, 0, 42, 43, "worker", 0, -1};
	const struct trail_rstream *const *streams;
	const struct trail_rproc *procs;
	const struct trail_revent *ev;
	struct trail_reader *r;
	struct got g[8];
	size_t sec, n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_info(&w, "trail_version=0.1.0\ncommand=ls -l\nmode=discard\n");
	tw_std_events(&w);
	tw_proc(&w, 42, "worker", "/usr/bin/app");
	rb_cpu(&rb, 0, 5);
	rb_ev(&rb, 10, 7);
	rb_ev(&rb, 20, 9);
	sec = tw_chunk(&w, &c, &rb);
	tw_end(&w, 1, 0);

	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 8);
	CHECK_EQ(n, 2);
	CHECK_EQ(g[0].type, TRAIL_RT_EVENT);
	CHECK_EQ(g[0].ts_raw, 1010);   /* base 1000, CPU +0, event +10 */
	CHECK_EQ(g[0].ts_ns, 1010);    /* CLOCK_MONO: ticks are ns */
	CHECK_EQ(g[0].cpu, 5);
	CHECK_EQ(g[0].id, EV_U32);
	CHECK_EQ(g[0].v, 7);
	CHECK_EQ(g[0].len, 4);
	CHECK_EQ(g[0].file_off, sec + CHUNK_REC_OFF + 8); /* after the CPU record */
	CHECK_EQ(g[1].ts_raw, 1030);
	CHECK_EQ(g[1].cpu, 5);
	CHECK_EQ(g[1].v, 9);
	CHECK_EQ(g[1].file_off, sec + CHUNK_REC_OFF + 16);
	CHECK(g[0].st != NULL && g[0].st == g[1].st);
	if (g[0].st) {
		CHECK_EQ(g[0].st->idx, 3);
		CHECK_EQ(g[0].st->gen, 1);
		CHECK_EQ(g[0].st->pid, 42);
		CHECK_EQ(g[0].st->tid, 43);
		CHECK_STR(g[0].st->comm, "worker");
	}
	/* the end stays the end */
	{
		struct trail_record rec;

		CHECK_EQ(trail_reader_next(r, &rec), 0);
		CHECK_EQ(trail_reader_next(r, &rec), 0);
	}
	CHECK_NO_ERRORS(r);

	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->in_file, 2);
	CHECK_EQ(streams[0]->final, 0);
	CHECK_EQ(streams[0]->missing_chunks, 0);
	CHECK_EQ(trail_reader_procs(r, &procs), 1);
	CHECK_EQ(procs[0].pid, 42);
	CHECK_EQ(procs[0].ppid, 1);
	CHECK_EQ(procs[0].exited, 1);
	CHECK_EQ(procs[0].result, 3);
	CHECK_STR(procs[0].comm, "worker");
	CHECK_STR(procs[0].exe, "/usr/bin/app");

	CHECK_STR(trail_reader_info(r, "command"), "ls -l");
	CHECK_STR(trail_reader_info(r, "mode"), "discard");
	CHECK_STR(trail_reader_info(r, "trail_version"), "0.1.0");
	CHECK(trail_reader_info(r, "comman") == NULL);
	CHECK(trail_reader_info(r, "commandx") == NULL);
	CHECK(trail_reader_info(r, "hostname") == NULL);

	ev = trail_reader_event(r, EV_U32);
	CHECK(ev != NULL);
	if (ev) {
		CHECK_STR(ev->meta.provider, "t");
		CHECK_STR(ev->meta.name, "u32");
		CHECK_EQ(ev->meta.nfields, 1);
	}
	CHECK(trail_reader_event(r, EV_FAR) != NULL);
	CHECK(trail_reader_event(r, 2) == NULL);
	CHECK(trail_reader_event(r, 1u << 30) == NULL);

	CHECK_EQ(trail_reader_header(r)->clock, CLOCK_MONO);
	CHECK(trail_reader_header(r)->session_id == 0x5e55105e55105e55ull);
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_empty_file_and_no_chunks)
{
	/* a header alone is a valid (empty, incomplete) file */
	struct tw w = {0};
	struct trail_reader *r;
	struct trail_record rec;
	const struct trail_rstream *const *streams;

	tw_header(&w, CLOCK_MONO, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_reader_next(r, &rec), 0);
	CHECK_EQ(trail_reader_streams(r, &streams), 0);
	CHECK_EQ(trail_reader_complete(r), 0);
	CHECK(trail_reader_info(r, "command") == NULL);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	trail_reader_close(NULL);
	tw_free(&w);
}

TEST(reader_two_streams_interleave)
{
	/* stream idx 2 (B) is written first; idx 1 (A) sorts first and wins
	 * timestamp ties */
	struct tw w = {0};
	struct rb a = {.len = 0}, b = {.len = 0};
	struct chunk_desc ca = {1, 1, 0, 100, 0, 10, 11, "a", 0, -1};
	struct chunk_desc cb = {2, 1, 0, 200, 0, 10, 12, "b", 0, -1};
	static const uint32_t want[] = {1001, 2002, 3001, 4002, 5001, 6002, 7001, 7002};
	const struct trail_rstream *const *streams;
	struct trail_reader *r;
	struct got g[16];
	size_t n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	/* v = ts * 10 + stream */
	rb_ev(&b, 0, 2002);
	rb_ev(&b, 200, 4002);
	rb_ev(&b, 200, 6002);
	rb_ev(&b, 100, 7002);
	tw_chunk(&w, &cb, &b);
	rb_ev(&a, 0, 1001);
	rb_ev(&a, 200, 3001);
	rb_ev(&a, 200, 5001);
	rb_ev(&a, 200, 7001);
	tw_chunk(&w, &ca, &a);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 16);
	CHECK_EQ(n, 8);
	for (size_t i = 0; i < n && i < 8; i++) {
		CHECK_EQ(g[i].v, want[i]);
		CHECK_EQ(g[i].ts_raw, want[i] / 10);
		CHECK_EQ(g[i].st ? g[i].st->idx : 0, want[i] % 10);
	}
	CHECK_EQ(trail_reader_streams(r, &streams), 2);
	CHECK_EQ(streams[0]->idx, 1);
	CHECK_EQ(streams[0]->order, 0);
	CHECK_EQ(streams[1]->idx, 2);
	CHECK_EQ(streams[1]->order, 1);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

TEST(reader_merge_many_streams)
{
	/* 7 streams x 4 chunks with random small deltas (many ties): the
	 * merge yields every event once, ordered by (timestamp, stream
	 * order), each stream in its own record order */
	enum { NS = 7, NC = 4, MAXE = NS * NC * 30 };
	static struct { uint64_t ts; uint32_t st, k; } want[MAXE];
	static struct got g[MAXE + 8];
	struct tw w = {0};
	size_t nwant = 0, n;
	struct trail_reader *r;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	for (uint32_t c = 0; c < NC; c++) {
		for (uint32_t s = 0; s < NS; s++) {
			static uint64_t last[NS];
			struct chunk_desc cd = {s, 1, c, 0, 0, 1, 10 + s, "m", 0, -1};
			struct rb rb = {.len = 0};
			int ne = (int)(rnd() % 30);
			uint64_t ts;

			cd.base_ts = last[s] + rnd() % 5;
			ts = cd.base_ts;
			for (int e = 0; e < ne; e++) {
				uint32_t d = (uint32_t)(rnd() % 4);

				ts += d;
				want[nwant].ts = ts;
				want[nwant].st = s;
				want[nwant].k = s << 16 | c << 8 | (uint32_t)e;
				rb_ev(&rb, d, want[nwant].k);
				nwant++;
			}
			last[s] = ts;
			tw_chunk(&w, &cd, &rb);
		}
	}
	/* expected order: stable sort by (ts, stream) keeps record order */
	for (size_t i = 1; i < nwant; i++)
		for (size_t j = i; j > 0 &&
		     (want[j - 1].ts > want[j].ts ||
		      (want[j - 1].ts == want[j].ts && want[j - 1].st > want[j].st));
		     j--) {
			__typeof__(want[0]) t = want[j];

			want[j] = want[j - 1];
			want[j - 1] = t;
		}
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, MAXE + 8);
	CHECK_EQ(n, nwant);
	for (size_t i = 0; i < n && i < nwant; i++)
		if (g[i].v != want[i].k || g[i].ts_raw != want[i].ts) {
			fprintf(stderr, "  record %zu: v %#x ts %" PRIu64 ", want v %#x ts %" PRIu64 "\n",
				i, g[i].v, g[i].ts_raw, want[i].k, want[i].ts);
			check_failures++;
			break;
		}
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_time_and_cpu_records)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 1000, 0, 1, 2, "t", 0, -1};
	struct trail_reader *r;
	struct got g[16];
	size_t n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_ev(&rb, 5, 1);          /* 1005, no CPU record yet */
	rb_cpu(&rb, 0, 3);
	rb_ev(&rb, 1, 2);          /* 1006 on CPU 3 */
	rb_time(&rb, 50000);       /* absolute time */
	rb_ev(&rb, 3, 3);          /* 50003 */
	rb_cpu(&rb, 2, 9);         /* a CPU record's delta counts: 50005 */
	rb_ev(&rb, 0, 4);          /* 50005 on CPU 9 */
	rb_time(&rb, 10);          /* backwards: a stream never goes back */
	rb_ev(&rb, 1, 5);          /* 50006 */
	rb_ev(&rb, (1u << 22) - 1, 6); /* the largest delta */
	tw_chunk(&w, &c, &rb);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 16);
	CHECK_EQ(n, 6);
	CHECK_EQ(g[0].ts_raw, 1005);
	CHECK_EQ(g[0].cpu, ~0u); /* unknown */
	CHECK_EQ(g[1].ts_raw, 1006);
	CHECK_EQ(g[1].cpu, 3);
	CHECK_EQ(g[2].ts_raw, 50003);
	CHECK_EQ(g[2].cpu, 3);
	CHECK_EQ(g[3].ts_raw, 50005);
	CHECK_EQ(g[3].cpu, 9);
	CHECK_EQ(g[4].ts_raw, 50006);
	CHECK_EQ(g[5].ts_raw, 50006 + (1u << 22) - 1);
	for (size_t i = 0; i < n && i < 6; i++)
		CHECK_EQ(g[i].v, i + 1);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_longid_records)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 1000, 0, 1, 2, "t", 0, -1};
	const struct trail_rstream *const *streams;
	struct trail_reader *r;
	struct got g[8];
	size_t sec, n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_long(&rb, 5, EV_FAR, 77);  /* id 700 has no direct type */
	rb_long(&rb, 1, EV_U32, 88);  /* a small id through LONGID works too */
	rb_ev(&rb, 1, 99);
	sec = tw_chunk(&w, &c, &rb);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 8);
	CHECK_EQ(n, 3);
	CHECK_EQ(g[0].id, EV_FAR);
	CHECK_EQ(g[0].v, 77);
	CHECK_EQ(g[0].len, 4);       /* the id is not part of the payload */
	CHECK_EQ(g[0].ts_raw, 1005);
	CHECK_EQ(g[0].file_off, sec + CHUNK_REC_OFF);
	CHECK_EQ(g[1].id, EV_U32);
	CHECK_EQ(g[1].v, 88);
	CHECK_EQ(g[1].file_off, sec + CHUNK_REC_OFF + 12);
	CHECK_EQ(g[2].id, EV_U32);
	CHECK_EQ(g[2].v, 99);
	CHECK_EQ(g[2].ts_raw, 1007);
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->in_file, 3);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_string_events)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 1000, 0, 1, 2, "t", 0, -1};
	struct trail_reader *r;
	struct trail_record rec;
	uint8_t s[2 + 5];

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_hdr(&rb, 1, REC_EVENT(EV_STR));
	put16(s, 5);
	memcpy(s + 2, "hello", 5);
	rb_raw(&rb, s, 7);
	rb.events++;
	rb_hdr(&rb, 1, REC_EVENT(EV_STR));
	put16(s, 0xffff); /* NULL */
	rb_raw(&rb, s, 2);
	rb.events++;
	rb_ev(&rb, 1, 5);
	tw_chunk(&w, &c, &rb);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_reader_next(r, &rec), 1);
	CHECK_EQ(rec.len, 7);
	CHECK(rec.payload && !memcmp(rec.payload + 2, "hello", 5));
	CHECK_EQ(trail_reader_next(r, &rec), 1);
	CHECK_EQ(rec.len, 2);
	CHECK_EQ(trail_reader_next(r, &rec), 1);
	CHECK_EQ(rec.len, 4);
	CHECK_EQ(get32(rec.payload), 5);
	CHECK_EQ(rec.ts_raw, 1003);
	CHECK_EQ(trail_reader_next(r, &rec), 0);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST_MAIN(CHECK_T(reader_minimal_file),
	  CHECK_T(reader_empty_file_and_no_chunks),
	  CHECK_T(reader_two_streams_interleave),
	  CHECK_T(reader_merge_many_streams),
	  CHECK_T(reader_time_and_cpu_records), CHECK_T(reader_longid_records),
	  CHECK_T(reader_string_events))
