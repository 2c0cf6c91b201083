/* SPDX-License-Identifier: MIT */
/*
 * test-htab.c - the histogram table (src/common/htab.c): counts and sums
 * against a reference, copies merged, a full table's drops, duplicate
 * slots merged, a damaged region refused, and exact totals under threads
 * hammering the same keys in the same copy and under a signal handler
 * updating in the middle of the thread's own updates (also run under
 * TSan).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "check.h"
#include "common/htab.h"

static struct trail_htab *make(uint32_t size, uint32_t kwords, uint32_t nvals, uint32_t copies)
{
	size_t n = trail_htab_bytes(size, kwords, nvals, 0, 0, copies);
	void *p = n ? calloc(1, n) : NULL;

	if (p)
		trail_htab_init(p, size, kwords, nvals, 0, 0, copies);
	return p;
}

static int update1(struct trail_htab *t, uint32_t c, uint64_t k0, uint64_t k1, uint64_t v)
{
	uint64_t key[2] = {k0, k1}, vals[1] = {v};

	return trail_htab_update(t, c, key, trail_htab_hash(key, 2), vals) ? 0 : -1;
}

TEST(htab_reference)
{
	struct trail_htab *t = make(1024, 2, 1, 2);
	static uint64_t ref_hits[700], ref_sum[700];
	struct trail_htab_entry *e = calloc(1024, sizeof(*e));
	uint64_t *keys = calloc(1024 * 2, 8), hits, dropped, more;
	size_t n;

	CHECK(t && e && keys);
	srand(7);
	for (int i = 0; i < 100000; i++) {
		uint64_t k = (uint64_t)(rand() % 700), v = (uint64_t)(rand() % 1000);

		CHECK_EQ(update1(t, (uint32_t)i & 1, k, ~k, v), 0); /* both copies */
		ref_hits[k]++;
		ref_sum[k] += v;
	}
	CHECK_EQ(trail_htab_check(t, trail_htab_bytes(1024, 2, 1, 0, 0, 2)), 0);
	n = trail_htab_collect(t, e, keys, 1024, &hits, &dropped, &more);
	CHECK_EQ(n, 700);
	CHECK_EQ(hits, 100000);
	CHECK_EQ(dropped, 0);
	CHECK_EQ(more, 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = e[i].key[0];

		CHECK(k < 700 && e[i].key[1] == ~k);
		CHECK_EQ(e[i].hits, ref_hits[k]);
		CHECK_EQ(e[i].vals[0], ref_sum[k]);
	}
	/* fewer out slots than entries: the rest counted */
	n = trail_htab_collect(t, e, keys, 100, &hits, &dropped, &more);
	CHECK_EQ(n, 100);
	CHECK_EQ(more, 600);
	free(t);
	free(e);
	free(keys);
}

TEST(htab_full_drops)
{
	struct trail_htab *t = make(128, 2, 1, 1);
	struct trail_htab_entry e[256];
	uint64_t keys[256 * 2], hits, dropped, more, fails = 0;

	CHECK(t != NULL);
	for (int round = 0; round < 3; round++)
		for (uint64_t k = 0; k < 300; k++)
			fails += update1(t, 0, k, 0, 1) != 0;
	CHECK_EQ(trail_htab_collect(t, e, keys, 256, &hits, &dropped, &more), 128);
	CHECK_EQ(dropped, fails);
	CHECK_EQ(hits + dropped, 900);
	CHECK_EQ(hits, 128 * 3);
	free(t);
}

TEST(htab_damaged)
{
	struct trail_htab *t = make(128, 1, 1, 1);
	size_t n = trail_htab_bytes(128, 1, 1, 0, 0, 1);

	CHECK_EQ(trail_htab_check(t, n), 0);
	CHECK_EQ(trail_htab_check(t, n - 8), -1);
	t->size = 100; /* not a power of two */
	CHECK_EQ(trail_htab_check(t, n), -1);
	t->size = 128;
	t->kwords = 1000;
	CHECK_EQ(trail_htab_check(t, n), -1);
	t->kwords = 1;
	t->hdr_size = 8;
	CHECK_EQ(trail_htab_check(t, n), -1);
	CHECK_EQ(trail_htab_bytes(100, 1, 1, 0, 0, 1), 0);
	CHECK_EQ(trail_htab_bytes(128, 0, 1, 0, 0, 1), 0);
	free(t);
}

/* threads hammering 64 keys in one copy: every hit counted */
#define THREADS 4
#define PER 200000

static struct trail_htab *shared;

static void *hammer(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < PER; i++)
		update1(shared, 0, (i + id) & 63, 7, 3);
	return NULL;
}

TEST(htab_threads)
{
	pthread_t th[THREADS];
	struct trail_htab_entry e[128];
	uint64_t keys[128 * 2], hits, dropped, more;

	shared = make(256, 2, 1, 1);
	CHECK(shared != NULL);
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, hammer, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(trail_htab_collect(shared, e, keys, 128, &hits, &dropped, &more), 64);
	CHECK_EQ(hits, (uint64_t)THREADS * PER);
	CHECK_EQ(dropped, 0);
	for (int i = 0; i < 64; i++) {
		CHECK_EQ(e[i].hits, (uint64_t)THREADS * PER / 64);
		CHECK_EQ(e[i].vals[0], 3ull * THREADS * PER / 64);
	}
	free(shared);
}

/* a signal handler updating in the middle of the thread's updates: a slot
 * it finds claimed is passed over (a duplicate, merged), nothing is lost */
static volatile sig_atomic_t in_handler_updates;

static void on_alarm(int sig)
{
	(void)sig;
	for (int i = 0; i < 100; i++)
		update1(shared, 0, (uint64_t)i & 15, 9, 1);
	in_handler_updates += 100;
}

TEST(htab_signal_handler)
{
	struct itimerval it = {{0, 200}, {0, 200}};
	struct trail_htab_entry e[64];
	uint64_t keys[64 * 2], hits, dropped, more, mine = 0;

	shared = make(128, 2, 1, 1);
	CHECK(shared != NULL);
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (uint64_t i = 0; i < 3000000 && in_handler_updates < 20000; i++, mine++)
		update1(shared, 0, i & 15, 9, 1);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	CHECK(in_handler_updates > 0);
	CHECK_EQ(trail_htab_collect(shared, e, keys, 64, &hits, &dropped, &more), 16);
	CHECK_EQ(hits, mine + (uint64_t)in_handler_updates);
	CHECK_EQ(dropped, 0);
	free(shared);
}

TEST_MAIN(CHECK_T(htab_reference), CHECK_T(htab_full_drops), CHECK_T(htab_damaged),
	  CHECK_T(htab_threads), CHECK_T(htab_signal_handler))
