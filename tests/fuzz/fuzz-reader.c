/* SPDX-License-Identifier: MIT */
/*
 * fuzz-reader.c - libFuzzer target for the trace file reader: the input is
 * a trace file, read through by fuzz_reader_one() (reader-one.c, which the
 * fuzzer-less tests share); a custom mutator keeps half the mutants'
 * checksums right.
 *
 *   scripts/fuzz.sh, or build-fuzz/tests/fuzz/fuzz-reader DIR tests/fuzz/corpus/reader
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "common/crc32c.h"
#include "tracefile/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_reader_one(data, size);
}

/*
 * Every byte of a version 2 file is checksummed, so a blind mutation is a
 * skipped section and no more. Half the mutants get their section CRCs
 * (and the file header's) made right again, so the damage reaches chunk
 * and record decoding; the other half test the checksums and the resync.
 */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed)
{
	size_t off = sizeof(struct trail_file_hdr);

	size = LLVMFuzzerMutate(data, size, max);
	if (!(seed & 1) || size < off)
		return size;
	{
		struct trail_file_hdr h;

		memcpy(&h, data, sizeof(h));
		h.hdr_crc = trail__crc32c(0, &h, offsetof(struct trail_file_hdr, hdr_crc));
		memcpy(data, &h, sizeof(h));
	}
	while (size - off >= sizeof(struct trail_sec)) {
		struct trail_sec sec;

		memcpy(&sec, data + off, sizeof(sec));
		if (sec.magic != TRAIL_SEC_MAGIC || sec.len > size - off - sizeof(sec))
			break;
		sec.crc = trail__sec_crc(&sec, data + off + sizeof(sec), (size_t)sec.len, NULL, 0);
		memcpy(data + off, &sec, sizeof(sec));
		off += sizeof(sec) + (size_t)sec.len;
	}
	return size;
}
