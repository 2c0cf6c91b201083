/* SPDX-License-Identifier: MIT */
/*
 * ftrace.c - the function tracer: patched function entries turned into
 * events on the one record path (see doc/design/function-hooks.md).
 *
 * A session whose spec says "@tracer function" selects functions with
 * "@l GLOB" lines (none: all) minus "@n GLOB" lines. At join, libtrail
 * finds the patchable entries of every loaded object (fsites.c), patches
 * the selected ones to call the entry trampoline through a stub page next
 * to each object, and publishes the objects in the arena's module table so
 * the recorder can name addresses. The entry handler looks the site up in a
 * hash table (address -> sessions that want it) and records
 * ftrace:function {ip, parent_ip} into exactly those sessions.
 *
 * Code other threads may run is patched breakpoint-first, every thread
 * stepped out of the nops (see "live patching" below); objects loaded and
 * unloaded later are followed through the loader's debug hook ("objects
 * coming and going"). Unpatching restores the original bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <trail/trail.h>

#include "../arch/arch.h"
#include "../common/clock.h"
#include "../common/util.h"
#include "fsites.h"
#include "internal.h"
#include "record.h"

#define MAX_OBJS 256

/* ------------------------------------------------------------------ events
 * Written by hand rather than with TRAIL_EVENT: the record path here needs
 * the descriptor itself (trail__write_mask), which the macro keeps inside
 * its emitter.
 */
static uint32_t state_function;

static const struct __attribute__((packed)) {
	struct trail_meta_hdr h;
	char p[sizeof("ftrace")];
	char e[sizeof("function")];
	struct __attribute__((packed)) {
		struct trail_meta_field f;
		char s[sizeof("ip")];
	} ip;
	struct __attribute__((packed)) {
		struct trail_meta_field f;
		char s[sizeof("parent_ip")];
	} parent_ip;
} meta_function = { /* not in trail_meta: `trail list` shows programs' own events */
	{TRAIL_META_MAGIC, sizeof(meta_function), 1, 2},
	"ftrace",
	"function",
	{{TRAIL_FK_INT, 8, TRAIL_FF_HEX | TRAIL_FF_PTR, 2, 0}, "ip"},
	{{TRAIL_FK_INT, 8, TRAIL_FF_HEX | TRAIL_FF_PTR, 9, 0}, "parent_ip"},
};

static struct trail_event ev_function = {
	TRAIL_EVENT_ABI, sizeof(struct trail_event), &state_function, &meta_function, 0,
};
static struct trail_event *evp_function
	__attribute__((section("trail_events"), used)) TRAIL__RETAIN = &ev_function;

/* function_graph: entry {func}, exit {} or {retval}, leaf {func, duration}
 * and, with a time threshold, one record per long call {func, duration} */
#define ONE_FIELD_META(var, ev, fld, flags)                                    \
	static const struct __attribute__((packed)) {                          \
		struct trail_meta_hdr h;                                       \
		char p[sizeof("ftrace")];                                      \
		char e[sizeof(ev)];                                            \
		struct __attribute__((packed)) {                               \
			struct trail_meta_field f;                             \
			char s[sizeof(fld)];                                   \
		} f0;                                                          \
	} var = {{TRAIL_META_MAGIC, sizeof(var), 1, 1}, "ftrace", ev,          \
		 {{TRAIL_FK_INT, 8, flags, sizeof(fld) - 1, 0}, fld}}
ONE_FIELD_META(meta_gentry, "funcgraph_entry", "func", TRAIL_FF_HEX | TRAIL_FF_PTR);
ONE_FIELD_META(meta_gexit_ret, "funcgraph_exit_ret", "retval", TRAIL_FF_HEX);
/* a frame a forked child inherited: written into the child's stream at
 * fork, outermost first, so that the report can name the returns whose
 * entries are in the parent's stream (exit records carry no function) */
ONE_FIELD_META(meta_ginherit, "funcgraph_inherited", "func", TRAIL_FF_HEX | TRAIL_FF_PTR);
static const struct __attribute__((packed)) {
	struct trail_meta_hdr h;
	char p[sizeof("ftrace")];
	char e[sizeof("funcgraph_exit")];
} meta_gexit = {{TRAIL_META_MAGIC, sizeof(meta_gexit), 1, 0}, "ftrace", "funcgraph_exit"};
/* {func, duration}: a long call (threshold mode), or a leaf: a call that
 * returned before its thread wrote anything else, entry and exit in one
 * record stamped with the entry's time. Durations in clock ticks. */
#define FUNC_DURATION_META(var, ev, dur_size)                                  \
	static const struct __attribute__((packed)) {                          \
		struct trail_meta_hdr h;                                       \
		char p[sizeof("ftrace")];                                      \
		char e[sizeof(ev)];                                            \
		struct __attribute__((packed)) {                               \
			struct trail_meta_field f;                             \
			char s[sizeof("func")];                                \
		} f0;                                                          \
		struct __attribute__((packed)) {                               \
			struct trail_meta_field f;                             \
			char s[sizeof("duration")];                            \
		} f1;                                                          \
	} var = {{TRAIL_META_MAGIC, sizeof(var), 1, 2}, "ftrace", ev,          \
		 {{TRAIL_FK_INT, 8, TRAIL_FF_HEX | TRAIL_FF_PTR, 4, 0}, "func"},   \
		 {{TRAIL_FK_INT, dur_size, 0, 8, 0}, "duration"}}
FUNC_DURATION_META(meta_gcall, "funcgraph_call", 8);
FUNC_DURATION_META(meta_gleaf, "funcgraph_leaf", 4);

#define INTERNAL_EVENT(name, meta)                                             \
	static uint32_t state_##name;                                          \
	static struct trail_event ev_##name = {                                \
		TRAIL_EVENT_ABI, sizeof(struct trail_event), &state_##name,    \
		&meta, 0};                                                     \
	static struct trail_event *evp_##name                                  \
		__attribute__((section("trail_events"), used)) TRAIL__RETAIN = \
			&ev_##name
INTERNAL_EVENT(gentry, meta_gentry);
INTERNAL_EVENT(gexit, meta_gexit);
INTERNAL_EVENT(gexit_ret, meta_gexit_ret);
INTERNAL_EVENT(gcall, meta_gcall);
INTERNAL_EVENT(gleaf, meta_gleaf);
INTERNAL_EVENT(ginherit, meta_ginherit);

/* ------------------------------------------------------------------ sites */

struct hsite {
	uintptr_t addr;   /* 0: empty slot */
	uint32_t mask;    /* sessions that want this function */
	uint32_t root;    /* sessions for which it is a -g graph root */
	uint8_t orig[TRAIL_ARCH_SITE_SIZE];
	uint8_t patched;
	uint8_t dead;     /* its object was unloaded (a tombstone) */
};

/* Open addressing, a power of two. Lock-free readers (the hooks, the trap
 * and step handlers) load the pointer; a grown table is published whole
 * and the old one stays mapped (a reader may still be probing it). */
struct htable {
	size_t cap;
	size_t used; /* slots with an address, tombstones included */
	struct hsite slot[];
};

struct hobj {
	struct fobj fo;   /* nsites 0: an object without sites, known */
	char path[464];
	char dlname[64];  /* what dl_iterate_phdr called it (truncated) */
	uint64_t dev, ino;
	uintptr_t xlo, xhi; /* its executable segments: where its code is */
	uint8_t *stubs;   /* its stub area (one stub per site), or NULL */
	size_t stubs_len;
	uint32_t published; /* sessions whose module table has it */
	uint32_t modslot[TRAIL_MAX_SESSIONS]; /* its slot there */
	uint32_t seen;    /* rescan: still loaded */
};

/* per session slot: what its tracer does */
static struct gconf {
	uint32_t graph;     /* function_graph (else function) */
	uint32_t has_roots; /* -g given: record only below a root */
	uint32_t max_depth; /* 0: none */
	uint32_t retval;
	uint64_t thresh;    /* ticks; 0: record every call */
	uint32_t ntids;     /* --tid: only these threads (0: all) */
	int32_t tids[32];
	uint32_t nest;      /* --nest: deepest signal handler level traced */
} gconf[TRAIL_MAX_SESSIONS];
static uint32_t graph_sessions; /* bits: sessions with function_graph */
static uint32_t thresh_sessions;
static uint32_t retval_sessions;
static uint32_t simple_sessions; /* function_graph without roots, depth
				  * limit or threshold: nothing to decide */
static uint32_t tracer_sessions; /* sessions with a tracer at all */
static uint32_t tid_sessions;    /* sessions limited to some threads */
static uint32_t nest_sessions;   /* sessions with a --nest limit */
static uint32_t tid_gen;         /* changes when those lists do */

static struct hobj objs[MAX_OBJS];
static unsigned nobjs;
static int discovered;
static struct htable *htab;

static size_t hslot(uintptr_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static struct hsite *hfind(uintptr_t a)
{
	struct htable *t = __atomic_load_n(&htab, __ATOMIC_ACQUIRE);

	if (!t)
		return NULL;
	for (size_t i = hslot(a, t->cap), n = 0; n < t->cap; i = (i + 1) & (t->cap - 1), n++) {
		if (t->slot[i].addr == a)
			return &t->slot[i];
		if (!t->slot[i].addr)
			return NULL;
	}
	return NULL;
}

/* Under the control lock, with room reserved (hreserve). */
static struct hsite *hinsert(uintptr_t a)
{
	struct htable *t = htab;

	for (size_t i = hslot(a, t->cap), n = 0; n < t->cap; i = (i + 1) & (t->cap - 1), n++) {
		struct hsite *h = &t->slot[i];

		if (h->addr == a) {
			if (h->dead) { /* a new object where an old one was */
				h->mask = h->root = 0;
				h->patched = 0;
				__atomic_store_n(&h->dead, 0, __ATOMIC_RELEASE);
			}
			return h;
		}
		if (!h->addr) {
			h->addr = a;
			t->used++;
			return h;
		}
	}
	return NULL;
}

/* Room for `more` sites: a table at most half full, grown by copying the
 * live entries (tombstones are dropped then). Under the control lock. */
static int hreserve(size_t more)
{
	struct htable *t = htab, *nt;
	size_t cap = 64, live = 0;

	if (t && (t->used + more) * 2 <= t->cap)
		return 0;
	for (size_t i = 0; t && i < t->cap; i++)
		live += t->slot[i].addr && !t->slot[i].dead;
	while (cap < (live + more) * 2)
		cap *= 2;
	nt = mmap(NULL, sizeof(*nt) + cap * sizeof(nt->slot[0]), PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (nt == MAP_FAILED)
		return -ENOMEM;
	nt->cap = cap;
	for (size_t i = 0; t && i < t->cap; i++) {
		const struct hsite *h = &t->slot[i];

		if (h->addr && !h->dead) {
			size_t k = hslot(h->addr, cap);

			while (nt->slot[k].addr)
				k = (k + 1) & (cap - 1);
			nt->slot[k] = *h;
			nt->used++;
		}
	}
	/* pairs with hfind's acquire: the entries are there before the table */
	__atomic_store_n(&htab, nt, __ATOMIC_RELEASE);
	return 0;
}

static int is_self(const struct dl_phdr_info *info)
{
	/* libtrail never traces itself: the object holding this function */
	uintptr_t me = (uintptr_t)&is_self;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && me >= lo && me - lo < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* The object dl_iterate_phdr reports, if we know it (same bias, same name). */
static struct hobj *obj_known(const struct dl_phdr_info *info)
{
	for (unsigned i = 0; i < nobjs; i++)
		if (objs[i].fo.base == info->dlpi_addr &&
		    !strncmp(objs[i].dlname, info->dlpi_name, sizeof(objs[i].dlname) - 1))
			return &objs[i];
	return NULL;
}

static int discover_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct hobj *o;
	struct stat st;
	const char *path = info->dlpi_name;
	char exe[464];
	(void)size;
	(void)arg;

	if ((o = obj_known(info)) != NULL) {
		o->seen = 1;
		return 0;
	}
	if (nobjs == MAX_OBJS || is_self(info) || !strncmp(path, "linux-vdso", 10) ||
	    !strncmp(path, "linux-gate", 10))
		return 0;
	if (!*path) { /* the executable */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0)
			return 0;
		exe[n] = '\0';
		path = exe;
	}
	o = &objs[nobjs];
	memset(o, 0, sizeof(*o));
	if (trail__fobj_load(&o->fo, path, info->dlpi_addr, info) || !o->fo.nsites) {
		/* known, with nothing to hook: not opened again at each rescan */
		trail__fobj_free(&o->fo);
		memset(&o->fo, 0, sizeof(o->fo));
	}
	o->fo.base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!o->xlo || lo < o->xlo)
			o->xlo = lo;
		if (lo + ph->p_memsz > o->xhi)
			o->xhi = lo + ph->p_memsz;
	}
	if (stat(path, &st) == 0) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	memcpy(o->path, path, strnlen(path, sizeof(o->path) - 1));
	memcpy(o->dlname, info->dlpi_name, strnlen(info->dlpi_name, sizeof(o->dlname) - 1));
	o->seen = 1;
	nobjs++;
	return 0;
}

/* Find every object's sites once; size the hash table for all of them. */
static int discover(void)
{
	size_t total = 0;

	if (discovered)
		return 0;
	dl_iterate_phdr(discover_one, NULL);
	for (unsigned i = 0; i < nobjs; i++)
		total += objs[i].fo.nsites;
	if (hreserve(total))
		return -ENOMEM;
	discovered = 1;
	return 0;
}

/* Where site k of an object jumps: its stub, in the object's stub area
 * (made for all its sites at the first hook), or 0. */
static uintptr_t target_for(struct hobj *o, uint32_t k)
{
	if (!o->stubs) {
		uint8_t *a = trail_arch_near_map(o->fo.lo, o->fo.hi,
						 TRAIL_ARCH_STUBS_HDR +
							 (size_t)o->fo.nsites * TRAIL_ARCH_STUB_SIZE,
						 &o->stubs_len);

		if (!a)
			return 0;
		trail_arch_stub_area_init(a);
		for (uint32_t i = 0; i < o->fo.nsites; i++)
			trail_arch_site_stub(a, i, o->fo.sites[i].addr);
		if (mprotect(a, o->stubs_len, PROT_READ | PROT_EXEC)) {
			munmap(a, o->stubs_len);
			return 0;
		}
		o->stubs = a;
	}
	return trail_arch_stub_at(o->stubs, k);
}

/* ------------------------------------------------------------ selection */

struct sel {
	const char *name;
	int hit;
};

static int glob_hit(const char *v, size_t len, void *arg)
{
	struct sel *s = arg;

	if (trail__glob(v, len, s->name, strlen(s->name)))
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
	struct gconf *gc = arg;
	long t = 0;

	for (size_t i = 0; i < len && v[i] >= '0' && v[i] <= '9' && t < 1L << 31; i++)
		t = t * 10 + (v[i] - '0');
	if (t > 0 && t < 1L << 31 && gc->ntids < sizeof(gc->tids) / sizeof(gc->tids[0]))
		gc->tids[gc->ntids++] = (int32_t)t;
	return 0;
}

static int selected(const char *spec, const char *name, int any_l)
{
	struct sel s = {name, 0};

	if (!*name)
		return 0; /* a site without a symbol: nothing to select it by */
	if (any_l) {
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

static void publish_module(struct psess *ps, unsigned s, struct hobj *o)
{
	struct trail_mod *mods = (struct trail_mod *)(ps->base + ps->g.mods_off);
	uint32_t i;

	if (o->published & (1u << s))
		return;
	i = __atomic_fetch_add(&ps->hdr->nmods, 1, __ATOMIC_RELAXED);
	if (i >= ps->g.max_mods)
		return;
	mods[i].pid = (uint32_t)trail__pid;
	mods[i].base = o->fo.base;
	mods[i].lo = o->xlo;
	mods[i].hi = o->xhi;
	mods[i].dev = o->dev;
	mods[i].ino = o->ino;
	memcpy(mods[i].path, o->path, sizeof(mods[i].path));
	mods[i].path[sizeof(mods[i].path) - 1] = '\0';
	/* pairs with the recorder's acquire load */
	__atomic_store_n(&mods[i].state, TRAIL_MS_READY, __ATOMIC_RELEASE);
	o->published |= 1u << s;
	o->modslot[s] = i;
}

static int patch(struct hsite *h, uintptr_t target)
{
	uint8_t insn[TRAIL_ARCH_SITE_SIZE];

	memcpy(h->orig, (const void *)h->addr, sizeof(h->orig));
	trail_arch_jump_insn(insn, h->addr, target);
	if (trail_arch_text_write((void *)h->addr, insn, sizeof(insn)))
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
#include <ucontext.h>

/* Patch a batch of sites while other threads run. */
static int patch_live(struct hsite **hs, size_t n, uintptr_t *addrs, const uintptr_t *targets)
{
	struct trail_arch_poke *pk;
	size_t len = n * sizeof(*pk);
	int r;

	pk = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pk == MAP_FAILED)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		pk[i].addr = hs[i]->addr;
		memcpy(hs[i]->orig, (const void *)hs[i]->addr, TRAIL_ARCH_SITE_SIZE);
		trail_arch_jump_insn(pk[i].bytes, hs[i]->addr, targets[i]);
		addrs[i] = hs[i]->addr;
	}
	/* the step handler needs them sorted: hsite order is by hash */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && addrs[j - 1] > addrs[j]; j--) {
			uintptr_t t = addrs[j];

			addrs[j] = addrs[j - 1];
			addrs[j - 1] = t;
		}
	r = trail__step_poke(pk, n, addrs);
	if (!r)
		for (size_t i = 0; i < n; i++)
			hs[i]->patched = 1;
	munmap(pk, len ? len : 1);
	return r;
}

/* The thread a control signal interrupted may have been inside a site
 * just patched: move it past (the nops it skips did nothing). */
static void step_self(void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];

	for (uintptr_t k = 1; k < TRAIL_ARCH_SITE_SIZE; k++) {
		const struct hsite *h = hfind(ip - k);

		if (h && h->patched && !h->dead) {
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(ip - k + TRAIL_ARCH_SITE_SIZE);
			return;
		}
	}
}

/* Sites waiting to be patched while other threads run, 64 at a time. */
struct batch {
	struct hsite *h[64];
	uintptr_t target[64], addrs[64];
	size_t n;
};

static int batch_flush(struct batch *b)
{
	int r = b->n ? patch_live(b->h, b->n, b->addrs, b->target) : 0;

	b->n = 0;
	return r;
}

/*
 * Hook in object o what session s selects (under the control lock, room
 * reserved in the table). live: other threads may run o's code, so sites
 * go through b; else they are written directly. Returns the number of
 * functions hooked, or the error of a live batch that failed (-EBUSY,
 * -ETIMEDOUT: see fstep.c).
 */
static int hook_obj(unsigned s, struct psess *ps, struct hobj *o, int live, struct batch *b)
{
	int any_l = 0, any_g = 0, n = 0, r;

	trail__spec_opts(ps->spec, "l", has_opt, &any_l);
	trail__spec_opts(ps->spec, "g", has_opt, &any_g);
	for (uint32_t k = 0; k < o->fo.nsites; k++) {
		const struct fsite *f = &o->fo.sites[k];
		struct sel root = {trail__fsite_name(&o->fo, f), 0};
		struct hsite *h;
		uintptr_t target;

		if (any_g)
			trail__spec_opts(ps->spec, "g", glob_hit, &root);
		/* a graph root is traced even when -l leaves it out */
		if (!root.hit && !selected(ps->spec, root.name, any_l))
			continue;
		h = hinsert(f->addr);
		target = target_for(o, k);
		if (!h || !target)
			continue;
		if (!h->patched) {
			if (!live) {
				if (patch(h, target))
					continue;
			} else {
				/* the masks set first are harmless until then */
				b->h[b->n] = h;
				b->target[b->n++] = target;
				if (b->n == 64 && (r = batch_flush(b)))
					return r;
			}
		}
		if (root.hit)
			__atomic_fetch_or(&h->root, 1u << s, __ATOMIC_RELEASE);
		__atomic_fetch_or(&h->mask, 1u << s, __ATOMIC_RELEASE);
		n++;
	}
	if (n)
		publish_module(ps, s, o);
	return n;
}

/* ------------------------------------------------ objects coming and going
 *
 * The dynamic loader calls _dl_debug_state() (r_debug.r_brk) at every
 * change of its list of objects, as debuggers know: RT_ADD or RT_DELETE
 * before, RT_CONSISTENT after. A breakpoint there (trail_arch_watch) runs
 * linkmap_changed() in the thread doing dlopen/dlclose, with the loader's
 * lock held. After an add, the new objects are mapped but neither
 * relocated nor initialized: no thread can run their code yet, so their
 * sites are written directly. After a delete, the objects are unmapped:
 * their sites become tombstones. The breakpoint stays while a session has
 * a tracer.
 */
static int find_debug(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	/* the first object is the executable: its DT_DEBUG points at the
	 * loader's own r_debug (_r_debug may be a stale copy-relocated one) */
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
			const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr +
								 info->dlpi_phdr[i].p_vaddr);

			for (; d->d_tag != DT_NULL; d++)
				if (d->d_tag == DT_DEBUG)
					*(struct r_debug **)arg = (struct r_debug *)d->d_un.d_ptr;
		}
	return 1;
}

static struct r_debug *loader_debug;
static int watching;

/*
 * Under the control lock: bring objs[] up to date with the loaded objects.
 * The gone ones leave tombstones for their sites and free their stubs; the
 * new ones are appended, with room in the table for their sites, and when
 * hook_new is set hooked for every session with a tracer.
 */
static int sync_objects(int hook_new)
{
	unsigned before = nobjs, keep = 0;
	uint32_t tracers = __atomic_load_n(&tracer_sessions, __ATOMIC_RELAXED);
	size_t more = 0;
	int r = 0;

	for (unsigned i = 0; i < nobjs; i++)
		objs[i].seen = 0;
	dl_iterate_phdr(discover_one, NULL);
	for (unsigned i = 0; i < before; i++) {
		struct hobj *o = &objs[i];

		if (o->seen)
			continue;
		for (uint32_t k = 0; k < o->fo.nsites; k++) {
			struct hsite *h = hfind(o->fo.sites[k].addr);

			if (h && !h->dead) {
				__atomic_store_n(&h->mask, 0, __ATOMIC_RELEASE);
				h->root = 0;
				h->patched = 0;
				__atomic_store_n(&h->dead, 1, __ATOMIC_RELEASE);
			}
		}
		if (o->stubs)
			munmap(o->stubs, o->stubs_len);
		trail__fobj_free(&o->fo);
		/* tell the recorders: events after now at these addresses
		 * are another object's */
		for (uint32_t m = o->published; m; m &= m - 1) {
			unsigned s = (unsigned)__builtin_ctz(m);
			struct psess *ps = &trail__sess[s];
			struct trail_mod *mods = (struct trail_mod *)(ps->base + ps->g.mods_off);

			if (__atomic_load_n(&ps->state, __ATOMIC_ACQUIRE) != PS_ACTIVE ||
			    o->modslot[s] >= ps->g.max_mods)
				continue;
			mods[o->modslot[s]].gone = trail__clock_now(trail__clock);
			__atomic_store_n(&mods[o->modslot[s]].state, TRAIL_MS_GONE, __ATOMIC_RELEASE);
		}
	}
	for (unsigned i = before; i < nobjs; i++)
		more += objs[i].fo.nsites;
	if (more && hreserve(more))
		r = -ENOMEM;
	for (unsigned i = before; !r && hook_new && i < nobjs; i++)
		for (uint32_t m = tracers; m; m &= m - 1) {
			unsigned s = (unsigned)__builtin_ctz(m);

			if (__atomic_load_n(&trail__sess[s].state, __ATOMIC_ACQUIRE) == PS_ACTIVE)
				hook_obj(s, &trail__sess[s], &objs[i], 0, NULL);
		}
	for (unsigned i = 0; i < nobjs; i++) /* the slots of the gone ones */
		if (objs[i].seen) {
			if (keep != i)
				objs[keep] = objs[i];
			keep++;
		}
	nobjs = keep;
	return r;
}

static void rescan(void)
{
	if (discovered && __atomic_load_n(&tracer_sessions, __ATOMIC_RELAXED))
		sync_objects(1);
}

static void linkmap_changed(void *uc)
{
	(void)uc;
	if (loader_debug &&
	    __atomic_load_n(&loader_debug->r_state, __ATOMIC_RELAXED) == RT_CONSISTENT &&
	    __atomic_load_n(&tracer_sessions, __ATOMIC_RELAXED))
		trail__ctl_locked(rescan);
}

static void watch_start(void)
{
	if (watching)
		return;
	if (!loader_debug)
		dl_iterate_phdr(find_debug, &loader_debug);
	if (loader_debug && !trail_arch_watch(loader_debug->r_brk, linkmap_changed))
		watching = 1;
}

/*
 * Session slot s joined with this spec: hook what it selects. Called under
 * the control lock; uc is the interrupted context when called from the
 * control signal handler. Returns the number of functions hooked for it,
 * or -errno (then nothing changed for this session).
 */
int trail__ftrace_join(unsigned s, struct psess *ps, void *uc)
{
	char tracer[32], v[32];
	struct gconf gc = {0};
	struct batch b;
	int any_g = 0, live, n = 0, nest, k;

	if (!trail__spec_opt(ps->spec, "tracer", tracer, sizeof(tracer)))
		return 0;
	if (!strcmp(tracer, "function_graph"))
		gc.graph = 1;
	else if (strcmp(tracer, "function"))
		return -EINVAL;
	live = !single_threaded();
	if (discover())
		return -ENOMEM;
	/* objects loaded or unloaded while no tracer watched */
	if (sync_objects(0))
		return -ENOMEM;
	trail__spec_opts(ps->spec, "g", has_opt, &any_g);
	gc.has_roots = (uint32_t)any_g;
	if (trail__spec_opt(ps->spec, "depth", v, sizeof(v)))
		gc.max_depth = (uint32_t)strtoul(v, NULL, 10);
	if (trail__spec_opt(ps->spec, "retval", v, sizeof(v)))
		gc.retval = 1;
	if (trail__spec_opt(ps->spec, "thresh", v, sizeof(v)))
		gc.thresh = strtoull(v, NULL, 10); /* the recorder converted ns to ticks */
	trail__spec_opts(ps->spec, "tid", add_tid, &gc);
	nest = trail__spec_opt(ps->spec, "nest", v, sizeof(v));
	if (nest)
		gc.nest = (uint32_t)strtoul(v, NULL, 10);
	gconf[s] = gc;
	if (gc.ntids) {
		__atomic_fetch_add(&tid_gen, 1, __ATOMIC_RELEASE);
		__atomic_fetch_or(&tid_sessions, 1u << s, __ATOMIC_RELEASE);
	}
	if (gc.graph)
		__atomic_fetch_or(&graph_sessions, 1u << s, __ATOMIC_RELEASE);
	if (nest)
		__atomic_fetch_or(&nest_sessions, 1u << s, __ATOMIC_RELEASE);
	if (gc.thresh)
		__atomic_fetch_or(&thresh_sessions, 1u << s, __ATOMIC_RELEASE);
	if (gc.retval)
		__atomic_fetch_or(&retval_sessions, 1u << s, __ATOMIC_RELEASE);
	if (gc.graph && !gc.has_roots && !gc.max_depth && !gc.thresh)
		__atomic_fetch_or(&simple_sessions, 1u << s, __ATOMIC_RELEASE);
	b.n = 0;
	for (unsigned i = 0; i < nobjs; i++) {
		k = hook_obj(s, ps, &objs[i], live, &b);
		if (k < 0) {
			trail__ftrace_leave(s);
			return k;
		}
		n += k;
	}
	if ((k = batch_flush(&b))) {
		trail__ftrace_leave(s);
		return k;
	}
	if (uc)
		step_self(uc);
	__atomic_fetch_or(&tracer_sessions, 1u << s, __ATOMIC_RELEASE);
	watch_start();
	return n;
}

/* In a forked child: its objects are the parent's, at the same addresses,
 * but the recorder names addresses per process. */
void trail__ftrace_forked(unsigned s, struct psess *ps)
{
	__atomic_fetch_add(&tid_gen, 1, __ATOMIC_RELEASE); /* new thread ids */
	for (unsigned i = 0; i < nobjs; i++)
		if (objs[i].published & (1u << s)) {
			objs[i].published &= ~(1u << s);
			publish_module(ps, s, &objs[i]);
		}
}

int trail__arch_site_known(uintptr_t addr)
{
	const struct hsite *h = hfind(addr);

	return h && !__atomic_load_n(&h->dead, __ATOMIC_ACQUIRE);
}

/* Session slot s is gone: unhook what only it wanted, restoring the
 * original bytes while the program runs (a patched site is one jump
 * instruction, so the breakpoint-first poke applies). Under the control
 * lock, after the grace period (no thread records for s any more). */
void trail__ftrace_leave(unsigned s)
{
	struct trail_arch_poke batch[64];
	struct hsite *which[64];
	struct htable *t = htab;
	size_t n = 0, cap = t ? t->cap : 0;
	int restore = -1; /* not known yet */

	__atomic_fetch_add(&trail__pend_gen, 1, __ATOMIC_RELAXED);

	for (size_t i = 0; i <= cap; i++) {
		struct hsite *h = i < cap ? &t->slot[i] : NULL;

		if (h && h->addr && !h->dead && (h->mask & (1u << s))) {
			__atomic_fetch_and(&h->mask, ~(1u << s), __ATOMIC_RELEASE);
			__atomic_fetch_and(&h->root, ~(1u << s), __ATOMIC_RELEASE);
			if (!h->mask && h->patched) {
				batch[n].addr = h->addr;
				memcpy(batch[n].bytes, h->orig, sizeof(h->orig));
				which[n++] = h;
			}
		}
		if (n == 64 || (!h && n)) {
			/* restoring goes breakpoint first too: not while a thread
			 * blocks SIGTRAP (one that started to after the attach).
			 * The sites then stay hooked, for no session: their calls
			 * go through the stub and return at once, and the next
			 * session to want them finds them patched. */
			if (restore < 0)
				restore = !trail__step_check();
			if (restore && !trail_arch_poke_live(batch, n))
				for (size_t k = 0; k < n; k++)
					which[k]->patched = 0;
			n = 0;
		}
	}
	for (unsigned i = 0; i < nobjs; i++)
		objs[i].published &= ~(1u << s);
	__atomic_fetch_and(&graph_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&thresh_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&retval_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&simple_sessions, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&nest_sessions, ~(1u << s), __ATOMIC_RELEASE);
	if (__atomic_fetch_and(&tid_sessions, ~(1u << s), __ATOMIC_RELEASE) & (1u << s))
		__atomic_fetch_add(&tid_gen, 1, __ATOMIC_RELEASE);
	if (!__atomic_and_fetch(&tracer_sessions, ~(1u << s), __ATOMIC_RELEASE) && watching) {
		trail_arch_unwatch();
		watching = 0;
	}
}

/* --------------------------------------------------------------- handler */

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
	uint64_t ts;     /* entry time (threshold mode) */
	uint32_t mask;   /* sessions that recorded the entry */
	uint32_t roots;  /* sessions for which this frame is a root */
};

struct gstack {
	uint32_t depth;
	uint32_t full;   /* calls not hooked: stack full */
	uint32_t below_root[TRAIL_MAX_SESSIONS]; /* root frames open */
	struct gframe f[GSTACK_FRAMES];
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

			for (uint32_t i = 0; i < gconf[s].ntids; i++)
				if (gconf[s].tids[i] == tid)
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

		if (level > gconf[s].nest)
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
		const struct gconf *c = &gconf[s];

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
 * their exit. So a function_graph entry is not written at once: the thread's
 * writer keeps it (pend*), and if the call returns first, one leaf record
 * {func, duration} stamped with the entry's time stands for both (one write
 * instead of two, the same 16 bytes). Any other record of the thread at the
 * outermost level writes the kept entry first (write_event), so each stream
 * stays in time order. Deferred only for sessions whose exit is a plain
 * record (no return value, no threshold). The kept entry is written at
 * fork, at thread exit and at exit() (when the first object's events are
 * unregistered, by its destructor); a process killed, or an exec, inside a
 * leaf loses that one entry.
 */

uint32_t trail__pend_gen;

/* The kept entry of w, written (w->depth is 1: in the record path, at its
 * outermost level). */
void trail__pend_flush(struct writer *w)
{
	uint32_t m = __atomic_load_n(ev_gentry.state, __ATOMIC_ACQUIRE) & w->pend &
		     ((1u << TRAIL_MAX_SESSIONS) - 1);
	struct evrt *rt = ev_gentry.rt;
	uint64_t func = w->pend_func;

	w->pend = 0;
	if (w->pend_gen != __atomic_load_n(&trail__pend_gen, __ATOMIC_RELAXED))
		return; /* kept before its session left: not written */
	if (m && rt)
		write_sessions(&ev_gentry, rt, w, 0, m, &func, sizeof(func), w->pend_ts,
			       w->pend_cpu);
}

/* The calling thread's kept entry, written (fork, exit). */
void trail__pend_flush_self(void)
{
	struct writer *w = trail__tls_w;

	if (!w || !w->pend || w->depth)
		return;
	path_enter(w, 0);
	if (w->pend)
		trail__pend_flush(w);
	path_leave(w, 0);
}

/* A call's entry, kept; the previous kept one is written. on_entry has
 * seen this thread outside the record path. */
static inline void gentry_defer(uint32_t allow, uintptr_t func, uintptr_t slot)
{
	struct writer *w = trail__tls_w;
	uint32_t cpu;
	uint64_t ts;

	if (TRAIL_UNLIKELY(!w) && !(w = trail__writer_get()))
		return;
	path_enter(w, 0);
	if (w->pend)
		trail__pend_flush(w);
	ts = now_cpu(&cpu);
	w->pend_ts = ts;
	w->pend_cpu = cpu;
	w->pend_func = func;
	w->pend_slot = slot;
	w->pend_gen = __atomic_load_n(&trail__pend_gen, __ATOMIC_RELAXED);
	w->pend = allow;
	path_leave(w, 0);
}

/* A plain exit of the frame whose return slot was slot: a leaf record if
 * its entry is still kept, else the exit record. */
static inline void gexit_write(uint32_t mask, uintptr_t slot)
{
	struct writer *w = trail__tls_w;
	struct evrt *rt;
	uint32_t m, cpu;
	uint64_t ts;

	if (TRAIL_UNLIKELY(!w || w->depth || !w->pend)) {
		write_event(&ev_gexit, mask, NULL, 0);
		return;
	}
	path_enter(w, 0);
	ts = now_cpu(&cpu);
	/* read again: a signal handler may have written it meanwhile */
	if (TRAIL_LIKELY(w->pend && w->pend_slot == slot && ts - w->pend_ts <= UINT32_MAX &&
			 w->pend_gen == __atomic_load_n(&trail__pend_gen, __ATOMIC_RELAXED))) {
		struct __attribute__((packed)) {
			uint64_t func;
			uint32_t dur;
		} p = {w->pend_func, (uint32_t)(ts - w->pend_ts)};

		m = __atomic_load_n(ev_gleaf.state, __ATOMIC_ACQUIRE) & w->pend &
		    ((1u << TRAIL_MAX_SESSIONS) - 1);
		rt = ev_gleaf.rt;
		w->pend = 0;
		if (m && rt)
			write_sessions(&ev_gleaf, rt, w, 0, m, &p, sizeof(p), w->pend_ts,
				       w->pend_cpu);
	} else {
		if (w->pend)
			trail__pend_flush(w);
		m = __atomic_load_n(ev_gexit.state, __ATOMIC_ACQUIRE) & mask &
		    ((1u << TRAIL_MAX_SESSIONS) - 1);
		rt = ev_gexit.rt;
		if (m && rt)
			write_sessions(&ev_gexit, rt, w, 0, m, NULL, 0, ts, cpu);
	}
	path_leave(w, 0);
}

/* returned: the function returned (with retval); else it was unwound by
 * longjmp or an exception, and has no return value */
static void exit_record(const struct gframe *fr, int returned, uint64_t retval, uint64_t now)
{
	uint32_t plain = fr->mask & ~thresh_sessions, timed = fr->mask & thresh_sessions;

	if (plain) {
		uint32_t ret = returned ? plain & retval_sessions : 0;

		if (plain & ~ret)
			write_event(&ev_gexit, plain & ~ret, NULL, 0);
		if (ret)
			write_event(&ev_gexit_ret, ret, &retval, sizeof(retval));
	}
	for (uint32_t m = timed; m; m &= m - 1) {
		unsigned s = (unsigned)__builtin_ctz(m);

		if (now - fr->ts >= gconf[s].thresh) {
			uint64_t p[2] = {fr->func, now - fr->ts};

			write_event(&ev_gcall, 1u << s, p, sizeof(p));
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
void trail__ftrace_forked_frames(void)
{
	struct gstack *g = gstk;

	for (uint32_t i = 0; g && i < g->depth; i++) {
		uint32_t m = g->f[i].mask & ~__atomic_load_n(&thresh_sessions, __ATOMIC_RELAXED);
		uint64_t func = g->f[i].func;

		if (m)
			write_event(&ev_ginherit, m, &func, sizeof(func));
	}
}

static void pop(struct gstack *g, const struct gframe *fr)
{
	for (uint32_t m = fr->roots; m; m &= m - 1)
		g->below_root[__builtin_ctz(m)]--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	g->depth--;
}

int trail__arch_on_entry(uintptr_t site, uintptr_t *ret, struct trail_arch_regs *regs,
			 uintptr_t hook)
{
	const struct hsite *h = hfind(site);
	struct writer *w = trail__tls_w;
	uint32_t mask, gmask, fmask;
	(void)regs;

	/* recursion guard: a hooked function reached from inside the record
	 * path (a patchable libc, say) is not traced */
	if (!h || (w && __atomic_load_n(&w->depth, __ATOMIC_RELAXED)))
		return 0;
	mask = thread_allow(__atomic_load_n(&h->mask, __ATOMIC_ACQUIRE));
	if (TRAIL_UNLIKELY(mask & __atomic_load_n(&nest_sessions, __ATOMIC_RELAXED)))
		mask = nest_allow(mask, (uintptr_t)ret);
	if (!mask)
		return 0;
	gmask = mask & __atomic_load_n(&graph_sessions, __ATOMIC_ACQUIRE);
	fmask = mask & ~gmask;
	if (fmask) {
		uint64_t payload[2] = {site, *ret};

		write_event(&ev_function, fmask, payload, sizeof(payload));
	}
	if (gmask) {
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
		allow = graph_allow(g, gmask, roots);
		if (!allow)
			return 0;
		if (g->depth >= GSTACK_FRAMES) { /* degrade: not hooked, counted */
			g->full++;
			for (uint32_t m = allow; m; m &= m - 1)
				__atomic_fetch_add(&trail__sess[__builtin_ctz(m)].hdr->graph_unhooked,
						   1, __ATOMIC_RELAXED);
			return 0;
		}
		fr = &g->f[g->depth];
		fr->ret = *ret;
		fr->slot = (uintptr_t)ret;
		fr->hook = hook;
		fr->func = site;
		fr->mask = allow;
		fr->roots = roots & allow;
		fr->ts = (allow & thresh_sessions) ? ticks() : 0;
		for (uint32_t m = fr->roots; m; m &= m - 1)
			g->below_root[__builtin_ctz(m)]++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		g->depth++;
		if (!(allow & (thresh_sessions | retval_sessions))) {
			gentry_defer(allow, site, (uintptr_t)ret);
		} else if (allow & ~thresh_sessions) {
			uint64_t func = site;

			write_event(&ev_gentry, allow & ~thresh_sessions, &func, sizeof(func));
		}
		return 1; /* the stub puts hook in *ret and runs the body */
	}
	return 0;
}


uintptr_t trail__arch_on_exit(struct trail_arch_ret_regs *regs)
{
	struct gstack *g = gstk;
	uintptr_t slot = (uintptr_t)regs->sp - 8, ret;
	uint32_t d = g->depth;
	const struct gframe *top = &g->f[d - 1];
	uint64_t now;

	/* the common case: the top frame returns, no threshold, return
	 * value or root to account for */
	if (TRAIL_LIKELY((d == 1 || top->slot >= slot) && !top->roots &&
			 !(top->mask & (thresh_sessions | retval_sessions)))) {
		uint32_t mask = top->mask;
		uintptr_t fslot = top->slot;

		ret = top->ret;
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* read before popped */
		g->depth = d - 1;
		gexit_write(mask, fslot);
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
		exit_record(&fr, 1, trail_arch_retval(regs), now);
	}
	return ret;
}

/* --------------------------------------------------------------- unwinding
 *
 * The unwinder finds a frame's caller through its return address: a swapped
 * one (the exit trampoline) has no unwind information and the exception
 * ends in std::terminate. So before any unwind starts, every hooked return
 * address of the thread is put back; when a handler catches
 * (__cxa_begin_catch, called from the catching frame), the frames below its
 * stack pointer were unwound: they are closed (an exit record each), and
 * the others hooked again. libtrail comes first in symbol lookup when it is
 * preloaded (trail record does), so these definitions are the ones used.
 */
#include <dlfcn.h>

static void unhook_returns(void)
{
	struct gstack *g = gstk;

	if (!g)
		return;
	/* deepest first: a tail call shares its caller's slot, and the
	 * shallowest frame holds the real address */
	for (uint32_t i = g->depth; i-- > 0;)
		*(uintptr_t *)g->f[i].slot = g->f[i].ret;
}

static void rehook_returns(uintptr_t sp)
{
	struct gstack *g = gstk;
	uint64_t now;

	if (!g || !g->depth)
		return;
	now = thresh_sessions ? ticks() : 0;
	while (g->depth && g->f[g->depth - 1].slot < sp) {
		struct gframe fr = g->f[g->depth - 1];

		pop(g, &fr);
		exit_record(&fr, 0, 0, now);
	}
	for (uint32_t i = 0; i < g->depth; i++)
		*(uintptr_t *)g->f[i].slot = g->f[i].hook;
}

#define REAL(ret, name, ...)                                                   \
	static ret (*real_##name)(__VA_ARGS__);                                \
	if (!real_##name)                                                      \
		real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

struct _Unwind_Exception;

__attribute__((visibility("default"))) int
_Unwind_RaiseException(struct _Unwind_Exception *e)
{
	REAL(int, _Unwind_RaiseException, struct _Unwind_Exception *);
	unhook_returns();
	return real__Unwind_RaiseException(e);
}

__attribute__((visibility("default"))) int
_Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	REAL(int, _Unwind_Resume_or_Rethrow, struct _Unwind_Exception *);
	unhook_returns();
	return real__Unwind_Resume_or_Rethrow(e);
}

__attribute__((visibility("default"))) int
_Unwind_ForcedUnwind(struct _Unwind_Exception *e, void *stop, void *arg)
{
	REAL(int, _Unwind_ForcedUnwind, struct _Unwind_Exception *, void *, void *);
	unhook_returns();
	return real__Unwind_ForcedUnwind(e, stop, arg);
}

__attribute__((visibility("default"), noinline)) void *__cxa_begin_catch(void *e)
{
	REAL(void *, __cxa_begin_catch, void *);
	/* our caller is the catching frame: everything deeper is gone */
	rehook_returns((uintptr_t)__builtin_frame_address(0) + 16);
	return real___cxa_begin_catch(e);
}
