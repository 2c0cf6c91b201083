/* SPDX-License-Identifier: MIT */
/*
 * fstep.c - writing function entries other threads may be running: the
 * breakpoint-first poke of src/arch (trail_arch_poke_stepped), with every
 * other thread stepped out of the sites between the breakpoints and the
 * tails. ftracer.c hands it batches of sites; runtime.c has threads that
 * wait for the control lock answer it.
 *
 * A site is five one-byte nops: a running thread may be between two of
 * them, where a call written over them would be entered in its middle.
 * So, while other threads run: int3 on the first byte of every site of the
 * batch (a thread reaching one is moved past the site by the SIGTRAP
 * handler of poke.c), serialize, then ask every other thread, by signal,
 * to look at where it was stopped and step past the site if inside one
 * (they are nops: skipping them is what running them does; the first
 * instructions of unmodified code have a copy that runs them, and such a
 * thread goes on there: fhash.h trail__fsite_step); once all have
 * answered, no thread is inside a site, and the tail and then the first
 * byte are written. A thread that does not answer in time (it blocks the
 * signal, or is stopped) makes the batch fail and fall back to the nops.
 *
 * A step round, as the patcher (holding the control lock) runs it:
 *
 *   int3 written, serialized          (poke.c)
 *   step_tab <- every other thread's tid, sorted, answered = 0
 *   step_round <- R (release)  ------------------.
 *   a STEP signal to each of them                 |  acquire in
 *   wait: each entry answered == R, or gone       |  trail__step_answer():
 *   step_round <- 0                               |  move the interrupted
 *   tails, then first bytes written    (poke.c)   |  context, then
 *                                                 '- answered = R (release)
 *
 * Answers are per thread, not counted: a thread answers a round at most
 * once (t_stepped), by its signal or, if it is waiting for the control
 * lock (a second attach or a detach arriving meanwhile, a fork, a dlopen:
 * all with the control signal blocked), from that wait (ctl_lock in
 * runtime.c polls trail__step_answer). Without that, the patcher waited
 * for a thread that waited for the patcher's lock, until the round timed
 * out and the attach failed. A thread created during the round is not in
 * the table and needs no answer: it can only enter a site at its int3.
 * An answer for an older round (a late signal) finds that round closed,
 * or writes a round number the patcher no longer waits for. Tables are
 * replaced when they grow, never unmapped: a late answer may still hold one.
 *
 * Before any breakpoint goes in, every other thread's blocked signals are
 * read (trail__step_check): one that blocks SIGTRAP would be killed by the
 * kernel if it ran into a breakpoint (the kernel unblocks a trap signal and
 * resets it to its default action), so the batch fails at once, naming it.
 * The control signal cannot be checked that way: threads in our handler,
 * or waiting for the control lock, block it and answer all the same. A
 * thread that blocks it otherwise does not answer: the round times out
 * and why_silent() names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/control.h"
#include "../common/util.h"
#include "fhash.h"
#include "internal.h"

#define STEP_TIMEOUT_NS 2000000000ll /* for every thread of a round to answer */

struct step_thread {
	int32_t tid;
	uint32_t answered; /* the round it answered */
};

struct step_tab {
	uint32_t cap, n;
	struct step_thread t[];
};

static const uintptr_t *step_sites; /* sorted, during a live patch */
static size_t step_n;
static struct step_tab *step_tab;
static uint32_t step_round; /* the round open, 0: none */
static uint32_t step_last;  /* the last round's number */
static __thread uint32_t t_stepped __attribute__((tls_model("initial-exec")));
static int32_t step_culprit; /* the thread that made the last round fail */

int32_t trail__step_culprit(void)
{
	return step_culprit;
}

void trail__step_answer(void *ucv)
{
	/* acquire: pairs with the release opening the round in
	 * step_all_threads(): its sites and table come before it */
	uint32_t round = __atomic_load_n(&step_round, __ATOMIC_ACQUIRE);
	ucontext_t *uc = ucv;
	struct step_tab *t;
	size_t lo = 0, hi;
	int32_t tid;

	if (!round || round == t_stepped)
		return;
	if (uc) { /* a waiter for the control lock in normal context has no
		   * interrupted context: it is in libtrail, in no site */
		uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
		const uintptr_t *v = __atomic_load_n(&step_sites, __ATOMIC_ACQUIRE);

		hi = __atomic_load_n(&step_n, __ATOMIC_ACQUIRE);
		while (v && lo < hi) { /* the last site at or below ip */
			size_t mid = lo + (hi - lo) / 2;

			if (v[mid] <= ip)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* (past the site's bytes too: a whole function's copy takes
		 * threads from anywhere in it, trail__fsite_step says) */
		if (v && lo && ip > v[lo - 1])
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)trail__fsite_step(v[lo - 1], ip);
	}
	t = __atomic_load_n(&step_tab, __ATOMIC_ACQUIRE);
	tid = (int32_t)syscall(SYS_gettid);
	lo = 0;
	hi = t ? __atomic_load_n(&t->n, __ATOMIC_RELAXED) : 0;
	if (t && hi > t->cap)
		hi = t->cap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (__atomic_load_n(&t->t[mid].tid, __ATOMIC_RELAXED) < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* release: pairs with the patcher's acquire load of answered; the
	 * context was moved before it writes a single tail */
	if (t && lo < t->cap && lo < __atomic_load_n(&t->n, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&t->t[lo].tid, __ATOMIC_RELAXED) == tid)
		__atomic_store_n(&t->t[lo].answered, round, __ATOMIC_RELEASE);
	t_stepped = round;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int32_t tid_at(struct step_tab *t, uint32_t i)
{
	return __atomic_load_n(&t->t[i].tid, __ATOMIC_RELAXED);
}

static void set_entry(struct step_tab *t, uint32_t i, int32_t tid)
{
	__atomic_store_n(&t->t[i].tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&t->t[i].answered, 0, __ATOMIC_RELAXED);
}

/* The other threads' tids into t, sorted; -1 if they do not fit. */
static long scan_threads(struct step_tab *t, pid_t self)
{
	char buf[4096];
	uint32_t n = 0;
	long k;
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((k = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < k;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			long tid = strtol(d->d_name, NULL, 10);
			uint32_t j;

			off += d->d_reclen;
			if (tid <= 0 || tid == self)
				continue;
			if (n == t->cap) {
				close(fd);
				return -1;
			}
			/* insertion: the kernel lists them nearly sorted. Relaxed
			 * atomics: a late answer of an older round may read the
			 * table meanwhile (it then writes a round not waited for) */
			for (j = n; j > 0 && tid_at(t, j - 1) > tid; j--)
				set_entry(t, j, tid_at(t, j - 1));
			set_entry(t, j, (int32_t)tid);
			n++;
		}
	}
	close(fd);
	__atomic_store_n(&t->n, n, __ATOMIC_RELAXED);
	return n;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Exited: it runs no code (a main thread that called pthread_exit stays
 * listed, a zombie, until the process ends). */
static int thread_gone(int32_t tid)
{
	char state = 0;
	int r = trail__proc_stat((pid_t)tid, NULL, &state, NULL);

	return r == -ESRCH || (!r && (state == 'Z' || state == 'X'));
}

/* The signals thread tid blocks (0 if unknown). */
static uint64_t sig_blocked(int32_t tid)
{
	char path[64] = "/proc/self/task/", buf[2048], *p, *e;
	ssize_t k;
	int fd;

	e = trail__utoa(path + 16, (uint64_t)tid);
	strcpy(e, "/status");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k <= 0)
		return 0;
	buf[k] = '\0';
	p = strstr(buf, "\nSigBlk:");
	return p ? strtoull(p + 8, NULL, 16) : 0;
}

/* What a step round needs every other thread to take: SIGTRAP (a thread
 * that blocks it and runs into a breakpoint is killed by the kernel) and
 * the control signal (to be stepped). */
static uint64_t needed_signals(void)
{
	int sig = trail__ctl_sig;

	return (1ull << (SIGTRAP - 1)) | (sig >= 1 && sig <= 64 ? 1ull << (sig - 1) : 0);
}

/* Why thread tid did not answer: -EBUSY if it blocks a signal we need,
 * else -ETIMEDOUT (stopped, or not given a CPU in time). */
static int why_silent(int32_t tid)
{
	return sig_blocked(tid) & needed_signals() ? -EBUSY : -ETIMEDOUT;
}

/* Signal every other thread to step out of the sites; 0 when all did,
 * else -EBUSY or -ETIMEDOUT (why_silent) with step_culprit set. Called
 * by poke.c between the breakpoints and the tails, under the control lock. */
static int step_all_threads(void)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct step_tab *t = step_tab;
	int sig = trail__ctl_sig, r = 0;
	uint32_t round, left;
	int64_t deadline;
	long n;

	if (!sig)
		return -ENOTSUP;
	for (n = -1; n == -1;) {
		if (!t || (n = scan_threads(t, self)) == -1) {
			/* none yet, or too small: a bigger one; the old one
			 * stays mapped (a late answer may hold it) */
			uint32_t cap = t ? t->cap * 2 : 256;
			struct step_tab *nt = mmap(NULL, sizeof(*nt) + cap * sizeof(nt->t[0]),
						   PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (nt == MAP_FAILED)
				return -ENOMEM;
			nt->cap = cap;
			t = nt;
			n = -1;
		}
	}
	if (n < 0)
		return (int)n;
	/* pairs with the acquire load in trail__step_answer() */
	__atomic_store_n(&step_tab, t, __ATOMIC_RELEASE);
	if (++step_last == 0) /* 0 is "no round" */
		step_last = 1;
	round = step_last;
	/* release: the table and the sites before the round; pairs with the
	 * acquire in trail__step_answer() */
	__atomic_store_n(&step_round, round, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < t->n; i++) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		si.si_signo = sig;
		si.si_code = SI_QUEUE;
		si.si_pid = trail__pid;
		si.si_uid = getuid();
		si.si_value.sival_int = trail_ctl_encode(TRAIL_CTL_STEP, 0);
		if (syscall(SYS_rt_tgsigqueueinfo, trail__pid, (pid_t)tid_at(t, i), sig, &si) &&
		    errno == ESRCH) /* exited: it cannot be in a site */
			__atomic_store_n(&t->t[i].answered, round, __ATOMIC_RELAXED);
	}
	deadline = mono_ns() + STEP_TIMEOUT_NS;
	for (int64_t spin = 0;; spin++) {
		left = 0;
		for (uint32_t i = 0; i < t->n; i++) {
			/* acquire: pairs with the answer's release */
			if (__atomic_load_n(&t->t[i].answered, __ATOMIC_ACQUIRE) == round)
				continue;
			/* now and then: a thread that exited answers no more */
			if (spin % 64 == 63 && thread_gone(tid_at(t, i))) {
				__atomic_store_n(&t->t[i].answered, round, __ATOMIC_RELAXED);
				continue;
			}
			left++;
		}
		if (!left)
			break;
		if (mono_ns() > deadline) {
			for (uint32_t i = 0; i < t->n; i++)
				if (__atomic_load_n(&t->t[i].answered, __ATOMIC_ACQUIRE) != round &&
				    !thread_gone(tid_at(t, i))) {
					step_culprit = tid_at(t, i);
					r = why_silent(step_culprit);
					break;
				}
			break;
		}
		{
			struct timespec ts = {0, 50000};

			nanosleep(&ts, NULL);
		}
	}
	__atomic_store_n(&step_round, 0, __ATOMIC_RELEASE);
	return r;
}

/*
 * Before any breakpoint goes in: 0 if every other thread takes SIGTRAP,
 * else -EBUSY with step_culprit set. A mask set for an instant (glibc
 * blocks everything around clone and fork) is waited out: up to 20 looks,
 * 5 ms apart.
 */
int trail__step_check(void)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	uint64_t need = 1ull << (SIGTRAP - 1);
	char buf[4096];

	for (int look = 0; look < 20; look++) {
		int32_t culprit = 0;
		long k;
		int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			return 0; /* no /proc: the step round will tell */
		while (!culprit && (k = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
			for (long off = 0; !culprit && off < k;) {
				struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
				long tid = strtol(d->d_name, NULL, 10);

				off += d->d_reclen;
				if (tid > 0 && tid != self && (sig_blocked((int32_t)tid) & need))
					culprit = (int32_t)tid;
			}
		close(fd);
		if (!culprit)
			return 0;
		step_culprit = culprit;
		{
			struct timespec ts = {0, 5000000};

			nanosleep(&ts, NULL);
		}
	}
	return -EBUSY;
}

int trail__step_poke(const struct trail_arch_poke *pk, size_t n, const uintptr_t *addrs)
{
	int r = trail__step_check();

	if (r)
		return r;
	/* pairs with the acquire loads in trail__step_answer() (the round,
	 * published after these, is what an answer loads first) */
	__atomic_store_n(&step_n, n, __ATOMIC_RELEASE);
	__atomic_store_n(&step_sites, addrs, __ATOMIC_RELEASE);
	r = trail_arch_poke_stepped(pk, n, step_all_threads);
	__atomic_store_n(&step_sites, NULL, __ATOMIC_RELEASE);
	return r;
}

/* Breakpoint sites (function entries a jump cannot take, probes at an
 * instruction) may go in: SIGTRAP stays open in the program's masks from
 * now on, and no other thread blocks it now. Checked once per join
 * (trail__traps_recheck), then remembered. */
static int traps_ok = -1;

int trail__traps_ready(void)
{
	if (traps_ok < 0) {
		trail__signals_allow_traps();
		traps_ok = !trail__step_check();
	}
	return traps_ok;
}

void trail__traps_recheck(void)
{
	traps_ok = -1;
}
