/* SPDX-License-Identifier: MIT */
/*
 * bench_event.c - cost of one trail event, measured inside the process the
 * way peer_lttng.c measures LTTng-UST: the same work() loop (bench-common.h)
 * without and with a tracepoint bench:event(int a, long b) per iteration.
 *
 *   ns_per_event = (traced loop - untraced loop) / N
 *
 * Run it under `trail record -e bench:event` for the enabled cost, alone for
 * the disabled cost (the tracepoint is compiled in but off). Built a second
 * time with -DNO_TRACEPOINT as the "no tracepoint at all" reference.
 * Optional pacing (BENCH_RATE=events/s) for loss tests at a fixed rate;
 * BENCH_THREADS=T runs the traced loop in T threads at once (thread k on
 * CPU k), ns_per_event their mean. Prints one "RESULT key=value ..." line.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(bench, event,
	TRAIL_ARGS(int, a, long, b),
	TRAIL_FIELDS(trail_field_int(a) trail_field_int(b)))

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

struct run {
	long n, acc;
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
		long x = work(i);

		r->acc += x;
#ifndef NO_TRACEPOINT
		trail(bench, event, (int)i, x);
#endif
	}
	r->ns = (double)(now_ns() - t0) / (double)r->n;
	return NULL;
}

/* BENCH_THREADS: T threads' traced loops at once, their mean ns per
 * iteration */
static double threads_run(long n, int t)
{
	struct run r[64];
	pthread_t th[64];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double sum = 0;

	for (int k = 0; k < t; k++) {
		r[k] = (struct run){.n = n, .cpu = (int)(k % (ncpu > 0 ? ncpu : 1))};
		pthread_create(&th[k], NULL, thread_loop, &r[k]);
	}
	fprintf(stderr, "threads' ns per iteration:");
	for (int k = 0; k < t; k++) {
		pthread_join(th[k], NULL);
		sink += r[k].acc;
		sum += r[k].ns;
		fprintf(stderr, " %.3f", r[k].ns);
	}
	fprintf(stderr, "\n");
	return sum / t;
}

int main(int argc, char **argv)
{
	long n = bench_setup(argc, argv), acc = 0;
	const char *rate = getenv("BENCH_RATE");
	double ticks_per_event = 0, rdtsc_ns, base = bench_base(n);
	uint64_t t2, t3;

	if (rate && atof(rate) > 0) { /* calibrate the TSC for pacing */
		uint64_t a = rdtsc(), na = now_ns(), b, nb;
		struct timespec ts = {0, 20000000};

		nanosleep(&ts, NULL);
		b = rdtsc();
		nb = now_ns();
		ticks_per_event = (double)(b - a) / (double)(nb - na) * 1e9 / atof(rate);
	}
	{
		const char *th = getenv("BENCH_THREADS");
		int t = th ? atoi(th) : 1;

		if (t > 1) {
			double traced = threads_run(n, t > 64 ? 64 : t);

			printf("RESULT bench=trail threads=%d n=%ld base_ns_per_iter=%.3f "
			       "traced_ns_per_iter=%.3f ns_per_event=%.3f\n",
			       t > 64 ? 64 : t, n, base, traced, traced - base);
			return 0;
		}
	}
	t2 = now_ns();
	if (ticks_per_event > 0) {
		uint64_t next = rdtsc();

		for (long i = 0; i < n; i++) {
			long r = work(i);

			while (rdtsc() < next)
				;
			next += (uint64_t)ticks_per_event;
			acc += r;
#ifndef NO_TRACEPOINT
			trail(bench, event, (int)i, r);
#endif
		}
	} else {
		for (long i = 0; i < n; i++) {
			long r = work(i);

			acc += r;
#ifndef NO_TRACEPOINT
			trail(bench, event, (int)i, r);
#endif
		}
	}
	t3 = now_ns();
	sink = acc;
	{ /* the timestamp floor, in the same process */
		uint64_t a = now_ns(), x = 0;

		for (long i = 0; i < n / 10; i++)
			x += rdtsc();
		sink += (long)x;
		rdtsc_ns = (double)(now_ns() - a) / (double)(n / 10 ? n / 10 : 1);
	}
	{
		double traced = (double)(t3 - t2) / n;
#ifdef NO_TRACEPOINT
		int enabled = -1;
#else
		int enabled = trail_enabled(bench, event) ? 1 : 0;
#endif
		printf("RESULT bench=trail tp_enabled=%d n=%ld base_ns_per_iter=%.3f "
		       "traced_ns_per_iter=%.3f ns_per_event=%.3f rdtsc_ns=%.3f rate=%s\n",
		       enabled, n, base, traced, traced - base, rdtsc_ns,
		       rate ? rate : "max");
	}
	return 0;
}
