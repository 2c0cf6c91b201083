/* SPDX-License-Identifier: MIT */
/*
 * summary.h - `trail report --summary`, an output (output.h): per
 * function calls, total, self, average, minimum and maximum time (uftrace
 * report's table), per thread or process on request, sorted by a column;
 * per event the count and rate. See summary.c.
 */
#ifndef TRAIL_EXPORT_SUMMARY_H
#define TRAIL_EXPORT_SUMMARY_H

#include <stdio.h>

#include "output.h"

enum { TRAIL_SUMMARY_BY_FUNCTION, TRAIL_SUMMARY_BY_THREAD, TRAIL_SUMMARY_BY_PROCESS };
enum {
	TRAIL_SUMMARY_SORT_TOTAL,
	TRAIL_SUMMARY_SORT_SELF,
	TRAIL_SUMMARY_SORT_CALLS,
	TRAIL_SUMMARY_SORT_AVG,
	TRAIL_SUMMARY_SORT_MIN,
	TRAIL_SUMMARY_SORT_MAX,
	TRAIL_SUMMARY_SORT_NAME,
};

struct trail_summary_opts {
	size_t sz;  /* sizeof(struct trail_summary_opts) */
	FILE *out;  /* the table goes here */
	int by;     /* TRAIL_SUMMARY_BY_* */
	int sort;   /* TRAIL_SUMMARY_SORT_*: the biggest first, names A-Z */
};

/* NULL with errno set (ENOMEM, EINVAL). Free with trail_output_free().
 * Its run fails with -ENODATA when nothing was shown to summarize. */
struct trail_output *trail_output_summary_create(const struct trail_summary_opts *opts);

#endif
