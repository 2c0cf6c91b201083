/* SPDX-License-Identifier: MIT */
/*
 * stress-check.c - checks a trace of tests/stress/stress against the counts
 * the program itself wrote:
 *
 *   - conservation, per thread and exactly: events written (ev + sig) ==
 *     events in the file + events counted lost (dropped + overwritten);
 *     in overwrite mode a stream of a thread that ended may have had every
 *     event overwritten: the file then counts it in END's gone totals, not
 *     per stream, and what the threads miss must add up to them exactly;
 *   - every stream's in-file count equals the records actually decoded;
 *   - stress:ev sequence numbers of a thread are strictly increasing, each
 *     at most once; in overwrite mode they are a contiguous newest suffix
 *     (ending with the last one written) unless events were also dropped;
 *   - the file is complete and undamaged.
 *
 *   stress-check TRACE COUNTS_FILE discard|overwrite
 *
 * Prints TAP lines; exit status 1 if any check failed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tracefile/reader.h"

#define MAX_THREADS 64
#define MAX_STREAMS 1024

struct th {
	int tid;
	long ev, sig;
	/* from the trace */
	uint64_t in_file, lost, dropped, decoded_ev, decoded_sig;
	int64_t last_ev, first_ev;
	int order_ok;
	uint64_t ev_seen;
};

static int failures;

static void check(int ok, const char *what, int idx)
{
	printf("%s - %s (thread %d)\n", ok ? "ok" : "not ok", what, idx);
	if (!ok)
		failures++;
}

int main(int argc, char **argv)
{
	struct th th[MAX_THREADS] = {{0}};
	int n = 0, overwrite;
	struct trail_reader *r;
	struct trail_record rec;
	const struct trail_rstream *const *st;
	uint64_t decoded[MAX_STREAMS] = {0};
	const char *const *errs;
	char err[512], line[256];
	uint64_t missing = 0, gone, gone_streams;
	size_t ns, nerr;
	FILE *f;

	if (argc != 4)
		return 2;
	overwrite = !strcmp(argv[3], "overwrite");
	f = fopen(argv[2], "r");
	if (!f)
		return 2;
	while (n < MAX_THREADS && fgets(line, sizeof(line), f)) {
		int idx;

		if (sscanf(line, "thread %d tid %d ev %ld sig %ld", &idx, &th[n].tid,
			   &th[n].ev, &th[n].sig) == 4) {
			th[n].last_ev = -1;
			th[n].first_ev = -1;
			th[n].order_ok = 1;
			n++;
		}
	}
	fclose(f);
	if (trail_reader_open(argv[1], &r, err, sizeof(err))) {
		printf("not ok - open trace: %s\n", err);
		return 1;
	}
	while (trail_reader_next(r, &rec) > 0) {
		const struct trail_meta *m;
		uint32_t idx;
		uint64_t seq;

		if (rec.type != TRAIL_RT_EVENT)
			continue;
		if (rec.stream->order < MAX_STREAMS)
			decoded[rec.stream->order]++;
		m = &rec.event->meta;
		if (strcmp(m->provider, "stress") || rec.len < 12)
			continue;
		memcpy(&idx, rec.payload, 4);
		memcpy(&seq, rec.payload + 4, 8);
		if (idx >= (uint32_t)n)
			continue;
		if (!strcmp(m->name, "ev")) {
			struct th *t = &th[idx];

			if ((int64_t)seq <= t->last_ev)
				t->order_ok = 0;
			if (t->first_ev < 0)
				t->first_ev = (int64_t)seq;
			t->last_ev = (int64_t)seq;
			t->decoded_ev++;
		} else {
			th[idx].decoded_sig++;
		}
	}
	ns = trail_reader_streams(r, &st);
	for (size_t s = 0; s < ns; s++) {
		int ok = st[s]->order < MAX_STREAMS && decoded[st[s]->order] == st[s]->in_file;

		if (!ok)
			printf("# stream %zu tid %u: in_file %" PRIu64 " decoded %" PRIu64 "\n", s,
			       st[s]->tid, st[s]->in_file, decoded[st[s]->order]);
		for (int i = 0; i < n; i++)
			if ((int)st[s]->tid == th[i].tid) {
				th[i].in_file += st[s]->in_file;
				th[i].lost += st[s]->dropped + st[s]->overwritten;
				th[i].dropped += st[s]->dropped;
			}
		if (!ok) {
			printf("not ok - stream in-file count matches its records\n");
			failures++;
		}
	}
	for (int i = 0; i < n; i++) {
		struct th *t = &th[i];
		uint64_t written = (uint64_t)(t->ev + t->sig);

		printf("# thread %d tid %d: written %" PRIu64 " (ev %ld sig %ld) in file %" PRIu64
		       " lost %" PRIu64 " decoded ev %" PRIu64 " sig %" PRIu64 "\n",
		       i, t->tid, written, t->ev, t->sig, t->in_file, t->lost, t->decoded_ev,
		       t->decoded_sig);
		if (overwrite && written > t->in_file + t->lost) {
			/* streams overwritten entirely: counted below */
			printf("# thread %d: %" PRIu64 " events in streams overwritten entirely\n", i,
			       written - t->in_file - t->lost);
			missing += written - t->in_file - t->lost;
		} else {
			check(written == t->in_file + t->lost, "written == in file + lost", i);
		}
		check(t->decoded_ev + t->decoded_sig == t->in_file, "decoded == in file", i);
		check(t->order_ok, "event sequence strictly increasing", i);
		if (overwrite && t->decoded_ev && !t->dropped) {
			/* nothing dropped: the kept ev events are last-k .. last */
			int contiguous = t->last_ev == t->ev - 1 &&
					 (uint64_t)(t->last_ev - t->first_ev + 1) == t->decoded_ev;
			check(contiguous, "overwrite keeps a contiguous newest suffix", i);
		}
	}
	gone = trail_reader_gone_lost(r, &gone_streams);
	printf("# %" PRIu64 " events of %" PRIu64 " streams overwritten entirely\n", gone,
	       gone_streams);
	printf("%s - events missing from the threads' streams == the file's gone totals\n",
	       missing == gone && (!gone) == (!gone_streams) ? "ok" : "not ok");
	if (missing != gone || (!gone) != (!gone_streams))
		failures++;
	nerr = trail_reader_errors(r, &errs);
	for (size_t i = 0; i < nerr; i++)
		printf("# damage: %s\n", errs[i]);
	printf("%s - trace complete and undamaged\n",
	       !nerr && trail_reader_complete(r) ? "ok" : "not ok");
	if (nerr || !trail_reader_complete(r))
		failures++;
	trail_reader_close(r);
	return failures ? 1 : 0;
}
