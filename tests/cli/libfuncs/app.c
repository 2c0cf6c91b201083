/* SPDX-License-Identifier: MIT */
/*
 * app.c - test-libfuncs.sh's program: N calls of each function of libu
 * (from here), N more of u_add from libv's v_run and N from libu's own
 * u_tail, then (with a path) libplug.so opened, p_work(N) called, closed.
 * It prints one sum, the same traced or not.
 *
 *   app N [PLUGIN] [spin]   (spin: loop until killed, "ready" on stdout;
 *                            a second thread spends its time inside
 *                            u_body's loop, where an attach finds it)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int u_add(int a, int b);
int u_hid(int x);
int u_switch(int k);
int u_tail(int a);
long u_spin(long n);
int u_mid(int n);
int u_trap(int n);
int u_body(int n);
int v_run(int n);

__attribute__((noinline)) static long round_of(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++) {
		s += u_add(i, 1);
		s += u_hid(i);
		s += u_switch(i % 10);
		s += u_tail(i);
		s += u_spin(3);
		s += u_mid(3);
		s += u_trap(3);
	}
	return s + v_run(n);
}

static volatile long spun;

static void *spinner(void *arg)
{
	(void)arg;
	for (;;)
		spun += u_body(1 << 20);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long s = round_of(n);

	if (argc > 2 && strcmp(argv[2], "spin")) {
		void *h = dlopen(argv[2], RTLD_NOW);
		int (*work)(int) = h ? (int (*)(int))dlsym(h, "p_work") : NULL;

		if (!work) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		s += work(n);
		dlclose(h);
	}
	if (argc > 2 && !strcmp(argv[argc - 1], "spin")) {
		pthread_t t;

		if (pthread_create(&t, NULL, spinner, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
		printf("ready\n");
		fflush(stdout);
		for (;;) {
			s += round_of(n);
			usleep(1000);
		}
	}
	printf("sum=%ld\n", s);
	return 0;
}
