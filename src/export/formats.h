/* SPDX-License-Identifier: MIT */
/*
 * formats.h - the export formats by name (`trail export --format NAME`):
 * each is an output (output.h) in its own file of src/export, made from
 * the same options.
 */
#ifndef TRAIL_EXPORT_FORMATS_H
#define TRAIL_EXPORT_FORMATS_H

#include <stdio.h>

#include "output.h"

struct trail_export_opts {
	size_t sz;         /* sizeof(struct trail_export_opts) */
	FILE *out;         /* a file format writes here (the caller checks
			    * ferror() and closes it) */
	const char *dir;   /* a directory format writes its files here (the
			    * directory exists and holds none of them) */
	int count;         /* folded, flamegraph: call counts, not time */
	const char *title; /* flamegraph: its title (default: the command) */
};

struct trail_format {
	const char *name;
	const char *help; /* one line for --help and the error listing them */
	int dir;          /* writes a directory, not a file */
	int binary;       /* not for a terminal */
	int calls;        /* needs function_graph data (folded, flamegraph) */
	struct trail_output *(*create)(const struct trail_export_opts *opts);
};

/* Each format's maker (in its own file): NULL with errno set. */
struct trail_output *trail__export_text(const struct trail_export_opts *opts);
struct trail_output *trail__export_perfetto(const struct trail_export_opts *opts);
struct trail_output *trail__export_folded(const struct trail_export_opts *opts);
struct trail_output *trail__export_flamegraph(const struct trail_export_opts *opts);
struct trail_output *trail__export_ctf(const struct trail_export_opts *opts);
struct trail_output *trail__export_chrome(const struct trail_export_opts *opts);

/* Every format, in the order --help lists them; *n: how many. */
const struct trail_format *trail_export_formats(size_t *n);
/* The format called name, or NULL. */
const struct trail_format *trail_export_format(const char *name);

#endif
