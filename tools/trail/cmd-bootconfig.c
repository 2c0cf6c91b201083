/* SPDX-License-Identifier: MIT */
/*
 * cmd-bootconfig.c - `trail bootconfig -c FILE [PROGRAM]`: a bootconfig
 * file checked without running anything, as the kernel's bootconfig tool
 * checks one: its grammar, its keys (src/session/bootcfg.c), the session
 * they make checked against itself, and, a program named, against the
 * program's objects as `trail record` checks them (events, filters,
 * triggers, functions, probes); then what it asks for, said as the
 * `trail record` command line that asks for the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/session/session.h"
#include "opt.h"
#include "tool.h"

static const struct opt_cmd bootconfig_opts = {
	.name = "bootconfig",
	.intro = "Usage: trail bootconfig -c FILE [PROGRAM]\n"
		 "\n"
		 "Check a bootconfig file of the kernel's boot-time tracing keys\n"
		 "(ftrace.tracer, ftrace.ftrace.filters, ftrace.event.GROUP.EVENT.filter,\n"
		 "...actions, ...kprobes.EVENT.probes, ...synthetic.EVENT.fields,\n"
		 "kernel.fgraph_max_depth, trail.output, ...) without running anything;\n"
		 "with PROGRAM, against what the program declares, as 'trail record\n"
		 "--bootconfig FILE -- PROGRAM' would. Keys that mean nothing for a\n"
		 "process are warnings naming them.\n",
	.col = 22,
	.in_order = 1,
	.opts = (const struct opt[]){
		{'c', "check", OPT_REQUIRED, "FILE", "the file to check", 0, NULL},
		OPT_HELP_ROW,
		{0},
	},
};

/* one argument, quoted for a shell where it needs it */
static void arg(const char *a)
{
	if (*a && !strpbrk(a, " \t\n'\"\\$`*?[]{}()<>|&;!#~"))
		printf(" %s", a);
	else {
		printf(" '");
		for (; *a; a++)
			if (*a == '\'')
				printf("'\\''");
			else
				putchar(*a);
		putchar('\'');
	}
}

static void opt_arg(const char *opt, const char *a)
{
	printf(" %s", opt);
	arg(a);
}

/* an event pattern that a filter line ("@filter PAT TEXT") names */
static int filtered(const struct trail_session *S, const char *ev)
{
	size_t n = strlen(ev);

	for (int i = 0; i < S->nfilters; i++)
		if (!strncmp(S->filters[i] + 8, ev, n) && S->filters[i][8 + n] == ' ')
			return 1;
	return 0;
}

/* What the file asks for, as the trail record command line that asks
 * for the same (what tracing_on = 0 does has no option: said apart). */
static void as_command(const struct trail_session *S)
{
	char buf[64];

	printf("  trail record");
	if (S->tracer)
		opt_arg("-p", S->tracer);
	for (int i = 0; i < S->nfuncs_user; i++) {
		char o[3] = {'-', S->funcs[i][1], 0};

		opt_arg(o, S->funcs[i] + 3);
	}
	if (S->max_depth) {
		snprintf(buf, sizeof(buf), "%u", S->max_depth);
		opt_arg("--max-graph-depth", buf);
	}
	if (S->retval)
		printf(" --retval");
	if (S->args)
		printf(" --args");
	for (int i = 0; i < S->nsynths; i++)
		opt_arg("--synth", S->synths[i] + 7);
	for (int i = 0; i < S->nprobes; i++)
		opt_arg("--probe", S->probes[i]);
	for (int i = 0; i < S->nevents; i++) {
		int dup = 0;

		for (int k = 0; k < i && !dup; k++)
			dup = !strcmp(S->events[k], S->events[i]);
		if (dup || filtered(S, S->events[i]))
			continue;
		opt_arg("-e", S->events[i]);
	}
	for (int i = 0; i < S->nfilters; i++) {
		const char *pat = S->filters[i] + 8, *text = strchr(pat, ' ') + 1;
		char ev[512];

		snprintf(ev, sizeof(ev), "%.*s", (int)(text - 1 - pat), pat);
		opt_arg("-e", ev);
		opt_arg("-f", text);
	}
	for (int i = 0; i < S->ntriggers; i++)
		opt_arg("-T", S->trig_args[i]);
	if (S->buffer_given) {
		snprintf(buf, sizeof(buf), "%lluK", (unsigned long long)(S->buffer_bytes >> 10));
		opt_arg("-b", buf);
	}
	if (S->tp_printk)
		printf(" --tp-printk");
	else if (S->overwrite)
		printf(" --overwrite");
	if (S->clock_want)
		opt_arg("-C", S->clock_want);
	opt_arg("-o", S->output);
	printf(" ...\n");
	if (S->start_paused)
		printf("  (tracing off until a traceon trigger fires: ftrace.tracing_on = 0)\n");
}

/* The file's top (name NULL) or its instance name: read, checked (with
 * cmd, against its program), and said as a command line. *names: the
 * instances (the top's call), up to 64. 0, or the exit status. */
static int check_one(const char *file, const char *name, char **cmd, char (*names)[64], int *n)
{
	static const struct trail_diag diag = {tool_diag, (void *)"bootconfig"};
	struct trail_session S;
	const char *why;
	int r;

	trail_session_init(&S, &diag);
	S.check_only = 1;
	S.instance = name;
	r = trail_session_bootconfig_file(&S, file);
	if (!r)
		r = trail_session_validate(&S, cmd);
	if (!r && *S.cmd) {
		if (!(S.cmd_path = tool_find_file(S.cmd[0], 1, &why)))
			r = (tool_err("%s: %s", S.cmd[0], why), 1);
		else
			r = trail_session_check_program(&S);
	}
	if (!r && !name)
		printf("%s: ok%s%s; it records what this asks for:\n", file,
		       *S.cmd ? ", checked against " : "", *S.cmd ? S.cmd_path : "");
	else if (!r)
		printf("instance %s (ftrace.instance.%s): ok; a recorder of its own "
		       "(--instance %s):\n", name, name, name);
	if (!r)
		as_command(&S);
	if (!r && names)
		*n = trail_session_bootconfig_instances(&S, names, 64);
	trail_session_free(&S);
	return r;
}

int cmd_bootconfig(int argc, char **argv)
{
	struct opt_parser op;
	const char *file = NULL;
	char names[64][64];
	int c, r, n = 0;

	opt_init(&op, &bootconfig_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END) {
		if (c == 'c')
			file = optarg;
		else if (c == OPT_EXIT)
			return op.status;
	}
	if (!file) {
		tool_usage_err("bootconfig", "give the file to check: -c FILE");
		return EXIT_USAGE;
	}
	r = check_one(file, NULL, argv + optind, names, &n);
	/* each instance: a session of its own, checked the same way */
	for (int i = 0; i < n && i < 64 && !r; i++)
		r = check_one(file, names[i], argv + optind, NULL, NULL);
	return r;
}
