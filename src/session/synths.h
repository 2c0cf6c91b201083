/* SPDX-License-Identifier: MIT */
/*
 * synths.h - the user's synthetic event definitions (the twin of the
 * kernel's synthetic_events file): the registry directory's
 * "synthetic_events", mode 0600, one normalized definition per line.
 * `trail synth` edits it; a recording takes the definitions its -e and
 * -T name (record --synth adds one for that recording only).
 */
#ifndef TRAIL_TOOL_SYNTHS_H
#define TRAIL_TOOL_SYNTHS_H

#include <stddef.h>

#include "../common/synth.h"

struct synth_list {
	struct trail_synth *defs;
	int n;
};

/* Read the file (missing: none). A line that does not parse: -EINVAL,
 * err naming it. */
int synths_read(struct synth_list *l, char *err, size_t en);
/* Replace the file with l (written aside, renamed into place). */
int synths_write(const struct synth_list *l, char *err, size_t en);
/* Add a copy of d (-ENOMEM); the index of name's definition (-1). */
int synths_add(struct synth_list *l, const struct trail_synth *d);
int synths_find(const struct synth_list *l, const char *name);
void synths_free(struct synth_list *l);

#endif /* TRAIL_TOOL_SYNTHS_H */
