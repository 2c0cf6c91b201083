/* SPDX-License-Identifier: MIT */
/*
 * fhook.h - the function tracers' handlers: what a patched entry and a
 * hooked return record (fhook.c), configured per session slot by
 * ftracer.c. The handlers run in the traced threads, lock-free; the
 * configuration changes under the control lock, each mask published with
 * a release after the slot's struct fconf is filled in.
 */
#ifndef TRAIL_LIB_FHOOK_H
#define TRAIL_LIB_FHOOK_H

#include <stdint.h>

#include "../common/counters.h"
#include "internal.h"

/* what a session's tracer does */
struct fconf {
	uint32_t graph;     /* function_graph (else function) */
	uint32_t has_roots; /* -g given: record only below a root */
	uint32_t max_depth; /* 0: none */
	uint32_t retval;
	uint32_t args;      /* entries with the argument registers */
	uint64_t thresh;    /* ticks; 0: record every call */
	uint32_t ntids;     /* --tid: only these threads (0: all) */
	int32_t tids[32];
	uint32_t limit_nest; /* --nest given */
	uint32_t nest;      /* then the deepest signal handler level traced */
	/* --counters: read at each call's entry and exit (counters.h's
	 * indexes), the deltas written as csynth (synthetic:
	 * funcgraph_counters) before the exit record */
	uint32_t nctr;
	uint8_t ctr[TRAIL_CTR_MAX];
	struct synth *csynth;
};

/* Slot s traces with c from now on. */
HIDDEN void trail__fhook_config(unsigned s, const struct fconf *c);
/* The hooks' entry and exit given to the trampolines (arch.h's
 * trail__arch_on_entry/on_exit), before any site is patched. */
HIDDEN void trail__fhook_register(void);
/* Slot s traces no more: its masks cleared, and the entries threads kept
 * back for it (deferred) dropped, not written into its slot's next session. */
HIDDEN void trail__fhook_clear(unsigned s);
/* In a forked child: thread ids changed (--tid lists are checked again),
 * and the frames the child returns through are written into its stream. */
HIDDEN void trail__fhook_forked(void);
HIDDEN void trail__fhook_forked_frames(void);
/* For the unwinder (funwind.c): every hooked return address of the
 * thread put back before an unwind, and hooked again, the frames below sp
 * closed, when a handler catches. */
HIDDEN void trail__fhook_unhook_returns(void);
/* The return address a stack walk read at slot (val): the real one if
 * function_graph or a return probe swapped it for its stub (the thread's
 * shadow stack knows), else val. */
HIDDEN uintptr_t trail__fhook_real_ret(uintptr_t slot, uintptr_t val);
HIDDEN void trail__fhook_rehook_returns(uintptr_t sp);

#endif
