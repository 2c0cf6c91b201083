/* SPDX-License-Identifier: MIT */
/*
 * insnloc.h - where a probe at an instruction goes, read from the object's
 * file: FUNC+OFFS (bytes past a function's symbol) or PATH:OFFSET (a file
 * offset, as uprobe_events takes it). The address must start an
 * instruction of its function (decoded from the function's start by the
 * arch layer's decoder, the start from a symbol or the unwind table:
 * else the nearest boundaries are named) that can
 * run elsewhere (src/arch trail_arch_trap_check: else why not).
 */
#ifndef TRAIL_TOOLS_INSNLOC_H
#define TRAIL_TOOLS_INSNLOC_H

#include <stddef.h>
#include <stdint.h>

struct insnloc {
	uint64_t addr;     /* link-time address of the instruction */
	char func[128];    /* the function holding it, "" if none known */
	uint64_t func_off; /* its offset there */
	unsigned len;      /* the instruction's length */
	unsigned jump;     /* the bytes a jump there displaces, when one may
			    * replace the breakpoint (src/arch
			    * trail_arch_jump_check), else 0 */
	char jump_why[160]; /* else why not ("" without a function) */
	int vector;        /* its function uses the wide vector registers (or
			    * is unknown): a jump's stub saves them */
};

/* func: FUNC of FUNC+OFFS (off bytes past it), or NULL for a file offset
 * off. An offset no sized symbol covers is decoded from the nearest
 * function start known (any function symbol, the unwind table's
 * .eh_frame_hdr); with none before it, refused unless trusted (an
 * address the object's own notes give: a USDT probe's). 0, or -ENOENT
 * (no such function: err says so), -EINVAL (err: not an instruction
 * boundary, one that cannot be checked, an instruction that cannot be
 * probed, not in code), -ENOTSUP (another architecture), -errno (the
 * file). */
int insnloc_resolve(const char *path, const char *func, uint64_t off, int trusted,
		    struct insnloc *out, char *err, size_t errlen);

/* The same for the instruction at a link-time address of path (a source
 * line's, from DWARF). */
int insnloc_resolve_addr(const char *path, uint64_t addr, struct insnloc *out, char *err,
			 size_t errlen);

/* The offsets of func's ret instructions in path (at most max, 64), for
 * a return probe at them: 0, or -EXDEV (a tail call: err says where),
 * -ENOENT, -E2BIG, -errno with err. */
int insnloc_returns(const char *path, const char *func, uint64_t *rets, unsigned max,
		    unsigned *n, char *err, size_t errlen);

/* The link-time address a file offset of path is mapped at (an
 * executable segment's): 0 or -EINVAL. */
int insnloc_file_addr(const char *path, uint64_t off, uint64_t *addr);

#endif /* TRAIL_TOOLS_INSNLOC_H */
