/* SPDX-License-Identifier: MIT */
/* clock.c - clock source detection and calibration; see clock.h. */
#include "clock.h"

#include <fcntl.h>
#include <linux/perf_event.h>
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
