/* SPDX-License-Identifier: MIT */
/*
 * tracefile.h - appending sections to a trace file (the writer side of
 * src/common/tracefile.h). A failed write (disk full, file size limit)
 * truncates the file back to the end of the last whole section and makes
 * the writer refuse everything after: the file stays a valid prefix.
 */
#ifndef TRAIL_TOOL_TRACEFILE_H
#define TRAIL_TOOL_TRACEFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/common/tracefile.h"

struct tf_writer {
	int fd;
	int err;      /* first error, -errno; sticky */
	uint64_t off; /* end of the last whole section */
	const char *path;
};

int tfw_open(struct tf_writer *w, const char *path);
int tfw_header(struct tf_writer *w, struct trail_file_hdr *h);
/* One section whose payload is a followed by b (either may be empty). */
int tfw_section(struct tf_writer *w, uint32_t type, const void *a, size_t alen,
		const void *b, size_t blen);
int tfw_close(struct tf_writer *w);

#endif
