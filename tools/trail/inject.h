/* SPDX-License-Identifier: MIT */
/*
 * inject.h - loading libtrail into a running process that was not started
 * with it (trail record -P on any process of the user), the way a
 * debugger's `call dlopen(...)` does: ptrace-seize its main thread, stop
 * it, make it call the C library's dlopen(LIB, RTLD_NOW) on its own stack
 * (below the red zone) with a return address of 0, catch the fault of that
 * return, put every register back and detach. A system call the thread was
 * in restarts as it would have. The process keeps running; libtrail's
 * constructor has registered it by then, so the usual attach follows.
 */
#ifndef TRAIL_TOOLS_INJECT_H
#define TRAIL_TOOLS_INJECT_H

#include <stddef.h>
#include <sys/types.h>

/* 0, or -errno with err a one-line reason: -EPERM (ptrace refused: the
 * reason, naming kernel.yama.ptrace_scope when it is that, or the
 * process's tracer), -ENOENT (no dlopen in its C library: a static
 * program), -ETIMEDOUT (dlopen did not return in 5 s), -EIO (dlopen
 * failed in the process). */
int inject_library(pid_t pid, const char *lib, char *err, size_t errlen);

/* The reason ptrace_scope gives for a refused attach, or NULL when it
 * allows it: scope is the value of /proc/sys/kernel/yama/ptrace_scope. */
const char *inject_scope_reason(int scope);

/* Is path a static program (an ELF executable without PT_INTERP: no
 * dynamic loader for LD_PRELOAD, no dlopen to call)? 1 or 0. */
int program_is_static(const char *path);

#endif /* TRAIL_TOOLS_INJECT_H */
