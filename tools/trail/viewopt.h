/* SPDX-License-Identifier: MIT */
/*
 * viewopt.h - the options every view of a trace file takes (report,
 * report --summary, export): which functions (-l -n -g, as at record
 * time), threads (--tid --pid --comm), time (--time-range) and how deep or
 * long (--max-graph-depth, --graph-time-thresh), made into the struct
 * trail_view the export driver applies; the progress line a long view
 * shows on a terminal; and opening the file and saying its damage, the
 * same way for every view.
 */
#ifndef TRAIL_TOOL_VIEWOPT_H
#define TRAIL_TOOL_VIEWOPT_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/common/filter.h"
#include "../../src/export/output.h"
#include "opt.h"

enum {
	VO_TID = OPT_LONG_ID + 100,
	VO_PID,
	VO_COMM,
	VO_RANGE,
	VO_DEPTH,
	VO_THRESH,
	VO_FILTER,
};

/* The rows, for a subcommand's option table. */
#define VIEWOPT_ROWS                                                                        \
	{'l', "limit-func", OPT_REQUIRED, "GLOB",                                           \
	 "only calls of these functions, FUNC or FUNC@OBJECT (repeatable)", 0,            \
	 "a function glob"},                                                                \
	{'n', "notrace-func", OPT_REQUIRED, "GLOB",                                         \
	 "not calls of these (their callees stay; repeatable)", 0, "a function glob"},     \
	{'g', "graph-func", OPT_REQUIRED, "GLOB",                                           \
	 "only these functions and what they call (repeatable)", 0, "a function glob"},    \
	{0, "tid", OPT_REQUIRED, "TID[,TID...]", "only these threads", VO_TID, NULL},        \
	{0, "pid", OPT_REQUIRED, "PID[,PID...]", "only these processes", VO_PID, NULL},      \
	{0, "comm", OPT_REQUIRED, "GLOB", "only threads of this name (repeatable)", VO_COMM, \
	 NULL},                                                                             \
	{0, "time-range", OPT_REQUIRED, "START,END",                                        \
	 "only this time: seconds as report prints them,\n"                                 \
	 "or +DURATION from the first record (+1.5s,+2s);\n"                                \
	 "either side may be empty",                                                        \
	 VO_RANGE, NULL},                                                                   \
	{0, "max-graph-depth", OPT_REQUIRED, "N", "calls no deeper than N levels", VO_DEPTH,   \
	 NULL},                                                                             \
	{0, "graph-time-thresh", OPT_REQUIRED, "T",                                         \
	 "calls of at least T (50us) and their callers", VO_THRESH, NULL},                 \
	{0, "filter", OPT_REQUIRED, "'EVENT[: FILTER]'",                                    \
	 "only these events, those that pass FILTER (the\n"                                \
	 "kernel's grammar: 'app:req: bytes > 4096'; repeatable)",                         \
	 VO_FILTER, NULL}

struct viewopt {
	struct trail_view v;
	const char **only, **notrace, **graph, **comms, **filters;
	struct trail_filter_err filter_err; /* the run's, if a filter failed */
	size_t filter_which;
	uint32_t *tids, *pids;
	uint64_t started_ns;  /* progress: when the view began */
	uint64_t delay_ns;    /* progress: shown after this long (1 s,
			       * $TRAIL_PROGRESS_DELAY ms) */
	int tty, shown;       /* progress: stderr is a terminal; a line is up */
	uint64_t total_bytes; /* progress: the file's size */
	const char *what;     /* progress: "export", "report" */
};

void viewopt_init(struct viewopt *vo);
/* An option of a view: 1 taken, 0 not one of VIEWOPT_ROWS, -1 a usage
 * error was reported (exit EXIT_USAGE). */
int viewopt_take(struct viewopt *vo, const char *cmd, int id, const char *arg);
/* The progress line on stderr, if it is a terminal, for views that run
 * longer than a second; file_bytes: the input's size. */
void viewopt_progress(struct viewopt *vo, const char *what, uint64_t file_bytes);
/* Clear the progress line, if one is up. */
void viewopt_progress_done(struct viewopt *vo);
void viewopt_free(struct viewopt *vo);
/* After a view failed: if a filter did not compile for an event, say so
 * with its caret and return 1; else 0. */
int viewopt_filter_failed(const struct viewopt *vo, const char *cmd);

/* Open the file every view reads: 0, or 1 with the reason said (and, for a
 * FILE that is missing while FILE.part is there, that it is an unfinished
 * recording). err (errlen bytes) takes the reader's message. */
/* core.c: is path an ELF core dump? Its session's trace, read (0), or
 * 1 (said: no trace buffer in it, damaged, truncated, another arch) */
int core_is(const char *path);
int core_open(const char *path, struct trail_reader **r, char *err, size_t errlen);
int viewopt_open(const char *path, struct trail_reader **r, char *err, size_t errlen);
/* Say the damage the reader found, each with its offset: how many. */
size_t viewopt_damage(const char *path, struct trail_reader *r);

#endif
