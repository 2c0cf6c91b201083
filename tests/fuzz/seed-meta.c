/* SPDX-License-Identifier: MIT */
/*
 * seed-meta.c - writes the seeds of the meta fuzz target: each seed is an
 * event description blob made by the real TRAIL_EVENT macro followed by a
 * payload packed by its real call site (this program provides trail__write
 * itself and runs without libtrail). Every field kind and size is declared,
 * strings empty, NULL and at the length limit, sequences empty and full.
 *
 *   seed-meta DIR      (tests/fuzz/make-corpus.sh runs it)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trail/trail.h>

#include "common/meta.h"

TRAIL_EVENT(seed, ints,
	TRAIL_ARGS(int8_t, a, uint16_t, b, int32_t, c, uint64_t, d, bool, ok,
		   const void *, p),
	TRAIL_FIELDS(trail_field_int(a) trail_field_int(b) trail_field_hex(c)
		     trail_field_int(d) trail_field_bool(ok) trail_field_ptr(p)))

TRAIL_EVENT(seed, floats,
	TRAIL_ARGS(float, f, double, g),
	TRAIL_FIELDS(trail_field_float(f) trail_field_float(g)))

TRAIL_EVENT(seed, strings,
	TRAIL_ARGS(const char *, s, const char *, t),
	TRAIL_FIELDS(trail_field_string(s) trail_field_string(t)))

TRAIL_EVENT(seed, arrays,
	TRAIL_ARGS(const uint16_t *, w, const uint8_t *, b),
	TRAIL_FIELDS(trail_field_array(w, 3) trail_field_array_hex(b, 4)))

TRAIL_EVENT(seed, seqs,
	TRAIL_ARGS(const int32_t *, q, size_t, nq, const uint64_t *, x, unsigned, nx),
	TRAIL_FIELDS(trail_field_seq(q, nq) trail_field_seq_hex(x, nx)))

TRAIL_EVENT(seed, nothing, TRAIL_ARGS(), TRAIL_FIELDS())

TRAIL_EVENT(seed_provider_with_a_long_name, request,
	TRAIL_ARGS(int, fd, const char *, path, uint64_t, bytes, double, ms),
	TRAIL_FIELDS(trail_field_int(fd) trail_field_string(path)
		     trail_field_hex(bytes) trail_field_float(ms)))

static const char *dir;
static const char *seed_name;
static int failed;

/* The call site's output: blob then payload, into DIR/seed_name. */
void trail__write(struct trail_event *ev, const void *payload, uint32_t len)
{
	const struct trail_meta_hdr *h = ev->meta;
	struct trail_meta m;
	const char *why;
	char path[4096];
	FILE *f;

	if (trail__meta_parse(ev->meta, h->size, &m, &why)) {
		fprintf(stderr, "seed-meta: %s: %s\n", seed_name, why);
		failed = 1;
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, seed_name);
	f = fopen(path, "wb");
	if (!f || fwrite(ev->meta, 1, h->size, f) != h->size ||
	    fwrite(payload, 1, len, f) != len || fclose(f)) {
		perror(path);
		failed = 1;
	}
}

#define SEED(name, prov, ev, ...)                                             \
	do {                                                                  \
		seed_name = name;                                             \
		trail__state_##prov##_##ev = 1;                               \
		trail(prov, ev, __VA_ARGS__);                                 \
	} while (0)

int main(int argc, char **argv)
{
	static const uint16_t w[3] = {1, 0x7fff, 0xffff};
	static const uint8_t b[4] = {0xde, 0xad, 0xbe, 0xef};
	static const int32_t q[5] = {-1, 0, 1, INT32_MIN, INT32_MAX};
	static const uint64_t x[2] = {0, UINT64_MAX};
	static int32_t many[TRAIL_SEQ_MAX + 1];
	static char longest[TRAIL_STRING_MAX + 2];

	if (argc != 2) {
		fprintf(stderr, "usage: seed-meta DIR\n");
		return 2;
	}
	dir = argv[1];
	memset(longest, 'x', sizeof(longest) - 1);

	SEED("ints", seed, ints, -5, 65535, -0x1234, UINT64_MAX, true, (void *)0x1000);
	SEED("floats", seed, floats, 1.5f, -2.25);
	SEED("strings", seed, strings, "hello", "");
	SEED("strings-null", seed, strings, NULL, "after a NULL");
	SEED("strings-longest", seed, strings, longest, "cut at the limit");
	SEED("arrays", seed, arrays, w, b);
	SEED("seqs", seed, seqs, q, 5, x, 2);
	SEED("seqs-empty", seed, seqs, q, 0, x, 0);
	SEED("seqs-most", seed, seqs, many, TRAIL_SEQ_MAX + 1, x, 1);
	SEED("nothing", seed, nothing);
	/* the bundled example's request event, under a longer provider */
	SEED("request", seed_provider_with_a_long_name, request, 10,
	     "/api/v1/users?id=42", 0x800, 0.75);
	return failed;
}
