/* SPDX-License-Identifier: MIT */
/*
 * hist.h - histogram triggers' grammar (the kernel's histogram.rst):
 *
 *   hist:keys=KEY[,KEY...][:vals=VAL[,VAL...]][:sort=S[,S]][:size=N]
 *        [:name=NAME][:pause|:cont|:clear] [if FILTER]
 *
 *   KEY  a field, common_pid, common_comm or common_timestamp, with at
 *        most one modifier: .hex .sym .sym-offset .execname (common_pid)
 *        .log2 .buckets=N .usecs (common_timestamp)
 *   VAL  hitcount, or a numeric field / common_timestamp, with .hex
 *        .percent .graph
 *   S    a key or a val (or hitcount), .ascending (default) or
 *        .descending
 *
 * Parsed against one event's fields (filter.h's common fields included);
 * "hist:" may be left out. Allocates nothing.
 */
#ifndef TRAIL_COMMON_HIST_H
#define TRAIL_COMMON_HIST_H

#include <stdint.h>

#include "filter.h"

#define TRAIL_HIST_MAX_KEYS 3  /* TRACING_MAP_KEYS_MAX */
#define TRAIL_HIST_MAX_VALS 3  /* besides hitcount */
#define TRAIL_HIST_MAX_SORT 2  /* TRACING_MAP_SORT_KEYS_MAX */
#define TRAIL_HIST_SIZE_DEFAULT 2048
#define TRAIL_HIST_SIZE_MIN 128     /* 1 << TRACING_MAP_BITS_MIN */
#define TRAIL_HIST_SIZE_MAX 131072  /* 1 << TRACING_MAP_BITS_MAX */
#define TRAIL_HIST_STR_MAX 256      /* a string key's bytes kept */

enum trail_hist_mod {
	TRAIL_HM_NONE,
	TRAIL_HM_HEX,
	TRAIL_HM_SYM,
	TRAIL_HM_SYM_OFFSET,
	TRAIL_HM_EXECNAME,
	TRAIL_HM_LOG2,
	TRAIL_HM_BUCKETS,
	TRAIL_HM_USECS,
	TRAIL_HM_PERCENT,
	TRAIL_HM_GRAPH,
};

#define TRAIL_HIST_HITCOUNT 0xfffe /* a val or sort field: hitcount */

struct trail_hist_field {
	uint16_t field;    /* event field, TRAIL_FILTER_PID/COMM/TS..., or
			    * TRAIL_HIST_HITCOUNT */
	uint8_t mod;       /* enum trail_hist_mod */
	uint8_t str;       /* a string field */
	uint8_t sign;
	uint64_t buckets;  /* .buckets=N */
	char name[64];     /* as written, without the modifier */
};

struct trail_hist_sort {
	uint8_t val;       /* 0: key idx, 1: val idx (TRAIL_HIST_HITCOUNT too) */
	uint8_t idx;       /* keys[idx] or vals[idx]; hitcount: 0xff */
	uint8_t desc;
};

struct trail_hist_spec {
	uint8_t nkeys, nvals, nsort;
	struct trail_hist_field keys[TRAIL_HIST_MAX_KEYS];
	struct trail_hist_field vals[TRAIL_HIST_MAX_VALS];
	uint8_t hit_mod;   /* hitcount's .percent or .graph */
	struct trail_hist_sort sort[TRAIL_HIST_MAX_SORT];
	uint32_t size;     /* entries at most (a power of two) */
	char name[64];     /* name=, "" if none */
	uint8_t paused;    /* :pause */
	uint8_t cont, clear;
	const char *filter; /* in the text: after "if ", or NULL */
};

/* Parse text for the event m describes. 0, or -1 with *e (the kernel's
 * message and the position in text). The filter is not compiled here. */
int trail_hist_parse(const char *text, const struct trail_meta *m, struct trail_hist_spec *h,
		     struct trail_filter_err *e);

/* The spec as the kernel shows it in "# trigger info:" (keys, vals with
 * hitcount first, sort, size, name), into buf (n bytes). */
void trail_hist_describe(const struct trail_hist_spec *h, char *buf, size_t n);

/*
 * A histogram's key as words (the table's key, htab.h): a number (its
 * modifier applied: .log2, .buckets, .usecs) takes a word, a string
 * TRAIL_HIST_STR_MAX bytes (NUL-padded), common_comm 16; a spec with a
 * .sym or .sym-offset key ends with a hidden word, the pid, for a reader
 * to find the symbol in the right process. Made once per event; finding
 * a record's key allocates nothing and is async-signal-safe (libtrail
 * runs it in the record path).
 */
struct trail_hist_part {
	uint16_t field, off; /* off: in every payload, or 0xffff */
	uint16_t word;       /* the key's first word for it */
	uint8_t size, sign, str, mod;
	uint64_t buckets;
};

struct trail_hist_keyer {
	uint16_t kwords;
	uint8_t nkeys, nvals, sympid;
	uint8_t clock; /* reads common_timestamp (or common_cpu) */
	uint8_t comm;  /* reads common_comm */
	uint16_t nlay;
	struct trail_hist_part k[TRAIL_HIST_MAX_KEYS], v[TRAIL_HIST_MAX_VALS];
	struct trail_flay lay[TRAIL_META_MAX_FIELDS];
};

/* The key of h on the event m describes. */
void trail_hist_keyer(const struct trail_hist_spec *h, const struct trail_meta *m,
		      struct trail_hist_keyer *k);
/* A record's key (k->kwords words) and vals (k->nvals). 0, or -1 when
 * the payload is too short for a field. c: the common fields' values. */
int trail_hist_key(const struct trail_hist_keyer *k, const uint8_t *p, uint32_t len,
		   const struct trail_filter_ctx *c, uint64_t *key, uint64_t *vals);

#endif /* TRAIL_COMMON_HIST_H */
