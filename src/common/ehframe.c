/* SPDX-License-Identifier: MIT */
/* ehframe.c - function starts from .eh_frame_hdr (ehframe.h). */
#include "ehframe.h"

#include <string.h>

#define TABLE_ENC 0x3b /* DW_EH_PE_datarel | DW_EH_PE_sdata4 */

/* bytes of a 4- or 8-byte encoded value, 0 for another form */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x03: /* udata4 */
	case 0x0b: /* sdata4 */
		return 4;
	case 0x00: /* absptr (64-bit) */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		return 8;
	default:
		return 0;
	}
}

/* where the table starts (4 + eh_frame_ptr + fde_count) */
static size_t table_off(const uint8_t *hdr)
{
	return 4 + enc_size(hdr[1]) + 4;
}

int trail__ehframe_count(const uint8_t *hdr, size_t len, size_t *n)
{
	uint32_t count;
	size_t t;

	/* version 1, a readable eh_frame_ptr, a 4-byte fde_count, the
	 * table's encoding */
	if (!hdr || len < 4 || hdr[0] != 1 || !enc_size(hdr[1]) ||
	    ((hdr[2] & 0x0f) != 0x03 && (hdr[2] & 0x0f) != 0x0b) || hdr[3] != TABLE_ENC)
		return -1;
	t = table_off(hdr);
	if (len < t)
		return -1;
	memcpy(&count, hdr + 4 + enc_size(hdr[1]), 4);
	if ((uint64_t)count * 8 > len - t)
		return -1;
	*n = count;
	return 0;
}

uint64_t trail__ehframe_start(const uint8_t *hdr, uint64_t hdr_addr, size_t i)
{
	int32_t loc;

	memcpy(&loc, hdr + table_off(hdr) + i * 8, 4);
	return hdr_addr + (uint64_t)(int64_t)loc;
}
