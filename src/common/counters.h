/* SPDX-License-Identifier: MIT */
/*
 * counters.h - the perf counters trail reads per event (`record --context
 * counter:NAME`, the `counters:` trigger): perf's names for the software
 * ones, which every kernel has, and the generic hardware ones, which need
 * a PMU the kernel exposes (a virtual machine often has none).
 */
#ifndef TRAIL_COMMON_COUNTERS_H
#define TRAIL_COMMON_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#define TRAIL_CTR_MAX 8 /* counters one trigger reads */
#define TRAIL_CTR_EVENT "perf_counters" /* their record: synthetic:perf_counters */
/* function_graph's --counters: a call's record, before its exit:
 * synthetic:funcgraph_counters {func, a delta a counter, then each
 * counter's count at the entry (fields NAME_at)} */
#define TRAIL_CTR_CALL_EVENT "funcgraph_counters"

struct trail_counter {
	const char *name;  /* perf's: page-faults, cycles... */
	const char *field; /* its field: page_faults, cycles... */
	uint32_t type;     /* PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE */
	uint64_t config;   /* PERF_COUNT_SW_* / PERF_COUNT_HW_* */
};

/* The counter named name[0..n) (its index in trail_counters), or -1. */
int trail_counter_find(const char *name, size_t n);
/* All of them; *n their number. */
const struct trail_counter *trail_counters(size_t *n);

struct perf_event_attr;
/* The perf event of counter c for a thread: user space only. */
void trail_counter_attr(int c, struct perf_event_attr *a);

struct perf_event_mmap_page;
/* A hardware counter's count read in user space from its event's mmap
 * page pc with pmc (x86's rdpmc) under the page's sequence lock: the
 * kernel's offset plus the counter's pmc_width bits, sign-extended.
 * 0, or -1 when the page does not allow it now (no cap_user_rdpmc, or
 * the event not on a counter: index 0): then read() it. */
int trail_counter_mmap_read(const volatile struct perf_event_mmap_page *pc,
			    uint64_t (*pmc)(uint32_t idx), uint64_t *v);

#endif /* TRAIL_COMMON_COUNTERS_H */
