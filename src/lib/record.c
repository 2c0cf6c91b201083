/* SPDX-License-Identifier: MIT */
/*
 * record.c - the record path: from trail__write() to a committed record in
 * the calling thread's chunk of each session that wants the event.
 *
 * No lock, no syscall, no allocation on the common path: one TLS load, the
 * status word, the clock, a bounds check and plain stores, ended by one
 * release store of the chunk's commit word. Once per chunk the thread
 * publishes the full chunk and takes a free one (a CAS each).
 *
 * Nesting: a signal handler that records while its thread is inside
 * trail__write() gets depth + 1 and writes its own chunk (ctx[s][depth]), so
 * two writers never share a chunk and each commit covers only complete
 * records. 'depth' doubles as the thread's "inside the record path" flag for
 * the grace periods of detach (see runtime.c); 'epoch' moves on at each
 * outermost exit so a busy thread still lets a grace period end.
 */
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <x86intrin.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "internal.h"

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
#include <sys/rseq.h>
#define HAVE_RSEQ 1
#endif

__thread struct writer *trail__tls_w
	__attribute__((tls_model("initial-exec"), visibility("hidden")));

static inline void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Payloads are mostly a few words: avoid the call into memcpy for them. */
static inline void copy_payload(uint8_t *d, const uint8_t *s, uint32_t n)
{
	uint64_t a, b, c, e;

	if (TRAIL_LIKELY(n >= 8 && n <= 16)) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n > 16 && n <= 32) {
		memcpy(&a, s, 8);
		memcpy(&b, s + 8, 8);
		memcpy(&c, s + n - 16, 8);
		memcpy(&e, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + 8, &b, 8);
		memcpy(d + n - 16, &c, 8);
		memcpy(d + n - 8, &e, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t x, y;

		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n > 32) {
		memcpy(d, s, n);
	} else {
		for (uint32_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

static inline uint64_t now_cpu(uint32_t *cpu)
{
#if defined(__x86_64__)
	if (TRAIL_LIKELY(trail__clock == TRAIL_CLOCK_TSC)) {
#ifdef HAVE_RSEQ
		if (TRAIL_LIKELY(trail__cpu_mode == CPU_RSEQ)) {
			const struct rseq *rs =
				(const struct rseq *)((char *)__builtin_thread_pointer() +
						      __rseq_offset);

			*cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
			return trail__rdtsc();
		}
#endif
		unsigned aux;
		uint64_t t = __rdtscp(&aux);

		*cpu = aux & 0xfff;
		return t;
	}
#endif
	*cpu = (uint32_t)sched_getcpu();
	return trail__mono_ns();
}

static inline struct trail_chunk_hdr *ctx_hdr(const struct wctx *c)
{
	return (struct trail_chunk_hdr *)(c->data - sizeof(struct trail_chunk_hdr));
}

void trail__ctx_publish(struct psess *ps, struct wctx *c)
{
	uint64_t pub, want = c->owned;

	if (!c->data)
		return;
	pub = __atomic_fetch_add(&ps->hdr->publish_seq, 1, __ATOMIC_RELAXED);
	/* release: the chunk's records and header before the state change;
	 * pairs with the recorder's acquire CAS to READING. */
	__atomic_compare_exchange_n(&ps->ctab[c->chunk], &want,
				    TRAIL_CS_COMPLETE_WORD(pub), 0,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	c->data = NULL;
}

void trail__ctx_close(struct psess *ps, struct wctx *c)
{
	trail__ctx_publish(ps, c);
	if (c->stream) {
		struct trail_stream *st = &ps->streams[c->stream - 1];

		/* pairs with the recorder's acquire load of state */
		__atomic_store_n(&st->state, TRAIL_SS_EXITED, __ATOMIC_RELEASE);
		c->stream = 0;
	}
}

static int claim_stream(struct psess *ps, struct wctx *c, struct writer *w,
			unsigned depth)
{
	uint32_t n = ps->max_streams;
	uint32_t i = __atomic_load_n(&ps->hdr->stream_hint, __ATOMIC_RELAXED);

	for (uint32_t tries = 0; tries < n; tries++, i++) {
		struct trail_stream *st;
		uint32_t free_state = TRAIL_SS_FREE;

		if (i >= n)
			i = 0;
		st = &ps->streams[i];
		if (__atomic_load_n(&st->state, __ATOMIC_RELAXED) != TRAIL_SS_FREE)
			continue;
		/* CLAIMING (3) hides the slot from the recorder until filled */
		if (!__atomic_compare_exchange_n(&st->state, &free_state, 3, 0,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		st->gen++;
		st->pid = (uint32_t)trail__pid;
		st->tid = (uint32_t)w->tid;
		st->level = depth;
		st->proc = ps->proc_idx;
		__atomic_store_n(&st->dropped, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&st->overwritten, 0, __ATOMIC_RELAXED);
		st->chunks = 0;
		prctl(PR_GET_NAME, st->comm, 0, 0, 0);
		__atomic_store_n(&st->state, TRAIL_SS_LIVE, __ATOMIC_RELEASE);
		__atomic_store_n(&ps->hdr->stream_hint, i + 1, __ATOMIC_RELAXED);
		c->stream = i + 1;
		return 1;
	}
	return 0;
}

/* Overwrite mode: take the oldest published chunk, crediting its events to
 * its stream as lost. Oldest-first keeps a contiguous suffix per stream. */
static int reclaim_chunk(struct psess *ps, uint64_t word, uint32_t *idx)
{
	for (int tries = 0; tries < 4; tries++) {
		uint64_t best_w = 0, best_pub = UINT64_MAX;
		uint32_t best = UINT32_MAX;

		for (uint32_t j = 0; j < ps->nchunks; j++) {
			uint64_t w = __atomic_load_n(&ps->ctab[j], __ATOMIC_RELAXED);

			if (TRAIL_CS_STATE(w) == TRAIL_CS_COMPLETE &&
			    TRAIL_CS_PUB(w) < best_pub) {
				best_pub = TRAIL_CS_PUB(w);
				best_w = w;
				best = j;
			}
		}
		if (best == UINT32_MAX)
			return 0;
		if (__atomic_compare_exchange_n(&ps->ctab[best], &best_w, word, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			struct trail_chunk_hdr *v = (struct trail_chunk_hdr *)
				(ps->base + ps->g.chunks_off +
				 (uint64_t)best * ps->chunk_size);
			uint32_t ev = TRAIL_COMMIT_EVENTS(
				__atomic_load_n(&v->commit, __ATOMIC_RELAXED));

			if (v->stream < ps->max_streams &&
			    ps->streams[v->stream].gen == v->stream_gen)
				__atomic_fetch_add(&ps->streams[v->stream].overwritten,
						   ev, __ATOMIC_RELAXED);
			*idx = best;
			return 1;
		}
	}
	return 0;
}

static int take_chunk(struct psess *ps, uint64_t word, uint32_t *idx)
{
	struct trail_arena_hdr *h = ps->hdr;
	uint32_t n = ps->nchunks;

	/* nfree is a hint kept by writers and the recorder: a full arena
	 * costs a dropped event one load, not a scan. */
	if ((int32_t)__atomic_load_n(&h->nfree, __ATOMIC_RELAXED) > 0) {
		uint32_t j = __atomic_load_n(&h->alloc_hint, __ATOMIC_RELAXED);

		for (uint32_t tries = 0; tries < n; tries++, j++) {
			uint64_t free_w = TRAIL_CS_FREE;

			if (j >= n)
				j = 0;
			if (__atomic_load_n(&ps->ctab[j], __ATOMIC_RELAXED) != TRAIL_CS_FREE)
				continue;
			/* acquire: pairs with the recorder's release when it
			 * freed the chunk, so its reads are done */
			if (__atomic_compare_exchange_n(&ps->ctab[j], &free_w, word,
							0, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED)) {
				__atomic_fetch_sub(&h->nfree, 1, __ATOMIC_RELAXED);
				__atomic_store_n(&h->alloc_hint, j + 1,
						 __ATOMIC_RELAXED);
				*idx = j;
				return 1;
			}
		}
	}
	return ps->overwrite ? reclaim_chunk(ps, word, idx) : 0;
}

/* 1: a chunk with room; 0: drop, count it in the stream; -1: dropped and
 * already counted (no stream slot). */
static int next_chunk(struct psess *ps, struct wctx *c, struct writer *w,
		      unsigned depth, uint64_t ts, uint32_t len)
{
	struct trail_stream *st;
	struct trail_chunk_hdr *ch;
	uint64_t word, seq;
	uint32_t idx;

	trail__ctx_publish(ps, c);
	if (!c->stream && !claim_stream(ps, c, w, depth)) {
		__atomic_fetch_add(&ps->hdr->nostream_lost, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (len + TRAIL_REC_MAX_OVERHEAD >
	    ps->chunk_size - sizeof(struct trail_chunk_hdr))
		return 0;
	st = &ps->streams[c->stream - 1];
	seq = st->chunks;
	word = TRAIL_CS_OWNED_WORD(c->stream - 1, seq);
	/* is anybody still reading? asked every 64th chunk, or every 4096th
	 * failure to get one (a dead recorder frees nothing) */
	if ((++c->checks & 63) == 0)
		trail__sess_check_orphan(ps);
	if (!take_chunk(ps, word, &idx)) {
		if ((c->checks += 63) % 4096 < 63)
			trail__sess_check_orphan(ps);
		return 0;
	}
	st->chunks = seq + 1;
	ch = (struct trail_chunk_hdr *)(ps->base + ps->g.chunks_off +
					(uint64_t)idx * ps->chunk_size);
	__atomic_store_n(&ch->commit, 0, __ATOMIC_RELAXED);
	ch->stream = c->stream - 1;
	ch->stream_gen = st->gen;
	ch->seq = seq;
	ch->base_ts = ts;
	ch->lost_before = c->pending_lost;
	ch->pid = (uint32_t)trail__pid;
	ch->tid = (uint32_t)w->tid;
	ch->level = (uint16_t)depth;
	ch->cpu0 = 0;
	prctl(PR_GET_NAME, ch->comm, 0, 0, 0);
	c->pending_lost = 0;
	c->data = (uint8_t *)(ch + 1);
	c->pos = 0;
	c->cap = ps->chunk_size - (uint32_t)sizeof(*ch);
	c->events = 0;
	c->last_ts = ts;
	c->cpu = ~0u;
	c->chunk = idx;
	c->owned = word;
	return 1;
}

static __attribute__((noinline)) void ctx_reset(struct wctx *c, uint32_t gen)
{
	memset(c, 0, sizeof(*c));
	c->gen = gen;
}

static inline void write_one(struct psess *ps, struct wctx *c,
			     struct writer *w, unsigned depth, uint32_t id,
			     const void *payload, uint32_t len, uint64_t ts,
			     uint32_t cpu)
{
	uint64_t delta;
	uint8_t *p;

	if (TRAIL_UNLIKELY(c->gen != ps->gen))
		ctx_reset(c, ps->gen);
	if (TRAIL_UNLIKELY(!c->data ||
			   c->pos + len + TRAIL_REC_MAX_OVERHEAD > c->cap)) {
		int r = next_chunk(ps, c, w, depth, ts, len);

		if (r <= 0) {
			if (r == 0) {
				struct trail_stream *st = &ps->streams[c->stream - 1];

				__atomic_store_n(&st->dropped, st->dropped + 1,
						 __ATOMIC_RELEASE);
				c->pending_lost++;
			}
			return;
		}
	}
	p = c->data + c->pos;
	if (TRAIL_UNLIKELY(ts < c->last_ts))
		ts = c->last_ts; /* keep each stream monotonic */
	delta = ts - c->last_ts;
	if (TRAIL_UNLIKELY(delta > TRAIL_REC_DELTA_MAX)) {
		put32(p, TRAIL_REC_TIME);
		put64(p + 4, ts);
		p += 12;
		delta = 0;
	}
	if (TRAIL_UNLIKELY(cpu != c->cpu)) {
		put32(p, (uint32_t)(delta << TRAIL_REC_TYPE_BITS) | TRAIL_REC_CPU);
		put32(p + 4, cpu);
		p += 8;
		delta = 0;
		c->cpu = cpu;
	}
	if (TRAIL_LIKELY(id < TRAIL_REC_DIRECT_IDS)) {
		put32(p, (uint32_t)(delta << TRAIL_REC_TYPE_BITS) |
				 (id + TRAIL_REC_FIRST_EVENT));
		p += 4;
	} else {
		put32(p, (uint32_t)(delta << TRAIL_REC_TYPE_BITS) |
				 TRAIL_REC_LONGID);
		put32(p + 4, id);
		p += 8;
	}
	copy_payload(p, payload, len);
	p += len;
	c->pos = (uint32_t)(p - c->data);
	c->events++;
	c->last_ts = ts;
	/* pairs with the recorder's acquire load: records below pos are whole */
	__atomic_store_n(&ctx_hdr(c)->commit,
			 ((uint64_t)c->events << 32) | c->pos, __ATOMIC_RELEASE);
}

/* The record path proper: the event into every session whose bit is set in
 * its status word and in `allow`. */
static inline __attribute__((always_inline)) void
write_event(struct trail_event *ev, uint32_t allow, const void *payload, uint32_t len)
{
	struct writer *w = trail__tls_w;
	struct evrt *rt;
	uint32_t d, mask, cpu;
	uint64_t ts;

	if (TRAIL_UNLIKELY(!w) && !(w = trail__writer_get()))
		return;
	d = w->depth;
	if (TRAIL_UNLIKELY(d >= TRAIL_MAX_DEPTH)) {
		/* nested deeper than we keep contexts for: counted per session */
		mask = __atomic_load_n(ev->state, __ATOMIC_ACQUIRE) & allow &
		       ((1u << TRAIL_MAX_SESSIONS) - 1);
		for (; mask; mask &= mask - 1)
			__atomic_fetch_add(&trail__sess[__builtin_ctz(mask)].hdr->nostream_lost,
					   1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&w->depth, d + 1, __ATOMIC_RELAXED);
	/* the depth store before the status load: a detaching thread pairs
	 * this compiler barrier with membarrier() (see grace_wait()) */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* acquire: pairs with the release that set the bit after the session
	 * slot and rt->ids[] were filled in */
	mask = __atomic_load_n(ev->state, __ATOMIC_ACQUIRE) & allow &
	       ((1u << TRAIL_MAX_SESSIONS) - 1);
	rt = ev->rt;
	if (TRAIL_LIKELY(mask && rt)) {
		ts = now_cpu(&cpu);
		do {
			unsigned s = (unsigned)__builtin_ctz(mask);
			struct psess *ps = &trail__sess[s];

			write_one(ps, &w->ctx[s][d], w, d, rt->ids[s], payload, len, ts, cpu);
			if (TRAIL_UNLIKELY(__atomic_load_n(&ps->orphaned, __ATOMIC_RELAXED)))
				__atomic_fetch_and(ev->state, ~(1u << s), __ATOMIC_RELAXED);
			mask &= mask - 1;
		} while (mask);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&w->depth, d, __ATOMIC_RELAXED);
	if (d == 0)
		__atomic_store_n(&w->epoch, w->epoch + 1, __ATOMIC_RELAXED);
}

__attribute__((visibility("default"))) void
trail__write(struct trail_event *ev, const void *payload, uint32_t len)
{
	write_event(ev, ~0u, payload, len);
}

void trail__write_mask(struct trail_event *ev, uint32_t allow, const void *payload,
		       uint32_t len)
{
	write_event(ev, allow, payload, len);
}
