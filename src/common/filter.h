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

#include "meta.h"

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

struct trail_fpred {
	uint16_t field;  /* index in the event's fields, or TRAIL_FILTER_* */
	uint8_t op;      /* enum in filter.c */
	uint8_t str;     /* compares strings */
	uint8_t size, sign;
	uint16_t off;    /* payload offset when fixed, else 0xffff */
	uint16_t t, f;   /* next predicate when it holds / not; >= npreds:
			  * TRAIL_FILTER_ACCEPT or TRAIL_FILTER_REJECT */
	uint16_t slen;   /* string constant: its bytes in text */
	uint32_t spos;
	uint64_t val;    /* integer constant */
};

#define TRAIL_FILTER_ACCEPT 0xfffe
#define TRAIL_FILTER_REJECT 0xffff

struct trail_filter {
	uint16_t npreds;
	uint8_t clock; /* reads common_cpu or common_timestamp */
	uint8_t comm;  /* reads common_comm */
	struct trail_fpred p[TRAIL_FILTER_MAX_PREDS];
	char text[TRAIL_FILTER_MAX_TEXT]; /* the string constants */
};

struct trail_filter_err {
	int pos;         /* byte of the text the error is at */
	char msg[96];
};

/* "EVENT" or "EVENT: FILTER" (report -F's form): the pattern's length in
 * *plen, the filter's text in *text (NULL: none). 0, or -1 when s has
 * text after EVENT without the ':' (*plen: where it is expected). */
int trail_filter_split(const char *s, size_t *plen, const char **text);

/* Compile text for the event m describes. 0, or -1 with *e filled. */
int trail_filter_compile(const char *text, const struct trail_meta *m, struct trail_filter *f,
			 struct trail_filter_err *e);

/* What a record is besides its payload (for the common fields). */
struct trail_filter_ctx {
	uint32_t pid, tid, cpu;
	uint64_t ts;
	const char *comm;
	uint32_t *steps; /* if not NULL: counts the predicates evaluated */
};

/* Does the record (payload, len) of m's event pass f? A payload shorter
 * than a field it reads does not. */
int trail_filter_match(const struct trail_filter *f, const struct trail_meta *m,
		       const uint8_t *payload, uint32_t len, const struct trail_filter_ctx *c);

#endif /* TRAIL_COMMON_FILTER_H */
