/* SPDX-License-Identifier: MIT */
/*
 * finish.c - the end of a recording: tell writers the session stops,
 * detach every process, drain and salvage what is left (the committed
 * part of chunks owned by processes that died or did not answer), then
 * write the final PROC, STREAM, CLOCK and END sections, whose counts make
 * the file's accounting exact (written = read + lost, per stream). Also
 * the figures the caller shows while recording and after.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/trigger.h"
#include "internal.h"

static void write_streams(struct trail_recorder *R)
{
	for (uint32_t i = 0; i < R->m.g.max_streams; i++) {
		const struct trail_stream *st = shm_stream(&R->m, i);
		uint32_t state = __atomic_load_n(&st->state, __ATOMIC_ACQUIRE);

		if (state != TRAIL_SS_LIVE && state != TRAIL_SS_EXITED)
			continue;
		if (!R->stream_seen[i] && !st->dropped && !st->overwritten)
			continue;
		if (trail__rec_keep_holds(R, i)) /* written by the keeper */
			continue;
		trail__rec_write_stream(R, i);
	}
}

/* The END section: the file's totals (R's), complete. */
static void write_end(struct trail_recorder *R)
{
	struct trail_arena_hdr *hdr = shm_hdr(&R->m);
	struct trail_sec_end end;

	memset(&end, 0, sizeof(end));
	end.chunks = R->chunks;
	end.events = R->ev_total;
	end.nostream_lost = __atomic_load_n(&hdr->nostream_lost, __ATOMIC_RELAXED);
	end.noevent_lost = __atomic_load_n(&hdr->noevent_lost, __ATOMIC_RELAXED);
	end.bad_chunks = R->bad_chunks;
	end.complete = 1;
	end.procs_refused = shm_procs_refused(&R->m);
	end.graph_unhooked = __atomic_load_n(&hdr->graph_unhooked, __ATOMIC_RELAXED);
	trail__rec_keep_gone(R, &end.gone_streams, &end.gone_dropped, &end.gone_overwritten);
	tfw_section(&R->out, TRAIL_SEC_END, &end, sizeof(end), NULL, 0);
}

/*
 * The snapshot trigger: what the flight recorder holds now, into a file
 * of its own, OUTPUT.N (N from 1), while the recording goes on. Its state
 * is a copy of R's with the per-file parts fresh (which events, modules,
 * streams and symbols that file has, its totals); the arena is only read,
 * each published chunk held while it is copied and then put back.
 */
/* into path; said as snapshot N (0: not said, a private file): 0 or -errno */
static int snapshot_to(struct trail_recorder *R, const char *path, uint32_t N)
{
	struct trail_recorder *S = malloc(sizeof(*S));
	uint32_t n = shm_nprocs(&R->m);
	int err;

	if (!S) {
		if (N)
			rec_warn(R, "snapshot %u: out of memory", N);
		return -ENOMEM;
	}
	memcpy(S, R, sizeof(*S));
	memset(&S->out, 0, sizeof(S->out));
	S->event_done = calloc(R->m.g.max_events, 1);
	S->stream_seen = calloc(R->m.g.max_streams, 1);
	S->slot_lost = calloc(R->m.g.max_streams, sizeof(*S->slot_lost));
	S->slot_gen = calloc(R->m.g.max_streams, sizeof(*S->slot_gen));
	S->slot_written = calloc(R->m.g.max_streams, 1);
	S->mods_gone = NULL;
	S->symc = NULL;
	S->nsymc = 0;
	S->mods_seen = 0;
	S->syncs_written = 0;
	S->pending = NULL;
	S->ev_total = S->chunks = S->bytes = S->bad_chunks = S->lost_written = 0;
	if (!S->event_done || !S->stream_seen || !S->slot_lost || !S->slot_gen ||
	    !S->slot_written)
		S->out.err = -ENOMEM;
	else if (!trail_recorder_open(S, path))
		trail_recorder_begin(S);
	else if (!S->out.err)
		S->out.err = -EIO;
	for (uint32_t i = 0; i < n && !S->out.err; i++)
		if (R->pt[i].announced)
			trail__rec_write_proc(S, i, __atomic_load_n(&shm_proc(&R->m, i)->state,
								     __ATOMIC_ACQUIRE));
	if (!S->out.err) {
		trail__rec_write_events(S);
		trail__rec_write_modules(S);
		trail__rec_copy_chunks(S);
		trail__rec_write_hists(S); /* (the tables as they stand: the mount's hist files) */
		write_streams(S);
		trail__rec_add_sync(S);
		trail__rec_write_clock(S);
		write_end(S);
	}
	if (S->out.err && N)
		rec_warn(R, "snapshot %u (%s): %s", N, path, strerror(-S->out.err));
	else if (!S->out.err && !trail_recorder_close(S, 1) && N)
		rec_info(R, "snapshot %u: %llu events in %s", N, (unsigned long long)S->ev_total,
			 path);
	err = S->out.err;
	if (S->out.fd > 0 && S->out.err)
		trail_recorder_close(S, 0);
	for (size_t i = 0; i < S->nsymc; i++)
		free(S->symc[i].path);
	free(S->symc);
	free(S->mods_gone);
	free(S->event_done);
	free(S->stream_seen);
	free(S->slot_lost);
	free(S->slot_gen);
	free(S->slot_written);
	free(S);
	return err;
}

static void snapshot(struct trail_recorder *R)
{
	char *path = NULL;

	if (asprintf(&path, "%s.%u", R->out.path, R->nsnaps + 1) < 0) {
		rec_warn(R, "snapshot %u: out of memory", R->nsnaps + 1);
		return;
	}
	snapshot_to(R, path, R->nsnaps + 1);
	R->nsnaps++;
	free(path);
}

int trail_recorder_snapshot_file(struct trail_recorder *R, const char *path)
{
	return snapshot_to(R, path, 0);
}

void trail__rec_snapshots(struct trail_recorder *R)
{
	uint32_t want = __atomic_load_n(&shm_hdr(&R->m)->snapshots, __ATOMIC_ACQUIRE);

	/* the requests made since the last one: one file answers them all */
	if (want != R->snaps_asked) {
		if (want - R->snaps_asked > 1)
			rec_info(R, "snapshot %u answers %u snapshot triggers", R->nsnaps + 1,
				 want - R->snaps_asked);
		R->snaps_asked = want;
		snapshot(R);
	}
}

/* The end of the file: each process's last state, the event
 * descriptions, modules, histograms, streams' accounting, a last clock
 * pairing, END. */
static void write_tail(struct trail_recorder *R, uint32_t n)
{
	for (uint32_t i = 0; i < n && !R->out.err; i++)
		if (R->pt[i].announced)
			trail__rec_write_proc(R, i, __atomic_load_n(&shm_proc(&R->m, i)->state,
								     __ATOMIC_ACQUIRE));
	trail__rec_write_events(R);
	trail__rec_write_modules(R);
	trail__rec_write_hists(R);
	write_streams(R);
	trail__rec_keep_streams(R, 1);
	trail__rec_add_sync(R); /* (offline: none, the arena's is the one) */
	trail__rec_write_clock(R);
	write_end(R);
}

void trail_recorder_finish(struct trail_recorder *R)
{
	struct trail_arena_hdr *hdr = shm_hdr(&R->m);
	uint32_t n;

	__atomic_store_n(&hdr->stopping, 1, __ATOMIC_RELEASE);
	trail__rec_snapshots(R);
	trail__rec_check_procs(R);
	if (!R->out.err && !R->o.overwrite)
		trail__rec_drain(R);
	trail_recorder_detach(R);
	trail__rec_snapshots(R); /* (asked while detaching) */
	trail__rec_check_procs(R);
	if (!R->out.err)
		trail__rec_drain(R);
	n = shm_nprocs(&R->m);
	for (uint32_t i = 0; i < n; i++)
		if (!R->out.err && (R->pt[i].dead || R->pt[i].stuck))
			trail__rec_salvage(R, i, R->pt[i].dead);
	/* overwrite mode: what writers reclaimed of the keeper's chunks
	 * before the drain took the rest */
	trail__rec_keep_reconcile(R);
	for (uint32_t i = 0; i < n; i++) {
		const struct trail_proc *pr = shm_proc(&R->m, i);
		uint32_t refused = __atomic_load_n(&pr->refused, __ATOMIC_RELAXED);

		if (refused)
			rec_warn(R, "process %u (%.16s): %u event%s registered after it joined "
				 "(a library loaded later, a user event) left off: a -f filter or -T trigger "
				 "does not compile for %s fields, or more than %d -T select %s",
				 pr->pid, pr->comm, refused, refused == 1 ? "" : "s",
				 refused == 1 ? "its" : "their", TRAIL_TRIG_PER_EVENT,
				 refused == 1 ? "it" : "one");
	}
	write_tail(R, n);
}

void trail_recorder_finish_offline(struct trail_recorder *R)
{
	struct trail_arena_hdr *hdr = shm_hdr(&R->m);
	uint32_t n = shm_nprocs(&R->m), kept = 0;

	hdr->stopping = 1;
	/* a flight recorder's keeper takes over the streams of threads
	 * that ended (keep.c): their slots given back, their counts and
	 * which chunks are whose in its own memory, gone with it. What the
	 * arena still holds of them is read (packed chunks among it). */
	for (uint32_t i = 0; R->o.overwrite && i < R->m.g.nchunks; i++) {
		const struct trail_chunk_hdr *c = shm_chunk(&R->m, i);

		if (c && (c->flags & (TRAIL_CHF_ADOPTED | TRAIL_CHF_PACK)))
			kept++;
	}
	if (R->o.overwrite)
		rec_warn(R, "a flight recorder's core: the threads that ended before the dump were its "
			 "recorder's to keep (%u chunk%s of theirs marked in the buffer): their records "
			 "may be fewer than its file would have held, their losses not counted",
			 kept, kept == 1 ? "" : "s");
	/* every process is gone: what it committed is salvaged, by the
	 * rules of a killed one's */
	for (uint32_t i = 0; i < n && !R->out.err; i++) {
		const struct trail_proc *pr = shm_proc(&R->m, i);
		uint32_t st = __atomic_load_n(&pr->state, __ATOMIC_ACQUIRE);

		if (st == TRAIL_PS_FREE)
			continue;
		R->pt[i].pid = pr->pid;
		R->pt[i].start = pr->start_time;
		R->pt[i].announced = 1;
		R->pt[i].dead = 1;
		trail__rec_write_proc(R, i, st);
	}
	if (!R->out.err)
		trail__rec_drain(R);
	for (uint32_t i = 0; i < n && !R->out.err; i++)
		if (R->pt[i].dead)
			trail__rec_salvage(R, i, 1);
	trail__rec_keep_reconcile(R);
	write_tail(R, n);
}

int trail_recorder_error(const struct trail_recorder *R)
{
	return R->out.err;
}

void trail_recorder_stats(const struct trail_recorder *R, struct trail_recorder_stats *st)
{
	uint64_t gs, gd, go;

	memset(st, 0, sizeof(*st));
	st->events = R->ev_total;
	st->bytes = R->bytes;
	st->chunks = R->chunks;
	st->bad_chunks = R->bad_chunks;
	trail__rec_keep_gone(R, &gs, &gd, &go);
	st->lost = R->lost_written + gd + go +
		   __atomic_load_n(&shm_hdr(&R->m)->nostream_lost, __ATOMIC_RELAXED);
	st->file_bytes = R->out.off;
	st->procs = shm_nprocs(&R->m);
	st->max_procs = R->m.g.max_procs;
	st->procs_refused = shm_procs_refused(&R->m);
	st->user_events = R->user_events;
}

/* Events lost so far, counted as the file will count them: the STREAM
 * sections written, the slots not written yet, the keeper's streams, the
 * stream table's refusals. */
uint64_t trail_recorder_live_lost(const struct trail_recorder *R)
{
	uint64_t lost = R->lost_written + trail__rec_keep_lost(R) +
			__atomic_load_n(&shm_hdr(&R->m)->nostream_lost, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i < R->m.g.max_streams; i++) {
		const struct trail_stream *s = shm_stream(&R->m, i);
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		uint32_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);

		if (st == TRAIL_SS_FREE && !gen)
			break; /* never taken, nor any after it (drain.c) */
		if (st != TRAIL_SS_LIVE && st != TRAIL_SS_EXITED)
			continue;
		if (R->slot_written[i] && R->slot_gen[i] == gen)
			lost -= R->slot_lost[i];
		lost += __atomic_load_n(&s->dropped, __ATOMIC_RELAXED) +
			__atomic_load_n(&s->overwritten, __ATOMIC_RELAXED);
	}
	return lost;
}

uint32_t trail_recorder_hooked(const struct trail_recorder *R, uint32_t *traps)
{
	uint32_t n = shm_nprocs(&R->m), hooked = 0;

	for (uint32_t i = 0; i < n; i++)
		hooked += shm_proc(&R->m, i)->functions;
	if (traps)
		*traps = __atomic_load_n(&shm_hdr(&R->m)->trap_hooks, __ATOMIC_RELAXED);
	return hooked;
}
