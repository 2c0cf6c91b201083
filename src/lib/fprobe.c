/* SPDX-License-Identifier: MIT */
/*
 * fprobe.c - dynamic events in the traced process (fprobe.h).
 *
 * A session's spec carries its probes compiled ("@probe HEX", fetch.h);
 * the CLI compiled and checked them, and they are checked again here
 * (trail_probe_check) before anything runs them. Each distinct blob
 * becomes one struct fprobe with its own event descriptor, registered
 * like a static event so the session's event table, enabling and the
 * record path treat it as any other event. Probes are kept for the life
 * of the process: a thread may still run one after its session left
 * (the grace period covers the record path, not the fetch before it), and
 * a later session with the same definition finds it again.
 *
 * Entry probes run from the patched entry (fhook.c) with the registers
 * the trampoline saved; return probes ask fhook.c to hook the return and
 * run from its exit with the return registers; eprobes run after their
 * source event is written (record.c's trail__write for static events,
 * here for probe events). Memory is read with the fault-safe loads of
 * src/arch: a bad pointer gives the argument's fault bit and a zero
 * value, never a crash. The join runs in the control signal handler:
 * memory comes from mmap, never malloc.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "../common/fetch.h"
#include "../common/filter.h"
#include "../common/meta.h"
#include "../common/spec.h"
#include "fprobe.h"
#include "fprobe-int.h"
#include "record.h"

struct fprobe *trail__fprobes; /* every probe made, newest first */
static uint32_t eprobe_sessions;

/* ------------------------------------------------------------- memory */

static uint8_t *pool;
static size_t pool_left;

/* Never freed; async-signal-safe (mmap). */
static void *palloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > pool_left) {
		size_t sz = n > 65536 ? n : 65536;

		p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		pool = p;
		pool_left = sz;
	}
	p = pool;
	pool += n;
	pool_left -= n;
	return p;
}

/* --------------------------------------------------------- the programs */

/* where a program reads from */
struct fctx {
	const struct trail_arch_regs *er;     /* entry */
	const struct trail_arch_ret_regs *rr; /* return */
	uintptr_t sp, ip;
	const uint8_t *src;                   /* eprobe: the source payload */
	uint32_t srclen;
	const struct trail_meta *srcm;
	uintptr_t waddr;                      /* a watchpoint's address */
	uint64_t wold;                        /* ... the value before */
};

/* where the entry trampoline saved each register (SP and IP: none) */
#define ROFF(r) ((uint8_t)offsetof(struct trail_arch_regs, r))
static const uint8_t reg_off[TRAIL_PREG_COUNT] = {
	[TRAIL_PREG_AX] = ROFF(rax), [TRAIL_PREG_BX] = ROFF(rbx), [TRAIL_PREG_CX] = ROFF(rcx),
	[TRAIL_PREG_DX] = ROFF(rdx), [TRAIL_PREG_SI] = ROFF(rsi), [TRAIL_PREG_DI] = ROFF(rdi),
	[TRAIL_PREG_BP] = ROFF(rbp), [TRAIL_PREG_R8] = ROFF(r8), [TRAIL_PREG_R9] = ROFF(r9),
	[TRAIL_PREG_R10] = ROFF(r10), [TRAIL_PREG_R11] = ROFF(r11), [TRAIL_PREG_R12] = ROFF(r12),
	[TRAIL_PREG_R13] = ROFF(r13), [TRAIL_PREG_R14] = ROFF(r14), [TRAIL_PREG_R15] = ROFF(r15),
};
#undef ROFF

static uint64_t reg(const struct fctx *c, unsigned r)
{
	uint64_t v;

	if (r == TRAIL_PREG_SP)
		return c->sp;
	if (r == TRAIL_PREG_IP)
		return c->ip;
	if (!c->er) /* at a return: the checker allowed only these */
		return r == TRAIL_PREG_AX ? c->rr->rax : c->rr->rdx;
	memcpy(&v, (const uint8_t *)c->er + reg_off[r], 8);
	return v;
}

/* Field k of an eprobe's source payload: an integer's value (sign
 * extended when signed), or a string's bytes in *s, *slen. */
static int src_field(const struct fctx *c, uint32_t k, uint64_t *v, const uint8_t **s,
		     uint32_t *slen)
{
	const struct trail_meta *m = c->srcm;
	uint32_t off = 0;

	if (!m || k >= m->nfields)
		return -1;
	for (uint32_t i = 0;; i++) {
		const struct trail_field *f = &m->fields[i];
		uint32_t n = f->size;
		uint16_t cnt = 0;

		if (f->kind == TRAIL_FK_STRING || f->kind == TRAIL_FK_SEQ) {
			if (off + 2 > c->srclen)
				return -1;
			memcpy(&cnt, c->src + off, 2);
			off += 2;
			if (f->kind == TRAIL_FK_STRING && cnt == TRAIL_STRING_NULL)
				cnt = 0;
			n = f->kind == TRAIL_FK_STRING ? cnt : (uint32_t)cnt * f->size;
		} else if (f->kind == TRAIL_FK_ARRAY) {
			n = (uint32_t)f->count * f->size;
		}
		if (off + n > c->srclen)
			return -1;
		if (i == k) {
			if (f->kind == TRAIL_FK_STRING) {
				*s = c->src + off;
				*slen = n;
				return 0;
			}
			if (f->kind != TRAIL_FK_INT)
				return -1;
			*v = 0;
			memcpy(v, c->src + off, n);
			if ((f->flags & TRAIL_FF_SIGNED) && n < 8 && (*v >> (n * 8 - 1) & 1))
				*v |= ~0ull << (n * 8);
			return 0;
		}
		off += n;
	}
}

/* The zero value of a store whose argument could not be read. */
static uint32_t store_zero(const struct trail_fetch_insn *in, uint8_t *o)
{
	switch (in->op) {
	case TRAIL_FOP_ST_INT:
		memset(o, 0, in->size);
		return in->size;
	case TRAIL_FOP_ST_ARRAY:
		memset(o, 0, (size_t)in->size * in->u32);
		return (uint32_t)in->size * in->u32;
	default: /* strings: empty */
		memset(o, 0, 2);
		return 2;
	}
}

/* an eprobe's string source field, between its FIELD op and its store */
struct fstr {
	const uint8_t *p;
	uint32_t len;
};

/* The stores other than integers (strings, arrays, $comm): at o, the
 * record's end so far; returns the new end, or NULL if the read faulted. */
static __attribute__((noinline)) uint8_t *store_slow(const struct fprobe *pr,
						     const struct trail_fetch_insn *in, uint64_t a,
						     const struct fstr *str, uint8_t *buf, uint8_t *o,
						     uint32_t arg)
{
	/* cut a string to what the record has room for */
	uint32_t room = pr->p.hdr->payload_max - (uint32_t)(o - buf) - 2 - pr->tail[arg];
	uint32_t max = in->op == TRAIL_FOP_ST_COMM ? 16 : in->u32;
	uint16_t len;
	long n;

	if (in->op == TRAIL_FOP_ST_ARRAY) {
		n = (long)in->size * in->u32;
		return trail_arch_copy_safe(o, a + (uint64_t)in->imm, (unsigned long)n) ? NULL : o + n;
	}
	if (max > room)
		max = room;
	if (in->op == TRAIL_FOP_ST_COMM) {
		char comm[17] = {0};

		prctl(PR_GET_NAME, comm, 0, 0, 0);
		n = (long)strnlen(comm, 16);
		if ((uint32_t)n > max)
			n = max;
		memcpy(o + 2, comm, (size_t)n);
	} else if (str->p) {
		n = str->len < max ? str->len : max;
		memcpy(o + 2, str->p, (size_t)n);
	} else if ((n = trail_arch_string_safe((char *)o + 2, a + (uint64_t)in->imm, max)) < 0) {
		return NULL;
	}
	len = (uint16_t)n;
	memcpy(o, &len, 2);
	return o + 2 + len;
}

static inline void put_int(uint8_t *o, uint64_t a, unsigned size)
{
	uint32_t v4 = (uint32_t)a;
	uint16_t v2 = (uint16_t)a;

	switch (size) {
	case 8: memcpy(o, &a, 8); break;
	case 4: memcpy(o, &v4, 4); break;
	case 2: memcpy(o, &v2, 2); break;
	default: *o = (uint8_t)a;
	}
}

/*
 * Run pr's programs into buf (pr->p.hdr->payload_max bytes), its own
 * fields already there. Returns the payload's length.
 */
static uint32_t run(const struct fprobe *pr, const struct fprobe_att *at, const struct fctx *c,
		    uint8_t *buf)
{
	const struct trail_fetch_insn *in = pr->code, *end = in + pr->p.hdr->ninsns;
	uint8_t *o = buf + pr->own * 8u + (pr->fault ? 8u : 0u);
	uint64_t fault = 0, a = 0, v;
	struct fstr str = {NULL, 0};
	uint32_t arg = 0;
	int bad = 0;

	for (; in < end; in++) {
		if (in->op < TRAIL_FOP_ST_INT) { /* a value op */
			if (bad)
				continue;
			switch (in->op) {
			case TRAIL_FOP_REG:
				a = reg(c, in->arg);
				break;
			case TRAIL_FOP_STACK:
				bad = trail_arch_load_safe(c->sp + (uint64_t)in->imm, 8, &a) != 0;
				break;
			case TRAIL_FOP_RETVAL:
				a = c->rr ? c->rr->rax : 0;
				break;
			case TRAIL_FOP_IMM:
				a = (uint64_t)in->imm;
				break;
			case TRAIL_FOP_WADDR:
				a = c->waddr;
				break;
			case TRAIL_FOP_WOLD:
				a = c->wold;
				break;
			case TRAIL_FOP_SYM:
				a = at->syms[in - pr->code];
				bad = arg < 64 && (at->unresolved >> arg & 1);
				break;
			case TRAIL_FOP_FIELD:
				str.p = NULL;
				bad = src_field(c, in->u32, &a, &str.p, &str.len) != 0;
				break;
			case TRAIL_FOP_DEREF:
				bad = trail_arch_load_safe(a + (uint64_t)in->imm, in->size, &v) != 0;
				a = v;
				break;
			default: /* TRAIL_FOP_BITFIELD */
				a >>= in->arg;
				if (in->size < 64)
					a &= (1ull << in->size) - 1;
			}
			continue;
		}
		/* a store: the argument's end */
		if (TRAIL_LIKELY(!bad && in->op == TRAIL_FOP_ST_INT)) {
			put_int(o, a, in->size);
			o += in->size;
		} else if (!bad) {
			uint8_t *e = store_slow(pr, in, a, &str, buf, o, arg);

			bad = !e;
			o = e ? e : o;
		}
		if (TRAIL_UNLIKELY(bad)) {
			o += store_zero(in, o);
			fault |= 1ull << (arg < 63 ? arg : 63);
			bad = 0;
		}
		str.p = NULL;
		arg++;
	}
	if (pr->fault)
		memcpy(buf + pr->own * 8u, &fault, 8);
	return (uint32_t)(o - buf);
}

/* A probe that reads registers only (the common p/r with %REG, $argN in
 * registers, $retval): no interpreter, the values copied in a row. */
static inline uint32_t run_fast(const struct fprobe *pr, const void *regs, uint8_t *buf)
{
	uint8_t *o = buf + pr->own * 8u;
	uint64_t v;

	if (TRAIL_LIKELY(pr->words)) {
		for (uint32_t i = 0; i < pr->nfast; i++, o += 8) {
			memcpy(&v, (const uint8_t *)regs + pr->fast[i].off, 8);
			memcpy(o, &v, 8);
		}
		return (uint32_t)(o - buf);
	}
	for (uint32_t i = 0; i < pr->nfast; i++) {
		memcpy(&v, (const uint8_t *)regs + pr->fast[i].off, 8);
		put_int(o, v, pr->fast[i].size);
		o += pr->fast[i].size;
	}
	return (uint32_t)(o - buf);
}

/* pr's payload into buf, its own fields there already */
static inline uint32_t fetch(const struct fprobe *pr, const struct fprobe_att *at,
			     const struct fctx *c, uint8_t *buf)
{
	if (pr->nfast)
		return run_fast(pr, c->er ? (const void *)c->er : (const void *)c->rr, buf);
	return run(pr, at, c, buf);
}

static void eprobes_run(struct trail_event *ev, const void *payload, uint32_t len);

/* One probe record into the sessions of mask. */
static void emit(struct fprobe *pr, uint32_t mask, const uint8_t *buf, uint32_t len)
{
	write_event(&pr->ev, mask, buf, len);
	if (TRAIL_UNLIKELY(__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & TRAIL_STATE_EPROBE))
		eprobes_run(&pr->ev, buf, len);
}

/* ------------------------------------------------- kept entry records
 *
 * An entry probe on a function that also has return probes for the same
 * sessions: most such calls are leaves, with nothing written between the
 * two. As function_graph does with a leaf's entry (fhook.c), the entry
 * record is kept in the writer's trail_defer, stamped, and written at the
 * return in the same pass through the record path as the return probe's
 * (one path entry, the stream context loaded once). Anything else the
 * thread writes first writes the kept record (the defer hook), so each
 * stream stays in time order; so do fork, thread exit and exit(). Kept
 * only when the probe has no eprobes then (an eprobe attached while the
 * call runs misses that one record) and its record is small.
 */

/* byte s: how many times session slot s's probes left (mod 256). A
 * record kept before slot s's session left is not written into s (the
 * slot's next session), and still into the other sessions it was kept
 * for. Written under the control lock only. */
static uint64_t keep_gens;

/* the sessions of mask whose slots left since gens was read */
static inline uint32_t left_since(uint64_t gens, uint32_t mask)
{
	uint64_t d = gens ^ __atomic_load_n(&keep_gens, __ATOMIC_RELAXED);

	for (unsigned s = 0; d && s < TRAIL_MAX_SESSIONS; s++, d >>= 8)
		if (d & 0xff)
			mask &= ~(1u << s);
	return mask;
}

struct pkept {
	struct fprobe *pr;
	uint64_t ts;
	uintptr_t slot;  /* the call's return slot */
	uintptr_t site;
	uint64_t gens; /* keep_gens when it was kept */
	uint32_t mask;
	uint32_t cpu;
	uint32_t len;
	uint8_t payload[];
};

#define PKEPT_MAX (sizeof(((struct trail_defer *)0)->data) - sizeof(struct pkept))

static inline struct pkept *pkept(struct writer *w)
{
	return (struct pkept *)(void *)w->defer.data;
}

/* the sessions the kept record is still to be written into */
static inline uint32_t kept_mask(const struct pkept *k)
{
	if (!k->pr->ev.rt)
		return 0;
	return __atomic_load_n(k->pr->ev.state, __ATOMIC_ACQUIRE) & left_since(k->gens, k->mask) &
	       TRAIL_SESSION_BITS;
}

/* the kept record into the sessions of m (w is in the record path, level 1) */
static void kept_write(struct writer *w, const struct pkept *k, uint32_t m)
{
	if (m)
		write_sessions(&k->pr->ev, k->pr->ev.rt, w, 0, m, k->payload, k->len, k->ts, k->cpu);
}

/* trail_defer.flush of a kept entry record */
static void kept_flush(struct writer *w)
{
	w->defer.flush = NULL;
	kept_write(w, pkept(w), kept_mask(pkept(w)));
}

/* w's kept record, the previous one written: its header filled in, its
 * payload to fill; NULL if nothing can be kept now */
static inline struct pkept *keep_start(struct fprobe *pr, uint32_t mask, uintptr_t slot,
				       uintptr_t site)
{
	struct writer *w = trail__tls_w;
	struct pkept *k;

	if (TRAIL_UNLIKELY(!w) && !(w = trail__writer_get()))
		return NULL;
	/* (a filtered record is not kept: write_event filters) */
	if (w->depth ||
	    (__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & (TRAIL_STATE_EPROBE | TRAIL_STATE_EXT)))
		return NULL;
	path_enter(w, 0);
	if (w->defer.flush)
		w->defer.flush(w);
	k = pkept(w);
	k->ts = now_cpu(&k->cpu);
	k->pr = pr;
	k->slot = slot;
	k->site = site;
	k->mask = mask;
	k->gens = __atomic_load_n(&keep_gens, __ATOMIC_RELAXED);
	return k;
}

/* ... and kept, len bytes of payload */
static inline void keep_end(struct pkept *k, uint32_t len)
{
	struct writer *w = trail__tls_w;

	k->len = len;
	w->defer.flush = kept_flush;
	path_leave(w, 0);
}

/* A return probe's record (buf, len): with the call's kept entry record if
 * it is still kept (one pass through the record path), else alone. */
static void return_write(struct fprobe *pr, uint32_t mask, uintptr_t slot, uintptr_t site,
			 const uint8_t *buf, uint32_t len)
{
	struct writer *w = trail__tls_w;
	const struct pkept *k;
	struct evrt *rt;
	uint32_t m, cpu;
	uint64_t ts;

	if (!w || w->depth || w->defer.flush != kept_flush ||
	    (__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & TRAIL_STATE_EXT)) {
		emit(pr, mask, buf, len); /* (write_event writes a kept record first) */
		return;
	}
	path_enter(w, 0);
	ts = now_cpu(&cpu);
	m = __atomic_load_n(pr->ev.state, __ATOMIC_ACQUIRE) & mask & TRAIL_SESSION_BITS;
	rt = pr->ev.rt;
	k = pkept(w);
	/* read again inside: a signal handler may have written it */
	if (w->defer.flush == kept_flush && k->slot == slot && k->site == site) {
		uint32_t km = kept_mask(k);

		/* a session the entry was kept for that cannot take it any
		 * more (ending: its events are being disabled) takes neither:
		 * never a return without its entry */
		m &= km | ~k->mask;
		w->defer.flush = NULL;
		if (TRAIL_LIKELY(km == m && m && rt)) {
			write_sessions_two(&k->pr->ev, k->pr->ev.rt, k->payload, k->len, k->ts, k->cpu,
					   &pr->ev, rt, buf, len, ts, cpu, w, m);
			m = 0; /* written */
		} else {
			kept_write(w, k, km);
		}
	} else if (w->defer.flush) {
		w->defer.flush(w);
	}
	if (m && rt)
		write_sessions(&pr->ev, rt, w, 0, m, buf, len, ts, cpu);
	path_leave(w, 0);
	if (TRAIL_UNLIKELY(__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & TRAIL_STATE_EPROBE))
		eprobes_run(&pr->ev, buf, len);
}

/* ------------------------------------------------------ a site's pair
 *
 * The common use of a return probe: one entry and one return probe on a
 * function, of one session, reading registers only (`p f a=%di b=%si`,
 * `r f ret=$retval`). The site holds them as a
 * pair, worked out whenever its probes change, and its calls run them
 * without the walk through the attachments and the general checks: the
 * entry's registers are kept as any kept record, and the return writes
 * both records straight into the chunk, its registers read there.
 * Anything else at run time (an eprobe on either, a chunk to take, the
 * kept record gone) goes the general way.
 */
struct fpair {
	struct fprobe *e, *r;
	uint32_t bit; /* the session's */
	unsigned s;
};

/* h->pair again, after h's probes changed (under the control lock) */
static void pair_update(struct hsite *h)
{
	const struct fprobe_att *e = NULL, *r = NULL;
	const struct fpair *old = h->pair;
	struct fpair *pp = NULL;
	int more = 0;

	for (const struct fprobe_att *at = h->probes; at; at = at->next) {
		if (!__atomic_load_n(&at->mask, __ATOMIC_RELAXED))
			continue;
		if (at->pr->kind == TRAIL_PROBE_ENTRY && !e)
			e = at;
		else if (at->pr->kind == TRAIL_PROBE_RETURN && !r)
			r = at;
		else
			more = 1;
	}
	if (!more && e && r && e->mask == r->mask && !(e->mask & (e->mask - 1)) &&
	    e->pr->fast_len && e->pr->keep && r->pr->fast_len) {
		if (old && old->e == e->pr && old->r == r->pr && old->bit == e->mask)
			return;
		if ((pp = palloc(sizeof(*pp))))
			*pp = (struct fpair){e->pr, r->pr, e->mask, (unsigned)__builtin_ctz(e->mask)};
	}
	__atomic_store_n(&h->pair, pp, __ATOMIC_RELEASE);
}

/* The entry of a pair's call: its record kept (0: go the general way) */
static inline int pair_entry(const struct fpair *pp, const struct hsite *h, uintptr_t *ret,
			     const struct trail_arch_regs *regs)
{
	struct fprobe *pr = pp->e;
	struct pkept *k;

	if (!(__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & pp->bit))
		return 1; /* not enabled: nothing to run */
	if (!(k = keep_start(pr, pp->bit, (uintptr_t)ret, h->addr)))
		return 0;
	memcpy(k->payload, &h->addr, 8);
	keep_end(k, run_fast(pr, regs, k->payload));
	return 1;
}

/* The return of a pair's call: the kept entry record and the return
 * record written in one reservation (0: go the general way) */
static inline int pair_return(const struct fpair *pp, uintptr_t site, uintptr_t slot,
			      uintptr_t ret, const struct trail_arch_ret_regs *regs)
{
	struct writer *w = trail__tls_w;
	struct fprobe *e = pp->e, *r = pp->r;
	const struct pkept *k;
	struct psess *ps = &trail__sess[pp->s];
	const struct evrt *ert, *rrt;
	struct wctx *c;
	uint32_t cpu, len2 = r->fast_len;
	uint64_t ts, own[2] = {site, ret};
	uint8_t *p;

	if (!w || w->depth || w->defer.flush != kept_flush)
		return 0;
	k = pkept(w);
	if (k->slot != slot || k->site != site || k->pr != e || k->mask != pp->bit ||
	    k->gens != __atomic_load_n(&keep_gens, __ATOMIC_RELAXED) ||
	    (__atomic_load_n(&r->state, __ATOMIC_RELAXED) & (TRAIL_STATE_EPROBE | TRAIL_STATE_EXT)))
		return 0;
	path_enter(w, 0);
	ts = now_cpu(&cpu);
	c = &w->ctx[pp->s][0];
	/* read again inside (a signal handler may have written it); enabled
	 * in both (acquire: the session's ids are there) */
	ert = e->ev.rt;
	rrt = r->ev.rt;
	if (w->defer.flush != kept_flush || !ert || !rrt ||
	    !(__atomic_load_n(e->ev.state, __ATOMIC_ACQUIRE) &
	      __atomic_load_n(r->ev.state, __ATOMIC_ACQUIRE) & pp->bit) ||
	    !(p = reserve_two(ps, c, ert->ids[pp->s], k->len, k->ts, k->cpu, rrt->ids[pp->s], len2,
			      ts, cpu))) {
		path_leave(w, 0);
		return 0;
	}
	copy_payload(p, k->payload, k->len);
	p += k->len + 4;
	memcpy(p, own, 16);
	run_fast(r, regs, p);
	commit_two(c, p + len2, ts);
	w->defer.flush = NULL;
	if (TRAIL_UNLIKELY(__atomic_load_n(&ps->orphaned, __ATOMIC_RELAXED))) {
		__atomic_fetch_and(e->ev.state, ~pp->bit, __ATOMIC_RELAXED);
		__atomic_fetch_and(r->ev.state, ~pp->bit, __ATOMIC_RELAXED);
	}
	path_leave(w, 0);
	return 1;
}

/* ------------------------------------------------------ probe hits */

static void entry_walk(const struct hsite *h, uint32_t pmask, uint32_t rmask, uintptr_t *ret,
		       const struct trail_arch_regs *regs);
static void return_walk(const struct hsite *h, uintptr_t slot, uintptr_t ret, uint32_t rmask,
			const struct trail_arch_ret_regs *regs);

void trail__fprobe_entry(const struct hsite *h, uint32_t pmask, uint32_t rmask, uintptr_t *ret,
			 const struct trail_arch_regs *regs)
{
	const struct fpair *pp = __atomic_load_n(&h->pair, __ATOMIC_ACQUIRE);

	if (pp && pmask == pp->bit && rmask == pp->bit && pair_entry(pp, h, ret, regs))
		return;
	entry_walk(h, pmask, rmask, ret, regs);
}

/* the general way: each probe attached to h */
static __attribute__((noinline)) void entry_walk(const struct hsite *h, uint32_t pmask,
						 uint32_t rmask, uintptr_t *ret,
						 const struct trail_arch_regs *regs)
{
	struct fctx c = {.er = regs, .sp = (uintptr_t)ret, .ip = h->addr};

	for (const struct fprobe_att *at = __atomic_load_n(&h->probes, __ATOMIC_ACQUIRE); at;
	     at = at->next) {
		uint32_t m = __atomic_load_n(&at->mask, __ATOMIC_ACQUIRE) & pmask;
		struct fprobe *pr = at->pr;

		if (!m || pr->kind != TRAIL_PROBE_ENTRY ||
		    !(__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & m))
			continue;
		/* its sessions' return probes will write it with theirs */
		if (pr->keep && !(m & ~rmask)) {
			struct pkept *k = keep_start(pr, m, (uintptr_t)ret, h->addr);

			if (k) {
				memcpy(k->payload, &h->addr, 8);
				keep_end(k, fetch(pr, at, &c, k->payload));
				continue;
			}
		}
		if (TRAIL_UNLIKELY(__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & TRAIL_STATE_EXT))
			/* (a stacktrace trigger on its record starts here) */
			trail__ustart = (struct trail_ustart){h->addr, (uintptr_t)ret, regs->rbp};
		{
			uint8_t buf[pr->p.hdr->payload_max];

			memcpy(buf, &h->addr, 8);
			emit(pr, m, buf, fetch(pr, at, &c, buf));
		}
	}
	if (TRAIL_UNLIKELY(trail__ustart.ip))
		trail__ustart.ip = 0;
}

/* a return probe's record, made in buf (its payload_max bytes) */
static inline __attribute__((always_inline)) void
return_one(const struct hsite *h, const struct fprobe_att *at, uint32_t m, uintptr_t slot,
	   uintptr_t ret, const struct fctx *c, uint8_t *buf)
{
	uint64_t own[2] = {h->addr, ret};

	memcpy(buf, own, 16);
	return_write(at->pr, m, slot, h->addr, buf, fetch(at->pr, at, c, buf));
}

/* (the common return probes' records fit a buffer of a set size) */
#define RETURN_SMALL 64u

static __attribute__((noinline)) void return_big(const struct hsite *h, const struct fprobe_att *at,
						 uint32_t m, uintptr_t slot, uintptr_t ret,
						 const struct fctx *c)
{
	uint8_t buf[at->pr->p.hdr->payload_max];

	return_one(h, at, m, slot, ret, c, buf);
}

void trail__fprobe_return(const struct hsite *h, uintptr_t slot, uintptr_t ret, uint32_t rmask,
			  const struct trail_arch_ret_regs *regs)
{
	const struct fpair *pp = __atomic_load_n(&h->pair, __ATOMIC_ACQUIRE);

	if (pp && rmask == pp->bit && pair_return(pp, h->addr, slot, ret, regs))
		return;
	return_walk(h, slot, ret, rmask, regs);
}

/* the general way: each return probe attached to h */
static __attribute__((noinline)) void return_walk(const struct hsite *h, uintptr_t slot,
						  uintptr_t ret, uint32_t rmask,
						  const struct trail_arch_ret_regs *regs)
{
	struct fctx c = {.rr = regs, .sp = (uintptr_t)regs->sp, .ip = ret};

	for (const struct fprobe_att *at = __atomic_load_n(&h->probes, __ATOMIC_ACQUIRE); at;
	     at = at->next) {
		uint32_t m = __atomic_load_n(&at->mask, __ATOMIC_ACQUIRE) & rmask;
		struct fprobe *pr = at->pr;

		if (!m || pr->kind != TRAIL_PROBE_RETURN)
			continue;
		if (TRAIL_LIKELY(pr->p.hdr->payload_max <= RETURN_SMALL)) {
			uint64_t buf[RETURN_SMALL / 8];

			return_one(h, at, m, slot, ret, &c, (uint8_t *)buf);
		} else {
			return_big(h, at, m, slot, ret, &c);
		}
	}
}

static void eprobes_run(struct trail_event *ev, const void *payload, uint32_t len)
{
	const struct evrt *rt = __atomic_load_n((struct evrt **)&ev->rt, __ATOMIC_ACQUIRE);

	if (!rt)
		return;
	for (const struct fprobe_att *at = __atomic_load_n((struct fprobe_att **)&rt->eprobes,
							   __ATOMIC_ACQUIRE);
	     at; at = at->next) {
		uint32_t m = __atomic_load_n(&at->mask, __ATOMIC_ACQUIRE);
		struct fprobe *pr = at->pr;
		struct fctx c = {.src = payload, .srclen = len, .srcm = at->src};

		if (!m || !(__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & m))
			continue;
		if (at->filter && !trail__filter_pass(at->filter, trail__tls_w, payload, len))
			continue;
		{
			/* (+ 1: an eprobe without arguments has no payload) */
			uint8_t buf[pr->p.hdr->payload_max + 1];

			emit(pr, m, buf, run(pr, at, &c, buf));
		}
	}
}

/* ------------------------------------------------------------- making */

/* bytes argument i's store needs at least (a string: its length word) */
static uint32_t store_min(const struct trail_fetch_insn *in)
{
	if (in->op == TRAIL_FOP_ST_INT)
		return in->size;
	if (in->op == TRAIL_FOP_ST_ARRAY)
		return (uint32_t)in->size * in->u32;
	return 2;
}

/* pr->fast, if every argument of pr is a saved register stored as an
 * integer */
static void fast_make(struct fprobe *pr)
{
	const struct trail_fetch_insn *in = pr->code;
	uint16_t n = pr->p.hdr->ninsns;
	struct fast_arg *f;
	uint8_t words = 1;
	uint32_t len = pr->own * 8u;

	/* (a register cannot fault: such a probe has no __probe_fault) */
	if (pr->kind == TRAIL_PROBE_EVENT || pr->kind == TRAIL_PROBE_WATCH || pr->fault || n % 2)
		return;
	if (!n) { /* no arguments: nothing to run (run() runs nothing) */
		pr->fast_len = pr->own * 8u;
		return;
	}
	if (!(f = palloc(sizeof(*f) * n / 2)))
		return;
	for (uint16_t i = 0; i < n; i += 2) {
		unsigned r = in[i].arg;

		if (in[i + 1].op != TRAIL_FOP_ST_INT)
			return;
		if (in[i].op == TRAIL_FOP_RETVAL && pr->kind == TRAIL_PROBE_RETURN)
			f[i / 2].off = offsetof(struct trail_arch_ret_regs, rax);
		else if (in[i].op != TRAIL_FOP_REG || r == TRAIL_PREG_SP || r == TRAIL_PREG_IP)
			return;
		else if (pr->kind == TRAIL_PROBE_ENTRY)
			f[i / 2].off = reg_off[r];
		else
			f[i / 2].off = r == TRAIL_PREG_AX ? offsetof(struct trail_arch_ret_regs, rax)
							  : offsetof(struct trail_arch_ret_regs, rdx);
		f[i / 2].size = in[i + 1].size;
		words &= in[i + 1].size == 8;
		len += in[i + 1].size;
	}
	pr->words = words;
	pr->fast_len = (uint16_t)len;
	pr->fast = f;
	pr->nfast = n / 2;
}

/* is hex (2 * len chars) the blob b? */
static int hex_equal(const char *hex, const uint8_t *b, size_t len)
{
	uint8_t one;

	for (size_t i = 0; i < len; i++)
		if (trail_probe_unhex(hex + 2 * i, 2, &one, 1) != 1 || one != b[i])
			return 0;
	return 1;
}

static struct fprobe *probe_make(const uint8_t *hex, size_t n)
{
	size_t len = n / 2;
	struct fprobe *pr;
	struct trail_fetch_insn *code;
	const char *why;
	uint8_t *blob;
	uint32_t need = 0;

	for (pr = trail__fprobes; pr; pr = pr->next)
		if (pr->len == len && hex_equal((const char *)hex, pr->blob, len))
			return pr;
	if (len > TRAIL_PROBE_MAX_BLOB || !(blob = palloc(len)) ||
	    trail_probe_unhex((const char *)hex, n, blob, len) != (long)len)
		return NULL;
	pr = palloc(sizeof(*pr));
	if (!pr || trail_probe_check(blob, len, &pr->p, &why))
		return NULL;
	pr->blob = blob;
	pr->len = (uint32_t)len;
	pr->kind = pr->p.hdr->kind;
	pr->own = pr->kind == TRAIL_PROBE_ENTRY || pr->kind == TRAIL_PROBE_WATCH ? 1
		  : pr->kind == TRAIL_PROBE_RETURN ? 2 : 0;
	pr->fault = !!(pr->p.hdr->flags & TRAIL_PROBE_F_FAULT);
	pr->tail = palloc(sizeof(uint16_t) * (pr->p.hdr->nargs + 1u));
	code = palloc(sizeof(*code) * (pr->p.hdr->ninsns + 1u));
	if (!pr->tail || !code)
		return NULL;
	memcpy(code, pr->p.code, sizeof(*code) * pr->p.hdr->ninsns);
	pr->code = code;
	/* what the arguments after each one need, from the last back */
	for (uint16_t i = pr->p.hdr->ninsns, a = pr->p.hdr->nargs; i-- > 0;)
		if (pr->p.code[i].op >= TRAIL_FOP_ST_INT) {
			pr->tail[--a] = (uint16_t)need;
			need += store_min(&pr->p.code[i]);
		}
	fast_make(pr);
	pr->keep = pr->kind == TRAIL_PROBE_ENTRY && pr->p.hdr->payload_max <= PKEPT_MAX;
	pr->ev.abi = TRAIL_EVENT_ABI;
	pr->ev.size = sizeof(pr->ev);
	pr->ev.state = &pr->state;
	pr->ev.meta = pr->p.meta;
	pr->evp[0] = &pr->ev;
	trail__register_dyn(&pr->dso, &pr->rt, pr->evp);
	pr->next = trail__fprobes;
	__atomic_store_n(&trail__fprobes, pr, __ATOMIC_RELEASE);
	return pr;
}

/* the object a SYM names: by path, or by basename */
/* is o the object want names: its path, or its file name ("": any)? */
int trail__fprobe_obj_matches(const struct hobj *o, const char *want)
{
	const char *b;
	struct stat st;

	if (!*want)
		return 1;
	b = strrchr(o->path, '/');
	if (!strcmp(o->path, want) || (b && !strcmp(b + 1, want)))
		return 1;
	/* a path naming the same file another way (/lib -> /usr/lib) */
	return strchr(want, '/') && o->ino && !stat(want, &st) && st.st_dev == o->dev &&
	       st.st_ino == o->ino;
}

/* the object a SYM names */
static const struct hobj *obj_named(const char *name)
{
	for (unsigned i = 0; i < trail__nobjs; i++)
		if (*name && trail__fprobe_obj_matches(&trail__objs[i], name))
			return &trail__objs[i];
	return NULL;
}

/* A new attachment of pr, its SYM operands resolved against the loaded
 * objects (bias: the probed function's object's). */
struct fprobe_att *trail__fprobe_att_make(struct fprobe *pr, uintptr_t bias)
{
	struct fprobe_att *at = palloc(sizeof(*at));
	uint32_t arg = 0;

	if (!at)
		return NULL;
	at->pr = pr;
	at->syms = palloc(sizeof(uint64_t) * (pr->p.hdr->ninsns + 1u));
	if (!at->syms)
		return NULL;
	for (uint16_t i = 0; i < pr->p.hdr->ninsns; i++) {
		const struct trail_fetch_insn *in = &pr->p.code[i];

		if (in->op == TRAIL_FOP_SYM) {
			const struct hobj *o = NULL;

			if (in->u32 != 0xffffffffu && !(o = obj_named(pr->p.strs + in->u32)))
				at->unresolved |= 1ull << (arg < 63 ? arg : 63);
			at->syms[i] = (uint64_t)in->imm + (o ? o->fo.base : bias);
		}
		if (in->op >= TRAIL_FOP_ST_INT)
			arg++;
	}
	return at;
}

/* --------------------------------------------------------- functions */

/* is pr session s's probe on the function name (at link-time address
 * at) of o? */
static int probes_function(const struct fprobe *pr, unsigned s, const struct hobj *o,
			   const char *name, uintptr_t at)
{
	if (!trail__fprobe_session_has(pr, s) || pr->kind == TRAIL_PROBE_EVENT ||
	    (pr->p.hdr->flags & TRAIL_PROBE_F_INSN))
		return 0;
	if (pr->p.hdr->flags & TRAIL_PROBE_F_ADDR)
		return pr->p.hdr->offset == at && trail__fprobe_obj_matches(o, pr->p.obj);
	return *name && !strcmp(pr->p.sym, name) && trail__fprobe_obj_matches(o, pr->p.obj);
}

int trail__fprobe_wants(unsigned s, const struct hobj *o, const char *name, uintptr_t at)
{
	for (const struct fprobe *pr = trail__fprobes; pr; pr = pr->next)
		if (probes_function(pr, s, o, name, at))
			return 1;
	return 0;
}

int trail__fprobe_attach(unsigned s, struct hsite *h, const struct hobj *o, const char *name,
			 uintptr_t addr)
{
	int n = 0, ret = 0;

	for (struct fprobe *pr = trail__fprobes; pr; pr = pr->next) {
		struct fprobe_att *at;

		if (!probes_function(pr, s, o, name, addr))
			continue;
		for (at = h->probes; at && at->pr != pr; at = at->next)
			;
		if (!at) {
			if (!(at = trail__fprobe_att_make(pr, o->fo.base)))
				continue;
			at->next = h->probes;
			__atomic_store_n(&h->probes, at, __ATOMIC_RELEASE);
		}
		__atomic_fetch_or(&at->mask, 1u << s, __ATOMIC_RELEASE);
		ret |= pr->kind == TRAIL_PROBE_RETURN;
		n++;
	}
	if (ret)
		__atomic_fetch_or(&h->rpmask, 1u << s, __ATOMIC_RELEASE);
	if (n) {
		pair_update(h);
		__atomic_fetch_or(&h->pmask, 1u << s, __ATOMIC_RELEASE);
	}
	return n;
}

uint32_t trail__fprobe_on(unsigned s, const struct hsite *h)
{
	for (const struct fprobe_att *at = h->probes; at; at = at->next)
		if (at->mask & (1u << s))
			return 1u << s;
	return 0;
}

void trail__fprobe_detach(unsigned s, struct hsite *h)
{
	for (struct fprobe_att *at = h->probes; at; at = at->next)
		__atomic_fetch_and(&at->mask, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&h->rpmask, ~(1u << s), __ATOMIC_RELEASE);
	__atomic_fetch_and(&h->pmask, ~(1u << s), __ATOMIC_RELEASE);
	pair_update(h);
}

/* ------------------------------------------------------------ eprobes */

/* "SYS:EVENT" names rt? */
static int source_is(const struct fprobe *pr, const struct evrt *rt)
{
	size_t pl = strlen(rt->provider);

	return !strncmp(pr->p.sym, rt->provider, pl) && pr->p.sym[pl] == ':' &&
	       !strcmp(pr->p.sym + pl + 1, rt->name);
}

/* pr runs for the sessions of mask after rt is written */
static void eprobe_on(struct fprobe *pr, struct evrt *rt, uint32_t mask)
{
	struct fprobe_att *at;
	const char *why;

	if (rt == &pr->rt)
		return;
	for (at = rt->eprobes; at && at->pr != pr; at = at->next)
		;
	if (!at) {
		struct trail_meta *m = palloc(sizeof(*m));

		struct trail_filter *f = NULL;
		struct trail_filter_err fe;

		if (!m || trail__meta_parse(rt->meta, rt->meta_size, m, &why))
			return;
		/* a filter that does not compile for this source's fields:
		 * not on this source (the CLI checked the ones it could see) */
		if (pr->p.filter && (!(f = palloc(sizeof(*f))) ||
				     trail_filter_compile(pr->p.filter, m, f, &fe)))
			return;
		if (!(at = trail__fprobe_att_make(pr, trail__nobjs ? trail__objs[0].fo.base : 0)))
			return;
		at->src = m;
		at->filter = f;
		at->next = rt->eprobes;
		__atomic_store_n((struct fprobe_att **)&rt->eprobes, at, __ATOMIC_RELEASE);
	}
	__atomic_fetch_or(&at->mask, mask, __ATOMIC_RELEASE);
	__atomic_fetch_or(rt->ev->state, TRAIL_STATE_EPROBE, __ATOMIC_RELEASE);
}

/* an event registered later (a library loaded): the eprobes on its name */
static void on_register(struct evrt *rt)
{
	for (struct fprobe *pr = trail__fprobes; pr; pr = pr->next)
		if (pr->kind == TRAIL_PROBE_EVENT && pr->sessions && source_is(pr, rt))
			eprobe_on(pr, rt, pr->sessions);
}

static void eprobes_join(unsigned s)
{
	for (struct fprobe *pr = trail__fprobes; pr; pr = pr->next) {
		if (!trail__fprobe_session_has(pr, s) || pr->kind != TRAIL_PROBE_EVENT)
			continue;
		/* sources registered later (a library loaded) are found then */
		trail__eprobe_hook = eprobes_run;
		trail__on_register = on_register;
		__atomic_fetch_or(&eprobe_sessions, 1u << s, __ATOMIC_RELEASE);
		for (struct evrt *rt = trail__events(); rt; rt = rt->next)
			if (source_is(pr, rt))
				eprobe_on(pr, rt, 1u << s);
	}
}

static void eprobes_leave(unsigned s)
{
	if (!(__atomic_fetch_and(&eprobe_sessions, ~(1u << s), __ATOMIC_RELEASE) & (1u << s)))
		return;
	for (struct evrt *rt = trail__events(); rt; rt = rt->next) {
		uint32_t left = 0;

		for (struct fprobe_att *at = rt->eprobes; at; at = at->next)
			left |= __atomic_and_fetch(&at->mask, ~(1u << s), __ATOMIC_RELEASE);
		if (rt->eprobes && !left)
			__atomic_fetch_and(rt->ev->state, ~TRAIL_STATE_EPROBE, __ATOMIC_RELEASE);
	}
}

/* ------------------------------------------- probes at an instruction */

void trail__fprobe_fire_insn(struct fprobe_att *const *list, uint32_t m,
			     const struct trail_arch_regs *r, uintptr_t sp, uintptr_t ip)
{
	struct fctx c = {.er = r, .sp = sp, .ip = ip};

	for (const struct fprobe_att *at = __atomic_load_n(list, __ATOMIC_ACQUIRE); at;
	     at = at->next) {
		uint32_t am = __atomic_load_n(&at->mask, __ATOMIC_ACQUIRE) & m;
		struct fprobe *pr = at->pr;

		if (!am || !(__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & am))
			continue;
		if (TRAIL_UNLIKELY(__atomic_load_n(&pr->state, __ATOMIC_RELAXED) & TRAIL_STATE_EXT))
			trail__ustart = (struct trail_ustart){ip, c.sp, r->rbp};
		{
			uint8_t buf[pr->p.hdr->payload_max];

			memcpy(buf, &ip, 8);
			emit(pr, am, buf, fetch(pr, at, &c, buf));
		}
	}
	if (TRAIL_UNLIKELY(trail__ustart.ip))
		trail__ustart.ip = 0;
}

void trail__fprobe_fire_watch(const struct fprobe_att *at, uint32_t m,
			      const struct trail_arch_regs *r, uintptr_t sp, uintptr_t ip, uintptr_t waddr,
			      uint64_t wold)
{
	struct fctx c = {.er = r, .sp = sp, .ip = ip, .waddr = waddr, .wold = wold};
	struct fprobe *pr = at->pr;

	m &= __atomic_load_n(&pr->state, __ATOMIC_RELAXED);
	if (!m)
		return;
	{
		uint8_t buf[pr->p.hdr->payload_max];

		memcpy(buf, &ip, 8);
		emit(pr, m, buf, fetch(pr, at, &c, buf));
	}
}

struct fprobe *trail__fprobe_get(const char *hex, size_t n)
{
	return probe_make((const uint8_t *)hex, n);
}

/* ------------------------------------------------------------ sessions */

struct joining {
	unsigned s;
	const char *spec;
	int err, functions, any;
};

static int probe_line(const char *v, size_t len, void *arg)
{
	struct joining *j = arg;
	struct fprobe *pr = probe_make((const uint8_t *)v, len);

	if (!pr || !pr->rt.provider) {
		j->err = -EPROTO;
		return 1;
	}
	/* only the probes whose event the session records, or has triggers
	 * on, or may turn on with one (extras made when it registered) */
	if (!trail__spec_match(j->spec, pr->rt.provider, pr->rt.name) && !pr->rt.x[j->s])
		return 0;
	__atomic_fetch_or(&pr->sessions, 1u << j->s, __ATOMIC_RELEASE);
	/* (a watchpoint hooks no function: fwatch.c arms it) */
	j->functions += pr->kind != TRAIL_PROBE_EVENT && pr->kind != TRAIL_PROBE_WATCH;
	j->any = 1;
	return 0;
}

int trail__fprobe_join(unsigned s, const char *spec)
{
	struct joining j = {s, spec, 0, 0, 0};

	trail__spec_opts(spec, "probe", probe_line, &j);
	if (j.err) {
		trail__fprobe_leave(s);
		return j.err;
	}
	if (j.any && trail__signals_guard_faults() < 0) {
		trail__fprobe_leave(s);
		return -EIO;
	}
	eprobes_join(s);
	return j.functions;
}

void trail__fprobe_leave(unsigned s)
{
	uint64_t g = __atomic_load_n(&keep_gens, __ATOMIC_RELAXED), b = 0xffull << (8 * s);

	__atomic_store_n(&keep_gens, (g & ~b) | ((g + (1ull << (8 * s))) & b), __ATOMIC_RELAXED);
	eprobes_leave(s);
	for (struct fprobe *pr = trail__fprobes; pr; pr = pr->next)
		__atomic_fetch_and(&pr->sessions, ~(1u << s), __ATOMIC_RELEASE);
}
