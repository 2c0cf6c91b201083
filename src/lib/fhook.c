/* SPDX-License-Identifier: MIT */
/*
 * fhook.c - the function tracers' handlers: a patched entry calls
 * fhook_entry() (through its stub and the entry trampoline, which call
 * it through trail__arch_on_entry: trail__fhook_register), a hooked
 * return fhook_exit(). The entry looks the site up
 * (fhash.h), records ftrace:function {ip, parent_ip} into the sessions
 * that want it, and for function_graph pushes a frame on the thread's
 * shadow stack and swaps the return address; the exit pops it and records
 * the exit. See doc/design/function-hooks.md.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/clock.h"
#include "fevents.h"
#include "fhash.h"
#include "fhook.h"
#include "fprobe.h"
#include "record.h"
#include "synth.h"

/* per session slot: what its tracer does (ftracer.c fills them in) */
static struct fconf fconf[TRAIL_MAX_SESSIONS];
static uint32_t graph_sessions; /* bits: sessions with function_graph */
static uint32_t thresh_sessions;
static uint32_t retval_sessions;
static uint32_t args_sessions;   /* entries written with their arguments */
static uint32_t simple_sessions; /* function_graph without roots, depth
				  * limit or threshold: nothing to decide */
static uint32_t tid_sessions;    /* sessions limited to some threads */
static uint32_t nest_sessions;   /* sessions with a --nest limit */
static uint32_t tid_gen;         /* changes when those lists do */
static uint32_t ctr_sessions;    /* sessions with --counters */
static uint32_t ctr_union;       /* bits: the counters they read */


/*
 * The shadow stack of a thread: one frame per hooked return, holding what
 * the return address was. Frames are pushed and popped in LIFO order also
 * by signal handlers that run hooked functions (a frame is filled before
 * depth counts it, and read before depth forgets it). A frame whose return
 * slot lies below the stack pointer at an exit was left by longjmp or an
 * exception: it is popped then, with an exit record so nesting stays whole.
 * When the stack is full, calls are no longer hooked (and counted).
 */
#define GSTACK_FRAMES 16384u

struct gframe {
	uintptr_t ret;   /* the real return address */
	uintptr_t slot;  /* where it was on the stack */
	uintptr_t hook;  /* what the slot holds meanwhile (the site's stub) */
	uintptr_t func;
	const struct hsite *site; /* its site (return probes) */
	uint64_t ts;     /* entry time (threshold mode) */
	uint32_t mask;   /* sessions that recorded the entry */
	uint32_t roots;  /* sessions for which this frame is a root */
	uint32_t rmask;  /* sessions with return probes on the call */
};

struct gstack {
	uint32_t depth;
	uint32_t full;   /* calls not hooked: stack full */
	uint32_t below_root[TRAIL_MAX_SESSIONS]; /* root frames open */
	struct gframe f[GSTACK_FRAMES];
	/* --counters: frame i's counters at its entry, by counters.h's
	 * index (pages touched only by the calls of sessions that read
	 * them, only as deep as they go) */
	uint64_t cv[GSTACK_FRAMES][16];
};

static __thread struct gstack *gstk __attribute__((tls_model("initial-exec")));

static struct gstack *gstack_get(void)
{
	struct gstack *g = gstk;

	if (TRAIL_LIKELY(g != NULL))
		return g;
	/* pages are touched only as deep as the calls go */
	g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED)
		return NULL;
	gstk = g;
	return g;
}

uintptr_t trail__fhook_real_ret(uintptr_t slot, uintptr_t val)
{
	const struct gstack *g = gstk;

	for (uint32_t i = g ? __atomic_load_n(&g->depth, __ATOMIC_RELAXED) : 0; i-- > 0;)
		if (i < GSTACK_FRAMES && g->f[i].slot == slot && g->f[i].hook == val)
			return g->f[i].ret;
	return val;
}

static inline uint64_t ticks(void)
{
	return trail__clock_now(trail__clock);
}

/* --tid: the sessions limited to some threads that include this one,
 * worked out again when the lists change (or after a fork: new tids) */
static __thread uint32_t t_gen, t_sel;

static __attribute__((noinline)) uint32_t thread_sessions(uint32_t limited)
{
	uint32_t gen = __atomic_load_n(&tid_gen, __ATOMIC_ACQUIRE);

	if (t_gen != gen + 1) { /* +1: 0 is "never worked out" */
		int32_t tid = (int32_t)syscall(SYS_gettid);

		t_sel = 0;
		for (uint32_t m = __atomic_load_n(&tid_sessions, __ATOMIC_ACQUIRE); m; m &= m - 1) {
			unsigned s = (unsigned)__builtin_ctz(m);

			for (uint32_t i = 0; i < fconf[s].ntids; i++)
				if (fconf[s].tids[i] == tid)
					t_sel |= 1u << s;
		}
		t_gen = gen + 1;
	}
	return t_sel & limited;
}

static inline uint32_t thread_allow(uint32_t mask)
{
	uint32_t limited = mask & __atomic_load_n(&tid_sessions, __ATOMIC_RELAXED);

	if (TRAIL_LIKELY(!limited))
		return mask;
	return (mask & ~limited) | thread_sessions(limited);
}

/* --nest: the sessions of mask that trace calls at this signal handler
 * level (sp: the call's stack pointer) */
static __attribute__((noinline)) uint32_t nest_allow(uint32_t mask, uintptr_t sp)
{
	uint32_t level = trail__sig_level_at(sp);

	for (uint32_t m = mask & __atomic_load_n(&nest_sessions, __ATOMIC_RELAXED); m; m &= m - 1) {
		unsigned s = (unsigned)__builtin_ctz(m);

		if (level > fconf[s].nest)
			mask &= ~(1u << s);
	}
	return mask;
}

/* sessions of mask that record at this depth and below a root if needed */
static uint32_t graph_allow(const struct gstack *g, uint32_t mask, uint32_t roots)
{
	uint32_t simple = mask & __atomic_load_n(&simple_sessions, __ATOMIC_RELAXED);
	uint32_t allow = simple;

	for (uint32_t m = mask & ~simple; m; m &= m - 1) {
		unsigned s = (unsigned)__builtin_ctz(m);
		const struct fconf *c = &fconf[s];

		if (c->max_depth && g->depth >= c->max_depth)
			continue;
		if (c->has_roots && !g->below_root[s] && !(roots & (1u << s)))
			continue;
		allow |= 1u << s;
	}
	return allow;
}

/* ------------------------------------------------------ deferred entries
 *
 * Most calls are leaves: nothing else is written between their entry and
 * their exit. So a function_graph entry is not written at once: the
 * thread's writer keeps it (its trail_defer holds a struct gpend), and if
 * the call returns first, one leaf record {func, duration} stamped with
 * the entry's time stands for both (one write instead of two, the same 16
 * bytes). Any other record of the thread at the outermost level writes
 * the kept entry first (write_event calls the defer hook), so each stream
 * stays in time order. Deferred only for sessions whose exit is a plain
 * record (no return value, no threshold). The kept entry is written at
 * fork, at thread exit and at exit() (when the first object's events are
 * unregistered, by its destructor); a process killed, or an exec, inside a
 * leaf loses that one entry.
 */

/* bumped when a session leaves the tracers: kept entries older than that
 * may belong to a session gone, or to its slot's next one */
static uint32_t pend_gen;

/* the kept entry, in the writer's trail_defer.data */
struct gpend {
	uint32_t mask; /* its sessions */
	uint32_t gen;  /* pend_gen when kept */
	uint32_t cpu;
	uint32_t pad;
	uint64_t ts;
	uint64_t func;
	uint64_t slot; /* its frame's return slot */
};
_Static_assert(sizeof(struct gpend) <= sizeof(((struct trail_defer *)0)->data),
	       "the kept entry fits in trail_defer");

static inline struct gpend *gpend(struct writer *w)
{
	return (struct gpend *)(void *)w->defer.data;
}

/* The kept entry of w, written (w->depth is 1: in the record path, at its
 * outermost level): w's trail_defer.flush. */
static void gentry_flush(struct writer *w)
{
	struct trail_event *ev = TRAIL__DESC(ftrace, funcgraph_entry);
	const struct gpend *p = gpend(w);
	uint32_t m = __atomic_load_n(ev->state, __ATOMIC_ACQUIRE) & p->mask & TRAIL_SESSION_BITS;
	struct evrt *rt = ev->rt;
	uint64_t func = p->func;

	w->defer.flush = NULL;
	if (p->gen != __atomic_load_n(&pend_gen, __ATOMIC_RELAXED))
		return; /* kept before its session left: not written */
	if (m && rt)
		write_sessions(ev, rt, w, 0, m, &func, sizeof(func), p->ts, p->cpu);
}

/* A call's entry, kept; the previous kept one is written. on_entry has
 * seen this thread outside the record path. */
static inline void gentry_defer(uint32_t allow, uintptr_t func, uintptr_t slot)
{
	struct writer *w = trail__tls_w;
	uint32_t cpu;
	uint64_t ts;

	struct gpend *p;

	if (TRAIL_UNLIKELY(!w) && !(w = trail__writer_get()))
		return;
	path_enter(w, 0);
	if (w->defer.flush)
		w->defer.flush(w);
	ts = now_cpu(&cpu);
	p = gpend(w);
	p->ts = ts;
	p->cpu = cpu;
	p->func = func;
	p->slot = slot;
	p->gen = __atomic_load_n(&pend_gen, __ATOMIC_RELAXED);
	p->mask = allow;
	w->defer.flush = gentry_flush;
	path_leave(w, 0);
}

/* A plain exit of the frame whose return slot was slot: a leaf record if
 * its entry is still kept, else the exit record. */
static inline void gexit_write(uint32_t mask, uintptr_t slot)
{
	struct trail_event *ev_exit = TRAIL__DESC(ftrace, funcgraph_exit);
	struct writer *w = trail__tls_w;
	struct gpend *kept;
	struct evrt *rt;
	uint32_t m, cpu;
	uint64_t ts;

	if (TRAIL_UNLIKELY(!w || w->depth || w->defer.flush != gentry_flush)) {
		write_event(ev_exit, mask, NULL, 0);
		return;
	}
	path_enter(w, 0);
	ts = now_cpu(&cpu);
	kept = gpend(w);
	/* read again: a signal handler may have written it meanwhile */
	if (TRAIL_LIKELY(w->defer.flush == gentry_flush && kept->slot == slot &&
			 ts - kept->ts <= UINT32_MAX &&
			 kept->gen == __atomic_load_n(&pend_gen, __ATOMIC_RELAXED))) {
		struct trail_event *ev_leaf = TRAIL__DESC(ftrace, funcgraph_leaf);
		struct __attribute__((packed)) {
			uint64_t func;
			uint32_t dur;
		} p = {kept->func, (uint32_t)(ts - kept->ts)};

		m = __atomic_load_n(ev_leaf->state, __ATOMIC_ACQUIRE) & kept->mask & TRAIL_SESSION_BITS;
		rt = ev_leaf->rt;
		w->defer.flush = NULL;
		if (m && rt)
			write_sessions(ev_leaf, rt, w, 0, m, &p, sizeof(p), kept->ts, kept->cpu);
	} else {
		if (w->defer.flush)
			w->defer.flush(w);
		m = __atomic_load_n(ev_exit->state, __ATOMIC_ACQUIRE) & mask & TRAIL_SESSION_BITS;
		rt = ev_exit->rt;
		if (m && rt)
			write_sessions(ev_exit, rt, w, 0, m, NULL, 0, ts, cpu);
	}
	path_leave(w, 0);
}

/* --counters: frame i's counters at its entry, those any session reads
 * (after its entry record: the record's own cost is the caller's) */
static __attribute__((noinline)) void ctr_entry(struct gstack *g, uint32_t i)
{
	struct writer *w = trail__tls_w;

	if (TRAIL_UNLIKELY(!w) && !(w = trail__writer_get()))
		return;
	trail__writer_counters(w, __atomic_load_n(&ctr_union, __ATOMIC_RELAXED), g->cv[i]);
}

/* ... and at its return, each session's record of them: the function,
 * the deltas, the counts at the entry (before the exit record, which the
 * report pairs them with) */
static __attribute__((noinline)) void ctr_exit(const uint64_t *at, const struct gframe *fr)
{
	struct writer *w = trail__tls_w;
	uint64_t now[16] = {0};
	uint32_t d;

	if (!w)
		return;
	trail__writer_counters(w, __atomic_load_n(&ctr_union, __ATOMIC_RELAXED), now);
	d = w->depth;
	if (d >= TRAIL_MAX_DEPTH)
		return;
	path_enter(w, d);
	if (d == 0 && w->defer.flush)
		w->defer.flush(w);
	for (uint32_t m = fr->mask & __atomic_load_n(&ctr_sessions, __ATOMIC_ACQUIRE); m;
	     m &= m - 1) {
		unsigned s = (unsigned)__builtin_ctz(m);
		const struct fconf *c = &fconf[s];
		uint64_t vals[1 + 2 * TRAIL_CTR_MAX];

		if (!c->csynth)
			continue;
		vals[0] = fr->func;
		for (uint32_t k = 0; k < c->nctr; k++) {
			unsigned x = c->ctr[k];

			/* (a forked child's inherited frames hold the
			 * parent's counts: no delta) */
			vals[1 + k] = now[x] >= at[x] ? now[x] - at[x] : 0;
			vals[1 + c->nctr + k] = at[x];
		}
		trail__synth_emit(c->csynth, w, d, s, vals, NULL, NULL);
	}
	path_leave(w, d);
}

/* returned: the function returned (with retval); else it was unwound by
 * longjmp or an exception, and has no return value */
static void exit_record(const struct gframe *fr, int returned, uint64_t retval, uint64_t now)
{
	uint32_t plain = fr->mask & ~thresh_sessions, timed = fr->mask & thresh_sessions;

	if (plain) {
		uint32_t ret = returned ? plain & retval_sessions : 0;

		if (plain & ~ret)
			write_event(TRAIL__DESC(ftrace, funcgraph_exit), plain & ~ret, NULL, 0);
		if (ret)
			write_event(TRAIL__DESC(ftrace, funcgraph_exit_ret), ret, &retval, sizeof(retval));
	}
	for (uint32_t m = timed; m; m &= m - 1) {
		unsigned s = (unsigned)__builtin_ctz(m);

		if (now - fr->ts >= fconf[s].thresh) {
			uint64_t p[2] = {fr->func, now - fr->ts};

			write_event(TRAIL__DESC(ftrace, funcgraph_call), 1u << s, p, sizeof(p));
		}
	}
}

/*
 * In a forked child, once its sessions are set up: the shadow stack is the
 * forking thread's, copied with the rest of memory, and the child returns
 * through every frame on it. Their entries were written in the parent's
 * stream; the child's gets one funcgraph_inherited {func} per frame,
 * outermost first, for the sessions that wrote the entry and pair exits
 * with entries (threshold mode writes {func, duration} at the exit from
 * the frame's own entry time, which the child has too).
 */
void trail__fhook_forked_frames(void)
{
	struct gstack *g = gstk;

	if (g) /* its header and the frames the child returns through */
		trail__prefault(g, offsetof(struct gstack, f) + (g->depth + 1) * sizeof(g->f[0]));
	for (uint32_t i = 0; g && i < g->depth; i++) {
		uint32_t m = g->f[i].mask & ~__atomic_load_n(&thresh_sessions, __ATOMIC_RELAXED);
		uint64_t func = g->f[i].func;

		if (m)
			write_event(TRAIL__DESC(ftrace, funcgraph_inherited), m, &func, sizeof(func));
	}
}

static void pop(struct gstack *g, const struct gframe *fr)
{
	for (uint32_t m = fr->roots; m; m &= m - 1)
		g->below_root[__builtin_ctz(m)]--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	g->depth--;
}

/* --args: the entry of the sessions of allow that want the argument
 * registers, written with them (never kept back: a leaf is then two
 * records); returns the sessions whose entry is still to write */
static __attribute__((noinline)) uint32_t entry_args(uint32_t allow, uintptr_t site,
						     const struct trail_arch_regs *regs)
{
	uint32_t a = allow & __atomic_load_n(&args_sessions, __ATOMIC_RELAXED) & ~thresh_sessions;
	uint64_t p[7] = {site, regs->rdi, regs->rsi, regs->rdx, regs->rcx, regs->r8, regs->r9};

	if (a)
		write_event(TRAIL__DESC(ftrace, funcgraph_entry_args), a, p, sizeof(p));
	return allow & ~a;
}

/* The tracers' part of an entry: the function record, and for
 * function_graph (or return probes: rmask) a frame pushed and the return
 * hooked (returns 1). */
static inline int graph_entry(const struct hsite *h, uintptr_t *ret, uintptr_t hook,
			      const struct trail_arch_regs *regs, uint32_t mask, uint32_t rmask)
{
	uintptr_t site = h->addr;
	uint32_t gmask, fmask;

	gmask = mask & __atomic_load_n(&graph_sessions, __ATOMIC_ACQUIRE);
	fmask = mask & ~gmask;
	if (fmask) {
		uint64_t payload[2] = {site, *ret};

		write_event(TRAIL__DESC(ftrace, function), fmask, payload, sizeof(payload));
	}
	if (gmask || rmask) {
		struct gstack *g = gstack_get();
		uint32_t roots = __atomic_load_n(&h->root, __ATOMIC_RELAXED) & gmask;
		uint32_t allow;
		struct gframe *fr;

		if (!g)
			return 0;
		/* frames this call's return slot shows to be gone (left by
		 * longjmp): deeper than it, or in its very slot unless that
		 * still holds their hook (a tail call shares its caller's slot) */
		while (g->depth && (g->f[g->depth - 1].slot < (uintptr_t)ret ||
				    (g->f[g->depth - 1].slot == (uintptr_t)ret &&
				     *ret != g->f[g->depth - 1].hook))) {
			struct gframe fr = g->f[g->depth - 1];

			pop(g, &fr);
			exit_record(&fr, 0, 0, thresh_sessions ? ticks() : 0);
		}
		allow = gmask ? graph_allow(g, gmask, roots) : 0;
		if (!allow && !rmask)
			return 0;
		if (g->depth >= GSTACK_FRAMES) { /* degrade: not hooked, counted */
			g->full++;
			for (uint32_t m = allow | rmask; m; m &= m - 1)
				__atomic_fetch_add(&trail__sess[__builtin_ctz(m)].hdr->graph_unhooked,
						   1, __ATOMIC_RELAXED);
			return 0;
		}
		fr = &g->f[g->depth];
		fr->ret = *ret;
		fr->slot = (uintptr_t)ret;
		fr->hook = hook;
		fr->func = site;
		fr->site = h;
		fr->mask = allow;
		fr->roots = roots & allow;
		fr->rmask = rmask;
		fr->ts = (allow & thresh_sessions) ? ticks() : 0;
		for (uint32_t m = fr->roots; m; m &= m - 1)
			g->below_root[__builtin_ctz(m)]++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		g->depth++;
		if (TRAIL_UNLIKELY(allow & args_sessions))
			allow = entry_args(allow, site, regs);
		if (!allow) {
			/* return probes only, or entries written with args */
		} else if (!(allow & (thresh_sessions | retval_sessions))) {
			gentry_defer(allow, site, (uintptr_t)ret);
		} else if (allow & ~thresh_sessions) {
			uint64_t func = site;

			write_event(TRAIL__DESC(ftrace, funcgraph_entry), allow & ~thresh_sessions, &func, sizeof(func));
		}
		if (TRAIL_UNLIKELY(fr->mask & ctr_sessions))
			ctr_entry(g, g->depth - 1);
		return 1; /* the stub puts hook in *ret and runs the body */
	}
	return 0;
}

/* ------------------------------------------------------------ objtrace */

/* an entry of site (called from parent) with the argument registers
 * regs: an ftrace:objtrace record for each object of the sessions of
 * mask found there, with the value at its offset (read fault-safe: 0 when
 * it cannot be read) */
static __attribute__((noinline)) void objtrace_entry(uintptr_t site, uintptr_t parent,
						     const struct trail_arch_regs *regs,
						     uint32_t mask)
{
	const uint64_t a[6] = {regs->rdi, regs->rsi, regs->rdx, regs->rcx, regs->r8, regs->r9};

	for (; mask; mask &= mask - 1) {
		unsigned s = (unsigned)__builtin_ctz(mask);
		uint32_t n = __atomic_load_n(&trail__obj_used[s], __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; i < n; i++) {
			/* acquire: pairs with trail__obj_add's release */
			uint64_t addr = __atomic_load_n(&trail__objtrace_objs[s][i].addr, __ATOMIC_ACQUIRE);

			if (addr <= 1)
				continue;
			for (int r = 0; r < 6; r++)
				if (a[r] == addr) {
					uint64_t p[4] = {site, parent, addr, 0};

					if (trail_arch_load_safe((uintptr_t)(addr + (uint64_t)trail__objtrace_objs[s][i].off),
								 trail__objtrace_objs[s][i].size, &p[3]))
						p[3] = 0;
					write_event(TRAIL__DESC(ftrace, objtrace), 1u << s, p, sizeof(p));
					break;
				}
		}
	}
}

static inline int on_entry(const struct hsite *h, uintptr_t *ret, struct trail_arch_regs *regs,
			   uintptr_t hook)
{
	uint32_t mask, pmask;
	int hooked;

	mask = thread_allow(__atomic_load_n(&h->mask, __ATOMIC_ACQUIRE));
	if (TRAIL_UNLIKELY(mask & __atomic_load_n(&nest_sessions, __ATOMIC_RELAXED)))
		mask = nest_allow(mask, (uintptr_t)ret);
	pmask = __atomic_load_n(&h->pmask, __ATOMIC_ACQUIRE);
	if (TRAIL_UNLIKELY(pmask)) {
		/* the return probes' frame is pushed with the graph's, the
		 * entry probes run inside the call (after its entry record) */
		uint32_t rmask = pmask & h->rpmask;
		uintptr_t parent = *ret;

		hooked = graph_entry(h, ret, hook, regs, mask, rmask);
		trail__fprobe_entry(h, pmask, hooked ? rmask : 0, ret, regs);
		/* (after the probes: an object one adds is seen at once) */
		if (TRAIL_UNLIKELY(__atomic_load_n(&trail__obj_sessions, __ATOMIC_RELAXED) & mask))
			objtrace_entry(h->addr, parent, regs, mask & trail__obj_sessions);
		return hooked;
	}
	if (!mask)
		return 0;
	if (TRAIL_UNLIKELY(__atomic_load_n(&trail__obj_sessions, __ATOMIC_RELAXED) & mask)) {
		uintptr_t parent = *ret;

		hooked = graph_entry(h, ret, hook, regs, mask, 0);
		objtrace_entry(h->addr, parent, regs, mask & trail__obj_sessions);
		return hooked;
	}
	return graph_entry(h, ret, hook, regs, mask, 0);
}

static int fhook_entry(uintptr_t site, uintptr_t *ret, struct trail_arch_regs *regs,
		       uintptr_t hook)
{
	const struct hsite *h = trail__hfind(site);
	int hooked;

	/* a hooked function reached from libtrail's own work (a patchable
	 * libc's open from its patching, say) or from inside the record
	 * path is not the program's call: not traced, nor probed. What the
	 * hook calls itself is libtrail's too. */
	if (!h || trail__in_self())
		return 0;
	trail__self_enter();
	hooked = on_entry(h, ret, regs, hook);
	trail__self_leave();
	return hooked;
}


static inline uintptr_t on_exit_hook(struct trail_arch_ret_regs *regs)
{
	struct gstack *g = gstk;
	uintptr_t slot = (uintptr_t)regs->sp - 8, ret;
	uint32_t d = g->depth;
	const struct gframe *top = &g->f[d - 1];
	uint64_t now;

	/* the common case: the top frame returns, no threshold, return
	 * value or root to account for */
	if (TRAIL_LIKELY((d == 1 || top->slot >= slot) && !top->roots && !top->rmask &&
			 !(top->mask & (thresh_sessions | retval_sessions | ctr_sessions)))) {
		uint32_t mask = top->mask;
		uintptr_t fslot = top->slot;

		ret = top->ret;
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* read before popped */
		g->depth = d - 1;
		gexit_write(mask, fslot);
		return ret;
	}
	/* a call hooked for return probes only */
	if (TRAIL_LIKELY((d == 1 || top->slot >= slot) && !top->roots && !top->mask)) {
		const struct hsite *site = top->site;
		uintptr_t fslot = top->slot;
		uint32_t rmask = top->rmask;

		ret = top->ret;
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* read before popped */
		g->depth = d - 1;
		trail__fprobe_return(site, fslot, ret, rmask, regs);
		return ret;
	}
	now = thresh_sessions ? ticks() : 0;

	/* frames below this one were skipped by longjmp or an exception */
	while (g->depth > 1 && g->f[g->depth - 1].slot < slot) {
		struct gframe fr = g->f[g->depth - 1];

		pop(g, &fr);
		exit_record(&fr, 0, 0, now);
	}
	{
		struct gframe fr = g->f[g->depth - 1];

		ret = fr.ret;
		pop(g, &fr);
		if (fr.rmask) /* inside the call, before its exit record */
			trail__fprobe_return(fr.site, fr.slot, fr.ret, fr.rmask, regs);
		if (TRAIL_UNLIKELY(fr.mask & ctr_sessions))
			ctr_exit(g->cv[g->depth], &fr);
		if (fr.mask)
			exit_record(&fr, 1, trail_arch_retval(regs), now);
	}
	return ret;
}

/* (a call hooked at its entry returns: the program's, whatever the
 * thread does now; what the exit records call is libtrail's) */
static uintptr_t fhook_exit(struct trail_arch_ret_regs *regs)
{
	uintptr_t ret;

	trail__self_enter();
	ret = on_exit_hook(regs);
	trail__self_leave();
	return ret;
}

/* ------------------------------------------------------------- unwinding
 * (the interposers that call these are in funwind.c) */

void trail__fhook_unhook_returns(void)
{
	struct gstack *g = gstk;

	if (!g)
		return;
	/* deepest first: a tail call shares its caller's slot, and the
	 * shallowest frame holds the real address */
	for (uint32_t i = g->depth; i-- > 0;)
		*(uintptr_t *)g->f[i].slot = g->f[i].ret;
}

void trail__fhook_rehook_returns(uintptr_t sp)
{
	struct gstack *g = gstk;
	struct gframe live;
	int keep = 0;
	uint64_t now;

	if (!g || !g->depth)
		return;
	/* the call asking (__cxa_begin_catch, when the program's call of it
	 * through its PLT is hooked) returns into its hook: its frame is not
	 * one the exception unwound, and stays on top */
	if (g->f[g->depth - 1].slot == sp - sizeof(uintptr_t) &&
	    *(uintptr_t *)(sp - sizeof(uintptr_t)) == g->f[g->depth - 1].hook) {
		live = g->f[g->depth - 1];
		keep = 1;
		g->depth--;
	}
	now = thresh_sessions ? ticks() : 0;
	while (g->depth && g->f[g->depth - 1].slot < sp) {
		struct gframe fr = g->f[g->depth - 1];

		pop(g, &fr);
		exit_record(&fr, 0, 0, now);
	}
	for (uint32_t i = 0; i < g->depth; i++)
		*(uintptr_t *)g->f[i].slot = g->f[i].hook;
	if (keep) {
		g->f[g->depth] = live;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		g->depth++;
	}
}

/* ---------------------------------------------------------- configuration */

void trail__fhook_config(unsigned s, const struct fconf *c)
{
	fconf[s] = *c;
	if (c->ntids) {
		__atomic_fetch_add(&tid_gen, 1, __ATOMIC_RELEASE);
		__atomic_fetch_or(&tid_sessions, 1u << s, __ATOMIC_RELEASE);
	}
	if (c->graph)
		__atomic_fetch_or(&graph_sessions, 1u << s, __ATOMIC_RELEASE);
	if (c->limit_nest)
		__atomic_fetch_or(&nest_sessions, 1u << s, __ATOMIC_RELEASE);
	if (c->thresh)
		__atomic_fetch_or(&thresh_sessions, 1u << s, __ATOMIC_RELEASE);
	if (c->retval)
		__atomic_fetch_or(&retval_sessions, 1u << s, __ATOMIC_RELEASE);
	if (c->args)
		__atomic_fetch_or(&args_sessions, 1u << s, __ATOMIC_RELEASE);
	if (c->graph && !c->has_roots && !c->max_depth && !c->thresh)
		__atomic_fetch_or(&simple_sessions, 1u << s, __ATOMIC_RELEASE);
	if (c->graph && c->nctr && c->csynth) {
		for (uint32_t k = 0; k < c->nctr; k++)
			__atomic_fetch_or(&ctr_union, 1u << c->ctr[k], __ATOMIC_RELEASE);
		__atomic_fetch_or(&ctr_sessions, 1u << s, __ATOMIC_RELEASE);
	}
}

void trail__fhook_clear(unsigned s)
{
	__atomic_fetch_add(&pend_gen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_and(&graph_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&thresh_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&retval_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&args_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&simple_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&nest_sessions, ~(1u << s), __ATOMIC_RELEASE);
	/* (the counters the others read stay: a thread's entry may read one
	 * no session wants any more, harmlessly) */
	if (!(__atomic_and_fetch(&ctr_sessions, ~(1u << s), __ATOMIC_RELEASE)))
		__atomic_store_n(&ctr_union, 0, __ATOMIC_RELAXED);
	if (__atomic_fetch_and(&tid_sessions, ~(1u << s), __ATOMIC_RELEASE) & (1u << s))
		__atomic_fetch_add(&tid_gen, 1, __ATOMIC_RELEASE);
}

void trail__fhook_forked(void)
{
	__atomic_fetch_add(&tid_gen, 1, __ATOMIC_RELEASE); /* new thread ids */
}

void trail__fhook_register(void)
{
	__atomic_store_n(&trail__arch_on_entry, fhook_entry, __ATOMIC_RELEASE);
	__atomic_store_n(&trail__arch_on_exit, fhook_exit, __ATOMIC_RELEASE);
}
