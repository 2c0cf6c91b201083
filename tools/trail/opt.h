/* SPDX-License-Identifier: MIT */
/*
 * opt.h - a subcommand's options as one table: a row per option, from
 * which the getopt_long short string and long-option array are made, the
 * usage errors are worded and the --help option lines are printed. The
 * subcommand keeps its own switch on the ids opt_next() returns.
 *
 *   static const struct opt_cmd report_opts = {
 *           .name = "report",
 *           .intro = "Usage: trail report [OPTIONS]\n\n...\n",
 *           .opts = (const struct opt[]){
 *                   {'i', "input", OPT_REQUIRED, "FILE", "trace file", 0, "a file"},
 *                   {0, "stat", OPT_NONE, NULL, "only the header", O_STAT, NULL},
 *                   OPT_HELP_ROW,
 *                   {0},
 *           },
 *   };
 *
 * Messages: "trail report: option -i needs a file", "... unknown option
 * '--bogus'", with "Try 'trail report --help'." (tool_usage_err), exit
 * status EXIT_USAGE.
 */
#ifndef TRAIL_TOOL_OPT_H
#define TRAIL_TOOL_OPT_H

#include <getopt.h>
#include <stdio.h>

enum opt_arg { OPT_NONE, OPT_REQUIRED, OPT_OPTIONAL };

/* opt_next()'s answers besides an option's id */
enum {
	OPT_END = -1,  /* no more options: optind is the first operand */
	OPT_EXIT = -2, /* --help printed or a usage error reported: return
			* the parser's status */
};

/* Ids of options without a short letter start here (above any char). */
#define OPT_LONG_ID 256
#define OPT_HELP_ID (OPT_LONG_ID - 1)

struct opt {
	char letter;        /* -x; 0: a long option only */
	const char *name;   /* --name; NULL: a short option only */
	enum opt_arg arg;
	const char *meta;   /* its value in --help: "FILE" */
	const char *help;   /* the --help text; each '\n' starts a line
			     * indented to the table's column */
	int id;             /* what opt_next() returns; 0: the letter */
	const char *needs;  /* "option -x needs <needs>" when the value is
			     * missing; NULL: "a value" */
};

/* Every table's -h, --help row: opt_next() prints the help itself. */
#define OPT_HELP_ROW {'h', "help", OPT_NONE, NULL, "this help", OPT_HELP_ID, NULL}

struct opt_cmd {
	const char *name;       /* "record": "trail record: ..." in messages */
	const char *intro;      /* usage lines and description: --help's
				 * head, before a blank line and the options */
	const struct opt *opts; /* ends with a row of zeros */
	int col;                /* column of the help text; 0: 3 spaces after
				 * the widest option */
	int in_order;           /* options end at the first operand (the
				 * command to run), as with getopt's '+' */
};

/* rows a table may have */
#define OPT_MAX 48

/* One parse of argv against a table; the getopt state (optarg, optind)
 * is getopt's own. */
struct opt_parser {
	const struct opt_cmd *cmd;
	int argc;
	char **argv;
	int status; /* after OPT_EXIT: 0 or EXIT_USAGE */
	char shorts[3 * OPT_MAX + 3];
	struct option longs[OPT_MAX + 1];
};

/* Make the getopt strings of cmd's table; the parse starts at argv[1]. */
void opt_init(struct opt_parser *p, const struct opt_cmd *cmd, int argc, char **argv);
/* The next option's id (its value in optarg), OPT_END or OPT_EXIT. */
int opt_next(struct opt_parser *p);
/* The --help text: intro, then a line (or more) per option. */
void opt_help(const struct opt_cmd *cmd, FILE *out);

#endif
