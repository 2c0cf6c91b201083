/* SPDX-License-Identifier: MIT */
/*
 * uevent.h - user events: events a program defines at run time, in the
 * grammar of the kernel's user_events (Documentation/trace/user_events.rst):
 *
 *   NAME[:FLAGS] [FIELD[;FIELD...]]      FIELD: TYPE NAME | struct T NAME SIZE
 *   TYPE: s8 u8 s16 u16 s32 u32 s64 u64 char short int (and their
 *         "unsigned" forms), char[N] unsigned char[N] (N <= 1024),
 *         __data_loc T / __rel_loc T (a 32-bit size << 16 | offset)
 *
 * parsed into a definition (struct trail_ue_def), the trail event
 * description it becomes (a trail_meta blob: provider user_events, or
 * user_events_multi for MULTI_FORMAT registrations, or the system a
 * program chose through trail/uevent.h), and a payload written in the
 * kernel's layout (fields packed in order, a __data_loc's offset counted
 * from the start of the kernel's record: 8 bytes of common header before
 * the payload; a __rel_loc's from the end of its own 4 bytes) turned into
 * trail's (strings as a u16 length and their bytes). Shared by libtrail
 * (the ABI it answers, trail_uevent_*), the CLI (`u:` lines) and tests.
 *
 * Types as the kernel takes them; trail's definitions through the C API
 * (TRAIL_UE_EXT) also take: string (= __data_loc char[]), char[] (the
 * same), bytes (= __data_loc u8[]), bool, float, double, and the kernel's
 * types. Every error has a byte position for a caret.
 */
#ifndef TRAIL_COMMON_UEVENT_H
#define TRAIL_COMMON_UEVENT_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h" /* struct trail_filter_err */

#define TRAIL_UE_PROVIDER "user_events"
#define TRAIL_UE_MULTI_PROVIDER "user_events_multi"
#define TRAIL_UE_DESC_MAX 512  /* the kernel's MAX_EVENT_DESC, NUL included */
#define TRAIL_UE_NAME_MAX 110  /* an event's or system's name: trail's
				* names are at most 128 bytes, and a
				* MULTI_FORMAT one takes ".<id>" more */
#define TRAIL_UE_FIELD_MAX 128 /* a field name's bytes */
#define TRAIL_UE_MAX_FIELDS 128
#define TRAIL_UE_ARRAY_MAX 1024 /* the kernel's MAX_FIELD_ARRAY_SIZE */
#define TRAIL_UE_LOC_OFF 8     /* a __data_loc's offsets start before the
				* payload: the kernel's common header */

/* parse options */
#define TRAIL_UE_EXT 1u /* trail's types too (the C API, Python, Java) */

enum trail_ue_kind {
	TRAIL_UE_INT = 1, /* size 1, 2, 4 or 8 */
	TRAIL_UE_FLOAT,   /* size 4 or 8 (EXT) */
	TRAIL_UE_CHARS,   /* char[N]: a string of at most N bytes */
	TRAIL_UE_BLOB,    /* struct T NAME SIZE: SIZE bytes */
	TRAIL_UE_LOC,     /* __data_loc, __rel_loc: 4 bytes in the layout */
};

struct trail_ue_field {
	uint16_t name, type;  /* offsets into def->text: the name, the type
			       * as written (one blank between words) */
	uint8_t kind;
	uint8_t sign;         /* the kernel's rule: type[0] != 'u' */
	uint8_t boolean;      /* EXT bool */
	uint8_t rel;          /* LOC: __rel_loc */
	uint8_t str;          /* LOC: a char type (NUL-terminated on write) */
	uint8_t esize;        /* LOC of integers: element size (1 if not) */
	uint32_t size;        /* bytes in the kernel's layout */
	uint32_t off;         /* offset in the kernel's payload */
};

struct trail_ue_def {
	uint32_t nfields;
	uint32_t min_size;    /* the kernel's payload: the fields' bytes */
	uint32_t direct;      /* the payload is trail's as it is (no loc,
			       * no char[N]) */
	uint32_t ext;         /* uses trail's types */
	uint16_t name;        /* offset of the event name in text */
	struct trail_ue_field f[TRAIL_UE_MAX_FIELDS];
	char text[TRAIL_UE_DESC_MAX + 64]; /* NUL-separated names and types */
	uint32_t text_used;
};

static inline const char *trail_ue_name(const struct trail_ue_def *d)
{
	return d->text + d->name;
}

static inline const char *trail_ue_fname(const struct trail_ue_def *d, uint32_t i)
{
	return d->text + d->f[i].name;
}

static inline const char *trail_ue_ftype(const struct trail_ue_def *d, uint32_t i)
{
	return d->text + d->f[i].type;
}

/* Parse s (a NUL-terminated definition, at most TRAIL_UE_DESC_MAX - 1
 * bytes). 0, or -EINVAL with e->pos the byte the error is at (the
 * kernel gives EINVAL for every grammar error), -E2BIG for a too long
 * definition. */
int trail_ue_parse(const char *s, unsigned opts, struct trail_ue_def *d,
		   struct trail_filter_err *e);

/* The kernel's "same event" rule: same fields, in order, with the same
 * types as written, names and sizes. 1 or 0. */
int trail_ue_same(const struct trail_ue_def *a, const struct trail_ue_def *b);

/* The definition as the kernel lists it in dynamic_events, without the
 * "u:" ("NAME TYPE FIELD; TYPE FIELD"), into buf[0..n). Its length. */
size_t trail_ue_format(const struct trail_ue_def *d, char *buf, size_t n);

/* The trail event description (a trail_meta blob) for d under provider
 * and name: its size, or 0 if it does not fit in n bytes. */
size_t trail_ue_meta(const struct trail_ue_def *d, const char *provider, const char *name,
		     void *buf, size_t n);

/* The most bytes trail_ue_convert writes for d. */
size_t trail_ue_out_max(const struct trail_ue_def *d);

/* A payload in the kernel's layout (p, len bytes; len >= min_size, the
 * bytes past the fields ignored) into trail's, in out (room for
 * trail_ue_out_max bytes): 0 and *olen, or -EINVAL (len < min_size),
 * -EFAULT (a __data_loc/__rel_loc outside the payload, or a char one
 * not NUL-terminated: the kernel's validators). Reads nothing outside
 * p[0..len). */
int trail_ue_convert(const struct trail_ue_def *d, const uint8_t *p, size_t len, uint8_t *out,
		     size_t *olen);

#endif /* TRAIL_COMMON_UEVENT_H */
