/* SPDX-License-Identifier: MIT */
/*
 * refcount.c - `trail report --refcount SPEC` (seed 001's refcount leak
 * tracking, perf's idea): gets and puts paired per object, from any
 * events or probes of a recording, in time order.
 *
 *   SPEC: ITEM[,ITEM...]   ITEM: get=SYS:EVENT:FIELD | put=SYS:EVENT:FIELD
 *                                | use=SYS:EVENT:FIELD
 *
 * The object is FIELD's value (an integer or pointer; a string by its
 * bytes). Printed: the objects whose count does not come back to zero,
 * with the stacks of the gets not put back (a stacktrace trigger's
 * record right after a get, in its thread: -T 'app:obj_get:stacktrace');
 * the uses of an object after its count fell to zero (a use event, or a
 * get: use after put), with the place (its stack, if one was taken) and
 * the last put's; the puts of an object with no get left.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/spec.h"
#include "../../src/tracefile/reader.h"
#include "keymap.h"
#include "tool.h"

#define RC_KINDS 3 /* get, put, use */
#define RC_STACK 24
#define RC_KEEP 8  /* gets not put back kept with their stacks, per object */

struct site { /* one record of an object's, and its stack */
	uint64_t ts_ns, ts_raw;
	uint32_t pid, tid;
	char comm[16];
	uint16_t nstack;
	uint64_t stack[RC_STACK];
};

struct obj {
	struct keyent k;
	int64_t count;
	uint64_t gets, puts;
	int dead;                /* its count fell to zero once */
	struct site last_put;
	struct site open[RC_KEEP]; /* the latest gets not put back */
	int nopen;
};

struct uap { /* a use after put */
	uint64_t key;
	char ev[96];
	struct site at, put;
};

struct rc {
	struct trail_reader *r;
	int *kind, *field;       /* per event id: -1 none */
	struct keymap objs;
	uint64_t underflows, after_put;
	struct uap *uaps;        /* the uses after put, printed at the end */
	struct site *pending;    /* per stream: the site awaiting its stack */
	size_t npending;
};

static struct obj *obj_of(struct rc *C, uint64_t key)
{
	return keymap_get(&C->objs, key);
}

static void site_of(struct site *s, const struct trail_record *rec)
{
	s->ts_ns = rec->ts_ns;
	s->ts_raw = rec->ts_raw;
	s->pid = rec->stream->pid;
	s->tid = rec->stream->tid;
	memcpy(s->comm, rec->stream->comm, 16);
	s->nstack = 0;
}

static void print_site(const struct rc *C, const char *what, const struct site *s)
{
	printf("  %s at %llu.%06llu in %.16s-%u\n", what, (unsigned long long)(s->ts_ns / 1000000000ull),
	       (unsigned long long)(s->ts_ns % 1000000000ull / 1000), s->comm, s->tid);
	for (uint16_t i = 0; i < s->nstack; i++) {
		uint64_t off = 0, size = 0;
		const char *f = trail_reader_symbol_size(C->r, s->pid, s->stack[i], s->ts_raw, &off, &size);

		if (f)
			printf("     => %s+0x%llx/0x%llx\n", f, (unsigned long long)off, (unsigned long long)size);
		else
			printf("     => 0x%llx\n", (unsigned long long)s->stack[i]);
	}
}

/* "get=SYS:EVENT:FIELD,...": each item on the trace's events, or a caret
 * error (0 / 1) */
static int parse_spec(struct rc *C, const char *spec, uint32_t nids)
{
	static const char *const kinds[RC_KINDS] = {"get=", "put=", "use="};
	int have[RC_KINDS] = {0};

	for (const char *p = spec; *p;) {
		const char *end = strchr(p, ','), *c1, *c2;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int k, hit = 0;

		for (k = 0; k < RC_KINDS && strncmp(p, kinds[k], 4); k++)
			;
		if (k == RC_KINDS) {
			tool_caret("report --refcount", spec, (size_t)(p - spec),
				   "get=SYS:EVENT:FIELD, put=..., or use=...");
			return 1;
		}
		c1 = memchr(p + 4, ':', len - 4);
		c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - p)) : NULL;
		if (!c1 || !c2 || c2 == p + len - 1) {
			tool_caret("report --refcount", spec, (size_t)(p + 4 - spec), "SYS:EVENT:FIELD");
			return 1;
		}
		for (uint32_t id = 0; id < nids; id++) {
			const struct trail_revent *ev = trail_reader_event(C->r, id);
			size_t fl = len - (size_t)(c2 + 1 - p);
			uint32_t i;

			if (!ev || !trail__spec_match1(p + 4, (size_t)(c2 - p - 4), ev->meta.provider,
						       ev->meta.name))
				continue;
			for (i = 0; i < ev->meta.nfields; i++)
				if (strlen(ev->meta.fields[i].name) == fl &&
				    !memcmp(ev->meta.fields[i].name, c2 + 1, fl))
					break;
			if (i == ev->meta.nfields) {
				char msg[300];

				snprintf(msg, sizeof(msg), "%s:%s has no field %.*s", ev->meta.provider,
					 ev->meta.name, (int)fl, c2 + 1);
				tool_caret("report --refcount", spec, (size_t)(c2 + 1 - spec), msg);
				return 1;
			}
			C->kind[id] = k;
			C->field[id] = (int)i;
			hit = 1;
		}
		if (!hit) {
			tool_caret("report --refcount", spec, (size_t)(p + 4 - spec),
				   "no event of the trace matches it");
			return 1;
		}
		have[k] = 1;
		p += len + (end ? 1 : 0);
	}
	if (!have[0] || !have[1]) {
		tool_err("report --refcount: give a get= and a put= (use= is optional)");
		return 1;
	}
	return 0;
}

int report_refcount(const char *path, const char *spec)
{
	struct rc C = {.objs = {.esize = sizeof(struct obj)}};
	struct trail_record rec;
	struct await { uint64_t key; int what; } *awaiting = NULL; /* per stream order: the
							 * site its next stack is for
							 * (1: the latest open get, 2:
							 * the last put, 3: the latest
							 * use after put) */
	size_t nstreams = 0, nobj_bad = 0;
	const struct trail_rstream *const *st;
	char err[512];
	uint32_t nids;
	int rc = 1;

	if (trail_reader_open(path, &C.r, err, sizeof(err))) {
		tool_err("report: %s", err);
		return 1;
	}
	nids = trail_reader_event_ids(C.r);
	nstreams = trail_reader_streams(C.r, &st);
	C.kind = malloc((nids + 1) * sizeof(int));
	C.field = malloc((nids + 1) * sizeof(int));
	awaiting = calloc(nstreams + 1, sizeof(*awaiting));
	if (!C.kind || !C.field || !awaiting)
		goto out;
	for (uint32_t i = 0; i < nids; i++)
		C.kind[i] = C.field[i] = -1;
	if (parse_spec(&C, spec, nids))
		goto out;
	printf("# refcount: %s\n", spec);
	while (trail_reader_next(C.r, &rec) > 0) {
		struct obj *o;
		uint64_t key;
		int k;

		if (rec.type != TRAIL_RT_EVENT || !rec.event || rec.stream->order >= nstreams)
			continue;
		if (!strcmp(rec.event->meta.provider, "ftrace") && !strcmp(rec.event->meta.name, "user_stack")) {
			struct await *a = &awaiting[rec.stream->order];
			struct obj *ao = a->what ? obj_of(&C, a->key) : NULL;
			struct site *s = a->what == 3 ? &C.uaps[C.after_put - 1].at
					 : !ao ? NULL : a->what == 2 ? &ao->last_put
					 : ao->nopen ? &ao->open[ao->nopen - 1] : NULL;
			uint16_t n = 0;

			if (s && rec.len >= 2) {
				memcpy(&n, rec.payload, 2);
				for (uint16_t i = 0; i < n && i < RC_STACK && 2u + (i + 1u) * 8u <= rec.len; i++)
					memcpy(&s->stack[s->nstack++], rec.payload + 2 + i * 8, 8);
			}
			a->what = 0;
			continue;
		}
		awaiting[rec.stream->order].what = 0; /* (a stack belongs to the record before it) */
		if (rec.event->id >= nids || (k = C.kind[rec.event->id]) < 0 ||
		    keymap_field(&rec, C.field[rec.event->id], &key) || !(o = obj_of(&C, key)))
			continue;
		if (k == 0 || k == 2) {
			if (o->dead && o->count <= 0) { /* use after put */
				struct uap *u = realloc(C.uaps, (C.after_put + 1) * sizeof(*u));

				if (!u)
					goto out;
				C.uaps = u;
				u += C.after_put++;
				u->key = key;
				snprintf(u->ev, sizeof(u->ev), "%s:%s", rec.event->meta.provider,
					 rec.event->meta.name);
				site_of(&u->at, &rec);
				u->put = o->last_put;
				awaiting[rec.stream->order] = (struct await){key, 3};
				if (k == 2)
					continue;
			}
			if (k == 2)
				continue;
			o->count++;
			o->gets++;
			if (o->nopen == RC_KEEP)
				memmove(&o->open[0], &o->open[1], sizeof(o->open[0]) * (RC_KEEP - 1)), o->nopen--;
			site_of(&o->open[o->nopen++], &rec);
			awaiting[rec.stream->order] = (struct await){key, 1};
			continue;
		}
		/* put */
		o->puts++;
		if (o->count <= 0) {
			C.underflows++;
			printf("put without a get: object 0x%llx: %s:%s at %llu.%06llu in %.16s-%u\n",
			       (unsigned long long)key, rec.event->meta.provider, rec.event->meta.name,
			       (unsigned long long)(rec.ts_ns / 1000000000ull),
			       (unsigned long long)(rec.ts_ns % 1000000000ull / 1000), rec.stream->comm,
			       rec.stream->tid);
			continue;
		}
		o->count--;
		if (o->nopen)
			o->nopen--; /* (the latest get is the one put back) */
		if (!o->count) {
			o->dead = 1;
			site_of(&o->last_put, &rec);
			awaiting[rec.stream->order] = (struct await){key, 2};
		}
	}
	for (uint64_t i = 0; i < C.after_put; i++) {
		char what[160];

		printf("use after put: object 0x%llx\n", (unsigned long long)C.uaps[i].key);
		snprintf(what, sizeof(what), "%s (after its last put)", C.uaps[i].ev);
		print_site(&C, what, &C.uaps[i].at);
		print_site(&C, "its last put", &C.uaps[i].put);
	}
	for (size_t i = 0; i < C.objs.cap; i++) {
		struct obj *o = keymap_at(&C.objs, i);

		if (!o || !o->count)
			continue;
		nobj_bad++;
		printf("unbalanced: object 0x%llx: count %lld (%llu get%s, %llu put%s)\n",
		       (unsigned long long)o->k.key, (long long)o->count, (unsigned long long)o->gets,
		       o->gets == 1 ? "" : "s", (unsigned long long)o->puts, o->puts == 1 ? "" : "s");
		for (int g = 0; g < o->nopen; g++)
			print_site(&C, "get not put back", &o->open[g]);
	}
	printf("# %zu object%s, %zu unbalanced, %llu use%s after put, %llu put%s without a get\n",
	       C.objs.n, C.objs.n == 1 ? "" : "s", nobj_bad, (unsigned long long)C.after_put, C.after_put == 1 ? "" : "s",
	       (unsigned long long)C.underflows, C.underflows == 1 ? "" : "s");
	rc = 0;
out:
	free(C.kind);
	free(C.field);
	keymap_free(&C.objs);
	free(C.uaps);
	free(awaiting);
	trail_reader_close(C.r);
	return rc;
}
