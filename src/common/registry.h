/* SPDX-License-Identifier: MIT */
/*
 * registry.h - the per-user directory where every process with libtrail
 * loaded announces itself, so `trail record -P PID` and `trail ps` can find
 * and steer it.
 *
 *   $TRAIL_REGISTRY, else $XDG_RUNTIME_DIR/trail, else /dev/shm/trail-UID
 *
 * The directory is created mode 0700 and refused unless it is a real
 * directory (not a symlink) owned by the caller with no group or other
 * access. Each entry is a small text file named by the process id, written
 * under a temporary name and renamed into place, mode 0600:
 *
 *   trail 1
 *   pid 1234
 *   start 987654        (/proc/PID/stat starttime, against pid reuse)
 *   signal 41           (the control signal; 0: attach disabled)
 */
#ifndef TRAIL_COMMON_REGISTRY_H
#define TRAIL_COMMON_REGISTRY_H

#include <stdint.h>
#include <sys/types.h>

struct trail_reg {
	pid_t pid;
	uint64_t start;
	int signal;
};

/* Path of the registry directory into buf. Not async-signal-safe (getenv).
 * Returns 0 or -ENAMETOOLONG. */
int trail__registry_path(char *buf, size_t n);

/* Open (creating if asked) and vet the directory. Returns a directory fd
 * or -errno (-EPERM: wrong owner or mode; -ELOOP: a symlink). */
int trail__registry_open(const char *path, int create);
/* trail__registry_open(path)'s error err said in full into buf (n bytes:
 * the directory, and for a refused one its mode or owner against what it
 * needs); returns buf. */
char *trail__registry_why(const char *path, int err, char *buf, size_t n);

/* Write or remove this process's entry. Async-signal-safe. */
int trail__registry_put(int dirfd, const struct trail_reg *r);
int trail__registry_del(int dirfd, pid_t pid);

/* Read an entry. Returns 0, -ENOENT, or -EPROTO for a malformed one. */
int trail__registry_get(int dirfd, pid_t pid, struct trail_reg *r);

#endif /* TRAIL_COMMON_REGISTRY_H */
