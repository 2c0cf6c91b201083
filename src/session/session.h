/* SPDX-License-Identifier: MIT */
/*
 * session.h - what a recording is: its events (-e), their filters (-f)
 * and triggers (-T), dynamic events (--probe, the kept dynamic_events,
 * USDT), synthetic events, the function tracer and its options, the
 * buffer and its mode, and what is recorded (a command, processes, every
 * process). A front-end (the command line, a bootconfig file, a
 * tracefs-shaped mount) builds one from parts in its own syntax; the
 * parts are checked as they come (grammar), then against each other
 * (trail_session_validate), then against the programs' objects
 * (check.c, dynevents.c: the events, functions and probes they declare),
 * and the result is the spec the recorder and libtrail take
 * (trail_session_spec, trail_session_recorder_opts).
 *
 * Every message goes through the session's diag (one place, one caret
 * style): the front-end decides where it lands (stderr, a file's line
 * and column, the mount's error_log). Functions that can fail return 0,
 * or the exit status a command would end with: TRAIL_SESSION_FAIL (1) or
 * TRAIL_SESSION_USAGE (2, a bad request), the message said.
 */
#ifndef TRAIL_SESSION_SESSION_H
#define TRAIL_SESSION_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct trail_synth;
struct trail_rv_mon;
struct trail_recorder_opts;

#define TRAIL_SESSION_FAIL 1
#define TRAIL_SESSION_USAGE 2

enum trail_diag_level {
	TRAIL_DIAG_ERR,   /* the request fails */
	TRAIL_DIAG_USAGE, /* ... because of how it was asked */
	TRAIL_DIAG_WARN,
	TRAIL_DIAG_NOTE,  /* more about the message before it: raw text */
};

struct trail_diag_msg {
	enum trail_diag_level level;
	const char *msg;
	/* a caret error: what was parsed, the input, the position in it */
	const char *what, *input;
	size_t pos;
};

struct trail_diag {
	void (*emit)(void *ctx, const struct trail_diag_msg *m);
	void *ctx;
};

struct trail_session {
	const struct trail_diag *diag;
	/* events: -e patterns (not owned, but those probes add) */
	char **events;
	int nevents, events_cap;
	char **probe_events; /* -e patterns made for --probe events (owned) */
	int nprobe_events;
	/* the buffer and its mode */
	uint64_t buffer_bytes;
	uint32_t chunk_size;
	int buffer_given; /* -b */
	int overwrite;    /* flight recorder */
	uint32_t block_us; /* --blocking-timeout, ~0u: inf */
	uint32_t clock;
	const char *clock_want; /* -C */
	const char *output;
	/* what is recorded: a command, processes or every process */
	char **cmd;
	char *cmd_path;
	pid_t *pids;
	int npids, pids_cap;
	int all;
	int quiet, allow_unknown;
	/* the function tracer */
	const char *tracer; /* function, function_graph, or NULL */
	uint32_t max_depth, retval, args, no_libcall, nest_libcall;
	int nest; /* --nest N, -1: none */
	long tids[32]; /* in these threads only */
	int ntids;
	uint64_t thresh_ns;
	/* the spec's lines: -l / -n / -g as "@l GLOB"..., then what the
	 * checks add (probes, mangled names), then trail_session_spec's */
	char **funcs;
	int nfuncs;
	int nfuncs_user;    /* of those, given by the front-end */
	char **filters;     /* -f as "@filter PATTERN TEXT" */
	int nfilters;
	char **triggers;    /* -T as "@trigger PATTERN TEXT" */
	const char **trig_args; /* ... each as given */
	size_t *trig_off;   /* ... and where its TEXT starts in it */
	int ntriggers;
	int stacktrace;     /* a -T is a stacktrace: ftrace:user_stack recorded */
	int snapshot;       /* a -T is a snapshot */
	int objtrace;       /* a -T is an objtrace: ftrace:objtrace recorded */
	uint64_t hist_bytes; /* the histogram area the hist triggers want */
	uint8_t ctr[8];           /* --context counter:NAME: counters.h indexes */
	int nctr;
	uint8_t fctr[8];          /* --counters: function_graph's, per call */
	int nfctr;
	int stack;                /* --stack: a stacktrace after each -e and --probe event */
	struct trail_rv_mon *rvs; /* --rv: monitors (rv.h), checked in the processes */
	const char **rv_paths;    /* ... each one's model file */
	int nrv;
	const char **mmio_paths;  /* --mmio PATH (not owned) */
	uint64_t (*mmio_range)[2]; /* ... each one's --mmio-range (0, 0: all) */
	int nmmio;
	char **synths;      /* synthetic events as "@synth DEF" */
	struct trail_synth *sdefs; /* ... parsed */
	int nsynths;
	const char **probes; /* --probe definitions (not owned) */
	int nprobes;
	char **probe_names; /* "GRP:EVENT" of the probes compiled in */
	int nprobe_names;
	char **usdt;        /* "sdt_PROVIDER:NAME" of the target's USDT probes */
	int nusdt;
	/* what a front-end made for the session's parts (freed with it) */
	char **owned;
	int nowned;
	struct trail_bconf *bconf; /* a bootconfig's tree, its values used */
	const char *bconf_path;    /* ... its file (kept) */
	/* which of the file's instances the session records: NULL the top
	 * (ftrace.*), else ftrace.instance.NAME.* (the top's probe and
	 * synthetic definitions it names with them), into OUTPUT.NAME */
	const char *instance;
	int start_paused;   /* tracing off until a traceon trigger */
	int tp_printk;      /* every event also on stderr as text, live
			     * (a flight recorder's snapshots: overwrite) */
	int check_only;     /* checked, not recorded: no target needed */
};

/* An empty session whose messages go to diag (kept: it must outlive S). */
void trail_session_init(struct trail_session *S, const struct trail_diag *diag);
void trail_session_free(struct trail_session *S);

/* The parts, each checked for its own grammar (a caret error). */
int trail_session_event(struct trail_session *S, const char *pattern);
/* a filter for the events of the last event pattern */
int trail_session_filter(struct trail_session *S, const char *text);
/* [SYS:EVENT:]TRIGGER (without the event: the last event pattern's) */
int trail_session_trigger(struct trail_session *S, const char *text);
int trail_session_synth(struct trail_session *S, const char *def);
/* a runtime verification monitor: its DOT model (the kernel's rvgen
 * format, rv.h) read and parsed; its instances per thread until _per
 * says otherwise (thread, process or an event field), its reactor trace
 * (the rv:error record alone) until _reactor names another: both apply
 * to the last monitor given */
/* --context counter:NAME[,...] (LTTng's perf:thread:NAME too): the
 * thread's perf counters after each recorded event, as a
 * synthetic:perf_counters record; each checked here (perf_event_open on
 * this thread: a counter the machine has not, or not permitted, is an
 * error naming why) */
int trail_session_context(struct trail_session *S, const char *ctx);
/* --counters NAME[,NAME...]: read at each function_graph call's entry
 * and exit, the deltas a synthetic:funcgraph_counters record before its
 * exit */
int trail_session_counters(struct trail_session *S, const char *list);
/* --stack (LTTng's callstack-user context): the thread's user stack
 * after each recorded event of the -e and --probe options, as an
 * ftrace:user_stack record (a stacktrace trigger on each) */
void trail_session_stack(struct trail_session *S);
int trail_session_rv(struct trail_session *S, const char *path);
int trail_session_rv_per(struct trail_session *S, const char *per);
int trail_session_rv_reactor(struct trail_session *S, const char *reactor);
int trail_session_probe(struct trail_session *S, const char *def);
/* --mmio PATH: the loads and stores to a shared mapping of PATH (as
 * /proc/PID/maps names it; memfd:NAME too); --mmio-range START,END: the
 * file offsets of the --mmio before it */
int trail_session_mmio(struct trail_session *S, const char *path);
int trail_session_mmio_range(struct trail_session *S, const char *range);
/* kind 'l' (limit), 'n' (notrace), 'g' (graph root) */
int trail_session_func(struct trail_session *S, char kind, const char *glob);
int trail_session_tracer(struct trail_session *S, const char *name);
int trail_session_pid(struct trail_session *S, pid_t pid);

/* s (malloc'ed, or NULL: out of memory, said) kept until the session is
 * freed: for the parts a front-end makes (returned, else NULL) */
char *trail_session_keep(struct trail_session *S, char *s);

/* The parts of a bootconfig file (bootcfg.c: the kernel's boot-time
 * tracing keys, Documentation/trace/boottime-trace.rst, that mean
 * something for a process; the others said by a warning naming them).
 * path names the file in messages; text, len its contents. */
int trail_session_bootconfig(struct trail_session *S, const char *path, const char *text,
			     size_t len);
/* ... read from the file path (at most the grammar's limit and a byte) */
int trail_session_bootconfig_file(struct trail_session *S, const char *path);
/* The instances (ftrace.instance.NAME) of the session's bootconfig file,
 * up to max names of at most 63 bytes: how many there are. */
int trail_session_bootconfig_instances(const struct trail_session *S, char (*names)[64],
				       int max);

/* The parts against each other (a filter needs an event, graph options
 * a graph tracer...), and the kept synthetic definitions the session
 * names read in; cmd is the command to run (NULL-terminated, empty for
 * -P and -a). */
int trail_session_validate(struct trail_session *S, char **cmd);

/* The checks against the programs' objects (check.c): the command's
 * program (its path found, its events, filters, triggers, functions and
 * probes); one running process (pid, its name comm: -2 if it exited
 * meanwhile, not said); every process (-a). */
int trail_session_check_program(struct trail_session *S);
int trail_session_check_process(struct trail_session *S, pid_t pid, const char *comm);
int trail_session_check_all(struct trail_session *S);
/* The dynamic events (dynevents.c) of the program exe, process pid, or
 * (neither) every process. */
int trail_session_probes(struct trail_session *S, pid_t pid, const char *exe);
/* Does the session patch code (functions, probes, USDT)? */
int trail_session_patches(const struct trail_session *S);

/* The filters, triggers and synthetic events into the spec's lines,
 * after the probes: once every check has run. */
int trail_session_spec(struct trail_session *S);
/* What the recorder takes (its log and formatting hooks left unset). */
void trail_session_recorder_opts(const struct trail_session *S, struct trail_recorder_opts *o);

/* Messages (the front-end's diag): printf-style; a note is raw text
 * following the message before it. err/usage return TRAIL_SESSION_FAIL /
 * TRAIL_SESSION_USAGE. */
int trail_session_err(const struct trail_session *S, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int trail_session_usage(const struct trail_session *S, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void trail_session_warn(const struct trail_session *S, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void trail_session_note(const struct trail_session *S, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int trail_session_caret(const struct trail_session *S, int level, const char *what,
			const char *input, size_t pos, const char *msg);

#endif /* TRAIL_SESSION_SESSION_H */
