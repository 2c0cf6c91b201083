/* SPDX-License-Identifier: MIT */
/*
 * killme.c - SIGKILL test program. Records kill:tick with i = 0, 1, 2, ...
 * from two threads, and after each record returns, stores i into a shared
 * file (MAP_SHARED) so the test knows, after killing it with SIGKILL, which
 * events had been committed: all of them must be in the trace.
 *
 *   killme STATE_FILE
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(kill, tick,
	TRAIL_ARGS(int, thread, uint64_t, i),
	TRAIL_FIELDS(trail_field_int(thread) trail_field_int(i)))

static volatile uint64_t *state; /* [0], [1]: last committed i per thread */

static void *spin(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (uint64_t i = 0;; i++) {
		trail(kill, tick, t, i);
		__atomic_store_n(&state[t], i + 1, __ATOMIC_RELEASE);
		if ((i & 1023) == 0)
			usleep(100); /* let the recorder drain some, keep others in flight */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	int fd;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return 1;
	state = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (state == MAP_FAILED)
		return 1;
	pthread_create(&th, NULL, spin, (void *)1);
	spin((void *)0);
	return 0;
}
