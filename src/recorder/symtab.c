/* SPDX-License-Identifier: MIT */
/* symtab.c - function symbols of an ELF file; see symtab.h. */
#include "symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* from the C++ runtime (libstdc++), as every C++ tool uses it */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static int cmp_sym(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int add_name(struct symtab *t, size_t *cap, const char *s, uint32_t *off)
{
	size_t len = strlen(s) + 1;

	if (t->names_len + len > *cap) {
		size_t nc = *cap ? *cap * 2 : 4096;
		char *nn;

		while (nc < t->names_len + len)
			nc *= 2;
		nn = realloc(t->names, nc);
		if (!nn)
			return -ENOMEM;
		t->names = nn;
		*cap = nc;
	}
	memcpy(t->names + t->names_len, s, len);
	*off = (uint32_t)t->names_len;
	t->names_len += len;
	return 0;
}

int symtab_load(const char *path, struct symtab *t, char *err, size_t errlen)
{
	Elf *e = NULL;
	Elf_Scn *scn = NULL, *pick = NULL;
	GElf_Shdr sh, psh = {0};
	Elf_Data *d;
	size_t cap = 0, names_cap = 0, count;
	int fd, r = 0;

	memset(t, 0, sizeof(*t));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		r = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !pick)) {
			pick = scn;
			psh = sh;
		}
	}
	if (!pick)
		goto out; /* no symbols: nothing to name */
	d = elf_getdata(pick, NULL);
	if (!d || !psh.sh_entsize)
		goto out;
	count = d->d_size / psh.sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		const char *nm, *show;
		char *dem = NULL;
		int st = -1;
		unsigned type;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    !s.st_value)
			continue;
		nm = elf_strptr(e, psh.sh_link, s.st_name);
		if (!nm || !*nm)
			continue;
		if (nm[0] == '_' && nm[1] == 'Z')
			dem = __cxa_demangle(nm, NULL, NULL, &st);
		show = dem && st == 0 ? dem : nm;
		if (t->n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct symtab_sym *ns = realloc(t->syms, nc * sizeof(*ns));

			if (!ns) {
				free(dem);
				r = -ENOMEM;
				goto out;
			}
			t->syms = ns;
			cap = nc;
		}
		t->syms[t->n].addr = s.st_value;
		t->syms[t->n].size = s.st_size;
		if (add_name(t, &names_cap, show, &t->syms[t->n].name)) {
			free(dem);
			r = -ENOMEM;
			goto out;
		}
		t->n++;
		free(dem);
	}
	if (t->n) {
		size_t k = 0;

		qsort(t->syms, t->n, sizeof(*t->syms), cmp_sym);
		for (size_t i = 0; i < t->n; i++) /* one name per address */
			if (!k || t->syms[i].addr != t->syms[k - 1].addr)
				t->syms[k++] = t->syms[i];
		t->n = k;
	}
out:
	if (r)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	if (e)
		elf_end(e);
	close(fd);
	if (r)
		symtab_free(t);
	return r;
}

void symtab_free(struct symtab *t)
{
	free(t->syms);
	free(t->names);
	memset(t, 0, sizeof(*t));
}
