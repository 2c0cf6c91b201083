/* SPDX-License-Identifier: MIT */
/*
 * log.c - the recorder's messages, through the caller's log callback, and
 * its byte counts in the caller's units: below every other part of the
 * recorder, which all report through it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void trail__rec_log(struct trail_recorder *R, enum trail_recorder_level level,
		    const char *fmt, ...)
{
	char buf[1024], *msg = buf;
	va_list ap;
	int n;

	if (!R->o.log)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) && (msg = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	R->o.log(R->o.log_ctx, level, msg ? msg : buf);
	if (msg != buf)
		free(msg);
}

const char *trail__rec_bytes(const struct trail_recorder *R, uint64_t v, char *buf, size_t n)
{
	if (R->o.fmt_bytes)
		return R->o.fmt_bytes(v, buf, n);
	snprintf(buf, n, "%llu B", (unsigned long long)v);
	return buf;
}
