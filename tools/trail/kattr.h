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
/* Stop recording (the buffer is kept for kattr_analyze). */
void kattr_stop(struct kattr *k);
/* What happened on cpu between due (the timer's expiry) and woke (the
 * thread back in user space), both CLOCK_MONOTONIC ns; tid: the
 * measuring thread. In rtla's layout, on out. */
void kattr_analyze(struct kattr *k, int cpu, uint64_t due, uint64_t woke, long tid, FILE *out);
/* Remove the instance. */
void kattr_free(struct kattr *k);

#endif /* TRAIL_TOOL_KATTR_H */
