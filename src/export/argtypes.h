/* SPDX-License-Identifier: MIT */
/*
 * argtypes.h - what function_graph shows of a call's arguments (record
 * --args) and return value (--retval): the function's parameters and
 * return type from the DWARF of the object it is in (src/probe/dwarf.c,
 * elfutils libdw), looked up once per function and object, the kernel's
 * way with BTF (funcgraph-args, and funcgraph-retval trimmed to its type:
 * nothing for void). Without DWARF nothing is known: the callers fall back
 * to the untyped forms.
 */
#ifndef TRAIL_EXPORT_ARGTYPES_H
#define TRAIL_EXPORT_ARGTYPES_H

#include <stddef.h>
#include <stdint.h>

#include "lbuf.h"

struct trail_argtypes;
struct trail_reader;

struct trail_argtypes *trail_argtypes_new(struct trail_reader *r);
void trail_argtypes_free(struct trail_argtypes *a);

/* "(name=value, ...)" of the call of func (named name, bare) in process
 * pid: the parameters passed in the six integer argument registers args[]
 * (others are shown as "..."). Returns 0 if the function's parameters are
 * not known (then nothing is written). */
int trail_argtypes_args(struct trail_argtypes *a, uint32_t pid, uint64_t func, uint64_t ts_raw,
			const char *name, const uint64_t args[6], struct lbuf *l);

/* The return value as the function's return type has it, into l. Returns
 * 1 written, 0 the function returns void (nothing to show), -1 the type is
 * not known (the caller's untyped form applies). l NULL: only says which. */
int trail_argtypes_retval(struct trail_argtypes *a, uint32_t pid, uint64_t func, uint64_t ts_raw,
			  const char *name, uint64_t retval, struct lbuf *l);

/* One value as its DWARF type shows it: kind 's' signed decimal, 'u'
 * unsigned decimal, 'x' hex (pointers, strings' pointers, the kernel's xN);
 * v trimmed to the type's width, a signed one sign-extended. */
struct trail_argval {
	const char *name; /* the parameter's (NULL for a return value) */
	char kind;
	uint64_t v;
};

#define TRAIL_ARGTYPES_MAX 16

/* The parameters of func's call in out[] (at most TRAIL_ARGTYPES_MAX), as
 * trail_argtypes_args shows them; *more: some were not recorded ("...").
 * Returns how many, or -1 if the function's parameters are not known. The
 * names stay valid until trail_argtypes_free. */
int trail_argtypes_vals(struct trail_argtypes *a, uint32_t pid, uint64_t func, uint64_t ts_raw,
			const char *name, const uint64_t args[6], struct trail_argval *out,
			int *more);

/* The return value typed into *out: 1, 0 void, -1 the type not known. */
int trail_argtypes_retv(struct trail_argtypes *a, uint32_t pid, uint64_t func, uint64_t ts_raw,
			const char *name, uint64_t retval, struct trail_argval *out);

/* a call's name without the "(...)" the view may have added; buf if it
 * had to be cut there, NULL if it does not fit n */
const char *trail_argtypes_bare(const char *name, char *buf, size_t n);

#endif
