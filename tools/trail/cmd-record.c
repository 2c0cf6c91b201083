/* SPDX-License-Identifier: MIT */
/*
 * cmd-record.c - `trail record`: create a session arena, get processes into
 * it (launch a command with libtrail preloaded, or attach to running ones by
 * signal), drain published chunks into the trace file while they run, and
 * on the end (command exit, Ctrl-C, disk full) detach everyone, collect what
 * is left (including the committed part of chunks owned by processes that
 * died) and write the final accounting.
 *
 * Everything read from the arena is hostile: indices are bounds-checked,
 * chunks are copied to private memory before their header is trusted, and
 * the arena is a sealed memfd so no process can shrink it under us.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/common/arena.h"
#include "../../src/common/clock.h"
#include "../../src/common/meta.h"
#include "../../src/common/registry.h"
#include "../../src/common/spec.h"
#include "../../src/common/util.h"
#include "elfscan.h"
#include "funcscan.h"
#include "opt.h"
#include "symtab.h"
#include "tool.h"
#include "../../src/common/control.h"
#include "../../src/tracefile/writer.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#define MADV_POPULATE_WRITE 23
#endif

#define MAX_SYNCS 4096

struct proc_track {
	uint32_t pid;
	uint64_t start;
	int announced;
	int dead;
	int detached;
	int stuck;
};

struct pending {
	uint32_t idx;
	uint64_t pub;
};

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
	const char *priority; /* the drain's raised priority, or NULL */
	const char *tracer; /* -p */
	uint32_t max_depth, retval;
	int nest; /* --nest N, -1: none */
	long tids[32]; /* --tid: function tracers in these threads only */
	int ntids;
	uint64_t thresh_ns;
	char **funcs;       /* -l / -n as "@l GLOB" / "@n GLOB" spec lines */
	int nfuncs;
	int nfuncs_user;    /* of those, given on the command line */
	uint32_t mods_seen;
	uint8_t *mods_gone; /* per module slot: its unloading was written */
	struct symcache { uint64_t dev, ino; char *path; uint32_t id; } *symc;
	size_t nsymc;
	char **cmd;
	int *sigs; /* -P: each process's control signal */
	struct { pid_t pid; uint64_t start; } *tried; /* -a: processes asked */
	size_t ntried, tried_cap;
	char *cmd_path;

	/* arena */
	int memfd;
	uint8_t *base;
	struct trail_arena_geom g;
	struct trail_arena_hdr *hdr;
	uint64_t *ctab;
	struct trail_stream *streams;
	struct trail_proc *procs;
	char spec[TRAIL_SPEC_MAX + 1];

	/* output */
	struct tf_writer out;
	uint8_t *chunkbuf;
	uint8_t *event_done; /* per event id: EVENT section written */
	uint8_t *stream_seen;
	struct proc_track *pt;
	struct pending *pending; /* drain()'s list */
	uint32_t clock, mult, shift;
	const char *clock_want; /* -C */
	struct trail_clock_sync syncs[MAX_SYNCS];
	uint32_t nsyncs, syncs_written;

	/* progress */
	uint64_t ev_total, chunks, bytes, bad_chunks;
	uint64_t lost_written;  /* dropped + overwritten of the STREAM sections written */
	uint64_t *slot_lost;    /* per stream slot: what its last STREAM section said */
	uint32_t *slot_gen;
	uint8_t *slot_written;
	uint8_t *chunk_mapped;  /* per chunk: the drain has mapped its pages */
	uint32_t user_events;   /* events enabled other than the tracer's own */
	pid_t child;
	int child_status, child_done;
	int tty;
};

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

static void on_chld(int sig)
{
	(void)sig;
	got_sigchld = 1;
}

/* ids of the options without a letter */
enum {
	O_CHUNK = OPT_LONG_ID, O_OVERWRITE, O_BLOCKING, O_UNKNOWN, O_DEPTH,
	O_THRESH, O_RETVAL, O_TID, O_NEST,
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
		 "events to record: SYS:EVENT, SYS, EVENT, globs, 'all'", 0, NULL},
		{'o', "output", OPT_REQUIRED, "FILE", "trace file (default trace.dat)", 0, NULL},
		{'p', "plugin", OPT_REQUIRED, "TRACER",
		 "a tracer: function (every call of a function with a\n"
		 "patchable entry: build with -fpatchable-function-entry=5)\n"
		 "or function_graph (calls and returns, with durations)", 0, NULL},
		{'l', "limit-func", OPT_REQUIRED, "GLOB", "trace only these functions (repeatable)", 0, NULL},
		{'n', "notrace-func", OPT_REQUIRED, "GLOB", "not these (repeatable)", 0, NULL},
		{'g', "graph-func", OPT_REQUIRED, "GLOB",
		 "function_graph: only what these call (repeatable)", 0, NULL},
		{0, "max-graph-depth", OPT_REQUIRED, "N", "function_graph: no deeper than N calls", O_DEPTH, NULL},
		{0, "graph-time-thresh", OPT_REQUIRED, "T",
		 "function_graph: only calls longer than T (50us)", O_THRESH, NULL},
		{0, "retval", OPT_NONE, NULL, "function_graph: record return values", O_RETVAL, NULL},
		{0, "tid", OPT_REQUIRED, "TID[,TID...]",
		 "function tracers: only in these threads of the\n"
		 "-P processes (ftrace's set_ftrace_pid)", O_TID, NULL},
		{0, "nest", OPT_REQUIRED, "N",
		 "function tracers: calls in signal handlers nested\n"
		 "at most N deep (0: none, ftrace's funcgraph-irqs off)", O_NEST, NULL},
		{'P', "pid", OPT_REQUIRED, "PID", "attach to a running process (repeatable)", 0, NULL},
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

		if (!nn)
			return -ENOMEM;
		k->names = nn;
		k->cap = cap;
	}
	k->names[k->n++] = strdup(name);
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

	if (k->n)
		qsort(k->names, k->n, sizeof(*k->names), cmp_str);
	for (int i = 0; i < S->nevents; i++) {
		const char *e = S->events[i];
		int hit = 0;

		for (size_t j = 0; j < k->n && !hit; j++) {
			char *colon = strchr(k->names[j], ':');

			*colon = '\0';
			hit = trail__spec_match1(e, strlen(e), k->names[j], colon + 1);
			*colon = ':';
		}
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
			fprintf(stderr, "  events there:");
			for (size_t j = 0; j < k->n; j++)
				fprintf(stderr, "%s%s", j % 6 ? " " : "\n    ", k->names[j]);
			fprintf(stderr, "\n");
		}
		fprintf(stderr, "  (--allow-unknown accepts events of libraries loaded later)\n");
	}
	return bad ? -1 : 0;
}

static void free_known(struct known *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->names[i]);
	free(k->names);
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

	if (funcscan_file(object, &f, err, sizeof(err))) {
		funcscan_free(&f);
		return 0;
	}
	for (size_t k = 0; k < f.n; k++) {
		const struct fsite *site = &f.sites[k];

		if (!funcscan_usable(site) || !*site->symbol) {
			fc->unusable++;
			continue;
		}
		fc->sites++;
		for (int i = 0; i < fc->nbase; i++) {
			const char *pat = S->funcs[i] + 3; /* "@l GLOB" */
			int raw = trail__glob(pat, strlen(pat), site->symbol, strlen(site->symbol));
			int dem = trail__glob(pat, strlen(pat), site->name, strlen(site->name));

			if (!raw && !dem)
				continue;
			fc->hits[i]++;
			/* libtrail matches raw symbol names: a C++ function the
			 * pattern names demangled goes in by its mangled name */
			if (!raw && strcmp(site->symbol, site->name)) {
				char *line = NULL;

				if (asprintf(&line, "@%c %s", S->funcs[i][1], site->symbol) < 0)
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
	for (int i = 0; i < fc.nbase; i++)
		if (S->funcs[i][1] != 'n' && !fc.hits[i]) {
			tool_err("no function matches '-%c %s' in %s (%zu functions can be traced: "
				 "'trail list -f' lists them)",
				 S->funcs[i][1], S->funcs[i] + 3, where, fc.sites);
			bad = 1;
		}
	if (bad)
		fprintf(stderr, "  (--allow-unknown accepts functions of libraries loaded later)\n");
	free(fc.hits);
	return bad ? -1 : 0;
}

/* ---------------------------------------------------------------- arena */

/*
 * The buffer is a memfd, and sizing a file counts against the file size
 * limit (ulimit -f), which is meant for the trace file, not for memory.
 * Below the hard limit, the soft one is lifted while the memfd is sized
 * (and only then: the output file and the command keep the user's limit).
 * A hard limit below the buffer caps the buffer, with a warning.
 */
static int fit_file_limit(struct session *S, uint32_t spec_len)
{
	struct rlimit rl;
	uint64_t want = S->g.size;
	char a[32], b[32];

	if (getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want)
		return 0;
	while (S->g.size > rl.rlim_max &&
	       !trail__arena_geom(&S->g, (uint64_t)(S->g.nchunks - 1) * S->g.chunk_size,
				  S->g.chunk_size, spec_len))
		;
	if (S->g.size > rl.rlim_max) {
		tool_err("the file size limit (ulimit -f: %s) is too small for a trace buffer "
			 "(%s at least): raise it (ulimit -f unlimited) or use a smaller --chunk-size",
			 tool_human_bytes(rl.rlim_max, a, sizeof(a)),
			 tool_human_bytes(want > S->g.size ? S->g.size : want, b, sizeof(b)));
		return -1;
	}
	S->buffer_bytes = (uint64_t)S->g.nchunks * S->g.chunk_size;
	tool_warn("the file size limit (ulimit -f: %s) caps the buffer at %s "
		  "(the trace file stops at that limit too)",
		  tool_human_bytes(rl.rlim_max, a, sizeof(a)),
		  tool_human_bytes(S->buffer_bytes, b, sizeof(b)));
	return 0;
}

/* ftruncate, with the soft file size limit lifted to the hard one. */
static int size_memfd(int fd, uint64_t size)
{
	struct rlimit rl, up;
	int r, e, lifted = 0;

	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size) {
		up = rl;
		up.rlim_cur = rl.rlim_max;
		lifted = !setrlimit(RLIMIT_FSIZE, &up);
	}
	r = ftruncate(fd, (off_t)size);
	e = errno;
	if (lifted)
		setrlimit(RLIMIT_FSIZE, &rl);
	errno = e;
	return r;
}

/* Memory this process may still take: MemAvailable, and the room left
 * under its cgroup's memory.max. */
static uint64_t memory_available(void)
{
	char buf[4096], path[4200], *p;
	uint64_t avail = UINT64_MAX;

	if (trail__read_file("/proc/meminfo", buf, sizeof(buf)) > 0 &&
	    (p = strstr(buf, "MemAvailable:")))
		avail = strtoull(p + 13, NULL, 10) * 1024;
	if (trail__read_file("/proc/self/cgroup", buf, sizeof(buf)) > 0 &&
	    !strncmp(buf, "0::", 3)) {
		char v[64];
		uint64_t max, cur;

		buf[strcspn(buf, "\n")] = '\0';
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", buf + 3);
		if (trail__read_file(path, v, sizeof(v)) > 0 && strncmp(v, "max", 3)) {
			max = strtoull(v, NULL, 10);
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", buf + 3);
			cur = trail__read_file(path, v, sizeof(v)) > 0 ? strtoull(v, NULL, 10) : 0;
			if (max > cur && max - cur < avail)
				avail = max - cur;
			else if (max <= cur)
				avail = 0;
		}
	}
	return avail;
}

/*
 * The default buffer: 1/64 of the machine's memory, from 32 MiB to 1 GiB
 * (384 MiB with 24 GiB). The buffer absorbs the times the recorder cannot
 * drain: a busy 2-CPU machine tracing a server at ~240 MB/s left it off the
 * CPU for 100-150 ms routinely, over a second at worst (doc/performance.md),
 * longer than 32 MiB lasts. Its pages are taken only as chunks are used.
 */
static uint64_t default_buffer(void)
{
	char buf[4096], *p;
	uint64_t total = 0, b;

	if (trail__read_file("/proc/meminfo", buf, sizeof(buf)) > 0 &&
	    (p = strstr(buf, "MemTotal:")))
		total = strtoull(p + 9, NULL, 10) * 1024;
	b = total / 64;
	if (b < (uint64_t)TRAIL_ARENA_DEFAULT_KB * 1024)
		b = (uint64_t)TRAIL_ARENA_DEFAULT_KB * 1024;
	if (b > (1ull << 30))
		b = 1ull << 30;
	return b;
}

/* The buffer can be filled whole (its pages are taken as chunks are used):
 * it must fit in the memory this machine (and cgroup) has left, with a
 * quarter to spare for the programs being traced. A default buffer shrinks to fit; a -b that does
 * not fit is refused before anything starts. */
static int fit_memory(struct session *S)
{
	uint64_t avail = memory_available(), room = avail / 4 * 3;
	char a[32], b[32], c[32], d[32];

	if (S->buffer_bytes <= room)
		return 0;
	if (!S->buffer_given && room >= 2ull * S->chunk_size) {
		S->buffer_bytes = room / S->chunk_size * S->chunk_size;
		return 0;
	}
	tool_err("a %s buffer does not fit in memory: %s available%s, so %s at most "
		 "(-b, with --chunk-size %s)",
		 tool_human_bytes(S->buffer_bytes, a, sizeof(a)),
		 tool_human_bytes(avail, b, sizeof(b)), " (MemAvailable, cgroup memory.max)",
		 tool_human_bytes(room, c, sizeof(c)),
		 tool_human_bytes(S->chunk_size, d, sizeof(d)));
	return -1;
}

static int arena_create(struct session *S)
{
	size_t len = 0;
	uint64_t sid, start = 0;
	int r;
	char tracer[512] = "";

	trail__clock_calibrate(S->clock, &S->mult, &S->shift, 20);
	if (S->tracer) {
		int graph = !strcmp(S->tracer, "function_graph");
		size_t o = (size_t)snprintf(tracer, sizeof(tracer), "@tracer %s\n%s", S->tracer,
					    graph ? "ftrace:funcgraph_*" : "ftrace:function");

		if (S->max_depth)
			o += (size_t)snprintf(tracer + o, sizeof(tracer) - o, "\n@depth %u",
					      S->max_depth);
		if (S->retval)
			o += (size_t)snprintf(tracer + o, sizeof(tracer) - o, "\n@retval 1");
		if (S->thresh_ns) { /* in the writers' clock ticks */
			unsigned __int128 t = ((unsigned __int128)S->thresh_ns << S->shift) /
					      (S->mult ? S->mult : 1);

			o += (size_t)snprintf(tracer + o, sizeof(tracer) - o, "\n@thresh %llu",
					      (unsigned long long)(t ? t : 1));
		}
		for (int i = 0; i < S->ntids; i++)
			o += (size_t)snprintf(tracer + o, sizeof(tracer) - o, "\n@tid %ld", S->tids[i]);
		if (S->nest >= 0)
			o += (size_t)snprintf(tracer + o, sizeof(tracer) - o, "\n@nest %d", S->nest);
	}
	/* the -e patterns, then the tracer's options and events */
	for (int i = 0; i < S->nevents + S->nfuncs + (S->tracer ? 1 : 0); i++) {
		const char *line = i < S->nevents ? S->events[i]
			: i < S->nevents + S->nfuncs ? S->funcs[i - S->nevents] : tracer;
		size_t l = strlen(line);

		if (len + l + 1 > TRAIL_SPEC_MAX) {
			tool_err("too many -e/-l/-n patterns (%d bytes at most)", TRAIL_SPEC_MAX);
			return -1;
		}
		memcpy(S->spec + len, line, l);
		len += l;
		S->spec[len++] = '\n';
	}
	S->spec[len] = '\0';
	if (trail__arena_geom(&S->g, S->buffer_bytes, S->chunk_size, (uint32_t)len)) {
		tool_err("buffer of %llu KiB cannot hold two chunks of %u KiB",
			 (unsigned long long)(S->buffer_bytes / 1024), S->chunk_size / 1024);
		return -1;
	}
	if (fit_file_limit(S, (uint32_t)len))
		return -1;
	S->memfd = memfd_create("trail-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (S->memfd < 0) {
		tool_err("memfd_create: %s", strerror(errno));
		return -1;
	}
	if (size_memfd(S->memfd, S->g.size) < 0) {
		char h[32];

		tool_err("cannot size the %s buffer: %s", tool_human_bytes(S->g.size, h, sizeof(h)),
			 strerror(errno));
		return -1;
	}
	/* nobody may shrink or grow it: mappings never fault with SIGBUS */
	if (fcntl(S->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		tool_err("cannot seal the buffer: %s", strerror(errno));
		return -1;
	}
	/* The tables are populated here at once; a chunk's pages when the
	 * drain first reads it (chunk_map()), so a large buffer costs memory
	 * and time only as far as it is used. Either way not by a fault a
	 * page: a fault can cost 23 us in a virtual machine, doc/performance.md. */
	S->base = mmap(NULL, S->g.size, PROT_READ | PROT_WRITE, MAP_SHARED, S->memfd, 0);
	if (S->base == MAP_FAILED) {
		tool_err("cannot map the buffer: %s", strerror(errno));
		return -1;
	}
	madvise(S->base, S->g.chunks_off, MADV_POPULATE_WRITE);
	r = (int)trail__read_file("/proc/sys/kernel/random/boot_id", (char *)S->syncs, 64);
	sid = trail__mono_ns() ^ ((uint64_t)getpid() << 40) ^ (r > 0 ? ((uint64_t *)S->syncs)[0] : 0);
	trail__proc_stat(getpid(), &start, NULL, NULL);
	trail__arena_format(S->base, &S->g, sid, S->overwrite ? TRAIL_ARENA_OVERWRITE : 0,
			    S->clock, S->spec, (uint32_t)getpid(), start);
	S->hdr = (struct trail_arena_hdr *)S->base;
	S->hdr->block_us = S->block_us; /* before anybody maps it */
	S->ctab = trail__arena_ctab(S->base, &S->g);
	S->streams = trail__arena_streams(S->base, &S->g);
	S->procs = trail__arena_procs(S->base, &S->g);
	S->chunkbuf = malloc(S->g.chunk_size);
	S->event_done = calloc(S->g.max_events, 1);
	S->stream_seen = calloc(S->g.max_streams, 1);
	S->pt = calloc(S->g.max_procs, sizeof(*S->pt));
	S->slot_lost = calloc(S->g.max_streams, sizeof(*S->slot_lost));
	S->slot_gen = calloc(S->g.max_streams, sizeof(*S->slot_gen));
	S->slot_written = calloc(S->g.max_streams, 1);
	S->chunk_mapped = calloc(S->g.nchunks / 8 + 1, 1);
	if (!S->chunkbuf || !S->event_done || !S->stream_seen || !S->pt || !S->slot_lost ||
	    !S->slot_gen || !S->slot_written || !S->chunk_mapped) {
		tool_err("out of memory");
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- output */

static int out_err(struct session *S)
{
	return S->out.err;
}

static void add_sync(struct session *S)
{
	if (S->nsyncs < MAX_SYNCS)
		trail__clock_sync(S->clock, &S->syncs[S->nsyncs++]);
}

static void write_clock(struct session *S)
{
	struct trail_sec_clock c = {S->clock, S->shift, S->mult, 0};
	uint32_t n = S->nsyncs - S->syncs_written;

	if (!n)
		return;
	c.nsync = n;
	if (!tfw_section(&S->out, TRAIL_SEC_CLOCK, &c, sizeof(c),
			 &S->syncs[S->syncs_written], n * sizeof(S->syncs[0])))
		S->syncs_written = S->nsyncs;
}

static void write_info(struct session *S, int argc, char **argv)
{
	char text[8192], host[256] = "";
	size_t o = 0;

	gethostname(host, sizeof(host) - 1);
	o += (size_t)snprintf(text + o, sizeof(text) - o,
			      "trail_version=%s\nhostname=%s\nmode=%s\nbuffer_bytes=%llu\n"
			      "chunk_size=%u\n",
			      TRAIL_VERSION, host, S->overwrite ? "overwrite" : "discard",
			      (unsigned long long)S->g.nchunks * S->g.chunk_size,
			      S->g.chunk_size);
	if (S->priority)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "recorder_priority=%s\n",
				      S->priority);
	if (S->block_us == ~0u)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "blocking_timeout=inf\n");
	else if (S->block_us)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "blocking_timeout=%u%s\n",
				      S->block_us % 1000000 == 0 ? S->block_us / 1000000
				      : S->block_us % 1000 == 0 ? S->block_us / 1000 : S->block_us,
				      S->block_us % 1000000 == 0 ? "s"
				      : S->block_us % 1000 == 0 ? "ms" : "us");
	o += (size_t)snprintf(text + o, sizeof(text) - o, "events=");
	for (int i = 0; i < S->nevents && o < sizeof(text) - 1; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s", i ? "," : "",
				      S->events[i]);
	if (S->tracer && o < sizeof(text) - 1) {
		o += (size_t)snprintf(text + o, sizeof(text) - o, "\ntracer=%s\nfunctions=",
				      S->tracer);
		for (int i = 0; i < S->nfuncs_user && o < sizeof(text) - 1; i++)
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s-%c %s", i ? " " : "",
					      S->funcs[i][1], S->funcs[i] + 3);
		if (S->nest >= 0 && o < sizeof(text) - 1)
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s--nest %d",
					      S->nfuncs_user ? " " : "", S->nest);
	}
	if (o < sizeof(text) - 1)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "\ncommand=");
	for (int i = 0; i < argc && o < sizeof(text) - 1; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s", i ? " " : "", argv[i]);
	for (int i = 0; i < S->npids && o < sizeof(text) - 1; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%d", i ? "," : "-P ",
				      (int)S->pids[i]);
	if (o < sizeof(text) - 1)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "\n");
	if (o > sizeof(text) - 1)
		o = sizeof(text) - 1;
	tfw_section(&S->out, TRAIL_SEC_INFO, text, o, NULL, 0);
}

/* New entries of the session's event table. */
static void write_events(struct session *S)
{
	uint32_t n = __atomic_load_n(&S->hdr->nevents, __ATOMIC_ACQUIRE);
	const uint32_t *idx = (const uint32_t *)(S->base + S->g.evidx_off);
	const uint8_t *data = S->base + S->g.evdata_off;

	if (n > S->g.max_events)
		n = S->g.max_events;
	for (uint32_t i = 0; i < n; i++) {
		struct trail_sec_event se = {i, 0};
		struct trail_evrec rec;
		struct trail_meta m;
		uint8_t blob[65536];
		const char *why;
		uint32_t off;

		if (S->event_done[i])
			continue;
		off = __atomic_load_n(&idx[i], __ATOMIC_ACQUIRE);
		if (!off || off > S->g.evdata_size - sizeof(rec))
			continue;
		memcpy(&rec, data + off, sizeof(rec));
		if (rec.id != i || rec.size > sizeof(blob) ||
		    rec.size > S->g.evdata_size - off - sizeof(rec)) {
			S->event_done[i] = 1; /* broken: never valid */
			continue;
		}
		memcpy(blob, data + off + sizeof(rec), rec.size);
		if (trail__meta_parse(blob, rec.size, &m, &why)) {
			S->event_done[i] = 1;
			continue;
		}
		if (!tfw_section(&S->out, TRAIL_SEC_EVENT, &se, sizeof(se), blob, rec.size)) {
			S->event_done[i] = 1;
			if (strcmp(m.provider, "ftrace")) /* not a tracer's own */
				S->user_events++;
		}
	}
}

static void write_proc(struct session *S, uint32_t i, uint32_t state)
{
	struct trail_proc pr;
	struct trail_sec_proc sp;
	char path[64], exe[PATH_MAX] = "";
	ssize_t n;

	memcpy(&pr, &S->procs[i], sizeof(pr));
	memset(&sp, 0, sizeof(sp));
	sp.pid = pr.pid;
	sp.ppid = pr.ppid;
	sp.how = pr.how;
	sp.state = state;
	sp.result = pr.result;
	sp.exited = S->pt[i].dead;
	memcpy(sp.comm, pr.comm, sizeof(sp.comm));
	sp.comm[15] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/exe", pr.pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	tfw_section(&S->out, TRAIL_SEC_PROC, &sp, sizeof(sp), exe, strlen(exe) + 1);
}

/* Copy chunk i out of the arena (we hold it READING, or salvage it), check
 * its header and append it. */
/* Map chunk i's pages with one call the first time the drain reads it
 * (kernels before 5.14 refuse: then faults map them). */
static void chunk_map(struct session *S, uint32_t i, void *chunk)
{
	if (S->chunk_mapped[i >> 3] & (1u << (i & 7)))
		return;
	S->chunk_mapped[i >> 3] |= (uint8_t)(1u << (i & 7));
	madvise(chunk, S->g.chunk_size, MADV_POPULATE_READ);
}

static void write_chunk(struct session *S, uint32_t i, uint32_t flags)
{
	struct trail_chunk_hdr *src = trail__arena_chunk(S->base, &S->g, i);
	struct trail_chunk_hdr *h = (struct trail_chunk_hdr *)S->chunkbuf;
	struct trail_sec_chunk sc = {flags, 0};
	uint64_t commit;
	uint32_t bytes, events;

	chunk_map(S, i, src);
	commit = __atomic_load_n(&src->commit, __ATOMIC_ACQUIRE);
	bytes = TRAIL_COMMIT_BYTES(commit);
	events = TRAIL_COMMIT_EVENTS(commit);

	if (!events && !bytes)
		return;
	if (bytes > S->g.chunk_size - sizeof(*h) || events > bytes / 4) {
		S->bad_chunks++;
		return;
	}
	memcpy(h, src, sizeof(*h));
	h->commit = commit; /* what we read, not what it may be now */
	memcpy(h + 1, src + 1, bytes);
	if (h->stream >= S->g.max_streams) {
		S->bad_chunks++;
		return;
	}
	if (tfw_section(&S->out, TRAIL_SEC_CHUNK, &sc, sizeof(sc), h, sizeof(*h) + bytes))
		return;
	S->stream_seen[h->stream] = 1;
	S->ev_total += events;
	S->bytes += bytes;
	S->chunks++;
}

static void free_chunk(struct session *S, uint32_t i)
{
	/* release: our reads of the chunk are done before a writer takes it
	 * (pairs with the acquire CAS in take_chunk()) */
	__atomic_store_n(&S->ctab[i], TRAIL_CS_FREE, __ATOMIC_RELEASE);
	__atomic_fetch_add(&S->hdr->nfree, 1, __ATOMIC_RELAXED);
}


static int cmp_pub(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return x->pub < y->pub ? -1 : x->pub > y->pub;
}

static void write_modules(struct session *S);

/* Take every published chunk, oldest publication first. */
static uint32_t drain(struct session *S)
{
	struct pending *list = S->pending;
	uint32_t n = 0, lowest = UINT32_MAX;

	if (!list && !(list = S->pending = malloc(S->g.nchunks * sizeof(*list))))
		return 0;
	for (uint32_t i = 0; i < S->g.nchunks; i++) {
		uint64_t w = __atomic_load_n(&S->ctab[i], __ATOMIC_RELAXED);

		if (TRAIL_CS_STATE(w) != TRAIL_CS_COMPLETE)
			continue;
		/* acquire: pairs with the writer's release publishing it */
		if (__atomic_compare_exchange_n(&S->ctab[i], &w, TRAIL_CS_READING, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			list[n++] = (struct pending){i, TRAIL_CS_PUB(w)};
	}
	if (!n)
		return 0;
	qsort(list, n, sizeof(*list), cmp_pub);
	write_events(S);
	write_modules(S);
	for (uint32_t k = 0; k < n; k++) {
		if (!out_err(S))
			write_chunk(S, list[k].idx, 0);
		free_chunk(S, list[k].idx);
		if (list[k].idx < lowest)
			lowest = list[k].idx;
	}
	/* writers look for a free chunk from the hint on: sent back to the
	 * lowest one freed, they reuse the chunks whose pages are mapped
	 * already, and a large buffer the drain keeps up with is touched only
	 * as far as its high-water mark */
	__atomic_store_n(&S->hdr->alloc_hint, lowest, __ATOMIC_RELAXED);
	return n;
}

/* Chunks still OWNED by writers of process slot p (dead, or not answering). */
static void salvage(struct session *S, uint32_t p, int steal)
{
	write_events(S);
	write_modules(S);
	for (uint32_t i = 0; i < S->g.nchunks; i++) {
		uint64_t w = __atomic_load_n(&S->ctab[i], __ATOMIC_ACQUIRE);
		uint32_t st = TRAIL_CS_OWNER(w);

		if (TRAIL_CS_STATE(w) != TRAIL_CS_OWNED || st >= S->g.max_streams ||
		    __atomic_load_n(&S->streams[st].proc, __ATOMIC_RELAXED) != p)
			continue;
		if (!steal) { /* the writer may live on: copy, leave it in place */
			if (!out_err(S))
				write_chunk(S, i, TRAIL_CHUNK_SALVAGED);
			continue;
		}
		if (!__atomic_compare_exchange_n(&S->ctab[i], &w, TRAIL_CS_READING, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		if (!out_err(S))
			write_chunk(S, i, TRAIL_CHUNK_SALVAGED);
		if (S->overwrite)
			__atomic_store_n(&S->ctab[i], TRAIL_CS_COMPLETE_WORD(0), __ATOMIC_RELEASE);
		else
			free_chunk(S, i);
	}
}

static void recycle_streams(struct session *S, int dead_proc);

/* The SYMBOLS section of an object file, written once per file. */
static uint32_t symbols_for(struct session *S, const char *path, uint64_t dev, uint64_t ino)
{
	struct trail_sec_symbols ss;
	struct symtab t;
	struct trail_sym *v;
	char err[256];
	void *nc;
	uint32_t id;

	for (size_t i = 0; i < S->nsymc; i++)
		if (S->symc[i].dev == dev && S->symc[i].ino == ino &&
		    !strcmp(S->symc[i].path, path))
			return S->symc[i].id;
	nc = realloc(S->symc, (S->nsymc + 1) * sizeof(*S->symc));
	if (!nc)
		return TRAIL_NO_SYMBOLS;
	S->symc = nc;
	id = (uint32_t)S->nsymc;
	S->symc[S->nsymc++] = (struct symcache){dev, ino, strdup(path), TRAIL_NO_SYMBOLS};
	if (symtab_load(path, &t, err, sizeof(err)))
		return TRAIL_NO_SYMBOLS;
	v = calloc(t.n ? t.n : 1, sizeof(*v));
	if (v) {
		for (size_t i = 0; i < t.n; i++) {
			v[i].addr = t.syms[i].addr;
			v[i].size = t.syms[i].size;
			v[i].name = t.syms[i].name;
		}
		ss.id = id;
		ss.nsyms = (uint32_t)t.n;
		ss.names_len = t.names_len;
		/* one section: header, symbols, names */
		{
			size_t len = sizeof(ss) + t.n * sizeof(*v) + t.names_len;
			char *buf = malloc(len);

			if (buf) {
				memcpy(buf, &ss, sizeof(ss));
				memcpy(buf + sizeof(ss), v, t.n * sizeof(*v));
				memcpy(buf + sizeof(ss) + t.n * sizeof(*v), t.names, t.names_len);
				if (!tfw_section(&S->out, TRAIL_SEC_SYMBOLS, buf, len, NULL, 0))
					S->symc[id].id = id;
				free(buf);
			}
		}
		free(v);
	}
	symtab_free(&t);
	return S->symc[id].id;
}

/* New entries of the module table: objects with hooked functions. */
static void write_modules(struct session *S)
{
	const struct trail_mod *mods = (const struct trail_mod *)(S->base + S->g.mods_off);
	uint32_t n = __atomic_load_n(&S->hdr->nmods, __ATOMIC_ACQUIRE);

	if (n > S->g.max_mods)
		n = S->g.max_mods;
	for (; S->mods_seen < n && !out_err(S); S->mods_seen++) {
		struct trail_mod m;
		struct trail_sec_module sm;

		uint32_t st = __atomic_load_n(&mods[S->mods_seen].state, __ATOMIC_ACQUIRE);

		if (st != TRAIL_MS_READY && st != TRAIL_MS_GONE)
			break; /* still being filled: next time */
		memcpy(&m, &mods[S->mods_seen], sizeof(m));
		m.path[sizeof(m.path) - 1] = '\0';
		if (m.path[0] != '/')
			continue;
		memset(&sm, 0, sizeof(sm));
		sm.pid = m.pid;
		sm.base = m.base;
		sm.lo = m.lo;
		sm.hi = m.hi;
		sm.symbols = symbols_for(S, m.path, m.dev, m.ino);
		tfw_section(&S->out, TRAIL_SEC_MODULE, &sm, sizeof(sm), m.path, strlen(m.path) + 1);
	}
	/* objects unloaded since (dlclose): later events at their addresses
	 * are another object's */
	for (uint32_t i = 0; i < S->mods_seen && !out_err(S); i++) {
		struct trail_mod m;
		struct trail_sec_modgone g;

		if ((S->mods_gone && S->mods_gone[i]) ||
		    __atomic_load_n(&mods[i].state, __ATOMIC_ACQUIRE) != TRAIL_MS_GONE)
			continue;
		if (!S->mods_gone && !(S->mods_gone = calloc(S->g.max_mods, 1)))
			return;
		memcpy(&m, &mods[i], sizeof(m));
		S->mods_gone[i] = 1;
		if (m.path[0] != '/')
			continue;
		memset(&g, 0, sizeof(g));
		g.pid = m.pid;
		g.base = m.base;
		g.lo = m.lo;
		g.hi = m.hi;
		g.gone = m.gone;
		tfw_section(&S->out, TRAIL_SEC_MODGONE, &g, sizeof(g), NULL, 0);
	}
}

/* processes that found the process table full (it counts on past it) */
static uint64_t procs_refused(struct session *S)
{
	uint32_t n = __atomic_load_n(&S->hdr->nprocs, __ATOMIC_ACQUIRE);

	return n > S->g.max_procs ? n - S->g.max_procs : 0;
}

static uint32_t nprocs(struct session *S)
{
	uint32_t n = __atomic_load_n(&S->hdr->nprocs, __ATOMIC_ACQUIRE);

	return n > S->g.max_procs ? S->g.max_procs : n;
}

/* Announce new processes, notice dead ones and take their chunks. */
static void check_procs(struct session *S)
{
	uint32_t n = nprocs(S);

	for (uint32_t i = 0; i < n; i++) {
		struct proc_track *t = &S->pt[i];
		uint32_t st = __atomic_load_n(&S->procs[i].state, __ATOMIC_ACQUIRE);

		if (st == TRAIL_PS_FREE)
			continue;
		if (!t->announced) {
			t->pid = S->procs[i].pid;
			t->start = S->procs[i].start_time;
			t->announced = 1;
			write_proc(S, i, st);
		}
		if (st == TRAIL_PS_DETACHED || st == TRAIL_PS_FAILED)
			t->detached = 1;
		if (!t->dead && (st == TRAIL_PS_EXECED || !trail__proc_alive((pid_t)t->pid, t->start))) {
			if (S->child && (pid_t)t->pid == S->child && !S->child_done)
				continue; /* our zombie: reaped in the main loop */
			t->dead = 1;
			if (!S->overwrite) {
				salvage(S, i, 1);
				recycle_streams(S, (int)i);
			}
		}
	}
}

/* ---------------------------------------------------------------- status */

/* Events lost so far, counted as the file will count them: the STREAM
 * sections written, the slots not written yet, the stream table's refusals. */
static uint64_t live_lost(struct session *S)
{
	uint64_t lost = S->lost_written + __atomic_load_n(&S->hdr->nostream_lost, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i < S->g.max_streams; i++) {
		uint32_t st = __atomic_load_n(&S->streams[i].state, __ATOMIC_ACQUIRE);
		uint32_t gen = __atomic_load_n(&S->streams[i].gen, __ATOMIC_RELAXED);

		if (st != TRAIL_SS_LIVE && st != TRAIL_SS_EXITED)
			continue;
		if (S->slot_written[i] && S->slot_gen[i] == gen)
			lost -= S->slot_lost[i];
		lost += __atomic_load_n(&S->streams[i].dropped, __ATOMIC_RELAXED) +
			__atomic_load_n(&S->streams[i].overwritten, __ATOMIC_RELAXED);
	}
	return lost;
}

static void status_line(struct session *S, int final)
{
	char a[32], b[32], c[32];
	uint64_t lost = 0;

	if (!S->tty || S->quiet)
		return;
	lost = live_lost(S);
	fprintf(stderr, "\r\033[Ktrail: %s events  %s  lost %s  processes %u%s",
		tool_thousands(S->ev_total, a, sizeof(a)),
		tool_human_bytes(S->bytes, b, sizeof(b)),
		tool_thousands(lost, c, sizeof(c)), nprocs(S), final ? "\n" : "");
	if (final)
		fputs("\r\033[K", stderr);
}

/* ---------------------------------------------------------------- attach */

static int send_cmd(struct session *S, pid_t pid, int sig, uint32_t cmd)
{
	union sigval v;

	v.sival_int = trail_ctl_encode(cmd, S->memfd);
	return sigqueue(pid, sig, v) < 0 ? -errno : 0;
}

/* Is `sig` caught by pid (SigCgt in /proc/PID/status)? */
static int signal_caught(pid_t pid, int sig)
{
	char path[64], buf[4096], *p;
	unsigned long long mask;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (trail__read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "\nSigCgt:");
	if (!p)
		return 0;
	mask = strtoull(p + 8, NULL, 16);
	return sig > 0 && sig <= 64 && ((mask >> (sig - 1)) & 1);
}

static int maps_libtrail(pid_t pid)
{
	char path[64], *buf;
	int found = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	buf = malloc(1 << 22);
	if (!buf)
		return 0;
	n = trail__read_file(path, buf, 1 << 22);
	if (n > 0)
		found = strstr(buf, "/libtrail.so") != NULL;
	free(buf);
	return found;
}

/* The checks a user deserves a clear message for, before anything starts. */
static int check_pid(struct session *S, pid_t pid, int *sig)
{
	char path[512], comm[64] = "?";
	struct trail_reg reg;
	struct stat st;
	struct known k = {0};
	int dfd, r;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (pid <= 0 || stat(path, &st) < 0) {
		tool_err("no process with pid %d", (int)pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (trail__read_file(path, comm, sizeof(comm)) > 0)
		comm[strcspn(comm, "\n")] = '\0';
	if (st.st_uid != geteuid()) {
		tool_err("process %d (%s) belongs to uid %u, not to you (uid %u): "
			 "trail only attaches to your own processes",
			 (int)pid, comm, (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	if (trail__registry_path(path, sizeof(path)))
		return -1;
	dfd = trail__registry_open(path, 0);
	if (dfd < 0 && dfd != -ENOENT) {
		tool_err("registry %s: %s", path, trail__registry_strerror(dfd));
		return -1;
	}
	if (dfd < 0 || (r = trail__registry_get(dfd, pid, &reg), close(dfd), r) ||
	    !maps_libtrail(pid)) {
		tool_err("process %d (%s) has no libtrail loaded: start it with "
			 "LD_PRELOAD=%s, or link it with -ltrail",
			 (int)pid, comm, tool_libtrail_path() ? tool_libtrail_path() : "libtrail.so.1");
		return -1;
	}
	if (!reg.signal || !signal_caught(pid, reg.signal)) {
		tool_err("process %d (%s) has libtrail but attaching is disabled "
			 "(TRAIL_SIGNAL=0, or the program took over signal %d)",
			 (int)pid, comm, reg.signal);
		return -1;
	}
	*sig = reg.signal;
	if (S->tracer && !S->allow_unknown) {
		char where[128];

		snprintf(where, sizeof(where), "process %d (%s)", (int)pid, comm);
		if (check_functions(S, pid, where))
			return -1;
	}
	if (!S->allow_unknown && S->nevents) {
		char err[512] = "", where[128];

		r = elfscan_pid(pid, collect_event, &k, err, sizeof(err));
		if (r < 0) {
			tool_err("cannot read the objects of process %d: %s", (int)pid, err);
			free_known(&k);
			return -1;
		}
		snprintf(where, sizeof(where), "process %d (%s)", (int)pid, comm);
		r = check_events(S, &k, where);
		free_known(&k);
		if (r)
			return -1;
	}
	return 0;
}

static struct trail_proc *find_proc(struct session *S, pid_t pid, uint32_t *idx)
{
	uint32_t n = nprocs(S);

	for (uint32_t i = n; i-- > 0;)
		if (S->procs[i].pid == (uint32_t)pid &&
		    __atomic_load_n(&S->procs[i].state, __ATOMIC_ACQUIRE) != TRAIL_PS_FREE) {
			if (idx)
				*idx = i;
			return &S->procs[i];
		}
	return NULL;
}

static int attach_all(struct session *S, const int *sigs)
{
	for (int i = 0; i < S->npids; i++) {
		struct trail_proc *pr = NULL;
		int r = send_cmd(S, S->pids[i], sigs[i], TRAIL_CTL_ATTACH);

		if (r) {
			tool_err("cannot signal process %d: %s", (int)S->pids[i], strerror(-r));
			return -1;
		}
		/* 3 s to take the request (it then claims a process slot, k),
		 * 60 s to join: it may wait for other sessions' attaches first */
		int k = -1;

		for (int t = 0; t < (k >= 0 ? 60000 : 3000) &&
				!(pr = find_proc(S, S->pids[i], NULL)); t++) {
			struct timespec ts = {0, 1000000};

			for (uint32_t n = nprocs(S), j = 0; k < 0 && j < n; j++)
				if (__atomic_load_n(&S->procs[j].pid, __ATOMIC_ACQUIRE) ==
				    (uint32_t)S->pids[i])
					k = (int)j;
			if (k >= 0 && !trail__proc_alive(S->pids[i], S->procs[k].start_time))
				break;
			nanosleep(&ts, NULL);
		}
		if (!pr && k < 0) {
			tool_err("process %d did not answer the attach request within 3 s "
				 "(is signal %d blocked in all its threads?)", (int)S->pids[i], sigs[i]);
			return -1;
		}
		if (!pr) {
			tool_err("process %d took the attach request but %s", (int)S->pids[i],
				 trail__proc_alive(S->pids[i], S->procs[k].start_time)
					 ? "did not finish joining within 60 s"
					 : "exited while joining");
			return -1;
		}
		if (__atomic_load_n(&pr->state, __ATOMIC_ACQUIRE) == TRAIL_PS_FAILED) {
			char st[2048], path[64], *b;

			snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)S->pids[i], pr->tid);
			if (pr->result == -EBUSY && trail__read_file(path, st, sizeof(st)) > 0 &&
			    (b = strstr(st, "\nSigBlk:")) && (strtoull(b + 8, NULL, 16) & (1ull << (SIGTRAP - 1))))
				tool_err("process %d: its thread %d blocks SIGTRAP, and would be killed "
					 "by a breakpoint if it ran into one while function entries are "
					 "patched; nothing was changed", (int)S->pids[i], pr->tid);
			else if (pr->result == -EBUSY)
				tool_err("process %d: its thread %d blocks signal %d, so it cannot be "
					 "moved out of the function entries being patched; nothing was "
					 "changed", (int)S->pids[i], pr->tid, sigs[i]);
			else if (pr->result == -ETIMEDOUT)
				tool_err("process %d: its thread %d did not answer signal %d within "
					 "2 s while function entries were being patched (stopped, or "
					 "starved of CPU); nothing was changed", (int)S->pids[i],
					 pr->tid, sigs[i]);
			else if (pr->result == -EUSERS)
				tool_err("process %d is already in %d trail sessions, the most it "
					 "can be in", (int)S->pids[i], TRAIL_MAX_SESSIONS);
			else
				tool_err("process %d could not join: %s", (int)S->pids[i],
					 strerror(-pr->result));
			return -1;
		}
		if (!S->quiet && S->tracer)
			fprintf(stderr, "trail: attached to process %d (%.16s): %u function%s hooked\n",
				(int)S->pids[i], pr->comm, pr->functions, pr->functions == 1 ? "" : "s");
		else if (!S->quiet)
			fprintf(stderr, "trail: attached to process %d (%.16s): %d event%s enabled\n",
				(int)S->pids[i], pr->comm, pr->result, pr->result == 1 ? "" : "s");
	}
	return 0;
}

/* Ask every live process to detach; wait for them (signalling again while
 * one reports that it was interrupted mid-write). */
static void detach_all(struct session *S)
{
	for (int round = 0; round < 200; round++) {
		uint32_t n = nprocs(S);
		int waiting = 0;

		for (uint32_t i = 0; i < n; i++) {
			struct proc_track *t = &S->pt[i];
			uint32_t st = __atomic_load_n(&S->procs[i].state, __ATOMIC_ACQUIRE);
			int sig = S->procs[i].signal;

			if (st == TRAIL_PS_FREE || st == TRAIL_PS_DETACHED || st == TRAIL_PS_FAILED) {
				t->detached = st != TRAIL_PS_FREE;
				continue;
			}
			if (!t->announced)
				check_procs(S);
			/* an image replaced by exec never answers: it joined again
			 * (EXECED), or catches the control signal no more (exec
			 * resets handlers) and has no libtrail mapped; finish()
			 * salvages it as a dead one */
			if (t->dead || st == TRAIL_PS_EXECED ||
			    !trail__proc_alive((pid_t)S->procs[i].pid, S->procs[i].start_time) ||
			    (round && sig > 0 && sig <= 64 &&
			     !signal_caught((pid_t)S->procs[i].pid, sig) &&
			     !maps_libtrail((pid_t)S->procs[i].pid))) {
				t->dead = 1;
				continue;
			}
			if (sig <= 0 || sig > 64) {
				t->stuck = 1;
				continue;
			}
			if (round % 5 == 0)
				send_cmd(S, (pid_t)S->procs[i].pid, sig, TRAIL_CTL_DETACH);
			waiting++;
		}
		if (!waiting)
			return;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	for (uint32_t i = 0; i < nprocs(S); i++) {
		uint32_t st = __atomic_load_n(&S->procs[i].state, __ATOMIC_ACQUIRE);

		if (!S->pt[i].dead && (st == TRAIL_PS_ACTIVE || st == TRAIL_PS_DETACH_PENDING)) {
			S->pt[i].stuck = 1;
			tool_warn("process %u did not detach within 2 s; taking its events "
				  "committed so far", S->procs[i].pid);
		}
	}
}

/*
 * -a: ask every registered process of ours that is not in the session yet.
 * Asynchronous: a process that does not answer is simply not recorded.
 */
static void attach_new(struct session *S)
{
	char path[512];
	struct dirent *d;
	DIR *dir;
	int dfd;

	if (trail__registry_path(path, sizeof(path)) ||
	    (dfd = trail__registry_open(path, 0)) < 0)
		return;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return;
	}
	while ((d = readdir(dir))) {
		struct trail_reg reg;
		struct stat st;
		char *end, p2[64];
		long pid = strtol(d->d_name, &end, 10);
		size_t k;

		if (*end || pid <= 0 || pid == getpid() ||
		    trail__registry_get(dfd, (pid_t)pid, &reg) ||
		    !trail__proc_alive((pid_t)pid, reg.start))
			continue;
		for (k = 0; k < S->ntried; k++)
			if (S->tried[k].pid == (pid_t)pid && S->tried[k].start == reg.start)
				break;
		if (k < S->ntried)
			continue;
		if (S->ntried == S->tried_cap) {
			size_t cap = S->tried_cap ? S->tried_cap * 2 : 64;
			void *nt = realloc(S->tried, cap * sizeof(*S->tried));

			if (!nt)
				break;
			S->tried = nt;
			S->tried_cap = cap;
		}
		S->tried[S->ntried].pid = (pid_t)pid;
		S->tried[S->ntried].start = reg.start;
		S->ntried++;
		snprintf(p2, sizeof(p2), "/proc/%ld", pid);
		if (stat(p2, &st) || st.st_uid != geteuid() || !reg.signal ||
		    !signal_caught((pid_t)pid, reg.signal) || !maps_libtrail((pid_t)pid))
			continue;
		send_cmd(S, (pid_t)pid, reg.signal, TRAIL_CTL_ATTACH);
	}
	closedir(dir);
}

/* ------------------------------------------------------------- priority */

/*
 * The drain must run when it is due. It needs little CPU (~12 % of one at
 * 240 MB/s), but on a machine the traced program keeps busy the scheduler
 * left it waiting 1.3 to 7 times its CPU time, seconds per run, and the
 * buffer filled: a busy server under function_graph lost up to 6 % of its
 * events at the default buffer, none with the recorder SCHED_FIFO
 * (doc/performance.md). So the recorder asks for SCHED_FIFO 1 where it may
 * (root, CAP_SYS_NICE, RLIMIT_RTPRIO), else for nice -10 (RLIMIT_NICE), else
 * runs as it was started. It sleeps between passes, and the kernel's RT
 * throttling bounds it anyway. The command gets the policy and nice value
 * trail was started with.
 */
static struct { int policy, nice; struct sched_param param; int saved; } sched_orig;

static const char *drain_priority(void)
{
	struct sched_param sp = {.sched_priority = 1};

	sched_orig.policy = sched_getscheduler(0);
	sched_getparam(0, &sched_orig.param);
	errno = 0;
	sched_orig.nice = getpriority(PRIO_PROCESS, 0);
	if (sched_orig.policy < 0 || errno)
		return NULL;
	sched_orig.saved = 1;
	if (sched_orig.policy != SCHED_OTHER)
		return NULL; /* the user chose: keep it */
	if (!sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		return "SCHED_FIFO 1";
	if (sched_orig.nice > -10 && !setpriority(PRIO_PROCESS, 0, -10))
		return "nice -10";
	return NULL;
}

/* In the command's process, before exec: as trail was started. */
static void priority_restore(void)
{
	if (!sched_orig.saved)
		return;
	sched_setscheduler(0, sched_orig.policy, &sched_orig.param);
	setpriority(PRIO_PROCESS, 0, sched_orig.nice);
}

/* ---------------------------------------------------------------- launch */

static int launch(struct session *S, const char *libtrail)
{
	char env_session[64], *preload = NULL;
	const char *old = getenv("LD_PRELOAD");
	int pfd[2], err = 0;
	ssize_t n;

	snprintf(env_session, sizeof(env_session), "%d:%d", (int)getpid(), S->memfd);
	if (asprintf(&preload, "%s%s%s", libtrail, old && *old ? " " : "",
		     old ? old : "") < 0)
		return -1;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		tool_err("pipe: %s", strerror(errno));
		free(preload);
		return -1;
	}
	S->child = fork();
	if (S->child < 0) {
		tool_err("fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		free(preload);
		S->child = 0;
		return -1;
	}
	if (S->child == 0) {
		sigset_t none;

		close(pfd[0]);
		for (size_t i = 0; i < sizeof(passed_sigs) / sizeof(passed_sigs[0]); i++)
			sigaction(passed_sigs[i], &passed_acts[i], NULL);
		priority_restore();
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setenv("TRAIL_SESSION", env_session, 1);
		setenv("LD_PRELOAD", preload, 1);
#if defined(__SANITIZE_ADDRESS__)
		{ /* an ASan build preloads an ASan libtrail */
			const char *ao = getenv("ASAN_OPTIONS");
			char *v = NULL;

			if (asprintf(&v, "%s%sverify_asan_link_order=0", ao ? ao : "",
				     ao && *ao ? ":" : "") > 0)
				setenv("ASAN_OPTIONS", v, 1);
		}
#endif
		execv(S->cmd_path, S->cmd);
		err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	free(preload);
	close(pfd[1]);
	n = read(pfd[0], &err, sizeof(err));
	close(pfd[0]);
	if (n == (ssize_t)sizeof(err)) {
		tool_err("cannot run %s: %s", S->cmd[0], strerror(err));
		waitpid(S->child, NULL, 0);
		S->child = 0;
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- finish */

/* The accounting of stream slot i as it stands (final if it exited). */
static void write_stream(struct session *S, uint32_t i)
{
	struct trail_stream st;
	struct trail_sec_stream ss;

	memcpy(&st, &S->streams[i], sizeof(st));
	memset(&ss, 0, sizeof(ss));
	ss.idx = i;
	ss.gen = st.gen;
	ss.pid = st.pid;
	ss.tid = st.tid;
	ss.level = st.level;
	ss.final = 1;
	ss.dropped = st.dropped;
	ss.overwritten = st.overwritten;
	ss.chunks = st.chunks;
	memcpy(ss.comm, st.comm, sizeof(ss.comm));
	ss.comm[15] = '\0';
	if (tfw_section(&S->out, TRAIL_SEC_STREAM, &ss, sizeof(ss), NULL, 0))
		return;
	/* the file's accounting: a later STREAM section of the same (slot,
	 * generation) replaces the earlier one */
	if (S->slot_written[i] && S->slot_gen[i] == ss.gen)
		S->lost_written -= S->slot_lost[i];
	S->slot_written[i] = 1;
	S->slot_gen[i] = ss.gen;
	S->slot_lost[i] = ss.dropped + ss.overwritten;
	S->lost_written += S->slot_lost[i];
}

static void write_streams(struct session *S)
{
	for (uint32_t i = 0; i < S->g.max_streams; i++) {
		uint32_t state = __atomic_load_n(&S->streams[i].state, __ATOMIC_ACQUIRE);

		if (state != TRAIL_SS_LIVE && state != TRAIL_SS_EXITED)
			continue;
		if (!S->stream_seen[i] && !S->streams[i].dropped && !S->streams[i].overwritten)
			continue;
		write_stream(S, i);
	}
}

/*
 * Discard mode: give the slots of threads that exited (and of dead
 * processes) back to the session, after writing their final accounting.
 * Their chunks still in the arena carry (slot, generation), and a new
 * owner gets a new generation, so nothing is mixed up. Not in overwrite
 * mode, where reclaimers may still credit an old slot.
 */
static void recycle_streams(struct session *S, int dead_proc)
{
	if (S->overwrite)
		return;
	for (uint32_t i = 0; i < S->g.max_streams; i++) {
		struct trail_stream *st = &S->streams[i];
		uint32_t state = __atomic_load_n(&st->state, __ATOMIC_ACQUIRE);

		if (state != TRAIL_SS_EXITED &&
		    !(state == TRAIL_SS_LIVE && dead_proc >= 0 &&
		      __atomic_load_n(&st->proc, __ATOMIC_RELAXED) == (uint32_t)dead_proc))
			continue;
		if (!out_err(S))
			write_stream(S, i);
		S->stream_seen[i] = 0;
		/* CAS: a live slot of a dead process may still be in CLAIMING
		 * by nobody; only the states we saw are released */
		__atomic_compare_exchange_n(&st->state, &state, TRAIL_SS_FREE, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}

static void finish(struct session *S)
{
	struct trail_sec_end end;
	uint32_t n;

	__atomic_store_n(&S->hdr->stopping, 1, __ATOMIC_RELEASE);
	check_procs(S);
	if (!out_err(S) && !S->overwrite)
		drain(S);
	detach_all(S);
	check_procs(S);
	if (!out_err(S))
		drain(S);
	n = nprocs(S);
	for (uint32_t i = 0; i < n; i++)
		if (!out_err(S) && (S->pt[i].dead || S->pt[i].stuck))
			salvage(S, i, S->pt[i].dead);
	if (!out_err(S) && S->overwrite)
		drain(S);
	for (uint32_t i = 0; i < n && !out_err(S); i++)
		if (S->pt[i].announced)
			write_proc(S, i, __atomic_load_n(&S->procs[i].state, __ATOMIC_ACQUIRE));
	write_events(S);
	write_modules(S);
	write_streams(S);
	add_sync(S);
	write_clock(S);
	memset(&end, 0, sizeof(end));
	end.chunks = S->chunks;
	end.events = S->ev_total;
	end.nostream_lost = __atomic_load_n(&S->hdr->nostream_lost, __ATOMIC_RELAXED);
	end.noevent_lost = __atomic_load_n(&S->hdr->noevent_lost, __ATOMIC_RELAXED);
	end.bad_chunks = S->bad_chunks;
	end.complete = 1;
	end.procs_refused = procs_refused(S);
	end.graph_unhooked = __atomic_load_n(&S->hdr->graph_unhooked, __ATOMIC_RELAXED);
	tfw_section(&S->out, TRAIL_SEC_END, &end, sizeof(end), NULL, 0);
}

static int write_failed(struct session *S, int err)
{
	char a[32], b[32];

	tool_err("%s: %s after %s events; recording stopped, the file keeps the "
		 "%s written before the error",
		 S->output, strerror(-err), tool_thousands(S->ev_total, a, sizeof(a)),
		 tool_human_bytes(S->out.off, b, sizeof(b)));
	return 1;
}

/* The closing line: what the file holds, with the file's own accounting. */
static void summary(struct session *S)
{
	char a[32], b[32], c2[32];
	uint64_t lost = S->lost_written + __atomic_load_n(&S->hdr->nostream_lost, __ATOMIC_RELAXED);

	if (S->quiet)
		return;
	fprintf(stderr, "trail: %s events (%s) from %u process%s in %s, %s lost%s\n",
		tool_thousands(S->ev_total, a, sizeof(a)),
		tool_human_bytes(S->out.off, b, sizeof(b)), nprocs(S),
		nprocs(S) == 1 ? "" : "es", S->output,
		tool_thousands(lost, c2, sizeof(c2)),
		lost && !S->overwrite ? " (buffer full: try a larger -b)" : "");
	if (S->bad_chunks)
		tool_warn("%llu malformed chunks were refused", (unsigned long long)S->bad_chunks);
	if (procs_refused(S))
		tool_warn("%llu processes could not join the session (more than %u)",
			  (unsigned long long)procs_refused(S), S->g.max_procs);
}

/* A launched command that recorded nothing at all: say why (its events
 * were not there, or libtrail never loaded). 1: that is an error. */
static int nothing_recorded(struct session *S, const char *libtrail)
{
	uint32_t n = nprocs(S), hooked = 0;

	if (!*S->cmd || !S->child)
		return 0;
	if (!n) {
		tool_err("no process of %s joined the recording: libtrail (%s) was not loaded "
			 "(a static or setuid program, a bad TRAIL_LIBRARY, or LD_PRELOAD refused)",
			 S->cmd[0], libtrail);
		return 1;
	}
	for (uint32_t i = 0; i < n; i++)
		hooked += S->procs[i].functions;
	if (S->user_events || hooked || S->ev_total)
		return 0;
	/* with --allow-unknown, absent events were asked for: a warning */
	(S->allow_unknown ? tool_warn : tool_err)(
		"nothing was recorded: no process that ran (%u) %s", n,
		S->tracer ? "had a function matching the selection"
			  : "declared an event matching the -e patterns");
	return !S->allow_unknown;
}

/* trail's exit status: its own error first, else the command's (as time
 * and perf record do): its exit status, or 128 + the signal that killed it;
 * a command left running after a stop signal: 128 + that signal. */
static int command_result(struct session *S, int own)
{
	if (S->child && !S->child_done) {
		int st;

		if (waitpid(S->child, &st, WNOHANG) == S->child) {
			S->child_done = 1;
			S->child_status = st;
		}
	}
	if (S->child && !S->child_done) {
		if (stop_signal)
			tool_warn("%s (pid %d) did not exit within %llu s of %s: it goes on, "
				  "untraced", S->cmd[0], (int)S->child,
				  STOP_GRACE_NS / 1000000000ull, strsignal(stop_signal));
		else
			tool_warn("%s (pid %d) goes on, untraced", S->cmd[0], (int)S->child);
		return own ? own : stop_signal ? 128 + stop_signal : 1;
	}
	if (S->child_done && WIFSIGNALED(S->child_status) &&
	    WTERMSIG(S->child_status) != SIGINT && WTERMSIG(S->child_status) != SIGTERM &&
	    WTERMSIG(S->child_status) != stop_signal)
		tool_warn("%s was killed by signal %d (%s)", S->cmd[0],
			  WTERMSIG(S->child_status), strsignal(WTERMSIG(S->child_status)));
	if (own)
		return own;
	if (!S->child_done)
		return 0; /* -P, -a: stopping is the normal end */
	if (WIFSIGNALED(S->child_status))
		return 128 + WTERMSIG(S->child_status);
	return WIFEXITED(S->child_status) ? WEXITSTATUS(S->child_status) : 1;
}

/* ---------------------------------------------------------------- main */

static int record(struct session *S, int argc, char **argv)
{
	struct trail_file_hdr fh;
	struct sigaction sa;
	const char *libtrail = NULL;
	struct opt_parser op;
	int c, r, rc = 1, stopping = 0;
	uint64_t last_procs = 0, last_status = 0, last_sync = 0, last_recycle = 0, grace_end = 0;

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
	S->memfd = -1;
	S->nest = -1;
	S->events = calloc((size_t)argc, sizeof(char *));
	S->pids = calloc((size_t)argc, sizeof(pid_t));
	if (!S->events || !S->pids)
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
	if (!S->nevents && !S->tracer)
		return usage_err("%s", "no events selected: give -e EVENT (e.g. -e 'app:*' or -e all) or -p TRACER");
	if (S->nfuncs && !S->tracer)
		return usage_err("%s", "-l, -n and -g select functions for a tracer: give -p function or -p function_graph");
	if (S->nest >= 0 && !S->tracer)
		return usage_err("%s", "--nest limits a tracer: give -p function or -p function_graph");
	if (S->ntids && !S->tracer)
		return usage_err("%s", "--tid selects threads for a tracer: give -p function or -p function_graph");
	if (S->ntids && !S->npids)
		return usage_err("%s", "--tid selects threads of running processes: give -P PID");
	if ((S->max_depth || S->thresh_ns || S->retval) &&
	    (!S->tracer || strcmp(S->tracer, "function_graph")))
		return usage_err("%s", "--max-graph-depth, --graph-time-thresh and --retval go with -p function_graph");
	for (int i = 0; i < S->nfuncs; i++)
		if (S->funcs[i][1] == 'g' && strcmp(S->tracer, "function_graph"))
			return usage_err("-g %s: graph roots go with -p function_graph "
					 "(-l limits the function tracer)", S->funcs[i] + 3);
	if (!S->buffer_given)
		S->buffer_bytes = default_buffer();
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
		if (!S->allow_unknown && S->nevents) {
			r = elfscan_program(S->cmd_path, collect_event, &k, err, sizeof(err));
			if (r == -ENOEXEC) {
				/* a script: what it runs is known only when it runs */
				r = 0;
			} else if (r < 0) {
				tool_err("%s", err);
				free_known(&k);
				return 1;
			} else {
				r = check_events(S, &k, S->cmd_path);
			}
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
		for (int i = 0; i < S->npids; i++)
			if (check_pid(S, S->pids[i], &S->sigs[i]))
				return 1;
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
	{
		const char *why;

		S->clock = trail__clock_choose(S->clock_want, &why);
		if (S->clock == TRAIL_CLOCK_NONE) {
			tool_err("-C %s: %s", S->clock_want, why);
			return 1;
		}
	}
	if (fit_memory(S) || arena_create(S))
		goto out;
	S->priority = drain_priority();
	/* from the moment the output exists, a stop signal finishes it */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	r = tfw_open(&S->out, S->output);
	if (r == -EBUSY) {
		tool_err("another trail record is writing %s (its %s.part is locked): "
			 "choose another -o", S->output, S->output);
		goto out;
	} else if (r) {
		tool_err("cannot write %s: %s", S->output, strerror(-r));
		goto out;
	}

	memset(&fh, 0, sizeof(fh));
	memcpy(fh.magic, TRAIL_FILE_MAGIC, 8);
	fh.major = TRAIL_FILE_MAJOR;
	fh.minor = TRAIL_FILE_MINOR;
	fh.endian = 1;
	fh.hdr_size = sizeof(fh);
	fh.session_id = S->hdr->session_id;
	fh.flags = S->hdr->flags;
	fh.clock = S->clock;
	fh.chunk_size = S->g.chunk_size;
	fh.ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	{
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		fh.created_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	}
	add_sync(S);
	if (tfw_header(&S->out, &fh))
		goto write_error;
	write_info(S, *S->cmd ? argc - optind : 0, S->cmd);
	write_clock(S);
	if (out_err(S))
		goto write_error;

	S->tty = isatty(2);
	if (stop_signal) { /* asked to stop before anything ran */
		tfw_finish(&S->out, 0);
		rc = 128 + stop_signal;
		goto out;
	}

	if (S->all) {
		attach_new(S);
		if (!S->quiet)
			fprintf(stderr, "trail: recording every process of yours with libtrail "
				"(%zu now, new ones as they start); Ctrl-C to stop\n", S->ntried);
	} else if (*S->cmd ? launch(S, libtrail) : attach_all(S, S->sigs)) {
		/* nothing ran: an existing output file stays as it was */
		finish(S);
		tfw_finish(&S->out, 0);
		goto out;
	}

	for (;;) {
		uint64_t now = trail__mono_ns();
		uint32_t n;

		if (out_err(S))
			break;
		if (stop_signal && !stopping) {
			/* a command goes on being recorded while it exits: it gets
			 * the signal (unless the terminal sent it to both of us)
			 * and STOP_GRACE_NS to act on it */
			stopping = 1;
			if (!S->child || S->child_done)
				break;
			if (stop_code != SI_KERNEL)
				kill(S->child, stop_signal);
			grace_end = now + STOP_GRACE_NS;
		}
		if (stopping && (stop_count > 1 || now >= grace_end))
			break;
		if (S->child && !S->child_done) {
			int st;

			if (waitpid(S->child, &st, WNOHANG) == S->child) {
				S->child_done = 1;
				S->child_status = st;
			}
		}
		if (S->child_done)
			break;
		if (S->npids && now - last_procs > 100000000ull) {
			int alive = 0;

			for (int i = 0; i < S->npids; i++)
				if (kill(S->pids[i], 0) == 0)
					alive = 1;
			if (!alive)
				break;
		}
		n = S->overwrite ? 0 : drain(S);
		if (now - last_recycle > 20000000ull) {
			recycle_streams(S, -1);
			last_recycle = now;
		}
		if (now - last_procs > 100000000ull) {
			if (S->all)
				attach_new(S);
			check_procs(S);
			if (!S->overwrite)
				write_events(S);
			last_procs = now;
		}
		/* a sync point 100 ms in, then every second, each written at
		 * once: a file cut short still maps its clock well */
		if (now - last_sync > (S->nsyncs < 2 ? 100000000ull : 1000000000ull)) {
			add_sync(S);
			write_clock(S);
			last_sync = now;
		}
		if (now - last_status > 250000000ull) {
			status_line(S, 0);
			last_status = now;
		}
		if (n < S->g.nchunks / 8) {
			struct timespec ts = {0, n ? 1000000 : 5000000};
			nanosleep(&ts, NULL);
		}
	}
	if (out_err(S)) {
		/* stop the writers, keep what is on disk */
		detach_all(S);
		status_line(S, 1);
		write_failed(S, out_err(S));
		tfw_finish(&S->out, 1);
	} else {
		finish(S);
		status_line(S, 1);
		r = tfw_finish(&S->out, 1);
		if (r)
			write_failed(S, r);
		else
			rc = 0;
	}
	if (!rc) {
		summary(S);
		rc = nothing_recorded(S, libtrail);
	}
	rc = command_result(S, rc);
	goto out;
write_error:
	write_failed(S, out_err(S));
	tfw_finish(&S->out, 1);
out:
	return rc;
}

/* Everything a session holds, on every way out of record(). */
static void session_free(struct session *S)
{
	if (S->out.part)
		tfw_finish(&S->out, 0);
	for (int i = 0; S->funcs && i < S->nfuncs; i++)
		free(S->funcs[i]);
	for (size_t i = 0; i < S->nsymc; i++)
		free(S->symc[i].path);
	free(S->funcs);
	free(S->events);
	free(S->pids);
	free(S->sigs);
	free(S->cmd_path);
	free(S->tried);
	free(S->symc);
	free(S->mods_gone);
	free(S->chunkbuf);
	free(S->event_done);
	free(S->stream_seen);
	free(S->pt);
	free(S->slot_lost);
	free(S->slot_gen);
	free(S->slot_written);
	free(S->chunk_mapped);
	free(S->pending);
	if (S->base && S->base != MAP_FAILED)
		munmap(S->base, S->g.size);
	if (S->memfd >= 0)
		close(S->memfd);
	free(S);
}

int cmd_record(int argc, char **argv)
{
	struct session *S = calloc(1, sizeof(*S));
	int rc;

	if (!S)
		return 1;
	S->memfd = -1;
	S->out.fd = -1;
	rc = record(S, argc, argv);
	session_free(S);
	return rc;
}
