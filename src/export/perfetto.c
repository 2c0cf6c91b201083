/* SPDX-License-Identifier: MIT */
/*
 * perfetto.c - `trail export --format perfetto`: a trace in Perfetto's
 * own protobuf format (a Trace: repeated TracePacket packet = 1), for
 * ui.perfetto.dev and trace_processor, written by pb.h as the records
 * come, one packet at a time.
 *
 * What maps to what:
 *
 *   process              a track with a ProcessDescriptor (pid, name)
 *   stream (thread)      a track with a ThreadDescriptor (pid, tid, comm),
 *                        child of its process; a signal handler level's
 *                        stream: a track under its thread's
 *   function_graph call  a slice on its thread's track: TYPE_SLICE_BEGIN at
 *                        the entry (with args {name: value} for record
 *                        --args), TYPE_SLICE_END at the return (with
 *                        retval, typed by DWARF when it has the function,
 *                        or unfinished=true when the view closed it;
 *                        entered before the trace: see nostart_exit())
 *   record --counters    the call's deltas as its slice's annotations
 *                        {page-faults: 3, ...}; each counter a counter
 *                        track under its thread's ("page-faults"), the
 *                        thread's count at each counted call's entry
 *                        and return
 *   function tracer      an instant named by the function, parent=caller
 *   static event         an instant "provider:event", category provider,
 *                        its fields as debug annotations of their type
 *   LOST record          an instant "LOST n events" with lost=n
 *   damage, events lost  instants on a "trail" track
 *   with no stream, or
 *   of threads overwritten
 *   entirely
 *
 * Compactness: a function_graph trace is mostly begin/end pairs, so those
 * packets are small. All packets are one sequence (trusted_packet_sequence_id
 * 1): the first clears its incremental state (SEQ_INCREMENTAL_STATE_CLEARED)
 * and says that timestamps are deltas of a sequence clock (id 64) that a
 * ClockSnapshot ties to CLOCK_MONOTONIC, which is also the trace's clock;
 * the others need that state (SEQ_NEEDS_INCREMENTAL_STATE). Names are
 * interned (InternedData: event names, categories, annotation names, the
 * caller names of the function tracer) in the packet that first uses them,
 * then referred to by iid. Thread tracks get the smallest uuids, and the
 * busiest thread's is the sequence's default (TrackEventDefaults): its
 * events do not name it. A begin is then about 15 bytes, an end 13.
 *
 * Order: records come in time order, but a leaf call ends in the future
 * of the records after it (other threads'): its end waits in a heap of
 * the streams' pending ends and is written when time reaches it, or when
 * its stream has something next. What still comes out of order (calls the
 * view held back for --graph-time-thresh, record-time threshold calls,
 * calls closed at the end of the trace) is written with a negative delta:
 * trace_processor sorts packets by time anyway, the deltas only cost bytes.
 *
 * Memory: per stream, per event, and per distinct name; nothing per record.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "argtypes.h"
#include "formats.h"
#include "pb.h"

/* Field numbers, from Perfetto's protos/perfetto/trace (see
 * tests/export/perfetto_subset.proto). */
enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	TP_CLOCK_SNAPSHOT = 6,
	TP_TIMESTAMP = 8,
	TP_SEQ_ID = 10,
	TP_TRACK_EVENT = 11,
	TP_INTERNED = 12,
	TP_SEQ_FLAGS = 13,
	TP_DEFAULTS = 59,
	TP_TRACK_DESCRIPTOR = 60,
	/* TracePacketDefaults, TrackEventDefaults */
	DEF_CLOCK_ID = 58,
	DEF_TRACK_EVENT = 11,
	TED_TRACK = 11,
	/* ClockSnapshot, ClockSnapshot.Clock */
	CS_CLOCKS = 1,
	CS_PRIMARY_CLOCK = 2,
	CLK_ID = 1,
	CLK_TIMESTAMP = 2,
	CLK_INCREMENTAL = 3,
	/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT = 5,
	PD_PID = 1,
	PD_CMDLINE = 2,
	PD_NAME = 6,
	THD_PID = 1,
	THD_TID = 2,
	THD_NAME = 5,
	/* TrackEvent */
	TE_CATEGORY_IIDS = 3,
	TE_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK = 11,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	/* TrackDescriptor.counter: CounterDescriptor */
	TD_COUNTER = 8,
	CD_UNIT = 3,
	UNIT_TIME_NS = 1,
	UNIT_COUNT = 2,
	/* DebugAnnotation */
	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_POINTER = 7,
	DA_NAME = 10,
	DA_DICT = 11,
	DA_ARRAY = 12,
	DA_STRING_IID = 17,
	/* InternedData; its entries are all {iid = 1, name or str = 2} */
	ID_CATEGORIES = 1,
	ID_NAMES = 2,
	ID_ANNOT_NAMES = 3,
	ID_STRINGS = 29,
	IE_IID = 1,
	IE_NAME = 2,
};

enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
#define CLOCK_MONOTONIC_ID 3 /* BuiltinClock BUILTIN_CLOCK_MONOTONIC */
#define CLOCK_SEQ_DELTA 64   /* ours: sequence-scoped, incremental */
#define SEQ_ID 1

/* track uuids: streams are order + 1 (small: they are in every event) */
#define UUID_PROC (1ull << 48) /* | pid */
#define UUID_TRAIL (1ull << 56)
#define UUID_CTR (2ull << 56) /* | stream order << 3 | counter column */

#define FLUSH_AT (64u << 10)
#define NOSTART_SPAN 16384u /* ns before a track's first time: a thread's
			     * shadow stack frames (see nostart_exit()) */
#define DAMAGE_KEEP 16

/* interning namespaces, and the InternedData field of each */
enum ns { NS_NAME, NS_CAT, NS_ANNOT, NS_STR, NS_N };
static const uint32_t ns_field[NS_N] = {ID_NAMES, ID_CATEGORIES, ID_ANNOT_NAMES, ID_STRINGS};

/* fixed annotation names, interned on first use */
enum { AN_PARENT, AN_LOST, AN_RETVAL, AN_UNFINISHED, AN_MESSAGE, AN_NOSTART, AN_ARGS, AN_N };
static const char *const an_text[AN_N] = {
	"parent", "lost", "retval", "unfinished", "message", "entered_before_trace", "args",
};

struct sslot { /* interned string: (ns, bytes) -> iid */
	uint64_t h; /* 0: empty */
	const char *s;
	uint32_t len, iid;
	uint32_t ns;
};

struct kslot { /* cache: (kind, pointer or address) -> iid */
	uint64_t key;
	uint32_t kind; /* 0: empty */
	uint32_t iid;
};

enum { K_NAME_PTR = 1, K_NAME_ADDR, K_STR_PTR, K_STR_ADDR };

struct pending { /* interned in this packet: goes in its InternedData */
	uint32_t ns, iid, len;
	const char *s;
};

struct sblock {
	struct sblock *next;
	size_t used, cap;
	char data[];
};

struct evstate {
	uint32_t name_iid, cat_iid;
	int kind; /* 0 not yet seen, EV_* */
	uint32_t *annot; /* field i's annotation name iid */
};

enum { EV_FUNCTION = 1, EV_OTHER };

struct strand { /* per stream */
	uint64_t uuid;
	uint64_t pend_ns; /* a leaf's end waiting to be written */
	struct trail_argval pend_ret; /* kind 0: none */
	unsigned pend_flags;
	int32_t hpos; /* in the heap, or -1 */
	int seen;
	uint64_t first_ns; /* of the first thing written on its track */
	uint8_t ctracks;   /* its counter tracks described, by column */
};

struct pf {
	struct trail_output out;
	FILE *f;
	const struct trail_export_src *src;
	struct pb pb;
	uint64_t deftrack; /* events on this track need not name it */
	uint64_t clock;  /* the sequence clock: the last timestamp written */
	uint64_t max_ns; /* the latest time written */
	const char *cname[8]; /* record --counters: the counter tracks' columns */
	unsigned ncol;
	int have_ts;
	struct strand *st;
	size_t nst;
	uint32_t *heap; /* stream orders with a pending end, by pend_ns */
	size_t nheap;
	struct evstate *ev;
	uint32_t nev;
	/* interning */
	struct sslot *strs;
	size_t nstrs, capstrs;
	struct kslot *keys;
	size_t nkeys, capkeys;
	uint32_t next_iid[NS_N];
	struct sblock *blocks;
	struct pending *pend;
	size_t npend, cappend;
	uint32_t an_iid[AN_N];
	int trail_track;
	struct trail_argtypes *types; /* --args, typed --retval: from DWARF */
	/* damage found before the first timestamp, written at the end */
	char *damage[DAMAGE_KEEP];
	size_t ndamage, damage_more;
	int err;
};

/* ---- strings: Perfetto's are UTF-8; bytes that are not become \xNN ---- */

/* length of the valid UTF-8 sequence at s, or 0 */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
	int ok;
	size_t k;

	if (s[0] < 0x80)
		return 1;
	k = trail__utf8_seq(s, n, &ok);
	return ok ? k : 0;
}

static void put_str(struct pb *b, uint32_t field, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *s = (const uint8_t *)str;
	size_t i = 0, k, mark;

	while (i < len && s[i] < 0x80)
		i++;
	while (i < len && (k = utf8_seq(s + i, len - i)))
		i += k;
	if (i == len) {
		pb_bytes(b, field, s, len);
		return;
	}
	mark = pb_open(b, field);
	if (!pb_room(b, i + (len - i) * 4))
		return;
	memcpy(b->b + b->n, s, i);
	b->n += i;
	while (i < len) {
		if ((k = utf8_seq(s + i, len - i))) {
			memcpy(b->b + b->n, s + i, k);
			b->n += k;
			i += k;
			continue;
		}
		b->b[b->n++] = '\\';
		b->b[b->n++] = 'x';
		b->b[b->n++] = (uint8_t)hex[s[i] >> 4];
		b->b[b->n++] = (uint8_t)hex[s[i] & 15];
		i++;
	}
	pb_close(b, mark);
}

/* ---- interning ---- */

static uint64_t str_hash(uint32_t ns, const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ns;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h | 1;
}

static const char *keep(struct pf *p, const char *s, size_t len)
{
	struct sblock *b = p->blocks;
	char *d;

	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > 65536 ? len + 1 : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = p->blocks;
		b->used = 0;
		b->cap = cap;
		p->blocks = b;
	}
	d = b->data + b->used;
	memcpy(d, s, len);
	d[len] = '\0';
	b->used += len + 1;
	return d;
}

static int pending_add(struct pf *p, uint32_t ns, uint32_t iid, const char *s, uint32_t len)
{
	if (p->npend == p->cappend) {
		size_t cap = p->cappend ? 2 * p->cappend : 16;
		struct pending *n = realloc(p->pend, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->pend = n;
		p->cappend = cap;
	}
	p->pend[p->npend++] = (struct pending){ns, iid, len, s};
	return 0;
}

static int strs_grow(struct pf *p)
{
	size_t cap = p->capstrs ? 2 * p->capstrs : 1024;
	struct sslot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->capstrs; i++) {
		size_t j;

		if (!p->strs[i].h)
			continue;
		for (j = p->strs[i].h & (cap - 1); v[j].h; j = (j + 1) & (cap - 1))
			;
		v[j] = p->strs[i];
	}
	free(p->strs);
	p->strs = v;
	p->capstrs = cap;
	return 0;
}

/* The iid of a string in namespace ns: found, or new (and then written in
 * the InternedData of the packet being built). 0 if out of memory. */
static uint32_t intern(struct pf *p, uint32_t ns, const char *s, size_t len)
{
	uint64_t h;
	size_t j;
	const char *copy;

	if (len > UINT32_MAX)
		len = UINT32_MAX;
	if (2 * (p->nstrs + 1) > p->capstrs && strs_grow(p))
		return 0;
	h = str_hash(ns, s, len);
	for (j = h & (p->capstrs - 1); p->strs[j].h; j = (j + 1) & (p->capstrs - 1)) {
		const struct sslot *e = &p->strs[j];

		if (e->h == h && e->ns == ns && e->len == len && !memcmp(e->s, s, len))
			return e->iid;
	}
	copy = keep(p, s, len);
	if (!copy)
		return 0;
	p->strs[j] = (struct sslot){h, copy, (uint32_t)len, ++p->next_iid[ns], ns};
	p->nstrs++;
	if (pending_add(p, ns, p->strs[j].iid, copy, (uint32_t)len))
		return 0;
	return p->strs[j].iid;
}

static uint64_t key_hash(uint32_t kind, uint64_t key)
{
	return ((key ^ kind) * 0x9e3779b97f4a7c15ull) >> 20;
}

static int keys_grow(struct pf *p)
{
	size_t cap = p->capkeys ? 2 * p->capkeys : 1024;
	struct kslot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->capkeys; i++) {
		size_t j;

		if (!p->keys[i].kind)
			continue;
		for (j = key_hash(p->keys[i].kind, p->keys[i].key) & (cap - 1); v[j].kind;
		     j = (j + 1) & (cap - 1))
			;
		v[j] = p->keys[i];
	}
	free(p->keys);
	p->keys = v;
	p->capkeys = cap;
	return 0;
}

/*
 * The iid of a function's name: the symbol the reader gave (a pointer that
 * stays the same for the same symbol, so the cache is keyed by it), or
 * its address in hex when it has none. ns: NS_NAME (an event's name) or
 * NS_STR (a string annotation's value). 0 if out of memory.
 */
static uint32_t func_iid(struct pf *p, uint32_t ns, uint64_t addr, const char *name)
{
	uint32_t kind = ns == NS_NAME ? (name ? K_NAME_PTR : K_NAME_ADDR) :
			(name ? K_STR_PTR : K_STR_ADDR);
	uint64_t key = name ? (uint64_t)(uintptr_t)name : addr;
	size_t j;
	char hex[24];
	uint32_t iid;

	if (2 * (p->nkeys + 1) > p->capkeys && keys_grow(p))
		return 0;
	for (j = key_hash(kind, key) & (p->capkeys - 1); p->keys[j].kind;
	     j = (j + 1) & (p->capkeys - 1))
		if (p->keys[j].key == key && p->keys[j].kind == kind)
			return p->keys[j].iid;
	if (!name) {
		snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
		name = hex;
	}
	iid = intern(p, ns, name, strlen(name));
	if (iid) {
		p->keys[j] = (struct kslot){key, kind, iid};
		p->nkeys++;
	}
	return iid;
}

static uint32_t an_iid(struct pf *p, int an)
{
	if (!p->an_iid[an])
		p->an_iid[an] = intern(p, NS_ANNOT, an_text[an], strlen(an_text[an]));
	return p->an_iid[an];
}

/* ---- packets ---- */

static int drain(struct pf *p)
{
	if (p->pb.n && fwrite(p->pb.b, 1, p->pb.n, p->f) != p->pb.n)
		return -EIO;
	p->pb.n = 0;
	return 0;
}

/* A packet of the sequence begins, at time *ts if ts. */
static size_t pkt_open(struct pf *p, const uint64_t *ts)
{
	struct pb *b = &p->pb;
	size_t mark = pb_open(b, TRACE_PACKET);

	if (ts) {
		/* backwards: the delta wraps, and Perfetto reads it as signed */
		pb_uint(b, TP_TIMESTAMP, *ts - p->clock);
		p->clock = *ts;
		if (!p->have_ts || *ts > p->max_ns)
			p->max_ns = *ts;
		p->have_ts = 1;
	}
	pb_uint(b, TP_SEQ_ID, SEQ_ID);
	pb_uint(b, TP_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	return mark;
}

/* The packet ends: the names it interned first, its length. */
static int pkt_close(struct pf *p, size_t mark)
{
	struct pb *b = &p->pb;

	if (p->npend) {
		size_t id = pb_open(b, TP_INTERNED);

		for (size_t i = 0; i < p->npend; i++) {
			size_t e = pb_open(b, ns_field[p->pend[i].ns]);

			pb_uint(b, IE_IID, p->pend[i].iid);
			put_str(b, IE_NAME, p->pend[i].s, p->pend[i].len);
			pb_close(b, e);
		}
		pb_close(b, id);
		p->npend = 0;
	}
	pb_close(b, mark);
	if (b->err)
		return b->err;
	return b->n >= FLUSH_AT ? drain(p) : 0;
}

/* a TrackEvent on track uuid: returns its mark */
static size_t te_open(struct pf *p, int type, uint64_t uuid)
{
	size_t m = pb_open(&p->pb, TP_TRACK_EVENT);

	pb_uint(&p->pb, TE_TYPE, (uint64_t)type);
	if (uuid != p->deftrack)
		pb_uint(&p->pb, TE_TRACK, uuid);
	return m;
}

static void annot_uint(struct pf *p, int an, uint32_t field, uint64_t v)
{
	size_t m = pb_open(&p->pb, TE_ANNOTATIONS);

	pb_uint(&p->pb, DA_NAME_IID, an_iid(p, an));
	pb_uint(&p->pb, field, v);
	pb_close(&p->pb, m);
}

static void annot_str(struct pf *p, int an, const char *s)
{
	size_t m = pb_open(&p->pb, TE_ANNOTATIONS);

	pb_uint(&p->pb, DA_NAME_IID, an_iid(p, an));
	put_str(&p->pb, DA_STRING, s, strlen(s));
	pb_close(&p->pb, m);
}

/* ---- leaf ends waiting for their time: a min-heap by pend_ns ---- */

static void hset(struct pf *p, size_t i, uint32_t s)
{
	p->heap[i] = s;
	p->st[s].hpos = (int32_t)i;
}

static void hup(struct pf *p, size_t i)
{
	uint32_t s = p->heap[i];

	while (i) {
		size_t up = (i - 1) / 2;

		if (p->st[p->heap[up]].pend_ns <= p->st[s].pend_ns)
			break;
		hset(p, i, p->heap[up]);
		i = up;
	}
	hset(p, i, s);
}

static void hdown(struct pf *p, size_t i)
{
	uint32_t s = p->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= p->nheap)
			break;
		if (c + 1 < p->nheap && p->st[p->heap[c + 1]].pend_ns < p->st[p->heap[c]].pend_ns)
			c++;
		if (p->st[s].pend_ns <= p->st[p->heap[c]].pend_ns)
			break;
		hset(p, i, p->heap[c]);
		i = c;
	}
	hset(p, i, s);
}

static void hremove(struct pf *p, uint32_t s)
{
	size_t i = (size_t)p->st[s].hpos;

	p->st[s].hpos = -1;
	if (i == --p->nheap)
		return;
	hset(p, i, p->heap[p->nheap]);
	if (i && p->st[p->heap[i]].pend_ns < p->st[p->heap[(i - 1) / 2]].pend_ns)
		hup(p, i);
	else
		hdown(p, i);
}

/* a value of a DWARF type as an annotation's value */
static void argval(struct pb *b, const struct trail_argval *v)
{
	if (v->kind == 's')
		pb_int(b, DA_INT, (int64_t)v->v);
	else if (v->kind == 'u')
		pb_uint(b, DA_UINT, v->v);
	else
		pb_uint(b, DA_POINTER, v->v);
}

/* The call's return value as its function's DWARF type has it (kind 0:
 * void, nothing to show), a pointer-sized value without DWARF, none
 * without --retval. */
static struct trail_argval ret_of(struct pf *p, const struct trail_call *c)
{
	struct trail_argval v = {NULL, 'x', c->retval};
	char buf[512];

	if (!(c->flags & TRAIL_CALL_RETVAL) ||
	    !trail_argtypes_retv(p->types, c->stream->pid, c->func, c->ts_raw,
				 trail_argtypes_bare(c->name, buf, sizeof(buf)), c->retval, &v))
		v.kind = 0;
	return v;
}

static void counter_annots(struct pf *p, const struct trail_call *c);

/* (c: an EXIT's call, for its counters' annotations; a leaf has them on
 * its begin) */
static void slice_end_body(struct pf *p, uint64_t uuid, unsigned flags,
			   const struct trail_argval *ret, const struct trail_call *c)
{
	size_t te = te_open(p, TYPE_SLICE_END, uuid);

	if (c && (c->flags & TRAIL_CALL_COUNTERS))
		counter_annots(p, c);

	if (ret->kind) {
		size_t m = pb_open(&p->pb, TE_ANNOTATIONS);

		pb_uint(&p->pb, DA_NAME_IID, an_iid(p, AN_RETVAL));
		argval(&p->pb, ret);
		pb_close(&p->pb, m);
	}
	if (flags & TRAIL_CALL_OPEN)
		annot_uint(p, AN_UNFINISHED, DA_BOOL, 1);
	pb_close(&p->pb, te);
}

static int write_pending(struct pf *p, uint32_t s)
{
	struct strand *t = &p->st[s];
	size_t m;

	hremove(p, s);
	m = pkt_open(p, &t->pend_ns);
	slice_end_body(p, t->uuid, t->pend_flags, &t->pend_ret, NULL);
	return pkt_close(p, m);
}

/* Before writing at time ts in stream s: the leaf ends due by then, and
 * s's own, which must come before anything else of its track. */
static int settle(struct pf *p, uint32_t s, uint64_t ts)
{
	int rc;

	if (s < p->nst && !p->st[s].seen) {
		p->st[s].seen = 1;
		p->st[s].first_ns = ts;
	}
	while (p->nheap && p->st[p->heap[0]].pend_ns <= ts)
		if ((rc = write_pending(p, p->heap[0])))
			return rc;
	if (s < p->nst && p->st[s].hpos >= 0)
		return write_pending(p, s);
	return 0;
}

/* ---- tracks ---- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* processes by (pid, place in the file): a pid's first process first */
static int cmp_proc(const void *a, const void *b)
{
	const struct trail_rproc *x = *(const struct trail_rproc *const *)a;
	const struct trail_rproc *y = *(const struct trail_rproc *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* streams by (pid, tid, level, order) */
static int cmp_stream(const void *a, const void *b)
{
	const struct trail_rstream *x = *(const struct trail_rstream *const *)a;
	const struct trail_rstream *y = *(const struct trail_rstream *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* pid's track: named by its process (pr), or else by its main thread's
 * stream (main); either may be NULL */
static int process_track(struct pf *p, uint32_t pid, const struct trail_rproc *pr,
			 const struct trail_rstream *main)
{
	const char *name = pr && pr->comm[0] ? pr->comm : main ? main->comm : NULL;
	size_t pk, m, pd;

	pk = pkt_open(p, NULL);
	m = pb_open(&p->pb, TP_TRACK_DESCRIPTOR);
	pb_uint(&p->pb, TD_UUID, UUID_PROC | pid);
	pd = pb_open(&p->pb, TD_PROCESS);
	pb_uint(&p->pb, PD_PID, pid);
	if (pr && pr->exe && pr->exe[0])
		put_str(&p->pb, PD_CMDLINE, pr->exe, strlen(pr->exe));
	if (name)
		put_str(&p->pb, PD_NAME, name, strnlen(name, sizeof(pr->comm)));
	pb_close(&p->pb, pd);
	pb_close(&p->pb, m);
	return pkt_close(p, pk);
}

/* stream st's track: a thread's, or (parent: the thread's track) one of
 * its signal handler level */
static int stream_track(struct pf *p, const struct trail_rstream *st, uint64_t parent)
{
	size_t pk = pkt_open(p, NULL), m, td;
	char name[64];

	m = pb_open(&p->pb, TP_TRACK_DESCRIPTOR);
	pb_uint(&p->pb, TD_UUID, p->st[st->order].uuid);
	if (parent) {
		pb_uint(&p->pb, TD_PARENT, parent);
		snprintf(name, sizeof(name), "%u signal handler level %u", st->tid, st->level);
		put_str(&p->pb, TD_NAME, name, strlen(name));
	} else {
		pb_uint(&p->pb, TD_PARENT, UUID_PROC | st->pid);
		td = pb_open(&p->pb, TD_THREAD);
		pb_uint(&p->pb, THD_PID, st->pid);
		pb_uint(&p->pb, THD_TID, st->tid);
		put_str(&p->pb, THD_NAME, st->comm, strnlen(st->comm, sizeof(st->comm)));
		pb_close(&p->pb, td);
	}
	pb_close(&p->pb, m);
	return pkt_close(p, pk);
}

/* Every process and thread of the file, up front. */
static int tracks(struct pf *p)
{
	const struct trail_export_src *src = p->src;
	size_t n = src->nstreams, np = 0, npr = src->nprocs, ip = 0, is = 0;
	uint32_t *pids = malloc((npr + n + 1) * sizeof(*pids));
	const struct trail_rstream **ord = malloc((n + 1) * sizeof(*ord));
	const struct trail_rproc **pr = malloc((npr + 1) * sizeof(*pr));
	int rc = -ENOMEM;

	if (!pids || !ord || !pr)
		goto out;
	for (size_t i = 0; i < npr; i++) {
		pr[i] = &src->procs[i];
		pids[np++] = src->procs[i].pid;
	}
	for (size_t i = 0; i < n; i++)
		pids[np++] = src->streams[i]->pid;
	qsort(pids, np, sizeof(*pids), cmp_u32);
	qsort(pr, npr, sizeof(*pr), cmp_proc);
	if (n) /* (a file with no streams has no array: NULL) */
		memcpy(ord, src->streams, n * sizeof(*ord));
	qsort(ord, n, sizeof(*ord), cmp_stream);
	rc = 0;
	for (size_t i = 0; i < np && !rc; i++) {
		const struct trail_rstream *main = NULL;

		if (i && pids[i] == pids[i - 1])
			continue;
		while (ip < npr && pr[ip]->pid < pids[i])
			ip++;
		while (is < n && ord[is]->pid < pids[i])
			is++;
		for (size_t k = is; k < n && ord[k]->pid == pids[i] && !main; k++)
			if (ord[k]->tid == pids[i])
				main = ord[k];
		rc = process_track(p, pids[i], ip < npr && pr[ip]->pid == pids[i] ? pr[ip] : NULL,
				   main);
	}
	/* the first stream of a thread (its level 0, if it has one) is the
	 * thread's track; its other levels are tracks under it */
	for (size_t i = 0, first = 0; i < n && !rc; i++) {
		const struct trail_rstream *s = ord[i], *f = ord[first];

		if (i && (s->pid != f->pid || s->tid != f->tid || s->level == f->level))
			first = i;
		f = ord[first];
		rc = stream_track(p, s, first == i ? 0 : p->st[f->order].uuid);
	}
out:
	free(pids);
	free(ord);
	free(pr);
	return rc;
}

static int trail_track(struct pf *p)
{
	size_t pk, m;

	if (p->trail_track)
		return 0;
	p->trail_track = 1;
	pk = pkt_open(p, NULL);
	m = pb_open(&p->pb, TP_TRACK_DESCRIPTOR);
	pb_uint(&p->pb, TD_UUID, UUID_TRAIL);
	put_str(&p->pb, TD_NAME, "trail", 5);
	pb_close(&p->pb, m);
	return pkt_close(p, pk);
}

/* The first packet: the sequence's state is new; its timestamps are
 * deltas of clock 64, which starts at 0 when CLOCK_MONOTONIC is 0; the
 * trace's clock is CLOCK_MONOTONIC; events name their track unless it is
 * the busiest thread's. */
static void first_packet(struct pf *p)
{
	const struct trail_export_src *src = p->src;
	struct pb *b = &p->pb;
	size_t pk = pb_open(b, TRACE_PACKET), m, c;
	uint64_t most = 0;

	for (size_t i = 0; i < src->nstreams; i++)
		if (src->streams[i]->in_file > most) {
			most = src->streams[i]->in_file;
			p->deftrack = p->st[i].uuid;
		}
	pb_uint(b, TP_SEQ_ID, SEQ_ID);
	pb_uint(b, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	m = pb_open(b, TP_DEFAULTS);
	pb_uint(b, DEF_CLOCK_ID, CLOCK_SEQ_DELTA);
	if (p->deftrack) {
		c = pb_open(b, DEF_TRACK_EVENT);
		pb_uint(b, TED_TRACK, p->deftrack);
		pb_close(b, c);
	}
	pb_close(b, m);
	m = pb_open(b, TP_CLOCK_SNAPSHOT);
	c = pb_open(b, CS_CLOCKS);
	pb_uint(b, CLK_ID, CLOCK_MONOTONIC_ID);
	pb_uint(b, CLK_TIMESTAMP, 0);
	pb_close(b, c);
	c = pb_open(b, CS_CLOCKS);
	pb_uint(b, CLK_ID, CLOCK_SEQ_DELTA);
	pb_uint(b, CLK_TIMESTAMP, 0);
	pb_uint(b, CLK_INCREMENTAL, 1);
	pb_close(b, c);
	pb_uint(b, CS_PRIMARY_CLOCK, CLOCK_MONOTONIC_ID);
	pb_close(b, m);
	pb_close(b, pk);
}

/* ---- the output ---- */

static int pf_begin(void *ctx, const struct trail_export_src *src)
{
	struct pf *p = ctx;

	p->src = src;
	if (!(p->types = trail_argtypes_new(src->reader)))
		return -ENOMEM;
	p->nst = src->nstreams;
	p->st = calloc(p->nst + 1, sizeof(*p->st));
	p->heap = calloc(p->nst + 1, sizeof(*p->heap));
	p->nev = trail_reader_event_ids(src->reader);
	p->ev = calloc(p->nev + 1, sizeof(*p->ev));
	if (!p->st || !p->heap || !p->ev)
		return -ENOMEM;
	for (size_t i = 0; i < p->nst; i++)
		p->st[i] = (struct strand){.uuid = i + 1, .hpos = -1};
	first_packet(p);
	return tracks(p);
}

/* a call's begin */
/* "args": {name: value, ...} of a call's arguments (record --args) by
 * their DWARF types, "more_args": true if some were not recorded (report's
 * "..."); nothing without DWARF */
static void call_args(struct pf *p, const struct trail_call *c)
{
	struct trail_argval v[TRAIL_ARGTYPES_MAX];
	char buf[512];
	int more, n = trail_argtypes_vals(p->types, c->stream->pid, c->func, c->ts_raw,
					  trail_argtypes_bare(c->name, buf, sizeof(buf)), c->args,
					  v, &more);
	size_t m, e;

	if (n < 0)
		return;
	m = pb_open(&p->pb, TE_ANNOTATIONS);
	pb_uint(&p->pb, DA_NAME_IID, an_iid(p, AN_ARGS));
	for (int i = 0; i < n + more; i++) {
		e = pb_open(&p->pb, DA_DICT);
		if (i < n) {
			put_str(&p->pb, DA_NAME, v[i].name, strlen(v[i].name));
			argval(&p->pb, &v[i]);
		} else {
			put_str(&p->pb, DA_NAME, "more_args", 9);
			pb_uint(&p->pb, DA_BOOL, 1);
		}
		pb_close(&p->pb, e);
	}
	pb_close(&p->pb, m);
}

static int slice_begin(struct pf *p, uint32_t s, const struct trail_call *c, uint64_t ts,
		       int nostart)
{
	uint32_t iid = func_iid(p, NS_NAME, c->func, c->name);
	size_t m = pkt_open(p, &ts), te = te_open(p, TYPE_SLICE_BEGIN, p->st[s].uuid);

	pb_uint(&p->pb, TE_NAME_IID, iid);
	if (nostart)
		annot_uint(p, AN_NOSTART, DA_BOOL, 1);
	if (!nostart && (c->flags & TRAIL_CALL_ARGS))
		call_args(p, c);
	if (!nostart && c->kind == TRAIL_CALL_LEAF && (c->flags & TRAIL_CALL_COUNTERS))
		counter_annots(p, c);
	pb_close(&p->pb, te);
	return pkt_close(p, m);
}

/*
 * The return from a call entered before what the view shows (a frame a
 * forked child inherited, a call entered before --time-range): its slice
 * begins just before the first thing of its track, outer frames first
 * (they return last, so each begins a nanosecond per level of depth
 * before the next one in), marked entered_before_trace. Without it the
 * calls inside would have lost their parents.
 */
static int nostart_exit(struct pf *p, uint32_t s, const struct trail_call *c)
{
	struct strand *t = &p->st[s];
	uint64_t d = c->depth < NOSTART_SPAN ? c->depth : NOSTART_SPAN - 1;
	struct trail_argval ret;
	size_t m;
	int rc;

	if (!c->func && !c->name)
		return 0; /* nothing to name it by */
	if ((rc = settle(p, s, c->end_ns)))
		return rc;
	d += t->first_ns > NOSTART_SPAN ? t->first_ns - NOSTART_SPAN : 0;
	if ((rc = slice_begin(p, s, c, d, 1)))
		return rc;
	m = pkt_open(p, &c->end_ns);
	ret = ret_of(p, c);
	slice_end_body(p, t->uuid, c->flags & ~TRAIL_CALL_NOSTART, &ret, c);
	return pkt_close(p, m);
}

/* record --counters: counter i of c's column (the same counter a column
 * in every thread), or -1 past 8 */
static int ctr_col(struct pf *p, const struct trail_call *c, uint32_t i)
{
	const char *name = trail_call_counter_name(c, i);
	unsigned k = 0;

	while (k < p->ncol && strcmp(p->cname[k], name))
		k++;
	if (k == p->ncol) {
		if (k == 8)
			return -1;
		p->cname[p->ncol++] = name;
	}
	return (int)k;
}

/* the call's counters: each column's track (described the first time),
 * the thread's count at its entry and at its return */
static int call_counters(struct pf *p, uint32_t s, const struct trail_call *c)
{
	struct strand *t = &p->st[s];
	int rc = 0;

	for (uint32_t i = 0; i < c->nctr && !rc; i++) {
		int k = ctr_col(p, c, i);
		uint64_t uuid = UUID_CTR | (uint64_t)s << 3 | (uint64_t)k;
		const uint64_t at[2] = {c->start_ns, c->end_ns};
		size_t pk, m, cd;

		if (k < 0)
			continue;
		if (!(t->ctracks >> k & 1)) {
			const char *name = p->cname[k];

			t->ctracks |= (uint8_t)(1u << k);
			pk = pkt_open(p, NULL);
			m = pb_open(&p->pb, TP_TRACK_DESCRIPTOR);
			pb_uint(&p->pb, TD_UUID, uuid);
			pb_uint(&p->pb, TD_PARENT, t->uuid);
			put_str(&p->pb, TD_NAME, name, strlen(name));
			cd = pb_open(&p->pb, TD_COUNTER);
			pb_uint(&p->pb, CD_UNIT, trail_call_counter_is_ns(c, i) ? UNIT_TIME_NS : UNIT_COUNT);
			pb_close(&p->pb, cd);
			pb_close(&p->pb, m);
			if ((rc = pkt_close(p, pk)))
				break;
		}
		for (int e = 0; e < 2 && !rc; e++) {
			pk = pkt_open(p, &at[e]);
			m = te_open(p, TYPE_COUNTER, uuid);
			pb_uint(&p->pb, TE_COUNTER_VALUE, c->ctr_at[i] + (e ? c->ctr[i] : 0));
			pb_close(&p->pb, m);
			rc = pkt_close(p, pk);
		}
	}
	return rc;
}

/* the call's deltas as annotations of the slice event being written */
static void counter_annots(struct pf *p, const struct trail_call *c)
{
	for (uint32_t i = 0; i < c->nctr; i++) {
		const char *name = trail_call_counter_name(c, i);
		size_t m = pb_open(&p->pb, TE_ANNOTATIONS);

		pb_uint(&p->pb, DA_NAME_IID, intern(p, NS_ANNOT, name, strlen(name)));
		pb_uint(&p->pb, DA_UINT, c->ctr[i]);
		pb_close(&p->pb, m);
	}
}

static int pf_call(void *ctx, const struct trail_call *c)
{
	struct pf *p = ctx;
	uint32_t s = c->stream->order;
	struct strand *t = &p->st[s];
	struct trail_argval ret;
	size_t m;
	int rc;

	if (s >= p->nst)
		return 0;
	if (c->kind == TRAIL_CALL_EXIT) {
		if (c->flags & TRAIL_CALL_NOSTART)
			return nostart_exit(p, s, c);
		if ((rc = settle(p, s, c->end_ns)))
			return rc;
		ret = ret_of(p, c);
		m = pkt_open(p, &c->end_ns);
		slice_end_body(p, t->uuid, c->flags, &ret, c);
		if ((rc = pkt_close(p, m)))
			return rc;
		return c->flags & TRAIL_CALL_COUNTERS ? call_counters(p, s, c) : 0;
	}
	if ((rc = settle(p, s, c->start_ns)) || (rc = slice_begin(p, s, c, c->start_ns, 0)))
		return rc;
	if ((c->flags & TRAIL_CALL_COUNTERS) && (rc = call_counters(p, s, c)))
		return rc;
	if (c->kind == TRAIL_CALL_LEAF) { /* its end when time gets there */
		t->pend_ns = c->end_ns;
		t->pend_flags = c->flags;
		t->pend_ret = ret_of(p, c);
		p->heap[p->nheap] = s;
		t->hpos = (int32_t)p->nheap++;
		hup(p, (size_t)t->hpos);
	}
	return 0;
}

/* an integer field's value (element j) as its annotation value */
static void int_value(struct pb *b, const struct trail_fval *v, uint32_t j)
{
	uint8_t fl = v->f->flags;

	if (fl & TRAIL_FF_BOOL)
		pb_uint(b, DA_BOOL, trail_fval_u64(v, j) != 0);
	else if (fl & (TRAIL_FF_HEX | TRAIL_FF_PTR))
		pb_uint(b, DA_POINTER, trail_fval_u64(v, j));
	else if (fl & TRAIL_FF_SIGNED)
		pb_int(b, DA_INT, trail_fval_s64(v, j));
	else
		pb_uint(b, DA_UINT, trail_fval_u64(v, j));
}

static void field_value(struct pb *b, const struct trail_fval *v)
{
	switch (v->f->kind) {
	case TRAIL_FK_INT:
		int_value(b, v, 0);
		break;
	case TRAIL_FK_FLOAT:
		pb_double(b, DA_DOUBLE, trail_fval_double(v));
		break;
	case TRAIL_FK_STRING:
		if (v->null)
			pb_bytes(b, DA_STRING, "(null)", 6);
		else
			put_str(b, DA_STRING, (const char *)v->data, v->count);
		break;
	case TRAIL_FK_ARRAY:
	case TRAIL_FK_SEQ:
		for (uint32_t j = 0; j < v->count; j++) {
			size_t m = pb_open(b, DA_ARRAY);

			int_value(b, v, j);
			pb_close(b, m);
		}
		break;
	}
}

/* what an event is, and its names interned, on its first record */
static struct evstate *evstate(struct pf *p, const struct trail_record *rec)
{
	const struct trail_revent *ev = rec->event;
	struct evstate *e = ev->id < p->nev ? &p->ev[ev->id] : NULL;
	const struct trail_meta *m = &ev->meta;
	char name[512];
	int n;

	if (!e)
		return NULL;
	if (e->kind)
		return e;
	if (trail_export_is_function(rec->event)) {
		e->kind = EV_FUNCTION;
		return e;
	}
	e->kind = EV_OTHER;
	n = snprintf(name, sizeof(name), "%s:%s", m->provider, m->name);
	e->name_iid = intern(p, NS_NAME, name,
			     n < (int)sizeof(name) ? (size_t)n : sizeof(name) - 1);
	e->cat_iid = intern(p, NS_CAT, m->provider, strlen(m->provider));
	e->annot = calloc(m->nfields + 1, sizeof(*e->annot));
	if (!e->annot) {
		p->err = -ENOMEM;
		return e;
	}
	for (uint32_t i = 0; i < m->nfields; i++)
		e->annot[i] = intern(p, NS_ANNOT, m->fields[i].name, strlen(m->fields[i].name));
	return e;
}

static void event_body(struct pf *p, const struct trail_record *rec, const struct evstate *e)
{
	const struct trail_revent *ev = rec->event;
	struct pb *b = &p->pb;
	size_t te = te_open(p, TYPE_INSTANT, p->st[rec->stream->order].uuid);
	uint32_t off = 0;
	struct trail_fval v;

	pb_uint(b, TE_NAME_IID, e->name_iid);
	pb_uint(b, TE_CATEGORY_IIDS, e->cat_iid);
	for (uint32_t i = 0; i < ev->meta.nfields && e->annot; i++) {
		size_t m;

		if (!trail_field_at(ev, i, rec->payload, rec->len, &off, &v))
			break;
		m = pb_open(b, TE_ANNOTATIONS);
		pb_uint(b, DA_NAME_IID, e->annot[i]);
		field_value(b, &v);
		pb_close(b, m);
	}
	pb_close(b, te);
}

/* the function tracer: "func", parent = its caller */
static void function_body(struct pf *p, const struct trail_record *rec, uint64_t ip,
			  uint64_t parent)
{
	const struct trail_export_src *src = p->src;
	uint32_t pid = rec->stream->pid;
	uint32_t name, caller;
	size_t te, m;

	name = func_iid(p, NS_NAME, ip, trail_export_symbol(src, pid, ip, rec->ts_raw));
	caller = func_iid(p, NS_STR, parent, trail_export_symbol(src, pid, parent, rec->ts_raw));
	te = te_open(p, TYPE_INSTANT, p->st[rec->stream->order].uuid);
	pb_uint(&p->pb, TE_NAME_IID, name);
	m = pb_open(&p->pb, TE_ANNOTATIONS);
	pb_uint(&p->pb, DA_NAME_IID, an_iid(p, AN_PARENT));
	pb_uint(&p->pb, DA_STRING_IID, caller);
	pb_close(&p->pb, m);
	pb_close(&p->pb, te);
}

static void lost_body(struct pf *p, uint64_t uuid, uint64_t n, const char *what)
{
	char name[96];
	size_t te = te_open(p, TYPE_INSTANT, uuid);

	snprintf(name, sizeof(name), "LOST %" PRIu64 " events%s", n, what);
	put_str(&p->pb, TE_NAME, name, strlen(name));
	annot_uint(p, AN_LOST, DA_UINT, n);
	pb_close(&p->pb, te);
}

static int pf_event(void *ctx, const struct trail_record *rec)
{
	struct pf *p = ctx;
	uint32_t s = rec->stream ? rec->stream->order : UINT32_MAX;
	struct evstate *e = NULL;
	uint64_t ip = 0, parent = 0;
	size_t m;
	int rc;

	if (s >= p->nst)
		return 0;
	if (rec->type == TRAIL_RT_EVENT) {
		if (!rec->event || !(e = evstate(p, rec)))
			return 0;
		if (e->kind == EV_FUNCTION && !trail_export_function(rec, &ip, &parent))
			return 0;
	} else if (rec->type != TRAIL_RT_LOST) {
		return 0;
	}
	if ((rc = settle(p, s, rec->ts_ns)))
		return rc;
	m = pkt_open(p, &rec->ts_ns);
	if (rec->type == TRAIL_RT_LOST)
		lost_body(p, p->st[s].uuid, rec->lost, "");
	else if (e->kind == EV_FUNCTION)
		function_body(p, rec, ip, parent);
	else
		event_body(p, rec, e);
	rc = pkt_close(p, m);
	return rc ? rc : p->err;
}

static void damage_instant(struct pf *p, const char *msg)
{
	size_t m = pkt_open(p, &p->max_ns);
	size_t te = te_open(p, TYPE_INSTANT, UUID_TRAIL);

	put_str(&p->pb, TE_NAME, "DAMAGED", 7);
	annot_str(p, AN_MESSAGE, msg);
	pb_close(&p->pb, te);
	p->err = pkt_close(p, m);
}

/* The reader found damage: an instant on the trail track, where reading
 * has got to (before the first record: at the end). */
static int pf_damage(void *ctx, const char *msg)
{
	struct pf *p = ctx;
	int rc;

	if (!p->have_ts) {
		if (p->ndamage < DAMAGE_KEEP)
			p->damage[p->ndamage++] = strdup(msg);
		else
			p->damage_more++;
		return 0;
	}
	if ((rc = trail_track(p)))
		return rc;
	damage_instant(p, msg);
	return p->err;
}

static int pf_end(void *ctx, const struct trail_export_src *src)
{
	struct pf *p = ctx;
	uint64_t nostream = trail_reader_nostream_lost(src->reader);
	uint64_t gone = trail_reader_gone_lost(src->reader, NULL);
	int rc = p->err;

	while (!rc && p->nheap)
		rc = write_pending(p, p->heap[0]);
	if (!rc && (nostream || gone || p->ndamage))
		rc = trail_track(p);
	for (size_t i = 0; i < p->ndamage && !rc; i++) {
		damage_instant(p, p->damage[i] ? p->damage[i] : "(out of memory)");
		rc = p->err;
	}
	if (!rc && p->damage_more) {
		char msg[64];

		snprintf(msg, sizeof(msg), "and %zu more", p->damage_more);
		damage_instant(p, msg);
		rc = p->err;
	}
	if (!rc && nostream) {
		size_t m = pkt_open(p, &p->max_ns);

		lost_body(p, UUID_TRAIL, nostream,
			  " (no stream: stream table full, or nested too deep)");
		rc = pkt_close(p, m);
	}
	if (!rc && gone) {
		size_t m = pkt_open(p, &p->max_ns);

		lost_body(p, UUID_TRAIL, gone, " (overwritten: threads that ended, all their events)");
		rc = pkt_close(p, m);
	}
	if (!rc)
		rc = p->pb.err ? p->pb.err : drain(p);
	if (fflush(p->f) || ferror(p->f))
		return rc ? rc : -EIO;
	return rc;
}

static void pf_free(void *ctx)
{
	struct pf *p = ctx;

	if (!p)
		return;
	pb_free(&p->pb);
	trail_argtypes_free(p->types);
	free(p->st);
	free(p->heap);
	for (uint32_t i = 0; p->ev && i < p->nev; i++)
		free(p->ev[i].annot);
	free(p->ev);
	free(p->strs);
	free(p->keys);
	free(p->pend);
	while (p->blocks) {
		struct sblock *n = p->blocks->next;

		free(p->blocks);
		p->blocks = n;
	}
	for (size_t i = 0; i < p->ndamage; i++)
		free(p->damage[i]);
	free(p);
}

struct trail_output *trail__export_perfetto(const struct trail_export_opts *opts)
{
	static const struct trail_output ops = {
		.name = "perfetto", .begin = pf_begin, .event = pf_event, .call = pf_call,
		.damage = pf_damage, .end = pf_end, .free = pf_free,
	};
	struct pf *p;

	if (!opts || opts->sz < sizeof(*opts) || !opts->out) {
		errno = EINVAL;
		return NULL;
	}
	p = trail__output_new(sizeof(*p), &ops);
	if (!p)
		return NULL;
	p->f = opts->out;
	return &p->out;
}
