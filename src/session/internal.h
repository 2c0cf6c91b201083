/* SPDX-License-Identifier: MIT */
/* internal.h - what the files of src/session share (session.h's model). */
#ifndef TRAIL_SESSION_INTERNAL_H
#define TRAIL_SESSION_INTERNAL_H

#include "session.h"

/* the session's synthetic event of that name: its index, or -1 */
int trail__sess_synth_find(const struct trail_session *S, const char *name);
/* ev (owned by the caller) appended to the event patterns: 0 or -1 */
int trail__sess_add_event(struct trail_session *S, char *ev);
/* line (then owned by S) appended to the spec's lines: 0 or -1 */
int trail__sess_add_line(struct trail_session *S, char *line);

#endif /* TRAIL_SESSION_INTERNAL_H */
