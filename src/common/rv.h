/* SPDX-License-Identifier: MIT */
/*
 * rv.h - runtime verification monitors: deterministic automata written
 * in the DOT dialect of the kernel's rvgen (tools/verification: the
 * models of Documentation/trace/rv), parsed into a transition table
 * (rv.c). A state is a node; "__init_S" (an invisible node) with an edge
 * to S names the initial state; a node of shape doublecircle is
 * accepting; an edge "A" -> "B" [label = "e1\ne2"] is a transition on
 * each event of its label. trail's events: SYS:EVENT, or EVENT of any
 * system, each optionally with a filter in the kernel's grammar:
 * app:lock[lock == 3].
 */
#ifndef TRAIL_COMMON_RV_H
#define TRAIL_COMMON_RV_H

#include <stddef.h>
#include <stdint.h>

#define TRAIL_RV_MAX_STATES 64
#define TRAIL_RV_MAX_EVENTS 64
#define TRAIL_RV_NAME_MAX 128

struct trail_rv_model {
	char name[TRAIL_RV_NAME_MAX];   /* the digraph's, else the file's */
	int nstates, nevents, init;
	char states[TRAIL_RV_MAX_STATES][TRAIL_RV_NAME_MAX];
	char events[TRAIL_RV_MAX_EVENTS][TRAIL_RV_NAME_MAX]; /* as labelled */
	uint64_t accepting;             /* a bit a state */
	int8_t next[TRAIL_RV_MAX_STATES][TRAIL_RV_MAX_EVENTS]; /* -1: none */
};

/* An error: its line and column (1-based) in the text, and why. */
struct trail_rv_err {
	int line, col;
	char msg[160];
};

/* Parse DOT text (n bytes). 0, or -1 with e filled: not a digraph, a
 * node or event too many, two transitions on one event from one state
 * (not deterministic), no initial state. */
int trail_rv_parse(const char *text, size_t n, struct trail_rv_model *m, struct trail_rv_err *e);

/* An event label's parts: the event pattern (SYS:EVENT or EVENT) in
 * pat[0..*plen), the filter's text after '[' up to its ']' in
 * *filter[0..*flen) (flen 0: none). */
void trail_rv_label(const char *label, size_t *plen, const char **filter, size_t *flen);

#endif /* TRAIL_COMMON_RV_H */
