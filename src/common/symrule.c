/* SPDX-License-Identifier: MIT */
/*
 * symrule.c - which symbol names an address; the rule is in symrule.h.
 * Pure and async-signal-safe: an in-place heapsort (hsort.h), no allocation.
 */
#include "symrule.h"
#include "hsort.h"

#include <elf.h>
#include <string.h>

int trail__symrule_class(unsigned char info, uint16_t shndx, const char *name)
{
	unsigned type = ELF64_ST_TYPE(info);

	if (!name || !*name || shndx == SHN_UNDEF ||
	    (shndx >= SHN_LORESERVE && shndx != SHN_XINDEX))
		return -1;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return TRAIL_SYMRULE_FUNC;
	if (type == STT_NOTYPE)
		return TRAIL_SYMRULE_LABEL;
	return -1;
}

/* rank bits: class (8), binding (4-5), unsized (1), hidden (0) */
uint16_t trail__symrule_rank(int cls, unsigned char info, unsigned char other,
			     uint64_t size, const char *name)
{
	unsigned bind = ELF64_ST_BIND(info), vis = ELF64_ST_VISIBILITY(other);
	unsigned b = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : bind == STB_LOCAL ? 2 : 3;
	const char *at = name ? strchr(name, '@') : NULL;

	return (uint16_t)((unsigned)(cls != TRAIL_SYMRULE_FUNC) << 8 | b << 4 |
			  (unsigned)(at && at[1] != '@') << 3 | (unsigned)!size << 1 |
			  (unsigned)(vis == STV_HIDDEN || vis == STV_INTERNAL));
}

static int cls_of(const struct trail_symrule_ent *e)
{
	return e->rank >> 8 ? TRAIL_SYMRULE_LABEL : TRAIL_SYMRULE_FUNC;
}

int trail__symrule_before(const struct trail_symrule_ent *a,
			  const struct trail_symrule_ent *b)
{
	if (a->shndx != b->shndx)
		return a->shndx < b->shndx;
	if (a->value != b->value)
		return a->value < b->value;
	if (a->rank != b->rank)
		return a->rank < b->rank;
	return a->index < b->index;
}

static int before(const void *a, const void *b)
{
	return trail__symrule_before(a, b);
}

int trail__symrule_covers(uint64_t value, uint64_t span, uint64_t addr)
{
	if (addr < value)
		return 0;
	return span ? addr - value < span : addr - value <= TRAIL_SYMRULE_SLACK;
}

size_t trail__symrule_table(struct trail_symrule_ent *v, size_t n)
{
	size_t k = 0, func = (size_t)-1; /* the last function group kept */

	trail__hsort(v, n, sizeof(*v), before);
	for (size_t i = 0; i < n;) {
		struct trail_symrule_ent g = v[i]; /* the winner: first by the sort */
		size_t j = i + 1;

		for (; j < n && v[j].shndx == g.shndx && v[j].value == g.value; j++)
			if (cls_of(&v[j]) == cls_of(&g) && v[j].size > g.size)
				g.size = v[j].size;
		i = j;
		if (cls_of(&g) == TRAIL_SYMRULE_LABEL && func != (size_t)-1 &&
		    v[func].shndx == g.shndx && trail__symrule_covers(v[func].value, v[func].size, g.value))
			continue; /* a label inside a function */
		if (cls_of(&g) == TRAIL_SYMRULE_FUNC)
			func = k;
		v[k++] = g;
	}
	return k;
}

size_t trail__symrule_upto(const struct trail_symrule_ent *v, size_t n,
			   uint32_t shndx, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].shndx < shndx || (v[mid].shndx == shndx && v[mid].value <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct trail_symrule_ent *trail__symrule_find(const struct trail_symrule_ent *v,
						    size_t n, uint32_t shndx,
						    uint64_t addr)
{
	size_t lo = trail__symrule_upto(v, n, shndx, addr);

	if (!lo || v[lo - 1].shndx != shndx || !trail__symrule_covers(v[lo - 1].value, v[lo - 1].size, addr))
		return NULL;
	return &v[lo - 1];
}

int trail__symrule_crt(const char *name)
{
	static const char *const crt[] = {
		"_start", "_init", "_fini", "deregister_tm_clones", "register_tm_clones",
		"__do_global_dtors_aux", "frame_dummy", "__libc_csu_init", "__libc_csu_fini",
		"_dl_relocate_static_pie",
		/* and the C library's functions that return twice, or on
		 * another stack, or save the return address they were called
		 * with (a hook's, once hooked): setjmp's jmp_buf would send
		 * longjmp to the hook; vfork's child would return through the
		 * parent's frame */
		"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "__setjmp",
		"__sigsetjmp_cancel", "longjmp", "_longjmp", "siglongjmp", "__longjmp",
		"__longjmp_chk", "____longjmp_chk", "__libc_longjmp", "__libc_siglongjmp",
		"vfork", "__vfork", "__libc_vfork", "clone", "__clone", "__clone3",
		"__clone_internal", "getcontext", "setcontext", "swapcontext", "makecontext",
		"__start_context", "__push___start_context", "__restore_rt",
		/* and, as for library calls (pltscan.c), what runs the
		 * program and takes it down */
		"__libc_start_main", "__libc_start_call_main", "__cxa_finalize",
	};

	/* the unwinder reads its own frame's return address (a hook's) */
	if (!strncmp(name, "_Unwind_", 8))
		return 1;
	for (size_t i = 0; i < sizeof(crt) / sizeof(crt[0]); i++)
		if (!strcmp(name, crt[i]))
			return 1;
	return 0;
}
