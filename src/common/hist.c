/* SPDX-License-Identifier: MIT */
/*
 * hist.c - the histogram grammar (hist.h). Error texts follow the
 * kernel's (trace_events_hist.c's err_text) where it has one.
 */
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "htab.h"
#include "util.h"

static int fail(struct trail_filter_err *e, size_t pos, const char *msg)
{
	e->pos = (int)pos;
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	return -1;
}

static const struct {
	const char *name;
	uint8_t mod;
} mods[] = {
	{"hex", TRAIL_HM_HEX},       {"sym", TRAIL_HM_SYM},         {"sym-offset", TRAIL_HM_SYM_OFFSET},
	{"execname", TRAIL_HM_EXECNAME}, {"log2", TRAIL_HM_LOG2},   {"buckets", TRAIL_HM_BUCKETS},
	{"usecs", TRAIL_HM_USECS},   {"percent", TRAIL_HM_PERCENT}, {"graph", TRAIL_HM_GRAPH},
};

/* s[0..n) names a field of m (or a common one): 0 with f filled, or -1 */
static int field_of(const struct trail_meta *m, const char *s, size_t n,
		    struct trail_hist_field *f)
{
	if (n >= sizeof(f->name))
		return -1;
	memcpy(f->name, s, n);
	f->name[n] = '\0';
	for (uint32_t i = 0; i < m->nfields; i++)
		if (!strcmp(m->fields[i].name, f->name)) {
			const struct trail_field *fd = &m->fields[i];

			if (fd->kind != TRAIL_FK_INT && fd->kind != TRAIL_FK_STRING)
				return -2; /* arrays, sequences, floats: not keys or vals */
			f->field = (uint16_t)i;
			f->str = fd->kind == TRAIL_FK_STRING;
			f->sign = !!(fd->flags & TRAIL_FF_SIGNED);
			return 0;
		}
	{
		int c = trail_filter_common(s, n);

		if (c < 0)
			return -1;
		f->field = (uint16_t)c;
		f->str = f->field == TRAIL_FILTER_COMM;
		f->sign = 0;
		if (f->field == TRAIL_FILTER_COMM)
			snprintf(f->name, sizeof(f->name), "common_comm");
		return 0;
	}
}

/* "NAME[.MOD[=N]]" at s (n bytes, at pos in the text) into f; key: a key
 * (else a val) */
static int parse_field(const char *s, size_t n, size_t pos, const struct trail_meta *m,
		       int key, struct trail_hist_field *f, struct trail_filter_err *e)
{
	const char *dot = memchr(s, '.', n);
	size_t fn = dot ? (size_t)(dot - s) : n;
	int r;

	memset(f, 0, sizeof(*f));
	if (!fn)
		return fail(e, pos, "Empty field name");
	if (!key && fn == 8 && !memcmp(s, "hitcount", 8)) {
		f->field = TRAIL_HIST_HITCOUNT;
		snprintf(f->name, sizeof(f->name), "hitcount");
	} else if ((r = field_of(m, s, fn, f)) < 0) {
		return fail(e, pos, r == -2 ? "Field type not supported for hist (integers and strings)"
					    : "Couldn't find field");
	}
	if (dot) {
		const char *ms = dot + 1;
		size_t mn = n - fn - 1, eq = strcspn(ms, "=");
		size_t k;

		if (eq > mn)
			eq = mn;
		for (k = 0; k < sizeof(mods) / sizeof(mods[0]); k++)
			if (strlen(mods[k].name) == eq && !memcmp(mods[k].name, ms, eq))
				break;
		if (k == sizeof(mods) / sizeof(mods[0]))
			return fail(e, pos + fn + 1, "Invalid field modifier");
		f->mod = mods[k].mod;
		if (f->mod == TRAIL_HM_BUCKETS) {
			uint64_t v = 0;
			size_t i = eq + 1;

			if (eq == mn || i == mn)
				return fail(e, pos + fn + 1, "Missing buckets size (.buckets=N)");
			for (; i < mn; i++) {
				if (ms[i] < '0' || ms[i] > '9' || v > 1000000000000ull)
					return fail(e, pos + fn + 1 + eq + 1, "Invalid buckets size");
				v = v * 10 + (uint64_t)(ms[i] - '0');
			}
			if (!v)
				return fail(e, pos + fn + 1 + eq + 1, "Invalid buckets size");
			f->buckets = v;
		} else if (eq != mn) {
			return fail(e, pos + fn + 1, "Invalid field modifier");
		}
		/* where each modifier goes */
		if ((key && (f->mod == TRAIL_HM_PERCENT || f->mod == TRAIL_HM_GRAPH)) ||
		    (!key && f->mod != TRAIL_HM_HEX && f->mod != TRAIL_HM_PERCENT &&
		     f->mod != TRAIL_HM_GRAPH) ||
		    (f->str && f->mod != TRAIL_HM_NONE) ||
		    (f->mod == TRAIL_HM_EXECNAME && f->field != TRAIL_FILTER_PID) ||
		    (f->mod == TRAIL_HM_USECS && f->field != TRAIL_FILTER_TS) ||
		    (f->field == TRAIL_HIST_HITCOUNT && f->mod == TRAIL_HM_HEX))
			return fail(e, pos + fn + 1, "Invalid field modifier");
	}
	if (!key && f->str)
		return fail(e, pos, "A value must be a number");
	return 0;
}

/* ------------------------------------------------------------ variables */

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

int trail_hist_var(const struct trail_hist_spec *h, const char *name)
{
	for (int i = 0; i < h->nvars; i++)
		if (!strcmp(h->vars[i].name, name))
			return i;
	return -1;
}

static int var_n(const struct trail_hist_spec *h, const char *s, size_t n)
{
	for (int i = 0; i < h->nvars; i++)
		if (strlen(h->vars[i].name) == n && !memcmp(h->vars[i].name, s, n))
			return i;
	return -1;
}

static const char *const keywords[] = {"keys", "key", "vals", "values", "sort", "size",
				       "name", "pause", "cont", "continue", "clear",
				       "hitcount", "common_timestamp", "common_pid", "common_tid",
				       "common_cpu", "common_comm", "cpu", "CPU", "COMM",
				       "onmatch", "onmax", "onchange", "clock"};

/* a new variable NAME (s, n bytes at pos): its index, or -1 with *e */
static int var_new(struct trail_hist_spec *h, const struct trail_meta *m, const char *s,
		   size_t n, size_t pos, struct trail_filter_err *e)
{
	struct trail_hist_var *v;

	if (!n || n >= TRAIL_HIST_VAR_NAME)
		return fail(e, pos, "Invalid variable name");
	for (size_t i = 0; i < n; i++)
		if (!is_ident(s[i]) || (i == 0 && s[i] >= '0' && s[i] <= '9'))
			return fail(e, pos + i, "Invalid variable name");
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strlen(keywords[i]) == n && !memcmp(keywords[i], s, n))
			return fail(e, pos, "Variable name can't be a keyword");
	for (uint32_t i = 0; i < m->nfields; i++)
		if (strlen(m->fields[i].name) == n && !memcmp(m->fields[i].name, s, n))
			return fail(e, pos, "Variable name can't be a field name");
	if (var_n(h, s, n) >= 0)
		return fail(e, pos, "Variable already defined");
	if (h->nvars == TRAIL_HIST_MAX_VARS)
		return fail(e, pos, "Too many variables defined (Max = 16)");
	v = &h->vars[h->nvars];
	memset(v, 0, sizeof(*v));
	memcpy(v->name, s, n);
	v->pos = (uint16_t)pos;
	return h->nvars++;
}

/* an operand FIELD[.MOD] of an expression or a param (s, n bytes at
 * pos): its xf index, or -1. str: strings allowed (params, saves) */
static int xfield(struct trail_hist_spec *h, const struct trail_meta *m, const char *s, size_t n,
		  size_t pos, int str, struct trail_filter_err *e)
{
	struct trail_hist_field f;

	if (parse_field(s, n, pos, m, 1, &f, e))
		return -1;
	if (f.mod == TRAIL_HM_HEX || f.mod == TRAIL_HM_SYM || f.mod == TRAIL_HM_SYM_OFFSET ||
	    f.mod == TRAIL_HM_EXECNAME)
		return fail(e, pos + strcspn(f.name, "") + 1, "Invalid field modifier");
	if (f.str && !str)
		return fail(e, pos, "Variables and expressions hold numbers (a string field)");
	if (h->nxf == TRAIL_HIST_MAX_XF)
		return fail(e, pos, "Too many fields in expressions and actions (Max = 24)");
	h->xf[h->nxf] = f;
	return h->nxf++;
}

/* "SYS.EVENT" (s, n bytes) into d as "SYS:EVENT": 0, or -1 */
static int event_name(const char *s, size_t n, char *d, size_t dn)
{
	const char *dot = memchr(s, '.', n);

	if (!dot || dot == s || dot == s + n - 1 || n >= dn || memchr(dot + 1, '.', n - (size_t)(dot + 1 - s)))
		return -1;
	memcpy(d, s, n);
	d[dot - s] = ':';
	d[n] = '\0';
	return 0;
}

/* another event's variable NAME (of SYS:EVENT if event): its refs index */
static int ref_of(struct trail_hist_spec *h, const char *name, size_t n, const char *event,
		  size_t pos, struct trail_filter_err *e)
{
	struct trail_hist_ref *r;

	if (!n || n >= TRAIL_HIST_VAR_NAME)
		return fail(e, pos, "Invalid variable name");
	for (int i = 0; i < h->nrefs; i++)
		if (strlen(h->refs[i].name) == n && !memcmp(h->refs[i].name, name, n) &&
		    !strcmp(h->refs[i].event, event ? event : ""))
			return i;
	if (h->nrefs == TRAIL_HIST_MAX_REFS)
		return fail(e, pos, "Too many variable references (Max = 16)");
	r = &h->refs[h->nrefs];
	memset(r, 0, sizeof(*r));
	memcpy(r->name, name, n);
	snprintf(r->event, sizeof(r->event), "%s", event ? event : "");
	r->pos = (uint16_t)pos;
	return h->nrefs++;
}

/* "$NAME" or "SYS.EVENT.$NAME" at s (n bytes at pos): a variable of
 * this histogram (*kind VAR) or another event's (REF); its index, or -1 */
static int var_use(struct trail_hist_spec *h, const char *s, size_t n, size_t pos, uint8_t *kind,
		   struct trail_filter_err *e)
{
	const char *dollar = memchr(s, '$', n);
	size_t vn;
	int i;

	if (!dollar)
		return fail(e, pos, "Invalid variable reference");
	vn = n - (size_t)(dollar + 1 - s);
	for (size_t q = 0; q < vn; q++)
		if (!is_ident(dollar[1 + q]))
			return fail(e, pos + (size_t)(dollar + 1 - s) + q, "Invalid variable reference");
	if (dollar == s) {
		if ((i = var_n(h, s + 1, vn)) >= 0) {
			*kind = TRAIL_HX_VAR;
			return i;
		}
		*kind = TRAIL_HX_REF;
		return ref_of(h, s + 1, vn, NULL, pos, e);
	} else {
		char ev[128];

		if (dollar[-1] != '.' || event_name(s, (size_t)(dollar - 1 - s), ev, sizeof(ev)))
			return fail(e, pos, "Invalid variable reference (SYS.EVENT.$VAR)");
		*kind = TRAIL_HX_REF;
		return ref_of(h, dollar + 1, vn, ev, pos, e);
	}
}

struct xparse {
	struct trail_hist_spec *h;
	const struct trail_meta *m;
	const char *t;  /* the whole text */
	size_t i, end;  /* the expression's bytes left: t[i .. end) */
	struct trail_filter_err *e;
	int depth;
};

static int emit_op(struct xparse *x, uint8_t kind, uint8_t idx, size_t pos, uint64_t imm)
{
	struct trail_hist_spec *h = x->h;

	if (h->nops == TRAIL_HIST_MAX_OPS)
		return fail(x->e, pos, "Expression too long");
	h->ops[h->nops++] = (struct trail_hist_xop){kind, idx, (uint16_t)pos, imm};
	return 0;
}

static void skip_sp(struct xparse *x)
{
	while (x->i < x->end && (x->t[x->i] == ' ' || x->t[x->i] == '\t'))
		x->i++;
}

static int x_sum(struct xparse *x);

static int x_primary(struct xparse *x)
{
	const char *t = x->t;
	size_t at, n;

	skip_sp(x);
	at = x->i;
	if (at == x->end)
		return fail(x->e, at, "Missing operand");
	if (t[at] == '(') {
		if (++x->depth > TRAIL_HIST_PARENS)
			return fail(x->e, at, "Too many subexpressions (8 max)");
		x->i++;
		if (x_sum(x))
			return -1;
		skip_sp(x);
		if (x->i == x->end || t[x->i] != ')')
			return fail(x->e, at, "Unbalanced parentheses");
		x->i++;
		x->depth--;
		return 0;
	}
	if (t[at] == '-') {
		x->i++;
		if (x_primary(x))
			return -1;
		return emit_op(x, TRAIL_HX_NEG, 0, at, 0);
	}
	/* the operand: up to an operator, a parenthesis or a blank (a
	 * .buckets=N modifier's '=' is part of it) */
	n = 0;
	while (at + n < x->end && !strchr("+-*/() \t", t[at + n]))
		n++;
	x->i = at + n;
	if (!n)
		return fail(x->e, at, "Missing operand");
	if (t[at] >= '0' && t[at] <= '9') {
		uint64_t v;
		size_t bad;

		if (trail__parse_num(t + at, n, &v, &bad))
			return fail(x->e, at + bad, "Invalid number");
		return emit_op(x, TRAIL_HX_CONST, 0, at, v);
	}
	if (memchr(t + at, '$', n)) {
		uint8_t kind;
		int i = var_use(x->h, t + at, n, at, &kind, x->e);

		return i < 0 ? -1 : emit_op(x, kind, (uint8_t)i, at, 0);
	}
	{
		int i = xfield(x->h, x->m, t + at, n, at, 0, x->e);

		return i < 0 ? -1 : emit_op(x, TRAIL_HX_FIELD, (uint8_t)i, at, 0);
	}
}

/* a level of binary operators: operands of the next level (level 0:
 * + and -, 1: * and /, 2: a primary) joined by this level's */
static int x_level(struct xparse *x, int level)
{
	static const char ops[2][2] = {{'+', '-'}, {'*', '/'}};
	static const uint8_t kinds[2][2] = {{TRAIL_HX_ADD, TRAIL_HX_SUB},
					    {TRAIL_HX_MUL, TRAIL_HX_DIV}};

	if (level == 2)
		return x_primary(x);
	if (x_level(x, level + 1))
		return -1;
	for (;;) {
		size_t at;
		int k;

		skip_sp(x);
		at = x->i;
		if (at == x->end || (x->t[at] != ops[level][0] && x->t[at] != ops[level][1]))
			return 0;
		k = x->t[at] == ops[level][1];
		x->i++;
		if (x_level(x, level + 1) || emit_op(x, kinds[level][k], 0, at, 0))
			return -1;
	}
}

static int x_sum(struct xparse *x)
{
	return x_level(x, 0);
}

/* variable v = the expression text[i .. end) */
static int var_expr(struct trail_hist_spec *h, const struct trail_meta *m, int v, size_t i,
		    size_t end, struct trail_filter_err *e)
{
	struct xparse x = {h, m, h->text, i, end, e, 0};
	struct trail_hist_var *var = &h->vars[v];

	var->first = h->nops;
	if (x_sum(&x))
		return -1;
	skip_sp(&x);
	if (x.i != end)
		return fail(e, x.i, h->text[x.i] == ')' ? "Unbalanced parentheses"
						       : "Invalid expression");
	var->nops = (uint8_t)(h->nops - var->first);
	for (uint8_t q = var->first; q < h->nops; q++)
		var->refs |= h->ops[q].kind == TRAIL_HX_REF;
	return 0;
}

/* a keys= or vals= element (s, n bytes at pos): FIELD[.MOD], $VAR or
 * (keys) VAR=FIELD */
static int list_var(const char *s, size_t n, size_t pos, const struct trail_meta *m, int key,
		    struct trail_hist_spec *h, struct trail_hist_field *f, struct trail_filter_err *e)
{
	const char *eq = memchr(s, '=', n), *dot = memchr(s, '.', n);
	int v;

	if (n && s[0] == '$') {
		memset(f, 0, sizeof(*f));
		if ((v = var_n(h, s + 1, n - 1)) < 0)
			return fail(e, pos, "Couldn't find variable");
		if (key && h->vars[v].refs)
			return fail(e, pos, "A key can't read other events' variables");
		f->field = TRAIL_HIST_VARIABLE;
		f->var = (uint8_t)v;
		snprintf(f->name, sizeof(f->name), "%s", h->vars[v].name);
		return 0;
	}
	if (!eq || (dot && dot < eq)) /* (.buckets=N) */
		return parse_field(s, n, pos, m, key, f, e);
	if (!key)
		return fail(e, pos, "Variables are assigned outside vals= (vals=$VAR)");
	/* keys=NAME=FIELD: the key, kept in variable NAME too */
	if ((v = var_n(h, s, (size_t)(eq - s))) < 0)
		return fail(e, pos, "Invalid variable name");
	if (parse_field(eq + 1, n - (size_t)(eq + 1 - s), pos + (size_t)(eq + 1 - s), m, 1, f, e))
		return -1;
	if (f->str)
		return fail(e, pos + (size_t)(eq + 1 - s),
			    "Variables and expressions hold numbers (a string field)");
	if (h->nxf == TRAIL_HIST_MAX_XF)
		return fail(e, pos, "Too many fields in expressions and actions (Max = 24)");
	h->vars[v].first = h->nops;
	h->vars[v].nops = 1;
	h->vars[v].key = (uint8_t)(h->nkeys + 1);
	h->vars[v].len = (uint16_t)n;
	h->xf[h->nxf] = *f;
	if (h->nops == TRAIL_HIST_MAX_OPS)
		return fail(e, pos, "Expression too long");
	h->ops[h->nops++] = (struct trail_hist_xop){TRAIL_HX_FIELD, h->nxf++, (uint16_t)pos, 0};
	return 0;
}

/* one action's param (s, n bytes at pos), trace's or save's */
static int param_of(struct trail_hist_spec *h, const struct trail_meta *m, const char *s,
		    size_t n, size_t pos, int save, struct trail_hist_param *p,
		    struct trail_filter_err *e)
{
	const char *dot;
	int i;

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--, pos++;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n)
		return fail(e, pos, "Missing param");
	p->pos = (uint16_t)pos;
	if (memchr(s, '$', n)) {
		if (save)
			return fail(e, pos, "save() takes fields of the event");
		i = var_use(h, s, n, pos, &p->kind, e);
		if (i < 0)
			return -1;
		p->idx = (uint8_t)i;
		return 0;
	}
	/* SYS.EVENT.FIELD: this event's field, written in full */
	dot = memchr(s, '.', n);
	if (dot && (dot = memchr(dot + 1, '.', n - (size_t)(dot + 1 - s)))) {
		size_t pl = strlen(m->provider), nl = strlen(m->name);

		if ((size_t)(dot - s) != pl + 1 + nl || memcmp(s, m->provider, pl) ||
		    s[pl] != '.' || memcmp(s + pl + 1, m->name, nl))
			return fail(e, pos, "A field of another event: keep it in a variable "
					    "there (VAR=FIELD) and pass $VAR");
		pos += (size_t)(dot + 1 - s);
		n -= (size_t)(dot + 1 - s);
		s = dot + 1;
	}
	i = xfield(h, m, s, n, pos, 1, e);
	if (i < 0)
		return -1;
	p->kind = TRAIL_HX_FIELD;
	p->idx = (uint8_t)i;
	return 0;
}

/* HANDLER(ARG).ACTION(PARAMS) at text[i .. k) */
static int parse_action(struct trail_hist_spec *h, const struct trail_meta *m, size_t i,
			size_t k, struct trail_filter_err *e)
{
	const char *t = h->text;
	struct trail_hist_action *a;
	size_t open = i, close, name, po, pe;
	static const char *const hn[] = {NULL, "onmatch", "onmax", "onchange"};
	int v;

	if (h->nact == TRAIL_HIST_MAX_ACTIONS)
		return fail(e, i, "Too many actions (Max = 4)");
	a = &h->act[h->nact];
	memset(a, 0, sizeof(*a));
	a->pos = (uint16_t)i;
	a->len = (uint16_t)(k - i);
	while (open < k && t[open] != '(')
		open++;
	for (uint8_t q = 1; q <= 3; q++)
		if (open - i == strlen(hn[q]) && !memcmp(t + i, hn[q], open - i))
			a->handler = q;
	if (!a->handler || open == k)
		return fail(e, i, "Invalid handler (onmatch, onmax, onchange)");
	close = open + 1;
	while (close < k && t[close] != ')')
		close++;
	if (close == k)
		return fail(e, open, "Unbalanced parentheses");
	if (a->handler == TRAIL_HH_ONMATCH) {
		if (event_name(t + open + 1, close - open - 1, a->event, sizeof(a->event)))
			return fail(e, open + 1, "onmatch() needs the matching event: SYS.EVENT");
	} else {
		if (close - open < 3 || t[open + 1] != '$' ||
		    (v = var_n(h, t + open + 2, close - open - 2)) < 0)
			return fail(e, open + 1, "Couldn't find onmax or onchange var");
		a->var = (uint8_t)v;
	}
	if (close + 1 >= k || t[close + 1] != '.')
		return fail(e, close + 1, "Missing action (.trace(), .save(), .snapshot())");
	name = close + 2;
	po = name;
	while (po < k && t[po] != '(')
		po++;
	if (po == k || t[k - 1] != ')')
		return fail(e, po < k ? k - 1 : name, "Unbalanced parentheses");
	pe = k - 1;
	if (po - name == 5 && !memcmp(t + name, "trace", 5)) {
		a->action = TRAIL_HA_TRACE;
	} else if (po - name == 4 && !memcmp(t + name, "save", 4)) {
		a->action = TRAIL_HA_SAVE;
	} else if (po - name == 8 && !memcmp(t + name, "snapshot", 8)) {
		a->action = TRAIL_HA_SNAPSHOT;
	} else if (a->handler == TRAIL_HH_ONMATCH && po > name) {
		/* onmatch(...).SYNTH(params) */
		a->action = TRAIL_HA_TRACE;
		if (po - name >= sizeof(a->synth))
			return fail(e, name, "Invalid synthetic event name");
		memcpy(a->synth, t + name, po - name);
		a->synth_pos = (uint16_t)name;
	} else {
		return fail(e, name, "Invalid action (trace, save, snapshot)");
	}
	if (a->handler == TRAIL_HH_ONMATCH && a->action != TRAIL_HA_TRACE)
		return fail(e, name, "onmatch() takes trace() (or a synthetic event's name)");
	if (a->action == TRAIL_HA_SNAPSHOT) {
		for (size_t q = po + 1; q < pe; q++)
			if (t[q] != ' ' && t[q] != '\t')
				return fail(e, q, "snapshot() takes no params");
		for (int q = 0; q < h->nact; q++)
			if (h->act[q].action == TRAIL_HA_SNAPSHOT)
				return fail(e, i, "One snapshot() action per histogram");
	} else {
		size_t q = po + 1;

		while (q <= pe) {
			size_t c = q;

			while (c < pe && t[c] != ',')
				c++;
			if (a->action == TRAIL_HA_TRACE && !a->synth[0]) {
				/* trace(SYNTH, ...): the event first */
				size_t b = q, l;

				while (b < c && (t[b] == ' ' || t[b] == '\t'))
					b++;
				l = c - b;
				while (l && (t[b + l - 1] == ' ' || t[b + l - 1] == '\t'))
					l--;
				if (!l || l >= sizeof(a->synth))
					return fail(e, b, "trace() needs the synthetic event");
				for (size_t z = 0; z < l; z++)
					if (!is_ident(t[b + z]))
						return fail(e, b + z, "Invalid synthetic event name");
				memcpy(a->synth, t + b, l);
				a->synth_pos = (uint16_t)b;
			} else {
				if (a->nparams == TRAIL_HIST_MAX_PARAMS)
					return fail(e, q, "Too many params (Max = 16)");
				if (param_of(h, m, t + q, c - q, q, a->action == TRAIL_HA_SAVE,
					     &a->p[a->nparams], e))
					return -1;
				a->nparams++;
			}
			q = c + 1;
		}
		if (a->action == TRAIL_HA_SAVE && !a->nparams)
			return fail(e, po + 1, "save() needs fields");
	}
	h->nact++;
	return 0;
}

/* the assignments' variable names, before anything refers to them (an
 * assignment may follow its use) */
static int collect_vars(struct trail_hist_spec *h, const struct trail_meta *m, size_t i,
			size_t head, struct trail_filter_err *e)
{
	const char *t = h->text;

	while (i < head) {
		size_t k = i, eq;

		while (k < head && t[k] != ':')
			k++;
		eq = i;
		while (eq < k && t[eq] != '=' && t[eq] != '(')
			eq++;
		if (eq < k && t[eq] == '=') {
			int keys = (eq - i == 4 && !memcmp(t + i, "keys", 4)) ||
				   (eq - i == 3 && !memcmp(t + i, "key", 3));
			size_t q = keys ? eq + 1 : i;
			int kw = 0;

			for (size_t w = 0; !keys && w < sizeof(keywords) / sizeof(keywords[0]); w++)
				kw |= strlen(keywords[w]) == eq - i && !memcmp(keywords[w], t + i, eq - i);
			if (kw) {
				i = k + 1;
				continue;
			}
			while (q < k) { /* NAME=... elements, comma-separated */
				size_t c = q, x;

				while (c < k && t[c] != ',')
					c++;
				x = q;
				while (x < c && t[x] != '=' && t[x] != '.')
					x++;
				if (x < c && t[x] == '=' && var_new(h, m, t + q, x - q, q, e) < 0)
					return -1;
				if (!keys && (x == c || t[x] != '='))
					return fail(e, q, "Invalid assignment (VAR=EXPR)");
				q = c + 1;
			}
		}
		i = k + 1;
	}
	return 0;
}

/* the variables in an order where each comes after those it reads */
static int var_order(struct trail_hist_spec *h, struct trail_filter_err *e)
{
	uint32_t placed = 0;
	uint8_t n = 0;

	while (n < h->nvars) {
		int progress = 0;

		for (uint8_t v = 0; v < h->nvars; v++) {
			const struct trail_hist_var *var = &h->vars[v];
			int ready = !(placed & (1u << v));

			for (uint8_t q = var->first; ready && q < var->first + var->nops; q++)
				if (h->ops[q].kind == TRAIL_HX_VAR && !(placed & (1u << h->ops[q].idx)))
					ready = 0;
			if (ready) {
				placed |= 1u << v;
				h->order[n++] = v;
				progress = 1;
			}
		}
		if (!progress)
			for (uint8_t v = 0; v < h->nvars; v++)
				if (!(placed & (1u << v)))
					return fail(e, h->vars[v].pos, "Variable refers to itself");
	}
	return 0;
}

/* the list of a "keys=" or "vals=" part (s, n bytes at pos) */
static int parse_list(const char *s, size_t n, size_t pos, const struct trail_meta *m, int key,
		      struct trail_hist_spec *h, struct trail_filter_err *e)
{
	size_t i = 0;

	if (!n)
		return fail(e, pos, key ? "Missing keys" : "Missing vals");
	while (i <= n) {
		size_t k = i;
		struct trail_hist_field f;

		while (k < n && s[k] != ',')
			k++;
		if (list_var(s + i, k - i, pos + i, m, key, h, &f, e))
			return -1;
		if (key) {
			if (h->nkeys == TRAIL_HIST_MAX_KEYS)
				return fail(e, pos + i, "Too many keys (Max = 3)");
			h->keys[h->nkeys++] = f;
		} else if (f.field == TRAIL_HIST_HITCOUNT) {
			h->hit_mod = f.mod;
		} else {
			if (h->nvals == TRAIL_HIST_MAX_VALS)
				return fail(e, pos + i, "Too many vals (Max = 3, hitcount aside)");
			h->vals[h->nvals++] = f;
		}
		i = k + 1;
	}
	return 0;
}

/* "sort=" (s, n bytes at pos): after keys and vals are known */
static int parse_sort(const char *s, size_t n, size_t pos, struct trail_hist_spec *h,
		      struct trail_filter_err *e)
{
	size_t i = 0;

	h->nsort = 0;
	while (i <= n) {
		size_t k = i, fn;
		const char *dot;
		struct trail_hist_sort so = {0, 0, 0};
		int found = 0;

		while (k < n && s[k] != ',')
			k++;
		if (k == i)
			return fail(e, pos + i, "Empty sort field");
		if (h->nsort == TRAIL_HIST_MAX_SORT)
			return fail(e, pos + i, "Too many sort fields (Max = 2)");
		/* the last ".ascending"/".descending" is the direction; a key's
		 * own modifier may come before it (bytes.log2.descending) */
		fn = k - i;
		dot = NULL;
		for (size_t j = k; j > i; j--)
			if (s[j - 1] == '.') {
				dot = s + j - 1;
				break;
			}
		if (dot && (size_t)(s + k - dot - 1) == 10 && !memcmp(dot + 1, "descending", 10)) {
			so.desc = 1;
			fn = (size_t)(dot - (s + i));
		} else if (dot && (size_t)(s + k - dot - 1) == 9 && !memcmp(dot + 1, "ascending", 9)) {
			fn = (size_t)(dot - (s + i));
		}
		{
			/* the name alone (a key's modifier may be repeated) */
			size_t nn = strcspn(s + i, ".,");

			if (nn > fn)
				nn = fn;
			if (nn == 8 && !memcmp(s + i, "hitcount", 8)) {
				so.val = 1;
				so.idx = 0xff;
				found = 1;
			}
			for (uint8_t q = 0; !found && q < h->nkeys; q++)
				if (strlen(h->keys[q].name) == nn && !memcmp(h->keys[q].name, s + i, nn))
					so.idx = q, found = 1;
			for (uint8_t q = 0; !found && q < h->nvals; q++)
				if (strlen(h->vals[q].name) == nn && !memcmp(h->vals[q].name, s + i, nn))
					so.val = 1, so.idx = q, found = 1;
			if (!found)
				return fail(e, pos + i, "Sort field must be a key or a val");
			if (fn > nn && s[i + nn] == '.' && !so.val) {
				/* a key's own modifier, as written there */
				size_t ml = fn - nn - 1;
				const struct trail_hist_field *kf = &h->keys[so.idx];
				int ok = 0;

				for (size_t q = 0; q < sizeof(mods) / sizeof(mods[0]); q++) {
					size_t l = strlen(mods[q].name);

					if (mods[q].mod == kf->mod && ml >= l &&
					    !memcmp(mods[q].name, s + i + nn + 1, l) &&
					    (ml == l || (kf->mod == TRAIL_HM_BUCKETS && s[i + nn + 1 + l] == '=')))
						ok = 1;
				}
				if (!ok)
					return fail(e, pos + i + nn + 1, "Invalid sort modifier");
			} else if (fn > nn) {
				return fail(e, pos + i + nn + 1, "Invalid sort modifier");
			}
		}
		h->sort[h->nsort++] = so;
		i = k + 1;
	}
	return 0;
}

int trail_hist_parse(const char *text, const struct trail_meta *m, struct trail_hist_spec *h,
		     struct trail_filter_err *e)
{
	size_t len = strlen(text), head = len, i = 0, sort_at = 0, sort_n = 0;
	const char *sort = NULL;

	memset(h, 0, sizeof(*h));
	h->size = TRAIL_HIST_SIZE_DEFAULT;
	e->pos = -1;
	e->msg[0] = '\0';
	/* "... if FILTER" */
	for (size_t k = 0; k + 2 <= len; k++)
		if ((k == 0 || text[k - 1] == ' ' || text[k - 1] == '\t') && text[k] == 'i' &&
		    text[k + 1] == 'f' && (!text[k + 2] || text[k + 2] == ' ' || text[k + 2] == '\t')) {
			head = k;
			h->filter = text + k + 2;
			while (*h->filter == ' ' || *h->filter == '\t')
				h->filter++;
			if (!*h->filter)
				return fail(e, k + 2, "Meaningless filter expression");
			break;
		}
	while (head && (text[head - 1] == ' ' || text[head - 1] == '\t'))
		head--;
	while (i < head && (text[i] == ' ' || text[i] == '\t'))
		i++;
	if (head - i >= 5 && !memcmp(text + i, "hist:", 5))
		i += 5;
	else if (head - i == 4 && !memcmp(text + i, "hist", 4))
		i += 4;
	h->text = text;
	if (collect_vars(h, m, i, head, e))
		return -1;
	while (i < head) {
		size_t k = i, eq;

		while (k < head && text[k] != ':')
			k++;
		eq = i;
		while (eq < k && text[eq] != '=' && text[eq] != '(')
			eq++;
		if (eq < k && text[eq] == '(') {
			if (parse_action(h, m, i, k, e))
				return -1;
		} else if (eq < k && var_n(h, text + i, strcspn(text + i, "=")) >= 0 &&
			   h->vars[var_n(h, text + i, strcspn(text + i, "="))].pos == i) {
			/* VAR=EXPR[,VAR=EXPR...] */
			size_t q = i;

			while (q < k) {
				size_t c = q, x = q;
				int v;

				while (c < k && text[c] != ',')
					c++;
				while (x < c && text[x] != '=')
					x++;
				v = var_n(h, text + q, x - q);
				h->vars[v].len = (uint16_t)(c - q);
				if (x + 1 >= c)
					return fail(e, x + 1 > c ? c : x + 1, "Missing expression");
				if (var_expr(h, m, v, x + 1, c, e))
					return -1;
				q = c + 1;
			}
		} else if ((eq - i == 4 && !memcmp(text + i, "keys", 4)) ||
		    (eq - i == 3 && !memcmp(text + i, "key", 3))) {
			if (h->nkeys)
				return fail(e, i, "Keys given twice");
			if (eq == k || parse_list(text + eq + 1, k - eq - 1, eq + 1, m, 1, h, e))
				return eq == k ? fail(e, i, "Missing keys") : -1;
		} else if ((eq - i == 4 && !memcmp(text + i, "vals", 4)) ||
			   (eq - i == 6 && !memcmp(text + i, "values", 6))) {
			if (eq == k || parse_list(text + eq + 1, k - eq - 1, eq + 1, m, 0, h, e))
				return eq == k ? fail(e, i, "Missing vals") : -1;
		} else if (eq - i == 4 && !memcmp(text + i, "sort", 4) && eq < k) {
			sort = text + eq + 1;
			sort_n = k - eq - 1;
			sort_at = eq + 1;
		} else if (eq - i == 4 && !memcmp(text + i, "size", 4) && eq < k) {
			uint64_t v = 0;

			for (size_t q = eq + 1; q < k; q++) {
				if (text[q] < '0' || text[q] > '9' || v > TRAIL_HIST_SIZE_MAX)
					return fail(e, eq + 1, "Invalid size (128 to 131072)");
				v = v * 10 + (uint64_t)(text[q] - '0');
			}
			if (k == eq + 1 || v < 1 || v > TRAIL_HIST_SIZE_MAX)
				return fail(e, eq + 1, "Invalid size (128 to 131072)");
			/* rounded up to a power of two, at least the minimum */
			h->size = TRAIL_HIST_SIZE_MIN;
			while (h->size < v)
				h->size <<= 1;
		} else if (eq - i == 4 && !memcmp(text + i, "name", 4) && eq < k) {
			if (k - eq - 1 == 0 || k - eq - 1 >= sizeof(h->name))
				return fail(e, eq + 1, "Invalid name");
			memcpy(h->name, text + eq + 1, k - eq - 1);
			h->name[k - eq - 1] = '\0';
		} else if (k - i == 5 && !memcmp(text + i, "pause", 5)) {
			h->paused = 1;
		} else if ((k - i == 4 && !memcmp(text + i, "cont", 4)) ||
			   (k - i == 8 && !memcmp(text + i, "continue", 8))) {
			h->cont = 1;
		} else if (k - i == 5 && !memcmp(text + i, "clear", 5)) {
			h->clear = 1;
		} else {
			return fail(e, i, "Unknown hist parameter (keys vals sort size name pause "
					  "cont clear)");
		}
		i = k + 1;
	}
	if (!h->nkeys)
		return fail(e, i < head ? i : head, "Missing keys (hist:keys=...)");
	if (var_order(h, e))
		return -1;
	for (int q = 0; q < h->nkeys; q++)
		if (h->keys[q].field == TRAIL_HIST_VARIABLE && h->vars[h->keys[q].var].refs)
			return fail(e, h->vars[h->keys[q].var].pos,
				    "A key can't read other events' variables");
	if (sort) {
		if (parse_sort(sort, sort_n, sort_at, h, e))
			return -1;
	} else { /* the kernel's default: hitcount, ascending */
		h->nsort = 1;
		h->sort[0] = (struct trail_hist_sort){1, 0xff, 0};
	}
	return 0;
}

static const char *mod_name(const struct trail_hist_field *f, char *buf, size_t n)
{
	for (size_t k = 0; k < sizeof(mods) / sizeof(mods[0]); k++)
		if (mods[k].mod == f->mod) {
			if (f->mod == TRAIL_HM_BUCKETS)
				snprintf(buf, n, ".buckets=%llu", (unsigned long long)f->buckets);
			else
				snprintf(buf, n, ".%s", mods[k].name);
			return buf;
		}
	return "";
}

void trail_hist_describe(const struct trail_hist_spec *h, char *buf, size_t n)
{
	size_t o = 0;
	char mb[32];

#define PUT(...) (o += (size_t)snprintf(buf + o, o < n ? n - o : 0, __VA_ARGS__))
	PUT("hist:");
	if (h->name[0])
		PUT("name=%s:", h->name);
	PUT("keys=");
	for (int i = 0; i < h->nkeys; i++) {
		int kv = -1;

		for (int v = 0; v < h->nvars; v++)
			if (h->vars[v].key == i + 1)
				kv = v;
		if (kv >= 0)
			PUT("%s%.*s", i ? "," : "", (int)h->vars[kv].len, h->text + h->vars[kv].pos);
		else
			PUT("%s%s%s%s", i ? "," : "", h->keys[i].field == TRAIL_HIST_VARIABLE ? "$" : "",
			    h->keys[i].name, mod_name(&h->keys[i], mb, sizeof(mb)));
	}
	PUT(":vals=hitcount");
	if (h->hit_mod) {
		struct trail_hist_field hf = {.mod = h->hit_mod};

		PUT("%s", mod_name(&hf, mb, sizeof(mb)));
	}
	for (int i = 0; i < h->nvals; i++)
		PUT(",%s%s%s", h->vals[i].field == TRAIL_HIST_VARIABLE ? "$" : "", h->vals[i].name,
		    mod_name(&h->vals[i], mb, sizeof(mb)));
	for (int v = 0; v < h->nvars; v++)
		if (!h->vars[v].key)
			PUT(":%.*s", (int)h->vars[v].len, h->text + h->vars[v].pos);
	PUT(":sort=");
	for (int i = 0; i < h->nsort; i++) {
		const struct trail_hist_sort *s = &h->sort[i];
		const struct trail_hist_field *f =
			s->idx == 0xff ? NULL : s->val ? &h->vals[s->idx] : &h->keys[s->idx];

		PUT("%s%s%s%s", i ? "," : "", f ? f->name : "hitcount",
		    f && !s->val ? mod_name(f, mb, sizeof(mb)) : "", s->desc ? ".descending" : "");
	}
	PUT(":size=%u", h->size);
	for (int q = 0; q < h->nact; q++)
		PUT(":%.*s", (int)h->act[q].len, h->text + h->act[q].pos);
#undef PUT
	if (o >= n && n)
		buf[n - 1] = '\0';
}

/* ------------------------------------------------------------------ keys */

static void part_of(const struct trail_hist_field *f, const struct trail_meta *m,
		    struct trail_hist_keyer *k, struct trail_hist_part *p)
{
	memset(p, 0, sizeof(*p));
	p->field = f->field;
	p->mod = f->mod;
	p->str = f->str;
	p->sign = f->sign;
	p->var = f->var;
	p->buckets = f->buckets ? f->buckets : 1;
	p->off = 0xffff;
	p->size = 8;
	if (f->field < m->nfields) {
		p->size = (uint8_t)m->fields[f->field].size;
		p->off = trail_filter_fixed_off(m, f->field);
		if (f->field + 1u > k->nlay)
			k->nlay = (uint16_t)(f->field + 1);
	}
	k->clock |= f->field == TRAIL_FILTER_TS || f->field == TRAIL_FILTER_CPU;
	k->comm |= f->field == TRAIL_FILTER_COMM;
}

void trail_hist_keyer(const struct trail_hist_spec *h, const struct trail_meta *m,
		      struct trail_hist_keyer *k)
{
	uint16_t w = 0;

	memset(k, 0, sizeof(*k));
	k->nkeys = h->nkeys;
	k->nvals = h->nvals;
	for (int i = 0; i < h->nkeys; i++) {
		struct trail_hist_part *p = &k->k[i];

		part_of(&h->keys[i], m, k, p);
		p->word = w;
		w += p->field == TRAIL_FILTER_COMM ? 2 : p->str ? TRAIL_HIST_STR_MAX / 8 : 1;
		k->sympid |= p->mod == TRAIL_HM_SYM || p->mod == TRAIL_HM_SYM_OFFSET;
	}
	for (int i = 0; i < h->nvals; i++)
		part_of(&h->vals[i], m, k, &k->v[i]);
	k->kwords = (uint16_t)(w + k->sympid);
	/* variables and their expressions */
	k->nvars = h->nvars;
	k->nrefs = h->nrefs;
	k->vstore = h->nvars ? (uint32_t)((1ull << h->nvars) - 1) : 0;
	memcpy(k->order, h->order, sizeof(k->order));
	memcpy(k->ops, h->ops, sizeof(k->ops));
	for (int v = 0; v < h->nvars; v++) {
		k->vfirst[v] = h->vars[v].first;
		k->vnops[v] = h->vars[v].nops;
		k->vrefs[v] = h->vars[v].refs;
	}
	for (int i = 0; i < h->nxf; i++)
		part_of(&h->xf[i], m, k, &k->xp[i]);
	/* the extra words: set, vars, then the actions' */
	w = h->nvars ? (uint16_t)(1 + h->nvars) : 0;
	k->nact = h->nact;
	for (int q = 0; q < h->nact; q++) {
		const struct trail_hist_action *a = &h->act[q];
		struct trail_hist_cact *c = &k->act[q];

		c->handler = a->handler;
		c->action = a->action;
		c->var = a->var;
		c->nparams = a->nparams;
		memcpy(c->p, a->p, sizeof(c->p));
		c->track = c->save = 0xffff;
		if (a->action == TRAIL_HA_SNAPSHOT) {
			k->snap = 1;
			continue;
		}
		if (a->handler != TRAIL_HH_ONMATCH)
			c->track = w++;
		if (a->action == TRAIL_HA_SAVE) {
			c->save = w++;
			for (int j = 0; j < a->nparams; j++) {
				struct trail_hist_part *xp = &k->xp[a->p[j].idx];

				xp->word = w;
				w += xp->field == TRAIL_FILTER_COMM ? 2
				     : xp->str			   ? TRAIL_HIST_STR_MAX / 8
								   : 1;
			}
		}
	}
	/* an entry of a table the CPUs share (variables, actions) takes
	 * whole cache lines: two threads' entries never share one */
	if (h->nvars || h->nact) {
		uint32_t sw = 2u + k->kwords + h->nvals + w;

		w = (uint16_t)(w + ((8u - sw % 8u) % 8u));
	}
	k->nextra = w;
	/* a variable needs the others' variables if one it reads does */
	for (int i = 0; i < h->nvars; i++) {
		uint8_t v = h->order[i];

		for (uint8_t q = k->vfirst[v]; q < k->vfirst[v] + k->vnops[v]; q++)
			if (k->ops[q].kind == TRAIL_HX_VAR)
				k->vrefs[v] |= k->vrefs[k->ops[q].idx];
	}
	k->naux = k->snap ? (uint16_t)(3 + k->kwords) : 0;
	for (uint16_t i = 0; i < k->nlay; i++) {
		k->lay[i].kind = m->fields[i].kind;
		k->lay[i].size = m->fields[i].size;
		k->lay[i].count = m->fields[i].count;
	}
}

/* ceil(log2(v)): the kernel's ilog2(roundup_pow_of_two(v)) */
static uint64_t log2_up(uint64_t v)
{
	return v <= 1 ? 0 : 64u - (uint64_t)__builtin_clzll(v - 1);
}

/* a number of the record, modifier applied; -1: not in the payload */
static int number(const struct trail_hist_keyer *k, const struct trail_hist_part *p,
		  const uint8_t *pl, uint32_t len, const struct trail_filter_ctx *c, uint64_t *out)
{
	uint64_t v;

	if (trail_filter_value(k->lay, k->nlay, p->field, p->off, p->size, p->sign, pl, len, c, &v))
		return -1;
	switch (p->mod) {
	case TRAIL_HM_LOG2: v = log2_up(v); break;
	case TRAIL_HM_BUCKETS: v = v / p->buckets * p->buckets; break;
	case TRAIL_HM_USECS: v /= 1000; break;
	default: break;
	}
	*out = v;
	return 0;
}

static int key_of(const struct trail_hist_keyer *k, const uint8_t *p, uint32_t len,
		  const struct trail_filter_ctx *c, uint64_t *key)
{
	for (int i = 0; i < k->nkeys; i++) {
		const struct trail_hist_part *q = &k->k[i];
		uint64_t *w = key + q->word;

		if (q->field == TRAIL_HIST_VARIABLE) {
			w[0] = c->vars ? c->vars[q->var] : 0;
		} else if (q->field == TRAIL_FILTER_COMM) {
			const char *s = c->comm ? c->comm : "";
			size_t n = strnlen(s, 16);

			w[0] = w[1] = 0;
			memcpy(w, s, n);
		} else if (q->str) {
			uint32_t at, n;

			memset(w, 0, TRAIL_HIST_STR_MAX);
			if (trail_filter_locate(k->lay, k->nlay, q->field, p, len, &at, &n))
				return -1;
			if (n > TRAIL_HIST_STR_MAX - 1)
				n = TRAIL_HIST_STR_MAX - 1;
			memcpy(w, p + at, n);
			/* a string ends at its first NUL */
			{
				size_t l = strnlen((const char *)w, n);

				memset((char *)w + l, 0, n - l);
			}
		} else if (number(k, q, p, len, c, w)) {
			return -1;
		}
	}
	if (k->sympid)
		key[k->kwords - 1] = c->pid;
	return 0;
}

static int vals_of(const struct trail_hist_keyer *k, const uint8_t *p, uint32_t len,
		   const struct trail_filter_ctx *c, uint64_t *vals)
{
	for (int i = 0; i < k->nvals; i++)
		if (k->v[i].field == TRAIL_HIST_VARIABLE)
			vals[i] = c->vars ? c->vars[k->v[i].var] : 0;
		else if (number(k, &k->v[i], p, len, c, &vals[i]))
			return -1;
	return 0;
}

int trail_hist_key(const struct trail_hist_keyer *k, const uint8_t *p, uint32_t len,
		   const struct trail_filter_ctx *c, uint64_t *key, uint64_t *vals)
{
	return key_of(k, p, len, c, key) || vals_of(k, p, len, c, vals) ? -1 : 0;
}

uint32_t trail_hist_copies(const struct trail_hist_keyer *k, uint32_t ncpu)
{
	return k->nvars || k->nact ? 1 : ncpu;
}

size_t trail_hist_bytes(const struct trail_hist_spec *h, const struct trail_hist_keyer *k,
			uint32_t ncpu)
{
	return trail_htab_bytes(h->size, k->kwords, k->nvals, k->nextra, k->naux,
				trail_hist_copies(k, ncpu));
}

/* ------------------------------------------------------------ updates */

/* the expression ops[first .. first + n) on the record: 0, or -1 (a field
 * past the payload) */
static int eval(const struct trail_hist_keyer *k, uint8_t first, uint8_t n, const uint8_t *p,
		uint32_t len, const struct trail_filter_ctx *c, const uint64_t *vars,
		const uint64_t *refv, uint64_t *out)
{
	uint64_t st[TRAIL_HIST_EXPR_DEPTH];
	int sp = 0;

	for (uint8_t q = first; q < first + n; q++) {
		const struct trail_hist_xop *o = &k->ops[q];
		uint64_t a, b;

		if (o->kind <= TRAIL_HX_REF) {
			if (sp == TRAIL_HIST_EXPR_DEPTH)
				return -1;
			if (o->kind == TRAIL_HX_FIELD) {
				if (number(k, &k->xp[o->idx], p, len, c, &st[sp]))
					return -1;
			} else {
				st[sp] = o->kind == TRAIL_HX_CONST ? o->imm
					 : o->kind == TRAIL_HX_VAR ? vars[o->idx]
								   : refv[o->idx];
			}
			sp++;
			continue;
		}
		if (o->kind == TRAIL_HX_NEG) {
			if (sp < 1)
				return -1;
			st[sp - 1] = -st[sp - 1];
			continue;
		}
		if (sp < 2)
			return -1;
		b = st[--sp];
		a = st[sp - 1];
		switch (o->kind) {
		case TRAIL_HX_ADD: a += b; break;
		case TRAIL_HX_SUB: a -= b; break;
		case TRAIL_HX_MUL: a *= b; break;
		default: a = b ? a / b : ~0ull; break;
		}
		st[sp - 1] = a;
	}
	if (sp != 1)
		return -1;
	*out = st[0];
	return 0;
}

/* variables whose needing others' (refs) is `refs`, in order */
static int vars_of(const struct trail_hist_keyer *k, int refs, const uint8_t *p, uint32_t len,
		   const struct trail_filter_ctx *c, uint64_t *vars, const uint64_t *refv)
{
	for (uint8_t i = 0; i < k->nvars; i++) {
		uint8_t v = k->order[i];

		if (!!k->vrefs[v] == refs &&
		    eval(k, k->vfirst[v], k->vnops[v], p, len, c, vars, refv, &vars[v]))
			return -1;
	}
	return 0;
}

/* a string field of the record: where and how long */
static int str_of(const struct trail_hist_keyer *k, const struct trail_hist_part *x,
		  const uint8_t *p, uint32_t len, const struct trail_filter_ctx *c, const char **s,
		  uint16_t *n)
{
	uint32_t at, l;

	if (x->field == TRAIL_FILTER_COMM) {
		*s = c->comm ? c->comm : "";
		*n = (uint16_t)strnlen(*s, 16);
		return 0;
	}
	if (trail_filter_locate(k->lay, k->nlay, x->field, p, len, &at, &l))
		return -1;
	if (l > TRAIL_HIST_STR_MAX - 1)
		l = TRAIL_HIST_STR_MAX - 1;
	*s = (const char *)p + at;
	*n = (uint16_t)strnlen(*s, l);
	return 0;
}

/* does v pass the handler of a (onmax: a new max; onchange: a change)?
 * w: its tracked word */
static int handled(const struct trail_hist_cact *a, uint64_t *w, uint64_t v)
{
	uint64_t cur;

	if (a->handler == TRAIL_HH_ONMATCH)
		return 1;
	if (a->handler == TRAIL_HH_ONCHANGE)
		return __atomic_exchange_n(w, v, __ATOMIC_RELAXED) != v;
	cur = __atomic_load_n(w, __ATOMIC_RELAXED);
	while (v > cur)
		if (__atomic_compare_exchange_n(w, &cur, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return 1;
	return 0;
}

static void save(const struct trail_hist_keyer *k, const struct trail_hist_cact *a, uint64_t *ex,
		 const uint8_t *p, uint32_t len, const struct trail_filter_ctx *c)
{
	uint64_t unlocked = 0;

	/* a save in progress (another thread, or the one a signal handler
	 * interrupted) is let be: never wait in the record path */
	if (!__atomic_compare_exchange_n(&ex[a->save], &unlocked, 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	for (int j = 0; j < a->nparams; j++) {
		const struct trail_hist_part *x = &k->xp[a->p[j].idx];
		uint64_t *w = ex + x->word;

		if (x->str) {
			const char *s;
			uint16_t n;
			size_t room = x->field == TRAIL_FILTER_COMM ? 16 : TRAIL_HIST_STR_MAX;

			memset(w, 0, room);
			if (!str_of(k, x, p, len, c, &s, &n))
				memcpy(w, s, n < room ? n : room - 1);
		} else if (number(k, x, p, len, c, w)) {
			*w = 0;
		}
	}
	__atomic_store_n(&ex[a->save], 0, __ATOMIC_RELEASE);
}

static void trace(const struct trail_hist_keyer *k, unsigned q, const uint8_t *p, uint32_t len,
		  const struct trail_filter_ctx *c, const uint64_t *vars, const uint64_t *refv,
		  const struct trail_hist_io *io)
{
	const struct trail_hist_cact *a = &k->act[q];
	uint64_t v[TRAIL_HIST_MAX_PARAMS];
	const char *strs[TRAIL_HIST_MAX_PARAMS];
	uint16_t sl[TRAIL_HIST_MAX_PARAMS];

	for (int j = 0; j < a->nparams; j++) {
		const struct trail_hist_param *pa = &a->p[j];

		strs[j] = NULL;
		sl[j] = 0;
		v[j] = 0;
		if (pa->kind == TRAIL_HX_VAR) {
			v[j] = vars[pa->idx];
		} else if (pa->kind == TRAIL_HX_REF) {
			v[j] = refv[pa->idx];
		} else if (k->xp[pa->idx].str) {
			if (str_of(k, &k->xp[pa->idx], p, len, c, &strs[j], &sl[j]))
				return;
		} else if (number(k, &k->xp[pa->idx], p, len, c, &v[j])) {
			return;
		}
	}
	if (io->trace)
		io->trace(io->arg, q, v, strs, sl);
}

static void snapshot(const struct trail_hist_keyer *k, unsigned q, struct trail_htab *t,
		     const uint64_t *key, const struct trail_hist_io *io)
{
	uint64_t *aux = trail_htab_aux(t), unlocked = 0;

	if (__atomic_compare_exchange_n(&aux[2], &unlocked, 1, 0, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED)) {
		memcpy(&aux[3], key, (size_t)k->kwords * 8u);
		__atomic_fetch_add(&aux[0], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&aux[2], 0, __ATOMIC_RELEASE);
	}
	if (io->snapshot)
		io->snapshot(io->arg, q);
}

int trail_hist_update(const struct trail_hist_keyer *k, struct trail_htab *t, uint32_t cpu,
		      const uint8_t *p, uint32_t len, struct trail_filter_ctx *cp,
		      const struct trail_hist_io *io)
{
	uint64_t key[TRAIL_HTAB_MAX_KWORDS], vals[TRAIL_HTAB_MAX_VALS];
	uint64_t vars[TRAIL_HIST_MAX_VARS], refv[TRAIL_HIST_MAX_REFS];
	uint64_t hash, *ex, set = 0;
	/* (*cp, not a copy: its fields were just stored one by one, a wide
	 * load of them would stall on store forwarding) */

	cp->vars = vars;
	if (vars_of(k, 0, p, len, cp, vars, NULL) || key_of(k, p, len, cp, key))
		return -1;
	hash = trail_htab_hash(key, k->kwords);
	/* other events' variables, for this key: read once */
	for (uint8_t i = 0; i < k->nrefs; i++) {
		struct trail_htab *o = io ? io->reft[i] : NULL;
		uint64_t *oe, bit, was;

		if (!o || !(oe = trail_htab_find(o, key, hash)))
			return 1;
		bit = 1ull << io->refvar[i];
		/* acquire: pairs with the release that set the bit */
		was = __atomic_fetch_and(&oe[0], ~bit, __ATOMIC_ACQUIRE);
		if (!(was & bit))
			return 1;
		refv[i] = __atomic_load_n(&oe[1 + io->refvar[i]], __ATOMIC_RELAXED);
	}
	if (vars_of(k, 1, p, len, cp, vars, refv) || vals_of(k, p, len, cp, vals))
		return -1;
	ex = trail_htab_update(t, cpu, key, hash, vals);
	if (!ex)
		return -1;
	if (k->vstore) {
		for (uint8_t v = 0; v < k->nvars; v++)
			if (k->vstore & (1u << v)) {
				__atomic_store_n(&ex[1 + v], vars[v], __ATOMIC_RELAXED);
				set |= 1ull << v;
			}
		/* release: the values before the bits that say they are set */
		__atomic_fetch_or(&ex[0], set, __ATOMIC_RELEASE);
	}
	for (unsigned q = 0; q < k->nact; q++) {
		const struct trail_hist_cact *a = &k->act[q];
		uint64_t *w = a->action == TRAIL_HA_SNAPSHOT ? &trail_htab_aux(t)[1]
			      : a->track != 0xffff	     ? &ex[a->track]
							     : NULL;

		if (!handled(a, w, vars[a->var]))
			continue;
		if (a->action == TRAIL_HA_TRACE)
			trace(k, q, p, len, cp, vars, refv, io);
		else if (a->action == TRAIL_HA_SAVE)
			save(k, a, ex, p, len, cp);
		else
			snapshot(k, q, t, key, io);
	}
	return 0;
}
