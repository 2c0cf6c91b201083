/* SPDX-License-Identifier: MIT */
/*
 * layout.h - the trace file (trace.dat) layout, written by writer.c and
 * read by reader.c. doc/file-format.md is the prose version.
 *
 *   file header (64 bytes, own CRC)
 *   section*    each: struct trail_sec (16 bytes) + payload; the header's
 *               CRC-32C covers its own type, magic and length and the
 *               payload, so no byte of a section can change unnoticed
 *
 * Sections are appended as the recording goes: metadata (INFO, CLOCK, EVENT,
 * PROC) before the chunks that need it, chunks as they are drained, final
 * accounting (STREAM, END) last. A reader takes the longest valid prefix, so
 * a file cut short (disk full, recorder killed) still yields every complete
 * chunk before the cut; the END section says the file is complete, and
 * nothing may follow it. A damaged section is skipped: the reader finds the
 * next one by its magic and checksum (version 2 on).
 * All integers are little-endian; no field is ever reordered, new ones are
 * appended and older readers skip unknown section types.
 */
#ifndef TRAIL_TRACEFILE_LAYOUT_H
#define TRAIL_TRACEFILE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define TRAIL_FILE_MAGIC "TRAILDAT"
/* 2: section headers carry a magic and are covered by their CRC.
 * Readers also take major 1 (the CRC covered the payload only). */
#define TRAIL_FILE_MAJOR 2u
#define TRAIL_FILE_MINOR 0u

struct trail_file_hdr {
	char magic[8];
	uint16_t major;
	uint16_t minor;
	uint8_t endian;    /* 1: little */
	uint8_t pad0;
	uint16_t hdr_size; /* 64 */
	uint64_t session_id;
	uint32_t flags;    /* TRAIL_ARENA_OVERWRITE */
	uint32_t clock;    /* TRAIL_CLOCK_TSC / TRAIL_CLOCK_MONO */
	uint32_t chunk_size;
	uint32_t ncpus;
	uint64_t created_ns; /* CLOCK_REALTIME at the start */
	uint32_t pad1[3];
	uint32_t hdr_crc;    /* CRC-32C of the 60 bytes before it */
};
_Static_assert(sizeof(struct trail_file_hdr) == 64, "file header size");

struct trail_sec {
	uint16_t type;  /* enum trail_sec_type, below 256 */
	uint16_t magic; /* TRAIL_SEC_MAGIC (0 in version 1 files) */
	uint32_t crc;   /* CRC-32C of bytes 0..3 and 8..15 of this header, then
			 * of the payload (version 1: of the payload only) */
	uint64_t len;   /* payload bytes */
};
_Static_assert(sizeof(struct trail_sec) == 16, "section header size");

/* Bytes 0xa1 0xd7: rare in text and in small integers, so that a reader
 * looking for the next section after damage meets few false starts. */
#define TRAIL_SEC_MAGIC 0xd7a1u
#define TRAIL_SEC_TYPE_MAX 255u

enum trail_sec_type {
	TRAIL_SEC_INFO = 1,   /* text, "key=value\n" lines */
	TRAIL_SEC_CLOCK = 2,  /* struct trail_sec_clock + syncs */
	TRAIL_SEC_EVENT = 3,  /* struct trail_sec_event + meta blob */
	TRAIL_SEC_PROC = 4,   /* struct trail_sec_proc + exe path text */
	TRAIL_SEC_STREAM = 5, /* struct trail_sec_stream */
	TRAIL_SEC_CHUNK = 6,  /* struct trail_sec_chunk + chunk header + records */
	TRAIL_SEC_END = 7,    /* struct trail_sec_end */
	TRAIL_SEC_MODULE = 8, /* struct trail_sec_module + path */
	TRAIL_SEC_SYMBOLS = 9, /* struct trail_sec_symbols + syms + names */
	TRAIL_SEC_MODGONE = 10, /* struct trail_sec_modgone */
	TRAIL_SEC_HIST = 11,    /* struct trail_sec_hist + texts + entries */
};

#define TRAIL_SEC_MAX_LEN (1ull << 28) /* sanity bound for any section */

/* The CRC a version 2 section header carries: its type, magic and length,
 * then the payload, given in one or two pieces. */
uint32_t trail__sec_crc(const struct trail_sec *s, const void *a, size_t alen,
			const void *b, size_t blen);

struct trail_sec_clock {
	uint32_t clock;
	uint32_t shift;
	uint32_t mult; /* ns = ticks * mult >> shift */
	uint32_t nsync;
	/* nsync x { u64 ticks; u64 mono_ns; } */
};

struct trail_sec_event {
	uint32_t id;
	uint32_t pad;
	/* the event's meta blob (trail/abi.h) */
};

struct trail_sec_proc {
	uint32_t pid;
	uint32_t ppid;
	uint32_t how;   /* TRAIL_JOIN_* */
	uint32_t state; /* TRAIL_PS_* last seen */
	int32_t result; /* events enabled at join, or -errno */
	uint32_t exited;
	char comm[16];
	/* exe path, NUL-terminated */
};

struct trail_sec_stream {
	uint32_t idx;
	uint32_t gen;
	uint32_t pid;
	uint32_t tid;
	uint32_t level;
	uint32_t final; /* 1: counters are final */
	uint64_t dropped;
	uint64_t overwritten;
	uint64_t chunks;
	char comm[16];
};

/* An object of process pid with hooked functions: run-time address =
 * file address + base. Its names are in the SYMBOLS section `symbols`. */
#define TRAIL_NO_SYMBOLS 0xffffffffu
struct trail_sec_module {
	uint32_t pid;
	uint32_t symbols;
	uint64_t base;
	uint64_t lo, hi; /* its executable segments, run-time addresses */
	/* path, NUL-terminated */
};

/* The module last announced with these pid, base, lo and hi was unloaded
 * at `gone` (raw clock ticks): later events at its addresses are another
 * object's. */
struct trail_sec_modgone {
	uint32_t pid;
	uint32_t pad;
	uint64_t base, lo, hi;
	uint64_t gone;
};

/* A histogram kept by a hist trigger in the processes, as it stood at
 * the end: its event ("SYS:EVENT"), its name= ("" if none) and its
 * trigger's text (each NUL-terminated), zeros to a multiple of 8 bytes,
 * then its entries, each key[kwords] (hist.h's key words), hits,
 * vals[nvals]. */
struct trail_sec_hist {
	uint32_t kwords, nvals;
	uint32_t entries;
	uint16_t event_len, name_len; /* NUL included */
	uint32_t text_len;
	uint16_t nextra;  /* words per entry after its vals (variables,
			   * actions' state: hist.h) */
	uint16_t naux;    /* the table's own words, after the entries */
	uint64_t hits;    /* over all the entries */
	uint64_t dropped; /* updates that found the table full */
};

/* Function symbols of one object file, sorted by address. */
struct trail_sec_symbols {
	uint32_t id;
	uint32_t nsyms;
	uint64_t names_len;
	/* nsyms x struct trail_sym, then names_len bytes of NUL-terminated
	 * names */
};
struct trail_sym {
	uint64_t addr; /* file address */
	uint64_t size;
	uint32_t name; /* offset in the names */
	uint32_t flags; /* TRAIL_SYM_*; 0 in files written before them */
};
/* the function was entered through a breakpoint (a trap per call) in the
 * process whose module the symbols were written for */
#define TRAIL_SYM_TRAP 1u

#define TRAIL_CHUNK_SALVAGED 0x1u /* taken from a dead or stuck writer */
struct trail_sec_chunk {
	uint32_t flags;
	uint32_t pad;
	/* struct trail_chunk_hdr, then TRAIL_COMMIT_BYTES(commit) bytes */
};

struct trail_sec_end {
	uint64_t chunks;        /* CHUNK sections written */
	uint64_t events;        /* events in them (per chunk headers) */
	uint64_t nostream_lost; /* events lost: stream table full */
	uint64_t noevent_lost;  /* enables refused: event table full */
	uint64_t bad_chunks;    /* chunks refused by the recorder */
	uint32_t complete;      /* 1: recording ended normally */
	uint32_t pad;
	uint64_t procs_refused; /* processes that could not join: table full */
	uint64_t graph_unhooked; /* function_graph calls not hooked: a thread's
				  * shadow stack was full (16384 frames) */
	/* overwrite mode: threads that ended and whose every event was
	 * overwritten (or dropped) before the end; no STREAM section each */
	uint64_t gone_streams;
	uint64_t gone_dropped;
	uint64_t gone_overwritten;
};

#endif /* TRAIL_TRACEFILE_LAYOUT_H */
