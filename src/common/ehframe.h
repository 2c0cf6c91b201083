/* SPDX-License-Identifier: MIT */
/*
 * ehframe.h - function starts of a stripped object from its
 * .eh_frame_hdr: the binary search table the linker writes for the
 * unwinder (PT_GNU_EH_FRAME), one entry per FDE, sorted by the address
 * of the code it covers: with unwind tables (on by default on x86-64),
 * every function's start. Used where an executable has no .symtab
 * (libtrail's fsites.c in the process, `trail list -f` on the file).
 *
 * The header: version 1, the encodings of eh_frame_ptr, fde_count and
 * the table, then eh_frame_ptr, fde_count, and fde_count pairs
 * (initial location, FDE address). Read here: fde_count as udata4 or
 * sdata4, eh_frame_ptr as any 4- or 8-byte form, the table as
 * DW_EH_PE_datarel | DW_EH_PE_sdata4 (0x3b, what GNU ld, gold, lld and
 * mold write): locations relative to the header's own address.
 *
 * Pure: no allocation, bounds checked, async-signal-safe.
 */
#ifndef TRAIL_COMMON_EHFRAME_H
#define TRAIL_COMMON_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

/* The table's entries: *n (0 when empty), or -1 if hdr (len bytes, at
 * address hdr_addr) is not a header read here. */
int trail__ehframe_count(const uint8_t *hdr, size_t len, size_t *n);
/* The i-th function start (i < count): hdr_addr + its location. */
uint64_t trail__ehframe_start(const uint8_t *hdr, uint64_t hdr_addr, size_t i);

/* The address of the i-th entry's FDE (i < count). */
uint64_t trail__ehframe_fde(const uint8_t *hdr, uint64_t hdr_addr, size_t i);

/* Is the code the FDE at fde describes entered as a function: at its first
 * address, the CFA is %rsp + 8 (a call just pushed the return address)?
 * 0 for the cold part of a function (gcc's hot/cold splitting gives it an
 * FDE of its own, whose first row is the hot part's frame: CFA %rsp + 80,
 * say), which a jump enters anywhere; 1 otherwise, or when the CFI is not
 * one read here. read(ctx, addr, buf, n): the n bytes at addr, or
 * non-zero (the FDE and its CIE; bounded by the caller's reader). */
int trail__ehframe_is_entry(uint64_t fde, int (*read)(void *ctx, uintptr_t addr, void *buf, size_t n),
			    void *ctx);

#endif /* TRAIL_COMMON_EHFRAME_H */
