/* SPDX-License-Identifier: MIT */
/*
 * fstack.c - the user stack of an event, for stacktrace triggers
 * (record.h's trail__ustack_hook).
 *
 * The walk starts at its own frame (libtrail is built with frame
 * pointers) and goes out through the record path by frame pointers,
 * leaving libtrail's frames out; at the first frame outside libtrail it
 * knows the program's state (the return address, the stack pointer just
 * above it, the caller's %rbp as saved) and goes on with ustack.c's walk:
 * .sframe, else .eh_frame, else frame pointers, frame by frame. Where
 * libtrail's frame pointers do not chain (a function hook's record is
 * written in fhook.c, built without them) it leaves libtrail by its own
 * tables, and a function hook's stub stands for the hooked function. At
 * an entry probe it starts at the probed function instead (trail__ustart:
 * the function, its return address's slot, the caller's %rbp). A return
 * address swapped for a function_graph or return probe stub is read back
 * from the shadow stack. It ends at the outermost frame, at a frame whose
 * caller cannot be found (no table, and no frame pointer chaining
 * upwards), at a fault (the loads are fault-safe), or at max frames. The
 * process's objects are published to the recorder, and their tables
 * found, when a session with stacktrace triggers joins (ftracer.c), so
 * that report names the frames; objects loaded later are walked too
 * (their tables found at the first walk) but stay addresses in report.
 * libtrail's own frames are left out wherever they are (its wrapper of
 * the program's signal handlers sits between a handler and the signal
 * frame, which ustack.c walks through).
 */
#include <stdint.h>
#include <string.h>

#include "../arch/arch.h"
#include "fhook.h"
#include "record.h"
#include "ustack.h"

extern const char __ehdr_start[] HIDDEN; /* libtrail's first byte */
extern const char _end[] HIDDEN;         /* ... and past its last */

static int in_self(uintptr_t a)
{
	return a >= (uintptr_t)__ehdr_start && a < (uintptr_t)_end;
}

/* the first frame outside libtrail: its return address, stack, %rbp */
static int leave_self(struct trail_uregs *r)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	uint64_t next, ret;

	for (int k = 0; k < 64; k++) {
		if (!fp || (fp & 7) || trail_arch_load_safe(fp, 8, &next) ||
		    trail_arch_load_safe(fp + 8, 8, &ret) || !ret)
			return -1;
		ret = trail__fhook_real_ret(fp + 8, ret);
		if (!in_self(ret)) {
			*r = (struct trail_uregs){.pc = ret, .sp = fp + 16, .fp = next};
			return 0;
		}
		/* the caller's frame is above this one, and not far */
		if (next <= fp || next - fp > (64u << 20))
			return -1;
		fp = (uintptr_t)next;
	}
	return -1;
}

/* ... where libtrail's frame pointers do not chain (a function hook's
 * record is written in fhook.c, built without them): by its tables, from
 * the caller of ustack (fp: ustack's frame) */
static int leave_by_tables(struct trail_uregs *r, uintptr_t fp)
{
	uint64_t next, ret;

	if (trail_arch_load_safe(fp, 8, &next) || trail_arch_load_safe(fp + 8, 8, &ret))
		return -1;
	*r = (struct trail_uregs){.pc = ret, .sp = fp + 16, .fp = next};
	return trail__ustack_leave(r, (uintptr_t)__ehdr_start, (uintptr_t)_end);
}

/* A function hook's entry trampoline is called from its stub: the first
 * frame outside libtrail is then the stub's, which no object has. The
 * stack starts at the hooked function instead, entered: its caller's
 * return address at the stack pointer. */
static void from_stub(struct trail_uregs *r)
{
	uintptr_t site;

	if (trail_arch_stub_return(r->pc, &site))
		*r = (struct trail_uregs){.pc = site, .sp = r->sp, .fp = r->fp, .exact = 1,
					  .entry = 1};
}

static __attribute__((noinline)) unsigned ustack(uint64_t *ips, unsigned max)
{
	struct trail_uregs r;
	struct trail_ustart u = trail__ustart;
	unsigned n, k = 1;

	if (!max)
		return 0;
	if (u.ip)
		/* (a probe at an instruction sets it too: its stack pointer
		 * taken for a return address's slot, as at an entry) */
		r = (struct trail_uregs){.pc = u.ip, .sp = u.slot, .fp = u.bp, .exact = 1,
					 .entry = 1};
	else if (leave_self(&r) &&
		 leave_by_tables(&r, (uintptr_t)__builtin_frame_address(0)))
		return 0;
	if (!u.ip)
		from_stub(&r);
	ips[0] = r.pc;
	n = 1 + trail__ustack_walk(&r, ips + 1, max - 1, TRAIL_UW_ALL, trail__fhook_real_ret);
	/* libtrail's frames above the program's left out too: its wrapper
	 * of the program's signal handlers (signals.c) */
	for (unsigned i = 1; i < n; i++)
		if (!in_self(ips[i]))
			ips[k++] = ips[i];
	return k;
}

/* before any code of the program runs (libtrail's constructors run
 * together, and fire no event) */
__attribute__((constructor)) static void ustack_init(void)
{
	trail__ustack_hook = ustack;
}
