/* SPDX-License-Identifier: MIT */
/*
 * rv.c - rvgen's DOT automata (rv.h). The tokenizer takes what rvgen
 * writes and what people write by hand in its style: comments (// # and
 * slash-star), quoted or bare names, "->", attribute lists; statements
 * are read loosely: a `{ node [shape = S] "X" ... }` block gives its
 * names shape S, `"A" -> "B" [label = "..."]` is an edge, `"X" [...]` a
 * node's attributes, anything else (rank blocks, graph attributes) only
 * names nodes.
 */
#include "rv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_END, T_ID, T_ARROW, T_PUNCT };

struct lex {
	const char *s;
	size_t n, i;
	int line, col;      /* where the lexer is */
	int tl, tc;         /* where the current token starts */
	int type;
	char tok[512];
	char punct;
};

static void advance(struct lex *L, size_t k)
{
	while (k-- && L->i < L->n) {
		if (L->s[L->i] == '\n') {
			L->line++;
			L->col = 1;
		} else {
			L->col++;
		}
		L->i++;
	}
}

static int next(struct lex *L)
{
	size_t t = 0;

	for (;;) {
		while (L->i < L->n && (L->s[L->i] == ' ' || L->s[L->i] == '\t' || L->s[L->i] == '\n' ||
				       L->s[L->i] == '\r'))
			advance(L, 1);
		if (L->i + 1 < L->n && L->s[L->i] == '/' && L->s[L->i + 1] == '*') {
			const char *e = memmem(L->s + L->i + 2, L->n - L->i - 2, "*/", 2);

			advance(L, e ? (size_t)(e - (L->s + L->i)) + 2 : L->n - L->i);
			continue;
		}
		if (L->i < L->n && (L->s[L->i] == '#' || (L->s[L->i] == '/' && L->i + 1 < L->n &&
							    L->s[L->i + 1] == '/'))) {
			while (L->i < L->n && L->s[L->i] != '\n')
				advance(L, 1);
			continue;
		}
		break;
	}
	L->tok[0] = '\0';
	L->tl = L->line;
	L->tc = L->col;
	if (L->i >= L->n)
		return L->type = T_END;
	if (L->s[L->i] == '"') {
		advance(L, 1);
		while (L->i < L->n && L->s[L->i] != '"') {
			if (L->s[L->i] == '\\' && L->i + 1 < L->n && L->s[L->i + 1] == '"')
				advance(L, 1);
			if (t + 1 < sizeof(L->tok))
				L->tok[t++] = L->s[L->i];
			advance(L, 1);
		}
		advance(L, 1);
		L->tok[t] = '\0';
		return L->type = T_ID;
	}
	if (L->s[L->i] == '-' && L->i + 1 < L->n && L->s[L->i + 1] == '>') {
		advance(L, 2);
		return L->type = T_ARROW;
	}
	if (strchr("{}[];=,", L->s[L->i])) {
		L->punct = L->s[L->i];
		advance(L, 1);
		return L->type = T_PUNCT;
	}
	while (L->i < L->n && !strchr(" \t\r\n{}[];=,\"", L->s[L->i]) &&
	       !(L->s[L->i] == '-' && L->i + 1 < L->n && L->s[L->i + 1] == '>')) {
		if (t + 1 < sizeof(L->tok))
			L->tok[t++] = L->s[L->i];
		advance(L, 1);
	}
	L->tok[t] = '\0';
	return L->type = T_ID;
}

static int fail(struct trail_rv_err *e, const struct lex *L, int line, int col, const char *msg)
{
	(void)L;
	e->line = line;
	e->col = col;
	snprintf(e->msg, sizeof(e->msg), "%.159s", msg);
	return -1;
}

/* the state named s (added if new): its index, -1 if too many */
static int state(struct trail_rv_model *m, const char *s)
{
	for (int i = 0; i < m->nstates; i++)
		if (!strcmp(m->states[i], s))
			return i;
	if (m->nstates == TRAIL_RV_MAX_STATES || strlen(s) >= TRAIL_RV_NAME_MAX)
		return -1;
	snprintf(m->states[m->nstates], TRAIL_RV_NAME_MAX, "%s", s);
	for (int k = 0; k < TRAIL_RV_MAX_EVENTS; k++)
		m->next[m->nstates][k] = -1;
	return m->nstates++;
}

static int event(struct trail_rv_model *m, const char *s, size_t n)
{
	for (int i = 0; i < m->nevents; i++)
		if (strlen(m->events[i]) == n && !memcmp(m->events[i], s, n))
			return i;
	if (m->nevents == TRAIL_RV_MAX_EVENTS || n >= TRAIL_RV_NAME_MAX)
		return -1;
	memcpy(m->events[m->nevents], s, n);
	m->events[m->nevents][n] = '\0';
	return m->nevents++;
}

/* "[ k = v, k = v ]" after the '[': shape and label (either may be NULL) */
static int attrs(struct lex *L, char *shape, char *label, size_t n)
{
	char key[64];

	while (next(L) != T_END) {
		if (L->type == T_PUNCT && L->punct == ']')
			return 0;
		if (L->type != T_ID)
			continue; /* (, and ;) */
		snprintf(key, sizeof(key), "%.63s", L->tok);
		if (next(L) != T_PUNCT || L->punct != '=' || next(L) != T_ID) {
			if (L->type == T_PUNCT && L->punct == ']')
				return 0;
			continue;
		}
		if (!strcmp(key, "shape") && shape)
			snprintf(shape, n, "%s", L->tok);
		if (!strcmp(key, "label") && label)
			snprintf(label, n, "%s", L->tok);
	}
	return -1;
}

static void declare(struct trail_rv_model *m, const char *name, const char *shape, char init[][TRAIL_RV_NAME_MAX],
		    int *ninit)
{
	int s;

	if (!strncmp(name, "__init_", 7)) {
		if (*ninit < 4)
			snprintf(init[(*ninit)++], TRAIL_RV_NAME_MAX, "%s", name);
		return;
	}
	if ((s = state(m, name)) >= 0 && !strcmp(shape, "doublecircle"))
		m->accepting |= 1ull << s;
}

int trail_rv_parse(const char *text, size_t n, struct trail_rv_model *m, struct trail_rv_err *e)
{
	struct lex L = {.s = text, .n = n, .line = 1, .col = 1};
	char shapes[16][32], prev[512] = "", init[4][TRAIL_RV_NAME_MAX];
	int depth = 0, ninit = 0, pline = 0, pcol = 0;

	memset(m, 0, sizeof(*m));
	m->init = -1;
	memset(shapes, 0, sizeof(shapes));
	if (next(&L) != T_ID || (strcmp(L.tok, "digraph") && strcmp(L.tok, "strict")))
		return fail(e, &L, L.tl, L.tc, "not a DOT digraph (digraph NAME { ... })");
	if (!strcmp(L.tok, "strict"))
		next(&L);
	if (next(&L) == T_ID) {
		snprintf(m->name, sizeof(m->name), "%.127s", L.tok);
		next(&L);
	}
	if (L.type != T_PUNCT || L.punct != '{')
		return fail(e, &L, L.tl, L.tc, "'{' expected");
	depth = 1;
	while (depth > 0) {
		int t = next(&L), line = L.tl, col = L.tc;

		if (t == T_END)
			return fail(e, &L, line, col, "the digraph's '}' is missing");
		if (t == T_PUNCT && L.punct == '{') {
			if (depth < 15)
				memcpy(shapes[depth], shapes[depth - 1], sizeof(shapes[0]));
			depth++;
			prev[0] = '\0';
			continue;
		}
		if (t == T_PUNCT && L.punct == '}') {
			if (prev[0])
				declare(m, prev, shapes[depth - 1 < 15 ? depth - 1 : 14], init, &ninit);
			prev[0] = '\0';
			depth--;
			continue;
		}
		if (t == T_PUNCT && L.punct == '[') { /* attributes of prev, or of node/graph */
			char shape[512] = "", label[512] = "";

			if (attrs(&L, shape, label, sizeof(label)))
				return fail(e, &L, line, col, "an attribute list's ']' is missing");
			if (!strcmp(prev, "node") && shape[0] && depth < 16)
				snprintf(shapes[depth - 1], sizeof(shapes[0]), "%.31s", shape);
			else if (prev[0] && strcmp(prev, "node") && strcmp(prev, "graph") && strcmp(prev, "edge"))
				declare(m, prev, shape[0] ? shape : shapes[depth - 1 < 15 ? depth - 1 : 14], init,
					&ninit);
			prev[0] = '\0';
			continue;
		}
		if (t == T_ARROW) {
			char src[512], dst[512], label[512] = "";
			int s, d, dline;

			if (!prev[0])
				return fail(e, &L, line, col, "an edge needs its source");
			snprintf(src, sizeof(src), "%s", prev);
			dline = L.line;
			if (next(&L) != T_ID)
				return fail(e, &L, L.tl, L.tc, "an edge needs its target");
			snprintf(dst, sizeof(dst), "%s", L.tok);
			prev[0] = '\0';
			if (next(&L) == T_PUNCT && L.punct == '[') {
				line = L.tl;
				col = L.tc;
				if (attrs(&L, NULL, label, sizeof(label)))
					return fail(e, &L, line, col, "an attribute list's ']' is missing");
			} else if (L.type == T_ID) {
				snprintf(prev, sizeof(prev), "%s", L.tok);
			}
			if (!strncmp(src, "__init_", 7)) {
				if ((d = state(m, dst)) < 0)
					return fail(e, &L, dline, pcol, "too many states (at most 64)");
				if (m->init >= 0 && m->init != d)
					return fail(e, &L, dline, 1, "two initial states");
				m->init = d;
				continue;
			}
			if ((s = state(m, src)) < 0 || (d = state(m, dst)) < 0)
				return fail(e, &L, dline, 1, "too many states (at most 64)");
			if (!label[0])
				return fail(e, &L, dline, 1, "an edge without a label (the events it is taken on)");
			for (const char *p = label; *p;) {
				const char *nl = strstr(p, "\\n");
				size_t k = nl ? (size_t)(nl - p) : strlen(p);
				int ev;

				while (k && p[k - 1] == ' ')
					k--;
				while (k && *p == ' ')
					p++, k--;
				if (k) {
					if ((ev = event(m, p, k)) < 0)
						return fail(e, &L, dline, 1, "too many events (at most 64), or a name too long");
					if (m->next[s][ev] >= 0 && m->next[s][ev] != d) {
						char msg[400];

						snprintf(msg, sizeof(msg), "not deterministic: two transitions on %s from %s",
							 m->events[ev], m->states[s]);
						return fail(e, &L, dline, 1, msg);
					}
					m->next[s][ev] = (int8_t)d;
				}
				p = nl ? nl + 2 : p + strlen(p);
			}
			continue;
		}
		if (t == T_ID) {
			/* a name alone (or "node"/"graph" before attributes) */
			if (prev[0] && strcmp(prev, "node") && strcmp(prev, "graph") && strcmp(prev, "edge") &&
			    strcmp(prev, "rank") && strcmp(prev, "min") && strcmp(prev, "max") &&
			    strcmp(prev, "same"))
				declare(m, prev, shapes[depth - 1 < 15 ? depth - 1 : 14], init, &ninit);
			snprintf(prev, sizeof(prev), "%s", L.tok);
			pline = line;
			pcol = col;
			continue;
		}
		/* ; , = */
		if (t == T_PUNCT && L.punct == '=') {
			next(&L); /* (a graph attribute's value) */
			prev[0] = '\0';
			continue;
		}
		if (prev[0] && strcmp(prev, "node") && strcmp(prev, "graph") && strcmp(prev, "edge"))
			declare(m, prev, shapes[depth - 1 < 15 ? depth - 1 : 14], init, &ninit);
		prev[0] = '\0';
	}
	(void)pline;
	if (m->init < 0)
		return fail(e, &L, 1, 1, "no initial state (an invisible \"__init_S\" node and an edge to S)");
	if (!m->nevents)
		return fail(e, &L, 1, 1, "no transitions");
	if (!m->name[0])
		snprintf(m->name, sizeof(m->name), "%s", "monitor");
	return 0;
}

void trail_rv_label(const char *label, size_t *plen, const char **filter, size_t *flen)
{
	const char *br = strchr(label, '['), *cl;

	*plen = br ? (size_t)(br - label) : strlen(label);
	while (*plen && label[*plen - 1] == ' ')
		(*plen)--;
	*filter = NULL;
	*flen = 0;
	if (br && (cl = strrchr(br, ']')) && cl > br + 1) {
		*filter = br + 1;
		*flen = (size_t)(cl - br - 1);
	}
}

void trail_rv_name_from_path(struct trail_rv_model *m, const char *path)
{
	const char *b;
	size_t bl;

	if (strcmp(m->name, "state_automaton") && strcmp(m->name, "monitor"))
		return;
	b = strrchr(path, '/');
	b = b ? b + 1 : path;
	bl = strcspn(b, ".");
	if (!bl)
		return;
	if (bl >= sizeof(m->name))
		bl = sizeof(m->name) - 1;
	memcpy(m->name, b, bl);
	m->name[bl] = '\0';
}

int trail_rv_reactor(const char *name)
{
	static const char *const r[] = {"nop", "trace", "printk", "abort", "traceoff", "snapshot"};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (!strcmp(name, r[i]))
			return TRAIL_RV_NOP + (int)i;
	return 0;
}

static const char hex[] = "0123456789abcdef";

struct out {
	char *b;
	size_t n, o;
};

static void put(struct out *o, const char *s, size_t k)
{
	for (size_t i = 0; i < k; i++, o->o++)
		if (o->o < o->n)
			o->b[o->o] = s[i];
}

/* a name, escaped, and a space after it */
static void put_name(struct out *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == '%' || c == 0x7f) {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};

			put(o, e, 3);
		} else {
			put(o, (const char *)&c, 1);
		}
	}
	put(o, " ", 1);
}

static void put_hex(struct out *o, uint64_t v, int digits)
{
	char d[16];

	for (int i = digits - 1; i >= 0; i--, v >>= 4)
		d[i] = hex[v & 15];
	put(o, d, (size_t)digits);
}

size_t trail_rv_encode(const struct trail_rv_mon *mon, char *buf, size_t n)
{
	const struct trail_rv_model *m = &mon->m;
	struct out o = {buf, n, 0};
	char num[16];

	snprintf(num, sizeof(num), "%d", mon->idx);
	put_name(&o, num);
	put_name(&o, mon->per);
	put_name(&o, mon->reactor);
	put_name(&o, m->name);
	put_hex(&o, (uint64_t)m->init, 2);
	put(&o, " ", 1);
	put_hex(&o, m->accepting, 16);
	put(&o, " ", 1);
	put_hex(&o, (uint64_t)m->nstates, 2);
	put(&o, " ", 1);
	put_hex(&o, (uint64_t)m->nevents, 2);
	put(&o, " ", 1);
	for (int i = 0; i < m->nstates; i++)
		put_name(&o, m->states[i]);
	for (int i = 0; i < m->nevents; i++)
		put_name(&o, m->events[i]);
	for (int s = 0; s < m->nstates; s++)
		for (int e = 0; e < m->nevents; e++)
			put_hex(&o, (uint8_t)m->next[s][e], 2);
	if (o.o >= n)
		return 0;
	buf[o.o] = '\0';
	return o.o;
}

struct in {
	const char *s;
	size_t n, i;
};

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* the next word, unescaped into d (cap bytes with its NUL); -1: none,
 * too long or badly escaped */
static int get_name(struct in *in, char *d, size_t cap)
{
	size_t k = 0;

	if (in->i >= in->n || in->s[in->i] == ' ')
		return -1;
	while (in->i < in->n && in->s[in->i] != ' ') {
		char c = in->s[in->i++];

		if (c == '%') {
			int h, l;

			if (in->i + 2 > in->n || (h = unhex(in->s[in->i])) < 0 ||
			    (l = unhex(in->s[in->i + 1])) < 0)
				return -1;
			c = (char)(h << 4 | l);
			in->i += 2;
		}
		if (k + 1 >= cap)
			return -1;
		d[k++] = c;
	}
	d[k] = '\0';
	if (in->i < in->n)
		in->i++; /* (the space) */
	return 0;
}

static int get_hex(struct in *in, int digits, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < digits; i++) {
		int h;

		if (in->i >= in->n || (h = unhex(in->s[in->i])) < 0)
			return -1;
		*v = *v << 4 | (uint64_t)h;
		in->i++;
	}
	return 0;
}

static int get_field(struct in *in, int digits, uint64_t *v)
{
	if (get_hex(in, digits, v))
		return -1;
	if (in->i < in->n && in->s[in->i] == ' ')
		in->i++;
	else
		return -1;
	return 0;
}

int trail_rv_decode(const char *v, size_t len, struct trail_rv_mon *mon)
{
	struct trail_rv_model *m = &mon->m;
	struct in in = {v, len, 0};
	char num[16];
	uint64_t x, acc, ns, ne;

	memset(mon, 0, sizeof(*mon));
	if (get_name(&in, num, sizeof(num)) || get_name(&in, mon->per, sizeof(mon->per)) ||
	    get_name(&in, mon->reactor, sizeof(mon->reactor)) ||
	    get_name(&in, m->name, sizeof(m->name)) || get_field(&in, 2, &x) ||
	    get_field(&in, 16, &acc) || get_field(&in, 2, &ns) || get_field(&in, 2, &ne))
		return -1;
	mon->idx = 0;
	for (const char *c = num; *c; c++) {
		if (*c < '0' || *c > '9' || mon->idx > 1000)
			return -1;
		mon->idx = mon->idx * 10 + (*c - '0');
	}
	if (!ns || ns > TRAIL_RV_MAX_STATES || !ne || ne > TRAIL_RV_MAX_EVENTS || x >= ns ||
	    !trail_rv_reactor(mon->reactor))
		return -1;
	m->init = (int)x;
	m->accepting = acc;
	m->nstates = (int)ns;
	m->nevents = (int)ne;
	for (int i = 0; i < m->nstates; i++)
		if (get_name(&in, m->states[i], sizeof(m->states[i])))
			return -1;
	for (int i = 0; i < m->nevents; i++)
		if (get_name(&in, m->events[i], sizeof(m->events[i])))
			return -1;
	for (int s = 0; s < m->nstates; s++)
		for (int e = 0; e < m->nevents; e++) {
			if (get_hex(&in, 2, &x) || (x != 0xff && x >= ns))
				return -1;
			m->next[s][e] = (int8_t)(x == 0xff ? -1 : (int)x);
		}
	return in.i == in.n ? 0 : -1;
}

int trail_rv_load(const char *path, struct trail_rv_model *m, char *err, size_t n)
{
	FILE *f = fopen(path, "re");
	struct trail_rv_err e;
	char *text;
	size_t tn;
	int r = -1;

	if (!f) {
		snprintf(err, n, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!(text = malloc((1 << 20) + 1))) {
		snprintf(err, n, "out of memory");
	} else if ((tn = fread(text, 1, (1 << 20) + 1, f)) > 1 << 20) {
		snprintf(err, n, "%s: larger than 1 MiB: not a monitor's model", path);
	} else if (ferror(f)) {
		snprintf(err, n, "%s: %s", path, strerror(errno));
	} else if (trail_rv_parse(text, tn, m, &e)) {
		snprintf(err, n, "%s:%d:%d: %s", path, e.line, e.col, e.msg);
	} else {
		trail_rv_name_from_path(m, path);
		r = 0;
	}
	free(text);
	fclose(f);
	return r;
}
