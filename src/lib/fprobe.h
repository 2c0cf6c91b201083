/* SPDX-License-Identifier: MIT */
/*
 * fprobe.h - dynamic events in the traced process (fprobe.c): the probes
 * a session's spec carries ("@probe HEX" lines, src/common/fetch.h), their
 * event descriptors, and running their fetch programs at a hooked entry
 * (entry probes), a hooked return (return probes: the function_graph
 * shadow stack, one return mechanism), or after an event is written
 * (eprobes). Sites are patched by ftracer.c, which asks here which
 * functions a session's probes want.
 */
#ifndef TRAIL_LIB_FPROBE_H
#define TRAIL_LIB_FPROBE_H

#include <stdint.h>

#include "../arch/arch.h"
#include "fhash.h"
#include "fobjs.h"

/* Session slot s joins: its probes made (or found: identical definitions
 * are shared by sessions) and their events registered; eprobes attached.
 * Under the control lock. Returns how many probes want functions, or
 * -errno (a blob refused: -EPROTO; then nothing is kept for s). */
HIDDEN int trail__fprobe_join(unsigned s, const char *spec);
/* Attach session s's probes on the function of o named name ("" if
 * unnamed) at link-time address at, to h. Returns the number attached. */
HIDDEN int trail__fprobe_attach(unsigned s, struct hsite *h, const struct hobj *o,
				const char *name, uintptr_t at);
/* Does session s have a probe on that function of o? (by name, or by
 * address for one probed as PATH:OFFSET: TRAIL_PROBE_F_ADDR) */
HIDDEN int trail__fprobe_wants(unsigned s, const struct hobj *o, const char *name, uintptr_t at);
/* Session s leaves: its probes detached everywhere (sites' pmask bits
 * cleared by the caller's walk through trail__fprobe_detach). */
HIDDEN void trail__fprobe_detach(unsigned s, struct hsite *h);
/* 1u << s if session s has probes attached to h (its pmask bit may be
 * cleared already: stopped), else 0 */
HIDDEN uint32_t trail__fprobe_on(unsigned s, const struct hsite *h);
HIDDEN void trail__fprobe_leave(unsigned s);

/* At a hooked entry with probes (pmask: h->pmask): runs the entry probes
 * (return probes hook the return: rmask, the sessions whose return
 * probes the call's frame runs, 0 if it was not hooked). */
HIDDEN void trail__fprobe_entry(const struct hsite *h, uint32_t pmask, uint32_t rmask,
				uintptr_t *ret, const struct trail_arch_regs *regs);
/* At the return of a call of h hooked for the return probes of rmask
 * (slot: where its return address was, ret: that address). */
HIDDEN void trail__fprobe_return(const struct hsite *h, uintptr_t slot, uintptr_t ret,
				 uint32_t rmask, const struct trail_arch_ret_regs *regs);

/* finsn.c's answers to the objects' questions (trail__fobjs_insn), given
 * before a session hooks anything */
HIDDEN void trail__finsn_register(void);
/* Probes at an instruction (TRAIL_PROBE_F_INSN) of session s in object o:
 * a breakpoint on each (made once, kept); returns how many attached.
 * stop: they no longer run for s; leave: their breakpoints taken away
 * where no session is left. Under the control lock. */
HIDDEN int trail__fprobe_insn_attach(unsigned s, const struct hobj *o);
HIDDEN void trail__fprobe_insn_stop(unsigned s);
HIDDEN void trail__fprobe_insn_leave(unsigned s);
/* Is a probe at an instruction in [lo, hi)? (a function entry's hook
 * must not be written over its breakpoint) */
HIDDEN int trail__fprobe_insn_in(uintptr_t lo, uintptr_t hi);
/* Does a probe of any session's, at an instruction of o, lie in [lo, hi)
 * (placed or not)? A whole function with one inside is not moved. */
HIDDEN int trail__fprobe_insn_wanted(const struct hobj *o, uintptr_t lo, uintptr_t hi);

/* A thread at ip inside the jump of a probe site at an instruction
 * (patched by the session joining from the control signal handler, which
 * interrupted it): where it goes on, in the copy; else ip. */
HIDDEN uintptr_t trail__fprobe_insn_inside(uintptr_t ip);
/* For the live patch's step (fobjs.c): a thread at ip inside the jump
 * being written at site: where it goes on; ip if site is not one. */
HIDDEN uintptr_t trail__fprobe_insn_step(uintptr_t site, uintptr_t ip);

#endif /* TRAIL_LIB_FPROBE_H */
