/* SPDX-License-Identifier: MIT */
/*
 * ctrprog.c - known counter deltas, for test-counters.sh: app:before,
 * then N fresh pages touched (each one page fault at least), then
 * app:after; the same in a second thread with 2N pages. `ctrprog N`.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(app, before, TRAIL_ARGS(int, pages), TRAIL_FIELDS(trail_field_int(pages)))
TRAIL_EVENT(app, after, TRAIL_ARGS(int, pages), TRAIL_FIELDS(trail_field_int(pages)))

static void touch(int pages)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(pages * ps), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	trail(app, before, pages);
	for (int i = 0; i < pages; i++)
		((volatile char *)p)[(long)i * ps] = 1;
	trail(app, after, pages);
	munmap(p, (size_t)(pages * ps));
}

static void *second(void *arg)
{
	touch((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 256;
	pthread_t t;

	touch(n);
	pthread_create(&t, NULL, second, (void *)(long)(2 * n));
	pthread_join(t, NULL);
	return 0;
}
