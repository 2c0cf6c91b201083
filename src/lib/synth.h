/* SPDX-License-Identifier: MIT */
/*
 * synth.h - synthetic events in the process (src/common/synth.h): a
 * session's spec defines them ("@synth DEF" lines); each becomes a
 * registered event "synthetic:NAME" (like a probe event: it gets ids,
 * extras, a place in the sessions' event tables), which hist triggers'
 * trace() actions write through the one record path.
 */
#ifndef TRAIL_LIB_SYNTH_H
#define TRAIL_LIB_SYNTH_H

#include "../common/synth.h"
#include "internal.h"

#define TRAIL_SYNTH_CHAIN 4 /* synthetic events generating others, nested */

struct synth {
	struct trail_event ev;
	uint32_t state;
	struct evrt rt;
	struct dso dso;
	struct trail_event *evp[1];
	struct trail_synth def;
	uint32_t meta_size;
	uint32_t payload_max;
	struct synth *next;
	uint8_t meta[TRAIL_SYNTH_MAX_META];
};

/* (synthreg.c registers the spec's synthetic events, those the process
 * does not have yet, as an event source's define: internal.h) */
/* A spec line's definition (v, len bytes), its description (meta,
 * TRAIL_SYNTH_MAX_META bytes; its size in *msize): 0 or -EBADMSG. */
HIDDEN int trail__synth_line_def(const char *v, size_t len, struct trail_synth *def,
				 uint8_t *meta, size_t *msize);
/* the registered event with this description, or NULL; a new one into
 * the list (control only) */
HIDDEN struct synth *trail__synth_registered(const uint8_t *meta, size_t n);
HIDDEN void trail__synth_push(struct synth *sy);
/* The event the spec defines as name (NULL: none), and its definition. */
HIDDEN struct synth *trail__synth_find(const char *spec, const char *name);
HIDDEN const struct trail_synth *trail__synth_def(const struct synth *sy);
/* One record of sy from an action's params (trail_hist_io's trace) into
 * session s, if s has it on; in the record path at level d (after the
 * record of the event whose trigger ran). */
HIDDEN void trail__synth_emit(struct synth *sy, struct writer *w, unsigned d, unsigned s,
			      const uint64_t *vals, const char *const *strs, const uint16_t *slen);

#endif /* TRAIL_LIB_SYNTH_H */
