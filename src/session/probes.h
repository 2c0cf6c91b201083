/* SPDX-License-Identifier: MIT */
/*
 * probes.h - dynamic events on the CLI side: the user's definitions file
 * (the twin of the kernel's dynamic_events: the registry directory's
 * "dynamic_events", mode 0600, one normalized definition per line), and
 * compiling definitions for the objects of a program or a process (its
 * functions' patchable entries, globals, DWARF, static events) into the
 * "@probe HEX" spec lines libtrail runs.
 */
#ifndef TRAIL_TOOL_PROBES_H
#define TRAIL_TOOL_PROBES_H

#include <stddef.h>
#include <sys/types.h>

#include "../probe/probe.h"

struct probe_list {
	struct probe_def *defs;
	int n;
};

/* The definitions file's path (the registry directory made if asked). */
int probes_file(char *path, size_t n, int create);
/* Read it (a missing file: none). A line that does not parse: -EINVAL,
 * err naming the line. */
int probes_read(struct probe_list *l, char *err, size_t en);
/* Replace it with l (written aside, renamed into place). */
int probes_write(const struct probe_list *l, char *err, size_t en);
/* Add one parsed definition (taken over) / free all. */
int probes_add(struct probe_list *l, struct probe_def *d);
void probes_free(struct probe_list *l);
/* Remove (and free) definition i. */
void probes_remove(struct probe_list *l, int i);
/* The index of the definition of GRP/EVENT (or EVENT in any group), -1. */
int probes_find(const struct probe_list *l, const char *name);

/* A recording uses these kept events ("GRP:EVENT"), until it ends (or
 * dies); which recording (pid) uses d, 0: none. */
int probes_mark_in_use(char *const *names, int n);
void probes_unmark_in_use(void);
pid_t probes_in_use(const struct probe_def *d);

/* What a program or a process is made of, for compiling. */
struct ptarget;
/* exe: a program to start (its libraries as the loader finds them);
 * pid: a running process (its mapped objects). */
int ptarget_program(struct ptarget **t, const char *exe, char *err, size_t en);
int ptarget_pid(struct ptarget **t, pid_t pid, char *err, size_t en);
/* one object file (trail probe -x) */
int ptarget_object(struct ptarget **t, const char *path, char *err, size_t en);
void ptarget_free(struct ptarget *t);

/*
 * Compile d for t (all: every definition of the recording, for eprobes on
 * probe events). *line: "@probe HEX" (malloc'd); *resolved: the
 * definition with raw fetch-args (malloc'd). Returns 0; -ENOENT when d's
 * function is in none of t's objects (e filled in: the caller decides
 * whether that is an error); -EINVAL with e (caret into d->text).
 */
int ptarget_compile(struct ptarget *t, const struct probe_def *d, const struct probe_list *all,
		    char **line, char **resolved, struct probe_err *e);

/* Each USDT / SDT probe of t's objects (usdt.h): cb(ctx, object, p),
 * stopping at a nonzero answer, which it returns. */
struct usdt_probe;
int ptarget_usdt_each(struct ptarget *t,
		      int (*cb)(void *ctx, const char *obj, const struct usdt_probe *p),
		      void *ctx);
/* A USDT probe of object obj as the event sdt_PROVIDER:NAME for t: *d
 * its definition (probe_def_free it), *line the spec's "@probe HEX".
 * 0, or -errno with e (an argument that cannot be read, an address that
 * cannot be probed). */
int ptarget_usdt_compile(struct ptarget *t, const char *obj, const struct usdt_probe *p,
			 struct probe_def *d, char **line, struct probe_err *e);

/* Is SYS:EVENT a static event of t? The object declaring it, or NULL. */
const char *ptarget_static_event(struct ptarget *t, const char *sys, const char *event);

#endif /* TRAIL_TOOL_PROBES_H */
