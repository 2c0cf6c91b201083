/* SPDX-License-Identifier: MIT */
/*
 * meta.h - event descriptions (the trail_meta blobs of trail/abi.h): parsing
 * and validating them, and measuring an event payload against one. Used by
 * libtrail on its own objects, by `trail list` on ELF files and by the reader
 * on trace files, so every input is treated as hostile.
 */
#ifndef TRAIL_COMMON_META_H
#define TRAIL_COMMON_META_H

#include <stddef.h>
#include <stdint.h>

#include <trail/abi.h>

#define TRAIL_META_MAX_FIELDS 255

struct trail_field {
	const char *name;
	uint8_t kind, size, flags;
	uint16_t count;
};

struct trail_meta {
	const char *provider;
	const char *name;
	uint32_t size;      /* bytes of the blob */
	uint32_t nfields;
	uint32_t fixed_len; /* payload size when no field is variable */
	int variable;       /* any string or sequence field */
	struct trail_field fields[TRAIL_META_MAX_FIELDS];
};

/* Parse the blob at p (at most avail bytes). Pointers in m point into p.
 * Returns 0, or -EPROTO with *why a static message. */
int trail__meta_parse(const void *p, size_t avail, struct trail_meta *m,
		      const char **why);

/* FNV-1a over the blob: identity of a (name, layout) pair. */
uint32_t trail__meta_hash(const void *p, size_t size);

/* Bytes an event payload occupies, given what is available. Returns 0 and
 * *len, or -EPROTO if the payload runs past avail or breaks a limit. */
int trail__payload_len(const struct trail_meta *m, const uint8_t *p,
		       size_t avail, size_t *len);

/* A C-like type name for a field, for listings ("int", "u64", "char[]"). */
const char *trail__field_type(const struct trail_field *f, char *buf,
			      size_t n);

#endif /* TRAIL_COMMON_META_H */
