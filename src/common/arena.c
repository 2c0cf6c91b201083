/* SPDX-License-Identifier: MIT */
/*
 * arena.c - geometry of a session arena: computing it (recorder side) and
 * checking a mapped one against its mapping (both sides). See arena.h for
 * the layout and the chunk protocol.
 */
#include "arena.h"

#include <errno.h>
#include <string.h>

_Static_assert(sizeof(struct trail_chunk_hdr) == 64, "chunk header size");
_Static_assert(sizeof(struct trail_stream) == 128, "stream slot size");
_Static_assert(sizeof(struct trail_proc) == 64, "process slot size");
_Static_assert(sizeof(struct trail_evrec) == 16, "event record size");
_Static_assert(sizeof(struct trail_mod) == 512, "module slot size");
_Static_assert(sizeof(struct trail_hist_dir) == 744, "histogram directory slot size");

#define PAGE 4096u

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

int trail__arena_geom(struct trail_arena_geom *g, uint64_t buffer_bytes,
		      uint32_t chunk_size, uint32_t spec_len)
{
	uint64_t off, n;

	if (chunk_size < TRAIL_CHUNK_MIN || chunk_size > TRAIL_CHUNK_MAX ||
	    (chunk_size & (chunk_size - 1)))
		return -EINVAL;
	n = buffer_bytes / chunk_size;
	if (n < 2 || n > (1u << 20))
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->chunk_size = chunk_size;
	g->nchunks = (uint32_t)n;
	/* Stream slots are cheap (untouched pages cost nothing in a memfd);
	 * allow many more streams than chunks so thread churn is absorbed. */
	g->max_streams = g->nchunks * 8 < 1024 ? 1024 : g->nchunks * 8;
	if (g->max_streams > 65536)
		g->max_streams = 65536;
	g->max_procs = 16384;
	/* event descriptions: ~1/8 of the buffer, 64 KiB to 2 MiB */
	g->evdata_size = (uint32_t)(n * chunk_size / 8);
	if (g->evdata_size < (64u << 10))
		g->evdata_size = 64u << 10;
	if (g->evdata_size > (2u << 20))
		g->evdata_size = 2u << 20;
	g->max_events = g->evdata_size / 64;
	g->max_mods = g->evdata_size / 512; /* 128 to 4096 */
	g->spec_len = spec_len;

	off = align_up(sizeof(struct trail_arena_hdr), TRAIL_CACHELINE);
	g->ctab_off = off;
	off = align_up(off + (uint64_t)g->nchunks * 8, TRAIL_CACHELINE);
	g->streams_off = off;
	off += (uint64_t)g->max_streams * sizeof(struct trail_stream);
	g->procs_off = off;
	off += (uint64_t)g->max_procs * sizeof(struct trail_proc);
	g->evidx_off = off;
	off = align_up(off + (uint64_t)g->max_events * 4, TRAIL_CACHELINE);
	g->evdata_off = off;
	off += g->evdata_size;
	g->mods_off = off;
	off += (uint64_t)g->max_mods * sizeof(struct trail_mod);
	off += TRAIL_TRAPS(g->max_mods) * sizeof(struct trail_trapsite);
	g->spec_off = off;
	off = align_up(off + spec_len + 1, PAGE);
	g->chunks_off = off;
	g->size = off + (uint64_t)g->nchunks * chunk_size;
	return 0;
}

int trail__arena_geom_hist(struct trail_arena_geom *g, uint64_t bytes)
{
	g->size = g->chunks_off + (uint64_t)g->nchunks * g->chunk_size;
	g->hist_off = g->hist_size = 0;
	if (!bytes)
		return 0;
	if (bytes > TRAIL_HIST_AREA_MAX || bytes < TRAIL_HIST_DIR * sizeof(struct trail_hist_dir))
		return -EINVAL;
	g->hist_off = align_up(g->size, PAGE);
	g->hist_size = align_up(bytes, PAGE);
	g->size = g->hist_off + g->hist_size;
	return 0;
}

void trail__arena_format(void *base, const struct trail_arena_geom *g,
			 uint64_t session_id, uint32_t flags, uint32_t clock,
			 const char *spec, uint32_t recorder_pid,
			 uint64_t recorder_start)
{
	struct trail_arena_hdr *h = base;

	h->version = TRAIL_ARENA_VERSION;
	h->hdr_size = sizeof(*h);
	h->arena_size = g->size;
	h->session_id = session_id;
	h->flags = flags;
	h->clock = clock;
	h->chunk_size = g->chunk_size;
	h->nchunks = g->nchunks;
	h->max_streams = g->max_streams;
	h->max_procs = g->max_procs;
	h->max_events = g->max_events;
	h->evdata_size = g->evdata_size;
	h->max_mods = g->max_mods;
	h->mods_off = g->mods_off;
	h->spec_len = g->spec_len;
	h->recorder_pid = recorder_pid;
	h->recorder_start = recorder_start;
	h->ctab_off = g->ctab_off;
	h->streams_off = g->streams_off;
	h->procs_off = g->procs_off;
	h->evidx_off = g->evidx_off;
	h->evdata_off = g->evdata_off;
	h->spec_off = g->spec_off;
	h->chunks_off = g->chunks_off;
	h->hist_off = g->hist_off;
	h->hist_size = g->hist_size;
	h->hist_used = TRAIL_HIST_DIR * sizeof(struct trail_hist_dir);
	/* evdata offset 0 means "not ready": keep the first bytes unused */
	h->evdata_used = 16;
	h->nfree = g->nchunks;
	if (g->spec_len)
		memcpy((char *)base + g->spec_off, spec, g->spec_len);
	((char *)base)[g->spec_off + g->spec_len] = '\0';
	/* the magic last: a half-formatted arena is never accepted */
	__atomic_store_n(&h->magic, TRAIL_ARENA_MAGIC, __ATOMIC_RELEASE);
}

int trail__arena_check(const void *base, uint64_t map_size,
		       struct trail_arena_geom *g, const char **why)
{
	const struct trail_arena_hdr *h = base;
	struct trail_arena_geom want;

	*why = "arena smaller than its header";
	if (map_size < sizeof(*h))
		return -EPROTO;
	*why = "bad arena magic";
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != TRAIL_ARENA_MAGIC)
		return -EPROTO;
	*why = "unsupported arena version";
	if (h->version != TRAIL_ARENA_VERSION || h->hdr_size != sizeof(*h))
		return -EPROTO;
	/* Recompute the layout from the few free parameters and demand an
	 * exact match: no offset is taken on trust. */
	*why = "inconsistent arena geometry";
	if (trail__arena_geom(&want, (uint64_t)h->nchunks * h->chunk_size,
			      h->chunk_size, h->spec_len) ||
	    trail__arena_geom_hist(&want, h->hist_size) || want.hist_size != h->hist_size ||
	    want.hist_off != h->hist_off)
		return -EPROTO;
	if (want.max_streams != h->max_streams ||
	    want.max_procs != h->max_procs ||
	    want.max_events != h->max_events ||
	    want.evdata_size != h->evdata_size || want.max_mods != h->max_mods ||
	    want.mods_off != h->mods_off ||
	    want.ctab_off != h->ctab_off || want.streams_off != h->streams_off ||
	    want.procs_off != h->procs_off || want.evidx_off != h->evidx_off ||
	    want.evdata_off != h->evdata_off || want.spec_off != h->spec_off ||
	    want.chunks_off != h->chunks_off || want.size != h->arena_size)
		return -EPROTO;
	*why = "arena larger than its mapping";
	if (want.size > map_size)
		return -EPROTO;
	*why = "bad clock";
	if (h->clock != TRAIL_CLOCK_TSC && h->clock != TRAIL_CLOCK_MONO)
		return -EPROTO;
	*g = want;
	return 0;
}
