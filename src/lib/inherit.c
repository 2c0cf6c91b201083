/* SPDX-License-Identifier: MIT */
/*
 * inherit.c - libtrail's code mapped in a forked child from its first
 * instruction.
 *
 * fork() copies the page table entries of a mapping only if the mapping
 * holds private (anonymous) pages; a library's code, never written, is
 * left for the child to fault in again, one fault-around window (64 KiB)
 * at a time. A child of a traced program runs libtrail's fork, record and
 * exit paths and the decoder library's destructor: three to five such
 * faults, at ~35 µs each on a paravirtualized machine where a whole
 * fork+exit of a small program costs ~0.9 ms (bench/fork.sh).
 *
 * One byte of the object's code segment written with its own value through
 * /proc/self/mem (the kernel's forced write, as a debugger's breakpoint)
 * gives the mapping a private page, hence an anon_vma, and
 * MADV_POPULATE_READ maps all of its pages: from then on every fork copies
 * them to the child (~0.1 µs a page). The cost is one 4 KiB private page
 * per object. A kernel that refuses forced writes
 * (proc_mem.force_override=never) or lacks MADV_POPULATE_READ (before
 * 5.14) leaves things as they were.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static void inherit_segment(int mem, uintptr_t lo, uintptr_t hi, int populate)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char b;

	lo &= ~(uintptr_t)(pg - 1);
	hi = (hi + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
	if (hi <= lo)
		return;
	b = *(volatile const unsigned char *)lo;
	if (pwrite(mem, &b, 1, (off_t)lo) != 1)
		return;
	if (populate)
		madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
}

void trail__inherit_code(const void *const *in_objects, unsigned n, unsigned npopulate)
{
	int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	if (mem < 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		Dl_info di;
		const ElfW(Ehdr) *eh;
		const ElfW(Phdr) *ph;
		uintptr_t bias = 0;
		int have_bias = 0;

		if (!in_objects[i] || !dladdr(in_objects[i], &di) || !di.dli_fbase)
			continue;
		eh = di.dli_fbase;
		ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
		for (unsigned k = 0; k < eh->e_phnum; k++)
			if (ph[k].p_type == PT_LOAD && ph[k].p_offset == 0) {
				bias = (uintptr_t)eh - ph[k].p_vaddr;
				have_bias = 1;
				break;
			}
		for (unsigned k = 0; have_bias && k < eh->e_phnum; k++)
			if (ph[k].p_type == PT_LOAD && (ph[k].p_flags & PF_X))
				inherit_segment(mem, bias + ph[k].p_vaddr,
						bias + ph[k].p_vaddr + ph[k].p_memsz, i < npopulate);
	}
	close(mem);
}
