/* SPDX-License-Identifier: MIT */
/* bconf.c - the bootconfig grammar (bconf.h). */
#include "bconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *in;
	size_t len, pos;
	struct trail_bconf *c;
	char *out;  /* where the next word or value is written */
	struct trail_bconf_node *open[TRAIL_BCONF_DEPTH]; /* the braces' keys */
	unsigned nopen;
	struct trail_bconf_err *e;
	size_t lpos;           /* where line/col were counted to */
	unsigned lline, lcol;
};

/* the line and column of byte at (positions asked grow, mostly) */
static void where(struct parser *P, size_t at, unsigned *line, unsigned *col)
{
	if (at < P->lpos) {
		P->lpos = 0;
		P->lline = P->lcol = 1;
	}
	for (; P->lpos < at && P->lpos < P->len; P->lpos++) {
		if (P->in[P->lpos] == '\n') {
			P->lline++;
			P->lcol = 1;
		} else {
			P->lcol++;
		}
	}
	*line = P->lline;
	*col = P->lcol;
}

static int fail(struct parser *P, size_t at, const char *msg)
{
	where(P, at, &P->e->line, &P->e->col);
	P->e->msg = msg;
	P->e->pos = at;
	return -EINVAL;
}

static int at_end(const struct parser *P)
{
	return P->pos >= P->len;
}

static char cur(const struct parser *P)
{
	return at_end(P) ? '\0' : P->in[P->pos];
}

static void skip_blanks(struct parser *P)
{
	while (!at_end(P) && (cur(P) == ' ' || cur(P) == '\t' || cur(P) == '\r'))
		P->pos++;
}

static void skip_comment(struct parser *P)
{
	while (!at_end(P) && cur(P) != '\n')
		P->pos++;
}

static int word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_';
}

/* a new node for n bytes at s, written where it was found (at) */
static struct trail_bconf_node *node_new(struct parser *P, const char *s, size_t n, int value,
					  size_t at, int *err)
{
	struct trail_bconf_node *k;

	if (P->c->nnodes == TRAIL_BCONF_NODES) {
		*err = fail(P, at, "Too many nodes");
		return NULL;
	}
	k = &P->c->nodes[P->c->nnodes++];
	memset(k, 0, sizeof(*k));
	memcpy(P->out, s, n);
	P->out[n] = '\0';
	k->data = P->out;
	P->out += n + 1;
	k->value = value;
	k->pos = at;
	where(P, at, &k->line, &k->col);
	return k;
}

/* the child key word of parent (NULL: the top level) */
static struct trail_bconf_node *child_key(struct parser *P, struct trail_bconf_node *parent,
					  const char *w, size_t n)
{
	for (struct trail_bconf_node *k = parent ? parent->child : P->c->root; k; k = k->next)
		if (!k->value && strlen(k->data) == n && !memcmp(k->data, w, n))
			return k;
	return NULL;
}

static void append(struct parser *P, struct trail_bconf_node *parent, struct trail_bconf_node *k)
{
	struct trail_bconf_node **at = parent ? &parent->child : &P->c->root;

	while (*at)
		at = &(*at)->next;
	*at = k;
	k->parent = parent;
}

/* The key at [s, s + n) (its words found or made under the current
 * brace's key): its node, or NULL with *err. */
static struct trail_bconf_node *key_path(struct parser *P, size_t s, size_t n, int *err)
{
	struct trail_bconf_node *parent = P->nopen ? P->open[P->nopen - 1] : NULL;
	size_t i = s, full = 0, depth = 0;

	for (struct trail_bconf_node *k = parent; k; k = k->parent) {
		full += strlen(k->data) + 1;
		depth++;
	}
	if (!n) {
		*err = fail(P, s, "Invalid keyword");
		return NULL;
	}
	while (i <= s + n) {
		size_t w = i;
		struct trail_bconf_node *k;

		while (i < s + n && P->in[i] != '.') {
			if (!word_char(P->in[i])) {
				*err = fail(P, s, "Invalid keyword");
				return NULL;
			}
			i++;
		}
		if (i == w) {
			*err = fail(P, s, "Invalid keyword");
			return NULL;
		}
		full += i - w + 1;
		if (full > TRAIL_BCONF_KEYLEN) {
			*err = fail(P, w, "Too long key length");
			return NULL;
		}
		if (++depth > TRAIL_BCONF_DEPTH) {
			*err = fail(P, w, "Too many key words");
			return NULL;
		}
		if (!(k = child_key(P, parent, P->in + w, i - w))) {
			if (!(k = node_new(P, P->in + w, i - w, 0, w, err)))
				return NULL;
			append(P, parent, k);
		}
		parent = k;
		i++; /* past the dot, or past the end */
	}
	return parent;
}

/* k's last value node, or NULL */
static struct trail_bconf_node *last_value(struct trail_bconf_node *k)
{
	struct trail_bconf_node *v = NULL;

	for (struct trail_bconf_node *n = k->child; n && n->value; n = n->next)
		v = n;
	return v;
}

/* v as k's value, after after (NULL: first) */
static void value_put(struct trail_bconf_node *k, struct trail_bconf_node *after,
		      struct trail_bconf_node *v)
{
	struct trail_bconf_node **at = after ? &after->next : &k->child;

	v->next = *at;
	*at = v;
	v->parent = k;
}

/* One value at the current position: it is added after *after. Returns
 * the delimiter that ended it (',', ';', '\n', '}', '#' or '\0' at the
 * end), or -1 with *err. */
static int one_value(struct parser *P, struct trail_bconf_node *k,
		     struct trail_bconf_node **after, int *err)
{
	size_t s, n;
	struct trail_bconf_node *v;
	char q;

	skip_blanks(P);
	q = cur(P);
	s = P->pos;
	if (q == '"' || q == '\'') {
		const char *end = memchr(P->in + s + 1, q, P->len - s - 1);

		if (!end) {
			*err = fail(P, s, "No closing quotes");
			return -1;
		}
		s++;
		n = (size_t)(end - (P->in + s));
		P->pos = (size_t)(end - P->in) + 1;
		skip_blanks(P);
		if (!at_end(P) && !strchr(",;\n#}", cur(P))) {
			*err = fail(P, P->pos, "No value delimiter");
			return -1;
		}
	} else {
		while (!at_end(P) && !strchr(",;\n#}", cur(P)))
			P->pos++;
		n = P->pos - s;
		while (n && (P->in[s + n - 1] == ' ' || P->in[s + n - 1] == '\t' ||
			     P->in[s + n - 1] == '\r'))
			n--;
	}
	if (!(v = node_new(P, P->in + s, n, 1, s, err)))
		return -1;
	value_put(k, *after, v);
	*after = v;
	return cur(P);
}

/* The values after KEY =, +=, := (op): 0 or *err's value. */
static int values(struct parser *P, struct trail_bconf_node *k, char op)
{
	struct trail_bconf_node *after = last_value(k);
	int c, err = 0;

	skip_blanks(P);
	if (after && op == '=') /* (at the value, as the kernel says it) */
		return fail(P, P->pos, "Value is redefined");
	if (after && op == ':') { /* the old ones go */
		while (k->child && k->child->value)
			k->child = k->child->next;
		after = NULL;
	}
	for (;;) {
		if ((c = one_value(P, k, &after, &err)) < 0)
			return err;
		if (c != ',')
			break;
		/* the next value may follow newlines and comments */
		P->pos++;
		for (;;) {
			skip_blanks(P);
			if (cur(P) == '#')
				skip_comment(P);
			else if (cur(P) == '\n')
				P->pos++;
			else
				break;
		}
	}
	if (c == '#')
		skip_comment(P);
	else if (c == ';' || c == '\n')
		P->pos++;
	return 0;
}

static int parse(struct parser *P)
{
	int err = 0;

	for (;;) {
		size_t s, n;
		struct trail_bconf_node *k;
		char d;

		skip_blanks(P);
		if (at_end(P))
			break;
		switch (cur(P)) {
		case '\n':
		case ';':
			P->pos++;
			continue;
		case '#':
			skip_comment(P);
			continue;
		case '}':
			if (!P->nopen)
				return fail(P, P->pos, "Unexpected '}'");
			P->nopen--;
			P->pos++;
			continue;
		}
		/* a key, up to its delimiter */
		s = P->pos;
		while (!at_end(P) && !strchr("{}=+:;\n#", cur(P)))
			P->pos++;
		n = P->pos - s;
		while (n && (P->in[s + n - 1] == ' ' || P->in[s + n - 1] == '\t' ||
			     P->in[s + n - 1] == '\r'))
			n--;
		d = cur(P);
		if ((d == '+' || d == ':') && (P->pos + 1 >= P->len || P->in[P->pos + 1] != '='))
			return fail(P, P->pos, d == '+' ? "Wrong '+' operator" : "Wrong ':' operator");
		if (!(k = key_path(P, s, n, &err)))
			return err;
		switch (d) {
		case '=':
		case '+':
		case ':':
			P->pos += d == '=' ? 1 : 2;
			if ((err = values(P, k, d)))
				return err;
			break;
		case '{':
			if (P->nopen == TRAIL_BCONF_DEPTH)
				return fail(P, P->pos, "Exceed max depth of braces");
			P->open[P->nopen++] = k;
			P->pos++;
			break;
		default: /* a key alone: ; newline # } or the end follow */
			break;
		}
	}
	if (P->nopen)
		return fail(P, P->open[P->nopen - 1]->pos, "Brace is not closed");
	if (!P->c->nnodes)
		return fail(P, 0, "Empty config");
	return 0;
}

int trail_bconf_parse(const char *text, size_t len, struct trail_bconf *c,
		      struct trail_bconf_err *e)
{
	struct parser P = {.in = text, .len = len, .c = c, .e = e, .lline = 1, .lcol = 1};
	const char *nul;
	int r;

	memset(c, 0, sizeof(*c));
	memset(e, 0, sizeof(*e));
	if (!len || len > TRAIL_BCONF_MAX) {
		e->msg = len ? "Config data is too big" : "Config data is empty";
		return -ERANGE;
	}
	if ((nul = memchr(text, '\0', len)))
		return fail(&P, (size_t)(nul - text), "A NUL byte in the config data");
	c->nodes = calloc(TRAIL_BCONF_NODES, sizeof(*c->nodes));
	c->text = malloc(len + TRAIL_BCONF_NODES + 1);
	if (!c->nodes || !c->text) {
		trail_bconf_free(c);
		e->msg = "Out of memory";
		return -ENOMEM;
	}
	P.out = c->text;
	if ((r = parse(&P)))
		trail_bconf_free(c);
	return r;
}

void trail_bconf_free(struct trail_bconf *c)
{
	free(c->nodes);
	free(c->text);
	memset(c, 0, sizeof(*c));
}

const struct trail_bconf_node *trail_bconf_values(const struct trail_bconf_node *k)
{
	return k->child && k->child->value ? k->child : NULL;
}

size_t trail_bconf_nvalues(const struct trail_bconf_node *k)
{
	size_t n = 0;

	for (const struct trail_bconf_node *v = trail_bconf_values(k); v && v->value; v = v->next)
		n++;
	return n;
}

static int each(const struct trail_bconf_node *k, char *key, size_t len,
		int (*fn)(void *arg, const char *key, const struct trail_bconf_node *k), void *arg)
{
	for (; k; k = k->next) {
		size_t n = strlen(k->data);
		const struct trail_bconf_node *sub;
		int has_sub = 0, r;

		if (k->value)
			continue;
		if (len + n + 2 > TRAIL_BCONF_KEYLEN + 1)
			continue; /* (the parser refused such keys) */
		if (len)
			key[len] = '.';
		memcpy(key + len + !!len, k->data, n + 1);
		for (sub = k->child; sub; sub = sub->next)
			has_sub |= !sub->value;
		if ((trail_bconf_values(k) || !has_sub) && (r = fn(arg, key, k)))
			return r;
		if (has_sub && (r = each(k->child, key, len + !!len + n, fn, arg)))
			return r;
		key[len] = '\0';
	}
	return 0;
}

int trail_bconf_each(const struct trail_bconf *c,
		     int (*fn)(void *arg, const char *key, const struct trail_bconf_node *k),
		     void *arg)
{
	char key[TRAIL_BCONF_KEYLEN + 2] = "";

	return each(c->root, key, 0, fn, arg);
}

struct names {
	const char *prefix;
	size_t plen;
	char (*names)[64];
	int max, n;
};

static int name_key(void *arg, const char *key, const struct trail_bconf_node *k)
{
	struct names *l = arg;
	const char *name = key + l->plen, *dot;
	size_t len;

	(void)k;
	if (strncmp(key, l->prefix, l->plen) || !(dot = strchr(name, '.')) || dot == name ||
	    (len = (size_t)(dot - name)) > 63)
		return 0;
	for (int i = 0; i < l->n && i < l->max; i++)
		if (strlen(l->names[i]) == len && !strncmp(l->names[i], name, len))
			return 0;
	if (l->n < l->max) {
		memcpy(l->names[l->n], name, len);
		l->names[l->n][len] = '\0';
	}
	l->n++;
	return 0;
}

int trail_bconf_names(const struct trail_bconf *c, const char *prefix, char (*names)[64],
		      int max)
{
	struct names l = {prefix, strlen(prefix), names, max, 0};

	trail_bconf_each(c, name_key, &l);
	return l.n;
}
