/* SPDX-License-Identifier: MIT */
/*
 * spec.h - which events a session wants: trace-cmd's -e grammar.
 *
 *   all | *            every event
 *   SYS:EVENT          both parts globs (*, ?, [set], [!set])
 *   NAME               a system named NAME (all its events) or an event
 *                      named NAME in any system; NAME may be a glob
 *
 * A spec is such patterns, one per line. Lines starting with '@' are
 * session options instead ("@tracer function_graph", "@l parse_*", ...:
 * a key, one space, a value) and select no event. Matching allocates
 * nothing and is async-signal-safe: libtrail runs it in its control signal
 * handler.
 */
#ifndef TRAIL_COMMON_SPEC_H
#define TRAIL_COMMON_SPEC_H

#include <stddef.h>

/* The most bytes a session's spec takes: its patterns and options, and
 * each probe's compiled program (a few hundred bytes a probe: thousands
 * of probes fit). The recorder and libtrail hold it in memory sized to
 * what it holds; this bounds what a process takes from a shared arena. */
#define TRAIL_SPEC_MAX (64u << 20)

/* Glob match of a whole string; pattern and string not NUL-terminated. */
int trail__glob(const char *pat, size_t plen, const char *s, size_t slen);

/*
 * A function pattern (-l, -n, -g): FUNC or FUNC@OBJECT, each part a glob.
 * OBJECT matches the object's file name (a path's last component), whole
 * or up to one of its dots: libsqlite3.so.0 and libsqlite3 match
 * libsqlite3.so.0.8.6, python3 matches python3.11. obj may be a path or
 * NULL (no object: only FUNC patterns match).
 */
int trail__func_glob(const char *pat, size_t plen, const char *name, const char *obj);
/* ... the OBJECT part alone: does it match obj (a path or a file name)? */
int trail__obj_glob(const char *pat, size_t plen, const char *obj);

/* Does one pattern (plen bytes) select provider:name? */
int trail__spec_match1(const char *pat, size_t plen, const char *provider,
		       const char *name);

/* Does any line of the spec select provider:name? */
int trail__spec_match(const char *spec, const char *provider, const char *name);

/* Calls fn(value, len, arg) for each "@key value" line of the spec, in
 * order; stops and returns fn's value when it is not 0. */
int trail__spec_opts(const char *spec, const char *key,
		     int (*fn)(const char *value, size_t len, void *arg), void *arg);

/* The value of the last "@key value" line into buf (NUL-terminated,
 * truncated to n - 1); 1 if there was one, else 0. */
int trail__spec_opt(const char *spec, const char *key, char *buf, size_t n);

/* Are the [...] sets of a glob well formed? 0, or the offset of the bad
 * '[' or ']' + 1 with *why set. */
size_t trail__glob_check(const char *pat, size_t len, const char **why);

/* Is this a well-formed pattern? Returns 0, or the offset of the first bad
 * character + 1 (for a caret) with *why set. */
size_t trail__spec_check(const char *pat, const char **why);

#endif /* TRAIL_COMMON_SPEC_H */
