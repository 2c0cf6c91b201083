/* SPDX-License-Identifier: MIT */
/*
 * ustack.h - a user stack walk by the objects' unwind tables (ustack.c):
 * .sframe where an object has it, else .eh_frame's CFI, else frame
 * pointers, decided frame by frame. Async-signal-safe, every load
 * fault-safe, no allocation, no lock: the stacktrace trigger's walk
 * (fstack.c) runs in signal handlers and in any thread. Kept apart from
 * fstack.c so that bench/unwind.c can time it alone.
 */
#ifndef TRAIL_LIB_USTACK_H
#define TRAIL_LIB_USTACK_H

#include <stdint.h>

#ifndef HIDDEN
#define HIDDEN __attribute__((visibility("hidden")))
#endif

/* where a walk starts: pc, the stack pointer and %rbp there; exact: pc is
 * where the frame is (a probed instruction), not a return address (which
 * is looked up at pc - 1: the call before it); entry: pc is a function's
 * first instruction (its return address at sp, whatever the tables say) */
struct trail_uregs {
	uintptr_t pc, sp, fp;
	int exact, entry;
};

/* the ways of finding a caller, in the order they are tried */
#define TRAIL_UW_SFRAME 1u
#define TRAIL_UW_CFI 2u
#define TRAIL_UW_FPTR 4u
#define TRAIL_UW_ALL 7u
/* ... and, for bench/unwind.c, the rows' cache left out (each row found
 * in the tables) */
#define TRAIL_UW_NOCACHE 8u

/* The return addresses above r (at most max) into ips; their number.
 * use: the ways allowed (TRAIL_UW_*); real_ret(slot, val): the return
 * address really meant by the one read at slot (function_graph's swapped
 * ones), or NULL. */
HIDDEN unsigned trail__ustack_walk(const struct trail_uregs *r, uint64_t *ips, unsigned max,
				   unsigned use, uintptr_t (*real_ret)(uintptr_t slot, uintptr_t val));
/* Step r out of the frames whose pc is in [lo, hi) (libtrail's own, by
 * its tables where its frame pointers do not chain: code built without
 * them): 0, r the first frame outside, or -1. */
HIDDEN int trail__ustack_leave(struct trail_uregs *r, uintptr_t lo, uintptr_t hi);
/* The tables of the loaded objects found now rather than at the first
 * walk through them (not async-signal-safe: dl_iterate_phdr). */
HIDDEN void trail__ustack_prime(void);

#endif
