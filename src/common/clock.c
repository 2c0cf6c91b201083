/* SPDX-License-Identifier: MIT */
/* clock.c - clock source detection and calibration; see clock.h. */
#include "clock.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arena.h"

uint32_t trail__clock_detect(void)
{
#if defined(__x86_64__)
	char buf[32] = "";
	int fd;
	ssize_t n;

	fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return TRAIL_CLOCK_MONO;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n >= 3 && !strncmp(buf, "tsc", 3) && (n == 3 || buf[3] == '\n'))
		return TRAIL_CLOCK_TSC;
#endif
	return TRAIL_CLOCK_MONO;
}

#if defined(__x86_64__)
/* The CPU's own word: the TSC ticks at a constant rate and does not stop in
 * deep idle states (invariant TSC). */
static int tsc_invariant(void)
{
	char buf[8192], *flags, *eol;
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	flags = strstr(buf, "\nflags");
	if (!flags)
		return 0;
	eol = strchr(flags + 1, '\n');
	if (eol)
		*eol = '\0';
	return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
}

/*
 * Are the TSCs of all our CPUs in step? Two threads, one on the first
 * allowed CPU and one on each other in turn, hand a token back and forth;
 * each reads its TSC after seeing the other's reading, which happened
 * before: a reading below it is a TSC behind the other's. 20000 hand-overs
 * per pair, at most ~100 ms per pair on a busy machine.
 */
struct tsc_pair {
	int cpu[2];
	uint64_t last; /* the last reading, handed over with turn */
	int turn;
	int stop;
	long rounds;    /* side 0's, read after the join */
	long backwards;
};

static void *tsc_side(void *arg)
{
	struct tsc_pair *p = ((void **)arg)[0];
	int me = (int)(intptr_t)((void **)arg)[1];
	cpu_set_t set;
	uint64_t t0 = trail__mono_ns();

	CPU_ZERO(&set);
	CPU_SET(p->cpu[me], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	for (long i = 0; i < 20000 && !__atomic_load_n(&p->stop, __ATOMIC_RELAXED); i++) {
		uint64_t seen, t;

		while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != me) {
			if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
				return NULL;
			if (trail__mono_ns() - t0 > 100000000ull) {
				__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
				return NULL;
			}
		}
		seen = __atomic_load_n(&p->last, __ATOMIC_RELAXED);
		__asm__ __volatile__("lfence" ::: "memory");
		t = trail__rdtsc();
		if (t < seen)
			__atomic_fetch_add(&p->backwards, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&p->last, trail__rdtsc(), __ATOMIC_RELAXED);
		if (me == 0)
			p->rounds++;
		__atomic_store_n(&p->turn, !me, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* 1: in step, 0: not, -1: could not tell (a starved CPU handed over too
 * few times) */
static int tsc_synced_once(void)
{
	cpu_set_t set;
	int first = -1, ok = 1;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (int c = 0; c < CPU_SETSIZE && ok; c++) {
		struct tsc_pair p = {{first, c}, 0, 0, 0, 0, 0};
		void *a0[2] = {&p, (void *)(intptr_t)0}, *a1[2] = {&p, (void *)(intptr_t)1};
		pthread_t t0, t1;

		if (!CPU_ISSET(c, &set))
			continue;
		if (first < 0) {
			first = c;
			continue;
		}
		p.last = trail__rdtsc();
		if (pthread_create(&t0, NULL, tsc_side, a0))
			return 0;
		if (pthread_create(&t1, NULL, tsc_side, a1)) {
			p.stop = 1;
			pthread_join(t0, NULL);
			return 0;
		}
		pthread_join(t0, NULL);
		pthread_join(t1, NULL);
		if (p.backwards)
			ok = 0;
		else if (p.rounds < 1000)
			ok = -1;
	}
	return ok;
}

/* a loaded machine may starve the test: tried again, a few times, before
 * it counts as out of step (and as not settled) */
static int tsc_synced(int *settled)
{
	int r = -1;

	for (int i = 0; i < 5 && r < 0; i++)
		r = tsc_synced_once();
	*settled = r >= 0;
	return r > 0;
}
#endif

uint32_t trail__clock_choose(const char *want, const char **why, int *settled)
{
	*why = "";
	*settled = 0;
	if (want && !strcmp(want, "mono")) {
		*why = "asked for";
		return TRAIL_CLOCK_MONO;
	}
#if defined(__x86_64__)
	if (want && strcmp(want, "auto") && !tsc_invariant()) {
		*why = "this CPU's TSC is not invariant (no constant_tsc/nonstop_tsc)";
		return TRAIL_CLOCK_NONE;
	}
	if (want && strcmp(want, "auto")) {
		*why = "asked for";
		return TRAIL_CLOCK_TSC;
	}
	if (trail__clock_detect() == TRAIL_CLOCK_TSC) {
		*why = "the kernel's clocksource";
		return TRAIL_CLOCK_TSC;
	}
	if (!tsc_invariant()) {
		*why = "the TSC is not invariant";
		*settled = 1;
		return TRAIL_CLOCK_MONO;
	}
	int known;

	if (tsc_synced(&known)) {
		*why = "invariant and in step on every CPU";
		*settled = 1;
		return TRAIL_CLOCK_TSC;
	}
	*settled = known;
	*why = known ? "the TSC is not in step across CPUs"
		     : "the machine too busy to tell whether the TSC is in step across CPUs";
#else
	if (want && strcmp(want, "auto")) {
		*why = "no TSC on this architecture";
		return TRAIL_CLOCK_NONE;
	}
	*settled = 1;
#endif
	return TRAIL_CLOCK_MONO;
}

void trail__clock_sync(uint32_t clock, struct trail_clock_sync *s)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 7; i++) {
		uint64_t a = trail__mono_ns();
		uint64_t t = trail__clock_now(clock);
		uint64_t b = trail__mono_ns();

		if (b - a < best) {
			best = b - a;
			s->ticks = t;
			s->mono_ns = a + (b - a) / 2;
		}
	}
	if (clock != TRAIL_CLOCK_TSC)
		s->mono_ns = s->ticks;
}

static int perf_calibration(uint32_t *mult, uint32_t *shift)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	long pagesz = sysconf(_SC_PAGESIZE);
	int fd, ok = 0;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	pg = mmap(NULL, (size_t)pagesz, PROT_READ, MAP_SHARED, fd, 0);
	if (pg != MAP_FAILED) {
		for (int tries = 0; tries < 100; tries++) {
			uint32_t seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
			uint32_t m = pg->time_mult;
			uint16_t sh = pg->time_shift;
			int cap = pg->cap_user_time;

			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) != seq)
				continue;
			if (cap && m) {
				*mult = m;
				*shift = sh;
				ok = 1;
			}
			break;
		}
		munmap(pg, (size_t)pagesz);
	}
	close(fd);
	return ok;
}

void trail__clock_calibrate(uint32_t clock, uint32_t *mult, uint32_t *shift,
			    unsigned calib_ms)
{
	struct trail_clock_sync a, b;
	struct timespec nap = {0, (long)calib_ms * 1000000L};
	unsigned __int128 m;

	*mult = 1;
	*shift = 0;
	if (clock != TRAIL_CLOCK_TSC)
		return;
	if (perf_calibration(mult, shift))
		return;
	trail__clock_sync(clock, &a);
	nanosleep(&nap, NULL);
	trail__clock_sync(clock, &b);
	if (b.ticks <= a.ticks)
		return;
	m = ((unsigned __int128)(b.mono_ns - a.mono_ns) << 24) /
	    (b.ticks - a.ticks);
	*mult = (uint32_t)m;
	*shift = 24;
}
