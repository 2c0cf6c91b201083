/* SPDX-License-Identifier: MIT */
/*
 * fuzz-meta.c - libFuzzer target for event description blobs
 * (src/common/meta.c): the input is a blob followed by a payload, as an
 * ELF trail_meta section or a trace file gives them. trail__meta_parse()
 * on the whole input, then trail__payload_len() on what follows the blob,
 * and the type name of every field. Seeds: blobs made by the TRAIL_EVENT
 * macro with the payloads its call sites pack (tests/fuzz/seed-meta.c).
 *
 * Checked besides memory safety: a parsed blob lies within the input and
 * parses the same from an exact-size copy; a payload length stays within
 * what is available, and equals the fixed length for a fixed layout.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/meta.h"
#include "fuzz.h"

int fuzz_meta_one(const uint8_t *data, size_t size)
{
	struct trail_meta m, again;
	const char *why;
	char buf[32];
	size_t len;
	uint8_t *copy;

	if (trail__meta_parse(data, size, &m, &why)) {
		FUZZ_ASSERT(why != NULL);
		return 0;
	}
	FUZZ_ASSERT(m.size <= size && m.nfields <= TRAIL_META_MAX_FIELDS);
	/* the blob alone, with nothing readable past it */
	copy = malloc(m.size);
	if (!copy)
		return 0;
	memcpy(copy, data, m.size);
	FUZZ_ASSERT(trail__meta_parse(copy, m.size, &again, &why) == 0);
	FUZZ_ASSERT(again.nfields == m.nfields && again.fixed_len == m.fixed_len &&
		    again.variable == m.variable);
	free(copy);
	for (uint32_t i = 0; i < m.nfields; i++)
		FUZZ_ASSERT(strlen(trail__field_type(&m.fields[i], buf, sizeof(buf))) <
			    sizeof(buf));
	if (trail__payload_len(&m, data + m.size, size - m.size, &len) == 0) {
		FUZZ_ASSERT(len <= size - m.size);
		FUZZ_ASSERT(m.variable || len == m.fixed_len);
	}
	return 0;
}

#ifndef FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_meta_one(data, size);
}
#endif
