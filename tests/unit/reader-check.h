/* SPDX-License-Identifier: MIT */
/*
 * reader-check.h - the reading side of the reader's tests
 * (test-reader-*.c): a file built with tests/lib/tracebuild.h opened with
 * trail_reader_open(), its records collected, its messages checked by file
 * offset. Include after check.h: the failures counted are the test's.
 */
#ifndef TRAIL_TESTS_READER_CHECK_H
#define TRAIL_TESTS_READER_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tracebuild.h"
#include "tracefile/reader.h"

/* Write the bytes to a fresh file; returns its path. */
static inline const char *write_file(const void *p, size_t n)
{
	static char path_buf[4096];
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path_buf, sizeof(path_buf), "%s/trail-test-reader-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(path_buf);
	if (fd < 0) {
		perror("mkstemp");
		abort();
	}
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
	close(fd);
	return path_buf;
}

/* Open the first n bytes of w; the file is gone once it is mapped. */
static inline struct trail_reader *open_n(const struct tw *w, size_t n, int *rc,
					  char *err, size_t errlen)
{
	struct trail_reader *r = (struct trail_reader *)1;
	const char *path = write_file(w->b, n);

	err[0] = 0;
	*rc = trail_reader_open(path, &r, err, errlen);
	unlink(path);
	if (*rc)
		CHECK(r == NULL);
	return *rc ? NULL : r;
}

static inline struct trail_reader *open_tw(const struct tw *w)
{
	char err[512];
	int rc;
	struct trail_reader *r = open_n(w, w->len, &rc, err, sizeof(err));

	if (!r) {
		fprintf(stderr, "  open: %d %s\n", rc, err);
		check_failures++;
	}
	return r;
}

struct got {
	int type;
	uint64_t ts_raw, ts_ns;
	uint32_t cpu, id, v, len;
	uint64_t lost, file_off;
	const struct trail_rstream *st;
};

/* Every record; v is the first 4 payload bytes of a u32 event. */
static inline size_t read_all(struct trail_reader *r, struct got *g, size_t max)
{
	struct trail_record rec;
	size_t n = 0;

	while (trail_reader_next(r, &rec) == 1) {
		if (n < max) {
			memset(&g[n], 0, sizeof(g[n]));
			g[n].type = rec.type;
			g[n].ts_raw = rec.ts_raw;
			g[n].ts_ns = rec.ts_ns;
			g[n].cpu = rec.cpu;
			g[n].lost = rec.lost;
			g[n].file_off = rec.file_off;
			g[n].st = rec.stream;
			g[n].len = rec.len;
			if (rec.type == TRAIL_RT_EVENT) {
				g[n].id = rec.event ? rec.event->id : ~0u;
				if (rec.len >= 4)
					g[n].v = get32(rec.payload);
			}
		}
		n++;
		if (n > 1000000) /* a reader that never ends */
			break;
	}
	return n;
}

static inline void dump_errors(struct trail_reader *r)
{
	const char *const *msgs;
	size_t n = trail_reader_errors(r, &msgs);

	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "    reader: %s\n", msgs[i]);
}

#define ANY_OFFSET UINT64_MAX

/* Is there a message with "offset OFF:" (unless ANY_OFFSET) and `what`? */
static inline int has_err(struct trail_reader *r, uint64_t off, const char *what)
{
	const char *const *msgs;
	size_t n = trail_reader_errors(r, &msgs);
	char tag[64];

	snprintf(tag, sizeof(tag), "offset %" PRIu64 ":", off);
	for (size_t i = 0; i < n; i++)
		if ((off == ANY_OFFSET || strstr(msgs[i], tag)) && strstr(msgs[i], what))
			return 1;
	return 0;
}

static inline size_t nerrors(struct trail_reader *r)
{
	const char *const *msgs;

	return trail_reader_errors(r, &msgs);
}

#define CHECK_ERR(r, off, what)                                               \
	do {                                                                  \
		if (!has_err((r), (off), (what))) {                           \
			fprintf(stderr, "  %s:%d: no error at offset %lld with \"%s\"\n", \
				__FILE__, __LINE__, (long long)(off), (what)); \
			dump_errors(r);                                       \
			check_failures++;                                     \
		}                                                             \
	} while (0)

#define CHECK_NO_ERRORS(r)                                                    \
	do {                                                                  \
		if (nerrors(r)) {                                             \
			fprintf(stderr, "  %s:%d: unexpected errors\n", __FILE__, __LINE__); \
			dump_errors(r);                                       \
			check_failures++;                                     \
		}                                                             \
	} while (0)

#endif /* TRAIL_TESTS_READER_CHECK_H */
