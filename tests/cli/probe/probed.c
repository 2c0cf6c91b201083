/* SPDX-License-Identifier: MIT */
/*
 * probed.c - the program the probe tests trace: functions with known
 * arguments (integers, strings, structs with nested and pointer members,
 * bitfields, arrays, enums, unions), bad and unmapped pointers, a global,
 * a function returning values of several types, and a thread mode that
 * keeps calling while probes come and go.
 *
 *   probed [calls]        each function `calls` times (default 1), then exit 7
 *   probed --spin SECONDS threads calling parse_int until the time is up
 *                         (~1 M calls a second)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))

enum color { RED = 1, GREEN = 2, BLUE = 40 };

struct hdr {
	unsigned short kind;
	unsigned int len;
	unsigned int flag : 1, level : 3, code : 12;
};

struct req {
	int id;
	struct hdr hdr;
	const char *path;
	char name[16];
	int vals[4];
	struct req *next;
	enum color color;
	union {
		long l;
		unsigned char b[8];
	} u;
};

struct pair {
	int a;
	int b;
};

long counter = 1234567;
const char *greeting = "hello, probes";

/* flags 1: path is not to be read (the caller knows it is bad) */
NOINLINE int load_config(const char *path, unsigned flags)
{
	__asm__ volatile("" ::: "memory");
	if (flags == 1)
		return 1;
	return path ? (int)strlen(path) + (int)flags : -22;
}

NOINLINE int handle(struct req *r)
{
	__asm__ volatile("" ::: "memory");
	return r ? r->id : -1;
}

NOINLINE int parse_int(int v)
{
	__asm__ volatile("" ::: "memory");
	return v * 2;
}

/* a call with a probed call inside */
NOINLINE int nest(int v)
{
	return parse_int(v) + 1;
}

NOINLINE long many(int a1, int a2, int a3, int a4, int a5, int a6, int a7, long a8)
{
	__asm__ volatile("" ::: "memory");
	return a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8;
}

NOINLINE int by_value(struct pair p, enum color c)
{
	__asm__ volatile("" ::: "memory");
	return p.a + p.b + (int)c;
}

NOINLINE void *make_obj(size_t n)
{
	return malloc(n);
}

NOINLINE void nothing(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *spinner(void *arg)
{
	time_t end = *(time_t *)arg;
	unsigned v = 0, n = 0;

	/* each of 0..1023 in turn, 128 calls then a pause of 0.5 ms: ~1 M
	 * calls a second in all, what the tests need (flat out, 0.4 s of two
	 * probes was 20 M records, 490 MB, for every report to decode) */
	while (time(NULL) < end) {
		v += (unsigned)parse_int((int)(n++ & 1023));
		if (!(n & 127))
			nanosleep(&(struct timespec){.tv_nsec = 500000}, NULL);
	}
	return (void *)(long)v;
}

int main(int argc, char **argv)
{
	struct req inner = {.id = 9, .path = "/inner"};
	struct req r = {
		.id = 42,
		.hdr = {.kind = 3, .len = 4096, .flag = 1, .level = 5, .code = 777},
		.path = "/etc/app.conf",
		.name = "request-one",
		.vals = {10, 20, 30, 40},
		.next = &inner,
		.color = BLUE,
		.u = {.l = 0x0102030405060708L},
	};
	struct req bad = r;
	void *unmapped;
	int calls = 1, sum = 0;

	if (argc > 2 && !strcmp(argv[1], "--spin")) {
		time_t end = time(NULL) + atoi(argv[2]);
		pthread_t t[4];

		printf("spinning %d\n", (int)getpid());
		fflush(stdout);
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, spinner, &end);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (argc > 1)
		calls = atoi(argv[1]);
	/* a page kept inaccessible: a pointer that faults (an unmapped one
	 * could be mapped again by anyone) */
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bad.path = (const char *)unmapped;
	bad.next = (struct req *)16;
	for (int i = 0; i < calls; i++) {
		sum += load_config("/etc/app.conf", 0x2a);
		sum += load_config((const char *)unmapped, 1);
		sum += load_config(NULL, 2);
		sum += handle(&r);
		sum += handle(&bad);
		sum += parse_int(21);
		sum += nest(3);
		sum += (int)many(1, 2, 3, 4, 5, 6, 7, 8);
		sum += by_value((struct pair){5, 6}, GREEN);
		free(make_obj(24));
		nothing();
	}
	printf("sum %d\n", sum);
	return 7;
}
