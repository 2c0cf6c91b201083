/* SPDX-License-Identifier: MIT */
/*
 * test-session.c - a session built from parts (src/session/session.c),
 * the way every front-end builds one: each part checked for its grammar
 * as it comes (a caret error at the right position, a usage error's
 * exit status), the parts checked against each other, and the spec and
 * the recorder's options the session becomes. Messages are captured
 * through the session's diag, as a front-end receives them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "recorder/recorder.h"
#include "session/session.h"

/* what the diag received last, and how many */
static struct {
	enum trail_diag_level level;
	char msg[2048], what[128], input[1024];
	size_t pos;
	int caret, n;
} got;

static void capture(void *ctx, const struct trail_diag_msg *m)
{
	(void)ctx;
	got.n++;
	got.level = m->level;
	got.caret = m->input != NULL;
	snprintf(got.msg, sizeof(got.msg), "%s", m->msg);
	snprintf(got.what, sizeof(got.what), "%s", m->what ? m->what : "");
	snprintf(got.input, sizeof(got.input), "%s", m->input ? m->input : "");
	got.pos = m->pos;
}

static const struct trail_diag diag = {capture, NULL};

static void fresh(struct trail_session *S)
{
	memset(&got, 0, sizeof(got));
	trail_session_init(S, &diag);
}

/* the synthetic definitions the registry keeps: none (a private one,
 * gone when the tests end) */
static char regdir[] = "/tmp/trail-test-session-XXXXXX";

static void registry_gone(void)
{
	rmdir(regdir);
}

__attribute__((constructor)) static void private_registry(void)
{
	if (!mkdtemp(regdir))
		abort();
	setenv("TRAIL_REGISTRY", regdir, 1);
	atexit(registry_gone);
}

TEST(parts_checked_as_they_come)
{
	struct trail_session S;

	fresh(&S);
	CHECK_EQ(trail_session_event(&S, "app:req*"), 0);
	CHECK_EQ(got.n, 0);
	/* a bad event name: a caret under the bad character, a usage error */
	CHECK_EQ(trail_session_event(&S, "app:re q"), TRAIL_SESSION_USAGE);
	CHECK(got.caret);
	CHECK_STR(got.what, "bad event name");
	CHECK_STR(got.input, "app:re q");
	CHECK_EQ(got.pos, 6);
	/* a trigger's grammar: the caret in the trigger's own text */
	CHECK_EQ(trail_session_trigger(&S, "app:req:traceoff:x"), TRAIL_SESSION_USAGE);
	CHECK(got.caret);
	CHECK_STR(got.what, "trigger");
	CHECK(got.pos >= 8 && got.pos <= strlen("app:req:traceoff:x"));
	/* a synthetic definition's grammar */
	CHECK_EQ(trail_session_synth(&S, "lat u64"), TRAIL_SESSION_USAGE);
	CHECK_STR(got.what, "synth");
	/* a function glob */
	CHECK_EQ(trail_session_func(&S, 'l', "parse_[a"), TRAIL_SESSION_USAGE);
	CHECK_STR(got.what, "bad function glob");
	CHECK_EQ(trail_session_func(&S, 'l', "a b"), TRAIL_SESSION_USAGE);
	CHECK(!got.caret);
	CHECK_EQ(got.level, TRAIL_DIAG_USAGE);
	/* an unknown tracer */
	CHECK_EQ(trail_session_tracer(&S, "irqsoff"), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "unknown tracer 'irqsoff'") != NULL);
	trail_session_free(&S);
}

TEST(filters_follow_their_event)
{
	struct trail_session S;

	fresh(&S);
	CHECK_EQ(trail_session_filter(&S, "bytes > 1"), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "give that -e first") != NULL);
	CHECK_EQ(trail_session_event(&S, "app:req"), 0);
	CHECK_EQ(trail_session_filter(&S, "bytes > 1"), 0);
	CHECK_EQ(trail_session_filter(&S, "bytes < 9"), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "has a filter already") != NULL);
	CHECK_EQ(trail_session_filter(&S, "a\nb"), TRAIL_SESSION_USAGE);
	CHECK_EQ(S.nfilters, 1);
	CHECK_STR(S.filters[0], "@filter app:req bytes > 1");
	/* a trigger without its event takes the last pattern's */
	CHECK_EQ(trail_session_trigger(&S, "stacktrace"), 0);
	CHECK_STR(S.triggers[0], "@trigger app:req stacktrace");
	CHECK_EQ(S.stacktrace, 1);
	trail_session_free(&S);
}

TEST(parts_checked_together)
{
	static char *cmd[] = {"/bin/true", NULL};
	struct trail_session S;

	fresh(&S);
	CHECK_EQ(trail_session_validate(&S, cmd), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "no events selected") != NULL);
	trail_session_free(&S);

	fresh(&S);
	CHECK_EQ(trail_session_event(&S, "app:*"), 0);
	CHECK_EQ(trail_session_func(&S, 'l', "parse_*"), 0);
	CHECK_EQ(trail_session_validate(&S, cmd), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "-l, -n and -g select functions for a tracer") != NULL);
	trail_session_free(&S);

	fresh(&S);
	CHECK_EQ(trail_session_tracer(&S, "function"), 0);
	S.no_libcall = S.nest_libcall = 1;
	CHECK_EQ(trail_session_validate(&S, cmd), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "contradict") != NULL);
	trail_session_free(&S);

	fresh(&S);
	CHECK_EQ(trail_session_tracer(&S, "function"), 0);
	CHECK_EQ(trail_session_func(&S, 'g', "main"), 0);
	CHECK_EQ(trail_session_validate(&S, cmd), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "graph roots go with -p function_graph") != NULL);
	trail_session_free(&S);

	fresh(&S);
	CHECK_EQ(trail_session_event(&S, "app:*"), 0);
	CHECK_EQ(trail_session_trigger(&S, "snapshot"), 0);
	CHECK_EQ(trail_session_validate(&S, cmd), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "give --overwrite") != NULL);
	trail_session_free(&S);

	/* what is recorded: one of a command, processes and every process */
	fresh(&S);
	CHECK_EQ(trail_session_event(&S, "app:*"), 0);
	CHECK_EQ(trail_session_validate(&S, NULL), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "nothing to record") != NULL);
	trail_session_free(&S);
	fresh(&S);
	CHECK_EQ(trail_session_event(&S, "app:*"), 0);
	CHECK_EQ(trail_session_pid(&S, 1), 0);
	CHECK_EQ(trail_session_validate(&S, cmd), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "give one of a COMMAND, -P PID and -a") != NULL);
	trail_session_free(&S);
}

TEST(spec_and_recorder_options)
{
	static char *cmd[] = {"/bin/true", NULL};
	struct trail_recorder_opts o;
	struct trail_session S;

	fresh(&S);
	CHECK_EQ(trail_session_event(&S, "app:req"), 0);
	CHECK_EQ(trail_session_filter(&S, "bytes > 1"), 0);
	CHECK_EQ(trail_session_tracer(&S, "function_graph"), 0);
	CHECK_EQ(trail_session_func(&S, 'l', "parse_*"), 0);
	CHECK_EQ(trail_session_synth(&S, "lat u64 ns"), 0);
	CHECK_EQ(trail_session_synth(&S, "lat u64 ns"), TRAIL_SESSION_USAGE);
	CHECK(strstr(got.msg, "defined already") != NULL);
	CHECK_EQ(trail_session_trigger(&S, "app:req:hist:keys=bytes"), 0);
	S.overwrite = 1;
	CHECK_EQ(trail_session_validate(&S, cmd), 0);
	CHECK_EQ(S.nfuncs_user, 1);
	CHECK_EQ(trail_session_spec(&S), 0);
	/* the user's globs, then synthetic events, filters, triggers */
	CHECK_EQ(S.nfuncs, 4);
	CHECK_STR(S.funcs[0], "@l parse_*");
	CHECK_STR(S.funcs[1], "@synth lat u64 ns");
	CHECK_STR(S.funcs[2], "@filter app:req bytes > 1");
	CHECK_STR(S.funcs[3], "@trigger app:req hist:keys=bytes");
	trail_session_recorder_opts(&S, &o);
	CHECK_EQ(o.nevents, 1);
	CHECK_EQ(o.nfuncs, 4);
	CHECK_EQ(o.nfuncs_user, 1);
	CHECK_STR(o.tracer, "function_graph");
	CHECK_EQ(o.overwrite, 1);
	CHECK_EQ(o.patches, 1);
	CHECK(o.buffer_bytes >= 8192); /* the default, chosen by the recorder */
	CHECK(o.cmd == cmd);
	CHECK(o.log == NULL);
	trail_session_free(&S);
}

TEST_MAIN(CHECK_T(parts_checked_as_they_come), CHECK_T(filters_follow_their_event),
	  CHECK_T(parts_checked_together), CHECK_T(spec_and_recorder_options))
