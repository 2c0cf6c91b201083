/* SPDX-License-Identifier: MIT */
/*
 * corefile.h - what `trail report -i CORE` needs of an ELF core dump: the
 * process (NT_PRPSINFO: pid, name), its executable (the NT_FILE mapping
 * that holds AT_ENTRY from NT_AUXV), and the PT_LOAD segments that begin
 * with a session arena's magic (the trace buffers it had). Pure: the file
 * is read through rd, every offset and length bounded by size, nothing
 * believed that the file says of itself; a damaged core is an error with
 * its reason, never a read out of bounds.
 */
#ifndef TRAIL_COMMON_COREFILE_H
#define TRAIL_COMMON_COREFILE_H

#include <stddef.h>
#include <stdint.h>

#define TRAIL_CORE_ARENAS 16

struct trail_core {
	uint32_t pid;
	char comm[17];
	char exe[4096];
	uint16_t machine;  /* e_machine, when not x86-64 */
	unsigned narenas;
	/* each arena: its segment's offset in the file, the bytes the file
	 * holds of it (a truncated core: fewer than its size), its size */
	uint64_t off[TRAIL_CORE_ARENAS], have[TRAIL_CORE_ARENAS], size[TRAIL_CORE_ARENAS];
};

/* rd(ctx, off, buf, n): the n bytes at off, 0, or -1. */
typedef int (*trail_core_read_fn)(void *ctx, uint64_t off, void *buf, size_t n);

/* Is the 64-byte start of a file an ELF core's? */
int trail_core_is(const void *start, size_t n);
/* The core of size bytes into c: 0, or -1 with *why (another
 * architecture: c->machine says which; program headers damaged or cut
 * off). No arena is not an error: c->narenas 0. */
int trail_core_scan(trail_core_read_fn rd, void *ctx, uint64_t size, struct trail_core *c,
		    const char **why);

#endif
