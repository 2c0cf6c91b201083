/* SPDX-License-Identifier: MIT */
/*
 * tracebuild.h - trace files built byte by byte for the tests of the reader
 * (tests/unit/test-reader-*.c), following doc/file-format.md rather than
 * the C structs of src/tracefile: a 64-byte header with the CRC-32C of its
 * first 60 bytes, sections of a 16-byte header + payload (version 2: the
 * CRC covers the section header too; version 1: the payload only), chunk
 * sections holding the 64-byte chunk header and records (u32 delta << 10 |
 * type, then the payload).
 *
 * It is the reader's independent oracle: it shares no code with the
 * writer (src/tracefile/writer.c) nor the layout header, only the CRC.
 *
 *   struct tw w = {0};
 *   tw_header(&w, CLOCK_MONO, 0);
 *   tw_std_events(&w);
 *   tw_simple_chunk(&w, 0, 0, 1000, 3, 10, 0);
 *   ... w.b, w.len ...
 *   tw_free(&w);
 */
#ifndef TRAIL_TESTS_TRACEBUILD_H
#define TRAIL_TESTS_TRACEBUILD_H

#include <stddef.h>
#include <stdint.h>

/* Little-endian stores and load. */
void put16(uint8_t *p, uint16_t v);
void put32(uint8_t *p, uint32_t v);
void put64(uint8_t *p, uint64_t v);
uint32_t get32(const uint8_t *p);

/* The file being built: a growing byte buffer. */
struct tw {
	uint8_t *b;
	size_t len, cap;
	uint64_t chunks, events; /* CHUNK sections written, their events: END's */
};

void tw_put(struct tw *w, const void *p, size_t n);
void tw_free(struct tw *w);

#define CLOCK_TSC 1u
#define CLOCK_MONO 2u
#define FLAG_OVERWRITE 0x1u

/* The version the tw_* writers produce: 2, or 1 for the tests of files
 * written before section headers were checksummed. */
extern unsigned tw_major;

/* File header, 64 bytes. */
void tw_header(struct tw *w, uint32_t clock, uint32_t flags);

#define SEC_INFO 1u
#define SEC_CLOCK 2u
#define SEC_EVENT 3u
#define SEC_PROC 4u
#define SEC_STREAM 5u
#define SEC_CHUNK 6u
#define SEC_END 7u
#define SEC_MODULE 8u
#define SEC_SYMBOLS 9u
#define SEC_MODGONE 10u

/* A section; returns its file offset. */
size_t tw_sec(struct tw *w, uint32_t type, const void *p, size_t n);
/* The CRC of the section at off again, after a test changed it. */
void fix_crc(struct tw *w, size_t off);
size_t tw_info(struct tw *w, const char *text);

/* An event description blob (include/trail/abi.h) with fields given as
 * {kind, size, flags, count, name}. */
struct fdesc {
	uint8_t kind, size, flags;
	uint16_t count;
	const char *name;
};

size_t mk_meta(uint8_t *out, const char *prov, const char *ev,
	       const struct fdesc *f, int n);
size_t tw_event(struct tw *w, uint32_t id, const char *prov, const char *ev,
		const struct fdesc *f, int n);

/* The events most tests use (tw_std_events):
 *   id 0    t:u32  v (u32)
 *   id 1    t:str  s (string)
 *   id 700  t:far  v (u32), only reachable through LONGID records */
#define EV_U32 0u
#define EV_STR 1u
#define EV_FAR 700u

void tw_std_events(struct tw *w);
size_t tw_proc(struct tw *w, uint32_t pid, const char *comm, const char *exe);

struct stream_desc {
	uint32_t idx, gen, pid, tid, level, final;
	uint64_t dropped, overwritten, chunks;
	const char *comm;
};

size_t tw_stream(struct tw *w, const struct stream_desc *s);

/* END section: u64 chunks, events, nostream_lost, noevent_lost,
 * bad_chunks; u32 complete; u32 0; u64 procs_refused (56 bytes). Older
 * writers wrote less: `len` cuts it. */
size_t tw_end_len(struct tw *w, uint32_t complete, uint64_t nostream_lost, size_t len);
size_t tw_end(struct tw *w, uint32_t complete, uint64_t nostream_lost);

/* CLOCK section: clock, shift, mult, n, then n x {ticks, mono_ns}. */
size_t tw_clock(struct tw *w, uint32_t clock, uint32_t shift, uint32_t mult,
		const uint64_t (*sync)[2], uint32_t n);

/* MODULE, SYMBOLS and MODGONE sections. */
void tw_symbols(struct tw *w, uint32_t id, uint64_t addr, uint64_t size, const char *name);
void tw_module(struct tw *w, uint32_t pid, uint32_t syms, uint64_t base, uint64_t lo,
	       uint64_t hi, const char *path);
void tw_modgone(struct tw *w, uint32_t pid, uint64_t base, uint64_t lo, uint64_t hi,
		uint64_t gone);

/* Records of one chunk. */
#define REC_TIME 1u
#define REC_CPU 2u
#define REC_LONGID 3u
#define REC_EVENT(id) (8u + (id))

struct rb {
	uint8_t b[8192];
	uint32_t len;
	uint32_t events; /* event records added */
};

void rb_raw(struct rb *r, const void *p, uint32_t n);
void rb_hdr(struct rb *r, uint32_t delta, uint32_t type);
void rb_u32(struct rb *r, uint32_t v);
/* event 0 (t:u32) with value v */
void rb_ev(struct rb *r, uint32_t delta, uint32_t v);
void rb_time(struct rb *r, uint64_t t);
void rb_cpu(struct rb *r, uint32_t delta, uint32_t cpu);
void rb_long(struct rb *r, uint32_t delta, uint32_t id, uint32_t v);

struct chunk_desc {
	uint32_t stream, gen;
	uint64_t seq, base_ts;
	uint32_t lost_before, pid, tid;
	const char *comm;
	uint32_t flags;     /* CHUNK section flags */
	int events;         /* header's event count; -1: as recorded */
};

#define CHUNK_REC_OFF (16 + 8 + 64) /* section start -> first record */

/* A CHUNK section; returns its file offset. */
size_t tw_chunk(struct tw *w, const struct chunk_desc *c, const struct rb *r);
/* One chunk of event-0 records at base_ts + i * step, values v0, v0+1... */
size_t tw_simple_chunk(struct tw *w, uint32_t stream, uint64_t seq,
		       uint64_t base_ts, int n, uint32_t step, uint32_t v0);

#endif /* TRAIL_TESTS_TRACEBUILD_H */
