/* SPDX-License-Identifier: MIT */
/*
 * mount.h - `trail mount DIR`: the recordings of this user's processes as
 * the kernel's tracefs, for echo and cat (doc/usage.md, "trail mount").
 *
 *   mount-fs.c      the FUSE file system: paths, files, reads and writes
 *   mount-inst.c    an instance: what it records (its events, filters,
 *                   triggers, tracer, buffer), the recorder that records
 *                   it, and its trace read back (trace, trace_pipe)
 *   mount-events.c  the events there are (the processes' and the kept
 *                   dynamic and synthetic events), their format files,
 *                   and the error_log
 *
 * An instance is a session of the session model (src/session): each
 * change written to one becomes the bootconfig file of a `trail record
 * -a` (per_pid/PID: -P PID) the mount runs, in flight-recorder mode,
 * started again with the new file; `trace` is that recorder's snapshot
 * (arena.h's snapshots count, what `trail snapshot` asks) read with the
 * report's text output. One lock (mnt.lock) guards everything; blocking
 * reads (trace_pipe) drop it while they wait.
 */
#ifndef TRAIL_TOOL_MOUNT_H
#define TRAIL_TOOL_MOUNT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MNT_ERRLOG 16      /* error_log keeps the last 16, as the kernel */
#define MNT_MARKERS 4096   /* trace_marker lines an instance keeps */
#define MNT_WRITE_MAX 4096 /* one write to a control file, as the kernel */

/* An event the mount knows (its processes', or a kept definition's). */
struct mnt_ev {
	char *group, *name;
	uint32_t id;
	void *blob; /* its description (meta.h), NULL: none found yet */
	size_t size;
	int kind;   /* 0 static, 'p' a kept probe, 's' a synthetic event */
};

/* What an instance sets for one event. */
struct mnt_evset {
	char *name; /* GROUP:EVENT */
	int enabled;
	char *filter;
	char **trig;
	int ntrig;
};

struct mnt_marker {
	uint64_t ns;
	pid_t pid;
	char comm[16];
	char *text;
};

/* function-name lists: set_ftrace_filter, set_ftrace_notrace,
 * set_graph_function */
enum { MNT_FL_FILTER, MNT_FL_NOTRACE, MNT_FL_GRAPH, MNT_FL_N };

struct mnt_inst {
	char *name;  /* "" the top, else the instance's name or the pid */
	pid_t pid;   /* per_pid/PID, else 0 */
	int perpid;
	struct mnt_evset *ev;
	int nev;
	char *tracer; /* NULL: nop */
	char **fl[MNT_FL_N];
	int nfl[MNT_FL_N];
	int tracing_on;
	unsigned buffer_kb;
	/* the recorder of the present settings */
	pid_t child;
	unsigned gen;
	char *out;      /* its trace file */
	void *hdr;      /* its arena's header, mapped (tracing_on, snapshots) */
	char **old;     /* trace files of earlier settings, oldest first */
	int nold;
	uint64_t mark_ns; /* read up to here: trace_pipe consumed, trace cleared */
	struct mnt_marker mk[MNT_MARKERS];
	unsigned nmk, mkhead;
	int opens;     /* open files: rmdir refused meanwhile */
};

struct mnt {
	pthread_mutex_t lock;
	char *dir;   /* the mount point */
	char *work;  /* private directory: bootconfig files, traces */
	char *self;  /* the trail binary */
	struct mnt_inst **inst; /* [0]: the top */
	int ninst;
	struct mnt_ev *evs;
	int nevs;
	uint32_t next_id;
	uint64_t scanned_ns;
	struct mnt_seen *seen;
	int nseen;
	char *errlog[MNT_ERRLOG];
	unsigned nerr;
};
extern struct mnt mnt;

/* mount-fs.c (calls the two below) */
int mnt_run(const char *dir, int foreground, int debug);

/* mount-events.c (calls nothing of the mount: `mnt` is defined there) */
struct mnt_evset *mnt_evset(struct mnt_inst *I, const char *name, int make);
void mnt_scan(int force);
struct mnt_ev *mnt_event(const char *group, const char *name);
int mnt_groups(char ***out); /* sorted, distinct: free the array only */
char *mnt_format(struct mnt_ev *e);
/* an error for error_log: the subsystem, the message, the input and
 * the caret's position in it (pos < 0: none) */
void mnt_error(const char *sys, const char *msg, const char *input, long pos);
char *mnt_errlog_text(void);
/* dynamic_events, function_events, synthetic_events: their text, and a
 * write (one line) to them; trunc: the file is emptied first */
char *mnt_dyn_text(int functions);
int mnt_dyn_write(const char *line, int functions);
int mnt_dyn_clear(int functions);
char *mnt_synth_text(void);
int mnt_synth_write(const char *line);
int mnt_synth_clear(void);
int mnt_event_in_use(const char *group, const char *name);

/* mount-inst.c (calls mount-events.c) */
/* Run fn(arg) on the engine's thread, the mount's main thread (what starts
 * recorders: their parent death signal follows the thread that forked
 * them); its result. mnt_engine_init() names the thread, which then runs
 * mnt_engine_run() until mnt_engine_quit(). */
int mnt_engine(int (*fn)(void *), void *arg);
void mnt_engine_init(void);
void mnt_engine_run(void);
void mnt_engine_quit(void);
struct mnt_inst *mnt_inst_new(const char *name, pid_t pid);
void mnt_inst_free(struct mnt_inst *I);
struct mnt_inst *mnt_inst_find(const char *name, int perpid);
/* the settings changed: the recorder started again (or stopped) */
int mnt_apply(struct mnt_inst *I);
void mnt_stop(struct mnt_inst *I);
/* trace: the text of what the instance holds; pipe: only what came
 * after the mark, up to a settled time, and the mark moved there */
char *mnt_trace_text(struct mnt_inst *I, int pipe, size_t *len);
void mnt_trace_clear(struct mnt_inst *I);
void mnt_marker(struct mnt_inst *I, pid_t pid, const char *text, size_t len);
char *mnt_hist_text(struct mnt_inst *I, const char *event);
int mnt_set_tracing_on(struct mnt_inst *I, int on);

#endif /* TRAIL_TOOL_MOUNT_H */
