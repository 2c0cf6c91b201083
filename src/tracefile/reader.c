/* SPDX-License-Identifier: MIT */
/*
 * reader.c - trace file reader: section scan, chunk index, per-stream
 * record decoding, timestamp merge. See reader.h for the contract and
 * layout.h for the layout.
 */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/arena.h"
#include "../common/clock.h"
#include "../common/crc32c.h"
#include "../common/symrule.h"
#include "rinternal.h"

static void damage(struct trail_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void damage(struct trail_reader *r, const char *fmt, ...)
{
	va_list ap;
	char *m = NULL;

	if (r->nerrs == MAX_ERRORS) {
		r->more_errs++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	if (m)
		r->errs[r->nerrs++] = m;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	np = realloc(*p, c * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

/* ------------------------------------------------------------- sections */

static const char *sec_name(uint32_t type)
{
	static const char *const names[] = {
		"?", "INFO", "CLOCK", "EVENT", "PROC", "STREAM", "CHUNK", "END",
		"MODULE", "SYMBOLS", "MODGONE", "HIST",
	};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown";
}

/* The streams by (idx, gen): a flight recorder's file may hold a stream
 * per thread its buffer kept, a hundred thousand and more. */
static size_t shash_at(uint32_t idx, uint32_t gen, size_t cap)
{
	return (size_t)((((uint64_t)idx << 32 | gen) * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static int shash_build(struct trail_reader *r, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	free(r->shash);
	r->shash = h;
	r->shash_cap = cap;
	for (size_t i = 0; i < r->nstreams; i++) {
		size_t k = shash_at(r->streams[i]->idx, r->streams[i]->gen, cap);

		while (h[k])
			k = (k + 1) & (cap - 1);
		h[k] = (uint32_t)i + 1;
	}
	return 0;
}

/* Stream (idx, gen), made if new; *pos: its place in r->streams. */
static struct trail_rstream *stream_get(struct trail_reader *r, uint32_t idx,
					uint32_t gen, size_t *pos)
{
	struct trail_rstream *st;
	size_t k;

	if ((r->nstreams + 1) * 2 > r->shash_cap) {
		size_t cap = r->shash_cap ? r->shash_cap : 64;

		while (cap < (r->nstreams + 1) * 2)
			cap *= 2;
		if (shash_build(r, cap))
			return NULL;
	}
	for (k = shash_at(idx, gen, r->shash_cap); r->shash[k]; k = (k + 1) & (r->shash_cap - 1)) {
		st = r->streams[r->shash[k] - 1];
		if (st->idx == idx && st->gen == gen) {
			*pos = r->shash[k] - 1;
			return st;
		}
	}
	if (r->nstreams >= UINT32_MAX - 1 ||
	    grow((void **)&r->streams, &r->streams_cap, r->nstreams + 1, sizeof(*r->streams)))
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->idx = idx;
	st->gen = gen;
	*pos = r->nstreams;
	r->shash[k] = (uint32_t)r->nstreams + 1;
	r->streams[r->nstreams++] = st;
	return st;
}

static int sec_clock(struct trail_reader *r, const uint8_t *p, uint64_t len)
{
	struct trail_sec_clock c;

	if (len < sizeof(c))
		return -1;
	memcpy(&c, p, sizeof(c));
	if (c.clock != r->hdr.clock || c.shift > 63 ||
	    (uint64_t)c.nsync * sizeof(struct trail_clock_sync) != len - sizeof(c))
		return -1;
	r->mult = c.mult;
	r->shift = c.shift;
	if (!c.nsync)
		return 0;
	if (grow((void **)&r->syncs, &r->syncs_cap, r->nsyncs + c.nsync,
		 sizeof(*r->syncs)))
		return -1;
	memcpy(r->syncs + r->nsyncs, p + sizeof(c), c.nsync * sizeof(*r->syncs));
	r->nsyncs += c.nsync;
	return 0;
}

/* a probe event's payload (src/common/fetch.h): 1 an entry probe
 * (__probe_ip first), 2 a return probe (__probe_func, __probe_ret_ip), 3
 * an eprobe that may fault (__probe_fault first), 0 none of these */
static int probe_kind(const struct trail_meta *m)
{
	if (!m->nfields || m->fields[0].kind != TRAIL_FK_INT || m->fields[0].size != 8)
		return 0;
	if (!strcmp(m->fields[0].name, "__probe_ip"))
		return 1;
	if (m->nfields > 1 && !strcmp(m->fields[0].name, "__probe_func") &&
	    !strcmp(m->fields[1].name, "__probe_ret_ip"))
		return 2;
	return !strcmp(m->fields[0].name, "__probe_fault") ? 3 : 0;
}

static int sec_event(struct trail_reader *r, const uint8_t *p, uint64_t len,
		     const char **why)
{
	struct trail_sec_event se;
	struct trail_revent *ev;

	*why = "too short";
	if (len < sizeof(se))
		return -1;
	memcpy(&se, p, sizeof(se));
	*why = "event id out of range";
	if (se.id >= (1u << 22))
		return -1;
	if (se.id >= r->nevents_cap) {
		uint32_t cap = r->nevents_cap ? r->nevents_cap : 64;
		void *np;

		while (cap <= se.id)
			cap *= 2;
		np = realloc(r->events, cap * sizeof(*r->events));
		if (!np)
			return -1;
		r->events = np;
		memset(r->events + r->nevents_cap, 0,
		       (cap - r->nevents_cap) * sizeof(*r->events));
		r->nevents_cap = cap;
	}
	if (r->events[se.id])
		return 0; /* the first definition stands */
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -1;
	ev->id = se.id;
	if (trail__meta_parse(p + sizeof(se), len - sizeof(se), &ev->meta, why)) {
		free(ev);
		return -1;
	}
	ev->probe = (uint8_t)probe_kind(&ev->meta);
	r->events[se.id] = ev;
	return 0;
}

static int sec_proc(struct trail_reader *r, const uint8_t *p, uint64_t len)
{
	struct trail_sec_proc sp;
	struct trail_rproc *pr = NULL;
	const char *exe = (const char *)p + sizeof(sp);

	if (len < sizeof(sp) + 1 || p[len - 1] != '\0')
		return -1;
	memcpy(&sp, p, sizeof(sp));
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == sp.pid)
			pr = &r->procs[i]; /* a later section updates it */
	if (!pr) {
		if (grow((void **)&r->procs, &r->procs_cap, r->nprocs + 1,
			 sizeof(*r->procs)))
			return -1;
		pr = &r->procs[r->nprocs++];
		memset(pr, 0, sizeof(*pr)); /* exe: NULL until a path is given */
	}
	pr->pid = sp.pid;
	pr->ppid = sp.ppid;
	pr->how = sp.how;
	pr->state = sp.state;
	pr->exited = sp.exited;
	pr->result = sp.result;
	memcpy(pr->comm, sp.comm, 16);
	pr->comm[15] = '\0';
	if (*exe || !pr->exe)
		pr->exe = exe;
	return 0;
}

static int sec_stream(struct trail_reader *r, const uint8_t *p, uint64_t len)
{
	struct trail_sec_stream ss;
	struct trail_rstream *st;
	size_t pos;

	if (len < sizeof(ss))
		return -1;
	memcpy(&ss, p, sizeof(ss));
	st = stream_get(r, ss.idx, ss.gen, &pos);
	if (!st)
		return -1;
	st->pid = ss.pid;
	st->tid = ss.tid;
	st->level = ss.level;
	st->dropped = ss.dropped;
	st->overwritten = ss.overwritten;
	st->final = ss.final;
	memcpy(st->comm, ss.comm, 16);
	st->comm[15] = '\0';
	return 0;
}

static int sec_chunk(struct trail_reader *r, uint64_t off, const uint8_t *p,
		     uint64_t len, const char **why)
{
	struct trail_sec_chunk sc;
	struct trail_chunk_hdr h;
	struct trail_rstream *st;
	struct rchunk *c;
	size_t pos;

	*why = "too short for a chunk header";
	if (len < sizeof(sc) + sizeof(h))
		return -1;
	memcpy(&sc, p, sizeof(sc));
	memcpy(&h, p + sizeof(sc), sizeof(h));
	*why = "chunk length disagrees with its commit word";
	if (TRAIL_COMMIT_BYTES(h.commit) != len - sizeof(sc) - sizeof(h))
		return -1;
	*why = "chunk claims more events than it can hold";
	if (TRAIL_COMMIT_EVENTS(h.commit) > TRAIL_COMMIT_BYTES(h.commit) / 4)
		return -1;
	*why = "out of memory";
	st = stream_get(r, h.stream, h.stream_gen, &pos);
	if (!st)
		return -1;
	if (!st->pid) { /* until a STREAM section says better */
		st->pid = h.pid;
		st->tid = h.tid;
		st->level = h.level;
	}
	memcpy(st->comm, h.comm, 16); /* the newest name wins */
	st->comm[15] = '\0';
	if (grow((void **)&r->chunks, &r->chunks_cap, r->nchunks + 1,
		 sizeof(*r->chunks)))
		return -1;
	c = &r->chunks[r->nchunks++];
	c->off = off + sizeof(sc);
	c->bytes = TRAIL_COMMIT_BYTES(h.commit);
	c->events = TRAIL_COMMIT_EVENTS(h.commit);
	c->seq = h.seq;
	c->flags = sc.flags;
	r->chunk_events += c->events;
	c->stream = (uint32_t)pos;
	return 0;
}

static int sec_module(struct trail_reader *r, const uint8_t *p, uint64_t len)
{
	struct trail_sec_module sm;

	if (len < sizeof(sm) + 1 || p[len - 1] != '\0')
		return -1;
	memcpy(&sm, p, sizeof(sm));
	if (grow((void **)&r->mods, &r->mods_cap, r->nmods + 1, sizeof(*r->mods)))
		return -1;
	r->mods[r->nmods++] = (struct rmodule){sm.pid, sm.symbols, sm.base, sm.lo, sm.hi, UINT64_MAX,
					       (const char *)p + sizeof(sm)};
	return 0;
}

static int sec_hist(struct trail_reader *r, const uint8_t *p, uint64_t len, const char **why)
{
	struct trail_sec_hist h;
	uint64_t texts, ew;
	const char *t;

	*why = "too short";
	if (len < sizeof(h))
		return -1;
	memcpy(&h, p, sizeof(h));
	texts = (uint64_t)h.event_len + h.name_len + h.text_len;
	ew = (uint64_t)h.kwords + 1 + h.nvals + h.nextra;
	*why = "bad dimensions";
	if (!h.kwords || h.kwords > 1024 || h.nvals > TRAIL_RHIST_MAX_VALS || !h.event_len ||
	    !h.name_len || !h.text_len)
		return -1;
	*why = "its parts run past it";
	if (sizeof(h) + ((texts + 7) & ~7ull) + ((uint64_t)h.entries * ew + h.naux) * 8 != len)
		return -1;
	t = (const char *)p + sizeof(h);
	*why = "unterminated text";
	if (t[h.event_len - 1] || t[h.event_len + h.name_len - 1] || t[texts - 1])
		return -1;
	if (grow((void **)&r->hists, &r->hists_cap, r->nhists + 1, sizeof(*r->hists)))
		return -1;
	r->hists[r->nhists++] = (struct trail_rhist){
		.event = t,
		.name = t + h.event_len,
		.text = t + h.event_len + h.name_len,
		.kwords = h.kwords,
		.nvals = h.nvals,
		.nextra = h.nextra,
		.naux = h.naux,
		.entries = h.entries,
		.hits = h.hits,
		.dropped = h.dropped,
		.data = p + sizeof(h) + ((texts + 7) & ~7ull),
	};
	return 0;
}

static int sec_modgone(struct trail_reader *r, const uint8_t *p, uint64_t len)
{
	struct trail_sec_modgone g;

	if (len < sizeof(g))
		return -1;
	memcpy(&g, p, sizeof(g));
	/* objects at one place come and go in turn: the oldest still there */
	for (size_t m = 0; m < r->nmods; m++) {
		struct rmodule *mod = &r->mods[m];

		if (mod->pid == g.pid && mod->base == g.base && mod->lo == g.lo &&
		    mod->hi == g.hi && mod->gone == UINT64_MAX) {
			mod->gone = g.gone;
			return 0;
		}
	}
	return 0; /* its module is not in the file (a failed write): nothing to end */
}

static int sec_symbols(struct trail_reader *r, const uint8_t *p, uint64_t len,
		       const char **why)
{
	struct trail_sec_symbols ss;
	struct rsymbols *t;
	struct trail_sym *v;

	*why = "too short";
	if (len < sizeof(ss))
		return -1;
	memcpy(&ss, p, sizeof(ss));
	*why = "symbol table sizes disagree with the section";
	if ((uint64_t)ss.nsyms * sizeof(struct trail_sym) > len - sizeof(ss) ||
	    ss.names_len != len - sizeof(ss) - (uint64_t)ss.nsyms * sizeof(struct trail_sym) ||
	    (ss.names_len && p[len - 1] != '\0'))
		return -1;
	v = malloc(ss.nsyms ? (size_t)ss.nsyms * sizeof(*v) : 1);
	*why = "out of memory";
	if (!v)
		return -1;
	memcpy(v, p + sizeof(ss), (size_t)ss.nsyms * sizeof(*v));
	*why = "symbol out of order or name out of bounds";
	for (uint32_t i = 0; i < ss.nsyms; i++)
		if (v[i].name >= ss.names_len || (i && v[i].addr < v[i - 1].addr)) {
			free(v);
			return -1;
		}
	if (grow((void **)&r->symtabs, &r->symtabs_cap, r->nsymtabs + 1, sizeof(*r->symtabs))) {
		free(v);
		return -1;
	}
	t = &r->symtabs[r->nsymtabs++];
	t->id = ss.id;
	t->n = ss.nsyms;
	t->syms = v;
	t->names = (const char *)(p + sizeof(ss) + (uint64_t)ss.nsyms * sizeof(*v));
	t->names_len = ss.names_len;
	return 0;
}

/* Why the section header at off cannot be taken (NULL: it can). */
static const char *sec_check(const struct trail_reader *r, uint64_t off, struct trail_sec *s)
{
	const uint8_t *p;

	if (r->size - off < sizeof(*s))
		return "truncated section header";
	memcpy(s, r->map + off, sizeof(*s));
	if (r->hdr.major >= 2 && s->magic != TRAIL_SEC_MAGIC)
		return "no section header here (bad magic)";
	if (r->hdr.major < 2 && s->magic)
		return "bad section type";
	if (s->len > TRAIL_SEC_MAX_LEN)
		return "section length is implausible";
	if (s->len > r->size - off - sizeof(*s))
		return "runs past the end of the file";
	p = r->map + off + sizeof(*s);
	if (r->hdr.major >= 2 ? trail__sec_crc(s, p, (size_t)s->len, NULL, 0) != s->crc
			      : trail__crc32c(0, p, (size_t)s->len) != s->crc)
		return "checksum mismatch: data corrupt";
	return NULL;
}

/*
 * After a damaged section header: the next place a whole, valid section
 * starts, or 0. First where the damaged one says its successor is (the
 * damage was in its payload or checksum), then the first magic that frames
 * a section with a good checksum. Holes of a sparse file are stepped over
 * without reading them: a section cannot start in one (its type byte is
 * not zero).
 */
static uint64_t resync(const struct trail_reader *r, uint64_t off, const struct trail_sec *bad)
{
	static const uint8_t magic[2] = {TRAIL_SEC_MAGIC & 0xff, TRAIL_SEC_MAGIC >> 8};
	struct trail_sec s;
	uint64_t p = off + 1;

	if (r->hdr.major < 2)
		return 0; /* no magic to find sections by */
	if (bad->magic == TRAIL_SEC_MAGIC && bad->len <= r->size - off - sizeof(s)) {
		uint64_t next = off + sizeof(s) + bad->len;

		if (next < r->size && !sec_check(r, next, &s))
			return next;
	}
	while (p + sizeof(s) <= r->size) {
		uint64_t end = r->size; /* of the data region holding p */

		if (r->fd >= 0) {
			off_t d = lseek(r->fd, (off_t)p, SEEK_DATA), h;

			if (d < 0)
				return 0; /* ENXIO: only a hole is left */
			if ((uint64_t)d > p)
				p = (uint64_t)d;
			h = lseek(r->fd, (off_t)p, SEEK_HOLE);
			if (h > (off_t)p && (uint64_t)h < end)
				end = (uint64_t)h;
		}
		/* headers whose magic (their bytes 2..3) lies in [p + 2, end):
		 * a hole is zeros, so no magic straddles its edge */
		while (p + sizeof(s) <= r->size && end > p + 3) {
			const uint8_t *m = memmem(r->map + p + 2, end - p - 2, magic, 2);

			if (!m)
				break;
			p = (uint64_t)(m - r->map) - 2;
			if (r->map[p] && !r->map[p + 1] && !sec_check(r, p, &s))
				return p;
			p++;
		}
		if (end >= r->size)
			return 0;
		p = end;
	}
	return 0;
}

static void sec_end(struct trail_reader *r, uint64_t off, const uint8_t *p, uint64_t len,
		    int *bad)
{
	struct trail_sec_end e;

	/* sections only grow at the end: take what is there */
	if (len < offsetof(struct trail_sec_end, pad)) {
		*bad = 1;
		return;
	}
	memset(&e, 0, sizeof(e));
	memcpy(&e, p, len < sizeof(e) ? (size_t)len : sizeof(e));
	r->complete = e.complete == 1;
	r->nostream_lost = e.nostream_lost;
	r->graph_unhooked = e.graph_unhooked;
	r->gone_streams = e.gone_streams;
	r->gone_lost = e.gone_dropped + e.gone_overwritten;
	/* what the recorder wrote against what was read: any difference is
	 * data lost to damage (sections skipped above) */
	if (e.chunks != r->chunk_secs || e.events != r->chunk_events) {
		if (e.events > r->chunk_events)
			r->damaged_events = e.events - r->chunk_events;
		damage(r, "offset %llu: the END section counts %llu events in %llu chunks, "
		       "the file holds %llu in %llu: %llu events lost to damage",
		       (unsigned long long)off, (unsigned long long)e.events,
		       (unsigned long long)e.chunks, (unsigned long long)r->chunk_events,
		       (unsigned long long)r->chunk_secs,
		       (unsigned long long)r->damaged_events);
	}
}

/*
 * Memory: the file is mapped whole, but a view of a file larger than RAM
 * must not keep it resident. Pages read are given back (MADV_DONTNEED on
 * a read-only private mapping drops them; touched again, they are read
 * from the file again): behind the opening scan every RELEASE_STEP bytes,
 * and each chunk when its records are all read. Correctness never depends
 * on it; only pages shared with a neighbour may be read twice.
 */
#define RELEASE_STEP (32ull << 20)

static void release(const struct trail_reader *r, uint64_t off, uint64_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = (off + page - 1) & ~(page - 1), hi = (off + len) & ~(page - 1);

	if (hi > lo && hi <= r->size)
		madvise((void *)(uintptr_t)(r->map + lo), hi - lo, MADV_DONTNEED);
}

static void scan(struct trail_reader *r)
{
	uint64_t off = sizeof(struct trail_file_hdr), released = 0;

	while (off < r->size) {
		struct trail_sec s;
		const uint8_t *p;
		const char *why = NULL;
		int bad = 0;

		why = sec_check(r, off, &s);
		if (why) {
			uint64_t next = resync(r, off, &s);

			if (next) {
				damage(r, "offset %llu: damaged section: %s; %llu bytes skipped, "
				       "reading resumes at offset %llu",
				       (unsigned long long)off, why,
				       (unsigned long long)(next - off), (unsigned long long)next);
				off = next;
				continue;
			}
			if (r->size - off < sizeof(s))
				damage(r, "offset %llu: truncated section header (%llu bytes left, "
				       "16 needed)", (unsigned long long)off,
				       (unsigned long long)(r->size - off));
			else if (s.len > r->size - off - sizeof(s) && s.len <= TRAIL_SEC_MAX_LEN &&
				 (r->hdr.major < 2 || s.magic == TRAIL_SEC_MAGIC))
				damage(r, "offset %llu: %s section of %llu bytes runs past the end "
				       "of the file (%llu bytes left): file truncated",
				       (unsigned long long)off, sec_name(s.type),
				       (unsigned long long)s.len,
				       (unsigned long long)(r->size - off - sizeof(s)));
			else
				damage(r, "offset %llu: damaged section: %s; no readable section "
				       "in the %llu bytes from there to the end",
				       (unsigned long long)off, why,
				       (unsigned long long)(r->size - off));
			return;
		}
		p = r->map + off + sizeof(s);
		switch (s.type) {
		case TRAIL_SEC_INFO:
			if (!r->info)
				r->info = strndup((const char *)p, (size_t)s.len);
			break;
		case TRAIL_SEC_CLOCK:
			bad = sec_clock(r, p, s.len);
			break;
		case TRAIL_SEC_EVENT:
			bad = sec_event(r, p, s.len, &why);
			break;
		case TRAIL_SEC_PROC:
			bad = sec_proc(r, p, s.len);
			break;
		case TRAIL_SEC_STREAM:
			bad = sec_stream(r, p, s.len);
			break;
		case TRAIL_SEC_CHUNK:
			r->chunk_secs++;
			bad = sec_chunk(r, off + sizeof(s), p, s.len, &why);
			break;
		case TRAIL_SEC_MODULE:
			bad = sec_module(r, p, s.len);
			break;
		case TRAIL_SEC_SYMBOLS:
			bad = sec_symbols(r, p, s.len, &why);
			break;
		case TRAIL_SEC_MODGONE:
			bad = sec_modgone(r, p, s.len);
			break;
		case TRAIL_SEC_HIST:
			bad = sec_hist(r, p, s.len, &why);
			break;
		case TRAIL_SEC_END:
			sec_end(r, off, p, s.len, &bad);
			break;
		default:
			break; /* from a newer writer: skip */
		}
		if (bad)
			damage(r, "offset %llu: malformed %s section%s%s: skipped",
			       (unsigned long long)off, sec_name(s.type), why ? ": " : "",
			       why ? why : "");
		off += sizeof(s) + s.len;
		if (off - released >= RELEASE_STEP) {
			release(r, released, off - released);
			released = off;
		}
		if (s.type == TRAIL_SEC_END && !bad) {
			/* the recorder writes nothing after END */
			if (off < r->size)
				damage(r, "offset %llu: %llu bytes after the END section, which "
				       "ends the file: not part of the recording",
				       (unsigned long long)off, (unsigned long long)(r->size - off));
			return;
		}
	}
}

/* ------------------------------------------------------------------ time */

static int cmp_sync(const void *a, const void *b)
{
	const struct trail_clock_sync *x = a, *y = b;

	return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

static void prepare_clock(struct trail_reader *r)
{
	size_t n = 0;

	if (r->nsyncs)
		qsort(r->syncs, r->nsyncs, sizeof(*r->syncs), cmp_sync);
	/* keep a strictly increasing sequence in both coordinates */
	for (size_t i = 0; i < r->nsyncs; i++)
		if (!n || (r->syncs[i].ticks > r->syncs[n - 1].ticks &&
			   r->syncs[i].mono_ns > r->syncs[n - 1].mono_ns))
			r->syncs[n++] = r->syncs[i];
	r->nsyncs = n;
	if (!r->mult)
		r->mult = 1;
	/* spans: the slope over the whole recording (sync points drift by
	 * parts per million: nothing on a span of seconds) */
	if (n >= 2)
		r->span_mult = (uint64_t)(((unsigned __int128)(r->syncs[n - 1].mono_ns -
							      r->syncs[0].mono_ns) << 32) /
					  (r->syncs[n - 1].ticks - r->syncs[0].ticks));
	else
		r->span_mult = (uint64_t)(((unsigned __int128)r->mult << 32) >> r->shift);
}

int trail_reader_wallclock(const struct trail_reader *r, uint64_t *offset_ns)
{
	/* the recorder takes its first sync right after the realtime stamp
	 * of the header: the earliest sync is that moment, within a few µs */
	if (!r->nsyncs || r->hdr.created_ns <= r->syncs[0].mono_ns)
		return 0;
	*offset_ns = r->hdr.created_ns - r->syncs[0].mono_ns;
	return 1;
}

uint64_t trail_reader_span_ns(const struct trail_reader *r, uint64_t ticks)
{
	if (r->hdr.clock == TRAIL_CLOCK_MONO)
		return ticks;
	return (uint64_t)(((unsigned __int128)ticks * r->span_mult + (1ull << 31)) >> 32);
}

/* Outside the sync points: the slope of the nearest two when there are
 * two (it includes NTP's correction of CLOCK_MONOTONIC), else the kernel's
 * TSC calibration. */
static uint64_t extrapolate(const struct trail_reader *r, size_t i, uint64_t t)
{
	const struct trail_clock_sync *s = &r->syncs[i];
	unsigned __int128 d = t >= s->ticks ? t - s->ticks : s->ticks - t;
	uint64_t ns;

	if (r->nsyncs >= 2) {
		const struct trail_clock_sync *a = &r->syncs[i ? i - 1 : 0];
		const struct trail_clock_sync *b = &r->syncs[i ? i : 1];

		ns = (uint64_t)(d * (b->mono_ns - a->mono_ns) / (b->ticks - a->ticks));
	} else {
		ns = (uint64_t)((d * r->mult) >> r->shift);
	}
	if (t >= s->ticks)
		return s->mono_ns + ns;
	return ns > s->mono_ns ? 0 : s->mono_ns - ns;
}

uint64_t trail_reader_to_ns(const struct trail_reader *r, uint64_t t)
{
	size_t lo = 0, hi;

	if (r->hdr.clock == TRAIL_CLOCK_MONO)
		return t;
	if (!r->nsyncs)
		return (uint64_t)(((unsigned __int128)t * r->mult) >> r->shift);
	if (t <= r->syncs[0].ticks || r->nsyncs == 1)
		return extrapolate(r, 0, t);
	hi = r->nsyncs - 1;
	if (t >= r->syncs[hi].ticks)
		return extrapolate(r, hi, t);
	while (hi - lo > 1) { /* syncs[lo].ticks < t < syncs[hi].ticks */
		size_t mid = (lo + hi) / 2;

		if (r->syncs[mid].ticks <= t)
			lo = mid;
		else
			hi = mid;
	}
	return r->syncs[lo].mono_ns +
	       (uint64_t)((unsigned __int128)(t - r->syncs[lo].ticks) *
			  (r->syncs[hi].mono_ns - r->syncs[lo].mono_ns) /
			  (r->syncs[hi].ticks - r->syncs[lo].ticks));
}

/* -------------------------------------------------------------- cursors */

static struct trail_reader *sort_ctx;

static int cmp_chunk(const void *a, const void *b)
{
	const struct rchunk *x = &sort_ctx->chunks[*(const uint32_t *)a];
	const struct rchunk *y = &sort_ctx->chunks[*(const uint32_t *)b];

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->bytes > y->bytes ? -1 : x->bytes < y->bytes; /* fullest first */
}

static int cmp_stream(const void *a, const void *b)
{
	const struct trail_rstream *x = *(struct trail_rstream *const *)a;
	const struct trail_rstream *y = *(struct trail_rstream *const *)b;

	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int build_cursors(struct trail_reader *r)
{
	size_t *count = calloc(r->nstreams + 1, sizeof(*count));
	uint32_t *remap = calloc(r->nstreams + 1, sizeof(*remap));

	if (!count || !remap) {
		free(count);
		free(remap);
		return -ENOMEM;
	}
	/* streams in slot order (the order threads first recorded), chunks
	 * renumbered to match */
	for (size_t s = 0; s < r->nstreams; s++)
		r->streams[s]->order = (uint32_t)s;
	if (r->nstreams)
		qsort(r->streams, r->nstreams, sizeof(*r->streams), cmp_stream);
	r->shash_cap = 0; /* (positions moved: built again if ever needed) */
	for (size_t s = 0; s < r->nstreams; s++)
		remap[r->streams[s]->order] = (uint32_t)s;
	for (size_t i = 0; i < r->nchunks; i++)
		if (r->chunks[i].stream < r->nstreams)
			r->chunks[i].stream = remap[r->chunks[i].stream];
	free(remap);
	r->cur = calloc(r->nstreams ? r->nstreams : 1, sizeof(*r->cur));
	r->heap = calloc(r->nstreams ? r->nstreams : 1, sizeof(*r->heap));
	if (!r->cur || !r->heap) {
		free(count);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->nchunks; i++)
		if (r->chunks[i].stream < r->nstreams)
			count[r->chunks[i].stream]++;
	for (size_t s = 0; s < r->nstreams; s++) {
		struct cursor *c = &r->cur[s];

		c->st = r->streams[s];
		c->st->order = (uint32_t)s;
		c->chunks = calloc(count[s] ? count[s] : 1, sizeof(*c->chunks));
		if (!c->chunks) {
			free(count);
			return -ENOMEM;
		}
		c->cpu = ~0u;
	}
	for (size_t i = 0; i < r->nchunks; i++) {
		struct rchunk *ch = &r->chunks[i];

		if (ch->stream < r->nstreams) {
			struct cursor *c = &r->cur[ch->stream];
			c->chunks[c->nchunks++] = (uint32_t)i;
		}
	}
	sort_ctx = r;
	for (size_t s = 0; s < r->nstreams; s++) {
		struct cursor *c = &r->cur[s];
		uint32_t k = 0;

		qsort(c->chunks, c->nchunks, sizeof(*c->chunks), cmp_chunk);
		/* the same chunk may have been saved twice (salvaged, then
		 * published): keep the fullest copy */
		for (uint32_t i = 0; i < c->nchunks; i++)
			if (!k || r->chunks[c->chunks[i]].seq != r->chunks[c->chunks[k - 1]].seq)
				c->chunks[k++] = c->chunks[i];
		c->nchunks = k;
		for (uint32_t i = 0; i < k; i++)
			c->st->in_file += r->chunks[c->chunks[i]].events;
	}
	free(count);
	return 0;
}

/* A bad record ends its stream (the records after it cannot be framed);
 * a count mismatch is only reported. */
static void stream_damage(struct trail_reader *r, struct cursor *c, uint64_t off,
			  const char *what)
{
	int fatal = strncmp(what, "header says", 11) != 0;

	damage(r, "offset %llu: stream %u (%s-%u) chunk %llu: %s%s",
	       (unsigned long long)off, c->st->order, c->st->comm, c->st->tid,
	       (unsigned long long)r->chunks[c->chunks[c->ci]].seq, what,
	       fatal ? "; the rest of this stream is unreadable" : "");
}

/* The pending record becomes "n events lost here". */
static void lost_record(struct cursor *c, uint64_t n, uint64_t off)
{
	c->lost_marked += n;
	c->rec.type = TRAIL_RT_LOST;
	c->rec.lost = n;
	c->rec.ts_raw = c->ts;
	c->rec.cpu = c->cpu;
	c->rec.stream = c->st;
	c->rec.event = NULL;
	c->rec.payload = NULL;
	c->rec.len = 0;
	c->rec.file_off = off;
}

static int open_chunk(struct trail_reader *r, struct cursor *c)
{
	const struct rchunk *ch = &r->chunks[c->chunks[c->ci]];
	struct trail_chunk_hdr h;

	memcpy(&h, r->map + ch->off, sizeof(h));
	c->data = r->map + ch->off + sizeof(h);
	c->data_off = ch->off + sizeof(h);
	c->pos = 0;
	c->bytes = ch->bytes;
	c->events = ch->events;
	c->seen = 0;
	if (!c->started || h.base_ts > c->ts) /* a stream never goes back */
		c->ts = h.base_ts;
	/* discard mode: chunks are numbered from 0 and never reclaimed, so a
	 * gap (also before the first one) is chunks lost on the way */
	if (!(r->hdr.flags & TRAIL_ARENA_OVERWRITE)) {
		uint64_t want = c->started ? c->prev_seq + 1 : 0;

		if (ch->seq > want) {
			c->st->missing_chunks += ch->seq - want;
			damage(r, "stream %u (%s-%u): chunks %llu..%llu are missing from the file",
			       c->st->order, c->st->comm, c->st->tid,
			       (unsigned long long)want, (unsigned long long)ch->seq - 1);
		}
	}
	c->started = 1;
	c->prev_seq = ch->seq;
	if (h.lost_before) {
		lost_record(c, h.lost_before, ch->off);
		return 1;
	}
	return 0;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Decode the next record of a stream into c->rec. 1: have one, 0: done. */
static int cursor_fill(struct trail_reader *r, struct cursor *c)
{
	for (;;) {
		uint32_t h, type, id;
		uint64_t roff;
		const struct trail_revent *ev;
		size_t plen;

		if (c->dead)
			return 0;
		if (!c->data || c->pos >= c->bytes) {
			if (c->data && c->seen != c->events) {
				char what[96];
				snprintf(what, sizeof(what), "header says %u events, %u found",
					 c->events, c->seen);
				stream_damage(r, c, c->data_off, what);
			}
			if (c->data) {
				const struct rchunk *ch = &r->chunks[c->chunks[c->ci]];

				release(r, ch->off, sizeof(struct trail_chunk_hdr) + ch->bytes);
				c->ci++;
			}
			if (c->ci >= c->nchunks) {
				c->data = NULL;
				/* drops after the stream's last chunk: shown at its end */
				if (!c->tail_lost_done && c->started && c->st->final &&
				    c->st->dropped > c->lost_marked) {
					c->tail_lost_done = 1;
					lost_record(c, c->st->dropped - c->lost_marked, 0);
					return 1;
				}
				return 0;
			}
			if (open_chunk(r, c))
				return 1;
			continue;
		}
		roff = c->data_off + c->pos;
		if (c->bytes - c->pos < 4) {
			stream_damage(r, c, roff, "record header cut short");
			c->dead = 1;
			return 0;
		}
		h = get32(c->data + c->pos);
		type = h & TRAIL_REC_TYPE_MASK;
		c->ts += h >> TRAIL_REC_TYPE_BITS;
		if (type == TRAIL_REC_TIME) {
			uint64_t t;

			if (c->bytes - c->pos < 12) {
				stream_damage(r, c, roff, "time record cut short");
				c->dead = 1;
				return 0;
			}
			memcpy(&t, c->data + c->pos + 4, 8);
			if (t > c->ts)
				c->ts = t;
			c->pos += 12;
			continue;
		}
		if (type == TRAIL_REC_CPU) {
			if (c->bytes - c->pos < 8) {
				stream_damage(r, c, roff, "cpu record cut short");
				c->dead = 1;
				return 0;
			}
			c->cpu = get32(c->data + c->pos + 4);
			c->pos += 8;
			continue;
		}
		if (type == TRAIL_REC_LONGID) {
			if (c->bytes - c->pos < 8) {
				stream_damage(r, c, roff, "event record cut short");
				c->dead = 1;
				return 0;
			}
			id = get32(c->data + c->pos + 4);
			c->pos += 8;
		} else if (type >= TRAIL_REC_FIRST_EVENT) {
			id = type - TRAIL_REC_FIRST_EVENT;
			c->pos += 4;
		} else {
			char what[64];
			snprintf(what, sizeof(what), "unknown record type %u", type);
			stream_damage(r, c, roff, what);
			c->dead = 1;
			return 0;
		}
		ev = id < r->nevents_cap ? r->events[id] : NULL;
		if (!ev) {
			char what[64];
			snprintf(what, sizeof(what), "record of undescribed event id %u", id);
			stream_damage(r, c, roff, what);
			c->dead = 1;
			return 0;
		}
		if (trail__payload_len(&ev->meta, c->data + c->pos, c->bytes - c->pos, &plen)) {
			stream_damage(r, c, roff, "event payload runs past the end of its chunk");
			c->dead = 1;
			return 0;
		}
		c->rec.type = TRAIL_RT_EVENT;
		c->rec.ts_raw = c->ts;
		c->rec.cpu = c->cpu;
		c->rec.stream = c->st;
		c->rec.event = ev;
		c->rec.payload = c->data + c->pos;
		c->rec.len = (uint32_t)plen;
		c->rec.lost = 0;
		c->rec.file_off = roff;
		c->pos += (uint32_t)plen;
		c->seen++;
		return 1;
	}
}

/* min-heap on (ts_raw, stream order) */
static int before(const struct cursor *a, const struct cursor *b)
{
	if (a->rec.ts_raw != b->rec.ts_raw)
		return a->rec.ts_raw < b->rec.ts_raw;
	return a->st->order < b->st->order;
}

static void sift_down(struct trail_reader *r, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct cursor *t;

		if (l < r->nheap && before(r->heap[l], r->heap[m]))
			m = l;
		if (l + 1 < r->nheap && before(r->heap[l + 1], r->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = r->heap[i];
		r->heap[i] = r->heap[m];
		r->heap[m] = t;
		i = m;
	}
}

static void start_merge(struct trail_reader *r)
{
	r->merged = 1;
	for (size_t s = 0; s < r->nstreams; s++)
		if (cursor_fill(r, &r->cur[s]))
			r->heap[r->nheap++] = &r->cur[s];
	for (size_t i = r->nheap / 2 + 1; i-- > 0;)
		sift_down(r, i);
}

int trail_reader_next(struct trail_reader *r, struct trail_record *rec)
{
	struct cursor *c;

	if (!r->merged)
		start_merge(r);
	if (!r->nheap)
		return 0;
	c = r->heap[0];
	*rec = c->rec;
	if (!c->ns_known)
		rec->ts_ns = trail_reader_to_ns(r, rec->ts_raw);
	c->ns_known = 0;
	if (cursor_fill(r, c)) {
		sift_down(r, 0);
	} else {
		r->heap[0] = r->heap[--r->nheap];
		sift_down(r, 0);
	}
	return 1;
}

/* ------------------------------------------------------------- open/close */

int trail_reader_open(const char *path, struct trail_reader **out, char *err,
		      size_t errlen)
{
	struct trail_reader *r;
	struct stat st;
	int fd, e;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if ((size_t)st.st_size < sizeof(struct trail_file_hdr)) {
		close(fd);
		snprintf(err, errlen, "%s: %lld bytes: too short for a trail file "
			 "(the 64-byte header is incomplete)", path, (long long)st.st_size);
		return -EPROTO;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->size = (size_t)st.st_size;
	r->map = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
	r->fd = fd;
	if (r->map == MAP_FAILED) {
		e = -errno;
		snprintf(err, errlen, "%s: cannot map: %s", path, strerror(errno));
		close(fd);
		free(r);
		return e;
	}
	memcpy(&r->hdr, r->map, sizeof(r->hdr));
	if (memcmp(r->hdr.magic, TRAIL_FILE_MAGIC, 8)) {
		snprintf(err, errlen, "%s: not a trail trace file (bad magic at offset 0)", path);
		e = -EPROTO;
		goto fail;
	}
	if (r->hdr.hdr_crc != trail__crc32c(0, &r->hdr, offsetof(struct trail_file_hdr, hdr_crc))) {
		snprintf(err, errlen, "%s: file header checksum mismatch at offset 0: header corrupt",
			 path);
		e = -EPROTO;
		goto fail;
	}
	if (r->hdr.major < 1 || r->hdr.major > TRAIL_FILE_MAJOR || r->hdr.hdr_size != sizeof(r->hdr) ||
	    r->hdr.endian != 1) {
		snprintf(err, errlen, "%s: unsupported trace file version %u.%u", path,
			 r->hdr.major, r->hdr.minor);
		e = -EPROTO;
		goto fail;
	}
	if (r->hdr.clock != TRAIL_CLOCK_TSC && r->hdr.clock != TRAIL_CLOCK_MONO) {
		snprintf(err, errlen, "%s: unknown clock %u in the header", path, r->hdr.clock);
		e = -EPROTO;
		goto fail;
	}
	scan(r);
	prepare_clock(r);
	if (build_cursors(r)) {
		snprintf(err, errlen, "out of memory");
		e = -ENOMEM;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	trail_reader_close(r);
	return e;
}

void trail_reader_close(struct trail_reader *r)
{
	if (!r)
		return;
	if (r->map && r->map != MAP_FAILED)
		munmap((void *)r->map, r->size);
	if (r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->nerrs; i++)
		free(r->errs[i]);
	free(r->info);
	free(r->hists);
	free(r->syncs);
	for (uint32_t i = 0; i < r->nevents_cap; i++)
		free(r->events[i]);
	free(r->events);
	free(r->procs);
	if (r->cur)
		for (size_t s = 0; s < r->nstreams; s++)
			free(r->cur[s].chunks);
	for (size_t s = 0; s < r->nstreams; s++)
		free(r->streams[s]);
	free(r->streams);
	free(r->shash);
	free(r->chunks);
	free(r->mods);
	for (size_t i = 0; i < r->nsymtabs; i++)
		free(r->symtabs[i].syms);
	free(r->symtabs);
	free(r->cur);
	free(r->heap);
	free(r);
}

int trail_reader_peek(const struct trail_reader *r, const struct trail_rstream *st,
		      struct trail_record *rec)
{
	/* a stream's cursor is in the heap exactly while it has a record */
	for (size_t i = 0; i < r->nheap; i++)
		if (r->heap[i]->st == st) {
			struct cursor *c = r->heap[i];

			/* converted once: trail_reader_next() takes it as is */
			if (!c->ns_known) {
				c->rec.ts_ns = trail_reader_to_ns(r, c->rec.ts_raw);
				c->ns_known = 1;
			}
			*rec = c->rec;
			return 1;
		}
	return 0;
}
