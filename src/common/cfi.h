/* SPDX-License-Identifier: MIT */
/*
 * cfi.h - the unwind row of a PC from an object's .eh_frame, found
 * through .eh_frame_hdr's binary search table (ehframe.h describes it):
 * a small interpreter of the call frame instructions compilers emit on
 * x86-64, for a walk inside the traced process where there is no
 * .sframe.
 *
 * Read: CIE versions 1 and 3 with the augmentations z, R, P, L, S (and
 * none), return address column 16; the instructions advance_loc(1,2,4),
 * def_cfa(_sf), def_cfa_offset(_sf), def_cfa_register, offset(_extended,
 * _extended_sf), restore(_extended), undefined, same_value,
 * remember_state / restore_state (4 deep), nop, GNU_args_size, and rules
 * of other registers than %rbp and the return address whatever they are
 * (their operands skipped). The PLT's def_cfa_expression (%rsp + 8, plus
 * 8 past a point of each 16-byte entry: what GNU ld writes for .plt and
 * .plt.sec) is recognised by its bytes; any other expression for the
 * CFA, %rbp or the return address, set_loc, 64-bit lengths: the PC is
 * not covered (the walk stops there, it does not guess).
 */
#ifndef TRAIL_COMMON_CFI_H
#define TRAIL_COMMON_CFI_H

#include "unwind.h"

/* The row of pc from the .eh_frame_hdr at hdr (len bytes; 0: unknown,
 * then only the table's reads bound it): 0, or -1 when no FDE covers pc
 * or its CFI is not one read here. */
int trail__cfi_find(uint64_t hdr, uint64_t len, uint64_t pc, struct trail_uwrow *row,
		    trail_uw_read rd, void *ctx);

#endif
