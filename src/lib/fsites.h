/* SPDX-License-Identifier: MIT */
/*
 * fsites.h - libtrail's view of the patchable function entries of the
 * objects loaded in this process (see doc/design/function-hooks.md).
 *
 * For one loaded object (the executable or a shared object, as
 * dl_iterate_phdr reports it) the reader opens its file, finds the
 * section __patchable_function_entries through the section headers (they
 * are not mapped), and takes the site addresses from memory, where the
 * dynamic loader has relocated them (or is about to, for an object seen
 * in the middle of dlopen: link-time addresses are moved by the bias). Each site gets the name
 * src/common/symrule.h gives it from .symtab, else .dynsym (the rule `trail
 * list -f` and the recorder's SYMBOLS follow too), and is kept only if it
 * lies in an executable segment of the object, its bytes are still an
 * unpatched site, and (when the object has symbols) a symbol names it.
 *
 * An object without patchable entries (unmodified code: the executable
 * or a library as a distribution ships it) gets a site per function its
 * .symtab names, or (stripped) per function start of its unwinder's
 * table, named by .dynsym where it has the address, else sub_<address>
 * (its address in the file's own numbering: the same in every run). Such
 * a site is only a candidate until it is first hooked: its entry is
 * decoded then (trail__fobj_check), so that start-up pays for the
 * functions a session selects, not for every function of every library.
 *
 * The executable also gets a site per library call (FSITE_PLT): each
 * entry of its PLT, named after the function it imports, and each GOT
 * slot only calls use (-fno-plt code: src/common/pltscan.h).
 *
 * Memory comes from mmap, so a load can run where malloc cannot (the
 * control signal handler). Every offset and size read from the file is
 * bounded before use.
 */
#ifndef TRAIL_LIB_FSITES_H
#define TRAIL_LIB_FSITES_H

#include <stddef.h>
#include <stdint.h>

struct fsite {
	uintptr_t addr;   /* run-time address of the site */
	uint32_t name;    /* offset of its function's name in fobj.names */
	uint32_t flags;   /* FSITE_RELOC [| FSITE_TRAP] | bytes displaced,
			   * FSITE_PLT, or 0 */
	union {
		uintptr_t got;  /* FSITE_PLT: the GOT slot its entry jumps through */
		uintptr_t size; /* FSITE_LAZY: the function's size */
	};
};

/* a function entry of unmodified code: its first instructions (the low
 * byte of flags says how many bytes) run from a copy (src/arch reloc.c) */
#define FSITE_RELOC 0x100u
#define FSITE_LEN(f) ((f)->flags & 0xffu)
/* ... entered through a breakpoint on its first instruction (the only one
 * in the copy): a jump cannot replace its entry (arch.h) */
#define FSITE_TRAP 0x200u
/* a library call: the executable's PLT entry for an imported function
 * (src/common/pltscan.h), or, for calls through the GOT, the slot itself
 * (addr == got). Nothing is written at addr: the GOT slot the entry jumps
 * through gets the stub's address. Its name in fobj.names is
 * followed by the symbol version the executable asks for ("" if none). */
#define FSITE_PLT 0x400u
/* ... whose slot is in the RELRO segment: read-only once relocated */
#define FSITE_RELRO 0x800u
/* unmodified code whose entry is not decoded yet (FSITE_RELOC set, no
 * length): trail__fobj_check() decodes it when it is first hooked. The
 * bytes after its size that are still its own (padding up to the next
 * function, at most 255) are in FSITE_ROOM. */
#define FSITE_LAZY 0x1000u
/* ... decoded: nothing can enter it (counted in fobj.skipped) */
#define FSITE_REFUSED 0x2000u
/* ... whose whole function runs from a copy (src/arch reloc.c
 * trail_arch_whole_make; a leaf no jump could enter at its first bytes):
 * the jump at its entry goes to the stub, the stub to the copy, where a
 * loop back to the entry does not meet the hook again */
#define FSITE_WHOLE 0x4000u
/* ... that became a breakpoint site in this process (FSITE_TRAP): its
 * copy could not be made (an instruction probe inside it) */
#define FSITE_DEMOTED 0x8000u
/* Do the libraries' PLT entries get sites too (a session with
 * --nest-libcall joined before the objects were first read)? */
extern int trail__fsite_lib_plt __attribute__((visibility("hidden")));
#define FSITE_ROOM(f) (((f)->flags >> 16) & 0xffu)

struct fobj {
	uintptr_t base;   /* load bias */
	uintptr_t lo, hi; /* executable range */
	struct fsite *sites; /* sorted by addr */
	uint32_t nsites;
	uint32_t skipped; /* listed, but not nops or outside the code */
	char *names;      /* NUL-terminated names, "" for none */
	size_t names_len;
	void *mem;        /* the mapping holding sites and names */
	size_t mem_len;
	const void *phdr; /* its program headers (dl_phdr_info's), for */
	uint16_t phnum;   /* trail__fobj_check() */
	uint8_t unmod;    /* its functions are unmodified code (no patchable
			   * entries): sites named by symbols, else by the
			   * unwinder's table and called sub_<address> */
	uint8_t lib;      /* a shared library, not the executable (with
			   * unmod: hooked only where an -l or -g names it) */
	/* unmod: what identifies its file for the cache of decoded entries
	 * (trail__fobj_cache_*): its GNU build-id, its size and mtime */
	uint8_t id[20], idlen;
	uint64_t fsize, fmtime;
	const uint32_t *cache;  /* the cache's flags, a site each, or NULL */
	size_t cache_len;       /* (its mapping) */
	uint32_t nchecked;      /* entries decoded since the cache was read */
};

struct dl_phdr_info;

/* Load the sites of one object. path "" means the executable
 * (/proc/self/exe). Returns 0 (nsites may be 0) or -errno. */
int trail__fobj_load(struct fobj *o, const char *path, uintptr_t base,
		     const struct dl_phdr_info *info);
void trail__fobj_free(struct fobj *o);

/* Site k of unmodified code decoded (FSITE_LAZY: once): 0 when its entry
 * can be hooked (flags then say how), -1 when it cannot (FSITE_REFUSED,
 * counted in skipped). Other sites: 0. Async-signal-safe. */
int trail__fobj_check(struct fobj *o, uint32_t k);

/*
 * The cache of decoded entries (unmodified code: thousands of functions
 * decoded at each start of a program otherwise): a file per object in
 * the directory dirfd (the registry, private to its user), named by the
 * object's build-id, holding each site's flags once decoded. load maps
 * it if it matches the object (its size, mtime and site count), so that
 * trail__fobj_check takes an entry from it (unless a breakpoint of
 * someone else's is in those bytes now: decoded then); save writes it
 * when entries were decoded since (a new file renamed over the old one).
 * Async-signal-safe; every failure leaves things as without a cache.
 */
void trail__fobj_cache_load(struct fobj *o, int dirfd);
void trail__fobj_cache_save(struct fobj *o, int dirfd);

/* The site at addr, or NULL. */
const struct fsite *trail__fobj_find(const struct fobj *o, uintptr_t addr);

static inline const char *trail__fsite_name(const struct fobj *o,
					    const struct fsite *s)
{
	return o->names + s->name;
}

#endif /* TRAIL_LIB_FSITES_H */
