/* SPDX-License-Identifier: MIT */
/*
 * dlplug.c - a plugin dlhost loads and unloads, built twice with
 * -fpatchable-function-entry=5: once with INNER=inner_a, once with
 * INNER=inner_b (two objects with the same layout, so each is likely
 * loaded where the other was).
 */
__attribute__((noinline)) int INNER(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

int plug_entry(int x)
{
	return INNER(x) + 1;
}
