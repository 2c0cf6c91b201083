/* SPDX-License-Identifier: MIT */
/*
 * hist.h - histogram triggers' grammar (the kernel's histogram.rst):
 *
 *   hist:keys=KEY[,KEY...][:vals=VAL[,VAL...]][:sort=S[,S]][:size=N]
 *        [:name=NAME][:pause|:cont|:clear][:VAR=EXPR[,VAR=EXPR...]]
 *        [:HANDLER.ACTION...] [if FILTER]
 *
 *   KEY  a field, common_pid, common_comm or common_timestamp, with at
 *        most one modifier: .hex .sym .sym-offset .execname (common_pid)
 *        .log2 .buckets=N .usecs (common_timestamp); or $VAR, or
 *        VAR=FIELD (a key kept in a variable too)
 *   VAL  hitcount, or a numeric field / common_timestamp, with .hex
 *        .percent .graph; or $VAR (a variable's values summed)
 *   S    a key or a val (or hitcount), .ascending (default) or
 *        .descending
 *   EXPR numbers: fields (.usecs .log2 .buckets=N), constants, $VAR
 *        (this histogram's, or another event's: read once, matched by
 *        key; SYS.EVENT.$VAR names its event), + - * / and parentheses
 *   HANDLER.ACTION
 *        onmatch(SYS.EVENT).trace(SYNTH,PARAM,...) or .SYNTH(PARAM,...)
 *        onmax($VAR) or onchange($VAR) with .save(FIELD,...),
 *        .snapshot() or .trace(SYNTH,PARAM,...); PARAM: a field of the
 *        event or a $VAR
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
#define TRAIL_HIST_MAX_VARS 16      /* TRACING_MAP_VARS_MAX */
#define TRAIL_HIST_MAX_REFS 16      /* other events' variables read */
#define TRAIL_HIST_MAX_OPS 64       /* every expression's operands and operators */
#define TRAIL_HIST_MAX_XF 24        /* fields read by expressions, params, saves */
#define TRAIL_HIST_MAX_ACTIONS 4
#define TRAIL_HIST_MAX_PARAMS 16    /* an action's */
#define TRAIL_HIST_VAR_NAME 32
#define TRAIL_HIST_EXPR_DEPTH 16    /* an expression's evaluation stack */
#define TRAIL_HIST_PARENS 8         /* parentheses nested in an expression
				     * (the kernel: 3 subexpressions) */

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
#define TRAIL_HIST_VARIABLE 0xfffd /* a key or val: a variable (var) */

struct trail_hist_field {
	uint16_t field;    /* event field, TRAIL_FILTER_PID/COMM/TS..., or
			    * TRAIL_HIST_HITCOUNT, TRAIL_HIST_VARIABLE */
	uint8_t mod;       /* enum trail_hist_mod */
	uint8_t str;       /* a string field */
	uint8_t sign;
	uint8_t var;       /* TRAIL_HIST_VARIABLE: the variable's index */
	uint64_t buckets;  /* .buckets=N */
	char name[64];     /* as written, without the modifier */
};

/* an expression's operand or operator, in postfix order */
enum trail_hist_xkind {
	TRAIL_HX_FIELD = 1, /* xf[idx] */
	TRAIL_HX_CONST,     /* imm */
	TRAIL_HX_VAR,       /* this histogram's variable idx (this update's) */
	TRAIL_HX_REF,       /* refs[idx]: another event's variable */
	TRAIL_HX_ADD,
	TRAIL_HX_SUB,
	TRAIL_HX_MUL,
	TRAIL_HX_DIV,       /* by 0: all ones (the kernel's -1) */
	TRAIL_HX_NEG,
};

struct trail_hist_xop {
	uint8_t kind, idx;
	uint16_t pos; /* in the text */
	uint64_t imm;
};

struct trail_hist_var {
	char name[TRAIL_HIST_VAR_NAME];
	uint8_t first, nops; /* its expression: ops[first .. first + nops) */
	uint8_t refs;        /* reads other events' variables */
	uint8_t key;         /* keys=NAME=FIELD: key index + 1 */
	uint16_t pos;        /* its name in the text */
	uint16_t len;        /* NAME=EXPR's length */
};

/* another event's variable: found by name (in SYS:EVENT's histograms
 * when event is set: sys.event.$name, or onmatch's event) */
struct trail_hist_ref {
	char name[TRAIL_HIST_VAR_NAME];
	char event[128];
	uint16_t pos;
};

enum trail_hist_handler { TRAIL_HH_ONMATCH = 1, TRAIL_HH_ONMAX, TRAIL_HH_ONCHANGE };
enum trail_hist_action_kind { TRAIL_HA_TRACE = 1, TRAIL_HA_SAVE, TRAIL_HA_SNAPSHOT };

struct trail_hist_param {
	uint8_t kind; /* TRAIL_HX_FIELD, TRAIL_HX_VAR or TRAIL_HX_REF */
	uint8_t idx;
	uint16_t pos;
};

struct trail_hist_action {
	uint8_t handler, action;
	uint8_t var;      /* onmax, onchange: the variable watched */
	uint8_t nparams;
	char event[128];  /* onmatch: SYS:EVENT */
	char synth[64];   /* trace: the synthetic event */
	uint16_t pos, len; /* the action's text */
	uint16_t synth_pos;
	struct trail_hist_param p[TRAIL_HIST_MAX_PARAMS];
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
	const char *text;   /* the text parsed (positions are in it) */
	/* variables (in evaluation order: order[]), their expressions,
	 * the other events' variables they read, the fields they read,
	 * actions */
	uint8_t nvars, nrefs, nops, nxf, nact;
	uint8_t order[TRAIL_HIST_MAX_VARS];
	struct trail_hist_var vars[TRAIL_HIST_MAX_VARS];
	struct trail_hist_ref refs[TRAIL_HIST_MAX_REFS];
	struct trail_hist_xop ops[TRAIL_HIST_MAX_OPS];
	struct trail_hist_field xf[TRAIL_HIST_MAX_XF];
	struct trail_hist_action act[TRAIL_HIST_MAX_ACTIONS];
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
	uint16_t word;       /* the key's first word for it; a save: its
			      * first word in the entry's extra words */
	uint8_t size, sign, str, mod;
	uint8_t var;         /* field TRAIL_HIST_VARIABLE: the variable */
	uint64_t buckets;
};

/*
 * What a table entry holds beyond its key, hits and vals (its "extra"
 * words, htab.h), for variables and actions:
 *
 *   u64 set        bit i: variable i holds a value (read once by other
 *                  events' expressions, which clear it)
 *   u64 var[nvars]
 *   per onmax/onchange action: u64 tracked (the entry's max, last value)
 *   per save action: u64 lock, then the saved fields (a number: a word,
 *                  a string TRAIL_HIST_STR_MAX bytes, common_comm 16)
 *
 * and a table's aux words (one per table), for a snapshot action:
 *
 *   u64 taken (snapshots taken), u64 value (the global max or last
 *   value), u64 lock, u64 key[kwords] (the key of the event that took it)
 */
struct trail_hist_cact {
	uint8_t handler, action, var, nparams;
	uint16_t track; /* its tracked word (extra), 0xffff: none */
	uint16_t save;  /* save: its lock word (extra) */
	struct trail_hist_param p[TRAIL_HIST_MAX_PARAMS];
};

struct trail_hist_keyer {
	uint16_t kwords;
	uint8_t nkeys, nvals, sympid;
	uint8_t clock; /* reads common_timestamp (or common_cpu) */
	uint8_t comm;  /* reads common_comm */
	uint16_t nlay;
	struct trail_hist_part k[TRAIL_HIST_MAX_KEYS], v[TRAIL_HIST_MAX_VALS];
	/* variables, expressions, actions (spec's, compiled) */
	uint8_t nvars, nrefs, nact, snap;
	uint16_t nextra, naux;
	uint32_t vstore; /* the variables kept in the entry (others' expressions
			  * read them); all by default */
	uint8_t order[TRAIL_HIST_MAX_VARS];
	uint8_t vfirst[TRAIL_HIST_MAX_VARS], vnops[TRAIL_HIST_MAX_VARS], vrefs[TRAIL_HIST_MAX_VARS];
	struct trail_hist_xop ops[TRAIL_HIST_MAX_OPS];
	struct trail_hist_part xp[TRAIL_HIST_MAX_XF];
	struct trail_hist_cact act[TRAIL_HIST_MAX_ACTIONS];
	struct trail_flay lay[TRAIL_META_MAX_FIELDS];
};

/* The key of h on the event m describes. */
void trail_hist_keyer(const struct trail_hist_spec *h, const struct trail_meta *m,
		      struct trail_hist_keyer *k);
/* A record's key (k->kwords words) and vals (k->nvals). 0, or -1 when
 * the payload is too short for a field. c: the common fields' values.
 * (Variables: trail_hist_update.) */
int trail_hist_key(const struct trail_hist_keyer *k, const uint8_t *p, uint32_t len,
		   const struct trail_filter_ctx *c, uint64_t *key, uint64_t *vals);

/* The copies a table of k gets (htab.h): one per CPU (ncpu) for counting;
 * one, shared, when entries hold variables or actions' state (an event on
 * another CPU finds them). And its bytes. */
uint32_t trail_hist_copies(const struct trail_hist_keyer *k, uint32_t ncpu);
size_t trail_hist_bytes(const struct trail_hist_spec *h, const struct trail_hist_keyer *k,
			uint32_t ncpu);

/*
 * One record into table t (of k's dimensions): variables computed,
 * other events' variables read (once), the key counted, variables kept,
 * actions run. Async-signal-safe, allocates nothing.
 */
struct trail_hist_io {
	/* refs[i]'s table and the variable's index in it (NULL: none yet:
	 * the update is skipped, as when the variable is not set) */
	struct trail_htab *reft[TRAIL_HIST_MAX_REFS];
	uint8_t refvar[TRAIL_HIST_MAX_REFS];
	/* action i's trace: the params' numbers (strs[j] non-NULL: a
	 * string of slen[j] bytes instead) */
	void (*trace)(void *arg, unsigned i, const uint64_t *vals, const char *const *strs,
		      const uint16_t *slen);
	/* action i's snapshot */
	void (*snapshot)(void *arg, unsigned i);
	void *arg;
};
/* 0: counted; 1: skipped (a variable read is not set); -1: the payload
 * is too short, or the table is full (counted in its dropped). c->vars
 * is set (to this update's variables, gone when it returns). */
int trail_hist_update(const struct trail_hist_keyer *k, struct trail_htab *t, uint32_t cpu,
		      const uint8_t *p, uint32_t len, struct trail_filter_ctx *c,
		      const struct trail_hist_io *io);
/* The variable called name in spec h: its index, or -1. */
int trail_hist_var(const struct trail_hist_spec *h, const char *name);

#endif /* TRAIL_COMMON_HIST_H */
