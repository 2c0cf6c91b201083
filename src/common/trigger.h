/* SPDX-License-Identifier: MIT */
/*
 * trigger.h - event triggers in the kernel's grammar (events.rst, "Event
 * triggers"): what runs when an event fires, whether or not it is
 * recorded.
 *
 *   COMMAND[:COUNT] [if FILTER]
 *
 *   traceon, traceoff          the recording of the session on / off
 *   snapshot                   the flight recorder's contents into a
 *                              file of their own (OUTPUT.N)
 *   stacktrace                 the thread's user stack, as an
 *                              ftrace:user_stack record
 *   enable_event:SYS:EVENT     recording of SYS:EVENT (globs) on / off
 *   disable_event:SYS:EVENT
 *   hist:keys=...              a histogram kept in the process (hist.h's
 *                              grammar; no COUNT)
 *   objtrace:add:FIELD[,OFFSET][:TYPE]    FIELD's value (an address) into
 *   objtrace:remove:FIELD      the session's objects / out of them: every
 *                              traced function entry that gets one in an
 *                              argument register is recorded
 *                              (ftrace:objtrace) with the TYPE (u8..u64,
 *                              s8..s64, x8..x64; u64) at OFFSET in it
 *
 * COUNT: how many times it runs (then it stays, doing nothing), default
 * every time; FILTER: the event's own fields (filter.h), the trigger runs
 * only when it holds. `trail record -T` takes "[SYS:EVENT:]TRIGGER":
 * without the event, the -e before it. Parsing allocates nothing and is
 * async-signal-safe: libtrail parses the spec's triggers at join.
 */
#ifndef TRAIL_COMMON_TRIGGER_H
#define TRAIL_COMMON_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h"

enum trail_trig_cmd {
	TRAIL_TRIG_TRACEON = 1,
	TRAIL_TRIG_TRACEOFF,
	TRAIL_TRIG_STACKTRACE,
	TRAIL_TRIG_ENABLE_EVENT,
	TRAIL_TRIG_DISABLE_EVENT,
	TRAIL_TRIG_SNAPSHOT,
	TRAIL_TRIG_HIST,
	TRAIL_TRIG_OBJTRACE,
	TRAIL_TRIG_SET_WPROBE,   /* set_wprobe:GRP/EVENT:FIELD[+OFFSET]: the
				  * wprobe watches FIELD's value + OFFSET */
	TRAIL_TRIG_CLEAR_WPROBE, /* clear_wprobe:GRP/EVENT[:FIELD[+OFFSET]]:
				  * it watches nothing (with FIELD: if it
				  * watches that) */
	TRAIL_TRIG_COUNTERS,     /* counters:NAME[,NAME...]: the thread's perf
				  * counters (counters.h) as a
				  * synthetic:perf_counters record after the
				  * event's */
};

#define TRAIL_TRIG_MAX_TARGET 128 /* "SYS:EVENT" of enable/disable_event */
#define TRAIL_TRIG_MAX_COUNT 0x7fffffff
#define TRAIL_TRIG_PER_EVENT 8 /* triggers of a recording on one event */

struct trail_trigger {
	uint8_t cmd;                        /* enum trail_trig_cmd */
	int32_t count;                      /* -1: every time */
	char target[TRAIL_TRIG_MAX_TARGET]; /* enable/disable_event's */
	const char *filter;                 /* in the text: after "if ", or NULL */
	const char *hist;                   /* hist: the text from "hist" on (its
					     * `if` too: trail_hist_parse) */
	/* objtrace */
	uint8_t obj_remove;                 /* remove (else add) */
	uint8_t obj_size, obj_sign;         /* TYPE */
	int64_t obj_off;                    /* OFFSET */
	char obj_field[64];                 /* FIELD (set/clear_wprobe's too, ""
					     * for a clear_wprobe without one;
					     * their target: "GRP:EVENT") */
	uint16_t obj_field_pos;             /* FIELD's position in the text */
	uint8_t nctr, ctr[8];               /* counters: the counters read */
};

/* Parse text (one trigger, no event prefix). 0, or -1 with *e (a
 * message and the position in text). The filter is not compiled here:
 * that needs the event's fields (trail_filter_compile on t->filter). */
int trail_trigger_parse(const char *text, struct trail_trigger *t, struct trail_filter_err *e);

/* A session spec's "@trigger PATTERN TEXT" value (v, len bytes, not
 * NUL-terminated): TEXT copied into buf (TRAIL_FILTER_MAX_TEXT bytes) and
 * parsed into t (t->filter points into buf), the pattern's length in
 * *plen. 0, or -1 if it is not such a line. */
int trail_trigger_spec_line(const char *v, size_t len, char *buf, size_t *plen,
			    struct trail_trigger *t);

/* Of n "@trigger PATTERN TEXT" spec lines, how many select event
 * ("SYS:EVENT")? (TRAIL_TRIG_PER_EVENT of them an event, libtrail keeps.) */
int trail__trigger_lines_on(char *const *lines, int n, const char *event);

/* The event a "@trigger PATTERN TEXT" line names without a glob
 * ("SYS:EVENT") into buf (n bytes): 1, else 0. */
int trail__trigger_line_event(const char *line, char *buf, size_t n);

/* "[SYS:EVENT:]TRIGGER": the length of the SYS:EVENT part (0: none, the
 * text starts with a command name); the trigger starts after it and ':'.
 * "NAME:TRIGGER" (one word, then a command): NAME's length, a synthetic
 * event's bare name (synthetic:NAME). */
size_t trail_trigger_event(const char *text);

/* The command's name (for messages and the trace file). */
const char *trail_trigger_name(uint8_t cmd);

#endif /* TRAIL_COMMON_TRIGGER_H */
