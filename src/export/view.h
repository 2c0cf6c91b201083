/* SPDX-License-Identifier: MIT */
/*
 * view.h - the view between the reader and an output (view.c): the
 * selection of struct trail_view and function_graph records paired into
 * struct trail_call. Only the driver (output.c) uses it.
 */
#ifndef TRAIL_EXPORT_VIEW_H
#define TRAIL_EXPORT_VIEW_H

#include "output.h"

struct trail_viewer;

/* NULL if out of memory. v and out must outlive it. */
struct trail_viewer *trail__viewer_new(struct trail_reader *r, const struct trail_view *v,
				       struct trail_output *out,
				       const struct trail_rstream *const *streams, size_t n);
void trail__viewer_free(struct trail_viewer *w);
/* One record of the merge: 0, TRAIL_OUTPUT_DONE (past the time range or
 * the output wants no more) or an output's -errno. */
int trail__viewer_record(struct trail_viewer *w, const struct trail_record *rec);
/* The file ended: open calls closed, queues emptied. */
int trail__viewer_end(struct trail_viewer *w);
/* trail_reader_symbol() through a cache of names by address. */
const char *trail__view_symbol(struct trail_viewer *w, uint32_t pid, uint64_t ip,
			       uint64_t ts_raw);

#endif
