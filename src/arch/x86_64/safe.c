/* SPDX-License-Identifier: MIT */
/*
 * safe.c - where a fault in the fault-safe reads of safe.S resumes.
 */
#include <stdint.h>
#include <ucontext.h>

#include "../arch.h"

extern const char trail__arch_safe_begin[], trail__arch_safe_fault[];

/* (called by the signal wrapper first thing: no sanitizer's code, which
 * may run in a thread a sanitizer has not set up yet) */
__attribute__((no_sanitize("thread", "address", "undefined"))) int trail_arch_fault_fixup(void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];

	if (ip < (uintptr_t)trail__arch_safe_begin || ip >= (uintptr_t)trail__arch_safe_fault)
		return 0;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)trail__arch_safe_fault;
	return 1;
}
