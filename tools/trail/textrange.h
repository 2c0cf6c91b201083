/* SPDX-License-Identifier: MIT */
/* textrange.h - a trace file's records in a time range, as text (textrange.c). */
#ifndef TRAIL_TOOLS_TEXTRANGE_H
#define TRAIL_TOOLS_TEXTRANGE_H

#include <stdint.h>
#include <stdio.h>

/* The records of the trace file path whose CLOCK_MONOTONIC time is in
 * (lo, hi] (hi UINT64_MAX: no end), as `trail report` prints them (no
 * header when quiet), into f; before(arg, ns), if given, is called with
 * each record's time before it is printed. 0, or -1 (the file could not
 * be read, or an output error). */
int text_range(const char *path, uint64_t lo, uint64_t hi, int quiet, FILE *f,
	       void (*before)(void *arg, uint64_t ns), void *arg);

#endif /* TRAIL_TOOLS_TEXTRANGE_H */
