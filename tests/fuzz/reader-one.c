/* SPDX-License-Identifier: MIT */
/*
 * reader-one.c - the reader's whole work on one trace file, as the fuzz
 * target fuzz-reader.c and the fuzzer-less tests (tests/unit/test-mutate.c,
 * test-fuzz-inputs.c) run it: every record decoded and formatted, and
 * looked at the way `trail report` does (the next record of its stream,
 * its time, its first words as function addresses named from the file's
 * symbols), then every accessor called. What reader.h promises is checked
 * with FUZZ_ASSERT.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "tracefile/reader.h"

static volatile size_t sink; /* reads the compiler must keep */

/* What report and its function_graph layout ask of a record. */
static void like_report(const struct trail_reader *r, const struct trail_record *rec)
{
	struct trail_record next;
	uint64_t ip, off;
	const char *name;

	if (rec->stream && trail_reader_peek(r, rec->stream, &next))
		trail_reader_to_ns(r, next.ts_raw);
	trail_reader_to_ns(r, rec->ts_raw + 1000);
	for (uint32_t i = 0; rec->stream && i + 8 <= rec->len && i < 32; i += 8) {
		memcpy(&ip, rec->payload + i, 8);
		name = trail_reader_symbol(r, rec->stream->pid, ip, rec->ts_raw, &off);
		if (name)
			sink += strlen(name) + off;
	}
}

/* Every accessor; what reader.h promises of streams and messages. */
static void accessors(const struct trail_reader *r)
{
	const struct trail_rstream *const *st;
	const char *const *errs;
	const struct trail_rproc *procs;
	size_t n = trail_reader_streams(r, &st);

	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT(st[i]->order == i && memchr(st[i]->comm, 0, 16));
	n = trail_reader_errors(r, &errs);
	for (size_t i = 0; i < n; i++)
		sink += strlen(errs[i]);
	n = trail_reader_procs(r, &procs);

	for (size_t i = 0; i < n; i++)
		if (procs[i].exe) /* regress/reader/proc-exe-uninitialized */
			sink += strlen(procs[i].exe);
	for (uint32_t id = 0; id < 64; id++)
		trail_reader_event(r, id);
	trail_reader_header(r);
	trail_reader_complete(r);
	trail_reader_nostream_lost(r);
	trail_reader_graph_unhooked(r);
	trail_reader_info(r, "mode");
}

int fuzz_reader_one(const uint8_t *data, size_t size)
{
	struct trail_reader *r;
	struct trail_record rec;
	char err[256], path[64], buf[4096];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	size_t n = 0;

	if (fd < 0)
		return 0;
	if (trail_reader_open(path, &r, err, sizeof(err)) == 0) {
		while (trail_reader_next(r, &rec) > 0 && n++ < 1000000) {
			if (rec.type == TRAIL_RT_EVENT)
				trail_format_fields(rec.event, rec.payload, rec.len, buf,
						    sizeof(buf));
			like_report(r, &rec);
		}
		accessors(r);
		trail_reader_info(r, "command");
		trail_reader_close(r);
	}
	close(fd);
	return 0;
}
