/* SPDX-License-Identifier: MIT */
/*
 * test-reader-damage.c - the trace file reader (src/tracefile/reader.c) on
 * files built byte by byte by tests/lib/tracebuild.c: damage inside a
 * chunk, one table row per kind of damage: reported with the file offset
 * where it is, everything before it still delivered, the other streams
 * untouched.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "reader-check.h"
#include "tracebuild.h"
#include "tracefile/reader.h"

/*
 * Damage inside a chunk: one row per kind. Stream A's chunk holds the
 * records below (MARK: where the damage is); stream B holds one good
 * event, which must always be delivered.
 */
enum op {
	END_OPS,
	EV,      /* event 0, v = a */
	RAW,     /* a bytes of 0xee */
	HDR,     /* a record header of type a, no payload */
	LONG,    /* LONGID record for id a, payload v = 0 */
	STR,     /* event 1 whose string length says a, with 3 bytes */
	MARK,    /* the damage starts here */
};

static const struct dmg_row {
	const char *what;
	struct {
		enum op op;
		uint32_t a;
	} ops[6];
	int events;         /* header's count; -1: as recorded */
	uint32_t want[3];   /* values delivered from stream A */
	int nwant;
	const char *msg;
} dmg_rows[] = {
	{"unknown record type 5", {{EV, 1}, {MARK, 0}, {HDR, 5}, {RAW, 4}, {EV, 2}},
	 -1, {1}, 1, "unknown record type 5"},
	{"record type 0", {{EV, 1}, {MARK, 0}, {HDR, 0}, {RAW, 4}},
	 -1, {1}, 1, "unknown record type 0"},
	{"record type 7", {{EV, 1}, {EV, 2}, {MARK, 0}, {HDR, 7}, {RAW, 8}},
	 -1, {1, 2}, 2, "unknown record type 7"},
	{"undescribed event id", {{EV, 1}, {MARK, 0}, {HDR, 8 + 5}, {RAW, 4}},
	 -1, {1}, 1, "record of undescribed event id 5"},
	{"undescribed long id", {{EV, 1}, {MARK, 0}, {LONG, 701}},
	 -1, {1}, 1, "record of undescribed event id 701"},
	{"payload past the chunk end", {{EV, 1}, {MARK, 0}, {HDR, 8}, {RAW, 2}},
	 -1, {1}, 1, "event payload runs past the end of its chunk"},
	{"string past the chunk end", {{EV, 1}, {MARK, 0}, {STR, 100}},
	 -1, {1}, 1, "event payload runs past the end of its chunk"},
	{"string over 4095", {{EV, 1}, {MARK, 0}, {STR, 5000}, {RAW, 4997}},
	 -1, {1}, 1, "event payload runs past the end of its chunk"},
	{"record header cut short", {{EV, 1}, {MARK, 0}, {RAW, 2}},
	 -1, {1}, 1, "record header cut short"},
	{"time record cut short", {{EV, 1}, {MARK, 0}, {HDR, 1}, {RAW, 4}},
	 -1, {1}, 1, "time record cut short"},
	{"cpu record cut short", {{EV, 1}, {MARK, 0}, {HDR, 2}, {RAW, 2}},
	 -1, {1}, 1, "cpu record cut short"},
	{"longid record cut short", {{EV, 1}, {MARK, 0}, {HDR, 3}, {RAW, 2}},
	 -1, {1}, 1, "event record cut short"},
	/* count mismatches: every record is read, then the chunk is
	 * reported at the start of its records */
	{"header claims more events", {{MARK, 0}, {EV, 1}, {EV, 2}},
	 3, {1, 2}, 2, "header says 3 events, 2 found"},
	{"header claims fewer events", {{MARK, 0}, {EV, 1}, {EV, 2}},
	 1, {1, 2}, 2, "header says 1 events, 2 found"},
};

TEST(reader_damage_in_chunks)
{
	for (size_t i = 0; i < sizeof(dmg_rows) / sizeof(dmg_rows[0]); i++) {
		const struct dmg_row *d = &dmg_rows[i];
		struct chunk_desc ca = {1, 1, 0, 1000, 0, 5, 6, "a", 0, d->events};
		static struct rb rb;
		struct tw w = {0};
		struct trail_reader *r;
		static struct got g[16];
		uint32_t mark = 0;
		size_t sec, n, na = 0, nb = 0;
		int f0 = check_failures;

		rb.len = rb.events = 0;
		for (int k = 0; k < 6 && d->ops[k].op != END_OPS; k++) {
			uint32_t a = d->ops[k].a;
			uint8_t s[2];

			switch (d->ops[k].op) {
			case EV:
				rb_ev(&rb, 1, a);
				break;
			case RAW:
				memset(rb.b + rb.len, 0xee, a);
				rb.len += a;
				break;
			case HDR:
				rb_hdr(&rb, 1, a);
				break;
			case LONG:
				rb_long(&rb, 1, a, 0);
				break;
			case STR:
				rb_hdr(&rb, 1, REC_EVENT(EV_STR));
				put16(s, (uint16_t)a);
				rb_raw(&rb, s, 2);
				rb_raw(&rb, "abc", 3);
				break;
			case MARK:
				mark = rb.len;
				break;
			default:
				break;
			}
		}
		tw_header(&w, CLOCK_MONO, 0);
		tw_std_events(&w);
		sec = tw_chunk(&w, &ca, &rb);
		tw_simple_chunk(&w, 2, 0, 1500, 1, 0, 1000);
		r = open_tw(&w);
		if (!r)
			continue;
		n = read_all(r, g, 16);
		for (size_t k = 0; k < n && k < 16; k++) {
			if (g[k].st && g[k].st->idx == 2) {
				nb++;
				CHECK_EQ(g[k].v, 1000);
			} else if (na < 3) {
				CHECK_EQ(g[k].type, TRAIL_RT_EVENT);
				CHECK_EQ(g[k].v, d->want[na]);
				na++;
			} else {
				na++;
			}
		}
		CHECK_EQ(na, d->nwant);
		CHECK_EQ(nb, 1);
		CHECK_ERR(r, sec + CHUNK_REC_OFF + mark, d->msg);
		CHECK_EQ(nerrors(r), 1);
		if (check_failures != f0)
			fprintf(stderr, "  ... in row \"%s\"\n", d->what);
		trail_reader_close(r);
		tw_free(&w);
	}
}

TEST(reader_bad_record_ends_its_stream)
{
	/* reader.h: "a bad record ends its stream there": the stream's
	 * later chunks are not decoded, other streams are */
	struct tw w = {0};
	struct chunk_desc ca = {1, 1, 0, 1000, 0, 5, 6, "a", 0, -1};
	struct rb rb = {.len = 0};
	struct trail_reader *r;
	struct got g[16];
	size_t sec, n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_ev(&rb, 1, 1);
	rb_hdr(&rb, 1, 6); /* unknown type */
	sec = tw_chunk(&w, &ca, &rb);
	tw_simple_chunk(&w, 1, 1, 2000, 2, 1, 50); /* stream A, seq 1 */
	tw_simple_chunk(&w, 2, 0, 1500, 2, 1000, 100); /* stream B */
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 16);
	CHECK_EQ(n, 3);
	CHECK_EQ(g[0].v, 1);
	CHECK_EQ(g[1].v, 100);
	CHECK_EQ(g[2].v, 101);
	CHECK_ERR(r, sec + CHUNK_REC_OFF + 8, "unknown record type 6");
	trail_reader_close(r);
	tw_free(&w);
}

TEST_MAIN(CHECK_T(reader_damage_in_chunks),
	  CHECK_T(reader_bad_record_ends_its_stream))
