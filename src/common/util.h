/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers shared by libtrail and the tools. Everything here
 * is async-signal-safe (no allocation, no stdio, no locks) because libtrail
 * calls some of it from its control signal handler and after fork.
 */
#ifndef TRAIL_COMMON_UTIL_H
#define TRAIL_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TRAIL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TRAIL_LIKELY(x) __builtin_expect(!!(x), 1)
#define TRAIL_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Append the decimal form of v at p (no NUL), return the new end. */
char *trail__utoa(char *p, uint64_t v);

/* s[0 .. n): a number, decimal or 0x hex, into *v: 0, or -1 with *bad
 * the offset of the first character that does not fit (one past the
 * end when n leaves no digits). Allocates nothing. */
int trail__parse_num(const char *s, size_t n, uint64_t *v, size_t *bad);

/* Read /proc/PID/stat: start time (field 22) and state letter. Returns 0 or
 * -errno (-ESRCH when the process is gone). */
int trail__proc_stat(pid_t pid, uint64_t *starttime, char *state, pid_t *ppid);

/* Is pid a live (not zombie) process started at starttime? */
int trail__proc_alive(pid_t pid, uint64_t starttime);
/* Has pid exited (no /proc entry, or a zombie)? */
int trail__proc_gone(pid_t pid);

/* read() / write() the whole buffer, retrying on EINTR and short counts. */
ssize_t trail__read_full(int fd, void *buf, size_t n);
ssize_t trail__write_full(int fd, const void *buf, size_t n);

/* Read a small file into buf (NUL-terminated). Returns bytes or -errno. */
ssize_t trail__read_file(const char *path, char *buf, size_t n);

/* The separate debug file of an object with this GNU build-id (len bytes):
 * ROOT/.build-id/xx/rest.debug, ROOT $TRAIL_DEBUG_ROOT or /usr/lib/debug
 * (as gdb and the probes' DWARF find it). 0, or -ENAMETOOLONG. */
int trail__debug_file(const uint8_t *id, size_t len, char *buf, size_t n);

/* The UTF-8 sequence at s (n > 0 bytes, s[0] >= 0x80): its length with
 * *ok set if it is well formed (Unicode's table 3-7: no overlong forms,
 * surrogates or code points past U+10FFFF), else *ok clear and the length
 * of its maximal ill-formed part (what one U+FFFD replaces; at least 1).
 * It reads no further than the first byte that breaks the sequence, so a
 * NUL-terminated string may be passed with n = 4. */
size_t trail__utf8_seq(const uint8_t *s, size_t n, int *ok);

/* A size: bytes, or KiB when no unit is given; K, M, G (KiB, MiB, GiB:
 * "64M", "64MB", "64MiB"). 0, or -EINVAL (not a size), -ERANGE (over
 * 1 TiB). */
int trail__parse_kb(const char *s, uint64_t *bytes);

#endif /* TRAIL_COMMON_UTIL_H */
