/* SPDX-License-Identifier: MIT */
/*
 * spec.h - which events a session wants: trace-cmd's -e grammar.
 *
 *   all | *            every event
 *   SYS:EVENT          both parts globs (*, ?, [set], [!set])
 *   NAME               a system named NAME (all its events) or an event
 *                      named NAME in any system; NAME may be a glob
 *
 * A spec is such patterns, one per line. Matching allocates nothing and is
 * async-signal-safe: libtrail runs it in its control signal handler.
 */
#ifndef TRAIL_COMMON_SPEC_H
#define TRAIL_COMMON_SPEC_H

#include <stddef.h>

#define TRAIL_SPEC_MAX 4096 /* bytes of a session's spec */

/* Glob match of a whole string; pattern and string not NUL-terminated. */
int trail__glob(const char *pat, size_t plen, const char *s, size_t slen);

/* Does one pattern (plen bytes) select provider:name? */
int trail__spec_match1(const char *pat, size_t plen, const char *provider,
		       const char *name);

/* Does any line of the spec select provider:name? */
int trail__spec_match(const char *spec, const char *provider, const char *name);

/* Is this a well-formed pattern? Returns 0, or the offset of the first bad
 * character + 1 (for a caret) with *why set. */
size_t trail__spec_check(const char *pat, const char **why);

#endif /* TRAIL_COMMON_SPEC_H */
