/* SPDX-License-Identifier: MIT */
/* ptrace.c - the recorder's shared ptrace steps (ptrace.h). */
#include <errno.h>
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
#include "ptrace.h"
#include "recorder.h"

#define STOP_WAIT_MS 2000

/* why ptrace refused pid (e: its errno): another tracer, Yama, or errno */
void trail_recorder_ptrace_why(pid_t pid, int e, char *buf, size_t len)
{
	char path[64], st[4096], *p;
	int scope = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (trail__read_file(path, st, sizeof(st)) > 0 && (p = strstr(st, "\nTracerPid:")) &&
	    atoi(p + 11) > 0 && atoi(p + 11) != getpid()) {
		snprintf(buf, len, "it is already traced by process %d (a debugger?)", atoi(p + 11));
		return;
	}
	if (trail__read_file("/proc/sys/kernel/yama/ptrace_scope", st, sizeof(st)) > 0)
		scope = atoi(st);
	if (e != EPERM || !scope)
		snprintf(buf, len, "%s", strerror(e));
	else if (scope == 1)
		snprintf(buf, len, "kernel.yama.ptrace_scope is 1: only a parent may trace a "
			 "process (run trail as root, or sysctl kernel.yama.ptrace_scope=0)");
	else if (scope == 2)
		snprintf(buf, len, "kernel.yama.ptrace_scope is 2: only root may trace (run "
			 "trail as root)");
	else
		snprintf(buf, len, "kernel.yama.ptrace_scope is 3: no process may be traced "
			 "(until reboot)");
}

int trail__ptrace_wait(pid_t tid, int ms)
{
	for (int waited = 0;; waited++) {
		int st;
		pid_t w = waitpid(tid, &st, __WALL | WNOHANG);
		struct timespec ts = {0, 1000000};

		if (w == tid)
			return WIFSTOPPED(st) ? st : -ESRCH;
		if (w < 0)
			return -errno == -ECHILD ? -ESRCH : -errno;
		if (waited >= ms)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
}

/* the system calls that wait under a temporary mask, their own kept aside
 * (saved_sigmask) until they return */
static int masks_aside(long nr)
{
	switch (nr) {
	case SYS_rt_sigsuspend:
	case SYS_ppoll:
	case SYS_pselect6:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_io_pgetevents:
		return 1;
	default:
		return 0;
	}
}

int trail__ptrace_stop_signal(int st)
{
	int sig = WSTOPSIG(st);

	if (st >> 16) /* PTRACE_EVENT_STOP: the interrupt or a group stop */
		return 0;
	return sig == (SIGTRAP | 0x80) ? 0 : sig;
}

int trail__ptrace_own_mask(pid_t tid, int *st, int *deliver)
{
	for (int tries = 0; tries < 4; tries++) {
		struct user_regs_struct r;
		long rax;

		if (ptrace(PTRACE_GETREGS, tid, 0, &r))
			return -errno;
		rax = (long)r.rax;
		if ((long)r.orig_rax < 0 || !masks_aside((long)r.orig_rax) ||
		    !(rax == -EINTR || (rax <= -512 && rax >= -516)))
			return 0;
		/* to its next system call entry (the restarted call, with
		 * its mask restored on the way), else stopped in user space */
		if (ptrace(PTRACE_SYSCALL, tid, 0, (void *)(long)*deliver))
			return -errno;
		*deliver = 0;
		*st = trail__ptrace_wait(tid, 20);
		if (*st == -ETIMEDOUT) {
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0))
				return -errno;
			*st = trail__ptrace_wait(tid, STOP_WAIT_MS);
		}
		if (*st < 0)
			return *st;
		*deliver = trail__ptrace_stop_signal(*st);
		if ((WSTOPSIG(*st) & 0x80) && !(*st >> 16))
			return 0; /* a system call entry: its own mask */
	}
	return -EAGAIN;
}

