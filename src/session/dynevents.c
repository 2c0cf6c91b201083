/* SPDX-License-Identifier: MIT */
/*
 * dynevents.c - a session's dynamic events (session.h): its --probe
 * definitions, the kept ones of the user's dynamic_events file that it
 * selects or triggers on, and the USDT probes an sdt_ pattern names,
 * each compiled for the program or process (probes.c) into a spec line
 * of the session.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/filter.h"
#include "../common/registry.h"
#include "../common/spec.h"
#include "../common/util.h"
#include "../common/trigger.h"
#include "internal.h"
#include "probes.h"
#include "usdt.h"

/* an -e selects the definition's event */
/* ev, an -e made for a --probe event, owned by S */
static int probe_event_keep(struct trail_session *S, char *ev)
{
	char **g = realloc(S->probe_events, (size_t)(S->nprobe_events + 1) * sizeof(*g));

	if (!g)
		return -1;
	S->probe_events = g;
	g[S->nprobe_events++] = ev;
	return 0;
}

static int selected_event(struct trail_session *S, const struct probe_def *d)
{
	for (int i = 0; i < S->nevents; i++)
		if (trail__spec_match1(S->events[i], strlen(S->events[i]), d->group, d->event))
			return 1;
	return 0;
}

/* a kept definition this recording needs: an -e selects it, a -T
 * triggers on it, or a -T's enable/disable_event names it */
static int needed_event(struct trail_session *S, const struct probe_def *d)
{
	if (selected_event(S, d))
		return 1;
	for (int i = 0; i < S->ntriggers; i++) {
		const char *pat = S->triggers[i] + 9, *text = strchr(pat, ' ') + 1;
		struct trail_trigger t;
		struct trail_filter_err e;

		if (trail__spec_match1(pat, (size_t)(text - 1 - pat), d->group, d->event) ||
		    (!trail_trigger_parse(text, &t, &e) && t.target[0] &&
		     trail__spec_match1(t.target, strlen(t.target), d->group, d->event)))
			return 1;
	}
	return 0;
}

/* One compiled probe into the spec (once, whatever the targets): 0, 1 if
 * it was there already, -1. */
static int add_probe_line(struct trail_session *S, const struct probe_def *d, char *line)
{
	char **g, *name = NULL;

	for (int i = S->nfuncs_user; i < S->nfuncs; i++)
		if (!strcmp(S->funcs[i], line)) {
			free(line);
			return 1; /* there already */
		}
	g = realloc(S->funcs, (size_t)(S->nfuncs + 1) * sizeof(*g));
	if (!g)
		return -1;
	S->funcs = g;
	S->funcs[S->nfuncs++] = line;
	g = realloc(S->probe_names, (size_t)(S->nprobe_names + 1) * sizeof(*g));
	if (!g || asprintf(&name, "%s:%s", d->group, d->event) < 0)
		return -1;
	S->probe_names = g;
	S->probe_names[S->nprobe_names++] = name;
	return 0;
}

/* USDT probes (sdt_PROVIDER:NAME) an -e starting with sdt_ selects:
 * compiled into the spec like probes, their semaphores counted up while
 * recorded */
struct usdt_ctx {
	struct trail_session *S;
	struct ptarget *t;
};

static int usdt_one(void *arg, const char *obj, const struct usdt_probe *p)
{
	struct usdt_ctx *c = arg;
	char group[TRAIL_PROBE_MAX_EVNAME], *line;
	struct probe_def d;
	struct probe_err e;
	int hit = 0, r;

	snprintf(group, sizeof(group), "sdt_%s", p->provider);
	/* every one's name, for an -e that selects none */
	if (asprintf(&line, "%s:%s", group, p->name) >= 0) {
		char **g = NULL;
		int dup = 0;

		for (int i = 0; i < c->S->nusdt && !dup; i++)
			dup = !strcmp(c->S->usdt[i], line);
		if (!dup && (g = realloc(c->S->usdt, (size_t)(c->S->nusdt + 1) * sizeof(*g)))) {
			c->S->usdt = g;
			g[c->S->nusdt++] = line;
		} else {
			free(line);
		}
	}
	for (int i = 0; i < c->S->nevents && !hit; i++)
		hit = !strncmp(c->S->events[i], "sdt_", 4) &&
		      trail__spec_match1(c->S->events[i], strlen(c->S->events[i]), group, p->name);
	if (!hit)
		return 0;
	if ((r = ptarget_usdt_compile(c->t, obj, p, &d, &line, &e))) {
		trail_session_err(c->S, "%s: %s", obj, e.msg);
		return 1;
	}
	r = add_probe_line(c->S, &d, line);
	probe_def_free(&d);
	return r < 0;
}

/* Does an -e name USDT probes? Only a pattern that starts with sdt_
 * does ('all' and '*' do not, as with perf: a USDT probe costs a trap a
 * hit, and its semaphore makes the program prepare its arguments). */
static int wants_usdt(const struct trail_session *S)
{
	for (int i = 0; i < S->nevents; i++)
		if (!strncmp(S->events[i], "sdt_", 4))
			return 1;
	return 0;
}

/* -a: the user's registered processes (at most 64), to compile kept
 * definitions for (an eprobe needs its source event's fields, a probe
 * its function): the first that has what a definition names gives its
 * spec line, which every process runs (objects and events are named in
 * it, not addresses). */
#define ALL_TARGETS 64
struct targets {
	struct ptarget *t[ALL_TARGETS];
	int n;
};

static void all_targets(struct targets *T)
{
	char path[512], err[512];
	struct dirent *d;
	DIR *dir;
	int dfd;

	T->n = 0;
	if (trail__registry_path(path, sizeof(path)) || (dfd = trail__registry_open(path, 0)) < 0)
		return;
	if (!(dir = fdopendir(dfd))) {
		close(dfd);
		return;
	}
	while ((d = readdir(dir)) && T->n < ALL_TARGETS) {
		struct trail_reg reg;
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (*end || pid <= 0 || trail__registry_get(dfd, (pid_t)pid, &reg) ||
		    !trail__proc_alive((pid_t)pid, reg.start))
			continue;
		if (!ptarget_pid(&T->t[T->n], (pid_t)pid, err, sizeof(err)))
			T->n++;
		else
			ptarget_free(T->t[T->n]);
	}
	closedir(dir);
}

/* d compiled for t, or with t NULL for the first of T it compiles for */
static int compile_any(struct ptarget *t, const struct targets *T, const struct probe_def *d,
		       const struct probe_list *all, char **line, char **res, struct probe_err *e)
{
	int r;

	if (t || !T->n)
		return ptarget_compile(t, d, all, line, res, e);
	for (int k = 0; k < T->n; k++) {
		if (!(r = ptarget_compile(T->t[k], d, all, line, res, e)))
			return 0;
		free(*line);
		free(*res);
		*line = *res = NULL;
	}
	return ptarget_compile(NULL, d, all, line, res, e);
}

/*
 * The dynamic events of this recording: --probe definitions (recorded
 * without an -e), and those of the user's dynamic_events file an -e
 * selects, compiled for t (the program or a process; NULL: -a, raw
 * fetch-args only). A definition whose function t does not have is left
 * out, or an error for a --probe one (unless --allow-unknown: a library
 * loaded later).
 */
static int setup_probes(struct trail_session *S, struct ptarget *t, const char *where)
{
	struct probe_list all = {0};
	int ninline = 0, bad = 0, r, nkept = 0, nwatch = 0;
	char err[512], **kept;
	struct targets T = {.n = 0};

	if ((r = probes_read(&all, err, sizeof(err)))) {
		trail_session_err(S, "%s", err);
		return -1;
	}
	for (int i = 0; i < S->nprobes; i++) {
		struct probe_def d;
		struct probe_err e;
		int k;

		if (probe_parse(S->probes[i], &d, &e) || d.kind == '-') {
			if (d.kind == '-') {
				e.pos = 0;
				snprintf(e.msg, sizeof(e.msg), "--probe defines an event: delete with 'trail probe -d'");
				probe_def_free(&d);
			}
			trail_session_caret(S, TRAIL_DIAG_ERR, "probe", S->probes[i], (size_t)(e.pos < 0 ? 0 : e.pos), e.msg);
			probes_free(&all);
			return -2;
		}
		/* one name, one event (the kernel's "Event already exists"):
		 * an earlier --probe's, or a kept definition's */
		{
			char full[2 * TRAIL_PROBE_MAX_EVNAME + 2];

			snprintf(full, sizeof(full), "%s/%s", d.group, d.event);
			if ((k = probes_find(&all, full)) >= 0) {
				snprintf(e.msg, sizeof(e.msg), "event %s already exists%s", full,
					 k < all.n - ninline ? " (kept: 'trail probe -d' deletes it)" : "");
				trail_session_caret(S, TRAIL_DIAG_ERR, "probe", S->probes[i], d.named && d.kind != 'f' ? 2 : 0, e.msg);
				probe_def_free(&d);
				probes_free(&all);
				return -2;
			}
		}
		if (!selected_event(S, &d)) {
			char *ev = NULL;

			if (asprintf(&ev, "%s:%s", d.group, d.event) < 0)
				return -1;
			if (probe_event_keep(S, ev)) {
				free(ev);
				return -1;
			}
			if (trail__sess_add_event(S, ev))
				return -1;
		}
		if (probes_add(&all, &d))
			return -1;
		ninline++;
	}
	/* the --probe ones are last */
	kept = calloc((size_t)all.n + 1, sizeof(*kept));
	if (!kept)
		return -1;
	if (!t)
		all_targets(&T);
	for (int i = 0; i < all.n && !bad; i++) {
		const struct probe_def *d = &all.defs[i];
		int mine = i >= all.n - ninline;
		char *line = NULL, *res = NULL;
		const char *obj;
		struct probe_err e;

		if (!mine && !needed_event(S, d))
			continue;
		if (d->kind == 'u') {
			/* a user event: its definition for libtrail, which makes
			 * it before the program registers it (uevents.c) */
			if (asprintf(&line, "@uevent %s", d->sym) < 0 || add_probe_line(S, d, line) < 0)
				bad = 1;
			continue;
		}
		if ((obj = ptarget_static_event(t, d->group, d->event))) {
			trail_session_err(S, "probe %s:%s: %s declares a static event of that name: rename the "
				 "probe", d->group, d->event, obj);
			bad = 1;
			continue;
		}
		r = compile_any(t, &T, d, &all, &line, &res, &e);
		if (r == -ENOENT && (!mine || S->allow_unknown) && d->kind != 'e')
			r = mine ? ptarget_compile(NULL, d, &all, &line, &res, &e) : 1;
		free(res);
		if (r == 1) /* a kept definition this program has no function for */
			continue;
		if (r) {
			trail_session_caret(S, TRAIL_DIAG_ERR, "probe", d->text, (size_t)(e.pos < 0 ? 0 : e.pos), e.msg);
			if (r == -ENOENT && d->kind != 'e' && d->kind != 'w')
				trail_session_note(S, "  (in %s; --allow-unknown accepts functions of "
					"libraries loaded later)\n", where);
			bad = 1;
			free(line);
			continue;
		}
		/* x86's debug registers: four a thread, one a watchpoint */
		if (d->kind == 'w' && ++nwatch > 4) {
			trail_session_caret(S, TRAIL_DIAG_ERR, "probe", d->text, 0,
					    "a fifth watchpoint: x86 has 4 debug registers a thread, "
					    "each wprobe takes one");
			free(line);
			bad = 1;
			continue;
		}
		r = add_probe_line(S, d, line);
		if (r < 0)
			bad = 1;
		else if (!r && !mine)
			kept[nkept++] = S->probe_names[S->nprobe_names - 1];
	}
	if (!bad && nkept)
		probes_mark_in_use(kept, nkept);
	free(kept);
	for (int k = 0; k < T.n; k++)
		ptarget_free(T.t[k]);
	probes_free(&all);
	if (!bad && t && ptarget_usdt_each(t, usdt_one, &(struct usdt_ctx){S, t}))
		bad = 1;
	return bad ? -1 : 0;
}

int trail_session_probes(struct trail_session *S, pid_t pid, const char *exe)
{
	struct probe_list kept = {0};
	struct ptarget *t = NULL;
	char err[512] = "", where[64];
	int r;

	if (!S->nprobes && !wants_usdt(S) && (probes_read(&kept, err, sizeof(err)) || !kept.n)) {
		probes_free(&kept);
		return 0;
	}
	probes_free(&kept);
	if (pid)
		snprintf(where, sizeof(where), "process %d", (int)pid);
	r = pid ? ptarget_pid(&t, pid, err, sizeof(err))
		: exe ? ptarget_program(&t, exe, err, sizeof(err)) : 0;
	if (r) {
		trail_session_err(S, "%s", err);
		ptarget_free(t);
		return TRAIL_SESSION_FAIL;
	}
	r = setup_probes(S, t, pid ? where : exe ? exe : "every process");
	ptarget_free(t);
	return r == -2 ? TRAIL_SESSION_USAGE : r ? TRAIL_SESSION_FAIL : 0;
}

