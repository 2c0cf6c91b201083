/* SPDX-License-Identifier: MIT */
/*
 * arch.h - the one header between libtrail's function hooks and the
 * architecture: what a patchable site looks like, how to build the
 * instruction that turns it into a call, where the trampolines are, and
 * what they hand to C. Only src/arch/<arch>/ implements it.
 *
 * A site is the nop area the compiler leaves at a function's entry with
 * -fpatchable-function-entry=N (N = TRAIL_ARCH_SITE_SIZE here). Patched,
 * it jumps to its own stub in a stub area mapped next to the code; the
 * stub calls the entry trampoline, which saves the argument registers
 * (the ftrace_regs idea), calls the C side's on_entry (registered in
 * trail__arch_on_entry), and restores them.
 * If that says so, the stub runs the function body with its own return
 * address, so the function returns into the stub and through the exit
 * trampoline, which saves the return registers and calls
 * its on_exit (trail__arch_on_exit) for the address to return to (the C side keeps
 * the real one); else the stub jumps into the body. Every return stays
 * paired with its call: the return stack buffer predicts them all.
 */
#ifndef TRAIL_ARCH_H
#define TRAIL_ARCH_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)

#define TRAIL_ARCH_SITE_SIZE 5u  /* jmp rel32, to the site's stub */
#define TRAIL_ARCH_STUB_SIZE 40u /* one per site (tramp.S shows it) */
#define TRAIL_ARCH_STUBS_HDR 32u /* a stub area starts with the four
				  * trampolines' addresses */
#define TRAIL_ARCH_REACH ((int64_t)1 << 31)

/* Registers saved by the entry trampoline, in memory order. */
struct trail_arch_regs {
	uint64_t xmm[8][2]; /* xmm0..xmm7: float arguments */
	uint64_t r11, r10, r9, r8, rcx, rdx, rsi, rdi, rax;
	uint64_t rbx, rbp, r12, r13, r14, r15; /* read-only copies (probes) */
	uint64_t pad;
};

/* Registers saved by the exit trampoline. */
struct trail_arch_ret_regs {
	uint64_t xmm[2][2]; /* xmm0, xmm1: float return values */
	uint64_t rdx, rax;  /* integer return values */
	uint64_t sp;        /* %rsp after the hooked function returned: its
			     * return address slot was at sp - 8 */
	uint64_t pad;
};

/* the n-th integer argument (0-based, n < 6) */
static inline uint64_t trail_arch_arg(const struct trail_arch_regs *r, unsigned n)
{
	switch (n) {
	case 0: return r->rdi;
	case 1: return r->rsi;
	case 2: return r->rdx;
	case 3: return r->rcx;
	case 4: return r->r8;
	default: return r->r9;
	}
}

static inline uint64_t trail_arch_retval(const struct trail_arch_ret_regs *r)
{
	return r->rax;
}

/* hardware performance counter idx, read in user space (the kernel
 * allows it for an event whose mmap page says cap_user_rdpmc) */
static inline uint64_t trail_arch_rdpmc(uint32_t idx)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
	return (uint64_t)hi << 32 | lo;
}

#else
#error "trail: function hooks are implemented for x86_64 only (src/arch/)"
#endif

/*
 * Fault-safe reads of the traced program's memory, for probes: a bad
 * address makes them return -EFAULT instead of crashing the program. The
 * SIGSEGV/SIGBUS handler asks trail_arch_fault_fixup() first, which moves
 * a fault inside these functions to their error exit (the kernel's
 * exception tables, in user space): no system call per read.
 *
 *   load: the size (1, 2, 4, 8) bytes at addr, zero-extended, into *out
 *   string: the NUL-terminated string at src into dst, at most max bytes
 *           (no NUL written); returns its length (max: cut), or -EFAULT
 *   copy: n bytes
 */
int trail_arch_load_safe(uintptr_t addr, unsigned size, uint64_t *out);
long trail_arch_string_safe(char *dst, uintptr_t src, unsigned long max);
int trail_arch_copy_safe(void *dst, uintptr_t src, unsigned long n);
/* uc (a ucontext_t) faulted in one of them: resumed at its error exit.
 * Returns 1, or 0 if the fault is not theirs. Async-signal-safe. */
int trail_arch_fault_fixup(void *uc);

/* The assembly trampolines. Not functions to call from C. */
extern const char trail__arch_tramp_entry[];
extern const char trail__arch_tramp_exit[];
/* ... and those of unmodified code, which preserve every register */
extern const char trail__arch_tramp_entry_all[];
extern const char trail__arch_tramp_exit_all[];
/* ... and that of a probe at an instruction entered through a jump, and
 * its address as data */
extern const char trail__arch_tramp_insn[];
extern const uintptr_t trail__arch_tramp_insn_at;

/* The stub of probe site idx at an instruction (tramp.S shows it), for
 * the address at: over the red zone, every register saved, the handler
 * trail__arch_on_insn(idx, regs, sp) called, then the copy of the
 * displaced instructions run (copy: trail_arch_reloc_make's). */
#define TRAIL_ARCH_INSN_STUB 40u
/* in idx: the site's code uses the wide vector registers, which the stub
 * saves too (XSAVE, about 100 ns a hit here) */
#define TRAIL_ARCH_INSN_VEC 0x40000000u
void trail_arch_insn_stub(uint8_t out[TRAIL_ARCH_INSN_STUB], uintptr_t at, uint32_t idx,
			  uintptr_t copy);
/* Which vector state the stub saves beyond xmm0-15 (the CPU's: ymm upper
 * halves, AVX-512), found once, before the first such stub. */
void trail_arch_vector_init(void);
/* Registered by the C side before any such stub runs: the probes of
 * site idx, the interrupted code's registers in regs (all of them:
 * read-only), its %rsp sp. (A pointer: the arch layer does not call up.) */
extern void (*trail__arch_insn_handler)(uint64_t idx, const struct trail_arch_regs *regs,
					uintptr_t sp);

/*
 * Registered by the C side (libtrail, or a test) before the first stub
 * runs: pointers the trampolines call through (the arch layer does not
 * call up). on_entry: site was
 * entered, *ret is the caller's return address (in its stack slot).
 * Returning nonzero hooks the return: the slot will hold `hook` while the
 * function runs (the C side keeps the real address, and puts hook back in
 * the slot if it ever restores the real one there), and on_exit() is
 * called when it returns, to give the real address back.
 */
extern int (*trail__arch_on_entry)(uintptr_t site, uintptr_t *ret, struct trail_arch_regs *regs,
				   uintptr_t hook);
extern uintptr_t (*trail__arch_on_exit)(struct trail_arch_ret_regs *regs);

/* Is p (TRAIL_ARCH_SITE_SIZE bytes) an unpatched site: one-byte nops, or
 * one multi-byte nop? */
int trail_arch_site_is_nop(const uint8_t *p);
/* Can code at site jump to target directly? */
int trail_arch_reaches(uintptr_t site, uintptr_t target);
/* The instruction a site becomes: a jump from site to target (its stub,
 * which must be in reach). */
void trail_arch_jump_insn(uint8_t out[TRAIL_ARCH_SITE_SIZE], uintptr_t site,
			  uintptr_t target);
/* A jump to target from anywhere (written at out, TRAIL_ARCH_FAR_JUMP
 * bytes): the body of a library call's stub. */
#define TRAIL_ARCH_FAR_JUMP 14u
void trail_arch_far_jump(uint8_t *out, uintptr_t target);
/* Where a site that is patched to jump somewhere points, or 0. */
uintptr_t trail_arch_jump_target(const uint8_t *p, uintptr_t site);

/*
 * Memory for a stub area of len bytes within reach of [lo, hi), mapped
 * next to that range (first after it, else before it), read-write-exec
 * until the caller seals it. Returns it or NULL; *size gets its size.
 * Async-signal-safe (mmap only).
 */
void *trail_arch_near_map(uintptr_t lo, uintptr_t hi, size_t len, size_t *size);
/* A stub area of n stubs takes TRAIL_ARCH_STUBS_HDR + n * STUB_SIZE bytes;
 * its header holds the trampolines' addresses (init writes them), stub k
 * is written for one site and lives at trail_arch_stub_at(area, k). body:
 * where the function goes on past its site (site + SITE_SIZE for a
 * patchable entry, the copy of displaced instructions otherwise). all:
 * the site is in unmodified code, whose callers may keep values in
 * scratch registers across the call (gcc's -fipa-ra): its stub goes
 * through the trampolines that preserve every register. */
void trail_arch_stub_area_init(uint8_t *area);
void trail_arch_site_stub(uint8_t *area, size_t k, uintptr_t site, uintptr_t body, int all);
uintptr_t trail_arch_stub_at(const uint8_t *area, size_t k);
/* ret, a return address a stack walk found, is the one a stub's call of
 * an entry trampoline pushed: 1, *site the hooked function (its caller's
 * return address is then at the stack pointer just above ret's slot);
 * else 0. Fault-safe loads only: async-signal-safe. */
int trail_arch_stub_return(uintptr_t ret, uintptr_t *site);

/*
 * Write len bytes over code at addr, no thread running it (at process
 * start-up, or sites no thread can be in): make the pages writable, copy,
 * restore their protection (read + exec). Returns 0 or -errno.
 */
int trail_arch_text_write(void *addr, const void *src, size_t len);

/*
 * Replace TRAIL_ARCH_SITE_SIZE bytes at each of n sites while other threads
 * may be running them, provided each site currently holds ONE instruction
 * starting at its first byte (a patched jump: no thread can be inside it).
 * The kernel's breakpoint-first technique: int3 on byte 0 of every site,
 * serialize every core of the process, write bytes 1.., serialize, write
 * byte 0, serialize. A thread that meets an int3 meanwhile is moved past
 * the site when its new content is nops, or back to re-execute it once
 * poked (trail_arch_trap_owner() says which sites are ours). Returns 0 or
 * -errno. Not async-signal-safe across threads: callers serialize.
 */
struct trail_arch_poke {
	uintptr_t addr;
	uint8_t bytes[TRAIL_ARCH_SITE_SIZE];
};
/* trail_arch_text_write for n sites at once (p sorted by address), each
 * getting its TRAIL_ARCH_SITE_SIZE bytes: the pages of sites close
 * together made writable once (thousands of functions hooked at start-up
 * paid a mprotect pair each). 0 or -errno. */
int trail_arch_text_write_many(const struct trail_arch_poke *p, size_t n);
/* The run of sites from p[i] (p sorted by address) whose pages lie at
 * most gap pages apart (an address lower than the last ends it too): its
 * pages [*lo, *hi), and the index past it. What the writers above and
 * the live poke make writable at once. */
size_t trail_arch_page_run(const struct trail_arch_poke *p, size_t n, size_t i, size_t gap,
			   uintptr_t *lo, uintptr_t *hi);
int trail_arch_poke_live(const struct trail_arch_poke *p, size_t n);

/*
 * The same for sites whose current content is several instructions (the
 * five one-byte nops of an unpatched site): after the breakpoints, step()
 * must get every other thread out of the sites (see ftrace.c); if it fails
 * the breakpoints are taken back and its error returned.
 */
int trail_arch_poke_stepped(const struct trail_arch_poke *p, size_t n, int (*step)(void));

/*
 * Write one byte at each of n addresses (p[i].bytes[0] at p[i].addr)
 * while other threads run: a breakpoint going in or the original first
 * byte coming back, each a single store, then every core serialized. The
 * SIGTRAP handler is installed first. 0 or -errno.
 */
int trail_arch_poke_bytes(const struct trail_arch_poke *p, size_t n);

/*
 * A breakpoint on a function that only returns (the dynamic loader's
 * _dl_debug_state, called at every change of the list of loaded objects):
 * each call to fn runs cb(uc) in the calling thread, from the SIGTRAP
 * handler, then returns to fn's caller. Returns 0, -ENOTSUP if fn is not
 * a bare return (then nothing is written), or -errno. One watch at a time;
 * trail_arch_unwatch() puts the byte back.
 */
int trail_arch_watch(uintptr_t fn, void (*cb)(void *uc));
void trail_arch_unwatch(void);

/*
 * Unmodified code (reloc.c): a function entry with no nops for a jump is
 * entered by moving its first instructions (whole ones, at least
 * TRAIL_ARCH_SITE_SIZE bytes) into a copy that runs them elsewhere and
 * jumps back; the entry then holds the jump to the site's stub, whose
 * "body" is the copy.
 */
#define TRAIL_ARCH_RELOC_INSNS 8   /* displaced instructions at most */
#define TRAIL_ARCH_RELOC_MAXLEN 24 /* displaced bytes at most */
#define TRAIL_ARCH_RELOC_CODE 72   /* bytes of a copy, jump back included */

struct trail_arch_reloc {
	uintptr_t at;     /* where the copy runs */
	uint8_t len;      /* bytes displaced */
	uint8_t ninsn;    /* instructions displaced */
	uint8_t copy_len; /* bytes of the copy */
	uint8_t orig_off[TRAIL_ARCH_RELOC_INSNS]; /* each one's offset at the entry */
	uint8_t copy_off[TRAIL_ARCH_RELOC_INSNS]; /* and in the copy */
	uint8_t orig[TRAIL_ARCH_RELOC_MAXLEN];   /* the displaced bytes */
	uint8_t code[TRAIL_ARCH_RELOC_CODE];     /* the copy, for its address */
};

/*
 * The instruction decoder (Capstone) is not linked into libtrail: its
 * library costs every process that loads it ~10 ms at exec (1.3 MiB of
 * relocated data) and every fork a share of the page table, and only
 * function hooks on unmodified code need it. src/arch/x86_64/decoder.c
 * hands its entry points over from a constructor: in libtrail-decoder.so,
 * loaded when a session asks for such hooks (or injected by the recorder
 * before an attach), and linked whole into the tools and the tests.
 */
struct trail_arch_decoder_ops; /* the decoder's entry points (x86_64/decoder.h) */
/* From the constructor of the decoder's library (exported by libtrail):
 * the decoder is made ready at once (it allocates: not in a signal
 * handler). */
void trail_arch_decoder_register(const struct trail_arch_decoder_ops *ops);
/* 0 if the decoder is ready, -ENOTSUP without one. */
int trail_arch_decoder_init(void);
/* An address in the decoder's library (NULL without one) */
const void *trail_arch_decoder_code(void);

/* The length of the instruction at code (n bytes readable, at address
 * at), or -EINVAL if it is not one; -ENOTSUP without a decoder. */
int trail_arch_insn_len(const uint8_t *code, size_t n, uintptr_t at);

/* Can the function at fn (code: its size bytes, room bytes readable up to
 * the next symbol) be entered through a jump over its first instructions?
 * 0 with *len the bytes to displace (fewer than the jump's 5 when the
 * function is that short and padding follows it), or
 * a negative errno with why naming the instruction and the reason:
 * -ENOSPC it ends within them, -ENOTSUP one that cannot run elsewhere,
 * -EXDEV a branch of the function lands in them past their first byte (or
 * a jump table might: one to the entry itself meets the jump, a call),
 * -E2BIG too many, -EINVAL not decodable. */
int trail_arch_reloc_check(const uint8_t *code, size_t size, size_t room, uintptr_t fn,
			   unsigned *len, char *why, size_t whylen);
/* How the entry of the function at fn (code: its size bytes, room bytes
 * readable up to the next symbol) is best entered, what libtrail's
 * fsites.c and the tools' funcscan.c decide alike:
 *   TRAIL_ARCH_ENTER_JUMP  a jump over its first *len bytes (above);
 *   TRAIL_ARCH_ENTER_WHOLE the whole function runs from a copy
 *                          (trail_arch_whole_make), its entry a jump to
 *                          the hook: what the jump alone cannot do (a
 *                          branch into the first bytes), or does wrong (a
 *                          loop whose head is the entry: the hook at each
 *                          turn); *len is the jump's 5 bytes;
 *   TRAIL_ARCH_ENTER_TRAP  a breakpoint on its first instruction, *len
 *                          bytes (trail_arch_trap_check);
 * or -errno when nothing can enter it. why says why the jump alone was
 * not taken (empty when it was), or, refused, why the breakpoint is not. */
#define TRAIL_ARCH_ENTER_JUMP 0
#define TRAIL_ARCH_ENTER_WHOLE 1
#define TRAIL_ARCH_ENTER_TRAP 2
int trail_arch_entry_check(const uint8_t *code, size_t size, size_t room, uintptr_t fn,
			   unsigned *len, char *why, size_t whylen);
/* Can the function at fn (code: its size bytes) run whole from a copy?
 * Its instructions, all decoded, must mean the same from elsewhere:
 * no call (the return address would be in the copy, where no unwinder
 * looks for it: only leaf functions move), no indirect jump but a
 * RIP-relative one without index (a tail call through the GOT; a table's
 * or a computed target is an address of the original), no short branch
 * out of the function (its rel8 cannot reach from the copy), at most
 * TRAIL_ARCH_WHOLE_MAX bytes. 0, or -errno with why. */
#define TRAIL_ARCH_WHOLE_MAX 4096u
int trail_arch_whole_check(const uint8_t *code, size_t size, uintptr_t fn, char *why,
			   size_t whylen);
/* The copy of that function (size bytes) for the address at, written to
 * out: branches and RIP-relative operands inside the function keep their
 * bytes (they reach the copy's own), those going out are re-targeted at
 * what they reached. The layout is the same: a thread at fn + k goes on
 * at at + k. 0, or -ERANGE (out of 32-bit reach), -ENOTSUP, -EINVAL. */
int trail_arch_whole_make(const uint8_t *code, size_t size, uintptr_t fn, uintptr_t at,
			  uint8_t *out);
/* Does the function at fn (code: its size bytes) use the wide vector
 * registers (an instruction with a VEX or EVEX prefix: AVX, AVX-512, or
 * SSE built with -mavx)? Then values may live in their upper halves, and
 * a probe's stub there saves them (TRAIL_ARCH_INSN_VEC). 1 or 0 (1
 * without a decoder). */
int trail_arch_uses_vector(const uint8_t *code, size_t size, uintptr_t fn);
/* How the checks above read a jump table's entries (the table is not in
 * the function's bytes): read(ctx, addr, buf, n) fills buf with the n
 * bytes at addr (an address of the code's kind: the process's, or the
 * file's) or returns non-zero. NULL: tables are not read, a function with
 * one is refused. Callers serialize, as for the rest. */
void trail_arch_table_reader(int (*read)(void *ctx, uintptr_t addr, void *buf, size_t n),
			     void *ctx);
/* Can a probe at the instruction at (inside the function at fn, code its
 * size bytes) take a jump instead of a breakpoint: its instructions from
 * at displaced as an entry's are, and no branch of the function landing
 * past at among them? 0 with *len the bytes displaced, or -errno with why
 * as trail_arch_reloc_check says. */
int trail_arch_jump_check(const uint8_t *code, size_t size, uintptr_t fn, uintptr_t at,
			  unsigned *len, char *why, size_t whylen);
/* The return instructions of the function at fn (code: its size bytes),
 * for a return probe that probes them (the kernel's kretinsn idea): 0
 * with rets[0..*n), or -EXDEV with why when the function may return
 * through another one (a tail call: a jump out of it, or an indirect jump
 * that is no jump table), -ENOENT (no ret), -E2BIG (more than max). */
int trail_arch_returns(const uint8_t *code, size_t size, uintptr_t fn, uintptr_t *rets,
		       unsigned max, unsigned *n, char *why, size_t whylen);
/* The fallback for an entry a jump cannot replace (too short, a branch
 * into the first bytes, a jump table): a breakpoint on its first
 * instruction, which runs from a copy (trail_arch_reloc_make with len
 * that instruction's size); the SIGTRAP handler sends the thread to the
 * site's stub (trail__arch_site_resume). 0 with *len, or -errno with why
 * as above (-ENOTSUP: a trap, or an instruction that cannot run
 * elsewhere; -EINVAL: not decodable). */
int trail_arch_trap_check(const uint8_t *code, size_t size, uintptr_t fn, unsigned *len,
			  char *why, size_t whylen);
/* The copy of the len displaced bytes orig (of the function at fn) for
 * the address at, into r: 0, or -ERANGE if at is out of 32-bit reach of
 * what they refer to, -E2BIG, -ENOTSUP, -EINVAL. */
int trail_arch_reloc_make(const uint8_t *orig, unsigned len, uintptr_t fn, uintptr_t at,
			  struct trail_arch_reloc *r);
/* Where a thread stopped at ip, inside the displaced bytes of fn, goes on
 * in the copy: the instruction's place there, or 0 if ip is not the start
 * of a displaced instruction. */
uintptr_t trail_arch_reloc_map(const struct trail_arch_reloc *r, uintptr_t fn, uintptr_t ip);

/* The integer registers of a signal's context uc (a ucontext_t) as a
 * probe reads them (the xmm ones zero); *sp and *ip its stack pointer and
 * instruction pointer. */
void trail_arch_regs_from_uc(const void *uc, struct trail_arch_regs *r, uintptr_t *sp,
			     uintptr_t *ip);

/*
 * MMIO tracing (src/lib/fmmio.c, x86_64/mmio.c): the instruction of a
 * thread that faulted on a protected region, decoded, then run against
 * the region's second mapping as the CPU would have run it.
 *
 * decode: the instruction at code (n bytes readable), with the
 * registers of uc (a ucontext_t, for its address): 0 and *op (op->addr
 * the access's address, op->width its bytes, op->len the instruction's),
 * -ENOTSUP an instruction not emulated (LOCK, string, vector, XCHG...),
 * -EINVAL not a whole instruction in n bytes. Async-signal-safe.
 * emulate: op run against mem (where op->addr's bytes are mapped too):
 * one access of op->width bytes there, uc's registers, flags and %rip as
 * the instruction leaves them; *rd the value read, *wr the value written
 * (by op->kind).
 */
#define TRAIL_ARCH_MMIO_LOAD 0  /* a read (MOV, MOVZX, CMP, TEST, OR reg, mem) */
#define TRAIL_ARCH_MMIO_STORE 1 /* a write */
#define TRAIL_ARCH_MMIO_RMW 2   /* a read, then a write (OR mem, reg) */
struct trail_arch_mmio_op {
	uintptr_t addr;
	uint64_t imm;
	uint8_t len, width, kind;
	uint8_t cls, alu, reg, rex, sx, dwidth; /* (the emulator's) */
};
int trail_arch_mmio_decode(const uint8_t *code, size_t n, const void *uc,
			   struct trail_arch_mmio_op *op);
void trail_arch_mmio_emulate(const struct trail_arch_mmio_op *op, void *uc, uintptr_t mem,
			     uint64_t *rd, uint64_t *wr);

/* The SIGTRAP handler (installed now if it is not) asks fn first about
 * each perf event's trap (si_code TRAP_PERF: a hardware watchpoint with
 * sigtrap): fn(si, uc) returns 1 when it was its (uc may be changed), 0
 * to pass it on. Under the caller's lock; 0 or -errno. */
int trail_arch_perf_trap(int (*fn)(void *si, void *uc));

/* Implemented by the caller: is addr a site it has patched or poked? The
 * SIGTRAP handler asks; other traps go to the program's own handler.
 * Returns 0 if not, else where a thread that meets the site's breakpoint
 * mid-poke goes on doing what the unpatched site does: addr +
 * SITE_SIZE past nops, the copy of displaced instructions (reloc). */
uintptr_t trail__arch_site_resume(uintptr_t addr);
/* Implemented by the caller too, asked first: a breakpoint of its at an
 * instruction (a probe there)? It moves uc (a ucontext_t) on and returns
 * 1, else 0. */
int trail__arch_insn_trap(void *uc);

#endif /* TRAIL_ARCH_H */
