/* SPDX-License-Identifier: MIT */
/*
 * tracebuild.c - trace files byte by byte, field by field as
 * doc/file-format.md gives them (tracebuild.h). Nothing here comes from
 * src/tracefile: the reader's tests compare it with this.
 */
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "tracebuild.h"

void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void tw_put(struct tw *w, const void *p, size_t n)
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

void tw_free(struct tw *w)
{
	free(w->b);
	memset(w, 0, sizeof(*w));
}

unsigned tw_major = 2;

/* File header, 64 bytes. */
void tw_header(struct tw *w, uint32_t clock, uint32_t flags)
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

/* A section; returns its file offset. */
size_t tw_sec(struct tw *w, uint32_t type, const void *p, size_t n)
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
void fix_crc(struct tw *w, size_t off)
{
	uint64_t n;

	memcpy(&n, w->b + off + 8, 8);
	put32(w->b + off + 4,
	      trail__crc32c(trail__crc32c(trail__crc32c(0, w->b + off, 4), w->b + off + 8, 8),
			    w->b + off + 16, (size_t)n));
}

size_t tw_info(struct tw *w, const char *text)
{
	return tw_sec(w, SEC_INFO, text, strlen(text));
}

size_t mk_meta(uint8_t *out, const char *prov, const char *ev,
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

size_t tw_event(struct tw *w, uint32_t id, const char *prov, const char *ev,
		const struct fdesc *f, int n)
{
	uint8_t p[512];

	put32(p, id); /* id */
	put32(p + 4, 0);
	return tw_sec(w, SEC_EVENT, p, 8 + mk_meta(p + 8, prov, ev, f, n));
}

void tw_std_events(struct tw *w)
{
	static const struct fdesc u32f[] = {{1, 4, 0, 0, "v"}};
	static const struct fdesc strf[] = {{3, 1, 0, 0, "s"}};

	tw_event(w, EV_U32, "t", "u32", u32f, 1);
	tw_event(w, EV_STR, "t", "str", strf, 1);
	tw_event(w, EV_FAR, "t", "far", u32f, 1);
}

size_t tw_proc(struct tw *w, uint32_t pid, const char *comm, const char *exe)
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

size_t tw_stream(struct tw *w, const struct stream_desc *s)
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

size_t tw_end_len(struct tw *w, uint32_t complete, uint64_t nostream_lost,
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

size_t tw_end(struct tw *w, uint32_t complete, uint64_t nostream_lost)
{
	return tw_end_len(w, complete, nostream_lost, 56);
}

/* CLOCK section: clock, shift, mult, n, then n x {ticks, mono_ns}. */
size_t tw_clock(struct tw *w, uint32_t clock, uint32_t shift, uint32_t mult,
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

/* Records of one chunk. */
void rb_raw(struct rb *r, const void *p, uint32_t n)
{
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

void rb_hdr(struct rb *r, uint32_t delta, uint32_t type)
{
	put32(r->b + r->len, delta << 10 | type);
	r->len += 4;
}

void rb_u32(struct rb *r, uint32_t v)
{
	put32(r->b + r->len, v);
	r->len += 4;
}

void rb_ev(struct rb *r, uint32_t delta, uint32_t v)
{
	rb_hdr(r, delta, REC_EVENT(EV_U32));
	rb_u32(r, v);
	r->events++;
}

void rb_time(struct rb *r, uint64_t t)
{
	rb_hdr(r, 0, REC_TIME);
	put64(r->b + r->len, t);
	r->len += 8;
}

void rb_cpu(struct rb *r, uint32_t delta, uint32_t cpu)
{
	rb_hdr(r, delta, REC_CPU);
	rb_u32(r, cpu);
}

void rb_long(struct rb *r, uint32_t delta, uint32_t id, uint32_t v)
{
	rb_hdr(r, delta, REC_LONGID);
	rb_u32(r, id);
	rb_u32(r, v);
	r->events++;
}

/* A CHUNK section; returns its file offset. */
size_t tw_chunk(struct tw *w, const struct chunk_desc *c, const struct rb *r)
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
	put16(p + 54, 0);                          /* flags */
	put_comm(p + 56, c->comm ? c->comm : "");     /* comm */
	memcpy(p + 72, r->b, r->len);
	w->chunks++;
	w->events += events;
	return tw_sec(w, SEC_CHUNK, p, 72 + r->len);
}

/* One chunk of event-0 records at base_ts + i * step, values v0, v0+1... */
size_t tw_simple_chunk(struct tw *w, uint32_t stream, uint64_t seq,
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

/* SYMBOLS table `id` of one symbol: u32 id, nsyms 1; u64 names_len;
 * {u64 addr, size; u32 name 0, 0}; the name */
void tw_symbols(struct tw *w, uint32_t id, uint64_t addr, uint64_t size, const char *name)
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
	tw_sec(w, SEC_SYMBOLS, b, 40 + nl);
}

/* MODULE: u32 pid, symbols; u64 base, lo, hi; the path */
void tw_module(struct tw *w, uint32_t pid, uint32_t syms, uint64_t base, uint64_t lo,
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
	tw_sec(w, SEC_MODULE, b, 32 + pl);
}

/* MODGONE: u32 pid, 0; u64 base, lo, hi, gone */
void tw_modgone(struct tw *w, uint32_t pid, uint64_t base, uint64_t lo, uint64_t hi,
		uint64_t gone)
{
	uint8_t b[40] = {0};

	put32(b, pid);
	put64(b + 8, base);
	put64(b + 16, lo);
	put64(b + 24, hi);
	put64(b + 32, gone);
	tw_sec(w, SEC_MODGONE, b, sizeof(b));
}
