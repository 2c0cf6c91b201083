/* SPDX-License-Identifier: MIT */
/*
 * fobjs.h - the loaded objects the function tracer knows: each one's
 * patchable entries (fsites.c), its stub area, and the sessions whose
 * module table names it. Followed as objects come and go (dlopen,
 * dlclose) through the loader's debug hook while a tracer is active.
 * Everything here runs under the control lock.
 */
#ifndef TRAIL_LIB_FOBJS_H
#define TRAIL_LIB_FOBJS_H

#include <stdint.h>

#include "../arch/arch.h"
#include "fsites.h"
#include "internal.h"

#define MAX_OBJS 256

struct hobj {
	struct fobj fo;   /* nsites 0: an object without sites, known */
	char path[464];
	char dlname[64];  /* what dl_iterate_phdr called it (truncated) */
	uint64_t dev, ino;
	uintptr_t xlo, xhi; /* its executable segments: where its code is */
	uint8_t *stubs;   /* its stub area (one stub per site), or NULL */
	size_t stubs_len;
	/* with the stubs, for FSITE_RELOC sites: each one's copy of its
	 * displaced instructions (len 0: it could not be made), by site */
	struct trail_arch_reloc *relocs;
	size_t relocs_len;
	/* FSITE_WHOLE sites' copies of their functions: areas mapped near
	 * the code as they are needed, the last one filled up to wused */
	uint8_t *whole[16];
	unsigned nwhole;
	size_t wused;
	uint32_t published; /* sessions whose module table has it */
	uint32_t modslot[TRAIL_MAX_SESSIONS]; /* its slot there */
	uint32_t seen;    /* rescan: still loaded */
	int unsealed;     /* stubs writable (copies being made) */
};

/* What fobjs.c asks about probes at an instruction: finsn.c's answers
 * (fprobe.h), set by trail__finsn_register before a session hooks
 * anything (a pointer: the objects do not call up); NULL: none asked. */
struct trail_insn_ask {
	int (*in)(uintptr_t lo, uintptr_t hi);
	int (*wanted)(const struct hobj *o, uintptr_t lo, uintptr_t hi);
	uintptr_t (*step)(uintptr_t site, uintptr_t ip);
};
extern const struct trail_insn_ask *trail__fobjs_insn HIDDEN;

extern struct hobj trail__objs[MAX_OBJS] HIDDEN;
extern unsigned trail__nobjs HIDDEN;

/* Find every object's sites once, the site table sized for them all:
 * 0 or -ENOMEM. */
HIDDEN int trail__fobjs_discover(void);
/* Bring the objects up to date with the loaded ones: the gone ones leave
 * tombstones in the site table (and are marked gone in the module tables
 * that named them); each new one is passed to hook_new (NULL: none). */
HIDDEN int trail__fobjs_sync(void (*hook_new)(struct hobj *o));
/* Where site k of o jumps: its stub (the stub area is made at the first
 * call; a site of unmodified code is decoded and its copy made at its
 * first), or 0. The stub areas written to stay writable until
 * trail__fobjs_seal(), at the end of a pass of hooks. */
HIDDEN uintptr_t trail__fobjs_target(struct hobj *o, uint32_t k);
HIDDEN void trail__fobjs_seal(void);
/* The entries decoded since the objects' caches were read, written to
 * them (fsites.h), at the end of a pass of hooks. */
HIDDEN void trail__fobjs_cache_save(void);
/* The object and site (*j) library call k of o (FSITE_PLT) goes to, when
 * that function has a site of its own; else NULL. */
HIDDEN struct hobj *trail__fobjs_plt_dest(struct hobj *o, uint32_t k, uint32_t *j);
/* o named in session s's module table (once). */
HIDDEN void trail__fobjs_publish(struct psess *ps, unsigned s, struct hobj *o);
/* Follow dlopen/dlclose, passing new objects to hook_new, until stopped. */
HIDDEN void trail__fobjs_watch(void (*hook_new)(struct hobj *o));
HIDDEN void trail__fobjs_unwatch(void);

#endif
