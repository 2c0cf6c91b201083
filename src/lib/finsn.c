/* SPDX-License-Identifier: MIT */
/*
 * finsn.c - dynamic events at an instruction (fprobe.h's
 * trail__fprobe_insn_*): the sites, their breakpoints or jumps, and the
 * copies of the instructions they displace. The probes themselves are
 * fprobe.c's.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "fprobe-int.h"

/* ------------------------------------------------ probes at an instruction
 *
 * A probe at an instruction (FUNC+OFFS, PATH:OFFSET, a USDT probe's nop)
 * is a breakpoint on it: the SIGTRAP handler runs the probes with the
 * registers the kernel saved (all of them; the red zone below the stack
 * pointer is left alone), then sends the thread to a copy of the
 * instruction (reloc.c, made for the copy's place: RIP-relative operands
 * and branches fixed) that jumps back past it. The uprobes way, without
 * the single-step: one trap per hit. Sites live as long as the process:
 * a thread may meet a breakpoint just taken away (it then runs the
 * original instruction again).
 */
struct isite {
	uintptr_t addr;
	uintptr_t copy;
	struct fprobe_att *probes; /* newest first, never freed */
	uint16_t *sema;            /* a USDT semaphore, or NULL */
	uint32_t mask;             /* sessions whose probes run here */
	uint8_t patched;
	/* the jump path (the CLI found no branch of the function landing
	 * among the bytes it displaces): a stub (tramp.S) and the copy of
	 * those instructions, else stub is 0 and a breakpoint goes there */
	uint8_t jumped;            /* patched with the jump, not a breakpoint */
	uint8_t jlen;
	uint8_t orig[TRAIL_ARCH_SITE_SIZE]; /* the bytes patched over (a
					     * breakpoint: the first) */
	uintptr_t stub;
	struct trail_arch_reloc rl; /* where a thread inside the jump goes */
};

#define MAX_ISITES 512
static struct isite isites[MAX_ISITES];
static uint32_t nisites; /* published with release, after the entry */

/* copies live in areas mapped near the code (a copy's RIP-relative
 * operands and its jump back are 32-bit) */
struct xol {
	uint8_t *mem;
	size_t used, size;
};
static struct xol xols[16];
static unsigned nxols;

/* room for n bytes of copy near addr (o's code), or 0 */
static uintptr_t xol_reserve(const struct hobj *o, uintptr_t addr, size_t n)
{
	struct xol *x = NULL;
	uintptr_t at;

	for (unsigned i = 0; i < nxols && !x; i++)
		if (xols[i].used + n <= xols[i].size &&
		    trail_arch_reaches(addr, (uintptr_t)xols[i].mem) &&
		    trail_arch_reaches(addr, (uintptr_t)xols[i].mem + xols[i].size))
			x = &xols[i];
	if (!x) {
		if (nxols == sizeof(xols) / sizeof(xols[0]))
			return 0;
		x = &xols[nxols];
		if (!(x->mem = trail_arch_near_map(o->xlo, o->xhi, 65536, &x->size)))
			return 0;
		mprotect(x->mem, x->size, PROT_READ | PROT_EXEC);
		x->used = 0;
		nxols++;
	}
	at = (uintptr_t)x->mem + x->used;
	x->used += (n + 15) & ~(size_t)15;
	return at;
}

/* write a copy there: its pages stay executable throughout (other
 * copies in them may be running) */
static int xol_write(uintptr_t at, const void *code, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), pg = at & ~(page - 1);
	size_t span = ((at + n + page - 1) & ~(page - 1)) - pg;

	if (mprotect((void *)pg, span, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -1;
	memcpy((void *)at, code, n);
	mprotect((void *)pg, span, PROT_READ | PROT_EXEC);
	return 0;
}

static void on_insn(uint64_t idx, const struct trail_arch_regs *regs, uintptr_t sp);

/* the bytes a site takes from its address: a jump's (its displaced
 * instructions, at least the jump), or (jlen 0) a breakpoint's */
static uintptr_t span(unsigned jlen)
{
	return !jlen ? 1 : jlen > TRAIL_ARCH_SITE_SIZE ? jlen : TRAIL_ARCH_SITE_SIZE;
}

/* The jump path of site is (n sites known), jlen bytes displaced: its
 * stub and copy made, when nothing else lies among those bytes (another
 * probe's site, a function entry's hook). 0 or -1: the breakpoint then. */
static int isite_jump(const struct hobj *o, struct isite *is, uint32_t idx, unsigned jlen,
		      int vec, uint32_t n)
{
	uintptr_t addr = is->addr, end = addr + span(jlen), at;
	uint8_t stub[TRAIL_ARCH_INSN_STUB];

	static int off = -1;

	/* TRAIL_INSN_JUMP=0: breakpoints only (the kernel's
	 * debug.kprobes-optimization = 0), to compare or to rule jumps out */
	if (off < 0) {
		const char *v = getenv("TRAIL_INSN_JUMP");

		off = v && !strcmp(v, "0");
	}
	if (off || !jlen || jlen > TRAIL_ARCH_RELOC_MAXLEN || end > o->xhi)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uintptr_t b = isites[i].addr, e = b + span(isites[i].stub ? isites[i].jlen : 0);

		if (b < end && addr < e)
			return -1;
	}
	for (uint32_t k = 0; k < o->fo.nsites; k++)
		if (!(o->fo.sites[k].flags & FSITE_PLT) && o->fo.sites[k].addr >= addr &&
		    o->fo.sites[k].addr < end)
			return -1;
	if (!(at = xol_reserve(o, addr, TRAIL_ARCH_INSN_STUB + TRAIL_ARCH_RELOC_CODE)) ||
	    trail_arch_reloc_make((const uint8_t *)addr, jlen, addr, at + TRAIL_ARCH_INSN_STUB,
				  &is->rl))
		return -1;
	if (!trail__arch_insn_handler)
		trail_arch_vector_init();
	__atomic_store_n(&trail__arch_insn_handler, on_insn, __ATOMIC_RELEASE);
	trail_arch_insn_stub(stub, at, idx | (vec ? TRAIL_ARCH_INSN_VEC : 0),
			     at + TRAIL_ARCH_INSN_STUB);
	if (xol_write(at, stub, sizeof(stub)) ||
	    xol_write(at + TRAIL_ARCH_INSN_STUB, is->rl.code, is->rl.copy_len))
		return -1;
	is->jlen = (uint8_t)jlen;
	is->stub = at;
	return 0;
}

/* the site at addr, made if new (under the control lock); jlen: the
 * bytes a jump there may displace (0: a breakpoint only) */
static struct isite *isite_get(const struct hobj *o, uintptr_t addr, unsigned jlen, int vec)
{
	uint32_t n = __atomic_load_n(&nisites, __ATOMIC_ACQUIRE);
	struct trail_arch_reloc rl;
	struct isite *is;
	unsigned len;
	uintptr_t at;
	size_t room;

	for (uint32_t i = 0; i < n; i++)
		if (isites[i].addr == addr)
			return &isites[i];
	if (n == MAX_ISITES || addr < o->xlo || addr >= o->xhi)
		return NULL;
	/* an instruction the CLI checked; a function site there (patched,
	 * or a breakpoint already) is not ours to take */
	/* nor inside what a function entry's hook takes (the CLI refuses
	 * such a probe: a definition made for another build) */
	for (uint32_t k = 0; k < o->fo.nsites; k++) {
		const struct fsite *f = &o->fo.sites[k];
		uintptr_t end;

		/* (unmodified code: what its entry's hook would take is known
		 * once decoded) */
		if ((f->flags & FSITE_LAZY) && addr >= f->addr &&
		    addr < f->addr + TRAIL_ARCH_RELOC_MAXLEN)
			trail__fobj_check((struct fobj *)&o->fo, k);
		/* (a whole function not moved yet will not be: a breakpoint
		 * enters it, fobjs.c) */
		end = f->addr + ((f->flags & FSITE_REFUSED) ? 0
				 : (f->flags & FSITE_TRAP) ? 1
				 : (f->flags & FSITE_WHOLE) && !(o->relocs && o->relocs[k].len) ? 1
				 : FSITE_LEN(f) > TRAIL_ARCH_SITE_SIZE ? FSITE_LEN(f)
								 : TRAIL_ARCH_SITE_SIZE);

		if (addr >= f->addr && addr < end)
			return NULL;
	}
	/* nor inside the jump of another probe's site */
	for (uint32_t i = 0; i < n; i++)
		if (isites[i].stub && addr > isites[i].addr &&
		    addr < isites[i].addr + span(isites[i].jlen))
			return NULL;
	room = o->xhi - addr < 16 ? o->xhi - addr : 16;
	if (*(const uint8_t *)addr == 0xcc || trail__hfind(addr) ||
	    trail_arch_trap_check((const uint8_t *)addr, room, addr, &len, NULL, 0) ||
	    !(at = xol_reserve(o, addr, TRAIL_ARCH_RELOC_CODE)) ||
	    trail_arch_reloc_make((const uint8_t *)addr, len, addr, at, &rl) ||
	    xol_write(at, rl.code, rl.copy_len))
		return NULL;
	is = &isites[n];
	memset(is, 0, sizeof(*is));
	is->addr = addr;
	is->copy = at;
	if (isite_jump(o, is, n, jlen, vec, n))
		is->stub = 0;
	__atomic_store_n(&nisites, n + 1, __ATOMIC_RELEASE);
	return is;
}

/* An instruction probe hit from libtrail's own work (an open of its
 * patching, a malloc of a probe's handler) or its record path is not the
 * program's: it records nothing. What the probes call is libtrail's. */
static void insn_hit(struct isite *is, uint32_t m, const struct trail_arch_regs *r,
		     uintptr_t sp, uintptr_t ip)
{
	if (!m || trail__in_self())
		return;
	trail__self_enter();
	trail__fprobe_fire_insn(&is->probes, m, r, sp, ip);
	trail__self_leave();
}

static void on_insn(uint64_t idx, const struct trail_arch_regs *regs, uintptr_t sp)
{
	struct isite *is = &isites[idx < MAX_ISITES ? idx : 0];

	insn_hit(is, __atomic_load_n(&is->mask, __ATOMIC_ACQUIRE), regs, sp, is->addr);
}

/* For the live patch (fobjs.c's step hook): a thread found at ip inside
 * the jump written at site goes on at its instruction in the copy; ip if
 * site is no jump site of ours. */
uintptr_t trail__fprobe_insn_step(uintptr_t site, uintptr_t ip)
{
	uint32_t n = __atomic_load_n(&nisites, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
		if (isites[i].addr == site && isites[i].stub) {
			uintptr_t to;

			if (ip == site) /* at its breakpoint, mid-patch: the probes
					 * run from the trap handler first */
				return isites[i].copy;
			to = trail_arch_reloc_map(&isites[i].rl, site, ip);
			return to ? to : ip;
		}
	return ip;
}

/* The SIGTRAP handler's question (fhash.h trail__insn_trap_hook): a
 * breakpoint of ours at an instruction? Its probes run, the thread goes
 * on in the copy. 1, or 0: not one. */
static int insn_trap(void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t ip = (uintptr_t)g[REG_RIP] - 1;
	uint32_t n = __atomic_load_n(&nisites, __ATOMIC_ACQUIRE), m;
	struct isite *is = NULL;

	for (uint32_t i = 0; i < n && !is; i++)
		if (isites[i].addr == ip)
			is = &isites[i];
	if (!is)
		return 0;
	if (*(const volatile uint8_t *)ip != 0xcc) { /* taken away meanwhile */
		g[REG_RIP] = (greg_t)ip;
		return 1;
	}
	if ((m = __atomic_load_n(&is->mask, __ATOMIC_ACQUIRE))) {
		struct trail_arch_regs r;
		uintptr_t sp, at;

		trail_arch_regs_from_uc(uc, &r, &sp, &at);
		insn_hit(is, m, &r, sp, ip);
	}
	g[REG_RIP] = (greg_t)is->copy;
	return 1;
}

uintptr_t trail__fprobe_insn_inside(uintptr_t ip)
{
	uint32_t n = __atomic_load_n(&nisites, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
		if (isites[i].jumped && ip > isites[i].addr &&
		    ip < isites[i].addr + TRAIL_ARCH_SITE_SIZE)
			return trail__fprobe_insn_step(isites[i].addr, ip);
	return ip;
}

int trail__fprobe_insn_in(uintptr_t lo, uintptr_t hi)
{
	uint32_t n = __atomic_load_n(&nisites, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
		if (isites[i].addr >= lo && isites[i].addr < hi)
			return 1;
	return 0;
}

int trail__fprobe_insn_wanted(const struct hobj *o, uintptr_t lo, uintptr_t hi)
{
	for (struct fprobe *pr = trail__fprobes; pr; pr = pr->next) {
		uintptr_t addr = o->fo.base + (uintptr_t)pr->p.hdr->offset;

		if ((pr->p.hdr->flags & TRAIL_PROBE_F_INSN) && addr >= lo && addr < hi &&
		    trail__fprobe_obj_matches(o, pr->p.obj))
			return 1;
	}
	return 0;
}

int trail__fprobe_insn_attach(unsigned s, const struct hobj *o)
{
	int n = 0;

	for (struct fprobe *pr = trail__fprobes; pr; pr = pr->next) {
		uintptr_t addr = o->fo.base + (uintptr_t)pr->p.hdr->offset;
		struct trail_arch_poke pk;
		struct fprobe_att *at;
		struct isite *is;

		if (!trail__fprobe_session_has(pr, s) || !(pr->p.hdr->flags & TRAIL_PROBE_F_INSN) ||
		    !trail__fprobe_obj_matches(o, pr->p.obj) ||
		    !(is = isite_get(o, addr, pr->p.hdr->jump,
				     !!(pr->p.hdr->flags & TRAIL_PROBE_F_VEC))))
			continue;
		for (at = is->probes; at && at->pr != pr; at = at->next)
			;
		if (!at) {
			if (!(at = trail__fprobe_att_make(pr, o->fo.base)))
				continue;
			at->next = is->probes;
			__atomic_store_n(&is->probes, at, __ATOMIC_RELEASE);
		}
		__atomic_fetch_or(&at->mask, 1u << s, __ATOMIC_RELEASE);
		if (pr->p.sema)
			is->sema = (uint16_t *)(o->fo.base + (uintptr_t)pr->p.sema);
		__atomic_fetch_or(&is->mask, 1u << s, __ATOMIC_RELEASE);
		n++;
		if (is->patched || !trail__traps_ready())
			continue;
		__atomic_store_n(&trail__insn_trap_hook, insn_trap, __ATOMIC_RELEASE);
		memcpy(is->orig, (const void *)addr, sizeof(is->orig));
		pk.addr = addr;
		if (is->stub) {
			/* the jump, breakpoint first, every thread stepped out of
			 * the bytes it covers (fstep.c; a thread there goes on
			 * in the copy: trail__fprobe_insn_step) */
			uintptr_t one = addr;

			trail_arch_jump_insn(pk.bytes, addr, is->stub);
			if (!trail__step_poke(&pk, 1, &one)) {
				is->jumped = 1;
				goto patched;
			}
		}
		pk.bytes[0] = 0xcc;
		if (trail_arch_poke_bytes(&pk, 1))
			continue;
patched:
		is->patched = 1;
		/* the program's USDT guard: `if (SEMA)` now takes the probe */
		if (is->sema)
			__atomic_fetch_add(is->sema, 1, __ATOMIC_RELAXED);
	}
	return n;
}

void trail__fprobe_insn_stop(unsigned s)
{
	uint32_t n = __atomic_load_n(&nisites, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
		__atomic_fetch_and(&isites[i].mask, ~(1u << s), __ATOMIC_RELEASE);
}

void trail__fprobe_insn_leave(unsigned s)
{
	uint32_t n = __atomic_load_n(&nisites, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++) {
		struct isite *is = &isites[i];
		struct trail_arch_poke pk = {.addr = is->addr, .bytes = {is->orig[0]}};

		__atomic_fetch_and(&is->mask, ~(1u << s), __ATOMIC_RELEASE);
		for (struct fprobe_att *at = is->probes; at; at = at->next)
			__atomic_fetch_and(&at->mask, ~(1u << s), __ATOMIC_RELEASE);
		if (is->mask || !is->patched)
			continue;
		if (is->jumped) {
			/* the original bytes back, breakpoint first; while a
			 * thread blocks SIGTRAP the jump stays, for no session */
			memcpy(pk.bytes, is->orig, sizeof(is->orig));
			if (trail__step_check() || trail_arch_poke_live(&pk, 1))
				continue;
			is->jumped = 0;
		} else if (trail_arch_poke_bytes(&pk, 1)) {
			continue;
		}
		is->patched = 0;
		if (is->sema)
			__atomic_fetch_sub(is->sema, 1, __ATOMIC_RELAXED);
	}
}


void trail__finsn_register(void)
{
	static const struct trail_insn_ask ask = {
		trail__fprobe_insn_in, trail__fprobe_insn_wanted, trail__fprobe_insn_step,
	};

	__atomic_store_n(&trail__fobjs_insn, &ask, __ATOMIC_RELEASE);
}
