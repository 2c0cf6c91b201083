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

/* A model file (at most 1 MiB) read and parsed, its name from the path
 * (below): 0, or -1 with the message in err ("PATH:LINE:COL: why", or
 * the file's error). */
int trail_rv_load(const char *path, struct trail_rv_model *m, char *err, size_t n);

/* rvgen's default digraph names ("state_automaton", "monitor") give way
 * to the model file's name up to its first dot: wip.dot is "wip". */
void trail_rv_name_from_path(struct trail_rv_model *m, const char *path);

/*
 * A monitor in a session's spec: one line (the value of "@rv"),
 *
 *   IDX PER REACTOR NAME INIT ACCEPT NSTATES NEVENTS STATE... EVENT... NEXT
 *
 * PER "thread", "process" or a field's name; ACCEPT the accepting states'
 * bits in hex; NEXT a transition a state and event, two hex digits each,
 * "ff" for none; names with their spaces, '%' and control characters as
 * %XX. The CLI parses the DOT (for its errors' line and column), the
 * process decodes this: without allocating (the control signal handler).
 */
#define TRAIL_RV_PER_MAX 64
#define TRAIL_RV_REACTOR_MAX 16
#define TRAIL_RV_MONITORS 8 /* a session's */

struct trail_rv_mon {
	int idx;
	char per[TRAIL_RV_PER_MAX];         /* thread, process or a field */
	char reactor[TRAIL_RV_REACTOR_MAX]; /* nop trace printk abort traceoff snapshot */
	struct trail_rv_model m;
};

/* The line's value into buf (n bytes); its length, or 0 when it does not
 * fit. */
size_t trail_rv_encode(const struct trail_rv_mon *mon, char *buf, size_t n);
/* A line's value (len bytes) into mon; 0, or -1: damaged. */
int trail_rv_decode(const char *v, size_t len, struct trail_rv_mon *mon);
/* The reactors, by trail_rv_reactor's answer */
enum { TRAIL_RV_NOP = 1, TRAIL_RV_TRACE, TRAIL_RV_PRINTK, TRAIL_RV_ABORT, TRAIL_RV_TRACEOFF,
       TRAIL_RV_SNAPSHOT };
/* The reactor named name (TRAIL_RV_*), or 0: none. */
int trail_rv_reactor(const char *name);

#endif /* TRAIL_COMMON_RV_H */
