/* SPDX-License-Identifier: MIT */
/*
 * trail/uevent.h - events defined at run time, from C or any language's
 * FFI (Rust, Go through cgo, Java through JNI, .NET, Python's extension):
 * no provider file, no build-time declaration, nothing to link beyond
 * libtrail (-ltrail, or `pkg-config --libs trail`).
 *
 *   #include <trail/uevent.h>
 *
 *   struct trail_uevent *ev = trail_uevent_new("app",
 *           "request u32 fd; string path; u64 bytes", NULL);
 *   ...
 *   if (trail_uevent_enabled(ev)) {                    // one load
 *           struct trail_uvalue v[3] = {{.u = fd}, {.p = path, .len = TRAIL_UVALUE_STRLEN},
 *                                       {.u = n}};
 *           trail_uevent_write(ev, v, 3);
 *   }
 *   trail_uevent_free(ev);
 *
 * The definition is the kernel's user_events grammar (NAME [TYPE FIELD;
 * ...], types u8..u64, s8..s64, char, short, int and their unsigned
 * forms, char[N], struct T NAME SIZE, __data_loc/__rel_loc char[]) with
 * trail's types besides: string (or char[]), bytes, bool, float, double.
 * The event is SYSTEM:NAME (`trail record -e 'app:request'`); SYSTEM NULL
 * means user_events, where the kernel's ABI puts its events. Filters,
 * triggers, hist and every export see its fields by name.
 *
 * Ownership: trail_uevent_new returns a handle the caller frees with
 * trail_uevent_free; two handles with the same system, name and fields
 * share one event (its last free deletes it). Thread-safe: any thread may
 * write while another registers or frees other handles; writing a handle
 * being freed is the caller's bug. trail_uevent_write may be called from
 * a signal handler if its record is at most 16 KiB.
 */
#ifndef TRAIL_UEVENT_H
#define TRAIL_UEVENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque; its first word is the status word: nonzero while a recording
 * session wants the event. */
struct trail_uevent;

/* A definition's error: the byte of the definition it is at, and why. */
struct trail_uevent_err {
	int pos;
	char msg[128];
};

/* One field's value for trail_uevent_write, by the field's type:
 * integers and bool in i or u, float and double in d; string, char[N],
 * bytes and struct in p and len (len TRAIL_UVALUE_STRLEN: p is
 * NUL-terminated; p NULL: a NULL string, shown "(null)"). */
struct trail_uvalue {
	union {
		int64_t i;
		uint64_t u;
		double d;
		const void *p;
	};
	uint32_t len;
};
#define TRAIL_UVALUE_STRLEN 0xffffffffu

/* Field kinds, for bindings that check their values' types. */
enum trail_uevent_kind {
	TRAIL_UEVENT_SIGNED = 1, /* an integer (size 1, 2, 4, 8) */
	TRAIL_UEVENT_UNSIGNED,
	TRAIL_UEVENT_BOOL,
	TRAIL_UEVENT_FLOAT,      /* size 4 or 8 */
	TRAIL_UEVENT_STRING,     /* string, char[], char[N] (size N, else 0) */
	TRAIL_UEVENT_BYTES,      /* bytes, __data_loc u8[], struct (size SIZE, else 0) */
};

/* Register SYSTEM:NAME from DEF. NULL with errno set on failure: EINVAL
 * (err, if not NULL, says where), EADDRINUSE (that name is registered
 * with other fields), ENOMEM, EMFILE (too many events). */
struct trail_uevent *trail_uevent_new(const char *system, const char *def,
				      struct trail_uevent_err *err);

/* Is any recording session recording it? One load, for a guard. */
static inline int trail_uevent_enabled(const struct trail_uevent *ev)
{
	return __atomic_load_n((const uint32_t *)(const void *)ev, __ATOMIC_RELAXED) != 0;
}

/* The status word's address, for an FFI that loads it itself (a Java
 * direct ByteBuffer, a Rust AtomicU32). */
const uint32_t *trail_uevent_state(const struct trail_uevent *ev);

/* Write one record: n values, one per field in order. 0 (also when no
 * session records it), -EINVAL (n differs from the field count),
 * -ENOMEM (a record over 16 KiB in a signal handler). */
int trail_uevent_write(struct trail_uevent *ev, const struct trail_uvalue *v, unsigned n);

/* Write one record laid out as the kernel's user_events takes it (after
 * its write_index): the fields packed in order, __data_loc/__rel_loc
 * pointing into the same payload. 0, -EINVAL (shorter than the fields),
 * -EFAULT (a location outside the payload, or a string in it not
 * NUL-terminated). */
int trail_uevent_writev(struct trail_uevent *ev, const struct iovec *iov, int iovcnt);

/* The fields: their count, and field i's name, kind and size. */
unsigned trail_uevent_nfields(const struct trail_uevent *ev);
int trail_uevent_field(const struct trail_uevent *ev, unsigned i, const char **name,
		       enum trail_uevent_kind *kind, unsigned *size);

/* Give the handle back (NULL: nothing). */
void trail_uevent_free(struct trail_uevent *ev);

#ifdef __cplusplus
}
#endif

#endif /* TRAIL_UEVENT_H */
