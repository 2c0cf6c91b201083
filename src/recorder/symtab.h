/* SPDX-License-Identifier: MIT */
/*
 * symtab.h - the function symbols of an ELF file (address, size, name,
 * C++ names demangled), for the SYMBOLS sections the recorder writes so
 * that a trace file names the functions it holds addresses of.
 */
#ifndef TRAIL_TOOL_SYMTAB_H
#define TRAIL_TOOL_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct symtab_sym {
	uint64_t addr; /* file virtual address */
	uint64_t size; /* the span of its aliases; 0: unsized (symrule.h) */
	uint32_t name; /* offset in names */
};

struct symtab {
	struct symtab_sym *syms; /* sorted by addr, one per address */
	size_t n;
	char *names;
	size_t names_len;
};

/* The demangled form of a C++ symbol (malloc'ed) with *status 0, or NULL:
 * libstdc++'s __cxa_demangle, loaded at the first call. */
char *symtab_demangle(const char *mangled, int *status);

/* Read the function symbols of path's .symtab (else .dynsym), one per
 * address, named as src/common/symrule.h says (so as libtrail and `trail
 * list -f` name them). 0 or -errno with a reason in err. */
int symtab_load(const char *path, struct symtab *t, char *err, size_t errlen);
void symtab_free(struct symtab *t);

/* For each PLT entry of e that calls an imported function, then each GOT
 * slot only calls go through (-fno-plt; src/common/pltscan.h): fn(arg,
 * the entry's or the slot's address, the function's name); fn returning
 * non-zero stops. */
typedef struct Elf Elf;
void symtab_plt_each(Elf *e, int (*fn)(void *arg, uint64_t entry, const char *name), void *arg);

/* The separate debug file of e (by its GNU build-id, under
 * $TRAIL_DEBUG_ROOT or /usr/lib/debug), opened: its Elf (*fd its
 * descriptor, both the caller's to close), or NULL */
Elf *symtab_debug_elf(Elf *e, int *fd);

#endif
