/* SPDX-License-Identifier: MIT */
/*
 * fplt.c - where a library call goes (fplt.h): the definition the
 * dynamic loader would bind an executable's import to, found as it finds
 * it, in the loaded objects' own tables in memory. A lazily bound slot
 * still points into the PLT, and the loader would write over the stub
 * libtrail puts there at the first call; so the hook binds it first.
 * Async-signal-safe: no allocation, no lock but dl_iterate_phdr's.
 */
#include "fplt.h"

#include <elf.h>
#include <link.h>
#include <string.h>

struct want {
	const char *name, *version;
	uintptr_t found;
	int ifunc;
};

/* a d_ptr of obj's dynamic section: the loader relocated most of them in
 * place, not all (the vDSO's, read-only ones) */
static uintptr_t dptr(uintptr_t base, uintptr_t v)
{
	return v && v < base ? v + base : v;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

/* the version defined by verdef entry ndx, or NULL */
static const char *def_version(const uint8_t *vd, size_t count, const char *str, uint16_t ndx)
{
	for (size_t i = 0; vd && i < count; i++) {
		const ElfW(Verdef) *d = (const ElfW(Verdef) *)(const void *)vd;

		if (d->vd_ndx == ndx) {
			const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)(const void *)(vd + d->vd_aux);

			return str + a->vda_name;
		}
		if (!d->vd_next)
			break;
		vd += d->vd_next;
	}
	return NULL;
}

static int lookup(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct want *w = arg;
	uintptr_t base = info->dlpi_addr;
	const ElfW(Dyn) *dyn = NULL;
	const uint32_t *gh = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint16_t *versym = NULL;
	const uint8_t *verdef = NULL;
	size_t ndef = 0;
	uint32_t h, nbuckets, symoff, bloom_size, shift, i;
	const uint64_t *bloom;
	const uint32_t *buckets, *chain;
	(void)size;

	if (w->found || !strncmp(info->dlpi_name, "linux-vdso", 10))
		return w->found != 0;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
	}
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_GNU_HASH: gh = (const uint32_t *)dptr(base, dyn->d_un.d_ptr); break;
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)dptr(base, dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const char *)dptr(base, dyn->d_un.d_ptr); break;
		case DT_VERSYM: versym = (const uint16_t *)dptr(base, dyn->d_un.d_ptr); break;
		case DT_VERDEF: verdef = (const uint8_t *)dptr(base, dyn->d_un.d_ptr); break;
		case DT_VERDEFNUM: ndef = dyn->d_un.d_val; break;
		default: break;
		}
	}
	if (!gh || !symtab || !strtab)
		return 0;
	nbuckets = gh[0];
	symoff = gh[1];
	bloom_size = gh[2];
	shift = gh[3];
	if (!nbuckets || !bloom_size)
		return 0;
	bloom = (const uint64_t *)(const void *)(gh + 4);
	buckets = (const uint32_t *)(const void *)(bloom + bloom_size);
	chain = buckets + nbuckets;
	h = gnu_hash(w->name);
	{
		uint64_t word = bloom[(h / 64) % bloom_size];
		uint64_t mask = (1ull << (h % 64)) | (1ull << ((h >> shift) % 64));

		if ((word & mask) != mask)
			return 0;
	}
	i = buckets[h % nbuckets];
	if (i < symoff)
		return 0;
	for (;; i++) {
		uint32_t h2 = chain[i - symoff];
		const ElfW(Sym) *s = &symtab[i];

		if ((h | 1) == (h2 | 1) && !strcmp(strtab + s->st_name, w->name) &&
		    s->st_shndx != SHN_UNDEF && ELF64_ST_BIND(s->st_info) != STB_LOCAL &&
		    (ELF64_ST_TYPE(s->st_info) == STT_FUNC ||
		     ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC ||
		     ELF64_ST_TYPE(s->st_info) == STT_NOTYPE)) {
			int ok = 1;

			if (versym) {
				const char *v = def_version(verdef, ndef, strtab, versym[i] & 0x7fff);

				if (*w->version)
					/* the version asked for, hidden or not */
					ok = v && !strcmp(v, w->version);
				else
					/* none asked: the default one */
					ok = !(versym[i] & 0x8000);
			}
			if (ok) {
				w->found = base + s->st_value;
				w->ifunc = ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC;
				return 1;
			}
		}
		if (h2 & 1)
			break;
	}
	return 0;
}

uintptr_t trail__plt_resolve(const char *name, const char *version)
{
	struct want w = {name, version ? version : "", 0, 0};

	dl_iterate_phdr(lookup, &w);
	if (w.found && w.ifunc)
		/* the resolver picks the implementation, as the loader has it
		 * do (x86-64: called with no argument) */
		w.found = ((uintptr_t(*)(void))w.found)();
	return w.found;
}
