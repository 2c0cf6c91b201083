/* SPDX-License-Identifier: MIT */
/*
 * mount-fs.c - `trail mount DIR` and `trail umount DIR`: the FUSE file
 * system (libfuse3's high-level API, multi-threaded) in the kernel
 * tracefs's shape. Paths resolve to a node (a directory, or one of the
 * files of an instance, of events/, of an event); a read is answered
 * from what the file held when it was opened (trace: a snapshot then),
 * trace_pipe excepted (it waits, and consumes); each write is one
 * command, parsed as the kernel parses it, and a bad one fails with
 * EINVAL and its caret error in error_log.
 */
#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse3/fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/common/filter.h"
#include "../../src/common/hist.h"
#include "../../src/common/meta.h"
#include "../../src/common/registry.h"
#include "../../src/common/spec.h"
#include "../../src/common/trigger.h"
#include "../../src/common/util.h"
#include "mount.h"
#include "opt.h"
#include "tool.h"

enum {
	F_AVAIL_EVENTS = 1, F_AVAIL_TRACERS, F_BUFFER_KB, F_CUR_TRACER, F_DYNAMIC, F_ERROR_LOG,
	F_FUNCTION_EVENTS, F_SET_EVENT, F_FTRACE_FILTER, F_FTRACE_NOTRACE, F_GRAPH_FUNC,
	F_SYNTHETIC, F_TRACE, F_TRACE_MARKER, F_TRACE_PIPE, F_TRACING_ON,
	/* events/ */
	F_EVENTS_ENABLE, F_GROUP_ENABLE, F_EV_ENABLE, F_EV_FILTER, F_EV_TRIGGER, F_EV_FORMAT,
	F_EV_ID, F_EV_HIST,
};

static const struct ftab {
	const char *name;
	int id;
	mode_t mode;
	int top; /* the top directory's only */
} inst_files[] = {
	{"available_events", F_AVAIL_EVENTS, 0444, 0},
	{"available_tracers", F_AVAIL_TRACERS, 0444, 0},
	{"buffer_size_kb", F_BUFFER_KB, 0644, 0},
	{"current_tracer", F_CUR_TRACER, 0644, 0},
	{"dynamic_events", F_DYNAMIC, 0644, 1},
	{"error_log", F_ERROR_LOG, 0644, 1},
	{"function_events", F_FUNCTION_EVENTS, 0644, 1},
	{"set_event", F_SET_EVENT, 0644, 0},
	{"set_ftrace_filter", F_FTRACE_FILTER, 0644, 0},
	{"set_ftrace_notrace", F_FTRACE_NOTRACE, 0644, 0},
	{"set_graph_function", F_GRAPH_FUNC, 0644, 0},
	{"synthetic_events", F_SYNTHETIC, 0644, 1},
	{"trace", F_TRACE, 0644, 0},
	{"trace_marker", F_TRACE_MARKER, 0220, 0},
	{"trace_pipe", F_TRACE_PIPE, 0444, 0},
	{"tracing_on", F_TRACING_ON, 0644, 0},
	{NULL, 0, 0, 0},
}, ev_files[] = {
	{"enable", F_EV_ENABLE, 0644, 0},
	{"filter", F_EV_FILTER, 0644, 0},
	{"format", F_EV_FORMAT, 0444, 0},
	{"hist", F_EV_HIST, 0444, 0},
	{"id", F_EV_ID, 0444, 0},
	{"trigger", F_EV_TRIGGER, 0644, 0},
	{NULL, 0, 0, 0},
};

enum { K_ROOT = 1, K_INSTANCES, K_PERPID, K_EVENTS, K_GROUP, K_EVENT, K_FILE };

struct node {
	int kind, file;
	mode_t mode;
	struct mnt_inst *I;
	char group[128], event[256];
};

struct fh {
	struct node n;
	char *buf; /* what a read returns */
	size_t len;
	int flags;
	size_t poff; /* trace_pipe: what was returned of buf */
	pthread_mutex_t pipe; /* trace_pipe: one reader of the handle at once */
};

static time_t mnt_time;

/* ------------------------------------------------------------- paths */

static int group_exists(const char *g)
{
	for (int i = 0; i < mnt.nevs; i++)
		if (!strcmp(mnt.evs[i].group, g))
			return 1;
	return 0;
}

static int pid_registered(pid_t pid)
{
	char path[512];
	struct trail_reg reg;
	int dfd, ok = 0;

	if (trail__registry_path(path, sizeof(path)) || (dfd = trail__registry_open(path, 0)) < 0)
		return 0;
	ok = !trail__registry_get(dfd, pid, &reg) && trail__proc_alive(pid, reg.start);
	close(dfd);
	return ok;
}

static const struct ftab *ftab_find(const struct ftab *t, const char *name)
{
	for (; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

/* path to node (under mnt.lock); -ENOENT */
static int resolve(const char *path, struct node *n)
{
	char buf[1024], *c[8], *save = NULL;
	int nc = 0, k = 0;

	memset(n, 0, sizeof(*n));
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save))
		if (nc < 8)
			c[nc++] = t;
		else
			return -ENOENT;
	n->I = mnt.inst[0];
	if (nc && (!strcmp(c[0], "instances") || !strcmp(c[0], "per_pid"))) {
		int perpid = c[0][0] == 'p';

		if (nc == 1) {
			n->kind = perpid ? K_PERPID : K_INSTANCES;
			return 0;
		}
		n->I = mnt_inst_find(c[1], perpid);
		if (!n->I && perpid) {
			char *end;
			long pid = strtol(c[1], &end, 10);

			if (*end || pid <= 0 || !pid_registered((pid_t)pid))
				return -ENOENT;
			if (!(n->I = mnt_inst_new(c[1], (pid_t)pid)))
				return -ENOMEM;
			{
				struct mnt_inst **ni = realloc(mnt.inst, (size_t)(mnt.ninst + 1) *
									  sizeof(*ni));
				if (!ni) {
					mnt_inst_free(n->I);
					return -ENOMEM;
				}
				mnt.inst = ni;
				mnt.inst[mnt.ninst++] = n->I;
			}
		}
		if (!n->I)
			return -ENOENT;
		k = 2;
	}
	if (k == nc) {
		n->kind = K_ROOT;
		return 0;
	}
	if (strcmp(c[k], "events")) {
		const struct ftab *f = ftab_find(inst_files, c[k]);

		if (!f || k + 1 != nc || (f->top && n->I != mnt.inst[0]))
			return -ENOENT;
		n->kind = K_FILE;
		n->file = f->id;
		n->mode = f->mode;
		return 0;
	}
	mnt_scan(0);
	if (++k == nc) {
		n->kind = K_EVENTS;
		return 0;
	}
	if (!strcmp(c[k], "enable") && k + 1 == nc) {
		n->kind = K_FILE;
		n->file = F_EVENTS_ENABLE;
		n->mode = 0644;
		return 0;
	}
	if (!group_exists(c[k]))
		return -ENOENT;
	snprintf(n->group, sizeof(n->group), "%s", c[k]);
	if (++k == nc) {
		n->kind = K_GROUP;
		return 0;
	}
	if (!strcmp(c[k], "enable") && k + 1 == nc) {
		n->kind = K_FILE;
		n->file = F_GROUP_ENABLE;
		n->mode = 0644;
		return 0;
	}
	if (!mnt_event(n->group, c[k]))
		return -ENOENT;
	snprintf(n->event, sizeof(n->event), "%s", c[k]);
	if (++k == nc) {
		n->kind = K_EVENT;
		return 0;
	}
	{
		const struct ftab *f = ftab_find(ev_files, c[k]);

		if (!f || k + 1 != nc)
			return -ENOENT;
		n->kind = K_FILE;
		n->file = f->id;
		n->mode = f->mode;
	}
	return 0;
}

/* --------------------------------------------------------- contents */

static char *dup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static int cmp_ev(const void *a, const void *b)
{
	const struct mnt_ev *x = *(const struct mnt_ev *const *)a, *y = *(const struct mnt_ev *const *)b;
	int c = strcmp(x->group, y->group);

	return c ? c : strcmp(x->name, y->name);
}

/* the events, sorted by group and name (the array only: free it) */
static int sorted_events(const struct mnt_ev ***out)
{
	const struct mnt_ev **v = malloc((size_t)(mnt.nevs ? mnt.nevs : 1) * sizeof(*v));

	if (!v)
		return -1;
	for (int i = 0; i < mnt.nevs; i++)
		v[i] = &mnt.evs[i];
	qsort(v, (size_t)mnt.nevs, sizeof(*v), cmp_ev);
	*out = v;
	return mnt.nevs;
}

static int ev_enabled(struct mnt_inst *I, const char *group, const char *name)
{
	char full[512];
	struct mnt_evset *s;

	snprintf(full, sizeof(full), "%s:%s", group, name);
	s = mnt_evset(I, full, 0);
	return s && s->enabled;
}

/* events/enable, events/G/enable: 0, 1, or X (some) */
static char *enable_text(struct mnt_inst *I, const char *group)
{
	int on = 0, off = 0;

	for (int i = 0; i < mnt.nevs; i++)
		if (!group || !strcmp(group, mnt.evs[i].group)) {
			if (ev_enabled(I, mnt.evs[i].group, mnt.evs[i].name))
				on++;
			else
				off++;
		}
	return strdup(on && off ? "X\n" : on ? "1\n" : "0\n");
}

static char *content(struct node *n, size_t *len)
{
	struct mnt_inst *I = n->I;
	char full[512], *s = NULL;
	size_t l = 0;
	FILE *f;

	snprintf(full, sizeof(full), "%s:%s", n->group, n->event);
	switch (n->file) {
	case F_AVAIL_EVENTS:
	case F_SET_EVENT: {
		const struct mnt_ev **v;
		int k;

		mnt_scan(n->file == F_AVAIL_EVENTS);
		if ((k = sorted_events(&v)) < 0 || !(f = open_memstream(&s, &l)))
			return NULL;
		for (int i = 0; i < k; i++)
			if (n->file == F_AVAIL_EVENTS || ev_enabled(I, v[i]->group, v[i]->name))
				fprintf(f, "%s:%s\n", v[i]->group, v[i]->name);
		free(v);
		fclose(f);
		break;
	}
	case F_AVAIL_TRACERS:
		s = strdup("function_graph function nop\n");
		break;
	case F_BUFFER_KB:
		s = dup_printf("%u\n", I->buffer_kb);
		break;
	case F_CUR_TRACER:
		s = dup_printf("%s\n", I->tracer ? I->tracer : "nop");
		break;
	case F_DYNAMIC:
	case F_FUNCTION_EVENTS:
		s = mnt_dyn_text(n->file == F_FUNCTION_EVENTS);
		break;
	case F_SYNTHETIC:
		s = mnt_synth_text();
		break;
	case F_ERROR_LOG:
		s = mnt_errlog_text();
		break;
	case F_FTRACE_FILTER:
	case F_FTRACE_NOTRACE:
	case F_GRAPH_FUNC: {
		int k = n->file - F_FTRACE_FILTER;

		if (!(f = open_memstream(&s, &l)))
			return NULL;
		if (!I->nfl[k] && k == MNT_FL_FILTER)
			fputs("#### all functions enabled ####\n", f);
		for (int i = 0; i < I->nfl[k]; i++)
			fprintf(f, "%s\n", I->fl[k][i]);
		fclose(f);
		break;
	}
	case F_TRACE:
		s = mnt_trace_text(I, 0, &l);
		break;
	case F_TRACING_ON:
		s = dup_printf("%d\n", I->tracing_on);
		break;
	case F_EVENTS_ENABLE:
		s = enable_text(I, NULL);
		break;
	case F_GROUP_ENABLE:
		s = enable_text(I, n->group);
		break;
	case F_EV_ENABLE:
		s = strdup(ev_enabled(I, n->group, n->event) ? "1\n" : "0\n");
		break;
	case F_EV_FILTER: {
		struct mnt_evset *e = mnt_evset(I, full, 0);

		s = e && e->filter ? dup_printf("%s\n", e->filter) : strdup("none\n");
		break;
	}
	case F_EV_TRIGGER: {
		struct mnt_evset *e = mnt_evset(I, full, 0);

		if (!(f = open_memstream(&s, &l)))
			return NULL;
		if (!e || !e->ntrig)
			fputs("# Available triggers:\n# traceon traceoff snapshot stacktrace "
			      "enable_event disable_event hist objtrace\n", f);
		for (int i = 0; e && i < e->ntrig; i++)
			fprintf(f, "%s\n", e->trig[i]);
		fclose(f);
		break;
	}
	case F_EV_FORMAT:
		s = mnt_format(mnt_event(n->group, n->event));
		break;
	case F_EV_ID:
		s = dup_printf("%u\n", mnt_event(n->group, n->event)->id);
		break;
	case F_EV_HIST:
		s = mnt_hist_text(I, full);
		break;
	default:
		s = strdup("");
	}
	if (s && n->file != F_TRACE)
		l = strlen(s);
	*len = s ? l : 0;
	return s;
}

/* ------------------------------------------------------------ writes */

/* each whitespace-separated word of text */
static int each_word(const char *text, int (*fn)(struct node *, const char *, void *), struct node *n,
		     void *arg)
{
	const char *p = text;
	char w[1024];
	int r;

	for (;;) {
		size_t k;

		p += strspn(p, " \t\n\r");
		if (!*p)
			return 0;
		k = strcspn(p, " \t\n\r");
		if (k >= sizeof(w)) {
			mnt_error("trail_mount", "word too long", text, p - text);
			return -EINVAL;
		}
		memcpy(w, p, k);
		w[k] = '\0';
		if ((r = fn(n, w, arg)))
			return r;
		p += k;
	}
}

static int set_event_word(struct node *n, const char *w, void *arg)
{
	int off = *w == '!', hits = 0;
	char pat[1100];
	const char *why;
	size_t bad;

	(void)arg;
	/* "GROUP:" is the kernel's whole group */
	snprintf(pat, sizeof(pat), "%s%s", w + off, w[strlen(w) - 1] == ':' ? "*" : "");
	if ((bad = trail__spec_check(pat, &why))) {
		mnt_error("set_event", why, w, (long)(bad - 1 + off));
		return -EINVAL;
	}
	for (int i = 0; i < mnt.nevs; i++) {
		char full[512];
		struct mnt_evset *s;

		if (!trail__spec_match1(pat, strlen(pat), mnt.evs[i].group, mnt.evs[i].name))
			continue;
		snprintf(full, sizeof(full), "%s:%s", mnt.evs[i].group, mnt.evs[i].name);
		if (!(s = mnt_evset(n->I, full, !off)))
			continue;
		s->enabled = !off;
		hits++;
	}
	if (!hits && !off) {
		mnt_error("set_event", "no such event", w, 0);
		return -EINVAL;
	}
	return 0;
}

/* "0" or "1" (and a newline) */
static int bool_value(const char *text, const char *sys)
{
	char v[8];
	size_t k;

	text += strspn(text, " \t\n");
	k = strcspn(text, " \t\n");
	if (k != 1 || text[k + strspn(text + k, " \t\n")] || (*text != '0' && *text != '1')) {
		snprintf(v, sizeof(v), "%.*s", (int)(k < 7 ? k : 7), text);
		mnt_error(sys, "the value is 0 or 1", v, 0);
		return -EINVAL;
	}
	return *text - '0';
}

static int enable_events(struct mnt_inst *I, const char *group, const char *event, int on)
{
	for (int i = 0; i < mnt.nevs; i++) {
		char full[512];
		struct mnt_evset *s;

		if ((group && strcmp(group, mnt.evs[i].group)) || (event && strcmp(event, mnt.evs[i].name)))
			continue;
		snprintf(full, sizeof(full), "%s:%s", mnt.evs[i].group, mnt.evs[i].name);
		if ((s = mnt_evset(I, full, on)))
			s->enabled = on;
	}
	return mnt_apply(I);
}

/* the text without its surrounding blanks, in a copy */
static char *trimmed(const char *text)
{
	size_t a = strspn(text, " \t\n\r"), b = strlen(text);

	while (b > a && strchr(" \t\n\r", text[b - 1]))
		b--;
	return strndup(text + a, b - a);
}

static int check_meta(const char *group, const char *event, struct trail_meta *m)
{
	struct mnt_ev *e = mnt_event(group, event);
	const char *why;

	return e && e->blob && !trail__meta_parse(e->blob, e->size, m, &why);
}

static int write_filter(struct node *n, const char *text)
{
	char full[512], *t = trimmed(text);
	struct trail_meta m;
	struct mnt_evset *s;
	int r = 0;

	snprintf(full, sizeof(full), "%s:%s", n->group, n->event);
	if (!t)
		return -ENOMEM;
	if (check_meta(n->group, n->event, &m) && strcmp(t, "0")) {
		struct trail_filter flt;
		struct trail_filter_err e;

		if (trail_filter_compile(t, &m, &flt, &e)) {
			mnt_error("event_filter", e.msg, t, e.pos);
			free(t);
			return -EINVAL;
		}
	}
	if (!(s = mnt_evset(n->I, full, 1))) {
		free(t);
		return -ENOMEM;
	}
	free(s->filter);
	s->filter = strcmp(t, "0") && *t ? t : (free(t), NULL);
	if (s->enabled)
		r = mnt_apply(n->I);
	return r;
}

/* a trigger without its count and condition, to find it for '!' */
static size_t trig_key(const char *t)
{
	const char *iff = strstr(t, " if ");
	size_t k = iff ? (size_t)(iff - t) : strlen(t);
	size_t d = k;

	while (d && t[d - 1] >= '0' && t[d - 1] <= '9')
		d--;
	if (d < k && d && t[d - 1] == ':')
		k = d - 1;
	while (k && t[k - 1] == ' ')
		k--;
	return k;
}

static int write_trigger(struct node *n, const char *text)
{
	char full[512], *t = trimmed(text);
	struct mnt_evset *s;
	struct trail_meta m;
	int have = check_meta(n->group, n->event, &m);

	snprintf(full, sizeof(full), "%s:%s", n->group, n->event);
	if (!t || !(s = mnt_evset(n->I, full, 1))) {
		free(t);
		return -ENOMEM;
	}
	if (!*t) {
		free(t);
		return 0;
	}
	if (*t == '!') {
		size_t k = trig_key(t + 1);

		for (int i = 0; i < s->ntrig; i++)
			if (trig_key(s->trig[i]) == k && !strncmp(s->trig[i], t + 1, k)) {
				free(s->trig[i]);
				memmove(&s->trig[i], &s->trig[i + 1],
					(size_t)(s->ntrig - i - 1) * sizeof(*s->trig));
				s->ntrig--;
				free(t);
				return mnt_apply(n->I);
			}
		mnt_error("trigger", "no such trigger on the event", t, 1);
		free(t);
		return -ENOENT;
	}
	{
		struct trail_trigger tr;
		struct trail_filter_err e;
		struct trail_filter flt;

		if (trail_trigger_parse(t, &tr, &e)) {
			mnt_error("trigger", e.msg, t, e.pos);
			free(t);
			return -EINVAL;
		}
		if (have && tr.cmd == TRAIL_TRIG_HIST) {
			struct trail_hist_spec h;

			if (trail_hist_parse(tr.hist, &m, &h, &e)) {
				mnt_error("hist", e.msg, t, (long)(tr.hist - t) + e.pos);
				free(t);
				return -EINVAL;
			}
		} else if (have && tr.filter && trail_filter_compile(tr.filter, &m, &flt, &e)) {
			mnt_error("trigger", e.msg, t, (long)(tr.filter - t) + e.pos);
			free(t);
			return -EINVAL;
		}
	}
	if (s->ntrig >= TRAIL_TRIG_PER_EVENT) {
		mnt_error("trigger", "too many triggers on the event (8)", t, 0);
		free(t);
		return -ENOSPC;
	}
	{
		char **nt = realloc(s->trig, (size_t)(s->ntrig + 1) * sizeof(*nt));

		if (!nt) {
			free(t);
			return -ENOMEM;
		}
		s->trig = nt;
		s->trig[s->ntrig++] = t;
	}
	return mnt_apply(n->I);
}

static int func_word(struct node *n, const char *w, void *arg)
{
	int k = *(int *)arg, off = *w == '!';
	struct mnt_inst *I = n->I;
	const char *why;
	size_t bad;

	if ((bad = trail__glob_check(w + off, strlen(w + off), &why))) {
		mnt_error("ftrace_filter", why, w, (long)(bad - 1 + off));
		return -EINVAL;
	}
	for (int i = 0; i < I->nfl[k]; i++)
		if (!strcmp(I->fl[k][i], w + off)) {
			if (off) {
				free(I->fl[k][i]);
				memmove(&I->fl[k][i], &I->fl[k][i + 1],
					(size_t)(I->nfl[k] - i - 1) * sizeof(char *));
				I->nfl[k]--;
			}
			return 0;
		}
	if (!off) {
		char **nl = realloc(I->fl[k], (size_t)(I->nfl[k] + 1) * sizeof(*nl));

		if (!nl || !(nl[I->nfl[k]] = strdup(w))) {
			if (nl)
				I->fl[k] = nl;
			return -ENOMEM;
		}
		I->fl[k] = nl;
		I->nfl[k]++;
	}
	return 0;
}

/* dynamic_events, function_events, synthetic_events: a definition a line */
static int each_line(const char *text, int file)
{
	const char *p = text;

	while (*p) {
		size_t k = strcspn(p, "\n");
		char *line = strndup(p, k), *t = line ? trimmed(line) : NULL;
		int r = 0;

		free(line);
		if (!t)
			return -ENOMEM;
		if (*t && *t != '#')
			r = file == F_SYNTHETIC ? mnt_synth_write(t)
						: mnt_dyn_write(t, file == F_FUNCTION_EVENTS);
		free(t);
		if (r)
			return r == -EEXIST || r == -ENOENT ? -EINVAL : r;
		p += k + !!p[k];
	}
	return 0;
}

static int do_write(struct fh *h, const char *text, size_t size)
{
	struct node *n = &h->n;
	struct mnt_inst *I = n->I;
	int r, k;

	switch (n->file) {
	case F_SET_EVENT:
		mnt_scan(0);
		if ((r = each_word(text, set_event_word, n, NULL)))
			return r;
		return mnt_apply(I);
	case F_EVENTS_ENABLE:
	case F_GROUP_ENABLE:
	case F_EV_ENABLE: {
		const char *sys = "enable";

		if ((r = bool_value(text, sys)) < 0)
			return r;
		return enable_events(I, n->file == F_EVENTS_ENABLE ? NULL : n->group,
				     n->file == F_EV_ENABLE ? n->event : NULL, r);
	}
	case F_EV_FILTER:
		return write_filter(n, text);
	case F_EV_TRIGGER:
		return write_trigger(n, text);
	case F_CUR_TRACER: {
		char *t = trimmed(text);

		if (!t)
			return -ENOMEM;
		if (strcmp(t, "nop") && strcmp(t, "function") && strcmp(t, "function_graph")) {
			mnt_error("current_tracer", "no such tracer (available_tracers)", t, 0);
			free(t);
			return -EINVAL;
		}
		free(I->tracer);
		I->tracer = strcmp(t, "nop") ? t : (free(t), NULL);
		return mnt_apply(I);
	}
	case F_FTRACE_FILTER:
	case F_FTRACE_NOTRACE:
	case F_GRAPH_FUNC:
		k = n->file - F_FTRACE_FILTER;
		if ((r = each_word(text, func_word, n, &k)))
			return r;
		return I->tracer ? mnt_apply(I) : 0;
	case F_TRACING_ON:
		if ((r = bool_value(text, "tracing_on")) < 0)
			return r;
		return mnt_set_tracing_on(I, r);
	case F_BUFFER_KB: {
		char *t = trimmed(text);
		unsigned long kb;

		if (!t)
			return -ENOMEM;
		if (tool_parse_ulong(t, NULL, 8, 4u << 20, &kb)) {
			mnt_error("buffer_size_kb", "a size in KiB, from 8 to 4194304", t, 0);
			free(t);
			return -EINVAL;
		}
		free(t);
		I->buffer_kb = (unsigned)kb;
		return I->child ? mnt_apply(I) : 0;
	}
	case F_TRACE:
		mnt_trace_clear(I);
		return 0;
	case F_TRACE_MARKER:
		mnt_marker(I, fuse_get_context()->pid, text, size);
		return 0;
	case F_DYNAMIC:
	case F_FUNCTION_EVENTS:
	case F_SYNTHETIC:
		return each_line(text, n->file);
	case F_ERROR_LOG:
		return 0;
	}
	return -EPERM;
}

/* O_TRUNC on a control file: what the kernel empties */
static int do_trunc(struct node *n)
{
	struct mnt_inst *I = n->I;
	int k;

	switch (n->file) {
	case F_SET_EVENT:
		for (int i = 0; i < I->nev; i++)
			I->ev[i].enabled = 0;
		return mnt_apply(I);
	case F_FTRACE_FILTER:
	case F_FTRACE_NOTRACE:
	case F_GRAPH_FUNC:
		k = n->file - F_FTRACE_FILTER;
		for (int i = 0; i < I->nfl[k]; i++)
			free(I->fl[k][i]);
		I->nfl[k] = 0;
		return 0; /* (applied by the write that follows, or at the next change) */
	case F_TRACE:
		mnt_trace_clear(I);
		return 0;
	case F_ERROR_LOG:
		for (unsigned i = 0; i < MNT_ERRLOG; i++) {
			free(mnt.errlog[i]);
			mnt.errlog[i] = NULL;
		}
		mnt.nerr = 0;
		return 0;
	case F_DYNAMIC:
	case F_FUNCTION_EVENTS:
		return mnt_dyn_clear(n->file == F_FUNCTION_EVENTS);
	case F_SYNTHETIC:
		return mnt_synth_clear();
	}
	return 0;
}

/* -------------------------------------------------------- operations */

static void fill_stat(struct stat *st, mode_t mode)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = mode;
	st->st_nlink = S_ISDIR(mode) ? 2 : 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_atime = st->st_mtime = st->st_ctime = mnt_time;
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct node n;
	int r;

	(void)fi;
	pthread_mutex_lock(&mnt.lock);
	r = resolve(path, &n);
	pthread_mutex_unlock(&mnt.lock);
	if (r)
		return r;
	fill_stat(st, n.kind == K_FILE ? S_IFREG | n.mode : S_IFDIR | 0755);
	return 0;
}

static void fill_files(void *buf, fuse_fill_dir_t fill, const struct ftab *t, int top)
{
	for (; t->name; t++)
		if (!t->top || top)
			fill(buf, t->name, NULL, 0, 0);
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags fl)
{
	struct node n;
	int r;

	(void)off;
	(void)fi;
	(void)fl;
	pthread_mutex_lock(&mnt.lock);
	if ((r = resolve(path, &n)) || n.kind == K_FILE) {
		pthread_mutex_unlock(&mnt.lock);
		return r ? r : -ENOTDIR;
	}
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	switch (n.kind) {
	case K_ROOT:
		fill_files(buf, fill, inst_files, n.I == mnt.inst[0]);
		fill(buf, "events", NULL, 0, 0);
		if (n.I == mnt.inst[0]) {
			fill(buf, "instances", NULL, 0, 0);
			fill(buf, "per_pid", NULL, 0, 0);
		}
		break;
	case K_INSTANCES:
		for (int i = 1; i < mnt.ninst; i++)
			if (!mnt.inst[i]->perpid)
				fill(buf, mnt.inst[i]->name, NULL, 0, 0);
		break;
	case K_PERPID: {
		char rp[512];
		struct dirent *d;
		DIR *D;
		int dfd;

		if (trail__registry_path(rp, sizeof(rp)) || (dfd = trail__registry_open(rp, 0)) < 0 ||
		    !(D = fdopendir(dfd)))
			break;
		while ((d = readdir(D))) {
			struct trail_reg reg;
			char *end;
			long pid = strtol(d->d_name, &end, 10);

			if (!*end && pid > 0 && !trail__registry_get(dfd, (pid_t)pid, &reg) &&
			    trail__proc_alive((pid_t)pid, reg.start))
				fill(buf, d->d_name, NULL, 0, 0);
		}
		closedir(D);
		break;
	}
	case K_EVENTS: {
		char **g;
		int k = mnt_groups(&g);

		fill(buf, "enable", NULL, 0, 0);
		for (int i = 0; i < k; i++)
			fill(buf, g[i], NULL, 0, 0);
		if (k >= 0)
			free(g);
		break;
	}
	case K_GROUP:
		fill(buf, "enable", NULL, 0, 0);
		for (int i = 0; i < mnt.nevs; i++)
			if (!strcmp(mnt.evs[i].group, n.group))
				fill(buf, mnt.evs[i].name, NULL, 0, 0);
		break;
	case K_EVENT:
		fill_files(buf, fill, ev_files, 0);
		break;
	}
	pthread_mutex_unlock(&mnt.lock);
	return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	int acc = fi->flags & O_ACCMODE, r;
	struct fh *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	pthread_mutex_lock(&mnt.lock);
	if ((r = resolve(path, &h->n)))
		goto fail;
	r = -EISDIR;
	if (h->n.kind != K_FILE)
		goto fail;
	r = -EACCES;
	if ((acc != O_WRONLY && !(h->n.mode & 0400)) || (acc != O_RDONLY && !(h->n.mode & 0200)))
		goto fail;
	h->flags = fi->flags;
	if (acc != O_RDONLY && (fi->flags & O_TRUNC) && (r = do_trunc(&h->n)))
		goto fail;
	if (acc != O_WRONLY && h->n.file != F_TRACE_PIPE &&
	    !(h->buf = content(&h->n, &h->len))) {
		r = -ENOMEM;
		goto fail;
	}
	h->n.I->opens++;
	pthread_mutex_unlock(&mnt.lock);
	pthread_mutex_init(&h->pipe, NULL);
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->direct_io = 1;
	if (h->n.file == F_TRACE_PIPE)
		fi->nonseekable = 1;
	return 0;
fail:
	pthread_mutex_unlock(&mnt.lock);
	free(h);
	return r;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	struct fh *h = (struct fh *)(uintptr_t)fi->fh;

	(void)path;
	pthread_mutex_lock(&mnt.lock);
	h->n.I->opens--;
	pthread_mutex_unlock(&mnt.lock);
	pthread_mutex_destroy(&h->pipe);
	free(h->buf);
	free(h);
	return 0;
}

static void msleep_intr(unsigned ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};

	nanosleep(&ts, NULL);
}

/* trace_pipe: what came since the mark, waiting for it */
static int pipe_read(struct fh *h, char *buf, size_t size, struct fuse_file_info *fi)
{
	for (;;) {
		if (h->buf && h->poff < h->len) {
			size_t k = h->len - h->poff < size ? h->len - h->poff : size;

			memcpy(buf, h->buf + h->poff, k);
			h->poff += k;
			return (int)k;
		}
		free(h->buf);
		h->buf = NULL;
		h->poff = 0;
		pthread_mutex_lock(&mnt.lock);
		h->buf = mnt_trace_text(h->n.I, 1, &h->len);
		pthread_mutex_unlock(&mnt.lock);
		if (h->buf && h->len)
			continue;
		if (fuse_interrupted())
			return -EINTR;
		if (fi->flags & O_NONBLOCK)
			return -EAGAIN;
		msleep_intr(50);
		if (fuse_interrupted())
			return -EINTR;
	}
}

static int op_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fh *h = (struct fh *)(uintptr_t)fi->fh;
	int r;

	(void)path;
	if (h->n.file == F_TRACE_PIPE) {
		/* (threads of a reader sharing the descriptor: one at a time) */
		pthread_mutex_lock(&h->pipe);
		r = pipe_read(h, buf, size, fi);
		pthread_mutex_unlock(&h->pipe);
		return r;
	}
	if (!h->buf || off < 0 || (size_t)off >= h->len)
		return 0;
	if (size > h->len - (size_t)off)
		size = h->len - (size_t)off;
	memcpy(buf, h->buf + off, size);
	return (int)size;
}

static int op_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fh *h = (struct fh *)(uintptr_t)fi->fh;
	char *text;
	int r;

	(void)path;
	(void)off;
	if (size > MNT_WRITE_MAX) {
		pthread_mutex_lock(&mnt.lock);
		mnt_error("trail_mount", "write too long: a write of at most 4096 bytes is one "
			  "command", NULL, -1);
		pthread_mutex_unlock(&mnt.lock);
		return -EINVAL;
	}
	if (memchr(buf, '\0', size)) {
		pthread_mutex_lock(&mnt.lock);
		mnt_error("trail_mount", "a NUL byte in the write", NULL, -1);
		pthread_mutex_unlock(&mnt.lock);
		return -EINVAL;
	}
	if (!(text = strndup(buf, size)))
		return -ENOMEM;
	pthread_mutex_lock(&mnt.lock);
	r = do_write(h, text, size);
	pthread_mutex_unlock(&mnt.lock);
	free(text);
	return r ? r : (int)size;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct node n;
	int r;

	(void)fi;
	if (size)
		return 0;
	pthread_mutex_lock(&mnt.lock);
	if (!(r = resolve(path, &n)))
		r = n.kind != K_FILE ? -EISDIR : !(n.mode & 0200) ? -EACCES : do_trunc(&n);
	pthread_mutex_unlock(&mnt.lock);
	return r;
}

static int valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64 || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == n;
}

static int op_mkdir(const char *path, mode_t mode)
{
	const char *name = path + strlen("/instances/");
	struct mnt_inst *I, **ni;
	int r = 0;

	(void)mode;
	if (strncmp(path, "/instances/", 11) || strchr(name, '/'))
		return -EPERM;
	if (!valid_name(name))
		return -EINVAL;
	pthread_mutex_lock(&mnt.lock);
	if (mnt_inst_find(name, 0))
		r = -EEXIST;
	else if (!(I = mnt_inst_new(name, 0)) ||
		 !(ni = realloc(mnt.inst, (size_t)(mnt.ninst + 1) * sizeof(*ni)))) {
		mnt_inst_free(I);
		r = -ENOMEM;
	} else {
		mnt.inst = ni;
		mnt.inst[mnt.ninst++] = I;
	}
	pthread_mutex_unlock(&mnt.lock);
	return r;
}

static int op_rmdir(const char *path)
{
	const char *name = path + strlen("/instances/");
	struct mnt_inst *I;
	int r = 0;

	if (strncmp(path, "/instances/", 11) || strchr(name, '/'))
		return -EPERM;
	pthread_mutex_lock(&mnt.lock);
	if (!(I = mnt_inst_find(name, 0)))
		r = -ENOENT;
	else if (I->opens)
		r = -EBUSY;
	else {
		for (int i = 1; i < mnt.ninst; i++)
			if (mnt.inst[i] == I) {
				memmove(&mnt.inst[i], &mnt.inst[i + 1],
					(size_t)(mnt.ninst - i - 1) * sizeof(*mnt.inst));
				mnt.ninst--;
				break;
			}
		mnt_inst_free(I);
	}
	pthread_mutex_unlock(&mnt.lock);
	return r;
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	cfg->direct_io = 1;
	cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 0;
	/* a reader's signal interrupts its blocked read (trace_pipe): libfuse
	 * sends the thread serving it SIGUSR1 (intr_handler, below) */
	cfg->intr = 1;
	cfg->intr_signal = SIGUSR1;
	return NULL;
}

/* the signal libfuse sends a thread whose request was interrupted: it
 * only breaks the thread's wait (nanosleep), fuse_interrupted() says why */
static void intr_handler(int sig)
{
	(void)sig;
}

/* unmounted: every recorder stopped (their processes detached) */
static void op_destroy(void *data)
{
	(void)data;
	pthread_mutex_lock(&mnt.lock);
	for (int i = 0; i < mnt.ninst; i++)
		mnt_stop(mnt.inst[i]);
	pthread_mutex_unlock(&mnt.lock);
}

static const struct fuse_operations ops = {
	.getattr = op_getattr,
	.readdir = op_readdir,
	.open = op_open,
	.release = op_release,
	.read = op_read,
	.write = op_write,
	.truncate = op_truncate,
	.mkdir = op_mkdir,
	.rmdir = op_rmdir,
	.init = op_init,
	.destroy = op_destroy,
};

struct loop_arg {
	struct fuse *f;
	int rc;
};

static void *loop_thread(void *arg)
{
	struct loop_arg *a = arg;
	struct fuse_loop_config *lc = fuse_loop_cfg_create();

	if (lc) {
		fuse_loop_cfg_set_max_threads(lc, 16);
		a->rc = fuse_loop_mt(a->f, lc);
		fuse_loop_cfg_destroy(lc);
	} else {
		a->rc = -1;
	}
	mnt_engine_quit();
	return NULL;
}

/* ------------------------------------------------------------ command */

static void rm_work(void)
{
	DIR *D = opendir(mnt.work);
	struct dirent *d;

	if (D) {
		while ((d = readdir(D)))
			if (d->d_name[0] != '.')
				unlinkat(dirfd(D), d->d_name, 0);
		closedir(D);
	}
	rmdir(mnt.work);
}

/* DIR: a directory, empty, not a trail mount already */
static int check_dir(const char *dir, char **real)
{
	struct stat st;
	struct dirent *d;
	DIR *D;
	FILE *mi;
	char line[4096];
	int n = 0;

	if (stat(dir, &st)) {
		tool_err("mount: %s: %s", dir, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		tool_err("mount: %s: not a directory", dir);
		return 1;
	}
	if (!(*real = realpath(dir, NULL))) {
		tool_err("mount: %s: %s", dir, strerror(errno));
		return 1;
	}
	if ((mi = fopen("/proc/self/mountinfo", "re"))) {
		while (fgets(line, sizeof(line), mi)) {
			char mp[4096], *dash = strstr(line, " - ");

			if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && !strcmp(mp, *real) &&
			    dash && !strncmp(dash + 3, "fuse.trail", 10)) {
				fclose(mi);
				tool_err("mount: %s: a trail mount is there already (trail umount %s)",
					 dir, dir);
				return 1;
			}
		}
		fclose(mi);
	}
	if (!(D = opendir(dir))) {
		tool_err("mount: %s: %s", dir, strerror(errno));
		return 1;
	}
	while ((d = readdir(D)))
		n += strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	closedir(D);
	if (n) {
		tool_err("mount: %s: not empty (a mount would hide what it holds)", dir);
		return 1;
	}
	return 0;
}

int mnt_run(const char *dir, int foreground, int debug)
{
	char *argv[8], tmpl[] = "/tmp/trail-mount-XXXXXX", *real = NULL;
	int argc = 0, rc = 1;
	struct fuse_args args;
	struct loop_arg la = {0};
	struct fuse *f;
	pthread_t t;

	if (check_dir(dir, &real)) {
		free(real);
		return 1;
	}
	if (access("/dev/fuse", R_OK | W_OK)) {
		tool_err("mount: /dev/fuse: %s (FUSE is needed: the fuse3 package, and /dev/fuse "
			 "in a container)", strerror(errno));
		free(real);
		return 1;
	}
	mnt.dir = real;
	mnt.self = realpath("/proc/self/exe", NULL);
	if (!mnt.self || !mkdtemp(tmpl) || !(mnt.work = strdup(tmpl))) {
		tool_err("mount: %s", strerror(errno));
		return 1;
	}
	mnt_time = time(NULL);
	if (!(mnt.inst = calloc(1, sizeof(*mnt.inst))) || !(mnt.inst[0] = mnt_inst_new("", 0))) {
		rm_work();
		return 1;
	}
	mnt.ninst = 1;
	argv[argc++] = "trail";
	argv[argc++] = "-o";
	argv[argc++] = "fsname=trail,subtype=trail,default_permissions";
	if (debug)
		argv[argc++] = "-d";
	argv[argc] = NULL;
	args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	if (!(f = fuse_new(&args, &ops, sizeof(ops), NULL))) {
		tool_err("mount: the FUSE file system could not be made");
		rm_work();
		return 1;
	}
	if (fuse_mount(f, real)) {
		tool_err("mount: %s: mounting failed (see the message above)", dir);
		fuse_destroy(f);
		rm_work();
		return 1;
	}
	if (fuse_daemonize(foreground) || fuse_set_signal_handlers(fuse_get_session(f))) {
		fuse_unmount(f);
		fuse_destroy(f);
		rm_work();
		return 1;
	}
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = intr_handler; /* (no SA_RESTART: the wait ends) */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	/* recorders are forked here (mnt_engine): they end with this thread */
	mnt_engine_init();
	la.f = f;
	if (pthread_create(&t, NULL, loop_thread, &la)) {
		fuse_unmount(f);
	} else {
		mnt_engine_run();
		pthread_join(t, NULL);
		rc = la.rc ? 1 : 0;
	}
	fuse_remove_signal_handlers(fuse_get_session(f));
	fuse_unmount(f);
	fuse_destroy(f); /* (op_destroy: the recorders stopped) */
	rm_work();
	return rc;
}

static const struct opt_cmd mount_opts = {
	.name = "mount",
	.intro = "Usage: trail mount [-f] DIR\n"
		 "       trail umount DIR\n"
		 "\n"
		 "Present the recordings of your processes that have libtrail loaded as the\n"
		 "kernel's tracefs at DIR (an empty directory; FUSE): available_events,\n"
		 "set_event, events/GROUP/EVENT/{enable,filter,trigger,format,id,hist},\n"
		 "dynamic_events, function_events, synthetic_events, current_tracer,\n"
		 "set_ftrace_filter, set_ftrace_notrace, set_graph_function, tracing_on,\n"
		 "buffer_size_kb, trace, trace_pipe, trace_marker, error_log, instances/NAME/\n"
		 "(mkdir, rmdir) and per_pid/PID/. Writes take effect in every such process,\n"
		 "running or started later; a bad write fails (EINVAL) with its error in\n"
		 "error_log. 'trail umount DIR' (or fusermount3 -u DIR) ends it.\n",
	.col = 22,
	.opts = (const struct opt[]){
		{'f', "foreground", OPT_NONE, NULL, "stay in the foreground (Ctrl-C unmounts)", 0, NULL},
		{'d', "debug", OPT_NONE, NULL, "FUSE's debug messages (implies -f)", 0, NULL},
		OPT_HELP_ROW,
		{0},
	},
};

int cmd_mount(int argc, char **argv)
{
	struct opt_parser op;
	int c, fg = 0, debug = 0;

	opt_init(&op, &mount_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END) {
		switch (c) {
		case OPT_EXIT:
			return op.status;
		case 'f':
			fg = 1;
			break;
		case 'd':
			debug = fg = 1;
			break;
		}
	}
	if (optind != argc - 1) {
		tool_usage_err("mount", optind >= argc ? "give the directory to mount on"
						       : "unexpected argument '%s'",
			       argv[optind + 1 < argc ? optind + 1 : optind]);
		return EXIT_USAGE;
	}
	return mnt_run(argv[optind], fg, debug);
}

static const struct opt_cmd umount_opts = {
	.name = "umount",
	.intro = "Usage: trail umount DIR\n\nEnd the trail mount at DIR (fusermount3 -u).\n",
	.col = 22,
	.opts = (const struct opt[]){OPT_HELP_ROW, {0}},
};

int cmd_umount(int argc, char **argv)
{
	struct opt_parser op;
	int c, st;
	pid_t pid;

	opt_init(&op, &umount_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END)
		if (c == OPT_EXIT)
			return op.status;
	if (optind != argc - 1) {
		tool_usage_err("umount", "give the directory a trail mount is on");
		return EXIT_USAGE;
	}
	pid = fork();
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-u", argv[optind], (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		tool_err("umount: fusermount3 not found (the fuse3 package)");
		return 1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
