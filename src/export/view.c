/* SPDX-License-Identifier: MIT */
/*
 * view.c - what every view of a trace file shows (output.h's struct
 * trail_view) and function_graph records paired into calls (struct
 * trail_call), between the reader's merge loop and an output.
 *
 * Each stream has a stack of open calls (frames) and a queue. A frame is
 * shown or not by the view's function and depth selection, decided at its
 * entry; a shown call whose duration decides (--graph-time-thresh) is
 * pending until it returns or has lasted the threshold, and everything of
 * its stream after it waits in the queue behind it, so a stream's order
 * is kept. The queue also finds leaves: a shown entry waits there until
 * the next thing shown in its stream, and becomes a LEAF if that is its
 * own return. With no selection the queue stays empty: leaves are found
 * by peeking at the stream's next record, so calls come out in time order.
 *
 * Memory: the stack follows the program's call depth; the queue holds
 * what happened in a stream within one threshold of a pending call's
 * start (nothing without --graph-time-thresh).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/counters.h"
#include "../common/filter.h"
#include "../common/synth.h"
#include "../common/spec.h"
#include "view.h"

enum { Q_ENTRY = 1, Q_EXIT, Q_LEAF, Q_EVENT };
enum { S_PEND = 0, S_KEEP, S_DROP };

struct qitem {
	int kind, state;
	struct trail_call c;
	struct trail_record rec; /* Q_EVENT; payload copied to buf */
	uint8_t *buf;
	size_t cap;
};

struct frame {
	uint64_t func, start_ns, child_ns, qseq;
	uint32_t cpu, depth, kids; /* kids: the depth its shown children get */
	int32_t up;                /* nearest shown frame below, or -1 */
	uint8_t shown, nostart, ingraph, queued, leafed, hasargs;
	const char *name;
	uint64_t args[6]; /* with hasargs */
	const struct trail_revent *ctr_ev; /* its counters' record, if one came */
	uint32_t nctr;
	uint64_t ctr[8], ctr_at[8];
};

struct vstream {
	int sel; /* shown at all */
	struct frame *f;
	size_t nf, capf;
	struct qitem *q; /* ring, capq a power of two */
	uint64_t head, tail;
	size_t capq;
	uint64_t last_ns, last_raw;
};

#define NAME_SLOTS 4096u

struct name_slot {
	uint64_t ip, until;
	uint32_t pid, used;
	const char *name;
};

struct trail_viewer {
	const struct trail_view *v;
	/* filters by event id: EF_* and the compiled filter */
	uint8_t *fsel;
	struct trail_filter **ff;
	uint32_t nfsel;
	struct trail_reader *r;
	struct trail_output *out;
	struct vstream *s;
	size_t ns;
	int funcsel;   /* any of -l -n -g */
	int filtering; /* anything that hides calls or needs the queue */
	uint64_t start_ns, end_ns; /* absolute, once the first record is read */
	int bounds_known, finished;
	uint64_t last_ns;
	struct name_slot *names;
	uint8_t *kinds; /* graph_kind() by event id, 0xff: not known yet */
	uint32_t nkinds;
};

enum { G_NONE, G_ENTRY, G_EXIT, G_EXIT_RET, G_LEAF, G_CALL, G_INHERITED, G_ENTRY_ARGS,
       G_COUNTERS };

static int graph_kind_of(const struct trail_meta *m)
{
	const char *n;

	/* record --counters: {func, N deltas, N counts at entry} before the
	 * call's exit */
	if (!strcmp(m->provider, TRAIL_SYNTH_PROVIDER) && !strcmp(m->name, TRAIL_CTR_CALL_EVENT))
		return m->nfields >= 3 && m->nfields % 2 && m->fixed_len == 8 * m->nfields &&
		       (m->nfields - 1) / 2 <= 8 ? G_COUNTERS : G_NONE;
	if (strcmp(m->provider, "ftrace") || strncmp(m->name, "funcgraph_", 10))
		return G_NONE;
	n = m->name + 10;
	if (!strcmp(n, "entry"))
		return G_ENTRY;
	if (!strcmp(n, "entry_args"))
		return G_ENTRY_ARGS;
	if (!strcmp(n, "exit"))
		return G_EXIT;
	if (!strcmp(n, "exit_ret"))
		return G_EXIT_RET;
	if (!strcmp(n, "leaf"))
		return G_LEAF;
	if (!strcmp(n, "call"))
		return G_CALL;
	if (!strcmp(n, "inherited"))
		return G_INHERITED;
	return G_NONE;
}

static int graph_kind(const struct trail_record *rec)
{
	return rec->type == TRAIL_RT_EVENT ? graph_kind_of(&rec->event->meta) : G_NONE;
}

int trail_export_is_graph(const struct trail_revent *ev)
{
	return graph_kind_of(&ev->meta) != G_NONE;
}

int trail_export_is_function(const struct trail_revent *ev)
{
	const struct trail_meta *m = &ev->meta;

	return !strcmp(m->provider, "ftrace") && !strcmp(m->name, "function") &&
	       m->nfields == 2 && m->fixed_len == 16;
}

int trail_export_function(const struct trail_record *rec, uint64_t *ip, uint64_t *parent)
{
	if (rec->type != TRAIL_RT_EVENT || rec->len < 16 || !trail_export_is_function(rec->event))
		return 0;
	memcpy(ip, rec->payload, 8);
	memcpy(parent, rec->payload + 8, 8);
	return 1;
}

/* graph_kind() once per event */
static int kind_of(struct trail_viewer *w, const struct trail_record *rec)
{
	uint32_t id;

	if (rec->type != TRAIL_RT_EVENT)
		return G_NONE;
	id = rec->event->id;
	if (id >= w->nkinds)
		return graph_kind(rec);
	if (w->kinds[id] == 0xff)
		w->kinds[id] = (uint8_t)graph_kind(rec);
	return w->kinds[id];
}

static uint64_t u64at(const struct trail_record *rec, unsigned i)
{
	uint64_t v = 0;

	if (rec->len >= (i + 1) * 8)
		memcpy(&v, rec->payload + i * 8, 8);
	return v;
}

const char *trail__view_symbol(struct trail_viewer *w, uint32_t pid, uint64_t ip, uint64_t ts_raw)
{
	uint64_t h = (ip ^ ((uint64_t)pid << 40)) * 0x9e3779b97f4a7c15ull;
	struct name_slot *s;

	if (!w->names) {
		w->names = calloc(NAME_SLOTS, sizeof(*w->names));
		if (!w->names)
			return trail_reader_symbol(w->r, pid, ip, ts_raw, NULL);
	}
	s = &w->names[h >> 52];
	if (!s->used || s->ip != ip || s->pid != pid || ts_raw >= s->until) {
		s->name = trail_reader_symbol_span(w->r, pid, ip, ts_raw, NULL, &s->until);
		s->ip = ip;
		s->pid = pid;
		s->used = 1;
	}
	return s->name;
}

static int comm_any(const char *const *pats, size_t n, const char *comm)
{
	for (size_t i = 0; i < n; i++)
		if (trail__glob(pats[i], strlen(pats[i]), comm, strlen(comm)))
			return 1;
	return 0;
}

/* (obj: the path of the function's object, for FUNC@OBJECT patterns) */
static int glob_any(const char *const *pats, size_t n, const char *s, const char *obj)
{
	for (size_t i = 0; i < n; i++)
		if (trail__func_glob(pats[i], strlen(pats[i]), s, obj))
			return 1;
	return 0;
}

/* The name a glob sees: a C++ name without its parameter list, as -l at
 * record time matches it. */
static int name_matches(const char *const *pats, size_t n, const char *name, const char *obj)
{
	const char *paren;
	char buf[512];

	if (!name || !n)
		return 0;
	paren = strchr(name, '(');
	if (paren && (size_t)(paren - name) < sizeof(buf)) {
		memcpy(buf, name, (size_t)(paren - name));
		buf[paren - name] = '\0';
		if (glob_any(pats, n, buf, obj))
			return 1;
	}
	return glob_any(pats, n, name, obj);
}

/* does a pattern of these name an object (FUNC@OBJECT)? */
static int any_object(const char *const *pats, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strchr(pats[i], '@'))
			return 1;
	return 0;
}

/* ---- output ---- */

static int emit_item(struct trail_viewer *w, struct qitem *it)
{
	if (it->kind == Q_EVENT)
		return w->out->event(w->out->ctx, &it->rec);
	it->c.kind = it->kind == Q_ENTRY ? TRAIL_CALL_ENTRY :
		     it->kind == Q_EXIT ? TRAIL_CALL_EXIT : TRAIL_CALL_LEAF;
	return w->out->call(w->out->ctx, &it->c);
}

static struct qitem *enqueue(struct vstream *s, int kind, int state)
{
	struct qitem *it;

	if (s->tail - s->head == s->capq) {
		size_t cap = s->capq ? s->capq * 2 : 16;
		struct qitem *q = calloc(cap, sizeof(*q));

		if (!q)
			return NULL;
		/* full: every slot is in use, its event buffer moves with it */
		for (uint64_t i = s->head; i < s->tail; i++)
			q[i & (cap - 1)] = s->q[i & (s->capq - 1)];
		free(s->q);
		s->q = q;
		s->capq = cap;
	}
	it = &s->q[s->tail & (s->capq - 1)];
	it->kind = kind;
	it->state = state;
	s->tail++;
	return it;
}

/* Send what the head of the queue allows. */
static int flush(struct trail_viewer *w, struct vstream *s)
{
	int rc;

	while (s->head < s->tail) {
		struct qitem *it = &s->q[s->head & (s->capq - 1)];

		if (it->kind == Q_ENTRY) {
			if (it->state == S_PEND)
				break;
			/* the last thing queued (so its call is still open:
			 * a return makes it a leaf): it may yet be a leaf */
			if (it->state == S_KEEP && s->head + 1 == s->tail)
				break;
		}
		s->head++;
		if (it->kind == Q_ENTRY && it->state == S_DROP)
			continue;
		if ((rc = emit_item(w, it)))
			return rc;
	}
	return 0;
}

/* A call or event, straight to the output if nothing waits, else queued. */
static int send_call(struct trail_viewer *w, struct vstream *s, int kind, struct trail_call *c)
{
	struct qitem *it;

	if (s->head == s->tail) {
		c->kind = kind == Q_ENTRY ? TRAIL_CALL_ENTRY :
			  kind == Q_EXIT ? TRAIL_CALL_EXIT : TRAIL_CALL_LEAF;
		return w->out->call(w->out->ctx, c);
	}
	it = enqueue(s, kind, S_KEEP);
	if (!it)
		return -ENOMEM;
	it->c = *c;
	return flush(w, s);
}

static int send_event(struct trail_viewer *w, struct vstream *s, const struct trail_record *rec)
{
	struct qitem *it;

	if (s->head == s->tail)
		return w->out->event(w->out->ctx, rec);
	it = enqueue(s, Q_EVENT, S_KEEP);
	if (!it)
		return -ENOMEM;
	if (rec->len > it->cap) {
		uint8_t *b = realloc(it->buf, rec->len);

		if (!b) {
			s->tail--;
			return -ENOMEM;
		}
		it->buf = b;
		it->cap = rec->len;
	}
	it->rec = *rec;
	if (rec->len)
		memcpy(it->buf, rec->payload, rec->len);
	it->rec.payload = it->buf;
	return flush(w, s);
}

/* ---- frames ---- */

static struct frame *push(struct vstream *s)
{
	if (s->nf == s->capf) {
		size_t cap = s->capf ? s->capf * 2 : 64;
		struct frame *f = realloc(s->f, cap * sizeof(*f));

		if (!f)
			return NULL;
		s->f = f;
		s->capf = cap;
	}
	memset(&s->f[s->nf], 0, sizeof(s->f[0]));
	return &s->f[s->nf++];
}

/* A new frame for a call of func entered at ts: shown or not, at which
 * depth. */
static struct frame *enter(struct trail_viewer *w, struct vstream *s,
			   const struct trail_record *rec, uint64_t func, int nostart)
{
	const struct trail_view *v = w->v;
	struct frame *p = s->nf ? &s->f[s->nf - 1] : NULL;
	int32_t up = p ? (p->shown ? (int32_t)(s->nf - 1) : p->up) : -1;
	uint32_t depth = p ? p->kids : 0;
	int ingraph = p ? p->ingraph : 0;
	const char *name = trail__view_symbol(w, rec->stream->pid, func, rec->ts_raw);
	struct frame *f = push(s);

	if (!f)
		return NULL;
	f->func = func;
	f->name = name;
	f->start_ns = nostart ? 0 : rec->ts_ns;
	f->cpu = rec->cpu;
	f->up = up;
	f->nostart = (uint8_t)nostart;
	f->shown = 1;
	if (w->funcsel) {
		const char *obj = w->funcsel > 1 ? trail_reader_module(w->r, rec->stream->pid, func,
								       rec->ts_raw) : NULL;

		if (v->ngraph && !ingraph && name_matches(v->graph, v->ngraph, name, obj))
			ingraph = 1;
		if (v->ngraph && !ingraph)
			f->shown = 0;
		if (v->nonly && !name_matches(v->only, v->nonly, name, obj))
			f->shown = 0;
		if (v->nnotrace && name_matches(v->notrace, v->nnotrace, name, obj))
			f->shown = 0;
	}
	if (v->max_depth && depth >= v->max_depth)
		f->shown = 0;
	f->ingraph = (uint8_t)ingraph;
	f->depth = depth;
	f->kids = f->shown ? depth + 1 : depth;
	return f;
}

static void call_of(struct trail_call *c, const struct frame *f, const struct trail_record *rec)
{
	*c = (struct trail_call){
		.stream = rec->stream, .cpu = f->cpu, .depth = f->depth, .func = f->func,
		.name = f->name, .start_ns = f->start_ns, .ts_raw = rec->ts_raw,
	};
	if (f->hasargs) {
		c->flags = TRAIL_CALL_ARGS;
		memcpy(c->args, f->args, sizeof(c->args));
	}
}

const char *trail_call_counter_name(const struct trail_call *c, unsigned i)
{
	const char *field = c->ctr_ev->meta.fields[1 + i].name;
	const struct trail_counter *all;
	size_t n;

	all = trail_counters(&n);
	for (size_t k = 0; k < n; k++)
		if (!strcmp(all[k].field, field))
			return all[k].name;
	return field;
}

int trail_call_counter_is_ns(const struct trail_call *c, unsigned i)
{
	const char *f = c->ctr_ev->meta.fields[1 + i].name;

	return !strcmp(f, "task_clock") || !strcmp(f, "cpu_clock");
}

/* A counters record: the deltas of the call it follows into (on top of
 * the stack, the same function), for its EXIT */
static void counters_of(struct vstream *s, const struct trail_record *rec)
{
	struct frame *f = s->nf ? &s->f[s->nf - 1] : NULL;
	uint32_t n = (rec->event->meta.nfields - 1) / 2;

	if (!f || rec->len < 8 * (1 + 2 * n) || u64at(rec, 0) != f->func)
		return;
	f->ctr_ev = rec->event;
	f->nctr = n;
	for (uint32_t i = 0; i < n; i++) {
		f->ctr[i] = u64at(rec, 1 + i);
		f->ctr_at[i] = u64at(rec, 1 + n + i);
	}
}

/* A shown call of s (on top of its stack) ends at end_ns. */
static int leave(struct trail_viewer *w, struct vstream *s, const struct trail_record *rec,
		 uint64_t end_ns, unsigned flags, uint64_t retval)
{
	const struct frame *fp = &s->f[--s->nf]; /* stays until the next push */
	struct trail_call c;
	uint64_t dur = fp->start_ns && end_ns > fp->start_ns ? end_ns - fp->start_ns : 0;
	int kept = 1;

	if (!fp->shown || fp->leafed)
		return 0;
	call_of(&c, fp, rec);
	c.end_ns = end_ns;
	c.child_ns = fp->child_ns;
	if (fp->ctr_ev && !(flags & TRAIL_CALL_OPEN)) {
		c.flags |= TRAIL_CALL_COUNTERS;
		c.ctr_ev = fp->ctr_ev;
		c.nctr = fp->nctr;
		memcpy(c.ctr, fp->ctr, sizeof(c.ctr));
		memcpy(c.ctr_at, fp->ctr_at, sizeof(c.ctr_at));
	}
	c.flags |= flags | (fp->nostart ? TRAIL_CALL_NOSTART : 0);
	c.retval = retval;
	c.cpu = rec->cpu;
	if (fp->queued && fp->qseq >= s->head) {
		struct qitem *it = &s->q[fp->qseq & (s->capq - 1)];

		if (it->state == S_PEND)
			it->state = dur >= w->v->thresh_ns ? S_KEEP : S_DROP;
		kept = it->state == S_KEEP;
		/* a call not shown, last in the queue: gone, so that its
		 * caller can still be a leaf */
		if (!kept && fp->qseq + 1 == s->tail)
			s->tail--;
		if (kept && fp->qseq + 1 == s->tail && !(flags & TRAIL_CALL_OPEN)) {
			/* nothing shown inside: a leaf */
			c.cpu = it->c.cpu;
			it->kind = Q_LEAF;
			it->c = c;
		} else if (kept) {
			struct qitem *x = enqueue(s, Q_EXIT, S_KEEP);

			if (!x)
				return -ENOMEM;
			x->c = c;
		}
	} else {
		int rc = send_call(w, s, Q_EXIT, &c);

		if (rc)
			return rc;
	}
	if (kept && fp->up >= 0 && !fp->nostart)
		s->f[fp->up].child_ns += dur;
	return flush(w, s);
}

/* Close every open call of s at end_ns (the trace or range ended, or a
 * loss broke the pairing). */
static int close_all(struct trail_viewer *w, struct vstream *s, const struct trail_record *rec,
		     uint64_t end_ns)
{
	int rc;

	while (s->nf) {
		struct frame *f = &s->f[s->nf - 1];

		if (f->queued && f->qseq >= s->head) {
			struct qitem *it = &s->q[f->qseq & (s->capq - 1)];

			if (it->state == S_PEND) /* as long as it lasted so far */
				it->state = end_ns - f->start_ns >= w->v->thresh_ns ? S_KEEP : S_DROP;
		}
		if ((rc = leave(w, s, rec, end_ns, TRAIL_CALL_OPEN, 0)))
			return rc;
	}
	return flush(w, s);
}

/* The pending calls of s that have lasted the threshold by now are shown. */
static int resolve_by_time(struct trail_viewer *w, struct vstream *s, uint64_t now)
{
	int rc = 0;

	while (!rc && s->head < s->tail) {
		struct qitem *it = &s->q[s->head & (s->capq - 1)];

		if (it->kind != Q_ENTRY || it->state != S_PEND ||
		    now - it->c.start_ns < w->v->thresh_ns)
			break;
		it->state = S_KEEP;
		rc = flush(w, s);
	}
	return rc;
}

/* A function_graph record of a shown stream. */
static int graph(struct trail_viewer *w, struct vstream *s, const struct trail_record *rec,
		 int kind, int in_range)
{
	const struct trail_view *v = w->v;
	struct trail_record next;
	struct trail_call c;
	struct frame *f;
	uint64_t end;

	switch (kind) {
	case G_ENTRY:
	case G_ENTRY_ARGS:
		f = enter(w, s, rec, u64at(rec, 0), !in_range);
		if (!f)
			return -ENOMEM;
		if (kind == G_ENTRY_ARGS && rec->len >= 56) {
			f->hasargs = 1;
			memcpy(f->args, rec->payload + 8, sizeof(f->args));
		}
		if (!f->shown || f->nostart)
			return 0;
		call_of(&c, f, rec);
		if (v->thresh_ns) {
			struct qitem *it = enqueue(s, Q_ENTRY, S_PEND);

			if (!it)
				return -ENOMEM;
			it->c = c;
			f->queued = 1;
			f->qseq = s->tail - 1;
			return 0;
		}
		if (w->out->whole_calls && !w->filtering) {
			/* no ENTRY, no leaf to find: the exit says it all */
			return 0;
		}
		if (s->head == s->tail && !trail_reader_peek(w->r, rec->stream, &next)) {
			/* the stream's last record: open at the end */
			if (!w->filtering)
				return send_call(w, s, Q_ENTRY, &c);
		} else if (s->head == s->tail) {
			int nk = kind_of(w, &next);

			if ((nk == G_EXIT || nk == G_EXIT_RET) &&
			    (!v->has_end || next.ts_ns <= w->end_ns)) {
				/* its return is the stream's next record: a leaf */
				c.end_ns = next.ts_ns;
				if (nk == G_EXIT_RET) {
					c.flags |= TRAIL_CALL_RETVAL;
					c.retval = u64at(&next, 0);
				}
				f->leafed = 1;
				if (f->up >= 0)
					s->f[f->up].child_ns += c.end_ns - c.start_ns;
				return send_call(w, s, Q_LEAF, &c);
			}
			/* the next record is shown: not a leaf (a counters
			 * record is the call's own: its exit may follow) */
			if (!w->filtering && (nk != G_COUNTERS || w->out->counter_records))
				return send_call(w, s, Q_ENTRY, &c);
		}
		{
			struct qitem *it = enqueue(s, Q_ENTRY, S_KEEP);

			if (!it)
				return -ENOMEM;
			it->c = c;
			f->queued = 1;
			f->qseq = s->tail - 1;
			return flush(w, s);
		}
	case G_INHERITED:
		f = enter(w, s, rec, u64at(rec, 0), 1);
		return f ? 0 : -ENOMEM;
	case G_COUNTERS:
		if (in_range)
			counters_of(s, rec);
		return in_range && w->out->counter_records ? send_event(w, s, rec) : 0;
	case G_EXIT:
	case G_EXIT_RET:
		if (!s->nf) {
			/* a return from a call entered before the file starts
			 * (or before a loss): shown when no function is picked */
			if (w->funcsel || !in_range)
				return 0;
			c = (struct trail_call){
				.flags = TRAIL_CALL_NOSTART, .stream = rec->stream, .cpu = rec->cpu,
				.end_ns = rec->ts_ns, .ts_raw = rec->ts_raw,
			};
			if (kind == G_EXIT_RET) {
				c.flags |= TRAIL_CALL_RETVAL;
				c.retval = u64at(rec, 0);
			}
			return send_call(w, s, Q_EXIT, &c);
		}
		if (!in_range) { /* before the range: nothing shown yet */
			s->nf--;
			return 0;
		}
		return leave(w, s, rec, rec->ts_ns, kind == G_EXIT_RET ? TRAIL_CALL_RETVAL : 0,
			     kind == G_EXIT_RET ? u64at(rec, 0) : 0);
	case G_LEAF:
	case G_CALL: {
		uint64_t dur = 0, start;
		uint32_t d32 = 0;

		if (!in_range)
			return 0;
		if (kind == G_LEAF) { /* stamped at entry, duration in ticks */
			if (rec->len >= 12)
				memcpy(&d32, rec->payload + 8, 4);
			start = rec->ts_ns;
			end = start + trail_reader_span_ns(w->r, d32);
		} else { /* stamped at the return */
			dur = u64at(rec, 1);
			end = rec->ts_ns;
			start = dur <= rec->ts_raw ? trail_reader_to_ns(w->r, rec->ts_raw - dur) : 0;
		}
		f = enter(w, s, rec, u64at(rec, 0), 0);
		if (!f)
			return -ENOMEM;
		f->start_ns = start;
		if (kind == G_CALL) {
			f->depth = 0;
			f->up = -1;
		}
		if (!f->shown || end - start < v->thresh_ns) {
			s->nf--;
			return 0;
		}
		call_of(&c, f, rec);
		c.end_ns = end;
		c.flags = kind == G_CALL ? TRAIL_CALL_THRESH : 0;
		if (f->up >= 0)
			s->f[f->up].child_ns += end - start;
		s->nf--;
		return send_call(w, s, Q_LEAF, &c);
	}
	}
	return 0;
}

/* ---- event filters ---- */

enum { EF_UNKNOWN, EF_HIDDEN, EF_SHOWN, EF_FILTERED };

/* Is rec shown by the filters? 1, 0, or -EINVAL (a filter that does not
 * compile for its event: v->filter_err) */
static int event_filter(struct trail_viewer *w, const struct trail_record *rec)
{
	const struct trail_view *v = w->v;
	const struct trail_revent *ev = rec->event;
	uint32_t id = ev->id;

	if (id >= w->nfsel) {
		uint32_t n = id + 64;
		uint8_t *s = realloc(w->fsel, n);
		struct trail_filter **f;

		if (!s)
			return -ENOMEM;
		w->fsel = s;
		if (!(f = realloc(w->ff, n * sizeof(*f))))
			return -ENOMEM;
		w->ff = f;
		memset(w->fsel + w->nfsel, EF_UNKNOWN, n - w->nfsel);
		memset(w->ff + w->nfsel, 0, (n - w->nfsel) * sizeof(*f));
		w->nfsel = n;
	}
	if (w->fsel[id] == EF_UNKNOWN) {
		w->fsel[id] = EF_HIDDEN;
		for (size_t k = 0; k < v->nfilters; k++) {
			const char *text;
			size_t plen;
			struct trail_filter_err e;

			if (trail_filter_split(v->filters[k], &plen, &text) ||
			    !trail__spec_match1(v->filters[k], plen, ev->meta.provider, ev->meta.name))
				continue;
			w->fsel[id] = EF_SHOWN;
			if (!text)
				break;
			if (!(w->ff[id] = malloc(sizeof(struct trail_filter))))
				return -ENOMEM;
			if (trail_filter_compile(text, &ev->meta, w->ff[id], &e)) {
				if (v->filter_err) {
					*v->filter_err = e;
					v->filter_err->pos += (int)(text - v->filters[k]);
				}
				if (v->filter_which)
					*v->filter_which = k;
				return -EINVAL;
			}
			w->fsel[id] = EF_FILTERED;
			break;
		}
	}
	if (w->fsel[id] != EF_FILTERED)
		return w->fsel[id] == EF_SHOWN;
	{
		struct trail_filter_ctx c = {
			.pid = rec->stream->pid, .tid = rec->stream->tid, .cpu = rec->cpu,
			.ts = rec->ts_ns, .comm = rec->stream->comm,
		};

		return trail_filter_match(w->ff[id], rec->payload, rec->len, &c);
	}
}

/* ---- the viewer ---- */

static int stream_selected(const struct trail_view *v, const struct trail_rstream *st)
{
	size_t i;

	if (v->ntids) {
		for (i = 0; i < v->ntids && v->tids[i] != st->tid; i++)
			;
		if (i == v->ntids)
			return 0;
	}
	if (v->npids) {
		for (i = 0; i < v->npids && v->pids[i] != st->pid; i++)
			;
		if (i == v->npids)
			return 0;
	}
	if (v->ncomms && !comm_any(v->comms, v->ncomms, st->comm))
		return 0;
	return 1;
}

struct trail_viewer *trail__viewer_new(struct trail_reader *r, const struct trail_view *v,
				       struct trail_output *out,
				       const struct trail_rstream *const *streams, size_t n)
{
	struct trail_viewer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->s = calloc(n ? n : 1, sizeof(*w->s));
	if (!w->s) {
		free(w);
		return NULL;
	}
	w->nkinds = trail_reader_event_ids(r);
	w->kinds = malloc(w->nkinds ? w->nkinds : 1);
	if (!w->kinds) {
		free(w->s);
		free(w);
		return NULL;
	}
	memset(w->kinds, 0xff, w->nkinds);
	w->v = v;
	w->r = r;
	w->out = out;
	w->ns = n;
	for (size_t i = 0; i < n; i++)
		w->s[i].sel = stream_selected(v, streams[i]);
	/* (2: a pattern names an object, whose path each call looks up) */
	w->funcsel = v->nonly || v->nnotrace || v->ngraph;
	if (w->funcsel && (any_object(v->only, v->nonly) || any_object(v->notrace, v->nnotrace) ||
			   any_object(v->graph, v->ngraph)))
		w->funcsel = 2;
	w->filtering = w->funcsel || v->max_depth || v->thresh_ns;
	return w;
}

void trail__viewer_free(struct trail_viewer *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->nfsel; i++)
		free(w->ff[i]);
	free(w->ff);
	free(w->fsel);
	for (size_t i = 0; i < w->ns; i++) {
		struct vstream *s = &w->s[i];

		for (size_t k = 0; k < s->capq; k++)
			free(s->q[k].buf);
		free(s->q);
		free(s->f);
	}
	free(w->s);
	free(w->names);
	free(w->kinds);
	free(w);
}

/* The end of what is shown: every open call closed at end_ns. */
static int finish(struct trail_viewer *w, uint64_t end_ns)
{
	int rc = 0;

	if (w->finished)
		return 0;
	w->finished = 1;
	for (size_t i = 0; i < w->ns && !rc; i++) {
		struct vstream *s = &w->s[i];
		struct trail_record rec = {.type = TRAIL_RT_EVENT, .cpu = ~0u, .ts_ns = end_ns};

		if (!s->sel || (!s->nf && s->head == s->tail))
			continue;
		if (s->nf) {
			/* the stream it belongs to, for the calls made here */
			struct trail_rstream const *const *st;

			trail_reader_streams(w->r, &st);
			rec.stream = st[i];
			rec.ts_raw = s->last_raw;
			rc = close_all(w, s, &rec, end_ns > s->last_ns ? end_ns : s->last_ns);
		}
		/* nothing is open: whatever waits goes */
		while (!rc && s->head < s->tail) {
			struct qitem *it = &s->q[s->head++ & (s->capq - 1)];

			if (!(it->kind == Q_ENTRY && it->state == S_DROP))
				rc = emit_item(w, it);
		}
	}
	return rc;
}

int trail__viewer_record(struct trail_viewer *w, const struct trail_record *rec)
{
	const struct trail_view *v = w->v;
	struct vstream *s;
	int kind, in_range = 1, rc;

	if (!w->bounds_known) {
		w->bounds_known = 1;
		w->start_ns = v->has_start ? v->start_ns + (v->rel_start ? rec->ts_ns : 0) : 0;
		w->end_ns = v->has_end ? v->end_ns + (v->rel_end ? rec->ts_ns : 0) : UINT64_MAX;
	}
	if (v->has_end && rec->ts_ns > w->end_ns) {
		rc = finish(w, w->end_ns);
		return rc ? rc : TRAIL_OUTPUT_DONE;
	}
	w->last_ns = rec->ts_ns;
	if (rec->stream->order >= w->ns || !(s = &w->s[rec->stream->order])->sel)
		return 0;
	if (v->has_start && rec->ts_ns < w->start_ns)
		in_range = 0;
	s->last_ns = rec->ts_ns;
	s->last_raw = rec->ts_raw;
	if (v->thresh_ns && s->head < s->tail && (rc = resolve_by_time(w, s, rec->ts_ns)))
		return rc;
	kind = kind_of(w, rec);
	if (kind != G_NONE && w->out->call)
		return graph(w, s, rec, kind, in_range);
	if (!in_range)
		return 0;
	if (v->nfilters && rec->type == TRAIL_RT_EVENT && (rc = event_filter(w, rec)) <= 0)
		return rc;
	if (rec->type == TRAIL_RT_LOST && w->out->call && s->nf &&
	    (rc = close_all(w, s, rec, rec->ts_ns)))
		return rc;
	return send_event(w, s, rec);
}

int trail__viewer_end(struct trail_viewer *w)
{
	return finish(w, w->last_ns);
}
