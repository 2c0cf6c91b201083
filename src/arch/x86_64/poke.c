/* SPDX-License-Identifier: MIT */
/*
 * poke.c - changing code other threads may be executing (x86_64): the
 * breakpoint-first sequence of trail_arch_poke_live() (see arch.h) and the
 * SIGTRAP handler that keeps threads meeting a half-written site safe.
 *
 * Core serialization: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE)
 * makes every thread of the process execute a serializing instruction, so
 * none keeps a stale decoded copy of the bytes; without it (kernels before
 * 4.16) we fall back to the plain membarrier plus a pause, which is what
 * user-space JITs rely on in practice.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../arch.h"

/* glibc's own: libtrail's handlers are not counted as the program's
 * (src/lib/signals.c) */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);

#define INT3 0xcc

static struct sigaction prev_trap;
static int trap_installed;
static int sync_core = -1; /* 1: SYNC_CORE registered, 0: not available */

static void serialize(void)
{
	if (sync_core < 0)
		sync_core = syscall(SYS_membarrier,
				    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0;
	if (sync_core) {
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
	} else {
		struct timespec ts = {0, 1000000};

		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
		nanosleep(&ts, NULL);
	}
}

static uintptr_t watch_at; /* the int3 of trail_arch_watch, or 0 */
static void (*watch_cb)(void *uc);
static int (*perf_trap)(void *si, void *uc); /* trail_arch_perf_trap's */

#define SI_TRAP_PERF 6 /* (TRAP_PERF: a perf event's sigtrap, Linux 5.13) */

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1, resume;
	int (*pt)(void *, void *) = __atomic_load_n(&perf_trap, __ATOMIC_ACQUIRE);

	/* a watchpoint's (its ip is past the access, not at an int3) */
	if (si->si_code == SI_TRAP_PERF && pt && pt(si, ucv))
		return;

	if (ip == __atomic_load_n(&watch_at, __ATOMIC_ACQUIRE) && ip) {
		/* the watched function: our callback, then its `ret` */
		uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];

		watch_cb(ucv);
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t) * (const uintptr_t *)sp;
		uc->uc_mcontext.gregs[REG_RSP] = (greg_t)(sp + 8);
		return;
	}

	if (trail__arch_insn_trap(ucv))
		return;
	if ((resume = trail__arch_site_resume(ip))) {
		/* poked since: run what is there now; still mid-poke: run what
		 * an unpatched site does, from elsewhere (one event is lost,
		 * never the thread); a breakpoint site: its stub */
		if (*(const volatile uint8_t *)ip != INT3)
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)ip;
		else
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)resume;
		return;
	}
	/* not ours: whatever the program had */
	if (prev_trap.sa_flags & SA_SIGINFO) {
		prev_trap.sa_sigaction(sig, si, ucv);
	} else if (prev_trap.sa_handler != SIG_IGN && prev_trap.sa_handler != SIG_DFL) {
		prev_trap.sa_handler(sig);
	} else {
		__sigaction(SIGTRAP, &prev_trap, NULL); /* and re-take the trap */
	}
}

static int install_trap(void)
{
	struct sigaction sa;

	if (trap_installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (__sigaction(SIGTRAP, &sa, &prev_trap) < 0)
		return -errno;
	trap_installed = 1;
	return 0;
}

static int prot(uintptr_t addr, size_t len, int writable);

void trail_arch_regs_from_uc(const void *ucv, struct trail_arch_regs *r, uintptr_t *sp,
			     uintptr_t *ip)
{
	const greg_t *g = ((const ucontext_t *)ucv)->uc_mcontext.gregs;

	*r = (struct trail_arch_regs){
		.r11 = (uint64_t)g[REG_R11], .r10 = (uint64_t)g[REG_R10],
		.r9 = (uint64_t)g[REG_R9], .r8 = (uint64_t)g[REG_R8],
		.rcx = (uint64_t)g[REG_RCX], .rdx = (uint64_t)g[REG_RDX],
		.rsi = (uint64_t)g[REG_RSI], .rdi = (uint64_t)g[REG_RDI],
		.rax = (uint64_t)g[REG_RAX], .rbx = (uint64_t)g[REG_RBX],
		.rbp = (uint64_t)g[REG_RBP], .r12 = (uint64_t)g[REG_R12],
		.r13 = (uint64_t)g[REG_R13], .r14 = (uint64_t)g[REG_R14],
		.r15 = (uint64_t)g[REG_R15],
	};
	*sp = (uintptr_t)g[REG_RSP];
	*ip = (uintptr_t)g[REG_RIP];
}

int trail_arch_perf_trap(int (*fn)(void *si, void *uc))
{
	int r = install_trap();

	if (!r)
		__atomic_store_n(&perf_trap, fn, __ATOMIC_RELEASE);
	return r;
}

int trail_arch_watch(uintptr_t fn, void (*cb)(void *uc))
{
	const uint8_t *p = (const uint8_t *)fn;
	uintptr_t at;
	int r;

	if (!fn)
		return -ENOTSUP;
	/* endbr64, then ret: nothing but a return to emulate */
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;
	if (p[0] != 0xc3)
		return -ENOTSUP;
	at = (uintptr_t)p;
	if (watch_at && watch_at != at)
		return -EBUSY; /* one watch: the loader has one such function */
	if ((r = install_trap()))
		return r;
	if ((r = prot(at, 1, 1)))
		return r;
	watch_cb = cb;
	__atomic_store_n(&watch_at, at, __ATOMIC_RELEASE);
	__atomic_store_n((uint8_t *)at, INT3, __ATOMIC_RELEASE);
	prot(at, 1, 0);
	serialize();
	return 0;
}

void trail_arch_unwatch(void)
{
	uintptr_t at = watch_at;

	if (!at || prot(at, 1, 1))
		return;
	__atomic_store_n((uint8_t *)at, 0xc3, __ATOMIC_RELEASE);
	prot(at, 1, 0);
	serialize();
	/* watch_at stays: a thread that met the int3 before the ret came
	 * back is still handled (the callback then has nothing to do) */
}

/* make [addr, addr + len) writable (or back to read + exec) */
static int prot(uintptr_t addr, size_t len, int writable)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = addr & ~(page - 1);
	size_t span = ((addr + len + page - 1) & ~(page - 1)) - a;

	return mprotect((void *)a, span, PROT_READ | PROT_EXEC | (writable ? PROT_WRITE : 0))
		       ? -errno : 0;
}

static int poke(const struct trail_arch_poke *p, size_t n, int (*step)(void));

int trail_arch_poke_live(const struct trail_arch_poke *p, size_t n)
{
	return poke(p, n, NULL);
}

int trail_arch_poke_stepped(const struct trail_arch_poke *p, size_t n, int (*step)(void))
{
	return poke(p, n, step);
}

int trail_arch_poke_bytes(const struct trail_arch_poke *p, size_t n)
{
	int r = install_trap();

	for (size_t i = 0; !r && i < n; i++) {
		if ((r = prot(p[i].addr, 1, 1)))
			break;
		__atomic_store_n((uint8_t *)p[i].addr, p[i].bytes[0], __ATOMIC_RELEASE);
		prot(p[i].addr, 1, 0);
	}
	serialize();
	return r;
}

/* The pages of a batch's sites made writable (or back), a run of sites
 * on adjacent pages (p sorted by address; a page without a site, or an
 * address lower than the last, ends a run) in one call: a mprotect per
 * site split the text's mapping and merged it again every time
 * (thousands of functions patched and unpatched while a server waits in
 * its signal handler). Only pages holding sites change: a batch spans
 * objects, and between two of them lie others' data and holes. */
static int prot_sites(const struct trail_arch_poke *p, size_t n, int writable)
{
	int r = 0;

	for (size_t i = 0; i < n && !r;) {
		uintptr_t lo, hi;

		i = trail_arch_page_run(p, n, i, 0, &lo, &hi);
		r = prot(lo, hi - lo, writable);
	}
	return r;
}

static int poke(const struct trail_arch_poke *p, size_t n, int (*step)(void))
{
	uint8_t one[64], *first = one;
	int r = install_trap();

	if (r)
		return r;
	/* (a big batch's first bytes mmap'ed: no more of a signal handler's
	 * stack) */
	if (step && n > sizeof(one) &&
	    (first = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			  0)) == MAP_FAILED)
		return -ENOMEM;
	if ((r = prot_sites(p, n, 1)))
		goto out;
	/* 1: the breakpoints */
	for (size_t i = 0; i < n; i++) {
		if (step)
			first[i] = *(const uint8_t *)p[i].addr;
		__atomic_store_n((uint8_t *)p[i].addr, INT3, __ATOMIC_RELEASE);
	}
	serialize();
	/* 1b: nobody left inside a multi-instruction site */
	if (step && (r = step())) {
		for (size_t i = 0; i < n; i++)
			__atomic_store_n((uint8_t *)p[i].addr, first[i], __ATOMIC_RELEASE);
		serialize();
		goto out;
	}
	/* 2: the tails, which no thread can be executing: each site held one
	 * instruction starting at byte 0, now a breakpoint */
	for (size_t i = 0; i < n; i++)
		memcpy((uint8_t *)p[i].addr + 1, p[i].bytes + 1, TRAIL_ARCH_SITE_SIZE - 1);
	serialize();
	/* 3: the first bytes */
	for (size_t i = 0; i < n; i++)
		__atomic_store_n((uint8_t *)p[i].addr, p[i].bytes[0], __ATOMIC_RELEASE);
	serialize();
out:
	prot_sites(p, n, 0);
	if (first != one)
		munmap(first, n);
	return r;
}
