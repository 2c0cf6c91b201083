/* SPDX-License-Identifier: MIT */
/*
 * example.c - a small multi-threaded program with trail tracepoints.
 *
 *   trail record -e 'app:*' -- ./example            # 2 workers x 5 requests
 *   trail record -e app:request -- ./example 4 1000
 *   ./example --loop &  trail record -e 'app:*' -P $!   # attach, Ctrl-C
 *
 * The workers take turns (a baton passed under a mutex), so a recording is
 * the same from run to run apart from pids and timestamps: the test suite
 * compares `trail report` of it with a golden file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app-events.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int turn, nworkers, nrequests;

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%d", id);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&lock);
	while (turn != id)
		pthread_cond_wait(&turn_cv, &lock);
	worker_serve(id, nrequests);
	turn++;
	pthread_cond_broadcast(&turn_cv);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int run_once(void)
{
	pthread_t *t = calloc((size_t)nworkers, sizeof(*t));

	if (!t)
		return 1;
	turn = 0;
	trail(app, start, nworkers, nrequests);
	for (int i = 0; i < nworkers; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < nworkers; i++)
		pthread_join(t[i], NULL);
	trail(app, stop, nworkers * nrequests);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	int loop = argc > 1 && !strcmp(argv[1], "--loop");

	nworkers = argc > 1 + loop ? atoi(argv[1 + loop]) : 2;
	nrequests = argc > 2 + loop ? atoi(argv[2 + loop]) : 5;
	if (nworkers < 1 || nworkers > 64 || nrequests < 0) {
		fprintf(stderr, "usage: %s [--loop] [WORKERS [REQUESTS]]\n", argv[0]);
		return 2;
	}
	if (!loop)
		return run_once();
	/* --loop: serve forever, a round every 10 ms (for attach demos) */
	for (;;) {
		struct timespec ts = {0, 10000000};

		if (run_once())
			return 1;
		nanosleep(&ts, NULL);
	}
}
