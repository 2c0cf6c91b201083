/* SPDX-License-Identifier: MIT */
/*
 * fplt.h - where a library call of the executable goes, found in the
 * loaded objects' dynamic symbol tables the way the dynamic loader binds
 * it (fplt.c): the objects in load order (the global scope of a program's
 * own imports), the first definition of the name that has the version
 * the executable asks for (or the default version when it asks none), an
 * IFUNC's resolver called. libtrail preloaded comes before libc, so its
 * interposers (sigprocmask) win, as with the loader; loaded later by -P
 * (dlopen: not in the global scope) it comes after, and libc's do.
 */
#ifndef TRAIL_LIB_FPLT_H
#define TRAIL_LIB_FPLT_H

#include <stdint.h>

#include "internal.h"

/* The address name@version binds to, or 0 if no loaded object defines
 * it. version "" or NULL: none asked. */
HIDDEN uintptr_t trail__plt_resolve(const char *name, const char *version);

#endif
