/* SPDX-License-Identifier: MIT */
/*
 * bench_pair.c - the cost of a pair of events a latency is computed
 * between (bench:start(id), then bench:done(id)), measured in the process
 * like bench_event.c: the same work() loop without and with the pair.
 *
 *   ns_per_pair = (traced loop - untraced loop) / N
 *
 * Run under `trail record` with hist triggers computing the latency of
 * each pair into a synthetic event (bench/latency.sh). The ids cycle
 * over BENCH_IDS values (default 512) per thread, as a bounded set of
 * requests in flight would: the tables stay below their size.
 * BENCH_THREADS=T: T threads (thread k on CPU k, ids k * BENCH_IDS + ...),
 * ns_per_pair their mean. Prints one "RESULT key=value ..." line.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(bench, start, TRAIL_ARGS(long, id), TRAIL_FIELDS(trail_field_int(id)))
TRAIL_EVENT(bench, done, TRAIL_ARGS(long, id, long, v),
	TRAIL_FIELDS(trail_field_int(id) trail_field_int(v)))

struct run {
	long n, acc, ids, first;
	int cpu;
	double ns; /* per iteration */
};

static void *thread_loop(void *arg)
{
	struct run *r = arg;
	uint64_t t0;

	bench_pin(r->cpu);
	t0 = now_ns();
	for (long i = 0; i < r->n; i++) {
		long id = r->first + i % r->ids;

		trail(bench, start, id);
		r->acc += work(i);
		trail(bench, done, id, r->acc);
	}
	r->ns = (double)(now_ns() - t0) / (double)r->n;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = bench_setup(argc, argv), ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const char *th = getenv("BENCH_THREADS"), *ids = getenv("BENCH_IDS");
	int t = th ? atoi(th) : 1;
	long nid = ids && atol(ids) > 0 ? atol(ids) : 512;
	double base = bench_base(n), sum = 0;
	struct run r[64];
	pthread_t tid[64];

	if (t < 1)
		t = 1;
	if (t > 64)
		t = 64;
	for (int k = 0; k < t; k++) {
		r[k] = (struct run){.n = n, .ids = nid, .first = k * nid,
				    .cpu = (int)(k % (ncpu > 0 ? ncpu : 1))};
		pthread_create(&tid[k], NULL, thread_loop, &r[k]);
	}
	for (int k = 0; k < t; k++) {
		pthread_join(tid[k], NULL);
		sink += r[k].acc;
		sum += r[k].ns;
	}
	printf("RESULT bench=trail threads=%d n=%ld ids=%ld base_ns_per_iter=%.3f "
	       "traced_ns_per_iter=%.3f ns_per_pair=%.3f\n",
	       t, n, nid, base, sum / t, sum / t - base);
	return 0;
}
