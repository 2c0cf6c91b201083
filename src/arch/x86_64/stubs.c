/* SPDX-License-Identifier: MIT */
/*
 * stubs.c - the x86_64 per-site stubs of function hooks (layout and
 * purpose in tramp.S): a stub area starts with the addresses of the four
 * trampolines, then one 40-byte stub per site. Apart from patch.c so
 * that code needing only the instruction helpers does not pull the
 * trampolines.
 */
#include <string.h>

#include "../arch.h"

/* rel32 from the end of an instruction at `at`, `len` bytes long */
static void put_rel(uint8_t *p, uintptr_t at, size_t len, uintptr_t target)
{
	int32_t rel = (int32_t)(int64_t)(target - (at + len));

	memcpy(p + len - 4, &rel, 4);
}

void trail_arch_stub_area_init(uint8_t *area)
{
	uintptr_t t[4] = {(uintptr_t)trail__arch_tramp_entry, (uintptr_t)trail__arch_tramp_exit,
			  (uintptr_t)trail__arch_tramp_entry_all,
			  (uintptr_t)trail__arch_tramp_exit_all};

	memcpy(area, t, sizeof(t));
}

void trail_arch_site_stub(uint8_t *area, size_t k, uintptr_t site, uintptr_t body, int all)
{
	/* see tramp.S for what each piece does */
	static const uint8_t tmpl[TRAIL_ARCH_STUB_SIZE] = {
		0xff, 0x15, 0, 0, 0, 0,       /*  0: call *entry(%rip) */
		0x4d, 0x85, 0xdb,             /*  6: test %r11, %r11 */
		0x74, 0x0f,                   /*  9: jz 26 */
		0x48, 0x83, 0xc4, 0x08,       /* 11: add $8, %rsp */
		0xe8, 0, 0, 0, 0,             /* 15: call body */
		0xff, 0x25, 0, 0, 0, 0,       /* 20: jmp *exit(%rip) */
		0xe9, 0, 0, 0, 0,             /* 26: jmp body */
		0xcc,                         /* 31 */
		0, 0, 0, 0, 0, 0, 0, 0,       /* 32: the site's address */
	};
	static const uint8_t tmpl_all[TRAIL_ARCH_STUB_SIZE] = {
		0xff, 0x15, 0, 0, 0, 0,       /*  0: call *entry_all(%rip) */
		0x74, 0x0f,                   /*  6: jz 23 (the answer in ZF) */
		0x48, 0x83, 0xc4, 0x08,       /*  8: add $8, %rsp */
		0xe8, 0, 0, 0, 0,             /* 12: call body */
		0xff, 0x25, 0, 0, 0, 0,       /* 17: jmp *exit_all(%rip) */
		0xe9, 0, 0, 0, 0,             /* 23: jmp body */
		0xcc, 0xcc, 0xcc, 0xcc,       /* 28 */
		0, 0, 0, 0, 0, 0, 0, 0,       /* 32: the site's address */
	};
	uint8_t *p = area + TRAIL_ARCH_STUBS_HDR + k * TRAIL_ARCH_STUB_SIZE;
	uintptr_t at = (uintptr_t)p;

	memcpy(p, all ? tmpl_all : tmpl, TRAIL_ARCH_STUB_SIZE);
	memcpy(p + 32, &site, 8);
	if (all) {
		put_rel(p, at, 6, (uintptr_t)area + 16);
		put_rel(p + 12, at + 12, 5, body);
		put_rel(p + 17, at + 17, 6, (uintptr_t)area + 24);
		put_rel(p + 23, at + 23, 5, body);
		return;
	}
	put_rel(p, at, 6, (uintptr_t)area);          /* the entry pointer */
	put_rel(p + 15, at + 15, 5, body);
	put_rel(p + 20, at + 20, 6, (uintptr_t)area + 8); /* the exit pointer */
	put_rel(p + 26, at + 26, 5, body);
}

uintptr_t trail_arch_stub_at(const uint8_t *area, size_t k)
{
	return (uintptr_t)area + TRAIL_ARCH_STUBS_HDR + k * TRAIL_ARCH_STUB_SIZE;
}

int trail_arch_stub_return(uintptr_t ret, uintptr_t *site)
{
	uint64_t op, disp, tramp, s;
	uintptr_t stub = ret - 6;

	/* ff 15 rel32 at the stub's start: the call of a trampoline's
	 * address in the area's header, which must be an entry one */
	if (trail_arch_load_safe(stub, 2, &op) || op != 0x15ff ||
	    trail_arch_load_safe(stub + 2, 4, &disp) ||
	    trail_arch_load_safe(ret + (uintptr_t)(int64_t)(int32_t)disp, 8, &tramp) ||
	    (tramp != (uintptr_t)trail__arch_tramp_entry &&
	     tramp != (uintptr_t)trail__arch_tramp_entry_all) ||
	    trail_arch_load_safe(stub + 32, 8, &s) || !s)
		return 0;
	*site = (uintptr_t)s;
	return 1;
}
