/* SPDX-License-Identifier: MIT */
/*
 * internal.h - libtrail's process-side state, shared by runtime.c (control:
 * registration, sessions, the control signal, fork), record.c (the record
 * path and the writers), the event sources (fhook.c and the function
 * tracer's other files) and fstep.c/signals.c. Sections below are named
 * after the file that defines what they declare.
 *
 * Who touches what:
 *   - struct evrt: one per registered event descriptor; ids[] written under
 *     the control lock before the session bit is set in *ev->state
 *     (release), read by writers after an acquire load of that word.
 *   - struct psess: a session slot; filled under the control lock before any
 *     state bit for it is set, torn down only after a grace period.
 *   - struct writer: one per thread that ever recorded, never freed, reused
 *     after the thread exits. Only its thread writes ctx[][] except during
 *     detach/exit, which first wait for the thread to be outside the record
 *     path (depth == 0 or epoch moved on), the urcu-membarrier way.
 */
#ifndef TRAIL_LIB_INTERNAL_H
#define TRAIL_LIB_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include <trail/abi.h>

#include "../common/arena.h"
#include "../common/meta.h"
#include "../common/spec.h"

#define HIDDEN __attribute__((visibility("hidden")))

struct dso;

struct evx;

struct evrt {
	struct trail_event *ev;
	const void *meta;
	uint32_t meta_size;
	uint32_t hash;
	const char *provider;
	const char *name;
	uint32_t ids[TRAIL_MAX_SESSIONS];
	struct evrt *next; /* all events, newest first */
	struct dso *dso;
	void *eprobes;     /* fprobe.c: eprobes on this event, or NULL */
	struct evx *x[TRAIL_MAX_SESSIONS]; /* evx.h: each session's extras */
};

/* A status word bit beside the sessions': the event has eprobes, which
 * run when it is written (trail__write calls trail__eprobe_hook) even
 * if no session records it. */
#define TRAIL_STATE_EPROBE (1u << 31)
/* Another: some session has extras for the event (a filter: evx.h), the
 * record path asks them first. */
#define TRAIL_STATE_EXT (1u << 30)

struct dso {
	struct trail_event **start;
	struct evrt *evs;
	uint32_t nevs;
	struct dso *next;
};

enum psess_state { PS_FREE = 0, PS_ACTIVE, PS_DETACHING };

struct psess {
	/* read by writers (stable while a state bit for the slot is set) */
	uint32_t gen; /* changes whenever the slot gets a new arena */
	uint32_t chunk_size;
	uint32_t nchunks;
	uint32_t max_streams;
	uint32_t overwrite;
	uint32_t proc_idx;
	uint32_t orphaned; /* the recorder died: writers turn their bit off */
	uint32_t block_us; /* blocking mode (arena header's), 0: drop */
	uint32_t paused;   /* traceoff: writes dropped (the arena header's
			    * paused, followed at the next chunk) */
	uint8_t *base;
	struct trail_arena_hdr *hdr;
	uint64_t *ctab;
	struct trail_stream *streams;
	struct trail_proc *procs;
	uint64_t *populated; /* chunks whose pages this process has mapped */
	int populated_pid;   /* the process that bitmap is for (fork) */
	/* control only */
	enum psess_state state;
	uint64_t map_size;
	struct trail_arena_geom g;
	uint64_t session_id;
	pid_t cli_pid;
	int cli_fd;
	uint64_t cli_start;
	int detaching; /* a thread waits for the grace period of its detach */
	int leaving;   /* a thread is detaching it (atomic: read without the
			* control lock by a repeated request, which then
			* returns at once instead of waiting for the lock) */
	/* a private copy of the session's spec (the arena is shared), in
	 * pages of its own, kept for the slot's next session (a reader late
	 * on a freed slot still reads memory) and grown when one needs more */
	char *spec;
	size_t spec_cap;
};

/* One (session, nesting level) writing context of a thread. */
struct wctx {
	uint8_t *data;    /* records area of the owned chunk, NULL if none */
	uint32_t pos;     /* bytes used in data */
	uint32_t cap;     /* bytes available in data */
	uint32_t events;  /* records committed in the chunk */
	uint32_t cpu;     /* last CPU record written, ~0u: none yet */
	uint64_t last_ts;
	uint32_t gen;     /* psess gen this context belongs to */
	uint32_t chunk;   /* index of the owned chunk */
	uint64_t owned;   /* its OWNED state word, for the publishing CAS */
	uint32_t stream;  /* stream slot + 1, 0: none */
	uint32_t pending_lost; /* dropped since the last chunk was taken */
	uint32_t checks;  /* chunks taken, paces orphan checks */
	uint32_t fails;   /* failures to take one, likewise */
};

struct writer;

/*
 * A record an event source keeps back (function_graph's entry, which
 * becomes a leaf record if the call returns first). Any other write of
 * the thread at the outermost level calls flush first, which writes it
 * (or drops it) and sets flush to NULL; so does thread exit, fork and
 * exit(). data is the source's, opaque to the record path.
 */
struct trail_defer {
	void (*flush)(struct writer *w); /* NULL: nothing kept */
	uint64_t data[16];
};

struct writer {
	uint32_t depth; /* nesting: 0 outside the record path */
	uint32_t epoch; /* bumped on each outermost exit */
	pid_t tid;
	uint32_t in_use;
	struct writer *next;
	struct trail_defer defer;
	struct wctx ctx[TRAIL_MAX_SESSIONS][TRAIL_MAX_DEPTH];
	/* (the rarely used parts after the record path's: its layout as it
	 * was) rvmon.c: the instances this thread found last (a monitor, its
	 * slot), checked before they are used */
	struct {
		const void *mon;
		void *slot;
	} rvc[8];
	/* the thread's perf counters (the counters trigger, function_graph's
	 * --counters), by counters.h's index (ctr_open: opened, or tried:
	 * then fd -1): trail__writer_counter */
	int ctr_fd[16];
	uint32_t ctr_open;
	void *ctr_pg[16]; /* a hardware counter's mmap page (rdpmc), or NULL */
	/* function_graph's --counters: one group of them (grp_mask, by
	 * counters.h's index), read at once: trail__writer_counters */
	int grp_fd[16];
	uint8_t grp_c[16]; /* grp_fd[i]'s counter */
	uint32_t grp_mask, grp_n;
};

/* ------------------------------------------------------------ record.c */
extern __thread struct writer *trail__tls_w
	__attribute__((tls_model("initial-exec"))) HIDDEN;

/* ----------------------------------------------------------- runtime.c */
/*
 * The thread is doing libtrail's own work: the control path (attach,
 * detach, patching, a loaded library's sites; all under the control
 * lock), the constructor, registration, fork handlers, a probe's or a
 * function hook's handler. What it calls then (open of /proc/self/task,
 * malloc, prctl...) is not the program's: no probe or function hook
 * records it (trail__in_self). A count, for the work nests; the record
 * path says the same with its writer's depth.
 */
extern __thread uint32_t trail__self __attribute__((tls_model("initial-exec"))) HIDDEN;

static inline void trail__self_enter(void)
{
	trail__self++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* before the work it covers */
}

static inline void trail__self_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	trail__self--;
}

/* Is the thread inside libtrail's own work, or its record path? */
static inline int trail__in_self(void)
{
	const struct writer *w = trail__tls_w;

	return trail__self || (w && __atomic_load_n(&w->depth, __ATOMIC_RELAXED));
}
extern struct writer *trail__writers HIDDEN; /* every writer, never freed */
HIDDEN int trail__writers_init(void);
HIDDEN struct writer *trail__writer_get(void);
HIDDEN void trail__writers_forked(void);
/* The thread's perf counter c (counters.h's index) into *v: its count
 * since the thread's first read of it (its event opened then, for this
 * thread, user space only); 0 and -1 when the kernel refuses it. */
HIDDEN int trail__writer_counter(struct writer *w, unsigned c, uint64_t *v);
/* ... the counters of mask, with one read() (a perf group, opened at the
 * first read of that set and again when it changes): v[c] for each c of
 * mask (0 those refused); 0 or -1 */
HIDDEN int trail__writer_counters(struct writer *w, uint32_t mask, uint64_t *v);
/* [p, p + n)'s pages made writable now, one system call, not a fault
 * each (a forked child's first writes: inherit.c) */
HIDDEN void trail__prefault(const void *p, size_t n);
/* The calling thread's writer given back as at thread exit (exit(): the
 * main thread's key destructor does not run) */
HIDDEN void trail__writer_exit_self(void);
HIDDEN void trail__defer_flush_self(void);
HIDDEN void trail__sess_check_orphan(struct psess *ps);
HIDDEN void trail__ctx_publish(struct psess *ps, struct wctx *c);
HIDDEN void trail__ctx_close(struct psess *ps, struct wctx *c);
/* trail__write limited to the sessions in allow */
HIDDEN void trail__write_mask(struct trail_event *ev, uint32_t allow,
			      const void *payload, uint32_t len);
/* set by fprobe.c: runs an event's eprobes after it was written */
extern void (*trail__eprobe_hook)(struct trail_event *ev, const void *payload,
				  uint32_t len) HIDDEN;

/* ----------------------------------------------------------- runtime.c */
extern struct psess trail__sess[TRAIL_MAX_SESSIONS] HIDDEN;
extern uint32_t trail__clock HIDDEN;  /* TRAIL_CLOCK_* chosen at init */
extern int trail__cpu_mode HIDDEN;    /* how to read the current CPU */
extern pid_t trail__pid HIDDEN;
extern int trail__ctl_sig HIDDEN;     /* the control signal, 0: none */
HIDDEN void trail__init(void);
/* libtrail-decoder.so (beside libtrail) loaded, for unmodified code's
 * function entries: a session that hooks them joins from here */
HIDDEN void trail__decoder_load(void);
/* libtrail was loaded with the program (preloaded or linked), not by a
 * dlopen later (an attach's injection) */
extern int trail__at_start HIDDEN;
/* Register a descriptor made at run time (a probe event) under the
 * control lock, in memory the caller gives (d, rt; allocates nothing: the
 * control signal handler calls it); it stays registered. */
HIDDEN void trail__register_dyn(struct dso *d, struct evrt *rt, struct trail_event **evp);
/* Take one out again (a user event deleted): its status word cleared,
 * every writer that may hold it waited for, its extras freed. 0, then
 * the caller may free d and the descriptor; -EBUSY if a writer could
 * not be waited for (the memory must stay). Without the control lock. */
HIDDEN int trail__unregister_dyn(struct dso *d);
/* the control lock, the control signal blocked meanwhile (saved: the
 * mask to give back) */
HIDDEN void trail__ctl_enter(sigset_t *saved);
HIDDEN void trail__ctl_leave(sigset_t *saved);
/* every registered event, newest first (under the control lock) */
HIDDEN struct evrt *trail__events(void);
/* set by fprobe.c: told of each event registered (eprobes on it) */
extern void (*trail__on_register)(struct evrt *rt) HIDDEN;
/* fn() under the control lock, the control signal blocked meanwhile */
HIDDEN void trail__ctl_locked(void (*fn)(void));

/*
 * An event source other than static events (registration): told when a
 * session joins slot s (under the control lock; uc: the context the
 * control signal interrupted, or NULL), stops (the session is ending, its
 * events about to be disabled one by one: a source whose records pair up
 * across time stops starting pairs first), leaves it (after the grace
 * period: no thread records for it any more), or is inherited by a forked child
 * (forked per session, then forked_child once, before the child writes).
 * join returns what it hooked (>= 0, summed into the process slot's
 * "functions") or -errno, and then the session is not joined. define
 * comes first, before the session's triggers are made and its events
 * enabled: the events the session itself defines (synthetic events),
 * registered, 0 or -errno (the session is not joined).
 */
struct trail_source {
	const char *name;
	int (*define)(unsigned s, struct psess *ps);
	int (*join)(unsigned s, struct psess *ps, void *uc);
	void (*stop)(unsigned s);
	void (*leave)(unsigned s);
	void (*forked)(unsigned s, struct psess *ps);
	void (*forked_child)(void);
};
/* in a source's file: runtime.c finds it in the trail_sources section */
#define TRAIL_SOURCE(var)                                                      \
	static const struct trail_source *const var##_entry                    \
		__attribute__((section("trail_sources"), used)) = &var

#define CPU_RSEQ 1
#define CPU_TSCP 2
#define CPU_GETCPU 3

/* ----------------------------------------------------------- signals.c */
/* the thread's signal handler nesting (0: not in a handler), with each
 * level's wrapper frame for handlers left by siglongjmp */
#define TRAIL_SIG_LEVELS 8u
struct trail_siglevel {
	uint32_t level;
	uintptr_t sp[TRAIL_SIG_LEVELS];
};
extern __thread struct trail_siglevel trail__sig
	__attribute__((tls_model("initial-exec"))) HIDDEN;
/* the level of a call whose stack pointer is sp */
HIDDEN uint32_t trail__sig_level_at(uintptr_t sp);
/* probes' fault-safe reads: SIGSEGV and SIGBUS reach libtrail first from
 * now on (under the control lock); 0 or -errno */
HIDDEN int trail__signals_guard_faults(void);
/* set by fmmio.c (its first --mmio join, after guarding faults): asked
 * about every SIGSEGV after the probes' fixup, 1 when it was an access
 * to a traced MMIO region (handled: uc moved on) */
extern int (*trail__mmio_fault)(void *si, void *uc) HIDDEN;
/* Breakpoint sites are about to go in (FSITE_TRAP): the handlers
 * installed before libtrail was loaded lose SIGTRAP from their masks (the
 * program's sigprocmask/pthread_sigmask and later handlers' masks leave it
 * out, with the control signal, from the start: signals.c). Threads
 * blocking it already: trail__step_check says. */
HIDDEN void trail__signals_allow_traps(void);
/* pthread_sigmask as glibc has it, for libtrail's own blocking of the
 * control signal (the interposed one leaves it out) */
HIDDEN int trail__sigmask_own(int how, const sigset_t *set, sigset_t *old);
/* objtrace (fhook.c): session s's objects, addresses a traced function's
 * entry is recorded for (ftrace:objtrace) when it gets one in an
 * argument register, with the size bytes at off in it. Add: 0, or
 * -ENOSPC (TRAIL_OBJ_MAX of them already); async-signal-safe, lock-free. */
#define TRAIL_OBJ_MAX 64
struct trail_objslot {
	uint64_t addr; /* 0: free; 1: being filled */
	int64_t off;
	uint32_t size;
};
/* (read by fhook.c: the slots, the slots ever taken, the sessions with
 * objects) */
extern struct trail_objslot trail__objtrace_objs[TRAIL_MAX_SESSIONS][TRAIL_OBJ_MAX] HIDDEN;
extern uint32_t trail__obj_used[TRAIL_MAX_SESSIONS] HIDDEN;
extern uint32_t trail__obj_sessions HIDDEN;
HIDDEN int trail__obj_add(unsigned s, uint64_t addr, int64_t off, uint32_t size);
HIDDEN void trail__obj_remove(unsigned s, uint64_t addr);
HIDDEN void trail__obj_clear(unsigned s);
/* glibc's own sigaction, for libtrail's handlers (not counted) */
struct sigaction;
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);
/* a sanitizer's sigaction (else the next in lookup order), not counted
 * either: a TSan build gives its control handler to TSan, which would
 * otherwise see it run in a thread it has not set up yet */
HIDDEN int trail__sigaction_sanitizer(int sig, const struct sigaction *act,
				      struct sigaction *oact);

/* ------------------------------------------------------------ inherit.c */
/* The code segments of the objects holding these addresses copied by
 * every later fork (their pages mapped in the child from the start) */
HIDDEN void trail__inherit_code(const void *const *in_objects, unsigned n, unsigned npopulate);

/* ------------------------------------------------------------- fstep.c */
/* writing code other threads may be running */
struct trail_arch_poke;
/* Write pk[0..n) breakpoint first, every other thread stepped out of the
 * sites (addrs, sorted) before the tails are: 0, or -EBUSY (a thread
 * blocks SIGTRAP or the control signal), -ETIMEDOUT (one did not answer),
 * the thread then named by trail__step_culprit(). Under the control
 * lock. */
HIDDEN int trail__step_poke(const struct trail_arch_poke *pk, size_t n, const uintptr_t *addrs);
/* 0 if every other thread takes SIGTRAP (breakpoints can go in), else -EBUSY */
HIDDEN int trail__step_check(void);
/* fstep.c: may breakpoints go in (trail__signals_allow_traps, then
 * trail__step_check, once until trail__traps_recheck)? 1 or 0 */
HIDDEN int trail__traps_ready(void);
HIDDEN void trail__traps_recheck(void);
/* Answer the step round open, if any, moving ucontext (the interrupted
 * one; NULL: none, a waiter in normal context) out of the sites being
 * patched: from the STEP signal, and from waits for the control lock. */
HIDDEN void trail__step_answer(void *ucontext);
/* the thread that made the last step round or check fail */
HIDDEN int32_t trail__step_culprit(void);

#endif /* TRAIL_LIB_INTERNAL_H */
