/* SPDX-License-Identifier: MIT */
/*
 * bench_unwind.c - the cost of one user stack (bench/unwind.sh): the same
 * stack, DEPTH frames of rec() under main, walked N times each by trail's
 * walk (src/lib/ustack.c) with .sframe only, with .eh_frame's CFI only
 * (each with its rows' cache, and without: _cold, every row found in the
 * tables), with frame pointers only, and by libunwind's unw_backtrace
 * (when built with it; it keeps a cache of its own), all in this process. Built with frame pointers, .sframe and
 * .eh_frame (bench/meson.build), so that each way can walk every frame
 * of this program; the frames each one gives are compared, and the
 * comparison printed (same=1: the frames of this program are the same
 * for all, and at least DEPTH + 2 of them).
 *
 *   bench_unwind DEPTH [N]   ->   RESULT depth=.. frames=.. same=..
 *                                 sframe=NS cfi=NS sframe_cold=NS
 *                                 cfi_cold=NS fp=NS libunwind=NS
 */
#include <stdio.h>
#include <string.h>

#include "bench-common.h"
#include "../src/lib/ustack.h"
#ifdef HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#define MAX 64

enum { SFRAME, CFI, SFRAME_COLD, CFI_COLD, FP, LIBUNWIND, WAYS };
static const char *const names[WAYS] = {"sframe", "cfi", "sframe_cold", "cfi_cold", "fp",
					"libunwind"};
static const unsigned uses[] = {TRAIL_UW_SFRAME, TRAIL_UW_CFI,
				TRAIL_UW_SFRAME | TRAIL_UW_NOCACHE, TRAIL_UW_CFI | TRAIL_UW_NOCACHE,
				TRAIL_UW_FPTR};

static long n_iter;
static double ns[WAYS];
static uint64_t ips[WAYS][MAX];
static unsigned nips[WAYS];

/* one walk of way w from its caller's frame, as libtrail's starts from
 * the first frame outside itself: the return address, the stack just
 * above it, the caller's %rbp */
static __attribute__((noinline, optimize("no-omit-frame-pointer"))) unsigned
walk(int w, uint64_t *out)
{
	uintptr_t *fp = __builtin_frame_address(0);
	struct trail_uregs r = {.pc = fp[1], .sp = (uintptr_t)(fp + 2), .fp = fp[0]};

	if (w == LIBUNWIND) {
#ifdef HAVE_LIBUNWIND
		void *b[MAX + 1];
		int n = unw_backtrace(b, MAX + 1);

		/* (its first frame is this function's) */
		for (int i = 1; i < n; i++)
			out[i - 1] = (uintptr_t)b[i];
		return n > 0 ? (unsigned)n - 1 : 0;
#else
		return 0;
#endif
	}
	out[0] = r.pc;
	return 1 + trail__ustack_walk(&r, out + 1, MAX - 1, uses[w], NULL);
}

static __attribute__((noinline)) void leaf(void)
{
	uint64_t tmp[MAX];

	for (int w = 0; w < WAYS; w++) {
		uint64_t t0;

		nips[w] = walk(w, ips[w]);
		if (!nips[w])
			continue;
		t0 = now_ns();
		for (long i = 0; i < n_iter; i++)
			walk(w, tmp);
		ns[w] = (double)(now_ns() - t0) / (double)n_iter;
	}
}

static __attribute__((noinline)) int rec(int depth)
{
	if (depth <= 1)
		leaf();
	else
		sink += rec(depth - 1);
	return depth;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 10;
	unsigned common = MAX;
	int same = 1;

	n_iter = bench_setup(argc - 1, argv + 1);
	if (n_iter == 10000000)
		n_iter = 20000;
	rec(depth);
	/* the frames of this program: leaf, rec x depth, main (and what
	 * each way finds above it in libc, which has no .sframe) */
	for (int w = 0; w < WAYS; w++)
		if (nips[w] && nips[w] < common)
			common = nips[w];
	for (int w = 1; w < WAYS; w++)
		if (nips[w] && memcmp(ips[0], ips[w], common * 8))
			same = 0;
	if (common < (unsigned)depth + 2)
		same = 0;
	printf("RESULT depth=%d frames=%u same=%d", depth, common, same);
	for (int w = 0; w < WAYS; w++)
		if (nips[w])
			printf(" %s=%.1f", names[w], ns[w]);
	printf("\n");
	if (!same)
		for (int w = 0; w < WAYS; w++) {
			fprintf(stderr, "%s:", names[w]);
			for (unsigned i = 0; i < nips[w]; i++)
				fprintf(stderr, " %llx", (unsigned long long)ips[w][i]);
			fprintf(stderr, "\n");
		}
	return !same;
}
