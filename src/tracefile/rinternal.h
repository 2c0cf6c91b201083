/* SPDX-License-Identifier: MIT */
/*
 * rinternal.h - the open reader's state, shared by reader.c (the scan,
 * the clock, the cursors and their merge) and rquery.c (what an open
 * reader answers: its tables, symbols and modules).
 */
#ifndef TRAIL_TRACEFILE_RINTERNAL_H
#define TRAIL_TRACEFILE_RINTERNAL_H

#include "reader.h"

#include "../common/clock.h"

#define MAX_ERRORS 64

struct rchunk {
	uint64_t off;   /* file offset of the chunk header */
	uint32_t bytes; /* record bytes after it */
	uint32_t events;
	uint64_t seq;
	uint32_t stream; /* index in r->streams */
	uint32_t flags;
};

struct rmodule {
	uint32_t pid, symbols;
	uint64_t base, lo, hi;
	uint64_t gone; /* raw ticks it was unloaded at, or UINT64_MAX */
	const char *path; /* in the mapped file */
};

struct rsymbols {
	uint32_t id, n;
	struct trail_sym *syms; /* copied: sections are not 8-byte aligned */
	const char *names;
	uint64_t names_len;
};

struct cursor {
	struct trail_rstream *st;
	uint32_t *chunks; /* indices into r->chunks, by seq */
	uint32_t nchunks, ci;
	const uint8_t *data;
	uint64_t data_off;
	uint32_t pos, bytes, events, seen;
	uint64_t ts;
	uint32_t cpu;
	int started, dead, tail_lost_done;
	uint64_t prev_seq;
	uint64_t lost_marked; /* lost events already shown by LOST records */
	struct trail_record rec; /* the pending record */
	int have;
	int ns_known;  /* rec's ts_ns was computed by a peek */
};

struct trail_reader {
	const uint8_t *map;
	size_t size;
	struct trail_file_hdr hdr;
	int fd;    /* kept open to step over holes (SEEK_DATA) */
	int complete;
	uint64_t nostream_lost, graph_unhooked;
	uint64_t gone_streams, gone_lost; /* END: streams not in the file */
	uint64_t chunk_secs, chunk_events; /* CHUNK sections read, their events */
	uint64_t damaged_events; /* the END's count minus what was read */

	char *errs[MAX_ERRORS];
	size_t nerrs;
	uint64_t more_errs;

	char *info; /* INFO text, NUL-terminated copy */

	struct trail_clock_sync *syncs;
	size_t nsyncs, syncs_cap;
	uint32_t mult, shift;
	uint64_t span_mult; /* ns per tick << 32, for short spans */

	struct trail_revent **events; /* by id */
	uint32_t nevents_cap;

	struct trail_rproc *procs;
	size_t nprocs, procs_cap;

	struct trail_rstream **streams;
	size_t nstreams, streams_cap;
	uint32_t *shash; /* (idx, gen) -> position in streams + 1, 0: none */
	size_t shash_cap; /* a power of two, > 2 x nstreams; 0: to build */

	struct rchunk *chunks;
	size_t nchunks, chunks_cap;

	struct rmodule *mods;
	size_t nmods, mods_cap;
	struct trail_rhist *hists;
	size_t nhists, hists_cap;
	struct rsymbols *symtabs;
	size_t nsymtabs, symtabs_cap;

	struct cursor *cur;
	struct cursor **heap;
	size_t nheap;
	int merged;
};

#endif /* TRAIL_TRACEFILE_RINTERNAL_H */
