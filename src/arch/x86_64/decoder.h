/* SPDX-License-Identifier: MIT */
/*
 * decoder.h - Capstone's entry points as reloc.c calls them, handed over
 * by decoder.c (see arch.h: the decoder is not linked into libtrail).
 */
#ifndef TRAIL_ARCH_X86_64_DECODER_H
#define TRAIL_ARCH_X86_64_DECODER_H

#include <capstone/capstone.h>

struct trail_arch_decoder_ops {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	cs_insn *(*insn_alloc)(csh handle);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
			    cs_insn *insn);
};

#endif
