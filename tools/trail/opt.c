/* SPDX-License-Identifier: MIT */
/*
 * opt.c - a subcommand's option table turned into getopt_long's strings,
 * its usage errors and its --help lines; see opt.h.
 */
#include <assert.h>
#include <string.h>

#include "opt.h"
#include "tool.h"

static int row_id(const struct opt *o)
{
	return o->id ? o->id : o->letter;
}

/* The row getopt means by c (or optopt): the letter of a short option,
 * the id of a long one. */
static const struct opt *row_of(const struct opt_cmd *cmd, int c)
{
	for (const struct opt *o = cmd->opts; o->letter || o->name; o++)
		if (o->letter == c || row_id(o) == c)
			return o;
	return NULL;
}

void opt_init(struct opt_parser *p, const struct opt_cmd *cmd, int argc, char **argv)
{
	static const int has_arg[] = {
		[OPT_NONE] = no_argument,
		[OPT_REQUIRED] = required_argument,
		[OPT_OPTIONAL] = optional_argument,
	};
	char *s = p->shorts;
	size_t nl = 0;

	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	if (cmd->in_order)
		*s++ = '+';
	*s++ = ':'; /* a missing value is told from an unknown option */
	for (const struct opt *o = cmd->opts; o->letter || o->name; o++) {
		assert(nl < OPT_MAX);
		/* a long-only row's id must not be taken for a letter */
		assert(o->letter || o->id >= OPT_LONG_ID);
		if (o->letter) {
			*s++ = o->letter;
			for (int i = 0; i < (int)o->arg; i++)
				*s++ = ':'; /* "x:" required, "x::" optional */
		}
		if (o->name)
			p->longs[nl++] = (struct option){o->name, has_arg[o->arg], NULL, row_id(o)};
	}
	*s = '\0';
	opterr = 0;
}

int opt_next(struct opt_parser *p)
{
	const struct opt_cmd *cmd = p->cmd;
	const struct opt *o;
	int c = getopt_long(p->argc, p->argv, p->shorts, p->longs, NULL);

	o = c == -1 || c == ':' || c == '?' ? NULL : row_of(cmd, c);
	if (o)
		c = row_id(o);
	switch (c) {
	case -1:
		return OPT_END;
	case OPT_HELP_ID:
		opt_help(cmd, stdout);
		p->status = 0;
		return OPT_EXIT;
	case ':': {
		char name[64];

		/* getopt knows the option: optopt is its id. Named by its
		 * letter when it has one, however it was written. */
		o = row_of(cmd, optopt);
		if (o->letter)
			snprintf(name, sizeof(name), "-%c", o->letter);
		else
			snprintf(name, sizeof(name), "--%s", o->name);
		tool_usage_err(cmd->name, "option %s needs %s", name,
			       o->needs ? o->needs : "a value");
		p->status = EXIT_USAGE;
		return OPT_EXIT;
	}
	case '?':
		/* optopt: an unknown letter, or 0 for an unknown long option,
		 * or the id of a long option given a value it does not take:
		 * those two are named as written */
		if (optopt && !row_of(cmd, optopt))
			tool_usage_err(cmd->name, "unknown option '-%c'", optopt);
		else
			tool_usage_err(cmd->name, "unknown option '%s'", p->argv[optind - 1]);
		p->status = EXIT_USAGE;
		return OPT_EXIT;
	}
	return c;
}

/* "  -b, --buffer-size KB", "      --stat", "  -O fgraph:proc" */
static int left(const struct opt *o, char *buf, size_t n)
{
	const char *meta = o->meta ? o->meta : "";
	const char *sep = !o->meta ? "" : o->arg == OPT_OPTIONAL ? (o->name ? "[=" : "[") : " ";
	const char *end = o->meta && o->arg == OPT_OPTIONAL ? "]" : "";
	char sh[8] = "    ";

	if (o->letter)
		snprintf(sh, sizeof(sh), "-%c%s", o->letter, o->name ? ", " : "");
	return snprintf(buf, n, "  %s%s%s%s%s%s", sh, o->name ? "--" : "",
			o->name ? o->name : "", sep, meta, end);
}

void opt_help(const struct opt_cmd *cmd, FILE *out)
{
	char buf[128];
	int col = cmd->col;

	if (!col) {
		for (const struct opt *o = cmd->opts; o->letter || o->name; o++) {
			int w = left(o, buf, sizeof(buf));

			col = w + 3 > col ? w + 3 : col;
		}
	}
	fprintf(out, "%s\n", cmd->intro);
	for (const struct opt *o = cmd->opts; o->letter || o->name; o++) {
		const char *h = o->help;
		int w = left(o, buf, sizeof(buf));

		/* text past the column starts two spaces after the option */
		fprintf(out, "%s%*s", buf, w > col - 2 ? 2 : col - w, "");
		for (;;) {
			size_t len = strcspn(h, "\n");

			fprintf(out, "%.*s\n", (int)len, h);
			if (!h[len])
				break;
			h += len + 1;
			fprintf(out, "%*s", col, "");
		}
	}
}
