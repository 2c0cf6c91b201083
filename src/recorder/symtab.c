/* SPDX-License-Identifier: MIT */
/*
 * symtab.c - function symbols of an ELF file; see symtab.h. The table is
 * src/common/symrule.h's, the one libtrail selects functions by and
 * `trail list -f` lists them by, so a report names a site as they do.
 */
#include "symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/symrule.h"

/* from the C++ runtime (libstdc++), as every C++ tool uses it */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

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
	struct trail_symrule_ent *v = NULL;
	size_t cap = 0, n = 0, names_cap = 0, count;
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
	if (count > INT32_MAX)
		count = INT32_MAX;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		int cls;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		cls = trail__symrule_class(s.st_info, s.st_shndx,
					   elf_strptr(e, psh.sh_link, s.st_name));
		if (cls < 0)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct trail_symrule_ent *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				r = -ENOMEM;
				goto out;
			}
			v = nv;
			cap = nc;
		}
		v[n++] = (struct trail_symrule_ent){
			.value = s.st_value,
			.size = s.st_size,
			.index = (uint32_t)i,
			.name = s.st_name,
			.rank = trail__symrule_rank(cls, s.st_info, s.st_other, s.st_size),
		};
	}
	/* one entry per address: the winner, with its group's span */
	n = trail__symrule_table(v, n);
	if (n) {
		t->syms = malloc(n * sizeof(*t->syms));
		if (!t->syms) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const char *nm = elf_strptr(e, psh.sh_link, v[i].name);
		char *dem = NULL;
		int st = -1;

		if (nm[0] == '_' && nm[1] == 'Z')
			dem = __cxa_demangle(nm, NULL, NULL, &st);
		t->syms[t->n].addr = v[i].value;
		t->syms[t->n].size = v[i].size;
		r = add_name(t, &names_cap, dem && st == 0 ? dem : nm, &t->syms[t->n].name);
		free(dem);
		if (r)
			goto out;
		t->n++;
	}
out:
	free(v);
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
