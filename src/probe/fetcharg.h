/* SPDX-License-Identifier: MIT */
/*
 * fetcharg.h - one fetch-arg and its type, parsed (private to src/probe).
 * parse.c runs it to check a definition's grammar; compile.c runs it again
 * to build the ops, also on the raw fetch-args DWARF resolves names into.
 *
 * A fetch-arg is a base value under zero or more dereferences:
 *
 *   +O1(+O2(...(BASE)...))     off[0] = O1 (outermost first)
 *
 * @ADDR and @SYM read the memory at their address, as in the kernel: they
 * carry one more, implicit, dereference at offset 0 (innermost).
 */
#ifndef TRAIL_PROBE_FETCHARG_H
#define TRAIL_PROBE_FETCHARG_H

#include <stdint.h>

#include "probe.h"

enum probe_fa_base {
	FA_REG,    /* %REG */
	FA_ARG,    /* $argN */
	FA_STACK,  /* $stackN */
	FA_STACKP, /* $stack */
	FA_RETVAL, /* $retval */
	FA_COMM,   /* $comm */
	FA_MEM,    /* @ADDR */
	FA_SYM,    /* @SYM[+|-OFFS] */
	FA_FIELD,  /* $FIELD of an eprobe's source event (maybe $comm) */
	FA_DWARF,  /* VAR, VAR->F.G, VAR[I]: resolved by the compiler */
	FA_IMM,    /* \IMM: the number itself */
	FA_WADDR,  /* w: $addr, the watched address */
	FA_WVALUE, /* w: $value, what is there after the access */
	FA_WOLD,   /* w: $old, what was there before it (as last seen) */
};

/* A fetch type: an integer (bitfield, array) or a string. */
struct probe_ftype {
	uint8_t kind;  /* TRAIL_FK_INT or TRAIL_FK_STRING */
	uint8_t size;  /* INT: bytes (a bitfield's container) */
	uint8_t flags; /* TRAIL_FF_SIGNED, _HEX, _CHAR, _SYM */
	uint8_t bw;    /* bitfield width in bits, 0: not a bitfield */
	uint8_t bo;    /* bitfield offset in bits */
	uint8_t count; /* array elements, 0: not an array */
};

struct probe_fa {
	int base;          /* enum probe_fa_base */
	int reg;           /* FA_REG: enum trail_preg */
	uint64_t num;      /* FA_ARG, FA_STACK: N; FA_MEM: the address; FA_IMM */
	int64_t symoff;    /* FA_SYM: +|-OFFS */
	int name, namelen; /* FA_SYM, FA_FIELD, FA_DWARF: span in the fetch */
	int base_pos;      /* carets: the base, */
	int num_pos;       /* $argN's N, */
	int deep_pos;      /* the outermost dereference's argument */
	int nderef;
	int64_t off[TRAIL_PROBE_MAX_INSNS];
	int typed;         /* a type was given */
	int type_pos;
	struct probe_ftype type;
};

/* Where a fetch-arg sits: its kind of probe ('p', 'r', 'e', 'w'; 'f' is 'p')
 * and the text positions carets go to. fixed: the fetch-arg was built,
 * not written; every caret goes to pos. */
struct probe_fctx {
	char kind;
	int pos;  /* of fetch[0] */
	int tpos; /* of type[0], -1: none (its carets go to pos) */
	int fixed;
	int wlen; /* w: the watch's length ($value's size) */
};

/* Parse fetch (with its type, NULL: none) into *fa: the grammar, the
 * kernel's limits and the type's fit to the value (unless the value is
 * only known to the compiler: DWARF, eprobe fields). 0 or -EINVAL. */
int trail__probe_fetcharg(const char *fetch, const char *type, const struct probe_fctx *c,
			  struct probe_fa *fa, struct probe_err *e);
/* The type's fit to the value (string and array need memory, $comm is a
 * string) and the op count; run again by the compiler on final types. */
int trail__probe_fit(const struct probe_fa *fa, const struct probe_fctx *c,
		     struct probe_err *e);
/* Parse a type name ("u32", "string", "b3@2/32", "x8[4]"). */
int trail__probe_type(const char *type, int pos, struct probe_ftype *t,
		      struct probe_err *e);

int trail__probe_err(struct probe_err *e, int pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* d's normalized text with argument i printed as args[i] (NULL: as
 * written), nargs of them. Malloc'd. */
char *trail__probe_format(const struct probe_def *d, char *const *args, int nargs);

#endif /* TRAIL_PROBE_FETCHARG_H */
