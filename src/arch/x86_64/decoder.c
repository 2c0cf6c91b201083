/* SPDX-License-Identifier: MIT */
/*
 * decoder.c - Capstone handed to reloc.c (see arch.h). Built as
 * libtrail-decoder.so, which libtrail loads when a session hooks functions
 * (its constructor runs inside that dlopen, where allocating is safe),
 * and linked whole into the tools and the tests that decode.
 */
#include "../arch.h"
#include "decoder.h"

static const struct trail_arch_decoder_ops capstone = {
	.open = cs_open,
	.option = cs_option,
	.insn_alloc = cs_malloc,
	.disasm_iter = cs_disasm_iter,
};

__attribute__((constructor)) static void decoder_register(void)
{
	trail_arch_decoder_register(&capstone);
}
