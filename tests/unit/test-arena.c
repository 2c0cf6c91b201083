/* SPDX-License-Identifier: MIT */
/*
 * test-arena.c - geometry of a session arena (src/common/arena.c): the
 * layout the recorder derives from a buffer size and chunk size, formatting
 * a header, and the check every process runs on an arena it maps. The
 * arena is shared with processes the recorder does not trust, so a header
 * with any geometry field altered, or claiming more memory than is mapped,
 * must be refused with a reason, and a refused check must leave the
 * caller's geometry alone.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/arena.h"

#define PAGE 4096u

/* ------------------------------------------------------------------ geom */

static const struct geom_bad_row {
	uint64_t buffer;
	uint32_t chunk;
} geom_bad_rows[] = {
	{1 << 20, 0},                 /* no chunk size */
	{1 << 20, 2048},              /* below TRAIL_CHUNK_MIN */
	{1 << 20, 4095},              /* not a power of two */
	{1 << 20, 4097},
	{1 << 20, 3 * 4096},
	{1 << 20, 65536 + 4096},
	{1ull << 30, 1u << 25},       /* above TRAIL_CHUNK_MAX */
	{1ull << 33, 0x80000000u},
	{4096, 4096},                 /* one chunk: writers need two */
	{8191, 4096},                 /* still one whole chunk */
	{0, 4096},
	{131071, 65536},
	{4096ull * ((1u << 20) + 1), 4096}, /* more than 2^20 chunks */
	{~0ull, 4096},
};

TEST(geom_rejects_bad_parameters)
{
	for (size_t i = 0; i < sizeof(geom_bad_rows) / sizeof(geom_bad_rows[0]); i++) {
		struct trail_arena_geom g;
		int rc = trail__arena_geom(&g, geom_bad_rows[i].buffer,
					   geom_bad_rows[i].chunk, 0);

		if (rc != -EINVAL) {
			fprintf(stderr, "  geom(%llu, %u) = %d, want -EINVAL\n",
				(unsigned long long)geom_bad_rows[i].buffer,
				geom_bad_rows[i].chunk, rc);
			check_failures++;
		}
	}
}

/* Every property a sound layout must have; returns failures. */
static int check_layout(const struct trail_arena_geom *g, uint64_t buffer,
			uint32_t chunk, uint32_t spec_len)
{
	int f0 = check_failures;

	CHECK_EQ(g->chunk_size, chunk);
	CHECK_EQ(g->nchunks, buffer / chunk);
	CHECK_EQ(g->spec_len, spec_len);
	CHECK(g->nchunks >= 2);
	/* regions in order, each past the end of the previous one */
	CHECK(g->ctab_off >= sizeof(struct trail_arena_hdr));
	CHECK(g->streams_off >= g->ctab_off + (uint64_t)g->nchunks * 8);
	CHECK(g->procs_off >= g->streams_off +
				      (uint64_t)g->max_streams * sizeof(struct trail_stream));
	CHECK(g->evidx_off >= g->procs_off +
				      (uint64_t)g->max_procs * sizeof(struct trail_proc));
	CHECK(g->evdata_off >= g->evidx_off + (uint64_t)g->max_events * 4);
	CHECK(g->mods_off >= g->evdata_off + g->evdata_size);
	CHECK(g->spec_off >= g->mods_off + (uint64_t)g->max_mods * sizeof(struct trail_mod));
	CHECK(g->max_mods >= 128 && g->max_mods <= 4096);
	CHECK(g->chunks_off >= g->spec_off + spec_len + 1); /* the NUL fits */
	CHECK_EQ(g->size, g->chunks_off + (uint64_t)g->nchunks * chunk);
	/* alignment: atomics and cache lines, chunks on pages */
	CHECK_EQ(g->ctab_off % TRAIL_CACHELINE, 0);
	CHECK_EQ(g->streams_off % TRAIL_CACHELINE, 0);
	CHECK_EQ(g->procs_off % TRAIL_CACHELINE, 0);
	CHECK_EQ(g->evidx_off % 8, 0);
	CHECK_EQ(g->evdata_off % 16, 0);
	CHECK_EQ(g->chunks_off % PAGE, 0);
	CHECK_EQ(g->size % PAGE, 0);
	/* sizing rules: stream slots >= 1024 and <= 65536, event data
	 * between 64 KiB and 2 MiB, one event per 64 bytes of it */
	CHECK(g->max_streams >= 1024 && g->max_streams <= 65536);
	CHECK(g->max_streams >= g->nchunks || g->max_streams == 65536);
	CHECK(g->max_procs > 0);
	CHECK(g->evdata_size >= (64u << 10) && g->evdata_size <= (2u << 20));
	CHECK_EQ(g->max_events, g->evdata_size / 64);
	return check_failures - f0;
}

static const struct geom_ok_row {
	uint64_t buffer;
	uint32_t chunk, spec_len;
} geom_ok_rows[] = {
	{8192, 4096, 0},                  /* the smallest arena */
	{8192 + 4095, 4096, 0},           /* a partial chunk is dropped */
	{1 << 20, 4096, 10},
	{32u << 20, 65536, 4096},         /* the defaults */
	{32u << 20, 65536, 4095},         /* spec + NUL exactly a page */
	{2u << 24, 1u << 24, 1},          /* largest chunks */
	{4096ull << 20, 4096, 100},       /* 2^20 chunks: the most */
	{1ull << 30, 1u << 20, 0},
};

TEST(geom_layout_properties)
{
	for (size_t i = 0; i < sizeof(geom_ok_rows) / sizeof(geom_ok_rows[0]); i++) {
		const struct geom_ok_row *r = &geom_ok_rows[i];
		struct trail_arena_geom g;

		memset(&g, 0xa5, sizeof(g));
		if (trail__arena_geom(&g, r->buffer, r->chunk, r->spec_len)) {
			fprintf(stderr, "  geom(%llu, %u) refused\n",
				(unsigned long long)r->buffer, r->chunk);
			check_failures++;
			continue;
		}
		if (check_layout(&g, r->buffer, r->chunk, r->spec_len))
			fprintf(stderr, "  ... in row %zu\n", i);
	}
}

TEST(geom_spec_length_moves_chunks)
{
	/* the spec area grows the arena by whole pages only */
	struct trail_arena_geom a, b;

	CHECK_EQ(trail__arena_geom(&a, 1 << 20, 4096, 0), 0);
	CHECK_EQ(trail__arena_geom(&b, 1 << 20, 4096, 3 * PAGE), 0);
	CHECK_EQ(a.spec_off, b.spec_off);
	CHECK(b.chunks_off > a.chunks_off);
	CHECK_EQ((b.chunks_off - a.chunks_off) % PAGE, 0);
	CHECK_EQ(b.size - a.size, b.chunks_off - a.chunks_off);
}

TEST(geom_spec_nul_at_a_page_boundary)
{
	/* a spec ending exactly at a page boundary: its NUL needs one more
	 * byte, so the chunks start a page later (spec_off does not depend
	 * on the spec length, so the boundary can be aimed at) */
	struct trail_arena_geom a, b;
	uint32_t len;

	CHECK_EQ(trail__arena_geom(&a, 1 << 20, 4096, 0), 0);
	len = (uint32_t)(PAGE - a.spec_off % PAGE);
	CHECK_EQ(trail__arena_geom(&b, 1 << 20, 4096, len), 0);
	CHECK_EQ((b.spec_off + len) % PAGE, 0);
	CHECK(b.chunks_off >= b.spec_off + len + 1);
	CHECK_EQ(b.chunks_off, b.spec_off + len + PAGE);
	/* one byte shorter: the NUL takes the last byte of the page */
	CHECK_EQ(trail__arena_geom(&b, 1 << 20, 4096, len - 1), 0);
	CHECK_EQ(b.chunks_off, b.spec_off + len);
}

/* ------------------------------------------------------- format + check */

struct arena {
	void *base;
	struct trail_arena_geom g;
};

static void arena_new(struct arena *a, uint64_t buffer, uint32_t chunk,
		      const char *spec)
{
	CHECK_EQ(trail__arena_geom(&a->g, buffer, chunk, (uint32_t)strlen(spec)), 0);
	a->base = aligned_alloc(PAGE, a->g.size);
	if (!a->base)
		abort();
	memset(a->base, 0, a->g.size);
	trail__arena_format(a->base, &a->g, 0x1122334455667788ull,
			    TRAIL_ARENA_OVERWRITE, TRAIL_CLOCK_MONO, spec, 4242, 777);
}

static int geom_equal(const struct trail_arena_geom *a,
		      const struct trail_arena_geom *b)
{
	return a->size == b->size && a->chunk_size == b->chunk_size &&
	       a->nchunks == b->nchunks && a->max_streams == b->max_streams &&
	       a->max_procs == b->max_procs && a->max_events == b->max_events &&
	       a->evdata_size == b->evdata_size && a->spec_len == b->spec_len &&
	       a->ctab_off == b->ctab_off && a->streams_off == b->streams_off &&
	       a->procs_off == b->procs_off && a->evidx_off == b->evidx_off &&
	       a->evdata_off == b->evdata_off && a->spec_off == b->spec_off &&
	       a->chunks_off == b->chunks_off;
}

TEST(format_check_round_trip)
{
	static const char spec[] = "app:*\nnet";
	struct arena a;
	struct trail_arena_hdr *h;
	struct trail_arena_geom g;
	const char *why = "unset";

	arena_new(&a, 1 << 20, 8192, spec);
	h = a.base;
	CHECK_EQ(trail__arena_check(a.base, a.g.size, &g, &why), 0);
	CHECK(geom_equal(&g, &a.g));
	/* a bigger mapping is fine too */
	CHECK_EQ(trail__arena_check(a.base, a.g.size + PAGE, &g, &why), 0);

	/* what format wrote */
	CHECK(h->magic == TRAIL_ARENA_MAGIC);
	CHECK_EQ(h->version, TRAIL_ARENA_VERSION);
	CHECK_EQ(h->hdr_size, sizeof(*h));
	CHECK(h->session_id == 0x1122334455667788ull);
	CHECK_EQ(h->flags, TRAIL_ARENA_OVERWRITE);
	CHECK_EQ(h->clock, TRAIL_CLOCK_MONO);
	CHECK_EQ(h->recorder_pid, 4242);
	CHECK(h->recorder_start == 777);
	CHECK_EQ(h->arena_size, a.g.size);
	CHECK_EQ(h->nchunks, 128);
	CHECK_EQ(h->nfree, 128);      /* every chunk starts FREE */
	CHECK(h->evdata_used > 0);    /* evdata offset 0 means "none" */
	CHECK_EQ(h->spec_len, strlen(spec));
	CHECK_STR((const char *)a.base + h->spec_off, spec);
	/* the shared counters do not share a cache line with the geometry */
	CHECK_EQ(offsetof(struct trail_arena_hdr, publish_seq) % TRAIL_CACHELINE, 0);
	CHECK_EQ(offsetof(struct trail_arena_hdr, nprocs) % TRAIL_CACHELINE, 0);
	free(a.base);

	/* an empty spec: still NUL-terminated */
	arena_new(&a, 1 << 20, 4096, "");
	CHECK_EQ(trail__arena_check(a.base, a.g.size, &g, &why), 0);
	CHECK_EQ(((const char *)a.base)[a.g.spec_off], 0);
	free(a.base);
}

/* Alterations of a formatted header, each refused with its reason. */
enum { SET32, SET64, ADD32, ADD64 };

static const struct chk_row {
	const char *what;
	size_t off;
	int op;
	uint64_t v;
	const char *why;
} chk_rows[] = {
	{"magic", offsetof(struct trail_arena_hdr, magic), ADD64, 1, "bad arena magic"},
	{"magic zero", offsetof(struct trail_arena_hdr, magic), SET64, 0, "bad arena magic"},
	{"version next", offsetof(struct trail_arena_hdr, version), SET32, TRAIL_ARENA_VERSION + 1, "unsupported arena version"},
	{"version 0", offsetof(struct trail_arena_hdr, version), SET32, 0, "unsupported arena version"},
	{"hdr_size", offsetof(struct trail_arena_hdr, hdr_size), ADD32, 64, "unsupported arena version"},
	{"arena_size", offsetof(struct trail_arena_hdr, arena_size), ADD64, PAGE, "inconsistent arena geometry"},
	{"arena_size smaller", offsetof(struct trail_arena_hdr, arena_size), ADD64, -(uint64_t)PAGE, "inconsistent arena geometry"},
	{"chunk_size doubled", offsetof(struct trail_arena_hdr, chunk_size), SET32, 16384, "inconsistent arena geometry"},
	{"chunk_size not 2^n", offsetof(struct trail_arena_hdr, chunk_size), SET32, 8193, "inconsistent arena geometry"},
	{"chunk_size 0", offsetof(struct trail_arena_hdr, chunk_size), SET32, 0, "inconsistent arena geometry"},
	{"nchunks + 1", offsetof(struct trail_arena_hdr, nchunks), ADD32, 1, "inconsistent arena geometry"},
	{"nchunks 1", offsetof(struct trail_arena_hdr, nchunks), SET32, 1, "inconsistent arena geometry"},
	{"nchunks 0", offsetof(struct trail_arena_hdr, nchunks), SET32, 0, "inconsistent arena geometry"},
	{"nchunks huge", offsetof(struct trail_arena_hdr, nchunks), SET32, 0xffffffffu, "inconsistent arena geometry"},
	{"max_streams", offsetof(struct trail_arena_hdr, max_streams), ADD32, 1, "inconsistent arena geometry"},
	{"max_procs", offsetof(struct trail_arena_hdr, max_procs), ADD32, -1u, "inconsistent arena geometry"},
	{"max_events", offsetof(struct trail_arena_hdr, max_events), ADD32, 1, "inconsistent arena geometry"},
	{"evdata_size", offsetof(struct trail_arena_hdr, evdata_size), ADD32, 64, "inconsistent arena geometry"},
	{"spec_len huge", offsetof(struct trail_arena_hdr, spec_len), SET32, 0xffffffffu, "inconsistent arena geometry"},
	{"spec_len + 1 page", offsetof(struct trail_arena_hdr, spec_len), ADD32, PAGE, "inconsistent arena geometry"},
	{"ctab_off", offsetof(struct trail_arena_hdr, ctab_off), ADD64, 64, "inconsistent arena geometry"},
	{"streams_off", offsetof(struct trail_arena_hdr, streams_off), ADD64, 64, "inconsistent arena geometry"},
	{"procs_off", offsetof(struct trail_arena_hdr, procs_off), ADD64, -(uint64_t)64, "inconsistent arena geometry"},
	{"evidx_off", offsetof(struct trail_arena_hdr, evidx_off), ADD64, 8, "inconsistent arena geometry"},
	{"evdata_off", offsetof(struct trail_arena_hdr, evdata_off), ADD64, 64, "inconsistent arena geometry"},
	{"spec_off", offsetof(struct trail_arena_hdr, spec_off), ADD64, 1, "inconsistent arena geometry"},
	{"chunks_off", offsetof(struct trail_arena_hdr, chunks_off), ADD64, PAGE, "inconsistent arena geometry"},
	{"chunks_off far", offsetof(struct trail_arena_hdr, chunks_off), SET64, 1ull << 62, "inconsistent arena geometry"},
	{"clock 0", offsetof(struct trail_arena_hdr, clock), SET32, 0, "bad clock"},
	{"clock 3", offsetof(struct trail_arena_hdr, clock), SET32, 3, "bad clock"},
};

TEST(check_rejects_altered_headers)
{
	struct arena a;

	arena_new(&a, 1 << 20, 8192, "app:*");
	for (size_t i = 0; i < sizeof(chk_rows) / sizeof(chk_rows[0]); i++) {
		const struct chk_row *c = &chk_rows[i];
		uint8_t save[sizeof(struct trail_arena_hdr)];
		uint8_t *p = (uint8_t *)a.base + c->off;
		struct trail_arena_geom g;
		const char *why = NULL;
		uint32_t v32;
		uint64_t v64;
		int rc;

		memcpy(save, a.base, sizeof(save));
		switch (c->op) {
		case SET32:
		case ADD32:
			memcpy(&v32, p, 4);
			v32 = c->op == SET32 ? (uint32_t)c->v : v32 + (uint32_t)c->v;
			memcpy(p, &v32, 4);
			break;
		default:
			memcpy(&v64, p, 8);
			v64 = c->op == SET64 ? c->v : v64 + c->v;
			memcpy(p, &v64, 8);
			break;
		}
		/* a failed check leaves the caller's geometry untouched */
		memset(&g, 0x5a, sizeof(g));
		rc = trail__arena_check(a.base, a.g.size, &g, &why);
		if (rc != -EPROTO || !why || strcmp(why, c->why)) {
			fprintf(stderr, "  %s: rc %d, \"%s\", want -EPROTO, \"%s\"\n",
				c->what, rc, why ? why : "(null)", c->why);
			check_failures++;
		}
		for (size_t k = 0; k < sizeof(g); k++)
			if (((const uint8_t *)&g)[k] != 0x5a) {
				fprintf(stderr, "  %s: geometry written on failure\n", c->what);
				check_failures++;
				break;
			}
		memcpy(a.base, save, sizeof(save));
		/* and the restored header passes again */
		CHECK_EQ(trail__arena_check(a.base, a.g.size, &g, &why), 0);
	}
	free(a.base);
}

TEST(check_rejects_small_mappings)
{
	struct arena a;
	struct trail_arena_geom g;
	const char *why = NULL;

	arena_new(&a, 1 << 20, 4096, "");
	CHECK_EQ(trail__arena_check(a.base, a.g.size - 1, &g, &why), -EPROTO);
	CHECK_STR(why, "arena larger than its mapping");
	CHECK_EQ(trail__arena_check(a.base, a.g.chunks_off, &g, &why), -EPROTO);
	CHECK_STR(why, "arena larger than its mapping");
	CHECK_EQ(trail__arena_check(a.base, sizeof(struct trail_arena_hdr), &g, &why),
		 -EPROTO);
	CHECK_STR(why, "arena larger than its mapping");
	CHECK_EQ(trail__arena_check(a.base, sizeof(struct trail_arena_hdr) - 1, &g, &why),
		 -EPROTO);
	CHECK_STR(why, "arena smaller than its header");
	CHECK_EQ(trail__arena_check(a.base, 0, &g, &why), -EPROTO);
	CHECK_STR(why, "arena smaller than its header");
	free(a.base);
}

TEST(check_rejects_huge_consistent_claim)
{
	/* a hostile header whose geometry is self-consistent (computed by
	 * the same rules) but describes 2^20 chunks of 16 MiB, with only a
	 * page actually mapped: refused before anything past the header
	 * is touched */
	struct trail_arena_hdr *h = aligned_alloc(PAGE, PAGE);
	struct trail_arena_geom want, g;
	const char *why = NULL;

	if (!h)
		abort();
	memset(h, 0, PAGE);
	CHECK_EQ(trail__arena_geom(&want, (uint64_t)TRAIL_CHUNK_MAX << 20,
				   TRAIL_CHUNK_MAX, 0), 0);
	h->magic = TRAIL_ARENA_MAGIC;
	h->version = TRAIL_ARENA_VERSION;
	h->hdr_size = sizeof(*h);
	h->arena_size = want.size;
	h->clock = TRAIL_CLOCK_TSC;
	h->chunk_size = want.chunk_size;
	h->nchunks = want.nchunks;
	h->max_streams = want.max_streams;
	h->max_procs = want.max_procs;
	h->max_events = want.max_events;
	h->evdata_size = want.evdata_size;
	h->max_mods = want.max_mods;
	h->mods_off = want.mods_off;
	h->spec_len = want.spec_len;
	h->ctab_off = want.ctab_off;
	h->streams_off = want.streams_off;
	h->procs_off = want.procs_off;
	h->evidx_off = want.evidx_off;
	h->evdata_off = want.evdata_off;
	h->spec_off = want.spec_off;
	h->chunks_off = want.chunks_off;
	CHECK_EQ(trail__arena_check(h, PAGE, &g, &why), -EPROTO);
	CHECK_STR(why, "arena larger than its mapping");
	/* the same header with a mapping as large as it claims is sound:
	 * so it was the size, and only the size, that was refused */
	CHECK_EQ(trail__arena_check(h, want.size, &g, &why), 0);
	free(h);
}

TEST_MAIN(CHECK_T(geom_rejects_bad_parameters), CHECK_T(geom_layout_properties),
	  CHECK_T(geom_spec_length_moves_chunks),
	  CHECK_T(geom_spec_nul_at_a_page_boundary), CHECK_T(format_check_round_trip),
	  CHECK_T(check_rejects_altered_headers),
	  CHECK_T(check_rejects_small_mappings),
	  CHECK_T(check_rejects_huge_consistent_claim))
