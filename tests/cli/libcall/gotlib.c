/* SPDX-License-Identifier: MIT */
/*
 * gotlib.c - a library built with -fno-plt (-DLIB: its calls into the C
 * library go through its GOT) and a program calling it N times
 * (test-libcall.sh, with --nest-libcall).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t lf(const char *s);

#ifdef LIB
size_t lf(const char *s)
{
	char *p = strdup(s);
	size_t n = strlen(p);

	free(p);
	return n;
}
#else
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += lf("hello");
	printf("total=%zu\n", t);
	return 0;
}
#endif
