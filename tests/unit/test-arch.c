/* SPDX-License-Identifier: MIT */
/*
 * test-arch.c - the x86_64 function hook layer (src/arch): functions of this
 * program with patchable entries are patched in place to jump to their
 * stubs in a stub area mapped next to the code; the handlers here count
 * calls, read arguments and (graph mode) hook returns with a shadow stack.
 * Arguments and return values (integer, vector, struct, variadic, x87)
 * must come through untouched, recursion must balance, and unpatching must
 * restore the exact bytes.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "check.h"

/* noipa: no cloning, const-folding or merging that would bypass a site */
#define HOOK __attribute__((patchable_function_entry(5), noipa))

struct big {
	long a, b, c, d;
};

HOOK static int add(int a, int b) { return a + b; }
HOOK static double mul(double a, double b) { return a * b; }
HOOK static long double ld(long double x) { return x * 2; }
HOOK static struct big mkbig(long a) { struct big r = {a, a + 1, a + 2, a + 3}; return r; }
HOOK static long six(long a, long b, long c, long d, long e, long f) { return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f; }
HOOK static double vsum(int n, ...)
{
	va_list ap;
	double s = 0;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, double);
	va_end(ap);
	return s;
}
HOOK static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
HOOK static long deep(long n) { return n ? 1 + deep(n - 1) : 0; }
static jmp_buf jb;
/* it does end, by longjmp, which gcc's recursion check does not count */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winfinite-recursion"
HOOK static void jumper(int n)
{
	if (n <= 0)
		longjmp(jb, 1);
	jumper(n - 1);
}
#pragma GCC diagnostic pop

/* ---------------------------------------------------------------- hooks */

static int graph;
static long entries, exits;
static uint64_t last_args[6];
static uintptr_t last_site;

#define SHADOW 30000
static struct {
	uintptr_t ret;
	uintptr_t *slot;
} shadow[SHADOW];
static int depth;

static uintptr_t last_hook;

static int on_entry(uintptr_t site, uintptr_t *ret, struct trail_arch_regs *regs, uintptr_t hook)
{
	entries++;
	last_site = site;
	last_hook = hook;
	for (unsigned i = 0; i < 6; i++)
		last_args[i] = trail_arch_arg(regs, i);
	if (graph && depth < SHADOW) {
		shadow[depth].ret = *ret;
		shadow[depth].slot = ret;
		depth++;
		return 1;
	}
	return 0;
}

static uintptr_t on_exit_(struct trail_arch_ret_regs *regs)
{
	(void)regs;
	exits++;
	return shadow[--depth].ret;
}

/* the C side's entry and exit, given to the trampolines before any
 * stub runs (as libtrail's fhook.c does) */
__attribute__((constructor)) static void register_hooks(void)
{
	trail__arch_on_entry = on_entry;
	trail__arch_on_exit = on_exit_;
}

/* ---------------------------------------------------------------- patching */

static void patch(void *fn, uintptr_t target)
{
	uint8_t insn[TRAIL_ARCH_SITE_SIZE];
	uintptr_t site = (uintptr_t)fn;

	CHECK(trail_arch_site_is_nop(fn));
	CHECK(trail_arch_reaches(site, target));
	trail_arch_jump_insn(insn, site, target);
	CHECK_EQ(trail_arch_text_write(fn, insn, sizeof(insn)), 0);
	CHECK_EQ(trail_arch_jump_target(fn, site), target);
}

static uint8_t saved[16][TRAIL_ARCH_SITE_SIZE];
static void *fns[16];
static int nfns;
static uint8_t *area; /* the stub area, made once */
static size_t area_len;

/* every hooked function of this file jumps to its stub */
static void patch_all(void)
{
	void *list[] = {(void *)add, (void *)mul, (void *)ld, (void *)mkbig, (void *)six,
			(void *)vsum, (void *)fib, (void *)deep, (void *)jumper};
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	nfns = (int)(sizeof(list) / sizeof(list[0]));
	for (int i = 0; i < nfns; i++) {
		lo = (uintptr_t)list[i] < lo ? (uintptr_t)list[i] : lo;
		hi = (uintptr_t)list[i] + 5 > hi ? (uintptr_t)list[i] + 5 : hi;
	}
	if (!area) {
		area = trail_arch_near_map(lo, hi, TRAIL_ARCH_STUBS_HDR + 16 * TRAIL_ARCH_STUB_SIZE,
					   &area_len);
		if (!area)
			abort();
		trail_arch_stub_area_init(area);
		for (int i = 0; i < nfns; i++)
			trail_arch_site_stub(area, (size_t)i, (uintptr_t)list[i],
					     (uintptr_t)list[i] + TRAIL_ARCH_SITE_SIZE, 0);
	}
	for (int i = 0; i < nfns; i++) {
		fns[i] = list[i];
		memcpy(saved[i], list[i], TRAIL_ARCH_SITE_SIZE);
		patch(list[i], trail_arch_stub_at(area, (size_t)i));
	}
}

static void unpatch_all(void)
{
	for (int i = 0; i < nfns; i++) {
		CHECK_EQ(trail_arch_text_write(fns[i], saved[i], TRAIL_ARCH_SITE_SIZE), 0);
		CHECK(memcmp(fns[i], saved[i], TRAIL_ARCH_SITE_SIZE) == 0);
		CHECK(trail_arch_site_is_nop(fns[i]));
	}
}

/* the calls, their results, and when hooked what the hook saw */
static void exercise(int hooked)
{
	struct big b;

	last_site = 0;
	CHECK_EQ(add(40, 2), 42);
	if (hooked) {
		CHECK_EQ(last_site, (uintptr_t)add);
		CHECK_EQ(last_args[0], 40);
		CHECK_EQ(last_args[1], 2);
	} else {
		CHECK_EQ(last_site, 0);
	}
	CHECK(mul(1.5, -4.0) == -6.0);
	CHECK(ld(1.25L) == 2.5L);
	b = mkbig(10);
	CHECK(b.a == 10 && b.b == 11 && b.c == 12 && b.d == 13);
	CHECK_EQ(six(1, 2, 3, 4, 5, 6), 1 + 4 + 9 + 16 + 25 + 36);
	if (hooked)
		CHECK_EQ(last_args[5], 6);
	CHECK(vsum(3, 1.0, 2.5, 4.0) == 7.5);
	CHECK_EQ(fib(15), 610);
}

TEST(sites_start_as_nops)
{
	CHECK(trail_arch_site_is_nop((const uint8_t *)add));
	CHECK(trail_arch_site_is_nop((const uint8_t *)fib));
	CHECK_EQ(trail_arch_jump_target((const uint8_t *)add, (uintptr_t)add), 0);
}

TEST(entry_hook_preserves_arguments_and_results)
{
	patch_all();
	entries = 0;
	exercise(1);
	/* add mul ld mkbig six vsum, fib(15) = 1973 calls */
	CHECK_EQ(entries, 6 + 1973);
	unpatch_all();
	entries = 0;
	exercise(0);
	CHECK_EQ(entries, 0);
}

TEST(graph_hook_balances_and_preserves_results)
{
	patch_all();
	graph = 1;
	entries = exits = 0;
	exercise(1);
	CHECK_EQ(entries, exits);
	CHECK_EQ(depth, 0);
	CHECK_EQ(deep(10000), 10000); /* 10001 nested hooked returns */
	CHECK_EQ(entries, exits);
	CHECK_EQ(depth, 0);
	unpatch_all();
}

TEST(longjmp_out_of_hooked_frames)
{
	patch_all();
	graph = 1;
	depth = 0;
	if (!setjmp(jb))
		jumper(20);
	/* 21 frames left without returning: their shadow entries are stale,
	 * the hook layer's user must drop them (libtrail does by stack
	 * address); the program itself is unharmed */
	CHECK_EQ(depth, 21);
	depth = 0;
	CHECK_EQ(add(1, 2), 3);
	CHECK_EQ(depth, 0);
	unpatch_all();
}

/* the call gcc makes to a same-unit function it knows needs no aligned
 * stack: 8 bytes off the ABI's alignment at the callee's entry */
static int call_misaligned(int a, int b)
{
	int r;

	__asm__ volatile("subq $8, %%rsp\n\t"
			 "call *%[f]\n\t"
			 "addq $8, %%rsp"
			 : "=a"(r), "+D"(a), "+S"(b)
			 : [f] "r"((void *)add)
			 : "rcx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc",
			   "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7");
	return r;
}

TEST(misaligned_stack_at_entry)
{
	patch_all();
	graph = 1;
	entries = exits = 0;
	depth = 0;
	CHECK_EQ(call_misaligned(20, 22), 42);
	CHECK_EQ(entries, 1);
	CHECK_EQ(exits, 1);
	unpatch_all();
}

TEST(stub_area_near_the_code)
{
	uintptr_t st;

	patch_all();
	/* the area is in reach of every site, stub k is where the site jumps,
	 * and a hooked call's return address is inside that stub */
	CHECK(area != NULL);
	CHECK(area_len >= TRAIL_ARCH_STUBS_HDR + 16 * TRAIL_ARCH_STUB_SIZE);
	st = trail_arch_stub_at(area, 0);
	CHECK_EQ(st, (uintptr_t)area + TRAIL_ARCH_STUBS_HDR);
	CHECK_EQ(trail_arch_jump_target((const uint8_t *)add, (uintptr_t)add), st);
	CHECK(trail_arch_reaches((uintptr_t)add, st));
	graph = 1;
	depth = 0;
	CHECK_EQ(add(1, 2), 3);
	CHECK(last_hook > st && last_hook < st + TRAIL_ARCH_STUB_SIZE);
	graph = 0;
	unpatch_all();
}

/* the return addresses of hooked calls pair with their calls: a hooked
 * function returns into its stub, the exit trampoline returns to the
 * caller; the stack a hooked function sees is the one its caller made,
 * its return address aside (stack-passed arguments are where they were) */
HOOK static long many(long a, long b, long c, long d, long e, long f, long g, long h,
		      long i)
{
	return a + b + c + d + e + f + g * 10 + h * 100 + i * 1000;
}

TEST(stack_arguments_through_the_stub)
{
	uint8_t *a2;
	size_t len;
	uint8_t keep[TRAIL_ARCH_SITE_SIZE];

	a2 = trail_arch_near_map((uintptr_t)many, (uintptr_t)many + 5,
				 TRAIL_ARCH_STUBS_HDR + TRAIL_ARCH_STUB_SIZE, &len);
	CHECK(a2 != NULL);
	if (!a2)
		return;
	trail_arch_stub_area_init(a2);
	trail_arch_site_stub(a2, 0, (uintptr_t)many, (uintptr_t)many + TRAIL_ARCH_SITE_SIZE, 0);
	memcpy(keep, (const void *)many, sizeof(keep));
	patch((void *)many, trail_arch_stub_at(a2, 0));
	for (graph = 0; graph < 2; graph++) {
		entries = exits = 0;
		depth = 0;
		CHECK_EQ(many(1, 2, 3, 4, 5, 6, 7, 8, 9), 21 + 70 + 800 + 9000);
		CHECK_EQ(entries, 1);
		CHECK_EQ(exits, graph);
	}
	graph = 0;
	CHECK_EQ(trail_arch_text_write((void *)many, keep, sizeof(keep)), 0);
	CHECK(trail_arch_site_is_nop((const uint8_t *)many));
}

TEST(jump_insn_encoding)
{
	uint8_t insn[5];

	trail_arch_jump_insn(insn, 0x1000, 0x2000);
	CHECK_EQ(insn[0], 0xe9);
	CHECK_EQ(insn[1] | insn[2] << 8 | insn[3] << 16 | (uint32_t)insn[4] << 24,
		 0x2000 - 0x1005);
	CHECK_EQ(trail_arch_jump_target(insn, 0x1000), 0x2000);
	trail_arch_jump_insn(insn, 0x5000, 0x1000); /* backwards */
	CHECK_EQ(trail_arch_jump_target(insn, 0x5000), 0x1000);
	CHECK(trail_arch_reaches(0x7f0000000000ull, 0x7f0000000000ull + 0x7ffffff0ull));
	CHECK(!trail_arch_reaches(0x7f0000000000ull, 0x7f0000000000ull + 0x80000005ull));
	CHECK(!trail_arch_reaches(0x7f0000000000ull, 0x550000000000ull));
	{
		static const uint8_t n1[5] = {0x90, 0x90, 0x90, 0x90, 0x90};
		static const uint8_t n5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
		static const uint8_t bad[5] = {0x90, 0x90, 0xcc, 0x90, 0x90};
		static const uint8_t clang5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x08};

		CHECK(trail_arch_site_is_nop(n1));
		CHECK(trail_arch_site_is_nop(n5));
		CHECK(trail_arch_site_is_nop(clang5));
		CHECK(!trail_arch_site_is_nop(bad));
	}
}

/* ------------------------------------------------------ fault-safe reads */

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	if (!trail_arch_fault_fixup(uc))
		_exit(100 + sig); /* not one of ours: the test fails */
}

TEST(fault_safe_reads)
{
	static const char text[] = "fault-safe";
	struct sigaction sa = {0};
	uint64_t v = 7;
	char buf[32];
	uint8_t *none;
	uint16_t w = 0xbeef;

	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	none = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);
	memcpy(none + 4096 - 6, "abcdef", 6);
	mprotect(none + 4096, 4096, PROT_NONE);
	/* every size, readable and not */
	CHECK_EQ(trail_arch_load_safe((uintptr_t)&w, 2, &v), 0);
	CHECK_EQ(v, 0xbeef);
	CHECK_EQ(trail_arch_load_safe((uintptr_t)text, 1, &v), 0);
	CHECK_EQ(v, 'f');
	CHECK_EQ(trail_arch_load_safe((uintptr_t)text, 8, &v), 0);
	CHECK(!memcmp(&v, text, 8));
	CHECK_EQ(trail_arch_load_safe((uintptr_t)text, 4, &v), 0);
	CHECK_EQ(v, 0x6c756166); /* "faul" */
	for (unsigned sz = 1; sz <= 8; sz *= 2) {
		CHECK_EQ(trail_arch_load_safe((uintptr_t)none + 4096, sz, &v), -EFAULT);
		CHECK_EQ(trail_arch_load_safe(16, sz, &v), -EFAULT);
	}
	/* a load straddling into the inaccessible page faults too */
	CHECK_EQ(trail_arch_load_safe((uintptr_t)none + 4096 - 4, 8, &v), -EFAULT);
	/* strings: whole, cut at max, running into the inaccessible page */
	CHECK_EQ(trail_arch_string_safe(buf, (uintptr_t)text, sizeof(buf)), 10);
	CHECK(!memcmp(buf, "fault-safe", 10));
	CHECK_EQ(trail_arch_string_safe(buf, (uintptr_t)text, 5), 5);
	CHECK_EQ(trail_arch_string_safe(buf, (uintptr_t)none + 4096 - 6, sizeof(buf)), -EFAULT);
	CHECK_EQ(trail_arch_string_safe(buf, 0, sizeof(buf)), -EFAULT);
	/* copies */
	CHECK_EQ(trail_arch_copy_safe(buf, (uintptr_t)none + 4096 - 6, 6), 0);
	CHECK(!memcmp(buf, "abcdef", 6));
	CHECK_EQ(trail_arch_copy_safe(buf, (uintptr_t)none + 4096 - 6, 7), -EFAULT);
	/* a fault elsewhere is not one of theirs */
	{
		ucontext_t uc;

		memset(&uc, 0, sizeof(uc));
		uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)&fault_safe_reads;
		CHECK_EQ(trail_arch_fault_fixup(&uc), 0);
	}
	munmap(none, 8192);
}

/* ------------------------------------------- a probe's jump at an instruction
 *
 * insn_subject(out) sets every general register and the carry flag to
 * known values, writes two words in its red zone, reaches `insn_at` (a
 * 5-byte nop, then the stores), and stores what it finds after: the
 * registers, the flags, the red zone's words. Run from a copy with a jump
 * at insn_at to a stub (tramp.S's trail__arch_tramp_insn), the handler
 * must see the registers, the flags and the stack pointer of that point,
 * and the code must find everything as it left it. */
__asm__(".text\n"
	".globl insn_subject, insn_at, insn_end\n"
	"insn_subject:\n"
	"  push %rbx; push %rbp; push %r12; push %r13; push %r14; push %r15\n"
	"  push %rdi\n"
	"  movq $0x1234, -8(%rsp)\n"
	"  movq $0x5678, -128(%rsp)\n"
	"  mov $0x1111, %rax; mov $0x2222, %rbx; mov $0x3333, %rcx; mov $0x4444, %rdx\n"
	"  mov $0x5555, %rsi; mov $0x6666, %rdi; mov $0x7777, %rbp; mov $0x8888, %r8\n"
	"  mov $0x9999, %r9; mov $0xaaaa, %r10; mov $0xbbbb, %r11; mov $0xcccc, %r12\n"
	"  mov $0xdddd, %r13; mov $0xeeee, %r14; mov $0xffff, %r15\n"
	"  stc\n"
	"insn_at:\n"
	"  .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n" /* nopl 0(%rax,%rax,1) */
	"  movq -8(%rsp), %xmm0\n"          /* the red zone first */
	"  movq -128(%rsp), %xmm1\n"
	"  pushfq\n"
	"  push %r15\n"
	"  mov 16(%rsp), %r15\n"             /* out */
	"  mov %rax, 0(%r15); mov %rbx, 8(%r15); mov %rcx, 16(%r15); mov %rdx, 24(%r15)\n"
	"  mov %rsi, 32(%r15); mov %rdi, 40(%r15); mov %rbp, 48(%r15); mov %r8, 56(%r15)\n"
	"  mov %r9, 64(%r15); mov %r10, 72(%r15); mov %r11, 80(%r15); mov %r12, 88(%r15)\n"
	"  mov %r13, 96(%r15); mov %r14, 104(%r15)\n"
	"  pop %rax; mov %rax, 112(%r15)\n"
	"  pop %rax; mov %rax, 120(%r15)\n"
	"  movq %xmm0, 128(%r15); movq %xmm1, 136(%r15)\n"
	"  pop %rdi\n"
	"  pop %r15; pop %r14; pop %r13; pop %r12; pop %rbp; pop %rbx\n"
	"  ret\n"
	"insn_end:\n");
extern const char insn_subject[], insn_at[], insn_end[];

static struct {
	uint64_t idx, sp, calls;
	struct trail_arch_regs r;
} seen_insn;

static void on_insn(uint64_t idx, const struct trail_arch_regs *regs, uintptr_t sp)
{
	seen_insn.idx = idx;
	seen_insn.r = *regs;
	seen_insn.sp = sp;
	seen_insn.calls++;
}

/* A probe's jump at code + off (jl bytes displaced) to stub idx in an
 * area mapped near code: what fprobe.c does, for these tests. The area
 * (got bytes) is the caller's to unmap. */
static uint8_t *jump_probe(uint8_t *code, size_t len, size_t off, unsigned jl, uint32_t idx,
			   size_t *got)
{
	uint8_t stub[TRAIL_ARCH_INSN_STUB], jump[TRAIL_ARCH_SITE_SIZE], *area;
	struct trail_arch_reloc rl;

	area = trail_arch_near_map((uintptr_t)code, (uintptr_t)code + len, 4096, got);
	CHECK(area != NULL);
	if (!area)
		return NULL;
	CHECK_EQ(trail_arch_reloc_make(code + off, jl, (uintptr_t)code + off,
				       (uintptr_t)area + TRAIL_ARCH_INSN_STUB, &rl), 0);
	trail_arch_insn_stub(stub, (uintptr_t)area, idx, (uintptr_t)area + TRAIL_ARCH_INSN_STUB);
	memcpy(area, stub, sizeof(stub));
	memcpy(area + TRAIL_ARCH_INSN_STUB, rl.code, rl.copy_len);
	trail_arch_jump_insn(jump, (uintptr_t)code + off, (uintptr_t)area);
	memcpy(code + off, jump, sizeof(jump));
	return area;
}

TEST(insn_jump_keeps_registers_flags_red_zone)
{
	size_t len = (size_t)(insn_end - insn_subject), off = (size_t)(insn_at - insn_subject);
	size_t got;
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *area;
	uint64_t out[18];
	const uint64_t want[15] = {0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0x7777,
				   0x8888, 0x9999, 0xaaaa, 0xbbbb, 0xcccc, 0xdddd, 0xeeee, 0xffff};
	unsigned jl = 0;
	char why[160];

	CHECK(code != MAP_FAILED);
	trail__arch_insn_handler = on_insn;
	memcpy(code, insn_subject, len);
	/* the jump displaces the nop alone; nothing branches into it */
	CHECK_EQ(trail_arch_jump_check(code, len, (uintptr_t)code, (uintptr_t)code + off, &jl, why,
				       sizeof(why)), 0);
	CHECK_EQ(jl, 5);
	if (!(area = jump_probe(code, len, off, jl, 7, &got)))
		return;
	memset(out, 0, sizeof(out));
	((void (*)(uint64_t *))(void *)code)(out);
	CHECK_EQ(seen_insn.calls, 1);
	CHECK_EQ(seen_insn.idx, 7);
	/* the handler saw the registers of that point */
	CHECK_EQ(seen_insn.r.rax, 0x1111);
	CHECK_EQ(seen_insn.r.rbx, 0x2222);
	CHECK_EQ(seen_insn.r.rcx, 0x3333);
	CHECK_EQ(seen_insn.r.rdi, 0x6666);
	CHECK_EQ(seen_insn.r.rbp, 0x7777);
	CHECK_EQ(seen_insn.r.r11, 0xbbbb);
	CHECK_EQ(seen_insn.r.r15, 0xffff);
	CHECK(seen_insn.r.pad & 1); /* the flags, carry set */
	/* ... and its stack pointer: where out was pushed */
	CHECK_EQ(*(uint64_t *)seen_insn.sp, (uint64_t)(uintptr_t)out);
	/* the code found everything as it was */
	for (int i = 0; i < 15; i++)
		CHECK_EQ(out[i], want[i]);
	CHECK(out[15] & 1);
	CHECK_EQ(out[16], 0x1234);
	CHECK_EQ(out[17], 0x5678);
	/* a branch to the instruction itself meets the jump (and the probe):
	 * allowed; one into the displaced bytes after it is not */
	{
		/* 0: jmp +0 (to 2) or jmp +1 (to 3, inside); 2: nopl; 7: ret */
		uint8_t f[] = {0xeb, 0x00, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3};

		CHECK_EQ(trail_arch_jump_check(f, sizeof(f), 0x1000, 0x1002, &jl, why, sizeof(why)),
			 0);
		CHECK_EQ(jl, 5);
		f[1] = 0x01;
		CHECK_EQ(trail_arch_jump_check(f, sizeof(f), 0x1000, 0x1002, &jl, why, sizeof(why)),
			 -EXDEV);
		CHECK(strstr(why, "a branch into the 5 bytes") != NULL);
	}
	munmap(area, got);
	munmap(code, 4096);
}

/* ymm1 loaded before insn_avx_at, stored after: a handler that clobbers
 * the upper halves (vzeroupper, as libc's AVX string functions end) must
 * not change what the code stores */
__asm__(".text\n"
	".globl insn_avx, insn_avx_at, insn_avx_end\n"
	"insn_avx:\n"
	"  vmovdqu (%rdi), %ymm1\n"
	"insn_avx_at:\n"
	"  .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"  vmovdqu %ymm1, (%rsi)\n"
	"  vzeroupper\n"
	"  ret\n"
	"insn_avx_end:\n");
extern const char insn_avx[], insn_avx_at[], insn_avx_end[];

static void on_insn_clobber(uint64_t idx, const struct trail_arch_regs *regs, uintptr_t sp)
{
	(void)idx;
	(void)regs;
	(void)sp;
	seen_insn.calls++;
	__asm__ volatile("vpcmpeqd %%ymm1, %%ymm1, %%ymm1\n\tvzeroupper" ::: "xmm1");
}

TEST(insn_jump_keeps_the_vector_state)
{
	size_t len = (size_t)(insn_avx_end - insn_avx), off = (size_t)(insn_avx_at - insn_avx), got;
	uint8_t *code, *area;
	uint8_t in[32], out[32];

	if (!__builtin_cpu_supports("avx")) {
		fprintf(stderr, "  (no AVX on this CPU: nothing to check)\n");
		return;
	}
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	CHECK(code != MAP_FAILED);
	trail_arch_vector_init();
	trail__arch_insn_handler = on_insn_clobber;
	memcpy(code, insn_avx, len);
	if (!(area = jump_probe(code, len, off, 5, TRAIL_ARCH_INSN_VEC, &got)))
		return;
	for (int i = 0; i < 32; i++)
		in[i] = (uint8_t)(i * 7 + 1);
	memset(out, 0, sizeof(out));
	seen_insn.calls = 0;
	((void (*)(const uint8_t *, uint8_t *))(void *)code)(in, out);
	CHECK_EQ(seen_insn.calls, 1);
	CHECK(memcmp(in, out, 32) == 0); /* the upper 16 bytes too */
	munmap(area, got);
	munmap(code, 4096);
}

TEST(returns_of_a_function)
{
	/* xor %eax,%eax; test %edi,%edi; je +1; ret; ret */
	static const uint8_t two[] = {0x31, 0xc0, 0x85, 0xff, 0x74, 0x01, 0xc3, 0xc3};
	/* test %edi,%edi; je +5 (its own ret); jmp 0x2000 (out: a tail call); ret */
	static const uint8_t tail[] = {0x85, 0xff, 0x74, 0x05, 0xe9, 0xf7, 0x0f, 0x00, 0x00, 0xc3};
	/* jmp *%rax (no table before it) */
	static const uint8_t ind[] = {0xff, 0xe0, 0xc3};
	uintptr_t r[4];
	unsigned n = 9;
	char why[160];

	CHECK_EQ(trail_arch_returns(two, sizeof(two), 0x1000, r, 4, &n, why, sizeof(why)), 0);
	CHECK_EQ(n, 2);
	CHECK_EQ(r[0], 0x1006);
	CHECK_EQ(r[1], 0x1007);
	CHECK_EQ(trail_arch_returns(two, sizeof(two), 0x1000, r, 1, &n, why, sizeof(why)), -E2BIG);
	CHECK_EQ(trail_arch_returns(tail, sizeof(tail), 0x1000, r, 4, &n, why, sizeof(why)),
		 -EXDEV);
	CHECK(strstr(why, "+0x4 jmp") && strstr(why, "a tail call"));
	CHECK_EQ(trail_arch_returns(ind, sizeof(ind), 0x1000, r, 4, &n, why, sizeof(why)), -EXDEV);
	CHECK(strstr(why, "an indirect jump") != NULL);
	CHECK_EQ(trail_arch_returns(two, 6, 0x1000, r, 4, &n, why, sizeof(why)), -ENOENT);
}

TEST_MAIN(CHECK_T(sites_start_as_nops), CHECK_T(entry_hook_preserves_arguments_and_results),
	  CHECK_T(graph_hook_balances_and_preserves_results),
	  CHECK_T(longjmp_out_of_hooked_frames), CHECK_T(misaligned_stack_at_entry),
	  CHECK_T(stub_area_near_the_code), CHECK_T(stack_arguments_through_the_stub),
	  CHECK_T(jump_insn_encoding), CHECK_T(fault_safe_reads),
	  CHECK_T(insn_jump_keeps_registers_flags_red_zone), CHECK_T(returns_of_a_function),
	  CHECK_T(insn_jump_keeps_the_vector_state))
