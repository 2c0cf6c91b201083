/* SPDX-License-Identifier: MIT */
/*
 * prog.c - a small call tree for the function tracers, built with
 * -fpatchable-function-entry=5 at -O0 and -O2 (tests/cli/meson.build).
 * Every function is noinline and works on volatile data, so each call in
 * the source is a call in the binary at any optimization level.
 *
 *   prog [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>

#define F __attribute__((noinline, noclone))

static volatile unsigned sink;

F unsigned hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	sink = h;
	return h;
}

F int lookup(const char *key)
{
	return (int)(hash(key) % 7);
}

F int parse_int(const char *s)
{
	int v = atoi(s);

	sink = (unsigned)v;
	return v;
}

F int parse_header(const char *line)
{
	sink = (unsigned)line[0];
	return parse_int(line + 1);
}

F int handle_request(const char *line)
{
	int n = parse_header(line);

	return n + lookup(line);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2, total = 0;

	for (int i = 0; i < rounds; i++)
		total += handle_request(i % 2 ? "x42" : "y7");
	printf("%d\n", total);
	return 0;
}
