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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "../common/ehframe.h"
#include "../common/pltscan.h"
#include "../common/symrule.h"
#include "../common/util.h"

/* The C++ runtime's demangler (the Itanium ABI's __cxa_demangle, as every
 * C++ tool uses it), from libstdc++ loaded at the first C++ name: a trace
 * of C code, and `trail report`, never relocate libstdc++ (5 ms). */
char *symtab_demangle(const char *mangled, int *status)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	static demangle_fn fn;
	static int tried;

	*status = -1;
	if (!tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

		tried = 1;
		if (h)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
	}
	return fn ? fn(mangled, NULL, NULL, status) : NULL;
}

static int add_name(struct symtab *t, size_t *cap, const char *s, uint32_t *off)
{
	/* (a version in a .symtab's name, memcpy@@GLIBC_2.14: left out, as
	 * libtrail and `trail list -f` name the function) */
	size_t len = strcspn(s, "@") + 1;

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
	memcpy(t->names + t->names_len, s, len - 1);
	t->names[t->names_len + len - 1] = '\0';
	*off = (uint32_t)t->names_len;
	t->names_len += len;
	return 0;
}

/* ------------------------------------------------------- library calls
 * An executable's PLT entries, named after the functions they call
 * (src/common/pltscan.h): libtrail hooks the program's library calls there
 * and records the entry's address. */

struct pltw {
	Elf *e;
	Elf_Data *dynsym;
	size_t strndx;
	int (*fn)(void *arg, uint64_t entry, const char *name);
	void *arg;
	int stop; /* fn said so */
};

static int plt_one(void *arg, uint64_t entry, uint64_t slot, uint32_t sym)
{
	struct pltw *c = arg;
	GElf_Sym s;
	const char *nm;
	(void)slot;

	if (!gelf_getsym(c->dynsym, (int)sym, &s) ||
	    !(nm = elf_strptr(c->e, c->strndx, s.st_name)) || !*nm)
		return 0;
	return c->stop = c->fn(c->arg, entry, nm);
}

/* trail__got_slots: an imported function's slot */
static int got_keep(void *arg, uint32_t sym)
{
	const struct pltw *c = arg;
	GElf_Sym s;

	const char *nm;

	/* (a name never hooked, __libc_start_main's, is no reason to scan) */
	return sym && gelf_getsym(c->dynsym, (int)sym, &s) && s.st_shndx == SHN_UNDEF &&
	       (GELF_ST_TYPE(s.st_info) == STT_FUNC || GELF_ST_TYPE(s.st_info) == STT_GNU_IFUNC) &&
	       (nm = elf_strptr(c->e, c->strndx, s.st_name)) && trail__plt_hookable(nm);
}

/* the calls through e's GOT (-fno-plt; src/common/pltscan.h): fn at each
 * slot only calls use */
static void got_each(Elf *e, Elf_Data *reladyn, struct pltw *c)
{
	size_t nrela = reladyn->d_size / sizeof(Elf64_Rela), n;
	struct trail_gotslot *v;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!nrela || !(v = malloc(nrela * sizeof(*v))))
		return;
	n = trail__got_slots(reladyn->d_buf, nrela, v, got_keep, c);
	while (n && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_EXECINSTR) && (d = elf_getdata(scn, NULL)) && d->d_buf)
			trail__got_uses(d->d_buf, sh.sh_addr, d->d_size, v, n);
	}
	for (size_t i = 0; i < n; i++)
		if (trail__got_is_call(&v[i]) && plt_one(c, v[i].slot, v[i].slot, v[i].sym))
			break;
	free(v);
}

void symtab_plt_each(Elf *e, int (*fn)(void *arg, uint64_t entry, const char *name), void *arg)
{
	struct pltw c = {.e = e, .fn = fn, .arg = arg};
	Elf_Data *rela = NULL, *reladyn = NULL;
	Elf_Scn *scn = NULL, *dsym = NULL;
	GElf_Shdr sh;
	size_t shstr;

	if (elf_getshdrstrndx(e, &shstr))
		return;
	/* .rela.plt (the PLT's slots), .rela.dyn (the GOT's), naming their
	 * symbols in one .dynsym */
	while ((scn = elf_nextscn(e, scn))) {
		const char *nm;
		Elf_Scn *ds;
		GElf_Shdr dsh;
		Elf_Data **to, *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize != sizeof(Elf64_Rela) || !(nm = elf_strptr(e, shstr, sh.sh_name)))
			continue;
		to = !strcmp(nm, ".rela.plt") ? &rela : !strcmp(nm, ".rela.dyn") ? &reladyn : NULL;
		if (!to || *to || !(ds = elf_getscn(e, sh.sh_link)) || (dsym && ds != dsym) ||
		    !gelf_getshdr(ds, &dsh) || dsh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf || !(c.dynsym = elf_getdata(ds, NULL)))
			continue;
		*to = d;
		dsym = ds;
		c.strndx = dsh.sh_link;
	}
	if (!c.dynsym)
		return;
	scn = NULL;
	while (rela && (scn = elf_nextscn(e, scn))) {
		const char *nm;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(nm = elf_strptr(e, shstr, sh.sh_name)) ||
		    (strcmp(nm, ".plt") && strcmp(nm, ".plt.sec")) ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		trail__plt_each(d->d_buf, sh.sh_addr, d->d_size, rela->d_buf,
				rela->d_size / sizeof(Elf64_Rela), plt_one, &c);
		if (c.stop)
			return;
	}
	if (reladyn)
		got_each(e, reladyn, &c);
}

struct pltn {
	struct symtab *t;
	size_t *names_cap, cap, n0; /* the first n0: the symbols, sorted */
	int r;
};

/* a symbol at addr among the first n of t (sorted)? */
static int sym_at(const struct symtab *t, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && t->syms[lo].addr == addr;
}

static int plt_name(void *arg, uint64_t entry, const char *nm)
{
	struct pltn *c = arg;
	char *dem = NULL;
	int st = -1;

	if (sym_at(c->t, c->n0, entry))
		return 0; /* a symbol there names it (a hostile file) */
	if (c->t->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 256;
		struct symtab_sym *nv = realloc(c->t->syms, nc * sizeof(*nv));

		if (!nv) {
			c->r = -ENOMEM;
			return 1;
		}
		c->t->syms = nv;
		c->cap = nc;
	}
	c->t->syms[c->t->n].addr = entry;
	c->t->syms[c->t->n].size = TRAIL_PLT_ENTRY;
	if (nm[0] == '_' && nm[1] == 'Z')
		dem = symtab_demangle(nm, &st);
	c->r = add_name(c->t, c->names_cap, dem && st == 0 ? dem : nm, &c->t->syms[c->t->n].name);
	free(dem);
	if (c->r)
		return 1;
	c->t->n++;
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* t's symbols in address order, one per address (the first of equals) */
static void sort_unique(struct symtab *t)
{
	size_t k = 0;

	qsort(t->syms, t->n, sizeof(*t->syms), sym_cmp);
	for (size_t i = 0; i < t->n; i++)
		if (!k || t->syms[k - 1].addr != t->syms[i].addr)
			t->syms[k++] = t->syms[i];
	t->n = k;
}

/* the PLT entries named, merged in address order */
static int plt_names(Elf *e, struct symtab *t, size_t *names_cap)
{
	struct pltn c = {.t = t, .names_cap = names_cap, .cap = t->n, .n0 = t->n};

	symtab_plt_each(e, plt_name, &c);
	if (t->n != c.n0)
		sort_unique(t); /* (PLT sections overlapping: a hostile file) */
	return c.r;
}

Elf *symtab_debug_elf(Elf *e, int *fd)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	char path[512];

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + noff, "GNU", 4) &&
			    !trail__debug_file((const uint8_t *)d->d_buf + doff, nh.n_descsz, path,
					       sizeof(path))) {
				Elf *de;

				if ((*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
					return NULL;
				if ((de = elf_begin(*fd, ELF_C_READ, NULL)) && elf_kind(de) == ELF_K_ELF)
					return de;
				if (de)
					elf_end(de);
				close(*fd);
				*fd = -1;
				return NULL;
			}
	}
	return NULL;
}

/* the greatest entry of the first n of t at or below addr: does it cover
 * addr? *next gets the address of the entry after it (0: none) */
static int covered(const struct symtab *t, size_t n, uint64_t addr, uint64_t *next)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*next = lo < n ? t->syms[lo].addr : 0;
	return lo && trail__symrule_covers(t->syms[lo - 1].addr, t->syms[lo - 1].size, addr);
}

/*
 * The functions no symbol names (a stripped object's local ones): each
 * start of the unwinder's table (.eh_frame_hdr) in code that no symbol
 * covers, named sub_<address>, as libtrail and `trail list -f` name them.
 */
static int eh_names(Elf *e, struct symtab *t, size_t *names_cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, hsh = {0};
	Elf_Data *hd = NULL;
	uint64_t xlo[64], xhi[64];
	size_t nx = 0, n = 0, n0 = t->n, cap = t->n;
	int r = 0;

	while ((scn = elf_nextscn(e, scn))) {
		size_t si;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || elf_getshdrstrndx(e, &si))
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_type == SHT_PROGBITS && nx < 64) {
			xlo[nx] = sh.sh_addr;
			xhi[nx++] = sh.sh_addr + sh.sh_size;
		}
		nm = elf_strptr(e, si, sh.sh_name);
		/* (SHT_X86_64_UNWIND: as LLVM's linker types it) */
		if (nm && !strcmp(nm, ".eh_frame_hdr") &&
		    (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND)) {
			hd = elf_getdata(scn, NULL);
			hsh = sh;
		}
	}
	if (!hd || !hd->d_buf || trail__ehframe_count(hd->d_buf, hd->d_size, &n) || !n)
		return 0;
	for (size_t i = 0; i < n && !r; i++) {
		uint64_t a = trail__ehframe_start(hd->d_buf, hsh.sh_addr, i), next, end = 0;
		char name[32];
		int code = 0;

		for (size_t x = 0; x < nx && !code; x++)
			if (a >= xlo[x] && a < xhi[x]) {
				code = 1;
				end = xhi[x];
			}
		if (!code || covered(t, n0, a, &next))
			continue;
		if (i + 1 < n) {
			uint64_t b = trail__ehframe_start(hd->d_buf, hsh.sh_addr, i + 1);

			if (b > a && b < end)
				end = b;
		}
		if (next > a && next < end)
			end = next;
		if (t->n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct symtab_sym *nv = realloc(t->syms, nc * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			t->syms = nv;
			cap = nc;
		}
		snprintf(name, sizeof(name), "sub_%" PRIx64, a);
		t->syms[t->n].addr = a;
		t->syms[t->n].size = end - a;
		if (!(r = add_name(t, names_cap, name, &t->syms[t->n].name)))
			t->n++;
	}
	/* (a start twice in the table: a hostile file) */
	if (t->n != n0)
		sort_unique(t);
	return r;
}

int symtab_load(const char *path, struct symtab *t, char *err, size_t errlen)
{
	Elf *e = NULL, *se = NULL;
	Elf_Scn *scn = NULL, *pick = NULL;
	GElf_Shdr sh, psh = {0};
	Elf_Data *d;
	struct trail_symrule_ent *v = NULL;
	size_t cap = 0, n = 0, names_cap = 0, count;
	int fd, sfd = -1, r = 0;

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
	/* stripped: the separate debug file's .symtab (a -dbgsym package's),
	 * as libtrail and `trail list -f` take it */
	if ((!pick || psh.sh_type != SHT_SYMTAB) && (se = symtab_debug_elf(e, &sfd))) {
		scn = NULL;
		while ((scn = elf_nextscn(se, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
				pick = scn;
				psh = sh;
				break;
			}
		if (!scn) {
			elf_end(se);
			close(sfd);
			se = NULL;
			sfd = -1;
		}
	}
	if (!se)
		se = e;
	if (!pick)
		goto plt; /* no symbols: nothing else to name */
	d = elf_getdata(pick, NULL);
	if (!d || !psh.sh_entsize)
		goto plt;
	count = d->d_size / psh.sh_entsize;
	if (count > INT32_MAX)
		count = INT32_MAX;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		int cls;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		cls = trail__symrule_class(s.st_info, s.st_shndx,
					   elf_strptr(se, psh.sh_link, s.st_name));
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
			.rank = trail__symrule_rank(cls, s.st_info, s.st_other, s.st_size,
						    elf_strptr(se, psh.sh_link, s.st_name)),
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
		const char *nm = elf_strptr(se, psh.sh_link, v[i].name);
		char *dem = NULL;
		int st = -1;

		if (nm[0] == '_' && nm[1] == 'Z')
			dem = symtab_demangle(nm, &st);
		t->syms[t->n].addr = v[i].value;
		t->syms[t->n].size = v[i].size;
		r = add_name(t, &names_cap, dem && st == 0 ? dem : nm, &t->syms[t->n].name);
		free(dem);
		if (r)
			goto out;
		t->n++;
	}
plt:
	if (!r)
		r = eh_names(e, t, &names_cap);
	if (!r)
		r = plt_names(e, t, &names_cap);
out:
	free(v);
	if (r)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	if (se && se != e)
		elf_end(se);
	if (sfd >= 0)
		close(sfd);
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
