/* SPDX-License-Identifier: MIT */
/*
 * keep.c - overwrite mode's keeper: what becomes of the streams of threads
 * that ended (and of processes that died) while the flight recorder runs.
 *
 * Without it each such stream would pin its stream slot, and its last,
 * partly filled chunk, until the end: a program whose threads come and go
 * fills the stream table and the arena with a few events each. So every
 * pass (loop.c, every 20 ms) the keeper
 *
 *   - adopts the chunks of those streams (arena.h): a well-filled one is
 *     put back as it was, marked TRAIL_CHF_ADOPTED; small ones are copied,
 *     each with its header, into pack chunks (TRAIL_CHF_PACK), and the
 *     chunks they took are freed. A pack carries the newest publication
 *     of what it holds, so a stream still keeps a newest suffix of its
 *     chunks; half-empty packs are packed again with the next ones;
 *   - gives the stream slot back once no reclaimer is between reading a
 *     chunk of it and crediting the slot (its refs), with the slot's
 *     counters copied into a record of its own;
 *   - notices adopted chunks that writers reclaimed since (their state
 *     word changed) and adds their events to the records' `overwritten`.
 *
 * So every event still has one place: the file (written by the final
 * drain, which splits packs back into their chunks: drain.c), a record's
 * or a slot's dropped/overwritten counters, or, for a record whose every
 * event was overwritten, the "gone" totals of the END section (not one
 * STREAM section per thread that ever ran: the file of a flight recorder
 * stays the size of its buffer).
 *
 * Memory: most threads that end are "solo": one chunk, in the arena
 * whole, nothing lost. Their chunk header says all their STREAM section
 * will say (the drain writes it from there: trail__rec_keep_solo()), so
 * their record is dropped when the slot goes back, and what remains is a
 * count per chunk (solo_n, solo_ev) to add to the gone totals if a writer
 * reclaims the chunk. Records and parts are left only for streams with
 * several chunks or with losses, and for the few milliseconds a slot is
 * pending: the recorder's memory stays flat however many threads come
 * and go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NONE UINT32_MAX

/* A stream whose slot the keeper took over (or is about to: pending). */
struct krec {
	uint32_t slot, gen;
	uint32_t subs;     /* its parts still in the arena */
	uint32_t last_sub; /* the part added last */
	uint8_t retired;   /* the slot is given back (else pending: refs) */
	uint8_t written;   /* the final drain wrote some of its events */
	struct trail_stream st; /* the slot's identity and counters, at retirement;
				 * overwritten: plus what the keeper credited */
	uint32_t next_free;
};

#define OPEN (NONE - 1) /* ksub.chunk: in the pack being built */

/* One stream's chunk in a tracked chunk (a pack holds many). */
struct ksub {
	uint32_t rec, events, next;
	uint32_t chunk; /* the tracked chunk whose list it is on, or OPEN */
};

/* A chunk the keeper put back COMPLETE: what its word must still be. */
struct kchunk {
	uint64_t word;  /* 0: not tracked */
	uint32_t first; /* its parts (ksub list) */
	uint32_t bytes; /* records bytes (after the header) */
	uint32_t solo_n; /* solo streams' parts it holds, and their events */
	uint32_t pack;   /* a pack (else a chunk adopted where it was) */
	uint64_t solo_ev;
};

/* (slot, gen) -> record, sorted: which parts a drain meets are solo */
struct kidx {
	uint64_t key;
	uint32_t rec;
};

/* A chunk taken this pass, to be packed. */
struct ksrc {
	uint32_t idx;
	uint64_t pub;
	uint32_t rec;     /* a stream's chunk: its record */
	uint32_t salvaged;
	uint64_t commit;  /* a stream's chunk: its commit word when taken */
	int tracked;      /* else a pack of ours, left small */
};

struct keeper {
	struct kchunk *ch;  /* per chunk */
	uint32_t *slot_rec; /* per slot: its pending record, or NONE */
	uint8_t *cand;      /* per slot, this pass: UNDECIDED, GOING, ... */
	uint32_t *touched;  /* quick pass: the slots it decided */
	uint32_t ntouched, taken;
	uint64_t *seen_w;   /* per chunk: the word whose stream is seen_s */
	uint32_t *seen_s;
	struct krec *recs;
	uint32_t nrecs, recs_cap, rec_free;
	struct ksub *subs;
	uint32_t nsubs, subs_cap, sub_free, subs_freed;
	struct ksrc *src;   /* nchunks */
	uint32_t nsrc;
	uint8_t *buf;       /* a pack being built: chunk_size bytes */
	uint32_t used, events, dest, pfirst, psolo_n;
	uint64_t pub, psolo_ev;
	struct kidx *idx;   /* trail__rec_keep_prepare()'s */
	uint32_t nidx;
	uint64_t lost;      /* every event the keeper's records lost */
	uint64_t gone_streams, gone_dropped, gone_overwritten;
	int warned; /* out of memory, said once */
};

static uint32_t cap_bytes(const struct trail_recorder *R)
{
	return R->m.g.chunk_size - (uint32_t)sizeof(struct trail_chunk_hdr);
}

/* a chunk this small is packed rather than kept in place */
static int is_small(const struct trail_recorder *R, uint32_t bytes)
{
	return bytes <= cap_bytes(R) / 2;
}

int trail__rec_keep_init(struct trail_recorder *R)
{
	struct keeper *K = calloc(1, sizeof(*K));
	uint32_t n = R->m.g.nchunks;

	if (!K)
		return -ENOMEM;
	R->keep = K;
	K->ch = calloc(n, sizeof(*K->ch));
	K->slot_rec = malloc(R->m.g.max_streams * sizeof(*K->slot_rec));
	K->cand = calloc(R->m.g.max_streams, 1);
	K->touched = malloc(n * sizeof(*K->touched));
	K->seen_w = calloc(n, sizeof(*K->seen_w));
	K->seen_s = calloc(n, sizeof(*K->seen_s));
	K->src = malloc(n * sizeof(*K->src));
	K->buf = malloc(R->m.g.chunk_size);
	if (!K->ch || !K->slot_rec || !K->cand || !K->touched || !K->seen_w || !K->seen_s ||
	    !K->src || !K->buf)
		return -ENOMEM;
	memset(K->slot_rec, 0xff, R->m.g.max_streams * sizeof(*K->slot_rec));
	K->rec_free = K->sub_free = NONE;
	K->dest = K->pfirst = NONE;
	return 0;
}

void trail__rec_keep_free(struct trail_recorder *R)
{
	struct keeper *K = R->keep;

	if (!K)
		return;
	free(K->ch);
	free(K->slot_rec);
	free(K->cand);
	free(K->touched);
	free(K->seen_w);
	free(K->seen_s);
	free(K->recs);
	free(K->subs);
	free(K->src);
	free(K->buf);
	free(K->idx);
	free(K);
	R->keep = NULL;
}

/* ------------------------------------------------------------- the pools */

static int grow(void **p, uint32_t *cap, size_t size)
{
	uint32_t n = *cap ? *cap * 2 : 1024;
	void *q = realloc(*p, n * size);

	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static uint32_t rec_new(struct keeper *K, uint32_t slot, uint32_t gen)
{
	uint32_t r = K->rec_free;

	if (r != NONE) {
		K->rec_free = K->recs[r].next_free;
	} else {
		if (K->nrecs == K->recs_cap && grow((void **)&K->recs, &K->recs_cap, sizeof(*K->recs)))
			return NONE;
		r = K->nrecs++;
	}
	memset(&K->recs[r], 0, sizeof(K->recs[r]));
	K->recs[r].slot = slot;
	K->recs[r].gen = gen;
	K->recs[r].next_free = NONE - 1; /* in use */
	return r;
}

static void rec_del(struct keeper *K, uint32_t r)
{
	K->recs[r].next_free = K->rec_free;
	K->rec_free = r;
}

static int rec_used(const struct keeper *K, uint32_t r)
{
	return K->recs[r].next_free == NONE - 1;
}

/* Room for n more parts without allocating: a pass adds at most one per
 * chunk, so it makes sure of that first and cannot fail half-way. */
static int sub_reserve(struct keeper *K, uint32_t n)
{
	while (K->subs_cap - K->nsubs + K->subs_freed < n)
		if (grow((void **)&K->subs, &K->subs_cap, sizeof(*K->subs)))
			return -1;
	return 0;
}

/* a part of record r, of `events` events, at the head of the list *first
 * of chunk `chunk` (sub_reserve() made room) */
static void sub_add(struct keeper *K, uint32_t *first, uint32_t chunk, uint32_t r,
		    uint32_t events)
{
	uint32_t s = K->sub_free;

	if (s != NONE) {
		K->sub_free = K->subs[s].next;
		K->subs_freed--;
	} else {
		s = K->nsubs++;
	}
	K->subs[s] = (struct ksub){r, events, *first, chunk};
	*first = s;
	K->recs[r].subs++;
	K->recs[r].last_sub = s;
}

static void sub_del(struct keeper *K, uint32_t s)
{
	K->subs[s].next = K->sub_free;
	K->sub_free = s;
	K->subs_freed++;
}

/* Record r has nothing left anywhere: its losses go to the totals. */
static void gone(struct keeper *K, uint32_t r)
{
	K->gone_streams++;
	K->gone_dropped += K->recs[r].st.dropped;
	K->gone_overwritten += K->recs[r].st.overwritten;
	rec_del(K, r);
}

/* Tracked chunk i's parts: overwritten by a writer (credit them), or
 * written to the file by the final drain. The chunk is no longer tracked. */
static void chunk_done(struct keeper *K, uint32_t i, int written)
{
	uint32_t s = K->ch[i].first;

	if (!written) { /* solo streams: all they had was here */
		K->gone_streams += K->ch[i].solo_n;
		K->gone_overwritten += K->ch[i].solo_ev;
		K->lost += K->ch[i].solo_ev;
	}

	while (s != NONE) {
		struct ksub *p = &K->subs[s];
		struct krec *r = &K->recs[p->rec];
		uint32_t next = p->next;

		r->subs--;
		if (written) {
			r->written = 1;
		} else {
			r->st.overwritten += p->events;
			K->lost += p->events;
			if (!r->subs && r->retired && !r->written)
				gone(K, p->rec);
		}
		sub_del(K, s);
		s = next;
	}
	K->ch[i] = (struct kchunk){0, NONE, 0, 0, 0, 0};
}

/* ------------------------------------------------------ drain and finish */

int trail__rec_keep_taken(struct trail_recorder *R, uint32_t i, uint64_t w, int written)
{
	struct keeper *K = R->keep;

	if (!K || i >= R->m.g.nchunks || !K->ch[i].word)
		return 0;
	if (K->ch[i].word != w) { /* reclaimed since, and published again */
		chunk_done(K, i, 0);
		return 0;
	}
	if (written)
		chunk_done(K, i, 1);
	return 1;
}

void trail__rec_keep_reconcile(struct trail_recorder *R)
{
	struct keeper *K = R->keep;

	if (!K)
		return;
	for (uint32_t i = 0; i < R->m.g.nchunks; i++)
		if (K->ch[i].word &&
		    __atomic_load_n(shm_cword(&R->m, i), __ATOMIC_ACQUIRE) != K->ch[i].word)
			chunk_done(K, i, 0);
}

int trail__rec_keep_holds(const struct trail_recorder *R, uint32_t slot)
{
	const struct keeper *K = R->keep;

	return K && slot < R->m.g.max_streams && K->slot_rec[slot] != NONE;
}

/* A pending record's counters: the slot's, plus what the keeper credited. */
static void pending_counts(struct trail_recorder *R, const struct krec *r, struct trail_stream *st)
{
	const struct trail_stream *s = shm_stream(&R->m, r->slot);

	memcpy(st, s, sizeof(*st));
	st->gen = r->gen;
	st->dropped = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
	st->overwritten = __atomic_load_n(&s->overwritten, __ATOMIC_RELAXED) + r->st.overwritten;
}

void trail__rec_keep_streams(struct trail_recorder *R, int final)
{
	struct keeper *K = R->keep;

	if (!K)
		return;
	for (uint32_t i = 0; i < K->nrecs && !R->out.err; i++) {
		struct krec *r = &K->recs[i];
		struct trail_stream st;

		if (!rec_used(K, i))
			continue;
		if (!r->retired)
			pending_counts(R, r, &st);
		else if (final ? r->written || r->subs : r->subs)
			st = r->st;
		else
			continue;
		trail__rec_write_stream_as(R, r->slot, &st);
	}
}

uint64_t trail__rec_keep_lost(const struct trail_recorder *R)
{
	return R->keep ? R->keep->lost : 0;
}

void trail__rec_keep_gone(const struct trail_recorder *R, uint64_t *streams, uint64_t *dropped,
			  uint64_t *overwritten)
{
	const struct keeper *K = R->keep;

	*streams = K ? K->gone_streams : 0;
	*dropped = K ? K->gone_dropped : 0;
	*overwritten = K ? K->gone_overwritten : 0;
}

/* ------------------------------------------------------------------ packs */

static void free_chunk(struct trail_recorder *R, uint32_t i)
{
	/* release: our reads of it are done (pairs with take_chunk()'s CAS) */
	__atomic_store_n(shm_cword(&R->m, i), TRAIL_CS_FREE, __ATOMIC_RELEASE);
	__atomic_fetch_add(&shm_hdr(&R->m)->nfree, 1, __ATOMIC_RELAXED);
}

/* The pack being built, into its chunk (which we hold READING), published.
 * A pack stays open (built in K->buf, its chunk held) from pass to pass
 * until the next part does not fit, so packs are full: the only chunk the
 * keeper holds between passes, its parts out of reach of reclaimers
 * meanwhile. A snapshot and the final drain publish it first. */
static void pack_flush(struct trail_recorder *R)
{
	struct keeper *K = R->keep;
	struct trail_chunk_hdr *h;
	uint64_t word;

	if (K->dest == NONE || !(h = shm_chunk(&R->m, K->dest)))
		return;
	memcpy(h + 1, K->buf, K->used);
	__atomic_store_n(&h->commit, ((uint64_t)K->events << 32) | K->used, __ATOMIC_RELAXED);
	/* atomic: reclaimers read these before their CAS */
	__atomic_store_n(&h->stream, TRAIL_PACK_STREAM, __ATOMIC_RELAXED);
	__atomic_store_n(&h->stream_gen, 0, __ATOMIC_RELAXED);
	h->seq = 0;
	h->base_ts = 0;
	h->lost_before = 0;
	h->pid = h->tid = 0;
	h->level = 0;
	h->flags = TRAIL_CHF_ADOPTED | TRAIL_CHF_PACK;
	memset(h->comm, 0, sizeof(h->comm));
	word = TRAIL_CS_COMPLETE_WORD(K->pub);
	K->ch[K->dest] = (struct kchunk){word, K->pfirst, K->used, K->psolo_n, 1, K->psolo_ev};
	for (uint32_t p = K->pfirst; p != NONE; p = K->subs[p].next)
		K->subs[p].chunk = K->dest;
	/* release: the pack before a reclaimer's or the drain's acquire */
	__atomic_store_n(shm_cword(&R->m, K->dest), word, __ATOMIC_RELEASE);
	K->dest = NONE;
	K->used = K->events = K->psolo_n = 0;
	K->pub = K->psolo_ev = 0;
	K->pfirst = NONE;
}

static int cmp_idx(const void *a, const void *b)
{
	const struct kidx *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

void trail__rec_keep_prepare(struct trail_recorder *R)
{
	struct keeper *K = R->keep;
	struct kidx *idx;

	if (!K)
		return;
	pack_flush(R);
	K->nidx = 0;
	if (!(idx = realloc(K->idx, (K->nrecs ? K->nrecs : 1) * sizeof(*idx)))) {
		R->out.err = -ENOMEM;
		return;
	}
	K->idx = idx;
	for (uint32_t r = 0; r < K->nrecs; r++)
		if (rec_used(K, r))
			idx[K->nidx++] = (struct kidx){(uint64_t)K->recs[r].slot << 32 | K->recs[r].gen,
						       r};
	qsort(idx, K->nidx, sizeof(*idx), cmp_idx);
}

int trail__rec_keep_solo(const struct trail_recorder *R, uint32_t slot, uint32_t gen)
{
	const struct keeper *K = R->keep;
	struct kidx key = {(uint64_t)slot << 32 | gen, 0};

	return K && !bsearch(&key, K->idx, K->nidx, sizeof(key), cmp_idx);
}

/* Source s (held READING) into the pack: a chunk of a stream that ended
 * (its header and committed records), or a pack of ours left small (its
 * parts as they are: already in the pack layout). */
static void pack_add(struct trail_recorder *R, const struct ksrc *s)
{
	struct keeper *K = R->keep;
	struct trail_chunk_hdr *h = shm_chunk(&R->m, s->idx), copy;
	uint32_t bytes, events = 0, need, p;

	/* sizes as the keeper saw them, whatever the chunk says now: no
	 * writer may make us copy past it (a small one: at most half) */
	if (s->tracked) {
		bytes = need = K->ch[s->idx].bytes; /* (ours: 8-byte multiples) */
	} else {
		bytes = TRAIL_COMMIT_BYTES(s->commit);
		events = TRAIL_COMMIT_EVENTS(s->commit);
		need = (uint32_t)sizeof(copy) + ((bytes + 7) & ~7u);
	}
	if (K->used + need > cap_bytes(R))
		pack_flush(R);
	if (s->tracked) {
		memcpy(K->buf + K->used, h + 1, bytes);
		/* its parts now belong to the pack */
		for (p = K->ch[s->idx].first; p != NONE;) {
			uint32_t next = K->subs[p].next;

			events += K->subs[p].events;
			K->subs[p].next = K->pfirst;
			K->subs[p].chunk = OPEN;
			K->pfirst = p;
			p = next;
		}
		events += (uint32_t)K->ch[s->idx].solo_ev;
		K->psolo_n += K->ch[s->idx].solo_n;
		K->psolo_ev += K->ch[s->idx].solo_ev;
		K->ch[s->idx] = (struct kchunk){0, NONE, 0, 0, 0, 0};
	} else {
		memcpy(&copy, h, sizeof(copy));
		copy.commit = s->commit;
		copy.flags = (uint16_t)s->salvaged;
		memcpy(K->buf + K->used, &copy, sizeof(copy));
		memcpy(K->buf + K->used + sizeof(copy), h + 1, bytes);
		memset(K->buf + K->used + sizeof(copy) + bytes, 0, need - sizeof(copy) - bytes);
		sub_add(K, &K->pfirst, OPEN, s->rec, events);
	}
	K->used += need;
	K->events += events;
	if (s->pub > K->pub)
		K->pub = s->pub;
	if (K->dest == NONE)
		K->dest = s->idx; /* its content is in buf: the pack goes there */
	else
		free_chunk(R, s->idx);
}

/* A chunk of a stream that ended (held READING, its commit word as taken),
 * kept where it is. */
static void adopt_in_place(struct trail_recorder *R, uint32_t i, uint64_t word, uint32_t rec,
			   uint32_t salvaged, uint64_t commit)
{
	struct keeper *K = R->keep;
	struct trail_chunk_hdr *h = shm_chunk(&R->m, i);
	uint32_t first = NONE;

	h->flags = (uint16_t)(TRAIL_CHF_ADOPTED | salvaged);
	sub_add(K, &first, i, rec, TRAIL_COMMIT_EVENTS(commit));
	K->ch[i] = (struct kchunk){word, first, TRAIL_COMMIT_BYTES(commit), 0, 0, 0};
	/* release: the flag before a reclaimer's acquire CAS */
	__atomic_store_n(shm_cword(&R->m, i), word, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ a pass */

enum { UNDECIDED, GOING, BLOCKED, STAYS }; /* cand[]: a slot, this pass */

/* Is slot s's stream going (its thread ended, or its process died)?
 * Then it gets its record (pending until the slot goes back). */
static uint8_t decide(struct trail_recorder *R, uint32_t s)
{
	struct keeper *K = R->keep;
	const struct trail_stream *st = shm_stream(&R->m, s);
	uint32_t state = __atomic_load_n(&st->state, __ATOMIC_ACQUIRE), proc;
	uint32_t gen = __atomic_load_n(&st->gen, __ATOMIC_RELAXED);

	if (state == TRAIL_SS_LIVE) {
		proc = __atomic_load_n(&st->proc, __ATOMIC_RELAXED);
		if (proc >= R->m.g.max_procs || !R->pt[proc].dead)
			return STAYS;
	} else if (state != TRAIL_SS_EXITED) {
		return STAYS;
	}
	/* (out of memory: the slot stays the stream's, as without us) */
	if (K->slot_rec[s] == NONE && (K->slot_rec[s] = rec_new(K, s, gen)) == NONE)
		return STAYS;
	return K->recs[K->slot_rec[s]].gen == gen ? GOING : BLOCKED;
}

/* Chunk i, word w: adopt it if its stream is going (a small one is queued
 * for packing, held READING). A quick pass decides a slot at its first
 * chunk met; a full one decided them all before. */
static void scan_chunk(struct trail_recorder *R, uint32_t i, uint64_t w)
{
	struct keeper *K = R->keep;
	struct trail_chunk_hdr *h = shm_chunk(&R->m, i);
	uint32_t s, gen, state = TRAIL_CS_STATE(w), salvaged = 0, rec;
	uint64_t commit, pub;

	if (state == TRAIL_CS_COMPLETE) {
		/* atomic: a writer taking the chunk may be writing it (then
		 * our CAS fails); read once per publication */
		if (K->seen_w[i] != w) {
			K->seen_w[i] = w;
			K->seen_s[i] = __atomic_load_n(&h->stream, __ATOMIC_RELAXED);
		}
		s = K->seen_s[i];
	} else if (state == TRAIL_CS_OWNED) {
		s = TRAIL_CS_OWNER(w);
	} else {
		return;
	}
	if (s >= R->m.g.max_streams)
		return;
	if (K->cand[s] == UNDECIDED) {
		K->cand[s] = decide(R, s);
		K->touched[K->ntouched++] = s;
	}
	if (K->cand[s] != GOING)
		return;
	rec = K->slot_rec[s];
	gen = __atomic_load_n(&h->stream_gen, __ATOMIC_RELAXED);
	if (state == TRAIL_CS_OWNED) {
		/* its thread's process died (else: an owner still writing,
		 * the slot stays) */
		if (__atomic_load_n(&shm_stream(&R->m, s)->state, __ATOMIC_RELAXED) !=
		    TRAIL_SS_LIVE) {
			K->cand[s] = BLOCKED;
			return;
		}
		salvaged = TRAIL_CHF_SALVAGED;
	}
	if (gen != K->recs[rec].gen)
		return; /* an older stream's, not the slot's */
	/* acquire: pairs with the writer's release publishing it */
	if (!__atomic_compare_exchange_n(shm_cword(&R->m, i), &w, TRAIL_CS_READING, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		if (salvaged)
			K->cand[s] = BLOCKED; /* look again next pass */
		return;
	}
	K->taken++;
	pub = salvaged ? __atomic_fetch_add(&shm_hdr(&R->m)->publish_seq, 1, __ATOMIC_RELAXED)
		       : TRAIL_CS_PUB(w);
	if (shm_chunk_commit(&R->m, h, &commit))
		commit = 0;
	if (is_small(R, TRAIL_COMMIT_BYTES(commit)))
		K->src[K->nsrc++] = (struct ksrc){i, pub, rec, salvaged, commit, 0};
	else
		adopt_in_place(R, i, TRAIL_CS_COMPLETE_WORD(pub), rec, salvaged, commit);
}

/* Record r is solo: its one part (added last: nothing was taken from it)
 * becomes a count of its chunk's, the part and the record are dropped. */
static void make_solo(struct keeper *K, uint32_t r)
{
	uint32_t sub = K->recs[r].last_sub, c = K->subs[sub].chunk, *link;

	link = c == OPEN ? &K->pfirst : &K->ch[c].first;
	while (*link != NONE && *link != sub)
		link = &K->subs[*link].next;
	if (*link == NONE)
		return; /* (cannot be: then the record stays) */
	*link = K->subs[sub].next;
	if (c == OPEN) {
		K->psolo_n++;
		K->psolo_ev += K->subs[sub].events;
	} else {
		K->ch[c].solo_n++;
		K->ch[c].solo_ev += K->subs[sub].events;
	}
	sub_del(K, sub);
	rec_del(K, r);
}

/* Slot s's stream is all adopted and no reclaimer holds it: its counters
 * go into its record, the slot back to the session. */
static void retire(struct trail_recorder *R, uint32_t s)
{
	struct keeper *K = R->keep;
	struct trail_stream *st = shm_stream(&R->m, s);
	uint32_t r = K->slot_rec[s], state = __atomic_load_n(&st->state, __ATOMIC_ACQUIRE);
	uint64_t credited = K->recs[r].st.overwritten;
	struct krec *kr = &K->recs[r];

	memcpy(&kr->st, st, sizeof(kr->st));
	kr->st.gen = kr->gen;
	kr->st.dropped = __atomic_load_n(&st->dropped, __ATOMIC_RELAXED);
	kr->st.overwritten = __atomic_load_n(&st->overwritten, __ATOMIC_RELAXED) + credited;
	kr->st.comm[15] = '\0';
	/* release: our reads of the slot are done before a claimer reuses it */
	if (!__atomic_compare_exchange_n(&st->state, &state, TRAIL_SS_FREE, 0, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED)) {
		kr->st.overwritten = credited; /* (nobody else ends a stream) */
		return;
	}
	K->lost += kr->st.dropped + kr->st.overwritten - credited;
	R->stream_seen[s] = 0;
	kr->retired = 1;
	K->slot_rec[s] = NONE;
	if (!kr->subs)
		gone(K, r);
	else if (kr->subs == 1 && !kr->st.dropped && !kr->st.overwritten && kr->st.chunks == 1)
		make_solo(K, r);
}

/* chunks a writer could take now (FREE) or reclaim (COMPLETE), up to 2 */
static uint32_t spare_chunks(struct trail_recorder *R)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < R->m.g.nchunks && n < 2; i++) {
		uint32_t st = TRAIL_CS_STATE(__atomic_load_n(shm_cword(&R->m, i), __ATOMIC_RELAXED));

		n += st == TRAIL_CS_FREE || st == TRAIL_CS_COMPLETE;
	}
	return n;
}

static int cmp_pub(const void *a, const void *b)
{
	const struct ksrc *x = a, *y = b;

	return x->pub < y->pub ? -1 : x->pub > y->pub;
}

uint32_t trail__rec_keep_pass(struct trail_recorder *R, int full)
{
	struct keeper *K = R->keep;
	uint32_t fresh = 0;

	if (!K)
		return 0;
	trail__rec_keep_reconcile(R);
	if (sub_reserve(K, R->m.g.nchunks)) {
		if (!K->warned++)
			rec_warn(R, "out of memory: threads that end keep their chunk and "
				 "stream slot in the buffer until the end");
		return 0;
	}
	/* A slot goes back only from a full pass, which decides every slot
	 * before it looks at a chunk: a stream seen ended then has all its
	 * chunks published, and the scan meets each of them. (A quick pass
	 * deciding at the first chunk met could have passed a chunk the
	 * stream took and published later.) */
	if (full)
		for (uint32_t s = 0; s < R->m.g.max_streams; s++)
			K->cand[s] = decide(R, s);
	K->nsrc = K->taken = K->ntouched = 0;
	for (uint32_t i = 0; i < R->m.g.nchunks; i++) {
		/* acquire: a CAS we saw happen (a reclaimer's) comes with
		 * the refs it took before it (reclaim_chunk()) */
		uint64_t w = __atomic_load_n(shm_cword(&R->m, i), __ATOMIC_ACQUIRE);

		if (K->ch[i].word) {
			if (w == K->ch[i].word && K->ch[i].pack && is_small(R, K->ch[i].bytes))
				K->src[K->nsrc++] =
					(struct ksrc){i, TRAIL_CS_PUB(w), NONE, 0, 0, 1};
			continue;
		}
		scan_chunk(R, i, w);
	}
	for (uint32_t k = 0; k < K->nsrc; k++)
		fresh += !K->src[k].tracked;
	if (fresh) {
		uint32_t n = 0;

		/* the small chunks kept before, taken now (those reclaimed
		 * meanwhile are credited) */
		for (uint32_t k = 0; k < K->nsrc; k++) {
			struct ksrc *s = &K->src[k];
			uint64_t w = K->ch[s->idx].word;

			if (s->tracked &&
			    !__atomic_compare_exchange_n(shm_cword(&R->m, s->idx), &w,
							 TRAIL_CS_READING, 0, __ATOMIC_ACQUIRE,
							 __ATOMIC_RELAXED)) {
				chunk_done(K, s->idx, 0);
				continue;
			}
			K->src[n++] = *s;
		}
		/* oldest first: a pack's parts are of neighbouring ages */
		qsort(K->src, n, sizeof(*K->src), cmp_pub);
		for (uint32_t k = 0; k < n; k++)
			pack_add(R, &K->src[k]);
	}
	/* writers with no chunk free reclaim COMPLETE ones: in a buffer of a
	 * few chunks the open pack may be all there is (then packed again) */
	if (K->dest != NONE && spare_chunks(R) < 2)
		pack_flush(R);
	if (full) {
		for (uint32_t s = 0; s < R->m.g.max_streams; s++) {
			if (K->cand[s] == GOING &&
			    !__atomic_load_n(&shm_stream(&R->m, s)->refs, __ATOMIC_ACQUIRE))
				retire(R, s);
			K->cand[s] = UNDECIDED;
		}
	} else {
		for (uint32_t k = 0; k < K->ntouched; k++)
			K->cand[K->touched[k]] = UNDECIDED;
	}
	return K->taken;
}
