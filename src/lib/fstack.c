/* SPDX-License-Identifier: MIT */
/*
 * fstack.c - the user stack of an event, for stacktrace triggers
 * (record.h's trail__ustack_hook): return addresses by frame pointers.
 *
 * The walk starts at its own frame (libtrail is built with frame
 * pointers) and goes out through the record path to the program's
 * frames, leaving libtrail's out; at an entry probe it starts at the
 * probed function instead (trail__ustart: the function, its caller, then
 * the caller's frames). A return address swapped for a function_graph or
 * return probe stub is read back from the shadow stack. It ends at the
 * first frame that does not chain upwards (code built without frame
 * pointers: -O2 by default), at a fault (the loads are fault-safe), or at
 * 32 frames. The process's objects are published to the recorder when a
 * session with stacktrace triggers joins (ftracer.c), so that report
 * names the frames; objects loaded later stay addresses.
 */
#include <stdint.h>
#include <string.h>

#include "../arch/arch.h"
#include "fhook.h"
#include "record.h"

extern const char __ehdr_start[] HIDDEN; /* libtrail's first byte */
extern const char _end[] HIDDEN;         /* ... and past its last */

static __attribute__((noinline)) unsigned ustack(uint64_t *ips, unsigned max)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	struct trail_ustart u = trail__ustart;
	unsigned n = 0;
	uint64_t ret;

	if (u.ip && max >= 2) {
		ips[n++] = u.ip;
		if (!trail_arch_load_safe(u.slot, 8, &ret) && ret)
			ips[n++] = trail__fhook_real_ret(u.slot, ret);
		fp = u.bp;
	}
	for (int k = 0; k < 256 && n < max; k++) {
		uint64_t next;

		if (!fp || (fp & 7) || trail_arch_load_safe(fp, 8, &next) ||
		    trail_arch_load_safe(fp + 8, 8, &ret) || !ret)
			break;
		ret = trail__fhook_real_ret(fp + 8, ret);
		if (ret < (uintptr_t)__ehdr_start || ret >= (uintptr_t)_end)
			ips[n++] = ret;
		/* the caller's frame is above this one, and not far */
		if (next <= fp || next - fp > (64u << 20))
			break;
		fp = (uintptr_t)next;
	}
	return n;
}

/* before any code of the program runs (libtrail's constructors run
 * together, and fire no event) */
__attribute__((constructor)) static void ustack_init(void)
{
	trail__ustack_hook = ustack;
}
