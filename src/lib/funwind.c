/* SPDX-License-Identifier: MIT */
/*
 * funwind.c - function_graph and the unwinder (C++ exceptions,
 * pthread_cancel's forced unwind).
 *
 * The unwinder finds a frame's caller through its return address: a swapped
 * one (the exit trampoline) has no unwind information and the exception
 * ends in std::terminate. So before any unwind starts, every hooked return
 * address of the thread is put back; when a handler catches
 * (__cxa_begin_catch, called from the catching frame), the frames below its
 * stack pointer were unwound: they are closed (an exit record each), and
 * the others hooked again. libtrail comes first in symbol lookup when it is
 * preloaded (trail record does), so these definitions are the ones used.
 */
#include <dlfcn.h>
#include <stdint.h>

#include "fhook.h"

/* (the lookup, once, is libtrail's own work: trail__self) */
#define REAL(ret, name, ...)                                                   \
	static ret (*real_##name)(__VA_ARGS__);                                \
	if (!real_##name) {                                                    \
		trail__self_enter();                                           \
		real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);    \
		trail__self_leave();                                           \
	}

struct _Unwind_Exception;

__attribute__((visibility("default"))) int
_Unwind_RaiseException(struct _Unwind_Exception *e)
{
	REAL(int, _Unwind_RaiseException, struct _Unwind_Exception *);
	trail__fhook_unhook_returns();
	return real__Unwind_RaiseException(e);
}

__attribute__((visibility("default"))) int
_Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	REAL(int, _Unwind_Resume_or_Rethrow, struct _Unwind_Exception *);
	trail__fhook_unhook_returns();
	return real__Unwind_Resume_or_Rethrow(e);
}

__attribute__((visibility("default"))) int
_Unwind_ForcedUnwind(struct _Unwind_Exception *e, void *stop, void *arg)
{
	REAL(int, _Unwind_ForcedUnwind, struct _Unwind_Exception *, void *, void *);
	trail__fhook_unhook_returns();
	return real__Unwind_ForcedUnwind(e, stop, arg);
}

__attribute__((visibility("default"), noinline)) void *__cxa_begin_catch(void *e)
{
	REAL(void *, __cxa_begin_catch, void *);
	/* our caller is the catching frame: everything deeper is gone */
	trail__fhook_rehook_returns((uintptr_t)__builtin_frame_address(0) + 16);
	return real___cxa_begin_catch(e);
}
