/* SPDX-License-Identifier: MIT */
/*
 * chrome.c - `trail export --format chrome`: the Chrome trace-event format
 * (JSON Object Format), which Perfetto's UI, chrome://tracing and
 * Speedscope open:
 *
 *   {"traceEvents":[
 *   {"name":"thread_name","ph":"M","pid":7,"tid":7,"args":{"name":"prog"}},
 *   {"name":"main","cat":"function_graph","ph":"B","ts":18281936285.721,"pid":7,"tid":7},
 *   {"name":"hash","cat":"function_graph","ph":"X","ts":18281936312.100,"dur":0.271,...},
 *   {"ph":"E","ts":18281936317.558,"pid":7,"tid":7},
 *   {"name":"app:request","cat":"app","ph":"i","s":"t","ts":...,"args":{"fd":3,...},...}
 *   ],
 *   "displayTimeUnit":"ns",
 *   "otherData":{"producer":"trail",...}}
 *
 * What maps to what:
 *   function_graph calls   ENTRY -> B, EXIT -> E (an OPEN one too, with
 *                          args.open: every B gets its E), LEAF -> X with
 *                          dur; an EXIT with NOSTART (its entry is not in
 *                          the file) is left out: it has no B to end
 *   static events          i (thread-scoped instants) named PROVIDER:NAME,
 *                          category PROVIDER, the fields in args, typed
 *                          as json.h says (hex fields as "0x..." strings,
 *                          bools as true/false, arrays as arrays, a NULL
 *                          string as null)
 *   ftrace:function        i named by the function, args ip, parent,
 *                          parent_ip
 *   LOST records           i named LOST, args.lost: how many
 *   threads, processes     M (thread_name, process_name) at each stream's
 *                          first record: a viewer's track labels
 * ts is CLOCK_MONOTONIC in microseconds with the nanoseconds as three
 * decimals (the timestamps trail report prints, in another unit); pid and
 * tid are the recorded ones. otherData carries the recording's info, the
 * loss totals and the reader's damage messages.
 *
 * Streaming: one object is written per callback, through a 64 KiB buffer;
 * the state is a few bytes per stream and per process and the escaped
 * names of each event (made once: the records are millions), nothing per
 * record.
 * The closing "]" and otherData are written by end(), which the driver
 * calls whatever happened after begin(), so even a damaged input gives a
 * complete JSON document.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/arena.h"
#include "argtypes.h"
#include "formats.h"
#include "json.h"

/* per stream: `,"pid":P,"tid":T}`, the end of every object of its track */
struct cstream {
	char tail[48];
	uint8_t len, named;
};

/* per event: its text that never changes, escaped once */
struct cevent {
	int kind;      /* 0 not made yet, EV_FIELDS, EV_FUNCTION, EV_NONE */
	char *s;       /* `"name":"P:N","cat":"P","ph":"i","s":"t","ts":`,
			* then each field's `"key":` */
	uint32_t *off; /* off[0]: the end of that start; off[1 + i]: of key i */
};

enum { EV_FIELDS = 1, EV_FUNCTION, EV_NONE };

struct chrome {
	struct trail_output out;
	const struct trail_export_src *src;
	struct cstream *st;
	size_t nst;
	struct cevent *ev; /* by event id */
	size_t nev;
	uint32_t *pids;   /* every pid of the file, sorted */
	uint8_t *pnamed;  /* its process_name written */
	size_t npids;
	int any;          /* an object written: the next needs a comma */
	uint64_t nostart; /* NOSTART exits left out */
	struct trail_argtypes *types; /* --args, typed --retval: from DWARF */
	struct json j;    /* last: 64 KiB */
};

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The pid table: every pid of a stream or a process, once. */
static int pid_table(struct chrome *c, const struct trail_export_src *src)
{
	size_t n = 0;

	c->pids = malloc((src->nstreams + src->nprocs + 1) * sizeof(*c->pids));
	if (!c->pids)
		return -ENOMEM;
	for (size_t i = 0; i < src->nstreams; i++)
		c->pids[n++] = src->streams[i]->pid;
	for (size_t i = 0; i < src->nprocs; i++)
		c->pids[n++] = src->procs[i].pid;
	qsort(c->pids, n, sizeof(*c->pids), u32_cmp);
	c->npids = 0;
	for (size_t i = 0; i < n; i++)
		if (!c->npids || c->pids[c->npids - 1] != c->pids[i])
			c->pids[c->npids++] = c->pids[i];
	c->pnamed = calloc(c->npids + 1, 1);
	return c->pnamed ? 0 : -ENOMEM;
}

/* The next object of traceEvents begins. */
static void obj(struct chrome *c)
{
	if (c->any) {
		json_lit(&c->j, ",\n{");
	} else {
		json_lit(&c->j, "\n{");
		c->any = 1;
	}
}

static void meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid,
		 const char *name, size_t len)
{
	obj(c);
	json_lit(&c->j, "\"name\":\"");
	json_put(&c->j, what, strlen(what));
	json_lit(&c->j, "\",\"ph\":\"M\",\"pid\":");
	json_u64(&c->j, pid);
	json_lit(&c->j, ",\"tid\":");
	json_u64(&c->j, tid);
	json_lit(&c->j, ",\"args\":{\"name\":");
	json_str(&c->j, name, len);
	json_lit(&c->j, "}}");
}

/* The process's name: its comm as the file's process table has it, or
 * the comm of a thread of it. */
static void name_process(struct chrome *c, const struct trail_rstream *s)
{
	const uint32_t *p = bsearch(&s->pid, c->pids, c->npids, sizeof(*p), u32_cmp);
	const char *comm = s->comm;
	size_t i;

	if (!p || c->pnamed[p - c->pids])
		return;
	c->pnamed[p - c->pids] = 1;
	for (i = 0; i < c->src->nprocs; i++)
		if (c->src->procs[i].pid == s->pid && c->src->procs[i].comm[0]) {
			comm = c->src->procs[i].comm;
			break;
		}
	meta(c, "process_name", s->pid, s->pid, comm, strnlen(comm, 16));
}

/*
 * A stream's track, before its first object: its process and thread named
 * (M objects), and the `,"pid":P,"tid":T}` that ends each of its objects
 * kept ready.
 */
static const struct cstream *track(struct chrome *c, const struct trail_rstream *s)
{
	static const struct cstream none = {",\"pid\":0,\"tid\":0}", 17, 1};
	struct cstream *cs;
	size_t k;

	if (!s || s->order >= c->nst) /* the reader gives neither: kept safe */
		return &none;
	cs = &c->st[s->order];
	if (cs->named)
		return cs;
	name_process(c, s);
	meta(c, "thread_name", s->pid, s->tid, s->comm, strnlen(s->comm, 16));
	memcpy(cs->tail, ",\"pid\":", 7);
	k = 7 + json_digits(cs->tail + 7, s->pid);
	memcpy(cs->tail + k, ",\"tid\":", 7);
	k += 7;
	k += json_digits(cs->tail + k, s->tid);
	cs->tail[k++] = '}';
	cs->len = (uint8_t)k;
	cs->named = 1;
	return cs;
}

static void end_obj(struct chrome *c, const struct cstream *cs)
{
	json_put(&c->j, cs->tail, cs->len);
}

static int status(struct chrome *c)
{
	if (!c->j.err)
		return 0;
	if (c->src->err && c->src->errlen)
		snprintf(c->src->err, c->src->errlen, "writing the JSON: %s", strerror(c->j.err));
	return -c->j.err;
}

static int chrome_begin(void *ctx, const struct trail_export_src *src)
{
	struct chrome *c = ctx;
	int rc;

	c->src = src;
	if (!(c->types = trail_argtypes_new(src->reader)))
		return -ENOMEM;
	c->nst = src->nstreams;
	c->st = calloc(c->nst + 1, sizeof(*c->st));
	if (!c->st)
		return -ENOMEM;
	if ((rc = pid_table(c, src)))
		return rc;
	c->nev = trail_reader_event_ids(src->reader);
	c->ev = calloc(c->nev + 1, sizeof(*c->ev));
	if (!c->ev)
		return -ENOMEM;
	json_lit(&c->j, "{\"traceEvents\":[");
	return status(c);
}

/* a function's name, or its address if it has none */
static void func_name(struct json *j, const char *name, uint64_t addr)
{
	if (name)
		json_cstr(j, name);
	else
		json_hex(j, addr);
}

static void argval(struct json *j, const struct trail_argval *v)
{
	if (v->kind == 's')
		json_s64(j, (int64_t)v->v);
	else if (v->kind == 'u')
		json_u64(j, v->v);
	else
		json_hex(j, v->v);
}

/* "name":value,... of the call's arguments (record --args) by their DWARF
 * types, "more_args":true if some were not recorded (report's "...");
 * nothing without DWARF. Returns whether anything was written. */
static int call_args(struct chrome *c, const struct trail_call *k)
{
	struct trail_argval v[TRAIL_ARGTYPES_MAX];
	char buf[512];
	int more, n = trail_argtypes_vals(c->types, k->stream->pid, k->func, k->ts_raw,
					  trail_argtypes_bare(k->name, buf, sizeof(buf)), k->args,
					  v, &more);

	for (int i = 0; i < n; i++) {
		if (i)
			json_ch(&c->j, ',');
		json_cstr(&c->j, v[i].name);
		json_ch(&c->j, ':');
		argval(&c->j, &v[i]);
	}
	if (n < 0)
		return 0;
	if (more && n)
		json_ch(&c->j, ',');
	if (more)
		json_lit(&c->j, "\"more_args\":true");
	return more || n > 0;
}

/* the return value by the function's DWARF type (nothing for void), hex
 * without one, after a comma if sep; returns whether written */
static int call_retval(struct chrome *c, const struct trail_call *k, int sep)
{
	struct trail_argval v;
	char buf[512];
	int t = trail_argtypes_retv(c->types, k->stream->pid, k->func, k->ts_raw,
				    trail_argtypes_bare(k->name, buf, sizeof(buf)), k->retval, &v);

	if (!t)
		return 0;
	if (sep)
		json_ch(&c->j, ',');
	json_lit(&c->j, "\"retval\":");
	if (t > 0)
		argval(&c->j, &v);
	else
		json_hex(&c->j, k->retval);
	return 1;
}

static int chrome_call(void *ctx, const struct trail_call *k)
{
	struct chrome *c = ctx;
	struct json *j = &c->j;
	const struct cstream *cs;
	int args = 0;

	if (k->kind == TRAIL_CALL_EXIT && (k->flags & TRAIL_CALL_NOSTART)) {
		c->nostart++; /* no B to end */
		return 0;
	}
	cs = track(c, k->stream);
	obj(c);
	if (k->kind == TRAIL_CALL_EXIT) {
		json_lit(j, "\"ph\":\"E\",\"ts\":");
		json_us(j, k->end_ns);
	} else {
		json_lit(j, "\"name\":");
		func_name(j, k->name, k->func);
		if (k->kind == TRAIL_CALL_ENTRY) {
			json_lit(j, ",\"cat\":\"function_graph\",\"ph\":\"B\",\"ts\":");
			json_us(j, k->start_ns);
		} else {
			json_lit(j, ",\"cat\":\"function_graph\",\"ph\":\"X\",\"ts\":");
			json_us(j, k->start_ns);
			json_lit(j, ",\"dur\":");
			json_us(j, k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0);
		}
	}
	if (k->flags & (TRAIL_CALL_ARGS | TRAIL_CALL_RETVAL | TRAIL_CALL_OPEN)) {
		json_lit(j, ",\"args\":{");
		if (k->kind != TRAIL_CALL_EXIT && (k->flags & TRAIL_CALL_ARGS))
			args = call_args(c, k);
		if (k->kind != TRAIL_CALL_ENTRY && (k->flags & TRAIL_CALL_RETVAL))
			args |= call_retval(c, k, args);
		if (k->kind != TRAIL_CALL_ENTRY && (k->flags & TRAIL_CALL_OPEN)) {
			if (args)
				json_ch(j, ',');
			/* the trace, the time range or a loss ended it, not a return */
			json_lit(j, "\"open\":true");
		}
		json_ch(j, '}');
	}
	end_obj(c, cs);
	return status(c);
}

/* element e of an integer field (e = 0 for a scalar) */
static void int_value(struct json *j, const struct trail_fval *v, uint32_t e)
{
	uint8_t fl = v->f->flags;

	if (fl & TRAIL_FF_BOOL) {
		if (trail_fval_u64(v, e))
			json_lit(j, "true");
		else
			json_lit(j, "false");
	} else if (fl & (TRAIL_FF_HEX | TRAIL_FF_PTR)) {
		json_hex(j, trail_fval_u64(v, e)); /* as ftrace shows it */
	} else if (fl & TRAIL_FF_SIGNED) {
		json_s64(j, trail_fval_s64(v, e));
	} else {
		json_u64(j, trail_fval_u64(v, e));
	}
}

static void value(struct json *j, const struct trail_fval *v)
{
	switch (v->f->kind) {
	case TRAIL_FK_INT:
		int_value(j, v, 0);
		break;
	case TRAIL_FK_FLOAT:
		json_double(j, trail_fval_double(v), v->f->size == 4);
		break;
	case TRAIL_FK_STRING:
		if (v->null)
			json_lit(j, "null");
		else
			json_str(j, (const char *)v->data, v->count);
		break;
	default: /* ARRAY, SEQ */
		json_ch(j, '[');
		for (uint32_t e = 0; e < v->count; e++) {
			if (e)
				json_ch(j, ',');
			int_value(j, v, e);
		}
		json_ch(j, ']');
	}
}

/* ,"args":{"field":value,...} of a static event; the keys from ce if
 * it has them */
static void fields(struct json *j, const struct trail_record *rec, const struct cevent *ce)
{
	const struct trail_revent *ev = rec->event;
	struct trail_fval v;
	uint32_t off = 0;

	json_lit(j, ",\"args\":{");
	for (uint32_t i = 0; i < ev->meta.nfields; i++) {
		if (i)
			json_ch(j, ',');
		if (!trail_field_at(ev, i, rec->payload, rec->len, &off, &v)) {
			/* shorter than its description (report shows <short>) */
			json_lit(j, "\"trail_short_payload\":true");
			break;
		}
		if (ce) {
			json_put(j, ce->s + ce->off[i], ce->off[i + 1] - ce->off[i]);
		} else {
			json_cstr(j, v.f->name);
			json_ch(j, ':');
		}
		value(j, &v);
	}
	json_ch(j, '}');
}

/* an event instant's start: name, category, phase, scope, "ts": */
static void instant_start(struct json *j, const struct trail_meta *m)
{
	json_lit(j, "\"name\":\"");
	json_esc(j, m->provider, strlen(m->provider));
	json_ch(j, ':');
	json_esc(j, m->name, strlen(m->name));
	json_lit(j, "\",\"cat\":");
	json_cstr(j, m->provider);
	json_lit(j, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
}

/* offset reached in a memory stream t writes to */
static uint32_t mem_off(struct json *t, FILE *f)
{
	json_flush(t);
	fflush(f);
	return (uint32_t)ftell(f);
}

/* The escaped text of an event, made the first time it is seen (an event
 * is described once; its records are millions). ce->kind EV_NONE if it
 * could not be made: written the slow way then. */
static void cache_event(struct cevent *ce, const struct trail_meta *m)
{
	struct json *t = malloc(sizeof(*t));
	size_t len = 0;
	FILE *f = NULL;

	ce->kind = EV_NONE;
	ce->off = calloc(m->nfields + 1, sizeof(*ce->off));
	if (!t || !ce->off || !(f = open_memstream(&ce->s, &len)))
		goto out;
	json_init(t, f);
	instant_start(t, m);
	ce->off[0] = mem_off(t, f);
	for (uint32_t i = 0; i < m->nfields; i++) {
		json_cstr(t, m->fields[i].name);
		json_ch(t, ':');
		ce->off[i + 1] = mem_off(t, f);
	}
	if (!t->err && !ferror(f))
		ce->kind = EV_FIELDS;
out:
	if (f)
		fclose(f);
	free(t);
	if (ce->kind == EV_NONE) {
		free(ce->s);
		free(ce->off);
		ce->s = NULL;
		ce->off = NULL;
	}
}

/* What an event's records are, and its text if cached (else NULL). */
static const struct cevent *event_of(struct chrome *c, const struct trail_record *rec, int *kind)
{
	const struct trail_meta *m = &rec->event->meta;
	struct cevent *ce;

	if (rec->event->id >= c->nev) {
		*kind = trail_export_is_function(rec->event) ? EV_FUNCTION : EV_FIELDS;
		return NULL;
	}
	ce = &c->ev[rec->event->id];
	if (!ce->kind) {
		if (trail_export_is_function(rec->event))
			ce->kind = EV_FUNCTION;
		else
			cache_event(ce, m);
	}
	*kind = ce->kind == EV_NONE ? EV_FIELDS : ce->kind;
	return ce->kind == EV_FIELDS ? ce : NULL;
}

/* the function tracer's record: an instant named by the function */
static void function(struct chrome *c, const struct trail_record *rec, uint64_t ip,
		     uint64_t parent)
{
	const struct trail_export_src *src = c->src;
	uint32_t pid = rec->stream ? rec->stream->pid : 0;
	struct json *j = &c->j;

	json_lit(j, "\"name\":");
	func_name(j, trail_export_symbol(src, pid, ip, rec->ts_raw), ip);
	json_lit(j, ",\"cat\":\"ftrace\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	json_us(j, rec->ts_ns);
	json_lit(j, ",\"args\":{\"ip\":");
	json_hex(j, ip);
	json_lit(j, ",\"parent\":");
	func_name(j, trail_export_symbol(src, pid, parent, rec->ts_raw), parent);
	json_lit(j, ",\"parent_ip\":");
	json_hex(j, parent);
	json_ch(j, '}');
}

static int chrome_event(void *ctx, const struct trail_record *rec)
{
	struct chrome *c = ctx;
	struct json *j = &c->j;
	const struct cstream *cs;

	if (rec->type != TRAIL_RT_EVENT && rec->type != TRAIL_RT_LOST)
		return 0;
	cs = track(c, rec->stream);
	obj(c);
	if (rec->type == TRAIL_RT_LOST) {
		json_lit(j, "\"name\":\"LOST\",\"cat\":\"trail\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
		json_us(j, rec->ts_ns);
		json_lit(j, ",\"args\":{\"lost\":");
		json_u64(j, rec->lost);
		json_ch(j, '}');
	} else {
		int kind;
		const struct cevent *ce = event_of(c, rec, &kind);
		uint64_t ip, parent;

		if (kind == EV_FUNCTION && trail_export_function(rec, &ip, &parent)) {
			function(c, rec, ip, parent);
		} else {
			if (ce)
				json_put(j, ce->s, ce->off[0]);
			else
				instant_start(j, &rec->event->meta);
			json_us(j, rec->ts_ns);
			fields(j, rec, ce);
		}
	}
	end_obj(c, cs);
	return status(c);
}

/* "key":"value" of the recording's INFO, if it has it */
static void info(struct json *j, const struct trail_export_src *src, const char *key)
{
	const char *v = trail_reader_info(src->reader, key);

	if (!v || !*v)
		return;
	json_ch(j, ',');
	json_cstr(j, key);
	json_ch(j, ':');
	json_cstr(j, v);
}

static void num(struct json *j, const char *key, uint64_t v)
{
	json_ch(j, ',');
	json_cstr(j, key);
	json_ch(j, ':');
	json_u64(j, v);
}

/* otherData: what the recording was and what it lost, for the reader of
 * the file (viewers show it as the trace's metadata) */
static void other_data(struct chrome *c, const struct trail_export_src *src)
{
	struct json *j = &c->j;
	struct trail_reader *r = src->reader;
	const char *const *msgs;
	size_t n = trail_reader_errors(r, &msgs);
	uint64_t lost = trail_reader_nostream_lost(r) + trail_reader_gone_lost(r, NULL);

	for (size_t i = 0; i < src->nstreams; i++)
		lost += src->streams[i]->dropped + src->streams[i]->overwritten;
	json_lit(j, "\"otherData\":{\"producer\":\"trail\",\"input\":");
	json_cstr(j, src->path);
	info(j, src, "command");
	info(j, src, "tracer");
	info(j, src, "functions");
	info(j, src, "events");
	json_lit(j, ",\"clock\":");
	if (src->hdr->clock == TRAIL_CLOCK_TSC)
		json_lit(j, "\"tsc, shown as CLOCK_MONOTONIC\"");
	else
		json_lit(j, "\"CLOCK_MONOTONIC\"");
	num(j, "cpus", src->hdr->ncpus);
	num(j, "streams", src->nstreams);
	num(j, "lost_events", lost);
	num(j, "lost_events_no_stream", trail_reader_nostream_lost(r));
	num(j, "overwritten_events_of_threads_gone", trail_reader_gone_lost(r, NULL));
	num(j, "damaged_events", trail_reader_damaged_events(r));
	num(j, "exits_without_entry", c->nostart);
	json_lit(j, ",\"damage\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			json_ch(j, ',');
		json_cstr(j, msgs[i]);
	}
	json_lit(j, "]}");
}

static int chrome_end(void *ctx, const struct trail_export_src *src)
{
	struct chrome *c = ctx;
	FILE *f = c->j.out;

	json_lit(&c->j, "\n],\n\"displayTimeUnit\":\"ns\",\n");
	other_data(c, src);
	json_lit(&c->j, "}\n");
	json_flush(&c->j);
	if (!c->j.err && (fflush(f) || ferror(f)))
		c->j.err = errno ? errno : EIO;
	return status(c);
}

static void chrome_free(void *ctx)
{
	struct chrome *c = ctx;

	for (size_t i = 0; c->ev && i < c->nev; i++) {
		free(c->ev[i].s);
		free(c->ev[i].off);
	}
	free(c->ev);
	free(c->st);
	free(c->pids);
	free(c->pnamed);
	trail_argtypes_free(c->types);
	free(c);
}

struct trail_output *trail__export_chrome(const struct trail_export_opts *opts)
{
	static const struct trail_output ops = {
		.name = "chrome", .begin = chrome_begin, .event = chrome_event,
		.call = chrome_call, .end = chrome_end, .free = chrome_free,
	};
	struct chrome *c;

	if (!opts || opts->sz < sizeof(*opts) || !opts->out) {
		errno = EINVAL;
		return NULL;
	}
	c = trail__output_new(sizeof(*c), &ops);
	if (!c)
		return NULL;
	json_init(&c->j, opts->out);
	return &c->out;
}
