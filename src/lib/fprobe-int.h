/* SPDX-License-Identifier: MIT */
/*
 * fprobe-int.h - what fprobe.c (probes made, fetched, fired) shares with
 * finsn.c (probes at an instruction): the probe and its attachments.
 */
#ifndef TRAIL_LIB_FPROBE_INT_H
#define TRAIL_LIB_FPROBE_INT_H

#include "../common/fetch.h"
#include "../common/filter.h"
#include "../common/meta.h"
#include "fprobe.h"
#include "record.h"

struct fprobe {
	struct fprobe *next;   /* every probe made */
	uint32_t sessions;     /* slots that defined it and still have it */
	uint32_t len;
	const uint8_t *blob;
	struct trail_probe p;
	uint8_t kind;
	uint8_t own;           /* own fields before __probe_fault */
	uint8_t fault;         /* payload has __probe_fault */
	uint16_t *tail;        /* per argument: bytes the following ones need */
	const struct trail_fetch_insn *code; /* the blob's, copied aligned */
	uint16_t nfast;        /* registers only: run by run_fast() */
	uint8_t words;         /* ... each stored as 8 bytes */
	uint16_t fast_len;     /* its payload's length (no arguments: its
				* own fields'); 0: not such a probe */
	struct fast_arg *fast;
	uint8_t keep;          /* entry record small enough to be kept */
	uint32_t state;        /* ev's status word */
	struct trail_event ev;
	struct trail_event *evp[1];
	struct evrt rt;
	struct dso dso;
};

/* an argument of a probe that reads registers only: the saved
 * register's offset in struct trail_arch_regs (entry) or
 * trail_arch_ret_regs (return), and its size in the record */
struct fast_arg {
	uint16_t off;
	uint8_t size;
};

/* a probe attached somewhere: at a function site, or on a source event
 * (eprobe) */
struct fprobe_att {
	struct fprobe_att *next; /* the site's or the source event's */
	struct fprobe *pr;
	uint32_t mask;           /* sessions it runs for there */
	uint64_t *syms;          /* per instruction: resolved SYM value */
	uint64_t unresolved;     /* bits: arguments whose SYM is not loaded */
	struct trail_meta *src;  /* eprobe: its source event's fields */
	struct trail_filter *filter; /* eprobe: `if FILTER` on them, or NULL */
};

extern struct fprobe *trail__fprobes HIDDEN; /* every probe made, newest first */

/* does session s have pr? */
static inline int trail__fprobe_session_has(const struct fprobe *pr, unsigned s)
{
	return (pr->sessions >> s) & 1;
}
/* is o the object a probe names (want: a path or a file name)? */
HIDDEN int trail__fprobe_obj_matches(const struct hobj *o, const char *want);
/* pr attached with o's load bias: NULL when out of memory */
HIDDEN struct fprobe_att *trail__fprobe_att_make(struct fprobe *pr, uintptr_t bias);
/* the probes of *list (an instruction's), hit at ip with the registers r
 * and stack pointer sp, for the sessions of m */
/* A watchpoint's trap (fwatch.c): at's probe for the sessions of m, the
 * registers at the trap (ip past the access), the watched address, the
 * value there before the access */
HIDDEN void trail__fprobe_fire_watch(const struct fprobe_att *at, uint32_t m,
				     const struct trail_arch_regs *r, uintptr_t sp, uintptr_t ip,
				     uintptr_t waddr, uint64_t wold);
/* The probe of a spec's "@probe HEX" line (made if new; NULL: damaged) */
HIDDEN struct fprobe *trail__fprobe_get(const char *hex, size_t n);
HIDDEN void trail__fprobe_fire_insn(struct fprobe_att *const *list, uint32_t m,
				    const struct trail_arch_regs *r, uintptr_t sp, uintptr_t ip);

#endif /* TRAIL_LIB_FPROBE_INT_H */
