/* SPDX-License-Identifier: MIT */
/*
 * core.c - a session's arena read back from a core dump (recorder.h's
 * trail_recorder_from_core): the recorder's own final drain and salvage,
 * run on a private copy of the arena a crashed process left in its core.
 *
 * The arena is a memfd mapped MAP_SHARED: the kernel dumps it with the
 * anonymous shared mappings (coredump_filter bit 1, in the default 0x33).
 * Its geometry is checked as a joining process checks it
 * (trail__arena_check: every offset recomputed from the few free
 * parameters, never trusted); then every process of the session counts
 * as dead, the committed records of every chunk are salvaged by the
 * rules a killed process's are (drain.c), and the file is written as the
 * recorder writes it at the end. Nothing of the live system is asked: no
 * pid is looked up, no signal sent, the clock's pairing of ticks and
 * CLOCK_MONOTONIC is the one the recorder wrote into the arena.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "shm.h"

int trail_recorder_from_core(const struct trail_recorder_opts *o, int fd, uint64_t off,
			     uint64_t len, struct trail_recorder **out, const char **why)
{
	struct trail_recorder *R;
	const struct trail_arena_hdr *hdr;
	struct trail_arena_geom g;
	uint8_t *map, *base;
	/* (the kernel's cores have their segments page-aligned, gdb's gcore
	 * not: mapped from the page before) */
	uint64_t delta = off & 4095;

	*out = NULL;
	*why = "bad arguments";
	if (!o || o->sz < sizeof(*o))
		return -EINVAL;
	*why = "the arena is not in the core (a segment smaller than its header)";
	if (len < sizeof(struct trail_arena_hdr))
		return -EPROTO;
	/* private: the salvage's bookkeeping writes stay in this copy */
	map = mmap(NULL, len + delta, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)(off - delta));
	if (map == MAP_FAILED) {
		*why = "the core's segment cannot be mapped";
		return -errno;
	}
	base = map + delta;
	if (trail__arena_check(base, len, &g, why)) {
		munmap(map, len + delta);
		return -EPROTO;
	}
	hdr = (const void *)base;
	R = calloc(1, sizeof(*R));
	if (!R) {
		munmap(map, len + delta);
		*why = "out of memory";
		return -ENOMEM;
	}
	R->o = *o;
	R->o.overwrite = !!(hdr->flags & TRAIL_ARENA_OVERWRITE);
	R->o.block_us = hdr->block_us;
	R->memfd = -1;
	R->out.fd = -1;
	R->m.base = base;
	R->m.g = g;
	R->offline_map = map;
	R->offline_len = len + delta;
	R->buffer_bytes = (uint64_t)g.nchunks * g.chunk_size;
	R->clock = hdr->clock;
	R->mult = hdr->clk_mult;
	R->shift = hdr->clk_shift;
	R->offline = 1;
	/* the recorder's pairing of the clocks, written before the arena
	 * was shared; CLOCK_MONOTONIC ticks are nanoseconds */
	R->offline_sync.ticks = hdr->clock == TRAIL_CLOCK_TSC ? hdr->clk_ticks0 : 0;
	R->offline_sync.mono_ns = hdr->clock == TRAIL_CLOCK_TSC ? hdr->clk_ns0 : 0;
	R->spec = strndup((const char *)base + g.spec_off, g.spec_len);
	/* the -e patterns the file's INFO names: the spec's lines that are
	 * not options (@...) */
	if (R->spec && (R->offline_events = calloc(g.spec_len / 2 + 2, sizeof(char *)))) {
		int k = 0;

		for (char *l = strtok(R->spec, "\n"); l; l = strtok(NULL, "\n"))
			if (l[0] != '@')
				R->offline_events[k++] = l;
		R->o.events = R->offline_events;
		R->o.nevents = k;
	}
	R->chunkbuf = malloc(g.chunk_size);
	R->event_done = calloc(g.max_events, 1);
	R->stream_seen = calloc(g.max_streams, 1);
	R->pt = calloc(g.max_procs, sizeof(*R->pt));
	R->slot_lost = calloc(g.max_streams, sizeof(*R->slot_lost));
	R->slot_gen = calloc(g.max_streams, sizeof(*R->slot_gen));
	R->slot_written = calloc(g.max_streams, 1);
	/* (every chunk's pages are the core's: none to populate) */
	R->chunk_mapped = malloc(g.nchunks / 8 + 1);
	if (R->chunk_mapped)
		memset(R->chunk_mapped, 0xff, g.nchunks / 8 + 1);
	R->ahead = g.nchunks;
	if (!R->spec || !R->chunkbuf || !R->event_done || !R->stream_seen || !R->pt ||
	    !R->slot_lost || !R->slot_gen || !R->slot_written || !R->chunk_mapped ||
	    (R->o.overwrite && trail__rec_keep_init(R))) {
		trail_recorder_free(R);
		*why = "out of memory";
		return -ENOMEM;
	}
	*out = R;
	return 0;
}

void trail_recorder_core_exe(struct trail_recorder *R, uint32_t pid, const char *exe)
{
	R->core_pid = pid;
	snprintf(R->core_exe, sizeof(R->core_exe), "%s", exe ? exe : "");
}
