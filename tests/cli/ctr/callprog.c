/* SPDX-License-Identifier: MIT */
/*
 * callprog.c - known counter deltas per call, for test-counters.sh's
 * function_graph --counters: work() calls fill(), which touches N fresh
 * pages (a page fault each at least), and idle(), which touches none;
 * in the main thread and in a second one (2N pages). `callprog N`.
 * Built with patchable entries (-fpatchable-function-entry=5).
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void fill(int pages)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(pages * ps), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	for (int i = 0; i < pages; i++)
		((volatile char *)p)[(long)i * ps] = 1;
	munmap(p, (size_t)(pages * ps));
}

__attribute__((noinline)) void idle(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void work(int pages)
{
	fill(pages);
	idle(1000);
}

static void *second(void *arg)
{
	work((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 256;
	pthread_t t;

	work(n);
	pthread_create(&t, NULL, second, (void *)(long)(2 * n));
	pthread_join(t, NULL);
	return 0;
}
