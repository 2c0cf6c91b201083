/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the timestamp source of the record path and its conversion.
 *
 * Writers stamp records with raw ticks: the TSC on x86_64 when it is
 * invariant and synchronized across CPUs (trail__clock_choose), else
 * CLOCK_MONOTONIC nanoseconds; the recorder chooses, and the arena header
 * tells the processes. The recorder stores in the trace
 * file the kernel's TSC calibration (perf_event_mmap_page time_mult /
 * time_shift) and pairs (ticks, CLOCK_MONOTONIC ns) sampled during the
 * recording; the reader maps ticks to CLOCK_MONOTONIC by piecewise-linear
 * interpolation between pairs, which is continuous and monotonic.
 */
#ifndef TRAIL_COMMON_CLOCK_H
#define TRAIL_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t trail__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t trail__rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return trail__mono_ns();
#endif
}

/* TRAIL_CLOCK_TSC if this machine's TSC is usable as a trace clock, else
 * TRAIL_CLOCK_MONO. Reads sysfs: call outside the record path. */
uint32_t trail__clock_detect(void);

/*
 * The recorder's choice, which every process of its session follows:
 * want is "tsc" (x86-tsc), "mono" or NULL/"auto". Auto takes the TSC when
 * the kernel uses it as clocksource, or when the CPU says it is invariant
 * and a hand-over test between every pair of CPUs finds them in step (a
 * virtual machine whose kernel keeps a paravirtual clocksource); else
 * CLOCK_MONOTONIC. TRAIL_CLOCK_NONE: the asked clock cannot be had; *why
 * says why (or how auto decided). Takes up to ~100 ms per CPU (a few times
 * that on a machine too busy for the test). *settled: auto's answer is a
 * property of the machine until it reboots (not one of a test the load
 * made inconclusive), which a caller may keep: recorders that choose
 * differently cannot record one process at once.
 */
#define TRAIL_CLOCK_NONE 0u
uint32_t trail__clock_choose(const char *want, const char **why, int *settled);

/* Ticks now in the given clock. */
static inline uint64_t trail__clock_now(uint32_t clock)
{
	return clock == 1 /* TRAIL_CLOCK_TSC */ ? trail__rdtsc() : trail__mono_ns();
}

struct trail_clock_sync {
	uint64_t ticks;
	uint64_t mono_ns;
};

/* A (ticks, mono) pair measured with the tightest bracket of a few tries. */
void trail__clock_sync(uint32_t clock, struct trail_clock_sync *s);

/* ns = ticks * mult >> shift: from the kernel (perf mmap page) when it
 * offers it, else measured over `calib_ms`. */
void trail__clock_calibrate(uint32_t clock, uint32_t *mult, uint32_t *shift,
			    unsigned calib_ms);

#endif /* TRAIL_COMMON_CLOCK_H */
