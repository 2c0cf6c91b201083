/* SPDX-License-Identifier: MIT */
/*
 * lttng_tp.h - the LTTng-UST side of the comparison: provider "bench" with
 * event "event" and the same two integer fields as bench_event.c.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench, event,
	LTTNG_UST_TP_ARGS(int, a_arg, long, b_arg),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, a, a_arg)
		lttng_ust_field_integer(long, b, b_arg)))

#endif

#include <lttng/tracepoint-event.h>
