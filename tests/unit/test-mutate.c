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
#define FUZZ_NO_MAIN
#include "../fuzz/fuzz-reader.c"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "common/crc32c.h"
#include "common/tracefile.h"

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
			s.crc = trail__crc32c(0, buf + o + sizeof(s), (size_t)s.len);
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
	CHECK_EQ(n, 1652);  /* the entries-in-buffer of this file */
	CHECK(lost > 0);    /* it has [LOST N EVENTS] markers */
	CHECK_EQ(trail_reader_errors(r, &errs), 0);
	CHECK(trail_reader_complete(r));
	trail_reader_close(r);
	close(fd);
	free(p);
}

TEST_MAIN(CHECK_T(mutate_small_trace), CHECK_T(mutate_lossy_multichunk_trace),
	  CHECK_T(unmutated_corpus_reads_clean))
