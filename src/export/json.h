/* SPDX-License-Identifier: MIT */
/*
 * json.h - JSON written as a stream to a FILE, for the exporters that write
 * JSON (chrome.c): a buffer the caller owns, strings escaped, numbers
 * formatted by hand (a big export is millions of objects; printf was most
 * of the time of report before lbuf.h).
 *
 * Strings: whatever bytes a trace holds (a comm, an event's string field,
 * a symbol) come out as a valid JSON string of valid UTF-8:
 *
 *   "  \  -> \" \\
 *   control bytes 0x00-0x1f -> \b \f \n \r \t, or \u00XX for the others
 *   DEL (0x7f) and well-formed UTF-8 -> as they are
 *   ill-formed UTF-8 -> U+FFFD for each maximal subpart of an ill-formed
 *       sequence (Unicode's recommended practice, ch. 3 "U+FFFD
 *       Substitution of Maximal Subparts"; WHATWG and Python decode alike):
 *       a stray continuation byte, a lead byte never valid (C0, C1,
 *       F5-FF), an overlong form, an encoded surrogate (ED A0-BF ..), a code
 *       point past U+10FFFF, a sequence cut short
 *
 * So the bytes are lost where they were not text, never the JSON: U+FFFD
 * is what a reader of the text would be shown anyway.
 *
 * Numbers: integers up to 2^53 - 1 in magnitude are JSON numbers; larger
 * ones are strings of their digits, since most JSON readers (JavaScript,
 * the trace viewers) hold numbers as doubles and would round them. Doubles
 * are written with the fewest digits that read back the same; NaN and the
 * infinities, which JSON has no numbers for, as the strings "NaN",
 * "Infinity" and "-Infinity".
 *
 * Write errors: the first failed fwrite() sets ->err (errno's value); the
 * caller checks it and stops.
 */
#ifndef TRAIL_EXPORT_JSON_H
#define TRAIL_EXPORT_JSON_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#define JSON_BUF 65536u
#define JSON_SAFE_INT ((1ull << 53) - 1)

struct json {
	FILE *out;
	size_t n;
	int err;
	/* json_us(): the digits of the last time's microseconds but the
	 * last 4, which change every 10 ms: times come in order */
	uint64_t hi;
	size_t hi_n;
	char hi_s[24];
	char b[JSON_BUF];
};

static inline void json_init(struct json *j, FILE *out)
{
	j->out = out;
	j->n = 0;
	j->err = 0;
	j->hi = 0;
	j->hi_n = 0;
}

static inline void json_flush(struct json *j)
{
	if (j->n && !j->err && fwrite(j->b, 1, j->n, j->out) != j->n)
		j->err = errno ? errno : EIO;
	j->n = 0;
}

/* At least k (<= JSON_BUF) bytes of room at j->b + j->n. */
static inline char *json_room(struct json *j, size_t k)
{
	if (__builtin_expect(JSON_BUF - j->n < k, 0))
		json_flush(j);
	return j->b + j->n;
}

static inline void json_put(struct json *j, const char *s, size_t len)
{
	if (__builtin_expect(len > JSON_BUF - j->n, 0)) {
		json_flush(j);
		if (len > JSON_BUF) {
			if (!j->err && fwrite(s, 1, len, j->out) != len)
				j->err = errno ? errno : EIO;
			return;
		}
	}
	memcpy(j->b + j->n, s, len);
	j->n += len;
}

/* a string constant: its length known at compile time */
#define json_lit(j, s) json_put(j, s, sizeof(s) - 1)

static inline void json_ch(struct json *j, char c)
{
	*json_room(j, 1) = c;
	j->n++;
}

static const char json_pairs[] = "00010203040506070809101112131415161718192021222324"
				 "25262728293031323334353637383940414243444546474849"
				 "50515253545556575859606162636465666768697071727374"
				 "75767778798081828384858687888990919293949596979899";

/* exactly 8 digits of v < 10^8, zero-padded: 32-bit arithmetic */
static inline void json_8digits(char *p, uint32_t v)
{
	for (int i = 6; i >= 0; i -= 2) {
		memcpy(p + i, json_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
}

/* Decimal digits of v at p, returns their count. Two digits a division
 * (digits were the most of an export's time); p must have 20 bytes of
 * room, all written (what follows the digits is garbage to overwrite). */
static inline size_t json_digits(char *p, uint64_t v)
{
	char t[40] = "", *e = t + 20, *s = e;
	uint32_t w;

	while (v >= 100000000u) { /* 8 digits at a time in 32 bits */
		s -= 8;
		json_8digits(s, (uint32_t)(v % 100000000u));
		v /= 100000000u;
	}
	for (w = (uint32_t)v; w >= 100; w /= 100) {
		s -= 2;
		memcpy(s, json_pairs + 2 * (w % 100), 2);
	}
	if (w >= 10) {
		s -= 2;
		memcpy(s, json_pairs + 2 * w, 2);
	} else {
		*--s = (char)('0' + w);
	}
	memcpy(p, s, 20);
	return (size_t)(e - s);
}

static inline void json_u64(struct json *j, uint64_t v)
{
	char *p = json_room(j, 24);

	if (v > JSON_SAFE_INT) {
		*p = '"';
		j->n += json_digits(p + 1, v) + 2;
		j->b[j->n - 1] = '"';
		return;
	}
	j->n += json_digits(p, v);
}

static inline void json_s64(struct json *j, int64_t v)
{
	uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char *p = json_room(j, 24);
	size_t q = m > JSON_SAFE_INT, k = 0;

	if (q)
		p[k++] = '"';
	if (v < 0)
		p[k++] = '-';
	k += json_digits(p + k, m);
	if (q)
		p[k++] = '"';
	j->n += k;
}

/* "0x1f": a hex field, as a string (it reads as the number it is shown as
 * in ftrace's text, and keeps all 64 bits) */
static inline void json_hex(struct json *j, uint64_t v)
{
	char t[16], *p = json_room(j, 20);
	size_t n = 0, k = 0;

	do
		t[n++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4));
	p[k++] = '"';
	p[k++] = '0';
	p[k++] = 'x';
	while (n)
		p[k++] = t[--n];
	p[k++] = '"';
	j->n += k;
}

/* nanoseconds as microseconds with three decimals: 12345678 -> 12345.678
 * (the Chrome trace format's ts and dur are in microseconds) */
static inline void json_us(struct json *j, uint64_t ns)
{
	char *p = json_room(j, 32);
	uint64_t us = ns / 1000, hi = us / 10000;
	unsigned lo = (unsigned)(us % 10000), f = (unsigned)(ns % 1000);
	size_t k;

	if (!hi) {
		k = json_digits(p, us);
	} else {
		if (hi != j->hi) {
			j->hi = hi;
			j->hi_n = json_digits(j->hi_s, hi);
		}
		memcpy(p, j->hi_s, 20);
		k = j->hi_n;
		memcpy(p + k, json_pairs + 2 * (lo / 100), 2);
		memcpy(p + k + 2, json_pairs + 2 * (lo % 100), 2);
		k += 4;
	}
	p[k++] = '.';
	memcpy(p + k, json_pairs + 2 * (f / 10), 2);
	p[k + 2] = (char)('0' + f % 10);
	j->n += k + 3;
}

/*
 * The fast way for the common value with at most 3 decimals (0.25, 12.5,
 * 1000): k = d * 1000 an integer and k / 1000 the same double (both the
 * correctly rounded value of the decimal k/1000, so that decimal reads
 * back as d), written with its trailing zeros cut. Below 10^9 doubles are
 * closer than 0.001, so no shorter decimal could be d. 0 if d is not such
 * a value (or is 0: -0 keeps its sign the slow way).
 */
static inline int json_milli(struct json *j, double d, int is_float)
{
	double m = d * 1000.0;
	int64_t k;
	uint64_t a;
	char *p;
	size_t n = 0;
	unsigned f;

	if (!(d > -1e9 && d < 1e9) || d == 0)
		return 0;
	k = (int64_t)m;
	if ((double)k != m || (is_float ? (float)((double)k / 1000.0) != (float)d
					: (double)k / 1000.0 != d))
		return 0;
	p = json_room(j, 32);
	a = k < 0 ? (uint64_t)-k : (uint64_t)k;
	if (k < 0)
		p[n++] = '-';
	n += json_digits(p + n, a / 1000);
	f = (unsigned)(a % 1000);
	if (f) {
		p[n++] = '.';
		p[n++] = (char)('0' + f / 100);
		if ((f %= 100)) {
			p[n++] = (char)('0' + f / 10);
			if (f % 10)
				p[n++] = (char)('0' + f % 10);
		}
	}
	j->n += n;
	return 1;
}

static inline void json_double(struct json *j, double d, int is_float)
{
	char t[40];
	int n = 0;

	if (isnan(d)) {
		json_lit(j, "\"NaN\"");
		return;
	}
	if (isinf(d)) {
		if (d < 0)
			json_lit(j, "\"-Infinity\"");
		else
			json_lit(j, "\"Infinity\"");
		return;
	}
	if (json_milli(j, d, is_float))
		return;
	/* the shortest of these precisions that reads back the same value;
	 * %g's forms ("1e+20", "-0", "0.5") are all JSON numbers */
	for (int prec = is_float ? 6 : 15; prec <= 17; prec++) {
		n = snprintf(t, sizeof(t), "%.*g", prec, d);
		if (is_float ? (float)strtod(t, NULL) == (float)d : strtod(t, NULL) == d)
			break;
	}
	json_put(j, t, (size_t)n);
}

/* what a byte needs: 0 nothing, 1 an escape, 2 a UTF-8 check */
static inline uint8_t json_class(uint8_t c)
{
	return c < 0x20 || c == '"' || c == '\\' ? 1 : c >= 0x80 ? 2 : 0;
}

/* The bytes s[0..len) as the contents of a JSON string (no quotes). */
static inline void json_esc(struct json *j, const char *str, size_t len)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t i = 0;

	while (i < len) {
		size_t run = i;
		uint8_t c;

		while (run < len && !json_class(s[run]))
			run++;
		if (run > i)
			json_put(j, (const char *)s + i, run - i);
		if (run == len)
			return;
		i = run;
		c = s[i];
		if (c >= 0x80) {
			int ok;
			size_t k = trail__utf8_seq(s + i, len - i, &ok);

			if (ok)
				json_put(j, (const char *)s + i, k);
			else
				json_lit(j, "\xef\xbf\xbd"); /* U+FFFD */
			i += k;
			continue;
		}
		switch (c) {
		case '"': json_lit(j, "\\\""); break;
		case '\\': json_lit(j, "\\\\"); break;
		case '\b': json_lit(j, "\\b"); break;
		case '\f': json_lit(j, "\\f"); break;
		case '\n': json_lit(j, "\\n"); break;
		case '\r': json_lit(j, "\\r"); break;
		case '\t': json_lit(j, "\\t"); break;
		default: {
			char e[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4],
				     "0123456789abcdef"[c & 15]};

			json_put(j, e, 6);
		}
		}
		i++;
	}
}

/* "bytes", escaped */
static inline void json_str(struct json *j, const char *s, size_t len)
{
	json_ch(j, '"');
	json_esc(j, s, len);
	json_ch(j, '"');
}

static inline void json_cstr(struct json *j, const char *s)
{
	json_str(j, s, strlen(s));
}

#endif /* TRAIL_EXPORT_JSON_H */
