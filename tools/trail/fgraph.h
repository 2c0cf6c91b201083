/* SPDX-License-Identifier: MIT */
/*
 * fgraph.h - ftrace's function_graph layout for `trail report`: the
 * ftrace:funcgraph_* records of each thread paired into calls, leaves on
 * one line, nesting indented, durations with ftrace's markers:
 *
 *    1)               |  handle_request() {
 *    1)   0.412 us    |    parse_header();
 *    1) + 12.530 us   |  }
 */
#ifndef TRAIL_TOOL_FGRAPH_H
#define TRAIL_TOOL_FGRAPH_H

#include <stdio.h>

#include "../../src/tracefile/reader.h"

struct fgraph;

/* proc: a TASK-TID column (ftrace's funcgraph-proc). */
struct fgraph *fgraph_new(struct trail_reader *r, int proc);
void fgraph_free(struct fgraph *g);

/* Is this a function_graph record? */
int fgraph_is_graph(const struct trail_record *rec);

/* Print one record in the layout (non-graph records as comments). */
void fgraph_record(struct fgraph *g, const struct trail_record *rec, FILE *out);

/* ftrace's duration field: marker and microseconds, e.g. "+ 12.530 us" */
const char *fgraph_duration(uint64_t ns, char *buf, size_t n);

#endif
