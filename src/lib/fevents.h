/* SPDX-License-Identifier: MIT */
/*
 * fevents.h - the function tracers' events, declared once with the same
 * machinery as TRAIL_EVENT (their payloads are packed by fhook.c, so
 * only the descriptors: TRAIL__DESC(ftrace, EV)). Their description blobs
 * stay out of trail_meta: `trail list` shows programs' own events.
 *
 *   ftrace:function            {ip, parent_ip}         function tracer
 *   ftrace:funcgraph_entry     {func}                  function_graph
 *   ftrace:funcgraph_entry_args {func, args u64[6]}    with --args: the
 *                                                      integer argument
 *                                                      registers at entry
 *   ftrace:funcgraph_exit      {}
 *   ftrace:funcgraph_exit_ret  {retval}                (funcgraph-retval)
 *   ftrace:funcgraph_leaf      {func, duration u32}    entry+exit of a call
 *                                                      that wrote nothing else
 *   ftrace:funcgraph_call      {func, duration u64}    a long call (threshold)
 *   ftrace:funcgraph_inherited {func}                  a frame a forked child
 *                                                      returns through
 *   ftrace:objtrace            {ip, parent_ip, object, value}
 *                                                      an entry that got an
 *                                                      objtrace object in an
 *                                                      argument register
 *
 * Durations are in clock ticks. A leaf is stamped with its entry's time.
 */
#ifndef TRAIL_LIB_FEVENTS_H
#define TRAIL_LIB_FEVENTS_H

#include <trail/trail.h>

#define FTRACE_EVENT(ev, args, fields) TRAIL__DESCRIBE_ALONE(ftrace, ev, args, fields, )

FTRACE_EVENT(function, TRAIL_ARGS(uint64_t, ip, uint64_t, parent_ip),
	     TRAIL_FIELDS(trail_field_ptr(ip) trail_field_ptr(parent_ip)))
FTRACE_EVENT(funcgraph_entry, TRAIL_ARGS(uint64_t, func), TRAIL_FIELDS(trail_field_ptr(func)))
FTRACE_EVENT(funcgraph_entry_args, TRAIL_ARGS(uint64_t, func, const uint64_t *, args),
	     TRAIL_FIELDS(trail_field_ptr(func) trail_field_array_hex(args, 6)))
FTRACE_EVENT(funcgraph_exit, TRAIL_ARGS(), TRAIL_FIELDS())
FTRACE_EVENT(funcgraph_exit_ret, TRAIL_ARGS(uint64_t, retval),
	     TRAIL_FIELDS(trail_field_hex(retval)))
FTRACE_EVENT(funcgraph_leaf, TRAIL_ARGS(uint64_t, func, uint32_t, duration),
	     TRAIL_FIELDS(trail_field_ptr(func) trail_field_int(duration)))
FTRACE_EVENT(funcgraph_call, TRAIL_ARGS(uint64_t, func, uint64_t, duration),
	     TRAIL_FIELDS(trail_field_ptr(func) trail_field_int(duration)))
FTRACE_EVENT(funcgraph_inherited, TRAIL_ARGS(uint64_t, func),
	     TRAIL_FIELDS(trail_field_ptr(func)))
FTRACE_EVENT(objtrace, TRAIL_ARGS(uint64_t, ip, uint64_t, parent_ip, uint64_t, object, uint64_t, value),
	     TRAIL_FIELDS(trail_field_ptr(ip) trail_field_ptr(parent_ip) trail_field_hex(object)
			  trail_field_hex(value)))

#endif
