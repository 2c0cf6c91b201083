/* SPDX-License-Identifier: MIT */
/*
 * fuzz-meta.c - libFuzzer target for event description blobs and event
 * patterns: trail__meta_parse, then trail__payload_len over the rest of the
 * input as a payload; the input as an -e pattern for trail__spec_check and
 * matching.
 */
#include <stdint.h>
#include <string.h>

#include "common/meta.h"
#include "common/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trail_meta m;
	const char *why;
	char pat[256];
	size_t len;

	if (trail__meta_parse(data, size, &m, &why) == 0)
		trail__payload_len(&m, data + m.size, size - m.size, &len);
	len = size < sizeof(pat) - 1 ? size : sizeof(pat) - 1;
	memcpy(pat, data, len);
	pat[len] = '\0';
	if (strlen(pat) && !trail__spec_check(pat, &why))
		trail__spec_match1(pat, strlen(pat), "provider", "event");
	trail__glob(pat, strlen(pat), "some_event_name", 15);
	return 0;
}
