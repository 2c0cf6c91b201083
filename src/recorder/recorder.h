/* SPDX-License-Identifier: MIT */
/*
 * recorder.h - the consumer side of a recording session: what `trail
 * record` runs between parsing its options and printing its summary.
 *
 * A recorder owns the session arena (a sealed memfd the traced processes
 * map), gets processes into it (launching a command with libtrail
 * preloaded, or attaching to running ones by signal), drains published
 * chunks into the trace file while they run, and at the end detaches
 * everyone, collects what is left (including the committed part of chunks
 * owned by processes that died) and writes the final accounting.
 *
 * The caller calls, in order:
 *
 *   trail_recorder_create()           size and create the arena
 *   trail_recorder_raise_priority()   optional: the drain's scheduling
 *   trail_recorder_open()             the trace file (FILE.part)
 *   trail_recorder_begin()            its header, INFO and first CLOCK
 *   trail_recorder_launch() | trail_recorder_attach() | trail_recorder_attach_new()
 *   loop: trail_recorder_reap(), trail_recorder_poll(), trail_recorder_nap()
 *   trail_recorder_finish()           (or trail_recorder_detach() after a
 *                                      write error)
 *   trail_recorder_close()            FILE.part becomes FILE (or is removed)
 *   trail_recorder_free()
 *
 * The recorder never prints nor exits: errors and warnings go to the log
 * callback of its options, worded for a user, and every call returns
 * whether it worked. Signals stay the caller's: it decides when to stop
 * (it owns the stop/child handlers and the grace period), and passes a
 * child_setup hook to trail_recorder_launch() to give the command the
 * signal dispositions it should start with.
 */
#ifndef TRAIL_RECORDER_RECORDER_H
#define TRAIL_RECORDER_RECORDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct trail_recorder;

enum trail_recorder_level {
	TRAIL_RECORDER_ERR,  /* the call that logged it fails */
	TRAIL_RECORDER_WARN, /* it goes on */
	TRAIL_RECORDER_INFO, /* progress a user may want to see (attached to ...) */
};

/* msg: one line, no newline, no "trail: " prefix. */
typedef void (*trail_recorder_log_fn)(void *ctx, enum trail_recorder_level level,
				      const char *msg);

/*
 * What to record and how. The arrays are the caller's and must outlive
 * the recorder (INFO repeats them, attaching reads pids).
 */
struct trail_recorder_opts {
	size_t sz; /* sizeof(struct trail_recorder_opts) */

	/* the enable spec: -e patterns, then "@l GLOB"-style function lines
	 * (funcs[0 .. nfuncs_user) as the user gave them, then what the
	 * checks added) and the tracer's options */
	char *const *events;
	int nevents;
	char *const *funcs;
	int nfuncs, nfuncs_user;
	const char *tracer; /* "function", "function_graph" or NULL */
	uint32_t max_depth, retval;
	uint32_t args; /* function_graph entries with their arguments */
	uint32_t no_libcall; /* the program's calls into libraries not traced */
	uint32_t nest_libcall; /* the libraries' calls into others traced too */
	uint64_t thresh_ns;
	int nest; /* -1: none */
	const long *tids;
	int ntids;

	/* the buffer */
	uint64_t buffer_bytes;
	int buffer_given;   /* else a default that may shrink to fit memory */
	uint32_t chunk_size;
	int overwrite;      /* flight recorder */
	uint32_t block_us;  /* blocking mode, ~0u: inf, 0: drop */
	uint32_t clock;     /* TRAIL_CLOCK_* (trail__clock_choose()) */

	/* who: a command (cmd, NULL-terminated, found at cmd_path), or pids */
	char *const *cmd;
	const char *cmd_path;
	const pid_t *pids;
	int npids;

	trail_recorder_log_fn log;
	void *log_ctx;
	/* how sizes read in messages ("1.5 KiB"); NULL: plain bytes */
	const char *(*fmt_bytes)(uint64_t v, char *buf, size_t n);

	/* the histogram area (hist triggers' tables, arena.h), 0: none */
	uint64_t hist_bytes;

	/* the session rewrites code (function tracers, probes, USDT): every
	 * thread of a process must take SIGTRAP and the control signal, and
	 * is made to through ptrace where it blocks them (threads.c) */
	int patches;

	/* tracing starts off (ftrace's tracing_on = 0): until a traceon
	 * trigger, nothing is recorded */
	int start_paused;

	/* a session that patches code, joining every process (-a):
	 * libtrail-decoder.so, loaded (trail_recorder_inject) into a process
	 * that does not map it before it is asked to join, for its
	 * functions without patchable entries; NULL: not loaded */
	const char *decoder;
};

/* The default buffer size for this machine (arena.c says why). */
uint64_t trail_recorder_default_buffer(void);

/* Size the buffer to the memory and file size limit left, create, seal
 * and map the arena. 0 with *out set (free it with trail_recorder_free),
 * or -errno, logged. */
int trail_recorder_create(const struct trail_recorder_opts *o, struct trail_recorder **out);
/* NULL-safe. Removes a FILE.part not closed yet. */
void trail_recorder_free(struct trail_recorder *R);

/* Ask for a real-time (else a higher) priority for the drain; the command
 * launched later gets the one trail was started with. Returns what was
 * obtained ("SCHED_FIFO 1", "nice -10") for INFO, or NULL. */
const char *trail_recorder_raise_priority(struct trail_recorder *R);

/* Open the trace file: 0, -EBUSY (another recorder writes FILE.part) or
 * -errno. Not logged: the caller words it. */
int trail_recorder_open(struct trail_recorder *R, const char *path);
/* The file header, INFO and first CLOCK sections: 0 or the write error. */
int trail_recorder_begin(struct trail_recorder *R);

/* fork + exec opts.cmd with libtrail preloaded into the session. The child
 * calls child_setup(ctx) first (to restore signal dispositions). 0 or -1,
 * logged. */
int trail_recorder_launch(struct trail_recorder *R, const char *libtrail,
			  void (*child_setup)(void *ctx), void *ctx);
/* Attach to every opts.pids process (sigs[i]: its control signal), one
 * after the other, waiting for each to join. 0 or -1, logged; INFO says
 * what each attached. */
int trail_recorder_attach(struct trail_recorder *R, const int *sigs);
/* Ask every registered process of the user not asked yet to join
 * (asynchronous). Returns how many were asked so far. */
size_t trail_recorder_attach_new(struct trail_recorder *R);

/* Load lib (libtrail) into process pid, which does not have it: its main
 * thread made to call dlopen through ptrace, in a way it survives trail
 * dying meanwhile (inject.c). 0, or -errno with err a one-line reason:
 * -EPERM (ptrace refused: the reason, naming kernel.yama.ptrace_scope
 * when it is that, or the process's tracer), -ENOENT (no dlopen in its C
 * library: a static program), -ETIMEDOUT (dlopen did not return in 5 s:
 * left to finish), -EAGAIN (the process is stopped), -ESRCH (it ended),
 * -ESTALE (it ran a new program, exec, meanwhile: nothing done, the
 * caller decides again), -EINPROGRESS (it is still in its dynamic
 * loader, starting: nothing done, to be tried again a little later),
 * -EIO (dlopen failed in the process). The caller holds its own stop
 * signals meanwhile. */
int trail_recorder_inject(pid_t pid, const char *lib, char *err, size_t errlen);
/* Every thread of pid made able to take SIGTRAP and the control signal
 * ctlsig (threads.c): those that block them are opened through ptrace.
 * 0 (*opened counts them, if not NULL), or -errno with err set (one
 * line: the thread, what it blocks, why ptrace could not open it). */
int trail_recorder_open_signals(pid_t pid, int ctlsig, int *opened, char *err, size_t errlen);
/* Why ptrace refused pid (e: the errno): another tracer, Yama's rule, or
 * strerror(e), in buf. */
void trail_recorder_ptrace_why(pid_t pid, int e, char *buf, size_t len);

/* The launched command: reap it if it exited (WNOHANG). 1: it is done. */
int trail_recorder_reap(struct trail_recorder *R);
/* Its pid (0: none, or it could not run), *done and, if done, its wait
 * *status. No wait. */
pid_t trail_recorder_child(const struct trail_recorder *R, int *done, int *status);

/* One pass of the consumer at time now (trail__mono_ns()): drain published
 * chunks, recycle exited streams, announce new processes and salvage dead
 * ones (all_new: ask new ones to join first, trail_recorder_attach_new()),
 * write clock syncs, each on its period. Returns the chunks drained. */
uint32_t trail_recorder_poll(struct trail_recorder *R, uint64_t now, int all_new);
/* Sleep as the drain's pace wants after a pass that drained n chunks. */
void trail_recorder_nap(struct trail_recorder *R, uint32_t n);

/* What the buffer holds now (the snapshot trigger's file: published
 * chunks, the committed part of those writers own), into a trace file of
 * its own at path, while the recording goes on. 0 or -errno (not said). */
int trail_recorder_snapshot_file(struct trail_recorder *R, const char *path);

/* The trace file's first write error (-errno), or 0. */
int trail_recorder_error(const struct trail_recorder *R);
/* Ask every process to detach and wait for them (logged: those that did
 * not). */
void trail_recorder_detach(struct trail_recorder *R);
/* Stop: detach everyone, drain and salvage what is left, write the final
 * PROC, STREAM, CLOCK and END sections. */
void trail_recorder_finish(struct trail_recorder *R);
/* A session's arena found in a core dump (fd, the segment at off, len
 * bytes: the process's mapping of it), as a recorder of its own: o gives
 * what the file says of the recording (events, command; its buffer and
 * mode are the arena's). -EPROTO with *why when it is no arena read here
 * (damaged, another version, truncated). Then trail_recorder_open,
 * trail_recorder_begin, trail_recorder_finish_offline (every process
 * dead: the salvage of a killed one's), trail_recorder_close. */
int trail_recorder_from_core(const struct trail_recorder_opts *o, int fd, uint64_t off,
			     uint64_t len, struct trail_recorder **out, const char **why);
void trail_recorder_finish_offline(struct trail_recorder *R);
/* ... the process that dumped it, pid, ran exe (the core's notes) */
void trail_recorder_core_exe(struct trail_recorder *R, uint32_t pid, const char *exe);
/* keep: FILE.part becomes FILE; else it is removed. 0 or -errno. */
int trail_recorder_close(struct trail_recorder *R, int keep);

struct trail_recorder_stats {
	uint64_t events, bytes, chunks; /* written to the file */
	uint64_t bad_chunks;            /* malformed chunks refused */
	uint64_t lost;                  /* as the file counts them so far */
	uint64_t file_bytes;            /* whole sections written */
	uint32_t procs;                 /* processes that joined */
	uint32_t max_procs;
	uint64_t procs_refused;         /* could not join: table full */
	uint32_t user_events;           /* events described, not a tracer's own */
};
void trail_recorder_stats(const struct trail_recorder *R, struct trail_recorder_stats *st);
/* Events lost so far, counted as the file will count them once finished
 * (walks the stream table: for a status line, not per event). */
uint64_t trail_recorder_live_lost(const struct trail_recorder *R);
/* Functions hooked, over every process that joined; *traps (if not
 * NULL): how many of them a breakpoint enters. */
uint32_t trail_recorder_hooked(const struct trail_recorder *R, uint32_t *traps);

/* The histograms the hist triggers keep in the processes, as they stand
 * now: fn(arg, h) for each (the tables made for one trigger merged).
 * Returns how many. h->text: the trigger's text; h->e[0 .. n): its
 * entries (keys: hist.h's key words), valid during the call. */
struct trail_htab_entry;
struct trail_recorder_hist {
	const char *event, *name;
	char text[1024];
	uint32_t kwords, nvals, nextra, naux;
	size_t n;
	struct trail_htab_entry *e;
	const uint64_t *aux;          /* naux words: the table's (hist.h) */
	uint64_t hits, dropped, more; /* more: entries past what was read */
};
int trail_recorder_hists(struct trail_recorder *R,
			 void (*fn)(void *arg, const struct trail_recorder_hist *h), void *arg);
/* The description (meta blob) of the session's event "SYS:EVENT" copied
 * into buf (n bytes): its size, or -1 (no such event yet). */
int trail_recorder_event_meta(const struct trail_recorder *R, const char *name, void *buf,
			      size_t n);
/* hist triggers that found no room for their table */
uint32_t trail_recorder_hist_nomem(const struct trail_recorder *R);
/* The session's histograms paused (TRAIL_HIST_PAUSE: updates skipped),
 * continued, or cleared (entries and counts zeroed: updates made while
 * it runs may be lost or half kept, as the kernel's :clear). The number
 * of tables. */
enum { TRAIL_HIST_CONT, TRAIL_HIST_PAUSE, TRAIL_HIST_CLEAR };
int trail_recorder_hist_control(struct trail_recorder *R, int what);

/* Does pid catch signal sig (SigCgt)? Does it map libtrail? (The checks
 * before attaching; detaching asks them too.) */
int trail_recorder_pid_catches(pid_t pid, int sig);
int trail_recorder_pid_maps_libtrail(pid_t pid);
/* Does pid map a file whose path contains name? */
int trail_recorder_pid_maps(pid_t pid, const char *name);

#endif /* TRAIL_RECORDER_RECORDER_H */
