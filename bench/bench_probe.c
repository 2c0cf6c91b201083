/* SPDX-License-Identifier: MIT */
/*
 * bench_probe.c - cost of a probe hit: N calls of one function, the loop
 * timed inside the process. bench/probe.sh runs it untraced, with trail
 * probes on the function (three register arguments; one string read;
 * entry + return probes), under function_graph, and with the kernel's
 * uprobes on the same function, and subtracts.
 *
 *   bench_probe regs|str [N]
 *
 * regs: probe3(a, b, c), three integer arguments; str: probe_str(s, n),
 * a 16-byte string at s. Prints one "RESULT ..." line.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <stdio.h>
#include <string.h>

__attribute__((noinline, noclone, used)) long probe3(long a, long b, long c)
{
	return (a * 3 + (b >> 2)) ^ c;
}

__attribute__((noinline, noclone, used)) long probe_str(const char *s, long n)
{
	return s[n & 7] + n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "regs";
	long n = bench_setup(argc - 1, argv + 1), acc = 0;
	static const char text[] = "/etc/bench.conf"; /* 15 chars + NUL */
	int str = !strcmp(mode, "str");
	uint64_t t0;

	for (long i = 0; i < n / 100; i++)
		acc += str ? probe_str(text, i) : probe3(i, i + 1, i + 2);
	t0 = now_ns();
	if (str)
		for (long i = 0; i < n; i++)
			acc += probe_str(text, i);
	else
		for (long i = 0; i < n; i++)
			acc += probe3(i, i + 1, i + 2);
	sink = acc;
	printf("RESULT bench=probe mode=%s n=%ld calls=%ld ns_per_iter=%.3f\n", mode, n,
	       n + n / 100, (double)(now_ns() - t0) / (double)n);
	return 0;
}
