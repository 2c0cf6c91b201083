/* SPDX-License-Identifier: MIT */
/*
 * forks.c - N children (argv[1], 5), one at a time: each, forked, calls
 * snprintf, a function of its own calling strlen, and exit; the parent
 * waits for it before the next. tests/cli/test-libcall.sh's
 * forked_children checks every child's calls under its own pid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) size_t child_work(const char *s)
{
	return strlen(s);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;

	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p == 0) {
			char buf[32];

			snprintf(buf, sizeof(buf), "child %d", i);
			exit(child_work(buf) == 0);
		}
		if (p < 0 || waitpid(p, NULL, 0) != p)
			return 1;
	}
	printf("forked %d\n", n);
	return 0;
}
