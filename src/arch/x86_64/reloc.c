/* SPDX-License-Identifier: MIT */
/*
 * reloc.c - entering unmodified code (x86_64): the first instructions of
 * a function moved out of the way of a 5-byte jump, the kernel's
 * optimized-kprobe (djprobe) idea in user space. The instruction decoder
 * is Capstone's (the one uftrace and Frida use for this job); see arch.h
 * for the contract.
 *
 * trail_arch_reloc_check() decodes the whole function (a linear sweep of
 * its symbol's bytes) and says whether its entry can be displaced:
 *   - the displaced instructions, up to the first boundary at or past 5
 *     bytes, must each run elsewhere: plain ones are copied; RIP-relative
 *     operands get their displacement recomputed; short branches are
 *     widened (jrcxz/loop, which have no long form, go through a long
 *     jump); a direct or RIP-relative call is turned into a push of the
 *     original return address and a jump, and only as the last displaced
 *     instruction (any other would leave return addresses inside the
 *     jump on some stack); a return, or an unconditional jump before the
 *     last, ends the function inside the 5 bytes: too short, unless it
 *     is the function's last instruction and the bytes up to 5 are
 *     padding before the next symbol (room), which the jump may cover;
 *   - no branch of the function may land in the displaced bytes, the
 *     entry included (a loop whose head is the entry would run the hook
 *     at every turn): direct branches are checked; a jump table (an
 *     indirect jump through a table of the function's own addresses: the
 *     `notrack jmp`, a jump through memory with an index, or the PIC
 *     form, a 4-byte load with index followed by a register jump) cannot
 *     be, so its function is refused.
 * trail_arch_entry_check() chooses between that jump, the whole function
 * run from a copy (trail_arch_whole_check/_make, at the end: leaves whose
 * loop comes back into the first bytes), and a breakpoint (trap_check).
 * trail_arch_reloc_make() writes the copy for the address it will run at
 * (within reach of the code: RIP-relative targets and the jump back are
 * 32-bit), with the map from each displaced instruction to its place in
 * the copy, for threads found inside the displaced bytes by a live patch.
 *
 * Capstone's entry points come from decoder.c's constructor (libtrail
 * does not link Capstone: arch.h). Its handle is opened then, its memory
 * taken from an mmap'd pool
 * (this may run in the control signal handler, where malloc cannot):
 * CS_OPT_MEM points capstone at the pool for cs_open, cs_malloc and one
 * first decode (which makes the handle's instruction cache, 17 KiB), and
 * back at libc's allocator at once; decoding after that allocates
 * nothing. Callers serialize (the control lock).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../arch.h"
#include "decoder.h"

/* ------------------------------------------------------------ capstone */

#define POOL_SIZE (256u * 1024)

static uint8_t *pool;
static size_t pool_used;
static csh cs;
static cs_insn *insn;
static int cs_state; /* 0 not tried, 1 open, -1 failed */
static const struct trail_arch_decoder_ops *ops; /* decoder.c's */

static void *pool_alloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!pool || n > POOL_SIZE - pool_used)
		return NULL;
	p = pool + pool_used;
	pool_used += n;
	return p;
}

static void *pool_calloc(size_t k, size_t n)
{
	return k && n > (size_t)-1 / k ? NULL : pool_alloc(k * n); /* mmap'd: zeroed */
}

static void *pool_realloc(void *p, size_t n)
{
	void *q = pool_alloc(n);

	/* only ever called on blocks of its own, which are smaller */
	if (q && p)
		memcpy(q, p, n);
	return q;
}

static void pool_free(void *p)
{
	(void)p; /* the handle lives as long as the process */
}

/* the instruction at code (n bytes of it, at address at) into insn */
static int decode(const uint8_t *code, size_t n, uintptr_t at)
{
	uint64_t a = at;

	return ops->disasm_iter(cs, &code, &n, &a, insn) ? 0 : -EINVAL;
}

/* the tools' (decoder-lazy.c): Capstone loaded at their first decode;
 * absent (NULL) from libtrail, whose decoder is registered */
extern const struct trail_arch_decoder_ops *trail__arch_decoder_lazy(void)
	__attribute__((weak, visibility("hidden")));

static int decoder(void)
{
	cs_opt_mem ours = {pool_alloc, pool_calloc, pool_realloc, pool_free, vsnprintf};
	cs_opt_mem libc = {malloc, calloc, realloc, free, vsnprintf};
	int st = __atomic_load_n(&cs_state, __ATOMIC_ACQUIRE);

	if (!st && !ops && trail__arch_decoder_lazy)
		ops = trail__arch_decoder_lazy();
	if (st || !ops)
		return st > 0 ? 0 : -ENOTSUP;
	__atomic_store_n(&cs_state, -1, __ATOMIC_RELAXED);
	pool = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED) {
		pool = NULL;
		return -ENOMEM;
	}
	/* the program may use capstone too: ours only for these two calls */
	ops->option(0, CS_OPT_MEM, (size_t)&ours);
	if (ops->open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK) {
		ops->option(cs, CS_OPT_DETAIL, CS_OPT_ON);
		insn = ops->insn_alloc(cs);
		/* the first decode makes the handle's instruction cache */
		if (insn && !decode((const uint8_t *)"\x90", 1, 0))
			__atomic_store_n(&cs_state, 1, __ATOMIC_RELEASE);
	}
	ops->option(0, CS_OPT_MEM, (size_t)&libc);
	return cs_state > 0 ? 0 : -ENOTSUP;
}

__attribute__((visibility("default"))) void
trail_arch_decoder_register(const struct trail_arch_decoder_ops *o)
{
	if (__atomic_load_n(&cs_state, __ATOMIC_ACQUIRE) > 0)
		return; /* (the tools' own, and a library's loaded besides) */
	ops = o;
	cs_state = 0;
	decoder();
}

int trail_arch_decoder_init(void)
{
	return decoder();
}

const void *trail_arch_decoder_code(void)
{
	return __atomic_load_n(&cs_state, __ATOMIC_ACQUIRE) > 0 ? (const void *)ops->disasm_iter
							       : NULL;
}

int trail_arch_insn_len(const uint8_t *code, size_t n, uintptr_t at)
{
	int r = decoder();

	if (r)
		return r;
	return decode(code, n, at) ? -EINVAL : (int)insn->size;
}

/* ------------------------------------------------------------- helpers */

static int group(unsigned g)
{
	for (unsigned i = 0; i < insn->detail->groups_count; i++)
		if (insn->detail->groups[i] == g)
			return 1;
	return 0;
}

static const cs_x86_op *rip_operand(void)
{
	const cs_x86 *x = &insn->detail->x86;

	for (unsigned i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
			return &x->operands[i];
	return NULL;
}

/* a direct branch's target, or 0 */
static uintptr_t direct_target(void)
{
	const cs_x86 *x = &insn->detail->x86;

	if (!(group(CS_GRP_JUMP) || group(CS_GRP_CALL)) || x->op_count != 1 ||
	    x->operands[0].type != X86_OP_IMM)
		return 0;
	return (uintptr_t)x->operands[0].imm;
}

static void why_at(char *why, size_t len, uintptr_t fn, uintptr_t at, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!why || !len)
		return;
	n = (size_t)snprintf(why, len, "+0x%lx %s %s: ", (unsigned long)(at - fn), insn->mnemonic,
			     insn->op_str);
	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(why + n, len - n, fmt, ap);
	va_end(ap);
}

/* is the instruction a jump through a table (see the top) */
static int table_jump(int *pic_load)
{
	const cs_x86 *x = &insn->detail->x86;

	if (insn->id == X86_INS_MOVSXD && x->op_count == 2 && x->operands[1].type == X86_OP_MEM &&
	    x->operands[1].mem.index != X86_REG_INVALID && x->operands[1].mem.scale == 4)
		*pic_load = 1;
	if (insn->id != X86_INS_JMP || x->op_count != 1 || x->operands[0].type == X86_OP_IMM)
		return 0;
	if (x->prefix[1] == X86_PREFIX_DS && insn->bytes[0] == 0x3e)
		return 1; /* notrack */
	if (x->operands[0].type == X86_OP_MEM)
		return x->operands[0].mem.index != X86_REG_INVALID;
	return *pic_load;
}

/* ------------------------------------------------------- the checks */

/* the decoder, and why emptied (or saying there is none) */
static int check_start(char *why, size_t whylen)
{
	int r = decoder();

	if (why && whylen)
		snprintf(why, whylen, "%s", r ? "no instruction decoder (capstone)" : "");
	return r;
}

/* The instructions a jump written at fn (code: size bytes up to the end
 * of its function, room up to the next symbol) displaces: 0 with *lp
 * their bytes, or -errno with why (see trail_arch_reloc_check) */
static int displaced(const uint8_t *code, size_t size, size_t room, uintptr_t fn, unsigned *lp,
		     char *why, size_t whylen)
{
	size_t off = 0;
	unsigned l = 0, n = 0;

	while (l < TRAIL_ARCH_SITE_SIZE) {
		if (off >= size || decode(code + off, size - off, fn + off)) {
			if (why && whylen)
				snprintf(why, whylen, "+0x%zx: %s", off,
					 off >= size ? "function shorter than a jump (5 bytes)"
						     : "not an instruction Capstone decodes");
			return off >= size ? -ENOSPC : -EINVAL;
		}
		if (++n > TRAIL_ARCH_RELOC_INSNS) {
			why_at(why, whylen, fn, fn + off, "too many instructions to displace");
			return -E2BIG;
		}
		l += insn->size;
		if (group(CS_GRP_RET) || group(CS_GRP_IRET) || insn->id == X86_INS_HLT ||
		    insn->id == X86_INS_UD2 || insn->id == X86_INS_INT3 ||
		    (insn->id == X86_INS_JMP && l < TRAIL_ARCH_SITE_SIZE)) {
			/* the end of a function shorter than a jump: the jump
			 * may still cover the padding after it, no one's code */
			if (l < size || room < TRAIL_ARCH_SITE_SIZE) {
				why_at(why, whylen, fn, fn + off,
				       "the function ends within the 5 bytes a jump needs");
				return -ENOSPC;
			}
			if (!(group(CS_GRP_RET) || insn->id == X86_INS_JMP)) {
				why_at(why, whylen, fn, fn + off, "a trap or halt, not code to trace");
				return -ENOTSUP;
			}
			if (insn->id == X86_INS_JMP && !direct_target() && !rip_operand() &&
			    (insn->detail->x86.op_count != 1 ||
			     insn->detail->x86.operands[0].type != X86_OP_REG)) {
				why_at(why, whylen, fn, fn + off, "a jump that cannot run elsewhere");
				return -ENOTSUP;
			}
			break;
		}
		if (group(CS_GRP_CALL)) {
			const cs_x86_op *m = rip_operand();

			if (l < TRAIL_ARCH_SITE_SIZE) {
				why_at(why, whylen, fn, fn + off,
				       "a call inside the 5 bytes (its return would land in the jump)");
				return -ENOTSUP;
			}
			if (!direct_target() && !m) {
				why_at(why, whylen, fn, fn + off,
				       "an indirect call that cannot run elsewhere");
				return -ENOTSUP;
			}
		} else if ((group(CS_GRP_JUMP) || group(CS_GRP_BRANCH_RELATIVE)) &&
			   !direct_target() && !rip_operand()) {
			if (insn->id != X86_INS_JMP) {
				why_at(why, whylen, fn, fn + off, "a branch that cannot run elsewhere");
				return -ENOTSUP;
			}
		} else if (group(CS_GRP_BRANCH_RELATIVE) && !direct_target()) {
			why_at(why, whylen, fn, fn + off, "a relative branch that cannot run elsewhere");
			return -ENOTSUP;
		}
		off += insn->size;
	}
	if (l > TRAIL_ARCH_RELOC_MAXLEN) {
		why_at(why, whylen, fn, fn + off - insn->size, "too many bytes to displace");
		return -E2BIG;
	}
	*lp = l;
	return 0;
}

/* ---------------------------------------------------------- jump tables
 *
 * A switch compiled to a table: gcc's and clang's x86-64 forms are a
 * bound check, `cmp $N, REG; ja default` (or jae with N entries), then
 * either the PIC form, `lea TABLE(%rip), B; movslq (B,I,4), R; add B, R;
 * jmp *R` (4-byte entries relative to TABLE), or the absolute one, `jmp
 * *TABLE(,I,8)`. Its targets are read from the table (trail_arch_table_reader
 * says how: the process's memory, or the file's sections for the tools),
 * when the bound check is among the few instructions before the jump;
 * otherwise the table is unknown, and so is where it may land.
 */
static int (*tbl_read)(void *ctx, uintptr_t addr, void *buf, size_t n);
static void *tbl_ctx;

void trail_arch_table_reader(int (*read)(void *ctx, uintptr_t addr, void *buf, size_t n),
			     void *ctx)
{
	tbl_read = read;
	tbl_ctx = ctx;
}

#define TABLE_MAX 4096u /* entries read at most */
#define TABLE_NEAR (64u << 20) /* a table's targets, without a bound check:
				* within this of the jump */

struct tables {
	uint64_t cmp;      /* the last `cmp $imm, reg`: its immediate */
	int cmp_age;       /* instructions since (0: the one before) */
	uint64_t limit;    /* entries, from the bound check */
	int limit_age;     /* instructions since it (-1: none) */
	x86_reg lea_reg;   /* the last `lea X(%rip), reg` */
	uintptr_t lea;
	x86_reg pic_base;  /* a 4-byte indexed load from lea_reg's table */
};

/* Follow the instruction in t; for a table jump, each of its targets to
 * fn (1 each, 0 when the table could not be read: -1 returned) */
static int table_step(struct tables *t, uintptr_t *targets, unsigned *n)
{
	const cs_x86 *x = &insn->detail->x86;
	uintptr_t base = 0;
	unsigned esz = 0;
	int bounded;

	t->cmp_age++;
	if (t->limit_age >= 0)
		t->limit_age++;
	if (insn->id == X86_INS_CMP && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_IMM && x->operands[1].imm >= 0) {
		t->cmp = (uint64_t)x->operands[1].imm;
		t->cmp_age = 0;
	} else if ((insn->id == X86_INS_JA || insn->id == X86_INS_JAE) && t->cmp_age == 1) {
		t->limit = t->cmp + (insn->id == X86_INS_JA);
		t->limit_age = 0;
	} else if (insn->id == X86_INS_LEA && x->op_count == 2 &&
		   x->operands[0].type == X86_OP_REG && x->operands[1].type == X86_OP_MEM &&
		   x->operands[1].mem.base == X86_REG_RIP) {
		t->lea_reg = x->operands[0].reg;
		t->lea = (uintptr_t)(insn->address + insn->size + (uint64_t)x->operands[1].mem.disp);
	} else if (insn->id == X86_INS_MOVSXD && x->op_count == 2 &&
		   x->operands[1].type == X86_OP_MEM && x->operands[1].mem.scale == 4 &&
		   x->operands[1].mem.index != X86_REG_INVALID && t->lea_reg != X86_REG_INVALID &&
		   x->operands[1].mem.base == t->lea_reg && !x->operands[1].mem.disp) {
		t->pic_base = t->lea_reg;
	}
	if (insn->id != X86_INS_JMP || x->op_count != 1 || x->operands[0].type == X86_OP_IMM)
		return 0;
	if (x->operands[0].type == X86_OP_MEM && x->operands[0].mem.base == X86_REG_INVALID &&
	    x->operands[0].mem.index != X86_REG_INVALID && x->operands[0].mem.scale == 8) {
		base = (uintptr_t)x->operands[0].mem.disp; /* absolute entries */
		esz = 8;
	} else if (x->operands[0].type == X86_OP_REG && t->pic_base != X86_REG_INVALID) {
		base = t->lea;
		esz = 4;
	}
	t->pic_base = X86_REG_INVALID;
	if (!esz || !tbl_read)
		return -1;
	bounded = t->limit_age >= 0 && t->limit_age <= 8 && t->limit && t->limit <= TABLE_MAX;
	*n = 0;
	for (uint64_t i = 0; i < (bounded ? t->limit : TABLE_MAX); i++) {
		int32_t rel;
		uint64_t abs;
		uintptr_t to;

		if (esz == 4 ? tbl_read(tbl_ctx, base + 4 * i, &rel, 4)
			     : tbl_read(tbl_ctx, base + 8 * i, &abs, 8)) {
			if (bounded || !*n)
				return -1;
			break;
		}
		to = esz == 4 ? base + (uintptr_t)(intptr_t)rel : (uintptr_t)abs;
		/* no bound check before the jump (gcc shares it between
		 * blocks): the table read while its entries are code near the
		 * jump. What follows a table is not (strings, numbers, another
		 * table's entries: those read too, which only refuses more). A
		 * real table's entries all are: none is left out */
		if (!bounded && ((insn->address > TABLE_NEAR && to < insn->address - TABLE_NEAR) ||
				 to > insn->address + TABLE_NEAR)) {
			if (!*n)
				return -1;
			break;
		}
		targets[(*n)++] = to;
	}
	t->limit_age = -1;
	return 0;
}

/* Does a branch of the function at fn (code: its size bytes) land in
 * [lo, hi), or a jump table, whose targets cannot be read, make it
 * unknown? 0, or -EXDEV with why (the span of bytes, and what they are) */
static int branch_into(const uint8_t *code, size_t size, uintptr_t fn, uintptr_t lo,
		       uintptr_t hi, const char *what, unsigned span, char *why, size_t whylen,
		       int *to_entry)
{
	static uintptr_t targets[TABLE_MAX];
	struct tables tb = {.limit_age = -1, .lea_reg = X86_REG_INVALID,
			    .pic_base = X86_REG_INVALID, .cmp_age = 99};
	int pic_load = 0;

	for (size_t off = 0; off < size;) {
		uintptr_t t;
		unsigned nt = 0;
		int tr;

		if (decode(code + off, size - off, fn + off))
			break; /* padding or data after the code: not ours */
		t = direct_target();
		if (t >= lo && t < hi && !group(CS_GRP_CALL)) {
			why_at(why, whylen, fn, fn + off, what, span);
			return -EXDEV;
		}
		if (to_entry && t == fn && !group(CS_GRP_CALL))
			*to_entry = 1;
		tr = table_step(&tb, targets, &nt);
		if (table_jump(&pic_load)) {
			if (tr) {
				why_at(why, whylen, fn, fn + off,
				       "a jump table, whose targets cannot be checked");
				return -EXDEV;
			}
			for (unsigned i = 0; i < nt; i++)
				if (targets[i] >= lo && targets[i] < hi) {
					why_at(why, whylen, fn, fn + off,
					       "a jump table entry into them (+0x%lx)",
					       (unsigned long)(targets[i] - fn));
					return -EXDEV;
				}
			pic_load = 0;
		}
		off += insn->size;
	}
	return 0;
}

int trail_arch_reloc_check(const uint8_t *code, size_t size, size_t room, uintptr_t fn,
			   unsigned *len, char *why, size_t whylen)
{
	unsigned l = 0, span;
	int r = check_start(why, whylen);

	if (r || (r = displaced(code, size, room, fn, &l, why, whylen)))
		return r;
	/* the whole function: nothing may branch into what the jump covers,
	 * past its first byte. A branch to the entry itself (a loop whose
	 * head is the entry, a self tail call) meets the jump and enters the
	 * hook again, as a breakpoint there would: a call each time, as with
	 * a patchable entry */
	span = l < TRAIL_ARCH_SITE_SIZE ? TRAIL_ARCH_SITE_SIZE : l;
	if ((r = branch_into(code, size, fn, fn + 1, fn + span,
			     "a branch into the first %u bytes, which a jump would replace", span,
			     why, whylen, NULL)))
		return r;
	*len = l;
	return 0;
}

int trail_arch_jump_check(const uint8_t *code, size_t size, uintptr_t fn, uintptr_t at,
			  unsigned *len, char *why, size_t whylen)
{
	size_t k = at - fn;
	unsigned l = 0, span;
	int r = check_start(why, whylen);

	if (r)
		return r;
	if (at < fn || k >= size)
		return -EINVAL;
	if ((r = displaced(code + k, size - k, size - k, at, &l, why, whylen)))
		return r;
	/* the whole function: no branch may land inside the jump or after
	 * it among the displaced bytes; one to the instruction itself meets
	 * the jump, and the probe, as it should */
	span = l < TRAIL_ARCH_SITE_SIZE ? TRAIL_ARCH_SITE_SIZE : l;
	if ((r = branch_into(code, size, fn, at + 1, at + span,
			     "a branch into the %u bytes a jump would replace", span, why, whylen,
			     NULL)))
		return r;
	*len = l;
	return 0;
}

int trail_arch_returns(const uint8_t *code, size_t size, uintptr_t fn, uintptr_t *rets,
		       unsigned max, unsigned *n, char *why, size_t whylen)
{
	int r = check_start(why, whylen), pic_load = 0;

	*n = 0;
	if (r)
		return r;
	for (size_t off = 0; off < size;) {
		uintptr_t t;

		if (decode(code + off, size - off, fn + off))
			break; /* padding or data after the code */
		t = direct_target();
		/* (a table jump seen: a later register jump is the table's) */
		if (insn->id != X86_INS_JMP)
			table_jump(&pic_load);
		if (group(CS_GRP_RET)) {
			if (*n == max) {
				why_at(why, whylen, fn, fn + off, "more than %u returns", max);
				return -E2BIG;
			}
			rets[(*n)++] = fn + off;
		} else if (insn->id == X86_INS_JMP && t && (t < fn || t >= fn + size)) {
			why_at(why, whylen, fn, fn + off,
			       "a tail call: the function returns from another one");
			return -EXDEV;
		} else if (insn->id == X86_INS_JMP && !t && !table_jump(&pic_load)) {
			why_at(why, whylen, fn, fn + off,
			       "an indirect jump, maybe a tail call: the function may return from another one");
			return -EXDEV;
		}
		off += insn->size;
	}
	if (!*n) {
		if (why && whylen)
			snprintf(why, whylen, "no ret instruction (the function never returns here)");
		return -ENOENT;
	}
	return 0;
}

int trail_arch_uses_vector(const uint8_t *code, size_t size, uintptr_t fn)
{
	if (decoder())
		return 1;
	for (size_t off = 0; off < size;) {
		size_t k = 0;

		if (decode(code + off, size - off, fn + off))
			break; /* padding or data after the code */
		/* past the legacy prefixes: a VEX (c4, c5) or EVEX (62) one,
		 * which only instructions on ymm, zmm or k registers (or the
		 * VEX forms of SSE's, built with -mavx) have in 64-bit code */
		while (k < insn->size && (insn->bytes[k] == 0x66 || insn->bytes[k] == 0xf2 ||
					  insn->bytes[k] == 0xf3 || insn->bytes[k] == 0xf0 ||
					  insn->bytes[k] == 0x2e || insn->bytes[k] == 0x3e ||
					  insn->bytes[k] == 0x26 || insn->bytes[k] == 0x36 ||
					  insn->bytes[k] == 0x64 || insn->bytes[k] == 0x65 ||
					  insn->bytes[k] == 0x67))
			k++;
		if (k < insn->size && (insn->bytes[k] == 0xc4 || insn->bytes[k] == 0xc5 ||
				       insn->bytes[k] == 0x62))
			return 1;
		off += insn->size;
	}
	return 0;
}

/* The first instruction alone, for an entry reached through a breakpoint
 * (see arch.h): anything that can run from the copy. */
int trail_arch_trap_check(const uint8_t *code, size_t size, uintptr_t fn, unsigned *len,
			  char *why, size_t whylen)
{
	int r = check_start(why, whylen);

	if (r)
		return r;
	if (!size || decode(code, size, fn)) {
		if (why && whylen)
			snprintf(why, whylen, "+0x0: not an instruction Capstone decodes");
		return -EINVAL;
	}
	if (insn->id == X86_INS_INT3 || insn->id == X86_INS_UD2 || insn->id == X86_INS_HLT ||
	    insn->id == X86_INS_INT || insn->id == X86_INS_INT1) {
		why_at(why, whylen, fn, fn, "a trap or halt, not code to trace");
		return -ENOTSUP;
	}
	if (group(CS_GRP_CALL) && !direct_target() && !rip_operand()) {
		why_at(why, whylen, fn, fn, "an indirect call that cannot run elsewhere");
		return -ENOTSUP;
	}
	if (group(CS_GRP_BRANCH_RELATIVE) && !direct_target()) {
		why_at(why, whylen, fn, fn, "a relative branch that cannot run elsewhere");
		return -ENOTSUP;
	}
	*len = insn->size;
	return 0;
}

/* ------------------------------------------------------------- the copy */

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

static int rel32(uintptr_t from_end, uintptr_t target, int32_t *out)
{
	int64_t d = (int64_t)(target - from_end);

	if (d != (int32_t)d)
		return -ERANGE;
	*out = (int32_t)d;
	return 0;
}

/* Where the 32-bit displacement of the RIP-relative operand is in the
 * instruction's bytes: the candidates (followed by no immediate, or one of
 * 1, 2 or 4 bytes) are tried by changing them and decoding again, so the
 * field found is the one Capstone reads as the displacement. */
static int disp_offset(const uint8_t *b, unsigned size, uintptr_t at, int64_t disp)
{
	static const unsigned imm[4] = {0, 1, 2, 4};
	uint8_t t[16];

	for (int i = 0; i < 4; i++) {
		int k = (int)size - 4 - (int)imm[i];
		int32_t d, nd = (int32_t)disp + 0x1000;

		if (k < 1)
			continue;
		memcpy(&d, b + k, 4);
		if (d != (int32_t)disp)
			continue;
		memcpy(t, b, size);
		memcpy(t + k, &nd, 4);
		if (!decode(t, size, at) && insn->size == size && insn->detail->x86.disp == nd) {
			decode(b, size, at); /* back to the instruction */
			return k;
		}
		decode(b, size, at);
	}
	return -1;
}

/* the rel32 at o + field, of an instruction ending at o + end (the copy
 * runs at at), to target: 0 or -ERANGE */
static int fix32(uint8_t *o, unsigned field, unsigned end, uintptr_t at, uintptr_t target)
{
	int32_t d;

	if (rel32(at + end, target, &d))
		return -ERANGE;
	put32(o + field, d);
	return 0;
}

/* The RIP-relative instruction b (sz bytes, at pc; m its operand) copied
 * to o + c, reaching what it did: the offset of its displacement in it,
 * or a negative errno */
static int copy_rip(uint8_t *o, unsigned c, const uint8_t *b, unsigned sz, uintptr_t pc,
		    const cs_x86_op *m, uintptr_t at)
{
	int k = disp_offset(b, sz, pc, m->mem.disp);

	if (k < 0)
		return -EINVAL;
	memcpy(o + c, b, sz);
	return fix32(o, c + (unsigned)k, c + sz, at, pc + sz + (intptr_t)m->mem.disp) ?: k;
}

int trail_arch_reloc_make(const uint8_t *orig, unsigned len, uintptr_t fn, uintptr_t at,
			  struct trail_arch_reloc *r)
{
	unsigned off = 0, c = 0, n = 0;
	uint8_t *o = r->code;
	uintptr_t ret_slot = 0; /* the offset of a call's return-address constant */
	int err = decoder();

	if (err)
		return err;
	if (len > sizeof(r->orig))
		return -E2BIG;
	memset(r, 0, sizeof(*r));
	r->at = at;
	r->len = (uint8_t)len;
	memcpy(r->orig, orig, len);
#define ROOM(k)                                                                     \
	do {                                                                        \
		if (c + (k) + 5 + 15 > TRAIL_ARCH_RELOC_CODE)                      \
			return -E2BIG;                                              \
	} while (0)
	while (off < len) {
		const uint8_t *b = orig + off;
		uintptr_t pc = fn + off, t;
		const cs_x86_op *m;
		unsigned sz;

		if (decode(b, len - off, pc) || n == TRAIL_ARCH_RELOC_INSNS)
			return -EINVAL;
		sz = insn->size;
		r->orig_off[n] = (uint8_t)off;
		r->copy_off[n] = (uint8_t)c;
		n++;
		t = direct_target();
		m = rip_operand();
		if (group(CS_GRP_CALL)) {
			/* push the original return address (a constant after the
			 * code), then jump: the stack holds what it would have */
			ROOM(6 + 6);
			o[c] = 0xff; /* push ret(%rip) */
			o[c + 1] = 0x35;
			ret_slot = c + 2;
			c += 6;
			if (t) {
				o[c] = 0xe9;
				if (fix32(o, c + 1, c + 5, at, t))
					return -ERANGE;
				c += 5;
			} else if (m) {
				int k = copy_rip(o, c, b, sz, pc, m, at);

				if (k < 0)
					return k;
				/* the same instruction with /4 (jmp) for /2 (call) */
				o[c + k - 1] = (uint8_t)((b[k - 1] & ~0x38) | 0x20);
				c += sz;
			} else {
				return -ENOTSUP;
			}
		} else if (t) {
			unsigned op = insn->id;

			if (op == X86_INS_JMP) {
				ROOM(5);
				o[c] = 0xe9;
				if (fix32(o, c + 1, c + 5, at, t))
					return -ERANGE;
				c += 5;
			} else if (op == X86_INS_JRCXZ || op == X86_INS_JECXZ || op == X86_INS_LOOP ||
				   op == X86_INS_LOOPE || op == X86_INS_LOOPNE) {
				/* OP +2; jmp +5; jmp target */
				ROOM(sz + 2 + 5);
				memcpy(o + c, b, sz);
				o[c + sz - 1] = 2;
				o[c + sz] = 0xeb;
				o[c + sz + 1] = 5;
				o[c + sz + 2] = 0xe9;
				if (fix32(o, c + sz + 3, c + sz + 7, at, t))
					return -ERANGE;
				c += sz + 7;
			} else {
				/* jcc: the condition from its opcode, long form */
				uint8_t cc;

				if (sz >= 2 && (b[sz - 2] & 0xf0) == 0x70)
					cc = b[sz - 2] & 0x0f;
				else if (sz >= 6 && b[sz - 6] == 0x0f && (b[sz - 5] & 0xf0) == 0x80)
					cc = b[sz - 5] & 0x0f;
				else
					return -ENOTSUP;
				ROOM(6);
				o[c] = 0x0f;
				o[c + 1] = (uint8_t)(0x80 | cc);
				if (fix32(o, c + 2, c + 6, at, t))
					return -ERANGE;
				c += 6;
			}
		} else if (m) {
			int k;

			ROOM(sz);
			if ((k = copy_rip(o, c, b, sz, pc, m, at)) < 0)
				return k;
			c += sz;
		} else {
			ROOM(sz);
			memcpy(o + c, b, sz);
			c += sz;
		}
		off += sz;
	}
#undef ROOM
	r->ninsn = (uint8_t)n;
	/* back to the rest of the function */
	o[c] = 0xe9;
	if (fix32(o, c + 1, c + 5, at, fn + len))
		return -ERANGE;
	c += 5;
	if (ret_slot) {
		uint64_t ret = fn + len; /* a call is the last displaced instruction */

		c = (c + 7) & ~7u;
		memcpy(o + c, &ret, 8);
		if (fix32(o, ret_slot, ret_slot + 4, at, at + c))
			return -ERANGE;
		c += 8;
	}
	r->copy_len = (uint8_t)c;
	return 0;
}

uintptr_t trail_arch_reloc_map(const struct trail_arch_reloc *r, uintptr_t fn, uintptr_t ip)
{
	for (unsigned i = 0; i < r->ninsn; i++)
		if (fn + r->orig_off[i] == ip)
			return r->at + r->copy_off[i];
	return 0;
}

/* ---------------------------------------------------- the whole function
 *
 * A function no jump can enter at its first bytes (a loop whose head is
 * 2 bytes in) runs whole from a copy, the Dyninst way: the copy has the
 * same layout, so its branches inside the function, and RIP-relative
 * operands reaching into it, keep their bytes and now reach the copy's
 * own; those going out are re-targeted. Only what can be proved to mean
 * the same from elsewhere moves (trail_arch_whole_check in arch.h).
 */

/* the legacy and REX prefixes of insn: their count */
static unsigned prefix_len(void)
{
	unsigned k = 0;

	while (k < insn->size &&
	       (insn->bytes[k] == 0x66 || insn->bytes[k] == 0xf2 || insn->bytes[k] == 0xf3 ||
		insn->bytes[k] == 0xf0 || insn->bytes[k] == 0x2e || insn->bytes[k] == 0x3e ||
		insn->bytes[k] == 0x26 || insn->bytes[k] == 0x36 || insn->bytes[k] == 0x64 ||
		insn->bytes[k] == 0x65 || insn->bytes[k] == 0x67 ||
		(insn->bytes[k] & 0xf0) == 0x40))
		k++;
	return k;
}

/* a direct branch's displacement: 4 (rel32, its last 4 bytes), 1 (rel8),
 * or 0 (another form: an operand-size prefix, which shortens it) */
static unsigned rel_width(void)
{
	const uint8_t *b = insn->bytes;
	unsigned k = prefix_len();

	for (unsigned i = 0; i < k; i++)
		if (b[i] == 0x66)
			return 0;
	if (k >= insn->size)
		return 0;
	if (b[k] == 0xe9 || b[k] == 0xe8 ||
	    (b[k] == 0x0f && k + 1 < insn->size && (b[k + 1] & 0xf0) == 0x80))
		return 4;
	if (b[k] == 0xeb || (b[k] & 0xf0) == 0x70 || (b[k] >= 0xe0 && b[k] <= 0xe3))
		return 1;
	return 0;
}

int trail_arch_whole_check(const uint8_t *code, size_t size, uintptr_t fn, char *why,
			   size_t whylen)
{
	int r = check_start(why, whylen);

	if (r)
		return r;
	if (size < TRAIL_ARCH_SITE_SIZE || size > TRAIL_ARCH_WHOLE_MAX) {
		if (why && whylen)
			snprintf(why, whylen, "%zu bytes: %s", size,
				 size < TRAIL_ARCH_SITE_SIZE ? "shorter than a jump (5 bytes)"
							     : "too long to copy whole");
		return size < TRAIL_ARCH_SITE_SIZE ? -ENOSPC : -E2BIG;
	}
	for (size_t off = 0; off < size;) {
		const cs_x86_op *m;
		uintptr_t t;

		if (decode(code + off, size - off, fn + off)) {
			if (why && whylen)
				snprintf(why, whylen, "+0x%zx: not an instruction Capstone decodes", off);
			return -EINVAL;
		}
		t = direct_target();
		m = rip_operand();
		if (group(CS_GRP_CALL)) {
			why_at(why, whylen, fn, fn + off,
			       "a call (its return address would be in the copy, where no unwinder looks)");
			return -ENOTSUP;
		}
		if (insn->id == X86_INS_XBEGIN) {
			why_at(why, whylen, fn, fn + off, "a transaction's relative fallback");
			return -ENOTSUP;
		}
		if (insn->id == X86_INS_JMP && !t && (!m || m->mem.index != X86_REG_INVALID)) {
			why_at(why, whylen, fn, fn + off,
			       "an indirect jump (a table's or a computed target is the original's)");
			return -ENOTSUP;
		}
		if ((group(CS_GRP_JUMP) || group(CS_GRP_BRANCH_RELATIVE)) && !t &&
		    insn->id != X86_INS_JMP) {
			why_at(why, whylen, fn, fn + off, "a branch that cannot run elsewhere");
			return -ENOTSUP;
		}
		if (t && (t < fn || t >= fn + size) && rel_width() != 4) {
			why_at(why, whylen, fn, fn + off, "a short branch out of the function");
			return -ENOTSUP;
		}
		if (m && disp_offset(code + off, insn->size, fn + off, m->mem.disp) < 0) {
			why_at(why, whylen, fn, fn + off, "a RIP-relative operand not found in its bytes");
			return -EINVAL;
		}
		off += insn->size;
	}
	return 0;
}

int trail_arch_whole_make(const uint8_t *code, size_t size, uintptr_t fn, uintptr_t at,
			  uint8_t *out)
{
	int err = decoder();

	if (err)
		return err;
	if (size > TRAIL_ARCH_WHOLE_MAX)
		return -E2BIG;
	memmove(out, code, size);
	for (size_t off = 0; off < size;) {
		const uint8_t *b = code + off;
		uintptr_t pc = fn + off, t, to;
		const cs_x86_op *m;
		unsigned sz;
		int k;

		if (decode(b, size - off, pc))
			return -EINVAL;
		sz = insn->size;
		t = direct_target();
		m = rip_operand();
		if (group(CS_GRP_CALL))
			return -ENOTSUP;
		if (t && (t < fn || t >= fn + size)) {
			if (rel_width() != 4)
				return -ENOTSUP;
			if (fix32(out, (unsigned)off + sz - 4, (unsigned)off + sz, at, t))
				return -ERANGE;
		} else if (m) {
			to = pc + sz + (uintptr_t)(intptr_t)m->mem.disp;
			if (to < fn || to >= fn + size) {
				if ((k = disp_offset(b, sz, pc, m->mem.disp)) < 0)
					return -EINVAL;
				if (fix32(out, (unsigned)off + (unsigned)k, (unsigned)off + sz, at, to))
					return -ERANGE;
			}
		}
		off += sz;
	}
	return 0;
}

int trail_arch_entry_check(const uint8_t *code, size_t size, size_t room, uintptr_t fn,
			   unsigned *len, char *why, size_t whylen)
{
	unsigned l = 0, span;
	int r = check_start(why, whylen), to_entry = 0;
	char tw[160];

	if (r)
		return r;
	if (!(r = displaced(code, size, room, fn, &l, why, whylen))) {
		span = l < TRAIL_ARCH_SITE_SIZE ? TRAIL_ARCH_SITE_SIZE : l;
		r = branch_into(code, size, fn, fn + 1, fn + span,
				"a branch into the first %u bytes, which a jump would replace", span,
				why, whylen, &to_entry);
		if (!r && !to_entry) {
			*len = l;
			return TRAIL_ARCH_ENTER_JUMP;
		}
		if (!r && trail_arch_whole_check(code, size, fn, NULL, 0)) {
			/* a loop whose head is the entry, that cannot move: the
			 * jump there is met each turn, a call each time (as a
			 * patchable entry counts it) */
			*len = l;
			return TRAIL_ARCH_ENTER_JUMP;
		}
		if (!r) {
			*len = TRAIL_ARCH_SITE_SIZE;
			return TRAIL_ARCH_ENTER_WHOLE;
		}
	}
	/* why has the jump's reason: kept, whatever comes next */
	if (!trail_arch_whole_check(code, size, fn, NULL, 0)) {
		*len = TRAIL_ARCH_SITE_SIZE;
		return TRAIL_ARCH_ENTER_WHOLE;
	}
	if (!(r = trail_arch_trap_check(code, size, fn, &l, tw, sizeof(tw)))) {
		*len = l;
		return TRAIL_ARCH_ENTER_TRAP;
	}
	if (why && whylen)
		snprintf(why, whylen, "%s", tw);
	return r;
}
