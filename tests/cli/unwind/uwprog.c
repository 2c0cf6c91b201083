/* SPDX-License-Identifier: MIT */
/*
 * uwprog.c - a known call chain for test-unwind.sh: main -> a -> b -> c
 * -> d, none inlined, none a tail call (each uses its callee's result),
 * built with .sframe, with .eh_frame only, and with frame pointers only
 * (tests/cli/meson.build). The test probes d and compares the stacks
 * trail records there with gdb's.
 *
 *   uwprog N          a(i) N times
 *   uwprog N signal   ... and then main -> s2 -> raise(SIGUSR1), whose
 *                     handler on_sig calls c -> d
 *   uwprog N deep     ... and then main -> deep x 100 -> c -> d (d's
 *                     argument 7000)
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

volatile int sink;

__attribute__((noinline)) int d(int x)
{
	sink += x;
	return x + 1;
}

__attribute__((noinline)) int c(int x)
{
	int r = d(x * 3);

	sink += r;
	return r + 1;
}

__attribute__((noinline)) int b(int x)
{
	int r = c(x + 2);

	sink += r;
	return r * 2;
}

__attribute__((noinline)) int a(int x)
{
	int r = b(x - 1);

	sink += r;
	return r + 3;
}

__attribute__((noinline)) int deep(int n)
{
	int r = n ? deep(n - 1) : c(7000 / 3);

	sink += r;
	return r + 1;
}

__attribute__((noinline)) void on_sig(int sig)
{
	sink += c(sig);
}

__attribute__((noinline)) int s2(int x)
{
	raise(SIGUSR1);
	sink += x;
	return x + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++)
		sink += a(i);
	if (argc > 2 && !strcmp(argv[2], "signal")) {
		signal(SIGUSR1, on_sig);
		sink += s2(n);
	}
	if (argc > 2 && !strcmp(argv[2], "deep"))
		sink += deep(99);
	return 0;
}
