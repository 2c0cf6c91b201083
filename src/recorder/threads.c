/* SPDX-License-Identifier: MIT */
/*
 * threads.c - every thread of a recorded process able to take what live
 * patching sends it, opened through ptrace where the thread blocks it.
 *
 * Rewriting code other threads run (src/lib/fstep.c) needs two signals
 * in every thread: SIGTRAP, for the breakpoint a thread may meet while a
 * site is written or at a breakpoint site (a thread that blocks it is
 * killed: the kernel unblocks a forced SIGTRAP and resets its handler to
 * the default action, process-wide), and the control signal, by which the
 * patcher asks each thread to step out of the sites it rewrites. Servers
 * block every signal in their helper threads (jemalloc's background
 * thread in redis-server, thread pools) so that process-directed signals
 * reach the main thread. libtrail keeps the two open in the masks a
 * program sets through libc once it is loaded (src/lib/signals.c); a
 * thread that blocked them before (libtrail loaded later, by -P) or by a
 * raw system call is opened here, as a debugger would reach it:
 *
 *   PTRACE_SEIZE the thread, PTRACE_INTERRUPT it, wait for its stop
 *   PTRACE_GETSIGMASK, PTRACE_SETSIGMASK without SIGTRAP and the control
 *   signal, PTRACE_DETACH (a signal that stopped it is delivered)
 *
 * Nothing else of the thread changes: an interrupted system call restarts
 * as after any signal, and the two signals are sent only by trail itself
 * and by breakpoints, so which threads may take them changes nothing the
 * program sees. They stay open after the recording (a later one needs
 * them, and another recorder may still be patching the process).
 *
 * A thread stopped inside a system call that waits with a temporary mask
 * (ppoll, pselect6, epoll_pwait, sigsuspend, ...) holds its own mask aside
 * in the kernel until the call returns; writing the mask there would lose
 * it. Such a thread is let run to its next system call entry (the saved
 * mask is back by then) or, if it does not make one at once, stopped
 * again in user space, and opened there.
 *
 * The recorder does this before asking a process to join or leave a
 * session that patches code, and every half second while it records (a
 * thread the program creates later with everything blocked).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/util.h"
#include "internal.h"
#include "ptrace.h"

#define STOP_WAIT_MS 2000

/* a line of thread tid's /proc status, as a number in base */
static uint64_t status_of(pid_t pid, pid_t tid, const char *key, int base)
{
	char path[96], st[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (trail__read_file(path, st, sizeof(st)) <= 0 || !(p = strstr(st, key)))
		return 0;
	return strtoull(p + strlen(key), NULL, base);
}

static uint64_t blocked_of(pid_t pid, pid_t tid)
{
	return status_of(pid, tid, "\nSigBlk:", 16);
}

static pid_t tracer_of(pid_t pid, pid_t tid)
{
	return (pid_t)status_of(pid, tid, "\nTracerPid:", 10);
}

/* Open `want` in thread tid's mask. 0 (done, or the thread is gone),
 * or -errno with *why set. */
static int open_one(pid_t tid, uint64_t want, const char **why)
{
	uint64_t mask;
	int st, deliver = 0, r = 0;

	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD)) {
		*why = "ptrace";
		return errno == ESRCH ? 0 : -errno;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		r = -errno;
		goto out;
	}
	st = trail__ptrace_wait(tid, STOP_WAIT_MS);
	if (st == -ESRCH)
		return 0; /* exited meanwhile */
	if (st < 0) {
		*why = "stop";
		r = st;
		goto out;
	}
	deliver = trail__ptrace_stop_signal(st);
	if ((r = trail__ptrace_own_mask(tid, &st, &deliver))) {
		*why = "mask";
		if (r == -ESRCH)
			return 0;
		goto out;
	}
	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask)) {
		*why = "mask";
		r = -errno;
		goto out;
	}
	if (mask & want) {
		mask &= ~want;
		if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask)) {
			*why = "mask";
			r = -errno;
		}
	}
out:
	if (ptrace(PTRACE_DETACH, tid, 0, (void *)(long)deliver) && errno != ESRCH && !r) {
		*why = "detach";
		r = -errno;
	}
	return r;
}

int trail_recorder_open_signals(pid_t pid, int ctlsig, int *opened, char *err, size_t errlen)
{
	uint64_t trap = 1ull << (SIGTRAP - 1), want = trap;
	char path[64];
	struct dirent *d;
	DIR *dir;
	int r = 0;

	if (ctlsig > 0 && ctlsig <= 64)
		want |= 1ull << (ctlsig - 1);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return errno == ENOENT ? 0 : -errno; /* exited: nothing to open */
	while (!r && (d = readdir(dir))) {
		char *end, comm[64] = "?", cpath[96];
		long tid = strtol(d->d_name, &end, 10);
		uint64_t blk;
		const char *why = "";

		/* a thread that blocks the control signal alone is in
		 * libtrail's handler or waits for its lock (it answers step
		 * rounds from there), or set that mask by a raw system call:
		 * left as it is (opened, a nested request would run its
		 * handler inside the first) */
		if (*end || tid <= 0 || !((blk = blocked_of(pid, (pid_t)tid)) & trap))
			continue;
		r = open_one((pid_t)tid, want, &why);
		for (int k = 0; r == -EPERM && tracer_of(pid, (pid_t)tid) > 0 && k < 200; k++) {
			/* another recorder holds it: it is opening it too */
			struct timespec ts = {0, 10000000};

			nanosleep(&ts, NULL);
			if (!(blocked_of(pid, (pid_t)tid) & trap))
				r = 0;
		}
		if (!r) {
			if (opened)
				(*opened)++;
			continue;
		}
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%ld/comm", (int)pid, tid);
		if (trail__read_file(cpath, comm, sizeof(comm)) > 0)
			comm[strcspn(comm, "\n")] = '\0';
		char blocked[48], reason[320];

		snprintf(blocked, sizeof(blocked), "%s%s%s",
			 blk & (1ull << (SIGTRAP - 1)) ? "SIGTRAP" : "",
			 (blk & (1ull << (SIGTRAP - 1))) && (blk & want & ~(1ull << (SIGTRAP - 1)))
				 ? " and " : "",
			 blk & want & ~(1ull << (SIGTRAP - 1)) ? "the control signal" : "");
		if (!strcmp(why, "ptrace"))
			trail_recorder_ptrace_why((pid_t)tid, -r, reason, sizeof(reason));
		else if (!strcmp(why, "stop"))
			snprintf(reason, sizeof(reason), "it did not stop for ptrace within %d s",
				 STOP_WAIT_MS / 1000);
		else
			snprintf(reason, sizeof(reason), "%s", strerror(-r));
		snprintf(err, errlen,
			 "process %d: its thread %ld (%s) blocks %s, which live patching needs "
			 "it to take, and trail could not open them through ptrace: %s",
			 (int)pid, tid, comm, blocked, reason);
	}
	closedir(dir);
	return r;
}
