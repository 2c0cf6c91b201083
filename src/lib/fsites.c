/* SPDX-License-Identifier: MIT */
/*
 * fsites.c - patchable function entries of a loaded object; see fsites.h.
 * Async-signal-safe: open/pread/mmap only, and in-place sorts. Which
 * symbol names a site is src/common/symrule.h's rule, as for `trail list
 * -f` and the recorder's SYMBOLS.
 */
#include "fsites.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/ehframe.h"
#include "../common/symrule.h"

#define MAX_SECTIONS 65535u
#define MAX_SYMTAB (256u << 20) /* bytes of symbols + names we accept */
#define SITES_SECTION "__patchable_function_entries"

struct buf {
	void *p;
	size_t len;
};

static void *amap(size_t len)
{
	void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void bfree(struct buf *b)
{
	if (b->p)
		munmap(b->p, b->len ? b->len : 1);
	b->p = NULL;
}

/* Read [off, off + len) of the file into fresh memory. */
static int bread(int fd, uint64_t fsize, uint64_t off, uint64_t len, struct buf *b)
{
	size_t done = 0;

	b->p = NULL;
	if (off > fsize || len > fsize - off || len > MAX_SYMTAB)
		return -EPROTO;
	b->len = (size_t)len;
	b->p = amap(b->len);
	if (!b->p)
		return -ENOMEM;
	while (done < len) {
		ssize_t r = pread(fd, (char *)b->p + done, (size_t)len - done,
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			bfree(b);
			return r < 0 ? -errno : -EPROTO;
		}
		done += (size_t)r;
	}
	return 0;
}

/* Is [addr, addr + len) inside a loaded segment with these flags? */
static int in_segment(const struct dl_phdr_info *info, uintptr_t addr, size_t len,
		      uint32_t flags)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags &&
		    addr >= lo && addr - lo <= ph->p_memsz && len <= ph->p_memsz - (addr - lo))
			return 1;
	}
	return 0;
}

static void sort_addrs(uintptr_t *v, size_t n)
{
	/* sites come nearly sorted from the linker: a shell sort is quick on
	 * that and needs no memory */
	static const size_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};

	for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++)
		for (size_t i = gaps[g]; i < n; i++) {
			uintptr_t t = v[i];
			size_t j = i;

			for (; j >= gaps[g] && v[j - gaps[g]] > t; j -= gaps[g])
				v[j] = v[j - gaps[g]];
			v[j] = t;
		}
}

/* symrule.h's table of the symbols (functions only, if funcs): the
 * candidates, sorted, one per group, in fresh memory (*fs, *len bytes) */
static int sym_table(const struct buf *syms, const struct buf *strs, uintptr_t base, int funcs,
		     struct trail_symrule_ent **fs, size_t *len, size_t *nfs)
{
	const ElfW(Sym) *sy = syms->p;
	size_t n = syms->len / sizeof(*sy), k = 0;
	struct trail_symrule_ent *v;

	*len = n * sizeof(*v);
	if (!(v = amap(*len)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int cls;

		if (sy[i].st_name >= strs->len ||
		    (funcs && ELF64_ST_TYPE(sy[i].st_info) != STT_FUNC) ||
		    (cls = trail__symrule_class(sy[i].st_info, sy[i].st_shndx,
						(const char *)strs->p + sy[i].st_name)) < 0)
			continue;
		v[k++] = (struct trail_symrule_ent){
			.value = base + sy[i].st_value,
			.size = sy[i].st_size,
			.index = (uint32_t)i,
			.name = sy[i].st_name,
			.rank = trail__symrule_rank(cls, sy[i].st_info, sy[i].st_other, sy[i].st_size),
		};
	}
	*fs = v;
	*nfs = trail__symrule_table(v, k);
	return 0;
}

/* room for n sites and names_need bytes of names in o */
static int sites_alloc(struct fobj *o, size_t n, size_t names_need)
{
	o->mem_len = n * sizeof(struct fsite) + names_need;
	o->mem = amap(o->mem_len);
	if (!o->mem)
		return -ENOMEM;
	o->sites = o->mem;
	o->names = (char *)o->mem + n * sizeof(struct fsite);
	o->names[0] = '\0';
	o->names_len = 1;
	return 0;
}

/* the next site of o, at addr, named nm (len bytes) */
static struct fsite *site_add(struct fobj *o, uintptr_t addr, const char *nm, size_t len)
{
	struct fsite *f = &o->sites[o->nsites++];

	f->addr = addr;
	f->name = 0;
	f->flags = 0;
	if (len) {
		f->name = (uint32_t)o->names_len;
		memcpy(o->names + o->names_len, nm, len);
		o->names[o->names_len + len] = '\0';
		o->names_len += len + 1;
	}
	return f;
}

/*
 * Unmodified code: an executable built without patchable entries gets a
 * site at each function its symbols name whose entry src/arch can
 * displace (reloc.c: whole instructions moved into a copy, a jump
 * written over them), else whose first instruction can run from a copy
 * (a breakpoint then replaces it: FSITE_TRAP); the others are counted in
 * skipped. The flags of such a site say FSITE_RELOC and the bytes
 * displaced.
 */
#define LEN_TRAP 0x80u /* in lens[]: the length is the first instruction's */
static int reloc_sites(struct fobj *o, const struct dl_phdr_info *info,
		       const struct trail_symrule_ent *fs, size_t nfs, const char *strs,
		       size_t strs_len, int unnamed)
{
	size_t names_need = 1, nkeep = 0;
	uint8_t *lens;
	struct buf tmp;
	char why[8];

	tmp.len = nfs ? nfs : 1;
	if (!(tmp.p = amap(tmp.len)))
		return -ENOMEM;
	lens = tmp.p;
	for (size_t i = 0; i < nfs; i++) {
		const char *nm = strs + fs[i].name;
		unsigned len = 0;

		/* up to the next symbol: the padding after a short function */
		size_t room = i + 1 < nfs && fs[i + 1].value > fs[i].value
				      ? fs[i + 1].value - fs[i].value : fs[i].size;

		lens[i] = 0;
		if (!fs[i].size || (!*nm && !unnamed) || trail__symrule_crt(nm) ||
		    !in_segment(info, fs[i].value, fs[i].size, PF_X | PF_R))
			continue;
		if (room < fs[i].size || !in_segment(info, fs[i].value, room, PF_X | PF_R))
			room = fs[i].size;
		if (!trail_arch_reloc_check((const uint8_t *)fs[i].value, fs[i].size, room,
					    fs[i].value, &len, why, sizeof(why))) {
			lens[i] = (uint8_t)len;
		} else if (!trail_arch_trap_check((const uint8_t *)fs[i].value, fs[i].size,
						  fs[i].value, &len, why, sizeof(why))) {
			lens[i] = (uint8_t)(len | LEN_TRAP);
		} else {
			o->skipped++;
			continue;
		}
		nkeep++;
		names_need += strnlen(nm, strs_len - fs[i].name) + 1;
	}
	if (sites_alloc(o, nkeep, names_need)) {
		bfree(&tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nfs; i++) {
		const char *nm = strs + fs[i].name;
		struct fsite *f;

		if (!lens[i])
			continue;
		f = site_add(o, fs[i].value, nm, strnlen(nm, strs_len - fs[i].name));
		f->flags = FSITE_RELOC | (lens[i] & ~LEN_TRAP) | (lens[i] & LEN_TRAP ? FSITE_TRAP : 0);
		if (!o->lo || f->addr < o->lo)
			o->lo = f->addr;
		if (f->addr + FSITE_LEN(f) > o->hi)
			o->hi = f->addr + FSITE_LEN(f);
	}
	bfree(&tmp);
	return 0;
}

/*
 * A stripped executable: a site at each function start the unwinder's
 * table gives (src/common/ehframe.h), named by .dynsym where it has the
 * address, else unnamed (listed and reported as an address; traced when
 * no -l narrows the selection).
 */
static int eh_sites(struct fobj *o, const struct dl_phdr_info *info, uintptr_t base,
		    uintptr_t text_lo, uintptr_t text_hi, const struct buf *dyn,
		    const struct buf *dynstr)
{
	const uint8_t *hdr = NULL;
	size_t len = 0, n = 0, ndyn = 0, dyn_len = 0, v_len;
	struct trail_symrule_ent *v, *dv = NULL;
	uintptr_t last = 0;
	int r;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) {
			hdr = (const uint8_t *)(base + info->dlpi_phdr[i].p_vaddr);
			len = info->dlpi_phdr[i].p_memsz;
		}
	if (!hdr || !in_segment(info, (uintptr_t)hdr, len, PF_R) ||
	    trail__ehframe_count(hdr, len, &n) || !n)
		return 0;
	v_len = n * sizeof(*v);
	if (!(v = amap(v_len)))
		return -ENOMEM;
	if (dyn->p && sym_table(dyn, dynstr, base, 1, &dv, &dyn_len, &ndyn))
		dv = NULL;
	for (size_t i = 0; i < n; i++) {
		uintptr_t a = trail__ehframe_start(hdr, (uintptr_t)hdr, i);
		uintptr_t next = i + 1 < n ? trail__ehframe_start(hdr, (uintptr_t)hdr, i + 1) : 0;
		const struct trail_symrule_ent *d =
			dv ? trail__symrule_find(dv, ndyn, 0, a) : NULL;

		/* .text only: the PLT's FDE, .init's are no functions to
		 * enter; nor is the entry point (_start: what it finds on
		 * its stack is argc, no return address) */
		if (a < text_lo || a >= text_hi || a == getauxval(AT_ENTRY)) {
			v[i] = (struct trail_symrule_ent){.value = a, .index = (uint32_t)i};
			continue;
		}
		if (!next || next > text_hi || next <= a)
			next = text_hi;
		/* sorted by the linker; otherwise, increasing entries only */
		if (i && a <= last) {
			v[i] = (struct trail_symrule_ent){.value = a, .index = (uint32_t)i};
			continue;
		}
		last = a;
		v[i] = (struct trail_symrule_ent){
			.value = a,
			.size = next > a ? next - a : 0,
			.index = (uint32_t)i,
			.name = d && d->value == a ? d->name : 0,
		};
	}
	r = reloc_sites(o, info, v, n, dynstr->p ? dynstr->p : "", dynstr->p ? dynstr->len : 1, 1);
	munmap(v, v_len);
	if (dv)
		munmap(dv, dyn_len);
	return r;
}

/* The section headers of the ELF file fd (*st its stat) and their name
 * table, bounded: 0, or -EPROTO / -errno. */
static int sections(int fd, struct stat *st, struct buf *shdrs, struct buf *shstr,
		    uint64_t *shnum)
{
	ElfW(Ehdr) eh;
	const ElfW(Shdr) *sh;
	uint64_t n, strndx;
	int r;

	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) ||
	    pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
		return -EPROTO;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(ElfW(Shdr)) || !eh.e_shoff)
		return -EPROTO;
	/* section count and name table, with the extended numbering */
	n = eh.e_shnum;
	strndx = eh.e_shstrndx;
	if (!n || strndx == SHN_XINDEX) {
		ElfW(Shdr) s0;

		if (pread(fd, &s0, sizeof(s0), (off_t)eh.e_shoff) != (ssize_t)sizeof(s0))
			return -EPROTO;
		if (!n)
			n = s0.sh_size;
		if (strndx == SHN_XINDEX)
			strndx = s0.sh_link;
	}
	if (!n || n > MAX_SECTIONS || strndx >= n)
		return -EPROTO;
	if ((r = bread(fd, (uint64_t)st->st_size, eh.e_shoff, n * sizeof(ElfW(Shdr)), shdrs)))
		return r;
	sh = shdrs->p;
	if (bread(fd, (uint64_t)st->st_size, sh[strndx].sh_offset, sh[strndx].sh_size, shstr))
		return -EPROTO;
	*shnum = n;
	return 0;
}

/* section i's name, or NULL if it is not within the table */
static const char *sec_name(const ElfW(Shdr) *sh, uint64_t i, const struct buf *shstr)
{
	const char *nm = (const char *)shstr->p + sh[i].sh_name;

	if (sh[i].sh_name >= shstr->len ||
	    strnlen(nm, shstr->len - sh[i].sh_name) == shstr->len - sh[i].sh_name)
		return NULL;
	return nm;
}

int trail__fobj_exe_unmodified(void)
{
	struct buf shdrs = {0}, shstr = {0};
	struct stat st;
	uint64_t shnum;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return 0;
	if (!sections(fd, &st, &shdrs, &shstr, &shnum)) {
		const ElfW(Shdr) *sh = shdrs.p;

		r = 1;
		for (uint64_t i = 1; i < shnum && r; i++) {
			const char *nm = sec_name(sh, i, &shstr);

			r = !(nm && !strcmp(nm, SITES_SECTION));
		}
	}
	bfree(&shdrs);
	bfree(&shstr);
	close(fd);
	return r;
}

int trail__fobj_load(struct fobj *o, const char *path, uintptr_t base,
		     const struct dl_phdr_info *info)
{
	int symtab = 0; /* syms is .symtab (else .dynsym) */
	uintptr_t text_lo = 0, text_hi = 0; /* .text: a stripped one's functions */
	struct buf shdrs = {0}, shstr = {0}, syms = {0}, strs = {0}, tmp = {0};
	const ElfW(Shdr) *sh;
	struct stat st;
	uint64_t shnum, sites_addr = 0, sites_size = 0;
	uintptr_t *addrs = NULL;
	struct trail_symrule_ent *fs = NULL;
	size_t fs_len = 0, nfs = 0, naddrs = 0, names_need = 1, nkeep = 0;
	int fd, r = -EPROTO;

	memset(o, 0, sizeof(*o));
	o->base = base;
	fd = open(path && *path ? path : "/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if ((r = sections(fd, &st, &shdrs, &shstr, &shnum)))
		goto out;
	sh = shdrs.p;
	r = -EPROTO;
	for (uint64_t i = 1; i < shnum; i++) {
		const char *nm = sec_name(sh, i, &shstr);

		if (!nm)
			continue;
		if (!strcmp(nm, SITES_SECTION) && sh[i].sh_type == SHT_PROGBITS) {
			sites_addr = sh[i].sh_addr;
			sites_size = sh[i].sh_size;
		}
		if (!strcmp(nm, ".text") && (sh[i].sh_flags & SHF_EXECINSTR)) {
			text_lo = base + sh[i].sh_addr;
			text_hi = text_lo + sh[i].sh_size;
		}
	}
	/* the symbol table with its names: .symtab if kept, else .dynsym */
	for (int pass = 0; pass < 2 && !syms.p; pass++)
		for (uint64_t i = 1; i < shnum && !syms.p; i++) {
			uint32_t want = pass ? SHT_DYNSYM : SHT_SYMTAB;

			if (sh[i].sh_type != want || sh[i].sh_link >= shnum ||
			    sh[i].sh_entsize != sizeof(ElfW(Sym)))
				continue;
			if (bread(fd, (uint64_t)st.st_size, sh[i].sh_offset, sh[i].sh_size, &syms) ||
			    bread(fd, (uint64_t)st.st_size, sh[sh[i].sh_link].sh_offset,
				  sh[sh[i].sh_link].sh_size, &strs)) {
				bfree(&syms);
				bfree(&strs);
			}
			symtab = !pass;
		}
	r = 0;
	if (!sites_size && info && !*info->dlpi_name && syms.p && symtab) {
		/* an executable without patchable entries: its functions'
		 * entries, displaced */
		if (!(r = sym_table(&syms, &strs, base, 1, &fs, &fs_len, &nfs)))
			r = reloc_sites(o, info, fs, nfs, strs.p, strs.len, 0);
		goto out;
	}
	if (!sites_size && info && !*info->dlpi_name) {
		/* ... stripped: its functions' starts from .eh_frame_hdr */
		r = eh_sites(o, info, base, text_lo, text_hi, &syms, &strs);
		goto out;
	}
	if (!sites_size || sites_size % 8 ||
	    !in_segment(info, base + sites_addr, sites_size, PF_R))
		goto out; /* no sites: nothing to trace here */

	/* the site addresses, relocated by the loader, from memory */
	naddrs = sites_size / 8;
	tmp.len = naddrs * sizeof(*addrs);
	if (!(tmp.p = amap(tmp.len))) {
		r = -ENOMEM;
		goto out;
	}
	addrs = tmp.p;
	memcpy(addrs, (const void *)(base + sites_addr), tmp.len);
	/* an object seen while dlopen maps it (the loader's debug hook runs
	 * before relocation) still holds link-time addresses there */
	for (size_t i = 0; base && i < naddrs; i++)
		if (!in_segment(info, addrs[i], TRAIL_ARCH_SITE_SIZE, PF_X | PF_R) &&
		    in_segment(info, addrs[i] + base, TRAIL_ARCH_SITE_SIZE, PF_X | PF_R))
			addrs[i] += base;
	sort_addrs(addrs, naddrs);

	/* the symbol table of symrule.h: candidates, sorted, one per group */
	if (syms.p && (r = sym_table(&syms, &strs, base, 0, &fs, &fs_len, &nfs)))
		goto out;

	/* keep the sites that are real, unpatched and in code; size names */
	for (size_t i = 0; i < naddrs; i++) {
		const struct trail_symrule_ent *s;

		if ((i && addrs[i] == addrs[i - 1]) ||
		    !in_segment(info, addrs[i], TRAIL_ARCH_SITE_SIZE, PF_X | PF_R) ||
		    !trail_arch_site_is_nop((const uint8_t *)addrs[i])) {
			o->skipped += !(i && addrs[i] == addrs[i - 1]);
			addrs[i] = 0;
			continue;
		}
		s = fs ? trail__symrule_find(fs, nfs, 0, addrs[i]) : NULL;
		/* an area starting before its function's entry (=N,M) is
		 * entered in its middle by every caller: never a site */
		if (fs && !s) {
			o->skipped++;
			addrs[i] = 0;
			continue;
		}
		nkeep++;
		if (s)
			names_need += strnlen((const char *)strs.p + s->name,
					      strs.len - s->name) + 1;
	}
	if ((r = sites_alloc(o, nkeep, names_need)))
		goto out;
	for (size_t i = 0; i < naddrs; i++) {
		struct fsite *f;
		const struct trail_symrule_ent *s;

		if (!addrs[i])
			continue;
		s = fs ? trail__symrule_find(fs, nfs, 0, addrs[i]) : NULL;
		f = s ? site_add(o, addrs[i], (const char *)strs.p + s->name,
				 strnlen((const char *)strs.p + s->name, strs.len - s->name))
		      : site_add(o, addrs[i], "", 0);
		if (!o->lo || f->addr < o->lo)
			o->lo = f->addr;
		if (f->addr + TRAIL_ARCH_SITE_SIZE > o->hi)
			o->hi = f->addr + TRAIL_ARCH_SITE_SIZE;
	}
out:
	if (fs)
		munmap(fs, fs_len ? fs_len : 1);
	bfree(&tmp);
	bfree(&shdrs);
	bfree(&shstr);
	bfree(&syms);
	bfree(&strs);
	close(fd);
	if (r)
		trail__fobj_free(o);
	return r;
}

void trail__fobj_free(struct fobj *o)
{
	if (o->mem)
		munmap(o->mem, o->mem_len ? o->mem_len : 1);
	memset(o, 0, sizeof(*o));
}

const struct fsite *trail__fobj_find(const struct fobj *o, uintptr_t addr)
{
	size_t lo = 0, hi = o->nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->sites[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->nsites && o->sites[lo].addr == addr ? &o->sites[lo] : NULL;
}
