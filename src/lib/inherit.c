/* SPDX-License-Identifier: MIT */
/*
 * inherit.c - what a forked child of a traced program touches first,
 * mapped in it from the start.
 *
 * fork() copies the page table entries of a mapping only if the mapping
 * holds private (anonymous) pages; a library's code, never written, is
 * left for the child to fault in again, one fault-around window (64 KiB)
 * at a time, and so are the pages of a shared mapping (the arena); the
 * private pages the parent wrote are shared write-protected, and the
 * child's first write to each takes a fault. On a paravirtualized machine
 * a fault costs 15-35 us, where a whole fork+exit of a small program
 * costs ~0.9 ms: a traced child took 53 of them, an untraced one 26
 * (bench/fork.sh, `perf record -e page-faults -d`).
 *
 * Code: at the first fork, one byte of each mapping of the code segments
 * of libtrail, the loader (its exit path, which the parent has not run
 * yet), the decoder and the C library, written with its own value through
 * /proc/self/mem (the kernel's forced write, as a debugger's breakpoint),
 * gives the mapping a private page, hence an anon_vma, so that every fork
 * copies its page table (~0.1 us a page); libtrail's and the loader's
 * read-only segments are also mapped whole (MADV_POPULATE_READ), the
 * others keep what the parent has run. The cost is one 4 KiB private page
 * per mapping. A kernel that refuses forced writes
 * (proc_mem.force_override=never) or lacks MADV_POPULATE_* (before 5.14)
 * leaves things as they were.
 *
 * Data: the child's first writes (its fork-path variables, the writer, the
 * shadow stack, the process slot, the chunk's header) each take one
 * MADV_POPULATE_WRITE call instead (trail__prefault(), record.c).
 */
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../common/util.h"
#include "internal.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* One byte written in each mapping of [lo, hi) (patching may have split
 * the segment in several: each needs its own private page), then all of
 * it mapped if populate. maps: /proc/self/maps. */
static void inherit_segment(int mem, const char *maps, uintptr_t lo, uintptr_t hi, int populate)
{
	long pg = sysconf(_SC_PAGESIZE);

	lo &= ~(uintptr_t)(pg - 1);
	hi = (hi + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
	if (hi <= lo)
		return;
	for (const char *l = maps; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char *end;
		uintptr_t a = (uintptr_t)strtoull(l, &end, 16), b;
		unsigned char byte;

		if (*end != '-')
			continue;
		b = (uintptr_t)strtoull(end + 1, NULL, 16);
		if (b <= lo || a >= hi)
			continue;
		if (a < lo)
			a = lo;
		byte = *(volatile const unsigned char *)a;
		if (pwrite(mem, &byte, 1, (off_t)a) != 1)
			return;
	}
	if (populate)
		madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
}

struct inherit {
	const void *const *in; /* addresses in the objects wanted */
	unsigned n, npopulate;
	int mem;
	const char *maps;
};

/* dl_iterate_phdr: an object holding one of the addresses (the loader's
 * own bias and program headers, as fobjs.c finds objects) */
static int inherit_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct inherit *h = arg;
	unsigned i;

	(void)size;
	for (i = 0; i < h->n; i++) {
		uintptr_t a = (uintptr_t)h->in[i];
		int k;

		for (k = 0; a && k < info->dlpi_phnum; k++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

			if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz)
				break;
		}
		if (a && k < info->dlpi_phnum)
			break;
	}
	if (i == h->n)
		return 0;
	/* code; and of the objects populated, their other read-only segments
	 * (a child's lazy binding reads their symbol hash) */
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && !(ph->p_flags & PF_W) &&
		    ((ph->p_flags & PF_X) || i < h->npopulate))
			inherit_segment(h->mem, h->maps, lo, lo + ph->p_memsz, i < h->npopulate);
	}
	return 0;
}

void trail__inherit_code(const void *const *in_objects, unsigned n, unsigned npopulate)
{
	size_t cap = 1u << 20;
	char *maps = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct inherit h = {.in = in_objects, .n = n, .npopulate = npopulate, .mem = -1, .maps = maps};

	if (maps == MAP_FAILED)
		return;
	if (trail__read_file("/proc/self/maps", maps, cap) > 0)
		h.mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (h.mem >= 0) {
		dl_iterate_phdr(inherit_object, &h);
		close(h.mem);
	}
	munmap(maps, cap);
}
