/* SPDX-License-Identifier: MIT */
/*
 * keeper.c - a process whose every register must come through trail's
 * injection (src/recorder/inject.c) intact: it loads known values into
 * the general registers the ABI lets a call keep and into every vector
 * register the CPU has (ymm0-15, and zmm0-31 with AVX-512), sleeps in
 * nanosleep by a raw system call, then compares them all. Any register
 * changed, or a sleep cut short, is printed and ends it with status 2.
 * trail's control signal (SIGRTMIN+7, TRAIL_SIGNAL's default) is blocked
 * in the sleeping thread and taken by a second, idle one: an attach that
 * patches nothing interrupts no sleep. With "eintr-ok" a sleep cut short
 * is counted, not an error (an attach that patches opens the signal in
 * every thread). It runs until SIGTERM (status 0), printing "ready" once.
 *   keeper [SLEEP_MS [eintr-ok]]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int s) { (void)s; stop = 1; }

#define NV 32
static uint8_t pat[NV][64] __attribute__((aligned(64)));
static uint8_t out[NV][64] __attribute__((aligned(64)));
/* named from the asm: not static, not optimized away */
uint64_t gin[6] __attribute__((used)), gout[6] __attribute__((used));

/* one sleep with every register loaded; returns the system call's result */
__attribute__((target("avx2"))) static long round_avx2(struct timespec *ts)
{
	long ret;

	__asm__ volatile(
		"vmovdqu 0*64(%[p]), %%ymm0\n vmovdqu 1*64(%[p]), %%ymm1\n"
		"vmovdqu 2*64(%[p]), %%ymm2\n vmovdqu 3*64(%[p]), %%ymm3\n"
		"vmovdqu 4*64(%[p]), %%ymm4\n vmovdqu 5*64(%[p]), %%ymm5\n"
		"vmovdqu 6*64(%[p]), %%ymm6\n vmovdqu 7*64(%[p]), %%ymm7\n"
		"vmovdqu 8*64(%[p]), %%ymm8\n vmovdqu 9*64(%[p]), %%ymm9\n"
		"vmovdqu 10*64(%[p]), %%ymm10\n vmovdqu 11*64(%[p]), %%ymm11\n"
		"vmovdqu 12*64(%[p]), %%ymm12\n vmovdqu 13*64(%[p]), %%ymm13\n"
		"vmovdqu 14*64(%[p]), %%ymm14\n vmovdqu 15*64(%[p]), %%ymm15\n"
		"push %%rbx\n push %%rbp\n"
		"mov gin+0(%%rip), %%rbx\n mov gin+8(%%rip), %%rbp\n mov gin+16(%%rip), %%r12\n"
		"mov gin+24(%%rip), %%r13\n mov gin+32(%%rip), %%r14\n mov gin+40(%%rip), %%r15\n"
		"mov $35, %%eax\n xor %%esi, %%esi\n syscall\n"
		"mov %%rbx, gout+0(%%rip)\n mov %%rbp, gout+8(%%rip)\n mov %%r12, gout+16(%%rip)\n"
		"mov %%r13, gout+24(%%rip)\n mov %%r14, gout+32(%%rip)\n mov %%r15, gout+40(%%rip)\n"
		"pop %%rbp\n pop %%rbx\n"
		"vmovdqu %%ymm0, 0*64(%[o])\n vmovdqu %%ymm1, 1*64(%[o])\n"
		"vmovdqu %%ymm2, 2*64(%[o])\n vmovdqu %%ymm3, 3*64(%[o])\n"
		"vmovdqu %%ymm4, 4*64(%[o])\n vmovdqu %%ymm5, 5*64(%[o])\n"
		"vmovdqu %%ymm6, 6*64(%[o])\n vmovdqu %%ymm7, 7*64(%[o])\n"
		"vmovdqu %%ymm8, 8*64(%[o])\n vmovdqu %%ymm9, 9*64(%[o])\n"
		"vmovdqu %%ymm10, 10*64(%[o])\n vmovdqu %%ymm11, 11*64(%[o])\n"
		"vmovdqu %%ymm12, 12*64(%[o])\n vmovdqu %%ymm13, 13*64(%[o])\n"
		"vmovdqu %%ymm14, 14*64(%[o])\n vmovdqu %%ymm15, 15*64(%[o])\n"
		"vzeroupper\n"
		: "=&a"(ret)
		: [p] "r"(pat), [o] "r"(out), "D"(ts)
		: "rcx", "rsi", "r11", "r12", "r13", "r14", "r15", "memory", "xmm0", "xmm1",
		  "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
		  "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	return ret;
}

/* zmm16-31 (AVX-512 only): loaded, then the same round, then kept */
__attribute__((target("avx512f"))) static long round_avx512(struct timespec *ts)
{
	long ret;

	__asm__ volatile(
		"vmovdqu64 16*64(%[p]), %%zmm16\n vmovdqu64 17*64(%[p]), %%zmm17\n"
		"vmovdqu64 18*64(%[p]), %%zmm18\n vmovdqu64 19*64(%[p]), %%zmm19\n"
		"vmovdqu64 20*64(%[p]), %%zmm20\n vmovdqu64 21*64(%[p]), %%zmm21\n"
		"vmovdqu64 22*64(%[p]), %%zmm22\n vmovdqu64 23*64(%[p]), %%zmm23\n"
		"vmovdqu64 24*64(%[p]), %%zmm24\n vmovdqu64 25*64(%[p]), %%zmm25\n"
		"vmovdqu64 26*64(%[p]), %%zmm26\n vmovdqu64 27*64(%[p]), %%zmm27\n"
		"vmovdqu64 28*64(%[p]), %%zmm28\n vmovdqu64 29*64(%[p]), %%zmm29\n"
		"vmovdqu64 30*64(%[p]), %%zmm30\n vmovdqu64 31*64(%[p]), %%zmm31\n"
		"mov $35, %%eax\n xor %%esi, %%esi\n syscall\n"
		"vmovdqu64 %%zmm16, 16*64(%[o])\n vmovdqu64 %%zmm17, 17*64(%[o])\n"
		"vmovdqu64 %%zmm18, 18*64(%[o])\n vmovdqu64 %%zmm19, 19*64(%[o])\n"
		"vmovdqu64 %%zmm20, 20*64(%[o])\n vmovdqu64 %%zmm21, 21*64(%[o])\n"
		"vmovdqu64 %%zmm22, 22*64(%[o])\n vmovdqu64 %%zmm23, 23*64(%[o])\n"
		"vmovdqu64 %%zmm24, 24*64(%[o])\n vmovdqu64 %%zmm25, 25*64(%[o])\n"
		"vmovdqu64 %%zmm26, 26*64(%[o])\n vmovdqu64 %%zmm27, 27*64(%[o])\n"
		"vmovdqu64 %%zmm28, 28*64(%[o])\n vmovdqu64 %%zmm29, 29*64(%[o])\n"
		"vmovdqu64 %%zmm30, 30*64(%[o])\n vmovdqu64 %%zmm31, 31*64(%[o])\n"
		"vzeroupper\n"
		: "=&a"(ret)
		: [p] "r"(pat), [o] "r"(out), "D"(ts)
		: "rcx", "rsi", "r11", "memory", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",
		  "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28",
		  "xmm29", "xmm30", "xmm31");
	return ret;
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 20;
	int eintr_ok = argc > 2 && !strcmp(argv[2], "eintr-ok");
	int avx512 = __builtin_cpu_supports("avx512f"), rounds = 0, cut = 0;
	struct sigaction sa;
	sigset_t ctl;
	pthread_t t;

	if (!__builtin_cpu_supports("avx2")) {
		printf("no AVX2\n");
		return 77;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&ctl);
	sigaddset(&ctl, SIGRTMIN + 7);
	sigaddset(&ctl, SIGTERM); /* the idle thread's: it sets stop */
	pthread_create(&t, NULL, idle, NULL);
	pthread_sigmask(SIG_BLOCK, &ctl, NULL);
	for (int i = 0; i < NV; i++)
		for (int j = 0; j < 64; j++)
			pat[i][j] = (uint8_t)(i * 37 + j * 11 + 5);
	for (int i = 0; i < 6; i++)
		gin[i] = 0x1111111111111111ull * (uint64_t)(i + 1) ^ 0x0123456789abcdefull;
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
		long r;
		int nv = 16;

		memset(out, 0, sizeof(out));
		memset(gout, 0, sizeof(gout));
		r = round_avx2(&ts);
		if (avx512 && !stop) {
			struct timespec t2 = {0, 1000000};

			long r2 = round_avx512(&t2);

			if (r2 == -EINTR && eintr_ok)
				cut++;
			else if (r2 < 0 && !stop) {
				printf("round %d: nanosleep (zmm) cut short\n", rounds);
				return 2;
			}
			nv = NV;
		}
		if (r == -EINTR && eintr_ok)
			cut++;
		else if (r < 0 && !stop) {
			printf("round %d: nanosleep: %s\n", rounds, strerror((int)-r));
			return 2;
		}
		for (int i = 0; i < 16; i++)
			if (memcmp(out[i], pat[i], 32)) {
				printf("round %d: ymm%d changed\n", rounds, i);
				return 2;
			}
		for (int i = 16; i < nv; i++)
			if (memcmp(out[i], pat[i], 64)) {
				printf("round %d: zmm%d changed\n", rounds, i);
				return 2;
			}
		if (memcmp(gin, gout, sizeof(gin))) {
			printf("round %d: a callee-saved register changed\n", rounds);
			return 2;
		}
		rounds++;
	}
	printf("rounds %d, cut short %d\n", rounds, cut);
	return 0;
}
