/* SPDX-License-Identifier: MIT */
/*
 * signals.c - which calls run in signal handlers, for --nest: ftrace's
 * funcgraph-irqs, with signal handlers as the interrupts of a process.
 *
 * libtrail interposes sigaction(), signal(), bsd_signal() and
 * sysv_signal() (exported under glibc's version, libtrail.map, so the
 * program's versioned references bind here first): a handler the program
 * installs is kept in a table and the kernel gets our wrapper, which
 * counts the thread's handler nesting level around the call. Queries get
 * the program's handler back, as it gave it. A handler that leaves by
 * siglongjmp never returns to the wrapper: the level is corrected at the
 * next hooked call, whose stack pointer is then above the wrapper's frame
 * (a handler on an alternate stack placed above the thread's stack, left
 * that way, keeps counting until the thread's next handler returns).
 * Handlers installed before libtrail was loaded (-P on a program without
 * it) are not seen: their calls count as level 0. libtrail's own handlers
 * go straight to glibc (__sigaction), except the control handler of a TSan
 * build (trail__sigaction_sanitizer).
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "internal.h"

/* Sanitizer runtimes install their own handlers through sigaction while
 * they start, before they can take instrumented calls: nothing here is
 * instrumented for them. */
#define UNINSTRUMENTED __attribute__((no_sanitize("thread", "address", "undefined")))

/* Signal sets edited with bits of our own, not libc's sigaddset and
 * sigdelset: the interposers below run on the program's calls, and a
 * probe on libc's sigdelset must see the program's own calls only (glibc's
 * signal() does not call it). glibc's sigset_t: words of bits, signal n
 * at bit n - 1. */
#define SET_BITS (8 * sizeof(unsigned long))
UNINSTRUMENTED static inline int set_has(const sigset_t *s, int sig)
{
	return (int)((s->__val[(unsigned)(sig - 1) / SET_BITS] >> ((unsigned)(sig - 1) % SET_BITS)) & 1);
}

UNINSTRUMENTED static inline void set_del(sigset_t *s, int sig)
{
	s->__val[(unsigned)(sig - 1) / SET_BITS] &= ~(1ul << ((unsigned)(sig - 1) % SET_BITS));
}

UNINSTRUMENTED static inline void set_add(sigset_t *s, int sig)
{
	s->__val[(unsigned)(sig - 1) / SET_BITS] |= 1ul << ((unsigned)(sig - 1) % SET_BITS);
}

__thread struct trail_siglevel trail__sig __attribute__((tls_model("initial-exec")));

/* the program's handler of each signal: its address, SA_SIGINFO and
 * SA_RESETHAND as two high bits (user addresses stay below 2^47), one
 * word so a handler and its calling convention change together */
#define UH_SIGINFO (1ull << 63)
#define UH_RESETHAND (1ull << 62)
#define UH_FN(w) ((uintptr_t)((w) & ~(UH_SIGINFO | UH_RESETHAND)))
static uint64_t uh[_NSIG];

/* the handlers installed before libtrail lost SIGTRAP from their masks
 * (allow_traps) */
static int traps;
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
static sigmask_fn next_procmask, next_pthmask; /* find_next() sets them */
int sigprocmask(int how, const sigset_t *set, sigset_t *old);
int pthread_sigmask(int how, const sigset_t *set, sigset_t *old);

int (*trail__mmio_fault)(void *si, void *uc);

/* SIGSEGV and SIGBUS always reach wrapper once probes read memory */
static uint32_t guarded; /* bits: signal numbers */

/* (uninstrumented as all wrapper runs: under TSan the kernel may run it in
 * a thread TSan has not set up yet, where TSan's own handler, which wrapper
 * calls, copes but an instrumented function entry crashes) */
UNINSTRUMENTED static int is_guarded(int sig)
{
	return (sig == SIGSEGV || sig == SIGBUS) &&
	       (__atomic_load_n(&guarded, __ATOMIC_ACQUIRE) >> sig & 1);
}

static int next(int sig, const struct sigaction *act, struct sigaction *oact);

/* A fault (or a sent SIGSEGV/SIGBUS) that is not a probe's, for a program
 * without a handler: what the kernel would have done. */
UNINSTRUMENTED static void unhandled(int sig, const siginfo_t *si, uintptr_t fn)
{
	struct sigaction dfl;

	if (fn == (uintptr_t)SIG_IGN && si->si_code <= 0)
		return; /* sent, and ignored */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	next(sig, &dfl, NULL); /* a fault is taken again, and kills */
	if (si->si_code <= 0)
		raise(sig);
}

UNINSTRUMENTED static void wrapper(int sig, siginfo_t *si, void *uc)
{
	uint64_t w = sig > 0 && sig < _NSIG ? __atomic_load_n(&uh[sig], __ATOMIC_ACQUIRE) : 0;
	uintptr_t fn = UH_FN(w);
	uint32_t l = trail__sig.level;
	int (*mf)(void *, void *);

	if ((sig == SIGSEGV || sig == SIGBUS) && trail_arch_fault_fixup(uc))
		return; /* a probe's read: it returns -EFAULT */
	if (sig == SIGSEGV && (mf = __atomic_load_n(&trail__mmio_fault, __ATOMIC_ACQUIRE)) &&
	    mf(si, uc))
		return; /* an access to a region --mmio traces (fmmio.c) */
	if (is_guarded(sig) && (fn == (uintptr_t)SIG_DFL || fn == (uintptr_t)SIG_IGN)) {
		unhandled(sig, si, fn);
		return;
	}

	if (w & UH_RESETHAND) /* the kernel has put SIG_DFL back */
		__atomic_store_n(&uh[sig], (uint64_t)(uintptr_t)SIG_DFL, __ATOMIC_RELEASE);
	if (l < TRAIL_SIG_LEVELS)
		trail__sig.sp[l] = (uintptr_t)__builtin_frame_address(0);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	trail__sig.level = l + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (fn == (uintptr_t)SIG_DFL || fn == (uintptr_t)SIG_IGN)
		; /* changed while this signal was being delivered */
	else if (w & UH_SIGINFO)
		((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
	else
		((void (*)(int))fn)(sig);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	trail__sig.level = l;
}

/* The next sigaction in symbol lookup order: libc's, or a sanitizer's
 * (TSan defers handlers to safe points: it must see ours, not run the
 * program's own straight from the kernel), or another interposer's. Found
 * by our constructor; before it (a sanitizer starting), glibc's. */
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn next_sigaction;

__attribute__((constructor(101))) static void find_next(void)
{
	void *p = dlsym(RTLD_NEXT, "sigaction");

	if (p && p != (void *)sigaction)
		__atomic_store_n(&next_sigaction, (sigaction_fn)p, __ATOMIC_RELEASE);
	if ((p = dlsym(RTLD_NEXT, "sigprocmask")) && p != (void *)sigprocmask)
		__atomic_store_n(&next_procmask, (sigmask_fn)p, __ATOMIC_RELEASE);
	if ((p = dlsym(RTLD_NEXT, "pthread_sigmask")) && p != (void *)pthread_sigmask)
		__atomic_store_n(&next_pthmask, (sigmask_fn)p, __ATOMIC_RELEASE);
}

UNINSTRUMENTED static int next(int sig, const struct sigaction *act, struct sigaction *oact)
{
	sigaction_fn f = __atomic_load_n(&next_sigaction, __ATOMIC_ACQUIRE);

	return f ? f(sig, act, oact) : __sigaction(sig, act, oact);
}

UNINSTRUMENTED int trail__sigaction_sanitizer(int sig, const struct sigaction *act,
					      struct sigaction *oact)
{
	/* TSan is loaded before libtrail: not "next" from here, but its
	 * interceptor is named */
	sigaction_fn f = (sigaction_fn)dlsym(RTLD_DEFAULT, "__interceptor_sigaction");

	return f ? f(sig, act, oact) : next(sig, act, oact);
}

/* what the program sees of a kernel action: its own handler */
UNINSTRUMENTED static void as_given(struct sigaction *o, uint64_t w)
{
	if (o->sa_sigaction != wrapper)
		return;
	o->sa_sigaction = (void (*)(int, siginfo_t *, void *))UH_FN(w);
	if (!(w & UH_SIGINFO))
		o->sa_flags &= ~SA_SIGINFO;
}

UNINSTRUMENTED __attribute__((visibility("default"))) int
sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	struct sigaction a, o;
	uint64_t prev, w;
	int r;

	if (sig <= 0 || sig >= _NSIG || sig == SIGKILL || sig == SIGSTOP)
		return next(sig, act, oact);
	prev = __atomic_load_n(&uh[sig], __ATOMIC_ACQUIRE);
	if (!act) {
		r = next(sig, NULL, oact);
		if (!r && oact)
			as_given(oact, prev);
		return r;
	}
	a = *act;
	set_del(&a.sa_mask, SIGTRAP); /* "SIGTRAP and the control signal stay open" */
	w = (uint64_t)(uintptr_t)act->sa_handler;
	if ((act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN) || is_guarded(sig)) {
		w |= (act->sa_flags & SA_SIGINFO) ? UH_SIGINFO : 0;
		w |= (act->sa_flags & SA_RESETHAND) ? UH_RESETHAND : 0;
		a.sa_sigaction = wrapper;
		a.sa_flags |= SA_SIGINFO;
	}
	/* the table first: a signal delivered from now on finds it */
	__atomic_store_n(&uh[sig], w, __ATOMIC_RELEASE);
	r = next(sig, &a, &o);
	if (r) {
		int e = errno;

		__atomic_store_n(&uh[sig], prev, __ATOMIC_RELEASE);
		errno = e;
		return r;
	}
	if (oact) {
		as_given(&o, prev);
		*oact = o;
	}
	return 0;
}

UNINSTRUMENTED static __sighandler_t set_handler(int sig, __sighandler_t h, int flags)
{
	struct sigaction a, o;

	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	a.sa_flags = flags;
	/* (memset above: a.sa_mask is empty) */
	if (sig > 0 && sig < _NSIG && !(flags & SA_NODEFER))
		set_add(&a.sa_mask, sig);
	if (sigaction(sig, &a, &o) < 0)
		return SIG_ERR;
	return o.sa_handler;
}

/* glibc's signal() is BSD's: the handler stays, system calls restart */
UNINSTRUMENTED __attribute__((visibility("default"))) __sighandler_t signal(int sig, __sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

UNINSTRUMENTED __attribute__((visibility("default"))) __sighandler_t bsd_signal(int sig, __sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

UNINSTRUMENTED __attribute__((visibility("default"))) __sighandler_t sysv_signal(int sig, __sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

/* Probes are about to read memory: SIGSEGV and SIGBUS go through wrapper
 * from now on, whatever the program installs (it keeps seeing its own
 * handlers). Under the control lock. Returns 0 or -errno. */
UNINSTRUMENTED int trail__signals_guard_faults(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS};

	for (unsigned i = 0; i < 2; i++) {
		int sig = sigs[i];
		struct sigaction o, a;
		uint64_t w;

		if (is_guarded(sig))
			continue;
		if (next(sig, NULL, &o))
			return -errno;
		if (o.sa_sigaction != wrapper) {
			w = (uint64_t)(uintptr_t)o.sa_handler;
			if (o.sa_handler != SIG_DFL && o.sa_handler != SIG_IGN) {
				w |= (o.sa_flags & SA_SIGINFO) ? UH_SIGINFO : 0;
				w |= (o.sa_flags & SA_RESETHAND) ? UH_RESETHAND : 0;
			}
			a = o;
			a.sa_sigaction = wrapper;
			a.sa_flags = (o.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
			__atomic_store_n(&uh[sig], w, __ATOMIC_RELEASE);
			if (next(sig, &a, NULL))
				return -errno;
		}
		__atomic_fetch_or(&guarded, 1u << sig, __ATOMIC_RELEASE);
	}
	return 0;
}

uint32_t trail__sig_level_at(uintptr_t sp)
{
	uint32_t l = trail__sig.level;

	/* handlers left by siglongjmp: sp is above their wrapper's frame */
	while (l && l <= TRAIL_SIG_LEVELS && sp > trail__sig.sp[l - 1])
		l--;
	if (l != trail__sig.level)
		trail__sig.level = l;
	return l;
}

/* ------------------------------- SIGTRAP and the control signal stay open
 *
 * Live patching needs both in every thread (src/recorder/threads.c says
 * why): a breakpoint met by a thread that blocks SIGTRAP is fatal (the
 * kernel unblocks the signal and resets it to its default action), and a
 * thread that blocks the control signal cannot be asked to step out of
 * the code being rewritten. So the masks the program sets through libc
 * leave them out (sigprocmask and pthread_sigmask are interposed, under
 * glibc's versions, libtrail.map; handlers' sa_mask lose SIGTRAP), from
 * the moment libtrail is loaded: servers block every signal in helper
 * threads they create at start-up, long before a recorder attaches. Both
 * signals are only ever sent by trail and by breakpoints: which threads
 * may take them changes nothing else. libtrail's own blocking of the
 * control signal goes through trail__sigmask_own.
 */

/* the set to pass on: without SIGTRAP and the control signal */
UNINSTRUMENTED static const sigset_t *open_trap(int how, const sigset_t *set, sigset_t *tmp)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan blocks every signal through here while it runs a deferred
	 * handler, and keeps one saved mask a thread: a control signal let in
	 * then ran a second handler inside the first, and the thread kept
	 * every signal blocked for good. Under TSan a program blocking the
	 * control signal delays an attach (the recorder asks again). */
	int ctl = 0;
#else
	int ctl = __atomic_load_n(&trail__ctl_sig, __ATOMIC_RELAXED);
#endif

	if (!set || how == SIG_UNBLOCK ||
	    (!set_has(set, SIGTRAP) && (ctl <= 0 || !set_has(set, ctl))))
		return set;
	*tmp = *set;
	set_del(tmp, SIGTRAP);
	if (ctl > 0)
		set_del(tmp, ctl);
	return tmp;
}

/* before find_next() (a sanitizer starting): the system call; glibc's
 * own signals (32, 33: cancellation, setxid) are never blocked */
UNINSTRUMENTED static int raw_mask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t t;

	if (set) {
		t = *set;
		set_del(&t, 32);
		set_del(&t, 33);
		set = &t;
	}
	return (int)syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

UNINSTRUMENTED int trail__sigmask_own(int how, const sigset_t *set, sigset_t *old)
{
	sigmask_fn f = __atomic_load_n(&next_pthmask, __ATOMIC_ACQUIRE);

	if (f)
		return f(how, set, old);
	return raw_mask(how, set, old) ? errno : 0;
}

UNINSTRUMENTED __attribute__((visibility("default"))) int
sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigmask_fn f = __atomic_load_n(&next_procmask, __ATOMIC_ACQUIRE);
	sigset_t tmp;

	set = open_trap(how, set, &tmp);
	return f ? f(how, set, old) : raw_mask(how, set, old);
}

UNINSTRUMENTED __attribute__((visibility("default"))) int
pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigmask_fn f = __atomic_load_n(&next_pthmask, __ATOMIC_ACQUIRE);
	sigset_t tmp;

	set = open_trap(how, set, &tmp);
	if (f)
		return f(how, set, old);
	return raw_mask(how, set, old) ? errno : 0;
}

UNINSTRUMENTED void trail__signals_allow_traps(void)
{
	if (__atomic_exchange_n(&traps, 1, __ATOMIC_ACQ_REL))
		return;
	for (int sig = 1; sig < _NSIG; sig++) {
		struct sigaction o;

		if (sig == SIGKILL || sig == SIGSTOP || next(sig, NULL, &o) ||
		    !set_has(&o.sa_mask, SIGTRAP))
			continue;
		set_del(&o.sa_mask, SIGTRAP);
		next(sig, &o, NULL);
	}
}
