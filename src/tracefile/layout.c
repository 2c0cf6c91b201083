/* SPDX-License-Identifier: MIT */
/* layout.c - what the trace file's writer and reader compute alike. */
#include "layout.h"

#include "../common/crc32c.h"

uint32_t trail__sec_crc(const struct trail_sec *s, const void *a, size_t alen,
			const void *b, size_t blen)
{
	uint32_t c = trail__crc32c(0, s, 4); /* type, magic */

	c = trail__crc32c(c, &s->len, sizeof(s->len));
	c = trail__crc32c(c, a, alen);
	return trail__crc32c(c, b, blen);
}
