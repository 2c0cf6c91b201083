/* SPDX-License-Identifier: MIT */
/*
 * test-trigger.c - the trigger grammar (src/common/trigger.c): what each
 * good trigger parses to, the event prefix of record -T, and the errors
 * with their caret positions.
 */
#include <string.h>

#include "check.h"
#include "common/trigger.h"

TEST(trigger_good)
{
	static const struct {
		const char *text;
		uint8_t cmd;
		int32_t count;
		const char *target, *filter;
	} rows[] = {
		{"traceon", TRAIL_TRIG_TRACEON, -1, "", NULL},
		{"traceoff:5", TRAIL_TRIG_TRACEOFF, 5, "", NULL},
		{"stacktrace", TRAIL_TRIG_STACKTRACE, -1, "", NULL},
		{"snapshot:2 if x == 1", TRAIL_TRIG_SNAPSHOT, 2, "", "x == 1"},
		{"stacktrace:1 if len > 4096", TRAIL_TRIG_STACKTRACE, 1, "", "len > 4096"},
		{"  traceoff   if   a == 1 && b ~ \"x*\"", TRAIL_TRIG_TRACEOFF, -1, "",
		 "a == 1 && b ~ \"x*\""},
		{"enable_event:app:request", TRAIL_TRIG_ENABLE_EVENT, -1, "app:request", NULL},
		{"disable_event:app:req*:3 if x", TRAIL_TRIG_DISABLE_EVENT, 3, "app:req*", "x"},
		{"enable_event:sys:ev:2147483647", TRAIL_TRIG_ENABLE_EVENT, 2147483647, "sys:ev", NULL},
		/* the wprobe series' set_wprobe / clear_wprobe (target GRP/EVENT,
		 * kept as "GRP:EVENT") */
		{"set_wprobe:app/obj:ptr+16", TRAIL_TRIG_SET_WPROBE, -1, "app:obj", NULL},
		{"set_wprobe:app/obj:ptr:3 if ptr != 0", TRAIL_TRIG_SET_WPROBE, 3, "app:obj", "ptr != 0"},
		{"clear_wprobe:app/obj", TRAIL_TRIG_CLEAR_WPROBE, -1, "app:obj", NULL},
		{"clear_wprobe:app/obj:2", TRAIL_TRIG_CLEAR_WPROBE, 2, "app:obj", NULL},
		{"clear_wprobe:app/obj:ptr-8", TRAIL_TRIG_CLEAR_WPROBE, -1, "app:obj", NULL},
		{"counters:page-faults,task-clock", TRAIL_TRIG_COUNTERS, -1, "", NULL},
		{"counters:cycles:5 if x > 1", TRAIL_TRIG_COUNTERS, 5, "", "x > 1"},
		/* "if" inside a word is not the keyword */
		{"traceon if diff == 1", TRAIL_TRIG_TRACEON, -1, "", "diff == 1"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct trail_trigger t;
		struct trail_filter_err e;

		CHECK_EQ(trail_trigger_parse(rows[i].text, &t, &e), 0);
		CHECK_EQ(t.cmd, rows[i].cmd);
		CHECK_EQ(t.count, rows[i].count);
		CHECK_STR(t.target, rows[i].target);
		if (rows[i].filter)
			CHECK_STR(t.filter, rows[i].filter);
		else
			CHECK(t.filter == NULL);
	}
	CHECK_STR(trail_trigger_name(TRAIL_TRIG_DISABLE_EVENT), "disable_event");
	{
		struct trail_trigger t;
		struct trail_filter_err e;

		CHECK_EQ(trail_trigger_parse("set_wprobe:app/obj:ptr+16", &t, &e), 0);
		CHECK_STR(t.obj_field, "ptr");
		CHECK_EQ(t.obj_off, 16);
		CHECK_EQ(trail_trigger_parse("clear_wprobe:app/obj:p-8:2", &t, &e), 0);
		CHECK_STR(t.obj_field, "p");
		CHECK_EQ(t.obj_off, -8);
		CHECK_EQ(t.count, 2);
		CHECK_EQ(trail_trigger_parse("clear_wprobe:app/obj", &t, &e), 0);
		CHECK_STR(t.obj_field, "");
	}
}

/* hist: its text, `if` included, left to hist.h's grammar */
TEST(trigger_hist)
{
	struct trail_trigger t;
	struct trail_filter_err e;
	const char *text = "  hist:keys=x:vals=y if x > 1";

	CHECK_EQ(trail_trigger_parse(text, &t, &e), 0);
	CHECK_EQ(t.cmd, TRAIL_TRIG_HIST);
	CHECK(t.hist == text + 2);
	CHECK(t.filter == NULL);
	CHECK_EQ(trail_trigger_event("app:req:hist:keys=x"), 7);
	CHECK_EQ(trail_trigger_event("hist:keys=x"), 0);
}

TEST(trigger_event_prefix)
{
	static const struct {
		const char *text;
		size_t len;
	} rows[] = {
		{"traceoff", 0},
		{"traceoff:3", 0},
		{"enable_event:a:b", 0},
		{"app:error:traceoff", 9},
		{"app:err*:stacktrace:2 if x > 1", 8},
		{"app:error", 0},         /* no trigger after it: parsed as one */
		{"a b:c:traceon", 0},     /* a space first: not an event */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		CHECK_EQ(trail_trigger_event(rows[i].text), rows[i].len);
}

/* each error at its position: ^ marks it in the row's text (removed
 * before parsing) */
TEST(trigger_errors)
{
	static const struct {
		const char *text, *msg;
	} rows[] = {
		{"^", "Missing trigger command"},
		{"^snapshots", "Unknown trigger command"},
		{"snapshot:^-1", "Invalid count"},
		{"^histo:keys=x", "Unknown trigger command"},
		{"traceon:^0", "Invalid count"},
		{"traceon:^x", "Invalid count"},
		{"traceon:^99999999999", "Invalid count"},
		{"traceon:^", "Invalid count"},
		{"^traceonx", "Unknown trigger command"},
		{"enable_event^", "Missing SYS:EVENT"},
		{"enable_event:^app", "Missing SYS:EVENT"},
		{"enable_event:app:^", "Missing EVENT"},
		{"enable_event:app:^[x", "set without"},
		{"traceoff if^", "Meaningless filter expression"},
		{"traceoff:3 if^  ", "Meaningless filter expression"},
		{"set_wprobe^", "Missing wprobe event"},
		{"set_wprobe:^obj:ptr", "Missing wprobe event"},
		{"set_wprobe:^app/:ptr", "Missing wprobe event"},
		{"set_wprobe:app/obj^", "Missing FIELD"},
		{"set_wprobe:app/obj:ptr+^x", "Invalid offset"},
		{"clear_wprobe:app/obj:ptr:^x", "Invalid count"},
		{"counters^", "Missing counters"},
		{"counters:^nope", "Unknown counter"},
		{"counters:task-clock,^", "Unknown counter"},
		{"counters:cycles,^cycles", "already read"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[128];
		const char *caret = strchr(rows[i].text, '^');
		size_t at = (size_t)(caret - rows[i].text);
		struct trail_trigger t;
		struct trail_filter_err e;

		memcpy(text, rows[i].text, at);
		strcpy(text + at, caret + 1);
		if (trail_trigger_parse(text, &t, &e) != -1) {
			fprintf(stderr, "  '%s' parsed\n", text);
			CHECK(0);
			continue;
		}
		if (!strstr(e.msg, rows[i].msg) || e.pos != (int)at) {
			fprintf(stderr, "  '%s': '%s' at %d, want '%s' at %zu\n", text, e.msg, e.pos,
				rows[i].msg, at);
			CHECK(0);
		}
	}
}

TEST_MAIN(CHECK_T(trigger_good), CHECK_T(trigger_hist), CHECK_T(trigger_event_prefix), CHECK_T(trigger_errors))
