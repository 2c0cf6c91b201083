/* SPDX-License-Identifier: MIT */
/*
 * cmd-report.c - `trail report`: a trace file as ftrace/trace-cmd text.
 *
 *   cpus=2
 *   # entries-in-buffer/entries-written: 2000/2000   #P:2
 *   ...per-stream accounting...
 *   #           TASK-PID     CPU#      TIMESTAMP  FUNCTION
 *            example-4242  [001]  5012.104432: app:request: fd=3 path="/etc/hosts" bytes=0x200
 *
 * Damage in the file is reported on stderr with its offset after every
 * readable event has been printed, and makes the exit status 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/arena.h"
#include "../../src/reader/reader.h"
#include "fgraph.h"
#include "tool.h"

static const char report_help[] =
	"Usage: trail report [OPTIONS]\n"
	"\n"
	"Print a trace file recorded by 'trail record' in ftrace's text format,\n"
	"all threads merged in time order.\n"
	"\n"
	"  -i, --input FILE   trace file (default trace.dat)\n"
	"  -t                 nanosecond timestamps (default: microseconds)\n"
	"  -O fgraph:proc     function_graph: a TASK-TID column\n"
	"  -q, --quiet        no header, events only\n"
	"      --stat         only the header and accounting, no events\n"
	"  -h, --help         this help\n";

struct line {
	char *p, *end;
};

static void lput(struct line *l, const char *s, size_t n)
{
	if ((size_t)(l->end - l->p) < n)
		n = (size_t)(l->end - l->p);
	memcpy(l->p, s, n);
	l->p += n;
}

static void lpad(struct line *l, size_t n)
{
	while (n-- && l->p < l->end)
		*l->p++ = ' ';
}

static void lnum(struct line *l, uint64_t v, int width, char pad)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (width-- > n && l->p < l->end)
		*l->p++ = pad;
	while (n && l->p < l->end)
		*l->p++ = tmp[--n];
}

/* "%16s-%-7u [%03u] %6llu.%06llu: " */
static void prefix(struct line *l, const struct trail_record *rec, int ns_ts)
{
	const struct trail_rstream *st = rec->stream;
	size_t cl = strnlen(st->comm, 16);
	uint64_t sec = rec->ts_ns / 1000000000ull, frac = rec->ts_ns % 1000000000ull;
	char *mark;
	size_t w;

	lpad(l, cl < 16 ? 16 - cl : 0);
	lput(l, st->comm, cl);
	lput(l, "-", 1);
	mark = l->p;
	lnum(l, st->tid, 0, ' ');
	w = (size_t)(l->p - mark);
	lpad(l, w < 7 ? 7 - w : 0);
	lput(l, " [", 2);
	if (rec->cpu == ~0u)
		lput(l, "???", 3);
	else
		lnum(l, rec->cpu, 3, '0');
	lput(l, "] ", 2);
	lnum(l, sec, 6, ' ');
	lput(l, ".", 1);
	if (ns_ts)
		lnum(l, frac, 9, '0');
	else
		lnum(l, frac / 1000, 6, '0');
	lput(l, ": ", 2);
}

static int is_function(const struct trail_record *rec)
{
	const struct trail_meta *m = &rec->event->meta;

	return rec->len >= 16 && !strcmp(m->provider, "ftrace") && !strcmp(m->name, "function");
}

static void put_addr(struct line *l, struct trail_reader *r, uint32_t pid, uint64_t ip,
		     uint64_t ts)
{
	uint64_t off = 0;
	const char *name = trail_reader_symbol(r, pid, ip, ts, &off);
	char tmp[32];
	int n;

	if (name) {
		lput(l, name, strlen(name)); /* as ftrace: the name, no offset */
	} else {
		n = snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long)ip);
		lput(l, tmp, (size_t)n);
	}
}

/* ftrace's function tracer line: "func <-parent" */
static void function_line(struct line *l, struct trail_reader *r, const struct trail_record *rec)
{
	uint64_t ip, parent;

	memcpy(&ip, rec->payload, 8);
	memcpy(&parent, rec->payload + 8, 8);
	put_addr(l, r, rec->stream->pid, ip, rec->ts_raw);
	lput(l, " <-", 3);
	put_addr(l, r, rec->stream->pid, parent, rec->ts_raw);
}

static void print_header(struct trail_reader *r, const char *path, size_t max_streams)
{
	const struct trail_file_hdr *h = trail_reader_header(r);
	const struct trail_rstream *const *st;
	size_t n = trail_reader_streams(r, &st);
	uint64_t in = 0, lost = 0, nostream = trail_reader_nostream_lost(r);
	const char *v;

	printf("cpus=%u\n", h->ncpus);
	printf("# trail trace %s", path);
	if ((v = trail_reader_info(r, "command")) && *v)
		printf(" of: %s", v);
	printf("\n# clock: %s, mode: %s",
	       h->clock == TRAIL_CLOCK_TSC ? "tsc (shown as CLOCK_MONOTONIC)" : "CLOCK_MONOTONIC",
	       (h->flags & TRAIL_ARENA_OVERWRITE) ? "overwrite (flight recorder)" : "discard");
	if ((v = trail_reader_info(r, "buffer_bytes")))
		printf(", buffer: %llu KiB", strtoull(v, NULL, 10) / 1024);
	if ((v = trail_reader_info(r, "events")) && *v)
		printf(", events: %s", v);
	if ((v = trail_reader_info(r, "tracer")) && *v) {
		printf(", tracer: %s", v);
		if ((v = trail_reader_info(r, "functions")) && *v)
			printf(" %s", v);
	}
	printf("\n#\n");
	for (size_t i = 0; i < n; i++) {
		in += st[i]->in_file;
		lost += st[i]->dropped + st[i]->overwritten;
	}
	lost += nostream;
	printf("# entries-in-buffer/entries-written: %llu/%llu   #P:%u\n",
	       (unsigned long long)in, (unsigned long long)(in + lost), h->ncpus);
	if (trail_reader_graph_unhooked(r))
		printf("# function_graph: %llu calls deeper than a thread's shadow stack "
		       "(16384 frames) were not traced\n",
		       (unsigned long long)trail_reader_graph_unhooked(r));
	if (nostream)
		printf("# LOST %llu EVENTS with no stream (stream table full, or nested > 4 deep)\n",
		       (unsigned long long)nostream);
	printf("#\n# %-26s %6s %6s  %-35s %s\n", "TASK-PID/TID", "STREAM", "LEVEL",
	       "entries-in-buffer/entries-written", "lost");
	for (size_t i = 0; i < n; i++) {
		char task[64], counts[64];

		if (i == max_streams) {
			printf("# ... %zu more streams ('trail report --stat' lists them all)\n",
			       n - i);
			break;
		}
		uint64_t l = st[i]->dropped + st[i]->overwritten;

		snprintf(task, sizeof(task), "%.16s-%u/%u", st[i]->comm, st[i]->pid, st[i]->tid);
		if (st[i]->final)
			snprintf(counts, sizeof(counts), "%llu/%llu",
				 (unsigned long long)st[i]->in_file,
				 (unsigned long long)(st[i]->in_file + l));
		else
			snprintf(counts, sizeof(counts), "%llu/?", (unsigned long long)st[i]->in_file);
		printf("# %-26s %6u %6u  %-35s ", task, st[i]->order, st[i]->level, counts);
		if (st[i]->final)
			printf("%llu", (unsigned long long)l);
		else
			printf("? (no final accounting)");
		if (l && st[i]->dropped)
			printf(" (%llu dropped: buffer full)", (unsigned long long)st[i]->dropped);
		if (st[i]->overwritten)
			printf(" (%llu overwritten)", (unsigned long long)st[i]->overwritten);
		printf("\n");
	}
	printf("#\n#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
	       "#              | |         |         |         |\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"input", required_argument, NULL, 'i'},
		{"quiet", no_argument, NULL, 'q'},
		{"stat", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = "trace.dat";
	struct trail_reader *r;
	struct trail_record rec;
	const char *const *errs;
	char err[512], *obuf;
	int c, ns_ts = 0, quiet = 0, stat_only = 0, rc = 0, graph_proc = 0, graph = -1;
	struct fgraph *fg = NULL;
	size_t nerr;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:tqO:h", opts, NULL)) != -1) {
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
		case 'S':
			stat_only = 1;
			break;
		case 'O':
			if (strcmp(optarg, "fgraph:proc")) {
				tool_usage_err("report", "unknown -O option '%s' (known: fgraph:proc)",
					       optarg);
				return EXIT_USAGE;
			}
			graph_proc = 1;
			break;
		case 'h':
			fputs(report_help, stdout);
			return 0;
		default:
			if (optopt == 'i')
				tool_usage_err("report", "option -i needs a file");
			else
				tool_usage_err("report", "unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		tool_usage_err("report", "unexpected argument '%s' (the file goes after -i)",
			       argv[optind]);
		return EXIT_USAGE;
	}
	if (trail_reader_open(path, &r, err, sizeof(err))) {
		tool_err("%s", err);
		return 1;
	}
	obuf = malloc(1 << 20);
	if (obuf)
		setvbuf(stdout, obuf, _IOFBF, 1 << 20);
	if (!quiet)
		print_header(r, path, stat_only ? (size_t)-1 : 64);
	while (!stat_only && trail_reader_next(r, &rec) > 0) {
		char buf[16384];
		struct line l = {buf, buf + sizeof(buf) - 1};

		/* a function_graph recording is shown in its own layout */
		if (graph < 0) {
			graph = rec.type == TRAIL_RT_EVENT && fgraph_is_graph(&rec);
			if (graph) {
				fg = fgraph_new(r, graph_proc);
				if (!quiet)
					printf("# tracer: function_graph\n#\n# CPU)%s  DURATION      |  FUNCTION CALLS\n"
					       "#  |  %s   |   |          |   |   |   |\n",
					       graph_proc ? "           TASK-TID     " : "",
					       graph_proc ? "              |         " : "");
			}
		}
		if (fg) {
			fgraph_record(fg, &rec, stdout);
			continue;
		}
		prefix(&l, &rec, ns_ts);
		if (rec.type == TRAIL_RT_LOST) {
			char tmp[64];
			int k = snprintf(tmp, sizeof(tmp), "[LOST %llu EVENTS]",
					 (unsigned long long)rec.lost);
			lput(&l, tmp, (size_t)k);
		} else if (is_function(&rec)) {
			function_line(&l, r, &rec);
		} else {
			const struct trail_meta *m = &rec.event->meta;

			lput(&l, m->provider, strlen(m->provider));
			lput(&l, ":", 1);
			lput(&l, m->name, strlen(m->name));
			lput(&l, ": ", 2);
			l.p += trail_format_fields(rec.event, rec.payload, rec.len, l.p,
						   (size_t)(l.end - l.p) + 1);
		}
		*l.p++ = '\n';
		fwrite(buf, 1, (size_t)(l.p - buf), stdout);
	}
	fgraph_free(fg);
	fflush(stdout);
	nerr = trail_reader_errors(r, &errs);
	for (size_t i = 0; i < nerr; i++)
		tool_err("%s: %s", path, errs[i]);
	if (nerr)
		rc = 1;
	if (!trail_reader_complete(r) && !nerr) {
		tool_err("%s: the recording did not finish (no end section): events "
			 "are complete up to the last chunk, the loss accounting may not be",
			 path);
		rc = 1;
	}
	trail_reader_close(r);
	if (ferror(stdout))
		rc = 1;
	return rc; /* obuf stays: stdout may still flush through it at exit */
}
