/* SPDX-License-Identifier: MIT */
/*
 * memimg.h - an image of memory built byte by byte at address MEMIMG_BASE,
 * for the unit tests of readers that take a read callback (ehframe.c,
 * sframe.c, cfi.c): put() appends, rd() reads it back and refuses
 * anything past what was put. Define MEMIMG_SIZE (bytes) first.
 */
#ifndef TRAIL_TESTS_MEMIMG_H
#define TRAIL_TESTS_MEMIMG_H

#include <stdint.h>
#include <string.h>

#define MEMIMG_BASE 0x10000u

static uint8_t mem[MEMIMG_SIZE];
static size_t used;

/* the reader's callback: the n bytes at addr, or -1 */
static int rd(void *ctx, uint64_t addr, void *buf, size_t n)
{
	(void)ctx;
	if (addr < MEMIMG_BASE || addr - MEMIMG_BASE > used || n > used - (addr - MEMIMG_BASE))
		return -1;
	memcpy(buf, mem + (addr - MEMIMG_BASE), n);
	return 0;
}

static void memimg_reset(void)
{
	used = 0;
	memset(mem, 0, sizeof(mem));
}

static void put(const void *p, size_t n)
{
	memcpy(mem + used, p, n);
	used += n;
}

static inline void p8(uint8_t v) { put(&v, 1); }
static inline void p16(uint16_t v) { put(&v, 2); }
static inline void p32(uint32_t v) { put(&v, 4); }

#endif
