/* SPDX-License-Identifier: MIT */
/*
 * cmd-bootconfig.c - `trail bootconfig -c FILE [PROGRAM]`: a bootconfig
 * file checked without running anything, as the kernel's bootconfig tool
 * checks one: its grammar, its keys (src/session/bootcfg.c), the session
 * they make checked against itself, and, a program named, against the
 * program's objects as `trail record` checks them (events, filters,
 * triggers, functions, probes).
 */
#include <stdio.h>
#include <stdlib.h>

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

int cmd_bootconfig(int argc, char **argv)
{
	static const struct trail_diag diag = {tool_diag, (void *)"bootconfig"};
	struct trail_session S;
	struct opt_parser op;
	const char *file = NULL, *why;
	int c, r;

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
	trail_session_init(&S, &diag);
	S.check_only = 1;
	r = trail_session_bootconfig_file(&S, file);
	if (!r)
		r = trail_session_validate(&S, argv + optind);
	if (!r && *S.cmd) {
		if (!(S.cmd_path = tool_find_file(S.cmd[0], 1, &why)))
			r = (tool_err("%s: %s", S.cmd[0], why), 1);
		else
			r = trail_session_check_program(&S);
	}
	if (!r)
		printf("%s: ok%s%s\n", file, *S.cmd ? ", checked against " : "",
		       *S.cmd ? S.cmd_path : "");
	trail_session_free(&S);
	return r;
}
