/* SPDX-License-Identifier: MIT */
/*
 * fgraph.h - ftrace's function_graph layout, an output (output.h): the
 * ftrace:funcgraph_* records of each thread paired into calls, leaves on
 * one line, nesting indented, durations with ftrace's markers:
 *
 *    1)               |  handle_request() {
 *    1)   0.412 us    |    parse_header();
 *    1) + 12.530 us   |  }
 *
 * Records of other events are comments in the tree. `trail report` gets
 * this layout through the text output (text.h), which switches to it when
 * the file starts with a function_graph record.
 */
#ifndef TRAIL_EXPORT_FGRAPH_H
#define TRAIL_EXPORT_FGRAPH_H

#include <stdio.h>

#include "output.h"

struct trail_fgraph_opts {
	size_t sz;  /* sizeof(struct trail_fgraph_opts) */
	FILE *out;  /* the lines go here */
	int proc;   /* a TASK-TID column (ftrace's funcgraph-proc) */
	int quiet;  /* no column header */
	int abstime;    /* a TIME column (ftrace's funcgraph-abstime) */
	int abstime_ns; /* ... in nanoseconds */
};

/* NULL with errno set (ENOMEM, EINVAL). Free with trail_output_free(). */
struct trail_output *trail_output_fgraph_create(const struct trail_fgraph_opts *opts);

#endif
