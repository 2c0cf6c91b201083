/* SPDX-License-Identifier: MIT */
/*
 * mmio.c - the instructions of MMIO tracing (src/lib/fmmio.c): a thread's
 * access to a protected region faults, and its instruction is decoded and
 * run here against the region's second mapping, its registers, flags and
 * %rip changed in the signal's context as the CPU would have.
 *
 * An exact decoder for what drivers' register accesses compile to, and
 * nothing else: the MOV family (88 89 8A 8B, C6 /0, C7 /0, A0-A3 moffs,
 * 0F B6/B7/BE/BF movzx/movsx, 63 movsxd) and the arithmetic that
 * `volatile` read-modify-write code uses (ADD OR AND SUB XOR CMP in their
 * 00-3B forms, 80/81/83 /0,1,4,5,6,7, TEST 84/85, F6/F7 /0), with the
 * legacy prefixes 66 67 F2 F3 and the segment ones, REX, ModRM, SIB,
 * disp8/disp32 and RIP-relative operands. Everything else (LOCK, string
 * instructions, vector loads and stores, XCHG, ADC/SBB, a mandatory
 * prefix we do not know the meaning of) is -ENOTSUP: fmmio.c records the
 * bytes and stops tracing the region. Never a guess: the decoded operand
 * must contain the address the kernel reported (si_addr), or fmmio.c does
 * not emulate it.
 *
 * Async-signal-safe, allocates nothing; the unit tests run it on byte
 * arrays and ucontexts of their own (tests/unit/test-mmio.c).
 */
#include <asm/prctl.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "../arch.h"

/* op->cls */
enum { C_STORE_R, C_STORE_I, C_LOAD, C_LOADX, C_ALU_MR, C_ALU_RM, C_ALU_MI, C_TEST_R, C_TEST_I };
/* op->alu: the /digit of 80/81/83 (ADD 0, OR 1, AND 4, SUB 5, XOR 6, CMP 7) */
enum { A_ADD = 0, A_OR = 1, A_AND = 4, A_SUB = 5, A_XOR = 6, A_CMP = 7, A_TEST = 8 };

/* the ModRM/SIB register number (REX extended) to the context's slot */
static const int greg_of[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
				REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
				REG_R12, REG_R13, REG_R14, REG_R15};

#define F_CF 0x001u
#define F_PF 0x004u
#define F_AF 0x010u
#define F_ZF 0x040u
#define F_SF 0x080u
#define F_OF 0x800u
#define F_ARITH (F_CF | F_PF | F_AF | F_ZF | F_SF | F_OF)

static uint64_t mask_of(unsigned w)
{
	return w == 8 ? ~0ull : (1ull << (w * 8)) - 1;
}

static uint64_t sext(uint64_t v, unsigned w)
{
	unsigned sh = 64 - w * 8;

	return (uint64_t)((int64_t)(v << sh) >> sh);
}

/* the len-byte little-endian value at code[*i] (of n bytes) into *v, *i
 * past it: 0, or -EINVAL when the instruction is cut there */
static int le_at(const uint8_t *code, size_t n, unsigned *i, unsigned len, uint64_t *v)
{
	if (*i + len > n)
		return -EINVAL;
	*v = 0;
	for (unsigned k = 0; k < len; k++)
		*v |= (uint64_t)code[*i + k] << (8 * k);
	*i += len;
	return 0;
}

/* a register operand of width w: its value (AH..BH without REX: bits
 * 8-15 of the first four) */
static uint64_t reg_get(const greg_t *g, unsigned r, unsigned w, int rex)
{
	if (w == 1 && !rex && r >= 4 && r < 8)
		return ((uint64_t)g[greg_of[r - 4]] >> 8) & 0xff;
	return (uint64_t)g[greg_of[r]] & mask_of(w);
}

/* ... written as the CPU does: a 32-bit result clears the upper half,
 * an 8- or 16-bit one leaves the rest alone */
static void reg_set(greg_t *g, unsigned r, unsigned w, int rex, uint64_t v)
{
	uint64_t old;

	if (w == 1 && !rex && r >= 4 && r < 8) {
		old = (uint64_t)g[greg_of[r - 4]];
		g[greg_of[r - 4]] = (greg_t)((old & ~0xff00ull) | ((v & 0xff) << 8));
		return;
	}
	old = (uint64_t)g[greg_of[r]];
	if (w == 4)
		g[greg_of[r]] = (greg_t)(v & 0xffffffffull);
	else if (w == 8)
		g[greg_of[r]] = (greg_t)v;
	else
		g[greg_of[r]] = (greg_t)((old & ~mask_of(w)) | (v & mask_of(w)));
}

/*
 * Grammar of what is accepted, byte by byte:
 *   { 66 | 67 | F2 | F3 | 26 2E 36 3E 64 65 }* [REX] OPCODE [ModRM [SIB] [disp]] [imm]
 * at most 15 bytes; a REX not right before the opcode is ignored, as the
 * CPU ignores it.
 */
int trail_arch_mmio_decode(const uint8_t *code, size_t n, const void *ucv,
			   struct trail_arch_mmio_op *op)
{
	const greg_t *g = ((const ucontext_t *)ucv)->uc_mcontext.gregs;
	unsigned i = 0, rex = 0, osz = 0, asz = 0, rep = 0, seg = 0, w, modrm, mod, reg, rm;
	unsigned b, twobyte = 0, imm_len = 0;
	uint64_t ea = 0;
	int rip_rel = 0;

	memset(op, 0, sizeof(*op));
	if (n > 15)
		n = 15;
	for (;; i++) {
		if (i >= n)
			return -EINVAL;
		b = code[i];
		if (b == 0x66)
			osz = 1;
		else if (b == 0x67)
			asz = 1;
		else if (b == 0xf2 || b == 0xf3)
			rep = b;
		else if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e)
			; /* (no effect in 64-bit mode) */
		else if (b == 0x64 || b == 0x65)
			seg = b;
		else if (b == 0xf0)
			return -ENOTSUP; /* LOCK: an atomic access, not emulated */
		else if ((b & 0xf0) == 0x40) {
			rex = b; /* kept only if the opcode follows */
			if (i + 1 < n && (code[i + 1] & 0xf0) == 0x40)
				rex = 0; /* (a second REX: the last counts) */
			continue;
		} else
			break;
		rex = 0; /* a legacy prefix after a REX: the REX is ignored */
	}
	b = code[i++];
	if (b == 0x0f) {
		if (i >= n)
			return -EINVAL;
		twobyte = 1;
		b = code[i++];
	}
	w = (rex & 8) ? 8 : osz ? 2 : 4;
	op->rex = (uint8_t)(rex != 0);
	if (twobyte) {
		if (rep)
			return -ENOTSUP; /* F2/F3 0F xx: another instruction */
		switch (b) {
		case 0xb6: case 0xb7: case 0xbe: case 0xbf:
			op->cls = C_LOADX;
			op->width = b & 1 ? 2 : 1;
			op->dwidth = (uint8_t)w;
			op->sx = b >= 0xbe;
			break;
		default:
			return -ENOTSUP;
		}
	} else if (b >= 0xa0 && b <= 0xa3) {
		/* MOV AL/eAX <-> moffs: an absolute address, 8 bytes (4 with 67) */
		uint64_t a;

		if (le_at(code, n, &i, asz ? 4 : 8, &a))
			return -EINVAL;
		op->width = (uint8_t)(b & 1 ? w : 1);
		op->cls = b < 0xa2 ? C_LOAD : C_STORE_R;
		op->reg = 0;
		op->dwidth = op->width;
		ea = a;
		goto addr;
	} else {
		if (rep && !(b == 0x88 || b == 0x89 || b == 0x8a || b == 0x8b || b == 0xc6 ||
			     b == 0xc7))
			return -ENOTSUP; /* (on a MOV: the HLE hints, which change nothing) */
		switch (b) {
		case 0x88: case 0x89:
			op->cls = C_STORE_R;
			op->width = (uint8_t)(b & 1 ? w : 1);
			break;
		case 0x8a: case 0x8b:
			op->cls = C_LOAD;
			op->width = (uint8_t)(b & 1 ? w : 1);
			break;
		case 0x63:
			op->cls = C_LOADX;
			op->width = (uint8_t)((rex & 8) ? 4 : w);
			op->dwidth = (uint8_t)w;
			op->sx = (rex & 8) != 0; /* (without REX.W: a plain move) */
			break;
		case 0xc6: case 0xc7:
			op->cls = C_STORE_I;
			op->width = (uint8_t)(b & 1 ? w : 1);
			imm_len = op->width == 1 ? 1 : op->width == 2 ? 2 : 4;
			break;
		case 0x84: case 0x85:
			op->cls = C_TEST_R;
			op->alu = A_TEST;
			op->width = (uint8_t)(b & 1 ? w : 1);
			break;
		case 0xf6: case 0xf7:
			op->cls = C_TEST_I;
			op->alu = A_TEST;
			op->width = (uint8_t)(b & 1 ? w : 1);
			imm_len = op->width == 1 ? 1 : op->width == 2 ? 2 : 4;
			break;
		case 0x80: case 0x81: case 0x83:
			op->cls = C_ALU_MI;
			op->width = (uint8_t)(b == 0x80 ? 1 : w);
			imm_len = b == 0x81 ? (op->width == 2 ? 2 : 4) : 1;
			break;
		default:
			/* ADD OR AND SUB XOR CMP: 00-03, 08-0B, 20-23, 28-2B, 30-33, 38-3B */
			if (b < 0x40 && (b & 7) < 4 && ((b >> 3) == 0 || (b >> 3) == 1 ||
							(b >> 3) >= 4)) {
				op->alu = (uint8_t)(b >> 3);
				op->cls = b & 2 ? C_ALU_RM : C_ALU_MR;
				op->width = (uint8_t)(b & 1 ? w : 1);
				break;
			}
			return -ENOTSUP;
		}
	}
	if (i >= n)
		return -EINVAL;
	modrm = code[i++];
	mod = modrm >> 6;
	reg = ((modrm >> 3) & 7) | ((rex & 4) ? 8 : 0);
	rm = (modrm & 7) | ((rex & 1) ? 8 : 0);
	if (mod == 3)
		return -ENOTSUP; /* a register operand: not the access that faulted */
	if (op->cls == C_STORE_I || op->cls == C_TEST_I) {
		if ((modrm >> 3) & 7)
			return -ENOTSUP; /* C6/C7 /1-7, F6/F7 /1-7: not MOV, TEST */
	} else if (op->cls == C_ALU_MI) {
		unsigned d = (modrm >> 3) & 7;

		if (d == 2 || d == 3)
			return -ENOTSUP; /* ADC, SBB */
		op->alu = (uint8_t)d;
	} else {
		op->reg = (uint8_t)reg;
	}
	if ((modrm & 7) == 4) { /* SIB */
		unsigned sib, scale, idx, base;

		if (i >= n)
			return -EINVAL;
		sib = code[i++];
		scale = sib >> 6;
		idx = ((sib >> 3) & 7) | ((rex & 2) ? 8 : 0);
		base = (sib & 7) | ((rex & 1) ? 8 : 0);
		if (idx != 4)
			ea += (uint64_t)g[greg_of[idx]] << scale;
		if ((sib & 7) == 5 && mod == 0) {
			uint64_t d;

			if (le_at(code, n, &i, 4, &d))
				return -EINVAL;
			ea += sext(d, 4);
		} else {
			ea += (uint64_t)g[greg_of[base]];
		}
	} else if (mod == 0 && (modrm & 7) == 5) {
		rip_rel = 1; /* disp32 from the next instruction's address */
	} else {
		ea += (uint64_t)g[greg_of[rm]];
	}
	if (mod == 1) {
		if (i >= n)
			return -EINVAL;
		ea += (uint64_t)(int64_t)(int8_t)code[i++];
	} else if (mod == 2 || rip_rel) {
		uint64_t d;

		if (le_at(code, n, &i, 4, &d))
			return -EINVAL;
		ea += sext(d, 4);
	}
	if (imm_len) {
		uint64_t v;

		if (le_at(code, n, &i, imm_len, &v))
			return -EINVAL;
		op->imm = sext(v, imm_len) & mask_of(op->width); /* (imm32 with REX.W: sign-extended) */
	}
	if (rip_rel)
		ea += (uint64_t)g[REG_RIP] + i;
	if (!op->dwidth)
		op->dwidth = op->width;
addr:
	if (asz)
		ea &= 0xffffffffull;
	if (seg) {
		unsigned long base = 0;

		/* the thread's own: a signal handler runs with them unchanged */
		if (syscall(SYS_arch_prctl, seg == 0x64 ? ARCH_GET_FS : ARCH_GET_GS, &base))
			return -ENOTSUP;
		ea += base;
	}
	if (i > 15)
		return -EINVAL;
	op->len = (uint8_t)i;
	op->addr = (uintptr_t)ea;
	op->kind = op->cls == C_STORE_R || op->cls == C_STORE_I ? TRAIL_ARCH_MMIO_STORE
		   : op->cls == C_ALU_MR || op->cls == C_ALU_MI
			   ? (op->alu == A_CMP ? TRAIL_ARCH_MMIO_LOAD : TRAIL_ARCH_MMIO_RMW)
			   : TRAIL_ARCH_MMIO_LOAD;
	return 0;
}

/* One access of the instruction's width, as the program would have made
 * it (a device register read twice, or in halves, is another access):
 * volatile, and of types that may be unaligned, as x86 allows */
typedef uint16_t u16u __attribute__((aligned(1)));
typedef uint32_t u32u __attribute__((aligned(1)));
typedef uint64_t u64u __attribute__((aligned(1)));

static uint64_t mem_read(uintptr_t p, unsigned w)
{
	switch (w) {
	case 1: return *(const volatile uint8_t *)p;
	case 2: return *(const volatile u16u *)p;
	case 4: return *(const volatile u32u *)p;
	default: return *(const volatile u64u *)p;
	}
}

static void mem_write(uintptr_t p, unsigned w, uint64_t v)
{
	switch (w) {
	case 1: *(volatile uint8_t *)p = (uint8_t)v; break;
	case 2: *(volatile u16u *)p = (uint16_t)v; break;
	case 4: *(volatile u32u *)p = (uint32_t)v; break;
	default: *(volatile u64u *)p = v; break;
	}
}

/* a op b at width w: the result (masked) and the arithmetic flags in *fl */
static uint64_t alu(unsigned o, uint64_t a, uint64_t b, unsigned w, unsigned *fl)
{
	uint64_t m = mask_of(w), sign = 1ull << (w * 8 - 1), r;
	unsigned f = 0;

	a &= m;
	b &= m;
	switch (o) {
	case A_ADD:
		r = (a + b) & m;
		f |= r < a ? F_CF : 0;
		f |= (~(a ^ b) & (a ^ r) & sign) ? F_OF : 0;
		f |= (a ^ b ^ r) & 0x10 ? F_AF : 0;
		break;
	case A_SUB:
	case A_CMP:
		r = (a - b) & m;
		f |= a < b ? F_CF : 0;
		f |= ((a ^ b) & (a ^ r) & sign) ? F_OF : 0;
		f |= (a ^ b ^ r) & 0x10 ? F_AF : 0;
		break;
	case A_OR: r = a | b; break;
	case A_XOR: r = a ^ b; break;
	default: r = a & b; break; /* AND, TEST (CF OF cleared; AF undefined: 0) */
	}
	f |= r ? 0 : F_ZF;
	f |= r & sign ? F_SF : 0;
	f |= __builtin_parity((unsigned)(r & 0xff)) ? 0 : F_PF;
	*fl = f;
	return r;
}

void trail_arch_mmio_emulate(const struct trail_arch_mmio_op *op, void *ucv, uintptr_t mem,
			     uint64_t *rd, uint64_t *wr)
{
	greg_t *g = ((ucontext_t *)ucv)->uc_mcontext.gregs;
	unsigned w = op->width, fl = 0;
	uint64_t v = 0, r;
	int flags = 0;

	*rd = *wr = 0;
	switch (op->cls) {
	case C_STORE_R:
		*wr = reg_get(g, op->reg, w, op->rex);
		mem_write(mem, w, *wr);
		break;
	case C_STORE_I:
		*wr = op->imm;
		mem_write(mem, w, *wr);
		break;
	case C_LOAD:
		*rd = mem_read(mem, w);
		reg_set(g, op->reg, w, op->rex, *rd);
		break;
	case C_LOADX:
		*rd = mem_read(mem, w);
		reg_set(g, op->reg, op->dwidth, op->rex, op->sx ? sext(*rd, w) : *rd);
		break;
	case C_ALU_MR:
	case C_ALU_MI:
		*rd = v = mem_read(mem, w);
		r = alu(op->alu, v, op->cls == C_ALU_MI ? op->imm : reg_get(g, op->reg, w, op->rex),
			w, &fl);
		if (op->alu != A_CMP) {
			*wr = r;
			mem_write(mem, w, r);
		}
		flags = 1;
		break;
	case C_ALU_RM:
		*rd = v = mem_read(mem, w);
		r = alu(op->alu, reg_get(g, op->reg, w, op->rex), v, w, &fl);
		if (op->alu != A_CMP)
			reg_set(g, op->reg, w, op->rex, r);
		flags = 1;
		break;
	case C_TEST_R:
	case C_TEST_I:
		*rd = v = mem_read(mem, w);
		alu(A_TEST, v, op->cls == C_TEST_I ? op->imm : reg_get(g, op->reg, w, op->rex), w, &fl);
		flags = 1;
		break;
	}
	if (flags)
		g[REG_EFL] = (greg_t)(((uint64_t)g[REG_EFL] & ~(uint64_t)F_ARITH) | fl);
	g[REG_RIP] += op->len;
}
