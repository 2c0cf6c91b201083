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
 *
 * This file also owns the writers themselves (one per thread that ever
 * recorded, reused after it exits) and their end: thread exit and fork.
 * It calls nothing above it: the sessions (struct psess) are filled in by
 * runtime.c, the records come from the event sources.
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/counters.h"
#include "evx.h"
#include "record.h"

__thread struct writer *trail__tls_w
	__attribute__((tls_model("initial-exec"), visibility("hidden")));
struct writer *trail__writers;

/*
 * The process's tracing state, read on every record path and by the
 * sources and services above it; the runtime (runtime.c) sets it. It is
 * defined here, at the bottom, so that references run one way: down.
 */
struct psess trail__sess[TRAIL_MAX_SESSIONS];
uint32_t trail__clock = TRAIL_CLOCK_MONO;
int trail__cpu_mode = CPU_GETCPU;
pid_t trail__pid;
int trail__ctl_sig;	/* the control signal, 0: attach disabled */
/* libtrail's own work under way in this thread (internal.h) */
__thread uint32_t trail__self __attribute__((tls_model("initial-exec")));
static pthread_key_t writer_key;

/*
 * A recorder killed without detaching leaves its sessions mapped here.
 * Writers notice it now and then (here) and turn their events' bits off;
 * the mapping itself goes at the next control signal, when a grace period
 * can be waited for (runtime.c).
 */
void trail__sess_check_orphan(struct psess *ps)
{
	if (!trail__proc_alive(ps->cli_pid, ps->cli_start))
		__atomic_store_n(&ps->orphaned, 1, __ATOMIC_RELAXED);
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

/*
 * First fit: the slots ever taken stay a prefix of the table, ended by
 * the first one never taken (FREE, generation 0), and the recorder's
 * scans for exited threads and dead processes stop there
 * (trail__rec_recycle_streams) instead of reading every slot, 6 MB with
 * the default buffer, for each process a forking program ends. A claim
 * reads the slots in use before a free one: once per thread and level.
 */
static int claim_stream(struct psess *ps, struct wctx *c, struct writer *w,
			unsigned depth)
{
	uint32_t n = ps->max_streams;

	for (uint32_t i = 0; i < n; i++) {
		struct trail_stream *st;
		uint32_t free_state = TRAIL_SS_FREE;

		st = &ps->streams[i];
		if (__atomic_load_n(&st->state, __ATOMIC_RELAXED) != TRAIL_SS_FREE)
			continue;
		/* CLAIMING (3) hides the slot from the recorder until filled */
		if (!__atomic_compare_exchange_n(&st->state, &free_state, 3, 0,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		/* atomic: reclaimers compare it (reclaim_chunk) */
		__atomic_store_n(&st->gen, st->gen + 1, __ATOMIC_RELAXED);
		st->pid = (uint32_t)trail__pid;
		st->tid = (uint32_t)w->tid;
		st->level = depth;
		st->proc = ps->proc_idx;
		__atomic_store_n(&st->dropped, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&st->overwritten, 0, __ATOMIC_RELAXED);
		st->chunks = 0;
		prctl(PR_GET_NAME, st->comm, 0, 0, 0);
		__atomic_store_n(&st->state, TRAIL_SS_LIVE, __ATOMIC_RELEASE);
		c->stream = i + 1;
		return 1;
	}
	return 0;
}

/*
 * Overwrite mode: take the oldest published chunk, crediting its events to
 * its stream as lost. Oldest-first keeps a contiguous suffix per stream.
 * The victim's stream is read before the CAS and its refs held until the
 * credit is in (arena.md: a recorder retiring that stream waits for it);
 * a chunk the recorder adopted is credited by the recorder, not here.
 */
static int reclaim_chunk(struct psess *ps, uint64_t word, uint32_t *idx)
{
	for (int tries = 0; tries < 4; tries++) {
		uint64_t best_w = 0, best_pub = UINT64_MAX;
		uint32_t best = UINT32_MAX, s, gen, *refs = NULL;
		struct trail_chunk_hdr *v;
		int won;

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
		v = (struct trail_chunk_hdr *)(ps->base + ps->g.chunks_off +
					       (uint64_t)best * ps->chunk_size);
		/* (atomic: the chunk may be changing hands meanwhile; the CAS
		 * below then fails) */
		s = __atomic_load_n(&v->stream, __ATOMIC_RELAXED);
		gen = __atomic_load_n(&v->stream_gen, __ATOMIC_RELAXED);
		if (s < ps->max_streams) {
			refs = &ps->streams[s].refs;
			__atomic_fetch_add(refs, 1, __ATOMIC_SEQ_CST);
		}
		/* acquire: the publisher's records and header; release: our
		 * refs before a recorder that sees the chunk gone reads them */
		won = __atomic_compare_exchange_n(&ps->ctab[best], &best_w, word, 0,
						  __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
		if (won && refs && !(v->flags & TRAIL_CHF_ADOPTED) && v->stream == s &&
		    v->stream_gen == gen &&
		    __atomic_load_n(&ps->streams[s].gen, __ATOMIC_RELAXED) == gen)
			__atomic_fetch_add(&ps->streams[s].overwritten,
					   TRAIL_COMMIT_EVENTS(__atomic_load_n(&v->commit,
									       __ATOMIC_RELAXED)),
					   __ATOMIC_RELAXED);
		if (refs) /* release: the credit before the recorder's acquire */
			__atomic_fetch_sub(refs, 1, __ATOMIC_RELEASE);
		if (won) {
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

/*
 * Blocking mode (LTTng-UST's blocking channels): with no free chunk, the
 * outermost writer of a thread sleeps and asks again, 20 us then doubling
 * to 1 ms, until the recorder frees one or the session's timeout passes;
 * then the event is dropped as in discard mode. A recorder that stops
 * (stopping) or dies (orphaned) ends the wait at once. Handlers nested in
 * a write (depth > 0) never wait: the code they interrupted may be what
 * the program needs to make progress.
 */
static int wait_chunk(struct psess *ps, struct wctx *c, uint64_t word, uint32_t *idx)
{
	uint64_t waited = 0, limit = ps->block_us == ~0u ? UINT64_MAX : ps->block_us * 1000ull;
	struct timespec ts = {0, 20000};

	while (waited < limit) {
		if (__atomic_load_n(&ps->hdr->stopping, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&ps->orphaned, __ATOMIC_RELAXED))
			return 0;
		nanosleep(&ts, NULL);
		waited += (uint64_t)ts.tv_nsec;
		if (take_chunk(ps, word, idx))
			return 1;
		if (ts.tv_nsec < 1000000)
			ts.tv_nsec *= 2;
		else if ((++c->fails & 63) == 0) /* ~every 64 ms */
			trail__sess_check_orphan(ps);
	}
	return 0;
}

/* 1: a chunk with room; 0: drop, count it in the stream; -1: dropped and
 * already counted (no stream slot). */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* (internal.h; a forked child's first writes: inherit.c) */
void trail__prefault(const void *p, size_t n)
{
	static uintptr_t page; /* (any thread may be first: atomic) */
	uintptr_t lo, hi, pg = __atomic_load_n(&page, __ATOMIC_RELAXED);

	if (!p || !n)
		return;
	if (!pg) {
		pg = (uintptr_t)sysconf(_SC_PAGESIZE);
		__atomic_store_n(&page, pg, __ATOMIC_RELAXED);
	}
	lo = (uintptr_t)p & ~(pg - 1);
	hi = ((uintptr_t)p + n + pg - 1) & ~(pg - 1);
	madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

/*
 * The first time this process takes a chunk, its pages are mapped with one
 * system call instead of a page fault each: in some virtual machines a
 * fault costs 23 us, 16 of them per 64 KiB chunk, against 3 us a page
 * populated (measured on the VM of doc/performance.md, where this took
 * the enabled event from 22 ns to 16 and a function_graph call from
 * 42 ns to 35.5 in the same A/B run). Kernels before 5.14
 * refuse the call: the pages then come by faults as before. A forked
 * child has no page tables for the shared arena: it starts over, and its
 * first chunk's pages come by faults, as many as it fills: a child that
 * writes a record or two and exits would map 16 pages for them (64 KiB
 * of page tables made and torn down at each fork, ~50 us here); one
 * that takes a second chunk writes enough for the call to pay.
 */
static void chunk_populate(struct psess *ps, uint32_t idx, void *chunk)
{
	uint64_t *b = ps->populated, bit = 1ull << (idx & 63);

	if (!b)
		return;
	if (__atomic_load_n(&ps->populated_pid, __ATOMIC_RELAXED) != trail__pid) {
		/* (the bitmap, and the page the chunk's header goes on) */
		trail__prefault(b, (ps->nchunks / 64 + 1) * sizeof(*b));
		trail__prefault(chunk, 1);
		for (uint32_t i = 0; i <= ps->nchunks / 64; i++)
			__atomic_store_n(&b[i], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ps->populated_pid, trail__pid, __ATOMIC_RELAXED);
		return;
	}
	if (__atomic_load_n(&b[idx >> 6], __ATOMIC_RELAXED) & bit)
		return;
	__atomic_fetch_or(&b[idx >> 6], bit, __ATOMIC_RELAXED);
	trail__prefault(chunk, ps->chunk_size);
}

int trail__paused(struct psess *ps)
{
	if (__atomic_load_n(&ps->hdr->paused, __ATOMIC_RELAXED))
		return 1;
	__atomic_store_n(&ps->paused, 0, __ATOMIC_RELAXED); /* a traceon elsewhere */
	return 0;
}

int trail__next_chunk(struct psess *ps, struct wctx *c, struct writer *w,
		      unsigned depth, uint64_t ts, uint32_t len)
{
	struct trail_stream *st;
	struct trail_chunk_hdr *ch;
	uint64_t word, seq;
	uint32_t idx;

	/* a traceoff in another process of the session: followed here */
	if (TRAIL_UNLIKELY(__atomic_load_n(&ps->hdr->paused, __ATOMIC_RELAXED))) {
		__atomic_store_n(&ps->paused, 1, __ATOMIC_RELAXED);
		return -1;
	}
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
	/* is anybody still reading? asked every 64th chunk taken, or every
	 * 4096th failure to get one (a dead recorder frees nothing; each ask
	 * reads /proc, ~7 us, 50 times a dropped event's cost) */
	if (!take_chunk(ps, word, &idx) &&
	    !(ps->block_us && depth == 0 && wait_chunk(ps, c, word, &idx))) {
		if ((++c->fails & 4095) == 0)
			trail__sess_check_orphan(ps);
		return 0;
	}
	if ((++c->checks & 63) == 0)
		trail__sess_check_orphan(ps);
	st->chunks = seq + 1;
	ch = (struct trail_chunk_hdr *)(ps->base + ps->g.chunks_off +
					(uint64_t)idx * ps->chunk_size);
	chunk_populate(ps, idx, ch);
	__atomic_store_n(&ch->commit, 0, __ATOMIC_RELAXED);
	/* atomic: a reclaimer may read them before its CAS (reclaim_chunk) */
	__atomic_store_n(&ch->stream, c->stream - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ch->stream_gen, st->gen, __ATOMIC_RELAXED);
	ch->seq = seq;
	ch->base_ts = ts;
	ch->lost_before = c->pending_lost;
	ch->pid = (uint32_t)trail__pid;
	ch->tid = (uint32_t)w->tid;
	ch->level = (uint16_t)depth;
	ch->flags = 0;
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

__attribute__((noinline)) void trail__ctx_reset(struct wctx *c, uint32_t gen)
{
	memset(c, 0, sizeof(*c));
	c->gen = gen;
}

/* --------------------------------------------------------------- writers */

static void writer_dtor(void *arg);

int trail__writers_init(void)
{
	return pthread_key_create(&writer_key, writer_dtor) ? -1 : 0;
}

/* The calling thread's writer, made or reused (NULL: out of memory, or
 * libtrail disabled: no key). Only reached once a session is active. */
struct writer *trail__writer_get(void)
{
	struct writer *w, *head;

	for (w = __atomic_load_n(&trail__writers, __ATOMIC_ACQUIRE); w; w = w->next) {
		uint32_t zero = 0;

		if (!__atomic_load_n(&w->in_use, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&w->in_use, &zero, 1, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			goto got;
	}
	w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return NULL;
	w->in_use = 1;
	head = __atomic_load_n(&trail__writers, __ATOMIC_RELAXED);
	do
		w->next = head;
	while (!__atomic_compare_exchange_n(&trail__writers, &head, w, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
got:
	memset(w->ctx, 0, sizeof(w->ctx));
	w->defer.flush = NULL;
	w->tid = (pid_t)syscall(SYS_gettid);
	if (trail__tls_w) { /* a signal handler on this thread beat us */
		__atomic_store_n(&w->in_use, 0, __ATOMIC_RELEASE);
		return trail__tls_w;
	}
	trail__tls_w = w;
	pthread_setspecific(writer_key, w);
	return w;
}

/* The calling thread's deferred write, done (fork, exit()). */
void trail__defer_flush_self(void)
{
	struct writer *w = trail__tls_w;

	if (!w || !w->defer.flush || w->depth)
		return;
	path_enter(w, 0);
	if (w->defer.flush)
		w->defer.flush(w);
	path_leave(w, 0);
}

int trail__writer_counter(struct writer *w, unsigned c, uint64_t *v)
{
	if (!(w->ctr_open >> c & 1)) {
		struct perf_event_attr a;

		trail_counter_attr((int)c, &a);
		w->ctr_fd[c] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		w->ctr_open |= 1u << c;
		w->ctr_pg[c] = NULL;
		/* a hardware counter: its page, for rdpmc reads (no system
		 * call) where the kernel allows them */
		if (w->ctr_fd[c] >= 0 && a.type == PERF_TYPE_HARDWARE) {
			void *pg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
					w->ctr_fd[c], 0);

			w->ctr_pg[c] = pg == MAP_FAILED ? NULL : pg;
		}
	}
	if (w->ctr_pg[c] && !trail_counter_mmap_read(w->ctr_pg[c], trail_arch_rdpmc, v))
		return 0;
	if (w->ctr_fd[c] < 0 || read(w->ctr_fd[c], v, 8) != 8) {
		*v = 0;
		return -1;
	}
	return 0;
}

/* Read alone, not in the group: a clock (task-clock, cpu-clock), which
 * does not count in a group with the other software counters (a member
 * reads 0; as the leader, its members do), and a hardware counter (rdpmc
 * reads it without a system call where the kernel allows it). */
static int is_clock(int c)
{
	struct perf_event_attr a;

	trail_counter_attr(c, &a);
	return a.type == PERF_TYPE_HARDWARE ||
	       (a.type == PERF_TYPE_SOFTWARE &&
		(a.config == PERF_COUNT_SW_TASK_CLOCK || a.config == PERF_COUNT_SW_CPU_CLOCK));
}

/* (re)open the thread's group of the counters of mask but the clocks,
 * read_format GROUP (one read() gives them all), the first one leading */
static void group_open(struct writer *w, uint32_t mask)
{
	for (unsigned i = 0; i < w->grp_n; i++)
		if (w->grp_fd[i] >= 0)
			close(w->grp_fd[i]);
	uint32_t n = 0;

	w->grp_n = 0;
	w->grp_mask = mask;
	for (uint32_t m = mask; m; m &= m - 1)
		n += !is_clock(__builtin_ctz(m));
	for (uint32_t m = mask; m && w->grp_n < 16; m &= m - 1) {
		struct perf_event_attr a;
		int lead = w->grp_n ? w->grp_fd[0] : -1, c = __builtin_ctz(m);

		if (is_clock(c))
			continue;
		if (w->grp_n && lead < 0)
			break;
		trail_counter_attr(c, &a);
		/* (one alone: a plain read, the group's costs the kernel an
		 * allocation a read: 3.1 against 2.0 us a call here) */
		a.read_format = n > 1 ? PERF_FORMAT_GROUP : 0;
		w->grp_c[w->grp_n] = (uint8_t)c;
		w->grp_fd[w->grp_n++] = (int)syscall(SYS_perf_event_open, &a, 0, -1, lead,
						     PERF_FLAG_FD_CLOEXEC);
	}
}

int trail__writer_counters(struct writer *w, uint32_t mask, uint64_t *v)
{
	struct {
		uint64_t nr;
		uint64_t val[16];
	} g;
	ssize_t n;
	uint32_t left = mask;
	unsigned j = 0;

	if (w->grp_mask != mask)
		group_open(w, mask);
	if (w->grp_n == 1) { /* alone: its value */
		g.nr = 1;
		n = w->grp_fd[0] >= 0 && read(w->grp_fd[0], &g.val[0], 8) == 8 ? 16 : -1;
	} else {
		n = w->grp_n && w->grp_fd[0] >= 0 ? read(w->grp_fd[0], &g, sizeof(g)) : 0;
	}
	/* (the values of the members that opened, in their order) */
	for (unsigned k = 0; k < w->grp_n; k++) {
		int ok = w->grp_fd[k] >= 0 && n >= 8 && j < g.nr && (size_t)n >= 8 * (j + 2);

		v[w->grp_c[k]] = ok ? g.val[j] : 0;
		j += ok;
		left &= ~(1u << w->grp_c[k]);
	}
	/* the clocks and hardware counters: alone */
	for (; left; left &= left - 1)
		trail__writer_counter(w, (unsigned)__builtin_ctz(left), &v[__builtin_ctz(left)]);
	return n >= 0 ? 0 : -1;
}

/* the thread's counters: closed with it */
static void counters_close(struct writer *w)
{
	for (unsigned i = 0; i < sizeof(w->ctr_fd) / sizeof(w->ctr_fd[0]); i++) {
		if ((w->ctr_open >> i & 1) && w->ctr_pg[i])
			munmap(w->ctr_pg[i], (size_t)sysconf(_SC_PAGESIZE));
		if ((w->ctr_open >> i & 1) && w->ctr_fd[i] >= 0)
			close(w->ctr_fd[i]);
	}
	w->ctr_open = 0;
	for (unsigned i = 0; i < w->grp_n; i++)
		if (w->grp_fd[i] >= 0)
			close(w->grp_fd[i]);
	w->grp_n = 0;
	w->grp_mask = 0;
}

static void writer_dtor(void *arg)
{
	struct writer *w = arg;

	/* enter the record path so a concurrent detach waits for us */
	__atomic_store_n(&w->depth, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (w->defer.flush) /* e.g. a function_graph entry whose call never returned */
		w->defer.flush(w);
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++) {
		struct psess *ps = &trail__sess[s];

		if (__atomic_load_n(&ps->state, __ATOMIC_ACQUIRE) != PS_ACTIVE)
			continue;
		for (unsigned d = 0; d < TRAIL_MAX_DEPTH; d++)
			if (w->ctx[s][d].gen == __atomic_load_n(&ps->gen, __ATOMIC_RELAXED))
				trail__ctx_close(ps, &w->ctx[s][d]);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	counters_close(w);
	__atomic_store_n(&w->depth, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&w->epoch, w->epoch + 1, __ATOMIC_RELEASE);
	trail__tls_w = NULL;
	__atomic_store_n(&w->in_use, 0, __ATOMIC_RELEASE);
}

/* At exit() the main thread's key destructor does not run: its streams
 * end here, so that the flight recorder's keeper takes their chunks at
 * its next pass, not when it notices the process died (every 100 ms:
 * processes that come and go faster would hold every chunk meanwhile). An
 * event written later (a destructor run after libtrail's) takes a new
 * writer. */
void trail__writer_exit_self(void)
{
	struct writer *w = trail__tls_w;

	if (!w)
		return;
	pthread_setspecific(writer_key, NULL);
	writer_dtor(w);
}

/* In a forked child (one thread): every writer's contexts are the
 * parent's chunks and streams, forgotten; the other threads' writers are
 * free again. */
void trail__writers_forked(void)
{
	struct writer *self = trail__tls_w;

	if (self)
		trail__prefault(self, sizeof(*self));
	for (struct writer *w = trail__writers; w; w = w->next) {
		for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
			for (unsigned d = 0; d < TRAIL_MAX_DEPTH; d++) {
				uint32_t gen = w->ctx[s][d].gen;

				memset(&w->ctx[s][d], 0, sizeof(w->ctx[s][d]));
				w->ctx[s][d].gen = gen;
			}
		w->defer.flush = NULL;
		counters_close(w); /* (the parent's threads': not ours to read) */
		if (w != self) {
			w->depth = 0;
			w->in_use = 0;
		}
	}
	if (self)
		self->tid = trail__pid;
}

/* ------------------------------------------------------- filtered events */

/* a filter that reads more than the payload's fixed fields: the common
 * fields (*ts and *cpu read, *clock set, when it needs the CPU), strings */
static __attribute__((noinline)) int match_slow(const struct trail_filter *f,
						const struct writer *w, const void *payload,
						uint32_t len, uint64_t *ts, uint32_t *cpu, int *clock)
{
	struct trail_filter_ctx c = {.pid = (uint32_t)trail__pid, .tid = w ? (uint32_t)w->tid : 0};
	char comm[17];

	if (f->clock) {
		if (!*clock)
			*ts = now_cpu(cpu);
		*clock = 1;
		c.cpu = *cpu;
		c.ts = *ts;
	}
	if (f->comm) {
		memset(comm, 0, sizeof(comm));
		prctl(PR_GET_NAME, comm, 0, 0, 0);
		c.comm = comm;
	}
	return trail_filter_match(f, payload, len, &c);
}

/* does the record pass f? (the clock as match_slow reads it) */
static inline int passes(const struct trail_filter *f, const struct writer *w, const void *payload,
			 uint32_t len, uint64_t *ts, uint32_t *cpu, int *clock)
{
	if (TRAIL_LIKELY(f->fast && len >= f->fast_len))
		return trail_filter_match_fast(f, payload);
	return match_slow(f, w, payload, len, ts, cpu, clock);
}

int trail__filter_pass(const struct trail_filter *f, const struct writer *w, const void *payload,
		       uint32_t len)
{
	uint64_t ts;
	uint32_t cpu;
	int clock = 0;

	return passes(f, w, payload, len, &ts, &cpu, &clock);
}

__thread struct trail_ustart trail__ustart __attribute__((tls_model("initial-exec")));
unsigned (*trail__ustack_hook)(uint64_t *ips, unsigned max);

void (*trail__trigger_hook)(struct evx *x, struct writer *w, unsigned d, unsigned s,
			    const void *payload, uint32_t len, int after, struct trig_clock *tc);

void trail__write_ext(struct trail_event *ev, struct evrt *rt, struct writer *w, unsigned d,
		      uint32_t mask, const void *payload, uint32_t len)
{
	struct trig_clock tc = {0, 0, 0};
	uint32_t pass = mask, after = 0;

	for (uint32_t m = mask; m; m &= m - 1) {
		unsigned s = (unsigned)__builtin_ctz(m);
		struct evx *x = __atomic_load_n(&rt->x[s], __ATOMIC_ACQUIRE);
		const struct trail_filter *f;
		uint32_t how;

		if (!x)
			continue;
		f = &x->filter;
		how = __atomic_load_n(&x->how, __ATOMIC_RELAXED);
		if (TRAIL_LIKELY(how == (EVX_REC | EVX_FILT | EVX_FAST))) {
			if (!trail_filter_match_fast(f, payload))
				pass &= ~(1u << s);
			continue;
		}
		/* triggers first: whether the event is recorded or not
		 * (traceoff's own event is not, traceon's is); a stack
		 * trace after the record, as ftrace shows it */
		if (how & EVX_TRIG) {
			__atomic_load_n(&trail__trigger_hook, __ATOMIC_ACQUIRE)(x, w, d, s, payload, len,
										0, &tc);
			after |= (uint32_t)x->after << s;
		}
		/* (again: a trigger may have turned it on or off) */
		if (!(__atomic_load_n(&x->how, __ATOMIC_RELAXED) & EVX_REC))
			pass &= ~(1u << s);
		else if ((how & EVX_FILT) && !passes(f, w, payload, len, &tc.ts, &tc.cpu, &tc.have))
			pass &= ~(1u << s);
	}
	if (pass) {
		if (!tc.have) {
			tc.ts = now_cpu(&tc.cpu);
			tc.have = 1;
		}
		write_sessions(ev, rt, w, d, pass, payload, len, tc.ts, tc.cpu);
	}
	for (; TRAIL_UNLIKELY(after); after &= after - 1) {
		unsigned s = (unsigned)__builtin_ctz(after);

		trail__trigger_hook(rt->x[s], w, d, s, payload, len, 1, &tc);
	}
}

/* ------------------------------------------------------------ entry points */

void (*trail__eprobe_hook)(struct trail_event *ev, const void *payload, uint32_t len);

__attribute__((visibility("default"))) void
trail__write(struct trail_event *ev, const void *payload, uint32_t len)
{
	write_event(ev, ~0u, payload, len);
	if (TRAIL_UNLIKELY(__atomic_load_n(ev->state, __ATOMIC_RELAXED) & TRAIL_STATE_EPROBE))
		trail__eprobe_hook(ev, payload, len);
}

void trail__write_mask(struct trail_event *ev, uint32_t allow, const void *payload,
		       uint32_t len)
{
	write_event(ev, allow, payload, len);
}
