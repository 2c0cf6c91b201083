/* SPDX-License-Identifier: MIT */
/*
 * hsort.h - an in-place heapsort for the tables libtrail builds where
 * malloc may not run (qsort may allocate): no allocation, async-signal-
 * safe, not stable. Inline, so that each caller's element size and order
 * are constants the compiler folds in (a generic out-of-line sort through
 * a callback took twice as long on 200,000 symbols).
 */
#ifndef TRAIL_COMMON_HSORT_H
#define TRAIL_COMMON_HSORT_H

#include <stddef.h>
#include <string.h>

static inline __attribute__((always_inline)) void
trail__hsort_swap(char *a, char *b, size_t size)
{
	char t[64];

	memcpy(t, a, size);
	memcpy(a, b, size);
	memcpy(b, t, size);
}

static inline __attribute__((always_inline)) void
trail__hsort_sift(char *v, size_t n, size_t size, size_t i,
		  int (*before)(const void *a, const void *b))
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && before(v + m * size, v + l * size))
			m = l;
		if (l + 1 < n && before(v + m * size, v + (l + 1) * size))
			m = l + 1;
		if (m == i)
			return;
		trail__hsort_swap(v + i * size, v + m * size, size);
		i = m;
	}
}

/* Sorts n elements of size bytes (at most 64) at v, before(a, b) saying
 * a comes first. */
static inline __attribute__((always_inline)) void
trail__hsort(void *v, size_t n, size_t size, int (*before)(const void *a, const void *b))
{
	char *p = v;

	for (size_t i = n / 2; i-- > 0;)
		trail__hsort_sift(p, n, size, i, before);
	for (size_t k = n; k > 1; k--) {
		trail__hsort_swap(p, p + (k - 1) * size, size);
		trail__hsort_sift(p, k - 1, size, 0, before);
	}
}

#endif /* TRAIL_COMMON_HSORT_H */
