/* SPDX-License-Identifier: MIT */
/*
 * test-record.c - the record path (src/lib/record.c) alone: linked with
 * src/common only, no runtime.c, no event source. The test plays the part
 * of runtime.c (it defines the globals record.c reads and fills a session
 * slot from an arena, as sess_attach() does) and of the recorder (it
 * decodes chunks with the layout of src/common/arena.h, frees them, and in
 * the stress test drains them from a thread of its own).
 *
 *   one thread        every record, in order, whole, with its payload
 *   discard mode      a full arena drops and counts; freed chunks resume
 *                     with lost_before; an oversized record drops
 *   overwrite mode    the oldest publication is reclaimed, its events
 *                     credited to its own stream (not if the recorder
 *                     adopted the chunk)
 *   nesting           a signal handler inside a write: depth 1, its own
 *                     stream; levels 2 and 3; deeper is counted
 *   deferred write    the hook before the next outermost write only, at
 *                     trail__defer_flush_self() and at thread exit
 *   writers           reused after a thread exits; orphan check; masks
 *   stress            8 threads x 100k events with a draining recorder:
 *                     written = read + dropped + overwritten per stream,
 *                     no torn record, no chunk with two owners (TSan)
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "common/util.h"
#include "lib/record.h"

/* (the process's tracing state, trail__sess and the clock, is record.c's
 * own: nothing from above it is needed) */

/* public entry point (include/trail/trail.h declares it weak) */
void trail__write(struct trail_event *ev, const void *payload, uint32_t len);

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void die(const char *what)
{
	fprintf(stderr, "  %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ------------------------------------------------------- a fake session */

struct fake {
	unsigned slot;
	uint8_t *base;
	struct trail_arena_geom g;
	struct psess *ps;
};

/* Session slot `slot` recording into a new arena, filled in as
 * runtime.c's sess_attach() does, its recorder this (live) process. */
static void fake_open(struct fake *f, unsigned slot, uint32_t chunk_size,
		      uint32_t nchunks, int overwrite)
{
	struct psess *ps = &trail__sess[slot];
	uint64_t start = 0;
	uint32_t gen = ps->gen;

	static int writers_ready;

	/* runtime.c's init: the key whose destructor ends a thread's writer */
	if (!writers_ready++ && trail__writers_init())
		die("trail__writers_init");
	memset(f, 0, sizeof(*f));
	f->slot = slot;
	trail__pid = getpid();
	if (trail__arena_geom(&f->g, (uint64_t)chunk_size * nchunks, chunk_size, 0))
		die("arena geometry");
	f->base = mmap(NULL, f->g.size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f->base == MAP_FAILED)
		die("mmap arena");
	if (trail__proc_stat(getpid(), &start, NULL, NULL))
		die("proc_stat");
	trail__arena_format(f->base, &f->g, 42 + slot,
			    overwrite ? TRAIL_ARENA_OVERWRITE : 0, trail__clock, "",
			    (uint32_t)getpid(), start);
	memset(ps, 0, sizeof(*ps));
	ps->base = f->base;
	ps->map_size = f->g.size;
	ps->g = f->g;
	ps->hdr = (struct trail_arena_hdr *)f->base;
	ps->ctab = trail__arena_ctab(f->base, &f->g);
	ps->streams = trail__arena_streams(f->base, &f->g);
	ps->procs = trail__arena_procs(f->base, &f->g);
	ps->proc_idx = 0;
	ps->procs[0].pid = (uint32_t)getpid();
	ps->procs[0].state = TRAIL_PS_ACTIVE;
	ps->chunk_size = f->g.chunk_size;
	ps->nchunks = f->g.nchunks;
	ps->max_streams = f->g.max_streams;
	ps->populated = calloc(f->g.nchunks / 64 + 1, sizeof(uint64_t));
	ps->populated_pid = trail__pid;
	ps->overwrite = !!overwrite;
	ps->block_us = 0;
	ps->session_id = 42 + slot;
	ps->cli_pid = getpid();
	ps->cli_fd = -1;
	ps->cli_start = start;
	ps->orphaned = 0;
	__atomic_store_n(&ps->gen, gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ps->state, PS_ACTIVE, __ATOMIC_RELEASE);
	f->ps = ps;
}

static void fake_close(struct fake *f)
{
	__atomic_store_n(&f->ps->state, PS_FREE, __ATOMIC_RELEASE);
	free(f->ps->populated);
	f->ps->populated = NULL;
	munmap(f->base, f->g.size);
}

static struct trail_chunk_hdr *chunk_at(const struct fake *f, uint32_t i)
{
	return trail__arena_chunk(f->base, &f->g, i);
}

/* An event descriptor registered with id `id` in some slots, its payload
 * always `len` bytes (what its fields would say). */
struct tev {
	struct trail_event ev;
	struct evrt rt;
	uint32_t state;
	uint32_t slots; /* where it was registered (bits of state may go) */
	uint32_t len;
};

static struct tev *tevs[64];
static unsigned ntevs;

static void tev_init(struct tev *e, uint32_t len)
{
	memset(e, 0, sizeof(*e));
	e->ev.abi = TRAIL_EVENT_ABI;
	e->ev.size = sizeof(e->ev);
	e->ev.state = &e->state;
	e->ev.rt = &e->rt;
	e->rt.ev = &e->ev;
	e->len = len;
	if (ntevs < TRAIL_ARRAY_SIZE(tevs))
		tevs[ntevs++] = e;
}

/* as runtime.c's enable_in(): ids[] first, then the bit (release) */
static void tev_enable(struct tev *e, const struct fake *f, uint32_t id)
{
	e->rt.ids[f->slot] = id;
	e->slots |= 1u << f->slot;
	__atomic_fetch_or(&e->state, 1u << f->slot, __ATOMIC_RELEASE);
}

/* payload size of event id in slot s, ~0u: no such event */
static uint32_t len_of(unsigned s, uint32_t id)
{
	for (unsigned i = 0; i < ntevs; i++)
		if ((tevs[i]->slots & (1u << s)) && tevs[i]->rt.ids[s] == id)
			return tevs[i]->len;
	return ~0u;
}

/* ------------------------------------------------------------- decoding */

struct rec {
	uint32_t id;
	uint32_t cpu;
	uint64_t ts;
	const uint8_t *p;
	uint32_t len;
};

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/*
 * The records of a chunk whose header (and commit word) is h and whose
 * records area is data, into out[0..max): their number, or -1 at the first
 * malformed one. Whole records must cover exactly the committed bytes, and
 * their count must be the committed count: a commit never covers half a
 * record. Payload sizes come from the events of slot s.
 */
static int decode(unsigned s, const struct trail_chunk_hdr *h, const uint8_t *data,
		  struct rec *out, int max)
{
	uint32_t bytes = TRAIL_COMMIT_BYTES(h->commit), cpu = ~0u;
	const uint8_t *p = data, *end = data + bytes;
	uint64_t ts = h->base_ts;
	int n = 0;

	while (p < end) {
		uint32_t w, type, id, len;
		uint64_t delta;

		if (end - p < 4)
			return -1;
		w = get32(p);
		p += 4;
		type = w & TRAIL_REC_TYPE_MASK;
		delta = w >> TRAIL_REC_TYPE_BITS;
		if (type == TRAIL_REC_TIME) { /* absolute, delta 0 */
			if (delta || end - p < 8)
				return -1;
			ts = get64(p);
			p += 8;
			continue;
		}
		ts += delta;
		if (type == TRAIL_REC_CPU) {
			if (end - p < 4)
				return -1;
			cpu = get32(p);
			p += 4;
			continue;
		}
		if (type == TRAIL_REC_LONGID) {
			if (end - p < 4)
				return -1;
			id = get32(p);
			p += 4;
			if (id < TRAIL_REC_DIRECT_IDS) /* would have been direct */
				return -1;
		} else if (type >= TRAIL_REC_FIRST_EVENT) {
			id = type - TRAIL_REC_FIRST_EVENT;
		} else {
			return -1;
		}
		len = len_of(s, id);
		/* every chunk starts with a CPU record: no event before it */
		if (len == ~0u || (uint64_t)(end - p) < len || cpu == ~0u || n >= max)
			return -1;
		out[n].id = id;
		out[n].cpu = cpu;
		out[n].ts = ts;
		out[n].p = p;
		out[n].len = len;
		n++;
		p += len;
	}
	if ((uint32_t)n != TRAIL_COMMIT_EVENTS(h->commit))
		return -1;
	return n;
}

/* A chunk of the arena that is not FREE. */
struct cinfo {
	uint32_t idx;
	uint64_t word;
	struct trail_chunk_hdr *h;
};

static int cinfo_cmp_seq(const void *a, const void *b)
{
	const struct cinfo *x = a, *y = b;

	return x->h->seq < y->h->seq ? -1 : x->h->seq > y->h->seq;
}

/* The chunks stream `stream` has in the arena (not FREE), by chunk seq. */
static int stream_chunks(const struct fake *f, uint32_t stream, struct cinfo *out, int max)
{
	int n = 0;

	for (uint32_t j = 0; j < f->g.nchunks; j++) {
		uint64_t w = __atomic_load_n(&f->ps->ctab[j], __ATOMIC_ACQUIRE);
		struct trail_chunk_hdr *h = chunk_at(f, j);

		if (TRAIL_CS_STATE(w) == TRAIL_CS_FREE || h->stream != stream)
			continue;
		if (n < max)
			out[n++] = (struct cinfo){j, w, h};
	}
	qsort(out, (size_t)n, sizeof(*out), cinfo_cmp_seq);
	return n;
}

/* Every record stream `stream` has in the arena, in order: count or -1. */
static int stream_records(const struct fake *f, uint32_t stream, struct rec *out, int max)
{
	struct cinfo *c = calloc(f->g.nchunks, sizeof(*c));
	int nc = stream_chunks(f, stream, c, (int)f->g.nchunks), n = 0;

	for (int i = 0; i < nc && n >= 0; i++) {
		int k = decode(f->slot, c[i].h, (const uint8_t *)(c[i].h + 1), out + n, max - n);

		n = k < 0 ? -1 : n + k;
	}
	free(c);
	return n;
}

/* the stream slot of the calling thread's context (slot s, level d) */
static uint32_t my_stream(const struct fake *f, unsigned d)
{
	struct writer *w = trail__tls_w;

	return w && w->ctx[f->slot][d].stream ? w->ctx[f->slot][d].stream - 1 : ~0u;
}

/* ---------------------------------------------------- one thread, in order */

/* payload byte j of record i */
static uint8_t pat(uint32_t i, uint32_t j)
{
	return (uint8_t)(i * 131u + j * 7u + 1u);
}

/* every branch of copy_payload(), direct and long ids */
static const struct {
	uint32_t id, len;
} mix[] = {
	{0, 0}, {1, 1}, {2, 3}, {3, 4}, {4, 7}, {5, 8}, {6, 12}, {7, 16},
	{8, 17}, {9, 32}, {10, 33}, {11, 200},
	{TRAIL_REC_DIRECT_IDS - 1, 24}, /* the last direct id */
	{TRAIL_REC_DIRECT_IDS, 8},      /* the first long one */
	{70000, 40},
};
#define NMIX TRAIL_ARRAY_SIZE(mix)

static const struct clock_row {
	const char *name;
	uint32_t clock;
	int cpu_mode;
} clock_rows[] = {
	{"mono+getcpu", TRAIL_CLOCK_MONO, CPU_GETCPU},
	{"tsc+rdtscp", TRAIL_CLOCK_TSC, CPU_TSCP},
	{"tsc+rseq", TRAIL_CLOCK_TSC, CPU_RSEQ},
};

static int rseq_usable(void)
{
#ifdef HAVE_RSEQ
	if (__rseq_size >= 8 && __rseq_offset) {
		const struct rseq *rs = (const struct rseq *)
			((char *)__builtin_thread_pointer() + __rseq_offset);

		return (int32_t)rs->cpu_id >= 0;
	}
#endif
	return 0;
}

TEST(one_thread_in_order)
{
	enum { N = 20000 };
	static struct tev ev[NMIX];
	static uint8_t buf[256];
	struct rec *r = calloc(N + 1, sizeof(*r));
	struct cinfo c[512];

	for (size_t row = 0; row < TRAIL_ARRAY_SIZE(clock_rows); row++) {
		const struct clock_row *cr = &clock_rows[row];
		int f0 = check_failures, nc, n;
		uint64_t t0, t1, last_pub = 0;
		struct trail_stream *st;
		struct writer *w;
		struct fake f;
		uint32_t s;

		if (cr->cpu_mode == CPU_RSEQ && !rseq_usable())
			continue;
		trail__clock = cr->clock;
		trail__cpu_mode = cr->cpu_mode;
		ntevs = 0;
		fake_open(&f, 3, 4096, 512, 0); /* slot 3: writers must index by slot */
		for (size_t k = 0; k < NMIX; k++) {
			tev_init(&ev[k], mix[k].len);
			tev_enable(&ev[k], &f, mix[k].id);
		}
		t0 = trail__clock_now(trail__clock);
		for (uint32_t i = 0; i < N; i++) {
			uint32_t k = i % NMIX;

			for (uint32_t j = 0; j < mix[k].len; j++)
				buf[j] = pat(i, j);
			if (i & 1)
				trail__write(&ev[k].ev, buf, mix[k].len);
			else
				trail__write_mask(&ev[k].ev, 1u << f.slot, buf, mix[k].len);
		}
		t1 = trail__clock_now(trail__clock);

		w = trail__tls_w;
		CHECK(w != NULL);
		if (!w)
			return;
		CHECK_EQ(w->depth, 0);
		s = my_stream(&f, 0);
		CHECK(s < f.g.max_streams);
		if (s >= f.g.max_streams)
			return;
		st = &f.ps->streams[s];
		CHECK_EQ(st->state, TRAIL_SS_LIVE);
		CHECK_EQ(st->tid, gettid_());
		CHECK_EQ(st->pid, getpid());
		CHECK_EQ(st->level, 0);
		CHECK_EQ(st->dropped, 0);
		CHECK_EQ(st->overwritten, 0);

		/* the chunks: seq 0..k-1 once each, all published but the
		 * last, which the writer holds with its exact OWNED word */
		nc = stream_chunks(&f, s, c, 512);
		CHECK(nc > 64); /* enough chunks to have taken and published many */
		CHECK_EQ(nc, st->chunks);
		CHECK_EQ(f.ps->hdr->nfree, f.g.nchunks - (uint32_t)nc);
		for (int i = 0; i < nc; i++) {
			struct trail_chunk_hdr *h = c[i].h;

			CHECK_EQ(h->seq, i);
			CHECK_EQ(h->stream_gen, st->gen);
			CHECK_EQ(h->pid, getpid());
			CHECK_EQ(h->tid, gettid_());
			CHECK_EQ(h->level, 0);
			CHECK_EQ(h->lost_before, 0);
			if (i < nc - 1) {
				CHECK_EQ(TRAIL_CS_STATE(c[i].word), TRAIL_CS_COMPLETE);
				/* publication numbers grow with the stream */
				CHECK(i == 0 || TRAIL_CS_PUB(c[i].word) > last_pub);
				last_pub = TRAIL_CS_PUB(c[i].word);
			} else {
				CHECK_EQ(c[i].idx, w->ctx[f.slot][0].chunk);
				CHECK(c[i].word == w->ctx[f.slot][0].owned);
				CHECK(c[i].word == TRAIL_CS_OWNED_WORD(s, i));
				CHECK_EQ(TRAIL_COMMIT_BYTES(h->commit), w->ctx[f.slot][0].pos);
				CHECK_EQ(TRAIL_COMMIT_EVENTS(h->commit), w->ctx[f.slot][0].events);
			}
		}
		/* the records: N, in order, whole, payloads as written */
		n = stream_records(&f, s, r, N + 1);
		CHECK_EQ(n, N);
		for (int i = 0; i < n; i++) {
			uint32_t k = (uint32_t)i % NMIX;
			int bad = r[i].id != mix[k].id || r[i].len != mix[k].len;

			for (uint32_t j = 0; !bad && j < r[i].len; j++)
				bad = r[i].p[j] != pat((uint32_t)i, j);
			if (bad || (i && r[i].ts < r[i - 1].ts) || r[i].cpu >= CPU_SETSIZE ||
			    (trail__clock == TRAIL_CLOCK_MONO && (r[i].ts < t0 || r[i].ts > t1))) {
				fprintf(stderr, "  record %d: id %u len %u ts %llu cpu %u\n", i,
					r[i].id, r[i].len, (unsigned long long)r[i].ts, r[i].cpu);
				check_failures++;
				break;
			}
		}
		/* a live recorder: the orphan checks (every 64 chunks) passed */
		CHECK_EQ(f.ps->orphaned, 0);
		CHECK(ev[0].state & (1u << f.slot));
		if (check_failures != f0)
			fprintf(stderr, "  ... with clock %s\n", cr->name);
		for (size_t k = 0; k < NMIX; k++)
			ev[k].state = 0;
		fake_close(&f);
	}
	free(r);
}

/* --------------------------------------------------------------- masks */

TEST(mask_selects_sessions)
{
	static struct tev a, off;
	struct rec r[8];
	struct fake f1, f2;
	uint64_t x = 0x1122334455667788ull;
	uint32_t s1, s2;

	fake_open(&f1, 0, 4096, 4, 0);
	fake_open(&f2, 5, 4096, 4, 0);
	tev_init(&a, 8);
	tev_enable(&a, &f1, 7);
	tev_enable(&a, &f2, 2000); /* another id in the other session */
	tev_init(&off, 8);
	off.rt.ids[0] = 9; /* registered, bit not set: never written */

	trail__write(&a.ev, &x, 8);                       /* both */
	trail__write_mask(&a.ev, 1u << 5, &x, 8);          /* f2 only */
	trail__write_mask(&a.ev, 1u << 0 | 1u << 1, &x, 8); /* f1 only */
	trail__write_mask(&a.ev, ~(1u << 0 | 1u << 5), &x, 8); /* none */
	trail__write(&off.ev, &x, 8);                     /* none */

	s1 = my_stream(&f1, 0);
	s2 = my_stream(&f2, 0);
	CHECK(s1 < f1.g.max_streams && s2 < f2.g.max_streams);
	if (s1 >= f1.g.max_streams || s2 >= f2.g.max_streams)
		return;
	CHECK_EQ(stream_records(&f1, s1, r, 8), 2);
	CHECK_EQ(r[0].id, 7);
	CHECK_EQ(r[1].id, 7);
	CHECK_EQ(get64(r[1].p), x);
	CHECK_EQ(stream_records(&f2, s2, r, 8), 2);
	CHECK_EQ(r[0].id, 2000);
	CHECK_EQ(get64(r[0].p), x);
}

/* ------------------------------------------------- discard and overwrite */

struct seqpl {
	uint64_t seq;
	uint64_t inv; /* ~seq: a torn record shows */
};

static void write_seq(struct tev *e, uint64_t seq)
{
	struct seqpl p = {seq, ~seq};

	trail__write(&e->ev, &p, sizeof(p));
}

/* an event of seqpl payloads, registered in f with id */
static void seq_event(struct tev *e, const struct fake *f, uint32_t id)
{
	tev_init(e, sizeof(struct seqpl));
	tev_enable(e, f, id);
}

static uint64_t rec_seq(const struct rec *r)
{
	uint64_t seq = get64(r->p);

	if (get64(r->p + 8) != ~seq)
		return UINT64_MAX;
	return seq;
}

/* The records of chunk c checked consecutive from first: their number or -1. */
static int chunk_run(const struct fake *f, const struct cinfo *c, uint64_t first)
{
	struct rec r[512];
	int n = decode(f->slot, c->h, (const uint8_t *)(c->h + 1), r, 512);

	for (int i = 0; i < n; i++)
		if (rec_seq(&r[i]) != first + (uint64_t)i)
			return -1;
	return n;
}

static void chunk_free(const struct fake *f, uint32_t idx)
{
	/* as the recorder's free_chunk() */
	__atomic_store_n(&f->ps->ctab[idx], TRAIL_CS_FREE, __ATOMIC_RELEASE);
	__atomic_fetch_add(&f->ps->hdr->nfree, 1, __ATOMIC_RELAXED);
}

TEST(discard_drops_then_resumes)
{
	enum { M1 = 2000, M2 = 300, NCH = 4 };
	static struct tev e;
	struct cinfo c[NCH];
	struct trail_stream *st;
	uint64_t next = 0, dropped;
	struct fake f;
	uint32_t s;
	int nc, k;

	fake_open(&f, 1, 4096, NCH, 0);
	seq_event(&e, &f, 5);
	for (uint64_t i = 0; i < M1; i++)
		write_seq(&e, i);
	s = my_stream(&f, 0);
	CHECK(s < f.g.max_streams);
	if (s >= f.g.max_streams)
		return;
	st = &f.ps->streams[s];

	/* full: every chunk published, none held, the rest dropped */
	CHECK_EQ(f.ps->hdr->nfree, 0);
	CHECK(trail__tls_w->ctx[f.slot][0].data == NULL);
	nc = stream_chunks(&f, s, c, NCH);
	CHECK_EQ(nc, NCH);
	for (int i = 0; i < nc; i++) {
		CHECK_EQ(TRAIL_CS_STATE(c[i].word), TRAIL_CS_COMPLETE);
		CHECK_EQ(c[i].h->seq, i);
		k = chunk_run(&f, &c[i], next);
		CHECK(k > 100);
		if (k < 0)
			return;
		next += (uint64_t)k;
	}
	CHECK(next < M1);
	CHECK_EQ(st->dropped, M1 - next);
	CHECK_EQ(trail__tls_w->ctx[f.slot][0].pending_lost, M1 - next);
	dropped = st->dropped;

	/* the recorder frees the two oldest: writing resumes, and the first
	 * chunk after the gap says how many events fell into it */
	chunk_free(&f, c[0].idx);
	chunk_free(&f, c[1].idx);
	for (uint64_t i = M1; i < M1 + M2; i++)
		write_seq(&e, i);
	CHECK_EQ(st->dropped, dropped); /* nothing more dropped */
	nc = stream_chunks(&f, s, c, NCH);
	CHECK_EQ(nc, NCH);
	CHECK_EQ(c[0].h->seq, 2);
	CHECK_EQ(c[2].h->seq, 4);
	CHECK_EQ(c[2].h->lost_before, dropped);
	CHECK_EQ(c[3].h->lost_before, 0);
	CHECK_EQ(c[3].word, TRAIL_CS_OWNED_WORD(s, 5));
	k = chunk_run(&f, &c[2], M1); /* resumes with the first event after the gap */
	CHECK(k > 0);
	if (k > 0)
		CHECK_EQ(chunk_run(&f, &c[3], M1 + (uint64_t)k), M2 - k);
	CHECK_EQ(st->chunks, 6);

	/* a record larger than a chunk can never be written: dropped */
	{
		static uint8_t big[4096];

		trail__write(&e.ev, big, sizeof(big));
		CHECK_EQ(st->dropped, dropped + 1);
	}
	fake_close(&f);
}

/* A thread that writes events 0..n-1 of e, then exits: its writer's
 * destructor publishes the chunk it holds and ends its stream. */
struct wr_thread {
	struct fake *f;
	struct tev *e;
	int n;
	struct writer *w; /* the writer it had */
	uint32_t stream;
	pid_t tid;
};

static void *wr_run(void *arg)
{
	struct wr_thread *t = arg;

	t->tid = gettid_();
	for (int i = 0; i < t->n; i++)
		write_seq(t->e, (uint64_t)i);
	t->w = trail__tls_w;
	t->stream = my_stream(t->f, 0);
	return NULL;
}

static void wr_thread_run(struct wr_thread *t, struct fake *f, struct tev *e, int n)
{
	pthread_t th;

	*t = (struct wr_thread){f, e, n, NULL, ~0u, 0};
	if (pthread_create(&th, NULL, wr_run, t))
		die("pthread_create");
	pthread_join(th, NULL);
}

TEST(overwrite_reclaims_oldest)
{
	enum { NA = 300, M = 3000, NCH = 4 };
	static struct tev e;
	struct wr_thread a;
	struct cinfo c[NCH];
	struct trail_stream *sa, *sm;
	uint64_t first, total = 0;
	struct fake f;
	uint32_t s;
	int nc;

	fake_open(&f, 2, 4096, NCH, 1);
	seq_event(&e, &f, 5);

	/* a thread writes two chunks' worth and exits: the oldest
	 * publications are its own */
	wr_thread_run(&a, &f, &e, NA);
	CHECK(a.stream < f.g.max_streams);
	if (a.stream >= f.g.max_streams)
		return;
	sa = &f.ps->streams[a.stream];
	CHECK_EQ(sa->state, TRAIL_SS_EXITED);
	CHECK_EQ(sa->chunks, 2);

	for (uint64_t i = 0; i < M; i++)
		write_seq(&e, i);
	s = my_stream(&f, 0);
	CHECK(s < f.g.max_streams && s != a.stream);
	if (s >= f.g.max_streams)
		return;
	sm = &f.ps->streams[s];

	/* the exited thread's chunks went first, credited to its stream */
	CHECK_EQ(stream_chunks(&f, a.stream, c, NCH), 0);
	CHECK_EQ(sa->overwritten, NA);
	CHECK_EQ(sa->dropped, 0);

	/* ours: never dropped, the newest NCH chunks kept, a contiguous
	 * suffix of the events, the older ones counted overwritten */
	CHECK_EQ(sm->dropped, 0);
	nc = stream_chunks(&f, s, c, NCH);
	CHECK_EQ(nc, NCH);
	CHECK(sm->chunks > NCH + 2);
	first = sm->overwritten;
	CHECK(first > 0);
	for (int i = 0; i < nc; i++) {
		int k;

		CHECK_EQ(c[i].h->seq, sm->chunks - NCH + (uint64_t)i);
		CHECK_EQ(c[i].h->lost_before, 0);
		CHECK_EQ(TRAIL_CS_STATE(c[i].word),
			 i == nc - 1 ? TRAIL_CS_OWNED : TRAIL_CS_COMPLETE);
		k = chunk_run(&f, &c[i], first + total);
		CHECK(k > 0);
		if (k < 0)
			return;
		total += (uint64_t)k;
	}
	CHECK_EQ(first + total, M); /* written = kept + overwritten */
	fake_close(&f);
}

/*
 * A chunk the recorder adopted (its thread ended; the recorder's keeper
 * accounts for it, keep.c) is reclaimed like any other, oldest first, but
 * credits nothing to the slot; an ordinary one still credits its stream.
 * Either way the reclaimer leaves the victim stream's refs as it found it.
 */
TEST(overwrite_adopted_chunk_not_credited)
{
	enum { NA = 50, NB = 60, M = 3000, NCH = 4 };
	static struct tev e;
	struct wr_thread a, b;
	struct cinfo c[NCH];
	struct trail_stream *sa, *sb;
	uint64_t w;
	struct fake f;

	fake_open(&f, 3, 4096, NCH, 1);
	seq_event(&e, &f, 5);
	wr_thread_run(&a, &f, &e, NA);
	wr_thread_run(&b, &f, &e, NB);
	CHECK(a.stream < f.g.max_streams && b.stream < f.g.max_streams);
	if (a.stream >= f.g.max_streams || b.stream >= f.g.max_streams)
		return;
	sa = &f.ps->streams[a.stream];
	sb = &f.ps->streams[b.stream];
	CHECK_EQ(stream_chunks(&f, a.stream, c, NCH), 1);
	/* the recorder adopts a's chunk: taken, marked, put back as it was */
	w = c[0].word;
	CHECK(__atomic_compare_exchange_n(&f.ps->ctab[c[0].idx], &w, TRAIL_CS_READING, 0,
					  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	c[0].h->flags = TRAIL_CHF_ADOPTED;
	__atomic_store_n(&f.ps->ctab[c[0].idx], c[0].word, __ATOMIC_RELEASE);

	for (uint64_t i = 0; i < M; i++)
		write_seq(&e, i);
	CHECK_EQ(stream_chunks(&f, a.stream, c, NCH), 0);
	CHECK_EQ(stream_chunks(&f, b.stream, c, NCH), 0);
	CHECK_EQ(sa->overwritten, 0); /* the recorder's to count */
	CHECK_EQ(sb->overwritten, NB);
	CHECK_EQ(sa->refs, 0);
	CHECK_EQ(sb->refs, 0);
	CHECK_EQ(f.ps->streams[my_stream(&f, 0)].refs, 0);
	fake_close(&f);
}

/* -------------------------------------------------------------- nesting */

/*
 * A real signal in the middle of a write: the deferred-write hook runs
 * inside trail__write() (depth 1) and raises SIGUSR1, delivered at once
 * to this thread; the handler's writes are nested ones.
 */
static struct {
	struct tev *hev;
	uint32_t depth_in, depth_after;
	int flushes, handled;
} nest;

static void nest_handler(int sig)
{
	struct writer *w = trail__tls_w;

	(void)sig;
	nest.handled++;
	nest.depth_in = w ? w->depth : ~0u;
	for (uint64_t i = 0; i < 3; i++)
		write_seq(nest.hev, 1000 + i);
	nest.depth_after = w ? w->depth : ~0u;
}

static void raise_in_flush(struct writer *w)
{
	nest.flushes++;
	w->defer.flush = NULL;
	raise(SIGUSR1);
}

static void on_usr1(void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
}

TEST(nested_writer_own_stream)
{
	static struct tev e, h;
	struct rec r[64];
	struct cinfo c[8];
	struct writer *w;
	uint32_t s0, s1, epoch0;
	struct fake f;
	int n;

	fake_open(&f, 4, 4096, 16, 0);
	seq_event(&e, &f, 5);
	seq_event(&h, &f, 6);
	nest.hev = &h;
	on_usr1(nest_handler);

	write_seq(&e, 0);
	w = trail__tls_w;
	CHECK(w != NULL);
	if (!w)
		return;
	epoch0 = w->epoch;
	for (uint64_t i = 1; i < 20; i++) {
		if (i == 10) /* the signal comes inside this write */
			w->defer.flush = raise_in_flush;
		write_seq(&e, i);
	}
	CHECK_EQ(nest.flushes, 1);
	CHECK_EQ(nest.handled, 1);
	CHECK_EQ(nest.depth_in, 1);    /* inside the interrupted write */
	CHECK_EQ(nest.depth_after, 1); /* its writes left it as they found it */
	CHECK_EQ(w->depth, 0);
	CHECK_EQ(w->epoch, epoch0 + 19); /* outermost exits only */

	/* two streams of this thread, levels 0 and 1, separate chunks */
	s0 = my_stream(&f, 0);
	s1 = my_stream(&f, 1);
	CHECK(s0 < f.g.max_streams && s1 < f.g.max_streams && s0 != s1);
	if (s0 >= f.g.max_streams || s1 >= f.g.max_streams)
		return;
	CHECK(w->ctx[f.slot][0].chunk != w->ctx[f.slot][1].chunk);
	CHECK_EQ(f.ps->streams[s1].level, 1);
	CHECK_EQ(f.ps->streams[s1].tid, gettid_());
	CHECK_EQ(f.ps->streams[s0].level, 0);

	/* each stream's records whole, and only its own */
	n = stream_records(&f, s0, r, 64);
	CHECK_EQ(n, 20);
	for (int i = 0; i < n; i++) {
		CHECK_EQ(r[i].id, 5);
		CHECK_EQ(rec_seq(&r[i]), i);
	}
	CHECK_EQ(stream_chunks(&f, s1, c, 8), 1);
	CHECK_EQ(c[0].h->level, 1);
	CHECK_EQ(c[0].h->tid, gettid_());
	n = stream_records(&f, s1, r, 64);
	CHECK_EQ(n, 3);
	for (int i = 0; i < n; i++) {
		CHECK_EQ(r[i].id, 6);
		CHECK_EQ(rec_seq(&r[i]), 1000 + i);
	}

	/* levels 2 and 3 (handlers interrupting handlers): a stream each */
	for (uint32_t d = 2; d < TRAIL_MAX_DEPTH; d++) {
		uint32_t sd;

		w->depth = d;
		write_seq(&e, 100 + d);
		CHECK_EQ(w->depth, d);
		sd = my_stream(&f, d);
		CHECK(sd < f.g.max_streams && sd != s0 && sd != s1);
		if (sd >= f.g.max_streams)
			continue;
		CHECK_EQ(f.ps->streams[sd].level, d);
		CHECK_EQ(stream_records(&f, sd, r, 64), 1);
		CHECK_EQ(rec_seq(&r[0]), 100 + d);
	}
	/* deeper: no context, counted session-wide */
	w->depth = TRAIL_MAX_DEPTH;
	write_seq(&e, 999);
	CHECK_EQ(w->depth, TRAIL_MAX_DEPTH);
	CHECK_EQ(f.ps->hdr->nostream_lost, 1);
	w->depth = 0;
	CHECK_EQ(stream_records(&f, s0, r, 64), 20);
	fake_close(&f);
}

/* -------------------------------------------------------- deferred write */

/*
 * A source's kept-back record (function_graph's entry), as fhook.c's
 * gentry_flush(): the hook writes it at level 0 with write_sessions() and
 * clears itself. It records how and where it was called, and with
 * nest_raise it first takes a signal whose handler writes (nested: the
 * hook must not run again from there).
 */
static struct {
	struct fake *f;
	struct tev *kev, *hev;
	uint64_t kept;
	int calls, inside, reentered, raise_sig;
	uint32_t depth_at;
	uint32_t events_at; /* records in the level-0 chunk when called */
	pid_t tid_at;
} dk;

static void defer_handler(int sig)
{
	(void)sig;
	write_seq(dk.hev, 5000);
}

static void kept_flush(struct writer *w)
{
	struct tev *k = dk.kev;
	struct seqpl p = {dk.kept, ~dk.kept};
	uint32_t mask, cpu;
	uint64_t ts;

	if (dk.inside)
		dk.reentered++;
	dk.inside = 1;
	dk.calls++;
	dk.depth_at = w->depth;
	dk.tid_at = gettid_();
	dk.events_at = w->ctx[dk.f->slot][0].events;
	if (dk.raise_sig)
		raise(SIGUSR1);
	w->defer.flush = NULL;
	mask = __atomic_load_n(k->ev.state, __ATOMIC_ACQUIRE) & (1u << dk.f->slot);
	ts = now_cpu(&cpu);
	if (mask)
		write_sessions(&k->ev, &k->rt, w, 0, mask, &p, sizeof(p), ts, cpu);
	dk.inside = 0;
}

static void keep(struct writer *w, uint64_t v)
{
	dk.kept = v;
	w->defer.flush = kept_flush;
}

static void *dk_thread(void *arg)
{
	uint32_t *stream = arg;

	write_seq(dk.kev, 0);
	keep(trail__tls_w, 200);
	*stream = my_stream(dk.f, 0);
	return NULL; /* the kept record is written by the writer's destructor */
}

TEST(defer_hook_once)
{
	static struct tev e, h;
	static const uint64_t want[] = {0, 100, 1, 2, 101, 3, 102};
	struct rec r[16];
	struct cinfo c[4];
	struct writer *w;
	struct fake f;
	pthread_t th;
	uint32_t s, ts;
	int n;

	fake_open(&f, 6, 4096, 16, 0);
	seq_event(&e, &f, 5);
	seq_event(&h, &f, 6);
	dk.f = &f;
	dk.kev = &e; /* kept records are of the same event: order shows */
	dk.hev = &h;
	on_usr1(defer_handler);

	write_seq(&e, 0);
	w = trail__tls_w;
	CHECK(w != NULL);
	if (!w)
		return;
	/* kept, then written first by the next outermost write, once */
	keep(w, 100);
	write_seq(&e, 1);
	CHECK_EQ(dk.calls, 1);
	CHECK_EQ(dk.depth_at, 1);   /* inside the record path */
	CHECK_EQ(dk.events_at, 1);  /* before the record of that write */
	write_seq(&e, 2);
	CHECK_EQ(dk.calls, 1);

	/* a nested write while the hook is set does not call it */
	dk.raise_sig = 1;
	keep(w, 101);
	write_seq(&e, 3);
	dk.raise_sig = 0;
	CHECK_EQ(dk.calls, 2);
	CHECK_EQ(dk.reentered, 0);
	CHECK(w->ctx[f.slot][1].stream != 0); /* the handler did write, nested */

	/* trail__defer_flush_self() (fork, exit()): once, and never inside
	 * the record path */
	keep(w, 102);
	w->depth = 1;
	trail__defer_flush_self();
	CHECK_EQ(dk.calls, 2);
	w->depth = 0;
	trail__defer_flush_self();
	CHECK_EQ(dk.calls, 3);
	CHECK_EQ(dk.depth_at, 1);
	trail__defer_flush_self();
	CHECK_EQ(dk.calls, 3);
	CHECK(w->defer.flush == NULL);

	s = my_stream(&f, 0);
	n = stream_records(&f, s, r, 16);
	CHECK_EQ(n, (int)TRAIL_ARRAY_SIZE(want));
	for (int i = 0; i < n && i < (int)TRAIL_ARRAY_SIZE(want); i++)
		CHECK_EQ(rec_seq(&r[i]), want[i]);
	n = stream_records(&f, my_stream(&f, 1), r, 16);
	CHECK_EQ(n, 1);
	CHECK_EQ(r[0].id, 6);

	/* thread exit: the writer's destructor writes the kept record, then
	 * publishes the chunk and ends the stream */
	dk.calls = 0;
	s = ~0u;
	if (pthread_create(&th, NULL, dk_thread, &s))
		die("pthread_create");
	pthread_join(th, NULL);
	CHECK_EQ(dk.calls, 1);
	CHECK_EQ(dk.depth_at, 1);
	ts = (uint32_t)dk.tid_at;
	CHECK(ts != (uint32_t)gettid_());
	CHECK(s < f.g.max_streams);
	if (s >= f.g.max_streams)
		return;
	CHECK_EQ(f.ps->streams[s].state, TRAIL_SS_EXITED);
	CHECK_EQ(f.ps->streams[s].tid, ts);
	CHECK_EQ(stream_chunks(&f, s, c, 4), 1);
	CHECK_EQ(TRAIL_CS_STATE(c[0].word), TRAIL_CS_COMPLETE);
	n = stream_records(&f, s, r, 16);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_EQ(rec_seq(&r[0]), 0);
		CHECK_EQ(rec_seq(&r[1]), 200);
	}
	fake_close(&f);
}

/* -------------------------------------------------------------- writers */

TEST(writer_reused_after_exit)
{
	static struct tev e;
	struct wr_thread t[2];
	struct rec r[8];
	struct fake f;
	int nw = 0;

	fake_open(&f, 7, 4096, 8, 0);
	seq_event(&e, &f, 5);
	for (int i = 0; i < 2; i++)
		wr_thread_run(&t[i], &f, &e, 5);
	/* one writer, taken again by the second thread, free now */
	CHECK(t[0].w != NULL && t[0].w == t[1].w);
	for (struct writer *w = trail__writers; w; w = w->next)
		nw++;
	CHECK_EQ(nw, 1);
	if (t[0].w) {
		CHECK_EQ(t[0].w->in_use, 0);
		CHECK_EQ(t[0].w->depth, 0);
	}
	/* but a fresh stream for each thread, both ended, both whole */
	CHECK(t[0].stream != t[1].stream);
	for (int i = 0; i < 2; i++) {
		struct trail_stream *st;

		if (t[i].stream >= f.g.max_streams) {
			check_failures++;
			continue;
		}
		st = &f.ps->streams[t[i].stream];
		CHECK_EQ(st->state, TRAIL_SS_EXITED);
		CHECK_EQ(st->tid, t[i].tid);
		CHECK_EQ(stream_records(&f, t[i].stream, r, 8), 5);
		CHECK_EQ(rec_seq(&r[4]), 4);
	}
	fake_close(&f);
}

TEST(orphan_turns_event_off)
{
	static struct tev e;
	struct trail_stream *st;
	struct fake f;
	uint32_t s, n = 0;

	fake_open(&f, 0, 4096, 128, 0);
	/* the recorder's pid, but not its start time: it is gone */
	f.ps->cli_start++;
	seq_event(&e, &f, 5);
	while ((__atomic_load_n(&e.state, __ATOMIC_RELAXED) & 1u) && n < 100000)
		write_seq(&e, n++);
	CHECK(!(e.state & 1u));
	CHECK_EQ(f.ps->orphaned, 1);
	s = my_stream(&f, 0);
	CHECK(s < f.g.max_streams);
	if (s >= f.g.max_streams)
		return;
	st = &f.ps->streams[s];
	CHECK_EQ(st->chunks, 64); /* asked when the 64th chunk was taken */
	/* and once off, nothing more is written */
	write_seq(&e, n);
	{
		struct rec *r = calloc(n + 1, sizeof(*r));

		CHECK_EQ(stream_records(&f, s, r, (int)n + 1), n);
		free(r);
	}
	fake_close(&f);
}

/* --------------------------------------------------------------- stress */

#define ST_THREADS 8
#define ST_EVENTS 100000
#define ST_MAXCH 8192

struct stpl {
	uint32_t thread;
	uint32_t seq;
	uint64_t check;
};

static uint64_t st_check(uint32_t thread, uint32_t seq)
{
	return (((uint64_t)thread << 32) | seq) * 0x9e3779b97f4a7c15ull;
}

/* one chunk as the recorder read it */
struct csum {
	uint64_t seq;
	uint32_t first, n, lost_before, tid;
};

static struct {
	struct fake f;
	struct tev e;
	pthread_barrier_t go;
	int done;
	/* writers */
	uint32_t stream[ST_THREADS];
	pid_t tid[ST_THREADS];
	uint64_t bad_owner[ST_THREADS];
	/* the recorder's, read after it ends */
	struct csum *sums[ST_THREADS];
	uint32_t nsums[ST_THREADS];
	uint64_t torn, chunks_read;
} S;

static void *st_writer(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;
	struct writer *w;

	S.tid[t] = gettid_();
	pthread_barrier_wait(&S.go);
	for (uint32_t i = 0; i < ST_EVENTS; i++) {
		struct stpl p = {t, i, st_check(t, i)};
		struct wctx *c;

		trail__write(&S.e.ev, &p, sizeof(p));
		/* the chunk we hold is ours alone: nobody moved its state */
		w = trail__tls_w;
		c = &w->ctx[S.f.slot][0];
		if (c->data && __atomic_load_n(&S.f.ps->ctab[c->chunk], __ATOMIC_RELAXED) != c->owned)
			S.bad_owner[t]++;
		/* let the recorder run now and then: on few CPUs it would
		 * otherwise see the arena mostly full (discard) or mostly
		 * reclaimed (overwrite) */
		if ((i & 511) == 511)
			sched_yield();
	}
	S.stream[t] = my_stream(&S.f, 0);
	return NULL;
}

/* Take chunk j if COMPLETE, copy it out, check and summarize it, free it. */
static int st_read(uint32_t j, uint8_t *copy, struct rec *r)
{
	uint64_t w = __atomic_load_n(&S.f.ps->ctab[j], __ATOMIC_RELAXED);
	struct trail_chunk_hdr *h = chunk_at(&S.f, j), *ch = (struct trail_chunk_hdr *)copy;
	uint32_t bytes, t;
	int n;

	if (TRAIL_CS_STATE(w) != TRAIL_CS_COMPLETE ||
	    /* acquire: pairs with the release of trail__ctx_publish() */
	    !__atomic_compare_exchange_n(&S.f.ps->ctab[j], &w, TRAIL_CS_READING, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	memcpy(ch, h, sizeof(*ch));
	ch->commit = __atomic_load_n(&h->commit, __ATOMIC_ACQUIRE);
	bytes = TRAIL_COMMIT_BYTES(ch->commit);
	if (bytes > S.f.g.chunk_size - sizeof(*ch)) {
		S.torn++;
		goto out;
	}
	memcpy(ch + 1, h + 1, bytes);
	n = decode(S.f.slot, ch, (const uint8_t *)(ch + 1), r, (int)S.f.g.chunk_size / 4);
	if (n <= 0) {
		S.torn++;
		goto out;
	}
	/* one writer's records, consecutive, each whole */
	t = get32(r[0].p);
	if (t >= ST_THREADS) {
		S.torn++;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct stpl p;

		memcpy(&p, r[i].p, sizeof(p));
		if (p.thread != t || p.seq != get32(r[0].p + 4) + (uint32_t)i ||
		    p.check != st_check(p.thread, p.seq) || r[i].id != 5) {
			S.torn++;
			goto out;
		}
	}
	if (S.nsums[t] < ST_MAXCH)
		S.sums[t][S.nsums[t]++] = (struct csum){ch->seq, get32(r[0].p + 4),
							(uint32_t)n, ch->lost_before, ch->tid};
	S.chunks_read++;
out:
	/* release: our reads done before a writer takes it again (pairs
	 * with the acquire CAS of take_chunk()) */
	chunk_free(&S.f, j);
	return 1;
}

static void *st_recorder(void *arg)
{
	uint8_t *copy = malloc(S.f.g.chunk_size);
	struct rec *r = malloc(S.f.g.chunk_size / 4 * sizeof(*r));

	(void)arg;
	for (;;) {
		int done = __atomic_load_n(&S.done, __ATOMIC_ACQUIRE), got = 0;

		for (uint32_t j = 0; j < S.f.g.nchunks; j++)
			got += st_read(j, copy, r);
		if (!got) {
			if (done)
				break;
			sched_yield();
		}
	}
	free(copy);
	free(r);
	return NULL;
}

static int csum_cmp(const void *a, const void *b)
{
	const struct csum *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void stress(int overwrite)
{
	pthread_t th[ST_THREADS], rec;
	uint64_t total_dropped = 0, total_over = 0;

	memset(&S, 0, sizeof(S));
	ntevs = 0;
	fake_open(&S.f, 1, 4096, 16, overwrite);
	tev_init(&S.e, sizeof(struct stpl));
	tev_enable(&S.e, &S.f, 5);
	for (int t = 0; t < ST_THREADS; t++) {
		S.sums[t] = calloc(ST_MAXCH, sizeof(struct csum));
		S.stream[t] = ~0u;
	}
	pthread_barrier_init(&S.go, NULL, ST_THREADS);
	if (pthread_create(&rec, NULL, st_recorder, NULL))
		die("pthread_create");
	for (int t = 0; t < ST_THREADS; t++)
		if (pthread_create(&th[t], NULL, st_writer, (void *)(uintptr_t)t))
			die("pthread_create");
	for (int t = 0; t < ST_THREADS; t++)
		pthread_join(th[t], NULL);
	/* every writer's destructor has published its last chunk */
	__atomic_store_n(&S.done, 1, __ATOMIC_RELEASE);
	pthread_join(rec, NULL);

	CHECK_EQ(S.torn, 0);
	for (uint32_t j = 0; j < S.f.g.nchunks; j++)
		CHECK_EQ(S.f.ps->ctab[j], TRAIL_CS_FREE);
	CHECK_EQ(S.f.ps->hdr->nfree, S.f.g.nchunks);
	CHECK_EQ(S.f.ps->hdr->nostream_lost, 0);
	for (int t = 0; t < ST_THREADS; t++) {
		struct trail_stream *st;
		uint64_t got = 0, next = 0, lost = 0;
		int f0 = check_failures;

		CHECK_EQ(S.bad_owner[t], 0);
		CHECK(S.stream[t] < S.f.g.max_streams);
		if (S.stream[t] >= S.f.g.max_streams)
			continue;
		st = &S.f.ps->streams[S.stream[t]];
		CHECK_EQ(st->state, TRAIL_SS_EXITED);
		CHECK_EQ(st->tid, S.tid[t]);
		CHECK_EQ(st->level, 0);
		CHECK(S.nsums[t] < ST_MAXCH);
		qsort(S.sums[t], S.nsums[t], sizeof(struct csum), csum_cmp);
		for (uint32_t i = 0; i < S.nsums[t]; i++) {
			const struct csum *cs = &S.sums[t][i];

			CHECK_EQ(cs->tid, S.tid[t]); /* its chunks carry its tid */
			/* in chunk order, events resume after the last one read
			 * plus those dropped in between; past a chunk reclaimed
			 * (overwrite), further on */
			if (i && cs->seq == S.sums[t][i - 1].seq)
				check_failures++; /* one chunk read twice */
			if (!overwrite || cs->seq == (i ? S.sums[t][i - 1].seq + 1 : 0))
				CHECK_EQ(cs->first, next + cs->lost_before);
			else
				CHECK(cs->first >= next + cs->lost_before);
			if (!overwrite)
				CHECK_EQ(cs->seq, i); /* none lost: every chunk read */
			next = (uint64_t)cs->first + cs->n;
			lost += cs->lost_before;
			got += cs->n;
		}
		/* drops after the last chunk taken are in dropped only */
		if (!overwrite)
			CHECK_EQ(lost + (ST_EVENTS - next), st->dropped);
		if (overwrite)
			CHECK(S.nsums[t] <= st->chunks);
		else
			CHECK_EQ(S.nsums[t], st->chunks);
		/* exact conservation: written = read + dropped + overwritten */
		CHECK_EQ(got + st->dropped + st->overwritten, ST_EVENTS);
		total_dropped += st->dropped;
		total_over += st->overwritten;
		if (check_failures != f0)
			fprintf(stderr, "  ... thread %d: read %llu dropped %llu overwritten %llu\n",
				t, (unsigned long long)got, (unsigned long long)st->dropped,
				(unsigned long long)st->overwritten);
		free(S.sums[t]);
	}
	if (!overwrite)
		CHECK_EQ(total_over, 0);
	fprintf(stderr, "  %s: %llu chunks read, %llu dropped, %llu overwritten\n",
		overwrite ? "overwrite" : "discard", (unsigned long long)S.chunks_read,
		(unsigned long long)total_dropped, (unsigned long long)total_over);
	pthread_barrier_destroy(&S.go);
	fake_close(&S.f);
}

TEST(stress_discard)
{
	stress(0);
}

TEST(stress_overwrite)
{
	stress(1);
}

TEST_MAIN(CHECK_T(one_thread_in_order), CHECK_T(mask_selects_sessions),
	  CHECK_T(discard_drops_then_resumes), CHECK_T(overwrite_reclaims_oldest),
	  CHECK_T(overwrite_adopted_chunk_not_credited),
	  CHECK_T(nested_writer_own_stream), CHECK_T(defer_hook_once),
	  CHECK_T(writer_reused_after_exit), CHECK_T(orphan_turns_event_off),
	  CHECK_T(stress_discard), CHECK_T(stress_overwrite))
