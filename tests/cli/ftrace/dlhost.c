/* SPDX-License-Identifier: MIT */
/*
 * dlhost.c - function tracing across dlopen and dlclose: each round loads
 * one of two plugins (dlplug.c), calls its plug_entry() through
 * host_call(), and unloads it.
 *
 *   dlhost PLUGIN_A PLUGIN_B ROUNDS      rounds alternate A, B, A, ...
 *   dlhost PLUGIN_A PLUGIN_B 0           forever, a round every 20 ms
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) int host_call(int (*fn)(int), int x)
{
	return fn(x);
}

int main(int argc, char **argv)
{
	long rounds;

	if (argc < 4)
		return 2;
	rounds = atol(argv[3]);
	for (long r = 0; !rounds || r < rounds; r++) {
		void *h = dlopen(argv[1 + (r & 1)], RTLD_NOW | RTLD_LOCAL);
		int (*fn)(int);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		fn = (int (*)(int))dlsym(h, "plug_entry");
		if (!fn)
			return 1;
		host_call(fn, (int)r);
		dlclose(h);
		if (!rounds) {
			struct timespec ts = {0, 20000000};

			nanosleep(&ts, NULL);
		}
	}
	return 0;
}
