/* SPDX-License-Identifier: MIT */
/* crc32c.h - CRC-32C (Castagnoli) of trace file sections. */
#ifndef TRAIL_COMMON_CRC32C_H
#define TRAIL_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t trail__crc32c(uint32_t crc, const void *p, size_t n);

#endif
