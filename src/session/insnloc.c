/* SPDX-License-Identifier: MIT */
/* insnloc.c - where a probe at an instruction goes (insnloc.h). */
#include "insnloc.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/ehframe.h"
#include "elfscan.h"

struct elf_file {
	int fd;
	Elf *e;
	const uint8_t *raw;
	size_t rawlen;
};

static int elf_open(struct elf_file *f, const char *path)
{
	GElf_Ehdr eh;

	memset(f, 0, sizeof(*f));
	if ((f->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	elf_version(EV_CURRENT);
	if (!(f->e = elf_begin(f->fd, ELF_C_READ, NULL)) || elf_kind(f->e) != ELF_K_ELF ||
	    !gelf_getehdr(f->e, &eh) || !(f->raw = (const uint8_t *)elf_rawfile(f->e, &f->rawlen)))
		return -EINVAL;
	return eh.e_machine == EM_X86_64 ? 0 : -ENOTSUP;
}

static void elf_close(struct elf_file *f)
{
	if (f->e)
		elf_end(f->e);
	if (f->fd >= 0)
		close(f->fd);
}

/* the executable segment holding a file offset (by_off) or an address */
static int exec_seg(Elf *e, uint64_t v, int by_off, GElf_Phdr *out)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t lo;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		lo = by_off ? ph.p_offset : ph.p_vaddr;
		if (v >= lo && v - lo < ph.p_filesz) {
			*out = ph;
			return 0;
		}
	}
	return -EINVAL;
}

int insnloc_file_addr(const char *path, uint64_t off, uint64_t *addr)
{
	struct elf_file f;
	GElf_Phdr ph;
	int r = elf_open(&f, path);

	if (!r && !(r = exec_seg(f.e, off, 1, &ph)))
		*addr = off - ph.p_offset + ph.p_vaddr;
	elf_close(&f);
	return r;
}

/* Each defined function symbol of e, .symtab's then .dynsym's, with its
 * name ("" when it has none), until fn returns nonzero (returned). */
static int each_func_sym(Elf *e, int (*fn)(const GElf_Sym *s, const char *name, void *ctx),
			 void *ctx)
{
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *n;
				int r;

				if (!gelf_getsym(d, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
					continue;
				n = elf_strptr(e, sh.sh_link, sym.st_name);
				if ((r = fn(&sym, n ? n : "", ctx)))
					return r;
			}
		}
	}
	return 0;
}

struct func_want {
	const char *name; /* or NULL: the one covering addr */
	uint64_t addr;
	GElf_Sym *out;
	char *nm;
	size_t nmlen;
};

static int func_match(const GElf_Sym *s, const char *n, void *ctx)
{
	struct func_want *w = ctx;

	if (!*n || (w->name ? strcmp(n, w->name) != 0
			    : !(w->addr >= s->st_value && w->addr - s->st_value < s->st_size)))
		return 0;
	*w->out = *s;
	snprintf(w->nm, w->nmlen, "%s", n);
	return 1;
}

/* A function symbol: named name, or (name NULL) the one covering addr;
 * .symtab first, then .dynsym. */
static int find_func(Elf *e, const char *name, uint64_t addr, GElf_Sym *out, char *nm,
		     size_t nmlen)
{
	struct func_want w = {name, addr, out, nm, nmlen};

	return each_func_sym(e, func_match, &w) ? 0 : -ENOENT;
}

/* nearest_start's walk: the highest start at or before addr, the lowest
 * after it, within the segment from lo */
struct near {
	uint64_t addr, lo, best, next;
	int found;
	char *nm;
	size_t nmlen;
};

static void near_take(struct near *w, uint64_t a, const char *name)
{
	if (a < w->lo)
		return;
	if (a > w->addr) {
		if (a < w->next)
			w->next = a;
		return;
	}
	if (w->found && a <= w->best)
		return;
	w->best = a;
	w->found = 1;
	snprintf(w->nm, w->nmlen, "%s", name);
}

static int near_sym(const GElf_Sym *s, const char *n, void *ctx)
{
	near_take(ctx, s->st_value, n);
	return 0;
}

/*
 * Where the function holding addr starts, when no sized symbol covers it
 * (a stripped object's code, a local function of a library): the
 * nearest known function start at or before addr, from any function
 * symbol (.symtab, .dynsym, sized or not) and the unwinder's table
 * (.eh_frame_hdr: every function's start, and each cold part's), and the
 * next start after it (*end, else left alone). Decoding from a known
 * start is what proves an instruction boundary. 0, or -ENOENT: nothing
 * known starts before addr in its segment (lo).
 */
static int nearest_start(Elf *e, const uint8_t *raw, size_t rawlen, uint64_t addr, uint64_t lo,
			 uint64_t *start, uint64_t *end, char *nm, size_t nmlen)
{
	struct near w = {.addr = addr, .lo = lo, .next = *end, .nm = nm, .nmlen = nmlen};
	size_t np;

	each_func_sym(e, near_sym, &w);
	if (!elf_getphdrnum(e, &np))
		for (size_t i = 0; i < np; i++) {
			GElf_Phdr ph;
			size_t n;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME ||
			    ph.p_offset > rawlen || ph.p_filesz > rawlen - ph.p_offset ||
			    trail__ehframe_count(raw + ph.p_offset, ph.p_filesz, &n))
				continue;
			/* (unnamed: said by its address) */
			for (size_t k = 0; k < n; k++)
				near_take(&w, trail__ehframe_start(raw + ph.p_offset, ph.p_vaddr, k), "");
		}
	if (!w.found)
		return -ENOENT;
	if (!nm[0])
		snprintf(nm, nmlen, "0x%llx", (unsigned long long)w.best);
	*start = w.best;
	*end = w.next;
	return 0;
}

static int resolve(const char *path, const char *func, uint64_t off, int is_addr, int trusted,
		   struct insnloc *out, char *err, size_t errlen);

int insnloc_resolve(const char *path, const char *func, uint64_t off, int trusted,
		    struct insnloc *out, char *err, size_t errlen)
{
	return resolve(path, func, off, 0, trusted, out, err, errlen);
}

int insnloc_resolve_addr(const char *path, uint64_t addr, struct insnloc *out, char *err,
			 size_t errlen)
{
	return resolve(path, NULL, addr, 1, 1, out, err, errlen);
}

static int resolve(const char *path, const char *func, uint64_t off, int is_addr, int trusted,
		   struct insnloc *out, char *err, size_t errlen)
{
	struct elf_file f;
	GElf_Sym s;
	GElf_Phdr ph;
	const uint8_t *code;
	uint64_t at, cur, prev, size, end_hint = 0;
	char why[160];
	int r = elf_open(&f, path), n;

	memset(out, 0, sizeof(*out));
	err[0] = '\0';
	if (r) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -ENOTSUP ? "not an x86-64 object" : r == -EINVAL ? "not an ELF object"
									    : strerror(-r));
		goto out;
	}
	if (func) {
		if ((r = find_func(f.e, func, 0, &s, out->func, sizeof(out->func)))) {
			snprintf(err, errlen, "no function '%s' in %s", func, path);
			goto out;
		}
		if (s.st_size && off >= s.st_size) {
			r = -EINVAL;
			snprintf(err, errlen, "+0x%llx is past the end of %s (%llu bytes)",
				 (unsigned long long)off, func, (unsigned long long)s.st_size);
			goto out;
		}
		at = s.st_value + off;
	} else {
		if ((r = exec_seg(f.e, off, !is_addr, &ph))) {
			snprintf(err, errlen, "0x%llx is not in an executable segment of %s",
				 (unsigned long long)off, path);
			goto out;
		}
		at = is_addr ? off : off - ph.p_offset + ph.p_vaddr;
		if (find_func(f.e, NULL, at, &s, out->func, sizeof(out->func))) {
			/* no sized symbol covers it: decoded from the nearest
			 * function start known (no jump then: the function's
			 * bounds are not known) */
			uint64_t lo = ph.p_vaddr, hi = ph.p_vaddr + ph.p_filesz;

			s.st_size = 0;
			if (nearest_start(f.e, f.raw, f.rawlen, at, lo, &s.st_value, &hi, out->func,
					  sizeof(out->func))) {
				if (!trusted) {
					r = -EINVAL;
					snprintf(err, errlen,
						 "0x%llx cannot be checked as an instruction boundary: "
						 "no function of %s is known to start before it (no "
						 "symbol, no unwind table entry)",
						 (unsigned long long)at, path);
					goto out;
				}
				/* (an address its object's notes give: the
				 * instruction itself) */
				s.st_value = at;
			} else if (hi > at && hi - s.st_value < ph.p_vaddr + ph.p_filesz - s.st_value) {
				end_hint = hi;
			}
		}
	}
	if ((r = exec_seg(f.e, at, 0, &ph))) {
		snprintf(err, errlen, "0x%llx is not in %s's code", (unsigned long long)at, path);
		goto out;
	}
	/* the bytes from the function's start to its end (or the next
	 * function's start, or the segment's end) */
	size = ph.p_vaddr + ph.p_filesz - s.st_value;
	if (s.st_size && s.st_size < size)
		size = s.st_size;
	if (end_hint && end_hint - s.st_value < size)
		size = end_hint - s.st_value;
	if (s.st_value < ph.p_vaddr || ph.p_offset + (s.st_value - ph.p_vaddr) + size > f.rawlen) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: truncated file", path);
		goto out;
	}
	code = f.raw + ph.p_offset + (s.st_value - ph.p_vaddr);
	for (cur = prev = s.st_value; cur < at; prev = cur, cur += (uint64_t)n)
		if ((n = trail_arch_insn_len(code + (cur - s.st_value), size - (cur - s.st_value),
					     cur)) <= 0) {
			r = -EINVAL;
			snprintf(err, errlen, "%s+0x%llx: not an instruction the decoder knows",
				 out->func, (unsigned long long)(cur - s.st_value));
			goto out;
		}
	if (cur != at) {
		r = -EINVAL;
		snprintf(err, errlen,
			 "%s+0x%llx is not an instruction boundary (the nearest: +0x%llx, +0x%llx)",
			 out->func, (unsigned long long)(at - s.st_value),
			 (unsigned long long)(prev - s.st_value),
			 (unsigned long long)(cur - s.st_value));
		goto out;
	}
	if (trail_arch_trap_check(code + (at - s.st_value), size - (at - s.st_value), at,
				  &out->len, why, sizeof(why))) {
		r = -EINVAL;
		snprintf(err, errlen, "the instruction at %s+0x%llx cannot be probed: %s",
			 out->func[0] ? out->func : "0x", (unsigned long long)(at - s.st_value),
			 why + (why[0] == '+' ? strcspn(why, " ") + 1 : 0));
		goto out;
	}
	out->addr = at;
	out->func_off = at - s.st_value;
	/* a jump instead of the breakpoint, where the function's code allows:
	 * its bounds are known (a sized symbol) */
	trail_arch_table_reader(elfscan_vaddr_read, f.e); /* jump tables, from the file */
	if (s.st_size &&
	    trail_arch_jump_check(code, size, s.st_value, at, &out->jump, out->jump_why,
				  sizeof(out->jump_why)))
		out->jump = 0;
	out->vector = !s.st_size || trail_arch_uses_vector(code, size, s.st_value);
	trail_arch_table_reader(NULL, NULL);
out:
	elf_close(&f);
	return r;
}

int insnloc_returns(const char *path, const char *func, uint64_t *rets, unsigned max,
		    unsigned *n, char *err, size_t errlen)
{
	struct elf_file f;
	GElf_Sym s;
	GElf_Phdr ph;
	char name[128], why[200];
	uintptr_t at[64];
	int r = elf_open(&f, path);

	*n = 0;
	err[0] = '\0';
	if (r) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -ENOTSUP ? "not an x86-64 object" : "not an ELF object");
		goto out;
	}
	if ((r = find_func(f.e, func, 0, &s, name, sizeof(name))) || !s.st_size) {
		r = -ENOENT;
		snprintf(err, errlen, "no function '%s' in %s", func, path);
		goto out;
	}
	if ((r = exec_seg(f.e, s.st_value, 0, &ph)) ||
	    ph.p_offset + (s.st_value - ph.p_vaddr) + s.st_size > f.rawlen) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: %s is not in its code", path, func);
		goto out;
	}
	if (max > sizeof(at) / sizeof(at[0]))
		max = sizeof(at) / sizeof(at[0]);
	r = trail_arch_returns(f.raw + ph.p_offset + (s.st_value - ph.p_vaddr), s.st_size,
			       s.st_value, at, max, n, why, sizeof(why));
	if (r) {
		snprintf(err, errlen, "%s's returns cannot be probed at its ret instructions: %s",
			 func, why);
		goto out;
	}
	for (unsigned i = 0; i < *n; i++)
		rets[i] = at[i] - s.st_value;
out:
	elf_close(&f);
	return r;
}
