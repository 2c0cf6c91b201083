/* SPDX-License-Identifier: MIT */
/*
 * ftracer.c - the function and function_graph tracers as an event source:
 * which functions a session selects, and their entries patched while the
 * program runs (see doc/design/function-hooks.md).
 *
 * A session whose spec says "@tracer function" selects functions with
 * "@l GLOB" lines (none: all) minus "@n GLOB" lines. At join, libtrail
 * finds the patchable entries of every loaded object (fsites.c), patches
 * the selected ones to call the entry trampoline through a stub page next
 * to each object, and publishes the objects in the arena's module table so
 * the recorder can name addresses (fobjs.c). The entry handler (fhook.c)
 * looks the site up in the site table (fhash.h: address -> sessions that
 * want it) and records into exactly those sessions.
 *
 * Code other threads may run is patched breakpoint-first, every thread
 * stepped out of the nops (see "live patching" below, and fstep.c);
 * objects loaded and unloaded later are followed through the loader's
 * debug hook (fobjs.c). Unpatching restores the original bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/spec.h"
#include "../common/trigger.h"
#include "../common/util.h"
#include "fhash.h"
#include "fhook.h"
#include "fobjs.h"
#include "fprobe.h"
#include "synth.h"
#include "internal.h"
#include "ustack.h"

static uint32_t tracer_sessions; /* sessions with a tracer at all */
static uint32_t probe_sessions;  /* sessions with probes on functions */

/* ------------------------------------------------------------ selection */

struct sel {
	const char *name;
	const char *obj; /* its object's path */
	int hit;
};

static int glob_hit(const char *v, size_t len, void *arg)
{
	struct sel *s = arg;

	if (trail__func_glob(v, len, s->name, s->obj))
		s->hit = 1;
	return s->hit;
}

static int has_opt(const char *v, size_t len, void *arg)
{
	(void)v;
	(void)len;
	*(int *)arg = 1;
	return 1;
}

static int add_tid(const char *v, size_t len, void *arg)
{
	struct fconf *gc = arg;
	long t = 0;

	for (size_t i = 0; i < len && v[i] >= '0' && v[i] <= '9' && t < 1L << 31; i++)
		t = t * 10 + (v[i] - '0');
	if (t > 0 && t < 1L << 31 && gc->ntids < sizeof(gc->tids) / sizeof(gc->tids[0]))
		gc->tids[gc->ntids++] = (int32_t)t;
	return 0;
}

/* Does the spec select function name of object obj? With no -l, every
 * function of the executable and of the libraries built with patchable
 * entries is; an unmodified library's (named) only where an -l says so. */
static int selected(const char *spec, const char *name, const char *obj, int any_l,
		    int named_only)
{
	struct sel s = {name, obj, 0};

	if (!*name) /* a site without a symbol: traced when nothing narrows */
		return !any_l && !named_only;
	if (any_l || named_only) {
		trail__spec_opts(spec, "l", glob_hit, &s);
		if (!s.hit)
			return 0;
	}
	s.hit = 0;
	trail__spec_opts(spec, "n", glob_hit, &s);
	return !s.hit;
}

static int single_threaded(void)
{
	char buf[2048], *p;

	if (trail__read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "\nThreads:");
	return p && strtol(p + 9, NULL, 10) == 1;
}

/* A library call (FSITE_PLT): its GOT slot holds the stub's address, one
 * aligned store that threads calling meanwhile see or not; a slot that
 * RELRO made read-only is writable for the stores of one pass only. */
static uintptr_t got_open; /* the RELRO page left writable, or 0 (under
			     * the control lock) */

/* The RELRO page made writable by got_store read-only again: at the end of
 * each pass over an object's slots (hook_obj, ftracer_leave), so that
 * their stores to one page (hundreds of library calls) pay one mprotect
 * pair, not one each. */
static void got_close(void)
{
	if (got_open)
		mprotect((void *)got_open, 4096, PROT_READ);
	got_open = 0;
}

static int got_store(uintptr_t slot, uintptr_t v, int relro)
{
	uintptr_t page = slot & ~(uintptr_t)4095;

	if (relro && page != got_open) {
		got_close();
		if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE))
			return -1;
		got_open = page;
	}
	__atomic_store_n((uintptr_t *)slot, v, __ATOMIC_RELEASE);
	return 0;
}

static int patch_got(struct hsite *h, const struct fsite *f, uintptr_t target)
{
	h->got = f->got;
	h->got_relro = !!(f->flags & FSITE_RELRO);
	h->got_orig = __atomic_load_n((uintptr_t *)f->got, __ATOMIC_RELAXED);
	if (got_store(h->got, target, h->got_relro))
		return -1;
	h->patched = 1;
	return 0;
}

static int unpatch_got(struct hsite *h)
{
	if (got_store(h->got, h->got_orig, h->got_relro))
		return -1;
	h->patched = 0;
	return 0;
}

/* A breakpoint site (FSITE_TRAP): one byte, whoever runs the code. Every
 * thread must take SIGTRAP (fstep.c). */
static int patch_trap(struct hsite *h)
{
	struct trail_arch_poke p;

	if (!trail__traps_ready())
		return -EBUSY;
	h->orig[0] = *(const uint8_t *)h->addr;
	h->trap = 1;
	p.addr = h->addr;
	p.bytes[0] = 0xcc;
	if (trail_arch_poke_bytes(&p, 1))
		return -1;
	h->patched = 1;
	return 0;
}

/* --------------------------------------------------- live patching
 *
 * A site is five one-byte nops: a running thread may be between two of
 * them, where a call written over them would be entered in its middle.
 * Code other threads may run is therefore written breakpoint first, every
 * other thread stepped out of the sites between the breakpoints and the
 * tails: fstep.c.
 */

/* The thread a control signal interrupted may have been inside a site
 * just patched: move it past (the nops it skips did nothing), or into the
 * copy of the instructions a jump displaced. */
static void step_self(void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];

	for (uintptr_t k = 1; k < TRAIL_ARCH_SITE_SIZE; k++) {
		const struct hsite *h = trail__hfind(ip - k);

		if (h && h->patched && !h->dead) {
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)trail__fsite_step(ip - k, ip);
			return;
		}
	}
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)trail__fprobe_insn_inside(ip);
}

/* Sites waiting to be patched, every one a session selects in every
 * object (want: their number at most), written once all are decoded and
 * their stubs made: decoding runs Capstone, which calls the C library
 * (vsnprintf for each instruction); with the C library's functions hooked
 * first, the decoding of the objects after it went through their hooks,
 * and through a breakpoint for each of vfprintf's calls (a cold attach to
 * python3 with libz3, 53,000 functions, took 43 s; 3.9 s since).
 * While other threads run (live), one round of breakpoints and steps for
 * them all (a round costs about the same for 64 sites or thousands: a
 * signal to every thread, three serializations); else (no other thread,
 * or an object no thread can run yet) written directly, the pages of a
 * run of them made writable once. Breakpoint sites wait with them. The
 * arrays are mmap'ed: this runs in the control signal handler or in
 * dlopen, on a stack not ours to spend. */
#define BATCH_MIN 512

struct batch {
	struct hsite **h, **traps;
	uintptr_t *target, *addrs;
	struct trail_arch_poke *pk;
	size_t n, ntraps, cap, len;
	/* where each object's sites end in h (hook_obj): a direct write
	 * makes pages writable a run at a time, which must not reach over
	 * another object's pages (a library's GOT made read-only) */
	size_t *ends, nends;
	int live;
	int fresh; /* an object dlopen is loading: not relocated yet */
};

static int batch_init(struct batch *b, int live, size_t want)
{
	size_t cap = want > BATCH_MIN ? want : BATCH_MIN;
	uint8_t *m;

	b->n = b->ntraps = b->nends = 0;
	b->live = live;
	b->fresh = 0;
	b->cap = cap;
	b->len = cap * (sizeof(*b->h) + sizeof(*b->traps) + sizeof(*b->target) +
			sizeof(*b->addrs) + sizeof(*b->pk)) +
		 MAX_OBJS * sizeof(*b->ends);
	m = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		b->cap = 0;
		return -ENOMEM;
	}
	b->pk = (struct trail_arch_poke *)m;
	b->h = (struct hsite **)(m + cap * sizeof(*b->pk));
	b->traps = b->h + cap;
	b->target = (uintptr_t *)(b->traps + cap);
	b->addrs = b->target + cap;
	b->ends = (size_t *)(b->addrs + cap);
	return 0;
}

static void batch_fini(struct batch *b)
{
	if (b->cap)
		munmap(b->pk, b->len);
	b->cap = 0;
}

/* pk[0 .. n) sorted by address: a heap sort (no qsort here: it may
 * allocate, and this runs in the control signal handler) */
static void sort_pokes(struct trail_arch_poke *pk, size_t n)
{
	for (size_t end = n, start = n / 2; end > 1;) {
		size_t root, child;
		struct trail_arch_poke t;

		if (start) {
			root = --start;
		} else {
			t = pk[0];
			pk[0] = pk[--end];
			pk[end] = t;
			root = 0;
		}
		while ((child = 2 * root + 1) < end) {
			if (child + 1 < end && pk[child].addr < pk[child + 1].addr)
				child++;
			if (pk[root].addr >= pk[child].addr)
				break;
			t = pk[root];
			pk[root] = pk[child];
			pk[child] = t;
			root = child;
		}
	}
}

/* Write a batch: the jumps in address order (hsite order is by hash);
 * live, breakpoint first with every thread stepped out (fstep.c, which
 * needs the addresses sorted), else directly. */
static int batch_flush(struct batch *b)
{
	struct trail_arch_poke *pk = b->pk;
	size_t n = b->n, nt = b->ntraps, ne = b->nends;
	int r = 0;

	b->n = b->ntraps = b->nends = 0;
	/* (one that fails stays unpatched: its masks do nothing) */
	for (size_t i = 0; i < nt; i++)
		if (!b->traps[i]->patched)
			patch_trap(b->traps[i]);
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		pk[i] = (struct trail_arch_poke){.addr = b->h[i]->addr};
		memcpy(b->h[i]->orig, (const void *)pk[i].addr, TRAIL_ARCH_SITE_SIZE);
		trail_arch_jump_insn(pk[i].bytes, pk[i].addr, b->target[i]);
	}
	if (b->live) {
		sort_pokes(pk, n);
		for (size_t i = 0; i < n; i++)
			b->addrs[i] = pk[i].addr;
		r = trail__step_poke(pk, n, b->addrs);
	} else {
		/* object by object (the last one's sites may not be marked) */
		for (size_t e = 0, from = 0; !r && from < n; e++) {
			size_t to = e < ne && b->ends[e] <= n ? b->ends[e] : n;

			if (to <= from)
				continue;
			sort_pokes(pk + from, to - from);
			r = trail_arch_text_write_many(pk + from, to - from);
			from = to;
		}
	}
	if (!r)
		for (size_t i = 0; i < n; i++)
			b->h[i]->patched = 1;
	return r;
}

/*
 * Hook in object o what session s selects (under the control lock, room
 * reserved in the table). b->live: other threads may run o's code, so
 * sites go through breakpoints; else they are written directly (at the
 * end of o, for direct batches). Returns the number of functions hooked,
 * or the error of a live batch that failed (-EBUSY, -ETIMEDOUT: see
 * fstep.c).
 */
static int hook_obj_slots(unsigned s, struct psess *ps, struct hobj *o, struct batch *b);

static int hook_obj(unsigned s, struct psess *ps, struct hobj *o, struct batch *b)
{
	int r = hook_obj_slots(s, ps, o, b), f;

	/* where o's sites end (no room to say it: written now) */
	if (b->nends == MAX_OBJS && (f = batch_flush(b)) < 0 && r >= 0)
		r = f;
	if (b->n && (!b->nends || b->ends[b->nends - 1] != b->n))
		b->ends[b->nends++] = b->n;
	got_close();
	trail__fobjs_seal();
	return r;
}

/* Does session s trace function k of o (its -l, -n, -g)? *root: as a
 * graph root (-g). */
static int traces(const struct psess *ps, const struct hobj *o, uint32_t k, int any_l,
		  int any_g, int *root)
{
	struct sel r = {trail__fsite_name(&o->fo, &o->fo.sites[k]), o->path, 0};

	if (any_g)
		trail__spec_opts(ps->spec, "g", glob_hit, &r);
	*root = r.hit;
	/* a graph root is traced even when -l leaves it out; a library's
	 * calls into others (--nest-libcall) are, like the program's, when
	 * no -l narrows */
	return r.hit || selected(ps->spec, r.name, o->path, any_l,
				 o->fo.unmod && o->fo.lib && !(o->fo.sites[k].flags & FSITE_PLT));
}

/* Does library call k of o (FSITE_PLT) go to a function session s traces
 * by its own entry? That one's hook records the call: the PLT's is not
 * used. */
static int plt_redundant(const struct psess *ps, struct hobj *o, uint32_t k, int any_l,
			 int any_g)
{
	uint32_t j;
	struct hobj *d = trail__fobjs_plt_dest(o, k, &j);
	int root;

	if (!d || (d->fo.sites[j].flags & (FSITE_PLT | FSITE_REFUSED)))
		return 0;
	return !(d->fo.unmod && d->fo.lib) || traces(ps, d, j, any_l, any_g, &root);
}

/* A function hooked through a breakpoint: counted, and its address in the
 * arena's table (the recorder marks its symbol: `[breakpoint]` in the
 * report's summary), before its object is published */
static void note_trap(struct psess *ps, uintptr_t addr)
{
	struct trail_trapsite *t =
		(struct trail_trapsite *)(ps->base + ps->g.mods_off +
					  (uint64_t)ps->g.max_mods * sizeof(struct trail_mod));
	uint32_t i = __atomic_fetch_add(&ps->hdr->ntraps, 1, __ATOMIC_RELAXED);

	__atomic_fetch_add(&ps->hdr->trap_hooks, 1, __ATOMIC_RELAXED);
	if (i >= TRAIL_TRAPS(ps->g.max_mods))
		return;
	t[i].pid = (uint32_t)trail__pid;
	t[i].addr = addr;
	/* pairs with the recorder's acquire load */
	__atomic_store_n(&t[i].state, 1, __ATOMIC_RELEASE);
}

static int hook_obj_slots(unsigned s, struct psess *ps, struct hobj *o, struct batch *b)
{
	int any_l = 0, any_g = 0, n = 0, r, nolib = 0, nest = 0;
	int tracer = !!(__atomic_load_n(&tracer_sessions, __ATOMIC_RELAXED) & (1u << s));
	int probing = !!(__atomic_load_n(&probe_sessions, __ATOMIC_RELAXED) & (1u << s));

	trail__spec_opts(ps->spec, "l", has_opt, &any_l);
	trail__spec_opts(ps->spec, "g", has_opt, &any_g);
	trail__spec_opts(ps->spec, "nolibcall", has_opt, &nolib);
	trail__spec_opts(ps->spec, "nestlibcall", has_opt, &nest);
	for (uint32_t k = 0; k < o->fo.nsites; k++) {
		const struct fsite *f = &o->fo.sites[k];
		const char *name = trail__fsite_name(&o->fo, f);
		struct hsite *h;
		uintptr_t target, at;
		int traced = 0, probed, root = 0;

		/* a library's calls: with --nest-libcall, in objects relocated
		 * already (a new one's slots are filled after this) */
		if ((f->flags & FSITE_PLT) && (nolib || (o->fo.lib && (!nest || b->fresh))))
			continue;
		if (tracer)
			traced = traces(ps, o, k, any_l, any_g, &root);
		/* (a PLT site is a library call, no function of o) */
		at = (f->flags & FSITE_PLT) ? 0 : f->addr - o->fo.base;
		probed = probing && trail__fprobe_wants(s, o, name, at);
		if (!traced && !probed)
			continue;
		if ((f->flags & FSITE_PLT) && plt_redundant(ps, o, k, any_l, any_g))
			continue;
		/* unmodified code: its entry decoded now (fsites.c) */
		if ((f->flags & FSITE_RELOC) && trail__fobj_check(&o->fo, k))
			continue;
		/* a probe's breakpoint inside its displaced bytes: not hooked
		 * (a whole function's entry becomes a breakpoint: fobjs.c) */
		if ((f->flags & FSITE_RELOC) && !(f->flags & (FSITE_TRAP | FSITE_WHOLE)) &&
		    trail__fprobe_insn_in(f->addr, f->addr + (FSITE_LEN(f) > TRAIL_ARCH_SITE_SIZE
							       ? FSITE_LEN(f) : TRAIL_ARCH_SITE_SIZE)))
			continue;
		target = trail__fobjs_target(o, k);
		h = target ? trail__hinsert(f->addr) : NULL;
		if (!h)
			continue;
		if (!h->patched) {
			if (f->flags & FSITE_PLT) {
				if (patch_got(h, f, target))
					continue;
			} else if (f->flags & FSITE_TRAP) {
				/* (the masks set first are harmless until then) */
				if (!trail__traps_ready() || b->ntraps == b->cap)
					continue;
				b->traps[b->ntraps++] = h;
			} else {
				if (!b->cap) /* (no memory for a batch) */
					continue;
				b->h[b->n] = h;
				b->target[b->n++] = target;
				if (b->n == b->cap && (r = batch_flush(b)))
					return r;
			}
		}
		if (probed)
			trail__fprobe_attach(s, h, o, name, at);
		if (f->flags & FSITE_TRAP) /* (for the recorder to say) */
			note_trap(ps, f->addr);
		if (traced) {
			if (root)
				__atomic_fetch_or(&h->root, 1u << s, __ATOMIC_RELEASE);
			__atomic_fetch_or(&h->mask, 1u << s, __ATOMIC_RELEASE);
		}
		n++;
	}
	if (probing)
		n += trail__fprobe_insn_attach(s, o);
	if (n)
		trail__fobjs_publish(ps, s, o);
	return n;
}

/* A new object (dlopen): hooked for every session with a tracer. Its code
 * cannot run yet (see fobjs.c), so its sites are written directly. */
static void hook_new(struct hobj *o)
{
	for (uint32_t m = __atomic_load_n(&tracer_sessions, __ATOMIC_RELAXED) |
			  __atomic_load_n(&probe_sessions, __ATOMIC_RELAXED);
	     m; m &= m - 1) {
		unsigned s = (unsigned)__builtin_ctz(m);

		struct batch b;

		if (__atomic_load_n(&trail__sess[s].state, __ATOMIC_ACQUIRE) != PS_ACTIVE ||
		    batch_init(&b, 0, o->fo.nsites))
			continue;
		b.fresh = 1;
		hook_obj(s, &trail__sess[s], o, &b);
		batch_flush(&b);
		batch_fini(&b);
	}
	trail__fobjs_cache_save();
}

static void ftracer_leave(unsigned s);

/* the tracer's options in the spec, for the entry handler */
static void configure(unsigned s, const char *spec, int graph)
{
	struct fconf gc = {0};
	char v[32], cv[256];
	int any_g = 0;

	gc.graph = (uint32_t)graph;
	trail__spec_opts(spec, "g", has_opt, &any_g);
	gc.has_roots = (uint32_t)any_g;
	if (trail__spec_opt(spec, "depth", v, sizeof(v)))
		gc.max_depth = (uint32_t)strtoul(v, NULL, 10);
	if (trail__spec_opt(spec, "retval", v, sizeof(v)))
		gc.retval = 1;
	if (trail__spec_opt(spec, "args", v, sizeof(v)))
		gc.args = 1;
	if (trail__spec_opt(spec, "thresh", v, sizeof(v)))
		gc.thresh = strtoull(v, NULL, 10); /* the recorder converted ns to ticks */
	trail__spec_opts(spec, "tid", add_tid, &gc);
	if (trail__spec_opt(spec, "nest", v, sizeof(v))) {
		gc.limit_nest = 1;
		gc.nest = (uint32_t)strtoul(v, NULL, 10);
	}
	if (graph && trail__spec_opt(spec, "counters", cv, sizeof(cv)) &&
	    (gc.csynth = trail__synth_find(spec, TRAIL_CTR_CALL_EVENT)))
		for (const char *p = cv; *p && gc.nctr < TRAIL_CTR_MAX;) {
			size_t k = strcspn(p, ",");
			int c = trail_counter_find(p, k);

			if (c >= 0)
				gc.ctr[gc.nctr++] = (uint8_t)c;
			p += k + (p[k] == ',');
		}
	trail__fhook_config(s, &gc);
}

/*
 * Session slot s joined with this spec: hook what it selects. Called under
 * the control lock; uc is the interrupted context when called from the
 * control signal handler. Returns the number of functions hooked for it,
 * or -errno (then nothing changed for this session).
 */
/* a "@trigger PATTERN TEXT" line that is a stacktrace */
static int stack_line(const char *v, size_t len, void *arg)
{
	char buf[TRAIL_FILTER_MAX_TEXT];
	struct trail_trigger t;
	size_t plen;
	(void)arg;

	return !trail_trigger_spec_line(v, len, buf, &plen, &t) && t.cmd == TRAIL_TRIG_STACKTRACE;
}

/* A session with stacktrace triggers: the walks' loads need the fault
 * handler (fstack.c), and the recorder the process's objects to name the
 * frames; their unwind tables found now, not in the first walks (ustack.c).
 * 0 or -errno. */
static int stacks_join(unsigned s, struct psess *ps)
{
	if (!trail__spec_opts(ps->spec, "trigger", stack_line, NULL))
		return 0;
	if (trail__signals_guard_faults() < 0 || trail__fobjs_discover())
		return -ENOMEM;
	for (unsigned i = 0; i < trail__nobjs; i++)
		trail__fobjs_publish(ps, s, &trail__objs[i]);
	trail__ustack_prime();
	return 0;
}

static int ftracer_join(unsigned s, struct psess *ps, void *uc)
{
	char tracer[32];
	struct batch b;
	int live, n = 0, k, nprobes, has_tracer;
	size_t want = 0;

	has_tracer = trail__spec_opt(ps->spec, "tracer", tracer, sizeof(tracer));
	if (has_tracer && strcmp(tracer, "function_graph") && strcmp(tracer, "function"))
		return -EINVAL;
	if ((k = stacks_join(s, ps)))
		return k;
	/* (the hooks' answers, before anything is patched) */
	trail__fhook_register();
	trail__finsn_register();
	nprobes = trail__fprobe_join(s, ps->spec);
	if (nprobes < 0)
		return nprobes;
	if (!has_tracer && !nprobes)
		return 0;
	live = !single_threaded();
	/* the libraries' calls too: their PLTs read when the objects are
	 * (a session joining after they were read without does without) */
	if (has_tracer)
		trail__spec_opts(ps->spec, "nestlibcall", has_opt, &trail__fsite_lib_plt);
	/* (and objects loaded or unloaded while no tracer watched) */
	if (trail__fobjs_discover() || trail__fobjs_sync(NULL)) {
		trail__fprobe_leave(s);
		return -ENOMEM;
	}
	if (has_tracer) {
		configure(s, ps->spec, !strcmp(tracer, "function_graph"));
		__atomic_fetch_or(&tracer_sessions, 1u << s, __ATOMIC_RELEASE);
	}
	if (nprobes)
		__atomic_fetch_or(&probe_sessions, 1u << s, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < trail__nobjs; i++)
		want += trail__objs[i].fo.nsites;
	if (batch_init(&b, live, want)) {
		ftracer_leave(s);
		return -ENOMEM;
	}
	trail__traps_recheck();
	for (unsigned i = 0; i < trail__nobjs; i++) {
		k = hook_obj(s, ps, &trail__objs[i], &b);
		if (k < 0) {
			batch_fini(&b);
			ftracer_leave(s);
			return k;
		}
		n += k;
	}
	k = batch_flush(&b);
	batch_fini(&b);
	if (k) {
		ftracer_leave(s);
		return k;
	}
	if (uc)
		step_self(uc);
	trail__fobjs_watch(hook_new);
	trail__fobjs_cache_save();
	return n;
}


/* Session slot s is ending: its probes stop before its events are
 * disabled (an entry probe's event off with its return probe's still on
 * would write a return without its entry). A call entered before returns
 * through its probes as long as their events are on. */
static void ftracer_stop(unsigned s)
{
	struct htable *t = trail__htab;

	for (size_t i = 0; t && i < t->cap; i++)
		if (t->slot[i].addr && (t->slot[i].pmask & (1u << s)))
			__atomic_fetch_and(&t->slot[i].pmask, ~(1u << s), __ATOMIC_RELEASE);
	trail__fprobe_insn_stop(s);
}

/* Session slot s is gone: unhook what only it wanted, restoring the
 * original bytes while the program runs (a patched site is one jump
 * instruction, so the breakpoint-first poke applies). Under the control
 * lock, after the grace period (no thread records for s any more). */
/* Put back the jumps of sites which[0 .. n) (n <= RESTORE_MAX, sorted),
 * breakpoint first.
 * *restore: -1 not known yet, 0 not possible (a thread blocks SIGTRAP:
 * the sites then stay hooked, for no session: their calls go through the
 * stub and return at once, and the next session to want them finds them
 * patched), 1 possible. */
#define RESTORE_MAX 4096

static void restore_sites(struct hsite *const *which, size_t n, int *restore)
{
	struct trail_arch_poke one[64], *batch = one;
	size_t len = n * sizeof(*batch);

	if (n > 64 && (batch = mmap(NULL, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return;
	for (size_t k = 0; k < n; k++) {
		batch[k].addr = which[k]->addr;
		memcpy(batch[k].bytes, which[k]->orig, sizeof(which[k]->orig));
	}
	if (*restore < 0)
		*restore = !trail__step_check();
	if (*restore && !trail_arch_poke_live(batch, n))
		for (size_t k = 0; k < n; k++)
			which[k]->patched = 0;
	if (batch != one)
		munmap(batch, len);
}

static void ftracer_leave(unsigned s)
{
	struct hsite *which[64], **all;
	struct htable *t = trail__htab;
	size_t n = 0, nall = 0, cap = t ? t->cap : 0;
	int restore = -1; /* not known yet */

	trail__fhook_clear(s);
	/* the jumps to put back, in address order: a batch then shares its
	 * pages (made writable once each: poke.c), where the table's hash
	 * order scattered them (a mprotect pair per site); in table order
	 * if there is no room for the list */
	all = cap ? mmap(NULL, cap * sizeof(*all), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
	for (size_t i = 0; i <= cap; i++) {
		struct hsite *h = i < cap ? &t->slot[i] : NULL;

		if (h && h->addr && !h->dead &&
		    ((h->mask | h->pmask | trail__fprobe_on(s, h)) & (1u << s))) {
			__atomic_fetch_and(&h->mask, ~(1u << s), __ATOMIC_RELEASE);
			__atomic_fetch_and(&h->root, ~(1u << s), __ATOMIC_RELEASE);
			if (trail__fprobe_on(s, h))
				trail__fprobe_detach(s, h);
			if (!h->mask && !h->pmask && h->patched && h->got) {
				unpatch_got(h);
			} else if (!h->mask && !h->pmask && h->patched && h->trap) {
				struct trail_arch_poke p = {.addr = h->addr, .bytes = {h->orig[0]}};

				/* one byte back: a thread meeting the breakpoint
				 * meanwhile goes through the stub, for no session */
				if (!trail_arch_poke_bytes(&p, 1))
					h->patched = 0;
			} else if (!h->mask && !h->pmask && h->patched) {
				if (all != MAP_FAILED)
					all[nall++] = h;
				else
					which[n++] = h;
			}
		}
		if (n == 64 || (!h && n)) {
			restore_sites(which, n, &restore);
			n = 0;
		}
	}
	if (all != MAP_FAILED) {
		/* Shell sort by address (no qsort here: it may allocate, and
		 * this runs in the control signal handler) */
		for (size_t gap = nall / 2; gap; gap /= 2)
			for (size_t i = gap; i < nall; i++)
				for (size_t j = i; j >= gap && all[j - gap]->addr > all[j]->addr; j -= gap) {
					struct hsite *x = all[j];

					all[j] = all[j - gap];
					all[j - gap] = x;
				}
		for (size_t i = 0; i < nall; i += RESTORE_MAX)
			restore_sites(all + i, nall - i < RESTORE_MAX ? nall - i : RESTORE_MAX,
				      &restore);
		munmap(all, cap * sizeof(*all));
	}
	got_close();
	for (unsigned i = 0; i < trail__nobjs; i++)
		trail__objs[i].published &= ~(1u << s);
	trail__fprobe_insn_leave(s);
	trail__fprobe_leave(s);
	__atomic_fetch_and(&probe_sessions, ~(1u << s), __ATOMIC_RELEASE);
	if (!(__atomic_and_fetch(&tracer_sessions, ~(1u << s), __ATOMIC_RELEASE) |
	      __atomic_load_n(&probe_sessions, __ATOMIC_RELAXED)))
		trail__fobjs_unwatch();
}

/* In a forked child: its objects are the parent's, at the same addresses,
 * but the recorder names addresses per process. */
static void ftracer_forked(unsigned s, struct psess *ps)
{
	trail__prefault(trail__objs, trail__nobjs * sizeof(trail__objs[0]));
	trail__fhook_forked();
	for (unsigned i = 0; i < trail__nobjs; i++)
		if (trail__objs[i].published & (1u << s)) {
			trail__objs[i].published &= ~(1u << s);
			trail__fobjs_publish(ps, s, &trail__objs[i]);
		}
}

static const struct trail_source ftracer = {
	.name = "ftrace",
	.join = ftracer_join,
	.stop = ftracer_stop,
	.leave = ftracer_leave,
	.forked = ftracer_forked,
	/* before anything the child writes: it returns through these first */
	.forked_child = trail__fhook_forked_frames,
};
TRAIL_SOURCE(ftracer);
