/* SPDX-License-Identifier: MIT */
/*
 * uevents.h - user events in libtrail (uevents.c): events a program
 * defines at run time, through the kernel's user_events ABI (uefile.c
 * answers its file) or trail/uevent.h. Shared by those two files only.
 */
#ifndef TRAIL_LIB_UEVENTS_H
#define TRAIL_LIB_UEVENTS_H

#include <signal.h>
#include <stdint.h>

#include <trail/abi.h>

#include "../common/uevent.h"
#include "internal.h"

/* One user event of this process. The public handle (trail/uevent.h)
 * points here: its first word is the status word. */
struct uev {
	uint32_t state;       /* the descriptor's status word */
	uint32_t refs;        /* the kernel's references: write slots of open
			       * files, enablers, handles, a persistent
			       * event's own */
	uint32_t persist, multi, handles;
	uint32_t out_max;     /* trail_ue_out_max */
	size_t map_size;      /* bytes mapped for it */
	struct uev *next;
	struct trail_event ev;
	struct trail_event *evp[1];
	struct dso dso;
	struct evrt rt;
	char system[TRAIL_UE_NAME_MAX + 1];
	char tname[TRAIL_UE_NAME_MAX + 24]; /* NAME, or NAME.<id> (multi) */
	struct trail_ue_def def;
	uint32_t meta_size;
	uint8_t meta[];       /* the trail_meta blob */
};

/* the lock of everything below: the control lock (the control signal
 * handler's join and leave read the events and enablers) */
#define ue_lock(saved) trail__ctl_enter(saved)
#define ue_unlock(saved) trail__ctl_leave(saved)

/* Under the lock: the event of system for def (its name, or name.<id>
 * registered with multi), existing or made, one reference taken. 0, or
 * -EADDRINUSE (that name with other fields), -EMFILE, -ENOMEM. */
int trail__uev_get(const char *system, const struct trail_ue_def *def, int multi, int persist,
		   struct uev **out);
/* Under the lock: one reference dropped. The last one of an event that
 * does not persist deletes it: *del is set, and the caller calls
 * trail__uev_delete(*del) once it has dropped the lock. */
void trail__uev_put(struct uev *u, struct uev **del);
/* Without the lock: an event no reference holds any more, taken out of
 * the runtime and freed. */
void trail__uev_delete(struct uev *u);
/* DIAG_IOCSDEL, under the lock: every event of system user_events or
 * user_events_multi registered as name, taken out (added to *del, each
 * for trail__uev_delete). 0, -ENOENT, -EBUSY (referenced or recorded),
 * -EPERM (persistent, and we may not). */
int trail__uev_del_name(const char *name, struct uev **del);
/* may the process make persistent events (CAP_PERFMON, CAP_SYS_ADMIN)? */
int trail__uev_perfmon(void);

/* Enablers: (address, bit) pairs of the process a bit is kept in (set
 * while the event's status word is not 0). Under the lock. add: 0,
 * -EADDRINUSE (that pair is someone's already), -ENOMEM (the address is
 * not writable, as the kernel answers), takes a reference. remove: 0, or
 * -ENOENT; drops the reference (*del: as trail__uev_put), clears the
 * bit (-EFAULT if it cannot). */
int trail__uev_enabler_add(struct uev *u, uint64_t addr, unsigned bit, unsigned size);
int trail__uev_enabler_find(uint64_t addr, unsigned bit);
int trail__uev_enabler_remove(uint64_t addr, unsigned bit, struct uev **del);

/* A payload in the kernel's layout written (not under the lock): 0, or
 * -EINVAL, -EFAULT (trail_ue_convert), -EBADF (no session records it:
 * the kernel's answer to a write of a disabled event). */
int trail__uev_write_kernel(struct uev *u, const uint8_t *p, size_t len);

/* user_events_status's text into buf (at most n bytes): its length */
size_t trail__uev_status(char *buf, size_t n);

#endif /* TRAIL_LIB_UEVENTS_H */
