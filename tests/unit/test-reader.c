/* SPDX-License-Identifier: MIT */
/*
 * test-reader.c - the trace file reader (src/tracefile/reader.c) on files
 * built byte by byte by a small writer in this file, following
 * doc/file-format.md rather than the C structs: 64-byte header with the
 * CRC-32C of its first 60 bytes, sections of 16-byte header + payload with
 * the CRC-32C of the payload, chunk sections holding the 64-byte chunk
 * header and records (u32 delta << 10 | type, then the payload).
 *
 * Covered: decoding of events, CPU, TIME and LONGID records, timestamps and
 * their merge across streams, LOST records (before a chunk and after a
 * stream's last chunk), chunk ordering and de-duplication, missing chunks,
 * STREAM and END accounting, INFO/PROC/EVENT metadata, every kind of damage
 * (each reported with the file offset where it is, everything before it
 * still delivered), files cut at every byte, and the TSC -> CLOCK_MONOTONIC
 * conversion.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "common/crc32c.h"
#include "tracefile/reader.h"

/* ------------------------------------------------------------------------
 * Little-endian stores.
 */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* ------------------------------------------------------------------------
 * The in-test writer: a growing byte buffer.
 */
struct tw {
	uint8_t *b;
	size_t len, cap;
	uint64_t chunks, events; /* CHUNK sections written, their events: END's */
};

static void tw_put(struct tw *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		w->cap = (w->len + n) * 2 + 256;
		w->b = realloc(w->b, w->cap);
		if (!w->b)
			abort();
	}
	memcpy(w->b + w->len, p, n);
	w->len += n;
}

/* a char[16] name field: truncated, zero-filled */
static void put_comm(uint8_t *p, const char *s)
{
	size_t n = strlen(s);

	memset(p, 0, 16);
	memcpy(p, s, n < 15 ? n : 15);
}

static void tw_free(struct tw *w)
{
	free(w->b);
	memset(w, 0, sizeof(*w));
}

#define CLOCK_TSC 1u
#define CLOCK_MONO 2u
#define FLAG_OVERWRITE 0x1u

/* The version the tw_* writers produce: 2, or 1 for the tests of files
 * written before section headers were checksummed. */
static unsigned tw_major = 2;

/* File header, 64 bytes. */
static void tw_header(struct tw *w, uint32_t clock, uint32_t flags)
{
	uint8_t h[64];

	memset(h, 0, sizeof(h));
	memcpy(h, "TRAILDAT", 8);              /* 0: magic */
	put16(h + 8, (uint16_t)tw_major);      /* 8: major */
	put16(h + 10, 0);                      /* 10: minor */
	h[12] = 1;                             /* 12: little-endian */
	h[13] = 0;                             /* 13: pad */
	put16(h + 14, 64);                     /* 14: header size */
	put64(h + 16, 0x5e55105e55105e55ull);  /* 16: session id */
	put32(h + 24, flags);                  /* 24: flags */
	put32(h + 28, clock);                  /* 28: clock */
	put32(h + 32, 4096);                   /* 32: chunk size */
	put32(h + 36, 4);                      /* 36: CPUs */
	put64(h + 40, 1700000000000000000ull); /* 40: CLOCK_REALTIME at start */
	/* 48..59: zero */
	put32(h + 60, trail__crc32c(0, h, 60)); /* 60: CRC of bytes 0..59 */
	tw_put(w, h, sizeof(h));
}

#define SEC_INFO 1u
#define SEC_CLOCK 2u
#define SEC_EVENT 3u
#define SEC_PROC 4u
#define SEC_STREAM 5u
#define SEC_CHUNK 6u
#define SEC_END 7u

/* A section; returns its file offset. */
static size_t tw_sec(struct tw *w, uint32_t type, const void *p, size_t n)
{
	size_t off = w->len;
	uint8_t h[16];

	put16(h, (uint16_t)type);              /* 0: type */
	put16(h + 2, tw_major >= 2 ? 0xd7a1 : 0); /* 2: magic */
	put64(h + 8, n);                       /* 8: payload length */
	/* 4: CRC of bytes 0..3, 8..15, then the payload (version 1: of the
	 * payload only) */
	put32(h + 4, tw_major >= 2 ? trail__crc32c(trail__crc32c(trail__crc32c(0, h, 4), h + 8, 8), p, n)
				   : trail__crc32c(0, p, n));
	tw_put(w, h, sizeof(h));
	tw_put(w, p, n);
	return off;
}

/* The CRC of the section at off again, after a test changed it. */
static void fix_crc(struct tw *w, size_t off)
{
	uint64_t n;

	memcpy(&n, w->b + off + 8, 8);
	put32(w->b + off + 4,
	      trail__crc32c(trail__crc32c(trail__crc32c(0, w->b + off, 4), w->b + off + 8, 8),
			    w->b + off + 16, (size_t)n));
}

static size_t tw_info(struct tw *w, const char *text)
{
	return tw_sec(w, SEC_INFO, text, strlen(text));
}

/* An event description blob (include/trail/abi.h) with fields given as
 * {kind, size, flags, count, name}. */
struct fdesc {
	uint8_t kind, size, flags;
	uint16_t count;
	const char *name;
};

static size_t mk_meta(uint8_t *out, const char *prov, const char *ev,
		      const struct fdesc *f, int n)
{
	size_t off = 8;

	memcpy(out + off, prov, strlen(prov) + 1);
	off += strlen(prov) + 1;
	memcpy(out + off, ev, strlen(ev) + 1);
	off += strlen(ev) + 1;
	for (int i = 0; i < n; i++) {
		out[off] = f[i].kind;
		out[off + 1] = f[i].size;
		out[off + 2] = f[i].flags;
		out[off + 3] = (uint8_t)strlen(f[i].name);
		put16(out + off + 4, f[i].count);
		off += 6;
		memcpy(out + off, f[i].name, strlen(f[i].name) + 1);
		off += strlen(f[i].name) + 1;
	}
	put32(out, 0x314d5254u);  /* "TRM1" */
	put16(out + 4, (uint16_t)off);
	out[6] = 1;               /* version */
	out[7] = (uint8_t)n;
	return off;
}

static size_t tw_event(struct tw *w, uint32_t id, const char *prov, const char *ev,
		       const struct fdesc *f, int n)
{
	uint8_t p[512];

	put32(p, id); /* id */
	put32(p + 4, 0);
	return tw_sec(w, SEC_EVENT, p, 8 + mk_meta(p + 8, prov, ev, f, n));
}

/* The events most tests use:
 *   id 0    t:u32  v (u32)
 *   id 1    t:str  s (string)
 *   id 700  t:far  v (u32), only reachable through LONGID records */
#define EV_U32 0u
#define EV_STR 1u
#define EV_FAR 700u

static void tw_std_events(struct tw *w)
{
	static const struct fdesc u32f[] = {{1, 4, 0, 0, "v"}};
	static const struct fdesc strf[] = {{3, 1, 0, 0, "s"}};

	tw_event(w, EV_U32, "t", "u32", u32f, 1);
	tw_event(w, EV_STR, "t", "str", strf, 1);
	tw_event(w, EV_FAR, "t", "far", u32f, 1);
}

static size_t tw_proc(struct tw *w, uint32_t pid, const char *comm, const char *exe)
{
	uint8_t p[256];

	memset(p, 0, 40);
	put32(p, pid);       /* pid */
	put32(p + 4, 1);     /* ppid */
	put32(p + 8, 1);     /* how: started by trail */
	put32(p + 12, 1);    /* state */
	put32(p + 16, 3);    /* result: events enabled */
	put32(p + 20, 1);    /* exited */
	put_comm(p + 24, comm);
	memcpy(p + 40, exe, strlen(exe) + 1);
	return tw_sec(w, SEC_PROC, p, 40 + strlen(exe) + 1);
}

struct stream_desc {
	uint32_t idx, gen, pid, tid, level, final;
	uint64_t dropped, overwritten, chunks;
	const char *comm;
};

static size_t tw_stream(struct tw *w, const struct stream_desc *s)
{
	uint8_t p[64];

	memset(p, 0, sizeof(p));
	put32(p, s->idx);             /* idx */
	put32(p + 4, s->gen);         /* gen */
	put32(p + 8, s->pid);         /* pid */
	put32(p + 12, s->tid);        /* tid */
	put32(p + 16, s->level);      /* level */
	put32(p + 20, s->final);      /* final */
	put64(p + 24, s->dropped);    /* dropped */
	put64(p + 32, s->overwritten);/* overwritten */
	put64(p + 40, s->chunks);     /* chunks */
	put_comm(p + 48, s->comm);
	return tw_sec(w, SEC_STREAM, p, sizeof(p));
}

/* END section: u64 chunks, events, nostream_lost, noevent_lost,
 * bad_chunks; u32 complete; u32 0; u64 procs_refused (56 bytes). Older
 * writers wrote less: `len` cuts it. */
static size_t tw_end_len(struct tw *w, uint32_t complete, uint64_t nostream_lost,
			 size_t len)
{
	uint8_t p[56];

	memset(p, 0, sizeof(p));
	put64(p, w->chunks);          /* chunks */
	put64(p + 8, w->events);      /* events */
	put64(p + 16, nostream_lost); /* nostream_lost */
	put64(p + 24, 0);             /* noevent_lost */
	put64(p + 32, 0);             /* bad_chunks */
	put32(p + 40, complete);      /* complete */
	put32(p + 44, 0);             /* pad */
	put64(p + 48, 0);             /* procs_refused */
	return tw_sec(w, SEC_END, p, len);
}

static size_t tw_end(struct tw *w, uint32_t complete, uint64_t nostream_lost)
{
	return tw_end_len(w, complete, nostream_lost, 56);
}

/* CLOCK section: clock, shift, mult, n, then n x {ticks, mono_ns}. */
static size_t tw_clock(struct tw *w, uint32_t clock, uint32_t shift, uint32_t mult,
		       const uint64_t (*sync)[2], uint32_t n)
{
	uint8_t p[16 + 16 * 16];

	put32(p, clock);
	put32(p + 4, shift);
	put32(p + 8, mult);
	put32(p + 12, n);
	for (uint32_t i = 0; i < n; i++) {
		put64(p + 16 + 16 * i, sync[i][0]);
		put64(p + 24 + 16 * i, sync[i][1]);
	}
	return tw_sec(w, SEC_CLOCK, p, 16 + 16 * n);
}

/* ------------------------------------------------------------------------
 * Records of one chunk.
 */
#define REC_TIME 1u
#define REC_CPU 2u
#define REC_LONGID 3u
#define REC_EVENT(id) (8u + (id))

struct rb {
	uint8_t b[8192];
	uint32_t len;
	uint32_t events; /* event records added */
};

static void rb_raw(struct rb *r, const void *p, uint32_t n)
{
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

static void rb_hdr(struct rb *r, uint32_t delta, uint32_t type)
{
	put32(r->b + r->len, delta << 10 | type);
	r->len += 4;
}

static void rb_u32(struct rb *r, uint32_t v)
{
	put32(r->b + r->len, v);
	r->len += 4;
}

/* event 0 (t:u32) with value v */
static void rb_ev(struct rb *r, uint32_t delta, uint32_t v)
{
	rb_hdr(r, delta, REC_EVENT(EV_U32));
	rb_u32(r, v);
	r->events++;
}

static void rb_time(struct rb *r, uint64_t t)
{
	rb_hdr(r, 0, REC_TIME);
	put64(r->b + r->len, t);
	r->len += 8;
}

static void rb_cpu(struct rb *r, uint32_t delta, uint32_t cpu)
{
	rb_hdr(r, delta, REC_CPU);
	rb_u32(r, cpu);
}

static void rb_long(struct rb *r, uint32_t delta, uint32_t id, uint32_t v)
{
	rb_hdr(r, delta, REC_LONGID);
	rb_u32(r, id);
	rb_u32(r, v);
	r->events++;
}

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
static size_t tw_chunk(struct tw *w, const struct chunk_desc *c, const struct rb *r)
{
	static uint8_t p[8 + 64 + sizeof(((struct rb *)0)->b)];
	uint32_t events = c->events < 0 ? r->events : (uint32_t)c->events;

	memset(p, 0, 72);
	put32(p, c->flags);                        /* section: flags */
	put32(p + 4, 0);                           /* section: pad */
	put64(p + 8, (uint64_t)events << 32 | r->len); /* commit */
	put32(p + 16, c->stream);                  /* stream slot */
	put32(p + 20, c->gen);                     /* its generation */
	put64(p + 24, c->seq);                     /* seq */
	put64(p + 32, c->base_ts);                 /* base_ts */
	put32(p + 40, c->lost_before);             /* lost_before */
	put32(p + 44, c->pid);                     /* pid */
	put32(p + 48, c->tid);                     /* tid */
	put16(p + 52, 0);                          /* level */
	put16(p + 54, 0);                          /* cpu0 */
	put_comm(p + 56, c->comm ? c->comm : "");     /* comm */
	memcpy(p + 72, r->b, r->len);
	w->chunks++;
	w->events += events;
	return tw_sec(w, SEC_CHUNK, p, 72 + r->len);
}

/* One chunk of event-0 records at base_ts + i * step, values v0, v0+1... */
static size_t tw_simple_chunk(struct tw *w, uint32_t stream, uint64_t seq,
			      uint64_t base_ts, int n, uint32_t step, uint32_t v0)
{
	struct chunk_desc c = {stream, 1, seq, base_ts, 0, 100 + stream,
			       200 + stream, "thr", 0, -1};
	static struct rb r;

	r.len = r.events = 0;
	for (int i = 0; i < n; i++)
		rb_ev(&r, i ? step : 0, v0 + (uint32_t)i);
	return tw_chunk(w, &c, &r);
}

/* ------------------------------------------------------------------------
 * Opening and reading.
 */
static char path_buf[4096];

/* Write the bytes to a fresh file; returns its path. */
static const char *write_file(const void *p, size_t n)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path_buf, sizeof(path_buf), "%s/trail-test-reader-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(path_buf);
	if (fd < 0) {
		perror("mkstemp");
		abort();
	}
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
	close(fd);
	return path_buf;
}

/* Open the first n bytes of w; the file is gone once it is mapped. */
static struct trail_reader *open_n(const struct tw *w, size_t n, int *rc,
				   char *err, size_t errlen)
{
	struct trail_reader *r = (struct trail_reader *)1;
	const char *path = write_file(w->b, n);

	err[0] = 0;
	*rc = trail_reader_open(path, &r, err, errlen);
	unlink(path);
	if (*rc)
		CHECK(r == NULL);
	return *rc ? NULL : r;
}

static struct trail_reader *open_tw(const struct tw *w)
{
	char err[512];
	int rc;
	struct trail_reader *r = open_n(w, w->len, &rc, err, sizeof(err));

	if (!r) {
		fprintf(stderr, "  open: %d %s\n", rc, err);
		check_failures++;
	}
	return r;
}

struct got {
	int type;
	uint64_t ts_raw, ts_ns;
	uint32_t cpu, id, v, len;
	uint64_t lost, file_off;
	const struct trail_rstream *st;
};

/* Every record; v is the first 4 payload bytes of a u32 event. */
static size_t read_all(struct trail_reader *r, struct got *g, size_t max)
{
	struct trail_record rec;
	size_t n = 0;

	while (trail_reader_next(r, &rec) == 1) {
		if (n < max) {
			memset(&g[n], 0, sizeof(g[n]));
			g[n].type = rec.type;
			g[n].ts_raw = rec.ts_raw;
			g[n].ts_ns = rec.ts_ns;
			g[n].cpu = rec.cpu;
			g[n].lost = rec.lost;
			g[n].file_off = rec.file_off;
			g[n].st = rec.stream;
			g[n].len = rec.len;
			if (rec.type == TRAIL_RT_EVENT) {
				g[n].id = rec.event ? rec.event->id : ~0u;
				if (rec.len >= 4)
					g[n].v = get32(rec.payload);
			}
		}
		n++;
		if (n > 1000000) /* a reader that never ends */
			break;
	}
	return n;
}

static void dump_errors(struct trail_reader *r)
{
	const char *const *msgs;
	size_t n = trail_reader_errors(r, &msgs);

	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "    reader: %s\n", msgs[i]);
}

#define ANY_OFFSET UINT64_MAX

/* Is there a message with "offset OFF:" (unless ANY_OFFSET) and `what`? */
static int has_err(struct trail_reader *r, uint64_t off, const char *what)
{
	const char *const *msgs;
	size_t n = trail_reader_errors(r, &msgs);
	char tag[64];

	snprintf(tag, sizeof(tag), "offset %" PRIu64 ":", off);
	for (size_t i = 0; i < n; i++)
		if ((off == ANY_OFFSET || strstr(msgs[i], tag)) && strstr(msgs[i], what))
			return 1;
	return 0;
}

static size_t nerrors(struct trail_reader *r)
{
	const char *const *msgs;

	return trail_reader_errors(r, &msgs);
}

#define CHECK_ERR(r, off, what)                                               \
	do {                                                                  \
		if (!has_err((r), (off), (what))) {                           \
			fprintf(stderr, "  %s:%d: no error at offset %lld with \"%s\"\n", \
				__FILE__, __LINE__, (long long)(off), (what)); \
			dump_errors(r);                                       \
			check_failures++;                                     \
		}                                                             \
	} while (0)

#define CHECK_NO_ERRORS(r)                                                    \
	do {                                                                  \
		if (nerrors(r)) {                                             \
			fprintf(stderr, "  %s:%d: unexpected errors\n", __FILE__, __LINE__); \
			dump_errors(r);                                       \
			check_failures++;                                     \
		}                                                             \
	} while (0)

/* ------------------------------------------------------------------------
 * Decoding.
 */
TEST(reader_minimal_file)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {3, 1, 0, 1000, 0, 42, 43, "worker", 0, -1};
	const struct trail_rstream *const *streams;
	const struct trail_rproc *procs;
	const struct trail_revent *ev;
	struct trail_reader *r;
	struct got g[8];
	size_t sec, n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_info(&w, "trail_version=0.1.0\ncommand=ls -l\nmode=discard\n");
	tw_std_events(&w);
	tw_proc(&w, 42, "worker", "/usr/bin/app");
	rb_cpu(&rb, 0, 5);
	rb_ev(&rb, 10, 7);
	rb_ev(&rb, 20, 9);
	sec = tw_chunk(&w, &c, &rb);
	tw_end(&w, 1, 0);

	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 8);
	CHECK_EQ(n, 2);
	CHECK_EQ(g[0].type, TRAIL_RT_EVENT);
	CHECK_EQ(g[0].ts_raw, 1010);   /* base 1000, CPU +0, event +10 */
	CHECK_EQ(g[0].ts_ns, 1010);    /* CLOCK_MONO: ticks are ns */
	CHECK_EQ(g[0].cpu, 5);
	CHECK_EQ(g[0].id, EV_U32);
	CHECK_EQ(g[0].v, 7);
	CHECK_EQ(g[0].len, 4);
	CHECK_EQ(g[0].file_off, sec + CHUNK_REC_OFF + 8); /* after the CPU record */
	CHECK_EQ(g[1].ts_raw, 1030);
	CHECK_EQ(g[1].cpu, 5);
	CHECK_EQ(g[1].v, 9);
	CHECK_EQ(g[1].file_off, sec + CHUNK_REC_OFF + 16);
	CHECK(g[0].st != NULL && g[0].st == g[1].st);
	if (g[0].st) {
		CHECK_EQ(g[0].st->idx, 3);
		CHECK_EQ(g[0].st->gen, 1);
		CHECK_EQ(g[0].st->pid, 42);
		CHECK_EQ(g[0].st->tid, 43);
		CHECK_STR(g[0].st->comm, "worker");
	}
	/* the end stays the end */
	{
		struct trail_record rec;

		CHECK_EQ(trail_reader_next(r, &rec), 0);
		CHECK_EQ(trail_reader_next(r, &rec), 0);
	}
	CHECK_NO_ERRORS(r);

	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->in_file, 2);
	CHECK_EQ(streams[0]->final, 0);
	CHECK_EQ(streams[0]->missing_chunks, 0);
	CHECK_EQ(trail_reader_procs(r, &procs), 1);
	CHECK_EQ(procs[0].pid, 42);
	CHECK_EQ(procs[0].ppid, 1);
	CHECK_EQ(procs[0].exited, 1);
	CHECK_EQ(procs[0].result, 3);
	CHECK_STR(procs[0].comm, "worker");
	CHECK_STR(procs[0].exe, "/usr/bin/app");

	CHECK_STR(trail_reader_info(r, "command"), "ls -l");
	CHECK_STR(trail_reader_info(r, "mode"), "discard");
	CHECK_STR(trail_reader_info(r, "trail_version"), "0.1.0");
	CHECK(trail_reader_info(r, "comman") == NULL);
	CHECK(trail_reader_info(r, "commandx") == NULL);
	CHECK(trail_reader_info(r, "hostname") == NULL);

	ev = trail_reader_event(r, EV_U32);
	CHECK(ev != NULL);
	if (ev) {
		CHECK_STR(ev->meta.provider, "t");
		CHECK_STR(ev->meta.name, "u32");
		CHECK_EQ(ev->meta.nfields, 1);
	}
	CHECK(trail_reader_event(r, EV_FAR) != NULL);
	CHECK(trail_reader_event(r, 2) == NULL);
	CHECK(trail_reader_event(r, 1u << 30) == NULL);

	CHECK_EQ(trail_reader_header(r)->clock, CLOCK_MONO);
	CHECK(trail_reader_header(r)->session_id == 0x5e55105e55105e55ull);
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_empty_file_and_no_chunks)
{
	/* a header alone is a valid (empty, incomplete) file */
	struct tw w = {0};
	struct trail_reader *r;
	struct trail_record rec;
	const struct trail_rstream *const *streams;

	tw_header(&w, CLOCK_MONO, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_reader_next(r, &rec), 0);
	CHECK_EQ(trail_reader_streams(r, &streams), 0);
	CHECK_EQ(trail_reader_complete(r), 0);
	CHECK(trail_reader_info(r, "command") == NULL);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	trail_reader_close(NULL);
	tw_free(&w);
}

TEST(reader_two_streams_interleave)
{
	/* stream idx 2 (B) is written first; idx 1 (A) sorts first and wins
	 * timestamp ties */
	struct tw w = {0};
	struct rb a = {.len = 0}, b = {.len = 0};
	struct chunk_desc ca = {1, 1, 0, 100, 0, 10, 11, "a", 0, -1};
	struct chunk_desc cb = {2, 1, 0, 200, 0, 10, 12, "b", 0, -1};
	static const uint32_t want[] = {1001, 2002, 3001, 4002, 5001, 6002, 7001, 7002};
	const struct trail_rstream *const *streams;
	struct trail_reader *r;
	struct got g[16];
	size_t n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	/* v = ts * 10 + stream */
	rb_ev(&b, 0, 2002);
	rb_ev(&b, 200, 4002);
	rb_ev(&b, 200, 6002);
	rb_ev(&b, 100, 7002);
	tw_chunk(&w, &cb, &b);
	rb_ev(&a, 0, 1001);
	rb_ev(&a, 200, 3001);
	rb_ev(&a, 200, 5001);
	rb_ev(&a, 200, 7001);
	tw_chunk(&w, &ca, &a);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 16);
	CHECK_EQ(n, 8);
	for (size_t i = 0; i < n && i < 8; i++) {
		CHECK_EQ(g[i].v, want[i]);
		CHECK_EQ(g[i].ts_raw, want[i] / 10);
		CHECK_EQ(g[i].st ? g[i].st->idx : 0, want[i] % 10);
	}
	CHECK_EQ(trail_reader_streams(r, &streams), 2);
	CHECK_EQ(streams[0]->idx, 1);
	CHECK_EQ(streams[0]->order, 0);
	CHECK_EQ(streams[1]->idx, 2);
	CHECK_EQ(streams[1]->order, 1);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

TEST(reader_merge_many_streams)
{
	/* 7 streams x 4 chunks with random small deltas (many ties): the
	 * merge yields every event once, ordered by (timestamp, stream
	 * order), each stream in its own record order */
	enum { NS = 7, NC = 4, MAXE = NS * NC * 30 };
	static struct { uint64_t ts; uint32_t st, k; } want[MAXE];
	static struct got g[MAXE + 8];
	struct tw w = {0};
	size_t nwant = 0, n;
	struct trail_reader *r;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	for (uint32_t c = 0; c < NC; c++) {
		for (uint32_t s = 0; s < NS; s++) {
			static uint64_t last[NS];
			struct chunk_desc cd = {s, 1, c, 0, 0, 1, 10 + s, "m", 0, -1};
			struct rb rb = {.len = 0};
			int ne = (int)(rnd() % 30);
			uint64_t ts;

			cd.base_ts = last[s] + rnd() % 5;
			ts = cd.base_ts;
			for (int e = 0; e < ne; e++) {
				uint32_t d = (uint32_t)(rnd() % 4);

				ts += d;
				want[nwant].ts = ts;
				want[nwant].st = s;
				want[nwant].k = s << 16 | c << 8 | (uint32_t)e;
				rb_ev(&rb, d, want[nwant].k);
				nwant++;
			}
			last[s] = ts;
			tw_chunk(&w, &cd, &rb);
		}
	}
	/* expected order: stable sort by (ts, stream) keeps record order */
	for (size_t i = 1; i < nwant; i++)
		for (size_t j = i; j > 0 &&
		     (want[j - 1].ts > want[j].ts ||
		      (want[j - 1].ts == want[j].ts && want[j - 1].st > want[j].st));
		     j--) {
			__typeof__(want[0]) t = want[j];

			want[j] = want[j - 1];
			want[j - 1] = t;
		}
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, MAXE + 8);
	CHECK_EQ(n, nwant);
	for (size_t i = 0; i < n && i < nwant; i++)
		if (g[i].v != want[i].k || g[i].ts_raw != want[i].ts) {
			fprintf(stderr, "  record %zu: v %#x ts %" PRIu64 ", want v %#x ts %" PRIu64 "\n",
				i, g[i].v, g[i].ts_raw, want[i].k, want[i].ts);
			check_failures++;
			break;
		}
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_time_and_cpu_records)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 1000, 0, 1, 2, "t", 0, -1};
	struct trail_reader *r;
	struct got g[16];
	size_t n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_ev(&rb, 5, 1);          /* 1005, no CPU record yet */
	rb_cpu(&rb, 0, 3);
	rb_ev(&rb, 1, 2);          /* 1006 on CPU 3 */
	rb_time(&rb, 50000);       /* absolute time */
	rb_ev(&rb, 3, 3);          /* 50003 */
	rb_cpu(&rb, 2, 9);         /* a CPU record's delta counts: 50005 */
	rb_ev(&rb, 0, 4);          /* 50005 on CPU 9 */
	rb_time(&rb, 10);          /* backwards: a stream never goes back */
	rb_ev(&rb, 1, 5);          /* 50006 */
	rb_ev(&rb, (1u << 22) - 1, 6); /* the largest delta */
	tw_chunk(&w, &c, &rb);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 16);
	CHECK_EQ(n, 6);
	CHECK_EQ(g[0].ts_raw, 1005);
	CHECK_EQ(g[0].cpu, ~0u); /* unknown */
	CHECK_EQ(g[1].ts_raw, 1006);
	CHECK_EQ(g[1].cpu, 3);
	CHECK_EQ(g[2].ts_raw, 50003);
	CHECK_EQ(g[2].cpu, 3);
	CHECK_EQ(g[3].ts_raw, 50005);
	CHECK_EQ(g[3].cpu, 9);
	CHECK_EQ(g[4].ts_raw, 50006);
	CHECK_EQ(g[5].ts_raw, 50006 + (1u << 22) - 1);
	for (size_t i = 0; i < n && i < 6; i++)
		CHECK_EQ(g[i].v, i + 1);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_longid_records)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 1000, 0, 1, 2, "t", 0, -1};
	const struct trail_rstream *const *streams;
	struct trail_reader *r;
	struct got g[8];
	size_t sec, n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_long(&rb, 5, EV_FAR, 77);  /* id 700 has no direct type */
	rb_long(&rb, 1, EV_U32, 88);  /* a small id through LONGID works too */
	rb_ev(&rb, 1, 99);
	sec = tw_chunk(&w, &c, &rb);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 8);
	CHECK_EQ(n, 3);
	CHECK_EQ(g[0].id, EV_FAR);
	CHECK_EQ(g[0].v, 77);
	CHECK_EQ(g[0].len, 4);       /* the id is not part of the payload */
	CHECK_EQ(g[0].ts_raw, 1005);
	CHECK_EQ(g[0].file_off, sec + CHUNK_REC_OFF);
	CHECK_EQ(g[1].id, EV_U32);
	CHECK_EQ(g[1].v, 88);
	CHECK_EQ(g[1].file_off, sec + CHUNK_REC_OFF + 12);
	CHECK_EQ(g[2].id, EV_U32);
	CHECK_EQ(g[2].v, 99);
	CHECK_EQ(g[2].ts_raw, 1007);
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->in_file, 3);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_string_events)
{
	struct tw w = {0};
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 1000, 0, 1, 2, "t", 0, -1};
	struct trail_reader *r;
	struct trail_record rec;
	uint8_t s[2 + 5];

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_hdr(&rb, 1, REC_EVENT(EV_STR));
	put16(s, 5);
	memcpy(s + 2, "hello", 5);
	rb_raw(&rb, s, 7);
	rb.events++;
	rb_hdr(&rb, 1, REC_EVENT(EV_STR));
	put16(s, 0xffff); /* NULL */
	rb_raw(&rb, s, 2);
	rb.events++;
	rb_ev(&rb, 1, 5);
	tw_chunk(&w, &c, &rb);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_reader_next(r, &rec), 1);
	CHECK_EQ(rec.len, 7);
	CHECK(rec.payload && !memcmp(rec.payload + 2, "hello", 5));
	CHECK_EQ(trail_reader_next(r, &rec), 1);
	CHECK_EQ(rec.len, 2);
	CHECK_EQ(trail_reader_next(r, &rec), 1);
	CHECK_EQ(rec.len, 4);
	CHECK_EQ(get32(rec.payload), 5);
	CHECK_EQ(rec.ts_raw, 1003);
	CHECK_EQ(trail_reader_next(r, &rec), 0);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

/* ------------------------------------------------------------------------
 * Losses, chunk order, accounting.
 */
TEST(reader_lost_before)
{
	struct tw w = {0};
	struct rb r0 = {.len = 0}, r1 = {.len = 0}, r2 = {.len = 0};
	struct chunk_desc c0 = {0, 1, 0, 1000, 3, 1, 2, "t", 0, -1};
	struct chunk_desc c1 = {0, 1, 1, 2000, 17, 1, 2, "t", 0, -1};
	struct chunk_desc c2 = {0, 1, 2, 3000, 4, 1, 2, "t", 0, -1};
	struct trail_reader *r;
	struct got g[16];
	size_t s0, s1, s2, n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_ev(&r0, 1, 1);
	rb_ev(&r1, 5, 2);
	rb_ev(&r1, 5, 3);
	/* r2: a chunk with no records, only the loss before it */
	s0 = tw_chunk(&w, &c0, &r0);
	s1 = tw_chunk(&w, &c1, &r1);
	s2 = tw_chunk(&w, &c2, &r2);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 16);
	CHECK_EQ(n, 6);
	/* 3 lost before the first chunk, at its base time */
	CHECK_EQ(g[0].type, TRAIL_RT_LOST);
	CHECK_EQ(g[0].lost, 3);
	CHECK_EQ(g[0].ts_raw, 1000);
	CHECK_EQ(g[0].file_off, s0 + 16 + 8); /* the chunk header saying so */
	CHECK_EQ(g[1].type, TRAIL_RT_EVENT);
	CHECK_EQ(g[1].v, 1);
	CHECK_EQ(g[2].type, TRAIL_RT_LOST);
	CHECK_EQ(g[2].lost, 17);
	CHECK_EQ(g[2].ts_raw, 2000);
	CHECK_EQ(g[2].file_off, s1 + 16 + 8);
	CHECK(g[2].st == g[1].st);
	CHECK_EQ(g[3].v, 2);
	CHECK_EQ(g[3].ts_raw, 2005);
	CHECK_EQ(g[4].v, 3);
	CHECK_EQ(g[5].type, TRAIL_RT_LOST);
	CHECK_EQ(g[5].lost, 4);
	CHECK_EQ(g[5].ts_raw, 3000);
	CHECK_EQ(g[5].file_off, s2 + 16 + 8);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_chunks_read_in_seq_order)
{
	struct tw w = {0};
	struct trail_reader *r;
	const struct trail_rstream *const *streams;
	struct got g[8];
	size_t n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	/* drained out of order: seq 2, 0, 1 */
	tw_simple_chunk(&w, 0, 2, 3000, 1, 0, 2);
	tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
	tw_simple_chunk(&w, 0, 1, 2000, 1, 0, 1);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 8);
	CHECK_EQ(n, 3);
	for (size_t i = 0; i < 3 && i < n; i++) {
		CHECK_EQ(g[i].v, i);
		CHECK_EQ(g[i].ts_raw, 1000 * (i + 1));
	}
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->missing_chunks, 0);
	CHECK_EQ(streams[0]->in_file, 3);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

static void check_duplicate(int fuller_first)
{
	/* seq 1 saved twice: salvaged with 1 event, then published with 2;
	 * the fuller copy is read, whatever the file order */
	struct tw w = {0};
	struct rb part = {.len = 0}, full = {.len = 0};
	struct chunk_desc cp = {0, 1, 1, 2000, 0, 1, 2, "t", 0x1 /* salvaged */, -1};
	struct chunk_desc cf = {0, 1, 1, 2000, 0, 1, 2, "t", 0, -1};
	const struct trail_rstream *const *streams;
	struct trail_reader *r;
	struct got g[8];
	size_t n;

	rb_ev(&part, 0, 10);
	rb_ev(&full, 0, 10);
	rb_ev(&full, 1, 11);
	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
	if (fuller_first)
		tw_chunk(&w, &cf, &full);
	tw_chunk(&w, &cp, &part);
	if (!fuller_first)
		tw_chunk(&w, &cf, &full);
	tw_simple_chunk(&w, 0, 2, 3000, 1, 0, 20);
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 8);
	CHECK_EQ(n, 4);
	CHECK_EQ(g[0].v, 0);
	CHECK_EQ(g[1].v, 10);
	CHECK_EQ(g[2].v, 11);
	CHECK_EQ(g[3].v, 20);
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->in_file, 4); /* the copy is not counted twice */
	CHECK_EQ(streams[0]->missing_chunks, 0);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_duplicate_chunk_keeps_fuller_copy)
{
	check_duplicate(0);
	check_duplicate(1);
}

TEST(reader_missing_chunks)
{
	struct tw w = {0};
	struct trail_reader *r;
	const struct trail_rstream *const *streams;
	struct got g[8];

	/* discard mode: a gap is damage, reported, events still read */
	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
	tw_simple_chunk(&w, 0, 3, 4000, 2, 1, 3);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 3);
	CHECK_EQ(g[2].v, 4);
	CHECK_ERR(r, ANY_OFFSET, "chunks 1..2 are missing");
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->missing_chunks, 2);
	trail_reader_close(r);
	tw_free(&w);

	/* overwrite mode: the oldest chunks were reclaimed, by design */
	tw_header(&w, CLOCK_MONO, FLAG_OVERWRITE);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 5, 1000, 1, 0, 5);
	tw_simple_chunk(&w, 0, 6, 2000, 1, 0, 6);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_NO_ERRORS(r);
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->missing_chunks, 0);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_missing_leading_chunks)
{
	/* Discard mode: every stream numbers its chunks from 0 (a reused
	 * slot starts again at 0 with a new generation) and nothing reclaims
	 * them, so a stream whose first chunk in the file is seq 2 lost
	 * chunks 0 and 1, exactly like a gap in the middle does. */
	struct tw w = {0};
	struct trail_reader *r;
	const struct trail_rstream *const *streams;
	struct got g[8];

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 2, 3000, 1, 0, 2);
	tw_simple_chunk(&w, 0, 3, 4000, 1, 0, 3);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_EQ(trail_reader_streams(r, &streams), 1);
	CHECK_EQ(streams[0]->missing_chunks, 2);
	CHECK_ERR(r, ANY_OFFSET, "chunks 0..1 are missing");
	trail_reader_close(r);
	tw_free(&w);
}

/* MODULE, SYMBOLS and MODGONE sections: addresses are named by the object
 * that was loaded there at the record's time (dlopen/dlclose in turns). */
static void tw_symbols(struct tw *w, uint32_t id, uint64_t addr, uint64_t size, const char *name)
{
	uint8_t b[16 + 24 + 64] = {0};
	size_t nl = strlen(name) + 1;

	put32(b, id);
	put32(b + 4, 1);
	put64(b + 8, nl);
	put64(b + 16, addr);
	put64(b + 24, size);
	put32(b + 32, 0);
	memcpy(b + 40, name, nl);
	tw_sec(w, 9, b, 40 + nl);
}

static void tw_module(struct tw *w, uint32_t pid, uint32_t syms, uint64_t base, uint64_t lo,
		      uint64_t hi, const char *path)
{
	uint8_t b[32 + 64] = {0};
	size_t pl = strlen(path) + 1;

	put32(b, pid);
	put32(b + 4, syms);
	put64(b + 8, base);
	put64(b + 16, lo);
	put64(b + 24, hi);
	memcpy(b + 32, path, pl);
	tw_sec(w, 8, b, 32 + pl);
}

static void tw_modgone(struct tw *w, uint32_t pid, uint64_t base, uint64_t lo, uint64_t hi,
		       uint64_t gone)
{
	uint8_t b[40] = {0};

	put32(b, pid);
	put64(b + 8, base);
	put64(b + 16, lo);
	put64(b + 24, hi);
	put64(b + 32, gone);
	tw_sec(w, 10, b, sizeof(b));
}

TEST(reader_modules_come_and_go)
{
	struct tw w = {0};
	struct trail_reader *r;
	const char *s;
	uint64_t off = 99;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_symbols(&w, 1, 0x1100, 0x20, "main");
	tw_symbols(&w, 2, 0x1100, 0x20, "inner_a");
	tw_symbols(&w, 3, 0x1100, 0x20, "inner_b");
	/* the program, and two plugins in turn at one address: A, B, A */
	tw_module(&w, 42, 1, 0x400000, 0x401000, 0x402000, "/bin/host");
	tw_module(&w, 42, 2, 0x7000000, 0x7001000, 0x7002000, "/p/a.so");
	tw_module(&w, 42, 3, 0x7000000, 0x7001000, 0x7002000, "/p/b.so");
	tw_module(&w, 42, 2, 0x7000000, 0x7001000, 0x7002000, "/p/a.so");
	/* the recorder may write the unloadings after all the loadings */
	tw_modgone(&w, 42, 0x7000000, 0x7001000, 0x7002000, 2000);
	tw_modgone(&w, 42, 0x7000000, 0x7001000, 0x7002000, 3000);
	/* an unloading of something not in the file changes nothing */
	tw_modgone(&w, 42, 0x9000000, 0x9001000, 0x9002000, 1500);
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(nerrors(r), 0);
	s = trail_reader_symbol(r, 42, 0x7001108, 1999, &off);
	CHECK(s && !strcmp(s, "inner_a"));
	CHECK_EQ(off, 8);
	s = trail_reader_symbol(r, 42, 0x7001108, 2000, NULL);
	CHECK(s && !strcmp(s, "inner_b"));
	s = trail_reader_symbol(r, 42, 0x7001100, 2999, NULL);
	CHECK(s && !strcmp(s, "inner_b"));
	s = trail_reader_symbol(r, 42, 0x7001100, 3000, NULL);
	CHECK(s && !strcmp(s, "inner_a"));
	s = trail_reader_symbol(r, 42, 0x7001100, UINT64_MAX - 1, NULL);
	CHECK(s && !strcmp(s, "inner_a"));
	s = trail_reader_symbol(r, 42, 0x401110, 5000, NULL);
	CHECK(s && !strcmp(s, "main"));
	/* outside every object, past a symbol's end, another process */
	CHECK(!trail_reader_symbol(r, 42, 0x7003100, 10, NULL));
	CHECK(!trail_reader_symbol(r, 42, 0x7001120, 10, NULL));
	CHECK(!trail_reader_symbol(r, 43, 0x401110, 10, NULL));
	trail_reader_close(r);
	free(w.b);
}

TEST(reader_stream_sections)
{
	struct tw w = {0};
	struct chunk_desc c = {3, 1, 0, 1000, 2, 42, 43, "old", 0, -1};
	struct rb rb = {.len = 0};
	struct stream_desc s1 = {3, 1, 42, 43, 0, 0, 1, 0, 1, "mid"};
	struct stream_desc s2 = {3, 1, 42, 43, 0, 1, 5, 6, 1, "renamed"};
	struct stream_desc idle = {9, 4, 42, 44, 1, 1, 8, 0, 0, "idle"};
	const struct trail_rstream *const *streams;
	struct trail_reader *r;
	struct got g[8];
	size_t n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_ev(&rb, 1, 1);
	rb_ev(&rb, 1, 2);
	tw_chunk(&w, &c, &rb);
	tw_stream(&w, &s1);
	tw_stream(&w, &s2);   /* a later STREAM section replaces the earlier */
	tw_stream(&w, &idle); /* a stream that never filled a chunk */
	tw_end(&w, 1, 12);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_reader_streams(r, &streams), 2);
	CHECK_EQ(streams[0]->idx, 3);
	CHECK_EQ(streams[0]->dropped, 5);
	CHECK_EQ(streams[0]->overwritten, 6);
	CHECK_EQ(streams[0]->final, 1);
	CHECK_STR(streams[0]->comm, "renamed");
	CHECK_EQ(streams[0]->in_file, 2);
	CHECK_EQ(streams[1]->idx, 9);
	CHECK_EQ(streams[1]->gen, 4);
	CHECK_EQ(streams[1]->tid, 44);
	CHECK_EQ(streams[1]->level, 1);
	CHECK_EQ(streams[1]->dropped, 8);
	CHECK_EQ(streams[1]->in_file, 0);
	CHECK_EQ(trail_reader_complete(r), 1);
	CHECK_EQ(trail_reader_nostream_lost(r), 12);

	/* LOST 2 before the chunk, its events, then the 5 - 2 = 3 drops
	 * after its last chunk; the idle stream shows nothing */
	n = read_all(r, g, 8);
	CHECK_EQ(n, 4);
	CHECK_EQ(g[0].type, TRAIL_RT_LOST);
	CHECK_EQ(g[0].lost, 2);
	CHECK_EQ(g[1].v, 1);
	CHECK_EQ(g[2].v, 2);
	CHECK_EQ(g[3].type, TRAIL_RT_LOST);
	CHECK_EQ(g[3].lost, 3);
	CHECK_EQ(g[3].ts_raw, 1002); /* at the stream's last time */
	CHECK(g[3].st == streams[0]);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_stream_not_final_has_no_tail_loss)
{
	struct tw w = {0};
	struct stream_desc s = {0, 1, 1, 2, 0, 0 /* not final */, 5, 0, 1, "t"};
	struct trail_reader *r;
	struct got g[8];

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	tw_stream(&w, &s);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_EQ(g[1].type, TRAIL_RT_EVENT);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_end_section)
{
	static const struct {
		size_t len;     /* END payload bytes, 0: no END */
		uint32_t complete;
		int want;
		int malformed;
	} rows[] = {
		{0, 0, 0, 0},   /* no END: the recorder did not finish */
		{56, 1, 1, 0},
		{56, 0, 0, 0},
		{56, 2, 0, 0},  /* only 1 means complete */
		{48, 1, 1, 0},  /* before procs_refused was appended */
		{44, 1, 1, 0},  /* up to `complete`: all that matters */
		{64, 1, 1, 0},  /* a newer, longer END */
		{43, 1, 0, 1},  /* `complete` cut: malformed */
		{8, 1, 0, 1},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tw w = {0};
		struct trail_reader *r;
		size_t end = 0;
		int f0 = check_failures;

		tw_header(&w, CLOCK_MONO, 0);
		tw_std_events(&w);
		tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
		if (rows[i].len > 56) {
			uint8_t p[64] = {0};

			put64(p, w.chunks);
			put64(p + 8, w.events);
			put64(p + 16, 12);
			put32(p + 40, rows[i].complete);
			end = tw_sec(&w, SEC_END, p, rows[i].len);
		} else if (rows[i].len) {
			end = tw_end_len(&w, rows[i].complete, 12, rows[i].len);
		}
		r = open_tw(&w);
		if (!r)
			continue;
		CHECK_EQ(trail_reader_complete(r), rows[i].want);
		if (rows[i].want)
			CHECK_EQ(trail_reader_nostream_lost(r), 12);
		if (rows[i].malformed) {
			CHECK_ERR(r, end, "malformed END section");
		} else {
			CHECK_NO_ERRORS(r);
		}
		if (check_failures != f0)
			fprintf(stderr, "  ... END of %zu bytes\n", rows[i].len);
		trail_reader_close(r);
		tw_free(&w);
	}
}

TEST(reader_skips_unknown_sections)
{
	/* a newer writer's section type: skipped without complaint */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[4];

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_sec(&w, 99, "future", 6);
	tw_sec(&w, 0, "", 0);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 4), 2);
	CHECK_EQ(trail_reader_complete(r), 1);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

/* ------------------------------------------------------------------------
 * Damage inside a chunk: one row per kind. Stream A's chunk holds the
 * records below (MARK: where the damage is); stream B holds one good
 * event, which must always be delivered.
 */
enum op {
	END_OPS,
	EV,      /* event 0, v = a */
	RAW,     /* a bytes of 0xee */
	HDR,     /* a record header of type a, no payload */
	LONG,    /* LONGID record for id a, payload v = 0 */
	STR,     /* event 1 whose string length says a, with 3 bytes */
	MARK,    /* the damage starts here */
};

static const struct dmg_row {
	const char *what;
	struct {
		enum op op;
		uint32_t a;
	} ops[6];
	int events;         /* header's count; -1: as recorded */
	uint32_t want[3];   /* values delivered from stream A */
	int nwant;
	const char *msg;
} dmg_rows[] = {
	{"unknown record type 5", {{EV, 1}, {MARK, 0}, {HDR, 5}, {RAW, 4}, {EV, 2}},
	 -1, {1}, 1, "unknown record type 5"},
	{"record type 0", {{EV, 1}, {MARK, 0}, {HDR, 0}, {RAW, 4}},
	 -1, {1}, 1, "unknown record type 0"},
	{"record type 7", {{EV, 1}, {EV, 2}, {MARK, 0}, {HDR, 7}, {RAW, 8}},
	 -1, {1, 2}, 2, "unknown record type 7"},
	{"undescribed event id", {{EV, 1}, {MARK, 0}, {HDR, 8 + 5}, {RAW, 4}},
	 -1, {1}, 1, "record of undescribed event id 5"},
	{"undescribed long id", {{EV, 1}, {MARK, 0}, {LONG, 701}},
	 -1, {1}, 1, "record of undescribed event id 701"},
	{"payload past the chunk end", {{EV, 1}, {MARK, 0}, {HDR, 8}, {RAW, 2}},
	 -1, {1}, 1, "event payload runs past the end of its chunk"},
	{"string past the chunk end", {{EV, 1}, {MARK, 0}, {STR, 100}},
	 -1, {1}, 1, "event payload runs past the end of its chunk"},
	{"string over 4095", {{EV, 1}, {MARK, 0}, {STR, 5000}, {RAW, 4997}},
	 -1, {1}, 1, "event payload runs past the end of its chunk"},
	{"record header cut short", {{EV, 1}, {MARK, 0}, {RAW, 2}},
	 -1, {1}, 1, "record header cut short"},
	{"time record cut short", {{EV, 1}, {MARK, 0}, {HDR, 1}, {RAW, 4}},
	 -1, {1}, 1, "time record cut short"},
	{"cpu record cut short", {{EV, 1}, {MARK, 0}, {HDR, 2}, {RAW, 2}},
	 -1, {1}, 1, "cpu record cut short"},
	{"longid record cut short", {{EV, 1}, {MARK, 0}, {HDR, 3}, {RAW, 2}},
	 -1, {1}, 1, "event record cut short"},
	/* count mismatches: every record is read, then the chunk is
	 * reported at the start of its records */
	{"header claims more events", {{MARK, 0}, {EV, 1}, {EV, 2}},
	 3, {1, 2}, 2, "header says 3 events, 2 found"},
	{"header claims fewer events", {{MARK, 0}, {EV, 1}, {EV, 2}},
	 1, {1, 2}, 2, "header says 1 events, 2 found"},
};

TEST(reader_damage_in_chunks)
{
	for (size_t i = 0; i < sizeof(dmg_rows) / sizeof(dmg_rows[0]); i++) {
		const struct dmg_row *d = &dmg_rows[i];
		struct chunk_desc ca = {1, 1, 0, 1000, 0, 5, 6, "a", 0, d->events};
		static struct rb rb;
		struct tw w = {0};
		struct trail_reader *r;
		static struct got g[16];
		uint32_t mark = 0;
		size_t sec, n, na = 0, nb = 0;
		int f0 = check_failures;

		rb.len = rb.events = 0;
		for (int k = 0; k < 6 && d->ops[k].op != END_OPS; k++) {
			uint32_t a = d->ops[k].a;
			uint8_t s[2];

			switch (d->ops[k].op) {
			case EV:
				rb_ev(&rb, 1, a);
				break;
			case RAW:
				memset(rb.b + rb.len, 0xee, a);
				rb.len += a;
				break;
			case HDR:
				rb_hdr(&rb, 1, a);
				break;
			case LONG:
				rb_long(&rb, 1, a, 0);
				break;
			case STR:
				rb_hdr(&rb, 1, REC_EVENT(EV_STR));
				put16(s, (uint16_t)a);
				rb_raw(&rb, s, 2);
				rb_raw(&rb, "abc", 3);
				break;
			case MARK:
				mark = rb.len;
				break;
			default:
				break;
			}
		}
		tw_header(&w, CLOCK_MONO, 0);
		tw_std_events(&w);
		sec = tw_chunk(&w, &ca, &rb);
		tw_simple_chunk(&w, 2, 0, 1500, 1, 0, 1000);
		r = open_tw(&w);
		if (!r)
			continue;
		n = read_all(r, g, 16);
		for (size_t k = 0; k < n && k < 16; k++) {
			if (g[k].st && g[k].st->idx == 2) {
				nb++;
				CHECK_EQ(g[k].v, 1000);
			} else if (na < 3) {
				CHECK_EQ(g[k].type, TRAIL_RT_EVENT);
				CHECK_EQ(g[k].v, d->want[na]);
				na++;
			} else {
				na++;
			}
		}
		CHECK_EQ(na, d->nwant);
		CHECK_EQ(nb, 1);
		CHECK_ERR(r, sec + CHUNK_REC_OFF + mark, d->msg);
		CHECK_EQ(nerrors(r), 1);
		if (check_failures != f0)
			fprintf(stderr, "  ... in row \"%s\"\n", d->what);
		trail_reader_close(r);
		tw_free(&w);
	}
}

TEST(reader_bad_record_ends_its_stream)
{
	/* reader.h: "a bad record ends its stream there": the stream's
	 * later chunks are not decoded, other streams are */
	struct tw w = {0};
	struct chunk_desc ca = {1, 1, 0, 1000, 0, 5, 6, "a", 0, -1};
	struct rb rb = {.len = 0};
	struct trail_reader *r;
	struct got g[16];
	size_t sec, n;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	rb_ev(&rb, 1, 1);
	rb_hdr(&rb, 1, 6); /* unknown type */
	sec = tw_chunk(&w, &ca, &rb);
	tw_simple_chunk(&w, 1, 1, 2000, 2, 1, 50); /* stream A, seq 1 */
	tw_simple_chunk(&w, 2, 0, 1500, 2, 1000, 100); /* stream B */
	r = open_tw(&w);
	if (!r)
		return;
	n = read_all(r, g, 16);
	CHECK_EQ(n, 3);
	CHECK_EQ(g[0].v, 1);
	CHECK_EQ(g[1].v, 100);
	CHECK_EQ(g[2].v, 101);
	CHECK_ERR(r, sec + CHUNK_REC_OFF + 8, "unknown record type 6");
	trail_reader_close(r);
	tw_free(&w);
}

/* ------------------------------------------------------------------------
 * Damage to sections.
 */

/* header, INFO, 3 EVENTs, chunks A0 (2 events), B0 (2), A1 (1), STREAM, END */
struct layout {
	size_t chunk_off[3], chunk_end[3];
	int chunk_events[3];
};

static void build_multi(struct tw *w, struct layout *l)
{
	struct stream_desc s = {0, 1, 100, 200, 0, 1, 0, 0, 2, "thr"};
	static const struct {
		uint32_t stream;
		uint64_t seq, base;
		int n;
		uint32_t v0;
	} ch[3] = {{0, 0, 1000, 2, 0}, {1, 0, 1005, 2, 100}, {0, 1, 2000, 1, 2}};

	tw_header(w, CLOCK_MONO, 0);
	tw_info(w, "command=test\n");
	tw_std_events(w);
	for (int i = 0; i < 3; i++) {
		l->chunk_off[i] = tw_simple_chunk(w, ch[i].stream, ch[i].seq, ch[i].base,
						  ch[i].n, 10, ch[i].v0);
		l->chunk_end[i] = w->len;
		l->chunk_events[i] = ch[i].n;
	}
	tw_stream(w, &s);
	tw_end(w, 1, 0);
}

TEST(reader_truncated_at_every_length)
{
	/* a file cut anywhere: no crash, every chunk wholly before the cut
	 * delivered, one message naming the section the cut is in */
	struct tw w = {0};
	struct layout l;
	size_t starts[32], nstarts = 0;
	int last = -1;

	build_multi(&w, &l);
	/* every section start, the three EVENT sections included */
	{
		size_t off = 64;

		while (off < w.len) {
			uint64_t len;

			starts[nstarts++] = off;
			memcpy(&len, w.b + off + 8, 8);
			off += 16 + (size_t)len;
		}
		starts[nstarts] = w.len;
	}
	for (size_t cut = 0; cut <= w.len; cut++) {
		struct trail_reader *r;
		static struct got g[32];
		char err[512];
		int rc, want_events = 0;
		size_t n, sec = 0;
		int f0 = check_failures;

		r = open_n(&w, cut, &rc, err, sizeof(err));
		if (cut < 64) {
			CHECK_EQ(rc, -EPROTO);
			CHECK(strstr(err, "too short") != NULL);
			continue;
		}
		if (!r) {
			fprintf(stderr, "  cut %zu: open failed: %s\n", cut, err);
			check_failures++;
			continue;
		}
		for (int i = 0; i < 3; i++)
			if (l.chunk_end[i] <= cut)
				want_events += l.chunk_events[i];
		n = read_all(r, g, 32);
		CHECK_EQ(n, want_events);
		/* cutting later never yields less */
		CHECK((int)n >= last);
		last = (int)n;
		while (sec < nstarts && starts[sec + 1] <= cut)
			sec++;
		if (cut == starts[sec] || cut == w.len) {
			CHECK_NO_ERRORS(r); /* a clean section boundary */
		} else {
			CHECK_EQ(nerrors(r), 1);
			CHECK_ERR(r, starts[sec], cut - starts[sec] < 16
							  ? "truncated section header"
							  : "runs past the end of the file");
		}
		CHECK_EQ(trail_reader_complete(r), cut == w.len);
		if (check_failures != f0)
			fprintf(stderr, "  ... cut at %zu of %zu\n", cut, w.len);
		trail_reader_close(r);
		if (check_failures - f0 > 0 && check_failures > 20)
			break;
	}
	tw_free(&w);
}

TEST(reader_flipped_byte_in_a_section)
{
	/* any byte of the second chunk's section changed, its header
	 * included (type, magic, CRC, length): that section is skipped with
	 * a message at its offset, reading resumes at the next one, and the
	 * END's totals say how many events the damage cost */
	struct tw w = {0};
	struct layout l;
	size_t s, e;

	build_multi(&w, &l);
	s = l.chunk_off[1]; /* chunk B0, 2 events */
	e = l.chunk_end[1];
	for (size_t at = s; at < e; at++) {
		for (int bit = 0; bit < 8; bit += 3) {
			struct trail_reader *r;
			static struct got g[32];
			char err[256];
			int rc, f0 = check_failures;

			w.b[at] ^= (uint8_t)(1u << bit);
			r = open_n(&w, w.len, &rc, err, sizeof(err));
			w.b[at] ^= (uint8_t)(1u << bit);
			if (!r) {
				check_failures++;
				continue;
			}
			CHECK_EQ(read_all(r, g, 32), 3); /* A0's 2, A1's 1 */
			CHECK_ERR(r, s, "damaged section");
			CHECK_ERR(r, s, "reading resumes at offset");
			CHECK_ERR(r, ANY_OFFSET, "2 events lost to damage");
			CHECK_EQ(nerrors(r), 2);
			CHECK_EQ(trail_reader_damaged_events(r), 2);
			CHECK_EQ(trail_reader_complete(r), 1); /* END is read */
			if (check_failures != f0)
				fprintf(stderr, "  ... byte %zu bit %d flipped\n", at, bit);
			trail_reader_close(r);
		}
	}
	tw_free(&w);
}

TEST(reader_section_type_rewritten)
{
	/* a section retyped as another kind with its checksum fixed by
	 * version 1's rule (payload only) is still caught: the type is
	 * covered by the header's CRC in version 2 */
	static const uint16_t types[] = {SEC_END, SEC_INFO, SEC_PROC, SEC_STREAM, 99};
	struct tw w = {0};
	struct layout l;

	build_multi(&w, &l);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct trail_reader *r;
		static struct got g[32];
		uint64_t len;
		uint8_t save[4];
		size_t s = l.chunk_off[1];

		memcpy(save, w.b + s, 4);
		put16(w.b + s, types[i]);
		memcpy(&len, w.b + s + 8, 8);
		put32(w.b + s + 4, trail__crc32c(0, w.b + s + 16, (size_t)len));
		r = open_tw(&w);
		memcpy(w.b + s, save, 4);
		if (!r)
			continue;
		CHECK_EQ(read_all(r, g, 32), 3);
		CHECK_ERR(r, s, "checksum mismatch");
		CHECK_EQ(trail_reader_damaged_events(r), 2);
		trail_reader_close(r);
	}
	tw_free(&w);
}

TEST(reader_resumes_after_a_damaged_header)
{
	/* the damaged section's length cannot be trusted: the next section
	 * is found by its magic; garbage between sections is skipped too */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[16];
	size_t s0, s1;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	s0 = tw_simple_chunk(&w, 1, 0, 1001, 2, 1, 100);
	put64(w.b + s0 + 8, 1u << 20); /* its length: 1 MiB */
	s1 = w.len;
	/* 300 bytes of junk holding false magics with bad checksums */
	for (int i = 0; i < 100; i++) {
		static const uint8_t junk[3] = {0x06, 0xa1, 0xd7};

		tw_put(&w, junk, 3);
	}
	tw_simple_chunk(&w, 0, 1, 2000, 1, 1, 2);
	tw_end(&w, 1, 0);
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 16), 3);
	CHECK_EQ(g[0].v, 0);
	CHECK_EQ(g[1].v, 1);
	CHECK_EQ(g[2].v, 2);
	CHECK_ERR(r, s0, "reading resumes at offset");
	CHECK(s1 > s0);
	CHECK_ERR(r, ANY_OFFSET, "2 events lost to damage");
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_data_after_end)
{
	/* the recorder writes nothing after END: 1 MiB of zeros there is
	 * damage at its offset, not empty sections */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[8];
	static uint8_t zeros[1 << 20];
	size_t after;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	tw_end(&w, 1, 0);
	after = w.len;
	tw_put(&w, zeros, sizeof(zeros));
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_ERR(r, after, "1048576 bytes after the END section");
	CHECK_EQ(nerrors(r), 1);
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_steps_over_holes)
{
	/* no END, then an 8 GiB hole, then a chunk: the hole is stepped over
	 * (SEEK_DATA), the chunk after it found */
	struct tw w = {0}, tail = {0};
	struct trail_reader *r = NULL;
	struct got g[8];
	char err[256];
	const char *path;
	int fd, rc;
	off_t at;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	at = (off_t)w.len + (8ll << 30);
	tw_simple_chunk(&tail, 0, 1, 2000, 1, 1, 2);
	path = write_file(w.b, w.len);
	fd = open(path, O_WRONLY);
	if (fd < 0 || pwrite(fd, tail.b, tail.len, at) != (ssize_t)tail.len) {
		if (fd >= 0)
			close(fd);
		unlink(path);
		SKIP("cannot make an 8 GiB sparse file here");
	}
	close(fd);
	rc = trail_reader_open(path, &r, err, sizeof(err));
	unlink(path);
	CHECK_EQ(rc, 0);
	if (r) {
		CHECK_EQ(read_all(r, g, 8), 3);
		CHECK_ERR(r, w.len, "reading resumes at offset");
		CHECK_EQ(trail_reader_complete(r), 0);
		trail_reader_close(r);
	}
	tw_free(&w);
	tw_free(&tail);
}

TEST(reader_reads_version_1)
{
	/* files of version 1 (CRC of the payload only, no magic) still
	 * read; a high type bit set there is caught as a bad type */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[8];
	size_t s;

	tw_major = 1;
	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 2, 1, 0);
	s = tw_simple_chunk(&w, 1, 0, 1001, 1, 1, 100);
	tw_end(&w, 1, 0);
	tw_major = 2;
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 3);
	CHECK_NO_ERRORS(r);
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	w.b[s + 2] = 1;
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 8), 2);
	CHECK_ERR(r, s, "bad section type");
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_malformed_sections)
{
	/* sections whose checksum is right but whose content is not: each
	 * reported and skipped, the scan goes on */
	struct tw w = {0};
	struct trail_reader *r;
	struct got g[16];
	uint8_t p[256];
	struct rb rb = {.len = 0};
	struct chunk_desc c = {4, 1, 0, 500, 0, 1, 2, "x", 0, -1};
	size_t s_ev, s_len, s_cnt, s_short, s_end, s_clock, s_proc, s_stream, s_ev2;
	static const struct fdesc u32f[] = {{1, 4, 0, 0, "v"}};

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	/* EVENT 5 with a bad magic */
	put32(p, 5);
	put32(p + 4, 0);
	mk_meta(p + 8, "t", "bad", u32f, 1);
	p[8] ^= 0xff;
	s_ev = tw_sec(&w, SEC_EVENT, p, 8 + 22);
	/* EVENT with an id beyond the limit */
	put32(p, 1u << 22);
	p[8] ^= 0xff;
	s_ev2 = tw_sec(&w, SEC_EVENT, p, 8 + 22);
	/* CHUNK whose commit bytes disagree with the section length */
	rb_ev(&rb, 0, 1);
	s_len = tw_chunk(&w, &c, &rb);
	put64(w.b + s_len + 16 + 8, (uint64_t)1 << 32 | 7); /* commit: 7 bytes */
	fix_crc(&w, s_len);
	/* CHUNK claiming more events than 4-byte records could hold */
	c.events = 3;
	s_cnt = tw_chunk(&w, &c, &rb);
	/* CHUNK too short for its header */
	s_short = tw_sec(&w, SEC_CHUNK, p, 40);
	/* END too short */
	s_end = tw_sec(&w, SEC_END, p, 20);
	/* CLOCK of another clock than the header's */
	s_clock = tw_clock(&w, CLOCK_TSC, 0, 1, NULL, 0);
	/* PROC without a NUL-terminated path */
	memset(p, 'x', 48);
	s_proc = tw_sec(&w, SEC_PROC, p, 48);
	/* STREAM too short */
	s_stream = tw_sec(&w, SEC_STREAM, p, 63);
	/* after all that, a good chunk */
	c.stream = 7;
	c.events = -1;
	rb.len = rb.events = 0;
	rb_ev(&rb, 0, 42);
	tw_chunk(&w, &c, &rb);
	tw_end(&w, 1, 0);

	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(read_all(r, g, 16), 1);
	CHECK_EQ(g[0].v, 42);
	CHECK_ERR(r, s_ev, "malformed EVENT section: bad event description magic");
	CHECK_ERR(r, s_ev2, "malformed EVENT section: event id out of range");
	CHECK_ERR(r, s_len, "chunk length disagrees with its commit word");
	CHECK_ERR(r, s_cnt, "chunk claims more events than it can hold");
	CHECK_ERR(r, s_short, "malformed CHUNK section: too short for a chunk header");
	CHECK_ERR(r, s_end, "malformed END section");
	CHECK_ERR(r, s_clock, "malformed CLOCK section");
	CHECK_ERR(r, s_proc, "malformed PROC section");
	CHECK_ERR(r, s_stream, "malformed STREAM section");
	/* and the END sees the chunks refused above */
	CHECK_ERR(r, ANY_OFFSET, "lost to damage");
	CHECK_EQ(nerrors(r), 10);
	CHECK(trail_reader_event(r, 5) == NULL);
	CHECK_EQ(trail_reader_complete(r), 1);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(reader_section_implausibly_long)
{
	/* a length over 256 MiB is refused even when the file is that big
	 * (sparse here), before its checksum is computed */
	struct tw w = {0};
	struct trail_reader *r = NULL;
	char err[256];
	uint8_t h[16];
	size_t sec;
	int fd, rc;
	const char *path;

	tw_header(&w, CLOCK_MONO, 0);
	tw_std_events(&w);
	tw_simple_chunk(&w, 0, 0, 1000, 1, 0, 0);
	sec = w.len;
	put16(h, SEC_CHUNK);
	put16(h + 2, 0xd7a1);
	put32(h + 4, 0);
	put64(h + 8, (1ull << 28) + 1);
	tw_put(&w, h, 16);
	path = write_file(w.b, w.len);
	fd = open(path, O_WRONLY);
	if (fd < 0 || ftruncate(fd, (off_t)(w.len + (1ull << 28) + 1)) < 0) {
		unlink(path);
		SKIP("cannot make a 256 MiB sparse file");
	}
	close(fd);
	rc = trail_reader_open(path, &r, err, sizeof(err));
	unlink(path);
	CHECK_EQ(rc, 0);
	if (r) {
		struct got g[4];

		CHECK_EQ(read_all(r, g, 4), 1);
		CHECK_ERR(r, sec, "implausible");
		trail_reader_close(r);
	}
	tw_free(&w);
}

/* ------------------------------------------------------------------------
 * Files that are not trace files.
 */
TEST(reader_refuses_bad_files)
{
	static const struct {
		const char *what;
		int off;       /* header byte to change, -1: none */
		uint8_t x;     /* XORed into it */
		int fix_crc;   /* recompute the header CRC afterwards */
		size_t size;   /* bytes kept, SIZE_MAX: all */
		int rc;
		const char *msg;
		int at0;       /* the message names offset 0 */
	} rows[] = {
		{"valid", -1, 0, 0, SIZE_MAX, 0, NULL, 0},
		{"minor 7 (compatible)", 10, 7, 1, SIZE_MAX, 0, NULL, 0},
		{"empty", -1, 0, 0, 0, -EPROTO, "too short", 0},
		{"1 byte", -1, 0, 0, 1, -EPROTO, "too short", 0},
		{"63 bytes", -1, 0, 0, 63, -EPROTO, "too short", 0},
		{"bad magic", 0, 0x01, 1, SIZE_MAX, -EPROTO, "not a trail trace file", 1},
		{"magic in lower case", 7, 0x20, 1, SIZE_MAX, -EPROTO, "not a trail trace file", 1},
		{"bad header CRC", 60, 0x01, 0, SIZE_MAX, -EPROTO, "checksum mismatch", 1},
		{"header byte changed", 16, 0x01, 0, SIZE_MAX, -EPROTO, "checksum mismatch", 1},
		{"padding byte changed", 50, 0x01, 0, SIZE_MAX, -EPROTO, "checksum mismatch", 1},
		{"major 3", 8, 0x01, 1, SIZE_MAX, -EPROTO, "unsupported trace file version 3.0", 0},
		{"major 0", 8, 0x02, 1, SIZE_MAX, -EPROTO, "unsupported trace file version 0.0", 0},
		{"big-endian", 12, 0x03, 1, SIZE_MAX, -EPROTO, "unsupported trace file version", 0},
		{"header size 32", 14, 0x60, 1, SIZE_MAX, -EPROTO, "unsupported trace file version", 0},
		{"clock 3", 28, 0x01, 1, SIZE_MAX, -EPROTO, "unknown clock 3", 0},
		{"clock 0", 28, 0x02, 1, SIZE_MAX, -EPROTO, "unknown clock 0", 0},
	};
	struct tw base = {0};

	tw_header(&base, CLOCK_MONO, 0);
	tw_std_events(&base);
	tw_simple_chunk(&base, 0, 0, 1000, 1, 0, 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tw w = {0};
		struct trail_reader *r;
		char err[512];
		int rc;
		size_t size = rows[i].size == SIZE_MAX ? base.len : rows[i].size;

		tw_put(&w, base.b, base.len);
		if (rows[i].off >= 0)
			w.b[rows[i].off] ^= rows[i].x;
		if (rows[i].fix_crc)
			put32(w.b + 60, trail__crc32c(0, w.b, 60));
		r = open_n(&w, size, &rc, err, sizeof(err));
		if (rc != rows[i].rc || (rows[i].msg && !strstr(err, rows[i].msg)) ||
		    (rows[i].at0 && !strstr(err, "offset 0"))) {
			fprintf(stderr, "  %s: rc %d \"%s\", want %d \"%s\"\n", rows[i].what,
				rc, err, rows[i].rc, rows[i].msg ? rows[i].msg : "");
			check_failures++;
		}
		if (r) {
			struct got g[4];

			CHECK_EQ(read_all(r, g, 4), 1);
		}
		trail_reader_close(r);
		tw_free(&w);
	}
	tw_free(&base);
}

TEST(reader_refuses_non_files)
{
	struct trail_reader *r = (struct trail_reader *)1;
	char err[512];

	CHECK_EQ(trail_reader_open("/nonexistent/trail/trace.dat", &r, err, sizeof(err)),
		 -ENOENT);
	CHECK(r == NULL);
	CHECK(strstr(err, "/nonexistent/trail/trace.dat") != NULL);
	r = (struct trail_reader *)1;
	CHECK_EQ(trail_reader_open("/", &r, err, sizeof(err)), -EINVAL);
	CHECK(r == NULL);
	CHECK(strstr(err, "not a regular file") != NULL);
}

/* ------------------------------------------------------------------------
 * TSC clock: ticks -> CLOCK_MONOTONIC.
 */
static struct trail_reader *tsc_file(const uint64_t (*sync)[2], uint32_t n,
				     uint32_t shift, uint32_t mult)
{
	struct tw w = {0};
	struct trail_reader *r;

	tw_header(&w, CLOCK_TSC, 0);
	tw_clock(&w, CLOCK_TSC, shift, mult, sync, n);
	tw_std_events(&w);
	r = open_tw(&w);
	tw_free(&w);
	return r;
}

TEST(clock_interpolation_between_points)
{
	/* slope 2 ns/tick from 1000 to 3000, 0.25 from 3000 to 7000 */
	static const uint64_t sync[][2] = {{1000, 5000}, {3000, 9000}, {7000, 10000}};
	static const uint64_t rows[][2] = {
		{1000, 5000}, {2000, 7000}, {1001, 5002}, {2999, 8998},
		{3000, 9000}, {3004, 9001}, {5000, 9500}, {6999, 9999},
		{7000, 10000},
		/* outside: the slope of the nearest two */
		{11000, 11000}, {7004, 10001}, {0, 3000}, {500, 4000}, {999, 4998},
	};
	struct trail_reader *r = tsc_file(sync, 3, 0, 1);

	if (!r)
		return;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (trail_reader_to_ns(r, rows[i][0]) != rows[i][1]) {
			fprintf(stderr, "  to_ns(%" PRIu64 ") = %" PRIu64 ", want %" PRIu64 "\n",
				rows[i][0], trail_reader_to_ns(r, rows[i][0]), rows[i][1]);
			check_failures++;
		}
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
}

TEST(clock_points_unsorted_and_in_several_sections)
{
	/* the same three points, in two CLOCK sections, out of order */
	static const uint64_t s1[][2] = {{7000, 10000}, {1000, 5000}};
	static const uint64_t s2[][2] = {{3000, 9000}};
	struct tw w = {0};
	struct trail_reader *r;
	struct rb rb = {.len = 0};
	struct chunk_desc c = {0, 1, 0, 2000, 0, 1, 2, "t", 0, -1};
	struct got g[4];

	tw_header(&w, CLOCK_TSC, 0);
	tw_clock(&w, CLOCK_TSC, 0, 1, s1, 2);
	tw_std_events(&w);
	rb_ev(&rb, 0, 1);
	rb_ev(&rb, 3000, 2);
	tw_chunk(&w, &c, &rb);
	tw_clock(&w, CLOCK_TSC, 0, 1, s2, 1); /* a later CLOCK section */
	r = open_tw(&w);
	if (!r)
		return;
	CHECK_EQ(trail_reader_to_ns(r, 2000), 7000);
	CHECK_EQ(trail_reader_to_ns(r, 5000), 9500);
	/* records carry both clocks */
	CHECK_EQ(read_all(r, g, 4), 2);
	CHECK_EQ(g[0].ts_raw, 2000);
	CHECK_EQ(g[0].ts_ns, 7000);
	CHECK_EQ(g[1].ts_raw, 5000);
	CHECK_EQ(g[1].ts_ns, 9500);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
	tw_free(&w);
}

TEST(clock_is_monotonic)
{
	/* awkward slopes, one point whose time goes back (dropped: the
	 * mapping must stay monotonic), a sweep of every tick */
	static const uint64_t sync[][2] = {
		{1000, 5000}, {4000, 6001}, {4500, 5000}, {10007, 19999}, {10008, 20000},
		{20011, 20003},
	};
	struct trail_reader *r = tsc_file(sync, 6, 0, 1);
	uint64_t prev = 0;
	int bad = 0;

	if (!r)
		return;
	for (uint64_t t = 0; t < 30000; t++) {
		uint64_t ns = trail_reader_to_ns(r, t);

		if (ns < prev && bad++ < 5)
			fprintf(stderr, "  to_ns(%" PRIu64 ") = %" PRIu64 " < %" PRIu64 "\n", t,
				ns, prev);
		prev = ns;
	}
	CHECK_EQ(bad, 0);
	/* the consistent points are honoured exactly */
	CHECK_EQ(trail_reader_to_ns(r, 1000), 5000);
	CHECK_EQ(trail_reader_to_ns(r, 10007), 19999);
	CHECK_EQ(trail_reader_to_ns(r, 10008), 20000);
	CHECK_EQ(trail_reader_to_ns(r, 20011), 20003);
	trail_reader_close(r);
}

TEST(clock_large_values_exact)
{
	/* 10^12 ticks apart, 3 * 10^11 ns: products beyond 64 bits */
	static const uint64_t sync[][2] = {
		{1000000000000ull, 500000000000000000ull},
		{2000000000000ull, 500000300000000000ull},
	};
	struct trail_reader *r = tsc_file(sync, 2, 0, 1);

	if (!r)
		return;
	CHECK(trail_reader_to_ns(r, 1500000000000ull) == 500000150000000000ull);
	CHECK(trail_reader_to_ns(r, 1000000000001ull) == 500000000000000000ull); /* 0.3 */
	CHECK(trail_reader_to_ns(r, 1000000000010ull) == 500000000000000003ull);
	CHECK(trail_reader_to_ns(r, 1999999999999ull) == 500000299999999999ull); /* floor */
	/* beyond the last point, the same slope */
	CHECK(trail_reader_to_ns(r, 3000000000000ull) == 500000600000000000ull);
	trail_reader_close(r);
}

TEST(clock_one_point_and_none)
{
	/* one point: the kernel's calibration, 1.5 ns/tick (mult 3 >> 1) */
	static const uint64_t one[][2] = {{1000, 1000000}};
	static const uint64_t low[][2] = {{1000, 500}, {2000, 2500}};
	struct trail_reader *r = tsc_file(one, 1, 1, 3);

	if (r) {
		CHECK_EQ(trail_reader_to_ns(r, 1000), 1000000);
		CHECK_EQ(trail_reader_to_ns(r, 3000), 1003000);
		CHECK_EQ(trail_reader_to_ns(r, 0), 998500);
		trail_reader_close(r);
	}
	/* before the first point, never below zero */
	r = tsc_file(low, 2, 0, 1);
	if (r) {
		CHECK_EQ(trail_reader_to_ns(r, 800), 100);
		CHECK_EQ(trail_reader_to_ns(r, 750), 0);
		CHECK_EQ(trail_reader_to_ns(r, 0), 0);
		trail_reader_close(r);
	}
}

TEST(clock_section_without_points)
{
	/* a CLOCK section with the calibration only (n = 0) is well formed:
	 * then ns = ticks * mult >> shift (1.5 ns/tick here). Also the
	 * first CLOCK section of a file, when no sync point is stored yet. */
	struct trail_reader *r = tsc_file(NULL, 0, 1, 3);

	if (!r)
		return;
	CHECK_EQ(trail_reader_to_ns(r, 1000), 1500);
	CHECK(trail_reader_to_ns(r, 1ull << 40) == 3ull << 39);
	CHECK(trail_reader_to_ns(r, 1ull << 62) == 3ull << 61);
	CHECK_NO_ERRORS(r);
	trail_reader_close(r);
}

TEST(clock_mono_is_identity)
{
	struct tw w = {0};
	struct trail_reader *r;

	tw_header(&w, CLOCK_MONO, 0);
	r = open_tw(&w);
	if (r) {
		CHECK_EQ(trail_reader_to_ns(r, 0), 0);
		CHECK_EQ(trail_reader_to_ns(r, 123456789), 123456789);
		CHECK(trail_reader_to_ns(r, UINT64_MAX) == UINT64_MAX);
		trail_reader_close(r);
	}
	tw_free(&w);
}

TEST_MAIN(CHECK_T(reader_minimal_file), CHECK_T(reader_empty_file_and_no_chunks),
	  CHECK_T(reader_two_streams_interleave), CHECK_T(reader_merge_many_streams),
	  CHECK_T(reader_time_and_cpu_records), CHECK_T(reader_longid_records),
	  CHECK_T(reader_string_events), CHECK_T(reader_lost_before),
	  CHECK_T(reader_chunks_read_in_seq_order),
	  CHECK_T(reader_duplicate_chunk_keeps_fuller_copy),
	  CHECK_T(reader_missing_chunks), CHECK_T(reader_missing_leading_chunks),
	  CHECK_T(reader_modules_come_and_go),
	  CHECK_T(reader_stream_sections),
	  CHECK_T(reader_stream_not_final_has_no_tail_loss),
	  CHECK_T(reader_end_section), CHECK_T(reader_skips_unknown_sections),
	  CHECK_T(reader_damage_in_chunks), CHECK_T(reader_bad_record_ends_its_stream),
	  CHECK_T(reader_truncated_at_every_length),
	  CHECK_T(reader_flipped_byte_in_a_section), CHECK_T(reader_section_type_rewritten),
	  CHECK_T(reader_resumes_after_a_damaged_header), CHECK_T(reader_data_after_end),
	  CHECK_T(reader_steps_over_holes), CHECK_T(reader_reads_version_1),
	  CHECK_T(reader_malformed_sections),
	  CHECK_T(reader_section_implausibly_long), CHECK_T(reader_refuses_bad_files),
	  CHECK_T(reader_refuses_non_files), CHECK_T(clock_interpolation_between_points),
	  CHECK_T(clock_points_unsorted_and_in_several_sections),
	  CHECK_T(clock_is_monotonic), CHECK_T(clock_large_values_exact),
	  CHECK_T(clock_one_point_and_none), CHECK_T(clock_section_without_points),
	  CHECK_T(clock_mono_is_identity))
