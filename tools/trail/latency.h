/* SPDX-License-Identifier: MIT */
/*
 * latency.h - the kernel's timerlat and osnoise tracers, for what a
 * process sees (latency.c): one measuring thread per selected CPU,
 * pinned, at a real-time priority where allowed.
 *
 *   timerlat: the thread sleeps until an absolute time on the
 *   monotonic clock, a period apart, and takes how late it woke (the
 *   kernel's timerlat "thread" latency: timer interrupt, wake-up,
 *   scheduling, return to user space). The "IRQ" latency, the timer
 *   interrupt's own, is the kernel's to see: read from its
 *   local_timer_entry events where tracefs lets trail (o.live).
 *
 *   osnoise: the thread reads the clock in a loop for RUNTIME of every
 *   PERIOD; a gap between two reads longer than the threshold is noise
 *   (something else ran on the CPU). Per window: runtime, noise, the
 *   largest single gap, and the interference the kernel counts where it
 *   can be seen from user space: the CPU's interrupts (/proc/interrupts,
 *   NMIs apart), softirqs (/proc/softirqs) and the thread's involuntary
 *   context switches; HW counts the gaps none of those explain (a lower
 *   bound: a gap that met an interrupt is not counted as HW). Where
 *   tracefs lets trail read the kernel's events (o.live), each window's
 *   interference is counted from them instead (each interrupt, softirq
 *   and NMI entry in the window, each time the thread was switched out)
 *   and HW is each gap that none of them fell in, as the kernel's
 *   osnoise counts.
 *
 * Every figure in nanoseconds; one writer per CPU (its thread), readers
 * tolerate a figure read mid-update (64-bit loads and stores).
 */
#ifndef TRAIL_TOOL_LATENCY_H
#define TRAIL_TOOL_LATENCY_H

#include <pthread.h>
#include <stdint.h>

struct kattr;

#define LAT_MAX_CPUS 1024
#define LAT_HIST_MAX 100000

enum lat_tracer { LAT_TIMERLAT, LAT_OSNOISE };

struct lat_opts {
	enum lat_tracer tracer;
	uint64_t period_ns;    /* timerlat: the timer's period; osnoise: the window's */
	uint64_t runtime_ns;   /* osnoise: the measuring part of a window */
	uint64_t thresh_ns;    /* osnoise: the smallest gap that is noise */
	uint64_t stop_ns;      /* timerlat -T, osnoise -s: stop past it (0: never) */
	uint64_t stop_irq_ns;  /* timerlat -i: an IRQ latency past it stops (live) */
	uint64_t stop_total_ns; /* osnoise -S: a window's noise past it stops */
	int policy, prio;      /* sched policy (SCHED_OTHER: left alone) */
	uint32_t bucket_ns;    /* hist: a bucket's width */
	uint32_t entries;      /* hist: buckets (the rest counted "over") */
	int ncpus;
	int cpus[LAT_MAX_CPUS];
	/* each sample, for a recording (NULL: none): cpu, the sample's id,
	 * its value and, for osnoise, the window's figures */
	void (*sample)(void *arg, int cpu, uint64_t seq, uint64_t value, const uint64_t *w);
	void *arg;
	/* timerlat: each sample's IRQ latency (the local timer interrupt's,
	 * from live), before its thread sample */
	void (*irq_sample)(void *arg, int cpu, uint64_t seq, uint64_t value);
	/* the kernel's events of the CPUs, read live by each thread (NULL:
	 * none): timerlat's IRQ latency, osnoise's interference counted
	 * from them and HW the gaps none of them explains */
	struct kattr *live;
	/* a stop threshold crossed: called once, in the measuring thread */
	void (*on_stop)(void *arg);
	void *stop_arg;
};

/* osnoise window figures (w[] of sample()) */
enum { OSN_RUNTIME, OSN_NOISE, OSN_MAX_SINGLE, OSN_HW, OSN_NMI, OSN_IRQ, OSN_SOFTIRQ,
       OSN_THREAD, OSN_N };

struct lat_cpu {
	int cpu;
	long tid;
	pthread_t th;
	int started, failed;       /* failed: -errno of pinning, priority */
	char why[160];             /* what failed, said once */
	/* timerlat: thread latency; osnoise: per window, noise (sum) */
	uint64_t count, cur, min, max, sum;
	uint64_t over;             /* hist: past the last bucket */
	uint64_t *hist;            /* entries buckets */
	/* osnoise: totals of the windows (count..sum above: each noise
	 * gap, the histogram's samples) */
	uint64_t runtime, noise, max_noise, max_single, windows;
	uint64_t hw, nmi, irq, softirq, thread;
	/* timerlat with live events: the IRQ latency (count..max) */
	uint64_t irq_count, irq_cur, irq_min, irq_max, irq_sum, irq_over;
	uint64_t *irq_hist;        /* hist: entries buckets */
	int live;                  /* the kernel's events are read */
};

struct lat_run {
	struct lat_opts o;
	struct lat_cpu *c;          /* o.ncpus of them */
	volatile int stop;
	volatile int stopped_cpu;   /* the CPU whose sample crossed a stop
				     * threshold, -1: none */
	uint64_t stopped_value;
	uint64_t stopped_due, stopped_woke; /* timerlat: the sample's times */
	int stopped_irq;            /* timerlat: by its IRQ latency (-i) */
	long stopped_tid;
	uint64_t t0;                /* start, CLOCK_MONOTONIC ns */
	int prio_note;              /* the priority could not be set */
};

/* Start the threads: 0, or -errno (a CPU that does not exist or is not
 * allowed: -EINVAL with why). */
int lat_start(struct lat_run *r, const struct lat_opts *o, char *why, size_t wn);
/* Ask them to stop, and wait. */
void lat_stop(struct lat_run *r);
void lat_free(struct lat_run *r);
/* CLOCK_MONOTONIC, ns */
uint64_t lat_now(void);

#endif /* TRAIL_TOOL_LATENCY_H */
