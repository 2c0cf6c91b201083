/* SPDX-License-Identifier: MIT */
/*
 * fuzz-core.c - libFuzzer target for what `trail report -i CORE` reads of
 * a core dump before anything else (src/common/corefile.c): the ELF
 * header, the program headers, the notes (NT_PRPSINFO, NT_AUXV, NT_FILE)
 * and the arena segments. The input is the core, read through an
 * accessor that refuses reads past its end.
 *
 * Checked besides memory safety, from corefile.h's promises: an error has
 * a reason; each arena found lies in the file as far as it says (offset
 * and the bytes held), within its segment's size, and begins with the
 * arena's magic; the names are NUL-terminated.
 */
#include <string.h>

#include "common/arena.h"
#include "common/corefile.h"
#include "fuzz.h"

struct input {
	const uint8_t *d;
	size_t n;
};

static int rd(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct input *in = ctx;

	if (off > in->n || n > in->n - off)
		return -1;
	memcpy(buf, in->d + off, n);
	return 0;
}

int fuzz_core_one(const uint8_t *data, size_t size)
{
	struct input in = {data, size};
	static struct trail_core c;
	const char *why = NULL;

	if (trail_core_scan(rd, &in, size, &c, &why)) {
		FUZZ_ASSERT(why && *why);
		return 0;
	}
	FUZZ_ASSERT(trail_core_is(data, size));
	FUZZ_ASSERT(c.narenas <= TRAIL_CORE_ARENAS);
	for (unsigned i = 0; i < c.narenas; i++) {
		uint64_t magic;

		FUZZ_ASSERT(c.off[i] <= size && c.have[i] <= size - c.off[i]);
		FUZZ_ASSERT(c.have[i] <= c.size[i] && c.have[i] >= 8);
		memcpy(&magic, data + c.off[i], 8);
		FUZZ_ASSERT(magic == TRAIL_ARENA_MAGIC);
	}
	FUZZ_ASSERT(memchr(c.comm, '\0', sizeof(c.comm)) && memchr(c.exe, '\0', sizeof(c.exe)));
	return 0;
}

#ifndef FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_core_one(data, size);
}
#endif
