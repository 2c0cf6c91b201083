/* SPDX-License-Identifier: MIT */
/*
 * fobjs.c - the loaded objects the function tracer knows; see fobjs.h.
 * An object is found through dl_iterate_phdr, its sites read by fsites.c,
 * and its stubs (one per site, near its code: a 5-byte call reaches them)
 * made the first time one of its sites is hooked.
 */
#include "fobjs.h"

#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/clock.h"
#include "../common/registry.h"
#include "fhash.h"
#include "fplt.h"
#include "fprobe.h"

static uintptr_t step_to(uintptr_t site, uintptr_t ip);

const struct trail_insn_ask *trail__fobjs_insn;
struct hobj trail__objs[MAX_OBJS];
unsigned trail__nobjs;
static int discovered;

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

/* The objects whose code trail itself runs while it patches: the dynamic
 * loader, the instruction decoder and its Capstone. */
static int is_tool(const struct dl_phdr_info *info)
{
	const char *b = strrchr(info->dlpi_name, '/');

	b = b ? b + 1 : info->dlpi_name;
	return (*info->dlpi_name && info->dlpi_addr == getauxval(AT_BASE)) ||
	       !strncmp(b, "ld-linux", 8) || !strncmp(b, "libtrail-decoder", 16) ||
	       !strncmp(b, "libcapstone", 11);
}

/* The directory of the decoded entries' cache (fsites.h): the registry,
 * opened once; -1 without one */
static int cache_fd = -2;

static int cache_dir(void)
{
	char path[512];

	if (cache_fd == -2) {
		cache_fd = -1;
		if (!trail__registry_path(path, sizeof(path)))
			cache_fd = trail__registry_open(path, 0);
		if (cache_fd < 0)
			cache_fd = -1;
	}
	return cache_fd;
}

void trail__fobjs_cache_save(void)
{
	for (unsigned i = 0; i < trail__nobjs; i++)
		if (trail__objs[i].fo.nchecked)
			trail__fobj_cache_save(&trail__objs[i].fo, cache_dir());
}

/* The object dl_iterate_phdr reports, if we know it (same bias, same name). */
static struct hobj *obj_known(const struct dl_phdr_info *info)
{
	for (unsigned i = 0; i < trail__nobjs; i++)
		if (trail__objs[i].fo.base == info->dlpi_addr &&
		    !strncmp(trail__objs[i].dlname, info->dlpi_name, sizeof(trail__objs[i].dlname) - 1))
			return &trail__objs[i];
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
	if (trail__nobjs == MAX_OBJS || is_self(info) || is_tool(info) ||
	    !strncmp(path, "linux-vdso", 10) || !strncmp(path, "linux-gate", 10))
		return 0;
	if (!*path) { /* the executable */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0)
			return 0;
		exe[n] = '\0';
		path = exe;
	}
	o = &trail__objs[trail__nobjs];
	memset(o, 0, sizeof(*o));
	if (trail__fobj_load(&o->fo, path, info->dlpi_addr, info) || !o->fo.nsites) {
		/* known, with nothing to hook: not opened again at each rescan */
		trail__fobj_free(&o->fo);
		memset(&o->fo, 0, sizeof(o->fo));
	}
	trail__fobj_cache_load(&o->fo, cache_dir());
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
	trail__nobjs++;
	return 0;
}

int trail__fobjs_discover(void)
{
	size_t total = 0;

	if (discovered)
		return 0;
	__atomic_store_n(&trail__fsite_step_hook, step_to, __ATOMIC_RELEASE);
	dl_iterate_phdr(discover_one, NULL);
	for (unsigned i = 0; i < trail__nobjs; i++)
		total += trail__objs[i].fo.nsites;
	if (trail__hreserve(total))
		return -ENOMEM;
	discovered = 1;
	return 0;
}

/* Where the library call of PLT site f goes: the function its GOT slot
 * holds, or (a lazy binding not done yet: the slot points back into the
 * PLT) the one the loader would bind it to, or 0. */
static uintptr_t plt_target(const struct hobj *o, const struct fsite *f)
{
	uintptr_t v = __atomic_load_n((const uintptr_t *)f->got, __ATOMIC_RELAXED);
	const char *nm = trail__fsite_name(&o->fo, f);

	if (v && (v < o->xlo || v >= o->xhi))
		return v;
	if (f->addr == f->got)
		return 0; /* a call through the GOT: bound at start, or left
			   * unbound (a weak function absent) */
	return trail__plt_resolve(nm, nm + strlen(nm) + 1);
}

#define WHOLE_AREA (256u << 10)

/* The stub area, and the whole functions' areas, writable (1) or not */
static int unseal(struct hobj *o, int writable)
{
	int prot = PROT_READ | PROT_EXEC | (writable ? PROT_WRITE : 0), r = 0;

	if (o->unsealed == writable)
		return 0;
	if (mprotect(o->stubs, o->stubs_len, prot))
		return -1;
	for (unsigned i = 0; i < o->nwhole; i++)
		r |= mprotect(o->whole[i], WHOLE_AREA, prot);
	o->unsealed = writable;
	return r ? -1 : 0;
}

/* n bytes for a whole function's copy, near o's code, or NULL */
static uint8_t *whole_alloc(struct hobj *o, size_t n)
{
	uint8_t *p;

	n = (n + 15) & ~(size_t)15;
	if (n > WHOLE_AREA)
		return NULL;
	if (!o->nwhole || o->wused + n > WHOLE_AREA) {
		size_t got;

		if (o->nwhole == sizeof(o->whole) / sizeof(o->whole[0]) ||
		    !(p = trail_arch_near_map(o->fo.lo, o->fo.hi, WHOLE_AREA, &got)))
			return NULL;
		o->whole[o->nwhole++] = p; /* (mapped writable) */
		o->wused = 0;
	}
	p = o->whole[o->nwhole - 1] + o->wused;
	o->wused += n;
	return p;
}

/* Site k's whole function copied (FSITE_WHOLE), its stub sent there: 0
 * or -1. No thread runs the copy before the entry's jump is written. */
static int make_whole(struct hobj *o, uint32_t k)
{
	const struct fsite *f = &o->fo.sites[k];
	uint8_t *copy;

	const struct trail_insn_ask *q = __atomic_load_n(&trail__fobjs_insn, __ATOMIC_ACQUIRE);

	/* (an instruction probe inside would not be in the copy) */
	if ((q && (q->in(f->addr, f->addr + f->size) ||
		   q->wanted(o, f->addr, f->addr + f->size))) ||
	    !(copy = whole_alloc(o, f->size)) ||
	    trail_arch_whole_make((const uint8_t *)f->addr, f->size, f->addr, (uintptr_t)copy,
				  copy))
		return -1;
	memset(&o->relocs[k], 0, sizeof(o->relocs[k]));
	o->relocs[k].at = (uintptr_t)copy;
	o->relocs[k].len = TRAIL_ARCH_SITE_SIZE;
	trail_arch_site_stub(o->stubs, k, f->addr, (uintptr_t)copy, 1);
	return 0;
}

/* The copy of the instructions site k of unmodified code displaces, made
 * the first time the site is hooked (its entry decoded then: fsites.c),
 * or of its whole function (FSITE_WHOLE): 0, or -1 when it cannot be
 * made (out of reach, an entry nothing can enter). The stub area is
 * writable again for it until trail__fobjs_seal. */
static int make_copy(struct hobj *o, uint32_t k)
{
	const struct fsite *f = &o->fo.sites[k];
	uint8_t *copy = (uint8_t *)o->relocs[k].at;

	if (o->relocs[k].len)
		return 0;
	if (!copy || trail__fobj_check(&o->fo, k))
		return -1;
	if (unseal(o, 1))
		return -1;
	if ((f->flags & FSITE_WHOLE) && !make_whole(o, k))
		return 0;
	if (f->flags & FSITE_WHOLE) {
		/* (a probe inside it, out of reach): a breakpoint then, for
		 * this process only (the cache keeps FSITE_WHOLE) */
		unsigned len;
		struct fsite *w = &o->fo.sites[k];

		if (trail_arch_trap_check((const uint8_t *)f->addr, f->size, f->addr, &len, NULL,
					  0))
			return -1;
		w->flags = (w->flags & ~(FSITE_WHOLE | 0xffu)) | FSITE_TRAP | FSITE_DEMOTED | len;
	}
	if (trail_arch_reloc_make((const uint8_t *)f->addr, FSITE_LEN(f), f->addr,
				  (uintptr_t)copy, &o->relocs[k])) {
		o->relocs[k].len = 0;
		o->relocs[k].at = (uintptr_t)copy;
		return -1;
	}
	memcpy(copy, o->relocs[k].code, o->relocs[k].copy_len);
	return 0;
}

void trail__fobjs_seal(void)
{
	for (unsigned i = 0; i < trail__nobjs; i++) {
		struct hobj *o = &trail__objs[i];

		if (o->unsealed)
			unseal(o, 0);
	}
}

uintptr_t trail__fobjs_target(struct hobj *o, uint32_t k)
{
	if (!o->stubs) {
		size_t nreloc = 0, stubs = TRAIL_ARCH_STUBS_HDR +
					  (size_t)o->fo.nsites * TRAIL_ARCH_STUB_SIZE;
		uint8_t *a;

		for (uint32_t i = 0; i < o->fo.nsites; i++)
			nreloc += !!(o->fo.sites[i].flags & (FSITE_RELOC | FSITE_PLT));
		a = trail_arch_near_map(o->fo.lo, o->fo.hi,
					stubs + nreloc * TRAIL_ARCH_RELOC_CODE, &o->stubs_len);
		if (!a)
			return 0;
		if (nreloc) {
			o->relocs_len = (size_t)o->fo.nsites * sizeof(*o->relocs);
			o->relocs = mmap(NULL, o->relocs_len, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (o->relocs == MAP_FAILED) {
				o->relocs = NULL;
				munmap(a, o->stubs_len);
				return 0;
			}
		}
		trail_arch_stub_area_init(a);
		for (uint32_t i = 0, j = 0; i < o->fo.nsites; i++) {
			const struct fsite *f = &o->fo.sites[i];
			uintptr_t body = f->addr + TRAIL_ARCH_SITE_SIZE;

			if (f->flags & FSITE_PLT) {
				uint8_t *copy = a + stubs + (size_t)j++ * TRAIL_ARCH_RELOC_CODE;
				uintptr_t to = plt_target(o, f);

				/* the stub calls the function through a jump */
				body = (uintptr_t)copy;
				o->relocs[i].at = body;
				o->relocs[i].len = to ? 1 : 0;
				if (to)
					trail_arch_far_jump(copy, to);
			} else if (f->flags & FSITE_RELOC) {
				/* the entry is as the program has it: nothing is
				 * patched before its copy exists (make_copy) */
				body = (uintptr_t)(a + stubs + (size_t)j++ * TRAIL_ARCH_RELOC_CODE);
				o->relocs[i].at = body;
			}
			trail_arch_site_stub(a, i, f->addr, body, !!(f->flags & FSITE_RELOC));
		}
		o->stubs = a;
		o->unsealed = 1;
	}
	if ((o->fo.sites[k].flags & FSITE_RELOC) && make_copy(o, k))
		return 0;
	if ((o->fo.sites[k].flags & FSITE_PLT) && !o->relocs[k].len)
		return 0; /* its library function not found */
	return trail_arch_stub_at(o->stubs, k);
}

static struct hobj *site_of(uintptr_t addr, uint32_t *k);

struct hobj *trail__fobjs_plt_dest(struct hobj *o, uint32_t k, uint32_t *j)
{
	uintptr_t to = plt_target(o, &o->fo.sites[k]);

	return to ? site_of(to, j) : NULL;
}

/* the object and site index of the site at addr, or NULL */
static struct hobj *site_of(uintptr_t addr, uint32_t *k)
{
	for (unsigned i = 0; i < trail__nobjs; i++) {
		struct hobj *o = &trail__objs[i];
		const struct fsite *f;

		if (!o->fo.nsites || addr < o->fo.lo || addr >= o->fo.hi ||
		    !(f = trail__fobj_find(&o->fo, addr)))
			continue;
		*k = (uint32_t)(f - o->fo.sites);
		return o;
	}
	return NULL;
}

/* trail__fsite_step_hook (fhash.h, set by trail__fobjs_discover, which
 * comes before any site is patched): a data pointer, so that the trap and
 * step handlers (fhash.c, fstep.c) need no call up into this file */
static uintptr_t step_to(uintptr_t site, uintptr_t ip)
{
	uint32_t k;
	struct hobj *o = site_of(site, &k);
	uintptr_t to;

	if (o && (o->fo.sites[k].flags & FSITE_PLT))
		return ip; /* a library call: no code of it patched */
	if (!o) { /* a probe's jump at an instruction? */
		const struct trail_insn_ask *q = __atomic_load_n(&trail__fobjs_insn,
								 __ATOMIC_ACQUIRE);

		to = q ? q->step(site, ip) : ip;
		if (to != ip)
			return to;
	}

	if (ip == site) { /* a breakpoint met mid-poke, or a breakpoint site's */
		if (!o || !(o->fo.sites[k].flags & FSITE_RELOC) || !o->relocs || !o->relocs[k].len)
			return site + TRAIL_ARCH_SITE_SIZE;
		/* the hook, then the copy; else the copy */
		return o->fo.sites[k].flags & FSITE_TRAP ? trail_arch_stub_at(o->stubs, k)
							 : o->relocs[k].at;
	}
	/* a whole function's: anywhere in it, the same place in the copy */
	if (o && (o->fo.sites[k].flags & FSITE_WHOLE) && o->relocs && o->relocs[k].len &&
	    ip > site && ip < site + o->fo.sites[k].size)
		return o->relocs[k].at + (ip - site);
	if (!o || ip < site || ip >= site + TRAIL_ARCH_SITE_SIZE)
		return ip;
	if (!(o->fo.sites[k].flags & FSITE_RELOC))
		return site + TRAIL_ARCH_SITE_SIZE; /* skipping nops is running them */
	if (!o->relocs || !o->relocs[k].len)
		return ip;
	to = trail_arch_reloc_map(&o->relocs[k], site, ip);
	return to ? to : ip;
}

void trail__fobjs_publish(struct psess *ps, unsigned s, struct hobj *o)
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
	/* its code, and the GOT slots that name its -fno-plt library calls
	 * (FSITE_PLT sites at their slot) */
	mods[i].lo = o->fo.lo && o->fo.lo < o->xlo ? o->fo.lo : o->xlo;
	mods[i].hi = o->fo.hi > o->xhi ? o->fo.hi : o->xhi;
	mods[i].dev = o->dev;
	mods[i].ino = o->ino;
	memcpy(mods[i].path, o->path, sizeof(mods[i].path));
	mods[i].path[sizeof(mods[i].path) - 1] = '\0';
	/* pairs with the recorder's acquire load */
	__atomic_store_n(&mods[i].state, TRAIL_MS_READY, __ATOMIC_RELEASE);
	o->published |= 1u << s;
	o->modslot[s] = i;
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
static void (*watch_hook)(struct hobj *o);

/* The gone objects free their stubs too; the new ones are appended, with
 * room in the table for their sites. */
int trail__fobjs_sync(void (*hook_new)(struct hobj *o))
{
	unsigned before = trail__nobjs, keep = 0;
	size_t more = 0;
	int r = 0;

	for (unsigned i = 0; i < trail__nobjs; i++)
		trail__objs[i].seen = 0;
	dl_iterate_phdr(discover_one, NULL);
	for (unsigned i = 0; i < before; i++) {
		struct hobj *o = &trail__objs[i];

		if (o->seen)
			continue;
		for (uint32_t k = 0; k < o->fo.nsites; k++) {
			struct hsite *h = trail__hfind(o->fo.sites[k].addr);

			if (h && !h->dead) {
				__atomic_store_n(&h->mask, 0, __ATOMIC_RELEASE);
				h->root = 0;
				h->patched = 0;
				__atomic_store_n(&h->dead, 1, __ATOMIC_RELEASE);
			}
		}
		if (o->stubs)
			munmap(o->stubs, o->stubs_len);
		if (o->relocs)
			munmap(o->relocs, o->relocs_len);
		for (unsigned i = 0; i < o->nwhole; i++)
			munmap(o->whole[i], WHOLE_AREA);
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
	for (unsigned i = before; i < trail__nobjs; i++)
		more += trail__objs[i].fo.nsites;
	if (more && trail__hreserve(more))
		r = -ENOMEM;
	for (unsigned i = before; !r && hook_new && i < trail__nobjs; i++)
		hook_new(&trail__objs[i]);
	for (unsigned i = 0; i < trail__nobjs; i++) /* the slots of the gone ones */
		if (trail__objs[i].seen) {
			if (keep != i)
				trail__objs[keep] = trail__objs[i];
			keep++;
		}
	trail__nobjs = keep;
	return r;
}

static void rescan(void)
{
	if (discovered && watching)
		trail__fobjs_sync(watch_hook);
}

static void linkmap_changed(void *uc)
{
	(void)uc;
	if (loader_debug &&
	    __atomic_load_n(&loader_debug->r_state, __ATOMIC_RELAXED) == RT_CONSISTENT &&
	    __atomic_load_n(&watching, __ATOMIC_RELAXED))
		trail__ctl_locked(rescan);
}

void trail__fobjs_watch(void (*hook_new)(struct hobj *o))
{
	watch_hook = hook_new;
	if (watching)
		return;
	if (!loader_debug)
		dl_iterate_phdr(find_debug, &loader_debug);
	if (loader_debug && !trail_arch_watch(loader_debug->r_brk, linkmap_changed))
		__atomic_store_n(&watching, 1, __ATOMIC_RELAXED);
}

void trail__fobjs_unwatch(void)
{
	if (watching) {
		trail_arch_unwatch();
		__atomic_store_n(&watching, 0, __ATOMIC_RELAXED);
	}
}
