/* SPDX-License-Identifier: MIT */
/*
 * lbuf.h - a line of report output built by hand (printf was most of the
 * time of a big report). Appends never overflow: when the buffer is full,
 * what it holds goes to out (a deep call tree indents past any fixed
 * size), or, with no out, the rest is cut.
 */
#ifndef TRAIL_TOOL_LBUF_H
#define TRAIL_TOOL_LBUF_H

#include <stdio.h>
#include <string.h>

struct lbuf {
	char b[16384];
	size_t n;
	FILE *out;
};

static inline void lb_init(struct lbuf *l, FILE *out)
{
	l->n = 0;
	l->out = out;
}

static inline void lb_flush(struct lbuf *l)
{
	if (l->out)
		fwrite(l->b, 1, l->n, l->out);
	l->n = 0;
}

/* room left, after handing a full buffer to out; 0: full and cut */
static inline size_t lb_room(struct lbuf *l)
{
	if (l->n == sizeof(l->b) - 1 && l->out)
		lb_flush(l);
	return sizeof(l->b) - 1 - l->n;
}

static inline void lb_put(struct lbuf *l, const char *s, size_t len)
{
	if (__builtin_expect(len <= sizeof(l->b) - 1 - l->n, 1)) {
		memcpy(l->b + l->n, s, len);
		l->n += len;
		return;
	}
	while (len) {
		size_t room = lb_room(l), k = len < room ? len : room;

		if (!k)
			return;
		memcpy(l->b + l->n, s, k);
		l->n += k;
		s += k;
		len -= k;
	}
}

static inline void lb_str(struct lbuf *l, const char *s)
{
	lb_put(l, s, strlen(s));
}

static inline void lb_pad(struct lbuf *l, size_t n, char c)
{
	if (__builtin_expect(n <= sizeof(l->b) - 1 - l->n, 1)) {
		memset(l->b + l->n, c, n);
		l->n += n;
		return;
	}
	while (n) {
		size_t room = lb_room(l), k = n < room ? n : room;

		if (!k)
			return;
		memset(l->b + l->n, c, k);
		l->n += k;
		n -= k;
	}
}

/* decimal digits of v into d (no terminator), returns their count */
static inline size_t lb_digits(unsigned long long v, char d[24])
{
	char t[24], *p = t + sizeof(t);

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	memcpy(d, p, (size_t)(t + sizeof(t) - p));
	return (size_t)(t + sizeof(t) - p);
}

/* v right-aligned in width, padded with pad */
static inline void lb_num(struct lbuf *l, unsigned long long v, size_t width, char pad)
{
	char d[24];
	size_t n = lb_digits(v, d);

	if (n < width)
		lb_pad(l, width - n, pad);
	lb_put(l, d, n);
}

/* v left-aligned in width */
static inline void lb_num_left(struct lbuf *l, unsigned long long v, size_t width)
{
	char d[24];
	size_t n = lb_digits(v, d);

	lb_put(l, d, n);
	if (n < width)
		lb_pad(l, width - n, ' ');
}

static inline void lb_hex(struct lbuf *l, unsigned long long v)
{
	char t[16];
	size_t n = 0;

	lb_put(l, "0x", 2);
	do
		t[n++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4));
	while (n)
		lb_put(l, &t[--n], 1);
}

/* the line ends: a newline, and out gets it */
static inline void lb_end(struct lbuf *l)
{
	lb_put(l, "\n", 1);
	lb_flush(l);
}

#endif
