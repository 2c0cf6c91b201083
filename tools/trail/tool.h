/* SPDX-License-Identifier: MIT */
/*
 * tool.h - what the trail subcommands share: messages, option helpers.
 * Only tools/ prints and exits; exit status 0 ok, 1 runtime error,
 * 2 usage error (as in trace-cmd).
 */
#ifndef TRAIL_TOOL_H
#define TRAIL_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define EXIT_USAGE 2

extern int tool_color;

/* "trail: <message>" on stderr */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "trail <cmd>: <message>" + "Try 'trail <cmd> --help'." */
void tool_usage_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The ftrace error_log style: the input, a caret under byte `pos`, the
 * message. */
/* A session's messages (src/session/session.h's diag), as every trail
 * message says them; cmd: the command's name, for usage errors */
struct trail_diag_msg;
void tool_diag(void *cmd, const struct trail_diag_msg *m);
void tool_caret(const char *what, const char *input, size_t pos,
		const char *msg);

/* "123", "10ms", "2s" -> nanoseconds */
int tool_parse_duration(const char *s, uint64_t *ns);
/* A decimal number from min to max, digits only (no sign, no space): 0,
 * -EINVAL, or -ERANGE outside the bounds. With end, the digits may be
 * followed by more (*end: where they stop); without, they are the
 * whole string. */
int tool_parse_ulong(const char *s, char **end, unsigned long min,
		     unsigned long max, unsigned long *v);
/* A process (or thread) id: tool_parse_ulong from 1 to pid_t's largest. */
int tool_parse_pid(const char *s, char **end, pid_t *pid);
/* The PID given to option opt ("-P") of subcommand cmd: 0, or EXIT_USAGE
 * after the usage error is reported. */
int tool_pid_arg(const char *cmd, const char *opt, const char *s, pid_t *pid);
/* 1536 -> "1.5 KiB" */
const char *tool_human_bytes(uint64_t v, char *buf, size_t n);
/* 1234567 -> "1,234,567" */
const char *tool_thousands(uint64_t v, char *buf, size_t n);

/* Where libtrail.so.1 is: $TRAIL_LIBRARY, next to the trail binary
 * (../lib*), the build tree, the install dir. NULL if not found. */
const char *tool_libtrail_path(void);
/* libtrail-decoder.so beside it (src/arch/arch.h), or NULL */
const char *tool_decoder_path(void);
/* trail__clock_choose(want), auto's measured answer kept for this boot in
 * the user's registry directory (file "clock": BOOT_ID tsc|mono), so that
 * recorders started at once on a loaded machine agree (a process can only
 * be recorded with one clock at a time). */
uint32_t tool_clock_choose(const char *want, const char **why);

/* A program by name, as execvp finds it (a name with a '/' is a path,
 * else PATH is searched): a malloc'd path, or NULL with *why the reason
 * ("command not found", "is a directory", "not a regular file", ...).
 * need_exec: it must be executable (to run it), else readable (to read
 * it). */
char *tool_find_file(const char *name, int need_exec, const char **why);

int cmd_record(int argc, char **argv);
/* What cmd_record calls on a period while it records (trail hist -P's
 * live view), when fn is set. */
struct trail_recorder;
struct record_live {
	void (*fn)(struct trail_recorder *R, void *arg);
	void *arg;
	uint64_t period_ns;
};
extern struct record_live record_live;
int cmd_report(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bootconfig(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_timerlat(int argc, char **argv);
int cmd_osnoise(int argc, char **argv);
int cmd_rv(int argc, char **argv);
/* report --refcount SPEC (refcount.c): exit status */
int report_refcount(const char *path, const char *spec);
/* record -p timerlat|osnoise: the session records `trail TRACER emit CMD`
 * (*out, the command to launch); 0, or an exit status */
struct trail_session;
int latency_record(struct trail_session *S, char **cmd, char ***out);
/* Can the registry directory be read (a missing one can: nothing
 * registered yet)? 0, or -1 with its path and why said. */
int tool_registry_usable(void);
/* An output stream on fd (wfile.c) that keeps the errno of a failed
 * write, for report and export to name: name says the output in messages
 * ("standard output", a path). fd is closed with it unless it is 0-2. */
struct tool_wfile {
	FILE *f;
	int fd, err;
	const char *name;
	FILE *orig; /* (main's: the stdout it stands for) */
};
/* 0, or -1 with errno. */
int tool_wfile_open(struct tool_wfile *w, int fd, const char *name);
/* Flush and close: 0, or -1 with "trail: CMD: writing NAME: REASON" said
 * ("trail: writing ..." with CMD ""; not for EPIPE: a reader that left,
 * as `| head` does; nor with CMD NULL, an output given up). */
int tool_wfile_close(struct tool_wfile *w, const char *cmd);
int cmd_probe(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_mount(int argc, char **argv);
/* Each trail session process pid records into (the arenas it maps):
 * fn(arg, where it is mapped, its memfd's inode, its header read through
 * /proc/PID/mem); fn's non-zero stops the walk. How many there were, or
 * -1 (errno: pid's maps unreadable). */
struct trail_arena_hdr;
int tool_arenas(pid_t pid, int (*fn)(void *arg, unsigned long lo, ino_t ino,
				     const struct trail_arena_hdr *h), void *arg);
int cmd_umount(int argc, char **argv);

#endif /* TRAIL_TOOL_H */
