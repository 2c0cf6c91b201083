/* SPDX-License-Identifier: MIT */
/*
 * test-counters.c - the counters' table and the user-space read of a
 * hardware counter (src/common/counters.c): trail_counter_mmap_read on a
 * perf_event_mmap_page filled here, with a counter read by a function of
 * the test (this machine may have no PMU to run rdpmc on): the kernel's
 * offset plus the counter's pmc_width bits sign-extended, a retry when
 * the page's sequence lock moves, a refusal when rdpmc is not allowed or
 * the event is on no counter.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "check.h"
#include "common/counters.h"

static struct perf_event_mmap_page pg;
static uint64_t pmc_value;
static uint32_t pmc_idx;
static int pmc_calls, bump_lock; /* bump_lock: the first reads see a writer */

static uint64_t fake_pmc(uint32_t idx)
{
	pmc_idx = idx;
	pmc_calls++;
	if (bump_lock) {
		bump_lock--;
		pg.lock += 2; /* the kernel updated the page meanwhile */
	}
	return pmc_value;
}

static void page(uint32_t index, uint16_t width, int64_t offset)
{
	memset(&pg, 0, sizeof(pg));
	pg.cap_user_rdpmc = 1;
	pg.index = index;
	pg.pmc_width = width;
	pg.offset = offset;
	pmc_calls = 0;
	bump_lock = 0;
}

TEST(counters_mmap_read)
{
	uint64_t v = 0;

	/* 48-bit counter, counter 3 (index 4): offset + value */
	page(4, 48, 1000);
	pmc_value = 234;
	CHECK(!trail_counter_mmap_read(&pg, fake_pmc, &v));
	CHECK(v == 1234 && pmc_idx == 3 && pmc_calls == 1);
	/* the counter's top bit set: negative, sign-extended from 48 bits
	 * (the kernel's offset makes up for it) */
	page(1, 48, 1000);
	pmc_value = 0xffffffffff00ull; /* -256 in 48 bits */
	CHECK(!trail_counter_mmap_read(&pg, fake_pmc, &v));
	CHECK(v == 744);
	/* bits above the width are not the counter's */
	page(1, 40, 0);
	pmc_value = 0xab00000000000005ull;
	CHECK(!trail_counter_mmap_read(&pg, fake_pmc, &v));
	CHECK(v == 5);
	/* a full 64-bit counter */
	page(2, 64, 7);
	pmc_value = 1ull << 63;
	CHECK(!trail_counter_mmap_read(&pg, fake_pmc, &v));
	CHECK(v == (1ull << 63) + 7);
	/* the lock moving under the read: read again */
	page(1, 48, 10);
	pmc_value = 5;
	bump_lock = 2;
	CHECK(!trail_counter_mmap_read(&pg, fake_pmc, &v));
	CHECK(v == 15 && pmc_calls == 3);
	/* a page always moving: given up, then read() */
	page(1, 48, 10);
	bump_lock = 1000;
	CHECK(trail_counter_mmap_read(&pg, fake_pmc, &v) == -1);
	/* not allowed, not on a counter, a width no counter has: read() */
	v = 99;
	page(1, 48, 0);
	pg.cap_user_rdpmc = 0;
	CHECK(trail_counter_mmap_read(&pg, fake_pmc, &v) == -1 && v == 99 && !pmc_calls);
	page(0, 48, 0);
	CHECK(trail_counter_mmap_read(&pg, fake_pmc, &v) == -1 && !pmc_calls);
	page(1, 0, 0);
	CHECK(trail_counter_mmap_read(&pg, fake_pmc, &v) == -1);
	page(1, 65, 0);
	CHECK(trail_counter_mmap_read(&pg, fake_pmc, &v) == -1);
}

TEST(counters_table)
{
	const struct trail_counter *all;
	size_t n;
	int c;

	all = trail_counters(&n);
	CHECK(n >= 13);
	c = trail_counter_find("page-faults,x", 11);
	CHECK(c >= 0 && !strcmp(all[c].field, "page_faults"));
	CHECK(trail_counter_find("page-fault", 10) < 0);
	CHECK(trail_counter_find("cycles", 6) >= 0);
	CHECK(all[trail_counter_find("cycles", 6)].type == PERF_TYPE_HARDWARE);
}

TEST_MAIN(CHECK_T(counters_mmap_read), CHECK_T(counters_table))
