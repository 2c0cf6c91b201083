/* SPDX-License-Identifier: MIT */
/*
 * kattr.h - the kernel's events behind a timerlat sample (kattr.c):
 * rtla's auto-analysis for trail timerlat -a, where tracefs is writable.
 */
#ifndef TRAIL_TOOL_KATTR_H
#define TRAIL_TOOL_KATTR_H

#include <stdint.h>
#include <stdio.h>

struct kattr {
	char dir[512];   /* the tracefs instance of trail's own */
	int made, ok;
	char why[240];   /* why the kernel's events are not read */
};

/* Record the kernel's interrupt, softirq, NMI and scheduling events of
 * these CPUs on the monotonic clock: 0, or -1 with why. */
int kattr_start(struct kattr *k, const int *cpus, int ncpus);
/* ... in an instance of its own named trail-NAME-PID (two may run at
 * once: -a's, kept for the analysis, and the live one, consumed) */
int kattr_start_named(struct kattr *k, const char *name, const int *cpus, int ncpus);

/*
 * Live: a measuring thread reads its CPU's events as they come (the
 * instance's per_cpu/cpuN/trace_pipe, consumed, non-blocking), each a
 * kevent to fn. The kernel prints microseconds: ts is a multiple of
 * 1000 ns.
 */
enum kev_kind { KEV_IRQ, KEV_SOFTIRQ, KEV_NMI, KEV_SWITCH, KEV_OTHER };

struct kevent {
	uint64_t ts;          /* CLOCK_MONOTONIC ns (to the microsecond) */
	enum kev_kind kind;   /* an interrupt's entry, a softirq's, an NMI, a switch */
	int timer;            /* KEV_IRQ: the local timer's (local_timer_entry) */
	long prev_pid;        /* KEV_SWITCH: who was switched out */
};

struct kpipe {
	int fd;
	size_t n;             /* bytes of an unfinished line in buf */
	char buf[4096];
};

/* cpu's pipe: 0, or -1 (errno) */
int kattr_pipe_open(const struct kattr *k, int cpu, struct kpipe *p);
/* each event waiting: fn(arg, ev) */
void kattr_pipe_read(struct kpipe *p, void (*fn)(void *arg, const struct kevent *ev), void *arg);
void kattr_pipe_close(struct kpipe *p);
/* Stop recording (the buffer is kept for kattr_analyze). */
void kattr_stop(struct kattr *k);
/* What happened on cpu between due (the timer's expiry) and woke (the
 * thread back in user space), both CLOCK_MONOTONIC ns; tid: the
 * measuring thread. In rtla's layout, on out. */
void kattr_analyze(struct kattr *k, int cpu, uint64_t due, uint64_t woke, long tid, FILE *out);
/* Remove the instance. */
void kattr_free(struct kattr *k);

#endif /* TRAIL_TOOL_KATTR_H */
