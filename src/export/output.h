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

/* The file being exported, as every output sees it. */
struct trail_export_src {
	struct trail_reader *reader;
	const char *path; /* as the user named it */
	const struct trail_file_hdr *hdr;
	const struct trail_rstream *const *streams; /* by ->order */
	size_t nstreams;
	const struct trail_rproc *procs;
	size_t nprocs;
	char *err; /* an output's reason for its -errno, if it has one */
	size_t errlen;
};

struct trail_output {
	const char *name; /* "text", "fgraph", "count", later "ctf", ... */
	void *ctx;        /* the output's own state */
	int (*begin)(void *ctx, const struct trail_export_src *src);
	int (*event)(void *ctx, const struct trail_record *rec);
	/* optional: damage, as soon as the reader finds it */
	int (*damage)(void *ctx, const char *msg);
	int (*end)(void *ctx, const struct trail_export_src *src);
	void (*free)(void *ctx);
};

/* Feed every record of r to out, once, in time order. path names the file
 * in headers. Returns 0, or the first -errno of a callback with, when err is
 * given, its reason (or strerror's) there. The reader's own damage stays in
 * trail_reader_errors() for the caller as ever. */
int trail_export_run(struct trail_reader *r, const char *path, struct trail_output *out,
		     char *err, size_t errlen);

/* For outputs: a zeroed state of size bytes that starts with its struct
 * trail_output, a copy of ops with ctx set to it; NULL with errno if none. */
void *trail__output_new(size_t size, const struct trail_output *ops);

/* out->free(out->ctx); NULL does nothing. */
void trail_output_free(struct trail_output *out);

#endif /* TRAIL_EXPORT_OUTPUT_H */
