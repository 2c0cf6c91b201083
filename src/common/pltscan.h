/* SPDX-License-Identifier: MIT */
/*
 * pltscan.h - the library calls of an object: the entries of its PLT
 * (.plt, or .plt.sec when the linker splits it for IBT), each a jump
 * through a GOT slot the dynamic loader fills with the address of an
 * imported function (an R_X86_64_JUMP_SLOT relocation in .rela.plt
 * names the symbol). libtrail hooks a call into a shared library by
 * writing the address of a stub into that slot (fsites.c, fobjs.c), the
 * recorder names the entry after the symbol (symtab.c), `trail list -f`
 * lists it (funcscan.c): one rule for the three.
 *
 * An entry is 16 bytes; its jump `ff 25 disp32` (jmp *disp(%rip)) sits at
 * its start, after an endbr64, and/or behind a bnd prefix (f2). PLT0, the
 * lazy-binding entries of an IBT .plt and .plt.got (GLOB_DAT slots, which
 * also serve as the function's address) match no JUMP_SLOT: never sites.
 *
 * Pure: no allocation, bounds checked, async-signal-safe.
 */
#ifndef TRAIL_COMMON_PLTSCAN_H
#define TRAIL_COMMON_PLTSCAN_H

#include <stddef.h>
#include <stdint.h>

#define TRAIL_PLT_ENTRY 16

/* For each entry of the PLT section code (len bytes, link-time address
 * addr) that jumps through a slot some R_X86_64_JUMP_SLOT relocation of
 * rela (nrela Elf64_Rela, link-time offsets) fills: fn(arg, entry's
 * address, slot's address, the relocation's symbol index); fn returning
 * non-zero stops. Returns the number of such entries seen. */
size_t trail__plt_each(const uint8_t *code, uint64_t addr, size_t len, const void *rela,
		       size_t nrela,
		       int (*fn)(void *arg, uint64_t entry, uint64_t slot, uint32_t sym),
		       void *arg);

/* Is a call to this imported function hooked? Not those that return
 * twice (setjmp, vfork: the second return would find its shadow frame
 * gone) or that take the stack apart (the unwinder's entry points). */
int trail__plt_hookable(const char *name);

#endif /* TRAIL_COMMON_PLTSCAN_H */
