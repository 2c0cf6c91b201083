/* SPDX-License-Identifier: MIT */
/*
 * rvprog.c - locks and unlocks as trail events, for test-rv.sh: a thread
 * takes and gives back ids 1 and 2 N times each (never wrong); then, once
 * it has ended, the main thread takes id 4 twice and gives back id 3 it
 * never took: two violations of a mutex model, whatever the key.
 * `rvprog N T`: T such threads at once, thread t with ids 1 + 10 t and
 * 2 + 10 t (none shares an instance per id or per thread).
 */
#include <pthread.h>
#include <stdlib.h>

#include <trail/trail.h>

TRAIL_EVENT(app, lock, TRAIL_ARGS(int, id), TRAIL_FIELDS(trail_field_int(id)))
TRAIL_EVENT(app, unlock, TRAIL_ARGS(int, id), TRAIL_FIELDS(trail_field_int(id)))

static int n = 100;

static void *worker(void *arg)
{
	int base = (int)(long)arg * 10;

	for (int i = 0; i < n; i++) {
		trail(app, lock, base + 1);
		trail(app, unlock, base + 1);
		trail(app, lock, base + 2);
		trail(app, unlock, base + 2);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[16];
	int nt = argc > 2 ? atoi(argv[2]) : 1;

	if (argc > 1)
		n = atoi(argv[1]);
	if (nt < 1 || nt > 16)
		nt = 1;
	for (long i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	trail(app, lock, 4);
	trail(app, lock, 4);
	trail(app, unlock, 4);
	trail(app, unlock, 3);
	return 0;
}
