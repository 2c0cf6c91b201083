/* SPDX-License-Identifier: MIT */
/*
 * patch.c - x86_64 instruction helpers for function hooks: recognizing an
 * unpatched site, building the `jmp rel32` a site becomes and the stub
 * it jumps to, finding room for stubs near the code, writing over code. See src/arch/arch.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../arch.h"

/* the 5-byte nop: nopl 0x0(%rax,%rax,1) */
static const uint8_t nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};

int trail_arch_site_is_nop(const uint8_t *p)
{
	static const uint8_t nop1x5[5] = {0x90, 0x90, 0x90, 0x90, 0x90};

	/* gcc: five one-byte nops; clang: nopl disp8(%rax,%rax,1), whatever
	 * the displacement (it emits 08) */
	return !memcmp(p, nop1x5, 5) || !memcmp(p, nop5, 4);
}

int trail_arch_reaches(uintptr_t site, uintptr_t target)
{
	int64_t d = (int64_t)(target - (site + 5));

	return d >= -TRAIL_ARCH_REACH && d < TRAIL_ARCH_REACH;
}

void trail_arch_jump_insn(uint8_t out[TRAIL_ARCH_SITE_SIZE], uintptr_t site, uintptr_t target)
{
	int32_t rel = (int32_t)(int64_t)(target - (site + 5));

	out[0] = 0xe9;
	memcpy(out + 1, &rel, 4);
}

void trail_arch_far_jump(uint8_t *out, uintptr_t target)
{
	out[0] = 0xff; /* jmp *0(%rip), the address after it */
	out[1] = 0x25;
	memset(out + 2, 0, 4);
	memcpy(out + 6, &target, 8);
}

uintptr_t trail_arch_jump_target(const uint8_t *p, uintptr_t site)
{
	int32_t rel;

	if (p[0] != 0xe9)
		return 0;
	memcpy(&rel, p + 1, 4);
	return site + 5 + (uintptr_t)(intptr_t)rel;
}

static void *try_map(uintptr_t at, size_t size)
{
	void *p = mmap((void *)at, size, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void *trail_arch_near_map(uintptr_t lo, uintptr_t hi, size_t len, size_t *size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t span = (len + page - 1) & ~(page - 1);
	uintptr_t at;
	void *p;

	*size = span;
	if (span >= (uintptr_t)TRAIL_ARCH_REACH / 2)
		return NULL;
	/* after the range, in steps of 1 MiB, while everything in the range
	 * can still reach all of it */
	for (at = (hi + page - 1) & ~(page - 1);
	     at + span - lo < (uintptr_t)TRAIL_ARCH_REACH - page; at += 1u << 20)
		if ((p = try_map(at, span)))
			return p;
	/* before it */
	for (at = (lo & ~(page - 1)) - span;
	     at > page && hi - at < (uintptr_t)TRAIL_ARCH_REACH - page;
	     at -= 1u << 20)
		if ((p = try_map(at, span)))
			return p;
	return NULL;
}

int trail_arch_text_write(void *addr, const void *src, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(page - 1);
	size_t span = (((uintptr_t)addr + len + page - 1) & ~(page - 1)) - a;

	if (mprotect((void *)a, span, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return -errno;
	memcpy(addr, src, len);
	__builtin___clear_cache((char *)addr, (char *)addr + len);
	if (mprotect((void *)a, span, PROT_READ | PROT_EXEC) < 0)
		return -errno;
	return 0;
}

size_t trail_arch_page_run(const struct trail_arch_poke *p, size_t n, size_t i, size_t gap,
			   uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	size_t j = i + 1;

	*lo = p[i].addr & ~(page - 1);
	*hi = (p[i].addr + TRAIL_ARCH_SITE_SIZE + page - 1) & ~(page - 1);
	while (j < n && p[j].addr >= p[j - 1].addr && p[j].addr < *hi + (gap + 1) * page) {
		uintptr_t e = (p[j].addr + TRAIL_ARCH_SITE_SIZE + page - 1) & ~(page - 1);

		if (e > *hi)
			*hi = e;
		j++;
	}
	return j;
}

int trail_arch_text_write_many(const struct trail_arch_poke *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		uintptr_t lo, hi;
		/* a run of sites close together, one object's (a direct
		 * batch is): one mprotect pair for it, over gaps of up to 15
		 * pages of its code */
		size_t j = trail_arch_page_run(p, n, i, 15, &lo, &hi);

		if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
			return -errno;
		for (size_t k = i; k < j; k++) {
			memcpy((void *)p[k].addr, p[k].bytes, TRAIL_ARCH_SITE_SIZE);
			__builtin___clear_cache((char *)p[k].addr,
						(char *)p[k].addr + TRAIL_ARCH_SITE_SIZE);
		}
		if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC) < 0)
			return -errno;
		i = j;
	}
	return 0;
}
