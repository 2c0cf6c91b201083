/* SPDX-License-Identifier: MIT */
/*
 * hostile.c - a traced process that attacks the session arena it was
 * given, to check that the recorder trusts nothing in shared memory.
 *
 *   hostile MODE [threads]   MODE: ctab chunks streams events header random truncate
 *
 * (threads: its events come from threads of 100 events each that end,
 * as a flight recorder's keeper sees them: chunks adopted, packed, slots
 * given back, before and after the attack.)
 *
 * It records 2000 events, waits for the recorder to drain them, finds the arena in its own mappings
 * (/memfd:trail-arena), scribbles on the part MODE names with seeded random
 * values, records more events, and exits. `truncate` instead tries to
 * shrink the arena through /proc/RECORDER/fd/FD and prints what happened
 * (the memfd is sealed: it must fail).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <trail/trail.h>

#include "../../src/common/arena.h"

TRAIL_EVENT(hostile, ev,
	TRAIL_ARGS(int, i, const char *, s),
	TRAIL_FIELDS(trail_field_int(i) trail_field_string(s)))

static uint64_t rnd(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static void scribble(void *p, size_t n)
{
	uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)rnd();
}

static uint8_t *find_arena(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint8_t *base = NULL;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (strstr(line, "trail-arena") && sscanf(line, "%lx-%lx", &a, &b) == 2) {
			base = (uint8_t *)a;
			*len = b - a;
			break;
		}
	}
	if (f)
		fclose(f);
	return base;
}

static int threads;

static void *run(void *arg)
{
	int from = (int)(intptr_t)arg;

	for (int i = from; i < from + 100; i++)
		trail(hostile, ev, i, "some text to fill chunks with");
	return NULL;
}

static void events(int from, int n)
{
	for (int i = from; i < from + n; i += threads ? 100 : 1) {
		pthread_t th;

		if (!threads)
			trail(hostile, ev, i, "some text to fill chunks with");
		else if (!pthread_create(&th, NULL, run, (void *)(intptr_t)i))
			pthread_join(th, NULL);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "random";
	struct trail_arena_hdr *h;
	uint8_t *base;
	size_t len = 0;

	threads = argc > 2 && !strcmp(argv[2], "threads");
	events(0, 2000);
	/* let the recorder drain those (and copy the event descriptions):
	 * what it already has must survive what follows */
	usleep(300000);
	base = find_arena(&len);
	if (!base) {
		fprintf(stderr, "hostile: no arena mapped\n");
		return 1;
	}
	h = (struct trail_arena_hdr *)base;
	if (!strcmp(mode, "truncate")) {
		const char *s = getenv("TRAIL_SESSION");
		char path[64];
		int pid, fd, r;

		if (!s || sscanf(s, "%d:%d", &pid, &fd) != 2)
			return 1;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		fd = open(path, O_RDWR);
		r = fd < 0 ? -1 : ftruncate(fd, 4096);
		printf("truncate: %s\n", r == 0 ? "succeeded" : strerror(errno));
		r = fd < 0 ? -1 : ftruncate(fd, (off_t)len * 2);
		printf("grow: %s\n", r == 0 ? "succeeded" : strerror(errno));
		events(2000, 1000);
		return 0;
	}
	if (!strcmp(mode, "ctab")) {
		uint64_t *ctab = (uint64_t *)(base + h->ctab_off);
		for (uint32_t i = 0; i < h->nchunks; i++)
			ctab[i] = rnd() & (rnd() & 1 ? 0xffffff03ull : ~0ull);
	} else if (!strcmp(mode, "chunks")) {
		for (uint32_t i = 0; i < h->nchunks; i++) {
			struct trail_chunk_hdr *c = (struct trail_chunk_hdr *)
				(base + h->chunks_off + (uint64_t)i * h->chunk_size);
			scribble(c, sizeof(*c));
			if (i % 3 == 0) /* a plausible commit word, bad records */
				c->commit = ((uint64_t)100 << 32) | 4096;
			if (i % 3 == 1)
				scribble(c + 1, 4096);
		}
		/* and call every chunk published */
		uint64_t *ctab = (uint64_t *)(base + h->ctab_off);
		for (uint32_t i = 0; i < h->nchunks; i++)
			ctab[i] = TRAIL_CS_COMPLETE_WORD(i);
	} else if (!strcmp(mode, "streams")) {
		scribble(base + h->streams_off, (size_t)h->max_streams * sizeof(struct trail_stream));
	} else if (!strcmp(mode, "events")) {
		scribble(base + h->evidx_off, (size_t)h->max_events * 4);
		scribble(base + h->evdata_off, h->evdata_size);
		h->nevents = (uint32_t)rnd();
	} else if (!strcmp(mode, "header")) {
		h->nprocs = (uint32_t)rnd();
		h->nevents = (uint32_t)rnd();
		h->evdata_used = (uint32_t)rnd();
		h->nfree = (uint32_t)rnd();
		h->publish_seq = rnd();
		h->stream_hint = (uint32_t)rnd();
		h->alloc_hint = (uint32_t)rnd();
		scribble(base + h->procs_off, (size_t)h->max_procs * sizeof(struct trail_proc));
		scribble(&h->magic, 64); /* geometry too: the recorder keeps its own */
	} else {
		scribble(base + 64, len - 64);
	}
	events(20000, 20000);
	return 0;
}
