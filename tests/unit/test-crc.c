/* SPDX-License-Identifier: MIT */
/*
 * test-crc.c - CRC-32C of trace file sections (src/common/crc32c.c).
 *
 * Every trace file section and file header carries a CRC-32C, so a file
 * written on a machine with SSE4.2 must check on one without it. The
 * library picks its path once per process, so the test cannot force the
 * table path; instead it computes the reference itself (a bit-at-a-time
 * loop and a table built here) and demands that whatever path the library
 * took gives the same value for every length and alignment.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/crc32c.h"

/* Castagnoli polynomial 0x1edc6f41, bit-reversed. */
#define POLY 0x82f63b78u

/* Reference 1: one bit at a time, straight from the definition. */
static uint32_t ref_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ POLY : crc >> 1;
	}
	return ~crc;
}

/* Reference 2: the byte-wise table a software fallback would use. */
static uint32_t ref_table_[256];

static void ref_table_init(void)
{
	/* entry i: the register after shifting byte i through, from 0 */
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
		ref_table_[i] = c;
	}
}

static uint32_t ref_table(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--)
		crc = ref_table_[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* xorshift64: deterministic "random" data, the same on every run */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

TEST(crc_reference_self_check)
{
	/* The test's own references must agree before they judge anything;
	 * the table entry for 1 is a documented constant of CRC-32C. */
	ref_table_init();
	CHECK_EQ(ref_table_[0], 0);
	CHECK_EQ(ref_table_[1], 0xf26b8303u);
	CHECK_EQ(ref_table_[128], POLY);
	CHECK_EQ(ref_bitwise(0, (const uint8_t *)"123456789", 9), 0xe3069283u);
	CHECK_EQ(ref_table(0, (const uint8_t *)"123456789", 9), 0xe3069283u);
}

TEST(crc_check_value)
{
	/* the standard check value of CRC-32C */
	CHECK_EQ(trail__crc32c(0, "123456789", 9), 0xe3069283u);
}

TEST(crc_known_vectors)
{
	/* RFC 3720 (iSCSI) appendix B.4 test vectors, 32 bytes each */
	uint8_t buf[32];

	memset(buf, 0, sizeof(buf));
	CHECK_EQ(trail__crc32c(0, buf, 32), 0x8a9136aau);
	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(trail__crc32c(0, buf, 32), 0x62a8ab43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	CHECK_EQ(trail__crc32c(0, buf, 32), 0x46dd794eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	CHECK_EQ(trail__crc32c(0, buf, 32), 0x113fdb5cu);
}

TEST(crc_empty_input)
{
	/* no bytes: the running value passes through unchanged, whatever it
	 * is, and the pointer is not read */
	CHECK_EQ(trail__crc32c(0, "", 0), 0);
	CHECK_EQ(trail__crc32c(0, NULL, 0), 0);
	CHECK_EQ(trail__crc32c(0xe3069283u, NULL, 0), 0xe3069283u);
	CHECK_EQ(trail__crc32c(0xdeadbeefu, "x", 0), 0xdeadbeefu);
}

TEST(crc_matches_reference_all_lengths_and_alignments)
{
	/* lengths around the 8-byte stride of the hardware loop, at every
	 * misalignment, against the test's own table */
	static uint8_t buf[4096 + 16];
	int bad = 0;

	ref_table_init();
	fill(buf, sizeof(buf));
	if (__builtin_cpu_supports("sse4.2"))
		fprintf(stderr, "  # SSE4.2 present: the library takes the crc32 instruction path\n");
	else
		fprintf(stderr, "  # no SSE4.2: the library takes its table path\n");
	for (size_t align = 0; align < 8; align++) {
		for (size_t n = 0; n <= 300; n++) {
			uint32_t want = ref_table(0, buf + align, n);

			if (trail__crc32c(0, buf + align, n) != want) {
				if (bad++ < 5)
					fprintf(stderr, "  mismatch: align %zu len %zu\n", align, n);
			}
		}
		/* a large one, with a non-zero starting value */
		if (trail__crc32c(0x12345678u, buf + align, 4096) !=
		    ref_table(0x12345678u, buf + align, 4096))
			bad++;
	}
	CHECK_EQ(bad, 0);
	/* the bitwise reference agrees on the big buffer too */
	CHECK_EQ(trail__crc32c(0, buf, sizeof(buf)), ref_bitwise(0, buf, sizeof(buf)));
}

TEST(crc_incremental_equals_one_shot)
{
	/* crc(crc(0, a), b) == crc(0, a || b): how the file writer
	 * checksums a section given as two iovecs */
	static uint8_t buf[1024];
	int bad = 0;

	for (int round = 0; round < 40; round++) {
		size_t n = (size_t)(rnd() % sizeof(buf)) + 1;
		uint32_t whole;

		fill(buf, n);
		whole = trail__crc32c(0, buf, n);
		for (size_t k = 0; k <= n; k++) {
			uint32_t c = trail__crc32c(trail__crc32c(0, buf, k), buf + k, n - k);

			if (c != whole && bad++ < 5)
				fprintf(stderr, "  len %zu split %zu: %08x != %08x\n", n, k, c,
					whole);
		}
		/* three pieces, random cuts */
		{
			size_t a = (size_t)(rnd() % (n + 1)), b = (size_t)(rnd() % (n + 1));
			size_t lo = a < b ? a : b, hi = a < b ? b : a;
			uint32_t c = trail__crc32c(0, buf, lo);

			c = trail__crc32c(c, buf + lo, hi - lo);
			c = trail__crc32c(c, buf + hi, n - hi);
			if (c != whole)
				bad++;
		}
	}
	CHECK_EQ(bad, 0);
}

TEST(crc_detects_single_byte_changes)
{
	/* a CRC catches every error burst up to 32 bits: flipping any bits
	 * of any single byte must change the value */
	uint8_t buf[200];
	uint32_t c0;
	int missed = 0;

	fill(buf, sizeof(buf));
	c0 = trail__crc32c(0, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++) {
		for (unsigned x = 1; x < 256; x <<= 1) {
			buf[i] ^= (uint8_t)x;
			if (trail__crc32c(0, buf, sizeof(buf)) == c0)
				missed++;
			buf[i] ^= (uint8_t)x;
		}
		buf[i] ^= 0xff;
		if (trail__crc32c(0, buf, sizeof(buf)) == c0)
			missed++;
		buf[i] ^= 0xff;
	}
	CHECK_EQ(missed, 0);
	CHECK_EQ(trail__crc32c(0, buf, sizeof(buf)), c0);
}

TEST_MAIN(CHECK_T(crc_reference_self_check), CHECK_T(crc_check_value),
	  CHECK_T(crc_known_vectors), CHECK_T(crc_empty_input),
	  CHECK_T(crc_matches_reference_all_lengths_and_alignments),
	  CHECK_T(crc_incremental_equals_one_shot),
	  CHECK_T(crc_detects_single_byte_changes))
