/* SPDX-License-Identifier: MIT */
/*
 * ptrace.h - what the recorder's ptrace users share (threads.c: opening
 * blocked signals; inject.c: loading libtrail): waiting for a stop with a
 * bound, and bringing a stopped thread to a stop where the signal mask the
 * kernel shows is its own.
 */
#ifndef TRAIL_RECORDER_PTRACE_H
#define TRAIL_RECORDER_PTRACE_H

#include <sys/types.h>

/* The next stop of traced thread tid within ms: its wait status, -ESRCH
 * (it exited) or -ETIMEDOUT. */
int trail__ptrace_wait(pid_t tid, int ms);

/* The signal a stop (wait status st) is for, to deliver when the thread
 * goes on; 0 for a stop of ptrace's own (an interrupt, a system call). */
int trail__ptrace_stop_signal(int st);

/*
 * Stopped thread tid (status *st, *deliver: the signal it stopped for):
 * if it sits in a system call that waits under a temporary mask (ppoll,
 * pselect6, epoll_pwait, sigsuspend...: its own is kept aside until the
 * call returns), run it to a stop where its own mask is back: its next
 * system call entry, else stopped again in user space. tid must have
 * been seized with PTRACE_O_TRACESYSGOOD. 0, or -errno (-ESRCH: gone).
 */
int trail__ptrace_own_mask(pid_t tid, int *st, int *deliver);

#endif
