/* SPDX-License-Identifier: MIT */
/*
 * bconf.h - the kernel's bootconfig grammar (Documentation/admin-guide/
 * bootconfig.rst), parsed into a tree: keys are dot-joined words
 * ([A-Za-z0-9_-]), values follow `=` (a comma-separated array, quoted
 * with ' or " to hold a delimiter), `+=` appends to a key's values, `:=`
 * replaces them, `KEY { ... }` scopes keys under KEY, a key alone is a
 * boolean, `#` starts a comment; `;` or a newline ends an entry. The
 * kernel's limits and its error messages: at most TRAIL_BCONF_MAX bytes
 * and TRAIL_BCONF_NODES nodes, keys of TRAIL_BCONF_KEYLEN bytes and
 * TRAIL_BCONF_DEPTH words at most; "Value is redefined", "Brace is not
 * closed", ... with the line and column where the parser stopped.
 */
#ifndef TRAIL_SESSION_BCONF_H
#define TRAIL_SESSION_BCONF_H

#include <stddef.h>

#define TRAIL_BCONF_MAX 32767u
#define TRAIL_BCONF_NODES 1024u
#define TRAIL_BCONF_KEYLEN 256u
#define TRAIL_BCONF_DEPTH 16u

struct trail_bconf_node {
	const char *data;   /* a key's word, or a value */
	int value;          /* a value node (the first children of a key) */
	size_t pos;         /* where it was written: its byte offset, */
	unsigned line, col; /* its line and column (1-based) */
	struct trail_bconf_node *parent, *child, *next;
};

struct trail_bconf {
	struct trail_bconf_node *root; /* the first top-level key */
	struct trail_bconf_node *nodes;
	size_t nnodes;
	char *text;                    /* the words and values, NUL-ended */
};

struct trail_bconf_err {
	const char *msg;
	unsigned line, col; /* 0: not a position in the text */
	size_t pos;         /* its byte offset */
};

/* Parses len bytes of text: 0, or -EINVAL / -ERANGE / -ENOMEM with e set. */
int trail_bconf_parse(const char *text, size_t len, struct trail_bconf *c,
		      struct trail_bconf_err *e);
void trail_bconf_free(struct trail_bconf *c);

/* For each key that has values or none (a boolean) but no subkeys, in the
 * order written: fn(arg, its full key "a.b.c", the key's node); fn's
 * non-zero stops it and is returned. */
int trail_bconf_each(const struct trail_bconf *c,
		     int (*fn)(void *arg, const char *key, const struct trail_bconf_node *k),
		     void *arg);
/* The distinct names that follow prefix ("ftrace.instance.") in the
 * keys, in the order first written, up to max of at most 63 bytes each
 * (longer ones left out): how many there are. */
int trail_bconf_names(const struct trail_bconf *c, const char *prefix, char (*names)[64],
		      int max);
/* A key node's values: the first (NULL: none), then ->next while ->value */
const struct trail_bconf_node *trail_bconf_values(const struct trail_bconf_node *k);
/* how many values a key has */
size_t trail_bconf_nvalues(const struct trail_bconf_node *k);

#endif /* TRAIL_SESSION_BCONF_H */
