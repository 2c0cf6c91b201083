/* SPDX-License-Identifier: MIT */
/*
 * regfile.h - the files of the registry directory that keep definitions
 * across recordings (dynamic_events, synthetic_events: probes.c,
 * synths.c), read and replaced whole. The directory itself and its
 * checks are src/common/registry.h's.
 */
#ifndef TRAIL_SESSION_REGFILE_H
#define TRAIL_SESSION_REGFILE_H

#include <stddef.h>

/* A file of the registry directory (made if create): its path into
 * path (n bytes). 0, or -errno with err (-ENOENT: no directory, create 0). */
int trail__regfile_file(const char *name, char *path, size_t n, int create, char *err,
			size_t en);
/* fn(arg, line, msg, mn) for each line of that file but blank ones and
 * #comments (a missing file: none); fn's non-zero (msg set) stops it:
 * -EINVAL, err naming the line. 0, or -errno with err (a registry
 * directory that cannot be used: its path and why). */
int trail__regfile_read(const char *name, int (*fn)(void *arg, const char *line, char *msg, size_t mn),
			void *arg, char *err, size_t en);
/* Replace that file (mode 0600, written aside, renamed into place) with
 * one line per fn(arg, i, buf, n) that returns 1 (i from 0). 0, or -EIO
 * with err. */
int trail__regfile_replace(const char *name, int (*fn)(void *arg, int i, char *buf, size_t n),
			   void *arg, char *err, size_t en);

#endif /* TRAIL_SESSION_REGFILE_H */
