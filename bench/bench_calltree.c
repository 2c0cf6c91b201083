/* SPDX-License-Identifier: MIT */
/*
 * bench_calltree.c - the input of bench/export.sh: a program whose
 * function_graph trace looks like a real one (nested calls, leaves, a
 * recursion, two threads, a static event now and then) and is as long as
 * asked: BENCH_N top-level requests, each about 14 calls deep and wide.
 *
 *   request -> parse -> token x3 (leaves)
 *           -> lookup -> hash (leaf), compare x2 (leaves)
 *           -> render -> walk (recursive, depth 3) -> emit (leaf)
 *
 * Built with -fpatchable-function-entry=5 so every function is traceable.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <trail/trail.h>

TRAIL_EVENT(calltree, done,
	TRAIL_ARGS(long, request, long, value),
	TRAIL_FIELDS(trail_field_int(request) trail_field_int(value)))

#define NOINLINE __attribute__((noinline, noclone, used))

static volatile long sink;

NOINLINE static long token(long x) { return x * 7 + 3; }
NOINLINE static long hash(long x) { return (x ^ (x >> 7)) * 0x9e3779b1; }
NOINLINE static long compare(long a, long b) { return a < b ? -1 : a > b; }
NOINLINE static long emit(long x) { return x + 1; }

NOINLINE static long walk(long x, int depth)
{
	if (!depth)
		return emit(x);
	return walk(x + 1, depth - 1) + 1;
}

NOINLINE static long parse(long x) { return token(x) + token(x + 1) + token(x + 2); }
NOINLINE static long lookup(long x) { long h = hash(x); return compare(h, x) + compare(x, h); }
NOINLINE static long render(long x) { return walk(x, 3); }

NOINLINE static long request(long i)
{
	long v = parse(i) + lookup(i) + render(i);

	if (!(i & 1023))
		trail(calltree, done, i, v);
	return v;
}

static long n;

static void *run(void *arg)
{
	long acc = 0, base = (long)(intptr_t)arg;

	for (long i = 0; i < n; i++)
		acc += request(base + i);
	sink = acc;
	return NULL;
}

int main(void)
{
	const char *s = getenv("BENCH_N");
	pthread_t t;

	n = (s ? atol(s) : 1000000) / 2;
	pthread_create(&t, NULL, run, (void *)(intptr_t)1000000000);
	run(0);
	pthread_join(t, NULL);
	printf("RESULT bench=calltree requests=%ld\n", 2 * n);
	return 0;
}
