/* SPDX-License-Identifier: MIT */
/* pltscan.c - the library calls of an object (pltscan.h). */
#include "pltscan.h"
#include "hsort.h"

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

static int slot_before(const void *a, const void *b)
{
	return ((const struct trail_gotslot *)a)->slot < ((const struct trail_gotslot *)b)->slot;
}

size_t trail__got_slots(const void *rela, size_t nrela, struct trail_gotslot *v,
			int (*keep)(void *arg, uint32_t sym), void *arg)
{
	const Elf64_Rela *r = rela;
	size_t n = 0, k = 0;

	if (!r)
		return 0;
	for (size_t i = 0; i < nrela; i++)
		if (ELF64_R_TYPE(r[i].r_info) == R_X86_64_GLOB_DAT && !(r[i].r_offset & 7) &&
		    keep(arg, (uint32_t)ELF64_R_SYM(r[i].r_info)))
			v[n++] = (struct trail_gotslot){r[i].r_offset, (uint32_t)ELF64_R_SYM(r[i].r_info), 0};
	trail__hsort(v, n, sizeof(*v), slot_before);
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1].slot != v[i].slot)
			v[k++] = v[i];
	return k;
}

static struct trail_gotslot *slot_find(struct trail_gotslot *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].slot < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].slot == a ? &v[lo] : NULL;
}

void trail__got_uses(const uint8_t *code, uint64_t addr, size_t len, struct trail_gotslot *v,
		     size_t n)
{
	static const uint8_t ks[] = {0, 1, 2, 4};
	uint64_t lo, span;

	if (!code || !n || len < 4)
		return;
	/* a window's target t + k is a slot only if t is in [lo, lo + span] */
	lo = v[0].slot - 4;
	span = v[n - 1].slot - lo;
	for (size_t i = 0; i + 4 <= len; i++) {
		int32_t d;
		uint64_t t;

		memcpy(&d, code + i, 4);
		t = addr + i + 4 + (uint64_t)(int64_t)d;
		if (t - lo > span)
			continue;
		for (size_t j = 0; j < sizeof(ks); j++) {
			struct trail_gotslot *s = slot_find(v, n, t + ks[j]);

			if (!s)
				continue;
			s->use |= !ks[j] && i >= 2 && code[i - 2] == 0xff &&
					  (code[i - 1] == 0x15 || code[i - 1] == 0x25)
					  ? TRAIL_GOT_CALL : TRAIL_GOT_OTHER;
			break; /* (slots are 8 apart: one k at most) */
		}
	}
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
