/* SPDX-License-Identifier: MIT */
/*
 * counters.c - the counters' table (counters.h).
 */
#include "counters.h"

#include <linux/perf_event.h>
#include <string.h>

static const struct trail_counter table[] = {
	{"page-faults", "page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
	{"minor-faults", "minor_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", "major_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{"context-switches", "context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", "cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
	{"task-clock", "task_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
	{"cpu-clock", "cpu_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
	{"cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
	{"cache-references", "cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
	{"cache-misses", "cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
	{"branches", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-misses", "branch_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
};

int trail_counter_find(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strlen(table[i].name) == n && !memcmp(table[i].name, name, n))
			return (int)i;
	return -1;
}

void trail_counter_attr(int c, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = table[c].type;
	a->size = sizeof(*a);
	a->config = table[c].config;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

int trail_counter_mmap_read(const volatile struct perf_event_mmap_page *pc,
			    uint64_t (*pmc)(uint32_t idx), uint64_t *v)
{
	uint32_t seq, idx, width;
	uint64_t count;
	int tries = 0;

	do {
		if (++tries > 64) /* the kernel rewriting it all along */
			return -1;
		seq = pc->lock;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		idx = pc->index;
		width = pc->pmc_width;
		if (!pc->cap_user_rdpmc || !idx || !width || width > 64)
			return -1;
		count = (uint64_t)pc->offset;
		if (width == 64) {
			count += pmc(idx - 1);
		} else {
			int64_t x = (int64_t)(pmc(idx - 1) << (64 - width));

			count += (uint64_t)(x >> (64 - width));
		}
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} while (pc->lock != seq);
	*v = count;
	return 0;
}

const struct trail_counter *trail_counters(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}
