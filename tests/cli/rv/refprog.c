/* SPDX-License-Identifier: MIT */
/*
 * refprog.c - reference counts as trail events, for test-rv.sh's
 * refcount test: object a balanced (two gets, two puts), object b leaked
 * by leak_one() (two gets, one put), object c used after its last put
 * (use_after_put()); built with frame pointers for the gets' stacks.
 */
#include <stdint.h>

#include <trail/trail.h>

TRAIL_EVENT(app, obj_get, TRAIL_ARGS(uint64_t, obj), TRAIL_FIELDS(trail_field_hex(obj)))
TRAIL_EVENT(app, obj_put, TRAIL_ARGS(uint64_t, obj), TRAIL_FIELDS(trail_field_hex(obj)))
TRAIL_EVENT(app, obj_use, TRAIL_ARGS(uint64_t, obj), TRAIL_FIELDS(trail_field_hex(obj)))

static char a, b, c;

__attribute__((noinline)) static void get(void *o)
{
	trail(app, obj_get, (uint64_t)(uintptr_t)o);
}

__attribute__((noinline)) static void put(void *o)
{
	trail(app, obj_put, (uint64_t)(uintptr_t)o);
}

__attribute__((noinline)) void leak_one(void)
{
	get(&b);
	get(&b);
	put(&b);
}

__attribute__((noinline)) void use_after_put(void)
{
	get(&c);
	put(&c);
	trail(app, obj_use, (uint64_t)(uintptr_t)&c);
}

int main(void)
{
	get(&a);
	get(&a);
	put(&a);
	put(&a);
	leak_one();
	use_after_put();
	return 0;
}
