/* SPDX-License-Identifier: MIT */
/*
 * funcscan.c - patchable function entries of an ELF file; see funcscan.h.
 *
 * Four steps, each bounded against the file:
 *   1. the entries: every __patchable_function_entries section, read as
 *      address-sized little-endian words (what an ET_EXEC or a DT_RELR
 *      object holds), then overridden by the relocations that target them
 *      (.rela.dyn's RELATIVE for a PIE or shared object, the section's own
 *      .rela for an ET_REL); sorted, duplicates dropped;
 *   2. the code: each site must lie in an executable section whose bytes
 *      can be read;
 *   3. the function: from .symtab, else .dynsym, by the rule of
 *      src/common/symrule.h (shared with libtrail and the recorder): the
 *      one whose entry the area starts (or, for =N,M, precedes through
 *      nops only), else the one covering it (the area after an endbr64);
 *   4. the nops at the site, counted as funcscan.h says; none: the site is
 *      skipped and counted.
 *
 * Nothing is mmap'ed (ELF_C_READ: libelf preads what is asked for), so a
 * file truncated under our feet gives a read error, not a SIGBUS.
 */
#include "funcscan.h"
#include "elfscan.h"
#include "../arch/arch.h"
#include "../common/ehframe.h"
#include "../common/pltscan.h"
#include "../recorder/symtab.h"
#include "../common/symrule.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SITES_SECTION "__patchable_function_entries"

/* Limits against hostile files; far above anything a real program has. */
#define MAX_SITES_BYTES (64u << 20) /* all entry sections together */
#define MAX_RELOC_BYTES (1u << 30)  /* all relocation sections read */
#define MAX_SYMTAB (256u << 20)     /* bytes of the symbol table */
#define MAX_AREA 64u                /* nop bytes counted at one site */
#define MAX_MANGLED 65536u          /* longest name given to the demangler */


/* One entry of a sites section. */
struct ent {
	uint64_t val;
	uint32_t shndx; /* ET_REL: the section val is an offset in */
	int ok;         /* val is known */
};

/* A sites section; its entries are w->ents[base, base + n). */
struct psec {
	size_t idx;
	uint64_t addr, size;
	size_t base, n;
};

/* An executable section of a linked file, for address lookups. */
struct xsec {
	uint64_t lo, hi;
	size_t idx;
};

struct strbuf {
	char *p;
	size_t len, cap;
};

struct work {
	const char *path;
	Elf *elf;
	GElf_Ehdr eh;
	size_t shnum, shstrndx;
	size_t xndx_idx, xndx_link; /* the SHT_SYMTAB_SHNDX section, if any */
	int32_t *psec_of;           /* ET_REL: section index -> ps[], or -1 */
	int rel;       /* ET_REL */
	size_t entsz;  /* 8, or 4 for x32 */
	char *err;
	size_t errlen;
	int warned;
	struct psec *ps;
	size_t nps;
	struct ent *ents;
	size_t nents;
	struct xsec *xs;
	size_t nxs;
	struct trail_symrule_ent *syms; /* symrule.h's table; shndx 0 unless ET_REL */
	size_t nsyms;
	size_t strndx;                  /* the names of syms */
	size_t symidx;                  /* their section */
	struct strbuf str;
	int names_only;                 /* FUNCSCAN_NAMES */
	Elf *symelf;                    /* the separate debug file syms come
					 * from (a stripped object's), or NULL */
	int symfd;
};

/* where the symbols are: the object, or its separate debug file */
#define SYMELF(w) ((w)->symelf ? (w)->symelf : (w)->elf)

__attribute__((format(printf, 2, 3)))
static void set_err(struct work *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(w->err, w->errlen, fmt, ap);
	va_end(ap);
}

/* Something a user may want to hear about; the first one is kept. */
__attribute__((format(printf, 2, 3)))
static void warn(struct work *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->errlen || w->warned)
		return;
	w->warned = 1;
	va_start(ap, fmt);
	vsnprintf(w->err, w->errlen, fmt, ap);
	va_end(ap);
}

static const char *sec_name(struct work *w, const GElf_Shdr *sh)
{
	const char *n = elf_strptr(w->elf, w->shstrndx, sh->sh_name);

	return n ? n : "";
}

/* ------------------------------------------------------------------------
 * x86 nops.
 */

/* Length of one multi-byte nop at p (at most n bytes readable), 0 if there
 * is none: 0f 1f /0 with any ModRM/SIB/displacement, behind 66 and 2e
 * prefixes, or 66.. 90 (xchg %ax,%ax). A bare 90 is not counted here. */
static size_t multinop_len(const unsigned char *p, size_t n)
{
	size_t i = 0, end;
	unsigned modrm, mod, rm;
	int only66 = 1;

	if (n > 15)
		n = 15; /* the longest x86 instruction */
	while (i < n && (p[i] == 0x66 || p[i] == 0x2e)) {
		only66 &= p[i] == 0x66;
		i++;
	}
	if (i >= n)
		return 0;
	if (p[i] == 0x90)
		return i && only66 ? i + 1 : 0;
	if (p[i] != 0x0f || i + 2 >= n || p[i + 1] != 0x1f)
		return 0;
	modrm = p[i + 2];
	if ((modrm >> 3) & 7)
		return 0; /* 0f 1f /0 only */
	mod = modrm >> 6;
	rm = modrm & 7;
	end = i + 3;
	if (mod != 3 && rm == 4) { /* SIB */
		if (end >= n)
			return 0;
		if (mod == 0 && (p[end] & 7) == 5)
			end += 4;
		end++;
	}
	if (mod == 1)
		end += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		end += 4;
	return end <= n ? end : 0;
}

static size_t run90(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n && p[i] == 0x90)
		i++;
	return i;
}

/* gcc's area is 90s, clang's one multi-byte nop (or a few: the first is
 * enough to know it). */
static size_t nops_at(const unsigned char *p, size_t n)
{
	size_t k = run90(p, n);

	return k ? k : multinop_len(p, n);
}

static int is_endbr(const unsigned char *p, size_t n)
{
	static const unsigned char endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const unsigned char endbr32[] = {0xf3, 0x0f, 0x1e, 0xfb};

	return n >= 4 && (!memcmp(p, endbr64, 4) || !memcmp(p, endbr32, 4));
}

/* ------------------------------------------------------------------------
 * Step 1: the entries.
 */
static uint64_t get_word(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* One sites section: its words as entries, known unless in an ET_REL
 * (where only a relocation says where they point). */
static int add_entries(struct work *w, size_t idx, uint64_t addr,
		       const Elf_Data *d)
{
	const unsigned char *b = d->d_buf;
	size_t n = d->d_size / w->entsz;
	struct psec *np;
	struct ent *ne;

	np = realloc(w->ps, (w->nps + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	w->ps = np;
	ne = realloc(w->ents, (w->nents + n) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	w->ents = ne;
	np[w->nps++] = (struct psec){.idx = idx, .addr = addr, .size = d->d_size,
				     .base = w->nents, .n = n};
	for (size_t i = 0; i < n; i++)
		ne[w->nents++] = (struct ent){
			.val = get_word(b + i * w->entsz, w->entsz),
			.ok = !w->rel,
		};
	return 0;
}

static int find_sites_sections(struct work *w)
{
	size_t budget = MAX_SITES_BYTES;
	Elf_Scn *scn = NULL;
	int r;

	while ((scn = elf_nextscn(w->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB_SHNDX && !w->xndx_idx) {
			w->xndx_idx = elf_ndxscn(scn);
			w->xndx_link = sh.sh_link;
		}
		if (sh.sh_type == SHT_NOBITS || strcmp(sec_name(w, &sh), SITES_SECTION))
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) || sh.sh_size > budget) {
			warn(w, "%s: %s section %s", w->path, SITES_SECTION,
			     sh.sh_size > budget ? "too large" : "compressed");
			continue;
		}
		budget -= sh.sh_size;
		d = elf_getdata(scn, NULL);
		if (!d) {
			set_err(w, "%s: %s section: %s", w->path, SITES_SECTION,
				elf_errmsg(-1));
			return -EINVAL;
		}
		if (!d->d_buf || d->d_size < w->entsz)
			continue;
		r = add_entries(w, elf_ndxscn(scn), sh.sh_addr, d);
		if (r)
			return r;
	}
	return 0;
}

/*
 * The entry a relocation writes, or NULL: in ET_REL, of the one sites
 * section the relocation section applies to (target); in a linked file, of
 * the sites section whose addresses hold r_offset (w->ps sorted by addr).
 */
static struct ent *reloc_target(struct work *w, const struct psec *target,
				uint64_t r_offset)
{
	const struct psec *p = target;
	uint64_t off;

	if (!p) {
		size_t lo = 0, hi = w->nps;

		while (lo < hi) { /* lo = sections starting at or below */
			size_t mid = lo + (hi - lo) / 2;

			if (w->ps[mid].addr <= r_offset)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			return NULL;
		p = &w->ps[lo - 1];
	}
	off = r_offset - p->addr;
	if (r_offset < p->addr || off >= p->size || off % w->entsz ||
	    off / w->entsz >= p->n)
		return NULL;
	return &w->ents[p->base + off / w->entsz];
}

static int cmp_psec(const void *a, const void *b)
{
	const struct psec *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A symbol and its real section index (SHN_XINDEX resolved). */
static int get_sym(Elf_Data *syms, Elf_Data *xndx, size_t i, GElf_Sym *s,
		   uint32_t *shndx)
{
	Elf32_Word x = 0;

	if (i > INT32_MAX)
		return -1;
	if (xndx ? !gelf_getsymshndx(syms, xndx, (int)i, s, &x)
		 : !gelf_getsym(syms, (int)i, s))
		return -1;
	*shndx = s->st_shndx == SHN_XINDEX ? x : s->st_shndx;
	return 0;
}

/* The data of a symbol table and of its SHT_SYMTAB_SHNDX companion. */
static Elf_Data *symtab_data(struct work *w, size_t idx, Elf_Data **xndx,
			     size_t *nsyms)
{
	Elf *e = w->symelf && idx == w->symidx ? w->symelf : w->elf;
	Elf_Scn *scn = elf_getscn(e, idx), *x = NULL;
	size_t symsz = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	GElf_Shdr sh;
	Elf_Data *d;

	*xndx = NULL;
	*nsyms = 0;
	if (!scn || !gelf_getshdr(scn, &sh) || !symsz ||
	    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
	    sh.sh_size > MAX_SYMTAB || (sh.sh_flags & SHF_COMPRESSED) ||
	    !(d = elf_getdata(scn, NULL)) || d->d_type != ELF_T_SYM)
		return NULL;
	if (e == w->elf && w->xndx_idx && w->xndx_link == idx &&
	    (x = elf_getscn(w->elf, w->xndx_idx)))
		*xndx = elf_getdata(x, NULL);
	*nsyms = d->d_size / symsz;
	return d;
}

/* e = S + A for symbol symi of a relocation's symbol table; -1 if the
 * symbol is unusable (undefined, common, absolute in an ET_REL...). */
static int resolve(struct work *w, Elf_Data *syms, Elf_Data *xndx,
		   size_t nsyms, uint64_t symi, uint64_t addend, struct ent *e)
{
	uint32_t shndx;
	GElf_Sym s;

	if (!syms || symi >= nsyms || get_sym(syms, xndx, symi, &s, &shndx) ||
	    shndx == SHN_UNDEF || shndx == SHN_COMMON ||
	    (shndx >= SHN_LORESERVE && shndx <= SHN_HIRESERVE && shndx != SHN_ABS) ||
	    (w->rel && shndx == SHN_ABS))
		return -1;
	e->val = s.st_value + addend;
	e->shndx = w->rel ? shndx : 0;
	return 0;
}

static int apply_relocs(struct work *w)
{
	uint64_t budget = MAX_RELOC_BYTES;
	Elf_Scn *scn = NULL;

	if (!w->rel) {
		qsort(w->ps, w->nps, sizeof(*w->ps), cmp_psec);
	} else {
		w->psec_of = malloc(w->shnum * sizeof(*w->psec_of));
		if (!w->psec_of)
			return -ENOMEM;
		for (size_t i = 0; i < w->shnum; i++)
			w->psec_of[i] = -1;
		for (size_t i = 0; i < w->nps; i++)
			if (w->ps[i].idx < w->shnum)
				w->psec_of[w->ps[i].idx] = (int32_t)i;
	}
	while ((scn = elf_nextscn(w->elf, scn))) {
		Elf_Data *d, *syms = NULL, *xndx = NULL;
		size_t n, nsyms = 0, relsz;
		struct psec *target = NULL;
		GElf_Shdr sh;
		int rela, tried = 0;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
			continue;
		rela = sh.sh_type == SHT_RELA;
		/* a linked file: the loader's relocations only (not those
		 * --emit-relocs keeps, already applied to the bytes) */
		if (!w->rel && !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (w->rel) {
			if (sh.sh_info >= w->shnum || w->psec_of[sh.sh_info] < 0)
				continue;
			target = &w->ps[w->psec_of[sh.sh_info]];
		}
		if (sh.sh_size > budget || (sh.sh_flags & SHF_COMPRESSED))
			continue;
		budget -= sh.sh_size;
		d = elf_getdata(scn, NULL);
		relsz = gelf_fsize(w->elf, rela ? ELF_T_RELA : ELF_T_REL, 1,
				   EV_CURRENT);
		if (!d || !relsz) {
			set_err(w, "%s: %s: %s", w->path, sec_name(w, &sh),
				d ? "bad relocation size" : elf_errmsg(-1));
			return -EINVAL;
		}
		n = d->d_size / relsz;
		for (size_t i = 0; i < n; i++) {
			uint64_t off, addend, type, symi;
			struct ent *e;

			if (i > INT32_MAX)
				break;
			if (rela) {
				GElf_Rela r;

				if (!gelf_getrela(d, (int)i, &r))
					break;
				off = r.r_offset;
				addend = (uint64_t)r.r_addend;
				type = GELF_R_TYPE(r.r_info);
				symi = GELF_R_SYM(r.r_info);
			} else {
				GElf_Rel r;

				if (!gelf_getrel(d, (int)i, &r))
					break;
				off = r.r_offset;
				addend = 0;
				type = GELF_R_TYPE(r.r_info);
				symi = GELF_R_SYM(r.r_info);
			}
			e = reloc_target(w, target, off);
			if (!e)
				continue;
			if (!rela)
				addend = e->val; /* REL: the addend is in place */
			switch (type) {
			case R_X86_64_NONE:
				continue;
			case R_X86_64_RELATIVE:
			case R_X86_64_RELATIVE64:
				e->val = addend;
				e->ok = !w->rel;
				continue;
			case R_X86_64_64:
			case R_X86_64_32:
				break;
			default:
				e->ok = 0; /* not a form we know: drop it */
				continue;
			}
			/* S + A */
			if (!tried) {
				syms = symtab_data(w, sh.sh_link, &xndx, &nsyms);
				tried = 1;
			}
			e->ok = !resolve(w, syms, xndx, nsyms, symi, addend, e);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Step 2: the code.
 */
static int cmp_xsec(const void *a, const void *b)
{
	const struct xsec *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int find_code_sections(struct work *w)
{
	Elf_Scn *scn = NULL;

	if (w->rel)
		return 0; /* looked up by index */
	while ((scn = elf_nextscn(w->elf, scn))) {
		struct xsec *nx;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(sh.sh_flags & SHF_ALLOC) ||
		    !sh.sh_size || sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		nx = realloc(w->xs, (w->nxs + 1) * sizeof(*nx));
		if (!nx)
			return -ENOMEM;
		w->xs = nx;
		nx[w->nxs++] = (struct xsec){sh.sh_addr, sh.sh_addr + sh.sh_size,
					     elf_ndxscn(scn)};
	}
	if (w->nxs)
		qsort(w->xs, w->nxs, sizeof(*w->xs), cmp_xsec);
	return 0;
}

/* The executable section holding a site, 0 if none. */
static size_t code_section(struct work *w, const struct ent *e)
{
	size_t lo = 0, hi = w->nxs;

	if (w->rel) {
		Elf_Scn *scn = elf_getscn(w->elf, e->shndx);
		GElf_Shdr sh;

		return scn && gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
				       (sh.sh_flags & SHF_EXECINSTR) && e->val < sh.sh_size
			       ? e->shndx
			       : 0;
	}
	while (lo < hi) { /* lo = sections starting at or below val */
		size_t mid = lo + (hi - lo) / 2;

		if (w->xs[mid].lo <= e->val)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* overlapping sections in a hostile file: any one that holds it */
	while (lo-- > 0)
		if (e->val < w->xs[lo].hi)
			return w->xs[lo].idx;
	return 0;
}

/* The bytes of a section: *base is its address (0 for ET_REL). */
static int code_bytes(struct work *w, size_t idx, const unsigned char **p,
		      size_t *n, uint64_t *base)
{
	Elf_Scn *scn = elf_getscn(w->elf, idx);
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED))
		return -1;
	d = elf_getdata(scn, NULL);
	if (!d) {
		set_err(w, "%s: section %s: %s", w->path, sec_name(w, &sh),
			elf_errmsg(-1));
		return -EINVAL;
	}
	if (!d->d_buf)
		return -1;
	*p = d->d_buf;
	*n = d->d_size < sh.sh_size ? d->d_size : sh.sh_size;
	*base = w->rel ? 0 : sh.sh_addr;
	return 0;
}

/* ------------------------------------------------------------------------
 * Step 3: the symbols.
 */
/* The .symtab of w's separate debug file (by its build-id: a stripped
 * object whose symbols a -dbgsym package installed): 1 with w->symelf,
 * w->symidx and w->strndx set, else 0 */
static int debug_symtab(struct work *w)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!(w->symelf = symtab_debug_elf(w->elf, &w->symfd)))
		return 0;
	while ((scn = elf_nextscn(w->symelf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			w->symidx = elf_ndxscn(scn);
			w->strndx = sh.sh_link;
			return 1;
		}
	elf_end(w->symelf);
	w->symelf = NULL;
	close(w->symfd);
	w->symfd = -1;
	return 0;
}

static int load_symbols(struct work *w)
{
	size_t idx = 0, nsyms, cap = 0;
	Elf_Data *d, *xndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	for (int pass = 0; pass < 2 && !idx; pass++) {
		while ((scn = elf_nextscn(w->elf, scn)))
			if (gelf_getshdr(scn, &sh) &&
			    sh.sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB)) {
				idx = elf_ndxscn(scn);
				w->strndx = sh.sh_link;
				w->symidx = idx;
				break;
			}
		/* (no .symtab: the debug file's, as libtrail's fsites.c) */
		if (!pass && !idx && !w->rel && debug_symtab(w))
			idx = w->symidx;
	}
	if (!idx)
		return 0;
	d = symtab_data(w, idx, &xndx, &nsyms);
	if (!d) {
		warn(w, "%s: symbol table unreadable: functions are unnamed", w->path);
		return 0;
	}
	for (size_t i = 1; i < nsyms && i <= UINT32_MAX; i++) {
		uint32_t shndx;
		GElf_Sym s;
		int cls;

		if (get_sym(d, xndx, i, &s, &shndx))
			break;
		cls = trail__symrule_class(s.st_info, s.st_shndx,
					   elf_strptr(SYMELF(w), w->strndx, s.st_name));
		if (cls < 0)
			continue;
		if (w->nsyms == cap) {
			size_t c = cap ? 2 * cap : 256;
			struct trail_symrule_ent *v = realloc(w->syms, c * sizeof(*v));

			if (!v)
				return -ENOMEM;
			w->syms = v;
			cap = c;
		}
		w->syms[w->nsyms++] = (struct trail_symrule_ent){
			.value = s.st_value,
			.size = s.st_size,
			.shndx = w->rel ? shndx : 0,
			.index = (uint32_t)i,
			.name = s.st_name,
			.rank = trail__symrule_rank(cls, s.st_info, s.st_other, s.st_size,
						    elf_strptr(SYMELF(w), w->strndx, s.st_name)),
		};
	}
	w->nsyms = trail__symrule_table(w->syms, w->nsyms);
	return 0;
}

/*
 * The function of the area at (shndx, addr), whose first run0 bytes are
 * 0x90: one whose entry is addr, else one whose entry lies within those
 * nops (=N,M), else the one covering addr (the area after an endbr64).
 * NULL if none.
 */
static const struct trail_symrule_ent *sym_for(const struct work *w, uint32_t shndx,
					       uint64_t addr, size_t run0)
{
	const struct trail_symrule_ent *v = w->syms;
	size_t n = w->nsyms, lo = trail__symrule_upto(v, n, shndx, addr);
	const struct trail_symrule_ent *best = trail__symrule_find(v, n, shndx, addr);

	if (best && best->value == addr)
		return best;
	/* an entry reached through nops only */
	if (lo < n && v[lo].shndx == shndx && v[lo].value - addr <= run0)
		return &v[lo];
	return best;
}

/* ------------------------------------------------------------------------
 * Names.
 */
char *funcscan_demangle(const char *symbol)
{
	const char *at = strchr(symbol, '@');
	size_t base = at ? (size_t)(at - symbol) : strlen(symbol);

	if (base > 2 && base < MAX_MANGLED && symbol[0] == '_' &&
	    symbol[1] == 'Z') {
		char *m = strndup(symbol, base), *d;
		int status = -1;

		if (!m)
			return NULL;
		d = symtab_demangle(m, &status);
		free(m);
		if (d && !status) {
			char *full;

			if (!at)
				return d;
			full = malloc(strlen(d) + strlen(at) + 1);
			if (full)
				sprintf(full, "%s%s", d, at);
			free(d);
			return full;
		}
		free(d);
		if (status == -1)
			return NULL; /* the demangler's ENOMEM */
	}
	return strdup(symbol);
}

/* Append a string; returns its offset, or (size_t)-1 on ENOMEM. */
static size_t str_add(struct strbuf *b, const char *s)
{
	size_t len = strlen(s) + 1, off = b->len;

	if (b->cap - b->len < len) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap - b->len < len)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return (size_t)-1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + off, s, len);
	b->len += len;
	return off;
}

/* ------------------------------------------------------------------------
 * The scan.
 */
static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	return x->val < y->val ? -1 : x->val > y->val;
}

static int open_file(struct work *w, int *fdp)
{
	struct stat st;
	int fd, r;

	fd = open(w->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		r = -errno;
		set_err(w, "%s: %s", w->path, strerror(-r));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
		set_err(w, "%s: %s", w->path,
			r == -EISDIR ? strerror(EISDIR) : "not a regular file");
		goto fail;
	}
	w->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!w->elf) {
		r = -EINVAL;
		set_err(w, "%s: %s", w->path, elf_errmsg(-1));
		goto fail;
	}
	if (elf_kind(w->elf) != ELF_K_ELF) {
		r = -ENOEXEC;
		set_err(w, "%s: %s", w->path,
			elf_kind(w->elf) == ELF_K_AR ? "an archive, not an ELF object"
						      : "not an ELF file");
		goto fail;
	}
	if (!gelf_getehdr(w->elf, &w->eh)) {
		r = -EINVAL;
		set_err(w, "%s: %s", w->path, elf_errmsg(-1));
		goto fail;
	}
	{
		char why[160];
		const char *bad = elfscan_extent(w->elf, (uint64_t)st.st_size, why, sizeof(why));

		if (bad) {
			r = -EINVAL;
			set_err(w, "%s: %s", w->path, bad);
			goto fail;
		}
	}
	*fdp = fd;
	return 0;
fail:
	if (w->elf)
		elf_end(w->elf);
	w->elf = NULL;
	if (fd >= 0)
		close(fd);
	return r;
}

/* Steps 2 to 4 for the distinct entries, sorted. */
/* a site's raw symbol and demangled name into the string buffer, their
 * offsets in *sym and *name: 0 or -ENOMEM */
static int add_names(struct work *w, const char *symbol, size_t *sym, size_t *name)
{
	/* a version a .symtab writes into the name (memcpy@@GLIBC_2.14, a
	 * debug file's) is no part of it: '@' names an object in a glob */
	char *base = strndup(symbol, strcspn(symbol, "@"));
	char *dm = base ? funcscan_demangle(base) : NULL;

	*sym = base ? str_add(&w->str, base) : (size_t)-1;
	*name = dm ? str_add(&w->str, dm) : (size_t)-1;
	free(dm);
	free(base);
	return *sym == (size_t)-1 || *name == (size_t)-1 ? -ENOMEM : 0;
}

/* the buffer has stopped moving: the sites' offsets become pointers */
static void names_fixed(struct work *w, struct fscan *out, const size_t *name_off,
			const size_t *sym_off)
{
	out->strings = w->str.p;
	w->str.p = NULL;
	for (size_t i = 0; i < out->n; i++) {
		out->sites[i].name = out->strings + name_off[i];
		out->sites[i].symbol = out->strings + sym_off[i];
	}
}

static int build_sites(struct work *w, struct fscan *out)
{
	size_t *name_off = NULL, *sym_off = NULL, nd = 0;
	int r = 0;

	/* distinct known entries */
	for (size_t i = 0; i < w->nents; i++)
		if (w->ents[i].ok)
			w->ents[nd++] = w->ents[i];
	if (nd)
		qsort(w->ents, nd, sizeof(*w->ents), cmp_ent);
	{
		size_t k = 0;

		for (size_t i = 0; i < nd; i++)
			if (!k || cmp_ent(&w->ents[k - 1], &w->ents[i]))
				w->ents[k++] = w->ents[i];
		nd = k;
	}
	if (!nd)
		return 0;
	out->sites = calloc(nd, sizeof(*out->sites));
	name_off = calloc(nd, sizeof(*name_off));
	sym_off = calloc(nd, sizeof(*sym_off));
	if (!out->sites || !name_off || !sym_off ||
	    str_add(&w->str, "") == (size_t)-1) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nd; i++) {
		const struct ent *e = &w->ents[i];
		const unsigned char *p;
		const struct trail_symrule_ent *s;
		uint64_t base, off, limit;
		size_t idx, n, run0, nops, before = 0;
		struct fsite *f;

		idx = code_section(w, e);
		if (!idx || (r = code_bytes(w, idx, &p, &n, &base)) || e->val - base >= n) {
			if (r == -EINVAL)
				goto out;
			r = 0;
			out->skipped++;
			continue;
		}
		off = e->val - base;
		/* the area ends before the next one, the section's end, or
		 * MAX_AREA bytes */
		limit = n - off;
		if (limit > MAX_AREA)
			limit = MAX_AREA;
		if (i + 1 < nd && w->ents[i + 1].shndx == e->shndx &&
		    w->ents[i + 1].val - e->val < limit)
			limit = w->ents[i + 1].val - e->val;
		p += off;
		run0 = run90(p, limit);
		s = sym_for(w, w->rel ? e->shndx : 0, e->val, run0);
		nops = nops_at(p, limit);
		if (s && s->value > e->val) {
			before = s->value - e->val;
			/* a 90 run that stops at the entry: clang's =N,M (90s,
			 * then a multi-byte nop), or an endbr64 there (the
			 * area is split around it: only the part before) */
			if (nops == before && !is_endbr(p + before, limit - before))
				nops += nops_at(p + before, limit - before);
		}
		if (!nops) {
			out->skipped++;
			continue;
		}
		f = &out->sites[out->n];
		f->addr = e->val;
		f->shndx = (uint32_t)idx;
		f->nops = (uint32_t)nops;
		f->before = (uint32_t)before;
		if (s) {
			const char *sn = elf_strptr(SYMELF(w), w->strndx, s->name);

			f->func = s->value;
			if ((r = add_names(w, sn ? sn : "", &sym_off[out->n], &name_off[out->n])))
				goto out;
		}
		out->n++;
	}
	names_fixed(w, out, name_off, sym_off);
out:
	free(name_off);
	free(sym_off);
	return r;
}

/* Is the file a program, not a library: ET_EXEC, or a PIE (DF_1_PIE in
 * its dynamic section; libc.so.6 runs too, but is none) */
static int is_program(struct work *w)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (w->eh.e_type == ET_EXEC)
		return 1;
	if (w->eh.e_type != ET_DYN)
		return 0;
	while ((scn = elf_nextscn(w->elf, scn))) {
		Elf_Data *d;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(scn, NULL)))
			continue;
		for (int i = 0; gelf_getdyn(d, i, &dyn) && dyn.d_tag != DT_NULL; i++)
			if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
				return 1;
	}
	return 0;
}

/* The entry of function value (size bytes, room up to the next one;
 * named sn, "" for none) as a site of out, or counted in skipped with its
 * reason. 0, or -ENOMEM. */
static int reloc_site(struct work *w, struct fscan *out, uint64_t value, uint64_t size,
		      uint64_t room, const char *sn, size_t *name_off, size_t *sym_off)
{
	struct ent at = {value, 0, 1};
	const unsigned char *p;
	uint64_t base;
	size_t idx, n;
	unsigned len, trap = 0;
	int kind = TRAIL_ARCH_ENTER_JUMP;
	char why[160], sub[32];
	struct fsite *f;

	if (*sn && trail__symrule_crt(sn))
		return 0; /* (libtrail's fsites.c: never a site) */
	idx = code_section(w, &at);
	if (!idx)
		return 0;
	if (w->names_only) { /* (the section's bounds, not its bytes) */
		Elf_Scn *scn = elf_getscn(w->elf, idx);
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh) || value - sh.sh_addr >= sh.sh_size)
			return 0;
		out->entries++;
		if (!size)
			goto refused;
		len = 0;
		goto take;
	}
	if (code_bytes(w, idx, &p, &n, &base) || value - base >= n)
		return 0;
	out->entries++; /* a function that might be entered */
	if (size > n - (value - base))
		size = n - (value - base);
	if (room > n - (value - base))
		room = n - (value - base);
	if (room < size)
		room = size;
	kind = size ? trail_arch_entry_check(p + (value - base), size, room, value, &len, why,
					     sizeof(why))
		    : -ENOSPC;
	trap = kind == TRAIL_ARCH_ENTER_TRAP;
	if (kind < 0) {
refused:
		if (!size)
			snprintf(why, sizeof(why), "no size");
		if (!out->skipped++)
			snprintf(out->refused_why, sizeof(out->refused_why), "%s: %s",
				 *sn ? sn : "(unnamed)", why);
		return 0;
	}
take:
	f = &out->sites[out->n];
	f->addr = value;
	f->func = value;
	f->shndx = (uint32_t)idx;
	f->nops = FUNCSCAN_SITE_BYTES;
	f->reloc = (uint8_t)len;
	f->trap = (uint8_t)trap;
	f->whole = kind == TRAIL_ARCH_ENTER_WHOLE;
	out->traps += trap;
	if (!*sn) { /* unnamed: sub_<address>, as libtrail names it */
		snprintf(sub, sizeof(sub), "sub_%" PRIx64, value);
		sn = sub;
	}
	if (add_names(w, sn, &sym_off[out->n], &name_off[out->n]))
		return -ENOMEM;
	out->n++;
	return 0;
}

/* the sites' names fixed (r 0), the offset arrays freed: r */
static int reloc_end(struct work *w, struct fscan *out, int r, size_t *name_off,
		     size_t *sym_off)
{
	if (!r)
		names_fixed(w, out, name_off, sym_off);
	free(name_off);
	free(sym_off);
	return r;
}

/* room for n sites of a program without patchable entries */
static int reloc_alloc(struct work *w, struct fscan *out, size_t n, size_t **name_off,
		       size_t **sym_off)
{
	out->sites = calloc(n ? n : 1, sizeof(*out->sites));
	*name_off = calloc(n ? n : 1, sizeof(**name_off));
	*sym_off = calloc(n ? n : 1, sizeof(**sym_off));
	out->reloc = 1;
	return !out->sites || !*name_off || !*sym_off || str_add(&w->str, "") == (size_t)-1
		       ? -ENOMEM : 0;
}

/*
 * A stripped program (no .symtab): its functions' starts from the
 * unwinder's table in .eh_frame_hdr (src/common/ehframe.h), those in
 * .text, named by .dynsym where it has the address (as libtrail's
 * fsites.c finds them).
 */
static int build_eh_sites(struct work *w, struct fscan *out)
{
	size_t *name_off = NULL, *sym_off = NULL, n = 0;
	uint64_t hdr_addr = 0, text_lo = 0, text_hi = 0;
	const uint8_t *hdr = NULL;
	size_t hdr_len = 0;
	struct elfscan_vread vc = {0};
	Elf_Scn *scn = NULL;
	int r;

	while ((scn = elf_nextscn(w->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || !(nm = sec_name(w, &sh)))
			continue;
		if (!strcmp(nm, ".eh_frame_hdr") &&
		    (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND) &&
		    (d = elf_getdata(scn, NULL)) && d->d_buf) {
			hdr = d->d_buf;
			hdr_len = d->d_size;
			hdr_addr = sh.sh_addr;
		}
		if (!strcmp(nm, ".text") && (sh.sh_flags & SHF_EXECINSTR)) {
			text_lo = sh.sh_addr;
			text_hi = sh.sh_addr + sh.sh_size;
		}
	}
	if (!hdr || !text_hi || trail__ehframe_count(hdr, hdr_len, &n) || !n)
		return 0;
	if ((r = reloc_alloc(w, out, n, &name_off, &sym_off)))
		goto out;
	vc.elf = w->elf;
	for (size_t i = 0; i < n && !r; i++) {
		uint64_t a = trail__ehframe_start(hdr, hdr_addr, i);
		uint64_t next = i + 1 < n ? trail__ehframe_start(hdr, hdr_addr, i + 1) : text_hi;

		/* the table is sorted by the linker; a file that says otherwise
		 * gets its entries taken in increasing order only */
		if (out->n && a <= out->sites[out->n - 1].addr)
			continue;
		const struct trail_symrule_ent *e =
			w->nsyms ? trail__symrule_find(w->syms, w->nsyms, 0, a) : NULL;
		const char *sn = NULL;
		GElf_Sym s;
		Elf_Data *d, *xndx;
		size_t nsyms;
		uint32_t shndx;

		/* the PLT's, .init's; the entry point (_start: no return
		 * address on its stack, never a site); a function's cold
		 * part (its FDE starts in the hot part's frame), as libtrail */
		if (a < text_lo || a >= text_hi || a == w->eh.e_entry ||
		    !trail__ehframe_is_entry(trail__ehframe_fde(hdr, hdr_addr, i),
					     elfscan_vaddr_read_cached, &vc))
			continue;
		if (next > text_hi || next <= a)
			next = text_hi;
		if (e && e->value == a && (d = symtab_data(w, w->symidx, &xndx, &nsyms)) &&
		    !get_sym(d, xndx, e->index, &s, &shndx))
			sn = elf_strptr(SYMELF(w), w->strndx, s.st_name);
		/* unnamed and shorter than a jump up to the next start: a
		 * fragment of another function (`xor %eax,%eax; ret`, a cold
		 * path's tail), entered by a jump, not a call, as libtrail */
		if ((!sn || !*sn) && next - a < FUNCSCAN_SITE_BYTES)
			continue;
		r = reloc_site(w, out, a, next - a, next - a, sn ? sn : "", name_off, sym_off);
	}
out:
	return reloc_end(w, out, r, name_off, sym_off);
}

/*
 * A program built without patchable entries: its functions (STT_FUNC
 * symbols in code) whose entry src/arch can displace (reloc.c), or take
 * a breakpoint on, as libtrail's fsites.c finds them in the process; the
 * others counted in skipped, the first one's reason in out->refused_why.
 * Stripped (its symbols from .dynsym): the unwinder's function starts.
 */
static int build_reloc_sites(struct work *w, struct fscan *out)
{
	size_t nsyms, *name_off = NULL, *sym_off = NULL;
	Elf_Data *d, *xndx;
	Elf_Scn *scn;
	GElf_Shdr sh;
	int r = 0;

	if (!w->symidx || !(scn = elf_getscn(SYMELF(w), w->symidx)) || !gelf_getshdr(scn, &sh) ||
	    sh.sh_type != SHT_SYMTAB)
		return build_eh_sites(w, out);
	if (!(d = symtab_data(w, w->symidx, &xndx, &nsyms)) || !w->nsyms)
		return 0;
	if ((r = reloc_alloc(w, out, w->nsyms, &name_off, &sym_off)))
		goto out;
	for (size_t i = 0; i < w->nsyms && !r; i++) {
		const struct trail_symrule_ent *e = &w->syms[i];
		const char *sn;
		uint64_t room = UINT64_MAX;
		uint32_t shndx;
		GElf_Sym s;

		if (get_sym(d, xndx, e->index, &s, &shndx) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    !(sn = elf_strptr(SYMELF(w), w->strndx, s.st_name)) || !*sn || trail__symrule_crt(sn))
			continue;
		/* up to the next symbol of its section (as libtrail's fsites.c) */
		if (i + 1 < w->nsyms && w->syms[i + 1].value > e->value)
			room = w->syms[i + 1].value - e->value;
		r = reloc_site(w, out, e->value, s.st_size, room, sn, name_off, sym_off);
	}
out:
	return reloc_end(w, out, r, name_off, sym_off);
}

/* ------------------------------------------------------- library calls
 * A program's calls into shared libraries: a site per PLT entry, named
 * after the function it calls (libtrail's fsites.c takes the same ones). */

/* a site with its names as offsets in w->str, while that buffer grows */
struct named {
	struct fsite s;
	size_t name, sym;
};

struct pltf {
	struct work *w;
	const struct fscan *out; /* its sites, sorted: a PLT entry at one's
				  * address is not taken (a hostile file) */
	struct named *v;
	size_t n, cap;
	int r;
};

static int grow_named(struct pltf *c)
{
	size_t nc = c->cap ? c->cap * 2 : 64;
	struct named *nv;

	if (c->n < c->cap)
		return 0;
	if (!(nv = realloc(c->v, nc * sizeof(*nv))))
		return c->r = -ENOMEM;
	c->v = nv;
	c->cap = nc;
	return 0;
}

static int plt_site(void *arg, uint64_t entry, const char *name)
{
	struct pltf *c = arg;
	struct named *e;
	size_t lo = 0, hi = c->out->n;

	if (!trail__plt_hookable(name))
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->out->sites[mid].addr < entry)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->out->n && c->out->sites[lo].addr == entry)
		return 0;
	if (grow_named(c))
		return 1;
	e = &c->v[c->n++];
	e->s = (struct fsite){.addr = entry, .func = entry, .nops = FUNCSCAN_SITE_BYTES,
			      .plt = 1};
	return (c->r = add_names(c->w, name, &e->sym, &e->name)) != 0;
}

static int cmp_named_addr(const void *a, const void *b)
{
	const struct named *x = a, *y = b;

	return x->s.addr < y->s.addr ? -1 : x->s.addr > y->s.addr;
}

/* the library calls of a program, among its sites in address order */
static int add_plt_sites(struct work *w, struct fscan *out)
{
	struct pltf c = {.w = w, .out = out};
	size_t *name_off = NULL, *sym_off = NULL, k = 0;

	/* the sites so far, their names as offsets again: w->str grows */
	for (size_t i = 0; i < out->n && !c.r; i++)
		if (!grow_named(&c))
			c.v[c.n++] = (struct named){out->sites[i],
						    (size_t)(out->sites[i].name - out->strings),
						    (size_t)(out->sites[i].symbol - out->strings)};
	if (out->strings) {
		w->str.p = out->strings;
		out->strings = NULL;
	} else if (str_add(&w->str, "") == (size_t)-1) {
		c.r = -ENOMEM;
	}
	if (!c.r)
		symtab_plt_each(w->elf, plt_site, &c);
	if (!c.r) {
		struct fsite *all = realloc(out->sites, (c.n ? c.n : 1) * sizeof(*all));

		name_off = calloc(c.n ? c.n : 1, sizeof(*name_off));
		sym_off = calloc(c.n ? c.n : 1, sizeof(*sym_off));
		if (all)
			out->sites = all;
		if (!all || !name_off || !sym_off)
			c.r = -ENOMEM;
	}
	if (!c.r) {
		out->entries += c.n - out->n;
		if (c.n)
			qsort(c.v, c.n, sizeof(*c.v), cmp_named_addr);
		/* one site per address (PLT sections overlapping) */
		for (size_t i = 0; i < c.n; i++)
			if (!k || out->sites[k - 1].addr != c.v[i].s.addr) {
				out->sites[k] = c.v[i].s;
				name_off[k] = c.v[i].name;
				sym_off[k++] = c.v[i].sym;
			}
		out->n = k;
	}
	/* (on an error the caller drops the sites and their names) */
	if (!c.r)
		names_fixed(w, out, name_off, sym_off);
	free(name_off);
	free(sym_off);
	free(c.v);
	return c.r;
}

int funcscan_tool_object(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "ld-linux", 8) || !strncmp(b, "libtrail", 8) ||
	       !strncmp(b, "libcapstone", 11);
}

int funcscan_file(const char *path, struct fscan *out, char *err, size_t errlen)
{
	return funcscan_file_opts(path, out, err, errlen, 0);
}

int funcscan_file_opts(const char *path, struct fscan *out, char *err, size_t errlen,
		       unsigned flags)
{
	struct work w = {.path = path, .err = err, .errlen = err ? errlen : 0,
			 .names_only = !!(flags & FUNCSCAN_NAMES), .symfd = -1};
	int fd = -1, r;

	memset(out, 0, sizeof(*out));
	if (w.errlen)
		err[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_err(&w, "libelf: %s", elf_errmsg(-1));
		return -ENOSYS;
	}
	out->object = strdup(path);
	if (!out->object) {
		r = -ENOMEM;
		goto out;
	}
	r = open_file(&w, &fd);
	if (r)
		goto out;
	out->e_type = w.eh.e_type;
	w.rel = w.eh.e_type == ET_REL;
	if (w.eh.e_machine != EM_X86_64 || w.eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		r = -ENOTSUP;
		set_err(&w, "%s: not an x86-64 object", path);
		goto out;
	}
	w.entsz = w.eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	/* no section headers (sstrip): no sites to be found */
	if (elf_getshdrnum(w.elf, &w.shnum) || elf_getshdrstrndx(w.elf, &w.shstrndx))
		goto out;
	if ((r = find_sites_sections(&w)))
		goto out;
	if (!w.nps) {
		/* no patchable entries: a program's or a library's functions,
		 * displaced; a program's library calls */
		if (!w.rel && (w.eh.e_type == ET_EXEC || w.eh.e_type == ET_DYN) &&
		    !(r = find_code_sections(&w)) && !(r = load_symbols(&w))) {
			out->lib = !is_program(&w);
			/* jump tables read from the file's sections */
			trail_arch_table_reader(elfscan_vaddr_read, w.elf);
			r = build_reloc_sites(&w, out);
			trail_arch_table_reader(NULL, NULL);
			if (!r && (!out->lib || (flags & FUNCSCAN_LIBPLT)))
				r = add_plt_sites(&w, out);
		}
		goto out;
	}
	for (size_t i = 0; i < w.nps; i++)
		out->entries += w.ps[i].n;
	if ((r = apply_relocs(&w)) || (r = find_code_sections(&w)) ||
	    (r = load_symbols(&w)))
		goto out;
	r = build_sites(&w, out);
	if (!r && !w.rel && (is_program(&w) || (flags & FUNCSCAN_LIBPLT)))
		r = add_plt_sites(&w, out);
out:
	if (r == -ENOMEM)
		set_err(&w, "%s: %s", path, strerror(ENOMEM));
	if (r) {
		/* nothing half-built for the caller but the object's name */
		free(out->sites);
		out->sites = NULL;
		out->n = 0;
		free(out->strings);
		out->strings = NULL;
	}
	if (w.elf)
		elf_end(w.elf);
	if (w.symelf)
		elf_end(w.symelf);
	if (w.symfd >= 0)
		close(w.symfd);
	if (fd >= 0)
		close(fd);
	free(w.ps);
	free(w.ents);
	free(w.xs);
	free(w.psec_of);
	free(w.syms);
	free(w.str.p);
	return r;
}

void funcscan_free(struct fscan *f)
{
	if (!f)
		return;
	free(f->sites);
	free(f->strings);
	free(f->object);
	memset(f, 0, sizeof(*f));
}
