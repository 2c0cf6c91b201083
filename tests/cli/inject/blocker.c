/* SPDX-License-Identifier: MIT */
/*
 * blocker.c - a server's shape for attach tests: a helper thread that
 * blocks every signal (as jemalloc's background thread in redis-server
 * does) and calls a function in a loop, beside a main thread that does
 * the same with its signals open. SIGTERM ends it (taken by main),
 * status 0 if every call gave the right answer.
 *   blocker [late]   late: the blocking thread starts 1.5 s in (after an
 *                    attach), created from a thread that blocks all too
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static volatile int bad;

static void on_term(int s)
{
	(void)s;
	stop = 1;
}

__attribute__((noinline)) int blocked_work(int x)
{
	return x * 7 + 3;
}

__attribute__((noinline)) int main_work(int x)
{
	return x * 5 + 1;
}

static void *helper(void *arg)
{
	struct timespec ts = {0, 2000000};

	(void)arg;
	for (int i = 0; !stop; i++) {
		if (blocked_work(i) != i * 7 + 3)
			bad = 1;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int late = argc > 1 && !strcmp(argv[1], "late");
	struct sigaction sa;
	sigset_t all, old;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	if (late) {
		struct timespec ts = {1, 500000000};

		nanosleep(&ts, NULL);
	}
	/* the new thread inherits every signal blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_create(&t, NULL, helper, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; !stop; i++) {
		struct timespec ts = {0, 2000000};

		if (main_work(i) != i * 5 + 1)
			bad = 1;
		nanosleep(&ts, NULL);
	}
	pthread_join(t, NULL);
	return bad ? 2 : 0;
}
