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
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/ehframe.h"
#include "../common/pltscan.h"
#include "../common/symrule.h"
#include "../common/util.h"

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
static int in_phdr(const struct dl_phdr_info *info, uint32_t type, uintptr_t addr, size_t len,
		   uint32_t flags)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == type && (ph->p_flags & flags) == flags &&
		    addr >= lo && addr - lo <= ph->p_memsz && len <= ph->p_memsz - (addr - lo))
			return 1;
	}
	return 0;
}

static int in_segment(const struct dl_phdr_info *info, uintptr_t addr, size_t len,
		      uint32_t flags)
{
	return in_phdr(info, PT_LOAD, addr, len, flags);
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
			.rank = trail__symrule_rank(cls, sy[i].st_info, sy[i].st_other, sy[i].st_size,
						    (const char *)strs->p + sy[i].st_name),
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
 * Unmodified code: an object built without patchable entries gets a
 * candidate site at each function its symbols name (FSITE_LAZY): when it
 * is first hooked, trail__fobj_check() decodes its entry, to be
 * displaced (reloc.c: whole instructions moved into a copy, a jump
 * written over them: FSITE_RELOC and the bytes displaced), else entered
 * through a breakpoint on its first instruction (FSITE_TRAP), else
 * refused (counted in skipped).
 */

/* src/arch's jump table reader: the object's own loaded bytes (ctx its
 * dl_phdr_info), nothing outside its segments */
static int table_read(void *ctx, uintptr_t addr, void *buf, size_t n)
{
	if (!in_segment(ctx, addr, n, PF_R))
		return -1;
	memcpy(buf, (const void *)addr, n);
	return 0;
}

#define SUB_NAME_MAX 24 /* "sub_" + 16 hex digits + NUL */

/* a symbol's name without the version a .symtab writes into it
 * (memcpy@@GLIBC_2.14: '@' names an object in a glob) */
static size_t sym_len(const char *nm, size_t max)
{
	size_t n = 0;

	while (n < max && nm[n] && nm[n] != '@')
		n++;
	return n;
}

/* an unnamed function's name: sub_<its address in the file> */
static size_t sub_name(char *out, uintptr_t vaddr)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0, len = 4;

	memcpy(out, "sub_", 4);
	do {
		tmp[n++] = hex[vaddr & 15];
		vaddr >>= 4;
	} while (vaddr);
	while (n)
		out[len++] = tmp[--n];
	out[len] = '\0';
	return len;
}

static int reloc_sites(struct fobj *o, const struct dl_phdr_info *info,
		       const struct trail_symrule_ent *fs, size_t nfs, const char *strs,
		       size_t strs_len, int unnamed)
{
	size_t names_need = 1, nkeep = 0;
	struct buf tmp;

	tmp.len = nfs ? nfs : 1;
	if (!(tmp.p = amap(tmp.len)))
		return -ENOMEM;
	/* (keep[i]: 1 + the bytes of padding after the function, at most 255) */
	for (size_t i = 0; i < nfs; i++) {
		const char *nm = strs + fs[i].name;
		uint8_t *keep = (uint8_t *)tmp.p + i;
		/* up to the next symbol: the padding after a short function */
		size_t room = i + 1 < nfs && fs[i + 1].value > fs[i].value
				      ? fs[i + 1].value - fs[i].value : fs[i].size;

		*keep = 0;
		if (!fs[i].size || (!*nm && !unnamed) || trail__symrule_crt(nm) ||
		    !in_segment(info, fs[i].value, fs[i].size, PF_X | PF_R))
			continue;
		if (room < fs[i].size || !in_segment(info, fs[i].value, room, PF_X | PF_R))
			room = fs[i].size;
		room -= fs[i].size;
		*keep = (uint8_t)(1 + (room < 254 ? room : 254));
		nkeep++;
		names_need += *nm ? sym_len(nm, strs_len - fs[i].name) + 1 : SUB_NAME_MAX;
	}
	if (sites_alloc(o, nkeep, names_need)) {
		bfree(&tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nfs; i++) {
		const char *nm = strs + fs[i].name;
		uint8_t keep = ((const uint8_t *)tmp.p)[i];
		char sub[SUB_NAME_MAX];
		struct fsite *f;

		if (!keep)
			continue;
		if (*nm)
			f = site_add(o, fs[i].value, nm, sym_len(nm, strs_len - fs[i].name));
		else
			f = site_add(o, fs[i].value, sub, sub_name(sub, fs[i].value - o->base));
		f->flags = FSITE_RELOC | FSITE_LAZY | (uint32_t)(keep - 1) << 16;
		f->size = fs[i].size;
		if (!o->lo || f->addr < o->lo)
			o->lo = f->addr;
		if (f->addr + TRAIL_ARCH_SITE_SIZE > o->hi)
			o->hi = f->addr + TRAIL_ARCH_SITE_SIZE;
	}
	o->unmod = 1;
	bfree(&tmp);
	return 0;
}

/* ------------------------------------------------ the decoded entries' cache */

#define CACHE_MAGIC "TRLSITE2"

struct cache_hdr {
	char magic[8];
	uint32_t nsites, idlen;
	uint64_t fsize, fmtime;
	uint8_t id[20];
	uint32_t pad;
};

/* site k's flags from the cache, if they can be trusted: 1 (set), or 0 */
static int cache_take(struct fobj *o, uint32_t k)
{
	struct fsite *f = &o->sites[k];
	uint32_t c = o->cache[k];
	unsigned len = c & 0xffu;

	if (c == FSITE_REFUSED) {
		f->flags = c;
		o->skipped++;
		return 1;
	}
	/* a jump's 1..24 bytes, a breakpoint's first instruction, or a
	 * whole function's jump (its copy is made by decoding it again) */
	if ((c & ~(0xffu | FSITE_TRAP | FSITE_WHOLE)) != FSITE_RELOC ||
	    (c & (FSITE_TRAP | FSITE_WHOLE)) == (FSITE_TRAP | FSITE_WHOLE) || !len ||
	    len > TRAIL_ARCH_RELOC_MAXLEN || len > f->size + FSITE_ROOM(f))
		return 0;
	/* the bytes as the file has them: no one's breakpoint there (a
	 * debugger's, a kernel uprobe's) */
	if (memchr((const void *)f->addr, 0xcc, len))
		return 0;
	f->flags = c;
	if (f->addr + len > o->hi)
		o->hi = f->addr + len;
	return 1;
}

/* the cache file's name for o: .sites-<build-id in hex> */
static int cache_name(const struct fobj *o, char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 7;

	if (!o->idlen || n < 8 + 2u * o->idlen)
		return -1;
	memcpy(buf, ".sites-", 7);
	for (unsigned i = 0; i < o->idlen; i++) {
		buf[k++] = hex[o->id[i] >> 4];
		buf[k++] = hex[o->id[i] & 15];
	}
	buf[k] = '\0';
	return 0;
}

void trail__fobj_cache_load(struct fobj *o, int dirfd)
{
	struct cache_hdr h;
	struct stat st;
	char name[64];
	size_t want;
	void *p;
	int fd;

	if (dirfd < 0 || !o->unmod || !o->nsites || o->cache || cache_name(o, name, sizeof(name)))
		return;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	want = sizeof(h) + (size_t)o->nsites * sizeof(uint32_t);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size != want ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, CACHE_MAGIC, 8) || h.nsites != o->nsites || h.idlen != o->idlen ||
	    memcmp(h.id, o->id, o->idlen) || h.fsize != o->fsize || h.fmtime != o->fmtime) {
		close(fd);
		return;
	}
	p = mmap(NULL, want, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return;
	o->cache = (const uint32_t *)((const char *)p + sizeof(h));
	o->cache_len = want;
}

void trail__fobj_cache_save(struct fobj *o, int dirfd)
{
	struct cache_hdr h;
	char name[64], tmp[96];
	size_t len;
	uint32_t *v;
	int fd;

	if (dirfd < 0 || !o->unmod || !o->nchecked || cache_name(o, name, sizeof(name)))
		return;
	len = sizeof(h) + (size_t)o->nsites * sizeof(uint32_t);
	if (!(v = amap(len)))
		return;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.nsites = o->nsites;
	h.idlen = o->idlen;
	h.fsize = o->fsize;
	h.fmtime = o->fmtime;
	memcpy(h.id, o->id, o->idlen);
	memcpy(v, &h, sizeof(h));
	for (uint32_t k = 0; k < o->nsites; k++) {
		uint32_t fl = o->sites[k].flags;

		/* decoded ones only (what the cache had, for the others) */
		((uint32_t *)((char *)v + sizeof(h)))[k] =
			fl & FSITE_LAZY ? (o->cache ? o->cache[k] : 0)
			: fl & FSITE_REFUSED ? FSITE_REFUSED
			: fl & FSITE_DEMOTED ? FSITE_RELOC | FSITE_WHOLE | TRAIL_ARCH_SITE_SIZE
			: fl & (FSITE_RELOC | FSITE_TRAP | FSITE_WHOLE | 0xffu);
	}
	/* a name of this process's, renamed over the old file */
	memcpy(tmp, name, strlen(name));
	tmp[strlen(name)] = '.';
	*trail__utoa(tmp + strlen(name) + 1, (uint64_t)getpid()) = '\0';
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		ssize_t w = trail__write_full(fd, v, len);

		close(fd);
		if (w != (ssize_t)len || renameat(dirfd, tmp, dirfd, name))
			unlinkat(dirfd, tmp, 0);
		else
			o->nchecked = 0;
	}
	munmap(v, len);
}

/* o's GNU build-id, from its notes in memory (bounded) */
static void read_build_id(struct fobj *o, const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		size_t off = 0;

		if (ph->p_type != PT_NOTE || !in_segment(info, (uintptr_t)p, ph->p_memsz, PF_R))
			continue;
		while (off + sizeof(ElfW(Nhdr)) <= ph->p_memsz) {
			ElfW(Nhdr) nh;
			size_t name, desc;

			memcpy(&nh, p + off, sizeof(nh));
			name = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
			desc = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
			if (name > ph->p_memsz || desc > ph->p_memsz ||
			    off + sizeof(nh) + name + desc > ph->p_memsz)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(p + off + sizeof(nh), "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= sizeof(o->id)) {
				memcpy(o->id, p + off + sizeof(nh) + name, nh.n_descsz);
				o->idlen = (uint8_t)nh.n_descsz;
				return;
			}
			off += sizeof(nh) + name + desc;
		}
	}
}

int trail__fobj_check(struct fobj *o, uint32_t k)
{
	struct fsite *f = &o->sites[k];
	struct dl_phdr_info info;
	unsigned len = 0;
	uint32_t flags;
	char why[8];

	if (f->flags & FSITE_REFUSED)
		return -1;
	if (!(f->flags & FSITE_LAZY))
		return 0;
	if (o->cache && cache_take(o, k))
		return f->flags & FSITE_REFUSED ? -1 : 0;
	o->nchecked++;
	memset(&info, 0, sizeof(info));
	info.dlpi_addr = o->base;
	info.dlpi_phdr = o->phdr;
	info.dlpi_phnum = o->phnum;
	trail_arch_table_reader(table_read, &info);
	switch (trail_arch_entry_check((const uint8_t *)f->addr, f->size, f->size + FSITE_ROOM(f),
				       f->addr, &len, why, sizeof(why))) {
	case TRAIL_ARCH_ENTER_JUMP:
		flags = FSITE_RELOC | len;
		break;
	case TRAIL_ARCH_ENTER_WHOLE:
		flags = FSITE_RELOC | FSITE_WHOLE | len;
		break;
	case TRAIL_ARCH_ENTER_TRAP:
		flags = FSITE_RELOC | FSITE_TRAP | len;
		break;
	case -ENOTSUP:
	case -ENOMEM:
		/* no decoder in this process (libtrail-decoder.so not loaded:
		 * a session that did not ask for it), or no memory for it:
		 * nothing said about the code, so nothing cached; the site
		 * stays to be decoded when a decoder is there */
		trail_arch_table_reader(NULL, NULL);
		o->nchecked--;
		return -1;
	default:
		flags = FSITE_REFUSED;
	}
	trail_arch_table_reader(NULL, NULL);
	if (flags & FSITE_REFUSED)
		o->skipped++;
	else if (f->addr + len > o->hi)
		o->hi = f->addr + len;
	f->flags = flags;
	return flags & FSITE_REFUSED ? -1 : 0;
}

/*
 * A stripped object: a site at each function start the unwinder's table
 * gives (src/common/ehframe.h), named by .dynsym where it has the
 * address, else sub_<address>.
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
		 * its stack is argc, no return address); nor a function's
		 * cold part, whose FDE starts with its hot part's frame (a
		 * jump enters it anywhere) */
		if (a < text_lo || a >= text_hi || a == getauxval(AT_ENTRY) ||
		    !trail__ehframe_is_entry(trail__ehframe_fde(hdr, (uintptr_t)hdr, i), table_read,
					     (void *)info)) {
			v[i] = (struct trail_symrule_ent){.value = a, .index = (uint32_t)i};
			continue;
		}
		if (!next || next > text_hi || next <= a)
			next = text_hi;
		/* sorted by the linker; otherwise, increasing entries only;
		 * unnamed and shorter than a jump up to the next start: a
		 * fragment of another function (`xor %eax,%eax; ret`, a cold
		 * path's tail, 54 of python3.11's 117 breakpoint sites),
		 * entered by a jump, not a call */
		if ((i && a <= last) ||
		    (!(d && d->value == a) && next - a < TRAIL_ARCH_SITE_SIZE)) {
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

static const char *sec_name(const ElfW(Shdr) *sh, uint64_t i, const struct buf *shstr);

/* ------------------------------------------------------------ library calls */

/* the version the importer asks of symbol i (its .gnu.version index, then
 * .gnu.version_r's entry of that index), "" if none: bounded */
static const char *need_version(const struct buf *versym, const struct buf *verneed,
				const struct buf *dynstr, uint32_t i)
{
	const uint16_t *vs = versym->p;
	const uint8_t *vn = verneed->p;
	uint16_t want;
	size_t off = 0;

	if (!vs || !vn || i >= versym->len / 2 || (want = vs[i] & 0x7fff) < 2)
		return "";
	for (int files = 0; files < 4096 && off + sizeof(ElfW(Verneed)) <= verneed->len; files++) {
		ElfW(Verneed) n;
		size_t aoff;

		memcpy(&n, vn + off, sizeof(n));
		aoff = off + n.vn_aux;
		for (unsigned k = 0; k < n.vn_cnt && aoff >= off &&
				     aoff + sizeof(ElfW(Vernaux)) <= verneed->len; k++) {
			ElfW(Vernaux) a;

			memcpy(&a, vn + aoff, sizeof(a));
			if (a.vna_other == want && a.vna_name < dynstr->len &&
			    memchr((const char *)dynstr->p + a.vna_name, 0, dynstr->len - a.vna_name))
				return (const char *)dynstr->p + a.vna_name;
			if (!a.vna_next)
				break;
			aoff += a.vna_next;
		}
		if (!n.vn_next)
			break;
		off += n.vn_next;
	}
	return "";
}

struct pltc {
	const struct buf *dynsym, *dynstr, *versym, *verneed;
	const struct dl_phdr_info *info;
	uintptr_t base;
	uintptr_t *entry, *slot; /* NULL: counting */
	uint32_t *sym;
	size_t n, cap, names_need;
};

/* a library call through the entry at entry (entry == slot: a call
 * through the GOT, no entry) */
static int plt_one(void *arg, uint64_t entry, uint64_t slot, uint32_t sym)
{
	struct pltc *c = arg;
	const ElfW(Sym) *sy = c->dynsym->p;
	const char *nm;

	if (sym >= c->dynsym->len / sizeof(*sy) || sy[sym].st_name >= c->dynstr->len ||
	    !memchr((const char *)c->dynstr->p + sy[sym].st_name, 0,
		    c->dynstr->len - sy[sym].st_name))
		return 0;
	nm = (const char *)c->dynstr->p + sy[sym].st_name;
	if (!trail__plt_hookable(nm) ||
	    !in_segment(c->info, c->base + slot, sizeof(uintptr_t), PF_R) ||
	    (entry != slot && !in_segment(c->info, c->base + entry, TRAIL_PLT_ENTRY, PF_X | PF_R)))
		return 0;
	if (c->entry) {
		if (c->n == c->cap)
			return 1;
		/* in address order (.plt before .plt.sec before .got); a
		 * hostile file's entries out of it are not taken */
		if (c->n && c->base + entry <= c->entry[c->n - 1])
			return 0;
		c->entry[c->n] = c->base + entry;
		c->slot[c->n] = c->base + slot;
		c->sym[c->n] = sym;
	} else {
		c->names_need += strlen(nm) + 1 +
				 strlen(need_version(c->versym, c->verneed, c->dynstr, sym)) + 1;
	}
	c->n++;
	return 0;
}

/* trail__got_slots: an imported function's slot */
static int got_keep(void *arg, uint32_t sym)
{
	const struct pltc *c = arg;
	const ElfW(Sym) *sy = c->dynsym->p;

	/* (a name never hooked, __libc_start_main's, is no reason to scan) */
	return sym && sym < c->dynsym->len / sizeof(*sy) && sy[sym].st_shndx == SHN_UNDEF &&
	       (ELF64_ST_TYPE(sy[sym].st_info) == STT_FUNC ||
		ELF64_ST_TYPE(sy[sym].st_info) == STT_GNU_IFUNC) &&
	       sy[sym].st_name < c->dynstr->len &&
	       memchr((const char *)c->dynstr->p + sy[sym].st_name, 0,
		      c->dynstr->len - sy[sym].st_name) &&
	       trail__plt_hookable((const char *)c->dynstr->p + sy[sym].st_name);
}

/* the GOT slots of .rela.dyn that only calls use (src/common/pltscan.h),
 * into got (mapped here, freed by the caller): how many */
static size_t got_calls(struct pltc *c, const struct buf *reladyn, const ElfW(Shdr) *sh,
			uint64_t shnum, struct buf *got)
{
	struct trail_gotslot *v;
	size_t n, k = 0;

	if (!reladyn->p || !(got->len = reladyn->len / sizeof(ElfW(Rela)) * sizeof(*v)) ||
	    !(got->p = amap(got->len)))
		return 0;
	v = got->p;
	n = trail__got_slots(reladyn->p, reladyn->len / sizeof(ElfW(Rela)), v, got_keep, c);
	for (uint64_t i = 1; i < shnum && n; i++)
		if ((sh[i].sh_flags & SHF_EXECINSTR) && sh[i].sh_type == SHT_PROGBITS &&
		    in_segment(c->info, c->base + sh[i].sh_addr, sh[i].sh_size, PF_X | PF_R))
			trail__got_uses((const uint8_t *)(c->base + sh[i].sh_addr), sh[i].sh_addr,
					sh[i].sh_size, v, n);
	for (size_t i = 0; i < n; i++)
		if (trail__got_is_call(&v[i]))
			v[k++] = v[i];
	return k;
}

/* a name and a version, as FSITE_PLT sites keep them */
static void name_put(struct fobj *o, struct fsite *f, const char *nm, const char *ver)
{
	size_t a = strlen(nm), b = strlen(ver);

	f->name = (uint32_t)o->names_len;
	memcpy(o->names + o->names_len, nm, a + 1);
	memcpy(o->names + o->names_len + a + 1, ver, b + 1);
	o->names_len += a + 1 + b + 1;
}

int trail__fsite_lib_plt;

/*
 * An object's library calls: a site at each entry of its PLT
 * (src/common/pltscan.h), merged with its functions' sites in address
 * order. 0, or -ENOMEM (the object is then left as it was).
 */
static int plt_sites(struct fobj *o, const struct dl_phdr_info *info, int fd,
		     const struct stat *st, const ElfW(Shdr) *sh, uint64_t shnum,
		     const struct buf *shstr)
{
	struct buf rela = {0}, reladyn = {0}, dynsym = {0}, dynstr = {0}, versym = {0},
		   verneed = {0}, tmp = {0}, got = {0};
	struct pltc c = {.dynsym = &dynsym, .dynstr = &dynstr, .versym = &versym,
			 .verneed = &verneed, .info = info, .base = o->base};
	const struct trail_gotslot *gv;
	struct fobj nw;
	uint64_t dsi = 0;
	size_t ngot;
	int r = 0;

	/* .rela.plt (the PLT's slots) and .rela.dyn (the GOT's), which name
	 * their symbols in .dynsym */
	for (uint64_t i = 1; i < shnum; i++) {
		const char *nm = sec_name(sh, i, shstr);
		struct buf *b = nm && !strcmp(nm, ".rela.plt")   ? &rela
				: nm && !strcmp(nm, ".rela.dyn") ? &reladyn
								 : NULL;

		if (!b || b->p || sh[i].sh_type != SHT_RELA || sh[i].sh_entsize != sizeof(ElfW(Rela)) ||
		    !sh[i].sh_link || sh[i].sh_link >= shnum || (dsi && sh[i].sh_link != dsi) ||
		    sh[sh[i].sh_link].sh_type != SHT_DYNSYM ||
		    sh[sh[i].sh_link].sh_link >= shnum)
			continue;
		dsi = sh[i].sh_link;
		if (bread(fd, (uint64_t)st->st_size, sh[i].sh_offset, sh[i].sh_size, b))
			goto out;
	}
	if (!dsi ||
	    bread(fd, (uint64_t)st->st_size, sh[dsi].sh_offset, sh[dsi].sh_size, &dynsym) ||
	    bread(fd, (uint64_t)st->st_size, sh[sh[dsi].sh_link].sh_offset,
		  sh[sh[dsi].sh_link].sh_size, &dynstr))
		goto out;
	for (uint64_t i = 1; i < shnum; i++) {
		if (sh[i].sh_type == SHT_GNU_versym && sh[i].sh_link == dsi && !versym.p)
			bread(fd, (uint64_t)st->st_size, sh[i].sh_offset, sh[i].sh_size, &versym);
		if (sh[i].sh_type == SHT_GNU_verneed && !verneed.p)
			bread(fd, (uint64_t)st->st_size, sh[i].sh_offset, sh[i].sh_size, &verneed);
	}
	ngot = got_calls(&c, &reladyn, sh, shnum, &got);
	gv = got.p;
	/* count, then take: .plt, then .plt.sec (IBT), then the calls
	 * through the GOT */
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			c.cap = c.n;
			c.n = 0;
			tmp.len = c.cap * (2 * sizeof(uintptr_t) + sizeof(uint32_t));
			if (!c.cap || !(tmp.p = amap(tmp.len)))
				goto out;
			c.entry = tmp.p;
			c.slot = c.entry + c.cap;
			c.sym = (uint32_t *)(c.slot + c.cap);
		}
		for (uint64_t i = 1; i < shnum && rela.p; i++) {
			const char *nm = sec_name(sh, i, shstr);

			if (!nm || (strcmp(nm, ".plt") && strcmp(nm, ".plt.sec")) ||
			    !(sh[i].sh_flags & SHF_EXECINSTR) ||
			    !in_segment(info, o->base + sh[i].sh_addr, sh[i].sh_size, PF_X | PF_R))
				continue;
			trail__plt_each((const uint8_t *)(o->base + sh[i].sh_addr), sh[i].sh_addr,
					sh[i].sh_size, rela.p, rela.len / sizeof(ElfW(Rela)),
					plt_one, &c);
		}
		for (size_t i = 0; i < ngot; i++)
			if (plt_one(&c, gv[i].slot, gv[i].slot, gv[i].sym))
				break;
	}
	/* the sites of both kinds, in address order */
	memset(&nw, 0, sizeof(nw));
	nw.base = o->base;
	nw.skipped = o->skipped;
	nw.phdr = o->phdr;
	nw.phnum = o->phnum;
	nw.unmod = o->unmod;
	nw.lib = o->lib;
	memcpy(nw.id, o->id, sizeof(nw.id));
	nw.idlen = o->idlen;
	nw.fsize = o->fsize;
	nw.fmtime = o->fmtime;
	if (sites_alloc(&nw, o->nsites + c.n, o->names_len + c.names_need)) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t a = 0, b = 0; a < o->nsites || b < c.n;) {
		struct fsite *f;

		if (b == c.n || (a < o->nsites && o->sites[a].addr < c.entry[b])) {
			const struct fsite *g = &o->sites[a++];
			const char *nm = trail__fsite_name(o, g);

			f = site_add(&nw, g->addr, nm, strlen(nm));
			f->flags = g->flags;
			f->size = g->size; /* (and got: one field) */
		} else {
			const ElfW(Sym) *sy = dynsym.p;
			uint32_t k = c.sym[b];

			if (a < o->nsites && o->sites[a].addr == c.entry[b]) {
				b++; /* (a function's own site there: it wins) */
				continue;
			}
			f = &nw.sites[nw.nsites++];
			f->addr = c.entry[b];
			f->flags = FSITE_PLT | (in_phdr(info, PT_GNU_RELRO, c.slot[b], sizeof(uintptr_t), 0) ? FSITE_RELRO : 0);
			f->got = c.slot[b++];
			name_put(&nw, f, (const char *)dynstr.p + sy[k].st_name,
				 need_version(&versym, &verneed, &dynstr, k));
		}
		if (!nw.lo || f->addr < nw.lo)
			nw.lo = f->addr;
		if (f->addr + TRAIL_ARCH_SITE_SIZE > nw.hi)
			nw.hi = f->addr + TRAIL_ARCH_SITE_SIZE;
		if ((f->flags & FSITE_RELOC) && f->addr + FSITE_LEN(f) > nw.hi)
			nw.hi = f->addr + FSITE_LEN(f);
	}
	trail__fobj_free(o);
	*o = nw;
out:
	bfree(&tmp);
	bfree(&got);
	bfree(&rela);
	bfree(&reladyn);
	bfree(&dynsym);
	bfree(&dynstr);
	bfree(&versym);
	bfree(&verneed);
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

/* The .symtab of o's separate debug file (by its build-id), into *syms
 * and *strs (what they held freed): 0, or -1 (they are left as they were) */
static int debug_symtab(const struct fobj *o, struct buf *syms, struct buf *strs)
{
	struct buf shdrs = {0}, shstr = {0}, sy = {0}, st_ = {0};
	const ElfW(Shdr) *sh;
	struct stat st;
	uint64_t shnum;
	char path[512];
	int fd, r = -1;

	if (!o->idlen || trail__debug_file(o->id, o->idlen, path, sizeof(path)) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (!sections(fd, &st, &shdrs, &shstr, &shnum)) {
		sh = shdrs.p;
		for (uint64_t i = 1; i < shnum && r; i++) {
			if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= shnum ||
			    sh[i].sh_entsize != sizeof(ElfW(Sym)) ||
			    sh[sh[i].sh_link].sh_type != SHT_STRTAB)
				continue;
			if (!bread(fd, (uint64_t)st.st_size, sh[i].sh_offset, sh[i].sh_size, &sy) &&
			    !bread(fd, (uint64_t)st.st_size, sh[sh[i].sh_link].sh_offset,
				   sh[sh[i].sh_link].sh_size, &st_))
				r = 0;
			else {
				bfree(&sy);
				bfree(&st_);
			}
		}
	}
	if (r) {
		bfree(&sy);
		bfree(&st_);
	} else {
		bfree(syms);
		bfree(strs);
		*syms = sy;
		*strs = st_;
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
	if (info) {
		o->phdr = info->dlpi_phdr;
		o->phnum = (uint16_t)info->dlpi_phnum;
		o->lib = !!*info->dlpi_name;
		read_build_id(o, info);
		o->fsize = (uint64_t)st.st_size;
		o->fmtime = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	}
	/* stripped, its symbols installed apart (a -dbgsym or -dbg package):
	 * the separate debug file's .symtab names every function */
	if (!sites_size && info && !symtab && !debug_symtab(o, &syms, &strs))
		symtab = 1;
	if (!sites_size && info && syms.p && symtab) {
		/* an object without patchable entries: its functions'
		 * entries, displaced */
		if (!(r = sym_table(&syms, &strs, base, 1, &fs, &fs_len, &nfs)))
			r = reloc_sites(o, info, fs, nfs, strs.p, strs.len, 0);
		goto out;
	}
	if (!sites_size && info) {
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
			names_need += sym_len((const char *)strs.p + s->name,
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
				 sym_len((const char *)strs.p + s->name, strs.len - s->name))
		      : site_add(o, addrs[i], "", 0);
		if (!o->lo || f->addr < o->lo)
			o->lo = f->addr;
		if (f->addr + TRAIL_ARCH_SITE_SIZE > o->hi)
			o->hi = f->addr + TRAIL_ARCH_SITE_SIZE;
	}
out:
	/* the object's calls into libraries: the executable's, hooked by
	 * default; a library's, with --nest-libcall, where it was relocated
	 * before (ftracer.c: one dlopen'ed is seen before the loader fills
	 * its slots) */
	if (!r && info && (!*info->dlpi_name || trail__fsite_lib_plt))
		r = plt_sites(o, info, fd, &st, shdrs.p, shnum, &shstr);
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
	if (o->cache)
		munmap((void *)((const char *)o->cache - sizeof(struct cache_hdr)), o->cache_len);
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
