/* SPDX-License-Identifier: MIT */
/*
 * lines.c - source line probes (test-probes.sh, line_probes): a loop whose
 * locals a probe on line 15 reads. Line numbers are part of the test: keep
 * total_of where it is (its declaration on line 10, `total += sq` on 15).
 */
#include <stdio.h>
#include <stdlib.h>
#define NOINLINE __attribute__((noinline, used))
NOINLINE int total_of(const int *v, int n)
{
	int total = 0;
	for (int i = 0; i < n; i++) {
		int sq = v[i] * v[i];
		total += sq;
	}
	return total;
}
int main(int argc, char **argv)
{
	int v[5] = {1, 2, 3, 4, 5};
	int n = argc > 1 ? atoi(argv[1]) : 5;
	printf("%d\n", total_of(v, n));
	return 0;
}
