/* SPDX-License-Identifier: MIT */
/*
 * test-shm.c - the recorder's checked accessors into the session arena
 * (src/recorder/shm.h). The arena is written by processes the recorder
 * does not trust: every index must be refused past its table, a commit
 * word claiming more than a chunk holds is refused, table counts are
 * clamped, and an event table entry pointing outside the event data is
 * "not yet" or "broken", never a pointer out of the region.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "recorder/shm.h"

#define CHUNK 4096u

static struct rec_shm make(void)
{
	struct rec_shm m;

	memset(&m, 0, sizeof(m));
	if (trail__arena_geom(&m.g, 4 * CHUNK, CHUNK, 0) == 0)
		m.base = calloc(1, m.g.size);
	return m;
}

static int inside(const struct rec_shm *m, const void *p, size_t len)
{
	const uint8_t *b = p;

	return b >= m->base && b + len <= m->base + m->g.size;
}

TEST(indices_are_bounded)
{
	struct rec_shm m = make();
	const struct { const char *table; uint32_t max; } rows[] = {
		{"cword", m.g.nchunks}, {"chunk", m.g.nchunks}, {"stream", m.g.max_streams},
		{"proc", m.g.max_procs}, {"mod", m.g.max_mods},
	};

	CHECK(m.base != NULL);
	if (!m.base)
		return;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		/* the last entry in, and the first out, 2^31, ~0 */
		const uint32_t probe[] = {0, rows[r].max - 1, rows[r].max, rows[r].max + 1,
					  0x80000000u, ~0u};

		for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++) {
			uint32_t i = probe[k];
			const void *p = NULL;
			size_t len = 0;

			switch (r) {
			case 0: p = shm_cword(&m, i); len = 8; break;
			case 1: p = shm_chunk(&m, i); len = CHUNK; break;
			case 2: p = shm_stream(&m, i); len = sizeof(struct trail_stream); break;
			case 3: p = shm_proc(&m, i); len = sizeof(struct trail_proc); break;
			case 4: p = shm_mod(&m, i); len = sizeof(struct trail_mod); break;
			}
			if (i < rows[r].max ? !p || !inside(&m, p, len) : p != NULL) {
				fprintf(stderr, "  shm_%s(%u) = %p (max %u)\n", rows[r].table, i, p,
					rows[r].max);
				check_failures++;
			}
		}
	}
	free(m.base);
}

static const struct commit_row {
	uint32_t events, bytes;
	int ok;
} commit_rows[] = {
	{0, 0, 1},                                     /* empty */
	{1, 4, 1},                                     /* one smallest record */
	{1, CHUNK - 64, 1},                            /* the chunk full */
	{(CHUNK - 64) / 4, CHUNK - 64, 1},             /* every record 4 bytes */
	{1, CHUNK - 63, 0},                            /* a byte past the chunk */
	{1, ~0u, 0},
	{2, 4, 0},                                     /* events no record could hold */
	{1, 0, 0},
	{~0u, CHUNK - 64, 0},
};

TEST(commit_words_are_bounded)
{
	struct rec_shm m = make();

	if (!m.base)
		return;
	for (size_t r = 0; r < sizeof(commit_rows) / sizeof(commit_rows[0]); r++) {
		struct trail_chunk_hdr *c = shm_chunk(&m, 1);
		uint64_t w = (uint64_t)commit_rows[r].events << 32 | commit_rows[r].bytes, got = 0;
		int rc;

		c->commit = w;
		rc = shm_chunk_commit(&m, c, &got);
		CHECK_EQ(got, w);
		if ((rc == 0) != commit_rows[r].ok) {
			fprintf(stderr, "  commit %u events %u bytes: %d\n", commit_rows[r].events,
				commit_rows[r].bytes, rc);
			check_failures++;
		}
		CHECK_EQ(shm_chunk_records(&m, c, commit_rows[r].bytes) != NULL,
			 commit_rows[r].bytes <= CHUNK - 64);
	}
	free(m.base);
}

TEST(counts_are_clamped)
{
	struct rec_shm m = make();
	struct trail_arena_hdr *h = shm_hdr(&m);

	if (!m.base)
		return;
	h->nprocs = 3;
	h->nevents = 5;
	h->nmods = 7;
	CHECK_EQ(shm_nprocs(&m), 3);
	CHECK_EQ(shm_procs_refused(&m), 0);
	CHECK_EQ(shm_nevents(&m), 5);
	CHECK_EQ(shm_nmods(&m), 7);
	h->nprocs = m.g.max_procs + 10; /* refused ones count on */
	h->nevents = ~0u;
	h->nmods = m.g.max_mods + 1;
	CHECK_EQ(shm_nprocs(&m), m.g.max_procs);
	CHECK_EQ(shm_procs_refused(&m), 10);
	CHECK_EQ(shm_nevents(&m), m.g.max_events);
	CHECK_EQ(shm_nmods(&m), m.g.max_mods);
	free(m.base);
}

/* An event table entry: evidx[id] = off, a record at off. */
static const struct event_row {
	uint32_t id;  /* asked */
	uint32_t off; /* evidx[id] (0: none yet) */
	uint32_t rec_id, size;
	int want;     /* 1 there, 0 not yet, -1 broken */
} event_rows[] = {
	{0, 64, 0, 100, 1},
	{0, 0, 0, 100, 0},                    /* not published yet */
	{0, ~0u, 0, 100, 0},                  /* offset past the data */
	{0, 64, 1, 100, -1},                  /* the record names another id */
	{0, 64, 0, 65536 - 64 - 16 + 1, -1},  /* blob runs past the data */
	{0, 64, 0, ~0u, -1},
	{~0u, 64, 0, 100, -1},                /* id past the table */
};

TEST(event_entries_are_bounded)
{
	for (size_t r = 0; r < sizeof(event_rows) / sizeof(event_rows[0]); r++) {
		const struct event_row *e = &event_rows[r];
		struct rec_shm m = make();
		struct trail_evrec rec = {e->size, 0, e->rec_id, 0}, got;
		const uint8_t *blob = NULL;
		int rc;

		if (!m.base)
			return;
		CHECK_EQ(m.g.evdata_size, 65536);
		if (e->id < m.g.max_events)
			((uint32_t *)(m.base + m.g.evidx_off))[e->id] = e->off;
		memcpy(m.base + m.g.evdata_off + 64, &rec, sizeof(rec));
		rc = shm_event(&m, e->id, &got, &blob);
		if (rc != e->want) {
			fprintf(stderr, "  row %zu: %d, want %d\n", r, rc, e->want);
			check_failures++;
		}
		if (rc == 1)
			CHECK(inside(&m, blob, got.size) &&
			      blob >= m.base + m.g.evdata_off &&
			      blob + got.size <= m.base + m.g.evdata_off + m.g.evdata_size);
		free(m.base);
	}
}

TEST_MAIN(CHECK_T(indices_are_bounded), CHECK_T(commit_words_are_bounded),
	  CHECK_T(counts_are_clamped), CHECK_T(event_entries_are_bounded))
