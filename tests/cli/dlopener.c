/* SPDX-License-Identifier: MIT */
/*
 * dlopener.c - loads plugin.so with dlopen, calls it, unloads it, three
 * times over: events of a shared object that comes and goes.
 *
 *   dlopener PLUGIN_PATH
 */
#include <dlfcn.h>
#include <stdio.h>

#include <trail/trail.h>

TRAIL_EVENT(host, round,
	TRAIL_ARGS(int, round, int, loaded),
	TRAIL_FIELDS(trail_field_int(round) trail_field_bool(loaded)))

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		void (*work)(int);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		trail(host, round, round, 1);
		work = (void (*)(int))dlsym(h, "plugin_work");
		if (!work)
			return 1;
		work(round);
		dlclose(h);
		trail(host, round, round, 0);
	}
	return 0;
}
