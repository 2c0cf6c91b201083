/* SPDX-License-Identifier: MIT */
/*
 * control.h - the control protocol between a recorder and the processes
 * it records (doc/design/control-plane.md). A request is one queued
 * signal (sigqueue, the process's registered control signal) whose value
 * packs a command and the recorder's arena memfd as seen by the recorder:
 *
 *   bits 31..24  command (TRAIL_CTL_*)
 *   bits 23..0   memfd number in the recorder (read via /proc/PID/fd/N)
 *
 * The process answers by joining (ATTACH: the session's arena mapped, its
 * events enabled) or leaving (DETACH). STEP is libtrail's own: a thread
 * patching code asks the others to leave the sites it rewrites.
 */
#ifndef TRAIL_COMMON_CONTROL_H
#define TRAIL_COMMON_CONTROL_H

#include <stdint.h>

#define TRAIL_CTL_ATTACH 1u
#define TRAIL_CTL_DETACH 2u
#define TRAIL_CTL_STEP 3u /* from the process itself: leave any site being patched */

#define TRAIL_CTL_FD_MAX 0xffffffu

static inline int trail_ctl_encode(uint32_t cmd, int fd)
{
	return (int)((cmd << 24) | ((uint32_t)fd & TRAIL_CTL_FD_MAX));
}

static inline uint32_t trail_ctl_cmd(int value)
{
	return (uint32_t)value >> 24;
}

static inline int trail_ctl_fd(int value)
{
	return (int)((uint32_t)value & TRAIL_CTL_FD_MAX);
}

#endif
