/* SPDX-License-Identifier: MIT */
/*
 * churn.c - thread churn: THREADS short-lived threads, BATCH at a time,
 * each records EVENTS events and sleeps a little. More threads than the
 * session has stream slots: slots of exited threads must be reused.
 *
 *   churn THREADS BATCH EVENTS
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <trail/trail.h>

TRAIL_EVENT(churn, ev,
	TRAIL_ARGS(int, thread, int, i),
	TRAIL_FIELDS(trail_field_int(thread) trail_field_int(i)))

static int events;

static void *run(void *arg)
{
	struct timespec ts = {0, 2000000};

	for (int i = 0; i < events; i++)
		trail(churn, ev, (int)(intptr_t)arg, i);
	nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 3000;
	int batch = argc > 2 ? atoi(argv[2]) : 10;
	pthread_t th[64];

	events = argc > 3 ? atoi(argv[3]) : 10;
	if (batch < 1 || batch > 64)
		return 2;
	for (int t = 0; t < threads; t += batch) {
		for (int k = 0; k < batch; k++)
			pthread_create(&th[k], NULL, run, (void *)(intptr_t)(t + k));
		for (int k = 0; k < batch; k++)
			pthread_join(th[k], NULL);
	}
	return 0;
}
