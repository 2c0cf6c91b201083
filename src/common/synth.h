/* SPDX-License-Identifier: MIT */
/*
 * synth.h - synthetic events (the kernel's histogram.rst, "Synthetic
 * Events"): events a hist trigger's action generates from variables and
 * fields of other events, defined in the synthetic_events grammar
 *
 *   NAME TYPE FIELD[; TYPE FIELD ...]
 *
 *   TYPE  s8 u8 s16 u16 s32 u32 s64 u64, char, unsigned char, short,
 *         unsigned short, int, unsigned int, long, unsigned long, long
 *         long, unsigned long long, bool, pid_t, gfp_t, size_t, ssize_t
 *   FIELD a name; "char FIELD[N]" or "char FIELD[]" is a string (256
 *         bytes at most)
 *
 * and recorded as events "synthetic:NAME" like any other (filtered,
 * histogrammed, triggered on). Parsing allocates nothing and is
 * async-signal-safe: libtrail parses a session's "@synth DEF" lines when
 * it joins.
 */
#ifndef TRAIL_COMMON_SYNTH_H
#define TRAIL_COMMON_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h"

#define TRAIL_SYNTH_PROVIDER "synthetic"
#define TRAIL_SYNTH_MAX_FIELDS 16 /* an action's params at most */
#define TRAIL_SYNTH_MAX_NAME 64
#define TRAIL_SYNTH_STR_MAX 256   /* STR_VAR_LEN_MAX */
#define TRAIL_SYNTH_MAX_META 2048

struct trail_synth_field {
	char name[32];
	char type[24];  /* as the kernel shows it ("u64", "char[16]") */
	uint8_t size;   /* a number's bytes */
	uint8_t sign;
	uint8_t str;    /* a string of at most max bytes */
	uint16_t max;
};

struct trail_synth {
	char name[TRAIL_SYNTH_MAX_NAME];
	uint8_t nfields;
	struct trail_synth_field f[TRAIL_SYNTH_MAX_FIELDS];
};

/* Parse text (a definition). 0, or -1 with *e (a message and the
 * position in text). */
int trail_synth_parse(const char *text, struct trail_synth *s, struct trail_filter_err *e);
/* The definition as synthetic_events shows it, into buf (n bytes). */
void trail_synth_describe(const struct trail_synth *s, char *buf, size_t n);
/* The event's description (a trail_meta blob of abi.h, provider
 * "synthetic") into buf (n bytes): its size, or 0 if it does not fit. */
size_t trail_synth_meta(const struct trail_synth *s, void *buf, size_t n);
/* The most bytes a payload of s takes. */
size_t trail_synth_payload_max(const struct trail_synth *s);
/* A payload of s from an action's params (hist.h's trace callback:
 * numbers in vals, strings where strs[i] is set) into buf (at least
 * trail_synth_payload_max bytes): its length. */
size_t trail_synth_payload(const struct trail_synth *s, const uint64_t *vals,
			   const char *const *strs, const uint16_t *slen, uint8_t *buf);

#endif /* TRAIL_COMMON_SYNTH_H */
