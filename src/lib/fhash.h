/* SPDX-License-Identifier: MIT */
/*
 * fhash.h - the function tracer's site table: the address of every
 * patchable entry of a loaded object that some session may want, with the
 * sessions that want it and its original bytes. The entry handler
 * (fhook.c), the trap and step handlers (src/arch, fstep.c) look sites up
 * lock-free; ftracer.c and fobjs.c change it under the control lock.
 *
 * Open addressing, a power of two. Readers load the table pointer
 * (acquire); a grown table is published whole (release, trail__hreserve)
 * and the old one stays mapped: a reader may still be probing it.
 */
#ifndef TRAIL_LIB_FHASH_H
#define TRAIL_LIB_FHASH_H

#include <stddef.h>
#include <stdint.h>

#include "../arch/arch.h"
#include "internal.h"

struct fprobe_att;
struct fpair;

struct hsite {
	uintptr_t addr;   /* 0: empty slot */
	uint32_t mask;    /* sessions that want this function */
	uint32_t root;    /* sessions for which it is a -g graph root */
	uint32_t pmask;   /* sessions with probes on it (fprobe.c) */
	uint32_t rpmask;  /* of those, sessions with return probes */
	struct fprobe_att *probes; /* those probes, newest first, never freed */
	const struct fpair *pair;  /* or those as a pair (fprobe.c), NULL */
	uint8_t orig[TRAIL_ARCH_SITE_SIZE];
	uintptr_t got;    /* a library call (FSITE_PLT): its GOT slot, and */
	uintptr_t got_orig; /* what the slot held before it was hooked */
	uint8_t got_relro; /* the slot is in RELRO (read-only once relocated) */
	uint8_t patched;
	uint8_t trap;     /* entered through a breakpoint (FSITE_TRAP): the
			   * first byte is patched, orig[0] */
	uint8_t dead;     /* its object was unloaded (a tombstone) */
};

struct htable {
	size_t cap;
	size_t used; /* slots with an address, tombstones included */
	struct hsite slot[];
};

extern struct htable *trail__htab HIDDEN;

/* For a thread found at ip inside the entry at site, which a jump is
 * being written over (ip == site: at its breakpoint): where it goes on
 * running what was there, past the nops of a patchable entry or at the
 * same instruction in the copy of displaced ones (fobjs.c sets the hook:
 * a data pointer, no call up); ip itself if it is not inside one. */
extern uintptr_t (*trail__fsite_step_hook)(uintptr_t site, uintptr_t ip) HIDDEN;
HIDDEN uintptr_t trail__fsite_step(uintptr_t site, uintptr_t ip);
/* For the trap handler: a breakpoint at an instruction, of a probe there
 * (fprobe.c sets it: 1 handled, 0 not one of those) */
extern int (*trail__insn_trap_hook)(void *uc) HIDDEN;

static inline size_t trail__hslot(uintptr_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

/* the site at a, or NULL (inline: the entry handler's first step) */
static inline struct hsite *trail__hfind(uintptr_t a)
{
	/* pairs with the release in trail__hreserve */
	struct htable *t = __atomic_load_n(&trail__htab, __ATOMIC_ACQUIRE);

	if (!t)
		return NULL;
	for (size_t i = trail__hslot(a, t->cap), n = 0; n < t->cap;
	     i = (i + 1) & (t->cap - 1), n++) {
		if (t->slot[i].addr == a)
			return &t->slot[i];
		if (!t->slot[i].addr)
			return NULL;
	}
	return NULL;
}

/* Under the control lock, with room reserved: the site at a, made if new
 * (a tombstone there is reused: a new object where an old one was). */
HIDDEN struct hsite *trail__hinsert(uintptr_t a);
/* Room for `more` sites (a table at most half full): 0 or -ENOMEM. */
HIDDEN int trail__hreserve(size_t more);

#endif
