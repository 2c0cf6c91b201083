/* SPDX-License-Identifier: MIT */
/*
 * output.h - the one interface every view of a trace file is written to:
 * report's text layouts (text.c, fgraph.c) today, CTF, Perfetto, Chrome
 * JSON, folded stacks and summaries next. An output knows nothing of how
 * records are found: trail_export_run() opens no file, it takes an open
 * reader, runs its merge loop once and feeds the output
 *
 *     begin(src)  event(rec) event(rec) ... [damage(msg)] ...  end(src)  free
 *
 * with the records of all streams merged in time order, each once. An event source added later (probes, eprobes, synthetic
 * events) is one more trail_revent in the file: outputs handle it with no
 * change, as they handle every event by its description.
 *
 * What an output can reach, from the src given to begin() (valid until
 * end() returns):
 *
 *   identity    rec->stream: one writer thread (pid, tid, comm, handler
 *               level; ->order is its dense index in src->streams, for
 *               per-stream state in an array); src->procs: each process
 *               (ppid, comm, exe, how it started and ended)
 *   events      rec->event: provider, name and the typed fields of the
 *               payload (rec->event->meta.fields over rec->payload);
 *               trail_format_fields() gives ftrace's text of them; every
 *               event of the file up front: trail_reader_event(src->reader,
 *               id) for id < trail_reader_event_ids(src->reader)
 *   clock       rec->ts_ns is CLOCK_MONOTONIC nanoseconds, rec->ts_raw the
 *               recorded tick (src->hdr->clock says which clock ticked);
 *               trail_reader_to_ns() converts a span given in ticks
 *   symbols     trail_reader_symbol(src->reader, rec->stream->pid, ip,
 *               rec->ts_raw, &off): objects come and go, so by time
 *   lookahead   trail_reader_peek(src->reader, rec->stream, &next): the
 *               stream's next record (function_graph's leaf calls)
 *   loss        TRAIL_RT_LOST records, in their stream at their place;
 *               per-stream totals in src->streams[i]->dropped and
 *               ->overwritten (->final: known), events lost with no
 *               stream: trail_reader_nostream_lost(); CPUs: src->hdr->ncpus
 *   damage      the reader's messages (file offset and what was skipped),
 *               to damage() as they are found, if the output has one;
 *               trail_reader_damaged_events(): the count the END section
 *               has that could not be read
 *   recording   trail_reader_info(src->reader, "command" | "events" |
 *               "tracer" | ...), src->path
 *
 * Callbacks return 0 to go on, TRAIL_OUTPUT_DONE when the output wants no
 * more records (begin() of a header-only view: the file's records are then
 * not even read), or -errno: feeding stops and the driver returns it, with
 * a message in src->err when the output wrote one. end() is called when
 * begin() succeeded, whatever happened after, so a file format can be
 * closed properly. Outputs write only where their options say (a FILE *
 * or a directory the CLI gives); they never print to stderr or exit.
 *
 * Ownership: the creator of an output frees it with trail_output_free()
 * (which calls its free(ctx): the built-in outputs are one allocation, ctx
 * holding the struct trail_output); the reader, src and records belong to
 * the driver and its caller.
 */
#ifndef TRAIL_EXPORT_OUTPUT_H
#define TRAIL_EXPORT_OUTPUT_H

#include <stddef.h>

#include "../tracefile/reader.h"

#define TRAIL_OUTPUT_DONE 1

/*
 * Calls. An output with a call() callback gets function_graph data as
 * calls, paired by the driver (view.c), with the view's selection applied,
 * instead of the raw ftrace:funcgraph_* records (which then never reach
 * its event()):
 *
 *   ENTRY  a call begins; things happen inside it (children, events) and
 *          its EXIT comes later, in the same stream
 *   EXIT   the innermost open call of its stream ends: start and end known
 *   LEAF   a whole call with nothing shown inside it, entry and exit at once
 *          (ftrace's "func();" line)
 *
 * In one stream, ENTRY/EXIT nest properly and every ENTRY gets its EXIT
 * (at the end of the trace, or of --time-range, or at a loss in its
 * stream, the view closes what is open: flag OPEN, end = the last time
 * known). Across streams the order is time order, except that a call the
 * view must wait on (a --graph-time-thresh call whose duration is not yet
 * known) comes out late, with the records of its stream queued behind it:
 * per stream the order is always kept.
 *
 * The function tracer's ftrace:function records are events (they have no
 * duration); record-time threshold calls (ftrace:funcgraph_call) are
 * LEAFs with flag THRESH: start = end - duration, depth 0, their children
 * unknown (they were not recorded).
 */
enum trail_call_kind {
	TRAIL_CALL_ENTRY = 1,
	TRAIL_CALL_EXIT = 2,
	TRAIL_CALL_LEAF = 3,
};

#define TRAIL_CALL_NOSTART 0x1u /* EXIT: entered before what the file (or the
				 * view's time range) holds: a forked child's
				 * inherited frame, an entry lost or before
				 * --time-range; start_ns is 0, no duration */
#define TRAIL_CALL_OPEN 0x2u    /* EXIT made by the view, not a return: the
				 * trace or the time range ended, or events
				 * were lost in the stream (then a LOST record
				 * follows); end_ns is the last time known */
#define TRAIL_CALL_RETVAL 0x4u  /* retval holds the return value */
#define TRAIL_CALL_THRESH 0x8u  /* a record-time threshold call (see above) */
#define TRAIL_CALL_ARGS 0x10u   /* ENTRY, LEAF: args holds the integer argument
				 * registers at entry (record --args) */
#define TRAIL_CALL_COUNTERS 0x20u /* EXIT, LEAF: ctr holds the call's counter
				   * deltas (record --counters) */

struct trail_call {
	int kind; /* enum trail_call_kind */
	unsigned flags;
	const struct trail_rstream *stream;
	uint32_t cpu;          /* of the record that made it; ~0u unknown */
	uint32_t depth;        /* calls of this stream shown around it */
	uint64_t func;         /* the function's address */
	const char *name;      /* its symbol, or NULL (then print func) */
	uint64_t start_ns;     /* CLOCK_MONOTONIC ns (0 with NOSTART) */
	uint64_t end_ns;       /* EXIT, LEAF */
	uint64_t ts_raw;       /* the clock tick of the record that made it */
	uint64_t child_ns;     /* EXIT: time in the children shown, so self
				* time is end - start - child_ns */
	uint64_t retval;       /* with TRAIL_CALL_RETVAL */
	uint64_t args[6];      /* with TRAIL_CALL_ARGS */
	/* with TRAIL_CALL_COUNTERS: nctr counters, named by ctr_ev's fields
	 * 1..nctr (synthetic:funcgraph_counters: trail_call_counter_name),
	 * their deltas over the call and their counts at its entry */
	uint32_t nctr;
	const struct trail_revent *ctr_ev;
	uint64_t ctr[8], ctr_at[8];
};

/* Counter i of c's (TRAIL_CALL_COUNTERS): perf's name (page-faults), or
 * the field's when not one of counters.h's */
const char *trail_call_counter_name(const struct trail_call *c, unsigned i);
/* Is counter i a time in nanoseconds (task-clock, cpu-clock)? */
int trail_call_counter_is_ns(const struct trail_call *c, unsigned i);

/* What to show, for every view (report, --summary, every export format):
 * the same options read the same way everywhere. Zeroed: everything. */
struct trail_filter_err;

struct trail_view {
	size_t sz; /* sizeof(struct trail_view) */
	/* functions, trace-cmd's -l/-n/-g at record time, on symbol names
	 * (globs): -l only these calls (nested among themselves), -n not these
	 * (their children stay), -g these and everything they call */
	const char *const *only, *const *notrace, *const *graph;
	size_t nonly, nnotrace, ngraph;
	/* threads: a stream is shown if it matches one of each list given */
	const uint32_t *tids, *pids;
	const char *const *comms; /* globs on the thread's name */
	size_t ntids, npids, ncomms;
	/* time: records in [start_ns, end_ns] (CLOCK_MONOTONIC); rel_start /
	 * rel_end: the bound is an offset from the file's first record */
	uint64_t start_ns, end_ns;
	int has_start, has_end, rel_start, rel_end;
	uint32_t max_depth;   /* calls deeper than this are not shown; 0: all */
	uint64_t thresh_ns;   /* calls shorter than this are not shown (their
			       * parents are); 0: all */
	/* progress: called about every 2^20 records with the records read so
	 * far and the file offset reached */
	void (*progress)(void *arg, uint64_t records, uint64_t offset);
	void *progress_arg;
	/* event filters, each "EVENT" or "EVENT: FILTER" (EVENT: -e's
	 * pattern, FILTER: the kernel's grammar, src/common/filter.h): an
	 * event is shown if the first of them whose pattern names it has no
	 * filter or one it passes; an event none names is not shown. The
	 * function tracers' records are not filtered (their calls are). A
	 * filter that does not compile for an event fails the run (-EINVAL)
	 * with *filter_err filled and *filter_which its index. */
	const char *const *filters;
	size_t nfilters;
	struct trail_filter_err *filter_err;
	size_t *filter_which;
};

struct trail_viewer;

/* The file being exported, as every output sees it. */
struct trail_export_src {
	struct trail_reader *reader;
	const char *path; /* as the user named it */
	const struct trail_file_hdr *hdr;
	const struct trail_rstream *const *streams; /* by ->order */
	size_t nstreams;
	const struct trail_rproc *procs;
	size_t nprocs;
	const struct trail_view *view; /* never NULL: zeroed if none given */
	struct trail_viewer *viewer;   /* the driver's (view.c) */
	char *err; /* an output's reason for its -errno, if it has one */
	size_t errlen;
};

struct trail_output {
	const char *name; /* "text", "fgraph", "count", later "ctf", ... */
	void *ctx;        /* the output's own state */
	int (*begin)(void *ctx, const struct trail_export_src *src);
	int (*event)(void *ctx, const struct trail_record *rec);
	/* optional: function_graph data as calls (see above) */
	int (*call)(void *ctx, const struct trail_call *call);
	/* with call: only whole calls are wanted (EXIT and LEAF; no ENTRY,
	 * and a call with children may come as an EXIT or a LEAF alike):
	 * what a table of calls needs, for less work per call */
	int whole_calls;
	/* with call: the calls' counters records (record --counters) come as
	 * events too, not only as the EXIT's ctr */
	int counter_records;
	/* optional: damage, as soon as the reader finds it */
	int (*damage)(void *ctx, const char *msg);
	int (*end)(void *ctx, const struct trail_export_src *src);
	void (*free)(void *ctx);
};

/* Feed every record of r to out, once, in time order, as view selects
 * (NULL: everything). path names the file in headers. Returns 0, or the
 * first -errno of a callback with, when err is given, its reason (or
 * strerror's) there. The reader's own damage stays in
 * trail_reader_errors() for the caller as ever. */
int trail_export_run(struct trail_reader *r, const char *path, const struct trail_view *view,
		     struct trail_output *out, char *err, size_t errlen);

/* trail_reader_symbol() through the driver's cache of names by address:
 * what outputs call for an address (the function tracer's ip/parent_ip). */
const char *trail_export_symbol(const struct trail_export_src *src, uint32_t pid, uint64_t ip,
				uint64_t ts_raw);

/* The function tracers' events: ftrace:funcgraph_* (what the view turns
 * into calls, for outputs with call()) and ftrace:function (a call
 * without a duration, {ip, parent_ip}). */
int trail_export_is_graph(const struct trail_revent *ev);
int trail_export_is_function(const struct trail_revent *ev);
/* An ftrace:function record: 1 with its ip and parent_ip, else 0. */
int trail_export_function(const struct trail_record *rec, uint64_t *ip, uint64_t *parent);

/* For outputs: a zeroed state of size bytes that starts with its struct
 * trail_output, a copy of ops with ctx set to it; NULL with errno if none. */
void *trail__output_new(size_t size, const struct trail_output *ops);

/* out->free(out->ctx); NULL does nothing. */
void trail_output_free(struct trail_output *out);

#endif /* TRAIL_EXPORT_OUTPUT_H */
