/* SPDX-License-Identifier: MIT */
/*
 * bench_fork.c - fork under tracing: N children (20), each forked, calling
 * exit(0) at once, and waited for by the parent before the next, the loop
 * timed inside the process. Built without patchable entries, like any
 * program: under -p function its functions are displaced and its calls
 * into libc (fork, waitpid, exit) go through the traced PLT. A child's
 * exit writes one event (bench:child), so -e has something to record.
 * bench/fork.sh runs it untraced and under each tracer. Prints one
 * "RESULT ..." line.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(bench, child, TRAIL_ARGS(int, i), TRAIL_FIELDS(trail_field_int(i)))

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20;
	uint64_t t0;

	bench_setup(1, argv);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		pid_t p = fork();

		if (p == 0) {
			trail(bench, child, (int)i);
			exit(0);
		}
		if (p < 0 || waitpid(p, NULL, 0) != p) {
			perror("bench_fork");
			return 1;
		}
	}
	printf("RESULT bench=fork n=%ld ms=%.3f us_per_fork=%.1f\n", n,
	       (double)(now_ns() - t0) / 1e6, (double)(now_ns() - t0) / 1e3 / (double)n);
	return 0;
}
