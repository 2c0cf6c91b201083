/* SPDX-License-Identifier: MIT */
/*
 * cmd-record.c - `trail record`: the command line of a recording. It
 * parses the options, checks what can be checked before anything runs
 * (the events and functions the program or processes declare, with the
 * ELF scanners of tools/trail), then drives the recorder of src/recorder/
 * (arena, launch or attach, drain, finish: recorder.h gives the order),
 * prints what it reports (status line, summary, messages), and decides
 * the exit status. The stop and SIGCHLD handlers are here: they only set
 * flags this file's loop acts on.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/common/arena.h"
#include "../../src/common/clock.h"
#include "../../src/recorder/recorder.h"
#include "../../src/session/elfscan.h"
#include "../../src/session/session.h"
#include "relay.h"
#include "targets.h"
#include "opt.h"
#include "../../src/common/util.h"
#include "tool.h"

/* a recording: its session (src/session), the recorder running it */
struct rec {
	struct trail_session s;
	struct trail_recorder *R;
	int *sigs; /* -P: each process's control signal */
	int tty;
	const char *relay; /* --relay URL */
	struct relay *rl;  /* ... its session, open from the start */
};

struct record_live record_live;

/* --relay: the session's name on the relay (LTTng's live URLs name it:
 * net://HOST/host/HOSTNAME/NAME): trail-COMMAND-PID, PID trail's own
 * (the relay's directory is NAME-DATE to the second: two recordings of
 * one command in a second would share it), trail-PID with -P */
static const char *relay_name(const struct trail_session *S)
{
	static char name[80];
	const char *b = *S->cmd ? strrchr(S->cmd[0], '/') : NULL;
	size_t k;

	if (*S->cmd)
		snprintf(name, sizeof(name), "trail-%.40s-%d", b ? b + 1 : S->cmd[0], (int)getpid());
	else if (S->npids)
		snprintf(name, sizeof(name), "trail-%d", (int)S->pids[0]);
	else
		snprintf(name, sizeof(name), "trail-all");
	/* (the relay wants a path-safe name: no '/', no leading '.') */
	for (k = 5; name[k]; k++)
		if (name[k] == '/' || (k == 6 && name[k] == '.'))
			name[k] = '_';
	return name;
}

/* Signals whose disposition the recorder changes for itself. */
static const int passed_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGXFSZ};
static struct sigaction passed_acts[sizeof(passed_sigs) / sizeof(passed_sigs[0])];

/* How long a command signalled to stop goes on being recorded. */
#define STOP_GRACE_NS 2000000000ull

static volatile sig_atomic_t stop_signal, stop_code, stop_count, got_sigchld;

static void on_stop(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!stop_signal) {
		stop_signal = sig;
		stop_code = si ? si->si_code : SI_USER;
	}
	stop_count++;
}

static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* a stop signal before the recording started: said, its exit status */
static int stopped_early(void)
{
	tool_err("stopped (%s) before the recording started: nothing recorded",
		 strsignal(stop_signal));
	return 128 + stop_signal;
}

static void on_chld(int sig)
{
	(void)sig;
	got_sigchld = 1;
}

/* ids of the options without a letter */
enum {
	O_CHUNK = OPT_LONG_ID, O_OVERWRITE, O_BLOCKING, O_UNKNOWN, O_DEPTH,
	O_THRESH, O_RETVAL, O_ARGS, O_NO_LIBCALL, O_NEST_LIBCALL, O_TID, O_NEST, O_PROBE, O_SYNTH,
	O_BOOTCONFIG,
	O_INSTANCE,
	O_PRINTK, O_RV, O_RV_PER, O_RV_REACTOR, O_CONTEXT, O_COUNTERS, O_MMIO, O_MMIO_RANGE,
	O_STACK, O_RELAY,
};

static const struct opt_cmd record_opts = {
	.name = "record",
	.intro = "Usage: trail record [OPTIONS] -e EVENT [-e EVENT...] [--] COMMAND [ARGS...]\n"
		 "       trail record [OPTIONS] -e EVENT... -P PID [-P PID...]\n"
		 "       trail record [OPTIONS] -e EVENT... -a\n"
		 "\n"
		 "Record static tracepoints of a command (started with libtrail preloaded,\n"
		 "children and exec'd programs included) or of running processes that have\n"
		 "libtrail loaded. Stops when the command exits or on Ctrl-C, then writes\n"
		 "a complete trace file.\n",
	.col = 25,
	.in_order = 1, /* what follows the options is the command's */
	.opts = (const struct opt[]){
		{'e', "event", OPT_REQUIRED, "EVENT",
		 "events to record: SYS:EVENT, SYS, EVENT, globs, 'all';\n"
		 "sdt_PROVIDER:NAME: a USDT probe of the program", 0, NULL},
		{'f', "filter", OPT_REQUIRED, "FILTER",
		 "record the events of the -e before it only when\n"
		 "FILTER holds, in the kernel's grammar (tested in\n"
		 "the process: 'bytes > 4096 && path ~ \"/var/*\"')", 0, NULL},
		{'T', "trigger", OPT_REQUIRED, "[SYS:EVENT:]TRIGGER",
		 "when the event (else the -e before it) fires:\n"
		 "traceon, traceoff, snapshot (--overwrite: into\n"
		 "OUTPUT.N), stacktrace, enable_event:S:E,\n"
		 "disable_event:S:E; [:COUNT] [if FILTER];\n"
		 "hist:keys=... (kept in the process: trail hist);\n"
		 "objtrace:add:FIELD[,OFFSET][:TYPE] (with -p);\n"
		 "set_wprobe:GRP/EVENT:FIELD[+OFF], clear_wprobe:...", 0, NULL},
		{0, "context", OPT_REQUIRED, "counter:NAME",
		 "after each event of -e and --probe, the thread's\n"
		 "perf counters (page-faults, task-clock, cycles...;\n"
		 "LTTng's perf:thread:NAME too), a comma list or\n"
		 "repeated: a synthetic:perf_counters record", O_CONTEXT, NULL},
		{0, "stack", OPT_NONE, NULL,
		 "after each event of -e and --probe, the thread's\n"
		 "user stack (.sframe, .eh_frame or frame pointers):\n"
		 "an ftrace:user_stack record (-T stacktrace on each)", O_STACK, NULL},
		{0, "rv", OPT_REQUIRED, "MODEL.dot",
		 "a runtime verification monitor: a DOT automaton\n"
		 "(the kernel's rvgen format) checked in the process\n"
		 "on every event it names, before its record; a\n"
		 "violation is an rv:error record", O_RV, NULL},
		{0, "per", OPT_REQUIRED, "WHAT",
		 "the --rv before it: an automaton per thread\n"
		 "(default), process, or value of this event field", O_RV_PER, NULL},
		{0, "reactor", OPT_REQUIRED, "R",
		 "the --rv before it, at a violation, besides the\n"
		 "record: trace (default, nothing more), nop, printk\n"
		 "(a line on the process's stderr), traceoff, snapshot,\n"
		 "abort (the process dumps core)", O_RV_REACTOR, NULL},
		{0, "relay", OPT_REQUIRED, "URL",
		 "the recording to lttng-relayd (net://HOST[:CTRL\n"
		 "[:DATA]]) as CTF: a live session from the start\n"
		 "(babeltrace2's lttng-live), the records when it ends", O_RELAY, NULL},
		{'o', "output", OPT_REQUIRED, "FILE",
		 "trace file (default trace.dat); -: standard output\n"
		 "(a stream: the command's output goes to stderr)", 0, NULL},
		{'p', "plugin", OPT_REQUIRED, "TRACER",
		 "a tracer: function (every call of a function with a\n"
		 "patchable entry, -fpatchable-function-entry=5, or of an\n"
		 "unmodified program's own functions, and the program's\n"
		 "calls into shared libraries)\n"
		 "or function_graph (calls and returns, with durations);\n"
		 "timerlat, osnoise: trail's own measuring threads\n"
		 "(trail timerlat; their options after --)", 0, NULL},
		{'l', "limit-func", OPT_REQUIRED, "GLOB", "trace only these functions, FUNC or FUNC@OBJECT (repeatable; a library's only where named)", 0, NULL},
		{'n', "notrace-func", OPT_REQUIRED, "GLOB", "not these, FUNC or FUNC@OBJECT (repeatable)", 0, NULL},
		{'g', "graph-func", OPT_REQUIRED, "GLOB",
		 "function_graph: only what these call (repeatable)", 0, NULL},
		{0, "max-graph-depth", OPT_REQUIRED, "N", "function_graph: no deeper than N calls", O_DEPTH, NULL},
		{0, "graph-time-thresh", OPT_REQUIRED, "T",
		 "function_graph: only calls longer than T (50us)", O_THRESH, NULL},
		{0, "retval", OPT_NONE, NULL, "function_graph: record return values", O_RETVAL, NULL},
		{0, "counters", OPT_REQUIRED, "NAME[,NAME...]",
		 "function_graph: the thread's perf counters at each\n"
		 "call's entry and exit (page-faults, task-clock,\n"
		 "cycles...): report's /* diff: */, --summary columns", O_COUNTERS, NULL},
		{0, "args", OPT_NONE, NULL,
		 "function_graph: record the arguments (named and typed from DWARF in report)", O_ARGS,
		 NULL},
		{0, "no-libcall", OPT_NONE, NULL,
		 "function tracers: not the program's calls into shared\n"
		 "libraries (through its PLT or GOT: malloc, write...)", O_NO_LIBCALL, NULL},
		{0, "nest-libcall", OPT_NONE, NULL,
		 "function tracers: the libraries' calls into other\n"
		 "libraries too (through their PLTs; uftrace's option;\n"
		 "not in libraries dlopen'ed later)", O_NEST_LIBCALL, NULL},
		{0, "tid", OPT_REQUIRED, "TID[,TID...]",
		 "function tracers: only in these threads of the\n"
		 "-P processes (ftrace's set_ftrace_pid)", O_TID, NULL},
		{0, "nest", OPT_REQUIRED, "N",
		 "function tracers: calls in signal handlers nested\n"
		 "at most N deep (0: none, ftrace's funcgraph-irqs off)", O_NEST, NULL},
		{0, "probe", OPT_REQUIRED, "DEF",
		 "a dynamic event for this recording only, in the\n"
		 "grammar of 'trail probe' (recorded without -e)", O_PROBE, NULL},
		{0, "mmio", OPT_REQUIRED, "PATH",
		 "every load and store to a shared mapping of PATH\n"
		 "(as /proc/PID/maps names it: /dev/uio0, /dev/mem,\n"
		 "memfd:NAME): mmio:rw records (address, file offset,\n"
		 "width, value, instruction), its threads running;\n"
		 "doc/mmio.md", O_MMIO, NULL},
		{0, "mmio-range", OPT_REQUIRED, "START,END",
		 "the --mmio before it: only these file offsets", O_MMIO_RANGE, NULL},
		{0, "bootconfig", OPT_REQUIRED, "FILE",
		 "what to record from a bootconfig file (the kernel's\n"
		 "boot-time tracing keys: ftrace.tracer, ftrace.event.*,\n"
		 "...; 'trail bootconfig -c' checks one)", O_BOOTCONFIG, NULL},
		{0, "tp-printk", OPT_NONE, NULL,
		 "every event also on stderr as text while it is\n"
		 "recorded (a flight recorder's, every 100 ms)", O_PRINTK, NULL},
		{0, "instance", OPT_REQUIRED, "NAME",
		 "with --bootconfig: its instance NAME alone\n"
		 "(ftrace.instance.NAME.*), into OUTPUT.NAME", O_INSTANCE, NULL},
		{0, "synth", OPT_REQUIRED, "DEF",
		 "a synthetic event for this recording only, in the\n"
		 "grammar of 'trail synth' (for -T's trace())", O_SYNTH, NULL},
		{'P', "pid", OPT_REQUIRED, "PID",
		 "attach to a running process (repeatable); one\n"
		 "started without libtrail gets it through ptrace", 0, NULL},
		{'a', "all", OPT_NONE, NULL,
		 "every process of yours with libtrail loaded, and\n"
		 "those that start while recording (until Ctrl-C)", 0, NULL},
		{'b', "buffer-size", OPT_REQUIRED, "KB",
		 "shared buffer size in KiB, or with K/M/G (default:\n"
		 "1/64 of the memory, 32M to 1G)", 0, NULL},
		{0, "chunk-size", OPT_REQUIRED, "SIZE", "per-thread chunk size (default 64K)", O_CHUNK, NULL},
		{'C', "clock", OPT_REQUIRED, "CLOCK",
		 "timestamps: auto (default: the TSC when it is\n"
		 "invariant and in step on every CPU, else mono),\n"
		 "x86-tsc, or mono (CLOCK_MONOTONIC)", 0, NULL},
		{0, "overwrite", OPT_NONE, NULL,
		 "flight recorder: keep the newest events, overwrite\n"
		 "the oldest, write the file at the end", O_OVERWRITE, NULL},
		{0, "blocking-timeout", OPT_REQUIRED, "T",
		 "a thread finding the buffer full waits up to T\n"
		 "(10ms, 1s, inf) for the recorder instead of\n"
		 "dropping the event (LTTng's blocking mode)", O_BLOCKING, NULL},
		{0, "allow-unknown", OPT_NONE, NULL,
		 "accept event names the binary does not declare\n"
		 "(events from libraries loaded later with dlopen)", O_UNKNOWN, NULL},
		{'q', "quiet", OPT_NONE, NULL, "no live status line and no summary", 0, NULL},
		OPT_HELP_ROW,
		{0},
	},
};

static int usage_err(const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	tool_usage_err("record", "%s", msg);
	return EXIT_USAGE;
}

/* The recorder's messages, as every trail message: "trail: ..." */
static void log_msg(void *ctx, enum trail_recorder_level level, const char *msg)
{
	const struct rec *C = ctx;

	if (level == TRAIL_RECORDER_ERR)
		tool_err("%s", msg);
	else if (level == TRAIL_RECORDER_WARN)
		tool_warn("%s", msg);
	else if (!C->s.quiet)
		fprintf(stderr, "trail: %s\n", msg);
}

static void status_line(struct rec *C, int final)
{
	struct trail_session *S = &C->s;
	struct trail_recorder_stats st;
	char a[32], b[32], c[32];
	uint64_t lost = 0;

	if (!C->tty || S->quiet)
		return;
	lost = trail_recorder_live_lost(C->R);
	trail_recorder_stats(C->R, &st);
	fprintf(stderr, "\r\033[Ktrail: %s events  %s  lost %s  processes %u%s",
		tool_thousands(st.events, a, sizeof(a)),
		tool_human_bytes(st.bytes, b, sizeof(b)),
		tool_thousands(lost, c, sizeof(c)), st.procs, final ? "\n" : "");
	if (final)
		fputs("\r\033[K", stderr);
}

/* ---------------------------------------------------------------- launch */

/* In the command's process, before exec: the dispositions trail was
 * given, not the recorder's own. */
static void restore_signals(void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(passed_sigs) / sizeof(passed_sigs[0]); i++)
		sigaction(passed_sigs[i], &passed_acts[i], NULL);
}

/* ---------------------------------------------------------------- finish */

/* The output failed (err): said, and the file closed unless closed. What
 * holds events is kept; a file with none would only replace an earlier
 * recording by an empty one: it goes, the earlier one stays. */
static void write_failed(struct rec *C, int err, int closed)
{
	struct trail_session *S = &C->s;
	struct trail_recorder_stats st;
	struct stat sb;
	char a[32], b[32];

	trail_recorder_stats(C->R, &st);
	if (closed || st.events) {
		if (!closed)
			trail_recorder_close(C->R, 1);
		tool_err("writing %s: %s after %s events; recording stopped, the file keeps "
			 "the %s written before the error", S->output, strerror(-err),
			 tool_thousands(st.events, a, sizeof(a)),
			 tool_human_bytes(st.file_bytes, b, sizeof(b)));
		return;
	}
	trail_recorder_close(C->R, 0);
	tool_err("writing %s: %s; nothing was recorded%s", S->output, strerror(-err),
		 stat(S->output, &sb) == 0 && S_ISREG(sb.st_mode)
			 ? " (the file there before is left as it was)" : "");
}

/* The closing line: what the file holds, with the file's own accounting. */
static void summary(struct rec *C)
{
	struct trail_session *S = &C->s;
	struct trail_recorder_stats st;
	char a[32], b[32], c2[32];
	uint32_t traps = 0;

	if (S->quiet)
		return;
	trail_recorder_stats(C->R, &st);
	fprintf(stderr, "trail: %s events (%s) from %u process%s in %s, %s lost%s\n",
		tool_thousands(st.events, a, sizeof(a)),
		tool_human_bytes(st.file_bytes, b, sizeof(b)), st.procs,
		st.procs == 1 ? "" : "es", S->output,
		tool_thousands(st.lost, c2, sizeof(c2)),
		st.lost && !S->overwrite ? " (buffer full: try a larger -b)" : "");
	if (st.bad_chunks)
		tool_warn("%llu malformed chunks were refused", (unsigned long long)st.bad_chunks);
	if (S->tracer && (trail_recorder_hooked(C->R, &traps), traps))
		fprintf(stderr, "trail: %u of the functions hooked were entered through a breakpoint "
				"(nothing can move their entry: a trap per call, a few us each; "
				"'trail list -f' marks them [breakpoint], -n leaves them out)\n",
			traps);
	if (st.procs_refused)
		tool_warn("%llu processes could not join the session (more than %u)",
			  (unsigned long long)st.procs_refused, st.max_procs);
}

/* A launched command that recorded nothing at all: say why (its events
 * were not there, or libtrail never loaded). 1: that is an error. */
static int nothing_recorded(struct rec *C, const char *libtrail)
{
	struct trail_session *S = &C->s;
	struct trail_recorder_stats st;

	if (!*S->cmd || !trail_recorder_child(C->R, NULL, NULL))
		return 0;
	trail_recorder_stats(C->R, &st);
	if (!st.procs) {
		tool_err("no process of %s joined the recording: libtrail (%s) was not loaded "
			 "(a static or setuid program, a bad TRAIL_LIBRARY, or LD_PRELOAD refused); "
			 "%s not written",
			 S->cmd[0], libtrail, S->output);
		return 1;
	}
	/* (--mmio: the process says at its exit why a PATH gave nothing) */
	if (st.user_events || trail_recorder_hooked(C->R, NULL) || st.events || S->nmmio)
		return 0;
	/* with --allow-unknown, absent events were asked for: a warning */
	if (S->allow_unknown) {
		tool_warn("nothing was recorded: no process that ran (%u) %s", st.procs,
			  S->tracer ? "had a function matching the selection"
				    : "declared an event matching the -e patterns");
		return 0;
	}
	tool_err("nothing was recorded: no process that ran (%u) %s; %s not written", st.procs,
		 S->tracer ? "had a function matching the selection"
			   : "declared an event matching the -e patterns",
		 S->output);
	return !S->allow_unknown;
}

/* trail's exit status: its own error first, else the command's (as time
 * and perf record do): its exit status, or 128 + the signal that killed it;
 * a command left running after a stop signal: 128 + that signal. */
static int command_result(struct rec *C, int own)
{
	struct trail_session *S = &C->s;
	int done, status;
	pid_t child;

	trail_recorder_reap(C->R);
	child = trail_recorder_child(C->R, &done, &status);
	if (child && !done) {
		if (stop_signal)
			tool_warn("%s (pid %d) did not exit within %llu s of %s: it goes on, "
				  "untraced", S->cmd[0], (int)child,
				  STOP_GRACE_NS / 1000000000ull, strsignal(stop_signal));
		else
			tool_warn("%s (pid %d) goes on, untraced", S->cmd[0], (int)child);
		return own ? own : stop_signal ? 128 + stop_signal : 1;
	}
	if (done && WIFSIGNALED(status) &&
	    WTERMSIG(status) != SIGINT && WTERMSIG(status) != SIGTERM &&
	    WTERMSIG(status) != stop_signal)
		tool_warn("%s was killed by signal %d (%s)", S->cmd[0],
			  WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (own)
		return own;
	if (!done)
		return 0; /* -P, -a: stopping is the normal end */
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* What the recorder is to do: the options, once checked. */
static void recorder_opts(struct rec *C, struct trail_recorder_opts *o)
{
	trail_session_recorder_opts(&C->s, o);
	if (C->s.all && o->patches)
		o->decoder = tool_decoder_path();
	o->log = log_msg;
	o->log_ctx = C;
	o->fmt_bytes = tool_human_bytes;
}

/* ---------------------------------------------------------------- main */

/* The options into the session: 0, the exit status (said), or -1 (help
 * printed). */
static int parse(struct rec *C, int argc, char **argv)
{
	struct trail_session *S = &C->s;
	struct opt_parser op;
	int c, r = 0;

	/* (the instance first: the bootconfig file is read for it) */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--instance") && i + 1 < argc)
			S->instance = argv[i + 1];
		else if (!strncmp(argv[i], "--instance=", 11))
			S->instance = argv[i] + 11;
	opt_init(&op, &record_opts, argc, argv);
	while (!r && (c = opt_next(&op)) != OPT_END) {
		uint64_t v;
		unsigned long n;

		switch (c) {
		case 'e':
			r = trail_session_event(S, optarg);
			break;
		case 'f':
			r = trail_session_filter(S, optarg);
			break;
		case 'T':
			r = trail_session_trigger(S, optarg);
			break;
		case 'o':
			S->output = optarg;
			break;
		case 'P': {
			pid_t pid;

			if (tool_pid_arg("record", "-P", optarg, &pid))
				return EXIT_USAGE;
			r = trail_session_pid(S, pid);
			break;
		}
		case 'b':
			r = trail__parse_kb(optarg, &v);
			if (r == -ERANGE)
				return usage_err("-b %s: too large (a buffer lives in memory)", optarg);
			if (r || v < 8192)
				return usage_err("-b needs a size of at least 8 KiB, not '%s'", optarg);
			S->buffer_bytes = v;
			S->buffer_given = 1;
			break;
		case 'C':
			if (strcmp(optarg, "auto") && strcmp(optarg, "mono") &&
			    strcmp(optarg, "tsc") && strcmp(optarg, "x86-tsc"))
				return usage_err("unknown clock '%s' (available: auto x86-tsc mono)", optarg);
			S->clock_want = optarg;
			break;
		case O_CHUNK:
			if (trail__parse_kb(optarg, &v) || v < TRAIL_CHUNK_MIN ||
			    v > TRAIL_CHUNK_MAX || (v & (v - 1)))
				return usage_err("--chunk-size needs a power of two between 4K and 16M, not '%s'",
						 optarg);
			S->chunk_size = (uint32_t)v;
			break;
		case O_OVERWRITE:
			S->overwrite = 1;
			break;
		case O_BLOCKING:
			if (!strcmp(optarg, "inf")) {
				S->block_us = ~0u;
				break;
			}
			if (tool_parse_duration(optarg, &v) || v < 1000 || v / 1000 >= ~0u)
				return usage_err("--blocking-timeout needs a duration from 1us "
						 "(10ms, 2s) or 'inf', not '%s'", optarg);
			S->block_us = (uint32_t)(v / 1000);
			break;
		case O_UNKNOWN:
			S->allow_unknown = 1;
			break;
		case 'a':
			S->all = 1;
			break;
		case 'p':
			r = trail_session_tracer(S, optarg);
			break;
		case O_DEPTH:
			if (tool_parse_ulong(optarg, NULL, 1, 100000, &n))
				return usage_err("--max-graph-depth needs a depth from 1, not '%s'", optarg);
			S->max_depth = (uint32_t)n;
			break;
		case O_THRESH:
			if (tool_parse_duration(optarg, &v) || !v)
				return usage_err("--graph-time-thresh needs a duration like 50us, not '%s'",
						 optarg);
			S->thresh_ns = v;
			break;
		case O_RETVAL:
			S->retval = 1;
			break;
		case O_ARGS:
			S->args = 1;
			break;
		case O_NO_LIBCALL:
			S->no_libcall = 1;
			break;
		case O_NEST_LIBCALL:
			S->nest_libcall = 1;
			break;
		case O_PROBE:
			r = trail_session_probe(S, optarg);
			break;
		case O_SYNTH:
			r = trail_session_synth(S, optarg);
			break;
		case O_BOOTCONFIG:
			r = trail_session_bootconfig_file(S, optarg);
			break;
		case O_MMIO:
			r = trail_session_mmio(S, optarg);
			break;
		case O_MMIO_RANGE:
			r = trail_session_mmio_range(S, optarg);
			break;
		case O_CONTEXT:
			r = trail_session_context(S, optarg);
			break;
		case O_COUNTERS:
			r = trail_session_counters(S, optarg);
			break;
		case O_RELAY: {
			struct relay_url u;
			char why[256];

			C->relay = optarg;
			if (relay_url_parse(optarg, &u, why, sizeof(why)))
				r = trail_session_caret(S, TRAIL_DIAG_USAGE, "relay", optarg, (size_t)u.pos, why);
			break;
		}
		case O_STACK:
			trail_session_stack(S);
			break;
		case O_RV:
			r = trail_session_rv(S, optarg);
			break;
		case O_RV_PER:
			r = trail_session_rv_per(S, optarg);
			break;
		case O_RV_REACTOR:
			r = trail_session_rv_reactor(S, optarg);
			break;
		case O_PRINTK:
			S->tp_printk = S->overwrite = 1;
			break;
		case O_NEST:
			if (tool_parse_ulong(optarg, NULL, 0, 64, &n))
				return usage_err("--nest needs a signal handler level from 0 to 64, not '%s'",
						 optarg);
			S->nest = (int)n;
			break;
		case O_TID:
			r = record_parse_tids(S, optarg);
			break;
		case 'l':
		case 'n':
		case 'g':
			r = trail_session_func(S, (char)c, optarg);
			break;
		case 'q':
			S->quiet = 1;
			break;
		case OPT_EXIT: /* (--help: -1, the command ends well) */
			return op.status ? op.status : -1;
		}
	}
	if (!r && S->instance && !S->bconf)
		return usage_err("--instance %s names an instance of a --bootconfig file", S->instance);
	if (!r && S->tracer && (!strcmp(S->tracer, "timerlat") || !strcmp(S->tracer, "osnoise"))) {
		char **lat = NULL; /* (trail's own measuring threads: cmd-latency.c) */

		if (!(r = latency_record(S, argv + optind, &lat)))
			r = trail_session_validate(S, lat);
	} else if (!r) {
		r = trail_session_validate(S, argv + optind);
	}
	/* a file per process: -o with %p (a bootconfig's trail.output) */
	if (!r && strstr(S->output, "%p")) {
		const char *p = strstr(S->output, "%p");
		char *o = NULL;

		if (asprintf(&o, "%.*s%d%s", (int)(p - S->output), S->output,
			     S->npids ? (int)S->pids[0] : (int)getpid(), p + 2) < 0 ||
		    !(S->output = trail_session_keep(S, o)))
			return 1;
	}
	return r;
}

/* What is checked before attaching: each process (one that exited is
 * left out, unless none is left), then each --tid's. */
static int check_processes(struct rec *C)
{
	struct trail_session *S = &C->s;
	int r;

	if ((r = trail_session_probes(S, S->pids[0], NULL)))
		return r;
	/* a stop signal from here on (a background job's SIGINT too, which
	 * it inherited ignored) is taken and acted on between steps: an
	 * injection under way finishes first */
	catch_stop_signals();
	for (int i = 0, seen = S->npids; i < S->npids; i++) {
		r = record_check_pid(S, S->pids[i], &C->sigs[i]);
		if (r == -1)
			return 1;
		if (stop_signal)
			return stopped_early();
		if (r == -2 && --seen == 0) {
			tool_err(S->npids == 1 ? "no process with pid %d (it exited?)"
					       : "no process with pid %d, nor any other -P (they exited?)",
				 (int)S->pids[i]);
			return 1;
		}
		if (r == -2) { /* gone: the others are recorded */
			tool_warn("process %d exited before it could be attached: going on "
				  "with the others", (int)S->pids[i]);
			memmove(&S->pids[i], &S->pids[i + 1],
				(size_t)(S->npids - i - 1) * sizeof(S->pids[0]));
			S->npids--;
			i--;
		}
	}
	for (int i = 0; i < S->ntids; i++) {
		int found = 0;

		for (int k = 0; k < S->npids && !found; k++) {
			char task[64];

			snprintf(task, sizeof(task), "/proc/%d/task/%ld", (int)S->pids[k], S->tids[i]);
			found = access(task, F_OK) == 0;
		}
		if (!found) {
			if (S->npids > 1)
				tool_err("--tid %ld: not a thread of any -P process", S->tids[i]);
			else
				tool_err("--tid %ld: not a thread of process %d", S->tids[i],
					 (int)S->pids[0]);
			return 1;
		}
	}
	return 0;
}

static int record(struct rec *C, int argc, char **argv)
{
	struct trail_session *S = &C->s;
	struct sigaction sa;
	const char *libtrail = NULL;
	int r, rc = 1, stopping = 0;
	uint64_t last_alive = 0, last_status = 0, last_live = trail__mono_ns(), grace_end = 0;
	struct trail_recorder_opts ro;

	/* the command gets the dispositions trail was given (a background
	 * job's ignored SIGINT, say), not the recorder's own */
	for (size_t i = 0; i < sizeof(passed_sigs) / sizeof(passed_sigs[0]); i++)
		sigaction(passed_sigs[i], NULL, &passed_acts[i]);
	/* a file size limit is a write error to report, not a kill; a reader
	 * of a FIFO output that goes away, likewise */
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if ((r = parse(C, argc, argv)))
		return r < 0 ? 0 : r;
	/* Everything that can be checked is checked before anything runs. */
	if (*S->cmd) {
		if ((r = record_check_command(S, &libtrail)))
			return r;
	} else if (S->npids) {
		if (!(C->sigs = calloc((size_t)S->npids, sizeof(int))))
			return 1;
		if ((r = check_processes(C)))
			return r;
	}
	if (S->all && ((r = trail_session_probes(S, 0, NULL)) ||
		       (r = tool_registry_usable() ? 1 : trail_session_check_all(S))))
		return r;
	if (trail_session_spec(S))
		return 1;
	{
		const char *why;

		S->clock = tool_clock_choose(S->clock_want, &why);
		if (S->clock == TRAIL_CLOCK_NONE) {
			tool_err("-C %s: %s", S->clock_want, why);
			return 1;
		}
	}
	recorder_opts(C, &ro);
	if (trail_recorder_create(&ro, &C->R))
		goto out;
	trail_recorder_raise_priority(C->R);
	/* from the moment the output exists, a stop signal finishes it */
	catch_stop_signals();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	if (C->relay && !strcmp(S->output, "-")) {
		tool_usage_err("record", "--relay sends the trace file once written: give -o FILE "
			       "(not -o -)");
		goto out;
	}
	if (!strcmp(S->output, "-") && isatty(STDOUT_FILENO)) {
		tool_err("-o -: standard output is a terminal; the trace goes to a pipe, a "
			 "socket or a file (trail record -o - ... | trail report -i -)");
		goto out;
	}
	/* the relay's session first: a relay that is not there stops the
	 * recording before anything runs, and a live reader may attach */
	if (C->relay && !(C->rl = relay_open(C->relay, relay_name(S))))
		goto out;
	r = trail_recorder_open(C->R, S->output);
	if (!r && !strcmp(S->output, "-"))
		/* the trace has its own copy of standard output: the
		 * command's output, and ours, go to standard error */
		dup2(STDERR_FILENO, STDOUT_FILENO);
	if (r == -EBUSY) {
		tool_err("another trail record is writing %s (its %s.part is locked): "
			 "choose another -o", S->output, S->output);
		goto out;
	} else if (r) {
		tool_err("cannot write %s: %s", S->output, strerror(-r));
		goto out;
	}
	if (trail_recorder_begin(C->R))
		goto write_error;

	C->tty = isatty(2);
	if (stop_signal) { /* asked to stop before anything ran */
		trail_recorder_close(C->R, 0);
		rc = stopped_early();
		goto out;
	}

	if (S->all) {
		size_t asked = trail_recorder_attach_new(C->R);

		if (!S->quiet)
			fprintf(stderr, "trail: recording every process of yours with libtrail "
				"(%zu now, new ones as they start); Ctrl-C to stop\n", asked);
	} else if (*S->cmd ? trail_recorder_launch(C->R, libtrail, restore_signals, NULL)
			   : trail_recorder_attach(C->R, C->sigs)) {
		/* nothing ran: an existing output file stays as it was */
		trail_recorder_finish(C->R);
		trail_recorder_close(C->R, 0);
		goto out;
	}

	record_take_over(S);
	record_instances_start(S, trail_recorder_child(C->R, NULL, NULL));
	if (record_printk_start(S, &record_live))
		goto out;
	for (;;) {
		uint64_t now = trail__mono_ns();
		pid_t child;
		int done;
		uint32_t n;

		if (trail_recorder_error(C->R))
			break;
		child = trail_recorder_child(C->R, &done, NULL);
		if (stop_signal && !stopping) {
			/* a command goes on being recorded while it exits: it gets
			 * the signal (unless the terminal sent it to both of us)
			 * and STOP_GRACE_NS to act on it */
			stopping = 1;
			if (!child || done)
				break;
			if (stop_code != SI_KERNEL)
				kill(child, stop_signal);
			grace_end = now + STOP_GRACE_NS;
		}
		if (stopping && (stop_count > 1 || now >= grace_end))
			break;
		if (trail_recorder_reap(C->R))
			break;
		/* on the period of the recorder's process checks */
		if (S->npids && now - last_alive > 100000000ull) {
			int alive = 0;

			for (int i = 0; i < S->npids; i++)
				if (kill(S->pids[i], 0) == 0)
					alive = 1;
			if (!alive)
				break;
			last_alive = now;
		}
		n = trail_recorder_poll(C->R, now, S->all);
		if (record_live.fn && now - last_live >= record_live.period_ns) {
			record_live.fn(C->R, record_live.arg);
			last_live = now;
		}
		if (now - last_status > 250000000ull) {
			status_line(C, 0);
			last_status = now;
		}
		trail_recorder_nap(C->R, n);
	}
	record_instances_stop();
	record_printk_end(C->R, &record_live);
	if (trail_recorder_error(C->R)) {
		/* stop the writers, keep what is on disk */
		trail_recorder_detach(C->R);
		status_line(C, 1);
		write_failed(C, trail_recorder_error(C->R), 0);
	} else {
		int failed;

		trail_recorder_finish(C->R);
		status_line(C, 1);
		/* a start that recorded nothing is a failed start: FILE.part
		 * goes, an older FILE stays as it was */
		failed = nothing_recorded(C, libtrail);
		r = trail_recorder_close(C->R, !failed);
		if (r)
			write_failed(C, r, 1);
		else if (failed)
			rc = 1;
		else {
			rc = 0;
			summary(C);
			if (C->rl && relay_finish(C->rl, S->output))
				rc = 1;
			C->rl = NULL;
		}
	}
	rc = command_result(C, rc);
	goto out;
write_error:
	write_failed(C, trail_recorder_error(C->R), 0);
out:
	return rc;
}

int cmd_record(int argc, char **argv)
{
	static const struct trail_diag diag = {tool_diag, (void *)"record"};
	struct rec *C = calloc(1, sizeof(*C));
	int rc;

	if (!C)
		return 1;
	trail_session_init(&C->s, &diag);
	rc = record(C, argc, argv);
	relay_abort(C->rl); /* (a recording that failed: the session closed empty) */
	trail_recorder_free(C->R);
	trail_session_free(&C->s);
	free(C->sigs);
	free(C);
	return rc;
}
