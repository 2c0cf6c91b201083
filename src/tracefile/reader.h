/* SPDX-License-Identifier: MIT */
/*
 * reader.h - the one trace file reader. report, and every later analysis,
 * go through it; nothing else parses trace bytes.
 *
 * Opening a file scans its sections once (validating framing, checksums and
 * every length) and indexes chunks by stream; trail_reader_next() then
 * yields records of all streams merged in timestamp order, decoding lazily.
 * Damage never stops the reader: a bad section is skipped (reading resumes
 * at the next valid one), data after the END section is refused, a bad
 * record ends its stream there, the END's totals are checked against what
 * was read, and each such place is kept as a message
 * naming its file offset (trail_reader_errors()); everything before the
 * damage is still delivered.
 *
 * Ownership: all pointers returned point into the reader and live until
 * trail_reader_close().
 */
#ifndef TRAIL_READER_H
#define TRAIL_READER_H

#include <stddef.h>
#include <stdint.h>

#include "../common/meta.h"
#include "layout.h"

struct trail_reader;

struct trail_rstream {
	uint32_t idx, gen;
	uint32_t pid, tid, level;
	char comm[16];
	uint64_t in_file;     /* events in its chunks, per their headers */
	uint64_t dropped;     /* from the final accounting (0 if none) */
	uint64_t overwritten;
	int final;            /* the file has its final accounting */
	uint64_t missing_chunks;
	uint32_t order;       /* position in trail_reader_streams() */
};

struct trail_revent {
	uint32_t id;
	uint8_t probe; /* a probe event's layout: trail_probe_event() */
	struct trail_meta meta;
};

struct trail_rproc {
	uint32_t pid, ppid, how, state, exited;
	int32_t result;
	char comm[16];
	const char *exe;
};

enum trail_rec_type {
	TRAIL_RT_EVENT = 1,
	TRAIL_RT_LOST = 2, /* `lost` events were dropped here */
};

struct trail_record {
	int type;
	uint64_t ts_raw;
	uint64_t ts_ns; /* CLOCK_MONOTONIC nanoseconds */
	uint32_t cpu;   /* ~0u: unknown */
	const struct trail_rstream *stream;
	const struct trail_revent *event;
	const uint8_t *payload;
	uint32_t len;
	uint64_t lost;
	uint64_t file_off;
};

/* Returns 0, or -errno with a one-line reason in err (file unreadable, not a
 * trail file, unsupported version). */
int trail_reader_open(const char *path, struct trail_reader **out, char *err,
		      size_t errlen);
void trail_reader_close(struct trail_reader *r);

/* 1: *rec filled; 0: no more records. */
int trail_reader_next(struct trail_reader *r, struct trail_record *rec);

const struct trail_file_hdr *trail_reader_header(const struct trail_reader *r);
/* The histograms hist triggers kept in the processes (HIST sections), as
 * they stood at the end of the recording. The entries are u64 words in
 * the file's mapping, maybe unaligned (memcpy them): entry i is at data +
 * i * 8 * (kwords + 1 + nvals): its key, its hits, its vals. Valid until
 * the reader is closed. */
#define TRAIL_RHIST_MAX_VALS 4
struct trail_rhist {
	const char *event, *name, *text; /* "SYS:EVENT", name= or "", the trigger */
	uint32_t kwords, nvals, entries;
	uint32_t nextra, naux; /* each entry's extra words; the table's (after
				* the entries) */
	uint64_t hits, dropped;
	const uint8_t *data;   /* entries x (key, hits, vals, extra), then aux
				* (unaligned) */
};
size_t trail_reader_hists(const struct trail_reader *r, const struct trail_rhist **out);

size_t trail_reader_streams(const struct trail_reader *r,
			    const struct trail_rstream *const **out);
size_t trail_reader_procs(const struct trail_reader *r,
			  const struct trail_rproc **out);
const struct trail_revent *trail_reader_event(const struct trail_reader *r,
					      uint32_t id);
/* Event ids are below this: with trail_reader_event() (NULL for an unused
 * id), every event the file describes, for exporters declaring them all
 * before the first record (CTF metadata, Perfetto's interned names). */
uint32_t trail_reader_event_ids(const struct trail_reader *r);
/* A value from the INFO section ("command", "mode", ...), or NULL. */
const char *trail_reader_info(const struct trail_reader *r, const char *key);
int trail_reader_complete(const struct trail_reader *r);
uint64_t trail_reader_nostream_lost(const struct trail_reader *r);
/* Overwrite mode: events of threads that ended and had every event
 * overwritten (or dropped) before the end, which the file lists no stream
 * for (END); *streams: how many threads (may be NULL). */
uint64_t trail_reader_gone_lost(const struct trail_reader *r, uint64_t *streams);
/* function_graph calls left unhooked (shadow stack full), from END */
uint64_t trail_reader_graph_unhooked(const struct trail_reader *r);
/* Events the END section counts that could not be read (damage). */
uint64_t trail_reader_damaged_events(const struct trail_reader *r);
/* Damage found so far (grows while records are read). */
size_t trail_reader_errors(const struct trail_reader *r,
			   const char *const **msgs);
uint64_t trail_reader_to_ns(const struct trail_reader *r, uint64_t ticks);
/* A short span (a call's duration) in ticks, in ns: the clock's mean rate
 * over the recording, without trail_reader_to_ns()'s division (exact to
 * the nanosecond for spans below a few seconds). */
uint64_t trail_reader_span_ns(const struct trail_reader *r, uint64_t ticks);
/* CLOCK_REALTIME - CLOCK_MONOTONIC when the recording started (from the
 * header's realtime stamp and the first clock sync): 1 and *offset_ns, or
 * 0 if the file cannot say. For viewers that show the wall clock. */
int trail_reader_wallclock(const struct trail_reader *r, uint64_t *offset_ns);

/* The record trail_reader_next() will give for this stream, without
 * taking it: 1 and *rec filled, or 0 if the stream has no more. */
int trail_reader_peek(const struct trail_reader *r, const struct trail_rstream *st,
		      struct trail_record *rec);

/* The function of process pid holding address ip at time ts_raw (a
 * record's raw timestamp: objects come and go), from the file's MODULE,
 * MODGONE and SYMBOLS sections, with *off the offset into it; NULL if
 * unknown. */
const char *trail_reader_symbol(const struct trail_reader *r, uint32_t pid,
				uint64_t ip, uint64_t ts_raw, uint64_t *off);
/* The same, with *until the first raw time at which the answer may differ
 * (an object it depends on is unloaded then): callers caching names by
 * address keep them while ts_raw < *until. */
const char *trail_reader_symbol_span(const struct trail_reader *r, uint32_t pid, uint64_t ip,
				     uint64_t ts_raw, uint64_t *off, uint64_t *until);

/* trail_reader_symbol() with the symbol's size too (ftrace's
 * "func+0x10/0x40"). */
const char *trail_reader_symbol_size(const struct trail_reader *r, uint32_t pid, uint64_t ip,
				     uint64_t ts_raw, uint64_t *off, uint64_t *size);

/* The TRAIL_SYM_* flags of that function's symbol (layout.h): 0 if none
 * or unknown. */
uint32_t trail_reader_symbol_flags(const struct trail_reader *r, uint32_t pid, uint64_t ip,
				   uint64_t ts_raw);

/* The path of the object of process pid holding address ip at time
 * ts_raw (its MODULE section), or NULL if unknown. */
const char *trail_reader_module(const struct trail_reader *r, uint32_t pid, uint64_t ip,
				uint64_t ts_raw);

/* format.c: "name=value name=value ..." of an event payload into buf, as
 * ftrace prints fields (strings quoted, hex fields in hex). Returns the
 * length written (truncated at n - 1). */
size_t trail_format_fields(const struct trail_revent *ev, const uint8_t *p,
			   uint32_t len, char *buf, size_t n);

/* Is ev a probe event (src/common/fetch.h's payload)? 1: an entry probe
 * (__probe_ip first), 2: a return probe (__probe_func, __probe_ret_ip),
 * 3: an eprobe that may fault (__probe_fault first), 0: none of these. */
static inline int trail_probe_event(const struct trail_revent *ev)
{
	return ev->probe;
}
/* A probe event's fields as ftrace prints them: its own fields left out,
 * an argument that could not be read "(fault)", symbol-typed ones named
 * by sym (which writes at most n bytes, returns the length). */
size_t trail_format_probe_fields(const struct trail_revent *ev, const uint8_t *p, uint32_t len,
				 char *buf, size_t n,
				 size_t (*sym)(void *ctx, uint64_t addr, char *b, size_t n),
				 void *ctx);

/*
 * The typed fields of a payload, one at a time, for outputs that keep the
 * types (CTF, Perfetto, JSON):
 *
 *     uint32_t off = 0;
 *     struct trail_fval v;
 *     for (uint32_t i = 0; i < ev->meta.nfields; i++) {
 *             if (!trail_field_at(ev, i, p, len, &off, &v))
 *                     break; // payload shorter than its description
 *             ... v.f->kind, v.f->name, trail_fval_u64(&v, 0) ...
 *     }
 *
 * Fields must be taken in order (off carries the position).
 */
struct trail_fval {
	const struct trail_field *f;
	const uint8_t *data; /* INT, FLOAT: the value; STRING: its bytes;
			      * ARRAY, SEQ: the first element */
	uint32_t count;      /* STRING: bytes; ARRAY, SEQ: elements; else 1 */
	int null;            /* a NULL string pointer (count 0) */
};

/* 1 and *v filled (*off moved past the field), or 0 if the payload ends
 * before field i does. */
int trail_field_at(const struct trail_revent *ev, uint32_t i, const uint8_t *p, uint32_t len,
		   uint32_t *off, struct trail_fval *v);
/* Element j of an INT, ARRAY or SEQ field (j = 0 for a scalar), zero- or
 * sign-extended (as the field is signed or not: trail_fval_s64 for
 * signed fields). */
uint64_t trail_fval_u64(const struct trail_fval *v, uint32_t j);
int64_t trail_fval_s64(const struct trail_fval *v, uint32_t j);
/* A FLOAT field's value. */
double trail_fval_double(const struct trail_fval *v);

#endif /* TRAIL_READER_H */
