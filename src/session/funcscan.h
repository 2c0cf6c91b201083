/* SPDX-License-Identifier: MIT */
/*
 * funcscan.h - the patchable function entries of one ELF file, read
 * offline: what `trail list -f` shows, the tool-side twin of libtrail's
 * in-process src/lib/fsites.c (see doc/design/function-hooks.md).
 *
 * A program built with -fpatchable-function-entry=N[,M] carries N nop bytes
 * per function (M of them before the symbol, the rest at its entry or just
 * after its endbr64), and a section __patchable_function_entries of
 * address-sized entries, one per area, giving the address of its first
 * byte. Where that address is depends on the file:
 *   - ET_EXEC: in the section's bytes;
 *   - ET_DYN (PIE, shared object): an R_X86_64_RELATIVE relocation in
 *     .rela.dyn whose r_offset is the entry and whose addend is the address
 *     (the bytes are 0), or, with DT_RELR (-z pack-relative-relocs), the
 *     bytes themselves;
 *   - ET_REL: an R_X86_64_64 in .rela__patchable_function_entries against
 *     a section symbol (gcc) or a section/function symbol plus addend.
 *
 * Only x86-64 files are understood (ELFCLASS64, or x32). Every file is
 * hostile: sizes and offsets come from libelf's checked accessors and are
 * bounded again here; garbage or truncated input gives an error or no
 * sites, never a crash.
 */
#ifndef TRAIL_TOOL_FUNCSCAN_H
#define TRAIL_TOOL_FUNCSCAN_H

#include <stddef.h>
#include <stdint.h>

struct fsite {
	/* file virtual address of the first byte of the patchable area (an
	 * offset in section shndx for an ET_REL file) */
	uint64_t addr;
	/* st_value of the function symbol containing addr, or whose entry
	 * the area precedes (=N,M); 0 if none */
	uint64_t func;
	/*
	 * Nop bytes of the area found at addr in the file: a run of 0x90
	 * (gcc) or one multi-byte nop (clang); when the run reaches the
	 * function's entry (=N,M), the nops at the entry are counted too,
	 * unless an endbr64 sits there (then the area is split and only the
	 * bytes before the entry count). A function whose first instruction
	 * is a one-byte alignment nop may show one byte more.
	 */
	uint32_t nops;
	/* bytes of the area before the function's entry (M of =N,M), 0 when
	 * the area is at or after the entry */
	uint32_t before;
	uint32_t shndx;     /* section holding addr */
	uint8_t reloc;      /* unmodified code: the bytes a jump displaces
			     * at the entry (src/arch reloc.c), else 0 */
	uint8_t trap;       /* ... or 1: a breakpoint replaces the first
			     * instruction, reloc bytes long (a jump cannot) */
	uint8_t whole;      /* ... or 1: the whole function runs from a copy,
			     * the jump at its entry (a breakpoint instead
			     * when a probe is inside it: libtrail's fobjs.c) */
	uint8_t plt;        /* a program's call into a shared library: addr is
			     * its PLT entry or the GOT slot of its -fno-plt
			     * calls (src/common/pltscan.h), name the function
			     * it calls */
	const char *name;   /* demangled name, "" if no symbol */
	const char *symbol; /* the raw symbol name, "" if none */
};

/* Can the x86-64 hook (a 5-byte call written at addr) use this site? The
 * area must start at or after the function's entry: a call across the
 * symbol would be entered in its middle by every caller. */
#define FUNCSCAN_SITE_BYTES 5
static inline int funcscan_usable(const struct fsite *s)
{
	return s->before == 0 && s->nops >= FUNCSCAN_SITE_BYTES;
}

struct fscan {
	struct fsite *sites; /* sorted by addr (ET_REL: by shndx, addr) */
	size_t n;
	char *object;        /* the path scanned */
	uint16_t e_type;     /* ET_EXEC, ET_DYN, ET_REL... */
	size_t entries;      /* entries read, duplicates included */
	size_t skipped;      /* distinct sites dropped: not in code, or their
			      * bytes are not nops (a patched file?) */
	char *strings;       /* owns every name and symbol */
	/* a program without patchable entries: its sites are its
	 * functions' entries, displaced (src/arch reloc.c); skipped counts
	 * those that cannot be, the first one's reason here */
	int reloc;           /* (then entries counts the functions looked at) */
	int lib;             /* ... of a shared library: traced where an -l or
			      * -g names them, not by default (libtrail's
			      * ftracer.c) */
	size_t traps;        /* of the sites, those entered through a breakpoint */
	char refused_why[200];
};

/*
 * Sites of one ELF object, sorted, duplicates removed. Returns 0 (n may be
 * 0: no such section, or no section headers at all) or -errno with a
 * one-line reason in err ("./x: not an ELF file"): -ENOENT, -EACCES...
 * (open), -EISDIR, -ENOEXEC (not an ELF object: not ELF, an archive, not a
 * regular file), -EINVAL (an ELF file libelf refuses, e.g. truncated, or a
 * section it cannot read), -ENOTSUP (not x86-64), -ENOMEM. On 0, err is ""
 * unless something a user may want a warning about happened (an
 * unreadable symbol table): then its reason. *out is always initialised;
 * release it with funcscan_free() (also after an error; NULL-safe).
 */
int funcscan_file(const char *path, struct fscan *out, char *err,
		  size_t errlen);
/* The same; FUNCSCAN_NAMES: unmodified code's entries are not decoded
 * (each function is a site, reloc and trap 0, skipped 0): what a check of
 * -l patterns needs, in a fraction of the time. */
#define FUNCSCAN_NAMES 1u
/* FUNCSCAN_LIBPLT: a library's PLT entries too (its calls into others,
 * which --nest-libcall traces), not only a program's */
#define FUNCSCAN_LIBPLT 2u
int funcscan_file_opts(const char *path, struct fscan *out, char *err, size_t errlen,
		       unsigned flags);

/* Is an object of this path one trail never hooks (the dynamic loader,
 * libtrail, its decoder and Capstone: what runs trail itself)? */
int funcscan_tool_object(const char *path);
void funcscan_free(struct fscan *f);

/*
 * The demangled form of a symbol name (C++ via __cxa_demangle, a version
 * suffix "@VER"/"@@VER" kept as is), malloc'd; NULL on ENOMEM. A name that
 * is not mangled, or that the demangler refuses, is copied unchanged.
 */
char *funcscan_demangle(const char *symbol);

#endif /* TRAIL_TOOL_FUNCSCAN_H */
