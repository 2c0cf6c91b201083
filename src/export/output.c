/* SPDX-License-Identifier: MIT */
/*
 * output.c - the export driver: the reader's merge loop, once, feeding an
 * output (see output.h). Every exporter goes through here, so the order,
 * loss and damage seen by each are the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "view.h"

/* The damage messages the reader added since the last look, to the output. */
static int damage(struct trail_reader *r, struct trail_output *out, size_t *seen)
{
	const char *const *msgs;
	size_t n = trail_reader_errors(r, &msgs);
	int rc = 0;

	while (*seen < n && !rc)
		rc = out->damage(out->ctx, msgs[(*seen)++]);
	return rc;
}

int trail_export_run(struct trail_reader *r, const char *path, const struct trail_view *view,
		     struct trail_output *out, char *err, size_t errlen)
{
	static const struct trail_view all = {.sz = sizeof(all)};
	char none[1];
	struct trail_export_src src = {
		.reader = r,
		.path = path,
		.hdr = trail_reader_header(r),
		.view = view ? view : &all,
		.err = err && errlen ? err : none,
		.errlen = err && errlen ? errlen : sizeof(none),
	};
	struct trail_record rec;
	uint64_t nrec = 0;
	size_t seen = 0;
	int rc, erc;

	src.nstreams = trail_reader_streams(r, &src.streams);
	src.nprocs = trail_reader_procs(r, &src.procs);
	src.err[0] = '\0';
	src.viewer = trail__viewer_new(r, src.view, out, src.streams, src.nstreams);
	if (!src.viewer) {
		snprintf(src.err, src.errlen, "%s output: %s", out->name, strerror(ENOMEM));
		return -ENOMEM;
	}
	rc = out->begin ? out->begin(out->ctx, &src) : 0;
	if (rc < 0)
		goto out;
	if (!rc && out->damage)
		rc = damage(r, out, &seen); /* found while opening */
	while (!rc && trail_reader_next(r, &rec) > 0) {
		if (out->damage && (rc = damage(r, out, &seen)))
			break;
		rc = trail__viewer_record(src.viewer, &rec);
		if (!(++nrec & 0xfffff) && src.view->progress)
			src.view->progress(src.view->progress_arg, nrec, rec.file_off);
	}
	if (rc >= 0) {
		erc = trail__viewer_end(src.viewer);
		if (!rc)
			rc = erc;
	}
	if (rc >= 0 && out->damage) {
		erc = damage(r, out, &seen);
		if (!rc)
			rc = erc;
	}
	erc = out->end ? out->end(out->ctx, &src) : 0;
	if (rc >= 0)
		rc = erc;
out:
	trail__viewer_free(src.viewer);
	if (rc > 0)
		rc = 0;
	if (rc < 0 && !src.err[0])
		snprintf(src.err, src.errlen, "%s output: %s", out->name, strerror(-rc));
	return rc;
}

const char *trail_export_symbol(const struct trail_export_src *src, uint32_t pid, uint64_t ip,
				uint64_t ts_raw)
{
	return trail__view_symbol(src->viewer, pid, ip, ts_raw);
}

void *trail__output_new(size_t size, const struct trail_output *ops)
{
	struct trail_output *o = calloc(1, size);

	if (o) {
		*o = *ops;
		o->ctx = o;
	}
	return o;
}

void trail_output_free(struct trail_output *out)
{
	if (out && out->free)
		out->free(out->ctx);
}
