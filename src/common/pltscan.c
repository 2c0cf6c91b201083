/* SPDX-License-Identifier: MIT */
/* pltscan.c - the library calls of an object (pltscan.h). */
#include "pltscan.h"

#include <elf.h>
#include <string.h>

/* the GOT slot the entry at code jumps through, or 0 */
static uint64_t entry_slot(const uint8_t *code, uint64_t addr)
{
	size_t k = 0;
	int32_t disp;

	if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa)
		k = 4; /* endbr64 */
	if (code[k] == 0xf2)
		k++;   /* bnd */
	if (code[k] != 0xff || code[k + 1] != 0x25)
		return 0;
	memcpy(&disp, code + k + 2, 4);
	return addr + k + 6 + (uint64_t)(int64_t)disp;
}

size_t trail__plt_each(const uint8_t *code, uint64_t addr, size_t len, const void *rela,
		       size_t nrela,
		       int (*fn)(void *arg, uint64_t entry, uint64_t slot, uint32_t sym),
		       void *arg)
{
	const Elf64_Rela *r = rela;
	size_t seen = 0, hint = 0;

	if (!code || !r || !nrela)
		return 0;
	for (size_t off = 0; off + TRAIL_PLT_ENTRY <= len; off += TRAIL_PLT_ENTRY) {
		uint64_t slot = entry_slot(code + off, addr + off);

		if (!slot)
			continue;
		/* slots come in the order of the entries: look on from the
		 * last one found, then from the start */
		for (size_t n = 0; n < nrela; n++) {
			size_t i = (hint + n) % nrela;

			if (r[i].r_offset != slot || ELF64_R_TYPE(r[i].r_info) != R_X86_64_JUMP_SLOT)
				continue;
			hint = i + 1;
			seen++;
			if (fn(arg, addr + off, slot, (uint32_t)ELF64_R_SYM(r[i].r_info)))
				return seen;
			break;
		}
	}
	return seen;
}

int trail__plt_hookable(const char *name)
{
	static const char *const never[] = {
		"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "savectx",
		"vfork", "__vfork", "getcontext", "swapcontext",
		"__libc_start_main", "__cxa_finalize",
	};

	if (!*name || !strncmp(name, "_Unwind_", 8))
		return 0;
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (!strcmp(name, never[i]))
			return 0;
	return 1;
}
