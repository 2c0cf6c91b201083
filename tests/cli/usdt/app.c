/* SPDX-License-Identifier: MIT */
/*
 * app.c - USDT probes (<sys/sdt.h>, systemtap-sdt-dev) for
 * tests/cli/test-usdt.sh:
 *   trailtest:step     in a loop: an int, a pointer, a negative long
 *   trailtest:konst    a constant argument ($42 in its note)
 *   trailtest:twice    two sites, one name
 *   trailtest:guarded  only when its semaphore is set: the program
 *                      counts how often it was, and prints it
 *   app [N]            N rounds (5)
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

/* with semaphores, every probe's note names one */
#define SEMA(p) unsigned short trailtest_##p##_semaphore __attribute__((section(".probes"), used))
SEMA(step);
SEMA(konst);
SEMA(twice);
SEMA(guarded);

static volatile long sink;

__attribute__((noinline)) static void work(int i, const char *s)
{
	long big = -1000000000000L - i;

	DTRACE_PROBE3(trailtest, step, i, s, big);
	sink += big;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5, guarded = 0;

	for (int i = 0; i < n; i++) {
		work(i, "text");
		DTRACE_PROBE1(trailtest, konst, 42);
		if (trailtest_guarded_semaphore) {
			guarded++;
			DTRACE_PROBE1(trailtest, guarded, i * 10);
		}
	}
	DTRACE_PROBE1(trailtest, twice, 1);
	DTRACE_PROBE1(trailtest, twice, 2);
	printf("guarded=%d\n", guarded);
	return 0;
}
