/* SPDX-License-Identifier: MIT */
/*
 * filter.h - event filters in the kernel's grammar (events.rst, "Event
 * filtering"):
 *
 *   bytes > 4096 && (path ~ "/var/log*" || !(flags & 0x2))
 *
 * Numeric fields: == != < <= > >= and & (bits in common); strings: == !=
 * and ~ (a glob: * ? [set]); && binds tighter than ||; ! and parentheses;
 * the common fields common_pid, common_tid, common_cpu, common_timestamp
 * (ns) and common_comm. A filter is compiled against one event's fields
 * into a short-circuiting program of predicates, each with where to go
 * when it holds and when it does not, every jump forward: evaluation ends,
 * and stops at the first predicate that decides. Compiling allocates
 * nothing (the program is one fixed-size struct) and is async-signal-
 * safe: libtrail compiles a session's filters in its control signal
 * handler, report and hist on the file's formats.
 */
#ifndef TRAIL_COMMON_FILTER_H
#define TRAIL_COMMON_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "meta.h"

#define TRAIL_FILTER_LIKELY(x) __builtin_expect(!!(x), 1)

#define TRAIL_FILTER_MAX_PREDS 64  /* predicates in one filter */
#define TRAIL_FILTER_MAX_TEXT 1024 /* bytes of its text */

/* common fields: numbers past the event's own */
enum {
	TRAIL_FILTER_PID = 0xff00,
	TRAIL_FILTER_TID,
	TRAIL_FILTER_CPU,
	TRAIL_FILTER_TS,
	TRAIL_FILTER_COMM,
};

/* a predicate's operator */
enum {
	TRAIL_FLT_EQ, TRAIL_FLT_NE, TRAIL_FLT_LT, TRAIL_FLT_LE, TRAIL_FLT_GT, TRAIL_FLT_GE,
	TRAIL_FLT_BAND, TRAIL_FLT_GLOB,
};

struct trail_fpred {
	uint16_t field;  /* index in the event's fields, or TRAIL_FILTER_* */
	uint8_t op;      /* TRAIL_FLT_* */
	uint8_t str;     /* compares strings */
	uint8_t size, sign;
	uint16_t off;    /* payload offset when fixed, else 0xffff */
	uint16_t t, f;   /* next predicate when it holds / not; >= npreds:
			  * TRAIL_FILTER_ACCEPT or TRAIL_FILTER_REJECT */
	uint16_t slen;   /* string constant: its bytes in text */
	uint32_t spos;
	uint64_t val;    /* integer constant */
	/* for trail_filter_match_fast: the value, loaded 8 bytes wide
	 * (wide) or by its size, masked and sign-extended (sh), biased
	 * (signed compares become unsigned ones), holds when it is in
	 * [lo, lo + span], or not (neg); & tests val's bits instead */
	uint64_t mask, bias, lo, span;
	uint8_t sh, neg, wide;
};

#define TRAIL_FILTER_ACCEPT 0xfffe
#define TRAIL_FILTER_REJECT 0xffff

/* a field as far as finding it in a payload goes */
struct trail_flay {
	uint8_t kind, size;
	uint16_t count;
};

/* self-contained: matching needs nothing but the program and a payload */
struct trail_filter {
	uint16_t npreds;
	uint8_t clock; /* reads common_cpu or common_timestamp */
	uint8_t comm;  /* reads common_comm */
	uint8_t ids;   /* reads common_pid or common_tid */
	uint8_t fast;  /* only integer fields at fixed offsets: matched by
			* trail_filter_match_fast */
	uint16_t fast_len; /* ... then the payload bytes they need */
	uint16_t nlay; /* the event's fields up to the last one read */
	struct trail_fpred p[TRAIL_FILTER_MAX_PREDS];
	char text[TRAIL_FILTER_MAX_TEXT]; /* the string constants */
	struct trail_flay lay[TRAIL_META_MAX_FIELDS];
};

struct trail_filter_err {
	int pos;         /* byte of the text the error is at */
	char msg[192]; /* (the longest, trigger.c's list of commands: 134) */
};

/* The common field named s[0..len) (common_pid, common_tid, common_cpu
 * or CPU or cpu, common_timestamp, common_comm or COMM): its
 * TRAIL_FILTER_* number, or -1. */
int trail_filter_common(const char *s, size_t len);

/* "EVENT" or "EVENT: FILTER" (report -F's form): the pattern's length in
 * *plen, the filter's text in *text (NULL: none). 0, or -1 when s has
 * text after EVENT without the ':' (*plen: where it is expected). */
int trail_filter_split(const char *s, size_t *plen, const char **text);

/* Compile text for the event m describes. 0, or -1 with *e filled. */
int trail_filter_compile(const char *text, const struct trail_meta *m, struct trail_filter *f,
			 struct trail_filter_err *e);

/* Field i of a payload (len bytes) laid out as lay[0 .. nlay) says: its
 * offset in *at and, for a string or sequence, its length in *slen. 0, or
 * -1 when the payload is too short. */
int trail_filter_locate(const struct trail_flay *lay, uint32_t nlay, uint32_t i,
			const uint8_t *p, uint32_t len, uint32_t *at, uint32_t *slen);

/* Field i's offset in every payload of m's event, or 0xffff (it comes
 * after a variable one). */
uint16_t trail_filter_fixed_off(const struct trail_meta *m, uint32_t i);

/* What a record is besides its payload (for the common fields). */
struct trail_filter_ctx {
	uint32_t pid, tid, cpu;
	uint64_t ts;
	const char *comm;
	uint32_t *steps; /* if not NULL: counts the predicates evaluated */
	const uint64_t *vars; /* hist.h: the record's variables (keys and
			       * vals that are variables read them) */
};

/* A number of the record: a common field from c, or the payload's field
 * `field` (at off, or found by lay[0 .. nlay) when off is 0xffff; size
 * bytes, sign-extended if sign) into *out. 0, or -1 when the payload is
 * too short. */
int trail_filter_value(const struct trail_flay *lay, uint32_t nlay, uint32_t field, uint16_t off,
		       uint8_t size, uint8_t sign, const uint8_t *p, uint32_t len,
		       const struct trail_filter_ctx *c, uint64_t *out);

/* Does the record (payload, len) of the event f was compiled for pass
 * f? A payload shorter than a field it reads does not. */
int trail_filter_match(const struct trail_filter *f, const uint8_t *payload, uint32_t len,
		       const struct trail_filter_ctx *c);

/* trail_filter_match for a filter with f->fast set (the common kind:
 * numbers compared, each at a fixed offset of the payload) on a payload
 * of at least f->fast_len bytes, inlined into the record path: a load, a
 * compare and a jump per predicate. */
static inline int trail_filter_match_fast(const struct trail_filter *f, const uint8_t *p)
{
	uint32_t pc = 0;

	for (;;) {
		const struct trail_fpred *pr = &f->p[pc];
		uint64_t v, c = pr->val;
		uint32_t next;
		int h;

		if (TRAIL_FILTER_LIKELY(pr->wide)) {
			memcpy(&v, p + pr->off, 8);
		} else {
			switch (pr->size) {
			case 1: v = p[pr->off]; break;
			case 2: { uint16_t x; memcpy(&x, p + pr->off, 2); v = x; break; }
			case 4: { uint32_t x; memcpy(&x, p + pr->off, 4); v = x; break; }
			default: memcpy(&v, p + pr->off, 8);
			}
		}
		v = (uint64_t)((int64_t)((v & pr->mask) << pr->sh) >> pr->sh);
		if (pr->op == TRAIL_FLT_BAND)
			h = (v & c) != 0;
		else
			h = (((v ^ pr->bias) - pr->lo) <= pr->span) ^ pr->neg;
		next = h ? pr->t : pr->f;
		if (next >= f->npreds)
			return next == TRAIL_FILTER_ACCEPT;
		if (next <= pc) /* (forward only) */
			return 0;
		pc = next;
	}
}

#endif /* TRAIL_COMMON_FILTER_H */
