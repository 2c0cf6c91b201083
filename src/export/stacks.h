/* SPDX-License-Identifier: MIT */
/*
 * stacks.h - function_graph calls summed by call stack (stacks.c), what
 * the folded and flamegraph formats are written from.
 *
 * A tree of stacks: node 0 is the root (every thread), its children the
 * processes ("comm-pid"), theirs the threads ("comm-tid"; a signal
 * handler's stream adds "[signal handler]", or "[signal handler N]" for a
 * nested one at level N), and above those the functions as they were
 * called. A node is one distinct stack: (parent node, function name), so
 * the tree grows with the distinct stacks of the program, not with the
 * length of the trace. Each node sums the self time of the calls with that
 * stack (duration - time in the calls shown inside it) and counts them.
 *
 * What counts, from struct trail_call (output.h):
 *   ENTRY / EXIT   a call on top of its thread's current stack, counted at
 *                  its EXIT; an EXIT with OPEN counts with the duration the
 *                  view gave it (cut at the end of the trace or a loss)
 *   EXIT NOSTART   a return whose call is not in the file: skipped (the
 *                  calls made inside it were counted where the stack was)
 *   LEAF           a call with nothing inside: its whole duration is self
 *   LEAF THRESH    a record-time threshold call: its children are unknown,
 *                  counted whole, directly above its thread
 */
#ifndef TRAIL_EXPORT_STACKS_H
#define TRAIL_EXPORT_STACKS_H

#include <stdint.h>

#include "output.h"

struct trail_snode {
	uint32_t parent; /* node 0: itself */
	uint32_t name;   /* trail__stacks_name() */
	uint32_t child;  /* first child (after trail__stacks_finish(): children
			  * sorted by name), 0 if none */
	uint32_t next;   /* next sibling, 0 if none */
	uint32_t depth;  /* 0 root, 1 process, 2 thread, ... */
	uint64_t self_ns, calls;       /* of the calls with exactly this stack */
	uint64_t total_ns, total_calls; /* with all stacks above it (finish) */
};

enum trail_sname_kind {
	TRAIL_SNAME_FUNC = 0,
	TRAIL_SNAME_ROOT,    /* "all" */
	TRAIL_SNAME_PROCESS, /* "comm-pid" */
	TRAIL_SNAME_THREAD,  /* "comm-tid" */
	TRAIL_SNAME_HANDLER, /* "[signal handler]" */
};

struct trail_sname {
	const char *text;   /* the symbol as the reader gives it, or 0x... */
	const char *module; /* the object it is in (path), or NULL if not known;
			     * points into the reader */
	int kind;           /* enum trail_sname_kind */
};

struct trail_stacks;

/* NULL with errno set. */
struct trail_stacks *trail__stacks_new(void);
void trail__stacks_free(struct trail_stacks *s);

/* What folded and flamegraph share as outputs: their state starts with
 * this (its struct trail_output first), and these are their begin(),
 * event() and call(). */
struct trail_stacks_output {
	struct trail_output out;
	struct trail_stacks *s;
};

/* Such an output of size bytes with ops, its stacks made, opts checked
 * (sz, out); NULL with errno set. */
struct trail_export_opts;
void *trail__stacks_output_new(size_t size, const struct trail_output *ops,
			       const struct trail_export_opts *opts);
int trail__stacks_output_begin(void *ctx, const struct trail_export_src *src);
int trail__stacks_output_event(void *ctx, const struct trail_record *rec);
int trail__stacks_output_call(void *ctx, const struct trail_call *c);

/* From an output's begin(), call() and end(): 0 or -errno. */
int trail__stacks_begin(struct trail_stacks *s, const struct trail_export_src *src);
int trail__stacks_call(struct trail_stacks *s, const struct trail_call *c);
/* The records that are not calls, for the message when no call is found. */
void trail__stacks_event(struct trail_stacks *s, const struct trail_record *rec);
/* Sorts siblings by name and sums the totals. -ENODATA with the reason in
 * src->err when no call was counted (a file of other events, or a
 * selection that shows no call). */
int trail__stacks_finish(struct trail_stacks *s, const struct trail_export_src *src);

/* The tree: *nodes[0] is the root. Valid until the next call or free. */
uint32_t trail__stacks_nodes(const struct trail_stacks *s, const struct trail_snode **nodes);
const struct trail_sname *trail__stacks_name(const struct trail_stacks *s, uint32_t id);
/* The node after i in depth-first order from the root (into i's children
 * when into is set, else past them), 0 at the end. */
uint32_t trail__stacks_next(const struct trail_snode *nodes, uint32_t i, int into);

#endif
