/* SPDX-License-Identifier: MIT */
/*
 * insnstub.c - the stub of a probe at an instruction entered through a
 * jump (its layout in tramp.S, trail__arch_tramp_insn). Apart from
 * stubs.c, which refers to the entry trampolines, and from patch.c, which
 * code needing only the instruction helpers links: the trampoline's
 * address is read from tramp.S's data, so nothing here calls up.
 */
#include <string.h>

#include "../arch.h"

/* XSAVE's components the insn trampoline saves: tramp.S's, defined
 * beside the code that reads it (as trail__arch_insn_handler is), set
 * here */
extern uint32_t trail__arch_xsave_mask __attribute__((visibility("hidden")));

void trail_arch_vector_init(void)
{
	uint32_t a, b, c, d, lo, hi;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c & (1u << 27))) /* OSXSAVE */
		return;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	__atomic_store_n(&trail__arch_xsave_mask, lo & 0xe4u, __ATOMIC_RELAXED);
}

void trail_arch_insn_stub(uint8_t out[TRAIL_ARCH_INSN_STUB], uintptr_t at, uint32_t idx,
			  uintptr_t copy)
{
	/* see tramp.S, trail__arch_tramp_insn */
	static const uint8_t tmpl[TRAIL_ARCH_INSN_STUB] = {
		0x48, 0x8d, 0x64, 0x24, 0x80,             /*  0: lea -128(%rsp), %rsp */
		0x68, 0, 0, 0, 0,                         /*  5: push $idx */
		0xff, 0x15, 0x10, 0, 0, 0,                /* 10: call *32(%rip) */
		0x48, 0x8d, 0xa4, 0x24, 0x88, 0, 0, 0,    /* 16: lea 136(%rsp), %rsp */
		0xe9, 0, 0, 0, 0,                         /* 24: jmp copy */
		0xcc, 0xcc, 0xcc,                         /* 29 */
		0, 0, 0, 0, 0, 0, 0, 0,                   /* 32: the trampoline */
	};
	/* through tramp.S's pointer to it: no reference from here up */
	uintptr_t tramp = trail__arch_tramp_insn_at;

	memcpy(out, tmpl, sizeof(tmpl));
	memcpy(out + 6, &idx, 4);
	{
		int32_t rel = (int32_t)(int64_t)(copy - (at + 29));

		memcpy(out + 25, &rel, 4);
	}
	memcpy(out + 32, &tramp, 8);
}
