/* SPDX-License-Identifier: MIT */
/*
 * cmd-probe.c - `trail probe`: define, list and delete dynamic events,
 * the way `echo ... >> dynamic_events` does in the kernel (probes.h keeps
 * them; `trail record -e` records them like any other event).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/spec.h"
#include "opt.h"
#include "../../src/session/probes.h"
#include "tool.h"

enum { O_CLEAR = OPT_LONG_ID };

static const struct opt_cmd probe_opts = {
	.name = "probe",
	.intro = "Usage: trail probe [-x OBJECT] DEFINITION...\n"
		 "       trail probe -l [-x OBJECT]\n"
		 "       trail probe -d [GROUP/]EVENT...   (or '-:[GROUP/]EVENT')\n"
		 "\n"
		 "Define dynamic events on the functions of traced programs, in the kernel's\n"
		 "dynamic_events grammar; they are kept for you until deleted and apply to\n"
		 "every program that has the function:\n"
		 "  p[:[GRP/][EVENT]] [OBJ:]FUNC[+OFFS] [NAME=FETCHARG[:TYPE] ...]\n"
		 "  p[:[GRP/][EVENT]] PATH:OFFSET [NAME=FETCHARG[:TYPE] ...]  (file offset)\n"
		 "  p[:[GRP/][EVENT]] [OBJ:]FUNC:RLN | FILE:LINE [...]  (a source line)\n"
		 "  r[:[GRP/][EVENT]] [OBJ:]FUNC [NAME=FETCHARG[:TYPE] ...]  (or FUNC%return;\n"
		 "                    naming variables: at its ret instructions)\n"
		 "  e[:[GRP/][EVENT]] SYS/EVENT [NAME=FETCHARG[:TYPE] ...]\n"
		 "  FUNC(TYPE NAME, ...)                      (functions:FUNC)\n"
		 "  u:NAME [TYPE FIELD[;TYPE FIELD...]]       (user_events:NAME, a user event)\n"
		 "FETCHARG: %REG $argN $arg* $$args $retval $stackN $stack $comm @ADDR \\IMM\n"
		 "@SYM[+|-OFFS] +|-OFFS(FETCHARG) $FIELD (eprobes), or with DWARF a\n"
		 "variable (at an instruction: any in scope there), VAR->MEMBER.MEMBER,\n"
		 "VAR[I]. TYPE: u8..u64 s8..s64 x8..x64 char\n"
		 "string ustring symbol symstr b<W>@<O>/<C> TYPE[N].\n",
	.col = 22,
	.opts = (const struct opt[]){
		{'l', "list", OPT_NONE, NULL, "print the definitions (as dynamic_events does)", 0, NULL},
		{'d', "delete", OPT_NONE, NULL, "delete the named events ('*' globs)", 0, NULL},
		{'x', "exec", OPT_REQUIRED, "OBJECT",
		 "check against this program or library: its\n"
		 "functions, DWARF and events; print the definitions\n"
		 "with their fetch-args resolved", 0, NULL},
		{0, "clear", OPT_NONE, NULL, "delete every definition", O_CLEAR, NULL},
		OPT_HELP_ROW,
		{0},
	},
};

static void caret(const char *text, const struct probe_err *e)
{
	if (e->pos >= 0)
		tool_caret("probe", text, (size_t)e->pos, e->msg);
	else
		tool_err("probe: %s: %s", text, e->msg);
}

/* -l: the file's definitions; with -x, resolved for that object */
static int list(const struct probe_list *l, struct ptarget *t)
{
	for (int i = 0; i < l->n; i++) {
		char *line = NULL, *res = NULL;
		struct probe_err e;

		if (t && l->defs[i].kind != 'u' && !ptarget_compile(t, &l->defs[i], l, &line, &res, &e))
			printf("%s\n", res);
		else if (!t || l->defs[i].kind == 'u') {
			char *s = probe_def_format(&l->defs[i]);

			printf("%s\n", s ? s : "");
			free(s);
		}
		free(line);
		free(res);
	}
	return 0;
}

static int glob_name(const char *pat, const struct probe_def *d)
{
	char full[2 * TRAIL_PROBE_MAX_EVNAME + 2];
	const char *p = strchr(pat, '/') ? full : d->event;

	snprintf(full, sizeof(full), "%s/%s", d->group, d->event);
	return trail__glob(pat, strlen(pat), p, strlen(p));
}

static int delete(struct probe_list *l, char **names, int n)
{
	char err[512];
	int bad = 0;

	for (int k = 0; k < n; k++) {
		const char *name = names[k];
		int hit = 0;
		pid_t user;

		if (!strncmp(name, "-:", 2))
			name += 2;
		for (int i = 0; i < l->n;) {
			if (!glob_name(name, &l->defs[i])) {
				i++;
				continue;
			}
			hit = 1;
			if ((user = probes_in_use(&l->defs[i]))) {
				tool_err("probe: %s/%s is in use by a recording (trail record, pid %d): "
					 "delete it when that ends", l->defs[i].group, l->defs[i].event,
					 (int)user);
				return 1;
			}
			probes_remove(l, i);
		}
		if (!hit) {
			tool_err("probe: no event '%s' to delete ('trail probe -l' lists them)", name);
			bad = 1;
		}
	}
	if (bad)
		return 1;
	if (probes_write(l, err, sizeof(err))) {
		tool_err("probe: %s", err);
		return 1;
	}
	return 0;
}

/* Add each definition: parsed, checked against the others (and -x). */
static int add(struct probe_list *l, char **defs, int n, struct ptarget *t)
{
	char err[512];

	for (int k = 0; k < n; k++) {
		struct probe_def d;
		struct probe_err e;
		const char *obj;
		char *line = NULL, *res = NULL;
		int r;

		if (probe_parse(defs[k], &d, &e)) {
			caret(defs[k], &e);
			return EXIT_USAGE;
		}
		if (d.kind == '-') {
			char name[2 * TRAIL_PROBE_MAX_EVNAME + 2], *p = name;

			snprintf(name, sizeof(name), "%s%s%s", d.group, *d.group ? "/" : "", d.event);
			probe_def_free(&d);
			if (delete(l, &p, 1))
				return 1;
			continue;
		}
		{
			char full[2 * TRAIL_PROBE_MAX_EVNAME + 2];

			snprintf(full, sizeof(full), "%s/%s", d.group, d.event);
			if (probes_find(l, full) >= 0) {
				e.pos = d.named && d.kind != 'f' ? 2 : 0;
				snprintf(e.msg, sizeof(e.msg), "event %s already exists", full);
				caret(defs[k], &e);
				probe_def_free(&d);
				return 1;
			}
		}
		if (t && (obj = ptarget_static_event(t, d.group, d.event))) {
			e.pos = d.named ? 2 : 0;
			snprintf(e.msg, sizeof(e.msg), "%s:%s is a static event of %s", d.group, d.event, obj);
			caret(defs[k], &e);
			probe_def_free(&d);
			return 1;
		}
		if (t && d.kind != 'u') {
			r = ptarget_compile(t, &d, l, &line, &res, &e);
			if (r) {
				caret(defs[k], &e);
				probe_def_free(&d);
				return 1;
			}
			printf("%s\n", res);
			free(line);
			free(res);
		}
		if (probes_add(l, &d)) {
			probe_def_free(&d);
			return 1;
		}
	}
	if (probes_write(l, err, sizeof(err))) {
		tool_err("probe: %s", err);
		return 1;
	}
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	struct opt_parser op;
	struct probe_list l = {0};
	struct ptarget *t = NULL;
	const char *exec = NULL;
	int do_list = 0, do_delete = 0, do_clear = 0, id, r, ndash = 0;
	char err[512], **dashes = NULL;

	/* '-:GRP/EVENT' is a definition (a delete), not an option */
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "-:", 2)) {
			if (!(dashes = realloc(dashes, (size_t)(ndash + 1) * sizeof(*dashes))))
				return 1;
			dashes[ndash++] = argv[i];
			memmove(argv + i, argv + i + 1, (size_t)(argc - i - 1) * sizeof(*argv));
			argc--, i--;
		}
	opt_init(&op, &probe_opts, argc, argv);
	while ((id = opt_next(&op)) != OPT_END) {
		switch (id) {
		case OPT_EXIT:
			free(dashes);
			return op.status;
		case 'l': do_list = 1; break;
		case 'd': do_delete = 1; break;
		case 'x': exec = optarg; break;
		case O_CLEAR: do_clear = 1; break;
		}
	}
	if (ndash && !do_list && !do_delete && !do_clear && optind >= argc) {
		/* only deletes: as -d */
		do_delete = 1;
		argv = dashes;
		argc = ndash;
		optind = 0;
	} else if (ndash) {
		tool_usage_err("probe", "'%s' deletes: give it alone", dashes[0]);
		free(dashes);
		return EXIT_USAGE;
	}
	if (do_list + do_delete + do_clear > 1 || ((do_list || do_clear) && optind < argc) ||
	    (!do_list && !do_clear && optind >= argc)) {
		tool_usage_err("probe", "%s", optind >= argc && !do_list && !do_clear
			       ? "a definition (or -l, -d NAME) is needed"
			       : "-l, -d and --clear go alone");
		return EXIT_USAGE;
	}
	if ((r = probes_read(&l, err, sizeof(err)))) {
		tool_err("probe: %s", err);
		return 1;
	}
	if (exec && ptarget_object(&t, exec, err, sizeof(err))) {
		tool_err("probe: %s", err);
		probes_free(&l);
		return 1;
	}
	if (do_list)
		r = list(&l, t);
	else if (do_clear)
		r = probes_write(&(struct probe_list){0}, err, sizeof(err)) ? (tool_err("probe: %s", err), 1) : 0;
	else if (do_delete)
		r = delete(&l, argv + optind, argc - optind);
	else
		r = add(&l, argv + optind, argc - optind, t);
	ptarget_free(t);
	probes_free(&l);
	free(dashes);
	return r;
}
