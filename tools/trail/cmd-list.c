/* SPDX-License-Identifier: MIT */
/*
 * cmd-list.c - `trail list`: the events a program (and the libraries it
 * needs) or a running process declares, read from their ELF files without
 * running anything; `trail list -f`: the functions they can have traced
 * (their patchable function entries, funcscan.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/common/meta.h"
#include "../../src/common/spec.h"
#include "../../src/session/elfscan.h"
#include "../../src/session/funcscan.h"
#include "opt.h"
#include "../../src/session/probes.h"
#include "../../src/session/usdt.h"
#include "tool.h"

static const struct opt_cmd list_opts = {
	.name = "list",
	.intro = "Usage: trail list [OPTIONS] [-P PID | [--] PROGRAM] [PATTERN]\n"
		 "       trail list -f [-P PID | [--] PROGRAM] [GLOB]\n"
		 "\n"
		 "List the trail events a program and the shared libraries it needs\n"
		 "declare (read from their ELF files, nothing is run), or those of a\n"
		 "running process, with the dynamic events of 'trail probe' that apply\n"
		 "to it (their definitions resolved for it). PATTERN filters like\n"
		 "'trail record -e'.\n"
		 "\n"
		 "With -f, list the functions that can be traced instead, like ftrace's\n"
		 "available_filter_functions: those with a patchable entry (built with\n"
		 "-fpatchable-function-entry=5), or unmodified code's functions\n"
		 "(entered through a jump over their first instructions, else a\n"
		 "breakpoint), one per line, 'NAME' for the program's,\n"
		 "'NAME [LIBRARY]' for a library's; C++ names demangled; a function\n"
		 "without a symbol named sub_<its address in its file>. GLOB (*, ?,\n"
		 "[set]; FUNC@OBJECT for one object) filters the names; without one,\n"
		 "an unmodified library's functions are counted, not listed (-l must\n"
		 "name them to trace them).\n",
	.in_order = 1,
	.opts = (const struct opt[]){
		{'P', "pid", OPT_REQUIRED, "PID", "list those of a running process", 0,
		 "a process id"},
		{'F', "fields", OPT_NONE, NULL, "show each event's fields, like ftrace's format files", 0, NULL},
		{'f', "functions", OPT_NONE, NULL, "list the traceable functions, not the events", 0, NULL},
		OPT_HELP_ROW,
		{0},
	},
};

struct entry {
	char *name;     /* provider:event */
	char *object;   /* a probe event: its definition, resolved */
	int probe;
	void *blob;
	size_t size;
};

struct listing {
	struct entry *e;
	size_t n, cap;
	const char *pattern;
	int fields; /* -F */
};

static int collect(const char *object, const void *blob, size_t size, void *arg)
{
	struct listing *L = arg;
	struct trail_meta m;
	const char *why;
	char name[300];

	if (trail__meta_parse(blob, size, &m, &why))
		return 0;
	if (L->pattern &&
	    !trail__spec_match1(L->pattern, strlen(L->pattern), m.provider, m.name))
		return 0;
	snprintf(name, sizeof(name), "%s:%s", m.provider, m.name);
	for (size_t i = 0; i < L->n; i++)
		if (!strcmp(L->e[i].name, name) && L->e[i].size == size &&
		    !memcmp(L->e[i].blob, blob, size))
			return 0;
	if (L->n == L->cap) {
		size_t cap = L->cap ? L->cap * 2 : 32;
		struct entry *ne = realloc(L->e, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		L->e = ne;
		L->cap = cap;
	}
	L->e[L->n].name = strdup(name);
	L->e[L->n].object = strdup(object);
	L->e[L->n].probe = 0;
	L->e[L->n].blob = malloc(size);
	if (L->e[L->n].blob)
		memcpy(L->e[L->n].blob, blob, size);
	L->e[L->n].size = size;
	L->n++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->object, y->object);
}

/*
 * -F: the fields in the kernel's `format` syntax, at the offsets of
 * trail's own payload (doc/file-format.md), not the kernel's: a string or
 * a sequence is its u16 length (count) with its bytes right after it, so
 * it is "offset:N; size:2;" (the kernel's __data_loc is a 32-bit
 * len << 16 | offset word, the data at the record's end), and a field
 * after one is at N plus the bytes of those before it:
 * "offset:6+path;" (6 bytes, then path's).
 */
static void print_fields(const struct entry *e)
{
	struct trail_meta m;
	const char *why;
	uint32_t off = 0;
	char vars[512] = ""; /* "+path+codes": the variable fields so far */
	size_t vl = 0;

	if (!e->blob || trail__meta_parse(e->blob, e->size, &m, &why))
		return;
	printf("\tobject: %s\n", e->object);
	for (uint32_t i = 0; i < m.nfields; i++) {
		const struct trail_field *f = &m.fields[i];
		int var = f->kind == TRAIL_FK_STRING || f->kind == TRAIL_FK_SEQ;
		unsigned size = var ? 2 : f->kind == TRAIL_FK_ARRAY ? (unsigned)f->size * f->count
								  : f->size;
		char tb[64];
		const char *t = trail__field_type(f, tb, sizeof(tb));

		printf("\tfield:%s%s %s;\toffset:%u%s;\tsize:%u;\tsigned:%d;%s\n",
		       var ? "__data_loc " : "", t, f->name, off, vars, size,
		       !!(f->flags & TRAIL_FF_SIGNED), (f->flags & TRAIL_FF_HEX) ? "\thex:1;" : "");
		off += size;
		if (var && vl < sizeof(vars))
			vl += (size_t)snprintf(vars + vl, sizeof(vars) - vl, "+%s", f->name);
	}
}

/* ------------------------------------------------------------------------
 * trail list -f: each ELF object elfscan visits (the program and the
 * libraries it needs, or what a process maps) is scanned by funcscan.
 */
struct fobj {
	struct fscan fs;
	char *name; /* as elfscan names it: the path given, found or mapped */
	int exe;
};

struct flist {
	struct fobj *o;
	size_t n, cap;
	size_t calls;   /* objects visited */
	pid_t pid;      /* 0: a program, whose first object is the executable */
	int have_exe;   /* exe_st is the process's executable */
	struct stat exe_st;
	int said;       /* the error is reported already */
};

static int fobject(const char *object, void *arg)
{
	struct flist *F = arg;
	char path[PATH_MAX + 32], err[512];
	struct stat st;
	struct fobj *o;
	int r;

	F->calls++;
	if (funcscan_tool_object(object))
		return 0; /* what runs trail itself: never traced */
	/* the process's own view of its files first (its mount namespace) */
	if (F->pid)
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)F->pid, object);
	if (!F->pid || access(path, R_OK))
		snprintf(path, sizeof(path), "%s", object);
	if (F->n == F->cap) {
		size_t cap = F->cap ? 2 * F->cap : 16;
		struct fobj *n = realloc(F->o, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		F->o = n;
		F->cap = cap;
	}
	o = &F->o[F->n];
	memset(o, 0, sizeof(*o));
	r = funcscan_file(path, &o->fs, err, sizeof(err));
	if (r) {
		funcscan_free(&o->fs);
		if (r == -ENOMEM)
			return r;
		/* the program itself of another architecture: that is all */
		if (r == -ENOTSUP && !F->pid && F->calls == 1) {
			tool_err("%s: trail traces x86-64 programs", err);
			F->said = 1;
			return -ENOTSUP;
		}
		tool_warn("%s", err);
		return 0;
	}
	if (err[0])
		tool_warn("%s", err);
	o->name = strdup(object);
	if (!o->name) {
		funcscan_free(&o->fs);
		return -ENOMEM;
	}
	if (F->pid)
		o->exe = F->have_exe && !stat(path, &st) &&
			 st.st_dev == F->exe_st.st_dev && st.st_ino == F->exe_st.st_ino;
	else
		o->exe = F->calls == 1;
	F->n++;
	return 0;
}

static void flist_free(struct flist *F)
{
	for (size_t i = 0; i < F->n; i++) {
		funcscan_free(&F->o[i].fs);
		free(F->o[i].name);
	}
	free(F->o);
}

/* Is the function a library call of the program goes to traced by its
 * own entry (a library with patchable entries)? Then its hook records the
 * call, not the program's PLT (libtrail's fobjs.c says the same). */
static int plt_in_library(const struct flist *F, const char *symbol)
{
	for (size_t i = 0; i < F->n; i++) {
		const struct fobj *o = &F->o[i];

		/* (an unmodified library's: only where an -l names it) */
		if (o->exe || o->fs.reloc)
			continue;
		for (size_t k = 0; k < o->fs.n; k++)
			if (!o->fs.sites[k].plt && funcscan_usable(&o->fs.sites[k]) &&
			    !strcmp(o->fs.sites[k].symbol, symbol))
				return 1;
	}
	return 0;
}

/* Print the traceable functions of the objects, the executable's first.
 * Returns how many were printed; *total gets how many there are, *libtotal
 * how many of them are in unmodified libraries. */
static size_t print_functions(const struct flist *F, const char *glob,
			      size_t *total, size_t *libtotal)
{
	size_t shown = 0;

	*total = *libtotal = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < F->n; i++) {
			const struct fobj *o = &F->o[i];
			const char *base = strrchr(o->name, '/');

			if (o->exe != !pass)
				continue;
			/* an unmodified library: its functions where a pattern
			 * names them, as with -l */
			if (!glob && o->fs.lib && o->fs.reloc)
				continue;
			base = base ? base + 1 : o->name;
			for (size_t k = 0; k < o->fs.n; k++) {
				const struct fsite *s = &o->fs.sites[k];
				char addr[32];
				const char *name = s->name;

				if (!funcscan_usable(s) || (s->plt && plt_in_library(F, s->symbol)))
					continue;
				++*total;
				*libtotal += o->fs.lib && o->fs.reloc;
				if (!*name) {
					snprintf(addr, sizeof(addr), "0x%" PRIx64, s->addr);
					name = addr;
				}
				if (glob && !trail__func_glob(glob, strlen(glob), name, o->name) &&
				    !trail__func_glob(glob, strlen(glob), s->symbol, o->name))
					continue;
				if (o->exe && s->plt)
					printf("%s [library call]\n", name);
				else if (o->exe && s->reloc && s->trap)
					printf("%s [breakpoint]\n", name); /* a trap a call */
				else if (o->exe)
					printf("%s\n", name);
				else if (s->reloc && s->trap)
					printf("%s [%s] [breakpoint]\n", name, base);
				else
					printf("%s [%s]\n", name, base);
				shown++;
			}
		}
	return shown;
}

static int list_functions(pid_t pid, const char *program, const char *what,
			  const char *glob)
{
	struct elfscan_opts eo = {.sz = sizeof(eo), .object_cb = fobject};
	struct flist F = {.pid = pid};
	size_t raw = 0, total, libtotal, shown, refused = 0;
	char err[512] = "", exe[64];
	int r, rc = 1;

	if (pid) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
		F.have_exe = !stat(exe, &F.exe_st);
		r = elfscan_pid_opts(pid, NULL, &F, &eo, err, sizeof(err));
	} else {
		r = elfscan_program_opts(program, NULL, &F, &eo, err, sizeof(err));
	}
	if (r < 0) {
		if (!F.said)
			tool_err("%s", err[0] ? err : strerror(-r));
		goto out;
	}
	for (size_t i = 0; i < F.n; i++) {
		const struct fobj *o = &F.o[i];
		size_t unusable = 0;

		if (!glob && o->fs.lib && o->fs.reloc)
			continue; /* (not listed: the note below) */
		raw += o->fs.n;
		for (size_t k = 0; k < o->fs.n; k++)
			unusable += !funcscan_usable(&o->fs.sites[k]);
		if (o->fs.traps && !o->fs.lib)
			tool_warn("%s: %zu function%s of this unmodified program cannot be "
				  "entered through a jump: %s through a breakpoint, a trap per call",
				  o->name, o->fs.traps, o->fs.traps == 1 ? "" : "s",
				  o->fs.traps == 1 ? "it is traced" : "they are traced");
		if (o->fs.skipped && o->fs.reloc && !o->fs.lib)
			tool_warn("%s: %zu function%s of this unmodified program cannot be "
				  "traced (the first, %s)",
				  o->name, o->fs.skipped, o->fs.skipped == 1 ? "" : "s",
				  o->fs.refused_why);
		else if (o->fs.skipped && !o->fs.reloc)
			tool_warn("%s: %zu patchable function entr%s skipped: not nops "
				  "(a patched file?) or not in its code",
				  o->name, o->fs.skipped, o->fs.skipped == 1 ? "y" : "ies");
		if (unusable && unusable < o->fs.n)
			tool_warn("%s: %zu patchable function entr%s cannot be hooked: "
				  "nops before the entry or fewer than %d bytes",
				  o->name, unusable, unusable == 1 ? "y" : "ies",
				  FUNCSCAN_SITE_BYTES);
	}
	shown = print_functions(&F, glob, &total, &libtotal);
	/* (the note after the list, if the list could be written) */
	if (!fflush(stdout) && !ferror(stdout) && !glob) {
		size_t nlib = 0, nfn = 0;

		for (size_t i = 0; i < F.n; i++)
			if (F.o[i].fs.lib && F.o[i].fs.reloc) {
				nlib++;
				nfn += F.o[i].fs.n;
			}
		if (nfn)
			fprintf(stderr, "(and %zu functions in %zu unmodified librar%s, traced where "
					"an -l names them: trail list -f PROGRAM 'GLOB[@LIBRARY]')\n",
				nfn, nlib, nlib == 1 ? "y" : "ies");
	}
	for (size_t i = 0; i < F.n; i++)
		refused += F.o[i].fs.reloc && (glob || !F.o[i].fs.lib) ? F.o[i].fs.skipped : 0;
	if (!total && !raw && refused) {
		tool_err("%s: none of its %zu functions can be traced", what, refused);
	} else if (!total && !raw) {
		tool_err("%s has no patchable function entries: build it with "
			 "-fpatchable-function-entry=5 (gcc or clang); nothing in it "
			 "can be function-traced", what);
	} else if (!total) {
		tool_err("%s: none of its %zu patchable function entries can be "
			 "hooked (nops before the function's entry, or fewer than %d "
			 "bytes): build it with -fpatchable-function-entry=5 (gcc or "
			 "clang), not =N,M", what, raw, FUNCSCAN_SITE_BYTES);
	} else if (glob && !shown) {
		if (libtotal)
			tool_err("no function matches '%s' (%s has %zu traceable function%s, "
				 "its unmodified libraries %zu)", glob, what, total - libtotal,
				 total - libtotal == 1 ? "" : "s", libtotal);
		else
			tool_err("no function matches '%s' (%s has %zu traceable function%s)",
				 glob, what, total, total == 1 ? "" : "s");
	} else {
		rc = 0;
	}
out:
	flist_free(&F);
	return rc;
}

/* A compiled probe's event ("@probe HEX" line), shown with what: its
 * definition resolved for the program, or a USDT probe's note. */
static void collect_probe(struct listing *L, const char *line, const char *what)
{
	size_t len = (strcspn(line, "\n") - 7) / 2; /* the first blob of the event */
	uint8_t *blob = malloc(len);
	struct trail_probe p;
	const char *why;

	if (blob && trail_probe_unhex(line + 7, 2 * len, blob, len) == (long)len &&
	    !trail_probe_check(blob, len, &p, &why)) {
		size_t n0 = L->n;

		collect(what, p.meta, p.hdr->meta_size, L);
		if (L->n > n0)
			L->e[n0].probe = 1;
	}
	free(blob);
}

struct usdt_listing {
	struct listing *L;
	struct ptarget *t;
};

/* a USDT probe (sdt_PROVIDER:NAME), as perf lists SDT events, with its
 * object, address, semaphore and argument specs */
static int usdt_entry(void *arg, const char *obj, const struct usdt_probe *p)
{
	struct usdt_listing *u = arg;
	struct probe_def d;
	struct probe_err e;
	char *line = NULL, *what = NULL;

	if (ptarget_usdt_compile(u->t, obj, p, &d, &line, &e))
		return 0; /* an argument trail cannot read: not offered */
	if (asprintf(&what, "[SDT event] %s:0x%llx%s%s%s", obj, (unsigned long long)p->fileoff,
		     p->sema ? " (semaphore)" : "", *p->args ? " args: " : "", p->args) >= 0) {
		collect_probe(u->L, line, what);
		free(what);
	}
	probe_def_free(&d);
	free(line);
	return 0;
}

/* The user's probe definitions (trail probe) that apply to the program
 * or process: their events, shown with the definition resolved for it. */
static void add_probes(struct listing *L, pid_t pid, const char *path)
{
	struct probe_list all = {0};
	struct ptarget *t = NULL;
	char err[512];

	if (probes_read(&all, err, sizeof(err))) {
		tool_warn("the kept probe definitions (trail probe) are left out: %s", err);
		probes_free(&all);
		return;
	}
	if ((pid ? ptarget_pid(&t, pid, err, sizeof(err))
		 : ptarget_program(&t, path, err, sizeof(err)))) {
		probes_free(&all);
		ptarget_free(t);
		return;
	}
	for (int i = 0; i < all.n; i++) {
		char *line = NULL, *res = NULL;
		struct probe_err e;

		if (!ptarget_compile(t, &all.defs[i], &all, &line, &res, &e))
			collect_probe(L, line, res);
		free(line);
		free(res);
	}
	ptarget_usdt_each(t, usdt_entry, &(struct usdt_listing){L, t});
	probes_free(&all);
	ptarget_free(t);
}

static int list_events(struct listing *L, int r, const char *err, int nleft, char **left)
{
	int fields = L->fields;

	if (nleft > 0) {
		tool_usage_err("list", "unexpected argument '%s'", left[0]);
		return EXIT_USAGE;
	}
	if (L->pattern) {
		const char *why;
		size_t bad = trail__spec_check(L->pattern, &why);

		if (bad) {
			tool_caret("bad event pattern", L->pattern, bad - 1, why);
			return EXIT_USAGE;
		}
	}
	if (r < 0) {
		tool_err("%s", err);
		return 1;
	}
	if (L->n)
		qsort(L->e, L->n, sizeof(*L->e), cmp_entry);
	for (size_t i = 0; i < L->n; i++) {
		if (!fields && i && !strcmp(L->e[i].name, L->e[i - 1].name))
			continue;
		if (L->e[i].probe)
			printf("%s  %s\n", L->e[i].name, L->e[i].object);
		else
			printf("%s\n", L->e[i].name);
		if (fields)
			print_fields(&L->e[i]);
	}
	if (!L->n && L->pattern) {
		tool_err("no event matches '%s'", L->pattern);
		return 1;
	}
	return 0;
}

int cmd_list(int argc, char **argv)
{
	struct listing L = {0};
	char err[512] = "", *path = NULL;
	pid_t pid = 0;
	int c, fields = 0, functions = 0, r, rc;
	struct opt_parser op;

	opt_init(&op, &list_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END) {
		switch (c) {
		case 'P':
			if (tool_pid_arg("list", "-P", optarg, &pid))
				return EXIT_USAGE;
			break;
		case 'F':
			fields = 1;
			break;
		case 'f':
			functions = 1;
			break;
		case OPT_EXIT:
			return op.status;
		}
	}
	if (functions && fields) {
		tool_usage_err("list", "-F is for events, not with -f");
		return EXIT_USAGE;
	}
	if (functions && optind + (pid ? 0 : 1) + 1 < argc) {
		tool_usage_err("list", "unexpected argument '%s'",
			       argv[optind + (pid ? 0 : 1) + 1]);
		return EXIT_USAGE;
	}
	if (functions && pid) {
		char what[64];

		snprintf(what, sizeof(what), "process %d", (int)pid);
		return list_functions(pid, NULL, what,
				      optind < argc ? argv[optind] : NULL);
	}
	if (pid) {
		if (optind < argc)
			L.pattern = argv[optind++];
		r = elfscan_pid(pid, collect, &L, err, sizeof(err));
		if (r >= 0)
			add_probes(&L, pid, NULL);
	} else {
		if (optind >= argc) {
			tool_usage_err("list", "give a PROGRAM or -P PID");
			return EXIT_USAGE;
		}
		{
			const char *why;

			/* read, not run: no execute permission needed */
			path = tool_find_file(argv[optind], 0, &why);
			if (!path) {
				tool_err("%s: %s", argv[optind], why);
				return 1;
			}
		}
		optind++;
		if (functions) {
			r = list_functions(0, path, argv[optind - 1],
					   optind < argc ? argv[optind] : NULL);
			free(path);
			return r;
		}
		if (optind < argc)
			L.pattern = argv[optind++];
		r = elfscan_program(path, collect, &L, err, sizeof(err));
		if (r >= 0)
			add_probes(&L, 0, path);
	}
	L.fields = fields;
	rc = list_events(&L, r, err, argc - optind, argv + optind);
	for (size_t i = 0; i < L.n; i++) {
		free(L.e[i].name);
		free(L.e[i].object);
		free(L.e[i].blob);
	}
	free(L.e);
	free(path);
	return rc;
}
