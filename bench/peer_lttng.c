/* SPDX-License-Identifier: MIT */
/*
 * peer_lttng.c - bench_event.c's loop with an LTTng-UST tracepoint instead
 * of a trail one, for a same-run comparison (bench/run.sh). Prints the same
 * RESULT line.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <stdio.h>

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"

int main(int argc, char **argv)
{
	long n = bench_setup(argc, argv), acc = 0;
	double base = bench_base(n);
	uint64_t t2, t3;

	t2 = now_ns();
	for (long i = 0; i < n; i++) {
		long r = work(i);

		acc += r;
		lttng_ust_tracepoint(bench, event, (int)i, r);
	}
	t3 = now_ns();
	sink = acc;
	printf("RESULT bench=lttng tp_enabled=%d n=%ld base_ns_per_iter=%.3f "
	       "traced_ns_per_iter=%.3f ns_per_event=%.3f\n",
	       lttng_ust_tracepoint_enabled(bench, event) ? 1 : 0, n, base,
	       (double)(t3 - t2) / n, (double)(t3 - t2) / n - base);
	return 0;
}
