/* SPDX-License-Identifier: MIT */
/*
 * synths.c - the synthetic event definitions file (synths.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synths.h"
#include "regfile.h"

int synths_add(struct synth_list *l, const struct trail_synth *d)
{
	struct trail_synth *g = realloc(l->defs, (size_t)(l->n + 1) * sizeof(*g));

	if (!g)
		return -ENOMEM;
	l->defs = g;
	l->defs[l->n++] = *d;
	return 0;
}

int synths_find(const struct synth_list *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->defs[i].name, name))
			return i;
	return -1;
}

void synths_free(struct synth_list *l)
{
	free(l->defs);
	l->defs = NULL;
	l->n = 0;
}

static int read_def(void *arg, const char *line, char *msg, size_t mn)
{
	struct trail_synth d;
	struct trail_filter_err e;

	if (trail_synth_parse(line, &d, &e)) {
		snprintf(msg, mn, "%s", e.msg);
		return -1;
	}
	return synths_add(arg, &d);
}

int synths_read(struct synth_list *l, char *err, size_t en)
{
	return trail__regfile_read("synthetic_events", read_def, l, err, en);
}

static int format_def(void *arg, int i, char *buf, size_t n)
{
	const struct synth_list *l = arg;

	if (i >= l->n)
		return 0;
	trail_synth_describe(&l->defs[i], buf, n);
	return 1;
}

int synths_write(const struct synth_list *l, char *err, size_t en)
{
	return trail__regfile_replace("synthetic_events", format_def, (void *)l, err, en);
}
