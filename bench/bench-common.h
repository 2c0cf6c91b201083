/* SPDX-License-Identifier: MIT */
/*
 * bench-common.h - what bench_event.c (trail) and peer_lttng.c (LTTng-UST)
 * share, so both time exactly the same loop: work(), the clock, the
 * environment knobs (BENCH_N, BENCH_CPU).
 */
#ifndef TRAIL_BENCH_COMMON_H
#define TRAIL_BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* trivial arithmetic, never inlined: every iteration is a real call */
__attribute__((noinline, noclone, used)) long work(long i)
{
	return (i * 3 + (i >> 2)) ^ 0x5a;
}

static volatile long sink;

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* N from argv[1] or BENCH_N (default 10 M); pin to BENCH_CPU if >= 0 */
/* the calling thread onto CPU cpu */
static inline void bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static inline long bench_setup(int argc, char **argv)
{
	const char *e = getenv("BENCH_N"), *c = getenv("BENCH_CPU");
	long n = 10000000;

	if (e && *e)
		n = atol(e);
	if (argc > 1)
		n = atol(argv[1]);
	if (c && *c && atoi(c) >= 0)
		bench_pin(atoi(c));
	return n;
}

/* the untraced loop: ns per iteration */
static inline double bench_base(long n)
{
	long acc = 0;
	uint64_t t0;

	for (long i = 0; i < n / 100; i++) /* warm-up */
		acc += work(i);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		acc += work(i);
	sink = acc;
	return (double)(now_ns() - t0) / (double)n;
}

#endif
