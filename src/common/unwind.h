/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - one unwind row: how to find a frame's caller at one PC, as
 * the table readers give it (sframe.c from .sframe, cfi.c from .eh_frame)
 * and libtrail's stack walk (src/lib/fstack.c) uses it. Only what a
 * backtrace needs on x86-64: the CFA (the caller's stack pointer), the
 * return address and the caller's %rbp, which compilers keep as offsets
 * from the CFA. Anything a row cannot say is a table the readers refuse:
 * the walk stops there rather than guess.
 *
 * The tables are read through rd(ctx, addr, buf, n): the n bytes at addr
 * or non-zero; libtrail's reader is fault-safe (a table in an object
 * unmapped meanwhile is a failed read), the unit tests' a byte array.
 */
#ifndef TRAIL_COMMON_UNWIND_H
#define TRAIL_COMMON_UNWIND_H

#include <stddef.h>
#include <stdint.h>

typedef int (*trail_uw_read)(void *ctx, uint64_t addr, void *buf, size_t n);

/* the CFA's register: the DWARF numbers of x86-64 */
#define TRAIL_UW_FP 6 /* %rbp */
#define TRAIL_UW_SP 7 /* %rsp */

struct trail_uwrow {
	uint8_t cfa_reg;  /* TRAIL_UW_SP or TRAIL_UW_FP */
	uint8_t fp_saved; /* the caller's %rbp at CFA + fp_off (else: unchanged) */
	uint8_t ra_undef; /* no caller: the outermost frame (_start) */
	/* the PLT's CFA (its DWARF expression, or a repetitive SFrame
	 * block): cfa_off, plus 8 when (pc & 15) >= plt_k; 0: no */
	uint8_t plt_k;
	int32_t cfa_off;
	int32_t ra_off;   /* the return address at CFA + ra_off */
	int32_t fp_off;
};

#endif
