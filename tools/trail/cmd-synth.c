/* SPDX-License-Identifier: MIT */
/*
 * cmd-synth.c - `trail synth`: define, list and delete synthetic events,
 * the way `echo ... >> synthetic_events` does in the kernel (synths.h
 * keeps them; a hist trigger's trace() action generates them, `trail
 * record -e synthetic:NAME` records them like any other event).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/spec.h"
#include "opt.h"
#include "../../src/session/synths.h"
#include "tool.h"

enum { O_CLEAR = OPT_LONG_ID };

static const struct opt_cmd synth_opts = {
	.name = "synth",
	.intro = "Usage: trail synth DEFINITION...\n"
		 "       trail synth -l\n"
		 "       trail synth -d NAME...   (or '!NAME ...')\n"
		 "\n"
		 "Define synthetic events, in the kernel's synthetic_events grammar; they\n"
		 "are kept for you until deleted:\n"
		 "  NAME TYPE FIELD[; TYPE FIELD...]\n"
		 "TYPE: s8..s64 u8..u64 char short int long (unsigned too), long long,\n"
		 "bool, pid_t, gfp_t, size_t, ssize_t; 'char FIELD[N]' or 'char FIELD[]'\n"
		 "is a string. A hist trigger's onmatch(SYS.EVENT).trace(NAME,...) (or\n"
		 "onmax/onchange's) generates them as events synthetic:NAME.\n",
	.col = 22,
	.opts = (const struct opt[]){
		{'l', "list", OPT_NONE, NULL, "print the definitions (as synthetic_events does)", 0, NULL},
		{'d', "delete", OPT_NONE, NULL, "delete the named events ('*' globs)", 0, NULL},
		{0, "clear", OPT_NONE, NULL, "delete every definition", O_CLEAR, NULL},
		OPT_HELP_ROW,
		{0},
	},
};

static int save(const struct synth_list *l)
{
	char err[512];

	if (synths_write(l, err, sizeof(err))) {
		tool_err("synth: %s", err);
		return 1;
	}
	return 0;
}

static int delete(struct synth_list *l, char **names, int n)
{
	for (int k = 0; k < n; k++) {
		const char *name = names[k];
		size_t nl;
		int hit = 0;

		if (*name == '!')
			name++;
		nl = strcspn(name, " \t"); /* ('!NAME FIELDS': the name) */
		for (int i = 0; i < l->n;) {
			if (!trail__glob(name, nl, l->defs[i].name, strlen(l->defs[i].name))) {
				i++;
				continue;
			}
			hit = 1;
			memmove(&l->defs[i], &l->defs[i + 1], (size_t)(l->n - i - 1) * sizeof(*l->defs));
			l->n--;
		}
		if (!hit) {
			tool_err("synth: no synthetic event '%.*s' to delete ('trail synth -l' lists "
				 "them)", (int)nl, name);
			return 1;
		}
	}
	return save(l);
}

static int add(struct synth_list *l, char **defs, int n)
{
	for (int k = 0; k < n; k++) {
		struct trail_synth d;
		struct trail_filter_err e;

		if (trail_synth_parse(defs[k], &d, &e)) {
			tool_caret("synth", defs[k], e.pos < 0 ? 0 : (size_t)e.pos, e.msg);
			return EXIT_USAGE;
		}
		if (synths_find(l, d.name) >= 0) {
			tool_caret("synth", defs[k], strspn(defs[k], " \t"),
				   "synthetic event already defined (trail synth -d NAME first)");
			return 1;
		}
		if (synths_add(l, &d))
			return 1;
	}
	return save(l);
}

int cmd_synth(int argc, char **argv)
{
	struct opt_parser op;
	struct synth_list l = {0};
	int do_list = 0, do_delete = 0, do_clear = 0, id, r;
	char err[512];

	/* '!NAME ...' is a delete, not an option */
	opt_init(&op, &synth_opts, argc, argv);
	while ((id = opt_next(&op)) != OPT_END) {
		switch (id) {
		case OPT_EXIT: return op.status;
		case 'l': do_list = 1; break;
		case 'd': do_delete = 1; break;
		case O_CLEAR: do_clear = 1; break;
		}
	}
	if (!do_delete && optind < argc && argv[optind][0] == '!') {
		for (int i = optind; i < argc; i++)
			if (argv[i][0] != '!') {
				tool_usage_err("synth", "'%s' deletes: give deletes alone", argv[optind]);
				return EXIT_USAGE;
			}
		do_delete = 1;
	}
	if (do_list + do_delete + do_clear > 1 || ((do_list || do_clear) && optind < argc) ||
	    (!do_list && !do_clear && optind >= argc)) {
		tool_usage_err("synth", "%s", optind >= argc && !do_list && !do_clear
			       ? "a definition (or -l, -d NAME) is needed"
			       : "-l, -d and --clear go alone");
		return EXIT_USAGE;
	}
	if ((r = synths_read(&l, err, sizeof(err)))) {
		tool_err("synth: %s", err);
		return 1;
	}
	if (do_list) {
		char text[2048];

		for (int i = 0; i < l.n; i++) {
			trail_synth_describe(&l.defs[i], text, sizeof(text));
			printf("%s\n", text);
		}
		r = 0;
	} else if (do_clear) {
		r = save(&(struct synth_list){0});
	} else if (do_delete) {
		r = delete(&l, argv + optind, argc - optind);
	} else {
		r = add(&l, argv + optind, argc - optind);
	}
	synths_free(&l);
	return r;
}
