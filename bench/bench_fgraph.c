/* SPDX-License-Identifier: MIT */
/*
 * bench_fgraph.c - cost of one traced call (entry + exit) for function
 * tracers: N calls of work() (bench-common.h), the loop timed inside the
 * process. Built with -fpatchable-function-entry=5 (and once without, as
 * the unpatched reference); bench/run.sh runs it untraced, under
 * `trail record -p function_graph`, and under uftrace, and subtracts.
 * With BENCH_WHOLE set it calls work_whole() instead: work()'s
 * arithmetic in a leaf whose entry is a loop head (a branch back to it,
 * never taken), which trail runs whole from a copy in an unmodified
 * build: its per-call cost beside work()'s displaced entry.
 * Prints one "RESULT ..." line.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <stdio.h>

long work_whole(long i, long again);
__asm__(".text\n"
	".globl work_whole\n"
	".type work_whole, @function\n"
	"work_whole:\n"
	"\tlea (%rdi,%rdi,2), %rax\n"
	"\tmov %rdi, %rdx\n"
	"\tsar $2, %rdx\n"
	"\tadd %rdx, %rax\n"
	"\txor $0x5a, %rax\n"
	"\tsub $1, %rsi\n"
	"\tjg work_whole\n"
	"\tret\n"
	".size work_whole, .-work_whole\n");

int main(int argc, char **argv)
{
	long n = bench_setup(argc, argv), acc = 0;
	uint64_t t0;

	if (getenv("BENCH_WHOLE")) {
		for (long i = 0; i < n / 100; i++)
			acc += work_whole(i, 0);
		t0 = now_ns();
		for (long i = 0; i < n; i++)
			acc += work_whole(i, 0);
		sink = acc;
		printf("RESULT bench=fgraph_whole n=%ld calls=%ld ns_per_iter=%.3f\n", n,
		       n + n / 100, (double)(now_ns() - t0) / (double)n);
		return 0;
	}

	for (long i = 0; i < n / 100; i++)
		acc += work(i);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		acc += work(i);
	sink = acc;
	printf("RESULT bench=fgraph n=%ld calls=%ld ns_per_iter=%.3f\n", n, n + n / 100 + 1,
	       (double)(now_ns() - t0) / (double)n);
	return 0;
}
