/* SPDX-License-Identifier: MIT */
/*
 * rets.c - return probes at ret instructions (test-probes.sh,
 * return_at_ret_instructions): a local still there when count_up returns
 * at -O0, and at -O2 a function that returns through a tail call.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, used))

static volatile int sink;

NOINLINE int count_up(int n)
{
	int count = 0;

	for (int i = 0; i < n; i++)
		count += i;
	sink = count;
	return count * 2;
}

/* at -O2: jmp count_up */
NOINLINE int tail(int n)
{
	int k = n + 1;

	sink = k;
	return count_up(k);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4, t = 0;

	for (int i = 1; i <= n; i++)
		t += count_up(i) + tail(i);
	printf("%d\n", t);
	return 0;
}
