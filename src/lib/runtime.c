/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - libtrail's control side: event registration, session slots,
 * the control signal, fork and thread exit.
 *
 * A process joins a recording session in one of three ways:
 *   - at start-up, when TRAIL_SESSION=RECORDER_PID:FD is in its environment
 *     (`trail record -- CMD` sets it; it survives exec and reaches children);
 *   - on the control signal (sigqueue, value ATTACH<<24 | FD) sent by
 *     `trail record -P PID`;
 *   - by fork, inheriting its parent's sessions.
 * In each case it opens the recorder's arena through /proc/RECORDER/fd/FD
 * (the kernel checks that we may), maps it, claims a process slot, and sets
 * the status bits of the events the session's spec selects. New events
 * (dlopen) are matched against active sessions when they register.
 *
 * The control signal handler does all the work itself, with
 * async-signal-safe calls only: no thread is created, ever. Detaching
 * clears the status bits, then waits for a grace period: membarrier() makes
 * every thread's "inside the record path" flag (writer depth) visible, and
 * we wait for each busy thread to leave the path once. Only then are the
 * threads' chunks published and the arena unmapped. If the signal
 * interrupted a write on this very thread, the detach cannot finish here:
 * the process slot says DETACH_PENDING and the recorder signals again.
 *
 * Locking: one spinlock (ctl_lock) serializes the handler, registration,
 * fork and exit paths; normal-context holders block the control signal
 * first, so the handler never spins on its own thread. A thread waiting for
 * the lock has the control signal blocked, so it answers the holder's step
 * rounds (live patching, fstep.c) from its wait: the holder may be
 * waiting for it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/registry.h"
#include "../common/control.h"
#include "../common/util.h"
#include "evx.h"
#include "synth.h"
#include "../arch/arch.h"
#include "fsites.h"
#include "internal.h"

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35)
#include <sys/rseq.h>
#define HAVE_RSEQ 1
#endif



static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int disabled;
#define ctl_signal trail__ctl_sig /* (record.c's: read below the runtime) */
int trail__at_start;
static int ctl_lock_word;
static int have_membarrier;
static int registry_fd = -1;
static struct evrt *events;     /* all registered events */
static struct dso *dsos;
static sigset_t fork_saved_mask;
static int exiting; /* exit() has begun (on_exiting) */

/* ------------------------------------------------------------------ lock */

/* saved: block the control signal (normal context), else we are its
 * handler; uc: the context the handler interrupted, else NULL. */
/* (the lock's holder does libtrail's own work: trail__self, from before
 * the signal mask's call to after it) */
static void ctl_lock(sigset_t *saved, void *uc)
{
	trail__self_enter();
	if (saved) {
		sigset_t block;

		sigemptyset(&block);
		if (ctl_signal)
			sigaddset(&block, ctl_signal);
		trail__sigmask_own(SIG_BLOCK, &block, saved);
	}
	while (__atomic_exchange_n(&ctl_lock_word, 1, __ATOMIC_ACQUIRE)) {
		/* the holder may be patching and waiting for every thread to
		 * answer; our signal is blocked, so answer from here */
		trail__step_answer(uc);
		sched_yield();
	}
}

static void ctl_unlock(sigset_t *saved)
{
	__atomic_store_n(&ctl_lock_word, 0, __ATOMIC_RELEASE);
	if (saved)
		trail__sigmask_own(SIG_SETMASK, saved, NULL);
	trail__self_leave();
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Wait until no thread but this one can still be writing with a status
 * word it loaded before our caller cleared bits. Returns 0 if that cannot
 * be known now (this thread is itself mid-write, or another is stuck half
 * a second). uc: as for ctl_lock; meanwhile this thread answers step
 * rounds (an attach may be patching, and waiting for it).
 */
static int grace_wait(void *uc)
{
	int64_t deadline = mono_ns() + 500000000;
	struct writer *self = trail__tls_w;

	if (have_membarrier)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (struct writer *w = __atomic_load_n(&trail__writers, __ATOMIC_ACQUIRE); w;
	     w = w->next) {
		uint32_t e;

		if (w == self) {
			if (__atomic_load_n(&w->depth, __ATOMIC_RELAXED))
				return 0;
			continue;
		}
		e = __atomic_load_n(&w->epoch, __ATOMIC_ACQUIRE);
		for (long spins = 0;
		     __atomic_load_n(&w->depth, __ATOMIC_ACQUIRE) &&
		     __atomic_load_n(&w->epoch, __ATOMIC_ACQUIRE) == e;
		     spins++) {
			/* by the clock: yields take long on a busy machine */
			if (spins % 64 == 63 && mono_ns() > deadline)
				return 0;
			trail__step_answer(uc);
			sched_yield();
		}
	}
	if (!have_membarrier) { /* no way to force visibility: give writers time */
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	return 1;
}

/* ------------------------------------------------------------ event table */

static uint8_t *evdata(struct psess *ps)
{
	return ps->base + ps->g.evdata_off;
}

static uint32_t *evidx(struct psess *ps)
{
	return (uint32_t *)(ps->base + ps->g.evidx_off);
}

/* The session-wide id of an event (name and layout), adding it if new.
 * Concurrent adders may create duplicates, which are harmless. */
static int evtab_id(struct psess *ps, const struct evrt *rt, uint32_t *id)
{
	struct trail_arena_hdr *h = ps->hdr;
	uint32_t n = __atomic_load_n(&h->nevents, __ATOMIC_ACQUIRE);
	uint32_t need, off, i;
	struct trail_evrec *rec;

	if (n > ps->g.max_events)
		n = ps->g.max_events;
	for (i = 0; i < n; i++) {
		off = __atomic_load_n(&evidx(ps)[i], __ATOMIC_ACQUIRE);
		if (!off || off > ps->g.evdata_size - sizeof(*rec))
			continue;
		rec = (struct trail_evrec *)(evdata(ps) + off);
		if (rec->hash == rt->hash && rec->size == rt->meta_size &&
		    rec->size <= ps->g.evdata_size - off - sizeof(*rec) &&
		    !memcmp(rec + 1, rt->meta, rt->meta_size)) {
			*id = i;
			return 0;
		}
	}
	need = (uint32_t)((sizeof(*rec) + rt->meta_size + 7) & ~7u);
	off = __atomic_fetch_add(&h->evdata_used, need, __ATOMIC_RELAXED);
	if (off > ps->g.evdata_size || need > ps->g.evdata_size - off)
		goto full;
	i = __atomic_fetch_add(&h->nevents, 1, __ATOMIC_RELAXED);
	if (i >= ps->g.max_events)
		goto full;
	rec = (struct trail_evrec *)(evdata(ps) + off);
	rec->size = rt->meta_size;
	rec->hash = rt->hash;
	rec->id = i;
	rec->pad = 0;
	memcpy(rec + 1, rt->meta, rt->meta_size);
	/* pairs with acquire loads of evidx[] here and in the recorder */
	__atomic_store_n(&evidx(ps)[i], off, __ATOMIC_RELEASE);
	*id = i;
	return 0;
full:
	__atomic_fetch_add(&h->noevent_lost, 1, __ATOMIC_RELAXED);
	return -ENOSPC;
}

/* Session s records rt (if its spec selects it): 1, else 0. Its extras
 * (a filter, triggers) are made first: an event with triggers, or that a
 * trigger may turn on, is enabled for s whether or not it is recorded.
 * An event registered after the join whose filter or trigger does not
 * compile for it stays off, counted in the process slot. */
static int enable_in(unsigned s, struct evrt *rt)
{
	struct psess *ps = &trail__sess[s];
	int sel = trail__spec_match(ps->spec, rt->provider, rt->name), r;
	uint32_t id;

	r = trail__evx_make(s, ps->spec, rt, sel);
	if (r < 0) {
		__atomic_fetch_add(&ps->procs[ps->proc_idx].refused, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (!sel && !r)
		return 0;
	/* (no id: the extras stay unused until the session leaves) */
	if (evtab_id(ps, rt, &id))
		return 0;
	rt->ids[s] = id;
	/* release: the slot, ids[] and the extras before the bits (see
	 * trail__write) */
	__atomic_fetch_or(rt->ev->state, (1u << s) | (rt->x[s] ? TRAIL_STATE_EXT : 0),
			  __ATOMIC_RELEASE);
	return sel;
}

static void disable_in(unsigned s)
{
	for (struct evrt *rt = events; rt; rt = rt->next)
		__atomic_fetch_and(rt->ev->state, ~(1u << s), __ATOMIC_RELAXED);
}

/* the extras of session s, on every event (no thread uses them: after
 * the grace period, or before any bit of s was set) */
static void extras_free(unsigned s)
{
	for (struct evrt *rt = events; rt; rt = rt->next)
		trail__evx_free(s, rt);
	trail__obj_clear(s);
	trail__rv_clear(s);
}

/* Session s's extras on every event, before any is enabled: a filter or
 * trigger that does not compile here fails the join, and the process is
 * left as it was. 0 or -errno. */
static int extras_make(unsigned s)
{
	struct psess *ps = &trail__sess[s];

	for (struct evrt *rt = events; rt; rt = rt->next) {
		int r = trail__evx_make(s, ps->spec, rt,
					trail__spec_match(ps->spec, rt->provider, rt->name));

		if (r < 0) {
			extras_free(s);
			return r;
		}
	}
	return 0;
}

/* -------------------------------------------------------------- sessions */

static void copy_comm(char *dst)
{
	memset(dst, 0, 16);
	prctl(PR_GET_NAME, dst, 0, 0, 0);
}

/* This process's start time (/proc/PID/stat, which the recorder checks
 * liveness against), read once per process: a forked child's process
 * slots and its registry entry share one read, ~80 us in a VM. Handler
 * safe; two racing first reads store the same value. */
static uint64_t start_time;
static pid_t start_pid;

static void self_start_set(uint64_t st)
{
	__atomic_store_n(&start_time, st, __ATOMIC_RELAXED);
	__atomic_store_n(&start_pid, trail__pid, __ATOMIC_RELEASE);
}

static uint64_t self_start(void)
{
	if (__atomic_load_n(&start_pid, __ATOMIC_ACQUIRE) != trail__pid) {
		uint64_t st = 0;

		trail__proc_stat(trail__pid, &st, NULL, NULL);
		self_start_set(st);
	}
	return __atomic_load_n(&start_time, __ATOMIC_RELAXED);
}

/*
 * A forked child's start time without /proc: the kernel stamps a new
 * process with CLOCK_BOOTTIME, which /proc shows in clock ticks, between
 * the forking thread's reading before fork() and the child's after it.
 * When both readings fall in the same tick, that tick is the start time
 * (checked against /proc in 211 forks of 211); when a tick boundary lies
 * between them, the child reads /proc as any process does.
 */
static __thread uint64_t fork_boot_ns __attribute__((tls_model("initial-exec")));
static uint64_t tick_ns; /* ns per clock tick (sysconf(_SC_CLK_TCK)), 0: unknown */

static uint64_t boot_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fork_start_time(void)
{
	uint64_t t0 = fork_boot_ns, t1 = tick_ns ? boot_ns() : 0;

	if (t0 && t1 && t0 / tick_ns == t1 / tick_ns)
		self_start_set(t0 / tick_ns);
}

/* Claim a process slot in an arena for this process: its index, or
 * -ENOSPC. The pid goes last: a recorder seeing it knows the process took
 * its request (the state says how the join ended). */
static int proc_claim_in(struct trail_arena_hdr *h, struct trail_proc *procs,
			 const struct trail_arena_geom *g, unsigned s, uint32_t how)
{
	struct trail_proc *pr;
	uint64_t st = self_start();
	uint32_t i;

	if (how == TRAIL_JOIN_FORK)
		trail__prefault(&h->nprocs, sizeof(h->nprocs));
	i = __atomic_fetch_add(&h->nprocs, 1, __ATOMIC_RELAXED);
	if (i >= g->max_procs)
		return -ENOSPC;
	pr = &procs[i];
	if (how == TRAIL_JOIN_FORK)
		trail__prefault(pr, sizeof(*pr));
	/* joining again after exec: the slots of the image this one replaced
	 * (same process, same start) can never answer a detach */
	for (uint32_t k = 0; how == TRAIL_JOIN_ENV && k < i; k++) {
		struct trail_proc *old = &procs[k];
		uint32_t ost = __atomic_load_n(&old->state, __ATOMIC_ACQUIRE);

		if (old->pid == (uint32_t)trail__pid && old->start_time == st &&
		    (ost == TRAIL_PS_ACTIVE || ost == TRAIL_PS_DETACH_PENDING))
			__atomic_compare_exchange_n(&old->state, &ost, TRAIL_PS_EXECED, 0,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
	pr->ppid = (uint32_t)getppid();
	pr->start_time = st;
	pr->slot = s;
	pr->how = how;
	pr->result = 0;
	pr->signal = ctl_signal;
	copy_comm(pr->comm);
	/* pairs with the recorder's acquire load of the pid (attach_all) */
	__atomic_store_n(&pr->pid, (uint32_t)trail__pid, __ATOMIC_RELEASE);
	return (int)i;
}

/* Claim a process slot in the session for this process. */
static int proc_claim(struct psess *ps, unsigned s, uint32_t how)
{
	int i = proc_claim_in(ps->hdr, ps->procs, &ps->g, s, how);

	if (i < 0)
		return i;
	ps->proc_idx = (uint32_t)i;
	return 0;
}

static void proc_set(struct trail_proc *pr, uint32_t state, int32_t result)
{
	pr->result = result;
	/* pairs with the recorder's acquire load of the process state */
	__atomic_store_n(&pr->state, state, __ATOMIC_RELEASE);
}

static void proc_state(struct psess *ps, uint32_t state, int32_t result)
{
	proc_set(&ps->procs[ps->proc_idx], state, result);
}

/* (atomic loads: ctl_command asks once without the control lock, while
 * another thread may be filling or freeing a slot; the answer is a hint
 * there, asked again under the lock) */
static int find_slot(pid_t cli, int fd)
{
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++) {
		struct psess *ps = &trail__sess[s];

		if (__atomic_load_n(&ps->state, __ATOMIC_ACQUIRE) != PS_FREE &&
		    __atomic_load_n(&ps->cli_pid, __ATOMIC_RELAXED) == cli &&
		    __atomic_load_n(&ps->cli_fd, __ATOMIC_RELAXED) == fd)
			return (int)s;
	}
	return -1;
}

static void sess_unmap(unsigned s);

/* ps's spec from the n bytes at src (at most TRAIL_SPEC_MAX), into pages
 * of its own (mmap: this may run in the control signal handler). 0 or
 * -errno. */
static int spec_copy(struct psess *ps, const char *src, uint32_t n)
{
	size_t need;

	if (n > TRAIL_SPEC_MAX)
		n = TRAIL_SPEC_MAX;
	need = ((size_t)n + 1 + 4095) & ~(size_t)4095;
	if (ps->spec_cap < need) {
		char *p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -ENOMEM;
		if (ps->spec)
			munmap(ps->spec, ps->spec_cap);
		ps->spec = p;
		ps->spec_cap = need;
	}
	memcpy(ps->spec, src, n);
	ps->spec[n] = '\0';
	return 0;
}

/*
 * A request to join, taken: the recorder's arena opened, checked and
 * mapped, and a process slot claimed in it. This part needs no lock, and
 * is done before the control lock is taken: a request that waits for the
 * lock (another session being attached, its functions being patched) is
 * then seen by its recorder to have arrived.
 */
struct join {
	pid_t cli;
	uint64_t cli_start; /* its /proc starttime: against a reused pid */
	int fd;
	void *base;
	uint64_t size;
	struct trail_arena_geom g;
	struct trail_proc *pr; /* the slot claimed */
};

/* Handler-safe. Returns 0 or -errno (then nothing is mapped). */
static int join_open(pid_t cli, int fd, uint32_t how, struct join *j)
{
	char path[64] = "/proc/", *e;
	const char *why;
	struct stat st;
	int mfd, r;

	j->cli = cli;
	j->fd = fd;
	e = trail__utoa(path + 6, (uint64_t)cli);
	e = stpcpy(e, "/fd/");
	e = trail__utoa(e, (uint64_t)fd);
	*e = '\0';
	/* the sender's start time before its descriptor: it sent the
	 * request, so it lives now (the recorder, or for a root recorder
	 * its proxy of our user: src/recorder/proxy.c) */
	if ((r = trail__proc_stat(cli, &j->cli_start, NULL, NULL)))
		return r;
	mfd = open(path, O_RDWR | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	/* the arena: a file of ours, or root's (a root recorder's) */
	if (fstat(mfd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0) || st.st_size < 4096) {
		close(mfd);
		return -EPERM;
	}
	j->size = (uint64_t)st.st_size;
	j->base = mmap(NULL, (size_t)j->size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	close(mfd);
	if (j->base == MAP_FAILED)
		return -errno;
	r = trail__arena_check(j->base, j->size, &j->g, &why);
	if (r >= 0) {
		/* the session slot is not known yet: written when it is */
		r = proc_claim_in(j->base, trail__arena_procs(j->base, &j->g), &j->g,
				  TRAIL_MAX_SESSIONS, how);
		j->pr = trail__arena_procs(j->base, &j->g) + r;
	}
	if (r < 0) {
		munmap(j->base, (size_t)j->size);
		return r;
	}
	return 0;
}

/* ---------------------------------------------------------- event sources
 *
 * Static events come in through registration (trail__register, below);
 * every other source (function hooks and probes, synthetic events) puts
 * a struct trail_source in the trail_sources section
 * (TRAIL_SOURCE) and is told when a session joins, leaves, or is
 * inherited by a forked child. The runtime calls sources only through
 * those pointers: sources call down into the record path and the
 * runtime's services, never the other way round. A section, not
 * constructors: a session may join from libtrail's own constructor
 * (TRAIL_SESSION), before other constructors have run.
 */
extern const struct trail_source *const __start_trail_sources[] HIDDEN __attribute__((weak));
extern const struct trail_source *const __stop_trail_sources[] HIDDEN __attribute__((weak));
#define for_each_source(src, p)                                                \
	for (const struct trail_source *const *p = __start_trail_sources;      \
	     p < __stop_trail_sources && ((src) = *p, 1); p++)

/* Every source's events the session in slot s defines: 0, or the first
 * error. */
static int sources_define(unsigned s, struct psess *ps)
{
	const struct trail_source *src;

	for_each_source(src, p) {
		int r = src->define ? src->define(s, ps) : 0;

		if (r < 0)
			return r;
	}
	return 0;
}

/* Every source's join for slot s: what they hooked, or the first error
 * (then the sources that joined already leave again). */
static int sources_join(unsigned s, struct psess *ps, void *uc)
{
	const struct trail_source *src, *o;
	int total = 0;

	for_each_source(src, p) {
		int r = src->join ? src->join(s, ps, uc) : 0;

		if (r < 0) {
			for_each_source(o, q) {
				if (o == src)
					break;
				if (o->leave)
					o->leave(s);
			}
			return r;
		}
		total += r;
	}
	return total;
}

/* Join the session of j (under the control lock). uc: the interrupted
 * context when called from the control signal handler (else NULL). */
static int sess_attach(struct join *j, void *uc)
{
	struct trail_arena_hdr *h = j->base;
	struct trail_arena_geom g = j->g;
	struct psess *ps;
	uint32_t matched = 0;
	int s, r;

	if (find_slot(j->cli, j->fd) >= 0 || !trail__proc_alive(j->cli, j->cli_start)) {
		/* a repeated request, or its recorder gave up while we waited
		 * (and exited): the slot claimed stays FREE, which recorders
		 * skip */
		munmap(j->base, (size_t)j->size);
		return 0;
	}
	for (s = 0; s < (int)TRAIL_MAX_SESSIONS; s++)
		if (trail__sess[s].state == PS_FREE)
			break;
	if (s == (int)TRAIL_MAX_SESSIONS) { /* say so: the recorder waits */
		proc_set(j->pr, TRAIL_PS_FAILED, -EUSERS);
		munmap(j->base, (size_t)j->size);
		return -EUSERS;
	}
	ps = &trail__sess[s];
	ps->base = j->base;
	ps->map_size = j->size;
	ps->g = g;
	ps->hdr = h;
	ps->ctab = trail__arena_ctab(j->base, &g);
	ps->streams = trail__arena_streams(j->base, &g);
	ps->procs = trail__arena_procs(j->base, &g);
	ps->proc_idx = (uint32_t)(j->pr - ps->procs);
	j->pr->slot = (uint32_t)s;
	ps->chunk_size = g.chunk_size;
	ps->nchunks = g.nchunks;
	ps->populated = mmap(NULL, (g.nchunks / 64 + 1) * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ps->populated == MAP_FAILED)
		ps->populated = NULL; /* then pages come by faults */
	ps->populated_pid = trail__pid;
	ps->max_streams = g.max_streams;
	ps->overwrite = !!(ps->hdr->flags & TRAIL_ARENA_OVERWRITE);
	ps->block_us = ps->overwrite ? 0 : ps->hdr->block_us; /* overwrite never waits */
	ps->session_id = ps->hdr->session_id;
	__atomic_store_n(&ps->cli_pid, j->cli, __ATOMIC_RELAXED); /* (find_slot) */
	__atomic_store_n(&ps->cli_fd, j->fd, __ATOMIC_RELAXED);
	ps->cli_start = j->cli_start;
	ps->orphaned = 0;
	/* a private, bounded copy of the spec: the arena is shared */
	if ((r = spec_copy(ps, (const char *)ps->base + g.spec_off, g.spec_len)) < 0) {
		proc_state(ps, TRAIL_PS_FAILED, r);
		sess_unmap((unsigned)s);
		return r;
	}
	if (ps->hdr->clock != trail__clock) {
		/* the recorder chose the clock: follow it, unless another
		 * session records with the one we have */
		int others = 0;

		for (unsigned k = 0; k < TRAIL_MAX_SESSIONS; k++)
			others |= k != (unsigned)s && trail__sess[k].state != PS_FREE;
		if (!others && (ps->hdr->clock == TRAIL_CLOCK_TSC ||
				ps->hdr->clock == TRAIL_CLOCK_MONO)) {
			trail__clock = ps->hdr->clock;
			if (trail__cpu_mode != CPU_RSEQ)
				trail__cpu_mode = trail__clock == TRAIL_CLOCK_TSC ? CPU_TSCP : CPU_GETCPU;
		}
	}
	if (ps->hdr->clock != trail__clock) {
		proc_state(ps, TRAIL_PS_FAILED, -EPROTO);
		munmap(j->base, (size_t)j->size);
		if (ps->populated)
			munmap(ps->populated, (g.nchunks / 64 + 1) * sizeof(uint64_t));
		ps->populated = NULL;
		ps->base = NULL;
		ps->hdr = NULL;
		return -EPROTO;
	}
	/* the events it defines, before the extras that write them */
	if ((r = sources_define((unsigned)s, ps)) < 0 || (r = extras_make((unsigned)s)) < 0) {
		proc_state(ps, TRAIL_PS_FAILED, r);
		sess_unmap((unsigned)s);
		return r;
	}
	__atomic_store_n(&ps->gen, ps->gen + 1, __ATOMIC_RELAXED);
	/* pairs with the acquire loads of exiting threads (writer_dtor) */
	__atomic_store_n(&ps->state, PS_ACTIVE, __ATOMIC_RELEASE);
	for (struct evrt *rt = events; rt; rt = rt->next)
		matched += (uint32_t)enable_in((unsigned)s, rt);
	r = sources_join((unsigned)s, ps, uc);
	if (r < 0) { /* the session asked for hooks we cannot set: no join */
		disable_in((unsigned)s);
		extras_free((unsigned)s);
		if (r == -EBUSY || r == -ETIMEDOUT)
			ps->procs[ps->proc_idx].tid = trail__step_culprit();
		proc_state(ps, TRAIL_PS_FAILED, r);
		sess_unmap((unsigned)s);
		return r;
	}
	ps->procs[ps->proc_idx].functions = (uint32_t)r;
	proc_state(ps, TRAIL_PS_ACTIVE, (int32_t)matched);
	return 0;
}

/* Publish every chunk this process holds in slot s, close its streams. */
static void sess_flush(unsigned s)
{
	struct psess *ps = &trail__sess[s];

	for (struct writer *w = __atomic_load_n(&trail__writers, __ATOMIC_ACQUIRE); w;
	     w = w->next)
		for (unsigned d = 0; d < TRAIL_MAX_DEPTH; d++) {
			struct wctx *c = &w->ctx[s][d];

			if (c->gen == ps->gen)
				trail__ctx_close(ps, c);
		}
}

static void sess_unmap(unsigned s)
{
	struct psess *ps = &trail__sess[s];

	munmap(ps->base, ps->map_size);
	if (ps->populated)
		munmap(ps->populated, (ps->nchunks / 64 + 1) * sizeof(uint64_t));
	ps->populated = NULL;
	ps->base = NULL;
	ps->hdr = NULL;
	ps->detaching = 0; /* a forked child's copy: the parent's thread waits */
	__atomic_store_n(&ps->leaving, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ps->gen, ps->gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ps->state, PS_FREE, __ATOMIC_RELEASE);
}

/*
 * Returns 0 when detached, -EAGAIN when it must be retried. Called from
 * the control signal handler (uc: the context it interrupted) with the
 * control lock held, which it drops while it waits for the grace period:
 * a writer it waits for may be handling a control signal too (a second
 * recorder's detach or attach), waiting for the lock, with its write
 * interrupted. The slot stays DETACHING meanwhile, and only this thread
 * finishes it (detaching).
 */
static int sess_detach(unsigned s, void *uc)
{
	struct psess *ps = &trail__sess[s];
	int quiet;

	if (ps->detaching)
		return -EAGAIN;
	__atomic_store_n(&ps->leaving, 1, __ATOMIC_RELAXED);
	if (ps->state == PS_ACTIVE) {
		const struct trail_source *src;

		for_each_source(src, p)
			if (src->stop)
				src->stop(s);
		disable_in(s);
		__atomic_store_n(&ps->state, PS_DETACHING, __ATOMIC_RELEASE);
		proc_state(ps, TRAIL_PS_DETACH_PENDING, 0);
	}
	ps->detaching = 1;
	ctl_unlock(NULL);
	quiet = grace_wait(uc);
	ctl_lock(NULL, uc);
	ps->detaching = 0;
	if (!quiet) {
		__atomic_store_n(&ps->leaving, 0, __ATOMIC_RELAXED);
		return -EAGAIN;
	}
	{
		const struct trail_source *src;

		for_each_source(src, p)
			if (src->leave)
				src->leave(s);
	}
	extras_free(s);
	sess_flush(s);
	proc_state(ps, TRAIL_PS_DETACHED, 0);
	sess_unmap(s);
	return 0;
}

/* Under the control lock, in the control signal handler (uc: as for
 * sess_detach). */
static void reap_orphans(void *uc)
{
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++) {
		struct psess *ps = &trail__sess[s];

		if (ps->state == PS_FREE)
			continue;
		if (!__atomic_load_n(&ps->orphaned, __ATOMIC_RELAXED))
			trail__sess_check_orphan(ps);
		if (__atomic_load_n(&ps->orphaned, __ATOMIC_RELAXED))
			sess_detach(s, uc); /* -EAGAIN: left for the next signal */
	}
}

/* a control signal's command (libtrail's own work throughout) */
static void ctl_command(siginfo_t *si, void *uc)
{
	if (si->si_code == SI_QUEUE && si->si_uid == getuid()) {
		uint32_t cmd = trail_ctl_cmd(si->si_value.sival_int);
		int fd = trail_ctl_fd(si->si_value.sival_int), s;

		if (cmd == TRAIL_CTL_STEP && si->si_pid == trail__pid) {
			/* another thread of ours is patching and holds the lock */
			trail__step_answer(uc);
			return;
		}
		if (cmd == TRAIL_CTL_ATTACH) {
			struct join j;
			int r = join_open(si->si_pid, fd, TRAIL_JOIN_ATTACH, &j);

			ctl_lock(NULL, uc);
			reap_orphans(uc);
			if (!r)
				sess_attach(&j, uc);
			ctl_unlock(NULL);
			return;
		}
		if (cmd == TRAIL_CTL_DETACH) {
			/* a repeat while another thread detaches that session
			 * (putting back thousands of functions, say): nothing
			 * to add, and spinning for the lock would only take
			 * the CPU it needs; the recorder asks again if need be */
			s = find_slot(si->si_pid, fd);
			if (s >= 0 && __atomic_load_n(&trail__sess[s].leaving, __ATOMIC_RELAXED))
				return;
		}
		ctl_lock(NULL, uc);
		reap_orphans(uc);
		if (cmd == TRAIL_CTL_DETACH) {
			s = find_slot(si->si_pid, fd);
			if (s >= 0)
				sess_detach((unsigned)s, uc);
		}
		ctl_unlock(NULL);
	}
}

static void ctl_handler(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	(void)sig;

	trail__self_enter();
	ctl_command(si, uc);
	trail__self_leave();
	errno = saved_errno;
}

void trail__ctl_locked(void (*fn)(void))
{
	sigset_t saved;

	ctl_lock(&saved, NULL);
	fn();
	ctl_unlock(&saved);
}

/* ----------------------------------------------------------- registration */

void (*trail__on_register)(struct evrt *rt);

struct evrt *trail__events(void)
{
	return events;
}

/* One descriptor of d into rt: 1, or 0 if it is not a usable one. */
static int register_one(struct dso *d, struct evrt *rt, struct trail_event *ev)
{
	const struct trail_meta_hdr *mh;
	struct trail_meta m;
	const char *why;

	if (!ev || ev->abi != TRAIL_EVENT_ABI ||
	    ev->size < sizeof(struct trail_event) || !ev->state || !ev->meta)
		return 0;
	mh = ev->meta;
	if (trail__meta_parse(mh, mh->size, &m, &why))
		return 0;
	rt->ev = ev;
	rt->meta = mh;
	rt->meta_size = mh->size;
	rt->hash = trail__meta_hash(mh, mh->size);
	rt->provider = m.provider;
	rt->name = m.name;
	rt->dso = d;
	__atomic_store_n(&ev->rt, rt, __ATOMIC_RELEASE);
	rt->next = events;
	events = rt;
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
		if (trail__sess[s].state == PS_ACTIVE)
			enable_in(s, rt);
	if (trail__on_register)
		trail__on_register(rt);
	return 1;
}

static void register_locked(struct trail_event **start, struct trail_event **stop)
{
	struct dso *d;
	size_t n = 0, k = 0;

	for (d = dsos; d; d = d->next)
		if (d->start == start)
			return;
	for (struct trail_event **p = start; p < stop; p++)
		n += *p != NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return;
	d->start = start;
	d->evs = n ? calloc(n, sizeof(*d->evs)) : NULL;
	if (n && !d->evs) {
		free(d);
		return;
	}
	for (struct trail_event **p = start; p < stop; p++)
		k += (size_t)register_one(d, &d->evs[k], *p);
	d->nevs = (uint32_t)k;
	d->next = dsos;
	dsos = d;
}

void trail__register_dyn(struct dso *d, struct evrt *rt, struct trail_event **evp)
{
	memset(d, 0, sizeof(*d));
	d->start = evp;
	d->evs = rt;
	d->nevs = (uint32_t)register_one(d, rt, *evp);
	d->next = dsos;
	dsos = d;
}

/* d's events off and out of the list (under the control lock) */
static void dso_events_off(struct dso *d)
{
	struct evrt **pr = &events;

	for (uint32_t i = 0; i < d->nevs; i++)
		__atomic_store_n(d->evs[i].ev->state, 0, __ATOMIC_RELAXED);
	while (*pr) {
		if ((*pr)->dso == d)
			*pr = (*pr)->next;
		else
			pr = &(*pr)->next;
	}
}

void trail__ctl_enter(sigset_t *saved)
{
	ctl_lock(saved, NULL);
}

void trail__ctl_leave(sigset_t *saved)
{
	ctl_unlock(saved);
}

int trail__unregister_dyn(struct dso *d)
{
	struct dso **pd;
	sigset_t saved;
	int quiet = 0;

	ctl_lock(&saved, NULL);
	for (pd = &dsos; *pd; pd = &(*pd)->next)
		if (*pd == d) {
			*pd = d->next;
			break;
		}
	dso_events_off(d);
	ctl_unlock(&saved);
	/* no writer may still hold the descriptor, nor its extras */
	for (int i = 0; i < 3 && !quiet; i++)
		quiet = grace_wait(NULL);
	if (!quiet)
		return -EBUSY;
	ctl_lock(&saved, NULL);
	for (uint32_t i = 0; i < d->nevs; i++)
		for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
			trail__evx_free(s, &d->evs[i]);
	ctl_unlock(&saved);
	return 0;
}

__attribute__((visibility("default"))) void
trail__register(struct trail_event **start, struct trail_event **stop)
{
	sigset_t saved;

	trail__self_enter();
	trail__init();
	if (!disabled && start && stop > start) {
		ctl_lock(&saved, NULL);
		register_locked(start, stop);
		ctl_unlock(&saved);
	}
	trail__self_leave();
}

/*
 * exit() runs every object's destructors, and each unregisters its events
 * as dlclose needs: unhooked, then a grace period (membarrier) before
 * their descriptors are freed. At exit, with no other thread recording,
 * all of it is work for nothing (the control lock taken and the signal
 * blocked once per object, the wait, the freeing: ~15% of the life of a
 * forked child that ends in exit(), bench/fork.sh): the events stay
 * registered, and their descriptors mapped until the end. With another
 * thread recording, they are unhooked but not freed. An exit handler says
 * that exit began: registered at the first fork, after main began, it
 * runs before the loader's destructors (registered before main), in the
 * process and in its children.
 */
static struct dso *retired; /* unregistered at exit, not freed */

static void on_exiting(void)
{
	__atomic_store_n(&exiting, 1, __ATOMIC_RELAXED);
}

/* Does a thread other than this one own a writer (it recorded, and has
 * not exited)? Not in a forked child: its writers are all free. */
static int others_recording(void)
{
	struct writer *self = trail__tls_w;

	for (struct writer *w = __atomic_load_n(&trail__writers, __ATOMIC_ACQUIRE); w; w = w->next)
		if (w != self && __atomic_load_n(&w->in_use, __ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

__attribute__((visibility("default"))) void
trail__unregister(struct trail_event **start, struct trail_event **stop)
{
	struct dso **pd, *d = NULL;
	sigset_t saved;
	(void)stop;

	if (disabled || !start)
		return;
	trail__self_enter();
	/* exit() called inside a deferred write (a traced call): written
	 * while the events are still there (destructors run at exit) */
	trail__defer_flush_self();
	if (__atomic_load_n(&exiting, __ATOMIC_RELAXED) && !others_recording()) {
		/* exit() runs, no other thread records (above) */
		trail__self_leave();
		return;
	}
	ctl_lock(&saved, NULL);
	for (pd = &dsos; *pd; pd = &(*pd)->next)
		if ((*pd)->start == start) {
			d = *pd;
			*pd = d->next;
			break;
		}
	if (d)
		dso_events_off(d);
	ctl_unlock(&saved);
	if (d && __atomic_load_n(&exiting, __ATOMIC_RELAXED) && !others_recording()) {
		/* at exit, kept (and reachable, for leak checkers): nobody
		 * else records, nothing to wait for */
		d->next = retired;
		retired = d;
	} else if (d) {
		/* no writer may still hold one of these descriptors */
		for (int i = 0; i < 3 && !grace_wait(NULL); i++)
			;
		free(d->evs);
		free(d);
	}
	trail__self_leave();
}

/* ------------------------------------------------------- fork, thread exit */

static void fork_child(void);

static void registry_announce(void)
{
	char path[512];
	struct trail_reg r = {0};

	if (registry_fd < 0) {
		if (trail__registry_path(path, sizeof(path)))
			return;
		registry_fd = trail__registry_open(path, 1);
		if (registry_fd < 0)
			return;
	}
	r.pid = trail__pid;
	r.signal = ctl_signal;
	r.start = self_start();
	trail__registry_put(registry_fd, &r);
}

static void fork_prepare(void)
{
	static int first_done;

	if (!__atomic_exchange_n(&first_done, 1, __ATOMIC_RELAXED)) {
		/* what a child runs of libtrail and of the loader (all of
		 * it: the loader's exit path, which the parent has not run
		 * yet), and of its decoder's and the C library's code (what
		 * the parent has run), mapped in it from the start
		 * (inherit.c) */
		const void *code[] = {(const void *)fork_child,
				      (const void *)getauxval(AT_BASE),
				      trail_arch_decoder_code(), (const void *)getppid};

		atexit(on_exiting);
		trail__inherit_code(code, 4, 2);
	}
	/* a deferred write goes to the parent's stream; the child must not
	 * write it again */
	trail__defer_flush_self();
	/* a thread forking with a session on and no writer yet: its writer
	 * made here, once, not in every child (a mapping of its own there,
	 * ~140 us of a child's first event: bench/fork.sh) */
	if (!trail__tls_w)
		for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
			if (__atomic_load_n(&trail__sess[s].state, __ATOMIC_ACQUIRE) == PS_ACTIVE) {
				trail__writer_get();
				break;
			}
	ctl_lock(&fork_saved_mask, NULL);
	fork_boot_ns = tick_ns ? boot_ns() : 0;
}

static void fork_parent(void)
{
	trail__prefault(&ctl_lock_word, sizeof(ctl_lock_word));
	ctl_unlock(&fork_saved_mask);
}

static void fork_child(void)
{
	const struct trail_source *src;

	/* (the fork path's variables: one page, the control lock's too) */
	trail__prefault(&trail__pid, sizeof(trail__pid));
	trail__pid = getpid();
	fork_start_time();
	trail__writers_forked();
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++) {
		struct psess *ps = &trail__sess[s];

		if (ps->state == PS_FREE)
			continue;
		if (ps->state != PS_ACTIVE ||
		    proc_claim(ps, s, TRAIL_JOIN_FORK)) {
			disable_in(s);
			sess_unmap(s);
			continue;
		}
		/* the inherited contexts are the parent's */
		__atomic_store_n(&ps->gen, ps->gen + 1, __ATOMIC_RELAXED);
		for_each_source(src, p)
			if (src->forked)
				src->forked(s, ps);
		proc_state(ps, TRAIL_PS_ACTIVE, 0);
	}
	/* before anything the child writes (function_graph: the frames it
	 * returns through first) */
	for_each_source(src, p)
		if (src->forked_child)
			src->forked_child();
	registry_announce();
	ctl_unlock(&fork_saved_mask);
}

/* ------------------------------------------------------------------ init */

static int parse_int(const char *s, const char **end)
{
	long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9' && v < (1L << 30))
		v = v * 10 + (*s++ - '0');
	*end = s;
	return (int)v;
}

/* Does a spec (len bytes of the arena's, not NUL-terminated) hook
 * functions: a tracer, or probes? */
static int spec_hooks_code(const char *spec, size_t len)
{
	for (size_t i = 0; i < len;) {
		const char *l = spec + i, *nl = memchr(l, '\n', len - i);
		size_t n = nl ? (size_t)(nl - l) : len - i;

		if ((n > 8 && !memcmp(l, "@tracer ", 8)) || (n > 7 && !memcmp(l, "@probe ", 7)))
			return 1;
		i += n + 1;
	}
	return 0;
}

/*
 * The instruction decoder, for function hooks on unmodified code: the
 * library beside libtrail's own file, whose constructor hands Capstone
 * over (src/arch/arch.h). dlopen is not for the control signal handler:
 * a session from the environment loads it here, before the control lock;
 * an attach finds it loaded by the recorder (which injects it first).
 */
void trail__decoder_load(void)
{
	char path[PATH_MAX];
	Dl_info di;
	const char *slash;

	if (!trail_arch_decoder_init())
		return;
	if (!dladdr((const void *)trail__decoder_load, &di) || !di.dli_fname ||
	    !(slash = strrchr(di.dli_fname, '/')) ||
	    (size_t)(slash - di.dli_fname) + sizeof("/libtrail-decoder.so") > sizeof(path))
		snprintf(path, sizeof(path), "libtrail-decoder.so");
	else
		snprintf(path, sizeof(path), "%.*s/libtrail-decoder.so",
			 (int)(slash - di.dli_fname), di.dli_fname);
	if (!dlopen(path, RTLD_NOW | RTLD_LOCAL))
		fprintf(stderr, "trail: pid %d: no instruction decoder (%s): functions "
			"without patchable entries cannot be hooked\n", (int)trail__pid, dlerror());
}

static void join_from_env(void)
{
	const char *e = getenv("TRAIL_SESSION"), *p;

	if (!e)
		return;
	for (p = e; *p;) {
		int pid = parse_int(p, &p), fd, r;

		if (pid <= 0 || *p++ != ':')
			break;
		fd = parse_int(p, &p);
		if (fd < 0)
			break;
		{
			struct join j;
			sigset_t saved;

			r = join_open(pid, fd, TRAIL_JOIN_ENV, &j);
			if (!r && spec_hooks_code((const char *)j.base + j.g.spec_off,
						  (size_t)j.g.spec_len))
				trail__decoder_load();
			/* the control signal blocked: a recorder may already be
			 * attaching (trail record -a sees our registry entry) */
			ctl_lock(&saved, NULL);
			if (!r)
				r = sess_attach(&j, NULL);
			ctl_unlock(&saved);
		}
		if (r && r != -ENOENT)
			fprintf(stderr, "trail: pid %d cannot join session %d:%d: %s\n",
				(int)trail__pid, pid, fd, strerror(-r));
		if (*p != ',')
			break;
		p++;
	}
}

static void install_signal(void)
{
	const char *e = getenv("TRAIL_SIGNAL");
	struct sigaction sa, old;
	int sig = SIGRTMIN + 7;

	if (e) {
		const char *end;
		sig = parse_int(e, &end);
		if (sig < 0 || *end)
			sig = SIGRTMIN + 7;
	}
	if (sig <= 0 || sig > SIGRTMAX)
		return;
	if (__sigaction(sig, NULL, &old) < 0 ||
	    (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL))
		return; /* the program uses that signal: no attach */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ctl_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* (the kernel blocks it during the handler anyway; TSan, which runs
	 * the handler later, blocks only sa_mask: without it a second request
	 * ran inside the first, which held the control lock, and spun) */
	sigaddset(&sa.sa_mask, sig);
#if defined(__SANITIZE_THREAD__)
	/* TSan must deliver it: the kernel may pick a thread TSan has not
	 * set up yet, where an instrumented handler crashes TSan */
	if (trail__sigaction_sanitizer(sig, &sa, NULL) == 0)
		ctl_signal = sig;
#else
	if (__sigaction(sig, &sa, NULL) == 0)
		ctl_signal = sig;
#endif
}

static void do_init(void)
{
	const char *e = getenv("TRAIL_DISABLE");

	if (e && *e && strcmp(e, "0")) {
		disabled = 1;
		return;
	}
	trail__pid = getpid();
	trail__clock = trail__clock_detect();
#ifdef HAVE_RSEQ
	if (__rseq_size >= 8 && __rseq_offset) {
		const struct rseq *rs = (const struct rseq *)
			((char *)__builtin_thread_pointer() + __rseq_offset);

		if ((int32_t)rs->cpu_id >= 0)
			trail__cpu_mode = CPU_RSEQ;
	}
#endif
	if (trail__cpu_mode != CPU_RSEQ && trail__clock == TRAIL_CLOCK_TSC)
		trail__cpu_mode = CPU_TSCP;
	if (trail__writers_init()) {
		disabled = 1;
		return;
	}
	{
		long hz = sysconf(_SC_CLK_TCK);

		if (hz > 0 && 1000000000L % hz == 0)
			tick_ns = (uint64_t)(1000000000L / hz);
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0) == 0)
		have_membarrier = 1;
	install_signal();
	registry_announce();
	join_from_env();
}

void trail__init(void)
{
	pthread_once(&init_once, do_init);
}

/*
 * libtrail is marked DF_1_INITFIRST (-z initfirst): started with the
 * program (LD_PRELOAD), its constructors run before any other object's
 * initialization, the executable's .preinit_array and the C library's
 * own included, so that a session joins, and its probes and hooks are in,
 * before any code of the program or of its libraries runs. The C library
 * has then not set environ yet: the environment the loader passes to
 * every constructor is the same.
 */
__attribute__((constructor(101))) static void trail_ctor(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	/* (started with the program: the C library has not set environ yet;
	 * dlopen'ed later, by an attach's injection, it has) */
	trail__at_start = !environ;
	if (!environ && envp)
		environ = envp;
	trail__self_enter(); /* (a session joins here: its probes are in) */
	trail__init();
	trail__self_leave();
}

__attribute__((destructor)) static void trail_dtor(void)
{
	trail__self_enter();
	trail__writer_exit_self();
	if (registry_fd >= 0 && trail__pid == getpid())
		trail__registry_del(registry_fd, trail__pid);
	trail__self_leave();
}
