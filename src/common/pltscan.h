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

/*
 * Calls through the GOT (-fno-plt): `call *slot(%rip)` (ff 15 disp32) or
 * `jmp *slot(%rip)` (ff 25, a tail call, and the entries of .plt.got),
 * where slot is filled by an R_X86_64_GLOB_DAT relocation. That slot also
 * serves as the function's address wherever the object takes it (a mov,
 * lea-less load or cmp through the same slot), so it is a call site only
 * if nothing else reads it: writing a stub's address there would change
 * the address the program compares or hands out.
 *
 * The code is not decoded: every 4-byte window of the executable sections
 * is read as a disp32 that an instruction ending k bytes after it
 * (k = 0, 1, 2, 4: no immediate, imm8, imm16, imm32) would aim at a slot.
 * A window aimed at a slot with k = 0 right after ff 15 / ff 25 is a call;
 * any other is a use. Windows that are not instructions only add uses,
 * which leave a slot unhooked: the rule errs on the side of not hooking.
 */
struct trail_gotslot {
	uint64_t slot;  /* link-time address */
	uint32_t sym;   /* its relocation's symbol */
	uint32_t use;   /* TRAIL_GOT_CALL | TRAIL_GOT_OTHER */
};
#define TRAIL_GOT_CALL 1u
#define TRAIL_GOT_OTHER 2u

/* The slots of rela's R_X86_64_GLOB_DAT relocations whose symbol keep
 * takes (keep(arg, symbol index) non-zero: an imported function), into v
 * (room for nrela), sorted by address, one per slot, use 0. Returns how
 * many. */
size_t trail__got_slots(const void *rela, size_t nrela, struct trail_gotslot *v,
			int (*keep)(void *arg, uint32_t sym), void *arg);

/* Marks in v (n, sorted: trail__got_slots) the uses the code (len bytes at
 * link-time address addr) makes of each slot; called once per executable
 * section. */
void trail__got_uses(const uint8_t *code, uint64_t addr, size_t len, struct trail_gotslot *v,
		     size_t n);

/* Is slot s, its uses marked in every executable section, a call site? */
static inline int trail__got_is_call(const struct trail_gotslot *s)
{
	return s->use == TRAIL_GOT_CALL;
}

/* Is a call to this imported function hooked? Not those that return
 * twice (setjmp, vfork: the second return would find its shadow frame
 * gone) or that take the stack apart (the unwinder's entry points). */
int trail__plt_hookable(const char *name);

#endif /* TRAIL_COMMON_PLTSCAN_H */
