/* SPDX-License-Identifier: MIT */
/*
 * pb.h - a small protocol buffers wire-format writer, enough for the
 * Perfetto exporter (perfetto.c): varints, fixed64, length-delimited
 * fields, nested messages. Everything is appended to one growable buffer
 * that the caller drains (a whole trace never sits in it).
 *
 * A nested message's length is known only once its body is written, so
 * pb_open() reserves one byte for it and pb_close() writes it there: most
 * messages of a trace are under 128 bytes and cost nothing more; a longer
 * one has its body moved up by the extra bytes its length needs.
 *
 *     size_t m = pb_open(b, 11);      // field 11, a message
 *     pb_uint(b, 9, 1);               //   its field 9 = 1
 *     pb_close(b, m);
 *
 * Errors are sticky: when memory runs out, b->err is -ENOMEM and every
 * later write does nothing, so callers check once, at the end of a packet.
 */
#ifndef TRAIL_EXPORT_PB_H
#define TRAIL_EXPORT_PB_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum pb_wire {
	PB_VARINT = 0,
	PB_FIXED64 = 1,
	PB_LEN = 2,
};

struct pb {
	uint8_t *b;
	size_t n, cap;
	int err; /* 0, or -ENOMEM: writes are dropped from then on */
};

/* Room for need more bytes: 1, or 0 with b->err set. */
static inline int pb_room(struct pb *b, size_t need)
{
	size_t cap;
	uint8_t *nb;

	if (b->cap - b->n >= need)
		return !b->err;
	if (b->err)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap - b->n < need)
		cap *= 2;
	nb = realloc(b->b, cap);
	if (!nb) {
		b->err = -ENOMEM;
		return 0;
	}
	b->b = nb;
	b->cap = cap;
	return 1;
}

static inline void pb_free(struct pb *b)
{
	free(b->b);
	*b = (struct pb){0};
}

static inline size_t pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* unchecked: the caller made room (10 bytes at most) */
static inline uint8_t *pb__varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline void pb_key(struct pb *b, uint32_t field, enum pb_wire w)
{
	if (pb_room(b, 5))
		b->n = (size_t)(pb__varint(b->b + b->n, (uint64_t)field << 3 | w) - b->b);
}

/* uint32, uint64, enum, bool; int32 and int64 as their two's complement */
static inline void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	if (pb_room(b, 15))
		b->n = (size_t)(pb__varint(pb__varint(b->b + b->n, (uint64_t)field << 3), v) -
				b->b);
}

static inline void pb_int(struct pb *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

static inline void pb_double(struct pb *b, uint32_t field, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	pb_key(b, field, PB_FIXED64);
	if (pb_room(b, 8)) {
		for (int i = 0; i < 8; i++) /* little endian on every host */
			b->b[b->n++] = (uint8_t)(v >> (8 * i));
	}
}

/* string, bytes */
static inline void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t len)
{
	pb_key(b, field, PB_LEN);
	if (pb_room(b, 10 + len)) {
		b->n = (size_t)(pb__varint(b->b + b->n, len) - b->b);
		memcpy(b->b + b->n, p, len);
		b->n += len;
	}
}

/* A nested message (or any length-delimited field written piece by
 * piece) begins: returns its mark for pb_close(). */
static inline size_t pb_open(struct pb *b, uint32_t field)
{
	pb_key(b, field, PB_LEN);
	if (!pb_room(b, 1))
		return 0;
	b->b[b->n] = 0;
	return b->n++;
}

/* The message opened at mark ends here: its length goes in front. */
static inline void pb_close(struct pb *b, size_t mark)
{
	size_t len, k;

	if (b->err)
		return;
	len = b->n - mark - 1;
	if (len < 0x80) {
		b->b[mark] = (uint8_t)len;
		return;
	}
	k = pb_varint_len(len);
	if (!pb_room(b, k - 1))
		return;
	memmove(b->b + mark + k, b->b + mark + 1, len);
	pb__varint(b->b + mark, len);
	b->n += k - 1;
}

#endif /* TRAIL_EXPORT_PB_H */
