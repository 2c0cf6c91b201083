/* SPDX-License-Identifier: MIT */
/*
 * objtrace.c - the objtrace triggers' objects (internal.h): a bounded,
 * lock-free set per session, added to and removed from by triggers
 * (evx.c), read at function entries (fhook.c's objtrace_entry).
 */
#include <errno.h>

#include "internal.h"

struct trail_objslot trail__objtrace_objs[TRAIL_MAX_SESSIONS][TRAIL_OBJ_MAX];
uint32_t trail__obj_used[TRAIL_MAX_SESSIONS];
uint32_t trail__obj_sessions;

int trail__obj_add(unsigned s, uint64_t addr, int64_t off, uint32_t size)
{
	if (addr <= 1)
		return 0;
	for (uint32_t i = 0; i < TRAIL_OBJ_MAX; i++)
		if (__atomic_load_n(&trail__objtrace_objs[s][i].addr, __ATOMIC_RELAXED) == addr)
			return 0; /* (there already) */
	for (uint32_t i = 0; i < TRAIL_OBJ_MAX; i++) {
		struct trail_objslot *o = &trail__objtrace_objs[s][i];
		uint64_t free_ = 0;
		uint32_t used;

		if (!__atomic_compare_exchange_n(&o->addr, &free_, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		o->off = off;
		o->size = size;
		/* release: off and size before the address readers match */
		__atomic_store_n(&o->addr, addr, __ATOMIC_RELEASE);
		used = __atomic_load_n(&trail__obj_used[s], __ATOMIC_RELAXED);
		while (used < i + 1 && !__atomic_compare_exchange_n(&trail__obj_used[s], &used, i + 1, 0,
								     __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		__atomic_fetch_or(&trail__obj_sessions, 1u << s, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

void trail__obj_remove(unsigned s, uint64_t addr)
{
	for (uint32_t i = 0; addr > 1 && i < TRAIL_OBJ_MAX; i++) {
		uint64_t a = addr;

		__atomic_compare_exchange_n(&trail__objtrace_objs[s][i].addr, &a, 0, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
	}
}

void trail__obj_clear(unsigned s)
{
	__atomic_fetch_and(&trail__obj_sessions, ~(1u << s), __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < TRAIL_OBJ_MAX; i++)
		__atomic_store_n(&trail__objtrace_objs[s][i].addr, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&trail__obj_used[s], 0, __ATOMIC_RELAXED);
}

