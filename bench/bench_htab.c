/* SPDX-License-Identifier: MIT */
/*
 * bench_htab.c - the histogram table's update (src/common/htab.c), the
 * part of a hist trigger's cost that does not depend on the record path:
 * THREADS threads (one per CPU, pinned) each updating one integer key
 * with one value N times, in their own CPU's copy ("per-cpu") or all in
 * copy 0 ("shared": every update fights for the same cache lines).
 *
 *   bench_htab [per-cpu|shared] [N]      (BENCH_N, THREADS: default 2)
 *
 * Prints "RESULT mode=... threads=T ns_per_update=X hits=H" (the wall
 * time of the slowest thread over its N updates); hits must be T * N.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/common/htab.h"

static struct trail_htab *tab;
static long n = 10000000;
static int shared;
static pthread_barrier_t go;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
	long id = (long)arg;
	cpu_set_t set;
	uint64_t key[1] = {42}, vals[1] = {3}, t0, hash = trail_htab_hash(key, 1);

	CPU_ZERO(&set);
	CPU_SET((int)id, &set);
	sched_setaffinity(0, sizeof(set), &set);
	pthread_barrier_wait(&go);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		vals[0] = (uint64_t)i & 7;
		trail_htab_update(tab, shared ? 0 : (uint32_t)id, key, hash, vals);
	}
	return (void *)(uintptr_t)(now_ns() - t0);
}

int main(int argc, char **argv)
{
	const char *e = getenv("BENCH_N"), *th = getenv("THREADS");
	int threads = th ? atoi(th) : 2;
	pthread_t t[64];
	uint64_t worst = 0, hits, dropped, more, keys[4];
	struct trail_htab_entry out[4];
	size_t bytes;

	if (argc > 1)
		shared = !strcmp(argv[1], "shared");
	if (argc > 2)
		n = atol(argv[2]);
	else if (e && *e)
		n = atol(e);
	if (threads < 1 || threads > 64)
		threads = 2;
	bytes = trail_htab_bytes(2048, 1, 1, 0, 0, (uint32_t)threads);
	tab = calloc(1, bytes);
	if (!tab)
		return 1;
	trail_htab_init(tab, 2048, 1, 1, 0, 0, (uint32_t)threads);
	pthread_barrier_init(&go, NULL, (unsigned)threads);
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < threads; i++) {
		void *r;

		pthread_join(t[i], &r);
		if ((uint64_t)(uintptr_t)r > worst)
			worst = (uint64_t)(uintptr_t)r;
	}
	trail_htab_collect(tab, out, keys, 4, &hits, &dropped, &more);
	printf("RESULT mode=%s threads=%d ns_per_update=%.2f hits=%llu\n",
	       shared ? "shared" : "per-cpu", threads, (double)worst / (double)n,
	       (unsigned long long)hits);
	return hits == (uint64_t)threads * (uint64_t)n ? 0 : 1;
}
