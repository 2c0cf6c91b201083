/* SPDX-License-Identifier: MIT */
/*
 * shm.h - the recorder's only way into the session arena: checked
 * accessors in the spirit of LTTng-UST's shmp().
 *
 * The arena is written by traced processes, which may be buggy, hostile
 * or killed mid-store. Every pointer the recorder takes into it comes from
 * here, and every index or length read *from* the arena (a chunk header's
 * stream slot, a commit word's byte count, an event table offset, a
 * table's entry count) is bounded here, once, against the geometry the
 * recorder computed itself (struct rec_shm.g: never read back from the
 * arena header, which any process may scribble on). An accessor returns
 * NULL (or a clamped count, or an error) instead of a pointer outside the
 * region it names.
 *
 * All inline, no copies: the drain calls these for every chunk it looks at.
 * They only bound; the memory orderings stay with the callers (each
 * load/CAS names its partner there).
 */
#ifndef TRAIL_RECORDER_SHM_H
#define TRAIL_RECORDER_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "../common/arena.h"

struct rec_shm {
	uint8_t *base;             /* the recorder's mapping, g.size bytes */
	struct trail_arena_geom g; /* computed by the recorder: trusted */
};

static inline struct trail_arena_hdr *shm_hdr(const struct rec_shm *m)
{
	return (struct trail_arena_hdr *)m->base;
}

/* Chunk i's state word. */
static inline uint64_t *shm_cword(const struct rec_shm *m, uint32_t i)
{
	if (i >= m->g.nchunks)
		return NULL;
	return (uint64_t *)(m->base + m->g.ctab_off) + i;
}

static inline struct trail_stream *shm_stream(const struct rec_shm *m, uint32_t i)
{
	if (i >= m->g.max_streams)
		return NULL;
	return (struct trail_stream *)(m->base + m->g.streams_off) + i;
}

static inline struct trail_proc *shm_proc(const struct rec_shm *m, uint32_t i)
{
	if (i >= m->g.max_procs)
		return NULL;
	return (struct trail_proc *)(m->base + m->g.procs_off) + i;
}

static inline struct trail_mod *shm_mod(const struct rec_shm *m, uint32_t i)
{
	if (i >= m->g.max_mods)
		return NULL;
	return (struct trail_mod *)(m->base + m->g.mods_off) + i;
}

/* The table of functions hooked through a breakpoint, and its size */
static inline struct trail_trapsite *shm_traps(const struct rec_shm *m, uint32_t *n)
{
	uint64_t max = TRAIL_TRAPS(m->g.max_mods);
	uint32_t k = __atomic_load_n(&((const struct trail_arena_hdr *)m->base)->ntraps,
				     __ATOMIC_ACQUIRE);

	*n = k < max ? k : (uint32_t)max;
	return (struct trail_trapsite *)(m->base + m->g.mods_off +
					 (uint64_t)m->g.max_mods * sizeof(struct trail_mod));
}

/* Chunk i's header; its records follow it (shm_chunk_records()). */
static inline struct trail_chunk_hdr *shm_chunk(const struct rec_shm *m, uint32_t i)
{
	if (i >= m->g.nchunks)
		return NULL;
	return (struct trail_chunk_hdr *)(m->base + m->g.chunks_off +
					  (uint64_t)i * m->g.chunk_size);
}

/* The first `bytes` of records of chunk c (from shm_chunk()), or NULL if
 * they do not fit in a chunk. */
static inline const void *shm_chunk_records(const struct rec_shm *m,
					    const struct trail_chunk_hdr *c, uint32_t bytes)
{
	if (bytes > m->g.chunk_size - sizeof(*c))
		return NULL;
	return c + 1;
}

/*
 * The commit word of chunk c, loaded once (acquire: pairs with the
 * writer's release store after each record, so every byte below `bytes`
 * is a whole record). 0 with *commit set, or -1 if the word cannot be
 * true: more bytes than a chunk holds, or more events than 4-byte records
 * would fit.
 */
static inline int shm_chunk_commit(const struct rec_shm *m, struct trail_chunk_hdr *c,
				   uint64_t *commit)
{
	uint64_t w = __atomic_load_n(&c->commit, __ATOMIC_ACQUIRE);
	uint32_t bytes = TRAIL_COMMIT_BYTES(w);

	*commit = w;
	if (bytes > m->g.chunk_size - sizeof(*c) || TRAIL_COMMIT_EVENTS(w) > bytes / 4)
		return -1;
	return 0;
}

/* Entries in use of a table the writers append to (the header's count
 * read with acquire: pairs with the release that published the entry),
 * never more than the table holds. */
static inline uint32_t shm_clamp(uint32_t *count, uint32_t max)
{
	uint32_t n = __atomic_load_n(count, __ATOMIC_ACQUIRE);

	return n > max ? max : n;
}

static inline uint32_t shm_nprocs(const struct rec_shm *m)
{
	return shm_clamp(&shm_hdr(m)->nprocs, m->g.max_procs);
}

/* Processes that found the process table full (the count goes on past it). */
static inline uint64_t shm_procs_refused(const struct rec_shm *m)
{
	uint32_t n = __atomic_load_n(&shm_hdr(m)->nprocs, __ATOMIC_ACQUIRE);

	return n > m->g.max_procs ? n - m->g.max_procs : 0;
}

static inline uint32_t shm_nevents(const struct rec_shm *m)
{
	return shm_clamp(&shm_hdr(m)->nevents, m->g.max_events);
}

static inline uint32_t shm_nmods(const struct rec_shm *m)
{
	return shm_clamp(&shm_hdr(m)->nmods, m->g.max_mods);
}

/*
 * Event id i's entry of the event table: its record copied to *rec and
 * *blob pointing at its meta blob (rec->size bytes, inside the event
 * data). 1: there; 0: not yet (no offset, or one that leaves no room for
 * a record: try again later); -1: broken for good (the record names
 * another id, or its blob runs past the event data).
 */
static inline int shm_event(const struct rec_shm *m, uint32_t i, struct trail_evrec *rec,
			    const uint8_t **blob)
{
	const uint32_t *idx = (const uint32_t *)(m->base + m->g.evidx_off);
	const uint8_t *data = m->base + m->g.evdata_off;
	uint32_t off;

	if (i >= m->g.max_events)
		return -1;
	/* acquire: pairs with the writer's release publishing the entry */
	off = __atomic_load_n(&idx[i], __ATOMIC_ACQUIRE);
	if (!off || off > m->g.evdata_size - sizeof(*rec))
		return 0;
	__builtin_memcpy(rec, data + off, sizeof(*rec));
	if (rec->id != i || rec->size > m->g.evdata_size - off - sizeof(*rec))
		return -1;
	*blob = data + off + sizeof(*rec);
	return 1;
}

#endif /* TRAIL_RECORDER_SHM_H */
