/* SPDX-License-Identifier: MIT */
/*
 * evx.h - what a session does with an event besides recording every hit:
 * its filter (record -f, the kernel's grammar: filter.h), evaluated in
 * the record path before anything is reserved, so a rejected event costs
 * no buffer; its triggers (record -T, trigger.h), run when it fires,
 * recorded or not, before its record. Per session: two recordings of one
 * process keep their own.
 *
 * An event some session filters has TRAIL_STATE_EXT in its status word
 * and the session's struct evx in rt->x[s]; the record path then goes
 * the out-of-line way (record.c's trail__write_ext). The extras are made when the
 * session joins (or the event registers later, from a dlopen'ed library)
 * and unmapped when it leaves, after the grace period: a thread that saw
 * the session's bit has left the record path by then.
 */
#ifndef TRAIL_LIB_EVX_H
#define TRAIL_LIB_EVX_H

#include "../common/filter.h"
#include "../common/hist.h"
#include "../common/htab.h"
#include "../common/trigger.h"
#include "internal.h"

#define TRAIL_EVX_TRIGS TRAIL_TRIG_PER_EVENT
#define TRAIL_EVX_TARGETS 32 /* events an enable/disable_event trigger turns */

struct evx;
struct rvmon;

/* the monitors (rvmon.c) an event is an event of: one a model's label
 * that selects it, in the model's order (the first whose filter passes
 * is taken) */
#define TRAIL_EVX_RV 8

struct evx_rv {
	struct rvmon *mon;
	int16_t ev;             /* the model's event */
	uint8_t has_cond;
	uint8_t key;            /* 0 the thread, 1 the process, 2 a field */
	uint32_t kfield;        /* ... its index in the event's fields */
	struct trail_filter cond; /* the label's [FILTER] */
};

struct evx_trig {
	struct trail_trigger t; /* (t.filter: not kept, see cond) */
	int32_t left;           /* runs left (COUNT), -1: no limit */
	uint8_t has_cond;
	uint32_t ntargets;      /* enable/disable_event: the events it turns */
	struct evx *targets[TRAIL_EVX_TARGETS];
	struct trail_filter cond; /* `if FILTER` */
	uint8_t after;          /* runs after the record (stacktrace; hist
				 * triggers whose actions write events) */
	/* hist: the table in the arena's histogram area (NULL: it found no
	 * room, the trigger does nothing), its directory slot, its key */
	struct trail_htab *tab;
	struct trail_hist_dir *dir;
	struct trail_hist_keyer keyer;
	/* the other events' variables it reads: by name (and event), their
	 * tables once found (evx.c's ref_find) */
	struct trail_hist_ref refs[TRAIL_HIST_MAX_REFS];
	char onmatch[128]; /* onmatch()'s event: where unqualified ones are looked for first */
	struct trail_htab *reft[TRAIL_HIST_MAX_REFS];
	uint8_t refvar[TRAIL_HIST_MAX_REFS];
	/* trace() actions' synthetic events (synth.h) */
	struct synth *synth[TRAIL_HIST_MAX_ACTIONS];
};

/* struct evx's how: the record path's one load for the common case (a
 * filter on numbers, nothing else: EVX_REC | EVX_FAST) */
#define EVX_REC 1u  /* recorded: the spec selects the event, or an
		     * enable_event turned it on (atomic: triggers flip it) */
#define EVX_FILT 2u /* filtered */
#define EVX_FAST 4u /* ... by trail_filter_match_fast on any payload of
		     * the event (fixed fields, none past its length) */
#define EVX_TRIG 8u /* has triggers */

struct evx {
	size_t size; /* bytes mapped */
	struct evrt *rt;
	struct evx *next;   /* the session's, every event */
	uint32_t how;       /* EVX_*: what the record path does */
	uint8_t target;     /* an enable/disable_event names it */
	uint8_t after;      /* has triggers that run after the record */
	uint16_t ntrig;
	struct trail_filter filter;
	struct evx_trig trig[TRAIL_EVX_TRIGS];
	uint16_t nrv;
	struct evx_rv rv[TRAIL_EVX_RV];
	/* scratch for the join: the event's fields, parsed */
	struct trail_meta meta;
};

/* Session s's extras for rt from its spec: "@filter PATTERN TEXT" (the
 * first line whose pattern selects rt), "@trigger PATTERN TEXT" (each
 * that does), and whether a trigger's enable/disable_event names rt;
 * sel: the spec selects rt for recording. Made into rt->x[s] when any of
 * these applies: 1 (then rt is enabled for s even if sel is 0: its
 * triggers run, or a trigger may turn it on), 0 (none: rt is enabled as
 * any event if sel), -EBADMSG (a filter or a trigger does not compile for
 * rt's fields: then nothing is made), -E2BIG, -ENOMEM. */
HIDDEN int trail__evx_make(unsigned s, const char *spec, struct evrt *rt, int sel);
/* rt->x[s] unmapped (NULL: nothing), and rt's EXT bit cleared when no
 * session has extras left. After the grace period, or before the bit
 * was ever set. */
HIDDEN void trail__evx_free(unsigned s, struct evrt *rt);

/* set_wprobe / clear_wprobe: the wprobe provider:name armed in this
 * process (fwatch.c sets the hook when it arms one) watches addr from now
 * on (SET: every thread's event moved), nothing (CLEAR), or nothing if it
 * watched addr (CLEAR_IF). 0; -ENOENT: no such watch; -EINVAL: addr not
 * aligned to its length; -1: a thread's event refused the move. From the
 * record path: async-signal-safe. */
enum { TRAIL_FWATCH_SET, TRAIL_FWATCH_CLEAR, TRAIL_FWATCH_CLEAR_IF };
extern int (*trail__wprobe_move)(const char *provider, const char *name, int op,
				 uintptr_t addr) HIDDEN;

/* rvmon.c: session s's monitors ("@rv" lines of its spec, rv.h) on rt:
 * how many labels select it (x NULL), or (x given) those into x->rv with
 * their filters and keys bound to x->meta; -EBADMSG (a line damaged, a
 * filter or key that does not fit rt), -E2BIG, -ENOMEM. The monitors are
 * made at the first event that needs them; trail__rv_clear frees them,
 * with the session's extras (after the grace period). */
HIDDEN int trail__rv_make(unsigned s, const char *spec, const struct evrt *rt, struct evx *x);
HIDDEN void trail__rv_clear(unsigned s);
/* x's monitors on the event (payload, len): each instance's transition,
 * a violation's reactor; before the record, in the record path at d */
HIDDEN void trail__rv_run(struct evx *x, struct writer *w, unsigned d, unsigned s,
			  const void *payload, uint32_t len);

#endif /* TRAIL_LIB_EVX_H */
