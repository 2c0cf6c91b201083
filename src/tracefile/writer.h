/* SPDX-License-Identifier: MIT */
/*
 * writer.h - appending sections to a trace file (the writer side of
 * layout.h). A failed write (disk full, file size limit)
 * truncates the file back to the end of the last whole section and makes
 * the writer refuse everything after: the file stays a valid prefix.
 *
 * The file is written as FILE.part beside its target and renamed over
 * FILE by tfw_finish() once the recording has run, so a start that fails
 * leaves an existing FILE as it was (the .part is removed then). The
 * .part is locked (flock) while it is written: a second recorder aiming at
 * the same FILE is refused, and a .part left by a recorder that was killed
 * holds its recording up to the kill. Targets that are not regular files
 * (/dev/null, a FIFO) are written directly, and "-" is standard output
 * (a copy of its descriptor): a stream of whole sections in order, which
 * a reader can take as it comes.
 */
#ifndef TRAIL_TRACEFILE_WRITER_H
#define TRAIL_TRACEFILE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

struct tf_writer {
	int fd;
	int err;      /* first error, -errno; sticky */
	uint64_t off; /* end of the last whole section */
	const char *path;
	char *final;  /* where the file goes: path, or the target of its symlink */
	char *part;   /* the file being written (NULL: written in place) */
	uint64_t reserved; /* blocks allocated ahead up to here (fallocate) */
};

/* 0, or -errno: -EBUSY if another recorder is writing FILE.part. */
int tfw_open(struct tf_writer *w, const char *path);
int tfw_header(struct tf_writer *w, struct trail_file_hdr *h);
/* One section whose payload is a followed by b (either may be empty). */
int tfw_section(struct tf_writer *w, uint32_t type, const void *a, size_t alen,
		const void *b, size_t blen);
/* Done: keep != 0, FILE.part becomes FILE (what was written, even after a
 * write error); keep == 0 (nothing was recorded), it is removed and FILE
 * left as it was. Returns the writer's first error, or the rename's or
 * close's. */
int tfw_finish(struct tf_writer *w, int keep);

#endif
