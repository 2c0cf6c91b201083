/* SPDX-License-Identifier: MIT */
/*
 * wprog.c - data written by several threads, for test-wprobe.sh (a plain
 * program: no tracepoints, libtrail preloaded by the recorder).
 *
 *   wprog N [FILE]   4 threads each add 1 to `counter` N times under a
 *                    lock (its values are 1 .. 4N, each written once),
 *                    then `flag` is set to 1 and `small[2]` to 7. With
 *                    FILE the threads start first and wait (60 s at
 *                    most) for FILE to exist before writing: a recorder
 *                    attaches to threads that are already there.
 *   Prints "counter=VALUE". With WPROG_HOLD set, the program first takes
 *   the four debug registers of its threads itself (watchpoints of its
 *   own, as a debugger would), and says how many it got.
 */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

long counter;
int small[4];
char flag;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long n = 1000;
static const char *wait_for;

static long spare[4];

/* a debugger's four watchpoints (on spare[]), for this thread and those
 * it creates: how many were had */
static int hold(void)
{
	int n = 0;

	for (int i = 0; i < 4; i++) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_BREAKPOINT;
		a.size = sizeof(a);
		a.bp_type = HW_BREAKPOINT_W;
		a.bp_addr = (unsigned long)&spare[i];
		a.bp_len = HW_BREAKPOINT_LEN_8;
		a.sample_period = 1;
		a.inherit = 1;
		a.inherit_thread = 1;
		a.exclude_kernel = 1;
		n += syscall(SYS_perf_event_open, &a, 0, -1, -1, 0) >= 0;
	}
	return n;
}

int touch(int v) /* a function: not a variable to watch */
{
	return v + 1;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; wait_for && access(wait_for, F_OK) && i < 6000; i++) {
		struct timespec ts = {0, 10000000};

		nanosleep(&ts, NULL);
	}
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];

	if (getenv("WPROG_HOLD"))
		printf("held %d\n", hold());
	fflush(stdout);
	if (argc > 1)
		n = atol(argv[1]);
	if (argc > 2)
		wait_for = argv[2];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	flag = (char)touch(0);
	small[2] = 7;
	printf("counter=%ld\n", counter);
	return 0;
}
