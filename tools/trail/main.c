/* SPDX-License-Identifier: MIT */
/*
 * main.c - the trail command: option-less dispatch to subcommands, in
 * trace-cmd's style (trail record / report / list / ps).
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static const char main_help[] =
	"Usage: trail COMMAND [OPTIONS]\n"
	"\n"
	"ftrace-style tracing of user-space programs.\n"
	"\n"
	"Commands:\n"
	"  record   record events of a command or of running processes\n"
	"  report   print a recorded trace\n"
	"  export   write a recorded trace for another tool (CTF, Perfetto, ...)\n"
	"  hist     an event's histogram in a trace file (the kernel's hist format)\n"
	"  list     list the events a program or a process declares\n"
	"  probe    define dynamic events (probes) on functions, as dynamic_events\n"
	"  synth    define synthetic events (for hist triggers), as synthetic_events\n"
	"  bootconfig  check a bootconfig file of boot-time tracing keys\n"
	"  snapshot what a process's flight recorder holds, into a file now\n"
	"  timerlat wake-up latency per CPU, as the kernel's timerlat tracer (top, hist)\n"
	"  osnoise  operating system noise per CPU, as the kernel's osnoise tracer\n"
	"  rv       runtime verification: a DOT automaton checked against a trace\n"
	"  mount    the recordings of your processes as the kernel's tracefs (FUSE)\n"
	"  umount   end a trail mount\n"
	"  ps       list the running processes that trail can attach to\n"
	"  version  print the version\n"
	"\n"
	"'trail COMMAND --help' describes each command.\n";

/* Standard output through a tool_wfile: what the commands print (list,
 * hist, probe -l, ...) reaches it, or the exit status says not and why
 * (a full disk is no success; stdio alone keeps no errno). */
static struct tool_wfile out;

static int out_done(int rc)
{
	FILE *f = stdout;

	if (f != out.f)
		return rc;
	stdout = out.orig;
	if (tool_wfile_close(&out, ""))
		return rc ? rc : 1;
	return rc;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{"record", cmd_record},
		{"report", cmd_report},
		{"export", cmd_export},
		{"list", cmd_list},
		{"ps", cmd_ps},
		{"probe", cmd_probe},
		{"synth", cmd_synth},
		{"mount", cmd_mount},
		{"umount", cmd_umount},
		{"hist", cmd_hist},
		{"bootconfig", cmd_bootconfig},
		{"snapshot", cmd_snapshot},
		{"timerlat", cmd_timerlat},
		{"osnoise", cmd_osnoise},
		{"rv", cmd_rv},
	};

	/* (glibc's stdout is a variable to set, its manual says) */
	out.orig = stdout;
	if (!tool_wfile_open(&out, 1, "standard output"))
		stdout = out.f;
	if (argc < 2) {
		fputs(main_help, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		fputs(main_help, stdout);
		return out_done(0);
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
			fputs("Usage: trail version\n\nPrint trail's version.\n", stdout);
			return out_done(0);
		}
		if (argc > 2) {
			tool_usage_err("version", "unexpected argument '%s'", argv[2]);
			return EXIT_USAGE;
		}
		printf("trail %s\n", TRAIL_VERSION);
		return out_done(0);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return out_done(cmds[i].fn(argc - 1, argv + 1));
	fprintf(stderr, "trail: unknown command '%s'\n%s", argv[1], main_help);
	return EXIT_USAGE;
}
