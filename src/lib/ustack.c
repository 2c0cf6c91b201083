/* SPDX-License-Identifier: MIT */
/*
 * ustack.c - a user stack walk by unwind tables (ustack.h).
 *
 * A frame's object is found with glibc's _dl_find_object (2.35;
 * async-signal-safe, lock-free, and it follows dlopen and dlclose: an
 * object loaded after the session joined is walked like the others). Its
 * tables are found once from its program headers (PT_GNU_SFRAME,
 * PT_GNU_EH_FRAME) read where the object starts (its ELF header, mapped
 * with its first segment), and kept in a small cache:
 *
 *   slot state  0 empty --CAS--> 1 being filled --release--> 2 ready
 *
 * Whoever wins the CAS fills the slot; anyone else (another thread, or a
 * signal handler interrupting the filler) reads the headers itself for
 * this walk: nothing waits. Slots are never emptied: an object unloaded
 * and another mapped over exactly the same range would be read with the
 * first one's tables (bounded, fault-safe reads: a truncated stack, not
 * a crash). trail__ustack_prime fills them outside signal handlers when
 * a session with stacktrace triggers joins.
 *
 * Without _dl_find_object (another libc), frame pointers only.
 */
#include "ustack.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/ucontext.h>

#include "../arch/arch.h"
#include "../common/cfi.h"
#include "../common/sframe.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

#define SLOTS 128
#define PROBES 8
#define FRAME_MAX (64u << 20) /* a frame larger than this is a damaged stack */
#define STEPS 512

struct uobj {
	uintptr_t lo, hi;
	uintptr_t eh, eh_len;
	struct trail_sframe sf;
	int has_sf;
};

static struct {
	uint32_t state;
	struct uobj o;
} cache[SLOTS];

/* the tables' reader: most reads are of 1, 2, 4 or 8 bytes, a load each
 * (rep movsb, the copy's, costs ~30 cycles to start) */
static int rd(void *ctx, uint64_t addr, void *buf, size_t n)
{
	uint64_t v;

	(void)ctx;
	switch (n) {
	case 1:
		if (trail_arch_load_safe((uintptr_t)addr, 1, &v))
			return -1;
		*(uint8_t *)buf = (uint8_t)v;
		return 0;
	case 2:
	case 4:
	case 8:
		if (trail_arch_load_safe((uintptr_t)addr, (unsigned)n, &v))
			return -1;
		if (n == 8)
			memcpy(buf, &v, 8);
		else if (n == 4)
			memcpy(buf, &v, 4); /* (little-endian) */
		else
			memcpy(buf, &v, 2);
		return 0;
	default:
		return trail_arch_copy_safe(buf, (uintptr_t)addr, n) ? -1 : 0;
	}
}

static int load(uintptr_t addr, uintptr_t *v)
{
	uint64_t x;

	if (trail_arch_load_safe(addr, 8, &x))
		return -1;
	*v = (uintptr_t)x;
	return 0;
}

/*
 * A signal handler returns to the restorer (glibc's __restore_rt:
 * `mov $15, %rax; syscall`, rt_sigreturn), the kernel's signal frame
 * above it: the ucontext_t at the stack pointer, with the interrupted
 * registers. Its CFI is an expression of them (not read by cfi.c): it is
 * recognised here by its code, as debuggers and perf do (once per return
 * address: the answer is kept with its row).
 */
static const uint8_t restorer[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

static int is_restorer(uintptr_t pc)
{
	uint64_t code, last;

	return !trail_arch_load_safe(pc, 8, &code) && !memcmp(&code, restorer, 8) &&
	       !trail_arch_load_safe(pc + 8, 1, &last) && last == restorer[8];
}

/* r->pc is a restorer: *r becomes the interrupted state (its pc exact:
 * an instruction, not a return address); 0, or -1 on a fault */
static int sigframe(struct trail_uregs *r)
{
	uintptr_t uc = r->sp, pc, sp, fp;

	if (load(uc + offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP]), &pc) ||
	    load(uc + offsetof(ucontext_t, uc_mcontext.gregs[REG_RSP]), &sp) ||
	    load(uc + offsetof(ucontext_t, uc_mcontext.gregs[REG_RBP]), &fp) || !pc)
		return -1;
	*r = (struct trail_uregs){.pc = pc, .sp = sp, .fp = fp, .exact = 1};
	return 0;
}

#ifdef HAVE_DL_FIND_OBJECT
/* the tables of the object mapped at [lo, hi) with load bias bias */
static void obj_read(struct uobj *o, uintptr_t lo, uintptr_t hi, uintptr_t bias, uintptr_t eh)
{
	Elf64_Ehdr eh_;
	Elf64_Phdr ph;
	uintptr_t sf = 0, sf_len = 0;

	*o = (struct uobj){.lo = lo, .hi = hi, .eh = eh};
	if (rd(NULL, lo, &eh_, sizeof(eh_)) || memcmp(eh_.e_ident, ELFMAG, SELFMAG) ||
	    eh_.e_phentsize != sizeof(ph) || eh_.e_phnum > 128 || eh_.e_phoff >= hi - lo)
		return;
	for (unsigned i = 0; i < eh_.e_phnum; i++) {
		if (rd(NULL, lo + eh_.e_phoff + i * sizeof(ph), &ph, sizeof(ph)))
			return;
		if (ph.p_type == PT_GNU_SFRAME) {
			sf = bias + ph.p_vaddr;
			sf_len = ph.p_memsz;
		} else if (ph.p_type == PT_GNU_EH_FRAME && bias + ph.p_vaddr == eh) {
			o->eh_len = ph.p_memsz;
		}
	}
	/* (tables outside the object: damaged headers) */
	if (sf && sf >= lo && sf < hi && sf_len <= hi - sf)
		o->has_sf = !trail__sframe_open(&o->sf, sf, sf_len, rd, NULL);
}

/* fo's object: its tables in *o (a cache slot's, or read into tmp) */
static const struct uobj *obj_find(const struct dl_find_object *fo, struct uobj *tmp)
{
	uintptr_t lo, hi, bias;
	unsigned h, k;

	lo = (uintptr_t)fo->dlfo_map_start;
	hi = (uintptr_t)fo->dlfo_map_end;
	h = (unsigned)((lo >> 12) * 0x9e3779b1u) % SLOTS;
	for (k = 0; k < PROBES; k++) {
		unsigned i = (h + k) % SLOTS;
		/* pairs with the release in the fill below */
		uint32_t st = __atomic_load_n(&cache[i].state, __ATOMIC_ACQUIRE);

		if (st == 2 && cache[i].o.lo == lo && cache[i].o.hi == hi)
			return &cache[i].o;
		if (st == 0)
			break;
	}
	if (load((uintptr_t)&fo->dlfo_link_map->l_addr, &bias))
		return NULL;
	obj_read(tmp, lo, hi, bias, (uintptr_t)fo->dlfo_eh_frame);
	for (k = 0; k < PROBES; k++) {
		unsigned i = (h + k) % SLOTS;
		uint32_t zero = 0;

		if (__atomic_compare_exchange_n(&cache[i].state, &zero, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			cache[i].o = *tmp;
			__atomic_store_n(&cache[i].state, 2, __ATOMIC_RELEASE);
			break;
		}
	}
	return tmp;
}

static int prime_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct dl_find_object fo;
	struct uobj tmp;

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			if (!_dl_find_object((void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
					     &fo))
				obj_find(&fo, &tmp);
			break;
		}
	return 0;
}

void trail__ustack_prime(void)
{
	dl_iterate_phdr(prime_one, NULL);
}

/* ------------------------------------------------------- the rows' cache */

/* A PC's row, as the tables gave it (or that they have none), for the
 * walks that follow: the same stacks come again (a hot event's), and a
 * row found costs ~20 loads. Direct-mapped by the PC; each entry a
 * sequence count and words, written by whoever takes it (CAS of an even
 * count to odd, words, release of the next even one), read by anyone
 * (acquire of an even count, words, the count again: unchanged or a
 * miss). Nothing waits: an entry being written is a miss. Keyed by the
 * object's range too, and found after _dl_find_object found the object:
 * an object unloaded takes its rows out of use (unless another one is
 * loaded over exactly its range, as with the objects' cache). */
#define ROWS 512

struct rowent {
	uint32_t seq;
	uint64_t w[5]; /* pc, the object's start, meta (key, answer), row */
};

static struct rowent rows[ROWS];

static unsigned row_slot(uintptr_t pc)
{
	return (unsigned)(((uint64_t)pc * 0x9e3779b97f4a7c15ull) >> 32) % ROWS;
}

static void row_pack(const struct trail_uwrow *r, uint64_t *w)
{
	w[0] = r->cfa_reg | (uint64_t)r->fp_saved << 8 | (uint64_t)r->ra_undef << 16 |
	       (uint64_t)r->plt_k << 24 | (uint64_t)(uint32_t)r->cfa_off << 32;
	w[1] = (uint64_t)(uint32_t)r->ra_off | (uint64_t)(uint32_t)r->fp_off << 32;
}

static void row_unpack(const uint64_t *w, struct trail_uwrow *r)
{
	*r = (struct trail_uwrow){
		.cfa_reg = (uint8_t)w[0],
		.fp_saved = (uint8_t)(w[0] >> 8),
		.ra_undef = (uint8_t)(w[0] >> 16),
		.plt_k = (uint8_t)(w[0] >> 24),
		.cfa_off = (int32_t)(uint32_t)(w[0] >> 32),
		.ra_off = (int32_t)(uint32_t)w[1],
		.fp_off = (int32_t)(uint32_t)(w[1] >> 32),
	};
}

/* 0 and *ans (row_find's answer, *r with it), or -1: a miss; key: the
 * ways allowed, and whether pc is exact */
static int row_get(uintptr_t pc, uintptr_t lo, unsigned key, struct trail_uwrow *r, int *ans)
{
	struct rowent *e = &rows[row_slot(pc)];
	uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE), s2;
	uint64_t w[5];

	if (s1 & 1)
		return -1;
	for (int i = 0; i < 5; i++)
		w[i] = __atomic_load_n(&e->w[i], __ATOMIC_RELAXED);
	/* the words read before the count is read again: pairs with the
	 * release of the count in row_put */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	if (s1 != s2 || !s1 || w[0] != pc || w[1] != lo || (w[2] & 0xff) != key)
		return -1;
	*ans = (int)((w[2] >> 8) & 3) - 1;
	if (!*ans)
		row_unpack(w + 3, r);
	return 0;
}

static void row_put(uintptr_t pc, uintptr_t lo, unsigned key, const struct trail_uwrow *r, int ans)
{
	struct rowent *e = &rows[row_slot(pc)];
	uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	uint64_t w[5] = {pc, lo, key | (uint64_t)(ans + 1) << 8};

	if ((s & 1) ||
	    !__atomic_compare_exchange_n(&e->seq, &s, s + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	/* the odd count seen before the words change: pairs with the
	 * acquire fence in row_get */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (!ans)
		row_pack(r, w + 3);
	for (int i = 0; i < 5; i++)
		__atomic_store_n(&e->w[i], w[i], __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

/* How to leave r's frame: 0 by the row the tables use allows give (in
 * *row), 1 through a signal frame (r->pc is a restorer), -1 neither */
static int row_find(const struct trail_uregs *r, unsigned use, struct trail_uwrow *row)
{
	uintptr_t pc = r->exact ? r->pc : r->pc - 1, lo;
	struct dl_find_object fo;
	const struct uobj *o;
	struct uobj tmp;
	unsigned key;
	int ans = -1, cache = !(use & TRAIL_UW_NOCACHE);

	use &= TRAIL_UW_ALL;
	if (!(use & (TRAIL_UW_SFRAME | TRAIL_UW_CFI)) || _dl_find_object((void *)pc, &fo))
		return !r->exact && is_restorer(r->pc) ? 1 : -1;
	lo = (uintptr_t)fo.dlfo_map_start;
	key = use | (r->exact ? 8 : 0);
	if (cache && !row_get(pc, lo, key, row, &ans))
		return ans;
	if (!r->exact && is_restorer(r->pc))
		ans = 1;
	else if ((o = obj_find(&fo, &tmp)) &&
		 (((use & TRAIL_UW_SFRAME) && o->has_sf &&
		   !trail__sframe_find(&o->sf, pc, row, rd, NULL)) ||
		  ((use & TRAIL_UW_CFI) && o->eh &&
		   !trail__cfi_find(o->eh, o->eh_len, pc, row, rd, NULL))))
		ans = 0;
	if (cache)
		row_put(pc, lo, key, row, ans);
	return ans;
}
#else
void trail__ustack_prime(void)
{
}

static int row_find(const struct trail_uregs *r, unsigned use, struct trail_uwrow *row)
{
	(void)use;
	(void)row;
	return !r->exact && is_restorer(r->pc) ? 1 : -1;
}
#endif

/* One frame up from r: 1, 2 through a signal frame (no return address
 * read: *slot unset), 0 at the outermost frame, -1 when the caller cannot
 * be found. slot: where the return address was. */
static int step(struct trail_uregs *r, unsigned use, uintptr_t *slot)
{
	struct trail_uwrow row;
	uintptr_t cfa, ra, fp = r->fp;
	int how = row_find(r, use, &row);

	if (how == 1)
		return sigframe(r) ? -1 : 2;
	if (!how) {
		if (row.ra_undef)
			return 0;
		cfa = (row.cfa_reg == TRAIL_UW_SP ? r->sp : r->fp) + (intptr_t)row.cfa_off;
		if (row.plt_k && (r->pc & 15) >= row.plt_k)
			cfa += 8;
		*slot = cfa + (intptr_t)row.ra_off;
		if (load(*slot, &ra) || (row.fp_saved && load(cfa + (intptr_t)row.fp_off, &fp)))
			return -1;
	} else if (r->entry) {
		/* no frame yet: the return address just pushed */
		*slot = r->sp;
		cfa = r->sp + 8;
		if (load(*slot, &ra))
			return -1;
	} else if (use & TRAIL_UW_FPTR) {
		/* a frame built with a frame pointer: %rbp at it, the
		 * return address above; the frame is the current one's */
		if (!r->fp || (r->fp & 7) || r->fp < r->sp || r->fp - r->sp > FRAME_MAX ||
		    load(r->fp, &fp) || load(r->fp + 8, &ra))
			return -1;
		*slot = r->fp + 8;
		cfa = r->fp + 16;
	} else {
		return -1;
	}
	/* the caller's stack is above, and not far */
	if (cfa <= r->sp || cfa - r->sp > FRAME_MAX || !ra)
		return -1;
	*r = (struct trail_uregs){.pc = ra, .sp = cfa, .fp = fp};
	return 1;
}

int trail__ustack_leave(struct trail_uregs *r, uintptr_t lo, uintptr_t hi)
{
	uintptr_t slot;

	for (unsigned k = 0; k < STEPS; k++) {
		if (r->pc < lo || r->pc >= hi)
			return 0;
		if (step(r, TRAIL_UW_ALL, &slot) <= 0)
			return -1;
	}
	return -1;
}

unsigned trail__ustack_walk(const struct trail_uregs *start, uint64_t *ips, unsigned max,
			    unsigned use, uintptr_t (*real_ret)(uintptr_t slot, uintptr_t val))
{
	struct trail_uregs r = *start;
	unsigned n = 0;
	uintptr_t slot;

	for (unsigned k = 0; k < STEPS && n < max; k++) {
		int how = step(&r, use, &slot);

		if (how <= 0)
			break;
		/* (through a signal frame: the interrupted instruction) */
		if (how == 1 && real_ret)
			r.pc = real_ret(slot, r.pc);
		ips[n++] = r.pc;
	}
	return n;
}
