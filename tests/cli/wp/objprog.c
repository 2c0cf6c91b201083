/* SPDX-License-Identifier: MIT */
/*
 * objprog.c - objects with a life, for test-wprobe.sh's set_wprobe and
 * clear_wprobe: three objects made one after the other (app:alloc with
 * the object), the k-th's `count` field written 5 + k times, its `a`
 * field as often, then app:release with it, then `count` written once
 * more (no longer watched) before it is freed: 18 watched writes of
 * `count`, with values 1..5, 1..6, 1..7.
 */
#include <stdio.h>
#include <stdlib.h>

#include <trail/trail.h>

struct obj {
	volatile long a;
	volatile long count;
};

TRAIL_EVENT(app, alloc, TRAIL_ARGS(const void *, ptr), TRAIL_FIELDS(trail_field_ptr(ptr)))
TRAIL_EVENT(app, release, TRAIL_ARGS(const void *, ptr), TRAIL_FIELDS(trail_field_ptr(ptr)))

int main(void)
{
	long total = 0;

	for (int k = 0; k < 3; k++) {
		struct obj *o = calloc(1, sizeof(*o));

		if (!o)
			return 1;
		trail(app, alloc, o);
		for (int i = 0; i < 5 + k; i++) {
			o->count = i + 1;
			o->a = i;
		}
		trail(app, release, o);
		total += o->count;
		o->count = 99;
		free(o);
	}
	printf("total=%ld\n", total);
	return 0;
}
