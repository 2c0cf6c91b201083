/* SPDX-License-Identifier: MIT */
/*
 * test-mutate.c - the reader against thousands of damaged trace files,
 * without a fuzzer: the corpus files (tests/fuzz/corpus) mutated with a
 * seeded generator, blindly (checksums then catch the damage) and
 * structure-aware (a section's payload mutated and its CRC recomputed, so
 * the damage reaches chunk and record decoding). The reader must never
 * crash, hang or read out of bounds (run under ASan in CI); what it reads
 * must stay bounded by the input.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "common/crc32c.h"
#include "fuzz.h" /* fuzz_reader_one(): tests/fuzz/reader-one.c */
#include "tracefile/layout.h"
#include "tracefile/reader.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint8_t *load(const char *name, size_t *size)
{
	char path[512];
	struct stat st;
	uint8_t *p;
	int fd;

	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/reader/%s", TRAIL_SOURCE_DIR, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	p = malloc((size_t)st.st_size + 64);
	if (p && read(fd, p, (size_t)st.st_size) != st.st_size) {
		free(p);
		p = NULL;
	}
	close(fd);
	*size = (size_t)st.st_size;
	return p;
}

/* offsets of the sections of a well-formed file */
static size_t sections(const uint8_t *p, size_t size, size_t *off, size_t max)
{
	size_t n = 0, o = sizeof(struct trail_file_hdr);

	while (n < max && o + sizeof(struct trail_sec) <= size) {
		struct trail_sec s;

		memcpy(&s, p + o, sizeof(s));
		if (s.len > size - o - sizeof(s))
			break;
		off[n++] = o;
		o += sizeof(s) + s.len;
	}
	return n;
}

static void mutate_bytes(uint8_t *p, size_t from, size_t len)
{
	int k = 1 + (int)(rnd() % 8);

	if (!len)
		return;
	while (k--) {
		size_t i = from + rnd() % len;

		switch (rnd() % 4) {
		case 0: p[i] ^= (uint8_t)(1u << (rnd() % 8)); break;
		case 1: p[i] = (uint8_t)rnd(); break;
		case 2: p[i] = 0xff; break;
		default: p[i] = 0; break;
		}
	}
}

static void run_file(const char *name, int rounds)
{
	size_t size, off[4096];
	uint8_t *orig = load(name, &size), *buf;
	size_t nsec;

	CHECK(orig != NULL);
	if (!orig)
		return;
	nsec = sections(orig, size, off, 4096);
	CHECK(nsec > 3);
	buf = malloc(size + 64);
	for (int r = 0; r < rounds; r++) {
		size_t len = size;

		memcpy(buf, orig, size);
		switch (r % 4) {
		case 0: /* blind */
			mutate_bytes(buf, 0, size);
			break;
		case 1: { /* structure-aware: keep the CRC right */
			size_t o = off[rnd() % nsec];
			struct trail_sec s;

			memcpy(&s, buf + o, sizeof(s));
			mutate_bytes(buf, o + sizeof(s), (size_t)s.len);
			s.crc = trail__sec_crc(&s, buf + o + sizeof(s), (size_t)s.len, NULL, 0);
			memcpy(buf + o, &s, sizeof(s));
			break;
		}
		case 2: /* cut */
			len = (size_t)(rnd() % size);
			break;
		default: { /* a section's length field */
			size_t o = off[rnd() % nsec];
			uint64_t l = rnd() % 4 ? rnd() % 512 : rnd();

			memcpy(buf + o + 8, &l, 8);
			break;
		}
		}
		fuzz_reader_one(buf, len);
	}
	free(buf);
	free(orig);
}

TEST(mutate_small_trace)
{
	run_file("example.dat", 6000);
}

TEST(mutate_lossy_multichunk_trace)
{
	run_file("lossy.dat", 3000);
}

TEST(unmutated_corpus_reads_clean)
{
	size_t size;
	uint8_t *p = load("lossy.dat", &size);
	struct trail_reader *r;
	struct trail_record rec;
	const char *const *errs;
	char err[256], path[64];
	const struct trail_rstream *const *st;
	uint64_t in_file = 0;
	int fd, n = 0, lost = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	fd = memfd_create("t", 0);
	CHECK(write(fd, p, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	CHECK_EQ(trail_reader_open(path, &r, err, sizeof(err)), 0);
	while (trail_reader_next(r, &rec) > 0) {
		n += rec.type == TRAIL_RT_EVENT;
		lost += rec.type == TRAIL_RT_LOST;
	}
	for (size_t i = 0, ns = trail_reader_streams(r, &st); i < ns; i++)
		in_file += st[i]->in_file;
	CHECK(n > 500);
	CHECK_EQ(n, in_file); /* the entries-in-buffer of this file */
	CHECK(lost > 0);    /* it has [LOST N EVENTS] markers */
	CHECK_EQ(trail_reader_errors(r, &errs), 0);
	CHECK(trail_reader_complete(r));
	trail_reader_close(r);
	close(fd);
	free(p);
}

/*
 * The single-byte-flip property: every byte of a trace file matters, so
 * changing any one of them is either refused at open or reported as
 * damage; and what is still printed is the original's, never an invented
 * or altered event. Lines carry raw timestamps: a damaged CLOCK section
 * changes only their conversion.
 */
struct lines {
	char *text;
	size_t len, n;
	int opened, complete;
	size_t errors;
};

static void lines_read(const uint8_t *data, size_t size, struct lines *l)
{
	struct trail_reader *r;
	struct trail_record rec;
	const char *const *errs;
	char err[256], path[64], fields[4096];
	int fd = memfd_create("flip", MFD_CLOEXEC);
	FILE *f;

	memset(l, 0, sizeof(*l));
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	f = open_memstream(&l->text, &l->len);
	if (trail_reader_open(path, &r, err, sizeof(err)) == 0) {
		l->opened = 1;
		while (trail_reader_next(r, &rec) > 0) {
			if (rec.type != TRAIL_RT_EVENT)
				continue;
			trail_format_fields(rec.event, rec.payload, rec.len, fields, sizeof(fields));
			fprintf(f, "%u %" PRIu64 " %s:%s: %s\n", rec.stream->tid, rec.ts_raw,
				rec.event->meta.provider, rec.event->meta.name, fields);
			l->n++;
		}
		l->errors = trail_reader_errors(r, &errs);
		l->complete = trail_reader_complete(r);
		trail_reader_close(r);
	}
	fclose(f);
	close(fd);
}

/* Is every line of sub in full, in the same order? */
static int subsequence(const char *sub, const char *full)
{
	while (*sub) {
		size_t len = strcspn(sub, "\n") + 1;

		/* the next line of full that equals this one */
		while (*full && strncmp(full, sub, len))
			full += strcspn(full, "\n") + 1;
		if (!*full)
			return 0;
		full += len;
		sub += len;
	}
	return 1;
}

static void flip_every_byte(const char *name, const uint8_t *xors, int nx, size_t stride)
{
	size_t size;
	uint8_t *p = load(name, &size);
	struct lines orig, got;
	int bad = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	lines_read(p, size, &orig);
	CHECK(orig.opened && orig.complete && !orig.errors && orig.n > 10);
	for (size_t at = 0; at < size && bad < 10; at += stride) {
		for (int k = 0; k < nx; k++) {
			p[at] ^= xors[k];
			lines_read(p, size, &got);
			p[at] ^= xors[k];
			if (got.opened && !got.errors) {
				fprintf(stderr, "  %s: byte %zu ^ 0x%02x: no error reported (%zu events, "
					"complete %d)\n", name, at, xors[k], got.n, got.complete);
				bad++;
			} else if (got.opened && !subsequence(got.text, orig.text)) {
				fprintf(stderr, "  %s: byte %zu ^ 0x%02x: an event line that is not "
					"in the original\n", name, at, xors[k]);
				bad++;
			}
			free(got.text);
		}
	}
	CHECK_EQ(bad, 0);
	free(orig.text);
	free(p);
}

TEST(flip_every_byte_small_trace)
{
	static const uint8_t x[] = {0x01, 0x80, 0xff};

	flip_every_byte("example.dat", x, 3, 1);
}

TEST(flip_every_byte_lossy_trace)
{
	static const uint8_t x[] = {0x10};

	/* every 7th byte: each section and record is hit, in a few seconds */
	flip_every_byte("lossy.dat", x, 1, 7);
}

TEST_MAIN(CHECK_T(mutate_small_trace), CHECK_T(mutate_lossy_multichunk_trace),
	  CHECK_T(unmutated_corpus_reads_clean), CHECK_T(flip_every_byte_small_trace),
	  CHECK_T(flip_every_byte_lossy_trace))
