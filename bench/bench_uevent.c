/* SPDX-License-Identifier: MIT */
/*
 * bench_uevent.c - one event of two integer fields written three ways, in
 * one process: a static tracepoint (TRAIL_EVENT, bench:event), the
 * kernel's user_events ABI (writev(fd, [write_index, a, b]) on
 * user_events_data, as a program written for the kernel does: libtrail
 * answers it), and trail/uevent.h's trail_uevent_write. Each guarded the
 * way its users guard it (the status word, the enable bit, the handle's
 * word); ns per event = (loop with the event - loop without) / N.
 *
 * Under `trail record -e bench:event -e user_events:bench_ue -e
 * bench:bench_api` the enabled costs, alone the disabled ones. Prints one
 * RESULT line: tp_ns ue_abi_ns ue_api_ns.
 */
#include "bench-common.h" /* first: it sets _GNU_SOURCE */

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <trail/trail.h>
#include <trail/uevent.h>

TRAIL_EVENT(bench, event,
	TRAIL_ARGS(int, a, long, b),
	TRAIL_FIELDS(trail_field_int(a) trail_field_int(b)))

/* <linux/user_events.h> */
struct user_reg {
	uint32_t size;
	uint8_t enable_bit, enable_size;
	uint16_t flags;
	uint64_t enable_addr, name_args;
	uint32_t write_index;
} __attribute__((__packed__));
#define DIAG_IOCSREG _IOWR('*', 0, struct user_reg *)

static volatile uint32_t ue_enabled;

int main(int argc, char **argv)
{
	long n = bench_setup(argc, argv), acc = 0;
	double base, tp, abi, api;
	struct user_reg reg = {0};
	struct trail_uevent *ev;
	uint64_t t0;
	int fd;

	fd = open("/sys/kernel/tracing/user_events_data", O_RDWR);
	reg.size = sizeof(reg);
	reg.enable_size = 4;
	reg.enable_addr = (uint64_t)(uintptr_t)&ue_enabled;
	reg.name_args = (uint64_t)(uintptr_t)"bench_ue s32 a; s64 b";
	if (fd < 0 || ioctl(fd, DIAG_IOCSREG, &reg)) {
		perror("bench_uevent: user_events_data (run with libtrail preloaded)");
		return 1;
	}
	ev = trail_uevent_new("bench", "bench_api s32 a; s64 b", NULL);
	if (!ev) {
		perror("bench_uevent: trail_uevent_new");
		return 1;
	}
	base = bench_base(n);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		long x = work(i);

		acc += x;
		trail(bench, event, (int)i, x);
	}
	tp = (double)(now_ns() - t0) / (double)n - base;
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		long x = work(i);

		acc += x;
		if (ue_enabled & 1) {
			int32_t a = (int32_t)i;
			struct iovec v[3] = {{&reg.write_index, 4}, {&a, 4}, {&x, 8}};

			writev(fd, v, 3);
		}
	}
	abi = (double)(now_ns() - t0) / (double)n - base;
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		long x = work(i);

		acc += x;
		if (trail_uevent_enabled(ev)) {
			struct trail_uvalue v[2] = {{.i = i}, {.i = x}};

			trail_uevent_write(ev, v, 2);
		}
	}
	api = (double)(now_ns() - t0) / (double)n - base;
	sink = acc;
	printf("RESULT n=%ld base_ns=%.3f tp_ns=%.3f ue_abi_ns=%.3f ue_api_ns=%.3f\n", n, base, tp, abi,
	       api);
	trail_uevent_free(ev);
	close(fd);
	return 0;
}
