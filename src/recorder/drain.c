/* SPDX-License-Identifier: MIT */
/*
 * drain.c - the consumer of the arena's chunk protocol (arena.h draws the
 * state machine): take published chunks (COMPLETE -> READING), copy each
 * to private memory, check its header and append it to the trace file
 * (a pack of the keeper's, keep.c, as the chunks it holds), give it back
 * (-> FREE); take the committed part of chunks still OWNED
 * by processes that died or do not answer (salvage); give the stream
 * slots of exited threads back. trail_recorder_poll() is one pass of the
 * recording loop around these.
 *
 * Chunks are copied before their header is trusted: a writer may still
 * store into a chunk being salvaged, and nothing in it is believed twice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "internal.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* Map chunk i's pages with one call the first time the drain reads it
 * (kernels before 5.14 refuse: then faults map them). */
static void chunk_map(struct trail_recorder *R, uint32_t i, void *chunk)
{
	if (R->chunk_mapped[i >> 3] & (1u << (i & 7)))
		return;
	R->chunk_mapped[i >> 3] |= (uint8_t)(1u << (i & 7));
	madvise(chunk, R->m.g.chunk_size, MADV_POPULATE_READ);
}

/* A solo stream's STREAM section (keep.c), from its chunk's header: all
 * its events are in that chunk. */
static void write_solo(struct trail_recorder *R, const struct trail_chunk_hdr *h)
{
	struct trail_stream st;

	memset(&st, 0, sizeof(st));
	st.gen = h->stream_gen;
	st.pid = h->pid;
	st.tid = h->tid;
	st.level = h->level;
	st.chunks = 1;
	memcpy(st.comm, h->comm, sizeof(st.comm));
	trail__rec_write_stream_as(R, h->stream, &st);
}

/* One chunk's section: h (a private copy) and its `bytes` of records;
 * kept: an adopted chunk or a pack's part (overwrite mode). */
static void write_one(struct trail_recorder *R, struct trail_chunk_hdr *h, uint32_t bytes,
		      uint32_t flags, int kept)
{
	uint32_t events = TRAIL_COMMIT_EVENTS(h->commit);
	const struct trail_stream *st = shm_stream(&R->m, h->stream);
	struct trail_sec_chunk sc = {flags, 0};

	if (!st) { /* the copy's: it cannot change now */
		R->bad_chunks++;
		return;
	}
	if (h->flags & TRAIL_CHF_SALVAGED)
		sc.flags |= TRAIL_CHUNK_SALVAGED;
	h->flags = 0; /* the recorder's business, not the file's */
	if (tfw_section(&R->out, TRAIL_SEC_CHUNK, &sc, sizeof(sc), h, sizeof(*h) + bytes))
		return;
	if (kept && trail__rec_keep_solo(R, h->stream, h->stream_gen))
		write_solo(R, h);
	/* (a chunk of an earlier stream of the slot does not make the slot's
	 * present stream seen: overwrite mode gives slots back) */
	if (h->stream_gen == __atomic_load_n(&st->gen, __ATOMIC_RELAXED))
		R->stream_seen[h->stream] = 1;
	R->ev_total += events;
	R->bytes += bytes;
	R->chunks++;
}

/* A pack's chunks (keep.c), each a header and its records, from the copy
 * in R->chunkbuf: each its own section, as if drained one by one. */
static void write_pack(struct trail_recorder *R, uint32_t bytes, uint32_t flags)
{
	uint8_t *p = R->chunkbuf + sizeof(struct trail_chunk_hdr), *end = p + bytes;
	struct trail_chunk_hdr h;

	while ((size_t)(end - p) >= sizeof(h) && !R->out.err) {
		uint32_t b;

		memcpy(&h, p, sizeof(h));
		b = TRAIL_COMMIT_BYTES(h.commit);
		if (b > (size_t)(end - p) - sizeof(h) || TRAIL_COMMIT_EVENTS(h.commit) > b / 4) {
			R->bad_chunks++;
			return;
		}
		/* (written from the copy: header, then its records) */
		if (b || TRAIL_COMMIT_EVENTS(h.commit))
			write_one(R, (struct trail_chunk_hdr *)p, b, flags, 1);
		p += sizeof(h) + ((b + 7) & ~7u);
	}
}

/* Copy chunk i out of the arena (we hold it READING, or salvage it), check
 * its header and append it. */
static void write_chunk(struct trail_recorder *R, uint32_t i, uint32_t flags)
{
	struct trail_chunk_hdr *src = shm_chunk(&R->m, i);
	struct trail_chunk_hdr *h = (struct trail_chunk_hdr *)R->chunkbuf;
	const void *recs;
	uint64_t commit;
	uint32_t bytes, events;

	if (!src)
		return;
	chunk_map(R, i, src);
	if (shm_chunk_commit(&R->m, src, &commit)) {
		R->bad_chunks++;
		return;
	}
	bytes = TRAIL_COMMIT_BYTES(commit);
	events = TRAIL_COMMIT_EVENTS(commit);
	if (!events && !bytes)
		return;
	recs = shm_chunk_records(&R->m, src, bytes);
	memcpy(h, src, sizeof(*h));
	h->commit = commit; /* what we read, not what it may be now */
	memcpy(h + 1, recs, bytes);
	if (h->flags & TRAIL_CHF_PACK)
		write_pack(R, bytes, flags);
	else
		write_one(R, h, bytes, flags, !!(h->flags & TRAIL_CHF_ADOPTED));
}

static void free_chunk(struct trail_recorder *R, uint64_t *word)
{
	/* release: our reads of the chunk are done before a writer takes it
	 * (pairs with the acquire CAS in take_chunk()) */
	__atomic_store_n(word, TRAIL_CS_FREE, __ATOMIC_RELEASE);
	__atomic_fetch_add(&shm_hdr(&R->m)->nfree, 1, __ATOMIC_RELAXED);
}

static int cmp_pub(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return x->pub < y->pub ? -1 : x->pub > y->pub;
}

/* Take every published chunk, oldest publication first. */
uint32_t trail__rec_drain(struct trail_recorder *R)
{
	struct pending *list = R->pending;
	uint32_t n = 0, lowest = UINT32_MAX;

	if (!list && !(list = R->pending = malloc(R->m.g.nchunks * sizeof(*list))))
		return 0;
	trail__rec_keep_prepare(R); /* (overwrite mode) */
	for (uint32_t i = 0; i < R->m.g.nchunks; i++) {
		uint64_t *word = shm_cword(&R->m, i);
		uint64_t w = __atomic_load_n(word, __ATOMIC_RELAXED);

		if (TRAIL_CS_STATE(w) != TRAIL_CS_FREE && i > R->high)
			R->high = i;
		if (TRAIL_CS_STATE(w) != TRAIL_CS_COMPLETE) {
			trail__rec_keep_taken(R, i, w, 0); /* (overwrite mode) */
			continue;
		}
		/* acquire: pairs with the writer's release publishing it */
		if (__atomic_compare_exchange_n(word, &w, TRAIL_CS_READING, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			list[n++] = (struct pending){i, TRAIL_CS_PUB(w)};
		trail__rec_keep_taken(R, i, w, 0);
	}
	if (!n)
		return 0;
	qsort(list, n, sizeof(*list), cmp_pub);
	trail__rec_write_events(R);
	trail__rec_write_modules(R);
	for (uint32_t k = 0; k < n; k++) {
		if (!R->out.err)
			write_chunk(R, list[k].idx, 0);
		/* a chunk the keeper tracks: its streams' events are in the file */
		trail__rec_keep_taken(R, list[k].idx, TRAIL_CS_COMPLETE_WORD(list[k].pub), 1);
		free_chunk(R, shm_cword(&R->m, list[k].idx));
		if (list[k].idx < lowest)
			lowest = list[k].idx;
	}
	/* writers look for a free chunk from the hint on: sent back to the
	 * lowest one freed, they reuse the chunks whose pages are mapped
	 * already, and a large buffer the drain keeps up with is touched only
	 * as far as its high-water mark */
	__atomic_store_n(&shm_hdr(&R->m)->alloc_hint, lowest, __ATOMIC_RELAXED);
	return n;
}

/* A snapshot's chunks (flight recorder): every published chunk, oldest
 * publication first, each held READING only while it is copied and then
 * put back as it was (the recording's own drain at the end still finds
 * it, if writers have not reused it meanwhile), then the committed part of
 * the chunks writers own, left in place, and the chunks published while
 * this ran. One chunk held at a time: writers that fill the buffer
 * meanwhile reclaim the others (held all at once, as before, a snapshot
 * of a full buffer made a busy writer drop a chunk of events: the mount's
 * trace_pipe, a snapshot every few tens of ms, lost 2% at 100k events/s). */
void trail__rec_copy_chunks(struct trail_recorder *R)
{
	struct pending *list = malloc(R->m.g.nchunks * sizeof(*list));
	uint64_t *was = malloc(R->m.g.nchunks * sizeof(*was));
	uint8_t *taken = calloc(R->m.g.nchunks, 1);
	uint32_t n = 0;

	if (!list || !was || !taken) {
		free(list);
		free(was);
		free(taken);
		R->out.err = -ENOMEM;
		return;
	}
	trail__rec_keep_prepare(R);
	for (uint32_t i = 0; i < R->m.g.nchunks; i++) {
		uint64_t w = __atomic_load_n(shm_cword(&R->m, i), __ATOMIC_ACQUIRE);

		/* (a chunk the keeper tracks that changed: overwritten) */
		trail__rec_keep_taken(R, i, w, 0);
		if (TRAIL_CS_STATE(w) != TRAIL_CS_COMPLETE)
			continue;
		was[i] = w;
		list[n++] = (struct pending){i, TRAIL_CS_PUB(w)};
	}
	qsort(list, n, sizeof(*list), cmp_pub);
	for (uint32_t k = 0; k < n && !R->out.err; k++) {
		uint64_t *word = shm_cword(&R->m, list[k].idx), w = was[list[k].idx];

		/* (reclaimed since, by a writer: overwritten, not copied) */
		if (!__atomic_compare_exchange_n(word, &w, TRAIL_CS_READING, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		write_chunk(R, list[k].idx, 0);
		taken[list[k].idx] = 1;
		/* release: our reads are done before a writer may take it */
		__atomic_store_n(word, w, __ATOMIC_RELEASE);
	}
	trail__rec_keep_streams(R, 0);
	for (uint32_t i = 0; i < R->m.g.nchunks && !R->out.err; i++) {
		uint64_t *word = shm_cword(&R->m, i);
		uint64_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);

		if (TRAIL_CS_STATE(w) == TRAIL_CS_OWNED) {
			write_chunk(R, i, TRAIL_CHUNK_SALVAGED);
			continue;
		}
		/* published since the published ones were listed (owned or
		 * free then, filled meanwhile): its records are in no other
		 * chunk copied */
		if (!taken[i] && TRAIL_CS_STATE(w) == TRAIL_CS_COMPLETE &&
		    __atomic_compare_exchange_n(word, &w, TRAIL_CS_READING, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			write_chunk(R, i, 0);
			__atomic_store_n(word, w, __ATOMIC_RELEASE);
		}
	}
	free(list);
	free(was);
	free(taken);
}

/* Chunks still OWNED by writers of process slot p (dead, or not answering). */
void trail__rec_salvage(struct trail_recorder *R, uint32_t p, int steal)
{
	trail__rec_write_events(R);
	trail__rec_write_modules(R);
	for (uint32_t i = 0; i < R->m.g.nchunks; i++) {
		uint64_t *word = shm_cword(&R->m, i);
		uint64_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		const struct trail_stream *owner;

		if (TRAIL_CS_STATE(w) != TRAIL_CS_OWNED ||
		    !(owner = shm_stream(&R->m, TRAIL_CS_OWNER(w))) ||
		    __atomic_load_n(&owner->proc, __ATOMIC_RELAXED) != p)
			continue;
		if (!steal) { /* the writer may live on: copy, leave it in place */
			if (!R->out.err)
				write_chunk(R, i, TRAIL_CHUNK_SALVAGED);
			continue;
		}
		if (!__atomic_compare_exchange_n(word, &w, TRAIL_CS_READING, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		if (!R->out.err)
			write_chunk(R, i, TRAIL_CHUNK_SALVAGED);
		free_chunk(R, word); /* (written: not to be drained again) */
	}
}

/*
 * Discard mode: give the slots of threads that exited (and of dead
 * processes) back to the session, after writing their final accounting.
 * Their chunks still in the arena carry (slot, generation), and a new
 * owner gets a new generation, so nothing is mixed up. Overwrite mode's
 * slots go back through the keeper (keep.c), which takes their
 * accounting over since reclaimers may still overwrite their chunks.
 */
void trail__rec_recycle_streams(struct trail_recorder *R, int dead_proc)
{
	if (R->o.overwrite)
		return;
	for (uint32_t i = 0; i < R->m.g.max_streams; i++) {
		struct trail_stream *st = shm_stream(&R->m, i);
		uint32_t state = __atomic_load_n(&st->state, __ATOMIC_ACQUIRE);

		/* the end of the slots ever taken (first fit, record.c's
		 * claim_stream): one taken since is new, nothing to give back
		 * yet; finish() still reads them all */
		if (state == TRAIL_SS_FREE && !__atomic_load_n(&st->gen, __ATOMIC_RELAXED))
			break;
		if (state != TRAIL_SS_EXITED &&
		    !(state == TRAIL_SS_LIVE && dead_proc >= 0 &&
		      __atomic_load_n(&st->proc, __ATOMIC_RELAXED) == (uint32_t)dead_proc))
			continue;
		if (!R->out.err)
			trail__rec_write_stream(R, i);
		R->stream_seen[i] = 0;
		/* CAS: a live slot of a dead process may still be in CLAIMING
		 * by nobody; only the states we saw are released */
		__atomic_compare_exchange_n(&st->state, &state, TRAIL_SS_FREE, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}
