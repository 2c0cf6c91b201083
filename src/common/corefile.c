/* SPDX-License-Identifier: MIT */
/* corefile.c - an ELF core dump's process and trace buffers; see corefile.h. */
#include "corefile.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define NOTES_MAX (16u << 20)
#define PHDRS_MAX 65535u

int trail_core_is(const void *start, size_t n)
{
	Elf64_Ehdr eh;

	if (n < sizeof(eh))
		return 0;
	memcpy(&eh, start, sizeof(eh));
	return !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_type == ET_CORE;
}

/* one note's descriptor d (n bytes): what it says of the process */
static void note(struct trail_core *c, uint32_t type, const uint8_t *d, size_t n, uint64_t *entry,
		 uint8_t **files, size_t *nfiles)
{
	if (type == NT_PRPSINFO && n >= 56) { /* x86-64's elf_prpsinfo */
		memcpy(&c->pid, d + 24, 4);
		memcpy(c->comm, d + 40, 16);
		c->comm[16] = '\0';
	} else if (type == NT_AUXV) {
		for (size_t k = 0; k + 16 <= n; k += 16) {
			uint64_t a[2];

			memcpy(a, d + k, 16);
			if (a[0] == AT_ENTRY)
				*entry = a[1];
		}
	} else if (type == NT_FILE && n >= 16 && !*files && (*files = malloc(n))) {
		memcpy(*files, d, n);
		*nfiles = n;
	}
}

/* NT_FILE: count, page size, count (start, end, page offset), then count
 * NUL-terminated names: the one mapped over entry */
static void exe_of(struct trail_core *c, const uint8_t *files, size_t nfiles, uint64_t entry)
{
	const char *name, *end = (const char *)files + nfiles;
	uint64_t n;

	memcpy(&n, files, 8);
	if (n > (nfiles - 16) / 24)
		return;
	name = (const char *)files + 16 + n * 24;
	for (uint64_t k = 0; k < n && name < end; k++) {
		uint64_t lo, hi;
		const char *z = memchr(name, '\0', (size_t)(end - name));

		if (!z)
			return;
		memcpy(&lo, files + 16 + k * 24, 8);
		memcpy(&hi, files + 16 + k * 24 + 8, 8);
		if (entry >= lo && entry < hi) {
			snprintf(c->exe, sizeof(c->exe), "%s", name);
			return;
		}
		name = z + 1;
	}
}

int trail_core_scan(trail_core_read_fn rd, void *ctx, uint64_t size, struct trail_core *c,
		    const char **why)
{
	uint64_t entry = 0;
	uint8_t *files = NULL;
	size_t nfiles = 0;
	Elf64_Ehdr eh;

	memset(c, 0, sizeof(*c));
	*why = "not an ELF core";
	if (size < sizeof(eh) || rd(ctx, 0, &eh, sizeof(eh)) || !trail_core_is(&eh, sizeof(eh)))
		return -1;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64) {
		c->machine = eh.e_machine;
		*why = "a core of another architecture";
		return -1;
	}
	*why = "a core whose program headers are damaged or cut off";
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum || eh.e_phoff > size ||
	    (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > size - eh.e_phoff)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum && i < PHDRS_MAX; i++) {
		Elf64_Phdr p;
		uint64_t magic;

		if (rd(ctx, eh.e_phoff + i * sizeof(p), &p, sizeof(p)))
			return -1;
		if (p.p_type == PT_LOAD && p.p_filesz >= sizeof(struct trail_arena_hdr) &&
		    p.p_offset <= size && size - p.p_offset >= 8 && c->narenas < TRAIL_CORE_ARENAS &&
		    !rd(ctx, p.p_offset, &magic, 8) && magic == TRAIL_ARENA_MAGIC) {
			c->off[c->narenas] = p.p_offset;
			c->size[c->narenas] = p.p_filesz;
			c->have[c->narenas] = size - p.p_offset < p.p_filesz ? size - p.p_offset
									      : p.p_filesz;
			c->narenas++;
		} else if (p.p_type == PT_NOTE && p.p_filesz && p.p_filesz <= NOTES_MAX &&
			   p.p_offset <= size && p.p_filesz <= size - p.p_offset) {
			uint8_t *b = malloc(p.p_filesz);

			if (!b || rd(ctx, p.p_offset, b, p.p_filesz)) {
				free(b);
				continue;
			}
			for (size_t o = 0; o + sizeof(Elf64_Nhdr) <= p.p_filesz;) {
				Elf64_Nhdr nh;
				size_t d;

				memcpy(&nh, b + o, sizeof(nh));
				d = o + sizeof(nh) + ((nh.n_namesz + 3u) & ~3u);
				if (d > p.p_filesz || nh.n_descsz > p.p_filesz - d)
					break;
				note(c, nh.n_type, b + d, nh.n_descsz, &entry, &files, &nfiles);
				o = d + ((nh.n_descsz + 3u) & ~3u);
			}
			free(b);
		}
	}
	if (files && entry)
		exe_of(c, files, nfiles, entry);
	free(files);
	return 0;
}
