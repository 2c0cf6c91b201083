/* SPDX-License-Identifier: MIT */
/*
 * bench_watch.c - the cost of a watched write (bench/wprobe.sh): N writes
 * of `target`, a global, timed in the process; BENCH_N, BENCH_CPU as
 * bench_event. Built without PIE: `target` has the same address in every
 * run, which `perf record -e mem:ADDR:w` needs. Prints
 * "RESULT n=N ns_per_write=X addr=0xADDR".
 */
#include <stdio.h>

#include "bench-common.h"

volatile long target;

int main(int argc, char **argv)
{
	long n = bench_setup(argc, argv);
	uint64_t t0, t1;

	t0 = now_ns();
	for (long i = 0; i < n; i++)
		target = i;
	t1 = now_ns();
	printf("RESULT n=%ld ns_per_write=%.1f addr=%p\n", n, (double)(t1 - t0) / (double)n,
	       (void *)&target);
	return 0;
}
