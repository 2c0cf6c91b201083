/* SPDX-License-Identifier: MIT */
/*
 * check.c - a session against the programs' objects (session.h): every
 * -e selects an event some object declares (or a probe, USDT or
 * synthetic event of the session), every filter and trigger compiles for
 * the fields of each event it applies to, hist triggers link (variables,
 * onmatch, trace()), and the function tracer has functions to hook that
 * every -l/-g names. The objects are read with the ELF scanners beside
 * this file: a command's program and its libraries, or a running
 * process's mapped objects.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/arena.h"
#include "../common/filter.h"
#include "../common/hist.h"
#include "../common/htab.h"
#include "../common/meta.h"
#include "../common/rv.h"
#include "../common/spec.h"
#include "../common/synth.h"
#include "../common/trigger.h"
#include "../common/uevent.h"
#include "../common/util.h"
#include "../probe/probe.h"
#include "elfscan.h"
#include "funcscan.h"
#include "internal.h"
#include "session.h"

/* --------------------------------------------------------- event checks */

struct known {
	char **names;
	void **metas; /* each name's first description */
	size_t *sizes;
	size_t n, cap;
};

static int collect_event(const char *object, const void *blob, size_t size, void *arg)
{
	struct known *k = arg;
	struct trail_meta m;
	const char *why;
	char name[300];
	(void)object;

	if (trail__meta_parse(blob, size, &m, &why))
		return 0;
	snprintf(name, sizeof(name), "%s:%s", m.provider, m.name);
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->names[i], name))
			return 0;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 32;
		char **nn = realloc(k->names, cap * sizeof(*nn));
		void **nm = nn ? realloc(k->metas, cap * sizeof(*nm)) : NULL;
		size_t *ns = nm ? realloc(k->sizes, cap * sizeof(*ns)) : NULL;

		if (nn)
			k->names = nn;
		if (nm)
			k->metas = nm;
		if (!ns)
			return -ENOMEM;
		k->sizes = ns;
		k->cap = cap;
	}
	k->names[k->n] = strdup(name);
	k->metas[k->n] = malloc(size);
	if (!k->names[k->n] || !k->metas[k->n]) {
		free(k->names[k->n]);
		free(k->metas[k->n]);
		return -ENOMEM;
	}
	k->sizes[k->n] = size;
	memcpy(k->metas[k->n++], blob, size);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Events a program defines at run time, which no object declares: the
 * kernel's user_events ABI puts them in user_events (user_events_multi
 * for its MULTI_FORMAT ones), any system through trail/uevent.h, Python's
 * and Java's bindings. An -e naming one of the first two is taken as
 * such; one naming another system is when the program may define events
 * (runtime, below): an interpreter with a trail binding, or a program
 * linking libtrail itself.
 */
static int runtime_group(const char *e)
{
	const char *colon = strchr(e, ':');
	size_t g = colon ? (size_t)(colon - e) : 0;

	return (g == 11 && !memcmp(e, TRAIL_UE_PROVIDER, 11)) ||
	       (g == 17 && !memcmp(e, TRAIL_UE_MULTI_PROVIDER, 17));
}

/* does the ELF file at path name libtrail.so.1 (a DT_NEEDED entry's
 * string, in .dynstr, which the linker puts in the file's first pages)? */
static int links_libtrail(const char *path)
{
	static const char want[] = "libtrail.so.1";
	FILE *f = fopen(path, "rbe");
	char *buf = malloc(1 << 20);
	size_t n;
	int hit;

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return 0;
	}
	n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	hit = memmem(buf, n, want, sizeof(want)) != NULL; /* (its NUL too) */
	free(buf);
	return hit;
}

/* may the program at path, or the process pid (path NULL), define events
 * at run time? */
static int runtime_defines(const char *path, pid_t pid)
{
	char buf[4096], exe[PATH_MAX];
	const char *b;
	ssize_t n;
	FILE *f;
	int hit = 0;

	if (!path) {
		snprintf(buf, sizeof(buf), "/proc/%d/exe", (int)pid);
		if ((n = readlink(buf, exe, sizeof(exe) - 1)) <= 0)
			return 0;
		exe[n] = '\0';
		path = exe;
	}
	b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (!strncmp(b, "python", 6) || !strcmp(b, "java"))
		return 1;
	/* a program linking libtrail: its DT_NEEDED, as the loader would
	 * print them (a process: what it maps) */
	if (pid)
		snprintf(buf, sizeof(buf), "/proc/%d/maps", (int)pid);
	if (!(f = pid ? fopen(buf, "re") : NULL)) {
		if (pid)
			return 0;
		return links_libtrail(path);
	}
	while (!hit && fgets(buf, sizeof(buf), f))
		hit = strstr(buf, "/_trail") || strstr(buf, "libtrail_jni") != NULL;
	fclose(f);
	return hit;
}

/* Every -e must select something the program declares. */
static int check_events(struct trail_session *S, struct known *k, const char *where, pid_t pid)
{
	int bad = 0, rt = -1;

	for (int i = 0; i < S->nevents; i++) {
		const char *e = S->events[i];
		int hit = 0;

		for (size_t j = 0; j < k->n + (size_t)S->nprobe_names && !hit; j++) {
			char *name = j < k->n ? k->names[j] : S->probe_names[j - k->n];
			char *colon = strchr(name, ':');

			*colon = '\0';
			hit = trail__spec_match1(e, strlen(e), name, colon + 1);
			*colon = ':';
		}
		for (int j = 0; j < S->nsynths && !hit; j++)
			hit = trail__spec_match1(e, strlen(e), TRAIL_SYNTH_PROVIDER, S->sdefs[j].name);
		if (!hit && !runtime_group(e)) {
			if (rt < 0)
				rt = runtime_defines(pid ? NULL : S->cmd_path, pid);
			hit = rt;
		}
		if (!hit && !runtime_group(e)) {
			trail_session_err(S, "no event matches '%s' in %s", e, where);
			bad = 1;
		}
	}
	if (bad) {
		if (!k->n) {
			trail_session_note(S, "  %s declares no trail events (none were compiled in, "
				"or it was built without <trail/trail.h>)\n", where);
		} else {
			char **sorted = malloc(k->n * sizeof(*sorted));

			if (sorted) {
				memcpy(sorted, k->names, k->n * sizeof(*sorted));
				qsort(sorted, k->n, sizeof(*sorted), cmp_str);
			}
			trail_session_note(S, "  events there:");
			for (size_t j = 0; j < k->n; j++)
				trail_session_note(S, "%s%s", j % 6 ? " " : "\n    ",
					(sorted ? sorted : k->names)[j]);
			trail_session_note(S, "\n");
			free(sorted);
		}
		if (S->nusdt) {
			trail_session_note(S, "  USDT probes there:");
			for (int j = 0; j < S->nusdt; j++)
				trail_session_note(S, "%s%s", j % 4 ? " " : "\n    ", S->usdt[j]);
			trail_session_note(S, "\n");
		}
		trail_session_note(S, "  (--allow-unknown accepts events of libraries loaded later)\n");
	}
	return bad ? -1 : 0;
}

static void free_known(struct known *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->names[i]);
		free(k->metas[i]);
	}
	free(k->names);
	free(k->metas);
	free(k->sizes);
}

/* ---------------------------------------------------------------- filters */

/*
 * A filter at the source (-f, a -T's `if`) compiled for one event's
 * description: 0, or -1 with the caret shown under its position in shown
 * (the option as given; the filter's text starts at byte at). The common
 * timestamp is not known where the filter runs (the process stamps raw
 * clock ticks): report -F filters on it.
 */
static int source_filter(const struct trail_session *S, const char *what, const char *shown, size_t at, const void *blob,
			 size_t size, const char *name)
{
	const char *text = shown + at, *why, *ts;
	struct trail_filter *f = malloc(sizeof(*f));
	struct trail_meta *m = malloc(sizeof(*m));
	struct trail_filter_err e;
	char w[320];
	int r = -1;

	snprintf(w, sizeof(w), "%s %s", what, name);
	if (!f || !m)
		trail_session_err(S, "out of memory");
	else if (trail__meta_parse(blob, size, m, &why))
		trail_session_err(S, "%s: its description is damaged (%s)", name, why);
	else if (trail_filter_compile(text, m, f, &e))
		trail_session_caret(S, TRAIL_DIAG_ERR, w, shown, at + (size_t)e.pos, e.msg);
	else
		r = 0;
	for (uint16_t i = 0; !r && i < f->npreds; i++)
		if (f->p[i].field == TRAIL_FILTER_TS) {
			ts = strstr(text, "common_timestamp");
			trail_session_caret(S, TRAIL_DIAG_ERR, w, shown, at + (ts ? (size_t)(ts - text) : 0),
				   "common_timestamp is not known where the event fires: filter on it "
				   "in 'trail report -F'");
			r = -1;
		}
	free(f);
	free(m);
	return r;
}

/* fn(name, blob, size, arg) for each event we know of that pat[0..plen)
 * selects: the program's or process's (k), and the probe events compiled
 * in. Returns fn's first non-zero value, or 0. */
/* a kept user event's definition (an "@uevent DEF" line) as each_event
 * wants it */
static int uevent_each(const char *def, const char *pat, size_t plen,
		       int (*fn)(const char *name, const void *blob, size_t size, void *arg), void *arg)
{
	struct trail_ue_def *d = malloc(sizeof(*d));
	uint8_t *blob = malloc(65536);
	struct trail_filter_err e;
	char name[300];
	size_t n;
	int r = 0;

	if (d && blob && !trail_ue_parse(def, TRAIL_UE_EXT, d, &e) &&
	    trail__spec_match1(pat, plen, TRAIL_UE_PROVIDER, trail_ue_name(d)) &&
	    (n = trail_ue_meta(d, TRAIL_UE_PROVIDER, trail_ue_name(d), blob, 65536))) {
		snprintf(name, sizeof(name), "%s:%s", TRAIL_UE_PROVIDER, trail_ue_name(d));
		r = fn(name, blob, n, arg);
	}
	free(d);
	free(blob);
	return r;
}

static int each_event(struct trail_session *S, const struct known *k, const char *pat, size_t plen,
		      int (*fn)(const char *name, const void *blob, size_t size, void *arg),
		      void *arg)
{
	int r = 0;

	for (size_t j = 0; j < k->n && !r; j++) {
		char *colon = strchr(k->names[j], ':');
		int hit;

		*colon = '\0';
		hit = trail__spec_match1(pat, plen, k->names[j], colon + 1);
		*colon = ':';
		if (hit)
			r = fn(k->names[j], k->metas[j], k->sizes[j], arg);
	}
	for (int j = S->nfuncs_user; j < S->nfuncs && !r; j++) {
		const char *hex = S->funcs[j] + 7, *why;
		size_t n = strlen(hex);
		struct trail_probe p;
		struct trail_meta m;
		uint8_t *blob;
		char name[300];

		if (!strncmp(S->funcs[j], "@uevent ", 8)) {
			r = uevent_each(S->funcs[j] + 8, pat, plen, fn, arg);
			continue;
		}
		if (strncmp(S->funcs[j], "@probe ", 7) || !(blob = malloc(n / 2 + 1)))
			continue;
		if (trail_probe_unhex(hex, n, blob, n / 2 + 1) > 0 &&
		    !trail_probe_check(blob, n / 2, &p, &why) &&
		    !trail__meta_parse(p.meta, p.hdr->meta_size, &m, &why) &&
		    trail__spec_match1(pat, plen, m.provider, m.name)) {
			snprintf(name, sizeof(name), "%s:%s", m.provider, m.name);
			r = fn(name, p.meta, p.hdr->meta_size, arg);
		}
		free(blob);
	}
	for (int j = 0; j < S->nsynths && !r; j++) {
		uint8_t blob[TRAIL_SYNTH_MAX_META];
		size_t n = trail_synth_meta(&S->sdefs[j], blob, sizeof(blob));
		char name[300];

		if (n && trail__spec_match1(pat, plen, TRAIL_SYNTH_PROVIDER, S->sdefs[j].name)) {
			snprintf(name, sizeof(name), "%s:%s", TRAIL_SYNTH_PROVIDER, S->sdefs[j].name);
			r = fn(name, blob, n, arg);
		}
	}
	return r;
}

/* a -f line ("@filter PATTERN TEXT") against one event */
struct fline {
	const struct trail_session *S;
	const char *line;
};

static int filter_each(const char *name, const void *blob, size_t size, void *arg)
{
	const struct fline *f = arg;
	const char *text = strchr(f->line + 8, ' ') + 1;

	return source_filter(f->S, "filter for", text, 0, blob, size, name);
}

/* a trigger's `if FILTER` against one event (arg: struct tcheck) */
struct tcheck {
	const struct trail_session *S;
	const char *arg;  /* the -T as given */
	size_t off;       /* where the trigger starts in it */
	const struct trail_trigger *t;
	const char *text; /* the trigger's text (t->filter points into it) */
	int n;            /* events seen */
	uint64_t bytes;   /* hist: the tables' */
	struct hdefs *defs; /* hist: each (trigger, event), for the links */
};

/* a hist trigger on one event, kept for checking what links triggers:
 * variables of other events, onmatch's event, trace()'s synthetic event */
struct hdef {
	char event[300];
	struct trail_hist_spec *h;
	struct trail_hist_keyer *k;
	const char *arg; /* the -T, and where the hist text is in it */
	size_t at;
};
struct hdefs {
	struct hdef *d;
	size_t n;
};

/* a hist trigger against one event: its grammar, its `if`, its table's
 * size */
static int source_hist(struct tcheck *c, const void *blob, size_t size, const char *name)
{
	const struct trail_session *S = c->S;
	size_t at = c->off + (size_t)(c->t->hist - c->text);
	struct trail_hist_spec *h = malloc(sizeof(*h));
	struct trail_hist_keyer *k = malloc(sizeof(*k));
	struct trail_meta *m = malloc(sizeof(*m));
	struct trail_filter_err e;
	const char *why;
	char w[320];
	int r = -1;

	snprintf(w, sizeof(w), "trigger on %s", name);
	if (!h || !k || !m)
		trail_session_err(S, "out of memory");
	else if (trail__meta_parse(blob, size, m, &why))
		trail_session_err(S, "%s: its description is damaged (%s)", name, why);
	else if (trail_hist_parse(c->t->hist, m, h, &e))
		trail_session_caret(S, TRAIL_DIAG_ERR, w, c->arg, at + (size_t)e.pos, e.msg);
	else if (h->filter)
		r = source_filter(S, "trigger on", c->arg, at + (size_t)(h->filter - c->t->hist), blob,
				  size, name);
	else
		r = 0;
	if (!r) {
		struct hdef *g = realloc(c->defs->d, (c->defs->n + 1) * sizeof(*g));

		trail_hist_keyer(h, m, k);
		c->bytes += trail_hist_bytes(h, k, trail_htab_copies());
		if (!g) {
			trail_session_err(S, "out of memory");
			r = -1;
		} else {
			c->defs->d = g;
			g += c->defs->n++;
			snprintf(g->event, sizeof(g->event), "%s", name);
			g->h = h;
			g->k = k;
			g->arg = c->arg;
			g->at = at;
			h = NULL;
			k = NULL;
		}
	}
	free(h);
	free(k);
	free(m);
	return r;
}

static int count_each(const char *name, const void *blob, size_t size, void *arg)
{
	(void)name, (void)blob, (void)size;
	++*(int *)arg;
	return 0;
}

/* do hist triggers a and b have keys of one kind (the words they take)? */
static int same_keys(const struct trail_hist_keyer *a, const struct trail_hist_keyer *b)
{
	if (a->kwords != b->kwords || a->nkeys != b->nkeys)
		return 0;
	for (int q = 0; q < a->nkeys; q++)
		if (a->k[q].word != b->k[q].word || a->k[q].str != b->k[q].str)
			return 0;
	return 1;
}

/* the hist trigger of d (n of them) other than i that defines variable
 * name, on event (NULL: any): its index, or n */
static size_t defining(const struct hdef *d, size_t n, size_t i, const char *name,
		       const char *event)
{
	for (size_t j = 0; j < n; j++)
		if (j != i && (!event || !strcmp(d[j].event, event)) &&
		    trail_hist_var(d[j].h, name) >= 0)
			return j;
	return n;
}

/* The links between hist triggers (d, n of them): every variable read is
 * defined by a hist trigger of its event (with keys like the reader's),
 * onmatch's event exists, trace()'s synthetic event is defined with
 * params matching its fields. known: every event is known (no -a, no
 * --allow-unknown), so a variable nobody defines is an error. */
static int check_links(struct trail_session *S, const struct known *kn, struct hdef *d, size_t n,
		       int known)
{
	for (size_t i = 0; i < n; i++) {
		const struct trail_hist_spec *h = d[i].h;
		const char *onmatch = NULL;

		for (int q = 0; q < h->nact; q++)
			if (h->act[q].handler == TRAIL_HH_ONMATCH)
				onmatch = h->act[q].event;
		for (int r = 0; r < h->nrefs; r++) {
			const struct trail_hist_ref *ref = &h->refs[r];
			size_t hit = defining(d, n, i, ref->name, ref->event[0] ? ref->event : onmatch);

			/* (unqualified: onmatch's event first, then any) */
			if (hit == n && !ref->event[0])
				hit = defining(d, n, i, ref->name, NULL);
			if (hit == n) {
				if (!known)
					continue;
				trail_session_caret(S, TRAIL_DIAG_ERR, "trigger", d[i].arg, d[i].at + ref->pos,
					   "Couldn't find variable: no hist trigger (-T) defines it");
				return -1;
			}
			if (!same_keys(d[i].k, d[hit].k)) {
				const char *keys = strstr(h->text, "key");
				char msg[400];

				snprintf(msg, sizeof(msg), "the keys don't match those of %s's hist, "
					 "where $%s is", d[hit].event, ref->name);
				trail_session_caret(S, TRAIL_DIAG_ERR, "trigger", d[i].arg,
					   d[i].at + (keys ? (size_t)(keys - h->text) : 0), msg);
				return -1;
			}
		}
		for (int q = 0; q < h->nact; q++) {
			const struct trail_hist_action *a = &h->act[q];
			int s, cnt = 0;

			if (a->handler == TRAIL_HH_ONMATCH && known) {
				each_event(S, kn, a->event, strlen(a->event), count_each, &cnt);
				if (!cnt) {
					trail_session_caret(S, TRAIL_DIAG_ERR, "trigger", d[i].arg, d[i].at + a->pos + 8,
						   "onmatch(): no such event");
					return -1;
				}
			}
			if (a->action != TRAIL_HA_TRACE)
				continue;
			if ((s = trail__sess_synth_find(S, a->synth)) < 0) {
				trail_session_caret(S, TRAIL_DIAG_ERR, "trigger", d[i].arg, d[i].at + a->synth_pos,
					   "Synthetic event not found: define it (--synth 'NAME TYPE FIELD; "
					   "...' or trail synth)");
				return -1;
			}
			if (S->sdefs[s].nfields != a->nparams) {
				char msg[200];

				snprintf(msg, sizeof(msg), "Param count doesn't match synthetic event field "
					 "count (%s has %u)", a->synth, S->sdefs[s].nfields);
				trail_session_caret(S, TRAIL_DIAG_ERR, "trigger", d[i].arg, d[i].at + a->synth_pos, msg);
				return -1;
			}
			for (int p = 0; p < a->nparams; p++)
				if (S->sdefs[s].f[p].str !=
				    (a->p[p].kind == TRAIL_HX_FIELD && h->xf[a->p[p].idx].str)) {
					char msg[200];

					snprintf(msg, sizeof(msg), "Param type doesn't match synthetic event "
						 "field type (%s %s)", S->sdefs[s].f[p].type,
						 S->sdefs[s].f[p].name);
					trail_session_caret(S, TRAIL_DIAG_ERR, "trigger", d[i].arg, d[i].at + a->p[p].pos, msg);
					return -1;
				}
		}
	}
	return 0;
}

static void hdefs_free(struct hdefs *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->d[i].h);
		free(h->d[i].k);
	}
	free(h->d);
}

/* an objtrace trigger's FIELD: a number field of the event */
static int source_obj(struct tcheck *c, const void *blob, size_t size, const char *name)
{
	const struct trail_session *S = c->S;
	struct trail_meta *m = malloc(sizeof(*m));
	const char *why;
	char w[320];
	int r = -1;

	snprintf(w, sizeof(w), "trigger on %s", name);
	if (!m) {
		trail_session_err(S, "out of memory");
	} else if (trail__meta_parse(blob, size, m, &why)) {
		trail_session_err(S, "%s: its description is damaged (%s)", name, why);
	} else {
		uint32_t i;

		for (i = 0; i < m->nfields && strcmp(m->fields[i].name, c->t->obj_field); i++)
			;
		if (i == m->nfields)
			trail_session_caret(S, TRAIL_DIAG_ERR, w, c->arg, c->off + c->t->obj_field_pos, "Couldn't find field");
		else if (m->fields[i].kind != TRAIL_FK_INT)
			trail_session_caret(S, TRAIL_DIAG_ERR, w, c->arg, c->off + c->t->obj_field_pos,
				   c->t->cmd == TRAIL_TRIG_OBJTRACE ? "objtrace takes an integer field (an address)"
				   : "a wprobe trigger takes an integer field (a pointer)");
		else if (c->t->cmd != TRAIL_TRIG_OBJTRACE && m->fields[i].size != 8)
			/* (an address is 64 bits: a narrower field holds none) */
			trail_session_caret(S, TRAIL_DIAG_ERR, w, c->arg, c->off + c->t->obj_field_pos,
					    m->fields[i].size == 4 ? "a wprobe trigger takes a pointer: this field has 32 bits"
					    : m->fields[i].size == 2 ? "a wprobe trigger takes a pointer: this field has 16 bits"
					    : "a wprobe trigger takes a pointer: this field has 8 bits");
		else
			r = 0;
	}
	free(m);
	return r;
}

static int trigger_each(const char *name, const void *blob, size_t size, void *arg)
{
	struct tcheck *c = arg;

	c->n++;
	if (c->t->cmd == TRAIL_TRIG_HIST)
		return source_hist(c, blob, size, name);
	if ((c->t->cmd == TRAIL_TRIG_OBJTRACE ||
	     ((c->t->cmd == TRAIL_TRIG_SET_WPROBE || c->t->cmd == TRAIL_TRIG_CLEAR_WPROBE) &&
	      c->t->obj_field[0])) &&
	    source_obj(c, blob, size, name))
		return -1;
	if (!c->t->filter)
		return 0;
	return source_filter(c->S, "trigger on", c->arg, c->off + (size_t)(c->t->filter - c->text), blob,
			     size, name);
}

static int crowd_each(const char *name, const void *blob, size_t size, void *arg)
{
	const struct trail_session *S = arg;
	int n = trail__trigger_lines_on(S->triggers, S->ntriggers, name);
	(void)blob, (void)size;

	if (n <= TRAIL_TRIG_PER_EVENT)
		return 0;
	trail_session_err(S, "-T: %d triggers on %s, at most %d triggers per event", n, name,
		 TRAIL_TRIG_PER_EVENT);
	return -1;
}

/* libtrail keeps TRAIL_TRIG_PER_EVENT triggers an event, and leaves an
 * event with more off: refused here for the events known (k, the
 * probes) and those a -T names without a glob (a script's). */
static int check_crowd(struct trail_session *S, const struct known *k)
{
	char name[300];

	if (each_event(S, k, "*", 1, crowd_each, S))
		return -1;
	for (int i = 0; i < S->ntriggers; i++)
		if (trail__trigger_line_event(S->triggers[i], name, sizeof(name)) &&
		    crowd_each(name, NULL, 0, S))
			return -1;
	return 0;
}

/* Every -f and -T against the events they apply to that we know of (k,
 * the probe events): filters and trigger conditions compile for their
 * fields; a trigger's event and its enable/disable_event's exist (when
 * the events are known: not for a script, or with --allow-unknown). */
static int check_filters1(struct trail_session *S, const struct known *k, int known, uint64_t *histp,
			  struct hdefs *defs);

/* a monitor's label against one event (arg: struct rvcheck) */
struct rvcheck {
	struct trail_session *S;
	const struct trail_rv_mon *mon;
	const char *path, *label;
	int n;
};

static int rv_each(const char *name, const void *blob, size_t size, void *arg)
{
	struct rvcheck *c = arg;
	const char *filter, *why;
	size_t pl, fl;
	char what[600];
	int r = 0;

	c->n++;
	snprintf(what, sizeof(what), "rv model %s: event", c->path);
	trail_rv_label(c->label, &pl, &filter, &fl);
	if (fl) {
		char *shown = strdup(c->label);

		if (!shown)
			return trail_session_err(c->S, "out of memory") ? -1 : -1;
		shown[(size_t)(filter - c->label) + fl] = '\0'; /* (the ']' off) */
		r = source_filter(c->S, what, shown, (size_t)(filter - c->label), blob, size, name);
		free(shown);
		if (r)
			return -1;
	}
	if (strcmp(c->mon->per, "thread") && strcmp(c->mon->per, "process")) {
		struct trail_meta *m = malloc(sizeof(*m));
		uint32_t i = 0;

		if (!m || trail__meta_parse(blob, size, m, &why)) {
			free(m);
			return trail_session_err(c->S, "%s: its description is damaged", name) ? -1 : -1;
		}
		while (i < m->nfields && strcmp(m->fields[i].name, c->mon->per))
			i++;
		if (i == m->nfields)
			r = trail_session_err(c->S, "--per %s: event %s (in %s's model) has no field %s",
					      c->mon->per, name, c->mon->m.name, c->mon->per);
		else if (m->fields[i].kind == TRAIL_FK_FLOAT)
			r = trail_session_err(c->S, "--per %s: %s's field %s is a float: an instance key "
					      "is an integer or a string", c->mon->per, name, c->mon->per);
		free(m);
	}
	return r ? -1 : 0;
}

/* how many of the monitors' labels select the event name ("SYS:EVENT"):
 * libtrail keeps 8 an event (evx.h TRAIL_EVX_RV) */
static int rv_crowd_each(const char *name, const void *blob, size_t size, void *arg)
{
	struct trail_session *S = arg;
	const char *colon = strchr(name, ':');
	char prov[256];
	int n = 0;

	(void)blob, (void)size;
	if (!colon || (size_t)(colon - name) >= sizeof(prov))
		return 0;
	memcpy(prov, name, (size_t)(colon - name));
	prov[colon - name] = '\0';
	for (int i = 0; i < S->nrv; i++)
		for (int e = 0; e < S->rvs[i].m.nevents; e++) {
			const char *filter, *l = S->rvs[i].m.events[e];
			size_t pl, fl;

			trail_rv_label(l, &pl, &filter, &fl);
			n += memchr(l, ':', pl) ? trail__spec_match1(l, pl, prov, colon + 1)
						: trail__glob(l, pl, colon + 1, strlen(colon + 1));
		}
	if (n <= 8)
		return 0;
	trail_session_err(S, "--rv: %d events of the models are %s, at most 8 an event", n, name);
	return -1;
}

/* --rv: every event of every model is an event here (when the events
 * are known), its filter compiles for it, its key field is there */
static int check_rv(struct trail_session *S, const struct known *k)
{
	int known = (k->n || S->nprobe_names) && !S->allow_unknown && !S->all;

	if (S->nrv && each_event(S, k, "*", 1, rv_crowd_each, S))
		return -1;

	for (int i = 0; i < S->nrv; i++) {
		const struct trail_rv_mon *mon = &S->rvs[i];

		for (int e = 0; e < mon->m.nevents; e++) {
			struct rvcheck c = {S, mon, S->rv_paths[i], mon->m.events[e], 0};
			const char *filter;
			char pat[TRAIL_RV_NAME_MAX + 2];
			size_t pl, fl;

			/* (EVENT alone: an event of that name in any system) */
			trail_rv_label(c.label, &pl, &filter, &fl);
			snprintf(pat, sizeof(pat), "%s%.*s", memchr(c.label, ':', pl) ? "" : "*:", (int)pl,
				 c.label);
			if (each_event(S, k, pat, strlen(pat), rv_each, &c))
				return -1;
			if (known && !c.n) {
				trail_session_err(S, "--rv %s: event %.*s is none of the program's events "
						     "('trail list' shows them; --allow-unknown takes it)",
						  c.path, (int)pl, c.label);
				return -1;
			}
		}
	}
	return 0;
}

static int check_filters(struct trail_session *S, const struct known *k)
{
	int known = k->n || S->nprobe_names;
	uint64_t hist = 0;
	struct hdefs defs = {0};
	int r = check_crowd(S, k) ? -1 : check_filters1(S, k, known, &hist, &defs);

	if (!r)
		r = check_links(S, k, defs.d, defs.n, known && !S->allow_unknown && !S->all);
	if (!r)
		r = check_rv(S, k);
	hdefs_free(&defs);
	/* (checked once per process: the largest need) */
	if (!r && hist) {
		hist += TRAIL_HIST_DIR * sizeof(struct trail_hist_dir);
		if (hist > S->hist_bytes)
			S->hist_bytes = hist;
	}
	return r;
}

static int check_filters1(struct trail_session *S, const struct known *k, int known, uint64_t *histp,
			  struct hdefs *defs)
{
	uint64_t hist = 0;

	for (int i = 0; i < S->nfilters; i++) {
		const char *line = S->filters[i], *pat = line + 8;

		if (each_event(S, k, pat, (size_t)(strchr(pat, ' ') - pat), filter_each,
			       &(struct fline){S, line}))
			return -1;
	}
	for (int i = 0; i < S->ntriggers; i++) {
		const char *line = S->triggers[i], *pat = line + 9;
		const char *text = strchr(pat, ' ') + 1;
		struct trail_trigger t;
		struct trail_filter_err e;
		struct tcheck c = {.S = S, .arg = S->trig_args[i], .off = S->trig_off[i], .t = &t,
				   .text = text, .defs = defs};

		if (trail_trigger_parse(text, &t, &e))
			return -1; /* (checked when given) */
		if (each_event(S, k, pat, (size_t)(text - 1 - pat), trigger_each, &c))
			return -1;
		if (known && !c.n && !S->allow_unknown) {
			trail_session_caret(S, TRAIL_DIAG_ERR, "trigger", c.arg, 0, "no event of the program matches its event");
			return -1;
		}
		/* hist tables: as the events known want them; for events known
		 * only when they register, room for a table of 3 string keys */
		if (t.cmd == TRAIL_TRIG_HIST)
			hist += c.bytes + (c.n ? 0
					       : trail_htab_bytes(TRAIL_HIST_SIZE_DEFAULT,
								  3 * TRAIL_HIST_STR_MAX / 8 + 1,
								  TRAIL_HIST_MAX_VALS, 32,
								  3 + 3 * TRAIL_HIST_STR_MAX / 8 + 1,
								  trail_htab_copies()));
		if (t.target[0] && known && !S->allow_unknown) {
			int n = 0;

			each_event(S, k, t.target, strlen(t.target), count_each, &n);
			if (!n) {
				const char *at = strstr(c.arg + c.off, t.target);

				trail_session_caret(S, TRAIL_DIAG_ERR, "trigger", c.arg, at ? (size_t)(at - c.arg) : c.off,
					   "no event of the program matches it");
				return -1;
			}
		}
	}
	*histp = hist;
	return 0;
}

/* ------------------------------------------------------ function checks */

struct fcheck {
	struct trail_session *S;
	size_t sites, unusable;
	int *hits;        /* per S->funcs entry */
	int nbase;        /* S->funcs entries given by the user */
	size_t spec_room;
};

static int no_blob(const char *object, const void *blob, size_t size, void *arg)
{
	(void)object;
	(void)blob;
	(void)size;
	(void)arg;
	return 0;
}

static int fcheck_object(const char *object, void *arg)
{
	struct fcheck *fc = arg;
	struct trail_session *S = fc->S;
	struct fscan f;
	char err[256];

	if (funcscan_tool_object(object))
		return 0; /* what runs trail itself: never traced */
	/* names are all a check needs: no entry decoded */
	if (funcscan_file_opts(object, &f, err, sizeof(err),
			       FUNCSCAN_NAMES | (S->nest_libcall ? FUNCSCAN_LIBPLT : 0))) {
		funcscan_free(&f);
		return 0;
	}
	for (size_t k = 0; k < f.n; k++) {
		const struct fsite *site = &f.sites[k];

		if (!funcscan_usable(site)) {
			fc->unusable++;
			continue;
		}
		fc->sites++;
		if (!*site->symbol) /* traced (an unnamed one: when no -l narrows) */
			continue;
		for (int i = 0; i < fc->nbase; i++) {
			const char *pat = S->funcs[i] + 3; /* "@l GLOB" */
			int raw = trail__func_glob(pat, strlen(pat), site->symbol, object);
			int dem = trail__func_glob(pat, strlen(pat), site->name, object);

			if (!raw && !dem)
				continue;
			fc->hits[i]++;
			/* libtrail matches raw symbol names: a C++ function the
			 * pattern names demangled goes in by its mangled name */
			if (!raw && strcmp(site->symbol, site->name)) {
				const char *at = strrchr(pat, '@');
				char *line = NULL;

				if (asprintf(&line, "@%c %s%s", S->funcs[i][1], site->symbol,
					     at ? at : "") < 0)
					continue;
				if (strlen(line) + 1 > fc->spec_room) {
					free(line);
					continue;
				}
				fc->spec_room -= strlen(line) + 1;
				S->funcs[S->nfuncs++] = line;
			}
		}
	}
	funcscan_free(&f);
	return 0;
}

/* -p: the program (or process) must have patchable entries, and every -l
 * and -g pattern must name some of them. */
static int check_functions(struct trail_session *S, pid_t pid, const char *where)
{
	struct elfscan_opts o;
	struct fcheck fc = {.S = S, .nbase = S->nfuncs_user, .spec_room = TRAIL_SPEC_MAX / 2};
	char err[512] = "";
	char **grown;
	int r, bad = 0;

	grown = realloc(S->funcs, (size_t)(S->nfuncs + 4096) * sizeof(*S->funcs));
	fc.hits = calloc((size_t)S->nfuncs + 1, sizeof(int));
	if (!grown || !fc.hits)
		return -1;
	S->funcs = grown;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.object_cb = fcheck_object;
	r = pid ? elfscan_pid_opts(pid, no_blob, &fc, &o, err, sizeof(err))
		: elfscan_program_opts(S->cmd_path, no_blob, &fc, &o, err, sizeof(err));
	if (r < 0 && r != -ENOEXEC) {
		trail_session_err(S, "%s", err);
		free(fc.hits);
		return -1;
	}
	if (r == -ENOEXEC) { /* a script: what it runs is known when it runs */
		free(fc.hits);
		return 0;
	}
	if (!fc.sites && fc.unusable) {
		trail_session_err(S, "%s has patchable entries, but none trail can use (they start before "
			 "their function, as with -fpatchable-function-entry=N,M): build it with "
			 "-fpatchable-function-entry=5", where);
		free(fc.hits);
		return -1;
	}
	if (!fc.sites) {
		trail_session_err(S, "%s has no patchable function entries: build it with "
			 "-fpatchable-function-entry=5 (gcc or clang); nothing in it can be "
			 "function-traced", where);
		if (!pid)
			trail_session_note(S, "  (a launcher such as taskset or env: --allow-unknown "
					"traces the program it executes)\n");
		free(fc.hits);
		return -1;
	}
	for (int i = 0; i < fc.nbase; i++) {
		const char *pat = S->funcs[i] + 3;

		/* (an -n that matches nothing is harmless, unless it looks
		 * like an address: unnamed functions have names) */
		if (fc.hits[i] || (S->funcs[i][1] == 'n' && strncmp(pat, "0x", 2)))
			continue;
		trail_session_err(S, "no function matches '-%c %s' in %s (%zu functions can be traced: "
			 "'trail list -f' lists them)", S->funcs[i][1], pat, where, fc.sites);
		if (!strncmp(pat, "0x", 2))
			trail_session_note(S, "  (a function without a symbol is named sub_<its address "
					"in its file>, as 'trail list -f' shows: -%c 'sub_%s')\n",
				S->funcs[i][1], pat + 2);
		bad = 1;
	}
	if (bad)
		trail_session_note(S, "  (--allow-unknown accepts functions of libraries loaded later%s)\n",
			pid ? "" : ", and traces what a launcher such as taskset or env executes");
	free(fc.hits);
	return bad ? -1 : 0;
}


/* ------------------------------------------------------------ the checks */

int trail_session_check_program(struct trail_session *S)
{
	struct known k = {0};
	char err[512] = "";
	int r;

	if ((r = trail_session_probes(S, 0, S->cmd_path)))
		return r;
	if ((S->nevents || S->ntriggers || S->nrv) &&
	    (!S->allow_unknown || S->nfilters || S->ntriggers || S->nrv)) {
		r = elfscan_program(S->cmd_path, collect_event, &k, err, sizeof(err));
		if (r == -ENOEXEC) {
			/* a script: what it runs is known only when it runs */
			r = 0;
		} else if (r < 0) {
			trail_session_err(S, "%s", err);
			free_known(&k);
			return TRAIL_SESSION_FAIL;
		} else if (!S->allow_unknown) {
			r = check_events(S, &k, S->cmd_path, 0);
		}
		if (!r)
			r = check_filters(S, &k);
		free_known(&k);
		if (r)
			return TRAIL_SESSION_FAIL;
	}
	if (S->tracer && !S->allow_unknown && check_functions(S, 0, S->cmd_path))
		return TRAIL_SESSION_FAIL;
	return 0;
}

int trail_session_check_process(struct trail_session *S, pid_t pid, const char *comm)
{
	struct known k = {0};
	char where[128];
	int r;

	snprintf(where, sizeof(where), "process %d (%s)", (int)pid, comm);
	if (S->tracer && !S->allow_unknown && check_functions(S, pid, where))
		return -1;
	if (!S->allow_unknown && (S->nevents || S->ntriggers || S->nrv)) {
		char err[512] = "";

		r = elfscan_pid(pid, collect_event, &k, err, sizeof(err));
		if (r < 0) {
			free_known(&k);
			if (trail__proc_gone(pid))
				return -2;
			trail_session_err(S, "cannot read the objects of process %d: %s", (int)pid, err);
			return -1;
		}
		r = check_events(S, &k, where, pid);
		if (!r)
			r = check_filters(S, &k);
		free_known(&k);
		return r ? -1 : 0;
	}
	return check_filters(S, &k) ? -1 : 0;
}

int trail_session_check_all(struct trail_session *S)
{
	struct known none = {0};

	return check_filters(S, &none) ? TRAIL_SESSION_FAIL : 0;
}
