/* SPDX-License-Identifier: MIT */
/*
 * mount-events.c - the events the mount shows (available_events, the
 * events/ tree): those the user's processes with libtrail declare (read
 * from their objects, elfscan.c, each process once), the kept dynamic
 * events (trail probe's dynamic_events) and synthetic events (trail
 * synth's synthetic_events), each with an id for as long as the mount
 * lives; their format files; the dynamic_events, function_events and
 * synthetic_events files themselves; and error_log.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/common/clock.h"
#include "../../src/common/fetch.h"
#include "../../src/common/meta.h"
#include "../../src/common/registry.h"
#include "../../src/common/uevent.h"
#include "../../src/common/util.h"
#include "../../src/session/elfscan.h"
#include "../../src/session/probes.h"
#include "../../src/session/synths.h"
#include "mount.h"

struct mnt mnt = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct mnt_seen {
	pid_t pid;
	uint64_t start;
};

static struct mnt_ev *add_event(const char *group, const char *name, int kind)
{
	struct mnt_ev *e = mnt_event(group, name), *n;

	if (e)
		return e;
	if (!(n = realloc(mnt.evs, (size_t)(mnt.nevs + 1) * sizeof(*n))))
		return NULL;
	mnt.evs = n;
	e = &mnt.evs[mnt.nevs];
	memset(e, 0, sizeof(*e));
	e->group = strdup(group);
	e->name = strdup(name);
	if (!e->group || !e->name) {
		free(e->group);
		free(e->name);
		return NULL;
	}
	e->kind = kind;
	e->id = ++mnt.next_id;
	mnt.nevs++;
	return e;
}

struct mnt_ev *mnt_event(const char *group, const char *name)
{
	for (int i = 0; i < mnt.nevs; i++)
		if (!strcmp(mnt.evs[i].group, group) && !strcmp(mnt.evs[i].name, name))
			return &mnt.evs[i];
	return NULL;
}

static int collect(const char *object, const void *blob, size_t size, void *arg)
{
	struct trail_meta m;
	const char *why;
	struct mnt_ev *e;

	(void)object;
	(void)arg;
	if (trail__meta_parse(blob, size, &m, &why) || !(e = add_event(m.provider, m.name, 0)))
		return 0;
	if (!e->blob && (e->blob = malloc(size))) {
		memcpy(e->blob, blob, size);
		e->size = size;
	}
	return 0;
}

/* drop the kept events (kind) no longer defined */
static void prune(int kind, int (*defined)(const struct mnt_ev *, void *), void *arg)
{
	for (int i = 0; i < mnt.nevs;) {
		if (mnt.evs[i].kind != kind || defined(&mnt.evs[i], arg)) {
			i++;
			continue;
		}
		free(mnt.evs[i].group);
		free(mnt.evs[i].name);
		free(mnt.evs[i].blob);
		memmove(&mnt.evs[i], &mnt.evs[i + 1], (size_t)(mnt.nevs - i - 1) * sizeof(*mnt.evs));
		mnt.nevs--;
	}
}

static int probe_defined(const struct mnt_ev *e, void *arg)
{
	const struct probe_list *l = arg;

	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->defs[i].group, e->group) && !strcmp(l->defs[i].event, e->name))
			return 1;
	return 0;
}

static int synth_defined(const struct mnt_ev *e, void *arg)
{
	const struct synth_list *l = arg;

	return !strcmp(e->group, "synthetic") && synths_find(l, e->name) >= 0;
}

void mnt_scan(int force)
{
	uint64_t now = trail__mono_ns();
	struct probe_list pl = {0};
	struct synth_list sl = {0};
	char path[512], err[512];
	struct dirent *d;
	DIR *dir;
	int dfd;

	if (!force && now - mnt.scanned_ns < 1000000000ull && mnt.scanned_ns)
		return;
	mnt.scanned_ns = now;
	if (!trail__registry_path(path, sizeof(path)) && (dfd = trail__registry_open(path, 0)) >= 0 &&
	    (dir = fdopendir(dfd))) {
		while ((d = readdir(dir))) {
			struct trail_reg reg;
			char *end;
			long pid = strtol(d->d_name, &end, 10);
			int seen = 0;

			if (*end || pid <= 0 || trail__registry_get(dfd, (pid_t)pid, &reg) ||
			    !trail__proc_alive((pid_t)pid, reg.start))
				continue;
			for (int i = 0; i < mnt.nseen && !seen; i++)
				seen = mnt.seen[i].pid == pid && mnt.seen[i].start == reg.start;
			if (seen)
				continue;
			elfscan_pid((pid_t)pid, collect, NULL, err, sizeof(err));
			{
				struct mnt_seen *n = realloc(mnt.seen, (size_t)(mnt.nseen + 1) * sizeof(*n));

				if (n) {
					mnt.seen = n;
					n[mnt.nseen++] = (struct mnt_seen){(pid_t)pid, reg.start};
				}
			}
		}
		closedir(dir);
	}
	if (!probes_read(&pl, err, sizeof(err))) {
		prune('p', probe_defined, &pl);
		for (int i = 0; i < pl.n; i++)
			add_event(pl.defs[i].group, pl.defs[i].event, 'p');
	}
	probes_free(&pl);
	if (!synths_read(&sl, err, sizeof(err))) {
		prune('s', synth_defined, &sl);
		for (int i = 0; i < sl.n; i++) {
			struct mnt_ev *e = add_event("synthetic", sl.defs[i].name, 's');
			uint8_t buf[4096];
			size_t n = trail_synth_meta(&sl.defs[i], buf, sizeof(buf));

			if (e && n && !e->blob && (e->blob = malloc(n))) {
				memcpy(e->blob, buf, n);
				e->size = n;
			}
		}
	}
	synths_free(&sl);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int mnt_groups(char ***out)
{
	char **g = malloc((size_t)(mnt.nevs ? mnt.nevs : 1) * sizeof(*g));
	int n = 0;

	if (!g)
		return -1;
	for (int i = 0; i < mnt.nevs; i++)
		g[n++] = mnt.evs[i].group;
	qsort(g, (size_t)n, sizeof(*g), cmp_str);
	{
		int k = 0;

		for (int i = 0; i < n; i++)
			if (!k || strcmp(g[k - 1], g[i]))
				g[k++] = g[i];
		n = k;
	}
	*out = g;
	return n;
}

/* A kept probe's description, from the first process it compiles for. */
static void probe_blob(struct mnt_ev *e)
{
	struct probe_list all = {0};
	char err[512];
	int i;

	if (probes_read(&all, err, sizeof(err)))
		goto out;
	for (i = 0; i < all.n; i++)
		if (!strcmp(all.defs[i].group, e->group) && !strcmp(all.defs[i].event, e->name))
			break;
	if (i < all.n && all.defs[i].kind == 'u') {
		/* a user event's (u: line): its fields are its definition's */
		struct trail_ue_def *d = malloc(sizeof(*d));
		uint8_t *blob = malloc(65536);
		struct trail_filter_err fe;
		size_t n = 0;

		if (d && blob && !trail_ue_parse(all.defs[i].sym, TRAIL_UE_EXT, d, &fe))
			n = trail_ue_meta(d, e->group, e->name, blob, 65536);
		if (n && (e->blob = malloc(n))) {
			memcpy(e->blob, blob, n);
			e->size = n;
		}
		free(d);
		free(blob);
		goto out;
	}
	for (int k = 0; i < all.n && k < mnt.nseen && !e->blob; k++) {
		struct ptarget *t = NULL;
		char *line = NULL, *res = NULL;
		struct probe_err pe;

		if (!trail__proc_alive(mnt.seen[k].pid, mnt.seen[k].start) ||
		    ptarget_pid(&t, mnt.seen[k].pid, err, sizeof(err))) {
			ptarget_free(t);
			continue;
		}
		if (!ptarget_compile(t, &all.defs[i], &all, &line, &res, &pe)) {
			size_t len = (strcspn(line, "\n") - 7) / 2;
			uint8_t *blob = malloc(len);
			struct trail_probe p;
			const char *why;

			if (blob && trail_probe_unhex(line + 7, 2 * len, blob, len) == (long)len &&
			    !trail_probe_check(blob, len, &p, &why) && (e->blob = malloc(p.hdr->meta_size))) {
				memcpy(e->blob, p.meta, p.hdr->meta_size);
				e->size = p.hdr->meta_size;
			}
			free(blob);
		}
		free(line);
		free(res);
		ptarget_free(t);
	}
out:
	probes_free(&all);
}

/* the kernel's format file, at the offsets of trail's payload (as
 * `trail list -F` shows: a string is its u16 length, its bytes after) */
char *mnt_format(struct mnt_ev *e)
{
	struct trail_meta m;
	const char *why;
	char *buf = NULL, vars[512] = "", args[2048] = "", fmt[1024] = "";
	size_t len = 0, vl = 0, al = 0, fl = 0;
	uint32_t off = 0;
	FILE *f;

	if (!e->blob && e->kind == 'p')
		probe_blob(e);
	if (!(f = open_memstream(&buf, &len)))
		return NULL;
	fprintf(f, "name: %s\nID: %u\nformat:\n", e->name, e->id);
	if (!e->blob || trail__meta_parse(e->blob, e->size, &m, &why)) {
		fprintf(f, "\t(its fields are known when a process that has it runs)\n");
		m.nfields = 0;
	}
	for (uint32_t i = 0; i < m.nfields; i++) {
		const struct trail_field *fd = &m.fields[i];
		int var = fd->kind == TRAIL_FK_STRING || fd->kind == TRAIL_FK_SEQ;
		unsigned size = var ? 2 : fd->kind == TRAIL_FK_ARRAY ? (unsigned)fd->size * fd->count
								   : fd->size;
		char tb[64];
		const char *t = trail__field_type(fd, tb, sizeof(tb));

		fprintf(f, "\tfield:%s%s %s;\toffset:%u%s;\tsize:%u;\tsigned:%d;\n",
			var ? "__data_loc " : "", t, fd->name, off, vars, size,
			!!(fd->flags & TRAIL_FF_SIGNED));
		off += size;
		if (var && vl < sizeof(vars))
			vl += (size_t)snprintf(vars + vl, sizeof(vars) - vl, "+%s", fd->name);
		if (fl < sizeof(fmt))
			fl += (size_t)snprintf(fmt + fl, sizeof(fmt) - fl, "%s%s=%s", i ? " " : "",
					       fd->name, fd->kind == TRAIL_FK_STRING ? "%s"
						       : (fd->flags & TRAIL_FF_HEX) ? "0x%llx"
						       : (fd->flags & TRAIL_FF_SIGNED) ? "%lld" : "%llu");
		if (al < sizeof(args))
			al += (size_t)snprintf(args + al, sizeof(args) - al,
					       fd->kind == TRAIL_FK_STRING ? ", __get_str(%s)" : ", REC->%s",
					       fd->name);
	}
	fprintf(f, "\nprint fmt: \"%s\"%s\n", fmt, args);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ------------------------------------------------------------ error_log */

void mnt_error(const char *sys, const char *msg, const char *input, long pos)
{
	uint64_t ns = trail__mono_ns();
	char *s = NULL;
	int r;

	if (input)
		r = asprintf(&s, "[%5llu.%06llu] %s: error: %s\n  Command: %s\n%*s^\n",
			     (unsigned long long)(ns / 1000000000ull),
			     (unsigned long long)(ns % 1000000000ull / 1000), sys, msg, input,
			     (int)(11 + (pos < 0 ? 0 : pos)), "");
	else
		r = asprintf(&s, "[%5llu.%06llu] %s: error: %s\n",
			     (unsigned long long)(ns / 1000000000ull),
			     (unsigned long long)(ns % 1000000000ull / 1000), sys, msg);
	if (r < 0)
		return;
	free(mnt.errlog[mnt.nerr % MNT_ERRLOG]);
	mnt.errlog[mnt.nerr % MNT_ERRLOG] = s;
	mnt.nerr++;
}

char *mnt_errlog_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	unsigned first = mnt.nerr > MNT_ERRLOG ? mnt.nerr - MNT_ERRLOG : 0;

	if (!f)
		return NULL;
	for (unsigned i = first; i < mnt.nerr; i++)
		if (mnt.errlog[i % MNT_ERRLOG])
			fputs(mnt.errlog[i % MNT_ERRLOG], f);
	fclose(f);
	return buf;
}

struct mnt_evset *mnt_evset(struct mnt_inst *I, const char *name, int make)
{
	struct mnt_evset *n;

	for (int i = 0; i < I->nev; i++)
		if (!strcmp(I->ev[i].name, name))
			return &I->ev[i];
	if (!make || !(n = realloc(I->ev, (size_t)(I->nev + 1) * sizeof(*n))))
		return NULL;
	I->ev = n;
	n = &I->ev[I->nev];
	memset(n, 0, sizeof(*n));
	if (!(n->name = strdup(name)))
		return NULL;
	I->nev++;
	return n;
}

/* --------------------------------------------- dynamic and synthetic */

int mnt_event_in_use(const char *group, const char *name)
{
	char full[512];

	snprintf(full, sizeof(full), "%s:%s", group, name);
	for (int i = 0; i < mnt.ninst; i++) {
		struct mnt_evset *s = mnt_evset(mnt.inst[i], full, 0);

		if (s && (s->enabled || s->ntrig))
			return 1;
	}
	return 0;
}

char *mnt_dyn_text(int functions)
{
	struct probe_list l = {0};
	char err[512], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (!probes_read(&l, err, sizeof(err)))
		for (int i = 0; i < l.n; i++) {
			char *s;

			if (functions != (l.defs[i].kind == 'f'))
				continue;
			if ((s = functions ? NULL : probe_def_format(&l.defs[i])))
				fprintf(f, "%s\n", s);
			else if (functions)
				fprintf(f, "%s\n", l.defs[i].text);
			free(s);
		}
	probes_free(&l);
	fclose(f);
	return buf;
}

static int dyn_delete(struct probe_list *l, const char *group, const char *event, const char *line)
{
	int hit = 0;

	for (int i = 0; i < l->n;) {
		const struct probe_def *d = &l->defs[i];

		if ((*group && strcmp(group, d->group)) || strcmp(event, d->event)) {
			i++;
			continue;
		}
		if (mnt_event_in_use(d->group, d->event)) {
			mnt_error("dynamic_events", "the event is enabled (or has triggers) in an "
				  "instance: disable it first", line, 0);
			return -EBUSY;
		}
		probes_remove(l, i);
		hit = 1;
	}
	if (!hit) {
		mnt_error("dynamic_events", "no such event", line, 2);
		return -ENOENT;
	}
	return 0;
}

int mnt_dyn_write(const char *line, int functions)
{
	const char *sys_name = functions ? "function_events" : "dynamic_events", *sys = sys_name;
	struct probe_list l = {0};
	struct probe_def d;
	struct probe_err e;
	char err[512], full[300];
	int r = 0;

	if (probe_parse(line, &d, &e)) {
		mnt_error(sys, e.msg, line, e.pos);
		return -EINVAL;
	}
	if (functions && d.kind != 'f' && d.kind != '-') {
		probe_def_free(&d);
		mnt_error(sys, "a function event: FUNC(TYPE NAME, ...) (probes go to dynamic_events)",
			  line, 0);
		return -EINVAL;
	}
	if (probes_read(&l, err, sizeof(err))) {
		probe_def_free(&d);
		mnt_error(sys, err, NULL, -1);
		return -EIO;
	}
	snprintf(full, sizeof(full), "%s/%s", d.group, d.event);
	if (d.kind == 'e' && d.sym && strchr(d.sym, ':')) {
		/* the event it attaches to: one the mount knows */
		char sys[256];
		const char *colon = strchr(d.sym, ':');

		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - d.sym), d.sym);
		mnt_scan(0);
		if (!mnt_event(sys, colon + 1)) {
			mnt_error(sys_name, "Attached event does not exist", line, d.sym_pos);
			probe_def_free(&d);
			probes_free(&l);
			return -EINVAL;
		}
	}
	if (d.kind == '-') {
		r = dyn_delete(&l, d.group, d.event, line);
		probe_def_free(&d);
	} else if (probes_find(&l, full) >= 0 || mnt_event(d.group, d.event)) {
		mnt_error(sys, "Event already exists", line, d.named && d.kind != 'f' ? 2 : 0);
		probe_def_free(&d);
		r = -EEXIST;
	} else if (probes_add(&l, &d)) {
		probe_def_free(&d);
		r = -ENOMEM;
	}
	if (!r && probes_write(&l, err, sizeof(err))) {
		mnt_error(sys, err, NULL, -1);
		r = -EIO;
	}
	probes_free(&l);
	mnt_scan(1);
	return r;
}

int mnt_dyn_clear(int functions)
{
	struct probe_list l = {0};
	char err[512];
	int r = 0;

	if (probes_read(&l, err, sizeof(err)))
		return -EIO;
	for (int i = 0; i < l.n;) {
		if (functions != (l.defs[i].kind == 'f')) {
			i++;
			continue;
		}
		if (mnt_event_in_use(l.defs[i].group, l.defs[i].event)) {
			mnt_error(functions ? "function_events" : "dynamic_events",
				  "an event is enabled (or has triggers) in an instance: nothing "
				  "deleted", NULL, -1);
			r = -EBUSY;
			break;
		}
		probes_remove(&l, i);
	}
	if (!r && probes_write(&l, err, sizeof(err)))
		r = -EIO;
	probes_free(&l);
	mnt_scan(1);
	return r;
}

char *mnt_synth_text(void)
{
	struct synth_list l = {0};
	char err[512], *buf = NULL, text[2048];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (!synths_read(&l, err, sizeof(err)))
		for (int i = 0; i < l.n; i++) {
			trail_synth_describe(&l.defs[i], text, sizeof(text));
			fprintf(f, "%s\n", text);
		}
	synths_free(&l);
	fclose(f);
	return buf;
}

static int synth_save(struct synth_list *l)
{
	char err[512];
	int r = synths_write(l, err, sizeof(err)) ? -EIO : 0;

	if (r)
		mnt_error("synthetic_events", err, NULL, -1);
	mnt_scan(1);
	return r;
}

int mnt_synth_write(const char *line)
{
	struct synth_list l = {0};
	struct trail_synth d;
	struct trail_filter_err e;
	char err[512];
	int r = 0;

	if (synths_read(&l, err, sizeof(err)))
		return -EIO;
	if (*line == '!') {
		size_t nl = strcspn(line + 1, " \t");
		int i;

		for (i = 0; i < l.n; i++)
			if (strlen(l.defs[i].name) == nl && !strncmp(l.defs[i].name, line + 1, nl))
				break;
		if (i == l.n) {
			mnt_error("synthetic_events", "no such synthetic event", line, 1);
			r = -ENOENT;
		} else if (mnt_event_in_use("synthetic", l.defs[i].name)) {
			mnt_error("synthetic_events", "the event is enabled (or has triggers) in an "
				  "instance: disable it first", line, 1);
			r = -EBUSY;
		} else {
			memmove(&l.defs[i], &l.defs[i + 1], (size_t)(l.n - i - 1) * sizeof(*l.defs));
			l.n--;
			r = synth_save(&l);
		}
	} else if (trail_synth_parse(line, &d, &e)) {
		mnt_error("synthetic_events", e.msg, line, e.pos);
		r = -EINVAL;
	} else if (synths_find(&l, d.name) >= 0 || mnt_event("synthetic", d.name)) {
		mnt_error("synthetic_events", "Dyn event already exists", line,
			  (long)strspn(line, " \t"));
		r = -EEXIST;
	} else if (synths_add(&l, &d)) {
		r = -ENOMEM;
	} else {
		r = synth_save(&l);
	}
	synths_free(&l);
	return r;
}

int mnt_synth_clear(void)
{
	for (int i = 0; i < mnt.nevs; i++)
		if (mnt.evs[i].kind == 's' && mnt_event_in_use(mnt.evs[i].group, mnt.evs[i].name)) {
			mnt_error("synthetic_events", "an event is enabled (or has triggers) in an "
				  "instance: nothing deleted", NULL, -1);
			return -EBUSY;
		}
	return synth_save(&(struct synth_list){0});
}
