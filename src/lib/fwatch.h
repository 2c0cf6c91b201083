/* SPDX-License-Identifier: MIT */
/*
 * fwatch.h - wprobes' watches (fwatch.c), for the set_wprobe and
 * clear_wprobe triggers (evx.c).
 */
#ifndef TRAIL_LIB_FWATCH_H
#define TRAIL_LIB_FWATCH_H

#include <stdint.h>

#include "internal.h"

enum { TRAIL_FWATCH_SET, TRAIL_FWATCH_CLEAR, TRAIL_FWATCH_CLEAR_IF };

/* The wprobe provider:name armed in this process: SET watches addr from
 * now on (every thread: its events moved), CLEAR parks it (it watches
 * nothing), CLEAR_IF parks it if it watches addr. 0; -ENOENT: no such
 * watch armed; -EINVAL: addr not aligned to its length (or 0); -1: a
 * thread's event refused the move. From the record path (a trigger):
 * async-signal-safe. */
HIDDEN int trail__fwatch_set(const char *provider, const char *name, int op, uintptr_t addr);

#endif /* TRAIL_LIB_FWATCH_H */
