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
#include "../../src/common/fetch.h"
#include "../../src/common/filter.h"
#include "../../src/common/hist.h"
#include "../../src/common/htab.h"
#include "../../src/common/trigger.h"
#include "../../src/common/meta.h"
#include "../../src/common/registry.h"
#include "../../src/common/spec.h"
#include "../../src/common/synth.h"
#include "../../src/common/util.h"
#include "../../src/recorder/recorder.h"
#include "elfscan.h"
#include "funcscan.h"
#include "opt.h"
#include "probes.h"
#include "usdt.h"
#include "synths.h"
#include "tool.h"

struct session {
	/* options */
	char **events;
	int nevents;
	const char *output;
	uint64_t buffer_bytes;
	uint32_t chunk_size;
	pid_t *pids;
	int npids;
	int overwrite, quiet, allow_unknown, all;
	int buffer_given; /* -b */
	uint32_t block_us; /* --blocking-timeout, ~0u: inf */
	const char *tracer; /* -p */
	uint32_t max_depth, retval, args, no_libcall, nest_libcall;
	int nest; /* --nest N, -1: none */
	long tids[32]; /* --tid: function tracers in these threads only */
	int ntids;
	uint64_t thresh_ns;
	char **funcs;       /* -l / -n as "@l GLOB" / "@n GLOB" spec lines */
	int nfuncs;
	int nfuncs_user;    /* of those, given on the command line */
	char **filters;     /* -f as "@filter PATTERN TEXT" spec lines */
	int nfilters;
	char **triggers;    /* -T as "@trigger PATTERN TEXT" spec lines */
	const char **trig_args; /* ... each as given */
	size_t *trig_off;   /* ... and where its TEXT starts in it */
	int ntriggers;
	int stacktrace;     /* a -T is a stacktrace: ftrace:user_stack recorded */
	uint64_t hist_bytes; /* the histogram area the hist triggers want */
	int snapshot;       /* a -T is a snapshot */
	int objtrace;       /* a -T is an objtrace: ftrace:objtrace recorded */
	char **synths;      /* synthetic events as "@synth DEF" spec lines */
	struct trail_synth *sdefs; /* ... parsed */
	int nsynths;
	char **probes;      /* --probe definitions */
	int nprobes;
	char **probe_names; /* "GRP:EVENT" of the probes compiled in */
	int nprobe_names;
	char **probe_events; /* -e patterns made for --probe events (owned) */
	int nprobe_events;
	char **usdt;        /* "sdt_PROVIDER:NAME" of the target's USDT probes */
	int nusdt;
	char **cmd;
	int *sigs; /* -P: each process's control signal */
	char *cmd_path;
	uint32_t clock;
	const char *clock_want; /* -C */

	struct trail_recorder *R;
	int tty;
};

struct record_live record_live;

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
		 "objtrace:add:FIELD[,OFFSET][:TYPE] (with -p)", 0, NULL},
		{'o', "output", OPT_REQUIRED, "FILE", "trace file (default trace.dat)", 0, NULL},
		{'p', "plugin", OPT_REQUIRED, "TRACER",
		 "a tracer: function (every call of a function with a\n"
		 "patchable entry, -fpatchable-function-entry=5, or of an\n"
		 "unmodified program's own functions, and the program's\n"
		 "calls into shared libraries)\n"
		 "or function_graph (calls and returns, with durations)", 0, NULL},
		{'l', "limit-func", OPT_REQUIRED, "GLOB", "trace only these functions, FUNC or FUNC@OBJECT (repeatable; a library's only where named)", 0, NULL},
		{'n', "notrace-func", OPT_REQUIRED, "GLOB", "not these, FUNC or FUNC@OBJECT (repeatable)", 0, NULL},
		{'g', "graph-func", OPT_REQUIRED, "GLOB",
		 "function_graph: only what these call (repeatable)", 0, NULL},
		{0, "max-graph-depth", OPT_REQUIRED, "N", "function_graph: no deeper than N calls", O_DEPTH, NULL},
		{0, "graph-time-thresh", OPT_REQUIRED, "T",
		 "function_graph: only calls longer than T (50us)", O_THRESH, NULL},
		{0, "retval", OPT_NONE, NULL, "function_graph: record return values", O_RETVAL, NULL},
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

/* Do the two paths name one file? */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* The library to preload must be one: ld.so only warns about a bad one,
 * and the command would run untraced. */
static int check_libtrail(const char *path)
{
	unsigned char h[20];
	const char *why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, h, sizeof(h));

	if (fd >= 0)
		close(fd);
	if (n < 0)
		why = strerror(errno);
	else if (n < (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4))
		why = "not an ELF file";
	else if (h[4] != 2 || h[5] != 1)
		why = "not a 64-bit little-endian ELF file";
	else if (h[16] != 3 || h[17] != 0) /* e_type: ET_DYN */
		why = "not a shared library";
	if (!why)
		return 0;
	tool_err("%s%s: %s: it cannot be preloaded", getenv("TRAIL_LIBRARY") ? "TRAIL_LIBRARY=" : "",
		 path, why);
	return -1;
}

/* --------------------------------------------------------- event checks */

struct known {
	char **names;
	void **metas; /* each name's first description */
	size_t *sizes;
	size_t n, cap;
};

static int collect_event(const char *object, const void *blob, size_t size, void *arg)
{
	struct known *k = arg;
	struct trail_meta m;
	const char *why;
	char name[300];
	(void)object;

	if (trail__meta_parse(blob, size, &m, &why))
		return 0;
	snprintf(name, sizeof(name), "%s:%s", m.provider, m.name);
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->names[i], name))
			return 0;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 32;
		char **nn = realloc(k->names, cap * sizeof(*nn));
		void **nm = nn ? realloc(k->metas, cap * sizeof(*nm)) : NULL;
		size_t *ns = nm ? realloc(k->sizes, cap * sizeof(*ns)) : NULL;

		if (nn)
			k->names = nn;
		if (nm)
			k->metas = nm;
		if (!ns)
			return -ENOMEM;
		k->sizes = ns;
		k->cap = cap;
	}
	k->names[k->n] = strdup(name);
	k->metas[k->n] = malloc(size);
	if (!k->names[k->n] || !k->metas[k->n]) {
		free(k->names[k->n]);
		free(k->metas[k->n]);
		return -ENOMEM;
	}
	k->sizes[k->n] = size;
	memcpy(k->metas[k->n++], blob, size);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every -e must select something the program declares. */
static int check_events(struct session *S, struct known *k, const char *where)
{
	int bad = 0;

	for (int i = 0; i < S->nevents; i++) {
		const char *e = S->events[i];
		int hit = 0;

		for (size_t j = 0; j < k->n + (size_t)S->nprobe_names && !hit; j++) {
			char *name = j < k->n ? k->names[j] : S->probe_names[j - k->n];
			char *colon = strchr(name, ':');

			*colon = '\0';
			hit = trail__spec_match1(e, strlen(e), name, colon + 1);
			*colon = ':';
		}
		for (int j = 0; j < S->nsynths && !hit; j++)
			hit = trail__spec_match1(e, strlen(e), TRAIL_SYNTH_PROVIDER, S->sdefs[j].name);
		if (!hit) {
			tool_err("no event matches '%s' in %s", e, where);
			bad = 1;
		}
	}
	if (bad) {
		if (!k->n) {
			fprintf(stderr, "  %s declares no trail events (none were compiled in, "
				"or it was built without <trail/trail.h>)\n", where);
		} else {
			char **sorted = malloc(k->n * sizeof(*sorted));

			if (sorted) {
				memcpy(sorted, k->names, k->n * sizeof(*sorted));
				qsort(sorted, k->n, sizeof(*sorted), cmp_str);
			}
			fprintf(stderr, "  events there:");
			for (size_t j = 0; j < k->n; j++)
				fprintf(stderr, "%s%s", j % 6 ? " " : "\n    ",
					(sorted ? sorted : k->names)[j]);
			fprintf(stderr, "\n");
			free(sorted);
		}
		if (S->nusdt) {
			fprintf(stderr, "  USDT probes there:");
			for (int j = 0; j < S->nusdt; j++)
				fprintf(stderr, "%s%s", j % 4 ? " " : "\n    ", S->usdt[j]);
			fprintf(stderr, "\n");
		}
		fprintf(stderr, "  (--allow-unknown accepts events of libraries loaded later)\n");
	}
	return bad ? -1 : 0;
}

static void free_known(struct known *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->names[i]);
		free(k->metas[i]);
	}
	free(k->names);
	free(k->metas);
	free(k->sizes);
}

/* ---------------------------------------------------------------- filters */

/*
 * A filter at the source (-f, a -T's `if`) compiled for one event's
 * description: 0, or -1 with the caret shown under its position in shown
 * (the option as given; the filter's text starts at byte at). The common
 * timestamp is not known where the filter runs (the process stamps raw
 * clock ticks): report -F filters on it.
 */
static int source_filter(const char *what, const char *shown, size_t at, const void *blob,
			 size_t size, const char *name)
{
	const char *text = shown + at, *why, *ts;
	struct trail_filter *f = malloc(sizeof(*f));
	struct trail_meta *m = malloc(sizeof(*m));
	struct trail_filter_err e;
	char w[320];
	int r = -1;

	snprintf(w, sizeof(w), "%s %s", what, name);
	if (!f || !m)
		tool_err("out of memory");
	else if (trail__meta_parse(blob, size, m, &why))
		tool_err("%s: its description is damaged (%s)", name, why);
	else if (trail_filter_compile(text, m, f, &e))
		tool_caret(w, shown, at + (size_t)e.pos, e.msg);
	else
		r = 0;
	for (uint16_t i = 0; !r && i < f->npreds; i++)
		if (f->p[i].field == TRAIL_FILTER_TS) {
			ts = strstr(text, "common_timestamp");
			tool_caret(w, shown, at + (ts ? (size_t)(ts - text) : 0),
				   "common_timestamp is not known where the event fires: filter on it "
				   "in 'trail report -F'");
			r = -1;
		}
	free(f);
	free(m);
	return r;
}

/* ------------------------------------------------------ synthetic events */

static int synth_find(const struct session *S, const char *name)
{
	for (int i = 0; i < S->nsynths; i++)
		if (!strcmp(S->sdefs[i].name, name))
			return i;
	return -1;
}

static int synth_add(struct session *S, const struct trail_synth *d)
{
	char text[2048], **g = realloc(S->synths, (size_t)(S->nsynths + 1) * sizeof(*g));
	struct trail_synth *sd;

	if (!g)
		return -1;
	S->synths = g;
	if (!(sd = realloc(S->sdefs, (size_t)(S->nsynths + 1) * sizeof(*sd))))
		return -1;
	S->sdefs = sd;
	trail_synth_describe(d, text, sizeof(text));
	if (asprintf(&S->synths[S->nsynths], "@synth %s", text) < 0)
		return -1;
	S->sdefs[S->nsynths++] = *d;
	return 0;
}

/* the kept definitions (trail synth) this recording names: an -e
 * selects it, or a -T's text names it as a word */
static int synths_needed(struct session *S)
{
	struct synth_list l = {0};
	char err[512];
	int r = synths_read(&l, err, sizeof(err));

	/* (also where a registry directory that cannot be used is said:
	 * the kept definitions, probes' too, and the processes are there) */
	if (r) {
		tool_err("%s%s", r == -EINVAL ? "synth: " : "", err);
		return -1;
	}
	for (int i = 0; i < l.n; i++) {
		const char *name = l.defs[i].name;
		size_t nl = strlen(name);
		int need = synth_find(S, name) < 0 ? 0 : -1;

		for (int k = 0; !need && k < S->nevents; k++)
			need = trail__spec_match1(S->events[k], strlen(S->events[k]),
						  TRAIL_SYNTH_PROVIDER, name);
		for (int k = 0; !need && k < S->ntriggers; k++)
			for (const char *t = S->triggers[k]; !need && (t = strstr(t, name)); t += nl)
				need = (t == S->triggers[k] || !(isalnum((unsigned char)t[-1]) || t[-1] == '_')) &&
				       !(isalnum((unsigned char)t[nl]) || t[nl] == '_');
		if (need > 0 && synth_add(S, &l.defs[i])) {
			synths_free(&l);
			return -1;
		}
	}
	synths_free(&l);
	return 0;
}

/* fn(name, blob, size, arg) for each event we know of that pat[0..plen)
 * selects: the program's or process's (k), and the probe events compiled
 * in. Returns fn's first non-zero value, or 0. */
static int each_event(struct session *S, const struct known *k, const char *pat, size_t plen,
		      int (*fn)(const char *name, const void *blob, size_t size, void *arg),
		      void *arg)
{
	int r = 0;

	for (size_t j = 0; j < k->n && !r; j++) {
		char *colon = strchr(k->names[j], ':');
		int hit;

		*colon = '\0';
		hit = trail__spec_match1(pat, plen, k->names[j], colon + 1);
		*colon = ':';
		if (hit)
			r = fn(k->names[j], k->metas[j], k->sizes[j], arg);
	}
	for (int j = S->nfuncs_user; j < S->nfuncs && !r; j++) {
		const char *hex = S->funcs[j] + 7, *why;
		size_t n = strlen(hex);
		struct trail_probe p;
		struct trail_meta m;
		uint8_t *blob;
		char name[300];

		if (strncmp(S->funcs[j], "@probe ", 7) || !(blob = malloc(n / 2 + 1)))
			continue;
		if (trail_probe_unhex(hex, n, blob, n / 2 + 1) > 0 &&
		    !trail_probe_check(blob, n / 2, &p, &why) &&
		    !trail__meta_parse(p.meta, p.hdr->meta_size, &m, &why) &&
		    trail__spec_match1(pat, plen, m.provider, m.name)) {
			snprintf(name, sizeof(name), "%s:%s", m.provider, m.name);
			r = fn(name, p.meta, p.hdr->meta_size, arg);
		}
		free(blob);
	}
	for (int j = 0; j < S->nsynths && !r; j++) {
		uint8_t blob[TRAIL_SYNTH_MAX_META];
		size_t n = trail_synth_meta(&S->sdefs[j], blob, sizeof(blob));
		char name[300];

		if (n && trail__spec_match1(pat, plen, TRAIL_SYNTH_PROVIDER, S->sdefs[j].name)) {
			snprintf(name, sizeof(name), "%s:%s", TRAIL_SYNTH_PROVIDER, S->sdefs[j].name);
			r = fn(name, blob, n, arg);
		}
	}
	return r;
}

/* a -f line ("@filter PATTERN TEXT") against one event */
static int filter_each(const char *name, const void *blob, size_t size, void *arg)
{
	const char *line = arg, *text = strchr(line + 8, ' ') + 1;

	return source_filter("filter for", text, 0, blob, size, name);
}

/* a trigger's `if FILTER` against one event (arg: struct tcheck) */
struct tcheck {
	const char *arg;  /* the -T as given */
	size_t off;       /* where the trigger starts in it */
	const struct trail_trigger *t;
	const char *text; /* the trigger's text (t->filter points into it) */
	int n;            /* events seen */
	uint64_t bytes;   /* hist: the tables' */
	struct hdefs *defs; /* hist: each (trigger, event), for the links */
};

/* a hist trigger on one event, kept for checking what links triggers:
 * variables of other events, onmatch's event, trace()'s synthetic event */
struct hdef {
	char event[300];
	struct trail_hist_spec *h;
	struct trail_hist_keyer *k;
	const char *arg; /* the -T, and where the hist text is in it */
	size_t at;
};
struct hdefs {
	struct hdef *d;
	size_t n;
};

/* a hist trigger against one event: its grammar, its `if`, its table's
 * size */
static int source_hist(struct tcheck *c, const void *blob, size_t size, const char *name)
{
	size_t at = c->off + (size_t)(c->t->hist - c->text);
	struct trail_hist_spec *h = malloc(sizeof(*h));
	struct trail_hist_keyer *k = malloc(sizeof(*k));
	struct trail_meta *m = malloc(sizeof(*m));
	struct trail_filter_err e;
	const char *why;
	char w[320];
	int r = -1;

	snprintf(w, sizeof(w), "trigger on %s", name);
	if (!h || !k || !m)
		tool_err("out of memory");
	else if (trail__meta_parse(blob, size, m, &why))
		tool_err("%s: its description is damaged (%s)", name, why);
	else if (trail_hist_parse(c->t->hist, m, h, &e))
		tool_caret(w, c->arg, at + (size_t)e.pos, e.msg);
	else if (h->filter)
		r = source_filter("trigger on", c->arg, at + (size_t)(h->filter - c->t->hist), blob,
				  size, name);
	else
		r = 0;
	if (!r) {
		struct hdef *g = realloc(c->defs->d, (c->defs->n + 1) * sizeof(*g));

		trail_hist_keyer(h, m, k);
		c->bytes += trail_hist_bytes(h, k, trail_htab_copies());
		if (!g) {
			tool_err("out of memory");
			r = -1;
		} else {
			c->defs->d = g;
			g += c->defs->n++;
			snprintf(g->event, sizeof(g->event), "%s", name);
			g->h = h;
			g->k = k;
			g->arg = c->arg;
			g->at = at;
			h = NULL;
			k = NULL;
		}
	}
	free(h);
	free(k);
	free(m);
	return r;
}

static int count_each(const char *name, const void *blob, size_t size, void *arg)
{
	(void)name, (void)blob, (void)size;
	++*(int *)arg;
	return 0;
}

/* do hist triggers a and b have keys of one kind (the words they take)? */
static int same_keys(const struct trail_hist_keyer *a, const struct trail_hist_keyer *b)
{
	if (a->kwords != b->kwords || a->nkeys != b->nkeys)
		return 0;
	for (int q = 0; q < a->nkeys; q++)
		if (a->k[q].word != b->k[q].word || a->k[q].str != b->k[q].str)
			return 0;
	return 1;
}

/* the hist trigger of d (n of them) other than i that defines variable
 * name, on event (NULL: any): its index, or n */
static size_t defining(const struct hdef *d, size_t n, size_t i, const char *name,
		       const char *event)
{
	for (size_t j = 0; j < n; j++)
		if (j != i && (!event || !strcmp(d[j].event, event)) &&
		    trail_hist_var(d[j].h, name) >= 0)
			return j;
	return n;
}

/* The links between hist triggers (d, n of them): every variable read is
 * defined by a hist trigger of its event (with keys like the reader's),
 * onmatch's event exists, trace()'s synthetic event is defined with
 * params matching its fields. known: every event is known (no -a, no
 * --allow-unknown), so a variable nobody defines is an error. */
static int check_links(struct session *S, const struct known *kn, struct hdef *d, size_t n,
		       int known)
{
	for (size_t i = 0; i < n; i++) {
		const struct trail_hist_spec *h = d[i].h;
		const char *onmatch = NULL;

		for (int q = 0; q < h->nact; q++)
			if (h->act[q].handler == TRAIL_HH_ONMATCH)
				onmatch = h->act[q].event;
		for (int r = 0; r < h->nrefs; r++) {
			const struct trail_hist_ref *ref = &h->refs[r];
			size_t hit = defining(d, n, i, ref->name, ref->event[0] ? ref->event : onmatch);

			/* (unqualified: onmatch's event first, then any) */
			if (hit == n && !ref->event[0])
				hit = defining(d, n, i, ref->name, NULL);
			if (hit == n) {
				if (!known)
					continue;
				tool_caret("trigger", d[i].arg, d[i].at + ref->pos,
					   "Couldn't find variable: no hist trigger (-T) defines it");
				return -1;
			}
			if (!same_keys(d[i].k, d[hit].k)) {
				const char *keys = strstr(h->text, "key");
				char msg[400];

				snprintf(msg, sizeof(msg), "the keys don't match those of %s's hist, "
					 "where $%s is", d[hit].event, ref->name);
				tool_caret("trigger", d[i].arg,
					   d[i].at + (keys ? (size_t)(keys - h->text) : 0), msg);
				return -1;
			}
		}
		for (int q = 0; q < h->nact; q++) {
			const struct trail_hist_action *a = &h->act[q];
			int s, cnt = 0;

			if (a->handler == TRAIL_HH_ONMATCH && known) {
				each_event(S, kn, a->event, strlen(a->event), count_each, &cnt);
				if (!cnt) {
					tool_caret("trigger", d[i].arg, d[i].at + a->pos + 8,
						   "onmatch(): no such event");
					return -1;
				}
			}
			if (a->action != TRAIL_HA_TRACE)
				continue;
			if ((s = synth_find(S, a->synth)) < 0) {
				tool_caret("trigger", d[i].arg, d[i].at + a->synth_pos,
					   "Synthetic event not found: define it (--synth 'NAME TYPE FIELD; "
					   "...' or trail synth)");
				return -1;
			}
			if (S->sdefs[s].nfields != a->nparams) {
				char msg[200];

				snprintf(msg, sizeof(msg), "Param count doesn't match synthetic event field "
					 "count (%s has %u)", a->synth, S->sdefs[s].nfields);
				tool_caret("trigger", d[i].arg, d[i].at + a->synth_pos, msg);
				return -1;
			}
			for (int p = 0; p < a->nparams; p++)
				if (S->sdefs[s].f[p].str !=
				    (a->p[p].kind == TRAIL_HX_FIELD && h->xf[a->p[p].idx].str)) {
					char msg[200];

					snprintf(msg, sizeof(msg), "Param type doesn't match synthetic event "
						 "field type (%s %s)", S->sdefs[s].f[p].type,
						 S->sdefs[s].f[p].name);
					tool_caret("trigger", d[i].arg, d[i].at + a->p[p].pos, msg);
					return -1;
				}
		}
	}
	return 0;
}

static void hdefs_free(struct hdefs *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->d[i].h);
		free(h->d[i].k);
	}
	free(h->d);
}

/* an objtrace trigger's FIELD: a number field of the event */
static int source_obj(struct tcheck *c, const void *blob, size_t size, const char *name)
{
	struct trail_meta *m = malloc(sizeof(*m));
	const char *why;
	char w[320];
	int r = -1;

	snprintf(w, sizeof(w), "trigger on %s", name);
	if (!m) {
		tool_err("out of memory");
	} else if (trail__meta_parse(blob, size, m, &why)) {
		tool_err("%s: its description is damaged (%s)", name, why);
	} else {
		uint32_t i;

		for (i = 0; i < m->nfields && strcmp(m->fields[i].name, c->t->obj_field); i++)
			;
		if (i == m->nfields)
			tool_caret(w, c->arg, c->off + c->t->obj_field_pos, "Couldn't find field");
		else if (m->fields[i].kind != TRAIL_FK_INT)
			tool_caret(w, c->arg, c->off + c->t->obj_field_pos,
				   "objtrace takes an integer field (an address)");
		else
			r = 0;
	}
	free(m);
	return r;
}

static int trigger_each(const char *name, const void *blob, size_t size, void *arg)
{
	struct tcheck *c = arg;

	c->n++;
	if (c->t->cmd == TRAIL_TRIG_HIST)
		return source_hist(c, blob, size, name);
	if (c->t->cmd == TRAIL_TRIG_OBJTRACE && source_obj(c, blob, size, name))
		return -1;
	if (!c->t->filter)
		return 0;
	return source_filter("trigger on", c->arg, c->off + (size_t)(c->t->filter - c->text), blob,
			     size, name);
}

static int crowd_each(const char *name, const void *blob, size_t size, void *arg)
{
	const struct session *S = arg;
	int n = trail__trigger_lines_on(S->triggers, S->ntriggers, name);
	(void)blob, (void)size;

	if (n <= TRAIL_TRIG_PER_EVENT)
		return 0;
	tool_err("-T: %d triggers on %s, at most %d triggers per event", n, name,
		 TRAIL_TRIG_PER_EVENT);
	return -1;
}

/* libtrail keeps TRAIL_TRIG_PER_EVENT triggers an event, and leaves an
 * event with more off: refused here for the events known (k, the
 * probes) and those a -T names without a glob (a script's). */
static int check_crowd(struct session *S, const struct known *k)
{
	char name[300];

	if (each_event(S, k, "*", 1, crowd_each, S))
		return -1;
	for (int i = 0; i < S->ntriggers; i++)
		if (trail__trigger_line_event(S->triggers[i], name, sizeof(name)) &&
		    crowd_each(name, NULL, 0, S))
			return -1;
	return 0;
}

/* Every -f and -T against the events they apply to that we know of (k,
 * the probe events): filters and trigger conditions compile for their
 * fields; a trigger's event and its enable/disable_event's exist (when
 * the events are known: not for a script, or with --allow-unknown). */
static int check_filters1(struct session *S, const struct known *k, int known, uint64_t *histp,
			  struct hdefs *defs);

static int check_filters(struct session *S, const struct known *k)
{
	int known = k->n || S->nprobe_names;
	uint64_t hist = 0;
	struct hdefs defs = {0};
	int r = check_crowd(S, k) ? -1 : check_filters1(S, k, known, &hist, &defs);

	if (!r)
		r = check_links(S, k, defs.d, defs.n, known && !S->allow_unknown && !S->all);
	hdefs_free(&defs);
	/* (checked once per process: the largest need) */
	if (!r && hist) {
		hist += TRAIL_HIST_DIR * sizeof(struct trail_hist_dir);
		if (hist > S->hist_bytes)
			S->hist_bytes = hist;
	}
	return r;
}

static int check_filters1(struct session *S, const struct known *k, int known, uint64_t *histp,
			  struct hdefs *defs)
{
	uint64_t hist = 0;

	for (int i = 0; i < S->nfilters; i++) {
		const char *line = S->filters[i], *pat = line + 8;

		if (each_event(S, k, pat, (size_t)(strchr(pat, ' ') - pat), filter_each,
			       (void *)line))
			return -1;
	}
	for (int i = 0; i < S->ntriggers; i++) {
		const char *line = S->triggers[i], *pat = line + 9;
		const char *text = strchr(pat, ' ') + 1;
		struct trail_trigger t;
		struct trail_filter_err e;
		struct tcheck c = {.arg = S->trig_args[i], .off = S->trig_off[i], .t = &t,
				   .text = text, .defs = defs};

		if (trail_trigger_parse(text, &t, &e))
			return -1; /* (checked when given) */
		if (each_event(S, k, pat, (size_t)(text - 1 - pat), trigger_each, &c))
			return -1;
		if (known && !c.n && !S->allow_unknown) {
			tool_caret("trigger", c.arg, 0, "no event of the program matches its event");
			return -1;
		}
		/* hist tables: as the events known want them; for events known
		 * only when they register, room for a table of 3 string keys */
		if (t.cmd == TRAIL_TRIG_HIST)
			hist += c.bytes + (c.n ? 0
					       : trail_htab_bytes(TRAIL_HIST_SIZE_DEFAULT,
								  3 * TRAIL_HIST_STR_MAX / 8 + 1,
								  TRAIL_HIST_MAX_VALS, 32,
								  3 + 3 * TRAIL_HIST_STR_MAX / 8 + 1,
								  trail_htab_copies()));
		if (t.target[0] && known && !S->allow_unknown) {
			int n = 0;

			each_event(S, k, t.target, strlen(t.target), count_each, &n);
			if (!n) {
				const char *at = strstr(c.arg + c.off, t.target);

				tool_caret("trigger", c.arg, at ? (size_t)(at - c.arg) : c.off,
					   "no event of the program matches it");
				return -1;
			}
		}
	}
	*histp = hist;
	return 0;
}

/* ------------------------------------------------------ function checks */

struct fcheck {
	struct session *S;
	size_t sites, unusable;
	int *hits;        /* per S->funcs entry */
	int nbase;        /* S->funcs entries given by the user */
	size_t spec_room;
};

static int no_blob(const char *object, const void *blob, size_t size, void *arg)
{
	(void)object;
	(void)blob;
	(void)size;
	(void)arg;
	return 0;
}

static int fcheck_object(const char *object, void *arg)
{
	struct fcheck *fc = arg;
	struct session *S = fc->S;
	struct fscan f;
	char err[256];

	if (funcscan_tool_object(object))
		return 0; /* what runs trail itself: never traced */
	/* names are all a check needs: no entry decoded */
	if (funcscan_file_opts(object, &f, err, sizeof(err),
			       FUNCSCAN_NAMES | (S->nest_libcall ? FUNCSCAN_LIBPLT : 0))) {
		funcscan_free(&f);
		return 0;
	}
	for (size_t k = 0; k < f.n; k++) {
		const struct fsite *site = &f.sites[k];

		if (!funcscan_usable(site)) {
			fc->unusable++;
			continue;
		}
		fc->sites++;
		if (!*site->symbol) /* traced (an unnamed one: when no -l narrows) */
			continue;
		for (int i = 0; i < fc->nbase; i++) {
			const char *pat = S->funcs[i] + 3; /* "@l GLOB" */
			int raw = trail__func_glob(pat, strlen(pat), site->symbol, object);
			int dem = trail__func_glob(pat, strlen(pat), site->name, object);

			if (!raw && !dem)
				continue;
			fc->hits[i]++;
			/* libtrail matches raw symbol names: a C++ function the
			 * pattern names demangled goes in by its mangled name */
			if (!raw && strcmp(site->symbol, site->name)) {
				const char *at = strrchr(pat, '@');
				char *line = NULL;

				if (asprintf(&line, "@%c %s%s", S->funcs[i][1], site->symbol,
					     at ? at : "") < 0)
					continue;
				if (strlen(line) + 1 > fc->spec_room) {
					free(line);
					continue;
				}
				fc->spec_room -= strlen(line) + 1;
				S->funcs[S->nfuncs++] = line;
			}
		}
	}
	funcscan_free(&f);
	return 0;
}

/* -p: the program (or process) must have patchable entries, and every -l
 * and -g pattern must name some of them. */
static int check_functions(struct session *S, pid_t pid, const char *where)
{
	struct elfscan_opts o;
	struct fcheck fc = {.S = S, .nbase = S->nfuncs_user, .spec_room = TRAIL_SPEC_MAX / 2};
	char err[512] = "";
	char **grown;
	int r, bad = 0;

	grown = realloc(S->funcs, (size_t)(S->nfuncs + 4096) * sizeof(*S->funcs));
	fc.hits = calloc((size_t)S->nfuncs + 1, sizeof(int));
	if (!grown || !fc.hits)
		return -1;
	S->funcs = grown;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.object_cb = fcheck_object;
	r = pid ? elfscan_pid_opts(pid, no_blob, &fc, &o, err, sizeof(err))
		: elfscan_program_opts(S->cmd_path, no_blob, &fc, &o, err, sizeof(err));
	if (r < 0 && r != -ENOEXEC) {
		tool_err("%s", err);
		free(fc.hits);
		return -1;
	}
	if (r == -ENOEXEC) { /* a script: what it runs is known when it runs */
		free(fc.hits);
		return 0;
	}
	if (!fc.sites && fc.unusable) {
		tool_err("%s has patchable entries, but none trail can use (they start before "
			 "their function, as with -fpatchable-function-entry=N,M): build it with "
			 "-fpatchable-function-entry=5", where);
		free(fc.hits);
		return -1;
	}
	if (!fc.sites) {
		tool_err("%s has no patchable function entries: build it with "
			 "-fpatchable-function-entry=5 (gcc or clang); nothing in it can be "
			 "function-traced", where);
		if (!pid)
			fprintf(stderr, "  (a launcher such as taskset or env: --allow-unknown "
					"traces the program it executes)\n");
		free(fc.hits);
		return -1;
	}
	for (int i = 0; i < fc.nbase; i++) {
		const char *pat = S->funcs[i] + 3;

		/* (an -n that matches nothing is harmless, unless it looks
		 * like an address: unnamed functions have names) */
		if (fc.hits[i] || (S->funcs[i][1] == 'n' && strncmp(pat, "0x", 2)))
			continue;
		tool_err("no function matches '-%c %s' in %s (%zu functions can be traced: "
			 "'trail list -f' lists them)", S->funcs[i][1], pat, where, fc.sites);
		if (!strncmp(pat, "0x", 2))
			fprintf(stderr, "  (a function without a symbol is named sub_<its address "
					"in its file>, as 'trail list -f' shows: -%c 'sub_%s')\n",
				S->funcs[i][1], pat + 2);
		bad = 1;
	}
	if (bad)
		fprintf(stderr, "  (--allow-unknown accepts functions of libraries loaded later%s)\n",
			pid ? "" : ", and traces what a launcher such as taskset or env executes");
	free(fc.hits);
	return bad ? -1 : 0;
}

/* --------------------------------------------------------------- probes */

/* an -e selects the definition's event */
static int selected_event(struct session *S, const struct probe_def *d)
{
	for (int i = 0; i < S->nevents; i++)
		if (trail__spec_match1(S->events[i], strlen(S->events[i]), d->group, d->event))
			return 1;
	return 0;
}

/* a kept definition this recording needs: an -e selects it, a -T
 * triggers on it, or a -T's enable/disable_event names it */
static int needed_event(struct session *S, const struct probe_def *d)
{
	if (selected_event(S, d))
		return 1;
	for (int i = 0; i < S->ntriggers; i++) {
		const char *pat = S->triggers[i] + 9, *text = strchr(pat, ' ') + 1;
		struct trail_trigger t;
		struct trail_filter_err e;

		if (trail__spec_match1(pat, (size_t)(text - 1 - pat), d->group, d->event) ||
		    (!trail_trigger_parse(text, &t, &e) && t.target[0] &&
		     trail__spec_match1(t.target, strlen(t.target), d->group, d->event)))
			return 1;
	}
	return 0;
}

/* One compiled probe into the spec (once, whatever the targets): 0, 1 if
 * it was there already, -1. */
static int add_probe_line(struct session *S, const struct probe_def *d, char *line)
{
	char **g, *name = NULL;

	for (int i = S->nfuncs_user; i < S->nfuncs; i++)
		if (!strcmp(S->funcs[i], line)) {
			free(line);
			return 1; /* there already */
		}
	g = realloc(S->funcs, (size_t)(S->nfuncs + 1) * sizeof(*g));
	if (!g)
		return -1;
	S->funcs = g;
	S->funcs[S->nfuncs++] = line;
	g = realloc(S->probe_names, (size_t)(S->nprobe_names + 1) * sizeof(*g));
	if (!g || asprintf(&name, "%s:%s", d->group, d->event) < 0)
		return -1;
	S->probe_names = g;
	S->probe_names[S->nprobe_names++] = name;
	return 0;
}

/* USDT probes (sdt_PROVIDER:NAME) an -e starting with sdt_ selects:
 * compiled into the spec like probes, their semaphores counted up while
 * recorded */
struct usdt_ctx {
	struct session *S;
	struct ptarget *t;
};

static int usdt_one(void *arg, const char *obj, const struct usdt_probe *p)
{
	struct usdt_ctx *c = arg;
	char group[TRAIL_PROBE_MAX_EVNAME], *line;
	struct probe_def d;
	struct probe_err e;
	int hit = 0, r;

	snprintf(group, sizeof(group), "sdt_%s", p->provider);
	/* every one's name, for an -e that selects none */
	if (asprintf(&line, "%s:%s", group, p->name) >= 0) {
		char **g = NULL;
		int dup = 0;

		for (int i = 0; i < c->S->nusdt && !dup; i++)
			dup = !strcmp(c->S->usdt[i], line);
		if (!dup && (g = realloc(c->S->usdt, (size_t)(c->S->nusdt + 1) * sizeof(*g)))) {
			c->S->usdt = g;
			g[c->S->nusdt++] = line;
		} else {
			free(line);
		}
	}
	for (int i = 0; i < c->S->nevents && !hit; i++)
		hit = !strncmp(c->S->events[i], "sdt_", 4) &&
		      trail__spec_match1(c->S->events[i], strlen(c->S->events[i]), group, p->name);
	if (!hit)
		return 0;
	if ((r = ptarget_usdt_compile(c->t, obj, p, &d, &line, &e))) {
		tool_err("%s: %s", obj, e.msg);
		return 1;
	}
	r = add_probe_line(c->S, &d, line);
	probe_def_free(&d);
	return r < 0;
}

/* Does an -e name USDT probes? Only a pattern that starts with sdt_
 * does ('all' and '*' do not, as with perf: a USDT probe costs a trap a
 * hit, and its semaphore makes the program prepare its arguments). */
static int wants_usdt(const struct session *S)
{
	for (int i = 0; i < S->nevents; i++)
		if (!strncmp(S->events[i], "sdt_", 4))
			return 1;
	return 0;
}

/*
 * The dynamic events of this recording: --probe definitions (recorded
 * without an -e), and those of the user's dynamic_events file an -e
 * selects, compiled for t (the program or a process; NULL: -a, raw
 * fetch-args only). A definition whose function t does not have is left
 * out, or an error for a --probe one (unless --allow-unknown: a library
 * loaded later).
 */
static int setup_probes(struct session *S, struct ptarget *t, const char *where)
{
	struct probe_list all = {0};
	int ninline = 0, bad = 0, r, nkept = 0;
	char err[512], **kept;

	if ((r = probes_read(&all, err, sizeof(err)))) {
		tool_err("%s", err);
		return -1;
	}
	for (int i = 0; i < S->nprobes; i++) {
		struct probe_def d;
		struct probe_err e;
		int k;

		if (probe_parse(S->probes[i], &d, &e) || d.kind == '-') {
			if (d.kind == '-') {
				e.pos = 0;
				snprintf(e.msg, sizeof(e.msg), "--probe defines an event: delete with 'trail probe -d'");
				probe_def_free(&d);
			}
			tool_caret("probe", S->probes[i], (size_t)(e.pos < 0 ? 0 : e.pos), e.msg);
			probes_free(&all);
			return -2;
		}
		/* one name, one event (the kernel's "Event already exists"):
		 * an earlier --probe's, or a kept definition's */
		{
			char full[2 * TRAIL_PROBE_MAX_EVNAME + 2];

			snprintf(full, sizeof(full), "%s/%s", d.group, d.event);
			if ((k = probes_find(&all, full)) >= 0) {
				snprintf(e.msg, sizeof(e.msg), "event %s already exists%s", full,
					 k < all.n - ninline ? " (kept: 'trail probe -d' deletes it)" : "");
				tool_caret("probe", S->probes[i], d.named && d.kind != 'f' ? 2 : 0, e.msg);
				probe_def_free(&d);
				probes_free(&all);
				return -2;
			}
		}
		if (!selected_event(S, &d)) {
			char *ev = NULL;

			if (asprintf(&ev, "%s:%s", d.group, d.event) < 0)
				return -1;
			S->events[S->nevents++] = ev;
			S->probe_events[S->nprobe_events++] = ev;
		}
		if (probes_add(&all, &d))
			return -1;
		ninline++;
	}
	/* the --probe ones are last */
	kept = calloc((size_t)all.n + 1, sizeof(*kept));
	if (!kept)
		return -1;
	for (int i = 0; i < all.n && !bad; i++) {
		const struct probe_def *d = &all.defs[i];
		int mine = i >= all.n - ninline;
		char *line = NULL, *res = NULL;
		const char *obj;
		struct probe_err e;

		if (!mine && !needed_event(S, d))
			continue;
		if ((obj = ptarget_static_event(t, d->group, d->event))) {
			tool_err("probe %s:%s: %s declares a static event of that name: rename the "
				 "probe", d->group, d->event, obj);
			bad = 1;
			continue;
		}
		r = ptarget_compile(t, d, &all, &line, &res, &e);
		if (r == -ENOENT && (!mine || S->allow_unknown) && d->kind != 'e')
			r = mine ? ptarget_compile(NULL, d, &all, &line, &res, &e) : 1;
		free(res);
		if (r == 1) /* a kept definition this program has no function for */
			continue;
		if (r) {
			tool_caret("probe", d->text, (size_t)(e.pos < 0 ? 0 : e.pos), e.msg);
			if (r == -ENOENT && d->kind != 'e')
				fprintf(stderr, "  (in %s; --allow-unknown accepts functions of "
					"libraries loaded later)\n", where);
			bad = 1;
			free(line);
			continue;
		}
		r = add_probe_line(S, d, line);
		if (r < 0)
			bad = 1;
		else if (!r && !mine)
			kept[nkept++] = S->probe_names[S->nprobe_names - 1];
	}
	if (!bad && nkept)
		probes_mark_in_use(kept, nkept);
	free(kept);
	probes_free(&all);
	if (!bad && t && ptarget_usdt_each(t, usdt_one, &(struct usdt_ctx){S, t}))
		bad = 1;
	return bad ? -1 : 0;
}

/* setup_probes for the program exe, process pid, or (neither) -a: 0, or
 * the exit status */
static int probes_for(struct session *S, pid_t pid, const char *exe)
{
	struct probe_list kept = {0};
	struct ptarget *t = NULL;
	char err[512] = "", where[64];
	int r;

	if (!S->nprobes && !wants_usdt(S) && (probes_read(&kept, err, sizeof(err)) || !kept.n)) {
		probes_free(&kept);
		return 0;
	}
	probes_free(&kept);
	if (pid)
		snprintf(where, sizeof(where), "process %d", (int)pid);
	r = pid ? ptarget_pid(&t, pid, err, sizeof(err))
		: exe ? ptarget_program(&t, exe, err, sizeof(err)) : 0;
	if (r) {
		tool_err("%s", err);
		ptarget_free(t);
		return 1;
	}
	r = setup_probes(S, t, pid ? where : exe ? exe : "every process");
	ptarget_free(t);
	return r == -2 ? EXIT_USAGE : r ? 1 : 0;
}

/* ---------------------------------------------------------------- status */

/* The recorder's messages, as every trail message: "trail: ..." */
static void log_msg(void *ctx, enum trail_recorder_level level, const char *msg)
{
	struct session *S = ctx;

	if (level == TRAIL_RECORDER_ERR)
		tool_err("%s", msg);
	else if (level == TRAIL_RECORDER_WARN)
		tool_warn("%s", msg);
	else if (!S->quiet)
		fprintf(stderr, "trail: %s\n", msg);
}

static void status_line(struct session *S, int final)
{
	struct trail_recorder_stats st;
	char a[32], b[32], c[32];
	uint64_t lost = 0;

	if (!S->tty || S->quiet)
		return;
	lost = trail_recorder_live_lost(S->R);
	trail_recorder_stats(S->R, &st);
	fprintf(stderr, "\r\033[Ktrail: %s events  %s  lost %s  processes %u%s",
		tool_thousands(st.events, a, sizeof(a)),
		tool_human_bytes(st.bytes, b, sizeof(b)),
		tool_thousands(lost, c, sizeof(c)), st.procs, final ? "\n" : "");
	if (final)
		fputs("\r\033[K", stderr);
}

/* ---------------------------------------------------------------- attach */

/* Has pid exited (no /proc entry, or a zombie)? */
static int gone(pid_t pid)
{
	char state = 0;
	int r = trail__proc_stat(pid, NULL, &state, NULL);

	return r == -ESRCH || (!r && (state == 'Z' || state == 'X'));
}

/* Another user's process (trail run by root): its control signal, as
 * its libtrail chose it (TRAIL_SIGNAL in its environment, else the
 * default) and catches it; its registry is that user's. 0, or -1 said. */
static int others_signal(pid_t pid, const char *comm, int *sig)
{
	char path[64], *env = malloc(1 << 20), *p, *end;
	ssize_t n;
	int s = SIGRTMIN + 7;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = env ? trail__read_file(path, env, 1 << 20) : -1;
	for (p = env; n > 0 && p < env + n; p += strlen(p) + 1)
		if (!strncmp(p, "TRAIL_SIGNAL=", 13)) {
			long v = strtol(p + 13, &end, 10);

			s = !*end && v >= 0 ? (int)v : s;
		}
	free(env);
	if (gone(pid))
		return -2;
	if (s <= 0 || s > SIGRTMAX || !trail_recorder_pid_catches(pid, s)) {
		tool_err("process %d (%s) has libtrail but attaching is disabled "
			 "(TRAIL_SIGNAL=0, or the program took over signal %d)", (int)pid, comm, s);
		return -1;
	}
	*sig = s;
	return 0;
}

/* pid's name into comm (n bytes): 0, or -1 (none read) */
static int read_comm(pid_t pid, char *comm, size_t n)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (trail__read_file(path, comm, n) <= 0)
		return -1;
	comm[strcspn(comm, "\n")] = '\0';
	return 0;
}

/* Has pid run a new program since its name was read as comm? (`env
 * VAR=... CMD` caught in its exec: what it is now is checked again) */
static int execed(pid_t pid, const char *comm)
{
	char now[64] = "";

	return !read_comm(pid, now, sizeof(now)) && strcmp(now, comm) != 0;
}

/* pid's control signal, from its registry entry (libtrail loaded): 0, -1
 * said, -2: it exited, or -3: it ran a new program meanwhile (neither
 * said) */
static int registry_signal(pid_t pid, const char *comm, int *sig)
{
	char path[512];
	struct trail_reg reg;
	int dfd, r;

	if (trail__registry_path(path, sizeof(path)))
		return -1;
	dfd = trail__registry_open(path, 0);
	if (dfd < 0 && dfd != -ENOENT) {
		char why[1200];

		tool_err("%s", trail__registry_why(path, dfd, why, sizeof(why)));
		return -1;
	}
	/* a process that has just started may map libtrail before its
	 * constructor writes the entry: 3 s to do it (a loaded machine took
	 * more than 1) */
	for (int tries = 0; dfd >= 0 && tries < 300 && trail__registry_get(dfd, pid, &reg) == -ENOENT &&
			    !gone(pid); tries++) {
		struct timespec ts = {0, 10000000};

		nanosleep(&ts, NULL);
	}
	if (dfd < 0 || (r = trail__registry_get(dfd, pid, &reg), close(dfd), r)) {
		if (gone(pid))
			return -2;
		if (execed(pid, comm))
			return -3;
		tool_err("process %d (%s) has libtrail loaded but is not in the registry %s "
			 "(another TRAIL_REGISTRY?)", (int)pid, comm, path);
		return -1;
	}
	if (!reg.signal || !trail_recorder_pid_catches(pid, reg.signal)) {
		if (gone(pid))
			return -2;
		tool_err("process %d (%s) has libtrail but attaching is disabled "
			 "(TRAIL_SIGNAL=0, or the program took over signal %d)",
			 (int)pid, comm, reg.signal);
		return -1;
	}
	*sig = reg.signal;
	return 0;
}

/* pid's control signal (another user's process: other), as
 * registry_signal says; -3 (a new program: check it again) at most 5
 * times in a row */
static int control_signal(pid_t pid, const char *comm, int other, int *sig, int *execs)
{
	int r = other ? others_signal(pid, comm, sig) : registry_signal(pid, comm, sig);

	if (r == -3 && ++*execs > 5) {
		tool_err("process %d keeps running new programs: not attached", (int)pid);
		return -1;
	}
	return r;
}

/* Recorders load libraries into processes one at a time (two attaching
 * to the same process at once would meet each other's ptrace): a lock on
 * a file of the registry, waited for 20 s at most (an injection gives up
 * after 5). Its descriptor, or -1 (then unlocked). */
static int inject_lock(void)
{
	char path[512];
	int dfd, fd;

	if (trail__registry_path(path, sizeof(path)) || (dfd = trail__registry_open(path, 1)) < 0)
		return -1;
	fd = openat(dfd, ".inject", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	close(dfd);
	for (int i = 0; fd >= 0 && i < 2000 && flock(fd, LOCK_EX | LOCK_NB); i++) {
		struct timespec ts = {0, 10000000};

		nanosleep(&ts, NULL);
	}
	return fd;
}

/* The checks a user deserves a clear message for, before anything starts:
 * 0, -1 (said), or -2: the process exited meanwhile (not said: the
 * caller goes on with the others) */
static int check_pid(struct session *S, pid_t pid, int *sig)
{
	char path[512], comm[64] = "?";
	struct stat st;
	struct known k = {0};
	int r, injected, other, decoder, lock, execs = 0, starts = 0;

again:
	memset(&k, 0, sizeof(k));
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (pid <= 0 || stat(path, &st) < 0)
		return -2;
	read_comm(pid, comm, sizeof(comm));
	/* root attaches to anyone's, as perf and gdb do (the requests go
	 * through a proxy of that user: src/recorder/proxy.c) */
	if (st.st_uid != geteuid() && geteuid() != 0) {
		tool_err("process %d (%s) belongs to uid %u, not to you (uid %u): "
			 "trail attaches to your own processes (root: to any)",
			 (int)pid, comm, (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	other = st.st_uid != geteuid();
	/* a bad registry is said first, whatever the process has */
	if (tool_registry_usable())
		return -1;
	injected = !trail_recorder_pid_maps_libtrail(pid);
	if (!injected && (r = control_signal(pid, comm, other, sig, &execs))) {
		if (r == -3)
			goto again;
		return r;
	}
	if (S->tracer && !S->allow_unknown) {
		char where[128];

		snprintf(where, sizeof(where), "process %d (%s)", (int)pid, comm);
		if (check_functions(S, pid, where))
			return -1;
	}
	if (!S->allow_unknown && (S->nevents || S->ntriggers)) {
		char err[512] = "", where[128];

		r = elfscan_pid(pid, collect_event, &k, err, sizeof(err));
		if (r < 0) {
			free_known(&k);
			if (gone(pid))
				return -2;
			tool_err("cannot read the objects of process %d: %s", (int)pid, err);
			return -1;
		}
		snprintf(where, sizeof(where), "process %d (%s)", (int)pid, comm);
		r = check_events(S, &k, where);
		if (!r)
			r = check_filters(S, &k);
		free_known(&k);
		if (r)
			return -1;
	} else if (check_filters(S, &k)) {
		return -1;
	}
	/* not started with libtrail: loaded now, through ptrace (inject.c),
	 * once everything asked of the process is known to be there; and
	 * hooking functions, the instruction decoder (which libtrail cannot
	 * load in its control signal's handler), libtrail with it */
	decoder = (S->tracer || S->nprobes || S->nusdt) &&
		  !trail_recorder_pid_maps(pid, "/libtrail-decoder.so");
	if (decoder && !tool_decoder_path()) {
		fprintf(stderr, "trail: no libtrail-decoder.so beside libtrail.so.1: functions of "
			"process %d (%s) without patchable entries are not hooked\n", (int)pid, comm);
		decoder = 0;
	}
	if (injected || decoder) {
		const char *lib = decoder ? tool_decoder_path() : tool_libtrail_path();
		char err[512] = "";

		if (!lib) {
			tool_err("process %d (%s) has no libtrail loaded, and no libtrail.so.1 was "
				 "found to load into it (TRAIL_LIBRARY)", (int)pid, comm);
			return -1;
		}
		if (!S->quiet)
			fprintf(stderr, "trail: loading %s into process %d (%s)\n", lib, (int)pid, comm);
		/* TERM, HUP and INT to trail wait until the process is back
		 * on its own (a SIGKILL cannot: the injection survives it) */
		sigset_t hold, was;

		sigemptyset(&hold);
		sigaddset(&hold, SIGTERM);
		sigaddset(&hold, SIGHUP);
		sigaddset(&hold, SIGINT);
		sigprocmask(SIG_BLOCK, &hold, &was);
		lock = inject_lock();
		/* (another recorder may have loaded it meanwhile) */
		if (!trail_recorder_pid_maps(pid, decoder ? "/libtrail-decoder.so" : "/libtrail.so"))
			r = trail_recorder_inject(pid, lib, err, sizeof(err));
		else
			r = 0;
		if (lock >= 0)
			close(lock);
		sigprocmask(SIG_SETMASK, &was, NULL);
		if (r == -ESRCH || (r && gone(pid)))
			return -2;
		/* it ran a new program meanwhile (`env ... CMD`): what it
		 * is now decides, checked again */
		if (r == -ESTALE && execs++ < 5)
			goto again;
		/* caught starting, in its loader: 10 ms later, 2 s at most */
		if (r == -EINPROGRESS && starts++ < 200) {
			nanosleep(&(struct timespec){0, 10000000}, NULL);
			goto again;
		}
		if (r && !injected) {
			fprintf(stderr, "trail: %s: functions of process %d (%s) without "
				"patchable entries are not hooked\n",
				err[0] ? err : strerror(-r), (int)pid, comm);
			return 0;
		}
		if (r == -EIO && other)
			tool_err("%s (can uid %u read %s?)", err, (unsigned)st.st_uid, lib);
		else if (r && err[0])
			tool_err("%s", err);
		if (r)
			return -1;
		if ((r = control_signal(pid, comm, other, sig, &execs))) {
			if (r == -3)
				goto again;
			return r;
		}
	}
	return 0;
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
static void write_failed(struct session *S, int err, int closed)
{
	struct trail_recorder_stats st;
	struct stat sb;
	char a[32], b[32];

	trail_recorder_stats(S->R, &st);
	if (closed || st.events) {
		if (!closed)
			trail_recorder_close(S->R, 1);
		tool_err("writing %s: %s after %s events; recording stopped, the file keeps "
			 "the %s written before the error", S->output, strerror(-err),
			 tool_thousands(st.events, a, sizeof(a)),
			 tool_human_bytes(st.file_bytes, b, sizeof(b)));
		return;
	}
	trail_recorder_close(S->R, 0);
	tool_err("writing %s: %s; nothing was recorded%s", S->output, strerror(-err),
		 stat(S->output, &sb) == 0 && S_ISREG(sb.st_mode)
			 ? " (the file there before is left as it was)" : "");
}

/* The closing line: what the file holds, with the file's own accounting. */
static void summary(struct session *S)
{
	struct trail_recorder_stats st;
	char a[32], b[32], c2[32];
	uint32_t traps = 0;

	if (S->quiet)
		return;
	trail_recorder_stats(S->R, &st);
	fprintf(stderr, "trail: %s events (%s) from %u process%s in %s, %s lost%s\n",
		tool_thousands(st.events, a, sizeof(a)),
		tool_human_bytes(st.file_bytes, b, sizeof(b)), st.procs,
		st.procs == 1 ? "" : "es", S->output,
		tool_thousands(st.lost, c2, sizeof(c2)),
		st.lost && !S->overwrite ? " (buffer full: try a larger -b)" : "");
	if (st.bad_chunks)
		tool_warn("%llu malformed chunks were refused", (unsigned long long)st.bad_chunks);
	if (S->tracer && (trail_recorder_hooked(S->R, &traps), traps))
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
static int nothing_recorded(struct session *S, const char *libtrail)
{
	struct trail_recorder_stats st;

	if (!*S->cmd || !trail_recorder_child(S->R, NULL, NULL))
		return 0;
	trail_recorder_stats(S->R, &st);
	if (!st.procs) {
		tool_err("no process of %s joined the recording: libtrail (%s) was not loaded "
			 "(a static or setuid program, a bad TRAIL_LIBRARY, or LD_PRELOAD refused); "
			 "%s not written",
			 S->cmd[0], libtrail, S->output);
		return 1;
	}
	if (st.user_events || trail_recorder_hooked(S->R, NULL) || st.events)
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
static int command_result(struct session *S, int own)
{
	int done, status;
	pid_t child;

	trail_recorder_reap(S->R);
	child = trail_recorder_child(S->R, &done, &status);
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
static void recorder_opts(struct session *S, struct trail_recorder_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->events = S->events;
	o->nevents = S->nevents;
	o->funcs = S->funcs;
	o->nfuncs = S->nfuncs;
	o->nfuncs_user = S->nfuncs_user;
	o->tracer = S->tracer;
	o->max_depth = S->max_depth;
	o->retval = S->retval;
	o->args = S->args;
	o->no_libcall = S->no_libcall;
	o->nest_libcall = S->nest_libcall;
	o->thresh_ns = S->thresh_ns;
	o->nest = S->nest;
	o->tids = S->tids;
	o->ntids = S->ntids;
	o->buffer_bytes = S->buffer_bytes;
	o->buffer_given = S->buffer_given;
	o->chunk_size = S->chunk_size;
	o->overwrite = S->overwrite;
	o->block_us = S->block_us;
	o->clock = S->clock;
	o->cmd = S->cmd;
	o->cmd_path = S->cmd_path;
	o->pids = S->pids;
	o->npids = S->npids;
	o->log = log_msg;
	o->log_ctx = S;
	o->fmt_bytes = tool_human_bytes;
	o->hist_bytes = S->hist_bytes;
	o->patches = S->tracer || S->nprobe_names || S->nusdt;
}

/* ---------------------------------------------------------------- main */

static int record(struct session *S, int argc, char **argv)
{
	struct sigaction sa;
	const char *libtrail = NULL;
	struct opt_parser op;
	int c, r, rc = 1, stopping = 0;
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
	S->output = "trace.dat";
	S->buffer_bytes = (uint64_t)TRAIL_ARENA_DEFAULT_KB * 1024;
	S->chunk_size = TRAIL_CHUNK_DEFAULT;
	S->nest = -1;
	S->events = calloc((size_t)argc * 2, sizeof(char *)); /* room for --probe events */
	S->probes = calloc((size_t)argc, sizeof(char *));
	S->probe_events = calloc((size_t)argc, sizeof(char *));
	S->filters = calloc((size_t)argc, sizeof(char *));
	S->triggers = calloc((size_t)argc, sizeof(char *));
	S->trig_args = calloc((size_t)argc, sizeof(char *));
	S->trig_off = calloc((size_t)argc, sizeof(size_t));
	S->pids = calloc((size_t)argc, sizeof(pid_t));
	if (!S->events || !S->pids || !S->probes || !S->probe_events || !S->filters ||
	    !S->triggers || !S->trig_args || !S->trig_off)
		return 1;
	S->funcs = calloc((size_t)argc, sizeof(char *));
	if (!S->funcs)
		return 1;
	opt_init(&op, &record_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END) {
		uint64_t v;
		unsigned long n;
		size_t bad;
		const char *why;

		switch (c) {
		case 'e':
			bad = trail__spec_check(optarg, &why);
			if (bad) {
				tool_caret("bad event name", optarg, bad - 1, why);
				return EXIT_USAGE;
			}
			S->events[S->nevents++] = optarg;
			break;
		case 'f': {
			char *line;

			if (!S->nevents)
				return usage_err("-f '%s': a filter applies to the events of the -e "
						 "before it: give that -e first", optarg);
			if (strpbrk(optarg, "\n\r") || strlen(optarg) >= TRAIL_FILTER_MAX_TEXT)
				return usage_err("-f '%s': one line of at most 1023 bytes", optarg);
			if (asprintf(&line, "@filter %s %s", S->events[S->nevents - 1], optarg) < 0)
				return 1;
			for (int i = 0; i < S->nfilters; i++)
				if (!strncmp(S->filters[i], line, 9 + strlen(S->events[S->nevents - 1]))) {
					free(line);
					return usage_err("-f '%s': the -e before it has a filter already "
							 "(join them with && or ||)", optarg);
				}
			S->filters[S->nfilters++] = line;
			break;
		}
		case 'T': {
			size_t ev = trail_trigger_event(optarg), off = ev ? ev + 1 : 0;
			const char *pat = ev ? NULL : S->nevents ? S->events[S->nevents - 1] : NULL;
			struct trail_trigger t;
			struct trail_filter_err fe;
			char *line;

			if (!ev && !pat)
				return usage_err("-T '%s': a trigger names its event (SYS:EVENT:TRIGGER) "
						 "or applies to the -e before it: give one", optarg);
			if (strpbrk(optarg, "\n\r") || strlen(optarg) >= TRAIL_FILTER_MAX_TEXT)
				return usage_err("-T '%s': one line of at most 1023 bytes", optarg);
			if (ev) {
				char p[TRAIL_FILTER_MAX_TEXT];

				memcpy(p, optarg, ev);
				p[ev] = '\0';
				bad = trail__spec_check(p, &why);
				if (bad) {
					tool_caret("trigger", optarg, bad - 1, why);
					return EXIT_USAGE;
				}
			}
			if (trail_trigger_parse(optarg + off, &t, &fe)) {
				tool_caret("trigger", optarg, off + (size_t)fe.pos, fe.msg);
				return EXIT_USAGE;
			}
			if ((ev ? asprintf(&line, "@trigger %s%.*s %s",
					   memchr(optarg, ':', ev) ? "" : TRAIL_SYNTH_PROVIDER ":", (int)ev,
					   optarg, optarg + off)
				: asprintf(&line, "@trigger %s %s", pat, optarg)) < 0)
				return 1;
			S->trig_args[S->ntriggers] = optarg;
			S->trig_off[S->ntriggers] = off;
			S->triggers[S->ntriggers++] = line;
			S->stacktrace |= t.cmd == TRAIL_TRIG_STACKTRACE;
			S->snapshot |= t.cmd == TRAIL_TRIG_SNAPSHOT;
			S->objtrace |= t.cmd == TRAIL_TRIG_OBJTRACE;
			break;
		}
		case 'o':
			S->output = optarg;
			break;
		case 'P':
			if (tool_pid_arg("record", "-P", optarg, &S->pids[S->npids]))
				return EXIT_USAGE;
			S->npids++;
			break;
		case 'b':
			r = tool_parse_kb(optarg, &v);
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
			if (tool_parse_kb(optarg, &v) || v < TRAIL_CHUNK_MIN ||
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
			if (strcmp(optarg, "function") && strcmp(optarg, "function_graph"))
				return usage_err("unknown tracer '%s' (available: function function_graph)",
						 optarg);
			S->tracer = optarg;
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
			S->probes[S->nprobes++] = optarg;
			break;
		case O_SYNTH: {
			struct trail_synth d;
			struct trail_filter_err fe;

			if (trail_synth_parse(optarg, &d, &fe)) {
				tool_caret("synth", optarg, fe.pos < 0 ? 0 : (size_t)fe.pos, fe.msg);
				return EXIT_USAGE;
			}
			if (synth_find(S, d.name) >= 0)
				return usage_err("--synth '%s': that synthetic event is defined already",
						 optarg);
			if (synth_add(S, &d))
				return 1;
			break;
		}
		case O_NEST:
			if (tool_parse_ulong(optarg, NULL, 0, 64, &n))
				return usage_err("--nest needs a signal handler level from 0 to 64, not '%s'",
						 optarg);
			S->nest = (int)n;
			break;
		case O_TID: {
			char *p = optarg, *end;

			for (;;) {
				pid_t t;

				if (tool_parse_pid(p, &end, &t) || (*end && *end != ','))
					return usage_err("--tid needs thread ids (TID[,TID...]), not '%s'",
							 optarg);
				if (S->ntids == (int)(sizeof(S->tids) / sizeof(S->tids[0])))
					return usage_err("%s", "--tid: 32 threads at most");
				S->tids[S->ntids++] = t;
				if (!*end)
					break;
				p = end + 1;
			}
			break;
		}
		case 'l':
		case 'n':
		case 'g':
			if (!*optarg || strpbrk(optarg, " \t\n"))
				return usage_err("-l/-n/-g need a function name or glob, not '%s'", optarg);
			bad = trail__glob_check(optarg, strlen(optarg), &why);
			if (bad) {
				tool_caret("bad function glob", optarg, bad - 1, why);
				return EXIT_USAGE;
			}
			if (asprintf(&S->funcs[S->nfuncs], "@%c %s", c, optarg) < 0)
				return 1;
			S->nfuncs++;
			break;
		case 'q':
			S->quiet = 1;
			break;
		case OPT_EXIT:
			return op.status;
		}
	}
	S->cmd = argv + optind;
	S->nfuncs_user = S->nfuncs;
	if (synths_needed(S))
		return 1;
	if (!S->nevents && !S->tracer && !S->nprobes && !S->ntriggers)
		return usage_err("%s", "no events selected: give -e EVENT (e.g. -e 'app:*' or -e all) or -p TRACER");
	if (S->nfuncs && !S->tracer)
		return usage_err("%s", "-l, -n and -g select functions for a tracer: give -p function or -p function_graph");
	for (int i = 0; S->objtrace && !S->tracer && i < S->ntriggers; i++) {
		struct trail_trigger t;
		struct trail_filter_err fe;

		if (!trail_trigger_parse(S->trig_args[i] + S->trig_off[i], &t, &fe) &&
		    t.cmd == TRAIL_TRIG_OBJTRACE)
			return usage_err("-T '%s': objtrace follows objects into the function "
					 "tracer's entries: give -p function or -p function_graph",
					 S->trig_args[i]);
	}
	if (S->nest >= 0 && !S->tracer)
		return usage_err("%s", "--nest limits a tracer: give -p function or -p function_graph");
	if (S->no_libcall && !S->tracer)
		return usage_err("%s", "--no-libcall limits a tracer: give -p function or -p function_graph");
	if (S->nest_libcall && !S->tracer)
		return usage_err("%s", "--nest-libcall widens a tracer: give -p function or -p function_graph");
	if (S->nest_libcall && S->no_libcall)
		return usage_err("%s", "--nest-libcall and --no-libcall contradict each other: give one");
	if (S->ntids && !S->tracer)
		return usage_err("%s", "--tid selects threads for a tracer: give -p function or -p function_graph");
	if (S->ntids && !S->npids)
		return usage_err("%s", "--tid selects threads of running processes: give -P PID");
	if ((S->max_depth || S->thresh_ns || S->retval || S->args) &&
	    (!S->tracer || strcmp(S->tracer, "function_graph")))
		return usage_err("%s", "--max-graph-depth, --graph-time-thresh, --retval and --args go with -p function_graph");
	if (S->args && S->thresh_ns)
		return usage_err("%s", "--args does not go with --graph-time-thresh (a long call is one record written at its return, when its arguments are gone)");
	for (int i = 0; i < S->nfuncs; i++)
		if (S->funcs[i][1] == 'g' && strcmp(S->tracer, "function_graph"))
			return usage_err("-g %s: graph roots go with -p function_graph "
					 "(-l limits the function tracer)", S->funcs[i] + 3);
	if (S->snapshot && !S->overwrite)
		return usage_err("%s", "-T snapshot takes the flight recorder's contents: give --overwrite");
	if (!S->buffer_given)
		S->buffer_bytes = trail_recorder_default_buffer();
	if (S->block_us && S->overwrite)
		return usage_err("%s", "--blocking-timeout is for discard mode: --overwrite never waits");
	if (!*S->cmd && !S->npids && !S->all)
		return usage_err("%s", "nothing to record: give a COMMAND, -P PID or -a");
	if ((*S->cmd != NULL) + (S->npids > 0) + S->all > 1)
		return usage_err("%s", "give one of a COMMAND, -P PID and -a");

	/* Everything that can be checked is checked before anything runs. */
	if (*S->cmd) {
		struct known k = {0};
		char err[512] = "";
		int r;

		const char *why;

		S->cmd_path = tool_find_file(S->cmd[0], 1, &why);
		if (!S->cmd_path) {
			tool_err("%s: %s", S->cmd[0], why);
			return 1;
		}
		if (elfscan_is_static(S->cmd_path)) {
			tool_err("%s is a static program: libtrail cannot be loaded into it (no "
				 "dynamic loader for LD_PRELOAD, no dlopen to call); trail traces "
				 "dynamically linked programs", S->cmd[0]);
			return 1;
		}
		libtrail = tool_libtrail_path();
		if (!libtrail) {
			tool_err("cannot find libtrail.so.1 (install trail, or set TRAIL_LIBRARY)");
			return 1;
		}
		if (check_libtrail(libtrail))
			return 1;
		if (same_file(S->output, S->cmd_path) || same_file(S->output, libtrail))
			return usage_err("-o %s is the program being recorded: choose another output file",
					 S->output);
		if ((r = probes_for(S, 0, S->cmd_path)))
			return r;
		if ((S->nevents || S->ntriggers) && (!S->allow_unknown || S->nfilters || S->ntriggers)) {
			r = elfscan_program(S->cmd_path, collect_event, &k, err, sizeof(err));
			if (r == -ENOEXEC) {
				/* a script: what it runs is known only when it runs */
				r = 0;
			} else if (r < 0) {
				tool_err("%s", err);
				free_known(&k);
				return 1;
			} else if (!S->allow_unknown) {
				r = check_events(S, &k, S->cmd_path);
			}
			if (!r)
				r = check_filters(S, &k);
			free_known(&k);
			if (r)
				return 1;
		}
		if (S->tracer && !S->allow_unknown && check_functions(S, 0, S->cmd_path)) {
			return 1;
		}
	} else if (S->npids) {
		S->sigs = calloc((size_t)S->npids, sizeof(int));
		if (!S->sigs)
			return 1;
		if ((r = probes_for(S, S->pids[0], NULL)))
			return r;
		/* a stop signal from here on (a background job's SIGINT too,
		 * which it inherited ignored) is taken and acted on between
		 * steps: an injection under way finishes first */
		catch_stop_signals();
		for (int i = 0, seen = S->npids; i < S->npids; i++) {
			r = check_pid(S, S->pids[i], &S->sigs[i]);
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
	}
	if (S->all && (r = probes_for(S, 0, NULL)))
		return r;
	if (S->all) {
		struct known none = {0};

		if (tool_registry_usable() || check_filters(S, &none))
			return 1;
	}
	/* the filters and triggers go to the spec after the probes (and the
	 * stack traces' event, when a trigger takes them) */
	for (int i = 0; i < S->nsynths + S->nfilters + S->ntriggers + S->stacktrace + S->objtrace;
	     i++) {
		char **g = realloc(S->funcs, (size_t)(S->nfuncs + 1) * sizeof(*g));
		int f = i - S->nsynths;
		char **from = i < S->nsynths		   ? &S->synths[i]
			      : f < S->nfilters		   ? &S->filters[f]
			      : f < S->nfilters + S->ntriggers ? &S->triggers[f - S->nfilters]
								 : NULL;

		if (!g)
			return 1;
		S->funcs = g;
		if (from) {
			S->funcs[S->nfuncs++] = *from;
			*from = NULL;
		} else if (!(S->funcs[S->nfuncs++] =
				     strdup(i == S->nsynths + S->nfilters + S->ntriggers && S->stacktrace
						    ? "ftrace:user_stack"
						    : "ftrace:objtrace"))) {
			return 1;
		}
	}
	{
		const char *why;

		S->clock = tool_clock_choose(S->clock_want, &why);
		if (S->clock == TRAIL_CLOCK_NONE) {
			tool_err("-C %s: %s", S->clock_want, why);
			return 1;
		}
	}
	recorder_opts(S, &ro);
	if (trail_recorder_create(&ro, &S->R))
		goto out;
	trail_recorder_raise_priority(S->R);
	/* from the moment the output exists, a stop signal finishes it */
	catch_stop_signals();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	r = trail_recorder_open(S->R, S->output);
	if (r == -EBUSY) {
		tool_err("another trail record is writing %s (its %s.part is locked): "
			 "choose another -o", S->output, S->output);
		goto out;
	} else if (r) {
		tool_err("cannot write %s: %s", S->output, strerror(-r));
		goto out;
	}
	if (trail_recorder_begin(S->R))
		goto write_error;

	S->tty = isatty(2);
	if (stop_signal) { /* asked to stop before anything ran */
		trail_recorder_close(S->R, 0);
		rc = stopped_early();
		goto out;
	}

	if (S->all) {
		size_t asked = trail_recorder_attach_new(S->R);

		if (!S->quiet)
			fprintf(stderr, "trail: recording every process of yours with libtrail "
				"(%zu now, new ones as they start); Ctrl-C to stop\n", asked);
	} else if (*S->cmd ? trail_recorder_launch(S->R, libtrail, restore_signals, NULL)
			   : trail_recorder_attach(S->R, S->sigs)) {
		/* nothing ran: an existing output file stays as it was */
		trail_recorder_finish(S->R);
		trail_recorder_close(S->R, 0);
		goto out;
	}

	for (;;) {
		uint64_t now = trail__mono_ns();
		pid_t child;
		int done;
		uint32_t n;

		if (trail_recorder_error(S->R))
			break;
		child = trail_recorder_child(S->R, &done, NULL);
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
		if (trail_recorder_reap(S->R))
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
		n = trail_recorder_poll(S->R, now, S->all);
		if (record_live.fn && now - last_live >= record_live.period_ns) {
			record_live.fn(S->R, record_live.arg);
			last_live = now;
		}
		if (now - last_status > 250000000ull) {
			status_line(S, 0);
			last_status = now;
		}
		trail_recorder_nap(S->R, n);
	}
	if (trail_recorder_error(S->R)) {
		/* stop the writers, keep what is on disk */
		trail_recorder_detach(S->R);
		status_line(S, 1);
		write_failed(S, trail_recorder_error(S->R), 0);
	} else {
		int failed;

		trail_recorder_finish(S->R);
		status_line(S, 1);
		/* a start that recorded nothing is a failed start: FILE.part
		 * goes, an older FILE stays as it was */
		failed = nothing_recorded(S, libtrail);
		r = trail_recorder_close(S->R, !failed);
		if (r)
			write_failed(S, r, 1);
		else if (failed)
			rc = 1;
		else {
			rc = 0;
			summary(S);
		}
	}
	rc = command_result(S, rc);
	goto out;
write_error:
	write_failed(S, trail_recorder_error(S->R), 0);
out:
	return rc;
}

/* Everything a session holds, on every way out of record(). */
static void session_free(struct session *S)
{
	if (S->nprobe_names)
		probes_unmark_in_use();
	trail_recorder_free(S->R);
	for (int i = 0; S->funcs && i < S->nfuncs; i++)
		free(S->funcs[i]);
	free(S->funcs);
	for (int i = 0; i < S->nprobe_names; i++)
		free(S->probe_names[i]);
	free(S->probe_names);
	for (int i = 0; i < S->nprobe_events; i++)
		free(S->probe_events[i]);
	free(S->probe_events);
	for (int i = 0; i < S->nusdt; i++)
		free(S->usdt[i]);
	free(S->usdt);
	for (int i = 0; i < S->nsynths; i++)
		free(S->synths[i]);
	free(S->synths);
	free(S->sdefs);
	for (int i = 0; S->filters && i < S->nfilters; i++)
		free(S->filters[i]);
	free(S->filters);
	for (int i = 0; S->triggers && i < S->ntriggers; i++)
		free(S->triggers[i]);
	free(S->triggers);
	free(S->trig_args);
	free(S->trig_off);
	free(S->probes);
	free(S->events);
	free(S->pids);
	free(S->sigs);
	free(S->cmd_path);
	free(S);
}

int cmd_record(int argc, char **argv)
{
	struct session *S = calloc(1, sizeof(*S));
	int rc;

	if (!S)
		return 1;
	rc = record(S, argc, argv);
	session_free(S);
	return rc;
}
