/* SPDX-License-Identifier: MIT */
/*
 * record.h - the record path's inline part, shared by record.c
 * (trail__write, the tracepoints' entry) and the event sources that
 * inline it with their constant payload sizes (fhook.c: function hooks).
 * See record.c for the protocol; the slow paths (taking a chunk,
 * resetting a context, a source's deferred write) stay out of line there.
 * The record path knows no event source: a source that keeps a record
 * back (trail_defer) is called through the writer's pointer.
 */
#ifndef TRAIL_LIB_RECORD_H
#define TRAIL_LIB_RECORD_H

#include <sched.h>
#include <string.h>
#include <x86intrin.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "../common/filter.h"
#include "evx.h"
#include "internal.h"

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
#include <sys/rseq.h>
#define HAVE_RSEQ 1
#endif

/* the bits of a status word that are sessions */
#define TRAIL_SESSION_BITS ((1u << TRAIL_MAX_SESSIONS) - 1)

HIDDEN int trail__next_chunk(struct psess *ps, struct wctx *c, struct writer *w,
			     unsigned depth, uint64_t ts, uint32_t len);
HIDDEN void trail__ctx_reset(struct wctx *c, uint32_t gen);
/* session ps is paused (traceoff) in this process: 1, unless the session
 * was turned on again meanwhile (then this process follows: 0) */
HIDDEN int trail__paused(struct psess *ps);

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
		/* word loads, not the two 16-byte ones the vectorizer makes
		 * of them: a payload just built by 8-byte stores (a probe's)
		 * forwards from them, a 16-byte load stalls ~10 cycles */
		__asm__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(e));
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

/* the CPU this thread runs on (a hint: it may move right after) */
static inline uint32_t this_cpu(void)
{
#if defined(__x86_64__) && defined(HAVE_RSEQ)
	if (TRAIL_LIKELY(trail__cpu_mode == CPU_RSEQ)) {
		const struct rseq *rs =
			(const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);

		return __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
	}
#endif
	return (uint32_t)sched_getcpu();
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

/*
 * The line a record 16 lines on will go to, asked for now in the
 * exclusive state (prefetchw; a nop where the CPU lacks it). A chunk is
 * taken again soon after the recorder read it, so its lines sit in the
 * other CPU's cache, and a store into one waited for it to come over
 * (a cross-core round trip every 4 small records): events cost 20-45 ns
 * instead of 21 from run to run (the hosts' placement of the two CPUs),
 * while a flight recorder, whose chunks nobody reads, did not vary.
 * Within the chunk only: a line past it may be another thread's.
 */
#define TRAIL_PREFETCH_AHEAD 1024

static inline void prefetch_ahead(const struct wctx *c, const uint8_t *p, uint32_t pos)
{
#if defined(__x86_64__)
	if (TRAIL_LIKELY(pos + TRAIL_PREFETCH_AHEAD < c->cap))
		__asm__ volatile("prefetchw %0" : : "m"(p[TRAIL_PREFETCH_AHEAD]));
#else
	(void)c, (void)p, (void)pos;
#endif
}

/* the header of the chunk whose records area starts at data */
static inline struct trail_chunk_hdr *data_hdr(uint8_t *data)
{
	return (struct trail_chunk_hdr *)(data - sizeof(struct trail_chunk_hdr));
}

static inline __attribute__((always_inline)) void write_one(struct psess *ps, struct wctx *c,
			     struct writer *w, unsigned depth, uint32_t id,
			     const void *payload, uint32_t len, uint64_t ts,
			     uint32_t cpu)
{
	uint32_t gen = __atomic_load_n(&ps->gen, __ATOMIC_RELAXED);
	uint64_t delta, last;
	uint32_t pos, events;
	uint8_t *data, *p;

	if (TRAIL_UNLIKELY(__atomic_load_n(&ps->paused, __ATOMIC_RELAXED)) && trail__paused(ps))
		return;
	if (TRAIL_UNLIKELY(c->gen != gen))
		trail__ctx_reset(c, gen);
	/* the context's fields in locals: the record bytes written below
	 * could alias them for the compiler, which would reload each */
	data = c->data;
	pos = c->pos;
	if (TRAIL_UNLIKELY(!data || pos + len + TRAIL_REC_MAX_OVERHEAD > c->cap)) {
		int r = trail__next_chunk(ps, c, w, depth, ts, len);

		if (r <= 0) {
			if (r == 0) {
				struct trail_stream *st = &ps->streams[c->stream - 1];

				__atomic_store_n(&st->dropped, st->dropped + 1,
						 __ATOMIC_RELEASE);
				c->pending_lost++;
			}
			return;
		}
		data = c->data;
		pos = c->pos;
	}
	last = c->last_ts;
	events = c->events + 1;
	p = data + pos;
	prefetch_ahead(c, p, pos);
	if (TRAIL_UNLIKELY(ts < last))
		ts = last; /* keep each stream monotonic */
	delta = ts - last;
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
	pos = (uint32_t)(p - data);
	c->pos = pos;
	c->events = events;
	c->last_ts = ts;
	/* pairs with the recorder's acquire load: records below pos are whole */
	__atomic_store_n(&data_hdr(data)->commit,
			 ((uint64_t)events << 32) | pos, __ATOMIC_RELEASE);
}

/* Room for two records of one thread in c's chunk (a kept entry record
 * and its return record, say; ts1 <= ts2), both headers written: returns
 * where the first payload goes (the second's is 4 bytes past its end), or
 * NULL when they cannot go together as the common case (a chunk to take,
 * a CPU or time record, a long id), which write_one handles. The caller
 * fills the payloads in and calls commit_two. */
static inline __attribute__((always_inline)) uint8_t *
reserve_two(struct psess *ps, struct wctx *c, uint32_t id1, uint32_t len1, uint64_t ts1,
	    uint32_t cpu1, uint32_t id2, uint32_t len2, uint64_t ts2, uint32_t cpu2)
{
	uint32_t gen = __atomic_load_n(&ps->gen, __ATOMIC_RELAXED);
	uint8_t *p;

	if (TRAIL_UNLIKELY(c->gen != gen))
		trail__ctx_reset(c, gen);
	if (TRAIL_UNLIKELY(!c->data || __atomic_load_n(&ps->paused, __ATOMIC_RELAXED) ||
			   c->pos + len1 + len2 + 8 > c->cap || cpu1 != c->cpu ||
			   cpu2 != cpu1 || (id1 | id2) >= TRAIL_REC_DIRECT_IDS ||
			   ts1 < c->last_ts || ts1 - c->last_ts > TRAIL_REC_DELTA_MAX ||
			   ts2 < ts1 || ts2 - ts1 > TRAIL_REC_DELTA_MAX))
		return NULL;
	p = c->data + c->pos;
	prefetch_ahead(c, p, c->pos);
	put32(p, (uint32_t)((ts1 - c->last_ts) << TRAIL_REC_TYPE_BITS) | (id1 + TRAIL_REC_FIRST_EVENT));
	put32(p + 4 + len1,
	      (uint32_t)((ts2 - ts1) << TRAIL_REC_TYPE_BITS) | (id2 + TRAIL_REC_FIRST_EVENT));
	return p + 4;
}

/* ... and both committed (end: past the second payload) */
static inline void commit_two(struct wctx *c, const uint8_t *end, uint64_t ts2)
{
	uint8_t *data = c->data;
	uint32_t pos = (uint32_t)(end - data);

	c->pos = pos;
	c->events += 2;
	c->last_ts = ts2;
	/* pairs with the recorder's acquire load: records below pos are whole */
	__atomic_store_n(&data_hdr(data)->commit, ((uint64_t)c->events << 32) | pos,
			 __ATOMIC_RELEASE);
}

/* Two records of one thread at once, ts1 <= ts2: one reservation, one
 * commit when they can (reserve_two), else one at a time. */
static inline __attribute__((always_inline)) void
write_two(struct psess *ps, struct wctx *c, struct writer *w, unsigned depth, uint32_t id1,
	  const void *p1, uint32_t len1, uint64_t ts1, uint32_t cpu1, uint32_t id2,
	  const void *p2, uint32_t len2, uint64_t ts2, uint32_t cpu2)
{
	uint8_t *p = reserve_two(ps, c, id1, len1, ts1, cpu1, id2, len2, ts2, cpu2);

	if (TRAIL_UNLIKELY(!p)) {
		write_one(ps, c, w, depth, id1, p1, len1, ts1, cpu1);
		write_one(ps, c, w, depth, id2, p2, len2, ts2, cpu2);
		return;
	}
	copy_payload(p, p1, len1);
	p += len1 + 4;
	copy_payload(p, p2, len2);
	commit_two(c, p + len2, ts2);
}

/* Entering the record path at nesting level d: the depth store before any
 * status load (a detaching thread pairs this compiler barrier with
 * membarrier(), see grace_wait()). Leaving it: release (a plain store on
 * x86), paired with grace_wait()'s acquire loads, so a detach that saw us
 * leave sees our context writes; the epoch counts outermost exits. */
static inline void path_enter(struct writer *w, uint32_t d)
{
	__atomic_store_n(&w->depth, d + 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void path_leave(struct writer *w, uint32_t d)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&w->depth, d, __ATOMIC_RELEASE);
	if (d == 0)
		__atomic_store_n(&w->epoch, w->epoch + 1, __ATOMIC_RELEASE);
}

/* One record of ev into each session of mask, at nesting level d. */
static inline __attribute__((always_inline)) void
write_sessions(struct trail_event *ev, struct evrt *rt, struct writer *w, unsigned d,
	       uint32_t mask, const void *payload, uint32_t len, uint64_t ts, uint32_t cpu)
{
	do {
		unsigned s = (unsigned)__builtin_ctz(mask);
		struct psess *ps = &trail__sess[s];

		write_one(ps, &w->ctx[s][d], w, d, rt->ids[s], payload, len, ts, cpu);
		if (TRAIL_UNLIKELY(__atomic_load_n(&ps->orphaned, __ATOMIC_RELAXED)))
			__atomic_fetch_and(ev->state, ~(1u << s), __ATOMIC_RELAXED);
		mask &= mask - 1;
	} while (mask);
}

/* Two records of one thread (ev1's then ev2's, ts1 <= ts2) into each
 * session of mask, written together (write_two). */
static inline __attribute__((always_inline)) void
write_sessions_two(struct trail_event *ev1, struct evrt *rt1, const void *p1, uint32_t len1,
		   uint64_t ts1, uint32_t cpu1, struct trail_event *ev2, struct evrt *rt2,
		   const void *p2, uint32_t len2, uint64_t ts2, uint32_t cpu2, struct writer *w,
		   uint32_t mask)
{
	do {
		unsigned s = (unsigned)__builtin_ctz(mask);
		struct psess *ps = &trail__sess[s];

		write_two(ps, &w->ctx[s][0], w, 0, rt1->ids[s], p1, len1, ts1, cpu1, rt2->ids[s], p2,
			  len2, ts2, cpu2);
		if (TRAIL_UNLIKELY(__atomic_load_n(&ps->orphaned, __ATOMIC_RELAXED))) {
			__atomic_fetch_and(ev1->state, ~(1u << s), __ATOMIC_RELAXED);
			__atomic_fetch_and(ev2->state, ~(1u << s), __ATOMIC_RELAXED);
		}
		mask &= mask - 1;
	} while (mask);
}

/* session s's traceoff (off 1) or traceon (0): its processes stop or
 * start writing (this one at once, the others at their next chunk:
 * trail__next_chunk) */
static inline void trail__session_pause(unsigned s, uint32_t off)
{
	struct psess *ps = &trail__sess[s];

	__atomic_store_n(&ps->hdr->paused, off, __ATOMIC_RELAXED);
	__atomic_store_n(&ps->paused, off, __ATOMIC_RELAXED);
}

/* write_event's way for an event with extras (evx.h): session's triggers
 * run, and the sessions of mask that record it and whose filter passes get
 * the record. In the record path at level d. */
HIDDEN void trail__write_ext(struct trail_event *ev, struct evrt *rt, struct writer *w,
			     unsigned d, uint32_t mask, const void *payload, uint32_t len);
/* An event's time, read once (have) by whoever needs it first: its
 * filters, its triggers (common_timestamp is the record's timestamp, as
 * in the kernel) or its record. */
struct trig_clock {
	uint64_t ts;
	uint32_t cpu;
	int have;
};
/* set by evx.c when a session has triggers: runs session s's triggers
 * of x on the event (payload, len), those that run before its record
 * (after: 0) or after it (stacktrace, actions writing events; after: 1,
 * when x->after); tc: the event's time */
extern void (*trail__trigger_hook)(struct evx *x, struct writer *w, unsigned d, unsigned s,
				   const void *payload, uint32_t len, int after,
				   struct trig_clock *tc) HIDDEN;
/* Where a probe hit's user stack starts (set around an entry probe's
 * records, for a stacktrace trigger on them): the probed function (ip),
 * its return address slot, its caller's frame pointer; ip 0: none (the
 * walk starts from the record path's own frames). */
struct trail_ustart {
	uintptr_t ip, slot, bp;
};
extern __thread struct trail_ustart trail__ustart __attribute__((tls_model("initial-exec"))) HIDDEN;
/* set by fstack.c: the thread's user stack (from trail__ustart if set,
 * else from the caller's frames, libtrail's own left out) into ips, at
 * most max return addresses; their number */
extern unsigned (*trail__ustack_hook)(uint64_t *ips, unsigned max) HIDDEN;
/* does the event (payload, len) pass f (trigger conditions, eprobe
 * filters)? w may be NULL (no writer: common_tid reads 0) */
HIDDEN int trail__filter_pass(const struct trail_filter *f, const struct writer *w,
			      const void *payload, uint32_t len);

/* The record path proper: the event into every session whose bit is set in
 * its status word and in `allow` (and whose filter passes, if it has one). */
static inline __attribute__((always_inline)) void
write_event(struct trail_event *ev, uint32_t allow, const void *payload, uint32_t len)
{
	struct writer *w = trail__tls_w;
	struct evrt *rt;
	uint32_t d, st, mask, cpu;
	uint64_t ts;

	if (TRAIL_UNLIKELY(!w) && !(w = trail__writer_get()))
		return;
	d = w->depth;
	if (TRAIL_UNLIKELY(d >= TRAIL_MAX_DEPTH)) {
		/* nested deeper than we keep contexts for: counted per session */
		mask = __atomic_load_n(ev->state, __ATOMIC_ACQUIRE) & allow & TRAIL_SESSION_BITS;
		for (; mask; mask &= mask - 1)
			__atomic_fetch_add(&trail__sess[__builtin_ctz(mask)].hdr->nostream_lost,
					   1, __ATOMIC_RELAXED);
		return;
	}
	path_enter(w, d);
	/* a record a source kept back goes first, in its own stream */
	if (TRAIL_UNLIKELY(w->defer.flush != NULL) && d == 0)
		w->defer.flush(w);
	/* acquire: pairs with the release that set the bit after the session
	 * slot and rt->ids[] were filled in */
	st = __atomic_load_n(ev->state, __ATOMIC_ACQUIRE);
	mask = st & allow & TRAIL_SESSION_BITS;
	rt = ev->rt;
	if (TRAIL_LIKELY(mask && rt)) {
		const struct evx *x;
		int rec = 1;

		if (TRAIL_UNLIKELY(st & TRAIL_STATE_EXT)) {
			/* one session, whose only extra is a filter on numbers
			 * (the common way to use one): decided here, without
			 * the call (bench/filter.sh's rejected event 10.5-11.2
			 * ns -> 9.0-10.1, its accepted one 21.0 -> 18.6) */
			if (!(mask & (mask - 1)) &&
			    (x = __atomic_load_n(&rt->x[__builtin_ctz(mask)], __ATOMIC_ACQUIRE)) &&
			    __atomic_load_n(&x->how, __ATOMIC_RELAXED) ==
				    (EVX_REC | EVX_FILT | EVX_FAST)) {
				rec = trail_filter_match_fast(&x->filter, payload);
			} else {
				trail__write_ext(ev, rt, w, d, mask, payload, len);
				rec = 0;
			}
		}
		if (rec) {
			ts = now_cpu(&cpu);
			write_sessions(ev, rt, w, d, mask, payload, len, ts, cpu);
		}
	}
	path_leave(w, d);
}

#endif /* TRAIL_LIB_RECORD_H */
