/* SPDX-License-Identifier: MIT */
/*
 * loop.c - one pass of the recorder's loop, above the pieces it paces:
 * the drain (drain.c) as often as the CLI calls, streams of exited
 * threads recycled every 20 ms (overwrite mode: the keeper, keep.c, packs
 * their chunks at each pass and gives their slots back every 20 ms),
 * processes checked (and with -a new ones attached, attach.c) and new
 * events described every 100 ms, threads that block what live patching
 * needs opened every 500 ms, a clock sync point 100 ms in and then every
 * second.
 */
#include <time.h>

#include "internal.h"

uint32_t trail_recorder_poll(struct trail_recorder *R, uint64_t now, int all_new)
{
	uint32_t n;

	/* overwrite mode: nothing drained until the end; the keeper adopts
	 * the chunks of threads that ended, and every 20 ms (full) gives
	 * their slots back */
	if (R->o.overwrite)
		n = trail__rec_keep_pass(R, now - R->last_recycle > 20000000ull);
	else
		n = trail__rec_drain(R);

	trail__rec_populate_ahead(R);
	trail__rec_snapshots(R);

	if (now - R->last_recycle > 20000000ull) {
		trail__rec_recycle_streams(R, -1); /* (discard mode) */
		R->last_recycle = now;
	}
	if (now - R->last_procs > 100000000ull) {
		if (all_new)
			trail_recorder_attach_new(R);
		trail__rec_check_procs(R);
		if (!R->o.overwrite)
			trail__rec_write_events(R);
		R->last_procs = now;
	}
	if (now - R->last_threads > 500000000ull) {
		trail__rec_watch_threads(R);
		R->last_threads = now;
	}
	/* a sync point 100 ms in, then every second, each written at
	 * once: a file cut short still maps its clock well */
	if (now - R->last_sync > (R->nsyncs < 2 ? 100000000ull : 1000000000ull)) {
		trail__rec_add_sync(R);
		trail__rec_write_clock(R);
		R->last_sync = now;
	}
	return n;
}

void trail_recorder_nap(struct trail_recorder *R, uint32_t n)
{
	if (n < R->m.g.nchunks / 8) {
		struct timespec ts = {0, n ? 1000000 : 5000000};
		nanosleep(&ts, NULL);
	}
}
