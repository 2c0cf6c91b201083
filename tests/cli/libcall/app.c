/* SPDX-License-Identifier: MIT */
/*
 * app.c - a program's calls into shared libraries, traced through its PLT
 * (test-libcall.sh builds it lazily bound, bound now under RELRO, not PIE,
 * with patchable entries, against a library with two versions of one
 * function): known numbers of malloc/free/strlen/pthread_mutex_lock calls
 * under known callers, a longjmp out of a call, an exception thrown
 * through a library call (C++ build), and a spin mode to attach to.
 * Built with -fno-plt, its calls go through GOT slots instead; getpid's
 * slot also gives getpid's address, compared with the C library's own
 * (a slot hooked there would make them differ).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef WITH_VER
int ver(void);
#endif

static volatile int sink;
static jmp_buf jb;

__attribute__((noinline)) size_t step(int i)
{
	char *p = malloc(32);
	int n = snprintf(p, 32, "step %d", i);
	size_t l = strlen(p);

	sink += n;
	free(p);
	return l;
}

__attribute__((noinline)) void locked(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	sink++;
	pthread_mutex_unlock(m);
}

__attribute__((noinline)) void jumper(void)
{
	if (!setjmp(jb))
		longjmp(jb, 1);
	sink++;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	size_t t = 0;

	if (argc > 2 && !strcmp(argv[2], "spin")) {
		puts("ready");
		fflush(stdout);
		for (;;) {
			t += step(1);
			usleep(2000);
		}
	}
	for (int i = 0; i < n; i++) {
		t += step(i);
		locked(&m);
	}
	jumper();
	{
		pid_t (*volatile gp)(void) = getpid;

		printf("getpid %s, %s\n", gp == (pid_t (*)(void))dlsym(RTLD_DEFAULT, "getpid") ?
					     "same" : "differs",
		       getpid() > 0 ? "called" : "failed");
	}
	printf("calls=%d total=%zu\n", n, t);
#ifdef WITH_VER
	printf("ver=%d\n", ver());
#endif
	return 0;
}
