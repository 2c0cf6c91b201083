/* SPDX-License-Identifier: MIT */
/*
 * stress.c - conservation stress for the record path.
 *
 *   stress THREADS EVENTS COUNTS_FILE [SIGNAL_PERIOD_US]
 *
 * THREADS threads each record EVENTS stress:ev events (thread, seq) as fast
 * as they can, while a timer thread sends SIGUSR1 to random workers; the
 * handler records stress:sig (thread, seq), often in the middle of the
 * interrupted thread's own trail__write(), i.e. nested. At the end each
 * thread's tid and exact counts go to COUNTS_FILE:
 *
 *   thread IDX tid TID ev N sig M
 *
 * tests/stress/stress-check compares them with the trace.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(stress, ev,
	TRAIL_ARGS(uint32_t, thread, uint64_t, seq),
	TRAIL_FIELDS(trail_field_int(thread) trail_field_int(seq)))

TRAIL_EVENT(stress, sig,
	TRAIL_ARGS(uint32_t, thread, uint64_t, seq, const char *, tag),
	TRAIL_FIELDS(trail_field_int(thread) trail_field_int(seq)
		     trail_field_string(tag)))

#define MAX_THREADS 64

struct worker {
	pthread_t th;
	uint32_t idx;
	pid_t tid;
	long events;
	volatile long ev_done;
	volatile long sig_done;
	volatile int done;
} workers[MAX_THREADS];

static __thread struct worker *self;
static int running = 1;
static int nthreads;

static void on_usr1(int sig)
{
	(void)sig;
	if (!self)
		return;
	trail(stress, sig, self->idx, (uint64_t)self->sig_done, "nested?");
	self->sig_done++;
}

static void *work(void *arg)
{
	struct worker *w = arg;

	self = w;
	w->tid = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < w->events; i++) {
		trail(stress, ev, w->idx, (uint64_t)i);
		w->ev_done++;
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *pester(void *arg)
{
	long period_us = (long)(intptr_t)arg;
	unsigned seed = 12345;

	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE)) {
		struct timespec ts = {0, period_us * 1000};
		int k = (int)(rand_r(&seed) % (unsigned)nthreads);

		/* only threads still running: a joined pthread_t is gone */
		if (!__atomic_load_n(&workers[k].done, __ATOMIC_ACQUIRE))
			pthread_kill(workers[k].th, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {0};
	pthread_t p;
	long events, period;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: %s THREADS EVENTS COUNTS_FILE [SIGNAL_PERIOD_US]\n", argv[0]);
		return 2;
	}
	nthreads = atoi(argv[1]);
	events = atol(argv[2]);
	period = argc > 4 ? atol(argv[4]) : 20;
	if (nthreads < 1 || nthreads > MAX_THREADS)
		return 2;
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < nthreads; i++) {
		workers[i].idx = (uint32_t)i;
		workers[i].events = events;
		pthread_create(&workers[i].th, NULL, work, &workers[i]);
	}
	if (period > 0)
		pthread_create(&p, NULL, pester, (void *)(intptr_t)period);
	for (int i = 0; i < nthreads; i++)
		while (!__atomic_load_n(&workers[i].done, __ATOMIC_ACQUIRE))
			usleep(1000);
	__atomic_store_n(&running, 0, __ATOMIC_RELEASE);
	if (period > 0)
		pthread_join(p, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(workers[i].th, NULL);
	f = fopen(argv[3], "w");
	if (!f)
		return 1;
	for (int i = 0; i < nthreads; i++)
		fprintf(f, "thread %d tid %d ev %ld sig %ld\n", i, (int)workers[i].tid,
			workers[i].ev_done, workers[i].sig_done);
	return fclose(f) ? 1 : 0;
}
