/* SPDX-License-Identifier: MIT */
/*
 * text.h - ftrace's text layouts, as outputs (output.h): what `trail
 * report` prints.
 *
 *   text    the header with the per-stream accounting, then one line an
 *           event in ftrace's function/tracepoint layout; a file that
 *           starts with a function_graph record continues in that layout
 *           (fgraph.h)
 *   count   the header, then the records of each event (--count)
 */
#ifndef TRAIL_EXPORT_TEXT_H
#define TRAIL_EXPORT_TEXT_H

#include <stdio.h>

#include "output.h"

struct trail_text_opts {
	size_t sz;      /* sizeof(struct trail_text_opts) */
	FILE *out;      /* the text goes here; the caller checks ferror() */
	int ns_ts;      /* nanosecond timestamps (-t) */
	int quiet;      /* no header (-q) */
	int stat;       /* the header lists every stream; text: no events */
	int graph_proc; /* function_graph: a TASK-TID column (-O fgraph:proc) */
	int graph_abstime; /* function_graph: a TIME column (-O fgraph:abstime;
			    * nanoseconds with ns_ts) */
};

/* NULL with errno set (ENOMEM, EINVAL). Free with trail_output_free(). */
struct trail_output *trail_output_text_create(const struct trail_text_opts *opts);
struct trail_output *trail_output_count_create(const struct trail_text_opts *opts);

#endif
