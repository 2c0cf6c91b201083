/* SPDX-License-Identifier: MIT */
/*
 * decoder-lazy.c - Capstone for the tools, loaded at their first decode
 * (reloc.c asks trail__arch_decoder_lazy when no decoder was registered):
 * its 77,000 relocations cost ~10 ms at each start of a process that
 * links it, which `trail report`, `trail record` (its checks read names
 * only) and most commands never need. The soname is the one of the
 * headers built against (libcapstone.so.<API major>).
 */
#include <dlfcn.h>

#include "../arch.h"
#include "decoder.h"

#define STR2(x) #x
#define STR(x) STR2(x)

const struct trail_arch_decoder_ops *trail__arch_decoder_lazy(void)
{
	static struct trail_arch_decoder_ops ops;
	static int state; /* 0 not tried, 1 loaded, -1 failed */
	void *h;

	if (state)
		return state > 0 ? &ops : NULL;
	state = -1;
	h = dlopen("libcapstone.so." STR(CS_API_MAJOR), RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return NULL;
	*(void **)&ops.open = dlsym(h, "cs_open");
	*(void **)&ops.option = dlsym(h, "cs_option");
	*(void **)&ops.insn_alloc = dlsym(h, "cs_malloc");
	*(void **)&ops.disasm_iter = dlsym(h, "cs_disasm_iter");
	if (!ops.open || !ops.option || !ops.insn_alloc || !ops.disasm_iter)
		return NULL;
	state = 1;
	return &ops;
}
