/* SPDX-License-Identifier: MIT */
/*
 * tpleaf.c - tracepoints inside function-traced calls, and calls that
 * return before anything else is written (leaves). A leaf's entry is kept
 * and written with its exit as one record; an event in the middle of a
 * call must find that call's entry written first.
 *
 *   tpleaf N       N rounds of outer(): noted(i) (an event inside), quiet()
 */
#include <stdlib.h>

#include <trail/trail.h>

TRAIL_EVENT(tpl, note,
	TRAIL_ARGS(int, i),
	TRAIL_FIELDS(trail_field_int(i)))

#define F __attribute__((noinline))

volatile int sink;

F void quiet(int i)
{
	sink += i;
}

F void noted(int i)
{
	trail(tpl, note, i);
	sink += i;
}

F void outer(int i)
{
	noted(i);
	quiet(i);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;

	for (int i = 0; i < n; i++)
		outer(i);
	trail(tpl, note, -1); /* after the last leaf returned */
	return 0;
}
