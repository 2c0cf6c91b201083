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
#include <sys/stat.h>

#include "../../src/common/arena.h"
#include "../../src/tracefile/reader.h"
#include "fgraph.h"
#include "lbuf.h"
#include "opt.h"
#include "tool.h"

enum { O_STAT = OPT_LONG_ID, O_COUNT };

static const struct opt_cmd report_opts = {
	.name = "report",
	.intro = "Usage: trail report [OPTIONS]\n"
		 "\n"
		 "Print a trace file recorded by 'trail record' in ftrace's text format,\n"
		 "all threads merged in time order.\n",
	.opts = (const struct opt[]){
		{'i', "input", OPT_REQUIRED, "FILE", "trace file (default trace.dat)", 0, "a file"},
		{'t', NULL, OPT_NONE, NULL, "nanosecond timestamps (default: microseconds)", 0, NULL},
		{'O', NULL, OPT_REQUIRED, "fgraph:proc", "function_graph: a TASK-TID column", 0, NULL},
		{'q', "quiet", OPT_NONE, NULL, "no header, events only", 0, NULL},
		{0, "stat", OPT_NONE, NULL, "only the header and accounting, no events", O_STAT, NULL},
		{0, "count", OPT_NONE, NULL, "records of each event instead of the events", O_COUNT, NULL},
		OPT_HELP_ROW,
		{0},
	},
};

/* "%16s-%-7u [%03u] %6llu.%06llu: " */
static void prefix(struct lbuf *l, const struct trail_record *rec, int ns_ts)
{
	const struct trail_rstream *st = rec->stream;
	size_t cl = strnlen(st->comm, 16);
	uint64_t sec = rec->ts_ns / 1000000000ull, frac = rec->ts_ns % 1000000000ull;

	lb_pad(l, cl < 16 ? 16 - cl : 0, ' ');
	lb_put(l, st->comm, cl);
	lb_put(l, "-", 1);
	lb_num_left(l, st->tid, 7);
	lb_put(l, " [", 2);
	if (rec->cpu == ~0u)
		lb_put(l, "???", 3);
	else
		lb_num(l, rec->cpu, 3, '0');
	lb_put(l, "] ", 2);
	lb_num(l, sec, 6, ' ');
	lb_put(l, ".", 1);
	if (ns_ts)
		lb_num(l, frac, 9, '0');
	else
		lb_num(l, frac / 1000, 6, '0');
	lb_put(l, ": ", 2);
}

static int is_function(const struct trail_record *rec)
{
	const struct trail_meta *m = &rec->event->meta;

	return rec->len >= 16 && !strcmp(m->provider, "ftrace") && !strcmp(m->name, "function");
}

static void put_addr(struct lbuf *l, struct trail_reader *r, uint32_t pid, uint64_t ip,
		     uint64_t ts)
{
	const char *name = trail_reader_symbol(r, pid, ip, ts, NULL);

	if (name)
		lb_str(l, name); /* as ftrace: the name, no offset */
	else
		lb_hex(l, (unsigned long long)ip);
}

/* ftrace's function tracer line: "func <-parent" */
static void function_line(struct lbuf *l, struct trail_reader *r, const struct trail_record *rec)
{
	uint64_t ip, parent;

	memcpy(&ip, rec->payload, 8);
	memcpy(&parent, rec->payload + 8, 8);
	put_addr(l, r, rec->stream->pid, ip, rec->ts_raw);
	lb_put(l, " <-", 3);
	put_addr(l, r, rec->stream->pid, parent, rec->ts_raw);
}

static void print_header(struct trail_reader *r, const char *path, size_t max_streams)
{
	const struct trail_file_hdr *h = trail_reader_header(r);
	const struct trail_rstream *const *st;
	size_t n = trail_reader_streams(r, &st);
	uint64_t in = 0, lost = 0, nostream = trail_reader_nostream_lost(r);
	uint64_t damaged = trail_reader_damaged_events(r);
	const char *v;

	printf("cpus=%u\n", h->ncpus);
	printf("# trail trace %s", path);
	if ((v = trail_reader_info(r, "command")) && *v)
		printf(" of: %s", v);
	printf("\n# clock: %s, mode: %s",
	       h->clock == TRAIL_CLOCK_TSC ? "tsc (shown as CLOCK_MONOTONIC)" : "CLOCK_MONOTONIC",
	       (h->flags & TRAIL_ARENA_OVERWRITE) ? "overwrite (flight recorder)" : "discard");
	if ((v = trail_reader_info(r, "blocking_timeout")))
		printf(" (blocking up to %s)", v);
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
	       (unsigned long long)in, (unsigned long long)(in + lost + damaged), h->ncpus);
	if (damaged)
		printf("# DAMAGED: %llu events written could not be read (the file is damaged: "
		       "see the messages on stderr)\n", (unsigned long long)damaged);
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

struct evcount {
	const struct trail_revent *ev;
	uint64_t n;
};

static int evcount_cmp(const void *a, const void *b)
{
	const struct trail_meta *x = &((const struct evcount *)a)->ev->meta;
	const struct trail_meta *y = &((const struct evcount *)b)->ev->meta;
	int d = strcmp(x->provider, y->provider);

	return d ? d : strcmp(x->name, y->name);
}

/* --count: the records of each event, and the LOST records' sum */
static void count_events(struct trail_reader *r)
{
	struct evcount *v = NULL;
	size_t n = 0, last = 0;
	uint64_t lost = 0, lost_recs = 0;
	struct trail_record rec;

	while (trail_reader_next(r, &rec) > 0) {
		if (rec.type == TRAIL_RT_LOST) {
			lost += rec.lost;
			lost_recs++;
			continue;
		}
		if (rec.type != TRAIL_RT_EVENT)
			continue;
		if (last < n && v[last].ev == rec.event) {
			v[last].n++;
			continue;
		}
		for (last = 0; last < n && v[last].ev != rec.event; last++)
			;
		if (last == n) {
			struct evcount *nv = realloc(v, (n + 1) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			v[n++] = (struct evcount){rec.event, 0};
		}
		v[last].n++;
	}
	if (n)
		qsort(v, n, sizeof(*v), evcount_cmp);
	printf("# %-38s %s\n", "EVENT", "RECORDS");
	for (size_t i = 0; i < n; i++) {
		char name[256];

		snprintf(name, sizeof(name), "%s:%s", v[i].ev->meta.provider, v[i].ev->meta.name);
		printf("  %-38s %llu\n", name, (unsigned long long)v[i].n);
	}
	if (lost_recs)
		printf("  %-38s %llu (%llu events)\n", "[LOST]", (unsigned long long)lost_recs,
		       (unsigned long long)lost);
	free(v);
}

/* No FILE, but a FILE.part: a recorder was killed while writing it. */
static void unfinished_hint(const char *path)
{
	struct stat st;
	char *part = NULL;

	if (stat(path, &st) == 0 || asprintf(&part, "%s.part", path) < 0)
		return;
	if (stat(part, &st) == 0)
		fprintf(stderr, "  %s is an unfinished recording (its recorder was killed?): "
			"trail report -i %s\n", part, part);
	free(part);
}

int cmd_report(int argc, char **argv)
{
	const char *path = "trace.dat";
	struct trail_reader *r;
	struct trail_record rec;
	const char *const *errs;
	char *err, *obuf;
	size_t errlen;
	int c, ns_ts = 0, quiet = 0, stat_only = 0, rc = 0, graph_proc = 0, graph = -1, count = 0;
	struct fgraph *fg = NULL;
	size_t nerr;
	struct opt_parser op;

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
		case 'O':
			if (strcmp(optarg, "fgraph:proc")) {
				tool_usage_err("report", "unknown -O option '%s' (known: fgraph:proc)",
					       optarg);
				return EXIT_USAGE;
			}
			graph_proc = 1;
			break;
		case OPT_EXIT:
			return op.status;
		}
	}
	if (optind < argc) {
		tool_usage_err("report", "unexpected argument '%s' (the file goes after -i)",
			       argv[optind]);
		return EXIT_USAGE;
	}
	if (!*path) {
		tool_usage_err("report", "-i needs a file name, not an empty one");
		return EXIT_USAGE;
	}
	/* room for the whole path and the reason, however long the path */
	errlen = strlen(path) + 512;
	err = malloc(errlen);
	if (!err)
		return 1;
	if (trail_reader_open(path, &r, err, errlen)) {
		tool_err("%s", err);
		unfinished_hint(path);
		free(err);
		return 1;
	}
	free(err);
	obuf = malloc(1 << 20);
	if (obuf)
		setvbuf(stdout, obuf, _IOFBF, 1 << 20);
	if (!quiet)
		print_header(r, path, stat_only ? (size_t)-1 : 64);
	if (count)
		count_events(r);
	while (!stat_only && !count && trail_reader_next(r, &rec) > 0) {
		struct lbuf l;

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
		lb_init(&l, stdout);
		prefix(&l, &rec, ns_ts);
		if (rec.type == TRAIL_RT_LOST) {
			lb_put(&l, "[LOST ", 6);
			lb_num(&l, (unsigned long long)rec.lost, 0, ' ');
			lb_put(&l, " EVENTS]", 8);
		} else if (is_function(&rec)) {
			function_line(&l, r, &rec);
		} else {
			const struct trail_meta *m = &rec.event->meta;

			lb_str(&l, m->provider);
			lb_put(&l, ":", 1);
			lb_str(&l, m->name);
			lb_put(&l, ": ", 2);
			/* the fields in place, as much as the line holds */
			l.n += trail_format_fields(rec.event, rec.payload, rec.len, l.b + l.n,
						   sizeof(l.b) - l.n);
		}
		lb_end(&l);
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
