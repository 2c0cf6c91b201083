/* SPDX-License-Identifier: MIT */
/*
 * test-mmio.c - MMIO tracing's decoder and emulator
 * (src/arch/x86_64/mmio.c) on byte arrays, with the CPU as the oracle:
 * each row's instruction is run natively (a page of code: the bytes, then
 * a ret, every general register loaded before and saved after, flags
 * too) against one copy of a data page, and emulated against another copy
 * from a ucontext holding the same registers; registers, arithmetic flags,
 * the data and %rip must come out the same. Then the refusals: each
 * instruction the emulator does not do (-ENOTSUP), every row cut short
 * (-EINVAL, at every length), prefixes the CPU ignores, and segment
 * overrides (the thread's FS base).
 */
#include <asm/prctl.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/arch.h"
#include "check.h"

/* what run_native loads and saves: the 16 registers in ModRM order (rsp's
 * slot unused), the flags, the code's address */
struct cpu {
	uint64_t g[16];
	uint64_t flags;
	uint64_t code;
};

void run_native(struct cpu *c);
__asm__(".text\n"
	".globl run_native\n"
	"run_native:\n"
	"push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
	"push %rdi\n"
	"push 128(%rdi)\n popfq\n"
	"mov 0(%rdi), %rax\n mov 8(%rdi), %rcx\n mov 16(%rdi), %rdx\n mov 24(%rdi), %rbx\n"
	"mov 40(%rdi), %rbp\n mov 48(%rdi), %rsi\n"
	"mov 64(%rdi), %r8\n mov 72(%rdi), %r9\n mov 80(%rdi), %r10\n mov 88(%rdi), %r11\n"
	"mov 96(%rdi), %r12\n mov 104(%rdi), %r13\n mov 112(%rdi), %r14\n mov 120(%rdi), %r15\n"
	"push 136(%rdi)\n"
	"mov 56(%rdi), %rdi\n"
	"call *(%rsp)\n"
	"lea 8(%rsp), %rsp\n" /* (lea: the flags left as the instruction left them) */
	"pushfq\n push %rdi\n"
	"mov 16(%rsp), %rdi\n"
	"mov %rax, 0(%rdi)\n mov %rcx, 8(%rdi)\n mov %rdx, 16(%rdi)\n mov %rbx, 24(%rdi)\n"
	"mov %rbp, 40(%rdi)\n mov %rsi, 48(%rdi)\n"
	"mov %r8, 64(%rdi)\n mov %r9, 72(%rdi)\n mov %r10, 80(%rdi)\n mov %r11, 88(%rdi)\n"
	"mov %r12, 96(%rdi)\n mov %r13, 104(%rdi)\n mov %r14, 112(%rdi)\n mov %r15, 120(%rdi)\n"
	"pop %rax\n mov %rax, 56(%rdi)\n"
	"pop %rax\n mov %rax, 128(%rdi)\n"
	"pop %rdi\n"
	"pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n"
	"ret\n");

#define PAGE 4096
#define F_ARITH 0x8d5ull
#define F_AF 0x10ull

struct row {
	const char *name;
	uint8_t code[16];
	unsigned n;
	int rip_at;  /* offset of a disp32 to DATA + 0x100 to fill in (0: none) */
	int abs_at;  /* offset of an 8-byte absolute address of DATA + 0x30 */
	unsigned width, kind;
	int logic;   /* AF undefined (AND OR XOR TEST): not compared */
};

#define L TRAIL_ARCH_MMIO_LOAD
#define S TRAIL_ARCH_MMIO_STORE
#define M TRAIL_ARCH_MMIO_RMW

/* the registers (ModRM order): rbx, rsi, r12, r13, r14 point into the
 * data page, rcx and r9 are small indexes, the others patterns */
static const struct row rows[] = {
	{"mov %al,(%rbx)", {0x88, 0x03}, 2, 0, 0, 1, S, 0},
	{"mov %ah,(%rbx)", {0x88, 0x23}, 2, 0, 0, 1, S, 0},
	{"mov %sil,(%rbx) (REX: not dh)", {0x40, 0x88, 0x33}, 3, 0, 0, 1, S, 0},
	{"mov %r8b,5(%rbx)", {0x44, 0x88, 0x43, 0x05}, 4, 0, 0, 1, S, 0},
	{"mov %ax,2(%rbx)", {0x66, 0x89, 0x43, 0x02}, 4, 0, 0, 2, S, 0},
	{"mov %eax,4(%rbx)", {0x89, 0x43, 0x04}, 3, 0, 0, 4, S, 0},
	{"mov %rax,8(%rbx)", {0x48, 0x89, 0x43, 0x08}, 4, 0, 0, 8, S, 0},
	{"mov %r15,0x10(%rbx,%rcx,4)", {0x4c, 0x89, 0x7c, 0x8b, 0x10}, 5, 0, 0, 8, S, 0},
	{"mov %rax,(%rbx,%r9,8)", {0x4a, 0x89, 0x04, 0xcb}, 4, 0, 0, 8, S, 0},
	{"mov %eax,(%r14)", {0x41, 0x89, 0x06}, 3, 0, 0, 4, S, 0},
	{"mov %eax,(%rbx,%r9,8) (REX.X)", {0x42, 0x89, 0x04, 0xcb}, 4, 0, 0, 4, S, 0},
	{"mov %eax,(%r12,%r9,8) (REX.XB)", {0x43, 0x89, 0x04, 0xcc}, 4, 0, 0, 4, S, 0},
	{"mov %r8d,(%rbx,%r9,8) (REX.RX)", {0x46, 0x89, 0x04, 0xcb}, 4, 0, 0, 4, S, 0},
	{"mov %r15,(%r12,%r9,8) (REX.WRXB)", {0x4f, 0x89, 0x3c, 0xcc}, 4, 0, 0, 8, S, 0},
	{"mov (%r12,%r9,8),%r11d (REX.RXB)", {0x47, 0x8b, 0x1c, 0xcc}, 4, 0, 0, 4, L, 0},
	{"mov %ax,(%rbx) SIB index 100 without REX.X: none", {0x66, 0x89, 0x04, 0x63}, 4, 0, 0, 2, S, 0},
	{"mov %eax,-0x20(%rsi) disp32", {0x89, 0x86, 0xe0, 0xff, 0xff, 0xff}, 6, 0, 0, 4, S, 0},
	{"mov (%rbx),%al", {0x8a, 0x03}, 2, 0, 0, 1, L, 0},
	{"mov (%rbx),%ah", {0x8a, 0x23}, 2, 0, 0, 1, L, 0},
	{"mov (%rbx),%dil", {0x40, 0x8a, 0x3b}, 3, 0, 0, 1, L, 0},
	{"mov 4(%rbx),%eax (zero-extends)", {0x8b, 0x43, 0x04}, 3, 0, 0, 4, L, 0},
	{"mov 2(%rbx),%ax (keeps the rest)", {0x66, 0x8b, 0x43, 0x02}, 4, 0, 0, 2, L, 0},
	{"mov 8(%rbx),%rax", {0x48, 0x8b, 0x43, 0x08}, 4, 0, 0, 8, L, 0},
	{"mov 8(%rbx),%r13", {0x4c, 0x8b, 0x6b, 0x08}, 4, 0, 0, 8, L, 0},
	{"movzbl (%rbx),%eax", {0x0f, 0xb6, 0x03}, 3, 0, 0, 1, L, 0},
	{"movzbw (%rbx),%ax", {0x66, 0x0f, 0xb6, 0x03}, 4, 0, 0, 1, L, 0},
	{"movswq 2(%rbx),%rax", {0x48, 0x0f, 0xbf, 0x43, 0x02}, 5, 0, 0, 2, L, 0},
	{"movsbl (%rbx),%ecx", {0x0f, 0xbe, 0x0b}, 3, 0, 0, 1, L, 0},
	{"movzwl 2(%rbx),%r10d", {0x44, 0x0f, 0xb7, 0x53, 0x02}, 5, 0, 0, 2, L, 0},
	{"movslq 4(%rbx),%rax", {0x48, 0x63, 0x43, 0x04}, 4, 0, 0, 4, L, 0},
	{"movsxd without REX.W", {0x63, 0x43, 0x04}, 3, 0, 0, 4, L, 0},
	{"movb $0x7f,(%rbx)", {0xc6, 0x03, 0x7f}, 3, 0, 0, 1, S, 0},
	{"movw $0x1234,2(%rbx)", {0x66, 0xc7, 0x43, 0x02, 0x34, 0x12}, 6, 0, 0, 2, S, 0},
	{"movl $0xdeadbeef,4(%rbx)", {0xc7, 0x43, 0x04, 0xef, 0xbe, 0xad, 0xde}, 7, 0, 0, 4, S, 0},
	{"movq $-2,8(%rbx)", {0x48, 0xc7, 0x43, 0x08, 0xfe, 0xff, 0xff, 0xff}, 8, 0, 0, 8, S, 0},
	{"movq $imm,rip", {0x48, 0xc7, 0x05, 0, 0, 0, 0, 0x78, 0x56, 0x34, 0x92}, 11, 3, 0, 8, S, 0},
	{"mov rip,%eax", {0x8b, 0x05, 0, 0, 0, 0}, 6, 2, 0, 4, L, 0},
	{"movl $1,0x10(%r12) (SIB)", {0x41, 0xc7, 0x44, 0x24, 0x10, 1, 0, 0, 0}, 9, 0, 0, 4, S, 0},
	{"movl $2,0(%r13) (disp8)", {0x41, 0xc7, 0x45, 0x00, 2, 0, 0, 0}, 8, 0, 0, 4, S, 0},
	{"movabs moffs,%al", {0xa0, 0, 0, 0, 0, 0, 0, 0, 0}, 9, 0, 1, 1, L, 0},
	{"movabs %rax,moffs", {0x48, 0xa3, 0, 0, 0, 0, 0, 0, 0, 0}, 10, 0, 2, 8, S, 0},
	{"mov moffs,%ax", {0x66, 0xa1, 0, 0, 0, 0, 0, 0, 0, 0}, 10, 0, 2, 2, L, 0},
	{"or %eax,(%rbx)", {0x09, 0x03}, 2, 0, 0, 4, M, 1},
	{"or (%rbx),%eax", {0x0b, 0x03}, 2, 0, 0, 4, L, 1},
	{"orl $0x100,4(%rbx)", {0x81, 0x4b, 0x04, 0x00, 0x01, 0x00, 0x00}, 7, 0, 0, 4, M, 1},
	{"andb $0xf,(%rbx)", {0x80, 0x23, 0x0f}, 3, 0, 0, 1, M, 1},
	{"and %ah,(%rbx)", {0x20, 0x23}, 2, 0, 0, 1, M, 1},
	{"subq $5,8(%rbx)", {0x48, 0x83, 0x6b, 0x08, 0x05}, 5, 0, 0, 8, M, 0},
	{"add %rax,8(%rbx)", {0x48, 0x01, 0x43, 0x08}, 4, 0, 0, 8, M, 0},
	{"add 4(%rbx),%eax", {0x03, 0x43, 0x04}, 3, 0, 0, 4, L, 0},
	{"sub 4(%rbx),%eax", {0x2b, 0x43, 0x04}, 3, 0, 0, 4, L, 0},
	{"sub (%rbx),%dl", {0x2a, 0x13}, 2, 0, 0, 1, L, 0},
	{"xor %eax,4(%rbx)", {0x31, 0x43, 0x04}, 3, 0, 0, 4, M, 1},
	{"addw $-1,2(%rbx)", {0x66, 0x83, 0x43, 0x02, 0xff}, 5, 0, 0, 2, M, 0},
	{"add $0x7f,(%rbx) (overflow)", {0x80, 0x03, 0x7f}, 3, 0, 0, 1, M, 0},
	{"cmpl $0x10,4(%rbx)", {0x83, 0x7b, 0x04, 0x10}, 4, 0, 0, 4, L, 0},
	{"cmp %eax,4(%rbx)", {0x39, 0x43, 0x04}, 3, 0, 0, 4, L, 0},
	{"cmp (%rbx),%al", {0x3a, 0x03}, 2, 0, 0, 1, L, 0},
	{"cmpq $-1,8(%rbx)", {0x48, 0x83, 0x7b, 0x08, 0xff}, 5, 0, 0, 8, L, 0},
	{"test %al,(%rbx)", {0x84, 0x03}, 2, 0, 0, 1, L, 1},
	{"test %rax,8(%rbx)", {0x48, 0x85, 0x43, 0x08}, 4, 0, 0, 8, L, 1},
	{"testb $0x80,1(%rbx)", {0xf6, 0x43, 0x01, 0x80}, 4, 0, 0, 1, L, 1},
	{"testl $0x80000000,4(%rbx)", {0xf7, 0x43, 0x04, 0, 0, 0, 0x80}, 7, 0, 0, 4, L, 1},
	/* prefixes the CPU ignores, or whose order matters */
	{"ds: mov %eax,(%rbx)", {0x3e, 0x89, 0x03}, 3, 0, 0, 4, S, 0},
	{"cs: mov (%rbx),%eax", {0x2e, 0x8b, 0x03}, 3, 0, 0, 4, L, 0},
	{"es ss: mov (%rbx),%eax", {0x26, 0x36, 0x8b, 0x03}, 4, 0, 0, 4, L, 0},
	{"xrelease mov %eax,(%rbx)", {0xf3, 0x89, 0x03}, 3, 0, 0, 4, S, 0},
	{"xacquire mov %al,(%rbx)", {0xf2, 0x88, 0x03}, 3, 0, 0, 1, S, 0},
	{"66 REX.W: 64-bit", {0x66, 0x48, 0x89, 0x03}, 4, 0, 0, 8, S, 0},
	{"REX.W 66: REX ignored, 16-bit", {0x48, 0x66, 0x89, 0x03}, 4, 0, 0, 2, S, 0},
	{"REX REX.W: the last counts", {0x4c, 0x48, 0x89, 0x03}, 4, 0, 0, 8, S, 0},
	{"REX.B 66 on a load: ignored", {0x41, 0x66, 0x8b, 0x03}, 4, 0, 0, 2, L, 0},
};

static uint64_t init_reg(unsigned i, uintptr_t data)
{
	switch (i) {
	case 1: return 3;                   /* rcx: an index */
	case 3: return data + 0x40;         /* rbx */
	case 6: return data + 0x80;         /* rsi */
	case 9: return 2;                   /* r9: an index */
	case 12: return data + 0xc0;        /* r12 */
	case 13: return data + 0xd0;        /* r13 */
	case 14: return data + 0xa0;        /* r14 */
	default: return 0x8877665544332211ull ^ (0x0101010101010101ull * i);
	}
}

static const int greg_of[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
				REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
				REG_R12, REG_R13, REG_R14, REG_R15};

static void fill(uint8_t *d)
{
	for (unsigned i = 0; i < PAGE; i++)
		d[i] = (uint8_t)(i * 37 + 0x91);
}

TEST(emulated_as_the_cpu_runs_it)
{
	uint8_t *code = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *data = code + PAGE, emu[PAGE];

	CHECK(code != MAP_FAILED);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *w = &rows[r];
		for (unsigned fl = 0; fl < 2; fl++) {
			struct trail_arch_mmio_op op;
			struct cpu c;
			ucontext_t uc;
			uint64_t rd, wr;
			int bad = 0;

			memcpy(code, w->code, w->n);
			code[w->n] = 0xc3;
			if (w->rip_at) {
				int32_t d = (int32_t)((intptr_t)(data + 0x100) - (intptr_t)(code + w->n));

				memcpy(code + w->rip_at, &d, 4);
			}
			if (w->abs_at) {
				uint64_t a = (uint64_t)(uintptr_t)(data + 0x30);

				memcpy(code + w->abs_at, &a, 8);
			}
			fill(data);
			fill(emu);
			memset(&c, 0, sizeof(c));
			memset(&uc, 0, sizeof(uc));
			for (unsigned i = 0; i < 16; i++) {
				c.g[i] = i == 4 ? 0 : init_reg(i, (uintptr_t)data);
				if (i != 4)
					uc.uc_mcontext.gregs[greg_of[i]] = (greg_t)c.g[i];
			}
			/* flags in: all arithmetic ones clear, then all set */
			c.flags = 0x202 | (fl ? F_ARITH : 0);
			uc.uc_mcontext.gregs[REG_EFL] = (greg_t)c.flags;
			uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)code;
			c.code = (uint64_t)(uintptr_t)code;

			CHECK_EQ(trail_arch_mmio_decode(code, w->n + 1, &uc, &op), 0);
			if (op.len != w->n || op.width != w->width || op.kind != w->kind ||
			    op.addr < (uintptr_t)data || op.addr + op.width > (uintptr_t)data + PAGE) {
				fprintf(stderr, "  %s: len %u width %u kind %u addr %#lx\n", w->name,
					op.len, op.width, op.kind, (unsigned long)op.addr);
				check_failures++;
				continue;
			}
			trail_arch_mmio_emulate(&op, &uc, (uintptr_t)emu + (op.addr - (uintptr_t)data),
						&rd, &wr);
			run_native(&c);
			for (unsigned i = 0; i < 16; i++)
				if (i != 4 && c.g[i] != (uint64_t)uc.uc_mcontext.gregs[greg_of[i]]) {
					fprintf(stderr, "  %s: reg %u native %#llx emulated %#llx\n",
						w->name, i, (unsigned long long)c.g[i],
						(unsigned long long)uc.uc_mcontext.gregs[greg_of[i]]);
					bad = 1;
				}
			{
				uint64_t m = F_ARITH & ~(w->logic ? F_AF : 0);
				uint64_t e = (uint64_t)uc.uc_mcontext.gregs[REG_EFL];

				if ((c.flags & m) != (e & m)) {
					fprintf(stderr, "  %s (flags in %#x): flags native %#llx emulated %#llx\n",
						w->name, fl, (unsigned long long)(c.flags & m),
						(unsigned long long)(e & m));
					bad = 1;
				}
			}
			if (memcmp(data, emu, PAGE)) {
				fprintf(stderr, "  %s: the data differ\n", w->name);
				bad = 1;
			}
			if ((uintptr_t)uc.uc_mcontext.gregs[REG_RIP] != (uintptr_t)code + w->n) {
				fprintf(stderr, "  %s: rip\n", w->name);
				bad = 1;
			}
			check_failures += bad;
		}
	}
	munmap(code, 2 * PAGE);
}

/* every row cut short, at every length: never a decode of bytes that are
 * not there */
TEST(truncated_refused)
{
	ucontext_t uc;
	struct trail_arch_mmio_op op;

	memset(&uc, 0, sizeof(uc));
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		for (unsigned k = 0; k < rows[r].n; k++) {
			int rc = trail_arch_mmio_decode(rows[r].code, k, &uc, &op);

			if (rc != -EINVAL)
				fprintf(stderr, "  %s cut at %u: %d\n", rows[r].name, k, rc);
			CHECK_EQ(rc, -EINVAL);
		}
	/* prefixes alone, up to the 15-byte limit */
	{
		uint8_t p[20];

		memset(p, 0x66, sizeof(p));
		CHECK_EQ(trail_arch_mmio_decode(p, 4, &uc, &op), -EINVAL);
		/* 14 prefixes and a 2-byte mov: 16 bytes, one too many */
		p[14] = 0x89;
		p[15] = 0x03;
		CHECK_EQ(trail_arch_mmio_decode(p, 16, &uc, &op), -EINVAL);
		/* 13 and the mov: 15, allowed */
		CHECK_EQ(trail_arch_mmio_decode(p + 1, 15, &uc, &op), 0);
		CHECK_EQ(op.len, 15);
		CHECK_EQ(op.width, 2);
	}
}

/* what is not emulated says so, never a guess */
TEST(unsupported_refused)
{
	static const struct {
		const char *name;
		uint8_t code[8];
		unsigned n;
	} no[] = {
		{"lock or", {0xf0, 0x09, 0x03}, 3},
		{"rep movsb", {0xf3, 0xa4}, 2},
		{"movsb", {0xa4}, 1},
		{"stosl", {0xab}, 1},
		{"movups store", {0x0f, 0x11, 0x03}, 3},
		{"movups load", {0x0f, 0x10, 0x03}, 3},
		{"movdqa store", {0x66, 0x0f, 0x7f, 0x03}, 4},
		{"vmovdqa (VEX)", {0xc5, 0xf9, 0x7f, 0x03}, 4},
		{"xchg", {0x87, 0x03}, 2},
		{"adc", {0x11, 0x03}, 2},
		{"adc imm /2", {0x83, 0x53, 0x04, 0x01}, 4},
		{"sbb imm /3", {0x83, 0x5b, 0x04, 0x01}, 4},
		{"C7 /1", {0xc7, 0x4b, 0x04, 1, 2, 3, 4}, 7},
		{"F7 /2 (not)", {0xf7, 0x53, 0x04}, 3},
		{"register operand", {0x89, 0xc3}, 2},
		{"F3 0F B6", {0xf3, 0x0f, 0xb6, 0x03}, 4},
		{"F3 on add", {0xf3, 0x01, 0x03}, 3},
		{"inc (FF /0)", {0xff, 0x03}, 2},
		{"cmpxchg", {0x0f, 0xb1, 0x03}, 3},
		{"push (%rbx)", {0xff, 0x33}, 2},
	};
	ucontext_t uc;
	struct trail_arch_mmio_op op;

	memset(&uc, 0, sizeof(uc));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		int rc = trail_arch_mmio_decode(no[i].code, no[i].n, &uc, &op);

		if (rc != -ENOTSUP)
			fprintf(stderr, "  %s: %d\n", no[i].name, rc);
		CHECK_EQ(rc, -ENOTSUP);
	}
}

/* segment overrides: FS and GS add the thread's base; 67 truncates the
 * address to 32 bits */
TEST(segments_and_address_size)
{
	static const uint8_t fs[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0};
	static const uint8_t a32[] = {0x67, 0x89, 0x03};
	struct trail_arch_mmio_op op;
	unsigned long base = 0;
	ucontext_t uc;

	memset(&uc, 0, sizeof(uc));
	CHECK_EQ(syscall(SYS_arch_prctl, ARCH_GET_FS, &base), 0);
	CHECK_EQ(trail_arch_mmio_decode(fs, sizeof(fs), &uc, &op), 0);
	CHECK_EQ(op.addr, base + 0x10);
	CHECK_EQ(op.len, 9);
	CHECK_EQ(op.width, 8);
	{
		static const uint8_t gs[] = {0x65, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0};

		CHECK_EQ(syscall(SYS_arch_prctl, ARCH_GET_GS, &base), 0);
		CHECK_EQ(trail_arch_mmio_decode(gs, sizeof(gs), &uc, &op), 0);
		CHECK_EQ(op.addr, base + 0x20);
		CHECK_EQ(op.width, 4);
	}
	uc.uc_mcontext.gregs[REG_RBX] = (greg_t)0x123456789abcull;
	CHECK_EQ(trail_arch_mmio_decode(a32, sizeof(a32), &uc, &op), 0);
	CHECK_EQ(op.addr, 0x56789abcull);
	CHECK_EQ(op.len, 3);
}

TEST_MAIN(CHECK_T(emulated_as_the_cpu_runs_it), CHECK_T(truncated_refused),
	  CHECK_T(unsupported_refused), CHECK_T(segments_and_address_size))
