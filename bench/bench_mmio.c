/* SPDX-License-Identifier: MIT */
/*
 * bench_mmio.c - what a traced MMIO access costs (bench/mmio.sh): a memfd
 * ("trail-mmio-bench", one page a thread) mapped shared, BENCH_THREADS
 * threads (default 4) each storing and loading 32-bit registers N times
 * (2N accesses, `volatile`: one mov each). Prints the time per access,
 * summed over the threads' own elapsed times (each thread's loop timed in
 * it), and the accesses made.
 *
 * BENCH_BARE=1: the region protected by the program itself, with a
 * SIGSEGV handler of its own that only steps over each access (both are
 * 2-byte movs): what the fault and the signal cost alone, the floor of
 * any emulation.
 */

#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile uint32_t *region;
static long n;
static uint64_t elapsed[64];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
	long t = (long)arg;
	volatile uint32_t *r = region + t * 1024;
	uint64_t t0 = now_ns();
	uint32_t sum = 0;

	for (long i = 0; i < n; i++) {
		uint32_t v = (uint32_t)i;

		/* a device register written, another read: 2-byte movs */
		__asm__ volatile("mov %0, (%1)" ::"a"(v), "d"(r + (i & 63)) : "memory");
		__asm__ volatile("mov (%1), %0" : "=a"(v) : "d"(r + ((i + 1) & 63)) : "memory");
		sum += v;
	}
	elapsed[t] = now_ns() - t0 + (sum & 0); /* (sum: the loads stay) */
	return NULL;
}

static void step(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	(void)si;
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

int main(void)
{
	const char *e = getenv("BENCH_N"), *th = getenv("BENCH_THREADS");
	long nt = th ? atol(th) : 4;
	int fd = memfd_create("trail-mmio-bench", MFD_CLOEXEC);
	pthread_t tid[64];
	uint64_t total = 0;

	n = e ? atol(e) : 100000;
	if (nt < 1 || nt > 64 || fd < 0 || ftruncate(fd, nt * 4096))
		return 1;
	region = mmap(NULL, (size_t)nt * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (region == MAP_FAILED)
		return 1;
	if (getenv("BENCH_BARE") && atoi(getenv("BENCH_BARE"))) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = step;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGSEGV, &sa, NULL);
		mprotect((void *)region, (size_t)nt * 4096, PROT_NONE);
	}
	for (long t = 0; t < nt; t++)
		pthread_create(&tid[t], NULL, run, (void *)t);
	for (long t = 0; t < nt; t++) {
		pthread_join(tid[t], NULL);
		total += elapsed[t];
	}
	printf("RESULT ns_per_access=%.1f accesses=%ld threads=%ld\n",
	       (double)total / (double)(2 * n * nt), 2 * n * nt, nt);
	return 0;
}
