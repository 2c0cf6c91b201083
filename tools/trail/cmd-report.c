/* SPDX-License-Identifier: MIT */
/*
 * cmd-report.c - `trail report`: a trace file as ftrace/trace-cmd text.
 * The options pick an output of src/export (the text layouts are text.c
 * and fgraph.c there), and trail_export_run() feeds it the file's records.
 *
 * Damage in the file is reported on stderr with its offset after every
 * readable event has been printed, and makes the exit status 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/export/output.h"
#include "../../src/export/summary.h"
#include "../../src/export/text.h"
#include "../../src/tracefile/reader.h"
#include "opt.h"
#include "tool.h"
#include "viewopt.h"

enum { O_STAT = OPT_LONG_ID, O_COUNT, O_SUMMARY, O_BY, O_SORT, O_REFCOUNT };

static const struct opt_cmd report_opts = {
	.name = "report",
	.intro = "Usage: trail report [OPTIONS]\n"
		 "\n"
		 "Print a trace file recorded by 'trail record' in ftrace's text format,\n"
		 "all threads merged in time order.\n",
	.opts = (const struct opt[]){
		{'i', "input", OPT_REQUIRED, "FILE", "trace file (default trace.dat), a core dump, or - (stdin)", 0, "a file"},
		{'t', NULL, OPT_NONE, NULL,
		 "nanosecond timestamps (default: microseconds);\n"
		 "function_graph: a TIME column, in nanoseconds", 0, NULL},
		{'F', NULL, OPT_REQUIRED, "'EVENT[: FILTER]'", "the same as --filter (trace-cmd's -F)", 0,
		 NULL},
		{'O', NULL, OPT_REQUIRED, "fgraph:OPT",
		 "function_graph: proc (a TASK-TID column),\n"
		 "abstime (a TIME column; repeatable)", 0, NULL},
		{'q', "quiet", OPT_NONE, NULL, "no header, events only", 0, NULL},
		{0, "stat", OPT_NONE, NULL, "only the header and accounting, no events", O_STAT, NULL},
		{0, "count", OPT_NONE, NULL, "records of each event instead of the events", O_COUNT, NULL},
		{0, "summary", OPT_NONE, NULL,
		 "a table instead of the events: per function calls,\n"
		 "total, self, avg/min/max time; per event count, rate", O_SUMMARY, NULL},
		{0, "by", OPT_REQUIRED, "thread|process", "--summary: a row per function and thread or process",
		 O_BY, NULL},
		{0, "sort", OPT_REQUIRED, "COLUMN",
		 "--summary: total (default), self, calls, avg, min,\n"
		 "max (biggest first) or name", O_SORT, NULL},
		{0, "refcount", OPT_REQUIRED, "SPEC",
		 "gets and puts paired per object instead of the events:\n"
		 "get=SYS:EVENT:FIELD,put=...[,use=...]: unbalanced\n"
		 "objects with their gets' stacks, uses after put", O_REFCOUNT, "a spec"},
		VIEWOPT_ROWS,
		OPT_HELP_ROW,
		{0},
	},
};

int cmd_report(int argc, char **argv)
{
	const char *path = "trace.dat";
	struct trail_reader *r;
	struct trail_text_opts topts = {.sz = sizeof(topts), .out = stdout};
	struct trail_output *out;
	struct tool_wfile w;
	char *err;
	size_t errlen;
	int run = 0, c, ns_ts = 0, quiet = 0, stat_only = 0, rc = 0, graph_proc = 0, count = 0;
	int abstime = 0, summary = 0, by = -1, sort = -1;
	const char *refcount = NULL;
	size_t nerr;
	struct opt_parser op;
	struct viewopt vo;
	struct stat st;

	viewopt_init(&vo);
	opt_init(&op, &report_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END) {
		switch (c) {
		case 'i':
			path = optarg;
			break;
		case 't':
			ns_ts = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case O_STAT:
			stat_only = 1;
			break;
		case O_COUNT:
			count = 1;
			break;
		case O_REFCOUNT:
			refcount = optarg;
			break;
		case O_SUMMARY:
			summary = 1;
			break;
		case O_BY:
			by = !strcmp(optarg, "thread") ? TRAIL_SUMMARY_BY_THREAD :
			     !strcmp(optarg, "process") ? TRAIL_SUMMARY_BY_PROCESS :
			     !strcmp(optarg, "function") ? TRAIL_SUMMARY_BY_FUNCTION : -2;
			if (by == -2) {
				tool_usage_err("report", "--by needs thread, process or function, not '%s'",
					       optarg);
				viewopt_free(&vo);
				return EXIT_USAGE;
			}
			break;
		case O_SORT: {
			static const char *const cols[] = {"total", "self", "calls", "avg",
							   "min", "max", "name"};

			for (sort = 0; sort < 7 && strcmp(cols[sort], optarg); sort++)
				;
			if (sort == 7) {
				tool_usage_err("report", "--sort needs total, self, calls, avg, min, max or "
					       "name, not '%s'", optarg);
				viewopt_free(&vo);
				return EXIT_USAGE;
			}
			break;
		}
		case 'F':
			if (viewopt_take(&vo, "report", VO_FILTER, optarg) < 0) {
				viewopt_free(&vo);
				return EXIT_USAGE;
			}
			break;
		case 'O':
			if (!strcmp(optarg, "fgraph:proc")) {
				graph_proc = 1;
			} else if (!strcmp(optarg, "fgraph:abstime")) {
				abstime = 1;
			} else {
				tool_usage_err("report", "unknown -O option '%s' (known: fgraph:proc, "
					       "fgraph:abstime)", optarg);
				viewopt_free(&vo);
				return EXIT_USAGE;
			}
			break;
		case OPT_EXIT:
			viewopt_free(&vo);
			return op.status;
		default:
			if (viewopt_take(&vo, "report", c, optarg) < 0) {
				viewopt_free(&vo);
				return EXIT_USAGE;
			}
		}
	}
	if (optind < argc) {
		tool_usage_err("report", "unexpected argument '%s' (the file goes after -i)",
			       argv[optind]);
		viewopt_free(&vo);
		return EXIT_USAGE;
	}
	if (refcount) {
		viewopt_free(&vo);
		return report_refcount(path, refcount);
	}
	if ((by >= 0 || sort >= 0) && !summary) {
		tool_usage_err("report", "%s is for --summary", by >= 0 ? "--by" : "--sort");
		viewopt_free(&vo);
		return EXIT_USAGE;
	}
	if (summary && (count || stat_only)) {
		tool_usage_err("report", "--summary and --%s are two different tables: one at a time",
			       count ? "count" : "stat");
		viewopt_free(&vo);
		return EXIT_USAGE;
	}
	if (!*path) {
		tool_usage_err("report", "-i needs a file name, not an empty one");
		viewopt_free(&vo);
		return EXIT_USAGE;
	}
	/* room for the whole path and the reason, however long the path */
	errlen = strlen(path) + 512;
	err = malloc(errlen);
	if (!err) {
		viewopt_free(&vo);
		return 1;
	}
	if (viewopt_open(path, &r, err, errlen)) {
		free(err);
		viewopt_free(&vo);
		return 1;
	}
	if (tool_wfile_open(&w, 1, "standard output")) {
		tool_err("report: %s", strerror(errno));
		trail_reader_close(r);
		free(err);
		viewopt_free(&vo);
		return 1;
	}
	topts.out = w.f;
	topts.ns_ts = ns_ts;
	topts.quiet = quiet;
	topts.stat = stat_only;
	topts.graph_proc = graph_proc;
	topts.graph_abstime = abstime || ns_ts;
	if (summary) {
		struct trail_summary_opts so = {
			.sz = sizeof(so), .out = w.f, .by = by < 0 ? 0 : by,
			.sort = sort < 0 ? TRAIL_SUMMARY_SORT_TOTAL : sort,
		};

		out = trail_output_summary_create(&so);
		quiet = 0; /* the progress line: a summary is printed at the end */
	} else {
		out = count ? trail_output_count_create(&topts) : trail_output_text_create(&topts);
	}
	/* a progress line when the text goes elsewhere than the terminal */
	if (!quiet && (summary || !isatty(1)) && stat(path, &st) == 0)
		viewopt_progress(&vo, "report", (uint64_t)st.st_size);
	if (!out) {
		tool_err("report: %s", strerror(errno));
		rc = 1;
	} else if ((run = trail_export_run(r, path, &vo.v, out, err, errlen)) < 0) {
		rc = 1;
	}
	viewopt_progress_done(&vo);
	/* a failed write is said by the stream that saw its cause (the
	 * output's message would only echo it) */
	if (tool_wfile_close(&w, "report"))
		rc = 1;
	else if (run < 0 && !viewopt_filter_failed(&vo, "report"))
		tool_err("%s: %s", path, err);
	viewopt_free(&vo);
	trail_output_free(out);
	free(err);
	nerr = viewopt_damage(path, r);
	if (nerr)
		rc = 1;
	if (!trail_reader_complete(r) && !nerr) {
		tool_err("%s: the recording did not finish (no end section): events "
			 "are complete up to the last chunk, the loss accounting may not be",
			 path);
		rc = 1;
	}
	trail_reader_close(r);
	return rc;
}
