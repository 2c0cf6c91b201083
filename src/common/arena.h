/* SPDX-License-Identifier: MIT */
/*
 * arena.h - layout of a recording session's shared memory, and the protocol
 * between its writers (traced threads, in any number of processes) and its
 * one reader (the trail recorder).
 *
 * The recorder creates the arena as a sealed memfd (it can neither shrink nor
 * grow, so no mapping of it ever raises SIGBUS), fills in the header, and
 * hands it to processes, which map it MAP_SHARED. Because the recorder owns
 * it, what a process committed survives that process being killed.
 *
 *   +--------------------+ 0
 *   | arena header       |  geometry (written once), shared counters
 *   +--------------------+ ctab_off
 *   | chunk state words  |  u64 per chunk: FREE / OWNED / COMPLETE / READING
 *   +--------------------+ streams_off
 *   | stream slots       |  one per writer context (thread x nesting level)
 *   +--------------------+ procs_off
 *   | process slots      |  one per process that joined
 *   +--------------------+ evidx_off / evdata_off
 *   | event table        |  id -> offset of a copy of the event's meta blob
 *   +--------------------+ mods_off
 *   | module slots       |  objects with patched functions, per process
 *   | breakpoint sites   |  TRAIL_TRAPS(max_mods) of them, right after
 *   +--------------------+ spec_off
 *   | enable spec        |  the event globs, text, one per line
 *   +--------------------+ chunks_off (page aligned)
 *   | chunk 0 .. n-1     |  chunk header + records
 *   +--------------------+
 *
 * Chunk life cycle (the only cross-party state machine):
 *
 *   FREE --writer CAS--> OWNED --writer publishes--> COMPLETE
 *     ^                    |                            |  \
 *     |                    | (owner dead: recorder      |   overwrite mode:
 *     |                    |  salvages committed part)  |   writer CAS -> OWNED
 *     |                    v                            v   (oldest first)
 *     +---- recorder ---- READING <--recorder CAS-------+
 *                            |
 *                            +--> COMPLETE: overwrite mode, the recorder keeps
 *                                 the chunk of a thread that ended (adopted),
 *                                 or packs several small ones into one
 *
 * A writer owns at most one chunk per (session, nesting level) and fills it
 * with plain stores. After each record it release-stores the chunk header's
 * commit word (events << 32 | bytes), which pairs with the recorder's acquire
 * load: every byte below `bytes` is a complete record. A chunk is published
 * by a CAS of its state word from the owner's exact OWNED value to COMPLETE
 * tagged with a global publication number (fetch-add), so that overwrite mode
 * can reclaim the oldest publication first: each stream then keeps a
 * contiguous newest suffix of its chunks.
 *
 * Overwrite mode, threads that ended: the recorder takes the chunks of
 * their streams (COMPLETE -> READING), puts back each well-filled one
 * marked TRAIL_CHF_ADOPTED with the same publication, and copies the
 * small ones, each with its header, into a pack chunk (TRAIL_CHF_PACK)
 * published with the newest publication among them; then it gives the
 * stream slot back. From then on the recorder accounts for those events
 * itself: a reclaimer credits nothing for an adopted chunk. A reclaimer
 * holds the victim stream's `refs` from before its CAS until its credit
 * is added, so a recorder that saw the CAS and then refs == 0 has every
 * credit in the slot's counter before it reads it.
 *
 * Nothing here is trusted by the recorder: every index and offset read from
 * the arena is checked before use, and records are copied out before they
 * are validated.
 */
#ifndef TRAIL_COMMON_ARENA_H
#define TRAIL_COMMON_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define TRAIL_ARENA_MAGIC 0x414e455241525254ull /* "TRRARENA" */
#define TRAIL_ARENA_VERSION 6u

#define TRAIL_ARENA_OVERWRITE 0x1u /* flags: flight-recorder mode */

#define TRAIL_CLOCK_TSC 1u  /* x86 TSC ticks */
#define TRAIL_CLOCK_MONO 2u /* CLOCK_MONOTONIC nanoseconds */

/* Limits a process applies to a session (per process). */
#define TRAIL_MAX_SESSIONS 8u /* concurrent sessions in one process */
#define TRAIL_MAX_DEPTH 4u    /* nesting levels (signal handlers) */

#define TRAIL_CACHELINE 64

struct trail_arena_hdr {
	/* Geometry: written by the recorder before the arena is shared. */
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size; /* sizeof(struct trail_arena_hdr) */
	uint64_t arena_size;
	uint64_t session_id;
	uint32_t flags;
	uint32_t clock;
	uint32_t chunk_size;
	uint32_t nchunks;
	uint32_t max_streams;
	uint32_t max_procs;
	uint32_t max_events;
	uint32_t evdata_size;
	uint32_t spec_len;
	uint32_t recorder_pid;
	uint32_t max_mods;
	uint32_t block_us; /* blocking mode: a writer finding no free chunk
			    * waits up to this long (~0u: for as long as the
			    * recorder lives) instead of dropping; 0: drops */
	uint64_t ctab_off;
	uint64_t streams_off;
	uint64_t procs_off;
	uint64_t evidx_off;
	uint64_t evdata_off;
	uint64_t spec_off;
	uint64_t chunks_off;
	uint64_t mods_off;
	uint64_t recorder_start; /* its /proc starttime: is it still alive? */

	/* Shared counters, each group on its own cache line. */
	__attribute__((aligned(TRAIL_CACHELINE))) uint64_t publish_seq;
	uint32_t alloc_hint;
	uint32_t stream_hint; /* unused: streams are taken first fit */
	uint32_t nfree; /* FREE chunks (a hint: writers skip scanning at 0) */
	__attribute__((aligned(TRAIL_CACHELINE))) uint32_t nprocs;
	uint32_t nevents;
	uint32_t evdata_used;
	uint32_t stopping; /* set by the recorder when the session ends */
	uint32_t nmods;
	uint64_t nostream_lost; /* events lost with no stream to count them:
				 * stream table full, nesting too deep */
	uint64_t noevent_lost;  /* enables refused: event table full */
	uint64_t graph_unhooked; /* calls not hooked: shadow stack full */
	uint32_t paused; /* a traceoff trigger fired (traceon: 0): writers
			  * drop their records */
	uint32_t snapshots; /* snapshot triggers fired (the recorder writes a
			     * snapshot when it changes) */
	uint32_t trap_hooks; /* functions hooked through a breakpoint (a trap
			      * per call), over the processes */
	uint32_t ntraps; /* trail_trapsite entries taken (may exceed the
			  * table: those are not recorded) */

	/* Histograms kept in the processes (hist triggers): the area's
	 * place (geometry, after the chunks), the copies a table has (one
	 * per CPU, to a limit), and the writers' clock in nanoseconds for
	 * common_timestamp (ns = ns0 + (ticks - ticks0) * mult >> shift;
	 * mult 0: ticks are ns), written before the arena is shared. */
	__attribute__((aligned(TRAIL_CACHELINE))) uint64_t hist_off;
	uint64_t hist_size;
	uint32_t hist_copies;
	uint32_t clk_mult, clk_shift, pad0;
	uint64_t clk_ticks0, clk_ns0;
	/* processes' counters: bytes of the area handed out (bump), tables
	 * that found no room */
	uint64_t hist_used;
	uint32_t hist_nomem;
} __attribute__((aligned(TRAIL_CACHELINE)));

/*
 * The histogram area: a directory of tables, then the tables (htab.h),
 * handed out by bumping hist_used. A process making session s's hist
 * trigger on an event takes the table a directory slot names for the
 * same trigger and event (or name=) when there is one, else claims a
 * free slot (CAS 0 -> MAKING), lays the table out and publishes it
 * (release: READY). Two processes making one at the same moment make
 * two: readers merge the tables of equal slots (equal keys merge, as
 * within a table).
 */
#define TRAIL_HIST_DIR 64u
#define TRAIL_HD_FREE 0u
#define TRAIL_HD_MAKING 1u
#define TRAIL_HD_READY 2u
#define TRAIL_HD_FAILED 3u /* no room: the trigger does nothing */
struct trail_hist_dir {
	uint32_t state;
	uint32_t trig;   /* the spec's @trigger line it is for (0: the first) */
	uint32_t paused; /* :pause (updates skipped) */
	uint32_t pad;
	uint64_t off, bytes; /* the table, from the area's start */
	char event[128];     /* SYS:EVENT (of the process that made it) */
	char name[64];       /* name=: shared by every trigger of that name */
	/* its entries' variables (hist.h), by name: another trigger's
	 * expressions find them here (by name, and kwords) */
	uint32_t nvars, kwords;
	char vars[16][32];
};
#define TRAIL_HIST_AREA_MAX (1ull << 30)

/* Chunk state word. */
#define TRAIL_CS_FREE 0u
#define TRAIL_CS_OWNED 1u
#define TRAIL_CS_COMPLETE 2u
#define TRAIL_CS_READING 3u
#define TRAIL_CS_STATE(w) ((uint32_t)((w)&0xffu))
/* OWNED: stream slot in bits 8..31, the owner's chunk sequence (low 32
 * bits) above: unique enough that a stale owner's CAS cannot succeed. */
#define TRAIL_CS_OWNED_WORD(stream, seq)                                     \
	(TRAIL_CS_OWNED | ((uint64_t)((stream)&0xffffffu) << 8) |            \
	 ((uint64_t)(uint32_t)(seq) << 32))
#define TRAIL_CS_OWNER(w) ((uint32_t)(((w) >> 8) & 0xffffffu))
/* COMPLETE: publication number above the state byte. */
#define TRAIL_CS_COMPLETE_WORD(pub) (TRAIL_CS_COMPLETE | ((uint64_t)(pub) << 8))
#define TRAIL_CS_PUB(w) ((w) >> 8)

/* First bytes of every chunk. */
struct trail_chunk_hdr {
	uint64_t commit;      /* events << 32 | record bytes after this header */
	uint32_t stream;      /* stream slot */
	uint32_t stream_gen;  /* that slot's generation */
	uint64_t seq;         /* chunk number within the stream, from 0 */
	uint64_t base_ts;     /* clock value the first delta counts from */
	uint32_t lost_before; /* events the stream dropped just before this */
	uint32_t pid;
	uint32_t tid;
	uint16_t level; /* nesting level: 0 thread, 1+ signal handlers */
	uint16_t flags; /* TRAIL_CHF_*: 0 from writers, set by the recorder */
	char comm[16];  /* thread name when the chunk was taken */
};
/* chunk header flags (overwrite mode, set by the recorder only) */
#define TRAIL_CHF_ADOPTED 0x1u  /* its stream ended: the recorder counts its
				 * events if it is overwritten, not the slot */
#define TRAIL_CHF_PACK 0x2u     /* records: chunks of streams that ended, each
				 * a chunk header and its committed records,
				 * at 8-byte aligned offsets; stream is
				 * TRAIL_PACK_STREAM, commit sums them */
#define TRAIL_CHF_SALVAGED 0x4u /* (in a pack) taken from a dead writer */
#define TRAIL_PACK_STREAM 0xffffffffu
#define TRAIL_COMMIT_EVENTS(c) ((uint32_t)((c) >> 32))
#define TRAIL_COMMIT_BYTES(c) ((uint32_t)(c))

/*
 * Records: a 32-bit header (time delta << 10 | type), then a payload.
 * Types below TRAIL_REC_FIRST_EVENT are control records; the others are
 * events whose session event id is type - TRAIL_REC_FIRST_EVENT and whose
 * payload layout is given by that event's fields.
 */
#define TRAIL_REC_TYPE_BITS 10u
#define TRAIL_REC_TYPE_MASK ((1u << TRAIL_REC_TYPE_BITS) - 1)
#define TRAIL_REC_DELTA_MAX ((1u << (32 - TRAIL_REC_TYPE_BITS)) - 1)
#define TRAIL_REC_TIME 1u   /* u64 absolute clock value; delta 0 */
#define TRAIL_REC_CPU 2u    /* u32 cpu the following records ran on */
#define TRAIL_REC_LONGID 3u /* u32 event id, then the event's payload */
#define TRAIL_REC_FIRST_EVENT 8u
#define TRAIL_REC_DIRECT_IDS (TRAIL_REC_TYPE_MASK + 1 - TRAIL_REC_FIRST_EVENT)
/* Largest overhead a writer may add around one event's payload:
 * TIME (12) + CPU (8) + LONGID header (8). */
#define TRAIL_REC_MAX_OVERHEAD 28u

/* Stream slot: one writer context (a thread at one nesting level). */
#define TRAIL_SS_FREE 0u
#define TRAIL_SS_LIVE 1u
#define TRAIL_SS_EXITED 2u /* its thread ended; counters are final */
struct trail_stream {
	uint32_t state;
	uint32_t gen;
	uint32_t pid;
	uint32_t tid;
	uint32_t level;
	uint32_t proc; /* process slot */
	uint64_t dropped;     /* events dropped: no free chunk (owner only) */
	uint64_t overwritten; /* events in chunks reclaimed (atomic add) */
	uint64_t chunks;      /* chunks taken, the next chunk's seq */
	char comm[16];
	uint32_t refs; /* overwrite mode: reclaimers between reading a chunk
			* of this stream and crediting it (arena.md) */
	uint32_t pad0;
	uint8_t pad[56];
};

/* Process slot: one process that joined the session. A process claims its
 * slot (pid set, state still FREE) as soon as it has taken the request and
 * mapped the arena, before it waits for anything (another session being
 * attached, its functions being patched): a recorder seeing the pid knows
 * the request arrived. */
#define TRAIL_PS_FREE 0u
#define TRAIL_PS_ACTIVE 1u
#define TRAIL_PS_DETACH_PENDING 2u /* asked to detach, not yet quiescent */
#define TRAIL_PS_DETACHED 3u
#define TRAIL_PS_FAILED 4u
#define TRAIL_PS_EXECED 5u /* the image that joined was replaced by exec: it
			    * will never answer, its chunks are a dead one's */
struct trail_proc {
	uint32_t state;
	uint32_t pid;
	uint32_t ppid;
	int32_t result;  /* events matched by the spec, or -errno */
	uint64_t start_time; /* /proc/PID/stat starttime, against pid reuse */
	uint32_t slot;       /* the process's session slot */
	uint32_t how;        /* TRAIL_JOIN_* */
	char comm[16];
	int32_t signal;      /* its control signal (detach), 0: none */
	uint32_t functions;  /* functions hooked for the session */
	int32_t tid;         /* FAILED with -EBUSY or -ETIMEDOUT: the thread that
			      * did not answer while functions were patched */
	uint32_t refused;    /* events registered after the join left off: the
			      * session's filter or a trigger does not compile
			      * for them, or too many triggers select them */
};
#define TRAIL_JOIN_ENV 1u    /* at start-up, from TRAIL_SESSION */
#define TRAIL_JOIN_ATTACH 2u /* by signal, trail record -P */
#define TRAIL_JOIN_FORK 3u   /* inherited from a parent */

/* Module slot: an object of process pid whose functions are hooked, so the
 * recorder can turn addresses into names (it reads the file's symbols). */
#define TRAIL_MS_READY 1u
#define TRAIL_MS_GONE 2u /* unloaded (dlclose) at `gone` */
struct trail_mod {
	uint32_t state;
	uint32_t pid;
	uint64_t base; /* load bias: file address = run-time address - base */
	uint64_t lo, hi; /* its executable segments, run-time addresses */
	uint64_t dev, ino;
	uint64_t gone; /* writer clock ticks, with TRAIL_MS_GONE */
	char path[456];
};

/* A function entered through a breakpoint (its address, run-time, in
 * process pid), for the recorder to mark its symbol: written before the
 * module holding it is published (release: state 1). The table follows
 * the module slots: TRAIL_TRAPS(max_mods) entries. */
struct trail_trapsite {
	uint32_t state;
	uint32_t pid;
	uint64_t addr;
};
#define TRAIL_TRAPS(max_mods) ((uint64_t)(max_mods) * 4u)

/* Event table entry: evidx[id] is the offset in evdata of this, or 0. */
struct trail_evrec {
	uint32_t size; /* of the meta blob that follows */
	uint32_t hash;
	uint32_t id;
	uint32_t pad;
};

/* Geometry the recorder derives from the requested size. */
struct trail_arena_geom {
	uint64_t size;
	uint32_t chunk_size, nchunks;
	uint32_t max_streams, max_procs, max_events, evdata_size;
	uint32_t spec_len, max_mods;
	uint64_t ctab_off, streams_off, procs_off, evidx_off, evdata_off;
	uint64_t mods_off, spec_off, chunks_off;
	uint64_t hist_off, hist_size; /* trail__arena_geom_hist() */
};

#define TRAIL_CHUNK_MIN 4096u
#define TRAIL_CHUNK_MAX (1u << 24)
#define TRAIL_ARENA_DEFAULT_KB 32768u
#define TRAIL_CHUNK_DEFAULT 65536u

/* Compute a layout holding `buffer_bytes` of chunks. Returns 0 or -EINVAL. */
int trail__arena_geom(struct trail_arena_geom *g, uint64_t buffer_bytes,
		      uint32_t chunk_size, uint32_t spec_len);
/* Room for the histogram area (bytes, 0: none; rounded up to pages)
 * after the chunks: g->size grows. 0, or -EINVAL (over
 * TRAIL_HIST_AREA_MAX, or too small for its directory). */
int trail__arena_geom_hist(struct trail_arena_geom *g, uint64_t bytes);
/* Write the header of a zeroed arena. */
void trail__arena_format(void *base, const struct trail_arena_geom *g,
			 uint64_t session_id, uint32_t flags, uint32_t clock,
			 const char *spec, uint32_t recorder_pid,
			 uint64_t recorder_start);
/* Check a mapped arena's header against its mapping size; fills g.
 * Returns 0 or -EPROTO / -EINVAL with *why set to a static message. */
int trail__arena_check(const void *base, uint64_t map_size,
		       struct trail_arena_geom *g, const char **why);

static inline uint64_t *trail__arena_ctab(void *base,
					  const struct trail_arena_geom *g)
{
	return (uint64_t *)((char *)base + g->ctab_off);
}
static inline struct trail_stream *
trail__arena_streams(void *base, const struct trail_arena_geom *g)
{
	return (struct trail_stream *)((char *)base + g->streams_off);
}
static inline struct trail_proc *
trail__arena_procs(void *base, const struct trail_arena_geom *g)
{
	return (struct trail_proc *)((char *)base + g->procs_off);
}
static inline struct trail_chunk_hdr *
trail__arena_chunk(void *base, const struct trail_arena_geom *g, uint32_t i)
{
	return (struct trail_chunk_hdr *)((char *)base + g->chunks_off +
					  (uint64_t)i * g->chunk_size);
}

#endif /* TRAIL_COMMON_ARENA_H */
