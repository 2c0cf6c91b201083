/* SPDX-License-Identifier: MIT */
/*
 * test-reader-sections.c - the trace file reader (src/tracefile/reader.c)
 * on files built byte by byte by tests/lib/tracebuild.c: damage to
 * sections: files cut at every byte, a byte flipped in every section, a
 * section's type rewritten, damaged section headers stepped over, data
 * after END, holes, version 1 files (section CRC over the payload only),
 * malformed and implausibly long sections.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/crc32c.h"
#include "reader-check.h"
#include "tracebuild.h"
#include "tracefile/reader.h"


/* header, INFO, 3 EVENTs, chunks A0 (2 events), B0 (2), A1 (1), STREAM, END */
struct layout {
	size_t chunk_off[3], chunk_end[3];
	int chunk_events[3];
};

static void build_multi(struct tw *w, struct layout *l)
{
	struct stream_desc s = {0, 1, 100, 200, 0, 1, 0, 0, 2, "thr"};
	static const struct {
		uint32_t stream;
		uint64_t seq, base;
		int n;
		uint32_t v0;
	} ch[3] = {{0, 0, 1000, 2, 0}, {1, 0, 1005, 2, 100}, {0, 1, 2000, 1, 2}};

	tw_header(w, CLOCK_MONO, 0);
	tw_info(w, "command=test\n");
	tw_std_events(w);
	for (int i = 0; i < 3; i++) {
		l->chunk_off[i] = tw_simple_chunk(w, ch[i].stream, ch[i].seq, ch[i].base,
						  ch[i].n, 10, ch[i].v0);
		l->chunk_end[i] = w->len;
		l->chunk_events[i] = ch[i].n;
	}
	tw_stream(w, &s);
	tw_end(w, 1, 0);
}

TEST(reader_truncated_at_every_length)
{
	/* a file cut anywhere: no crash, every chunk wholly before the cut
	 * delivered, one message naming the section the cut is in */
	struct tw w = {0};
	struct layout l;
	size_t starts[32], nstarts = 0;
	int last = -1;

	build_multi(&w, &l);
	/* every section start, the three EVENT sections included */
	{
		size_t off = 64;

		while (off < w.len) {
			uint64_t len;

			starts[nstarts++] = off;
			memcpy(&len, w.b + off + 8, 8);
			off += 16 + (size_t)len;
		}
		starts[nstarts] = w.len;
	}
	for (size_t cut = 0; cut <= w.len; cut++) {
		struct trail_reader *r;
		static struct got g[32];
		char err[512];
		int rc, want_events = 0;
		size_t n, sec = 0;
		int f0 = check_failures;

		r = open_n(&w, cut, &rc, err, sizeof(err));
		if (cut < 64) {
			CHECK_EQ(rc, -EPROTO);
			CHECK(strstr(err, "too short") != NULL);
			continue;
		}
		if (!r) {
			fprintf(stderr, "  cut %zu: open failed: %s\n", cut, err);
			check_failures++;
			continue;
		}
		for (int i = 0; i < 3; i++)
			if (l.chunk_end[i] <= cut)
				want_events += l.chunk_events[i];
		n = read_all(r, g, 32);
		CHECK_EQ(n, want_events);
		/* cutting later never yields less */
		CHECK((int)n >= last);
		last = (int)n;
		while (sec < nstarts && starts[sec + 1] <= cut)
			sec++;
		if (cut == starts[sec] || cut == w.len) {
			CHECK_NO_ERRORS(r); /* a clean section boundary */
		} else {
			CHECK_EQ(nerrors(r), 1);
			CHECK_ERR(r, starts[sec], cut - starts[sec] < 16
							  ? "truncated section header"
							  : "runs past the end of the file");
		}
		CHECK_EQ(trail_reader_complete(r), cut == w.len);
		if (check_failures != f0)
			fprintf(stderr, "  ... cut at %zu of %zu\n", cut, w.len);
		trail_reader_close(r);
		if (check_failures - f0 > 0 && check_failures > 20)
			break;
	}
	tw_free(&w);
}

TEST(reader_flipped_byte_in_a_section)
{
	/* any byte of the second chunk's section changed, its header
	 * included (type, magic, CRC, length): that section is skipped with
	 * a message at its offset, reading resumes at the next one, and the
	 * END's totals say how many events the damage cost */
	struct tw w = {0};
	struct layout l;
	size_t s, e;

	build_multi(&w, &l);
	s = l.chunk_off[1]; /* chunk B0, 2 events */
	e = l.chunk_end[1];
	for (size_t at = s; at < e; at++) {
		for (int bit = 0; bit < 8; bit += 3) {
			struct trail_reader *r;
			static struct got g[32];
			char err[256];
			int rc, f0 = check_failures;

			w.b[at] ^= (uint8_t)(1u << bit);
			r = open_n(&w, w.len, &rc, err, sizeof(err));
			w.b[at] ^= (uint8_t)(1u << bit);
			if (!r) {
				check_failures++;
				continue;
			}
			CHECK_EQ(read_all(r, g, 32), 3); /* A0's 2, A1's 1 */
			CHECK_ERR(r, s, "damaged section");
			CHECK_ERR(r, s, "reading resumes at offset");
			CHECK_ERR(r, ANY_OFFSET, "2 events lost to damage");
			CHECK_EQ(nerrors(r), 2);
			CHECK_EQ(trail_reader_damaged_events(r), 2);
			CHECK_EQ(trail_reader_complete(r), 1); /* END is read */
			if (check_failures != f0)
				fprintf(stderr, "  ... byte %zu bit %d flipped\n", at, bit);
			trail_reader_close(r);
		}
	}
	tw_free(&w);
}

TEST(reader_section_type_rewritten)
{
	/* a section retyped as another kind with its checksum fixed by
	 * version 1's rule (payload only) is still caught: the type is
	 * covered by the header's CRC in version 2 */
	static const uint16_t types[] = {SEC_END, SEC_INFO, SEC_PROC, SEC_STREAM, 99};
	struct tw w = {0};
	struct layout l;

	build_multi(&w, &l);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct trail_reader *r;
		static struct got g[32];
		uint64_t len;
		uint8_t save[4];
		size_t s = l.chunk_off[1];

		memcpy(save, w.b + s, 4);
		put16(w.b + s, types[i]);
		memcpy(&len, w.b + s + 8, 8);
		put32(w.b + s + 4, trail__crc32c(0, w.b + s + 16, (size_t)len));
		r = open_tw(&w);
		memcpy(w.b + s, save, 4);
		if (!r)
			continue;
		CHECK_EQ(read_all(r, g, 32), 3);
		CHECK_ERR(r, s, "checksum mismatch");
		CHECK_EQ(trail_reader_damaged_events(r), 2);
		trail_reader_close(r);
	}
	tw_free(&w);
}

TEST(reader_resumes_after_a_damaged_header)
{
	/* the damaged section's length cannot be trusted: the next section
	 * is found by its magic; garbage between sections is skipped too */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[16];
	size_t s0, s1;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	s0 = tw_simple_chunk(&w, 1, 0, 1001, 2, 1, 100);
	put64(w.b + s0 + 8, 1u << 20); /* its length: 1 MiB */
	s1 = w.len;
	/* 300 bytes of junk holding false magics with bad checksums */
	for (int i = 0; i < 100; i++) {
		static const uint8_t junk[3] = {0x06, 0xa1, 0xd7};

		tw_put(&w, junk, 3);
	}
	tw_simple_chunk(&w, 0, 1, 2000, 1, 1, 2);
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 16), 3);
	CHECK_EQ(g[0].v, 0);
	CHECK_EQ(g[1].v, 1);
	CHECK_EQ(g[2].v, 2);
	CHECK_ERR(r, s0, "reading resumes at offset");
	CHECK(s1 > s0);
	CHECK_ERR(r, ANY_OFFSET, "2 events lost to damage");
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_data_after_end)
{
	/* the recorder writes nothing after END: 1 MiB of zeros there is
	 * damage at its offset, not empty sections */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[8];
	static uint8_t zeros[1 << 20];
	size_t after;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	tw_end(&w, 1, 0);
	after = w.len;
	tw_put(&w, zeros, sizeof(zeros));
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_ERR(r, after, "1048576 bytes after the END section");
	CHECK_EQ(nerrors(r), 1);
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_steps_over_holes)
{
	/* no END, then an 8 GiB hole, then a chunk: the hole is stepped over
	 * (SEEK_DATA), the chunk after it found */
	struct tw w = {0}, tail = {0};
	struct trail_reader *r = NULL;
	struct got g[8];
	char err[256];
	const char *path;
	int fd, rc;
	off_t at;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	at = (off_t)w.len + (8ll << 30);
	tw_simple_chunk(&tail, 0, 1, 2000, 1, 1, 2);
	path = write_file(w.b, w.len);
	fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, tail.b, tail.len, at) != (ssize_t)tail.len) {
		if (fd >= 0)
			close(fd);
		unlink(path);
		SKIP("cannot make an 8 GiB sparse file here");
	}
	close(fd);
	rc = trail_reader_open(path, &r, err, sizeof(err));
	unlink(path);
	CHECK_EQ(rc, 0);
	if (r) {
		CHECK_EQ(read_all(r, g, 8), 3);
		CHECK_ERR(r, w.len, "reading resumes at offset");
		CHECK_EQ(trail_reader_complete(r), 0);
		trail_reader_close(r);
	}
	tw_free(&w);
	tw_free(&tail);
}

TEST(reader_reads_version_1)
{
	/* files of version 1 (CRC of the payload only, no magic) still
	 * read; a high type bit set there is caught as a bad type */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[8];
	size_t s;

	tw_major = 1;
	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	s = tw_simple_chunk(&w, 1, 0, 1001, 1, 1, 100);
	tw_end(&w, 1, 0);
	tw_major = 2;
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 3);
	CHECK_NO_ERRORS(r);
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	w.b[s + 2] = 1;
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_ERR(r, s, "bad section type");
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_malformed_sections)
{
	/* sections whose checksum is right but whose content is not: each
	 * reported and skipped, the scan goes on */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[16];
	uint8_t p[256];
	struct rb rb = {.len = 0};
	struct chunk_desc c = {4, 1, 0, 500, 0, 1, 2, "x", 0, -1};
	size_t s_ev, s_len, s_cnt, s_short, s_end, s_clock, s_proc, s_stream, s_ev2;
	static const struct fdesc u32f[] = {{1, 4, 0, 0, "v"}};

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	/* EVENT 5 with a bad magic */
	put32(p, 5);
	put32(p + 4, 0);
	mk_meta(p + 8, "t", "bad", u32f, 1);
	p[8] ^= 0xff;
	s_ev = tw_sec(&w, SEC_EVENT, p, 8 + 22);
	/* EVENT with an id beyond the limit */
	put32(p, 1u << 22);
	p[8] ^= 0xff;
	s_ev2 = tw_sec(&w, SEC_EVENT, p, 8 + 22);
	/* CHUNK whose commit bytes disagree with the section length */
	rb_ev(&rb, 0, 1);
	s_len = tw_chunk(&w, &c, &rb);
	put64(w.b + s_len + 16 + 8, (uint64_t)1 << 32 | 7); /* commit: 7 bytes */
	fix_crc(&w, s_len);
	/* CHUNK claiming more events than 4-byte records could hold */
	c.events = 3;
	s_cnt = tw_chunk(&w, &c, &rb);
	/* CHUNK too short for its header */
	s_short = tw_sec(&w, SEC_CHUNK, p, 40);
	/* END too short */
	s_end = tw_sec(&w, SEC_END, p, 20);
	/* CLOCK of another clock than the header's */
	s_clock = tw_clock(&w, CLOCK_TSC, 0, 1, NULL, 0);
	/* PROC without a NUL-terminated path */
	memset(p, 'x', 48);
	s_proc = tw_sec(&w, SEC_PROC, p, 48);
	/* STREAM too short */
	s_stream = tw_sec(&w, SEC_STREAM, p, 63);
	/* after all that, a good chunk */
	c.stream = 7;
	c.events = -1;
	rb.len = rb.events = 0;
	rb_ev(&rb, 0, 42);
	tw_chunk(&w, &c, &rb);
	tw_end(&w, 1, 0);

	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 16), 1);
	CHECK_EQ(g[0].v, 42);
	CHECK_ERR(r, s_ev, "malformed EVENT section: bad event description magic");
	CHECK_ERR(r, s_ev2, "malformed EVENT section: event id out of range");
	CHECK_ERR(r, s_len, "chunk length disagrees with its commit word");
	CHECK_ERR(r, s_cnt, "chunk claims more events than it can hold");
	CHECK_ERR(r, s_short, "malformed CHUNK section: too short for a chunk header");
	CHECK_ERR(r, s_end, "malformed END section");
	CHECK_ERR(r, s_clock, "malformed CLOCK section");
	CHECK_ERR(r, s_proc, "malformed PROC section");
	CHECK_ERR(r, s_stream, "malformed STREAM section");
	/* and the END sees the chunks refused above */
	CHECK_ERR(r, ANY_OFFSET, "lost to damage");
	CHECK_EQ(nerrors(r), 10);
	CHECK(trail_reader_event(r, 5) == NULL);
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_section_implausibly_long)
{
	/* a length over 256 MiB is refused even when the file is that big
	 * (sparse here), before its checksum is computed */
	struct tw w = {0};
	struct trail_reader *r = NULL;
	char err[256];
	uint8_t h[16];
	size_t sec;
	int fd, rc;
	const char *path;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
	sec = w.len;
	put16(h, SEC_CHUNK);
	put16(h + 2, 0xd7a1);
	put32(h + 4, 0);
	put64(h + 8, (1ull << 28) + 1);
	tw_put(&w, h, 16);
	path = write_file(w.b, w.len);
	fd = open(path, O_WRONLY);
	if (fd < 0 || ftruncate(fd, (off_t)(w.len + (1ull << 28) + 1)) < 0) {
		unlink(path);
		SKIP("cannot make a 256 MiB sparse file");
	}
	close(fd);
	rc = trail_reader_open(path, &r, err, sizeof(err));
	unlink(path);
	CHECK_EQ(rc, 0);
	if (r) {
		struct got g[4];

		CHECK_EQ(read_all(r, g, 4), 1);
		CHECK_ERR(r, sec, "implausible");
		trail_reader_close(r);
	}
	tw_free(&w);
}

TEST_MAIN(CHECK_T(reader_truncated_at_every_length),
	  CHECK_T(reader_flipped_byte_in_a_section),
	  CHECK_T(reader_section_type_rewritten),
	  CHECK_T(reader_resumes_after_a_damaged_header),
	  CHECK_T(reader_data_after_end), CHECK_T(reader_steps_over_holes),
	  CHECK_T(reader_reads_version_1), CHECK_T(reader_malformed_sections),
	  CHECK_T(reader_section_implausibly_long))
