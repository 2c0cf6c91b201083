/* SPDX-License-Identifier: MIT */
/* targets.h - what `trail record` records, checked before it starts. */
#ifndef TRAIL_TOOLS_TARGETS_H
#define TRAIL_TOOLS_TARGETS_H

#include <sys/types.h>

struct trail_session;

/* The checks a user deserves a clear message for, before anything starts,
 * and libtrail loaded into pid if it has none (*sig: its control signal):
 * 0, -1 (said), or -2: the process exited meanwhile (not said: the caller
 * goes on with the others). */
int record_check_pid(struct trail_session *S, pid_t pid, int *sig);

/* The command (S->cmd) before it runs: its program (S->cmd_path set),
 * libtrail (*libtrail its path), the output, and the session against the
 * program's objects. 0, or the exit status (said). */
int record_check_command(struct trail_session *S, const char **libtrail);

/* A bootconfig file's instances (ftrace.instance.NAME): a recorder each,
 * `trail record -q --bootconfig FILE --instance NAME`, started as children
 * of this one on what it records (pid: the launched command, else S's -P
 * processes, or -a), and stopped with it (SIGINT, 10 s, then SIGKILL). */
void record_instances_start(const struct trail_session *S, pid_t pid);
void record_instances_stop(void);

/* -P on processes a boot-time session records (its recorder started by
 * libtrail: TRAIL_BOOT_RECORDER in its environment): once this session
 * has joined, that recorder is stopped, its file keeping what it recorded
 * until then; this one records from then on (the two overlap: nothing is
 * lost between them). Said unless S->quiet. */
void record_take_over(const struct trail_session *S);

/* --tid TID[,TID...] into S: 0, or a usage error (said) */
int record_parse_tids(struct trail_session *S, const char *arg);

/* --tp-printk (printk.c): the events on stderr as text while they are
 * recorded, from the flight recorder's snapshots every 100 ms; the rest
 * at the end (before the recorder finishes), through the loop's live
 * hook (tool.h) it fills. -1: out of memory. */
struct trail_recorder;
struct record_live;
int record_printk_start(const struct trail_session *S, struct record_live *live);
void record_printk_end(struct trail_recorder *R, struct record_live *live);

#endif /* TRAIL_TOOLS_TARGETS_H */
