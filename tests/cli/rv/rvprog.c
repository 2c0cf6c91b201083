/* SPDX-License-Identifier: MIT */
/*
 * rvprog.c - locks and unlocks as trail events, for test-rv.sh: a thread
 * takes and gives back ids 1 and 2 N times each (never wrong); then, once
 * it has ended, the main thread takes id 4 twice and gives back id 3 it
 * never took: two violations of a mutex model, whatever the key.
 */
#include <pthread.h>
#include <stdlib.h>

#include <trail/trail.h>

TRAIL_EVENT(app, lock, TRAIL_ARGS(int, id), TRAIL_FIELDS(trail_field_int(id)))
TRAIL_EVENT(app, unlock, TRAIL_ARGS(int, id), TRAIL_FIELDS(trail_field_int(id)))

static int n = 100;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < n; i++) {
		trail(app, lock, 1);
		trail(app, unlock, 1);
		trail(app, lock, 2);
		trail(app, unlock, 2);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		n = atoi(argv[1]);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	trail(app, lock, 4);
	trail(app, lock, 4);
	trail(app, unlock, 4);
	trail(app, unlock, 3);
	return 0;
}
