/* SPDX-License-Identifier: MIT */
/*
 * dwarf.h - what probes need from DWARF (elfutils libdw): a function's
 * parameters where they are at its entry (the x86_64 SysV ABI: a
 * patchable entry runs before the prologue), their types in the kernel's
 * fetch types, and perf-probe style expressions on them (VAR, VAR->F.G,
 * VAR.F on by-value structs, VAR[I]) turned into raw fetch-args.
 *
 * Debug info is looked for in the object itself, then its separate debug
 * file: .gnu_debuglink next to it and under /usr/lib/debug, and
 * /usr/lib/debug/.build-id/xx/rest.debug ($TRAIL_DEBUG_ROOT replaces
 * /usr/lib/debug, for tests).
 */
#ifndef TRAIL_PROBE_DWARF_H
#define TRAIL_PROBE_DWARF_H

#include <stddef.h>
#include <stdint.h>

struct probe_dwarf;

/* A value resolved to the raw syntax. */
struct probe_dvar {
	char name[32];   /* the variable's (or expression's default) name */
	char fetch[128]; /* raw fetch-arg: "%di", "+16(%di)", "+0(+8(%si))",
			  * "$stack1", "%di:b8@8/64"'s fetch part, ... */
	char type[32];   /* kernel type: "s32", "u8", "x64", "string",
			  * "char", "b3@2/32", "u32[4]" */
};

/* Open path's DWARF. Returns 0, or -ENOENT with err "no debug info for
 * PATH (build with -g, or install its debug package)", or -errno. */
int probe_dwarf_open(const char *path, struct probe_dwarf **out, char *err, size_t n);
void probe_dwarf_close(struct probe_dwarf *dw);

/* Does func exist in the DWARF? Its parameter count (-1: variadic is
 * counted as its named ones plus a flag in *variadic). 0 or -ENOENT. */
int probe_dwarf_func(struct probe_dwarf *dw, const char *func, int *nparams, int *variadic);

/* $$args / $arg*: every parameter of func (float ones and by-value
 * structs skipped, and counted in *skipped). *vars malloc'd. 0, or
 * -ENOENT with err. */
int probe_dwarf_params(struct probe_dwarf *dw, const char *func, struct probe_dvar **vars,
		       int *n, int *skipped, char *err, size_t en);

/* One expression at func's entry: "req->hdr.len", "req->path",
 * "arr[2]", "s.x" (by-value struct), "argc". *errpos: offset into expr
 * of the bad part. An unknown member lists the members in err; a field
 * of a non-struct says so. 0 or -EINVAL/-ENOENT. */
int probe_dwarf_expr(struct probe_dwarf *dw, const char *func, const char *expr,
		     struct probe_dvar *out, int *errpos, char *err, size_t en);

/* One expression at the address pc (link-time) inside a function: its
 * variable any one in scope there (locals of the blocks holding pc,
 * parameters), read where its DWARF location says it is at pc (a
 * register, or memory at a register plus an offset, the frame base from
 * the unwind tables). where names pc for messages ("parse+0x2a"). 0, or
 * -ENOENT (not in scope: the names that are, in err), -EINVAL (optimized
 * out there, a computed value: said why). */
int probe_dwarf_expr_at(struct probe_dwarf *dw, uint64_t pc, const char *where,
			const char *expr, struct probe_dvar *out, int *errpos, char *err,
			size_t en);

/* A source line's address: func's line RLN (perf probe's FUNC:RLN,
 * counted from the line of the function's declaration), or (func NULL)
 * line of file (its path's tail: "app.c", "src/app.c"). The lowest
 * address starting a statement of that line (in func), and the function
 * out of line holding it (its symbol's name) in fname. 0, or -ENOENT with
 * err ("no code at line 12 of parse"), -ESRCH: no such function or no
 * code of that file here (another object may have it). */
int probe_dwarf_line(struct probe_dwarf *dw, const char *func, const char *file, int line,
		     uint64_t *pc, char *fname, size_t fn_n, char *err, size_t en);

/* The return type of func for --retval and $retval's default type:
 * "void", "s32", "u64", "x64" (pointers), "u8" (bool), ... 0, -ENOENT, or
 * -ENOTSUP for a float or struct return value (not fetchable). */
int probe_dwarf_rettype(struct probe_dwarf *dw, const char *func, char *type, size_t n);

#endif /* TRAIL_PROBE_DWARF_H */
