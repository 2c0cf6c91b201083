/* SPDX-License-Identifier: MIT */
/*
 * peer_lttng.c - bench_event.c's loop with an LTTng-UST tracepoint instead
 * of a trail one, for a same-run comparison (bench/run.sh). Prints the same
 * RESULT line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"

__attribute__((noinline, noclone, used)) long work(long i)
{
	return (i * 3 + (i >> 2)) ^ 0x5a;
}

static volatile long sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = 10000000, acc = 0;
	const char *e = getenv("BENCH_N"), *c = getenv("BENCH_CPU");
	uint64_t t0, t1, t2, t3;

	if (e && *e)
		n = atol(e);
	if (argc > 1)
		n = atol(argv[1]);
	if (c && *c && atoi(c) >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(c), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	for (long i = 0; i < n / 100; i++)
		acc += work(i);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		acc += work(i);
	t1 = now_ns();
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
	       lttng_ust_tracepoint_enabled(bench, event) ? 1 : 0, n,
	       (double)(t1 - t0) / n, (double)(t3 - t2) / n,
	       (double)(t3 - t2) / n - (double)(t1 - t0) / n);
	return 0;
}
