/* SPDX-License-Identifier: MIT */
/*
 * mmio.c - test-mmio.sh's driver: a memfd ("trail-mmio-test", 4 pages)
 * mapped shared, 4 threads each writing known patterns into its own
 * 256-byte slot through chosen instructions (inline assembly: the
 * widths, registers, immediates and addressing the test claims are the
 * ones executed, whatever the compiler), reading them back, and saying
 * how many loads and stores it made. The output is the same traced or
 * not.
 *
 *   mmio run ITERS               the threads, then the totals
 *   mmio unsupported ITERS       ... then `rep movsb` and a movups into
 *                                the region, then the threads again
 *   mmio wait ITERS GO           mapped, "ready" printed, the threads
 *                                start when file GO exists (-P)
 *   mmio private ITERS           the memfd mapped MAP_PRIVATE
 *   mmio none                    the memfd created, never mapped
 *   mmio race ITERS              each thread: its passes, then rep movsb
 *                                into its slot, then its passes again
 *   mmio segv ITERS              the program's own SIGSEGV handler catches
 *                                a NULL store and a store to a PROT_NONE
 *                                page of its own, before and after the
 *                                threads (faults not the region's)
 */

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE 16384
#define SLOT 256

static uint8_t *region;
static long iters;

struct res {
	uint64_t sum;
	long loads, stores;
};

/* one pass over slot p: 27 accesses, 14 loads and 13 stores */
static void pass(uint8_t *p, uint64_t k, struct res *r)
{
	uint64_t a, b;
	uint32_t c;

	/* immediates: C6, 66 C7, C7, REX.W C7 (sign-extended) */
	__asm__ volatile("movb $0x5a, (%0)" ::"r"(p) : "memory");
	__asm__ volatile("movw $0x1234, 2(%0)" ::"r"(p) : "memory");
	__asm__ volatile("movl $0x89abcdef, 4(%0)" ::"r"(p) : "memory");
	__asm__ volatile("movq $-2, 8(%0)" ::"r"(p) : "memory");
	r->stores += 4;
	/* registers: r9b (REX 88), si (66 89), r12d (REX.R 89), r15 (REX.WR 89), ah (88, no REX) */
	{
		register uint64_t r9 __asm__("r9") = k;
		register uint64_t r12 __asm__("r12") = k * 3 + 1;
		register uint64_t r15 __asm__("r15") = k << 40 | 0xfeed;

		__asm__ volatile("movb %%r9b, 16(%0)" ::"r"(p), "r"(r9) : "memory");
		__asm__ volatile("movw %%si, 18(%0)" ::"r"(p), "S"(k + 7) : "memory");
		__asm__ volatile("movl %%r12d, 20(%0)" ::"r"(p), "r"(r12) : "memory");
		__asm__ volatile("movq %%r15, 24(%0)" ::"r"(p), "r"(r15) : "memory");
		__asm__ volatile("movb %%ah, 32(%0)" ::"b"(p), "a"(k << 8 | 0x11) : "memory");
	}
	r->stores += 5;
	/* SIB with an index: (%rbx,%rcx,4) */
	__asm__ volatile("movl %%edx, 40(%%rbx,%%rcx,4)" ::"b"(p), "c"(k & 7), "d"((uint32_t)k) :
			 "memory");
	r->stores++;
	/* loads: 0F B6, REX 0F B7, 8B, REX.WR 8B, REX.W 0F BE, REX.W 63 */
	__asm__ volatile("movzbl (%1), %%eax" : "=a"(a) : "r"(p) : "memory");
	r->sum += a;
	__asm__ volatile("movzwl 2(%1), %%r10d; mov %%r10, %0" : "=r"(a) : "r"(p) : "r10", "memory");
	r->sum += a;
	__asm__ volatile("movl 4(%1), %%ecx" : "=c"(c) : "r"(p) : "memory");
	r->sum += c;
	__asm__ volatile("movq 24(%1), %%r13; mov %%r13, %0" : "=r"(a) : "r"(p) : "r13", "memory");
	r->sum += a;
	__asm__ volatile("movsbq 16(%1), %0" : "=r"(a) : "r"(p) : "memory");
	r->sum += a;
	__asm__ volatile("movslq 4(%1), %0" : "=r"(a) : "r"(p) : "memory");
	r->sum += a;
	/* an 8-bit load into the high register keeps the rest: movb (%rbx), %ah */
	a = 0x1122334455667788ull;
	__asm__ volatile("movb 32(%1), %%ah" : "+a"(a) : "b"(p) : "memory");
	r->sum += a;
	/* a 32-bit load clears the upper half */
	a = ~0ull;
	__asm__ volatile("movl 20(%1), %k0" : "+r"(a) : "r"(p) : "memory");
	r->sum += a;
	r->loads += 8;
	/* read-modify-write: orl $imm32 (81 /1), andb (80 /4), addq %reg (REX.W 01) */
	__asm__ volatile("orl $0x100, 4(%0)" ::"r"(p) : "memory", "cc");
	__asm__ volatile("andb $0x0f, (%0)" ::"r"(p) : "memory", "cc");
	__asm__ volatile("addq %1, 8(%0)" ::"r"(p), "r"(k) : "memory", "cc");
	r->loads += 3;
	r->stores += 3;
	/* flags from memory: cmpl (83 /7) then sete; testb (F6 /0) then setne */
	__asm__ volatile("cmpl $0x10, 20(%1); sete %b0" : "=q"(b) : "r"(p) : "memory", "cc");
	r->sum += b & 1;
	__asm__ volatile("testb $0x80, 1(%1); setne %b0" : "=q"(b) : "r"(p) : "memory", "cc");
	r->sum += b & 1;
	__asm__ volatile("movq 8(%1), %0" : "=r"(a) : "r"(p) : "memory");
	r->sum += a;
	r->loads += 3;
	r->sum = r->sum * 31 + k;
}

static struct res res[4];

static int race;

static void *run(void *arg)
{
	long t = (long)arg;
	uint8_t *p = region + 4096 + t * SLOT;

	for (long i = 0; i < iters; i++)
		pass(p, (uint64_t)(t * 1000 + i), &res[t]);
	if (race) {
		/* every thread at once, an instruction not emulated */
		void *d = p + 128, *s = (void *)"0123456789abcdef";
		size_t n = 16;

		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
		for (long i = 0; i < iters; i++)
			pass(p, (uint64_t)(t * 1000 + i), &res[t]);
	}
	return NULL;
}

static void threads(void)
{
	pthread_t th[4];

	memset(res, 0, sizeof(res));
	for (long t = 0; t < 4; t++)
		pthread_create(&th[t], NULL, run, (void *)t);
	for (int t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < 4; t++)
		printf("thread %d: sum %016llx loads %ld stores %ld\n", t,
		       (unsigned long long)res[t].sum, res[t].loads, res[t].stores);
	fflush(stdout);
}

static sigjmp_buf jb;
static volatile uintptr_t null_ish = 8; /* (not a constant: no warning) */
static int caught;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	caught += si->si_code == SEGV_ACCERR ? 100 : 1;
	siglongjmp(jb, 1);
}

/* a NULL store and a store to a page of ours that is PROT_NONE, each
 * caught by our handler */
static void own_faults(void)
{
	static volatile uint8_t *guard;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	if (!guard)
		guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!sigsetjmp(jb, 1))
		*(volatile int *)null_ish = 1;
	if (!sigsetjmp(jb, 1))
		guard[0] = 1;
	printf("caught %d\n", caught);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "run";
	/* MMIO_FILE: a regular file instead (the second way to the pages) */
	const char *file = getenv("MMIO_FILE");
	int fd = file ? open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)
		      : memfd_create("trail-mmio-test", MFD_CLOEXEC);

	iters = argc > 2 ? atol(argv[2]) : 100;
	if (fd < 0 || ftruncate(fd, SIZE))
		return 1;
	if (!strcmp(mode, "none")) {
		puts("not mapped");
		return 0;
	}
	region = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
		      !strcmp(mode, "private") ? MAP_PRIVATE : MAP_SHARED, fd, 0);
	if (region == MAP_FAILED)
		return 1;
	if (!strcmp(mode, "segv"))
		own_faults();
	race = !strcmp(mode, "race");
	if (!strcmp(mode, "wait")) {
		printf("ready\n");
		fflush(stdout);
		while (access(argv[3], F_OK))
			usleep(10000);
	}
	threads();
	if (!strcmp(mode, "unsupported")) {
		uint8_t src[16] = "0123456789abcdef";
		void *d = region + 64;
		void *s = src;
		size_t n = 16;

		/* rep movsb: the first access the decoder refuses (it stops
		 * the region's tracing), then an SSE store (untraced by then) */
		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
		__asm__ volatile("movups %%xmm0, 96(%0)" ::"r"(region), "x"(0) : "memory");
		printf("copied %.16s\n", (char *)region + 64);
		threads();
	}
	if (!strcmp(mode, "segv"))
		own_faults();
	munmap(region, SIZE);
	return 0;
}
