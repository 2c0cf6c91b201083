/* SPDX-License-Identifier: MIT */
/*
 * allfields.c - every field type of TRAIL_EVENT, from several threads and
 * a forked child, for the exporters' tests (test-export-ctf.sh compares
 * what babeltrace2 reads with what `trail report` prints).
 *
 *   allfields             the main thread, 2 threads and a child process
 *                         each record every event twice (extremes, then
 *                         ordinary values)
 *   allfields burst R N   R rounds of N all:ints events, 20 ms apart: with
 *                         a small buffer, losses in the middle of a stream
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(all, ints,
	TRAIL_ARGS(int8_t, i8, int16_t, i16, int32_t, i32, int64_t, i64, uint8_t, u8, uint16_t, u16,
		   uint32_t, u32, uint64_t, u64),
	TRAIL_FIELDS(trail_field_int(i8) trail_field_int(i16) trail_field_int(i32)
		     trail_field_int(i64) trail_field_int(u8) trail_field_int(u16)
		     trail_field_int(u32) trail_field_int(u64)))

/* names TSDL reserves or that start with '_' must survive the export */
TRAIL_EVENT(all, misc,
	TRAIL_ARGS(uint32_t, x, int16_t, sx, bool, b, const void *, p, float, f, double, d),
	TRAIL_FIELDS(trail_field_hex(x) trail_field_hex(sx) trail_field_bool(b)
		     trail_field_ptr(p) trail_field_float(f) trail_field_float(d)
		     trail_field_int(event, x) trail_field_int(_under, sx)))

TRAIL_EVENT(all, strings,
	TRAIL_ARGS(const char *, s, const char *, empty, const char *, none, int, n),
	TRAIL_FIELDS(trail_field_string(s) trail_field_string(empty) trail_field_string(none)
		     trail_field_int(n)))

TRAIL_EVENT(all, arrays,
	TRAIL_ARGS(const int16_t *, a, const uint32_t *, q, size_t, n, const uint8_t *, h),
	TRAIL_FIELDS(trail_field_array(a, a, 3) trail_field_seq(q, q, n)
		     trail_field_array_hex(h, h, 2) trail_field_seq_hex(qx, q, n)))

TRAIL_EVENT(all, empty, TRAIL_ARGS(), TRAIL_FIELDS())

static void extremes(int who)
{
	static const int16_t a[3] = {INT16_MIN, -1, INT16_MAX};
	static const uint32_t q[4] = {0, 1, UINT32_MAX, 7};
	static const uint8_t h[2] = {0xab, 0};

	trail(all, ints, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN, UINT8_MAX, UINT16_MAX,
	      UINT32_MAX, UINT64_MAX);
	trail(all, misc, 0xdeadbeefu, -2, true, (const void *)(uintptr_t)0x7ffdcafe0000ull,
	      -1.5f, 6.02214076e23);
	trail(all, strings, "hello, world", "", NULL, who);
	trail(all, arrays, a, q, 4, h);
	trail(all, empty);
}

static void ordinary(int who)
{
	int16_t a[3] = {(int16_t)who, 2, 3};
	uint32_t q[1] = {(uint32_t)who * 1000};
	uint8_t h[2] = {(uint8_t)who, 0x10};

	trail(all, ints, -1, 2, -3, 4000000000ll * who, 5, 6, 7, 8);
	trail(all, misc, (uint32_t)who, 0x10, false, NULL, 0.25f, -1e-300);
	trail(all, strings, who ? "thread" : "main", "x", NULL, -who);
	trail(all, arrays, a, q, (size_t)(who & 1), h);
}

static void *thread(void *arg)
{
	int who = (int)(intptr_t)arg;

	extremes(who);
	ordinary(who);
	return NULL;
}

static void burst(int rounds, int n)
{
	struct timespec nap = {0, 20000000};

	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++)
			trail(all, ints, (int8_t)i, (int16_t)r, i, r, 0, 0, (uint32_t)i,
			      (uint64_t)r);
		nanosleep(&nap, NULL);
	}
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	pid_t child;

	if (argc > 3 && !strcmp(argv[1], "burst")) {
		burst(atoi(argv[2]), atoi(argv[3]));
		return 0;
	}
	thread(0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	child = fork();
	if (child == 0) {
		thread((void *)(intptr_t)9);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	return 0;
}
