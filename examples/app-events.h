/* SPDX-License-Identifier: MIT */
/*
 * app-events.h - the example's tracepoints. Declared once here, used from
 * two translation units (example.c and worker.c).
 */
#ifndef APP_EVENTS_H
#define APP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trail/trail.h>

TRAIL_EVENT(app, start,
	TRAIL_ARGS(int, workers, int, requests),
	TRAIL_FIELDS(trail_field_int(workers)
		     trail_field_int(requests)))

TRAIL_EVENT(app, request,
	TRAIL_ARGS(int, fd, const char *, path, uint64_t, bytes),
	TRAIL_FIELDS(trail_field_int(fd)
		     trail_field_string(path)
		     trail_field_hex(bytes)))

TRAIL_EVENT(app, reply,
	TRAIL_ARGS(int, fd, int, status, double, ms, bool, cached),
	TRAIL_FIELDS(trail_field_int(fd)
		     trail_field_int(status)
		     trail_field_float(ms)
		     trail_field_bool(cached)))

TRAIL_EVENT(app, stats,
	TRAIL_ARGS(const char *, worker, const unsigned *, hist, size_t, n),
	TRAIL_FIELDS(trail_field_string(worker)
		     trail_field_array(buckets, hist, 4)
		     trail_field_seq_hex(codes, hist, n)
		     trail_field_int(n)))

TRAIL_EVENT(app, stop,
	TRAIL_ARGS(int, handled),
	TRAIL_FIELDS(trail_field_int(handled)))

void worker_serve(int id, int requests);

#endif
