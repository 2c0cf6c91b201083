/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the recorder's state, shared by its files (not by its
 * callers: they see struct trail_recorder as opaque, recorder.h).
 *
 *   arena.c   sizing, creating and mapping the arena; create/free, messages
 *   output.c  the trace file: header, INFO, CLOCK, EVENT, MODULE/SYMBOLS,
 *             PROC, STREAM sections
 *   drain.c   the consumer: drain and salvage chunks, recycle streams
 *   attach.c  processes: tracking, attach, detach, -a
 *   launch.c  the command (fork/exec with the preload), drain priority
 *   inject.c  libtrail loaded into a running process (ptrace)
 *   threads.c threads that block what live patching sends them, opened
 *   ptrace.c  what inject.c and threads.c share
 *   proxy.c   requests to another user's processes (a root recorder)
 *   finish.c  the end: last drain, final sections, statistics
 *   keep.c    overwrite mode: the chunks and slots of streams that ended
 *
 * Every read of the arena goes through shm.h.
 */
#ifndef TRAIL_RECORDER_INTERNAL_H
#define TRAIL_RECORDER_INTERNAL_H

#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/clock.h"
#include "../common/spec.h"
#include "../tracefile/writer.h"
#include "recorder.h"
#include "shm.h"

#define MAX_SYNCS 4096

struct proc_track {
	uint32_t pid;
	uint64_t start;
	int announced;
	int dead;
	int detached;
	int stuck;
	int unopened; /* a thread blocks what patching needs: said once */
};

struct pending {
	uint32_t idx;
	uint64_t pub;
};

struct trail_recorder {
	struct trail_recorder_opts o;
	uint64_t buffer_bytes; /* o.buffer_bytes, fitted to memory and limits */
	const char *priority;  /* the drain's raised priority, or NULL */
	struct { int policy, nice; struct sched_param param; int saved; } sched_orig;

	/* arena */
	int memfd;
	struct rec_shm m;
	char *spec; /* the enable spec (build_spec), sized to it */

	/* output */
	struct tf_writer out;
	uint8_t *chunkbuf;
	uint8_t *event_done; /* per event id: EVENT section written */
	uint8_t *stream_seen;
	struct proc_track *pt;
	struct pending *pending; /* drain()'s list */
	uint32_t clock, mult, shift;
	struct trail_clock_sync syncs[MAX_SYNCS];
	uint32_t nsyncs, syncs_written;
	uint32_t mods_seen;
	uint8_t *mods_gone; /* per module slot: its unloading was written */
	struct symcache { uint64_t dev, ino; char *path; uint32_t id; } *symc;
	size_t nsymc;

	/* another user's processes (a root recorder): a proxy per user
	 * sends them our requests (proxy.c) */
	struct { uid_t uid; pid_t pid; int sock; } proxies[16];
	int nproxies;

	/* processes */
	struct { pid_t pid; uint64_t start; } *tried; /* -a: processes asked */
	size_t ntried, tried_cap;
	pid_t child;
	int child_status, child_done;

	/* progress */
	uint64_t ev_total, chunks, bytes, bad_chunks;
	uint64_t lost_written;  /* dropped + overwritten of the STREAM sections written */
	uint64_t *slot_lost;    /* per stream slot: what its last STREAM section said */
	uint32_t *slot_gen;
	uint8_t *slot_written;
	uint8_t *chunk_mapped;  /* per chunk: the drain has mapped its pages */
	uint32_t high;          /* highest chunk seen in use (drain's scans) */
	uint32_t ahead;         /* chunks [0, ahead) allocated by populate_ahead() */
	uint32_t user_events;   /* events enabled other than the tracer's own */
	uint64_t last_procs, last_sync, last_recycle, last_threads; /* trail_recorder_poll()'s periods */
	uint32_t snaps_asked, nsnaps; /* snapshot triggers: requests seen, files */
	struct keeper *keep;          /* overwrite mode (keep.c), else NULL */
	/* an arena read back from a core dump (core.c): no process is asked,
	 * the clocks' pairing is the arena's */
	int offline;
	struct trail_clock_sync offline_sync;
	char **offline_events;  /* its spec's -e patterns, for INFO */
	void *offline_map;      /* the core's pages holding the arena */
	size_t offline_len;
	uint32_t core_pid;      /* the process that dumped it, */
	char core_exe[4096];    /* its executable (the core's notes) */
};

/* arena.c: messages through the caller's log callback */
/* finish.c: the snapshot triggers' requests answered (one file for all
 * those made since the last) */
void trail__rec_snapshots(struct trail_recorder *R);
/* drain.c: a snapshot's chunks, the arena left as it was */
void trail__rec_copy_chunks(struct trail_recorder *R);
/* proxy.c: sigqueue(pid, sig, value) as the recorder may (0 or -errno):
 * through a proxy of pid's user if that is not ours and we are root */
int trail__rec_sigqueue(struct trail_recorder *R, pid_t pid, int sig, int value);
void trail__rec_proxies_end(struct trail_recorder *R);
/* attach.c: threads created with every signal blocked, opened */
void trail__rec_watch_threads(struct trail_recorder *R);
void trail__rec_log(struct trail_recorder *R, enum trail_recorder_level level,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define rec_err(R, ...) trail__rec_log(R, TRAIL_RECORDER_ERR, __VA_ARGS__)
#define rec_warn(R, ...) trail__rec_log(R, TRAIL_RECORDER_WARN, __VA_ARGS__)
#define rec_info(R, ...) trail__rec_log(R, TRAIL_RECORDER_INFO, __VA_ARGS__)
const char *trail__rec_bytes(const struct trail_recorder *R, uint64_t v, char *buf, size_t n);

/* hist.c: the HIST sections */
void trail__rec_write_hists(struct trail_recorder *R);

/* output.c */
void trail__rec_add_sync(struct trail_recorder *R);
void trail__rec_write_clock(struct trail_recorder *R);
void trail__rec_write_events(struct trail_recorder *R);
void trail__rec_write_modules(struct trail_recorder *R);
void trail__rec_write_proc(struct trail_recorder *R, uint32_t i, uint32_t state);
void trail__rec_write_stream(struct trail_recorder *R, uint32_t i);
/* slot i's STREAM section from st (a copy: identity and counters) */
void trail__rec_write_stream_as(struct trail_recorder *R, uint32_t i,
				const struct trail_stream *st);

/* drain.c */
uint32_t trail__rec_drain(struct trail_recorder *R);
/* arena.c: the pages of the chunks writers are about to take, allocated
 * ahead of them (a step each call) */
void trail__rec_populate_ahead(struct trail_recorder *R);
void trail__rec_salvage(struct trail_recorder *R, uint32_t p, int steal);
void trail__rec_recycle_streams(struct trail_recorder *R, int dead_proc);

/* keep.c: overwrite mode's streams that ended (its opening comment) */
int trail__rec_keep_init(struct trail_recorder *R);
void trail__rec_keep_free(struct trail_recorder *R);
/* a pass: credit what writers reclaimed, adopt and pack the chunks of
 * streams that ended; full: also give their slots back. The number of
 * chunks it took. */
uint32_t trail__rec_keep_pass(struct trail_recorder *R, int full);
/* The drain or a snapshot sees chunk i with word w (and holds it READING
 * if it took it): if the keeper tracks the chunk and w is no longer its
 * word, its parts were overwritten (credited); written: the final drain
 * writes it, its parts are in the file. 1: w is the tracked chunk. */
int trail__rec_keep_taken(struct trail_recorder *R, uint32_t i, uint64_t w, int written);
/* before the arena is read whole (the final drain, a snapshot): the pack
 * being built published, the keeper's records indexed */
void trail__rec_keep_prepare(struct trail_recorder *R);
/* a part of an adopted chunk or pack, of stream (slot, gen), met by the
 * drain: 1 if it is solo, i.e. its STREAM section is to be written from
 * its own header (every event in the file, one chunk) */
int trail__rec_keep_solo(const struct trail_recorder *R, uint32_t slot, uint32_t gen);
/* credit every tracked chunk whose word changed */
void trail__rec_keep_reconcile(struct trail_recorder *R);
/* slot is the keeper's (its stream ended, its counters are the keeper's
 * to write) */
int trail__rec_keep_holds(const struct trail_recorder *R, uint32_t slot);
/* STREAM sections of the keeper's streams: final, those with events in
 * the file; else (a snapshot) those with events in the arena */
void trail__rec_keep_streams(struct trail_recorder *R, int final);
/* events lost by the keeper's streams so far; the totals of streams with
 * nothing left (the END section's gone_*) */
uint64_t trail__rec_keep_lost(const struct trail_recorder *R);
void trail__rec_keep_gone(const struct trail_recorder *R, uint64_t *streams, uint64_t *dropped,
			  uint64_t *overwritten);

/* attach.c */
void trail__rec_check_procs(struct trail_recorder *R);

/* launch.c: in the command's process, before exec */
void trail__rec_priority_restore(struct trail_recorder *R);

#endif /* TRAIL_RECORDER_INTERNAL_H */
