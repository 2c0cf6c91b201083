/* SPDX-License-Identifier: MIT */
/*
 * symrule.h - which symbol names an address: the one rule shared by
 * libtrail's site table (src/lib/fsites.c), `trail list -f`
 * (src/session/funcscan.c), the recorder's SYMBOLS sections
 * (tools/trail/symtab.c) and the reader that looks addresses up in them
 * (src/tracefile/reader.c), so that a function is selected, listed and
 * reported under one name.
 *
 * The rule, in three steps:
 *   1. candidates: defined symbols (not UNDEF, ABS, COMMON or another
 *      reserved index; SHN_XINDEX is a real section) with a non-empty
 *      name, of type FUNC or GNU_IFUNC (functions) or NOTYPE (labels);
 *   2. aliases: the candidates at one address are one group, named by its
 *      best-ranked member (functions before labels, then GLOBAL > WEAK >
 *      LOCAL > other bindings, then a default version or none
 *      before a compatibility one (a .symtab's memcpy@@GLIBC_2.14 before
 *      memcpy@GLIBC_2.2.5), then sized before unsized, then
 *      default/protected before hidden/internal visibility, then the
 *      earlier in the symbol table); the group spans the largest size of
 *      its members of the winner's class (an unsized alias of a sized
 *      function is that function);
 *   3. the table: a label group inside a function group's span is
 *      dropped (functions name what they cover; labels only fill gaps).
 *      An address is named by the group at the greatest address at or
 *      below it, when that group covers it: [value, value + span), or for
 *      a group with no size the entry and the TRAIL_SYMRULE_SLACK bytes
 *      after it (the patchable area follows an endbr64 there).
 *
 * Everything here is pure: no allocation, no recursion, no global state,
 * async-signal-safe (libtrail builds its table in a signal handler). The
 * caller owns the array and fills one entry per candidate.
 */
#ifndef TRAIL_COMMON_SYMRULE_H
#define TRAIL_COMMON_SYMRULE_H

#include <stddef.h>
#include <stdint.h>

/* bytes after an unsized entry still named by it: an endbr64 */
#define TRAIL_SYMRULE_SLACK 4u

/* the class of a candidate (step 1) */
#define TRAIL_SYMRULE_FUNC 0
#define TRAIL_SYMRULE_LABEL 1

struct trail_symrule_ent {
	uint64_t value; /* st_value (+ load base), or an offset in shndx (ET_REL) */
	uint64_t size;  /* st_size; after trail__symrule_table(): the span */
	uint32_t shndx; /* ET_REL: the section value is in; 0 for a linked file */
	uint32_t index; /* in the symbol table: the last tie-break */
	uint32_t name;  /* the caller's (a string table offset...) */
	uint16_t rank;  /* trail__symrule_rank(): lower wins */
	uint16_t pad;
};

/*
 * Step 1: the class of an ELF symbol (st_info, the raw 16-bit st_shndx,
 * its name; NULL counts as empty), or -1 when it is no candidate.
 */
int trail__symrule_class(unsigned char info, uint16_t shndx, const char *name);

/* Step 2: the rank of a candidate of class cls (lower wins); name (NULL
 * counts as empty) for its version, where a .symtab writes it in. */
uint16_t trail__symrule_rank(int cls, unsigned char info, unsigned char other,
			     uint64_t size, const char *name);

/* Does a (section, address, then rank, then table index) come before b?
 * A total order: the sort is deterministic whatever the algorithm. */
int trail__symrule_before(const struct trail_symrule_ent *a,
			  const struct trail_symrule_ent *b);

/*
 * Steps 2 and 3 on the caller's candidates, in place: sorted (heapsort),
 * one entry per group (the winner, its size replaced by the span), label
 * groups inside a function dropped. Returns the new count. O(n log n).
 */
size_t trail__symrule_table(struct trail_symrule_ent *v, size_t n);

/* Is name one of the functions the crt files put in every program
 * (_start, frame_dummy...), one of the C library's that return twice or
 * on another stack (setjmp, vfork, clone, swapcontext...) or start and
 * end the program (__libc_start_main, __cxa_finalize), or the unwinder's
 * (_Unwind_*)? Never a site of unmodified code. */
int trail__symrule_crt(const char *name);

/* Does the table entry at value with this span (0: unsized) cover addr? */
int trail__symrule_covers(uint64_t value, uint64_t span, uint64_t addr);

/* How many entries of a table lie at or below (shndx, addr). */
size_t trail__symrule_upto(const struct trail_symrule_ent *v, size_t n,
			   uint32_t shndx, uint64_t addr);

/* The entry of a table that names (shndx, addr), or NULL. */
const struct trail_symrule_ent *trail__symrule_find(const struct trail_symrule_ent *v,
						    size_t n, uint32_t shndx,
						    uint64_t addr);

#endif /* TRAIL_COMMON_SYMRULE_H */
