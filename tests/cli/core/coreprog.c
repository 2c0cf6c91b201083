/* SPDX-License-Identifier: MIT */
/*
 * coreprog.c - a process that dumps core with known records in its trace
 * buffer, for test-core.sh: `coreprog N [abort|segv|wait FILE]` writes
 * app:tick {i} for i in 0..N-1 (and app:tock {i} from a second thread
 * for the first N/2), prints "ready", then aborts (SIGABRT), stores
 * through NULL (SIGSEGV), waits until FILE exists and aborts (wait), or
 * waits until FILE exists and returns (hold: for gcore).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(app, tick, TRAIL_ARGS(int, i), TRAIL_FIELDS(trail_field_int(i)))
TRAIL_EVENT(app, tock, TRAIL_ARGS(int, i), TRAIL_FIELDS(trail_field_int(i)))

static int n;

static void *second(void *arg)
{
	(void)arg;
	for (int i = 0; i < n / 2; i++)
		trail(app, tock, i);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 2 ? argv[2] : "abort";
	pthread_t t;

	n = argc > 1 ? atoi(argv[1]) : 1000;
	pthread_create(&t, NULL, second, NULL);
	for (int i = 0; i < n; i++)
		trail(app, tick, i);
	pthread_join(t, NULL);
	printf("ready\n");
	fflush(stdout);
	if (!strcmp(how, "segv"))
		*(volatile int *)NULL = 1;
	if ((!strcmp(how, "wait") || !strcmp(how, "hold")) && argc > 3) {
		struct timespec ts = {0, 10000000};

		for (int k = 0; k < 3000 && access(argv[3], F_OK); k++)
			nanosleep(&ts, NULL);
		if (!strcmp(how, "hold"))
			return 0;
	}
	abort();
}
