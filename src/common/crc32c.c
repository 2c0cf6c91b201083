/* SPDX-License-Identifier: MIT */
/*
 * crc32c.c - CRC-32C: the SSE4.2 crc32 instruction when the CPU has it,
 * else a table. Both give the standard result (crc32c("123456789") =
 * 0xe3069283), so files move between machines.
 */
#include "crc32c.h"

#include <string.h>


static uint32_t table[256];
static int have_sse42 = -1;

static void init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
		table[i] = c;
	}
#if defined(__x86_64__)
	__builtin_cpu_init();
	have_sse42 = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
	have_sse42 = 0;
#endif
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t hw(uint32_t c, const uint8_t *p,
						     size_t n)
{
	uint64_t c64 = c;

	while (n >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c64 = __builtin_ia32_crc32di(c64, v);
		p += 8;
		n -= 8;
	}
	c = (uint32_t)c64;
	while (n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t trail__crc32c(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint32_t c = ~crc;

	if (__builtin_expect(have_sse42 < 0, 0))
		init();
#if defined(__x86_64__)
	if (have_sse42)
		return ~hw(c, p, n);
#endif
	while (n--)
		c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}
