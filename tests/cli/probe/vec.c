/* SPDX-License-Identifier: MIT */
/*
 * vec.c - a probe at an instruction where a vector register holds a live
 * value in its upper half (test-probes.sh, insn_probe_vector): vadd's
 * third instruction, x loaded before it and used after. With -DEVEX, x is
 * in ymm17 (AVX-512's registers, which glibc's EVEX string functions use
 * in the probe's handler); else in ymm0 (whose upper half their AVX2
 * versions clear with vzeroupper).
 */
#include <immintrin.h>
#include <stdio.h>
#include <string.h>

char longstr[200]; /* the probe reads it: a long copy in the handler */

#ifdef EVEX
__attribute__((noinline, target("avx512vl,avx512f"))) void vadd(const int *a, const int *b,
								  int *out)
{
	register __m256i x __asm__("ymm17") = _mm256_loadu_si256((const void *)a);
	__m256i y;

	__asm__ volatile("" : "+v"(x));
	y = _mm256_loadu_si256((const void *)b);
	__asm__ volatile("" : "+v"(x));
	_mm256_storeu_si256((void *)out, _mm256_add_epi32(x, y));
}
#else
__attribute__((noinline, target("avx2"))) void vadd(const int *a, const int *b, int *out)
{
	__m256i x = _mm256_loadu_si256((const void *)a);
	__m256i y = _mm256_loadu_si256((const void *)b);

	_mm256_storeu_si256((void *)out, _mm256_add_epi32(x, y));
}
#endif

int main(void)
{
	int a[8], b[8], o[8];
	long t = 0;

	memset(longstr, 'x', sizeof(longstr) - 1);
	for (int k = 0; k < 100; k++) {
		for (int i = 0; i < 8; i++) {
			a[i] = i * k + 1;
			b[i] = 100 * i - k;
		}
		vadd(a, b, o);
		for (int i = 0; i < 8; i++)
			t += (long)o[i] * (i + 1);
	}
	printf("%ld\n", t);
	return 0;
}
