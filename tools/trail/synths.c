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
#include "tool.h"

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

int synths_read(struct synth_list *l, char *err, size_t en)
{
	char path[600], *line = NULL;
	size_t cap = 0;
	int lineno = 0, r;
	FILE *f;

	if ((r = tool_registry_file("synthetic_events", path, sizeof(path), 0)))
		return r == -ENOENT ? 0 : r;
	if (!(f = fopen(path, "r")))
		return errno == ENOENT ? 0 : -errno;
	while (getline(&line, &cap, f) >= 0) {
		struct trail_synth d;
		struct trail_filter_err e;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!*line || *line == '#')
			continue;
		if (trail_synth_parse(line, &d, &e) || synths_add(l, &d)) {
			snprintf(err, en, "%s:%d: %s", path, lineno, e.msg);
			free(line);
			fclose(f);
			return -EINVAL;
		}
	}
	free(line);
	fclose(f);
	return 0;
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
	return tool_registry_replace("synthetic_events", format_def, (void *)l, err, en);
}
