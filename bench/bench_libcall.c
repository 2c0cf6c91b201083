/* SPDX-License-Identifier: MIT */
/*
 * bench_libcall.c - cost of one traced library call (entry + exit): N
 * calls of libc's labs() through the program's PLT (built with
 * -fno-builtin-labs: a real call each time), the loop timed inside the
 * process. bench/run.sh runs it untraced, under `trail record -p
 * function_graph` and under `uftrace record --force` (both hook the
 * program's PLT), and subtracts. Prints one "RESULT ..." line.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = bench_setup(argc, argv), acc = 0, half = n / 2;
	uint64_t t0;

	for (long i = 0; i < n / 100; i++)
		acc += labs(i - half);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		acc += labs(i - half);
	sink = acc;
	printf("RESULT bench=libcall n=%ld calls=%ld ns_per_iter=%.3f\n", n, n + n / 100,
	       (double)(now_ns() - t0) / (double)n);
	return 0;
}
