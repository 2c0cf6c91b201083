/* SPDX-License-Identifier: MIT */
/*
 * bench_fgraph.c - cost of one traced call (entry + exit) for function
 * tracers: N calls of work() (bench-common.h), the loop timed inside the
 * process. Built with -fpatchable-function-entry=5 (and once without, as
 * the unpatched reference); bench/run.sh runs it untraced, under
 * `trail record -p function_graph`, and under uftrace, and subtracts.
 * Prints one "RESULT ..." line.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <stdio.h>

int main(int argc, char **argv)
{
	long n = bench_setup(argc, argv), acc = 0;
	uint64_t t0;

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
