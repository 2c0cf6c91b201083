/* SPDX-License-Identifier: MIT */
/*
 * probes.c - dynamic events on the CLI side (probes.h): the definitions
 * file, and compiling definitions for a program's objects.
 */
#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/meta.h"
#include "../common/registry.h"
#include "../probe/dwarf.h"
#include "elfscan.h"
#include "funcscan.h"
#include "insnloc.h"
#include "usdt.h"
#include "probes.h"
#include "regfile.h"

/* ------------------------------------------------------ the definitions */

int probes_file(char *path, size_t n, int create)
{
	char err[1200];

	return trail__regfile_file("dynamic_events", path, n, create, err, sizeof(err));
}

int probes_add(struct probe_list *l, struct probe_def *d)
{
	struct probe_def *g = realloc(l->defs, (size_t)(l->n + 1) * sizeof(*g));

	if (!g)
		return -ENOMEM;
	l->defs = g;
	l->defs[l->n++] = *d;
	memset(d, 0, sizeof(*d));
	return 0;
}

void probes_free(struct probe_list *l)
{
	for (int i = 0; i < l->n; i++)
		probe_def_free(&l->defs[i]);
	free(l->defs);
	l->defs = NULL;
	l->n = 0;
}

void probes_remove(struct probe_list *l, int i)
{
	probe_def_free(&l->defs[i]);
	memmove(&l->defs[i], &l->defs[i + 1], (size_t)(l->n - i - 1) * sizeof(*l->defs));
	l->n--;
}

int probes_find(const struct probe_list *l, const char *name)
{
	const char *slash = strchr(name, '/');

	for (int i = 0; i < l->n; i++) {
		const struct probe_def *d = &l->defs[i];

		if (slash ? (!strncmp(d->group, name, (size_t)(slash - name)) &&
			     !d->group[slash - name] && !strcmp(d->event, slash + 1))
			  : !strcmp(d->event, name))
			return i;
	}
	return -1;
}

static int read_def(void *arg, const char *line, char *msg, size_t mn)
{
	struct probe_def d;
	struct probe_err e;

	if (probe_parse(line, &d, &e) || probes_add(arg, &d)) {
		snprintf(msg, mn, "%s", e.msg);
		return -1;
	}
	return 0;
}

int probes_read(struct probe_list *l, char *err, size_t en)
{
	return trail__regfile_read("dynamic_events", read_def, l, err, en);
}

static int format_def(void *arg, int i, char *buf, size_t n)
{
	const struct probe_list *l = arg;
	char *s;

	if (i >= l->n)
		return 0;
	s = probe_def_format(&l->defs[i]);
	snprintf(buf, n, "%s", s ? s : "");
	free(s);
	return 1;
}

int probes_write(const struct probe_list *l, char *err, size_t en)
{
	return trail__regfile_replace("dynamic_events", format_def, (void *)l, err, en);
}

/* ------------------------------------------------------------- in use
 *
 * A recording that compiled kept definitions in names them in the
 * registry directory's "dynamic_events.inuse.PID" until it ends; `trail
 * probe -d` refuses to delete them meanwhile (the kernel's EBUSY).
 */

static int inuse_path(char *buf, size_t n, pid_t pid)
{
	char path[600];
	int r = probes_file(path, sizeof(path), 1);

	if (r)
		return r;
	return (size_t)snprintf(buf, n, "%s.inuse.%d", path, (int)pid) >= n ? -ENAMETOOLONG : 0;
}

int probes_mark_in_use(char *const *names, int n)
{
	char path[640];
	FILE *f;

	if (!n || inuse_path(path, sizeof(path), getpid()) || !(f = fopen(path, "w")))
		return -1;
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n", names[i]);
	return fclose(f) ? -1 : 0;
}

void probes_unmark_in_use(void)
{
	char path[640];

	if (!inuse_path(path, sizeof(path), getpid()))
		unlink(path);
}

pid_t probes_in_use(const struct probe_def *d)
{
	char path[900], dir[600], line[300], want[300], *slash;
	struct dirent *de;
	pid_t found = 0;
	DIR *dp;

	if (probes_file(dir, sizeof(dir), 0) || !(slash = strrchr(dir, '/')))
		return 0;
	*slash = '\0';
	snprintf(want, sizeof(want), "%s:%s\n", d->group, d->event);
	if (!(dp = opendir(dir)))
		return 0;
	while (!found && (de = readdir(dp))) {
		long pid;
		FILE *f;

		if (strncmp(de->d_name, "dynamic_events.inuse.", 21))
			continue;
		pid = strtol(de->d_name + 21, NULL, 10);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (pid <= 0 || (kill((pid_t)pid, 0) && errno == ESRCH)) {
			unlink(path); /* its recording died */
			continue;
		}
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strcmp(line, want))
				found = (pid_t)pid;
		fclose(f);
	}
	closedir(dp);
	return found;
}

/* ------------------------------------------------------------ targets */

struct pobj {
	char *path;
	struct fscan fs;
	int scanned;            /* fs loaded (or tried) */
	struct probe_dwarf *dw;
	int dw_tried;
};

struct pstatic {
	char *obj;
	uint8_t *blob;
	size_t size;
	struct trail_meta m;
};

struct ptarget {
	struct pobj *objs;
	int nobjs;
	struct pstatic *evs;
	int nevs;
	int depth; /* eprobes on eprobes: how deep */
};

/* an object of the target, by the name the process's maps give it: the
 * path with its symbolic links resolved (`record -- ./app` names it
 * relatively), which the probes compiled for it name */
static int add_obj(const char *object, void *arg)
{
	struct ptarget *t = arg;
	char *path = realpath(object, NULL);
	struct pobj *g;

	if (!path && !(path = strdup(object)))
		return -ENOMEM;
	for (int i = 0; i < t->nobjs; i++)
		if (!strcmp(t->objs[i].path, path)) {
			free(path);
			return 0;
		}
	g = realloc(t->objs, (size_t)(t->nobjs + 1) * sizeof(*g));
	if (!g) {
		free(path);
		return -ENOMEM;
	}
	t->objs = g;
	memset(&g[t->nobjs], 0, sizeof(*g));
	g[t->nobjs].path = path;
	t->nobjs++;
	return 0;
}

static int add_static(const char *object, const void *blob, size_t size, void *arg)
{
	struct ptarget *t = arg;
	struct pstatic *g, *e;
	const char *why;

	g = realloc(t->evs, (size_t)(t->nevs + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	t->evs = g;
	e = &g[t->nevs];
	if (!(e->blob = malloc(size)))
		return -ENOMEM;
	memcpy(e->blob, blob, size);
	e->size = size;
	if (trail__meta_parse(e->blob, size, &e->m, &why) || !(e->obj = strdup(object))) {
		free(e->blob);
		return 0;
	}
	t->nevs++;
	return 0;
}

static int ptarget_new(struct ptarget **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

int ptarget_program(struct ptarget **t, const char *exe, char *err, size_t en)
{
	struct elfscan_opts o = {.sz = sizeof(o), .object_cb = add_obj};
	int r = ptarget_new(t);

	if (r)
		return r;
	r = elfscan_program_opts(exe, add_static, *t, &o, err, en);
	return r == -ENOEXEC || r > 0 ? 0 : r; /* a script: nothing known before it runs */
}

int ptarget_pid(struct ptarget **t, pid_t pid, char *err, size_t en)
{
	struct elfscan_opts o = {.sz = sizeof(o), .object_cb = add_obj};
	int r = ptarget_new(t);

	if (!r)
		r = elfscan_pid_opts(pid, add_static, *t, &o, err, en);
	return r < 0 ? r : 0;
}

int ptarget_object(struct ptarget **t, const char *path, char *err, size_t en)
{
	struct elfscan_opts o = {.sz = sizeof(o), .object_cb = add_obj};
	int r = ptarget_new(t);

	if (!r)
		r = elfscan_file_opts(path, add_static, *t, &o, err, en);
	return r < 0 ? r : 0;
}

void ptarget_free(struct ptarget *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nobjs; i++) {
		if (t->objs[i].scanned)
			funcscan_free(&t->objs[i].fs);
		if (t->objs[i].dw)
			probe_dwarf_close(t->objs[i].dw);
		free(t->objs[i].path);
	}
	for (int i = 0; i < t->nevs; i++) {
		free(t->evs[i].blob);
		free(t->evs[i].obj);
	}
	free(t->objs);
	free(t->evs);
	free(t);
}

const char *ptarget_static_event(struct ptarget *t, const char *sys, const char *event)
{
	for (int i = 0; t && i < t->nevs; i++)
		if (!strcmp(t->evs[i].m.provider, sys) && !strcmp(t->evs[i].m.name, event))
			return t->evs[i].obj;
	return NULL;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* does o match OBJ of OBJ:SYM (a path, or a file name)? */
static int obj_is(const struct pobj *o, const char *want)
{
	return !want || !strcmp(o->path, want) || !strcmp(base_name(o->path), base_name(want));
}

/* o's function sites, read once (none if its file cannot be read) */
static void pobj_scan(struct pobj *o)
{
	char err[256];

	if (o->scanned)
		return;
	o->scanned = 1;
	if (funcscan_file(o->path, &o->fs, err, sizeof(err)))
		o->fs.n = 0;
}

/* The patchable entry of function sym in t: its object and site. */
static int find_function(struct ptarget *t, const struct probe_def *d, struct pobj **obj,
			 const struct fsite **site, int *unusable)
{
	for (int i = 0; i < t->nobjs; i++) {
		struct pobj *o = &t->objs[i];

		if (!obj_is(o, d->obj))
			continue;
		pobj_scan(o);
		for (size_t k = 0; k < o->fs.n; k++) {
			const struct fsite *s = &o->fs.sites[k];

			if (strcmp(s->symbol, d->sym) && strcmp(s->name, d->sym))
				continue;
			if (!funcscan_usable(s)) {
				(*unusable)++;
				continue;
			}
			*obj = o;
			*site = s;
			return 0;
		}
	}
	return -ENOENT;
}


/* a wprobe's variable in path: its link-time address, size and symbol
 * type (STT_OBJECT, STT_FUNC...); 1 if found */
static int elf_var(const char *path, const char *name, uint64_t *val, uint64_t *size, int *type)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !(n = elf_strptr(e, sh.sh_link, sym.st_name)) || strcmp(n, name))
				continue;
			*val = sym.st_value;
			*size = sym.st_size;
			*type = GELF_ST_TYPE(sym.st_info);
			found = 1;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

/* @SYM: a global of one of t's objects, from its symbol table */
static int elf_sym(const char *path, const char *name, uint64_t *val)
{
	uint64_t size;
	int type;

	return elf_var(path, name, val, &size, &type);
}

/* w: the watched variable found in t's objects (its link-time address
 * into c->offset, its object into c->obj), the length and alignment
 * checked as x86's debug registers take them. 0, or an error in e. */
static int watch_target(struct ptarget *t, struct probe_def *c, char **objname, struct probe_err *e)
{
	uint64_t val = 0, size = 0, addr;
	int type = 0, found = 0;

	if (c->wtype == 1) {
		e->pos = c->wpos;
		snprintf(e->msg, sizeof(e->msg), "x86 cannot watch reads alone: watch rw@ (reads and "
			 "writes) or w@ (writes)");
		return -EINVAL;
	}
	if (!c->wabs) {
		for (int i = 0; t && i < t->nobjs && !found; i++)
			if (obj_is(&t->objs[i], c->obj) && elf_var(t->objs[i].path, c->sym, &val, &size, &type)) {
				found = 1;
				if (!(*objname = strdup(t->objs[i].path)))
					return -ENOMEM;
			}
		if (!found) {
			e->pos = c->sym_pos;
			snprintf(e->msg, sizeof(e->msg), "unknown variable '%.100s'%s", c->sym,
				 t && t->nobjs ? "" : " (a watched symbol needs the program: -- PROG or -P PID)");
			return -ENOENT;
		}
		if (type == STT_FUNC || type == STT_GNU_IFUNC) {
			e->pos = c->sym_pos;
			snprintf(e->msg, sizeof(e->msg), "'%.100s' is a function, not a variable", c->sym);
			return -EINVAL;
		}
		if (type != STT_OBJECT && type != STT_TLS && type != STT_NOTYPE) {
			e->pos = c->sym_pos;
			snprintf(e->msg, sizeof(e->msg), "'%.100s' is not a variable", c->sym);
			return -EINVAL;
		}
		if (type == STT_TLS) {
			e->pos = c->sym_pos;
			snprintf(e->msg, sizeof(e->msg), "'%.100s' is thread-local: each thread has its own "
				 "(watch one thread's by its address)", c->sym);
			return -EINVAL;
		}
		if (!c->wlen) {
			if (size != 1 && size != 2 && size != 4 && size != 8) {
				e->pos = c->sym_pos;
				snprintf(e->msg, sizeof(e->msg), "'%.100s' is %llu bytes: give the length to "
					 "watch, :1, :2, :4 or :8 (and +OFFS)", c->sym, (unsigned long long)size);
				return -EINVAL;
			}
			c->wlen = (int)size;
		}
		c->waddr = val + c->offset;
		c->wobj = *objname;
	} else {
		c->waddr = c->offset;
		if (!c->wlen)
			c->wlen = 8;
	}
	addr = c->waddr;
	if (addr != UINT64_MAX && (addr & (uint64_t)(c->wlen - 1))) {
		e->pos = c->sym_pos;
		snprintf(e->msg, sizeof(e->msg), "unaligned: 0x%llx is not a multiple of %d (x86 watches "
			 "1, 2, 4 or 8 bytes at an address aligned to their length)",
			 (unsigned long long)addr, c->wlen);
		return -EINVAL;
	}
	return 0;
}

struct symctx {
	struct ptarget *t;
	const char *objpath;
};

static int sym_addr(void *ctx, const char *sym, char *obj, size_t objn, uint64_t *vaddr)
{
	struct symctx *c = ctx;

	/* the probed function's object first, then the others */
	if (c->objpath && elf_sym(c->objpath, sym, vaddr)) {
		snprintf(obj, objn, "%s", "");
		return 0;
	}
	for (int i = 0; i < c->t->nobjs; i++)
		if (elf_sym(c->t->objs[i].path, sym, vaddr)) {
			snprintf(obj, objn, "%s", c->t->objs[i].path);
			return 0;
		}
	return -ENOENT;
}

static void err_at(struct probe_err *e, int pos, const char *fmt, const char *a, const char *b)
{
	e->pos = pos;
	snprintf(e->msg, sizeof(e->msg), fmt, a, b);
}

/* the event description an eprobe reads: a static event, or a probe's */
static int source_meta(struct ptarget *t, const struct probe_def *d, const struct probe_list *all,
		       struct trail_meta *m, uint8_t **owned, struct probe_err *e)
{
	const char *colon = strchr(d->sym, ':');
	char sys[128];
	const char *why;

	if (!colon || (size_t)(colon - d->sym) >= sizeof(sys)) {
		err_at(e, d->sym_pos, "bad source event '%s'%s", d->sym, "");
		return -EINVAL;
	}
	memcpy(sys, d->sym, (size_t)(colon - d->sym));
	sys[colon - d->sym] = '\0';
	for (int i = 0; t && i < t->nevs; i++)
		if (!strcmp(t->evs[i].m.provider, sys) && !strcmp(t->evs[i].m.name, colon + 1)) {
			*m = t->evs[i].m;
			return 0;
		}
	for (int i = 0; all && i < all->n; i++) {
		const struct probe_def *s = &all->defs[i];
		struct trail_probe p;
		char *line = NULL, *res = NULL;
		size_t len;
		int r;

		if (s == d || strcmp(s->group, sys) || strcmp(s->event, colon + 1))
			continue;
		if (t->depth > 8) {
			err_at(e, d->sym_pos, "eprobes nested too deep on '%s'%s", d->sym, "");
			return -EINVAL;
		}
		t->depth++;
		r = ptarget_compile(t, s, all, &line, &res, e);
		t->depth--;
		free(res);
		if (r) {
			free(line);
			err_at(e, d->sym_pos, "source event '%s' cannot be compiled here%s", d->sym, "");
			return -EINVAL;
		}
		/* (the first blob: a return probe at ret instructions has one
		 * per ret, all of one event) */
		len = (strcspn(line, "\n") - 7) / 2;
		*owned = malloc(len);
		if (!*owned || trail_probe_unhex(line + 7, len * 2, *owned, len) != (long)len ||
		    trail_probe_check(*owned, len, &p, &why)) {
			free(line);
			return -ENOMEM;
		}
		free(line);
		return trail__meta_parse(p.meta, p.hdr->meta_size, m, &why) ? -EPROTO : 0;
	}
	err_at(e, d->sym_pos, "unknown source event '%s'%s", d->sym,
	       t && t->nevs ? " (trail list shows the events)" : "");
	return -ENOENT;
}

/* "p:G/E /path/obj:func ..." -> "p:G/E func ...": the object was the
 * target's, not the user's */
/* Is d a probe at an instruction: PATH:OFFSET, or FUNC+OFFS past the
 * function's entry (its patchable entry may sit at +4, after endbr64) */
static int at_insn(struct ptarget *t, const struct probe_def *d)
{
	struct pobj *o;
	const struct fsite *s;
	int unusable = 0;

	if (d->fileoff || d->lined)
		return 1;
	if (d->kind != 'p' || !d->offset)
		return 0;
	return find_function(t, d, &o, &s, &unusable) || d->offset != s->addr - s->func;
}

/* o's DWARF, opened once (NULL: none) */
static struct probe_dwarf *pobj_dwarf(struct pobj *o)
{
	char err[256];

	if (!o->dw_tried) {
		o->dw_tried = 1;
		if (probe_dwarf_open(o->path, &o->dw, err, sizeof(err)))
			o->dw = NULL;
	}
	return o->dw;
}

/* A source line's instruction (FUNC:RLN, FILE:LINE): the first object
 * whose DWARF has it, its address and function there. 0, or -errno with
 * err. */
static int line_target(struct ptarget *t, const struct probe_def *d, struct insnloc *l,
		       const char **path, struct probe_dwarf **dw, char *err, size_t en)
{
	char fname[128], why[256] = "", w[256];
	uint64_t pc;
	int r = -ENOENT, any = 0, q, near = 0;

	for (int i = 0; i < t->nobjs && !*path; i++) {
		struct pobj *o = &t->objs[i];

		if (!obj_is(o, d->obj) || !pobj_dwarf(o))
			continue;
		any = 1;
		q = probe_dwarf_line(o->dw, d->srcfile ? NULL : d->sym, d->srcfile ? d->sym : NULL,
				     d->line, &pc, fname, sizeof(fname), w, sizeof(w));
		/* the reason from the object that has the function, if one does */
		if (q && (!why[0] || (q != -ESRCH && !near))) {
			snprintf(why, sizeof(why), "%s", w);
			near = q != -ESRCH;
		}
		if (q)
			continue;
		if ((r = insnloc_resolve_addr(o->path, pc, l, err, en)))
			return r;
		*path = o->path;
		*dw = o->dw;
	}
	if (!*path)
		snprintf(err, en, "%s", why[0] ? why : any ? "no such line in the debug info"
				     : "no debug info in the objects to find a line in (build with -g)");
	return *path ? 0 : r;
}

/* Where a probe at an instruction goes (insnloc.c): c's object and
 * function named by path, pt's address set. 0, or an entry probe: 1 (c
 * names the function: compiled as one), 2 (an unnamed function's: pt's
 * entry_addr set), or -errno with e. */
static int insn_target(struct ptarget *t, const struct probe_def *d, struct probe_def *c,
		       struct probe_target *pt, char **objname, char **symname,
		       struct probe_err *e)
{
	const char *path = NULL;
	struct probe_dwarf *dw = NULL;
	struct insnloc l;
	char err[400] = "";
	int r = -ENOENT;

	if (d->lined)
		r = line_target(t, d, &l, &path, &dw, err, sizeof(err));
	for (int i = 0; i < t->nobjs && !path && !d->lined; i++) {
		if (!obj_is(&t->objs[i], d->obj))
			continue;
		r = insnloc_resolve(t->objs[i].path, d->fileoff ? NULL : d->sym, d->offset, d->usdt,
				    &l, err, sizeof(err));
		if (r != -ENOENT) {
			path = t->objs[i].path;
			dw = r ? NULL : pobj_dwarf(&t->objs[i]);
		}
	}
	if (!path && !d->lined && d->obj && strchr(d->obj, '/')) { /* not loaded (yet): the file */
		path = d->obj;
		r = insnloc_resolve(path, d->fileoff ? NULL : d->sym, d->offset, d->usdt, &l, err,
				    sizeof(err));
	}
	if (!path || r) {
		if (!err[0])
			snprintf(err, sizeof(err), "unknown function '%s'", d->sym);
		e->pos = d->sym_pos;
		snprintf(e->msg, sizeof(e->msg), "%s", err);
		return r ? r : -ENOENT;
	}
	if (d->lined && !l.func_off && l.func[0]) {
		/* a line whose code starts at the function's entry: an entry
		 * probe (its parameters where they are at the entry) */
		if (!(*symname = strdup(l.func)))
			return -ENOMEM;
		c->sym = *symname;
		c->lined = 0;
		c->offset = 0;
		return 1;
	}
	/* not inside a function entry's hook area: the five bytes a jump
	 * or call takes there, and what a jump displaces (insnloc's file is
	 * path; its sites are t's object of that path) */
	for (int i = 0; i < t->nobjs; i++) {
		struct pobj *o = &t->objs[i];

		if (strcmp(o->path, path))
			continue;
		pobj_scan(o);
		for (size_t k = 0; k < o->fs.n; k++) {
			const struct fsite *s = &o->fs.sites[k];

			/* a function's first byte, or its patchable entry: the
			 * entry hook is there, so an entry probe (the same
			 * records as the probe by name); one without a name
			 * is found by its address (TRAIL_PROBE_F_ADDR) */
			if (!s->plt && funcscan_usable(s) && (l.addr == s->func || l.addr == s->addr)) {
				c->fileoff = 0;
				c->offset = 0;
				c->obj = *objname = strdup(path);
				if (!*objname)
					return -ENOMEM;
				if (*s->symbol) {
					c->sym = *symname = strdup(s->symbol);
					return *symname ? 1 : -ENOMEM;
				}
				pt->entry_addr = s->addr;
				pt->objpath = path;
				pt->dw = dw;
				return 2;
			}
			uint64_t end = s->addr + (s->reloc > FUNCSCAN_SITE_BYTES && !s->trap
							  ? s->reloc : FUNCSCAN_SITE_BYTES);

			/* (a whole function's entry takes a breakpoint when a
			 * probe is inside it) */
			if (!s->trap && !s->whole && l.addr > s->func && l.addr < end) {
				e->pos = d->sym_pos;
				snprintf(e->msg, sizeof(e->msg),
					 "%s+0x%llx is inside the bytes the hook of %s's entry takes "
					 "(the first probe-able instruction is at or past +0x%llx)",
					 l.func[0] ? l.func : d->sym,
					 (unsigned long long)l.func_off,
					 *s->name ? s->name : "its function",
					 (unsigned long long)(end - s->func));
				return -EINVAL;
			}
		}
	}
	pt->insn_addr = l.addr;
	pt->insn_jump = l.jump;
	pt->insn_vector = l.vector;
	pt->sema = d->sema;
	pt->objpath = path;
	pt->dw = dw; /* variables where they are at that address */
	/* FUNC+OFFS keeps its text; the symbol is the function's own; a
	 * source line becomes FUNC+OFFS (as perf probe shows it resolved) */
	if (!(*objname = strdup(path)) ||
	    !(*symname = strdup(l.func[0] && !d->fileoff ? l.func : d->sym)))
		return -ENOMEM;
	c->obj = *objname;
	c->sym = *symname;
	if (d->lined) {
		c->lined = 0;
		c->offset = l.func_off;
	}
	return 0;
}

static void strip_obj(char *text, const char *obj)
{
	size_t n = strlen(obj);
	char *p = strstr(text, obj);

	if (p && p[n] == ':')
		memmove(p, p + n + 1, strlen(p + n + 1) + 1);
}

/* Does an argument name a DWARF variable (under dereferences, maybe)? */
static int dwarf_named(const struct probe_arg *a)
{
	const char *f = a->fetch, *p = f ? strrchr(f, '(') : NULL;

	if (!f)
		return 0;
	f = p ? p + 1 : f;
	return isalpha((unsigned char)*f) || *f == '_';
}

/*
 * A return probe reading the function's variables: they are gone once it
 * has returned (the shadow stack's way), so the probe goes on each of its
 * ret instructions instead, as instruction probes with the variables where
 * DWARF puts them there (the kernel's kretinsn idea; not for a function
 * that may return through a tail call). $retval is %ax there, typed by the
 * function's return type. One @probe line per ret, the same event.
 */
static int kretinsn_compile(struct ptarget *t, const struct probe_def *d,
			    const struct probe_list *all, char **line, char **resolved,
			    struct probe_err *e)
{
	uint64_t rets[64];
	unsigned n = 0;
	struct pobj *o = NULL;
	struct probe_arg *args;
	char err[400] = "", rt[32] = "", *acc = NULL;
	int r = -ENOENT;

	for (int i = 0; i < t->nobjs && !o; i++) {
		char e2[400];
		int q;

		if (!obj_is(&t->objs[i], d->obj))
			continue;
		q = insnloc_returns(t->objs[i].path, d->sym, rets, 64, &n, e2, sizeof(e2));
		if (!q)
			o = &t->objs[i];
		if (q != -ENOENT || !err[0])
			snprintf(err, sizeof(err), "%s", e2);
		if (q != -ENOENT)
			r = q;
	}
	if (!o) {
		err_at(e, d->sym_pos, "%s%s", err[0] ? err : "unknown function", "");
		return r;
	}
	if (pobj_dwarf(o) && probe_dwarf_rettype(o->dw, d->sym, rt, sizeof(rt)))
		rt[0] = '\0';
	/* the arguments, the same at every ret; $retval: the return register */
	if (!(args = calloc((size_t)(d->nargs ? d->nargs : 1), sizeof(*args))))
		return -ENOMEM;
	for (int i = 0; i < d->nargs; i++) {
		const char *rv;

		args[i] = d->args[i];
		args[i].fetch = d->args[i].fetch ? strdup(d->args[i].fetch) : NULL;
		args[i].type = d->args[i].type ? strdup(d->args[i].type) : NULL;
		while (args[i].fetch && (rv = strstr(args[i].fetch, "$retval"))) {
			size_t at = (size_t)(rv - args[i].fetch);

			memcpy(args[i].fetch + at, "%ax", 3);
			memmove(args[i].fetch + at + 3, args[i].fetch + at + 7,
				strlen(args[i].fetch + at + 7) + 1);
			if (!args[i].type && rt[0] && strcmp(rt, "void"))
				args[i].type = strdup(rt);
		}
	}
	for (unsigned k = 0; k < n && !r; k++) {
		struct probe_def c = *d;
		char *li = NULL, *ri = NULL, *joined = NULL;

		c.kind = 'p';
		c.offset = rets[k];
		c.obj = o->path;
		c.args = args;
		if ((r = ptarget_compile(t, &c, all, &li, &ri, e)))
			break;
		if (!*resolved)
			*resolved = ri;
		else
			free(ri);
		if (acc && asprintf(&joined, "%s\n%s", acc, li) < 0)
			r = -ENOMEM;
		if (acc) {
			free(acc);
			free(li);
			acc = joined;
		} else {
			acc = li;
		}
	}
	for (int i = 0; i < d->nargs; i++) {
		free(args[i].fetch);
		free(args[i].type);
	}
	free(args);
	if (r) {
		free(acc);
		return r;
	}
	*line = acc;
	return 0;
}

int ptarget_compile(struct ptarget *t, const struct probe_def *d, const struct probe_list *all,
		    char **line, char **resolved, struct probe_err *e)
{
	struct ptarget none = {0};
	struct probe_def c = *d;
	struct probe_target pt = {0};
	struct symctx sc = {t, NULL};
	struct trail_meta *src = NULL;
	uint8_t *blob = NULL, *owned = NULL;
	char *objname = NULL, *symname = NULL;
	size_t len;
	int r;

	*line = *resolved = NULL;
	if (!t)
		t = &none;
	for (int i = 0; d->kind == 'r' && t->nobjs && i < d->nargs; i++)
		if (dwarf_named(&d->args[i]))
			return kretinsn_compile(t, d, all, line, resolved, e);
	sc.t = t;
	pt.sym_addr = sym_addr;
	pt.ctx = &sc;
	if (d->kind == 'w') {
		if ((r = watch_target(t, &c, &objname, e))) {
			free(objname);
			return r;
		}
		sc.objpath = c.wobj; /* (@SYM: the watched one's object first) */
	} else if (d->kind == 'e') {
		if (!(src = malloc(sizeof(*src))))
			return -ENOMEM;
		r = source_meta(t, d, all, src, &owned, e);
		if (r) {
			free(src);
			return r;
		}
		pt.src = src;
	} else if (at_insn(t, d) && (r = insn_target(t, d, &c, &pt, &objname, &symname, e)) != 1) {
		if (r < 0)
			return r;
		sc.objpath = pt.objpath; /* (2: an unnamed function's entry) */
	} else if (t->nobjs) {
		struct pobj *o = NULL;
		const struct fsite *s = NULL;
		int unusable = 0;

		d = &c; /* (a source line at the function's entry: its function) */
		if (find_function(t, d, &o, &s, &unusable)) {
			uint64_t v;

			/* a function the objects have, without a patchable entry */
			for (int i = 0; i < t->nobjs && !unusable; i++)
				unusable = obj_is(&t->objs[i], d->obj) && elf_sym(t->objs[i].path, d->sym, &v);
			if (unusable)
				err_at(e, d->sym_pos, "%s has no patchable entry trail can use: build it "
				       "with -fpatchable-function-entry=5%s", d->sym, "");
			else
				err_at(e, d->sym_pos, "unknown function '%s'%s", d->sym,
				       " ('trail list -f' lists the functions that can be probed)");
			return unusable ? -EINVAL : -ENOENT;
		}
		if (d->offset && d->offset != s->addr - s->func) {
			char at[32];

			snprintf(at, sizeof(at), "+0x%llx", (unsigned long long)(s->addr - s->func));
			err_at(e, d->sym_pos, "no patchable entry at that offset (%s's is at %s)",
			       d->sym, at);
			return -EINVAL;
		}
		pt.objpath = o->path;
		pt.dw = pobj_dwarf(o);
		sc.objpath = o->path;
		c.sym = (char *)s->symbol; /* libtrail knows functions by symbol */
		if (!c.obj)
			c.obj = objname = strdup(o->path);
	}
	r = probe_compile(&c, &pt, &blob, &len, resolved, e);
	if (!r && objname && *resolved && !pt.insn_addr)
		strip_obj(*resolved, objname);
	free(objname);
	free(symname);
	free(src);
	free(owned);
	if (r)
		return r;
	*line = malloc(7 + 2 * len + 1);
	if (!*line) {
		free(blob);
		return -ENOMEM;
	}
	memcpy(*line, "@probe ", 7);
	trail_probe_hex(blob, len, *line + 7);
	free(blob);
	return 0;
}

/* ------------------------------------------------------------ USDT */

int ptarget_usdt_each(struct ptarget *t,
		      int (*cb)(void *ctx, const char *obj, const struct usdt_probe *p),
		      void *ctx)
{
	int r = 0;

	for (int i = 0; t && i < t->nobjs && !r; i++) {
		struct usdt_list l;
		char err[256];

		if (usdt_read(t->objs[i].path, &l, err, sizeof(err)))
			continue;
		for (size_t k = 0; k < l.n && !r; k++)
			r = cb(ctx, t->objs[i].path, &l.v[k]);
		usdt_free(&l);
	}
	return r;
}

int ptarget_usdt_compile(struct ptarget *t, const char *obj, const struct usdt_probe *p,
			 struct probe_def *d, char **line, struct probe_err *e)
{
	char why[160], *args = usdt_fetchargs(p, why, sizeof(why)), *text = NULL, *res = NULL;
	int r;

	memset(d, 0, sizeof(*d));
	*line = NULL;
	if (!args) {
		e->pos = -1;
		snprintf(e->msg, sizeof(e->msg), "USDT probe sdt_%s:%s: %s", p->provider, p->name, why);
		return -EINVAL;
	}
	r = asprintf(&text, "p:sdt_%s/%s %s:0x%llx%s%s", p->provider, p->name, obj,
		     (unsigned long long)p->fileoff, *args ? " " : "", args);
	free(args);
	if (r < 0)
		return -ENOMEM;
	if ((r = probe_parse(text, d, e))) {
		free(text);
		return r;
	}
	free(text);
	d->sema = p->sema;
	d->usdt = 1;
	r = ptarget_compile(t, d, NULL, line, &res, e);
	free(res);
	if (r)
		probe_def_free(d);
	return r;
}
