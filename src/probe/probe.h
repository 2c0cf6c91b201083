/* SPDX-License-Identifier: MIT */
/*
 * probe.h - dynamic event definitions, the kernel's grammar
 * (Documentation/trace/kprobetrace.rst, uprobetracer.rst, eprobetrace.rst,
 * and the function-event form of Rostedt's function_events):
 *
 *   p[:[GRP/][EVENT]] [OBJ:]SYM[+OFFS] [FETCHARGS]   entry probe, or one at
 *                                                    the instruction at OFFS
 *   p[:[GRP/][EVENT]] PATH:OFFSET [FETCHARGS]        the instruction at a file
 *                                                    offset (uprobe_events)
 *   r[MAXACTIVE][:[GRP/][EVENT]] [OBJ:]SYM[+0] [FETCHARGS]   return probe
 *   e[:[GRP/][EVENT]] SYS/EVENT [FETCHARGS]            event probe
 *   w[:[GRP/][EVENT]] [r|w|rw]@<ADDR|[OBJ:]SYM[+|-OFFS]>[:LEN] [FETCHARGS]
 *                                                      watchpoint (the
 *                                                      wprobe series'):
 *                                                      an access to data
 *   -:[GRP/]EVENT                                      delete
 *   SYM(TYPE NAME, ...)                                function event
 *                                                      (functions:SYM)
 *
 *   FETCHARGS: [NAME=]FETCHARG[:TYPE] ...
 *   FETCHARG:  %REG | @ADDR | @SYM[+|-OFFS] | $stackN | $stack | $retval |
 *              $comm | $argN | $arg* | $$args | +|-OFFS(FETCHARG) |
 *              $FIELD (eprobe) | a DWARF expression (VAR, VAR->F.G, VAR[I]) |
 *              $addr, $value (w: the watched address, what is there
 *              after the access)
 *   TYPE:      u8..u64 s8..s64 x8..x64 char string ustring symbol symstr
 *              b<WIDTH>@<OFFSET>/<CONTAINER> TYPE[N]
 *
 * The CLI parses (probe_parse: grammar only, caret positions), then
 * compiles a definition for one object (probe_compile: DWARF names
 * resolved, the fetch program and event description built, fetch.h) into
 * the blob a session's spec carries to libtrail.
 */
#ifndef TRAIL_PROBE_PROBE_H
#define TRAIL_PROBE_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/fetch.h"
#include "../common/meta.h"

struct probe_dwarf;

/* An error: a one-line message and the byte offset in the definition
 * text the caret goes under (-1: none). */
struct probe_err {
	int pos;
	char msg[256];
};

struct probe_arg {
	char name[TRAIL_PROBE_MAX_NAME]; /* given (NAME=) or the default */
	int named;       /* NAME= given */
	char *fetch;     /* the fetch-arg as written, without NAME= and :TYPE */
	char *type;      /* the type as written, NULL: default */
	int pos;         /* offset of the argument in the text */
	int fetch_pos;   /* of its fetch-arg */
	int type_pos;    /* of its type (after ':'), -1: none */
};

struct probe_def {
	char kind;       /* 'p', 'r', 'e'; 'f': function event (an entry
			  * probe in group "functions"); '-': delete */
	char group[TRAIL_PROBE_MAX_EVNAME];
	char event[TRAIL_PROBE_MAX_EVNAME];
	int named;       /* GRP/EVENT given (else the kernel's defaults) */
	char *obj;       /* OBJ of OBJ:SYM, NULL: none */
	char *sym;       /* p, r, f: the function; e: "SYS:EVENT" */
	uint64_t offset; /* +OFFS; with fileoff, OFFSET of PATH:OFFSET */
	int fileoff;     /* PATH:OFFSET (uprobe_events): a file offset in
			  * obj, sym is its text ("0x8a7f0") */
	int lined;       /* a source line (perf probe's): FUNC:RLN, line
			  * counted from sym's first, or with srcfile
			  * FILE:LINE (sym is FILE) */
	int line;
	int srcfile;
	uint64_t sema;   /* a USDT probe's semaphore (set by its maker,
			  * never parsed), 0: none */
	int usdt;        /* made from a USDT note (never parsed): its
			  * address is an instruction by the compiler's word */
	int wtype;       /* w: 1 read, 2 write, 3 both (r, w, rw) */
	int wlen;        /* w: 1, 2, 4, 8; 0: not given (the variable's size) */
	int wabs;        /* w: an address (offset), not a symbol */
	int wpos;        /* w: where its SPEC starts in text */
	uint64_t waddr;  /* w, set by its compiler's caller: the variable's
			  * link-time address in wobj (+OFFS), or the address */
	const char *wobj; /* ... its object's path (NULL: an address) */
	int sym_pos;
	int nargs;
	struct probe_arg *args;
	char *text;      /* as given */
	char *filter;    /* e: the text after `if`, NULL: none */
	int filter_pos;  /* where it starts in text */
};

/* Parse one definition. Returns 0, or -EINVAL with e filled in (a group
 * trail records its own events into, probe_group_reserved(), included).
 * Nothing outside the grammar is checked here (symbols, DWARF names,
 * fields). */
int probe_parse(const char *text, struct probe_def *d, struct probe_err *e);
void probe_def_free(struct probe_def *d);

/* Is group one trail writes its own events into (ftrace, synthetic,
 * user_events)? No probe may take it. */
int probe_group_reserved(const char *group);

/* The definition as `cat dynamic_events` prints it:
 * "p:GRP/EVENT SYM+OFFS NAME=FETCHARG[:TYPE] ..." (kernel spacing; a
 * function event prints in its own form). Malloc'd. */
char *probe_def_format(const struct probe_def *d);

/* What a definition is compiled against. */
struct probe_target {
	const char *objpath;     /* the object holding the function (p, r) */
	struct probe_dwarf *dw;  /* its DWARF, NULL: none (raw syntax only) */
	const struct trail_meta *src; /* e: the source event's fields */
	/* @SYM: where a global is: the object path ("" for objpath itself)
	 * and its file address. 0 or -ENOENT. */
	int (*sym_addr)(void *ctx, const char *sym, char *obj, size_t objn,
			uint64_t *vaddr);
	void *ctx;
	/* a probe at an instruction (not a function's entry): its address
	 * in objpath (link-time), else 0; the USDT semaphore to count up
	 * while it is enabled, else 0 */
	uint64_t insn_addr;
	uint64_t sema;
	/* with insn_addr: the bytes a jump there displaces when one may
	 * replace a breakpoint (src/arch trail_arch_jump_check), else 0 */
	unsigned insn_jump;
	int insn_vector; /* its function uses the wide vector registers */
	/* an entry probe on the function at this link-time address of
	 * objpath, one without a name (a stripped object's), else 0 */
	uint64_t entry_addr;
};

/*
 * Compile d for t: DWARF names and $$args resolved, types checked, the
 * event description and fetch program built and checked with
 * trail_probe_check(). *blob (malloc'd, *len bytes) is what the spec
 * carries; *resolved (malloc'd) the definition with every fetch-arg
 * resolved to the raw syntax (what perf probe shows). Returns 0, or
 * -EINVAL / -ENOENT with e filled in (caret into d->text).
 */
int probe_compile(const struct probe_def *d, const struct probe_target *t,
		  uint8_t **blob, size_t *len, char **resolved, struct probe_err *e);

#endif /* TRAIL_PROBE_PROBE_H */
